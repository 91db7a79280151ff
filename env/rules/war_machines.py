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

import contextlib
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from battleline.env.rules import characters, psychology, space, special_rules, tables, templates
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import Action
from battleline.env.rules.casualties import apply_wounds, slay_champion
from battleline.env.rules.dice import HIT, MISFIRE
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.t9a import ARTILLERY
from battleline.env.rules.t9a import on as t9a_on

if TYPE_CHECKING:
    import shapely

    from battleline.env.rules.battle import Battle


# --------------------------------------------------------------------- profiles
@dataclass(frozen=True, slots=True)
class Machine:
    """A machine's profile (CORE.WM.PROFILES). Ranges in inches; ``wounds`` is "1", "d3" or "d6"."""

    kind: str
    max_range: float
    strength: int
    wounds: str
    crew: int
    toughness: int
    fire_rule: str
    min_range: float = 0.0
    centre_strength: int | None = None  # stone thrower: the hole's S (CORE.WM.STONE.DAMAGE)
    centre_wounds: str = "1"
    grapeshot: bool = False
    flaming: bool = False
    misfire: str | None = None  # the misfire table's rule ID


MACHINES: dict[str, Machine] = {
    "great_cannon": Machine("great_cannon", 48.0, 10, "d6", 3, 7, "CORE.WM.CANNON.SHOT", grapeshot=True,
                            misfire="CORE.WM.MISFIRE.CANNON"),
    "light_cannon": Machine("light_cannon", 36.0, 10, "d3", 3, 7, "CORE.WM.CANNON.SHOT", grapeshot=True,
                            misfire="CORE.WM.MISFIRE.CANNON"),
    "stone_thrower": Machine("stone_thrower", 60.0, 3, "1", 3, 7, "CORE.WM.STONE.AIM", min_range=12.0,
                             centre_strength=9, centre_wounds="d6", misfire="CORE.WM.MISFIRE.STONE"),
    "bolt_thrower": Machine("bolt_thrower", 48.0, 6, "d3", 2, 6, "CORE.WM.BOLT"),
    "flame_cannon": Machine("flame_cannon", 12.0, 5, "1", 2, 6, "CORE.WM.FLAME", flaming=True,
                            misfire="CORE.WM.MISFIRE.CANNON"),
}
"""The machines of CORE.WM.PROFILES by missile id (also in :data:`env.rules.tables.MISSILE_WEAPONS`)."""

CREW_PROFILE = {"M": 4, "WS": 3, "BS": 3, "S": 3, "T": 3, "W": 1, "I": 3, "A": 1, "Ld": 7}
"""CORE.WM.PROFILES: the crew, with no armour."""
GRAPESHOT_RANGE = 12.0  # CORE.WM.CANNON.GRAPESHOT
GRAPESHOT_STRENGTH = 5
MISFIRE_BLAST_STRENGTH = 4  # CORE.WM.MISFIRE.CANNON row 1
STONE_PARTIAL = 4  # CORE.WM.STONE.DAMAGE: partly under, a hit on 4+
CANNON_LEAD = 4.0
"""DEFAULT aim of :func:`default_option`: a solid shot lands 4" + N short of where the line enters the target."""
TESTS_ROLLED = frozenset({"T", "Ld"})  # CORE.WM.TESTS


def is_machine(u: UnitState) -> bool:
    """CORE.TYPE.WAR_MACHINE."""
    return u.troop_type == "war_machine"


def machine(u: UnitState) -> Machine:
    """The machine of war machine ``u``. Raises KeyError if it has none."""
    return MACHINES[u.missile]  # type: ignore[index]


def prepare(u: UnitState) -> None:
    """Set-up of a war machine unit: one base (CORE.GEO.BASES); Slow to Fire (CORE.WM.FIRE_RULES; Move or Fire
    comes with its machine's weapon); the machine's T, the crew's kept in ``marks["crew_T"]`` (CORE.WM.PROFILES)."""
    u.files = 1
    if not u.has("slow_to_fire"):
        u.special_rules.append("slow_to_fire")
    if u.missile in MACHINES:
        u.marks["crew_T"] = u.profile.T
        u.profile.T = machine(u).toughness


def crew_lost(u: UnitState) -> int:
    """Crew models lost so far."""
    return max(0, u.start_models - u.models)


