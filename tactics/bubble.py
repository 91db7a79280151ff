"""The protected bubble (tactics.md §4.4, ``protected_bubble``) and table quarters (CORE.VP.QUARTERS).

Read-only analyses of a :class:`~env.rules.battle.Battle` (it is never changed) for the agent that rings a
valuable asset with friends: :func:`ring_coverage` (with :func:`ring_arc`), :func:`ring_posts` (with
:func:`extent_along`) and :func:`quarter_balance`.

Coordinates are table inches; angles degrees counter-clockwise from +x.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from battleline.env.rules import geometry as geo
from battleline.env.rules import space, victory
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

# ----------------------------------------------------------------------------- the protected bubble
def ring_coverage(battle: Battle, asset: UnitState, reach: float = 6.0,
                  moved: Mapping[int, UnitState] | None = None) -> float:
    """``protected_bubble``: degrees around ``asset``'s centre covered by friends within ``reach``" of it (0–360).

    ``moved`` stands forecast copies of units (by uid) in for them; the battle is not touched. Each
    friend's arc is :func:`ring_arc` (kept per pair of footprints).
    """
    covered = bytearray(360)
    seen_from = (asset.x, asset.y, asset.facing, asset.width, asset.depth)
    for f in space.alive_units(battle.state, asset.side):
        if f.uid == asset.uid or f.fleeing:
            continue
        if moved and f.uid in moved:
            f = moved[f.uid]
        arc = _kept_arc(seen_from, asset, f, reach)
        if arc is None:
            continue
        lo, hi = arc
        n = hi - lo
        if n >= 360:
            return 360.0
        if n <= 0:
            continue
        start = lo % 360
        end = start + n
        if end <= 360:
            covered[start:end] = b"\x01" * n
        else:
            covered[start:] = b"\x01" * (360 - start)
            covered[:end - 360] = b"\x01" * (end - 360)
    return float(covered.count(1))


RING_MEMO_SIZE = 65536
"""Most (asset, friend, reach) places :func:`ring_arc` keeps arcs for (then it starts afresh)."""
_RING_ARCS: dict[tuple, tuple[int, int] | None] = {}
_UNSET = object()


def ring_arc(asset: UnitState, f: UnitState, reach: float = 6.0) -> tuple[int, int] | None:
    """The whole degrees (lo, hi: ``range(lo, hi)``, table angles CCW from +x, not reduced mod 360) that
    ``f``'s footprint spans seen from ``asset``'s centre, or None when ``f`` is more than ``reach``
    inches from ``asset`` (edge to edge).

    Kept per (asset footprint, friend footprint, reach): centre, facing, width and depth of each
    (CORE.GEO.FOOTPRINT), all the answer depends on.
    """
    return _kept_arc((asset.x, asset.y, asset.facing, asset.width, asset.depth), asset, f, reach)


def _kept_arc(seen_from: tuple[float, float, float, float, float], asset: UnitState, f: UnitState,
              reach: float) -> tuple[int, int] | None:
    """:func:`ring_arc` with the asset's (x, y, facing, width, depth) already read as ``seen_from``."""
    key = (seen_from, f.x, f.y, f.facing, f.width, f.depth, reach)
    arc = _RING_ARCS.get(key, _UNSET)
    if arc is not _UNSET:
        return arc  # type: ignore[return-value]
    if len(_RING_ARCS) >= RING_MEMO_SIZE:
        _RING_ARCS.clear()
    arc = _ring_arc(asset, f, reach)
    _RING_ARCS[key] = arc
    return arc


def _ring_arc(asset: UnitState, f: UnitState, reach: float) -> tuple[int, int] | None:
    """:func:`ring_arc` worked out afresh."""
    if space.unit_distance(asset, f) > reach:
        return None
    mid = math.atan2(f.y - asset.y, f.x - asset.x)
    rel = []
    for x, y in geo.corners(space.pose(f), f.width, f.depth):
        a = math.atan2(y - asset.y, x - asset.x)
        rel.append((a - mid + math.pi) % (2 * math.pi) - math.pi)
    lo, hi = math.degrees(mid + min(rel)), math.degrees(mid + max(rel))
    return int(math.floor(lo)), int(math.ceil(hi))


def quarter_balance(battle: Battle, side: int, moved: Mapping[int, UnitState] | None = None) -> int:
    """Table quarters held by ``side`` less those held by its enemy (CORE.VP.QUARTERS, 100 VP each), with
    the units in ``moved`` (uid -> a forecast copy, e.g. :func:`agents.steering.landing`) where the copies stand
    (:func:`env.rules.victory.quarter_holders`)."""
    holders = victory.quarter_holders(battle, moved)
    return holders.count(side) - holders.count(1 - side)


RING_GAP = 1.1
"""``protected_bubble``: inches between the asset and a ring unit at its post (the engine keeps units 1" apart)."""


def extent_along(u: UnitState, axis: tuple[float, float]) -> tuple[float, float]:
    """(least, greatest) projection of ``u``'s footprint corners on the unit vector ``axis`` (inches)."""
    vals = [x * axis[0] + y * axis[1] for x, y in geo.corners(space.pose(u), u.width, u.depth)]
    return min(vals), max(vals)


def ring_posts(asset: UnitState, ring: Mapping[str, UnitState], gap: float = RING_GAP) -> dict[str, tuple[float, float]]:
    """``protected_bubble``: where the asset and each ring unit should stand, from their real footprints.

    ``ring`` maps "front", "left", "right", "rear" (the asset's side's frame) to units. The posts
    (table points, inches, keyed like ``ring`` plus "asset") form a cross ``gap`` inches apart: the
    asset's front edge level with the nearer (rearmost) front edge of the side units (so that it
    stands between them), the front unit's rear edge ``gap`` ahead of the asset, the side units
    ``gap`` to either side of it with their front edges level with its front edge, the rear unit
    ``gap`` behind it. Each unit keeps its present footprint (a unit that turns may differ).
    """
    ahead = (0.0, 1.0) if asset.side == 0 else (0.0, -1.0)
    left = (-ahead[1], ahead[0])

    def table(lat: float, fwd: float) -> tuple[float, float]:
        return lat * left[0] + fwd * ahead[0], lat * left[1] + fwd * ahead[1]

    a_lo, a_hi = extent_along(asset, ahead)
    l_lo, l_hi = extent_along(asset, left)
    lat = (l_lo + l_hi) / 2
    tops = [extent_along(ring[k], ahead)[1] for k in ("left", "right") if k in ring]
    top = min(tops) if tops else a_hi
    posts = {"asset": table(lat, top - (a_hi - a_lo) / 2)}
    if "front" in ring:
        lo, hi = extent_along(ring["front"], ahead)
        posts["front"] = table(lat, top + gap + (hi - lo) / 2)
    for key, sign in (("left", 1.0), ("right", -1.0)):
        if key in ring:
            lo, hi = extent_along(ring[key], ahead)
            wl, wh = extent_along(ring[key], left)
            offset = (l_hi - l_lo) / 2 + gap + (wh - wl) / 2
            posts[key] = table(lat + sign * offset, top - (hi - lo) / 2)
    if "rear" in ring:
        lo, hi = extent_along(ring["rear"], ahead)
        posts["rear"] = table(lat, top - (a_hi - a_lo) - gap - (hi - lo) / 2)
    return posts


__all__ = [
    "extent_along",
    "quarter_balance",
    "ring_arc",
    "ring_coverage",
    "RING_GAP",
    "RING_MEMO_SIZE",
    "ring_posts",
]
