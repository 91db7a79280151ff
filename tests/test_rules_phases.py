"""Exact-value tests of movement, shooting, psychology, deployment and victory rules."""

from __future__ import annotations

import pytest

from battleline.env.rules import combat, psychology, shooting, space, victory
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import ScriptedDice
from tests.setups import INFANTRY_BASE, battle, end_declarations, placement, rules

DEPTH4 = 4 * INFANTRY_BASE
XBOW_DEPTH = 2 * INFANTRY_BASE  # 10 crossbowmen in 5 files


def _shooting(gap: float, **kw: object) -> Battle:
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement("orc_warriors", 36, 10 + XBOW_DEPTH / 2 + gap + DEPTH4 / 2, 270)]
    return battle(blue, red, phase="shooting", **kw)


def test_shooting_long_range_modifier() -> None:
    """CORE.SHOOT.MODIFIERS: beyond half range (crossbow 30": 15") −1; within it, none."""
    far, near = _shooting(20.0), _shooting(10.0)
    assert shooting.to_hit_modifier(far, far.unit(0), far.unit(1), False, False) == (-1, {"long_range": -1})
    assert shooting.to_hit_modifier(near, near.unit(0), near.unit(1), False, False) == (0, {})


def test_shooting_soft_cover_and_stand_and_shoot() -> None:
    """CORE.TERRAIN.COVER: a target behind a hedge is in soft cover (−1); Stand and Shoot −1 more."""
    hedge = {"kind": "hedge", "polygon": [[30, 22], [42, 22], [42, 22.5], [30, 22.5]]}
    b = _shooting(10.0, terrain=[hedge])
    mod, parts = shooting.to_hit_modifier(b, b.unit(0), b.unit(1), True, False)
    assert parts == {"cover": -1, "stand_and_shoot": -1} and mod == -2


def test_shooting_resolves_hits_wounds_and_saves_with_scripted_dice() -> None:
    """CORE.SHOOT.TO_HIT/TO_WOUND, CORE.SAVE.MODIFIERS: 10 crossbows (BS3, S4) at T4 orcs (light armour + shield 5+)."""
    # Hits on 4+ (short range): 4 hits; wound S4 v T4 on 4+: 2 wounds; save 5+ worsened by 1 (S4) = 6+: 1 saved.
    b = _shooting(10.0, dice=[1, 2, 3, 4, 5, 6, 6, 3, 1, 2] + [4, 3, 2, 6] + [6, 2])
    b.apply(Action("shoot", 0, 1))
    assert b.unit(1).models == 19
    (hit,) = rules(b, "CORE.SHOOT.TO_HIT")
    assert hit["shots"] == 10 and hit["needed"] == 4 and hit["hits"] == 4
    (wound,) = rules(b, "CORE.SHOOT.TO_WOUND")
    assert wound["wounds"] == 2 and wound["needed"] == 4
    (save,) = rules(b, "CORE.SAVE.ARMOUR_TABLE")
    assert save["base_save"] == 5 and save["needed"] == 6 and save["saved"] == 1


def test_panic_after_heavy_shooting_casualties() -> None:
    """CORE.PSY.PANIC.TRIGGER_CASUALTIES: losing more models than the front rank held (5) forces a test."""
    b = _shooting(10.0)
    t = b.unit(1)
    t.flags["front_rank_at_phase"] = 5
    t.flags["lost_this_phase"] = 6
    b.dice._script = [5, 4]  # 9 > Ld 7: fails, flees 2D6
    psychology.panic_test(b, t, (36.0, 10.0), "CORE.PSY.PANIC.TRIGGER_CASUALTIES")
    (test,) = rules(b, "CORE.PSY.PANIC.TEST")
    assert test["roll"] == 9 and test["ld"] == 7 and not test["passed"]
    assert t.fleeing and rules(b, "CORE.PSY.PANIC.FAIL")


def test_panic_exempt_when_engaged_or_already_tested() -> None:
    """CORE.PSY.PANIC.EXEMPT: a unit tests at most once per phase."""
    b = _shooting(10.0)
    t = b.unit(1)
    b.dice._script = [1, 2]
    psychology.panic_test(b, t, (36.0, 10.0), "CORE.PSY.PANIC.TRIGGER_DESTROYED")
    psychology.panic_test(b, t, (36.0, 10.0), "CORE.PSY.PANIC.TRIGGER_DESTROYED")
    assert len(rules(b, "CORE.PSY.PANIC.TEST")) == 1


