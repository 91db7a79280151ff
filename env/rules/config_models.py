"""Game data of units: rule tables, the strict base model of every config file, and the pydantic models of
factions (unit types, options, kit) and army lists, with their loaders.

Units: distances and coordinates are in inches (CORE.CONV.UNITS), base sizes in
millimetres (CORE.GEO.BASES), costs in points.
"""

from __future__ import annotations

import math
import re
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from shapely import affinity
from shapely.geometry import Polygon, box

from battleline.env.rules.config_files import ConfigError, _load, army_path, display_path, list_factions
from battleline.env.rules.spells import FACTION_LORES, LORES, SPELLS

MM_PER_INCH = 25.4
EPS = 0.01
"""Geometric tolerance in inches (CORE.CONV.UNITS)."""

TroopType = Literal["infantry", "monstrous_infantry", "cavalry", "monster", "chariot", "war_machine"]
Armour = Literal["none", "light", "heavy", "plate"]
Melee = Literal[
    "hand_weapon", "additional_hand_weapon", "great_weapon", "halberd", "spear", "cavalry_spear", "lance", "flail"
]
Missile = Literal[
    "short_bow", "bow", "longbow", "crossbow", "handgun", "repeater_crossbow", "pistol", "javelin", "sling",
    "great_cannon", "light_cannon", "stone_thrower", "bolt_thrower", "flame_cannon",
]
MACHINE_WEAPONS: frozenset[str] = frozenset({"great_cannon", "light_cannon", "stone_thrower", "bolt_thrower", "flame_cannon"})
"""Missile ids that are war machines (CORE.WM.PROFILES): only a ``war_machine`` unit may have one."""
CommandModel = Literal["champion", "standard", "musician"]
TerrainKind = Literal["hill", "woods", "marsh", "ford", "rubble", "hedge", "fence", "wall", "building", "rocks", "lake"]

BASES_MM: dict[str, tuple[float, float]] = {
    "infantry": (20.0, 20.0),
    "monstrous_infantry": (40.0, 40.0),
    "cavalry": (25.0, 50.0),
    "monster": (50.0, 50.0),
    "chariot": (50.0, 100.0),
    "war_machine": (50.0, 100.0),
}
"""Base width x depth in mm per troop type (CORE.GEO.BASES)."""

MOUNTED: frozenset[str] = frozenset({"cavalry", "chariot", "monster"})
"""Troop types whose model counts as mounted for CORE.SAVE.ARMOUR_TABLE."""

BODY_ARMOUR_SAVE: dict[str, int] = {"none": 7, "light": 6, "heavy": 5, "plate": 4}
"""Unmodified save per body armour (CORE.SAVE.ARMOUR_TABLE); 7 = no save."""

IMPASSABLE: frozenset[str] = frozenset({"building", "rocks", "lake"})
"""Terrain kinds no unit may stand in (CORE.TERRAIN.TYPES)."""

SPECIAL_RULES: frozenset[str] = frozenset(
    {
        "always_strikes_first", "always_strikes_last", "aquatic", "armour_piercing", "breath_weapon",
        "devastating_charge", "ethereal", "extra_attack", "extra_rank", "fast_cavalry", "fear", "flaming",
        "flammable", "fly", "frenzy", "hatred", "hover", "immune_to_psychology", "killing_blow",
        "large_target", "loremaster", "poison", "quick_to_fire", "regeneration", "scouts", "skirmishers",
        "slow_to_fire", "sniper", "stubborn", "stupidity", "swarm", "swiftstride", "terror", "unbreakable",
        "volley_fire",
    }
)
"""Special rule ids (CORE.SR.*, CORE.TYPE.SKIRMISHERS)."""

