"""Game data: pydantic models for factions, army lists and scenarios, and their loaders.

Units: distances and coordinates are in inches (CORE.CONV.UNITS), base sizes in
millimetres (CORE.GEO.BASES), costs in points.

Every loader raises :class:`ConfigError`, whose message is one line of the form
``<file>: <field path>: <what is wrong>``.
"""

from __future__ import annotations

import hashlib
import math
import re
from importlib.resources import files
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import yaml
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
from shapely import affinity, union_all
from shapely.geometry import LinearRing, Polygon, box

from battleline.env.rules.spells import FACTION_LORES, LORES, SPELLS

if TYPE_CHECKING:
    from battleline.env.rules.state import BattleState



def package_data_dir(package: str) -> Path:
    """The folder of an installed ``battleline`` package, for the data files shipped in it.

    Read through :func:`importlib.resources.files`, so the shipped data is found from any
    working folder, in a wheel install as in an editable one.

    Raises:
        RuntimeError: the package is not installed as plain files (a zip import).
    """
    root = files(package)
    if not isinstance(root, Path):  # pragma: no cover - battleline is never installed zipped
        raise RuntimeError(f"{package}: installed as {type(root).__name__}, not as files; reinstall with pip")
    return root


CONFIG_DIR: Path = package_data_dir("battleline.configs")
"""The shipped data, ``battleline.configs`` (the repository's ``configs/``: factions/, armies/, scenarios/, ...)."""

REPO_ROOT: Path = CONFIG_DIR.parent
"""Where shown paths are relative to: the folder that holds ``configs/`` (the repository, or the installed package)."""
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

class ConfigError(ValueError):
    """A bad configuration file. ``str()`` is one line: ``<file>: <field path>: <problem>``.

    ``ConfigError("x.yaml: file not found")`` also works: ``file`` and ``where`` are optional.
    """

    def __init__(self, problem: str, *, file: str | None = None, where: str | None = None) -> None:
        self.file, self.where, self.problem = file, where, problem
        parts = [p for p in (file, where, problem) if p]
        super().__init__(" ".join(": ".join(parts).split()))


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
        from battleline.env.rules.war_machines import MACHINES

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


