"""Exact-value pins of core rules that fire in play but no other test names."""

from __future__ import annotations

import pytest

from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

DEPTH4 = 4 * INFANTRY_BASE


def _held_head_on_charge() -> tuple[Battle, tuple[float, float, float]]:
    """Blue spearmen (M4) charge orcs 9" ahead, head-on; dice 1, 5 reach 9"; the orcs hold."""
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("orc_warriors", 36, 18 + DEPTH4 + 9.0, 270)]
    b = battle(blue, red, dice=[1, 5])
    t = b.unit(1)
    before = (t.x, t.y, t.facing)
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    return b, before


def test_hold_leaves_the_target_in_place_and_the_charger_closes_the_door_and_aligns() -> None:
    """CORE.REACT.HOLD, CORE.CHARGE.CLOSE_DOOR, CORE.CHARGE.ALIGN, CORE.CHARGE.RESOLVE.

    Hold has no effect: the orcs stay where they were. The head-on charger is
    already flush (close-the-door pivot 0°) and needs no slide (0"); the whole
    5-file front (5 × 20 mm) is in contact. One charge is resolved.
    """
    b, before = _held_head_on_charge()
    (hold,) = rules(b, "CORE.REACT.HOLD")
    assert hold["unit"] == 1 and hold["charger"] == 0
    t = b.unit(1)
    assert (t.x, t.y, t.facing) == pytest.approx(before)
    (door,) = rules(b, "CORE.CHARGE.CLOSE_DOOR")
    assert door["unit"] == 0 and door["target"] == 1 and door["pivot"] == pytest.approx(0.0)
    (align,) = rules(b, "CORE.CHARGE.ALIGN")
    assert align["slide"] == pytest.approx(0.0)
    assert align["overlap"] == pytest.approx(5 * INFANTRY_BASE)
    assert (align["x"], align["y"], align["facing"]) == pytest.approx((36.0, 18.0 + 9.0, 90.0))
    # flush: the charger's front edge meets the orcs' front edge
    assert align["y"] + DEPTH4 / 2 == pytest.approx(t.y - DEPTH4 / 2)
    (resolve,) = rules(b, "CORE.CHARGE.RESOLVE")
    assert resolve["player"] == 0 and resolve["charges"] == 1


def test_turn_phases_movement_steps_and_combat_round_come_in_rule_order() -> None:
    """CORE.GAME.PHASES, CORE.MOVE.SEQUENCE, CORE.MOVE.COMPULSORY, CORE.CC.ROUNDS, CORE.CC.SEQUENCE.

    Phases run movement → magic → shooting → combat; within movement the
    charges are declared, rolled and resolved before compulsory moves, which
    come before the remaining moves; the combat phase fights its one combat,
    round one, with blue (side 0) as the charging side.
    """
    b, _ = _held_head_on_charge()
    phases = [e["phase_started"] for e in rules(b, "CORE.GAME.PHASES")]
    assert phases == ["movement", "magic", "shooting", "combat"]
    order = [
        e["rule"]
        for e in b.events
        if e.get("kind") != "dice"
        and e["rule"]
        in {"CORE.MOVE.SEQUENCE", "CORE.CHARGE.DECLARE", "CORE.CHARGE.RANGE", "CORE.CHARGE.RESOLVE", "CORE.MOVE.COMPULSORY", "CORE.MOVE.REMAINING"}
    ]
    assert order == [
        "CORE.MOVE.SEQUENCE",
        "CORE.CHARGE.DECLARE",
        "CORE.CHARGE.RANGE",
        "CORE.CHARGE.RESOLVE",
        "CORE.MOVE.COMPULSORY",
        "CORE.MOVE.REMAINING",
    ]
    (step,) = rules(b, "CORE.MOVE.SEQUENCE")
    assert step["step"] == "charges" and step["player"] == 0
    (rounds,) = rules(b, "CORE.CC.ROUNDS")
    assert rounds["player"] == 0 and rounds["combats"] == 1
    (seq,) = rules(b, "CORE.CC.SEQUENCE")
    assert sorted(seq["units"]) == [0, 1] and seq["round_one"] is True and seq["charging_side"] == 0


def test_stand_and_shoot_fires_at_minus_one_and_removes_casualties() -> None:
    """CORE.REACT.STAND_SHOOT, CORE.SHOOT.CASUALTIES: 10 orc archers (BS3) stand and shoot at spearmen 8" away.

    To hit 4+ at −1 for Stand and Shoot = 5+: faces 6, 5 hit (2 hits). S3 v T3 wounds on 4+:
    faces 4, 3 give 1 wound; light armour + shield (5+) fails on a 2: one spearman is removed (20 → 19).
    """
    blue = [placement("marcher_spearmen", 36, 10, 90)]
    red = [placement("orc_archers", 36, 10 + DEPTH4 / 2 + 8.0 + INFANTRY_BASE, 270, models=10)]
    hits = [6, 5, 4, 4, 4, 4, 4, 4, 4, 1]
    b = battle(blue, red, dice=hits + [4, 3] + [2] + [6, 5])
    b.apply(Action("charge", 0, 1))
    assert Action("react", 1, 0, "stand_and_shoot") in b.legal_actions()
    b.apply(Action("react", 1, 0, "stand_and_shoot"))
    declared, to_hit = rules(b, "CORE.REACT.STAND_SHOOT")
    assert declared == {**declared, "unit": 1, "charger": 0}
    assert to_hit["shots"] == 10 and to_hit["needed"] == 5 and to_hit["hits"] == 2
    (mods,) = rules(b, "CORE.SHOOT.MODIFIERS")
    assert mods["parts"] == {"stand_and_shoot": -1}
    (wound,) = rules(b, "CORE.SHOOT.TO_WOUND")
    assert wound["needed"] == 4 and wound["wounds"] == 1
    (dead,) = [e for e in rules(b, "CORE.CC.CASUALTIES") if e["cause"] == "CORE.SHOOT.CASUALTIES"]
    assert dead["unit"] == 0 and dead["killed"] == 1 and dead["models"] == 19 and dead["shooter"] == 1


