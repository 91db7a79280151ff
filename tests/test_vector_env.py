"""Tests of many battles in one process: Gymnasium's ``SyncVectorEnv`` over ``BattleEnv`` (:mod:`battleline.env.vector`).

Every test compares the vector env with single ``BattleEnv``\\ s (or a second vector env) driven by
the same seeds and actions, so each figure is checked against an independent run.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import battleline  # noqa: F401 - registers the gymnasium ids
from battleline.env.battle_env import ILLEGAL_PENALTY, LOSS_REWARD, BattleEnv
from battleline.env.vector import action_masks

N = 3
SCENARIO = "skirmish_line"  # three units a side: small and fast


def make_vec(num_envs: int = N, **kwargs: Any) -> gym.vector.VectorEnv:
    """A sync vector env of ``num_envs`` skirmish-line battles against ``random`` (``kwargs`` to each BattleEnv)."""
    return gym.make_vec("battleline/Battle-v0", num_envs=num_envs, vectorization_mode="sync",
                        scenario=SCENARIO, **kwargs)


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One allowed index per row of ``masks`` (bool (N, n)), as int64 (N,)."""
    return np.array([rng.choice(np.flatnonzero(row)) for row in masks], dtype=np.int64)


def rollout(vec: gym.vector.VectorEnv, seed: int | list[int], steps: int, action_seed: int = 0) -> list[Any]:
    """Everything ``steps`` random masked steps return, after ``reset(seed=seed)``."""
    rng = np.random.default_rng(action_seed)
    out: list[Any] = [vec.reset(seed=seed)]
    for _ in range(steps):
        out.append(vec.step(random_actions(action_masks(vec), rng)))
    return out


def test_make_vec_of_a_registered_id_shapes_and_dtypes() -> None:
    vec = gym.make_vec("battleline/PitchedBattle-v0", num_envs=4)
    assert isinstance(vec, gym.vector.SyncVectorEnv)  # the default mode for ids without a vector entry point
    single = BattleEnv("pitched_battle")
    n_actions = single.action_space.n
    obs, infos = vec.reset(seed=7)
    assert set(obs) == set(single.observation_space.spaces)
    for key, space in single.observation_space.spaces.items():
        assert obs[key].shape == (4, *space.shape) and obs[key].dtype == space.dtype, key
    masks = action_masks(vec)
    assert masks.shape == (4, n_actions) and masks.dtype == np.bool_
    assert np.array_equal(masks, obs["action_mask"].astype(bool))
    assert vec.action_space == gym.spaces.MultiDiscrete([n_actions] * 4)
    obs, rewards, terminated, truncated, infos = vec.step(random_actions(masks, np.random.default_rng(0)))
    assert rewards.shape == (4,) and rewards.dtype == np.float64
    assert terminated.shape == truncated.shape == (4,) and terminated.dtype == truncated.dtype == np.bool_
    assert infos["legal_count"].tolist() == action_masks(vec).sum(axis=1).tolist()
    vec.close()


def test_masks_are_each_sub_envs_own_mask() -> None:
    vec = make_vec()
    rng = np.random.default_rng(3)
    obs, _ = vec.reset(seed=11)
    for _ in range(12):
        masks = action_masks(vec)
        for i, sub in enumerate(vec.envs):
            assert np.array_equal(masks[i], sub.unwrapped.action_masks())
        assert np.array_equal(masks, obs["action_mask"].astype(bool))
        obs, *_ = vec.step(random_actions(masks, rng))
    vec.close()


def test_sub_env_i_is_a_battle_env_seeded_seed_plus_i() -> None:
    vec = make_vec()
    obs, _ = vec.reset(seed=40)
    for i in range(N):
        single_obs, _ = BattleEnv(SCENARIO).reset(seed=40 + i)
        assert data_equivalence({k: v[i] for k, v in obs.items()}, single_obs)
    assert data_equivalence(rollout(make_vec(), 40, 6), rollout(make_vec(), [40, 41, 42], 6))
    vec.close()


