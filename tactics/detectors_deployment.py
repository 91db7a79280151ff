"""Detectors of the deployment tactics of tactics.md §4.

Deployment advice (§4.2), deployment types (§4.3: pincers, flank teeth, refused, weakened
and abandoned flanks) and shooting lines and set-ups (§4.4, with sheltered_war_machine of
§3.1). Each detector registers itself in :data:`tactics.detectors_common.DETECTORS` under
its catalogue id; :func:`tactics.detectors.detect` runs them.
"""

from __future__ import annotations

import math
from statistics import median

import numpy as np
import shapely
from shapely.ops import nearest_points

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.tactics.battle_log import BattleLog, Pose, Snapshot, UnitInfo
from battleline.tactics.detectors_common import (
    ABANDON_FAST_SHARE,
    ABANDON_MAIN_SHARE,
    ABANDON_SHARE,
    ABANDON_SHIFT,
    APPROACH_COVER_SHARE,
    ATTENTION_RATIO_MIN,
    BAIT_WINDOW,
    BUBBLE_MIN_STEP,
    BUBBLE_MOVE_SHARE,
    DETECTORS,
    DIVERT_TURNS,
    DIVERTED_SHARE,
    EARLY_TURNS,
    FLANK_ARCS,
    GUARD_POINTS_MAX,
    GUARD_RANGE,
    GUARD_SHARE,
    GUARD_WM_RANGE,
    GUARD_WM_SHARE,
    IRRITANT_ISOLATION,
    IRRITANT_MIN_ATTACKS,
    PINCERS_CENTRE_INF,
    PINCERS_CENTRE_TURNS,
    PINCERS_EACH_WING,
    PINCERS_MIN_WINGS,
    PINCERS_WING_FAST,
    REFUSED_HOLD_MARGIN,
    REFUSED_HOLD_TURNS,
    REFUSED_STRONG_SHARE,
    REFUSED_THIRD_MAX,
    RING_COVERAGE,
    RING_SNAPSHOT_SHARE,
    SCOUT_EDGE_GAP,
    SHELTER_GAP,
    SHELTER_SIDES,
    SHELTER_TARGET_SHARE,
    SHOOTER_ACTIVE_SHARE,
    SHOOTING_LINES_MIN_RULES,
    SHOOTING_LINES_RULES,
    STAGGER_MIN_STD,
    STRONGEST_LAST_RHO,
    TEETH_BEHIND_SHARE,
    TEETH_BY_TURN,
    TEETH_CENTRE_MAX,
    TEETH_EACH_WING,
    TEETH_WINGS,
    THIRD,
    WEAK_MAX_SHARE,
    WEAK_MAX_UNITS,
    WING_SHARE,
    Detection,
    _declared,
    _deployed_units,
    _flank_charges_on,
    _flank_hit,
    _half,
    _in_missile_range,
    _label,
    _landed,
    _lane,
    _no,
    _pct,
    _placed_units,
    _scout_retreats,
    _share,
    _spearman,
    _third,
    _yes,
    detector,
)


# ============================================================================ §4.2 Deployment advice
@detector("shooters_deploy_after_targets")
def shooters_deploy_after_targets(log: BattleLog, side: int) -> Detection:
    """shooters_deploy_after_targets (src L319): shooters deploy late and then shoot.

    The shooters' mean index in the side's deployment order (CORE.SETUP.DEPLOY; Scouts
    excluded) exceeds the army's mean, and >= SHOOTER_ACTIVE_SHARE of the shooter-turns (a
    shooter on the table, not fleeing or engaged, in a friendly turn) had a volley.
    """
    order = [u for u in log.deploy_order[side] if not log.units[u].scout]
    shooters = [i for i, u in enumerate(order) if log.units[u].shooter]
    if not shooters:
        return _no("no shooters deployed")
    mean_all = (len(order) - 1) / 2
    mean_s = sum(shooters) / len(shooters)
    turns = active = 0
    for p in log.player_turns(side):
        snap = p.moved
        if snap is None:
            continue
        for uid in (order[i] for i in shooters):
            if uid in snap.poses and not snap.poses[uid].fleeing and uid not in snap.engaged:
                turns += 1
                active += any(pt == p.index and v["unit"] == uid and log.events[i]["phase"] == "shooting"
                              for i, pt, v in log.volleys)
    share = _share(active, turns)
    text = f"shooters' mean deployment index {mean_s:.1f} vs army {mean_all:.1f}; volleys in {_pct(share)} of shooter-turns"
    return _yes(0, text) if mean_s > mean_all and share >= SHOOTER_ACTIVE_SHARE else _no(text)


