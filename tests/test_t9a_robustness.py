"""Bad T9A data and odd T9A battles (RULESET.md §6.1, §6.4): one-line config errors naming the file, the field
and the fault; battles that mix the modules, sieges and placements stay consistent."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from battleline.env.rules import config as C
from battleline.env.rules.config import FactionConfig, T9AConfig, from_validation_error


@pytest.mark.parametrize(("field", "value", "want"), [
    ("protections", ["aegis"], "'aegis': aegis needs its save X+, X from 2 to 6"),
    ("protections", ["aegis (x+)"], "'aegis (x+)': aegis needs its save X+, X from 2 to 6"),
    ("protections", ["aegis (7+)"], "'aegis (7+)': aegis needs its save X+, X from 2 to 6"),
    ("protections", ["regeneration (1+, against orcs)"], "regeneration needs its save X+, X from 2 to 6"),
    ("protections", ["hard_target (2)"], "'hard_target (2)': hard_target takes no parameter"),
    ("rider_protections", ["parry (5+)"], "'parry (5+)': parry takes no parameter"),
    ("attributes", ["multiple_wounds (0)"], "'multiple_wounds (0)': multiple_wounds needs X, a whole number, d3 or d6"),
    ("attributes", ["stomp (d7)"], "'stomp (d7)': stomp takes X, a whole number, d3 or d6 (at least 1)"),
    ("attributes", ["lethal_strike (3)"], "'lethal_strike (3)': lethal_strike takes no parameter"),
])
def test_t9a_block_parameters_are_checked_in_one_line(field: str, value: list[str], want: str) -> None:
    """T9A.PP.AEGIS / T9A.PP.REGENERATION need X+ (2..6), T9A.PP.HARD_TARGET and the other protections take no
    X, T9A.AA.MULTIPLE_WOUNDS and T9A.STOMP need X ≥ 1 or d3/d6: a fault is one line naming file and field."""
    with pytest.raises(ValidationError) as err:
        T9AConfig.model_validate({field: value})
    msg = str(from_validation_error(err.value, "men.yaml"))
    assert msg.startswith(f"men.yaml: {field}: ") and want in msg and "\n" not in msg, msg


@pytest.mark.parametrize("ok", [["aegis (2+)", "regeneration (6+)", "hard_target", "hard_target", "parry"],
                                ["aegis (4+, against flaming)"]])
def test_t9a_block_accepts_the_written_forms(ok: list[str]) -> None:
    """T9A.PP.AGAINST: the forms the faction data use still load (Hard Target twice = two instances)."""
    assert T9AConfig.model_validate({"protections": ok}).protections == ok


@pytest.mark.parametrize(("unit_id", "t9a", "want"), [
    ("lord_marshal", {"artillery": "cannon"},
     "t9a.artillery: only a war_machine fires a T9A artillery profile, not troop type 'infantry' (T9A.ART.PROFILES)"),
    ("lord_marshal", {"rider_protections": ["aegis (4+)"]},
     "t9a.rider_protections: the unit type has no rider (T9A.PP.WHOLE_MODEL)"),
])
def test_t9a_block_must_fit_its_unit_type(unit_id: str, t9a: dict, want: str) -> None:
    """T9A.ART.PROFILES belong to war machines, T9A.PP.WHOLE_MODEL's rider protections to a ridden model."""
    data = C.read_yaml(C.CONFIG_DIR / "factions" / "men.yaml")
    i = next(k for k, u in enumerate(data["units"]) if u["id"] == unit_id)
    data["units"][i] = {**data["units"][i], "t9a": t9a}
    with pytest.raises(ValidationError) as err:
        FactionConfig.model_validate(data)
    msg = str(from_validation_error(err.value, "configs/factions/men.yaml"))
    assert msg == f"configs/factions/men.yaml: units[{i}]: {want}", msg


def test_a_character_joining_a_character_names_both_in_one_line(tmp_path) -> None:
    """CORE.MOVE.JOIN in an explicit T9A set-up: a character placed joined to another character is refused with
    one line naming the file, the placement's ``joins`` and both unit types."""
    import yaml

    data = C.read_yaml(C.CONFIG_DIR / "scenarios" / "coverage_t9a" / "coverage_t9a_march.yaml")
    data["blue"]["placements"][4]["joins"] = 3  # the lord marshal onto the marcher captain
    path = tmp_path / "joined.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(C.ConfigError) as err:
        C.load_scenario(path)
    assert str(err.value).endswith("blue.placements[4].joins: 'lord_marshal' cannot join 'marcher_captain', a character "
                                   "(a character joins a unit that is not one)"), str(err.value)


def test_faction_error_names_the_unit_type_by_id_beside_its_index() -> None:
    """A bad `t9a:` block deep in a faction file: the one-line error names the unit type's id, not only its index."""
    import yaml

    from battleline.env.rules.config import CONFIG_DIR, ConfigError, FactionConfig, parse

    data = yaml.safe_load((CONFIG_DIR / "factions" / "men.yaml").read_text(encoding="utf-8"))
    i = next(k for k, u in enumerate(data["units"]) if u["id"] == "lord_marshal")
    data["units"][i]["t9a"] = {"attributes": ["lethal_strik"]}
    with pytest.raises(ConfigError) as err:
        parse(FactionConfig, data, "men.yaml")
    msg = str(err.value)
    assert msg.startswith(f"men.yaml: units[{i}] (lord_marshal).t9a.attributes")
    assert "\n" not in msg and "unknown attribute 'lethal_strik'" in msg
