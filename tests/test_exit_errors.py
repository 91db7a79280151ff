"""User mistakes around the plan network and expert iteration: one line ``error: ...``, exit code 2, nothing overwritten.

Covers ``plans:PATH`` agents with a bad file or too few unit slots (``play``, ``tournament``, the env's opponent,
a search's ``prior=``), and ``battleline expert-iteration`` with bad flags or a damaged run folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from battleline.agents.plan_net import PlanNet, PlanNetError, PlanPolicy, feature_size, load_plan_policy
from battleline.agents.registry import PlanNetAgentError, make_agent
from battleline.agents.search import DEFAULT_PORTFOLIO
from battleline.env.battle_env import resolve_unit_slots
from battleline.training.cli import app
from battleline.training.exit_data import LABEL_KEYS, save_labels, stack_rows
from battleline.training.expert_iteration import ExItSettings

SCENARIO = "skirmish_line"
PLANS = ("line_advance", "refused_flank", "pincers")
TINY = ["--scenario", SCENARIO, "--games", "2", "--sims", "2", "--eval-games", "2", "--epochs", "2",
        "--iterations", "1", "--opponents", "line_advance", "--workers", "1"]


def _net(path: Path, plans: tuple[str, ...] = PLANS, scenario: str = SCENARIO) -> Path:
    n = resolve_unit_slots(None, scenario)
    torch.manual_seed(0)
    PlanPolicy(PlanNet(feature_size(n), len(plans), (4,)), plans, n).save(path)
    return path


def _one_error_line(result: object) -> str:
    """The single stderr line of a failed command (exit code 2), without its ``error: `` prefix."""
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    lines = result.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0].removeprefix("error: ")


# ----------------------------------------------------------------------------- plans:PATH files
def test_a_portfolio_entry_that_is_no_plan_agent_is_a_damaged_network(tmp_path: Path) -> None:
    for plans, fault in [
        (("line_advance", "nope", "pincers"), "portfolio entry 'nope' is not a registered agent"),
        (("line_advance", "line_advance", "pincers"), "portfolio names 'line_advance' twice"),
        (("line_advance", "search", "pincers"), "portfolio entry 'search' is not a registered agent"),
    ]:
        path = tmp_path / f"{'-'.join(plans)}.pt"
        n = resolve_unit_slots(None, SCENARIO)
        PlanPolicy(PlanNet(feature_size(n), 3, (4,)), PLANS, n).save(path)
        data = torch.load(path, weights_only=True)
        data["portfolio"] = list(plans)
        torch.save(data, path)
        with pytest.raises(PlanNetError, match=f"{path}: a damaged plan network \\(ValueError: {fault}\\)"):
            load_plan_policy(path)
        result = CliRunner().invoke(app, ["play", "--scenario", SCENARIO, "--blue", f"plans:{path}"])
        assert _one_error_line(result).startswith(f"--blue: {path}: a damaged plan network (ValueError: {fault})")


def test_an_empty_path_and_a_folder_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(PlanNetAgentError, match="^plans: needs the path of a plan network, as plans:PATH"):
        make_agent("plans:")
    with pytest.raises(PlanNetAgentError, match=f"^{tmp_path}: is a directory, not a plan network"):
        make_agent(f"plans:{tmp_path}")


def test_a_network_with_too_few_unit_slots_is_refused_before_any_game(tmp_path: Path) -> None:
    from battleline.env.battle_env import BattleEnv

    path = _net(tmp_path / "small.pt")  # skirmish_line: 3 unit slots; pitched_battle fields 10 a side
    fault = "the plan network has 3 unit slots a side but scenario 'pitched_battle' fields up to 10 units a side"
    result = CliRunner().invoke(app, ["play", "--scenario", "pitched_battle", "--blue", f"plans:{path}"])
    assert _one_error_line(result) == f"plans:{path}: {fault}"
    prior = f"search:sims=2:portfolio={'+'.join(PLANS)}:prior={path}"
    result = CliRunner().invoke(app, ["play", "--scenario", "pitched_battle", "--red", prior])
    assert _one_error_line(result) == f"{prior}: {fault}"
    out = tmp_path / "t"
    result = CliRunner().invoke(app, ["tournament", "--scenario", "pitched_battle", "--agents",
                                      f"plans:{path},line_advance", "--games-per-pair", "2", "--workers", "1",
                                      "--out", str(out)])
    assert fault in _one_error_line(result) and not out.exists()
    with pytest.raises(ValueError, match=fault):
        BattleEnv(scenario="pitched_battle", opponent=f"plans:{path}")


# ----------------------------------------------------------------------------- expert-iteration flags
@pytest.mark.parametrize(("args", "line"), [
    (["--workers", "0"], "--workers must be at least 1, got 0"),
    (["--scenario", "siege"], "--scenario: 'siege' is a siege; expert iteration plays field battles"),
])
def test_bad_flags_are_one_line_and_make_no_folder(tmp_path: Path, args: list[str], line: str) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["expert-iteration", *TINY, "--out", str(out), *args])
    assert _one_error_line(result).startswith(line)
    assert not out.exists()


# ----------------------------------------------------------------------------- a damaged run folder
def _run_folder(out: Path) -> Path:
    """A run folder as a finished round 0 of ``TINY`` leaves it (labels without rows, a network, metrics)."""
    settings = ExItSettings(scenario=SCENARIO, iterations=1, games=2, sims=2, eval_games=2, epochs=2,
                            opponents=["line_advance"])
    folder = out / "iter_00"
    folder.mkdir(parents=True)
    (out / "settings.json").write_text(json.dumps(settings.model_dump(), indent=2) + "\n")
    save_labels(folder / "labels.npz", stack_rows({k: [] for k in LABEL_KEYS}, resolve_unit_slots(None, SCENARIO)))
    (folder / "games.json").write_text("[]\n")
    _net(folder / "plan_net.pt", DEFAULT_PORTFOLIO)
    metrics = {"iteration": 0, "score_mean": 0.5, "scores": {"line_advance": {"score": 0.5}},
               "compute": {"cpu_seconds": 1.0, "rollouts": 4}}
    (folder / "metrics.json").write_text(json.dumps(metrics) + "\n")
    return out


def _snapshot(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def _break(out: Path, how: str) -> Path:
    """Damage the run folder ``out`` one way; returns the file at fault."""
    folder = out / "iter_00"
    if how == "settings not JSON":
        (out / "settings.json").write_text("{oops")
        return out / "settings.json"
    if how == "settings a list":
        (out / "settings.json").write_text("[1, 2]\n")
        return out / "settings.json"
    if how == "settings a folder":
        (out / "settings.json").unlink()
        (out / "settings.json").mkdir()
        return out / "settings.json"
    if how == "labels corrupt":
        (folder / "labels.npz").write_bytes(b"garbage\n")
        return folder / "labels.npz"
    if how == "labels truncated, round unfinished":
        (folder / "labels.npz").write_bytes((folder / "labels.npz").read_bytes()[:60])
        (folder / "metrics.json").unlink()
        return folder / "labels.npz"
    if how == "metrics not JSON":
        (folder / "metrics.json").write_text("{")
        return folder / "metrics.json"
    if how == "metrics without scores":
        (folder / "metrics.json").write_text("{}\n")
        return folder / "metrics.json"
    if how == "games not JSON, round unfinished":
        (folder / "games.json").write_text("{")
        (folder / "metrics.json").unlink()
        return folder / "games.json"
    if how == "network missing":
        (folder / "plan_net.pt").unlink()
        return folder / "plan_net.pt"
    assert how == "round folder a file"
    for p in folder.iterdir():
        p.unlink()
    folder.rmdir()
    folder.write_text("x")
    return folder


@pytest.mark.parametrize("how", ["settings not JSON", "settings a list", "settings a folder", "labels corrupt",
                                 "labels truncated, round unfinished", "metrics not JSON", "metrics without scores",
                                 "games not JSON, round unfinished", "network missing", "round folder a file"])
def test_a_damaged_run_folder_is_one_line_naming_the_file_and_is_left_as_it_was(tmp_path: Path, how: str) -> None:
    out = _run_folder(tmp_path / "run")
    bad = _break(out, how)
    before = _snapshot(out)
    args = ["--iterations", "2"] if how != "settings a folder" else []
    result = CliRunner().invoke(app, ["expert-iteration", *TINY, "--out", str(out), *args])
    assert str(bad) in _one_error_line(result)
    assert _snapshot(out) == before
    assert not np.any([p.name.endswith(".part.npz") for p in out.rglob("*")])


def test_fewer_iterations_than_the_rounds_finished_is_refused_and_keeps_the_last_network(tmp_path: Path) -> None:
    """Resuming a 2-round run with --iterations 1 would put round 0's network back in out/plan_net.pt."""
    out = _run_folder(tmp_path / "run")
    shutil.copytree(out / "iter_00", out / "iter_01")
    metrics = json.loads((out / "iter_01" / "metrics.json").read_text())
    (out / "iter_01" / "metrics.json").write_text(json.dumps({**metrics, "iteration": 1}) + "\n")
    (out / "plan_net.pt").write_bytes((out / "iter_01" / "plan_net.pt").read_bytes())
    before = _snapshot(out)
    result = CliRunner().invoke(app, ["expert-iteration", *TINY, "--out", str(out)])
    assert _one_error_line(result) == (f"--iterations: the run in {out} has finished 2 rounds, more than 1; "
                                       "give --iterations 2 or more to resume it")
    assert _snapshot(out) == before
