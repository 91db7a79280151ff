"""Exact-value tests of the special rules, troop types and psychology (RULESET.md §3.8, §4)."""

from __future__ import annotations

import pytest

from battleline.env.rules import breath, combat, deployment, psychology, shooting, space, special_rules
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.charges import can_charge, charge_reach, contact_placement
from battleline.env.rules.state import Engagement
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

DEPTH4 = 4 * INFANTRY_BASE  # 20 infantry models in 5 files
TROLL = 40 / 25.4  # monstrous infantry base
CAV_DEPTH = 50 / 25.4


def _fight(blue: dict, red: dict, attacker: int = 0, facing: str = "front", charged: bool = True) -> Battle:
    """``attacker`` (uid 0 blue, 1 red) placed flush against the other's ``facing``; the red turn's
    combat phase has passed, so no start-of-turn test of red ran (blue is now the phasing player)."""
    b = battle([blue], [red], phase="combat", player="red")
    a, d = b.unit(attacker), b.unit(1 - attacker)
    pose, _, _ = contact_placement(b, a, d, facing)
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(a.uid, d.uid, facing, charged=charged, turn=b.state.turn)]
    b.events.clear()
    return b


def _strike(b: Battle, unit: int, fighters: int, round_one: bool = False, charged: set[int] | None = None) -> int:
    st = combat.Strike(unit, 1 - unit, fighters, 0, True, b.unit(unit).profile.I)
    return combat.resolve_strike(b, st, fighters * b.unit(unit).profile.A, round_one, charged or set(), set())


def _trolls_charge_spearmen(gap: float, dice: list[int], terror: bool = False) -> Battle:
    """Red cave trolls (Fear, Ld4) declare a charge on blue spearmen (Ld7) ``gap``" away."""
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("cave_trolls", 36, 18 + DEPTH4 / 2 + gap + TROLL / 2, 270, models=3, files=3)]
    b = battle(blue, red, phase="movement", player="red")
    if terror:
        b.unit(1).special_rules.append("terror")
    b.dice._script = list(dice)
    b.apply(Action("charge", 1, 0))
    return b


# --------------------------------------------------------------------- Fear and Terror
def test_fear_charged_unit_tests_at_declaration_and_fights_at_ws_1() -> None:
    """CORE.PSY.FEAR, CORE.PSY.TIMING, CORE.SR.FEAR: charged by trolls, the spearmen test Ld 7 before reacting:
    2D6 = 9 fails, so their WS becomes 1 in that combat (to hit 5+; the trolls hit them on 3+)."""
    b = _trolls_charge_spearmen(5.0, [4, 5])
    assert rules(b, "CORE.PSY.TIMING") == [rules(b, "CORE.PSY.TIMING")[0]]
    (fear,) = rules(b, "CORE.PSY.FEAR")
    assert fear["unit"] == 0 and fear["source"] == 1 and fear["ld"] == 7 and fear["roll"] == 9 and not fear["passed"]
    assert fear["role"] == "charged"
    assert b.pending.kind == "react"  # the test came before the reaction
    assert b.unit(0).marks["afraid_of"] == [1]
    assert psychology.combat_ws(b, b.unit(0)) == 3  # not yet in combat with the trolls
    b.state.engagements = [Engagement(1, 0, "front", charged=True, turn=b.state.turn)]
    assert psychology.combat_ws(b, b.unit(0)) == 1
    b.dice._script = [4, 4, 4]
    _strike(b, 0, 3)
    (hit,) = rules(b, "CORE.CC.TO_HIT")
    assert hit["needed"] == 5 and hit["hits"] == 0
    b.dice._script = [3, 3, 3, 1, 1, 1]
    _strike(b, 1, 1)
    hit = rules(b, "CORE.CC.TO_HIT")[-1]
    assert hit["needed"] == 3 and hit["hits"] == 3


def test_fear_passed_and_fear_causers_ignore_fear() -> None:
    """CORE.PSY.FEAR: 2D6 = 7 ≤ Ld 7 passes; a Fear-causer charged by Fear-causers takes no test at all."""
    b = _trolls_charge_spearmen(5.0, [3, 4])
    (fear,) = rules(b, "CORE.PSY.FEAR")
    assert fear["passed"] and "afraid_of" not in b.unit(0).marks
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("cave_trolls", 36, 18 + DEPTH4 / 2 + 5 + TROLL / 2, 270, models=3, files=3)]
    b = battle(blue, red, phase="movement", player="red")
    b.unit(0).special_rules.append("fear")
    b.dice._script = []
    b.apply(Action("charge", 1, 0))
    charger, charged = rules(b, "CORE.PSY.FEAR")
    assert charger["role"] == "charger" and charged["role"] == "charged"
    assert charger["ignored"] and charged["ignored"] and "roll" not in charged
    assert not [e for e in b.events if e["rule"] == "CORE.PSY.FEAR" and e.get("kind") == "dice"]


def test_immune_to_psychology_passes_fear_without_a_roll() -> None:
    """CORE.SR.ITP, CORE.PSY.HELPERS: Immune to Psychology (also Frenzy) passes Fear automatically."""
    for rule in ("immune_to_psychology", "frenzy"):
        blue = [placement("marcher_spearmen", 36, 18, 90)]
        red = [placement("cave_trolls", 36, 18 + DEPTH4 / 2 + 5 + TROLL / 2, 270, models=3, files=3)]
        b = battle(blue, red, phase="movement", player="red")
        b.unit(0).special_rules.append(rule)
        b.apply(Action("charge", 1, 0))
        (fear,) = rules(b, "CORE.PSY.FEAR")
        assert fear["passed"] and fear["automatic"]


def test_terror_failed_by_charged_unit_means_flee_at_once() -> None:
    """CORE.PSY.TERROR, CORE.SR.TERROR: 2D6 = 10 > Ld 7, the spearmen flee at once (2D6 = 7), no reaction is asked;
    a second Terror-causer later brings only a Fear test (one Terror test per game)."""
    b = _trolls_charge_spearmen(5.0, [5, 5, 3, 4], terror=True)
    (test,) = [e for e in rules(b, "CORE.PSY.TERROR") if "passed" in e]
    assert test["unit"] == 0 and test["roll"] == 10 and not test["passed"]
    (react,) = rules(b, "CORE.REACT.DECLARE")
    assert react["reaction"] == "flee" and react["forced"] == "terror"
    (flee,) = rules(b, "CORE.REACT.FLEE")
    assert flee["unit"] == 0 and flee["roll"] == 7 and flee["terror"]
    assert b.unit(0).marks["terror_tested"]
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    spearmen, trolls = b.unit(0), b.unit(1)
    trolls.special_rules.append("terror")
    spearmen.marks["terror_tested"] = True
    b.dice._script = [6, 6]
    assert psychology.fear_test(b, spearmen, trolls, "charged") == "fear"
    assert rules(b, "CORE.PSY.FEAR")[0]["roll"] == 12 and not rules(b, "CORE.PSY.TERROR")


