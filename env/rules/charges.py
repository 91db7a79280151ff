"""Charges: declaration, reactions, charge rolls and charge moves.

Rules: CORE.MOVE.SEQUENCE, CORE.CHARGE.* and CORE.REACT.*.

The charge move is resolved as its end state: the charger ends with its front
edge flush against the facing of the target fixed at declaration
(CORE.CHARGE.FACING), slid along that edge by the shortest distance that gives
the most models in contact (CORE.CHARGE.CLOSE_DOOR, CORE.CHARGE.ALIGN); if
that spot is blocked it re-positions along the edge (CORE.CHARGE.BLOCKED).

A spot is blocked when the charger there would leave the table, stand in
impassable terrain or the castle, overlap any unit (the target included),
touch a friend or touch an enemy that is not a target of the charge
(CORE.CHARGE.MOVE, 004:L70), or when no route to it is clear (see
:func:`route_clear`). Coming within 1" of another unit does not block a spot:
the charger ignores the 1" rule and the enemies left within 1" are shifted
clear afterwards (CORE.CHARGE.ONE_INCH, 004:L48).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import operator
from collections.abc import Iterator
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import shapely
import shapely.ops
from shapely.geometry import Polygon

from battleline.env.rules import geometry as geo
from battleline.env.rules import kernel, magic, psychology, shooting, space, special_rules
from battleline.env.rules.actions import REACTIONS, Action
from battleline.env.rules.state import BattleState, Engagement, UnitState
from battleline.env.rules.t9a import artillery as t9a_artillery

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

CHARGE_BONUS_REACH = 6.0  # CORE.CHARGE.ELIGIBLE: within M + 6"
FLYER_CHARGE_REACH = 16.0  # CORE.CHARGE.ELIGIBLE: flyers within 16"
FAVOUR = {"front": 0, "left": 1, "right": 1, "rear": 2}


# --------------------------------------------------------------------- geometry
def edge_frame(t: UnitState, facing: str) -> tuple[float, float, float, float, float, float, float]:
    """The target's edge ``facing``: (mid_x, mid_y, along_x, along_y, out_x, out_y, length).

    ``along`` is the unit vector along the edge (towards the target's right
    for front/rear, towards its front for flanks); ``out`` the outward normal.
    Inches.
    """
    p = space.pose(t)
    fx, fy = p.front()
    rx, ry = p.right()
    hw, hd = t.width / 2, t.depth / 2
    if facing == "front":
        return t.x + fx * hd, t.y + fy * hd, rx, ry, fx, fy, t.width
    if facing == "rear":
        return t.x - fx * hd, t.y - fy * hd, rx, ry, -fx, -fy, t.width
    if facing == "left":
        return t.x - rx * hw, t.y - ry * hw, fx, fy, -rx, -ry, t.depth
    return t.x + rx * hw, t.y + ry * hw, fx, fy, rx, ry, t.depth


def flush_pose(t: UnitState, facing: str, c: UnitState, offset: float) -> geo.Pose:
    """The charger pose flush against edge ``facing`` of ``t``, its front midpoint ``offset``" along the edge."""
    return _flush_pose(edge_frame(t, facing), c, offset)


def _flush_pose(edge: tuple[float, float, float, float, float, float, float], c: UnitState, offset: float) -> geo.Pose:
    """:func:`flush_pose` on the edge frame ``edge`` (:func:`edge_frame`)."""
    return _flush_at(edge, c.depth, offset)


def _flush_at(edge: tuple[float, float, float, float, float, float, float], depth: float, offset: float) -> geo.Pose:
    """:func:`flush_pose` on the edge frame ``edge`` for a charger ``depth`` inches deep."""
    mx, my, ax, ay, ox, oy, _ = edge
    cx = mx + ax * offset + ox * depth / 2
    cy = my + ay * offset + oy * depth / 2
    return geo.Pose(cx, cy, math.degrees(math.atan2(-oy, -ox)) % 360.0)


def _touched(
    battle: Battle, c: UnitState, target: UnitState, p: geo.Pose, ignore: set[int], route: ChargeRoute | None = None,
) -> set[int] | None:
    """The enemy units other than ``target`` that ``c``'s footprint at ``p`` would touch, or None when the spot
    is not a legal end of the charge move (CORE.CHARGE.MOVE).

    None when the spot is off the table, in impassable terrain or the castle,
    overlaps any unit by more than EPS (the target included: a unit never
    ends inside another), touches a friendly unit, or (with ``route``) when
    no route from the charger's place to it is clear (:func:`route_clear`).
    """
    touched = _Neighbours(battle, c, target, frozenset(ignore)).touched(p)
    if touched is None or (route is not None and not route_clear(route, p)):
        return None
    return touched


class _Neighbours:
    """What :func:`_touched` tests a charger's end spots on one target against, built once for all its spots.

    The units a spot could touch are those near the charger or the target
    (:func:`space.near`, whatever the spot); their footprints go into one
    object array so that a single vectorised distance call serves a spot.
    The answers are those of testing every unit in turn.

    Args:
        battle: the battle.
        c: the charger; target: the charged unit.
        ignore: uids left out.
    """

    def __init__(self, battle: Battle, c: UnitState, target: UnitState, ignore: frozenset[int]) -> None:
        s = battle.state
        self.state, self.c, self.target = s, c, target
        self.table = (s.table_w, s.table_h)
        reach = c.width + c.depth
        others = [o for o in s.units if o.alive and o.uid != c.uid and o.uid != target.uid and o.uid not in ignore]
        xs = np.array([o.x for o in others], dtype=np.float64)
        ys = np.array([o.y for o in others], dtype=np.float64)
        radii = np.array([space.radius(o) for o in others], dtype=np.float64)
        # space.near(o, c, 0.5) or space.near(o, target, reach), term for term, for all of them at once
        close = (np.hypot(xs - c.x, ys - c.y) <= (radii + space.radius(c)) + 0.5) | (
            np.hypot(xs - target.x, ys - target.y) <= (radii + space.radius(target)) + reach)
        near = [others[i] for i in np.flatnonzero(close).tolist()]
        self.rows = [(o.x, o.y, o.facing, o.width, o.depth) for o in near]
        """The footprints (x, y, facing, width, depth) of the units near the charger or the target, as they stand
        now, in the order they are tested."""
        self.uids = [o.uid for o in near]
        self.friend = [o.side == c.side for o in near]
        self._reference: tuple[list[Polygon], Polygon, np.ndarray] | None = None
        self._cores: dict[tuple[str, int], Polygon] = {}
        """The terrain's, target's and units' polygons shrunk by EPS/2 (:func:`_shrink`), once needed."""
        self.compiled = kernel.contact_scene(s, c, target, near, self.rows)
        """The same tests in the compiled core (:func:`kernel.contact_scene`), or None."""

    @property
    def reference(self) -> tuple[list[Polygon], Polygon, np.ndarray]:
        """The shapely reference's shapes, built on first use (with the compiled core, only for a tie): the
        impassable terrain's polygons, the target's footprint and the near units' footprints (object array (n,))."""
        if self._reference is None:
            self._reference = (
                [space.terrain_poly(t) for t in space.terrain_of(self.state, space.IMPASSABLE)],
                space.footprint(self.target),
                np.array([geo.footprint(geo.Pose(x, y, f), w, d) for x, y, f, w, d in self.rows], dtype=object),
            )
        return self._reference

    def touched(self, p: geo.Pose) -> set[int] | None:
        """:func:`_touched` at pose ``p``, without the route test."""
        if self.compiled is not None:
            answer, uids = self.compiled.touched(p.x, p.y, p.facing)
            if answer >= 0:
                return set(uids) if answer else None
            # -1: a tie, which the shapely reference below decides
        return self._touched_reference(p)

    def _touched_reference(self, p: geo.Pose) -> set[int] | None:
        """:meth:`touched` by the shapely reference."""
        impassable, target_poly, polys = self.reference
        poly = space.footprint_at(self.c, p)
        if not geo.within_table(poly, *self.table):
            return None
        core: list[Polygon] = []
        for k, t in enumerate(impassable):
            if self._overlaps(poly, core, ("terrain", k), t):
                return None
        if not space.castle_end_ok(self.state, self.c, poly):  # SIEGE.SCEN.CASTLE, SIEGE.MOVE.WALLS
            return None
        if self._overlaps(poly, core, ("target", 0), target_poly):
            return None
        touched: set[int] = set()
        if len(polys):
            for i in np.flatnonzero(shapely.distance(poly, polys) <= geo.EPS).tolist():
                if self.friend[i] or self._overlaps(poly, core, ("unit", i), polys[i]):
                    return None
                touched.add(self.uids[i])
        return touched

    def _overlaps(self, poly: Polygon, core: list[Polygon], key: tuple[str, int], other: Polygon) -> bool:
        """:func:`geo.overlaps` of ``poly`` and ``other``, with ``poly`` shrunk at most once (kept in ``core``, empty
        until then) and ``other`` shrunk at most once per spot set (kept under ``key``)."""
        if not poly.intersects(other):
            return False
        if not core:
            core.append(_shrink(poly))
        if key not in self._cores:
            self._cores[key] = _shrink(other)
        return bool(shapely.intersects(core[0], self._cores[key]))


