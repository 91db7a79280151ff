"""Leadership tests, panic, fleeing and rallying (CORE.TEST.*, CORE.PSY.*).

Flight is used by several phases: the Flee! reaction, failed break tests,
failed panic tests and units that failed to rally all call :func:`flee`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from battleline.env.rules import characters, space, special_rules
from battleline.env.rules import geometry as geo
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

INSPIRING_RANGE = 12.0  # CORE.SR.INSPIRING_PRESENCE
LARGE_TARGET_INSPIRING_RANGE = 18.0  # CORE.SR.LARGE_TARGET: a Large Target General's reach
PANIC_RANGE = 6.0  # CORE.PSY.PANIC.TRIGGER_DESTROYED / TRIGGER_BREAK


def engaged(battle: Battle, u: UnitState) -> bool:
    """Whether the unit is in base contact with an enemy (CORE.GEO.CONTACT)."""
    return any(e.attacker == u.uid or e.defender == u.uid for e in battle.state.engagements)


def general_ld(battle: Battle, u: UnitState) -> int | None:
    """The General's Ld if ``u`` is within its Inspiring Presence range (CORE.SR.GENERAL, CORE.SR.INSPIRING_PRESENCE).

    The range is 12" (18" for a Large Target General), measured from the unit
    the General stands in (its host when joined); 0 for its own unit. A
    General who refused a challenge lends its own unit nothing
    (CORE.CC.CHALLENGE.REFUSE).
    """
    s = battle.state
    target = characters.carrier(s, u)
    for g in s.units:
        if not (g.general and g.side == u.side and g.in_play):
            continue
        gc = characters.carrier(s, g)
        if gc.fleeing or not gc.deployed:
            continue
        if gc.uid == target.uid:
            return None if g.refused else g.profile.Ld
        reach = LARGE_TARGET_INSPIRING_RANGE if g.has("large_target") else INSPIRING_RANGE
        if space.near(gc, target, reach) and space.unit_distance(gc, target) <= reach:
            return g.profile.Ld
    return None


def inspired_ld(battle: Battle, u: UnitState) -> int:
    """The Ld for a Fear, Terror, Rally or Break test: the unit's own (CORE.TEST.LD_UNIT) or its General's.

    Emits CORE.SR.INSPIRING_PRESENCE when the General's Ld is the higher and is used.
    """
    own = characters.unit_ld(battle, u)
    general = general_ld(battle, u)
    if general is not None and general > own:
        battle.emit("CORE.SR.INSPIRING_PRESENCE", unit=u.uid, ld=general, own_ld=own)
        return general
    return own


BSB_TESTS = frozenset({"CORE.CC.BREAK_TEST", "CORE.PSY.FEAR", "CORE.PSY.TERROR", "CORE.PSY.PANIC.TEST", "CORE.PSY.RALLY"})
"""Tests whose failure the BSB lets a unit within 12" re-roll (CORE.SR.BSB, CORE.PSY.HELPERS)."""


def test_ld(battle: Battle, u: UnitState, ld: int, rule: str, **info: object) -> bool:
    """A Leadership test: pass on 2D6 ≤ ld, a natural double 1 always passes (CORE.TEST.LD).

    Emits ``rule`` with the dice, the Ld used and the outcome. A failed test
    of :data:`BSB_TESTS` is re-rolled once (2D6, CORE.SR.BSB) when the BSB
    is within 12" (CORE.TEST.REROLL_LIMIT). Returns True on a pass.
    """
    total, faces = battle.dice.sum_d6(rule, 2)
    passed = total <= ld or faces == [1, 1]
    battle.emit(rule, unit=u.uid, ld=ld, roll=total, dice=faces, passed=passed, **info)
    battle.emit("CORE.TEST.LD", unit=u.uid, test=rule, ld=ld, roll=total, double_one=faces == [1, 1], passed=passed)
    if not passed and rule in BSB_TESTS:
        bsb = characters.bsb_in_range(battle, u)
        if bsb is not None:
            total, faces = battle.dice.sum_d6("CORE.SR.BSB", 2)
            passed = total <= ld or faces == [1, 1]
            battle.emit("CORE.SR.BSB", unit=u.uid, bsb=bsb.uid, test=rule, ld=ld, roll=total, dice=faces, passed=passed)
            battle.emit("CORE.TEST.REROLL_LIMIT", unit=u.uid, test=rule, rerolls=1, passed=passed)
    return passed


