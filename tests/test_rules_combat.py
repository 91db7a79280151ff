"""Exact-value tests of the close-combat chapter (CORE.CC.*): rounds, strikes, pursuit."""

from __future__ import annotations

import pytest

from battleline.env.rules import combat, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.charges import contact_placement
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.state import Engagement
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

DEPTH4 = 4 * INFANTRY_BASE  # 20 infantry models in 5 files


def _script(b, faces: list[int]) -> None:
    b.dice = ScriptedDice(faces, then_seed=1)
    b.dice.log = b._log_roll


def _front_pair(rounds: int = 0, turn: int = 1, blue_models: int = 20, red_models: int = 20):
    """Blue spearmen (I3) whose charge touches red orc warriors (I2) in the front, in the combat phase."""
    b = battle([placement("marcher_spearmen", 36, 10, 90, models=blue_models)],
               [placement("orc_warriors", 36, 30, 90, models=max(10, red_models))], phase="combat")
    a, d = b.unit(0), b.unit(1)
    d.models = red_models  # below the unit's minimum size: as if casualties had been taken
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


# --------------------------------------------------------------------- CORE.CC.RETURN_STRIKE, STRIKE_ORDER.LATER
def _two_chargers():
    """Two blue spearmen units (5 wide) whose charges touch the front of one 10-wide red orc unit (20 models)."""
    red_depth = 2 * INFANTRY_BASE
    y = 30.0 - red_depth / 2 - DEPTH4 / 2
    blue = [placement("marcher_spearmen", 36 - 2.5 * INFANTRY_BASE, y, 90),
            placement("marcher_spearmen", 36 + 2.5 * INFANTRY_BASE, y, 90)]
    b = battle(blue, [placement("orc_warriors", 36, 30.0, 270, models=20, files=10)], phase="combat")
    b.state.engagements = [Engagement(0, 2, "front", charged=True, turn=1), Engagement(1, 2, "front", charged=True, turn=1)]
    b.events.clear()
    return b


def test_return_strike_counts_the_slain_once_against_two_chargers() -> None:
    """CORE.CC.RETURN_STRIKE: the orcs have 10 fighters (5 against each charger) and 10 supporters. The
    first charger's 10 attacks (4+) all hit, 3 wound (S3 v T4: 5+), no save: 3 orcs slain. The return
    attacks are ΣA 10 − 3 = 7, and the supporting attacks min(10 eligible, 7 surviving fighters) = 7:
    14 attacks in all (the slain were taken off each strike before: 2 + 2 fighters, 2 supporters)."""
    b = _two_chargers()
    _script(b, [6] * 10 + [6, 6, 6] + [1] * 7 + [1, 1, 1] + [1] * 10 + [1] * 14)
    combat.fight_round(b, b.state.engagements)
    assert b.unit(2).models == 17
    ret = rules(b, "CORE.CC.RETURN_STRIKE")
    assert sum(e["lost"] for e in ret) == 3
    assert sum(e["fighters"] for e in ret) == 7 and sum(e["support"] for e in ret) == 7
    red = [e["attacks"] for e in rules(b, "CORE.CC.ATTACKS") if e["unit"] == 2]
    assert sum(red) == 14


@pytest.mark.parametrize(("red_models", "attacks"), [(20, 4), (5, 2)])  # 5: one rank
def test_models_slain_before_their_initiative_step_do_not_strike(red_models: int, attacks: int) -> None:
    """CORE.CC.STRIKE_ORDER.LATER: in round 2 the spearmen (I3; 5 fighters + 10 supporters, the spears' extra
    rank) strike before the orcs (I2): 15 hits, 3 wounds (5+), no save: 3 orcs slain before their step. As in
    CORE.CC.RETURN_STRIKE the slain count against the fighters: 20 orcs strike with 5 − 3 = 2 fighters and
    min(5, 2) = 2 supporters (4 attacks); a single rank of 5 orcs with its 2 survivors (2 attacks)."""
    b = _front_pair(rounds=1, turn=0, red_models=red_models)
    _script(b, [6] * 15 + [6, 6, 6] + [1] * 12 + [1, 1, 1] + [1] * 10)
    combat.fight_round(b, b.state.engagements)
    assert b.unit(1).models == red_models - 3
    (red,) = [e for e in rules(b, "CORE.CC.ATTACKS") if e["unit"] == 1]
    assert red["attacks"] == attacks
    (slain,) = [e for e in rules(b, "CORE.CC.STRIKE_ORDER.LATER") if e.get("unit") == 1]
    assert slain["lost"] == 3 and slain["fighters"] == attacks // (2 if red_models == 20 else 1)


