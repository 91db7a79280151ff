"""The siege module (RULESET.md §5, SIEGE.*): castle, damage tables, equipment, assault.

Exact values with scripted dice. The standard castle is blue's (his edge y = 0):
wall S1 spans x 22–31, y 16–18 with its outer face at y = 18.
"""

from __future__ import annotations

import json

import pytest

from battleline.env.rules.battle import Battle
from battleline.env.rules.config import ConfigError, load_scenario
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.siege import castle as cs
from battleline.env.rules.siege import damage as dmg
from battleline.env.rules.state import BattleState
from tests.setups import placement, rules

BASE = 20 / 25.4


def siege_scenario(blue: list[dict], red: list[dict], phase: str = "shooting", player: str = "red", **castle) -> dict:
    return {
        "id": "siege_test",
        "name": "Siege test",
        "modules": ["siege"],
        "castle": {"defender": "blue", **castle},
        "blue": {"faction": "men", "placements": blue},
        "red": {"faction": "orcs", "placements": red},
        "start": {"turn": 1, "phase": phase, "player": player},
    }


def siege_battle(blue=None, red=None, dice=None, **kw) -> Battle:
    blue = blue if blue is not None else [placement("marcher_spearmen", 26.5, 17.0 - 0.0, 90, models=10, files=10)]
    red = red if red is not None else [placement("orc_warriors", 36, 40, 270)]
    return Battle.from_scenario(siege_scenario(blue, red, **kw), seed=0, dice=ScriptedDice(dice or [], then_seed=0))


def feed(b: Battle, faces: list[int]) -> None:
    """Script the next D6 faces."""
    b.dice = ScriptedDice(faces, then_seed=1)
    b.dice.log = b._log_roll


# ----------------------------------------------------------------------------- data model
def test_standard_castle_elements_and_geometry():
    els = cs.standard_castle(0)
    assert [e.id for e in els] == ["T1", "S1", "S2", "G", "S3", "T2", "S4", "S5", "C", "T3"]
    s1 = next(e for e in els if e.id == "S1")
    assert (s1.length, s1.depth) == (9.0, 2.0)
    assert list(s1.outer_face().coords) in ([(31.0, 18.0), (22.0, 18.0)], [(22.0, 18.0), (31.0, 18.0)])
    assert s1.capacity(BASE) == 11  # 9" / 0.787"
    t1 = next(e for e in els if e.id == "T1")
    assert t1.capacity(BASE, BASE) == 25  # 5 x 5 on a 4" x 4" top; the inside holds as many
    assert [e.machine_slots for e in els if e.is_tower] == [1, 1, 3, 1]
    assert (s1.cover(), cs.CastleElement("W", "wall", s1.polygon, material="wood").cover()) == (-2, -1)
    g = next(e for e in els if e.id == "G")
    assert (g.gate, g.parent, g.reinforced) == ("closed", "S2", False)
    s4 = next(e for e in els if e.id == "S4")
    assert s4.outer_face().bounds == (18.0, 6.0, 18.0, 14.0)


def test_castle_for_red_is_turned_half_round():
    els = cs.standard_castle(1, 72, 48)
    s1 = next(e for e in els if e.id == "S1")
    assert s1.shape().bounds == (41.0, 30.0, 50.0, 32.0)
    assert s1.outward == 270.0 and s1.outer_face().bounds == (41.0, 30.0, 50.0, 30.0)


def test_castle_in_state_round_trips_and_default_is_empty():
    b = siege_battle()
    assert len(b.state.castle) == 10
    b.state.castle[1].damage_bonus = 3
    text = b.to_json()
    again = Battle.from_json(text)
    assert again.state.castle == b.state.castle
    assert json.loads(text)["state"]["castle"][1]["damage_bonus"] == 3
    plain = BattleState.from_dict({**b.state.to_dict(), "castle": []})
    assert plain.castle == []
    from tests.setups import battle

    assert battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 30, 270)]).state.castle == []


