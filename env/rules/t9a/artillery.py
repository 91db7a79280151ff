"""T9A artillery (RULESET.md §6.1: T9A.ART.*, T9A.SHAKEN; CFG.SIEGE_T9A), module ``t9a.artillery``.

With the module on, a war machine fires by the T9A rules instead of the CORE.WM firing, damage and
misfire rules (CFG.EXCLUSIVE); its crew, movement, close combat and Panic stay CORE.WM. The core
machine ids map to T9A profiles (:data:`MACHINE_PROFILES`): ``great_cannon`` and ``light_cannon`` →
cannon, ``stone_thrower`` → catapult, ``bolt_thrower`` → bolt thrower, ``flame_cannon`` →
flamethrower; a unit type's ``t9a: {artillery: ...}`` overrides it (the only way to a volley gun).

Firing is the plain ``Action("shoot", machine, target)`` (no option: T9A artillery has no aim):

============ ======================================================================= ====================
profile      resolution                                                              rule
============ ======================================================================= ====================
bolt thrower one to-hit roll; a hit pierces ranks (S6 AP3, Multiple Wounds (D3))     T9A.ART.RANK_PIERCING
cannon       one to-hit roll (natural 1: misfire); a hit pierces ranks (S10 AP10,    T9A.ART.HIT,
             Multiple Wounds (D6))                                                   T9A.ART.RANK_PIERCING
catapult     one to-hit roll (natural 1: misfire); hit: Area Attack (3), one hit at   T9A.ART.CATAPULT
             [S9 AP6 Multiple Wounds (D3)]; miss: the Partial Hit roll
flamethrower a D6 (1: misfire at −1); D6 hits + D3 per rank after the first          T9A.ART.FLAMETHROWER
volley gun   3D6 shots (one 6: −1 to hit; two or more: misfire), each rolls to hit   T9A.ART.VOLLEY_GUN
============ ======================================================================= ====================

Dice order (for scripted tests): the to-hit D6 (a second D6 for a need of 7–9 after a 6); the
catapult's Partial Hit D6; the flamethrower's D6, then its hits' D6 and D3s; the volley gun's 3D6,
then its to-hit dice; then per batch of hits the to-wound, armour and ward dice
(:func:`env.rules.special_rules.wound_and_save`) and the Multiple Wounds dice
(:func:`env.rules.t9a.attributes.multiple_wounds`). A misfire rolls its D6, then the explosion's D6.

DEFAULT readings (RULESET.md and variant_t9a.md leave these open):

* every T9A shot needs line of sight and the target within the profile's range (the catapult also
  at least 12"); the normal modifiers are CORE.SHOOT.MODIFIERS with long range at half the T9A range;
  a cannon's +1 against an all-Gigantic unit comes on top of CORE.SR.LARGE_TARGET;
* Rank Piercing runs as CORE.WM.BOLT: one hit per rank (per file through a flank), S−1 per rank
  after the first, until a model survives or S reaches 0;
* the catapult's [bracketed] values are those of one of its Area Attack hits (as the core stone
  thrower's hole); the others use the plain S and AP; the Partial Hit has no bracketed hit;
* the flamethrower's arc is the arc of the target holding the machine's centre; short range is half
  the profile's range (A10);
* Jammed (misfire 3–4) on a War Machine: Shaken until the end of its controller's next player turn
  (the one whose Shooting phase the weapon would have skipped; A15); Shattered (1–2): never shoots
  again; Malfunction (5–6): one crew model lost, no saves; Explosion (≤0): S5 AP2 hit on every model
  within D6" of the machine, which is removed;
* Flaming follows the battle's save pipeline (CORE.SR.FLAMING there: no armour save);
* on a war machine target each unsaved wound after Multiple Wounds kills one crew model
  (CORE.WM.SHOT_AT: the machine counts as one model with its crew as Wounds);
* with t9a.equipment the armour save against artillery is 7 − (Armour − AP) (T9A.ARMOUR.VALUE),
  without it the core save with the core S modifier (AP unused);
* castle elements (CFG.SIEGE_T9A) are struck by cannons, bolt throwers and catapults only, without a
  double charge (it needs the artillery dice T9A replaces).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from battleline.env.rules import characters, monsters, psychology, space, special_rules, tables, templates
from battleline.env.rules import geometry as geo
from battleline.env.rules import war_machines as wm
from battleline.env.rules.actions import Action
from battleline.env.rules.casualties import apply_wounds
from battleline.env.rules.t9a import ARTILLERY, on
from battleline.env.rules.t9a.attributes import area_attack_hits, multiple_wounds
from battleline.env.rules.t9a.conditions import size

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.siege.castle import CastleElement
    from battleline.env.rules.state import UnitState


# --------------------------------------------------------------------- profiles (T9A.ART.PROFILES)
@dataclass(frozen=True, slots=True)
class Profile:
    """A T9A artillery profile (T9A.ART.PROFILES). Ranges in inches; ``wounds`` is the Multiple Wounds
    parameter ("" for none, "d3", "d6"); ``heavy_*`` are the catapult's [bracketed] values, ``short_*``
    the flamethrower's {braced} short-range values."""

    kind: str
    max_range: float
    strength: int
    ap: int
    wounds: str = ""
    min_range: float = 0.0
    rank_piercing: bool = False
    area_attack: int = 0
    heavy_strength: int | None = None
    heavy_ap: int | None = None
    heavy_wounds: str = ""
    short_strength: int | None = None
    short_ap: int | None = None
    short_wounds: str = ""
    flaming: bool = False
    volley_dice: int = 0
    ignores_cover: bool = False
    misfire_on_one: bool = False