# --------------------------------------------------------------------- CORE.CC.PURSUE_CHOICE
@pytest.mark.parametrize(("faces", "holds"), [([4, 4], True), ([5, 4], False)])
def test_declining_pursuit_tests_the_units_ld_with_its_character(faces: list[int], holds: bool) -> None:
    """CORE.CC.PURSUE_CHOICE, CORE.TEST.LD_UNIT: spearmen (Ld 7) joined by a captain (Ld 8) decline to pursue;
    the Ld test uses the unit's highest Ld, 8: 2D6 = 8 holds, 9 pursues anyway."""
    b = battle([placement("marcher_spearmen", 36, 10, 90), placement("marcher_captain", 0, 0, 90, models=1, files=1, joins=0)],
               [placement("orc_warriors", 36, 30, 90)], phase="combat")
    a, d = b.unit(0), b.unit(2)
    pose, _, _ = contact_placement(b, a, d, "front")
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 2, "front", charged=True, turn=1)]
    assert b.unit(1).profile.Ld == 8 and a.profile.Ld == 7
    b.state.queue["pursuit"] = {"broken": [2], "ask": [0], "answers": {}, "winner": 0}
    b.state.stage = "pursue"
    b.events.clear()
    _script(b, faces + [1] * 20)
    combat.apply_pursuit(b, Action("pursue", 0, 2, "hold"))
    (test, choice) = [e for e in b.events if e["rule"] == "CORE.CC.PURSUE_CHOICE" and e.get("kind") != "dice"]
    assert test["ld"] == 8 and test["roll"] == sum(faces)
    assert choice["choice"] == ("hold" if holds else "pursue")


# --------------------------------------------------------------------- CORE.CC.PURSUIT_MOVE
FRONT = 10 + 2 * INFANTRY_BASE  # the front edge of 20 spearmen 5 wide centred at y = 10, facing 90 (+y)


def _pursuer(blue_extra: list[dict] | None = None, terrain: list[dict] | None = None):
    blue = [placement("marcher_spearmen", 36, 10, 90), *(blue_extra or [])]
    b = battle(blue, [placement("orc_warriors", 10, 40, 270, models=10)], phase="combat", terrain=terrain)
    return b, b.unit(0)


def test_pursuer_stops_one_inch_from_impassable_terrain() -> None:
    """CORE.CC.PURSUIT_MOVE: rocks 3" ahead of the pursuer's front; a pursuit roll of 10 stops it 1" from them,
    after 2"."""
    rocks = {"kind": "rocks", "polygon": [[30, FRONT + 3], [42, FRONT + 3], [42, FRONT + 6], [30, FRONT + 6]]}
    b, c = _pursuer(terrain=[rocks])
    combat.pursuit_move(b, c, 90.0, 10, escaped=None)
    (ev,) = rules(b, "CORE.CC.PURSUIT_MOVE")
    assert ev["distance"] == pytest.approx(2.0, abs=1e-6)
    assert geo.distance(space.footprint(c), space.terrain_poly(b.state.terrain[0])) == pytest.approx(1.0, abs=1e-6)


def test_pursuer_stops_exactly_one_inch_from_a_friend_and_at_the_table_edge() -> None:
    """CORE.CC.PURSUIT_MOVE, CORE.CONV.UNITS (distances are never rounded): a friend 3.3" ahead stops a roll of
    10 after 2.3", 1" from it; with the table edge 3.2" ahead it stops after 3.2", at the edge (within the
    0.01" tolerance)."""
    friend = placement("marcher_spearmen", 36, FRONT + 3.3 + 2 * INFANTRY_BASE, 90)
    b, c = _pursuer([friend])
    combat.pursuit_move(b, c, 90.0, 10, escaped=None)
    (ev,) = rules(b, "CORE.CC.PURSUIT_MOVE")
    assert ev["distance"] == pytest.approx(2.3, abs=1e-6)
    assert geo.distance(space.footprint(c), space.footprint(b.unit(1))) == pytest.approx(1.0, abs=1e-6)
    b, c = _pursuer()
    c.y = 48 - 3.2 - 2 * INFANTRY_BASE
    combat.pursuit_move(b, c, 90.0, 10, escaped=None)
    (ev,) = rules(b, "CORE.CC.PURSUIT_MOVE")
    assert ev["distance"] == pytest.approx(3.2, abs=0.0101)


