"""Manoeuvres of ``shared/rules/tactics.md``: read-only analyses of a battle that agents act on.

Every function reads a :class:`~env.rules.battle.Battle` and never changes it
(look-aheads work on ``battle.clone()``). They answer the questions the
tactics chapters ask before a move, a charge or a reaction; the scripted
agents (``agents/tactical.py``) turn the answers into orders.

* **Arcs and combat result** — :func:`arc_of_point`, :func:`attack_arc`,
  :func:`rank_bonus`, :func:`static_result` and :func:`flank_swing`: a flank
  charge is worth +1, a rear charge +2, and either cancels the target's rank
  bonus (tactics.md §0.4, ``flanking_charge_bonus``).
* **Threat and control zones** (§0.1, §2.2) — :func:`threats_on`,
  :func:`threat_zone`, :func:`control`, :func:`dead_zone`,
  :func:`denied_hills`, :func:`key_hill`, :func:`covers_point`, :func:`corridor`,
  :func:`trap_zone` and
  :func:`herding_trap`.
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
* **The protected bubble** (§4.4) — :func:`ring_coverage`, :func:`ring_posts` (with
  :func:`extent_along`).
* **Table quarters** (CORE.VP.QUARTERS) — :func:`quarter_balance`.
* **Unmasking shooters** (§3.2) — :func:`visible_targets`, :func:`maskers`
  and :func:`unmask_gain`.
* **Charge consequence analysis** (§3.2, "measure seven times") —
  :func:`counter_chargers`, :func:`covering_friends` and
  :func:`pursuit_exposure`.

Coordinates are table inches; facings degrees counter-clockwise from +x.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import shapely

from battleline.env.rules import charges, movement, psychology, shooting, space, special_rules, victory
from battleline.env.rules import geometry as geo
from battleline.env.rules.combat import MAX_RANK_BONUS, RANK_MIN_MODELS
from battleline.env.rules.state import Engagement, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ARC_BONUS = {"front": 0, "left": 1, "right": 1, "rear": 2}
"""Combat-result bonus of a charge into each facing (CORE.CC.COMBAT_RESULT.FLANK / REAR)."""

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


# ----------------------------------------------------------------------------- arcs and combat result
def arc_of_point(t: UnitState, x: float, y: float, pose: geo.Pose | None = None) -> str:
    """The arc of ``t`` (at ``pose``, default where it stands) holding the table point (x, y)."""
    p = pose or space.pose(t)
    lx, ly = geo.to_local(p, x, y)
    return geo.point_arc(lx, ly, t.width / 2, t.depth / 2)


def attack_arc(battle: Battle, c: UnitState, t: UnitState) -> str:
    """The facing of ``t`` that ``c`` would charge now (the less favourable on a tie; "front" when undecidable)."""
    try:
        return charges.charge_facing(battle, c, t, roll=False) or "front"
    except ValueError:  # the charger's front rank lies inside the target (a forecast copy)
        return "front"


def rank_bonus(u: UnitState) -> int:
    """Full ranks of at least four models behind the first, at most +3 (CORE.CC.COMBAT_RESULT.RANKS)."""
    if u.has("skirmishers"):
        return 0
    return min(MAX_RANK_BONUS, sum(1 for r in range(2, u.ranks + 1) if u.models_in_rank(r) >= RANK_MIN_MODELS))


def static_result(attacker: UnitState, defender: UnitState, arc: str, charging: bool = True) -> tuple[int, int]:
    """The combat-result bonuses of a charge that do not depend on the dice: (attacker's, defender's).

    Attacker: +1 for charging, its ranks, +1 standard, +1 flank or +2 rear.
    Defender: its ranks unless attacked in the flank or rear, +1 standard.
    Wounds and outnumbering are left out (tactics.md FX-04).
    """
    att = (1 if charging else 0) + rank_bonus(attacker) + (1 if attacker.standard else 0) + ARC_BONUS[arc]
    dfd = (rank_bonus(defender) if arc == "front" else 0) + (1 if defender.standard else 0)
    return att, dfd


def flank_swing(defender: UnitState, arc: str) -> int:
    """How much better a charge into ``arc`` is than a frontal one: the arc bonus plus the ranks it denies.

    The source's example (src L185): +1 flank and three ranks denied, a swing of +4.
    """
    if arc == "front":
        return 0
    return ARC_BONUS[arc] + rank_bonus(defender)


# ----------------------------------------------------------------------------- threat and control zones
def can_threaten(battle: Battle, e: UnitState, engaged: Collection[int] | None = None) -> bool:
    """Whether ``e`` could declare a charge in its next movement phase (as far as its state shows).

    ``engaged``: the uids of the units in combat (:func:`engaged_uids`) where the caller has listed them already
    (None: ``psychology.engaged`` is asked)."""
    return (
        e.alive
        and not e.fleeing
        and e.profile.M > 0
        and e.troop_type != "war_machine"
        and not (psychology.engaged(battle, e) if engaged is None else e.uid in engaged)
    )


def engaged_uids(battle: Battle) -> set[int]:
    """The uids of the units in combat: either side of an engagement (CORE.GEO.CONTACT, ``psychology.engaged``)."""
    return {uid for en in battle.state.engagements for uid in (en.attacker, en.defender)}


def threat_region(e: UnitState, pose: geo.Pose | None = None) -> shapely.Geometry:
    """Where ``e`` (at ``pose``) may declare a charge: within its charge reach and in its front arc.

    Kept per (pose, footprint width and depth, charge reach), all it is built from; the shapely
    geometry returned is shared by the callers that ask for the same (never change it).
    """
    return _region(e, region_key(e, pose))


def region_key(e: UnitState, pose: geo.Pose | None = None) -> tuple[float, float, float, float, float, float]:
    """What :func:`threat_region` of ``e`` at ``pose`` (default: where it stands) is built from: (x, y, facing,
    footprint width, depth, charge reach), inches and degrees."""
    p = pose or space.pose(e)
    return (p.x, p.y, p.facing, e.width, e.depth, charges.charge_reach(e))


def _region(e: UnitState, key: tuple[float, float, float, float, float, float]) -> shapely.Geometry:
    """:func:`threat_region` for its :func:`region_key` ``key``, kept."""
    region = _REGIONS.get(key)
    if region is None:
        if len(_REGIONS) >= REGION_MEMO_SIZE:
            _REGIONS.clear()
        x, y, facing, width, depth, reach = key
        p = geo.Pose(x, y, facing)
        near = space.footprint_at(e, p).buffer(reach)
        region = _REGIONS[key] = near.intersection(geo.vision_arc_region(p, width, depth, reach + width + depth))
    return region


REGION_MEMO_SIZE = 8192
"""Most threat regions :func:`threat_region` keeps (then it starts afresh)."""
_REGIONS: dict[tuple, shapely.Geometry] = {}


def threats_on(
    battle: Battle,
    target: shapely.Geometry,
    side: int,
    exclude: Iterable[int] = (),
    pose: Mapping[int, geo.Pose] | None = None,
    arcs: bool = True,
) -> list[UnitState]:
    """Units of ``side`` that could charge a unit standing on ``target`` (a footprint) next turn.

    Reach and front arc only; line of sight and blocking units are ignored
    (a forecast errs on the side of caution). ``pose`` overrides positions.
    With ``arcs`` False the front arc is ignored too: the discs of charge
    reach of tactics.md §0.1, for threats a turn or more away (an enemy may
    turn first).
    """
    skip = set(exclude)
    out = []
    for e in space.alive_units(battle.state, side):
        if e.uid in skip or not can_threaten(battle, e):
            continue
        p = (pose or {}).get(e.uid) or space.pose(e)
        fp = space.footprint_at(e, p)
        reach = charges.charge_reach(e)
        if geo.distance(fp, target) > reach:
            continue
        if not arcs or geo.partly_in_vision_arc(p, e.width, e.depth, target):
            out.append(e)
    return out


def threat_zone(battle: Battle, side: int) -> shapely.Geometry:
    """``threat_zone(side)`` (tactics.md §0.1): every point a unit of ``side`` could charge next turn."""
    regions = [threat_region(e) for e in space.alive_units(battle.state, side) if can_threaten(battle, e)]
    return shapely.union_all(regions) if regions else shapely.Polygon()


def no_mans_land(battle: Battle) -> shapely.Polygon:
    """The table between the two deployment zones."""
    s = battle.state
    zone = s.queue.get("zone_depth", 12.0)
    return shapely.box(0.0, zone, s.table_w, s.table_h - zone)


def control(battle: Battle, side: int) -> shapely.Geometry:
    """``control(side)``: ``side``'s threat zone minus the opponent's (on the table)."""
    table = shapely.box(0.0, 0.0, battle.state.table_w, battle.state.table_h)
    return threat_zone(battle, side).difference(threat_zone(battle, 1 - side)).intersection(table)


def dead_zone(battle: Battle) -> shapely.Geometry:
    """The "dead zone" (§6 G-4): where both sides' threat zones overlap; whoever enters it gets charged."""
    return threat_zone(battle, 0).intersection(threat_zone(battle, 1))


