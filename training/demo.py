"""The demo behind ``make demo``: a small tournament and one drawn battle.

``python -m battleline.training.demo --out out/demo`` runs a round robin of every
field-battle agent (the scripted ones and random; not the siege roles) on ``pitched_battle``, then
plays line_advance (blue) against pincers (red) with seed 7 and saves its
replay and picture. Outputs::

    out/demo/tournament/results.json, results.csv, heatmap.png, fingerprint.png
    out/demo/battle.json, battle.png
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from battleline.training.console import make_console

console = make_console()

SCENARIO = "pitched_battle"
BATTLE = {"blue": "line_advance", "red": "pincers", "seed": 7}


def launcher() -> str:
    """How to call the ``battleline`` command from the current folder: ``battleline`` when it is on PATH, else the
    script installed beside this Python (``.venv/bin/battleline`` after ``make demo``), relative when it can be."""
    if shutil.which("battleline"):
        return "battleline"
    script = Path(sys.executable).parent / "battleline"
    if not script.is_file():
        return "battleline"
    try:
        return str(script.relative_to(Path.cwd()))
    except ValueError:
        return str(script)


def main(
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("out/demo"),
    games_per_pair: Annotated[int, typer.Option(min=1, help="Tournament games per pair of agents.")] = 4,
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes (default: all cores).")] = None,
    seed: Annotated[int, typer.Option(help="Tournament base seed.")] = 0,
) -> None:
    """Run the demo tournament and battle and print where the files are."""
    from battleline.env.render import render_battle
    from battleline.training.cli_common import print_result, write_replay
    from battleline.training.play import agent_names, play_battle
    from battleline.training.tournament import run_tournament, schedule

    t0 = time.perf_counter()
    # Every field-battle agent; the siege roles belong to the siege scenario.
    agents = [name for name in agent_names() if not name.startswith("siege_")]
    try:
        schedule(agents, games_per_pair, seed)  # too many games is refused before any is played
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--games-per-pair'") from None
    workers = workers or os.cpu_count() or 1
    console.rule(f"Tournament on {SCENARIO}: {len(agents)} agents, {games_per_pair} games per pair")
    console.print(f"Agents: {', '.join(agents)}")  # wrapped, where a rule would cut the list short
    results = run_tournament(SCENARIO, agents, games_per_pair, seed, out / "tournament", workers=workers,
                             console=console)

    console.rule(f"Battle: {BATTLE['blue']} (blue) vs {BATTLE['red']} (red), seed {BATTLE['seed']}")
    battle = play_battle(SCENARIO, BATTLE["blue"], BATTLE["red"], BATTLE["seed"])
    players = {"blue": BATTLE["blue"], "red": BATTLE["red"]}
    replay, png = out / "battle.json", out / "battle.png"
    write_replay(battle, replay, players)
    render_battle(battle, png, title=f"{BATTLE['blue']} (blue) vs {BATTLE['red']} (red), seed {BATTLE['seed']}")
    print_result(battle, players, [])

    console.rule("Files")
    for what, path in (("tournament results", out / "tournament" / "results.json"),
                       ("games, one per row", out / "tournament" / "results.csv"),
                       ("score heatmap", out / "tournament" / "heatmap.png"),
                       ("tactic fingerprints", out / "tournament" / "fingerprint.png"),
                       ("battle replay", replay), ("battle picture", png)):
        console.print(f"{what:>20}: {path}", soft_wrap=True)
    console.print(f"replay it with: {launcher()} replay {replay} --check --png {out / 'battle_again.png'}",
                  soft_wrap=True)
    console.print(f"done in {time.perf_counter() - t0:.0f} s", soft_wrap=True)
    if results["games_failed"]:
        console.print(Text(f"{results['games_failed']} tournament games failed: see {out / 'tournament'}"
                           "/results.json", style="red"), soft_wrap=True)
        raise typer.Exit(1)


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
