"""Manoeuvres of ``shared/rules/tactics.md``: read-only analyses of a battle that agents act on.

Every function reads a :class:`~env.rules.battle.Battle` and never changes it
(look-aheads work on ``battle.clone()``). They answer the questions the
tactics chapters ask before a move, a charge or a reaction; the scripted
agents (``agents/tactical.py``) turn the answers into orders.

* **Exposed arcs** — :func:`exposed_arcs`.
* **Flank seeking and combined charges** — :func:`flank_point`,
  :func:`rear_point`, :func:`flank_charges` and :func:`combined_charges`.
* **Bait and feigned flight** (§2.1, ``bait_unit``) — :func:`flee_escape_probability`,
  :func:`predicted_pursuer_pose`, :func:`ambushers` and :func:`bait_post`.
* **Swarm screens and speed bumps** (§2.4) — :func:`screen_point`,
  :func:`speed_bump_point` and :func:`blocks_lane`.
* **Going round impassable terrain** — :func:`detour_point`.
* **The flyer feint** (§3.1) — :func:`feint_exposed`, :func:`feint_landing`
  and :func:`feint_true_target` (the aggressor); :func:`feinting` and
  :func:`feint_watcher` (the defender turns one unit only).
* **Charge consequence analysis** (§3.2, "measure seven times") —
  :func:`counter_chargers`, :func:`covering_friends` and
  :func:`pursuit_exposure`.

The analyses these build on live in their own modules and are importable from
here too: arcs, combat-result swings and threat and control zones (§0.1, §0.4,
§2.2) in :mod:`tactics.threat_zones`; the protected bubble (§4.4) and table
quarters (CORE.VP.QUARTERS) in :mod:`tactics.bubble`; unmasking shooters (§3.2)
in :mod:`tactics.unmasking`.

Coordinates are table inches; facings degrees counter-clockwise from +x.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import shapely

from battleline.env.rules import charges, movement, space, special_rules
from battleline.env.rules import geometry as geo
from battleline.env.rules.state import Engagement, UnitState
from battleline.tactics.bubble import (
    RING_GAP,
    RING_MEMO_SIZE,
    extent_along,
    quarter_balance,
    ring_arc,
    ring_coverage,
    ring_posts,
)
from battleline.tactics.threat_zones import (
    _REGIONS,
    ARC_BONUS,
    REGION_MEMO_SIZE,
    arc_of_front_rank,
    arc_of_point,
    attack_arc,
    can_threaten,
    control,
    control_areas,
    control_share,
    corridor,
    covers,
    covers_point,
    dead_zone,
    denied_hills,
    engaged_uids,
    flank_swing,
    herding_trap,
    hills,
    key_hill,
    no_mans_land,
    rank_bonus,
    region_key,
    static_result,
    threat_region,
    threat_zone,
    threats_on,
    trap_zone,
)
from battleline.tactics.unmasking import (
    maskers,
    moved_view,
    unmask_gain,
    visible_targets,
)

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

FLANK_GAP = 6.0
"""Inches outside an enemy's flank (or behind its rear) where a unit seeking that arc aims."""

MEAN_FLEE = 7.0
"""Mean of a 2D6 flee roll (inches), used for forecasts."""

MEAN_HIGH_DIE = 161 / 36
"""Mean of the higher of 2D6: how far a charge that falls short still moves (CORE.CHARGE.FAILED)."""

BAIT_DEPTH = 10.0
"""How far ahead of the hammer's front the bait stands (tactics.md ``bait_unit``: 10–14")."""

BAIT_SIDE = 8.0
"""How far to the side of the hammer's centre the bait stands, so its flight runs across the hammer's front."""

PURSUIT_FRIEND_GAP = 12.0
"""A pursuer further than this from every friend is cut off (``restrained_pursuit``)."""

PURSUIT_THREATS = 2
"""Enemy units that may charge an over-extended pursuer before it is held back (``restrained_pursuit``)."""


# ----------------------------------------------------------------------------- exposed arcs
def exposed_arcs(battle: Battle, u: UnitState, pose: geo.Pose | None = None) -> dict[int, str]:
    """Enemies that could charge ``u`` (at ``pose``) next turn, and the arc each would hit."""
    p = pose or space.pose(u)
    copy = _at(u, p)
    fp = space.footprint(copy)
    out = {}
    for e in threats_on(battle, fp, 1 - u.side, exclude=(u.uid,)):
        out[e.uid] = arc_of_front_rank(e, copy)
    return out


