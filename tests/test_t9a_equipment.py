"""The T9A equipment module (t9a.equipment): T9A.ARMOUR.VALUE, T9A.WEAPON.* and T9A.MISSILE.*, with exact
values from seed 001 (src 001:L36-L68) and scripted dice; the CORE rules they replace stay silent when the
module is on, and a core battle is unchanged."""

from __future__ import annotations

import pytest

from battleline.env.rules import combat, shooting, space
from battleline.env.rules.combat import Strike
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.state import Engagement
from battleline.env.rules.t9a import EQUIPMENT, equipment
from tests.setups import battle, placement, rolls, rules

ON = [EQUIPMENT]


def _script(b, faces: list[int]) -> None:
    b.dice = ScriptedDice(faces, then_seed=1)
    b.dice.log = b._log_roll


def _melee(blue: str, red: str, modules: list[str], engagement: Engagement, red_models: int = 20, **kw):
    """Blue ``blue`` (20 models, 5 files) and red ``red`` in one engagement, in the combat phase."""
    b = battle([placement(blue, 36, 10, 90, **kw)], [placement(red, 36, 30, 270, models=red_models)], phase="combat",
               modules=modules)
    b.state.engagements = [engagement]
    b.events.clear()
    return b


def _strike(b, unit: int, attacks: int, round_one: bool, charged: set[int], faces: list[int]) -> int:
    """``unit`` strikes the other unit with ``attacks`` attacks on scripted ``faces``; returns the unsaved wounds."""
    _script(b, faces)
    st = Strike(unit, 1 - unit, fighters=attacks, support=0, frontal=True, initiative=b.unit(unit).profile.I)
    return combat.resolve_strike(b, st, attacks, round_one, charged, set())


def _shooting(shooter: str, target: str, modules: list[str], models: int = 10, gap: float = 8.0):
    """``shooter`` (``models`` in 5 files) facing ``target`` (10 models) ``gap`` inches away, in its Shooting phase."""
    b = battle([placement(shooter, 36, 10, 90, models=models)],
               [placement(target, 36, 10 + 2 * 20 / 25.4 + gap, 270, models=10)], phase="shooting", modules=modules)
    b.events.clear()
    return b


# ============================================================================ T9A.ARMOUR.VALUE
def test_t9a_armour_value_heavy_armour_and_shield_against_a_s4_ap1_crossbow_saves_on_5() -> None:
    """T9A.ARMOUR.VALUE, T9A.MISSILE.TABLE: heavy armour (2) + shield (1) = Armour 3; a crossbow is S4 AP1, so
    the save is 7 − (3 − 1) = 5+, rolled under T9A.ARMOUR.VALUE. 10 crossbowmen (BS3, unmoved, 4+): 6, 6, 6,
    6, 5, 4 hit (6); S4 v T4 wounds on 4+: 6, 5, 4, 4 (4); saves 6, 5, 4, 1: 2 saved, 2 unsaved."""
    b = _shooting("marcher_crossbowmen", "tusk_guard", ON)
    t = b.unit(1)
    t.shield, t.armour_save = True, 4  # heavy armour and a shield (the core table's 4+)
    _script(b, [6, 6, 6, 6, 5, 4, 3, 2, 1, 1] + [6, 5, 4, 4, 3, 2] + [6, 5, 4, 1])
    shooting.resolve_fire(b, b.unit(0), t)
    (armour,) = rules(b, "T9A.ARMOUR.VALUE")
    assert armour["armour"] == 3 and armour["parts"] == {"body": 2, "shield": 1, "mount": 0, "barding": 0}
    assert (armour["ap"], armour["needed"], armour["melee"]) == (1, 5, False)
    (saves,) = rolls(b, "T9A.ARMOUR.VALUE")
    assert saves["dice"] == [6, 5, 4, 1]
    (pipe,) = rules(b, "CORE.SAVE.PIPELINE")
    assert pipe["unsaved"] == 2
    assert not rules(b, "CORE.SAVE.ARMOUR_TABLE") and not rolls(b, "CORE.SAVE.MODIFIERS")


