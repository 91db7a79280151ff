"""Tactic detectors: did a side use a tactic of ``shared/rules/tactics.md``, and when?

:func:`detect` reads a finished battle (a :class:`~env.rules.battle.Battle`, a replay
file written by ``battleline play --replay``, its JSON text or parsed dict) and returns,
for every detectable tactic of :mod:`tactics.catalogue`, a :class:`Detection`: whether
the side used it, the game turn when its signature was first met (0 = deployment) and
a one-line evidence.

Each detector makes the signature of tactics.md concrete over the event log. The
thresholds are constants of :mod:`tactics.detectors_common`; tactics.md calls its numbers
proposals, and so are these. Everything is pure Python over the events (plus the final
state for the units' profiles and the scenario for their starting formations): nothing is
re-simulated, and the same battle always gives the same detections.

Positions through the battle are rebuilt from the events that carry them
(CORE.SETUP.DEPLOY/SCOUTS, CORE.MOVE.*, CORE.CHARGE.MOVE/FAILED, CORE.PSY.FLEE.MOVE,
CORE.CC.PURSUIT_MOVE); the small shifts of CORE.CHARGE.ALIGN and CORE.CHARGE.ONE_INCH carry
no end position and are not applied. A unit "threatens" another when that one is partly
in its vision arc and within its charge reach (M + 6", CORE.CHARGE.ELIGIBLE); line of
sight is not checked. That is the "threat zone" of tactics.md §0.1.

The log is :class:`~tactics.battle_log.BattleLog`; the detectors are
:mod:`tactics.detectors_battle` (tactics.md §2, §3) and :mod:`tactics.detectors_deployment`
(§4), registered in :data:`~tactics.detectors_common.DETECTORS`.
"""

from __future__ import annotations

from typing import Any

import battleline.tactics.detectors_battle  # noqa: F401 - registers the detectors of tactics.md §2, §3
import battleline.tactics.detectors_deployment  # noqa: F401 - registers the detectors of tactics.md §4
from battleline.env.rules.state import SIDES
from battleline.tactics.battle_log import BattleLog
from battleline.tactics.detectors_battle import _entered_reach
from battleline.tactics.detectors_common import DETECTORS, Detection


def side_index(side: int | str) -> int:
    """0/1 or "blue"/"red" -> 0/1. Raises ValueError otherwise."""
    if isinstance(side, str) and side in SIDES:
        return SIDES.index(side)
    if side in (0, 1):
        return int(side)
    raise ValueError(f"side must be 0, 1, 'blue' or 'red', got {side!r}")


def detect(battle_or_replay: Any, side: int | str) -> dict[str, Detection]:
    """Every detector's verdict for ``side`` in one battle, in catalogue order.

    Args:
        battle_or_replay: a finished Battle, a :class:`BattleLog`, a replay path, its JSON text or dict.
        side: 0 / "blue" or 1 / "red".

    Returns:
        tactic id -> :class:`Detection` for every detectable tactic of the catalogue.
    """
    from battleline.tactics.catalogue import detectable_ids

    log = BattleLog.from_any(battle_or_replay)
    s = side_index(side)
    return {tid: DETECTORS[tid](log, s) for tid in detectable_ids()}


__all__ = ["BattleLog", "DETECTORS", "Detection", "_entered_reach", "detect", "side_index"]
