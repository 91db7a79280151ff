"""Many battles in one process through Gymnasium's vector API.

Every registered id vectorises with Gymnasium's own :class:`gymnasium.vector.SyncVectorEnv`
(``gymnasium.make_vec``'s default mode for these ids, which have no vector entry point)::

    import gymnasium as gym
    import battleline  # registers the ids
    from battleline.env.vector import action_masks

    envs = gym.make_vec("battleline/PitchedBattle-v0", num_envs=8, vectorization_mode="sync")
    obs, infos = envs.reset(seed=0)              # sub-env i is seeded 0 + i
    masks = action_masks(envs)                   # bool (8, n_actions)
    obs, rewards, terminated, truncated, infos = envs.step(actions)   # actions: int (8,)

Keywords of :class:`~battleline.env.battle_env.BattleEnv` go through ``make_vec``
(``opponent="line_advance"``, ``max_steps=200``; ``battleline/Battle-v0`` with ``scenario=...``).
Observations are the single env's ``Dict`` with each entry stacked on a leading axis of
``num_envs`` (``obs["units"]`` float32 (N, slots, features), ``obs["action_mask"]`` int8
(N, n_actions)); rewards float64 (N,), ``terminated`` / ``truncated`` bool (N,); each info key
comes as an array of N values with a ``_key`` bool array saying which sub-envs set it.

Autoreset is Gymnasium's ``NEXT_STEP`` mode: the step that ends a sub-env's episode returns
its last observation and reward; on the next ``step`` that sub-env is reset (its action is
ignored, its reward 0) and it plays on from a new battle drawn from its own generator. Pass
``vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}`` to reset within the
ending step instead (the last observation then is in ``infos["final_obs"]``). Each sub-env
handles an illegal index by its own ``illegal_action``; the others are not touched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv


def action_masks(vec_env: VectorEnv) -> np.ndarray:
    """The learner's action masks of every sub-env of a Gymnasium vector env, bool of shape (num_envs, n_actions).

    Row ``i`` is sub-env ``i``'s own :meth:`~battleline.env.battle_env.BattleEnv.action_masks`
    (through any wrappers), read with ``vec_env.call("action_masks")``; it works for
    :class:`~gymnasium.vector.SyncVectorEnv` and :class:`~gymnasium.vector.AsyncVectorEnv`.
    After a step that ended a sub-env's episode (``NEXT_STEP`` autoreset) its row is the ended
    battle's mask; the action given for it on the next step is ignored.

    Raises:
        TypeError: ``vec_env`` is not a Gymnasium vector env, or its sub-envs' masks are not 1-d bool
            arrays of one length (one line naming the first sub-env that differs).
        RuntimeError: a sub-env was never reset (from :meth:`BattleEnv.action_masks`).
    """
    if not isinstance(vec_env, VectorEnv):
        raise TypeError(f"action_masks needs a gymnasium.vector.VectorEnv, got {type(vec_env).__name__}")
    rows: tuple[Any, ...] = vec_env.call("action_masks")
    first = np.asarray(rows[0])
    for i, row in enumerate(rows):
        row = np.asarray(row)
        if row.dtype != np.bool_ or row.ndim != 1 or row.shape != first.shape:
            raise TypeError(f"sub-env {i}: action_masks() gave {row.dtype} of shape {row.shape}, expected "
                            f"bool of shape {first.shape if first.dtype == np.bool_ else '(n_actions,)'}")
    return np.stack(rows)


__all__ = ["action_masks"]
