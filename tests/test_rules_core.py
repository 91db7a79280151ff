"""Exact-value tests of the core rules (RULESET.md IDs in each test's name or docstring)."""

from __future__ import annotations

import pytest

from battleline.env.rules import combat, psychology, tables
from battleline.env.rules.actions import Action, IllegalActionError
from battleline.env.rules.state import Engagement
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

DEPTH4 = 4 * INFANTRY_BASE  # 20 infantry models in 5 files


# --------------------------------------------------------------------- tables
@pytest.mark.parametrize(("ws_a", "ws_t", "needed"), [(4, 3, 3), (9, 1, 3), (3, 3, 4), (2, 3, 5), (1, 10, 5)])
def test_cc_to_hit_by_weapon_skill(ws_a: int, ws_t: int, needed: int) -> None:
    """CORE.CC.TO_HIT: 3+ if WS higher, 4+ if equal, 5+ if lower."""
    assert tables.cc_to_hit(ws_a, ws_t) == needed


@pytest.mark.parametrize(
    ("s", "t", "needed"), [(5, 3, 2), (10, 1, 2), (4, 3, 3), (3, 3, 4), (3, 4, 5), (3, 5, 6), (2, 9, 6)]
)
def test_to_wound_table(s: int, t: int, needed: int) -> None:
    """CORE.CC.TO_WOUND: ≥+2 → 2+; +1 → 3+; 0 → 4+; −1 → 5+; ≤−2 → 6+."""
    assert tables.to_wound(s, t) == needed


@pytest.mark.parametrize(("save", "s", "ap", "needed"), [(5, 3, False, 5), (5, 4, False, 6), (5, 5, False, 7), (4, 4, True, 6)])
def test_armour_save_modifiers(save: int, s: int, ap: bool, needed: int) -> None:
    """CORE.SAVE.MODIFIERS: −1 per S above 3, −1 more for Armour Piercing; beyond 6 no save."""
    assert tables.armour_save_needed(save, s, ap) == needed
    assert not tables.save_passes(2, 1)  # a natural 1 fails


def test_shooting_to_hit_scores() -> None:
    """CORE.SHOOT.TO_HIT: 7 − BS after modifiers; 7–9 need a 6 then 4+/5+/6+; 10+ impossible."""
    assert tables.shooting_to_hit(3, 0) == 4
    assert tables.shooting_to_hit(3, -1) == 5
    assert tables.shooting_to_hit(3, -4) == 8
    assert tables.shot_hits(8, 6, 5) and not tables.shot_hits(8, 6, 4)
    assert not tables.shot_hits(2, 1)  # a natural 1 always misses
    assert not tables.shot_hits(10, 6, 6)


# --------------------------------------------------------------------- charges
def _facing_pair(gap: float) -> tuple[list[dict], list[dict]]:
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("orc_warriors", 36, 18 + DEPTH4 + gap, 270)]
    return blue, red


def test_charge_range_m4_with_1_and_5_reaches_9_inches() -> None:
    """CORE.CHARGE.RANGE: M4 + the highest of 2D6 (1, 5) = 9" reaches a target 9" away."""
    b = battle(*_facing_pair(9.0), dice=[1, 5])
    b.apply(Action("charge", 0, 1))
    assert b.pending.kind == "react" and b.pending.player == 1
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (rng,) = rules(b, "CORE.CHARGE.RANGE")
    assert rng["range"] == 9 and rng["distance"] == pytest.approx(9.0) and rng["success"]
    (move,) = rules(b, "CORE.CHARGE.MOVE")
    assert move["facing"] == "front" and move["y"] == pytest.approx(18 + 9.0)


def test_failed_charge_moves_the_high_die() -> None:
    """CORE.CHARGE.FAILED: 9.5" away, dice 1 and 5 fail; the charger moves 5" towards the target."""
    b = battle(*_facing_pair(9.5), dice=[1, 5])
    y0 = b.unit(0).y
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (failed,) = rules(b, "CORE.CHARGE.FAILED")
    assert failed["high"] == 5 and failed["moved"] == pytest.approx(5.0)
    assert b.unit(0).y == pytest.approx(y0 + 5.0)
    assert not b.state.engagements


