"""The answers the scripted agents keep (or shortcut) equal those worked out afresh.

See :func:`tactics.manoeuvres.ring_arc` (a friend's arc round the protected_bubble's asset, per
pair of footprints), :func:`agents.estimates.estimate_combat` (the round before the break test,
per pair of units' fighting characteristics), :func:`agents.estimates.obstacle_between` (kept per terrain and centres, features
whose box the line misses skipped) and :func:`agents.steering.moved_copy` (a positional copy).
Each is compared with the code it replaced, kept here as the reference, on battles played by the
scripted agents and on forecast copies of their units.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import shapely

from battleline.agents import estimates
from battleline.agents.registry import make_agent
from battleline.agents.steering import moved_copy, replaced
from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.battle import Battle
from battleline.env.rules.state import TerrainFeature, UnitState
from battleline.tactics import manoeuvres as mv
from tests.setups import battle, placement, snapshots


def _snapshots(blue: str, red: str, seed: int, every: int = 9) -> list[Battle]:
    """Copies of a ``pitched_battle`` between two named agents, one every ``every`` decisions, the last one finished."""
    return snapshots("pitched_battle", blue, red, seed, every)


@pytest.fixture(scope="module")
def bubble_battles() -> list[Battle]:
    """Snapshots of protected_bubble (blue) against refused_flank, seed 1."""
    return _snapshots("protected_bubble", "refused_flank", 1)


def _reference_coverage(battle: Battle, asset: UnitState, reach: float = 6.0,
                        moved: dict[int, UnitState] | None = None) -> float:
    """ring_coverage as it was before its arcs were kept: every friend's arc worked out, degree by degree."""
    covered = [False] * 360
    for f in space.alive_units(battle.state, asset.side):
        if f.uid == asset.uid or f.fleeing:
            continue
        if moved and f.uid in moved:
            f = moved[f.uid]
        if space.unit_distance(asset, f) > reach:
            continue
        mid = math.atan2(f.y - asset.y, f.x - asset.x)
        rel = []
        for x, y in geo.corners(space.pose(f), f.width, f.depth):
            a = math.atan2(y - asset.y, x - asset.x)
            rel.append((a - mid + math.pi) % (2 * math.pi) - math.pi)
        lo, hi = math.degrees(mid + min(rel)), math.degrees(mid + max(rel))
        for k in range(int(math.floor(lo)), int(math.ceil(hi))):
            covered[k % 360] = True
    return float(sum(covered))


def test_kept_ring_coverage_equals_the_reference_on_played_battles(bubble_battles: list[Battle]) -> None:
    """For every unit of either side as the asset, at reaches 6" and 12", in every snapshot: the kept coverage equals
    the reference, and so does the coverage with each friend moved 2" along its facing (a forecast copy); the
    played bubble closes its ring at least once (some coverage above 180 degrees)."""
    best = 0.0
    compared = 0
    for b in bubble_battles:
        units = space.alive_units(b.state)
        for asset in units:
            for reach in (6.0, 12.0):
                got = mv.ring_coverage(b, asset, reach)
                assert got == _reference_coverage(b, asset, reach)
                best = max(best, got)
                for f in units:
                    if f.side == asset.side and f.uid != asset.uid:
                        moved = {f.uid: moved_copy(f, geo.move_straight(space.pose(f), 2.0))}
                        assert mv.ring_coverage(b, asset, reach, moved) == _reference_coverage(b, asset, reach, moved)
                        compared += 1
    assert best > 180.0 and compared > 100


