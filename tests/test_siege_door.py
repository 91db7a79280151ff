"""Assaulting a defended tower or the citadel through its door (SIEGE.TOWER.ASSAULT, SIEGE.CC.RESULT).

Blue holds the standard castle. Ten spearmen garrison the citadel C (x 18–24, y 0–6); orcs in the courtyard
touch its east face (x = 24) with their front edge 0.5" away. Exact values with scripted dice.
"""

from __future__ import annotations

from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.siege import castle as cs
from battleline.env.rules.siege import play
from tests.setups import placement, rules
from tests.test_siege import BASE, feed, siege_battle

GARRISON = placement("marcher_spearmen", 21, 3, 0, models=10, files=5)
"""Ten spearmen (5 files, 2 ranks) on the citadel's top."""


def orcs(models: int = 15, x_front: float = 24.5, **kw) -> dict:
    """Orc warriors, 5 files, in the courtyard facing west, front edge at ``x_front``."""
    ranks = -(-models // 5)
    return placement("orc_warriors", x_front + ranks * BASE / 2, 3.0, 180, models=models, files=5, **kw)


SPARE = placement("orc_warriors", 60, 44, 270, models=10, files=5)
"""Orcs far off, with moves to make: the Movement phase waits for them after the charges."""


def door_battle(red: list[dict] | None = None, blue: list[dict] | None = None):
    return siege_battle(blue=blue or [GARRISON], red=(red or [orcs()]) + [SPARE], phase="movement", player="red")


def assault_events(b, key: str) -> list[dict]:
    """The SIEGE.TOWER.ASSAULT events carrying ``key``."""
    return [e for e in rules(b, "SIEGE.TOWER.ASSAULT") if key in e]


def charges(b) -> list[Action]:
    return [a for a in b.legal_actions() if a.kind == "charge"]


def test_a_unit_touching_the_door_may_assault_the_garrison_and_is_engaged_without_contact():
    """SIEGE.TOWER.ASSAULT: the declaration needs no arc, sight or charge roll: the garrison holds (it cannot
    flee through the attacker), and the two are engaged at C's door with no base contact."""
    b = door_battle()
    spears, orc = b.unit(0), b.unit(1)
    c = cs.element(b.state, "C")
    assert cs.element_under(b.state, spears) is c and play.door_element(b.state, orc, spears) is c
    assert [a for a in charges(b) if a.unit == 1] == [Action("charge", 1, 0)]
    feed(b, [])
    b.apply(Action("charge", 1, 0))
    declared = assault_events(b, "declared")[-1]
    assert (declared["element"], declared["unit"], declared["target"], declared["declared"]) == ("C", 1, 0, True)
    react = rules(b, "CORE.REACT.DECLARE")[-1]
    assert (react["reaction"], react["forced"]) == ("hold", "door")
    # the declarations end: the assault arrives without a charge roll
    assert not rules(b, "CORE.CHARGE.RANGE") and not rules(b, "CORE.CHARGE.MOVE")
    assert b.pending.kind == "move"
    engaged = assault_events(b, "engaged")
    assert [(e["element"], e["unit"], e["target"], e["via"]) for e in engaged] == [("C", 1, 0, "courtyard")]
    assert c.door_fights == [[1, 0]] and play.door_fight(b.state, spears, orc) is c
    assert (orc.x, orc.y) == (24.5 + 3 * BASE / 2, 3.0)  # no charge move
    assert [(g.attacker, g.defender, g.charged) for g in b.state.engagements] == [(1, 0, True)]


def test_not_at_the_door_no_assault():
    """SIEGE.TOWER.ASSAULT: 2" off the citadel (beyond the 1" contact) there is no door to fight at; nor for
    cavalry, which may not enter towers."""
    b = door_battle(red=[orcs(x_front=26.0)])
    assert play.door_element(b.state, b.unit(1), b.unit(0)) is None and Action("charge", 1, 0) not in charges(b)
    b = door_battle(red=[placement("boar_riders", 24.5 + 1.0, 3.0, 180, models=5, files=5)])
    assert play.door_element(b.state, b.unit(1), b.unit(0)) is None


def fight(b, faces: list[int]) -> None:
    """Declare the assault, end the Movement phase's declarations and play on with ``faces`` into the fight."""
    feed(b, [])
    b.apply(Action("charge", 1, 0))
    if b.pending.kind == "charge":
        b.apply(END_PHASE)
    feed(b, faces)
    while not rules(b, "CORE.CC.ROUNDS") and b.pending.kind != "game_over":
        b.apply(END_PHASE)


def test_two_a_side_fight_at_the_door_the_garrison_breaks_and_is_destroyed_and_the_orcs_move_in():
    """SIEGE.CC.RESULT, SIEGE.TOWER.ASSAULT: 15 orcs (3 ranks) against 10 spearmen: 2 models a side fight, no
    supporting attacks (not even the spears'), no ranks or outnumber. Orcs first (they charged): to hit 4, 4
    (4+), to wound 4, 4 (4+), armour 1, 1 (5+ fails): 2 dead; 2 − 2 = 0 spearmen strike back. Result 2 + 1 charge
    = 3 to 0; the spearmen test Ld 7 − 3 = 4 on 3 + 4 = 7: broken, and a broken garrison is destroyed.
    The orcs (15 models: 25 fit on C) move in."""
    b = door_battle()
    fight(b, [4, 4, 4, 4, 1, 1, 3, 4])
    cc = rules(b, "SIEGE.CC.RESULT")
    assert [(e["at"], e["models"], e["fighters"]) for e in cc] == [("door", [15, 10], [2, 2])]
    attacks = rules(b, "CORE.CC.ATTACKS")
    assert [(e["unit"], e["fighters"], e["support"], e["attacks"]) for e in attacks] == [(1, 2, 0, 2)]
    ret = rules(b, "CORE.CC.RETURN_STRIKE")[-1]
    assert (ret["unit"], ret["fighters"], ret["lost"]) == (0, 0, 2)
    assert not rules(b, "CORE.CC.COMBAT_RESULT.RANKS") and not rules(b, "CORE.CC.COMBAT_RESULT.OUTNUMBER")
    cmp = rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")[-1]
    assert (cmp["totals"], cmp["winner"], cmp["difference"]) == ([0, 3], 1, 3)
    test = rules(b, "CORE.CC.BREAK_TEST")[-1]
    assert (test["unit"], test["ld"], test["roll"], test["passed"]) == (0, 4, 7, False)
    spears, orc, c = b.unit(0), b.unit(1), cs.element(b.state, "C")
    destroyed = assault_events(b, "destroyed")
    assert [(e["unit"], e["element"], e["broken"]) for e in destroyed] == [(0, "C", True)]
    assert not spears.alive and not rules(b, "SIEGE.BREAK.DEFENDER") and not rules(b, "CORE.CC.PURSUE_CHOICE")
    entered = assault_events(b, "entered")
    assert [(e["unit"], e["entered"], e["files"], e["controller"]) for e in entered] == [(1, True, 7, 1)]
    assert cs.element_under(b.state, orc) is c and (orc.x, orc.y, orc.files) == (21.0, 3.0, 7)
    assert c.controller == 1 and c.door_fights == [] and b.state.engagements == []


def test_a_broken_attacker_at_the_door_falls_back_unpursued_and_the_garrison_stays():
    """SIEGE.BREAK.ATTACKER at a door (DEFAULT: as at a wall): 10 orcs charge; to hit 1, 1 miss. The 2 spearmen
    hit on 4, 4, wound T4 on 5, 5 (5+), the orcs save 1, 1 (5+): 2 dead. Result 2 to 1 (the charge); the orcs,
    now 8 against 10, test Ld 7 − 1 = 6 on 6 + 6: broken. They fall back 3 + 4 = 7" from C, fleeing, not
    pursued; the garrison stays on C and the door fight is over."""
    b = door_battle(red=[orcs(models=10)])
    fight(b, [1, 1, 4, 4, 5, 5, 1, 1, 6, 6, 3, 4])
    cmp = rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")[-1]
    assert (cmp["totals"], cmp["winner"], cmp["difference"]) == ([2, 1], 0, 1)
    test = rules(b, "CORE.CC.BREAK_TEST")[-1]
    assert (test["unit"], test["ld"], test["roll"], test["passed"]) == (1, 6, 12, False)
    fell = [e for e in rules(b, "SIEGE.BREAK.ATTACKER") if "element" in e]
    assert [(e["unit"], e["element"], e["at"], e["distance"]) for e in fell] == [(1, "C", "door", 7)]
    spears, orc, c = b.unit(0), b.unit(1), cs.element(b.state, "C")
    assert orc.models == 8 and orc.fleeing and (round(orc.x, 3), orc.y, orc.facing) == (round(24.5 + BASE + 7, 3), 3.0, 0.0)
    assert not rules(b, "CORE.CC.PURSUE_CHOICE") and not rules(b, "CORE.CC.PURSUIT_MOVE")
    assert spears.alive and cs.element_under(b.state, spears) is c and (spears.x, spears.y) == (21.0, 3.0)
    assert c.door_fights == [] and b.state.engagements == [] and not assault_events(b, "entered")


def test_a_winner_too_big_for_the_tower_stays_at_the_door():
    """SIEGE.TOWER.ASSAULT: the winner enters up to the capacity; a unit is never split (DEFAULT), so 30 orcs
    at T1's courtyard face stay outside once its garrison is destroyed (T1 holds 5 × 5 = 25); same dice as
    the garrison's destruction above."""
    t1_garrison = placement("marcher_spearmen", 20, 16, 0, models=10, files=5)
    big = placement("orc_warriors", 20.01 + 5 * BASE / 2, 14 - 0.5 - 6 * BASE / 2, 90, models=30, files=5)
    b = siege_battle(blue=[t1_garrison], red=[big, SPARE], phase="movement", player="red")
    t1 = cs.element(b.state, "T1")
    assert play.door_element(b.state, b.unit(1), b.unit(0)) is t1 and t1.capacity(BASE, BASE) == 25
    fight(b, [4, 4, 4, 4, 1, 1, 3, 4])
    assert not b.unit(0).alive
    entered = assault_events(b, "entered")
    assert [(e["unit"], e["entered"], e["capacity"], e["models"]) for e in entered] == [(1, False, 25, 30)]
    assert cs.element_under(b.state, b.unit(1)) is None and t1.door_fights == []


def test_the_siege_attacker_assaults_a_garrison_at_the_door_it_touches():
    """SIEGE.TOWER.ASSAULT: siege_attacker declares the door assault on C's garrison; far from the door, it
    makes for the citadel's door instead of waiting."""
    from battleline.agents.siege import SiegeAttackerAgent

    b = door_battle()
    agent = SiegeAttackerAgent()
    agent.reset(b, 1)
    assert agent.act(b) == Action("charge", 1, 0)
    far = door_battle(red=[orcs(x_front=34.0)])
    agent.reset(far, 1)
    assert play.door_element(far.state, far.unit(1), far.unit(0)) is None
    options = ["advance", "march", "wheel_left_15", "wheel_right_15"]
    to_door = agent.to_door(far, far.unit(1), options, cs.element(far.state, "C"))
    assert to_door is not None and agent.move_option(far, far.unit(1), options) == to_door


def test_the_door_assault_is_a_charge_index_of_siege_v0s_mask():
    """SIEGE.TOWER.ASSAULT in Siege-v0: the door assault is the plain charge order (unit → garrison), so the
    mask allows exactly the engine's legal set and the index decodes back to it."""
    import numpy as np

    from battleline.env.siege_encoding import make_codec

    b = door_battle()
    codec = make_codec(4, len(b.state.castle))
    mask = codec.mask(b, 1)
    legal = sorted(codec.encode(a, b, 1) for a in b.legal_actions())
    assert sorted(np.flatnonzero(mask).tolist()) == legal
    i = codec.encode(Action("charge", 1, 0), b, 1)
    assert mask[i] and codec.block_of(i) != "siege" and codec.decode(i, b, 1) == Action("charge", 1, 0)