def test_charge_reach_is_m_plus_6() -> None:
    """CORE.CHARGE.ELIGIBLE: a target 10.2" away is out of an M4 unit's M + 6" reach."""
    b = battle(*_facing_pair(10.2))
    assert Action("charge", 0, 1) not in b.legal_actions()
    b = battle(*_facing_pair(9.9))
    assert Action("charge", 0, 1) in b.legal_actions()


@pytest.mark.parametrize(
    ("x", "y", "facing", "arc"),
    [
        (36.0, 24.0 + DEPTH4 + 5.0, 270.0, "front"),  # in front of the target, facing it
        (26.0, 24.0, 0.0, "left"),  # off the target's left flank (the target faces 90)
        (46.0, 24.0, 180.0, "right"),
        (36.0, 24.0 - DEPTH4 - 5.0, 90.0, "rear"),
    ],
)
def test_charger_lands_in_the_arc_it_starts_in(x: float, y: float, facing: float, arc: str) -> None:
    """CORE.GEO.UNIT_ARC / CORE.CHARGE.FACING: the arc holding the charger's front rank is the facing hit."""
    blue = [placement("marcher_spearmen", x, y, facing)]
    red = [placement("orc_warriors", 36, 24, 90)]
    b = battle(blue, red, dice=[6, 6])
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (move,) = rules(b, "CORE.CHARGE.MOVE")
    assert move["facing"] == arc


def test_illegal_action_leaves_battle_unchanged() -> None:
    """An illegal action raises and changes nothing (DESIGN: decision points)."""
    b = battle(*_facing_pair(9.0))
    before = b.to_json()
    with pytest.raises(IllegalActionError):
        b.apply(Action("charge", 1, 0))
    assert b.to_json() == before


# --------------------------------------------------------------------- combat result
def _engaged(facing: str = "front", blue_models: int = 20, red_models: int = 20, **blue_kw: object):
    """Blue spearmen touching red orcs' ``facing`` (placed flush)."""
    from battleline.env.rules.charges import contact_placement

    b = battle([placement("marcher_spearmen", 36, 10, 90, models=blue_models, **blue_kw)],
               [placement("orc_warriors", 36, 30, 90, models=red_models)], phase="combat")
    a, d = b.unit(0), b.unit(1)
    pose, _, _ = contact_placement(b, a, d, facing)
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 1, facing, charged=True, turn=b.state.turn)]
    b.events.clear()
    return b


def test_combat_result_bonuses() -> None:
    """CORE.CC.COMBAT_RESULT.*: wounds, charge, ranks (max +3), standard, flank, rear, outnumber, musician."""
    b = _engaged("rear", blue_models=12, red_models=20, command=["standard"])
    totals, parts = combat.combat_result(b, {0: [0], 1: [1]}, [2, 1], 0, b.state.engagements)
    # Blue: 2 wounds + charge + 1 rank (ranks 2 of 5, rank 3 of 2) + standard + rear 2.
    assert parts[0] == {"wounds": 2, "charge": 1, "ranks": 1, "standard": 1, "rear": 2}
    # Red: 1 wound + outnumber; no ranks with an enemy in its rear.
    assert parts[1] == {"wounds": 1, "outnumber": 1}
    assert totals == [7, 2]


def test_combat_result_flank_and_rank_cap() -> None:
    """CORE.CC.COMBAT_RESULT.FLANK +1; RANKS at most +3 (a 40-model unit 5 wide has 7 rear ranks)."""
    b = _engaged("left", blue_models=40)
    totals, parts = combat.combat_result(b, {0: [0], 1: [1]}, [0, 0], None, b.state.engagements)
    assert parts[0] == {"wounds": 0, "ranks": 3, "flank": 1, "outnumber": 1}
    assert parts[1] == {"wounds": 0}


