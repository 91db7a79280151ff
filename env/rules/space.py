"""Unit and terrain geometry on top of :mod:`env.rules.geometry`, with caching.

The footprint of a unit only changes when it moves, turns, reforms or loses a
rank, so polygons are cached by ``(x, y, facing, width, depth)``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import shapely
from shapely.geometry import Polygon

from battleline.env.rules import geometry as geo
from battleline.env.rules import special_rules
from battleline.env.rules.state import BattleState, TerrainFeature, UnitState

IMPASSABLE = frozenset({"building", "rocks", "lake"})
DIFFICULT = frozenset({"woods", "marsh", "ford", "rubble"})
WATER = frozenset({"lake", "marsh", "ford"})  # open ground to Aquatic units (CORE.SR.AQUATIC)
OBSTACLES = frozenset({"hedge", "fence", "wall"})
SOFT_COVER = frozenset({"woods", "marsh", "hedge", "fence"})
HARD_COVER = frozenset({"wall", "rubble", "building", "rocks"})


def pose(u: UnitState) -> geo.Pose:
    """The unit's pose (centre in inches, facing in degrees)."""
    return geo.Pose(u.x, u.y, u.facing)


@lru_cache(maxsize=65536)
def _footprint(x: float, y: float, facing: float, width: float, depth: float) -> Polygon:
    return geo.footprint(geo.Pose(x, y, facing), width, depth)


def footprint(u: UnitState) -> Polygon:
    """The unit's footprint rectangle (CORE.GEO.FOOTPRINT), cached."""
    n = u.models
    w, d = _dims(u, n if n >= 1 else 1)  # UnitState.width and depth: N counts as 1 below 1
    return _footprint(u.x, u.y, u.facing, w, d)


