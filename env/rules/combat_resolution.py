"""The end of a close-combat round: combat result, break tests and contact kept (CORE.CC.COMBAT_RESULT.*).

Each side's combat result (wounds, charge, ranks, standard, flank, rear,
overkill, outnumber, musician), the losers' break tests (CORE.CC.BREAK_TEST),
the winner closing up to enemies it lost contact with (CORE.CC.CONTACT_KEEP),
and the pursuit decisions that follow a break (CORE.CC.PURSUE_CHOICE): asked
of the winners, or, where none is asked, flight and pursuit at once
(:mod:`env.rules.pursuit`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from battleline.env.rules import characters, psychology, space, special_rules
from battleline.env.rules import geometry as geo
from battleline.env.rules.pursuit import _flee_and_pursue
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.strikes import _contacts, flank_or_rear_engaged

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MAX_RANK_BONUS = 3  # CORE.CC.COMBAT_RESULT.RANKS
RANK_MIN_MODELS = 4


def _side_bonus(battle: Battle, side_units: list[int], enemy_units: list[int], group: list[Engagement]) -> dict[str, int]:
    live = [battle.unit(i) for i in side_units if battle.unit(i).alive and not battle.unit(i).fleeing]
    parts: dict[str, int] = {}
    eligible = [u for u in live if not flank_or_rear_engaged(battle, u) and not u.has("skirmishers")]
    ranks = max((min(MAX_RANK_BONUS, sum(1 for r in range(2, u.ranks + 1) if u.models_in_rank(r) >= RANK_MIN_MODELS))
                 for u in eligible), default=0)
    if ranks:
        parts["ranks"] = ranks
    if any(u.standard for u in live):
        parts["standard"] = 1
        battle.emit("CORE.SR.STANDARD", units=[u.uid for u in live if u.standard], bonus=1)
    uids = {u.uid for u in live}
    facings = {e.facing for e in group if e.attacker in uids and e.defender in enemy_units}
    if facings & {"left", "right"}:
        parts["flank"] = 1
    if "rear" in facings:
        parts["rear"] = 2
    return parts


def combat_result(
    battle: Battle,
    sides: dict[int, list[int]],
    wounds_by_side: list[int],
    charging_side: int | None,
    group: list[Engagement],
    overkill: list[int] | None = None,
) -> tuple[list[int], list[dict[str, int]]]:
    """Each side's combat result total and parts (CORE.CC.COMBAT_RESULT.*).

    Parts: wounds, charge, ranks, standard, bsb (+1 once per side with the
    BSB fighting, CORE.SR.BSB), flank, rear, overkill (a duel's, at most +5,
    CORE.CC.COMBAT_RESULT.OVERKILL), outnumber (joined characters count as
    models), musician.
    """
    parts: list[dict[str, int]] = []
    for side in (0, 1):
        p = {"wounds": wounds_by_side[side]}
        if charging_side == side:
            p["charge"] = 1
        p.update(_side_bonus(battle, sides[side], sides[1 - side], group))
        if characters.side_has_bsb(battle, sides[side]):
            p["bsb"] = 1
        if overkill and overkill[side]:
            p["overkill"] = overkill[side]
        parts.append(p)
    models = [
        sum(battle.unit(i).models for i in sides[side] if battle.unit(i).alive) + characters.joined_models(battle, sides[side])
        for side in (0, 1)
    ]
    if models[0] != models[1]:
        parts[0 if models[0] > models[1] else 1]["outnumber"] = 1
    if battle.state.castle:  # SIEGE.CC.RESULT: no ranks or outnumber at a wall
        from battleline.env.rules.siege import play

        units = [[battle.unit(i) for i in sides[side]] for side in (0, 1)]
        parts = [play.result_parts(battle.state, units[0], units[1], p) for p in parts]
    totals = [sum(p.values()) for p in parts]
    if totals[0] == totals[1]:
        has_music = [any(battle.unit(i).musician and battle.unit(i).alive for i in sides[side]) for side in (0, 1)]
        if has_music[0] != has_music[1]:
            parts[0 if has_music[0] else 1]["musician"] = 1
            totals = [sum(p.values()) for p in parts]
    return totals, parts


def _emit_parts(battle: Battle, parts: list[dict[str, int]]) -> None:
    names = {
        "wounds": "CORE.CC.COMBAT_RESULT.WOUNDS",
        "charge": "CORE.CC.COMBAT_RESULT.CHARGE",
        "ranks": "CORE.CC.COMBAT_RESULT.RANKS",
        "standard": "CORE.CC.COMBAT_RESULT.STANDARD",
        "flank": "CORE.CC.COMBAT_RESULT.FLANK",
        "rear": "CORE.CC.COMBAT_RESULT.REAR",
        "bsb": "CORE.CC.COMBAT_RESULT.STANDARD",
        "overkill": "CORE.CC.COMBAT_RESULT.OVERKILL",
        "outnumber": "CORE.CC.COMBAT_RESULT.OUTNUMBER",
        "musician": "CORE.CC.COMBAT_RESULT.MUSICIAN",
    }
    for side, p in enumerate(parts):
        for key, value in p.items():
            if value:
                battle.emit(names[key], side=side, value=value)


def _unit_models(battle: Battle, u: UnitState) -> int:
    """A unit's models, its joined characters included (CORE.TEST.LD_UNIT, CORE.CC.COMBAT_RESULT.OUTNUMBER)."""
    return u.models + len(characters.members(battle.state, u))