# ----------------------------------------------------------------------------- flank seeking and combined charges
def flank_point(target: UnitState, mover: UnitState, gap: float = FLANK_GAP) -> tuple[float, float]:
    """``position_for_flank_next_turn``: a point ``gap``" outside ``target``'s flank on ``mover``'s side, level with its centre."""
    lx, _ = geo.to_local(space.pose(target), mover.x, mover.y)
    sign = 1.0 if lx >= 0 else -1.0
    return geo.to_world(space.pose(target), sign * (target.width / 2 + gap + mover.depth / 2), 0.0)


def rear_point(target: UnitState, mover: UnitState, gap: float = FLANK_GAP) -> tuple[float, float]:
    """A point ``gap``" behind ``target``'s rear edge (where a rear charge starts)."""
    return geo.to_world(space.pose(target), 0.0, -(target.depth / 2 + gap + mover.depth / 2))


@dataclass(frozen=True, slots=True)
class ChargeOption:
    """A legal charge seen as a manoeuvre: who, on whom, into which arc, and what it swings."""

    charger: int
    target: int
    arc: str
    swing: int


def charge_options(battle: Battle, legal: Iterable) -> list[ChargeOption]:
    """Every legal ``charge`` action as a :class:`ChargeOption`."""
    out = []
    for a in legal:
        if a.kind != "charge":
            continue
        c, t = battle.unit(a.unit), battle.unit(a.target)
        arc = attack_arc(battle, c, t)
        out.append(ChargeOption(c.uid, t.uid, arc, flank_swing(t, arc)))
    return out


def flank_charges(battle: Battle, legal: Iterable) -> list[ChargeOption]:
    """The legal charges into a flank or rear, biggest combat-result swing first."""
    found = [o for o in charge_options(battle, legal) if o.arc != "front"]
    return sorted(found, key=lambda o: (-o.swing, o.charger, o.target))


def combined_charges(battle: Battle, legal: Iterable) -> dict[int, list[ChargeOption]]:
    """Targets that two or more of our units may charge this turn (a combined charge), with the options.

    A target charged from the front and the flank loses its ranks and faces
    both chargers' bonuses at once; each list puts flank and rear chargers first.
    """
    by_target: dict[int, list[ChargeOption]] = {}
    for o in charge_options(battle, legal):
        by_target.setdefault(o.target, []).append(o)
    return {
        t: sorted(opts, key=lambda o: (o.arc == "front", o.charger))
        for t, opts in by_target.items()
        if len({o.charger for o in opts}) >= 2
    }


# ----------------------------------------------------------------------------- flight, bait and feigned flight
@lru_cache(maxsize=2)
def flee_distance_pmf(swift: bool) -> dict[int, float]:
    """Distribution of a flee roll: 2D6, or 3D6 dropping the lowest with Swiftstride (CORE.PSY.FLEE.MOVE)."""
    from itertools import product

    counts: dict[int, int] = {}
    dice = 3 if swift else 2
    for faces in product(range(1, 7), repeat=dice):
        total = sum(sorted(faces)[-2:])
        counts[total] = counts.get(total, 0) + 1
    n = 6**dice
    return {k: v / n for k, v in counts.items()}


def charge_range_pmf(move: float) -> dict[float, float]:
    """Distribution of a charge range: M + the higher of 2D6 (CORE.CHARGE.RANGE).

    ``move`` (M) and the returned ranges are in inches: ``{range: probability}``.
    """
    return {move + h: (2 * h - 1) / 36 for h in range(1, 7)}


def flee_escape_probability(gap: float, charger: UnitState, fleer: UnitState) -> float:
    """``flee_viability_check``: P(a unit ``gap``" from ``charger`` flees straight away far enough not to be caught).

    The fleer moves its flee roll directly away; the charger is caught short
    when its range (M + the higher of 2D6) is less than the new gap.
    """
    move = float(special_rules.charge_m(charger))
    flee = flee_distance_pmf(special_rules.swiftstride(fleer))
    rng = charge_range_pmf(move)
    return sum(pf * pr for f, pf in flee.items() for r, pr in rng.items() if r < gap + f - geo.EPS)


def flee_heading(fleer: UnitState, charger: UnitState) -> float:
    """The direction a unit flees from ``charger``: straight away from its centre (CORE.PSY.FLEE.MOVE)."""
    if math.hypot(fleer.x - charger.x, fleer.y - charger.y) < 1e-9:
        return (fleer.facing + 180.0) % 360.0
    return geo.facing_towards((charger.x, charger.y), (fleer.x, fleer.y))


