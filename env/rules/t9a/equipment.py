"""T9A equipment (module ``t9a.equipment``, RULESET.md §6.1): armour values, the melee and missile tables.

* T9A.ARMOUR.VALUE (⇒ CORE.SAVE.ARMOUR_TABLE, CORE.SAVE.MODIFIERS): a model's Armour is its body
  armour (light 1, heavy 2, plate 3) + 1 for a shield + 1 mounted (cavalry, chariot, monster: the
  core's ``MOUNTED``) + 1 barding; the save needed is 7 − (Armour − AP). Strength never modifies it;
  the core Armour Piercing special rule is AP 1 on top of the weapon's AP.
* T9A.WEAPON.* (⇒ CORE.WEAPON.MELEE): each core melee id reads a row of the T9A table
  (:data:`MELEE`); :func:`melee_profile` is what one strike uses (S and AP bonuses, +WS, +I).
* T9A.MISSILE.TABLE / T9A.MISSILE.RULES (⇒ CORE.SHOOT.WEAPONS): :data:`MISSILES` replaces the core
  profiles of the non-machine missile weapons; :func:`missile_modifiers` adds Unwieldy and Accurate.

An attack's profile is its S (the to-wound roll) and its AP (the armour save): a strike's AP is
:attr:`MeleeProfile.ap`, a shot's :attr:`Missile.ap`, handed to
:func:`env.rules.special_rules.wound_and_save` as ``ap``; the core Armour Piercing rule adds 1. The core
call sites ask :func:`battleline.env.rules.t9a.on` and hand over to the functions here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from battleline.env.rules import tables
from battleline.env.rules.config import MOUNTED, armour_save_value

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

BODY_ARMOUR: dict[str, int] = {"none": 0, "light": 1, "heavy": 2, "plate": 3}
"""Armour per body armour (T9A.ARMOUR.VALUE, src 001:L38-L43)."""

INFANTRY: frozenset[str] = frozenset({"infantry", "monstrous_infantry"})
"""Troop types that are Infantry for the weapon restrictions (a lance is not for them)."""
NOT_SPEAR: frozenset[str] = frozenset({"cavalry", "monster", "chariot", "war_machine"})
"""Troop types that cannot use a spear: cavalry, beasts (monsters) and constructs (chariots, machines)."""

MACHINE_AP: dict[str, int] = {
    "great_cannon": 10, "light_cannon": 10, "bolt_thrower": 3, "stone_thrower": 1, "flame_cannon": 1,
}
"""AP of a core war machine's hits while the armour rules are T9A (T9A.ARMOUR.VALUE): the AP of the
T9A.ART.PROFILES row it is nearest to (cannons 10, bolt thrower 3, catapult 1, flamethrower 1)."""


# ============================================================================ armour (T9A.ARMOUR.VALUE)
def armour_save(armour: int, ap: int) -> int:
    """The D6 score an armour save needs: 7 − (Armour − AP), from 1 to 7 (7 = no save) (T9A.ARMOUR.VALUE).

    Example: heavy armour and a shield (Armour 3) against AP 2 need 7 − (3 − 2) = 6+.
    """
    return min(tables.IMPOSSIBLE, max(1, 7 - (armour - ap)))


def shield_in_melee(u: UnitState) -> bool:
    """Whether ``u``'s shield counts in close combat (T9A.WEAPON.RULES): not alongside the great
    weapon, halberd or paired weapons it fights with (nor a flail, read as two-handed)."""
    return u.shield and not melee_weapon(u).no_shield


def armour_parts(u: UnitState, melee: bool = False) -> dict[str, int]:
    """The parts of ``u``'s Armour (T9A.ARMOUR.VALUE): body, shield, mount, barding and the
    change spells made to its save (``magic``, negative when its save was worsened).

    ``melee``: in close combat, where the shield may count for nothing (:func:`shield_in_melee`).
    A unit without a recorded body armour (``u.t9a["armour"]``) reads it back from its core save.
    """
    mounted = u.troop_type in MOUNTED
    barding = bool(u.t9a.get("barding", False))
    if "armour" not in u.t9a:  # kit not recorded: the core save has the same sum (Armour = 7 − save)
        parts = {"core_save": tables.IMPOSSIBLE - u.armour_save}
        if melee and u.shield and not shield_in_melee(u):
            parts["shield"] = -1
        return parts
    body = str(u.t9a["armour"])
    parts = {"body": BODY_ARMOUR[body], "shield": int(u.shield), "mount": int(mounted), "barding": int(barding)}
    magic = armour_save_value(body, u.shield, mounted, barding) - u.armour_save
    if magic:
        parts["magic"] = magic
    if melee and u.shield and not shield_in_melee(u):
        parts["shield"] = 0
    return parts


def armour_value(u: UnitState, melee: bool = False) -> int:
    """``u``'s Armour (T9A.ARMOUR.VALUE): the sum of :func:`armour_parts`, at least 0."""
    return max(0, sum(armour_parts(u, melee).values()))