def test_t9a_armour_value_strength_does_not_modify_the_save_but_ap_does() -> None:
    """T9A.ARMOUR.VALUE: 7 − (Armour − AP), S plays no part; a natural 1 fails and 7 means no save."""
    assert equipment.armour_save(3, 1) == 5
    assert equipment.armour_save(2, 0) == 5
    assert equipment.armour_save(2, 2) == 7  # no save
    assert equipment.armour_save(0, 0) == 7
    assert equipment.armour_save(6, 0) == 1  # plate, shield, mount, barding
    assert equipment.armour_save(4, 10) == 7  # cannon-like AP never goes below no save


def test_t9a_armour_value_mount_barding_and_spells_count() -> None:
    """T9A.ARMOUR.VALUE: light (1) + shield (1) + mounted (1) + barding (1) = 4 on cavalry; a spell that
    worsened the core save by 1 takes 1 off (``magic``); infantry gets no mount point."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("boar_riders", 36, 30, 270, models=5)],
               modules=ON)
    boars = b.unit(1)
    boars.t9a = {**boars.t9a, "barding": True}
    boars.armour_save = 3  # the core table for light, shield, mount and barding
    assert equipment.armour_parts(boars) == {"body": 1, "shield": 1, "mount": 1, "barding": 1}
    assert equipment.armour_value(boars) == 4
    boars.armour_save = 4  # a spell worsened the save by 1
    assert equipment.armour_value(boars) == 3 and equipment.armour_parts(boars)["magic"] == -1
    spears = b.unit(0)  # light armour, shield, infantry
    assert equipment.armour_value(spears) == 2 and equipment.armour_value(spears, melee=True) == 2


def test_t9a_armour_value_core_armour_piercing_counts_as_ap_1() -> None:
    """T9A.ARMOUR.VALUE: the core Armour Piercing rule is AP 1. Orc warriors (hand weapon, AP 0) with Armour
    Piercing strike spearmen (light + shield, Armour 2): 7 − (2 − 1) = 6+."""
    b = _melee("marcher_spearmen", "orc_warriors", ON, Engagement(1, 0, "front", charged=True, turn=1))
    b.unit(1).special_rules.append("armour_piercing")
    _strike(b, 1, 2, True, {1}, [6, 6] + [6, 6] + [6, 5])
    (armour,) = rules(b, "T9A.ARMOUR.VALUE")
    assert (armour["ap"], armour["armour_piercing"], armour["needed"]) == (1, True, 6)
    (pipe,) = rules(b, "CORE.SAVE.PIPELINE")
    assert pipe["unsaved"] == 1


# ============================================================================ T9A.WEAPON.SPEAR
def test_t9a_weapon_spear_round_one_unit_not_charging_gets_ap_2_and_plus_2_i() -> None:
    """T9A.WEAPON.SPEAR, T9A.ARMOUR.VALUE: orcs charge the spearmen's front; in R1 the spearmen (did not
    charge, no enemy on flank or rear) strike with AP 1 + 1 = 2 and +2 I. The orcs' light armour and shield
    (Armour 2) save on 7 − (2 − 2) = 7: no save (the core would give 5+). 4 attacks: 6, 5, 4, 1 hit (3);
    S3 v T4 wounds on 5+: 6, 5, 2 (2), both unsaved."""
    b = _melee("marcher_spearmen", "orc_warriors", ON, Engagement(1, 0, "front", charged=True, turn=1))
    unsaved = _strike(b, 0, 4, True, {1}, [6, 5, 4, 1] + [6, 5, 2])
    (spear,) = rules(b, "T9A.WEAPON.SPEAR")
    assert (spear["ap"], spear["initiative"], spear["extra_rank"], spear["applies"]) == (2, 2, True, True)
    (armour,) = rules(b, "T9A.ARMOUR.VALUE")
    assert (armour["armour"], armour["ap"], armour["needed"]) == (2, 2, 7)
    assert unsaved == 2 and not rolls(b, "T9A.ARMOUR.VALUE")


@pytest.mark.parametrize(
    ("engagements", "round_one", "charged", "reason"),
    [
        ([Engagement(0, 1, "front", charged=True, turn=1)], True, {0}, "charged"),
        ([Engagement(1, 0, "front", charged=True, turn=1), Engagement(1, 0, "flank", charged=True, turn=1)], True,
         {1}, "flank_or_rear"),
        ([Engagement(1, 0, "front", charged=True, turn=1, rounds=1)], False, set(), "not_round_one"),
    ],
)
def test_t9a_weapon_spear_without_the_round_one_bonus_is_ap_1(engagements, round_one, charged, reason) -> None:
    """T9A.WEAPON.SPEAR does not give +2 I and the second AP when the spearmen charged, have an enemy on a
    flank, or fight a later round: AP 1, and the orcs (Armour 2) save on 7 − (2 − 1) = 6+."""
    b = _melee("marcher_spearmen", "orc_warriors", ON, engagements[0])
    b.state.engagements = engagements
    _strike(b, 0, 1, round_one, charged, [6, 6, 6])
    (spear,) = rules(b, "T9A.WEAPON.SPEAR")
    assert (spear["ap"], spear["initiative"], spear["applies"], spear["reason"]) == (1, 0, False, reason)
    assert rules(b, "T9A.ARMOUR.VALUE")[0]["needed"] == 6


def test_t9a_weapon_spear_fights_in_an_extra_rank_even_on_the_charge() -> None:
    """T9A.WEAPON.SPEAR: Fight in Extra Rank always (the core spear loses it on the charge): 20 spearmen in
    5 files charging support with ranks 2 and 3 (10), the core with rank 2 only (5)."""
    eng = Engagement(0, 1, "front", charged=True, turn=1)
    t9a_battle = _melee("marcher_spearmen", "orc_warriors", ON, eng)
    assert combat.supporters(t9a_battle, t9a_battle.unit(0), 5, charged=True) == 10
    core = _melee("marcher_spearmen", "orc_warriors", [], eng)
    assert combat.supporters(core, core.unit(0), 5, charged=True) == 5


def test_t9a_weapon_spear_not_for_cavalry_they_fight_with_the_hand_weapon() -> None:
    """T9A.WEAPON.SPEAR: cavalry, beasts and constructs cannot use a spear; lances are not for infantry
    (T9A.WEAPON.LANCE): each fights with its hand weapon, no bonus."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("wolf_riders", 36, 30, 270, models=5)],
               modules=ON)
    wolves, spears = b.unit(1), b.unit(0)
    wolves.melee = "spear"
    assert equipment.melee_weapon(wolves).name == "hand_weapon" and not equipment.fights_in_extra_rank(wolves)
    spears.melee = "lance"
    assert equipment.melee_weapon(spears).name == "hand_weapon"


