"""The ``t9a.characters`` module: T9A.CHAR.LEAVE, T9A.MARCH.TEST, T9A.MARCH.CHARACTERS, T9A.CC.MAKE_WAY.

Set-ups: Marcher Spearmen (20 on 20 mm bases, 5 files, M4 Ld7) with a joined
Marcher Captain (M4 Ld8) against Orc Warriors; facing 90 is +y.
"""

from __future__ import annotations

import pytest

from battleline.env.rules import characters, combat
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.charges import contact_placement
from battleline.env.rules.state import Engagement
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

T9A = ["t9a.characters"]
B = INFANTRY_BASE
DEPTH4 = 4 * B  # 20 models in 5 files: 4 ranks
WIDTH5 = 5 * B
LEAVE = Action("move", 1, None, "leave")
NEAR_Y = 10 + DEPTH4 / 2 + 7.0 + DEPTH4 / 2  # orcs 7" in front of the spearmen (within 8")
FAR_Y = 40.0  # orcs 26.85" away


def joined(unit: str, host: int, **kw: object) -> dict:
    """A character placement joined to the side's placement ``host``."""
    return placement(unit, 0, 0, 90, models=1, files=1, joins=host, **kw)


def _hemmed_in(orc_y: float, dice: list[int], modules: list[str], captain_m: int | None = None) -> Battle:
    """Spearmen (uid 0) at (30, 10) with the captain (uid 1); friends 1.5" off their front and both flanks
    (uids 2-4), so the captain's only spot is behind: depth + 1.05" = 4.1996" from its slot (beyond M4)."""
    side = WIDTH5 / 2 + 1.5 + B / 2
    blue = [
        placement("marcher_spearmen", 30, 10, 90),
        joined("marcher_captain", 0),
        placement("marcher_spearmen", 30, 10 + DEPTH4 + 1.5, 90),
        placement("marcher_spearmen", 30 - side, 10, 90, models=10, files=1),
        placement("marcher_spearmen", 30 + side, 10, 90, models=10, files=1),
    ]
    b = battle(blue, [placement("orc_warriors", 30, orc_y, 270)], dice=dice, modules=modules)
    if captain_m is not None:
        b.unit(1).profile.M = captain_m
        b._legal_cache = None
    end_declarations(b)
    return b


# --------------------------------------------------------------------- T9A.CHAR.LEAVE
def test_t9a_char_leave_by_an_advance_takes_no_march_test_near_the_enemy() -> None:
    """T9A.CHAR.LEAVE: the front spot is base depth + 1.05" = 1.8374" from the captain's slot, within M4: an advance,
    so no March Test although the orcs are 7" away; CORE.MOVE.LEAVE does not fire."""
    b = battle([placement("marcher_spearmen", 30, 10, 90), joined("marcher_captain", 0)],
               [placement("orc_warriors", 30, NEAR_Y, 270)], modules=T9A)
    end_declarations(b)
    assert LEAVE in b.legal_actions()
    b.apply(LEAVE)
    (ev,) = rules(b, "T9A.CHAR.LEAVE")
    assert (ev["unit"], ev["host"], ev["left"], ev["march"]) == (1, 0, True, False)
    assert ev["distance"] == pytest.approx(B + 1.05)
    cap = b.unit(1)
    assert cap.joined_to is None and b.unit(0).joined == []
    assert (cap.x, cap.y) == pytest.approx((30.0, 10 + DEPTH4 / 2 + 1.05 + B / 2))
    assert cap.flags == {"moved": True}
    assert not rules(b, "T9A.MARCH.TEST") and not rules(b, "CORE.MOVE.LEAVE")


@pytest.mark.parametrize(("dice", "passed"), [([3, 4], True), ([5, 5], False), ([1, 1], True)])
def test_t9a_march_test_for_a_character_marching_out(dice: list[int], passed: bool) -> None:
    """T9A.MARCH.TEST / T9A.MARCH.CHARACTERS: the spot behind is 4.1996" away (> M4, ≤ 2·M): a march, and with the orcs
    within 8" the captain alone tests on its Ld 8: 3+4 = 7 passes, 5+5 = 10 fails, a double 1 passes (CORE.TEST.LD).
    On a failure it does not march: it stays in the unit and has used its move."""
    b = _hemmed_in(NEAR_Y, dice, T9A)
    assert LEAVE in b.legal_actions()
    b.apply(LEAVE)
    (test,) = rules(b, "T9A.MARCH.TEST")
    assert (test["unit"], test["testers"], test["ld"], test["dice"], test["passed"]) == (1, [1], 8, dice, passed)
    assert not rules(b, "CORE.MOVE.MARCH_BLOCK") and not rules(b, "CORE.MOVE.LEAVE")
    (ev,) = rules(b, "T9A.CHAR.LEAVE")
    assert (ev["left"], ev["march"]) == (passed, True) and ev["distance"] == pytest.approx(DEPTH4 + 1.05)
    cap = b.unit(1)
    if passed:
        assert cap.joined_to is None and cap.flags == {"moved": True, "marched": True}
        assert (cap.x, cap.y) == pytest.approx((30.0, 10 - DEPTH4 / 2 - 1.05 - B / 2))
        assert not rules(b, "T9A.MARCH.CHARACTERS")
    else:
        assert cap.joined_to == 0 and b.unit(0).joined == [1] and cap.flags == {"moved": True}
        (stay,) = rules(b, "T9A.MARCH.CHARACTERS")
        assert (stay["unit"], stay["host"], stay["marched"], stay["stays"]) == (1, 0, False, True)
    assert LEAVE not in b.legal_actions()  # one move, one test per phase


