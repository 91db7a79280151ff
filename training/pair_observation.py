"""The ``pairs`` observation key for training: :func:`agents.pair_features.pair_features` added to a BattleEnv's.

:class:`PairObservation` wraps a :class:`env.battle_env.BattleEnv` (before the
pool's :class:`training.pool.TrainingEnv`) when a training config sets
``pairs: true``; a saved model whose observation has the key gets it from
:class:`agents.learned.PolicyAgent` at play, so the same features reach the
policy in training, evaluation, ``play`` and ``tournament``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from battleline.agents.pair_features import N_PAIR_FEAT, PAIRS_KEY, pair_features


def pair_space(slots: int) -> spaces.Box:
    """The ``pairs`` space for ``slots`` unit slots per side: Box(−1, 2, (slots, slots, N_PAIR_FEAT), float32)."""
    return spaces.Box(-1.0, 2.0, (slots, slots, N_PAIR_FEAT), np.float32)


class PairObservation(gym.ObservationWrapper):
    """Adds ``pairs`` (shape (n, n, N_PAIR_FEAT), float32) to a BattleEnv's ``Dict`` observation, from the learner's side.

    Args:
        env: a :class:`env.battle_env.BattleEnv` (its ``codec.n`` gives ``n``).

    Raises:
        ValueError: the observation already has a ``pairs`` key.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        base = env.observation_space
        if PAIRS_KEY in base.spaces:
            raise ValueError(f"the observation already has a {PAIRS_KEY!r} key")
        self.slots = int(env.unwrapped.codec.n)
        self.observation_space = spaces.Dict({**base.spaces, PAIRS_KEY: pair_space(self.slots)})

    def observation(self, observation: dict[str, Any]) -> dict[str, Any]:
        """``observation`` with the learner's pair features added."""
        base = self.env.unwrapped
        return {**observation, PAIRS_KEY: pair_features(base.battle, base.learner, self.slots)}

    def action_masks(self) -> np.ndarray:
        """The wrapped env's mask (bool, shape (size,)), for sb3-contrib."""
        return self.env.unwrapped.action_masks()


__all__ = ["PairObservation", "pair_space"]