def test_musician_breaks_a_tie() -> None:
    """CORE.CC.COMBAT_RESULT.MUSICIAN: tied totals, only one side with a musician: +1."""
    b = _engaged("front", blue_models=20, red_models=20, command=["musician"])
    totals, parts = combat.combat_result(b, {0: [0], 1: [1]}, [1, 1], None, b.state.engagements)
    assert parts[0]["musician"] == 1 and totals[0] == totals[1] + 1


# --------------------------------------------------------------------- break tests
@pytest.mark.parametrize(
    ("faces", "diff", "holds"),
    [([2, 3], 2, True), ([3, 3], 2, False), ([1, 1], 9, True), ([6, 6], 0, False)],
)
def test_break_test(faces: list[int], diff: int, holds: bool) -> None:
    """CORE.CC.BREAK_TEST: passes on 2D6 ≤ Ld − difference (Ld 7); a double 1 always passes."""
    b = _engaged("front", blue_models=10, red_models=20)
    b.dice._script = list(faces)
    assert combat.break_test(b, b.unit(0), diff, [b.unit(1)]) is holds
    (ev,) = rules(b, "CORE.CC.BREAK_TEST")
    assert ev["ld"] == 7 - diff and ev["roll"] == sum(faces)


def test_inspired_unit_tests_on_unmodified_ld() -> None:
    """CORE.CC.INSPIRED: more models than the largest enemy unit: unmodified Ld (7), 2D6 = 7 passes."""
    b = _engaged("front", blue_models=30, red_models=20)
    b.dice._script = [3, 4]
    assert combat.break_test(b, b.unit(0), 4, [b.unit(1)])
    assert rules(b, "CORE.CC.INSPIRED")


# --------------------------------------------------------------------- flee and pursuit
def test_broken_unit_caught_by_pursuit_is_destroyed() -> None:
    """CORE.CC.CAUGHT: flee 2D6 = 5, pursuit 2D6 = 6 ≥ 5: the fleeing unit is destroyed."""
    b = _engaged("front", blue_models=20, red_models=10)
    b.state.queue["pursuit"] = {"broken": [1], "ask": [], "answers": {"0": "pursue"}, "winner": 0}
    b.dice._script = [2, 3, 3, 3]
    combat._flee_and_pursue(b)
    assert b.unit(1).removed and not b.unit(0).removed
    (caught,) = rules(b, "CORE.CC.CAUGHT")
    assert caught["flee_roll"] == 5 and caught["pursuit_rolls"] == {"0": 6}
    (move,) = rules(b, "CORE.CC.PURSUIT_MOVE")
    assert move["roll"] == 6


def test_broken_unit_escapes_a_slow_pursuit_and_flees_its_roll() -> None:
    """CORE.CC.FLEE / CORE.PSY.FLEE.MOVE: flee 2D6 = 5 beats pursuit 3; the fleer ends 5"+ away, facing away."""
    b = _engaged("front", blue_models=20, red_models=10)
    y0 = b.unit(1).y
    b.state.queue["pursuit"] = {"broken": [1], "ask": [], "answers": {"0": "pursue"}, "winner": 0}
    b.dice._script = [2, 3, 1, 2]
    combat._flee_and_pursue(b)
    fleer = b.unit(1)
    assert fleer.fleeing and not fleer.removed
    assert fleer.facing == pytest.approx(270.0)  # away from the blue unit on its north side
    assert y0 - fleer.y >= 5.0 - 1e-9
    (flee,) = rules(b, "CORE.CC.FLEE")
    assert flee["roll"] == 5


def test_unit_fleeing_off_the_table_is_destroyed() -> None:
    """CORE.PSY.FLEE.DESTROYED: a unit 3" from the edge that flees 2D6 = 7 off it is destroyed."""
    b = battle([placement("marcher_spearmen", 36, 20, 90)], [placement("orc_warriors", 36, 48 - 3 - DEPTH4 / 2, 270)])
    b.dice._script = [3, 4]
    psychology.flee(b, b.unit(1), (b.unit(0).x, b.unit(0).y), "CORE.REACT.FLEE")
    red = b.unit(1)
    assert red.removed and red.fled_off
    (ev,) = rules(b, "CORE.PSY.FLEE.DESTROYED")
    assert ev["off_table"] is True


