"""Leadership tests, panic, fleeing and rallying (CORE.TEST.*, CORE.PSY.*).

Flight is used by several phases: the Flee! reaction, failed break tests,
failed panic tests and units that failed to rally all call :func:`flee`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from env.rules import geometry as geo
from env.rules import space
from env.rules.state import UnitState

if TYPE_CHECKING:
    from env.rules.battle import Battle

INSPIRING_RANGE = 12.0  # CORE.SR.INSPIRING_PRESENCE (18" for a Large Target General)
PANIC_RANGE = 6.0  # CORE.PSY.PANIC.TRIGGER_DESTROYED / TRIGGER_BREAK


def engaged(battle: Battle, u: UnitState) -> bool:
    """Whether the unit is in base contact with an enemy (CORE.GEO.CONTACT)."""
    return any(e.attacker == u.uid or e.defender == u.uid for e in battle.state.engagements)


def general_ld(battle: Battle, u: UnitState) -> int | None:
    """The General's Ld if ``u`` is within its Inspiring Presence range (CORE.SR.INSPIRING_PRESENCE)."""
    for g in battle.state.units:
        if g.general and g.side == u.side and g.alive and not g.fleeing:
            reach = 18.0 if g.has("large_target") else INSPIRING_RANGE
            if g.uid == u.uid or space.unit_distance(g, u) <= reach:
                return g.profile.Ld
    return None


def test_ld(battle: Battle, u: UnitState, ld: int, rule: str, **info: object) -> bool:
    """A Leadership test: pass on 2D6 ≤ ld, a natural double 1 always passes (CORE.TEST.LD).

    Emits ``rule`` with the dice, the Ld used and the outcome. Returns True on a pass.
    """
    total, faces = battle.dice.sum_d6(rule, 2)
    passed = total <= ld or faces == [1, 1]
    battle.emit(rule, unit=u.uid, ld=ld, roll=total, dice=faces, passed=passed, **info)
    return passed


def mark_engagements_removed(battle: Battle, u: UnitState) -> None:
    """Drop every engagement of ``u`` (it fled, died or left the table)."""
    battle.state.engagements = [e for e in battle.state.engagements if u.uid not in (e.attacker, e.defender)]


def destroy(battle: Battle, u: UnitState, rule: str, panic: bool = True, **info: object) -> None:
    """Remove a unit from the table and, if ``panic``, trigger nearby Panic tests.

    Implements the removal half of CORE.CC.CAUGHT, CORE.PSY.FLEE.DESTROYED and
    CORE.CHARGE.VS_FLEEING; panic follows CORE.PSY.PANIC.TRIGGER_DESTROYED.
    """
    if u.removed:
        return
    u.removed = True
    mark_engagements_removed(battle, u)
    battle.emit(rule, unit=u.uid, side=u.side, destroyed=True, **info)
    if panic:
        panic_nearby(battle, u, "CORE.PSY.PANIC.TRIGGER_DESTROYED")


def panic_nearby(battle: Battle, source: UnitState, trigger: str) -> None:
    """Friends of ``source`` within 6" take Panic tests (CORE.PSY.PANIC.TRIGGER_*)."""
    for f in space.alive_units(battle.state, source.side):
        if f.uid == source.uid or not space.near(f, source, PANIC_RANGE):
            continue
        if geo.distance(space.footprint(f), space.footprint(source)) <= PANIC_RANGE:
            panic_test(battle, f, (source.x, source.y), trigger, source=source.uid)


def panic_test(battle: Battle, u: UnitState, source_xy: tuple[float, float], trigger: str, **info: object) -> None:
    """Take a Panic test if not exempt (CORE.PSY.PANIC.EXEMPT, TEST, FAIL).

    The test uses the unit's own Ld. On a failure the unit flees 2D6 away from
    ``source_xy`` (the shooter, the destroyed or broken friend, or the fleer).
    """
    s = battle.state
    key = f"{s.turn}:{s.active}:{s.phase}"
    if not u.alive or u.fleeing or engaged(battle, u) or u.flags.get("panic_tested") == key:
        return
    if u.has("immune_to_psychology") or u.has("frenzy") or u.has("stupidity") or u.troop_type == "war_machine":
        battle.emit("CORE.PSY.PANIC.EXEMPT", unit=u.uid, trigger=trigger)
        return
    u.flags["panic_tested"] = key
    battle.emit(trigger, unit=u.uid, **info)
    if test_ld(battle, u, u.profile.Ld, "CORE.PSY.PANIC.TEST", trigger=trigger):
        return
    battle.emit("CORE.PSY.PANIC.FAIL", unit=u.uid)
    flee(battle, u, source_xy, "CORE.PSY.PANIC.FAIL")


