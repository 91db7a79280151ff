"""The sight answers read through the kept and shortened paths equal those worked out as before.

See :func:`env.rules.space.sight_scan` (the units and sight terrain read once for several line-of-sight
questions: :func:`env.rules.shooting.legal`, :func:`env.rules.war_machines.legal_shots`,
:func:`env.rules.magic.legal_casts`), :func:`env.rules.space.in_vision_arc` and
:func:`env.rules.geometry.corners_in_vision_arc` (vision arcs decided on a footprint's corners before shapely,
kept per pair of footprints), :func:`env.rules.geometry.partly_in_vision_arc` (its vertex test in plain floats,
its "wholly behind the front edge" shortcut and its kept region), :func:`env.rules.geometry.polygon` (shapely's
compiled constructors), ``kernel._rings`` (kept per terrain tuple) and :func:`env.rules.space.radius`. Each is
compared with the code it replaced, kept here as the reference, on battles played by the scripted agents, by
random play and in a siege, on forecast copies of their units, and on random poses.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import shapely

from battleline.agents.steering import moved_copy
from battleline.env.rules import geometry as geo
from battleline.env.rules import kernel, magic, shooting, space, templates, war_machines
from battleline.env.rules.battle import Battle
from battleline.env.rules.state import UnitState
from tests.setups import snapshots


@pytest.fixture(scope="module")
def played() -> list[Battle]:
    """Snapshots of two pitched battles (line_advance and random play) and a siege (random play)."""
    return (snapshots("pitched_battle", "line_advance", "line_advance", 5, 5, limit=400)
            + snapshots("pitched_battle", "random", "random", 6, 9, limit=400)
            + snapshots("siege", "random", "random", 1, 5, limit=400))


def _pairs(b: Battle) -> list[tuple[UnitState, UnitState]]:
    """Every ordered pair of units on the table, and each third one with a forecast copy 3" ahead of its viewer."""
    units = space.alive_units(b.state)
    pairs = list(itertools.permutations(units, 2))
    ahead = [(moved_copy(u, geo.Pose(u.x + 3 * math.cos(math.radians(u.facing)), u.y + 3 * math.sin(math.radians(u.facing)),
                                     u.facing)), t) for u, t in pairs[::3]]
    return pairs + ahead


# ------------------------------------------------------------------ the references (the code as it was)
def _arc_reference(pose: geo.Pose, width: float, depth: float, target: shapely.Geometry) -> bool:
    """geometry.partly_in_vision_arc before its shortcuts: numpy's local frame, the region test afresh."""
    hw, hd = 0.5 * width, 0.5 * depth
    lx, ly = geo._to_local_arr(pose, shapely.get_coordinates(target))
    if any(geo.point_arc(x, y, hw, hd) == "front" for x, y in zip(lx.tolist(), ly.tolist())):
        return True
    return bool(shapely.relate_pattern(geo.vision_arc_region(pose, width, depth), target, "T********"))


def _unit_arc_reference(u: UnitState, t: UnitState) -> bool:
    return _arc_reference(geo.Pose(u.x, u.y, u.facing), u.width, u.depth,
                          shapely.polygons(np.array(geo.corner_list(space.pose(t), t.width, t.depth)
                                                    + [geo.corner_list(space.pose(t), t.width, t.depth)[0]])))


# ------------------------------------------------------------------ played battles
def test_scanned_sight_equals_the_fresh_scan_on_played_battles(played: list[Battle]) -> None:
    """CORE.GEO.LOS, CORE.GEO.VISION_ARC: for every pair of units on the table (and forecast copies), the line of
    sight read from one :func:`space.sight_scan` equals the one that reads the units afresh, and the kept,
    corner-first vision arc equals the shapely reference; both answers vary over the battles."""
    asked = seen = in_arc = 0
    for b in played:
        s = b.state
        scan = space.sight_scan(s)
        for u, t in _pairs(b):
            los = space.line_of_sight(s, u, t, scan)
            assert los == space.line_of_sight(s, u, t), (u.uid, t.uid)
            arc = space.in_vision_arc(u, t)
            assert arc == _unit_arc_reference(u, t), (u.uid, t.uid)
            assert arc == geo.partly_in_vision_arc(space.pose(u), u.width, u.depth, space.footprint(t))
            asked, seen, in_arc = asked + 1, seen + los, in_arc + arc
    assert asked > 5000 and 0 < seen < asked and 0 < in_arc < asked


