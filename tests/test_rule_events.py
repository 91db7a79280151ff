"""Events of rules applied at set-up and in psychology tests, pinned with exact values (RULESET.md §1–§4)."""

from __future__ import annotations

import pytest

from battleline.env.rules import combat, psychology, shooting, special_rules, spell_effects, victory
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.spells import SPELLS
from battleline.env.rules.state import Engagement, TerrainFeature
from battleline.training.coverage import scenario_source
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

DEPTH4 = 4 * INFANTRY_BASE
TROLL = 40 / 25.4


# --------------------------------------------------------------------- the muster
def test_muster_logs_armies_terrain_bases_formation_footprint_and_troop_types() -> None:
    """CORE.SETUP.ARMIES, CORE.SETUP.TERRAIN, CORE.TERRAIN.TYPES, CORE.GEO.BASES, CORE.GEO.FORMATION,
    CORE.GEO.FOOTPRINT, CORE.TYPE.INFANTRY, CORE.TYPE.CAVALRY on the skirmish line: men 145 + 90 + 136 = 371
    points, orcs 305, both under the 2,000-point limit; the copse is difficult ground with soft cover; 20
    spearmen in 5 files on 20 mm bases form 4 ranks, 3.937" × 3.150", US 20; knights get Swiftstride."""
    b = Battle.from_scenario("skirmish_line")
    armies = rules(b, "CORE.SETUP.ARMIES")
    assert [(e["side"], e["faction"], e["points"], e["points_limit"]) for e in armies] == [
        (0, "men", 371, 2000), (1, "orcs", 305, 2000)]
    (terrain,) = rules(b, "CORE.SETUP.TERRAIN")
    assert (terrain["features"], terrain["kinds"], terrain["source"]) == (1, ["woods"], "scenario")
    (copse,) = rules(b, "CORE.TERRAIN.TYPES")
    assert (copse["kind"], copse["move"], copse["obstacle"], copse["cover"]) == ("woods", "difficult", False, "soft")
    base = next(e for e in rules(b, "CORE.GEO.BASES") if e["unit"] == 0)
    assert base["base"] == [0.787, 0.787] and base["unit_strength"] == 20
    form = next(e for e in rules(b, "CORE.GEO.FORMATION") if e["unit"] == 0)
    assert (form["models"], form["files"], form["ranks"]) == (20, 5, 4)
    foot = next(e for e in rules(b, "CORE.GEO.FOOTPRINT") if e["unit"] == 0)
    assert (foot["width"], foot["depth"]) == (3.937, 3.15)
    assert [e["unit"] for e in rules(b, "CORE.TYPE.INFANTRY")] == [0, 1, 3, 4]
    assert [(e["unit"], e["assault_team"], e["rules"]) for e in rules(b, "CORE.TYPE.CAVALRY")] == [
        (2, 3, ["swiftstride"]), (5, 3, ["swiftstride"])]


def test_muster_logs_flyers_fast_cavalry_skirmishers_monstrous_infantry_and_the_general() -> None:
    """CORE.TYPE.FLYER, CORE.TYPE.SKIRMISHERS, CORE.TYPE.FAST_CAVALRY, CORE.TYPE.MONSTROUS_INFANTRY,
    CORE.SR.GENERAL: hovering glade wisps move 10", skirmish on a 20 mm + 1" pitch; the drake flies; the
    pistoliers are Fast Cavalry; tree kin stand on 40 mm bases (US 3 each, assault team 2); the elf mage and
    the marcher captain, the Generals (Ld 8), inspire within 12"."""
    b = Battle.from_scenario(scenario_source("coverage_forest_march"))
    assert [(e["unit"], e["move"]) for e in rules(b, "CORE.TYPE.FLYER")] == [(0, 10.0), (3, 10.0)]
    assert [e["unit"] for e in rules(b, "CORE.TYPE.FLYER") if e["by"] == "hover"] == [0]
    (skirm,) = rules(b, "CORE.TYPE.SKIRMISHERS")
    assert skirm["unit"] == 0 and skirm["pitch"] == [1.787, 1.787]
    assert [e["unit"] for e in rules(b, "CORE.TYPE.FAST_CAVALRY")] == [9]
    (kin,) = rules(b, "CORE.TYPE.MONSTROUS_INFANTRY")
    assert kin["unit"] == 1 and kin["assault_team"] == 2
    assert next(e for e in rules(b, "CORE.GEO.BASES") if e["unit"] == 1)["unit_strength"] == 9
    generals = rules(b, "CORE.SR.GENERAL")
    assert [(e["unit"], e["ld"], e["inspiring_range"]) for e in generals] == [(5, 8, 12.0), (13, 8, 12.0)]