SPECIAL_RULE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"multiple_shots_[2-9]"),
    re.compile(r"impact_hits_([1-9]|d3|d6)"),
    re.compile(r"hatred_[a-z]+"),
    re.compile(r"magic_resistance_[1-4]"),
    re.compile(r"regeneration_[2-6]"),
    re.compile(r"ward_save_[2-6]"),
)
"""Parameterised special rule ids (CORE.SR.MULTIPLE_SHOTS, IMPACT_HITS, MAGIC_RESISTANCE, ...).

``impact_hits_d3`` / ``impact_hits_d6`` roll per model; ``hatred_<faction>`` hates one faction only
(plain ``hatred`` hates every enemy)."""


# ----------------------------------------------------------------------------- pure rule helpers
def armour_save_value(armour: str = "none", shield: bool = False, mount: bool = False, barding: bool = False) -> int:
    """Armour save needed on a D6 (CORE.SAVE.ARMOUR_TABLE); 7 means no save.

    Light 6+, heavy 5+, plate 4+. A shield, a mount and barding each improve the save
    by 1; with no body armour each counts as 6+ on its own. The best save is 1+.
    """
    save = BODY_ARMOUR_SAVE[armour] - int(shield) - int(mount) - int(barding)
    return max(1, save)


def is_known_special_rule(rule: str) -> bool:
    """Whether ``rule`` is a special rule id the rules know (see :data:`SPECIAL_RULES`)."""
    return rule in SPECIAL_RULES or any(p.fullmatch(rule) for p in SPECIAL_RULE_PATTERNS)


def fmt_num(v: float) -> str:
    """A number as short text: 72.0 -> '72', 7.5 -> '7.5'."""
    return f"{v:g}"


def footprint(base_mm: tuple[float, float], models: int, files: int, x: float, y: float, facing: float) -> Polygon:
    """The unit's footprint rectangle in inches (CORE.GEO.FORMATION, CORE.GEO.FOOTPRINT).

    Width = files x base width, depth = ceil(models/files) x base depth, centred at
    (x, y), front edge pointing along ``facing`` (degrees CCW from +x; 90 = towards y=48).
    """
    w = files * base_mm[0] / MM_PER_INCH
    d = math.ceil(models / files) * base_mm[1] / MM_PER_INCH
    rect = box(-w / 2, -d / 2, w / 2, d / 2)  # front edge at +y: facing 90
    return affinity.translate(affinity.rotate(rect, facing - 90.0, origin=(0, 0)), x, y)


# ----------------------------------------------------------------------------- models
def _takes_numbers(annotation: Any) -> bool:
    """Whether a field annotation is a number (int, float, or a union of them with None) and not a bool."""
    args = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    return bool not in args and any(a in (int, float) for a in args)


Pair = Annotated[tuple[float, float], Strict(False)]
"""Two numbers, e.g. a point (x, y) or the table's width and depth: a YAML list is taken for the tuple, while the
numbers in it stay strict like every :class:`ConfigModel` number."""