def test_rally_with_musician_and_automatic_failure_below_quarter() -> None:
    """CORE.PSY.RALLY: Ld 7 + musician 1 = 8 rallies on 2D6 = 8; 4 of 20 models (below 25%) fail automatically."""
    blue = [placement("marcher_spearmen", 20, 10, 90, fleeing=True, command=["musician"])]
    red = [placement("orc_warriors", 36, 40, 270)]
    b = battle(blue, red, dice=[4, 4], phase="start")
    ral, reform = rules(b, "CORE.PSY.RALLY")
    assert ral["unit"] == 0 and ral["ld"] == 8 and ral["roll"] == 8 and ral["passed"]
    assert reform["rallied"] and reform["x"] == b.unit(0).x
    assert not b.unit(0).fleeing
    u = b.unit(0)
    u.models, u.fleeing = 4, True  # 4 of 20 left: below 25%
    b.state.active = 0
    b.events.clear()
    psychology.start_of_turn(b)
    (auto,) = rules(b, "CORE.PSY.RALLY")
    assert auto["automatic"] and not auto["passed"]


def test_a_rallied_unit_at_the_table_edge_keeps_its_facing_and_no_turn_leaves_the_table() -> None:
    """CORE.PSY.RALLY, CORE.MOVE.TABLE_EDGE, CORE.MOVE.REFORM, CORE.MOVE.WHEEL: spearmen (5 wide) flush with the
    right table edge rally (2D6 = 6 ≤ Ld 7). Facing the nearest orcs (146.3°) would turn them about their centre
    past the edge, so they keep facing 270° where they stand. Unrallied, facing 270° there, they may not
    reform to face the orcs, reform wider or wheel right (each would cross the edge); turns and a wheel left
    stay legal."""
    x = 72 - 2.5 * INFANTRY_BASE
    red = [placement("orc_warriors", 40, 40, 270)]
    b = battle([placement("marcher_spearmen", x, 20, 270, fleeing=True)], red, dice=[3, 3], phase="start")
    (edge,) = rules(b, "CORE.MOVE.TABLE_EDGE")
    assert (edge["unit"], edge["move"], edge["turned"]) == (0, "CORE.PSY.RALLY", False)
    assert edge["heading"] == pytest.approx(146.3376753)
    reform = rules(b, "CORE.PSY.RALLY")[-1]
    assert reform["rallied"] and (reform["x"], reform["y"], reform["facing"]) == pytest.approx((x, 20.0, 270.0))
    u = b.unit(0)
    assert not u.fleeing and (u.x, u.y, u.facing) == pytest.approx((x, 20.0, 270.0))
    assert space.footprint(u).bounds[2] == pytest.approx(72.0)
    options = {a.option for a in battle([placement("marcher_spearmen", x, 20, 270)], red).legal_actions()
               if a.kind == "move"}
    assert not options & {"reform_face", "reform_wide", "wheel_right", "wheel_right_short"}
    assert {"turn_left", "turn_right", "about_face", "wheel_left", "reform_deep"} <= options


def test_march_blocked_by_failed_leadership_test() -> None:
    """CORE.MOVE.MARCH_BLOCK: an enemy within 8" forces a Ld test; on 2D6 = 11 > 7 the unit moves only M (4")."""
    blue = [placement("marcher_spearmen", 20, 10, 90)]
    red = [placement("orc_warriors", 20 + 5 * INFANTRY_BASE + 7.0, 10, 270)]
    b = battle(blue, red, dice=[5, 6])
    end_declarations(b)
    y0 = b.unit(0).y
    b.apply(Action("move", 0, None, "march"))
    (test,) = rules(b, "CORE.MOVE.MARCH_BLOCK")
    assert test["roll"] == 11 and not test["passed"]
    assert b.unit(0).y == pytest.approx(y0 + 4.0)
    assert not rules(b, "CORE.MOVE.MARCH") and rules(b, "CORE.MOVE.NORMAL")


def test_march_moves_twice_m_when_no_enemy_near() -> None:
    """CORE.MOVE.MARCH: 2 × M = 8" with no enemy within 8"."""
    b = battle([placement("marcher_spearmen", 20, 10, 90)], [placement("orc_warriors", 50, 40, 270)])
    end_declarations(b)
    y0 = b.unit(0).y
    b.apply(Action("move", 0, None, "march"))
    assert b.unit(0).y == pytest.approx(y0 + 8.0)
    (ev,) = rules(b, "CORE.MOVE.MARCH")
    assert ev["distance"] == pytest.approx(8.0)


