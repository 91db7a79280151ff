"""``control_zones``: the hill holder of ``terrain_denial_by_threat`` (tactics.md §2.2) on scripted set-ups."""

from __future__ import annotations

import pytest
import shapely

from battleline.agents.base import ChargeOption
from battleline.agents.estimates import CombatEstimate
from battleline.agents.registry import make_agent
from battleline.agents.steering import predict_pose
from battleline.agents.tactical import HILL_MARGIN, ControlZonesAgent
from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.battle import Battle
from battleline.env.rules.charges import charge_reach
from battleline.env.rules.state import UnitState
from battleline.tactics import manoeuvres as mv
from battleline.tactics.deployment import FRONT
from tests.setups import battle as setup
from tests.setups import placement

HILL = {"kind": "hill", "name": "Test Hill", "polygon": [[10, 20], [20, 20], [20, 28], [10, 28]]}
FAR_HILL = {"kind": "hill", "name": "Corner Hill", "polygon": [[60, 40], [66, 40], [66, 46], [60, 46]]}
KNIGHTS = {"command": ["champion", "standard", "musician"]}
FAVOURABLE = CombatEstimate(attacker_wounds=3.0, defender_wounds=0.5, diff=3.0, break_chance=0.5)


def unit(b: Battle, label: str) -> UnitState:
    return next(u for u in b.state.units if u.name == label)


def knights_at(y: float, enemy: tuple[float, float] = (60.0, 40.0)) -> Battle:
    """Blue knights at (15, y) facing the test hill, red warriors far off (or at ``enemy``)."""
    return setup(
        [placement("order_knights", 15, y, 90, models=6, files=6, label="K", **KNIGHTS)],
        [placement("orc_warriors", enemy[0], enemy[1], 270, label="W")],
        terrain=[HILL],
    )


def agent_for(b: Battle, side: int = 0) -> ControlZonesAgent:
    agent = make_agent("control_zones")
    assert isinstance(agent, ControlZonesAgent)
    agent.reset(b, side)
    agent.plan = agent.make_plan(b)
    return agent


def test_key_hill_is_the_hill_nearest_the_table_centre() -> None:
    blue, red = [placement("order_knights", 15, 5, 90, models=6, files=6)], [placement("orc_warriors", 60, 40, 270)]
    assert mv.key_hill(setup(blue, red, terrain=[FAR_HILL, HILL])).bounds == (10.0, 20.0, 20.0, 28.0)
    assert mv.key_hill(setup(blue, red)) is None


def test_covers_point_is_front_arc_and_charge_reach_less_the_margin() -> None:
    b = knights_at(5)
    k = unit(b, "K")
    front = 5 + k.depth / 2
    reach = charge_reach(k)
    pose = space.pose(k)
    assert mv.covers_point(k, pose, (15, front + reach - 1))
    assert not mv.covers_point(k, pose, (15, front + reach - 1), margin=2.0)
    assert not mv.covers_point(k, pose, (15, front + reach + 1))
    assert not mv.covers_point(k, pose, (15, 5 - k.depth / 2 - 1))  # behind it
    assert not mv.covers_point(k, pose, (15 + k.width / 2 + 6, front + 3))  # beside it, outside the 45° arc


def test_plan_makes_the_strongest_fast_unit_the_holder_in_the_hill_column() -> None:
    for side, holder, x in ((0, "order_knights", 16.125), (1, "boar_riders", 72 - 16.125)):
        b = Battle.from_scenario("pitched_battle", seed=0)
        agent = agent_for(b, side)
        (uid,) = [uid for uid, g in agent.plan.groups.items() if g == "hill"]
        assert b.unit(uid).type_id == holder
        assert (agent.plan.targets[uid].x, agent.plan.targets[uid].row) == (x, FRONT)
        screens = [t.x for v, t in agent.plan.targets.items() if agent.plan.groups.get(v) == "screen"]
        assert all(sx > x for sx in screens) if x < 36 else all(sx < x for sx in screens)


def test_the_holder_stays_put_while_it_covers_the_hill_point_off_the_hill() -> None:
    b = knights_at(15)
    agent = agent_for(b)
    k = unit(b, "K")
    assert agent.hill_holder(b).uid == k.uid
    rp = mv.key_hill(b).representative_point()
    assert mv.covers_point(k, space.pose(k), (rp.x, rp.y), 2.0)
    assert agent.hold_hill(b, k, ["advance", "march", "advance_half"]) is None


