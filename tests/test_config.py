"""Game data and loaders (env/rules/config.py and configs/)."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from battleline.env.rules import config as C
from battleline.env.rules import config_files
from battleline.env.rules.army import army_points, validate_army
from battleline.env.rules.config import ConfigError, ScenarioConfig, UnitTypeConfig

FACTIONS = ["dwarfs", "elves", "men", "orcs"]
ARMY_POINTS = {
    "dwarfs_hold_warband": 1902,
    "dwarfs_iron_throng": 1925,
    "elves_kindred_host": 1923,
    "elves_wind_host": 1934,
    "men_knightly_order": 1969,
    "men_marcher_host": 1920,
    "orcs_boar_warband": 1908,
    "orcs_tusk_horde": 1932,
}
PROFILE = {"M": 4, "WS": 3, "BS": 3, "S": 3, "T": 3, "W": 1, "I": 3, "A": 1, "Ld": 7}


# ----------------------------------------------------------------------------- armour table
@pytest.mark.parametrize(
    ("armour", "shield", "mount", "barding", "save"),
    [
        ("none", False, False, False, 7),
        ("none", True, False, False, 6),
        ("none", False, True, False, 6),
        ("none", True, True, False, 5),
        ("none", True, True, True, 4),
        ("light", False, False, False, 6),
        ("light", True, False, False, 5),
        ("light", True, True, False, 4),
        ("light", True, True, True, 3),
        ("heavy", False, False, False, 5),
        ("heavy", True, False, False, 4),
        ("heavy", True, True, True, 2),
        ("plate", False, False, False, 4),
        ("plate", True, False, False, 3),
        ("plate", True, True, False, 2),
        ("plate", True, True, True, 1),
    ],
)
def test_armour_save_table(armour: str, shield: bool, mount: bool, barding: bool, save: int) -> None:
    assert C.armour_save_value(armour, shield, mount, barding) == save


def _unit(**kw: object) -> UnitTypeConfig:
    data = {"id": "u", "name": "U", "troop_type": "infantry", "profile": PROFILE, "points_per_model": 5, **kw}
    return UnitTypeConfig.model_validate(data)


def test_unit_armour_save_counts_the_mount() -> None:
    assert _unit(armour="light", shield=True).armour_save() == 5
    assert _unit(troop_type="cavalry", armour="light", shield=True).armour_save() == 4
    assert _unit(troop_type="cavalry", armour="plate", shield=True, barding=True).armour_save() == 1


def test_unit_armour_save_overrides() -> None:
    u = _unit(armour="light", shield=True)
    assert u.armour_save(shield=False) == 6
    assert u.armour_save(armour="heavy") == 4
    assert u.armour_save(armour="none", shield=False) == 7


@pytest.mark.parametrize(
    ("troop_type", "mm"),
    [
        ("infantry", (20, 20)),
        ("monstrous_infantry", (40, 40)),
        ("cavalry", (25, 50)),
        ("monster", (50, 50)),
        ("chariot", (50, 100)),
        ("war_machine", (50, 100)),
    ],
)
def test_base_mm(troop_type: str, mm: tuple[int, int]) -> None:
    machine = {"missile": "bolt_thrower", "min_size": 2, "max_size": 2} if troop_type == "war_machine" else {}
    assert _unit(troop_type=troop_type, **machine).base_mm() == mm


def test_base_inches() -> None:
    assert _unit(troop_type="cavalry").base_inches() == pytest.approx((25 / 25.4, 50 / 25.4))


# ----------------------------------------------------------------------------- model validation
@pytest.mark.parametrize(
    ("change", "fault"),
    [
        ({"profile": {**PROFILE, "Ld": 11}}, "less than or equal to 10"),
        ({"profile": {**PROFILE, "BS": -1}}, "greater than or equal to 0"),
        ({"character": True, "max_size": 3}, "a character is a single model"),
        ({"min_size": 10, "max_size": 5}, "max_size 5 is below min_size 10"),
        ({"barding": True}, "barding needs a mount"),
        ({"special_rules": ["flying_circus"]}, "unknown special rule 'flying_circus'"),
        ({"options": [{"id": "x", "effect": {"wings": True}}]}, "unknown effect 'wings'"),
        ({"options": [{"id": "x", "effect": {"melee": "banana"}}]}, "Input should be"),
        ({"options": [{"id": "x", "effect": {}}, {"id": "x", "effect": {}}]}, "duplicate option id 'x'"),
        ({"troop_type": "dragon"}, "Input should be"),
        ({"weapon": "sword"}, "Extra inputs are not permitted"),
    ],
)
def test_unit_type_rejects(change: dict[str, object], fault: str) -> None:
    with pytest.raises(ValidationError, match=fault):
        _unit(**change)


@pytest.mark.parametrize(("effect", "problem"), [
    ({"barding": True}, "option 'x': barding needs a mount, not troop type 'infantry'"),
    ({"missile": "great_cannon"}, "option 'x': only a war_machine may have the machine 'great_cannon'"),
])
def test_an_option_obeys_the_kit_rules_of_its_unit(effect: dict[str, object], problem: str) -> None:
    """An option could give infantry barding or a cannon, which the unit's own kit may not have."""
    data = {"id": "u", "name": "U", "troop_type": "infantry", "profile": PROFILE, "points_per_model": 5,
            "options": [{"id": "x", "effect": effect}]}
    assert _error(C.parse, UnitTypeConfig, data, "f.yaml") == f"f.yaml: {problem}"