# ============================================================================ T9A.WEAPON.GREAT / HALBERD / RULES
def test_t9a_weapon_great_plus_2_s_plus_2_ap_strikes_last_and_loses_the_shield() -> None:
    """T9A.WEAPON.GREAT, T9A.WEAPON.RULES: greatswords (S3) strike at S5 AP2 and at Initiative step 0
    (the core's always strikes last); their shield gives nothing in melee: struck by orcs (AP 0) their
    Armour is 2 (heavy) and they save on 5+, while a shot finds Armour 3."""
    b = _melee("sworn_greatswords", "orc_warriors", ON, Engagement(0, 1, "front", charged=True, turn=1))
    gs = b.unit(0)
    gs.shield, gs.armour_save = True, 4
    _strike(b, 0, 1, True, {0}, [6, 6])
    (great,) = rules(b, "T9A.WEAPON.GREAT")
    assert (great["strength_bonus"], great["ap"], great["strikes_last"]) == (2, 2, True)
    assert rules(b, "CORE.CC.TO_WOUND")[0]["strength"] == 5
    (choice,) = rules(b, "T9A.WEAPON.RULES")
    assert (choice["weapon"], choice["hand_weapon_usable"], choice["shield_in_melee"]) == ("great_weapon", False, False)
    b.events.clear()
    _strike(b, 1, 1, True, {0}, [6, 6, 5])
    (armour,) = rules(b, "T9A.ARMOUR.VALUE")
    assert armour["parts"]["shield"] == 0 and armour["armour"] == 2 and armour["needed"] == 5
    assert equipment.armour_value(gs) == 3  # against shooting the shield counts
    assert combat.special_rules.strike_tiers([gs, b.unit(1)], {gs.uid: True, 1: False})[gs.uid] == -1


