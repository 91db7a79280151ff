"""Siege orders in play (env.rules.siege.orders): war machines at castle elements, gates, undefended
sections, rams and blows on the structure, castle cover. Exact values with scripted dice.

The standard castle is blue's unless a test gives ``defender="red"`` (then it is turned half round:
wall S1 spans x 41–50, y 30–32 with its outer face at y = 30; the gate G x 34.5–37.5, y 30–32).
"""

from __future__ import annotations

import pytest

from battleline.env.rules.actions import Action
from battleline.env.rules.battle import IllegalActionError
from battleline.env.rules.siege import castle as cs
from tests.setups import end_declarations, placement, rules
from tests.test_siege import feed, siege_battle

RED_CASTLE_WALL = placement("orc_warriors", 45.5, 30.394, 270, models=10, files=10)
"""Orcs on red's wall S1 (one rank, front flush with its outer face at y = 30)."""


def red_castle(blue: list[dict], dice=None, **kw):
    return siege_battle(blue=blue, red=[RED_CASTLE_WALL], dice=dice, defender="red", player="blue", **kw)


def shots_at_elements(b) -> list[str]:
    return sorted(a.option for a in b.legal_actions() if a.kind == "shoot" and a.target is None)


# ----------------------------------------------------------------------------- war machines at elements
def test_cannon_shot_at_a_wall_rolls_d6_plus_10_on_the_wall_table():
    """SIEGE.DMG.CANNON: an automatic hit; artillery die face 3 (6, no misfire), D6 4: 4 + 10 = 14 shakes (+1)."""
    b = red_castle([placement("great_cannon", 36, 10, 90, models=3, files=1)])
    assert "element:S2" in shots_at_elements(b) and "element:G" in shots_at_elements(b)
    feed(b, [3, 4])
    b.apply(Action("shoot", 0, None, "element:S2"))
    cannon = rules(b, "SIEGE.DMG.CANNON")
    assert [(e["element"], e["artillery"], e["wounds"], e["strength"]) for e in cannon] == [("S2", [6], 4, 10)]
    value = rules(b, "SIEGE.DMG.VALUE")[-1]
    assert (value["value"], value["row"], value["source"], value["unit"]) == (14, "shakes", "cannon", 0)
    assert cs.element(b.state, "S2").damage_bonus == 1
    assert rules(b, "CORE.WM.FIRE_RULES")[-1]["element"] == "S2"


def test_cannon_misfire_at_a_wall_goes_to_the_misfire_table():
    """SIEGE.DMG.CANNON: the artillery die only checks for a misfire: face 6 MISFIRE, then CORE.WM.MISFIRE.CANNON 4."""
    b = red_castle([placement("great_cannon", 36, 10, 90, models=3, files=1)])
    feed(b, [6, 4])
    b.apply(Action("shoot", 0, None, "element:S1"))
    assert rules(b, "SIEGE.DMG.CANNON")[-1]["misfire"] is True
    assert rules(b, "CORE.WM.MISFIRE.CANNON")[0]["roll"] == 4
    assert cs.element(b.state, "S1").damage_bonus == 0 and not rules(b, "SIEGE.DMG.VALUE")


def test_cannon_double_charge_at_a_wall_adds_1_and_rolls_two_artillery_dice():
    """SIEGE.DMG.CANNON: the double charge is a choice of the cannon's shot: artillery faces 3 and 2 (6, 4: no
    misfire), D6 4: 4 + 10 + 1 = 15 heavily damaged (+1); nobody stands on S2, so no further dice."""
    import numpy as np

    from battleline.env.siege_encoding import SiegeActionCodec

    b = red_castle([placement("great_cannon", 36, 10, 90, models=3, files=1)])
    opts = shots_at_elements(b)
    assert {"double_charge:S2", "double_charge:G", "element:S2"} <= set(opts)
    assert len([o for o in opts if o.startswith("double_charge:")]) == len([o for o in opts if o.startswith("element:")])
    codec = SiegeActionCodec(1, 10)
    mask = codec.mask(b, 0)
    assert {codec.decode(int(i), b, 0) for i in np.flatnonzero(mask)} == set(b.legal_actions())
    assert codec.describe(codec.encode(Action("shoot", 0, None, "double_charge:S2"), b, 0)).startswith("double_charge")
    feed(b, [3, 2, 4])
    b.apply(Action("shoot", 0, None, "double_charge:S2"))
    ev = rules(b, "SIEGE.DMG.CANNON")[-1]
    assert (ev["artillery"], ev["wounds"], ev["double_charge"]) == ([6, 4], 4, True)
    v = rules(b, "SIEGE.DMG.VALUE")[-1]
    assert (v["base"], v["modifiers"], v["value"], v["row"]) == (14, 1, 15, "heavily_damaged")
    assert cs.element(b.state, "S2").damage_bonus == 1


