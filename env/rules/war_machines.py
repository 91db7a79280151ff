"""War machines (RULESET.md §3.6, CORE.WM.*; CORE.TYPE.WAR_MACHINE).

A war machine is a unit of troop type ``war_machine`` whose ``missile`` names
its machine (:data:`MACHINES`: ``great_cannon``, ``light_cannon``,
``stone_thrower``, ``bolt_thrower``, ``flame_cannon``). The crew is
abstracted into one model on one 50×100 mm base (CORE.GEO.BASES): the unit's
``models`` count is the crew alive, its footprint is always one base, and
its US is the crew alive. Its profile is the crew's (CORE.WM.PROFILES) with
T replaced by the machine's T; the crew's own T (3) is used only in close
combat, where the crew fights (CORE.WM.ASSAULT_TEAM).

Firing is a ``shoot`` action (:class:`env.rules.actions.Action`). The legal
actions hold one ``Action("shoot", machine, target)`` per target, with no
option: the engine then picks the fire mode and aim (:func:`default_option`).
The same shot with an explicit option is accepted too (:func:`accepts`;
``Battle.apply``):

================ ===================================================== ====================
machine          option                                                 rule
================ ===================================================== ====================
cannon           ``"shot:<d>"`` solid shot aimed d" from the muzzle,    CORE.WM.CANNON.SHOT
                 0 < d ≤ the maximum range
cannon           ``"grapeshot"`` (target within 12")                    CORE.WM.CANNON.GRAPESHOT
stone thrower    ``"direct:<d>"`` (LOS) or ``"indirect:<d>"`` (no LOS), CORE.WM.STONE.AIM,
                 12 ≤ d ≤ 60                                            CORE.WM.STONE.INDIRECT
bolt thrower     none                                                   CORE.WM.BOLT
flame cannon     none                                                   CORE.WM.FLAME
================ ===================================================== ====================

Geometry: the line of fire runs from the muzzle (the middle of the machine's
front edge) towards the target's centre; the machine first pivots to face the
target, free, when the pivoted footprint is legal (CORE.WM.MOVE). A machine
needs no vision arc to pick a target (the free pivot), but LOS except for
indirect fire. Distances in inches, directions in degrees.

This module holds the targets, fire modes and aims, the firing and the
movement of a war machine; the profiles are in
:mod:`env.rules.war_machine_profiles`, each machine's shots, templates and
misfires in :mod:`env.rules.war_machine_shots`, the assaults on a machine in
:mod:`env.rules.war_machine_assault` (their names are importable from here too).

DEFAULT readings (not in RULESET.md):

* "may not shoot next turn" (misfires, CORE.WM.PANIC) means the machine's
  own next player turn;
* a failed Terror test of a crew works as a failed Panic test (it does not
  flee), and a war machine's only reaction to a charge is Hold;
* an assault team is made of the charging unit's command models first, then
  R&F; joined characters stay out of it; the crew's attacks go to the first
  charger; hits of a multi-wound weapon on a war machine kill one crew model
  per wound (CORE.WM.SHOT_AT);
* a template or line shot hits every unit's models, friends included, but
  never the firing machine itself.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, space, templates
from battleline.env.rules.actions import Action
from battleline.env.rules.state import UnitState
from battleline.env.rules.t9a import ARTILLERY
from battleline.env.rules.t9a import on as t9a_on
from battleline.env.rules.war_machine_assault import (
    BASE_40MM,
    TEAM_40MM,
    TEAM_BY_TYPE,
    TEAM_MIN_US,
    fight_assaults,
    in_combat,
    team_size,
)
from battleline.env.rules.war_machine_profiles import (
    CANNON_LEAD,
    CREW_PROFILE,
    GRAPESHOT_RANGE,
    GRAPESHOT_STRENGTH,
    MACHINES,
    MISFIRE_BLAST_STRENGTH,
    STONE_PARTIAL,
    TESTS_ROLLED,
    Machine,
    _aim_frame,
    auto_fails,
    crew_lost,
    crew_stands,
    is_machine,
    machine,
    muzzle,
    prepare,
    silence,
    silenced,
)
from battleline.env.rules.war_machine_shots import (
    SEGMENT_MARGIN,
    _bases_within,
    _flaming,
    _hits_by_unit,
    _others,
    bolt_shot,
    cannon_misfire,
    cannon_shot,
    flame_shot,
    grapeshot,
    resolve_hits,
    stone_damage,
    stone_misfire,
    stone_shot,
)

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


# --------------------------------------------------------------------- movement
def move_allowance(u: UnitState) -> float:
    """CORE.WM.MOVE: M = 4 − crew lost (never below 0)."""
    return float(max(0, u.profile.M - crew_lost(u)))


MACHINE_MOVES = ("advance", "advance_half", "backward", "wheel_left", "wheel_right", "wheel_left_short",
                 "wheel_right_short", "turn_left", "turn_right", "about_face", "reform_face")
"""The move options of a war machine (a single model; never marches: CORE.WM.MOVE, CORE.MOVE.MARCH)."""
PIVOTS = ("reform_face",)
"""A bolt thrower may only pivot (CORE.WM.MOVE): turn about its centre to face the nearest enemy."""


def move_options(u: UnitState, options: list[str]) -> list[str]:
    """Filter the move options of war machine ``u`` (CORE.WM.MOVE)."""
    allowed = PIVOTS if u.missile == "bolt_thrower" else MACHINE_MOVES
    return [o for o in options if o in allowed]


def moved(battle: Battle, u: UnitState, option: str, distance: float) -> None:
    """Record a war machine's move (CORE.WM.MOVE); it may not shoot this turn (CORE.WM.FIRE_RULES).

    Only emits the CORE.WM.MOVE event: ``option`` (the move option), ``distance``
    moved in inches, the allowance in inches (:func:`move_allowance`), crew lost
    and whether it may only pivot. The caller has moved the machine and set its
    ``moved`` flag, which is what stops it shooting (:func:`env.rules.shooting.may_fire`).
    """
    battle.emit("CORE.WM.MOVE", unit=u.uid, option=option, distance=distance, allowance=move_allowance(u),
                crew_lost=crew_lost(u), pivot_only=u.missile == "bolt_thrower")


# --------------------------------------------------------------------- targets and options
def _far_distance(point: tuple[float, float], t: UnitState) -> float:
    """The distance (inches) from ``point`` to the farthest corner of ``t``'s footprint (the corners of
    :func:`geo.corner_list`, the same numbers as the footprint polygon's vertices)."""
    return max(math.dist(point, c) for c in geo.corner_list(space.pose(t), t.width, t.depth))


