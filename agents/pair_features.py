"""Unit-pair features: what each own unit could do to each enemy unit by charging, and the reverse.

An optional observation key for learned policies (``pairs``, shape (n, n,
N_PAIR_FEAT), float32), added by :class:`training.pair_observation.PairObservation`
in training and by :class:`agents.learned.PolicyAgent` at play when the model
observes it. Row ``i`` is the observer's unit slot ``i``, column ``j`` the enemy's
unit slot ``j`` (uid order per side, as in :mod:`env.encoding`). The values are
the scripted agents' own charge arithmetic (:func:`agents.base.charge_threat`,
:func:`agents.estimates.estimate_combat`), relational and so the same whichever
side observes a mirrored position.

== ================ ==========================================================
f  name             meaning and scale
== ================ ==========================================================
0  valid            1 if both units are on the table (alive, deployed), else the row is 0
1  distance         edge-to-edge gap / 24 inches, at most 2
2  reach            P(own unit i's charge reaches j) if it could declare one now (0..1)
3  arc_front        1 if that charge would hit j's front
4  arc_flank        1 if it would hit j's flank
5  arc_rear         1 if it would hit j's rear
6  cr_diff          expected first-round combat result of i's charge (i − j) / 10, clipped to −1..1
7  breaks_enemy     P(j breaks) in that round (0 when i is expected to lose it)
8  breaks_own       P(i breaks) in that round (0 when i is expected to win it)
9  enemy_reach      P(enemy j's charge reaches i) if it could declare one on i
10 enemy_cr_diff    expected first-round combat result of j's charge (j − i) / 10, clipped
11 enemy_breaks_own P(i breaks) when j charges (0 when j is expected to lose)
12 catch            P(a charge by i destroys a fleeing j in reach: caught or off the table) (0 if j is not fleeing)
== ================ ==========================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from battleline.agents import estimates
from battleline.agents.base import charge_threat
from battleline.env.encoding import side_units
from battleline.env.rules import space

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

PAIR_FEATURES: tuple[str, ...] = (
    "valid", "distance", "reach", "arc_front", "arc_flank", "arc_rear", "cr_diff", "breaks_enemy", "breaks_own",
    "enemy_reach", "enemy_cr_diff", "enemy_breaks_own", "catch",
)  # fmt: skip
"""Names of the pair feature columns, in order."""

N_PAIR_FEAT = len(PAIR_FEATURES)
PAIRS_KEY = "pairs"
"""The observation key of the pair features."""
DISTANCE_SCALE = 24.0
"""Inches per unit of the ``distance`` feature."""
CR_SCALE = 10.0
"""Combat-result points per unit of the ``cr_diff`` features."""
ARCS = ("front", "flank", "rear")


def _arc_index(facing: str) -> int:
    return ARCS.index("flank" if facing in ("left", "right", "flank") else facing if facing in ARCS else "front")


def _on_table(u: UnitState) -> bool:
    return u.alive and u.deployed


def _charge(battle: Battle, c: UnitState, t: UnitState) -> tuple[float, int, float, float, float] | None:
    """(reach chance, arc index, cr diff / CR_SCALE, P(t breaks), P(c breaks)) of ``c`` charging ``t``, or None."""
    threat = charge_threat(battle, c, t)
    if threat is None:
        return None
    p, facing = threat
    est = estimates.estimate_combat(battle, c, t, facing)
    diff = float(np.clip(est.diff / CR_SCALE, -1.0, 1.0))
    return p, _arc_index(facing), diff, est.break_chance if est.diff > 0 else 0.0, est.break_chance if est.diff < 0 else 0.0


def pair_features(battle: Battle, player: int, slots: int) -> np.ndarray:
    """The pair features of ``player``'s view.

    Args:
        battle: the battle (read only).
        player: the observer (0 blue, 1 red).
        slots: unit slots per side ``n`` (as the observation's ``units``).

    Returns:
        float32 array of shape (slots, slots, :data:`N_PAIR_FEAT`); rows of empty slots, of units not on the
        table and of slots beyond a side's units are zeros (see the module table).
    """
    out = np.zeros((slots, slots, N_PAIR_FEAT), dtype=np.float32)
    own = [battle.unit(uid) for uid in side_units(battle, player)][:slots]
    foes = [battle.unit(uid) for uid in side_units(battle, 1 - player)][:slots]
    for i, u in enumerate(own):
        if not _on_table(u):
            continue
        for j, e in enumerate(foes):
            if not _on_table(e):
                continue
            row = out[i, j]
            gap = space.unit_distance(u, e)
            row[0] = 1.0
            row[1] = min(2.0, gap / DISTANCE_SCALE)
            if e.fleeing:
                if charge_threat(battle, u, e) is not None:
                    row[12] = estimates.destroy_fleeing_probability(battle, u, e, gap)
            elif (mine := _charge(battle, u, e)) is not None:
                p, arc, diff, breaks_enemy, breaks_own = mine
                row[2], row[3 + arc], row[6], row[7], row[8] = p, 1.0, diff, breaks_enemy, breaks_own
            if not u.fleeing and (theirs := _charge(battle, e, u)) is not None:
                p, _, diff, breaks_own, _ = theirs
                row[9], row[10], row[11] = p, diff, breaks_own
    return out


__all__ = ["N_PAIR_FEAT", "PAIRS_KEY", "PAIR_FEATURES", "pair_features"]