def test_a_kept_arc_follows_its_friend_and_wraps_round_zero() -> None:
    """A single model (a copy of unit 0 cut down to one model) at (36, 20) and a block of 10 spearmen (5 files,
    3.9" x 1.6") 4" in front of it (+y): the block spans about 58°..122°; moved 5" to -x and turned (facing 0) it
    spans about 155°..205°; turned across +x, about -26°..26° (through 0, kept unreduced) and the coverage is
    that arc's whole degrees, as the reference counts them; a block 16" away is out of the 6" reach (no arc)."""
    b = battle([placement("marcher_spearmen", 20, 8, 90, models=10, files=10),
                placement("marcher_spearmen", 36, 24, 90, models=10, files=5),
                placement("marcher_spearmen", 36, 36, 90, models=10, files=5)],
               [placement("orc_warriors", 60, 40, 270)])
    asset = moved_copy(replaced(b.unit(0), models=1, files=1), geo.Pose(36.0, 20.0, 90.0))
    block, far = b.unit(1), b.unit(2)
    lo, hi = mv.ring_arc(asset, block)
    assert 55 < lo < 62 and 118 < hi < 125
    assert mv.ring_arc(asset, far) is None
    side = moved_copy(block, geo.Pose(31.0, 20.0, 0.0))
    lo2, hi2 = mv.ring_arc(asset, side)
    assert 150 < lo2 < 160 and 200 < hi2 < 210
    across = moved_copy(block, geo.Pose(41.0, 20.0, 0.0))
    lo3, hi3 = mv.ring_arc(asset, across)
    assert -30 < lo3 < 0 < hi3 < 30
    got = mv.ring_coverage(b, asset, moved={block.uid: across})
    assert got == _reference_coverage(b, asset, moved={block.uid: across}) == float(hi3 - lo3)
    assert mv.ring_coverage(b, asset) == _reference_coverage(b, asset) == float(hi - lo)


def _fresh_combat(battle: Battle, a: UnitState, d: UnitState, facing: str, charging: bool = True,
                  ally: float = 0.0) -> estimates.CombatEstimate:
    """estimate_combat with the kept rounds dropped first (so worked out afresh)."""
    estimates._ROUNDS.clear()
    return estimates.estimate_combat(battle, a, d, facing, charging, ally)


def test_kept_combat_estimates_equal_fresh_ones(bubble_battles: list[Battle]) -> None:
    """Every pair of enemies in every snapshot, each facing, charging or not, with and without an ally: the
    estimate asked a second time (kept) equals the one worked out afresh, and so does the estimate for a copy of
    the attacker standing elsewhere (the memo holds no place)."""
    pairs = 0
    for b in bubble_battles[::3]:
        units = space.alive_units(b.state)
        for a in units:
            for d in units:
                if a.side == d.side:
                    continue
                for facing in ("front", "left", "rear"):
                    for charging, ally in ((True, 0.0), (False, 0.0), (True, 1.0)):
                        fresh = _fresh_combat(b, a, d, facing, charging, ally)
                        assert estimates.estimate_combat(b, a, d, facing, charging, ally) == fresh
                        ghost = moved_copy(a, geo.move_straight(space.pose(a), -3.0))
                        kept = estimates.estimate_combat(b, ghost, d, facing, charging, ally)
                        assert kept == _fresh_combat(b, ghost, d, facing, charging, ally)
                pairs += 1
    assert pairs > 50


def test_a_kept_round_is_not_reused_across_a_defended_obstacle() -> None:
    """CORE.TERRAIN.DEFENDED_OBSTACLE: spearmen charging orcs across a wall hit only on 6s; the same pair with the
    wall taken away (a round kept for the same units) hits on the WS table again, and putting the wall back gives the
    defended answer again, each equal to a fresh estimate."""
    b = battle([placement("marcher_spearmen", 36, 10.5, 90)], [placement("orc_warriors", 36, 22, 270)])
    c, t = b.unit(0), b.unit(1)
    wall = TerrainFeature(kind="wall", polygon=[(20.0, 15.0), (52.0, 15.0), (52.0, 15.5), (20.0, 15.5)])
    open_field = estimates.estimate_combat(b, c, t, "front")
    b.state.terrain.append(wall)
    defended = estimates.estimate_combat(b, c, t, "front")
    assert defended.attacker_wounds < open_field.attacker_wounds
    assert defended == _fresh_combat(b, c, t, "front")
    b.state.terrain.pop()
    assert estimates.estimate_combat(b, c, t, "front") == open_field == _fresh_combat(b, c, t, "front")


def _reference_obstacle_between(battle: Battle, a: UnitState, b: UnitState) -> bool:
    """obstacle_between as it was: the centre line against every obstacle polygon."""
    obstacles = space.terrain_of(battle.state, space.OBSTACLES)
    if not obstacles:
        return False
    line = shapely.LineString([(a.x, a.y), (b.x, b.y)])
    return any(line.intersects(space.terrain_poly(t)) for t in obstacles)


