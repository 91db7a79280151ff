"""Pure rules tables: to-hit, to-wound, saves, weapons (no state, no dice).

Each function returns the D6 score needed (an int; 7 or more means
impossible unless stated) and implements the rule ID in its docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

IMPOSSIBLE = 7


def cc_to_hit(attacker_ws: int, target_ws: int) -> int:
    """Close-combat to-hit score (CORE.CC.TO_HIT).

    3+ if the attacker's WS is higher than the target's, 4+ if equal,
    5+ if lower.
    """
    if attacker_ws > target_ws:
        return 3
    if attacker_ws == target_ws:
        return 4
    return 5


def to_wound(strength: int, toughness: int) -> int:
    """To-wound score by S − T (CORE.CC.TO_WOUND, CORE.SHOOT.TO_WOUND).

    ≥ +2 → 2+; +1 → 3+; 0 → 4+; −1 → 5+; ≤ −2 → 6+ (a natural 6 always wounds).
    """
    diff = strength - toughness
    if diff >= 2:
        return 2
    return {1: 3, 0: 4, -1: 5}.get(diff, 6)


def shooting_to_hit(bs: int, modifier: int) -> int:
    """Shooting to-hit score, 7 − BS − modifier (CORE.SHOOT.TO_HIT).

    Returns the modified score needed: 2..6 is a single D6; 7, 8, 9 mean a 6
    followed by 4+, 5+, 6+; 10 or more is impossible. A natural 1 always misses,
    so the score is never below 2.
    """
    return max(2, 7 - bs - modifier)


def shot_hits(needed: int, first: int, second: int | None = None) -> bool:
    """Whether a shot hits, given the needed score and the dice (CORE.SHOOT.TO_HIT).

    ``second`` is the follow-up die for needs of 7..9 (ignored otherwise).
    """
    if first == 1 or needed >= 10:
        return False
    if needed <= 6:
        return first >= needed
    return first == 6 and second is not None and second >= needed - 3


def shot_chance(needed: int) -> float:
    """The chance that one shot needing ``needed`` hits (CORE.SHOOT.TO_HIT): (7 − n)/6 for 2..6,
    (10 − n)/36 for 7..9 (a 6, then 4+, 5+ or 6+), 0 from 10."""
    if needed >= 10:
        return 0.0
    if needed > 6:
        return (10 - needed) / 36
    return (7 - max(2, needed)) / 6


def armour_save_needed(base_save: int, strength: int, armour_piercing: bool = False) -> int:
    """Modified armour save (CORE.SAVE.MODIFIERS).

    The save worsens by 1 per point of S above 3 and by a further 1 for
    Armour Piercing. A result above 6 means no save (returns 7).
    """
    needed = base_save + max(0, strength - 3) + (1 if armour_piercing else 0)
    return min(IMPOSSIBLE, max(1, needed))


def save_passes(needed: int, face: int) -> bool:
    """A save succeeds on ``face`` ≥ needed; a natural 1 always fails (CORE.SAVE.MODIFIERS)."""
    return needed <= 6 and face != 1 and face >= needed


@dataclass(frozen=True, slots=True)
class MissileWeapon:
    """A missile weapon (CORE.SHOOT.WEAPONS): range in inches, S (None = user's)."""

    name: str
    range: float
    strength: int | None
    move_or_fire: bool = False
    armour_piercing: bool = False
    quick_to_fire: bool = False
    multiple_shots: int = 1


MISSILE_WEAPONS: dict[str, MissileWeapon] = {
    "short_bow": MissileWeapon("short_bow", 16.0, 3),
    "bow": MissileWeapon("bow", 24.0, 3),
    "longbow": MissileWeapon("longbow", 30.0, 3),
    "crossbow": MissileWeapon("crossbow", 30.0, 4, move_or_fire=True),
    "handgun": MissileWeapon("handgun", 24.0, 4, move_or_fire=True, armour_piercing=True),
    "repeater_crossbow": MissileWeapon("repeater_crossbow", 24.0, 3, multiple_shots=2),
    "pistol": MissileWeapon("pistol", 8.0, 4, armour_piercing=True, quick_to_fire=True),
    "javelin": MissileWeapon("javelin", 8.0, None, quick_to_fire=True),
    "sling": MissileWeapon("sling", 18.0, 3),
    # War machines (CORE.WM.PROFILES; their shots are resolved by env.rules.war_machines): the maximum range and S.
    "great_cannon": MissileWeapon("great_cannon", 48.0, 10, move_or_fire=True),
    "light_cannon": MissileWeapon("light_cannon", 36.0, 10, move_or_fire=True),
    "stone_thrower": MissileWeapon("stone_thrower", 60.0, 3, move_or_fire=True),
    "bolt_thrower": MissileWeapon("bolt_thrower", 48.0, 6, move_or_fire=True),
    "flame_cannon": MissileWeapon("flame_cannon", 12.0, 5, move_or_fire=True),
}


@dataclass(frozen=True, slots=True)
class MeleeEffect:
    """What a melee weapon does in one round (CORE.WEAPON.MELEE)."""

    strength_bonus: int = 0
    extra_attacks: int = 0
    loses_shield: bool = False
    strikes_last: bool = False
    extra_rank: bool = False


def melee_effect(weapon: str, troop_type: str, round_one: bool, charged: bool) -> MeleeEffect:
    """The effect of a melee weapon this round (CORE.WEAPON.MELEE).

    Args:
        weapon: weapon id.
        troop_type: the wielder's troop type (halberd and spear are infantry weapons).
        round_one: this is R1 of the combat (CORE.CC.ROUNDS).
        charged: the wielder's unit charged this turn (lances and cavalry
            spears strike harder; spears do not fight in an extra rank).
    """
    round_one_after_charge = round_one and charged
    infantry = troop_type in ("infantry", "monstrous_infantry")
    if weapon == "additional_hand_weapon":
        return MeleeEffect(extra_attacks=1, loses_shield=True)
    if weapon == "great_weapon":
        return MeleeEffect(strength_bonus=2, loses_shield=True, strikes_last=True)
    if weapon == "halberd" and infantry:
        return MeleeEffect(strength_bonus=1, loses_shield=True)
    if weapon == "spear" and infantry:
        return MeleeEffect(extra_rank=not charged)
    if weapon == "cavalry_spear":
        return MeleeEffect(strength_bonus=1 if round_one_after_charge else 0)
    if weapon == "lance":
        return MeleeEffect(strength_bonus=2 if round_one_after_charge else 0)
    if weapon == "flail":
        return MeleeEffect(strength_bonus=2 if round_one else 0, loses_shield=True)
    return MeleeEffect()


def clamp_characteristic(value: int, name: str) -> int:
    """Clamp a modified characteristic to 1..10 (M, W, A may reach 0) (CORE.CONV.CHARACTERISTICS)."""
    low = 0 if name in ("M", "W", "A") else 1
    return max(low, min(10, value))


def round_up_half(value: int) -> int:
    """Half of a count, rounded up (CORE.CONV.ROUNDING)."""
    return math.ceil(value / 2)
