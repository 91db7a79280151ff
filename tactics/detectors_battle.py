"""Detectors of the tactics of tactics.md §2 and §3, read over the battle's player turns.

Running away (§2.1), preliminary calculations (§2.2: flank charges, threat zones, control
of table space, herding, baits), terrain (§3.1) and the three useful checks (§3.2). Each
detector registers itself in :data:`tactics.detectors_common.DETECTORS` under its
catalogue id; :func:`tactics.detectors.detect` runs them.
"""

from __future__ import annotations

import math

import shapely

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.tactics.battle_log import POSITION_RULES, BattleLog, Charge, PlayerTurn, Pose, Snapshot
from battleline.tactics.detectors_common import (
    ADVANCE_MIN,
    BAIT_MAX_SHARE,
    BAIT_WINDOW,
    CHOKE_CONTROL_SHARE,
    CONTROL_SHARE_MIN,
    CONTROL_TREND_MIN,
    CONTROL_TURNS,
    COUNTER_CHARGE_MAX_SHARE,
    COVER_FLANK_GAP,
    COVER_HALF,
    COVER_MIN_SAMPLES,
    DENIAL_MIN_ENTRIES,
    DENIAL_PUNISH_SHARE,
    DENIAL_TURNS,
    DOOMED_ESCAPE,
    DOOMED_SHARE_MAX,
    EXPOSURE_MAX,
    EXPOSURE_MIN_SAMPLES,
    FEIGN_WINDOW,
    FLANK_ARCS,
    FLANK_PREP_WINDOW,
    FLANK_RATE_MIN,
    FLEE_RALLY_SHARE,
    FLEE_STRENGTH_RATIO,
    GAP_LANE,
    HERD_MIN_THREATS,
    HERD_WINDOW,
    JAM_FRONT_GAP,
    JAM_SLOW_SHARE,
    JAM_WINDOW,
    LINE_MIN_UNITS,
    LINE_TOLERANCE,
    LURE_MIN_CHARGERS,
    OVEREXTEND_GAP,
    OVEREXTEND_THREATS,
    PATH_INFLATION,
    SAME_FACING,
    Detection,
    _declared,
    _deployed_units,
    _flank_charges_on,
    _flank_hit,
    _in_missile_range,
    _label,
    _landed,
    _lane,
    _models_at,
    _no,
    _p_escape,
    _pct,
    _scout_retreats,
    _yes,
    detector,
)


# ============================================================================ §2.1 Running away
@detector("flee_to_preserve")
def flee_to_preserve(log: BattleLog, side: int) -> Detection:
    """flee_to_preserve (src L177): Flee! from a charger of >= FLEE_STRENGTH_RATIO x the unit strength, then rally.

    Used when at least one such flee happened and at least FLEE_RALLY_SHARE of them were
    followed by a passed rally of the fleer (CORE.REACT.DECLARE flee, CORE.PSY.RALLY).
    """
    flees = []
    for f in log.flights:
        if f.cause != "reaction" or not f.first or log.units[f.unit].side != side or f.charger is None:
            continue
        snap = log.turns[f.pt].start if f.pt >= 0 else None
        us_f = log.units[f.unit].strength(_models_at(log, snap, f.unit))
        us_c = log.units[f.charger].strength(_models_at(log, snap, f.charger))
        if us_c >= FLEE_STRENGTH_RATIO * us_f:
            flees.append(f)
    if not flees:
        return _no("no Flee! from a clearly stronger charger")
    rallied = [(f, next((i for i, u in log.rallies if u == f.unit and i > f.event), None)) for f in flees]
    ok = [(f, i) for f, i in rallied if i is not None]
    share = len(ok) / len(flees)
    text = f"{len(flees)} flee(s) from stronger chargers, {len(ok)} rallied ({_pct(share)})"
    if share >= FLEE_RALLY_SHARE:
        f, i = ok[0]
        return _yes(log.event_turn(i), f"{text}; first: {_label(log, f.unit)} fled turn {f.turn}, "
                                       f"rallied turn {log.event_turn(i)}")
    return _no(text)


@detector("flee_viability_check")
def flee_viability_check(log: BattleLog, side: int) -> Detection:
    """flee_viability_check (src L178): few Flee! reactions with P(escape) < DOOMED_ESCAPE.

    P(escape) = P(flee roll + gap > charger M + highest 2D6), with the gap measured at the start
    of the charging player's turn; 2D6 flee, 3D6 drop lowest with Swiftstride or as cavalry.
    Used when the side fled at least once and at most DOOMED_SHARE_MAX of its flees were doomed.
    """
    rows = []
    for f in log.flights:
        if f.cause != "reaction" or not f.first or log.units[f.unit].side != side or f.charger is None or f.pt < 0:
            continue
        snap = log.turns[f.pt].start
        if f.unit not in snap.poses or f.charger not in snap.poses:
            continue
        gap = log.distance(f.unit, snap.poses[f.unit], f.charger, snap.poses[f.charger])
        u = log.units[f.unit]
        swift = "swiftstride" in u.rules or u.troop_type == "cavalry"
        rows.append((f, _p_escape(gap, log.units[f.charger].M, swift)))
    if not rows:
        return _no("no Flee! reaction")
    doomed = [f for f, p in rows if p < DOOMED_ESCAPE]
    share = len(doomed) / len(rows)
    text = (f"{len(rows)} flee(s), {len(doomed)} doomed (P(escape) < {DOOMED_ESCAPE}); "
            f"P(escape) {', '.join(f'{p:.2f}' for _, p in rows)}")
    return _yes(rows[0][0].turn, text) if share <= DOOMED_SHARE_MAX else _no(text)


