"""Army-list validation (env/rules/army.py): each check pinned with a tiny hand-built army."""

from __future__ import annotations

from typing import Any

import pytest

from battleline.env.rules import army as A
from battleline.env.rules.config import ArmyListConfig, ArmyUnitConfig, FactionConfig

PROFILE = {"M": 4, "WS": 3, "BS": 3, "S": 3, "T": 3, "W": 1, "I": 3, "A": 1, "Ld": 7}


def _faction() -> FactionConfig:
    return FactionConfig.model_validate(
        {
            "id": "testers",
            "name": "Testers",
            "description": "A tiny faction for tests.",
            "units": [
                {
                    "id": "spears",
                    "name": "Spears",
                    "troop_type": "infantry",
                    "profile": PROFILE,
                    "points_per_model": 5,
                    "min_size": 10,
                    "max_size": 30,
                    "command": {"champion": 10, "standard": 8, "musician": 4},
                    "options": [
                        {"id": "shield", "points_per_model": 1, "effect": {"shield": True}},
                        {"id": "halberd", "points_per_model": 1, "effect": {"melee": "halberd"}},
                        {"id": "great_weapon", "points_per_model": 2, "effect": {"melee": "great_weapon"}},
                        {"id": "drilled", "points": 15, "effect": {"special_rules": ["stubborn"]}},
                    ],
                },
                {
                    "id": "riders",
                    "name": "Riders",
                    "troop_type": "cavalry",
                    "profile": {**PROFILE, "M": 8},
                    "points_per_model": 20,
                    "min_size": 5,
                    "command": {"musician": 6},
                    "max_per_army": 1,
                },
                {
                    "id": "lord",
                    "name": "Lord",
                    "troop_type": "infantry",
                    "character": True,
                    "profile": {**PROFILE, "Ld": 9},
                    "points_per_model": 100,
                    "max_size": 1,
                },
                {
                    "id": "hero",
                    "name": "Hero",
                    "troop_type": "infantry",
                    "character": True,
                    "profile": {**PROFILE, "Ld": 8},
                    "points_per_model": 50,
                    "max_size": 1,
                    "options": [{"id": "battle_standard", "points": 25, "effect": {"battle_standard": True}}],
                },
            ],
        }
    )


FACTION = _faction()


def _army(*units: dict[str, Any], limit: int = 2000, faction: str = "testers") -> ArmyListConfig:
    """A legal general plus ``units``."""
    return ArmyListConfig.model_validate(
        {
            "id": "t",
            "name": "T",
            "faction": faction,
            "points_limit": limit,
            "units": [{"unit": "lord", "models": 1, "general": True}, *units],
        }
    )


def _entry(**kw: Any) -> ArmyUnitConfig:
    return ArmyUnitConfig.model_validate({"unit": "spears", "models": 20, "files": 5, **kw})


# ----------------------------------------------------------------------------- points
def test_unit_points_models_only() -> None:
    assert A.unit_points(_entry(), FACTION.unit("spears")) == 100


def test_unit_points_with_command_and_options() -> None:
    entry = _entry(command=["champion", "standard", "musician"], options=["shield", "drilled"])
    # 20 x 5 + (10 + 8 + 4) + 20 x 1 + 15
    assert A.unit_points(entry, FACTION.unit("spears")) == 157


def test_unit_points_unknown_option_raises() -> None:
    with pytest.raises(ValueError, match="unknown option 'pikes'"):
        A.unit_points(_entry(options=["pikes"]), FACTION.unit("spears"))


def test_unit_points_unavailable_command_raises() -> None:
    with pytest.raises(ValueError, match="may not take a champion"):
        A.unit_points(ArmyUnitConfig(unit="riders", models=5, command=["champion"]), FACTION.unit("riders"))


def test_army_points_sums_units() -> None:
    army = _army({"unit": "spears", "models": 20}, {"unit": "riders", "models": 5, "command": ["musician"]})
    assert A.army_points(army, FACTION) == 100 + 100 + 106