@detector("strongest_last")
def strongest_last(log: BattleLog, side: int) -> Detection:
    """strongest_last (src L321): Spearman correlation of points with deployment order >= STRONGEST_LAST_RHO."""
    order = [u for u in log.deploy_order[side] if not log.units[u].scout]
    if len(order) < 3:
        return _no("fewer than 3 units deployed in turn")
    rho = _spearman([float(log.units[u].points) for u in order], [float(i) for i in range(len(order))])
    text = f"Spearman rho(points, deployment order) = {rho:+.2f} over {len(order)} units"
    return _yes(0, text) if rho >= STRONGEST_LAST_RHO else _no(text)


@detector("fast_threat_preparation")
def fast_threat_preparation(log: BattleLog, side: int) -> Detection:
    """fast_threat_preparation (src L322): the fragile pieces guarded and never charged by fast enemies early.

    Pieces: the side's wizards (CORE.MAGIC.WIZARDS), or its characters when it has no wizard.
    The enemy has fast units; no piece is charged by an enemy fast unit in turns
    1..EARLY_TURNS; and at >= GUARD_SHARE of the piece turn-ends of those turns a friendly
    non-character unit stands within GUARD_RANGE inches.
    """
    if not any(u.fast for u in log.side_units(1 - side)):
        return _no("the enemy has no fast units")
    kind = "wizard" if any(u.wizard for u in log.side_units(side)) else "character"
    pieces = [u.uid for u in log.side_units(side) if (u.wizard if kind == "wizard" else u.character)]
    if not pieces:
        return _no("no characters to guard")
    hit = [c for c in log.charges if c.target in pieces and log.units[c.unit].fast and c.turn <= EARLY_TURNS]
    if hit:
        c = hit[0]
        return _no(f"{_label(log, c.target)} charged by fast {_label(log, c.unit)} at turn {c.turn}")
    n = guarded = 0
    for p in log.turns:
        if p.turn > EARLY_TURNS or p.end is None:
            continue
        for ch in pieces:
            if ch not in p.end.poses:
                continue
            n += 1
            guarded += any(log.units[o].side == side and not log.units[o].character
                           and log.distance(ch, p.end.poses[ch], o, po) <= GUARD_RANGE
                           for o, po in p.end.poses.items())
    share = _share(guarded, n)
    text = f"no {kind} charged by fast enemies in turns 1-{EARLY_TURNS}; guarded at {_pct(share)} of turn-ends"
    return _yes(EARLY_TURNS, text) if n and share >= GUARD_SHARE else _no(text)


@detector("heavy_cavalry_flank_shock")
def heavy_cavalry_flank_shock(log: BattleLog, side: int) -> Detection:
    """heavy_cavalry_flank_shock (src L323): a heavy-cavalry charge lands in a flank or rear.

    Evidence counts the enemy Panic tests (CORE.PSY.PANIC.TEST) in the same game turn.
    """
    for c in _landed(log, side):
        if c.landed in FLANK_ARCS and log.units[c.unit].heavy_cavalry:
            panics = sum(1 for i, u in log.panic_tests if log.units[u].side != side and log.event_turn(i) == c.turn)
            return _yes(c.turn, f"{_label(log, c.unit)} charged the {c.landed} of {_label(log, c.target)} at turn "
                                f"{c.turn}; {panics} enemy Panic test(s) that turn")
    return _no("no heavy cavalry flank or rear charge")


@detector("maneuver_spacing")
def maneuver_spacing(log: BattleLog, side: int) -> Detection:
    """maneuver_spacing (src L324): no fast unit boxed in by a friend at deployment.

    A fast unit is boxed in when the lane in front of it (its frontage wide, M deep) meets a
    friendly unit's footprint.
    """
    deployed = _deployed_units(log, side)
    fast = [(u, p) for u, p in deployed if u.fast]
    if not fast:
        return _no("no fast units")
    boxed = [u for u, p in fast if any(
        o.uid != u.uid and _lane(log, u.uid, p, u.M).intersects(log.footprint(o.uid, po)) for o, po in deployed)]
    if boxed:
        return _no(f"{len(boxed)} fast unit(s) boxed in: {', '.join(u.label for u in boxed)}")
    return _yes(0, f"all {len(fast)} fast unit(s) have clear lanes")


# ============================================================================ §4.3 Deployment types
def _wing(log: BattleLog, x: float) -> str | None:
    if x < WING_SHARE * log.table_w:
        return "left"
    if x > (1 - WING_SHARE) * log.table_w:
        return "right"
    return None