def test_cannon_double_charge_misfires_on_either_die():
    """SIEGE.DMG.CANNON: a MISFIRE on the second artillery die (face 6) misfires: CORE.WM.MISFIRE.CANNON rolls 4."""
    b = red_castle([placement("great_cannon", 36, 10, 90, models=3, files=1)])
    feed(b, [2, 6, 4])
    b.apply(Action("shoot", 0, None, "double_charge:S1"))
    ev = rules(b, "SIEGE.DMG.CANNON")[-1]
    assert (ev["artillery"], ev["misfire"]) == ([4, "MISFIRE"], True)
    assert rules(b, "CORE.WM.MISFIRE.CANNON")[0]["roll"] == 4 and not rules(b, "SIEGE.DMG.VALUE")


def test_only_cannons_may_double_charge():
    """SIEGE.DMG.CANNON: a bolt thrower or stone thrower has no double charge."""
    chukka = siege_battle(red=[placement("spear_chukka", 36, 40, 270, models=2, files=1)])
    lobber = siege_battle(red=[placement("rock_lobber", 36, 40, 270, models=3, files=1)])
    assert not [o for b in (chukka, lobber) for o in shots_at_elements(b) if o.startswith("double_charge:")]
    with pytest.raises(IllegalActionError):
        chukka.apply(Action("shoot", 1, None, "double_charge:G"))


def test_bolt_thrower_at_the_gate_rolls_for_gate_or_section():
    """SIEGE.DMG.GATE_SHOTS: D6 5 strikes the gate; D3 (face 6: 3) + S6 + bonus 2 = 11: crack (+1, bonus 3)."""
    b = siege_battle(red=[placement("spear_chukka", 36, 40, 270, models=2, files=1)])
    g = cs.element(b.state, "G")
    g.damage_bonus = 2
    assert "element:G" in shots_at_elements(b)
    feed(b, [5, 6])
    b.apply(Action("shoot", 0 + 1, None, "element:G"))
    assert rules(b, "SIEGE.DMG.GATE_SHOTS")[-1]["hit"] == "G"
    assert rules(b, "SIEGE.DMG.VALUE")[-1]["value"] == 11
    assert rules(b, "SIEGE.DMG.GATE")[-1]["row"] == "crack" and g.damage_bonus == 3 and g.gate == "closed"


def test_bolt_at_the_gate_on_1_to_4_strikes_its_wall_section():
    b = siege_battle(red=[placement("spear_chukka", 36, 40, 270, models=2, files=1)])
    feed(b, [4, 6])  # D6 4: the wall S2; D3 3 + 6 = 9: no effect
    b.apply(Action("shoot", 1, None, "element:G"))
    assert rules(b, "SIEGE.DMG.GATE_SHOTS")[-1]["hit"] == "S2"
    v = rules(b, "SIEGE.DMG.VALUE")[-1]
    assert (v["element"], v["value"], v["row"]) == ("S2", 9, "no_effect")


def test_stone_thrower_may_not_target_the_gate_and_hits_the_element_under_its_hole():
    """SIEGE.DMG.GATE_SHOTS: no gate for a stone thrower. SIEGE.DMG.TEMPLATE: direct HIT lands on S2's centre:
    automatic, D6 6 + 9 = 15 heavily damaged (+1); the spearmen on S1 are not on S2 and roll nothing."""
    b = siege_battle(red=[placement("rock_lobber", 36, 40, 270, models=3, files=1)])
    opts = shots_at_elements(b)
    assert "element:G" not in opts and "element:S2" in opts
    feed(b, [1, 5, 0.0, 6])  # artillery 2, scatter HIT (direction 0), wounds D6 6
    b.apply(Action("shoot", 1, None, "element:S2"))
    tpl = rules(b, "SIEGE.DMG.TEMPLATE")[-1]
    assert (tpl["element"], tpl["hole_on"], tpl["wounds"], tpl["strength"]) == ("S2", True, 6, 9)
    assert rules(b, "SIEGE.DMG.VALUE")[-1]["value"] == 15
    assert cs.element(b.state, "S2").damage_bonus == 1 and cs.element(b.state, "S2").results == ["heavily_damaged"]