# --------------------------------------------------------------------- psychology
def _trolls_charge_spearmen(dice: list[int], extra: str | None = None, on: int = 1) -> Battle:
    """Red cave trolls (Fear, Ld 4) declare a charge on blue spearmen (Ld 7) 5" away."""
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("cave_trolls", 36, 18 + DEPTH4 / 2 + 5 + TROLL / 2, 270, models=3, files=3)]
    b = battle(blue, red, phase="movement", player="red")
    if extra is not None:
        b.unit(on).special_rules.append(extra)
    b.dice._script = list(dice)
    b.apply(Action("charge", 1, 0))
    return b


def test_fear_source_and_the_leadership_test_are_logged() -> None:
    """CORE.SR.FEAR, CORE.TEST.LD: the trolls cause the spearmen's Fear test; 4 + 5 = 9 > Ld 7 fails."""
    b = _trolls_charge_spearmen([4, 5])
    (src,) = rules(b, "CORE.SR.FEAR")
    assert (src["unit"], src["target"], src["test"]) == (1, 0, "CORE.PSY.FEAR")
    (ld,) = rules(b, "CORE.TEST.LD")
    assert (ld["unit"], ld["test"], ld["ld"], ld["roll"], ld["double_one"], ld["passed"]) == (
        0, "CORE.PSY.FEAR", 7, 9, False, False)


def test_terror_source_and_a_double_one_are_logged() -> None:
    """CORE.SR.TERROR, CORE.TEST.LD: terror-causing trolls; a natural double 1 passes the Terror test."""
    b = _trolls_charge_spearmen([1, 1], extra="terror")
    (src,) = rules(b, "CORE.SR.TERROR")
    assert (src["unit"], src["target"], src["test"]) == (1, 0, "CORE.PSY.TERROR")
    (ld,) = rules(b, "CORE.TEST.LD")
    assert (ld["roll"], ld["double_one"], ld["passed"]) == (2, True, True)


@pytest.mark.parametrize(("rule", "itp_events"), [("immune_to_psychology", 1), ("frenzy", 0)])
def test_immunity_is_logged_as_the_aid_that_gave_it(rule: str, itp_events: int) -> None:
    """CORE.PSY.HELPERS, CORE.SR.ITP: the automatic pass names its aid; only ItP itself logs CORE.SR.ITP."""
    b = _trolls_charge_spearmen([], extra=rule, on=0)
    (aid,) = rules(b, "CORE.PSY.HELPERS")
    assert (aid["unit"], aid["test"], aid["aid"], aid["passed"]) == (0, "CORE.PSY.FEAR", rule, True)
    assert len(rules(b, "CORE.SR.ITP")) == itp_events
    assert rules(b, "CORE.TEST.LD") == []


def test_a_rerolled_test_is_rerolled_once() -> None:
    """CORE.TEST.REROLL_LIMIT: the BSB's re-roll of a failed Panic test (6 + 6, then 6 + 5) is the last."""
    blue = [
        placement("marcher_spearmen", 20, 10, 90),
        placement("marcher_captain", 20, 10, 90, models=1, files=1, options=["battle_standard"], joins=0),
        placement("marcher_spearmen", 30, 10, 90),
    ]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    b.dice._script = [6, 6, 6, 5]
    assert not psychology.test_ld(b, b.unit(2), 7, "CORE.PSY.PANIC.TEST")
    (limit,) = rules(b, "CORE.TEST.REROLL_LIMIT")
    assert (limit["unit"], limit["test"], limit["rerolls"], limit["passed"]) == (2, "CORE.PSY.PANIC.TEST", 1, False)
    assert [e["roll"] for e in rules(b, "CORE.TEST.LD")] == [12]