@detector("pincers")
def pincers(log: BattleLog, side: int) -> Detection:
    """pincers (src L330-L334): fast units on both wings, an infantry centre that holds, a wing closing in.

    Deployment: fast units on the wings (table x < WING_SHARE·W or > (1 − WING_SHARE)·W, i.e.
    18" and 54") hold >= PINCERS_WING_FAST of the fast points, each wing >= PINCERS_EACH_WING;
    >= PINCERS_CENTRE_INF of the infantry points stand in the centre third. Behaviour: the
    centre holds — no centre infantry unit marches (CORE.MOVE.MARCH) in turns
    1..PINCERS_CENTRE_TURNS, so it advances at most M a turn — while at least PINCERS_MIN_WINGS
    wing(s) close in: one of its fast units lands a flank/rear charge, or ends a game turn past
    the centre line still on its wing (going round, not converging on the centre). One wing
    is enough (tactics.md G-16: "fast units on both flanks ... or on one").
    """
    deployed = _deployed_units(log, side)
    fast = [(u, p) for u, p in deployed if u.fast]
    fast_pts = sum(u.points for u, _ in fast)
    if not fast_pts:
        return _no("no fast units")
    wings: dict[str, list[int]] = {"left": [], "right": []}
    for u, p in fast:
        w = _wing(log, p.x)
        if w:
            wings[w].append(u.uid)
    share = {w: sum(log.units[u].points for u in us) / fast_pts for w, us in wings.items()}
    inf = [(u, p) for u, p in deployed if u.infantry]
    centre = [u.uid for u, p in inf if _third(log, side, p.x) == "centre"]
    inf_centre = _share(sum(log.units[u].points for u in centre), sum(u.points for u, _ in inf))
    text = (f"fast points on the wings {_pct(share['left'])} / {_pct(share['right'])}, "
            f"infantry in the centre {_pct(inf_centre)}")
    if (share["left"] + share["right"] < PINCERS_WING_FAST or min(share.values()) < PINCERS_EACH_WING
            or inf_centre < PINCERS_CENTRE_INF):
        return _no(f"deployment: {text}")
    marched = [e for _, _, e in log.moves if e["unit"] in centre and e["rule"] == "CORE.MOVE.MARCH"
               and int(e["turn"]) <= PINCERS_CENTRE_TURNS]
    if marched:
        e = marched[0]
        return _no(f"{text}; the centre did not hold ({_label(log, e['unit'])} marched at turn {e['turn']})")
    half = log.table_h / 2
    closed: dict[str, int] = {}
    for w, us in wings.items():
        turns = [c.turn for c in _landed(log, side) if c.unit in us and c.landed in FLANK_ARCS]
        for t in sorted({p.turn for p in log.turns}):
            snap = log.turn_end(t)
            if snap and any(u in snap.poses and log.own_y(side, snap.poses[u].y) > half
                            and _wing(log, snap.poses[u].x) == w for u in us):
                turns.append(t)
                break
        if turns:
            closed[w] = min(turns)
    if len(closed) < PINCERS_MIN_WINGS:
        return _no(f"{text}; the centre held but no wing closed in")
    how = ", ".join(f"{w} wing at turn {t}" for w, t in sorted(closed.items()))
    return _yes(max(PINCERS_CENTRE_TURNS, min(closed.values())), f"{text}; the centre held; closed in: {how}")


def _lateral(log: BattleLog, side: int, units: list[tuple[UnitInfo, Pose]], cuts: tuple[float, ...]
             ) -> list[float]:
    """Share of the points in each lateral part of the own frame, cut at the given fractions of W.

    A unit's points are split by the share of its footprint's lateral extent in each part, so
    a unit straddling a border counts on both sides.
    """
    edges = [0.0, *(c * log.table_w for c in cuts), log.table_w]
    total = sum(u.points for u, _ in units) or 1
    out = [0.0] * (len(edges) - 1)
    for u, p in units:
        lo, hi = (log.own_x(side, v) for v in log.footprint(u.uid, p).bounds[0::2])
        lo, hi = min(lo, hi), max(lo, hi)
        span = max(hi - lo, 1e-9)
        for k in range(len(out)):
            out[k] += u.points / total * max(0.0, min(hi, edges[k + 1]) - max(lo, edges[k])) / span
    return out


def _halves(log: BattleLog, side: int, units: list[tuple[UnitInfo, Pose]]) -> dict[str, float]:
    left, right = _lateral(log, side, units, (0.5,))
    return {"left": left, "right": right}


def _thirds(log: BattleLog, side: int, units: list[tuple[UnitInfo, Pose]]) -> dict[str, float]:
    left, centre, right = _lateral(log, side, units, (THIRD, 1 - THIRD))
    return {"left": left, "centre": centre, "right": right}