def test_stone_off_every_element_strikes_the_aimed_one_on_4_plus():
    """SIEGE.DMG.TEMPLATE: the arrow carries the stone 10" north (90°) off the walls: a 3 misses, the wall is untouched."""
    b = siege_battle(red=[placement("rock_lobber", 36, 40, 270, models=3, files=1)])
    feed(b, [5, 1, 90.0, 3])  # artillery 10, scatter ARROW 90°, the 4+ roll: 3
    b.apply(Action("shoot", 1, None, "element:S2"))
    tpl = rules(b, "SIEGE.DMG.TEMPLATE")[-1]
    assert (tpl["hole_on"], tpl["roll"], tpl["hit"]) == (False, 3, False)
    assert cs.element(b.state, "S2").damage_bonus == 0


def test_element_shots_need_range_and_only_the_enemy_castle():
    far = siege_battle(red=[placement("spear_chukka", 36, 46, 270, models=2, files=1)])
    assert "element:C" not in shots_at_elements(far)  # C lies 41" + away behind the walls: out of sight
    own = siege_battle(blue=[placement("great_cannon", 36, 8, 90, models=3, files=1)], player="blue",
                       red=[placement("orc_warriors", 36, 40, 270)])
    assert shots_at_elements(own) == []  # never at one's own castle
    with pytest.raises(IllegalActionError):
        own.apply(Action("shoot", 0, None, "element:S2"))


# ----------------------------------------------------------------------------- cover and 15-16
def test_castle_cover_stone_hard_wood_soft_in_shooting():
    """SIEGE.CASTLE.WALL: shooters at troops on a stone parapet −2, wooden −1, once the parapet is destroyed 0."""
    from battleline.env.rules import shooting

    for material, want in (("stone", -2), ("wood", -1)):
        b = siege_battle(red=[placement("orc_archers", 26.5, 30, 270, models=10, files=10)], material=material)
        assert shooting.cover(b, b.unit(1), b.unit(0)) == want
    cs.element(b.state, "S1").parapet_destroyed = True
    assert shooting.cover(b, b.unit(1), b.unit(0)) == 0


def test_heavily_damaged_units_skip_their_next_shooting_phase():
    """SIEGE.DMG.WALL 15–16: a unit that rolled 4+ may not shoot in its next Shooting phase, then may again."""
    from battleline.env.rules import shooting

    b = siege_battle(blue=[placement("marcher_crossbowmen", 26.5, 17.606, 90, models=10, files=10)],
                     red=[placement("orc_warriors", 26.5, 26, 270)], phase="shooting", player="blue")
    assert any(a.kind == "shoot" for a in b.legal_actions())
    cs.element(b.state, "S1").no_shoot = [0]
    b.unit(0).flags.clear()
    shooting.start(b)
    assert not shooting.can_shoot(b, b.unit(0)) and cs.element(b.state, "S1").no_shoot == []
    assert rules(b, "SIEGE.DMG.WALL")[-1]["shooting_lost"] is True
    b.unit(0).flags.clear()
    shooting.start(b)
    assert shooting.can_shoot(b, b.unit(0))


# ----------------------------------------------------------------------------- the flat action space
def test_siege_codec_encodes_element_orders_exactly():
    """env.siege_encoding: the mask is exactly the legal set, element shots included, and decodes back."""
    import numpy as np

    from battleline.env.siege_encoding import SiegeActionCodec, castle_elements

    b = siege_battle(red=[placement("rock_lobber", 36, 40, 270, models=3, files=1), placement("orc_warriors", 20, 30, 270)])
    codec = SiegeActionCodec(2, castle_elements("siege"))
    assert codec.size == codec.siege + 2 * 10 * 6
    mask = codec.mask(b, 1)
    legal = b.legal_actions()
    assert int(mask.sum()) == len(legal)
    decoded = {codec.decode(int(i), b, 1) for i in np.flatnonzero(mask)}
    assert decoded == set(legal)
    i = codec.encode(Action("shoot", 1, None, "element:S2"), b, 1)
    assert codec.block_of(i) == "siege" and codec.describe(i) == "element own 0 -> castle element 2"