PROFILES: dict[str, Profile] = {
    "bolt_thrower": Profile("bolt_thrower", 48.0, 6, 3, "d3", rank_piercing=True),
    "cannon": Profile("cannon", 48.0, 10, 10, "d6", rank_piercing=True, ignores_cover=True, misfire_on_one=True),
    "catapult": Profile("catapult", 60.0, 4, 1, min_range=12.0, area_attack=3, heavy_strength=9, heavy_ap=6,
                        heavy_wounds="d3", ignores_cover=True, misfire_on_one=True),
    "flamethrower": Profile("flamethrower", 12.0, 4, 1, short_strength=5, short_ap=2, short_wounds="d3",
                            flaming=True),
    "volley_gun": Profile("volley_gun", 24.0, 5, 2, volley_dice=3),
}
"""T9A.ART.PROFILES by profile name (config.ARTILLERY). All have Reload! (move or fire)."""
MACHINE_PROFILES: dict[str, str] = {
    "great_cannon": "cannon", "light_cannon": "cannon", "stone_thrower": "catapult",
    "bolt_thrower": "bolt_thrower", "flame_cannon": "flamethrower",
}
"""The T9A profile of each core machine (env.rules.war_machines.MACHINES) when the unit type names none."""
REPLACED: tuple[str, ...] = (
    "CORE.WM.CANNON.SHOT", "CORE.WM.CANNON.GRAPESHOT", "CORE.WM.STONE.AIM", "CORE.WM.STONE.INDIRECT",
    "CORE.WM.STONE.DAMAGE", "CORE.WM.BOLT", "CORE.WM.FLAME", "CORE.WM.TEMPLATES", "CORE.WM.MISFIRE.CANNON",
    "CORE.WM.MISFIRE.STONE", "CORE.WM.MISFIRE.BOLT",
)
"""The CORE.WM firing, damage and misfire rules T9A artillery replaces (CFG.EXCLUSIVE)."""
FLAME_EXTRA_DICE = 4  # T9A.ART.FLAMETHROWER: at most 4 extra D3 (A9)
FLAME_MISFIRE_MODIFIER = -1
EXPLOSION_STRENGTH, EXPLOSION_AP = 5, 2  # T9A.ART.MISFIRE ≤0
ELEMENT_KINDS = frozenset({"cannon", "bolt_thrower", "catapult"})
"""The profiles that strike castle elements (CFG.SIEGE_T9A)."""


@dataclass(frozen=True, slots=True)
class Shot:
    """The values one batch of hits is resolved with: S, AP, Multiple Wounds ("" none), Flaming."""

    strength: int
    ap: int
    wounds: str = ""
    flaming: bool = False


