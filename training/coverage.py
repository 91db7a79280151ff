"""Rule coverage: which rule IDs of a rule set are pinned by tests and fire in real battles.

For every rule ID of a rule set (:data:`MODULES`: ``core``, the CORE rule IDs
of RULESET.md, :func:`env.rules.ruleset.core_rule_ids`; ``t9a``, the T9A
variant's T9A.* and CFG.* IDs, RULESET.md §6.1 and §6.4) the report gives the tests that name it (in their name, docstring or code) and
how often it fired in a fixed fuzz corpus of battles (random and scripted
agents, fixed seeds and army lists, the shipped battle scenarios and the small
coverage set-ups of ``configs/scenarios/coverage/``, whose armies hold the
wizards, war machines, monsters and special rules that ordinary battles rarely
bring together). The ``t9a`` corpus plays ``pitched_battle_t9a`` (random and
scripted agents, army lists cycling) and the set-ups of
``configs/scenarios/coverage_t9a/``, whose armies carry the protections,
attributes, artillery and characters of the variant. A rule that is not both tested and firing must be listed with
a reason in ``configs/coverage_exceptions.yaml``.

The tests are read from the repository's ``tests/`` when it is there (a source
checkout); an installed package has no ``tests/`` and reads the index shipped
beside this module, ``test_index.json`` (rule ID → test names), which
``python -m battleline.training.coverage --write-index`` regenerates from
``tests/`` and ``tests/test_coverage.py`` keeps equal to it.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from battleline.env.rules.config import CONFIG_DIR, NESTED_TOO_DEEPLY, REPO_ROOT, package_data_dir, read_file_text
from battleline.env.rules.ruleset import core_rule_ids, rule_ids

TESTS_DIR = REPO_ROOT / "tests"
"""The repository's tests (absent from an installed package)."""
TEST_INDEX_FILE = package_data_dir(__package__) / "test_index.json"
"""The shipped index of :func:`tests_by_rule` over :data:`TESTS_DIR`, read when ``tests/`` is absent."""
EXCEPTIONS_FILE = CONFIG_DIR / "coverage_exceptions.yaml"
ID_PATTERN = re.compile(r"(?:CORE|T9A|CFG)(?:\.[A-Z0-9_]+)+(?:\.\*)?")
"""The rule IDs a test may name (CORE.*, T9A.*, CFG.*), or a ``PREFIX.*`` pattern of them."""
MODULES: dict[str, tuple[str, ...]] = {"core": ("CORE.",), "t9a": ("T9A.", "CFG.")}
"""Rule set → the prefixes of its rule IDs (``battleline coverage --module``)."""
MODULE_TITLES: dict[str, str] = {"core": "core", "t9a": "T9A and CFG"}
"""Rule set → the words naming its rule IDs in the report."""
MIN_SHARE: dict[str, float] = {"t9a": 0.95}
"""Rule set → the least share of its IDs that must be tested and firing (issue 30: 95% for t9a); none for core,
whose every ID must be tested and firing or excused."""
CORPUS_SCENARIOS = ("pitched_battle", "skirmish_line")
CORPUS_SCENARIOS_T9A = ("pitched_battle_t9a",)
"""The shipped scenarios of the ``t9a`` corpus (army lists cycle on each)."""
COVERAGE_SCENARIO_DIR = CONFIG_DIR / "scenarios" / "coverage"
COVERAGE_T9A_SCENARIO_DIR = CONFIG_DIR / "scenarios" / "coverage_t9a"
SCRIPTED = ("line_advance", "pincers", "refused_flank")
COVERAGE_SEEDS = 2
"""Seeds per ``battles`` of each coverage set-up (see :func:`corpus_games`)."""


class CoverageError(ValueError):
    """The coverage report cannot be made (no tests found, no index, no army list for the corpus): one line."""


def module_rule_ids(module: str = "core") -> list[str]:
    """The rule IDs of rule set ``module`` (a key of :data:`MODULES`), sorted.

    Raises:
        CoverageError: ``module`` is not a rule set of :data:`MODULES` (one line naming the known ones).
    """
    if module not in MODULES:
        raise CoverageError(f"unknown rule set '{module}' (one of {', '.join(MODULES)})")
    if module == "core":
        return core_rule_ids()
    return sorted(r for r in rule_ids() if r.startswith(MODULES[module]))


@dataclass(frozen=True)
class RuleCoverage:
    """Coverage of one rule ID: the tests naming it and its firing count in the corpus."""

    rule: str
    tests: tuple[str, ...]
    fired: int
    exception: str | None

    @property
    def ok(self) -> bool:
        """Tested and firing, or excused with a reason."""
        return bool(self.tests) and self.fired > 0 or self.exception is not None