def _basic_target(battle: Battle, u: UnitState, t: UnitState) -> bool:
    from battleline.env.rules import shooting

    return (
        t.alive
        and t.side != u.side
        and not psychology.engaged(battle, t)
        and not shooting._character_shielded(battle, u, t)  # CORE.SHOOT.TARGET
    )


def _in_reach(battle: Battle, u: UnitState, t: UnitState) -> tuple[Machine, float] | None:
    """(the machine, the footprint distance in inches) where ``t`` is a target ``u`` may fire at in some mode as far
    as the tests every mode shares go (CORE.SHOOT.TARGET: an enemy on the table, not engaged, not a shielded
    character; within the machine's range); None where it is not."""
    if not (t.alive and t.side != u.side and not psychology.engaged(battle, t)):
        return None
    m = machine(u)
    dist = space.unit_distance(u, t)
    if dist > m.max_range + geo.EPS:
        return None  # every mode needs the target within the machine's range: the cheaper test before the next
    from battleline.env.rules import shooting

    if shooting._character_shielded(battle, u, t):  # CORE.SHOOT.TARGET (:func:`_basic_target`'s last test)
        return None
    return m, dist


def modes(battle: Battle, u: UnitState, t: UnitState, scan: space.SightScan | None = None) -> list[str]:
    """The fire modes ``u`` may use at ``t`` now: "shot", "grapeshot", "direct", "indirect" or "fire".

    ``scan``: :func:`space.sight_scan` of the battle's state as it stands, for a caller asking several questions.
    """
    reach = _in_reach(battle, u, t)
    if reach is None:
        return []
    m, dist = reach
    los = None

    def sight() -> bool:
        nonlocal los
        if los is None:
            los = space.line_of_sight(battle.state, u, t, scan)
        return los

    out: list[str] = []
    if m.kind in ("great_cannon", "light_cannon"):
        if dist <= m.max_range + geo.EPS and sight():
            out.append("shot")
            if dist <= GRAPESHOT_RANGE + geo.EPS:
                out.append("grapeshot")
    elif m.kind == "stone_thrower":
        if _beyond_minimum(u, t, m, dist):
            if sight():
                out.append("direct")
            out.append("indirect")
    elif dist <= m.max_range + geo.EPS and sight():
        out.append("fire")
    return out


def _beyond_minimum(u: UnitState, t: UnitState, m: Machine, dist: float) -> bool:
    """A stone thrower's range test (CORE.WM.STONE.AIM): ``t`` within the maximum range (``dist`` inches) and its far
    side beyond the minimum range from the muzzle, as if ``u`` had pivoted to face it."""
    if dist > m.max_range + geo.EPS:
        return False
    mz, _ = _aim_frame(u, t)
    return _far_distance(mz, t) >= m.min_range - geo.EPS


