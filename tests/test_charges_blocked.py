"""Charges that would end inside a unit or pass through one: CORE.CHARGE.MOVE, FEASIBLE, BLOCKED, ONE_INCH.

Blue Marcher Spearmen (20 models, 5 files of 20 mm bases: 3.94" wide, 3.15"
deep, M4) charge Orc Warriors. ``W`` is one base width (20 mm = 0.787").
"""

from __future__ import annotations

import pytest

from battleline.env.rules import charges, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from tests.setups import INFANTRY_BASE as W
from tests.setups import battle, end_declarations, placement, rules

ROCKS_RIGHT = [{"kind": "rocks", "polygon": [[28.0, 14.0], [36.0 - W, 14.0], [36.0 - W, 20.0], [28.0, 20.0]]}]


def _beside_and_ahead(terrain: list[dict] | None) -> Battle:
    """Spearmen (uid 0, centre x = 36 + 1.5 W, y = 10, facing 90) and 10 orcs in 2 files (uid 1, front edge on
    y = 20, x from 36 - W to 36 + W). A second orc unit (uid 2, 5 files by 2 ranks) stands beside uid 1 on the
    +x side, flush with its flank, but 1" further forward (front edge on y = 19): every spot on uid 1's front
    that reaches past x = 36 + W overlaps it. Dice 6, 6: charge range 4 + 6 = 10" (distance 8.43")."""
    blue = [placement("marcher_spearmen", 36.0 + 1.5 * W, 10.0, 90)]
    red = [placement("orc_warriors", 36.0, 20.0 + 2.5 * W, 270, models=10, files=2),
           placement("orc_warriors", 36.0 + 3.5 * W, 19.0 + W, 270, models=10, files=5)]
    return battle(blue, red, dice=[6, 6], terrain=terrain)


def test_a_charge_whose_every_contact_spot_overlaps_a_third_unit_is_not_offered() -> None:
    """CORE.CHARGE.MOVE, CORE.CHARGE.FEASIBLE: rocks left of uid 1 and uid 2 jutting 1" forward on its right leave
    no spot on uid 1's front that does not overlap uid 2 (the aligned spot by 3 W x 1" = 2.36 sq in). An
    overlapping unit is not "touching" it, so uid 2 is no incidental target and the charge at uid 1 cannot be
    declared; the charge at uid 2 itself still can."""
    b = _beside_and_ahead(ROCKS_RIGHT)
    c, t, third = b.unit(0), b.unit(1), b.unit(2)
    aligned = space.footprint_at(c, charges.flush_pose(t, "front", c, -1.5 * W))  # along = the orcs' right, -x
    assert aligned.intersection(space.footprint(third)).area == pytest.approx(3 * W * 1.0)
    assert charges.incidental_targets(b, c, t, "front") == frozenset()
    assert charges.charge_spot(b, c, t, "front") is None
    legal = b.legal_actions()
    assert Action("charge", 0, 1) not in legal and Action("charge", 0, 2) in legal


def test_a_charger_skips_overlapping_and_touching_spots_and_may_end_within_one_inch_of_a_third_unit() -> None:
    """CORE.CHARGE.BLOCKED, CORE.CHARGE.ONE_INCH: without the rocks, the aligned spot (centre x = 36 + 1.5 W) and
    those at x = 36 + 2.5 W, 36 + 0.5 W and 36 - 0.5 W overlap uid 2, and x = 36 - 1.5 W touches it; the charger
    re-positions to x = 36 - 2.5 W, y = 20 - 2 W (one file in contact, slide 4 W = 3.15"), 0.787" from uid 2:
    the charger ignores the 1" rule, and uid 2 is then shifted 0.3" straight away (+x), 1.087" clear."""
    b = _beside_and_ahead(None)
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (declare,) = rules(b, "CORE.CHARGE.DECLARE")
    assert declare["incidental"] == []
    (align,) = rules(b, "CORE.CHARGE.ALIGN")
    assert (align["x"], align["y"], align["facing"]) == pytest.approx((36.0 - 2.5 * W, 20.0 - 2 * W, 90.0))
    assert align["slide"] == pytest.approx(4 * W) and align["overlap"] == pytest.approx(W)
    (shift,) = rules(b, "CORE.CHARGE.ONE_INCH")
    assert shift["unit"] == 2 and shift["shift"] == pytest.approx(0.3)
    assert (b.unit(2).x, b.unit(2).y) == pytest.approx((36.0 + 3.5 * W + 0.3, 19.0 + W))
    assert space.unit_distance(b.unit(0), b.unit(2)) == pytest.approx(W + 0.3)
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(0, 1)]
    assert not rules(b, "CORE.CHARGE.BLOCKED")


