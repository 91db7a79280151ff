"""The T9A module framework: scenario validation (CFG.MODE, CFG.MODULES, CFG.EXCLUSIVE), the
attribute grammar (T9A.AA.CONDITIONS, T9A.PP.AGAINST) and Sizes (T9A.SIZE)."""

from __future__ import annotations

import pytest

from battleline.env.rules.battle import Battle
from battleline.env.rules.config import ConfigError, load_scenario, module_errors
from battleline.env.rules.t9a import T9A_MODULES, on
from battleline.env.rules.t9a.conditions import Attribute, ConditionError, applies, parse, size


def test_cfg_modules_every_t9a_module_is_accepted_alone_and_together() -> None:
    """CFG.MODULES: core takes siege and the five T9A modules, any subset."""
    for m in T9A_MODULES:
        assert module_errors([m]) == []
        assert module_errors(["siege", m]) == []
    assert module_errors(list(T9A_MODULES)) == []


def test_cfg_exclusive_a_skirmish_module_beside_a_t9a_module_names_both() -> None:
    """CFG.EXCLUSIVE: no CORE or T9A module is valid beside a skirmish one; the error names both."""
    errors = module_errors(["t9a.protections", "skirmish.house.terror"])
    assert len(errors) == 1
    assert "'t9a.protections'" in errors[0] and "'skirmish.house.terror'" in errors[0]
    assert "CFG.EXCLUSIVE" in errors[0]


def test_cfg_mode_only_core_runs_and_core_modules_need_core_mode() -> None:
    """CFG.MODE: one mode per game; a T9A module in skirmish mode is a CFG.EXCLUSIVE error."""
    assert module_errors([], "core") == []
    assert "not available" in module_errors([], "skirmish")[0]
    assert "unknown mode 'chess'" in module_errors([], "chess")[0]
    assert "'t9a.equipment' is a core module, not valid in activation mode" in module_errors(
        ["t9a.equipment"], "activation")[0]


def test_scenario_with_impossible_modules_is_one_line_naming_file_and_modules(tmp_path) -> None:
    """A scenario file naming a skirmish and a T9A module fails with one line: the file and both modules."""
    text = (load_scenario("pitched_battle").model_dump_json())
    import json

    data = json.loads(text)
    data["modules"] = ["t9a.artillery", "skirmish.house.look_out"]
    import yaml

    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_scenario(path)
    msg = str(err.value)
    assert "\n" not in msg and "bad.yaml" in msg and "t9a.artillery" in msg and "skirmish.house.look_out" in msg


def test_battle_records_its_modules_and_the_units_t9a_kit() -> None:
    """The state carries the modules (env.rules.t9a.on) and each unit's armour for T9A.ARMOUR.VALUE."""
    b = Battle.from_scenario("pitched_battle_t9a", seed=0)
    assert on(b.state, "t9a.equipment") and b.state.modules == list(T9A_MODULES)
    assert all(u.t9a["armour"] in ("none", "light", "heavy", "plate") for u in b.state.units)
    core = Battle.from_scenario("pitched_battle", seed=0)
    assert core.state.modules == [] and all(u.t9a == {} for u in core.state.units)
    d = core.state.to_dict()
    assert "modules" not in d and all("t9a" not in u for u in d["units"])
    with pytest.raises(KeyError):
        on(b.state, "t9a.protection")


def test_aa_conditions_grammar_commas_or_spaces_and() -> None:
    """T9A.AA.CONDITIONS: 'Multiple Wounds (2 against Large Beasts, Gigantic models)' — commas OR, spaces AND."""
    a = parse("multiple_wounds (2 against large monster, gigantic)")
    assert a == Attribute("multiple_wounds", "2", (("large", "monster"), ("gigantic",)))
    assert a.value == 2
    assert parse("aegis (4+, against flaming)") == Attribute("aegis", "4+", (("flaming",),))
    assert parse("divine") == Attribute("divine")
    assert parse("multiple_wounds (d3)").value is None
    for bad in ("aegis (4+ against)", "multiple_wounds (2 against dragons)", "Aegis(4)", "x (1 against large,, orcs)"):
        with pytest.raises(ConditionError):
            parse(bad)