def test_siege_attacker_bombards_the_gate_then_the_most_defended_wall():
    from battleline.agents.siege import SiegeAttackerAgent

    agent = SiegeAttackerAgent()
    chukka = siege_battle(red=[placement("spear_chukka", 36, 40, 270, models=2, files=1)])
    agent.reset(chukka, 1)
    assert agent.act(chukka) == Action("shoot", 1, None, "element:G")
    lobber = siege_battle(red=[placement("rock_lobber", 36, 40, 270, models=3, files=1)])
    agent.reset(lobber, 1)
    assert agent.act(lobber) == Action("shoot", 1, None, "element:S1")  # the spearmen's section


# ----------------------------------------------------------------------------- gates
YARD = placement("sworn_greatswords", 36, 8, 90, models=15, files=5)
"""Greatswords in blue's courtyard (inside the castle)."""


def moves(b, uid: int) -> list[str]:
    return sorted(a.option for a in b.legal_actions() if a.kind == "move" and a.unit == uid)


def test_two_models_inside_open_and_close_the_gate_at_no_cost():
    """SIEGE.CASTLE.GATE: a unit inside opens the gate and may still move; one gate order per unit and turn."""
    b = siege_battle(blue=[YARD, placement("marcher_captain", 30, 6, 90, models=1, files=1)],
                     red=[placement("orc_warriors", 36, 30, 270)], phase="movement", player="blue")
    assert "gate_open:G" in moves(b, 0)
    assert not any(o.startswith("gate_") for o in moves(b, 1))  # a lone character cannot
    assert not any(o.startswith("gate_") for o in moves(b, 2))  # red is not the phasing player
    b.apply(Action("move", 0, None, "gate_open:G"))
    assert cs.element(b.state, "G").gate == "open"
    ev = rules(b, "SIEGE.CASTLE.GATE")[-1]
    assert (ev["element"], ev["unit"], ev["gate"], ev["models"]) == ("G", 0, "open", 15)
    assert "advance" in moves(b, 0) and "gate_close:G" not in moves(b, 0)
    assert cs.passable(cs.element(b.state, "G"))


def test_outsiders_cannot_work_the_gate_and_a_busy_gateway_stays_open():
    b = siege_battle(blue=[YARD], red=[placement("orc_warriors", 36, 30, 270)], phase="movement", player="red")
    assert not any(o.startswith("gate_") for o in moves(b, 1))  # outside the castle
    g = cs.element(b.state, "G")
    g.gate = "open"
    b2 = siege_battle(blue=[YARD], red=[placement("orc_warriors", 36, 30, 270)], phase="movement", player="blue")
    cs.element(b2.state, "G").gate = "open"
    b2._legal_cache = None
    assert "gate_close:G" in moves(b2, 0)
    b2.unit(1).y = 18.0  # orcs pushed into the gateway
    b2._legal_cache = None
    assert "gate_close:G" not in moves(b2, 0)


# ----------------------------------------------------------------------------- rams and blows