def test_turn_rotates_about_the_centre_for_a_quarter_move_and_swaps_files_and_ranks() -> None:
    """CORE.MOVE.TURN: a 5×4 block (M4) turns left 90° for 1" (M/4): 4 files wide, then 3" on."""
    b = battle([placement("marcher_spearmen", 30, 10, 90)], [placement("orc_warriors", 36, 40, 270)])
    end_declarations(b)
    u = b.unit(0)
    assert (u.files, u.ranks) == (5, 4)
    b.apply(Action("move", 0, None, "turn_left"))
    (turn,) = rules(b, "CORE.MOVE.TURN")
    assert turn["facing"] == pytest.approx(180.0) and turn["files"] == 4 == u.files
    assert u.ranks == 5
    # the rest of the move (4 − 1 = 3") goes straight ahead, now towards −x
    assert (u.x, u.y) == pytest.approx((30.0 - 3.0, 10.0))
    assert turn["distance"] == pytest.approx(1.0 + 3.0)


def test_reform_keeps_the_centre_changes_the_files_and_uses_the_whole_move() -> None:
    """CORE.MOVE.REFORM: 20 models 5 wide reform 7 wide (3 ranks) about the centre; no further move."""
    b = battle([placement("marcher_spearmen", 30, 10, 90)], [placement("orc_warriors", 36, 40, 270)])
    end_declarations(b)
    b.apply(Action("move", 0, None, "reform_wide"))
    u = b.unit(0)
    (reform,) = rules(b, "CORE.MOVE.REFORM")
    assert reform["files"] == 7 == u.files and u.ranks == 3
    assert (u.x, u.y, u.facing) == pytest.approx((30.0, 10.0, 90.0))
    assert not [a for a in b.legal_actions() if a.kind == "move" and a.unit == 0]


def test_dangerous_terrain_wounds_on_each_1_without_armour_saves() -> None:
    """CORE.TERRAIN.DANGEROUS: 20 orcs (light armour, shields) roll a D6 each: three 1s, three dead, no save."""
    from battleline.env.rules import psychology

    b = battle([placement("marcher_spearmen", 30, 10, 90)], [placement("orc_warriors", 36, 40, 270)], dice=[1, 1, 1] + [4] * 17)
    n = len(b.events)
    psychology._dangerous_terrain(b, b.unit(1))
    (ev,) = rules(b, "CORE.TERRAIN.DANGEROUS")
    assert ev["unit"] == 1 and ev["wounds"] == 3
    assert b.unit(1).models == 17
    assert not [e for e in b.events[n:] if e["rule"].startswith("CORE.SAVE")]


def _broken_orcs(friend_gap: float | None = None, behind_at: float | None = None) -> Battle:
    """Blue spearmen in the front of 10 orcs (5×2), the orcs broken; optionally a second orc unit ``friend_gap``" to
    their side, or one at y = ``behind_at`` in the path of a pursuit."""
    from battleline.env.rules.charges import contact_placement
    from battleline.env.rules.state import Engagement

    red = [placement("orc_warriors", 36, 30, 90, models=10)]
    if friend_gap is not None:
        red.append(placement("orc_warriors", 36 + 5 * INFANTRY_BASE + friend_gap, 30, 90, models=10))
    if behind_at is not None:
        red.append(placement("orc_warriors", 36, behind_at, 90, models=10))
    b = battle([placement("marcher_spearmen", 36, 10, 90)], red, phase="combat")
    a, d = b.unit(0), b.unit(1)
    pose, _, _ = contact_placement(b, a, d, "front", route=False)  # put in contact, not charged there
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 1, "front", charged=True, turn=b.state.turn)]
    b.events.clear()
    return b


@pytest.mark.parametrize(
    ("faces", "passed", "choice", "destroyed"),
    [
        ([5, 4, 2, 3, 3, 3], False, "pursue", True),  # Ld 7: 9 fails, pursues anyway; 6 ≥ flee 5 catches
        ([1, 2, 2, 3], True, "hold", False),  # Ld 7: 3 passes, holds; the orcs flee 5" unpursued
    ],
)
def test_a_winner_that_declines_to_pursue_must_pass_leadership(faces: list[int], passed: bool, choice: str, destroyed: bool) -> None:
    """CORE.CC.PURSUE_CHOICE: declining to pursue needs a passed Ld test (2D6 ≤ 7), else the unit pursues anyway."""
    from battleline.env.rules import combat

    b = _broken_orcs()
    b.state.queue["pursuit"] = {"broken": [1], "ask": [0], "answers": {}, "winner": 0}
    b.dice._script = list(faces)
    combat.apply_pursuit(b, Action("pursue", 0, 1, "hold"))
    test, decided = rules(b, "CORE.CC.PURSUE_CHOICE")
    assert test["ld"] == 7 and test["roll"] == faces[0] + faces[1] and test["passed"] is passed and test["declined"]
    assert decided["unit"] == 0 and decided["choice"] == choice
    assert b.unit(1).removed is destroyed
    assert bool(rules(b, "CORE.CC.PURSUIT_MOVE")) is (choice == "pursue")


@pytest.mark.parametrize(("gap", "tests"), [(3.0, True), (6.5, False)])
def test_a_friend_breaking_within_6_inches_causes_a_panic_test(gap: float, tests: bool) -> None:
    """CORE.PSY.PANIC.TRIGGER_BREAK: orcs 3" beside the broken unit test Panic (2D6 = 3 ≤ Ld 7, passed); 6.5" away, none."""
    from battleline.env.rules import combat

    b = _broken_orcs(friend_gap=gap)
    b.state.queue["pursuit"] = {"broken": [1], "ask": [], "answers": {"0": "hold"}, "winner": 0}
    b.dice._script = [2, 3, 1, 2]
    combat._flee_and_pursue(b)
    (flee,) = rules(b, "CORE.CC.FLEE")
    assert flee["unit"] == 1 and flee["roll"] == 5
    triggers = rules(b, "CORE.PSY.PANIC.TRIGGER_BREAK")
    panics = rules(b, "CORE.PSY.PANIC.TEST")
    if tests:
        assert [(t["unit"], t["source"]) for t in triggers] == [(2, 1)]
        (panic,) = panics
        assert panic["unit"] == 2 and panic["roll"] == 3 and panic["passed"] and panic["trigger"] == "CORE.PSY.PANIC.TRIGGER_BREAK"
        assert not b.unit(2).fleeing
    else:
        assert triggers == [] and panics == []


