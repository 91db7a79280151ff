"""Scenario models: the table, terrain, the two sides (army lists or explicit placements), the game mode and
modules, the castle of a siege and where play starts (CFG.MODE, CFG.MODULES, CORE.SETUP.*, SIEGE.SCEN.*).

Units: distances and coordinates are in inches (CORE.CONV.UNITS), facings in degrees, costs in points.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator
from shapely.geometry import LinearRing, Polygon

from battleline.env.rules.config_files import army_path, read_yaml
from battleline.env.rules.config_models import (
    EPS,
    CommandModel,
    ConfigModel,
    Joins,
    Pair,
    TerrainKind,
    _check_unique,
    fmt_num,
)


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
