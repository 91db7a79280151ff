"""Exact-value pins of core rules that fire in play but no other test names."""

from __future__ import annotations

import pytest

from env.rules.actions import Action
from env.rules.battle import Battle
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