def break_test(battle: Battle, u: UnitState, diff: int, enemies: list[UnitState]) -> bool:
    """CORE.CC.BREAK_TEST with CORE.CC.BREAK_ORDER, CORE.CC.INSPIRED, CORE.SR.STUBBORN, CORE.SR.UNBREAKABLE.

    Inspired compares the unit's models with the largest enemy unit's, joined
    characters counted as models on both sides.

    Returns True if the unit holds.
    """
    if u.has("unbreakable"):
        battle.emit("CORE.CC.BREAK_ORDER", unit=u.uid, step="unbreakable")
        battle.emit("CORE.SR.UNBREAKABLE", unit=u.uid)
        return True
    if u.has("swarm"):
        battle.emit("CORE.CC.BREAK_ORDER", unit=u.uid, step="swarm")
        special_rules.swarm_losses(battle, u, diff)
        return True
    base = psychology.inspired_ld(battle, u)
    largest = max((_unit_models(battle, e) for e in enemies), default=0)
    models = _unit_models(battle, u)
    if u.has("stubborn"):
        ld, why = base, "stubborn"
        battle.emit("CORE.SR.STUBBORN", unit=u.uid, ld=base, difference_ignored=diff)
    elif models > largest:
        ld, why = base, "inspired"
        battle.emit("CORE.CC.INSPIRED", unit=u.uid, models=models, largest_enemy=largest)
    else:
        ld, why = base - diff, "modified"
    battle.emit("CORE.CC.BREAK_ORDER", unit=u.uid, step=why)
    return psychology.test_ld(battle, u, ld, "CORE.CC.BREAK_TEST", difference=diff, base_ld=base, basis=why)