@detector("flank_teeth")
def flank_teeth(log: BattleLog, side: int) -> Detection:
    """flank_teeth (src L336-L338): strength on both wings, a cheap centre, and the wings get behind the enemy.

    Deployment (thirds of the own frame): centre <= TEETH_CENTRE_MAX of the points, every centre
    unit cheaper than the army's median unit; each wing >= TEETH_EACH_WING, wings >= TEETH_WINGS.
    Behaviour: by the end of turn TEETH_BY_TURN >= TEETH_BEHIND_SHARE of the wing units stand
    beyond the enemy's frontmost unit and in some enemy unit's rear arc, or an enemy unit is
    destroyed leaving the table.
    """
    deployed = _deployed_units(log, side)
    share = _thirds(log, side, deployed)
    med = median([u.points for u, _ in deployed]) if deployed else 0
    cheap = all(u.points < med for u, p in deployed if _third(log, side, p.x) == "centre")
    text = f"points left/centre/right {_pct(share['left'])}/{_pct(share['centre'])}/{_pct(share['right'])}"
    if (share["centre"] > TEETH_CENTRE_MAX or not cheap or min(share["left"], share["right"]) < TEETH_EACH_WING
            or share["left"] + share["right"] < TEETH_WINGS):
        return _no(f"deployment: {text}")
    off = [(i, u) for i, u, rule, off_table in log.destroyed if off_table and log.units[u].side != side]
    if off:
        return _yes(log.event_turn(off[0][0]), f"{text}; {_label(log, off[0][1])} fled off the table")
    wing_units = [u.uid for u, p in deployed if _third(log, side, p.x) != "centre" and not u.character]
    for t in range(1, TEETH_BY_TURN + 1):
        snap = log.turn_end(t)
        if snap is None:
            break
        enemies = [(e, pe) for e, pe in snap.poses.items() if log.units[e].side != side]
        if not enemies:
            break
        front = min(log.own_y(side, pe.y) for _, pe in enemies)
        behind = [u for u in wing_units if u in snap.poses and log.own_y(side, snap.poses[u].y) > front
                  and any(log.arc(e, pe, snap.poses[u].x, snap.poses[u].y) == "rear" for e, pe in enemies)]
        if wing_units and len(behind) / len(wing_units) >= TEETH_BEHIND_SHARE:
            return _yes(t, f"{text}; {len(behind)} of {len(wing_units)} wing units behind the enemy at turn {t}")
    return _no(f"{text}; the wings did not get behind the enemy")


@detector("refused_flank")
def refused_flank(log: BattleLog, side: int) -> Detection:
    """refused_flank (src L340-L344): the army massed in one half, the other wing held back while the strong wing attacks.

    Deployment: >= REFUSED_STRONG_SHARE of the points in one half (own frame), <= REFUSED_THIRD_MAX
    in the far third. Behaviour: the units deployed in the far third stay within the zone depth
    + REFUSED_HOLD_MARGIN of the own edge at the end of game turns 1..REFUSED_HOLD_TURNS, and a
    unit deployed in the strong half declares a charge, or half of those units cross the
    centre line.
    """
    deployed = _deployed_units(log, side)
    halves = _halves(log, side, deployed)
    strong = max(("left", "right"), key=lambda h: (halves[h], h == "left"))
    weak = "right" if strong == "left" else "left"
    thirds = _thirds(log, side, deployed)
    text = f"{_pct(halves[strong])} of the points in the {strong} half, {_pct(thirds[weak])} in the {weak} third"
    if halves[strong] < REFUSED_STRONG_SHARE or thirds[weak] > REFUSED_THIRD_MAX:
        return _no(f"deployment: {text}")
    refused = [u.uid for u, p in deployed if _third(log, side, p.x) == weak]
    limit = log.zone_depth + REFUSED_HOLD_MARGIN
    for t in range(1, REFUSED_HOLD_TURNS + 1):
        snap = log.turn_end(t)
        if snap is None:
            return _no(f"{text}; the battle ended before turn {t}")
        ahead = [u for u in refused if u in snap.poses and log.own_y(side, snap.poses[u].y) > limit]
        if ahead:
            return _no(f"{text}; {_label(log, ahead[0])} left the refused wing at turn {t}")
    strong_units = [u.uid for u, p in deployed if _half(log, side, p.x) == strong and not u.character]
    attack = [c.turn for c in _declared(log, side) if c.unit in strong_units]
    for t in sorted({p.turn for p in log.turns}):
        snap = log.turn_end(t)
        if snap and strong_units and sum(1 for u in strong_units if u in snap.poses
                                         and log.own_y(side, snap.poses[u].y) > log.table_h / 2) * 2 >= len(strong_units):
            attack.append(t)
            break
    if not attack:
        return _no(f"{text}; the strong wing did not attack")
    return _yes(max(REFUSED_HOLD_TURNS, min(attack)), f"{text}; {len(refused)} refused unit(s) held back, "
                                                      f"the strong wing attacked at turn {min(attack)}")