def test_t9a_march_test_not_taken_without_an_enemy_within_8() -> None:
    """T9A.MARCH.TEST: with the orcs 26.85" away the captain marches out behind without a test."""
    b = _hemmed_in(FAR_Y, [], T9A)
    b.apply(LEAVE)
    assert not rules(b, "T9A.MARCH.TEST")
    (ev,) = rules(b, "T9A.CHAR.LEAVE")
    assert (ev["left"], ev["march"]) == (True, True)
    assert b.unit(1).flags == {"moved": True, "marched": True}


@pytest.mark.parametrize(("m", "offered"), [(2, False), (3, True)])
def test_t9a_char_leave_needs_the_movement_to_reach_the_spot(m: int, offered: bool) -> None:
    """T9A.CHAR.LEAVE (CH-2): the only free spot is 4.1996" away; M2 marches 4" and cannot leave, M3 marches 6"
    and can. The core (CORE.MOVE.LEAVE) places the M2 captain there all the same."""
    assert (LEAVE in _hemmed_in(FAR_Y, [], T9A, captain_m=m).legal_actions()) is offered
    core = _hemmed_in(FAR_Y, [], [], captain_m=m)
    core.apply(LEAVE)
    (ev,) = rules(core, "CORE.MOVE.LEAVE")
    assert ev["y"] == pytest.approx(10 - DEPTH4 / 2 - 1.05 - B / 2)


def test_t9a_char_leave_core_unchanged_when_off() -> None:
    """Module off: CORE.MOVE.LEAVE places the captain behind, with no March Test and no T9A event."""
    b = _hemmed_in(NEAR_Y, [], [])
    b.apply(LEAVE)
    (ev,) = rules(b, "CORE.MOVE.LEAVE")
    assert (ev["unit"], ev["host"]) == (1, 0)
    assert b.unit(1).flags == {"moved": True}
    assert not [e for e in b.events if e["rule"].startswith("T9A.")]


def test_t9a_char_leave_never_in_the_phase_it_joined() -> None:
    """T9A.CHAR.LEAVE (CH-3): a captain that joins the spearmen this phase may not leave them again."""
    front = 10 + DEPTH4 / 2
    blue = [placement("marcher_spearmen", 30, 10, 90),
            placement("marcher_captain", 30, front + 3 + B / 2, 270, models=1, files=1)]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)], modules=T9A)
    end_declarations(b)
    b.apply(Action("move", 1, 0, "join"))
    assert b.unit(1).joined_to == 0
    assert not [a for a in b.legal_actions() if a.unit == 1]


# --------------------------------------------------------------------- the unit's March Test
def _marching_unit(dice: list[int], modules: list[str]) -> Battle:
    """Spearmen with the captain, orcs 6" off their right flank (within 8", not in the way)."""
    orc_x = 30 + WIDTH5 / 2 + 6.0 + WIDTH5 / 2
    b = battle([placement("marcher_spearmen", 30, 10, 90), joined("marcher_captain", 0)],
               [placement("orc_warriors", orc_x, 10, 90)], dice=dice, modules=modules)
    end_declarations(b)
    return b


@pytest.mark.parametrize(("dice", "passed", "moved"), [([4, 4], True, 8.0), ([4, 5], False, 4.0)])
def test_t9a_march_test_for_the_unit_with_its_characters(dice: list[int], passed: bool, moved: float) -> None:
    """T9A.MARCH.TEST (⇒ CORE.MOVE.MARCH_BLOCK): the unit and its captain test on Ld 8 (CORE.TEST.LD_UNIT):
    4+4 = 8 passes and it marches 8"; 4+5 = 9 fails and it makes a normal move of 4"."""
    b = _marching_unit(dice, T9A)
    y0 = b.unit(0).y
    b.apply(Action("move", 0, None, "march"))
    (test,) = rules(b, "T9A.MARCH.TEST")
    assert (test["unit"], test["testers"], test["ld"], test["roll"], test["passed"]) == (0, [0, 1], 8, sum(dice), passed)
    assert rules(b, "CORE.TEST.LD_UNIT")[0]["ld"] == 8
    assert not rules(b, "CORE.MOVE.MARCH_BLOCK") and not rules(b, "T9A.MARCH.CHARACTERS")
    assert b.unit(0).y == pytest.approx(y0 + moved)
    assert bool(rules(b, "CORE.MOVE.MARCH")) is passed and bool(rules(b, "CORE.MOVE.NORMAL")) is not passed