@detector("feigned_flight")
def feigned_flight(log: BattleLog, side: int) -> Detection:
    """feigned_flight (src L178): a Flee! reaction, then the charger is charged in the flank or rear.

    Bait conversion: unit B of ``side`` declares Flee! against enemy charger E at turn t; a
    friendly unit K != B charges E in the flank or rear after that, by turn t + FEIGN_WINDOW
    (:func:`_flank_charges_on`: the charge lands there, or E flees from it).
    """
    for f in log.flights:
        if f.cause != "reaction" or log.units[f.unit].side != side or f.charger is None:
            continue
        hits = _flank_charges_on(log, side, int(f.charger), f.event, f.turn + FEIGN_WINDOW, exclude=[f.unit])
        if hits:
            k = hits[0]
            return _yes(k.turn, f"{_label(log, f.unit)} fled from {_label(log, int(f.charger))} at turn {f.turn}; "
                                f"{_label(log, k.unit)} {_flank_hit(k, active=True)} at turn {k.turn}")
    return _no("no flee reaction followed by a flank or rear charge on the charger")


@detector("scout_decoy_jam")
def scout_decoy_jam(log: BattleLog, side: int) -> Detection:
    """scout_decoy_jam (src L179-L181): a scout falls back, its follower jams its own infantry and is shot in the flank.

    Within JAM_WINDOW game turns after a friendly Scouts unit flees or moves backward: an enemy
    unit E that charged or pursued it ends an enemy turn within JAM_FRONT_GAP in front of another
    enemy unit I; I moves less than JAM_SLOW_SHARE x M in its next movement phase; and a friendly
    shooter standing in E's flank arc shoots E (CORE.SHOOT.ALLOCATE).
    """
    enemy = 1 - side
    for uid, _ev, _pt, turn, followers in _scout_retreats(log, side):
        for p in log.turns:
            if p.player != enemy or p.turn < turn or p.turn > turn + JAM_WINDOW or p.end is None:
                continue
            for e_uid in sorted(followers):
                if e_uid not in p.end.poses:
                    continue
                pe = p.end.poses[e_uid]
                for i_uid, pi in sorted(p.end.poses.items()):
                    if i_uid == e_uid or log.units[i_uid].side != enemy:
                        continue
                    if log.arc(i_uid, pi, pe.x, pe.y) != "front" or log.distance(e_uid, pe, i_uid, pi) > JAM_FRONT_GAP:
                        continue
                    nxt = log.next_turn_of(p.index, enemy)
                    if nxt is None:
                        continue
                    moved = sum(float(e.get("distance", 0)) for e in log.moved_in(nxt.index, i_uid))
                    moved += sum(1.0 for c in log.charges if c.pt == nxt.index and c.unit == i_uid) * log.units[i_uid].M
                    if moved >= JAM_SLOW_SHARE * log.units[i_uid].M:
                        continue
                    for i, vpt, v in log.volleys:
                        if v.get("target") != e_uid or log.units[v["unit"]].side != side or vpt <= p.index:
                            continue
                        if log.event_turn(i) > turn + JAM_WINDOW:
                            continue
                        snap = log.turns[vpt].moved
                        if snap is None or v["unit"] not in snap.poses or e_uid not in snap.poses:
                            continue
                        ps = snap.poses[v["unit"]]
                        if log.arc(e_uid, snap.poses[e_uid], ps.x, ps.y) in ("left", "right"):
                            return _yes(log.event_turn(i), (
                                f"scout {_label(log, uid)} fell back at turn {turn}; {_label(log, e_uid)} followed, "
                                f"blocked {_label(log, i_uid)} and was shot in the flank by "
                                f"{_label(log, v['unit'])} at turn {log.event_turn(i)}"))
    return _no("no scout retreat that jammed the enemy and exposed a flank to shooting")


# ============================================================================ §2.2 Preliminary calculations
@detector("flanking_charge_bonus")
def flanking_charge_bonus(log: BattleLog, side: int) -> Detection:
    """flanking_charge_bonus (src L185): a charge lands in a flank or rear, and >= FLANK_RATE_MIN of declared charges aim there.

    Declared arcs come from CORE.CHARGE.DECLARE (charges at fleeing units excluded), the
    landing from CORE.CHARGE.MOVE ``facing`` in left/right/rear.
    """
    declared = [c for c in _declared(log, side) if not c.vs_fleeing]
    landed = [c for c in _landed(log, side) if c.landed in FLANK_ARCS]
    if not declared:
        return _no("no charge declared")
    rate = sum(1 for c in declared if c.declared in FLANK_ARCS) / len(declared)
    text = f"{len(landed)} flank/rear charge(s) landed; flank/rear rate {_pct(rate)} of {len(declared)} declared"
    if landed and rate >= FLANK_RATE_MIN:
        c = landed[0]
        return _yes(c.turn, f"{text}; first: {_label(log, c.unit)} into the {c.landed} of "
                            f"{_label(log, c.target)} at turn {c.turn}")
    return _no(text)


