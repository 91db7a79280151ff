"""battleline environments: the rules engine (``battleline.env.rules``) and the Gymnasium / PettingZoo envs over it.

Importing ``battleline`` (or ``battleline.env``) registers, with Gymnasium (when it is installed):

* ``battleline/Battle-v0``: :class:`battleline.env.battle_env.BattleEnv`, any scenario
  (``gymnasium.make("battleline/Battle-v0", scenario="skirmish_line")``);
* one id per scenario file in ``configs/scenarios``, named from the file name in
  CamelCase: ``pitched_battle.yaml`` → ``battleline/PitchedBattle-v0``,
  ``skirmish_line.yaml`` → ``battleline/SkirmishLine-v0``.

Every keyword of :class:`~battleline.env.battle_env.BattleEnv` can be passed to
``gymnasium.make``; with the defaults, Gymnasium's and SB3's ``check_env`` pass (an
illegal index ends the game as the learner's loss). ``gymnasium.make("battleline:battleline/PitchedBattle-v0")``
imports ``battleline`` itself; ``gymnasium.make_vec(id, num_envs=N)`` steps N battles in one process
(Gymnasium's ``SyncVectorEnv``; the masks of all N: :func:`battleline.env.vector.action_masks`). The PettingZoo environment is
:mod:`battleline.env.aec_env` (``env()`` with PettingZoo's standard wrappers, ``raw_env()``).
The engine itself does not need Gymnasium.
"""

from __future__ import annotations

from battleline.env.rules.config import CONFIG_DIR

SCENARIO_DIR = CONFIG_DIR / "scenarios"
ENTRY_POINT = "battleline.env.battle_env:BattleEnv"


def scenario_env_ids() -> dict[str, str]:
    """Registered id → scenario name, one per file in ``configs/scenarios``."""
    ids = {}
    for path in sorted(SCENARIO_DIR.glob("*.yaml")):
        camel = "".join(part.capitalize() for part in path.stem.split("_"))
        ids[f"battleline/{camel}-v0"] = path.stem
    return ids


def register_envs() -> list[str]:
    """Register the battleline ids with Gymnasium (idempotent); returns the ids."""
    import gymnasium

    ids = ["battleline/Battle-v0"]
    if ids[0] not in gymnasium.registry:
        gymnasium.register(id=ids[0], entry_point=ENTRY_POINT)
    for env_id, scenario in scenario_env_ids().items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=ENTRY_POINT, kwargs={"scenario": scenario})
        ids.append(env_id)
    return ids


try:
    register_envs()
except ImportError:  # pragma: no cover - the engine works without gymnasium
    pass
