"""The spell table of the eight lores as data (CORE.MAGIC.SPELLS, CORE.MAGIC.SPELL.*).

Pure data, no rules code: :mod:`env.rules.spell_effects` runs each spell's
``effect`` kind with its ``params``. Ranges are in inches (CORE.CONV.UNITS),
casting values (CV) are casting totals on D6s.

Spell types (CORE.MAGIC.TARGETING): ``M`` missile, ``D`` direct, ``H`` hex,
``A`` augment, ``S`` self.

Effect kinds and their params:

=============  ================================================================
kind           params
=============  ================================================================
hits           ``dice`` (number of D6 hits, 0 = fixed), ``fixed`` (added hits),
               ``S`` (hit strength, None = Metal), ``save`` (armour save
               allowed), ``comet`` (also every unit within 3")
single_hit     ``S`` (None = Metal), ``wounds`` ("D3" or "D6" on one model)
lasting        ``duration`` ("N" = until the caster's next magic phase,
               "EoT" = end of this player turn, "next_turn" = the target's
               next player turn), ``mods`` (see :mod:`env.rules.magic`)
spirit_leech   — (2D6 + Ld each; the excess in W, no saves)
dwellers       — (an S test per model; failures removed, no saves)
steed          ``distance`` (inches flown by a friendly character)
lurker         — (a friendly unit makes a normal move)
=============  ================================================================

Lore access (CORE.MAGIC.LORE_ACCESS) names armies of the source; our
factions map onto them as :data:`FACTION_LORES` says: men are the Empire
(all eight lores), elves the High Elves (all eight), orcs the Goblins (Fire
only) and dwarfs have no wizards (no lore; rune priests carry bound items).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

LORES: tuple[str, ...] = ("fire", "beasts", "metal", "light", "heavens", "life", "shadow", "death")
"""Lore ids, in the order of RULESET.md §3.3."""

LORE_ARMIES: dict[str, tuple[str, ...]] = {
    "fire": ("Empire", "High Elves", "Goblins"),
    "beasts": ("Empire", "High Elves"),
    "metal": ("Empire", "High Elves"),
    "light": ("Empire", "High Elves"),
    "heavens": ("Empire", "High Elves"),
    "life": ("Empire", "High Elves"),
    "shadow": ("Empire", "Vampires", "High Elves"),
    "death": ("Empire", "Necromancers", "High Elves"),
}
"""CORE.MAGIC.LORE_ACCESS as stated: lore -> source armies."""

FACTION_ARMY: dict[str, str | None] = {"men": "Empire", "elves": "High Elves", "orcs": "Goblins", "dwarfs": None}
"""Our factions as the source's armies (DEFAULT: nearest match; dwarfs have no wizards)."""

FACTION_LORES: dict[str, tuple[str, ...]] = {
    faction: tuple(lore for lore in LORES if army is not None and army in LORE_ARMIES[lore])
    for faction, army in FACTION_ARMY.items()
}
"""Lores each faction may use (CORE.MAGIC.LORE_ACCESS through :data:`FACTION_ARMY`)."""


@dataclass(frozen=True, slots=True)
class Spell:
    """One spell of the table (CORE.MAGIC.SPELL.<LORE>.<n>).

    Attributes:
        id: the rule ID, e.g. ``"CORE.MAGIC.SPELL.FIRE.1"``.
        lore: lore id; number: 1..4 (spell #1 is always known).
        name: display name.
        cv: casting value; range: inches; type: M, D, H, A or S.
        effect: effect kind (module table); params: its parameters.
    """

    id: str
    lore: str
    number: int
    name: str
    cv: int
    range: float
    type: str
    effect: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def hostile(self) -> bool:
        """Whether the spell targets enemies (M, D, H)."""
        return self.type in ("M", "D", "H")


def _s(lore: str, n: int, name: str, cv: int, rng: float, kind: str, effect: str, **params: Any) -> Spell:
    return Spell(f"CORE.MAGIC.SPELL.{lore.upper()}.{n}", lore, n, name, cv, rng, kind, effect, params)


def _hits(dice: int, s: int | None, save: bool = True, fixed: int = 0, comet: bool = False) -> dict[str, Any]:
    return {"dice": dice, "fixed": fixed, "S": s, "save": save, "comet": comet}