def test_obstacle_between_equals_the_reference_for_random_lines() -> None:
    """2,000 random pairs of centres on a 72" x 48" table with a hedge, a fence and a diagonal wall (lines that end
    on a feature's edge or its box's edge included): the box shortcut answers as the full test does, both ways."""
    b = battle([placement("marcher_spearmen", 36, 10.5, 90)], [placement("orc_warriors", 36, 30, 270)])
    b.state.terrain += [
        TerrainFeature(kind="hedge", polygon=[(10.0, 20.0), (30.0, 20.0), (30.0, 21.0), (10.0, 21.0)]),
        TerrainFeature(kind="fence", polygon=[(40.0, 5.0), (41.0, 5.0), (41.0, 25.0), (40.0, 25.0)]),
        TerrainFeature(kind="wall", polygon=[(50.0, 30.0), (60.0, 40.0), (59.0, 41.0), (49.0, 31.0)]),
        TerrainFeature(kind="woods", polygon=[(0.0, 0.0), (72.0, 0.0), (72.0, 48.0), (0.0, 48.0)]),
    ]
    a, t = b.unit(0), b.unit(1)
    rng = np.random.default_rng(7)
    edges = [10.0, 20.0, 21.0, 30.0, 40.0, 41.0, 5.0, 25.0, 49.0, 60.0, 31.0]
    hits = 0
    for _ in range(2000):
        xa, ya, xb, yb = (float(rng.choice(edges)) if rng.random() < 0.2 else float(v)
                          for v in rng.uniform([0, 0, 0, 0], [72, 48, 72, 48]))
        a.x, a.y, t.x, t.y = xa, ya, xb, yb
        want = _reference_obstacle_between(b, a, t)
        assert estimates.obstacle_between(b, a, t) == want
        hits += want
    assert 100 < hits < 1900


def test_moved_copy_equals_dataclasses_replace(bubble_battles: list[Battle]) -> None:
    """Every unit of the last snapshot: the positional copy equals dataclasses.replace field for field, shares its
    lists and dicts as replace does, and leaves the unit where it was; replaced() with files does the same."""
    b = bubble_battles[-1]
    for u in b.state.units:
        pose = geo.Pose(u.x + 1.5, u.y - 2.0, u.facing + 45.0)
        before = (u.x, u.y, u.facing)
        copy = moved_copy(u, pose)
        want = dataclasses.replace(u, x=pose.x, y=pose.y, facing=pose.facing)
        assert copy == want and copy is not u
        assert copy.special_rules is u.special_rules and copy.flags is u.flags and copy.profile is u.profile
        assert (u.x, u.y, u.facing) == before
        assert replaced(u, files=3) == dataclasses.replace(u, files=3)
    with pytest.raises(KeyError):
        replaced(b.state.units[0], no_such_field=1)


def test_kept_threat_regions_equal_fresh_ones(bubble_battles: list[Battle]) -> None:
    """Every unit of every third snapshot, where it stands and at a pose 3" ahead turned 30°: the kept region is the
    very geometry built afresh (same WKB), and a copy with a narrower footprint (two files fewer) gets its own."""
    for b in bubble_battles[::3]:
        for u in space.alive_units(b.state):
            for pose in (None, geo.Pose(u.x, u.y + 3.0, u.facing + 30.0)):
                kept = mv.threat_region(u, pose)
                mv._REGIONS.clear()
                fresh = mv.threat_region(u, pose)
                assert shapely.to_wkb(kept) == shapely.to_wkb(fresh)
            if u.files > 2 and u.models > u.files - 2:  # two files fewer: a narrower footprint
                narrow = replaced(u, files=u.files - 2)
                kept = mv.threat_region(narrow)
                assert shapely.to_wkb(kept) != shapely.to_wkb(mv.threat_region(u))
                mv._REGIONS.clear()
                assert shapely.to_wkb(kept) == shapely.to_wkb(mv.threat_region(narrow))