MACHINE_LIST = "great_cannon, light_cannon, stone_thrower, bolt_thrower, flame_cannon"


@pytest.mark.parametrize(("kit", "effect", "problem"), [
    ({}, {"missile": "bolt_thrower"}, "option 'x': a bolt_thrower has a crew of 2, not the unit's 3 (an option keeps "
                                      "the crew)"),
    ({}, {"missile": "bow"}, f"option 'x': a war_machine's missile must be a machine ({MACHINE_LIST}), got 'bow'"),
    ({}, {"missile": None}, f"option 'x': a war_machine's missile must be a machine ({MACHINE_LIST}), got none"),
    ({"missile": "crossbow"}, {}, f"a war_machine's missile must be a machine ({MACHINE_LIST}), got 'crossbow'"),
    ({"missile": None}, {}, f"a war_machine's missile must be a machine ({MACHINE_LIST}), got none"),
])
def test_a_war_machines_machine_is_checked_against_machines(kit: dict, effect: dict, problem: str) -> None:
    """CORE.WM.PROFILES: the machine a war machine fires, its own or an option's, is one of war_machines.MACHINES
    with the unit's crew (an option swapping a 3-crew cannon for a 2-crew bolt thrower, or for a bow, passed)."""
    data = {"id": "u", "name": "U", "troop_type": "war_machine", "profile": PROFILE, "points_per_model": 5,
            "missile": "great_cannon", "min_size": 3, "max_size": 3, **kit, "options": [{"id": "x", "effect": effect}]}
    assert _error(C.parse, UnitTypeConfig, data, "f.yaml") == f"f.yaml: {problem}"


def test_a_war_machine_option_in_a_faction_file_names_the_file_and_unit(cfg: Path) -> None:
    """The faction file's error names the file, the unit entry and the option's bad value, on one line."""
    from battleline.env.rules.war_machines import MACHINES

    assert C.MACHINE_WEAPONS == set(MACHINES)  # the config's list of machine missiles is the engine's
    path = cfg / "factions" / "men.yaml"
    data = yaml.safe_load(path.read_text())
    i = next(i for i, u in enumerate(data["units"]) if u.get("missile") == "great_cannon")
    data["units"][i]["options"] = [{"id": "grapeshot_only", "effect": {"missile": "handgun"}}]
    _write(path, data)
    assert _error(C.load_faction, "men") == (
        f"{path}: units[{i}] (great_cannon): option 'grapeshot_only': a war_machine's missile must be a machine ({MACHINE_LIST}), "
        f"got 'handgun'")


@pytest.mark.parametrize("stat", ["W", "WS", "S", "T", "I", "Ld"])
def test_profile_characteristics_are_at_least_1(stat: str) -> None:
    """CORE.CONV.CHARACTERISTICS clamps these to 1..10; a profile with 0 Wounds is a slain model."""
    data = {"id": "u", "name": "U", "troop_type": "infantry", "profile": {**PROFILE, stat: 0}, "points_per_model": 5}
    assert _error(C.parse, UnitTypeConfig, data, "f.yaml") == (
        f"f.yaml: profile.{stat}: Input should be greater than or equal to 1, got 0")


def test_profile_m_bs_and_a_may_be_0() -> None:
    """M and A may reach 0 (CORE.CONV.CHARACTERISTICS); BS 0 is a model that does not shoot."""
    assert _unit(profile={**PROFILE, "M": 0, "BS": 0, "A": 0}).profile.A == 0


def test_known_special_rules() -> None:
    assert C.is_known_special_rule("stubborn")
    assert C.is_known_special_rule("multiple_shots_2")
    assert not C.is_known_special_rule("multiple_shots_x")


def test_with_options_applies_effects() -> None:
    u = _unit(
        special_rules=["hatred"],
        options=[
            {"id": "gw", "points_per_model": 2, "effect": {"melee": "great_weapon"}},
            {"id": "ha", "effect": {"armour": "heavy", "special_rules": ["stubborn", "hatred"]}},
        ],
    )
    kitted = u.with_options(["gw", "ha"])
    assert (kitted.melee, kitted.armour, kitted.special_rules) == ("great_weapon", "heavy", ["hatred", "stubborn"])
    assert (u.melee, u.armour, u.special_rules) == ("hand_weapon", "none", ["hatred"])
    with pytest.raises(KeyError):
        u.with_options(["nope"])


# ----------------------------------------------------------------------------- footprint
def test_footprint_blue_facing_north() -> None:
    fp = C.footprint((20, 20), models=20, files=5, x=30, y=10, facing=90)
    w, d = 5 * 20 / 25.4, 4 * 20 / 25.4
    assert fp.bounds == pytest.approx((30 - w / 2, 10 - d / 2, 30 + w / 2, 10 + d / 2))


def test_footprint_short_last_rank_is_full_rectangle() -> None:
    fp = C.footprint((25, 50), models=6, files=5, x=0, y=0, facing=270)
    assert fp.area == pytest.approx((5 * 25 / 25.4) * (2 * 50 / 25.4))


