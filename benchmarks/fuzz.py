"""Fuzz the engine: many battles, the table's invariants checked after every decision.

``python -m benchmarks.fuzz --battles 10000 --workers 2 --seed 0 --out benchmarks/results/fuzz.json``

Battles (:func:`plan_cases`) go round every shipped scenario (``configs/scenarios``, the T9A variant's
``pitched_battle_t9a`` among them, and its ``coverage/`` and ``coverage_t9a/`` folders, which ``--no-coverage``
leaves out; ``--scenario pitched_battle_t9a`` fuzzes one), each with its own battle seed (``--seed`` + its index).
The agents cycle through three modes: ``random`` against ``random``; ``scripted`` against ``scripted``
(line_advance, pincers, refused_flank and the tactical agents in the field; in a siege
``siege_attacker`` attacking against ``siege_defender`` defending); and ``mixed``, one scripted agent
against ``random`` in a random seat. A scenario that takes army lists (``pitched_battle``) gets a
random list for each side from ``configs/armies``.

After the battle is set up and after every decision :class:`env.rules.invariants.InvariantTracker`
checks the state (:func:`env.rules.invariants.check_invariants`: overlaps, the table edge,
impassable terrain and the castle, base contact of engaged units, models and wounds, the pending
decision, the castle's damage). A battle that runs past ``--time-limit`` seconds (or
``--max-decisions`` decisions) is a hang; an exception is an error. The JSON report gives the
command, the commit, the battles, decisions and seconds, the violations by kind (how many battles
and checks, and reproducers: the case, the decision index and the violation's line), the errors
(with the traceback's tail) and the hangs; the command exits 1 if there is any.

Reproduce a case (every reproducer in the report carries this command)::

    python -m benchmarks.fuzz --replay-case '{"scenario": "pitched_battle", "blue": "random", "red": "pincers",
        "seed": 17, "blue_army": "men_marcher_host", "red_army": "orcs_tusk_horde"}' --battle-out /tmp/b.json

which replays the battle with the checks, prints every violation with its decision index, and with
``--battle-out`` saves the battle as it stood at the first one (:meth:`Battle.to_json`, for
``battleline replay``).
"""

from __future__ import annotations

import json
import random
import shlex
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from benchmarks import check_at_least, flag_errors

FIELD_AGENTS = ("line_advance", "pincers", "refused_flank")
"""The scripted field agents of ``agents/scripted.py``; the tactical agents are added by :func:`scripted_agents`."""
SIEGE_AGENTS = ("siege_attacker", "siege_defender")
"""The siege agents, each in its own role (SIEGE.SCEN.CASTLE: the castle's side defends)."""
MODES = ("random", "scripted", "mixed")
"""How each battle's agents are chosen, in turn (see the module docstring)."""
MAX_DECISIONS = 20000
"""Decisions after which a battle that has not ended is a hang."""
EXAMPLES = 10
"""Reproducers kept per violation kind in the report (the first battles, by index)."""
TRACEBACK_LINES = 12
"""Lines of an error's traceback kept in the report (its tail)."""


@dataclass(frozen=True, slots=True)
class Case:
    """One fuzzed battle: its place in the run and everything that reproduces it.

    Attributes:
        index: its position in the run (the report's order).
        scenario: a scenario id (``coverage/…`` for the coverage folder), or a scenario dict
            (:meth:`Battle.from_scenario`; :func:`summarise` needs ids).
        blue, red: agent names (:data:`agents.registry.AGENT_NAMES`), seeded by
            :func:`training.play.agent_seed`.
        seed: the battle's dice seed.
        blue_army, red_army: army-list ids, or None for the scenario's own units.
    """

    index: int
    scenario: str | dict[str, Any]
    blue: str
    red: str
    seed: int
    blue_army: str | None = None
    red_army: str | None = None

    def reproducer(self) -> dict[str, Any]:
        """The case without its index: what ``--replay-case`` takes."""
        out = asdict(self)
        del out["index"]
        return out

    def replay_command(self) -> str:
        """The shell command that replays this case with the checks."""
        return "python -m benchmarks.fuzz --replay-case " + shlex.quote(json.dumps(self.reproducer()))