def default_ap(u: UnitState | None) -> int:
    """The weapon AP of a hit whose caller names none: a core war machine's (:data:`MACHINE_AP`), else 0."""
    if u is not None and u.troop_type == "war_machine" and u.missile is not None:
        return MACHINE_AP.get(u.missile, 0)
    return 0


def save_needed(
    battle: Battle, attacker: UnitState | None, t: UnitState, ap: int | None, armour_piercing: bool, melee: bool
) -> int:
    """The armour save ``t`` needs against a hit of ``attacker`` (T9A.ARMOUR.VALUE, emitted).

    Args:
        attacker: the attacking unit, or None (a spell, a falling wall).
        ap: the weapon's AP; None takes :func:`default_ap`.
        armour_piercing: the core Armour Piercing rule (of the weapon or the model): AP 1 more.
        melee: close-combat blows (the shield may count for nothing, :func:`shield_in_melee`).

    Returns:
        The D6 score needed, 1..7 (7 = no save); Strength plays no part.
    """
    weapon_ap = default_ap(attacker) if ap is None else ap
    total_ap = weapon_ap + int(armour_piercing)
    parts = armour_parts(t, melee)
    armour = max(0, sum(parts.values()))
    needed = armour_save(armour, total_ap)
    battle.emit("T9A.ARMOUR.VALUE", unit=t.uid, attacker=None if attacker is None else attacker.uid, armour=armour,
                parts=parts, ap=total_ap, armour_piercing=armour_piercing, needed=needed, melee=melee)
    return needed


def rider_save_needed(battle: Battle, attacker: UnitState, t: UnitState, rider_save: int, ap: int | None,
                      armour_piercing: bool) -> int:
    """The save a ridden monster's or chariot's rider needs (T9A.ARMOUR.VALUE, emitted).

    The rider's core save ``rider_save`` already sums its armour, shield and mount
    (CORE.SAVE.ARMOUR_TABLE), so its Armour is 7 − ``rider_save``.
    """
    total_ap = (default_ap(attacker) if ap is None else ap) + int(armour_piercing)
    armour = tables.IMPOSSIBLE - rider_save
    needed = armour_save(armour, total_ap)
    battle.emit("T9A.ARMOUR.VALUE", unit=t.uid, attacker=attacker.uid, rider=True, armour=armour, ap=total_ap,
                armour_piercing=armour_piercing, needed=needed, melee=False)
    return needed