@detector("weakened_flank")
def weakened_flank(log: BattleLog, side: int) -> Detection:
    """weakened_flank (src L346-L350): scouts alone on one wing draw the enemy onto the main army's flank charge.

    Deployment: an outer third holds 1..WEAK_MAX_UNITS units, <= WEAK_MAX_SHARE of the points and
    >= 1 lure unit standing >= SCOUT_EDGE_GAP from the side edge (Scouts: and from the rear edge,
    where they deploy ahead of the zone); the opposite half holds >= REFUSED_STRONG_SHARE. The lure
    units are Scouts; an army without Scouts uses its fast units (CAV/FC), which the source values
    the scouts for (fast, manoeuvrable, cheap). Behaviour, a conversion: a lure flees or moves
    backward, an enemy unit charged or pursued it, and within BAIT_WINDOW turns another friendly unit
    charges that enemy in the flank or rear (:func:`_flank_charges_on`: the charge lands there, or the
    enemy flees from it).
    """
    deployed = _deployed_units(log, side)
    thirds = _thirds(log, side, deployed)
    halves = _halves(log, side, deployed)
    has_scouts = any(u.scout for u in log.side_units(side))
    for weak, strong in (("left", "right"), ("right", "left")):
        units = [(u, p) for u, p in deployed if _third(log, side, p.x) == weak]
        lures = [u.uid for u, p in units if (u.scout if has_scouts else u.fast)
                 and min(p.x, log.table_w - p.x) >= SCOUT_EDGE_GAP
                 and (not u.scout or log.own_y(side, p.y) >= SCOUT_EDGE_GAP)]
        if not (1 <= len(units) <= WEAK_MAX_UNITS and thirds[weak] <= WEAK_MAX_SHARE and lures
                and halves[strong] >= REFUSED_STRONG_SHARE):
            continue
        kind = "scouts" if has_scouts else "fast units"
        text = f"{len(units)} unit(s) ({_pct(thirds[weak])}) with {kind} on the {weak}, {_pct(halves[strong])} opposite"
        retreats = [r for r in _scout_retreats(log, side, lures)]
        for uid, ev, _pt, turn, follow in retreats:
            for e in sorted(follow):
                hits = _flank_charges_on(log, side, e, ev, turn + BAIT_WINDOW, exclude=lures)
                if hits:
                    return _yes(hits[0].turn, f"{text}; {_label(log, e)} followed {_label(log, uid)} and was "
                                              f"{_flank_hit(hits[0])} at turn {hits[0].turn}")
        followed = sum(1 for r in retreats if r[4])
        return _no(f"{text}; no conversion ({len(retreats)} fall-back(s), {followed} followed)")
    return _no(f"deployment: points left/centre/right {_pct(thirds['left'])}/{_pct(thirds['centre'])}/"
               f"{_pct(thirds['right'])}, no lone lure on a wing")


@detector("abandoned_flank")
def abandoned_flank(log: BattleLog, side: int) -> Detection:
    """abandoned_flank (src L352-L354): a fast decoy half shifts across to join the main body by turn 2.

    Deployment: one half X holds ABANDON_SHARE of the points, >= ABANDON_FAST_SHARE of them fast.
    By the end of turn 2 the points centroid of the units deployed in X (own frame, from where they
    were placed: a Vanguard move is part of the shift) moved >=
    ABANDON_SHIFT·W toward the other half Y, every surviving fast unit of X stands in Y, and Y
    holds >= ABANDON_MAIN_SHARE of the surviving points. (tactics.md measures the whole army's
    centroid; with a decoy of 20-35 % of the points that needs the decoys to cross the whole table,
    while the template deploys them by the centre line so that the shift is short.)
    """
    deployed = _deployed_units(log, side)
    halves = _halves(log, side, deployed)
    end = log.turn_end(2)
    for x_half, y_half in (("left", "right"), ("right", "left")):
        units = [(u, p) for u, p in deployed if _half(log, side, p.x) == x_half and not u.character]
        pts = sum(u.points for u, _ in units)
        fast = [u.uid for u, _ in units if u.fast]
        if not (ABANDON_SHARE[0] <= halves[x_half] <= ABANDON_SHARE[1]) or \
                sum(log.units[f].points for f in fast) < ABANDON_FAST_SHARE * pts:
            continue
        text = f"decoy {x_half} half {_pct(halves[x_half])} of the points, mostly fast"
        if end is None:
            return _no(f"{text}; the battle ended before turn 2")
        sign = 1.0 if y_half == "right" else -1.0
        decoys = [u.uid for u, _ in units]

        def centroid(poses: dict[int, Pose], decoys: list[int] = decoys) -> float:
            us = [(log.units[u], poses[u]) for u in decoys if u in poses]
            tot = sum(u.points for u, _ in us) or 1
            return sum(u.points * log.own_x(side, p.x) for u, p in us) / tot

        alive = [u for u in decoys if u in end.poses]
        start = {u: log.placed.get(u, p) for u, p in log.deployed.poses.items()}
        shift = sign * (centroid(end.poses) - centroid(start)) / log.table_w if alive else 0.0
        on_table = [(log.units[u], p) for u, p in end.poses.items() if log.units[u].side == side and not p.fleeing]
        y_share = _halves(log, side, on_table)[y_half]
        crossed = all(_half(log, side, end.poses[f].x) == y_half for f in fast if f in end.poses)
        text += f"; the decoys shifted {shift:+.2f} W, {_pct(y_share)} in the {y_half} half after turn 2"
        if shift >= ABANDON_SHIFT and crossed and y_share >= ABANDON_MAIN_SHARE:
            return _yes(2, text)
        return _no(text + ("" if crossed else "; a fast decoy stayed behind"))
    return _no("deployment: no fast decoy half")