class ChargeRoute:
    """What a charger's route must keep clear of, from its place now (CORE.CHARGE.MOVE, CORE.CHARGE.FEASIBLE).

    Built once per charger and target; :func:`route_clear` tests a route to
    one end spot. The obstacles are impassable terrain and the castle (as for
    any move, :class:`space.Surroundings`) and every unit but the charger, the
    target and the uids in ``ignore``. Obstacles the charger's footprint
    already overlaps where it stands are not counted (the route cannot make
    that worse). Flyers and Ethereal units ignore terrain and units en route
    (CORE.MOVE.FLY, CORE.SR.ETHEREAL): only their end spot counts.

    Args:
        battle: the battle.
        c: the charger, at the place it charges from.
        target: the charged unit.
        facing: the charged edge of ``target``: "front", "left", "right" or "rear".
        ignore: further uids to leave out.
    """

    def __init__(
        self, battle: Battle, c: UnitState, target: UnitState, facing: str, ignore: set[int] | frozenset[int] = frozenset(),
    ) -> None:
        self.unit = c
        self.edge = edge_frame(target, facing)
        """The charged edge: (mid_x, mid_y, along_x, along_y, out_x, out_y, length), see :func:`edge_frame`."""
        self.max_slide = 2.0 * c.profile.M  # CORE.CHARGE.ALIGN
        self.start = space.pose(c)
        self.table = (battle.state.table_w, battle.state.table_h)
        self.flies = special_rules.moves_over_units(c)
        exclude = frozenset({target.uid, *ignore})
        built = None if self.flies else kernel.route_scene(battle.state, c, exclude)
        self.native = None if built is None else built[0]
        """The compiled core's obstacle test (:func:`kernel.route_scene`); None where only the reference applies."""
        self._terrain = list(battle.state.terrain)  # the reference's polygons of it are built with :attr:`obstacles`
        self._aquatic, self._size = c.has("aquatic"), (c.width, c.depth)
        self._rows = None if built is None else built[1]
        self._obstacles: np.ndarray | None = None
        if built is None:
            self._set_obstacles(_route_obstacles(battle.state, c, exclude))
        self.wheel_first_clear: dict[float, bool] = {}
        """Route 2's free wheel at the start, by angle (degrees): whether its swept area is clear."""
        self._contacts: list[geo.Pose] | None = None

    @property
    def contacts(self) -> list[geo.Pose]:
        """Route 4's flush poses on the charged edge, smallest free wheel first, reached by a clear wheel, move and
        close-the-door pivot (see :func:`_door_contacts`); worked out on first use, the same for every end spot."""
        if self._contacts is None:
            self._contacts = [flush for legs, flush in _door_contacts(self) if all(leg_clear(self, leg) for leg in legs)]
        return self._contacts

    @property
    def obstacles(self) -> np.ndarray:
        """Impassable terrain, castle outlines and unit footprints the route may not overlap: object array (n,).

        With the compiled core, the shapely reference's are built on first use (from the units' places when the
        route was made), for a wheel the core leaves to the reference."""
        if self._obstacles is None:
            water = space.WATER if self._aquatic else frozenset()
            terrain = [space.terrain_poly(t) for t in self._terrain if t.kind in space.IMPASSABLE - water]
            units = [geo.footprint(geo.Pose(x, y, f), w, d) for x, y, f, w, d in self._rows.tolist()]
            self._set_obstacles(np.array(terrain + units, dtype=object))
        return self._obstacles

    def _set_obstacles(self, polys: np.ndarray) -> None:
        self._obstacles = polys[~_overlapping(geo.footprint(self.start, *self._size), polys)]
        self.boxes = space.bounds_of(self._obstacles).tolist()
        self._cores: list[Polygon | None] = [None] * len(self._obstacles)  # each shrunk by EPS/2 once needed

    def overlaps_any(self, geom: Polygon, idx: list[int]) -> bool:
        """Whether ``geom`` overlaps any of the obstacles ``idx`` by more than EPS (as :func:`_overlapping`)."""
        hit = shapely.intersects(geom, self.obstacles[idx])
        if not hit.any():
            return False
        cores = []
        for i in np.asarray(idx)[hit].tolist():
            if self._cores[i] is None:
                self._cores[i] = _shrink(self.obstacles[i])
            cores.append(self._cores[i])
        return bool(shapely.intersects(_shrink(geom), np.array(cores, dtype=object)).any())


def _shrink(geom: Polygon) -> Polygon:
    """``geom`` shrunk by EPS/2 (mitred corners): two geometries overlap by more than EPS iff theirs intersect."""
    return shapely.buffer(geom, -geo.EPS / 2, join_style="mitre")


def _overlapping(geom: Polygon, polys: np.ndarray) -> np.ndarray:
    """Which of ``polys`` (object array (n,)) overlap ``geom`` by more than EPS: bool array (n,).

    Touching is not overlapping: both sides are shrunk by EPS/2 (:func:`_shrink`) and tested for intersection,
    as :meth:`space.Surroundings.overlapping` does.
    """
    out = shapely.intersects(geom, polys) if len(polys) else np.zeros(0, dtype=bool)
    if out.any():
        out[out] = shapely.intersects(_shrink(geom), shapely.buffer(polys[out], -geo.EPS / 2, join_style="mitre"))
    return out


def _route_obstacles(state: BattleState, c: UnitState, exclude: frozenset[int]) -> np.ndarray:
    """What a move of ``c`` may not pass through, as :class:`space.Surroundings` has it: impassable terrain (water
    not for Aquatic units, CORE.SR.AQUATIC), the castle outlines (SIEGE.SCEN.CASTLE), then the footprints of the
    units on the table but ``c`` and ``exclude``. Object array (n,) of polygons."""
    water = space.WATER if c.has("aquatic") else frozenset()
    polys = [space.terrain_poly(t) for t in state.terrain if t.kind in space.IMPASSABLE - water]
    polys += space.castle_blocks(state, c)
    polys += [space.footprint(o) for o in state.units if o.alive and o.uid != c.uid and o.uid not in exclude]
    return np.array(polys, dtype=object)


class Hull(NamedTuple):
    """A straight leg of a route: the area swept from the charger's footprint at ``a`` to that at ``b``."""

    a: geo.Pose
    b: geo.Pose


class Wheel(NamedTuple):
    """A wheeling leg of a route: ``angle`` degrees (positive: left) about a front corner from ``pose``."""

    pose: geo.Pose
    angle: float


Leg = Hull | Wheel


def _sweep(route: ChargeRoute, leg: Leg) -> space.Sweep:
    """The shapely swept area of ``leg`` (:class:`space.Sweep`): the reference the compiled core answers as."""
    c = route.unit
    if isinstance(leg, Hull):
        return space.Sweep(space.footprint_at(c, leg.a), space.footprint_at(c, leg.b))
    return space.Sweep(geo.wheel_swept_area(leg.pose, c.width, c.depth, leg.angle))


def leg_clear(route: ChargeRoute, leg: Leg) -> bool:
    """Whether ``leg`` stays on the table and overlaps no obstacle of ``route`` by more than EPS.

    The compiled core answers where it applies (a wheel of at most 90°, whose area is convex) and is sure (no
    overlap of exactly EPS); else :func:`_sweep_clear` on :func:`_sweep`, the shapely reference.
    """
    native, c = route.native, route.unit
    if native is not None:
        answer = -1
        if isinstance(leg, Hull):
            a, b = leg
            answer = native.clear_hull(a.x, a.y, a.facing, b.x, b.y, b.facing, c.width, c.depth)
        elif abs(leg.angle) <= 90.0:
            p = leg.pose
            answer = native.clear_wheel(p.x, p.y, p.facing, c.width, c.depth, leg.angle)
        if answer >= 0:
            return bool(answer)  # -1: an overlap of exactly EPS, a tie the reference settles
    return _sweep_clear(route, _sweep(route, leg))


