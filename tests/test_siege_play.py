"""A siege in play (RULESET.md §5): castle geometry in movement and deployment, the assault through the
engine hooks (env/rules/siege/play.py), the siege scenarios and the siege agents."""

from __future__ import annotations

import random

import pytest
from shapely.geometry import box

from battleline.agents.registry import make_agent
from battleline.env.rules import space
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.siege import castle as cs
from tests.setups import placement
from tests.test_siege import siege_scenario

BASE = 20 / 25.4
ON_S1 = 18 - BASE / 2
"""A one-rank unit on S1 with its front flush with the outer face (y = 18)."""
ARMIES_SIEGE = {
    "id": "siege_armies",
    "name": "Siege with army lists",
    "modules": ["siege"],
    "castle": {"defender": "blue"},
    "turns": 7,
    "blue": {"faction": "men", "army": "men_marcher_host"},
    "red": {"faction": "orcs", "army": "orcs_tusk_horde"},
}


def play_checked(b: Battle, choose) -> int:
    """Play to the end with ``choose(battle) -> action``, checking legality and the castle invariants."""
    n = 0
    while not b.is_over:
        before = cs.snapshot(b.state)
        a = choose(b)
        assert a in b.legal_actions()
        b.apply(a)
        n += 1
        problems = cs.check_invariants(b.state, before)
        assert not problems, (n, problems)
    return n


# ----------------------------------------------------------------------------- geometry and deployment
def test_walls_block_units_outside_but_not_units_on_them():
    b = Battle.from_scenario(siege_scenario(
        [placement("marcher_spearmen", 26.5, ON_S1, 90, models=10, files=10)],
        [placement("orc_warriors", 26.5, 24, 270, models=10, files=5)],
    ), seed=0)
    on_wall, outside = b.state.units
    through_s1 = box(25, 16.5, 28, 17.5)
    assert space.Surroundings(b.state, outside).blocked(through_s1, through_s1)
    gate = box(35, 16.5, 37, 17.5)
    assert space.Surroundings(b.state, outside).blocked(gate, gate), "a closed gate is impassable"
    cs.element(b.state, "G").gate = "open"
    assert not space.Surroundings(b.state, outside).overlapping(gate, space.Surroundings(b.state, outside).impassable).any()
    assert space.Surroundings(b.state, on_wall).castle_end is not None
    # a unit on a wall keeps one rank: no turns or reforms there
    moves = {a.option for a in b.legal_actions() if a.kind == "move" and a.unit == on_wall.uid}
    assert not {o for o in moves if o.startswith(("turn_", "reform_"))}


def test_siege_deployment_defender_first_inside_the_castle():
    b = Battle.from_scenario(ARMIES_SIEGE, seed=1)
    assert b.state.queue["deploy_next"] == 0
    rng = random.Random(1)
    order = []
    while b.state.stage == "deploy":
        order.append(b.state.queue["deploy_next"])
        b.apply(rng.choice(b.legal_actions()))
    assert order == sorted(order), "the defender deploys everything first"
    assert b.state.first_player == 1, "the attacker goes first (SIEGE.SCEN.TURNS)"
    area = cs.castle_area(b.state).buffer(0.01)
    assert all(u.deployed and not u.removed for u in b.state.units), "every unit on the table (SIEGE.SCEN.DEPLOY)"
    for u in b.state.units:
        if u.joined_to is not None:
            continue
        if u.side == 0:
            assert area.covers(space.footprint(u)), u.name
            assert cs.one_rank_ok(b.state, u)
        else:
            assert space.footprint(u).bounds[1] >= b.state.table_h - 12 - 1e-6
    assert cs.check_invariants(b.state) == []