def predicted_pursuer_pose(charger: UnitState, fleer: UnitState, flee: float = MEAN_FLEE) -> geo.Pose:
    """Where a charger of a fleeing unit ends: facing the fleer's new spot, its expected charge range on (or 1" short).

    The bait flees ``flee`` inches; a charge that falls short moves the high
    die (CORE.CHARGE.FAILED; the forecast uses its mean), one that catches it
    moves up to the fleer's spot (CORE.CHARGE.VS_FLEEING). Either way the
    charger ends on the line from itself to the bait, facing along it — which
    is what the ambushers need.
    """
    away = flee_heading(fleer, charger)
    end = geo.move_straight(geo.Pose(fleer.x, fleer.y, away), flee)
    heading = geo.facing_towards((charger.x, charger.y), (end.x, end.y))
    gap = math.hypot(end.x - charger.x, end.y - charger.y) - (charger.depth + fleer.depth) / 2 - 1.0
    step = max(0.0, min(gap, MEAN_HIGH_DIE))
    return geo.move_straight(geo.Pose(charger.x, charger.y, heading), step)


def ambushers(
    battle: Battle, side: int, enemy: UnitState, pose: geo.Pose, exclude: Iterable[int] = ()
) -> list[tuple[UnitState, str]]:
    """Units of ``side`` that could charge ``enemy`` standing at ``pose`` in its flank or rear, with the arc.

    The ``feigned_flight`` / ``bait_unit`` check: a friend counts if the
    enemy (at ``pose``) lies within its charge reach, partly in its front
    arc, and most of its front rank stands in the enemy's flank or rear arc.
    """
    skip = set(exclude)
    ghost = _at(enemy, pose)
    target = space.footprint(ghost)
    out = []
    for f in space.alive_units(battle.state, side):
        if f.uid in skip or not can_threaten(battle, f):
            continue
        if geo.distance(space.footprint(f), target) > charges.charge_reach(f):
            continue
        if not geo.partly_in_vision_arc(space.pose(f), f.width, f.depth, target):
            continue
        arc = arc_of_front_rank(f, ghost)
        if arc != "front":
            out.append((f, arc))
    return out


def feigned_flight_payoff(battle: Battle, bait: UnitState, charger: UnitState) -> list[tuple[UnitState, str]]:
    """The friends of ``bait`` that could flank or rear charge ``charger`` after the bait flees from it."""
    pose = predicted_pursuer_pose(charger, bait)
    return ambushers(battle, bait.side, charger, pose, exclude=(bait.uid,))


def bait_post(hammer: UnitState, toward: tuple[float, float], side_sign: float = 1.0) -> tuple[float, float]:
    """Where the bait waits: :data:`BAIT_DEPTH`" ahead of ``hammer``'s front towards ``toward``, :data:`BAIT_SIDE`" to one side.

    An enemy charging the bait from ahead chases it back across the
    hammer's front, showing the hammer its flank (``bait_unit`` step 1).
    ``side_sign`` +1 puts the bait on the hammer's right, −1 on its left.
    """
    heading = geo.facing_towards((hammer.x, hammer.y), toward)
    p = geo.Pose(hammer.x, hammer.y, heading)
    return geo.to_world(p, side_sign * BAIT_SIDE, hammer.depth / 2 + BAIT_DEPTH)


# ----------------------------------------------------------------------------- swarm screens and speed bumps
def screen_point(protected: UnitState, source: tuple[float, float], screen: UnitState, gap: float = 2.0) -> tuple[float, float]:
    """``swarm_screen``: where a screen stands to block the line from ``source`` (an enemy shooter) to ``protected``.

    The screen's centre (x, y) in inches: on the line from ``protected``'s centre
    towards ``source``, max(W, D)/2 + ``gap`` + the screen's depth/2 inches out,
    so about ``gap`` inches separate the two units.
    """
    heading = geo.facing_towards((protected.x, protected.y), source)
    p = geo.Pose(protected.x, protected.y, heading)
    return geo.to_world(p, 0.0, max(protected.width, protected.depth) / 2 + gap + screen.depth / 2)