def _sweep_clear(route: ChargeRoute, sweep: space.Sweep) -> bool:
    """Whether ``sweep`` stays on the table and overlaps no obstacle of ``route`` by more than EPS."""
    minx, miny, maxx, maxy = sweep.bounds
    w, h = route.table
    if minx < -geo.EPS or miny < -geo.EPS or maxx > w + geo.EPS or maxy > h + geo.EPS:
        return False
    if len(route.obstacles) == 0:  # builds route.boxes on first use
        return True
    meet = space.boxes_meeting(sweep.bounds, route.boxes)
    return not (meet and route.overlaps_any(sweep.geom, meet))


def _legs(route: ChargeRoute, end: geo.Pose) -> Iterator[Iterator[Leg]]:
    """Routes 1-3 of :func:`route_clear` to ``end``, each as its legs, built lazily."""
    c, start = route.unit, route.start
    yield iter([Hull(start, end)])
    turn = (end.facing - start.facing + 180.0) % 360.0 - 180.0
    if geo.EPS < abs(turn) <= MAX_FREE_WHEEL:
        if _wheel_first_clear(route, turn):  # route 2: then the hull from there to the end
            yield iter([Hull(geo.wheel(start, c.width, turn, c.depth), end)])
        yield _wheel_last(route, end, turn)


def _wheel_first_clear(route: ChargeRoute, turn: float) -> bool:
    """Route 2 of :func:`route_clear`: whether the free wheel of ``turn`` degrees at the start is clear.

    The wheel does not depend on the end spot: the answer is kept in
    :attr:`ChargeRoute.wheel_first_clear`.
    """
    if turn not in route.wheel_first_clear:
        route.wheel_first_clear[turn] = leg_clear(route, Wheel(route.start, turn))
    return route.wheel_first_clear[turn]


def _wheel_last(route: ChargeRoute, end: geo.Pose, turn: float) -> Iterator[Leg]:
    """Route 3 of :func:`route_clear`: the hull to the pose that a free wheel of ``turn`` degrees takes to ``end``."""
    c = route.unit
    last = geo.wheel(end, c.width, -turn, c.depth, pivot="left" if turn >= 0 else "right")
    yield Hull(route.start, last)
    yield Wheel(last, turn)


MAX_FREE_WHEEL = 90.0
"""Degrees: the largest free wheel of a charge move (CORE.CHARGE.MOVE, 004:L46)."""
WHEEL_STEP = 15.0
"""Degrees between the free-wheel angles tried by the wheel-and-close-the-door route (:func:`route_clear`)."""


def _door_contacts(route: ChargeRoute) -> Iterator[tuple[Iterator[Leg], geo.Pose]]:
    """Route 4 of :func:`route_clear` up to the close-the-door pivot: (swept areas, flush pose) per free-wheel angle.

    For each wheel angle φ (multiples of :data:`WHEEL_STEP` up to
    :data:`MAX_FREE_WHEEL` either way, smallest first) the charger wheels φ
    at the start, moves straight ahead until its leading front corner meets
    the charged edge's line, inside the edge (first contact), and closes the
    door about that corner (CORE.CHARGE.CLOSE_DOOR), ending flush. Angles
    whose straight move never meets the edge are skipped. None of this
    depends on the end spot, which the align slide then reaches.
    """
    c, start = route.unit, route.start
    mx, my, ax, ay, ox, oy, length = route.edge
    flush_facing = math.degrees(math.atan2(-oy, -ox)) % 360.0
    steps = int(MAX_FREE_WHEEL // WHEEL_STEP)
    for phi in sorted((k * WHEEL_STEP for k in range(-steps, steps + 1)), key=abs):
        wheeled = geo.wheel(start, c.width, phi, c.depth) if phi else start
        fx, fy = math.cos(math.radians(wheeled.facing)), math.sin(math.radians(wheeled.facing))
        closing = fx * ox + fy * oy  # < 0: moving towards the edge's line
        if closing > -geo.EPS:
            continue
        corners = {side: geo.to_world(wheeled, lx, c.depth / 2) for side, lx in (("left", -c.width / 2), ("right", c.width / 2))}
        lead = min(corners, key=lambda k: (corners[k][0] - mx) * ox + (corners[k][1] - my) * oy)
        kx, ky = corners[lead]
        dist = -((kx - mx) * ox + (ky - my) * oy) / closing
        along = (kx + fx * dist - mx) * ax + (ky + fy * dist - my) * ay
        if dist < -geo.EPS or abs(along) > length / 2 + geo.EPS:
            continue
        touch = geo.move_straight(wheeled, max(0.0, dist))
        door = (flush_facing - touch.facing + 180.0) % 360.0 - 180.0
        if abs(door) > geo.EPS and (door > 0) != (lead == "left"):
            continue  # the leading corner is the pivot; this would turn the unit away from the edge
        flush = geo.wheel(touch, c.width, door, c.depth) if abs(door) > geo.EPS else touch
        yield _door_legs(route, phi, wheeled, touch, door), flush


def _door_legs(route: ChargeRoute, phi: float, wheeled: geo.Pose, touch: geo.Pose, door: float) -> Iterator[Leg]:
    """The legs of one route of :func:`_door_contacts`, each built only once those before it are clear."""
    if phi:
        yield Wheel(route.start, phi)
    yield Hull(wheeled, touch)
    if abs(door) > geo.EPS:
        yield Wheel(touch, door)


def _door_routes(route: ChargeRoute, end: geo.Pose) -> Iterator[Iterator[Leg]]:
    """Route 4 of :func:`route_clear` to ``end``: from each of :attr:`ChargeRoute.contacts` within 2×M of ``end``
    (CORE.CHARGE.ALIGN), the align slide along the edge."""
    for flush in route.contacts:
        if math.hypot(flush.x - end.x, flush.y - end.y) <= route.max_slide + geo.EPS:
            yield iter([Hull(flush, end)])


def route_clear(route: ChargeRoute, end: geo.Pose) -> bool:
    """CORE.CHARGE.MOVE / CORE.CHARGE.FEASIBLE: whether the charger can reach ``end`` by a clear route.

    The charge move is straight with one free wheel of up to
    :data:`MAX_FREE_WHEEL` degrees at any point (004:L40-L46), then closes the
    door and aligns. Three routes are modelled, each by the engine's swept
    areas (a straight move sweeps the convex hull of its start and end
    footprints, :class:`space.Sweep`; a wheel about a front corner sweeps
    :func:`geo.wheel_swept_area`), and one clear route is enough:

    1. the straight corridor: the hull of the start and end footprints (the
       move, the close-the-door pivot and the align slide in one);
    2. wheel first: the whole change of facing as the free wheel at the
       start, then the hull from there to ``end``;
    3. wheel last: the hull to the pose from which the free wheel ends at
       ``end``, then that wheel;
    4. wheel, move, close the door, align: a free wheel at the start, a
       straight move to first contact with the charged edge, the
       close-the-door pivot about the touching corner and the align slide
       (at most 2×M) to ``end`` (:func:`_door_contacts`), which lets a charge
       go round a unit or terrain beside the direct corridor.

    Routes 2 and 3 are tried only when the change of facing is at most
    :data:`MAX_FREE_WHEEL` degrees; each route only when those before it
    are blocked. A route is clear when it stays on the
    table and overlaps (by more than EPS) neither impassable terrain, nor
    the castle, nor any unit but the charger and the target: no unit moves
    through another (CORE.MOVE.ONE_INCH), friends and incidental targets
    included; touching is not overlapping. Flyers and Ethereal units skip
    the test.
    """
    if route.flies:
        return True
    routes = itertools.chain(_legs(route, end), _door_routes(route, end))
    return any(all(leg_clear(route, leg) for leg in legs) for legs in routes)


def _candidate_offsets(c: UnitState, t: UnitState, facing: str) -> tuple[list[float], float]:
    """(offsets along edge ``facing`` of ``t`` to try, preferred first; the charger's projected offset), inches.

    The preferred spot projects the charger's centre onto the edge and clamps
    it so that the most models touch (CORE.CHARGE.ALIGN); the others step
    away from it by a base width while the charger still overlaps the edge
    by at least one base.
    """
    return _offsets_on(c, edge_frame(t, facing))


def _offsets_on(c: UnitState, edge: tuple[float, float, float, float, float, float, float]) -> tuple[list[float], float]:
    """:func:`_candidate_offsets` on the edge frame ``edge`` (:func:`edge_frame`)."""
    mx, my, ax, ay, _, _, length = edge
    proj = (c.x - mx) * ax + (c.y - my) * ay
    half_gap = abs(length - c.width) / 2
    preferred = max(-half_gap, min(half_gap, proj))
    limit = (length + c.width) / 2 - min(c.base_w, length) / 2
    step = max(c.base_w, 0.25)
    candidates = [preferred]
    k = 1
    while k * step <= 2 * limit + step:
        for sign in (1, -1):
            off = preferred + sign * k * step
            if abs(off) <= limit:
                candidates.append(off)
        k += 1
    return candidates, proj


def contact_placement(
    battle: Battle, c: UnitState, t: UnitState, facing: str, ignore: set[int] | None = None,
    allowed: frozenset[int] = frozenset(), route: bool = True,
) -> tuple[geo.Pose, float, float] | None:
    """Where a charger ends in contact: (pose, overlap in inches, slide in inches), or None.

    The preferred spot projects the charger's centre onto the edge and clamps
    it so that the most models touch (CORE.CHARGE.ALIGN); blocked spots are
    replaced by the nearest free offset along the edge, even with fewer
    contacts (CORE.CHARGE.BLOCKED). A spot may touch the enemy units in
    ``allowed`` (incidental targets, CORE.CHARGE.MULTI_TARGET) but no other
    unit. A spot also needs a clear route from where ``c`` stands
    (:func:`route_clear`); ``route=False`` skips that test (a unit put in
    contact without a charge move). Returns None when no spot is free
    (CORE.CHARGE.FEASIBLE).
    """
    return _spots(battle, c, t, facing, frozenset(ignore or ()), route).placement(allowed)


def incidental_targets(battle: Battle, c: UnitState, t: UnitState, facing: str) -> frozenset[int]:
    """CORE.CHARGE.DECLARE: the enemy units that every free contact spot on ``t``'s edge ``facing`` touches.

    Empty when some free spot touches no other enemy, when no enemy is
    common to all of them, or when no spot is free.
    """
    return _spots(battle, c, t, facing, frozenset(), True).incidental()


def charge_spot(
    battle: Battle, c: UnitState, t: UnitState, facing: str
) -> tuple[tuple[geo.Pose, float, float], frozenset[int]] | None:
    """(contact placement, incidental targets) of a charge of ``c`` at ``t``'s ``facing``; None if no spot is legal.

    A spot touching no other unit needs no incidental target; otherwise the
    enemies every spot touches become incidental targets and the charge may
    end touching them (CORE.CHARGE.DECLARE, CORE.CHARGE.MULTI_TARGET).
    """
    return _spots(battle, c, t, facing, frozenset(), True).charge_spot()


def _table_key(state: BattleState) -> tuple | None:
    """All the charge geometry reads of the table: its size, terrain and every unit on it (place, formation,
    side, Large Target); None in a siege, whose castle changes in ways this does not see."""
    if state.castle:
        return None
    return (  # UnitState.alive and .has spelt out, with the same values; the terrain by its space.terrain_key number
        state.table_w, state.table_h, space.terrain_key(state),
        tuple((o.uid, o.side, o.x, o.y, o.facing, o.files, o.models, o.base_w, o.base_d, o.troop_type,
               "large_target" in o.special_rules)
              for o in state.units if o.deployed and not o.removed and o.models > 0 and o.joined_to is None),
    )


def _unit_key(u: UnitState) -> tuple:
    """All the charge geometry reads of a charger or target (it may be a forecast copy off the table)."""
    return (u.uid, u.side, u.x, u.y, u.facing, u.files, u.models, u.base_w, u.base_d, u.troop_type, u.profile.M,
            tuple(u.special_rules))


class _Memo:
    """Answers of the charge geometry for one arrangement of the table (:func:`_memo`).

    Attributes:
        key: the :func:`_table_key` they hold for.
        spots: :class:`_Spots` by (charger key, target key, facing, ignore, route).
        targets: :func:`_target_geometry_ok` by (charger key, target key).
        table: the units on the table for the compiled core (:func:`kernel.decision_table`), once asked.
    """

    __slots__ = ("key", "spots", "table", "targets")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self.spots: dict[tuple, _Spots] = {}
        self.targets: dict[tuple, bool] = {}
        self.table: Any = None

    def __reduce__(self) -> tuple[type, tuple[tuple]]:
        """A copy or pickle of the memo is an empty memo for the same table (its answers hold compiled objects,
        which neither copy nor pickle; a battle copied with its memo works them out again)."""
        return _Memo, (self.key,)

    def units_table(self, battle: Battle) -> Any:
        """:attr:`table`, made on first use: every unit's row in it is read from what :attr:`key` records of the
        unit (place, facing, files, models, bases, troop type, side, uid), so it holds while the key does."""
        if self.table is None:
            self.table = kernel.decision_table(battle)
        return self.table


_UNIT_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(UnitState))) if (
    all(f.init for f in dataclasses.fields(UnitState)) and not hasattr(UnitState, "__post_init__")) else None
