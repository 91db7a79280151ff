"""Where the enemy stands and what it can reach, as the scripted agents measure it.

Distances between units (:func:`gap`, kept per pair of footprints), the nearest enemy of a pool of enemies
(:func:`pool_answers`, :func:`nearest_gaps`, :func:`least_index`), the movement effort to reach an enemy
(:func:`effort`), and the geometry of an enemy charge: the arc it would hit (:func:`charge_arc`), whether it could
be declared and with what chance to reach (:func:`charge_threat`, CORE.CHARGE.ELIGIBLE, CORE.CHARGE.RANGE), and the
reach bounds that let a forecast pass over far chargers (:func:`_reach_bound`). Every answer is kept per what it
reads (places, formations, bases, M and special rules); no die is rolled and the battle is never changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from battleline.agents import estimates
from battleline.agents.steering import off_axis
from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.charge_spots import charge_reach
from battleline.env.rules.state import UnitState
from battleline.tactics.threat_zones import can_threaten

if TYPE_CHECKING:
    from shapely.geometry import Polygon

    from battleline.env.rules.battle import Battle


GAP_MEMO_SIZE = 65536
"""Most pairs of unit places :func:`gap` keeps distances for (then it starts afresh)."""
_GAPS: dict[tuple, float] = {}


def gap(u: UnitState, e: UnitState) -> float:
    """:func:`space.unit_distance` of ``u`` and ``e`` (inches, edge to edge), kept per pair of footprints.

    The footprints are keyed by what they are built from: centre, facing,
    files, models, bases and troop type (CORE.GEO.FOOTPRINT).
    """
    key = (u.x, u.y, u.facing, u.files, u.models, u.base_w, u.base_d, u.troop_type,
           e.x, e.y, e.facing, e.files, e.models, e.base_w, e.base_d, e.troop_type)
    d = _GAPS.get(key)
    if d is None:
        if len(_GAPS) >= GAP_MEMO_SIZE:
            _GAPS.clear()
        d = _GAPS[key] = space.unit_distance(u, e)
    return d


def effort(u: UnitState, e: UnitState) -> float:
    """Inches of movement for ``u`` to reach ``e``: the gap plus the wheel that faces it (W·θ)."""
    return gap(u, e) + geo.wheel_distance(u.width, off_axis(u, (e.x, e.y)))


def _place_key(u: UnitState) -> tuple:
    """What ``u``'s footprint is built from (one half of :func:`gap`'s key): centre, facing, files, models, bases
    and troop type (CORE.GEO.FOOTPRINT)."""
    return (u.x, u.y, u.facing, u.files, u.models, u.base_w, u.base_d, u.troop_type)


class PoolAnswers:
    """What the scripted agents keep for one pool of enemies (:func:`pool_answers`), per :func:`_place_key` of the unit
    asking: ``gap`` its least :func:`gap` to the pool (inches), ``nearest`` and ``target`` the index in the pool of
    its nearest enemy and of its :meth:`agents.base.ScriptedAgent.target_for` choice."""

    __slots__ = ("gap", "nearest", "radii", "target")

    def __init__(self) -> None:
        self.gap: dict[tuple, float] = {}
        self.nearest: dict[tuple, int] = {}
        self.target: dict[tuple, int] = {}
        self.radii: list[float] | None = None

    def radii_of(self, pool: list[UnitState]) -> list[float]:
        """:func:`space.radius` of each enemy of ``pool`` (the pool these answers are kept for), inches."""
        radii = self.radii
        if radii is None:
            radii = self.radii = [space.radius(e) for e in pool]
        return radii


POOL_MEMO_SIZE = 4096
"""Most pools of enemies :func:`pool_answers` keeps answers for (then it starts afresh)."""
_POOLS: dict[tuple, PoolAnswers] = {}


def pool_answers(pool: list[UnitState]) -> PoolAnswers:
    """The answers kept for ``pool``: per the uid and :func:`_place_key` of each of its enemies, in order (all that
    :func:`gap` and :func:`effort` read of them, and the uid that breaks ties)."""
    key = tuple((e.uid, e.x, e.y, e.facing, e.files, e.models, e.base_w, e.base_d, e.troop_type) for e in pool)
    kept = _POOLS.get(key)
    if kept is None:
        if len(_POOLS) >= POOL_MEMO_SIZE:
            _POOLS.clear()
        kept = _POOLS[key] = PoolAnswers()
    return kept


def nearest_gaps(pool: list[UnitState], kept: PoolAnswers | None = None) -> Callable[[UnitState], float]:
    """``u -> min(gap(u, e) for e in pool)`` (inches; inf for an empty pool), kept per the footprints of the pool
    and of ``u`` (``kept``: :func:`pool_answers` of ``pool``, looked up when None), so a unit that has not moved
    against enemies that have not moved is answered without a distance looked up."""
    answers = pool_answers(pool) if kept is None else kept
    gaps = answers.gap

    def nearest(u: UnitState) -> float:
        key = _place_key(u)
        d = gaps.get(key)
        if d is None:
            d = gaps[key] = gap(u, pool[least_index(u, pool, gap, answers.radii_of(pool))]) if pool else float("inf")
        return d

    return nearest


GAP_SLACK = 1e-6
"""Inches by which an enemy's lower bound (:func:`least_index`) must exceed the least measure found before the enemy
is passed over (far above the rounding of a centre distance and two radii)."""
SMALL_POOL = 3
"""Pools up to this size are measured enemy by enemy in :func:`least_index` (no bounds worked out)."""


def least_index(u: UnitState, pool: list[UnitState], measure: Callable[[UnitState, UnitState], float],
                radii: list[float] | None = None) -> int:
    """The index in ``pool`` (not empty, distinct units) of the enemy with the least ``(measure(u, e), e.uid)``:
    ``min(range(len(pool)), key=lambda j: (measure(u, pool[j]), pool[j].uid))``.

    ``measure`` is never below :func:`gap` (:func:`gap` itself, :func:`effort`), and the gap between two footprints is
    never below their centre distance less both radii (:func:`space.radius`: every point of a footprint lies within it
    of its centre). So the enemies are measured in order of that bound, and once the bound of the next exceeds the
    least measure found by :data:`GAP_SLACK`, it and all after it are passed over: none of them can be least.
    ``radii``: the pool's radii when kept already (:meth:`PoolAnswers.radii_of`), else worked out.
    """
    n = len(pool)
    if n <= SMALL_POOL:
        return min(range(n), key=lambda j: (measure(u, pool[j]), pool[j].uid))
    ux, uy, ru = u.x, u.y, space.radius(u)
    if radii is None:
        radii = [space.radius(e) for e in pool]
    bounds = sorted((math.hypot(e.x - ux, e.y - uy) - ru - radii[j], j) for j, e in enumerate(pool))
    best_j = bounds[0][1]
    e = pool[best_j]
    best = (measure(u, e), e.uid)
    for bound, j in bounds[1:]:
        if bound > best[0] + GAP_SLACK:
            break
        e = pool[j]
        found = (measure(u, e), e.uid)
        if found < best:
            best, best_j = found, j
    return best_j


def charge_arc(battle: Battle, c: UnitState, t: UnitState) -> str:
    """The facing of ``t`` that ``c`` would charge (ties: the least favourable), "front" when undecidable.

    Forecast copies may overlap their target, where the engine's
    ``charge_facing`` has no answer. Kept per :func:`_threat_key` of ``c`` and ``t`` (their places,
    formations, bases and special rules: all the unrolled ``charge_facing`` reads; no die is rolled);
    worked out in plain floats (:func:`front_rank_arc`).
    """
    key = _threat_key(c, t)
    arc = _ARCS.get(key)
    if arc is None:
        if len(_ARCS) >= THREAT_MEMO_SIZE:
            _ARCS.clear()
        if t.has("skirmishers"):
            arc = "front"  # as charge_facing: CORE.TYPE.SKIRMISHERS, always charged in the front
        else:
            arc = front_rank_arc(c, t)
        _ARCS[key] = arc
    return arc


def front_rank_arc(c: UnitState, t: UnitState) -> str:
    """``charge_facing(battle, c, t, roll=False) or "front"`` for a ``t`` without Skirmishers, in plain floats: the
    first arc of ``t`` (``geo.ARCS`` order: front, left, right, rear; CORE.GEO.UNIT_ARC) holding the most of ``c``'s
    front-rank model centres, "front" when every centre is inside ``t``.

    The centres are ``geo.front_rank_centres``' and their arcs ``geo.arc_counts``', worked out on the same floats
    in the same order of operations (numpy's element-wise arithmetic rounds as Python's does)."""
    f = min(c.files, c.models)
    if f < 1:
        return "front"  # geo.model_centres refuses it; charge_facing's caller answers "front"
    ranks = -(-c.models // f)
    hw = 0.5 * f * c.base_w
    ly = 0.5 * ranks * c.base_d - 0.5 * c.base_d
    cos_c, sin_c = geo.Pose(c.x, c.y, c.facing).front()
    cos_t, sin_t = geo.Pose(t.x, t.y, t.facing).front()
    thw, thd = 0.5 * t.width, 0.5 * t.depth
    counts = dict.fromkeys(geo.ARCS, 0)
    for i in range(f):
        lx = -hw + (i + 0.5) * c.base_w
        px = c.x + lx * sin_c + ly * cos_c
        py = c.y - lx * cos_c + ly * sin_c
        dx = px - t.x
        dy = py - t.y
        arc = geo.point_arc(dx * sin_t - dy * cos_t, dx * cos_t + dy * sin_t, thw, thd)
        if arc != "inside":
            counts[arc] += 1
    best = max(counts.values())
    if best == 0:
        return "front"
    return next(a for a in geo.ARCS if counts[a] == best)


_ARCS: dict[tuple, str] = {}


def charge_threat(battle: Battle, c: UnitState, t: UnitState, target: Polygon | None = None) -> tuple[float, str] | None:
    """Whether ``c`` could declare a charge on ``t`` next: (chance to reach, the facing of ``t`` it would hit), or None.

    None when ``c`` could not declare a charge in its next movement phase
    (:func:`tactics.manoeuvres.can_threaten`: fleeing, a war machine, M 0, engaged), ``t`` is beyond its reach
    (:func:`env.rules.charge_spots.charge_reach`, inches, edge to edge) or not partly in
    its front vision arc (CORE.CHARGE.ELIGIBLE). The chance is the charge roll (the engine's charge M, flyers 10,
    + the higher of 2D6) reaching the gap (:func:`agents.estimates.charge_chance`, CORE.CHARGE.RANGE).
    ``target``: ``t``'s footprint when already built (``t`` may be a forecast copy).
    The geometry (:func:`_threat_geometry`) is kept for the same places of ``c`` and ``t``.
    """
    if not can_threaten(battle, c):
        return None
    if target is not None:
        return _threat_geometry(battle, c, t, target)
    return _kept_threat(battle, c, t, _threat_key(c, t))


def _kept_threat(battle: Battle, c: UnitState, t: UnitState, key: tuple,
                 reach: float | None = None) -> tuple[float, str] | None:
    """:func:`charge_threat`'s kept geometry for ``c`` (able to threaten) and ``t``; ``key`` is :func:`_threat_key`;
    ``reach``: as in :func:`_threat_geometry`."""
    threat = _THREATS.get(key, _UNSET)
    if threat is _UNSET:
        if len(_THREATS) >= THREAT_MEMO_SIZE:
            _THREATS.clear()
        threat = _THREATS[key] = _threat_geometry(battle, c, t, None, reach)
    return threat  # type: ignore[return-value]


THREAT_MEMO_SIZE = 65536
"""Most (charger, target) places :func:`charge_threat` keeps its geometry for (then it starts afresh)."""
_THREATS: dict[tuple, tuple[float, str] | None] = {}


_UNSET = object()


def _threat_key(c: UnitState, t: UnitState) -> tuple:
    """All :func:`_threat_geometry` reads of ``c`` and ``t``: places, formations, bases, M and special rules
    (:func:`_charger_key` of ``c`` then :func:`_target_key` of ``t``)."""
    return _charger_key(c) + _target_key(t)


def _charger_key(c: UnitState) -> tuple:
    """The charger's part of :func:`_threat_key`: place, formation, bases, troop type, M and special rules."""
    return (c.x, c.y, c.facing, c.files, c.models, c.base_w, c.base_d, c.troop_type, c.profile.M, tuple(c.special_rules))