class TerrainConfig(ConfigModel):
    """A terrain feature (CORE.TERRAIN.TYPES): a simple polygon of >= 3 vertices, in inches."""

    kind: TerrainKind
    name: str = ""
    polygon: list[Pair]

    @field_validator("polygon")
    @classmethod
    def _simple_polygon(cls, pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
        if len(pts) < 3:
            raise ValueError(f"a polygon needs at least 3 vertices, got {len(pts)}")
        poly = Polygon(pts)
        if not (LinearRing(pts).is_simple and poly.is_valid and poly.area > 0):
            raise ValueError("not a valid simple polygon (edges cross or it has no area)")
        return pts

    def shape(self) -> Polygon:
        """The feature as a shapely polygon."""
        return Polygon(self.polygon)


class PlacementConfig(ConfigModel):
    """An explicit placement: unit type, formation, centre (x, y) in inches and facing in degrees.

    ``joins`` (characters only): the side's placement this character stands
    joined to, by index or label; its own x, y and facing are then ignored.
    """

    unit: str
    models: int = Field(ge=1)
    files: int = Field(ge=1)
    x: float
    y: float
    facing: float
    command: list[CommandModel] = []
    options: list[str] = []
    general: bool = False
    fleeing: bool = False
    label: str | None = None
    joins: Joins = None
    lore: str | None = None  # a wizard's lore (CORE.MAGIC.WIZARDS); None: its type's first
    spells: list[str] | None = None  # a wizard's spells, given instead of rolled (set-ups, tests)
    equipment: dict[str, int] = {}  # siege equipment (SIEGE.EQUIP.TABLE; env.rules.siege.equipment)


class SideConfig(ConfigModel):
    """One side: either an army list id or explicit placements, and its faction.

    With ``army`` the faction may be left out: it is the army list's own (read from
    ``configs/armies/<army>.yaml``); when given it must match (checked by the scenario's
    validation). With ``placements`` the faction is required.

    Raises:
        ValueError (a pydantic validation error): neither or both of ``army`` and ``placements``, or
            ``placements`` without ``faction``.
    """

    faction: str | None = None
    army: str | None = None
    placements: list[PlacementConfig] | None = None

    @field_validator("placements")
    @classmethod
    def _some_units(cls, placements: list[PlacementConfig] | None) -> list[PlacementConfig] | None:
        if placements is not None and not placements:
            raise ValueError("no units")
        return placements

    @model_validator(mode="after")
    def _army_or_placements(self) -> SideConfig:
        if (self.army is None) == (self.placements is None):
            raise ValueError("give either 'army' or 'placements', not both or neither")
        if self.placements is not None and self.faction is None:
            raise ValueError("'faction' is required with 'placements'")
        if self.faction is None and self.army is not None and army_path(self.army).is_file():
            found = read_yaml(army_path(self.army)).get("faction")
            self.faction = found if isinstance(found, str) else None
        return self


MODULES: frozenset[str] = frozenset(
    {"siege", "t9a.characters", "t9a.protections", "t9a.equipment", "t9a.artillery", "t9a.attributes"}
)
"""CFG.MODULES: the modules a core game may take."""
IMPLEMENTED_MODULES: frozenset[str] = MODULES
"""The modules this engine runs; a scenario naming another is rejected."""


MODES: tuple[str, ...] = ("core", "skirmish", "activation")
"""CFG.MODE: the game modes; this engine plays ``core``."""


def module_errors(modules: list[str], mode: str = "core") -> list[str]:
    """Problems with a scenario's ``mode`` and ``modules`` (CFG.MODE, CFG.MODULES, CFG.EXCLUSIVE).

    An unknown or unavailable mode, duplicates, unknown names, a skirmish module beside a core one
    (both named: CFG.EXCLUSIVE), a skirmish module in a core game, and modules this engine does not run.
    """
    if mode not in MODES:
        return [f"mode: unknown mode '{mode}' (one of {', '.join(MODES)}; CFG.MODE)"]
    errors, seen = [], set()
    if mode != "core":
        core = next((m for m in modules if m in MODULES), None)
        if core is not None:
            return [f"modules: '{core}' is a core module, not valid in {mode} mode (CFG.EXCLUSIVE)"]
        return [f"mode: '{mode}' is not available in this engine (CFG.MODE)"]
    core_named = next((m for m in modules if m in MODULES), None)
    for i, m in enumerate(modules):
        if m in seen:
            errors.append(f"modules[{i}]: module '{m}' is named twice")
        seen.add(m)
        if m.startswith("skirmish.") and core_named is not None:
            errors.append(f"modules: '{core_named}' and '{m}' cannot be combined: T9A and siege modules play in "
                          f"core mode, skirmish modules in skirmish mode (CFG.EXCLUSIVE)")
        elif m.startswith("skirmish."):
            errors.append(f"modules[{i}]: '{m}' is a skirmish module, not valid in a core game (CFG.EXCLUSIVE)")
        elif m not in MODULES:
            errors.append(f"modules[{i}]: unknown module '{m}' (core takes {', '.join(sorted(MODULES))})")
        elif m not in IMPLEMENTED_MODULES:
            errors.append(f"modules[{i}]: module '{m}' is not available in this engine")
    return errors


class CastleElementConfig(ConfigModel):
    """One castle element of a custom castle (SIEGE.CASTLE.*), coordinates in table inches.

    ``victory`` (SIEGE.SCEN.VICTORY, DEFAULT by kind): "key" wins the attacker the battle when he holds it (a
    citadel's default), "counts" is counted towards ``castle.victory_needed`` (a wall's or tower's), "none" neither
    (a gate's)."""

    id: str
    kind: Literal["wall", "tower", "gate", "citadel"]
    polygon: list[Pair]
    material: Literal["stone", "wood"] = "stone"
    outward: float = 90.0
    parent: str | None = None
    reinforced: bool = False
    victory: Literal["key", "counts", "none"] | None = None

    @field_validator("polygon")
    @classmethod
    def _simple(cls, pts: list[tuple[float, float]]) -> list[tuple[float, float]]:
        return TerrainConfig._simple_polygon(pts)


class CastleConfig(ConfigModel):
    """The castle of a siege (SIEGE.SCEN.CASTLE): the standard one or a custom list of elements.

    ``defender``: the side holding it (its edge is the castle's back);
    ``material`` and ``reinforced_gate`` (SIEGE.EQUIP.REINFORCED_GATE) apply to the standard castle;
    the scenario's reinforced gate is part of the set-up and costs no points (a gate the defender's
    army list buys in ``castle_equipment`` costs 20 points per gate). ``victory_needed`` (a custom castle,
    SIEGE.SCEN.VICTORY, DEFAULT): how many of the counted elements the attacker must hold to win; by default
    the standard castle's 5 of 9 as a share of them, rounded up.
    """

    defender: Literal["blue", "red"] = "blue"
    layout: Literal["standard", "custom"] = "standard"
    material: Literal["stone", "wood"] = "stone"
    reinforced_gate: bool = False
    elements: list[CastleElementConfig] = []
    victory_needed: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _layout(self) -> CastleConfig:
        if self.layout == "custom" and not self.elements:
            raise ValueError("a custom castle needs its 'elements'")
        if self.layout == "standard" and self.elements:
            raise ValueError("the standard castle takes no 'elements' (use layout: custom)")
        for key, per_element in (("material", "material"), ("reinforced_gate", "reinforced")):
            default = type(self).model_fields[key].default  # a dumped castle carries the defaults: they pass
            if self.layout == "custom" and getattr(self, key) != default:  # it would be ignored
                raise ValueError(f"a custom castle takes no '{key}' (give each element its '{per_element}')")
        ids = [e.id for e in self.elements]
        _check_unique(ids, "castle element")
        for e in self.elements:
            if e.kind == "gate":
                parent = next((p for p in self.elements if p.id == e.parent), None)
                if parent is None or parent.kind != "wall":
                    raise ValueError(f"gate '{e.id}' needs a wall section as 'parent'")
                if not Polygon(parent.polygon).buffer(EPS).covers(Polygon(e.polygon)):
                    raise ValueError(f"gate '{e.id}' is not inside its wall section '{parent.id}'")
            elif e.parent is not None:
                raise ValueError(f"{e.kind} '{e.id}' takes no 'parent' (only a gate lies in a wall section)")
            elif e.reinforced:
                raise ValueError(f"{e.kind} '{e.id}' cannot be 'reinforced' (only a gate: SIEGE.EQUIP.REINFORCED_GATE)")
        if self.victory_needed is not None:
            if self.layout == "standard":
                raise ValueError("the standard castle takes no 'victory_needed' (5 of its 9 elements, SIEGE.SCEN.VICTORY)")
            from battleline.env.rules.siege.castle import element_victory

            counted = [e.id for e in self.elements if element_victory(e)]
            if self.victory_needed > len(counted):
                raise ValueError(f"victory_needed is {self.victory_needed}, but only {len(counted)} elements count "
                                 f"({', '.join(counted) or 'none'}; SIEGE.SCEN.VICTORY)")
        return self


class StartConfig(ConfigModel):
    """Where an explicitly placed game starts (CORE.GAME.PHASES)."""

    turn: int = Field(default=1, ge=1)
    phase: Literal["start", "movement", "magic", "shooting", "combat"] = "start"
    player: Literal["blue", "red"] = "blue"


MAX_TABLE = 480.0
"""The longest table side, in inches (40 feet: ten times a 6' table; the drawing grid and the geometry stay cheap)."""


class ScenarioConfig(ConfigModel):
    """A scenario: table (inches), length, points, modules, terrain and the two sides.

    ``start`` None means a normal game from deployment (CORE.SETUP.*); given, play
    starts at that turn, phase and player with the explicit placements (a side with
    placements requires ``start``).

    ``magic: false`` plays the same armies without magic: wizards are left out
    and no unit keeps a bound spell or a dispel scroll, so the Magic phase has
    no caster (CORE.MAGIC.*). ``war_machines: false`` leaves the war machines
    out (CORE.WM.*). Both default to true; they are switches for experiments
    (for example the benchmark with and without them). ``champion_attack:
    false`` takes the champion's extra attack away (CORE.CC.CHAMPION_ATTACK, a
    DEFAULT of the genre the text is silent on; default true).

    In a siege ``points_limit`` is the defender's; the attacker may field
    ``attacker_points_ratio`` times as much (SIEGE.SCEN.POINTS, DEFAULT 1.5:
    3,000 against 2,000), rounded down to whole points.
    """

    id: str
    name: str
    description: str = ""
    table: Pair = (72.0, 48.0)
    turns: int = Field(default=6, ge=1)
    points_limit: int = Field(default=2000, ge=1)
    mode: str = "core"
    modules: list[str] = []
    zone_depth: float = Field(default=12.0, gt=0)
    terrain: list[TerrainConfig] = []
    blue: SideConfig
    red: SideConfig
    start: StartConfig | None = None
    victory_margin: float = Field(default=0.10, ge=0, le=1)
    castle: CastleConfig | None = None
    magic: bool = True
    war_machines: bool = True
    champion_attack: bool = True
    attacker_points_ratio: float = Field(default=1.5, gt=0)

    @model_validator(mode="after")
    def _modules(self) -> ScenarioConfig:
        errors = module_errors(self.modules, self.mode)
        if errors:
            raise ValueError(errors[0])
        if self.castle is not None and "siege" not in self.modules:
            raise ValueError("a 'castle' needs the siege module (modules: [siege])")
        if self.attacker_points_ratio != type(self).model_fields["attacker_points_ratio"].default and not self.siege:
            raise ValueError("attacker_points_ratio applies to a siege's attacker (SIEGE.SCEN.POINTS); "
                             "this scenario has no siege module")
        return self

    @property
    def siege(self) -> bool:
        """Whether the siege module is on (SIEGE.*)."""
        return "siege" in self.modules

    @field_validator("table")
    @classmethod
    def _positive_table(cls, table: tuple[float, float]) -> tuple[float, float]:
        if table[0] <= 0 or table[1] <= 0:
            raise ValueError("table width and depth must be positive")
        if max(table) > MAX_TABLE:
            raise ValueError(f"table width and depth may be at most {fmt_num(MAX_TABLE)} inches "
                             f"(got {fmt_num(table[0])}x{fmt_num(table[1])})")
        return table

    def attacker(self) -> str | None:
        """The side storming the castle, ``blue`` or ``red`` (the one not defending it); None outside a siege."""
        if not self.siege:
            return None
        return "red" if self.castle is None or self.castle.defender == "blue" else "blue"

    def points_limit_of(self, name: str) -> int:
        """The points side ``name`` (``blue`` or ``red``) may field: ``points_limit``, or for a siege's attacker
        ``attacker_points_ratio`` times it, rounded down (SIEGE.SCEN.POINTS)."""
        if name == self.attacker():
            return math.floor(self.points_limit * self.attacker_points_ratio + 1e-9)
        return self.points_limit

    def table_text(self) -> str:
        """The table size as text, e.g. '72x48'."""
        return f"{fmt_num(self.table[0])}x{fmt_num(self.table[1])}"

    def side(self, name: str) -> SideConfig:
        """``blue`` or ``red``."""
        return {"blue": self.blue, "red": self.red}[name]


# ----------------------------------------------------------------------------- errors and files
def display_path(path: Path | str) -> str:
    """The path as shown in errors: relative to the repository when inside it."""
    p = Path(path)
    try:
        return p.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(p)


def loc_text(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a field path: ('units', 3, 'unit') -> 'units[3].unit'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and not re.search(r"[\[(]", part):  # pydantic's own tags: "function-after[...]"
            out += f".{part}" if out else part
    return out


_YAML_TEXT_EXPONENT = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")
"""A number in exponent notation that YAML 1.1 (PyYAML) may read as a string, such as ``3e-4`` or ``1.0e4``."""


def _yaml_kind(value: Any) -> str:
    """What a YAML value is, in words: 'nothing (an empty value)', 'a list', "the string 'x'", 'the number 3'."""
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "a boolean (true/false)"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"[:120]
    return "a list" if isinstance(value, (list, tuple)) else f"a {type(value).__name__}"


def _error_text(err: dict[str, Any]) -> str:
    kind, msg = err["type"], err["msg"]
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "finite_number":
        return "must be a finite number"
    if kind in ("model_type", "dict_type"):  # pydantic says "a valid dictionary or instance of SideConfig"
        return f"expected a mapping (field: value lines), got {_yaml_kind(err.get('input'))}"
    msg = re.sub(r"^(Value|Assertion) error, ", "", msg)
    value = err.get("input")
    if kind in ("int_type", "float_type", "bool_type") and isinstance(value, str):  # strict: no text for these
        hint = " (YAML reads an exponent as a number only with a '.' and a sign, e.g. 3.0e-4)" if (
            _YAML_TEXT_EXPONENT.fullmatch(value.strip())) else ""
        return f"{msg}, got {_yaml_kind(value)}"[:120] + hint
    if not kind.startswith(("value_error", "assertion_error")) and isinstance(value, (str, int, float, bool)):
        msg += f", got {value!r}"[:120]
    return msg


def from_validation_error(exc: ValidationError, file: str, data: Any = None) -> ConfigError:
    """The first pydantic error as a one-line :class:`ConfigError`.

    With the validated ``data``, an error inside a faction's unit type names its id beside its index
    (``units[8] (lord_marshal).t9a.attributes``), so a long faction file need not be counted through.
    """
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    where = loc_text(loc)
    unit_id = _unit_type_id(loc, data)
    if unit_id is not None:
        head = f"units[{loc[1]}]"
        where = f"{head} ({unit_id}){where[len(head):]}"
    return ConfigError(_error_text(err), file=file, where=where or None)


def _unit_type_id(loc: tuple[Any, ...], data: Any) -> str | None:
    """The ``id`` of the unit type an error location ``('units', i, ...)`` points into, if ``data`` has one there."""
    if len(loc) < 2 or loc[0] != "units" or not isinstance(loc[1], int) or not isinstance(data, dict):
        return None
    units = data.get("units")
    if not isinstance(units, list) or not 0 <= loc[1] < len(units) or not isinstance(units[loc[1]], dict):
        return None
    ident = units[loc[1]].get("id")
    return ident if isinstance(ident, str) and ident else None


class DuplicateKeyError(yaml.YAMLError):
    """A YAML mapping names the same key twice (``line`` counts from 1)."""

    def __init__(self, key: Any, line: int) -> None:
        super().__init__(f"line {line}: duplicate key {key!r}")
        self.key, self.line = key, line


def _unique_keys(loader: yaml.constructor.SafeConstructor, node: yaml.MappingNode, deep: bool = False) -> Any:
    """``construct_mapping`` that rejects a key given twice in one mapping (merged ``<<`` keys may be overridden)."""
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        try:
            if key in seen:
                raise DuplicateKeyError(key, key_node.start_mark.line + 1)
            seen.add(key)
        except TypeError:  # an unhashable key: SafeConstructor reports it
            pass
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)  # type: ignore[arg-type]


class _UniqueKeySafeLoader(yaml.SafeLoader):
    """The safe loader, duplicate mapping keys rejected."""

    construct_mapping = _unique_keys  # type: ignore[assignment]


_FAST_LOADER: type | None = (
    type("_UniqueKeyCSafeLoader", (yaml.CSafeLoader,), {"construct_mapping": _unique_keys})
    if hasattr(yaml, "CSafeLoader") else None
)
"""libyaml's parser with the same duplicate-key check (the constructor is Python either way)."""


YAML12_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
"""The plain scalars read as booleans: YAML 1.2's ``true`` and ``false``. PyYAML follows YAML 1.1, where ``yes``,
``no``, ``on`` and ``off`` are booleans too; here they stay text, so a boolean field given one is an error
naming the field (``got the string 'yes'``) and a name such as ``No`` stays a name."""


def _yaml12_booleans(loader: type) -> type:
    """Give ``loader`` (a PyYAML loader class) YAML 1.2 booleans (:data:`YAML12_BOOL`); returns it."""
    bool_tag = "tag:yaml.org,2002:bool"
    loader.yaml_implicit_resolvers = {  # type: ignore[attr-defined]
        first: [(tag, rx) for tag, rx in rules if tag != bool_tag]
        for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(bool_tag, YAML12_BOOL, list("tTfF"))  # type: ignore[attr-defined]
    return loader


_yaml12_booleans(_UniqueKeySafeLoader)
if _FAST_LOADER is not None:
    _yaml12_booleans(_FAST_LOADER)


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)`` with duplicate keys rejected, parsed by libyaml where PyYAML has it
    (several times faster, same values).

    A document libyaml rejects is parsed again by the pure-Python loader, so
    errors read as they always have. Raises :class:`DuplicateKeyError` for a key
    given twice in one mapping.
    """
    if _FAST_LOADER is not None:
        try:
            return yaml.load(text, Loader=_FAST_LOADER)  # noqa: S506 - a CSafeLoader subclass
        except DuplicateKeyError:
            raise
        except yaml.YAMLError:
            pass
    return yaml.load(text, Loader=_UniqueKeySafeLoader)  # noqa: S506 - a SafeLoader subclass


def read_file_text(path: Path | str, error: type[Exception] | None = None) -> str:
    """The UTF-8 text of ``path``; every project reader of a user-named file goes through here.

    Raises ``error`` (default :class:`ConfigError`) with one line ``FILE: is a
    directory`` / ``FILE: file not found`` / ``FILE: not UTF-8 text`` /
    ``FILE: cannot read (<reason>)``.
    """
    p = Path(path)
    shown = display_path(p)
    if p.is_dir():
        problem = "is a directory"
    elif not p.exists():
        problem = "file not found"
    else:
        try:
            return p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            problem = "not UTF-8 text"
        except OSError as exc:
            problem = f"cannot read ({exc.strerror or type(exc).__name__})"
    if error is None:
        raise ConfigError(problem, file=shown)
    raise error(f"{shown}: {problem}")


NESTED_TOO_DEEPLY = "nested too deeply to read (lists or mappings inside one another beyond Python's recursion limit)"
"""The problem a YAML or JSON file (a scenario, a replay) gets when its nesting exhausts the parser's recursion."""


def read_yaml(path: Path) -> dict[str, Any]:
    """The YAML mapping in ``path``. Raises ConfigError (see :func:`read_file_text`; invalid YAML,
    a duplicate key, not a mapping, nested too deeply for the parser: :data:`NESTED_TOO_DEEPLY`)."""
    shown = display_path(path)
    text = read_file_text(path)
    try:
        data = _load_yaml(text)
    except RecursionError:  # e.g. 1,000 nested lists: the parser recurses once a level
        raise ConfigError(NESTED_TOO_DEEPLY, file=shown) from None
    except DuplicateKeyError as exc:
        raise ConfigError(str(exc), file=shown) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"invalid YAML: {problem}{where}", file=shown) from None
    if data is None:  # an empty file, or one of comments only
        raise ConfigError("the file is empty or only comments (expected a mapping at the top level)", file=shown)
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping at the top level, got {type(data).__name__}", file=shown)
    return data