def test_scenario_schema_castle_and_modules():
    base = siege_scenario([placement("marcher_spearmen", 26.5, 17, 90, models=10, files=10)],
                          [placement("orc_warriors", 36, 40, 270)])
    s = load_scenario(base)
    assert s.siege and s.castle is not None and s.castle.defender == "blue"
    with pytest.raises(ConfigError, match="needs the siege module"):
        load_scenario({**base, "modules": []})
    with pytest.raises(ConfigError, match="unknown module 'sieges'"):
        load_scenario({**base, "modules": ["sieges"]})
    with pytest.raises(ConfigError, match="named twice"):
        load_scenario({**base, "modules": ["siege", "siege"]})
    with pytest.raises(ConfigError, match="'siege' and 'skirmish.house.terror' cannot be combined"):
        load_scenario({**base, "modules": ["siege", "skirmish.house.terror"]})
    assert load_scenario({**base, "modules": ["siege", "t9a.artillery"]}).siege  # CFG.SIEGE_T9A: they combine
    with pytest.raises(ConfigError, match="custom castle needs"):
        load_scenario({**base, "castle": {"layout": "custom"}})
    custom = {"layout": "custom", "elements": [
        {"id": "W", "kind": "wall", "polygon": [[10, 10], [20, 10], [20, 12], [10, 12]]},
        {"id": "G", "kind": "gate", "parent": "W", "polygon": [[14, 10], [16, 10], [16, 12], [14, 12]]},
    ]}
    loaded = load_scenario({**base, "castle": custom})
    assert len(loaded.castle.elements) == 2
    again = load_scenario(loaded.model_dump(mode="json"))  # a dump carries the defaults (battles reload it)
    assert again.castle == loaded.castle and again.castle.material == "stone" and not again.castle.reinforced_gate
    bad_gate = {"layout": "custom", "elements": [custom["elements"][0],
                {"id": "G", "kind": "gate", "parent": "W", "polygon": [[30, 10], [32, 10], [32, 12], [30, 12]]}]}
    with pytest.raises(ConfigError, match="not inside its wall section"):
        load_scenario({**base, "castle": bad_gate})
    with pytest.raises(ConfigError) as err:  # it applies to the standard castle only, and was ignored
        load_scenario({**base, "castle": {**custom, "reinforced_gate": True}})
    assert str(err.value) == ("<dict>: castle: a custom castle takes no 'reinforced_gate' "
                              "(give each element its 'reinforced')")
    tower = {"id": "T", "kind": "tower", "parent": "W", "polygon": [[9, 9], [12, 9], [12, 13], [9, 13]]}
    with pytest.raises(ConfigError) as err:  # a parent would also exempt the tower from the overlap check
        load_scenario({**base, "castle": {**custom, "elements": [*custom["elements"], tower]}})
    assert str(err.value) == "<dict>: castle: tower 'T' takes no 'parent' (only a gate lies in a wall section)"
    with pytest.raises(ConfigError) as err:
        load_scenario({**base, "castle": {**custom, "elements": [{**custom["elements"][0], "reinforced": True},
                                                                 custom["elements"][1]]}})
    assert str(err.value) == ("<dict>: castle: wall 'W' cannot be 'reinforced' "
                              "(only a gate: SIEGE.EQUIP.REINFORCED_GATE)")
    off = {"layout": "custom", "elements": [{"id": "W", "kind": "wall", "polygon": [[70, 10], [80, 10], [80, 12], [70, 12]]}]}
    with pytest.raises(ConfigError, match="not wholly on the"):
        load_scenario({**base, "castle": off})


def test_units_on_elements_and_invariants():
    b = siege_battle()
    s1 = cs.element(b.state, "S1")
    assert [u.uid for u in cs.units_on(b.state, s1)] == [0]
    assert cs.element_under(b.state, b.unit(0)).id == "S1"
    assert cs.check_invariants(b.state) == []
    b.unit(0).files = 5  # two ranks on a wall
    assert cs.check_invariants(b.state) == ["unit 0 (Marcher Spearmen) is on wall S1 in 2 ranks"]
    b.unit(0).files = 10
    b.unit(1).x, b.unit(1).y = 26.5, 19.0  # the orcs pushed into the wall
    assert any("stands inside wall S1" in p for p in cs.check_invariants(b.state))


# ----------------------------------------------------------------------------- damage tables
@pytest.mark.parametrize(
    "value,row,bonus",
    [(2, "no_effect", 0), (12, "no_effect", 0), (13, "shakes", 1), (14, "shakes", 1), (15, "heavily_damaged", 1),
     (16, "heavily_damaged", 1), (17, "parapet_destroyed", 1), (18, "parapet_destroyed", 1), (19, "breach", 1),
     (20, "collapse", 0), (25, "collapse", 0)],
)
def test_wall_table_rows(value, row, bonus):
    assert dmg.wall_row(value) == (row, bonus)


@pytest.mark.parametrize(
    "value,row,bonus",
    [(12, "no_effect", 0), (13, "shakes", 1), (14, "shakes", 1), (15, "heavily_damaged", 1), (16, "heavily_damaged", 1),
     (17, "parapet_destroyed", 1), (18, "parapet_destroyed", 1), (19, "partial_destruction", 1), (20, "collapse", 0)],
)
def test_tower_table_rows(value, row, bonus):
    assert dmg.tower_row(value) == (row, bonus)


@pytest.mark.parametrize(
    "value,row,bonus",
    [(2, "no_effect", 0), (10, "no_effect", 0), (11, "crack", 1), (12, "crack", 1), (13, "buckled", 2),
     (14, "buckled", 2), (15, "smashed", 3), (16, "destroyed", 0), (19, "destroyed", 0)],
)
def test_gate_table_rows(value, row, bonus):
    assert dmg.gate_row(value) == (row, bonus)


