"""War machine shots: each machine's firing sequence, its templates, misfires and hits (CORE.WM.CANNON.*,
CORE.WM.STONE.*, CORE.WM.BOLT, CORE.WM.FLAME, CORE.WM.MISFIRE.*, CORE.WM.TEMPLATES, CORE.WM.SHOT_AT).

:func:`env.rules.war_machines.fire` picks the fire mode and aim and calls one
of :func:`cannon_shot`, :func:`grapeshot`, :func:`stone_shot`,
:func:`bolt_shot` or :func:`flame_shot`; they roll the artillery and scatter
dice, lay the line or template over the model bases (:mod:`env.rules.templates`)
and resolve the hits on every unit under it (:func:`resolve_hits`: to wound,
saves, multi-wound hits, Look Out Sir! for a template's hits). A MISFIRE
goes to the machine's misfire table (:func:`cannon_misfire`,
:func:`stone_misfire`). Distances in inches, directions in degrees.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from battleline.env.rules import characters, psychology, space, special_rules, tables, templates
from battleline.env.rules import geometry as geo
from battleline.env.rules.casualties import apply_wounds, slay_champion
from battleline.env.rules.dice import HIT, MISFIRE
from battleline.env.rules.state import UnitState
from battleline.env.rules.war_machine_profiles import (
    GRAPESHOT_STRENGTH,
    MACHINES,
    MISFIRE_BLAST_STRENGTH,
    STONE_PARTIAL,
    _aim_frame,
    is_machine,
    machine,
    muzzle,
    silence,
)

if TYPE_CHECKING:
    import shapely

    from battleline.env.rules.battle import Battle


# --------------------------------------------------------------------- hits
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