def test_the_holder_moves_up_when_the_hill_point_is_out_of_its_reach() -> None:
    b = knights_at(4)
    agent = agent_for(b)
    k = unit(b, "K")
    rp = mv.key_hill(b).representative_point()
    assert not mv.covers_point(k, space.pose(k), (rp.x, rp.y), HILL_MARGIN)
    option = agent.hold_hill(b, k, ["advance", "march", "advance_half"])
    assert option == "advance"  # M = 7": brings the point within reach - HILL_MARGIN (M/2 does not), centre off the hill
    assert not mv.covers_point(k, predict_pose(b, k, "advance_half"), (rp.x, rp.y), HILL_MARGIN)
    assert not mv.key_hill(b).contains(shapely.Point(15, 4 + k.profile.M))


def test_the_holder_charges_only_what_contests_the_hill() -> None:
    off = knights_at(12, enemy=(40.0, 24.0))
    agent = agent_for(off)
    k, w = unit(off, "K"), unit(off, "W")
    assert not agent.contests_hill(off, w, mv.key_hill(off))
    assert not agent.charge_allowed(off, ChargeOption(k, w, "front", FAVOURABLE, FAVOURABLE, 0.9))
    on = knights_at(12, enemy=(15.0, 24.0))
    agent = agent_for(on)
    k, w = unit(on, "K"), unit(on, "W")
    assert mv.key_hill(on).contains(shapely.Point(w.x, w.y))
    assert agent.contests_hill(on, w, mv.key_hill(on))
    assert agent.charge_allowed(on, ChargeOption(k, w, "front", FAVOURABLE, FAVOURABLE, 0.9))


# ----------------------------------------------------------------------------- area_control: the line's opening move
def line_battle(red_y: float) -> Battle:
    """Blue halberdiers at (36, 6) facing north; red warriors at (36, ``red_y``) facing south; no terrain."""
    return setup([placement("marcher_halberdiers", 36, 6, 90, label="H")],
                 [placement("orc_warriors", 36, red_y, 270, label="W")])


def test_control_areas_shares_out_the_overlap_equally() -> None:
    far = near = line_battle(44)
    h = unit(near, "H")
    own0, opp0 = mv.control_areas(far, 0)
    own1, opp1 = mv.control_areas(near, 0, {h.uid: geo.Pose(36.0, 24.0, 90.0)})
    table = shapely.box(0, 0, 72, 48)
    assert own0 == pytest.approx(mv.threat_region(h).intersection(table).area)  # nothing overlaps yet
    assert opp0 == pytest.approx(mv.threat_region(unit(far, "W")).intersection(table).area)
    assert own1 < own0 and opp1 < opp0  # moved up, the zones overlap: the overlap is no one's
    assert abs((own0 - own1) - (opp0 - opp1)) < 1e-6


def test_unsafe_end_is_enemy_reach_or_running_into_an_enemy() -> None:
    b = line_battle(30)
    agent = agent_for(b)
    h, w = unit(b, "H"), unit(b, "W")
    pose = geo.Pose
    assert not agent.unsafe_end(b, h, pose(36, 6, 90))
    assert agent.unsafe_end(b, h, pose(36, 20, 90))  # within the warriors' charge reach, in their front arc
    behind = pose(36, w.y + w.depth / 2 + h.depth / 2 + 0.5, 90)  # behind them, out of their arc, 0.5" off
    assert not mv.threats_on(b, space.footprint_at(h, behind), 1)
    assert agent.unsafe_end(b, h, behind)


def test_in_the_opening_no_unit_walks_into_enemy_reach() -> None:
    from battleline.agents.tactical import CONTROL_ENGAGE_TURN

    b = line_battle(30)
    agent = agent_for(b)
    h = unit(b, "H")
    assert b.state.turn < CONTROL_ENGAGE_TURN
    assert agent.enters_reach(b, h, geo.Pose(36, 20, 90))  # into the warriors' reach: area_control's dead zone
    assert not agent.enters_reach(b, h, geo.Pose(36, 8, 90))
    b.state.turn = CONTROL_ENGAGE_TURN
    assert not agent.enters_reach(b, h, geo.Pose(36, 20, 90))  # engaging: any move goes


def test_the_line_marches_while_the_enemy_is_far_and_stops_short_of_its_reach() -> None:
    far = line_battle(44)
    agent = agent_for(far)
    h = unit(far, "H")
    options = ["march", "advance", "advance_half", "wheel_left", "wheel_right", "backward"]
    assert agent.claim_share(far, h, options) == "march"  # no share lost, the most ground gained
    near = line_battle(24)
    agent = agent_for(near)
    h = unit(near, "H")
    assert agent.unsafe_end(near, h, predict_pose(near, h, "march"))  # 8" would end in the warriors' reach
    assert not agent.unsafe_end(near, h, predict_pose(near, h, "advance"))
    assert agent.claim_share(near, h, options) == "advance"  # the longest move that stays out of it