def immune(battle: Battle, u: UnitState, test: str) -> bool:
    """Whether ``u`` passes a Fear, Terror or Panic test ``test`` automatically (CORE.PSY.HELPERS).

    Immune to Psychology (CORE.SR.ITP), Frenzy and Stupidity give the pass; the
    aid is logged as CORE.PSY.HELPERS (and CORE.SR.ITP for the rule itself).
    """
    if not special_rules.immune_to_psychology(u):
        return False
    aid = next(r for r in ("immune_to_psychology", "frenzy", "stupidity") if u.has(r))
    if aid == "immune_to_psychology":
        battle.emit("CORE.SR.ITP", unit=u.uid, test=test)
    battle.emit("CORE.PSY.HELPERS", unit=u.uid, test=test, aid=aid, passed=True)
    return True


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
    characters.on_removed(battle, u, rule)  # joined characters leave, or go with their unit
    mark_engagements_removed(battle, u)
    battle.emit(rule, unit=u.uid, side=u.side, destroyed=True, **info)
    if panic:
        panic_nearby(battle, u, "CORE.PSY.PANIC.TRIGGER_DESTROYED")


def panic_nearby(battle: Battle, source: UnitState, trigger: str) -> None:
    """Friends of ``source`` within 6" take Panic tests (CORE.PSY.PANIC.TRIGGER_*); Swarms cause none."""
    if source.has("swarm"):
        battle.emit("CORE.TYPE.SWARM", unit=source.uid, trigger=trigger, panic=False)
        return
    for f in space.alive_units(battle.state, source.side):
        if f.uid == source.uid or not space.near(f, source, PANIC_RANGE):
            continue
        if geo.distance(space.footprint(f), space.footprint(source)) <= PANIC_RANGE:
            panic_test(battle, f, (source.x, source.y), trigger, source=source.uid)


def panic_after_shooting(battle: Battle, shooter: UnitState, uids: list[int]) -> None:
    """CORE.PSY.PANIC.TRIGGER_CASUALTIES after a shot: each unit in ``uids`` (unit ids, in the order given) still
    alive that lost more models this phase than its front rank had at the phase's start takes a Panic test
    (:func:`panic_test`) away from the shooter's centre. Raises nothing."""
    for uid in uids:
        t = battle.unit(uid)
        if t.alive and t.flags.get("lost_this_phase", 0) > t.flags.get("front_rank_at_phase", t.files):
            panic_test(battle, t, (shooter.x, shooter.y), "CORE.PSY.PANIC.TRIGGER_CASUALTIES", source=shooter.uid)


def panic_test(battle: Battle, u: UnitState, source_xy: tuple[float, float], trigger: str, **info: object) -> None:
    """Take a Panic test if not exempt (CORE.PSY.PANIC.EXEMPT, TEST, FAIL).

    An exempt unit (fleeing, engaged, already tested this phase, or passing
    automatically by CORE.PSY.HELPERS) logs CORE.PSY.PANIC.EXEMPT with the
    trigger and the reason instead.

    The test uses the unit's own Ld. On a failure the unit flees 2D6 away from
    ``source_xy`` (the shooter, the destroyed or broken friend, or the fleer).
    """
    s = battle.state
    key = f"{s.turn}:{s.active}:{s.phase}"
    if not u.alive:
        return
    exempt = "fleeing" if u.fleeing else "engaged" if engaged(battle, u) else (
        "tested_this_phase" if u.flags.get("panic_tested") == key else None)
    if exempt is not None:
        battle.emit("CORE.PSY.PANIC.EXEMPT", unit=u.uid, trigger=trigger, reason=exempt)
        return
    if immune(battle, u, "CORE.PSY.PANIC.TEST"):
        battle.emit("CORE.PSY.PANIC.EXEMPT", unit=u.uid, trigger=trigger, reason="immune")
        return
    u.flags["panic_tested"] = key
    battle.emit(trigger, unit=u.uid, **info)
    if test_ld(battle, u, characters.unit_ld(battle, u), "CORE.PSY.PANIC.TEST", trigger=trigger):
        return
    battle.emit("CORE.PSY.PANIC.FAIL", unit=u.uid)
    flee(battle, u, source_xy, "CORE.PSY.PANIC.FAIL")