def test_citadel_uses_tower_table():
    c = cs.CastleElement("C", "citadel", [(0, 0), (6, 0), (6, 6), (0, 6)])
    assert dmg.row_for(c, 19) == ("partial_destruction", 1)


def test_cumulative_bonus_three_cannon_shots_worked_example():
    """siege.md §2.5 example 1: 3 + 10 = 13 shakes (+1); 3 + 10 + 1 = 14 shakes (+2); 6 + 10 + 2 = 18 parapet (+3)."""
    b = siege_battle()
    s1, s3 = cs.element(b.state, "S1"), cs.element(b.state, "S3")
    # cannon: artillery die face 1 (2, no misfire), D6 wounds 3
    feed(b, [1, 3, 1, 3, 1, 6, 4] + [4] * 4 + [1] * 4)
    assert dmg.cannon_hit(b, s1) == "shakes" and s1.damage_bonus == 1
    assert dmg.cannon_hit(b, s1) == "shakes" and s1.damage_bonus == 2
    assert s3.damage_bonus == 0
    assert dmg.cannon_hit(b, s1) == "parapet_destroyed"
    assert s1.damage_bonus == 3 and s1.parapet_destroyed and s1.cover() == 0
    hits = [e for e in rules(b, "SIEGE.DMG.WALL") if e.get("row") == "parapet_destroyed" and "hits" in e]
    assert [(e["unit"], e["hits"], e["strength"]) for e in hits] == [(0, 4, 4)]
    # 4 S4 hits on T3: 3+ to wound, faces 4 4 4 4; armour 5+ worsened to 6+: faces 1 1 1 1 fail
    assert b.unit(0).models == 6
    values = [e["value"] for e in rules(b, "SIEGE.DMG.VALUE")]
    assert values == [13, 14, 18]


def test_repeated_parapet_result_only_adds_the_bonus():
    b = siege_battle()
    s1 = cs.element(b.state, "S1")
    s1.damage_bonus = 1
    feed(b, [6] + [1] * 6)  # 6 S4 hits, none wounds
    assert dmg.damage_element(b, s1, 16) == "parapet_destroyed"  # 16 + 1 = 17
    models = b.unit(0).models
    assert dmg.damage_element(b, s1, 16) == "parapet_destroyed"  # 16 + 2 = 18: no second D6 S4 hits
    assert b.unit(0).models == models and s1.damage_bonus == 3
    assert len([e for e in rules(b, "SIEGE.DMG.WALL") if "hits" in e and "kind" not in e]) == 1


def test_wall_heavily_damaged_stops_shooting_on_4_plus():
    b = siege_battle(blue=[placement("marcher_spearmen", 26.5, 17, 90, models=10, files=10),
                           placement("marcher_crossbowmen", 36, 10, 90, models=10, files=10)])
    s1 = cs.element(b.state, "S1")
    feed(b, [4])
    assert dmg.damage_element(b, s1, 15) == "heavily_damaged"
    assert s1.no_shoot == [0] and s1.damage_bonus == 1
    feed(b, [3])
    assert dmg.damage_element(b, s1, 15) == "heavily_damaged"  # 16: repeats, bonus stacks
    assert s1.no_shoot == [0] and s1.damage_bonus == 2


def test_breach_first_time_then_only_bonus():
    b = siege_battle()
    s1 = cs.element(b.state, "S1")
    assert dmg.damage_element(b, s1, 19) == "breach" and s1.breached and s1.damage_bonus == 1
    assert dmg.damage_element(b, s1, 18) == "breach" and s1.damage_bonus == 2
    assert s1.results == ["breach", "breach"]


def test_wall_collapse_hits_models_on_and_near():
    """20+: one S5 hit per model on the wall, one S3 hit per model within 4"; the ruins are rubble."""
    blue = [placement("marcher_spearmen", 26.5, 17, 90, models=10, files=10)]
    red = [placement("orc_warriors", 26.5, 20.5, 270, models=10, files=10)]  # 2" from the outer face
    b = siege_battle(blue=blue, red=red)
    s1 = cs.element(b.state, "S1")
    # spearmen (T3, light armour + shield 5+; S5 -> no save): 10 to-wound dice at 2+: 6 wound
    # orcs (T4, light + shield 5+; S3 -> 5+): 10 to-wound at 5+: 3 wound; 3 saves: 5, 1, 1 -> 2 casualties
    feed(b, [2, 2, 2, 2, 2, 2, 1, 1, 1, 1] + [5, 5, 5, 1, 1, 1, 1, 1, 1, 1] + [5, 1, 1])
    assert dmg.damage_element(b, s1, 20) == "collapse"
    assert s1.collapsed and not s1.standing and s1.cover() == -2
    assert (b.unit(0).models, b.unit(1).models) == (4, 8)
    assert b.state.terrain[-1].kind == "rubble" and b.state.terrain[-1].name == "ruins of S1"
    assert dmg.damage_element(b, s1, 25) == "no_effect"  # gone


