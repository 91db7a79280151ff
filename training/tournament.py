"""Round-robin tournaments between agents, with ratings, a first-turn term, fingerprints and a heatmap.

Entrants are agent names, or ``agent@army`` (an agent playing one army list in
every game, whichever its seat): ``line_advance@dwarfs_iron_throng``. Every
unordered pair of distinct entrants plays ``games_per_pair`` games, split across
the two seats: game ``g`` of a pair puts the pair's first entrant on blue when
``g`` is even and on red when it is odd. Games ``2k`` and ``2k + 1`` share one
seed, so each dice seed is played from both seats (paired seeds: the luck of a
seed cancels between the two). Seeds come from :func:`game_seed` (the base
seed, the pair index and ``k``), so a tournament is reproducible whatever the
number of workers or the backend. With ``pairing="same-agent"`` only entrants
of the same agent meet: a faction-balance design in which the armies differ and
the play does not. With ``pairing="gauntlet"`` the first entrant's agent (each
of its entrants, one per army with ``--armies``) meets every entrant of the other
agents, and those do not meet each other: one new agent measured against a field.
A gauntlet's games are the full round robin's games of those pairs, seeds included.

Outputs (in ``out``):

* ``results.json`` — settings; per-pair counts and mean VP; per-entrant
  openskill rating and win rate with a Wilson 95% interval; the first-turn term
  (``first_turn``); the tactic fingerprint of every entrant (``fingerprint``);
  the factions' results against each other (``factions``); failed games;
* ``results.csv`` — one row per game (:data:`~training.tournament_report.CSV_COLUMNS`);
* ``heatmap.png`` — the score of the row entrant against the column entrant;
* ``fingerprint.png`` — entrants x tactics, the detector rates.

Ratings: openskill PlackettLuce, one game at a time in schedule order, the
winner ranked first and a draw a tie. The side that takes the first turn
(CORE.SETUP.FIRST_TURN, a roll-off) plays as a team of its entrant and a
shared virtual player, ``first-turn``, whose rating starts at mu 0 (the default
sigma) and is learnt like any other: its mu is the first-turn advantage on the
skill scale, and it keeps that advantage out of the entrants' ratings.

The seat-parity check (an agent against itself) is :mod:`training.parity`.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.text import Text

from battleline.env.rules.state import SIDES
from battleline.training.backends import run_games, worker_count
from battleline.training.play import check_model_agents, make_agent, play_battle
from battleline.training.tournament_report import (
    CSV_COLUMNS,
    faction_table,
    results_table,
    write_csv,
    write_fingerprint_chart,
    write_heatmap,
)

WILSON_Z = 1.959963984540054
"""The normal quantile for a two-sided 95% interval."""

ARMY_SEP = "@"
"""Separates an entrant's agent from its army list: ``agent@army``."""

PAIRINGS = ("all", "same-agent", "gauntlet")
"""``all``: every pair of entrants meets; ``same-agent``: only entrants of the same agent (different armies);
``gauntlet``: the first entrant's agent (each of its entrants) against every entrant of the other agents."""

FIRST_TURN = "first-turn"
"""The name of the virtual player added to the team of the side that takes the first turn."""

FACTION_LIMIT = 0.75
"""A faction winning more than this share of its games against the other factions is flagged."""

MAX_GAMES = 100_000
"""The most games one tournament, parity check or evaluation plays (days of play on a machine; a mistyped
count beyond it spent minutes and gigabytes building its schedule before the first game)."""


def check_games_total(total: int, how: str) -> None:
    """Refuse a run of more than :data:`MAX_GAMES` games; ``how`` says how ``total`` adds up.

    Raises:
        ValueError: "<how> make <total> games, over the limit of 100,000 a run plays".
    """
    if total > MAX_GAMES:
        raise ValueError(f"{how} make {total:,} games, over the limit of {MAX_GAMES:,} a run plays")


