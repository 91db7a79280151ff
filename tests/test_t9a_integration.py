"""The T9A variant around its modules: the configuration events at a battle's start (CFG.MODE, CFG.MODULES,
CFG.EXCLUSIVE), `battleline coverage --module t9a`, the shipped armies' t9a kit and the environments on
pitched_battle_t9a."""

from __future__ import annotations

from collections import Counter

import pytest

from battleline.env.rules.battle import Battle
from battleline.env.rules.config import load_scenario
from battleline.env.rules.ruleset import core_rule_ids, rule_ids
from battleline.env.rules.t9a import T9A_MODULES
from battleline.env.rules.t9a.start import REPLACES
from battleline.training import coverage as cov
from tests.setups import battle, placement, rules


def _small(modules: list[str]) -> Battle:
    return battle([placement("marcher_spearmen", 24, 10, 90)], [placement("orc_warriors", 24, 30, 270)],
                  modules=modules)


def test_cfg_mode_modules_exclusive_logged_at_the_start_of_a_t9a_battle() -> None:
    """CFG.MODE, CFG.MODULES and CFG.EXCLUSIVE: a battle under T9A modules logs its mode, its modules in the
    scenario's order and the CORE rules they replace, once each, before the first turn."""
    b = _small(["t9a.protections", "t9a.characters"])
    assert [e["mode"] for e in rules(b, "CFG.MODE")] == ["core"]
    assert [(e["modules"], e["siege"], e["turn"]) for e in rules(b, "CFG.MODULES")] == [
        (["t9a.protections", "t9a.characters"], False, 1)]
    assert [e["replaced"] for e in rules(b, "CFG.EXCLUSIVE")] == [{
        "t9a.protections": ["CORE.SAVE.PIPELINE", "CORE.SAVE.WARD", "CORE.SR.FLAMMABLE", "CORE.SR.REGENERATION"],
        "t9a.characters": ["CORE.MOVE.LEAVE", "CORE.MOVE.MARCH_BLOCK"]}]
    only = _small(["t9a.attributes"])  # the attributes add to the core rules and replace none
    assert [e["replaced"] for e in rules(only, "CFG.EXCLUSIVE")] == [{}]


def test_cfg_events_absent_from_a_core_battle() -> None:
    """A core battle (no module) logs no CFG.* event, so its log is unchanged (benchmarks.golden)."""
    b = _small([])
    assert not [e for e in b.events if e["rule"].startswith("CFG.")]


def test_cfg_modules_names_the_siege_beside_t9a_artillery() -> None:
    """CFG.MODULES on a siege with t9a.artillery: the T9A modules, and siege true."""
    data = load_scenario("siege").model_dump(mode="json")
    data["modules"] = ["siege", "t9a.artillery"]
    b = Battle.from_scenario(data, seed=0)
    assert [(e["modules"], e["siege"]) for e in rules(b, "CFG.MODULES")] == [(["t9a.artillery"], True)]
    assert list(rules(b, "CFG.EXCLUSIVE")[0]["replaced"]) == ["t9a.artillery"]


def test_cfg_exclusive_replaced_rules_are_the_rulesets_arrows() -> None:
    """CFG.EXCLUSIVE: every replaced ID is a CORE rule; each core rule that a variant rule of RULESET.md §6.1
    replaces (its ⇒) is listed under that rule's module, and t9a.artillery replaces every CORE.WM firing, damage
    and misfire rule."""
    import re

    from battleline.env.rules.reference import ruleset_rules

    assert set(REPLACES) == set(T9A_MODULES)
    assert all(r in core_rule_ids() for ids in REPLACES.values() for r in ids)
    module_of = {"CHAR": "t9a.characters", "MARCH": "t9a.characters", "CC": "t9a.characters",
                 "PP": "t9a.protections", "SAVE": "t9a.protections", "ARMOUR": "t9a.equipment",
                 "WEAPON": "t9a.equipment", "MISSILE": "t9a.equipment"}
    arrows: dict[str, set[str]] = {}
    for rule in ruleset_rules().values():
        found = re.search(r"⇒ ((?:CORE\.[A-Z0-9_.]+(?:, )?)+)", rule.text)
        if rule.id.startswith("T9A.") and found and found.group(1).startswith("CORE."):
            ids = {i.rstrip(".") for i in found.group(1).split(", ")}
            arrows.setdefault(module_of[rule.id.split(".")[1]], set()).update(ids)
    assert arrows == {m: set(ids) for m, ids in REPLACES.items() if ids and m != "t9a.artillery"}
    wm = {r for r in core_rule_ids() if r.startswith("CORE.WM.")}
    kept = {"CORE.WM.ASSAULT_OUTCOME", "CORE.WM.ASSAULT_TEAM", "CORE.WM.FIRE_RULES", "CORE.WM.MOVE",
            "CORE.WM.PANIC", "CORE.WM.PROFILES", "CORE.WM.SHOT_AT", "CORE.WM.TESTS"}  # crew and movement
    assert set(REPLACES["t9a.artillery"]) == wm - kept