def test_collapse_of_gate_section_destroys_the_gate():
    b = siege_battle()
    s2 = cs.element(b.state, "S2")
    dmg.damage_element(b, s2, 22)
    assert cs.element(b.state, "G").gate == "destroyed"


def test_tower_rows_parapet_partial_and_collapse():
    blue = [placement("marcher_spearmen", 20, 16, 90, models=10, files=5)]  # on top of T1
    b = siege_battle(blue=blue)
    t1 = cs.element(b.state, "T1")
    assert [u.uid for u in cs.units_on(b.state, t1)] == [0]
    # 19: each model tests I (3): faces 4, 5, 6 fail; 3 S5 hits on T3 wound on 2+, no armour save left
    feed(b, [1, 2, 3, 4, 5, 6, 1, 1, 1, 1] + [6, 6, 6])
    assert dmg.damage_element(b, t1, 19) == "partial_destruction" and t1.partially_destroyed
    assert b.unit(0).models == 7 and t1.damage_bonus == 1
    # 20+: D6 = 2 -> partial again (I tests all pass) + bonus +1, the tower stands
    feed(b, [2] + [1] * 7)
    assert dmg.damage_element(b, t1, 19) == "collapse" and not t1.collapsed and t1.damage_bonus == 2
    # 20+: D6 = 6 (A-4: as 4-5) -> destroyed: one S5 hit per model in it
    feed(b, [6] + [6] * 7)
    assert dmg.damage_element(b, t1, 18) == "collapse" and t1.collapsed
    assert not b.unit(0).alive


def test_tower_parapet_hits_units_on_top():
    b = siege_battle(blue=[placement("marcher_spearmen", 20, 16, 90, models=10, files=5)])
    t1 = cs.element(b.state, "T1")
    feed(b, [2, 6, 6, 1, 1])  # 2 hits, both wound (S4 v T3 on 3+), saves 1, 1 fail
    assert dmg.damage_element(b, t1, 17) == "parapet_destroyed"
    assert b.unit(0).models == 8 and t1.parapet_destroyed


def test_gate_table_and_reinforced_gate_worked_example():
    """siege.md §2.5 example 2: reinforced gate, base 14: 13 buckled (+2); 14 + 2 − 1 = 15 smashed (+5); 12 + 5 − 1 = 16."""
    b = siege_battle(reinforced_gate=True)
    g = cs.element(b.state, "G")
    assert g.reinforced
    assert dmg.damage_element(b, g, 14) == "buckled" and g.damage_bonus == 2
    assert dmg.damage_element(b, g, 14) == "smashed" and g.damage_bonus == 5 and g.gate == "smashed"
    assert dmg.damage_element(b, g, 12) == "destroyed" and g.gate == "destroyed"
    assert [e["value"] for e in rules(b, "SIEGE.DMG.VALUE")] == [13, 15, 16]


def test_reinforced_gate_needs_17_to_destroy():
    b = siege_battle(reinforced_gate=True)
    g = cs.element(b.state, "G")
    assert dmg.damage_element(b, g, 16) == "smashed"  # 16 − 1 = 15
    b2 = siege_battle()
    assert dmg.damage_element(b2, cs.element(b2.state, "G"), 16) == "destroyed"
    b3 = siege_battle(reinforced_gate=True)
    assert dmg.damage_element(b3, cs.element(b3.state, "G"), 17) == "destroyed"


def test_gate_crack_and_smashed_bonus_is_plus_three():
    b = siege_battle()
    g = cs.element(b.state, "G")
    assert dmg.damage_element(b, g, 11) == "crack" and g.damage_bonus == 1
    assert dmg.damage_element(b, g, 14) == "smashed" and g.damage_bonus == 4  # 14 + 1 = 15: +3 more
    assert dmg.damage_element(b, g, 10) == "buckled"  # 10 + 4 = 14
    assert g.results == ["crack", "smashed", "buckled"] and g.damage_bonus == 6 and g.gate == "smashed"


def test_cannon_misfire_and_double_charge():
    b = siege_battle()
    s1 = cs.element(b.state, "S1")
    feed(b, [6])
    assert dmg.cannon_hit(b, s1) == "misfire" and s1.damage_bonus == 0
    feed(b, [2, 6])  # double charge: second die misfires
    assert dmg.cannon_hit(b, s1, double_charge=True) == "misfire"
    feed(b, [2, 3, 2])  # 2 + 10 + 1 = 13
    assert dmg.cannon_hit(b, s1, double_charge=True) == "shakes"
    assert rules(b, "SIEGE.DMG.VALUE")[-1]["value"] == 13


def test_mortar_is_no_cannon():
    b = siege_battle()
    with pytest.raises(ValueError):
        dmg.cannon_hit(b, cs.element(b.state, "S1"), machine="stone_thrower")