# ============================================================================ melee weapons (T9A.WEAPON.*)
@dataclass(frozen=True, slots=True)
class MeleeWeapon:
    """One row of the T9A melee weapon table (src 001:L52-L59).

    Attributes:
        name: the T9A weapon.
        rule: the rule ID it fires under.
        strength, ap: S and AP bonuses of its attacks.
        attacks, ws: bonus Attacks and WS (paired weapons).
        strikes_last: strikes at Initiative step 0, the core's "always strikes last" (great weapon).
        no_shield: the wielder's shield counts for nothing in close combat.
        banned: troop types that cannot use it (they fight with their hand weapon).
        charge_only: the bonuses only in R1 after a charge, against a front-arc enemy (lances).
        round_one_only: the bonuses only in R1 (the flail reading).
        extra_rank: Fight in Extra Rank (spear).
    """

    name: str
    rule: str
    strength: int = 0
    ap: int = 0
    attacks: int = 0
    ws: int = 0
    strikes_last: bool = False
    no_shield: bool = False
    banned: frozenset[str] = frozenset()
    charge_only: bool = False
    round_one_only: bool = False
    extra_rank: bool = False


MELEE: dict[str, MeleeWeapon] = {
    "hand_weapon": MeleeWeapon("hand_weapon", "T9A.WEAPON.RULES"),
    "great_weapon": MeleeWeapon("great_weapon", "T9A.WEAPON.GREAT", 2, 2, strikes_last=True, no_shield=True),
    "halberd": MeleeWeapon("halberd", "T9A.WEAPON.HALBERD", 1, 1, no_shield=True),
    "lance": MeleeWeapon("lance", "T9A.WEAPON.LANCE", 2, 2, banned=INFANTRY, charge_only=True),
    "cavalry_spear": MeleeWeapon("light_lance", "T9A.WEAPON.LIGHT_LANCE", 1, 1, banned=INFANTRY, charge_only=True),
    "additional_hand_weapon": MeleeWeapon("paired", "T9A.WEAPON.PAIRED", attacks=1, ws=1, no_shield=True),
    "spear": MeleeWeapon("spear", "T9A.WEAPON.SPEAR", ap=1, banned=NOT_SPEAR, extra_rank=True),
    "flail": MeleeWeapon("flail", "T9A.WEAPON.RULES", 2, 2, no_shield=True, round_one_only=True),
}
"""The T9A row each core melee id (CORE.WEAPON.MELEE) reads: additional hand weapon = paired weapons,
cavalry spear = light lance; the flail (not in the T9A table) keeps its core shape, +2 S and, like every
table row, as much AP, in R1 only, two-handed."""


def melee_weapon(u: UnitState) -> MeleeWeapon:
    """The weapon ``u`` fights with (T9A.WEAPON.RULES): its carried melee weapon, or the hand weapon
    when its troop type cannot use that one (a lance on infantry, a spear on cavalry)."""
    w = MELEE.get(u.melee, MELEE["hand_weapon"])
    return MELEE["hand_weapon"] if u.troop_type in w.banned else w


def ignores_parry(u: UnitState) -> bool:
    """Whether ``u``'s close-combat attacks ignore the target's Parry (T9A.WEAPON.PAIRED, reading A7)."""
    return melee_weapon(u).name == "paired"


def fights_in_extra_rank(u: UnitState) -> bool:
    """Whether ``u`` fights in an extra rank with its weapon (T9A.WEAPON.SPEAR: Fight in Extra Rank)."""
    return melee_weapon(u).extra_rank


def _host(battle: Battle, u: UnitState) -> int:
    """The unit ``u`` fights from: its host if it is a joined character, else itself."""
    return u.joined_to if u.joined_to is not None else u.uid


def in_front_arc(battle: Battle, u: UnitState, t: UnitState) -> bool:
    """Whether enemy ``t`` is in ``u``'s front arc: ``u`` charged it, or ``t`` fights ``u``'s front."""
    a, d = _host(battle, u), _host(battle, t)
    return any((e.attacker == a and e.defender == d) or (e.defender == a and e.attacker == d and e.facing == "front")
               for e in battle.state.engagements)