def test_charger_failing_terror_cancels_its_charge() -> None:
    """CORE.PSY.TERROR, CORE.PSY.TIMING: the charger tests right after declaring; 2D6 = 12 fails, it flees 2D6 = 5
    away from the Terror-causer and its charge is cancelled (no reaction, no charge roll)."""
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("cave_trolls", 36, 18 + DEPTH4 / 2 + 5 + TROLL / 2, 270, models=3, files=3)]
    b = battle(blue, red, phase="movement")
    b.unit(1).special_rules.append("terror")
    y0 = b.unit(0).y
    b.dice._script = [6, 6, 2, 3]
    b.apply(Action("charge", 0, 1))
    test, flee = rules(b, "CORE.PSY.TERROR")
    assert test["role"] == "charger" and not test["passed"]
    assert flee["flee"] and flee["roll"] == 5 and flee["cancelled_charge"] == 1
    assert b.unit(0).y < y0 and not rules(b, "CORE.REACT.DECLARE")
    assert not [e for e in rules(b, "CORE.CHARGE.RANGE") if e["unit"] == 0]


def test_terror_causer_tests_nothing_and_fear_causer_tests_fear_against_terror() -> None:
    """CORE.PSY.TERROR: Terror ignores Fear and Terror; a Fear-causer takes a Fear test against Terror."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    spearmen, trolls = b.unit(0), b.unit(1)
    trolls.special_rules.append("terror")
    spearmen.special_rules.append("terror")
    assert psychology.fear_test(b, spearmen, trolls, "charged") is None
    spearmen.special_rules.remove("terror")
    spearmen.special_rules.append("fear")
    b.dice._script = [2, 2]
    assert psychology.fear_test(b, spearmen, trolls, "charged") == "passed"
    assert rules(b, "CORE.PSY.FEAR")[-1]["roll"] == 4 and not rules(b, "CORE.PSY.TERROR")


# --------------------------------------------------------------------- Frenzy, Hatred, ASF, Stubborn, Unbreakable
def test_frenzy_gives_an_attack_and_is_lost_when_the_unit_loses_a_round() -> None:
    """CORE.SR.FRENZY, CORE.SR.EXTRA_ATTACK: frenzied spearmen make 2 A each; losing by 3 ends Frenzy for good."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270), charged=False)
    spearmen = b.unit(0)
    spearmen.special_rules.append("frenzy")
    st = combat.Strike(0, 1, 5, 0, True, 3)
    assert combat._attacks(b, spearmen, st, False, False, set()) == 10
    b.dice._script = [1, 2]  # break test: 3 ≤ Ld 7 − 3
    group = b.state.engagements
    combat._result_and_break(b, group, {0: [0], 1: [1]}, [0, 3], False, None)
    (lost,) = rules(b, "CORE.SR.FRENZY")
    assert lost["lost"] and not spearmen.has("frenzy")
    assert combat._attacks(b, spearmen, st, False, False, set()) == 5


def test_hatred_rerolls_misses_in_round_one_against_hated_enemies_only() -> None:
    """CORE.SR.HATRED: to hit 4+ [1, 4, 2], the two misses re-rolled [5, 3]: 2 hits; to wound 5+ [5, 6], save 5+ [5, 1]."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    b.unit(0).special_rules.append("hatred_orcs")
    b.dice._script = [1, 4, 2, 5, 3, 5, 6, 5, 1]
    assert _strike(b, 0, 3, round_one=True) == 1
    (hatred,) = rules(b, "CORE.SR.HATRED")
    assert hatred["rerolled"] == 2
    assert rules(b, "CORE.CC.TO_HIT")[0]["hits"] == 2
    # Round 2, or an enemy that is not hated: no re-roll.
    b.dice._script = [1, 4, 2, 5, 1]
    assert _strike(b, 0, 3, round_one=False) == 1
    b.unit(0).special_rules[-1] = "hatred_dwarfs"
    b.dice._script = [1, 4, 2, 5, 1]
    assert _strike(b, 0, 3, round_one=True) == 1
    assert len(rules(b, "CORE.SR.HATRED")) == 1


def test_always_strikes_first_rerolls_against_lower_initiative_and_strikes_first() -> None:
    """CORE.SR.ASF: I3 spearmen with ASF re-roll misses against I2 orcs in any round; from round 2 ASF orcs (I2)
    strike before the I3 spearmen. CORE.SR.ASL, CORE.CC.STRIKE_ORDER.LATER: ASF against ASL, I decides."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270), charged=False)
    spearmen, orcs = b.unit(0), b.unit(1)
    spearmen.special_rules.append("always_strikes_first")
    b.dice._script = [2, 4, 6, 1, 1]  # to hit 4+: one miss re-rolled (6); to wound 5+ [1, 1]
    _strike(b, 0, 2)
    (asf,) = rules(b, "CORE.SR.ASF")
    assert asf["rerolled"] == 1 and rules(b, "CORE.CC.TO_HIT")[0]["hits"] == 2
    spearmen.special_rules.remove("always_strikes_first")
    orcs.special_rules.append("always_strikes_first")
    b.events.clear()
    b.dice._script = []
    combat.fight_round(b, b.state.engagements)
    order = [e["unit"] for e in rules(b, "CORE.CC.TO_HIT")]
    assert order[0] == 1
    assert special_rules.strike_tiers([spearmen, orcs], {}) == {0: 0, 1: 1}
    spearmen.melee = "great_weapon"
    assert special_rules.strike_tiers([spearmen, orcs], {0: True}) == {0: 0, 1: 0}