def control_share(battle: Battle, side: int) -> float:
    """area(control(side)) / (area(control(side)) + area(control(opponent))), 0.5 when neither controls anything."""
    own, other = control(battle, side).area, control(battle, 1 - side).area
    return own / (own + other) if own + other > 0 else 0.5


def control_areas(battle: Battle, side: int, moved: Mapping[int, geo.Pose] | None = None) -> tuple[float, float]:
    """Square inches of ``control(side)`` and ``control(opponent)`` on the table, with ``moved`` overriding
    positions (a forecast): the two terms of ``control_share`` (``area_control``, tactics.md §2.2).

    Kept per (table size, each side's :func:`region_key` of its units able to charge, in order): the
    regions, and so the areas, are built from nothing else."""
    w, h = battle.state.table_w, battle.state.table_h
    keys = tuple(
        tuple((region_key(u, (moved or {}).get(u.uid)), u) for u in space.alive_units(battle.state, s) if can_threaten(battle, u))
        for s in (side, 1 - side)
    )
    memo_key = (w, h, tuple(k for k, _ in keys[0]), tuple(k for k, _ in keys[1]))
    areas = _AREAS.get(memo_key)
    if areas is None:
        table = shapely.box(0.0, 0.0, w, h)
        zones = []
        for pairs in keys:
            regions = [_region(u, k) for k, u in pairs]
            zones.append(shapely.union_all(regions).intersection(table) if regions else shapely.Polygon())
        own, opp = zones
        if len(_AREAS) >= REGION_MEMO_SIZE:
            _AREAS.clear()
        areas = _AREAS[memo_key] = (own.difference(opp).area, opp.difference(own).area)
    return areas