def flank_or_rear_enemy(battle: Battle, u: UnitState) -> bool:
    """Whether any enemy is engaged with the flank or rear of ``u``'s unit (reading A8)."""
    host = _host(battle, u)
    return any(e.defender == host and e.facing != "front" for e in battle.state.engagements)


@dataclass(frozen=True, slots=True)
class MeleeProfile:
    """What ``u``'s weapon gives one strike (T9A.WEAPON.*).

    Attributes:
        effect: the bonuses in the core's shape (:class:`env.rules.tables.MeleeEffect`): S, Attacks,
            shield lost, strikes last, extra rank.
        ap: the weapon's AP for T9A.ARMOUR.VALUE.
        ws: bonus WS for the to-hit roll (paired weapons).
        initiative: bonus I (a spear in R1).
        weapon: the T9A weapon used.
    """

    effect: tables.MeleeEffect
    ap: int
    ws: int
    initiative: int
    weapon: str


def melee_profile(battle: Battle, u: UnitState, t: UnitState, round_one: bool, charged: bool) -> MeleeProfile:
    """The T9A weapon bonuses of ``u``'s strike at ``t`` this round (T9A.WEAPON.RULES and the weapon's rule, emitted).

    Args:
        round_one: this is R1 of the combat (CORE.CC.ROUNDS).
        charged: ``u``'s unit charged this turn.

    The lances give +S/+AP only in R1 after a charge against a front-arc enemy; the spear gives +1 AP
    and Fight in Extra Rank, and in R1, if the unit did not charge and no enemy is on its flank or
    rear, +2 I and +1 AP more; the great weapon +2 S +2 AP and strikes last; the halberd +1 S +1 AP;
    paired weapons +1 A and +1 WS. The hand weapon is used only when nothing else is carried.
    """
    w = melee_weapon(u)
    active, reason = True, ""
    if w.charge_only:
        front = in_front_arc(battle, u, t)
        active = round_one and charged and front
        reason = "" if active else ("not_round_one" if not round_one else "no_charge" if not charged else "not_front")
    elif w.round_one_only:
        active, reason = round_one, "" if round_one else "not_round_one"
    s, ap = (w.strength, w.ap) if active else (0, 0)
    initiative = 0
    if w.extra_rank:  # the spear: +1 AP always; R1 without a charge and no enemy on flank or rear: +2 I, +1 AP
        braced = round_one and not charged and not flank_or_rear_enemy(battle, u)
        ap += int(braced)
        initiative = 2 if braced else 0
        reason = "" if braced else ("not_round_one" if not round_one else "charged" if charged else "flank_or_rear")
    battle.emit("T9A.WEAPON.RULES", unit=u.uid, target=t.uid, carried=u.melee, weapon=w.name,
                hand_weapon_usable=w.name == "hand_weapon", shield_in_melee=u.shield and not w.no_shield)
    if w.rule != "T9A.WEAPON.RULES" or w.name == "flail":
        battle.emit(w.rule, unit=u.uid, target=t.uid, weapon=w.name, strength_bonus=s, ap=ap, attacks=w.attacks,
                    ws=w.ws, initiative=initiative, strikes_last=w.strikes_last, extra_rank=w.extra_rank,
                    applies=active and not reason, **({"reason": reason} if reason else {}))
    effect = tables.MeleeEffect(strength_bonus=s, extra_attacks=w.attacks, loses_shield=w.no_shield,
                                strikes_last=w.strikes_last, extra_rank=w.extra_rank)
    return MeleeProfile(effect, ap, w.ws, initiative, w.name)


# ============================================================================ missile weapons (T9A.MISSILE.*)
@dataclass(frozen=True, slots=True)
class Missile(tables.MissileWeapon):
    """A T9A missile weapon (T9A.MISSILE.TABLE): the core profile plus AP and the T9A rules.

    Attributes:
        ap: Armour Penetration (the core Armour Piercing rule adds 1 more; a throwing weapon has the
            user's, which is that rule alone).
        unwieldy: −1 to hit after the unit moved (T9A.MISSILE.RULES).
        accurate: no long-range penalty.
        volley_fire: Volley Fire as in the core (CORE.SR.VOLLEY_FIRE) for every unit carrying it.
        listed: the weapon is a row of the T9A table (False: a core weapon read onto it).
    """

    ap: int = 0
    unwieldy: bool = False
    accurate: bool = False
    volley_fire: bool = False
    listed: bool = True