@detector("threat_zone_forecast")
def threat_zone_forecast(log: BattleLog, side: int) -> Detection:
    """threat_zone_forecast (src L187-L191): few end-of-move positions inside the enemy threat zone.

    Samples: every friendly unit that made a CORE.MOVE.* move in a friendly movement phase, at
    the end of that phase, not engaged or fleeing. Exposed: an enemy unit threatens it. Used
    when there are >= EXPOSURE_MIN_SAMPLES samples and the exposed share is <= EXPOSURE_MAX.
    """
    samples, exposed, first = 0, 0, None
    for p in log.player_turns(side):
        snap = p.moved
        if snap is None:
            continue
        for uid in sorted({e["unit"] for e in (m for _, pt, m in log.moves if pt == p.index)}):
            if uid not in snap.poses or uid in snap.engaged or snap.poses[uid].fleeing:
                continue
            samples += 1
            first = p.turn if first is None else first
            if log.threats_on(snap, uid, 1 - side):
                exposed += 1
    if samples < EXPOSURE_MIN_SAMPLES:
        return _no(f"only {samples} end-of-move position(s)")
    rate = exposed / samples
    text = f"{exposed} of {samples} end-of-move positions inside the enemy threat zone ({_pct(rate)})"
    return _yes(first, text) if rate <= EXPOSURE_MAX else _no(text)


@detector("terrain_denial_by_threat")
def terrain_denial_by_threat(log: BattleLog, side: int) -> Detection:
    """terrain_denial_by_threat (src L189): a hill in friendly control for DENIAL_TURNS turns, held by threat alone.

    At the end of each game turn the hill's representative point must lie in control(own)
    (threatened by a friendly unit, by no enemy unit), with no friendly unit's centre on the
    hill, and any enemy unit standing on it must be charged in the next game turn.
    """
    hills = log.terrain_polys({"hill"})
    last = max((p.turn for p in log.turns), default=0)
    for t, poly in hills:
        pt = poly.representative_point()
        run = 0
        for turn in range(1, last + 1):
            snap = log.turn_end(turn)
            ok = snap is not None and log.in_control(snap, side, pt.x, pt.y)
            if ok:
                on = [uid for uid, p in snap.poses.items() if poly.contains(shapely.Point(p.x, p.y))]
                if any(log.units[u].side == side for u in on):
                    ok = False
                for u in on:
                    if log.units[u].side != side and not any(
                            c.target == u and c.turn == turn + 1 for c in _declared(log, side)):
                        ok = False
            run = run + 1 if ok else 0
            if run >= DENIAL_TURNS:
                return _yes(turn, f"{t.name or t.kind} in friendly control and unoccupied for turns "
                                  f"{turn - DENIAL_TURNS + 1}-{turn}")
    return _no(f"no hill denied for {DENIAL_TURNS} turns" if hills else "no hill on the table")


def _entered_reach(log: BattleLog, p: PlayerTurn, side: int) -> list[int]:
    """Units of ``side`` that the movement phase of its player turn ``p`` took from outside every enemy's charge
    reach into one (:meth:`BattleLog.threats_on`): on the table before and after, neither engaged (a charge) nor
    fleeing after it, characters aside."""
    start, moved = p.start or log.deployed, p.moved or p.end
    if moved is None:
        return []
    return [
        u for u in sorted(moved.poses)
        if log.units[u].side == side and not log.units[u].character and u in start.poses
        and u not in moved.engaged and not moved.poses[u].fleeing
        and not log.threats_on(start, u, 1 - side) and log.threats_on(moved, u, 1 - side)
    ]


@detector("area_control")
def area_control(log: BattleLog, side: int) -> Detection:
    """area_control (src L193, L199; L187-L191): the side claims table space, fast units leading, and its line
    stays out of the enemy's reach while it does.

    Over the side's player turns in CONTROL_TURNS, control_share (:meth:`BattleLog.control_share`, on
    the CONTROL_GRID grid) is read at the end of each of them; the space is claimed when its mean is
    >= CONTROL_SHARE_MIN or it rises by >= CONTROL_TREND_MIN per game turn (last - first over the turns
    between). It is claimed, not merely advanced into, when no unit of the side's line — every unit but
    the fast ones (CAV/FC/FLY, which claim space fastest, src L199) and characters — was taken by those
    turns' movement phases from outside every enemy's charge reach into one (:func:`_entered_reach`):
    the line claims ground up to the enemy's reach and leaves the dead zone for the enemy to enter
    (src L187-L191; tactics.md §6 G-4), so the space it holds is space it can manoeuvre in safely (L193).
    """
    turns = [p for p in log.player_turns(side) if p.turn in CONTROL_TURNS and p.end is not None]
    if len(turns) < 2:
        return _no("the battle ended before the control turns")
    values = [log.control_share(p.end, side) for p in turns]
    mean = sum(values) / len(values)
    trend = (values[-1] - values[0]) / (turns[-1].turn - turns[0].turn)
    entered = [(p.turn, u) for p in turns for u in _entered_reach(log, p, side) if not log.units[u].fast]
    text = f"control share {', '.join(f'{v:.2f}' for v in values)} (mean {mean:.2f}, trend {trend:+.2f}/turn)"
    if entered:
        t, u = entered[0]
        text += f"; {len(entered)} move(s) of the line into enemy reach, first {_label(log, u)} at turn {t}"
    else:
        text += "; the line kept out of enemy reach"
    claimed = mean >= CONTROL_SHARE_MIN or trend >= CONTROL_TREND_MIN
    return _yes(turns[-1].turn, text) if claimed and not entered else _no(text)


