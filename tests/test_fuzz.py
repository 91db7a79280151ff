"""benchmarks/fuzz.py: the plan of battles, one battle's row (violations, errors, hangs), the report and the CLI,
and a small fuzz of six battles (the one ``make test`` runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from benchmarks import fuzz
from benchmarks.fuzz import Case, plan_cases, run_case, summarise

SMALL = ["pitched_battle", "siege", "gate_assault", "skirmish_line"]


def test_the_plan_goes_round_scenarios_modes_and_seeds() -> None:
    """Scenario index % 4, mode (index // 4) % 3, seed + index; siege agents in their roles; lists only where taken."""
    cases = plan_cases(12, seed=5, scenarios=SMALL)
    assert [c.scenario for c in cases[:5]] == [*SMALL, "pitched_battle"]
    assert [c.seed for c in cases] == list(range(5, 17))
    assert all((c.blue, c.red) == ("random", "random") for c in cases[:4])
    assert (cases[5].blue, cases[5].red) == ("siege_defender", "siege_attacker")  # blue holds the castle
    assert all("random" not in (c.blue, c.red) for c in cases[4:8])
    assert all((c.blue == "random") != (c.red == "random") for c in cases[8:12])
    assert all((c.blue_army is None) == (c.scenario != "pitched_battle") for c in cases)
    assert plan_cases(12, seed=5, scenarios=SMALL) == cases, "the plan is the seed's"


def test_every_shipped_scenario_is_in_a_full_plan() -> None:
    names = fuzz.shipped_scenarios()
    assert {c.scenario for c in plan_cases(len(names), 0)} == set(names) and {"siege", "pitched_battle"} < set(names)
    top = fuzz.shipped_scenarios(coverage=False)
    assert names[:len(top)] == top and names[len(top):] and all(n.startswith(("coverage/", "coverage_t9a/")) for n in names[len(top):])
    assert "pitched_battle_t9a" in top and "coverage_t9a/coverage_t9a_fire" in names


def test_a_battle_over_its_time_or_decisions_is_a_hang() -> None:
    case = Case(7, "gate_assault", "random", "random", 44)
    row = run_case(case, seconds=60.0, max_decisions=3)
    assert row["hang"] == {"decision": 3, "why": "no end within 3 decisions"} and row["index"] == 7
    row = run_case(case, seconds=0.001)
    assert row["hang"]["why"] == "over the time limit of 0.001 s" and row["winner"] is None


def test_an_exception_is_an_error_with_its_reproducer() -> None:
    row = run_case(Case(0, "gate_assault", "random", "nobody", 1))
    assert row["error"]["error"].startswith("UnknownAgentError: unknown agent 'nobody'")
    assert row["error"]["decision"] == 0 and row["error"]["traceback"]
    (err,) = summarise([row])["errors"]
    assert err["seed"] == 1 and err["red"] == "nobody"
    assert err["replay"] == ("python -m benchmarks.fuzz --replay-case '{\"scenario\": \"gate_assault\", \"blue\": "
                             "\"random\", \"red\": \"nobody\", \"seed\": 1, \"blue_army\": null, \"red_army\": null}'")


def test_violations_are_summarised_by_kind_with_reproducers() -> None:
    """Rows as play_checked writes them: a kind counts battles and checks, and keeps the first cases."""
    line = "detached CORE.CC.CONTACT_KEEP [#1 A (red), #0 B (blue)]: engaged (front, round 1) but 1.000\" apart"
    rows = [{"index": i, "case": Case(i, "skirmish_line", "random", "random", i).reproducer(), "decisions": 10,
             "seconds": 0.1, "winner": "red", "error": None, "hang": None,
             "violations": {"detached": {"kind": "detached", "decision": 4, "line": line, "checks": 2}} if i else {}}
            for i in range(3)]
    s = summarise(rows)
    assert (s["battles"], s["finished"], s["decisions"], s["scenarios"]) == (3, 3, 30, {"skirmish_line": 3})
    assert s["violations"]["detached"]["battles"] == 2 and s["violations"]["detached"]["checks"] == 4
    assert [c["seed"] for c in s["violations"]["detached"]["cases"]] == [1, 2]
    assert s["violations"]["detached"]["cases"][0]["decision"] == 4


def test_the_cli_writes_the_report_and_exits_1_on_a_hang(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fuzz.json"
    with pytest.raises(typer.Exit) as exc:
        fuzz.main(battles=1, scenario=["gate_assault"], max_decisions=2, out=out)
    assert exc.value.exit_code == 1
    report = json.loads(out.read_text())
    s = report["summary"]
    assert s["command"].startswith("python -m benchmarks.fuzz") and s["commit"]
    assert (s["battles"], s["decisions"], s["errors"], s["violations"]) == (1, 2, [], {})
    assert s["hangs"][0]["why"] == "no end within 2 decisions" and s["hangs"][0]["seed"] == 0
    assert report["battles"][0]["hang"] is True
    assert "1 battles, 2 decisions" in capsys.readouterr().out


def test_replay_case_prints_and_saves_the_battle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from battleline.env.rules.battle import Battle

    out = tmp_path / "b.json"
    case = json.dumps({"scenario": "gate_assault", "blue": "siege_defender", "red": "random", "seed": 44})
    with pytest.raises(typer.Exit) as exc:
        fuzz.main(replay=case, battle_out=out)
    assert exc.value.exit_code == 0
    assert capsys.readouterr().out.endswith("winner blue\n")
    assert Battle.from_json(out.read_text()).is_over
    with pytest.raises(SystemExit) as bad:
        fuzz.main(replay='{"scenario": "siege"}')
    assert bad.value.code == 2
    assert capsys.readouterr().err == ("error: --replay-case: expected an object with scenario, blue, red and seed "
                                       "(missing 'blue')\n")


def test_a_small_fuzz_is_clean() -> None:
    """Six battles over four scenarios, random, scripted and siege agents: no violation, error or hang."""
    result = fuzz.fuzz(6, seed=0, scenarios=SMALL, progress=False)
    assert result["battles"] == 6 and result["decisions"] > 300
    assert (result["violations"], result["errors"], result["hangs"]) == ({}, [], [])


def test_a_small_t9a_fuzz_is_clean() -> None:
    """Six battles under every T9A module (pitched_battle_t9a with army lists, two T9A coverage set-ups), random
    and scripted agents: no violation, error or hang."""
    names = ["pitched_battle_t9a", "coverage_t9a/coverage_t9a_fire", "coverage_t9a/coverage_t9a_elves"]
    cases = plan_cases(6, seed=0, scenarios=names)
    assert [c.blue_army is not None for c in cases] == [True, False, False] * 2
    result = fuzz.fuzz(6, seed=0, scenarios=names, progress=False, cases=cases)
    assert result["battles"] == 6 and result["decisions"] > 300
    assert result["scenarios"] == dict.fromkeys(sorted(names), 2)
    assert (result["violations"], result["errors"], result["hangs"]) == ({}, [], [])