def test_stubborn_tests_on_unmodified_ld_and_unbreakable_passes() -> None:
    """CORE.SR.STUBBORN: losing by 4, Stubborn spearmen test on Ld 7 (2D6 = 7 holds); CORE.SR.UNBREAKABLE: no roll."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90, models=10), placement("orc_warriors", 36, 30, 270))
    u = b.unit(0)
    u.special_rules.append("stubborn")
    b.dice._script = [3, 4]
    assert combat.break_test(b, u, 4, [b.unit(1)])
    (test,) = rules(b, "CORE.CC.BREAK_TEST")
    assert test["ld"] == 7 and test["basis"] == "stubborn"
    u.special_rules.append("unbreakable")
    b.dice._script = []
    assert combat.break_test(b, u, 9, [b.unit(1)])
    assert rules(b, "CORE.SR.UNBREAKABLE")


def test_swarm_takes_no_break_test_but_wounds_equal_to_the_difference() -> None:
    """CORE.SR.SWARM, CORE.TYPE.SWARM: losing by 3, a swarm loses 3 models (1 W), no dice, no saves."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    swarm = b.unit(1)
    swarm.special_rules.append("swarm")
    b.dice._script = []
    assert combat.break_test(b, swarm, 3, [b.unit(0)])
    assert swarm.models == 17 and not rules(b, "CORE.CC.BREAK_TEST")
    (ev,) = rules(b, "CORE.SR.SWARM")
    assert ev["wounds"] == 3


def test_swarms_cause_no_panic() -> None:
    """CORE.TYPE.SWARM, CORE.PSY.PANIC.TRIGGER_DESTROYED: a destroyed swarm 2" from friends makes nobody test."""
    blue = [placement("marcher_spearmen", 20, 10, 90), placement("marcher_spearmen", 20, 10 + DEPTH4 + 2, 90)]
    b = battle(blue, [placement("orc_warriors", 50, 40, 270)], phase="shooting")
    b.unit(0).special_rules.append("swarm")
    b.dice._script = []
    psychology.destroy(b, b.unit(0), "CORE.CC.CAUGHT")
    assert not rules(b, "CORE.PSY.PANIC.TEST") and rules(b, "CORE.TYPE.SWARM")


# --------------------------------------------------------------------- Stupidity
def test_stupidity_failed_test_moves_d6_towards_the_nearest_enemy() -> None:
    """CORE.PSY.STUPIDITY, CORE.SR.STUPIDITY: trolls (Ld 4) roll 6 and fail; in the compulsory moves they go
    D6 = 4" straight at the spearmen 10" away, and may not charge."""
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    y = 18 + DEPTH4 / 2 + 10 + TROLL / 2
    red = [placement("cave_trolls", 36, y, 270, models=3, files=3)]
    b = battle(blue, red, phase="start", player="red", dice=[3, 3, 4])
    test, move = rules(b, "CORE.PSY.STUPIDITY")
    assert test["ld"] == 4 and test["roll"] == 6 and not test["passed"]
    assert move["roll"] == 4 and move["distance"] == pytest.approx(4.0) and move["towards"] == 0
    trolls = b.unit(1)
    assert trolls.y == pytest.approx(y - 4.0) and trolls.facing == pytest.approx(270.0)
    assert not any(e["unit"] == 1 for e in rules(b, "CORE.CHARGE.DECLARE"))


def test_stupid_move_stops_one_inch_short_and_stupid_units_do_not_charge() -> None:
    """CORE.PSY.STUPIDITY: 3" from the enemy, a D6 of 6 moves the trolls only 2" (they stop 1" short)."""
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    y = 18 + DEPTH4 / 2 + 3 + TROLL / 2
    red = [placement("cave_trolls", 36, y, 270, models=3, files=3)]
    b = battle(blue, red, phase="start", player="red", dice=[6, 6, 6])
    move = rules(b, "CORE.PSY.STUPIDITY")[1]
    assert move["distance"] == pytest.approx(2.0, abs=0.02)
    b2 = battle(blue, red, phase="movement", player="red")
    trolls = b2.unit(1)
    assert can_charge(b2, trolls)
    trolls.flags["stupid"] = True
    assert not can_charge(b2, trolls)


# --------------------------------------------------------------------- saves: Regeneration, Killing Blow, Poison, Flaming
def test_regeneration_is_the_last_save() -> None:
    """CORE.SR.REGENERATION, CORE.SAVE.PIPELINE: 3 hits [4,5,6], 3 wounds at 5+ [5,6,5] on unarmoured trolls;
    Regeneration 4+ [4,3,6] saves 2: 1 unsaved."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    b.dice._script = [4, 5, 6, 5, 6, 5, 4, 3, 6]
    assert _strike(b, 0, 3) == 1
    (regen,) = [e for e in rules(b, "CORE.SR.REGENERATION") if "saved" in e]
    assert regen["needed"] == 4 and regen["saved"] == 2


def test_flaming_attacks_stop_regeneration_and_armour_and_flammable_doubles() -> None:
    """CORE.SR.FLAMING: no Regeneration roll; CORE.SR.FLAMMABLE: 2 flaming wounds on 3-W trolls do 2 + 1 = 3 wounds
    (the excess of the second hit is lost, CORE.WOUND.APPLY): one troll dies. CORE.SAVE.NONE: no armour vs flames."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    b.unit(0).special_rules.append("flaming")
    trolls = b.unit(1)
    trolls.special_rules.append("flammable")
    b.dice._script = [4, 4, 5, 6]
    assert _strike(b, 0, 2) == 0
    res = combat.Strike(0, 1, 2, 0, True, 3)
    b.dice._script = [4, 4, 5, 6]
    combat.resolve_strike(b, res, 2, False, set(), set())
    wr = res.info["result"]
    assert wr.doubled == 2 and wr.unsaved == 0
    assert [e["blocked"] for e in rules(b, "CORE.SR.REGENERATION")] == ["flaming", "flaming"]
    assert special_rules.apply_result(b, trolls, wr, "CORE.CC.CASUALTIES") == (3, 1)
    assert trolls.models == 2 and trolls.wounds_taken == 0
    # Against armour: the orcs' 5+ save is not taken against flaming blows.
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    b.unit(0).special_rules.append("flaming")
    b.dice._script = [4, 5, 5]
    assert _strike(b, 0, 1) == 1
    assert rules(b, "CORE.SAVE.NONE")[0]["reason"] == "flaming"


