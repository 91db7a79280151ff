"""The diagram situations of tactics.md §5 as scenarios (``configs/scenarios/diagram_*.yaml``).

Each test sets up the captioned situation with explicit placements and checks
what the text says should happen — through the engine's own rules (events,
legal actions), the manoeuvre analyses of ``tactics.manoeuvres`` and the
decisions of the tactical agents. Dice are scripted (``Dice.push``) where the
outcome depends on a roll; the other rolls come from the seeded generator.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from battleline.agents.registry import make_agent
from battleline.agents.tactical import TacticalAgent
from battleline.env.rules import charges, shooting, space
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.state import UnitState
from battleline.tactics import manoeuvres as mv
from battleline.tactics.deployment import DeploymentPlan
from tests.setups import battle as setup
from tests.setups import placement


def load(name: str) -> Battle:
    """The scenario with dice that can be scripted (``b.dice.push``) and are seeded otherwise."""
    return Battle.from_scenario(name, seed=0, dice=ScriptedDice([], then_seed=0))


def unit(b: Battle, name: str) -> UnitState:
    """The unit labelled ``name``."""
    return next(u for u in b.state.units if u.name == name)


def rules(b: Battle, rule: str, since: int = 0) -> list[dict]:
    """Events of exactly ``rule`` from index ``since``, dice rolls left out."""
    return [e for e in b.events[since:] if e["rule"] == rule and e.get("kind") != "dice"]


def run_until(b: Battle, done: Callable[[Battle], bool], limit: int = 200) -> None:
    """Answer every decision with end_phase (the default: hold, no challenge, pursue) until ``done``."""
    for _ in range(limit):
        if done(b) or b.is_over:
            return
        b.apply(END_PHASE)
    raise AssertionError("the situation did not arise")


def at(b: Battle, player: int, kind: str) -> Callable[[Battle], bool]:
    """A ``run_until`` condition: ``player`` must decide a ``kind`` decision."""
    return lambda x: x.pending.player == player and x.pending.kind == kind


def play_phase(b: Battle, agent, kind: str) -> None:
    """Let ``agent`` answer decisions while the pending kind is ``kind``."""
    while not b.is_over and b.pending.kind == kind and b.pending.player == agent.side:
        b.apply(agent.act(b))


class AllBait(TacticalAgent):
    """A tactical agent whose units all play the bait (its deployment plan is empty)."""

    name = "all_bait"
    bait_groups = frozenset({"support"})

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        return DeploymentPlan()


# ----------------------------------------------------------------------------- FX-01 / FX-02 flee_viability_check
def test_fx01_flight_escapes_when_no_charge_can_reach() -> None:
    b = load("diagram_flee_escape")
    i, c = unit(b, "I"), unit(b, "C")
    gap = space.unit_distance(i, c)
    assert gap <= charges.charge_reach(c)  # C may declare the charge
    assert mv.flee_escape_probability(gap, c, i) == pytest.approx(1.0)
    bait = AllBait()
    bait.reset(b, 0)
    b.apply(Action("charge", c.uid, i.uid))
    assert bait.act(b) == Action("react", i.uid, c.uid, "flee")  # flee_viability_check recommends flight
    b.apply(Action("react", i.uid, c.uid, "flee"))
    b.apply(END_PHASE)  # the charge is resolved; nothing else to decide until blue's turn
    (rng,) = rules(b, "CORE.CHARGE.RANGE")
    assert not rng["success"] and not rules(b, "CORE.CHARGE.VS_FLEEING")
    assert i.alive and any(e["unit"] == i.uid for e in rules(b, "CORE.PSY.RALLY"))  # it lives to rally on its turn


def test_fx02_flight_is_doomed_when_the_charger_is_close() -> None:
    b = load("diagram_flee_doomed")
    i, c = unit(b, "I"), unit(b, "C")
    p = mv.flee_escape_probability(space.unit_distance(i, c), c, i)
    assert p < 0.2  # tactics.md: a competent agent (almost) never flees with P(escape) < 0.2
    bait = AllBait()
    bait.reset(b, 0)
    b.apply(Action("charge", c.uid, i.uid))
    assert bait.act(b) == Action("react", i.uid, c.uid, "hold")  # hold and fight instead
    # Had it run: a 3" flight and an ordinary charge roll (7" + 4") catch it, and it is destroyed.
    b.dice.push(1, 2, 3, 4)
    b.apply(Action("react", i.uid, c.uid, "flee"))  # red has no other charge: the charge resolves at once
    assert rules(b, "CORE.CHARGE.VS_FLEEING") and not i.alive


# ----------------------------------------------------------------------------- FX-04 flanking_charge_bonus
def combat_parts(b: Battle, since: int) -> dict[int, dict[str, int]]:
    """The combat-result parts each side scored in the first combat resolved after event ``since``."""
    names = {"CHARGE": "charge", "RANKS": "ranks", "STANDARD": "standard", "FLANK": "flank", "REAR": "rear"}
    parts: dict[int, dict[str, int]] = {0: {}, 1: {}}
    for e in b.events[since:]:
        if e["rule"] == "CORE.CC.COMBAT_RESULT.COMPARE":
            break
        key = e["rule"].rsplit(".", 1)[-1]
        if e["rule"].startswith("CORE.CC.COMBAT_RESULT.") and key in names and e.get("kind") != "dice":
            parts[e["side"]][names[key]] = parts[e["side"]].get(names[key], 0) + e["value"]
    return parts


def charge_home(b: Battle, charger: UnitState, target: UnitState) -> int:
    """Declare the charge, let the target hold, and run on until its first combat is resolved; the event index before."""
    since = len(b.events)
    b.apply(Action("charge", charger.uid, target.uid))
    b.apply(Action("react", target.uid, charger.uid, "hold"))
    run_until(b, lambda x: bool(rules(x, "CORE.CC.COMBAT_RESULT.COMPARE", since)))
    return since


def test_fx04_frontal_charge_gives_five_to_four() -> None:
    b = load("diagram_flank_charge")
    a1, d1 = unit(b, "A1"), unit(b, "D1")
    assert mv.attack_arc(b, a1, d1) == "front"
    assert mv.static_result(a1, d1, "front") == (5, 4)
    parts = combat_parts(b, charge_home(b, a1, d1))
    assert parts[0]["charge"] == 1 and parts[0]["standard"] == 1 and "flank" not in parts[0]
    assert parts[1]["ranks"] >= 1 and parts[1]["standard"] == 1  # the defender keeps its ranks


def test_fx04_flank_charge_adds_one_and_cancels_the_ranks() -> None:
    b = load("diagram_flank_charge")
    a2, d2 = unit(b, "A2"), unit(b, "D2")
    arc = mv.attack_arc(b, a2, d2)
    assert arc in ("left", "right")
    assert mv.static_result(a2, d2, arc) == (6, 1)
    front_att, front_def = mv.static_result(a2, d2, "front")
    assert (6 - 1) - (front_att - front_def) == mv.flank_swing(d2, arc) == 4  # src L185: a +4 swing
    parts = combat_parts(b, charge_home(b, a2, d2))
    assert parts[0]["flank"] == 1 and parts[0]["charge"] == 1
    assert "ranks" not in parts[1]  # attacked in the flank: no rank bonus (CORE.CC.COMBAT_RESULT.RANKS)


# ----------------------------------------------------------------------------- FX-18 weakened_flank / feigned_flight
def test_fx18_bait_flees_and_the_pursuer_is_charged_in_the_flank() -> None:
    b = load("diagram_weakened_flank")
    s, e, k = unit(b, "S"), unit(b, "E"), unit(b, "K")
    assert [(u.name, arc) for u, arc in mv.feigned_flight_payoff(b, s, e)] == [("K", "left")]
    blue = make_agent("weakened_flank")
    blue.reset(b, 0)
    b.apply(Action("charge", e.uid, s.uid))
    reaction = blue.act(b)
    assert blue.group(s) == "weak" and reaction == Action("react", s.uid, e.uid, "flee")
    b.dice.push(5, 5, 1, 1)  # S flees 10"; E rolls 4" + 1 and falls short, following S for 1"
    b.apply(reaction)
    (fled,) = rules(b, "CORE.REACT.FLEE")
    (failed,) = rules(b, "CORE.CHARGE.FAILED")
    assert fled["unit"] == s.uid and failed["unit"] == e.uid and s.alive
    assert mv.arc_of_point(e, k.x, k.y) == "left"  # the pursuer shows K its flank
    run_until(b, at(b, 0, "charge"))
    charge = blue.act(b)
    assert charge == Action("charge", k.uid, e.uid)  # the main body punishes the pursuer
    since = len(b.events)
    b.apply(charge)
    b.dice.push(6, 6)  # K's charge roll: 7" + 6"
    b.apply(Action("react", e.uid, k.uid, "hold"))
    run_until(b, lambda x: bool(rules(x, "CORE.CC.COMBAT_RESULT.COMPARE", since)))
    (declared,) = rules(b, "CORE.CHARGE.DECLARE", since)
    assert declared["facing"] == "left"
    parts = combat_parts(b, since)
    assert parts[0]["flank"] == 1  # +1 for the flank charge
    assert "ranks" not in parts[1]  # and E's three ranks count for nothing
    assert mv.rank_bonus(e) >= 1


# ----------------------------------------------------------------------------- FX-11 charge_consequence_analysis
SEVEN_TIMES_RED = [
    placement("orc_warriors", 36, 27, 270, command=["champion", "standard", "musician"], label="B2"),
    placement("orc_warriors", 28, 31, 270, command=["champion", "standard", "musician"], label="B1"),
    placement("boar_riders", 48, 32, 270, models=10, command=["champion", "standard", "musician"], label="C3"),
]


def test_fx11_look_ahead_finds_the_counter_chargers_on_both_flanks() -> None:
    b = load("diagram_seven_times")
    i2, b2 = unit(b, "I2"), unit(b, "B2")
    assert Action("charge", i2.uid, b2.uid) in b.legal_actions()
    found = {u.name: arc for u, arc in mv.counter_chargers(b, i2, b2)}
    assert found == {"B1": "left", "C3": "right"}
    assert (i2.x, i2.y) == (36, 20) and not b.state.engagements  # the look-ahead ran on a clone


def test_fx11_supports_make_the_charge_acceptable_and_their_absence_does_not() -> None:
    b = load("diagram_seven_times")
    agent = make_agent("control_zones")
    agent.reset(b, 0)
    agent.act(b)  # makes the plan
    i2, b2, b1, c3 = unit(b, "I2"), unit(b, "B2"), unit(b, "B1"), unit(b, "C3")
    assert [u.name for u in mv.covering_friends(b, 0, b1, exclude=(i2.uid,))] == ["I1"]
    assert [u.name for u in mv.covering_friends(b, 0, c3, exclude=(i2.uid,))] == ["I3"]
    assert agent.consequences_acceptable(b, i2, b2)
    alone = setup([placement("marcher_halberdiers", 36, 20, 90, command=["champion", "standard", "musician"], label="I2")],
                  SEVEN_TIMES_RED)
    agent = make_agent("control_zones")
    agent.reset(alone, 0)
    i2, b2 = unit(alone, "I2"), unit(alone, "B2")
    assert {u.name for u, _ in mv.counter_chargers(alone, i2, b2)} == {"B1", "C3"}
    assert not agent.consequences_acceptable(alone, i2, b2)
    assert agent.act(alone) != Action("charge", i2.uid, b2.uid)  # variant IV: I2 does not charge


def test_fx11_restrained_pursuit_when_the_winner_would_be_cut_off() -> None:
    b = load("diagram_seven_times")
    i2, b2 = unit(b, "I2"), unit(b, "B2")
    threats, gap = mv.pursuit_exposure(b, i2, b2)
    assert {u.name for u in threats} == {"B1", "C3"} and gap < 12.0 and not mv.overextended(b, i2, b2)  # I1 and I3 stay close
    alone = setup([placement("marcher_halberdiers", 36, 20, 90, command=["champion", "standard", "musician"], label="I2")],
                  SEVEN_TIMES_RED)
    i2, b2 = unit(alone, "I2"), unit(alone, "B2")
    assert mv.overextended(alone, i2, b2)  # variant VI: deep among B1 and C3, no friend within 12"
    agent = make_agent("control_zones")
    agent.reset(alone, 0)
    choice = [Action("pursue", i2.uid, b2.uid, "pursue"), Action("pursue", i2.uid, b2.uid, "hold")]
    assert agent.choose_pursuit(alone, choice).option == "hold"


# ----------------------------------------------------------------------------- FX-16 flank_teeth
def test_fx16_rear_charge_sends_the_enemy_off_its_own_table_edge() -> None:
    b = load("diagram_flank_teeth")
    k, r = unit(b, "K"), unit(b, "R")
    edge_gap = b.state.table_h - (r.y + r.depth / 2)
    assert edge_gap <= 2.0 and mv.attack_arc(b, k, r) == "rear"
    since = len(b.events)
    b.apply(Action("charge", k.uid, r.uid))
    b.dice.push(6, 6)  # K's charge roll
    b.apply(Action("react", r.uid, k.uid, "hold"))
    run_until(b, at(b, 0, "pursue"))
    parts = combat_parts(b, since)
    assert parts[0]["rear"] == 2 and "ranks" not in parts[1]
    b.dice.push(1, 1)  # K holds back (its Ld test to decline the pursuit passes): R flees alone
    b.apply(Action("pursue", k.uid, r.uid, "hold"))
    (flee,) = rules(b, "CORE.CC.FLEE", since)
    assert flee["unit"] == r.uid and flee["facing"] == pytest.approx(90.0)  # straight away from K: towards its own edge
    (gone,) = rules(b, "CORE.PSY.FLEE.DESTROYED", since)
    assert gone["unit"] == r.uid and gone["off_table"] and r.removed


# ----------------------------------------------------------------------------- FX-10 unmask_shooters
def test_fx10_screening_infantry_steps_aside_and_the_archers_shoot_the_same_turn() -> None:
    b = load("diagram_unmask_shooters")
    a, i2, i3, w = unit(b, "A"), unit(b, "I2"), unit(b, "I3"), unit(b, "Warriors")
    assert mv.visible_targets(b, a) == set()  # before: no target in sight
    assert {u.name for u in mv.maskers(b, a)} == {"I2", "I3"}
    blue = make_agent("shooting_lines")
    blue.reset(b, 0)
    first = blue.act(b)
    assert first.kind == "move" and first.unit in (i2.uid, i3.uid)  # a masking unit moves first
    start = (a.x, a.y, a.facing)
    play_phase(b, blue, "move")
    assert (a.x, a.y, a.facing) == start  # the archers held (moving would spoil the crossbows' shot)
    assert mv.visible_targets(b, a) == {w.uid}  # after: the warriors are in range and sight
    assert blue.act(b) == Action("shoot", a.uid, w.uid)


# ----------------------------------------------------------------------------- FX-22 protected_bubble
def bubble_holds(b: Battle, h: UnitState) -> None:
    """H ringed ≥ 270° by friends within 6"; no enemy sees it or has a legal charge on it."""
    assert mv.ring_coverage(b, h) >= 270.0
    for e in (u for u in b.state.units if u.side != h.side):
        assert not space.line_of_sight(b.state, e, h), e.name
        assert not charges.target_ok(b, e, h), e.name