def test_one_inch_shift_takes_the_shortest_legal_spot_in_any_direction() -> None:
    """CORE.CHARGE.ONE_INCH in a real game (pitched_battle, line_advance vs random, seed 0): in turn 4 the
    Outriders' rear charge stops 0.226" from the Tusk Guard, which has no legal spot straight away (the Orc
    Warriors and the table edge); it is shifted 0.9", the minimum distance needed, in another direction."""
    from battleline.training.play import play_battle

    b = play_battle("pitched_battle", "line_advance", "random", 0)
    (ev,) = rules(b, "CORE.CHARGE.ONE_INCH")
    assert (ev["turn"], ev["unit"], ev["charger"], ev["shift"]) == (4, 15, 8, 0.9)
    assert (round(ev["x"], 3), round(ev["y"], 3)) == (13.422, 44.762)


def test_one_inch_shift_that_finds_no_spot_is_reported() -> None:
    """CORE.CHARGE.ONE_INCH: an Orc unit 0.2" beside the charged one, its back on the table edge and another
    Orc unit 0.2" on its other side, has no spot 1" clear of the charger within 3": it stays, reported
    (``shift`` None, ``blocked``, the gap 0.2")."""
    width = 5 * INFANTRY_BASE
    y = 48 - DEPTH4 / 2
    red = [placement("orc_warriors", 36 + k * (width + 0.2), y, 270) for k in range(3)]
    blue = [placement("marcher_spearmen", 36, y - DEPTH4 - 4.0, 90)]
    b = battle(blue, red, dice=[6, 6])
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (ev,) = rules(b, "CORE.CHARGE.ONE_INCH")
    assert (ev["unit"], ev["charger"], ev["shift"], ev["gap"], ev["blocked"]) == (2, 0, None, 0.2, True)
    assert (b.unit(2).x, b.unit(2).y) == (36 + width + 0.2, y)


def test_one_inch_rule_shifts_the_non_phasing_unit_after_a_charge() -> None:
    """CORE.CHARGE.ONE_INCH: an enemy left 0.5" from the charger is moved until 1" clear."""
    width = 5 * INFANTRY_BASE
    blue = [placement("marcher_spearmen", 36, 30 - DEPTH4 - 4.0, 90)]
    red = [placement("orc_warriors", 36, 30, 270), placement("orc_warriors", 36 + width + 0.5, 30 - DEPTH4, 270)]
    b = battle(blue, red, dice=[6, 6])
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (shift,) = rules(b, "CORE.CHARGE.ONE_INCH")
    assert shift["unit"] == 2 and shift["charger"] == 0
    from battleline.env.rules import geometry as geo
    from battleline.env.rules import space

    assert geo.distance(space.footprint(b.unit(0)), space.footprint(b.unit(2))) >= 1.0 - geo.EPS


def test_charge_catches_a_target_that_fled() -> None:
    """CORE.REACT.FLEE then CORE.CHARGE.VS_FLEEING: knights (M7) roll 7 + 6 = 13 ≥ 11" to the fled orcs: destroyed."""
    cav_depth = 50 / 25.4
    blue = [placement("order_knights", 36, 18, 90, models=5, files=5)]
    red = [placement("orc_warriors", 36, 18 + cav_depth / 2 + 9.0 + DEPTH4 / 2, 270)]
    b = battle(blue, red, dice=[1, 1, 6, 2])
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "flee"))
    end_declarations(b)
    (flee,) = rules(b, "CORE.REACT.FLEE")
    assert flee["unit"] == 1
    (rng,) = rules(b, "CORE.CHARGE.RANGE")
    assert rng["range"] == 13 and rng["distance"] == pytest.approx(11.0)
    (caught,) = rules(b, "CORE.CHARGE.VS_FLEEING")
    assert caught["caught"] and b.unit(1).removed
