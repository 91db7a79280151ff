"""Random siege battles with the castle invariants checked after every decision.

``python -m benchmarks.siege_invariants --seeds 300 --scenario siege --out benchmarks/results/siege_invariants.json``

Each battle is ``random`` against ``random`` (the registry's agents, seeded as
in :func:`training.play.play_battle`), dice seed = battle seed. After every
decision :func:`env.rules.siege.castle.check_invariants` compares the castle
with its state before the decision:

* damage never decreases (each element's bonus, results so far, parapet /
  breach / collapse flags, the gate's damage state);
* no unit stands inside a standing wall section (off the parapet: only in an
  open gateway or a breach);
* a unit on a wall section stands in one rank (SIEGE.CASTLE.WALL).
"""

from __future__ import annotations

import json
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from battleline.agents.registry import make_agent
from battleline.env.rules.battle import Battle
from battleline.env.rules.siege import castle as cs
from battleline.training.cli import check_output, writing
from battleline.training.play import agent_seed
from benchmarks import check_at_least, check_scenario, flag_errors

MAX_DECISIONS = 20000


def checked_random_battle(scenario: str | dict[str, Any], seed: int, max_decisions: int = MAX_DECISIONS) -> dict[str, Any]:
    """Play one random-vs-random battle, checking the castle invariants after each decision.

    Returns a dict: ``seed``, ``winner`` ("blue"/"red", None when it did not
    finish), ``decisions``, ``turn``, ``problems`` (the first invariant
    problems, with the decision number), ``error`` (the exception text, or
    None), ``siege_rules`` (SIEGE.* rule id → events), ``castle`` (element id →
    damage bonus, results, gate state).
    """
    out: dict[str, Any] = {"seed": seed, "winner": None, "decisions": 0, "turn": 0, "problems": [], "error": None}
    battle: Battle | None = None
    try:
        battle = Battle.from_scenario(scenario, seed=seed)
        agents = [make_agent("random", seed=agent_seed(seed, side)) for side in (0, 1)]
        for side, agent in enumerate(agents):
            agent.reset(battle, side)
        while not battle.is_over:
            if out["decisions"] >= max_decisions:
                raise RuntimeError(f"no end within {max_decisions} decisions")
            before = cs.snapshot(battle.state)
            battle.apply(agents[battle.pending.player].act(battle))
            out["decisions"] += 1
            problems = cs.check_invariants(battle.state, before)
            if problems:
                out["problems"].append({"decision": out["decisions"], "problems": problems})
                break
        out["winner"] = battle.result["winner"] if battle.is_over else None
    except Exception as exc:  # noqa: BLE001 - the report records any failure
        out["error"] = "".join(traceback.format_exception_only(exc)).strip()
        out["traceback"] = traceback.format_exc(limit=6)
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
    from battleline.training.cli import run_command

    run_command(main)
