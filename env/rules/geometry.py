"""Table geometry: poses, footprints, arcs, distances, line of sight, moves.

Conventions (RULESET §1, CORE.CONV.* and CORE.GEO.*):

* Lengths are in inches, angles in degrees. The table is 72" x 48"
  (CORE.CONV.TABLE).
* A :class:`Pose` is the centre of a unit's footprint and its facing, in
  degrees counter-clockwise from +x. The front points along (cos f, sin f),
  the unit's right along (sin f, -cos f).
* The local frame (CORE.GEO.LOCAL_FRAME) has its origin at the footprint
  centre, +y out of the front edge and +x to the unit's right; hw = W/2 and
  hd = D/2. It is right-handed, so "clockwise" means the same in the local
  frame and on the table.
* Two values within :data:`EPS` (0.01") of each other are equal
  (CORE.CONV.UNITS). This module applies that to contact, overlap, arc
  dividers, table edges, edge coincidence and line of sight.
* Sides of a footprint are named ``'front'``, ``'right'``, ``'rear'``,
  ``'left'``. :func:`side_edge` returns each side's endpoints in clockwise
  order (front: FL->FR, right: FR->RR, rear: RR->RL, left: RL->FL); offsets
  along a side (:func:`flush_pose`) are positive in that clockwise direction.

Pure vector maths is used where it is exact (poses, local frames, arcs);
shapely 2 is used for distances and intersections of polygons.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import shapely
from shapely import Polygon

__all__ = [
    "EPS",
    "ARCS",
    "SIDES",
    "Pose",
    "footprint",
    "corners",
    "front_edge",
    "side_edge",
    "to_local",
    "to_world",
    "point_arc",
    "model_centres",
    "front_rank_centres",
    "arc_counts",
    "unit_arc",
    "distance",
    "in_contact",
    "overlaps",
    "vision_arc_region",
    "partly_in_vision_arc",
    "corners_in_vision_arc",
    "has_los",
    "move_straight",
    "wheel",
    "wheel_distance",
    "turn",
    "swept_area",
    "wheel_swept_area",
    "flee_pose",
    "facing_towards",
    "flush_pose",
    "edge_overlap",
    "contact_side",
    "within_table",
    "crosses_table_edge",
]

EPS: float = 0.01
"""Distance tolerance in inches (CORE.CONV.UNITS): values within EPS are equal."""

ARCS: tuple[str, ...] = ("front", "left", "right", "rear")
"""The four arcs, least favourable to an attacker first (CORE.GEO.UNIT_ARC)."""

SIDES: tuple[str, ...] = ("front", "right", "rear", "left")
"""Footprint sides in clockwise order."""

_SQRT_HALF = math.sqrt(0.5)
# Charger facing relative to the target's facing, per target side (flush_pose).
_FLUSH_TURN = {"front": 180.0, "right": 90.0, "rear": 0.0, "left": 270.0}


# ----------------------------------------------------------------------------
# Poses and frames
# ----------------------------------------------------------------------------
def _norm_deg(angle: float) -> float:
    """Angle in degrees reduced to [0, 360)."""
    a = angle % 360.0
    return 0.0 if a >= 360.0 else a


def _cos_sin(facing: float) -> tuple[float, float]:
    """(cos, sin) of an angle in degrees, exact at multiples of 90°."""
    a = facing % 360.0
    if a == 0.0 or a >= 360.0:
        return 1.0, 0.0
    if a == 90.0:
        return 0.0, 1.0
    if a == 180.0:
        return -1.0, 0.0
    if a == 270.0:
        return 0.0, -1.0
    r = math.radians(a)
    return math.cos(r), math.sin(r)


@dataclass(frozen=True, slots=True)
class Pose:
    """Centre (x, y) in inches and facing in degrees (CCW from +x).

    Poses are immutable and hashable. Functions of this module return poses
    whose facing is reduced to [0, 360).
    """

    x: float
    y: float
    facing: float

    def front(self) -> tuple[float, float]:
        """Unit vector out of the front edge, (cos f, sin f)."""
        return _cos_sin(self.facing)

    def right(self) -> tuple[float, float]:
        """Unit vector to the unit's right, (sin f, -cos f)."""
        c, s = _cos_sin(self.facing)
        return s, -c


def to_local(pose: Pose, px: float, py: float) -> tuple[float, float]:
    """Table point (px, py) -> local frame (lx, ly) of ``pose``.

    CORE.GEO.LOCAL_FRAME: lx is along the unit's right, ly out of its front.
    Inches in, inches out.
    """
    c, s = _cos_sin(pose.facing)
    dx = px - pose.x
    dy = py - pose.y
    return dx * s - dy * c, dx * c + dy * s


