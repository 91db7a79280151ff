"""Tests for env.rules.geometry (CORE.GEO.*, CORE.MOVE.*, CORE.CHARGE.* geometry)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from battleline.env.rules import geometry as g
from battleline.env.rules.geometry import EPS, Pose

INF_BASE = 20 / 25.4  # 0.7874" (CORE.GEO.BASES, 20 mm)

coord = st.floats(-100, 100, allow_nan=False)
angle = st.floats(-720, 720, allow_nan=False)
size = st.floats(0.5, 20, allow_nan=False)
poses = st.builds(Pose, coord, coord, angle)


def ang_diff(a: float, b: float) -> float:
    """Smallest absolute difference between two angles, degrees."""
    d = (a - b) % 360.0
    return min(d, 360.0 - d)


def assert_pose(p: Pose, q: Pose, tol: float = 1e-9) -> None:
    assert p.x == pytest.approx(q.x, abs=tol)
    assert p.y == pytest.approx(q.y, abs=tol)
    assert ang_diff(p.facing, q.facing) <= tol


# ----------------------------------------------------------------------------
# Poses, frames, footprints
# ----------------------------------------------------------------------------
def test_pose_vectors():
    p = Pose(0, 0, 90)
    assert p.front() == (0.0, 1.0)
    assert p.right() == (1.0, -0.0)
    q = Pose(0, 0, 30)
    fx, fy = q.front()
    rx, ry = q.right()
    assert (fx, fy) == pytest.approx((math.cos(math.pi / 6), 0.5))
    assert fx * rx + fy * ry == pytest.approx(0.0, abs=1e-15)
    assert rx * fy - ry * fx == pytest.approx(1.0)  # right x front = +1: right-handed


def test_footprint_5x4_infantry():
    w, d = 5 * INF_BASE, 4 * INF_BASE
    fp = g.footprint(Pose(36, 24, 90), w, d)
    assert fp.bounds == pytest.approx((36 - 1.9685, 24 - 1.5748, 36 + 1.9685, 24 + 1.5748), abs=1e-4)
    assert fp.bounds == pytest.approx((36 - w / 2, 24 - d / 2, 36 + w / 2, 24 + d / 2), abs=1e-12)
    assert fp.area == pytest.approx(w * d)


def test_footprint_ring_is_ccw_from_front_left():
    fp = g.footprint(Pose(0, 0, 90), 4, 2)
    assert fp.exterior.is_ccw
    np.testing.assert_allclose(shapely.get_coordinates(fp)[:4], [[-2, 1], [-2, -1], [2, -1], [2, 1]])


def test_corners_order_and_front_edge():
    c = g.corners(Pose(0, 0, 90), 4, 2)
    assert c.shape == (4, 2) and c.dtype == np.float64
    # facing north: front-left is north-west
    np.testing.assert_allclose(c, [[-2, 1], [2, 1], [2, -1], [-2, -1]])
    fl, fr = g.front_edge(Pose(0, 0, 90), 4, 2)
    assert fl == (-2, 1) and fr == (2, 1)
    c0 = g.corners(Pose(10, 5, 0), 4, 2)  # facing east: front-left is north-east
    np.testing.assert_allclose(c0, [[11, 7], [11, 3], [9, 3], [9, 7]])


def test_side_edges_clockwise():
    p = Pose(0, 0, 90)
    assert g.side_edge(p, 4, 2, "front") == ((-2, 1), (2, 1))
    assert g.side_edge(p, 4, 2, "right") == ((2, 1), (2, -1))
    assert g.side_edge(p, 4, 2, "rear") == ((2, -1), (-2, -1))
    assert g.side_edge(p, 4, 2, "left") == ((-2, -1), (-2, 1))
    with pytest.raises(ValueError):
        g.side_edge(p, 4, 2, "top")


def test_local_frame_axes():
    p = Pose(10, 20, 90)
    assert g.to_local(p, 10, 25) == (0.0, 5.0)  # straight ahead
    assert g.to_local(p, 13, 20) == (3.0, 0.0)  # to the right (east)
    assert g.to_world(p, -2, 1) == (8.0, 21.0)


@given(poses, coord, coord)
def test_to_world_inverts_to_local(p, px, py):
    lx, ly = g.to_local(p, px, py)
    wx, wy = g.to_world(p, lx, ly)
    assert wx == pytest.approx(px, abs=1e-9)
    assert wy == pytest.approx(py, abs=1e-9)


@given(poses, size, size)
def test_footprint_area_any_pose(p, w, d):
    fp = g.footprint(p, w, d)
    assert fp.is_valid
    assert fp.area == pytest.approx(w * d, rel=1e-9)
    assert fp.centroid.x == pytest.approx(p.x, abs=1e-9)


# ----------------------------------------------------------------------------
# Formation
# ----------------------------------------------------------------------------
def test_model_centres_7_in_3_files():
    c = g.model_centres(Pose(0, 0, 90), 3, 7, 1.0, 1.0)
    assert c.shape == (7, 2) and c.dtype == np.float64
    # W = 3, D = 3; facing north, so the unit's left (file 1) is west.
    expected = [(-1, 1), (0, 1), (1, 1), (-1, 0), (0, 0), (1, 0), (-1, -1)]
    np.testing.assert_allclose(c, expected, atol=1e-12)


def test_model_centres_rotated_and_front_rank():
    p = Pose(5, 5, 0)  # facing east: left = north, front rank at largest x
    c = g.model_centres(p, 2, 3, 1.0, 2.0)
    np.testing.assert_allclose(c, [(6, 5.5), (6, 4.5), (4, 5.5)], atol=1e-12)
    fr = g.front_rank_centres(p, 2, 3, 1.0, 2.0)
    np.testing.assert_allclose(fr, c[:2], atol=1e-12)
    # more files than models: F = N
    assert g.front_rank_centres(p, 5, 3, 1.0, 1.0).shape == (3, 2)
    with pytest.raises(ValueError):
        g.model_centres(p, 0, 3, 1.0, 1.0)


# ----------------------------------------------------------------------------
# Arcs
# ----------------------------------------------------------------------------
HW, HD = 2.0, 1.0


@pytest.mark.parametrize(
    ("pt", "arc"),
    [
        ((0, 3), "front"),
        ((0, -3), "rear"),
        ((-5, 0), "left"),
        ((5, 0), "right"),
        ((0, 0), "inside"),
        ((1.9, 0.9), "inside"),
        ((2.0, 1.0), "inside"),  # the corner itself
        ((0, 1.005), "inside"),  # within EPS of the front edge
        ((0, 1.05), "front"),
    ],
)
def test_point_arc_sides(pt, arc):
    assert g.point_arc(*pt, HW, HD) == arc


@pytest.mark.parametrize("t", [0.25, 1.0, 3.0, 17.5])
@pytest.mark.parametrize("tol", [0.0, EPS])
def test_point_arc_divider_rays(t, tol):
    # front-corner rays belong to the front arc (less favourable than flank)
    assert g.point_arc(HW + t, HD + t, HW, HD, tol) == "front"
    assert g.point_arc(-HW - t, HD + t, HW, HD, tol) == "front"
    # rear-corner rays belong to the flanks (less favourable than rear)
    assert g.point_arc(HW + t, -HD - t, HW, HD, tol) == "right"
    assert g.point_arc(-HW - t, -HD - t, HW, HD, tol) == "left"
    # clearly off the rays
    assert g.point_arc(HW + t + 0.05, HD + t, HW, HD, tol) == "right"
    assert g.point_arc(-HW - t, HD + t + 0.05, HW, HD, tol) == "front"
    assert g.point_arc(HW + t, -HD - t - 0.05, HW, HD, tol) == "rear"
    assert g.point_arc(-HW - t - 0.05, -HD - t, HW, HD, tol) == "left"


def test_point_arc_rays_within_eps_go_less_favourable():
    # a rounding error of 0.005" across a ray does not change the arc
    assert g.point_arc(HW + 1.005, HD + 1, HW, HD) == "front"
    assert g.point_arc(HW + 1, -HD - 1.005, HW, HD) == "right"
    assert g.point_arc(HW + 1.005, HD + 1, HW, HD, tol=0.0) == "right"


@pytest.mark.parametrize("facing", [0.0, 30.0, 90.0, 137.0, 270.0])
def test_arc_rays_through_world_coordinates(facing):
    # ray points built in world coordinates (with rounding noise) keep their arc
    p = Pose(30, 20, facing)
    pts = [g.to_world(p, HW + t, HD + t) for t in (0.5, 2, 9)]
    pts += [g.to_world(p, -HW - t, -HD - t) for t in (0.5, 2, 9)]
    counts = g.arc_counts(p, 2 * HW, 2 * HD, np.array(pts))
    assert counts == {"front": 3, "left": 3, "right": 0, "rear": 0, "inside": 0}


@given(st.floats(-50, 50), st.floats(-50, 50), st.floats(0.1, 20), st.floats(0.1, 20))
def test_point_arc_total_and_mirror_symmetric(x, y, hw, hd):
    a = g.point_arc(x, y, hw, hd)
    assert a in ("front", "left", "right", "rear", "inside")
    mirror = {"left": "right", "right": "left"}
    assert g.point_arc(-x, y, hw, hd) == mirror.get(a, a)
    if a == "inside":
        assert abs(x) <= hw + EPS and abs(y) <= hd + EPS


def test_arc_counts_all_keys():
    c = g.arc_counts(Pose(0, 0, 90), 4, 2, np.array([[0, 5], [0, -5], [-9, 0]]))
    assert c == {"front": 1, "left": 1, "right": 0, "rear": 1, "inside": 0}
    assert g.arc_counts(Pose(0, 0, 90), 4, 2, np.empty((0, 2)))["front"] == 0


def test_unit_arc_charger_straddling_front_and_flank():
    target = Pose(20, 20, 90)  # W=4, D=2: front-right corner at (22, 21)
    # charger 4 wide facing south, front rank centres at y = 23 (fy = 2)
    charger = Pose(23.5, 23.5, 270)
    fr = g.front_rank_centres(charger, 4, 8, 1.0, 1.0)
    np.testing.assert_allclose(sorted(fr[:, 0]), [22, 23, 24, 25])
    # x-20 = 2, 3, 4, 5 -> ax = 0, 1, 2, 3 vs fy = 2: front, front, front(ray), right
    assert g.unit_arc(target, 4, 2, fr) == ["front"]
    charger2 = Pose(24.5, 23.5, 270)  # ax = 1, 2, 3, 4: 2 front (one on the ray), 2 right
    fr2 = g.front_rank_centres(charger2, 4, 8, 1.0, 1.0)
    assert g.unit_arc(target, 4, 2, fr2) == ["front", "right"]
    charger3 = Pose(30, 20, 180)  # squarely on the right flank
    assert g.unit_arc(target, 4, 2, g.front_rank_centres(charger3, 4, 8, 1.0, 1.0)) == ["right"]


def test_unit_arc_flank_rear_tie_order_and_error():
    target = Pose(0, 0, 90)
    pts = np.array([[-5.0, -2.0], [0.0, -5.0]])  # one left, one rear
    assert g.unit_arc(target, 4, 2, pts) == ["left", "rear"]
    with pytest.raises(ValueError):
        g.unit_arc(target, 4, 2, np.array([[0.0, 0.0]]))


# ----------------------------------------------------------------------------
# Distance, contact, overlap
# ----------------------------------------------------------------------------
def test_distance_contact_overlap():
    a = shapely.box(0, 0, 2, 2)
    assert g.distance(a, shapely.box(5, 0, 6, 2)) == pytest.approx(3.0)
    assert g.distance(a, shapely.box(1, 1, 3, 3)) == 0.0
    assert g.distance(a, shapely.Point(2, 5)) == pytest.approx(3.0)
    flush = shapely.box(2, 0, 4, 2)
    corner = shapely.box(2, 2, 3, 3)
    near = shapely.box(2.005, 0, 4, 2)
    far = shapely.box(2.02, 0, 4, 2)
    assert g.in_contact(a, flush) and g.in_contact(a, corner) and g.in_contact(a, near)
    assert not g.in_contact(a, far)
    assert not g.overlaps(a, flush)
    assert not g.overlaps(a, corner)
    assert not g.overlaps(a, shapely.box(1.995, 0, 4, 2))  # 0.005" interpenetration
    assert g.overlaps(a, shapely.box(1.98, 0, 4, 2))
    assert g.overlaps(a, a)
    assert not g.overlaps(a, far)
    assert not g.overlaps(a, shapely.LineString([(0, 0), (2, 2)]))


def test_overlaps_flush_pair_that_breaks_geos_overlay():
    # GEOS 3.14 intersection() of this flush pair can return the whole charger
    # (libgeos/geos#1344); overlaps() must not rely on overlay.
    t = Pose(0.0, 9.0, 397.795748459303)
    c = g.flush_pose(t, 10.5, 10.5, "left", 10.0, 4.87890625, 0.0)
    tf, cf = g.footprint(t, 10.5, 10.5), g.footprint(c, 10.0, 4.87890625)
    assert g.in_contact(tf, cf)
    assert not g.overlaps(tf, cf)
    assert g.contact_side(t, 10.5, 10.5, cf) == "left"


# ----------------------------------------------------------------------------
# Vision and line of sight
# ----------------------------------------------------------------------------
def test_vision_arc_region_shape():
    r = g.vision_arc_region(Pose(0, 0, 90), 4, 2, reach=10 * math.sqrt(2))
    np.testing.assert_allclose(
        shapely.get_coordinates(r)[:4], [(-2, 1), (2, 1), (12, 11), (-12, 11)], atol=1e-12
    )
    assert r.exterior.is_ccw


def test_partly_in_vision_arc():
    p = Pose(36, 10, 90)  # W=4, D=2, front edge y=11, x 34..38
    assert g.partly_in_vision_arc(p, 4, 2, g.footprint(Pose(36, 30, 270), 4, 2))
    assert not g.partly_in_vision_arc(p, 4, 2, g.footprint(Pose(36, 0, 90), 4, 2))
    # on the right flank, wholly beyond the front-right ray (x - 38 > y - 11)
    assert not g.partly_in_vision_arc(p, 4, 2, shapely.box(45, 10, 46, 13))
    # one corner just over the ray
    assert g.partly_in_vision_arc(p, 4, 2, shapely.box(41.5, 14, 43, 15))
    # a long wall crossing the arc with no vertex inside it
    wall = shapely.Polygon([(0, 60), (1, 60), (72, 61), (71, 61)])
    assert g.partly_in_vision_arc(p, 4, 2, wall)
    # flush against the viewer's left flank, corner on the front-left corner
    assert not g.partly_in_vision_arc(p, 4, 2, shapely.box(31, 9, 34, 11))
    # beside the viewer with its front edge on the front-edge line
    assert not g.partly_in_vision_arc(p, 4, 2, shapely.box(25, 9, 33, 11))


def _los_pair():
    return Pose(36, 10, 90), Pose(36, 30, 270)  # both 4x2; front edges at y=11 and y=29


def test_los_blocked_by_unit_between_and_clear_to_the_side():
    v, t = _los_pair()
    assert g.has_los(v, 4, 2, t, 4, 2, [])
    between = g.footprint(Pose(36, 20, 90), 10, 2)
    assert not g.has_los(v, 4, 2, t, 4, 2, [between])
    aside = g.footprint(Pose(50, 20, 90), 10, 2)
    assert g.has_los(v, 4, 2, t, 4, 2, [aside])
    narrow = g.footprint(Pose(36, 20, 90), 1, 1)  # the outer segments still pass
    assert g.has_los(v, 4, 2, t, 4, 2, [narrow])


def test_los_viewer_and_target_never_block():
    v, t = _los_pair()
    fv, ft = g.footprint(v, 4, 2), g.footprint(t, 4, 2)
    assert g.has_los(v, 4, 2, t, 4, 2, [fv, ft])


def test_los_touching_and_grazing_blockers():
    v, t = _los_pair()
    # in contact with the target's front edge, exactly as wide: the segments to
    # the target's front corners run along its sides and end on it -> clear
    assert g.has_los(v, 4, 2, t, 4, 2, [shapely.box(34, 27, 38, 29)])
    # wider than the target -> every segment passes through it
    assert not g.has_los(v, 4, 2, t, 4, 2, [shapely.box(33, 27, 39, 29)])
    # only the midpoint->centre segment survives, grazing x = 36
    left, right = shapely.box(30, 15, 36, 25), shapely.box(36.5, 15, 42, 25)
    assert g.has_los(v, 4, 2, t, 4, 2, [left, right])
    # ... but two blockers in contact leave no seam to see through
    assert not g.has_los(v, 4, 2, t, 4, 2, [left, shapely.box(36, 15, 42, 25)])


def test_los_woods():
    v, t = _los_pair()
    deep = shapely.box(20, 18.5, 52, 21.5)  # 3" of woods on every segment
    shallow = shapely.box(20, 19.25, 52, 20.75)  # 1.5" (at most 1.53" on a diagonal)
    assert not g.has_los(v, 4, 2, t, 4, 2, [], [deep])
    assert g.has_los(v, 4, 2, t, 4, 2, [], [shallow])
    two = [shapely.box(20, 15, 52, 16.5), shapely.box(20, 22, 52, 23.5)]  # 1.5 + 1.5 > 2
    assert not g.has_los(v, 4, 2, t, 4, 2, [], two)


# ----------------------------------------------------------------------------
# Moves
# ----------------------------------------------------------------------------
def test_move_straight_and_turn():
    p = Pose(10, 10, 90)
    assert_pose(g.move_straight(p, 3), Pose(10, 13, 90))
    assert_pose(g.move_straight(p, -2), Pose(10, 8, 90))
    q = g.turn(Pose(10, 10, 30), 180)
    assert q.facing == pytest.approx(210)
    c0 = g.corners(Pose(10, 10, 30), 5, 3)
    c1 = g.corners(q, 5, 3)
    np.testing.assert_allclose(c1, np.roll(c0, 2, axis=0), atol=1e-12)  # FL<->RR, FR<->RL
    assert g.turn(Pose(0, 0, 270), 90).facing == 0.0


def test_wheel_left_90():
    p = Pose(36, 24, 90)
    w, d = 5.0, 2.0
    fl0, fr0 = g.front_edge(p, w, d)
    q = g.wheel(p, w, 90, d)
    assert q.facing == pytest.approx(180)
    fl1, fr1 = g.front_edge(q, w, d)
    assert fl1 == pytest.approx(fl0, abs=1e-12)  # pivot (front-left) fixed
    assert g.wheel_distance(w, 90) == pytest.approx(7.854, abs=1e-3)
    # the outer corner moved a quarter circle of radius W
    assert math.dist(fr1, fl0) == pytest.approx(w)
    assert math.dist(fr0, fr1) == pytest.approx(w * math.sqrt(2))
    assert fr1 == pytest.approx((fl0[0], fl0[1] + w))


def test_wheel_right_pivots_front_right():
    p = Pose(36, 24, 90)
    fl0, fr0 = g.front_edge(p, 5, 2)
    q = g.wheel(p, 5, -30, 2)
    assert q.facing == pytest.approx(60)
    fl1, fr1 = g.front_edge(q, 5, 2)
    assert fr1 == pytest.approx(fr0, abs=1e-12)
    assert fl1 != pytest.approx(fl0)
    with pytest.raises(ValueError):
        g.wheel(p, 5, 10, 2, pivot="centre")


@given(poses, size, size, st.floats(-180, 180))
def test_wheel_then_reverse_returns(p, w, d, a):
    corner = "left" if a >= 0 else "right"
    q = g.wheel(p, w, a, d)
    r = g.wheel(q, w, -a, d, pivot=corner)
    assert_pose(r, p, 1e-9)
    # the pivot corner never moves
    k = 0 if a >= 0 else 1
    assert g.corners(q, w, d)[k] == pytest.approx(g.corners(p, w, d)[k], abs=1e-9)


def test_swept_areas():
    p = Pose(10, 10, 90)
    a, b = g.footprint(p, 4, 2), g.footprint(g.move_straight(p, 5), 4, 2)
    s = g.swept_area(a, b)
    assert s.area == pytest.approx(4 * 7)
    assert s.buffer(1e-9).covers(a) and s.buffer(1e-9).covers(b)


@pytest.mark.parametrize("angle", [90.0, 30.0, -45.0, -90.0, 180.0])
@pytest.mark.parametrize("facing", [90.0, 17.0])
def test_wheel_swept_area(angle, facing):
    p = Pose(10, 10, facing)
    w, d = 4.0, 2.0
    ws = g.wheel_swept_area(p, w, d, angle)
    assert ws.is_valid and ws.exterior.is_ccw
    start = g.footprint(p, w, d)
    end = g.footprint(g.wheel(p, w, angle, d), w, d)
    grown = ws.buffer(1e-9)
    assert grown.covers(start) and grown.covers(end)
    # exact area: the two half-rectangles plus the sector swept by the far rear corner
    exact = w * d + math.radians(abs(angle)) * (w * w + d * d) / 2
    assert exact - EPS * math.hypot(w, d) * math.radians(abs(angle)) <= ws.area <= exact
    # coarse chords lie inside the fine outline
    coarse = g.wheel_swept_area(p, w, d, angle, steps=2)
    assert coarse.area < ws.area and ws.buffer(EPS / 2).covers(coarse)


def test_wheel_swept_area_edge_cases():
    p = Pose(10, 10, 90)
    assert g.wheel_swept_area(p, 4, 2, 0).area == pytest.approx(8)
    with pytest.raises(ValueError):
        g.wheel_swept_area(p, 4, 2, 200)
    with pytest.raises(ValueError):
        g.wheel_swept_area(p, 4, 2, 20, steps=0)


def test_flee_and_facing_towards():
    assert g.facing_towards((0, 0), (0, 1)) == 90.0
    assert g.facing_towards((0, 0), (-1, 0)) == 180.0
    assert g.facing_towards((0, 0), (0, -1)) == 270.0
    with pytest.raises(ValueError):
        g.facing_towards((1, 1), (1, 1))
    q = g.flee_pose(Pose(10, 10, 0), (10, 5), 7)
    assert_pose(q, Pose(10, 17, 90))
    q2 = g.flee_pose(Pose(10, 10, 0), (13, 14), 5)
    assert_pose(q2, Pose(7, 6, math.degrees(math.atan2(-4, -3)) % 360))


# ----------------------------------------------------------------------------
# Flush placement, edge overlap, contact side
# ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("side", "facing", "centre"),
    [
        ("front", 270, (20.5, 22)),
        ("right", 180, (23, 19.5)),
        ("rear", 90, (19.5, 18)),
        ("left", 0, (17, 20.5)),
    ],
)
def test_flush_pose_each_side(side, facing, centre):
    target = Pose(20, 20, 90)  # W=4 (x 18..22), D=2 (y 19..21)
    c = g.flush_pose(target, 4, 2, side, 3, 2, 0.5)
    assert_pose(c, Pose(*centre, facing))
    tf, cf = g.footprint(target, 4, 2), g.footprint(c, 3, 2)
    assert g.in_contact(tf, cf) and not g.overlaps(tf, cf)
    assert g.contact_side(target, 4, 2, cf) == side
    expected = 3 if side in ("front", "rear") else 2
    assert g.edge_overlap(target, 4, 2, side, c, 3, 2, "front") == pytest.approx(expected)
    # facing opposite the side's outward normal
    assert g.unit_arc(target, 4, 2, g.front_rank_centres(c, 3, 6, 1, 1)) == [side]


def test_flush_pose_offset_direction():
    target = Pose(0, 0, 90)
    # front: positive = towards the target's right (+x here) = the charger's left
    c = g.flush_pose(target, 4, 2, "front", 2, 2, 1.0)
    assert (c.x, c.y) == pytest.approx((1.0, 2.0))
    lx, _ = g.to_local(c, 0.0, 2.0)  # a point towards the target's centre line
    assert lx > 0  # target centre line is to the charger's right, so it slid to its left
    assert g.edge_overlap(target, 4, 2, "front", c, 2, 2, "front") == pytest.approx(2)
    c2 = g.flush_pose(target, 4, 2, "front", 2, 2, 2.5)
    assert g.edge_overlap(target, 4, 2, "front", c2, 2, 2, "front") == pytest.approx(0.5)
    c3 = g.flush_pose(target, 4, 2, "front", 2, 2, 3.0)  # corner to corner
    assert g.edge_overlap(target, 4, 2, "front", c3, 2, 2, "front") == pytest.approx(0.0, abs=1e-9)
    assert g.in_contact(g.footprint(target, 4, 2), g.footprint(c3, 2, 2))
    assert g.contact_side(target, 4, 2, g.footprint(c3, 2, 2)) == "front"
    with pytest.raises(ValueError):
        g.flush_pose(target, 4, 2, "top", 2, 2, 0)


@settings(max_examples=200)
@given(poses, size, size, size, size, st.sampled_from(g.SIDES), st.floats(-1, 1))
def test_flush_pose_random(target, tw, td, cw, cd, side, frac):
    edge = tw if side in ("front", "rear") else td
    reach = 0.5 * (edge + cw)
    offset = frac * reach
    c = g.flush_pose(target, tw, td, side, cw, cd, offset)
    tf, cf = g.footprint(target, tw, td), g.footprint(c, cw, cd)
    assert not g.overlaps(tf, cf)
    assert g.distance(tf, cf) <= EPS
    expected = max(0.0, min(edge / 2, offset + cw / 2) - max(-edge / 2, offset - cw / 2))
    got = g.edge_overlap(target, tw, td, side, c, cw, cd, "front")
    assert got == pytest.approx(expected, abs=1e-6)
    if expected > 1e-6:
        assert g.contact_side(target, tw, td, cf) == side
    turn = {"front": 180, "right": 90, "rear": 0, "left": 270}[side]
    assert ang_diff(c.facing, target.facing + turn) < 1e-9


@given(poses, size, size, size, size, st.sampled_from(g.SIDES), st.floats(1.1, 3))
def test_flush_pose_far_offset_not_in_contact(target, tw, td, cw, cd, side, frac):
    edge = tw if side in ("front", "rear") else td
    offset = frac * 0.5 * (edge + cw) + 2 * EPS
    c = g.flush_pose(target, tw, td, side, cw, cd, offset)
    tf, cf = g.footprint(target, tw, td), g.footprint(c, cw, cd)
    assert not g.overlaps(tf, cf)
    assert g.contact_side(target, tw, td, cf) is None


def test_edge_overlap_not_collinear():
    a = Pose(0, 0, 90)
    b = Pose(0, 3.5, 270)  # front edges 1.5" apart
    assert g.edge_overlap(a, 4, 2, "front", b, 4, 2, "front") == 0.0
    b2 = Pose(0, 2.005, 270)  # within EPS
    assert g.edge_overlap(a, 4, 2, "front", b2, 4, 2, "front") == pytest.approx(4)
    b3 = Pose(0, 3, 90)  # 2 wide, 4 deep: its left edge is perpendicular, ending on A's front
    assert g.edge_overlap(a, 4, 2, "front", b3, 2, 4, "left") == pytest.approx(0.0, abs=1e-9)
    assert g.edge_overlap(a, 4, 2, "front", b3, 2, 4, "rear") == pytest.approx(2)
    b4 = Pose(0, 3, 0)  # facing east, 4 wide: its right edge lies on A's front edge
    assert g.edge_overlap(a, 4, 2, "front", b4, 4, 2, "right") == pytest.approx(2)
    b5 = Pose(0, 2, 271)  # tilted 1 degree: only the stretch within EPS counts
    got = g.edge_overlap(a, 4, 2, "front", b5, 4, 2, "front")
    assert got == pytest.approx(2 * EPS / math.tan(math.radians(1)), rel=1e-9)


def test_contact_side_none_and_corner():
    t = Pose(0, 0, 90)  # x -2..2, y -1..1
    assert g.contact_side(t, 4, 2, shapely.box(5, 5, 6, 6)) is None
    # corner to corner in the rear-right diagonal, centroid on the flank side of the ray
    assert g.contact_side(t, 4, 2, shapely.box(2, -3, 5, -1)) == "right"
    assert g.contact_side(t, 4, 2, shapely.box(-3, -2, 3, -1)) == "rear"


# ----------------------------------------------------------------------------
# Table
# ----------------------------------------------------------------------------
def test_table_edges():
    assert g.within_table(shapely.box(0, 0, 72, 48))
    assert g.within_table(shapely.box(-0.005, 1, 10, 10))
    assert not g.within_table(shapely.box(-0.5, 1, 10, 10))
    assert g.crosses_table_edge(shapely.box(70, 40, 73, 45), 72, 48)
    assert not g.crosses_table_edge(shapely.box(70, 40, 71, 45), 72, 48)
    assert g.crosses_table_edge(shapely.box(80, 40, 81, 45), 72, 48)
    assert not g.within_table(shapely.box(1, 1, 5, 5), 4, 4)
