"""The answers the shooting, sight and psychology helpers keep equal those worked out as before.

See :func:`env.rules.shooting.cover` (the terrain's cover kept per shooter footprint, target formation
and terrain), :func:`env.rules.shooting.in_sight` (vision arcs per pair of footprints),
:func:`env.rules.space.line_of_sight` (the blocker scan, terrain polygons per :func:`space.terrain_key`),
:func:`env.rules.space.near` and :func:`env.rules.space.unit_distance` (``math.hypot`` away from the
bound, distances per pair of footprints), :func:`env.rules.space.on_hill` (per terrain and centre) and
:func:`env.rules.psychology.general_ld`. Each is compared with the code it replaced, kept here as the
reference, on battles played by the scripted agents, by random play and in a siege, and on forecast
copies of their units.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import shapely

from battleline.agents.steering import moved_copy
from battleline.env.rules import characters, psychology, shooting, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.battle import Battle
from battleline.env.rules.state import BattleState, TerrainFeature, UnitState
from tests.setups import INFANTRY_BASE, battle, placement, snapshots


def _snapshots(scenario: str, blue: str, red: str, seed: int, every: int = 7) -> list[Battle]:
    """Copies of a battle of ``scenario`` between two named agents, one every ``every`` decisions (400 at most)."""
    return snapshots(scenario, blue, red, seed, every, limit=400)


@pytest.fixture(scope="module")
def played() -> list[Battle]:
    """Snapshots of two pitched battles (line_advance and random play) and a siege (random play)."""
    return (_snapshots("pitched_battle", "line_advance", "line_advance", 3)
            + _snapshots("pitched_battle", "random", "random", 4, every=11)
            + _snapshots("siege", "random", "random", 0, every=5))


def _pairs(b: Battle) -> list[tuple[UnitState, UnitState]]:
    """Every ordered pair of units on the table of opposite sides, and each with a forecast copy 3" ahead of it."""
    units = space.alive_units(b.state)
    pairs = [(u, t) for u, t in itertools.permutations(units, 2) if u.side != t.side]
    ahead = [(moved_copy(u, geo.Pose(u.x + 3 * math.cos(math.radians(u.facing)), u.y + 3 * math.sin(math.radians(u.facing)),
                                     u.facing)), t) for u, t in pairs[::3]]
    return pairs + ahead


# ------------------------------------------------------------------ the references (the code as it was)
def _cover_reference(battle: Battle, shooter: UnitState, t: UnitState) -> int:
    """shooting.cover before its answers were kept."""
    fl, fr = geo.front_edge(space.pose(shooter), shooter.width, shooter.depth)
    mid = ((fl[0] + fr[0]) / 2, (fl[1] + fr[1]) / 2)
    if t.troop_type == "war_machine" or t.models <= 1:
        centres = np.array([[t.x, t.y]])
    else:
        centres = geo.model_centres(space.pose(t), t.files, t.models, t.base_w, t.base_d)
    best = 0
    for feat in battle.state.terrain:
        value = 2 if feat.kind in space.HARD_COVER else 1 if feat.kind in space.SOFT_COVER else 0
        if value <= best:
            continue
        poly = shapely.Polygon(feat.polygon)
        lines = shapely.linestrings([[mid, (float(x), float(y))] for x, y in centres])
        covered = shapely.intersects(lines, poly) | shapely.contains(poly, shapely.points(centres))
        if 2 * int(covered.sum()) >= len(centres):
            best = value
    if battle.state.castle:
        from battleline.env.rules.siege.castle import cover_for

        best = max(best, -(cover_for(battle.state, t) or 0))
    return -best


def _los_reference(state: BattleState, viewer: UnitState, target: UnitState) -> bool:
    """space.line_of_sight before the scan was spelt out: every unit's ``alive``, ``has`` and the terrain afresh;
    :func:`space._sight` not kept."""
    large = target.has("large_target") or viewer.has("large_target")
    sight_from = (viewer.x, viewer.y, viewer.facing, viewer.width, viewer.depth)
    sight_to = (target.x, target.y, target.facing, target.width, target.depth)
    x0, x1 = min(viewer.x, target.x), max(viewer.x, target.x)
    y0, y1 = min(viewer.y, target.y), max(viewer.y, target.y)
    reach = max(space._half_diagonal(*sight_from[3:]), space._half_diagonal(*sight_to[3:]))
    units = []
    for o in state.units:
        if o.alive and o.uid != viewer.uid and o.uid != target.uid and (not large or o.has("large_target")):
            w, d = o.width, o.depth
            pad = space._half_diagonal(w, d) + reach
            if x0 - pad <= o.x <= x1 + pad and y0 - pad <= o.y <= y1 + pad:
                units.append((o.x, o.y, o.facing, w, d))
    blocking = tuple(space.terrain_poly(t) for t in state.terrain if t.kind in space.BLOCKING)
    woods = tuple(space.terrain_poly(t) for t in state.terrain if t.kind == "woods")
    from battleline.env.rules import kernel

    return space._sight(sight_from, sight_to, tuple(units), blocking, woods, kernel.available())