@detector("herding_corridor")
def herding_corridor(log: BattleLog, side: int) -> Detection:
    """herding_corridor (src L195): an enemy that moved outside our threat zone is charged while >= 2 friends threaten it.

    A friendly charge on enemy unit E at turn t counts when E made a CORE.MOVE.* move ending
    outside the friendly threat zone in an enemy turn of turns t - HERD_WINDOW .. t, and at the
    start of the charging turn at least HERD_MIN_THREATS friendly units threaten E.
    """
    for c in _declared(log, side):
        if c.pt < 0:
            continue
        start = log.turns[c.pt].start
        threats = log.threats_on(start, c.target, side)
        if len(threats) < HERD_MIN_THREATS:
            continue
        for p in log.player_turns(1 - side):
            if not (c.turn - HERD_WINDOW <= p.turn <= c.turn) or p.index >= c.pt or p.moved is None:
                continue
            if log.moved_in(p.index, c.target) and not log.threats_on(p.moved, c.target, side):
                return _yes(c.turn, f"{_label(log, c.target)} moved outside our threat zone at turn {p.turn}, "
                                    f"then {_label(log, c.unit)} charged it ({c.declared}) at turn {c.turn} "
                                    f"with {len(threats)} friends in reach")
    return _no("no enemy herded from a safe lane into a charge")


@detector("ranged_area_denial")
def ranged_area_denial(log: BattleLog, side: int) -> Detection:
    """ranged_area_denial (src L196): enemy units entering friendly missile range are punished.

    An entry: an enemy unit that ends its movement phase in range and vision arc of a friendly
    shooter without having been so at the start of that turn. Punished: a friendly volley with
    an unsaved wound hits it in the next friendly turn. Used with >= DENIAL_MIN_ENTRIES entries
    and a punished share >= DENIAL_PUNISH_SHARE.
    """
    shooters = [u.uid for u in log.side_units(side) if u.shooter]
    if not shooters:
        return _no("no missile troops")
    entries, punished, first = 0, 0, None
    for p in log.player_turns(1 - side):
        if p.start is None or p.moved is None:
            continue
        for uid in sorted(p.moved.poses):
            if log.units[uid].side == side:
                continue
            now = any(_in_missile_range(log, p.moved, s, uid) for s in shooters)
            before = any(_in_missile_range(log, p.start, s, uid) for s in shooters)
            if not now or before:
                continue
            entries += 1
            nxt = log.next_turn_of(p.index, side)
            if nxt and any(pt == nxt.index and v.get("target") == uid and v.get("unsaved", 0) > 0
                           for _, pt, v in log.volleys):
                punished += 1
                first = nxt.turn if first is None else first
    if entries < DENIAL_MIN_ENTRIES:
        return _no(f"{entries} enemy entr{'y' if entries == 1 else 'ies'} into missile range")
    share = punished / entries
    text = f"{punished} of {entries} enemy entries into missile range punished next turn ({_pct(share)})"
    return _yes(first, text) if share >= DENIAL_PUNISH_SHARE else _no(text)


@detector("bait_unit")
def bait_unit(log: BattleLog, side: int) -> Detection:
    """bait_unit (src L197): a cheap unit (<= BAIT_MAX_SHARE of the points) is charged, then its charger is charged.

    An enemy unit E declares a charge on friendly bait B; within BAIT_WINDOW game turns a
    friendly unit K != B declares a charge on E (flank or rear preferred; reported).
    """
    limit = BAIT_MAX_SHARE * log.side_points(side)
    for c in log.charges:
        b = log.units[c.target]
        if b.side != side or b.points > limit:
            continue
        for k in _declared(log, side):
            if k.target == c.unit and k.unit != c.target and k.event > c.event and k.turn <= c.turn + BAIT_WINDOW:
                arc = k.landed or k.declared
                return _yes(k.turn, f"bait {_label(log, b.uid)} ({b.points} pts) charged by {_label(log, c.unit)} "
                                    f"at turn {c.turn}; {_label(log, k.unit)} charged it ({arc}) at turn {k.turn}")
    return _no("no cheap unit charged and avenged")


# ============================================================================ §3.1 Terrain
def _cover_share(log: BattleLog, uid: int, p: Pose) -> float:
    fp = log.footprint(uid, p)
    area = sum(fp.intersection(poly).area for _, poly in log.terrain_polys(space.SOFT_COVER | space.HARD_COVER))
    return min(1.0, area / fp.area) if fp.area else 0.0