def test_fx22_the_ring_shields_the_asset_and_keeps_it_shielded_on_the_move() -> None:
    b = load("diagram_protected_bubble")
    h = unit(b, "H")
    bubble_holds(b, h)
    blue = make_agent("protected_bubble")
    blue.reset(b, 0)
    blue.act(b)
    ring = {blue.group(u): u.name for u in b.state.units if blue.group(u).startswith("ring_")}
    assert ring == {"ring_front": "Front", "ring_left": "Left", "ring_right": "Right", "ring_rear": "Rear"}
    y0 = h.y
    play_phase(b, blue, "move")
    assert h.y - y0 >= 2.0  # the bubble moved on (it must not stay static)
    assert all(space.unit_distance(h, unit(b, name)) <= 6.0 for name in ring.values())
    bubble_holds(b, h)


# ----------------------------------------------------------------------------- FX-09 flyer_feint
def turned_to(b: Battle, agent_name: str) -> list[str]:
    """The blue units that face the flyer F after ``agent_name`` plays blue's movement phase (and did not before)."""
    f = unit(b, "F")
    blues = [u for u in b.state.units if u.side == 0]
    before = {u.uid: mv.arc_of_point(u, f.x, f.y) for u in blues}
    agent = make_agent(agent_name)
    agent.reset(b, 0)
    play_phase(b, agent, "move")
    return [u.name for u in blues if mv.arc_of_point(u, f.x, f.y) == "front" and before[u.uid] != "front"]