"""Every field of a :class:`UnitState` in order, when each is an ``__init__`` argument and nothing else happens
there (a shallow copy is then ``UnitState(*fields)``); else None."""


def _snapshot(u: UnitState) -> UnitState:
    """A copy of ``u`` that later changes to ``u`` (its place, formation, M or rules) leave as it is."""
    snap = copy.copy(u) if _UNIT_FIELDS is None else UnitState(*_UNIT_FIELDS(u))  # copy.copy's shallow copy, faster
    snap.profile = copy.copy(u.profile)
    snap.special_rules = list(u.special_rules)
    return snap


def _memo(battle: Battle) -> _Memo | None:
    """The battle's charge memo for the table as it stands now (a fresh one if anything moved); None in a siege.

    Every answer kept depends only on what :func:`_table_key` and
    :func:`_unit_key` record, so an answer found again under the same keys
    is the one a fresh computation gives.
    """
    key = _table_key(battle.state)
    if key is None:
        return None
    memo = battle.__dict__.get("_charge_memo")
    if memo is None or memo.key != key:
        memo = _Memo(key)
        battle.__dict__["_charge_memo"] = memo
    return memo


def _spots(
    battle: Battle, c: UnitState, t: UnitState, facing: str, ignore: frozenset[int], route: bool, memo: _Memo | None = None,
) -> _Spots:
    """The :class:`_Spots` of ``c`` on ``t``'s ``facing``, from the battle's memo when the table has not changed."""
    memo = memo or _memo(battle)
    if memo is None:
        return _Spots(battle, c, t, facing, ignore, route)
    key = (_unit_key(c), _unit_key(t), facing, ignore, route)
    spots = memo.spots.get(key)
    if spots is None:
        spots = memo.spots[key] = _Spots(battle, c, t, facing, ignore, route, memo)
    return spots