class ConfigModel(BaseModel):
    """Every config model: unknown fields, non-finite floats (NaN, ±Inf) and YAML booleans given for numbers
    (``x: true`` is not 1, also inside a list such as ``table``) are errors.

    Values are strict (pydantic strict mode): a number is a YAML number, not a string (``x: '10'`` is an error,
    also inside lists and mappings); an integer field takes no float (``5.0`` is not 5), while a float field takes
    an integer; a boolean is ``true`` or ``false``, not ``'yes'`` or 1. A tuple field takes a YAML list only where
    its annotation says so (:data:`Pair`).
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans_for_numbers(cls, v: Any, info: ValidationInfo) -> Any:
        annotation = cls.model_fields[info.field_name].annotation if info.field_name else None
        items = get_args(annotation) if get_origin(annotation) in (list, tuple) else ()
        if (isinstance(v, bool) and _takes_numbers(annotation)) or (
                isinstance(v, (list, tuple)) and items and all(_takes_numbers(a) for a in items if a is not Ellipsis)
                and any(isinstance(x, bool) for x in v)):
            raise ValueError("expected a number, got a boolean (true/false)")
        return v


Characteristic = Annotated[int, Field(ge=1, le=10)]
"""A characteristic value: 1..10, the range CORE.CONV.CHARACTERISTICS clamps to."""

MayBeZero = Annotated[int, Field(ge=0, le=10)]
"""A characteristic that may be 0 (M, A: CORE.CONV.CHARACTERISTICS lets them reach 0; BS: see :class:`ProfileConfig`)."""


class ProfileConfig(ConfigModel):
    """A characteristic profile (CORE.CONV.CHARACTERISTICS); M in inches, each value 1..10 but M, BS and A 0..10.

    CORE.CONV.CHARACTERISTICS clamps every characteristic to 1..10 except M, W and A, which may reach 0.
    M and A may be 0 in a profile; W may not: a model reaches 0 Wounds only when it is slain. BS 0 is kept for a
    model that does not shoot (the shipped monsters and chariots). Cavalry profiles combine rider and mount (one
    model, one profile).
    """

    M: MayBeZero
    WS: Characteristic
    BS: MayBeZero
    S: Characteristic
    T: Characteristic
    W: Characteristic
    I: Characteristic  # noqa: E741 - Initiative
    A: MayBeZero
    Ld: Characteristic


class CommandCosts(ConfigModel):
    """Points for each command model; None = not available to the unit (CORE.SR.STANDARD, MUSICIAN)."""

    champion: int | None = Field(default=None, ge=0)
    standard: int | None = Field(default=None, ge=0)
    musician: int | None = Field(default=None, ge=0)


def _check_rules(rules: list[str]) -> list[str]:
    for rule in rules:
        if not is_known_special_rule(rule):
            raise ValueError(f"unknown special rule '{rule}'")
    return rules


class OptionEffect(ConfigModel):
    """What an option may change (every key optional); ``special_rules`` are added."""

    armour: Armour | None = None
    shield: bool | None = None
    barding: bool | None = None
    melee: Melee | None = None
    missile: Missile | None = None
    special_rules: list[str] = []
    battle_standard: bool | None = None
    wizard_level: int | None = Field(default=None, ge=1, le=4)
    dispel_scrolls: int | None = Field(default=None, ge=1, le=12)

    @field_validator("special_rules")
    @classmethod
    def _known(cls, rules: list[str]) -> list[str]:
        return _check_rules(rules)


class UnitOption(ConfigModel):
    """An upgrade: ``points_per_model`` x models + ``points``; ``effect`` changes the kit.

    effect keys: armour, shield, barding, melee, missile, special_rules (added),
    battle_standard (the model is the army's BSB, CORE.SR.BSB), wizard_level
    (the new level, CORE.MAGIC.WIZARDS), dispel_scrolls (scrolls carried,
    CORE.MAGIC.SCROLL).
    """

    id: str
    points_per_model: int = Field(default=0, ge=0)
    points: int = Field(default=0, ge=0)
    effect: dict[str, Any]

    @field_validator("effect")
    @classmethod
    def _check_effect(cls, effect: dict[str, Any]) -> dict[str, Any]:
        for key, value in effect.items():
            if key not in OptionEffect.model_fields:
                raise ValueError(f"unknown effect '{key}' (allowed: {', '.join(OptionEffect.model_fields)})")
            OptionEffect.model_validate({key: value})
        return effect

    @property
    def is_battle_standard(self) -> bool:
        """True for the Battle Standard Bearer upgrade (CORE.SETUP.ARMIES, CORE.SR.BSB)."""
        return self.id == "battle_standard" or bool(self.effect.get("battle_standard"))


class BoundSpellConfig(ConfigModel):
    """A bound item (CORE.MAGIC.BOUND): it casts ``spell`` (a CORE.MAGIC.SPELL.* ID) at power level ``power``."""

    name: str
    spell: str
    power: int = Field(ge=1, le=12)

    @field_validator("spell")
    @classmethod
    def _known_spell(cls, spell: str) -> str:
        if spell not in SPELLS:
            raise ValueError(f"unknown spell '{spell}'")
        return spell


class RiderConfig(ConfigModel):
    """The rider of a ridden monster or the crew of a chariot (CORE.TYPE.MONSTER, CORE.SHOOT.ALLOCATE).

    Its save counts the mount (CORE.SAVE.ARMOUR_TABLE).
    """

    name: str
    profile: ProfileConfig
    armour: Armour = "none"
    shield: bool = False

    def armour_save(self) -> int:
        """The rider's unmodified save, mount included; 7 = none."""
        return armour_save_value(self.armour, self.shield, mount=True)


PROTECTIONS: tuple[str, ...] = (
    "aegis", "regeneration", "distracting", "flammable", "hard_target", "parry", "cannot_be_stomped",
)
"""T9A personal protections a unit type's ``t9a.protections`` may name (T9A.PP.*)."""
ATTRIBUTES: tuple[str, ...] = ("multiple_wounds", "area_attack", "divine", "lethal_strike", "flaming", "stomp")
"""T9A attack attributes a unit type's ``t9a.attributes`` may name (T9A.AA.*, T9A.STOMP)."""
ATTRIBUTE_TAGS: tuple[str, ...] = ("close_combat", "shooting", "attack_weapon")
"""The type tags of an attack attribute (T9A.AA.SCOPE, AA-2; A13: a set, Shooting may join the others)."""
ATTRIBUTE_PARTS: tuple[str, ...] = ("model", "mount", "rider", "melee_weapon", "missile_weapon")
"""What an attack attribute is given to (T9A.AA.SCOPE, AA-1): a model part or one of the unit's weapons."""
ARTILLERY: tuple[str, ...] = ("bolt_thrower", "cannon", "catapult", "flamethrower", "volley_gun")
"""T9A artillery profiles (T9A.ART.PROFILES)."""


class T9AAttributeConfig(ConfigModel):
    """One attack attribute with its scope (T9A.AA.SCOPE): ``attribute`` is the text
    (``"multiple_wounds (2 against large)"``), ``part`` what carries it (:data:`ATTRIBUTE_PARTS`),
    ``tags`` its types (:data:`ATTRIBUTE_TAGS`). Unset tags: ``[close_combat, shooting]`` on a model
    part, ``[attack_weapon]`` on a weapon; ``attack_weapon`` needs a weapon part.
    """

    attribute: str
    tags: list[Literal["close_combat", "shooting", "attack_weapon"]] | None = None
    part: Literal["model", "mount", "rider", "melee_weapon", "missile_weapon"] = "model"


class T9AConfig(ConfigModel):
    """What the T9A modules read of a unit type (RULESET.md §6.1); ignored unless a scenario names them.

    ``size`` overrides the Size the troop type gives (T9A.SIZE). ``protections`` and ``attributes``
    are written ``name``, ``name (X)`` or ``name (X against conditions)``
    (:mod:`env.rules.t9a.conditions`, T9A.PP.AGAINST, T9A.AA.CONDITIONS). ``artillery`` names the
    T9A profile a war machine fires with (T9A.ART.PROFILES); unset, its core machine maps to one.
    An ``attributes`` entry is a text (given to the whole model, tags Close Combat and Shooting) or a
    :class:`T9AAttributeConfig` mapping naming its part and tags (T9A.AA.SCOPE).
    ``rider_protections`` are the protections of a ridden monster's or chariot's rider part: they cover
    the whole model unless the mount is Gigantic (T9A.PP.WHOLE_MODEL).
    """

    size: Literal["standard", "large", "gigantic"] | None = None
    protections: list[str] = []
    rider_protections: list[str] = []
    attributes: list[str | T9AAttributeConfig] = []
    artillery: Literal["bolt_thrower", "cannon", "catapult", "flamethrower", "volley_gun"] | None = None

    @field_validator("protections", "rider_protections")
    @classmethod
    def _known_protections(cls, texts: list[str]) -> list[str]:
        return _check_t9a(texts, PROTECTIONS, "protection")

    @field_validator("attributes", mode="before")
    @classmethod
    def _known_attributes(cls, entries: Any) -> list[str | T9AAttributeConfig]:
        if not isinstance(entries, list):
            raise ValueError("expected a list of attributes")
        out: list[str | T9AAttributeConfig] = []
        for i, entry in enumerate(entries):
            out.append(_attribute_entry(i, entry))
        texts = [e if isinstance(e, str) else e.attribute for e in out]
        _check_t9a(texts, ATTRIBUTES, "attribute")
        from battleline.env.rules.t9a.conditions import parse

        for text in texts:  # T9A.AA.MULTIPLE_WOUNDS, T9A.AA.AREA_ATTACK take X
            a = parse(text, known=PROTECTIONS + ATTRIBUTES)
            if a.name in ("multiple_wounds", "area_attack") and not _whole_or_dice(a.params):
                raise ValueError(f"'{text}': {a.name} needs X, a whole number, d3 or d6 (at least 1)")
            if a.name == "stomp" and a.params and not _whole_or_dice(a.params):  # T9A.STOMP: X, 1 unwritten
                raise ValueError(f"'{text}': stomp takes X, a whole number, d3 or d6 (at least 1)")
            if a.name in ("divine", "lethal_strike", "flaming") and a.params:
                raise ValueError(f"'{text}': {a.name} takes no parameter (only 'against' conditions)")
        return out


def _attribute_entry(i: int, entry: Any) -> str | T9AAttributeConfig:
    """Entry ``i`` of ``t9a.attributes`` as a text or a :class:`T9AAttributeConfig` (T9A.AA.SCOPE);
    raises ValueError (one line) naming the entry and its fault."""
    if isinstance(entry, str | T9AAttributeConfig):
        return entry
    if not isinstance(entry, dict):
        raise ValueError(f"entry {i}: expected a text or a mapping {{attribute, tags, part}}, got {entry!r}"[:160])
    try:
        cfg = T9AAttributeConfig.model_validate(entry)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"entry {i}: {where}: {err['msg']}") from None
    tags = cfg.tags if cfg.tags is not None else []
    weapon = cfg.part in ("melee_weapon", "missile_weapon")
    if cfg.tags is not None and not tags:
        raise ValueError(f"entry {i}: tags is empty (name close_combat, shooting or attack_weapon)")
    if len(set(tags)) != len(tags):
        raise ValueError(f"entry {i}: tags name a tag twice")
    if "attack_weapon" in tags and not weapon:
        raise ValueError(f"entry {i}: tag attack_weapon needs part melee_weapon or missile_weapon, not {cfg.part}")
    return cfg