# ----------------------------------------------------------------------------- the assault with exact dice
def test_ladder_assault_defenders_strike_first_climbers_hit_only_on_6s():
    blue = [placement("marcher_spearmen", 26.5, ON_S1, 90, models=10, files=10)]
    red = [placement("orc_warriors", 26.5, 18 + 1.5 * BASE + 4, 270, models=15, files=5, equipment={"ladders": 3})]
    b = Battle.from_scenario(siege_scenario(blue, red, phase="movement", player="red"), seed=0)
    assert Action("charge", 1, 0, None) in b.legal_actions()
    b.apply(Action("charge", 1, 0, None))
    b.dice = ScriptedDice([
        5, 4,  # charge roll 9 >= 4"
        6, 6, 6, 6, 6,  # defenders first: 5 attacks hit
        6, 6, 6, 6, 6,  # all wound
        6, 6, 6, 6, 6,  # the orcs save all (5+)
        5, 5, 6,  # 3 climbers (1 per ladder): 5s miss, only the 6 hits
        6,  # wounds
        6,  # saved
        1, 1,  # the spearmen pass their break test
    ], then_seed=0)
    b.dice.log = b._log_roll
    start = len(b.events)
    b.apply(Action("react", 0, 1, "hold"))
    events = b.events[start:]
    strikes = [e for e in events if e["rule"] == "CORE.CC.TO_HIT" and e.get("kind") != "dice"]
    assert strikes[0]["unit"] == 0, "the wall's defenders strike first although charged"
    climb = strikes[1]
    assert (climb["unit"], climb["attacks"], climb["needed"], climb["hits"]) == (1, 3, 6, 1)
    assert any(e["rule"] == "SIEGE.CC.DEFENDER_BONUS" for e in events)
    first_round = events[: next(i for i, e in enumerate(events) if e["rule"] == "CORE.CC.COMBAT_RESULT.COMPARE") + 1]
    parts = {e["rule"] for e in first_round}
    assert "CORE.CC.COMBAT_RESULT.RANKS" not in parts and "CORE.CC.COMBAT_RESULT.OUTNUMBER" not in parts
    assert next(e for e in first_round if e["rule"] == "CORE.CC.COMBAT_RESULT.COMPARE")["totals"] == [0, 1]
    assert cs.element(b.state, "S1").parapet_taken, "the climbers won the round (SIEGE.CAPTURE.PARAPET)"
    (climb,) = [e for e in first_round if e["rule"] == "SIEGE.ASSAULT.CLIMB"]
    assert (climb["climbers"], climb["defenders"]) == (3, 5), "3 climbers side by side touch 5 spearmen"


def _ladder_charge(ladders: int, script: list[int]) -> tuple[Battle, list[dict]]:
    """Orcs (15 in 5 files, ``ladders`` ladders) charge 10 spearmen in one rank on S1; the spearmen hold and the
    Close Combat phase runs with ``script`` (then seeded dice). Returns the battle and the events of the charge."""
    blue = [placement("marcher_spearmen", 26.5, ON_S1, 90, models=10, files=10)]
    red = [placement("orc_warriors", 26.5, 18 + 1.5 * BASE + 4, 270, models=15, files=5,
                     equipment={"ladders": ladders})]
    b = Battle.from_scenario(siege_scenario(blue, red, phase="movement", player="red"), seed=0)
    b.apply(Action("charge", 1, 0, None))
    b.dice = ScriptedDice(script, then_seed=0)
    b.dice.log = b._log_roll
    start = len(b.events)
    b.apply(Action("react", 0, 1, "hold"))
    return b, b.events[start:]


def _strikes(events: list[dict]) -> list[tuple[int, int, int, int]]:
    """(unit, attacks, needed, hits) of each CORE.CC.TO_HIT strike, in order."""
    return [(e["unit"], e["attacks"], e["needed"], e["hits"]) for e in events
            if e["rule"] == "CORE.CC.TO_HIT" and e.get("kind") != "dice"]


