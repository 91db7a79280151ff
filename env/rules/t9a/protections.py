"""T9A Personal Protections, the one special save, Stomp and Sizes (RULESET.md §6.1, module ``t9a.protections``).

Rule IDs: T9A.PP.WHOLE_MODEL, T9A.PP.AGAINST, T9A.PP.AEGIS, T9A.PP.REGENERATION,
T9A.SAVE.ONE_SPECIAL (⇒ CORE.SAVE.PIPELINE steps 2–4), T9A.PP.DISTRACTING,
T9A.PP.FLAMMABLE (⇒ CORE.SR.FLAMMABLE), T9A.PP.HARD_TARGET, T9A.PP.PARRY,
T9A.PP.CANNOT_BE_STOMPED, T9A.STOMP and T9A.SIZE (where a Size decides something).

Where a model's protections come from (:func:`model_protections`):

* the unit type's ``t9a.protections`` (``"aegis (4+)"``, ``"aegis (5+, against flaming)"``,
  ``"regeneration (4+)"``, ``"distracting"``, ...);
* the core special rules the module replaces, read as their T9A protection
  (:data:`CORE_READINGS`): ``ward_save_X`` is Aegis (X+), ``regeneration[_X]`` is
  Regeneration (X+, 4+ unstated) and ``flammable`` is Flammable, so the shipped armies
  (and spell-given ward saves) play the T9A rules;
* the rider's ``t9a.rider_protections`` (a ridden monster's or chariot's rider part):
  T9A.PP.WHOLE_MODEL gives them to the whole model, except on a Gigantic mount, where
  only the mount's protections count.

Reading of "against C" (T9A.PP.AGAINST): an attack criterion (flaming, divine,
lethal_strike, magical, close_combat, shooting) tests the attack; every other criterion
(an army book, a Size, a troop type, a special rule) tests the attacking unit. The attack
is Flaming if the attacker has core ``flaming`` or the attribute ``flaming``, Divine with
the attribute ``divine``, Lethal Strike in close combat with core ``killing_blow`` or the
attribute ``lethal_strike``, magical for Flaming or Ethereal attackers and spells; it is a
close-combat attack for blows and special attacks in close combat, a shooting attack otherwise
(:func:`env.rules.t9a.attributes.attack_of`). With ``t9a.attributes`` on, that module decides which
attributes an attack carries (scope and conditions) and this module reads the core rules it grants.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from battleline.env.rules import tables
from battleline.env.rules.t9a import PROTECTIONS, on
from battleline.env.rules.t9a.conditions import Attribute, applies, parse, size

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.special_rules import WoundResult
    from battleline.env.rules.state import BattleState, Engagement, UnitState

SPECIAL_SAVES: dict[str, str] = {"aegis": "T9A.PP.AEGIS", "regeneration": "T9A.PP.REGENERATION"}
"""The special saves (T9A.SAVE.ONE_SPECIAL) and the rule ID each rolls under."""
DEFAULT_REGENERATION = 4
"""Regeneration without a value (a core ``regeneration`` rule) is 4+ (CORE.SR.REGENERATION's default)."""
CORE_READINGS: dict[str, str] = {"ward_save": "aegis", "regeneration": "regeneration", "flammable": "flammable"}
"""Core special rule id (without its value) → the T9A protection it is read as while the module plays."""


def plays(state: BattleState) -> bool:
    """Whether the battle plays ``t9a.protections`` (the hook every core call site asks)."""
    return on(state, PROTECTIONS)


# --------------------------------------------------------------------- what a model has
@functools.lru_cache(maxsize=512)
def _parse(text: str) -> Attribute:
    from battleline.env.rules.config import ATTRIBUTES
    from battleline.env.rules.config import PROTECTIONS as NAMES

    return parse(text, known=NAMES + ATTRIBUTES)


def core_readings(u: UnitState) -> list[Attribute]:
    """The unit's core ``ward_save_X``, ``regeneration[_X]`` and ``flammable`` read as T9A protections
    (:data:`CORE_READINGS`): Aegis (X+), Regeneration (X+, 4+ when bare), Flammable."""
    out: list[Attribute] = []
    for r in u.special_rules:
        if r == "flammable":
            out.append(Attribute("flammable"))
        elif r.startswith("ward_save_") and r[len("ward_save_"):].isdigit():
            out.append(Attribute("aegis", f"{r[len('ward_save_'):]}+"))
        elif r == "regeneration" or r.startswith("regeneration_"):
            value = r[len("regeneration_"):]
            out.append(Attribute("regeneration", f"{value if value.isdigit() else DEFAULT_REGENERATION}+"))
    return out


def model_protections(battle: Battle, u: UnitState, emit: bool = True) -> list[Attribute]:
    """The protections of ``u``'s models (T9A.PP.WHOLE_MODEL): its own (``t9a.protections`` and
    :func:`core_readings`) plus a living rider's ``t9a.rider_protections``, which cover the whole
    model unless the mount is Gigantic (T9A.SIZE); then only the mount's count.

    Emits T9A.PP.WHOLE_MODEL (and T9A.SIZE for a Gigantic mount) when the unit has rider protections,
    unless ``emit`` is False (a look-up that must leave the log alone, such as a to-hit estimate).
    """
    from battleline.env.rules.monsters import has_rider

    own = [_parse(t) for t in u.t9a.get("protections", ())]
    own += [a for a in core_readings(u) if a not in own]  # a core rule the t9a block restates counts once
    rider = [_parse(t) for t in u.t9a.get("rider_protections", ())] if has_rider(u) else []
    if not rider:
        return own
    names = [a.name for a in rider]
    gigantic = size(u) == "gigantic"
    if emit and gigantic:
        battle.emit("T9A.SIZE", unit=u.uid, size="gigantic", decides="whole_model")
        battle.emit("T9A.PP.WHOLE_MODEL", unit=u.uid, gigantic_mount=True, rider_ignored=names)
    elif emit:
        battle.emit("T9A.PP.WHOLE_MODEL", unit=u.uid, gigantic_mount=False, rider_extended=names)
    return own if gigantic else own + rider


def has_protection(battle: Battle, u: UnitState, name: str, emit: bool = True) -> int:
    """How many instances of protection ``name`` ``u``'s models have (0 = none); ``emit`` as in
    :func:`model_protections`."""
    return sum(1 for a in model_protections(battle, u, emit) if a.name == name)


def _attribute_names(u: UnitState) -> set[str]:
    """The names of ``u``'s attack attributes (texts or ``{attribute, tags, part}`` mappings)."""
    from battleline.env.rules.t9a.attributes import entries

    return {e.attr.name for e in entries(u)}


def attack_properties(battle: Battle, u: UnitState, melee: bool, wound_rule: str = "CORE.CC.TO_WOUND") -> frozenset[str]:
    """The attack criteria of ``u``'s attack (see the module docstring for the reading).

    With ``t9a.attributes`` on, that module has already given the attacker core ``flaming``,
    ``killing_blow`` and ``divine`` for the attacks in their scope whose conditions the wound pool
    meets (T9A.AA.SCOPE, T9A.AA.CONDITIONS); without it, ``flaming`` and ``divine`` in the attacker's
    ``t9a.attributes`` count for every attack.

    Args:
        melee: close-combat blows (Lethal Strike works only there, as core Killing Blow).
        wound_rule: the rule the roll to wound was made under: with ``melee`` it tells a close-combat
            attack from a shooting one (T9A.AA.SCOPE's :func:`~env.rules.t9a.attributes.attack_of`).
    """
    from battleline.env.rules.special_rules import magical_attacks
    from battleline.env.rules.t9a import ATTRIBUTES
    from battleline.env.rules.t9a.attributes import attack_of

    names = set() if on(battle.state, ATTRIBUTES) else _attribute_names(u)
    props: set[str] = {attack_of(melee, wound_rule).kind}
    if u.has("flaming") or "flaming" in names:
        props.add("flaming")
    if u.has("divine") or "divine" in names:
        props.add("divine")
    if melee and (u.has("killing_blow") or "lethal_strike" in names):
        props.add("lethal_strike")
    if magical_attacks(u) or "flaming" in props:
        props.add("magical")
    return frozenset(props)


# --------------------------------------------------------------------- special saves
@dataclass(frozen=True, slots=True)
class SpecialSave:
    """One special save a model may take against one attack (T9A.SAVE.ONE_SPECIAL).

    Attributes:
        rule: T9A.PP.AEGIS or T9A.PP.REGENERATION (its dice are logged under it).
        needed: the D6 score (2..6; a natural 1 always fails).
        text: the protection as written, e.g. ``"aegis (4+)"``.
        reroll_success: an Aegis against a Divine attack: each success is re-rolled (T9A.PP.AEGIS).
    """

    rule: str
    needed: int
    text: str
    reroll_success: bool = False

    @property
    def chance(self) -> float:
        """Chance that one wound is saved: passing faces / 6, squared when a success is re-rolled."""
        p = max(0, 7 - max(self.needed, 2)) / 6
        return p * p if self.reroll_success else p


def _text(a: Attribute) -> str:
    cond = ", ".join(" ".join(run) for run in a.conditions)
    inner = a.params + (f", against {cond}" if cond else "")
    return f"{a.name} ({inner})" if inner else a.name


def special_saves(battle: Battle, u: UnitState | None, t: UnitState, attack: frozenset[str],
                  protections: Iterable[Attribute] | None = None) -> list[SpecialSave]:
    """The special saves ``t`` may take against an attack of ``u`` with ``attack`` properties.

    T9A.PP.AGAINST: a protection with "against C" applies only if the attack (attack criteria) and
    the attacker (every other criterion) meet C; with no attacker only attack criteria can be met.
    T9A.PP.REGENERATION: never against Flaming or Lethal Strike. T9A.PP.AEGIS: against a Divine
    attack its successes are re-rolled. Emits T9A.PP.AGAINST per conditional protection and
    T9A.PP.REGENERATION when Regeneration is barred.
    """
    out: list[SpecialSave] = []
    for a in model_protections(battle, t) if protections is None else protections:
        if a.name not in SPECIAL_SAVES:
            continue
        text = _text(a)
        if a.conditions:
            ok = applies(a, [u], attack=attack) if u is not None else any(
                all(w in attack for w in run) for run in a.conditions)
            battle.emit("T9A.PP.AGAINST", unit=t.uid, attacker=None if u is None else u.uid, protection=text,
                        attack=sorted(attack), applies=ok)
            if not ok:
                continue
        barred = sorted(attack & {"flaming", "lethal_strike"})
        if a.name == "regeneration" and barred:
            battle.emit("T9A.PP.REGENERATION", unit=t.uid, protection=text, blocked=barred)
            continue
        needed = a.value if a.value is not None else (DEFAULT_REGENERATION if a.name == "regeneration" else 7)
        out.append(SpecialSave(SPECIAL_SAVES[a.name], needed, text, a.name == "aegis" and "divine" in attack))
    return out


def best_save(saves: list[SpecialSave]) -> SpecialSave | None:
    """The best special save (T9A.SAVE.ONE_SPECIAL, A4): the highest chance to save, the first listed on a tie."""
    best: SpecialSave | None = None
    for s in saves:
        if best is None or s.chance > best.chance:
            best = s
    return best


def roll_special(battle: Battle, t: UnitState, save: SpecialSave, groups: list[int]) -> list[int]:
    """Roll ``save`` once per wound of each group (in order); returns the wounds left in each group.

    T9A.PP.AEGIS: against a Divine attack each success is re-rolled and stands only if the re-roll
    passes too. Emits the save's rule with the wounds saved.
    """
    total = sum(groups)
    faces = battle.dice.d6(save.rule, total) if total else []
    passed = [tables.save_passes(save.needed, f) for f in faces]
    rerolled = 0
    if save.reroll_success and any(passed):
        again = iter(battle.dice.d6(save.rule, sum(passed)))
        rerolled = sum(passed)
        passed = [p and tables.save_passes(save.needed, next(again)) for p in passed]
    left, i = [], 0
    for n in groups:
        left.append(n - sum(passed[i : i + n]))
        i += n
    battle.emit(save.rule, unit=t.uid, needed=save.needed, protection=save.text, wounds=total, saved=sum(passed),
                divine_rerolled=rerolled)
    return left


def take_special_save(battle: Battle, u: UnitState | None, t: UnitState, attack: frozenset[str],
                      groups: list[int], protections: Iterable[Attribute] | None = None) -> list[int]:
    """T9A.SAVE.ONE_SPECIAL: at most one special save, the best that applies, against the wounds of
    ``groups`` (after the armour save); returns the wounds left per group. Emits T9A.SAVE.ONE_SPECIAL."""
    if sum(groups) <= 0:
        return list(groups)
    saves = special_saves(battle, u, t, attack, protections)
    chosen = best_save(saves)
    left = roll_special(battle, t, chosen, groups) if chosen is not None else list(groups)
    battle.emit("T9A.SAVE.ONE_SPECIAL", unit=t.uid, attacker=None if u is None else u.uid,
                candidates=[s.text for s in saves], save=None if chosen is None else chosen.rule,
                needed=None if chosen is None else chosen.needed, wounds=sum(groups), unsaved=sum(left))
    return left


def finish_saves(battle: Battle, u: UnitState, t: UnitState, res: WoundResult, normal: int, auto: int, kb: int,
                 melee: bool, wound_rule: str = "CORE.CC.TO_WOUND") -> WoundResult:
    """Steps 2–4 of the save pipeline with the module on (T9A.SAVE.ONE_SPECIAL ⇒ CORE.SAVE.PIPELINE):
    one special save on the wounds the armour save let through, then the unsaved wounds (no Flammable
    doubling: T9A.PP.FLAMMABLE re-rolls to wound instead; Killing Blows still slay).

    Args:
        res: the pipeline's result so far (wounds and armour saves filled in); completed and returned.
        normal, auto, kb: wounds left after armour: ordinary, automatic Poison wounds, Killing Blows.
        melee, wound_rule: as ``wound_and_save`` got them (:func:`attack_properties`).
    """
    attack = attack_properties(battle, u, melee, wound_rule)
    normal, auto, kb = take_special_save(battle, u, t, attack, [normal, auto, kb])
    res.unsaved, res.doubled, res.slain = normal + auto, 0, kb
    return res


def spell_saves(battle: Battle, caster: UnitState, t: UnitState, unsaved: int, flaming: bool) -> int:
    """The one special save against a spell's wounds (T9A.SAVE.ONE_SPECIAL ⇒ the core ward then
    Regeneration of CORE.MAGIC.DAMAGE): the attack is magical, Flaming if the spell is."""
    attack = frozenset({"magical", "flaming"} if flaming else {"magical"})
    return take_special_save(battle, caster, t, attack, [unsaved])[0]


def rider_saves(battle: Battle, u: UnitState, t: UnitState, unsaved: int, wound_rule: str) -> int:
    """The whole model's special save for wounds on a rider (T9A.PP.WHOLE_MODEL, T9A.SAVE.ONE_SPECIAL):
    the mount's protections (and the rider's, unless the mount is Gigantic) cover the rider too.
    ``wound_rule``: the rider's to-wound rule (shots, or a war machine's)."""
    return take_special_save(battle, u, t, attack_properties(battle, u, False, wound_rule), [unsaved])[0]


# --------------------------------------------------------------------- to wound and to hit
def _wounds(face: int, needed: int) -> bool:
    return face >= needed or face == 6


def flammable_rerolls(battle: Battle, u: UnitState, t: UnitState, faces: list[int], needed: int,
                      flaming: bool | None = None) -> list[int]:
    """T9A.PP.FLAMMABLE (⇒ CORE.SR.FLAMMABLE): Flaming attacks on a Flammable model re-roll failed
    to-wound rolls (once; the attacker always does). Returns the faces after the re-roll.

    Args:
        faces: the to-wound faces; needed: the to-wound score.
        flaming: whether the attack is Flaming (None: the attacker's rules decide).
    """
    if flaming is None:
        flaming = "flaming" in attack_properties(battle, u, False)
    if not faces or not flaming or not has_protection(battle, t, "flammable"):
        return faces
    failed = [f for f in faces if not _wounds(f, needed)]
    again = battle.dice.d6("T9A.PP.FLAMMABLE", len(failed)) if failed else []
    out = [f for f in faces if _wounds(f, needed)] + again
    battle.emit("T9A.PP.FLAMMABLE", unit=t.uid, attacker=u.uid, needed=needed, rerolled=len(failed),
                wounds=sum(1 for f in out if _wounds(f, needed)))
    return out


def _host(u: UnitState) -> int:
    return u.joined_to if u.joined_to is not None else u.uid


def from_front(battle: Battle, u: UnitState, t: UnitState) -> bool:
    """Whether ``u`` fights ``t`` from ``t``'s front: ``u`` charged ``t``'s front, or ``t`` charged ``u``
    (a charger touches with its front). Joined characters count as their host; with no engagement, front."""
    a, d = _host(u), _host(t)
    for e in battle.state.engagements:
        if (e.attacker, e.defender) == (a, d):
            return e.facing == "front"
        if (e.attacker, e.defender) == (d, a):
            return True
    return True


def paired_weapons(u: UnitState) -> bool:
    """Whether ``u`` fights with Paired Weapons, which ignore Parry (T9A.WEAPON.PAIRED, A7:
    :func:`env.rules.t9a.equipment.ignores_parry`)."""
    from battleline.env.rules.t9a.equipment import ignores_parry

    return ignores_parry(u)


def has_parry(battle: Battle, t: UnitState) -> bool:
    """T9A.PP.PARRY: the protection, or a shield with the hand weapon it fights with (T9A.WEAPON.RULES:
    a weapon its troop type cannot use leaves it the hand weapon, :func:`env.rules.t9a.equipment.melee_weapon`)."""
    from battleline.env.rules.t9a.equipment import MELEE, melee_weapon

    return (t.shield and melee_weapon(t) is MELEE["hand_weapon"]) or has_protection(battle, t, "parry") > 0


def parry_ws(battle: Battle, u: UnitState, t: UnitState, ws: int, target_ws: int) -> int:
    """T9A.PP.PARRY: the defender's WS for the to-hit comparison, max(WS + 1, attacker's WS) against
    front attacks in close combat; unchanged otherwise or against Paired Weapons. Emits T9A.PP.PARRY."""
    if not has_parry(battle, t):
        return target_ws
    front = from_front(battle, u, t)
    if not front or paired_weapons(u):
        battle.emit("T9A.PP.PARRY", unit=t.uid, attacker=u.uid, ws=target_ws, defence=target_ws,
                    ignored="paired_weapons" if front else "not_front")
        return target_ws
    defence = max(target_ws + 1, ws)
    battle.emit("T9A.PP.PARRY", unit=t.uid, attacker=u.uid, ws=target_ws, defence=defence, attacker_ws=ws)
    return defence


def distracting_modifier(battle: Battle, u: UnitState, t: UnitState, other_negative: bool) -> int:
    """T9A.PP.DISTRACTING: −1 to hit in close combat against the model, 0 when the attack already has
    another negative to-hit modifier (A5) or the model lacks it. Emits T9A.PP.DISTRACTING when it has it."""
    if not has_protection(battle, t, "distracting"):
        return 0
    mod = 0 if other_negative else -1
    battle.emit("T9A.PP.DISTRACTING", unit=t.uid, attacker=u.uid, modifier=mod, other_negative=other_negative)
    return mod


def melee_to_hit(battle: Battle, u: UnitState, t: UnitState, ws: int, target_ws: int,
                 other_negative: bool = False) -> int:
    """The close-combat to-hit score with Parry and Distracting (T9A.PP.PARRY, T9A.PP.DISTRACTING), 3..6.

    Args:
        ws, target_ws: the attacker's and the target's WS as the core compares them (Fear included).
        other_negative: the attack already has a negative to-hit modifier (core close combat has none).
    """
    needed = tables.cc_to_hit(ws, parry_ws(battle, u, t, ws, target_ws))
    return min(6, needed - distracting_modifier(battle, u, t, other_negative))


def hard_target_parts(battle: Battle, t: UnitState) -> dict[str, int]:
    """T9A.PP.HARD_TARGET: {"hard_target": −k} for shooting at ``t``, where k is the largest number of
    instances that more than half of the models (the unit and its joined characters) have (A14);
    {} when none. Emits nothing (agents estimate shots with it): :func:`log_hard_target` logs a shot."""
    from battleline.env.rules.characters import members

    pool = [(m.models, has_protection(battle, m, "hard_target", emit=False)) for m in [t, *members(battle.state, t)]]
    total = sum(n for n, _ in pool)
    k = 0
    while 2 * sum(n for n, i in pool if i >= k + 1) > total:
        k += 1
    return {"hard_target": -k} if k else {}


def log_hard_target(battle: Battle, u: UnitState, t: UnitState, parts: dict[str, int]) -> None:
    """Emit T9A.PP.HARD_TARGET for a shot of ``u`` at ``t`` whose modifiers ``parts`` hold it."""
    if "hard_target" in parts:
        battle.emit("T9A.PP.HARD_TARGET", unit=t.uid, shooter=u.uid, modifier=parts["hard_target"])


# --------------------------------------------------------------------- Stomp
def stomp_param(u: UnitState) -> str | None:
    """X of the attribute ``stomp (X)`` (a number, d3 or d6), or None without it."""
    from battleline.env.rules.t9a.attributes import entries

    for e in entries(u):
        if e.attr.name == "stomp":
            return e.attr.params or "1"
    return None


def stomp_target(battle: Battle, u: UnitState, enemies: list[UnitState]) -> UnitState | None:
    """The Stomp target: the first (lowest uid) enemy in contact that is Standard size (T9A.SIZE) and not
    Cannot Be Stomped (T9A.PP.CANNOT_BE_STOMPED: never a target, never Standard for Stomp). Emits both."""
    for t in sorted(enemies, key=lambda e: e.uid):
        if not t.alive:
            continue
        if has_protection(battle, t, "cannot_be_stomped"):
            battle.emit("T9A.PP.CANNOT_BE_STOMPED", unit=t.uid, stomper=u.uid)
            continue
        sz = size(t)
        battle.emit("T9A.SIZE", unit=t.uid, size=sz, decides="stomp_target", eligible=sz == "standard")
        if sz == "standard":
            return t
    return None


def stomp(battle: Battle, group: list[Engagement], wounds_by_side: list[int]) -> None:
    """T9A.STOMP at Initiative step 0 (after every other blow of the round): each model of a unit with
    Stomp (X) in contact makes X automatic hits at its S (X rolled per model for d3/d6) on one Standard-size
    enemy unit in contact (:func:`stomp_target`). Wounds count for the result (CORE.CC.SEQUENCE)."""
    from battleline.env.rules.special_rules import _auto_hits
    from battleline.env.rules.strikes import fighters
    from battleline.env.rules.t9a.attributes import roll_param

    for uid in sorted({i for e in group for i in (e.attacker, e.defender)}):
        u = battle.unit(uid)
        x = stomp_param(u)
        if x is None or not u.alive or u.fleeing:
            continue
        contact: dict[int, int] = {}
        for e in group:
            if uid in (e.attacker, e.defender):
                a_n, d_n = fighters(battle, e)
                enemy = e.defender if e.attacker == uid else e.attacker
                contact[enemy] = contact.get(enemy, 0) + (a_n if e.attacker == uid else d_n)
        t = stomp_target(battle, u, [battle.unit(i) for i in contact])
        models = contact.get(t.uid, 0) if t is not None else 0
        if t is None or models <= 0:
            battle.emit("T9A.STOMP", unit=uid, target=None, hits=0, param=x)
            continue
        hits = sum(roll_param(battle, x, "T9A.STOMP") for _ in range(models))
        battle.emit("T9A.STOMP", unit=uid, target=t.uid, hits=hits, models=models, param=x,
                    strength=tables.clamp_characteristic(u.profile.S, "S"))
        _auto_hits(battle, u, t, hits, "T9A.STOMP", wounds_by_side)
