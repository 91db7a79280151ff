"""Unmasking shooters (tactics.md §3.2): which enemies a shooter sees, and which friends block its sight.

Read-only analyses of a :class:`~env.rules.battle.Battle` (it is never changed): :func:`visible_targets`
(on :func:`moved_view`, a look at the battle with some units moved), :func:`maskers` and :func:`unmask_gain`.

Coordinates are table inches; facings degrees counter-clockwise from +x.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import shapely

from battleline.env.rules import geometry as geo
from battleline.env.rules import shooting, space
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

# ----------------------------------------------------------------------------- unmasking shooters
def visible_targets(battle: Battle, shooter: UnitState, moved: Mapping[int, geo.Pose] | None = None) -> set[int]:
    """Enemies ``shooter`` has in range and sight, with the units in ``moved`` standing at those poses instead.

    The forecast is read on :func:`moved_view` (copies of the moved units only; the battle is not touched).
    """
    b = moved_view(battle, moved) if moved else battle
    s = b.unit(shooter.uid)
    if s.missile is None or not s.alive:
        return set()
    return {e.uid for e in space.alive_units(b.state, 1 - s.side) if shooting.in_range_and_sight(b, s, e)}


def moved_view(battle: Battle, moved: Mapping[int, geo.Pose]) -> Battle:
    """A read-only look at ``battle`` with the units in ``moved`` (uid -> pose) standing at those poses.

    Only the state is there (no dice, events or actions): the moved units are copies
    (:func:`agents.steering.moved_copy`), every other unit, the terrain and the rest of the state are
    ``battle``'s own objects, so nothing may be changed through it; for questions of the table
    (range, sight, cover) where :meth:`Battle.clone` would copy the whole battle.
    """
    from battleline.agents.steering import moved_copy
    from battleline.env.rules.battle import Battle

    view = Battle.__new__(Battle)
    units = list(battle.state.units)
    for uid, p in moved.items():
        units[uid] = moved_copy(units[uid], p)
    view.state = dataclasses.replace(battle.state, units=units)
    view._legal_cache = None
    return view


def maskers(battle: Battle, shooter: UnitState) -> list[UnitState]:
    """Friends standing between ``shooter`` and an enemy in its range and arc that it cannot see (they mask it)."""
    if shooter.missile is None:
        return []
    rng = shooting.weapon(shooter, battle.state).range
    sp = space.pose(shooter)
    found: dict[int, UnitState] = {}
    for e in space.alive_units(battle.state, 1 - shooter.side):
        tp = space.footprint(e)
        if geo.distance(space.footprint(shooter), tp) > rng or not geo.partly_in_vision_arc(sp, shooter.width, shooter.depth, tp):
            continue
        if space.line_of_sight(battle.state, shooter, e):
            continue
        line = shapely.LineString([(shooter.x, shooter.y), (e.x, e.y)]).buffer(shooter.width / 2)
        for f in space.alive_units(battle.state, shooter.side):
            if f.uid != shooter.uid and space.footprint(f).intersects(line):
                found[f.uid] = f
    return sorted(found.values(), key=lambda f: f.uid)


def unmask_gain(battle: Battle, mover: UnitState, pose: geo.Pose, shooters: Iterable[UnitState]) -> int:
    """How many more (shooter, target) pairs the friendly ``shooters`` get if ``mover`` stands at ``pose``."""
    gain = 0
    for s in shooters:
        if s.uid == mover.uid:
            continue
        gain += len(visible_targets(battle, s, {mover.uid: pose})) - len(visible_targets(battle, s))
    return gain


__all__ = [
    "maskers",
    "moved_view",
    "unmask_gain",
    "visible_targets",
]