def test_killing_blow_slays_outright_and_only_a_ward_save_stops_it() -> None:
    """CORE.SR.KILLING_BLOW: wound rolls [6, 5] on trolls: the 5 is a wound (Regeneration [1] fails), the 6 slays the
    wounded troll outright (2 more wounds), no Regeneration; CORE.SAVE.WARD 4+ [4] stops a Killing Blow."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    b.unit(0).special_rules.append("killing_blow")
    trolls = b.unit(1)
    st = combat.Strike(0, 1, 2, 0, True, 3)
    b.dice._script = [4, 4, 6, 5, 1]
    wounds = [0, 0]
    combat._strike_step(b, [st], False, set(), set(), wounds, set(), None)
    assert trolls.models == 2 and trolls.wounds_taken == 0 and wounds == [3, 0]
    (kb, slain) = rules(b, "CORE.SR.KILLING_BLOW")
    assert kb["killing_blows"] == 1 and slain["wounds"] == 2
    trolls.special_rules.append("ward_save_4")
    b.dice._script = [4, 6, 4]
    st = combat.Strike(0, 1, 1, 0, True, 3)
    combat.resolve_strike(b, st, 1, False, set(), set())
    assert st.info["result"].slain == 0 and rules(b, "CORE.SAVE.WARD")[0]["saved"] == 1


def test_poisoned_attacks_wound_on_a_six_to_hit_with_no_armour_save() -> None:
    """CORE.SR.POISON: to hit [6, 4, 2]: the 6 wounds automatically (no save); the 4 wounds on [5] and is saved [5]."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    b.unit(0).special_rules.append("poison")
    b.dice._script = [6, 4, 2, 5, 5]
    assert _strike(b, 0, 3) == 1
    (poison,) = rules(b, "CORE.SR.POISON")
    assert poison["automatic_wounds"] == 1
    assert rules(b, "CORE.SAVE.MODIFIERS")[-1]["saved"] == 1


def test_ethereal_only_hurt_by_magical_attacks_and_their_attacks_ignore_armour() -> None:
    """CORE.SR.ETHEREAL: mundane blows do nothing (no wound dice); Flaming ones wound; Ethereal blows allow no armour."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    b.unit(1).special_rules.append("ethereal")
    b.dice._script = [4, 4]
    assert _strike(b, 0, 2) == 0
    (eth,) = rules(b, "CORE.SR.ETHEREAL")
    assert eth["hits"] == 2 and eth["wounds"] == 0
    b.unit(0).special_rules.append("flaming")
    b.dice._script = [4, 5]
    assert _strike(b, 0, 1) == 1
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    b.unit(0).special_rules.append("ethereal")
    b.dice._script = [4, 5]
    assert _strike(b, 0, 1) == 1 and rules(b, "CORE.SAVE.NONE")[0]["reason"] == "ethereal"


def test_armour_piercing_worsens_the_save_in_combat() -> None:
    """CORE.SR.ARMOUR_PIERCING: the orcs' 5+ save becomes 6+ against S3 armour-piercing blows."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    b.unit(0).special_rules.append("armour_piercing")
    b.dice._script = [4, 5, 5]
    assert _strike(b, 0, 1) == 1
    assert rules(b, "CORE.SAVE.MODIFIERS")[-1]["needed"] == 6 and rules(b, "CORE.SR.ARMOUR_PIERCING")


# --------------------------------------------------------------------- charge bonuses: Devastating Charge, Impact Hits, Breath
def test_devastating_charge_adds_one_strength_in_round_one_after_charging() -> None:
    """CORE.SR.DEVASTATING_CHARGE: boar riders S3 + cavalry spear 1 + Devastating Charge 1 = S5 in R1; S3 later."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("boar_riders", 36, 30, 270, models=5, files=5), attacker=1)
    b.dice._script = [4, 4]
    _strike(b, 1, 1, round_one=True, charged={1})
    assert rules(b, "CORE.CC.TO_WOUND")[-1]["strength"] == 5 and rules(b, "CORE.SR.DEVASTATING_CHARGE")
    b.dice._script = [4, 4]
    _strike(b, 1, 1, round_one=False, charged=set())
    assert rules(b, "CORE.CC.TO_WOUND")[-1]["strength"] == 3


def test_impact_hits_only_after_charging_from_more_than_m() -> None:
    """CORE.SR.IMPACT_HITS: 3 boar riders with Impact Hits (2) that charged from 8" (> M7) make 6 automatic S3 hits
    before the blows: wounds 4+ [4,4,4,1,1,1] = 3, saves 5+ [5,6,1]: 1 wound, which counts for the result."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("boar_riders", 36, 30, 270, models=5, files=3), attacker=1)
    boars, spearmen = b.unit(1), b.unit(0)
    boars.special_rules.append("impact_hits_2")
    boars.flags["charge_start_distance"] = 8.0
    b.dice._script = [4, 4, 4, 1, 1, 1, 5, 6, 1]
    wounds = [0, 0]
    special_rules.before_blows(b, b.state.engagements, True, {1}, wounds)
    ev = [e for e in rules(b, "CORE.SR.IMPACT_HITS") if "hits" in e]
    assert ev[0]["hits"] == 6 and ev[0]["models"] == 3
    assert wounds == [0, 1] and spearmen.models == 19 and spearmen.flags["killed_this_round"] == 1
    boars.flags["charge_start_distance"] = 6.0
    b.dice._script = []
    special_rules.before_blows(b, b.state.engagements, True, {1}, wounds)
    assert rules(b, "CORE.SR.IMPACT_HITS")[-1]["too_close"]


def test_chariots_have_impact_hits_d6_and_swiftstride_and_monsters_are_large_targets() -> None:
    """CORE.TYPE.CHARIOT, CORE.TYPE.MONSTER, CORE.TYPE.CAVALRY, CORE.TYPE.FLYER, CORE.SR.SWIFTSTRIDE, CORE.SR.FLY."""
    assert special_rules.with_implied_rules("chariot", []) == ["impact_hits_d6", "swiftstride"]
    assert special_rules.with_implied_rules("chariot", ["impact_hits_3"]) == ["impact_hits_3", "swiftstride"]
    assert special_rules.with_implied_rules("monster", ["fly"]) == ["fly", "large_target", "swiftstride"]
    assert special_rules.with_implied_rules("cavalry", []) == ["swiftstride"]
    assert special_rules.with_implied_rules("infantry", ["hover"]) == ["hover", "swiftstride"]
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("boar_riders", 36, 30, 270, models=5, files=3), attacker=1)
    boars = b.unit(1)
    boars.special_rules.append("impact_hits_d6")
    boars.flags["charge_start_distance"] = 9.0
    b.dice._script = [2, 5, 1] + [1] * 8
    special_rules.before_blows(b, b.state.engagements, True, {1}, [0, 0])
    assert rules(b, "CORE.SR.IMPACT_HITS")[0]["hits"] == 8


