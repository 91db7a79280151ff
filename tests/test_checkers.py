"""The standard checkers pass with default arguments, and the environments follow the ecosystem's conventions.

* Gymnasium's ``check_env`` (on ``env.unwrapped``, as Gymnasium recommends), a random unmasked
  episode through ``gym.make`` (its passive checker on) and Stable-Baselines3's ``check_env``,
  on every shipped scenario (``configs/scenarios/*.yaml``) with the registered id's defaults:
  an index the mask forbids ends the game as the learner's loss instead of raising.
* PettingZoo's ``api_test`` and ``seed_test`` on ``battleline.env.aec_env.env`` (the raw
  environment inside PettingZoo's standard wrappers) and the ``raw_env`` factory.
* Registration, in a fresh interpreter: ``gym.make("battleline:battleline/PitchedBattle-v0")``
  without a prior import, and ``import battleline`` registering one id per scenario file
  plus ``battleline/Battle-v0``.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from gymnasium.wrappers.common import PassiveEnvChecker
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import battleline
from battleline.env import aec_env
from battleline.env.aec_env import BattleAECEnv
from battleline.env.battle_env import LOSS_REWARD, BattleEnv
from battleline.env.rules.config import CONFIG_DIR

REPO_ROOT = Path(__file__).resolve().parents[1]
SCENARIO_FILES = sorted(Path(str(CONFIG_DIR / "scenarios")).glob("*.yaml"))
SHIPPED_IDS = {f"battleline/{''.join(w.capitalize() for w in p.stem.split('_'))}-v0": p.stem for p in SCENARIO_FILES}
"""Registered id → scenario name, derived here from the files (not from battleline.env's own listing)."""


def test_the_shipped_scenarios_are_all_registered() -> None:
    assert len(SCENARIO_FILES) >= 16 and {"pitched_battle", "siege", "skirmish_line"} <= set(SHIPPED_IDS.values())
    for env_id, scenario in SHIPPED_IDS.items():
        assert gym.spec(env_id).kwargs == {"scenario": scenario}


@pytest.mark.parametrize("env_id", sorted(SHIPPED_IDS))
def test_gymnasium_check_env_passes_with_defaults(env_id: str) -> None:
    """No exception and not one warning from Gymnasium's checker (it steps with unmasked random indices)."""
    env = gym.make(env_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym_check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    assert env.unwrapped.illegal_action == "lose"


@pytest.mark.parametrize("env_id", sorted(SHIPPED_IDS))
def test_random_unmasked_episode_through_make_and_the_passive_checker(env_id: str) -> None:
    """Unmasked ``action_space.sample()`` indices, as a checker sends them: each episode ends, most by a loss."""
    env = gym.make(env_id)
    wrapper, found = env, False
    while isinstance(wrapper, gym.Wrapper):
        found = found or isinstance(wrapper, PassiveEnvChecker)
        wrapper = wrapper.env
    assert found, "gym.make adds Gymnasium's passive checker by default"
    env.action_space.seed(0)
    lost_by_illegal = 0
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        for _ in range(1000):
            action = env.action_space.sample()
            legal = bool(obs["action_mask"][action])
            obs, reward, terminated, truncated, info = env.step(action)
            assert info["illegal"] is not legal and not truncated
            if terminated:
                break
        assert terminated, "an unmasked random learner ends the game"
        if info["illegal"]:
            lost_by_illegal += 1
            assert reward == LOSS_REWARD and info["is_success"] is False
            assert info["illegal_reason"].startswith(f"action index {action} is not allowed now")
    assert lost_by_illegal >= 1


@pytest.mark.parametrize("env_id", sorted(SHIPPED_IDS))
def test_sb3_check_env_passes_with_defaults(env_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any advice from SB3 but this one fails the test:
        warnings.filterwarnings("ignore", message="Your observation units has an unconventional shape")
        sb3_check_env(gym.make(env_id).unwrapped, warn=True)


# ---------------------------------------------------------------------- PettingZoo
def test_env_is_the_raw_env_inside_pettingzoos_standard_wrappers() -> None:
    wrapped = aec_env.env(scenario="skirmish_line")
    assert isinstance(wrapped, OrderEnforcingWrapper) and isinstance(wrapped.env, AssertOutOfBoundsWrapper)
    assert type(wrapped.unwrapped) is BattleAECEnv and wrapped.unwrapped.scenario == "skirmish_line"
    raw = aec_env.raw_env(scenario="skirmish_line", illegal_action="raise")
    assert type(raw) is BattleAECEnv and raw.illegal_action == "raise"
    wrapped.reset(seed=0)
    with pytest.raises(AssertionError, match="action is not in action space"):
        wrapped.step(wrapped.unwrapped.codec.size)  # out of bounds: the wrapper's assertion, nothing applied
    assert wrapped.unwrapped.battle.actions == []
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before step"):  # order enforcing
        aec_env.env(scenario="skirmish_line").step(0)


@pytest.mark.parametrize("scenario", ["pitched_battle", "siege", "pitched_battle_t9a"])
def test_pettingzoo_api_and_seed_tests_on_env(scenario: str) -> None:
    factory = aec_env.env if scenario == "pitched_battle" else functools.partial(aec_env.env, scenario=scenario)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice on observation bounds and dtypes
        api_test(factory(), num_cycles=300)
        seed_test(factory, num_cycles=100)


def test_env_illegal_index_loses_for_the_offender_and_wins_for_the_other() -> None:
    wrapped = aec_env.env(scenario="skirmish_line")
    wrapped.reset(seed=2)
    offender = wrapped.agent_selection
    other = "red" if offender == "blue" else "blue"
    obs, *_ = wrapped.last()
    before = wrapped.unwrapped.battle.to_json()
    wrapped.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    assert wrapped.unwrapped.battle.to_json() == before
    returns = {}
    for agent in wrapped.agent_iter():
        _, reward, terminated, truncated, info = wrapped.last()
        assert terminated and not truncated and info["illegal"] and info["illegal_agent"] == offender
        returns[agent] = reward
        wrapped.step(None)
    assert returns == {offender: -1.0, other: 1.0}


# ---------------------------------------------------------------------- registration
def run_fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter from the repository root; its stdout (fails on a non-zero exit)."""
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_with_the_module_prefix_needs_no_prior_import() -> None:
    out = run_fresh(
        "import sys, json, gymnasium as gym\n"
        "assert not any(m == 'battleline' or m.startswith('battleline.') for m in sys.modules)\n"
        "env = gym.make('battleline:battleline/PitchedBattle-v0')\n"
        "obs, info = env.reset(seed=0)\n"
        "obs, reward, terminated, truncated, info = env.step(0)\n"
        "import battleline\n"
        "print(json.dumps([env.unwrapped.scenario, battleline.__file__, sorted(obs)]))\n"
    )
    scenario, package_file, keys = json.loads(out.strip().splitlines()[-1])
    assert scenario == "pitched_battle" and keys == ["action_mask", "globals", "units"]
    assert Path(package_file).resolve() == Path(battleline.__file__).resolve()  # this checkout's code


def test_import_battleline_registers_every_id() -> None:
    out = run_fresh(
        "import json, gymnasium as gym\n"
        "before = [k for k in gym.registry if k.startswith('battleline/')]\n"
        "import battleline\n"
        "after = {k: gym.spec(k).kwargs for k in gym.registry if k.startswith('battleline/')}\n"
        "print(json.dumps([before, after]))\n"
    )
    before, after = json.loads(out.strip().splitlines()[-1])
    assert before == []
    assert after == {"battleline/Battle-v0": {}, **{k: {"scenario": v} for k, v in SHIPPED_IDS.items()}}
    assert gym.spec("battleline/Battle-v0").entry_point == "battleline.env.battle_env:BattleEnv"
    assert gym.make("battleline/Battle-v0", scenario="skirmish_line").unwrapped.codec.n == 3
    assert isinstance(gym.make("battleline/Siege-v0").unwrapped, BattleEnv)