def _across(lake: list[list[float]] | None) -> Battle:
    """Spearmen (uid 0) at (36, 10.5) facing 90 and 20 orcs (uid 1) with their front edge on y = 22, 9.93" away,
    facing them; an optional lake (impassable, does not block sight). Dice 6, 6: range 10"."""
    terrain = [{"kind": "lake", "polygon": lake}] if lake else None
    return battle([placement("marcher_spearmen", 36, 10.5, 90)], [placement("orc_warriors", 36, 22 + 2 * W, 270)],
                  dice=[6, 6], terrain=terrain)


@pytest.mark.parametrize("lake", [
    [[20.0, 14.0], [52.0, 14.0], [52.0, 17.0], [20.0, 17.0]],  # right across the field
    [[36.5, 15.0], [40.0, 15.0], [40.0, 17.0], [36.5, 17.0]],  # across the right 1.47" of the charger's path
])
def test_a_charge_whose_every_route_crosses_impassable_terrain_is_not_offered(lake: list[list[float]]) -> None:
    """CORE.CHARGE.MOVE, CORE.CHARGE.FEASIBLE: the aligned spot (36, 20.43) is free, but no route of a straight move
    with one free wheel of at most 90° reaches the orcs' front without crossing the lake: no charge is legal."""
    b = _across(lake)
    c, t = b.unit(0), b.unit(1)
    free = charges.contact_placement(b, c, t, "front", route=False)
    assert free is not None and (free[0].x, free[0].y) == pytest.approx((36.0, 22.0 - 2 * W))
    assert charges.contact_placement(b, c, t, "front") is None
    assert Action("charge", 0, 1) not in b.legal_actions()


def test_a_charge_wheels_round_terrain_beside_its_path_and_ends_where_it_would_without_it() -> None:
    """CORE.CHARGE.MOVE, CORE.CHARGE.CLOSE_DOOR: a lake clips the right 0.47" of the straight path; the charger
    wheels 15° left, moves to first contact, closes the door and ends flush and aligned exactly as on open ground:
    centre (36, 22 - 2 W), facing 90, no slide, all 5 files in contact."""
    poses = []
    for lake in (None, [[37.5, 15.0], [40.0, 15.0], [40.0, 17.0], [37.5, 17.0]]):
        b = _across(lake)
        c, t = b.unit(0), b.unit(1)
        route = charges.ChargeRoute(b, c, t, "front")
        end = charges.flush_pose(t, "front", c, 0.0)
        straight = charges._legs(route, end)
        legs = [list(legs) for legs in straight]
        assert [all(charges.leg_clear(route, leg) for leg in route_legs) for route_legs in legs] == [lake is None]
        # the shapely reference answers alike
        assert [all(charges._sweep_clear(route, charges._sweep(route, leg)) for leg in route_legs)
                for route_legs in legs] == [lake is None]
        b.apply(Action("charge", 0, 1))
        b.apply(Action("react", 1, 0, "hold"))
        end_declarations(b)
        (align,) = rules(b, "CORE.CHARGE.ALIGN")
        assert align["slide"] == pytest.approx(0.0) and align["overlap"] == pytest.approx(5 * W)
        poses.append((b.unit(0).x, b.unit(0).y, b.unit(0).facing))
    assert poses[0] == poses[1] == pytest.approx((36.0, 22.0 - 2 * W, 90.0))