def flee(
    battle: Battle,
    u: UnitState,
    source_xy: tuple[float, float],
    rule: str,
    roll: int | None = None,
    **info: object,
) -> int:
    """Make a flee move away from ``source_xy`` (CORE.PSY.FLEE.MOVE).

    Rolls 2D6 (3D6 dropping the lowest with Swiftstride) unless ``roll`` is
    given. The unit turns about its centre to face directly away, moves
    straight, passing through units, and moves on until it is 1" clear of every
    unit. It is destroyed if its footprint crosses the table edge or its path
    enters impassable terrain (CORE.PSY.FLEE.DESTROYED). Friends passed through
    take Panic tests (CORE.PSY.PANIC.TRIGGER_FLED_THROUGH); each model passing
    through an enemy takes a dangerous terrain test (CORE.TERRAIN.DANGEROUS).

    Returns the flee distance rolled (inches).
    """
    s = battle.state
    if roll is None:
        roll, _ = battle.dice.flee_roll(rule, u.has("swiftstride") or u.troop_type == "cavalry")
    u.fleeing = True
    u.flags["fled"] = True
    mark_engagements_removed(battle, u)
    start_poly = space.footprint(u)
    if math.hypot(u.x - source_xy[0], u.y - source_xy[1]) < 1e-9:
        away = geo.Pose(u.x, u.y, u.facing + 180.0)
    else:
        away = geo.Pose(u.x, u.y, geo.facing_towards(source_xy, (u.x, u.y)))
    others = [o for o in space.alive_units(s) if o.uid != u.uid]
    dist = float(roll)
    end = geo.move_straight(away, dist)
    end_poly = space.footprint_at(u, end)
    # Move on until 1" clear of every unit (bounded by the table edge).
    while any(space.near(o, u, 1.0 + dist) and geo.distance(end_poly, space.footprint(o)) < 1.0 for o in others):
        dist += 0.5
        end = geo.move_straight(away, dist)
        end_poly = space.footprint_at(u, end)
        if not geo.within_table(end_poly, s.table_w, s.table_h):
            break
    path = geo.swept_area(start_poly, end_poly)
    battle.emit(rule, unit=u.uid, flee=True, distance=dist, roll=roll, x=end.x, y=end.y, facing=end.facing, **info)
    battle.emit("CORE.PSY.FLEE.MOVE", unit=u.uid, distance=dist, x=end.x, y=end.y, facing=end.facing)
    through = [o for o in others if geo.overlaps(path, space.footprint(o))]
    u.x, u.y, u.facing = end.x, end.y, end.facing % 360.0
    blocked = any(geo.overlaps(path, space.terrain_poly(t)) for t in space.terrain_of(s, space.IMPASSABLE))
    if not geo.within_table(end_poly, s.table_w, s.table_h) or blocked:
        u.fled_off = not blocked
        destroy(battle, u, "CORE.PSY.FLEE.DESTROYED", panic=False, off_table=not blocked)
        return roll
    for o in through:
        if o.side != u.side:
            _dangerous_terrain(battle, u, enemy=o.uid)
            if u.removed:
                return roll
    for o in through:
        if o.side == u.side and o.alive:
            panic_test(battle, o, (u.x, u.y), "CORE.PSY.PANIC.TRIGGER_FLED_THROUGH", source=u.uid)
    return roll


def _dangerous_terrain(battle: Battle, u: UnitState, **info: object) -> None:
    """CORE.TERRAIN.DANGEROUS: each model rolls a D6; on a 1 it takes a wound, no armour save."""
    faces = battle.dice.d6("CORE.TERRAIN.DANGEROUS", u.models)
    wounds = sum(1 for f in faces if f == 1)
    battle.emit("CORE.TERRAIN.DANGEROUS", unit=u.uid, wounds=wounds, **info)
    if wounds:
        from env.rules.casualties import apply_wounds

        apply_wounds(battle, u, wounds, rule="CORE.TERRAIN.DANGEROUS")


def nearest_enemy(battle: Battle, u: UnitState, non_fleeing: bool = True) -> UnitState | None:
    """The closest enemy unit on the table (centre to centre), if any; ties go to the lower uid."""
    enemies = [e for e in space.alive_units(battle.state, 1 - u.side) if not (non_fleeing and e.fleeing)]
    if not enemies:
        return None
    return min(enemies, key=lambda e: (math.hypot(e.x - u.x, e.y - u.y), e.uid))


def start_of_turn(battle: Battle) -> None:
    """CORE.START.SEQUENCE and CORE.PSY.RALLY for the phasing player's fleeing units.

    A fleeing unit tests Ld (musician +1, maximum 10; the General's Ld within
    12"). A multi-model unit below 25% of its starting models fails
    automatically. A unit that rallies faces the nearest enemy (its free
    reform), may not move this turn and counts as having moved.
    """
    s = battle.state
    battle.emit("CORE.START.SEQUENCE", player=s.active)
    for u in space.alive_units(s, s.active):
        if not u.fleeing:
            continue
        if u.start_models > 1 and u.models * 4 < u.start_models:
            battle.emit("CORE.PSY.RALLY", unit=u.uid, passed=False, automatic=True, models=u.models)
            u.flags["failed_rally"] = True
            continue
        ld = max(u.profile.Ld, general_ld(battle, u) or 0)
        if u.musician:
            ld = min(10, ld + 1)
        if test_ld(battle, u, ld, "CORE.PSY.RALLY"):
            u.fleeing = False
            u.flags["rallied"] = True
            u.flags["moved"] = True
            enemy = nearest_enemy(battle, u)
            if enemy is not None:
                turned = geo.Pose(u.x, u.y, geo.facing_towards((u.x, u.y), (enemy.x, enemy.y)))
                poly = space.footprint_at(u, turned)
                if not space.Surroundings(battle.state, u).blocked(poly, poly):
                    u.facing = turned.facing  # the free reform, where it is legal
        else:
            u.flags["failed_rally"] = True


def compulsory_moves(battle: Battle) -> None:
    """CORE.MOVE.COMPULSORY: units that failed to rally flee away from the nearest non-fleeing enemy."""
    s = battle.state
    battle.emit("CORE.MOVE.COMPULSORY", player=s.active)
    for u in space.alive_units(s, s.active):
        if u.fleeing and u.flags.get("failed_rally"):
            enemy = nearest_enemy(battle, u)
            source = (enemy.x, enemy.y) if enemy is not None else (u.x, u.y - 1.0 if u.side == 0 else u.y + 1.0)
            flee(battle, u, source, "CORE.MOVE.COMPULSORY")
            u.flags["moved"] = True