def test_t9a_weapon_halberd_plus_1_s_plus_1_ap() -> None:
    """T9A.WEAPON.HALBERD: halberdiers (S3) strike at S4 AP1: orcs (Armour 2) save on 7 − (2 − 1) = 6+."""
    b = _melee("marcher_halberdiers", "orc_warriors", ON, Engagement(0, 1, "front", charged=True, turn=1))
    _strike(b, 0, 1, True, {0}, [6, 6, 6])
    (halberd,) = rules(b, "T9A.WEAPON.HALBERD")
    assert (halberd["strength_bonus"], halberd["ap"]) == (1, 1)
    assert rules(b, "CORE.CC.TO_WOUND")[0]["strength"] == 4 and rules(b, "T9A.ARMOUR.VALUE")[0]["needed"] == 6


def test_t9a_weapon_rules_hand_weapon_and_shield_with_parry_hook() -> None:
    """T9A.WEAPON.RULES: orc warriors carry only a hand weapon, so they use it and their shield counts in
    melee (Armour 2 struck by a S3 hand weapon: 5+); paired weapons ignore Parry, a hand weapon does not."""
    b = _melee("marcher_spearmen", "orc_warriors", ON, Engagement(1, 0, "front", charged=True, turn=1))
    _strike(b, 1, 1, True, {1}, [6, 6, 6])
    (choice,) = rules(b, "T9A.WEAPON.RULES")
    assert (choice["carried"], choice["weapon"], choice["hand_weapon_usable"], choice["shield_in_melee"]) == (
        "hand_weapon", "hand_weapon", True, True)
    assert not equipment.ignores_parry(b.unit(1)) and equipment.shield_in_melee(b.unit(1))


# ============================================================================ T9A.WEAPON.LANCE / LIGHT_LANCE
def test_t9a_weapon_lance_plus_2_in_round_one_after_a_frontal_charge_only() -> None:
    """T9A.WEAPON.LANCE: knights (S3) charging the orcs' front strike at S5 AP2 in R1: the orcs (Armour 2)
    have no save; in R2 the lance gives nothing (S3, AP 0: 5+)."""
    b = _melee("order_knights", "orc_warriors", ON, Engagement(0, 1, "front", charged=True, turn=1), models=5)
    _strike(b, 0, 1, True, {0}, [6, 6])
    (lance,) = rules(b, "T9A.WEAPON.LANCE")
    assert (lance["strength_bonus"], lance["ap"], lance["applies"]) == (2, 2, True)
    assert rules(b, "T9A.ARMOUR.VALUE")[0]["needed"] == 7 and rules(b, "CORE.CC.TO_WOUND")[0]["strength"] == 5
    b.events.clear()
    _strike(b, 0, 1, False, set(), [6, 6, 6])
    (lance,) = rules(b, "T9A.WEAPON.LANCE")
    assert (lance["strength_bonus"], lance["ap"], lance["applies"], lance["reason"]) == (0, 0, False, "not_round_one")
    assert rules(b, "T9A.ARMOUR.VALUE")[0]["needed"] == 5