class _Spots:
    """The contact spots of charger ``c`` on edge ``facing`` of ``t``: each candidate offset's :func:`_touched`.

    :func:`contact_placement`, :func:`incidental_targets` and
    :func:`charge_spot` read the same offsets (:func:`_candidate_offsets`)
    against the same units and route; this works each one out once. With
    the compiled core every offset is settled at once, as the units stand
    now (:func:`kernel.charge_spots` in one call, the shapely reference for
    its ties); else lazily, on copies of the units: the
    :class:`ChargeRoute` is built only when a spot gets as far as its route
    test, and a spot's route only when the spot is otherwise acceptable.
    Kept by :func:`_spots` while the table stays as it is.

    Args:
        battle: the battle; c: the charger; t: the charged unit.
        facing: the charged edge of ``t``.
        ignore: uids left out (of the units and of the route).
        route: whether a spot needs a clear route (:func:`route_clear`).
        memo: the battle's :func:`_memo`, whose units' table the compiled core reads; None for none.
    """

    def __init__(self, battle: Battle, c: UnitState, t: UnitState, facing: str, ignore: frozenset[int], route: bool,
                 memo: _Memo | None = None) -> None:
        self.battle, self.c, self.t, self.facing, self.ignore, self.needs_route = battle, c, t, facing, ignore, route
        self.edge = edge_frame(t, facing)
        self.offsets, self.proj = _offsets_on(c, self.edge)
        """Offsets along the edge (inches), preferred first, and the charger's projected offset."""
        self.length, self.width, self.depth = self.edge[6], c.width, c.depth
        self._poses: list[geo.Pose | None] = [None] * len(self.offsets)
        self._neighbours: _Neighbours | None = None
        self._route: ChargeRoute | None = None
        self._free: list[set[int] | None] = []
        """:func:`_touched` without the route test at ``offsets[i]``, for the first ``len`` offsets."""
        self._reachable: dict[int, bool] = {}
        """:func:`route_clear` to ``offsets[i]``, by ``i``, once asked."""
        self._placements: dict[frozenset[int], tuple[geo.Pose, float, float] | None] = {}
        self._incidental: frozenset[int] | None = None
        table = memo.units_table(battle) if memo is not None and kernel.available() else None
        native = kernel.charge_spots(battle, c, t, ignore, self.edge, self.offsets, route, table)
        if native is None:
            self.c, self.t = _snapshot(c), _snapshot(t)  # the spots are worked out later, as the units stand now
        else:
            self._settle(native)
            self.c = self.t = None  # type: ignore[assignment]  # every answer is in; nothing reads the units again

    def _settle(self, native: list[tuple[int, list[int], int]]) -> None:
        """Every offset's :meth:`free` and (where asked) :meth:`reachable` from the compiled core's answers, the
        shapely reference deciding its ties, while the units stand as they did when the answers were worked out."""
        for k, (answer, uids, clear) in enumerate(native):
            if answer >= 0:
                free = set(uids) if answer else None
            else:  # the compiled core's answer rested on a tie: the shapely reference decides
                if self._neighbours is None:
                    self._neighbours = _Neighbours(self.battle, self.c, self.t, self.ignore)
                free = self._neighbours._touched_reference(self.pose(k))
            self._free.append(free)
            if self.needs_route and free is not None:
                # undecided (a tie) or not worked out: route_clear, whose legs the core answers where it can
                self._reachable[k] = bool(clear) if clear >= 0 else route_clear(self.route, self.pose(k))

    def pose(self, i: int) -> geo.Pose:
        """The charger's flush pose at ``offsets[i]``; worked out once."""
        p = self._poses[i]
        if p is None:
            p = self._poses[i] = _flush_at(self.edge, self.depth, self.offsets[i])
        return p

    def free(self, i: int) -> set[int] | None:
        """:func:`_touched` at ``offsets[i]`` without the route test; worked out once."""
        while len(self._free) <= i:
            if self._neighbours is None:
                self._neighbours = _Neighbours(self.battle, self.c, self.t, self.ignore)
            self._free.append(self._neighbours.touched(self.pose(len(self._free))))
        return self._free[i]

    def reachable(self, i: int) -> bool:
        """Whether a route to ``offsets[i]`` is clear (:func:`route_clear`; True when no route is needed)."""
        if not self.needs_route:
            return True
        if i not in self._reachable:
            self._reachable[i] = route_clear(self.route, self.pose(i))
        return self._reachable[i]

    def touched(self, i: int) -> set[int] | None:
        """:func:`_touched` at ``offsets[i]``, the route tested if :attr:`needs_route`."""
        free = self.free(i)
        return free if free is not None and self.reachable(i) else None

    @property
    def route(self) -> ChargeRoute:
        """The charge route, built on first use."""
        if self._route is None:
            self._route = ChargeRoute(self.battle, self.c, self.t, self.facing, self.ignore)
        return self._route

    def placement(self, allowed: frozenset[int]) -> tuple[geo.Pose, float, float] | None:
        """:func:`contact_placement` with ``allowed`` incidental targets."""
        if allowed not in self._placements:
            self._placements[allowed] = self._place(allowed)
        return self._placements[allowed]

    def _place(self, allowed: frozenset[int]) -> tuple[geo.Pose, float, float] | None:
        width, length = self.width, self.length
        for i, off in enumerate(self.offsets):
            touched = self.free(i)  # the route last: a spot touching others than ``allowed`` needs none
            if touched is not None and touched <= allowed and self.reachable(i):
                overlap = min(off + width / 2, length / 2) - max(off - width / 2, -length / 2)
                return self.pose(i), max(0.0, overlap), abs(off - self.proj)
        return None

    def charge_spot(self) -> tuple[tuple[geo.Pose, float, float], frozenset[int]] | None:
        """:func:`charge_spot`: the placement touching no other unit, else the one allowed the incidental targets."""
        placed = self.placement(frozenset())
        if placed is not None:
            return placed, frozenset()
        incidental = self.incidental()
        if incidental:
            placed = self.placement(incidental)
            if placed is not None:
                return placed, incidental
        return None

    def incidental(self) -> frozenset[int]:
        """:func:`incidental_targets` (the route always tested)."""
        if self._incidental is None:
            common: set[int] | None = None
            for i in range(len(self.offsets)):
                touched = self.touched(i)
                if touched is None:
                    continue
                common = touched if common is None else common & touched
                if not common:
                    break
            self._incidental = frozenset(common or ())
        return self._incidental


def charge_facing(battle: Battle, c: UnitState, t: UnitState, roll: bool) -> str | None:
    """The facing of ``t`` that ``c`` charges (CORE.GEO.UNIT_ARC, CORE.CHARGE.FACING).

    Ties between arcs are settled by a D6 when ``roll`` is True (1–3 the least
    favourable arc for the charger, 4–6 the most favourable); when False the
    least favourable is returned. None if no front-rank model lies in any arc.
    """
    if t.has("skirmishers"):
        return "front"  # CORE.TYPE.SKIRMISHERS: always charged in the front
    found = _arcs(t.x, t.y, t.facing, t.width, t.depth, c.x, c.y, c.facing, c.files, c.models, c.base_w, c.base_d)
    if found is None:  # every front-rank model inside the target: no arc
        return None
    arcs = list(found)
    if roll:
        battle.emit("CORE.GEO.ARCS", unit=c.uid, target=t.uid, arcs=arcs)
    if not arcs:
        return None
    if len(arcs) == 1 or not roll:
        return arcs[0]
    face = battle.dice.d6("CORE.GEO.UNIT_ARC")[0]
    ordered = sorted(arcs, key=lambda a: FAVOUR[a])
    chosen = ordered[0] if face <= 3 else ordered[-1]
    battle.emit("CORE.GEO.UNIT_ARC", unit=c.uid, target=t.uid, tied=arcs, roll=face, arc=chosen)
    return chosen


@lru_cache(maxsize=16384)
def _arcs(tx: float, ty: float, tf: float, tw: float, td: float, cx: float, cy: float, cf: float, files: int,
          models: int, base_w: float, base_d: float) -> tuple[str, ...] | None:
    """The arcs of a target (pose, footprint W x D) holding the most of a charger's front-rank centres (pose,
    files, models, base), 'inside' left out (:func:`geo.unit_arc`, CORE.GEO.UNIT_ARC); None when every centre is
    inside the target. Inches and degrees; kept by value (the answer is a function of these numbers alone)."""
    try:
        arcs = geo.unit_arc(geo.Pose(tx, ty, tf), tw, td, geo.front_rank_centres(geo.Pose(cx, cy, cf), files, models,
                                                                                 base_w, base_d))
    except ValueError:
        return None
    return tuple(a for a in arcs if a != "inside")


@lru_cache(maxsize=16384)
def _reach_and_arc(cx: float, cy: float, cf: float, cw: float, cd: float, tx: float, ty: float, tf: float, tw: float,
                   td: float, reach: float) -> bool:
    """Whether a target's footprint (pose, W x D) lies within ``reach`` inches of a charger's and partly in its
    front arc (CORE.CHARGE.ELIGIBLE, CORE.GEO.VISION_ARC: :func:`geo.distance`, :func:`geo.partly_in_vision_arc`).
    Inches and degrees; kept by value (the answer is a function of these numbers alone)."""
    tt = space._footprint(tx, ty, tf, tw, td)  # space.footprint's own cache of footprints by value
    if geo.distance(space._footprint(cx, cy, cf, cw, cd), tt) > reach:
        return False
    return geo.partly_in_vision_arc(geo.Pose(cx, cy, cf), cw, cd, tt)  # its corners decide first, without shapely


# --------------------------------------------------------------------- declarations
def start(battle: Battle) -> None:
    """Open the Movement phase at the charge declarations (CORE.MOVE.SEQUENCE)."""
    battle.state.queue["charges"] = []
    psychology.forget_fear(battle)
    battle.emit("CORE.MOVE.SEQUENCE", player=battle.state.active, step="charges")
    battle.set_stage("charge")


def can_charge(battle: Battle, c: UnitState) -> bool:
    """CORE.CHARGE.ELIGIBLE for the charger alone (no target checks)."""
    return _can_charge(battle, c, {ch["charger"] for ch in battle.state.queue.get("charges", [])})


def _can_charge(battle: Battle, c: UnitState, declared: set[int]) -> bool:
    """:func:`can_charge`, the uids that have declared a charge this phase given."""
    return (
        c.alive
        and c.side == battle.state.active
        and c.uid not in declared
        and not c.fleeing
        and c.troop_type != "war_machine"
        and not c.flags.get("rallied")
        and not c.flags.get("stupid")
        and c.profile.M > 0
        and not magic.forbids(battle, c, "charge")  # Beast Cowers (CORE.MAGIC.SPELL.BEASTS.3)
        and not t9a_artillery.forbids(battle, c, "charge")  # T9A.SHAKEN
        and not psychology.engaged(battle, c)
    )