def test_t9a_march_test_core_unchanged_when_off() -> None:
    """Module off: the same 4+5 = 9 is CORE.MOVE.MARCH_BLOCK's failed test (Ld 8) and no T9A rule fires."""
    b = _marching_unit([4, 5], [])
    b.apply(Action("move", 0, None, "march"))
    (test,) = rules(b, "CORE.MOVE.MARCH_BLOCK")
    assert (test["ld"], test["roll"], test["passed"]) == (8, 9, False)
    assert not [e for e in b.events if e["rule"].startswith("T9A.")]


# --------------------------------------------------------------------- T9A.MARCH.CHARACTERS
def test_t9a_march_characters_a_characters_test_does_not_cover_the_unit() -> None:
    """T9A.MARCH.CHARACTERS: the captain passes its own test (3+4) and marches out; the spearmen then march and take
    their own test on their Ld 7 (6+6 fails): the unit makes a normal move (about 0.5", to its friends' 1" gap)."""
    b = _hemmed_in(NEAR_Y, [3, 4, 6, 6], T9A)
    b.apply(LEAVE)
    b.apply(Action("move", 0, None, "march"))
    tests = rules(b, "T9A.MARCH.TEST")
    assert [(t["unit"], t["testers"], t["ld"], t["roll"], t["passed"]) for t in tests] == [
        (1, [1], 8, 7, True), (0, [0], 7, 12, False)]
    (note,) = rules(b, "T9A.MARCH.CHARACTERS")
    assert (note["unit"], note["tested"], note["stayed"], note["covered"]) == (0, [1], [], False)
    (move,) = rules(b, "CORE.MOVE.NORMAL")
    assert move["option"] == "march" and move["distance"] == pytest.approx(0.5, abs=0.02)  # the move stops at the 1" gap
    assert "marched" not in b.unit(0).flags


def test_t9a_march_characters_a_character_that_stayed_marches_only_with_its_unit() -> None:
    """T9A.MARCH.CHARACTERS: the captain fails (5+5) and stays; the unit's own test (2+2 on the captain's Ld 8)
    passes, so the unit marches and the captain with it."""
    b = _hemmed_in(NEAR_Y, [5, 5, 2, 2], T9A)
    b.apply(LEAVE)
    y0 = b.unit(1).y
    b.apply(Action("move", 0, None, "march"))
    notes = rules(b, "T9A.MARCH.CHARACTERS")
    assert [(n["unit"], n.get("tested"), n.get("stayed")) for n in notes] == [(1, None, None), (0, [1], [1])]
    unit_test = rules(b, "T9A.MARCH.TEST")[-1]
    assert (unit_test["testers"], unit_test["ld"], unit_test["passed"]) == ([0, 1], 8, True)
    (march,) = rules(b, "CORE.MOVE.MARCH")
    assert b.unit(1).y == pytest.approx(y0 + march["distance"]) and b.unit(0).flags["marched"]


# --------------------------------------------------------------------- T9A.CC.MAKE_WAY
def _fight(shift_files: float, modules: list[str], two: bool = False, captain_base_d: float | None = None) -> Battle:
    """The spearmen (uid 0) charged the orcs' front this turn, their front slid ``shift_files`` files to their right,
    so only their left files touch; fight the round with every die a 1 (all miss, the break test passes)."""
    blue = [placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0)]
    if two:
        blue.append(joined("marcher_captain", 0))
    b = battle(blue, [placement("orc_warriors", 36, 30, 270)], phase="combat", player="red", modules=modules)
    s = b.state
    orcs = len(blue)
    a = b.unit(0)
    pose, _, _ = contact_placement(b, a, b.unit(orcs), "front")
    a.x, a.y = geo.to_world(pose, shift_files * B, 0.0)
    a.facing = pose.facing
    if captain_base_d is not None:
        b.unit(1).base_d = captain_base_d
    characters.sync(s)
    s.engagements = [Engagement(0, orcs, "front", charged=True, turn=s.turn)]
    s.active, s.phase = 0, "combat"
    b.dice._script = [1] * 40
    b.events.clear()
    combat.start(b)
    return b