# ============================================================================ §4.4 Shooting lines and set-ups
@detector("staggered_shooting_line")
def staggered_shooting_line(log: BattleLog, side: int) -> Detection:
    """staggered_shooting_line (src L362): shooters' front edges not in one straight line at deployment.

    The population standard deviation of the own-frame depth of the front edges of the units with
    a missile weapon, as placed (before Vanguard moves; characters and Scouts excluded: Scouts deploy
    by their own rule), is >= STAGGER_MIN_STD inches, with >= 2 such units. Fast units with bows
    count: they are part of the army's firepower wherever they stand.
    """
    rows = [log.front_edge_y(u.uid, p) for u, p in _placed_units(log, side)
            if u.missile is not None and not u.character and not u.scout]
    if len(rows) < 2:
        return _no(f"{len(rows)} shooter unit(s) deployed")
    std = float(np.std(rows))
    text = f"shooters' front edges at {', '.join(f'{y:.1f}' for y in rows)}\" (std {std:.1f}\")"
    return _yes(0, text) if std >= STAGGER_MIN_STD else _no(text)


def _approach_points(log: BattleLog, side: int) -> list[tuple[float, float]]:
    """Where the enemy can appear from: the near side of LOS-blocking or difficult features in no-man's land, and chokepoints."""
    lo, hi = log.zone_depth, log.table_h - log.zone_depth
    out = []
    for _t, poly in log.terrain_polys(space.IMPASSABLE | space.DIFFICULT | {"hill"}):
        if not poly.intersects(shapely.box(0, lo, log.table_w, hi)):
            continue
        coords = list(poly.exterior.coords)
        x, y = min(coords, key=lambda c: (log.own_y(side, c[1]), c[0]))
        out.append((x, y))
    return out + log.chokepoints()


@detector("cover_approach_zones")
def cover_approach_zones(log: BattleLog, side: int) -> Detection:
    """cover_approach_zones (src L364): the shooters' fire covers the approaches at deployment.

    Approach points: the vertex nearest the own edge of each hill, difficult or impassable
    feature reaching no-man's land, and each chokepoint. Covered: within a shooter's missile
    range of its footprint and in its front arc. Used when >= APPROACH_COVER_SHARE are covered.
    """
    points = _approach_points(log, side)
    shooters = [(u, p) for u, p in _deployed_units(log, side) if u.shooter]
    if not points:
        return _no("no approach zones on the table")
    if not shooters:
        return _no("no shooters deployed")
    covered = 0
    for x, y in points:
        pt = shapely.Point(x, y)
        covered += any(log.footprint(u.uid, p).distance(pt) <= u.missile_range and log.arc(u.uid, p, x, y) == "front"
                       for u, p in shooters)
    share = covered / len(points)
    text = f"{covered} of {len(points)} approach zones under fire ({_pct(share)})"
    return _yes(0, text) if share >= APPROACH_COVER_SHARE else _no(text)


@detector("shooting_lines")
def shooting_lines(log: BattleLog, side: int) -> Detection:
    """shooting_lines (src L356-L366): at least SHOOTING_LINES_MIN_RULES of its playable sub-rules fire."""
    found = {r: DETECTORS[r](log, side) for r in SHOOTING_LINES_RULES}
    fired = [r for r, d in found.items() if d.used]
    text = f"{len(fired)} of {len(found)} sub-rules: {', '.join(fired) or 'none'}"
    return _yes(0, text) if len(fired) >= SHOOTING_LINES_MIN_RULES else _no(text)