def _check_t9a(texts: list[str], names: tuple[str, ...], what: str) -> list[str]:
    """Each text parses (T9A.AA.CONDITIONS) and names a known ``what``; raises ValueError (one line) if not."""
    from battleline.env.rules.t9a.conditions import ConditionError, parse

    for text in texts:
        try:
            attr = parse(text, known=PROTECTIONS + ATTRIBUTES)
        except ConditionError as exc:
            raise ValueError(str(exc)) from None
        if attr.name not in names:
            raise ValueError(f"unknown {what} '{attr.name}' (known: {', '.join(names)})")
        if what == "protection":
            _check_protection_params(text, attr.name, attr.params)
    return texts


def _whole_or_dice(param: str) -> bool:
    """Whether an attribute's X is a whole number from 1, ``d3`` or ``d6`` (T9A.AA.MULTIPLE_WOUNDS, T9A.STOMP)."""
    return (param.isdigit() and int(param) >= 1) or param in ("d3", "d6")


def _check_protection_params(text: str, name: str, params: str) -> None:
    """Aegis and Regeneration take X+ with X from 2 to 6 (T9A.PP.AEGIS, T9A.PP.REGENERATION: a special save on
    X+, a natural 1 failing); the other protections take none (Hard Target stacks by instances, T9A.PP.HARD_TARGET:
    name it twice). Raises ValueError (one line)."""
    if name in ("aegis", "regeneration"):
        if not re.fullmatch(r"[2-6]\+", params):
            raise ValueError(f"'{text}': {name} needs its save X+, X from 2 to 6 (e.g. '{name} (4+)')")
    elif params:
        raise ValueError(f"'{text}': {name} takes no parameter (only 'against' conditions)")