def auto_fails(battle: Battle, u: UnitState, test: str) -> bool:
    """CORE.WM.TESTS: whether ``u`` fails a characteristic test ``test`` ("WS", "S", "T", "Ld", ...) automatically."""
    if not is_machine(u) or test in TESTS_ROLLED:
        return False
    battle.emit("CORE.WM.TESTS", unit=u.uid, test=test, failed=True, automatic=True)
    return True


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


# --------------------------------------------------------------------- may not shoot next turn
def _next_own_turn(battle: Battle, side: int) -> int:
    s = battle.state
    if s.active == side:
        return s.turn + 1
    return s.turn if s.active == s.first_player else s.turn + 1


def silence(battle: Battle, u: UnitState, rule: str, **info: object) -> None:
    """The machine may not shoot in its next turn (CORE.WM.PANIC, MISFIRE.*): ``marks["silenced_turn"]``."""
    u.marks["silenced_turn"] = _next_own_turn(battle, u.side)
    battle.emit(rule, unit=u.uid, may_not_shoot_turn=u.marks["silenced_turn"], **info)


def silenced(battle: Battle, u: UnitState) -> bool:
    """Whether the machine may not shoot this turn."""
    s = battle.state
    return s.active == u.side and u.marks.get("silenced_turn") == s.turn


def crew_stands(battle: Battle, u: UnitState, rule: str) -> None:
    """CORE.WM.PANIC: a crew that fails Panic (or Terror) does not flee; the machine may not shoot next turn."""
    silence(battle, u, "CORE.WM.PANIC", cause=rule, flees=False)


# --------------------------------------------------------------------- targets and options
def muzzle(u: UnitState) -> tuple[float, float]:
    """The middle of the machine's front edge (inches)."""
    fl, fr = geo.front_edge(space.pose(u), u.width, u.depth)
    return ((fl[0] + fr[0]) / 2, (fl[1] + fr[1]) / 2)


def _aim_frame(u: UnitState, t: UnitState) -> tuple[tuple[float, float], float]:
    """(muzzle, direction of the line of fire) for ``u`` firing at ``t``, as if ``u`` had pivoted to face ``t``."""
    facing = geo.facing_towards((u.x, u.y), (t.x, t.y)) if (u.x, u.y) != (t.x, t.y) else u.facing
    pose = geo.Pose(u.x, u.y, facing)
    fl, fr = geo.front_edge(pose, u.width, u.depth)
    mz = ((fl[0] + fr[0]) / 2, (fl[1] + fr[1]) / 2)
    if math.dist(mz, (t.x, t.y)) < 1e-9:
        return mz, facing
    return mz, geo.facing_towards(mz, (t.x, t.y))


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


def _others(battle: Battle, u: UnitState) -> list[UnitState]:
    return [o for o in space.alive_units(battle.state) if o.uid != u.uid]


def _roll_wounds(battle: Battle, expr: str, rule: str) -> int:
    if expr == "d6":
        return battle.dice.d6(rule)[0]
    if expr == "d3":
        return battle.dice.d3(rule)
    return int(expr)


def _apply_hit_wounds(battle: Battle, shooter: UnitState, t: UnitState, unsaved_hits: int, expr: str, rule: str) -> int:
    """Wounds of ``unsaved_hits`` multi-wound hits: each hit's wounds go to one model, excess lost (CORE.WOUND.APPLY).

    On a war machine each wound kills one crew model (CORE.WM.SHOT_AT). Returns the models removed.
    """
    killed = 0
    for _ in range(unsaved_hits):
        if not t.in_play:
            break
        n = _roll_wounds(battle, expr, rule)
        k = n if is_machine(t) else min(n, max(1, t.profile.W) - t.wounds_taken)
        killed += apply_wounds(battle, t, k, rule="CORE.SHOOT.CASUALTIES", shooter=shooter.uid, wounds_rolled=n)
    return killed


@contextlib.contextmanager
def _flaming(u: UnitState, on: bool) -> Iterator[None]:
    """The machine's shots are Flaming (CORE.WM.PROFILES: flame cannon) for the save pipeline."""
    added = on and not u.has("flaming")
    if added:
        u.special_rules.append("flaming")
    try:
        yield
    finally:
        if added:
            u.special_rules.remove("flaming")


