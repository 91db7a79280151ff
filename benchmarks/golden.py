"""Golden battle logs: ``python -m benchmarks.golden [--write] [--only NAME ...] [--dump DIR] [--extra N --fixture PATH]``.

An equivalence harness for engine optimisations. It plays a fixed set of
battles (scenario, blue agent, red agent, seed) and records for each one
SHA-256 digests of

* ``log``: the whole event log, the actions taken and the final battle state;
* ``legal``: the list of legal actions, in order, at every decision.

A change that only makes the engine faster must leave both digests of every
case unchanged. The digests of the committed code live in
:data:`FIXTURE` (``tests/fixtures/golden_logs.json``); ``--write`` regenerates
them; without it the run compares against them, exiting 1 on any
difference. ``--dump DIR`` also writes each battle's JSON
(:meth:`env.rules.battle.Battle.to_json` plus the legal lists) so two runs
can be diffed.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from benchmarks import check_at_least, flag_errors

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "golden_logs.json"
"""Where the golden digests are stored."""


@dataclass(frozen=True)
class Case:
    """One golden battle: ``scenario`` played by agents ``blue`` and ``red`` with dice seed ``seed``."""

    scenario: str
    blue: str
    red: str
    seed: int

    @property
    def name(self) -> str:
        """A unique key, e.g. ``pitched_battle/line_advance-random/3``."""
        return f"{self.scenario}/{self.blue}-{self.red}/{self.seed}"


CASES: list[Case] = [
    *(Case("pitched_battle", "line_advance", "random", s) for s in range(6)),
    *(Case("pitched_battle", "random", "random", s) for s in range(6)),
    Case("pitched_battle", "line_advance", "line_advance", 0),
    Case("pitched_battle", "pincers", "refused_flank", 1),
    Case("pitched_battle", "flank_teeth", "control_zones", 2),
    Case("pitched_battle", "bait_and_flank", "shooting_lines", 3),
    Case("pitched_battle", "protected_bubble", "weakened_flank", 4),
    *(Case("skirmish_line", "random", "random", s) for s in range(3)),
    *(Case("skirmish_line", "line_advance", "line_advance", s) for s in range(2)),
    *(Case("gate_assault", "siege_defender", "siege_attacker", s) for s in range(3)),
    Case("gate_assault", "random", "random", 0),
    *(Case("siege", "siege_defender", "siege_attacker", s) for s in range(2)),
    Case("siege", "random", "random", 0),
]
"""The recorded battles."""


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


def play_case(case: Case, dump: Path | None = None) -> dict[str, Any]:
    """Play ``case`` as :func:`training.play.play_battle` does; return its digests.

    Returns a dict: ``log`` and ``legal`` (64 hex digits each), ``decisions``
    (actions applied), ``events`` (events logged) and ``winner``.

    Raises:
        training.play.AgentError: an agent returned an illegal action.
    """
    from battleline.env.rules.battle import Battle
    from battleline.training.play import AgentError, agent_seed, make_agent

    agents = [make_agent(name, seed=agent_seed(case.seed, side)) for side, name in enumerate((case.blue, case.red))]
    battle = Battle.from_scenario(case.scenario, seed=case.seed)
    for side, agent in enumerate(agents):
        agent.reset(battle, side)
    legal_hash = hashlib.sha256()
    legal_lists: list[list[str]] = []
    while not battle.is_over:
        legal = battle.legal_actions()
        listed = [str(a) for a in legal]
        legal_hash.update(json.dumps(listed).encode())
        if dump is not None:
            legal_lists.append(listed)
        action = agents[battle.pending.player].act(battle)
        if action not in legal:
            raise AgentError(f"{case.name}: illegal action '{action}' at decision {len(battle.actions)}")
        battle.apply(action)
    full = json.loads(battle.to_json())
    if dump is not None:
        dump.mkdir(parents=True, exist_ok=True)
        full["legal"] = legal_lists
        (dump / (case.name.replace("/", "__") + ".json")).write_text(json.dumps(full, indent=1, sort_keys=True))
        del full["legal"]
    return {
        "log": _digest({k: full[k] for k in ("actions", "events", "state", "rng")}),
        "legal": legal_hash.hexdigest(),
        "decisions": len(battle.actions),
        "events": len(battle.events),
        "winner": battle.result["winner"],
    }


def extra_cases(n: int) -> list[Case]:
    """``n`` more seeds (from 100) of random, line_advance and scripted battles on pitched_battle and skirmish_line.

    The scripted battles put every field agent on blue in turn (seed ``s``: :data:`FIELD_AGENTS` ``[s % k]``)
    against a red that cycles at another pace, so the agents' own choices are compared too. Not in the
    committed fixture: for comparing two versions of the engine (and agents) with ``--extra N --fixture PATH``
    (``--write`` with the first).
    """
    seeds = range(100, 100 + n)
    k = len(FIELD_AGENTS)
    return [
        *(Case("pitched_battle", "random", "random", s) for s in seeds),
        *(Case("pitched_battle", "line_advance", "random", s) for s in seeds),
        *(Case("skirmish_line", "random", "random", s) for s in seeds),
        *(Case("pitched_battle", FIELD_AGENTS[s % k], FIELD_AGENTS[(s // k + 5 * s) % k], s) for s in seeds),
    ]


FIELD_AGENTS = ("line_advance", "pincers", "refused_flank", "flank_teeth", "weakened_flank", "abandoned_flank",
                "shooting_lines", "sacrifice_for_deployment", "protected_bubble", "bait_and_flank", "control_zones",
                "open_loop")
"""The scripted field agents the extra cases pit against each other."""


def main(
    write: Annotated[bool, typer.Option("--write", help="Regenerate the fixture from the current code.")] = False,
    only: Annotated[list[str] | None, typer.Option(help="Only the cases whose name contains this (repeatable).")] = None,
    dump: Annotated[Path | None, typer.Option(help="Also write each battle's JSON and legal lists here.")] = None,
    extra: Annotated[int, typer.Option(help="Also play this many more seeds of each kind (see extra_cases).")] = 0,
    fixture: Annotated[Path, typer.Option(help="The digests file to compare with or write.")] = FIXTURE,
) -> None:
    """Play the golden cases; compare with (or, with --write, store) the fixture's digests."""
    from battleline.training.cli_common import UserError

    with flag_errors():
        check_at_least(0, extra=extra)
        cases = [c for c in CASES + extra_cases(extra) if not only or any(o in c.name for o in only)]
        if not cases:  # a check of nothing would pass, and --write would store nothing
            raise UserError(f"--only: no golden case name contains {' or '.join(repr(o) for o in only or [])}")
    stored: dict[str, Any] = json.loads(fixture.read_text()) if fixture.exists() else {}
    results: dict[str, Any] = {}
    bad = 0
    total = 0.0
    for case in cases:
        t0 = time.perf_counter()
        res = play_case(case, dump)
        dt = time.perf_counter() - t0
        total += dt
        results[case.name] = res
        want = stored.get(case.name)
        if write:
            status = "written"
        elif want is None:
            status, bad = "NO GOLDEN", bad + 1
        elif (want["log"], want["legal"]) == (res["log"], res["legal"]):
            status = "same"
        else:
            status, bad = "DIFFERENT", bad + 1
        print(f"{case.name:55s} {res['decisions']:5d} decisions {dt:6.2f} s  {status}", flush=True)
    print(f"total {total:.1f} s")
    if write:
        fixture.parent.mkdir(parents=True, exist_ok=True)
        fixture.write_text(json.dumps({**stored, **results}, indent=1, sort_keys=True) + "\n")
        print(f"wrote {fixture}")
    elif bad:
        print(f"{bad} case(s) differ from {fixture}")
        sys.exit(1)


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