# --------------------------------------------------------------------- shooting
def _volley(models: int = 10, gap: float = 10.0) -> Battle:
    """Blue crossbowmen (10: two ranks) about 10" from red orc warriors, blue's Shooting phase."""
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=models)]
    red = [placement("orc_warriors", 36, 10 + INFANTRY_BASE + gap + DEPTH4 / 2, 270)]
    return battle(blue, red, phase="shooting")


def test_a_shot_logs_weapon_target_sight_and_shooters() -> None:
    """CORE.SHOOT.ELIGIBLE, CORE.SHOOT.WEAPONS, CORE.SHOOT.TARGET, CORE.GEO.VISION_ARC, CORE.GEO.LOS,
    CORE.SHOOT.SHOOTERS, CORE.SHOOT.MOVE_OR_FIRE: 10 crossbowmen (30", S4, Move or Fire, unmoved) shoot once at
    the orcs 10" away, both ranks firing."""
    b = _volley()
    b.apply(Action("shoot", 0, 1))
    (elig,) = rules(b, "CORE.SHOOT.ELIGIBLE")
    assert (elig["unit"], elig["target"], elig["moved"]) == (0, 1, False)
    (w,) = rules(b, "CORE.SHOOT.WEAPONS")
    assert (w["weapon"], w["range"], w["strength"], w["move_or_fire"]) == ("crossbow", 30.0, 4, True)
    (t,) = rules(b, "CORE.SHOOT.TARGET")
    assert (t["unit"], t["target"], t["distance"], t["range"]) == (0, 1, 10.0, 30.0)
    assert [(e["unit"], e["target"]) for e in rules(b, "CORE.GEO.VISION_ARC") + rules(b, "CORE.GEO.LOS")] == [(0, 1)] * 2
    (s,) = rules(b, "CORE.SHOOT.SHOOTERS")
    assert (s["ranks_1_2"], s["volley"]) == (10, 0)
    (mof,) = rules(b, "CORE.SHOOT.MOVE_OR_FIRE")
    assert (mof["weapon"], mof["moved"]) == ("crossbow", False)
    assert rules(b, "CORE.SR.VOLLEY_FIRE") == []


def test_volley_quick_to_fire_cover_and_large_target_are_logged() -> None:
    """CORE.SHOOT.SHOOTERS with Volley Fire (20 models: 5 of the back 10), CORE.SR.QUICK_TO_FIRE (a bow that moved: no −1),
    CORE.TERRAIN.COVER (−1 behind a hedge), CORE.SR.LARGE_TARGET (+1)."""
    b = _volley(models=20)
    u, t = b.unit(0), b.unit(1)
    u.special_rules.append("volley_fire")
    shooting.resolve_fire(b, u, t)
    (s,) = rules(b, "CORE.SHOOT.SHOOTERS")
    assert (s["ranks_1_2"], s["volley"]) == (10, 5)
    b = _volley()
    u, t = b.unit(0), b.unit(1)
    u.missile = "bow"
    u.special_rules.append("quick_to_fire")
    u.flags["moved"] = True
    t.special_rules.append("large_target")
    b.state.terrain.append(TerrainFeature("hedge", [(30, 15), (42, 15), (42, 15.5), (30, 15.5)]))
    shooting.resolve_fire(b, u, t)
    (q,) = rules(b, "CORE.SR.QUICK_TO_FIRE")
    assert (q["unit"], q["moved"], q["modifier"]) == (0, True, 0)
    (c,) = rules(b, "CORE.TERRAIN.COVER")
    assert (c["unit"], c["shooter"], c["modifier"]) == (1, 0, -1)
    (lt,) = rules(b, "CORE.SR.LARGE_TARGET")
    assert (lt["unit"], lt["modifier"]) == (1, 1)