class UnitTypeConfig(ConfigModel):
    """A unit type of a faction: profile, kit, special rules, size limits and costs (points).

    War machines (CORE.WM.*): ``troop_type: war_machine`` with a machine as
    ``missile`` (:data:`MACHINE_WEAPONS`); the profile is the crew's, each
    model one crew member, and min_size = max_size = the machine's crew. ``rider`` (optional): a second
    profile for a single monster or chariot.

    Magic (CORE.MAGIC.WIZARDS): ``wizard_level`` 0 (none) to 4 and the
    ``lores`` it may take (the first is the default); ``dispel_scrolls``
    carried (CORE.MAGIC.SCROLL); ``bound_spells`` (CORE.MAGIC.BOUND).
    """

    id: str
    name: str
    troop_type: TroopType
    character: bool = False
    profile: ProfileConfig
    armour: Armour = "none"
    shield: bool = False
    barding: bool = False
    melee: Melee = "hand_weapon"
    missile: Missile | None = None
    special_rules: list[str] = []
    points_per_model: int = Field(ge=0)
    min_size: int = Field(default=1, ge=1)
    max_size: int | None = Field(default=None, ge=1)
    command: CommandCosts = CommandCosts()
    options: list[UnitOption] = []
    max_per_army: int | None = Field(default=None, ge=1)
    role: list[str] = []
    wizard_level: int = Field(default=0, ge=0, le=4)
    lores: list[str] = []
    dispel_scrolls: int = Field(default=0, ge=0, le=12)
    bound_spells: list[BoundSpellConfig] = []
    rider: RiderConfig | None = None
    t9a: T9AConfig = T9AConfig()

    @field_validator("special_rules")
    @classmethod
    def _known_rules(cls, rules: list[str]) -> list[str]:
        return _check_rules(rules)

    @field_validator("lores")
    @classmethod
    def _known_lores(cls, lores: list[str]) -> list[str]:
        for lore in lores:
            if lore not in LORES:
                raise ValueError(f"unknown lore '{lore}' (known: {', '.join(LORES)})")
        return lores

    @field_validator("options")
    @classmethod
    def _unique_options(cls, options: list[UnitOption]) -> list[UnitOption]:
        _check_unique([o.id for o in options], "option")
        return options

    @model_validator(mode="after")
    def _consistent(self) -> UnitTypeConfig:
        if self.max_size is not None and self.max_size < self.min_size:
            raise ValueError(f"max_size {self.max_size} is below min_size {self.min_size}")
        if self.character and (self.min_size != 1 or self.max_size != 1):
            raise ValueError("a character is a single model: set min_size: 1 and max_size: 1")
        for option in (None, *self.options):  # the kit, and the kit with each option (it may change both)
            effect = option.effect if option is not None else {}
            barding, missile = effect.get("barding", self.barding), effect.get("missile", self.missile)
            where = f"option '{option.id}': " if option is not None else ""
            if barding and self.troop_type not in MOUNTED:
                raise ValueError(f"{where}barding needs a mount, not troop type '{self.troop_type}'")
            if missile in MACHINE_WEAPONS and self.troop_type != "war_machine":
                raise ValueError(f"{where}only a war_machine may have the machine '{missile}'")
            if self.troop_type == "war_machine":
                self._check_machine(missile, option)
        if self.rider is not None and (self.troop_type not in ("monster", "chariot") or self.max_size != 1):
            raise ValueError("a rider needs a single monster or chariot (max_size: 1)")
        if self.t9a.artillery is not None and self.troop_type != "war_machine":
            raise ValueError(f"t9a.artillery: only a war_machine fires a T9A artillery profile, not troop type "
                             f"'{self.troop_type}' (T9A.ART.PROFILES)")
        if self.t9a.rider_protections and self.rider is None:
            raise ValueError("t9a.rider_protections: the unit type has no rider (T9A.PP.WHOLE_MODEL)")
        levels = self.wizard_level or any(o.effect.get("wizard_level") for o in self.options)
        if bool(levels) != bool(self.lores):
            raise ValueError("a wizard needs both a wizard_level (or a level option) and its lores")
        return self

    def _check_machine(self, missile: str | None, option: UnitOption | None) -> None:
        """A war machine's ``missile`` (its kit's, or the one ``option`` gives) names a machine of
        :data:`env.rules.war_machines.MACHINES` whose crew is the unit's size (CORE.WM.PROFILES).

        Raises:
            ValueError: no machine, a weapon that is not one, or another crew than min_size = max_size.
        """
        from battleline.env.rules.war_machine_profiles import MACHINES

        where = f"option '{option.id}': " if option is not None else ""
        if missile not in MACHINES:
            got = "none" if missile is None else f"'{missile}'"
            raise ValueError(f"{where}a war_machine's missile must be a machine ({', '.join(MACHINES)}), got {got}")
        crew = MACHINES[missile].crew
        if (self.min_size, self.max_size) == (crew, crew):
            return
        if option is None:
            raise ValueError(f"a {missile} has a crew of {crew}: set min_size and max_size to {crew}")
        raise ValueError(f"{where}a {missile} has a crew of {crew}, not the unit's {self.min_size} "
                         f"(an option keeps the crew)")

    def base_mm(self) -> tuple[float, float]:
        """Base width and depth in mm (CORE.GEO.BASES)."""
        return BASES_MM[self.troop_type]

    def base_inches(self) -> tuple[float, float]:
        """Base width and depth in inches (CORE.GEO.BASES, CORE.CONV.UNITS)."""
        w, d = self.base_mm()
        return w / MM_PER_INCH, d / MM_PER_INCH

    def armour_save(self, armour: str | None = None, shield: bool | None = None, barding: bool | None = None) -> int:
        """Unmodified armour save (CORE.SAVE.ARMOUR_TABLE, CORE.TYPE.CAVALRY); 7 = none.

        Arguments left as None take the unit type's own kit; the mount bonus comes
        from the troop type (cavalry, chariot, monster).
        """
        return armour_save_value(
            self.armour if armour is None else armour,
            self.shield if shield is None else shield,
            self.troop_type in MOUNTED,
            self.barding if barding is None else barding,
        )

    def option(self, option_id: str) -> UnitOption | None:
        """The option with this id, or None."""
        return next((o for o in self.options if o.id == option_id), None)

    def with_options(self, option_ids: list[str]) -> UnitTypeConfig:
        """A copy with the options' effects applied to the kit (special rules are added).

        Raises KeyError for an unknown option id.
        """
        update: dict[str, Any] = {"special_rules": list(self.special_rules)}
        for oid in option_ids:
            opt = self.option(oid)
            if opt is None:
                raise KeyError(f"unknown option '{oid}' for '{self.id}'")
            for key, value in opt.effect.items():
                if key == "special_rules":
                    update["special_rules"] += [r for r in value if r not in update["special_rules"]]
                elif key != "battle_standard":
                    update[key] = value
        return self.model_copy(update=update)