def test_breath_weapon_in_combat_twice_per_game_once_per_turn() -> None:
    """CORE.SR.BREATH_WEAPON: 2D6 = 3 automatic S3 hits before the blows, wounds 4+ [4,4,1], saves 5+ [5,1]: 1 wound
    for the result; not again in the same player turn; at most twice per game."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    orcs = b.unit(1)
    orcs.special_rules.append("breath_weapon")
    b.dice._script = [1, 2, 4, 4, 1, 5, 1]
    wounds = [0, 0]
    special_rules.before_blows(b, b.state.engagements, False, set(), wounds)
    (ev,) = rules(b, "CORE.SR.BREATH_WEAPON")
    assert ev["hits"] == 3 and ev["target"] == 0 and wounds == [0, 1] and b.unit(0).models == 19
    special_rules.before_blows(b, b.state.engagements, False, set(), wounds)
    assert len(rules(b, "CORE.SR.BREATH_WEAPON")) == 1
    orcs.marks["breath_turn"] = "earlier"
    b.dice._script = [1, 1, 1, 1]
    special_rules.before_blows(b, b.state.engagements, False, set(), wounds)
    assert orcs.marks["breath_uses"] == 2
    orcs.marks["breath_turn"] = "earlier"
    special_rules.before_blows(b, b.state.engagements, False, set(), wounds)
    assert len(rules(b, "CORE.SR.BREATH_WEAPON")) == 2


def _breathing_giant(spearmen_y: float) -> Battle:
    """A hill giant with a breath weapon facing 20 spearmen in red's Shooting phase (its head at y = 29.016")."""
    b = battle([placement("marcher_spearmen", 36, spearmen_y, 90)], [placement("hill_giant", 36, 30, 270, models=1, files=1)],
               phase="movement", player="red")
    b.unit(1).special_rules.append("breath_weapon")
    while b.pending.kind != "shoot":
        b.apply(END_PHASE)
    return b


def test_breath_weapon_in_shooting_hits_wholly_under_and_partly_under_on_4_plus() -> None:
    """CORE.SR.BREATH_WEAPON (shooting): the teardrop from the giant's head covers spearman slot 2 wholly and slots
    0, 1, 3, 4 (rank 1) and 6, 7, 8 (rank 2) partly. Partly rolls [4,3,6,1,5,2,4] hit slots 0, 3, 6, 8: 1 + 4 = 5
    automatic hits at the giant's S6; to wound 2+ [2,1,6,6,6] = 4; S6 leaves the 5+ save at 8+: 4 spearmen die,
    fewer than the 5 of the front rank, so no Panic. The use is marked for this player turn (turn 1, red)."""
    b = _breathing_giant(20.6)
    giant, spearmen = b.unit(1), b.unit(0)
    act = Action("shoot", 1, 0, "breath")
    assert act in b.legal_actions()
    b.dice._script = [4, 3, 6, 1, 5, 2, 4] + [2, 1, 6, 6, 6]
    b.apply(act)
    (ev,) = [e for e in rules(b, "CORE.SR.BREATH_WEAPON") if e.get("form") == "shooting"]
    assert ev["wholly"] == [[0, 2]]
    assert ev["partly"] == [[0, 0], [0, 1], [0, 3], [0, 4], [0, 6], [0, 7], [0, 8]]
    assert ev["partly_hit"] == [[0, 0], [0, 3], [0, 6], [0, 8]]
    assert ev["hits"] == {"0": 5} and ev["strength"] == 6 and ev["uses"] == 1 and ev["rolls"] == [4, 3, 6, 1, 5, 2, 4]
    (wound,) = [e for e in rules(b, "CORE.SHOOT.TO_WOUND") if e.get("source") == "CORE.SR.BREATH_WEAPON"]
    assert (wound["hits"], wound["needed"], wound["wounds"]) == (5, 2, 4)
    assert spearmen.models == 16 and not rules(b, "CORE.PSY.PANIC.TRIGGER_CASUALTIES")
    assert giant.marks["breath_uses"] == 1 and giant.marks["breath_turn"] == "1:1"


def test_breath_weapon_in_shooting_needs_a_model_under_the_template_and_a_use_left() -> None:
    """CORE.SR.BREATH_WEAPON: the 8" teardrop does not reach spearmen 9" away; a giant that breathed twice this game
    (or once this player turn, e.g. in combat) may not breathe; partly under only [1,2,3] on 4+ rolls [6,3,4]: 2 hits."""
    b = _breathing_giant(20.0)
    giant = b.unit(1)
    b.unit(0).y = 16.0
    b._legal_cache = None
    assert not breath.reaches(giant, b.unit(0)) and Action("shoot", 1, 0, "breath") not in b.legal_actions()
    b.unit(0).y = 20.0
    giant.marks["breath_uses"] = 2
    b._legal_cache = None
    assert Action("shoot", 1, 0, "breath") not in b.legal_actions()
    giant.marks["breath_uses"], giant.marks["breath_turn"] = 1, f"{b.state.turn}:{b.state.active}"
    b._legal_cache = None
    assert Action("shoot", 1, 0, "breath") not in b.legal_actions()
    giant.marks["breath_turn"] = "earlier"
    b._legal_cache = None
    b.dice._script = [6, 3, 4] + [1, 1]
    b.apply(Action("shoot", 1, 0, "breath"))
    ev = rules(b, "CORE.SR.BREATH_WEAPON")[-1]
    assert ev["wholly"] == [] and ev["partly"] == [[0, 1], [0, 2], [0, 3]] and ev["hits"] == {"0": 2}
    assert ev["uses"] == 2 and b.unit(0).models == 20


