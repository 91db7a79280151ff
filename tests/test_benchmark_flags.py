"""The benchmark scripts refuse a bad flag before any battle, in one line on stderr with exit code 2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def _error(capsys: pytest.CaptureFixture[str], main: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    with pytest.raises(SystemExit) as info:
        main(*args, **kwargs)
    assert info.value.code == 2
    return capsys.readouterr().err


def test_env_speed_counts_and_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.env_speed import main

    assert _error(capsys, main, ["--steps", "-5"]) == "error: --steps must be at least 1, got -5\n"
    assert _error(capsys, main, ["--repeats", "0"]) == "error: --repeats must be at least 1, got 0\n"
    assert _error(capsys, main, ["--num-envs", "0"]) == "error: --num-envs must be at least 1, got 0\n"
    assert _error(capsys, main, ["--quick", "--scenario", "nope"]).startswith("error: unknown scenario 'nope'; shipped: ")


def test_run_counts(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.run import main

    assert _error(capsys, main, repetitions=0) == "error: --repetitions must be at least 1, got 0\n"  # was the default


def test_siege_benchmarks_need_a_siege_and_a_writable_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from benchmarks import siege_agents, siege_invariants

    out = tmp_path / "r.json"
    assert _error(capsys, siege_invariants.main, seeds=0, out=out) == "error: --seeds must be at least 1, got 0\n"
    assert _error(capsys, siege_invariants.main, seeds=1, scenario="pitched_battle", out=out) == (
        "error: --scenario: 'pitched_battle' is not a siege (its modules do not include 'siege')\n")
    assert _error(capsys, siege_invariants.main, seeds=1, out=tmp_path) == (
        f"error: --out {tmp_path}: is a directory (give a file name)\n")
    assert _error(capsys, siege_agents.main, games=1, only="nope", out=out) == (
        "error: --only must be 'both' or one of siege_attacker, siege_defender, got 'nope'\n")
    assert not out.exists()


def test_golden_only_must_match_a_case(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.golden import main

    assert _error(capsys, main, only=["zzzz"]) == "error: --only: no golden case name contains 'zzzz'\n"
    assert _error(capsys, main, extra=-1) == "error: --extra must be at least 0, got -1\n"


NOT_AN_INT = "Input should be a valid integer, unable to parse string as an integer"


@pytest.mark.parametrize(("module", "args", "message"), [
    ("run", ["--battles", "x"], f"Invalid value for '--battles': {NOT_AN_INT}"),
    ("golden", ["--bogus"], "No such option: --bogus"),
    ("siege_agents", ["--games"], "Option '--games' requires an argument."),
    ("siege_invariants", ["extra"], "Got unexpected extra argument(s) (extra)"),
])
def test_typer_scripts_report_usage_mistakes_in_one_line(capsys: pytest.CaptureFixture[str], module: str,
                                                         args: list[str], message: str) -> None:
    import importlib

    from battleline.training.cli import run_command

    main = importlib.import_module(f"benchmarks.{module}").main
    prog = f"python -m benchmarks.{module}"
    assert _error(capsys, run_command, main, args, prog_name=prog) == f"error: {prog}: {message}\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--steps", "x"], "argument --steps: invalid int value: 'x'"),
    (["--bogus"], "unrecognized arguments: --bogus"),
    (["--repeats"], "argument --repeats: expected one argument"),
])
def test_argparse_scripts_report_usage_mistakes_in_one_line(capsys: pytest.CaptureFixture[str], args: list[str],
                                                            message: str) -> None:
    from benchmarks.env_speed import main

    assert _error(capsys, main, args) == f"error: python -m benchmarks.env_speed: {message}\n"


def test_learning_benchmark_usage_mistake_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.learning import main

    assert _error(capsys, main, ["--seed", "x"]) == (
        "error: python -m benchmarks.learning: argument --seed: invalid int value: 'x'\n")


def test_learning_benchmark_names_the_flags_of_a_check_across_fields(capsys: pytest.CaptureFixture[str]) -> None:
    """A check over several settings (a mini-batch of one decision: NaN weights) names the flags that set them,
    not '<dict>' and the training config's field paths."""
    from benchmarks.learning import main

    assert _error(capsys, main, ["--n-steps", "256", "--batch-size", "3", "--n-envs", "1", "--out", "unused"]) == (
        "error: --batch-size 3 leaves a mini-batch of 1 decision in each rollout (--n-steps × --n-envs = 256), "
        "whose normalised advantage is NaN and turns the policy's weights into NaN; use a batch size that "
        "divides 256\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--games-per-pair", "0"], "Invalid value for '--games-per-pair': Input should be greater than or equal to 1"),
    (["--workers", "0"], "Invalid value for '--workers': Input should be greater than or equal to 1"),
    (["--games-per-pair", "100000000"], "Invalid value for '--games-per-pair': 78 pairs × 100,000,000 games per "
                                        "pair make 7,800,000,000 games, over the limit of 100,000 a run plays"),
])
def test_demo_refuses_bad_counts_in_one_line(capsys: pytest.CaptureFixture[str], args: list[str],
                                             message: str) -> None:
    """``python -m battleline.training.demo`` before any game: a count below 1, or a run over the game limit."""
    from battleline.training.cli import run_command
    from battleline.training.demo import main

    prog = "python -m battleline.training.demo"
    assert _error(capsys, run_command, main, args, prog_name=prog) == f"error: {prog}: {message}\n"