def _wound_batch(battle: Battle, shooter: UnitState, t: UnitState, hits: int, strength: int, expr: str, rule: str) -> int:
    """To wound and every save for ``hits`` hits on ``t``, then the wounds (CORE.SAVE.PIPELINE). Returns models removed."""
    if hits <= 0 or not t.in_play:
        return 0
    if is_machine(t):
        battle.emit("CORE.WM.SHOT_AT", unit=t.uid, shooter=shooter.uid, hits=hits, toughness=t.profile.T)
    res = special_rules.wound_and_save(battle, shooter, t, hits, strength, wound_rule=rule)
    battle.emit("CORE.SHOOT.TO_WOUND", unit=shooter.uid, target=t.uid, hits=hits, strength=strength,
                needed=tables.to_wound(strength, t.profile.T), wounds=res.wounds, source=rule)
    if expr == "1":
        return special_rules.apply_result(battle, t, res, "CORE.SHOOT.CASUALTIES", shooter=shooter.uid)[1]
    return _apply_hit_wounds(battle, shooter, t, res.unsaved + res.doubled + res.slain, expr, rule)


def resolve_hits(
    battle: Battle,
    shooter: UnitState,
    t: UnitState,
    hits: int,
    strength: int,
    expr: str,
    rule: str,
    slots: list[int] | None = None,
) -> int:
    """Resolve ``hits`` automatic hits on unit ``t`` (CORE.SHOOT.ALLOCATE onwards). Returns models removed.

    Without ``slots`` the hits are shared as shooting hits: joined characters
    by CORE.SHOOT.ALLOCATE, a monster's or chariot's rider on 5–6. With
    ``slots`` (a template's hits, by model slot) a hit on a joined
    character's or the champion's slot takes Look Out Sir! (CORE.SR.LOOK_OUT_SIR);
    a failed roll leaves the hit on that model.
    """
    from battleline.env.rules import monsters

    if hits <= 0 or not t.in_play:
        return 0
    with _flaming(shooter, bool(is_machine(shooter) and MACHINES.get(shooter.missile or "") and machine(shooter).flaming)):
        on_chars: dict[int, int] = {}
        on_champion = 0
        if slots is None:
            hits, on_chars = characters.allocate_hits(battle, t, hits)
        else:
            hits, on_chars, on_champion = _template_allocation(battle, t, slots)
        hits, rider_hits = monsters.split_rider_hits(battle, t, hits)
        killed = 0
        if on_champion:
            killed += _champion_hit(battle, shooter, t, strength, rule)
        killed += _wound_batch(battle, shooter, t, hits, strength, expr, rule)
        for cid, n in on_chars.items():
            _wound_batch(battle, shooter, battle.unit(cid), n, strength, expr, rule)
        if rider_hits:
            monsters.wound_rider(battle, shooter, t, rider_hits, strength, expr, rule)
    return killed


def _template_allocation(battle: Battle, t: UnitState, slots: list[int]) -> tuple[int, dict[int, int], int]:
    """(R&F hits, {character uid: hits}, champion hits) of template hits on ``t``'s model slots."""
    members = characters.members(battle.state, t)
    char_files = {characters.slot_file(t, i): c.uid for i, c in enumerate(members)}
    champion_file = characters.slot_file(t, len(members)) if t.champion and t.models > 1 else None
    front = min(t.files, t.models)
    rnf, on_chars, on_champion = 0, {}, 0
    for slot in slots:
        picked = char_files.get(slot) if slot < front else None
        is_champion = slot < front and slot == champion_file and picked is None
        if picked is None and not is_champion:
            rnf += 1
            continue
        if characters.look_out_sir(battle, t, picked):
            rnf += 1
        elif picked is not None:
            on_chars[picked] = on_chars.get(picked, 0) + 1
        else:
            on_champion += 1
    return rnf, on_chars, on_champion


def _champion_hit(battle: Battle, shooter: UnitState, t: UnitState, strength: int, rule: str) -> int:
    """A template hit the champion kept after a failed Look Out Sir!: if unsaved, he is removed first (CORE.CC.CASUALTIES)."""
    res = special_rules.wound_and_save(battle, shooter, t, 1, strength, wound_rule=rule)
    if not res.any or not t.champion:
        return 0
    slay_champion(battle, t, "CORE.SR.LOOK_OUT_SIR", shooter=shooter.uid)
    return 1


SEGMENT_MARGIN = 1.0
"""Inches beyond a unit's bounding circle within which :func:`_bases_near_segment` builds its model bases (far more
than the EPS/2 a base's edge is widened by in :func:`env.rules.templates.base_at`)."""