def test_a_game_is_six_turns_of_blue_then_red_on_a_72_by_48_table() -> None:
    """CORE.CONV.TABLE, CORE.GAME.LENGTH, CORE.START.SEQUENCE: two idle armies play out 6 game turns.

    Each game turn is blue's player turn then red's, each opening with the
    start sequence; the game ends after turn 6 (by turns, a draw on 0 VP).
    """
    b = battle([placement("marcher_spearmen", 36, 6, 90)], [placement("orc_warriors", 36, 42, 270)], phase="start")
    (table,) = rules(b, "CORE.CONV.TABLE")
    assert (table["width"], table["height"]) == (72.0, 48.0) == (b.state.table_w, b.state.table_h)
    for _ in range(200):
        if b.state.over:
            break
        legal = b.legal_actions()
        b.apply(next((a for a in legal if a.kind == "end_phase"), legal[0]))
    assert b.state.over
    turns = [(e["turn"], e["player"]) for e in rules(b, "CORE.START.SEQUENCE")]
    assert turns == [(t, p) for t in range(1, 7) for p in (0, 1)]
    assert all(e["phase"] == "start" for e in rules(b, "CORE.START.SEQUENCE"))
    lengths = rules(b, "CORE.GAME.LENGTH")
    assert lengths and all(e["max_turns"] == 6 for e in lengths)
    assert [(e["turn"], e["player"]) for e in lengths] == turns[-len(lengths):]  # the battle opens inside blue's turn 1
    (end,) = rules(b, "CORE.GAME.END")
    assert end["turn"] == 6 and end["reason"] == "turns" and end["winner"] == "draw"


def test_an_engaged_unit_may_only_hold() -> None:
    """CORE.REACT.ENGAGED: orcs already fighting spearmen, charged in the flank by halberdiers, can only Hold."""
    from battleline.env.rules.charges import contact_placement
    from battleline.env.rules.state import Engagement

    blue = [placement("marcher_spearmen", 36, 10, 90), placement("marcher_halberdiers", 36 - 5 * INFANTRY_BASE / 2 - 6 - 2 * INFANTRY_BASE, 30, 0)]
    b = battle(blue, [placement("orc_warriors", 36, 30, 90, models=10)], dice=[3, 4])
    a, d = b.unit(0), b.unit(2)
    pose, _, _ = contact_placement(b, a, d, "front")
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 2, "front", charged=True, turn=b.state.turn)]
    before = (d.x, d.y, d.facing)
    b.apply(Action("charge", 1, 2))
    assert [x for x in b.legal_actions() if x.kind == "react"] == [Action("react", 2, 1, "hold")]
    b.apply(Action("react", 2, 1, "hold"))
    (engaged,) = rules(b, "CORE.REACT.ENGAGED")
    assert engaged["unit"] == 2 and engaged["charger"] == 1
    assert rules(b, "CORE.REACT.HOLD") == []
    assert (d.x, d.y, d.facing) == pytest.approx(before)


def test_a_fleeing_unit_that_is_charged_must_flee_again() -> None:
    """CORE.REACT.ALREADY_FLEEING: charged fleeing orcs may only Flee!; 2D6 = 5 takes them 5" further away."""
    b = battle([placement("marcher_spearmen", 36, 18, 90)], [placement("orc_warriors", 36, 18 + DEPTH4 + 6, 270)], dice=[2, 3])
    t = b.unit(1)
    t.fleeing, t.facing = True, 90.0
    y0 = t.y
    b.apply(Action("charge", 0, 1))
    assert [x for x in b.legal_actions() if x.kind == "react"] == [Action("react", 1, 0, "flee")]
    b.apply(Action("react", 1, 0, "flee"))
    (again,) = rules(b, "CORE.REACT.ALREADY_FLEEING")
    assert again["unit"] == 1 and again["charger"] == 0
    (flee,) = rules(b, "CORE.REACT.FLEE")
    assert flee["roll"] == 5 and flee["distance"] == pytest.approx(5.0)
    assert t.y == pytest.approx(y0 + 5.0)


def test_after_flee_every_later_reaction_is_flee_with_no_second_move() -> None:
    """CORE.REACT.FLEE_FINAL: orcs flee the first charge (2D6 = 5); charged again, they must Flee! but do not move."""
    blue = [placement("marcher_spearmen", 30, 18, 90), placement("marcher_halberdiers", 42, 18, 90)]
    b = battle(blue, [placement("orc_warriors", 36, 18 + DEPTH4 + 6, 270)], dice=[2, 3])
    b.apply(Action("charge", 0, 2))
    b.apply(Action("react", 2, 0, "flee"))
    b.apply(Action("charge", 1, 2))
    assert [x for x in b.legal_actions() if x.kind == "react"] == [Action("react", 2, 1, "flee")]
    b.apply(Action("react", 2, 1, "flee"))
    (final,) = rules(b, "CORE.REACT.FLEE_FINAL")
    assert final["unit"] == 2 and final["charger"] == 1
    (flee,) = rules(b, "CORE.REACT.FLEE")  # only the first Flee! moves
    assert flee["unit"] == 2 and flee["roll"] == 5
    (move,) = rules(b, "CORE.PSY.FLEE.MOVE")
    assert move["distance"] == pytest.approx(5.0)


def test_a_war_machine_never_charges_marches_or_stands_and_shoots_and_is_charged_in_its_front() -> None:
    """CORE.TYPE.WAR_MACHINE: a cannon facing +x, charged by orcs from its left side, may only Hold;
    the contact counts as its front (no flank bonus); on its own turn it has no charge and no march."""
    from battleline.env.rules.actions import END_PHASE
    from tests.test_war_machines import MUZZLE_Y, block, machine
    from tests.test_war_machines import battle as wm_battle

    b = wm_battle([machine("great_cannon", facing=0.0)], [block("orc_warriors", MUZZLE_Y + 5)], [], phase="movement", player="red")
    b.apply(Action("charge", 1, 0))
    assert [a for a in b.legal_actions() if a.kind == "react"] == [Action("react", 0, 1, "hold")]
    b.apply(Action("react", 0, 1, "hold"))
    end_declarations(b)
    (declared,) = rules(b, "CORE.CHARGE.DECLARE")
    assert declared["facing"] == "left"
    for _ in range(10):
        if rules(b, "CORE.TYPE.WAR_MACHINE"):
            break
        b.apply(END_PHASE)
    (front,) = rules(b, "CORE.TYPE.WAR_MACHINE")
    assert (front["unit"], front["charger"], front["contact"], front["counts_as"]) == (0, 1, "left", "front")
    assert rules(b, "CORE.CC.COMBAT_RESULT.FLANK") == []

    own = wm_battle([machine("great_cannon")], [block("orc_warriors", MUZZLE_Y + 8)], [], phase="movement")
    mine = [a for a in own.legal_actions() if a.unit == 0]
    assert mine and not [a for a in mine if a.kind == "charge"]
    assert not [a for a in mine if a.kind == "move" and a.option.startswith("march")]


