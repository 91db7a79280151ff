"""Behaviour-cloning warm start (training/imitation.py): legal recorded actions, cloning, config, resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from battleline.env.battle_env import BattleEnv, scenario_unit_slots
from battleline.training.config import ConfigError, load_training_config
from battleline.training.imitation import DemonstrationError, Demonstrations, behaviour_clone, masked_accuracy, record_demonstrations
from battleline.training.pool import TrainingEnv, build_pool
from battleline.training.train import env_kwargs, policy_kwargs

SCENARIO = "skirmish_line"


def _config(**changes: Any) -> Any:
    return load_training_config("quick", changes)


def _env(config: Any) -> TrainingEnv:
    slots = scenario_unit_slots(config.scenario)
    return TrainingEnv(BattleEnv(**env_kwargs(config, slots)), build_pool(config, []), seed=config.seed)


@pytest.fixture(scope="module")
def demos() -> Demonstrations:
    return record_demonstrations(_env(_config()), "line_advance", episodes=2, seed=7)


def test_every_recorded_action_is_allowed_by_its_mask(demos: Demonstrations) -> None:
    n = len(demos)
    assert n > 20 and demos.episodes == 2
    assert set(demos.episode.tolist()) == {0, 1}
    assert demos.masks[np.arange(n), demos.actions].all()
    # the mask stored is the one the policy sees in its observation
    assert np.array_equal(demos.observations["action_mask"].astype(bool), demos.masks)
    assert demos.observations["units"].shape[0] == n and demos.returns.shape == (n,)
    # deployment orders come first, and the expert does more than end phases
    assert len(set(demos.actions.tolist())) > 5


def test_an_index_outside_the_mask_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    env = _env(_config())
    codec = env.unwrapped.codec
    monkeypatch.setattr(codec, "encode", lambda action, battle, player: codec.size - 1)
    with pytest.raises(DemonstrationError, match=r"expert 'line_advance' chose index \d+ .*mask does not allow"):
        record_demonstrations(env, "line_advance", episodes=1, seed=0)


def test_same_seed_records_the_same_demonstrations(demos: Demonstrations) -> None:
    again = record_demonstrations(_env(_config()), "line_advance", episodes=2, seed=7)
    assert np.array_equal(again.actions, demos.actions)
    assert np.allclose(again.returns, demos.returns)


class _FirstAllowed:
    """A stand-in policy: plays the lowest index its mask allows, and remembers the masks it was given."""

    def __init__(self) -> None:
        self.masks: list[np.ndarray] = []

    def predict(self, obs: dict[str, np.ndarray], deterministic: bool = True,
                action_masks: np.ndarray | None = None) -> tuple[np.ndarray, None]:
        assert deterministic and action_masks is not None
        self.masks.append(np.asarray(action_masks, dtype=bool).copy())
        return np.asarray(int(np.flatnonzero(action_masks)[0])), None


def test_a_dagger_round_plays_the_policy_and_records_the_experts_labels(demos: Demonstrations) -> None:
    policy = _FirstAllowed()
    rolled = record_demonstrations(_env(_config()), "line_advance", episodes=2, seed=7, policy=policy)
    n = len(rolled)
    # the policy was asked once per learner decision, with the very mask stored for it
    assert len(policy.masks) == n and np.array_equal(np.stack(policy.masks), rolled.masks)
    # labels are the expert's, always allowed; the states differ from the expert's own games of the same seeds
    assert rolled.masks[np.arange(n), rolled.actions].all()
    played = np.array([int(np.flatnonzero(m)[0]) for m in rolled.masks])
    assert (played != rolled.actions).any()
    assert n != len(demos) or not np.array_equal(rolled.actions, demos.actions)
    both = demos + rolled
    assert len(both) == len(demos) + n and both.episodes == 4
    assert sorted(set(both.episode.tolist())) == [0, 1, 2, 3]
    assert np.array_equal(both.actions[len(demos):], rolled.actions)


def test_cloning_raises_agreement_with_the_expert(demos: Demonstrations) -> None:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    config = _config()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small network: one thread is fastest, and steady on a busy machine
    torch.manual_seed(0)
    model = MaskablePPO("MultiInputPolicy", DummyVecEnv([lambda: _env(config)]), policy_kwargs=policy_kwargs(config.ppo),
                        seed=0, device="cpu")
    before = masked_accuracy(model.policy, demos)
    try:
        history = behaviour_clone(model.policy, demos, epochs=20, batch_size=16, learning_rate=1e-3, seed=0)
    finally:
        torch.set_num_threads(threads)
    after = masked_accuracy(model.policy, demos)
    assert len(history) == 20
    assert history[-1]["loss"] < history[0]["loss"] / 2
    assert history[-1]["value_loss"] < history[0]["value_loss"]
    assert after > before and after >= 0.8, (before, after)


@pytest.mark.parametrize(
    ("imitation", "where", "words"),
    [
        ({"expert": "napoleon"}, "imitation.expert", "unknown expert 'napoleon'"),
        ({"episodes": 0}, "imitation.episodes", "greater than or equal to 1"),
        ({"learning_rate": 0}, "imitation.learning_rate", "greater than 0"),
        ({"epoch": 3}, "imitation.epoch", "unknown field"),
    ],
)
def test_imitation_config_errors_are_one_line(tmp_path: Path, imitation: dict[str, Any], where: str,
                                              words: str) -> None:
    data = yaml.safe_load(Path("configs/training/quick.yaml").read_text(encoding="utf-8"))
    data["imitation"] = imitation
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_training_config(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(f"{path}: ") and f": {where}: " in msg and words in msg


def test_imitation_is_off_by_default_and_runs_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    import battleline.training.imitation as imitation_module
    from battleline.training.train import train

    assert _config().imitation is None
    run = tmp_path / "run"
    config = _config(run_dir=str(run), total_timesteps=256, eval_games=0, checkpoint_every=256,
                     imitation={"episodes": 1, "epochs": 2, "batch_size": 16, "dagger_rounds": 1,
                                "dagger_episodes": 1})
    quiet = Console(file=open(tmp_path / "log.txt", "w"), highlight=False)
    summary = train(config, console=quiet, progress=False)
    report = summary["imitation"]
    assert report["expert"] == "line_advance" and report["any_order"] is True and report["episodes"] == 2 and report["decisions"] > 0
    # two epochs of cloning, then one DAgger round of one game and two more epochs on both games' decisions
    assert [row["epoch"] for row in report["history"]] == [0, 1, 2, 3] and summary["num_timesteps"] == 256
    (round_,) = report["dagger"]
    assert round_["round"] == 1 and round_["episodes"] == 1 and 0 < round_["decisions"] < report["decisions"]
    state = json.loads((run / "state.json").read_text(encoding="utf-8"))
    assert state["imitation"] == report
    events = list((run / "tb").glob("events.out.tfevents.*"))
    assert events and any(b"imitation/accuracy" in e.read_bytes() for e in events)

    def fail(*_a: Any, **_k: Any) -> None:
        raise AssertionError("cloned again on resume")

    monkeypatch.setattr(imitation_module, "warm_start", fail)
    resumed = train(config.model_copy(update={"total_timesteps": 512}), resume=True, console=quiet, progress=False)
    assert resumed["num_timesteps"] == 512 and resumed["imitation"] == report and resumed["imitation_seconds"] == 0.0


def test_shipped_warm_start_config() -> None:
    config = load_training_config("bc_warm_start")
    assert config.imitation is not None and config.imitation.expert == "line_advance"
    assert config.imitation.episodes == 20 and config.scenario == "pitched_battle"


def test_any_order_labels_hold_every_units_wanted_order() -> None:
    """With ``any_order`` the label set is the expert's first choice plus each other unit's own order."""
    from battleline.agents.base import ScriptedAgent

    demos = record_demonstrations(_env(_config()), "line_advance", episodes=1, seed=7, any_order=True)
    single = record_demonstrations(_env(_config()), "line_advance", episodes=1, seed=7)
    assert np.array_equal(demos.actions, single.actions)  # the expert still plays its own first choice
    assert np.array_equal(demos.label_sets[:, 0], demos.actions)
    assert single.label_sets.shape[1] == 1
    rows = demos.label_sets >= 0
    assert demos.label_sets.shape[1] > 1 and (rows.sum(axis=1) > 1).any()
    idx = np.nonzero(rows)
    assert demos.masks[idx[0], demos.label_sets[idx]].all()  # every label is a legal index
    # each extra label of a movement decision moves another unit than the first choice does
    env = _env(_config())
    codec = env.unwrapped.codec
    for row in demos.label_sets[(rows.sum(axis=1) > 1)][:20]:
        described = [codec.describe(int(i)) for i in row if i >= 0]
        units = [d.split()[2] for d in described if d.startswith(("move", "shoot", "charge"))]
        assert len(units) == len(set(units)), described
    assert ScriptedAgent.acceptable_actions.__doc__


def test_set_loss_is_the_log_of_the_sets_probability() -> None:
    import torch

    from battleline.agents.base import best_per_unit
    from battleline.env.rules.actions import Action
    from battleline.training.imitation import _hits, _set_log_prob

    log_probs = torch.log(torch.tensor([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]]))
    sets = torch.tensor([[0, 2], [2, -1]])
    assert torch.allclose(_set_log_prob(log_probs, sets), torch.log(torch.tensor([0.7, 0.3])))
    assert _hits(log_probs, sets) == 1  # row 0's argmax (0) is in its set, row 1's (1) is not
    a, b, c = Action("shoot", 1, 5, None), Action("shoot", 1, 6, None), Action("shoot", 2, 5, None)
    assert best_per_unit({a: 1.0, b: 3.0, c: 2.0}) == [b, c]
    assert best_per_unit({a: 1.0, b: 1.0}) == [a]  # ties keep the first