# --------------------------------------------------------------------- close combat
def _engaged(blue: str = "marcher_spearmen", red: str = "orc_warriors") -> Battle:
    """20 blue ``blue`` in contact front to front with 20 red ``red`` (red's combat phase has passed)."""
    b = battle([placement(blue, 36, 18, 90)], [placement(red, 36, 18 + DEPTH4, 270)], phase="combat", player="red")
    b.state.engagements = [Engagement(0, 1, "front", charged=True, turn=b.state.turn)]
    b.events.clear()
    return b


def test_a_strike_logs_its_attacks_and_melee_weapon() -> None:
    """CORE.CC.ATTACKS, CORE.WEAPON.MELEE, CORE.SR.EXTRA_ATTACK: 5 orcs with additional hand weapons (+1 A each)
    and Extra Attack fight; 5 supporters add 5; the strike rolls the 15 attacks it is given."""
    b = _engaged(red="orc_warriors")
    orcs = b.unit(1)
    orcs.melee = "additional_hand_weapon"
    orcs.special_rules.append("extra_attack")
    b.dice._script = [1] * 15
    st = combat.Strike(1, 0, 5, 5, True, orcs.profile.I)
    combat.resolve_strike(b, st, 15, False, set(), set())
    (att,) = rules(b, "CORE.CC.ATTACKS")
    assert (att["unit"], att["target"], att["fighters"], att["support"], att["attacks"]) == (1, 0, 5, 5, 15)
    (w,) = rules(b, "CORE.WEAPON.MELEE")
    assert (w["weapon"], w["strength_bonus"], w["extra_attacks"]) == ("additional_hand_weapon", 0, 1)
    (extra,) = rules(b, "CORE.SR.EXTRA_ATTACK")
    assert (extra["unit"], extra["extra_attacks"]) == (1, 5)


def test_flaming_attacks_are_logged_with_their_wounds() -> None:
    """CORE.SR.FLAMING: 5 flaming S3 hits on T3 spearmen wound on 4+: 4, 4, 5, 1, 2 give 3 wounds, no armour save."""
    b = _engaged()
    orcs = b.unit(1)
    orcs.special_rules.append("flaming")
    b.dice._script = [4, 4, 5, 1, 2]
    res = special_rules.wound_and_save(b, orcs, b.unit(0), 5, 3, melee=True)
    (fl,) = rules(b, "CORE.SR.FLAMING")
    assert (fl["unit"], fl["target"], fl["wounds"], fl["magical"]) == (1, 0, 3, True)
    assert res.armour_saved == 0


def test_break_order_step_and_stubborn_are_logged() -> None:
    """CORE.CC.BREAK_ORDER, CORE.SR.STUBBORN: Stubborn spearmen losing by 3 test on their unmodified Ld 7
    (3 + 3 = 6 holds); without Stubborn, against as many orcs, the step is "modified" (Ld 4; 3 + 3 fails)."""
    b = _engaged()
    spears = b.unit(0)
    spears.special_rules.append("stubborn")
    b.dice._script = [3, 3]
    assert combat.break_test(b, spears, 3, [b.unit(1)])
    (st,) = rules(b, "CORE.SR.STUBBORN")
    assert (st["unit"], st["ld"], st["difference_ignored"]) == (0, 7, 3)
    assert [e["step"] for e in rules(b, "CORE.CC.BREAK_ORDER")] == ["stubborn"]
    b = _engaged()
    b.dice._script = [3, 3]
    assert not combat.break_test(b, b.unit(0), 3, [b.unit(1)])
    assert [e["step"] for e in rules(b, "CORE.CC.BREAK_ORDER")] == ["modified"]
    assert rules(b, "CORE.TEST.LD")[0]["ld"] == 4


def test_extra_rank_supports_from_the_third_rank() -> None:
    """CORE.SR.EXTRA_RANK: 20 orcs (4 ranks of 5) with Extra Rank support from ranks 2 and 3: 10 attacks."""
    b = _engaged()
    orcs = b.unit(1)
    orcs.special_rules.append("extra_rank")
    assert combat.supporters(b, orcs, 5, charged=False) == 10
    (er,) = rules(b, "CORE.SR.EXTRA_RANK")
    assert (er["unit"], er["rank"], er["supporting"]) == (1, 3, 5)