def test_stone_thrower_hole_on_and_off():
    b = siege_battle()
    s3 = cs.element(b.state, "S3")
    feed(b, [4])  # hole on: automatic, D6 4 + 9 = 13
    assert dmg.stone_thrower_hit(b, s3, True) == "shakes"
    feed(b, [3])  # hole off: 3 fails the 4+
    assert dmg.stone_thrower_hit(b, s3, False) == "missed" and s3.damage_bonus == 1
    feed(b, [4, 5])  # 4+ lands; 5 + 9 + 1 = 15
    assert dmg.stone_thrower_hit(b, s3, False) == "heavily_damaged"


def test_gate_shots_only_flat_trajectory_may_hit_the_gate():
    b = siege_battle()
    g = cs.element(b.state, "G")
    feed(b, [5, 1, 2])  # D6 5: the gate; cannon: artillery ok, 2 + 10 = 12 -> crack
    assert dmg.gate_shot(b, g, "great_cannon")[0].id == "G" and g.damage_bonus == 1
    feed(b, [4, 1, 2])  # D6 4: the section S2
    el, row = dmg.gate_shot(b, g, "great_cannon")
    assert el.id == "S2" and row == "no_effect"
    feed(b, [6, 6])  # a stone thrower always hits the section: 6 + 9 = 15
    el, row = dmg.gate_shot(b, g, "stone_thrower")
    assert (el.id, row) == ("S2", "heavily_damaged")


def test_ram_and_melee_blows():
    b = siege_battle()
    g = cs.element(b.state, "G")
    feed(b, [6])  # 7 + 6 = 13: buckled
    assert dmg.ram_blow(b, g, unit=1) == "buckled"
    orcs = b.unit(1)  # S3 hand weapon: 3 + 1 = 4 per blow; 4 + 2 = 6: nothing
    assert dmg.melee_base(orcs) == 4
    assert dmg.melee_blows(b, orcs, g, 3) == ["no_effect"] * 3
    orcs.troop_type = "chariot"
    with pytest.raises(ValueError):
        dmg.melee_blows(b, orcs, g, 1)
    assert not dmg.spell_may_target(g) and dmg.spell_may_target(None)


# ----------------------------------------------------------------------------- equipment
from battleline.env.rules.siege import equipment as eq  # noqa: E402


def test_equipment_costs_from_configuration():
    assert eq.cost("reinforced_gate", 1, 0) == 20
    assert eq.cost("oil", 1, 20) == 25 and eq.cost("metal", 1, 20) == 30
    assert eq.cost("stones", 1, 20) == 20 and eq.cost("logs", 1, 20) == 40
    assert eq.cost("ladders", 3, 20) == 30 and eq.cost("hooks", 1, 15) == 15
    assert eq.cost("siege_tower", 1, 20) == 75 and eq.cost("ram", 1, 10) == 25 and eq.cost("protected_ram", 1, 10) == 40
    assert eq.points({"ladders": 2, "hooks": 1}, 10) == 30


def test_equipment_limits_per_unit():
    ok = eq.check_unit("u", {"ladders": 4, "siege_tower": 1, "ram": 1}, 20, "infantry", "orcs")
    assert ok == []
    assert eq.check_unit("u", {"ladders": 5}, 20, "infantry", "orcs") == ["u.equipment.ladders: at most 1 per 5 models (20 models)"]
    assert eq.check_unit("u", {"ram": 1, "protected_ram": 1}, 20, "infantry", "orcs") == [
        "u.equipment: a unit may not take both ram types"]
    assert eq.check_unit("u", {"siege_tower": 2}, 20, "infantry", "orcs") == ["u.equipment.siege_tower: at most 1 per unit"]
    assert eq.check_unit("u", {"siege_tower": 1}, 8, "infantry", "orcs") == [
        "u.equipment.siege_tower: needs a unit of at least 10 models"]
    assert eq.check_unit("u", {"ram": 1}, 5, "infantry", "orcs") == ["u.equipment.ram: needs a unit of at least 6 models"]
    assert eq.check_unit("u", {"oil": 1}, 5, "cavalry", "men") == ["u.equipment.oil: infantry only, not cavalry"]
    assert eq.check_unit("u", {"metal": 1}, 10, "infantry", "men") == ["u.equipment.metal: only for dwarfs, chaos_dwarfs"]
    assert eq.check_unit("u", {"oil": 1, "metal": 1}, 10, "infantry", "dwarfs") == [
        "u.equipment: at most 1 cauldron per infantry unit"]
    assert eq.check_unit("u", {"stones": 2}, 10, "infantry", "men")[0].startswith("u.equipment.stones: 2 is not a valid")
    assert eq.check_unit("u", {"catapult": 1}, 10, "infantry", "men") == ["u.equipment.catapult: unknown siege equipment 'catapult'"]