def at_gate(models: int = 20, **kw) -> dict:
    """Orcs (5 files) facing the gate, front 0.5" from the outer face (y = 18)."""
    ranks = -(-models // 5)
    return placement("orc_warriors", 36, 18.5 + ranks * 20 / 25.4 / 2, 270, models=models, files=5, **kw)


def test_ram_strikes_the_gate_once_in_its_close_combat_phase():
    """SIEGE.EQUIP.RAM: base 7 + D6 4 = 11: crack (+1)."""
    b = siege_battle(blue=[YARD], red=[at_gate(equipment={"ram": 1})], phase="combat", dice=[4])
    ram = rules(b, "SIEGE.EQUIP.RAM")
    assert [(e["element"], e["roll"], e["base"]) for e in ram] == [("G", 4, 11)]
    g = cs.element(b.state, "G")
    assert g.results == ["crack"] and g.damage_bonus == 1


def test_protected_ram_against_a_reinforced_gate():
    """SIEGE.EQUIP.PROTECTED_RAM, SIEGE.EQUIP.REINFORCED_GATE: 7 + 6 = 13, −1 = 12: crack, not buckled."""
    b = siege_battle(blue=[YARD], red=[at_gate(equipment={"protected_ram": 1})], phase="combat", dice=[6],
                     reinforced_gate=True)
    assert rules(b, "SIEGE.EQUIP.PROTECTED_RAM")[-1]["base"] == 13
    v = rules(b, "SIEGE.DMG.VALUE")[-1]
    assert (v["value"], v["reinforced"], v["row"]) == (12, True, "crack")


def test_models_in_contact_strike_the_structure():
    """SIEGE.DMG.MELEE: 5 orcs touch the gate: 5 blows of S3 + 1 W = 4, no effect on the gate table."""
    b = siege_battle(blue=[YARD], red=[at_gate()], phase="combat")
    melee = rules(b, "SIEGE.DMG.MELEE")
    assert [(e["element"], e["blows"], e["base"]) for e in melee] == [("G", 5, 4)]
    assert [e["value"] for e in rules(b, "SIEGE.DMG.VALUE")] == [4] * 5
    assert cs.element(b.state, "G").damage_bonus == 0


# ----------------------------------------------------------------------------- undefended walls
def test_unit_with_gear_occupies_an_undefended_section_in_one_rank():
    """SIEGE.CAPTURE.UNDEFENDED: 10 orcs with ladders at the foot of empty S1 (capacity 11) step onto it."""
    ladders = placement("orc_warriors", 26.5, 18.5 + 20 / 25.4 / 2, 270, models=10, files=10, equipment={"ladders": 2})
    bare = placement("orc_warriors", 45.5, 18.5 + 20 / 25.4, 270, models=10, files=5)
    big = placement("orc_warriors", 26.5, 30, 270, models=20, files=5, equipment={"ladders": 4})
    b = siege_battle(blue=[YARD], red=[ladders, bare, big], phase="movement", player="red")
    end_declarations(b)
    assert "occupy:S1" in moves(b, 1)
    assert not any(o.startswith("occupy") for o in moves(b, 2) + moves(b, 3))  # no gear; far and too many
    b.apply(Action("move", 1, None, "occupy:S1"))
    u, s1 = b.unit(1), cs.element(b.state, "S1")
    assert cs.element_under(b.state, u) is s1 and u.ranks == 1 and s1.controller == 1
    ev = rules(b, "SIEGE.CAPTURE.UNDEFENDED")[-1]
    assert (ev["element"], ev["unit"], ev["cost"]) == ("S1", 1, 2.0)
    assert cs.check_invariants(b.state) == []


def test_a_unit_in_an_open_gateway_stands_on_no_element():
    """SIEGE.CASTLE.GATE: a unit passing the open gate is below the parapet, not on S2; the walls still block."""
    b = siege_battle(blue=[YARD], red=[placement("orc_warriors", 36, 30, 270, models=10, files=3)], phase="movement",
                     player="red")
    cs.element(b.state, "G").gate = "open"
    u = b.unit(1)
    u.y = 17.0
    assert cs.element_under(b.state, u) is None and cs.units_on(b.state, cs.element(b.state, "S2")) == []
    assert cs.check_invariants(b.state) == []
    u.files = 5  # 3.9" wide and wholly within the wall's outline: on the parapet, in 2 ranks
    assert cs.check_invariants(b.state) == ["unit 1 (Orc Warriors) is on wall S2 in 2 ranks"]


def test_a_unit_cut_down_in_the_gateway_stays_below_the_parapet():
    """SIEGE.CASTLE.WALL, SIEGE.CASTLE.GATE: greatswords (15 in 3 files, 5 ranks) hold the open gate, front on its
    outer face (y = 18), against orcs outside; 9 slain, 6 are left in 2 ranks, 2.36" x 1.57", front still at y = 18
    (centre 17.213), wholly within the 3" x 2" gateway: below the parapet, on no element, so the fight is no wall
    assault (before, they stood on wall S2 in 2 ranks and the orcs could take its parapet)."""
    from battleline.env.rules.casualties import apply_wounds
    from battleline.env.rules.siege import play
    from battleline.env.rules.state import Engagement

    depth = 5 * 20 / 25.4
    b = siege_battle(blue=[placement("sworn_greatswords", 36, 18 - depth / 2, 90, models=15, files=3)],
                     red=[placement("orc_warriors", 36, 18 + 20 / 25.4, 270, models=10, files=5)], phase="combat",
                     player="red")
    cs.element(b.state, "G").gate = "open"
    gs, orcs = b.unit(0), b.unit(1)
    b.state.engagements = [Engagement(1, 0, "front", charged=True, turn=b.state.turn)]
    assert cs.element_under(b.state, gs) is None and b.check_invariants() == []
    apply_wounds(b, gs, 9, rule="CORE.CC.CASUALTIES")
    assert (gs.models, gs.ranks, gs.x, round(gs.y, 4)) == (6, 2, 36.0, 17.2126)
    assert cs.element_under(b.state, gs) is None and cs.units_on(b.state, cs.element(b.state, "S2")) == []
    assert play.at_wall(b.state, [gs], [orcs]) is None
    assert cs.check_invariants(b.state) == [] and b.check_invariants() == []


# ----------------------------------------------------------------------------- towers and walking the walls
def test_undefended_citadel_entered_from_the_courtyard_wins_the_siege():
    """SIEGE.TOWER.ASSAULT: orcs at C's courtyard face enter it (7 files across its 6" top); SIEGE.SCEN.VICTORY."""
    from battleline.env.rules.siege import play

    orcs = placement("orc_warriors", 24 + 0.5 + 20 / 25.4, 3.0, 180, models=10, files=5)
    b = siege_battle(blue=[YARD], red=[orcs], phase="movement", player="red")
    end_declarations(b)
    assert "occupy:C" in moves(b, 1) and "occupy:T3" not in moves(b, 1)  # T3 is out of reach
    b.apply(Action("move", 1, None, "occupy:C"))
    u, c = b.unit(1), cs.element(b.state, "C")
    assert cs.element_under(b.state, u) is c and u.files == 7 and c.controller == 1
    ev = rules(b, "SIEGE.TOWER.ASSAULT")[-1]
    assert (ev["element"], ev["via"], ev["undefended"]) == ("C", "courtyard", True)
    assert play.winner(b.state) == 1


def test_walking_the_walls_from_a_held_section_to_a_tower_and_the_next_section():
    """SIEGE.MOVE.WALLS: from S1, which red holds, into T1 (5 files on its 4" top) or onto the empty S2."""
    on_s1 = placement("orc_warriors", 26.5, 16 + 20 / 25.4 / 2, 270, models=10, files=10)
    b = siege_battle(blue=[YARD], red=[on_s1], phase="movement", player="red")
    end_declarations(b)
    s1 = cs.element(b.state, "S1")
    assert cs.element_under(b.state, b.unit(1)) is s1
    assert not any(o.startswith("occupy") for o in moves(b, 1))  # S1 is still blue's
    s1.controller = 1
    b._legal_cache = None
    assert {"occupy:T1", "occupy:S2"} <= set(moves(b, 1))
    b.apply(Action("move", 1, None, "occupy:S2"))
    assert cs.element_under(b.state, b.unit(1)).id == "S2" and b.unit(1).ranks == 1
    assert rules(b, "SIEGE.MOVE.WALLS")[-1] == {**rules(b, "SIEGE.MOVE.WALLS")[-1], "start": "S1", "end": "S2"}
    assert cs.check_invariants(b.state) == []


def test_policy_agent_reads_a_siege_action_mask():
    """A policy trained on Siege-v0 has the castle block in its mask; the agent rebuilds the siege codec."""
    from types import SimpleNamespace

    from gymnasium import spaces

    from battleline.agents.learned import PolicyAgent
    from battleline.env.observation import Observer
    from battleline.env.siege_encoding import SiegeActionCodec

    codec = SiegeActionCodec(6, 10)
    agent = PolicyAgent(SimpleNamespace(observation_space=Observer(codec).space(), action_space=spaces.Discrete(codec.size)))
    assert isinstance(agent.codec, SiegeActionCodec) and agent.codec.elements == 10 and agent.codec.size == codec.size


# ----------------------------------------------------------------------------- stepping up from the courtyard
AT_S1_INSIDE = placement("marcher_spearmen", 26.0, 16 - 0.5 - 20 / 25.4 / 2, 90, models=10, files=10)
"""Spearmen in blue's courtyard, one rank, front 0.5" from S1's inner face (y = 16)."""


def test_defenders_step_up_from_the_courtyard_onto_their_wall_for_half_movement():
    """SIEGE.MOVE.WALLS: 10 spearmen (M4) touching S1 from the courtyard step up for M/2 = 2", one rank,
    front flush with the outer face (y = 18), facing out; their move ends there."""
    far = placement("marcher_spearmen", 36, 8, 90, models=10, files=10)  # 7" from every inner face
    wide = placement("marcher_spearmen", 44.5, 16 - 0.5 - 20 / 25.4, 90, models=26, files=13)  # S2 holds 12, S3 11
    b = siege_battle(blue=[AT_S1_INSIDE, far, wide], red=[placement("orc_warriors", 36, 40, 270)], phase="movement",
                     player="blue")
    end_declarations(b)
    assert [o for o in moves(b, 0) if o.startswith("occupy")] == ["occupy:S1"]
    assert not any(o.startswith("occupy") for o in moves(b, 1) + moves(b, 2))
    from battleline.env.siege_encoding import SiegeActionCodec

    codec = SiegeActionCodec(3, 10)  # Siege-v0's block: the step is its occupy order, and the mask is the legal set
    assert int(codec.mask(b, 0).sum()) == len(b.legal_actions())
    assert codec.describe(codec.encode(Action("move", 0, None, "occupy:S1"), b, 0)) == "occupy own 0 -> castle element 1"
    b.apply(Action("move", 0, None, "occupy:S1"))
    u, s1 = b.unit(0), cs.element(b.state, "S1")
    assert cs.element_under(b.state, u) is s1 and (u.files, u.ranks, u.facing) == (10, 1, 90.0)
    assert (round(u.x, 3), round(u.y, 3)) == (26.0, round(18 - 20 / 25.4 / 2, 3))
    ev = rules(b, "SIEGE.MOVE.WALLS")[-1]
    assert (ev["unit"], ev["start"], ev["end"], ev["cost"], ev["controller"]) == (0, "courtyard", "S1", 2.0, 0)
    assert moves(b, 0) == [] and cs.check_invariants(b.state) == []


def test_no_step_up_onto_a_wall_the_enemy_stands_on_nor_for_cavalry():
    """SIEGE.MOVE.WALLS: a section with enemies on it is no step; cavalry never go onto walls (siege.md §4)."""
    knights = placement("order_knights", 45.5, 16 - 0.5 - 1.0, 90, models=5, files=5)
    b = siege_battle(blue=[AT_S1_INSIDE, knights], red=[placement("orc_warriors", 26.5, 16 + 20 / 25.4 / 2, 270,
                                                                   models=10, files=10)],
                     phase="movement", player="blue")
    end_declarations(b)
    assert cs.element_under(b.state, b.unit(2)).id == "S1"
    assert not any(o.startswith("occupy") for o in moves(b, 0) + moves(b, 1))


def test_attackers_in_the_courtyard_step_up_onto_an_empty_enemy_section():
    """SIEGE.MOVE.WALLS (siege.md A-20): from inside the castle no climbing gear is needed; red's orcs (M4)
    take blue's empty S1 from the courtyard for 2", facing the courtyard, and hold it."""
    orcs = placement("orc_warriors", 26.0, 16 - 0.5 - 20 / 25.4 / 2, 90, models=10, files=10)
    b = siege_battle(blue=[placement("marcher_spearmen", 45.5, 17.606, 90, models=10, files=10)], red=[orcs],
                     phase="movement", player="red")
    end_declarations(b)
    assert "occupy:S1" in moves(b, 1)
    b.apply(Action("move", 1, None, "occupy:S1"))
    u = b.unit(1)
    assert cs.element_under(b.state, u).id == "S1" and u.facing == 270.0 and u.ranks == 1
    assert rules(b, "SIEGE.MOVE.WALLS")[-1]["cost"] == 2.0 and cs.element(b.state, "S1").controller == 1


# ----------------------------------------------------------------------------- squeezing through the gateway
def orcs_at_gate(models: int) -> dict:
    """Orcs in 10 files (7.87" wide, more than the 3" gateway) facing blue's gate, front 0.5" from its outer face."""
    return placement("orc_warriors", 36, 18.5 + -(-models // 10) * 20 / 25.4 / 2, 270, models=models, files=10)


def test_a_unit_wider_than_the_gateway_squeezes_in_and_reforms_behind_the_gate():
    """SIEGE.CASTLE.GATE (siege.md §3.3): 10 orcs in one rank (M4) at the open gate: 0.5 + 2 (the wall) + 0.787
    (their depth) = 3.287" ≤ 4: they re-form in the courtyard, rear edge against the inner face (y = 16), facing
    in. 20 orcs in 2 ranks need 4.075": more than M4, so they do not get in."""
    import numpy as np

    from battleline.env.siege_encoding import SiegeActionCodec

    b = siege_battle(blue=[YARD], red=[orcs_at_gate(10), placement("orc_warriors", 26.5, 19.7, 270, models=10, files=5)],
                     phase="movement", player="red")
    end_declarations(b)
    assert not any(o.startswith("through_gate") for o in moves(b, 1))  # the gate is closed
    cs.element(b.state, "G").gate = "open"
    b._legal_cache = None
    assert "through_gate:G" in moves(b, 1) and not any(o.startswith("through_gate") for o in moves(b, 2))
    codec = SiegeActionCodec(2, 10)
    assert {codec.decode(int(i), b, 1) for i in np.flatnonzero(codec.mask(b, 1))} == set(b.legal_actions())
    b.apply(Action("move", 1, None, "through_gate:G"))
    u = b.unit(1)
    assert (round(u.x, 3), round(u.y, 3), u.facing, u.files) == (36.0, round(16 - 20 / 25.4 / 2 - 0.01, 3), 270.0, 10)
    ev = rules(b, "SIEGE.CASTLE.GATE")[-1]
    assert (ev["squeeze"], ev["way"], ev["cost"], ev["allowed"], ev["came_out_short"]) == (True, "in", 3.287, 4.0, False)
    assert moves(b, 1) == [] and cs.check_invariants(b.state) == []
    two_ranks = siege_battle(blue=[YARD], red=[orcs_at_gate(20)], phase="movement", player="red")
    end_declarations(two_ranks)
    cs.element(two_ranks.state, "G").gate = "open"
    two_ranks._legal_cache = None
    assert not any(o.startswith("through_gate") for o in moves(two_ranks, 1))


def test_a_smashed_gate_halves_the_squeeze_and_a_unit_going_out_comes_out_short():
    """SIEGE.CASTLE.GATE: through a smashed gate 10 orcs may move only M/2 = 2" < 3.287": no way in. 15 spearmen
    (5 files, 3 ranks) going out need 0.5 + 2 + 2.362 = 4.862" > M4: they come out all the same, rear edge
    against the outer face (y = 18), facing out."""
    smashed = siege_battle(blue=[YARD], red=[orcs_at_gate(10)], phase="movement", player="red")
    end_declarations(smashed)
    cs.element(smashed.state, "G").gate = "smashed"
    smashed._legal_cache = None
    assert not any(o.startswith("through_gate") for o in moves(smashed, 1))
    out = placement("marcher_spearmen", 36, 16 - 0.5 - 3 * 20 / 25.4 / 2, 90, models=15, files=5)
    b = siege_battle(blue=[out], red=[placement("orc_warriors", 36, 40, 270)], phase="movement", player="blue")
    end_declarations(b)
    cs.element(b.state, "G").gate = "open"
    b._legal_cache = None
    b.apply(Action("move", 0, None, "through_gate:G"))
    u = b.unit(0)
    assert (round(u.x, 3), round(u.y, 3), u.facing) == (36.0, round(18 + 3 * 20 / 25.4 / 2 + 0.01, 3), 90.0)
    ev = rules(b, "SIEGE.CASTLE.GATE")[-1]
    assert (ev["way"], ev["cost"], ev["allowed"], ev["came_out_short"]) == ("out", 4.862, 4.0, True)