_AREAS: dict[tuple, tuple[float, float]] = {}


def hills(battle: Battle) -> list[shapely.Polygon]:
    """The hill polygons on the table."""
    return [space.terrain_poly(t) for t in battle.state.terrain if t.kind == "hill"]


def denied_hills(battle: Battle, side: int) -> list[shapely.Polygon]:
    """``terrain_denial_by_threat``: hills mostly inside ``control(side)``: the enemy cannot climb them uncharged."""
    zone = control(battle, side)
    return [h for h in hills(battle) if h.intersection(zone).area >= 0.5 * h.area]


def key_hill(battle: Battle) -> shapely.Polygon | None:
    """``terrain_denial_by_threat``: the hill nearest the table's centre (the contested one), or None without hills."""
    cx, cy = battle.state.table_w / 2, battle.state.table_h / 2
    return min(hills(battle), key=lambda h: (h.representative_point().distance(shapely.Point(cx, cy)), h.bounds), default=None)


def covers_point(u: UnitState, pose: geo.Pose, point: tuple[float, float], margin: float = 0.0) -> bool:
    """Whether ``u`` standing at ``pose`` could charge a unit at ``point`` (table inches): the point lies in its
    front arc and within its charge reach less ``margin`` inches (the threat zone of tactics.md §0.1)."""
    return covers(u, pose, shapely.Point(point), margin)


def covers(u: UnitState, pose: geo.Pose, target: shapely.Geometry, margin: float = 0.0) -> bool:
    """Whether ``u`` standing at ``pose`` could charge ``target`` (a point or a footprint, table inches): it
    lies partly in its front arc and within its charge reach less ``margin`` inches."""
    if geo.distance(space.footprint_at(u, pose), target) > charges.charge_reach(u) - margin:
        return False
    return geo.partly_in_vision_arc(pose, u.width, u.depth, target)


def corridor(battle: Battle, side: int) -> shapely.Geometry:
    """``herding_corridor``: the part of no-man's land outside ``side``'s threat zone (the "safe" lane left open)."""
    return no_mans_land(battle).difference(threat_zone(battle, side))