def test_dice_helpers_read_d6_faces_and_name_their_die() -> None:
    """CORE.DICE.D6, CORE.DICE.D3, CORE.DICE.HIGHEST_2D6, CORE.DICE.SWIFT_3D6 on scripted faces."""
    from battleline.env.rules.dice import ScriptedDice

    used: list[tuple[str, str]] = []
    d = ScriptedDice([1, 2, 3, 4, 5, 6] + [2, 5] + [1, 4, 6] + [1, 4] + [3, 6, 2] + [5, 5])
    d.on_die = lambda die, rule: used.append((die, rule))
    assert [d.d3("X") for _ in range(6)] == [1, 1, 2, 2, 3, 3]  # ⌈D6/2⌉
    assert d.highest_2d6("CORE.CHARGE.RANGE") == (5, [2, 5])
    assert d.flee_roll("CORE.CC.FLEE", swiftstride=True) == (10, [1, 4, 6])  # the two highest of 3D6
    assert d.flee_roll("CORE.CC.FLEE", swiftstride=False) == (5, [1, 4])
    assert d.sum_d6("X", 3) == (11, [3, 6, 2])
    assert d.d6("X", 2) == [5, 5]
    assert [die for die, _ in used] == ["CORE.DICE.D3"] * 6 + [
        "CORE.DICE.HIGHEST_2D6", "CORE.DICE.SWIFT_3D6", "CORE.DICE.D6", "CORE.DICE.D6", "CORE.DICE.D6"]
    assert used[6] == ("CORE.DICE.HIGHEST_2D6", "CORE.CHARGE.RANGE")


def test_a_battle_records_its_seed_units_and_the_first_roll_of_each_die() -> None:
    """CORE.DICE.RNG, CORE.CONV.UNITS, CORE.DICE.HIGHEST_2D6, CORE.DICE.D6: one stream from seed 0, inches to ε = 0.01".

    The charge range (highest of 2D6) is the first roll of that die; the combat's
    to-hit D6 are the first D6; later rolls of the same die add no such record.
    """
    from battleline.env.rules import geometry

    b, _ = _held_head_on_charge()
    (rng,) = rules(b, "CORE.DICE.RNG")
    assert rng["seed"] == 0 == b.seed and rng["scripted"] is True
    (units,) = rules(b, "CORE.CONV.UNITS")
    assert units["unit"] == "inch" and units["tolerance"] == 0.01 == geometry.EPS
    (high,) = rules(b, "CORE.DICE.HIGHEST_2D6")
    assert high["first_roll_for"] == "CORE.CHARGE.RANGE"
    first = b.events.index(high)
    assert b.events[first + 1]["rule"] == "CORE.CHARGE.RANGE" and b.events[first + 1]["dice"] == [1, 5]
    (d6,) = rules(b, "CORE.DICE.D6")
    assert d6["first_roll_for"] == "CORE.CC.TO_HIT"
    assert len([e for e in b.events if e.get("kind") == "dice" and e["rule"] == "CORE.CC.TO_HIT"]) == 2


def test_two_chargers_of_one_target_roll_first_and_the_second_finds_no_room() -> None:
    """CORE.CHARGE.SAME_TARGET, CORE.CHARGE.BLOCKED: spearmen and halberdiers both charge 5-wide orcs, both roll 6.

    Both charge rolls come before any move; the spearmen slide 6" to take the
    orcs' whole front; the halberdiers cannot touch without displacing them:
    blocked, the charge fails (high die 6) and only the spearmen are engaged.
    """
    blue = [placement("marcher_spearmen", 30, 18, 90), placement("marcher_halberdiers", 42, 18, 90)]
    b = battle(blue, [placement("orc_warriors", 36, 18 + DEPTH4 + 6, 270)], dice=[6, 6, 5, 6])
    for charger in (0, 1):
        b.apply(Action("charge", charger, 2))
        b.apply(Action("react", 2, charger, "hold"))
    end_declarations(b)
    rolls_and_moves = [
        e["rule"] for e in b.events
        if (e["rule"] == "CORE.CHARGE.RANGE" and e.get("kind") == "dice") or e["rule"] == "CORE.CHARGE.MOVE"
    ]
    assert rolls_and_moves == ["CORE.CHARGE.RANGE", "CORE.CHARGE.RANGE", "CORE.CHARGE.MOVE"]
    (same,) = rules(b, "CORE.CHARGE.SAME_TARGET")
    assert same["target"] == 2 and same["chargers"] == [0, 1]
    (align,) = rules(b, "CORE.CHARGE.ALIGN")
    assert align["unit"] == 0 and align["slide"] == pytest.approx(6.0) and align["overlap"] == pytest.approx(5 * INFANTRY_BASE)
    (blocked,) = rules(b, "CORE.CHARGE.BLOCKED")
    assert blocked["unit"] == 1 and blocked["target"] == 2
    (failed,) = rules(b, "CORE.CHARGE.FAILED")
    assert failed["unit"] == 1 and failed["high"] == 6 and 0.0 < failed["moved"] <= 6.0
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(0, 2)]
    assert (b.unit(0).x, b.unit(0).y) == pytest.approx((36.0, 24.0))


@pytest.mark.parametrize(("faces", "through"), [([5, 5], True), ([1, 1], False)])
def test_a_fleeing_friend_moving_through_a_unit_causes_a_panic_test(faces: list[int], through: bool) -> None:
    """CORE.PSY.PANIC.TRIGGER_FLED_THROUGH: orcs flee 10" straight through the orcs 6" behind them, which test
    Panic (2D6 = 3 ≤ Ld 7, passed); a 2" flee stops short of them and causes no test."""
    from battleline.env.rules import psychology

    red = [placement("orc_warriors", 36, 20, 270, models=10), placement("orc_warriors", 36, 26, 270, models=10)]
    b = battle([placement("marcher_spearmen", 36, 10, 90)], red, dice=faces + [1, 2])
    psychology.flee(b, b.unit(1), (b.unit(0).x, b.unit(0).y), "CORE.REACT.FLEE")
    (flee,) = rules(b, "CORE.REACT.FLEE")
    assert flee["roll"] == sum(faces) and b.unit(1).y == pytest.approx(20.0 + sum(faces))
    triggers = rules(b, "CORE.PSY.PANIC.TRIGGER_FLED_THROUGH")
    if through:
        assert [(t["unit"], t["source"]) for t in triggers] == [(2, 1)]
        (panic,) = rules(b, "CORE.PSY.PANIC.TEST")
        assert panic["unit"] == 2 and panic["roll"] == 3 and panic["passed"] and panic["trigger"] == "CORE.PSY.PANIC.TRIGGER_FLED_THROUGH"
    else:
        assert triggers == [] and rules(b, "CORE.PSY.PANIC.TEST") == []