def _result_and_break(
    battle: Battle,
    group: list[Engagement],
    sides: dict[int, list[int]],
    wounds_by_side: list[int],
    r1: bool,
    charging_side: int | None,
    overkill: list[int] | None = None,
) -> bool:
    s = battle.state
    sides = characters.refresh_sides(battle, sides)
    for i in (u for side in sides.values() for u in side):
        battle.unit(i).flags.pop("killed_this_round", None)
    alive = [[i for i in sides[side] if battle.unit(i).alive] for side in (0, 1)]
    if not alive[0] or not alive[1]:
        battle.emit("CORE.CC.COMBAT_RESULT.COMPARE", outright=True, winner=0 if alive[0] else (1 if alive[1] else None))
        return False
    totals, parts = combat_result(battle, sides, wounds_by_side, charging_side, group, overkill)
    _emit_parts(battle, parts)
    if totals[0] == totals[1]:
        battle.emit("CORE.CC.COMBAT_RESULT.COMPARE", totals=totals, winner=None)
        close_gaps(battle, group, s.active)  # CORE.CC.CONTACT_KEEP: a draw, the phasing player's units close up
        return False
    winner = 0 if totals[0] > totals[1] else 1
    diff = abs(totals[0] - totals[1])
    battle.emit("CORE.CC.COMBAT_RESULT.COMPARE", totals=totals, winner=winner, difference=diff)
    losers = [battle.unit(i) for i in alive[1 - winner]]
    if s.castle:  # SIEGE.CAPTURE.PARAPET
        from battleline.env.rules.siege import play

        play.round_won(battle, [battle.unit(i) for i in alive[winner]], losers)
    special_rules.lose_frenzy(battle, losers)
    if len(alive[0]) + len(alive[1]) > 2:
        battle.emit("CORE.CC.MULTI", losers=[u.uid for u in losers], difference=diff)
    enemies = [battle.unit(i) for i in alive[winner]]
    broken: list[int] = []
    for u in losers:
        if not break_test(battle, u, diff, enemies):
            broken.append(u.uid)
            for x in [u, *characters.members(s, u)]:
                x.broken = True  # CORE.VP.BSB: a BSB in a unit that failed a break test
            if u.standard:
                u.standard = False
                s.captured_standards[winner] += 1
                battle.emit("CORE.VP.STANDARD", unit=u.uid, captured_by=winner)
    if broken and s.castle:  # SIEGE.BREAK.ATTACKER, SIEGE.BREAK.DEFENDER, SIEGE.TOWER.ASSAULT: no pursuit
        from battleline.env.rules.siege import play

        broken = play.breaks_at_wall(battle, play.breaks_at_door(battle, broken))
    fought = {str(b): sorted(_contacts(battle, b)) for b in broken}  # CORE.CC.FLEE: whom each flees from
    close_gaps(battle, group, winner)  # CORE.CC.CONTACT_KEEP
    if not broken:
        return False
    ask = []
    for w in alive[winner]:
        wu = battle.unit(w)
        contacts = _contacts(battle, w)
        if contacts and contacts <= set(broken) and not wu.fleeing:
            ask.append(w)
    s.queue["pursuit"] = {"broken": broken, "ask": ask, "answers": {}, "winner": winner, "fought": fought}
    if ask:
        return True
    _flee_and_pursue(battle)
    return False


CLOSE_UP = 2.0  # CORE.CC.CONTACT_KEEP: the winner closes up to 2" straight ahead
CLOSE_UP_STEP = 0.05  # inches between the positions tried before the exact contact distance is found


