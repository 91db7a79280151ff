"""Rule IDs: the shipped list matches RULESET.md, unknown IDs fail loudly, the coverage report works."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from battleline.env.rules.events import make_event
from battleline.env.rules.ruleset import UnknownRuleError, core_rule_ids, rule_ids
from battleline.training import coverage as cov


def _find_ruleset() -> Path:
    """shared/rules/RULESET.md in the nearest folder above this checkout that has one (a second checkout beside
    the first finds the same file); the path beside the checkout when there is none."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        candidate = folder / "shared" / "rules" / "RULESET.md"
        if candidate.exists():
            return candidate
    return here.parents[2] / "shared" / "rules" / "RULESET.md"


RULESET = _find_ruleset()


@pytest.mark.skipif(not RULESET.exists(), reason="shared/rules/RULESET.md is not above the checkout")
def test_rule_id_list_matches_ruleset() -> None:
    """env/rules/rule_ids.txt lists exactly the bold IDs of RULESET.md (CORE.CC.CHAMPION_ATTACK among them), both
    ways, and as many as RULESET.md §8's total."""
    text = RULESET.read_text(encoding="utf-8")
    ids = set(re.findall(r"\*\*((?:CORE|SIEGE|T9A|SKIRMISH|ACT|CFG)\.[A-Z0-9_.]+)\*\*", text))
    listed = set(rule_ids())
    assert sorted(ids - listed) == [], "in RULESET.md, missing from rule_ids.txt"
    assert sorted(listed - ids) == [], "in rule_ids.txt, not in RULESET.md"
    total = re.search(r"\| \*\*Total\*\*[^|]*\|[^|]*\| \*\*(\d+)\*\* \|", text)
    assert total is not None and len(listed) == int(total.group(1))
    assert "CORE.CC.CHAMPION_ATTACK" in listed


def test_unknown_rule_id_fails_loudly() -> None:
    with pytest.raises(UnknownRuleError, match="CORE.CC.NOT_A_RULE"):
        make_event("CORE.CC.NOT_A_RULE", 1, "combat")
    assert make_event("CORE.CC.BREAK_TEST", 1, "combat")["rule"] == "CORE.CC.BREAK_TEST"


def test_tests_by_rule_finds_ids_and_prefix_patterns(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        'def test_a():\n    """CORE.CC.BREAK_TEST and CORE.VP.*"""\n\ndef helper():\n    "CORE.CC.FLEE"\n'
    )
    found = cov.tests_by_rule(tmp_path)
    assert found["CORE.CC.BREAK_TEST"] == ["test_x.py::test_a"]
    assert set(r for r in found if r.startswith("CORE.VP.")) == {r for r in core_rule_ids() if r.startswith("CORE.VP.")}
    assert "CORE.CC.FLEE" not in found  # not inside a test function


def test_coverage_rows_and_summary() -> None:
    counts = Counter({"CORE.CC.BREAK_TEST": 3, "CORE.CC.FLEE": 1})
    tests = {"CORE.CC.BREAK_TEST": ["t::a"], "CORE.GAME.END": ["t::b"]}
    rows = {r.rule: r for r in cov.coverage(counts, tests, {"CORE.GAME.END": "fires only at the end"})}
    assert rows["CORE.CC.BREAK_TEST"].ok and rows["CORE.GAME.END"].ok and not rows["CORE.CC.FLEE"].ok
    s = cov.summary(list(rows.values()))
    assert s["tested_and_fired"] == 1 and s["rules"] == len(core_rule_ids())


def test_exceptions_need_known_ids_and_reasons(tmp_path: Path) -> None:
    bad = tmp_path / "exc.yaml"
    bad.write_text("CORE.NOPE: because\n")
    with pytest.raises(ValueError, match="unknown rule ID"):
        cov.load_exceptions(bad)
    bad.write_text("CORE.CC.FLEE: ''\n")
    with pytest.raises(ValueError, match="reason"):
        cov.load_exceptions(bad)


def test_fuzz_corpus_fires_core_rules() -> None:
    counts = cov.fuzz_corpus_counts(battles=1)
    games = 2 * len(cov.CORPUS_SCENARIOS) + 2 * cov.COVERAGE_SEEDS * len(cov.coverage_scenarios())
    assert counts["CORE.GAME.END"] == len(cov.corpus_games(1)) == games
    assert all(rule in rule_ids() for rule in counts)


def test_every_core_rule_is_tested_and_firing_or_excused() -> None:
    """Every core rule ID is named by a test and fires in the corpus of ``battleline coverage --battles 6``,
    or is excused in configs/coverage_exceptions.yaml; no excused rule is in fact tested and firing."""
    counts = cov.fuzz_corpus_counts(battles=6)
    tests = cov.tests_by_rule()
    exceptions = cov.load_exceptions()
    rows = cov.coverage(counts, tests, exceptions)
    assert len(rows) == len(core_rule_ids())
    unexcused = [r.rule for r in rows if not (r.tests and r.fired) and r.exception is None]
    assert unexcused == [], f"not tested and firing, and not in {cov.EXCEPTIONS_FILE.name}: {unexcused}"
    stale = [r.rule for r in rows if r.tests and r.fired and r.exception is not None]
    assert stale == [], f"tested and firing, so remove from {cov.EXCEPTIONS_FILE.name}: {stale}"
    assert set(exceptions) <= set(core_rule_ids())
