"""The opponent pool of a training run and the per-episode training environment.

:func:`build_pool` turns a config's weighted opponents (agent names, ``model:PATH``
and ``self``) plus the learner's frozen snapshots into :class:`PoolEntry` rows;
``self``'s weight is shared evenly by the snapshots kept.

:class:`TrainingEnv` wraps :class:`env.battle_env.BattleEnv`. On every reset it
draws an opponent from the pool with its own seeded generator and installs it
with ``set_opponent`` (the seat and the army lists are drawn by ``BattleEnv``
itself). On every step it adds to ``info``:

* ``order``: ``(phase, kind)`` of the learner's order (phase before the step,
  kind = the action codec block, e.g. ``("movement", "charge")``);
* ``opponent_group``: the opponent's stats group (``self@S`` snapshots → ``self``);

and at the end of an episode (``terminated`` or ``truncated``):

* ``outcome_rewards``: how many steps of the episode delivered a win/draw/loss
  reward — the terminating step, plus, without shaping, any other step with a
  non-zero reward that is not an illegal-action penalty (must be 1 when the game
  ended, 0 when truncated);
* ``episode_return``: the sum of the episode's rewards (float).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import gymnasium as gym
import numpy as np

from battleline.agents.registry import MODEL_PREFIX
from battleline.training.config import SELF, TrainingConfig


@dataclass(frozen=True)
class PoolEntry:
    """One drawable opponent.

    Attributes:
        label: the opponent's name in ``info["opponent"]`` (agent name, ``model:PATH`` or ``self@STEP``).
        group: the name its statistics are logged under (``self`` for every snapshot).
        kind: ``agent`` (a registered name, built fresh per episode) or ``model`` (a saved policy).
        spec: the agent name or the model path.
        weight: relative draw probability (> 0).
        deterministic: for models, whether they play their most likely action.
    """

    label: str
    group: str
    kind: Literal["agent", "model"]
    spec: str
    weight: float
    deterministic: bool = True

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form (for JSON and for sending to worker processes)."""
        return asdict(self)


def build_pool(config: TrainingConfig, snapshots: list[tuple[int, str]]) -> list[PoolEntry]:
    """The pool: the config's opponents, ``self`` replaced by the latest ``max_snapshots`` snapshots.

    Args:
        snapshots: (step, model path) of the learner's frozen snapshots, oldest first.

    Returns:
        Pool entries; a ``self`` entry with no snapshot yet is left out.
    """
    pool: list[PoolEntry] = []
    kept = snapshots[-config.self_play.max_snapshots:]
    for opp in config.opponents:
        if opp.agent == SELF:
            for step, path in kept:
                pool.append(PoolEntry(f"{SELF}@{step}", SELF, "model", path, opp.weight / len(kept),
                                      config.self_play.deterministic))
        elif opp.agent.startswith(MODEL_PREFIX):
            pool.append(PoolEntry(opp.agent, opp.agent, "model", opp.agent[len(MODEL_PREFIX):], opp.weight, True))
        else:
            pool.append(PoolEntry(opp.agent, opp.agent, "agent", opp.agent, opp.weight))
    return pool


class TrainingEnv(gym.Wrapper):
    """A :class:`~env.battle_env.BattleEnv` whose opponent is drawn from a pool each episode.

    Args:
        env: the BattleEnv (not wrapped further).
        pool: the entries to draw from (replace them with :meth:`set_pool`).
        seed: seeds the opponent draws and the opponents' own seeds.

    The observation and action spaces are ``env``'s; :meth:`action_masks` is the
    learner's current mask (bool, shape (size,)).
    """

    def __init__(self, env: gym.Env, pool: list[PoolEntry], seed: int = 0) -> None:
        super().__init__(env)
        self.rng = np.random.default_rng(seed)
        self.pool: list[PoolEntry] = []
        self.set_pool(pool)
        self.entry: PoolEntry | None = None
        self._shaping = float(getattr(env.unwrapped, "reward_shaping", 0.0))
        self._return = 0.0
        self._outcomes = 0

    # ------------------------------------------------------------------ pool and state
    def set_pool(self, pool: list[PoolEntry] | list[dict[str, Any]]) -> None:
        """Replace the pool (entries or their dicts); takes effect from the next episode."""
        entries = [e if isinstance(e, PoolEntry) else PoolEntry(**e) for e in pool]
        if not entries:
            raise ValueError("the opponent pool is empty")
        self.pool = entries

    def get_rng_state(self) -> dict[str, Any]:
        """The generators' states (the pool draws and the BattleEnv's episode draws), JSON-able."""
        return {"pool": self.rng.bit_generator.state, "env": self.env.unwrapped.np_random.bit_generator.state}

    def set_rng_state(self, state: dict[str, Any]) -> None:
        """Restore :meth:`get_rng_state`'s output (when resuming a run)."""
        self.rng.bit_generator.state = state["pool"]
        gen = np.random.Generator(np.random.PCG64())
        gen.bit_generator.state = state["env"]
        self.env.unwrapped.np_random = gen

    def draw(self) -> PoolEntry:
        """Draw one entry by weight with the wrapper's generator."""
        weights = np.array([e.weight for e in self.pool], dtype=np.float64)
        return self.pool[int(self.rng.choice(len(self.pool), p=weights / weights.sum()))]

    def _opponent(self, entry: PoolEntry) -> Any:
        if entry.kind == "agent":
            return entry.spec
        from battleline.agents.learned import PolicyAgent

        return PolicyAgent(entry.spec, deterministic=entry.deterministic, seed=int(self.rng.integers(2**31)),
                           name=entry.label)

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """Draw an opponent, install it and start a new battle (see :meth:`BattleEnv.reset`)."""
        if seed is not None:
            self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x9E37]))
        self.entry = self.draw()
        self.env.unwrapped.set_opponent(self._opponent(self.entry))
        self._return, self._outcomes = 0.0, 0
        obs, info = self.env.reset(seed=seed, options=options)
        info["opponent_group"] = self.entry.group
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step the battle and add ``order``, ``opponent_group`` and, at the end, the reward audit to ``info``."""
        base = self.env.unwrapped
        phase = base.battle.state.phase
        index = int(action)
        kind = base.codec.block_of(index) if 0 <= index < base.codec.size else "invalid"
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._return += reward
        if terminated:
            self._outcomes += 1
        elif self._shaping == 0.0 and reward != 0.0 and not info.get("illegal"):
            self._outcomes += 1  # a win/draw/loss reward off the final step: an audit failure
        if not info.get("illegal"):
            info["order"] = (phase, kind)
        info["opponent_group"] = self.entry.group if self.entry else "?"
        if terminated or truncated:
            info["outcome_rewards"] = self._outcomes
            info["episode_return"] = self._return
            if terminated and self._shaping == 0.0:
                expected = {True: 1.0, False: -1.0}.get(info.get("is_success"), 0.0)
                if info.get("winner") == "draw":
                    expected = 0.0
                info["return_matches_outcome"] = math.isclose(self._return, expected, abs_tol=1e-9)
        return obs, float(reward), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """The learner's mask now: bool of shape (size,)."""
        return self.env.unwrapped.action_masks()


__all__ = ["PoolEntry", "TrainingEnv", "build_pool"]