def plays(battle: Battle, u: UnitState) -> bool:
    """Whether war machine ``u`` fires by the T9A rules: the module is on and it has a T9A profile."""
    return on(battle.state, ARTILLERY) and wm.is_machine(u) and profile_name(u) is not None


def profile_name(u: UnitState) -> str | None:
    """The T9A profile of ``u``: its unit type's ``t9a.artillery``, else its core machine's
    (:data:`MACHINE_PROFILES`); None if neither."""
    given = u.t9a.get("artillery")
    if given:
        return str(given)
    return MACHINE_PROFILES.get(u.missile or "")


def profile(u: UnitState) -> Profile:
    """The T9A profile ``u`` fires with (T9A.ART.PROFILES). Raises KeyError if it has none."""
    name = profile_name(u)
    if name is None:
        raise KeyError(f"unit {u.uid} has no T9A artillery profile")
    return PROFILES[name]


# --------------------------------------------------------------------- Shaken and Shattered
def _turn_index(battle: Battle) -> int:
    s = battle.state
    return 2 * s.turn + (0 if s.active == s.first_player else 1)


def shaken(battle: Battle, u: UnitState) -> bool:
    """T9A.SHAKEN: whether ``u`` is Shaken now (``marks["t9a_shaken_until"]``, a player-turn index)."""
    until = u.marks.get("t9a_shaken_until")
    return until is not None and _turn_index(battle) <= until


def forbids(battle: Battle, u: UnitState, what: str) -> bool:
    """T9A.SHAKEN with the module on: a Shaken unit may not ``what`` ("shoot", "march" or "charge");
    a Shattered weapon (T9A.ART.MISFIRE 1–2) never shoots again."""
    if not on(battle.state, ARTILLERY):
        return False
    if what == "shoot" and u.marks.get("t9a_shattered"):
        return True
    return shaken(battle, u)


def make_shaken(battle: Battle, u: UnitState) -> int:
    """T9A.SHAKEN from Jammed (T9A.ART.MISFIRE 3–4): ``u`` is Shaken until the end of its controller's next
    player turn (a player-turn index 2 × turn + 0 for the first player, 1 for the second); returns that index."""
    now = _turn_index(battle)
    own_now = battle.state.active == u.side
    until = now + 2 if own_now else now + 1
    u.marks["t9a_shaken_until"] = until
    return until


# --------------------------------------------------------------------- targets
def _in_reach(battle: Battle, u: UnitState, t: UnitState, p: Profile) -> bool:
    if not wm._basic_target(battle, u, t):
        return False
    dist = space.unit_distance(u, t)
    if dist > p.max_range + geo.EPS:
        return False
    if p.min_range and dist < p.min_range - geo.EPS:
        return False
    return space.line_of_sight(battle.state, u, t)


def legal_shots(battle: Battle, u: UnitState) -> list[Action]:
    """The legal ``shoot`` actions of war machine ``u`` under T9A artillery: one per enemy unit in the
    profile's range and in sight (T9A.ART.PROFILES); in a siege also its castle-element shots."""
    if forbids(battle, u, "shoot"):
        return []
    p = profile(u)
    acts = [Action("shoot", u.uid, t.uid) for t in space.alive_units(battle.state, 1 - u.side) if _in_reach(battle, u, t, p)]
    if battle.state.castle and p.kind in ELEMENT_KINDS:
        from battleline.env.rules.siege.orders import element_shots

        acts += element_shots(battle, u)
    return acts


# --------------------------------------------------------------------- firing
def _announce(battle: Battle, u: UnitState, p: Profile) -> None:
    """T9A.ART.PROFILES for this shot (the battle's start logged CFG.EXCLUSIVE: :mod:`env.rules.t9a.start`)."""
    battle.emit("T9A.ART.PROFILES", unit=u.uid, profile=p.kind, machine=u.missile, range=p.max_range,
                min_range=p.min_range, strength=p.strength, ap=p.ap, multiple_wounds=p.wounds or None,
                rank_piercing=p.rank_piercing, area_attack=p.area_attack or None, reload=True, bs=u.profile.BS,
                crew=u.models)