def test_fx09_the_flyer_threatens_three_units_two_of_them_in_flank_or_rear() -> None:
    b = load("diagram_flyer_feint")
    f = unit(b, "F")
    near, exposed = mv.feint_exposed(b, f, (f.x, f.y))
    assert {u.name for u in near} == {"I1", "C1", "W", "I2"}  # all inside the circle of its 16" reach
    assert {"I1", "C1", "W"} <= {u.name for u in exposed}  # rear of I1 and W, flank of C1
    assert mv.feinting(b, f)
    assert mv.feint_watcher(b, f).name == "C1"  # the nearest unit that could charge it (W is a war machine)


@pytest.mark.parametrize("agent", ["flank_teeth", "bait_and_flank", "control_zones", "abandoned_flank", "protected_bubble"])
def test_fx09_a_good_defender_turns_at_most_one_unit(agent: str) -> None:
    assert len(turned_to(load("diagram_flyer_feint"), agent)) <= 1


def test_fx09_the_naive_line_turns_everything_towards_the_flyer() -> None:
    assert len(turned_to(load("diagram_flyer_feint"), "line_advance")) >= 2


# ----------------------------------------------------------------------------- FX-05 threat_zone_forecast
def test_fx05_a_unit_ending_in_the_enemy_threat_zone_is_charged_first() -> None:
    b = load("diagram_hill_dead_zone")
    assert mv.dead_zone(b).is_empty  # 28" apart: nobody can charge anybody yet
    ahead = b.clone()
    halberdiers, warriors = unit(ahead, "Halberdiers"), unit(ahead, "Warriors")
    halberdiers.y = 25.0  # suppose it had ended its move on the hill
    assert not mv.dead_zone(ahead).is_empty
    assert space.footprint(halberdiers).intersects(mv.threat_zone(ahead, 1))
    assert charges.target_ok(ahead, warriors, halberdiers)  # red may charge it next turn