def may_target(battle: Battle, u: UnitState, t: UnitState, scan: space.SightScan | None = None) -> bool:
    """``bool(modes(battle, u, t, scan))``: whether ``u`` may fire at ``t`` in some mode. A stone thrower's indirect
    fire needs no line of sight (CORE.WM.STONE.INDIRECT), so none is asked for it."""
    reach = _in_reach(battle, u, t)
    if reach is None:
        return False
    m, dist = reach
    if m.kind == "stone_thrower":
        return _beyond_minimum(u, t, m, dist)
    return dist <= m.max_range + geo.EPS and space.line_of_sight(battle.state, u, t, scan)


def legal_shots(battle: Battle, u: UnitState, scan: space.SightScan | None = None) -> list[Action]:
    """The legal ``shoot`` actions of war machine ``u``: one per target unit, no option; in a siege also
    one per castle element it may strike, target None, option "element:<id>" (:mod:`env.rules.siege.orders`).

    ``scan``: :func:`space.sight_scan` of the battle's state as it stands (read here when not given)."""
    if t9a_on(battle.state, ARTILLERY):  # T9A.ART.*: the T9A profiles' ranges (CFG.EXCLUSIVE)
        from battleline.env.rules.t9a import artillery

        return artillery.legal_shots(battle, u)
    if silenced(battle, u):
        return []
    if scan is None:
        scan = space.sight_scan(battle.state)
    acts = [Action("shoot", u.uid, t.uid) for t in space.alive_units(battle.state, 1 - u.side) if may_target(battle, u, t, scan)]
    if battle.state.castle:  # SIEGE.DMG.*: shots at the enemy castle's elements ("element:<id>")
        from battleline.env.rules.siege.orders import element_shots

        acts += element_shots(battle, u)
    return acts


def parse_option(option: str | None) -> tuple[str | None, float | None]:
    """("shot", 23.5) from "shot:23.5"; (mode, None) for a bare mode; (None, None) for None. Raises ValueError."""
    if option is None:
        return None, None
    mode, _, dist = option.partition(":")
    return mode, (float(dist) if dist else None)


def option_ok(battle: Battle, u: UnitState, t: UnitState, option: str | None) -> bool:
    """Whether ``option`` is a legal fire mode and aim of ``u`` at ``t`` (see the module table)."""
    try:
        mode, d = parse_option(option)
    except ValueError:
        return False
    if mode is None:
        return may_target(battle, u, t)
    m = machine(u)
    if mode not in modes(battle, u, t) or (d is not None and not math.isfinite(d)):
        return False
    if mode == "shot":
        return d is not None and 0 < d <= m.max_range + geo.EPS
    if mode in ("direct", "indirect"):
        return d is not None and m.min_range - geo.EPS <= d <= m.max_range + geo.EPS
    return d is None


def accepts(battle: Battle, action: Action, legal: list[Action]) -> bool:
    """Whether a ``shoot`` action with an option is legal: its bare shot is legal and the option fits (``Battle.apply``)."""
    if action.kind != "shoot" or action.option is None or action.unit is None or action.target is None:
        return False
    if t9a_on(battle.state, ARTILLERY):
        return False  # T9A.ART.PROFILES: T9A artillery has no fire mode or aim
    if Action("shoot", action.unit, action.target) not in legal:
        return False
    u, t = battle.unit(action.unit), battle.unit(action.target)
    return is_machine(u) and option_ok(battle, u, t, action.option)


def entry_distance(u: UnitState, t: UnitState) -> float:
    """How far along the line of fire from ``u``'s muzzle the line enters ``t``'s footprint (its centre distance if never)."""
    from shapely.geometry import LineString

    mz, direction = _aim_frame(u, t)
    far = templates.along(mz, direction, math.dist(mz, (t.x, t.y)) + 200.0)
    inter = LineString([mz, far]).intersection(space.footprint(t))
    if inter.is_empty:
        return math.dist(mz, (t.x, t.y))
    return min(math.dist(mz, tuple(c)) for g in getattr(inter, "geoms", [inter]) for c in g.coords)


def default_option(battle: Battle, u: UnitState, t: UnitState) -> str:
    """The fire mode and aim used when a ``shoot`` action gives none (DEFAULT).

    Cannon: grapeshot at a one-wound target within 12", else a solid shot
    aimed :data:`CANNON_LEAD` inches short of the target's near edge (at
    least 1"). Stone thrower: direct fire when in LOS (else indirect), aimed
    at the target's centre, within 12..60". Bolt thrower and flame cannon:
    no option.
    """
    m = machine(u)
    ms = modes(battle, u, t)
    if m.kind in ("great_cannon", "light_cannon"):
        if "grapeshot" in ms and t.profile.W == 1 and not is_machine(t):
            return "grapeshot"
        d = min(m.max_range, max(1.0, entry_distance(u, t) - CANNON_LEAD))
        return f"shot:{d:.2f}"
    if m.kind == "stone_thrower":
        mz, _ = _aim_frame(u, t)
        d = min(m.max_range, max(m.min_range, math.dist(mz, (t.x, t.y))))
        return f"{'direct' if 'direct' in ms else 'indirect'}:{d:.2f}"
    return "fire"


