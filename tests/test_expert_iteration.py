"""Expert iteration over the scripted plans (training/exit_data.py, training/expert_iteration.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from battleline.agents.plan_net import feature_size, load_plan_policy
from battleline.agents.search import DEFAULT_PORTFOLIO
from battleline.env.battle_env import resolve_unit_slots
from battleline.training.exit_data import (
    APPRENTICE,
    LABEL_KEYS,
    LabelGame,
    concat_labels,
    label_game,
    load_labels,
    save_labels,
    stack_rows,
)
from battleline.training.expert_iteration import (
    ExItRunError,
    ExItSettings,
    fit,
    holdout_mask,
    label_schedule,
    run,
    search_statistics,
)

SCENARIO = "skirmish_line"
TINY = {"scenario": SCENARIO, "iterations": 2, "games": 4, "sims": 2, "eval_games": 2,
        "opponents": ["line_advance", "pincers"], "epochs": 3, "self_play_every": 4}


def test_schedule_meets_each_opponent_from_both_seats_with_self_play_and_dagger_modes() -> None:
    s = ExItSettings(games=32, opponents=["line_advance", "pincers", "refused_flank"], self_play_every=4)
    first, later = label_schedule(s, 0), label_schedule(s, 1)
    assert [g.index for g in first] == list(range(32))
    self_play = [g for g in first if g.blue == g.red == APPRENTICE]
    assert [g.index for g in self_play] == [3, 7, 11, 15, 19, 23, 27, 31]
    versus = [g for g in first if g not in self_play]
    assert all((g.blue == APPRENTICE) != (g.red == APPRENTICE) for g in versus)
    seats = {(g.blue if g.red == APPRENTICE else g.red, "red" if g.red == APPRENTICE else "blue") for g in versus}
    assert seats == {(o, seat) for o in s.opponents for seat in ("blue", "red")}
    assert {g.mode for g in first} == {"search"}  # no network yet
    assert [g.mode for g in later] == ["search", "net"] * 16
    assert len({g.seed for g in first + later}) == 64  # fresh dice every game and round
    assert label_schedule(s, 1) == later


def test_settings_are_checked() -> None:
    for bad, field in [({"games": 0}, "games"), ({"opponents": []}, "opponents"), ({"opponents": ["nope"]}, "opponents"),
                       ({"opponents": ["siege_attacker"]}, "opponents"), ({"self_play_every": -1}, "self_play_every"),
                       ({"sims": 1.5}, "sims"), ({"unknown": 1}, "unknown")]:
        with pytest.raises(ValidationError) as info:
            ExItSettings(**bad)
        assert info.value.errors()[0]["loc"][0] == field


def test_a_label_game_labels_each_apprentice_block_with_the_searchs_choice() -> None:
    n = resolve_unit_slots(None, SCENARIO)
    row = label_game(LabelGame(0, 0, 5, APPRENTICE, "line_advance", "search", 9), SCENARIO, 3, None, n)
    labels = row["labels"]
    m = len(labels["choice"])
    assert m >= 2 and set(labels) == set(LABEL_KEYS)
    assert labels["features"].shape == (m, feature_size(n)) and labels["features"].dtype == np.float32
    assert labels["values"].shape == labels["samples"].shape == (m, len(DEFAULT_PORTFOLIO))
    assert (labels["samples"].sum(1) == 3).all() and row["rollouts"] == 3 * m
    tried = labels["samples"] > 0
    assert np.isnan(labels["values"][~tried]).all() and np.isfinite(labels["values"][tried]).all()
    assert tried[np.arange(m), labels["choice"]].all()  # the choice is a plan it tried
    assert (labels["side"] == 0).all() and row["winner"] in ("blue", "red", "draw")
    again = label_game(LabelGame(0, 0, 5, APPRENTICE, "line_advance", "search", 9), SCENARIO, 3, None, n)
    assert all(np.array_equal(labels[k], again["labels"][k], equal_nan=True) for k in LABEL_KEYS)


def test_self_play_labels_both_sides() -> None:
    n = resolve_unit_slots(None, SCENARIO)
    row = label_game(LabelGame(3, 0, 6, APPRENTICE, APPRENTICE, "search", 1), SCENARIO, 2, None, n)
    assert set(row["labels"]["side"].tolist()) == {0, 1}


def test_labels_round_trip_and_join(tmp_path: Path) -> None:
    n = resolve_unit_slots(None, SCENARIO)
    empty = stack_rows({k: [] for k in LABEL_KEYS}, n)
    assert empty["features"].shape == (0, feature_size(n))
    row = label_game(LabelGame(1, 0, 7, "pincers", APPRENTICE, "search", 2), SCENARIO, 2, None, n)
    joined = concat_labels([empty, row["labels"], row["labels"]])
    assert len(joined["choice"]) == 2 * len(row["labels"]["choice"])
    save_labels(tmp_path / "l.npz", joined)
    back = load_labels(tmp_path / "l.npz")
    assert all(np.array_equal(back[k], joined[k], equal_nan=True) for k in LABEL_KEYS)
    np.savez(tmp_path / "bad.npz", choice=np.zeros(2))
    with pytest.raises(ValueError, match="not a label file"):
        load_labels(tmp_path / "bad.npz")


def test_fit_learns_a_choice_that_the_features_decide() -> None:
    """Labels whose plan is set by one feature (the others noise): the network learns it, held-out games included."""
    n = resolve_unit_slots(None, SCENARIO)
    rng = np.random.default_rng(0)
    x = 0.1 * rng.random((400, feature_size(n)), dtype=np.float32)
    x[:, 5] = rng.integers(0, 2, 400)
    choice = x[:, 5].astype(np.int32) * 3
    labels = {"features": x, "choice": choice, "values": np.zeros((400, 11), np.float32),
              "samples": np.zeros((400, 11), np.int32), "side": np.zeros(400, np.int32),
              "turn": np.zeros(400, np.int32), "game": np.arange(400, dtype=np.int32) // 4,
              "iteration": np.zeros(400, np.int32), "mode": np.zeros(400, np.int32)}
    settings = ExItSettings(epochs=60, holdout_every=5)
    policy, stats = fit(labels, settings, DEFAULT_PORTFOLIO, n, seed=0)
    assert stats["heldout"] == int(holdout_mask(labels, 5).sum()) == 80
    assert stats["agreement"] >= 0.9 and stats["labels"] == 400


def test_search_statistics() -> None:
    values = np.array([[0.5, 0.2, np.nan], [np.nan, -0.1, 0.3]], np.float32)
    stats = search_statistics({"choice": np.array([0, 2]), "values": values,
                               "samples": np.array([[4, 2, 0], [0, 2, 4]])}, ("a", "b", "c"))
    assert stats["rollouts_per_label"] == 6
    assert stats["value_gap"] == pytest.approx(0.35)
    assert stats["share/a"] == stats["share/c"] == 0.5 and stats["share/b"] == 0
    assert stats["choice_entropy"] == pytest.approx(np.log(2))


def test_a_tiny_run_writes_every_round_charts_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    settings = ExItSettings(**TINY)
    history = run(settings, out, log=lambda _line: None)
    assert [m["iteration"] for m in history] == [0, 1]
    for it in (0, 1):
        folder = out / f"iter_{it:02d}"
        assert {p.name for p in folder.iterdir()} >= {"labels.npz", "games.json", "plan_net.pt", "metrics.json"}
        metrics = json.loads((folder / "metrics.json").read_text())
        assert set(metrics["scores"]) == {"line_advance", "pincers"}
        assert all(r["games"] == 2 for r in metrics["scores"].values())
    modes = {g["mode"] for g in json.loads((out / "iter_01" / "games.json").read_text())}
    assert modes == {"search", "net"}  # the second round lets the first network play (DAgger)
    assert history[1]["fit"]["labels"] > history[0]["fit"]["labels"]  # labels aggregate over rounds
    assert history[1]["compute"]["cpu_seconds"] > history[0]["compute"]["cpu_seconds"] > 0
    assert load_plan_policy(out / "plan_net.pt").portfolio == DEFAULT_PORTFOLIO
    assert (out / "curve.png").stat().st_size > 0
    assert any((out / "tensorboard").iterdir())
    lines: list[str] = []
    assert run(settings, out, log=lines.append) == history  # a finished run resumes without playing
    assert lines == [f"round {m['iteration']}: done before (score {m['score_mean']:.3f}), resumed after it"
                     for m in history]
    with pytest.raises(ExItRunError, match="the run there has sims = 2, not 3"):
        run(ExItSettings(**{**TINY, "sims": 3}), out)
    longer = run(ExItSettings(**{**TINY, "iterations": 3}), out, log=lines.append)  # more rounds extend the run
    assert longer[:2] == history and longer[2]["iteration"] == 2 and (out / "iter_02" / "metrics.json").exists()
    assert json.loads((out / "settings.json").read_text())["iterations"] == 3


def test_command_line_errors_are_one_line(tmp_path: Path) -> None:
    from battleline.training.cli import app

    for args, line in [
        (["--games", "0"], "error: --games: must be at least 1, got 0"),
        (["--opponents", "line_advance,nope"], "error: --opponents: 'nope' is not a field agent; known: "),
        (["--scenario", "nope"], "error: --scenario: unknown scenario 'nope'; known: "),
    ]:
        result = CliRunner().invoke(app, ["expert-iteration", "--out", str(tmp_path / "x"), *args])
        assert result.exit_code == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(line)


def test_a_value_target_learns_each_plans_rollout_value_and_plays_the_best() -> None:
    """target=values: the network predicts the search's mean rollout value of every plan it tried, weighted by
    rollouts, and its most likely plan is the most valued; untried plans (NaN, 0 rollouts) teach nothing."""
    n = resolve_unit_slots(None, SCENARIO)
    rng = np.random.default_rng(1)
    x = 0.1 * rng.random((400, feature_size(n)), dtype=np.float32)
    x[:, 7] = rng.integers(0, 2, 400)
    values = np.full((400, 11), np.nan, np.float32)
    samples = np.zeros((400, 11), np.int32)
    values[:, 2] = np.where(x[:, 7] > 0, 0.8, -0.4)  # plan 2 is good where feature 7 is set
    values[:, 4] = 0.2
    samples[:, 2], samples[:, 4] = 6, 6
    labels = {"features": x, "choice": np.where(x[:, 7] > 0, 2, 4).astype(np.int32), "values": values,
              "samples": samples, "side": np.zeros(400, np.int32), "turn": np.zeros(400, np.int32),
              "game": np.arange(400, dtype=np.int32) // 4, "iteration": np.zeros(400, np.int32),
              "mode": np.zeros(400, np.int32)}
    policy, stats = fit(labels, ExItSettings(epochs=80, target="values"), DEFAULT_PORTFOLIO, n, seed=0)
    assert policy.net.head == "value" and stats["agreement"] >= 0.9
    import torch

    with torch.no_grad():
        out = policy.net(torch.from_numpy(x[:8]))
    assert np.allclose(out[:, 2].numpy(), values[:8, 2], atol=0.15) and np.allclose(out[:, 4].numpy(), 0.2, atol=0.15)


def test_the_label_games_score_leaves_self_play_out_and_is_none_without_other_games() -> None:
    from battleline.training.expert_iteration import apprentice_score

    rows = [{"blue": APPRENTICE, "red": "pincers", "winner": "blue"},
            {"blue": "pincers", "red": APPRENTICE, "winner": "draw"},
            {"blue": APPRENTICE, "red": APPRENTICE, "winner": "red"}]
    assert apprentice_score(rows) == 0.75
    assert apprentice_score(rows[2:]) is None