def _expand(token: str, known: frozenset[str]) -> set[str]:
    """A token names one ID, or all IDs under a prefix when it ends in ``.*``."""
    if token.endswith(".*"):
        prefix = token[:-1]
        return {r for r in known if r.startswith(prefix)}
    return {token} if token in known else set()


def tests_by_rule(tests_dir: Path = TESTS_DIR) -> dict[str, list[str]]:
    """Map rule ID → ``file::test`` names of the test functions that mention it.

    A test mentions an ID when the ID (or a ``PREFIX.*`` pattern) appears in
    its source, docstring included.
    """
    known = rule_ids()
    out: dict[str, list[str]] = {}
    for path in sorted(tests_dir.glob("test_*.py")):
        source = read_file_text(path)
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                segment = ast.get_source_segment(source, node) or ""
                for token in set(ID_PATTERN.findall(segment)):
                    for rule in _expand(token, known):
                        out.setdefault(rule, []).append(f"{path.name}::{node.name}")
    return out


def load_test_index(path: Path = TEST_INDEX_FILE) -> dict[str, list[str]]:
    """The shipped index {rule ID: ``file::test`` names}, as :func:`write_test_index` wrote it.

    Raises:
        CoverageError: the file is missing, not JSON, or not an object of lists of names (one line naming it).
    """
    if not path.is_file():
        raise CoverageError(f"{path}: test index not found")
    try:
        data = json.loads(read_file_text(path, CoverageError))
    except json.JSONDecodeError as exc:
        raise CoverageError(f"{path}: not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno})") from None
    except RecursionError:
        raise CoverageError(f"{path}: {NESTED_TOO_DEEPLY}") from None
    if not (isinstance(data, dict) and all(isinstance(v, list) and all(isinstance(t, str) for t in v)
                                           for v in data.values())):
        raise CoverageError(f"{path}: expected an object mapping rule IDs to lists of test names")
    return data


def has_tests(tests_dir: Path = TESTS_DIR) -> bool:
    """Whether ``tests_dir`` holds test files (``test_*.py``): a source checkout, not an installed package."""
    return tests_dir.is_dir() and any(tests_dir.glob("test_*.py"))


def known_tests(tests_dir: Path = TESTS_DIR, index: Path = TEST_INDEX_FILE) -> tuple[dict[str, list[str]], str]:
    """The tests naming each rule ID, and where they were read: ``tests_dir`` when it holds test files
    (:func:`tests_by_rule`), else the shipped ``index`` (:func:`load_test_index`).

    Returns ({rule ID: ``file::test`` names}, a few words naming the source, e.g. "tests/ (47 files)").

    Raises:
        CoverageError: neither the folder nor the index is there, or the index is invalid.
    """
    if has_tests(tests_dir):
        return tests_by_rule(tests_dir), f"{tests_dir} ({sum(1 for _ in tests_dir.glob('test_*.py'))} files)"
    if not index.is_file():
        raise CoverageError(f"no tests found: no test_*.py in {tests_dir} and no test index {index}")
    return load_test_index(index), f"the shipped index {index.name}"


