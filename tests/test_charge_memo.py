"""The answers the charge rules, line of sight and scripted agents keep equal those worked out afresh.

See :func:`env.rules.charges._memo` (charge spots and targets per table),
:func:`env.rules.space.line_of_sight` (sight per viewer, target and nearby
units) and :func:`agents.threats.charge_threat` / :func:`agents.threats.gap` (per
pair of units). Blue Marcher Spearmen (5 files of 20 mm bases, ``W`` wide
each) charge Orc Warriors, as in ``test_charges_blocked``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from battleline.agents import threats
from battleline.agents.steering import moved_copy
from battleline.env.rules import charges, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.state import BattleState, TerrainFeature, UnitState
from tests.setups import INFANTRY_BASE as W
from tests.setups import battle, placement

LAKE = [(20.0, 14.0), (52.0, 14.0), (52.0, 17.0), (20.0, 17.0)]
"""A lake right across the field between the two units of :func:`_across` (impassable, does not block sight)."""


def _across() -> Battle:
    """Spearmen (uid 0) at (36, 10.5) facing 90 and 20 orcs (uid 1) facing them, front edge on y = 22."""
    return battle([placement("marcher_spearmen", 36, 10.5, 90)], [placement("orc_warriors", 36, 22 + 2 * W, 270)])


def _fresh_spot(b: Battle, c: UnitState, t: UnitState, facing: str) -> object:
    """:func:`charges.charge_spot` with the battle's memo dropped first (so worked out afresh)."""
    b.__dict__.pop("_charge_memo", None)
    return charges.charge_spot(b, c, t, facing)


def test_a_kept_charge_answer_is_dropped_when_the_terrain_or_a_unit_changes() -> None:
    """CORE.CHARGE.FEASIBLE: the aligned spot (36, 22 - 2 W) is reached while the field is open; a lake laid across
    it leaves no clear route (no charge), taking it away again restores the charge, and moving the orcs 1" to +x
    moves the spot with them (x = 37, the charger slid 1" along their front)."""
    b = _across()
    c, t = b.unit(0), b.unit(1)
    assert charges.legal_declarations(b) == [Action("charge", 0, 1)]
    (pose, overlap, slide), incidental = charges.charge_spot(b, c, t, "front")
    assert (pose.x, pose.y, pose.facing) == pytest.approx((36.0, 22.0 - 2 * W, 90.0))
    assert (overlap, slide, incidental) == (pytest.approx(5 * W), pytest.approx(0.0), frozenset())
    b.state.terrain.append(TerrainFeature(kind="lake", polygon=list(LAKE)))
    assert charges.legal_declarations(b) == []
    assert charges.charge_spot(b, c, t, "front") is None
    b.state.terrain.pop()
    assert charges.legal_declarations(b) == [Action("charge", 0, 1)]
    t.x += 1.0
    (pose, _, slide), _ = charges.charge_spot(b, c, t, "front")
    assert (pose.x, pose.y) == pytest.approx((37.0, 22.0 - 2 * W)) and slide == pytest.approx(1.0)
    assert charges.contact_placement(b, c, t, "front")[0] == _fresh_spot(b, c, t, "front")[0][0]


def test_a_forecast_copy_gets_the_answer_of_a_charger_standing_there() -> None:
    """A copy of the charger 2" to -x (off the table's units) is answered for its own place: the aligned spot
    projects its centre, x = 34, onto the front of 20 orcs in one rank (15.7" wide); the charger's own answer stays
    x = 36, and once the charger stands at x = 34 it gets the copy's answer."""
    b = battle([placement("marcher_spearmen", 36, 10.5, 90)],
               [placement("orc_warriors", 36, 22 + W / 2, 270, files=20)])
    c, t = b.unit(0), b.unit(1)
    copy = moved_copy(c, geo.Pose(34.0, 10.5, 90.0))
    ghost = charges.contact_placement(b, copy, t, "front")
    own = charges.contact_placement(b, c, t, "front")
    assert (ghost[0].x, own[0].x) == pytest.approx((34.0, 36.0))
    c.x = 34.0
    assert charges.contact_placement(b, c, t, "front") == ghost == _fresh_spot(b, c, t, "front")[0]