def test_same_seeds_same_rollouts_and_other_seeds_differ() -> None:
    first = rollout(make_vec(), [1, 2, 3], 15)
    assert data_equivalence(first, rollout(make_vec(), [1, 2, 3], 15))
    assert not data_equivalence(first, rollout(make_vec(), [4, 5, 6], 15))


def test_autoreset_next_step_starts_a_new_battle_like_a_single_env() -> None:
    """With ``max_steps=2`` every sub-env truncates on its 2nd step; the 3rd step resets it (reward 0, action
    ignored) and the 4th and 5th play the new battle (truncated again on the 5th), exactly as a single BattleEnv reset with seed None would."""
    vec = make_vec(max_steps=2)
    singles = [BattleEnv(SCENARIO, max_steps=2) for _ in range(N)]
    rng = np.random.default_rng(5)
    vec.reset(seed=[20, 21, 22])
    for i, env in enumerate(singles):
        env.reset(seed=20 + i)
    for step in range(1, 6):
        actions = random_actions(action_masks(vec), rng)
        obs, rewards, terminated, truncated, _ = vec.step(actions)
        for i, env in enumerate(singles):
            if step == 3:  # the autoreset step
                want_obs, _ = env.reset()
                assert rewards[i] == 0.0 and not terminated[i] and not truncated[i]
            else:
                want_obs, want_reward, want_term, want_trunc, _ = env.step(actions[i])
                assert (rewards[i], terminated[i], truncated[i]) == (want_reward, want_term, want_trunc)
                assert truncated[i] == (step in (2, 5))
            assert data_equivalence({k: v[i] for k, v in obs.items()}, want_obs), (step, i)
            assert np.array_equal(action_masks(vec)[i], env.action_masks())
    vec.close()


def test_autoreset_same_step_keeps_the_last_observation_in_infos() -> None:
    vec = make_vec(max_steps=1, vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP})
    single = BattleEnv(SCENARIO, max_steps=1)
    vec.reset(seed=[30, 31, 32])
    single.reset(seed=30)
    actions = random_actions(action_masks(vec), np.random.default_rng(1))
    obs, _, _, truncated, infos = vec.step(actions)
    last_obs, *_ = single.step(actions[0])
    new_obs, _ = single.reset()
    assert truncated.all() and infos["_final_obs"].all()
    assert data_equivalence(infos["final_obs"][0], last_obs)
    assert data_equivalence({k: v[0] for k, v in obs.items()}, new_obs)
    assert np.array_equal(action_masks(vec)[0], single.action_masks())
    vec.close()


@pytest.mark.parametrize(("mode", "reward"), [("lose", LOSS_REWARD), ("penalise", ILLEGAL_PENALTY)])
def test_an_illegal_index_in_one_sub_env_leaves_the_others_alone(mode: str, reward: float) -> None:
    vec, reference = make_vec(illegal_action=mode), make_vec(illegal_action=mode)
    rng = np.random.default_rng(9)
    obs, _ = vec.reset(seed=[50, 51, 52])
    reference.reset(seed=[50, 51, 52])
    for _ in range(3):
        actions = random_actions(action_masks(vec), rng)
        obs, *_ = vec.step(actions)
        reference.step(actions)
    actions = random_actions(action_masks(vec), rng)
    bad = actions.copy()
    bad[1] = int(np.flatnonzero(~action_masks(vec)[1])[0])
    got = vec.step(bad)
    want = reference.step(actions)
    for i in (0, 2):
        assert data_equivalence([{k: v[i] for k, v in got[0].items()}, *(a[i] for a in got[1:4])],
                                [{k: v[i] for k, v in want[0].items()}, *(a[i] for a in want[1:4])])
    assert got[1][1] == reward and bool(got[2][1]) == (mode == "lose") and got[4]["illegal"].tolist() == [False, True, False]
    assert data_equivalence({k: v[1] for k, v in got[0].items()}, {k: v[1] for k, v in obs.items()})  # unchanged
    vec.close()


def test_action_masks_rejects_a_single_env() -> None:
    with pytest.raises(TypeError, match="needs a gymnasium.vector.VectorEnv, got BattleEnv"):
        action_masks(BattleEnv(SCENARIO))  # type: ignore[arg-type]