def write_test_index(path: Path = TEST_INDEX_FILE, tests_dir: Path = TESTS_DIR) -> dict[str, list[str]]:
    """Write :func:`tests_by_rule` of ``tests_dir`` to ``path`` as JSON (keys sorted) and return it.

    Raises:
        CoverageError: ``tests_dir`` holds no test files (an installed package cannot regenerate its index).
    """
    if not has_tests(tests_dir):
        raise CoverageError(f"no test_*.py in {tests_dir}: the index is written from a source checkout")
    index = tests_by_rule(tests_dir)
    path.write_text(json.dumps(index, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return index


def _coverage_dir(module: str) -> Path:
    """The folder of the coverage set-ups of rule set ``module``."""
    return COVERAGE_T9A_SCENARIO_DIR if module == "t9a" else COVERAGE_SCENARIO_DIR


def _corpus_scenarios(module: str) -> tuple[str, ...]:
    """The shipped scenarios of the corpus of rule set ``module``."""
    return CORPUS_SCENARIOS_T9A if module == "t9a" else CORPUS_SCENARIOS


def coverage_scenarios(module: str = "core") -> list[str]:
    """Names of the coverage set-ups of rule set ``module``, the ``*.yaml`` files of ``configs/scenarios/coverage/``
    (core) or ``configs/scenarios/coverage_t9a/`` (t9a), sorted."""
    return sorted(p.stem for p in _coverage_dir(module).glob("*.yaml"))


def scenario_source(name: str, module: str = "core") -> str | Path:
    """What :func:`training.play.play_battle` loads for a corpus scenario: a coverage set-up's path, else the name."""
    path = _coverage_dir(module) / f"{name}.yaml"
    return path if path.is_file() else name


def corpus_games(battles: int, module: str = "core") -> list[tuple[str, str, str, str | None, str | None, int]]:
    """The fixed corpus of rule set ``module``: (scenario, blue agent, red agent, blue army, red army, seed) per game.

    For each shipped scenario of the corpus (:data:`CORPUS_SCENARIOS` for core,
    :data:`CORPUS_SCENARIOS_T9A` for t9a), ``battles`` random-against-random
    games (seeds 0..n−1) and as many games of the scripted agents against each
    other; on the pitched battles the army lists cycle through every shipped
    list. Each coverage set-up (:func:`coverage_scenarios`), small and fast,
    gets :data:`COVERAGE_SEEDS` times as many seeds, so that its rare dice
    outcomes come up.

    Raises:
        CoverageError: no army list is shipped, or ``module`` is unknown.
    """
    from battleline.env.rules.config import list_armies

    module_rule_ids(module)  # an unknown rule set is one line
    armies = list_armies()
    if not armies:  # the pitched battles cycle through the army lists
        raise CoverageError(f"no army list in {CONFIG_DIR / 'armies'}: the corpus' pitched battles need one")
    shipped = _corpus_scenarios(module)
    cycling = ("pitched_battle", "pitched_battle_t9a")
    games: list[tuple[str, str, str, str | None, str | None, int]] = []
    for scenario in (*shipped, *coverage_scenarios(module)):
        seeds = battles if scenario in shipped else COVERAGE_SEEDS * battles
        for seed in range(seeds):
            games.append((scenario, "random", "random", None, None, seed))
            blue_army = armies[seed % len(armies)] if scenario in cycling else None
            red_army = armies[(seed * 3 + 1) % len(armies)] if scenario in cycling else None
            games.append((scenario, SCRIPTED[seed % 3], SCRIPTED[(seed + 1) % 3], blue_army, red_army, seed))
    return games


def fuzz_corpus_counts(battles: int = 12, progress: Callable[[int], None] | None = None,
                       module: str = "core") -> Counter[str]:
    """Rule IDs fired in the fixed corpus of :func:`corpus_games` of rule set ``module`` (count of events per ID)."""
    from battleline.training.play import play_battle

    counts: Counter[str] = Counter()
    for scenario, blue, red, blue_army, red_army, seed in corpus_games(battles, module):
        battle = play_battle(scenario_source(scenario, module), blue, red, seed=seed,
                             blue_army=blue_army, red_army=red_army)
        counts.update(e["rule"] for e in battle.events)
        if progress is not None:
            progress(1)
    return counts


def load_exceptions(path: Path = EXCEPTIONS_FILE) -> dict[str, str]:
    """The excused rule IDs with their reasons.

    Raises:
        ValueError: the file names an unknown rule ID or gives no reason.
    """
    if not path.exists():
        return {}
    data = yaml.safe_load(read_file_text(path)) or {}
    known = rule_ids()
    out: dict[str, str] = {}
    for rule, reason in data.items():
        if rule not in known:
            raise ValueError(f"{path.name}: {rule}: unknown rule ID")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"{path.name}: {rule}: a reason is required")
        out[rule] = reason.strip()
    return out


def coverage(counts: Counter[str], tests: dict[str, list[str]], exceptions: dict[str, str],
             module: str = "core") -> list[RuleCoverage]:
    """The coverage row of every rule ID of rule set ``module`` (:func:`module_rule_ids`), sorted by ID."""
    return [
        RuleCoverage(rule, tuple(tests.get(rule, [])), counts.get(rule, 0), exceptions.get(rule))
        for rule in module_rule_ids(module)
    ]


def summary(rows: list[RuleCoverage]) -> dict[str, float]:
    """Counts and the share of the rows' IDs that are both tested and firing."""
    full = sum(1 for r in rows if r.tests and r.fired)
    return {
        "rules": len(rows),
        "tested": sum(1 for r in rows if r.tests),
        "fired": sum(1 for r in rows if r.fired),
        "tested_and_fired": full,
        "excused": sum(1 for r in rows if r.exception is not None and not (r.tests and r.fired)),
        "share": full / len(rows) if rows else 0.0,
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m battleline.training.coverage --write-index``: regenerate :data:`TEST_INDEX_FILE` from ``tests/``."""
    from battleline.training.cli_common import OneLineArgumentParser, print_error

    parser = OneLineArgumentParser(prog="python -m battleline.training.coverage", description=main.__doc__)
    parser.add_argument("--write-index", action="store_true", required=True,
                        help="write the rule ID → tests index shipped in the package")
    parser.parse_args(argv)
    try:
        index = write_test_index()
    except CoverageError as exc:
        print_error(str(exc))
        raise SystemExit(2) from None
    print(f"{TEST_INDEX_FILE}: {len(index)} rule IDs, {sum(map(len, index.values()))} test mentions")


if __name__ == "__main__":  # pragma: no cover
    main()
