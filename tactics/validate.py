"""Validate the tactic detectors on battles between scripted agents.

``python -m battleline.tactics.validate --battles 20`` plays every scripted agent except
``line_advance`` against ``line_advance`` (seats alternating, seeds ``--seed`` + i) and
reports, for each detector, how often it fired for each agent and for ``line_advance`` (the
baseline, pooled over all those battles). A detector of a tactic that an agent is built on
should fire in >= :data:`TARGET_OWN` of that agent's battles and in <= :data:`TARGET_BASELINE`
of the baseline's. Prints a markdown table to stdout and writes the numbers as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from battleline.tactics.catalogue import catalogue, detectable_ids
from battleline.tactics.detectors import detect
from battleline.tactics.detectors_common import Detection
from battleline.tactics.fingerprint import rates
from battleline.training.console import LoggedProgress, make_console

BASELINE = "line_advance"
TARGET_OWN = 0.8
"""Least firing rate of a tactic's detector in battles of the agent built on it."""
TARGET_BASELINE = 0.2
"""Most firing rate of that detector for the baseline agent."""


AGENT_TACTICS: dict[str, tuple[str, ...]] = {
    "bait_and_flank": ("bait_unit",),
    "control_zones": ("area_control", "terrain_denial_by_threat"),
}
"""Tactics of the agents whose registry name is not a tactic id."""


def agent_tactics(name: str) -> list[str]:
    """The catalogue tactics an agent is built on.

    The agent's ``tactics`` attribute when it has one, else :data:`AGENT_TACTICS`, else
    its name when that is a tactic id (``pincers``, ``refused_flank``, ...).
    """
    try:
        from battleline.agents.registry import make_agent

        declared = getattr(make_agent(name), "tactics", None)
    except (ImportError, ValueError):  # pragma: no cover - agents/ is optional here; unknown names have none
        declared = None
    if isinstance(declared, (list, tuple)) and declared:
        return [t for t in declared if t in catalogue()]
    if name in AGENT_TACTICS:
        return list(AGENT_TACTICS[name])
    return [name] if name in catalogue() else []


def scripted_agents() -> list[str]:
    """Registered agents built on at least one catalogue tactic (random and the baseline excluded)."""
    from battleline.agents.registry import AGENT_NAMES

    return [n for n in AGENT_NAMES if n not in ("random", BASELINE) and agent_tactics(n)]