def to_world(pose: Pose, lx: float, ly: float) -> tuple[float, float]:
    """Local point (lx, ly) of ``pose`` -> table point (x, y); inverse of :func:`to_local`."""
    c, s = _cos_sin(pose.facing)
    return pose.x + lx * s + ly * c, pose.y - lx * c + ly * s


def _to_local_arr(pose: Pose, pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`to_local` for an (n, 2) array; returns (lx, ly)."""
    c, s = _cos_sin(pose.facing)
    dx = pts[:, 0] - pose.x
    dy = pts[:, 1] - pose.y
    return dx * s - dy * c, dx * c + dy * s


def _local_to_world_arr(pose: Pose, lx: np.ndarray, ly: np.ndarray) -> np.ndarray:
    """Vectorised :func:`to_world`; returns an (n, 2) float64 array."""
    c, s = _cos_sin(pose.facing)
    out = np.empty((len(lx), 2), dtype=np.float64)
    out[:, 0] = pose.x + lx * s + ly * c
    out[:, 1] = pose.y - lx * c + ly * s
    return out


# ----------------------------------------------------------------------------
# Footprints
# ----------------------------------------------------------------------------
def corners(pose: Pose, width: float, depth: float) -> np.ndarray:
    """Footprint corners (CORE.GEO.FOOTPRINT) as a (4, 2) float64 array.

    Order: front-left, front-right, rear-right, rear-left (clockwise).
    ``width`` (W, along the front) and ``depth`` (D) are in inches.
    """
    return np.array(_corner_list(pose, width, depth), dtype=np.float64)


def _corner_list(pose: Pose, width: float, depth: float) -> list[tuple[float, float]]:
    """[FL, FR, RR, RL] as Python float pairs."""
    c, s = _cos_sin(pose.facing)
    hw = 0.5 * width
    hd = 0.5 * depth
    # centre +/- hd*front +/- hw*right, with front=(c, s) and right=(s, -c)
    fx, fy = hd * c, hd * s
    rx, ry = hw * s, -hw * c
    x, y = pose.x, pose.y
    return [
        (x + fx - rx, y + fy - ry),
        (x + fx + rx, y + fy + ry),
        (x - fx + rx, y - fy + ry),
        (x - fx - rx, y - fy - ry),
    ]


def corner_list(pose: Pose, width: float, depth: float) -> list[tuple[float, float]]:
    """Footprint corners [FL, FR, RR, RL] as Python float pairs (inches): :func:`corners` without numpy."""
    return _corner_list(pose, width, depth)


_NO_HOLES = np.empty((0,), dtype=object)
_ALLOW_NAN = np.intc(0)  # shapely.creation.HandleNaN.allow, shapely.polygons' default


def _lib_polygon(ring: np.ndarray) -> Polygon:
    return shapely.lib.polygons(shapely.lib.linearrings(ring, _ALLOW_NAN), _NO_HOLES)


def _check_lib_polygon() -> bool:
    """Whether :func:`_lib_polygon` builds what ``shapely.polygons`` builds (the same WKB) on this shapely."""
    ring = np.array([[0.1, 0.2], [0.1, 1.3], [2.5, 1.3], [2.5, 0.2], [0.1, 0.2]], dtype=np.float64)
    try:
        return _lib_polygon(ring).wkb == shapely.polygons(ring).wkb
    except Exception:  # noqa: BLE001 - any failure of the internal path: use the public one
        return False


def polygon(ring: np.ndarray) -> Polygon:
    """``shapely.polygons(ring)`` for one (k, 2) float64 ring (closed or not), inches: the same polygon, built
    through shapely's compiled ufuncs without its Python argument handling where that gives the same WKB."""
    return _lib_polygon(ring) if _LIB_POLYGON else shapely.polygons(ring)


_LIB_POLYGON = _check_lib_polygon()


def footprint(pose: Pose, width: float, depth: float) -> Polygon:
    """The footprint rectangle W x D centred on the pose (CORE.GEO.FOOTPRINT).

    ``width`` (W, along the front) and ``depth`` (D) are in inches.
    Returns a shapely Polygon whose ring runs counter-clockwise from the
    front-left corner: FL, RL, RR, FR, FL (the reverse of :func:`corners`).
    Always the full rectangle, even with a short last rank.
    """
    fl, fr, rr, rl = _corner_list(pose, width, depth)
    return polygon(np.array([fl, rl, rr, fr, fl], dtype=np.float64))


def front_edge(
    pose: Pose, width: float, depth: float
) -> tuple[tuple[float, float], tuple[float, float]]:
    """(front-left, front-right) corners of the footprint, in inches."""
    return side_edge(pose, width, depth, "front")


def side_edge(
    pose: Pose, width: float, depth: float, side: str
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Endpoints (x, y) in inches of one side of the footprint, in clockwise order.

    front: (FL, FR); right: (FR, RR); rear: (RR, RL); left: (RL, FL).
    ``width`` and ``depth`` are the footprint's W and D in inches.

    Raises:
        ValueError: ``side`` is not one of :data:`SIDES`.
    """
    hw = 0.5 * width
    hd = 0.5 * depth
    if side == "front":
        a, b = (-hw, hd), (hw, hd)
    elif side == "right":
        a, b = (hw, hd), (hw, -hd)
    elif side == "rear":
        a, b = (hw, -hd), (-hw, -hd)
    elif side == "left":
        a, b = (-hw, -hd), (-hw, hd)
    else:
        raise ValueError(f"unknown side {side!r}; expected one of {SIDES}")
    return to_world(pose, *a), to_world(pose, *b)


def model_centres(
    pose: Pose, files: int, models: int, base_w: float, base_d: float
) -> np.ndarray:
    """Centres of the occupied model slots (CORE.GEO.FORMATION), (models, 2) float64.

    Rank 1 (the front rank) first; within a rank, file 1 first. File 1 is the
    unit's own leftmost file (most negative local x, i.e. the left as the
    unit looks out of its front). The last rank fills from file 1 rightwards.
    The effective number of files is min(files, models), as in
    ``UnitState.width``. ``base_w`` and ``base_d`` (one model's base) and the
    returned (x, y) table coordinates are in inches.

    Raises:
        ValueError: ``files < 1`` or ``models < 1``.
    """
    if files < 1 or models < 1:
        raise ValueError(f"need files >= 1 and models >= 1, got {files=} {models=}")
    f = min(files, models)
    ranks = -(-models // f)
    hw = 0.5 * f * base_w
    hd = 0.5 * ranks * base_d
    idx = np.arange(models)
    lx = -hw + (idx % f + 0.5) * base_w
    ly = hd - (idx // f + 0.5) * base_d
    return _local_to_world_arr(pose, lx, ly)


def front_rank_centres(
    pose: Pose, files: int, models: int, base_w: float, base_d: float
) -> np.ndarray:
    """Centres of the front-rank models, file 1 first: (min(files, models), 2) float64.

    See :func:`model_centres` for conventions, units (inches) and errors (its first ``min(files, models)`` rows).
    """
    return model_centres(pose, files, models, base_w, base_d)[: min(files, models)]


# ----------------------------------------------------------------------------
# Arcs
# ----------------------------------------------------------------------------
def point_arc(lx: float, ly: float, hw: float, hd: float, tol: float = EPS) -> str:
    """Arc of a local-frame point: 'front', 'left', 'right', 'rear' or 'inside'.

    CORE.GEO.ARCS with ax = |x| - hw, fy = y - hd, ry = -y - hd:

    * front: fy > 0 and fy >= ax;
    * rear: otherwise, ry > 0 and ry > ax;
    * left / right flank: otherwise, ax > 0 (x < 0 is the left);
    * inside: otherwise.

    The dividers are the 45° rays from the corners. Comparisons use the
    CORE.CONV.UNITS tolerance ``tol`` (default :data:`EPS`): values within
    ``tol`` are equal, so a point within ``tol`` of a divider ray goes to the
    arc less favourable to an attacker (front-corner rays -> front,
    rear-corner rays -> flank), and a point within ``tol`` of the footprint
    is 'inside'. Pass ``tol=0.0`` for the bare inequalities. Every point gets
    exactly one arc, and x -> -x swaps left and right.
    """
    ax = abs(lx) - hw
    fy = ly - hd
    if fy > tol and fy >= ax - tol:
        return "front"
    ry = -ly - hd
    if ry > tol and ry > ax + tol:
        return "rear"
    if ax > tol:
        return "left" if lx < 0 else "right"
    return "inside"


def arc_counts(
    target_pose: Pose, t_width: float, t_depth: float, points: np.ndarray
) -> dict[str, int]:
    """How many table points fall in each arc of the target (CORE.GEO.ARCS).

    Args:
        points: (n, 2) array-like of table coordinates, inches.

    Returns:
        ``{'front', 'left', 'right', 'rear', 'inside'} -> count``; every key is
        present and the counts sum to n. Arcs as :func:`point_arc`.
    """
    counts = {"front": 0, "left": 0, "right": 0, "rear": 0, "inside": 0}
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return counts
    lx, ly = _to_local_arr(target_pose, pts)
    hw = 0.5 * t_width
    hd = 0.5 * t_depth
    for x, y in zip(lx.tolist(), ly.tolist()):
        counts[point_arc(x, y, hw, hd)] += 1
    return counts


def unit_arc(
    target_pose: Pose,
    t_width: float,
    t_depth: float,
    attacker_front_rank: np.ndarray,
) -> list[str]:
    """The arc(s) of the target the attacker stands in (CORE.GEO.UNIT_ARC).

    Args:
        attacker_front_rank: (n, 2) table coordinates of the attacker's
            front-rank base centres (e.g. :func:`front_rank_centres`).

    Returns:
        The arcs holding the most centres, 'inside' excluded: one element, or
        the tied arcs ordered least favourable to the attacker first (front,
        left, right, rear). With a tie the caller rolls the D6: 1-3 -> the
        first element, 4-6 -> the last.

    Raises:
        ValueError: no point lies outside the target footprint.
    """
    counts = arc_counts(target_pose, t_width, t_depth, attacker_front_rank)
    best = max(counts[a] for a in ARCS)
    if best == 0:
        raise ValueError("no attacker front-rank centre lies outside the target")
    return [a for a in ARCS if counts[a] == best]


# ----------------------------------------------------------------------------
# Distances and contact
# ----------------------------------------------------------------------------
def distance(a: shapely.Geometry, b: shapely.Geometry) -> float:
    """Minimum Euclidean distance between two geometries, inches (CORE.CONV.DISTANCE).

    0.0 if they touch or overlap.
    """
    return a.distance(b)


def in_contact(a: shapely.Geometry, b: shapely.Geometry) -> bool:
    """Base contact: distance <= EPS, corner to corner included (CORE.GEO.CONTACT)."""
    return a.distance(b) <= EPS


def overlaps(a: shapely.Geometry, b: shapely.Geometry) -> bool:
    """Whether the interiors overlap by more than EPS (touching is not overlapping).

    True iff some disc of diameter EPS lies inside both ``a`` and ``b``,
    i.e. the two shrunk by EPS/2 still intersect. Two flush rectangles, or
    rectangles that interpenetrate by <= EPS, do not overlap; lines and
    points never overlap anything.

    Only predicates and single-geometry buffers are used: GEOS overlay
    (intersection/union) of exactly touching polygons is unreliable
    (libgeos/geos#1344, GEOS 3.14.1 returns a whole polygon for some flush
    pairs).
    """
    if not a.intersects(b):
        return False
    pair = np.empty(2, dtype=object)
    pair[0], pair[1] = a, b
    sa, sb = shapely.buffer(pair, -0.5 * EPS, join_style="mitre")
    return bool(shapely.intersects(sa, sb))


# ----------------------------------------------------------------------------
# Vision and line of sight
# ----------------------------------------------------------------------------
def vision_arc_region(
    pose: Pose, width: float, depth: float, reach: float = 200.0
) -> Polygon:
    """The front arc (CORE.GEO.ARCS) as a polygon.

    The quadrilateral FL, FR, FR + reach·(front+right)/√2, FL + reach·(front-right)/√2
    (counter-clockwise): the front edge plus the 45° outward rays from the
    front corners, each ``reach`` inches long (the default covers the whole
    table).
    """
    hw = 0.5 * width
    hd = 0.5 * depth
    k = reach * _SQRT_HALF
    lx = np.array([-hw, hw, hw + k, -hw - k, -hw])
    ly = np.array([hd, hd, hd + k, hd + k, hd])
    return polygon(_local_to_world_arr(pose, lx, ly))


def partly_in_vision_arc(
    pose: Pose, width: float, depth: float, target: shapely.Geometry
) -> bool:
    """Whether part of ``target`` lies in the viewer's front arc (CORE.GEO.VISION_ARC).

    True if a vertex of ``target`` is in the front arc as :func:`point_arc`
    says (so a vertex on, or within EPS outside, a front divider ray
    counts), or else if the interior of :func:`vision_arc_region` meets the
    target's interior. A target that only touches the front edge or a front
    corner from outside the arc (e.g. a unit flush against the viewer's
    flank) is not in the arc.

    ``pose``, ``width`` and ``depth`` are the viewer's (inches, facing in
    degrees); ``target`` is a shapely geometry in table inches.
    """
    seen = corners_in_vision_arc(pose, width, depth, shapely.get_coordinates(target).tolist())
    if seen is not None:
        return seen
    return bool(shapely.relate_pattern(_vision_region(pose.x, pose.y, pose.facing, width, depth), target, "T********"))


@lru_cache(maxsize=4096)
def _vision_region(x: float, y: float, facing: float, width: float, depth: float) -> Polygon:
    """:func:`vision_arc_region` at the default reach, kept by value (a function of these numbers alone)."""
    return vision_arc_region(Pose(x, y, facing), width, depth)


VISION_MARGIN = 1e-6
"""Inches behind the viewer's front edge past which :func:`partly_in_vision_arc` needs no region test: far beyond the
rounding of the local frame (about 1e-14 inch), so the region, all ahead of that edge, cannot meet the target."""


def corners_in_vision_arc(pose: Pose, width: float, depth: float, corners: Sequence[tuple[float, float]]) -> bool | None:
    """:func:`partly_in_vision_arc` decided on a polygon's vertices alone, without shapely; None where only the
    region test decides (CORE.GEO.VISION_ARC).

    Args:
        pose, width, depth: the viewer's (inches, facing in degrees).
        corners: the target's vertices in table inches (e.g. :func:`corner_list` of its footprint: the same
            numbers as its footprint polygon's).

    Returns:
        True if a vertex is in the front arc (:func:`point_arc`), False if every vertex lies more than
        :data:`VISION_MARGIN` behind the front edge (so does the hull of the vertices, the whole polygon, while
        the region lies ahead of that edge), else None. The local frame is :func:`to_local`'s, term for term.
    """
    hw = 0.5 * width
    hd = 0.5 * depth
    c, s = _cos_sin(pose.facing)
    x0, y0 = pose.x, pose.y
    top = -math.inf
    for px, py in corners:
        dx = px - x0
        dy = py - y0
        x, y = dx * s - dy * c, dx * c + dy * s  # to_local, term for term
        if point_arc(x, y, hw, hd) == "front":
            return True
        if y > top:
            top = y
    if top < hd - VISION_MARGIN:
        return False
    return None


def _bbox(pts: list[tuple[float, float]]) -> tuple[float, float, float, float]:
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def _same_bbox(a: Sequence[float], b: Sequence[float], tol: float = 1e-6) -> bool:
    return all(abs(u - v) <= tol for u, v in zip(a, b))


def has_los(
    viewer_pose: Pose,
    v_width: float,
    v_depth: float,
    target_pose: Pose,
    t_width: float,
    t_depth: float,
    blockers: Sequence[shapely.Geometry],
    woods: Sequence[shapely.Geometry] = (),
) -> bool:
    """Line of sight from viewer V to target T (CORE.GEO.LOS).

    V sees T if some segment from V's front-left corner, front-right corner
    or front-edge midpoint to one of T's four corners or its centre (15
    segments)

    * enters no blocker more than EPS/2 deep and passes through no gap
      narrower than EPS between two blockers (so a segment that merely
      touches or grazes a blocker, e.g. at its end, is clear, but one along
      the seam between two units in contact is not), and
    * crosses at most 2" (+EPS) of woods in total.

    Args:
        blockers: polygons that block (third-unit footprints, blocking
            features). The caller applies the level-0/level-1 and Large
            Target exceptions by leaving such units out. V and T never
            block: a blocker whose bounding box equals V's or T's footprint
            bounding box (within 1e-6") is ignored.
        woods: woods polygons; their crossed lengths are summed per segment,
            so overlapping woods count twice (pass their union if they may
            overlap).
    """
    if len(blockers) == 0 and len(woods) == 0:
        return True
    vc = _corner_list(viewer_pose, v_width, v_depth)
    tc = _corner_list(target_pose, t_width, t_depth)
    (flx, fly), (frx, fry) = vc[0], vc[1]
    # Segment k runs from starts[k // 5] to ends[k % 5]; the front-midpoint ->
    # centre segment comes first because it is the likeliest to be clear.
    starts = [(0.5 * (flx + frx), 0.5 * (fly + fry)), vc[0], vc[1]]
    ends = [(target_pose.x, target_pose.y), *tc]
    segs = np.array([[p, q] for p in starts for q in ends], dtype=np.float64)
    lines = None
    clear = np.ones(15, dtype=bool)

    if len(blockers):
        # Bounding-box filter of the blockers against all the segments; drop V and T.
        xs = [p[0] for p in starts] + [q[0] for q in ends]
        ys = [p[1] for p in starts] + [q[1] for q in ends]
        lox, hix, loy, hiy = min(xs), max(xs), min(ys), max(ys)
        vb = _bbox(vc)
        tb = _bbox(tc)
        near = [
            blk
            for blk, bb in zip(blockers, shapely.bounds(blockers).tolist())
            if bb[0] <= hix and bb[2] >= lox and bb[1] <= hiy and bb[3] >= loy
            and not _same_bbox(bb, vb)
            and not _same_bbox(bb, tb)
        ]
        if near:
            cand = np.empty(len(near), dtype=object)
            cand[:] = near
            lines = shapely.linestrings(segs)
            hit = shapely.intersects(lines[:, None], cand[None, :])  # (15, k)
            used = hit.any(axis=0)
            if used.any():
                hits = cand[used]
                if len(hits) == 1:
                    core = shapely.buffer(hits[0], -0.5 * EPS, join_style="mitre")
                else:
                    # Close gaps narrower than EPS between blockers, then erode.
                    grown = shapely.union_all(shapely.buffer(hits, 0.5 * EPS, join_style="mitre"))
                    core = shapely.buffer(grown, -EPS, join_style="mitre")
                if not core.is_empty:
                    idx = np.flatnonzero(hit.any(axis=1))
                    clear[idx[shapely.intersects(lines[idx], core)]] = False
                    if not clear.any():
                        return False
    if len(woods) == 0:
        return True
    if lines is None:
        lines = shapely.linestrings(segs)
    wood_arr = np.empty(len(woods), dtype=object)
    wood_arr[:] = list(woods)
    in_wood = shapely.intersects(lines[:, None], wood_arr[None, :])  # (15, n_woods)
    for k in np.flatnonzero(clear):
        row = in_wood[k]
        if not row.any():
            return True
        total = float(shapely.length(shapely.intersection(lines[k], wood_arr[row])).sum())
        if total <= 2.0 + EPS:
            return True
    return False


# ----------------------------------------------------------------------------
# Moves
# ----------------------------------------------------------------------------
def move_straight(pose: Pose, dist: float) -> Pose:
    """Move ``dist`` inches along the facing (negative = backwards); facing kept."""
    c, s = _cos_sin(pose.facing)
    return Pose(pose.x + dist * c, pose.y + dist * s, _norm_deg(pose.facing))


def wheel(
    pose: Pose,
    width: float,
    angle_deg: float,
    depth: float,
    pivot: str | None = None,
) -> Pose:
    """Wheel about a front corner (CORE.MOVE.WHEEL); returns the new centre pose.

    Positive ``angle_deg`` wheels LEFT (counter-clockwise) pivoting on the
    front-LEFT corner; negative wheels RIGHT (clockwise) pivoting on the
    front-RIGHT corner. The pivot corner stays fixed; the other front corner
    travels :func:`wheel_distance`. ``depth`` is needed because the centre
    lies hd behind the front edge.

    Args:
        pose: the unit's pose (centre in inches, facing in degrees).
        width, depth: the footprint's W and D in inches.
        angle_deg: the wheel angle in degrees (positive = left).
        pivot: override the pivot corner, 'left' or 'right' (front-left /
            front-right). Rotating back about the same corner undoes a wheel:
            ``wheel(wheel(p, W, a, D), W, -a, D, pivot='left')`` is p for a > 0.

    Raises:
        ValueError: ``pivot`` is not None, 'left' or 'right'.
    """
    if pivot is None:
        pivot = "left" if angle_deg >= 0 else "right"
    if pivot == "left":
        plx = -0.5 * width
    elif pivot == "right":
        plx = 0.5 * width
    else:
        raise ValueError(f"pivot must be 'left' or 'right', got {pivot!r}")
    hd = 0.5 * depth
    px, py = to_world(pose, plx, hd)
    t = math.radians(angle_deg)
    ct, st = math.cos(t), math.sin(t)
    dx = pose.x - px
    dy = pose.y - py
    return Pose(px + ct * dx - st * dy, py + st * dx + ct * dy, _norm_deg(pose.facing + angle_deg))


def wheel_distance(width: float, angle_deg: float) -> float:
    """Distance moved by a wheel: W·|θ| with θ in radians, inches (CORE.MOVE.WHEEL)."""
    return width * abs(math.radians(angle_deg))


def turn(pose: Pose, angle_deg: float) -> Pose:
    """Rotate about the centre by ``angle_deg`` degrees (positive = CCW/left) (CORE.MOVE.TURN).

    The caller swaps files and ranks for a 90° turn (the footprint's W and D).
    """
    return Pose(pose.x, pose.y, _norm_deg(pose.facing + angle_deg))


def swept_area(start_poly: shapely.Geometry, end_poly: shapely.Geometry) -> Polygon:
    """Area swept by a straight move: convex hull of both footprints."""
    pts = np.vstack([shapely.get_coordinates(start_poly), shapely.get_coordinates(end_poly)])
    return shapely.convex_hull(shapely.multipoints(pts))


def wheel_swept_area(
    pose: Pose, width: float, depth: float, angle_deg: float, steps: int | None = None
) -> Polygon:
    """Area swept by a wheel (CORE.MOVE.WHEEL), same sign convention as :func:`wheel`.

    The region is star-shaped about the pivot corner: for a left wheel it is
    bounded by the start footprint's left and rear edges, the arc traced by
    the far rear corner (radius R = √(W² + D²)), and the end footprint's
    right and front edges (mirrored for a right wheel). The arc is drawn as
    ``steps`` chords; by default enough chords that the polygon lies inside
    the true swept area and misses at most EPS/2 of it. Built directly, with
    no polygon union (see :func:`overlaps` on GEOS overlay).

    Args:
        pose: the start pose (centre in inches, facing in degrees).
        width, depth: the footprint's W and D in inches.
        angle_deg: the wheel angle in degrees, at most 180 either way.
        steps: the number of chords of the arc; None chooses it from EPS.

    Raises:
        ValueError: ``|angle_deg| > 180`` (split larger wheels) or ``steps < 1``.
    """
    if abs(angle_deg) > 180.0:
        raise ValueError(f"wheel_swept_area: |angle| must be <= 180, got {angle_deg}")
    if steps is not None and steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if angle_deg == 0.0:
        return footprint(pose, width, depth)
    cs = corners(pose, width, depth)
    ce = corners(wheel(pose, width, angle_deg, depth), width, depth)
    if angle_deg > 0:  # pivot FL; far corner RR; end at FR
        piv, near_s, far_s, far_e, tip_e = cs[0], cs[3], cs[2], ce[2], ce[1]
    else:  # pivot FR; far corner RL; end at FL
        piv, near_s, far_s, far_e, tip_e = cs[1], cs[2], cs[3], ce[3], ce[0]
    t = math.radians(angle_deg)
    if steps is None:
        r = math.hypot(width, depth)
        dmax = 2.0 * math.acos(max(-1.0, 1.0 - 0.5 * EPS / r)) if r > 0 else math.pi
        steps = max(1, math.ceil(abs(t) / dmax))
    k = np.arange(1, steps) * (t / steps)
    vx, vy = far_s[0] - piv[0], far_s[1] - piv[1]
    ck, sk = np.cos(k), np.sin(k)
    arc = np.column_stack([piv[0] + ck * vx - sk * vy, piv[1] + sk * vx + ck * vy])
    ring = np.vstack([[piv, near_s, far_s], arc, [far_e, tip_e, piv]])
    if angle_deg < 0:  # built clockwise; return counter-clockwise like footprint()
        ring = np.ascontiguousarray(ring[::-1])
    return shapely.polygons(ring)


def facing_towards(pose_xy: Sequence[float], target_xy: Sequence[float]) -> float:
    """Facing in degrees [0, 360) that points from ``pose_xy`` to ``target_xy``.

    Raises:
        ValueError: the two points coincide.
    """
    dx = target_xy[0] - pose_xy[0]
    dy = target_xy[1] - pose_xy[1]
    if dx == 0.0 and dy == 0.0:
        raise ValueError("facing_towards: the points coincide")
    return _norm_deg(math.degrees(math.atan2(dy, dx)))


def flee_pose(pose: Pose, source_xy: Sequence[float], dist: float) -> Pose:
    """Flee move (CORE.PSY.FLEE.MOVE): face directly away from the source, then move.

    The unit turns about its centre to face along source -> centre, then
    moves ``dist`` inches straight. If the centre coincides with the source
    the current facing is kept. Terrain, units and the table edge are the
    caller's business.
    """
    dx = pose.x - source_xy[0]
    dy = pose.y - source_xy[1]
    if dx == 0.0 and dy == 0.0:
        return move_straight(pose, dist)
    n = math.hypot(dx, dy)
    f = _norm_deg(math.degrees(math.atan2(dy, dx)))
    return Pose(pose.x + dist * dx / n, pose.y + dist * dy / n, f)


def flush_pose(
    target_pose: Pose,
    t_width: float,
    t_depth: float,
    side: str,
    c_width: float,
    c_depth: float,
    offset: float,
) -> Pose:
    """Pose of a charger flush against one side of the target, facing into it.

    Used for CORE.CHARGE.CLOSE_DOOR and CORE.CHARGE.ALIGN. The charger's
    front edge lies on the target's ``side`` edge line; its facing is the
    reverse of that side's outward normal; its front-edge midpoint is
    ``offset`` inches from the side's midpoint, positive CLOCKWISE around the
    target (the :func:`side_edge` direction): towards the target's right on
    its front, its rear on its right side, its left on its rear, its front on
    its left side. Seen from the charger, positive is always towards the
    charger's own LEFT. The units touch iff |offset| <= (side length +
    c_width)/2; they never overlap.

    Raises:
        ValueError: unknown ``side``.
    """
    hw = 0.5 * t_width
    hd = 0.5 * t_depth
    h = 0.5 * c_depth
    if side == "front":
        lx, ly = offset, hd + h
    elif side == "right":
        lx, ly = hw + h, -offset
    elif side == "rear":
        lx, ly = -offset, -hd - h
    elif side == "left":
        lx, ly = -hw - h, offset
    else:
        raise ValueError(f"unknown side {side!r}; expected one of {SIDES}")
    x, y = to_world(target_pose, lx, ly)
    return Pose(x, y, _norm_deg(target_pose.facing + _FLUSH_TURN[side]))


def _band_length(
    x0: float, y0: float, x1: float, y1: float, side: str, hw: float, hd: float
) -> float:
    """Length of side ``side`` (local frame) lying within EPS of segment (x0,y0)-(x1,y1)."""
    # Rotate the problem so that the side is the segment y = c, |x| <= half.
    if side == "front":
        u0, v0, u1, v1, c, half = x0, y0, x1, y1, hd, hw
    elif side == "rear":
        u0, v0, u1, v1, c, half = x0, -y0, x1, -y1, hd, hw
    elif side == "right":
        u0, v0, u1, v1, c, half = y0, x0, y1, x1, hw, hd
    else:  # left
        u0, v0, u1, v1, c, half = y0, -x0, y1, -x1, hw, hd
    dv = v1 - v0
    if dv == 0.0:
        if abs(v0 - c) > EPS:
            return 0.0
        ta, tb = 0.0, 1.0
    else:
        ta = (c - EPS - v0) / dv
        tb = (c + EPS - v0) / dv
        if ta > tb:
            ta, tb = tb, ta
        ta = max(ta, 0.0)
        tb = min(tb, 1.0)
        if ta > tb:
            return 0.0
    du = u1 - u0
    ua = u0 + ta * du
    ub = u0 + tb * du
    if ua > ub:
        ua, ub = ub, ua
    return max(0.0, min(ub, half) - max(ua, -half))


def edge_overlap(
    a_pose: Pose,
    a_w: float,
    a_d: float,
    a_side: str,
    b_pose: Pose,
    b_w: float,
    b_d: float,
    b_side: str,
) -> float:
    """Length in inches along which side ``a_side`` of A and ``b_side`` of B coincide.

    Measured along A's side: the part of it that lies within EPS of B's side
    (CORE.CONV.UNITS), so edges must be collinear to within EPS over that
    stretch. A corner-to-corner touch gives 0.0 (use :func:`in_contact` for
    contact itself). Used to count models in base contact after
    CORE.CHARGE.CLOSE_DOOR / CORE.CHARGE.ALIGN.

    Raises:
        ValueError: unknown side name.
    """
    (p0x, p0y), (p1x, p1y) = side_edge(b_pose, b_w, b_d, b_side)
    if a_side not in _FLUSH_TURN:
        raise ValueError(f"unknown side {a_side!r}; expected one of {SIDES}")
    x0, y0 = to_local(a_pose, p0x, p0y)
    x1, y1 = to_local(a_pose, p1x, p1y)
    return _band_length(x0, y0, x1, y1, a_side, 0.5 * a_w, 0.5 * a_d)


def contact_side(
    target_pose: Pose, t_w: float, t_d: float, other_poly: shapely.Geometry
) -> str | None:
    """Which side of the target a touching footprint contacts most.

    Returns 'front', 'left', 'right' or 'rear', or None if ``other_poly`` is
    not in contact (distance > EPS, CORE.GEO.CONTACT). The side with the
    longest stretch within EPS of the other polygon's boundary wins (ties:
    front, left, right, rear). With no such stretch (corner contact) the
    side is the arc (:func:`point_arc`) of the other polygon's centroid, or,
    if that centroid is inside the target, the side nearest to it.
    """
    hw = 0.5 * t_w
    hd = 0.5 * t_d
    if footprint(target_pose, t_w, t_d).distance(other_poly) > EPS:
        return None
    lengths = dict.fromkeys(ARCS, 0.0)
    for part in shapely.get_parts(other_poly):
        rings = shapely.get_rings(part) if part.geom_type == "Polygon" else [part]
        for ring in rings:
            pts = shapely.get_coordinates(ring)
            if len(pts) < 2:
                continue
            lx, ly = _to_local_arr(target_pose, pts)
            xs, ys = lx.tolist(), ly.tolist()
            for i in range(len(xs) - 1):
                for s in ARCS:
                    lengths[s] += _band_length(xs[i], ys[i], xs[i + 1], ys[i + 1], s, hw, hd)
    best = max(ARCS, key=lambda s: lengths[s])  # first maximum in ARCS order
    if lengths[best] > 0.0:
        return best
    cen = other_poly.centroid
    cx, cy = to_local(target_pose, cen.x, cen.y)
    arc = point_arc(cx, cy, hw, hd, tol=0.0)
    if arc != "inside":
        return arc
    gaps = {"front": hd - cy, "left": cx + hw, "right": hw - cx, "rear": cy + hd}
    return min(ARCS, key=lambda s: gaps[s])


# ----------------------------------------------------------------------------
# Table
# ----------------------------------------------------------------------------
def within_table(
    poly: shapely.Geometry, table_w: float = 72.0, table_h: float = 48.0
) -> bool:
    """Whether the geometry lies wholly on the table, to EPS (CORE.CONV.TABLE)."""
    minx, miny, maxx, maxy = poly.bounds
    return minx >= -EPS and miny >= -EPS and maxx <= table_w + EPS and maxy <= table_h + EPS


def crosses_table_edge(
    poly: shapely.Geometry, table_w: float = 72.0, table_h: float = 48.0
) -> bool:
    """Whether any part of the geometry lies beyond a table edge by more than EPS.

    The negation of :func:`within_table`; a footprint wholly off the table
    also counts (CORE.PSY.FLEE.DESTROYED, CORE.MOVE.TABLE_EDGE).
    """
    return not within_table(poly, table_w, table_h)