def _reference_danger(agent, battle: Battle, u: UnitState, ignore: frozenset[int] = frozenset()) -> float:
    """ScriptedAgent.danger as it was: every enemy's charge_threat and combat estimate, one by one."""
    from battleline.agents.dangers import BREAK_WEIGHT
    from battleline.agents.threats import charge_threat

    worst = 0.0
    for e in agent.enemies(battle):
        if e.uid in ignore:
            continue
        threat = charge_threat(battle, e, u)
        if threat is None:
            continue
        p, facing = threat
        est = estimates.estimate_combat(battle, e, u, facing)
        if est.diff > 0:
            worst = max(worst, p * (est.diff + BREAK_WEIGHT * est.break_chance))
    return worst


def test_danger_with_the_chargers_read_once_equals_the_reference(bubble_battles: list[Battle]) -> None:
    """For each side's agent, every unit of each snapshot, where it stands and 4" ahead, with no enemy ignored and
    with its nearest enemy ignored: danger (and _danger with _chargers read once for both places) equal the
    reference, and some place is in danger (> 0)."""
    agents = [make_agent("line_advance"), make_agent("line_advance")]
    dangerous = 0
    for b in bubble_battles:
        for side, agent in enumerate(agents):
            agent.reset(b, side)
            chargers = agent._chargers(b)
            for u in space.alive_units(b.state, side):
                near = agent.nearest_enemy(b, u)
                ignore = frozenset({near.uid}) if near is not None else frozenset()
                for copy in (u, moved_copy(u, geo.move_straight(space.pose(u), 4.0))):
                    want = _reference_danger(agent, b, copy)
                    assert agent.danger(b, copy) == want == agent._danger(b, copy, chargers)
                    assert agent.danger(b, copy, ignore) == _reference_danger(agent, b, copy, ignore)
                    dangerous += want > 0
    assert dangerous > 0


def test_a_moved_view_sees_what_a_moved_clone_sees(bubble_battles: list[Battle]) -> None:
    """For every unit with a missile weapon in the snapshots, with each friend in turn moved 3" ahead: the targets
    it has in range and sight equal those on a clone of the battle with the friend moved, and the battle itself is
    untouched (the friend stays where it was)."""
    checked = 0
    for b in bubble_battles[::2]:
        for s in space.alive_units(b.state):
            if s.missile is None:
                continue
            for f in space.alive_units(b.state, s.side):
                pose = geo.move_straight(space.pose(f), 3.0)
                before = (f.x, f.y, f.facing)
                clone = b.clone()
                moved = clone.unit(f.uid)
                moved.x, moved.y, moved.facing = pose.x, pose.y, pose.facing
                want = mv.visible_targets(clone, clone.unit(s.uid))
                assert mv.visible_targets(b, s, {f.uid: pose}) == want
                assert (f.x, f.y, f.facing) == before
                checked += 1
    assert checked > 10


def test_kept_slot_rects_equal_fresh_ones() -> None:
    """Every unit of both armies of a new pitched battle in every deployment slot: the kept rectangle equals the
    one worked out afresh, also for a copy two files narrower asked after the unit (its own, narrower, rectangle)."""
    from battleline.env.rules.deployment import COLUMNS, ROWS
    from battleline.tactics import deployment as dep

    b = Battle.from_scenario("pitched_battle", seed=0)
    for u in b.state.units:
        for slot in range(len(COLUMNS) * len(ROWS)):
            assert dep.slot_rect(b, u, slot) == dep._slot_rect(b, u, slot)
            if u.files > 2 and u.models > u.files - 2:
                narrow = replaced(u, files=u.files - 2)
                got = dep.slot_rect(b, narrow, slot)
                assert got == dep._slot_rect(b, narrow, slot)
                assert got[2] - got[0] < dep.slot_rect(b, u, slot)[2] - dep.slot_rect(b, u, slot)[0]


def _reference_arc(battle: Battle, c: UnitState, t: UnitState) -> str:
    """charge_arc as it was: the engine's unrolled charge_facing, "front" when it has no answer."""
    from battleline.env.rules.charges import charge_facing

    try:
        return charge_facing(battle, c, t, roll=False) or "front"
    except ValueError:
        return "front"