def test_difficult_terrain_halves_the_move() -> None:
    """CORE.TERRAIN.COST: a move through woods costs double: M4 advances 2"."""
    woods = {"kind": "woods", "polygon": [[10, 12], [30, 12], [30, 20], [10, 20]]}
    b = battle([placement("marcher_spearmen", 20, 10, 90)], [placement("orc_warriors", 50, 40, 270)], terrain=[woods])
    end_declarations(b)
    y0 = b.unit(0).y
    b.apply(Action("move", 0, None, "advance"))
    assert b.unit(0).y == pytest.approx(y0 + 2.0, abs=0.05)


def test_wheel_costs_width_times_angle() -> None:
    """CORE.MOVE.WHEEL: a 45° wheel of a 5-wide unit (3.937") costs 3.092"; M4 leaves 0.908" to advance."""
    b = battle([placement("marcher_spearmen", 20, 10, 90)], [placement("orc_warriors", 50, 40, 270)])
    end_declarations(b)
    b.apply(Action("move", 0, None, "wheel_left"))
    (ev,) = rules(b, "CORE.MOVE.WHEEL")
    assert ev["distance"] == pytest.approx(4.0, abs=1e-6)
    assert b.unit(0).facing == pytest.approx(135.0)


def test_one_inch_rule_stops_an_advance() -> None:
    """CORE.MOVE.ONE_INCH: a unit 3" from an enemy can only advance 2"."""
    blue = [placement("marcher_spearmen", 36, 10, 90)]
    red = [placement("orc_warriors", 36, 10 + DEPTH4 + 3.0, 90)]
    b = battle(blue, red)
    if b.pending.kind == "charge":
        b.apply(Action("end_phase"))
    y0 = b.unit(0).y
    b.apply(Action("move", 0, None, "advance"))
    assert b.unit(0).y - y0 == pytest.approx(2.0, abs=0.02)
    assert space.unit_distance(b.unit(0), b.unit(1)) >= 1.0 - 0.01  # CORE.CONV.UNITS tolerance


# --------------------------------------------------------------------- close combat details
def test_supporting_attacks_and_horde() -> None:
    """CORE.CC.SUPPORT: rank 2 behind the 5 fighters adds 5; a Horde (10 wide, 3 ranks, 30 models) adds rank 3."""
    b = battle([placement("marcher_halberdiers", 36, 10, 90)], [placement("orc_warriors", 36, 30, 270)], phase="combat")
    u = b.unit(0)
    assert combat.supporters(b, u, 5, charged=True) == 5
    u.models, u.files, u.start_models = 30, 10, 30
    assert combat.is_horde(u)
    assert combat.supporters(b, u, 10, charged=True) == 20
    spear = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 30, 270)], phase="combat")
    # Spears fight in an extra rank unless their unit charged (CORE.WEAPON.MELEE).
    assert combat.supporters(spear, spear.unit(0), 5, charged=False) == 10
    assert combat.supporters(spear, spear.unit(0), 5, charged=True) == 5


def test_first_round_return_strike_loses_attacks_of_the_slain() -> None:
    """CORE.CC.STRIKE_ORDER.ROUND1, CORE.CC.RETURN_STRIKE: the charged unit strikes back with what survived."""
    from battleline.env.rules.charges import contact_placement
    from battleline.env.rules.state import Engagement

    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 30, 90, models=10)],
               phase="combat")
    a, d = b.unit(0), b.unit(1)
    pose, _, _ = contact_placement(b, a, d, "front")
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, 1, "front", charged=True, turn=b.state.turn)]
    b.events.clear()
    # Blue (charged, 5 fighters + 5 supporters, spear charged: no extra rank) = 10 attacks, WS3 v WS3: 4+.
    # 6 hits, S3 v T4 → 5+: 3 wounds, orc save 5+: 0 saved: 3 orcs die.
    # The orcs had 5 fighters + 5 supporters; 3 slain: 2 fighters + 2 supporters = 4 attacks.
    b.dice = ScriptedDice([4, 4, 4, 4, 4, 4, 1, 1, 1, 1] + [5, 5, 5, 1, 1, 1] + [1, 1, 1] + [1, 1, 1, 1], then_seed=1)
    b.dice.log = b._log_roll
    combat.fight_round(b, b.state.engagements)
    (ret,) = rules(b, "CORE.CC.RETURN_STRIKE")
    assert ret["lost"] == 3 and ret["fighters"] == 2 and ret["support"] == 2
    hits = rules(b, "CORE.CC.TO_HIT")
    assert [h["attacks"] for h in hits] == [10, 4]
    assert b.unit(1).models == 7