def test_castle_on_impassable_terrain_is_refused():
    """A tower standing in a lake was accepted when no unit stood there."""
    base = siege_scenario([placement("marcher_spearmen", 26.5, 17, 90, models=10, files=10)],
                          [placement("orc_warriors", 36, 40, 270)])
    lake = {"kind": "lake", "polygon": [[50, 10], [56, 10], [56, 20], [50, 20]]}
    with pytest.raises(ConfigError) as err:
        load_scenario({**base, "terrain": [lake]})
    assert str(err.value) == "<dict>: castle: tower 'T2' overlaps impassable lake (terrain[0])"
    assert load_scenario({**base, "terrain": [{**lake, "kind": "hill"}]}).terrain[0].kind == "hill"


def test_placed_cauldrons_are_limited_per_castle_too():
    """SIEGE.EQUIP.OIL: the 3-cauldron limit held for army lists only; placements could crew any number."""
    blue = [placement("marcher_spearmen", 26.5 + 9.5 * i, 17.606, 90, models=10, files=10) for i in range(3)]
    blue.append(placement("marcher_halberdiers", 36, 8, 90, models=10, files=5))
    for p in blue:
        p["equipment"] = {"oil": 1}
    with pytest.raises(ConfigError) as err:
        load_scenario(siege_scenario(blue, [placement("orc_warriors", 36, 40, 270)]))
    assert str(err.value) == "<dict>: blue.placements: 4 cauldrons; at most 3 per castle (SIEGE.EQUIP.OIL)"


def test_army_validator_knows_siege_limits_and_points():
    from battleline.env.rules.army import army_points, validate_army
    from battleline.env.rules.config import ArmyListConfig, load_faction

    men = load_faction("men")
    units = [{"unit": "lord_marshal", "models": 1, "general": True}] + [
        {"unit": "marcher_spearmen", "models": 10, "equipment": {"oil": 1}} for _ in range(4)]
    army = ArmyListConfig.model_validate({"id": "a", "name": "a", "faction": "men", "points_limit": 5000, "units": units,
                                          "castle_equipment": {"reinforced_gate": 1}})
    assert validate_army(army, men) == ["units: 4 cauldrons; at most 3 per castle (SIEGE.EQUIP.OIL)"]
    plain = ArmyListConfig.model_validate({**army.model_dump(), "castle_equipment": {},
                                           "units": [{**u, "equipment": {}} for u in army.model_dump()["units"]]})
    assert army_points(army, men) == army_points(plain, men) + 4 * 25 + 20


def test_scenario_equipment_side_and_module():
    blue = [placement("marcher_spearmen", 26.5, 17, 90, models=10, files=10, equipment={"ladders": 1})]
    red = [placement("orc_warriors", 36, 40, 270, equipment={"ladders": 2})]
    with pytest.raises(ConfigError, match="'ladders' is attacker equipment, and this side is the defender"):
        load_scenario(siege_scenario(blue, red))
    blue[0]["equipment"] = {"stones": 1}
    b = Battle.from_scenario(siege_scenario(blue, red), seed=0)
    assert eq.carried(b.unit(0)) == {"stones": 1} and eq.has_climbing_gear(b.unit(1))
    plain = siege_scenario(blue, red)
    plain.pop("castle")
    plain["modules"] = []
    with pytest.raises(ConfigError, match="needs the siege module"):
        load_scenario(plain)


# ----------------------------------------------------------------------------- assault
from battleline.env.rules.siege import assault as asl  # noqa: E402


def _assault_battle(red_equipment: dict, blue_equipment: dict | None = None, red_models: int = 10, dice=None) -> Battle:
    """Spearmen (10, one rank) on S1; orcs (10 in one rank of 10) flush against S1's outer face (y = 18)."""
    blue = [placement("marcher_spearmen", 26.5, 17, 90, models=10, files=10, equipment=blue_equipment or {})]
    red = [placement("orc_warriors", 26.5, 18 + BASE / 2, 270, models=red_models, files=10, equipment=red_equipment)]
    return siege_battle(blue=blue, red=red, dice=dice)


def test_assault_modes_climbers_and_charge_targets():
    b = _assault_battle({"ladders": 2})
    orcs, s1 = b.unit(1), cs.element(b.state, "S1")
    assert asl.assault_mode(orcs) == "ladders" and asl.climbers(orcs, 10) == 2 and asl.climbers(orcs, 1) == 1
    assert asl.can_charge(b, orcs, s1)
    assert not asl.can_charge(b, orcs, cs.element(b.state, "S3"))  # no defenders on it
    assert not asl.can_charge(b, orcs, cs.element(b.state, "T1"))  # empty, and ladders do not reach towers
    orcs.marks["siege"] = {"hooks": 1}
    assert asl.assault_mode(orcs) == "hooks" and asl.climbers(orcs, 7) == 7
    orcs.marks["siege"] = {"siege_tower": 1}
    assert asl.climbers(orcs, 10) == 2
    orcs.marks["siege"] = {}
    assert asl.assault_mode(orcs) is None and asl.climbers(orcs, 10) == 0