# --------------------------------------------------------------------- the plan
COVERAGE_FOLDERS = ("coverage", "coverage_t9a")
"""The folders of ``configs/scenarios`` holding coverage set-ups (core rules; the T9A variant's rules)."""


def shipped_scenarios(coverage: bool = True) -> list[str]:
    """The scenario ids in ``configs/scenarios`` (sorted), and with ``coverage`` those of its coverage folders
    (:data:`COVERAGE_FOLDERS`) as ``coverage/<id>`` and ``coverage_t9a/<id>``."""
    from battleline.env.rules.config import CONFIG_DIR, list_scenarios

    ids = list_scenarios()
    if coverage:
        for folder in COVERAGE_FOLDERS:
            ids += [f"{folder}/{p.stem}" for p in sorted((CONFIG_DIR / "scenarios" / folder).glob("*.yaml"))]
    return ids


def scripted_agents() -> list[str]:
    """The scripted field agents: :data:`FIELD_AGENTS` and the tactical agents (``agents/tactical.py``)."""
    from battleline.agents.tactical import TACTICAL_AGENTS

    return [*FIELD_AGENTS, *TACTICAL_AGENTS]


def _scenario_facts(scenario: str) -> tuple[int | None, bool]:
    """(the castle's defending side, or None outside a siege; whether both sides take army lists)."""
    from battleline.env.rules.config import load_scenario

    cfg = load_scenario(scenario)
    defender = None
    if cfg.siege:
        defender = 0 if cfg.castle is None or cfg.castle.defender == "blue" else 1
    lists = all(cfg.side(s).placements is None for s in ("blue", "red"))
    return defender, lists


def _agents(rng: random.Random, mode: str, defender: int | None, pool: list[str]) -> tuple[str, str]:
    """(blue, red) for ``mode``: in a siege the siege agents in their roles, in the field the scripted pool."""
    if defender is not None:
        roles = ["siege_attacker", "siege_attacker"]
        roles[defender] = "siege_defender"
        scripted = (roles[0], roles[1])
    else:
        scripted = (rng.choice(pool), rng.choice(pool))
    if mode == "random":
        return "random", "random"
    if mode == "scripted":
        return scripted
    side = rng.randrange(2)
    return (scripted[0], "random") if side == 0 else ("random", scripted[1])


