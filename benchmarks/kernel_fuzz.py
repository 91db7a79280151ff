"""The compiled core against the shapely reference: ``python -m benchmarks.kernel_fuzz [--queries N] [--seed S]``.

Random scenes (a moving unit, 0-12 other units, 0-4 convex terrain features,
a 72" x 48" table) are asked the same question by the compiled core
(:mod:`env.rules.kernel`) and by the reference (:class:`env.rules.space.Surroundings`,
:func:`env.rules.movement.furthest_legal`, shapely). Many units stand at the
tolerance edges on purpose: touching, 1" apart, EPS (0.01") either side of
those, a micro-inch either side of EPS. Query kinds:

* ``footprint``: the corners, bit for bit;
* ``wheel_pose``: the pose after a wheel, bit for bit;
* ``overlaps``: overlap by more than EPS of two convex polygons (CORE.CONV.UNITS);
* ``distance``: footprint distance within 1e-9" (only the comparisons the rules make must agree);
* ``furthest``: the furthest legal straight move (CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE,
  CORE.TERRAIN.COST), both refined and not, bit for bit;
* ``cost``: the terrain cost of a straight move's swept area (CORE.TERRAIN.COST), bit for bit;
* ``wheel``: whether a wheel is blocked (CORE.MOVE.WHEEL);
* ``stand``: whether a footprint may stand where it is (``blocked_at``);
* ``sight``: line of sight between two units past blockers and through woods (CORE.GEO.LOS), as
  ``geometry.has_los`` decides it; an "undecided" answer of the core is the reference's by construction;
* ``route``: whether a charge route's leg is clear (a hull or a wheel of at most 90°, CORE.CHARGE.MOVE), against
  :func:`env.rules.charges._sweep_clear`;
* ``charge``: a charger's contact spots on one edge of a target and the routes to them (CORE.CHARGE.MOVE,
  CORE.CHARGE.FEASIBLE), :func:`env.rules.kernel.charge_spots` against :class:`env.rules.charges._Neighbours` and
  :func:`env.rules.charges.route_clear` on the shapely reference alone, in battles in play with the charger set
  at random near its target;
* ``legal``: whole legal move sets of battles in play (``movement.legal``), core on and off.

Each kind reports queries and disagreements, and among them the exact ties:
an overlap of exactly EPS (the EPS/2-shrunk shapes closer than :data:`TIE`
inches), where the reference's answer is GEOS's rounding of its buffers and
either answer keeps CORE.CONV.UNITS. The exit code is 1 on any other
disagreement. Results go to ``--out`` (JSON), with a reproducer per
disagreement (kind, seed, index).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import numpy as np
import shapely
import typer
from rich.console import Console
from rich.progress import Progress

from benchmarks import check_at_least, flag_errors

console = Console(highlight=False)
EPS = 0.01
TABLE = (72.0, 48.0)
EDGE_GAPS = (0.0, EPS / 2, EPS, 2 * EPS, 1.0 - EPS, 1.0, 1.0 + EPS, 2 * EPS + 1e-6, 1.0 - EPS - 1e-6, 1.0 - EPS + 1e-6)
"""Gaps (inches) at which units are set beside the mover: the thresholds the rules compare with, and just around them."""
TIE = 1e-9
"""Inches: a disagreement where the reference's own margin (the gap between the EPS/2-shrunk shapes) is below this
is a tie at the tolerance edge, reported as such."""
KINDS = ("footprint", "wheel_pose", "overlaps", "distance", "furthest", "cost", "wheel", "stand", "route", "sight",
         "charge", "legal")
TERRAIN_KINDS = ("rocks", "woods", "hedge", "lake", "marsh")


def _native() -> Any:
    from battleline.env.rules import kernel

    if kernel.native is None:
        raise RuntimeError("the compiled core is not built (pip install -e . builds battleline.env.rules._kernel)")
    return kernel.native


def _facing(rng: np.random.Generator) -> float:
    """Facings the engine produces: multiples of 90°, of 22.5° and 45° (wheels), and arbitrary ones (charges)."""
    pick = rng.integers(4)
    if pick == 0:
        return float(90 * rng.integers(4))
    if pick == 1:
        return float(22.5 * rng.integers(16))
    return float(rng.uniform(-360.0, 720.0))


def _dims(rng: np.random.Generator) -> tuple[float, float]:
    files = int(rng.integers(1, 8))
    ranks = int(rng.integers(1, 5))
    base = float(rng.choice([1.0, 20 / 25.4, 25 / 25.4, 40 / 25.4, 2.0]))
    return files * base, ranks * float(rng.choice([base, 2.0 * base]))


def _ring(pose: tuple[float, float, float], w: float, d: float) -> np.ndarray:
    from battleline.env.rules import geometry as geo

    return np.array(geo.corner_list(geo.Pose(*pose), w, d), dtype=np.float64)


def random_scene(rng: np.random.Generator) -> dict[str, Any]:
    """A mover (pose, width, depth, flags), other units (rows x, y, facing, width, depth, enemy) and convex terrain."""
    w, d = _dims(rng)
    facing = _facing(rng)
    mover = (float(rng.uniform(2, TABLE[0] - 2)), float(rng.uniform(2, TABLE[1] - 2)), facing)
    if rng.random() < 0.2:  # at the table edge, within EPS either way
        mover = (w / 2 + float(rng.choice([0.0, EPS, -EPS / 2, 1e-7])), mover[1], 0.0 if rng.random() < 0.5 else 90.0)
    rows = []
    for _ in range(int(rng.integers(0, 9))):
        ow, od = _dims(rng)
        if rng.random() < 0.3:  # beside the mover at a tolerance edge, square to it
            gap = float(rng.choice(EDGE_GAPS))
            side = int(rng.integers(4))
            f = mover[2] + 90.0 * int(rng.integers(4))
            from battleline.env.rules import geometry as geo

            half_along = {0: d / 2, 1: w / 2, 2: d / 2, 3: w / 2}[side]
            other_half = od / 2 if (f - mover[2]) % 180 == 0 else ow / 2
            if side in (1, 3):
                other_half = ow / 2 if (f - mover[2]) % 180 == 0 else od / 2
            off = half_along + gap + other_half
            lx, ly = {0: (0.0, off), 1: (off, 0.0), 2: (0.0, -off), 3: (-off, 0.0)}[side]
            lx += float(rng.uniform(-w / 2, w / 2)) if side in (0, 2) else 0.0
            ly += float(rng.uniform(-d / 2, d / 2)) if side in (1, 3) else 0.0
            x, y = geo.to_world(geo.Pose(*mover), lx, ly)
            rows.append((x, y, f, ow, od, float(rng.random() < 0.6)))
        else:
            near = rng.random() < 0.8
            cx = mover[0] + float(rng.uniform(-16, 16)) if near else float(rng.uniform(0, TABLE[0]))
            cy = mover[1] + float(rng.uniform(-16, 16)) if near else float(rng.uniform(0, TABLE[1]))
            rows.append((cx, cy, _facing(rng), ow, od, float(rng.random() < 0.6)))
    terrain = []
    for _ in range(int(rng.integers(0, 4))):
        kind = str(rng.choice(TERRAIN_KINDS))
        cx = mover[0] + float(rng.uniform(-16, 16))
        cy = mover[1] + float(rng.uniform(-16, 16))
        n = int(rng.integers(3, 9))
        angles = np.sort(rng.uniform(0, 2 * np.pi, n))
        r = float(rng.uniform(0.5, 5.0))
        pts = np.column_stack([cx + r * np.cos(angles), cy + r * np.sin(angles)])
        if kind == "hedge":  # a thin obstacle
            pts = np.array([[cx, cy], [cx + r * 2, cy], [cx + r * 2, cy + 0.5], [cx, cy + 0.5]])
        hull = shapely.convex_hull(shapely.multipoints(pts))
        if hull.geom_type != "Polygon":
            continue
        terrain.append((kind, [tuple(p) for p in np.asarray(hull.exterior.coords)[:-1]]))
    flags = {"over_units": bool(rng.random() < 0.1), "skirmishers": bool(rng.random() < 0.1),
             "aquatic": bool(rng.random() < 0.1), "M": float(rng.choice([3.0, 4.0, 5.0, 6.0, 8.0]))}
    return {"mover": mover, "w": w, "d": d, "rows": rows, "terrain": terrain, "flags": flags}


def _split_terrain(scene: dict[str, Any]) -> tuple[list, list, list]:
    from battleline.env.rules.space import DIFFICULT, IMPASSABLE, OBSTACLES, WATER

    water = WATER if scene["flags"]["aquatic"] else frozenset()
    imp = [np.array(p) for k, p in scene["terrain"] if k in IMPASSABLE - water]
    dif = [np.array(p) for k, p in scene["terrain"] if k in DIFFICULT - water]
    obs = [np.array(p) for k, p in scene["terrain"] if k in OBSTACLES]
    return imp, dif, obs


def native_scene(scene: dict[str, Any]) -> Any:
    """The compiled :class:`_kernel.Scene` of a :func:`random_scene`."""
    imp, dif, obs = _split_terrain(scene)
    table = np.array(scene["rows"], dtype=np.float64).reshape(len(scene["rows"]), 6)
    f = scene["flags"]
    return _native().Scene(table, imp, dif, obs, *TABLE, f["over_units"], f["over_units"], f["skirmishers"], f["M"] / 2)


def reference_scene(scene: dict[str, Any]) -> Any:
    """The reference :class:`space.Surroundings` of a :func:`random_scene`, set up field by field as its __init__ does."""
    from battleline.env.rules import space

    imp, dif, obs = _split_terrain(scene)
    env = space.Surroundings.__new__(space.Surroundings)
    env.uid = -1
    env.table = TABLE
    polys = [space.geo.footprint(space.geo.Pose(x, y, f), w, d) for x, y, f, w, d, _ in scene["rows"]]
    env.uids = np.arange(len(polys), dtype=np.int64)
    env.polys = np.array(polys, dtype=object)
    env.enemy = np.array([e != 0 for *_, e in scene["rows"]], dtype=bool)
    env.bounds = space.bounds_of(env.polys)
    env.terrain_impassable = np.array([shapely.Polygon(p) for p in imp], dtype=object)
    env.castle_end = None
    env.impassable = env.terrain_impassable
    env.difficult = np.array([shapely.Polygon(p) for p in dif], dtype=object)
    env.obstacles = np.array([shapely.Polygon(p) for p in obs], dtype=object)
    env._difficult_boxes = space.bounds_of(env.difficult).tolist()
    env._obstacle_boxes = space.bounds_of(env.obstacles).tolist()
    f = scene["flags"]
    env.ignores_terrain = env.over_units = f["over_units"]
    env.skirmishers = f["skirmishers"]
    env.half_m = f["M"] / 2.0
    env.queried = None
    return env


def _stub(w: float, d: float) -> Any:
    return SimpleNamespace(width=w, depth=d, troop_type="infantry")


# ------------------------------------------------------------------ one query of each kind
def q_footprint(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import geometry as geo

    w, d = _dims(rng)
    p = (float(rng.uniform(-10, 80)), float(rng.uniform(-10, 60)), _facing(rng))
    ref = np.asarray(geo.footprint(geo.Pose(*p), w, d).exterior.coords)[:-1]
    got = _native().footprint(*p, w, d)
    return bool(np.array_equal(ref, got)), f"{p} {w} {d}"


def q_wheel_pose(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import geometry as geo

    w, d = _dims(rng)
    p = (float(rng.uniform(-10, 80)), float(rng.uniform(-10, 60)), _facing(rng))
    angle = float(rng.choice([45.0, -45.0, 22.5, -22.5, rng.uniform(-180, 180)]))
    ref = geo.wheel(geo.Pose(*p), w, angle, d)
    got = _native().wheel_pose(*p, w, d, angle)
    return (ref.x, ref.y, ref.facing) == got, f"{p} {w} {d} {angle}"


def _polygon_pair(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    scene = random_scene(rng)
    a = _ring(scene["mover"], scene["w"], scene["d"])
    if scene["rows"] and rng.random() < 0.8:
        x, y, f, w, d, _ = scene["rows"][int(rng.integers(len(scene["rows"])))]
        b = _ring((x, y, f), w, d)
    elif scene["terrain"]:
        b = np.array(scene["terrain"][0][1])
    else:
        b = _ring((scene["mover"][0] + 3, scene["mover"][1], 0.0), 2.0, 2.0)
    if rng.random() < 0.3:  # a swept hull on one side
        shift = rng.uniform(-6, 6, 2)
        a = np.asarray(shapely.convex_hull(shapely.multipoints(np.vstack([a, a + shift]))).exterior.coords)[:-1]
    return a, b


def q_overlaps(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import space

    a, b = _polygon_pair(rng)
    ref = bool(space.Surroundings.overlapping(shapely.Polygon(a), np.array([shapely.Polygon(b)], dtype=object))[0])
    return ref == _native().overlaps(a, b), f"{a.tolist()} {b.tolist()}"


def q_distance(rng: np.random.Generator) -> tuple[bool, str]:
    a, b = _polygon_pair(rng)
    ref = float(shapely.distance(shapely.Polygon(a), shapely.Polygon(b)))
    got = _native().distance(a, b)
    return abs(ref - got) <= 1e-9, f"{ref} {got}"


def q_furthest(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import geometry as geo
    from battleline.env.rules import movement

    scene = random_scene(rng)
    allowance = float(rng.choice([scene["flags"]["M"], scene["flags"]["M"] / 2, -scene["flags"]["M"] / 2,
                                  2 * scene["flags"]["M"], rng.uniform(-3, 16)]))
    gap = float(rng.choice([1.0, 1.0, 2 * EPS, 0.5]))
    pass_friends = bool(rng.random() < 0.2)
    refine = bool(rng.random() < 0.5)
    start = geo.Pose(*scene["mover"])
    ref = movement.furthest_legal(None, _stub(scene["w"], scene["d"]), start, allowance, gap, pass_friends,  # type: ignore[arg-type]
                                  env=reference_scene(scene), refine=refine)
    got = native_scene(scene).furthest_legal(*scene["mover"], scene["w"], scene["d"], allowance, gap, pass_friends, refine)
    if got is not None and got < 0:  # undecided: a tie, which movement.furthest_legal leaves to the reference
        return True, "undecided"
    return ref == got, f"ref={ref} core={got} allowance={allowance} gap={gap} refine={refine}"


def q_cost(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import geometry as geo

    scene = random_scene(rng)
    start = geo.Pose(*scene["mover"])
    end = geo.move_straight(start, float(rng.uniform(-8, 16)))
    w, d = scene["w"], scene["d"]
    ref = reference_scene(scene).terrain_cost(geo.swept_area(geo.footprint(start, w, d), geo.footprint(end, w, d)))
    got = native_scene(scene).terrain_cost(start.x, start.y, start.facing, end.x, end.y, end.facing, w, d)
    if got is None:  # undecided: a tie left to the reference
        return True, "undecided"
    return tuple(ref) == tuple(got), f"ref={ref} core={got}"


def q_wheel(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import geometry as geo
    from battleline.env.rules import space

    scene = random_scene(rng)
    angle = float(rng.choice([45.0, -45.0, 22.5, -22.5]))
    start = geo.Pose(*scene["mover"])
    w, d = scene["w"], scene["d"]
    after = geo.wheel(start, w, angle, d)
    ref = reference_scene(scene).blocked(space.geo.footprint(after, w, d), geo.wheel_swept_area(start, w, d, angle),
                                         start=geo.footprint(start, w, d))
    got = native_scene(scene).wheel_blocked(*scene["mover"], w, d, angle)
    if got < 0:
        return True, "undecided"
    return bool(ref) == bool(got), f"ref={ref} core={got} angle={angle}"


def q_stand(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import geometry as geo

    scene = random_scene(rng)
    gap = float(rng.choice([1.0, 2 * EPS, 0.5]))
    poly = geo.footprint(geo.Pose(*scene["mover"]), scene["w"], scene["d"])
    ref = reference_scene(scene).blocked(poly, poly, gap)
    got = native_scene(scene).blocked_at(*scene["mover"], scene["w"], scene["d"], gap)
    if got < 0:
        return True, "undecided"
    return bool(ref) == bool(got), f"ref={ref} core={got} gap={gap}"


SIGHT_OFFSETS = (0.0, EPS / 2, -EPS / 2, EPS / 2 + 1e-7, EPS / 2 - 1e-7, EPS, -EPS, 1e-7, -1e-7)
"""How far (inches) a blocker's corner or edge is set past a sight line: touching, at the EPS/2 erosion, around it."""
WOODS_DEPTHS = (1.5, 2.0, 2.0 + EPS, 2.0 + EPS - 1e-7, 2.0 + EPS + 1e-7, 2.02, 2.5, 3.0)
"""Depths (inches) of woods set across the sight line: around the 2" + EPS that still lets a segment see."""