@pytest.mark.parametrize(("ladders", "script", "defenders", "strikes"), [
    # 1 ladder: 1 climber touches 3 spearmen (the one opposite and, at its corners, its two neighbours)
    (1, [5, 4] + [6, 6, 6] + [6, 6, 6] + [6, 6, 6] + [5] + [1, 1], 3, [(0, 3, 4, 3), (1, 1, 6, 0)]),
    # 2 ladders: 2 climbers side by side touch 4 spearmen; the climbers' 6 hits, wounds, and is saved
    (2, [5, 4] + [6, 6, 6, 6] + [6, 6, 6, 6] + [6, 6, 6, 6] + [6, 5] + [6] + [6] + [1, 1], 4,
     [(0, 4, 4, 4), (1, 2, 6, 1)]),
])
def test_ladder_climbers_fight_only_the_defenders_they_touch(ladders, script, defenders, strikes):
    """SIEGE.ASSAULT.CLIMB, CORE.GEO.CONTACT: of 5 spearmen facing the orcs' front, only those touching the
    climbers (1 per ladder) fight: 20 mm bases, 1 climber → 3 defenders, 2 climbers → 4 (not 5 and 5).
    Dice: charge 5+4; the defenders strike first (SIEGE.CC.DEFENDER_BONUS): all hit (WS3 v WS3: 4+), wound, and the orcs
    save every wound on 6s; the climbers hit only on 6s; the spearmen pass their break test (1, 1)."""
    _b, events = _ladder_charge(ladders, script)
    events = events[: next(i for i, e in enumerate(events) if e["rule"] == "CORE.CC.COMBAT_RESULT.COMPARE")]
    (climb,) = [e for e in events if e["rule"] == "SIEGE.ASSAULT.CLIMB"]
    assert {k: climb[k] for k in ("element", "unit", "target", "mode", "ladders", "climbers", "defenders")} == {
        "element": "S1", "unit": 1, "target": 0, "mode": "ladders", "ladders": ladders, "climbers": ladders,
        "defenders": defenders}
    assert _strikes(events) == strikes
    assert not [e for e in events if e["rule"] == "CORE.CC.CASUALTIES"], "every wound saved"


@pytest.mark.parametrize(("pursuit", "caught"), [([4, 3], False), ([4, 4], True)])
def test_a_broken_wall_defender_escapes_a_tied_pursuit(pursuit, caught):
    """SIEGE.BREAK.DEFENDER (RULESET.md conflict 8): a broken defender on a wall is destroyed only if a climbing
    unit rolls more than its flee roll; a tie escapes (unlike CORE.CC.CAUGHT in the field, where a tie catches).
    Dice: charge 5+4; the 3 spearmen touching the climber miss (1, 1, 1); the climber hits (6), wounds (6) and
    the spearman's save fails (1); red wins 2 (1 wound + charge) to 0; the spearmen's break test 6+6 fails;
    flee 3+4 = 7 against the orcs' pursuit roll 4+3 = 7 (escapes) or 4+4 = 8 (caught)."""
    b, events = _ladder_charge(1, [5, 4] + [1, 1, 1] + [6, 6, 1] + [6, 6] + [3, 4] + pursuit)
    events = events[: next(i for i, e in enumerate(events) if e["rule"] == "CORE.GAME.LENGTH")]  # this turn only
    compare = next(e for e in events if e["rule"] == "CORE.CC.COMBAT_RESULT.COMPARE")
    assert compare["totals"] == [0, 2]
    breaks = [e for e in events if e["rule"] == "SIEGE.BREAK.DEFENDER" and e.get("kind") != "dice"]
    rolls = [e for e in events if e["rule"] == "SIEGE.BREAK.DEFENDER" and e.get("kind") == "dice"]
    assert [r["result"] for r in rolls] == [7, sum(pursuit)]
    assert {k: breaks[0][k] for k in ("unit", "element", "roll", "pursuit_rolls", "caught")} == {
        "unit": 0, "element": "S1", "roll": 7, "pursuit_rolls": {"1": sum(pursuit)}, "caught": caught}
    assert not [e for e in events if e["rule"] == "CORE.CC.CAUGHT"], "no field pursuit at a wall"
    flees = [e for e in events if e["rule"] == "CORE.CC.FLEE" and e.get("flee")]
    if caught:
        assert breaks[1]["destroyed"] is True and breaks[1]["flee_roll"] == 7 and b.unit(0).removed
        assert flees == []
    else:
        assert len(breaks) == 1 and not [e for e in events if e.get("destroyed")]
        (flee,) = flees
        assert (flee["unit"], flee["roll"], flee["distance"]) == (0, 7, 7.0)
        assert flee["y"] < 16, "fled off S1 (y 16-18) into the courtyard"
    taken = [e for e in events if e["rule"] == "SIEGE.CAPTURE.PARAPET"][-1]  # the round won, then the section
    assert (taken["element"], taken["unit"], taken["controller"]) == ("S1", 1, 1)


def test_no_climbing_gear_no_charge_at_the_wall():
    blue = [placement("marcher_spearmen", 26.5, ON_S1, 90, models=10, files=10)]
    red = [placement("orc_warriors", 26.5, 18 + 1.5 * BASE + 4, 270, models=15, files=5)]
    b = Battle.from_scenario(siege_scenario(blue, red, phase="movement", player="red"), seed=0)
    assert not any(a.kind == "charge" for a in b.legal_actions())