def _attacks(b: Battle) -> dict[int, int]:
    return {e["unit"]: e["attacks"] for e in rules(b, "CORE.CC.TO_HIT")}


def test_t9a_cc_make_way_not_needed_in_contact() -> None:
    """T9A.CC.MAKE_WAY: fronts aligned, the captain's slot touches the orcs; it fights (A3) without making way;
    the spearmen attack with 4 front models + 5 supporters."""
    b = _fight(0.0, T9A)
    assert _attacks(b) == {0: 9, 1: 3, 2: 10}
    assert not rules(b, "T9A.CC.MAKE_WAY")


def test_t9a_cc_make_way_corner_contact_counts() -> None:
    """T9A.CC.MAKE_WAY: slid 3 files, the captain's base meets the orcs' edge at a corner: in contact, no swap."""
    assert not rules(_fight(3.0, T9A), "T9A.CC.MAKE_WAY")


def test_t9a_cc_make_way_swaps_a_matching_character_into_contact() -> None:
    """T9A.CC.MAKE_WAY: slid 3.5 files, 2 spearmen touch the orcs and the captain (centre file) does not; its base
    matches (A2), so it swaps with one of them and strikes (3 attacks); the spearmen keep 1 fighter + 2 supporters."""
    b = _fight(3.5, T9A)
    (ev,) = rules(b, "T9A.CC.MAKE_WAY")
    assert (ev["unit"], ev["host"], ev["swapped"], ev["enemy"], ev["fights"]) == (1, 0, True, 2, True)
    assert _attacks(b) == {0: 3, 1: 3, 2: 4}


def test_t9a_cc_make_way_not_on_a_base_that_does_not_match() -> None:
    """T9A.CC.MAKE_WAY (MW-2, A2): with a 1" deep base the captain out of contact cannot swap and does not strike;
    the spearmen fight with both models in contact (2 + 2 supporters). The core lets it fight (3 attacks)."""
    b = _fight(3.5, T9A, captain_base_d=1.0)
    (ev,) = rules(b, "T9A.CC.MAKE_WAY")
    assert (ev["swapped"], ev["matching_base"], ev["fights"]) == (False, False, False)
    assert _attacks(b) == {0: 4, 2: 4}
    assert _attacks(_fight(3.5, [], captain_base_d=1.0)) == {0: 3, 1: 3, 2: 4}


def test_t9a_cc_make_way_one_swap_per_model_in_contact() -> None:
    """T9A.CC.MAKE_WAY: slid 4.5 files, one spearman touches the orcs; the first captain swaps with it, the second
    finds no model in contact to swap with and does not strike (the core lets both strike)."""
    b = _fight(4.5, T9A, two=True)
    assert [(e["unit"], e["swapped"]) for e in rules(b, "T9A.CC.MAKE_WAY")] == [(1, True), (2, False)]
    assert _attacks(b) == {0: 1, 1: 3, 3: 2}
    assert _attacks(_fight(4.5, [], two=True)) == {0: 1, 1: 3, 2: 3, 3: 2}


def test_t9a_cc_make_way_core_unchanged_when_off() -> None:
    """Module off: the captain out of contact fights as in the core, and no T9A rule fires."""
    b = _fight(3.5, [])
    assert _attacks(b) == {0: 3, 1: 3, 2: 4}
    assert not [e for e in b.events if e["rule"].startswith("T9A.")]


# --------------------------------------------------------------------- whole battles
def test_t9a_characters_whole_battle_keeps_the_invariants() -> None:
    """T9A.CHAR.LEAVE, T9A.MARCH.TEST and T9A.CC.MAKE_WAY all fire in a random-v-random pitched_battle_t9a
    (seed 33, this module alone on), which ends with no invariant broken after any decision."""
    from battleline.env.rules.config import load_scenario
    from battleline.env.rules.invariants import InvariantTracker
    from battleline.training.play import agent_seed, make_agent

    b = Battle.from_scenario({**load_scenario("pitched_battle_t9a").model_dump(), "modules": T9A}, seed=33)
    assert b.state.modules == T9A
    agents = [make_agent("random", seed=agent_seed(33, side)) for side in (0, 1)]
    tracker = InvariantTracker()
    while not b.is_over:
        b.apply(agents[b.pending.player].act(b))
        assert tracker.check(b) == []
    fired = {e["rule"] for e in b.events if e["rule"].startswith("T9A.")}
    assert {"T9A.CHAR.LEAVE", "T9A.MARCH.TEST", "T9A.CC.MAKE_WAY"} <= fired
    assert not {"CORE.MOVE.LEAVE", "CORE.MOVE.MARCH_BLOCK"} & {e["rule"] for e in b.events}