def parse(model: type[BaseModel], data: dict[str, Any], file: str) -> Any:
    """``model.model_validate(data)``, errors (a RecursionError too) converted to :class:`ConfigError` naming ``file``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc, file, data) from None
    except RecursionError:  # values nested deeper than the checks can follow
        raise ConfigError(NESTED_TOO_DEEPLY, file=file) from None


_CACHE: dict[tuple[Path, int], Any] = {}


def _load(kind: str, ident: str, model: type[BaseModel]) -> Any:
    """Load and validate one config file, cached by path and modification time (treat as read-only).

    Raises:
        ConfigError: ``ident`` is not a plain file name without ``.yaml`` (a path such as
            ``../factions/men`` would read another folder's file), no shipped file has that id
            ("unknown army list 'x'; known: ..."), or the file is invalid.
    """
    if not ident or ident != Path(ident).name or ident.startswith(".") or "\\" in ident or ident.endswith(".yaml"):
        raise ConfigError(f"'{ident}' is not an id in configs/{kind} (a file name without '.yaml', not a path); "
                          f"known: {', '.join(_ids(kind))}")
    path = CONFIG_DIR / kind / f"{ident}.yaml"
    if not path.exists():  # an id no shipped file has: say so, not "configs/<kind>/<id>.yaml: file not found"
        raise ConfigError(f"unknown {_KIND_NOUNS.get(kind, kind)} '{ident}'; known: {', '.join(_ids(kind))}")
    try:
        key = (path, path.stat().st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    shown = display_path(path)
    obj = parse(model, read_yaml(path), shown)
    _check_id(obj.id, ident, shown)
    if key is not None:
        _CACHE[key] = obj
    return obj


_KIND_NOUNS = {"factions": "faction", "armies": "army list", "scenarios": "scenario"}
"""What an id of each folder of ``configs/`` names, for "unknown army list 'x'" errors."""


def _check_id(found: str, ident: str, shown: str) -> None:
    """Raise ConfigError when a file looked up by its id ``ident`` says another ``id`` (``shown``: its path)."""
    if found != ident:
        raise ConfigError(f"id '{found}' does not match the file name '{ident}'", file=shown, where="id")


def _ids(kind: str) -> list[str]:
    return sorted(p.stem for p in (CONFIG_DIR / kind).glob("*.yaml"))


# ----------------------------------------------------------------------------- loaders
def army_path(army_id: str) -> Path:
    """Path of the army list file ``configs/armies/<army_id>.yaml``."""
    return CONFIG_DIR / "armies" / f"{army_id}.yaml"


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


def scenario_path(source: str | Path) -> Path:
    """The file of a scenario given as a name in ``configs/scenarios`` or a YAML path."""
    path = Path(source)
    if not path.suffix and not path.exists():
        path = CONFIG_DIR / "scenarios" / f"{source}.yaml"
    return path


def scenario_file(source: str | Path | dict[str, Any]) -> str:
    """The scenario's file as errors show it (``<dict>`` for a dict)."""
    return "<dict>" if isinstance(source, dict) else display_path(scenario_path(source))


_LOADED: dict[tuple, ScenarioConfig] = {}
"""Scenarios already loaded and checked, by (source, its file's and every shipped config file's mtime and size)."""


def _config_stamp(path: Path) -> tuple:
    """What a loaded scenario depends on: its file (resolved path and a digest of its bytes) and the shipped
    configs (factions, army lists) as (name, mtime_ns, size) triples; a changed, added or removed file changes it."""
    files = sorted(CONFIG_DIR.rglob("*.yaml"))
    own = path.resolve()
    return (str(own), hashlib.sha256(own.read_bytes()).hexdigest(),
            *((str(f), st.st_mtime_ns, st.st_size) for f in files for st in (f.stat(),)))


def load_scenario(source: str | Path | dict[str, Any], file: str | None = None) -> ScenarioConfig:
    """:func:`check_scenario` of ``source``, kept for a named or file source until a config file changes.

    Returns a copy the caller may change. Raises ConfigError as :func:`check_scenario`.
    """
    if isinstance(source, dict):
        return check_scenario(source, file)
    try:
        key = _config_stamp(scenario_path(source))
    except (OSError, ConfigError):  # no such file: let the check say so
        return check_scenario(source, file)
    if key not in _LOADED:
        if len(_LOADED) > 64:
            _LOADED.clear()
        _LOADED[key] = check_scenario(source, file)
    return _LOADED[key].model_copy(deep=True)


def check_scenario(source: str | Path | dict[str, Any], file: str | None = None) -> ScenarioConfig:
    """Load and check a scenario: a name in ``configs/scenarios``, a YAML path, or a dict.

    ``file``: the name errors give a dict (e.g. the file it was read from; default ``<dict>``).

    Checks (raising ConfigError naming the file and field): a name is a shipped scenario
    ("unknown scenario 'x'; shipped: ..." otherwise); the schema; terrain inside
    the table; factions and army lists exist, match and are valid (CORE.SETUP.ARMIES)
    and fit the scenario's points limit; explicit placements use known units, lie
    wholly on the table, are clear of impassable terrain (CORE.TERRAIN.TYPES) and of
    each other, and need ``start``; a scenario places both sides or neither;
    ``start.turn`` is within ``turns``; a scenario named by its id has that ``id``.
    """
    if isinstance(source, dict):
        data, shown = source, file or "<dict>"
    else:
        if not str(source).strip():
            raise ConfigError("no scenario named (an empty name); give a name in configs/scenarios or a YAML path")
        path = scenario_path(source)
        if path != Path(source) and not path.exists():  # a name no shipped scenario has (a path is read as given)
            raise ConfigError(f"unknown scenario '{source}'; shipped: {', '.join(list_scenarios())} "
                              "(a scenario of your own: its YAML path)")
        data, shown = read_yaml(path), display_path(path)
    scenario: ScenarioConfig = parse(ScenarioConfig, data, shown)
    if not isinstance(source, dict) and Path(source) != path:  # named by its id, not by a path
        _check_id(scenario.id, Path(str(source)).name, shown)  # a name may lie in a subfolder: coverage/x
    for file, problem in scenario_errors(scenario):
        raise ConfigError(problem, file=file or shown)
    return scenario


def list_factions() -> list[str]:
    """Ids of the factions in ``configs/factions``, sorted."""
    return _ids("factions")


def list_armies(faction: str | None = None) -> list[str]:
    """Ids of the army lists in ``configs/armies``, sorted; only ``faction``'s when given."""
    ids = _ids("armies")
    if faction is None:
        return ids
    return [i for i in ids if read_yaml(army_path(i)).get("faction") == faction]


def list_scenarios() -> list[str]:
    """Ids of the scenarios in ``configs/scenarios``, sorted."""
    return _ids("scenarios")


def is_scenario(source: object) -> bool:
    """Whether ``source`` names a scenario: an id in ``configs/scenarios`` or the path of a YAML file that exists
    (its contents are checked by :func:`load_scenario`)."""
    return isinstance(source, str) and (source in list_scenarios() or (
        Path(source).suffix in (".yaml", ".yml") and Path(source).is_file()))


# ----------------------------------------------------------------------------- scenario checks
Problem = tuple[str | None, str]
"""(file, "field path: message"); file None means the scenario's own file."""


def scenario_errors(s: ScenarioConfig) -> list[Problem]:
    """All semantic problems of a parsed scenario, in file order (see :func:`load_scenario`).

    Raises ConfigError when a referenced faction file is itself broken.
    """
    from battleline.env.rules.siege.castle import build_castle

    problems: list[Problem] = [(None, p) for p in _table_errors(s)]
    shapes: list[tuple[str, Polygon]] = []
    castle = build_castle(s) if s.siege else []
    for name in ("blue", "red"):
        problems += _side_errors(s, name, shapes, castle)
    problems += [(None, p) for p in _overlap_errors(shapes)]
    problems += _castle_errors(s, shapes, castle)
    if not problems:
        problems += _room_errors(s)
    return problems


def _room_errors(s: ScenarioConfig) -> list[Problem]:
    """Room to deploy every unit of the army lists, checked on the state the scenario starts from (built once):
    a siege defender's inside the castle (:func:`_castle_room_errors`), everyone else's in their zone
    (:func:`_zone_fit_errors`). Explicit placements need neither."""
    if any(s.side(n).placements is not None for n in ("blue", "red")):
        return []
    from battleline.env.rules.setup import build_state

    state = build_state(s)
    defender = (s.castle.defender if s.castle is not None else "blue") if s.siege else None
    return _castle_room_errors(state, defender) + _zone_fit_errors(s, state, defender)


def _zone_fit_errors(s: ScenarioConfig, state: BattleState, defender: str | None) -> list[Problem]:
    """A unit deployed from an army list into a zone (CORE.SETUP.ZONES: wholly inside) must fit in it: a
    formation deeper than the zone or wider than the table could never deploy (the siege's ``defender``, inside
    the castle, has :func:`_castle_room_errors`; Scouts deploy outside the zones)."""
    problems: list[Problem] = []
    for u in state.units:
        name = ("blue", "red")[u.side]
        if name == defender or u.joined_to is not None or u.has("scouts"):
            continue
        if u.depth > s.zone_depth + EPS or u.width > s.table[0] + EPS:
            problems.append((None, f"{name}.army: '{u.name}' ({u.models} models in {u.files} file{'s' * (u.files != 1)}) is "
                                   f"{fmt_num(round(u.width, 1))}\" wide and {fmt_num(round(u.depth, 1))}\" deep "
                                   f"and cannot stand wholly inside the {fmt_num(s.zone_depth)}\" deployment zone "
                                   f"of the {s.table_text()} table (CORE.SETUP.ZONES); give it more files"))
    return problems


def _castle_room_errors(state: BattleState, defender: str | None) -> list[Problem]:
    """A siege ``defender`` deployed from an army list needs room inside the castle for every unit
    (SIEGE.SCEN.DEPLOY: courtyard or front walls; :func:`env.rules.siege.room.plan`), or the scenario is refused."""
    if defender is None:
        return []
    from battleline.env.rules.siege import room

    crowded = room.plan(state)[1]
    return [] if crowded is None else [(None, f"{defender}.army: {room.no_room_text(crowded)}")]


def _table_errors(s: ScenarioConfig) -> list[str]:
    errors = []
    if 2 * s.zone_depth >= s.table[1]:
        errors.append(f"zone_depth: two {fmt_num(s.zone_depth)}\" zones leave no room on a {s.table_text()} table")
    table = box(0, 0, *s.table).buffer(EPS, join_style="mitre")
    for i, t in enumerate(s.terrain):
        if not table.covers(t.shape()):
            errors.append(f"terrain[{i}]: {t.kind} '{t.name}' is not wholly on the {s.table_text()} table")
    placed = [n for n in ("blue", "red") if s.side(n).placements is not None]
    if len(placed) == 1:  # explicit placements start the game past deployment: both sides or neither
        other = "red" if placed[0] == "blue" else "blue"
        errors.append(f"{other}.army: {placed[0]} has explicit placements, so {other} needs them too "
                      f"(a scenario places both sides or neither)")
    if s.start is not None and len(placed) < 2:
        errors.append("start: needs placements on both sides (a game from deployment, with army lists, "
                      "starts at turn 1; leave 'start' out)")
    if s.start is None and placed:
        errors.append(f"start: {placed[0]} has explicit placements, so 'start' (turn, phase, player) is required")
    if s.start is not None and s.start.turn > s.turns:
        errors.append(f"start.turn: turn {s.start.turn} is after the last turn ({s.turns})")
    if not placed:  # a siege's attacker deploys on the grid too (the defender inside the castle)
        errors += _deployment_grid_errors(s)
    return errors


DEPLOYMENT_TABLE_WIDTH = 72.0
"""The table width (inches) the deployment slots of CORE.SETUP.DEPLOY are laid out for (columns 6-66")."""

DEPLOYMENT_ZONE_DEPTH = 12.0
"""The zone depth (inches) the deployment rows (3", 7" and 11" from the own edge) are laid out for."""


def _deployment_grid_errors(s: ScenarioConfig) -> list[str]:
    """A battle deployed from army lists uses the fixed slot grid of CORE.SETUP.DEPLOY (the action space's
    deploy block): other table widths or zone depths would silently lose units that find no slot."""
    errors = []
    if abs(s.table[0] - DEPLOYMENT_TABLE_WIDTH) > EPS:
        errors.append(f"table: army lists deploy on the slot grid of a {fmt_num(DEPLOYMENT_TABLE_WIDTH)}\" wide "
                      f"table, not {fmt_num(s.table[0])}\" (give explicit placements for another width)")
    if abs(s.zone_depth - DEPLOYMENT_ZONE_DEPTH) > EPS:
        errors.append(f"zone_depth: army lists deploy in rows 3-11\" from the edge, a "
                      f"{fmt_num(DEPLOYMENT_ZONE_DEPTH)}\" zone, not {fmt_num(s.zone_depth)}\" "
                      f"(give explicit placements for another zone)")
    return errors


def _side_errors(s: ScenarioConfig, name: str, shapes: list[tuple[str, Polygon]], castle: list[Any]) -> list[Problem]:
    """Problems of one side; appends the placements' footprints to ``shapes``."""
    from battleline.env.rules.army import army_points, check_entry, check_joins, check_labels, entries_points, validate_army

    side = s.side(name)
    if side.faction is None:  # an army list without a faction whose file is missing (SideConfig)
        return [(None, f"{name}.army: unknown army list '{side.army}'")]
    if side.faction not in list_factions():
        return [(None, f"{name}.faction: unknown faction '{side.faction}'")]
    faction = load_faction(side.faction)
    if side.army is not None:
        if side.army not in list_armies():
            return [(None, f"{name}.army: unknown army list '{side.army}'")]
        army = load_army(side.army, validate=False)
        if army.faction != side.faction:
            return [(None, f"{name}.army: '{side.army}' is a '{army.faction}' army, not '{side.faction}'")]
        errors = validate_army(army, faction)
        if errors:
            return [(display_path(army_path(side.army)), errors[0])]
        return _points_errors(s, name, f"{name}.army: '{side.army}' is", army_points(army, faction))
    problems: list[Problem] = [
        (None, f"{name}.{e}") for e in check_labels(side.placements or [], "placements")
        + check_joins(side.placements or [], faction, "placements")
    ]
    generals = [i for i, p in enumerate(side.placements or []) if p.general]
    if len(generals) > 1:
        problems.append((None, f"{name}.placements[{generals[1]}].general: a side has at most one general"))
    for i, p in enumerate(side.placements or []):
        where = f"{name}.placements[{i}]"
        unit_type = faction.unit(p.unit)
        if unit_type is None:
            problems.append((None, f"{where}.unit: unknown unit '{p.unit}' for faction '{faction.id}'"))
            continue
        problems += [(None, e) for e in check_entry(where, p, unit_type)]
        if p.equipment:  # SIEGE.EQUIP.TABLE
            from battleline.env.rules.siege.equipment import check_unit

            problems += [(None, e) for e in check_unit(where, p.equipment, p.models, unit_type.troop_type, faction.id)]
        if p.general and not unit_type.character:
            problems.append((None, f"{where}.general: the general must be a character, '{p.unit}' is not"))
        if p.files > p.models or p.joins is not None:
            continue  # a joined character stands in its host's front rank
        one_base = unit_type.troop_type == "war_machine"  # the crew stands on one base (CORE.GEO.BASES)
        fp = footprint(unit_type.base_mm(), 1 if one_base else p.models, 1 if one_base else p.files, p.x, p.y, p.facing)
        problems += [(None, f"{where}: {e}") for e in _placement_errors(s, p, fp)]
        if castle:
            ranks = 1 if one_base else math.ceil(p.models / p.files)
            problems += [(None, f"{where}: {e}")
                         for e in _castle_placement_errors(castle, unit_type.troop_type, ranks, p.x, p.y, fp)]
        shapes.append((f"{where}: unit at ({p.x:.1f}, {p.y:.1f})", fp))
    if not problems:  # the total needs known units, options and command models
        pts = entries_points(side.placements or [], faction)
        problems += _points_errors(s, name, f"{name}.placements: the units are", pts)
    return problems


def _points_errors(s: ScenarioConfig, name: str, what: str, points: int) -> list[Problem]:
    """Side ``name`` at ``points`` points over what it may field (CORE.SETUP.ARMIES; a siege's attacker:
    SIEGE.SCEN.POINTS, :meth:`ScenarioConfig.points_limit_of`); ``what`` opens the message with the field and its
    subject, e.g. "blue.placements: the units are"."""
    limit = s.points_limit_of(name)
    if points <= limit:
        return []
    if limit == s.points_limit:
        return [(None, f"{what} {points:,} points, over the scenario's {limit:,}-point limit")]
    return [(None, f"{what} {points:,} points, over the attacker's {limit:,}-point limit "
                   f"({fmt_num(s.attacker_points_ratio)} x the scenario's {s.points_limit:,}, SIEGE.SCEN.POINTS)")]


def _placement_errors(s: ScenarioConfig, p: PlacementConfig, fp: Polygon) -> list[str]:
    at = f"unit at ({p.x:.1f}, {p.y:.1f})"
    if not box(0, 0, *s.table).buffer(EPS, join_style="mitre").covers(fp):
        return [f"{at} is off the {s.table_text()} table"]
    inner = fp.buffer(-EPS, join_style="mitre")
    return [
        f"{at} overlaps impassable {t.kind}" + (f" '{t.name}'" if t.name else f" (terrain[{j}])")
        for j, t in enumerate(s.terrain)
        if t.kind in IMPASSABLE and inner.intersects(t.shape())
    ]


def _castle_placement_errors(castle: list[Any], troop_type: str, ranks: int, x: float, y: float,
                             fp: Polygon) -> list[str]:
    """What forbids a unit of ``troop_type`` in ``ranks`` ranks, centred at (x, y), to stand where it is placed on
    the castle: cavalry and chariots never on walls or towers (SIEGE.MOVE.WALLS), large creatures not in a tower
    (SIEGE.CASTLE.TOWER), war machines only on towers and the citadel (SIEGE.CASTLE.TOWER), and one rank on a
    wall section (SIEGE.CASTLE.WALL); a unit off the castle (footprint ``fp``) may not reach into a wall section.
    A unit whose centre is over a gate stands in the gateway, below the parapet."""
    from shapely.geometry import Point

    from battleline.env.rules.siege.castle import MACHINE_SLOTS, NO_ENTRY_TYPES, NO_WALL_TYPES

    centre, inner = Point(x, y), fp.buffer(-0.02, join_style="mitre")
    gate = next((g for g in castle if g.kind == "gate" and g.shape().covers(centre)), None)
    walls = union_all([w.shape() for w in castle if w.kind != "gate"]).buffer(0.01, join_style="mitre")
    if gate is not None and not walls.covers(fp):  # in the gateway: it may fill the gate, not the wall beside it
        wall = next((w for w in castle if w.kind == "wall" and
                     inner.intersection(w.shape()).difference(gate.shape()).area > 1e-6), None)
        return [] if wall is None else [f"stands in the gateway of {gate.id} but reaches into wall {wall.id} "
                                        f"(SIEGE.CASTLE.WALL)"]
    e = next((e for e in castle if e.kind != "gate" and e.shape().covers(centre)), None)
    if e is None:
        wall = next((w for w in castle if w.kind == "wall" and inner.intersects(w.shape())), None)
        return [] if wall is None else [f"stands inside wall {wall.id}: a unit on a wall has its centre on it and "
                                        f"stands in one rank (SIEGE.CASTLE.WALL)"]
    if troop_type in NO_WALL_TYPES:
        return [f"{troop_type} may not stand on {e.kind} {e.id} (SIEGE.MOVE.WALLS)"]
    if e.kind != "wall" and troop_type in NO_ENTRY_TYPES:
        return [f"{troop_type} may not enter {e.kind} {e.id} (SIEGE.CASTLE.TOWER)"]
    if troop_type == "war_machine" and not MACHINE_SLOTS.get(e.kind, 0):
        return [f"a war machine may not stand on {e.kind} {e.id}: only towers and the citadel hold machines "
                f"(SIEGE.CASTLE.TOWER)"]
    if e.kind == "wall" and ranks > 1:
        return [f"a unit on wall {e.id} stands in one rank (SIEGE.CASTLE.WALL), not {ranks}"]
    return []


def _castle_errors(s: ScenarioConfig, shapes: list[tuple[str, Polygon]], castle: list[Any]) -> list[Problem]:
    """Siege equipment only in a siege, on its own side (SIEGE.EQUIP.TABLE; an army list's ``castle_equipment``
    only on the defender's); the castle, standard or custom, lies wholly on the table and its elements overlap
    neither each other (a gate lies in its wall section) nor impassable terrain; no attacker's placement stands on
    or in a tower or the citadel: one enters those only from an adjacent element one holds
    (SIEGE.MOVE.WALLS) and at the start the defender holds every element. (An attacker may stand on a wall
    section: it climbs there from outside.)

    ``shapes``: the placements' footprints from :func:`_side_errors`; ``castle``: the scenario's castle elements
    (:func:`env.rules.siege.castle.build_castle`, built once by :func:`scenario_errors`; empty outside a siege).
    """
    from battleline.env.rules.siege.equipment import cauldron_errors, side_errors

    errors: list[Problem] = []
    defender = s.castle.defender if s.castle is not None else "blue"
    for name in ("blue", "red"):
        side = s.side(name)
        in_army = side.placements is None and side.army in list_armies()
        entries = side.placements if side.placements is not None else (
            load_army(side.army, validate=False).units if in_army else [])
        army_file = f"{name}.army: {display_path(army_path(str(side.army)))}"
        where = f"{army_file}: units" if in_army else f"{name}.placements"
        role = "defender" if name == defender else "attacker"
        if in_army and any(load_army(side.army, validate=False).castle_equipment.values()) and (
                not s.siege or role == "attacker"):
            errors.append((None, f"{army_file}: castle_equipment: " + (
                "castle equipment needs the siege module" if not s.siege
                else f"castle equipment is the defender's ({defender}), and this side is the attacker")))
        elif in_army and s.siege and role == "defender":
            from battleline.env.rules.siege.castle import bought_gate_errors

            errors += [(None, f"{army_file}: {p}") for p in bought_gate_errors(s)]
        for i, e in enumerate(entries):
            if e.equipment and not s.siege:
                errors.append((None, f"{where}[{i}].equipment: siege equipment needs the siege module"))
            elif e.equipment:
                errors += [(None, p) for p in side_errors(f"{where}[{i}]", e.equipment, role)]
        if side.placements is not None and s.siege:  # an army list's cauldrons are counted by validate_army
            errors += [(None, p) for p in cauldron_errors(where, [e.equipment for e in side.placements])]
    if not s.siege:
        return errors
    table = box(0, 0, *s.table).buffer(EPS, join_style="mitre")
    standard = s.castle is None or s.castle.layout == "standard"
    for i, e in enumerate(castle):
        if table.covers(e.shape()):
            continue
        if standard:  # SIEGE.SCEN.CASTLE: x 18-54, y 0-18 from the defender's edge
            errors.append((None, f"castle: the standard castle's {e.kind} '{e.id}' is not wholly on the "
                                 f"{s.table_text()} table (it needs at least 54x18 from the defender's edge)"))
            return errors
        errors.append((None, f"castle.elements[{i}]: {e.kind} '{e.id}' is not wholly on the {s.table_text()} table"))
    for i, e in enumerate(castle):
        inner = e.shape().buffer(-EPS, join_style="mitre")
        for other in castle[:i]:
            if e.parent != other.id and other.parent != e.id and inner.intersects(other.shape()):
                errors.append((None, f"castle.elements[{i}] overlaps {other.id}: castle elements may touch, "
                                     f"not overlap (a gate lies inside its 'parent' wall section)"))
        errors += [(None, f"castle: {e.kind} '{e.id}' overlaps impassable {t.kind}"
                          + (f" '{t.name}'" if t.name else f" (terrain[{j}])"))
                   for j, t in enumerate(s.terrain) if t.kind in IMPASSABLE and inner.intersects(t.shape())]
    attacker = "red" if defender == "blue" else "blue"
    towers = [e for e in castle if e.kind in ("tower", "citadel")]
    for where, fp in shapes:
        if not where.startswith(f"{attacker}."):
            continue
        inner = fp.buffer(-EPS, join_style="mitre")
        hit = next((e for e in towers if inner.intersects(e.shape())), None)
        if hit is not None:
            errors.append((None, f"{where.split(':')[0]} overlaps {hit.kind} {hit.id}: a tower is entered only from "
                                 f"a held element (SIEGE.MOVE.WALLS) and at the start the defender ({defender}) "
                                 f"holds them all"))
    return errors


def _overlap_errors(shapes: list[tuple[str, Polygon]]) -> list[str]:
    errors = []
    for j, (where, fp) in enumerate(shapes):
        inner = fp.buffer(-EPS, join_style="mitre")
        for other, other_fp in shapes[:j]:
            if inner.intersects(other_fp):
                errors.append(f"{where} overlaps {other.split(':')[0]}")
    return errors
