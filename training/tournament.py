"""Round-robin tournaments between agents, with ratings, tables and a heatmap.

Every unordered pair of distinct agents plays ``games_per_pair`` games, split
across the two seats: game ``g`` of a pair puts the pair's first agent on blue
when ``g`` is even and on red when it is odd. Games ``2k`` and ``2k + 1`` share
one seed, so each dice seed is played from both seats. Seeds come from
:func:`game_seed` (the base seed, the pair index and ``k``), so a tournament is
reproducible whatever the number of workers.

Outputs (in ``out``):

* ``results.json`` — settings, per-pair counts and mean VP, per-agent
  openskill rating (PlackettLuce, draws as ties) and win rate with a Wilson 95%
  interval, and any games that failed;
* ``results.csv`` — one row per game;
* ``heatmap.png`` — the score of the row agent against the column agent.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from training.play import make_agent, play_battle

CSV_COLUMNS = ("pair", "game", "seat", "blue", "red", "seed", "winner", "vp_blue", "vp_red", "turns")
"""Columns of ``results.csv``. ``pair`` is "a vs b"; ``seat`` is the side of the pair's first agent."""

WILSON_Z = 1.959963984540054
"""The normal quantile for a two-sided 95% interval."""


@dataclass(frozen=True)
class GameSpec:
    """One game of a tournament.

    Attributes:
        index: position in the schedule (0-based).
        pair: index of the pair in the schedule.
        game: index of the game within its pair.
        a, b: the pair's agents, in the order of the agent list.
        blue, red: the agents in each seat.
        seed: the battle seed.
    """

    index: int
    pair: int
    game: int
    a: str
    b: str
    blue: str
    red: str
    seed: int