def test_legal_lists_read_through_one_scan_equal_those_read_afresh(played: list[Battle],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """CORE.SHOOT.TARGET, CORE.WM.*, CORE.MAGIC.TARGETING: shooting's, the war machines' and the spells' legal
    actions worked out through one scan per decision equal those worked out with every question reading the
    units afresh (a scan of None), at every snapshot of the played battles."""
    scanned = [_legal_sets(b) for b in played]
    monkeypatch.setattr(space, "sight_scan", lambda state: None)
    shots = casts = 0
    for k, b in enumerate(played):
        fresh = _legal_sets(b)
        assert scanned[k] == fresh, k
        shots += len(fresh[0]) + len(fresh[1])
        casts += len(fresh[2])
    assert shots > 0 and casts > 0  # some snapshots had something to shoot at, some a spell to cast


def _legal_sets(b: Battle) -> tuple[list, list, list]:
    """(shooting.legal, every machine's legal_shots, magic.legal_casts) of the battle as it stands, the phasing
    player's, whatever the stage."""
    s = b.state
    machines = [a for u in space.alive_units(s, s.active) if u.troop_type == "war_machine" and u.missile is not None
                for a in war_machines.legal_shots(b, u)]
    casts = magic.legal_casts(b) if s.stage == "cast" else []
    return shooting.legal(b), machines, casts


# ------------------------------------------------------------------ random poses
def test_vision_arcs_equal_the_reference_on_random_poses() -> None:
    """CORE.GEO.VISION_ARC: the corner-first arc (True on a front vertex, False when wholly behind the front edge,
    else the region test) equals the reference for random viewers and targets, many of them near the front edge,
    flush against a flank or straddling a front divider ray."""
    rng = random.Random(11)
    counts = {True: 0, False: 0, None: 0}
    for _ in range(4000):
        v = geo.Pose(rng.uniform(0, 48), rng.uniform(0, 48), rng.choice([0.0, 90.0, 180.0, 270.0, rng.uniform(0, 360)]))
        w, d = rng.choice([(10.0, 4.0), (5.0, 2.0), (2.0, 3.0), (20.0, 1.0)])
        lx = rng.choice([rng.uniform(-30, 30), 0.5 * w + rng.choice([0.0, 1e-9, -1e-9, 0.01]), rng.uniform(-w, w)])
        ly = rng.choice([rng.uniform(-30, 30), 0.5 * d + rng.choice([0.0, 1e-7, -1e-7, 2e-6, -2e-6]),
                         rng.uniform(-d, d)])
        tx, ty = geo.to_world(v, lx, ly)
        tw, td = rng.choice([(10.0, 4.0), (1.0, 1.0), (6.0, 2.0)])
        tp = geo.Pose(tx, ty, rng.choice([v.facing, v.facing + 90.0, rng.uniform(0, 360)]))
        corners = geo.corner_list(tp, tw, td)
        target = geo.footprint(tp, tw, td)
        want = _arc_reference(v, w, d, target)
        quick = geo.corners_in_vision_arc(v, w, d, corners)
        counts[quick] += 1
        assert quick in (None, want)
        assert geo.partly_in_vision_arc(v, w, d, target) == want
        assert space._in_arc.__wrapped__(v.x, v.y, v.facing, w, d, tp.x, tp.y, tp.facing, tw, td) == want
    assert min(counts.values()) > 50  # every branch is taken


def test_polygon_equals_shapely_polygons_and_its_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """geometry.polygon builds the WKB shapely.polygons builds, for closed and open rings of random vertices, and
    footprints built through it equal those built with shapely.polygons; with the compiled path switched off the
    answers stay the same."""
    rng = random.Random(3)
    rings = [np.array([(rng.uniform(-50, 50), rng.uniform(-50, 50)) for _ in range(rng.randint(3, 9))])
             for _ in range(300)]
    rings += [np.vstack([r, r[:1]]) for r in rings[:100]]
    assert geo._LIB_POLYGON
    for ring in rings:
        assert geo.polygon(ring).wkb == shapely.polygons(ring).wkb
    for _ in range(300):
        p = geo.Pose(rng.uniform(0, 72), rng.uniform(0, 48), rng.uniform(0, 360))
        fl, fr, rr, rl = geo.corner_list(p, 10.0, 4.0)
        assert geo.footprint(p, 10.0, 4.0).wkb == shapely.polygons(np.array([fl, rl, rr, fr, fl])).wkb
    monkeypatch.setattr(geo, "_LIB_POLYGON", False)
    for ring in rings[:50]:
        assert geo.polygon(ring).wkb == shapely.polygons(ring).wkb


def test_kept_rings_equal_fresh_ones_and_follow_a_new_tuple(played: list[Battle]) -> None:
    """kernel._rings gives the coordinates and sizes kernel._rings_of works out afresh, for the kept terrain tuple
    of each battle, and a list (never kept) or another tuple of other polygons gets its own."""
    for b in played[::10]:
        _, blocking, woods = space._sight_terrain(b.state)
        for polys in (blocking, woods, list(blocking)):
            got, want = kernel._rings(polys), kernel._rings_of(polys)
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    a = (shapely.box(0, 0, 1, 1),)
    b2 = (shapely.box(5, 5, 7, 8),)
    assert kernel._rings(a)[0].tolist() != kernel._rings(b2)[0].tolist()
    assert np.array_equal(kernel._rings(b2)[0], shapely.get_coordinates(b2))


def test_radius_equals_half_the_footprint_diagonal(played: list[Battle]) -> None:
    """space.radius and space._dims (width and depth read from the fields) equal the footprint's properties (half
    their diagonal), for every unit of the played battles, and for units with no models, one model, more files
    than models, no files, and war machines."""
    units = [u for b in played[::5] for u in b.state.units]
    assert any(u.troop_type == "war_machine" for u in units)
    for u in units:
        assert space.radius(u) == space._half_diagonal(u.width, u.depth), u.uid
        if u.models > 0:
            assert space._dims(u, u.models) == (u.width, u.depth), u.uid
    for kind in ("war_machine", "infantry"):
        u = next(u for u in units if (u.troop_type == "war_machine") == (kind == "war_machine")).copy()
        for models, files in ((0, 5), (1, 5), (3, 5), (7, 5), (12, 4), (5, 0)):
            u.models, u.files = models, files
            assert space.radius(u) == space._half_diagonal(u.width, u.depth), (kind, models, files)
            assert space._dims(u, max(models, 1)) == (u.width, u.depth), (kind, models, files)
            assert space.footprint(u).wkb == geo.footprint(space.pose(u), u.width, u.depth).wkb


def test_bases_within_a_misfire_blast_equal_those_of_every_unit(played: list[Battle]) -> None:
    """CORE.WM.MISFIRE.CANNON: the model bases within D3" (and farther) of a machine's footprint, found among the
    units whose footprints come near it, are those found among every unit's bases, in the same order."""
    found = 0
    for b in played[::3]:
        for u in space.alive_units(b.state):
            area = space.footprint(u)
            everyone = [base for o in war_machines._others(b, u) for base in templates.model_bases(o)]
            for dist in (1.0, 3.0, 8.0):
                got = war_machines._bases_within(b, u, area, dist)
                want = templates.within(area, dist, everyone)
                assert [(x.unit, x.slot, x.poly.wkb) for x in got] == [(x.unit, x.slot, x.poly.wkb) for x in want]
                found += len(got)
    assert found > 0


def test_far_distance_from_corners_equals_the_polygons_vertices(played: list[Battle]) -> None:
    """CORE.WM.STONE.AIM (the minimum range to the target's far side): the farthest corner found from the
    footprint's corners is the one found from its polygon's vertices, from random points, for every unit."""
    rng = random.Random(7)
    for b in played[::4]:
        for t in space.alive_units(b.state):
            for _ in range(5):
                p = (rng.uniform(0, 72), rng.uniform(0, 48))
                want = max(math.dist(p, tuple(c)) for c in space.footprint(t).exterior.coords)
                assert war_machines._far_distance(p, t) == want


def test_may_target_equals_any_mode(played: list[Battle]) -> None:
    """CORE.WM.*: war_machines.may_target (no line of sight asked for a stone thrower, whose indirect fire needs
    none) answers as ``bool(modes(...))`` for every machine and every unit on the table, with a scan and
    without, at every snapshot; stone throwers and cannons both get targets."""
    kinds: dict[str, int] = {}
    for b in played:
        s = b.state
        scan = space.sight_scan(s)
        for u in space.alive_units(s):
            if u.troop_type != "war_machine" or u.missile is None:
                continue
            for t in space.alive_units(s):
                want = bool(war_machines.modes(b, u, t))
                assert war_machines.may_target(b, u, t, scan) == want == war_machines.may_target(b, u, t)
                if want:
                    kind = war_machines.machine(u).kind
                    kinds[kind] = kinds.get(kind, 0) + 1
    assert {"stone_thrower", "great_cannon"} <= set(kinds)


def _may_fire_reference(battle: Battle, u: UnitState) -> bool:
    """shooting.may_fire before its flags were read one by one."""
    if not u.alive or u.side != battle.state.active or u.fleeing:
        return False
    f = u.flags
    if any(f.get(k) for k in ("shot", "marched", "charged", "failed_charge", "stupid", "declared_charge", "fled",
                              "siege_no_shoot")):
        return False
    move_or_fire = u.troop_type == "war_machine" or (u.missile is not None and shooting.weapon(u, battle.state).move_or_fire)
    if move_or_fire and (f.get("moved") or f.get("rallied")):
        return False
    if u.troop_type == "war_machine" and war_machines.silenced(battle, u):
        return False
    from battleline.env.rules import psychology
    from battleline.env.rules.t9a.artillery import forbids

    if u.marks and forbids(battle, u, "shoot"):
        return False
    return not psychology.engaged(battle, u)


def test_shooting_legal_equals_the_reference_loop(played: list[Battle]) -> None:
    """CORE.SHOOT.ELIGIBLE, CORE.SHOOT.TARGET, CORE.SR.BREATH_WEAPON: shooting.legal, which passes over units with
    neither a missile weapon nor a breath weapon before may_fire, equals the loop asking every unit, and may_fire
    equals its reference for every unit, at every snapshot (flags set by the play: shot, moved, marched...)."""
    from battleline.env.rules import breath, psychology, special_rules
    from battleline.env.rules import templates as tpl
    from battleline.env.rules.actions import Action

    asked = 0
    for b in played:
        s = b.state
        for u in s.units:
            assert shooting.may_fire(b, u) == _may_fire_reference(b, u), u.uid
        acts = []
        enemies = space.alive_units(s, 1 - s.active)
        free = [t for t in enemies if not psychology.engaged(b, t)]
        for u in space.alive_units(s, s.active):
            if not _may_fire_reference(b, u):
                continue
            if u.troop_type == "war_machine":
                if u.missile is not None:
                    acts += war_machines.legal_shots(b, u)
                continue
            if u.missile is not None:
                acts += [Action("shoot", u.uid, t.uid) for t in free
                         if shooting.in_range_and_sight(b, u, t) and not shooting._character_shielded(b, u, t)]
            if special_rules.breath_ready(b, u):
                acts += breath.legal(b, u, [t for t in free if space.near(u, t, tpl.TEARDROP_LENGTH)
                                            and shooting.in_sight(b, u, t) and not shooting._character_shielded(b, u, t)])
        assert shooting.legal(b) == acts
        asked += len(acts)
    assert asked > 0


def test_switched_on_sight_equals_the_kernels_line_of_sight(played: list[Battle]) -> None:
    """CORE.GEO.LOS: kernel.switched_on_line_of_sight (the switch read once by the caller) answers as
    kernel.line_of_sight for the viewer, target and third units of every pair at some snapshots."""
    assert kernel.available()
    asked = 0
    for b in played[::6]:
        _, blocking, woods = space._sight_terrain(b.state)
        for u, t in _pairs(b)[::4]:
            v = (u.x, u.y, u.facing, u.width, u.depth)
            w = (t.x, t.y, t.facing, t.width, t.depth)
            units = [(o.x, o.y, o.facing, o.width, o.depth) for o in space.alive_units(b.state) if o.uid not in (u.uid, t.uid)]
            assert kernel.switched_on_line_of_sight(v, w, units, blocking, woods) == kernel.line_of_sight(v, w, units, blocking, woods)
            asked += 1
    assert asked > 100


def test_pivot_blocked_by_the_core_equals_the_reference(played: list[Battle], monkeypatch: pytest.MonkeyPatch) -> None:
    """CORE.WM.MOVE, CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE: a machine's free pivot is blocked (compiled scene,
    ties to the reference) exactly where space.Surroundings says so, for every war machine of the snapshots
    turned to 24 facings and slid towards each other unit; with the core switched off the reference answers."""
    rng = random.Random(9)
    cases = []
    for b in played[::2]:
        for u in space.alive_units(b.state):
            if u.troop_type != "war_machine":
                continue
            others = [o for o in space.alive_units(b.state) if o.uid != u.uid]
            for k in range(24):
                o = rng.choice(others)
                f = rng.random()
                cases.append((b, u, geo.Pose(u.x + f * (o.x - u.x), u.y + f * (o.y - u.y), 15.0 * k)))
    blocked = 0
    for b, u, pose in cases:
        poly = space.footprint_at(u, pose)
        want = space.Surroundings(b.state, u).blocked(poly, poly, gap=war_machines.PIVOT_GAP)
        assert war_machines._pivot_blocked(b, u, pose) == want
        blocked += want
    assert 0 < blocked < len(cases)
    monkeypatch.setenv(kernel.ENV_SWITCH, "reference")
    for b, u, pose in cases[::7]:
        poly = space.footprint_at(u, pose)
        assert war_machines._pivot_blocked(b, u, pose) == space.Surroundings(b.state, u).blocked(poly, poly, gap=war_machines.PIVOT_GAP)