@pytest.mark.parametrize(("hedge", "needed", "hits"), [(True, 6, 2), (False, 4, 6)])
def test_chargers_across_a_defended_hedge_hit_only_on_6s_in_round_one(hedge: bool, needed: int, hits: int) -> None:
    """CORE.TERRAIN.DEFENDED_OBSTACLE: spearmen charge orcs that stand behind a hedge (WS3 v WS3 needs 4+).

    Their 10 attacks (faces 6, 6, 5, 5, 4, 4, 3, 3, 2, 1) hit only on the two 6s; without the hedge, 6 hit.
    """
    front = 18 + DEPTH4 / 2 + 6.0  # the orcs' front edge, 6" from the spearmen
    terrain = [{"kind": "hedge", "polygon": [[30, front - 0.75], [42, front - 0.75], [42, front - 0.5], [30, front - 0.5]]}] if hedge else []
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("orc_warriors", 36, front + DEPTH4 / 2, 270)]
    b = battle(blue, red, dice=[6, 6] + [6, 6, 5, 5, 4, 4, 3, 3, 2, 1], terrain=terrain)
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (move,) = rules(b, "CORE.CHARGE.MOVE")
    assert move["facing"] == "front"
    first = next(e for e in rules(b, "CORE.CC.TO_HIT") if e["unit"] == 0)
    assert (first["attacks"], first["needed"], first["hits"]) == (10, needed, hits)
    defended = rules(b, "CORE.TERRAIN.DEFENDED_OBSTACLE")
    assert [(e["unit"], e["target"]) for e in defended] == ([(0, 1)] if hedge else [])


def test_a_multiple_combat_has_one_total_per_side_and_the_loser_tests_the_whole_difference() -> None:
    """CORE.CC.MULTI: spearmen (front) and halberdiers (left flank) against 10 orcs; blue caused 3 wounds.

    Blue's one total: wounds 3 + charge 1 + ranks 3 (one rank bonus, not one per unit) + flank 1 +
    outnumber 1 = 9; the orcs 0. The orcs break-test against the whole 9: Ld 7 − 9, 2D6 = 12 fails.
    """
    from battleline.env.rules import combat
    from battleline.env.rules.charges import contact_placement
    from battleline.env.rules.state import Engagement

    blue = [placement("marcher_spearmen", 36, 10, 90), placement("marcher_halberdiers", 20, 30, 0)]
    b = battle(blue, [placement("orc_warriors", 36, 30, 90, models=10)], phase="combat")
    for uid, facing in ((0, "front"), (1, "left")):
        a = b.unit(uid)
        pose, _, _ = contact_placement(b, a, b.unit(2), facing)
        a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 2, "front", charged=True, turn=b.state.turn), Engagement(1, 2, "left", charged=True, turn=b.state.turn)]
    b.events.clear()
    b.dice._script = [6, 6]
    combat._result_and_break(b, b.state.engagements, {0: [0, 1], 1: [2]}, [3, 0], True, 0)
    (ranks,) = rules(b, "CORE.CC.COMBAT_RESULT.RANKS")
    assert ranks["side"] == 0 and ranks["value"] == 3
    (compare,) = rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")
    assert compare["totals"] == [3 + 1 + 3 + 1 + 1, 0] and compare["winner"] == 0 and compare["difference"] == 9
    (multi,) = rules(b, "CORE.CC.MULTI")
    assert multi["losers"] == [2] and multi["difference"] == 9
    (brk,) = rules(b, "CORE.CC.BREAK_TEST")
    assert brk["unit"] == 2 and brk["difference"] == 9 and brk["ld"] == 7 - 9 and brk["roll"] == 12 and not brk["passed"]


def test_a_pursuer_that_touches_a_fresh_enemy_starts_a_new_combat_as_charger() -> None:
    """CORE.CC.PURSUIT_CONTACT: orcs flee 2, the spearmen roll 12 and catch them, pursue straight on and
    touch the front of the orcs behind: a new engagement, the pursuer counting as charging."""
    from battleline.env.rules import combat, geometry, space

    b = _broken_orcs(behind_at=22)
    _a, _d = b.unit(0), b.unit(1)
    b.state.queue["pursuit"] = {"broken": [1], "ask": [], "answers": {"0": "pursue"}, "winner": 0}
    b.dice._script = [1, 1, 6, 6]
    combat._flee_and_pursue(b)
    (caught,) = rules(b, "CORE.CC.CAUGHT")
    assert caught["flee_roll"] == 2 and caught["pursuit_rolls"] == {"0": 12} and b.unit(1).removed
    (move,) = rules(b, "CORE.CC.PURSUIT_MOVE")
    assert move["roll"] == 12 and move["distance"] < 12  # stopped by the fresh enemy
    (contact,) = rules(b, "CORE.CC.PURSUIT_CONTACT")
    assert (contact["unit"], contact["target"], contact["facing"]) == (0, 2, "front")
    assert contact["overlap"] == pytest.approx(5 * INFANTRY_BASE)
    (eng,) = b.state.engagements
    assert (eng.attacker, eng.defender, eng.facing, eng.charged) == (0, 2, "front", True)
    assert geometry.distance(space.footprint(b.unit(0)), space.footprint(b.unit(2))) <= geometry.EPS