# ----------------------------------------------------------------------------- terrain_denial_by_threat: the striker
UNFAVOURABLE = CombatEstimate(attacker_wounds=1.0, defender_wounds=0.5, diff=1.0, break_chance=0.1)


def contested_hill() -> Battle:
    """Blue knights (the holder) and halberdiers below the test hill, red warriors standing on it."""
    return setup(
        [placement("order_knights", 15, 10, 90, models=6, files=6, label="K", **KNIGHTS),
         placement("marcher_halberdiers", 34, 10, 90, label="H")],
        [placement("orc_warriors", 15, 24, 270, label="W")],
        terrain=[HILL],
    )


def test_covers_takes_footprints_as_well_as_points() -> None:
    b = knights_at(5, enemy=(15.0, 5 + 12.0))
    k, w = unit(b, "K"), unit(b, "W")
    assert mv.covers(k, space.pose(k), space.footprint(w))  # straight ahead, well within 2M
    assert not mv.covers(k, space.pose(k), space.footprint(w), margin=charge_reach(k))
    assert not mv.covers(k, geo.Pose(k.x, k.y, 270.0), space.footprint(w))  # facing away


def test_the_striker_is_a_unit_that_beats_the_enemy_on_the_hill(monkeypatch: pytest.MonkeyPatch) -> None:
    from battleline.agents import estimates

    b = contested_hill()
    agent = agent_for(b)
    k, h, w = unit(b, "K"), unit(b, "H"), unit(b, "W")
    holder = agent.hill_holder(b)
    assert holder is not None and holder.uid == k.uid
    monkeypatch.setattr(estimates, "estimate_combat", lambda *a, **kw: FAVOURABLE)
    strike = agent.hill_striker(b, holder)
    assert strike is not None and (strike[0].uid, strike[1].uid) == (k.uid, w.uid)  # the knights outreach it (13" > 10")
    assert agent.ignores_danger(b, k) and agent.left_post  # the holder has left its post to strike
    monkeypatch.setattr(type(agent), "outreaches", staticmethod(lambda f, e: False))
    strike = agent.hill_striker(b, holder)
    assert strike is not None and (strike[0].uid, strike[1].uid) == (h.uid, w.uid)  # a holder that does not outreach stays
    assert agent.ignores_danger(b, h) and not agent.ignores_danger(b, k)
    monkeypatch.setattr(estimates, "estimate_combat", lambda *a, **kw: UNFAVOURABLE)
    assert agent.hill_striker(b, holder) is None  # a first-round lead of 1 is not enough to go for it
    assert not agent.ignores_danger(b, h)


def test_no_move_of_ours_ends_on_the_key_hill(monkeypatch: pytest.MonkeyPatch) -> None:
    from battleline.agents.tactical import TacticalAgent

    b = knights_at(10)
    agent = agent_for(b)
    k = unit(b, "K")
    options = ["march", "advance"]
    assert mv.key_hill(b).contains(shapely.Point(predict_pose(b, k, "march").x, predict_pose(b, k, "march").y))
    monkeypatch.setattr(TacticalAgent, "move_option", lambda self, battle, u, opts: "march")
    assert agent.move_option(b, k, options) is None
    monkeypatch.setattr(TacticalAgent, "move_option", lambda self, battle, u, opts: "advance")
    assert agent.move_option(b, k, options) == "advance"  # 7" ends short of the hill


def test_a_striker_that_outreaches_its_rival_charges_it_first() -> None:
    """The knights (reach 13") close on warriors (reach 10") to where they could charge them and the warriors
    could not charge them back: an advance (7") from 18.5" away, not a march into the warriors' reach."""
    w_depth = unit(knights_at(5), "W").depth
    k_front = 5 + unit(knights_at(5), "K").depth / 2
    b = knights_at(5, enemy=(15.0, k_front + 18.5 + w_depth / 2))
    agent = agent_for(b)
    k, w = unit(b, "K"), unit(b, "W")
    assert agent.outreaches(k, w) and not agent.outreaches(w, k)
    assert agent.strike_at(b, k, w, ["advance", "advance_half", "march"]) == "advance"
    pose = predict_pose(b, k, "advance")
    assert mv.covers(k, pose, space.footprint(w)) and not mv.covers(w, space.pose(w), space.footprint_at(k, pose))