def test_breath_weapon_is_its_own_block_of_the_action_codec() -> None:
    """CORE.SR.BREATH_WEAPON: the breath (shoot option "breath") of own slot 0 at enemy slot 0 is index
    L.breathe + 0, decodes back, and the mask allows exactly it and end_phase."""
    from battleline.env.encoding import ActionCodec

    b = _breathing_giant(20.6)
    codec = ActionCodec(10)
    act = Action("shoot", 1, 0, "breath")
    index = codec.encode(act, b, 1)
    assert index == codec.layout.breathe and codec.block_of(index) == "breathe"
    assert codec.decode(index, b, 1) == act and codec.describe(index) == "breathe own 0 -> enemy 0"
    assert sorted(int(i) for i in codec.mask(b, 1).nonzero()[0]) == [0, index]


# --------------------------------------------------------------------- shooting rules
def _shooters(target: str = "orc_warriors", gap: float = 10.0, **kw: object) -> Battle:
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement(target, 36, 10 + 2 * INFANTRY_BASE / 2 + gap + DEPTH4 / 2, 270, **kw)]
    return battle(blue, red, phase="shooting")


def test_multiple_shots_three_shots_each_at_minus_one() -> None:
    """CORE.SR.MULTIPLE_SHOTS ×3: 10 crossbowmen fire 30 shots at −1 (to hit 5+ at short range)."""
    b = _shooters()
    b.unit(0).special_rules.append("multiple_shots_3")
    b.dice._script = []
    shooting.resolve_fire(b, b.unit(0), b.unit(1))
    (hit,) = rules(b, "CORE.SHOOT.TO_HIT")
    assert hit["shots"] == 30 and hit["needed"] == 5
    assert rules(b, "CORE.SR.MULTIPLE_SHOTS")[0]["shots_per_model"] == 3


def test_sniper_picks_out_the_champion() -> None:
    """CORE.SR.SNIPER: one kill (hit [4], wound [4], save 6+ [1]) takes the orcs' champion first."""
    b = _shooters(command=["champion"])
    b.unit(0).special_rules.append("sniper")
    b.dice._script = [4] + [1] * 9 + [4, 1]
    shooting.resolve_fire(b, b.unit(0), b.unit(1))
    orcs = b.unit(1)
    assert orcs.models == 19 and not orcs.champion and rules(b, "CORE.SR.SNIPER")


def test_sniper_ignores_the_single_model_penalty_and_large_target_is_easier_to_hit() -> None:
    """CORE.SR.SNIPER, CORE.SR.LARGE_TARGET, CORE.SHOOT.MODIFIERS: a lone model is −1 except for a Sniper; +1 for LT."""
    b = _shooters("orc_big_boss", models=1, files=1)
    u, t = b.unit(0), b.unit(1)
    assert shooting.to_hit_modifier(b, u, t, False, False)[1] == {"single_model": -1}
    u.special_rules.append("sniper")
    assert shooting.to_hit_modifier(b, u, t, False, False)[1] == {}
    t.special_rules.append("large_target")
    assert shooting.to_hit_modifier(b, u, t, False, False)[1] == {"large_target": 1}


def test_poisoned_shots_wound_on_a_six_to_hit() -> None:
    """CORE.SR.POISON (shooting): 10 crossbow shots [6, 1×9]: the 6 wounds automatically, with no armour save."""
    b = _shooters()
    b.unit(0).special_rules.append("poison")
    b.dice._script = [6] + [1] * 9
    assert shooting.resolve_fire(b, b.unit(0), b.unit(1)) == 1


def test_volley_fire_quick_to_fire_fast_cavalry_and_slow_to_fire() -> None:
    """CORE.SR.VOLLEY_FIRE: 20 models 5 wide: ranks 1–2 (10) shoot, plus half of the 10 behind (5).
    CORE.SR.QUICK_TO_FIRE / CORE.SR.FAST_CAVALRY: no −1 for moving. CORE.SR.SLOW_TO_FIRE: no Stand and Shoot."""
    from battleline.env.rules.charges import can_stand_and_shoot

    b = _shooters()
    u, t = b.unit(0), b.unit(1)
    u.models, u.special_rules = 20, ["volley_fire"]
    assert shooting.shooters(u) == (10, 5)
    u.models = 10
    u.flags["moved"] = True
    assert shooting.to_hit_modifier(b, u, t, False, False)[1] == {"moved": -1}
    for rule in ("quick_to_fire", "fast_cavalry"):
        u.special_rules = [rule]
        assert shooting.to_hit_modifier(b, u, t, False, False)[1] == {}
    u.missile = "bow"
    u.special_rules = []
    assert can_stand_and_shoot(b, u, t, 10.0)
    u.special_rules = ["slow_to_fire"]
    assert not can_stand_and_shoot(b, u, t, 10.0)


# --------------------------------------------------------------------- movement: Fly, Hover, Vanguard, Skirmishers
def test_flyers_move_10_inches_over_units_and_charge_at_m10_from_16_inches() -> None:
    """CORE.MOVE.FLY, CORE.SR.FLY, CORE.SR.HOVER: a flying unit advances 10" over a friend in its path (20"
    marching; Hover never marches); on foot it stops behind it. CORE.CHARGE.RANGE / CORE.CHARGE.ELIGIBLE: flyers charge at M10 from up to 16"."""
    blue = [placement("marcher_spearmen", 36, 10, 90), placement("marcher_crossbowmen", 36, 10 + DEPTH4 / 2 + 1.5 + INFANTRY_BASE, 90, models=10)]
    red = [placement("orc_warriors", 36, 44, 270)]
    walker, b, hover = (battle(blue, red, phase="movement") for _ in range(3))
    b.unit(0).special_rules.append("fly")
    hover.unit(0).special_rules.append("hover")
    for x in (walker, b, hover):
        end_declarations(x)
        x._legal_cache = None  # the rules were added after the options were cached
        x.__dict__.pop("_move_cache", None)
    assert special_rules.move_allowance(b.unit(0)) == 10.0
    assert Action("move", 0, None, "march") in b.legal_actions()
    b.apply(Action("move", 0, None, "advance"))
    assert b.unit(0).y == pytest.approx(20.0)
    walker.apply(Action("move", 0, None, "advance"))
    assert walker.unit(0).y < 11.0
    options = {a.option for a in hover.legal_actions() if a.unit == 0}
    assert "advance" in options and "march" not in options
    c = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 10 + DEPTH4 + 5, 270)])
    assert c.pending.kind == "charge"
    c.unit(0).special_rules.append("fly")
    c.unit(1).y += 10.5  # now 15.5" away
    c._legal_cache = None
    assert charge_reach(c.unit(0)) == 16.0 and Action("charge", 0, 1) in c.legal_actions()
    c.dice._script = [2, 6]
    c.apply(Action("charge", 0, 1))
    c.apply(Action("react", 1, 0, "hold"))
    end_declarations(c)
    (rng,) = rules(c, "CORE.CHARGE.RANGE")
    assert rng["range"] == 16 and rng["success"]