def test_a_charge_whose_route_a_friend_blocks_after_declaration_fails() -> None:
    """CORE.CHARGE.FEASIBLE, CORE.CHARGE.BLOCKED, CORE.CHARGE.FAILED: spearmen uid 0 charge orcs uid 2 side-on and
    end flush at (36.85, 17) facing 0, across the path of spearmen uid 1 (at (36, 12) facing 90), who charged orcs
    uid 3 (front edge y = 22) in the same phase. No spot on uid 3's front has a route that does not pass through
    uid 0, so uid 1's charge fails: it moves its high die (6) straight at uid 3 and stops 1" short of uid 0,
    after 0.47" (the engine used to slide it through uid 0 to (32.85, 20.43))."""
    blue = [placement("marcher_spearmen", 30, 17, 0), placement("marcher_spearmen", 36, 12, 90)]
    red = [placement("orc_warriors", 40, 17, 180), placement("orc_warriors", 36, 22 + 2 * W, 270)]
    b = battle(blue, red, dice=[6, 6, 6, 5])
    assert Action("charge", 1, 3) in b.legal_actions()  # the route is clear when declared
    b.apply(Action("charge", 0, 2))
    b.apply(Action("react", 2, 0, "hold"))
    b.apply(Action("charge", 1, 3))
    b.apply(Action("react", 3, 1, "hold"))
    end_declarations(b)
    (move,) = rules(b, "CORE.CHARGE.MOVE")
    assert move["unit"] == 0 and (move["x"], move["y"], move["heading"]) == pytest.approx((40.0 - 2 * W - 2 * W, 17.0, 0.0))
    (feasible,) = rules(b, "CORE.CHARGE.FEASIBLE")
    assert (feasible["unit"], feasible["target"], feasible["possible"]) == (1, 3, False)
    (blocked,) = rules(b, "CORE.CHARGE.BLOCKED")
    assert (blocked["unit"], blocked["target"]) == (1, 3)
    (failed,) = rules(b, "CORE.CHARGE.FAILED")
    assert failed["unit"] == 1 and failed["high"] == 6 and failed["moved"] == pytest.approx(0.47, abs=0.01)
    assert (b.unit(1).x, b.unit(1).facing) == pytest.approx((36.0, 90.0))
    assert space.unit_distance(b.unit(0), b.unit(1)) == pytest.approx(1.0, abs=0.01)
    assert space.unit_distance(b.unit(0), b.unit(1)) >= 1.0 - geo.EPS
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(0, 2)]


def test_a_charge_with_a_clear_route_wheels_closes_the_door_and_aligns_as_before() -> None:
    """CORE.CHARGE.MOVE, CORE.CHARGE.CLOSE_DOOR, CORE.CHARGE.ALIGN: spearmen at (31, 12) facing 60 charge orcs whose
    front edge is on y = 22 (a lake off to the side): they end flush at (36, 22 - 2 W) facing 90 after a 30°
    pivot and a 5" slide, all 5 files in contact."""
    side = [{"kind": "lake", "polygon": [[44.0, 10.0], [52.0, 10.0], [52.0, 20.0], [44.0, 20.0]]}]
    b = battle([placement("marcher_spearmen", 31, 12, 60)], [placement("orc_warriors", 36, 24, 270)], dice=[6, 6],
               terrain=side)
    b.apply(Action("charge", 0, 1))
    b.apply(Action("react", 1, 0, "hold"))
    end_declarations(b)
    (door,) = rules(b, "CORE.CHARGE.CLOSE_DOOR")
    assert door["pivot"] == pytest.approx(30.0)
    (align,) = rules(b, "CORE.CHARGE.ALIGN")
    assert align["slide"] == pytest.approx(5.0) and align["overlap"] == pytest.approx(5 * W)
    assert (b.unit(0).x, b.unit(0).y, b.unit(0).facing) == pytest.approx((36.0, 24.0 - 2 * W - 2 * W, 90.0))
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(0, 1)]