# ----------------------------------------------------------------------------- entrants and schedule
@dataclass(frozen=True)
class Entrant:
    """A tournament entrant: an agent and, optionally, the army list it always plays."""

    agent: str
    army: str | None = None

    @classmethod
    def parse(cls, text: str) -> Entrant:
        """``"agent"`` or ``"agent@army"``.

        Raises:
            ValueError: an empty agent or army part (one line naming the entrant).
        """
        agent, sep, army = text.strip().partition(ARMY_SEP)
        if not agent or (sep and not army):
            raise ValueError(f"entrant '{text}': expected 'agent' or 'agent{ARMY_SEP}army'")
        return cls(agent, army or None)

    @property
    def name(self) -> str:
        """The entrant's label in tables and files."""
        return f"{self.agent}{ARMY_SEP}{self.army}" if self.army else self.agent


def cross_entrants(agents: list[str], armies: list[str]) -> list[str]:
    """Every agent with every army list, agent-major: ``["a@x", "a@y", "b@x", ...]``."""
    return [Entrant(a, army).name for a in agents for army in armies]


@dataclass(frozen=True)
class GameSpec:
    """One game of a tournament.

    Attributes:
        index: position in the schedule (0-based).
        pair: index of the pair in the schedule.
        game: index of the game within its pair.
        a, b: the pair's entrants, in the order of the entrant list.
        blue, red: the entrants in each seat.
        seed: the battle seed.
        blue_army, red_army: army-list ids to play (None: the scenario's).
    """

    index: int
    pair: int
    game: int
    a: str
    b: str
    blue: str
    red: str
    seed: int
    blue_army: str | None = None
    red_army: str | None = None