def _vanguard(blue: list[dict], red: list[dict], finished_first: int) -> Battle:
    """A battle put back to the end of deployment, then the Vanguard moves opened (CORE.SETUP.VANGUARD)."""
    b = battle(blue, red, phase="movement")
    s = b.state
    s.turn, s.phase = 0, "deployment"
    s.queue["finished_first"] = finished_first
    for u in s.units:
        u.flags = {}
    assert deployment._start_vanguard(b)
    b.events.clear()
    return b


def test_vanguard_moves_alternate_and_end_more_than_12_inches_from_enemies() -> None:
    """CORE.SETUP.VANGUARD, CORE.SR.FAST_CAVALRY, CORE.TYPE.FAST_CAVALRY: red finished deploying first, so its wolf
    riders move first; blue outriders 20" from the orcs may advance only 8" (to stay 12" away); then turn 1."""
    out_y = 6.0
    orc_front = out_y + CAV_DEPTH / 2 + 20.0
    blue = [placement("marcher_outriders", 20, out_y, 90, models=5, files=5), placement("marcher_spearmen", 60, 6, 90)]
    red = [placement("orc_warriors", 20, orc_front + DEPTH4 / 2, 270), placement("wolf_riders", 60, 44, 270, models=5, files=5)]
    b = _vanguard(blue, red, finished_first=1)
    assert b.pending.player == 1 and b.pending.kind == "move"
    assert {a.unit for a in b.legal_actions() if a.kind == "move"} == {3}
    b.apply(Action("move", 3, None, "advance_half"))
    assert b.pending.player == 0 and b.unit(3).y == pytest.approx(44 - 6.0)  # half of 12"
    assert Action("move", 0, None, "march") not in b.legal_actions()
    b.dice._script = [6, 1]
    b.apply(Action("move", 0, None, "advance"))
    (ev,) = [e for e in rules(b, "CORE.SETUP.VANGUARD") if e.get("unit") == 0]
    assert ev["distance"] == pytest.approx(8.0, abs=0.02)
    assert space.unit_distance(b.unit(0), b.unit(2)) > 12.0
    assert rules(b, "CORE.SETUP.FIRST_TURN") and b.state.turn == 1


def test_skirmishers_loose_order_no_rank_bonus_charged_in_front() -> None:
    """CORE.TYPE.SKIRMISHERS: a pitch of base + 1", no rank bonus, −1 to be hit, always charged in the front."""
    b = _fight(placement("free_company_archers", 36, 10, 90, models=12, files=4), placement("orc_warriors", 36, 30, 270), attacker=1)
    archers, orcs = b.unit(0), b.unit(1)
    assert archers.has("skirmishers") and archers.base_w == pytest.approx(INFANTRY_BASE + 1.0)
    assert archers.width == pytest.approx(4 * (INFANTRY_BASE + 1.0))
    _, parts = combat.combat_result(b, {0: [0], 1: [1]}, [0, 0], None, b.state.engagements)
    assert "ranks" not in parts[0] and parts[1]["ranks"] == 3
    orcs.missile = "bow"
    assert shooting.to_hit_modifier(b, orcs, archers, False, False)[1]["skirmishers"] == -1
    from battleline.env.rules.charges import charge_facing

    orcs.x, orcs.y, orcs.facing = archers.x - 12, archers.y, 0.0  # off the archers' left flank
    assert charge_facing(b, orcs, archers, roll=True) == "front"


# --------------------------------------------------------------------- troop types, healing
def test_unit_strength_per_troop_type() -> None:
    """CORE.SR.UNIT_STRENGTH, CORE.TYPE.INFANTRY, CORE.TYPE.MONSTROUS_INFANTRY, CORE.TYPE.CAVALRY, CORE.TYPE.MONSTER:
    US 1, 3, 2 per model; a monster counts its starting W; CORE.GEO.BASES."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    spearmen, trolls = b.unit(0), b.unit(1)
    assert spearmen.unit_strength == 20 and trolls.unit_strength == 9
    assert trolls.base_w == pytest.approx(TROLL)
    trolls.troop_type, trolls.models, trolls.wounds_taken = "monster", 1, 2
    assert trolls.unit_strength == 3
    trolls.troop_type = "chariot"
    assert trolls.unit_strength == 4
    knights = battle([placement("order_knights", 36, 10, 90, models=5, files=5)], [placement("orc_warriors", 36, 40, 270)]).unit(0)
    assert knights.unit_strength == 10 and knights.armour_save == 1  # plate 4+, shield, mount, barding


def test_regeneration_heals_a_wound_of_a_model_idle_all_turn() -> None:
    """CORE.SR.REGENERATION: at the end of its turn an idle wounded troll rolls 4+ ([4]) and regains 1 W."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    b.state.engagements = []
    trolls = b.unit(1)
    trolls.wounds_taken = 2
    b.state.active = 1
    b.dice._script = [4]
    special_rules.end_of_player_turn(b)
    assert trolls.wounds_taken == 1 and rules(b, "CORE.SR.REGENERATION")[0]["healed"]
    trolls.flags["moved"] = True
    special_rules.end_of_player_turn(b)
    assert trolls.wounds_taken == 1