def test_oil_poured_as_stand_and_shoot_when_the_climbers_reach_the_wall():
    blue = [placement("marcher_spearmen", 26.5, ON_S1, 90, models=10, files=10, equipment={"oil": 1})]
    red = [placement("orc_warriors", 26.5, 18 + 1.5 * BASE + 6, 270, models=15, files=5, equipment={"ladders": 3})]
    b = Battle.from_scenario(siege_scenario(blue, red, phase="movement", player="red"), seed=0)
    b.apply(Action("charge", 1, 0, None))
    assert Action("react", 0, 1, "stand_and_shoot") in b.legal_actions()
    b.apply(Action("react", 0, 1, "stand_and_shoot"))
    rules = [e["rule"] for e in b.events]
    assert "SIEGE.REACT.WALL" in rules and "SIEGE.EQUIP.OIL" in rules
    assert rules.index("CORE.CHARGE.MOVE") < rules.index("SIEGE.EQUIP.OIL")


# ----------------------------------------------------------------------------- whole games
@pytest.mark.parametrize(("scenario", "seed"), [("siege", 0), ("siege", 1), ("gate_assault", 2), (ARMIES_SIEGE, 3)])
def test_random_siege_battles_finish_with_castle_invariants(scenario, seed):
    b = Battle.from_scenario(scenario, seed=seed)
    rng = random.Random(seed)
    play_checked(b, lambda battle: rng.choice(battle.legal_actions()))
    assert b.result["winner"] in ("blue", "red")


@pytest.mark.parametrize(("scenario", "names"), [
    ("siege", ("siege_defender", "siege_attacker")),
    ("gate_assault", ("siege_defender", "siege_attacker")),
    (ARMIES_SIEGE, ("siege_defender", "siege_attacker")),
    ("siege", ("siege_attacker", "siege_defender")),
    ("pitched_battle", ("siege_attacker", "siege_defender")),
])
def test_scripted_siege_agents_play_legal_games(scenario, names):
    b = Battle.from_scenario(scenario, seed=1)
    agents = [make_agent(n, seed=1) for n in names]
    for side, a in enumerate(agents):
        a.reset(b, side)
    play_checked(b, lambda battle: agents[battle.pending.player].act(battle))
    if scenario != "pitched_battle":
        assert b.result["winner"] in ("blue", "red")


def test_siege_victory_counts_the_castle():
    b = Battle.from_scenario("gate_assault", seed=0)
    s = b.state
    for e in s.castle:
        e.controller = 1
    assert cs.element(b.state, "C").controller == 1
    from battleline.env.rules.siege import play

    s.units[0].removed = True
    s.units[1].removed = True
    assert play.winner(s) == 1
    b2 = Battle.from_scenario("gate_assault", seed=0)
    assert play.winner(b2.state) == 0, "the defender holds every element at the start"
    for eid in ("S3", "S4", "S5", "T1"):
        cs.element(b2.state, eid).controller = 1
    assert play.winner(b2.state) == 0, "4 of 9 is not enough"
    cs.element(b2.state, "C").controller = 1
    assert play.winner(b2.state) == 1, "the citadel wins"


def test_random_battles_checker_reports_clean_battles():
    """benchmarks.siege_invariants: a handful of random-vs-random sieges finish with the invariants intact."""
    from benchmarks.siege_invariants import checked_random_battle, summarise

    runs = [checked_random_battle("siege", seed) for seed in (3, 8, 11)]
    summary = summarise(runs)
    assert summary["finished"] == 3 and summary["errors"] == [] and summary["invariant_failures"] == []
    assert all(r["decisions"] > 0 and r["castle"]["G"]["gate"] in cs.GATE_STATES for r in runs)


def test_a_defender_fleeing_off_a_wall_moves_on_clear_of_it():
    """SIEGE.REACT.WALL: a diagonal flee from S3 that would end overhanging the wall moves on into the courtyard."""
    from battleline.env.rules import psychology

    b = Battle.from_scenario(siege_scenario(
        [placement("marcher_halberdiers", 45.5, ON_S1, 90, models=10, files=10)],
        [placement("orc_warriors", 50, 24, 270, models=10, files=5)],
    ), seed=0)
    u = b.unit(0)
    psychology.flee(b, u, (49.5, 21.6), "CORE.REACT.FLEE", roll=3)
    walls = [e.shape() for e in b.state.castle if e.kind != "gate"]
    assert u.alive and cs.element_under(b.state, u) is None
    assert not any(space.footprint(u).buffer(-0.02).intersects(w) for w in walls)
    assert cs.check_invariants(b.state) == []