def footprint_at(u: UnitState, p: geo.Pose, files: int | None = None) -> Polygon:
    """The footprint the unit would have at pose ``p`` (and ``files`` files)."""
    if files is None:
        return _footprint(p.x, p.y, p.facing, u.width, u.depth)
    if u.troop_type == "war_machine":
        return _footprint(p.x, p.y, p.facing, u.width, u.depth)  # one base whatever the crew (CORE.GEO.BASES)
    ranks = -(-u.models // files)
    return _footprint(p.x, p.y, p.facing, min(files, u.models) * u.base_w, ranks * u.base_d)


def front_rank(u: UnitState) -> np.ndarray:
    """Centres of the front-rank models, shape (min(F, N), 2), inches."""
    return geo.front_rank_centres(pose(u), u.files, u.models, u.base_w, u.base_d)


def centre(u: UnitState) -> tuple[float, float]:
    """The footprint centre (x, y) in inches."""
    return (u.x, u.y)


@lru_cache(maxsize=4096)
def _half_diagonal(width: float, depth: float) -> float:
    return 0.5 * float(np.hypot(width, depth))


def radius(u: UnitState) -> float:
    """Half the footprint diagonal (inches): a cheap bound for pre-filtering.

    ``UnitState.width`` and ``depth`` are spelt out (the same values, read from the fields without two
    property calls): W = min(F, max(1, N))·w, D = R·d (one rank for a war machine), CORE.GEO.FOOTPRINT.
    """
    n, f = u.models, u.files
    m = n if n >= 1 else 1
    if u.troop_type == "war_machine":
        return _half_diagonal((f if f <= m else m) * u.base_w, u.base_d)
    r = -(-n // (f if f > 1 else 1))
    return _half_diagonal((f if f <= m else m) * u.base_w, (r if r > 1 else 1) * u.base_d)


HYPOT_BAND = 1e-9
"""Relative width (of 1 + the bound) of the band round :func:`near`'s bound inside which ``numpy.hypot`` decides."""


def near(a: UnitState, b: UnitState, reach: float) -> bool:
    """Cheap pre-filter: whether footprints might be within ``reach`` inches.

    The centre distance is ``numpy.hypot``'s; :func:`math.hypot` (faster on
    two floats) answers where it lies farther than :data:`HYPOT_BAND` from the
    bound, since the two differ by a few units in the last place at most.
    """
    dx, dy = a.x - b.x, a.y - b.y
    bound = radius(a) + radius(b) + reach
    d = math.hypot(dx, dy)
    if abs(d - bound) > HYPOT_BAND * (1.0 + abs(bound)):
        return d <= bound
    return float(np.hypot(dx, dy)) <= bound


def in_vision_arc(viewer: UnitState, target: UnitState) -> bool:
    """Whether ``target``'s footprint is partly in ``viewer``'s front arc (CORE.GEO.VISION_ARC), kept per pair of
    footprints (:func:`geo.partly_in_vision_arc`; its corners decide first, without shapely, where they can)."""
    return _in_arc(viewer.x, viewer.y, viewer.facing, viewer.width, viewer.depth,
                   target.x, target.y, target.facing, target.width, target.depth)


@lru_cache(maxsize=16384)
def _in_arc(x: float, y: float, facing: float, width: float, depth: float,
            tx: float, ty: float, tfacing: float, twidth: float, tdepth: float) -> bool:
    """:func:`geo.partly_in_vision_arc` of the viewer's footprint (x, y, facing, width, depth; inches, degrees) and
    the target's (tx, ...): :func:`geo.corners_in_vision_arc` on the target's corners (its footprint polygon's
    vertices, the same numbers), the region test where they leave it undecided."""
    pose = geo.Pose(x, y, facing)
    seen = geo.corners_in_vision_arc(pose, width, depth, geo.corner_list(geo.Pose(tx, ty, tfacing), twidth, tdepth))
    if seen is not None:
        return seen
    return geo.partly_in_vision_arc(pose, width, depth, _footprint(tx, ty, tfacing, twidth, tdepth))


def unit_distance(a: UnitState, b: UnitState) -> float:
    """Footprint-to-footprint distance in inches (CORE.CONV.DISTANCE), kept per pair of footprints."""
    n, m = a.models, b.models
    aw, ad = _dims(a, n if n >= 1 else 1)  # UnitState.width and depth: N counts as 1 below 1
    bw, bd = _dims(b, m if m >= 1 else 1)
    return _footprint_distance(a.x, a.y, a.facing, aw, ad, b.x, b.y, b.facing, bw, bd)


@lru_cache(maxsize=16384)
def _footprint_distance(ax: float, ay: float, af: float, aw: float, ad: float,
                        bx: float, by: float, bf: float, bw: float, bd: float) -> float:
    """:func:`geo.distance` between the footprints (x, y, facing, width, depth) ``a`` and ``b``, inches."""
    return geo.distance(_footprint(ax, ay, af, aw, ad), _footprint(bx, by, bf, bw, bd))


@lru_cache(maxsize=256)
def _terrain_poly(points: tuple[tuple[float, float], ...]) -> Polygon:
    poly = Polygon(points)
    shapely.prepare(poly)
    return poly


def terrain_poly(t: TerrainFeature) -> Polygon:
    """The terrain feature's polygon (cached, prepared)."""
    return _terrain_poly(tuple(tuple(p) for p in t.polygon))


def terrain_of(state: BattleState, kinds: frozenset[str]) -> list[TerrainFeature]:
    """Terrain features whose kind is in ``kinds``."""
    return [t for t in state.terrain if t.kind in kinds]


def on_hill(state: BattleState, u: UnitState) -> bool:
    """CORE.TERRAIN.HILL_LEVEL: the unit's centre is on a hill (level 1); kept per terrain and centre."""
    key = (terrain_key(state), u.x, u.y)
    up = _ON_HILL.get(key)
    if up is None:
        if len(_ON_HILL) >= 16384:
            _ON_HILL.clear()
        pt = shapely.Point(u.x, u.y)
        up = _ON_HILL[key] = any(t.kind == "hill" and terrain_poly(t).contains(pt) for t in state.terrain)
    return up


_ON_HILL: dict[tuple[int, float, float], bool] = {}


def alive_units(state: BattleState, side: int | None = None) -> list[UnitState]:
    """Units on the table with models left, optionally of one side (``UnitState.alive``, spelt out: no call per unit)."""
    if side is None:
        return [u for u in state.units if u.deployed and not u.removed and u.models > 0 and u.joined_to is None]
    return [u for u in state.units
            if u.side == side and u.deployed and not u.removed and u.models > 0 and u.joined_to is None]


_TERRAIN_SEEN: list = [None, -1]
"""The terrain last named by :func:`terrain_key`: [its (kind, vertex tuples) list, its number]."""
_TERRAIN_NUMBERS: dict[tuple, int] = {}
_TERRAIN_COUNT = itertools.count()


def terrain_key(state: BattleState) -> int:
    """A number naming the table's terrain (every feature's kind and outline, in order): equal numbers, equal terrain.

    The same terrain always gets the same number in a process (until 4,096 have been named; then numbers
    start afresh, never reused), so answers that depend on the terrain can be kept under it.
    """
    now = [(t.kind, t.polygon) for t in state.terrain]
    try:
        if now == _TERRAIN_SEEN[0]:  # vertex tuples compare by value: a feature changed in place is not missed
            return _TERRAIN_SEEN[1]
    except ValueError:  # a vertex held as an array compares element-wise: worked out afresh below
        pass
    snap = [(kind, [tuple(p) for p in poly]) for kind, poly in now]
    key = tuple((kind, tuple(pts)) for kind, pts in snap)
    number = _TERRAIN_NUMBERS.get(key)
    if number is None:
        if len(_TERRAIN_NUMBERS) >= 4096:
            _TERRAIN_NUMBERS.clear()
        number = _TERRAIN_NUMBERS[key] = next(_TERRAIN_COUNT)
    _TERRAIN_SEEN[:] = [snap, number]
    return number


BLOCKING = frozenset({"building", "rocks"})


def line_of_sight(state: BattleState, viewer: UnitState, target: UnitState, scan: SightScan | None = None) -> bool:
    """CORE.GEO.LOS between two units: third units and blocking features obstruct; woods block after 2".

    Only the third units near the box between the two centres (padded by
    the radii) are passed on as blockers; the answer is kept by
    :func:`_sight` for the same places of the viewer, the target, those
    units and the terrain. The units' ``alive`` and ``has`` are spelt out,
    and the terrain's polygons kept per terrain (:func:`terrain_key`).
    ``scan``: :func:`sight_scan` of ``state`` as it stands now, when the caller asks several questions of one
    state; the same blockers, in the same order, and the same terrain are then read from it.
    """
    large = "large_target" in target.special_rules or "large_target" in viewer.special_rules  # UnitState.has
    n, m = viewer.models, target.models
    vw, vd = _dims(viewer, n if n >= 1 else 1)  # UnitState.width and depth: N counts as 1 below 1
    tw, td = _dims(target, m if m >= 1 else 1)
    vx, vy, tx, ty = viewer.x, viewer.y, target.x, target.y
    sight_from = (vx, vy, viewer.facing, vw, vd)
    sight_to = (tx, ty, target.facing, tw, td)
    x0, x1 = min(vx, tx), max(vx, tx)
    y0, y1 = min(vy, ty), max(vy, ty)
    reach = max(_half_diagonal(vw, vd), _half_diagonal(tw, td))
    vu, tu = viewer.uid, target.uid
    units = []
    if scan is not None:
        for uid, ox, oy, half, place, big in scan.rows:
            if uid != vu and uid != tu and (big or not large):
                pad = half + reach
                if x0 - pad <= ox <= x1 + pad and y0 - pad <= oy <= y1 + pad:
                    units.append(place)
        return _kept_sight(sight_from, sight_to, tuple(units), scan.terrain, scan.blocking, scan.woods, scan.core)
    for o in state.units:
        n = o.models
        if (n > 0 and o.deployed and not o.removed and o.joined_to is None and o.uid != vu and o.uid != tu
                and (not large or "large_target" in o.special_rules)):
            w, d = _dims(o, n)
            pad = _half_diagonal(w, d) + reach
            if x0 - pad <= o.x <= x1 + pad and y0 - pad <= o.y <= y1 + pad:
                units.append((o.x, o.y, o.facing, w, d))
    number, blocking, woods = _sight_terrain(state)
    from battleline.env.rules import kernel

    return _kept_sight(sight_from, sight_to, tuple(units), number, blocking, woods, kernel.available())


def _dims(o: UnitState, n: int) -> tuple[float, float]:
    """``(o.width, o.depth)`` in inches for a unit with ``n`` = ``o.models`` >= 1 models, read from the fields in one
    call (CORE.GEO.FOOTPRINT: W = min(F, N)·w, D = R·d, one rank for a war machine)."""
    f = o.files
    w = (f if f <= n else n) * o.base_w
    if o.troop_type == "war_machine":
        return w, o.base_d
    r = -(-n // (f if f > 1 else 1))
    return w, (r if r > 1 else 1) * o.base_d


SightRow = tuple[int, float, float, float, tuple[float, float, float, float, float], bool]
"""One unit on the table as :func:`line_of_sight` reads it: (uid, x, y, half diagonal, (x, y, facing, width, depth),
Large Target); inches and degrees."""


class SightScan(NamedTuple):
    """What :func:`line_of_sight` reads of a state, read once for several questions (:func:`sight_scan`).

    ``rows``: the units on the table (``UnitState.alive``, in ``state.units`` order) as :data:`SightRow` s;
    ``terrain``, ``blocking``, ``woods``: :func:`_sight_terrain`; ``core``: :func:`kernel.available`.
    """

    rows: list[SightRow]
    terrain: int
    blocking: tuple[Polygon, ...]
    woods: tuple[Polygon, ...]
    core: bool


def sight_scan(state: BattleState) -> SightScan:
    """:class:`SightScan` of ``state`` as it stands now: valid while no unit or terrain feature changes."""
    rows = []
    for o in state.units:
        n = o.models
        if n > 0 and o.deployed and not o.removed and o.joined_to is None:
            w, d = _dims(o, n)
            x, y = o.x, o.y
            rows.append((o.uid, x, y, _half_diagonal(w, d), (x, y, o.facing, w, d), "large_target" in o.special_rules))
    number, blocking, woods = _sight_terrain(state)
    from battleline.env.rules import kernel

    return SightScan(rows, number, blocking, woods, kernel.available())


_SIGHT_TERRAIN: dict[int, tuple[int, tuple[Polygon, ...], tuple[Polygon, ...]]] = {}


def _sight_terrain(state: BattleState) -> tuple[int, tuple[Polygon, ...], tuple[Polygon, ...]]:
    """The table's :func:`terrain_key` with its (blocking features, woods) polygons for :func:`line_of_sight`, kept
    per terrain key."""
    key = terrain_key(state)
    kept = _SIGHT_TERRAIN.get(key)
    if kept is None:
        if len(_SIGHT_TERRAIN) >= 256:
            _SIGHT_TERRAIN.clear()
        kept = _SIGHT_TERRAIN[key] = (key, tuple(terrain_poly(t) for t in state.terrain if t.kind in BLOCKING),
                                      tuple(terrain_poly(t) for t in state.terrain if t.kind == "woods"))
    return kept


_SIGHTS: dict[tuple, bool] = {}
""":func:`_sight`'s answers by (viewer, target, third units, terrain number, core): see :func:`_kept_sight`."""


def _kept_sight(viewer: tuple, target: tuple, units: tuple, terrain: int, blocking: tuple, woods: tuple,
                core: bool) -> bool:
    """:func:`_sight`, kept under the terrain's number (:func:`terrain_key`: equal numbers, equal terrain, never
    reused) rather than its polygons, whose hashing (of their WKB) cost more than the lookup."""
    key = (viewer, target, units, terrain, core)
    seen = _SIGHTS.get(key)
    if seen is None:
        if len(_SIGHTS) >= 8192:
            _SIGHTS.clear()
        seen = _SIGHTS[key] = _sight(viewer, target, units, blocking, woods, core)
    return seen


def _sight(viewer: tuple, target: tuple, units: tuple, blocking: tuple, woods: tuple, core: bool = True) -> bool:
    """:func:`geo.has_los` from the footprint ``viewer`` (x, y, facing, width, depth) to ``target``, blocked by the
    footprints ``units`` (each as ``viewer``) and the polygons ``blocking``, through the woods ``woods``.
    The compiled core answers where it can (kernel.line_of_sight) when ``core``, the caller having just found it
    :func:`kernel.available` (the answers are kept apart by it, so a process that switches the core off asks the
    reference), the reference where it cannot."""
    from battleline.env.rules import kernel

    seen = kernel.switched_on_line_of_sight(viewer, target, units, blocking, woods) if core and kernel.native else None
    if seen is not None:
        return seen
    blockers = [_footprint(*u) for u in units] + list(blocking)
    return geo.has_los(geo.Pose(*viewer[:3]), viewer[3], viewer[4], geo.Pose(*target[:3]), target[3], target[4],
                       blockers, list(woods))


def castle_blocks(state: BattleState, u: UnitState) -> list[Polygon]:
    """The castle outlines ``u`` may not enter (SIEGE.SCEN.CASTLE); empty outside a siege."""
    if not state.castle:
        return []
    from battleline.env.rules.siege.castle import impassable_shapes

    return impassable_shapes(state, u)


def castle_end_ok(state: BattleState, u: UnitState, poly: Polygon) -> bool:
    """Whether ``u`` may end at footprint ``poly`` as far as the castle goes (SIEGE.SCEN.CASTLE, SIEGE.MOVE.WALLS)."""
    if not state.castle:
        return True
    from battleline.env.rules.siege.play import end_check

    if any(geo.overlaps(poly, b) for b in castle_blocks(state, u)):
        return False
    check = end_check(state, u)
    return check is None or bool(check(poly))


def _shrink(geom: Polygon) -> Polygon:
    return shapely.buffer(geom, -geo.EPS / 2, join_style="mitre")


Box = tuple[float, float, float, float]
"""An axis-aligned bounding box (minx, miny, maxx, maxy), inches."""


def boxes_meeting(box: Box, boxes: Sequence[Sequence[float]]) -> list[int]:
    """The indices of the ``boxes`` (each (minx, miny, maxx, maxy)) that intersect or touch ``box``.

    Geometries whose boxes do not meet cannot intersect, so this is an exact
    pre-filter for :func:`shapely.intersects`. Plain Python: the lists are
    short (terrain features, the units near a move).
    """
    x0, y0, x1, y1 = box
    return [i for i, b in enumerate(boxes) if b[0] <= x1 and b[2] >= x0 and b[1] <= y1 and b[3] >= y0]


QUERY_SLACK = 1e-6
"""Inches added around each box :attr:`Surroundings.queried` records, against rounding."""


def box_union(boxes: list[Box]) -> Box | None:
    """The smallest box holding all of ``boxes``; None for no boxes."""
    if not boxes:
        return None
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


class Sweep:
    """The area a straight move sweeps (:func:`geo.swept_area` of two footprints), built only when a test needs it.

    ``bounds`` is exact without the hull (a convex hull's box is the box of
    its points), and box pre-filters settle most of
    :meth:`Surroundings.blocked` and :meth:`Surroundings.terrain_cost`;
    ``geom`` builds the hull on first use. ``Sweep(poly)`` wraps a ready
    polygon (a wheel's swept area, or a footprint that does not move).
    """

    __slots__ = ("_start", "_end", "_geom", "bounds")

    def __init__(self, start: Polygon, end: Polygon | None = None) -> None:
        self._start, self._end = start, end
        self._geom: Polygon | None = start if end is None else None
        a = start.bounds
        if end is None:
            self.bounds: Box = a
        else:
            b = end.bounds
            self.bounds = (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))

    @property
    def origin(self) -> Polygon | None:
        """The footprint the move starts from; None for a ready polygon (``Sweep(poly)``)."""
        return self._start if self._end is not None else None

    @property
    def geom(self) -> Polygon:
        """The swept area as a polygon (the convex hull of both footprints)."""
        if self._geom is None:
            self._geom = geo.swept_area(self._start, self._end)
        return self._geom


def bounds_of(polys: np.ndarray) -> np.ndarray:
    """The bounding boxes of an object array of geometries: float64, shape (n, 4)."""
    return shapely.bounds(polys) if len(polys) else np.zeros((0, 4))


def placed(o: UnitState) -> tuple:
    """A unit's place and formation, all its footprint depends on: (uid, x, y, facing, files, models, base_w, base_d,
    troop_type) (CORE.GEO.FOOTPRINT; a war machine is one base whatever its crew, CORE.GEO.BASES). Bases and troop
    type never change in play, but a unit edited in place between two questions is seen."""
    return (o.uid, o.x, o.y, o.facing, o.files, o.models, o.base_w, o.base_d, o.troop_type)


class UnitsOnTable:
    """The units on the table at one decision: their footprint boxes and places (:func:`placed`)."""

    def __init__(self, state: BattleState) -> None:
        units = [o for o in state.units if o.alive]
        self.boxes = bounds_of(np.array([footprint(o) for o in units], dtype=object)).tolist()
        self.placed = [placed(o) for o in units]

    def meeting(self, box: Box | None, other_than: int) -> tuple:
        """The places of the units but ``other_than`` whose footprint boxes meet ``box`` (none for None)."""
        if box is None:
            return ()
        return tuple(p for p in (self.placed[i] for i in boxes_meeting(box, self.boxes)) if p[0] != other_than)


class Decision(NamedTuple):
    """A legality test's answer, and the units it was taken from (see :func:`decide`).

    ``region`` bounds every box in which :class:`Surroundings` looked for
    units during the test (None if it looked nowhere); ``units`` are the
    places of the units whose footprint boxes met it.
    """

    legal: bool
    region: Box | None
    units: tuple

    def holds(self, units: UnitsOnTable, uid: int) -> bool:
        """Whether the units (``uid`` aside) meeting ``region`` are still the same, in the same places.

        If so, and nothing else the test reads has changed, the test would
        answer exactly as before.
        """
        return units.meeting(self.region, uid) == self.units


def decide(test: Callable[[], bool], env: Surroundings, units: UnitsOnTable) -> Decision:
    """Run ``test``, which may look at other units only through ``env``, and record the units it looked at."""
    env.queried = []
    try:
        legal = test()
        region = box_union(env.queried)
    finally:
        env.queried = None
    return Decision(legal, region, units.meeting(region, env.uid))


class Surroundings:
    """Everything a moving unit must keep clear of, as shapely arrays for vectorised tests.

    Built once per unit and decision; used by movement, deployment and flight
    for CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE and CORE.TERRAIN.* checks.

    Args:
        state: the battle state.
        u: the moving unit (excluded from the obstacles).
        exclude: further uids to ignore (e.g. a charge target).
    """

    def __init__(self, state: BattleState, u: UnitState, exclude: frozenset[int] = frozenset()) -> None:
        others = [o for o in state.units if o.alive and o.uid != u.uid and o.uid not in exclude]
        self.uid = u.uid
        self.table = (state.table_w, state.table_h)
        self.uids = np.array([o.uid for o in others], dtype=np.int64)
        self.polys = np.array([footprint(o) for o in others], dtype=object)
        self.enemy = np.array([o.side != u.side for o in others], dtype=bool)
        self.bounds = bounds_of(self.polys)
        water = WATER if u.has("aquatic") else frozenset()
        terrain = [terrain_poly(t) for t in state.terrain if t.kind in IMPASSABLE - water]
        self.terrain_impassable = np.array(terrain, dtype=object)
        castle: list[Polygon] = []
        self.castle_end = None
        if state.castle:  # SIEGE.SCEN.CASTLE: walls, towers and closed gates block units not standing on them
            from battleline.env.rules.siege.castle import impassable_shapes

            castle = impassable_shapes(state, u)
            from battleline.env.rules.siege.play import end_check

            self.castle_end = end_check(state, u)  # a unit on the walls: where its moves may end
        self.impassable = np.array(terrain + castle, dtype=object)
        self.difficult = np.array([terrain_poly(t) for t in state.terrain if t.kind in DIFFICULT - water], dtype=object)
        self.obstacles = np.array([terrain_poly(t) for t in state.terrain if t.kind in OBSTACLES], dtype=object)
        self._difficult_boxes = bounds_of(self.difficult).tolist()
        self._obstacle_boxes = bounds_of(self.obstacles).tolist()
        self.ignores_terrain = special_rules.moves_over_units(u)  # CORE.MOVE.FLY, CORE.SR.ETHEREAL
        self.over_units = special_rules.moves_over_units(u)  # only the end position counts
        self.skirmishers = u.has("skirmishers")  # CORE.TYPE.SKIRMISHERS ignore difficult terrain
        self.half_m = u.profile.M / 2.0
        self.queried: list[Box] | None = None
        """When a list, every box within which other units were looked for is appended to it (see :func:`box_union`)."""

    @property
    def impassable(self) -> np.ndarray:
        """Impassable terrain and castle outlines (object array of polygons); assignable."""
        return self._impassable

    @impassable.setter
    def impassable(self, polys: np.ndarray) -> None:
        self._impassable = polys
        self._impassable_boxes = bounds_of(polys).tolist()

    @staticmethod
    def overlapping(geom: Polygon, polys: np.ndarray) -> np.ndarray:
        """Which of ``polys`` overlap ``geom`` by more than EPS: bool array, shape (n,).

        Both sides are shrunk by EPS/2 and tested for intersection: touching
        footprints do not overlap. (Intersection areas of exactly flush
        rectangles are unreliable in GEOS, so no area is computed.)
        """
        if len(polys) == 0:
            return np.zeros(0, dtype=bool)
        hit = shapely.intersects(geom, polys)
        if not hit.any():
            return hit
        shrunk = _shrink(geom)
        out = np.zeros(len(polys), dtype=bool)
        out[hit] = shapely.intersects(shrunk, shapely.buffer(polys[hit], -geo.EPS / 2, join_style="mitre"))
        return out

    def _overlaps_any(self, sweep: Sweep, polys: np.ndarray, boxes: Sequence[Sequence[float]]) -> bool:
        """Whether ``sweep`` overlaps any of ``polys`` (with bounding boxes ``boxes``), as :meth:`overlapping`."""
        meet = boxes_meeting(sweep.bounds, boxes)
        return bool(meet and self.overlapping(sweep.geom, polys[meet]).any())

    def blocked(self, end: Polygon, path: Polygon | Sweep, gap: float = 1.0, pass_friends: bool = False,
                start: Polygon | None = None) -> bool:
        """Whether ending at ``end`` after sweeping ``path`` is illegal.

        Illegal: off the table, through impassable terrain, ending within
        ``gap`` inches of any unit, coming within ``gap`` of an enemy, or
        passing through a friend (unless ``pass_friends``). ``start``: the
        footprint the move starts from (default: a two-footprint ``Sweep``'s
        first); an enemy it already stands within ``gap`` of may be moved away
        from, never closer to (CORE.MOVE.ONE_INCH).
        """
        sweep = Sweep(end) if self.over_units else path if isinstance(path, Sweep) else Sweep(path)
        minx, miny, maxx, maxy = end.bounds
        w, h = self.table
        if minx < -geo.EPS or miny < -geo.EPS or maxx > w + geo.EPS or maxy > h + geo.EPS:
            return True
        if self._overlaps_any(sweep, self.impassable, self._impassable_boxes):
            return True
        if self.castle_end is not None and not self.castle_end(end):
            return True
        near = self._near_box(sweep.bounds, gap)
        if not near.any():
            return False
        polys, enemy = self.polys[near], self.enemy[near]
        if (shapely.distance(end, polys) < gap - geo.EPS).any():
            return True
        if enemy.any():
            foes = polys[enemy]
            floor = np.full(len(foes), gap)
            if start is None and isinstance(path, Sweep):
                start = path.origin
            if start is not None:
                floor = np.minimum(floor, shapely.distance(start, foes))
            if (shapely.distance(sweep.geom, foes) < floor - geo.EPS).any():
                return True
        if not pass_friends and (~enemy).any():
            return self._overlaps_any(sweep, polys[~enemy], self.bounds[near][~enemy])
        return False

    def near(self, geom: Polygon, reach: float) -> np.ndarray:
        """Units whose bounding boxes lie within ``reach`` inches of ``geom``'s: bool array (n,).

        A cheap, conservative pre-filter (box distance never exceeds true distance).
        """
        return self._near_box(geom.bounds, reach)

    def _near_box(self, box: Box, reach: float) -> np.ndarray:
        qx0, qy0, qx1, qy1 = box
        if self.queried is not None:  # slack: only ever widens the record
            r = reach + QUERY_SLACK
            self.queried.append((qx0 - r, qy0 - r, qx1 + r, qy1 + r))
        if len(self.bounds) == 0:
            return np.zeros(0, dtype=bool)
        b = self.bounds
        dx = np.maximum(0.0, np.maximum(b[:, 0] - qx1, qx0 - b[:, 2]))
        dy = np.maximum(0.0, np.maximum(b[:, 1] - qy1, qy0 - b[:, 3]))
        return dx * dx + dy * dy < reach * reach

    def terrain_cost(self, path: Polygon | Sweep) -> tuple[float, float]:
        """(multiplier, extra inches): ×2 through difficult terrain, +M/2 per obstacle (CORE.TERRAIN.COST)."""
        if self.ignores_terrain:
            return 1.0, 0.0
        sweep = path if isinstance(path, Sweep) else Sweep(path)
        mult = 2.0 if not self.skirmishers and self._overlaps_any(sweep, self.difficult, self._difficult_boxes) else 1.0
        crossed = boxes_meeting(sweep.bounds, self._obstacle_boxes)
        n = int(self.overlapping(sweep.geom, self.obstacles[crossed]).sum()) if crossed else 0
        return mult, self.half_m * n

    def nearest_gap(self, poly: Polygon) -> np.ndarray:
        """Distances (inches) from ``poly`` to every other unit, shape (n,), float64."""
        if len(self.polys) == 0:
            return np.zeros(0)
        return shapely.distance(poly, self.polys)
