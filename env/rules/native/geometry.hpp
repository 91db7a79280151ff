// Convex-polygon geometry for the compiled core: poses, footprints, sweeps,
// overlap-by-more-than-EPS and distances, computed the way the shapely
// reference (env/rules/geometry.py, env/rules/space.py) computes them.
//
// Conventions (CORE.CONV.*, CORE.GEO.*): inches and degrees; a pose is the
// footprint centre and a facing counter-clockwise from +x; polygons are convex
// rings without a closing point, counter-clockwise.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace battleline {

constexpr double EPS = 0.01;  // CORE.CONV.UNITS: values within EPS inches are equal
constexpr double PI = 3.14159265358979323846;
constexpr double DEG_TO_RAD = PI / 180.0;  // as Python's math.radians

struct Vec {
    double x, y;
};

struct Box {
    double x0, y0, x1, y1;
};

struct Pose {
    double x, y, facing;
};

using Ring = std::vector<Vec>;

// Python's float ``a % 360.0`` (sign of the divisor, +0.0 for an exact multiple).
inline double py_mod(double a, double m) {
    double r = std::fmod(a, m);
    if (r != 0.0) {
        if ((m < 0) != (r < 0)) r += m;
    } else {
        r = std::copysign(0.0, m);
    }
    return r;
}

// geometry._norm_deg: an angle reduced to [0, 360).
inline double norm_deg(double a) {
    double r = py_mod(a, 360.0);
    return r >= 360.0 ? 0.0 : r;
}

// geometry._cos_sin: (cos, sin) of an angle in degrees, exact at multiples of 90°. The last answer is kept (a
// footprint, its move and its sweep ask of one facing in turn): equal facings (0.0 and -0.0 alike) give equal answers.
inline Vec cos_sin(double facing) {
    static double last_facing = NAN;
    static Vec last{1.0, 0.0};
    if (facing == last_facing) return last;
    double a = py_mod(facing, 360.0);
    if (a == 0.0 || a >= 360.0) {
        last = {1.0, 0.0};
    } else if (a == 90.0) {
        last = {0.0, 1.0};
    } else if (a == 180.0) {
        last = {-1.0, 0.0};
    } else if (a == 270.0) {
        last = {0.0, -1.0};
    } else {
        double r = a * DEG_TO_RAD;
        last = {std::cos(r), std::sin(r)};
    }
    last_facing = facing;
    return last;
}

// geometry._corner_list: FL, FR, RR, RL (clockwise) of a W x D footprint.
inline std::array<Vec, 4> corner_list(const Pose& p, double width, double depth) {
    Vec cs = cos_sin(p.facing);
    double hw = 0.5 * width, hd = 0.5 * depth;
    double fx = hd * cs.x, fy = hd * cs.y;
    double rx = hw * cs.y, ry = -hw * cs.x;
    return {{{p.x + fx - rx, p.y + fy - ry},
             {p.x + fx + rx, p.y + fy + ry},
             {p.x - fx + rx, p.y - fy + ry},
             {p.x - fx - rx, p.y - fy - ry}}};
}

// CORE.GEO.FOOTPRINT as a counter-clockwise ring (FL, RL, RR, FR), as geometry.footprint.
inline Ring footprint(const Pose& p, double width, double depth) {
    auto c = corner_list(p, width, depth);
    return {c[0], c[3], c[2], c[1]};
}

// geometry.move_straight
inline Pose move_straight(const Pose& p, double dist) {
    Vec cs = cos_sin(p.facing);
    return {p.x + dist * cs.x, p.y + dist * cs.y, norm_deg(p.facing)};
}

// geometry.to_world
inline Vec to_world(const Pose& p, double lx, double ly) {
    Vec cs = cos_sin(p.facing);
    return {p.x + lx * cs.y + ly * cs.x, p.y - lx * cs.x + ly * cs.y};
}

// geometry.wheel with the pivot corner named (left: front-left, else front-right).
inline Pose wheel_about(const Pose& p, double width, double angle_deg, double depth, bool left) {
    double plx = left ? -0.5 * width : 0.5 * width;
    double hd = 0.5 * depth;
    Vec piv = to_world(p, plx, hd);
    double t = angle_deg * DEG_TO_RAD;
    double ct = std::cos(t), st = std::sin(t);
    double dx = p.x - piv.x, dy = p.y - piv.y;
    return {piv.x + ct * dx - st * dy, piv.y + st * dx + ct * dy, norm_deg(p.facing + angle_deg)};
}

// geometry.wheel (pivot on the front-left corner for angle >= 0, else front-right).
inline Pose wheel(const Pose& p, double width, double angle_deg, double depth) {
    return wheel_about(p, width, angle_deg, depth, angle_deg >= 0);
}

// geometry.wheel_distance: W·|θ| (inches).
inline double wheel_distance(double width, double angle_deg) { return width * std::fabs(angle_deg * DEG_TO_RAD); }

Box bounds(const Ring& r);
bool boxes_meet(const Box& a, const Box& b);
double signed_area(const Ring& r);
Ring ccw(Ring r);
Ring convex_hull(std::vector<Vec> pts);
Ring wheel_swept_area(const Pose& p, double width, double depth, double angle_deg);
Ring erode(const Ring& r, double by);
bool intersects(const Ring& a, const Ring& b);
double sat_margin(const Ring& a, const Ring& b);
double distance(const Ring& a, const Ring& b);
bool is_convex(const Ring& r);

}  // namespace battleline