def speed_bump_point(enemy: UnitState, goal: tuple[float, float], distance: float | None = None) -> tuple[float, float]:
    """``swarm_speed_bump``: a point on ``enemy``'s straight path to ``goal``, ``distance``" ahead of it (default its
    move, :func:`env.rules.movement.normal_move_allowance` (flyers 10", CORE.MOVE.FLY), + 2")."""
    d = distance if distance is not None else movement.normal_move_allowance(enemy) + 2.0
    heading = geo.facing_towards((enemy.x, enemy.y), goal)
    total = math.hypot(goal[0] - enemy.x, goal[1] - enemy.y)
    end = geo.move_straight(geo.Pose(enemy.x, enemy.y, heading), min(d, max(0.0, total / 2)))
    return end.x, end.y


def blocks_lane(blocker: shapely.Geometry, mover: UnitState, goal: tuple[float, float]) -> bool:
    """Whether ``blocker`` stands in the lane ``mover`` would sweep going straight to ``goal``."""
    heading = geo.facing_towards((mover.x, mover.y), goal)
    start = geo.Pose(mover.x, mover.y, heading)
    dist = math.hypot(goal[0] - mover.x, goal[1] - mover.y)
    lane = geo.swept_area(space.footprint_at(mover, start), space.footprint_at(mover, geo.move_straight(start, dist)))
    return bool(lane.intersects(blocker))


def detour_point(battle: Battle, mover: UnitState, goal: tuple[float, float], clearance: float = 1.0) -> tuple[float, float] | None:
    """Where ``mover`` steers to go round the nearest impassable feature (``space.IMPASSABLE``) in its straight
    lane to ``goal`` (:func:`blocks_lane`): level with the feature's middle, ``clearance`` inches plus half the
    mover's width beyond the feature's end on the side that needs the shorter sidestep (a point on the table);
    None when no such feature is in the lane."""
    polys = [space.terrain_poly(t) for t in space.terrain_of(battle.state, space.IMPASSABLE)]
    blockers = [p for p in polys if blocks_lane(p, mover, goal)]
    if not blockers:
        return None
    poly = min(blockers, key=lambda p: p.distance(shapely.Point(mover.x, mover.y)))
    lane = geo.Pose(mover.x, mover.y, geo.facing_towards((mover.x, mover.y), goal))
    local = [geo.to_local(lane, x, y) for x, y in poly.exterior.coords[:-1]]  # the ring without its closing repeat
    ly = sum(p[1] for p in local) / len(local)
    offset = mover.width / 2 + clearance
    sides = [min(p[0] for p in local) - offset, max(p[0] for p in local) + offset]
    points = [geo.to_world(lane, lx, ly) for lx in sorted(sides, key=abs)]
    w, h = battle.state.table_w, battle.state.table_h
    return next((pt for pt in points if 0.0 <= pt[0] <= w and 0.0 <= pt[1] <= h), None)


# ----------------------------------------------------------------------------- the flyer feint
def feint_exposed(battle: Battle, flyer: UnitState, point: tuple[float, float]) -> tuple[list[UnitState], list[UnitState]]:
    """(enemies within the flyer's charge reach of ``point``, those of them showing it a flank or rear there)."""
    reach = charges.charge_reach(flyer)
    ghost = _at(flyer, geo.Pose(point[0], point[1], flyer.facing))
    fp = space.footprint(ghost)
    near, exposed = [], []
    for e in space.alive_units(battle.state, 1 - flyer.side):
        if e.fleeing or geo.distance(space.footprint(e), fp) > reach:
            continue
        near.append(e)
        if arc_of_point(e, point[0], point[1]) != "front":
            exposed.append(e)
    return near, exposed