def fire(battle: Battle, u: UnitState, t: UnitState) -> None:
    """Fire war machine ``u`` at unit ``t`` by its T9A profile (T9A.ART.*; the module table)."""
    p = profile(u)
    _announce(battle, u, p)
    wm._pivot(battle, u, t)
    if p.kind in ("bolt_thrower", "cannon"):
        _piercing_shot(battle, u, t, p)
    elif p.kind == "catapult":
        _catapult(battle, u, t, p)
    elif p.kind == "flamethrower":
        _flamethrower(battle, u, t, p)
    else:
        _volley_gun(battle, u, t, p)


def hit_modifier(battle: Battle, u: UnitState, t: UnitState, p: Profile) -> tuple[int, dict[str, int]]:
    """T9A.ART.HIT: the normal modifiers (CORE.SHOOT.MODIFIERS) with long range at half the profile's
    range; no cover for cannons and catapults; +1 for a cannon against a unit that is all Gigantic
    (joined characters included; T9A.SIZE). Returns (total, parts)."""
    from battleline.env.rules import shooting

    _, parts = shooting.to_hit_modifier(battle, u, t, False, False)
    parts.pop("long_range", None)
    if space.unit_distance(u, t) > p.max_range / 2 + geo.EPS:
        parts["long_range"] = -1
    if p.ignores_cover and parts.pop("cover", None) is not None:
        parts["cover_ignored"] = 0
    if p.kind == "cannon" and all(size(x) == "gigantic" for x in [t, *characters.members(battle.state, t)]):
        parts["all_gigantic"] = 1
    from battleline.env.rules.t9a.protections import log_hard_target

    log_hard_target(battle, u, t, parts)  # T9A.PP.HARD_TARGET (in parts only when t9a.protections plays)
    return sum(parts.values()), parts


def roll_to_hit(battle: Battle, bs: int, mod: int, rule: str = "T9A.ART.HIT") -> tuple[bool, int, int]:
    """One artillery to-hit roll (CORE.SHOOT.TO_HIT table): (hit, natural face, score needed).

    A need of 7–9 takes a second D6 after a 6; a natural 1 always misses."""
    needed = tables.shooting_to_hit(bs, mod)
    face = battle.dice.d6(rule)[0]
    second = battle.dice.d6(rule)[0] if 6 < needed < 10 and face == 6 else None
    return tables.shot_hits(needed, face, second), face, needed


def _hit_roll(battle: Battle, u: UnitState, t: UnitState, p: Profile) -> tuple[bool, int, bool]:
    """T9A.ART.HIT for a single-shot weapon: (hit, natural face, misfired)."""
    mod, parts = hit_modifier(battle, u, t, p)
    hit, face, needed = roll_to_hit(battle, u.profile.BS, mod)
    misfired = p.misfire_on_one and face == 1
    battle.emit("T9A.ART.HIT", unit=u.uid, target=t.uid, profile=p.kind, bs=u.profile.BS, modifier=mod, parts=parts,
                needed=needed, roll=face, hit=hit, misfire=misfired)
    return hit, face, misfired


def _piercing_shot(battle: Battle, u: UnitState, t: UnitState, p: Profile) -> None:
    """Bolt thrower and cannon: one to-hit roll (a cannon's natural 1 misfires), then Rank Piercing."""
    hit, _, misfired = _hit_roll(battle, u, t, p)
    if misfired:
        misfire(battle, u)
        return
    if hit:
        rank_piercing(battle, u, t, Shot(p.strength, p.ap, p.wounds))
        psychology.panic_after_shooting(battle, u, [t.uid])


def _through_flank(u: UnitState, t: UnitState) -> str:
    """The arc of ``t`` its shooter's muzzle (or, for the flamethrower, centre) stands in."""
    mx, my = wm.muzzle(u)
    return geo.point_arc(*geo.to_local(space.pose(t), mx, my), t.width / 2, t.depth / 2)