class FactionConfig(ConfigModel):
    """A faction: its unit types (ids unique)."""

    id: str
    name: str
    description: str
    units: list[UnitTypeConfig] = Field(min_length=1)

    @field_validator("units")
    @classmethod
    def _unique_units(cls, units: list[UnitTypeConfig]) -> list[UnitTypeConfig]:
        _check_unique([u.id for u in units], "unit")
        return units

    @model_validator(mode="after")
    def _lore_access(self) -> FactionConfig:
        """CORE.MAGIC.LORE_ACCESS through :data:`env.rules.spells.FACTION_LORES` (other factions: any lore)."""
        allowed = FACTION_LORES.get(self.id)
        for u in self.units:
            bad = [lore for lore in u.lores if allowed is not None and lore not in allowed]
            if bad:
                raise ValueError(f"unit '{u.id}': faction '{self.id}' may not use lore '{bad[0]}'")
        return self

    def unit(self, unit_id: str) -> UnitTypeConfig | None:
        """The unit type with this id, or None."""
        return next((u for u in self.units if u.id == unit_id), None)


def _check_unique(ids: list[str], what: str) -> None:
    seen: dict[str, int] = {}
    for i, x in enumerate(ids):
        if x in seen:
            raise ValueError(f"duplicate {what} id '{x}' (entries {seen[x]} and {i})")
        seen[x] = i