@detector("terrain_cover_from_ranged")
def terrain_cover_from_ranged(log: BattleLog, side: int) -> Detection:
    """terrain_cover_from_ranged (src L227, L235-L237): exposed units end their moves at least half in cover.

    Samples: friendly non-shooting units ending a friendly movement phase (after a move) in
    range and vision arc of an enemy shooter. In cover: >= COVER_HALF of the footprint inside
    soft or hard cover (CORE.TERRAIN.COVER features); wasted: some but less. Used with
    >= COVER_MIN_SAMPLES in cover and no more wasted than in cover.
    """
    enemy_shooters = [u.uid for u in log.side_units(1 - side) if u.shooter]
    covered = wasted = exposed = 0
    first = None
    for p in log.player_turns(side):
        snap = p.moved
        if snap is None:
            continue
        for uid in sorted({m["unit"] for _, pt, m in log.moves if pt == p.index}):
            if log.units[uid].shooter or uid not in snap.poses:
                continue
            if not any(_in_missile_range(log, snap, s, uid) for s in enemy_shooters):
                continue
            exposed += 1
            share = _cover_share(log, uid, snap.poses[uid])
            if share >= COVER_HALF:
                covered += 1
                first = p.turn if first is None else first
            elif share > 0:
                wasted += 1
    text = f"{covered} of {exposed} exposed end-of-move positions in cover, {wasted} half-covered (wasted)"
    return _yes(first, text) if covered >= COVER_MIN_SAMPLES and wasted <= covered else _no(text)


def _path_length(log: BattleLog, uid: int) -> tuple[float, float]:
    """(sum of straight legs between successive positions, straight distance start -> end) of a unit."""
    pts = []
    for e in log.events:
        if e["rule"] in POSITION_RULES and e.get("unit") == uid and "x" in e:
            pts.append((float(e["x"]), float(e["y"])))
    if len(pts) < 2:
        return 0.0, 0.0
    path = sum(math.dist(a, b) for a, b in zip(pts, pts[1:]))
    return path, math.dist(pts[0], pts[-1])


@detector("mobility_denial_terrain")
def mobility_denial_terrain(log: BattleLog, side: int) -> Detection:
    """mobility_denial_terrain (src L239-L245): a chokepoint held and enemy cavalry forced round.

    A chokepoint (midpoint of a gap < CHOKE_GAP between difficult/impassable features) lies in
    control(own) at >= CHOKE_CONTROL_SHARE of the game-turn ends, and an enemy cavalry unit's
    path is >= PATH_INFLATION x its straight displacement (path >= its M).
    """
    chokes = log.chokepoints()
    if not chokes:
        return _no("no chokepoint on the table")
    ends = [(t, s) for t in sorted({p.turn for p in log.turns}) if (s := log.turn_end(t)) is not None]
    best = None
    for x, y in chokes:
        held = [t for t, s in ends if log.in_control(s, side, x, y)]
        if ends and len(held) / len(ends) >= CHOKE_CONTROL_SHARE:
            best = (x, y, held)
            break
    if best is None:
        return _no(f"no chokepoint held for {_pct(CHOKE_CONTROL_SHARE)} of the turns")
    for u in log.side_units(1 - side):
        if u.troop_type != "cavalry":
            continue
        path, straight = _path_length(log, u.uid)
        if path >= u.M and path >= PATH_INFLATION * straight:
            return _yes(best[2][0], f"chokepoint ({best[0]:.0f}, {best[1]:.0f}) held at turns "
                                    f"{', '.join(map(str, best[2]))}; {_label(log, u.uid)} went {path:.0f}\" "
                                    f"for {straight:.0f}\" of progress")
    return _no(f"chokepoint ({best[0]:.0f}, {best[1]:.0f}) held but no enemy cavalry path inflated")


@detector("gap_check")
def gap_check(log: BattleLog, side: int) -> Detection:
    """gap_check (src L241): no mobile unit deployed behind difficult or impassable terrain.

    Lane: the unit's frontage, GAP_LANE inches forward of its front edge. Mobile: not a
    character, shooter or Scouts unit. Used when some lane of the deployment zone would be
    blocked (a difficult/impassable feature lies in front of the zone) and no mobile unit's
    lane meets one.
    """
    feats = log.terrain_polys(space.IMPASSABLE | space.DIFFICULT)
    zone_front = shapely.box(0, log.zone_depth, log.table_w, log.zone_depth + GAP_LANE)
    if side == 1:
        zone_front = shapely.box(0, log.table_h - log.zone_depth - GAP_LANE, log.table_w, log.table_h - log.zone_depth)
    if not any(poly.intersects(zone_front) for _, poly in feats):
        return _no("no difficult or impassable terrain in front of the deployment zone")
    mobile = [(u, p) for u, p in _deployed_units(log, side) if not (u.character or u.shooter or u.scout)]
    if not mobile:
        return _no("no mobile units deployed")
    blocked = [u for u, p in mobile if any(_lane(log, u.uid, p, GAP_LANE).intersects(poly) for _, poly in feats)]
    if blocked:
        return _no(f"{len(blocked)} unit(s) deployed behind terrain: {', '.join(u.label for u in blocked[:3])}")
    return _yes(0, f"all {len(mobile)} mobile units deployed with clear lanes")


