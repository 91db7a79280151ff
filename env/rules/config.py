"""Game data: pydantic models for factions, army lists and scenarios, and their loaders.

Units: distances and coordinates are in inches (CORE.CONV.UNITS), base sizes in
millimetres (CORE.GEO.BASES), costs in points.

Every loader raises :class:`ConfigError`, whose message is one line of the form
``<file>: <field path>: <what is wrong>``.

This module loads and checks scenarios (:func:`load_scenario`, :func:`check_scenario`) and is the one import path of
the game data: the models, loaders and checks live in :mod:`env.rules.config_files` (the error type, finding and reading files),
:mod:`env.rules.config_models` (units, factions, army lists), :mod:`env.rules.scenario_models` (scenarios) and
:mod:`env.rules.scenario_checks` (a scenario's checks across its files), and are re-exported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from battleline.env.rules.config_files import (
    CONFIG_DIR,
    NESTED_TOO_DEEPLY,
    REPO_ROOT,
    YAML12_BOOL,
    ConfigError,
    DuplicateKeyError,
    _check_id,
    _config_stamp,
    army_path,
    display_path,
    from_validation_error,
    list_armies,
    list_factions,
    list_scenarios,
    loc_text,
    package_data_dir,
    parse,
    read_file_text,
    read_yaml,
    scenario_file,
    scenario_path,
)
from battleline.env.rules.config_models import (
    ARTILLERY,
    ATTRIBUTE_PARTS,
    ATTRIBUTE_TAGS,
    ATTRIBUTES,
    BASES_MM,
    BODY_ARMOUR_SAVE,
    EPS,
    IMPASSABLE,
    MACHINE_WEAPONS,
    MM_PER_INCH,
    MOUNTED,
    PROTECTIONS,
    SPECIAL_RULE_PATTERNS,
    SPECIAL_RULES,
    Armour,
    ArmyListConfig,
    ArmyUnitConfig,
    BoundSpellConfig,
    Characteristic,
    CommandCosts,
    CommandModel,
    ConfigModel,
    FactionConfig,
    Joins,
    MayBeZero,
    Melee,
    Missile,
    OptionEffect,
    Pair,
    ProfileConfig,
    RiderConfig,
    T9AAttributeConfig,
    T9AConfig,
    TerrainKind,
    TroopType,
    UnitOption,
    UnitTypeConfig,
    armour_save_value,
    fmt_num,
    footprint,
    is_known_special_rule,
    load_army,
    load_faction,
)
from battleline.env.rules.scenario_checks import (
    DEPLOYMENT_TABLE_WIDTH,
    DEPLOYMENT_ZONE_DEPTH,
    Problem,
    scenario_errors,
)
from battleline.env.rules.scenario_models import (
    IMPLEMENTED_MODULES,
    MAX_TABLE,
    MODES,
    MODULES,
    CastleConfig,
    CastleElementConfig,
    PlacementConfig,
    ScenarioConfig,
    SideConfig,
    StartConfig,
    TerrainConfig,
    module_errors,
)

__all__ = [
    "package_data_dir",
    "CONFIG_DIR",
    "REPO_ROOT",
    "MM_PER_INCH",
    "EPS",
    "TroopType",
    "Armour",
    "Melee",
    "Missile",
    "MACHINE_WEAPONS",
    "CommandModel",
    "TerrainKind",
    "BASES_MM",
    "MOUNTED",
    "BODY_ARMOUR_SAVE",
    "IMPASSABLE",
    "SPECIAL_RULES",
    "SPECIAL_RULE_PATTERNS",
    "ConfigError",
    "armour_save_value",
    "is_known_special_rule",
    "fmt_num",
    "footprint",
    "Pair",
    "ConfigModel",
    "Characteristic",
    "MayBeZero",
    "ProfileConfig",
    "CommandCosts",
    "OptionEffect",
    "UnitOption",
    "BoundSpellConfig",
    "RiderConfig",
    "PROTECTIONS",
    "ATTRIBUTES",
    "ATTRIBUTE_TAGS",
    "ATTRIBUTE_PARTS",
    "ARTILLERY",
    "T9AAttributeConfig",
    "T9AConfig",
    "UnitTypeConfig",
    "FactionConfig",
    "Joins",
    "ArmyUnitConfig",
    "ArmyListConfig",
    "TerrainConfig",
    "PlacementConfig",
    "SideConfig",
    "MODULES",
    "IMPLEMENTED_MODULES",
    "MODES",
    "module_errors",
    "CastleElementConfig",
    "CastleConfig",
    "StartConfig",
    "MAX_TABLE",
    "ScenarioConfig",
    "display_path",
    "loc_text",
    "from_validation_error",
    "DuplicateKeyError",
    "YAML12_BOOL",
    "read_file_text",
    "NESTED_TOO_DEEPLY",
    "read_yaml",
    "parse",
    "army_path",
    "load_faction",
    "load_army",
    "scenario_path",
    "scenario_file",
    "load_scenario",
    "check_scenario",
    "list_factions",
    "list_armies",
    "list_scenarios",
    "is_scenario",
    "Problem",
    "scenario_errors",
    "DEPLOYMENT_TABLE_WIDTH",
    "DEPLOYMENT_ZONE_DEPTH",
]


_LOADED: dict[tuple, ScenarioConfig] = {}
"""Scenarios already loaded and checked, by (source, its file's and every shipped config file's mtime and size)."""


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


def is_scenario(source: object) -> bool:
    """Whether ``source`` names a scenario: an id in ``configs/scenarios`` or the path of a YAML file that exists
    (its contents are checked by :func:`load_scenario`)."""
    return isinstance(source, str) and (source in list_scenarios() or (
        Path(source).suffix in (".yaml", ".yml") and Path(source).is_file()))