def run(
    agents: list[str],
    battles: int,
    scenario: str = "pitched_battle",
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Play ``battles`` battles of each agent against the baseline and collect detector firing rates.

    Returns:
        A JSON-ready dict: ``settings``; ``rates`` {agent: {tactic: rate}} (the baseline's
        pooled over every battle); ``checks`` (one per agent tactic: own rate, baseline
        rate, pass); ``battles`` (per battle: agent, blue, red, seed, the agent's side, and
        whether each of the agent's tactics was detected for it and for the baseline, so a
        replay can confirm the fixture); ``failed`` (battles that raised, with the error).
    """
    from battleline.training.play import play_battle

    found: dict[str, list[dict[str, Detection]]] = {a: [] for a in agents}
    found[BASELINE] = []
    failed: list[dict[str, Any]] = []
    played: list[dict[str, Any]] = []
    for agent in agents:
        own_ids = agent_tactics(agent)
        for i in range(battles):
            s = seed + i
            side = i % 2
            blue, red = (agent, BASELINE) if side == 0 else (BASELINE, agent)
            try:
                battle = play_battle(scenario, blue, red, s)
            except Exception as exc:  # noqa: BLE001 - a broken battle is reported, not fatal
                failed.append({"blue": blue, "red": red, "seed": s, "error": f"{type(exc).__name__}: {exc}"})
                continue
            mine, theirs = detect(battle, side), detect(battle, 1 - side)
            found[agent].append(mine)
            found[BASELINE].append(theirs)
            played.append({"agent": agent, "blue": blue, "red": red, "seed": s, "side": side,
                           "own": {t: mine[t].used for t in own_ids},
                           "baseline": {t: theirs[t].used for t in own_ids}})
            if progress:
                progress(f"{agent} vs {BASELINE}: {i + 1}/{battles}")
    table = {name: rates(ds) for name, ds in found.items()}
    checks = []
    for agent in agents:
        for tid in agent_tactics(agent):
            own, base = table[agent][tid], table[BASELINE][tid]
            checks.append({"agent": agent, "tactic": tid, "own": own, "baseline": base,
                           "ok": own >= TARGET_OWN and base <= TARGET_BASELINE})
    return {
        "settings": {"scenario": scenario, "battles_per_agent": battles, "seed": seed, "agents": agents,
                     "baseline": BASELINE, "target_own": TARGET_OWN, "target_baseline": TARGET_BASELINE},
        "games": {name: len(ds) for name, ds in found.items()},
        "rates": table,
        "checks": checks,
        "battles": played,
        "failed": failed,
    }


def markdown(result: dict[str, Any]) -> str:
    """The firing rates as a markdown table: one row per detector, one column per agent, then the checks."""
    names = list(result["rates"])
    own = {(c["agent"], c["tactic"]): c for c in result["checks"]}
    games = result["games"]
    head = "| tactic | kind | " + " | ".join(f"{n} (n={games[n]})" for n in names) + " |"
    lines = [head, "|" + "---|" * (len(names) + 2)]
    cat = catalogue()
    for tid in detectable_ids():
        cells = []
        for n in names:
            rate = result["rates"][n][tid]
            mark = ""
            if (n, tid) in own:
                mark = " ✓" if own[(n, tid)]["ok"] else " ✗"
            cells.append(f"{100 * rate:.0f}%{mark}")
        bold = f"**{tid}**" if any(t == tid for _, t in own) else tid
        lines.append(f"| {bold} | {cat[tid].kind} | " + " | ".join(cells) + " |")
    lines.append("")
    for c in result["checks"]:
        verdict = "pass" if c["ok"] else "FAIL"
        lines.append(f"- {c['tactic']}: {c['agent']} {100 * c['own']:.0f}% (target ≥ {100 * TARGET_OWN:.0f}%), "
                     f"{BASELINE} {100 * c['baseline']:.0f}% (target ≤ {100 * TARGET_BASELINE:.0f}%): {verdict}")
    for f in result["failed"]:
        lines.append(f"- battle failed: {f['blue']} vs {f['red']} seed {f['seed']}: {f['error']}")
    return "\n".join(lines)


def report(result: dict[str, Any], table: str | None = None) -> str:
    """The markdown report: how it was made, the checks (passing and failing), then the full table."""
    st = result["settings"]
    ok = sum(1 for c in result["checks"] if c["ok"])
    head = [
        "# Tactic detector validation",
        "",
        f"Generated by `python -m battleline.tactics.validate --battles {st['battles_per_agent']} --seed {st['seed']} "
        f"--scenario {st['scenario']}`: every agent built on a tactic plays {st['battles_per_agent']} battles "
        f"against `{BASELINE}` (seats alternating, so each army of the scenario in turn). A tactic's detector "
        f"must fire in ≥ {100 * TARGET_OWN:.0f}% of its agent's battles and in ≤ {100 * TARGET_BASELINE:.0f}% "
        f"of `{BASELINE}`'s. {ok} of {len(result['checks'])} checks pass; the failing ones are marked FAIL.",
        "",
        "| tactic | agent | agent rate | line_advance rate | verdict |",
        "|---|---|---|---|---|",
    ]
    for c in result["checks"]:
        head.append(f"| {c['tactic']} | {c['agent']} | {100 * c['own']:.0f}% | {100 * c['baseline']:.0f}% | "
                    f"{'pass' if c['ok'] else 'FAIL'} |")
    return "\n".join(head + ["", "## Every detector, every agent", "", table or markdown(result), ""])


def _input_problem(scenario: str, agents: list[str], outputs: dict[str, Path | None]) -> str | None:
    """What is wrong with the command line before any battle is played (one line), or None: no agents, an
    unknown agent, a scenario that does not load, an output path that is a folder or whose folder cannot be
    made (:func:`training.cli_common.check_output`)."""
    from battleline.agents.registry import UnknownAgentError, make_agent
    from battleline.env.rules.config import ConfigError, load_scenario
    from battleline.training.cli_common import UserError, check_output

    if not agents:
        return "--agents: no agent named"
    try:
        for name in agents:
            make_agent(name)
    except UnknownAgentError as exc:
        return f"--agents: {exc}"
    try:
        load_scenario(scenario)
    except ConfigError as exc:
        return f"--scenario: {exc}"
    try:
        for flag, path in outputs.items():
            if path is not None:
                check_output(flag, path)
    except UserError as exc:
        return str(exc)
    return None


def main(argv: list[str] | None = None) -> int:
    """Command line: play, print the markdown table, write the JSON. Exit code 1 if a check fails."""
    from battleline.training.cli_common import OneLineArgumentParser

    ap = OneLineArgumentParser(prog="python -m battleline.tactics.validate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--battles", type=int, default=20, help="battles per agent against line_advance")
    ap.add_argument("--scenario", default="pitched_battle")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first battle; battle i uses seed + i")
    ap.add_argument("--agents", default=None, help="comma-separated agents (default: every scripted agent)")
    ap.add_argument("--json", type=Path, default=Path("out/tactics_validation.json"), help="where to write the JSON")
    ap.add_argument("--markdown", type=Path, default=None, help="also write the markdown table (a report) here")
    args = ap.parse_args(argv)
    if args.battles < 1:
        ap.error("--battles must be at least 1")
    if args.seed < 0:
        ap.error(f"--seed must be at least 0, got {args.seed}")
    agents = [a.strip() for a in args.agents.split(",") if a.strip()] if args.agents is not None else scripted_agents()
    problem = _input_problem(args.scenario, agents, {"--json": args.json, "--markdown": args.markdown})
    if problem:
        ap.error(problem)
    t0 = time.time()
    with LoggedProgress(console=make_console(stderr=True), transient=True, unit="battles") as bar:
        task = bar.add_task("validation", total=len(agents) * args.battles)
        result = run(agents, args.battles, args.scenario, args.seed,
                     progress=lambda msg: bar.update(task, advance=1, description=f"validation ({msg})"))
    result["seconds"] = round(time.time() - t0, 1)
    table = markdown(result)
    print(table)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.markdown is not None:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(report(result, table), encoding="utf-8")
    print(f"\njson: {args.json} ({result['seconds']} s)")
    if args.markdown is not None:
        print(f"markdown: {args.markdown}")
    return 0 if all(c["ok"] for c in result["checks"]) and not result["failed"] else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