def rank_piercing(battle: Battle, u: UnitState, t: UnitState, shot: Shot) -> list[dict[str, Any]]:
    """T9A.ART.RANK_PIERCING: the hit strikes one model in the nearest rank (file through a flank); if it
    removes that model it goes on into the next at S−1, until a model survives or S reaches 0 (as
    CORE.WM.BOLT). A war machine target has one rank. Returns the ranks passed, as emitted."""
    arc = _through_flank(u, t)
    layers = 1 if wm.is_machine(t) else (min(t.files, t.models) if arc in ("left", "right") else t.ranks)
    passed: list[dict[str, Any]] = []
    for k in range(layers):
        strength = shot.strength - k
        if strength <= 0 or not t.in_play:
            break
        killed = land(battle, u, t, 1, Shot(strength, shot.ap, shot.wounds, shot.flaming), "T9A.ART.RANK_PIERCING")
        passed.append({"rank": k + 1, "strength": strength, "slain": killed > 0})
        if not killed:
            break
    battle.emit("T9A.ART.RANK_PIERCING", unit=u.uid, target=t.uid, through=arc, ranks=passed)
    return passed


def _area_attack(battle: Battle, u: UnitState, t: UnitState, x: int, front: int) -> int:
    """The hits of the catapult's Area Attack (X) on ``t`` (T9A.AA.AREA_ATTACK, emitted with its terms)."""
    hits = area_attack_hits(x, front, t.ranks)
    battle.emit("T9A.AA.AREA_ATTACK", unit=u.uid, target=t.uid, x=x, files=front, ranks=t.ranks, hits=hits)
    return hits


def _catapult(battle: Battle, u: UnitState, t: UnitState, p: Profile) -> None:
    """T9A.ART.CATAPULT: a hit is Area Attack (3) with one [S9 AP6 Multiple Wounds (D3)] hit; a miss that
    is no natural 1 rolls the Partial Hit (misfires ignored): Area Attack (2) at ⌈S/2⌉, ⌈AP/2⌉."""
    hit, _, misfired = _hit_roll(battle, u, t, p)
    if misfired:
        misfire(battle, u)
        return
    front = min(t.files, t.models)
    if hit:
        hits = _area_attack(battle, u, t, p.area_attack, front)
        battle.emit("T9A.ART.CATAPULT", unit=u.uid, target=t.uid, partial=False, area_attack=p.area_attack,
                    hits=hits, bracketed_hits=min(1, hits), strength=p.strength, ap=p.ap,
                    bracketed_strength=p.heavy_strength, bracketed_ap=p.heavy_ap)
        if hits:
            land(battle, u, t, 1, Shot(p.heavy_strength or p.strength, p.heavy_ap or p.ap, p.heavy_wounds),
                 "T9A.ART.CATAPULT")
            land(battle, u, t, hits - 1, Shot(p.strength, p.ap), "T9A.ART.CATAPULT")
        psychology.panic_after_shooting(battle, u, [t.uid])
        return
    mod, _ = hit_modifier(battle, u, t, p)
    second, face, needed = roll_to_hit(battle, u.profile.BS, mod, "T9A.ART.CATAPULT")
    x = p.area_attack - 1
    hits = _area_attack(battle, u, t, x, front) if second else 0
    strength, ap = math.ceil(p.strength / 2), math.ceil(p.ap / 2)
    battle.emit("T9A.ART.CATAPULT", unit=u.uid, target=t.uid, partial=True, roll=face, needed=needed, hit=second,
                area_attack=x, hits=hits, strength=strength, ap=ap)
    if hits:
        land(battle, u, t, hits, Shot(strength, ap), "T9A.ART.CATAPULT")
        psychology.panic_after_shooting(battle, u, [t.uid])


def flame_hits(battle: Battle, u: UnitState, t: UnitState) -> tuple[int, str, list[int]]:
    """T9A.ART.FLAMETHROWER: (hits, arc, dice): D6 + D3 per rank after the first (per file through a
    flank), at most 4 extra D3, never more than the target's models. The arc is the one holding the
    flamethrower's centre."""
    arc = geo.point_arc(*geo.to_local(space.pose(t), u.x, u.y), t.width / 2, t.depth / 2)
    layers = min(t.files, t.models) if arc in ("left", "right") else t.ranks
    if wm.is_machine(t):
        layers = 1
    rule = "T9A.ART.FLAMETHROWER"
    dice = [battle.dice.d6(rule)[0]]
    dice += [battle.dice.d3(rule) for _ in range(min(FLAME_EXTRA_DICE, max(0, layers - 1)))]
    return min(sum(dice), t.models), arc, dice


