"""Win rates of the siege agents against ``random`` in the other role.

``python -m benchmarks.siege_agents --games 100 --out benchmarks/results/siege_agents.json``

The scenario's castle belongs to one side (``siege``: blue defends), so each
pairing is played with the roles fixed: ``siege_attacker`` attacks against
``random`` defending, and ``siege_defender`` defends against ``random``
attacking; battle seeds 0..N-1, agents seeded as in
:func:`training.play.play_battle`. A win is the siege's own victory
(SIEGE.SCEN.VICTORY).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from battleline.env.rules.battle import Battle
from battleline.env.rules.state import SIDES
from battleline.training.cli_common import UserError, check_output, writing
from battleline.training.play import play_battle
from benchmarks import check_at_least, check_scenario, flag_errors

PAIRINGS = (("siege_attacker", "attacker"), ("siege_defender", "defender"))
"""(agent, the role it plays); ``random`` plays the other role."""


def castle_defender(scenario: str) -> int:
    """The side (0 blue, 1 red) holding the scenario's castle. Raises ValueError without a castle."""
    b = Battle.from_scenario(scenario, seed=0)
    if not b.state.castle:
        raise ValueError(f"scenario {scenario!r} has no castle")
    return b.state.castle[0].defender


def win_rate(scenario: str, agent: str, role: str, games: int, first_seed: int = 0) -> dict[str, Any]:
    """``agent`` in ``role`` ("attacker" or "defender") against ``random``, battle seeds first_seed.. .

    Returns a dict: agent, role, side, games, wins, win_rate, results (winner per seed: "agent",
    "random" or "draw"), seconds.
    """
    d = castle_defender(scenario)
    side = d if role == "defender" else 1 - d
    t0 = time.perf_counter()
    results: list[str] = []
    for seed in range(first_seed, first_seed + games):
        blue, red = (agent, "random") if side == 0 else ("random", agent)
        winner = play_battle(scenario, blue, red, seed).result["winner"]
        results.append("agent" if winner == SIDES[side] else "random" if winner in SIDES else "draw")
    wins = results.count("agent")
    return {"agent": agent, "role": role, "side": SIDES[side], "games": games, "wins": wins,
            "win_rate": wins / games if games else 0.0, "outcomes": dict(Counter(results)), "results": results,
            "seconds": round(time.perf_counter() - t0, 1)}


def main(
    games: Annotated[int, typer.Option(help="battles per pairing")] = 100,
    scenario: Annotated[str, typer.Option(help="a siege scenario")] = "siege",
    only: Annotated[str, typer.Option(help="one agent of the pairings, or 'both'")] = "both",
    out: Annotated[Path, typer.Option(help="JSON report")] = Path("benchmarks/results/siege_agents.json"),
) -> None:
    """Play the pairings and write the report."""
    with flag_errors():
        check_at_least(1, games=games)
        check_scenario(scenario, siege=True)
        if only not in ("both", *(agent for agent, _ in PAIRINGS)):
            raise UserError(f"--only must be 'both' or one of {', '.join(a for a, _ in PAIRINGS)}, got '{only}'")
        check_output("--out", out)
    rows = [win_rate(scenario, agent, role, games) for agent, role in PAIRINGS if only in ("both", agent)]
    with writing("--out", out):  # a folder that takes no files: one line, not a traceback after the battles
        out.write_text(json.dumps({"scenario": scenario, "pairings": rows}, indent=1) + "\n", encoding="utf-8")
    for r in rows:
        typer.echo(f"{r['agent']} ({r['role']}, {r['side']}) vs random: {r['wins']}/{r['games']} = {r['win_rate']:.0%}"
                   f" in {r['seconds']} s")


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