def game_seed(base_seed: int, pair: int, game: int) -> int:
    """The battle seed of game ``game`` of pair ``pair`` (both seats of a seed share it: ``game // 2``).

    Returns an int in [0, 2**31), from :class:`numpy.random.SeedSequence`.
    """
    ss = np.random.SeedSequence([int(base_seed), int(pair), int(game) // 2])
    return int(ss.generate_state(1)[0] & 0x7FFFFFFF)


def schedule(agents: list[str], games_per_pair: int, seed: int) -> list[GameSpec]:
    """Every game of the round robin, in a fixed order (see the module docstring).

    Raises:
        ValueError: fewer than two distinct agents, or ``games_per_pair`` < 1.
    """
    if len(set(agents)) != len(agents):
        raise ValueError("each agent may appear only once in a tournament")
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {len(agents)}")
    if games_per_pair < 1:
        raise ValueError(f"games per pair must be at least 1, got {games_per_pair}")
    games = []
    for p, (a, b) in enumerate(combinations(agents, 2)):
        for g in range(games_per_pair):
            blue, red = (a, b) if g % 2 == 0 else (b, a)
            games.append(GameSpec(len(games), p, g, a, b, blue, red, game_seed(seed, p, g)))
    return games


def play_game(spec: GameSpec, scenario: str, blue_army: str | None = None, red_army: str | None = None,
              max_decisions: int = 20000) -> dict[str, Any]:
    """Play one scheduled game (in a worker process) and return its row.

    Returns a dict with the :class:`GameSpec` fields and ``winner`` ("blue",
    "red" or "draw"), ``vp_blue``, ``vp_red``, ``turns``, ``decisions`` and
    ``seconds``; or, when the game raised, ``error`` (the exception in one line)
    and ``traceback`` instead of the result fields.
    """
    row: dict[str, Any] = asdict(spec)
    t0 = time.perf_counter()
    try:
        battle = play_battle(scenario, spec.blue, spec.red, spec.seed, blue_army=blue_army, red_army=red_army,
                             max_decisions=max_decisions)
        res = battle.result
        row.update(winner=res["winner"], vp_blue=int(res["vp"]["blue"]), vp_red=int(res["vp"]["red"]),
                   turns=int(res.get("turn", battle.state.turn)), decisions=len(battle.actions))
    except Exception as exc:  # noqa: BLE001 - one failed game must not lose the others
        row.update(error=f"{type(exc).__name__}: {exc}".splitlines()[0], traceback=traceback.format_exc())
    row["seconds"] = round(time.perf_counter() - t0, 4)
    return row


def wilson_interval(successes: int, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    Returns (low, high) in [0, 1]; (0.0, 1.0) when ``n`` is 0.
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _outcome(row: dict[str, Any], agent: str) -> str:
    """'win', 'draw' or 'loss' for ``agent`` in a finished game row."""
    if row["winner"] == "draw":
        return "draw"
    side = "blue" if row["blue"] == agent else "red"
    return "win" if row["winner"] == side else "loss"


def summarise(rows: list[dict[str, Any]], agents: list[str]) -> dict[str, Any]:
    """Per-pair and per-agent results of finished game rows (rows with ``error`` are skipped).

    Ratings are openskill PlackettLuce, updated game by game in schedule order
    (winner ranked first; a draw is a tie).

    Returns ``{"pairs": [...], "agents": {name: {...}}, "matrix": [[score or None]]}`` where
    each pair entry has ``agent``, ``opponent``, ``games``, ``wins``, ``draws``,
    ``losses`` (from ``agent``'s side), ``mean_vp_for``, ``mean_vp_against``,
    ``games_as_blue`` and ``score`` = (wins + draws/2) / games; each agent entry
    has ``mu``, ``sigma``, ``ordinal``, ``games``, ``wins``, ``draws``,
    ``losses``, ``win_rate``, ``win_rate_ci95`` [low, high] and ``score``;
    ``matrix[i][j]`` is agent i's score against agent j (None on the diagonal
    or without games).
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {a: model.rating(name=a) for a in agents}
    done = sorted((r for r in rows if "error" not in r), key=lambda r: r["index"])
    for r in done:
        blue, red = ratings[r["blue"]], ratings[r["red"]]
        ranks = {"blue": [0, 1], "red": [1, 0], "draw": [0, 0]}[r["winner"]]
        [[blue], [red]] = model.rate([[blue], [red]], ranks=ranks)
        ratings[r["blue"]], ratings[r["red"]] = blue, red

    pairs = []
    index = {a: i for i, a in enumerate(agents)}
    matrix: list[list[float | None]] = [[None] * len(agents) for _ in agents]
    for a, b in combinations(agents, 2):
        games = [r for r in done if {r["blue"], r["red"]} == {a, b}]
        counts = {"win": 0, "draw": 0, "loss": 0}
        vp_for = vp_against = 0
        for r in games:
            counts[_outcome(r, a)] += 1
            mine, theirs = (r["vp_blue"], r["vp_red"]) if r["blue"] == a else (r["vp_red"], r["vp_blue"])
            vp_for += mine
            vp_against += theirs
        n = len(games)
        score = (counts["win"] + counts["draw"] / 2) / n if n else None
        pairs.append({
            "agent": a, "opponent": b, "games": n, "wins": counts["win"], "draws": counts["draw"],
            "losses": counts["loss"], "games_as_blue": sum(1 for r in games if r["blue"] == a),
            "mean_vp_for": round(vp_for / n, 2) if n else None,
            "mean_vp_against": round(vp_against / n, 2) if n else None,
            "score": round(score, 4) if score is not None else None,
        })
        if n:
            matrix[index[a]][index[b]] = score
            matrix[index[b]][index[a]] = 1.0 - score

    per_agent: dict[str, Any] = {}
    for a in agents:
        games = [r for r in done if a in (r["blue"], r["red"])]
        out = [_outcome(r, a) for r in games]
        n, wins, draws = len(games), out.count("win"), out.count("draw")
        lo, hi = wilson_interval(wins, n)
        rt = ratings[a]
        per_agent[a] = {
            "mu": round(float(rt.mu), 4), "sigma": round(float(rt.sigma), 4), "ordinal": round(float(rt.ordinal()), 4),
            "games": n, "wins": wins, "draws": draws, "losses": out.count("loss"),
            "win_rate": round(wins / n, 4) if n else None, "win_rate_ci95": [round(lo, 4), round(hi, 4)],
            "score": round((wins + draws / 2) / n, 4) if n else None,
        }
    return {"pairs": pairs, "agents": per_agent, "matrix": matrix}


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Write ``results.csv``: one row per finished game, columns :data:`CSV_COLUMNS`."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for r in sorted(rows, key=lambda r: r["index"]):
            if "error" in r:
                continue
            seat = "blue" if r["blue"] == r["a"] else "red"
            w.writerow([f"{r['a']} vs {r['b']}", r["game"], seat, r["blue"], r["red"], r["seed"], r["winner"],
                        r["vp_blue"], r["vp_red"], r["turns"]])


def write_heatmap(agents: list[str], matrix: list[list[float | None]], pairs: list[dict[str, Any]], path: Path,
                  title: str) -> None:
    """Write the agent-vs-agent score heatmap (PNG).

    Cell (i, j) is agent i's score against agent j, (wins + draws/2) / games,
    annotated with the score and W-D-L; the diagonal is blank.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(agents)
    data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    wdl: dict[tuple[str, str], tuple[int, int, int]] = {}
    for p in pairs:
        wdl[(p["agent"], p["opponent"])] = (p["wins"], p["draws"], p["losses"])
        wdl[(p["opponent"], p["agent"])] = (p["losses"], p["draws"], p["wins"])
    size = 1.6 + 1.25 * n
    fig = Figure(figsize=(size + 1.4, size), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(np.ma.masked_invalid(data), cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), labels=agents, rotation=30, ha="right", fontsize=9)
    ax.set_yticks(range(n), labels=agents, fontsize=9)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    for i in range(n):
        for j in range(n):
            if i == j:
                ax.text(j, i, "—", ha="center", va="center", color="#888888")
                continue
            if np.isnan(data[i, j]):
                ax.text(j, i, "n/a", ha="center", va="center", color="#888888", fontsize=8)
                continue
            w, d, l = wdl.get((agents[i], agents[j]), (0, 0, 0))
            ax.text(j, i, f"{data[i, j]:.2f}\n{w}-{d}-{l}", ha="center", va="center", fontsize=8.5,
                    color="black" if 0.2 < data[i, j] < 0.8 else "white")
    cbar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    cbar.set_label("score of row agent: (wins + draws/2) / games", fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")


def results_table(summary: dict[str, Any]) -> Table:
    """A rich table of the agents, best ordinal first."""
    table = Table(title="Tournament results", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
                  collapse_padding=True)
    for col, justify in (("#", "right"), ("agent", "left"), ("games", "right"), ("W-D-L", "center"),
                         ("win [95% CI]", "right"), ("score", "right"), ("mu±sigma", "right"), ("ordinal", "right")):
        table.add_column(col, justify=justify, no_wrap=True,
                         min_width=max(len(a) for a in summary["agents"]) if col == "agent" else None)
    ranked = sorted(summary["agents"].items(), key=lambda kv: kv[1]["ordinal"], reverse=True)
    for rank, (name, s) in enumerate(ranked, 1):
        lo, hi = s["win_rate_ci95"]
        wr = "—" if s["win_rate"] is None else f"{s['win_rate']:.0%} [{lo:.0%},{hi:.0%}]"
        table.add_row(str(rank), name, str(s["games"]), f"{s['wins']}-{s['draws']}-{s['losses']}", wr,
                      "—" if s["score"] is None else f"{s['score']:.2f}", f"{s['mu']:.1f}±{s['sigma']:.1f}",
                      f"{s['ordinal']:.2f}")
    return table


def run_tournament(
    scenario: str,
    agents: list[str],
    games_per_pair: int,
    seed: int,
    out: str | Path,
    workers: int | None = None,
    blue_army: str | None = None,
    red_army: str | None = None,
    max_decisions: int = 20000,
    console: Console | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Run a round-robin tournament and write its results into ``out``.

    Args:
        scenario: a scenario name, or a YAML path.
        agents: distinct registered agent names (at least two).
        games_per_pair: games for each unordered pair, split across the seats.
        seed: the base seed (see :func:`game_seed`).
        out: output folder (created): results.json, results.csv, heatmap.png.
        workers: worker processes (default ``os.cpu_count()``); 1 plays in this process.
        blue_army, red_army: army-list ids overriding the scenario's.
        max_decisions: decision cap per game (see :func:`~training.play.play_battle`).
        console: where the progress bar and the table go (default: stdout).
        progress: show the progress bar and the results table.

    Returns:
        The content of ``results.json`` as a dict.

    Raises:
        ConfigError: the scenario or an army is invalid (checked before any game).
        UnknownAgentError: an agent name is not registered (checked before any game).
        ValueError: fewer than two agents, repeated agents, or ``games_per_pair`` < 1.
    """
    from env.rules.config import load_army, load_scenario

    console = console or Console()
    load_scenario(scenario)
    for army in (blue_army, red_army):
        if army is not None:
            load_army(army)
    for name in agents:
        make_agent(name)
    games = schedule(agents, games_per_pair, seed)
    workers = max(1, int(workers or os.cpu_count() or 1))
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)

    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    description = f"{len(agents)} agents, {len(games)} games"
    if workers == 1:
        with Progress(*columns, console=console, disable=not progress) as bar:
            task = bar.add_task(description, total=len(games))
            for spec in games:
                rows.append(play_game(spec, str(scenario), blue_army, red_army, max_decisions))
                bar.advance(task)
    else:
        # Submit (and so start the worker processes) before the progress bar starts its thread.
        pool = ProcessPoolExecutor(max_workers=min(workers, len(games)))
        try:
            futures = [pool.submit(play_game, spec, str(scenario), blue_army, red_army, max_decisions)
                       for spec in games]
            with Progress(*columns, console=console, disable=not progress) as bar:
                task = bar.add_task(description, total=len(games))
                for fut in as_completed(futures):
                    rows.append(fut.result())
                    bar.advance(task)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
    elapsed = time.perf_counter() - t0
    rows.sort(key=lambda r: r["index"])
    failed = [r for r in rows if "error" in r]
    summary = summarise(rows, agents)
    results = {
        "scenario": str(scenario),
        "agents": list(agents),
        "games_per_pair": games_per_pair,
        "seed": seed,
        "workers": workers,
        "blue_army": blue_army,
        "red_army": red_army,
        "games": len(rows) - len(failed),
        "games_failed": len(failed),
        "seconds": round(elapsed, 2),
        "rating_model": "openskill PlackettLuce (draws as ties), games in schedule order",
        "score": "(wins + draws / 2) / games",
        "pairs": summary["pairs"],
        "ratings": summary["agents"],
        "matrix": {"agents": list(agents), "score": summary["matrix"]},
        "errors": [{k: r[k] for k in ("index", "blue", "red", "seed", "error", "traceback")} for r in failed],
    }
    (out_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_csv(rows, out_dir / "results.csv")
    write_heatmap(agents, summary["matrix"], summary["pairs"], out_dir / "heatmap.png",
                  f"{scenario}: score of row agent vs column agent ({games_per_pair} games per pair)")
    if progress:
        console.print(results_table(summary))
        if failed:
            msg = Text(f"{len(failed)} of {len(rows)} games failed", style="red")
            msg.append(f"; first: {failed[0]['error']} (see errors in results.json)")
            console.print(msg, soft_wrap=True)
    return results