def _flamethrower(battle: Battle, u: UnitState, t: UnitState, p: Profile) -> None:
    """T9A.ART.FLAMETHROWER: a D6 instead of a to-hit roll (1: misfire at −1), then :func:`flame_hits`
    Flaming hits, with the {braced} S, AP and Multiple Wounds within half range (short range)."""
    rule = "T9A.ART.FLAMETHROWER"
    face = battle.dice.d6(rule)[0]
    if face == 1:
        battle.emit(rule, unit=u.uid, target=t.uid, roll=face, misfire=True)
        misfire(battle, u, FLAME_MISFIRE_MODIFIER)
        return
    dist = space.unit_distance(u, t)
    short = dist <= p.max_range / 2 + geo.EPS
    shot = Shot(p.short_strength or p.strength, p.short_ap or p.ap, p.short_wounds, True) if short else Shot(
        p.strength, p.ap, p.wounds, True)
    hits, arc, dice = flame_hits(battle, u, t)
    battle.emit(rule, unit=u.uid, target=t.uid, roll=face, misfire=False, arc=arc, dice=dice, hits=hits,
                short_range=short, distance=round(dist, 3), strength=shot.strength, ap=shot.ap,
                multiple_wounds=shot.wounds or None)
    land(battle, u, t, hits, shot, rule)
    psychology.panic_after_shooting(battle, u, [t.uid])


def _volley_gun(battle: Battle, u: UnitState, t: UnitState, p: Profile) -> None:
    """T9A.ART.VOLLEY_GUN: roll the 3D6 shot dice; one natural 6 gives −1 to hit, two or more misfire
    and nothing is fired; otherwise each shot rolls to hit (T9A.ART.HIT)."""
    from battleline.env.rules import shooting

    rule = "T9A.ART.VOLLEY_GUN"
    dice = battle.dice.d6(rule, p.volley_dice)
    sixes = sum(1 for f in dice if f == 6)
    battle.emit(rule, unit=u.uid, target=t.uid, dice=dice, shots=sum(dice), sixes=sixes, misfire=sixes >= 2,
                modifier=-1 if sixes == 1 else 0)
    if sixes >= 2:
        misfire(battle, u)
        return
    mod, parts = hit_modifier(battle, u, t, p)
    if sixes == 1:
        parts["volley_gun_six"] = -1
        mod -= 1
    hits = shooting._roll_hits(battle, u.profile.BS, mod, sum(dice), "T9A.ART.HIT")
    battle.emit("T9A.ART.HIT", unit=u.uid, target=t.uid, profile=p.kind, bs=u.profile.BS, modifier=mod, parts=parts,
                needed=tables.shooting_to_hit(u.profile.BS, mod), shots=sum(dice), hits=hits, misfire=False)
    land(battle, u, t, hits, Shot(p.strength, p.ap, p.wounds), rule)
    psychology.panic_after_shooting(battle, u, [t.uid])