def test_swiftstride_flee_roll_drops_the_lowest_of_three() -> None:
    """CORE.SR.SWIFTSTRIDE: knights flee 3D6 dropping the lowest: 1, 4, 5 → 9"; infantry roll 2D6 and log nothing."""
    b = battle([placement("order_knights", 36, 18, 90, models=5)], [placement("orc_warriors", 36, 40, 270)])
    b.dice._script = [1, 4, 5]
    assert psychology.flee_roll(b, b.unit(0), "CORE.CC.FLEE") == 9
    (sw,) = rules(b, "CORE.SR.SWIFTSTRIDE")
    assert (sw["unit"], sw["test"], sw["dice"], sw["roll"]) == (0, "CORE.CC.FLEE", [1, 4, 5], 9)
    b.dice._script = [3, 2]
    assert psychology.flee_roll(b, b.unit(1), "CORE.CC.FLEE") == 5
    assert len(rules(b, "CORE.SR.SWIFTSTRIDE")) == 1


def test_stupid_units_test_at_the_start_of_their_turn() -> None:
    """CORE.SR.STUPIDITY: red cave trolls (Stupidity, Ld 4) take their Stupidity test: 3 + 2 = 5 fails."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("cave_trolls", 36, 40, 270, models=3, files=3)],
               phase="start", player="red", dice=[3, 2])
    (st,) = rules(b, "CORE.SR.STUPIDITY")
    assert st["unit"] == 1
    (ld,) = [e for e in rules(b, "CORE.TEST.LD") if e["test"] == "CORE.PSY.STUPIDITY"]
    assert (ld["ld"], ld["roll"], ld["passed"]) == (4, 5, False)


# --------------------------------------------------------------------- charges
def test_a_charge_logs_eligibility_flight_and_contact() -> None:
    """CORE.CHARGE.ELIGIBLE, CORE.SR.FLY, CORE.GEO.CONTACT: flying spearmen 15.5" from the orcs declare a charge,
    charge at M10 + 6 = 16" (highest of 2 and 6) and end in base contact with the orcs' front."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 10 + DEPTH4 + 5, 270)])
    b.unit(0).special_rules.append("fly")
    b.unit(1).y += 10.5
    b._legal_cache = None
    b.dice._script = [2, 6]
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    if b.pending.kind == "charge":
        b.apply(Action("end_phase", None, None))
    (el,) = rules(b, "CORE.CHARGE.ELIGIBLE")
    assert (el["unit"], el["target"], el["distance"]) == (0, 1, 15.5)
    (fly,) = rules(b, "CORE.SR.FLY")
    assert (fly["unit"], fly["charge_m"], fly["range"]) == (0, 10, 16)
    (contact,) = rules(b, "CORE.GEO.CONTACT")
    assert (contact["unit"], contact["target"], contact["facing"], contact["engaged"]) == (0, 1, "front", True)


def test_charge_declaration_logs_the_local_frame_and_arcs() -> None:
    """CORE.GEO.LOCAL_FRAME, CORE.GEO.ARCS: spearmen 5" straight in front of the orcs: their centre lies at
    x = 0, y = 1.575 + 5 + 1.575 = 8.15 in the orcs' frame (half width 1.969", half depth 1.575"), in the front arc."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 10 + DEPTH4 + 5, 270)])
    b.apply(Action("charge", 0, 1))
    (frame,) = rules(b, "CORE.GEO.LOCAL_FRAME")
    assert (frame["unit"], frame["point_of"], frame["x"], frame["y"]) == (1, 0, 0.0, 8.15)
    assert (frame["half_width"], frame["half_depth"]) == (1.969, 1.575)
    (arcs,) = rules(b, "CORE.GEO.ARCS")
    assert (arcs["unit"], arcs["target"], arcs["arcs"]) == (0, 1, ["front"])


def test_a_charge_whose_target_is_gone_fails() -> None:
    """CORE.CHARGE.FEASIBLE: the orcs are gone before the charge is rolled, so the charge becomes impossible."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 10 + DEPTH4 + 5, 270)])
    b.apply(Action("charge", 0, 1))
    b.unit(1).removed = True
    b.apply(Action("react", 1, 0, "hold"))
    (f,) = rules(b, "CORE.CHARGE.FEASIBLE")
    assert (f["unit"], f["target"], f["possible"], f["reason"]) == (0, 1, False, "target gone")
    assert rules(b, "CORE.CHARGE.RANGE") == [] and b.state.engagements == []