def test_scouts_deploy_more_than_12_inches_from_enemies() -> None:
    """CORE.SR.SCOUTS, CORE.SETUP.SCOUTS: a Scout slot is legal anywhere on the table more than 12" from every
    enemy, and never within 12"; other units stay in their zone."""
    from battleline.env.rules import geometry as geo

    blue = [placement("free_company_archers", 36, 6, 90, models=10, files=5), placement("marcher_spearmen", 12, 6, 90)]
    red = [placement("orc_warriors", 36, 32, 270)]
    b = battle(blue, red, phase="movement")
    scouts, spearmen = b.unit(0), b.unit(1)
    scouts.deployed = spearmen.deployed = False
    orcs = space.footprint(b.unit(2))
    legal = [k for k in range(deployment.N_SLOTS) if deployment._slot_legal(b, scouts, k)]
    beyond = [k for k in legal if k // len(deployment.COLUMNS) >= deployment.ZONE_ROWS]
    assert beyond, "scouts may deploy outside the zone"
    near = 0
    for k in range(deployment.N_SLOTS):
        gap = geo.distance(space.footprint_at(scouts, deployment.slot_pose(b, scouts, k)), orcs)
        assert (gap > 12.0) or k not in legal
        near += gap <= 12.0
    assert near
    assert all(k // len(deployment.COLUMNS) < deployment.ZONE_ROWS for k in range(deployment.N_SLOTS)
               if deployment._slot_legal(b, spearmen, k))


def test_extra_attack_and_extra_rank() -> None:
    """CORE.SR.EXTRA_ATTACK: +1 A; CORE.SR.EXTRA_RANK: rank 3 supports too (5 + 5 behind 5 fighters)."""
    b = _fight(placement("marcher_halberdiers", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    u = b.unit(0)
    st = combat.Strike(0, 1, 5, 0, True, 3)
    assert combat._attacks(b, u, st, False, False, set()) == 5
    u.special_rules.append("extra_attack")
    assert combat._attacks(b, u, st, False, False, set()) == 10
    assert combat.supporters(b, u, 5, charged=True) == 5
    u.special_rules.append("extra_rank")
    assert combat.supporters(b, u, 5, charged=True) == 10


def test_immune_to_psychology_takes_no_panic_test() -> None:
    """CORE.SR.ITP, CORE.SR.STUPIDITY, CORE.PSY.PANIC.EXEMPT: ItP and Stupid units do not test for Panic."""
    for rule in ("immune_to_psychology", "stupidity"):
        b = _shooters()
        t = b.unit(1)
        t.special_rules.append(rule)
        b.dice._script = []
        psychology.panic_test(b, t, (36.0, 10.0), "CORE.PSY.PANIC.TRIGGER_DESTROYED")
        assert rules(b, "CORE.PSY.PANIC.EXEMPT") and not rules(b, "CORE.PSY.PANIC.TEST")


def test_fear_lasts_for_that_combat_only() -> None:
    """CORE.PSY.FEAR: WS 1 "for that combat": the mark goes once the unit is no longer engaged."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("cave_trolls", 36, 30, 270, models=3, files=3))
    spearmen = b.unit(0)
    spearmen.marks["afraid_of"] = [1]
    psychology.forget_fear(b)
    assert psychology.combat_ws(b, spearmen) == 1
    b.state.engagements = []
    psychology.forget_fear(b)
    assert "afraid_of" not in spearmen.marks and psychology.combat_ws(b, spearmen) == 3


def test_chariots_never_march_and_dwarfs_hate_orcs() -> None:
    """CORE.TYPE.CHARIOT: no march; CORE.SR.HATRED: the dwarf clan warriors' profile lists greenskins as hated."""
    from battleline.env.rules import movement
    from battleline.env.rules.config import load_faction

    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    u, orcs = b.unit(0), b.unit(1)
    assert movement.may_march(u)
    u.troop_type = "chariot"
    assert not movement.may_march(u)
    u.special_rules = list(load_faction("dwarfs").unit("clan_warriors").special_rules)
    assert special_rules.hates(u, orcs)
    orcs.faction = "elves"
    assert not special_rules.hates(u, orcs)


def test_aquatic_units_treat_water_as_open_ground() -> None:
    """CORE.SR.AQUATIC: a marsh ahead halves a normal unit's advance; an Aquatic unit crosses it at full M and may
    enter a lake (impassable to others), but never marches (CORE.MOVE.MARCH)."""
    from battleline.env.rules import movement

    marsh = {"kind": "marsh", "polygon": [[30, 13], [42, 13], [42, 20], [30, 20]]}
    blue = [placement("marcher_spearmen", 36, 10, 90)]
    red = [placement("orc_warriors", 36, 44, 270)]
    walker, swimmer = (battle(blue, red, phase="movement", terrain=[marsh]) for _ in range(2))
    swimmer.unit(0).special_rules.append("aquatic")
    assert movement.furthest_legal(walker, walker.unit(0), space.pose(walker.unit(0)), 4.0) == pytest.approx(2.0, abs=0.02)
    assert movement.furthest_legal(swimmer, swimmer.unit(0), space.pose(swimmer.unit(0)), 4.0) == pytest.approx(4.0)
    assert not movement.may_march(swimmer.unit(0))
    lake = {"kind": "lake", "polygon": [[30, 13], [42, 13], [42, 20], [30, 20]]}
    b = battle(blue, red, phase="movement", terrain=[lake])
    b.unit(0).special_rules.append("aquatic")
    assert movement.furthest_legal(b, b.unit(0), space.pose(b.unit(0)), 4.0) == pytest.approx(4.0)


def test_a_joined_character_without_fast_cavalry_cancels_vanguard_and_fire_on_the_move() -> None:
    """CORE.SR.FAST_CAVALRY: an Order Captain (no Fast Cavalry) joined to outriders takes away their Vanguard move
    and their freedom from the −1 for moving; a Fast Cavalry character would not."""
    blue = [placement("marcher_outriders", 20, 6, 90, models=5, files=5),
            placement("order_captain", 0, 0, 90, models=1, files=1, joins=0)]
    red = [placement("orc_warriors", 20, 40, 270)]
    b = battle(blue, red, phase="shooting")
    outriders, captain, orcs = b.unit(0), b.unit(1), b.unit(2)
    assert outriders.joined == [1] and captain.joined_to == 0
    assert not special_rules.fast_cavalry(b.state, outriders)
    assert deployment._vanguard_units(b, 0) == []
    outriders.flags["moved"] = True
    outriders.missile = "bow"  # pistols are Quick to Fire anyway
    assert shooting.to_hit_modifier(b, outriders, orcs, False, False)[1]["moved"] == -1
    captain.special_rules.append("fast_cavalry")
    assert special_rules.fast_cavalry(b.state, outriders)
    assert deployment._vanguard_units(b, 0) == [outriders]
    assert "moved" not in shooting.to_hit_modifier(b, outriders, orcs, False, False)[1]