def test_t9a_weapon_lance_no_bonus_against_an_enemy_outside_the_front_arc() -> None:
    """T9A.WEAPON.LANCE (reading A6): knights that charged one enemy get nothing against an orc unit that
    charged their flank in the same turn."""
    b = _melee("order_knights", "orc_warriors", ON, Engagement(1, 0, "flank", charged=True, turn=1), models=5)
    _strike(b, 0, 1, True, {0}, [6, 6, 6])
    (lance,) = rules(b, "T9A.WEAPON.LANCE")
    assert (lance["strength_bonus"], lance["ap"], lance["reason"]) == (0, 0, "not_front")


def test_t9a_weapon_light_lance_is_the_cavalry_spear_plus_1_plus_1() -> None:
    """T9A.WEAPON.LIGHT_LANCE: boar riders' cavalry spear (S3) charging the front: S4 AP1 in R1; the
    spearmen (light + shield, Armour 2) save on 7 − (2 − 1) = 6+."""
    b = _melee("marcher_spearmen", "boar_riders", ON, Engagement(1, 0, "front", charged=True, turn=1), red_models=5)
    _strike(b, 1, 1, True, {1}, [6, 6, 6])
    (lance,) = rules(b, "T9A.WEAPON.LIGHT_LANCE")
    assert (lance["weapon"], lance["strength_bonus"], lance["ap"]) == ("light_lance", 1, 1)
    assert rules(b, "T9A.ARMOUR.VALUE")[0]["needed"] == 6


# ============================================================================ T9A.WEAPON.PAIRED
def test_t9a_weapon_paired_plus_1_attack_plus_1_ws_ignores_parry() -> None:
    """T9A.WEAPON.PAIRED: tusk guard (WS4, A1) with paired weapons have 2 attacks per fighter and hit the
    WS4 greatswords as WS5: 3+ (4+ without); their attacks ignore Parry."""
    b = _melee("sworn_greatswords", "tusk_guard", ON, Engagement(1, 0, "front", charged=True, turn=1))
    tusk = b.unit(1)
    st = Strike(1, 0, fighters=5, support=0, frontal=True, initiative=2)
    assert combat._attacks(b, tusk, st, True, True, set()) == 10
    _strike(b, 1, 1, True, {1}, [3, 1])
    (paired,) = rules(b, "T9A.WEAPON.PAIRED")
    assert (paired["attacks"], paired["ws"]) == (1, 1)
    (hit,) = rules(b, "CORE.CC.TO_HIT")
    assert (hit["needed"], hit["hits"]) == (3, 1)
    assert equipment.ignores_parry(tusk)


def test_flail_reading_plus_2_s_plus_2_ap_in_round_one_only() -> None:
    """T9A.WEAPON.RULES (the flail, not in the T9A table): +2 S and +2 AP in R1, nothing later; two-handed."""
    b = _melee("flagellants", "orc_warriors", ON, Engagement(0, 1, "front", charged=True, turn=1))
    u, t = b.unit(0), b.unit(1)
    r1 = equipment.melee_profile(b, u, t, True, True)
    r2 = equipment.melee_profile(b, u, t, False, False)
    assert (r1.effect.strength_bonus, r1.ap, r2.effect.strength_bonus, r2.ap) == (2, 2, 0, 0)
    assert r1.effect.loses_shield


# ============================================================================ T9A.MISSILE.TABLE / RULES
def test_t9a_missile_table_profiles() -> None:
    """T9A.MISSILE.TABLE (src 001:L62-L68): range, S, AP and rules of each weapon."""
    m = equipment.MISSILES
    assert (m["bow"].range, m["bow"].strength, m["bow"].ap, m["bow"].volley_fire) == (24.0, 3, 0, True)
    assert (m["longbow"].range, m["longbow"].volley_fire) == (30.0, True)
    assert (m["crossbow"].range, m["crossbow"].strength, m["crossbow"].ap, m["crossbow"].unwieldy) == (30.0, 4, 1, True)
    assert (m["handgun"].range, m["handgun"].strength, m["handgun"].ap, m["handgun"].unwieldy) == (24.0, 4, 2, True)
    assert (m["pistol"].range, m["pistol"].strength, m["pistol"].ap, m["pistol"].quick_to_fire) == (12.0, 4, 2, True)
    j = m["javelin"]
    assert (j.range, j.strength, j.ap, j.accurate, j.quick_to_fire) == (8.0, None, 0, True, True)
    assert not any(w.move_or_fire for w in m.values())