def flee_roll(battle: Battle, u: UnitState, rule: str) -> int:
    """A flee or pursuit roll of ``u`` for ``rule``: 2D6, or 3D6 dropping the lowest with Swiftstride
    (CORE.SR.SWIFTSTRIDE, logged with the dice). Returns the distance in inches."""
    swift = special_rules.swiftstride(u)
    roll, faces = battle.dice.flee_roll(rule, swift)
    if swift:
        battle.emit("CORE.SR.SWIFTSTRIDE", unit=u.uid, test=rule, dice=faces, roll=roll)
    return roll


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
    straight, passing through units, and moves on just until it is 1" clear of
    every unit (:func:`_clear_distance`). It is destroyed if its footprint crosses the table edge or its path
    enters impassable terrain (CORE.PSY.FLEE.DESTROYED). Friends passed through
    take Panic tests (CORE.PSY.PANIC.TRIGGER_FLED_THROUGH); each model passing
    through an enemy takes a dangerous terrain test (CORE.TERRAIN.DANGEROUS).

    Returns the flee distance rolled (inches).
    """
    s = battle.state
    if u.troop_type == "war_machine":
        from battleline.env.rules import war_machine_profiles

        war_machine_profiles.crew_stands(battle, u, rule)  # CORE.WM.PANIC: the crew does not flee
        return 0
    if roll is None:
        roll = flee_roll(battle, u, rule)
    u.fleeing = True
    u.flags["fled"] = True
    mark_engagements_removed(battle, u)
    start_poly = space.footprint(u)
    walls = space.castle_blocks(s, u)  # from where it starts: a unit on the walls may flee off them
    if math.hypot(u.x - source_xy[0], u.y - source_xy[1]) < 1e-9:
        away = geo.Pose(u.x, u.y, u.facing + 180.0)
    else:
        away = geo.Pose(u.x, u.y, geo.facing_towards(source_xy, (u.x, u.y)))
    others = [o for o in space.alive_units(s) if o.uid != u.uid]
    dist = _clear_distance(battle, u, away, float(roll), [space.footprint(o) for o in others])
    end = geo.move_straight(away, dist)
    end_poly = space.footprint_at(u, end)
    path = geo.swept_area(start_poly, end_poly)
    battle.emit(rule, unit=u.uid, flee=True, distance=dist, roll=roll, x=end.x, y=end.y, facing=end.facing, **info)
    battle.emit("CORE.PSY.FLEE.MOVE", unit=u.uid, distance=dist, x=end.x, y=end.y, facing=end.facing)
    through = [o for o in others if geo.overlaps(path, space.footprint(o))]
    u.x, u.y, u.facing = end.x, end.y, end.facing % 360.0
    blocked = any(geo.overlaps(path, space.terrain_poly(t)) for t in space.terrain_of(s, space.IMPASSABLE))
    blocked = blocked or any(geo.overlaps(path, b) for b in walls)  # SIEGE.SCEN.CASTLE
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
        if o.side == u.side and o.alive and not u.has("swarm"):
            panic_test(battle, o, (u.x, u.y), "CORE.PSY.PANIC.TRIGGER_FLED_THROUGH", source=u.uid)
    return roll


FLEE_CLEAR_TOLERANCE = 1e-6  # inches: how exactly the end of "moves on until clear" is found


def _clear_distance(battle: Battle, u: UnitState, away: geo.Pose, dist: float, polys: list) -> float:
    """The flee distance once "it moves on until clear" (CORE.PSY.FLEE.MOVE): the least distance ≥ ``dist``
    along ``away`` at which ``u`` ends at least 1" from every footprint in ``polys``, or the first one off the table.

    Along a straight line the distances at which ``u`` is within 1" of one
    (convex) unit form an interval, so the move jumps to the far end of each
    interval it ends in, found by bisection to :data:`FLEE_CLEAR_TOLERANCE`,
    until it ends clear of all. In a siege it then also moves on, in 0.5"
    steps, until it is clear of the walls or stands on one in one rank
    (SIEGE.REACT.WALL: a defender fleeing off a wall goes into the courtyard).
    """
    s = battle.state

    def at(d: float):
        return space.footprint_at(u, geo.move_straight(away, d))

    def on_table(poly) -> bool:
        return geo.within_table(poly, s.table_w, s.table_h)

    def within(poly, other) -> bool:
        return geo.distance(poly, other) < 1.0

    while True:
        end_poly = at(dist)
        if not on_table(end_poly):
            return dist
        blocking = [o for o in polys if within(end_poly, o)]
        if blocking:
            for o in blocking:
                lo, hi = dist, dist + 0.5
                while within(at(hi), o) and on_table(at(hi)):
                    lo, hi = hi, hi + 0.5
                while hi - lo > FLEE_CLEAR_TOLERANCE:
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if within(at(mid), o) else (lo, mid)
                dist = max(dist, hi)
            continue
        if s.castle and not space.castle_end_ok(s, u, end_poly):
            dist += 0.5
            continue
        return dist


def _dangerous_terrain(battle: Battle, u: UnitState, **info: object) -> None:
    """CORE.TERRAIN.DANGEROUS: each model rolls a D6; on a 1 it takes a wound (a chariot: D6 wounds), no armour save.

    A chariot's D6 wounds all go to the model that rolled the 1; the excess is lost (CORE.WOUND.APPLY).
    """
    from battleline.env.rules.casualties import apply_wounds

    faces = battle.dice.d6("CORE.TERRAIN.DANGEROUS", u.models)
    failed = sum(1 for f in faces if f == 1)
    if u.troop_type != "chariot":
        battle.emit("CORE.TERRAIN.DANGEROUS", unit=u.uid, wounds=failed, **info)
        if failed:
            apply_wounds(battle, u, failed, rule="CORE.TERRAIN.DANGEROUS")
        return
    rolls = [battle.dice.d6("CORE.TERRAIN.DANGEROUS")[0] for _ in range(failed)]
    battle.emit("CORE.TERRAIN.DANGEROUS", unit=u.uid, wounds=sum(rolls), chariot_rolls=rolls, **info)
    for n in rolls:
        if not u.in_play:
            break
        apply_wounds(battle, u, min(n, max(1, u.profile.W) - u.wounds_taken), rule="CORE.TERRAIN.DANGEROUS")


def nearest_enemy(battle: Battle, u: UnitState, non_fleeing: bool = True) -> UnitState | None:
    """The closest enemy unit on the table (centre to centre), if any; ties go to the lower uid.

    A cheap estimate for facings and agents; the rules' "nearest enemy" is :func:`closest_enemy`.
    """
    side, x, y = 1 - u.side, u.x, u.y
    best, best_d = None, math.inf
    for e in battle.state.units:  # in uid order: the strict < keeps the lower uid of a tie
        # e.alive spelled out (UnitState.alive): this runs for every unit's reform option at every move decision
        if (e.side == side and e.deployed and not e.removed and e.models > 0 and e.joined_to is None
                and not (non_fleeing and e.fleeing)):
            d = math.hypot(e.x - x, e.y - y)
            if best is None or d < best_d:
                best, best_d = e, d
    return best


def closest_enemy(battle: Battle, u: UnitState, non_fleeing: bool = True, tie_rule: str | None = None) -> UnitState | None:
    """The enemy unit nearest to ``u`` by CORE.CONV.DISTANCE (footprint to footprint), if any.

    With ``tie_rule``, enemies equally near (within CORE.CONV.UNITS' ε) are
    settled at random: a D6 logged under ``tie_rule``, re-rolled until it
    names one of them (in uid order). Without it the lower uid wins.
    """
    enemies = [e for e in space.alive_units(battle.state, 1 - u.side) if not (non_fleeing and e.fleeing)]
    if not enemies:
        return None
    dists = [(space.unit_distance(u, e), e.uid, e) for e in enemies]
    best = min(d for d, _, _ in dists)
    tied = [e for d, _, e in sorted(dists, key=lambda t: t[1]) if d <= best + geo.EPS]
    if len(tied) == 1 or tie_rule is None or len(tied) > 6:
        return tied[0]
    while True:
        face = battle.dice.d6(tie_rule)[0]
        if face <= len(tied):
            return tied[face - 1]


def start_of_turn(battle: Battle) -> None:
    """CORE.START.SEQUENCE and CORE.PSY.RALLY for the phasing player's fleeing units (CORE.PSY.FLEE.STATUS).

    A fleeing unit tests Ld (musician +1, maximum 10; the General's Ld within
    12"). A multi-model unit below 25% of its starting models fails
    automatically. A unit that rallies faces the nearest enemy (its free
    reform), may not move this turn and counts as having moved.
    """
    s = battle.state
    battle.emit("CORE.START.SEQUENCE", player=s.active)
    stupidity_tests(battle)
    for u in space.alive_units(s, s.active):
        if not u.fleeing:
            continue
        battle.emit("CORE.PSY.FLEE.STATUS", unit=u.uid, may_not=["charge", "shoot", "cast", "join"])
        if u.start_models > 1 and u.models * 4 < u.start_models:
            battle.emit("CORE.PSY.RALLY", unit=u.uid, passed=False, automatic=True, models=u.models)
            u.flags["failed_rally"] = True
            continue
        ld = inspired_ld(battle, u)
        if u.musician:
            ld = min(10, ld + 1)
            battle.emit("CORE.SR.MUSICIAN", unit=u.uid, test="CORE.PSY.RALLY", ld=ld)
        if test_ld(battle, u, ld, "CORE.PSY.RALLY"):
            u.fleeing = False
            u.flags["rallied"] = True
            u.flags["moved"] = True
            enemy = nearest_enemy(battle, u)
            if enemy is not None:  # the free reform, where it is legal
                u.facing = turn_in_place(battle, u, geo.facing_towards((u.x, u.y), (enemy.x, enemy.y)),
                                         "CORE.PSY.RALLY").facing
            battle.emit("CORE.PSY.RALLY", unit=u.uid, rallied=True, x=u.x, y=u.y, facing=u.facing)
        else:
            u.flags["failed_rally"] = True


def turn_in_place(battle: Battle, u: UnitState, facing: float, move: str) -> geo.Pose:
    """The pose of ``u`` turned about its centre to ``facing`` (degrees) where that footprint is legal
    (CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE, terrain), else its current pose.

    A turn refused because the footprint would cross the table edge emits
    CORE.MOVE.TABLE_EDGE (``move``: the rule ID of the move, ``turned=False``).
    """
    turned = geo.Pose(u.x, u.y, facing)
    poly = space.footprint_at(u, turned)
    s = battle.state
    if not geo.within_table(poly, s.table_w, s.table_h):
        battle.emit("CORE.MOVE.TABLE_EDGE", unit=u.uid, move=move, turned=False, heading=facing)
        return space.pose(u)
    return space.pose(u) if space.Surroundings(s, u).blocked(poly, poly) else turned


def compulsory_moves(battle: Battle) -> None:
    """CORE.MOVE.COMPULSORY: units that failed to rally flee away from the nearest non-fleeing enemy.

    "Nearest" is footprint to footprint (CORE.CONV.DISTANCE, :func:`closest_enemy`), ties settled at
    random; the flee is directed away from that enemy's centre (CORE.PSY.FLEE.MOVE).
    """
    s = battle.state
    battle.emit("CORE.MOVE.COMPULSORY", player=s.active)
    for u in space.alive_units(s, s.active):
        if u.fleeing and u.flags.get("failed_rally"):
            enemy = closest_enemy(battle, u, tie_rule="CORE.MOVE.COMPULSORY")
            source = (enemy.x, enemy.y) if enemy is not None else (u.x, u.y - 1.0 if u.side == 0 else u.y + 1.0)
            flee(battle, u, source, "CORE.MOVE.COMPULSORY")
            u.flags["moved"] = True
    for u in space.alive_units(s, s.active):
        if u.flags.get("stupid") and not u.fleeing and not engaged(battle, u):
            stupidity_move(battle, u)


# --------------------------------------------------------------------- Stupidity
def stupidity_tests(battle: Battle) -> None:
    """CORE.PSY.STUPIDITY (CORE.START.SEQUENCE step 2): each non-engaged, non-fleeing Stupid unit tests its Ld.

    A failure marks the unit ``stupid`` for the turn: it may not charge, shoot,
    cast or move by choice, and makes its D6" move among the compulsory moves.
    """
    s = battle.state
    for u in space.alive_units(s, s.active):
        if not u.has("stupidity") or u.fleeing or engaged(battle, u):
            continue
        battle.emit("CORE.SR.STUPIDITY", unit=u.uid)
        if not test_ld(battle, u, characters.unit_ld(battle, u), "CORE.PSY.STUPIDITY"):
            u.flags["stupid"] = True


def stupidity_move(battle: Battle, u: UnitState) -> float:
    """CORE.PSY.STUPIDITY: move D6" towards the nearest enemy (straight ahead if none), stopping 1" short.

    The nearest enemy is the enemy unit nearest footprint to footprint (CORE.CONV.DISTANCE,
    :func:`closest_enemy`), fleeing or not: unlike CORE.MOVE.COMPULSORY, the rule names no exception.

    The unit turns about its centre to face the enemy (where that footprint is
    legal), then moves straight, stopping 1" from any unit. Returns the distance moved.
    """
    from battleline.env.rules.movement import furthest_legal

    roll = battle.dice.d6("CORE.PSY.STUPIDITY")[0]
    enemy = closest_enemy(battle, u, non_fleeing=False)
    start = space.pose(u)
    if enemy is not None:
        start = turn_in_place(battle, u, geo.facing_towards((u.x, u.y), (enemy.x, enemy.y)), "CORE.PSY.STUPIDITY")
    dist = furthest_legal(battle, u, start, float(roll), gap=1.0) or 0.0
    end = geo.move_straight(start, dist)
    u.x, u.y, u.facing = end.x, end.y, end.facing % 360.0
    u.flags["moved"] = True
    battle.emit("CORE.PSY.STUPIDITY", unit=u.uid, roll=roll, distance=dist, towards=None if enemy is None else enemy.uid,
                x=u.x, y=u.y, facing=u.facing)
    return dist


# --------------------------------------------------------------------- Fear and Terror
def forget_fear(battle: Battle) -> None:
    """End "WS 1 for that combat" (CORE.PSY.FEAR) for every unit no longer engaged."""
    for u in battle.state.units:
        if u.marks.get("afraid_of") and not engaged(battle, u):
            del u.marks["afraid_of"]


def fear_test(battle: Battle, u: UnitState, source: UnitState, role: str) -> str | None:
    """One Fear or Terror test of ``u`` against ``source`` (CORE.PSY.FEAR, CORE.PSY.TERROR).

    Terror-causers ignore Fear and Terror; Fear-causers ignore Fear and take
    only a Fear test against Terror; a unit takes one Terror test per game and
    Fear tests afterwards. ItP, Frenzy and Stupidity pass automatically; the
    General's Ld may be used (CORE.PSY.HELPERS). A failed Fear test sets the
    unit's WS to 1 for the combat with ``source``.

    Returns None (no test), "passed", "fear" (failed Fear) or "terror" (failed Terror).
    """
    if not special_rules.causes_fear(source) or not u.alive or u.fleeing:
        return None
    kind = "terror" if special_rules.causes_terror(source) else "fear"
    if special_rules.causes_terror(u) or (special_rules.causes_fear(u) and kind == "fear"):
        battle.emit("CORE.PSY.FEAR", unit=u.uid, source=source.uid, role=role, ignored=True)
        return None
    if kind == "terror" and (special_rules.causes_fear(u) or u.marks.get("terror_tested")):
        kind = "fear"
    rule = "CORE.PSY.TERROR" if kind == "terror" else "CORE.PSY.FEAR"
    battle.emit("CORE.SR.TERROR" if special_rules.causes_terror(source) else "CORE.SR.FEAR",
                unit=source.uid, target=u.uid, test=rule)
    if immune(battle, u, rule):
        battle.emit(rule, unit=u.uid, source=source.uid, role=role, passed=True, automatic=True)
        passed = True
    else:
        if kind == "terror":
            u.marks["terror_tested"] = True
        ld = inspired_ld(battle, u)
        passed = test_ld(battle, u, ld, rule, source=source.uid, role=role)
    afraid = [i for i in u.marks.get("afraid_of", []) if i != source.uid]
    if not passed and kind == "fear":
        afraid.append(source.uid)
    if afraid:
        u.marks["afraid_of"] = afraid
    else:
        u.marks.pop("afraid_of", None)
    return "passed" if passed else kind


def charge_psychology(battle: Battle, charger: UnitState, target: UnitState) -> str | None:
    """Fear and Terror at a charge declaration (CORE.PSY.TIMING).

    The charger tests right after declaring; if it fails Terror it flees at
    once away from the target and its charge is cancelled ("cancelled"). Then
    the charged unit tests before it reacts; if it fails Terror it flees at
    once, which is its reaction ("fled"). Otherwise returns None.
    """
    if not (special_rules.causes_fear(charger) or special_rules.causes_fear(target)):
        return None
    battle.emit("CORE.PSY.TIMING", charger=charger.uid, target=target.uid)
    if fear_test(battle, charger, target, "charger") == "terror":
        flee(battle, charger, (target.x, target.y), "CORE.PSY.TERROR", cancelled_charge=target.uid)
        return "cancelled"
    if fear_test(battle, target, charger, "charged") == "terror":
        if target.troop_type == "war_machine":
            flee(battle, target, (charger.x, charger.y), "CORE.PSY.TERROR")  # CORE.WM.PANIC: the crew stays
            return None
        target.flags["fled_reaction"] = True
        flee(battle, target, (charger.x, charger.y), "CORE.REACT.FLEE", terror=True)
        return "fled"
    return None


def combat_ws(battle: Battle, u: UnitState) -> int:
    """The WS ``u`` fights with: 1 while it is in a combat with a unit it failed a Fear test against (CORE.PSY.FEAR)."""
    afraid = u.marks.get("afraid_of")
    if not afraid:
        return u.profile.WS
    engs = battle.state.engagements
    seen, todo = {u.uid}, [u.uid]
    while todo:
        x = todo.pop()
        for e in engs:
            for a, b in ((e.attacker, e.defender), (e.defender, e.attacker)):
                if a == x and b not in seen:
                    seen.add(b)
                    todo.append(b)
    return 1 if any(i in seen for i in afraid) else u.profile.WS
