"""Bad scenario input gives one line naming the file, the field and the fault (env/rules/config.py).

Castles on the table and clear of each other and of the attacker (SIEGE.SCEN.CASTLE), finite numbers,
strict numbers and booleans (no text for either), the shared file reader, empty sides, a wizard's spells
(CORE.MAGIC.WIZARDS), ``start`` with army lists, the scenario and army files named, duplicate YAML keys.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from battleline.env.rules import config as C
from battleline.env.rules import config_files
from battleline.env.rules.battle import Battle
from battleline.env.rules.config import ConfigError

SCENARIOS = C.CONFIG_DIR / "scenarios"
FIRE = [f"CORE.MAGIC.SPELL.FIRE.{n}" for n in (1, 2, 3, 4)]


def _load(name: str) -> dict:
    return yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())


def _error(fn: object, *args: object, **kw: object) -> str:
    with pytest.raises(ConfigError) as info:
        fn(*args, **kw)  # type: ignore[operator]
    text = str(info.value)
    assert "\n" not in text
    return text


def _write_yaml(path: Path, data: object) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# ----------------------------------------------------------------------------- castles (SIEGE.SCEN.CASTLE)
def test_standard_castle_must_fit_the_table() -> None:
    data = _load("gate_assault")
    data.update(table=[45, 40], zone_depth=10)
    assert _error(C.load_scenario, data, file="g.yaml") == (
        "g.yaml: castle: the standard castle's wall 'S3' is not wholly on the 45x40 table "
        "(it needs at least 54x18 from the defender's edge)"
    )


def test_custom_castle_elements_may_not_overlap() -> None:
    data = _load("gate_assault")
    for p, x in zip(data["blue"]["placements"], (52, 64)):  # off this custom castle's walls
        p.update(x=x, y=6)
    wall = [[20, 16], [30, 16], [30, 18], [20, 18]]
    data["castle"] = {"defender": "blue", "layout": "custom", "elements": [
        {"id": "W1", "kind": "wall", "polygon": wall},
        {"id": "W2", "kind": "wall", "polygon": [[x + 5, y] for x, y in wall]},
    ]}
    assert _error(C.load_scenario, data).startswith("<dict>: castle.elements[1] overlaps W1: castle elements may touch")
    data["castle"]["elements"][1]["polygon"] = [[x + 10, y] for x, y in wall]  # touching W1: fine
    data["castle"]["elements"].append({"id": "G", "kind": "gate", "parent": "W2", "polygon": [
        [33, 16], [36, 16], [36, 18], [33, 18]]})  # a gate inside its wall: fine
    assert [e.id for e in C.load_scenario(data).castle.elements] == ["W1", "W2", "G"]


def test_attacker_placement_may_not_stand_in_the_castle() -> None:
    data = _load("gate_assault")
    data["red"]["placements"][0].update(x=20, y=16)  # inside tower T1
    assert _error(C.load_scenario, data) == (
        "<dict>: red.placements[0] overlaps tower T1: a tower is entered only from a held element "
        "(SIEGE.MOVE.WALLS) and at the start the defender (blue) holds them all"
    )
    data["red"]["placements"][0].update(x=26.5, y=16.394, models=10, files=10, equipment={})  # on S1, climbed: fine
    data["red"]["placements"][1].update(x=45, y=24.2)
    assert C.load_scenario(data).red.placements[0].y == 16.394


# ----------------------------------------------------------------------------- finite numbers
def _skirmish_file_with(tmp_path: Path, path: tuple, value: str) -> Path:
    """``skirmish_line`` (with a small wood) written to a file, the YAML text ``value`` written as is at ``path``."""
    data = _load("skirmish_line")
    data["terrain"] = [{"kind": "woods", "name": "Copse", "polygon": [[30, 30], [34, 30], [34, 34]]}]
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = "@@"
    file = tmp_path / "x.yaml"
    file.write_text(yaml.safe_dump(data, sort_keys=False).replace("'@@'", value))
    return file


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("blue", "placements", 0, "x"), ".nan", "blue.placements[0].x"),
        (("blue", "placements", 0, "facing"), ".inf", "blue.placements[0].facing"),
        (("terrain", 0, "polygon", 1, 0), ".nan", "terrain[0].polygon[1][0]"),
        (("table", 1), ".nan", "table[1]"),
        (("zone_depth",), "-.inf", "zone_depth"),
        (("victory_margin",), ".nan", "victory_margin"),
    ],
)
def test_non_finite_numbers_are_rejected(tmp_path: Path, path: tuple, value: str, where: str) -> None:
    file = _skirmish_file_with(tmp_path, path, value)
    assert _error(C.load_scenario, file) == f"{file}: {where}: must be a finite number"


# ----------------------------------------------------------------------------- strict numbers and booleans
@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("blue", "placements", 0, "x"), "'10'", "blue.placements[0].x: Input should be a valid number, got the string '10'"),
        (("blue", "placements", 0, "models"), '"20"', "blue.placements[0].models: Input should be a valid integer, "
                                                     "got the string '20'"),
        (("blue", "placements", 0, "models"), "20.0", "blue.placements[0].models: Input should be a valid integer, "
                                                     "got 20.0"),
        (("table", 0), "'72'", "table[0]: Input should be a valid number, got the string '72'"),
        (("terrain", 0, "polygon", 1, 0), "'34'", "terrain[0].polygon[1][0]: Input should be a valid number, "
                                                  "got the string '34'"),
        (("turns",), "'6'", "turns: Input should be a valid integer, got the string '6'"),
        (("victory_margin",), "1e-1", "victory_margin: Input should be a valid number, got the string '1e-1' "
                                      "(YAML reads an exponent as a number only with a '.' and a sign, e.g. 3.0e-4)"),
        (("blue", "placements", 0, "fleeing"), "'yes'", "blue.placements[0].fleeing: Input should be a valid boolean, "
                                                        "got the string 'yes'"),
        (("blue", "placements", 0, "general"), "1", "blue.placements[0].general: Input should be a valid boolean, "
                                                    "got 1"),
        (("magic",), "'true'", "magic: Input should be a valid boolean, got the string 'true'"),
        (("blue", "placements", 0, "joins"), "1.0", "blue.placements[0].joins: expected the joined entry's index "
                                                    "(an integer) or its label, got 1.0"),
        (("magic",), "yes", "magic: Input should be a valid boolean, got the string 'yes'"),  # YAML 1.2 booleans
        (("war_machines",), "off", "war_machines: Input should be a valid boolean, got the string 'off'"),
        (("champion_attack",), "1", "champion_attack: Input should be a valid boolean, got 1"),
    ],
)
def test_numbers_and_booleans_are_strict(tmp_path: Path, path: tuple, value: str, message: str) -> None:
    """A quoted number is text, not a number; a boolean is true or false (ConfigModel's strict mode; YAML 1.1's
    yes/no/on/off are text, C.YAML12_BOOL)."""
    file = _skirmish_file_with(tmp_path, path, value)
    assert _error(C.load_scenario, file) == f"{file}: {message}"


def test_an_integer_is_a_float() -> None:
    """An integer stands for a float field (``x: 10``, ``table: [72, 48]``); lists of numbers still load as tuples."""
    s = C.load_scenario("skirmish_line")
    assert s.table == (72.0, 48.0) and isinstance(s.table[0], float)
    p = s.blue.placements[0]  # type: ignore[index]
    assert (p.x, p.y) == (30.0, 18.0) and isinstance(p.x, float)
    assert s.terrain[0].polygon[0] == (62.0, 21.0)


def test_castle_element_outward_must_be_finite() -> None:
    data = _load("gate_assault")
    data["castle"] = {"defender": "blue", "layout": "custom", "elements": [
        {"id": "W1", "kind": "wall", "outward": float("inf"), "polygon": [[20, 16], [30, 16], [30, 18], [20, 18]]}]}
    assert _error(C.load_scenario, data) == "<dict>: castle.elements[0].outward: must be a finite number"


# ----------------------------------------------------------------------------- the shared file reader
def test_read_file_text_names_the_fault(tmp_path: Path) -> None:
    bad = tmp_path / "b.yaml"
    bad.write_bytes(b"\xff\xfe{}")
    assert _error(C.load_scenario, bad) == f"{bad}: not UTF-8 text"
    assert _error(C.load_scenario, tmp_path) == f"{tmp_path}: is a directory"
    assert _error(C.read_file_text, tmp_path / "none.json") == f"{tmp_path / 'none.json'}: file not found"
    with pytest.raises(KeyError, match="not UTF-8 text"):
        C.read_file_text(bad, KeyError)


@pytest.mark.parametrize("command", [["play", "--scenario"], ["train", "--config"], ["replay"], ["detect"]])
def test_cli_reports_unreadable_files_in_one_line(tmp_path: Path, command: list[str]) -> None:
    from battleline.training.cli import app

    bad = tmp_path / "b.json"
    bad.write_bytes(b"\xff\xfe{}")
    for target, fault in ((bad, "not UTF-8 text"), (tmp_path, "is a directory")):
        result = CliRunner().invoke(app, [*command, str(target)])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert lines == [f"error: {target}: {fault}"] and "Traceback" not in result.output


# ----------------------------------------------------------------------------- sides and start
def test_empty_placements_say_no_units() -> None:
    data = _load("skirmish_line")
    data["blue"] = {"faction": "men", "placements": []}
    assert _error(C.load_scenario, data, file="s.yaml") == "s.yaml: blue.placements: no units"


def test_start_needs_placements_on_both_sides() -> None:
    data = _load("pitched_battle")
    data["start"] = {"turn": 5, "phase": "shooting", "player": "red"}
    assert _error(C.load_scenario, data).startswith("<dict>: start: needs placements on both sides")


# ----------------------------------------------------------------------------- wizards' spells (CORE.MAGIC.WIZARDS)
def _with_wizard(faction: str, unit: str, **kw: object) -> dict:
    data = _load("skirmish_line")
    side = copy.deepcopy(data["blue"]) if faction == "men" else {"faction": faction, "placements": []}
    side["placements"].append({"unit": unit, "models": 1, "files": 1, "x": 10, "y": 10, "facing": 90, **kw})
    data["blue"] = side
    return data


@pytest.mark.parametrize(
    ("kw", "fault"),
    [
        ({"lore": "fire", "spells": FIRE},
         "blue.placements[3].spells: a level-1 wizard knows only spell #1 of lore 'fire' "
         "(CORE.MAGIC.SPELL.FIRE.1 is #1; CORE.MAGIC.WIZARDS), got 4 spells"),
        ({"lore": "fire", "spells": [FIRE[0], FIRE[0]]},
         "blue.placements[3].spells[1]: 'CORE.MAGIC.SPELL.FIRE.1' is listed twice"),
        ({"lore": "fire", "spells": [FIRE[1]]},
         "a level-1 wizard knows only spell #1 of lore 'fire' (CORE.MAGIC.SPELL.FIRE.1 is #1; CORE.MAGIC.WIZARDS), "
         "got 1 spells without #1"),
        ({"lore": "fire", "options": ["level_2"], "spells": FIRE[1:3]},
         "a level-2 wizard knows spell #1 plus 1 others of lore 'fire'"),
        ({"lore": "fire", "options": ["level_3"], "spells": FIRE}, "got 4 spells"),
    ],
)
def test_given_spells_must_fit_the_wizards_level(kw: dict, fault: str) -> None:
    text = _error(C.load_scenario, _with_wizard("men", "battle_wizard", **kw))
    assert text.startswith("<dict>: blue.placements[3].spells") and fault in text


def test_given_spells_a_level_allows_are_accepted() -> None:
    for kw in ({"spells": [FIRE[0]]}, {"options": ["level_2"], "spells": [FIRE[2]]},
               {"options": ["level_3"], "spells": [FIRE[0], FIRE[1], FIRE[3]]}):
        C.load_scenario(_with_wizard("men", "battle_wizard", lore="fire", **kw))
    data = _with_wizard("elves", "elf_mage", lore="fire", options=["loremaster"], spells=FIRE)
    data["blue"]["placements"].insert(0, {"unit": "elf_mage", "models": 1, "files": 1, "x": 60, "y": 10, "facing": 90})
    C.load_scenario(data)


def test_spells_on_a_non_wizard_say_not_a_wizard() -> None:
    data = _with_wizard("men", "marcher_captain", spells=[FIRE[0]])
    assert _error(C.load_scenario, data) == (
        "<dict>: blue.placements[3].spells: 'marcher_captain' is not a wizard, so it knows no spells"
    )


# ----------------------------------------------------------------------------- files named
def test_army_override_error_names_the_scenario_file(tmp_path: Path) -> None:
    data = _load("pitched_battle")
    data["points_limit"] = 1950
    path = _write_yaml(tmp_path / "pb1950.yaml", data)
    assert _error(Battle.from_scenario, str(path), blue_army="men_knightly_order") == (
        f"{path}: blue.army: 'men_knightly_order' is 1,969 points, over the scenario's 1,950-point limit"
    )


def test_army_equipment_error_names_the_scenario_and_army_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    root = tmp_path / "configs"
    shutil.copytree(C.CONFIG_DIR / "factions", root / "factions")
    shutil.copytree(C.CONFIG_DIR / "armies", root / "armies")
    army = yaml.safe_load((root / "armies" / "men_marcher_host.yaml").read_text())
    army.update(id="men_oil")
    army["units"][1]["equipment"] = {"oil": 1}
    _write_yaml(root / "armies" / "men_oil.yaml", army)
    monkeypatch.setattr(config_files, "CONFIG_DIR", root)
    data = _load("pitched_battle")
    data["blue"] = {"army": "men_oil"}
    path = _write_yaml(tmp_path / "s.yaml", data)
    assert _error(C.load_scenario, path) == (
        f"{path}: blue.army: {root / 'armies' / 'men_oil.yaml'}: units[1].equipment: "
        "siege equipment needs the siege module"
    )


def test_a_scenario_named_by_its_id_must_say_that_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As for army lists and factions; by path any id is fine (it was accepted by name too)."""
    import shutil

    root = tmp_path / "configs"
    shutil.copytree(C.CONFIG_DIR / "factions", root / "factions")
    (root / "scenarios").mkdir()
    data = _load("skirmish_line")
    data["id"] = "other"
    path = _write_yaml(root / "scenarios" / "mine.yaml", data)
    monkeypatch.setattr(config_files, "CONFIG_DIR", root)
    assert _error(C.load_scenario, "mine") == f"{path}: id: id 'other' does not match the file name 'mine'"
    assert C.load_scenario(path).id == "other"
    monkeypatch.undo()
    assert C.load_scenario("coverage/coverage_gun_line").id == "coverage_gun_line"  # a name in a subfolder