def _target_key(t: UnitState) -> tuple:
    """The target's part of :func:`_threat_key`: place, formation, bases, troop type and special rules."""
    return (t.x, t.y, t.facing, t.files, t.models, t.base_w, t.base_d, t.troop_type, tuple(t.special_rules))


_BOUNDS: dict[tuple, tuple[float, float]] = {}


def _kept_reach_bound(c: UnitState, key: tuple) -> tuple[float, float]:
    """:func:`_reach_bound` of ``c``, kept per ``key`` (its :func:`_charger_key`: the footprint's formation, bases and
    troop type, M and special rules, all the radius and the charge reach read)."""
    bound = _BOUNDS.get(key)
    if bound is None:
        if len(_BOUNDS) >= THREAT_MEMO_SIZE:
            _BOUNDS.clear()
        bound = _BOUNDS[key] = _reach_bound(c)
    return bound


def _reach_bound(c: UnitState) -> tuple[float, float]:
    """(:func:`space.radius` of ``c``, :func:`charge_reach` of ``c``) in inches: ``space.near(c, t, reach)`` is
    ``hypot(c.x - t.x, c.y - t.y) <= (radius + radius(t)) + reach``, the first test of :func:`_threat_geometry`."""
    return space.radius(c), charge_reach(c)


def _threat_geometry(battle: Battle, c: UnitState, t: UnitState, target: Polygon | None,
                     reach: float | None = None) -> tuple[float, str] | None:
    """:func:`charge_threat` once ``c`` can threaten: reach, front arc, chance and facing (geometry of ``c`` and
    ``t`` alone; ``battle`` is not read, ``target`` as there).

    ``reach``: :func:`charge_reach` of ``c`` from a caller that has found ``space.near(c, t, reach)`` true already
    (:meth:`agents.dangers.DangerForecast._danger`, through :func:`_reach_bound`): neither is worked out again. None: both are."""
    if reach is None:
        reach = charge_reach(c)
        if not space.near(c, t, reach):
            return None
    if target is None:  # the arc in floats first, then the footprints' distance
        seen = in_vision_arc(c, t)
        if seen is None:
            seen = geo.partly_in_vision_arc(space.pose(c), c.width, c.depth, space.footprint(t))
        if not seen:
            return None
        dist = geo.distance(space.footprint(c), space.footprint(t))
        if dist > reach:
            return None
    else:
        dist = geo.distance(space.footprint(c), target)
        if dist > reach:
            return None
        seen = geo.partly_in_vision_arc(space.pose(c), c.width, c.depth, target)
    if not seen:
        return None
    return estimates.charge_chance(c, dist), charge_arc(battle, c, t)