@detector("sheltered_war_machine")
def sheltered_war_machine(log: BattleLog, side: int) -> Detection:
    """sheltered_war_machine (src L243): a war machine with terrain on two sides that still has targets.

    At deployment, a friendly war machine has >= SHELTER_SIDES of its arcs (front, left, right,
    rear) covered: an impassable feature or a hill lies within SHELTER_GAP inches, its nearest
    point in that arc. The trade-off: at the end of >= SHELTER_TARGET_SHARE of the friendly
    movement phases an enemy unit stands in the machine's front arc within its range.
    """
    machines = [(u, p) for u, p in _deployed_units(log, side) if u.war_machine]
    if not machines:
        return _no("no war machines deployed")
    feats = log.terrain_polys(space.IMPASSABLE | {"hill"})
    best = ""
    for u, p in machines:
        fp = log.footprint(u.uid, p)
        arcs = set()
        for _t, poly in feats:
            if fp.distance(poly) <= SHELTER_GAP:
                near = nearest_points(fp, poly)[1]
                arcs.add(log.arc(u.uid, p, near.x, near.y))
        arcs.discard("inside")
        turns = [q.moved for q in log.player_turns(side) if q.moved is not None and u.uid in q.moved.poses]
        seen = sum(1 for snap in turns if any(
            log.units[e].side != side and _in_missile_range(log, snap, u.uid, e) for e in snap.poses))
        share = _share(seen, len(turns))
        text = (f"{u.label} covered on {len(arcs)} side(s) ({', '.join(sorted(arcs)) or 'none'}), "
                f"enemy in its arc at {_pct(share)} of turns")
        if len(arcs) >= SHELTER_SIDES and share >= SHELTER_TARGET_SHARE:
            return _yes(0, text)
        best = best or text
    return _no(best)


@detector("guard_balance")
def guard_balance(log: BattleLog, side: int) -> Detection:
    """guard_balance (shooting lines D, src L366): war machines guarded, without over-guarding.

    As placed at deployment (before Vanguard moves), for >= GUARD_WM_SHARE of the friendly war
    machines a friendly combat unit (not a character, war machine or shooter) stands within
    GUARD_WM_RANGE inches of the machine and nearer than it to the nearest enemy unit; the guards
    hold <= GUARD_POINTS_MAX of the points.
    """
    deployed = _placed_units(log, side)
    machines = [(u, p) for u, p in deployed if u.war_machine]
    if not machines:
        return _no("no war machines deployed")
    enemies = [(u.uid, p) for u, p in _placed_units(log, 1 - side)]
    combat = [(u, p) for u, p in deployed if not (u.character or u.war_machine or u.shooter)]
    guards: set[int] = set()
    guarded = 0
    for m, pm in machines:
        if not enemies:
            break
        e, pe = min(enemies, key=lambda ep: (log.distance(m.uid, pm, ep[0], ep[1]), ep[0]))
        d_m = log.distance(m.uid, pm, e, pe)
        mine = [g.uid for g, pg in combat if log.distance(m.uid, pm, g.uid, pg) <= GUARD_WM_RANGE
                and log.distance(g.uid, pg, e, pe) < d_m]
        guarded += bool(mine)
        guards |= set(mine)
    share = guarded / len(machines)
    pts = sum(log.units[g].points for g in guards) / log.side_points(side)
    text = f"{guarded} of {len(machines)} war machine(s) guarded; guards hold {_pct(pts)} of the points"
    return _yes(0, text) if share >= GUARD_WM_SHARE and pts <= GUARD_POINTS_MAX else _no(text)


def _diverted(log: BattleLog, side: int, irritant: int) -> list[int]:
    """Enemy units drawn towards the irritant: after moving in an enemy movement phase of DIVERT_TURNS
    they stand nearer to it than at deployment, and it is the nearest unit of ``side`` to them."""
    out: set[int] = set()
    for p in log.player_turns(1 - side):
        snap = p.moved
        if p.turn not in DIVERT_TURNS or snap is None or irritant not in snap.poses:
            continue
        pi = snap.poses[irritant]
        for e in {m["unit"] for _, pt, m in log.moves if pt == p.index}:
            if e not in snap.poses or e not in log.deployed.poses or log.units[e].side == side:
                continue
            pe = snap.poses[e]
            ours = [(log.distance(e, pe, o, po), o) for o, po in snap.poses.items() if log.units[o].side == side
                    and o not in snap.hosts]
            if not ours or min(ours)[1] != irritant:
                continue
            d0 = log.distance(e, log.deployed.poses[e], irritant, log.deployed.poses.get(irritant, pi))
            if log.distance(e, pe, irritant, pi) < d0:
                out.add(e)
    return sorted(out)