def trap_zone(battle: Battle, side: int, moved: Mapping[int, geo.Pose] | None = None, min_threats: int = 2) -> shapely.Geometry:
    """``herding_corridor``: the ground where ``min_threats`` or more units of ``side`` could charge (the trap).

    An enemy that follows the lane left open and ends there is charged by
    several units at once. ``moved`` overrides positions (a forecast).
    """
    regions = [
        threat_region(u, (moved or {}).get(u.uid))
        for u in space.alive_units(battle.state, side)
        if can_threaten(battle, u)
    ]
    if len(regions) < min_threats:
        return shapely.Polygon()
    if min_threats <= 1:
        return shapely.union_all(regions)
    pairs = [a.intersection(b) for i, a in enumerate(regions) for b in regions[i + 1:]]
    return shapely.union_all(pairs) if pairs else shapely.Polygon()


def herding_trap(battle: Battle, side: int, point: tuple[float, float], min_threats: int = 2) -> bool:
    """Whether an enemy arriving at ``point`` could be charged by ``min_threats`` units of ``side`` (the trap at the corridor's end)."""
    return len(threats_on(battle, shapely.Point(point).buffer(1.0), side)) >= min_threats


def exposed_arcs(battle: Battle, u: UnitState, pose: geo.Pose | None = None) -> dict[int, str]:
    """Enemies that could charge ``u`` (at ``pose``) next turn, and the arc each would hit."""
    p = pose or space.pose(u)
    copy = _at(u, p)
    fp = space.footprint(copy)
    out = {}
    for e in threats_on(battle, fp, 1 - u.side, exclude=(u.uid,)):
        out[e.uid] = arc_of_front_rank(e, copy)
    return out


def arc_of_front_rank(c: UnitState, t: UnitState) -> str:
    """The arc of ``t`` where most of ``c``'s front rank stands (the arc a charge of ``c`` would hit; "front" on doubt)."""
    try:
        arcs = geo.unit_arc(space.pose(t), t.width, t.depth, space.front_rank(c))
    except ValueError:
        return "front"
    return arcs[0]


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


# ----------------------------------------------------------------------------- the protected bubble
def ring_coverage(battle: Battle, asset: UnitState, reach: float = 6.0,
                  moved: Mapping[int, UnitState] | None = None) -> float:
    """``protected_bubble``: degrees around ``asset``'s centre covered by friends within ``reach``" of it (0–360).

    ``moved`` stands forecast copies of units (by uid) in for them; the battle is not touched. Each
    friend's arc is :func:`ring_arc` (kept per pair of footprints).
    """
    covered = bytearray(360)
    seen_from = (asset.x, asset.y, asset.facing, asset.width, asset.depth)
    for f in space.alive_units(battle.state, asset.side):
        if f.uid == asset.uid or f.fleeing:
            continue
        if moved and f.uid in moved:
            f = moved[f.uid]
        arc = _kept_arc(seen_from, asset, f, reach)
        if arc is None:
            continue
        lo, hi = arc
        n = hi - lo
        if n >= 360:
            return 360.0
        if n <= 0:
            continue
        start = lo % 360
        end = start + n
        if end <= 360:
            covered[start:end] = b"\x01" * n
        else:
            covered[start:] = b"\x01" * (360 - start)
            covered[:end - 360] = b"\x01" * (end - 360)
    return float(covered.count(1))


RING_MEMO_SIZE = 65536
"""Most (asset, friend, reach) places :func:`ring_arc` keeps arcs for (then it starts afresh)."""
_RING_ARCS: dict[tuple, tuple[int, int] | None] = {}
_UNSET = object()


def ring_arc(asset: UnitState, f: UnitState, reach: float = 6.0) -> tuple[int, int] | None:
    """The whole degrees (lo, hi: ``range(lo, hi)``, table angles CCW from +x, not reduced mod 360) that
    ``f``'s footprint spans seen from ``asset``'s centre, or None when ``f`` is more than ``reach``
    inches from ``asset`` (edge to edge).

    Kept per (asset footprint, friend footprint, reach): centre, facing, width and depth of each
    (CORE.GEO.FOOTPRINT), all the answer depends on.
    """
    return _kept_arc((asset.x, asset.y, asset.facing, asset.width, asset.depth), asset, f, reach)