def test_a_custom_castle_is_won_by_its_own_elements():
    """SIEGE.SCEN.VICTORY for a custom castle (DEFAULT): its citadel is the key, its walls and towers count, its
    gates do not, and the attacker needs the standard share, 5 of 9, of the counted elements, rounded up (here 3
    of 4), unless ``victory_needed`` or an element's ``victory`` says otherwise."""
    from battleline.env.rules.config import ConfigError, load_scenario
    from battleline.env.rules.siege import play

    def rect(x0, x1, y0, y1):
        return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]

    elements = [{"id": "W1", "kind": "wall", "polygon": rect(20, 30, 16, 18)},
                {"id": "GG", "kind": "gate", "parent": "W1", "polygon": rect(24, 26, 16, 18)},
                {"id": "W2", "kind": "wall", "polygon": rect(40, 50, 16, 18)},
                {"id": "TT", "kind": "tower", "polygon": rect(32, 36, 14, 18)},
                {"id": "KEEP", "kind": "citadel", "polygon": rect(32, 38, 0, 6)}]
    scenario = {"id": "custom_siege", "name": "Custom siege", "modules": ["siege"],
                "castle": {"defender": "blue", "layout": "custom", "elements": elements},
                "blue": {"faction": "men", "placements": [placement("marcher_spearmen", 45, 17, 90, models=10, files=10)]},
                "red": {"faction": "orcs", "placements": [placement("orc_warriors", 36, 40, 270)]},
                "start": {"turn": 1, "phase": "movement", "player": "red"}}

    def held_by_red(data, ids):
        b = Battle.from_scenario(data, seed=0)
        for e in b.state.castle:
            e.controller = 1 if e.id in ids else 0
        b.state.units[0].x = 60.0  # the spearmen leave W2, which its controller field then decides
        return play.winner(b.state)

    b = Battle.from_scenario(scenario, seed=0)
    assert {e.id: e.victory for e in b.state.castle} == {"W1": "counts", "GG": "", "W2": "counts", "TT": "counts",
                                                         "KEEP": "key"}
    assert cs.victory_needed(b.state.castle, b.state.queue.get("siege_victory_needed")) == 3
    assert [held_by_red(scenario, ids) for ids in ({"W1", "TT"}, {"W1", "TT", "GG"}, {"W1", "TT", "W2"}, {"KEEP"})] \
        == [0, 0, 1, 1]
    four = {**scenario, "castle": {**scenario["castle"], "victory_needed": 4}}
    assert [held_by_red(four, ids) for ids in ({"W1", "TT", "W2"}, {"W1", "TT", "W2", "KEEP"})] == [0, 1]
    no_key = {**scenario, "castle": {**scenario["castle"], "elements": [
        *elements[:4], {**elements[4], "victory": "counts"}]}}
    assert held_by_red(no_key, {"KEEP"}) == 0 and held_by_red(no_key, {"KEEP", "W1", "W2"}) == 1
    gates_only = {**scenario, "castle": {**scenario["castle"], "elements": [
        {**e, "victory": "none"} if e["kind"] != "gate" else e for e in elements]}}
    assert cs.victory_needed(Battle.from_scenario(gates_only, seed=0).state.castle) == 1
    assert held_by_red(gates_only, {"W1", "GG", "W2", "TT", "KEEP"}) == 0  # nothing counts: only a wipe-out wins
    with pytest.raises(ConfigError) as err:
        load_scenario({**scenario, "castle": {**scenario["castle"], "victory_needed": 5}})
    assert str(err.value) == ("<dict>: castle: victory_needed is 5, but only 4 elements count "
                              "(W1, W2, TT, KEEP; SIEGE.SCEN.VICTORY)")
    with pytest.raises(ConfigError) as err:
        load_scenario({**scenario, "castle": {"defender": "blue", "victory_needed": 5}})
    assert str(err.value) == ("<dict>: castle: the standard castle takes no 'victory_needed' "
                              "(5 of its 9 elements, SIEGE.SCEN.VICTORY)")
