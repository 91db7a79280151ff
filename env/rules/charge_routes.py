"""The charge move's route: the charged edge and whether a clear route reaches a contact spot.

Rules: CORE.CHARGE.MOVE, CORE.CHARGE.FEASIBLE, CORE.CHARGE.CLOSE_DOOR, CORE.CHARGE.ALIGN.

:func:`edge_frame` gives the charged edge of a target; :class:`ChargeRoute`
holds what a charger's route must keep clear of (impassable terrain, the
castle and the other units), and :func:`route_clear` tests the modelled
routes to one end spot (straight, wheel first, wheel last, and wheel, move,
close the door and align), leg by leg (:func:`leg_clear`): the compiled core
answers where it applies and is sure, the shapely reference otherwise.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import shapely
from shapely.geometry import Polygon

from battleline.env.rules import geometry as geo
from battleline.env.rules import kernel, space, special_rules
from battleline.env.rules.state import BattleState, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


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