def close_gaps(battle: Battle, group: list[Engagement], side: int) -> None:
    """CORE.CC.CONTACT_KEEP: units of ``group`` that lost contact when a footprint shrank close up or disengage.

    Casualties come off the last rank and the front line stays closed
    (000:L968): a unit that lost a rank keeps its front edge, so an enemy in
    its rear is left a rank's depth away, and a front rank that lost files
    slides (:func:`env.rules.casualties.keep_contacts`), which may leave a
    flank enemy apart. Only models in base contact fight (000:L906), so for
    each engagement with a unit whose footprint shrank this round
    (:data:`env.rules.casualties.SHRANK`) whose footprints no longer touch
    (within :data:`env.rules.casualties.CONTACT_GAP` inches), neither unit
    fleeing: the unit of ``side`` (the round's winner; in a draw the phasing
    player's) moves straight ahead by the least distance up to CLOSE_UP
    inches that touches the other again, for free (:func:`_close_up_distance`).
    If none does (for instance a winner whose enemy stands behind it), the
    engagement ends. Units that failed their break test are closed up to as
    well, so the winner may pursue them; one that can no longer be reached
    still flees from the units it fought (:func:`_flee_and_pursue`). Each
    close-up or disengagement emits CORE.CC.CONTACT_KEEP.

    A character left alone when its host was wiped out this round
    (CORE.TYPE.CHARACTER, :func:`characters.on_removed`) stands in its slot
    with the host's engagements: its engagements are those of the combat too.
    """
    from battleline.env.rules.casualties import CONTACT_GAP, SHRANK

    uids = {i for e in group for i in (e.attacker, e.defender)}
    uids |= {u.uid for u in battle.state.units if u.flags.get("inherited") in uids}
    group = [e for e in battle.state.engagements if e.attacker in uids or e.defender in uids]
    shrank = {i for e in group for i in (e.attacker, e.defender) if battle.unit(i).flags.pop(SHRANK, False)}
    for e in [e for e in group if {e.attacker, e.defender} & shrank]:
        a, d = battle.unit(e.attacker), battle.unit(e.defender)
        if not (a.alive and d.alive) or a.fleeing or d.fleeing or e not in battle.state.engagements:
            continue
        if geo.distance(space.footprint(a), space.footprint(d)) <= CONTACT_GAP:
            continue
        if battle.state.castle and _at_door(battle, a, d):
            continue  # SIEGE.TOWER.ASSAULT: a fight at a door never had base contact
        mover, other = (a, d) if a.side == side else (d, a)
        dist = _close_up_distance(battle, mover, other)
        if dist is None:
            battle.state.engagements.remove(e)
            battle.emit("CORE.CC.CONTACT_KEEP", unit=mover.uid, target=other.uid, closed=False, disengaged=True)
            continue
        end = geo.move_straight(space.pose(mover), dist)
        mover.x, mover.y = end.x, end.y
        battle.emit("CORE.CC.CONTACT_KEEP", unit=mover.uid, target=other.uid, closed=True, moved=dist, x=end.x, y=end.y)


def _at_door(battle: Battle, a: UnitState, d: UnitState) -> bool:
    from battleline.env.rules.siege import play

    return play.door_fight(battle.state, a, d) is not None


def _close_up_distance(battle: Battle, u: UnitState, other: UnitState) -> float | None:
    """The least distance (inches, ≤ CLOSE_UP) ``u`` moves straight ahead to touch ``other``, or None.

    None also when the move there is not possible: its end overlaps ``other``,
    its swept path overlaps another unit or impassable terrain, it ends in
    the castle or off the table (CORE.MOVE.TABLE_EDGE), or it would take
    ``u`` out of contact with another enemy it is engaged with.
    """
    from battleline.env.rules.casualties import CONTACT_GAP

    s = battle.state
    target = space.footprint(other)
    start = space.pose(u)
    start_poly = space.footprint(u)
    blockers = [space.footprint(o) for o in space.alive_units(s) if o.uid not in (u.uid, other.uid)]
    blockers += [space.terrain_poly(t) for t in space.terrain_of(s, space.IMPASSABLE)]
    held = [space.footprint(o) for o in map(battle.unit, _contacts(battle, u.uid))
            if o.uid != other.uid and o.alive and geo.distance(start_poly, space.footprint(o)) <= CONTACT_GAP]

    def apart(dist: float) -> float:
        return geo.distance(space.footprint_at(u, geo.move_straight(start, dist)), target)

    lo, hi = 0.0, None
    for k in range(1, round(CLOSE_UP / CLOSE_UP_STEP) + 1):
        if apart(k * CLOSE_UP_STEP) <= 1e-9:
            hi = k * CLOSE_UP_STEP
            break
        lo = k * CLOSE_UP_STEP
    if hi is None:
        return None
    for _ in range(30):  # bisection to the exact contact distance
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if apart(mid) <= 1e-9 else (mid, hi)
    poly = space.footprint_at(u, geo.move_straight(start, hi))
    path = geo.swept_area(start_poly, poly)
    if not geo.within_table(poly, s.table_w, s.table_h) or not space.castle_end_ok(s, u, poly):
        return None
    if geo.overlaps(poly, target) or any(geo.overlaps(path, b) for b in blockers):
        return None
    if any(geo.distance(poly, h) > CONTACT_GAP for h in held):
        return None
    return hi