# ----------------------------------------------------------------------------- YAML
def test_duplicate_yaml_keys_are_rejected(tmp_path: Path) -> None:
    text = "".join(ln for ln in (SCENARIOS / "skirmish_line.yaml").read_text().splitlines(True)
                   if not ln.startswith("turns:"))
    path = tmp_path / "dup.yaml"
    path.write_text(text + "turns: 3\nturns: 9\n")
    line = len(text.splitlines()) + 2
    assert _error(C.load_scenario, path) == f"{path}: line {line}: duplicate key 'turns'"
    nested = tmp_path / "nested.yaml"
    nested.write_text("a: {x: 1, x: 2}\n")
    assert _error(C.read_yaml, nested) == f"{nested}: line 1: duplicate key 'x'"
    merged = tmp_path / "merged.yaml"
    merged.write_text("base: &b {x: 1}\nother:\n  <<: *b\n  x: 2\n")
    assert C.read_yaml(merged)["other"] == {"x": 2}


@pytest.mark.parametrize(("change", "message"), [
    ({"zone_depth": 0.5}, 'p.yaml: zone_depth: army lists deploy in rows 3-11" from the edge, a 12" zone, not 0.5" '
                          "(give explicit placements for another zone)"),
    ({"table": [480, 48]}, 'p.yaml: table: army lists deploy on the slot grid of a 72" wide table, not 480" '
                           "(give explicit placements for another width)"),
])
def test_army_list_deployment_needs_the_slot_grid_table(change: dict, message: str) -> None:
    """CORE.SETUP.DEPLOY's slots are laid out for a 72" table with 12" zones: a battle deployed from army lists
    on another width or zone depth is refused (units that find no slot used to vanish as destroyed)."""
    data = _load("pitched_battle")
    data.update(change)
    assert _error(C.load_scenario, data, file="p.yaml") == message


