"""Rule IDs: the shipped list matches RULESET.md, unknown IDs fail loudly, the coverage report works."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from battleline.env.rules.events import make_event
from battleline.env.rules.ruleset import UnknownRuleError, core_rule_ids, rule_ids
from battleline.training import coverage as cov

ROOT = Path(__file__).resolve().parents[1]


def _shared_ruleset() -> Path:
    """shared/rules/RULESET.md in the folder beside the checkout (or above it: a worktree of it)."""
    for folder in ROOT.parents:
        if (folder / "shared" / "rules" / "RULESET.md").is_file():
            return folder / "shared" / "rules" / "RULESET.md"
    return ROOT.parent / "shared" / "rules" / "RULESET.md"


RULESET = _shared_ruleset()
SHIPPED_RULESET = ROOT / "env" / "rules" / "RULESET.md"



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
    assert set(exceptions) <= set(core_rule_ids()) | set(cov.module_rule_ids("t9a"))


def test_every_t9a_rule_is_tested_and_firing_or_excused() -> None:
    """`battleline coverage --module t9a --battles 6`: every T9A.* and CFG.* rule ID is named by a test and fires in
    the t9a corpus (pitched_battle_t9a and configs/scenarios/coverage_t9a/), or is excused in
    configs/coverage_exceptions.yaml; at least 95% are tested and firing (issue 30); no excused rule is in fact
    tested and firing."""
    counts = cov.fuzz_corpus_counts(battles=6, module="t9a")
    rows = cov.coverage(counts, cov.tests_by_rule(), cov.load_exceptions(), "t9a")
    assert len(rows) == 44
    unexcused = [r.rule for r in rows if not (r.tests and r.fired) and r.exception is None]
    assert unexcused == [], f"not tested and firing, and not in {cov.EXCEPTIONS_FILE.name}: {unexcused}"
    stale = [r.rule for r in rows if r.tests and r.fired and r.exception is not None]
    assert stale == [], f"tested and firing, so remove from {cov.EXCEPTIONS_FILE.name}: {stale}"
    assert cov.summary(rows)["share"] >= cov.MIN_SHARE["t9a"]


@pytest.mark.skipif(not RULESET.exists(), reason="shared/rules/RULESET.md is not beside the checkout")
def test_shipped_ruleset_is_the_shared_one() -> None:
    """env/rules/RULESET.md, which `battleline rules` reads, is a copy of the authoritative shared/rules/RULESET.md."""
    assert SHIPPED_RULESET.read_bytes() == RULESET.read_bytes(), f"copy {RULESET} to {SHIPPED_RULESET}"


def test_shipped_ruleset_gives_the_text_of_every_rule_id() -> None:
    from battleline.env.rules.reference import RULESET_FILE, ruleset_rules

    assert str(RULESET_FILE) == str(SHIPPED_RULESET)
    rules = ruleset_rules()
    assert set(rule_ids()) <= set(rules)
    assert all(rules[r].text.strip() and rules[r].section for r in rule_ids())


def test_parse_ruleset_bullets_continuations_tables_and_rows() -> None:
    from battleline.env.rules.reference import UnknownRuleQuery, lookup, parse_ruleset

    text = (
        "# Title\n- Rule ID = `AREA.TOPIC.NAME`.\n## 2. Part\n"
        "- **A.B.ONE**: First.\n  - sub item;\n\n  (src: x)\n"
        "- **A.B.TWO**: Table.\n\n| ID | Name | Cost |\n|---|---|---|\n| **A.B.ROW** | Oil | 25 |\n\n"
        "Closing prose at column 0.\n## 3. Next\n- **A.C.THREE**: Last.\n"
    )
    rules = parse_ruleset(text)
    assert list(rules) == ["A.B.ONE", "A.B.TWO", "A.B.ROW", "A.C.THREE"]
    assert rules["A.B.ONE"].text == "First.\n- sub item;\n\n(src: x)"
    assert (rules["A.B.ONE"].section, rules["A.B.ONE"].line) == ("2. Part", 4)
    assert rules["A.B.TWO"].text == "Table.\n\n| ID | Name | Cost |\n|---|---|---|\n| **A.B.ROW** | Oil | 25 |"
    assert rules["A.B.ROW"].text == "Name: Oil\nCost: 25\n(a row of the table of A.B.TWO: Table.)"
    assert rules["A.C.THREE"].section == "3. Next"
    assert [r.id for r in lookup("a.b", rules)] == ["A.B.ONE", "A.B.TWO", "A.B.ROW"]
    assert [r.id for r in lookup("A.*", rules)] == list(rules)
    with pytest.raises(UnknownRuleQuery, match=r"^unknown rule ID 'A.B.ONES'; close IDs: A.B.ONE, A.B.TWO, A.B.ROW$"):
        lookup("A.B.ONES", rules)
    other = replace(rules["A.B.ONE"], id="A.BC.X")
    with pytest.raises(UnknownRuleQuery, match=r"^unknown rule ID 'A.B'; close IDs: A.BC, A.BC.X$"):
        lookup("A.B", {"A.BC.X": other})  # a prefix matches whole parts only: A.B is not the start of A.BC.X


def test_shipped_test_index_matches_the_tests() -> None:
    """training/test_index.json, which an installed package's `battleline coverage` reads, equals what tests/ says."""
    assert cov.has_tests(cov.TESTS_DIR)
    shipped, found = cov.load_test_index(), cov.tests_by_rule()
    stale = sorted(r for r in set(shipped) | set(found) if shipped.get(r) != found.get(r))
    assert stale == [], f"the test index is stale for {stale}: run python -m battleline.training.coverage --write-index"