def _kept_arc(seen_from: tuple[float, float, float, float, float], asset: UnitState, f: UnitState,
              reach: float) -> tuple[int, int] | None:
    """:func:`ring_arc` with the asset's (x, y, facing, width, depth) already read as ``seen_from``."""
    key = (seen_from, f.x, f.y, f.facing, f.width, f.depth, reach)
    arc = _RING_ARCS.get(key, _UNSET)
    if arc is not _UNSET:
        return arc  # type: ignore[return-value]
    if len(_RING_ARCS) >= RING_MEMO_SIZE:
        _RING_ARCS.clear()
    arc = _ring_arc(asset, f, reach)
    _RING_ARCS[key] = arc
    return arc


def _ring_arc(asset: UnitState, f: UnitState, reach: float) -> tuple[int, int] | None:
    """:func:`ring_arc` worked out afresh."""
    if space.unit_distance(asset, f) > reach:
        return None
    mid = math.atan2(f.y - asset.y, f.x - asset.x)
    rel = []
    for x, y in geo.corners(space.pose(f), f.width, f.depth):
        a = math.atan2(y - asset.y, x - asset.x)
        rel.append((a - mid + math.pi) % (2 * math.pi) - math.pi)
    lo, hi = math.degrees(mid + min(rel)), math.degrees(mid + max(rel))
    return int(math.floor(lo)), int(math.ceil(hi))


def quarter_balance(battle: Battle, side: int, moved: Mapping[int, UnitState] | None = None) -> int:
    """Table quarters held by ``side`` less those held by its enemy (CORE.VP.QUARTERS, 100 VP each), with
    the units in ``moved`` (uid -> a forecast copy, e.g. :func:`agents.steering.landing`) where the copies stand
    (:func:`env.rules.victory.quarter_holders`)."""
    holders = victory.quarter_holders(battle, moved)
    return holders.count(side) - holders.count(1 - side)


RING_GAP = 1.1
"""``protected_bubble``: inches between the asset and a ring unit at its post (the engine keeps units 1" apart)."""


def extent_along(u: UnitState, axis: tuple[float, float]) -> tuple[float, float]:
    """(least, greatest) projection of ``u``'s footprint corners on the unit vector ``axis`` (inches)."""
    vals = [x * axis[0] + y * axis[1] for x, y in geo.corners(space.pose(u), u.width, u.depth)]
    return min(vals), max(vals)


def ring_posts(asset: UnitState, ring: Mapping[str, UnitState], gap: float = RING_GAP) -> dict[str, tuple[float, float]]:
    """``protected_bubble``: where the asset and each ring unit should stand, from their real footprints.

    ``ring`` maps "front", "left", "right", "rear" (the asset's side's frame) to units. The posts
    (table points, inches, keyed like ``ring`` plus "asset") form a cross ``gap`` inches apart: the
    asset's front edge level with the nearer (rearmost) front edge of the side units (so that it
    stands between them), the front unit's rear edge ``gap`` ahead of the asset, the side units
    ``gap`` to either side of it with their front edges level with its front edge, the rear unit
    ``gap`` behind it. Each unit keeps its present footprint (a unit that turns may differ).
    """
    ahead = (0.0, 1.0) if asset.side == 0 else (0.0, -1.0)
    left = (-ahead[1], ahead[0])

    def table(lat: float, fwd: float) -> tuple[float, float]:
        return lat * left[0] + fwd * ahead[0], lat * left[1] + fwd * ahead[1]

    a_lo, a_hi = extent_along(asset, ahead)
    l_lo, l_hi = extent_along(asset, left)
    lat = (l_lo + l_hi) / 2
    tops = [extent_along(ring[k], ahead)[1] for k in ("left", "right") if k in ring]
    top = min(tops) if tops else a_hi
    posts = {"asset": table(lat, top - (a_hi - a_lo) / 2)}
    if "front" in ring:
        lo, hi = extent_along(ring["front"], ahead)
        posts["front"] = table(lat, top + gap + (hi - lo) / 2)
    for key, sign in (("left", 1.0), ("right", -1.0)):
        if key in ring:
            lo, hi = extent_along(ring[key], ahead)
            wl, wh = extent_along(ring[key], left)
            offset = (l_hi - l_lo) / 2 + gap + (wh - wl) / 2
            posts[key] = table(lat + sign * offset, top - (hi - lo) / 2)
    if "rear" in ring:
        lo, hi = extent_along(ring["rear"], ahead)
        posts["rear"] = table(lat, top - (a_hi - a_lo) - gap - (hi - lo) / 2)
    return posts