@detector("threat_360_check")
def threat_360_check(log: BattleLog, side: int) -> Detection:
    """threat_360_check (src L247): the enemy charged, and none of its charges landed in a flank or rear.

    Read without flyers: every landed enemy charge on the side's units hit the front.
    """
    enemy = [c for c in log.charges if log.units[c.unit].side != side and log.units[c.target].side == side]
    if not enemy:
        return _no("the enemy declared no charge")
    bad = [c for c in enemy if c.landed in FLANK_ARCS]
    if bad:
        c = bad[0]
        return _no(f"{len(bad)} enemy charge(s) landed in a flank or rear; first: {_label(log, c.unit)} into the "
                   f"{c.landed} of {_label(log, c.target)} at turn {c.turn}")
    return _yes(enemy[-1].turn, f"all {len(enemy)} enemy charge(s) met the front")


# ============================================================================ §3.2 Useful checks
def _blocked_line(log: BattleLog, snap: Snapshot, s: int, t: int) -> list[int]:
    """Units whose footprints cross the segment from shooter ``s``'s front middle to target ``t``'s centre."""
    ps, pt = snap.poses[s], snap.poses[t]
    _, d = log.dims(s, ps)
    mx, my = geo.to_world(geo.Pose(ps.x, ps.y, ps.facing), 0.0, d / 2)
    line = shapely.LineString([(mx, my), (pt.x, pt.y)])
    return [o for o, po in sorted(snap.poses.items()) if o not in (s, t) and line.intersects(log.footprint(o, po))]


@detector("unmask_shooters")
def unmask_shooters(log: BattleLog, side: int) -> Detection:
    """unmask_shooters (src L254-L256): a friend moves out of a shooter's line, which then fires along it.

    A friendly volley at T in a friendly turn whose line (shooter front middle -> T's centre)
    was crossed at the start of the turn only by friendly units that moved this turn, and is
    clear at the end of movement. (An approximation of CORE.GEO.LOS.)
    """
    for i, pt, v in log.volleys:
        s, t = v["unit"], v.get("target")
        p = log.turns[pt] if pt >= 0 else None
        if p is None or log.units[s].side != side or p.player != side or log.events[i]["phase"] != "shooting":
            continue
        if s not in p.start.poses or t not in p.start.poses or p.moved is None or t not in p.moved.poses:
            continue
        before = _blocked_line(log, p.start, s, t)
        if not before or any(log.units[o].side != side or not log.moved_in(pt, o) for o in before):
            continue
        if not _blocked_line(log, p.moved, s, t):
            return _yes(p.turn, f"{', '.join(_label(log, o) for o in before)} moved aside and "
                                f"{_label(log, s)} shot {_label(log, t)} at turn {p.turn}")
    return _no("no shooter unmasked by a friend's move")


@detector("position_for_flank_next_turn")
def position_for_flank_next_turn(log: BattleLog, side: int) -> Detection:
    """position_for_flank_next_turn (src L258-L260): a move into the target's flank arc, then a flank charge.

    A friendly flank/rear charge by C on T whose charger, in one of the FLANK_PREP_WINDOW
    previous friendly turns, made a CORE.MOVE.* move that took its centre from outside T's
    flank/rear arcs into one of them.
    """
    for c in _landed(log, side):
        if c.landed not in FLANK_ARCS:
            continue
        earlier = [p for p in log.player_turns(side) if p.index < c.pt][-FLANK_PREP_WINDOW:]
        for p in earlier:
            if not log.moved_in(p.index, c.unit) or p.moved is None:
                continue
            a, b = p.start.poses, p.moved.poses
            if c.unit not in a or c.unit not in b or c.target not in a or c.target not in b:
                continue
            was = log.arc(c.target, a[c.target], a[c.unit].x, a[c.unit].y)
            now = log.arc(c.target, b[c.target], b[c.unit].x, b[c.unit].y)
            if was not in FLANK_ARCS and now in FLANK_ARCS:
                return _yes(p.turn, f"{_label(log, c.unit)} moved into the {now} arc of {_label(log, c.target)} "
                                    f"at turn {p.turn} and charged its {c.landed} at turn {c.turn}")
    return _no("no flank charge prepared by an earlier move")


@detector("advance_to_expand_control")
def advance_to_expand_control(log: BattleLog, side: int) -> Detection:
    """advance_to_expand_control (src L262-L264): non-static units advance and the control share grows.

    Mean forward displacement (own frame) of non-static units (not characters, shooters or
    Scouts) from deployment to the end of game turn 2 >= ADVANCE_MIN inches, and the control
    share at the end of turn 2 exceeds the one after deployment.
    """
    end = log.turn_end(2) or log.turn_end(1)
    if end is None:
        return _no("the battle ended before turn 1 was over")
    ds = []
    for u, p0 in _deployed_units(log, side):
        if u.character or u.shooter or u.scout or u.uid not in end.poses:
            continue
        ds.append(log.own_y(side, end.poses[u.uid].y) - log.own_y(side, p0.y))
    if not ds:
        return _no("no non-static unit")
    adv = sum(ds) / len(ds)
    c0, c2 = log.control_share(log.deployed, side), log.control_share(end, side)
    text = f"mean advance {adv:.1f}\"; control share {c0:.2f} -> {c2:.2f}"
    return _yes(1, text) if adv >= ADVANCE_MIN and c2 > c0 else _no(text)