def test_t9a_missile_table_pistol_reaches_12_inches_the_core_8() -> None:
    """T9A.MISSILE.TABLE: a pistol's range is 12" (the core's 8"): outriders 10" away are in range only with
    the module on."""
    for modules, in_range in ((ON, True), ([], False)):
        b = _shooting("marcher_outriders", "orc_warriors", modules, models=5, gap=10.0)
        u, t = b.unit(0), b.unit(1)
        assert 8.0 < space.unit_distance(u, t) <= 12.0
        assert shooting.in_range_and_sight(b, u, t) is in_range


def test_t9a_missile_rules_unwieldy_minus_1_after_moving_and_no_move_or_fire() -> None:
    """T9A.MISSILE.RULES: a crossbow is Unwieldy, not Move or Fire: crossbowmen that moved may shoot, at −1
    for moving and −1 more for Unwieldy (BS3: 6+); unmoved, no Unwieldy. The core forbids the shot."""
    b = _shooting("marcher_crossbowmen", "orc_warriors", ON)
    u, t = b.unit(0), b.unit(1)
    assert shooting.to_hit_modifier(b, u, t, False, False)[1] == {}
    u.flags["moved"] = True
    assert shooting.may_fire(b, u)
    mod, parts = shooting.to_hit_modifier(b, u, t, False, False)
    assert parts == {"moved": -1, "unwieldy": -1} and mod == -2
    _script(b, [6, 5, 5, 5, 5, 5, 5, 5, 5, 1])
    shooting.resolve_fire(b, u, t)
    (hit,) = rules(b, "CORE.SHOOT.TO_HIT")
    assert (hit["needed"], hit["hits"]) == (6, 1)
    (rule,) = rules(b, "T9A.MISSILE.RULES")
    assert (rule["unwieldy"], rule["short_range"], rule["reload"]) == (-1, True, False)
    core = _shooting("marcher_crossbowmen", "orc_warriors", [])
    core.unit(0).flags["moved"] = True
    assert not shooting.may_fire(core, core.unit(0))


def test_t9a_missile_rules_accurate_throwing_weapon_has_no_long_range_penalty() -> None:
    """T9A.MISSILE.RULES: a throwing weapon (javelin, 8") is Accurate: at 6" (beyond half range) no −1; a bow
    beyond its 12" short range takes −1. The javelin strikes at the user's S with AP 0."""
    b = _shooting("marcher_crossbowmen", "orc_warriors", ON, gap=6.0)
    u, t = b.unit(0), b.unit(1)
    u.missile = "javelin"
    assert shooting.to_hit_modifier(b, u, t, False, False)[1] == {}
    _script(b, [6] * 10 + [6] * 10 + [1] * 10)
    shooting.resolve_fire(b, u, t)
    (table,) = rules(b, "T9A.MISSILE.TABLE")
    assert (table["weapon"], table["range"], table["strength"], table["ap"]) == ("javelin", 8.0, 3, 0)
    (rule,) = rules(b, "T9A.MISSILE.RULES")
    assert (rule["accurate"], rule["short_range"]) == (True, False)
    bows = _shooting("marcher_crossbowmen", "orc_warriors", ON, gap=14.0)
    bows.unit(0).missile = "bow"
    assert shooting.to_hit_modifier(bows, bows.unit(0), bows.unit(1), False, False)[1] == {"long_range": -1}