def feint_landing(battle: Battle, flyer: UnitState, candidates: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """``flyer_feint`` (aggressor): the candidate point within reach of ≥ 3 enemies, ≥ 2 of them exposed, safest first.

    Safe: no enemy can charge the flyer there (it stands in no enemy front
    arc within reach). Returns None when no candidate qualifies.
    """
    best, best_key = None, None
    for pt in candidates:
        near, exposed = feint_exposed(battle, flyer, pt)
        if len(near) < 3 or len(exposed) < 2:
            continue
        ghost = space.footprint(_at(flyer, geo.Pose(pt[0], pt[1], flyer.facing)))
        danger = len(threats_on(battle, ghost, 1 - flyer.side))
        key = (danger, -len(exposed), -len(near))
        if best_key is None or key < best_key:
            best, best_key = pt, key
    return best


def feint_true_target(battle: Battle, flyer: UnitState) -> UnitState | None:
    """``flyer_feint`` counter-method: the enemy the flyer could charge while safe from the others' counter-charges.

    Among the enemies it may legally charge now, the one whose charge would
    leave the flyer exposed to the fewest counter-chargers (then the most
    valuable).
    """
    reach = charges.charge_reach(flyer)
    best, best_key = None, None
    for e in space.alive_units(battle.state, 1 - flyer.side):
        if e.fleeing or space.unit_distance(flyer, e) > reach or not charges.target_ok(battle, flyer, e):
            continue
        exposed = len(counter_chargers(battle, flyer, e))
        key = (exposed, -e.points, e.uid)
        if best_key is None or key < best_key:
            best, best_key = e, key
    return best


def flyers_in_reach(battle: Battle, u: UnitState) -> list[UnitState]:
    """``threat_360_check``: enemy flyers that could charge ``u`` from any direction (the circle of their reach)."""
    return [
        e
        for e in space.alive_units(battle.state, 1 - u.side)
        if special_rules.flyer(e) and not e.fleeing and space.unit_distance(e, u) <= charges.charge_reach(e)
    ]


def feinting(battle: Battle, flyer: UnitState) -> bool:
    """Whether enemy ``flyer`` stands as a feint among ``flyer``'s enemies: ≥ 3 in its reach, ≥ 2 showing it a flank or rear."""
    if not special_rules.flyer(flyer) or flyer.fleeing:
        return False
    near, exposed = feint_exposed(battle, flyer, (flyer.x, flyer.y))
    return len(near) >= 3 and len(exposed) >= 2


def feint_watcher(battle: Battle, flyer: UnitState) -> UnitState | None:
    """``flyer_feint`` (defender): the one unit that turns to face a feinting flyer — the nearest that could charge it.

    Everyone else keeps its facing, so the flyer's true target keeps its supports.
    """
    near, _ = feint_exposed(battle, flyer, (flyer.x, flyer.y))
    able = [u for u in near if can_threaten(battle, u)]
    return min(able, key=lambda u: (space.unit_distance(u, flyer), u.uid), default=None)


# ----------------------------------------------------------------------------- charge consequence analysis
def contact_pose(battle: Battle, c: UnitState, t: UnitState) -> tuple[geo.Pose, str] | None:
    """Where ``c`` would stand after charging ``t`` home, and the facing it hits; None if no spot is free."""
    arc = attack_arc(battle, c, t)
    placed = charges.contact_placement(battle, c, t, arc)
    return (placed[0], arc) if placed is not None else None


def counter_chargers(battle: Battle, c: UnitState, t: UnitState) -> list[tuple[UnitState, str]]:
    """``charge_consequence_analysis``: the enemies that could charge ``c`` next turn if it charges ``t`` home now.

    Looks one turn ahead on ``battle.clone()``: ``c`` is placed in contact
    with ``t`` (in combat with it), and every other enemy that could then
    declare a legal charge on ``c`` is returned with the facing of ``c`` it
    would hit. The battle itself is not touched.
    """
    contact = contact_pose(battle, c, t)
    if contact is None:
        return []
    pose, arc = contact
    ahead = battle.clone()
    cc = ahead.unit(c.uid)
    cc.x, cc.y, cc.facing = pose.x, pose.y, pose.facing
    ahead.state.engagements.append(Engagement(attacker=c.uid, defender=t.uid, facing=arc, charged=True, turn=ahead.state.turn))
    out = []
    for e in space.alive_units(ahead.state, t.side):
        if e.uid == t.uid or not can_threaten(ahead, e):
            continue
        if charges.target_ok(ahead, e, cc):
            out.append((battle.unit(e.uid), attack_arc(ahead, e, cc)))
    return out


def covering_friends(battle: Battle, side: int, enemy: UnitState, exclude: Iterable[int] = ()) -> list[UnitState]:
    """Units of ``side`` that could charge ``enemy`` next turn from where they stand (variants I–III: a counter-threat):
    within their charge reach (:func:`env.rules.charges.charge_reach`) plus one move
    (:func:`env.rules.movement.normal_move_allowance`: flyers 10", CORE.MOVE.FLY) of it, in inches."""
    skip = set(exclude)
    out = []
    for f in space.alive_units(battle.state, side):
        if f.uid in skip or not can_threaten(battle, f):
            continue
        if space.unit_distance(f, enemy) <= charges.charge_reach(f) + movement.normal_move_allowance(f):
            out.append(f)
    return out


def pursuit_pose(pursuer: UnitState, fleer: UnitState, distance: float = MEAN_FLEE) -> geo.Pose:
    """Where ``pursuer`` is forecast to end when it pursues ``fleer``: ``distance``" along the flee line, facing along it."""
    if (pursuer.x, pursuer.y) == (fleer.x, fleer.y):
        heading = pursuer.facing
    else:
        heading = geo.facing_towards((pursuer.x, pursuer.y), (fleer.x, fleer.y))
    return geo.move_straight(geo.Pose(pursuer.x, pursuer.y, heading), distance)


def pursuit_exposure(
    battle: Battle, pursuer: UnitState, fleer: UnitState, distance: float = MEAN_FLEE
) -> tuple[list[UnitState], float]:
    """``restrained_pursuit``: (enemy units within charge reach of ``pursuer`` after it pursues ``fleer``, gap to the nearest friend).

    The pursuer is forecast ``distance`` inches along the flee line (straight
    away from it through the fleer); an enemy counts when the forecast lies
    within its charge reach whatever its facing (it may turn to face first).
    """
    ghost = space.footprint(_at(pursuer, pursuit_pose(pursuer, fleer, distance)))
    threats = threats_on(battle, ghost, 1 - pursuer.side, exclude=(fleer.uid,), arcs=False)
    friends = [f for f in space.alive_units(battle.state, pursuer.side) if f.uid != pursuer.uid]
    gap = min((geo.distance(ghost, space.footprint(f)) for f in friends), default=math.inf)
    return threats, gap


def overextended(battle: Battle, pursuer: UnitState, fleer: UnitState) -> bool:
    """Whether pursuing would leave ``pursuer`` cut off.

    Cut off: charged by ≥ :data:`PURSUIT_THREATS` enemies, > :data:`PURSUIT_FRIEND_GAP`" from friends.
    """
    threats, gap = pursuit_exposure(battle, pursuer, fleer)
    return len(threats) >= PURSUIT_THREATS and gap > PURSUIT_FRIEND_GAP


# ----------------------------------------------------------------------------- helpers
def _at(u: UnitState, pose: geo.Pose) -> UnitState:
    """A throw-away copy of ``u`` standing at ``pose`` (the battle is not touched): :func:`agents.steering.moved_copy`."""
    from battleline.agents.steering import moved_copy

    return moved_copy(u, pose)


__all__ = [
    "_REGIONS",
    "ambushers",
    "ARC_BONUS",
    "arc_of_front_rank",
    "arc_of_point",
    "attack_arc",
    "BAIT_DEPTH",
    "bait_post",
    "BAIT_SIDE",
    "blocks_lane",
    "can_threaten",
    "charge_options",
    "charge_range_pmf",
    "ChargeOption",
    "combined_charges",
    "contact_pose",
    "control",
    "control_areas",
    "control_share",
    "corridor",
    "counter_chargers",
    "covering_friends",
    "covers",
    "covers_point",
    "dead_zone",
    "denied_hills",
    "detour_point",
    "engaged_uids",
    "exposed_arcs",
    "extent_along",
    "feigned_flight_payoff",
    "feint_exposed",
    "feint_landing",
    "feint_true_target",
    "feint_watcher",
    "feinting",
    "flank_charges",
    "FLANK_GAP",
    "flank_point",
    "flank_swing",
    "flee_distance_pmf",
    "flee_escape_probability",
    "flee_heading",
    "flyers_in_reach",
    "herding_trap",
    "hills",
    "key_hill",
    "maskers",
    "MEAN_FLEE",
    "MEAN_HIGH_DIE",
    "moved_view",
    "no_mans_land",
    "overextended",
    "predicted_pursuer_pose",
    "pursuit_exposure",
    "PURSUIT_FRIEND_GAP",
    "pursuit_pose",
    "PURSUIT_THREATS",
    "quarter_balance",
    "rank_bonus",
    "rear_point",
    "region_key",
    "REGION_MEMO_SIZE",
    "ring_arc",
    "ring_coverage",
    "RING_GAP",
    "RING_MEMO_SIZE",
    "ring_posts",
    "screen_point",
    "speed_bump_point",
    "static_result",
    "threat_region",
    "threat_zone",
    "threats_on",
    "trap_zone",
    "unmask_gain",
    "visible_targets",
]