def _joins_value(v: Any) -> Any:
    """``joins`` is an entry's index (an integer), its label or unit id (text), or absent."""
    if v is None or isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool)):
        return v
    raise ValueError(f"expected the joined entry's index (an integer) or its label, got {v!r}")


Joins = Annotated[int | str | None, BeforeValidator(_joins_value)]
"""The unit a character deploys joined to (CORE.SETUP.DEPLOY, CORE.MOVE.JOIN): one message for a wrong type,
not one per member of the union."""


class ArmyUnitConfig(ConfigModel):
    """One entry of an army list: a unit type, its size, formation (files), command and options.

    ``joins`` (characters only): the entry this character deploys joined to
    (CORE.SETUP.DEPLOY, CORE.MOVE.JOIN), as its index in the list or its
    label (or unit id, when only one entry has it); None deploys it alone.
    """

    unit: str
    models: int = Field(ge=1)
    files: int | None = Field(default=None, ge=1)
    command: list[CommandModel] = []
    options: list[str] = []
    general: bool = False
    label: str | None = None
    joins: Joins = None
    lore: str | None = None  # a wizard's lore (CORE.MAGIC.WIZARDS); None: its type's first
    equipment: dict[str, int] = {}  # siege equipment bought (SIEGE.EQUIP.TABLE; env.rules.siege.equipment)


