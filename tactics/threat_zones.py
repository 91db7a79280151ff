"""Arcs and threat zones of ``shared/rules/tactics.md``: who could charge where, and what a charge into an arc is worth.

Read-only analyses of a :class:`~env.rules.battle.Battle` (it is never changed) that the manoeuvres of
:mod:`tactics.manoeuvres` and the scripted agents build on:

* **Arcs and combat result** — :func:`arc_of_point`, :func:`attack_arc`,
  :func:`arc_of_front_rank`, :func:`rank_bonus`, :func:`static_result` and
  :func:`flank_swing`: a flank charge is worth +1, a rear charge +2, and either
  cancels the target's rank bonus (tactics.md §0.4, ``flanking_charge_bonus``).
* **Threat and control zones** (§0.1, §2.2) — :func:`can_threaten`,
  :func:`threat_region`, :func:`threats_on`, :func:`threat_zone`, :func:`control`,
  :func:`control_areas`, :func:`dead_zone`, :func:`denied_hills`, :func:`key_hill`,
  :func:`covers_point`, :func:`corridor`, :func:`trap_zone` and :func:`herding_trap`.

Coordinates are table inches; facings degrees counter-clockwise from +x.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

import shapely

from battleline.env.rules import charges, psychology, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.combat import MAX_RANK_BONUS, RANK_MIN_MODELS
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ARC_BONUS = {"front": 0, "left": 1, "right": 1, "rear": 2}
"""Combat-result bonus of a charge into each facing (CORE.CC.COMBAT_RESULT.FLANK / REAR)."""

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


def arc_of_front_rank(c: UnitState, t: UnitState) -> str:
    """The arc of ``t`` where most of ``c``'s front rank stands (the arc a charge of ``c`` would hit; "front" on doubt)."""
    try:
        arcs = geo.unit_arc(space.pose(t), t.width, t.depth, space.front_rank(c))
    except ValueError:
        return "front"
    return arcs[0]


__all__ = [
    "ARC_BONUS",
    "arc_of_front_rank",
    "arc_of_point",
    "attack_arc",
    "can_threaten",
    "control",
    "control_areas",
    "control_share",
    "corridor",
    "covers",
    "covers_point",
    "dead_zone",
    "denied_hills",
    "engaged_uids",
    "flank_swing",
    "herding_trap",
    "hills",
    "key_hill",
    "no_mans_land",
    "rank_bonus",
    "region_key",
    "REGION_MEMO_SIZE",
    "static_result",
    "threat_region",
    "threat_zone",
    "threats_on",
    "trap_zone",
]