def test_fx05_control_zones_advances_to_the_edge_of_the_enemy_reach_and_denies_the_hill() -> None:
    b = load("diagram_hill_dead_zone")
    share = mv.control_share(b, 0)
    blue = make_agent("control_zones")
    blue.reset(b, 0)
    play_phase(b, blue, "move")
    blues = [u for u in b.state.units if u.side == 0]
    assert max(u.y for u in blues) > 10.0  # it advanced ...
    assert all(not mv.threats_on(b, space.footprint(u), 1) for u in blues)  # ... but not into red's reach
    assert mv.control_share(b, 0) > share  # advance_to_expand_control
    hill = mv.hills(b)[0]
    assert hill.intersection(mv.control(b, 0)).area > hill.intersection(mv.control(b, 1)).area
    assert mv.denied_hills(b, 0)  # red cannot climb it without being charged


# ----------------------------------------------------------------------------- FX-20 staggered_shooting_line
def others_on_probe(b: Battle) -> list[str]:
    """The shooters other than the end unit S1 that have the probe in range, arc and sight."""
    probe = unit(b, "Probe")
    return [n for n in ("S2", "S3") if shooting.in_range_and_sight(b, unit(b, n), probe)]


def test_fx20_a_staggered_line_covers_the_end_units_flank() -> None:
    b = load("diagram_staggered_line")
    assert others_on_probe(b) == ["S2"]
    assert Action("shoot", unit(b, "S2").uid, unit(b, "Probe").uid) in b.legal_actions()