def test_check_points_over_limit() -> None:
    army = _army({"unit": "spears", "models": 30}, limit=200)
    assert A.check_points(army, FACTION) == ["points_limit: army is 250 points, over its 200-point limit"]


def test_check_points_uses_thousands_separators() -> None:
    big = {"unit": "spears", "models": 30, "options": ["great_weapon"]}  # 210 points
    army = _army(*[big] * 9, {"unit": "spears", "models": 29}, limit=2000)  # + lord 100 + 145
    assert A.army_points(army, FACTION) == 2135
    assert A.check_points(army, FACTION) == ["points_limit: army is 2,135 points, over its 2,000-point limit"]


def test_check_points_at_limit_is_fine() -> None:
    assert A.check_points(_army({"unit": "spears", "models": 20}, limit=200), FACTION) == []


# ----------------------------------------------------------------------------- general
def test_check_general_ok() -> None:
    assert A.check_general(_army({"unit": "hero", "models": 1}), FACTION) == []


def test_check_general_missing() -> None:
    army = ArmyListConfig(id="t", name="T", faction="testers", units=[ArmyUnitConfig(unit="lord", models=1)])
    assert A.check_general(army, FACTION) == ["units: the army has no general (set general: true on one character)"]


def test_check_general_two() -> None:
    army = _army({"unit": "hero", "models": 1, "general": True})
    assert A.check_general(army, FACTION) == ["units[1].general: the army has 2 generals; exactly one is allowed"]


def test_check_general_must_be_character() -> None:
    army = ArmyListConfig(
        id="t", name="T", faction="testers", units=[ArmyUnitConfig(unit="spears", models=20, general=True)]
    )
    assert A.check_general(army, FACTION) == ["units[0].general: the general must be a character, 'spears' is not"]


def test_check_general_must_have_highest_ld() -> None:
    army = ArmyListConfig(
        id="t",
        name="T",
        faction="testers",
        units=[ArmyUnitConfig(unit="hero", models=1, general=True), ArmyUnitConfig(unit="lord", models=1)],
    )
    assert A.check_general(army, FACTION) == [
        "units[0].general: the general must have the highest Ld among the characters, "
        "but units[1] 'lord' has Ld9 > Ld8"
    ]


# ----------------------------------------------------------------------------- ids, sizes, files
def test_check_unit_ids_unknown() -> None:
    army = _army({"unit": "spears", "models": 20}, {"unit": "spermen", "models": 20})
    assert A.check_unit_ids(army, FACTION) == ["units[2].unit: unknown unit 'spermen' for faction 'testers'"]


def test_check_faction_mismatch() -> None:
    assert A.check_faction(_army(faction="others"), FACTION) == ["faction: the army is for 'others', not 'testers'"]


def test_check_size_below_min() -> None:
    assert A.check_size("units[1]", _entry(models=9, files=3), FACTION.unit("spears")) == [
        "units[1].models: 9 is below the minimum of 10 for 'spears'"
    ]


def test_check_size_above_max() -> None:
    assert A.check_size("units[1]", _entry(models=31), FACTION.unit("spears")) == [
        "units[1].models: 31 is above the maximum of 30 for 'spears'"
    ]


def test_check_size_no_max() -> None:
    assert A.check_size("u", ArmyUnitConfig(unit="riders", models=50), FACTION.unit("riders")) == []


def test_check_size_character_single_model() -> None:
    assert A.check_size("units[0]", ArmyUnitConfig(unit="lord", models=2), FACTION.unit("lord")) == [
        "units[0].models: a character is a single model, got 2"
    ]


def test_check_files_more_than_models() -> None:
    assert A.check_files("units[1]", _entry(models=10, files=11)) == [
        "units[1].files: 11 files must be between 1 and 10 (the models)"
    ]


@pytest.mark.parametrize("files", [None, 1, 10])
def test_check_files_ok(files: int | None) -> None:
    assert A.check_files("u", _entry(models=10, files=files)) == []