def _in_sight_reference(battle: Battle, u: UnitState, t: UnitState) -> bool:
    """shooting.in_sight before its arcs were kept."""
    if not geo.partly_in_vision_arc(space.pose(u), u.width, u.depth, space.footprint(t)):
        return False
    return _los_reference(battle.state, u, t)


def _near_reference(a: UnitState, b: UnitState, reach: float) -> bool:
    """space.near before math.hypot: numpy's."""
    return float(np.hypot(a.x - b.x, a.y - b.y)) <= space.radius(a) + space.radius(b) + reach


def _general_ld_reference(battle: Battle, u: UnitState) -> int | None:
    """psychology.general_ld with the distances worked out afresh (shapely on fresh footprints)."""
    s = battle.state
    target = characters.carrier(s, u)
    for g in s.units:
        if not (g.general and g.side == u.side and g.in_play):
            continue
        gc = characters.carrier(s, g)
        if gc.fleeing or not gc.deployed:
            continue
        if gc.uid == target.uid:
            return None if g.refused else g.profile.Ld
        reach = psychology.LARGE_TARGET_INSPIRING_RANGE if g.has("large_target") else psychology.INSPIRING_RANGE
        if _near_reference(gc, target, reach) and geo.footprint(space.pose(gc), gc.width, gc.depth).distance(
                geo.footprint(space.pose(target), target.width, target.depth)) <= reach:
            return g.profile.Ld
    return None


# ------------------------------------------------------------------ played battles
def test_kept_answers_equal_the_reference_on_played_battles(played: list[Battle]) -> None:
    """CORE.TERRAIN.COVER, CORE.GEO.VISION_ARC, CORE.GEO.LOS, CORE.CONV.DISTANCE, CORE.SR.INSPIRING_PRESENCE: every
    pair of opposing units (and forecast copies 3" ahead) gets the reference's cover, sight, distance and near
    answers, each unit the reference's General's Ld and hill level (CORE.TERRAIN.HILL_LEVEL), and the table's
    units the same alive list."""
    asked = covered = seen = 0
    for b in played:
        s = b.state
        assert space.alive_units(s) == [u for u in s.units if u.alive]
        assert space.alive_units(s, 1) == [u for u in s.units if u.alive and u.side == 1]
        for u, t in _pairs(b):
            c = shooting.cover(b, u, t)
            assert c == _cover_reference(b, u, t), (u.uid, t.uid)
            sight = shooting.in_sight(b, u, t)
            assert sight == _in_sight_reference(b, u, t), (u.uid, t.uid)
            assert space.line_of_sight(s, u, t) == _los_reference(s, u, t), (u.uid, t.uid)
            assert space.unit_distance(u, t) == geo.distance(space.footprint(u), space.footprint(t))
            for reach in (0.0, 6.0, 12.0, 24.0):
                assert space.near(u, t, reach) == _near_reference(u, t, reach)
            asked, covered, seen = asked + 1, covered + (c != 0), seen + sight
        for u in s.units:
            if u.in_play:
                assert psychology.general_ld(b, u) == _general_ld_reference(b, u), u.uid
                assert space.on_hill(s, u) == any(f.kind == "hill" and shapely.Polygon(f.polygon).contains(
                    shapely.Point(u.x, u.y)) for f in s.terrain)
    assert asked > 3000 and covered > 0 and seen > 100  # the battles ask many questions, some with cover and sight


# ------------------------------------------------------------------ terrain changes
def _hedge_battle() -> Battle:
    """10 crossbowmen at (36, 10) facing 20 orcs 10" away across an open field (as the cover tests')."""
    depth2 = 2 * INFANTRY_BASE
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement("orc_warriors", 36, 10 + depth2 / 2 + 10.0 + depth2 / 2, 270, models=20, files=10)]
    return battle(blue, red, phase="shooting")


