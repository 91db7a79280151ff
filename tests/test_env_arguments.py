"""Argument checks of BattleEnv and BattleAECEnv: bad input fails at once, in one line naming the argument.

Covers ``reward_shaping``, ``planes``, ``scenario`` and ``illegal_action`` at construction, ``reset``'s
``options``, an opponent policy's returned action, ``action_masks`` before
``reset``, and ``model:PATH`` opponents that cannot play the scenario (checked
when the env is built, as the CLI and training configs check them).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import battleline  # noqa: F401 - registers the gymnasium ids
from battleline.agents.learned import ModelLoadError
from battleline.agents.registry import ModelAgentError
from battleline.env.aec_env import BattleAECEnv
from battleline.env.battle_env import BattleEnv
from battleline.env.rules.battle import Battle


@pytest.mark.parametrize(("value", "error", "message"), [
    (float("nan"), ValueError, "reward_shaping must be a finite number >= 0, got nan"),
    (float("inf"), ValueError, "reward_shaping must be a finite number >= 0, got inf"),
    (-0.5, ValueError, "reward_shaping must be a finite number >= 0, got -0.5"),
    (10**400, ValueError, "reward_shaping must be a finite number >= 0, got 1000"),
    ("abc", TypeError, "reward_shaping must be a number, got 'abc'"),
    (None, TypeError, "reward_shaping must be a number, got None"),
    (True, TypeError, "reward_shaping must be a number, got True"),
])
def test_reward_shaping_must_be_a_finite_number_of_at_least_0(value: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        BattleEnv("skirmish_line", reward_shaping=value)


@pytest.mark.parametrize("value", [0, 0.0, 1, 0.5, np.float32(0.25), np.int64(2)])
def test_reward_shaping_accepts_finite_numbers(value: Any) -> None:
    env_ = BattleEnv("skirmish_line", reward_shaping=value)
    assert env_.reward_shaping == float(value) and type(env_.reward_shaping) is float


@pytest.mark.parametrize("cls", [BattleEnv, BattleAECEnv])
def test_planes_must_be_a_bool(cls: type) -> None:
    for bad in ("no", "", 1, None):
        with pytest.raises(TypeError, match=f"^planes must be True or False, got {re.escape(repr(bad))}$"):
            cls("skirmish_line", planes=bad)
    assert "planes" in cls("skirmish_line", planes=np.bool_(True)).observer.space().spaces
    assert "planes" not in cls("skirmish_line", planes=False).observer.space().spaces


@pytest.mark.parametrize("cls", [BattleEnv, BattleAECEnv])
def test_scenario_must_be_a_name_path_or_dict(cls: type) -> None:
    for bad in (5, None, ["skirmish_line"]):
        with pytest.raises(TypeError, match="^scenario must be a scenario name, a YAML path or a dict, got "
                                            f"{re.escape(repr(bad))}$"):
            cls(bad)
    path = Path(battleline.env.SCENARIO_DIR) / "skirmish_line.yaml"
    assert cls(path).codec.n == 3  # a Path is a YAML path


@pytest.mark.parametrize(("cls", "modes"), [
    (BattleEnv, "'lose', 'penalise', 'raise'"),
    (BattleAECEnv, "'lose', 'raise'"),
])
def test_illegal_action_must_be_a_known_mode(cls: type, modes: str) -> None:
    for bad in ("bogus", "Raise", "", None, 1):
        with pytest.raises(ValueError, match=f"^illegal_action must be one of {re.escape(modes)}, got "
                                             f"{re.escape(repr(bad))}$"):
            cls("skirmish_line", illegal_action=bad)
    for mode in modes.replace("'", "").split(", "):
        assert cls("skirmish_line", illegal_action=mode).illegal_action == mode
    assert cls("skirmish_line").illegal_action == "lose"


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"bleu_army": "men_marcher_host"}, ValueError,
     "options: unknown key 'bleu_army'; accepted keys: learner_side, blue_army, red_army"),
    ({"blue_army": ["men_marcher_host"]}, TypeError,
     "options['blue_army'] must be an army id (a string) or None, got ['men_marcher_host']"),
    ({"red_army": 5}, TypeError, "options['red_army'] must be an army id (a string) or None, got 5"),
    ("blue", TypeError, "options must be a dict or None, got 'blue'"),
    ({"learner_side": "green"}, ValueError, "options['learner_side'] must be 'random', 'blue' or 'red', got 'green'"),
])
def test_reset_options_are_checked_and_change_nothing(options: Any, error: type, message: str) -> None:
    env_ = BattleEnv("pitched_battle", learner_side="blue")
    env_.reset(seed=0)
    env_.step(0)
    battle, actions, rng = env_.battle, len(env_.battle.actions), env_.np_random.bit_generator.state
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        env_.reset(seed=1, options=options)
    assert env_.battle is battle and len(battle.actions) == actions
    assert env_.np_random.bit_generator.state == rng
    env_.step(0)  # the episode goes on
    env_.reset(seed=1, options={"blue_army": "men_marcher_host", "red_army": None, "learner_side": "red"})
    assert env_.battle.state.units[0].faction == "men" and env_.learner == 1


def test_aec_reset_army_options_are_checked() -> None:
    env_ = BattleAECEnv("pitched_battle")  # other keys are ignored: PettingZoo's api_test passes {"options": 1}
    with pytest.raises(TypeError, match=r"^options\['blue_army'\] must be an army id \(a string\) or None, got 5$"):
        env_.reset(seed=0, options={"blue_army": 5})
    assert env_.battle is None
    env_.reset(seed=0, options={"blue_army": "elves_wind_host"})
    assert env_.battle.state.units[0].faction == "elves"


@pytest.mark.parametrize("seed", [-1, 1.5, "a", True, [1, 2]])
def test_aec_reset_and_the_engine_refuse_a_seed_that_is_not_an_integer_of_at_least_0(seed: Any) -> None:
    """numpy's own words ("expected non-negative integer") named no seed; a list or True was taken as entropy."""
    message = f"^{re.escape(f'seed must be an integer >= 0, got {seed!r}')}$"
    env_ = BattleAECEnv("skirmish_line")
    env_.reset(seed=0)
    battle = env_.battle
    with pytest.raises(ValueError, match=message):
        env_.reset(seed=seed)
    assert env_.battle is battle
    with pytest.raises(ValueError, match=message):
        Battle.from_scenario("skirmish_line", seed=seed)