def _reference_sight(state: BattleState, viewer: UnitState, target: UnitState) -> bool:
    """CORE.GEO.LOS as line_of_sight had it before the cache: every third unit near the box between the centres
    (padded by its radius and the larger of the two others') blocks, only Large Targets when either is one."""
    large = target.has("large_target") or viewer.has("large_target")

    def between(o: UnitState) -> bool:
        pad = space.radius(o) + max(space.radius(viewer), space.radius(target))
        return (min(viewer.x, target.x) - pad <= o.x <= max(viewer.x, target.x) + pad
                and min(viewer.y, target.y) - pad <= o.y <= max(viewer.y, target.y) + pad)

    blockers = [space.footprint(o) for o in state.units if o.alive and o.uid not in (viewer.uid, target.uid)
                and (not large or o.has("large_target")) and between(o)]
    blockers += [space.terrain_poly(t) for t in state.terrain if t.kind in space.BLOCKING]
    woods = [space.terrain_poly(t) for t in state.terrain if t.kind == "woods"]
    return geo.has_los(space.pose(viewer), viewer.width, viewer.depth, space.pose(target), target.width, target.depth,
                       blockers, woods)


def _reference_threat(b: Battle, c: UnitState, t: UnitState) -> tuple[float, str] | None:
    """charge_threat's geometry worked out directly (reach, front arc, chance, charged facing)."""
    reach = charges.charge_reach(c)
    dist = geo.distance(space.footprint(c), space.footprint(t))
    if dist > reach or not geo.partly_in_vision_arc(space.pose(c), c.width, c.depth, space.footprint(t)):
        return None
    return threats.estimates.charge_chance(c, dist), threats.charge_arc(b, c, t)


@pytest.mark.parametrize("seed", [0, 6])
def test_kept_answers_equal_fresh_ones_through_a_random_battle(seed: int) -> None:
    """Through a pitched battle of random legal actions: at every charge decision the legal charges and every
    charge spot equal a fresh computation; at every decision, line of sight between any two units equals the
    uncached test, and the agents' charge threats and gaps equal theirs worked out directly."""
    rng = np.random.default_rng(seed)
    b = Battle.from_scenario("pitched_battle", seed=seed)
    checked = {"charge": 0, "sight": 0, "threat": 0}
    while not b.is_over:
        acts = b.legal_actions()
        units = space.alive_units(b.state)
        if b.state.stage == "charge":
            kept = charges.legal_declarations(b)
            b.__dict__.pop("_charge_memo", None)
            assert kept == charges.legal_declarations(b), f"decision {len(b.actions)}"
            for a in kept:
                c, t = b.unit(a.unit), b.unit(a.target)
                facing = charges.charge_facing(b, c, t, roll=False)
                assert charges.charge_spot(b, c, t, facing) == _fresh_spot(b, c, t, facing)
            checked["charge"] += 1
        if len(b.actions) % 5 == 0:
            for v in units:
                for t in units:
                    if v.uid != t.uid:
                        assert space.line_of_sight(b.state, v, t) == _reference_sight(b.state, v, t)
                        assert threats.gap(v, t) == space.unit_distance(v, t)
                        checked["sight"] += 1
                        if v.side != t.side and threats.can_threaten(b, v):
                            assert threats.charge_threat(b, v, t) == _reference_threat(b, v, t)
                            checked["threat"] += 1
        b.apply(acts[int(rng.integers(len(acts)))])
    assert checked["charge"] > 3 and checked["sight"] > 1000 and checked["threat"] > 100, checked


def test_a_blocker_moved_into_the_line_of_sight_blocks_it() -> None:
    """CORE.GEO.LOS: a third unit (a second orc unit, 10 files: twice as wide) moved between viewer and target blocks every one of the
    15 sight lines; moved back out, the kept answer is the open one again."""
    b = battle([placement("marcher_spearmen", 36, 10.5, 90)],
               [placement("orc_warriors", 36, 30, 270), placement("orc_warriors", 60, 20, 270, files=10)])
    v, t, third = b.unit(0), b.unit(1), b.unit(2)
    assert space.line_of_sight(b.state, v, t)
    third.x = 36.0
    assert not space.line_of_sight(b.state, v, t) and not _reference_sight(b.state, v, t)
    third.x = 60.0
    assert space.line_of_sight(b.state, v, t)
    assert math.isclose(threats.gap(v, t), 30.0 - 2 * W - 10.5 - 2 * W, abs_tol=1e-9)


def _direct_arcs(c: UnitState, t: UnitState) -> list[str] | None:
    """CORE.GEO.UNIT_ARC worked out directly (geo.unit_arc of the units' own footprint and front rank)."""
    try:
        arcs = geo.unit_arc(space.pose(t), t.width, t.depth, space.front_rank(c))
    except ValueError:
        return None
    return [a for a in arcs if a != "inside"]