# --------------------------------------------------------------------- firing
def fire(battle: Battle, u: UnitState, t: UnitState, option: str | None) -> None:
    """Fire war machine ``u`` at ``t`` (CORE.WM.FIRE_RULES and the machine's own rule; T9A.ART.* with t9a.artillery)."""
    if t9a_on(battle.state, ARTILLERY):
        from battleline.env.rules.t9a import artillery

        artillery.fire(battle, u, t)
        return
    m = machine(u)
    if option is None:
        option = default_option(battle, u, t)
    mode, d = parse_option(option)
    _pivot(battle, u, t)
    battle.emit("CORE.WM.PROFILES", unit=u.uid, machine=m.kind, max_range=m.max_range, min_range=m.min_range,
                strength=m.strength, wounds=m.wounds, toughness=u.profile.T, crew=u.models)
    battle.emit("CORE.WM.FIRE_RULES", unit=u.uid, target=t.uid, machine=m.kind, mode=mode, aim=d, bs=u.profile.BS,
                crew=u.models)
    if mode == "shot":
        cannon_shot(battle, u, t, float(d))  # type: ignore[arg-type]
    elif mode == "grapeshot":
        grapeshot(battle, u, t)
    elif mode in ("direct", "indirect"):
        stone_shot(battle, u, t, float(d), indirect=mode == "indirect")  # type: ignore[arg-type]
    elif m.kind == "bolt_thrower":
        bolt_shot(battle, u, t)
    else:
        flame_shot(battle, u, t)


def _pivot(battle: Battle, u: UnitState, t: UnitState) -> None:
    """CORE.WM.MOVE: the free pivot of the Shooting phase to face the target, when the pivoted footprint is legal."""
    facing = geo.facing_towards((u.x, u.y), (t.x, t.y))
    turn = abs((facing - u.facing + 180.0) % 360.0 - 180.0)
    if turn < 0.5:
        return
    if _pivot_blocked(battle, u, geo.Pose(u.x, u.y, facing)):
        battle.emit("CORE.WM.MOVE", unit=u.uid, pivot=turn, free=True, blocked=True)
        return
    u.facing = facing
    battle.emit("CORE.WM.MOVE", unit=u.uid, pivot=turn, free=True, facing=facing)


PIVOT_GAP = 2 * geo.EPS
"""Inches a pivoted machine's footprint must keep from other units (a turn in place, as movement's turns)."""


def _pivot_blocked(battle: Battle, u: UnitState, pose: geo.Pose) -> bool:
    """Whether ``u`` may not stand at ``pose`` after its free pivot (CORE.WM.MOVE, CORE.MOVE.ONE_INCH at
    :data:`PIVOT_GAP`, CORE.MOVE.TABLE_EDGE): the compiled core's scene answers (:func:`kernel.scene`), the shapely
    reference (:class:`space.Surroundings`) where the core is off, in a siege, or on a tie."""
    from battleline.env.rules import kernel

    scene = kernel.scene(battle.state, u)
    if scene is not None:
        answer = scene.blocked_at(pose.x, pose.y, pose.facing, u.width, u.depth, PIVOT_GAP)
        if answer >= 0:
            return bool(answer)
    poly = space.footprint_at(u, pose)
    return space.Surroundings(battle.state, u).blocked(poly, poly, gap=PIVOT_GAP)


__all__ = [
    "BASE_40MM", "CANNON_LEAD", "CREW_PROFILE", "GRAPESHOT_RANGE", "GRAPESHOT_STRENGTH", "MACHINES", "MACHINE_MOVES",
    "MISFIRE_BLAST_STRENGTH", "Machine", "PIVOTS", "PIVOT_GAP", "SEGMENT_MARGIN", "STONE_PARTIAL", "TEAM_40MM", "TEAM_BY_TYPE",
    "TEAM_MIN_US", "TESTS_ROLLED", "_aim_frame", "_bases_within", "_flaming", "_hits_by_unit", "_others", "accepts", "auto_fails",
    "bolt_shot", "cannon_misfire", "cannon_shot", "crew_lost", "crew_stands", "default_option", "entry_distance", "fight_assaults",
    "fire", "flame_shot", "grapeshot", "in_combat", "is_machine", "legal_shots", "machine", "may_target", "modes", "move_allowance",
    "move_options", "moved", "muzzle", "option_ok", "parse_option", "prepare", "resolve_hits", "silence", "silenced", "stone_damage",
    "stone_misfire", "stone_shot", "team_size"
]