@detector("charge_consequence_analysis")
def charge_consequence_analysis(log: BattleLog, side: int) -> Detection:
    """charge_consequence_analysis (src L266-L280): few friendly chargers are counter-charged next enemy turn.

    Of the friendly charges that landed, at most COUNTER_CHARGE_MAX_SHARE saw an enemy unit
    other than the original target declare a charge on the charger in the next enemy turn.
    """
    landed = _landed(log, side)
    if not landed:
        return _no("no friendly charge landed")
    hit = []
    for c in landed:
        nxt = log.next_turn_of(c.pt, 1 - side)
        if nxt and any(k.pt == nxt.index and k.target == c.unit and k.unit != c.target for k in log.charges):
            hit.append(c)
    share = len(hit) / len(landed)
    text = f"{len(hit)} of {len(landed)} charger(s) counter-charged by another enemy next turn ({_pct(share)})"
    return _yes(landed[0].turn, text) if share <= COUNTER_CHARGE_MAX_SHARE else _no(text)


def _same_facing(a: float, b: float) -> bool:
    return abs((a - b + 180.0) % 360.0 - 180.0) <= SAME_FACING


@detector("hold_and_cover_flanks")
def hold_and_cover_flanks(log: BattleLog, side: int) -> Detection:
    """hold_and_cover_flanks (variant I, src L272): two friends beside the charger's flanks within 1 turn.

    After a friendly charge by C lands, at the end of movement of that friendly turn or the
    next, one friendly unit on each side of C stands within COVER_FLANK_GAP inches of its
    footprint, beside its flank (its centre outside C's width), facing within SAME_FACING.
    """
    for c in _landed(log, side):
        turns = [p for p in log.player_turns(side) if p.index >= c.pt][:2]
        for p in turns:
            snap = p.moved if p.index > c.pt else p.end
            if snap is None or c.unit not in snap.poses:
                continue
            pc = snap.poses[c.unit]
            w, _ = log.dims(c.unit, pc)
            sides: dict[str, int] = {}
            for o, po in sorted(snap.poses.items()):
                if o == c.unit or log.units[o].side != side or not _same_facing(po.facing, pc.facing):
                    continue
                if log.distance(o, po, c.unit, pc) > COVER_FLANK_GAP:
                    continue
                lx, _ = geo.to_local(geo.Pose(pc.x, pc.y, pc.facing), po.x, po.y)
                if abs(lx) > w / 2:
                    sides.setdefault("left" if lx < 0 else "right", o)
            if len(sides) == 2:
                return _yes(p.turn, f"{_label(log, sides['left'])} and {_label(log, sides['right'])} covered the "
                                    f"flanks of {_label(log, c.unit)} at turn {p.turn}")
    return _no("no charger with both flanks covered")


@detector("counter_charge_pursuer")
def counter_charge_pursuer(log: BattleLog, side: int) -> Detection:
    """counter_charge_pursuer (variant II, src L273): the enemy that pursued a broken friend is flank-charged next turn.

    A friendly unit loses its break test (CORE.CC.BREAK_TEST); an enemy unit of that combat
    pursues (CORE.CC.PURSUE_CHOICE pursue); in the next friendly turn a friendly charge lands in
    that pursuer's flank or rear (two such charges are reported as a double flank charge).
    """
    for f in log.flights:
        if f.cause != "break" or log.units[f.unit].side != side:
            continue
        nxt = log.next_turn_of(f.pt, side) if f.pt >= 0 else None
        if nxt is None:
            continue
        for e in f.pursuers:
            hits = [c for c in _landed(log, side) if c.pt == nxt.index and c.target == e and c.landed in FLANK_ARCS]
            if hits:
                who = " and ".join(_label(log, c.unit) for c in hits)
                return _yes(nxt.turn, f"{_label(log, f.unit)} broke at turn {f.turn}; pursuer {_label(log, e)} "
                                      f"charged in the flank by {who} at turn {nxt.turn}")
    return _no("no pursuer of a broken friend charged in the flank")


@detector("defensive_reposition")
def defensive_reposition(log: BattleLog, side: int) -> Detection:
    """defensive_reposition (variant III, src L274): supporters out of all enemy reach but threatening a common enemy.

    In a friendly turn in which a friendly charge landed, at the end of movement at least two
    other friendly units (not engaged or fleeing) are threatened by no enemy unit and both
    threaten one same enemy unit.
    """
    for c in _landed(log, side):
        p = log.turns[c.pt]
        snap = p.moved
        if snap is None:
            continue
        safe = [u for u in sorted(snap.poses) if log.units[u].side == side and u != c.unit and log.can_charge(snap, u)
                and not log.threats_on(snap, u, 1 - side)]
        for e in sorted(snap.poses):
            if log.units[e].side == side:
                continue
            joint = [u for u in safe if log.threatens(snap, u, e)]
            if len(joint) >= 2:
                return _yes(p.turn, f"after {_label(log, c.unit)} charged at turn {p.turn}, "
                                    f"{_label(log, joint[0])} and {_label(log, joint[1])} stood out of enemy reach, "
                                    f"both threatening {_label(log, e)}")
    return _no("no safe joint threat set up after a charge")


