"""Exact-value tests of the close-combat chapter (CORE.CC.*): rounds, strikes, pursuit."""

from __future__ import annotations

import pytest

from env.rules import combat, geometry as geo, space
from env.rules.actions import END_PHASE, Action
from env.rules.charges import contact_placement
from env.rules.dice import ScriptedDice
from env.rules.state import Engagement
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

DEPTH4 = 4 * INFANTRY_BASE  # 20 infantry models in 5 files


def _script(b, faces: list[int]) -> None:
    b.dice = ScriptedDice(faces, then_seed=1)
    b.dice.log = b._log_roll


def _front_pair(rounds: int = 0, turn: int = 1, blue_models: int = 20, red_models: int = 20):
    """Blue spearmen (I3) whose charge touches red orc warriors (I2) in the front, in the combat phase."""
    b = battle([placement("marcher_spearmen", 36, 10, 90, models=blue_models)],
               [placement("orc_warriors", 36, 30, 90, models=red_models)], phase="combat")
    a, d = b.unit(0), b.unit(1)
    pose, _, _ = contact_placement(b, a, d, "front")
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 1, "front", charged=True, turn=turn, rounds=rounds)]
    b.events.clear()
    return b


# --------------------------------------------------------------------- CORE.CC.ROUNDS
def test_charge_round_is_not_repeated_in_the_other_players_turn() -> None:
    """CORE.CC.ROUNDS, CORE.CC.COMBAT_RESULT.CHARGE, CORE.CC.STRIKE_ORDER.ROUND1/LATER: blue (first player)
    charges in game turn 1 and the combat fights R1 in blue's Close Combat phase (+1 charge, blue first). In
    red's Close Combat phase of the same game turn it fights its round 2: no charge bonus, strikes by I
    (blue I3, red I2), and blue's spears fight in an extra rank (they no longer count as charging)."""
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("orc_warriors", 36, 18 + DEPTH4 + 5.0, 270)]
    # Charge 6, 6; then every die a 1: nobody hits, red passes its break test on a double 1.
    b = battle(blue, red, dice=[6, 6] + [1] * 400)
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    while b.state.turn == 1:
        acts = b.legal_actions()
        b.apply(END_PHASE if any(a.kind == "end_phase" for a in acts) else acts[0])
    b.events = [e for e in b.events if e["turn"] == 1]  # (with no decision left, the engine may play on)
    rounds = [e["player"] for e in rules(b, "CORE.CC.ROUNDS")]
    assert rounds == [0, 1]  # blue's Close Combat phase, then red's, both in game turn 1
    seq = [(e["turn"], e["round_one"], e["charging_side"]) for e in rules(b, "CORE.CC.SEQUENCE")]
    assert seq == [(1, True, 0), (1, False, None)]
    charge = [(e["side"], e["value"]) for e in rules(b, "CORE.CC.COMBAT_RESULT.CHARGE")]
    assert charge == [(0, 1)]
    assert len(rules(b, "CORE.CC.STRIKE_ORDER.ROUND1")) == 1
    (later,) = rules(b, "CORE.CC.STRIKE_ORDER.LATER")
    assert later["steps"] == [[0, 3], [0, 2]]
    support = [(e["unit"], e["support"]) for e in rules(b, "CORE.CC.SUPPORT")]
    assert support == [(0, 5), (1, 5), (0, 10), (1, 5)]  # the spears' extra rank in round 2