def _point_segment_distance(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    """Distance in inches from point ``p`` to the segment ``a``–``b`` (to ``a`` when the segment has no length)."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    k = 0.0 if length2 == 0.0 else min(1.0, max(0.0, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2))
    return math.hypot(p[0] - a[0] - k * dx, p[1] - a[1] - k * dy)


def _bases_near_segment(battle: Battle, u: UnitState, start: tuple[float, float],
                        end: tuple[float, float]) -> list[templates.Base]:
    """The model bases (:func:`env.rules.templates.model_bases`, in unit order) of every unit but ``u`` that may
    touch the segment ``start``–``end`` (inches): a unit's bases lie inside its footprint, so one whose bounding
    circle (:func:`env.rules.space.radius`) stays :data:`SEGMENT_MARGIN` clear of the segment touches it with none,
    and its bases are not built. The same bases a cannon ball's path or landing point can meet as all the units'."""
    out: list[templates.Base] = []
    for o in _others(battle, u):
        if _point_segment_distance((o.x, o.y), start, end) <= space.radius(o) + SEGMENT_MARGIN:
            out.extend(templates.model_bases(o))
    return out


def _bases_within(battle: Battle, u: UnitState, area: shapely.Geometry, dist: float) -> list[templates.Base]:
    """:func:`env.rules.templates.within` ``dist`` inches of ``area`` among the model bases (in unit order) of every
    unit but ``u``: a unit's bases lie inside its footprint, so one whose footprint stays :data:`SEGMENT_MARGIN`
    beyond ``dist`` + EPS of ``area`` has none within it, and its bases are not built."""
    reach = dist + geo.EPS + SEGMENT_MARGIN
    near = [o for o in _others(battle, u) if geo.distance(area, space.footprint(o)) <= reach]
    return templates.within(area, dist, [b for o in near for b in templates.model_bases(o)])


def _hits_by_unit(bases: list[templates.Base]) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for b in bases:
        out.setdefault(b.unit, []).append(b.slot)
    return out


# --------------------------------------------------------------------- cannon
def cannon_shot(battle: Battle, u: UnitState, t: UnitState, aim: float) -> None:
    """CORE.WM.CANNON.SHOT: land at d + N, bounce B; every model slot on the bounce is hit at S10."""
    m = machine(u)
    mz, direction = _aim_frame(u, t)
    n = battle.dice.artillery("CORE.WM.CANNON.SHOT")
    if n == MISFIRE:
        battle.emit("CORE.WM.CANNON.SHOT", unit=u.uid, target=t.uid, aim=aim, roll=MISFIRE)
        cannon_misfire(battle, u)
        return
    p1 = templates.along(mz, direction, aim + int(n))
    bounce = battle.dice.artillery("CORE.WM.CANNON.SHOT")
    if bounce == MISFIRE:
        p2 = p1
        under = templates.base_at(p1, _bases_near_segment(battle, u, p1, p2))
        hit = [] if under is None else [under]
    else:
        p2 = templates.along(p1, direction, int(bounce))
        hit = templates.on_segment(p1, p2, _bases_near_segment(battle, u, p1, p2))
    by_unit = _hits_by_unit(hit)
    battle.emit("CORE.WM.CANNON.SHOT", unit=u.uid, target=t.uid, aim=aim, roll=n, bounce=bounce,
                landing=list(p1), end=list(p2), buried=bounce == MISFIRE,
                hits={str(k): len(v) for k, v in by_unit.items()})
    for uid, slots in by_unit.items():
        resolve_hits(battle, u, battle.unit(uid), len(slots), m.strength, m.wounds, "CORE.WM.CANNON.SHOT")
    psychology.panic_after_shooting(battle, u, list(by_unit))


def grapeshot(battle: Battle, u: UnitState, t: UnitState) -> None:
    """CORE.WM.CANNON.GRAPESHOT: N automatic S5 hits on a target within 12"; MISFIRE: the cannon misfire table."""
    n = battle.dice.artillery("CORE.WM.CANNON.GRAPESHOT")
    battle.emit("CORE.WM.CANNON.GRAPESHOT", unit=u.uid, target=t.uid, roll=n, hits=0 if n == MISFIRE else n)
    if n == MISFIRE:
        cannon_misfire(battle, u)
        return
    resolve_hits(battle, u, t, int(n), GRAPESHOT_STRENGTH, "1", "CORE.WM.CANNON.GRAPESHOT")
    psychology.panic_after_shooting(battle, u, [t.uid])


def cannon_misfire(battle: Battle, u: UnitState) -> None:
    """CORE.WM.MISFIRE.CANNON (cannons, grapeshot, flame cannon): D6.

    1: the machine is removed and every model within D3" takes one S4 hit;
    2–3: one crew model slain and no shooting next turn; 4–5: no shooting next
    turn; 6: no effect.
    """
    rule = "CORE.WM.MISFIRE.CANNON"
    face = battle.dice.d6(rule)[0]
    if face == 1:
        radius = battle.dice.d3(rule)
        area = space.footprint(u)
        bases = _bases_within(battle, u, area, radius)
        by_unit = _hits_by_unit(bases)
        battle.emit(rule, unit=u.uid, roll=face, result="destroyed", radius=radius,
                    hits={str(k): len(v) for k, v in by_unit.items()})
        psychology.destroy(battle, u, rule, misfire=True)
        for uid, slots in by_unit.items():
            resolve_hits(battle, u, battle.unit(uid), len(slots), MISFIRE_BLAST_STRENGTH, "1", rule)
        psychology.panic_after_shooting(battle, u, list(by_unit))
    elif face <= 5:
        _crew_misfire(battle, u, rule, face)
    else:
        battle.emit(rule, unit=u.uid, roll=face, result="no_effect")


# --------------------------------------------------------------------- stone thrower
def stone_shot(battle: Battle, u: UnitState, t: UnitState, aim: float, indirect: bool) -> None:
    """CORE.WM.STONE.AIM / STONE.INDIRECT: aim d" along the line of fire, then the artillery and scatter dice."""
    mz, direction = _aim_frame(u, t)
    rule = "CORE.WM.STONE.INDIRECT" if indirect else "CORE.WM.STONE.AIM"
    point = templates.along(mz, direction, aim)
    n = battle.dice.artillery(rule)
    kind, theta = battle.dice.scatter(rule)
    if n == MISFIRE:
        battle.emit(rule, unit=u.uid, target=t.uid, aim=aim, roll=MISFIRE, scatter=kind)
        stone_misfire(battle, u)
        return
    if kind == HIT:
        moved = max(0, int(n) - u.profile.BS) if indirect else 0
    else:
        moved = int(n)
    centre = templates.along(point, theta, moved)
    battle.emit(rule, unit=u.uid, target=t.uid, aim=aim, aim_point=list(point), roll=n, scatter=kind, direction=theta,
                scattered=moved, centre=list(centre))
    stone_damage(battle, u, centre)


def stone_damage(battle: Battle, u: UnitState, centre: tuple[float, float]) -> dict[str, list[int]]:
    """CORE.WM.STONE.DAMAGE: the hole's model takes S9 with D6 W; wholly under S3; partly under S3 on a 4+.

    Returns the [unit uid, model slot] pairs by kind: "hole" (one or None), "wholly", "partly" (under the
    template) and "partly_hit" (those of "partly" that rolled 4+).
    """
    m = machine(u)
    rule = "CORE.WM.STONE.DAMAGE"
    tpl = templates.small_template(centre)
    bases = templates.bases_near(_others(battle, u), tpl)
    hole = templates.base_at(centre, bases)
    wholly, partly = templates.under(tpl, [b for b in bases if b is not hole])
    partly_hit = []
    if partly:
        faces = battle.dice.d6(rule, len(partly))
        partly_hit = [b for b, f in zip(partly, faces, strict=True) if f >= STONE_PARTIAL]
    report = {
        "hole": None if hole is None else [hole.unit, hole.slot],
        "wholly": [[b.unit, b.slot] for b in wholly],
        "partly": [[b.unit, b.slot] for b in partly],
        "partly_hit": [[b.unit, b.slot] for b in partly_hit],
    }
    battle.emit("CORE.WM.TEMPLATES", unit=u.uid, template="small", centre=list(centre), wholly=len(wholly),
                partly=len(partly))
    battle.emit(rule, unit=u.uid, centre=list(centre), **report)
    struck: list[int] = []
    if hole is not None:
        t = battle.unit(hole.unit)
        resolve_hits(battle, u, t, 1, m.centre_strength or m.strength, m.centre_wounds, rule, slots=[hole.slot])
        struck.append(hole.unit)
    for uid, slots in _hits_by_unit(wholly + partly_hit).items():
        resolve_hits(battle, u, battle.unit(uid), len(slots), m.strength, m.wounds, rule, slots=slots)
        struck.append(uid)
    psychology.panic_after_shooting(battle, u, sorted(set(struck)))
    return report


def stone_misfire(battle: Battle, u: UnitState) -> None:
    """CORE.WM.MISFIRE.STONE: D6. 1 removed; 2–3 crew slain and no shooting next turn; 4–5 no shooting next turn;
    6 the template lands 2D6" from the machine in a scatter direction and is resolved normally."""
    rule = "CORE.WM.MISFIRE.STONE"
    face = battle.dice.d6(rule)[0]
    if face == 1:
        battle.emit(rule, unit=u.uid, roll=face, result="destroyed")
        psychology.destroy(battle, u, rule, misfire=True)
    elif face <= 5:
        _crew_misfire(battle, u, rule, face)
    else:
        dist, _ = battle.dice.sum_d6(rule, 2)
        _, theta = battle.dice.scatter(rule)
        centre = templates.along(muzzle(u), theta, dist)
        battle.emit(rule, unit=u.uid, roll=face, result="wild_shot", distance=dist, direction=theta, centre=list(centre))
        stone_damage(battle, u, centre)


# --------------------------------------------------------------------- bolt thrower
def bolt_shot(battle: Battle, u: UnitState, t: UnitState) -> None:
    """CORE.WM.BOLT: one BS roll with the normal modifiers; then one model per rank (files through a flank) at S6,
    S−1 per rank after the first, until a model survives or S reaches 0. Never misfires (CORE.WM.MISFIRE.BOLT)."""
    from battleline.env.rules import shooting
    from battleline.env.rules.t9a import protections as t9a_pp

    m = machine(u)
    battle.emit("CORE.WM.MISFIRE.BOLT", unit=u.uid, artillery_die=False)
    mod, parts = shooting.to_hit_modifier(battle, u, t, False, False)
    hits = shooting._roll_hits(battle, u.profile.BS, mod, 1, "CORE.WM.BOLT")
    battle.emit("CORE.SHOOT.MODIFIERS", unit=u.uid, target=t.uid, modifier=mod, parts=parts,
                needed=tables.shooting_to_hit(u.profile.BS, mod))
    t9a_pp.log_hard_target(battle, u, t, parts)  # T9A.PP.HARD_TARGET (only in parts when the module plays)
    if not hits:
        battle.emit("CORE.WM.BOLT", unit=u.uid, target=t.uid, hit=False)
        return
    arc = geo.point_arc(*geo.to_local(space.pose(t), *muzzle(u)), t.width / 2, t.depth / 2)
    layers = min(t.files, t.models) if arc in ("left", "right") else t.ranks
    if is_machine(t):
        layers = 1
    passed = []
    for k in range(layers):
        strength = m.strength - k
        if strength <= 0 or not t.in_play:
            break
        killed = resolve_hits(battle, u, t, 1, strength, m.wounds, "CORE.WM.BOLT")
        passed.append({"rank": k + 1, "strength": strength, "slain": killed > 0})
        if not killed:
            break
    battle.emit("CORE.WM.BOLT", unit=u.uid, target=t.uid, hit=True, through=arc, ranks=passed)
    psychology.panic_after_shooting(battle, u, [t.uid])


# --------------------------------------------------------------------- flame cannon
def flame_shot(battle: Battle, u: UnitState, t: UnitState) -> None:
    """CORE.WM.FLAME: the teardrop from the muzzle slides N" forward; if it still touches the target, every model
    it touches takes an automatic S5 Flaming hit; each unit that loses a model takes a Panic test."""
    m = machine(u)
    rule = "CORE.WM.FLAME"
    mz, direction = _aim_frame(u, t)
    n = battle.dice.artillery(rule)
    if n == MISFIRE:
        battle.emit(rule, unit=u.uid, target=t.uid, roll=MISFIRE)
        cannon_misfire(battle, u)
        return
    tip = templates.along(mz, direction, int(n))
    tpl = templates.teardrop(tip, direction)
    bases = templates.bases_near(_others(battle, u), tpl)
    wholly, partly = templates.under(tpl, bases)
    touched = wholly + partly
    battle.emit("CORE.WM.TEMPLATES", unit=u.uid, template="teardrop", tip=list(tip), direction=direction,
                wholly=len(wholly), partly=len(partly))
    if not any(b.unit == t.uid for b in touched):
        battle.emit(rule, unit=u.uid, target=t.uid, roll=n, tip=list(tip), missed=True)
        return
    by_unit = _hits_by_unit(touched)
    battle.emit(rule, unit=u.uid, target=t.uid, roll=n, tip=list(tip), missed=False,
                hits={str(k): len(v) for k, v in by_unit.items()})
    lost: list[int] = []
    for uid, slots in by_unit.items():
        victim = battle.unit(uid)
        if resolve_hits(battle, u, victim, len(slots), m.strength, m.wounds, rule, slots=slots):
            lost.append(uid)
    for uid in lost:
        victim = battle.unit(uid)
        if victim.alive:
            psychology.panic_test(battle, victim, (u.x, u.y), rule, source=u.uid)
    psychology.panic_after_shooting(battle, u, list(by_unit))


# --------------------------------------------------------------------- close combat
TEAM_BY_TYPE = {"infantry": 5, "cavalry": 3}
TEAM_40MM = 2
BASE_40MM = 40 / 25.4
TEAM_MIN_US = 5


def team_size(c: UnitState) -> tuple[int, str]:
    """CORE.WM.ASSAULT_TEAM: (models in the assault team, why)."""
    if c.models <= 1:
        return min(1, c.models), "single model"
    if abs(c.base_w - BASE_40MM) < 1e-6 and abs(c.base_d - BASE_40MM) < 1e-6:
        return min(TEAM_40MM, c.models), "40 mm bases"
    if c.troop_type in TEAM_BY_TYPE and not c.has("skirmishers"):
        return min(TEAM_BY_TYPE[c.troop_type], c.models), c.troop_type
    per_model = max(1, c.unit_strength // max(1, c.models))
    return min(c.models, math.ceil(TEAM_MIN_US / per_model)), f"US {per_model} per model"


@contextlib.contextmanager
def _crew_toughness(m: UnitState) -> Iterator[None]:
    """In close combat the crew's own T counts (CORE.WM.ASSAULT_TEAM: the team fights the crew)."""
    machine_t = m.profile.T
    m.profile.T = int(m.marks.get("crew_T", CREW_PROFILE["T"]))
    try:
        yield
    finally:
        m.profile.T = machine_t


def in_combat(battle: Battle, group: list[Engagement]) -> bool:
    """Whether combat ``group`` involves a war machine."""
    return any(is_machine(battle.unit(i)) for e in group for i in (e.attacker, e.defender))


def fight_assaults(battle: Battle, group: list[Engagement]) -> list[Engagement]:
    """Fight one round of every assault on a war machine in ``group``; return the engagements left to fight normally.

    CORE.WM.ASSAULT_TEAM, CORE.WM.ASSAULT_OUTCOME. Each charger fights the crew
    with its assault team only. In R1 the teams strike first and the crew
    strikes back with its survivors; later, higher I first (equal I:
    simultaneously). Results: the teams count their wounds, +1 for the charge
    and +1 for a standard; the crew counts its wounds. A losing team makes its
    whole unit flee (the Flee! reaction); a losing crew takes a break test and
    its machine is removed if it fails (no pursuit); a draw goes on.
    """
    uids = sorted({i for e in group for i in (e.attacker, e.defender)})
    for mid in uids:
        m = battle.unit(mid)
        if not is_machine(m) or not m.alive:
            continue
        engs = [e for e in battle.state.engagements if mid in (e.attacker, e.defender)]
        if engs:
            _assault_round(battle, m, engs)
    left = battle.state.engagements
    return [e for e in group if e in left and not is_machine(battle.unit(e.attacker)) and not is_machine(battle.unit(e.defender))]


def _assault_round(battle: Battle, m: UnitState, engs: list[Engagement]) -> None:
    from battleline.env.rules import combat

    chargers = [battle.unit(e.attacker if e.defender == m.uid else e.defender) for e in engs]
    chargers = [c for c in chargers if c.alive]
    if not chargers:
        return
    r1 = any(combat.charged_this_turn(battle, e) for e in engs)  # CORE.CC.ROUNDS: not again in the other turn
    charged = {e.attacker for e in engs if combat.charged_this_turn(battle, e)}
    for e in engs:
        if e.defender == m.uid and e.facing != "front":  # CORE.TYPE.WAR_MACHINE: always charged in its front
            battle.emit("CORE.TYPE.WAR_MACHINE", unit=m.uid, charger=e.attacker, contact=e.facing, counts_as="front")
            e.facing = "front"
    teams: dict[int, int] = {}
    for c in chargers:
        size, why = team_size(c)
        teams[c.uid] = size
        battle.emit("CORE.WM.ASSAULT_TEAM", unit=c.uid, machine=m.uid, team=size, basis=why,
                    standard=c.standard, champion=c.champion)
    battle.emit("CORE.CC.SEQUENCE", units=sorted([m.uid] + [c.uid for c in chargers]), round_one=r1,
                charging_side=chargers[0].side if r1 else None, assault=True)
    for u in [m, *chargers]:
        u.flags["fought"] = True
    team_strikes = [combat.Strike(c.uid, m.uid, teams[c.uid], 0, True, c.profile.I) for c in chargers]
    crew_strike = combat.Strike(m.uid, chargers[0].uid, m.models, 0, True, m.profile.I)
    wounds = {"team": 0, "crew": 0}
    used: set[int] = set()

    def roll(st: combat.Strike) -> None:
        u = battle.unit(st.unit)
        if not u.in_play or not battle.unit(st.target).alive or u.fleeing:
            st.info["result"] = None
            return
        if st.unit == m.uid:
            st.fighters = m.models  # the crew alive now strikes
        attacks = combat._attacks(battle, u, st, r1, u.uid in charged, used)
        combat.resolve_strike(battle, st, attacks, r1, charged, set())

    def land(st: combat.Strike) -> None:
        res = st.info.get("result")
        t = battle.unit(st.target)
        if res is None or not res.any or not t.alive:
            return
        inflicted, _ = special_rules.apply_result(battle, t, res, "CORE.CC.CASUALTIES", attacker=st.unit)
        wounds["crew" if st.unit == m.uid else "team"] += inflicted

    with _crew_toughness(m):
        if r1 or m.profile.I < min(c.profile.I for c in chargers):
            order = [team_strikes, [crew_strike]]
        elif m.profile.I > max(c.profile.I for c in chargers):
            order = [[crew_strike], team_strikes]
        else:
            order = [team_strikes + [crew_strike]]
        for step in order:
            for st in step:
                roll(st)
            for st in step:
                land(st)
    for e in engs:
        e.rounds += 1
    _assault_outcome(battle, m, chargers, wounds, r1 and bool(charged))


def _assault_outcome(battle: Battle, m: UnitState, chargers: list[UnitState], wounds: dict[str, int], charge: bool) -> None:
    from battleline.env.rules import combat

    team_parts = {"wounds": wounds["team"]}
    if charge:
        team_parts["charge"] = 1
    if any(c.standard and c.alive for c in chargers):
        team_parts["standard"] = 1
    crew_parts = {"wounds": wounds["crew"]}
    team, crew = sum(team_parts.values()), sum(crew_parts.values())
    live = [c for c in chargers if c.alive]
    info = {"machine": m.uid, "chargers": [c.uid for c in chargers], "team": team_parts, "crew": crew_parts}
    if not m.alive or not live:
        battle.emit("CORE.WM.ASSAULT_OUTCOME", outright=True, winner="team" if live else "crew", **info)
        return
    if team == crew:
        battle.emit("CORE.WM.ASSAULT_OUTCOME", winner=None, result="draw", **info)
        return
    if team > crew:
        diff = team - crew
        held = combat.break_test(battle, m, diff, live)
        battle.emit("CORE.WM.ASSAULT_OUTCOME", winner="team", difference=diff, crew_broke=not held, **info)
        if not held:
            psychology.destroy(battle, m, "CORE.WM.ASSAULT_OUTCOME", crew_broke=True, pursuit=False)
        return
    battle.emit("CORE.WM.ASSAULT_OUTCOME", winner="crew", difference=crew - team, **info)
    for c in live:
        if c.alive and not c.fleeing:
            psychology.flee(battle, c, (m.x, m.y), "CORE.WM.ASSAULT_OUTCOME", reaction="flee", machine=m.uid)


def _crew_misfire(battle: Battle, u: UnitState, rule: str, face: int) -> None:
    """Misfire rows 2–3 (one crew slain, no shooting next turn) and 4–5 (no shooting next turn).

    Shared by CORE.WM.MISFIRE.CANNON and CORE.WM.MISFIRE.STONE.
    """
    if face <= 3:
        battle.emit(rule, unit=u.uid, roll=face, result="crew_slain")
        apply_wounds(battle, u, 1, rule=rule)
        if u.alive:
            silence(battle, u, rule)
    else:
        battle.emit(rule, unit=u.uid, roll=face, result="no_shooting_next_turn")
        silence(battle, u, rule)