def test_known_tests_read_tests_then_the_index_and_say_which(tmp_path: Path) -> None:
    tests_dir = tmp_path / "tests"
    tests_dir.mkdir()
    (tests_dir / "test_x.py").write_text('def test_a():\n    """CORE.CC.BREAK_TEST"""\n')
    index = tmp_path / "test_index.json"
    index.write_text('{"CORE.CC.FLEE": ["test_y.py::test_b"]}')
    assert cov.known_tests(tests_dir, index) == ({"CORE.CC.BREAK_TEST": ["test_x.py::test_a"]}, f"{tests_dir} (1 files)")
    (tests_dir / "test_x.py").unlink()  # an installed package: no tests beside it
    assert cov.known_tests(tests_dir, index) == ({"CORE.CC.FLEE": ["test_y.py::test_b"]}, "the shipped index test_index.json")
    index.write_text('{"CORE.CC.FLEE": "test_y.py::test_b"}')
    with pytest.raises(cov.CoverageError, match=r"test_index.json: expected an object mapping rule IDs to lists of test names$"):
        cov.known_tests(tests_dir, index)
    index.write_text("{")
    with pytest.raises(cov.CoverageError, match=r"test_index.json: not valid JSON \(Expecting property name"):
        cov.known_tests(tests_dir, index)
    index.unlink()
    with pytest.raises(cov.CoverageError, match=f"^no tests found: no test_\\*.py in {tests_dir} and no test index {index}$"):
        cov.known_tests(tests_dir, index)
    with pytest.raises(cov.CoverageError, match="the index is written from a source checkout"):
        cov.write_test_index(index, tests_dir)
    assert not index.exists()


def test_coverage_command_without_tests_or_index_is_one_line(monkeypatch, tmp_path: Path) -> None:
    """An installed package whose index is gone, or a data folder without army lists: one line, exit 2, no battle."""
    from typer.testing import CliRunner

    from battleline.training.cli import app

    monkeypatch.setattr(cov, "TESTS_DIR", tmp_path / "tests")
    monkeypatch.setattr(cov.known_tests, "__defaults__", (tmp_path / "tests", tmp_path / "test_index.json"))
    monkeypatch.setattr(cov, "fuzz_corpus_counts", lambda *a, **k: pytest.fail("no battle may be played"))
    result = CliRunner().invoke(app, ["coverage", "--battles", "1"])
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"error: no tests found: no test_*.py in {tmp_path / 'tests'} and no test index "
                             f"{tmp_path / 'test_index.json'}\n")
    import battleline.env.rules.config as config

    monkeypatch.setattr(config, "list_armies", lambda faction=None: [])
    result = CliRunner().invoke(app, ["coverage", "--battles", "1"])
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: no army list in {cov.CONFIG_DIR / 'armies'}: the corpus' pitched battles need one\n"