def test_fx20_a_straight_line_cannot_help_its_end_unit() -> None:
    shooters = [placement("marcher_crossbowmen", x, 10.2, 90, models=10, command=["champion"], label=f"S{i}")
                for i, x in enumerate((24, 30, 36), start=1)]
    probe = placement("orc_warriors", 19.45, 10.2, 0, command=["champion", "standard", "musician"], label="Probe")
    b = setup(shooters, [probe], phase="shooting")
    assert others_on_probe(b) == []


# ----------------------------------------------------------------------------- FX-23 swarm_speed_bump
def test_fx23_the_speed_bump_stops_the_fast_unit_or_takes_its_charge() -> None:
    b = load("diagram_speed_bump")
    c, wiz, bump = unit(b, "C"), unit(b, "WIZ"), unit(b, "Bump")
    goal = (wiz.x, wiz.y)
    assert mv.blocks_lane(space.footprint(bump), c, goal)
    x, y = mv.speed_bump_point(c, goal)  # where the manoeuvre would put it: on C's straight path, M + 2" ahead
    assert x == pytest.approx(c.x) and c.y - y == pytest.approx(c.profile.M + 2.0)
    charges_of_c = {a.target for a in b.legal_actions() if a.kind == "charge" and a.unit == c.uid}
    assert charges_of_c == {bump.uid}  # C may charge the bump (and be held up by it), not the wizard

    def straight_on(battle: Battle) -> float:
        """How far C gets marching straight at the wizard this turn."""
        run_until(battle, at(battle, 1, "move"))
        rider = unit(battle, "C")
        y0 = rider.y
        battle.apply(Action("move", rider.uid, None, "march"))
        return y0 - rider.y

    free = b.clone()
    unit(free, "Bump").removed = True  # the same lane without the bump
    assert straight_on(free) == pytest.approx(2 * c.profile.M)
    assert straight_on(b) <= 2 * c.profile.M - 5.0  # slowed by the bump: it stops 1" short of it