def test_coverage_module_t9a_reports_t9a_and_cfg_ids() -> None:
    """`battleline coverage --module t9a` rows: the 39 T9A.* and 5 CFG.* IDs of RULESET.md; core unchanged."""
    ids = cov.module_rule_ids("t9a")
    assert len(ids) == 44 and ids == sorted(r for r in rule_ids() if r.startswith(("T9A.", "CFG.")))
    assert cov.module_rule_ids("core") == core_rule_ids()
    fired, excused, missing = ids[0], ids[1], ids[-1]  # rows of IDs picked by place, not by name
    rows = cov.coverage(Counter({fired: 2}), {fired: ["t::a"]}, {excused: "why"}, "t9a")
    assert [r.rule for r in rows] == ids
    by = {r.rule: r for r in rows}
    assert by[fired].ok and by[excused].ok and not by[missing].ok
    with pytest.raises(cov.CoverageError, match=r"^unknown rule set 'siege' \(one of core, t9a\)$"):
        cov.module_rule_ids("siege")


def test_coverage_t9a_corpus_plays_the_variant_scenario_and_its_setups() -> None:
    """The t9a corpus: pitched_battle_t9a (random and scripted, army lists cycling) and every
    configs/scenarios/coverage_t9a/ set-up, each under T9A modules."""
    games = cov.corpus_games(1, "t9a")
    setups = cov.coverage_scenarios("t9a")
    assert setups and len(games) == 2 + 2 * cov.COVERAGE_SEEDS * len(setups)
    assert games[:2] == [("pitched_battle_t9a", "random", "random", None, None, 0),
                         ("pitched_battle_t9a", "line_advance", "pincers", *cov.corpus_games(1)[1][3:5], 0)]
    for name in setups:
        cfg = load_scenario(cov.scenario_source(name, "t9a"))
        assert any(m.startswith("t9a.") for m in cfg.modules), name
    assert cov.corpus_games(1) == cov.corpus_games(1, "core")  # the core corpus as before


def test_tests_by_rule_indexes_t9a_and_cfg_ids(tmp_path) -> None:
    """The test index names variant and configuration IDs (and their prefix patterns) as it names CORE ones."""
    pp, modules = ".".join(("T9A", "PP", "")), ".".join(("CFG", "MODULES"))  # built, so this test names no ID
    (tmp_path / "test_x.py").write_text(f'def test_a():\n    """{pp}* and {modules}, CORE.CC.FLEE"""\n')
    found = cov.tests_by_rule(tmp_path)
    assert found[modules] == found["CORE.CC.FLEE"] == found[pp + "AEGIS"] == ["test_x.py::test_a"]
    assert {r for r in found if r.startswith("T9A.")} == {r for r in rule_ids() if r.startswith(pp)}