# --------------------------------------------------------------------- wounds and saves
def _wound(battle: Battle, u: UnitState, t: UnitState, hits: int, shot: Shot, rule: str) -> int:
    """To wound, saves and wounds of ``hits`` hits on ``t`` (one unit, no allocation). Returns models removed."""
    if hits <= 0 or not t.in_play:
        return 0
    if wm.is_machine(t):
        battle.emit("CORE.WM.SHOT_AT", unit=t.uid, shooter=u.uid, hits=hits, toughness=t.profile.T)
    res = special_rules.wound_and_save(battle, u, t, hits, shot.strength, wound_rule=rule,
                                       ap=shot.ap)  # ap: T9A.ARMOUR.VALUE with t9a.equipment
    battle.emit(rule, unit=u.uid, target=t.uid, hits=hits, strength=shot.strength, ap=shot.ap,
                to_wound=tables.to_wound(shot.strength, t.profile.T), wounds=res.wounds, armour_needed=res.armour_needed,
                unsaved=res.unsaved + res.doubled + res.slain, multiple_wounds=shot.wounds or None)
    if not shot.wounds:
        return special_rules.apply_result(battle, t, res, "CORE.SHOOT.CASUALTIES", shooter=u.uid)[1]
    unsaved = res.unsaved + res.doubled + res.slain
    if wm.is_machine(t):
        per_model, left = t.models, t.models
    else:
        per_model = max(1, t.profile.W)
        left = per_model - t.wounds_taken
    dealt = multiple_wounds(battle, shot.wounds, unsaved, per_model, left, t.uid)
    return apply_wounds(battle, t, dealt, rule="CORE.SHOOT.CASUALTIES", shooter=u.uid)


def land(battle: Battle, u: UnitState, t: UnitState, hits: int, shot: Shot, rule: str) -> int:
    """Resolve ``hits`` artillery hits of ``u`` on unit ``t``: joined characters by CORE.SHOOT.ALLOCATE, a
    rider on 5–6, then to wound, saves (T9A.ARMOUR.VALUE with t9a.equipment, else the core's) and Multiple Wounds (T9A.AA.MULTIPLE_WOUNDS).
    Returns the models removed from ``t``."""
    if hits <= 0 or not t.in_play:
        return 0
    with wm._flaming(u, shot.flaming):
        hits, on_chars = characters.allocate_hits(battle, t, hits)
        hits, rider_hits = monsters.split_rider_hits(battle, t, hits)
        killed = _wound(battle, u, t, hits, shot, rule)
        for cid, n in on_chars.items():
            _wound(battle, u, battle.unit(cid), n, shot, rule)
        if rider_hits:
            monsters.wound_rider(battle, u, t, rider_hits, shot.strength, shot.wounds or "1", rule, ap=shot.ap)
    return killed


# --------------------------------------------------------------------- misfires (T9A.ART.MISFIRE)
def misfire(battle: Battle, u: UnitState, modifier: int = 0) -> str:
    """T9A.ART.MISFIRE: D6 + ``modifier`` (never re-rolled). ≤0 Explosion: every model within D6" takes an
    S5 AP2 hit and the machine is removed; 1–2 Shattered: it never shoots again; 3–4 Jammed: Shaken
    (T9A.SHAKEN) until the end of its controller's next turn; 5–6 Malfunction: one crew model loses
    1 W, no saves. Returns the result's name."""
    rule = "T9A.ART.MISFIRE"
    face = battle.dice.d6(rule)[0]
    value = face + modifier
    if value <= 0:
        radius = battle.dice.d6(rule)[0]
        area = space.footprint(u)
        bases = templates.within(area, radius, [b for o in wm._others(battle, u) for b in templates.model_bases(o)])
        by_unit = wm._hits_by_unit(bases)
        battle.emit(rule, unit=u.uid, roll=face, modifier=modifier, value=value, result="explosion", radius=radius,
                    hits={str(k): len(v) for k, v in by_unit.items()})
        psychology.destroy(battle, u, rule, misfire=True)
        for uid, slots in by_unit.items():
            land(battle, u, battle.unit(uid), len(slots), Shot(EXPLOSION_STRENGTH, EXPLOSION_AP), rule)
        psychology.panic_after_shooting(battle, u, list(by_unit))
        return "explosion"
    if value <= 2:
        u.marks["t9a_shattered"] = True
        battle.emit(rule, unit=u.uid, roll=face, modifier=modifier, value=value, result="shattered")
        return "shattered"
    if value <= 4:
        until = make_shaken(battle, u)
        battle.emit(rule, unit=u.uid, roll=face, modifier=modifier, value=value, result="jammed")
        battle.emit("T9A.SHAKEN", unit=u.uid, cause=rule, until_turn=until // 2,
                    until_player=u.side)
        return "jammed"
    battle.emit(rule, unit=u.uid, roll=face, modifier=modifier, value=value, result="malfunction", wounds=1)
    apply_wounds(battle, u, 1, rule=rule)
    return "malfunction"