def plan_cases(battles: int, seed: int = 0, scenarios: list[str] | None = None) -> list[Case]:
    """The run's battles: scenario ``index % len(scenarios)``, mode ``(index // len(scenarios)) % 3`` of
    :data:`MODES`, battle seed ``seed + index``; agents and army lists drawn from ``random.Random(seed)``.

    Raises:
        ConfigError: a scenario is invalid.
    """
    from battleline.env.rules.config import list_armies

    names = scenarios if scenarios is not None else shipped_scenarios()
    facts = {s: _scenario_facts(s) for s in names}
    pool, armies = scripted_agents(), list_armies()
    rng = random.Random(seed)
    out = []
    for i in range(battles):
        scenario = names[i % len(names)]
        defender, lists = facts[scenario]
        blue, red = _agents(rng, MODES[(i // len(names)) % len(MODES)], defender, pool)
        blue_army, red_army = (rng.choice(armies), rng.choice(armies)) if lists else (None, None)
        out.append(Case(i, scenario, blue, red, seed + i, blue_army, red_army))
    return out


# --------------------------------------------------------------------- one battle
class TimeUp(Exception):
    """The battle ran past its time limit."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`TimeUp` in this (main) thread once ``seconds`` of wall time have passed (SIGALRM); 0: none."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def _alarm(signum: int, frame: Any) -> None:
        raise TimeUp

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def play_checked(case: Case, seconds: float = 60.0, max_decisions: int = MAX_DECISIONS,
                 stop_at_first: bool = False) -> tuple[dict[str, Any], Any]:
    """Play ``case`` with :class:`env.rules.invariants.InvariantTracker` checking after set-up (decision 0) and
    after every decision.

    Returns:
        (row, battle): the row has ``index``, ``case`` (the reproducer), ``decisions``, ``seconds``, ``winner``
        (None when unfinished), ``violations`` (per kind, the first: ``kind``, ``decision``, ``line``, and
        ``checks``, the decisions whose check found it), ``error`` (None, or ``decision``, ``error``, ``traceback``:
        its last :data:`TRACEBACK_LINES` lines) and ``hang`` (None, or ``decision`` and ``why``); the battle as
        it stands at the end (None if it could not be set up).
    """
    from battleline.agents.registry import make_agent
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.invariants import InvariantTracker
    from battleline.training.play import agent_seed

    row: dict[str, Any] = {"index": case.index, "case": case.reproducer(), "decisions": 0, "seconds": 0.0,
                           "winner": None, "violations": {}, "error": None, "hang": None}
    found: dict[str, dict[str, Any]] = row["violations"]
    battle = None
    t0 = time.perf_counter()

    def check() -> bool:
        kinds = set()
        for v in tracker.check(battle):
            found.setdefault(v.kind, {"kind": v.kind, "decision": row["decisions"], "line": v.line(), "checks": 0})
            kinds.add(v.kind)
        for kind in kinds:
            found[kind]["checks"] += 1
        return bool(found) and stop_at_first

    tracker = InvariantTracker()
    try:
        with time_limit(seconds):
            battle = Battle.from_scenario(case.scenario, seed=case.seed, blue_army=case.blue_army,
                                          red_army=case.red_army)
            agents = [make_agent(name, seed=agent_seed(case.seed, side)) for side, name in enumerate((case.blue,
                                                                                                      case.red))]
            for side, agent in enumerate(agents):
                agent.reset(battle, side)
            stop = check()
            while not battle.is_over and not stop:
                if row["decisions"] >= max_decisions:
                    row["hang"] = {"decision": row["decisions"], "why": f"no end within {max_decisions} decisions"}
                    break
                battle.apply(agents[battle.pending.player].act(battle))
                row["decisions"] += 1
                stop = check()
    except TimeUp:
        row["hang"] = {"decision": row["decisions"], "why": f"over the time limit of {seconds:g} s"}
    except Exception as exc:  # noqa: BLE001 - the report records any failure with its reproducer
        tail = traceback.format_exc().rstrip().splitlines()[-TRACEBACK_LINES:]
        row["error"] = {"decision": row["decisions"], "error": f"{type(exc).__name__}: {exc}", "traceback": tail}
    row["seconds"] = round(time.perf_counter() - t0, 3)
    if battle is not None and battle.is_over:
        row["winner"] = battle.result["winner"]
    return row, battle


def run_case(case: Case, seconds: float = 60.0, max_decisions: int = MAX_DECISIONS) -> dict[str, Any]:
    """:func:`play_checked`'s row alone (a module-level function for the process pool)."""
    return play_checked(case, seconds, max_decisions)[0]


# --------------------------------------------------------------------- the report
def _reproducer(row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    case = Case(index=row["index"], **row["case"])
    return {**case.reproducer(), **extra, "replay": case.replay_command()}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over :func:`run_case` rows: ``battles``, ``finished``, ``decisions``, ``scenarios`` (battles per
    scenario), ``agents`` (battles per agent, either side), ``violations`` ({kind: {``battles``, ``checks``,
    ``cases``: up to :data:`EXAMPLES` reproducers with ``decision`` and ``line``}}), ``errors`` and ``hangs``
    (each with its reproducer)."""
    violations: dict[str, dict[str, Any]] = {}
    scenarios: dict[str, int] = {}
    agents: dict[str, int] = {}
    for r in rows:
        scenarios[r["case"]["scenario"]] = scenarios.get(r["case"]["scenario"], 0) + 1
        for name in {r["case"]["blue"], r["case"]["red"]}:
            agents[name] = agents.get(name, 0) + 1
        for kind, v in r["violations"].items():
            k = violations.setdefault(kind, {"battles": 0, "checks": 0, "cases": []})
            k["battles"] += 1
            k["checks"] += v["checks"]
            if len(k["cases"]) < EXAMPLES:
                k["cases"].append(_reproducer(r, decision=v["decision"], line=v["line"]))
    return {
        "battles": len(rows),
        "finished": sum(r["winner"] is not None for r in rows),
        "decisions": sum(r["decisions"] for r in rows),
        "scenarios": dict(sorted(scenarios.items())),
        "agents": dict(sorted(agents.items())),
        "violations": dict(sorted(violations.items())),
        "errors": [_reproducer(r, **r["error"]) for r in rows if r["error"]],
        "hangs": [_reproducer(r, **r["hang"], seconds=r["seconds"]) for r in rows if r["hang"]],
    }


def fuzz(battles: int, workers: int = 1, seed: int = 0, seconds: float = 60.0,
         max_decisions: int = MAX_DECISIONS, scenarios: list[str] | None = None, progress: bool = True,
         cases: list[Case] | None = None) -> dict[str, Any]:
    """Play the planned battles (:func:`plan_cases`, or ``cases``) on ``workers`` processes and summarise them.

    Returns:
        :func:`summarise`'s dict plus ``seconds`` (wall time of the run) and ``rows`` (one per battle, by index).
    """
    from battleline.training.backends import run_games

    todo = cases if cases is not None else plan_cases(battles, seed, scenarios)
    t0 = time.perf_counter()
    rows = run_games(run_case, todo, (seconds, max_decisions), workers=workers, progress=progress,
                     description="fuzz")
    return {**summarise(rows), "seconds": round(time.perf_counter() - t0, 1), "rows": rows}


def commit() -> str:
    """The checkout's commit (short hash, "+dirty" with uncommitted changes), or "unknown"."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                              check=False).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                               text=True, timeout=5, check=False).stdout.strip()
    except OSError:
        return "unknown"
    return (head or "unknown") + ("+dirty" if head and dirty else "")


def write_report(out: Path, result: dict[str, Any], command: str) -> None:
    """The JSON report: the summary first (command, commit, totals, violations, errors, hangs), then one line a
    battle (index, case, decisions, seconds, winner and the kinds it broke)."""
    from battleline.training.cli_common import writing

    summary = {"command": command, "commit": commit(), **{k: v for k, v in result.items() if k != "rows"}}
    lines = ",\n".join(json.dumps({"index": r["index"], **r["case"], "decisions": r["decisions"],
                                   "seconds": r["seconds"], "winner": r["winner"],
                                   "broke": sorted(r["violations"]), "error": bool(r["error"]),
                                   "hang": bool(r["hang"])}, separators=(",", ":")) for r in result["rows"])
    with writing("--out", out):
        out.write_text(f'{{"summary": {json.dumps(summary, indent=1)},\n"battles": [\n{lines}\n]}}\n',
                       encoding="utf-8")


def replay_case(text: str, seconds: float, max_decisions: int, battle_out: Path | None) -> int:
    """``--replay-case``: replay one case (its JSON, as the report gives it) with the checks; print every violation
    with its decision index, the error or the hang; with ``battle_out`` save the battle at the first violation.

    Returns:
        1 if anything was found, else 0.

    Raises:
        UserError: the text is not a case's JSON (one line naming the field).
    """
    from battleline.training.cli_common import UserError, writing

    try:
        data = json.loads(text)
        case = Case(index=0, **{k: data[k] for k in ("scenario", "blue", "red", "seed")},
                    blue_army=data.get("blue_army"), red_army=data.get("red_army"))
    except json.JSONDecodeError as exc:
        raise UserError(f"--replay-case: not JSON ({exc.msg} at character {exc.pos})") from None
    except (KeyError, TypeError) as exc:
        raise UserError(f"--replay-case: expected an object with scenario, blue, red and seed (missing {exc})") from None
    row, battle = play_checked(case, seconds, max_decisions, stop_at_first=battle_out is not None)
    for v in row["violations"].values():
        typer.echo(f"decision {v['decision']}: {v['line']}")
    if row["error"]:
        typer.echo(f"decision {row['error']['decision']}: error {row['error']['error']}\n"
                   + "\n".join(row["error"]["traceback"]))
    if row["hang"]:
        typer.echo(f"decision {row['hang']['decision']}: hang, {row['hang']['why']}")
    typer.echo(f"{row['decisions']} decisions, {row['seconds']} s, winner {row['winner']}")
    if battle_out is not None and battle is not None:
        with writing("--battle-out", battle_out):
            battle_out.write_text(battle.to_json(), encoding="utf-8")
    return int(bool(row["violations"] or row["error"] or row["hang"]))


def main(
    battles: Annotated[int, typer.Option(help="battles to play")] = 200,
    workers: Annotated[int, typer.Option(help="worker processes (1: this process)")] = 1,
    seed: Annotated[int, typer.Option(help="the first battle's seed (battle i: seed + i); also draws the agents")] = 0,
    out: Annotated[Path, typer.Option(help="JSON report")] = Path("benchmarks/results/fuzz.json"),
    time_limit_s: Annotated[float, typer.Option("--time-limit", help="seconds a battle may take before it is a "
                                                "hang (0: no limit)")] = 60.0,
    max_decisions: Annotated[int, typer.Option(help="decisions a battle may take before it is a hang")] = MAX_DECISIONS,
    scenario: Annotated[list[str] | None, typer.Option(help="only these scenarios (repeat the flag); default: "
                                                       "every shipped one")] = None,
    coverage: Annotated[bool, typer.Option("--coverage/--no-coverage", help="with the set-ups of "
                                           "configs/scenarios/coverage and coverage_t9a")] = True,
    replay: Annotated[str | None, typer.Option("--replay-case", help="replay one case from the report (its JSON) "
                                               "and print what it breaks")] = None,
    battle_out: Annotated[Path | None, typer.Option(help="with --replay-case: save the battle as it stood at the "
                                                    "first violation (Battle.to_json)")] = None,
) -> None:
    """Play the battles with the invariants checked after every decision; write the report; exit 1 on any
    violation, error or hang."""
    from battleline.env.rules.config import load_scenario
    from battleline.training.backends import worker_count
    from battleline.training.cli_common import check_output

    with flag_errors():
        check_at_least(1, battles=battles, workers=workers, max_decisions=max_decisions)
        if replay is not None:
            if battle_out is not None:
                check_output("--battle-out", battle_out)
            raise typer.Exit(replay_case(replay, time_limit_s, max_decisions, battle_out))
        names = list(scenario) if scenario else shipped_scenarios(coverage)
        for name in names:
            load_scenario(name)
        check_output("--out", out)
    command = "python -m benchmarks.fuzz " + shlex.join(sys.argv[1:])
    n, _ = worker_count(workers, battles)
    result = fuzz(battles, n, seed, time_limit_s, max_decisions, names)
    write_report(out, result, command)
    kinds = {k: v["battles"] for k, v in result["violations"].items()}
    typer.echo(f"{result['battles']} battles, {result['decisions']} decisions, {result['seconds']} s: "
               f"violations {kinds or 0}, errors {len(result['errors'])}, hangs {len(result['hangs'])} -> {out}")
    if kinds or result["errors"] or result["hangs"]:
        raise typer.Exit(1)


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