@detector("withdraw_and_hold_line")
def withdraw_and_hold_line(log: BattleLog, side: int) -> Detection:
    """withdraw_and_hold_line (variant IV, src L276): decline a charge, step back, dress the line out of reach.

    A friendly unit U that threatened an enemy at the start of a friendly turn declares no
    charge, moves backward (own-frame depth falls), and at the end of movement U and at least
    LINE_MIN_UNITS - 1 other friendly units facing the same way have front edges within
    LINE_TOLERANCE inches of U's, none of them threatened by an enemy unit.
    """
    for p in log.player_turns(side):
        if p.moved is None:
            continue
        chargers = {c.unit for c in log.charges if c.pt == p.index}
        for uid in sorted(p.start.poses):
            if log.units[uid].side != side or uid in chargers or uid not in p.moved.poses:
                continue
            if not any(log.threatens(p.start, uid, e) for e in p.start.poses if log.units[e].side != side):
                continue
            if log.own_y(side, p.moved.poses[uid].y) >= log.own_y(side, p.start.poses[uid].y) - 0.25:
                continue
            pu = p.moved.poses[uid]
            fy = log.front_edge_y(uid, pu)
            line = [o for o, po in sorted(p.moved.poses.items()) if log.units[o].side == side
                    and log.can_charge(p.moved, o) and _same_facing(po.facing, pu.facing)
                    and abs(log.front_edge_y(o, po) - fy) <= LINE_TOLERANCE]
            if uid in line and len(line) >= LINE_MIN_UNITS and not any(
                    log.threats_on(p.moved, o, 1 - side) for o in line):
                return _yes(p.turn, f"{_label(log, uid)} declined a charge and withdrew at turn {p.turn}; "
                                    f"line of {len(line)} units out of enemy reach")
    return _no("no withdrawal into a dressed line")


@detector("sacrificial_flank_lure")
def sacrificial_flank_lure(log: BattleLog, side: int) -> Detection:
    """sacrificial_flank_lure (variant V, src L278): a line infantry unit is charged, then a combined charge on its charger.

    An enemy unit E declares a charge on a friendly INF unit; within BAIT_WINDOW game turns at
    least LURE_MIN_CHARGERS distinct friendly units declare charges on E in the same player
    turn (a combined charge, CORE.CHARGE.SAME_TARGET).
    """
    for c in log.charges:
        if log.units[c.target].side != side or not log.units[c.target].infantry:
            continue
        by_turn: dict[int, list[Charge]] = {}
        for k in _declared(log, side):
            if k.target == c.unit and k.unit != c.target and k.event > c.event and k.turn <= c.turn + BAIT_WINDOW:
                by_turn.setdefault(k.pt, []).append(k)
        for ks in by_turn.values():
            chargers = sorted({k.unit for k in ks})
            if len(chargers) >= LURE_MIN_CHARGERS:
                return _yes(ks[0].turn, f"{_label(log, c.unit)} charged {_label(log, c.target)} at turn {c.turn}; "
                                        f"then {', '.join(_label(log, u) for u in chargers)} charged it together "
                                        f"at turn {ks[0].turn}")
    return _no("no line unit avenged by a combined charge")


@detector("restrained_pursuit")
def restrained_pursuit(log: BattleLog, side: int) -> Detection:
    """restrained_pursuit (variant VI, src L280): a unit holds instead of pursuing, and no pursuit over-extends.

    Used when a friendly unit chose not to pursue (CORE.CC.PURSUE_CHOICE hold, after its Ld
    test) and no friendly pursuit move ended inside >= OVEREXTEND_THREATS enemy threat zones
    more than OVEREXTEND_GAP inches from the nearest friend.
    """
    holds = [(i, u) for i, u, ch, _ in log.pursuits if ch == "hold" and log.units[u].side == side]
    bad = []
    for i, uid, pose in log.pursuit_moves:
        if log.units[uid].side != side:
            continue
        pt = log.pt_of[i]
        snap = log.turns[pt].end if pt >= 0 else None
        if snap is None:
            continue
        poses = dict(snap.poses)
        poses[uid] = pose
        s = Snapshot(poses, snap.engaged)
        friends = [o for o in poses if o != uid and log.units[o].side == side]
        gap = min((log.distance(uid, pose, o, poses[o]) for o in friends), default=math.inf)
        if len(log.threats_on(s, uid, 1 - side)) >= OVEREXTEND_THREATS and gap > OVEREXTEND_GAP:
            bad.append((i, uid))
    text = f"{len(holds)} pursuit(s) held back, {len(bad)} over-extended pursuit(s)"
    if holds and not bad:
        return _yes(log.event_turn(holds[0][0]), text)
    return _no(text)