ARC_MARGIN = 1e-6
"""Inches by which every corner of a target must lie beyond a side of the viewer's front arc for
:func:`in_vision_arc` to answer False (far above the rounding of the arc's polygon in table inches)."""


def in_vision_arc(c: UnitState, t: UnitState) -> bool | None:
    """``geo.partly_in_vision_arc`` of ``c``'s footprint and ``t``'s (CORE.GEO.VISION_ARC) in plain floats, or None
    where only the polygons can tell.

    True when a corner of ``t`` (``geo.corner_list``: the vertices of its footprint polygon) is in ``c``'s front
    arc as ``geo.point_arc`` says: the first test of ``partly_in_vision_arc``, on the same floats (its local
    frame is worked out element by element in the same order). False when every corner lies more than
    :data:`ARC_MARGIN` inches beyond one side of the arc (behind the front edge's line, or outside one of the 45°
    rays from the front corners): the rectangle then lies in an open half-plane that misses the arc, so the
    interiors cannot meet. None otherwise (the polygons' relation decides)."""
    cs = geo.Pose(c.x, c.y, c.facing)
    cos_f, sin_f = cs.front()
    hw, hd = 0.5 * c.width, 0.5 * c.depth
    cx, cy = c.x, c.y
    behind = right = left = True
    for px, py in geo.corner_list(geo.Pose(t.x, t.y, t.facing), t.width, t.depth):
        dx = px - cx
        dy = py - cy
        lx = dx * sin_f - dy * cos_f
        ly = dx * cos_f + dy * sin_f
        if geo.point_arc(lx, ly, hw, hd) == "front":
            return True
        fy = ly - hd
        behind = behind and fy < -ARC_MARGIN
        right = right and fy < lx - hw - ARC_MARGIN
        left = left and fy < -lx - hw - ARC_MARGIN
    return False if behind or right or left else None