def test_footprint_facing_east_turns_width_onto_y() -> None:
    fp = C.footprint((20, 20), models=10, files=10, x=36, y=24, facing=0)
    w, d = 10 * 20 / 25.4, 20 / 25.4
    assert fp.bounds == pytest.approx((36 - d / 2, 24 - w / 2, 36 + d / 2, 24 + w / 2))


# ----------------------------------------------------------------------------- shipped data
def test_list_functions() -> None:
    assert C.list_factions() == FACTIONS
    assert C.list_armies() == sorted(ARMY_POINTS)
    assert C.list_armies("men") == ["men_knightly_order", "men_marcher_host"]
    assert set(C.list_scenarios()) >= {"pitched_battle", "skirmish_line"}


def test_men_profiles() -> None:
    men = C.load_faction("men")
    spear = men.unit("marcher_spearmen")
    assert spear.profile.model_dump() == PROFILE
    assert (spear.armour, spear.shield, spear.melee, spear.points_per_model) == ("light", True, "spear", 6)
    assert spear.armour_save() == 5
    knights = men.unit("order_knights")
    assert knights.profile.model_dump() == {"M": 7, "WS": 4, "BS": 3, "S": 3, "T": 3, "W": 1, "I": 3, "A": 2, "Ld": 8}
    assert (knights.troop_type, knights.melee, knights.armour_save(), knights.base_mm()) == (
        "cavalry",
        "lance",
        1,
        (25, 50),
    )
    lord = men.unit("lord_marshal")
    assert lord.character and lord.profile.Ld == 9 and (lord.min_size, lord.max_size) == (1, 1)


def test_faction_signatures() -> None:
    dwarf = C.load_faction("dwarfs").unit("clan_warriors").profile
    assert (dwarf.M, dwarf.WS, dwarf.T, dwarf.I, dwarf.Ld) == (3, 4, 4, 2, 9)
    elf = C.load_faction("elves").unit("kindred_spearmen").profile
    assert (elf.M, elf.WS, elf.BS, elf.I, elf.Ld) == (5, 4, 4, 5, 8)
    orcs = C.load_faction("orcs")
    assert orcs.unit("goblin_mob").profile.Ld == 5
    assert orcs.unit("goblin_mob").points_per_model == 3
    assert "fast_cavalry" in orcs.unit("wolf_riders").special_rules
    assert "always_strikes_first" in C.load_faction("elves").unit("blade_wardens").special_rules


@pytest.mark.parametrize("faction_id", FACTIONS)
def test_faction_contents(faction_id: str) -> None:
    faction = C.load_faction(faction_id)
    assert faction.id == faction_id and faction.description
    troops = [u for u in faction.units if not u.character]
    characters = [u for u in faction.units if u.character]
    assert len(troops) >= 6
    assert len(characters) >= 2
    assert max(c.profile.Ld for c in characters) >= 9
    assert {c.troop_type for c in characters} <= {"infantry", "cavalry"}
    assert all((c.min_size, c.max_size) == (1, 1) for c in characters)
    assert {u.troop_type for u in faction.units} <= {"infantry", "cavalry", "monstrous_infantry", "monster", "chariot", "war_machine"}
    assert any(u.troop_type == "war_machine" for u in faction.units)  # CORE.WM.PROFILES
    assert any(u.troop_type == "monster" for u in faction.units)  # CORE.TYPE.MONSTER
    assert any(o.is_battle_standard for c in characters for o in c.options)
    assert all(u.role for u in faction.units)


@pytest.mark.parametrize("army_id", sorted(ARMY_POINTS))
def test_shipped_army_is_valid(army_id: str) -> None:
    army = C.load_army(army_id)
    faction = C.load_faction(army.faction)
    assert army.id == army_id and army_id.startswith(army.faction + "_")
    assert validate_army(army, faction) == []
    assert army_points(army, faction) == ARMY_POINTS[army_id]
    assert 1900 <= ARMY_POINTS[army_id] <= 2000
    assert 6 <= len(army.units) <= 10
    assert sum(e.general for e in army.units) == 1
    roles = {r for e in army.units for r in faction.unit(e.unit).role}
    assert {"battle_line", "fast", "shooters", "character"} <= roles


def test_two_armies_per_faction() -> None:
    assert all(len(C.list_armies(f)) == 2 for f in FACTIONS)


def test_pitched_battle() -> None:
    s = C.load_scenario("pitched_battle")
    assert (s.table, s.zone_depth, s.turns, s.points_limit, s.start) == ((72, 48), 12, 6, 2000, None)
    assert [t.kind for t in s.terrain] == ["hill", "woods", "hedge", "rocks"]
    assert (s.blue.faction, s.blue.army, s.red.faction, s.red.army) == ("men", "men_marcher_host", "orcs", "orcs_tusk_horde")
    hedge = s.terrain[2].shape()
    minx, miny, maxx, maxy = hedge.bounds
    assert 6 <= maxx - minx <= 8 and maxy - miny == pytest.approx(0.5)
    for t in s.terrain:
        cy = t.shape().centroid.y
        assert 14 <= cy <= 34


def test_skirmish_line() -> None:
    s = C.load_scenario("skirmish_line")
    assert s.start is not None and (s.start.turn, s.start.phase, s.start.player) == (1, "start", "blue")
    assert [p.unit for p in s.blue.placements] == ["marcher_spearmen", "marcher_crossbowmen", "order_knights"]
    assert [p.facing for p in s.red.placements] == [270, 270, 270]