# --------------------------------------------------------------------- castle elements (CFG.SIEGE_T9A)
def strikes_elements(u: UnitState) -> bool:
    """Whether ``u``'s T9A profile strikes castle elements (cannon, bolt thrower, catapult)."""
    name = profile_name(u)
    return name is not None and PROFILES[name].kind in ELEMENT_KINDS


def _element_modifier(p: Profile, mz: tuple[float, float], e: CastleElement) -> tuple[int, dict[str, int]]:
    """The to-hit modifiers against a castle element: long range only (the T9A artillery ignore cover)."""
    from shapely.geometry import Point

    parts = {"long_range": -1} if e.shape().distance(Point(mz)) > p.max_range / 2 + geo.EPS else {}
    return sum(parts.values()), parts


def fire_at_element(battle: Battle, u: UnitState, e: CastleElement) -> str:
    """CFG.SIEGE_T9A: a T9A artillery shot at castle element ``e`` (the machine already facing it).

    A T9A to-hit roll decides whether it lands (cannon and catapult misfire on a natural 1);
    the damage base is S + the rolled Multiple Wounds; a catapult's hit uses its [bracketed] S and
    Multiple Wounds, its Partial Hit the halved S and no Multiple Wounds. A cannon's or bolt thrower's
    shot at a gate strikes the gate on 5–6, else its wall section (SIEGE.DMG.GATE_SHOTS).
    Returns the damage row, "misfire" or "missed"."""
    from battleline.env.rules.siege import damage as dmg
    from battleline.env.rules.siege.castle import element

    p = profile(u)
    _announce(battle, u, p)
    mz = wm.muzzle(u)
    mod, parts = _element_modifier(p, mz, e)
    hit, face, needed = roll_to_hit(battle, u.profile.BS, mod)
    misfired = p.misfire_on_one and face == 1
    battle.emit("T9A.ART.HIT", unit=u.uid, element=e.id, profile=p.kind, bs=u.profile.BS, modifier=mod, parts=parts,
                needed=needed, roll=face, hit=hit, misfire=misfired)
    if misfired:
        misfire(battle, u)
        return "misfire"
    strength, wounds, partial = p.heavy_strength or p.strength, p.heavy_wounds or p.wounds, False
    if not hit:
        if p.kind != "catapult":
            battle.emit("CFG.SIEGE_T9A", unit=u.uid, element=e.id, hit=False)
            return "missed"
        hit, face, needed = roll_to_hit(battle, u.profile.BS, mod, "T9A.ART.CATAPULT")
        battle.emit("T9A.ART.CATAPULT", unit=u.uid, element=e.id, partial=True, roll=face, needed=needed, hit=hit)
        if not hit:
            battle.emit("CFG.SIEGE_T9A", unit=u.uid, element=e.id, hit=False, partial=True)
            return "missed"
        strength, wounds, partial = math.ceil(p.strength / 2), "", True
    target = e
    if e.kind == "gate":
        section = element(battle.state, e.parent) if e.parent else e
        gate_face = battle.dice.d6("SIEGE.DMG.GATE_SHOTS")[0]
        target = e if gate_face >= 5 else section
        battle.emit("SIEGE.DMG.GATE_SHOTS", gate=e.id, machine=u.missile, roll=gate_face, hit=target.id)
    rolled = _roll_wounds(battle, wounds)
    battle.emit("CFG.SIEGE_T9A", unit=u.uid, element=target.id, hit=True, partial=partial, strength=strength,
                multiple_wounds=wounds or None, rolled=rolled, base=strength + rolled)
    return dmg.damage_element(battle, target, strength + rolled, source=p.kind, unit=u.uid)


def _roll_wounds(battle: Battle, param: str) -> int:
    """The rolled Multiple Wounds of a castle shot (0 without Multiple Wounds), logged under CFG.SIEGE_T9A."""
    if not param:
        return 0
    from battleline.env.rules.t9a.attributes import roll_param

    return roll_param(battle, param, "CFG.SIEGE_T9A")