def test_aa_conditions_every_model_in_the_pool_must_qualify() -> None:
    """T9A.AA.CONDITIONS (AA-8): the attribute applies only if every unit of the wound pool qualifies."""
    b = Battle.from_scenario("pitched_battle_t9a", seed=0)
    units = b.state.units
    infantry = next(u for u in units if u.troop_type == "infantry")
    cavalry = next(u for u in units if u.troop_type == "cavalry")
    a = parse("multiple_wounds (2 against standard infantry, cavalry)")
    assert applies(a, [infantry]) and applies(a, [cavalry]) and applies(a, [infantry, cavalry])
    b2 = parse("multiple_wounds (2 against standard infantry)")
    assert applies(b2, [infantry]) and not applies(b2, [infantry, cavalry]) and not applies(b2, [])
    army = parse(f"multiple_wounds (2 against {infantry.faction})")
    assert applies(army, [infantry])
    other = next(u for u in units if u.faction != infantry.faction)
    assert not applies(army, [other])
    assert applies(parse("aegis (4+, against flaming)"), [other], attack=frozenset({"flaming"}))
    assert not applies(parse("aegis (4+, against flaming)"), [other])


def test_t9a_size_by_troop_type_and_large_target() -> None:
    """T9A.SIZE: infantry, cavalry and war machines Standard; monstrous infantry, chariots and monsters
    that are not Large Targets Large; Large Targets Gigantic; a ``t9a.size`` overrides."""
    b = Battle.from_scenario("pitched_battle_t9a", seed=0)
    u = b.state.units[0]
    cases = [("infantry", [], "standard"), ("cavalry", [], "standard"), ("war_machine", [], "standard"),
             ("monstrous_infantry", [], "large"), ("chariot", [], "large"),
             ("monster", [], "large"), ("monster", ["large_target"], "gigantic")]
    for troop, rules, want in cases:
        u.troop_type, u.special_rules = troop, rules
        assert size(u) == want, (troop, rules)
    u.t9a = {**u.t9a, "size": "gigantic"}
    u.troop_type, u.special_rules = "infantry", []
    assert size(u) == "gigantic"


def test_aa_area_attack_hits_min_x_files_times_min_x_ranks() -> None:
    """T9A.AA.AREA_ATTACK: min(X, files) × min(X, ranks)."""
    from battleline.env.rules.t9a.attributes import area_attack_hits

    assert area_attack_hits(3, 5, 2) == 6
    assert area_attack_hits(3, 10, 4) == 9
    assert area_attack_hits(2, 1, 1) == 1
    assert area_attack_hits(0, 5, 5) == 0


def test_aa_multiple_wounds_excess_is_lost_per_model() -> None:
    """T9A.AA.MULTIPLE_WOUNDS: each unsaved wound becomes X wounds, the excess over the model's Wounds lost."""
    from battleline.env.rules.t9a.attributes import multiple_wounds
    from tests.setups import battle, placement

    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 30, 270)], dice=[6, 3],
               modules=["t9a.attributes"])
    # D3 rolls: a 6 gives 3, a 3 gives 2. Models of W 3, the first with 2 left: 3 → 2 dealt (1 lost), then 2 on a fresh model.
    assert multiple_wounds(b, "d3", 2, wounds_per_model=3, wounds_left=2, unit=0) == 4
    assert b.events[-1]["rule"] == "T9A.AA.MULTIPLE_WOUNDS" and b.events[-1]["rolled"] == [3, 2]
    # Fixed X = 2 on W 1 models: each wound kills one model, the second wound of each is lost.
    assert multiple_wounds(b, "2", 3, wounds_per_model=1, wounds_left=1, unit=0) == 3