_TABLE: tuple[Spell, ...] = (
    _s("fire", 1, "Fireball", 5, 24, "M", "hits", **_hits(1, 4)),
    _s("fire", 2, "Flaming Swords", 7, 12, "A", "lasting", duration="EoT", mods={"cc_S": 1, "cc_flaming": 1}),
    _s("fire", 3, "Fire Storm", 9, 18, "D", "hits", **_hits(2, 4)),
    _s("fire", 4, "Conflagration", 12, 24, "D", "hits", **_hits(2, 5)),
    _s("beasts", 1, "Flock of Doom", 6, 18, "D", "hits", **_hits(2, 3)),
    _s("beasts", 2, "Beast Strength", 6, 12, "A", "lasting", duration="N", mods={"S": 1, "T": 1}),
    _s("beasts", 3, "Beast Cowers", 7, 24, "H", "lasting", duration="next_turn", mods={"no_charge": 1}),
    _s("beasts", 4, "Amber Spear", 9, 24, "M", "single_hit", S=6, wounds="D3"),
    _s("metal", 1, "Searing Doom", 6, 24, "M", "hits", **_hits(2, None, save=False)),
    _s("metal", 2, "Glittering Robe", 6, 12, "A", "lasting", duration="N", mods={"ward": 5}),
    _s("metal", 3, "Burning Iron", 8, 24, "M", "single_hit", S=None, wounds="D6"),
    _s("metal", 4, "Transmutation", 10, 24, "H", "lasting", duration="N", mods={"WS": -1, "save": 1}),
    _s("light", 1, "Burning Gaze", 5, 18, "M", "hits", **_hits(1, 4)),
    _s("light", 2, "Speed of Light", 7, 12, "A", "lasting", duration="EoT", mods={"WS": 2, "I": 2}),
    _s("light", 3, "Dazzling Light", 7, 18, "H", "lasting", duration="N", mods={"WS": -2, "BS": -2}),
    _s("light", 4, "Banishment", 10, 24, "D", "hits", **_hits(2, 5)),
    _s("heavens", 1, "Storm of Hail", 5, 24, "D", "hits", **_hits(1, 3)),
    _s("heavens", 2, "Portent of Fate", 6, 12, "A", "lasting", duration="EoT", mods={"reroll_hits": 1}),
    _s("heavens", 3, "Curse of Storms", 8, 24, "H", "lasting", duration="N", mods={"halve_M": 1, "no_march": 1, "no_fly": 1}),
    _s("heavens", 4, "Comet", 11, 24, "D", "hits", **_hits(1, 4, comet=True)),
    _s("life", 1, "Mistress of the Marsh", 7, 24, "H", "lasting", duration="N", mods={"difficult": 1}),
    _s("life", 2, "Earth Blood", 6, 12, "A", "lasting", duration="N", mods={"regeneration": 5}),
    _s("life", 3, "Flesh to Stone", 8, 12, "A", "lasting", duration="N", mods={"T": 1}),
    _s("life", 4, "Dwellers Below", 12, 18, "D", "dwellers"),
    _s("shadow", 1, "Steed of Shadows", 5, 12, "A", "steed", distance=20.0),
    _s("shadow", 2, "Shadow Dart", 6, 24, "M", "hits", **_hits(1, 4, save=False)),
    _s("shadow", 3, "Enfeeble", 8, 24, "H", "lasting", duration="N", mods={"S": -1, "T": -1}),
    _s("shadow", 4, "Unseen Lurker", 9, 12, "A", "lurker"),
    _s("death", 1, "Spirit Leech", 6, 12, "D", "spirit_leech"),
    _s("death", 2, "Doom and Darkness", 6, 24, "H", "lasting", duration="N", mods={"Ld": -2}),
    _s("death", 3, "Dreadknight", 7, 12, "A", "lasting", duration="N", mods={"fear": 1}),
    _s("death", 4, "Wind of Death", 11, 24, "D", "hits", **_hits(2, 4, save=False)),
)

SPELLS: dict[str, Spell] = {sp.id: sp for sp in _TABLE}
"""Every spell by rule ID (32 = 8 lores x 4)."""


def lore_spells(lore: str) -> list[Spell]:
    """The four spells of ``lore``, #1 first. Raises KeyError for an unknown lore."""
    if lore not in LORES:
        raise KeyError(f"unknown lore {lore!r}")
    return [sp for sp in _TABLE if sp.lore == lore]


def spell(spell_id: str) -> Spell:
    """The spell with this rule ID. Raises KeyError."""
    return SPELLS[spell_id]