@pytest.mark.parametrize(("where", "change", "message"), [
    (0, {"models": 40, "files": 10},
     "<dict>: blue.placements[0]: stands in the gateway of G but reaches into wall S2 (SIEGE.CASTLE.WALL)"),
    (2, {"unit": "order_knights", "models": 5, "files": 5, "x": 45.5, "y": 17.0, "facing": 90},
     "<dict>: blue.placements[2]: cavalry may not stand on wall S3 (SIEGE.MOVE.WALLS)"),
    (2, {"unit": "marcher_outriders", "models": 5, "files": 5, "x": 52, "y": 16, "facing": 90},
     "<dict>: blue.placements[2]: cavalry may not stand on tower T2 (SIEGE.MOVE.WALLS)"),
    (2, {"unit": "great_cannon", "models": 3, "files": 3, "x": 45.5, "y": 17.0, "facing": 90},
     "<dict>: blue.placements[2]: a war machine may not stand on wall S3: only towers and the citadel hold "
     "machines (SIEGE.CASTLE.TOWER)"),
    (2, {"unit": "marcher_spearmen", "models": 10, "files": 5, "x": 45.5, "y": 17.0, "facing": 90},
     "<dict>: blue.placements[2]: a unit on wall S3 stands in one rank (SIEGE.CASTLE.WALL), not 2"),
])
def test_defender_placements_keep_the_castle_rules(where: int, change: dict, message: str) -> None:
    """The standard castle's walls hold infantry in one rank and no war machines, towers hold no cavalry, and a
    unit in the gateway does not reach into the wall beside the gate (the engine's own invariants)."""
    data = _load("gate_assault")
    places = data["blue"]["placements"]
    if where < len(places):
        places[where].update(change)
    else:
        places.append(change)
    assert _error(C.load_scenario, data) == message


# ----------------------------------------------------------------------------- a mapping given as something else
@pytest.mark.parametrize(("value", "got"), [
    (None, "nothing (an empty value)"),
    ([1], "a list"),
    ("men", "the string 'men'"),
    (5, "the number 5"),
])
def test_a_section_that_is_no_mapping_says_what_it_got(value: object, got: str) -> None:
    """Not pydantic's 'Input should be a valid dictionary or instance of SideConfig'."""
    data = _load("skirmish_line")
    data["blue"] = value
    assert _error(C.load_scenario, data, file="s.yaml") == (
        f"s.yaml: blue: expected a mapping (field: value lines), got {got}")


def test_a_training_opponent_given_as_a_name_says_what_it_got() -> None:
    from battleline.training.config import load_training_config

    data = yaml.safe_load((C.CONFIG_DIR / "training" / "quick.yaml").read_text())
    data["opponents"] = ["random"]
    assert _error(load_training_config, data) == (
        "<dict>: opponents[0]: expected a mapping (field: value lines), got the string 'random'")