@pytest.mark.parametrize(("climbers", "climber_mm", "defender_mm", "defenders", "touching"), [
    (1, 20, 20, 10, 3),  # the defender opposite and its two neighbours at the corners (CORE.GEO.CONTACT)
    (2, 20, 20, 10, 4),
    (3, 20, 20, 10, 5),
    (1, 20, 20, 2, 2),  # never more than the rank on the wall
    (1, 40, 20, 10, 4),  # a 40 mm climber spans two 20 mm defenders, plus one at each corner
    (1, 25, 20, 10, 3),  # 25 mm: two along its front (the second partly), one at a corner
    (1, 20, 40, 10, 2),  # 20 mm against 40 mm: the one opposite and one at a corner
    (0, 20, 20, 10, 0),  # no climber, no fight
])
def test_defenders_touching_the_climbers(climbers, climber_mm, defender_mm, defenders, touching):
    """SIEGE.ASSAULT.CLIMB, CORE.GEO.CONTACT: climbers side by side in the attacker lane, the first one's edge on
    a defender's file edge; the defenders whose bases touch them, corner to corner included, fight."""
    assert asl.defenders_touching(climbers, climber_mm / 25.4, defender_mm / 25.4, defenders) == touching


def test_hook_climbers_fight_the_defenders_they_touch():
    """SIEGE.ASSAULT.CLIMB, SIEGE.EQUIP.HOOKS: every hook-armed model in contact climbs (5 of the orcs' front), and
    the 7 spearmen touching those 5 (20 mm bases, corners included) fight; with 2 ladders 2 climb and 4 fight.
    Either way round of the engagement gives the same counts."""
    from battleline.env.rules.siege import play

    b = _assault_battle({"hooks": 1})
    spears, orcs = b.unit(0), b.unit(1)
    assert play.fighters(b, orcs, spears, 5, 5) == (5, 7) and play.fighters(b, spears, orcs, 5, 5) == (7, 5)
    ev = rules(b, "SIEGE.ASSAULT.CLIMB")[0]
    assert (ev["element"], ev["unit"], ev["target"], ev["mode"], ev["ladders"], ev["climbers"], ev["defenders"]) == (
        "S1", 1, 0, "hooks", 0, 5, 7)
    orcs.marks["siege"] = {"ladders": 2}
    assert play.fighters(b, orcs, spears, 5, 5) == (2, 4)
    assert (rules(b, "SIEGE.ASSAULT.CLIMB")[-1]["ladders"], rules(b, "SIEGE.ASSAULT.CLIMB")[-1]["climbers"]) == (2, 2)


def test_defender_bonus_to_hit_and_strike_first():
    b = _assault_battle({"ladders": 2})
    s1 = cs.element(b.state, "S1")
    assert asl.climber_to_hit("ladders", s1, 4, 3) == 6 and asl.defenders_strike_first("ladders", s1)
    assert asl.climber_to_hit("hooks", s1, 3, 3) == 6
    assert asl.climber_to_hit("siege_tower", s1, 4, 3) == 3 and not asl.defenders_strike_first("siege_tower", s1)
    assert asl.wall_result_parts({"wounds": 2, "ranks": 3, "outnumber": 1, "standard": 1}) == {"wounds": 2, "standard": 1}
    asl.attackers_win_round(b, s1, b.unit(1))  # SIEGE.CAPTURE.PARAPET: defenders lose both bonuses
    assert s1.parapet_taken and asl.climber_to_hit("ladders", s1, 4, 3) == 3
    assert not asl.defenders_strike_first("ladders", s1)
    assert s1.controller == 0  # defenders still on it
    b.unit(0).models = 0
    b.unit(0).removed = True
    asl.attackers_win_round(b, s1, b.unit(1))
    assert s1.controller == 1


def test_boiling_oil_hits_without_armour_and_cauldron_timing():
    b = _assault_battle({"ladders": 2}, {"oil": 1})
    s1, spear, orcs = cs.element(b.state, "S1"), b.unit(0), b.unit(1)
    centre = asl.template_centre(s1, 4.5)
    assert centre == pytest.approx((26.5, 19.5))  # 1.5" out from the outer face, 4.5" along it
    assert asl.models_under(orcs, centre) == 4  # a 3" circle over 0.79" bases in one rank
    # 4 S5 hits on T4: 3+ to wound -> faces 3,3,3,2: 3 wounds, no armour save
    feed(b, [3, 3, 3, 2])
    assert asl.pour(b, spear, s1, orcs) == 3 and orcs.models == 7
    c = s1.cauldrons[0]
    assert c["last_used"] == b.state.turn
    assert not asl.cauldron_ready(c, b.state.turn + 1) and asl.cauldron_ready(c, b.state.turn + 2)
    c["moved"] = b.state.turn + 2
    assert not asl.cauldron_ready(c, b.state.turn + 2)