def test_kept_charge_arcs_equal_the_engine_s(bubble_battles: list[Battle]) -> None:
    """Every pair of enemies of every snapshot, the charger where it stands, swung round to the target's far side
    and standing on the target's centre (no arc: "front"): the kept arc equals the engine's each time, and some
    pairs see a flank or the rear."""
    from battleline.agents.threats import charge_arc

    seen = set()
    for b in bubble_battles[::2]:
        units = space.alive_units(b.state)
        for c in units:
            for t in units:
                if c.side == t.side:
                    continue
                behind = geo.move_straight(space.pose(t), -(t.depth + c.depth + 2.0))
                for copy in (c, moved_copy(c, geo.Pose(behind.x, behind.y, t.facing)),
                             moved_copy(c, geo.Pose(t.x, t.y, t.facing))):
                    want = _reference_arc(b, copy, t)
                    assert charge_arc(b, copy, t) == want
                    assert charge_arc(b, copy, t) == want  # the kept answer
                    seen.add(want)
    assert {"front", "rear"} <= seen


def _reference_control_areas(battle: Battle, side: int, moved: dict[int, geo.Pose] | None = None) -> tuple[float, float]:
    """control_areas as it was: every region built afresh, unioned and differenced."""
    table = shapely.box(0.0, 0.0, battle.state.table_w, battle.state.table_h)
    zones = []
    for s in (side, 1 - side):
        regions = []
        for u in space.alive_units(battle.state, s):
            if mv.can_threaten(battle, u):
                p = (moved or {}).get(u.uid) or space.pose(u)
                reach = mv.charges.charge_reach(u)
                near = space.footprint_at(u, p).buffer(reach)
                regions.append(near.intersection(geo.vision_arc_region(p, u.width, u.depth, reach + u.width + u.depth)))
        zones.append(shapely.union_all(regions).intersection(table) if regions else shapely.Polygon())
    own, opp = zones
    return own.difference(opp).area, opp.difference(own).area


def test_kept_control_areas_equal_the_reference() -> None:
    """Snapshots of control_zones (red) against flank_teeth, seed 2: for either side, as the units stand and with
    each unit in turn moved 4" ahead, the kept areas equal the reference (exactly), asked twice; some ground is
    controlled by each side at some point."""
    total = [0.0, 0.0]
    for b in _snapshots("flank_teeth", "control_zones", 2, every=15)[:8]:
        for side in (0, 1):
            units = space.alive_units(b.state)
            for moved in [None, *({u.uid: geo.move_straight(space.pose(u), 4.0)} for u in units[::3])]:
                want = _reference_control_areas(b, side, moved)
                assert mv.control_areas(b, side, moved) == want
                assert mv.control_areas(b, side, moved) == want
                total[0] += want[0]
                total[1] += want[1]
    assert total[0] > 0 and total[1] > 0


def test_kept_obstacle_answers_follow_terrain_changed_in_place() -> None:
    """A line from (36, 10.5) to (36, 30) asked again after each change, each answer equal to the reference: no
    obstacle (False); a hedge across it appended (True); that hedge's outline moved aside in place (False); moved back
    in place (True); its kind changed in place to woods (False, not an obstacle); removed (False)."""
    b = battle([placement("marcher_spearmen", 36, 10.5, 90)], [placement("orc_warriors", 36, 30, 270)])
    a, t = b.unit(0), b.unit(1)
    across = [(30.0, 20.0), (42.0, 20.0), (42.0, 21.0), (30.0, 21.0)]
    aside = [(50.0, 20.0), (62.0, 20.0), (62.0, 21.0), (50.0, 21.0)]
    hedge = TerrainFeature(kind="hedge", polygon=list(across))
    b.state.terrain[:] = [f for f in b.state.terrain if f.kind not in space.OBSTACLES]
    steps: list[tuple[object, bool]] = [
        (lambda: None, False),
        (lambda: b.state.terrain.append(hedge), True),
        (lambda: setattr(hedge, "polygon", list(aside)), False),
        (lambda: hedge.polygon.__setitem__(slice(None), across), True),
        (lambda: setattr(hedge, "kind", "woods"), False),
        (lambda: b.state.terrain.remove(hedge), False),
    ]
    for change, want in steps:
        change()  # type: ignore[operator]
        assert estimates.obstacle_between(b, a, t) == _reference_obstacle_between(b, a, t) == want