@pytest.mark.parametrize("cls", [BattleEnv, BattleAECEnv])
def test_too_few_unit_slots_fail_at_construction(cls: type) -> None:
    """unit_slots below the scenario's need was accepted and failed at reset (BattleEnv) or at the first
    observation (BattleAECEnv) with the codec's words; far too many ran out of memory."""
    message = "unit_slots 2 is too few: the scenario (with its army lists) fields up to 3 units a side"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        cls("skirmish_line", unit_slots=2)
    assert cls("skirmish_line", unit_slots=4).codec.n == 4
    assert cls("skirmish_line", unit_slots=128).codec.n == 128  # the most it takes
    message = "unit_slots must be at most 128 (the action space grows with the square of the slots), got 100000"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):  # it ran out of memory
        cls("skirmish_line", unit_slots=100_000)


def _play_until_error(env_: BattleEnv) -> None:
    env_.reset(seed=0)
    for _ in range(50):
        env_.step(int(np.flatnonzero(env_.action_masks())[0]))


def test_opponent_policy_action_must_be_an_integer() -> None:
    def floaty(obs: dict[str, np.ndarray], mask: np.ndarray) -> float:
        return 1.7

    env_ = BattleEnv("skirmish_line", opponent=floaty, learner_side="blue")
    with pytest.raises(TypeError, match=r"^the action of opponent 'floaty' must be an integer index \(int or numpy "
                                        r"integer\), got float 1\.7") as info:
        _play_until_error(env_)
    assert info.value.__notes__ == ["the episode is abandoned: call reset()"]
    with pytest.raises(RuntimeError, match=r"the episode was abandoned \(the opponent 'floaty' failed: TypeError"):
        env_.step(0)