MISSILES: dict[str, Missile] = {
    "bow": Missile("bow", 24.0, 3, volley_fire=True),
    "longbow": Missile("longbow", 30.0, 3, volley_fire=True),
    "crossbow": Missile("crossbow", 30.0, 4, ap=1, unwieldy=True),
    "handgun": Missile("handgun", 24.0, 4, ap=2, unwieldy=True),
    "pistol": Missile("pistol", 12.0, 4, ap=2, quick_to_fire=True),
    "javelin": Missile("javelin", 8.0, None, accurate=True, quick_to_fire=True),
    "short_bow": Missile("short_bow", 16.0, 3, volley_fire=True, listed=False),
    "repeater_crossbow": Missile("repeater_crossbow", 24.0, 3, multiple_shots=2, listed=False),
    "sling": Missile("sling", 18.0, 3, listed=False),
}
"""T9A.MISSILE.TABLE (src 001:L62-L68) by core missile id: the javelin is the throwing weapon (S and AP
the user's). Not in the table: the short bow is a bow of its core 16"; the repeater crossbow and the
sling keep their core range, S and shots, with AP 0 and no T9A rule. No row is Move or Fire (Reload!
belongs to artillery). War machines keep the core profiles."""


def missile_weapon(u: UnitState) -> tables.MissileWeapon:
    """``u``'s missile weapon under T9A.MISSILE.TABLE; a war machine's stays the core's.

    Raises:
        KeyError: ``u`` has no missile weapon.
    """
    if u.missile in MISSILES:
        return MISSILES[u.missile]
    return tables.MISSILE_WEAPONS[u.missile]  # type: ignore[index]


def missile_ap(w: tables.MissileWeapon) -> int | None:
    """The AP of a shot with ``w`` (T9A.MISSILE.TABLE), None for a core profile (the core save rules)."""
    return w.ap if isinstance(w, Missile) else None


def missile_modifiers(u: UnitState, w: tables.MissileWeapon, parts: dict[str, int], stand_and_shoot: bool) -> None:
    """Apply T9A.MISSILE.RULES to the to-hit ``parts`` in place: Accurate drops the long-range −1;
    Unwieldy adds −1 (``unwieldy``) after the unit moved (not in a Stand and Shoot).

    Short range is half the range or less, as the core's long-range test already reads it.
    """
    if not isinstance(w, Missile):
        return
    if w.accurate:
        parts.pop("long_range", None)
    if w.unwieldy and not stand_and_shoot and (u.flags.get("moved") or u.flags.get("rallied")):
        parts["unwieldy"] = -1


def log_missile(battle: Battle, u: UnitState, t: UnitState, w: tables.MissileWeapon, parts: dict[str, int],
                distance: float, volley: int) -> None:
    """Emit T9A.MISSILE.TABLE (the profile fired) and T9A.MISSILE.RULES (the rules that played) for one shot."""
    battle.emit("T9A.MISSILE.TABLE", unit=u.uid, weapon=w.name, range=w.range,
                strength=u.profile.S if w.strength is None else w.strength, ap=missile_ap(w),
                listed=getattr(w, "listed", False))
    short = distance <= w.range / 2
    battle.emit("T9A.MISSILE.RULES", unit=u.uid, target=t.uid, short_range=short,
                accurate=bool(getattr(w, "accurate", False)) and not short,
                unwieldy=parts.get("unwieldy", 0), quick_to_fire=w.quick_to_fire,
                volley_fire=volley, reload=w.move_or_fire)