def test_the_game_end_records_each_victory_point_source_it_scores() -> None:
    """CORE.VP.DESTROYED, CORE.VP.HALF, CORE.VP.QUARTERS at the end of the game.

    Red loses 11 orcs (66 points, full) and 20 fleeing orcs (120 points, half: 60);
    blue holds both lower quarters (+100 each). Red scores nothing, so has no such records.
    """
    from battleline.env.rules import victory

    blue = [placement("marcher_spearmen", 20, 10, 90), placement("marcher_spearmen", 50, 10, 90)]
    red = [placement("orc_warriors", 20, 40, 270, models=11), placement("orc_warriors", 50, 40, 270)]
    b = battle(blue, red)
    b.unit(2).removed = True
    b.unit(3).fleeing = True
    victory.end_game(b, "turns")
    scored = {(e["rule"], e["side"]): e["vp"] for e in b.events if e["rule"] in ("CORE.VP.DESTROYED", "CORE.VP.HALF", "CORE.VP.QUARTERS")}
    assert scored == {("CORE.VP.DESTROYED", "blue"): 66, ("CORE.VP.HALF", "blue"): 60, ("CORE.VP.QUARTERS", "blue"): 200}
    (res,) = rules(b, "CORE.VP.RESULT")
    assert res["vp"]["blue"] == 66 + 60 + 200


def test_a_reroll_replaces_each_missed_die_once() -> None:
    """CORE.DICE.REROLL: Portent of Fate on 10 crossbows (4+): eight 1s and two 4s; the 8 misses are re-rolled
    once (four 4s and four 1s): 6 hits, and the four 1s are not re-rolled again.
    ASF spearmen (4+) roll 2, 4, 6: the one miss is re-rolled once (6): 3 hits."""
    from battleline.env.rules import magic
    from battleline.env.rules.spells import SPELLS
    from tests.test_special_rules import _fight, _strike

    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement("orc_warriors", 36, 10 + 0.8 + 10 + 1.6, 270)]
    b = battle(blue, red, dice=[1] * 8 + [4, 4] + [4, 4, 4, 4, 1, 1, 1, 1], phase="shooting")
    magic.add_effect(b, b.unit(0), SPELLS["CORE.MAGIC.SPELL.HEAVENS.2"], b.unit(0))
    b.apply(Action("shoot", 0, 1))
    (reroll,) = rules(b, "CORE.DICE.REROLL")
    assert reroll == {**reroll, "unit": 0, "source": "CORE.MAGIC.SPELL.HEAVENS.2", "dice": 8}
    assert [len(e["dice"]) for e in b.events if e.get("kind") == "dice" and e["rule"] == "CORE.MAGIC.SPELL.HEAVENS.2"] == [8]
    assert rules(b, "CORE.SHOOT.TO_WOUND")[0]["hits"] == 6

    f = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270), charged=False)
    f.unit(0).special_rules.append("always_strikes_first")
    f.dice._script = [2, 4, 6, 6, 1, 1, 1]
    _strike(f, 0, 3)
    (again,) = rules(f, "CORE.DICE.REROLL")
    assert (again["unit"], again["source"], again["dice"]) == (0, "CORE.SR.ASF", 1)
    assert rules(f, "CORE.CC.TO_HIT")[0]["hits"] == 3


# --------------------------------------------------------------------- CORE.CC.CONTACT_KEEP
def _one_rank_orcs(blue: list[dict], orcs_x: float = 36.0) -> Battle:
    """10 orcs in one rank (x = ``orcs_x``, y = 30, facing 270: their right is −x) against ``blue``."""
    return battle(blue, [placement("orc_warriors", orcs_x, 30.0, 270, models=10, files=10)])


def test_a_shrunken_front_rank_slides_to_keep_the_most_contacts() -> None:
    """CORE.CC.CONTACT_KEEP: 10 orcs in one rank overlap the 5-wide spearmen's front by 2 bases. 7 die: the 3
    left may stand at 8 file slots of the old front (offsets −3.5 … +3.5 bases); 3.5 bases towards their right
    (−x) keeps 3 models touching (2 along the edge, 1 at the corner); 2.5 bases would keep 2."""
    from battleline.env.rules.casualties import apply_wounds
    from battleline.env.rules.state import Engagement

    w = INFANTRY_BASE
    b = _one_rank_orcs([placement("marcher_spearmen", 36.0, 30.0 - w / 2 - DEPTH4 / 2, 90)], orcs_x=36.0 + 5.5 * w)
    orcs = b.unit(1)
    b.state.engagements = [Engagement(attacker=1, defender=0, facing="front", charged=False, turn=1)]
    apply_wounds(b, orcs, 7, rule="CORE.CC.CASUALTIES")
    (ev,) = rules(b, "CORE.CC.CONTACT_KEEP")
    assert (ev["slide"], ev["contacts"], ev["old_width"], ev["width"]) == pytest.approx((3.5 * w, 3, 10 * w, 3 * w))
    assert (orcs.x, orcs.y, orcs.models) == pytest.approx((36.0 + 2 * w, 30.0, 3))


def _flanked_orcs() -> Battle:
    """Blue spearmen (10 in one rank) on each flank of the 10 orcs: uid 0 on their left (+x), uid 1 on their right;
    2 orcs die, so the 8 left are 2 bases narrower."""
    from battleline.env.rules.casualties import apply_wounds
    from battleline.env.rules.state import Engagement

    w = INFANTRY_BASE
    blue = [placement("marcher_spearmen", 36.0 + 5.5 * w, 30.0, 180, models=10, files=10),
            placement("marcher_spearmen", 36.0 - 5.5 * w, 30.0, 0, models=10, files=10)]
    b = _one_rank_orcs(blue)
    b.state.engagements = [Engagement(attacker=0, defender=2, facing="left", charged=False, turn=1),
                           Engagement(attacker=1, defender=2, facing="right", charged=False, turn=1)]
    apply_wounds(b, b.unit(2), 2, rule="CORE.CC.CASUALTIES")
    return b


def test_units_that_lose_contact_close_up_when_the_winner_can_reach() -> None:
    """CORE.CC.CONTACT_KEEP: the 8 orcs left can keep only one flank; the tie goes to their left (slide −1 base),
    so the spearmen on their right are 2 bases (1.57") away. Blue wins: they close up 1.57" straight ahead."""
    from battleline.env.rules import combat

    w = INFANTRY_BASE
    b = _flanked_orcs()
    (slide,) = rules(b, "CORE.CC.CONTACT_KEEP")
    assert (slide["slide"], slide["contacts"]) == pytest.approx((-w, 1))
    combat.close_gaps(b, list(b.state.engagements), 0)
    ev = rules(b, "CORE.CC.CONTACT_KEEP")[-1]
    assert ev["unit"] == 1 and ev["closed"] and ev["moved"] == pytest.approx(2 * w, abs=1e-6)
    assert b.unit(1).x == pytest.approx(36.0 - 3.5 * w, abs=1e-6) and len(b.state.engagements) == 2


