"""Seat-parity check: an agent against itself; is a scenario fair to both seats?

``battleline parity --agent line_advance --games 200`` plays the agent against
itself and reports blue's score, (blue wins + draws/2) / games, with a Wilson
95% interval. A fair scenario gives 0.5 inside the interval; otherwise it is
flagged unfair. The first mover's record (CORE.SETUP.FIRST_TURN) is reported
beside it, since who moves first is rolled, not tied to a seat.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console

from battleline.training.backends import run_games, worker_count
from battleline.training.tournament import (
    GameSpec,
    check_games_total,
    first_mover_record,
    game_seed,
    outcome,
    play_game,
    record_of,
    validate_inputs,
)
from battleline.training.tournament_report import write_csv

MIN_PARITY_GAMES = 200
"""Battles the seat-parity check needs: an agent against itself must score 0.5 within blue's
95% interval over at least this many (fewer give a verdict that cannot pass the check)."""


def parity_schedule(agent: str, games: int, seed: int) -> list[GameSpec]:
    """``games`` battles of ``agent`` against itself, each with its own seed.

    The seeds are those of a tournament's first pair, one per seed pair (``game_seed(seed,
    0, 2 * g)``). They are not played twice with the seats swapped: with the same agent on
    both sides a swapped game is the same game (the agents' seeds follow the seat), so a
    second copy would only double-count it.

    Raises:
        ValueError: ``games`` < 1 or more than :data:`training.tournament.MAX_GAMES`.
    """
    if games < 1:
        raise ValueError(f"a parity check needs at least one game, got {games}")
    check_games_total(games, f"{games:,} games of one agent against itself")
    return [GameSpec(g, 0, g, agent, agent, agent, agent, game_seed(seed, 0, 2 * g)) for g in range(games)]


def parity_verdict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Blue's record and the fairness verdict of finished self-play rows (rows with ``error`` are skipped).

    Returns:
        ``{"games", "blue": {games, wins, draws, losses, win_rate, win_rate_ci95, score,
        score_ci95}, "fair", "first_mover": {...}, "blue_first_share", "outcomes": {winner:
        count}}``; ``fair`` is 0.5 inside ``score_ci95`` (the Wilson 95% interval of blue's
        score, draws counting half), False without games.
    """
    done = [r for r in rows if "error" not in r]
    blue = record_of([outcome(r, "blue") for r in done])
    lo, hi = blue["score_ci95"]
    return {"games": len(done), "blue": blue, "fair": bool(done) and lo <= 0.5 <= hi, **first_mover_record(done),
            "outcomes": dict(Counter(r["winner"] for r in done))}


def run_parity(
    scenario: str,
    agent: str,
    games: int,
    seed: int,
    out: str | Path,
    workers: int | None = None,
    max_decisions: int = 20000,
    console: Console | None = None,
    progress: bool = True,
    backend: str = "process",
    ray_address: str | None = None,
) -> dict[str, Any]:
    """Seat-parity check: ``agent`` against itself; is the scenario fair to both seats?

    Blue's score is (blue wins + draws/2) / games with a Wilson 95% interval; the scenario is
    flagged unfair (``fair`` False) when 0.5 lies outside it. The first mover's record is
    reported beside it. Writes ``parity.json`` (the returned dict) and ``parity.csv`` (one
    row per game) into ``out``.

    Returns:
        ``{"scenario", "agent", "seed", "games", "games_failed", "seconds", "blue":
        {games, wins, draws, losses, win_rate, win_rate_ci95, score, score_ci95}, "fair",
        "enough_games" (``games`` >= :data:`MIN_PARITY_GAMES`), "first_mover": {...},
        "blue_first_share", "errors"}``.

    Raises:
        ConfigError, UnknownAgentError: bad scenario or agent (checked before any game).
        ValueError: ``games`` < 1, ``workers`` < 1 or an unknown backend.
    """
    console = console or Console()
    validate_inputs(scenario, [agent], ())
    specs = parity_schedule(agent, games, seed)
    workers = worker_count(workers, len(specs))[0]
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = run_games(play_game, specs, (str(scenario), max_decisions, False), backend=backend, workers=workers,
                     ray_address=ray_address, console=console, progress=progress,
                     description=f"{agent} vs itself, {games} games")
    results = {
        "scenario": str(scenario), "agent": agent, "seed": seed, **parity_verdict(rows),
        "enough_games": games >= MIN_PARITY_GAMES,
        "games_failed": sum(1 for r in rows if "error" in r), "seconds": round(time.perf_counter() - t0, 2),
        "errors": [{k: r[k] for k in ("index", "seed", "error", "traceback")} for r in rows if "error" in r],
    }
    (out_dir / "parity.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_csv(rows, out_dir / "parity.csv")
    return results


__all__ = ["MIN_PARITY_GAMES", "parity_schedule", "parity_verdict", "run_parity"]