def charge_reach(c: UnitState) -> float:
    """The longest distance ``c`` may declare a charge at: M + 6", flyers 16" (CORE.CHARGE.ELIGIBLE)."""
    return FLYER_CHARGE_REACH if special_rules.flyer(c) else c.profile.M + CHARGE_BONUS_REACH


def target_ok(battle: Battle, c: UnitState, t: UnitState) -> bool:
    """CORE.CHARGE.ELIGIBLE / FEASIBLE for one target: arc, LOS, reach, a free contact spot."""
    return _target_ok(battle, c, t, _memo(battle))


def _target_ok(battle: Battle, c: UnitState, t: UnitState, memo: _Memo | None) -> bool:
    """:func:`target_ok`, the geometry kept in ``memo`` (the battle's :func:`_memo`, or None for none)."""
    if not t.alive or t.side == c.side:
        return False
    if _door(battle, c, t) is not None:
        return True  # SIEGE.TOWER.ASSAULT: an assault at a tower's door the unit touches
    if memo is None:
        return _target_geometry_ok(battle, c, t, None)
    key = (_unit_key(c), _unit_key(t))
    ok = memo.targets.get(key)
    if ok is None:
        ok = memo.targets[key] = _target_geometry_ok(battle, c, t, memo)
    return ok


def _target_geometry_ok(battle: Battle, c: UnitState, t: UnitState, memo: _Memo | None) -> bool:
    """The tests of :func:`target_ok` after the target's side and a tower door: reach, arc, LOS, a free spot."""
    reach = charge_reach(c)
    if not space.near(c, t, reach):
        return False
    if not _reach_and_arc(c.x, c.y, c.facing, c.width, c.depth, t.x, t.y, t.facing, t.width, t.depth, reach):
        return False
    if not space.line_of_sight(battle.state, c, t):
        return False
    if battle.state.castle:  # SIEGE.ASSAULT.CHARGE: climbing gear to charge defenders on the walls
        from battleline.env.rules.siege import play

        if not play.charge_target_ok(battle.state, c, t):
            return False
    facing = charge_facing(battle, c, t, roll=False)
    if facing is None:
        return False
    return _spots(battle, c, t, facing, frozenset(), True, memo).charge_spot() is not None


def _door(battle: Battle, c: UnitState, t: UnitState):
    """The tower or citadel at whose door ``c`` may assault ``t`` (SIEGE.TOWER.ASSAULT), else None."""
    if not battle.state.castle:
        return None
    from battleline.env.rules.siege import play

    return play.door_element(battle.state, c, t)


def _declare_at_door(battle: Battle, c: UnitState, t: UnitState, eid: str) -> None:
    """SIEGE.TOWER.ASSAULT: a charge at a garrison through its tower's door. No arc or charge move (the
    unit touches the door); the garrison cannot flee through the attacker or shoot out of the door, so
    it holds (DEFAULT); Fear and Terror are tested as for any charge."""
    battle.state.queue["charges"].append(
        {"charger": c.uid, "target": t.uid, "facing": "front", "reaction": None, "start_distance": 0.0,
         "incidental": [], "door": eid})
    c.flags["declared_charge"] = True
    battle.emit("CORE.CHARGE.DECLARE", unit=c.uid, target=t.uid, facing="front", incidental=[], door=eid)
    battle.emit("SIEGE.TOWER.ASSAULT", element=eid, unit=c.uid, target=t.uid, at="door", declared=True)
    outcome = psychology.charge_psychology(battle, c, t)
    if outcome == "cancelled":
        battle.state.queue["charges"].pop()
        return
    if outcome == "fled":  # a garrison failing Terror flees as usual
        battle.state.queue["charges"][-1]["reaction"] = "flee"
        battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction="flee", forced="terror")
        return
    battle.state.queue["charges"][-1]["reaction"] = "hold"
    battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction="hold", forced="door")


def legal_declarations(battle: Battle) -> list[Action]:
    """Legal ``charge`` actions of the phasing player (CORE.CHARGE.ELIGIBLE, CORE.CHARGE.FEASIBLE).

    Outside a siege (where a tower's door comes first) an enemy that fails
    :func:`target_ok`'s first test, the cheap reach pre-filter
    (:func:`space.near` at :func:`charge_reach`), is passed over at once: a
    charger's enemies are measured in one numpy call giving the very values
    :func:`space.near` gives, so the actions are those of asking
    :func:`target_ok` of every enemy.
    """
    s = battle.state
    enemies = space.alive_units(s, 1 - s.active)
    memo = _memo(battle)
    declared = {ch["charger"] for ch in s.queue.get("charges", [])}
    chargers = [c for c in space.alive_units(s, s.active) if _can_charge(battle, c, declared)]
    if s.castle or not chargers or not enemies:
        return [Action("charge", c.uid, t.uid) for c in chargers for t in enemies if _target_ok(battle, c, t, memo)]
    xs = np.array([t.x for t in enemies], dtype=np.float64)
    ys = np.array([t.y for t in enemies], dtype=np.float64)
    radii = np.array([space.radius(t) for t in enemies], dtype=np.float64)
    cx = np.array([[c.x] for c in chargers], dtype=np.float64)
    cy = np.array([[c.y] for c in chargers], dtype=np.float64)
    bonus = np.array([[space.radius(c)] for c in chargers], dtype=np.float64)
    reach = np.array([[charge_reach(c)] for c in chargers], dtype=np.float64)
    near = np.hypot(cx - xs, cy - ys) <= (bonus + radii) + reach  # space.near, term for term, every pair at once
    acts = []
    rows, cols = np.nonzero(near)  # charger by charger, then enemy by enemy
    for k, i in zip(rows.tolist(), cols.tolist()):
        c, t = chargers[k], enemies[i]
        if _target_ok(battle, c, t, memo):
            acts.append(Action("charge", c.uid, t.uid))
    return acts


def apply_declaration(battle: Battle, action: Action) -> None:
    """Declare a charge (then wait for the reaction) or end the declarations."""
    if action.kind == "end_phase":
        resolve_all(battle)
        return
    c, t = battle.unit(action.unit), battle.unit(action.target)
    door = _door(battle, c, t)
    if door is not None:
        _declare_at_door(battle, c, t, door.id)
        return
    lx, ly = geo.to_local(space.pose(t), c.x, c.y)
    battle.emit("CORE.GEO.LOCAL_FRAME", unit=t.uid, point_of=c.uid, x=round(lx, 3), y=round(ly, 3),
                half_width=round(t.width / 2, 3), half_depth=round(t.depth / 2, 3))
    facing = charge_facing(battle, c, t, roll=True)
    spot = charge_spot(battle, c, t, facing) if facing is not None else None
    incidental = sorted(spot[1]) if spot is not None else []
    battle.state.queue["charges"].append(
        {"charger": c.uid, "target": t.uid, "facing": facing, "reaction": None, "start_distance": space.unit_distance(c, t),
         "incidental": incidental}
    )
    c.flags["declared_charge"] = True
    battle.emit("CORE.CHARGE.ELIGIBLE", unit=c.uid, target=t.uid, distance=round(space.unit_distance(c, t), 3))
    battle.emit("CORE.CHARGE.DECLARE", unit=c.uid, target=t.uid, facing=facing, incidental=incidental)
    if incidental:  # the incidental targets hold (DEFAULT); the charged unit reacts as usual
        battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, incidental=incidental, stage="declared")
    battle.emit("CORE.CHARGE.FACING", unit=c.uid, target=t.uid, facing=facing)
    outcome = psychology.charge_psychology(battle, c, t)
    if outcome == "cancelled":  # the charger failed Terror (CORE.PSY.TERROR)
        battle.state.queue["charges"].pop()
        return
    if outcome == "fled":  # the charged unit failed Terror: its Flee! is made (CORE.PSY.TERROR)
        battle.state.queue["charges"][-1]["reaction"] = "flee"
        battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction="flee", forced="terror")
        return
    battle.set_stage("react")


# --------------------------------------------------------------------- reactions
def _forced_reaction(battle: Battle, t: UnitState) -> str | None:
    if psychology.engaged(battle, t):
        return "hold"  # CORE.REACT.ENGAGED
    if t.troop_type == "war_machine":
        return "hold"  # CORE.TYPE.WAR_MACHINE: a crew neither flees nor stands and shoots (CORE.WM.PANIC, FIRE_RULES)
    if t.fleeing:
        return "flee"  # CORE.REACT.ALREADY_FLEEING / FLEE_FINAL
    return None