@pytest.mark.parametrize("wrap", [np.int64, lambda i: np.array(i, dtype=np.int32)])
def test_opponent_policy_may_return_numpy_integers(wrap: Any) -> None:
    def first_allowed(obs: dict[str, np.ndarray], mask: np.ndarray) -> Any:
        return wrap(np.flatnonzero(mask)[0])

    env_ = BattleEnv("skirmish_line", opponent=first_allowed, learner_side="blue", max_steps=40)
    env_.reset(seed=0)
    truncated = terminated = False
    steps = 0
    while not (terminated or truncated):
        _, _, terminated, truncated, _ = env_.step(int(np.flatnonzero(env_.action_masks())[0]))
        steps += 1
    assert len(env_.battle.actions) > steps  # the opponent played too


def test_action_masks_before_reset_raises_like_step() -> None:
    env_ = BattleEnv("skirmish_line")
    message = r"^the episode has ended \(or never started\): call reset\(\) first$"
    with pytest.raises(RuntimeError, match=message):
        env_.action_masks()
    with pytest.raises(RuntimeError, match=message):
        env_.step(0)
    env_.reset(seed=0)
    assert env_.action_masks().any()


# ---------------------------------------------------------------------- model:PATH opponents


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Untrained MaskablePPO policies saved as model.zip: 3 and 10 unit slots a side, no siege orders."""
    from sb3_contrib import MaskablePPO

    out = tmp_path_factory.mktemp("models")
    paths = {}
    for slots in (3, 10):
        model = MaskablePPO("MultiInputPolicy", BattleEnv("skirmish_line", unit_slots=slots), n_steps=64,
                            batch_size=64, policy_kwargs={"net_arch": [8]}, device="cpu")
        paths[slots] = out / f"slots{slots}.zip"
        model.save(paths[slots])
    return paths


def test_model_opponent_that_fits_plays(models: dict[int, Path]) -> None:
    env_ = BattleEnv("skirmish_line", opponent=f"model:{models[3]}", learner_side="blue", max_steps=30)
    env_.reset(seed=0)
    truncated = terminated = False
    while not (terminated or truncated):
        _, _, terminated, truncated, info = env_.step(int(np.flatnonzero(env_.action_masks())[0]))
    assert info["opponent"] == f"model:{models[3]}"


def test_model_opponent_must_fit_the_scenario_at_construction(models: dict[int, Path]) -> None:
    ten, three = f"model:{models[10]}", f"model:{models[3]}"
    with pytest.raises(ModelLoadError, match=f"^{re.escape(ten)}: the model has 10 unit slots a side and no siege "
                                             "orders but scenario 'siege' is a siege with 10 castle elements$"):
        gym.make("battleline/Siege-v0", opponent=ten, learner_side="red")
    with pytest.raises(ModelLoadError, match=f"^{re.escape(three)}: the model has 3 unit slots a side but scenario "
                                             "'pitched_battle' fields up to 10 units a side$"):
        BattleEnv("pitched_battle", opponent=three)


def test_missing_model_opponent_fails_at_construction(tmp_path: Path) -> None:
    nope = tmp_path / "nope.zip"
    with pytest.raises(ModelAgentError, match=f"^model file not found: {re.escape(str(nope))} "
                                              f"\\(agent 'model:{re.escape(str(nope))}'\\)$"):
        BattleEnv("skirmish_line", opponent=f"model:{nope}")


def test_set_opponent_rejects_a_model_that_does_not_fit(models: dict[int, Path]) -> None:
    env_ = BattleEnv("pitched_battle", opponent="random", learner_side="blue")
    env_.reset(seed=0)
    with pytest.raises(ModelLoadError, match="the model has 3 unit slots a side but scenario 'pitched_battle'"):
        env_.set_opponent(f"model:{models[3]}")
    assert env_.opponent_name == "random"
    env_.set_opponent(f"model:{models[10]}")  # 10 slots fit a pitched battle
    assert env_.opponent_name == f"model:{models[10]}"
    env_.step(0)