@pytest.mark.parametrize("seed", [1, 4])
def test_kept_arcs_and_reach_equal_direct_ones_through_a_random_battle(seed: int) -> None:
    """charges._arcs (behind charge_facing, CORE.GEO.UNIT_ARC, CORE.CHARGE.FACING) and charges._reach_and_arc
    (CORE.CHARGE.ELIGIBLE reach and CORE.GEO.VISION_ARC), both kept by value, answer as the direct tests on the
    units' footprints, for every pair of enemies at every fourth decision of a random battle; many of the answers
    come from what was kept, and both answers occur."""
    rng = np.random.default_rng(seed)
    b = Battle.from_scenario("pitched_battle", seed=seed)
    hits0 = charges._arcs.cache_info().hits + charges._reach_and_arc.cache_info().hits
    seen = {True: 0, False: 0}
    while not b.is_over:
        acts = b.legal_actions()
        if len(b.actions) % 4 == 0:
            for c in space.alive_units(b.state):
                for t in space.alive_units(b.state, 1 - c.side):
                    direct = _direct_arcs(c, t)
                    want_facing = "front" if t.has("skirmishers") else direct[0] if direct else None
                    assert charges.charge_facing(b, c, t, roll=False) == want_facing
                    reach = charges.charge_reach(c)
                    want = geo.distance(space.footprint(c), space.footprint(t)) <= reach and geo.partly_in_vision_arc(
                        space.pose(c), c.width, c.depth, space.footprint(t))
                    got = charges._reach_and_arc(c.x, c.y, c.facing, c.width, c.depth, t.x, t.y, t.facing, t.width,
                                                 t.depth, reach)
                    assert got == want, (len(b.actions), c.uid, t.uid)
                    seen[bool(want)] += 1
        b.apply(acts[int(rng.integers(len(acts)))])
    hits = charges._arcs.cache_info().hits + charges._reach_and_arc.cache_info().hits - hits0
    assert seen[True] > 10 and seen[False] > 100 and hits > 100, (seen, hits)


def test_a_battle_with_kept_charge_answers_copies_and_pickles() -> None:
    """A battle whose charge memo holds answers (and the compiled core's objects) deep-copies and pickles; the
    copy's memo starts empty for the same table, and its legal charges (CORE.CHARGE.ELIGIBLE) are the original's."""
    import copy
    import pickle

    b = _across()
    b.state.stage = "charge"
    legal = charges.legal_declarations(b)
    assert [(a.unit, a.target) for a in legal] == [(0, 1)]
    memo = b.__dict__["_charge_memo"]
    assert memo.spots and memo.targets
    for other in (copy.deepcopy(b), pickle.loads(pickle.dumps(b))):
        kept = other.__dict__["_charge_memo"]
        assert kept.key == memo.key and not kept.spots and not kept.targets
        assert charges.legal_declarations(other) == legal


@pytest.mark.parametrize(("tx", "ty", "tf", "tw", "td", "inside"), [
    (36.0, 20.0, 270.0, 5 * W, 2 * W, True),  # straight ahead: a corner in the front arc
    (36.0, 0.0, 90.0, 5 * W, 2 * W, False),  # straight behind: wholly behind the front edge
    (36.0, 12.0, 90.0, 30.0, 1.0, True),  # a wide unit right across the arc: no corner in it, but its body is
    (36.0 + 2.5 * W + 1.0, 10.0 + W - 0.5, 90.0, 2.0, 1.0, False),  # flush on the right flank, level with the front
    (36.0 + 2.5 * W + 1.0, 10.0 + W - 0.4, 90.0, 2.0, 1.0, True),  # 0.1" further forward: a corner past the ray
])
def test_the_vision_arc_pre_filter_answers_as_the_region_test(tx: float, ty: float, tf: float, tw: float, td: float,
                                                              inside: bool) -> None:
    """CORE.GEO.VISION_ARC: charges._reach_and_arc (a corner in the front arc; else wholly behind the front edge;
    else the region test) answers as geo.partly_in_vision_arc for spearmen (5 files, 2 ranks) at (36, 10) facing 90:
    ahead, behind, a wide unit right across the arc with no corner in it, one flush on the flank level with the
    front edge (only touching the arc) and one a little further forward."""
    viewer = geo.Pose(36.0, 10.0, 90.0)
    target = geo.footprint(geo.Pose(tx, ty, tf), tw, td)
    assert geo.partly_in_vision_arc(viewer, 5 * W, 2 * W, target) is inside
    assert charges._reach_and_arc.__wrapped__(36.0, 10.0, 90.0, 5 * W, 2 * W, tx, ty, tf, tw, td, 100.0) is inside