def test_t9a_missile_rules_bow_volley_fire_from_the_weapon() -> None:
    """T9A.MISSILE.TABLE, T9A.MISSILE.RULES: a bow has Volley Fire: 20 orc archers in 5 files shoot with
    ranks 1-2 (10) and half the rest (5); the core gives the extra 5 only to a unit with the Volley Fire rule."""
    for modules, volley in ((ON, 5), ([], 0)):
        b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_archers", 36, 30, 270)],
                   phase="shooting", player="red", modules=modules)
        u = b.unit(1)
        assert not u.has("volley_fire") and u.missile == "bow"
        assert shooting.shooters(u, shooting.weapon(u, b.state)) == (10, volley)


# ============================================================================ replaced CORE rules; core unchanged
def test_replaced_core_rules_do_not_fire_when_the_module_is_on() -> None:
    """CORE.WEAPON.MELEE, CORE.SAVE.MODIFIERS, CORE.SAVE.ARMOUR_TABLE and CORE.SHOOT.WEAPONS are silent
    with t9a.equipment on; T9A.WEAPON.RULES, T9A.ARMOUR.VALUE and T9A.MISSILE.TABLE speak instead."""
    b = _melee("marcher_spearmen", "orc_warriors", ON, Engagement(1, 0, "front", charged=True, turn=1))
    _strike(b, 0, 2, True, {1}, [6, 6, 6, 6, 3, 3])
    assert rules(b, "T9A.WEAPON.RULES") and rules(b, "T9A.ARMOUR.VALUE")
    assert not rules(b, "CORE.WEAPON.MELEE") and not rules(b, "CORE.SAVE.MODIFIERS")
    s = _shooting("marcher_crossbowmen", "orc_warriors", ON)
    _script(s, [6] * 10 + [6] * 10 + [3] * 10)
    shooting.resolve_fire(s, s.unit(0), s.unit(1))
    assert rules(s, "T9A.MISSILE.TABLE") and rules(s, "T9A.ARMOUR.VALUE")
    assert not rules(s, "CORE.SHOOT.WEAPONS") and not rules(s, "CORE.SAVE.ARMOUR_TABLE")
    assert not rolls(s, "CORE.SAVE.MODIFIERS")


def test_core_unchanged_when_the_module_is_off() -> None:
    """Without t9a.equipment the same R1 return strike of spearmen on orcs is the core's: S3 against light
    armour and shield saves on 5+ (CORE.SAVE.ARMOUR_TABLE, CORE.SAVE.MODIFIERS), CORE.WEAPON.MELEE fires,
    and no T9A rule does; the crossbow is the core's 30" S4 Move or Fire."""
    b = _melee("marcher_spearmen", "orc_warriors", [], Engagement(1, 0, "front", charged=True, turn=1))
    _strike(b, 0, 4, True, {1}, [6, 5, 4, 1] + [6, 5, 2] + [5, 4])
    (save,) = rules(b, "CORE.SAVE.MODIFIERS")
    assert (save["needed"], save["saved"]) == (5, 1)
    assert rules(b, "CORE.WEAPON.MELEE")
    assert not [e for e in b.events if e["rule"].startswith("T9A.")]
    core = _shooting("marcher_crossbowmen", "orc_warriors", [])
    w = shooting.weapon(core.unit(0), core.state)
    assert (type(w).__name__, w.range, w.strength, w.move_or_fire) == ("MissileWeapon", 30.0, 4, True)