def test_kept_cover_follows_terrain_laid_moved_and_taken_away() -> None:
    """CORE.TERRAIN.COVER: no cover in the open; a wide hedge laid across the line of fire gives −1; the same
    feature turned into a wall in place gives −2; its outline moved in place behind the shooter gives none; taken
    away, none again."""
    b = _hedge_battle()
    u, t = b.unit(0), b.unit(1)
    assert shooting.cover(b, u, t) == 0
    hedge = TerrainFeature(kind="hedge", polygon=[(31.0, 16.0), (41.0, 16.0), (41.0, 16.5), (31.0, 16.5)])
    b.state.terrain.append(hedge)
    assert shooting.cover(b, u, t) == -1
    hedge.kind = "wall"
    assert shooting.cover(b, u, t) == -2
    hedge.polygon[:] = [(31.0, 2.0), (41.0, 2.0), (41.0, 2.5), (31.0, 2.5)]
    assert shooting.cover(b, u, t) == 0
    hedge.polygon[:] = [(31.0, 16.0), (41.0, 16.0), (41.0, 16.5), (31.0, 16.5)]
    assert shooting.cover(b, u, t) == -2
    b.state.terrain.pop()
    assert shooting.cover(b, u, t) == 0


def test_terrain_key_names_equal_terrain_alike_and_changed_terrain_apart() -> None:
    """The same features give the same number (also in another battle's state); a vertex moved or a kind changed in
    place gives another; putting it back gives the first again."""
    a, b = _hedge_battle(), _hedge_battle()
    rocks = [(10.0, 30.0), (14.0, 30.0), (14.0, 34.0)]
    a.state.terrain.append(TerrainFeature(kind="rocks", polygon=list(rocks)))
    b.state.terrain.append(TerrainFeature(kind="rocks", polygon=list(rocks)))
    first = space.terrain_key(a.state)
    assert space.terrain_key(b.state) == first != space.terrain_key(_hedge_battle().state)
    a.state.terrain[0].polygon[2] = (14.0, 35.0)
    moved = space.terrain_key(a.state)
    assert moved != first and space.terrain_key(b.state) == first
    a.state.terrain[0].polygon[2] = (14.0, 34.0)
    assert space.terrain_key(a.state) == first
    a.state.terrain[0].kind = "building"
    assert space.terrain_key(a.state) not in (first, moved)


def test_line_of_sight_follows_a_blocker_laid_in_place() -> None:
    """CORE.GEO.LOS: the crossbowmen see the orcs over the open field; rocks laid between them block the sight;
    the rocks' outline moved aside in place clears it again."""
    b = _hedge_battle()
    u, t = b.unit(0), b.unit(1)
    assert space.line_of_sight(b.state, u, t) and shooting.in_sight(b, u, t)
    rocks = TerrainFeature(kind="rocks", polygon=[(30.0, 15.0), (42.0, 15.0), (42.0, 17.0), (30.0, 17.0)])
    b.state.terrain.append(rocks)
    assert not space.line_of_sight(b.state, u, t) and not shooting.in_sight(b, u, t)
    rocks.polygon[:] = [(50.0, 15.0), (62.0, 15.0), (62.0, 17.0), (50.0, 17.0)]
    assert space.line_of_sight(b.state, u, t)


# ------------------------------------------------------------------ near at its bound
def test_near_agrees_with_numpy_at_and_around_its_bound() -> None:
    """space.near equals numpy.hypot's comparison for centre distances exactly at the bound, a few units in the last
    place either side of it, and at random."""
    b = _hedge_battle()
    u, t = b.unit(0), b.unit(1)
    rng = random.Random(5)
    checked = 0
    for _ in range(3000):
        t.x, t.y = u.x + rng.uniform(-40, 40), u.y + rng.uniform(-40, 40)
        d = float(np.hypot(u.x - t.x, u.y - t.y))
        exact = d - space.radius(u) - space.radius(t)
        for reach in (exact, math.nextafter(exact, math.inf), math.nextafter(exact, -math.inf),
                      exact + 1e-12, exact - 1e-12, rng.uniform(0, 48)):
            assert space.near(u, t, reach) == _near_reference(u, t, reach)
            checked += 1
    assert checked == 18000
