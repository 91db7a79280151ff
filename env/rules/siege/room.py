"""Room in the castle for every defender unit (SIEGE.SCEN.DEPLOY): no unit is left out.

The defender deploys everything inside the castle. His units take the
deployment slots (:mod:`env.rules.deployment`, :func:`env.rules.siege.play.deploy_legal`)
or, where no slot fits, a *spot*: the free place in the courtyard nearest his
own edge and the castle's centre line, facing the enemy, in the unit's own
formation (failing that, a front-wall slot in one rank).

Before the defender's first deployment and after each one, a *plan* gives every
unit still to deploy such a place (largest footprint first), stored in
``state.queue[KEY]``. A slot is legal only clear (1") of the other units'
planned places, so whatever the defender chooses, the plan less the unit just
deployed still holds the rest: nobody runs out of room. A defender army whose
plan fails in the empty castle is a config error
(:func:`env.rules.config.scenario_errors` via :func:`plan`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import shapely
from shapely import affinity
from shapely.geometry import Point, Polygon, box
from shapely.ops import nearest_points

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.siege import play
from battleline.env.rules.siege.castle import courtyard

if TYPE_CHECKING:
    from battleline.env.rules.state import BattleState, UnitState

KEY = "castle_room"
"""``state.queue`` key of the plan: ``{uid: [x, y, facing, files]}`` (inches, degrees)."""

Place = tuple[geo.Pose, int]
"""Where a unit deploys: its pose (inches, degrees) and files."""


def _to_deploy(state: BattleState, side: int) -> list[UnitState]:
    """The side's units still to deploy (joined characters come with their unit), largest footprint first."""
    units = [u for u in state.units if u.side == side and not u.deployed and not u.removed and u.joined_to is None]
    return sorted(units, key=lambda u: (-u.width * u.depth, u.uid))


def _grow(poly, hw: float, hd: float, sign: float):
    """Minkowski sum (``sign`` 1) or erosion (-1) of ``poly`` with the axis-parallel rectangle of half-sides hw, hd."""
    k = hw / hd
    square = affinity.scale(poly, xfact=1.0, yfact=k, origin=(0, 0))
    return affinity.scale(square.buffer(sign * hw, join_style="mitre", mitre_limit=10.0), xfact=1.0, yfact=1 / k,
                          origin=(0, 0))


def _spot(state: BattleState, u: UnitState, env: space.Surroundings) -> Place | None:
    """The courtyard place for ``u`` nearest the defender's edge, then the centre line; None when none is free."""
    d = play.defender(state)
    facing = 90.0 if d == 0 else 270.0
    hw, hd = u.width / 2, u.depth / 2
    yard = courtyard(state)
    if yard.is_empty:
        return None
    blocked = [_grow(p, hw, hd, 1.0).buffer(1.0) for p in env.polys] + [_grow(p, hw, hd, 1.0) for p in env.impassable]
    centres = _grow(yard, hw, hd, -1.0)
    if blocked:
        centres = centres.difference(shapely.union_all(blocked))
    if centres.is_empty:
        return None
    minx, miny, maxx, maxy = centres.bounds
    cx = sum(yard.bounds[0::2]) / 2
    edge = miny if d == 0 else maxy
    strip = centres.intersection(box(minx, edge - 0.01, maxx, edge + 0.01))
    points = [] if strip.is_empty else [nearest_points(strip, Point(cx, edge))[0]]
    vertices = shapely.get_coordinates(shapely.boundary(centres))
    points += [Point(x, y) for x, y in sorted(map(tuple, vertices), key=lambda p: (round(abs(p[1] - edge), 6),
                                                                                  abs(p[0] - cx), p))]
    for p in points:
        pose = geo.Pose(p.x, p.y, facing)
        if play.in_courtyard(state, space.footprint_at(u, pose), env):
            return pose, u.files
    return None


def _wall_slot(state: BattleState, u: UnitState, env: space.Surroundings) -> Place | None:
    """The first legal front-wall slot for ``u`` (one rank), from the centre out; None when none is."""
    from battleline.env.rules.deployment import COLUMNS, ROWS

    for col in sorted(range(len(COLUMNS)), key=lambda c: (abs(c - len(COLUMNS) // 2), c)):
        slot = play.WALL_ROW * len(COLUMNS) + col
        files = play.deploy_files(state, u, slot, len(COLUMNS))
        pose = play.deploy_pose(state, u, slot, COLUMNS, ROWS)
        poly = space.footprint_at(u, pose, files)
        if play.deploy_legal(state, u, slot, poly, env, len(COLUMNS), state.queue.get("zone_depth", 12.0)):
            return pose, files or u.files
    return None


def plan(state: BattleState) -> tuple[dict[int, Place], UnitState | None]:
    """Places for all the defender's units still to deploy, clear of each other and of the deployed units.

    Returns the plan (uid -> place) and, when some unit finds no room in the castle (courtyard or front
    walls, SIEGE.SCEN.DEPLOY), that unit (the plan then holds the units before it). The state is left as it was.
    """
    placed: dict[int, Place] = {}
    saved = {u.uid: (u.x, u.y, u.facing, u.files, u.deployed) for u in state.units}
    try:
        for u in _to_deploy(state, play.defender(state)):
            env = space.Surroundings(state, u)
            place = _spot(state, u, env) or _wall_slot(state, u, env)
            if place is None:
                return placed, u
            placed[u.uid] = place
            pose, u.files, u.deployed = place[0], place[1], True  # an obstacle to the next
            u.x, u.y, u.facing = pose.x, pose.y, pose.facing
        return placed, None
    finally:
        for u in state.units:
            u.x, u.y, u.facing, u.files, u.deployed = saved[u.uid]


def replan(state: BattleState) -> UnitState | None:
    """Plan the defender's deployment afresh (``state.queue[KEY]``); the unit that finds no room, if any.

    When the new plan fails but an earlier one exists, that one, less the units deployed since, is kept: it
    still holds every unit left (each deployment kept clear of the others' places), so None is returned.
    """
    placed, failed = plan(state)
    if failed is None:
        state.queue[KEY] = {str(uid): [p.x, p.y, p.facing, files] for uid, (p, files) in placed.items()}
        return None
    if KEY not in state.queue:
        return failed
    state.queue[KEY] = {k: v for k, v in state.queue[KEY].items() if not state.units[int(k)].deployed}
    return None


def no_room_text(u: UnitState) -> str:
    """The one-line problem of a defender unit that finds no room in the castle (SIEGE.SCEN.DEPLOY)."""
    return (f"'{u.name}' ({u.type_id}, {u.models} models) finds no room inside the castle: the defender deploys "
            f"everything in the courtyard or on the walls (SIEGE.SCEN.DEPLOY); field fewer or smaller units")


def planned(state: BattleState, u: UnitState) -> Place:
    """The place the plan keeps for ``u`` (KeyError when it keeps none)."""
    x, y, facing, files = state.queue[KEY][str(u.uid)]
    return geo.Pose(x, y, facing), int(files)


def clear_of_plan(state: BattleState, u: UnitState, poly: Polygon) -> bool:
    """Whether footprint ``poly`` of ``u`` keeps 1" from every other unit's planned place (CORE.MOVE.ONE_INCH)."""
    for uid, (x, y, facing, files) in state.queue.get(KEY, {}).items():
        other = state.units[int(uid)]
        if other.uid != u.uid and not other.deployed:
            if geo.distance(poly, space.footprint_at(other, geo.Pose(x, y, facing), int(files))) < 1.0 - geo.EPS:
                return False
    return True