def _box(cx: float, cy: float, w: float, h: float) -> np.ndarray:
    return np.array([[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2], [cx - w / 2, cy + h / 2]])


def _sight_points(viewer: tuple, target: tuple) -> tuple[list, list]:
    from battleline.env.rules import geometry as geo

    vc = geo.corner_list(geo.Pose(*viewer[:3]), viewer[3], viewer[4])
    tc = geo.corner_list(geo.Pose(*target[:3]), target[3], target[4])
    starts = [(0.5 * (vc[0][0] + vc[1][0]), 0.5 * (vc[0][1] + vc[1][1])), vc[0], vc[1]]
    return starts, [(target[0], target[1]), *tc]


def random_sight(rng: np.random.Generator) -> dict[str, Any]:
    """A viewer and a target (x, y, facing, width, depth), third units (each as those), blockers and woods as (k, 2) rings.

    Half the scenes stand on a quarter-inch grid at square facings, so that sight lines pass exactly through
    corners and along edges; blockers are then set touching a sight line, EPS/2 across it and a micro-inch
    either side, beside the viewer or the target (in contact), or two in contact across the line; woods are
    set across the line at depths around 2" + EPS.
    """
    grid = rng.random() < 0.5
    w, d = _dims(rng)
    tw, td = _dims(rng)
    if grid:
        w, d, tw, td = (float(np.ceil(v * 4) / 4) for v in (w, d, tw, td))
        vx, vy = float(rng.integers(8, 64)), float(rng.integers(4, 20))
        viewer = (vx, vy, 90.0, w, d)
        target = (vx + float(rng.integers(-12, 13)) * 0.5, vy + float(rng.integers(6, 26)), float(rng.choice([270.0, 90.0, 0.0])),
                  tw, td)
    else:
        viewer = (float(rng.uniform(10, 62)), float(rng.uniform(8, 40)), _facing(rng), w, d)
        ang, dist = rng.uniform(0, 2 * np.pi), rng.uniform(4, 30)
        target = (viewer[0] + dist * float(np.cos(ang)), viewer[1] + dist * float(np.sin(ang)), _facing(rng), tw, td)
    starts, ends = _sight_points(viewer, target)
    blockers: list[np.ndarray] = []
    units: list[tuple[float, float, float, float, float]] = []
    for _ in range(int(rng.choice([0, 1, 1, 1, 2, 3]))):
        pick = rng.random()
        p = starts[int(rng.integers(3))]
        q = ends[int(rng.integers(5))]
        bw, bd = (float(np.ceil(v * 4) / 4) for v in _dims(rng))
        if pick < 0.45:  # a corner on (or just across) a sight line, at a point exact on a grid
            t = float(rng.choice([0.5, 0.25, 0.75]))
            mx, my = p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])
            sx, sy = float(rng.choice([-1.0, 1.0])), float(rng.choice([-1.0, 1.0]))
            off = float(rng.choice(SIGHT_OFFSETS))
            blockers.append(_box(mx + sx * (bw / 2 - off), my + sy * (bd / 2 - off), bw, bd))
            if rng.random() < 0.3:  # a second one in contact with it, across the line
                blockers.append(_box(mx - sx * bw / 2, my + sy * (bd / 2 - off), bw, bd))
        elif pick < 0.6:  # in contact with the viewer or the target, side by side
            x, y, f, uw, ud = viewer if rng.random() < 0.5 else target
            gap = float(rng.choice(EDGE_GAPS))
            side = float(rng.choice([-1.0, 1.0]))
            from battleline.env.rules import geometry as geo

            cx, cy = geo.to_world(geo.Pose(x, y, f), side * (uw / 2 + gap + bw / 2), 0.0)
            units.append((cx, cy, f, bw, ud))
        elif pick < 0.7:  # the viewer's or the target's own footprint, which never blocks
            units.append(viewer if rng.random() < 0.5 else target)
        else:  # anywhere near the line, any facing
            t = float(rng.uniform(0.1, 0.9))
            cx = p[0] + t * (q[0] - p[0]) + float(rng.uniform(-3, 3))
            cy = p[1] + t * (q[1] - p[1]) + float(rng.uniform(-3, 3))
            units.append((cx, cy, _facing(rng), bw, bd))
    woods: list[np.ndarray] = []
    for _ in range(int(rng.integers(0, 3))):
        mid = ((starts[0][0] + ends[0][0]) / 2, (starts[0][1] + ends[0][1]) / 2)
        if grid and rng.random() < 0.7:  # a band across the line, so many sight lines cross it at one depth
            depth = float(rng.choice(WOODS_DEPTHS))
            woods.append(_box(mid[0] + float(rng.choice([0.0, 0.5, 3.0])), mid[1], float(rng.uniform(1, 16)), depth))
        else:
            n = int(rng.integers(3, 9))
            angles = np.sort(rng.uniform(0, 2 * np.pi, n))
            r = float(rng.uniform(0.5, 4.0))
            pts = np.column_stack([mid[0] + rng.uniform(-3, 3) + r * np.cos(angles), mid[1] + rng.uniform(-3, 3) + r * np.sin(angles)])
            hull = shapely.convex_hull(shapely.multipoints(pts))
            if hull.geom_type == "Polygon":
                woods.append(np.asarray(hull.exterior.coords)[:-1])
    return {"viewer": viewer, "target": target, "units": units, "blockers": blockers, "woods": woods}