def test_t9a_equipment_full_battles_do_not_crash_and_keep_the_invariants() -> None:
    """pitched_battle_t9a with only t9a.equipment on, random and line_advance agents: the battles end, the
    invariant checker finds nothing after any decision, and the module's rules fire."""
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.config import load_scenario
    from battleline.training.play import agent_seed, make_agent

    scen = load_scenario("pitched_battle_t9a").model_dump()
    scen["modules"] = ON
    seen: set[str] = set()
    for seed, name in ((0, "random"), (1, "line_advance")):
        b = Battle.from_scenario(scen, seed=seed)
        agents = [make_agent(name, seed=agent_seed(seed, side)) for side in (0, 1)]
        for side, agent in enumerate(agents):
            agent.reset(b, side)
        for _ in range(5000):
            if b.is_over:
                break
            b.apply(agents[b.pending.player].act(b))
            assert b.check_invariants() == []
        assert b.is_over
        seen |= {e["rule"] for e in b.events if e["rule"].startswith("T9A.")}
    assert {"T9A.ARMOUR.VALUE", "T9A.WEAPON.RULES", "T9A.MISSILE.TABLE"} <= seen


def test_t9a_armour_value_rider_war_machine_ap_and_unrecorded_kit() -> None:
    """T9A.ARMOUR.VALUE for the other save paths: a griffon's rider (plate, shield, mount: Armour 5) against
    2 hits of S4 AP2 saves on 7 − (5 − 2) = 4+ (wounds on 3+: 6, 3; saves 4, 3: one unsaved, the rider slain);
    a core great cannon's hits have AP 10 (the T9A cannon's), so plate and a shield (Armour 4) get no save; a
    unit whose kit was not recorded reads its Armour back from its core save (7 − save)."""
    from battleline.env.rules import monsters

    b = battle([placement("griffon_knight", 36, 10, 90, models=1, files=1), placement("great_cannon", 10, 10, 90,
                models=3, files=1)], [placement("orc_archers", 36, 30, 270, models=10)], modules=ON)
    griffon, cannon, orcs = b.unit(0), b.unit(1), b.unit(2)
    _script(b, [6, 3] + [4, 3])
    assert monsters.wound_rider(b, orcs, griffon, 2, 4, ap=2) == 1
    (armour,) = rules(b, "T9A.ARMOUR.VALUE")
    assert (armour["rider"], armour["armour"], armour["ap"], armour["needed"]) == (True, 5, 2, 4)
    assert rolls(b, "T9A.ARMOUR.VALUE")[0]["dice"] == [4, 3] and griffon.rider["slain"]
    assert equipment.default_ap(cannon) == 10 and equipment.default_ap(orcs) == 0
    orcs.t9a = {**orcs.t9a, "armour": "plate"}
    orcs.shield, orcs.armour_save = True, 2
    assert equipment.save_needed(b, cannon, orcs, None, False, False) == 7
    orcs.t9a = {}
    assert equipment.armour_parts(orcs) == {"core_save": 5} and equipment.armour_value(orcs) == 5


def test_t9a_armour_value_against_t9a_artillery_takes_the_profiles_ap() -> None:
    """T9A.ARMOUR.VALUE with t9a.artillery: a shot's AP is its T9A profile's (here a catapult's S4 AP1), not
    the core machine's: orcs in heavy armour with a shield (Armour 3) save on 7 − (3 − 1) = 5+. S4 v T4
    wounds on 4+: 6, 4, 3 (2); saves 5, 4: one saved."""
    from battleline.env.rules.t9a import ARTILLERY
    from battleline.env.rules.t9a import artillery as art

    b = battle([placement("great_cannon", 36, 10, 90, models=3, files=1)], [placement("orc_warriors", 36, 30, 270)],
               modules=[ARTILLERY, EQUIPMENT])
    orcs = b.unit(1)
    orcs.t9a = {**orcs.t9a, "armour": "heavy"}
    orcs.armour_save = 4
    _script(b, [6, 4, 3] + [5, 4])
    art._wound(b, b.unit(0), orcs, 3, art.Shot(4, 1), "T9A.ART.CATAPULT")
    (armour,) = rules(b, "T9A.ARMOUR.VALUE")
    assert (armour["armour"], armour["ap"], armour["needed"]) == (3, 1, 5)
    assert rolls(b, "T9A.ARMOUR.VALUE")[0]["dice"] == [5, 4] and rules(b, "CORE.SAVE.PIPELINE")[0]["unsaved"] == 1