# --------------------------------------------------------------------- deployment and victory
def test_deployment_slots_stay_in_the_zone() -> None:
    """CORE.SETUP.ZONES: every legal deployment lies wholly within 12" of the player's own edge."""
    b = Battle.from_scenario("pitched_battle", seed=4)
    assert b.pending.kind == "deploy"
    from battleline.env.rules.deployment import slot_pose

    for act in b.legal_actions():
        if act.kind != "deploy":
            continue
        u = b.unit(act.unit)
        poly = space.footprint_at(u, slot_pose(b, u, int(act.option)))
        minx, miny, maxx, maxy = poly.bounds
        assert (maxy <= 12.0 + 1e-6) if u.side == 0 else (miny >= 36.0 - 1e-6)
    assert rules(b, "CORE.SETUP.ROLL_OFF")


def test_victory_points_destroyed_half_and_quarters() -> None:
    """CORE.VP.DESTROYED (full), CORE.VP.HALF (fleeing: half rounded up), CORE.VP.QUARTERS (+100 each)."""
    blue = [placement("marcher_spearmen", 20, 10, 90), placement("marcher_spearmen", 50, 10, 90)]
    red = [placement("orc_warriors", 20, 40, 270, models=11), placement("orc_warriors", 50, 40, 270)]
    b = battle(blue, red)
    b.unit(2).removed = True  # 11 orcs × 6 = 66 points
    b.unit(3).fleeing = True  # 20 orcs: 120 → 60
    parts = victory.breakdown(b)
    assert parts[0]["destroyed"] == 66 and parts[0]["half"] == 60
    # Blue holds both lower quarters (US 20 each); red's fleeing and destroyed units hold nothing.
    assert parts[0]["quarters"] == 200 and parts[1]["quarters"] == 0
    assert victory.quarter_holders(b) == [0, None, 0, None]


def test_quarter_holders_count_forecast_copies_where_they_stand() -> None:
    """CORE.VP.QUARTERS with ``moved``: a copy stands in for its unit (the battle is left as it is). Red's
    fleeing orcs rallied in copy hold the upper right quarter; blue's left spearmen moved in copy onto the
    centre line (x = 36) are in no quarter, so the lower left is held by nobody."""
    import dataclasses

    blue = [placement("marcher_spearmen", 20, 10, 90), placement("marcher_spearmen", 50, 10, 90)]
    red = [placement("orc_warriors", 20, 40, 270, models=11), placement("orc_warriors", 50, 40, 270)]
    b = battle(blue, red)
    b.unit(2).removed = True
    b.unit(3).fleeing = True
    rallied = {3: dataclasses.replace(b.unit(3), fleeing=False)}
    assert victory.quarter_holders(b, rallied) == [0, None, 0, 1]
    on_line = {0: dataclasses.replace(b.unit(0), x=36.0)}
    assert victory.quarter_holders(b, on_line) == [None, None, 0, None]
    assert victory.quarter_holders(b) == [0, None, 0, None] and b.unit(3).fleeing and b.unit(0).x == 20


def test_unit_within_an_inch_of_an_enemy_may_move_away_but_not_closer() -> None:
    """CORE.MOVE.ONE_INCH: spearmen left 0.5" behind orc warriors' rear (not in combat) may step back 2" (M/2)
    or wheel away, never advance; the swept path may not come closer to the enemy than the 0.5" it starts at."""
    blue = [placement("marcher_spearmen", 36, 10, 90)]
    red = [placement("orc_warriors", 36, 10 + DEPTH4 + 0.5, 90)]
    b = battle(blue, red)
    if b.pending.kind == "charge":
        b.apply(Action("end_phase"))
    assert space.unit_distance(b.unit(0), b.unit(1)) == pytest.approx(0.5, abs=1e-6)
    legal = b.legal_actions()
    assert Action("move", 0, None, "backward") in legal
    assert Action("move", 0, None, "advance") not in legal and Action("move", 0, None, "march") not in legal
    y0 = b.unit(0).y
    b.apply(Action("move", 0, None, "backward"))
    assert b.unit(0).y - y0 == pytest.approx(-2.0, abs=0.02)
    assert space.unit_distance(b.unit(0), b.unit(1)) == pytest.approx(2.5, abs=0.02)


def test_unit_beside_a_friend_may_turn_and_move_away() -> None:
    """CORE.MOVE.ONE_INCH forbids ending within 1", not starting there: a unit 0.56" from a friend can turn and go."""
    blue = [placement("marcher_spearmen", 30, 10, 90), placement("marcher_halberdiers", 34.5, 10, 90)]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    end_declarations(b)
    legal = b.legal_actions()
    assert Action("move", 0, None, "turn_left") in legal
    assert Action("move", 1, None, "turn_right") in legal
    b.apply(Action("move", 0, None, "turn_left"))
    assert space.unit_distance(b.unit(0), b.unit(1)) >= 1.0 - 0.01