def can_stand_and_shoot(battle: Battle, t: UnitState, c: UnitState, start_distance: float) -> bool:
    """CORE.REACT.STAND_SHOOT eligibility (not engaged, charger ≥ its M away, no Move or Fire / Slow to Fire).

    ``start_distance`` is the charger's footprint-to-footprint distance from ``t``
    when the charge was declared, in inches (0 for a charge at a tower door). In a
    siege, a unit not engaged that has not stood and shot yet may also react with
    boiling oil or stones from a wall (SIEGE.REACT.WALL), with or without missiles.
    """
    if battle.state.castle and not psychology.engaged(battle, t) and not t.flags.get("stood_and_shot"):
        from battleline.env.rules.siege import play

        if play.wall_reaction_gear(battle.state, t, c) is not None:
            return True  # SIEGE.REACT.WALL: oil or stones, with or without missiles
    if t.missile is None or t.has("slow_to_fire") or psychology.engaged(battle, t):
        return False
    if shooting.weapon(t, battle.state).move_or_fire:
        return False
    if start_distance < c.profile.M:
        return False
    if t.flags.get("stood_and_shot"):
        return False
    return shooting.in_range_and_sight(battle, t, c)


def legal_reactions(battle: Battle) -> list[Action]:
    """Legal ``react`` actions of the charged unit (CORE.REACT.DECLARE)."""
    ch = battle.state.queue["charges"][-1]
    t, c = battle.unit(ch["target"]), battle.unit(ch["charger"])
    forced = _forced_reaction(battle, t)
    if forced is not None:
        return [Action("react", t.uid, c.uid, forced)]
    options = ["hold", "flee"]
    if can_stand_and_shoot(battle, t, c, ch["start_distance"]):
        options.append("stand_and_shoot")
    return [Action("react", t.uid, c.uid, o) for o in REACTIONS if o in options]


def apply_reaction(battle: Battle, action: Action) -> None:
    """Record the reaction; Flee! is made at once (CORE.REACT.FLEE)."""
    ch = battle.state.queue["charges"][-1]
    t, c = battle.unit(ch["target"]), battle.unit(ch["charger"])
    if action.kind == "end_phase":
        reaction = _forced_reaction(battle, t) or "hold"
    else:
        reaction = action.option
    ch["reaction"] = reaction
    rule = {"hold": "CORE.REACT.HOLD", "stand_and_shoot": "CORE.REACT.STAND_SHOOT", "flee": "CORE.REACT.FLEE"}[reaction]
    battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction=reaction)
    if reaction == "flee":
        if t.flags.get("fled_reaction"):
            battle.emit("CORE.REACT.FLEE_FINAL", unit=t.uid, charger=c.uid)
        elif t.fleeing:
            battle.emit("CORE.REACT.ALREADY_FLEEING", unit=t.uid, charger=c.uid)
            _flee_from(battle, t, c)
        else:
            _flee_from(battle, t, c)  # emits CORE.REACT.FLEE with the flee move
    elif reaction == "stand_and_shoot":
        t.flags["stood_and_shot"] = True
        battle.emit(rule, unit=t.uid, charger=c.uid)
    else:
        battle.emit(rule if not psychology.engaged(battle, t) else "CORE.REACT.ENGAGED", unit=t.uid, charger=c.uid)
        if t.missile is not None and t.has("slow_to_fire") and t.troop_type != "war_machine":
            battle.emit("CORE.SR.SLOW_TO_FIRE", unit=t.uid, charger=c.uid, stand_and_shoot=False)
    battle.set_stage("charge")


def _can_fire(battle: Battle, t: UnitState, c: UnitState) -> bool:
    """A siege Stand and Shoot fires missiles only where the normal rules allow it (the rest is oil or stones)."""
    if shooting.weapon(t, battle.state).move_or_fire or t.has("slow_to_fire"):
        return False
    return shooting.in_range_and_sight(battle, t, c)


def _flee_from(battle: Battle, t: UnitState, c: UnitState) -> None:
    t.flags["fled_reaction"] = True
    psychology.flee(battle, t, (c.x, c.y), "CORE.REACT.FLEE")


# --------------------------------------------------------------------- resolution
def resolve_all(battle: Battle) -> None:
    """Resolve stand-and-shoot, then every charge roll and move, then compulsory moves.

    CORE.MOVE.SEQUENCE steps 2–4; chargers of one target roll first, then move
    in declaration order (CORE.CHARGE.SAME_TARGET, CORE.CHARGE.RESOLVE).
    """
    charges: list[dict[str, Any]] = battle.state.queue.get("charges", [])
    for ch in charges:
        if ch["reaction"] == "stand_and_shoot":
            t, c = battle.unit(ch["target"]), battle.unit(ch["charger"])
            if t.alive and c.alive and t.missile is not None and (not battle.state.castle or _can_fire(battle, t, c)):
                shooting.resolve_fire(battle, t, c, stand_and_shoot=True)
    targets: list[int] = []
    for ch in charges:
        if ch["target"] not in targets:
            targets.append(ch["target"])
    for tid in targets:
        group = [ch for ch in charges if ch["target"] == tid]
        for ch in group:
            c = battle.unit(ch["charger"])
            ch["range"] = None
            if ch.get("door") and ch["reaction"] == "hold":
                _arrive_at_door(battle, c, battle.unit(ch["target"]), ch["door"])
                continue
            if c.alive and not c.fleeing:
                high, faces = battle.dice.highest_2d6("CORE.CHARGE.RANGE")
                ch["range"] = special_rules.charge_m(c) + high
                if special_rules.flyer(c):
                    battle.emit("CORE.SR.FLY", unit=c.uid, charge_m=special_rules.charge_m(c), range=ch["range"])
                ch["high"] = high
        if len(group) > 1:
            battle.emit("CORE.CHARGE.SAME_TARGET", target=tid, chargers=[ch["charger"] for ch in group])
        for ch in group:
            if ch["range"] is not None:
                _resolve_one(battle, ch)
    battle.state.queue["charges"] = []
    battle.emit("CORE.CHARGE.RESOLVE", player=battle.state.active, charges=len(charges))
    psychology.compulsory_moves(battle)
    battle.emit("CORE.MOVE.REMAINING", player=battle.state.active)
    battle.set_stage("move")


def _arrive_at_door(battle: Battle, c: UnitState, t: UnitState, eid: str) -> None:
    """SIEGE.TOWER.ASSAULT: a door assault needs no charge roll; it engages if the door is still there to
    fight at (both alive, the garrison still in the tower, the attacker still touching it)."""
    from battleline.env.rules.siege import play
    from battleline.env.rules.siege.castle import element

    if c.alive and not c.fleeing and t.alive and play.door_element(battle.state, c, t) is element(battle.state, eid):
        play.engage_at_door(battle, c, t, element(battle.state, eid))
        return
    c.flags["charged"] = True
    battle.emit("SIEGE.TOWER.ASSAULT", element=eid, unit=c.uid, target=t.uid, at="door", engaged=False)


def _resolve_one(battle: Battle, ch: dict[str, Any]) -> None:
    c, t = battle.unit(ch["charger"]), battle.unit(ch["target"])
    c.flags["charged"] = True
    if not t.alive:
        battle.emit("CORE.CHARGE.FEASIBLE", unit=c.uid, target=t.uid, possible=False, reason="target gone")
        _failed_move(battle, c, t, ch.get("high", 0), (t.x, t.y))
        return
    dist = space.unit_distance(c, t)
    success = ch["range"] >= dist - geo.EPS
    battle.emit("CORE.CHARGE.RANGE", unit=c.uid, target=t.uid, range=ch["range"], distance=dist, success=success)
    if ch["reaction"] == "flee" or t.fleeing:
        _versus_fleeing(battle, c, t, success, ch)
        return
    incidental = ch.get("incidental", [])
    if not success:
        if incidental:  # CORE.CHARGE.MULTI_TARGET: an unreachable primary target fails the whole charge
            battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="failed", primary_unreachable=True)
        _failed_move(battle, c, t, ch["high"], (t.x, t.y))
        return
    allowed = _reachable_incidental(battle, c, t, ch) if incidental else frozenset()
    placed = contact_placement(battle, c, t, ch["facing"], allowed=allowed)
    if placed is None:
        if len(allowed) < len(incidental):
            battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="failed", no_path_avoids_dropped=True)
        battle.emit("CORE.CHARGE.FEASIBLE", unit=c.uid, target=t.uid, possible=False, reason="no clear spot or route")
        battle.emit("CORE.CHARGE.BLOCKED", unit=c.uid, target=t.uid)
        _failed_move(battle, c, t, ch["high"], (t.x, t.y))
        return
    pose, overlap, slide = placed
    old_facing = c.facing
    c.x, c.y, c.facing = pose.x, pose.y, pose.facing
    battle.emit("CORE.CHARGE.MOVE", unit=c.uid, target=t.uid, facing=ch["facing"], x=pose.x, y=pose.y, heading=pose.facing)
    turn = (pose.facing - old_facing + 180.0) % 360.0 - 180.0
    battle.emit("CORE.CHARGE.CLOSE_DOOR", unit=c.uid, target=t.uid, pivot=turn)
    battle.emit("CORE.CHARGE.ALIGN", unit=c.uid, target=t.uid, slide=slide, overlap=overlap, x=c.x, y=c.y, facing=c.facing)
    if allowed:
        _engage_incidental(battle, c, t, allowed)  # before the 1" shift, which moves only unengaged enemies
    _one_inch_shift(battle, c, t)
    battle.state.engagements.append(
        Engagement(attacker=c.uid, defender=t.uid, facing=ch["facing"], charged=True, turn=battle.state.turn)
    )
    battle.emit("CORE.GEO.CONTACT", unit=c.uid, target=t.uid, facing=ch["facing"], engaged=True)
    c.flags["charged_into"] = t.uid
    c.flags["charge_start_distance"] = ch["start_distance"]  # CORE.SR.IMPACT_HITS: charged from more than M away
    if ch["reaction"] == "stand_and_shoot" and battle.state.castle:  # SIEGE.REACT.WALL: oil or stones at the wall
        from battleline.env.rules.siege import play

        play.wall_reaction(battle, t, c)


