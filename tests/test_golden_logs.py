"""Golden logs: a few short battles must replay exactly as recorded (benchmarks/golden.py).

The digests in tests/fixtures/golden_logs.json cover the event log, the
actions, the final state and the legal-action list at every decision. An
optimisation must leave them unchanged; a deliberate rules change that alters
these battles regenerates them with ``python -m benchmarks.golden --write``.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.golden import CASES, FIXTURE, play_case

SHORT = [
    "pitched_battle/line_advance-random/4",
    "skirmish_line/random-random/0",
    "gate_assault/random-random/0",
    "siege/siege_defender-siege_attacker/1",
]


@pytest.mark.parametrize("name", SHORT)
def test_battle_replays_its_golden_log(name: str) -> None:
    case = next(c for c in CASES if c.name == name)
    want = json.loads(FIXTURE.read_text())[name]
    got = play_case(case)
    assert (got["decisions"], got["events"], got["winner"]) == (want["decisions"], want["events"], want["winner"])
    assert got["legal"] == want["legal"], f"{name}: legal actions differ (python -m benchmarks.golden --only {name})"
    assert got["log"] == want["log"], f"{name}: event log or final state differs"
