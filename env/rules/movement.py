"""Remaining moves: move, march, wheel, turn, reform (CORE.MOVE.*, CORE.TERRAIN.*).

Each ``move`` action names one of :data:`env.rules.actions.MOVE_OPTIONS`. A
translation goes as far as it legally can up to its allowance: the unit stops
where it would come within 1" of an enemy, end within 1" of any unit, pass
through a unit, leave the table or enter impassable terrain
(CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE). An option is legal when the unit
can carry it out over at least :data:`MIN_MOVE` inches (rotations and reforms:
when the new footprint is legal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapely.geometry import Polygon

from env.rules import geometry as geo
from env.rules import psychology, space
from env.rules.actions import MOVE_OPTIONS, Action
from env.rules.state import UnitState

if TYPE_CHECKING:
    from env.rules.battle import Battle

MIN_MOVE = 0.25  # inches
MARCH_BLOCK_RANGE = 8.0  # CORE.MOVE.MARCH_BLOCK
WHEEL = {"wheel_left": 45.0, "wheel_right": -45.0, "wheel_left_short": 22.5, "wheel_right_short": -22.5,
         "march_wheel_left": 45.0, "march_wheel_right": -45.0}


# --------------------------------------------------------------------- legality
def _blocked(battle: Battle, u: UnitState, end: Polygon, path: Polygon, gap: float, pass_friends: bool) -> bool:
    """Whether an end footprint / swept path breaks CORE.MOVE.ONE_INCH, TABLE_EDGE or impassable terrain."""
    s = battle.state
    if not geo.within_table(end, s.table_w, s.table_h):
        return True
    for t in space.terrain_of(s, space.IMPASSABLE):
        if geo.overlaps(path, space.terrain_poly(t)):
            return True
    reach = geo.distance(path, end) + 2 * space.radius(u) + gap + 1.0
    for o in s.units:
        if not o.alive or o.uid == u.uid or not space.near(u, o, reach + 12.0):
            continue
        fp = space.footprint(o)
        if geo.distance(end, fp) < gap - geo.EPS:
            return True
        if o.side != u.side:
            if geo.distance(path, fp) < gap - geo.EPS:
                return True
        elif not pass_friends and geo.overlaps(path, fp):
            return True
    return False


def terrain_cost(battle: Battle, u: UnitState, path: Polygon) -> tuple[float, float]:
    """(multiplier, extra inches) for a path: ×2 through difficult terrain, +M/2 per obstacle crossed.

    CORE.TERRAIN.COST; flyers and Ethereal units ignore terrain.
    """
    if u.has("fly") or u.has("ethereal"):
        return 1.0, 0.0
    s = battle.state
    mult = 1.0
    for t in space.terrain_of(s, space.DIFFICULT):
        if geo.overlaps(path, space.terrain_poly(t)):
            mult = 2.0
            break
    extra = 0.0
    for t in space.terrain_of(s, space.OBSTACLES):
        if geo.overlaps(path, space.terrain_poly(t)):
            extra += u.profile.M / 2.0
    return mult, extra


def furthest_legal(
    battle: Battle, u: UnitState, start: geo.Pose, allowance: float, gap: float = 1.0, pass_friends: bool = False
) -> float | None:
    """The furthest straight move (inches, ≥ 0) from ``start`` within ``allowance``.

    Negative allowances move backwards. Terrain costs are paid
    (CORE.TERRAIN.COST). Returns None when even standing at ``start`` is
    illegal.
    """
    start_poly = space.footprint_at(u, start)
    if _blocked(battle, u, start_poly, start_poly, gap, pass_friends):
        return None
    sign = 1.0 if allowance >= 0 else -1.0
    full = abs(allowance)
    if full < MIN_MOVE:
        return 0.0

    def ok(d: float) -> tuple[bool, float]:
        end = geo.move_straight(start, sign * d)
        end_poly = space.footprint_at(u, end)
        path = geo.swept_area(start_poly, end_poly)
        mult, extra = terrain_cost(battle, u, path)
        affordable = d * mult + extra <= full + geo.EPS
        return affordable and not _blocked(battle, u, end_poly, path, gap, pass_friends), mult

    good, mult = ok(full)
    if good:
        return full
    lo, hi = 0.0, full / mult if mult > 1 else full
    good, _ = ok(hi)
    if good:
        return hi
    for _ in range(7):
        mid = (lo + hi) / 2
        if ok(mid)[0]:
            lo = mid
        else:
            hi = mid
    return lo


def can_move(battle: Battle, u: UnitState) -> bool:
    """CORE.MOVE.REMAINING: not charged, fled, rallied, compulsorily moved or engaged, and not moved yet."""
    f = u.flags
    return (
        u.alive
        and u.side == battle.state.active
        and not u.fleeing
        and not any(f.get(k) for k in ("moved", "charged", "fled", "rallied", "failed_charge", "stupid", "declared_charge"))
        and u.profile.M > 0
        and not psychology.engaged(battle, u)
    )


def may_march(u: UnitState) -> bool:
    """CORE.MOVE.MARCH: Aquatic (on land), Hover and war machines never march."""
    return not (u.has("aquatic") or u.has("hover") or u.troop_type == "war_machine")


def _plan(battle: Battle, u: UnitState, option: str, marching: bool | None = None) -> dict | None:
    """Work out a move option: the new pose/files and the distance, or None if impossible."""
    m = float(u.profile.M)
    start = space.pose(u)
    if option in ("advance", "advance_half", "march"):
        if option == "march":
            if not may_march(u):
                return None
            allowance = 2 * m if marching is not False else m
        else:
            allowance = m if option == "advance" else m / 2
        d = furthest_legal(battle, u, start, allowance)
        if d is None or d < MIN_MOVE:
            return None
        return {"pose": geo.move_straight(start, d), "distance": d, "files": u.files}
    if option in WHEEL:
        is_march = option.startswith("march")
        if is_march and not may_march(u):
            return None
        allowance = (2 * m if marching is not False else m) if is_march else m
        angle = WHEEL[option]
        cost = geo.wheel_distance(u.width, angle)
        if cost > allowance + geo.EPS:
            return None
        after = geo.wheel(start, u.width, angle)
        sweep = geo.wheel_swept_area(start, u.width, u.depth, angle)
        if _blocked(battle, u, space.footprint_at(u, after), sweep, 1.0, False):
            return None
        d = furthest_legal(battle, u, after, allowance - cost) or 0.0
        return {"pose": geo.move_straight(after, d), "distance": cost + d, "files": u.files, "wheel": angle}
    if option in ("turn_left", "turn_right", "about_face"):
        angle = {"turn_left": 90.0, "turn_right": -90.0, "about_face": 180.0}[option]
        files = u.files if option == "about_face" else min(u.models, u.ranks)
        after = geo.turn(start, angle)
        poly = space.footprint_at(u, after, files)
        if _blocked(battle, u, poly, poly, 1.0, False):
            return None
        shadow = _with_files(u, files)
        d = furthest_legal(battle, shadow, after, 0.75 * m) or 0.0
        return {"pose": geo.move_straight(after, d), "distance": m / 4 + d, "files": files, "turn": angle}
    if option == "backward":
        d = furthest_legal(battle, u, start, -m / 2)
        if d is None or d < MIN_MOVE:
            return None
        return {"pose": geo.move_straight(start, -d), "distance": 2 * d, "files": u.files}
    if option in ("reform_wide", "reform_deep", "reform_face"):
        files = u.files
        facing = u.facing
        if option == "reform_wide":
            files = min(u.models, u.files + 2)
        elif option == "reform_deep":
            files = max(1, u.files - 2)
        else:
            enemy = psychology.nearest_enemy(battle, u)
            if enemy is None:
                return None
            facing = geo.facing_towards((u.x, u.y), (enemy.x, enemy.y))
            if abs((facing - u.facing + 180.0) % 360.0 - 180.0) < 1.0:
                return None
        if files == u.files and facing == u.facing:
            return None
        after = geo.Pose(u.x, u.y, facing)
        poly = space.footprint_at(u, after, files)
        if _blocked(battle, u, poly, poly, 1.0, False):
            return None
        return {"pose": after, "distance": 0.0, "files": files, "reform": True}
    raise ValueError(f"unknown move option {option!r}")


def _with_files(u: UnitState, files: int) -> UnitState:
    """A throw-away copy of ``u`` with another number of files (for planning)."""
    from copy import copy

    other = copy(u)
    other.files = files
    return other


def legal(battle: Battle) -> list[Action]:
    """Legal ``move`` actions of the phasing player (CORE.MOVE.REMAINING)."""
    acts = []
    for u in space.alive_units(battle.state, battle.state.active):
        if not can_move(battle, u):
            continue
        for option in MOVE_OPTIONS:
            if _plan(battle, u, option) is not None:
                acts.append(Action("move", u.uid, None, option))
    return acts


def _enemy_within(battle: Battle, u: UnitState, reach: float) -> bool:
    for e in space.alive_units(battle.state, 1 - u.side):
        if not e.fleeing and space.near(u, e, reach) and space.unit_distance(u, e) <= reach:
            return True
    return False


def apply(battle: Battle, action: Action) -> None:
    """Make one remaining move, or end the Movement phase (end_phase)."""
    if action.kind == "end_phase":
        battle.finish_phase()
        return
    u = battle.unit(action.unit)
    option = action.option
    marching = None
    if option.startswith("march"):
        marching = True
        if _enemy_within(battle, u, MARCH_BLOCK_RANGE):
            marching = psychology.test_ld(battle, u, u.profile.Ld, "CORE.MOVE.MARCH_BLOCK")
    plan = _plan(battle, u, option, marching)
    if plan is None:  # the march failed its test and the normal move is blocked
        u.flags["moved"] = True
        battle.emit("CORE.MOVE.MARCH_BLOCK", unit=u.uid, moved=False)
        return
    pose = plan["pose"]
    u.x, u.y, u.facing = pose.x, pose.y, pose.facing % 360.0
    u.files = plan["files"]
    u.flags["moved"] = True
    if marching:
        u.flags["marched"] = True
    rule = _rule_for(option, marching)
    battle.emit(rule, unit=u.uid, option=option, distance=plan["distance"], x=u.x, y=u.y, facing=u.facing, files=u.files)


def _rule_for(option: str, marching: bool | None) -> str:
    if option.startswith("reform"):
        return "CORE.MOVE.REFORM"
    if option in ("turn_left", "turn_right", "about_face"):
        return "CORE.MOVE.TURN"
    if "wheel" in option:
        return "CORE.MOVE.WHEEL"
    if marching:
        return "CORE.MOVE.MARCH"
    return "CORE.MOVE.NORMAL"