class ArmyListConfig(ConfigModel):
    """An army list for one faction, within ``points_limit`` points (CORE.SETUP.ARMIES)."""

    id: str
    name: str
    faction: str
    points_limit: int = Field(default=2000, ge=1)
    units: list[ArmyUnitConfig] = Field(min_length=1)
    castle_equipment: dict[str, int] = {}  # siege: castle-wide items, e.g. reinforced_gate (SIEGE.EQUIP.TABLE)


# ----------------------------------------------------------------------------- loaders
def load_faction(faction_id: str) -> FactionConfig:
    """Load ``configs/factions/<faction_id>.yaml``. Raises ConfigError."""
    return _load("factions", faction_id, FactionConfig)


def load_army(army_id: str, validate: bool = True) -> ArmyListConfig:
    """Load ``configs/armies/<army_id>.yaml``.

    With ``validate`` the list is checked against its faction by
    :func:`env.rules.army.validate_army` (points, General, sizes, options, BSB:
    CORE.SETUP.ARMIES). Raises ConfigError naming the army file.
    """
    army = _load("armies", army_id, ArmyListConfig)
    shown = display_path(army_path(army_id))
    if army.faction not in list_factions():
        raise ConfigError(f"unknown faction '{army.faction}'", file=shown, where="faction")
    if validate:
        from battleline.env.rules.army import validate_army

        errors = validate_army(army, load_faction(army.faction))
        if errors:
            raise ConfigError(errors[0], file=shown)
    return army