def test_placements_on_one_side_only_are_rejected() -> None:
    """A scenario places both sides or neither (README, Data): a placed side never meets a deploying army."""
    data = _skirmish()
    data["red"] = {"faction": "orcs", "army": "orcs_tusk_horde"}
    assert _error(C.load_scenario, data) == (
        "<dict>: red.army: blue has explicit placements, so red needs them too (a scenario places both sides or neither)"
    )


def test_army_override_on_a_placed_scenario_is_rejected() -> None:
    from battleline.env.rules.battle import Battle

    with pytest.raises(C.ConfigError) as info:
        Battle.from_scenario("skirmish_line", seed=0, blue_army="dwarfs_iron_throng")
    assert str(info.value) == ("blue army 'dwarfs_iron_throng': scenario 'skirmish_line' places its units explicitly "
                               "(placements), so its army lists cannot be replaced")


def test_load_scenario_from_path_and_dict() -> None:
    path = C.CONFIG_DIR / "scenarios" / "skirmish_line.yaml"
    assert C.load_scenario(path) == C.load_scenario(str(path)) == C.load_scenario("skirmish_line")
    assert C.load_scenario(yaml.safe_load(path.read_text())).id == "skirmish_line"


# ----------------------------------------------------------------------------- error messages
@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private configs/ tree (real factions, empty armies/ and scenarios/) used by the loaders."""
    root = tmp_path / "configs"
    shutil.copytree(C.CONFIG_DIR / "factions", root / "factions")
    (root / "armies").mkdir()
    (root / "scenarios").mkdir()
    monkeypatch.setattr(config_files, "CONFIG_DIR", root)
    return root


def _write(path: Path, data: object) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _error(fn: object, *args: object) -> str:
    with pytest.raises(ConfigError) as info:
        fn(*args)  # type: ignore[operator]
    text = str(info.value)
    assert "\n" not in text
    return text


def _men_army(**changes: object) -> dict:
    data = yaml.safe_load((Path(C.__file__).resolve().parents[2] / "configs/armies/men_marcher_host.yaml").read_text())
    data.update(changes)
    return data


def _skirmish() -> dict:
    return yaml.safe_load((Path(C.__file__).resolve().parents[2] / "configs/scenarios/skirmish_line.yaml").read_text())


def test_an_army_list_unit_too_deep_for_its_zone_is_refused(cfg: Path) -> None:
    """CORE.SETUP.ZONES: a unit deployed from an army list stands wholly inside its 12" zone; 40 spearmen in one
    file (31.5" deep) never could, and used to vanish at deployment as destroyed."""
    data = _men_army(id="men_deep")
    data["units"][3] = {"unit": "marcher_spearmen", "models": 40, "files": 1}
    _write(cfg / "armies" / "men_deep.yaml", data)
    _write(cfg / "armies" / "orcs_tusk_horde.yaml", yaml.safe_load(
        (Path(C.__file__).resolve().parents[2] / "configs/armies/orcs_tusk_horde.yaml").read_text()))
    scenario = {"id": "deep", "name": "Deep", "blue": {"army": "men_deep"}, "red": {"army": "orcs_tusk_horde"}}
    assert _error(C.load_scenario, scenario) == (
        "<dict>: blue.army: 'Marcher Spearmen' (40 models in 1 file) is 0.8\" wide and 31.5\" deep and cannot "
        "stand wholly inside the 12\" deployment zone of the 72x48 table (CORE.SETUP.ZONES); give it more files")


def test_error_army_over_points(cfg: Path) -> None:
    data = _men_army(id="men_foo")
    data["units"].append({"unit": "marcher_halberdiers", "models": 31, "files": 6, "command": ["champion", "musician"]})
    path = _write(cfg / "armies" / "men_foo.yaml", data)
    assert _error(C.load_army, "men_foo") == f"{path}: points_limit: army is 2,121 points, over its 2,000-point limit"


def test_error_oversized_unit_is_named_before_the_points_total(cfg: Path) -> None:
    """400 spearmen (at most 40) also break the points limit: the error names the entry, not only the total."""
    data = _men_army(id="men_foo")
    data["units"][3]["models"] = 400
    path = _write(cfg / "armies" / "men_foo.yaml", data)
    assert _error(C.load_army, "men_foo") == f"{path}: units[3].models: 400 is above the maximum of 40 for 'marcher_spearmen'"


def test_army_castle_equipment_reinforces_the_defenders_gate_and_only_there(cfg: Path) -> None:
    """SIEGE.EQUIP.REINFORCED_GATE bought in an army list's castle_equipment: it was paid for and never applied."""
    from battleline.env.rules.siege.castle import build_castle

    shutil.copytree(Path(C.__file__).resolve().parents[2] / "configs/siege", cfg / "siege")
    path = _write(cfg / "armies" / "men_rg.yaml", _men_army(id="men_rg", castle_equipment={"reinforced_gate": 1}))
    _write(cfg / "armies" / "orcs_tusk_horde.yaml", yaml.safe_load(
        (Path(C.__file__).resolve().parents[2] / "configs/armies/orcs_tusk_horde.yaml").read_text()))
    siege = {"id": "s", "name": "S", "modules": ["siege"], "castle": {"defender": "blue"},
             "blue": {"army": "men_rg"}, "red": {"army": "orcs_tusk_horde"}}
    assert [e.reinforced for e in build_castle(C.load_scenario(siege)) if e.kind == "gate"] == [True]
    assert _error(C.load_scenario, {**siege, "castle": {"defender": "red"}}) == (
        f"<dict>: blue.army: {path}: castle_equipment: castle equipment is the defender's (red), "
        f"and this side is the attacker")
    field = {"id": "f", "name": "F", "blue": {"army": "men_rg"}, "red": {"army": "orcs_tusk_horde"}}
    assert _error(C.load_scenario, field) == (
        f"<dict>: blue.army: {path}: castle_equipment: castle equipment needs the siege module")
    _write(cfg / "armies" / "men_rg0.yaml", _men_army(id="men_rg0", castle_equipment={"reinforced_gate": 0}))
    none_bought = C.load_scenario({**field, "blue": {"army": "men_rg0"}})  # a count of 0 buys nothing
    assert none_bought.blue.army == "men_rg0"


def test_army_castle_equipment_reinforces_as_many_gates_as_it_buys(cfg: Path) -> None:
    """SIEGE.EQUIP.REINFORCED_GATE is bought per gate (siege.md §1.2, 20 points each): one bought reinforced every
    gate of a custom castle. ``n`` bought reinforce the first ``n`` gates the scenario leaves plain, in element
    order; more than that is refused, naming the army file and field."""
    from battleline.env.rules.siege.castle import build_castle

    root = Path(C.__file__).resolve().parents[2] / "configs"
    shutil.copytree(root / "siege", cfg / "siege")
    _write(cfg / "armies" / "orcs_tusk_horde.yaml", yaml.safe_load((root / "armies/orcs_tusk_horde.yaml").read_text()))
    paths = {n: _write(cfg / "armies" / f"men_rg{n}.yaml", _men_army(id=f"men_rg{n}", castle_equipment={
        "reinforced_gate": n})) for n in (1, 2, 3)}

    def wall(eid: str, x0: float, x1: float, **kw: object) -> dict:
        return {"id": eid, "kind": kw.pop("kind", "wall"), "polygon": [[x0, 16], [x1, 16], [x1, 18], [x0, 18]], **kw}

    elements = [wall("W1", 22, 36), wall("W2", 36, 50), wall("GB", 41, 44, kind="gate", parent="W2"),
                wall("GA", 27, 30, kind="gate", parent="W1")]
    custom = {"defender": "blue", "layout": "custom", "elements": elements}

    def siege(n: int, castle: dict) -> dict:
        return {"id": "s", "name": "S", "modules": ["siege"], "castle": castle,
                "blue": {"army": f"men_rg{n}"}, "red": {"army": "orcs_tusk_horde"}}

    def gates(n: int, castle: dict) -> list[tuple[str, bool]]:
        return [(e.id, e.reinforced) for e in build_castle(C.load_scenario(siege(n, castle))) if e.kind == "gate"]

    assert gates(1, custom) == [("GB", True), ("GA", False)]  # the first gate in the castle's element order
    assert gates(2, custom) == [("GB", True), ("GA", True)]
    assert gates(1, {**custom, "elements": [*elements[:2], {**elements[2], "reinforced": True}, elements[3]]}) == [
        ("GB", True), ("GA", True)]  # the scenario reinforces GB, so the bought one goes to GA
    assert _error(C.load_scenario, siege(3, custom)) == (
        f"<dict>: blue.army: {paths[3]}: castle_equipment.reinforced_gate: 3 bought, but the castle has 2 gates "
        f"(one reinforced gate per gate, SIEGE.EQUIP.REINFORCED_GATE)")
    assert _error(C.load_scenario, siege(2, {"defender": "blue"})) == (
        f"<dict>: blue.army: {paths[2]}: castle_equipment.reinforced_gate: 2 bought, but the castle has 1 gate "
        f"(one reinforced gate per gate, SIEGE.EQUIP.REINFORCED_GATE)")
    assert _error(C.load_scenario, siege(1, {"defender": "blue", "reinforced_gate": True})) == (
        f"<dict>: blue.army: {paths[1]}: castle_equipment.reinforced_gate: 1 bought, but the castle has 1 gate, "
        f"1 already reinforced by the scenario (one reinforced gate per gate, SIEGE.EQUIP.REINFORCED_GATE)")
    men = C.load_faction("men")
    assert army_points(C.load_army("men_rg2"), men) == army_points(C.load_army("men_rg1"), men) + 20
    negative = _write(cfg / "armies" / "men_rgm.yaml", _men_army(id="men_rgm", castle_equipment={"reinforced_gate": -1}))
    assert _error(C.load_army, "men_rgm") == (
        f"{negative}: castle_equipment.reinforced_gate: a count of 0 or more (one per gate), got -1")


def test_error_unknown_unit(cfg: Path) -> None:
    data = _men_army(id="men_foo")
    data["units"][3]["unit"] = "spermen"
    path = _write(cfg / "armies" / "men_foo.yaml", data)
    assert _error(C.load_army, "men_foo") == f"{path}: units[3].unit: unknown unit 'spermen' for faction 'men'"


def test_error_duplicate_label(cfg: Path) -> None:
    """Two entries with one label: the second is named (a label names one unit in joins, logs and replays)."""
    data = _men_army(id="men_foo")
    data["units"][3]["label"] = "Blocks"
    data["units"][4]["label"] = "Blocks"
    path = _write(cfg / "armies" / "men_foo.yaml", data)
    assert _error(C.load_army, "men_foo") == (
        f"{path}: units[4].label: 'Blocks' is also units[3]'s label; a label names one unit")


def test_error_army_via_scenario_names_the_army_file(cfg: Path) -> None:
    data = _men_army(id="men_foo")
    data["units"][0]["general"] = False
    army_file = _write(cfg / "armies" / "men_foo.yaml", data)
    scen = yaml.safe_load((Path(C.__file__).resolve().parents[2] / "configs/scenarios/pitched_battle.yaml").read_text())
    scen["blue"]["army"] = "men_foo"
    scen["red"] = {"faction": "men", "army": "men_foo"}
    path = _write(cfg / "scenarios" / "x.yaml", scen)
    assert _error(C.load_scenario, path) == (
        f"{army_file}: units: the army has no general (set general: true on one character)"
    )


def test_error_army_id_must_match_file(cfg: Path) -> None:
    path = _write(cfg / "armies" / "men_foo.yaml", _men_army())
    assert _error(C.load_army, "men_foo") == f"{path}: id: id 'men_marcher_host' does not match the file name 'men_foo'"


def test_error_army_unknown_faction(cfg: Path) -> None:
    path = _write(cfg / "armies" / "men_foo.yaml", _men_army(id="men_foo", faction="undead"))
    assert _error(C.load_army, "men_foo") == f"{path}: faction: unknown faction 'undead'"


def test_error_army_missing_field(cfg: Path) -> None:
    data = _men_army(id="men_foo")
    del data["units"][2]["models"]
    path = _write(cfg / "armies" / "men_foo.yaml", data)
    assert _error(C.load_army, "men_foo") == f"{path}: units[2].models: required field is missing"


def test_error_unit_off_table(tmp_path: Path) -> None:
    data = _skirmish()
    data["blue"]["placements"][0].update(x=80.0, y=10.0)
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == f"{path}: blue.placements[0]: unit at (80.0, 10.0) is off the 72x48 table"


def test_error_unit_partly_off_table(tmp_path: Path) -> None:
    data = _skirmish()
    data["red"]["placements"][2].update(x=70.0)  # 5 wolf riders are 4.9" wide
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == f"{path}: red.placements[2]: unit at (70.0, 31.0) is off the 72x48 table"


def test_error_unit_in_impassable_terrain(tmp_path: Path) -> None:
    data = _skirmish()
    data["terrain"].append({"kind": "rocks", "name": "Crag", "polygon": [[31, 19], [34, 19], [34, 22], [31, 22]]})
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == (
        f"{path}: blue.placements[0]: unit at (30.0, 18.0) overlaps impassable rocks 'Crag'"
    )


def test_unit_touching_impassable_terrain_is_fine(tmp_path: Path) -> None:
    data = _skirmish()
    right = 30 + 5 * 20 / 25.4 / 2  # spearmen's right edge
    data["terrain"].append({"kind": "building", "polygon": [[right, 17], [right + 2, 17], [right + 2, 19], [right, 19]]})
    assert C.load_scenario(_write(tmp_path / "x.yaml", data)).terrain[-1].kind == "building"


def test_error_unknown_unit_in_placement(tmp_path: Path) -> None:
    data = _skirmish()
    data["red"]["placements"][1]["unit"] = "spermen"
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == f"{path}: red.placements[1].unit: unknown unit 'spermen' for faction 'orcs'"


def test_error_placements_overlap(tmp_path: Path) -> None:
    data = _skirmish()
    data["red"]["placements"][0]["y"] = 20.0
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == f"{path}: red.placements[0]: unit at (30.0, 20.0) overlaps blue.placements[0]"


def test_error_scenario_missing_field(tmp_path: Path) -> None:
    data = _skirmish()
    del data["blue"]["placements"][1]["files"]
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == f"{path}: blue.placements[1].files: required field is missing"


def test_error_wrong_type_shows_value(tmp_path: Path) -> None:
    data = _skirmish()
    data["terrain"][0]["kind"] = "swamp"
    path = _write(tmp_path / "x.yaml", data)
    text = _error(C.load_scenario, path)
    assert text.startswith(f"{path}: terrain[0].kind: Input should be 'hill'") and text.endswith(", got 'swamp'")


@pytest.mark.parametrize(
    ("change", "where", "fault"),
    [
        ({"terrain": [{"kind": "hill", "polygon": [[0, 0], [4, 4]]}]}, "terrain[0].polygon", "at least 3 vertices"),
        ({"terrain": [{"kind": "hill", "polygon": [[0, 0], [4, 4], [4, 0], [0, 4]]}]}, "terrain[0].polygon", "simple"),
        ({"terrain": [{"kind": "lake", "polygon": [[70, 0], [74, 0], [74, 4]]}]}, "terrain[0]", "not wholly on the"),
        ({"start": None}, "start", "'start' (turn, phase, player) is required"),
        ({"start": {"turn": 7}}, "start.turn", "after the last turn (6)"),
        ({"zone_depth": 24}, "zone_depth", "leave no room"),
        ({"table": [1e9, 48]}, "table", "table width and depth may be at most 480 inches (got 1e+09x48)"),
        ({"victory_margin": 2}, "victory_margin", "less than or equal to 1"),
        ({"modles": []}, "modles", "unknown field"),
        ({"zone-depth": 10}, "zone-depth", "unknown field"),
        ({"turns": True}, "turns", "expected a number, got a boolean (true/false)"),
        ({"table": [72, True]}, "table", "expected a number, got a boolean (true/false)"),
        ({"red": {"faction": "orcs"}}, "red", "give either 'army' or 'placements'"),
        ({"red": {"placements": _skirmish()["red"]["placements"]}}, "red", "'faction' is required with 'placements'"),
    ],
)
def test_scenario_errors(change: dict, where: str, fault: str) -> None:
    data = _skirmish()
    data.update(change)
    text = _error(C.load_scenario, data)
    assert text.startswith(f"<dict>: {where}: ") and fault in text


@pytest.mark.parametrize(
    ("red", "where", "fault"),
    [
        ({"faction": "undead", "army": "x"}, "red.faction", "unknown faction 'undead'"),
        ({"army": "orcs_none"}, "red.army", "unknown army list 'orcs_none'"),
        ({"faction": "orcs", "army": "orcs_none"}, "red.army", "unknown army list 'orcs_none'"),
        ({"faction": "orcs", "army": "men_marcher_host"}, "red.army", "'men_marcher_host' is a 'men' army, not 'orcs'"),
    ],
)
def test_side_errors(red: dict, where: str, fault: str) -> None:
    data = yaml.safe_load((C.CONFIG_DIR / "scenarios" / "pitched_battle.yaml").read_text())
    data["red"] = red
    assert _error(C.load_scenario, data) == f"<dict>: {where}: {fault}"


def test_error_scenario_points(tmp_path: Path) -> None:
    data = yaml.safe_load((C.CONFIG_DIR / "scenarios" / "pitched_battle.yaml").read_text())
    data["points_limit"] = 1500
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == (
        f"{path}: blue.army: 'men_marcher_host' is 1,920 points, over the scenario's 1,500-point limit"
    )


def test_placed_units_obey_the_scenario_points_limit_too(tmp_path: Path) -> None:
    """CORE.SETUP.ARMIES: explicit placements were never totalled. Skirmish Line places 371 points of men (the
    command models counted) and 305 of orcs; siege equipment is paid from the same points (SIEGE.EQUIP.TABLE)."""
    data = {**_skirmish(), "points_limit": 370}
    path = _write(tmp_path / "x.yaml", data)
    assert _error(C.load_scenario, path) == (
        f"{path}: blue.placements: the units are 371 points, over the scenario's 370-point limit")
    assert C.load_scenario({**data, "points_limit": 371}).points_limit == 371  # the limit itself is allowed
    siege = {**data, "points_limit": 371, "modules": ["siege"], "castle": {"defender": "red", "layout": "custom",
             "elements": [{"id": "W", "kind": "wall", "polygon": [[36, 40], [46, 40], [46, 42], [36, 42]]}]}}
    siege["blue"] = {**siege["blue"], "placements": [{**p, "equipment": {"hooks": 1}} if p["unit"] == "marcher_spearmen"
                                                     else p for p in siege["blue"]["placements"]]}
    assert _error(C.load_scenario, {**siege, "attacker_points_ratio": 1}) == (  # hooks: +1 a model, 20 spearmen
        "<dict>: blue.placements: the units are 391 points, over the scenario's 371-point limit")


def test_a_sieges_attacker_may_field_one_and_a_half_times_the_defenders_points(tmp_path: Path) -> None:
    """SIEGE.SCEN.POINTS (DEFAULT ratio 1.5): ``points_limit`` is the defender's, the attacker's is 1.5 x it,
    rounded down. Skirmish Line as a siege that red defends: blue (the attacker) places 371 points, red 305."""
    data = {**_skirmish(), "modules": ["siege"], "castle": {"defender": "red", "layout": "custom",
            "elements": [{"id": "W", "kind": "wall", "polygon": [[36, 40], [46, 40], [46, 42], [36, 42]]}]}}
    s = C.load_scenario({**data, "points_limit": 305})
    assert (s.attacker(), s.points_limit_of("blue"), s.points_limit_of("red")) == ("blue", 457, 305)
    assert _error(C.load_scenario, {**data, "points_limit": 247}) == (  # 1.5 x 247 = 370.5 -> 370
        "<dict>: blue.placements: the units are 371 points, over the attacker's 370-point limit "
        "(1.5 x the scenario's 247, SIEGE.SCEN.POINTS)")
    assert _error(C.load_scenario, {**data, "points_limit": 304, "attacker_points_ratio": 2}) == (
        "<dict>: red.placements: the units are 305 points, over the scenario's 304-point limit")
    assert C.load_scenario({**data, "points_limit": 305, "attacker_points_ratio": 1.22}).points_limit_of("blue") == 372
    assert C.load_scenario(_skirmish()).attacker() is None  # no siege: one limit for both
    assert _error(C.load_scenario, {**data, "attacker_points_ratio": 0}).startswith("<dict>: attacker_points_ratio: ")
    assert _error(C.load_scenario, {**_skirmish(), "attacker_points_ratio": 2}) == (  # it would be ignored
        "<dict>: attacker_points_ratio applies to a siege's attacker (SIEGE.SCEN.POINTS); "
        "this scenario has no siege module")
    plain = C.load_scenario(_skirmish())
    assert C.load_scenario(plain.model_dump(mode="json")).attacker_points_ratio == 1.5  # a dump carries the default


def test_error_file_not_found(tmp_path: Path) -> None:
    assert _error(C.load_scenario, tmp_path / "nope.yaml") == f"{tmp_path / 'nope.yaml'}: file not found"
    # an id no shipped file has is named as such, not as a missing "configs/..." file the user never gave
    assert _error(C.load_faction, "undead") == "unknown faction 'undead'; known: dwarfs, elves, men, orcs"
    assert _error(C.load_army, "nope") == f"unknown army list 'nope'; known: {', '.join(C.list_armies())}"
    assert _error(C.load_scenario, "no_such_scenario") == (
        f"unknown scenario 'no_such_scenario'; shipped: {', '.join(C.list_scenarios())} (a scenario of your own: its YAML path)")


def test_error_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: x\nname: [unclosed\nturns: 6\n")
    text = _error(C.load_scenario, path)
    assert text.startswith(f"{path}: invalid YAML: ") and "line" in text


def test_error_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    assert _error(C.load_scenario, path) == f"{path}: expected a mapping at the top level, got list"


@pytest.mark.parametrize("text", ["", "# a comment only\n"])
def test_error_empty_file_says_so(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(text)
    assert _error(C.load_scenario, path) == (
        f"{path}: the file is empty or only comments (expected a mapping at the top level)")


def test_error_faction_duplicate_unit(cfg: Path) -> None:
    path = cfg / "factions" / "men.yaml"
    data = yaml.safe_load(path.read_text())
    data["units"].append(data["units"][0])
    _write(path, data)
    assert _error(C.load_faction, "men") == f"{path}: units: duplicate unit id 'marcher_spearmen' (entries 0 and 20)"


def test_config_error_is_one_line() -> None:
    err = ConfigError("a\nb  c", file="f.yaml", where="units[1]")
    assert str(err) == "f.yaml: units[1]: a b c"
    assert (err.file, err.where) == ("f.yaml", "units[1]")
    assert str(ConfigError("x.yaml: file not found")) == "x.yaml: file not found"
    assert isinstance(err, ValueError)


def test_loc_text() -> None:
    assert C.loc_text(("units", 3, "unit")) == "units[3].unit"
    assert C.loc_text(("terrain", 0, "polygon", 2, 1)) == "terrain[0].polygon[2][1]"
    assert C.loc_text(()) == ""


def test_scenario_defaults() -> None:
    s = ScenarioConfig.model_validate(
        {"id": "x", "name": "X", "blue": {"faction": "men", "army": "a"}, "red": {"faction": "orcs", "army": "b"}}
    )
    assert (s.table, s.turns, s.points_limit, s.zone_depth, s.victory_margin, s.modules) == (
        (72, 48), 6, 2000, 12.0, 0.10, []
    )
    assert s.table_text() == "72x48"
    assert math.isclose(s.victory_margin, 0.1)


def test_scenario_switches_leave_out_magic_and_war_machines() -> None:
    """``magic: false`` leaves the Marcher Host's wizard out and strips bound spells and scrolls; ``war_machines:
    false`` leaves its great cannon out; the captain and the lord stay joined to their units; uids stay 0..n−1."""
    from battleline.env.rules.battle import Battle

    data = yaml.safe_load((C.CONFIG_DIR / "scenarios" / "pitched_battle.yaml").read_text())
    kinds = lambda b: [u.type_id for u in b.state.units if u.side == 0]  # noqa: E731
    full = Battle.from_scenario(data, seed=0)
    assert "battle_wizard" in kinds(full) and "great_cannon" in kinds(full)
    no_magic = Battle.from_scenario({**data, "magic": False}, seed=0)
    assert kinds(no_magic) == [k for k in kinds(full) if k != "battle_wizard"]
    assert all(u.wizard_level == 0 and not u.bound_spells and u.dispel_scrolls == 0 for u in no_magic.state.units)
    neither = Battle.from_scenario({**data, "magic": False, "war_machines": False}, seed=0)
    assert kinds(neither) == [k for k in kinds(no_magic) if k != "great_cannon"]
    assert not any(u.troop_type == "war_machine" for u in neither.state.units)
    assert [u.uid for u in neither.state.units] == list(range(len(neither.state.units))) == list(range(16))
    hosts = {u.type_id: neither.unit(u.joined_to).type_id for u in neither.state.units if u.joined_to is not None}
    assert hosts == {
        k: v for k, v in ((u.type_id, full.unit(u.joined_to).type_id) for u in full.state.units if u.joined_to is not None)
    }
    with pytest.raises(ConfigError, match="magic: Input should be a valid boolean"):
        C.load_scenario({**data, "magic": "sometimes"})


def test_a_side_with_an_army_list_takes_the_lists_faction() -> None:
    data = C.load_scenario("pitched_battle").model_dump(exclude_none=True)
    del data["red"]["faction"]
    s = C.load_scenario(data)
    assert s.red.faction == "orcs" and s.red.army == C.load_scenario("pitched_battle").red.army