def test_coverage_command_module_t9a_and_a_bad_module(monkeypatch) -> None:
    """`battleline coverage --module t9a` prints the T9A and CFG table and its share; a bad --module is one line."""
    from typer.testing import CliRunner

    from battleline.training.cli import app

    ids = cov.module_rule_ids("t9a")
    monkeypatch.setattr(cov, "fuzz_corpus_counts", lambda *a, **k: Counter({r: 1 for r in ids}))
    monkeypatch.setattr(cov, "known_tests", lambda: ({r: ["t::a"] for r in ids}, "tests/"))
    result = CliRunner().invoke(app, ["coverage", "--battles", "1", "--module", "t9a"])
    assert result.exit_code == 0, result.output
    assert "T9A and CFG rule coverage" in result.output
    assert "44/44 T9A and CFG rule IDs tested and firing (100%)" in result.output
    half = {r: 1 for r in ids[:40]}  # 40/44 = 91%, under the 95% that the t9a rule set needs, excused or not
    monkeypatch.setattr(cov, "fuzz_corpus_counts", lambda *a, **k: Counter(half))
    monkeypatch.setattr(cov, "load_exceptions", lambda: {r: "why" for r in ids[40:]})
    result = CliRunner().invoke(app, ["coverage", "--battles", "1", "--module", "t9a"])
    assert result.exit_code == 1, result.output
    assert "below the required 95% tested and firing" in result.output
    result = CliRunner().invoke(app, ["coverage", "--module", "siege"])
    assert result.exit_code == 2 and result.stderr == "error: --module must be one of core, t9a, got 'siege'\n"


def test_shipped_factions_carry_every_t9a_protection_attribute_and_artillery_profile() -> None:
    """The factions' t9a: blocks: every protection but Parry (a hand weapon with a shield grants it) and every
    attribute but Area Attack and Flaming (the catapult and flamethrower profiles carry those) is carried by some
    unit type, every artillery profile by some war machine, and the shipped army lists field units with them."""
    from battleline.env.rules.config import ARTILLERY, ATTRIBUTES, PROTECTIONS, list_armies, load_army, load_faction
    from battleline.env.rules.t9a.conditions import parse

    kits = {(f, u.id): u for f in ("men", "orcs", "elves", "dwarfs") for u in load_faction(f).units}
    carried = {parse(t).name for u in kits.values() for t in (*u.t9a.protections, *u.t9a.attributes)}
    assert set(PROTECTIONS) - carried == {"parry"} and set(ATTRIBUTES) - carried == {"area_attack", "flaming"}
    machines = {u.t9a.artillery for u in kits.values() if u.troop_type == "war_machine"}
    assert machines == set(ARTILLERY)
    assert all(u.troop_type == "war_machine" for u in kits.values() if u.t9a.artillery)
    fielded = {(load_army(a).faction, e.unit) for a in list_armies() for e in load_army(a).units}
    in_lists = {parse(t).name for k in fielded for t in (*kits[k].t9a.protections, *kits[k].t9a.attributes)}
    assert {"aegis", "distracting", "hard_target", "cannot_be_stomped", "stomp", "divine", "lethal_strike",
            "multiple_wounds"} <= in_lists
    giant = kits[("orcs", "hill_giant")].t9a
    assert (giant.size, giant.attributes) == ("gigantic", ["stomp (d3)"])
    assert kits[("dwarfs", "hold_lord")].t9a.attributes == ["multiple_wounds (2 against large, gigantic)"]


def test_pitched_battle_t9a_is_a_registered_gymnasium_id_playing_every_module() -> None:
    """`battleline/PitchedBattleT9a-v0` (the id of configs/scenarios/pitched_battle_t9a.yaml) makes an env whose
    battle plays the five T9A modules and logs CFG.MODULES; the Gymnasium, SB3 and PettingZoo checkers run on it in
    tests/test_checkers.py (every shipped scenario; api_test on pitched_battle_t9a)."""
    import gymnasium as gym

    import battleline  # noqa: F401  (registers the ids)
    from battleline.env import scenario_env_ids

    assert scenario_env_ids()["battleline/PitchedBattleT9a-v0"] == "pitched_battle_t9a"
    assert gym.spec("battleline/PitchedBattleT9a-v0").kwargs == {"scenario": "pitched_battle_t9a"}
    env = gym.make("battleline/PitchedBattleT9a-v0")
    obs, _ = env.reset(seed=3)
    battle = env.unwrapped.battle
    assert battle.state.modules == list(T9A_MODULES)
    assert [e["modules"] for e in rules(battle, "CFG.MODULES")] == [list(T9A_MODULES)]
    assert obs["action_mask"].any()