def test_units_that_lose_contact_disengage_when_the_winner_cannot_reach() -> None:
    """CORE.CC.CONTACT_KEEP: red wins; the orcs' 2" straight ahead (−y) never reach the spearmen on their
    right flank, so those two units disengage; the spearmen on their left stay engaged."""
    from battleline.env.rules import combat

    b = _flanked_orcs()
    combat.close_gaps(b, list(b.state.engagements), 1)
    ev = rules(b, "CORE.CC.CONTACT_KEEP")[-1]
    assert (ev["unit"], ev["target"], ev["closed"], ev["disengaged"]) == (2, 1, False, True)
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(0, 2)]
    assert b.unit(2).y == pytest.approx(30.0)


def _rear_charged_orcs_lose_a_rank() -> Battle:
    """Blue spearmen (uid 0, 5×4) touching the rear of 20 orcs (uid 1, 5×4, facing 270 at y = 30); 5 orcs die:
    their last rank goes and their front edge stays, so their rear edge moves 1 base (0.787") away from the
    spearmen, who are still engaged with them."""
    from battleline.env.rules.casualties import apply_wounds
    from battleline.env.rules.state import Engagement

    b = battle([placement("marcher_spearmen", 36.0, 30.0 + DEPTH4, 270)], [placement("orc_warriors", 36.0, 30.0, 270)],
               phase="combat")
    b.state.engagements = [Engagement(attacker=0, defender=1, facing="rear", charged=True, turn=b.state.turn)]
    apply_wounds(b, b.unit(1), 5, rule="CORE.CC.CASUALTIES")
    return b


def test_a_rear_charger_left_apart_by_a_lost_rank_closes_up_when_it_wins() -> None:
    """CORE.CC.CONTACT_KEEP, CORE.CC.CASUALTIES (000:L968: the last rank goes, the front line stays closed;
    000:L906: only models in base contact fight): the orcs' rear edge is 0.787" from the spearmen, from
    y = 30 + 2 bases to y = 30 + 1 base. Blue wins the round: the spearmen close up 1 base (0.787") straight
    ahead (−y), from y = 30 + 4 bases to y = 30 + 3 bases, and touch the orcs' rear again."""
    from battleline.env.rules import combat, geometry, space

    w = INFANTRY_BASE
    b = _rear_charged_orcs_lose_a_rank()
    orcs, spears = b.unit(1), b.unit(0)
    assert (orcs.models, orcs.ranks, orcs.y) == (15, 3, pytest.approx(30.0 - w / 2))
    assert geometry.distance(space.footprint(spears), space.footprint(orcs)) == pytest.approx(w)
    combat.close_gaps(b, list(b.state.engagements), 0)
    (ev,) = rules(b, "CORE.CC.CONTACT_KEEP")
    assert (ev["unit"], ev["target"], ev["closed"]) == (0, 1, True)
    assert (ev["moved"], ev["x"], ev["y"]) == pytest.approx((w, 36.0, 30.0 + 3 * w), abs=1e-6)
    assert (spears.x, spears.y, spears.facing) == pytest.approx((36.0, 30.0 + 3 * w, 270.0), abs=1e-6)
    assert geometry.distance(space.footprint(spears), space.footprint(orcs)) <= geometry.EPS
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(0, 1)]


def test_a_rear_charger_left_apart_by_a_lost_rank_disengages_when_it_loses_and_still_flees() -> None:
    """CORE.CC.CONTACT_KEEP, CORE.CC.FLEE: as above, but red wins by 12 − 7 = 5 (blue: charge 1, ranks 3, rear 2,
    outnumber 1). The orcs' 2" straight ahead (−y) lead away from the spearmen behind them, so the two
    disengage; the spearmen (inspired, Ld 7) roll 12 and break, and still flee from the orcs they fought:
    6" straight away from them, to y = 30 + 4 bases + 6, facing 90°."""
    from battleline.env.rules import combat

    w = INFANTRY_BASE
    b = _rear_charged_orcs_lose_a_rank()
    b.events.clear()
    b.dice._script = [6, 6, 3, 3]  # break test 12; flee 6
    assert combat._result_and_break(b, list(b.state.engagements), {0: [0], 1: [1]}, [0, 12], True, 0) is False
    (compare,) = rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")
    assert (compare["totals"], compare["winner"]) == ([7, 12], 1)
    (keep,) = rules(b, "CORE.CC.CONTACT_KEEP")
    assert (keep["unit"], keep["target"], keep["closed"], keep["disengaged"]) == (1, 0, False, True)
    (flee,) = rules(b, "CORE.CC.FLEE")
    assert (flee["unit"], flee["away_from"], flee["roll"], flee["distance"]) == (0, 1, 6, 6.0)
    spears = b.unit(0)
    assert spears.fleeing and (spears.x, spears.y, spears.facing) == pytest.approx((36.0, 30.0 + 4 * w + 6.0, 90.0))
    assert b.unit(1).y == pytest.approx(30.0 - w / 2) and b.state.engagements == []


def test_a_winner_held_from_behind_does_not_close_up_and_disengages() -> None:
    """CORE.CC.CONTACT_KEEP: as above, but a second orc unit is engaged with the spearmen's rear. Closing up
    1 base straight ahead would take the spearmen out of contact with it, so they cannot reach: they stay at
    y = 30 + 4 bases and disengage from the orcs in front; the fight with the orcs behind goes on."""
    from battleline.env.rules import combat
    from battleline.env.rules.casualties import apply_wounds
    from battleline.env.rules.state import Engagement

    w = INFANTRY_BASE
    red = [placement("orc_warriors", 36.0, 30.0, 270), placement("orc_warriors", 36.0, 30.0 + 2 * DEPTH4, 270)]
    b = battle([placement("marcher_spearmen", 36.0, 30.0 + DEPTH4, 270)], red, phase="combat")
    b.state.engagements = [Engagement(attacker=0, defender=1, facing="rear", charged=True, turn=b.state.turn),
                           Engagement(attacker=2, defender=0, facing="rear", charged=True, turn=b.state.turn)]
    apply_wounds(b, b.unit(1), 5, rule="CORE.CC.CASUALTIES")
    combat.close_gaps(b, list(b.state.engagements), 0)
    (ev,) = rules(b, "CORE.CC.CONTACT_KEEP")
    assert (ev["unit"], ev["target"], ev["closed"], ev["disengaged"]) == (0, 1, False, True)
    assert b.unit(0).y == pytest.approx(30.0 + 4 * w)
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(2, 0)]