def test_a_pursuer_does_not_turn_into_impassable_terrain() -> None:
    """CORE.CC.PURSUIT_MOVE, CORE.TERRAIN.TYPES: rocks 0.23" to the right of the pursuer (x ≥ 38.2, y 4..9.9).
    Turned about its centre to the flee direction 45°, its front-right corner would stand at (38.50, 9.72), in
    the rocks; so it does not turn, and, starting within 1" of the rocks, it does not move: it stays at (36, 10)
    facing 90°, clear of them."""
    rocks = {"kind": "rocks", "polygon": [[38.2, 4.0], [42.0, 4.0], [42.0, 9.9], [38.2, 9.9]]}
    b, c = _pursuer(terrain=[rocks])
    combat.pursuit_move(b, c, 45.0, 10, escaped=None)
    (ev,) = rules(b, "CORE.CC.PURSUIT_MOVE")
    assert (ev["distance"], ev["x"], ev["y"], ev["facing"]) == (0.0, 36.0, 10.0, 90.0)
    assert not geo.overlaps(space.footprint(c), space.terrain_poly(b.state.terrain[0]))
    turned = space.footprint_at(c, geo.Pose(36.0, 10.0, 45.0))
    assert turned.bounds[2] == pytest.approx(36 + (2.5 + 2) * INFANTRY_BASE * 2 ** -0.5)
    assert geo.overlaps(turned, space.terrain_poly(b.state.terrain[0]))


def test_a_pursuer_with_no_room_on_the_table_to_turn_pursues_straight_ahead() -> None:
    """CORE.CC.PURSUIT_MOVE, CORE.MOVE.TABLE_EDGE: spearmen (5 wide) flush with the right table edge (x = 72) beat
    10 orcs standing 1.5" to their left. The flee direction (from the spearmen's centre to the orcs', 122.4°)
    would turn the spearmen about their centre past the edge (to x = 72.54), so they do not turn: they pursue
    their roll of 12 straight ahead (+y), from y = 10 to y = 22, and stay wholly on the table."""
    x = 72 - 2.5 * INFANTRY_BASE
    b = battle([placement("marcher_spearmen", x, 10, 90)],
               [placement("orc_warriors", x - 1.5, 10 + 3 * INFANTRY_BASE, 270, models=10)], phase="combat")
    b.state.engagements = [Engagement(0, 1, "front", charged=True, turn=b.state.turn)]
    b.state.queue["pursuit"] = {"broken": [1], "ask": [], "answers": {"0": "pursue"}, "winner": 0}
    b.events.clear()
    b.dice._script = [1, 1, 6, 6]  # flee 2, pursuit 12: caught
    combat._flee_and_pursue(b)
    (edge,) = rules(b, "CORE.MOVE.TABLE_EDGE")
    assert (edge["unit"], edge["move"], edge["turned"]) == (0, "CORE.CC.PURSUIT_MOVE", False)
    assert edge["heading"] == pytest.approx(geo.facing_towards((x, 10), (x - 1.5, 10 + 3 * INFANTRY_BASE)))
    assert edge["heading"] == pytest.approx(122.4155473)
    (move,) = rules(b, "CORE.CC.PURSUIT_MOVE")
    assert (move["roll"], move["distance"], move["facing"]) == (12, 12.0, 90.0)
    c = b.unit(0)
    assert (c.x, c.y, c.facing) == pytest.approx((x, 22.0, 90.0))
    assert space.footprint(c).bounds == pytest.approx((72 - 5 * INFANTRY_BASE, 22 - 2 * INFANTRY_BASE, 72.0,
                                                       22 + 2 * INFANTRY_BASE))