def _reachable_incidental(battle: Battle, c: UnitState, t: UnitState, ch: dict[str, Any]) -> frozenset[int]:
    """CORE.CHARGE.MULTI_TARGET: the declared incidental targets still reachable (alive, not fleeing, within the
    charge range); the others are dropped, and the charger may then not touch them."""
    keep, dropped = [], []
    for uid in ch["incidental"]:
        o = battle.unit(uid)
        ok = o.alive and not o.fleeing and ch["range"] >= space.unit_distance(c, o) - geo.EPS
        (keep if ok else dropped).append(uid)
    if dropped:
        battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="dropped", dropped=dropped, kept=keep)
    return frozenset(keep)


def _engage_incidental(battle: Battle, c: UnitState, t: UnitState, allowed: frozenset[int]) -> None:
    """CORE.CHARGE.MULTI_TARGET: the charger in contact with incidental targets is engaged with each, as charger."""
    poly = space.footprint(c)
    engaged = []
    for uid in sorted(allowed):
        o = battle.unit(uid)
        if geo.distance(poly, space.footprint(o)) <= geo.EPS:
            facing = charge_facing(battle, c, o, roll=False) or "front"
            battle.state.engagements.append(
                Engagement(attacker=c.uid, defender=uid, facing=facing, charged=True, turn=battle.state.turn)
            )
            engaged.append({"unit": uid, "facing": facing})
    battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="moved", engaged=engaged)


def _versus_fleeing(battle: Battle, c: UnitState, t: UnitState, success: bool, ch: dict[str, Any]) -> None:
    """CORE.CHARGE.VS_FLEEING: a fleer caught by the charge roll is destroyed."""
    if not success:
        _failed_move(battle, c, t, ch["high"], (t.x, t.y))
        return
    last = (t.x, t.y)
    psychology.destroy(battle, t, "CORE.CHARGE.VS_FLEEING", charger=c.uid, caught=True)
    moved = _move_towards(battle, c, last, ch["range"], stop_gap=1.0)
    battle.emit("CORE.CHARGE.MOVE", unit=c.uid, target=t.uid, facing=None, x=c.x, y=c.y, heading=c.facing, moved=moved)


def _failed_move(battle: Battle, c: UnitState, t: UnitState, high: int, aim: tuple[float, float]) -> None:
    """CORE.CHARGE.FAILED: move the high die towards the target, stopping 1" from any unit."""
    c.flags["failed_charge"] = True
    moved = _move_towards(battle, c, aim, float(high), stop_gap=1.0)
    battle.emit("CORE.CHARGE.FAILED", unit=c.uid, target=t.uid, high=high, moved=moved, x=c.x, y=c.y, facing=c.facing)


def _move_towards(battle: Battle, c: UnitState, aim: tuple[float, float], allowance: float, stop_gap: float) -> float:
    """Wheel to face ``aim`` (paying W·θ) then move straight, stopping ``stop_gap``" from units."""
    from battleline.env.rules.movement import furthest_legal

    heading = geo.facing_towards((c.x, c.y), aim)
    turn = abs((heading - c.facing + 180.0) % 360.0 - 180.0)
    cost = geo.wheel_distance(c.width, turn)
    if cost > allowance:
        return 0.0
    start = geo.Pose(c.x, c.y, heading)
    dist = furthest_legal(battle, c, start, allowance - cost, gap=stop_gap, pass_friends=False)
    if dist is None:
        return 0.0
    end = geo.move_straight(start, dist)
    c.x, c.y, c.facing = end.x, end.y, end.facing
    return dist


ONE_INCH_STEP = 0.1
"""Inches between the shift distances tried by CORE.CHARGE.ONE_INCH."""
ONE_INCH_MAX_SHIFT = 3.0
"""The longest shift (inches) CORE.CHARGE.ONE_INCH tries before reporting the unit as blocked."""
ONE_INCH_DIRECTIONS = 24
"""Directions (evenly spaced, degrees apart = 360 / this) a CORE.CHARGE.ONE_INCH shift may take."""


def _one_inch_shift(battle: Battle, c: UnitState, t: UnitState) -> None:
    """CORE.CHARGE.ONE_INCH: a non-engaged enemy left within 1" of the charger is shifted clear.

    The non-phasing player's unit moves the minimum distance needed (in
    :data:`ONE_INCH_STEP` steps, facing unchanged) to a legal spot 1" clear of
    the charger: at each distance every one of :data:`ONE_INCH_DIRECTIONS`
    directions is tried, nearest first to the direction straight away from the
    charger's footprint (the line between the closest points), so an unhindered
    unit moves straight away and a hindered one sideways. This does not count
    as moving. With no legal spot within :data:`ONE_INCH_MAX_SHIFT` it stays,
    and the event says so (``shift`` None, ``blocked``).
    """
    cp = space.footprint(c)
    for o in space.alive_units(battle.state, 1 - battle.state.active):
        if o.uid == t.uid or psychology.engaged(battle, o) or not space.near(o, c, 1.0):
            continue
        op = space.footprint(o)
        gap = geo.distance(cp, op)
        if gap >= 1.0 - geo.EPS:
            continue
        spot = _one_inch_spot(battle, o, cp, op)
        if spot is not None:
            shift, moved = spot
            o.x, o.y = moved.x, moved.y
            battle.emit("CORE.CHARGE.ONE_INCH", unit=o.uid, charger=c.uid, shift=shift, x=o.x, y=o.y, facing=o.facing)
        else:  # no legal spot within the limit: it stays, within 1" (it may move away later, CORE.MOVE.ONE_INCH)
            battle.emit("CORE.CHARGE.ONE_INCH", unit=o.uid, charger=c.uid, shift=None, gap=round(gap, 3),
                        blocked=True)


def _one_inch_spot(battle: Battle, o: UnitState, charger_poly: Polygon, poly: Polygon) -> tuple[float, geo.Pose] | None:
    """The shortest legal CORE.CHARGE.ONE_INCH shift of ``o`` (footprint ``poly``) 1" clear of ``charger_poly``:
    (distance in inches, rounded to 0.1, new pose), or None within :data:`ONE_INCH_MAX_SHIFT`."""
    near_c, near_o = shapely.ops.nearest_points(charger_poly, poly)
    if near_c.distance(near_o) > geo.EPS:
        away = math.degrees(math.atan2(near_o.y - near_c.y, near_o.x - near_c.x))
    else:  # touching or overlapping: straight away from the charger's centre
        cc = charger_poly.centroid
        away = math.degrees(math.atan2(o.y - cc.y, o.x - cc.x))
    turns = sorted(range(ONE_INCH_DIRECTIONS), key=lambda k: min(k, ONE_INCH_DIRECTIONS - k))
    env = space.Surroundings(battle.state, o)
    for k in range(1, round(ONE_INCH_MAX_SHIFT / ONE_INCH_STEP) + 1):
        shift = round(ONE_INCH_STEP * k, 3)
        for turn in turns:
            r = math.radians(away + 360.0 * turn / ONE_INCH_DIRECTIONS)
            moved = geo.Pose(o.x + math.cos(r) * shift, o.y + math.sin(r) * shift, o.facing)
            end = space.footprint_at(o, moved)
            if geo.distance(charger_poly, end) >= 1.0 - geo.EPS and not env.blocked(end, end, gap=2 * geo.EPS):
                return shift, moved
    return None