def _stacked(rings: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    if not rings:
        return np.empty((0, 2)), np.empty(0, dtype=np.int64)
    return np.vstack(rings).astype(np.float64), np.array([len(r) for r in rings], dtype=np.int64)


def sight_both(scene: dict[str, Any]) -> tuple[bool, int]:
    """(the reference's answer, the core's: 1 sees, 0 does not, -1 undecided) for a :func:`random_sight` scene."""
    from battleline.env.rules import geometry as geo

    v, t = scene["viewer"], scene["target"]
    units = scene.get("units", [])
    blockers = [geo.footprint(geo.Pose(*u[:3]), u[3], u[4]) for u in units] + [shapely.Polygon(r) for r in scene["blockers"]]
    ref = geo.has_los(geo.Pose(*v[:3]), v[3], v[4], geo.Pose(*t[:3]), t[3], t[4], blockers,
                      [shapely.Polygon(r) for r in scene["woods"]])
    got = _native().line_of_sight(*v, *t, np.array(units, dtype=np.float64).reshape(-1, 5),
                                  *_stacked(scene["blockers"]), *_stacked(scene["woods"]))
    return bool(ref), int(got)


def q_sight(rng: np.random.Generator) -> tuple[bool, str]:
    scene = random_sight(rng)
    ref, got = sight_both(scene)
    return got < 0 or got == int(ref), f"ref={ref} core={got} scene={scene}"


def q_route(rng: np.random.Generator) -> tuple[bool, str]:
    from battleline.env.rules import charges
    from battleline.env.rules import geometry as geo

    scene = random_scene(rng)
    w, d = scene["w"], scene["d"]
    start = geo.Pose(*scene["mover"])
    imp, _, _ = _split_terrain(scene)
    rows = np.array([r[:5] for r in scene["rows"]], dtype=np.float64).reshape(len(scene["rows"]), 5)
    core = _native().RouteScene(rows, imp, *TABLE, start.x, start.y, start.facing, w, d)
    ref = SimpleNamespace(table=TABLE, start_poly=geo.footprint(start, w, d))
    polys = np.array([shapely.Polygon(p) for p in imp] + [geo.footprint(geo.Pose(*r[:3]), r[3], r[4]) for r in rows.tolist()],
                     dtype=object)
    keep = polys[~charges._overlapping(ref.start_poly, polys)]
    route = SimpleNamespace(table=TABLE, obstacles=keep, boxes=[list(b) for b in shapely.bounds(keep).tolist()] if len(keep) else [],
                            overlaps_any=lambda g, idx: bool(charges._overlapping(g, keep[idx]).any()))
    if rng.random() < 0.5:
        end = geo.Pose(start.x + float(rng.uniform(-10, 10)), start.y + float(rng.uniform(-10, 10)), _facing(rng))
        sweep = charges.space.Sweep(geo.footprint(start, w, d), geo.footprint(end, w, d))
        got = core.clear_hull(start.x, start.y, start.facing, end.x, end.y, end.facing, w, d)
    else:
        angle = float(rng.choice([15.0, -15.0, 45.0, -30.0, 90.0, -90.0, rng.uniform(-90, 90)]))
        sweep = charges.space.Sweep(geo.wheel_swept_area(start, w, d, angle))
        got = core.clear_wheel(start.x, start.y, start.facing, w, d, angle)
    want = charges._sweep_clear(route, sweep)  # type: ignore[arg-type]
    if got < 0:  # undecided: an overlap of exactly EPS; charges.leg_clear then asks the reference
        return True, "undecided"
    got = bool(got)
    if want != got:  # an overlap of exactly EPS is a tie, whose reference answer is GEOS's rounding of its buffers
        margin = min((float(shapely.distance(charges._shrink(sweep.geom), charges._shrink(o))) for o in keep
                      if shapely.intersects(sweep.geom, o)), default=np.inf)
        return want == got, f"ref={want} core={got} tie={margin < TIE}"
    return True, ""


_CHARGE_STATES: list[Any] = []
"""Battles in play (pitched_battle, random play, a copy at each charge declaration), made on first use."""


def charge_states() -> list[Any]:
    """:data:`_CHARGE_STATES`: copies of random pitched battles at their charge declarations (seeds 0-5)."""
    import copy
    import random

    from battleline.env.rules.battle import Battle

    if not _CHARGE_STATES:
        for seed in range(6):
            battle = Battle.from_scenario("pitched_battle", seed=seed)
            pick = random.Random(seed)
            while not battle.state.over:
                acts = battle.legal_actions()
                if battle.state.stage == "charge" and battle.state.turn > 1:
                    _CHARGE_STATES.append(copy.deepcopy(battle))
                battle.apply(acts[pick.randrange(len(acts))])
    return _CHARGE_STATES


def charge_case(rng: np.random.Generator) -> tuple[Any, Any, Any, str, frozenset[int], bool]:
    """A random (battle, charger, target, facing, ignore, route): the charger a copy of a unit of the phasing side,
    as it stands or set at random within 14" of the target's centre, facing anywhere or towards the target."""
    import copy

    from battleline.env.rules import space

    states = charge_states()
    battle = states[int(rng.integers(len(states)))]
    s = battle.state
    mine, theirs = space.alive_units(s, s.active), space.alive_units(s, 1 - s.active)
    c = copy.copy(mine[int(rng.integers(len(mine)))])
    t = theirs[int(rng.integers(len(theirs)))]
    if rng.random() < 0.5:  # a target with others close beside it, whose spots touch or overlap them
        crowd = [(min(space.unit_distance(o, u) for u in s.units if u.alive and u.uid != o.uid), k)
                 for k, o in enumerate(theirs)]
        t = theirs[sorted(crowd)[int(rng.integers(min(3, len(crowd))))][1]]
    if rng.random() < 0.7:
        c.x = float(np.clip(t.x + rng.uniform(-14, 14), 1.0, s.table_w - 1.0))
        c.y = float(np.clip(t.y + rng.uniform(-14, 14), 1.0, s.table_h - 1.0))
        c.facing = _facing(rng) if rng.random() < 0.5 else float(np.degrees(np.arctan2(t.y - c.y, t.x - c.x)) % 360.0)
    others = [o.uid for o in s.units if o.alive and o.uid not in (c.uid, t.uid)]
    if others and rng.random() < 0.4:  # another unit set beside the target, square to it, at a tolerance edge
        battle = copy.deepcopy(battle)
        s, t = battle.state, battle.unit(t.uid)
        foes = [u for u in others if battle.unit(u).side == t.side]
        o = battle.unit(int(rng.choice(foes if foes and rng.random() < 0.8 else others)))
        from battleline.env.rules import geometry as geo

        gap = float(rng.choice(EDGE_GAPS))
        side = 1.0 if rng.random() < 0.5 else -1.0
        o.facing = t.facing
        ahead = t.depth / 2 - o.depth / 2 + float(rng.choice([0.0, 0.0, EPS, -EPS, 1e-7, 1.0, -1.0]))  # fronts in line
        o.x, o.y = geo.to_world(geo.Pose(t.x, t.y, t.facing), side * (t.width / 2 + gap + o.width / 2), ahead)
    ignore = frozenset(int(u) for u in rng.choice(others, size=min(len(others), 2), replace=False)) if (
        others and rng.random() < 0.2) else frozenset()
    facing = str(rng.choice(["front", "left", "right", "rear"]))
    return battle, c, t, facing, ignore, bool(rng.random() < 0.9)


def charge_both(battle: Any, c: Any, t: Any, facing: str, ignore: frozenset[int], route: bool) -> tuple[list, list]:
    """(core, reference) per candidate offset: the core's (touched, uids, route) (:func:`kernel.charge_spots`) and the
    reference's (uids touched or None, route clear or None where the core leaves it unasked), both with sorted uids."""
    from battleline.env.rules import charges, kernel

    edge = charges.edge_frame(t, facing)
    offsets, _ = charges._offsets_on(c, edge)
    core = kernel.charge_spots(battle, c, t, ignore, edge, offsets, route)
    neighbours = charges._Neighbours(battle, c, t, ignore)
    old = os.environ.get("BATTLELINE_KERNEL")
    try:
        os.environ["BATTLELINE_KERNEL"] = "reference"
        path = charges.ChargeRoute(battle, c, t, facing, ignore)
    finally:
        if old is None:
            os.environ.pop("BATTLELINE_KERNEL", None)
        else:
            os.environ["BATTLELINE_KERNEL"] = old
    ref = []
    for k, off in enumerate(offsets):
        pose = charges._flush_pose(edge, c, off)
        touched = neighbours._touched_reference(pose)
        asked = core is not None and core[k][2] != -2
        ref.append((None if touched is None else sorted(touched), charges.route_clear(path, pose) if asked else None))
    return core, ref


def q_charge(rng: np.random.Generator) -> tuple[bool, str]:
    """One random charge query: ``kernel.charge_spots`` (each offset's end-spot answer, units touched and route)
    against the shapely reference (CORE.CHARGE.MOVE, CORE.CHARGE.ALIGN). Returns (agreed, note): the note names the
    first differing offset, or says "undecided" where the core left some answer to the reference."""
    battle, c, t, facing, ignore, route = charge_case(rng)
    core, ref = charge_both(battle, c, t, facing, ignore, route)
    if core is None:
        return True, "undecided"
    undecided = False
    for k, ((free, uids, clear), (touched, reached)) in enumerate(zip(core, ref)):
        undecided = undecided or free < 0 or clear == -1
        if free >= 0 and (sorted(uids) if free else None) != touched:
            return False, f"offset {k}: touched core={free, sorted(uids)} ref={touched}"
        if clear == -2 and route and free != 0:
            return False, f"offset {k}: route not worked out for a spot that may be an end"
        if clear >= 0 and bool(clear) != reached:
            return False, f"offset {k}: route core={clear} ref={reached}"
    return True, "undecided" if undecided else ""


QUERIES: dict[str, Callable[[np.random.Generator], tuple[bool, str]]] = {
    "footprint": q_footprint, "wheel_pose": q_wheel_pose, "overlaps": q_overlaps, "distance": q_distance,
    "furthest": q_furthest, "cost": q_cost, "wheel": q_wheel, "stand": q_stand, "route": q_route, "sight": q_sight,
    "charge": q_charge,
}
"""Every query kind's function: one random query of that kind asked of the compiled core and of the shapely reference,
returning (agreed, note); the note describes a disagreement, or says "undecided" where the core left the answer to
the reference (counted as agreeing, and reported as left to the reference)."""


def legal_move_states(scenario: str, seed: int, limit: int) -> list[tuple[Any, list, list]]:
    """Up to ``limit`` Movement-phase decisions of a random battle: (battle, core's legal set, reference's)."""
    import random

    from battleline.env.rules.battle import Battle

    battle = Battle.from_scenario(scenario, seed=seed)
    pick = random.Random(seed)
    out = []
    while not battle.state.over and len(out) < limit:
        acts = battle.legal_actions()
        if battle.state.stage == "move":
            out.append(_both_legal(battle))
        battle.apply(acts[pick.randrange(len(acts))])
    return out


def _both_legal(battle: Any) -> tuple[Any, list, list]:
    from battleline.env.rules import movement

    old = os.environ.get("BATTLELINE_KERNEL")
    try:
        os.environ["BATTLELINE_KERNEL"] = "native"
        core = movement.legal(battle)
        os.environ["BATTLELINE_KERNEL"] = "reference"
        battle.__dict__.pop("_move_cache", None)
        ref = movement.legal(battle)
    finally:
        if old is None:
            os.environ.pop("BATTLELINE_KERNEL", None)
        else:
            os.environ["BATTLELINE_KERNEL"] = old
    return battle, core, ref


def run_kind(kind: str, queries: int, seed: int, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Ask ``queries`` random questions of one kind of both implementations; returns counts and reproducers."""
    found: list[dict[str, Any]] = []
    asked = 0
    if kind == "legal":
        from battleline.env.rules.config import list_scenarios

        scenarios = [s for s in list_scenarios() if "siege" not in s and "gate" not in s]
        k = 0
        while asked < queries:
            scenario = scenarios[k % len(scenarios)]
            for battle, core, ref in legal_move_states(scenario, seed + k, queries - asked):
                asked += 1
                if core != ref and len(found) < 20:
                    found.append({"kind": kind, "scenario": scenario, "seed": seed + k, "decision": len(battle.actions),
                                  "only_core": [str(a) for a in core if a not in ref],
                                  "only_reference": [str(a) for a in ref if a not in core]})
                if progress:
                    progress(1)
            k += 1
        return {"queries": asked, "disagreements": len(found), "examples": found}
    ask = QUERIES[kind]
    bad = ties = undecided = 0
    for i in range(queries):
        ok, detail = ask(np.random.default_rng([seed, i]))
        undecided += detail == "undecided"
        if not ok:
            bad += 1
            ties += "tie=True" in detail
            if len(found) < 20:
                found.append({"kind": kind, "seed": seed, "index": i, "detail": detail})
        if progress:
            progress(1)
    return {"queries": queries, "disagreements": bad, "ties": ties, "undecided": undecided, "examples": found}


def main(
    queries: Annotated[int, typer.Option(help="random queries of each geometric kind")] = 100_000,
    legal_states: Annotated[int, typer.Option(help="Movement-phase states whose whole legal sets are compared")] = 2_000,
    seed: Annotated[int, typer.Option(help="first seed")] = 0,
    kinds: Annotated[str, typer.Option(help="comma-separated kinds, or 'all'")] = "all",
    out: Annotated[Path, typer.Option(help="JSON report")] = Path("benchmarks/results/kernel_fuzz.json"),
) -> None:
    """Fuzz the compiled core against the shapely reference; exit 1 on any disagreement."""
    from battleline.training.cli_common import UserError, check_output

    with flag_errors():
        chosen = list(KINDS) if kinds == "all" else [k.strip() for k in kinds.split(",")]
        unknown = [k for k in chosen if k not in KINDS]
        if unknown:
            raise UserError(f"--kinds: unknown kind {unknown[0]!r} (kinds: {', '.join(KINDS)})")
        check_at_least(1, queries=queries)
        check_at_least(0, legal_states=legal_states, seed=seed)
        check_output("--out", out)  # before any work: a fuzz of minutes must not end in an unwritable path
    _native()
    report: dict[str, Any] = {"command": " ".join(["python -m benchmarks.kernel_fuzz", *sys.argv[1:]]), "seed": seed,
                              "kinds": {}}
    t0 = time.time()
    with Progress(console=console) as bar:
        for kind in chosen:
            n = legal_states if kind == "legal" else queries
            task = bar.add_task(kind, total=n)
            report["kinds"][kind] = run_kind(kind, n, seed, lambda k, t=task: bar.advance(t, k))
    report["seconds"] = round(time.time() - t0, 1)
    total_bad = sum(r["disagreements"] - r.get("ties", 0) for r in report["kinds"].values())
    for kind, r in report["kinds"].items():
        tie = f" ({r['ties']} of them exact ties at EPS)" if r.get("ties") else ""
        tie += f", {r['undecided']} left to the reference" if r.get("undecided") else ""
        console.print(f"{kind:11s} {r['queries']:8d} queries  {r['disagreements']} disagreements{tie}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    console.print(f"wrote {out} ({report['seconds']} s)")
    raise SystemExit(1 if total_bad else 0)


if __name__ == "__main__":
    typer.run(main)
