"""Random siege battles with the table's invariants checked after every decision.

``python -m benchmarks.siege_invariants --seeds 300 --scenario siege --out benchmarks/results/siege_invariants.json``

Each battle is ``random`` against ``random`` (the registry's agents, seeded as
in :func:`training.play.play_battle`), dice seed = battle seed, played by
:func:`benchmarks.fuzz.play_checked`: after set-up and after every decision
:class:`env.rules.invariants.InvariantTracker` checks the state, the castle
included:

* damage never decreases (each element's bonus, results so far, parapet /
  breach / collapse flags, the gate's damage state; SIEGE.DMG.VALUE);
* no unit stands inside a standing wall, tower or closed gate it may not
  enter (SIEGE.SCEN.CASTLE);
* a unit up on the castle stands wholly on it, in one rank on a wall section
  (SIEGE.MOVE.WALLS, SIEGE.CASTLE.WALL);
* and the checks of every battle: overlaps, the table edge, base contact of
  engaged units, models and wounds, the pending decision.

``python -m benchmarks.fuzz`` runs the same checks over every scenario and agent.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from battleline.training.cli_common import check_output, writing
from benchmarks import check_at_least, check_scenario, flag_errors
from benchmarks.fuzz import MAX_DECISIONS, Case, play_checked


def checked_random_battle(scenario: str | dict[str, Any], seed: int, max_decisions: int = MAX_DECISIONS) -> dict[str, Any]:
    """Play one random-vs-random battle, checking the invariants after each decision (:func:`benchmarks.fuzz.play_checked`).

    Returns a dict: ``seed``, ``winner`` ("blue"/"red", None when it did not
    finish), ``decisions``, ``turn``, ``problems`` (per kind of violation, the
    first: its decision number and line), ``error`` (the exception text, or
    None; a battle without an end within ``max_decisions`` is one), ``siege_rules``
    (SIEGE.* rule id → events), ``castle`` (element id → damage bonus, results, gate state).
    """
    row, battle = play_checked(Case(0, scenario, "random", "random", seed), seconds=0, max_decisions=max_decisions)
    out: dict[str, Any] = {"seed": seed, "winner": row["winner"], "decisions": row["decisions"], "turn": 0,
                           "problems": [{"decision": v["decision"], "problems": [v["line"]]}
                                        for v in row["violations"].values()],
                           "error": None}
    if row["error"]:
        out["error"] = row["error"]["error"]
        out["traceback"] = "\n".join(row["error"]["traceback"])
    elif row["hang"]:
        out["error"] = f"RuntimeError: {row['hang']['why']}"
    if battle is not None:
        out["turn"] = battle.state.turn
        out["siege_rules"] = dict(Counter(e["rule"] for e in battle.events if e["rule"].startswith("SIEGE.")))
        out["castle"] = {e.id: {"bonus": e.damage_bonus, "results": list(e.results), "gate": e.gate}
                         for e in battle.state.castle}
    return out


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over :func:`checked_random_battle` results: battles, finished, errors, invariant failures,
    winners, and SIEGE.* events over all battles."""
    rules: Counter[str] = Counter()
    for r in runs:
        rules.update(r.get("siege_rules", {}))
    return {
        "battles": len(runs),
        "finished": sum(r["winner"] is not None for r in runs),
        "errors": [r["seed"] for r in runs if r["error"]],
        "invariant_failures": [r["seed"] for r in runs if r["problems"]],
        "winners": dict(Counter(str(r["winner"]) for r in runs)),
        "siege_rules": dict(sorted(rules.items())),
    }


def main(
    seeds: Annotated[int, typer.Option(help="battles with seeds 0..N-1")] = 300,
    scenario: Annotated[str, typer.Option(help="a siege scenario")] = "siege",
    out: Annotated[Path, typer.Option(help="JSON report")] = Path("benchmarks/results/siege_invariants.json"),
) -> None:
    """Run the battles and write the report (summary and per-battle results)."""
    with flag_errors():
        check_at_least(1, seeds=seeds)
        check_scenario(scenario, siege=True)
        check_output("--out", out)
    t0 = time.perf_counter()
    runs = []
    for seed in range(seeds):
        runs.append(checked_random_battle(scenario, seed))
        r = runs[-1]
        if r["error"] or r["problems"]:
            typer.echo(f"seed {seed}: {r['error'] or r['problems']}")
    summary = {"scenario": scenario, "seconds": round(time.perf_counter() - t0, 1), **summarise(runs)}
    battles = ",\n".join(json.dumps(r, separators=(",", ":")) for r in runs)  # one battle a line
    with writing("--out", out):  # a folder that takes no files: one line, not a traceback after the battles
        out.write_text(f'{{"summary": {json.dumps(summary, indent=1)},\n"battles": [\n{battles}\n]}}\n',
                       encoding="utf-8")
    typer.echo(json.dumps({k: v for k, v in summary.items() if k != "siege_rules"}))
    if summary["errors"] or summary["invariant_failures"] or summary["finished"] < seeds:
        raise typer.Exit(1)


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