def test_slow_to_fire_unit_charged_only_holds() -> None:
    """CORE.SR.SLOW_TO_FIRE: charged crossbowmen with Slow to Fire may not Stand and Shoot; holding logs the rule."""
    b = battle([placement("marcher_crossbowmen", 36, 10, 90, models=10)],
               [placement("orc_warriors", 36, 10 + INFANTRY_BASE + 5 + DEPTH4 / 2, 270)], phase="movement", player="red")
    b.unit(0).special_rules.append("slow_to_fire")
    b.apply(Action("charge", 1, 0))
    assert Action("react", 0, 1, "stand_and_shoot") not in b.legal_actions()
    b.apply(Action("react", 0, 1, "hold"))
    (slow,) = rules(b, "CORE.SR.SLOW_TO_FIRE")
    assert (slow["unit"], slow["charger"], slow["stand_and_shoot"]) == (0, 1, False)


# --------------------------------------------------------------------- start of turn, moves, tests, the end
def test_a_fleeing_unit_keeps_its_status_and_its_musician_helps_it_rally() -> None:
    """CORE.PSY.FLEE.STATUS, CORE.SR.MUSICIAN: fleeing spearmen with a musician rally on Ld 7 + 1 = 8 (4 + 4)."""
    b = battle([placement("marcher_spearmen", 36, 10, 90, command=["musician"], fleeing=True)],
               [placement("orc_warriors", 36, 40, 270)], phase="start", dice=[4, 4])
    (status,) = rules(b, "CORE.PSY.FLEE.STATUS")
    assert (status["unit"], status["may_not"]) == (0, ["charge", "shoot", "cast", "join"])
    (mus,) = rules(b, "CORE.SR.MUSICIAN")
    assert (mus["unit"], mus["test"], mus["ld"]) == (0, "CORE.PSY.RALLY", 8)
    assert not b.unit(0).fleeing


def test_hovering_and_aquatic_moves_are_logged() -> None:
    """CORE.MOVE.FLY, CORE.SR.HOVER, CORE.SR.AQUATIC: hovering spearmen advance with a 10" allowance and may not
    march; Aquatic spearmen standing in a marsh move on it as open ground."""
    marsh = [{"kind": "marsh", "polygon": [[30, 4], [42, 4], [42, 30], [30, 30]]}]
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 44, 270)], terrain=marsh)
    end_declarations(b)
    b.unit(0).special_rules += ["hover", "aquatic"]
    b._legal_cache = None
    b.__dict__.pop("_move_cache", None)
    b.apply(Action("move", 0, None, "advance"))
    (fly,) = rules(b, "CORE.MOVE.FLY")
    assert (fly["unit"], fly["allowance"], fly["marched"]) == (0, 10.0, False)
    (hov,) = rules(b, "CORE.SR.HOVER")
    assert (hov["unit"], hov["may_march"]) == (0, False)
    (aq,) = rules(b, "CORE.SR.AQUATIC")
    assert (aq["unit"], aq["water"], aq["open_ground"]) == (0, ["marsh"], True)