def test_protected_ram_ward_against_oil_and_siege_tower_immunity():
    b = _assault_battle({"protected_ram": 1}, {"oil": 1})
    s1, spear, orcs = cs.element(b.state, "S1"), b.unit(0), b.unit(1)
    feed(b, [6, 6, 6, 6] + [4, 3, 5, 1])  # 4 wounds; ward 4+: 4 and 5 save
    assert asl.pour(b, spear, s1, orcs, models=4) == 2 and orcs.models == 8
    orcs.marks["siege"] = {"siege_tower": 1}
    with pytest.raises(ValueError):
        asl.pour(b, spear, s1, orcs, models=4)


def test_molten_metal_is_s6():
    b = _assault_battle({"ladders": 2})
    spear = b.unit(0)
    spear.marks["siege"] = {"metal": 1}
    feed(b, [2, 2, 2])  # S6 v T4 wounds on 2+
    assert asl.pour(b, spear, cs.element(b.state, "S1"), b.unit(1), models=3) == 3
    assert rules(b, "SIEGE.EQUIP.METAL")[0]["strength"] == 6


def test_stones_base_bs_and_logs():
    b = _assault_battle({"ladders": 2}, {"stones": 1})
    spear, orcs = b.unit(0), b.unit(1)
    # 10 throwers at BS3: 4+ to hit; faces 4x4 hit; S4 v T4 4+: 4,4,1,1 -> 2 wounds; armour 5+ -> 6+: 1, 6 -> 1 unsaved
    feed(b, [4, 4, 4, 4, 1, 1, 1, 1, 1, 1] + [4, 4, 1, 1] + [1, 6])
    assert asl.throw_stones(b, spear, orcs) == 1 and orcs.models == 9
    assert rules(b, "SIEGE.EQUIP.STONES")[0]["needed"] == 4
    spear.marks["siege"] = {"logs": 1}
    # 5 logs; faces 6,1,1,1,1: 1 hit; wounds 5; save 1 fails; D3: face 5 -> 3 wounds (capped at W 1)
    feed(b, [6, 1, 1, 1, 1, 5, 1, 5])
    assert asl.throw_stones(b, spear, orcs) == 1
    orcs.marks["siege"] = {"siege_tower": 1}
    with pytest.raises(ValueError):
        asl.throw_stones(b, spear, orcs)


def test_at_a_siege_tower_bridge_onto_a_castle_tower_two_models_a_side_fight():
    """SIEGE.CC.RESULT, SIEGE.EQUIP.SIEGE_TOWER: spearmen on T1 (x 18–22, y 14–18) against orcs pushing a siege tower
    against its outer face: of 10 and 5 models in contact, 2 a side fight; without the siege tower the normal count
    stands (no climbing gear, no bridge)."""
    from battleline.env.rules.siege import play

    blue = [placement("marcher_spearmen", 20, 18 - BASE, 90, models=10, files=5)]
    red = [placement("orc_warriors", 20, 18 + BASE, 270, models=10, files=5, equipment={"siege_tower": 1})]
    b = siege_battle(blue=blue, red=red)
    spears, orcs = b.unit(0), b.unit(1)
    assert cs.element_under(b.state, spears).id == "T1" and cs.element_under(b.state, orcs) is None
    assert play.bridge_at_tower(b.state, orcs, spears).id == "T1"
    assert play.fighters(b, orcs, spears, 5, 10) == (2, 2) and play.fighters(b, spears, orcs, 10, 5) == (2, 2)
    ev = rules(b, "SIEGE.CC.RESULT")[-1]
    assert (ev["element"], ev["at"], ev["unit"], ev["target"], ev["models"], ev["fighters"]) == (
        "T1", "bridge", 0, 1, [10, 5], [2, 2])
    orcs.marks["siege"] = {}
    assert play.bridge_at_tower(b.state, orcs, spears) is None and play.fighters(b, orcs, spears, 5, 5) == (5, 5)


def test_siege_points_are_logged_per_side_with_the_attackers_ratio():
    """SIEGE.SCEN.POINTS (DEFAULT ratio 1.5): the shipped siege, points_limit 1,500: blue defends with 1,500, red
    may storm with 2,250; a scenario's ``attacker_points_ratio`` changes the attacker's and only his."""
    b = Battle.from_scenario("siege", seed=0)
    got = [(e["side"], e["attacker"], e["points_limit"], e["ratio"]) for e in rules(b, "SIEGE.SCEN.POINTS")]
    assert got == [(0, False, 1500, 1.5), (1, True, 2250, 1.5)]
    armies = {e["side"]: e["points"] for e in rules(b, "CORE.SETUP.ARMIES")}
    assert [e["points"] for e in rules(b, "SIEGE.SCEN.POINTS")] == [armies[0], armies[1]]
    red = siege_battle(defender="red", red=[placement("orc_warriors", 36, 40, 270)])
    assert [(e["side"], e["attacker"], e["points_limit"]) for e in rules(red, "SIEGE.SCEN.POINTS")] == [
        (0, True, 3000), (1, False, 2000)]
    field = Battle.from_scenario("pitched_battle", seed=0)
    assert rules(field, "SIEGE.SCEN.POINTS") == []