# --------------------------------------------------------------------- CORE.CHARGE.MULTI_TARGET
def _charge_past_a_neighbour(neighbour_fleeing: bool = False) -> Battle:
    """Blue spearmen (5 wide) 8.43" from 10 orcs in 2 files (uid 1, front edge at y = 20); a second orc unit (uid 2)
    stands flush beside them on their left (+x) and rocks fill the ground on their right, so every contact spot
    on uid 1's front also touches uid 2. Dice 6, 6: charge range 4 + 6 = 10"."""
    w = INFANTRY_BASE
    rocks = [{"kind": "rocks", "polygon": [[28.0, 14.0], [36.0 - w, 14.0], [36.0 - w, 20.0], [28.0, 20.0]]}]
    blue = [placement("marcher_spearmen", 36.0 + 1.5 * w, 10.0, 90)]
    red = [placement("orc_warriors", 36.0, 20.0 + 2.5 * w, 270, models=10, files=2),
           placement("orc_warriors", 36.0 + 3.5 * w, 20.0 + w, 270, models=10, files=5)]
    b = battle(blue, red, dice=[6, 6], terrain=rocks)
    b.unit(2).fleeing = neighbour_fleeing
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    return b


def test_a_charge_whose_every_path_touches_a_second_enemy_engages_it_as_an_incidental_target() -> None:
    """CORE.CHARGE.DECLARE, CORE.CHARGE.MULTI_TARGET: the charge at uid 1 names uid 2 as its incidental target; the
    charger ends flush on uid 1's whole 2-file front (1.57") and touching uid 2, engaged with both as charger."""
    b = _charge_past_a_neighbour()
    (declare,) = rules(b, "CORE.CHARGE.DECLARE")
    assert declare["target"] == 1 and declare["incidental"] == [2]
    stages = [e["stage"] for e in rules(b, "CORE.CHARGE.MULTI_TARGET")]
    assert stages == ["declared", "moved"]
    assert rules(b, "CORE.CHARGE.MULTI_TARGET")[-1]["engaged"] == [{"unit": 2, "facing": "front"}]
    (align,) = rules(b, "CORE.CHARGE.ALIGN")
    assert align["overlap"] == pytest.approx(2 * INFANTRY_BASE) and align["x"] == pytest.approx(36.0 + 1.5 * INFANTRY_BASE)
    assert sorted((e.attacker, e.defender, e.charged) for e in b.state.engagements) == [(0, 1, True), (0, 2, True)]


def test_an_unreachable_incidental_target_is_dropped_and_no_path_avoids_it() -> None:
    """CORE.CHARGE.MULTI_TARGET: uid 2 is fleeing, so when the charge moves it is dropped; every spot on uid 1 still
    touches it (the rocks block the rest), so the charge fails (CORE.CHARGE.BLOCKED) and moves the high die."""
    b = _charge_past_a_neighbour(neighbour_fleeing=True)
    assert rules(b, "CORE.CHARGE.DECLARE")[0]["incidental"] == [2]
    dropped, failed = [e for e in rules(b, "CORE.CHARGE.MULTI_TARGET") if e["stage"] != "declared"]
    assert (dropped["stage"], dropped["dropped"], dropped["kept"]) == ("dropped", [2], [])
    assert failed["stage"] == "failed" and failed["no_path_avoids_dropped"]
    assert rules(b, "CORE.CHARGE.BLOCKED") and rules(b, "CORE.CHARGE.FAILED")[0]["high"] == 6
    assert not [e for e in rules(b, "CORE.CC.SEQUENCE") if 0 in e["units"]]


# --------------------------------------------------------------------- CORE.CONV.ORDER
def _two_combats() -> Battle:
    """Blue spearmen uid 0 (x = 20) and uid 1 (x = 50) each face to face with orcs (uids 2, 3), engaged; blue's
    turn goes on to its Close Combat phase."""
    blue = [placement("marcher_spearmen", 20, 20, 90), placement("marcher_spearmen", 50, 20, 90)]
    red = [placement("orc_warriors", 20, 20 + DEPTH4, 270), placement("orc_warriors", 50, 20 + DEPTH4, 270)]
    b = battle(blue, red)
    from battleline.env.rules.state import Engagement

    b.state.engagements = [Engagement(attacker=0, defender=2, facing="front", charged=False, turn=0),
                           Engagement(attacker=1, defender=3, facing="front", charged=False, turn=0)]
    b._legal_cache = None
    while b.pending.kind != "order":
        b.apply(Action("end_phase"))
    return b


def test_the_phasing_player_chooses_which_simultaneous_combat_resolves_first() -> None:
    """CORE.CONV.ORDER, CORE.CC.ROUNDS: with two combats waiting, blue chooses; naming uid 1 fights the x = 50
    combat first, then the other with no second choice (one combat left)."""
    from battleline.env.encoding import ActionCodec
    from battleline.env.observation import GLOBAL_FEATURES, Observer

    b = _two_combats()
    assert b.pending.player == 0 and set(b.legal_actions()) == {Action("order", 0), Action("order", 1), Action("end_phase")}
    codec = ActionCodec(10)
    mask = codec.mask(b, 0)
    assert sorted(int(i) for i in mask.nonzero()[0]) == [0, codec.layout.order, codec.layout.order + 1]
    assert codec.decode(codec.layout.order + 1, b, 0) == Action("order", 1)
    obs = Observer(codec, planes=False).observe(b, 0, mask)
    assert obs["globals"][GLOBAL_FEATURES.index("pending_order")] == 1.0
    b.apply(Action("order", 1))
    (ev,) = rules(b, "CORE.CONV.ORDER")
    assert (ev["player"], ev["effect"], ev["units"], ev["chosen"], ev["waiting"]) == (0, "combat", [1, 3], True, 1)
    assert [e["units"] for e in rules(b, "CORE.CC.SEQUENCE")][:2] == [[1, 3], [0, 2]]


def test_end_phase_keeps_the_listed_combat_order() -> None:
    """CORE.CONV.ORDER: declining to choose (end_phase) fights the combats in uid order of their lowest unit."""
    b = _two_combats()
    b.apply(Action("end_phase"))
    (ev,) = rules(b, "CORE.CONV.ORDER")
    assert ev["units"] == [0, 2] and not ev["chosen"]
    assert [e["units"] for e in rules(b, "CORE.CC.SEQUENCE")][:2] == [[0, 2], [1, 3]]