# --------------------------------------------------------------------- CORE.CC.FLEE
@pytest.mark.parametrize(("faces", "source"), [([2, 5], 1), ([6, 1], 0), ([3, 3, 1, 4], 1)])
def test_broken_unit_flees_from_a_random_one_of_tied_contacts(faces: list[int], source: int) -> None:
    """CORE.CC.FLEE: the orcs break touching two spearmen units of the same US, neither of which charged. The
    source is drawn at random: a D6 each, the highest wins, ties roll again (2 v 5: unit 1; 6 v 1: unit 0;
    3 v 3, then 1 v 4: unit 1). The orcs flee 2D6 = 7 away from it."""
    b = battle([placement("marcher_spearmen", 36, 10, 90), placement("marcher_spearmen", 36, 44, 270)],
               [placement("orc_warriors", 36, 26, 270)], phase="combat")
    red = b.unit(2)
    for uid, facing in ((0, "front"), (1, "rear")):
        pose, _, _ = contact_placement(b, b.unit(uid), red, facing)
        b.unit(uid).x, b.unit(uid).y, b.unit(uid).facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 2, "front"), Engagement(1, 2, "rear")]
    assert b.unit(0).unit_strength == b.unit(1).unit_strength
    b.state.queue["pursuit"] = {"broken": [2], "ask": [], "answers": {}, "winner": 0}
    b.events.clear()
    _script(b, faces + [3, 4] + [6] * 40)
    combat._flee_and_pursue(b)
    (flee,) = rules(b, "CORE.CC.FLEE")
    assert flee["away_from"] == source and flee["roll"] == 7


# --------------------------------------------------------------------- CORE.CC.INSPIRED
@pytest.mark.parametrize(("blue_captain", "inspired"), [(False, True), (True, False)])
def test_inspired_counts_joined_characters_as_models(blue_captain: bool, inspired: bool) -> None:
    """CORE.CC.INSPIRED, CORE.TEST.LD_UNIT (a unit's models include its joined characters): 20 orcs with a
    joined Big Boss (21 models) lose by 4 to 20 spearmen: more models than the largest enemy unit, so they
    test on their unmodified Ld (the Boss's 8). Against 20 spearmen with a joined Captain (21) they are not
    Inspired and test on 8 − 4 = 4."""
    blue = [placement("marcher_spearmen", 36, 10, 90)]
    if blue_captain:
        blue.append(placement("marcher_captain", 0, 0, 90, models=1, files=1, joins=0))
    red = [placement("orc_warriors", 36, 30, 90), placement("orc_big_boss", 0, 0, 90, models=1, files=1, joins=0)]
    b = battle(blue, red, phase="combat")
    orcs = next(u for u in b.state.units if u.side == 1 and not u.character)
    spears = b.unit(0)
    assert orcs.models == 20 and len(orcs.joined) == 1 and len(spears.joined) == int(blue_captain)
    b.events.clear()
    _script(b, [2, 3] + [1] * 10)
    combat.break_test(b, orcs, 4, [spears])
    assert bool(rules(b, "CORE.CC.INSPIRED")) is inspired
    (ev,) = rules(b, "CORE.CC.BREAK_TEST")
    assert ev["base_ld"] == 8 and ev["ld"] == (8 if inspired else 4)


# --------------------------------------------------------------------- CORE.CC.TO_HIT
def test_hatred_rerolls_misses_even_when_only_sixes_hit() -> None:
    """CORE.CC.TO_HIT, CORE.TERRAIN.DEFENDED_OBSTACLE, CORE.SR.HATRED: spearmen that hate every enemy charge orcs
    behind a defended hedge, so only natural 6s hit. Their 10 attacks (6, 6, 5, 5, 4, 4, 3, 3, 2, 1) hit twice;
    the 8 failed rolls are re-rolled (6, 6, 6, 1, 1, 1, 1, 1): 3 more hits, 5 in all."""
    front = 18 + DEPTH4 / 2 + 6.0
    hedge = {"kind": "hedge", "polygon": [[30, front - 0.75], [42, front - 0.75], [42, front - 0.5], [30, front - 0.5]]}
    blue = [placement("marcher_spearmen", 36, 18, 90)]
    red = [placement("orc_warriors", 36, front + DEPTH4 / 2, 270)]
    # Then: to wound 1s, the orcs' 10 return attacks 1s, their break test (lost 4 − 3 = 1) a double 1.
    dice = [6, 6] + [6, 6, 5, 5, 4, 4, 3, 3, 2, 1] + [6, 6, 6, 1, 1, 1, 1, 1] + [1] * 5 + [1] * 10 + [1, 1]
    b = battle(blue, red, dice=dice, terrain=[hedge])
    b.unit(0).special_rules.append("hatred")
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    first = next(e for e in rules(b, "CORE.CC.TO_HIT") if e["unit"] == 0)
    assert (first["attacks"], first["needed"], first["hits"]) == (10, 6, 5)
    (hatred,) = [e for e in rules(b, "CORE.SR.HATRED") if e["unit"] == 0]
    assert hatred["rerolled"] == 8