def test_dwellers_below_logs_the_strength_tests() -> None:
    """CORE.TEST.CHARACTERISTIC: Dwellers Below on 10 orcs (S3): 1, 6, 4, 3, 2, 5, 1, 1, 1, 1 fail on 6, 4, 5."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 30, 270, models=10)])
    b.dice._script = [1, 6, 4, 3, 2, 5, 1, 1, 1, 1]
    spell_effects._dwellers(b, b.unit(0), SPELLS["CORE.MAGIC.SPELL.LIFE.4"], b.unit(1))
    (test,) = rules(b, "CORE.TEST.CHARACTERISTIC")
    assert (test["unit"], test["characteristic"], test["value"], test["failed"]) == (1, "S", 3, 3)
    assert b.unit(1).models == 7


def test_shooting_from_a_hill_logs_the_levels() -> None:
    """CORE.TERRAIN.HILL_LEVEL: crossbowmen whose centre is on a hill shoot from level 1 at orcs on level 0."""
    hill = [{"kind": "hill", "polygon": [[30, 6], [42, 6], [42, 14], [30, 14]]}]
    b = battle([placement("marcher_crossbowmen", 36, 10, 90, models=10)],
               [placement("orc_warriors", 36, 10 + INFANTRY_BASE + 10 + DEPTH4 / 2, 270)], phase="shooting", terrain=hill)
    shooting.resolve_fire(b, b.unit(0), b.unit(1))
    (lvl,) = rules(b, "CORE.TERRAIN.HILL_LEVEL")
    assert (lvl["unit"], lvl["target"], lvl["levels"]) == (0, 1, [1, 0])


def test_quarters_are_scored_by_unit_strength() -> None:
    """CORE.SR.UNIT_STRENGTH: at the end, 20 spearmen (US 20) hold the south-west quarter, 20 orcs the north-east."""
    b = battle([placement("marcher_spearmen", 20, 10, 90)], [placement("orc_warriors", 50, 40, 270)])
    victory.end_game(b, "test")
    assert [e["unit_strength"] for e in rules(b, "CORE.SR.UNIT_STRENGTH")] == [[20, 0], [0, 0], [0, 0], [0, 20]]


def test_muster_logs_a_chariot() -> None:
    """CORE.TYPE.CHARIOT: a boar chariot stands on a 50 × 100 mm base (1.969" × 3.937"), US 4, with Impact Hits D6
    and Swiftstride."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("boar_chariot", 36, 40, 270, models=1, files=1)])
    (ch,) = rules(b, "CORE.TYPE.CHARIOT")
    assert (ch["unit"], ch["assault_team"], ch["rules"]) == (1, None, ["impact_hits_d6", "swiftstride"])
    base = next(e for e in rules(b, "CORE.GEO.BASES") if e["unit"] == 1)
    assert (base["base"], base["unit_strength"]) == ([1.969, 3.937], 4)


def test_a_standard_adds_one_to_the_combat_result() -> None:
    """CORE.SR.STANDARD: the spearmen's standard gives their side +1 combat result; the orcs have none."""
    b = battle([placement("marcher_spearmen", 36, 18, 90, command=["standard"])],
               [placement("orc_warriors", 36, 18 + DEPTH4, 270)], phase="combat", player="red")
    b.state.engagements = [Engagement(0, 1, "front", charged=True, turn=b.state.turn)]
    _, parts = combat.combat_result(b, {0: [0], 1: [1]}, [0, 0], 0, b.state.engagements)
    assert parts[0]["standard"] == 1 and "standard" not in parts[1]
    (std,) = rules(b, "CORE.SR.STANDARD")
    assert (std["units"], std["bonus"]) == ([0], 1)


def test_an_advance_into_woods_pays_double() -> None:
    """CORE.TERRAIN.COST: spearmen (M4) advancing into a wood pay ×2 for the move and get 2" forward."""
    woods = [{"kind": "woods", "polygon": [[30, 12], [42, 12], [42, 20], [30, 20]]}]
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 44, 270)], terrain=woods)
    end_declarations(b)
    b.apply(Action("move", 0, None, "advance"))
    (cost,) = rules(b, "CORE.TERRAIN.COST")
    assert (cost["unit"], cost["option"], cost["distance"], cost["multiplier"], cost["obstacle_inches"]) == (
        0, "advance", 2.0, 2.0, 0.0)
    assert b.unit(0).y == pytest.approx(12.0)