# ----------------------------------------------------------------------------- unmasking shooters
def visible_targets(battle: Battle, shooter: UnitState, moved: Mapping[int, geo.Pose] | None = None) -> set[int]:
    """Enemies ``shooter`` has in range and sight, with the units in ``moved`` standing at those poses instead.

    The forecast is read on :func:`moved_view` (copies of the moved units only; the battle is not touched).
    """
    b = moved_view(battle, moved) if moved else battle
    s = b.unit(shooter.uid)
    if s.missile is None or not s.alive:
        return set()
    return {e.uid for e in space.alive_units(b.state, 1 - s.side) if shooting.in_range_and_sight(b, s, e)}


def moved_view(battle: Battle, moved: Mapping[int, geo.Pose]) -> Battle:
    """A read-only look at ``battle`` with the units in ``moved`` (uid -> pose) standing at those poses.

    Only the state is there (no dice, events or actions): the moved units are copies
    (:func:`agents.steering.moved_copy`), every other unit, the terrain and the rest of the state are
    ``battle``'s own objects, so nothing may be changed through it; for questions of the table
    (range, sight, cover) where :meth:`Battle.clone` would copy the whole battle.
    """
    from battleline.agents.steering import moved_copy
    from battleline.env.rules.battle import Battle

    view = Battle.__new__(Battle)
    units = list(battle.state.units)
    for uid, p in moved.items():
        units[uid] = moved_copy(units[uid], p)
    view.state = dataclasses.replace(battle.state, units=units)
    view._legal_cache = None
    return view


def maskers(battle: Battle, shooter: UnitState) -> list[UnitState]:
    """Friends standing between ``shooter`` and an enemy in its range and arc that it cannot see (they mask it)."""
    if shooter.missile is None:
        return []
    rng = shooting.weapon(shooter, battle.state).range
    sp = space.pose(shooter)
    found: dict[int, UnitState] = {}
    for e in space.alive_units(battle.state, 1 - shooter.side):
        tp = space.footprint(e)
        if geo.distance(space.footprint(shooter), tp) > rng or not geo.partly_in_vision_arc(sp, shooter.width, shooter.depth, tp):
            continue
        if space.line_of_sight(battle.state, shooter, e):
            continue
        line = shapely.LineString([(shooter.x, shooter.y), (e.x, e.y)]).buffer(shooter.width / 2)
        for f in space.alive_units(battle.state, shooter.side):
            if f.uid != shooter.uid and space.footprint(f).intersects(line):
                found[f.uid] = f
    return sorted(found.values(), key=lambda f: f.uid)


def unmask_gain(battle: Battle, mover: UnitState, pose: geo.Pose, shooters: Iterable[UnitState]) -> int:
    """How many more (shooter, target) pairs the friendly ``shooters`` get if ``mover`` stands at ``pose``."""
    gain = 0
    for s in shooters:
        if s.uid == mover.uid:
            continue
        gain += len(visible_targets(battle, s, {mover.uid: pose})) - len(visible_targets(battle, s))
    return gain


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
    "ARC_BONUS",
    "ChargeOption",
    "ambushers",
    "arc_of_front_rank",
    "arc_of_point",
    "attack_arc",
    "bait_post",
    "blocks_lane",
    "charge_options",
    "combined_charges",
    "contact_pose",
    "control",
    "control_share",
    "corridor",
    "counter_chargers",
    "covering_friends",
    "dead_zone",
    "detour_point",
    "denied_hills",
    "exposed_arcs",
    "feigned_flight_payoff",
    "feint_exposed",
    "feint_landing",
    "feint_true_target",
    "feint_watcher",
    "feinting",
    "flank_charges",
    "flank_point",
    "flank_swing",
    "flee_escape_probability",
    "flee_heading",
    "flyers_in_reach",
    "herding_trap",
    "maskers",
    "overextended",
    "predicted_pursuer_pose",
    "pursuit_exposure",
    "pursuit_pose",
    "rank_bonus",
    "rear_point",
    "ring_arc",
    "ring_coverage",
    "ring_posts",
    "extent_along",
    "screen_point",
    "speed_bump_point",
    "static_result",
    "threat_region",
    "trap_zone",
    "threat_zone",
    "threats_on",
    "unmask_gain",
    "moved_view",
    "visible_targets",
]