# ----------------------------------------------------------------------------- command and options
def test_check_command_unavailable() -> None:
    entry = ArmyUnitConfig(unit="riders", models=5, command=["musician", "standard"])
    assert A.check_command("units[2]", entry, FACTION.unit("riders")) == [
        "units[2].command[1]: a standard is not available to 'riders'"
    ]


def test_check_command_twice() -> None:
    assert A.check_command("units[1]", _entry(command=["standard", "standard"]), FACTION.unit("spears")) == [
        "units[1].command[1]: 'standard' is listed twice"
    ]


def test_check_options_unknown() -> None:
    assert A.check_options("units[1]", _entry(options=["shield", "pikes"]), FACTION.unit("spears")) == [
        "units[1].options[1]: unknown option 'pikes' for 'spears'"
    ]


def test_check_options_twice() -> None:
    assert A.check_options("units[1]", _entry(options=["shield", "shield"]), FACTION.unit("spears")) == [
        "units[1].options[1]: 'shield' is listed twice"
    ]


def test_check_options_conflict() -> None:
    assert A.check_options("units[1]", _entry(options=["halberd", "great_weapon"]), FACTION.unit("spears")) == [
        "units[1].options[1]: 'great_weapon' conflicts with 'halberd' (both set melee)"
    ]


def test_check_options_compatible() -> None:
    entry = _entry(options=["shield", "halberd", "drilled"])
    assert A.check_options("u", entry, FACTION.unit("spears")) == []


# ----------------------------------------------------------------------------- army-wide limits
def test_check_max_per_army() -> None:
    army = _army({"unit": "riders", "models": 5}, {"unit": "riders", "models": 5})
    assert A.check_max_per_army(army, FACTION) == ["units[2].unit: 'riders' is limited to 1 per army"]


def test_check_battle_standard_one_is_fine() -> None:
    army = _army({"unit": "hero", "models": 1, "options": ["battle_standard"]})
    assert A.check_battle_standard(army, FACTION) == []


def test_check_battle_standard_two() -> None:
    bsb = {"unit": "hero", "models": 1, "options": ["battle_standard"]}
    army = _army(bsb, bsb)
    assert A.check_battle_standard(army, FACTION) == [
        "units[2].options: a second battle standard bearer; an army has at most one"
    ]


# ----------------------------------------------------------------------------- validate_army
def test_validate_army_legal() -> None:
    army = _army(
        {"unit": "hero", "models": 1, "options": ["battle_standard"]},
        {"unit": "spears", "models": 20, "files": 5, "command": ["champion", "standard"], "options": ["shield"]},
        {"unit": "riders", "models": 5, "files": 5, "command": ["musician"]},
    )
    assert A.validate_army(army, FACTION) == []
    assert A.army_points(army, FACTION) == 100 + 75 + 138 + 106


def test_validate_army_collects_errors_in_order() -> None:
    army = _army(
        {"unit": "spermen", "models": 20},
        {"unit": "spears", "models": 5, "files": 6, "command": ["champion"], "options": ["pikes"]},
        {"unit": "lord", "models": 1, "general": True},
    )
    assert A.validate_army(army, FACTION) == [
        "units[1].unit: unknown unit 'spermen' for faction 'testers'",
        "units[2].models: 5 is below the minimum of 10 for 'spears'",
        "units[2].files: 6 files must be between 1 and 5 (the models)",
        "units[2].options[0]: unknown option 'pikes' for 'spears'",
        "units[3].general: the army has 2 generals; exactly one is allowed",
    ]


def test_validate_army_reports_points() -> None:
    assert A.validate_army(_army({"unit": "spears", "models": 30}, limit=250), FACTION) == []
    army = _army({"unit": "spears", "models": 30}, limit=249)
    assert A.validate_army(army, FACTION) == ["points_limit: army is 250 points, over its 249-point limit"]