@detector("sacrifice_for_deployment")
def sacrifice_for_deployment(log: BattleLog, side: int) -> Detection:
    """sacrifice_for_deployment (src L368-L376): an isolated missile unit or war machine draws the enemy's attacks.

    Irritant: a friendly shooter or war machine with no friendly unit within IRRITANT_ISOLATION
    inches at deployment. It draws the enemy when either (tactics.md §4.4) the attention ratio
    = (share of enemy volleys, war machine shots and charges aimed at it) / (its share of the
    army's points) >= ATTENTION_RATIO_MIN with >= IRRITANT_MIN_ATTACKS attacks on it, or enemy
    units holding >= DIVERTED_SHARE of the enemy's points move towards it (:func:`_diverted`).
    """
    deployed = _deployed_units(log, side)
    attacks = [v["target"] for _, _, v in log.volleys if log.units[v["unit"]].side != side]
    attacks += [c.target for c in log.charges if log.units[c.unit].side != side]
    pts = log.side_points(side)
    for u, p in deployed:
        if not u.shooter:
            continue
        if any(o.uid != u.uid and log.distance(u.uid, p, o.uid, po) <= IRRITANT_ISOLATION for o, po in deployed):
            continue
        on = attacks.count(u.uid)
        ratio = _share(on, len(attacks)) / (u.points / pts)
        drawn = _diverted(log, side, u.uid)
        share = sum(log.units[e].points for e in drawn) / log.side_points(1 - side)
        text = (f"isolated {u.label} drew {on} of {len(attacks)} enemy attacks (attention ratio {ratio:.1f}); "
                f"{_pct(share)} of the enemy points moved towards it")
        if (on >= IRRITANT_MIN_ATTACKS and ratio >= ATTENTION_RATIO_MIN) or share >= DIVERTED_SHARE:
            return _yes(0, text)
        return _no(text)
    return _no("no isolated missile unit or war machine at deployment")


def _coverage(log: BattleLog, snap: Snapshot, asset: int, side: int) -> float:
    """Degrees around the asset covered by other friendly units within GUARD_RANGE of it.

    A joined asset is measured around the unit it joined (that unit and the characters in it
    are not ring units); joined characters never count as ring units.
    """
    core = snap.hosts.get(asset, asset)
    if core not in snap.poses:
        return 0.0
    pc = snap.poses[core]
    intervals = []
    for o, po in snap.poses.items():
        if o in (asset, core) or o in snap.hosts or log.units[o].side != side:
            continue
        if log.distance(core, pc, o, po) > GUARD_RANGE:
            continue
        w, d = log.dims(o, po)
        angles = [math.atan2(y - pc.y, x - pc.x) for x, y in geo.corners(geo.Pose(po.x, po.y, po.facing), w, d)]
        mid = math.atan2(po.y - pc.y, po.x - pc.x)
        rel = [((a - mid + math.pi) % (2 * math.pi)) - math.pi for a in angles]
        intervals.append((mid + min(rel), mid + max(rel)))
    covered = np.zeros(360, dtype=bool)
    for lo, hi in intervals:
        for k in range(int(math.floor(math.degrees(lo))), int(math.ceil(math.degrees(hi)))):
            covered[k % 360] = True
    return float(covered.sum())


def _bubble(log: BattleLog, side: int, asset: int) -> tuple[bool, str]:
    snaps = [log.deployed] + [p.end for p in log.player_turns(side) if p.end is not None]
    snaps = [s for s in snaps if asset in s.poses]
    if not snaps:
        return False, f"{_label(log, asset)} never on the table"
    ringed = sum(1 for s in snaps if _coverage(log, s, asset, side) >= RING_COVERAGE) / len(snaps)
    moves = [p for p in log.player_turns(side) if asset in p.start.poses and p.end is not None and asset in p.end.poses]
    moved = sum(1 for p in moves if math.dist((p.start.poses[asset].x, p.start.poses[asset].y),
                                              (p.end.poses[asset].x, p.end.poses[asset].y)) >= BUBBLE_MIN_STEP)
    moved = moved / len(moves) if moves else 0.0
    last = log.turns[-1].end if log.turns else log.deployed
    alive = last is not None and asset in last.poses
    text = (f"{_label(log, asset)} ringed >= {RING_COVERAGE:.0f} deg at {_pct(ringed)} of snapshots, "
            f"moved in {_pct(moved)} of turns, {'alive' if alive else 'lost'}")
    return ringed >= RING_SNAPSHOT_SHARE and moved >= BUBBLE_MOVE_SHARE and alive, text


@detector("protected_bubble")
def protected_bubble(log: BattleLog, side: int) -> Detection:
    """protected_bubble (src L378-L383): a key character ringed by friends, the bubble moving, the character alive.

    Candidate assets: the side's characters, wizards first (highest level), then the General,
    then by points; the first that meets the signature is reported. Ring coverage (degrees
    around it covered by other units within GUARD_RANGE; a joined character is measured around
    its unit) >= RING_COVERAGE at >= RING_SNAPSHOT_SHARE of the snapshots (deployment and each
    friendly turn's end); the asset moves >= BUBBLE_MIN_STEP inches in >= BUBBLE_MOVE_SHARE of the
    friendly turns (alone or with the unit it joined); it is alive at the end.
    """
    chars = sorted((u for u in log.side_units(side) if u.character),
                   key=lambda u: (not u.wizard, not u.general, -u.points, u.uid))
    if not chars:
        return _no("no character to protect")
    first = None
    for u in chars:
        ok, text = _bubble(log, side, u.uid)
        if ok:
            return _yes(0, text)
        first = first or text
    return _no(first or "")