def game_seed(base_seed: int, pair: int, game: int) -> int:
    """The battle seed of game ``game`` of pair ``pair`` (both seats of a seed share it: ``game // 2``).

    Returns an int in [0, 2**31), from :class:`numpy.random.SeedSequence`.
    """
    ss = np.random.SeedSequence([int(base_seed), int(pair), int(game) // 2])
    return int(ss.generate_state(1)[0] & 0x7FFFFFFF)


def schedule(agents: list[str], games_per_pair: int, seed: int, pairing: str = "all",
             blue_army: str | None = None, red_army: str | None = None) -> list[GameSpec]:
    """Every game of the round robin, in a fixed order (see the module docstring).

    Args:
        agents: distinct entrants (``agent`` or ``agent@army``).
        games_per_pair: games for each pair, split across the seats.
        seed: the base seed (:func:`game_seed`).
        pairing: one of :data:`PAIRINGS`.
        blue_army, red_army: the army of each seat for entrants without their own.

    Raises:
        ValueError: repeated entrants, fewer than two, ``games_per_pair`` < 1, an unknown
            pairing, a malformed entrant, no pair to play, or more than :data:`MAX_GAMES` games.
    """
    if len(set(agents)) != len(agents):
        raise ValueError("each agent may appear only once in a tournament")
    if len(agents) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {len(agents)}")
    if games_per_pair < 1:
        raise ValueError(f"games per pair must be at least 1, got {games_per_pair}")
    if pairing not in PAIRINGS:
        raise ValueError(f"unknown pairing '{pairing}'; known pairings: {', '.join(PAIRINGS)}")
    entrants = {name: Entrant.parse(name) for name in agents}
    # a gauntlet's pairs keep their round-robin indices (and so their seeds); the other pairings number theirs afresh
    indexed = [(p, (a, b)) for p, (a, b) in enumerate(combinations(agents, 2)) if _meets(pairing, entrants, agents, a, b)]
    pairs = [(p if pairing == "gauntlet" else k, ab) for k, (p, ab) in enumerate(indexed)]
    if not pairs:
        raise ValueError(f"no two entrants share an agent, so pairing '{pairing}' leaves no game")
    check_games_total(len(pairs) * games_per_pair,
                      f"{len(pairs):,} pair{'s' * (len(pairs) != 1)} × {games_per_pair:,} games per pair")
    games = []
    for p, (a, b) in pairs:
        for g in range(games_per_pair):
            blue, red = (a, b) if g % 2 == 0 else (b, a)
            games.append(GameSpec(len(games), p, g, a, b, blue, red, game_seed(seed, p, g),
                                  entrants[blue].army or blue_army, entrants[red].army or red_army))
    return games


def _meets(pairing: str, entrants: dict[str, Entrant], agents: list[str], a: str, b: str) -> bool:
    """Whether entrants ``a`` and ``b`` (``a`` listed first) play each other under ``pairing``."""
    if pairing == "same-agent":
        return entrants[a].agent == entrants[b].agent
    if pairing == "gauntlet":
        first = entrants[agents[0]].agent
        return (entrants[a].agent == first) != (entrants[b].agent == first)
    return True


# ----------------------------------------------------------------------------- one game
def play_game(spec: GameSpec, scenario: str, max_decisions: int = 20000, tactics: bool = True) -> dict[str, Any]:
    """Play one scheduled game (in a worker) and return its row.

    Returns a dict with the :class:`GameSpec` fields (``blue_army`` / ``red_army`` resolved
    to the lists played, None for explicit placements) and ``blue_faction``, ``red_faction``,
    ``first_turn`` ("blue" or "red", CORE.SETUP.FIRST_TURN), ``winner`` ("blue", "red" or
    "draw"), ``vp_blue``, ``vp_red``, ``turns``, ``decisions``, ``seconds`` and, with
    ``tactics``, ``tactics_blue`` / ``tactics_red`` (the tactic ids detected for each side,
    :func:`tactics.detectors.detect`); or, when the game raised, ``error`` (the exception in
    one line) and ``traceback`` instead of the result fields.
    """
    from battleline.env.rules.state import SIDES

    row: dict[str, Any] = asdict(spec)
    t0 = time.perf_counter()
    try:
        battle = play_battle(scenario, Entrant.parse(spec.blue).agent, Entrant.parse(spec.red).agent, spec.seed,
                             blue_army=spec.blue_army, red_army=spec.red_army, max_decisions=max_decisions)
        res = battle.result
        row.update(winner=res["winner"], vp_blue=int(res["vp"]["blue"]), vp_red=int(res["vp"]["red"]),
                   turns=int(res.get("turn", battle.state.turn)), decisions=len(battle.actions),
                   first_turn=SIDES[battle.state.first_player])
        for side in SIDES:
            row[f"{side}_army"] = battle.scenario[side].get("army")
            row[f"{side}_faction"] = battle.scenario[side]["faction"]
        if tactics:
            from battleline.tactics.detectors import detect
            from battleline.tactics.fingerprint import used_ids

            for i, side in enumerate(SIDES):
                row[f"tactics_{side}"] = used_ids(detect(battle, i))
    except Exception as exc:  # noqa: BLE001 - one failed game must not lose the others
        row.update(error=f"{type(exc).__name__}: {exc}".splitlines()[0], traceback=traceback.format_exc())
    row["seconds"] = round(time.perf_counter() - t0, 4)
    return row


# ----------------------------------------------------------------------------- statistics
def wilson_interval(successes: float, n: int, z: float = WILSON_Z) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    ``successes`` may be fractional (a score counting draws as halves).
    Returns (low, high) in [0, 1]; (0.0, 1.0) when ``n`` is 0.
    """
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(0.0, p * (1 - p)) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def record_of(outcomes: list[str]) -> dict[str, Any]:
    """The record of a list of 'win' / 'draw' / 'loss'.

    Returns ``{games, wins, draws, losses, win_rate, win_rate_ci95, score, score_ci95}``:
    the rates in [0, 1] (None without games), score = (wins + draws/2) / games, each with
    its Wilson 95% interval [low, high] (draws count half in the score's).
    """
    n, wins, draws = len(outcomes), outcomes.count("win"), outcomes.count("draw")
    lo, hi = wilson_interval(wins, n)
    score_lo, score_hi = wilson_interval(wins + draws / 2, n)
    return {"games": n, "wins": wins, "draws": draws, "losses": outcomes.count("loss"),
            "win_rate": round(wins / n, 4) if n else None, "win_rate_ci95": [round(lo, 4), round(hi, 4)],
            "score": round((wins + draws / 2) / n, 4) if n else None,
            "score_ci95": [round(score_lo, 4), round(score_hi, 4)]}


def outcome(row: dict[str, Any], side: str) -> str:
    """'win', 'draw' or 'loss' for ``side`` ("blue" or "red") in a finished game row."""
    if row["winner"] == "draw":
        return "draw"
    return "win" if row["winner"] == side else "loss"


def _side_of(row: dict[str, Any], entrant: str) -> str:
    return "blue" if row["blue"] == entrant else "red"


def rate(rows: list[dict[str, Any]], agents: list[str]) -> tuple[dict[str, Any], Any]:
    """openskill PlackettLuce ratings of the entrants and of the first-turn term.

    Rows are rated one at a time in ``index`` order: the winner ranked first, a draw a
    tie; the side that took the first turn plays as a team of its entrant and the shared
    :data:`FIRST_TURN` player (starting at mu 0). Rows with ``error`` are skipped.

    Returns:
        (entrant -> rating, first-turn rating), openskill rating objects (``mu``, ``sigma``,
        ``ordinal()``).
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {a: model.rating(name=a) for a in agents}
    first = model.rating(mu=0.0, sigma=model.sigma, name=FIRST_TURN)
    for r in sorted((r for r in rows if "error" not in r), key=lambda r: r["index"]):
        teams = [[ratings[r["blue"]]], [ratings[r["red"]]]]
        mover = 0 if r["first_turn"] == "blue" else 1
        teams[mover].append(first)
        ranks = {"blue": [0, 1], "red": [1, 0], "draw": [0, 0]}[r["winner"]]
        rated = model.rate(teams, ranks=ranks)
        ratings[r["blue"]], ratings[r["red"]], first = rated[0][0], rated[1][0], rated[mover][1]
    return ratings, first


def _rating_dict(rt: Any) -> dict[str, float]:
    return {"mu": round(float(rt.mu), 4), "sigma": round(float(rt.sigma), 4), "ordinal": round(float(rt.ordinal()), 4)}


def first_turn_summary(rows: list[dict[str, Any]], first: Any) -> dict[str, Any]:
    """The first-turn term: its rating, the win probability it gives, and the raw first-mover record.

    Returns ``{"rating": {mu, sigma}, "win_probability": p, "first_mover": {games,
    wins, draws, losses, win_rate, win_rate_ci95, score}, "blue_first_share": s}`` where ``p``
    is openskill's predicted chance that the first mover wins between two entrants of equal
    default rating, and the record counts games from the first mover's side.
    """
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    p = model.predict_win([[model.rating(), first], [model.rating()]])[0]
    rating = {"mu": round(float(first.mu), 4), "sigma": round(float(first.sigma), 4)}
    return {"rating": rating, "win_probability": round(float(p), 4), **first_mover_record(rows)}


def first_mover_record(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"first_mover": record from the first mover's side, "blue_first_share": share of games blue moved first}``.

    The record is ``{games, wins, draws, losses, win_rate, win_rate_ci95, score}`` over the
    finished rows (rows with ``error`` are skipped); the share is None without games.
    """
    done = [r for r in rows if "error" not in r]
    blue_first = sum(1 for r in done if r["first_turn"] == "blue")
    return {"first_mover": record_of([outcome(r, r["first_turn"]) for r in done]),
            "blue_first_share": round(blue_first / len(done), 4) if done else None}


def pair_table(rows: list[dict[str, Any]], agents: list[str]) -> tuple[list[dict[str, Any]], list[list[float | None]]]:
    """Per-pair records and the score matrix.

    Returns (pairs, matrix): each pair has ``agent``, ``opponent``, the :func:`record_of`
    fields from ``agent``'s side (counts, win rate and score = (wins + draws/2) / games with
    their Wilson 95% intervals), ``games_as_blue``, ``mean_vp_for`` and ``mean_vp_against``;
    ``matrix[i][j]`` is entrant
    i's score against entrant j (None on the diagonal or without games).
    """
    done = [r for r in rows if "error" not in r]
    index = {a: i for i, a in enumerate(agents)}
    matrix: list[list[float | None]] = [[None] * len(agents) for _ in agents]
    pairs = []
    for a, b in combinations(agents, 2):
        games = [r for r in done if {r["blue"], r["red"]} == {a, b}]
        if not games:
            continue
        n = len(games)
        rec = record_of([outcome(r, _side_of(r, a)) for r in games])
        vp_for = sum(r[f"vp_{_side_of(r, a)}"] for r in games)
        vp_against = sum(r[f"vp_{_side_of(r, b)}"] for r in games)
        pairs.append({"agent": a, "opponent": b, **rec, "games_as_blue": sum(1 for r in games if r["blue"] == a),
                      "mean_vp_for": round(vp_for / n, 2), "mean_vp_against": round(vp_against / n, 2)})
        matrix[index[a]][index[b]] = rec["score"]
        matrix[index[b]][index[a]] = round(1.0 - rec["score"], 4)
    return pairs, matrix


def fingerprints(rows: list[dict[str, Any]], agents: list[str]) -> dict[str, dict[str, float]]:
    """Entrant -> tactic id -> share of its finished games in which the tactic was detected for its side."""
    from battleline.tactics.fingerprint import shares

    done = [r for r in rows if "error" not in r and "tactics_blue" in r]
    return {a: {t: round(v, 4) for t, v in shares(r[f"tactics_{_side_of(r, a)}"] for r in done
                                                   if a in (r["blue"], r["red"])).items()}
            for a in agents}


def faction_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The factions' results in the games between different factions.

    Returns ``{"factions": {faction: {games, wins, draws, losses, win_rate, win_rate_ci95,
    score, over_limit}}, "matrix": {"factions": [...], "score": [[...]]}, "limit": 0.75}``:
    ``over_limit`` is a win rate above :data:`FACTION_LIMIT`; ``score[i][j]`` is faction i's
    score against faction j (None on the diagonal or without games).
    """
    done = [r for r in rows if "error" not in r and r["blue_faction"] != r["red_faction"]]
    names = sorted({r[f"{s}_faction"] for r in rows if "error" not in r for s in ("blue", "red")})
    per: dict[str, Any] = {}
    for f in names:
        rec = record_of([outcome(r, s) for r in done for s in ("blue", "red") if r[f"{s}_faction"] == f])
        per[f] = {**rec, "over_limit": rec["win_rate"] is not None and rec["win_rate"] > FACTION_LIMIT}
    score: list[list[float | None]] = [[None] * len(names) for _ in names]
    for i, f in enumerate(names):
        for j, g in enumerate(names):
            if i != j:
                mine = [outcome(r, s) for r in done for s in ("blue", "red")
                        if r[f"{s}_faction"] == f and r[f"{'red' if s == 'blue' else 'blue'}_faction"] == g]
                score[i][j] = record_of(mine)["score"]
    return {"factions": per, "matrix": {"factions": names, "score": score}, "limit": FACTION_LIMIT}


def summarise(rows: list[dict[str, Any]], agents: list[str]) -> dict[str, Any]:
    """Everything ``results.json`` reports about finished game rows (rows with ``error`` are skipped).

    Returns ``{"pairs", "matrix"}`` from :func:`pair_table`; ``"agents"``: entrant ->
    ``mu``, ``sigma``, ``ordinal`` (:func:`rate`), ``games``, ``wins``, ``draws``, ``losses``,
    ``win_rate``, ``win_rate_ci95`` [low, high] and ``score``; ``"first_turn"`` from
    :func:`first_turn_summary`; ``"fingerprint"`` from :func:`fingerprints`; ``"factions"``
    from :func:`faction_summary`.
    """
    done = [r for r in rows if "error" not in r]
    ratings, first = rate(done, agents)
    pairs, matrix = pair_table(done, agents)
    per_agent = {a: {**_rating_dict(ratings[a]),
                     **record_of([outcome(r, _side_of(r, a)) for r in done if a in (r["blue"], r["red"])])}
                 for a in agents}
    return {"pairs": pairs, "agents": per_agent, "matrix": matrix, "first_turn": first_turn_summary(done, first),
            "fingerprint": fingerprints(done, agents), "factions": faction_summary(done)}


# ----------------------------------------------------------------------------- running
@cache
def _check_army(army: str) -> str:
    from battleline.env.rules.config import load_army

    return load_army(army).faction


def validate_inputs(scenario: str | Path, agents: list[str], armies: tuple[str | None, ...]) -> None:
    """Load the scenario, the armies and every agent once, so that bad input fails before any game.

    ``armies`` are the (blue, red) overrides. An army (an entrant's, or an override) must load and may not
    replace a side the scenario places (``placements``); its ConfigError's ``where`` names the entrant
    (``entrant 'a@x'``) or the override (``blue army 'x'``).

    A ``model:`` agent must also have unit slots for the largest army of the
    scenario, the entrants and the overrides (:func:`~training.play.check_model_agents`).
    """
    from battleline.env.rules.config import ConfigError, load_scenario

    cfg = load_scenario(scenario)
    placed = [side for side in SIDES if cfg.side(side).placements is not None]

    def check_army(army: str, label: str, sides: Sequence[str]) -> None:
        try:
            _check_army(army)
        except ConfigError as exc:
            raise ConfigError(str(exc), where=label) from None
        if any(side in placed for side in sides):
            raise ConfigError(f"scenario '{cfg.id}' places its units explicitly (placements), so its army lists "
                              f"cannot be replaced", where=label)

    entrants = [Entrant.parse(name) for name in agents]
    for entrant in entrants:
        make_agent(entrant.agent)
        if entrant.army:
            check_army(entrant.army, f"entrant '{entrant.name}'", SIDES)
    for side, army in zip(SIDES, armies):
        if army is not None:
            check_army(army, f"{side} army '{army}'", [side])
    # a model agent must hold the largest army it may meet (any entrant's, any seat's override)
    pool = [a for a in [*(e.army for e in entrants), *armies] if a is not None]
    check_model_agents(scenario, [e.agent for e in entrants], pool, pool)


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
    backend: str = "process",
    ray_address: str | None = None,
    pairing: str = "all",
) -> dict[str, Any]:
    """Run a round-robin tournament and write its results into ``out``.

    Args:
        scenario: a scenario name, or a YAML path.
        agents: distinct entrants, ``agent`` or ``agent@army`` (at least two).
        games_per_pair: games for each pair, split across the seats.
        seed: the base seed (see :func:`game_seed`).
        out: output folder (created): results.json, results.csv, heatmap.png, fingerprint.png.
        workers: worker processes, or a local Ray instance's CPUs (default ``os.cpu_count()``), at most one
            per game and one per CPU (:func:`~training.backends.worker_count`); 1 plays in this process with
            the process backend.
        blue_army, red_army: army-list ids overriding the scenario's, for entrants without an army.
        max_decisions: decision cap per game (see :func:`~training.play.play_battle`).
        console: where the progress bar and the tables go (default: stdout).
        progress: show the progress bar and the tables.
        backend: ``"process"`` or ``"ray"`` (:mod:`training.backends`).
        ray_address: the Ray cluster to join; None starts a local instance.
        pairing: one of :data:`PAIRINGS`.

    Returns:
        The content of ``results.json`` as a dict.

    Raises:
        ConfigError: the scenario or an army is invalid (checked before any game).
        UnknownAgentError: an agent name is not registered (checked before any game).
        ValueError: see :func:`schedule`; an unknown backend; ``workers`` < 1.
    """
    console = console or Console()
    validate_inputs(scenario, agents, (blue_army, red_army))
    games = schedule(agents, games_per_pair, seed, pairing, blue_army, red_army)
    workers = worker_count(workers, len(games))[0]
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)

    t0 = time.perf_counter()
    rows = run_games(play_game, games, (str(scenario), max_decisions), backend=backend, workers=workers,
                     ray_address=ray_address, console=console, progress=progress,
                     description=f"{len(agents)} agents, {len(games)} games")
    elapsed = time.perf_counter() - t0
    failed = [r for r in rows if "error" in r]
    summary = summarise(rows, agents)
    results = {
        "scenario": str(scenario), "agents": list(agents), "games_per_pair": games_per_pair, "seed": seed,
        "pairing": pairing, "backend": backend, "workers": workers, "blue_army": blue_army, "red_army": red_army,
        "games": len(rows) - len(failed), "games_failed": len(failed), "seconds": round(elapsed, 2),
        "rating_model": f"openskill PlackettLuce (draws as ties), games in schedule order; the first mover's team "
                        f"includes the shared '{FIRST_TURN}' player",
        "score": "(wins + draws / 2) / games",
        "pairs": summary["pairs"],
        "ratings": summary["agents"],
        "first_turn": summary["first_turn"],
        "matrix": {"agents": list(agents), "score": summary["matrix"]},
        "factions": summary["factions"],
        "fingerprint": {"rates": summary["fingerprint"],
                        "meaning": "share of the agent's games in which each tactic detector fired for its side"},
        "csv_columns": list(CSV_COLUMNS),
        "errors": [{k: r[k] for k in ("index", "blue", "red", "seed", "error", "traceback")} for r in failed],
    }
    (out_dir / "results.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    write_csv(rows, out_dir / "results.csv")
    write_heatmap(agents, summary["matrix"], summary["pairs"], out_dir / "heatmap.png",
                  f"{scenario}: score of row agent vs column agent ({games_per_pair} games per pair)")
    write_fingerprint_chart(summary["fingerprint"], out_dir / "fingerprint.png",
                            f"{scenario}: tactics detected per agent")
    if progress:
        _print_summary(console, results, summary, rows)
    return results


def _print_summary(console: Console, results: dict[str, Any], summary: dict[str, Any],
                   rows: list[dict[str, Any]]) -> None:
    console.print(results_table(summary))
    ft = results["first_turn"]
    mover = ft["first_mover"]
    if mover["games"]:
        console.print(f"first turn: the first mover won {mover['win_rate']:.0%} "
                      f"[{mover['win_rate_ci95'][0]:.0%},{mover['win_rate_ci95'][1]:.0%}] of {mover['games']} games; "
                      f"rating term mu {ft['rating']['mu']:+.2f} ± {ft['rating']['sigma']:.2f} "
                      f"(win chance {ft['win_probability']:.0%} between equal agents)", soft_wrap=True)
    if len(results["factions"]["factions"]) > 1 and any(f["games"] for f in results["factions"]["factions"].values()):
        console.print(faction_table(results["factions"]))
    failed = [r for r in rows if "error" in r]
    if failed:
        msg = Text(f"{len(failed)} of {len(rows)} games failed", style="red")
        msg.append(f"; first: {failed[0]['error']} (see errors in results.json)")
        console.print(msg, soft_wrap=True)


__all__ = ["ARMY_SEP", "Entrant", "FIRST_TURN", "GameSpec", "PAIRINGS", "cross_entrants", "faction_summary",
           "fingerprints", "first_mover_record", "first_turn_summary", "game_seed", "outcome", "pair_table", "play_game",
           "rate", "record_of", "run_tournament", "schedule", "summarise", "validate_inputs", "wilson_interval"]
