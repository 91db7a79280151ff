// Line of sight in the compiled core (CORE.GEO.LOS), as geometry.has_los answers it.
//
// Fifteen segments run from the viewer's front-edge midpoint, front-left and
// front-right corners to the target's centre and four corners. Blockers are
// convex polygons; the reference (shapely) keeps those whose bounding box meets
// the segments' and is not the viewer's or the target's. A segment *hits* a
// blocker when they share a point (touching counts): decided here with exact
// orientation predicates, as GEOS decides it. If exactly one blocker is hit, a
// segment is blocked when it meets that blocker eroded by EPS/2. With several
// hit, the reference closes the gaps between them (each grown by EPS/2, their
// union eroded by EPS); where the grown shapes stay apart that is again each
// one's erosion by EPS/2. Woods then block a clear segment that crosses more
// than 2" + EPS of them.
//
// Where the answer rests on what this does not reproduce or on a rounding the
// reference makes differently (blockers hit that come within about EPS of each
// other; a segment within a micro-inch of an eroded core; woods within a
// micro-inch of 2" + EPS; a polygon that is not convex, whose erosion GEOS
// simplifies or whose growth it bevels), the answer is "undecided" (-1) and the
// caller asks the reference.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cfloat>
#include <stdexcept>
#include <string>

#include "geometry.hpp"

namespace py = pybind11;

namespace battleline {
namespace {

constexpr double SAME_BOX = 1e-6;    // geometry._same_bbox's tolerance (inches)
constexpr double WOODS_LIMIT = 2.0;  // CORE.GEO.LOS: at most 2" of woods
constexpr double SIMPLIFY = 0.01;   // GEOS's buffer simplify factor (of the distance)
constexpr double BAND = 1e-9;        // answers nearer than this (inches) to a threshold are left to the reference
constexpr double MITRE_REACH = 2.5 * EPS * (1.0 + 1e-6);  // GEOS's mitre limit 5 times EPS/2: how far growth reaches
constexpr double GROUPED_CLEAR = 3.0 * EPS;  // a segment this far from grouped blockers misses their closing
constexpr double DEEP = 6.0 * EPS;  // erosion by EPS with mitre limit 5 keeps what lies over 5 EPS inside
constexpr int SEES = 1, BLIND = 0, UNDECIDED = -1;

// ---------------------------------------------------------------- exact orientation (Shewchuk's orient2d)
inline void two_sum(double a, double b, double& x, double& y) {
    x = a + b;
    double bv = x - a, av = x - bv;
    y = (a - av) + (b - bv);
}

inline void two_diff(double a, double b, double& x, double& y) {
    x = a - b;
    double bv = a - x, av = x + bv;
    y = (a - av) + (bv - b);
}

inline void two_prod(double a, double b, double& x, double& y) {
    x = a * b;
    y = std::fma(a, b, -x);
}

// The sign of the exact sum of ``n`` doubles (grow-expansion with zero elimination).
int exact_sign(const double* terms, int n) {
    std::array<double, 40> e{}, h{};
    int m = 0;
    for (int t = 0; t < n; ++t) {
        double q = terms[t];
        int k = 0;
        for (int i = 0; i < m; ++i) {
            double s, r;
            two_sum(q, e[i], s, r);
            if (r != 0.0) h[k++] = r;
            q = s;
        }
        if (q != 0.0) h[k++] = q;
        std::copy(h.begin(), h.begin() + k, e.begin());
        m = k;
    }
    return m == 0 ? 0 : (e[m - 1] > 0 ? 1 : -1);
}

// +1 if c lies left of a->b, -1 right, 0 on the line: exact for any doubles.
int orient(const Vec& a, const Vec& b, const Vec& c) {
    double detleft = (a.x - c.x) * (b.y - c.y);
    double detright = (a.y - c.y) * (b.x - c.x);
    double det = detleft - detright, detsum;
    if (detleft > 0.0) {
        if (detright <= 0.0) return det > 0 ? 1 : det < 0 ? -1 : 0;
        detsum = detleft + detright;
    } else if (detleft < 0.0) {
        if (detright >= 0.0) return det > 0 ? 1 : det < 0 ? -1 : 0;
        detsum = -detleft - detright;
    } else {
        return det > 0 ? 1 : det < 0 ? -1 : 0;
    }
    constexpr double eps = DBL_EPSILON / 2;
    constexpr double bound = (3.0 + 16.0 * eps) * eps;
    if (det >= bound * detsum || -det >= bound * detsum) return det > 0 ? 1 : -1;
    double ax, axl, ay, ayl, bx, bxl, by, byl;
    two_diff(a.x, c.x, ax, axl);
    two_diff(a.y, c.y, ay, ayl);
    two_diff(b.x, c.x, bx, bxl);
    two_diff(b.y, c.y, by, byl);
    // (ax + axl)(by + byl) - (ay + ayl)(bx + bxl), every product split exactly.
    const double l[4][2] = {{ax, by}, {ax, byl}, {axl, by}, {axl, byl}};
    const double r[4][2] = {{ay, bx}, {ay, bxl}, {ayl, bx}, {ayl, bxl}};
    double terms[16];
    for (int i = 0; i < 4; ++i) {
        two_prod(l[i][0], l[i][1], terms[4 * i], terms[4 * i + 1]);
        two_prod(-r[i][0], r[i][1], terms[4 * i + 2], terms[4 * i + 3]);
    }
    return exact_sign(terms, 16);
}

// ---------------------------------------------------------------- exact predicates on segments and convex rings
bool in_box(const Vec& p, const Vec& a, const Vec& b) {
    return std::min(a.x, b.x) <= p.x && p.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= p.y && p.y <= std::max(a.y, b.y);
}

// Whether closed segments pq and ab share a point.
bool segments_meet(const Vec& p, const Vec& q, const Vec& a, const Vec& b) {
    int o1 = orient(p, q, a), o2 = orient(p, q, b);
    if (o1 * o2 > 0) return false;
    int o3 = orient(a, b, p), o4 = orient(a, b, q);
    if (o3 * o4 > 0) return false;
    if (o1 == 0 && o2 == 0 && o3 == 0 && o4 == 0)  // collinear: the boxes decide
        return in_box(a, p, q) || in_box(b, p, q) || in_box(p, a, b) || in_box(q, a, b);
    return true;
}

// Whether p lies in or on the counter-clockwise convex ring.
bool covers(const Ring& r, const Vec& p) {
    for (size_t i = 0, n = r.size(); i < n; ++i)
        if (orient(r[i], r[(i + 1) % n], p) < 0) return false;
    return true;
}

// Whether segment pq shares a point with the convex ring (touching counts), exactly.
bool segment_hits(const Vec& p, const Vec& q, const Ring& r, const Box& box) {
    if (std::max(p.x, q.x) < box.x0 || std::min(p.x, q.x) > box.x1 || std::max(p.y, q.y) < box.y0 ||
        std::min(p.y, q.y) > box.y1)
        return false;
    if (covers(r, p) || covers(r, q)) return true;
    for (size_t i = 0, n = r.size(); i < n; ++i)
        if (segments_meet(p, q, r[i], r[(i + 1) % n])) return true;
    return false;
}

// The largest gap between segment pq and a convex ring along their separating axes (inches):
// > 0 apart, < 0 overlapping by at least that much along every axis.
double axis_gap(const Vec& p, const Vec& q, const Ring& r) {
    double best = -INFINITY;
    size_t n = r.size();
    for (size_t i = 0; i < n; ++i) {
        const Vec& a = r[i];
        const Vec& b = r[(i + 1) % n];
        double ex = b.x - a.x, ey = b.y - a.y, len = std::hypot(ex, ey);
        if (len == 0.0) continue;
        double nx = ey / len, ny = -ex / len, top = -INFINITY;
        for (const Vec& v : r) top = std::max(top, nx * v.x + ny * v.y);
        best = std::max(best, std::min(nx * p.x + ny * p.y, nx * q.x + ny * q.y) - top);
    }
    double ex = q.x - p.x, ey = q.y - p.y, len = std::hypot(ex, ey);
    if (len > 0.0) {
        double nx = ey / len, ny = -ex / len, s = nx * p.x + ny * p.y, lo = INFINITY, hi = -INFINITY;
        for (const Vec& v : r) {
            double d = nx * v.x + ny * v.y;
            lo = std::min(lo, d);
            hi = std::max(hi, d);
        }
        best = std::max(best, std::max(lo - s, s - hi));
    }
    return best;
}

// Convex and simple, exactly: every vertex on or left of every edge, and some area.
bool exactly_convex(const Ring& r) {
    size_t n = r.size();
    if (n < 3 || signed_area(r) <= 0.0) return false;
    for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j)
            if (orient(r[i], r[(i + 1) % n], r[j]) < 0) return false;
    return true;
}

// Whether erode() gives GEOS's buffer(-EPS/2, mitre) up to rounding: GEOS first drops
// vertices less than 1% of the distance off their neighbours' chord, and joins offset
// edges too short to meet through the original vertex; rings near either are left to it.
bool erodes_cleanly(const Ring& r) {
    constexpr double d = EPS / 2;
    size_t n = r.size();
    for (size_t i = 0; i < n; ++i) {
        const Vec& a = r[(i + n - 1) % n];
        const Vec& v = r[i];
        const Vec& b = r[(i + 1) % n];
        double ux = v.x - a.x, uy = v.y - a.y, wx = b.x - v.x, wy = b.y - v.y;
        double lu = std::hypot(ux, uy), lw = std::hypot(wx, wy), chord = std::hypot(b.x - a.x, b.y - a.y);
        if (lu == 0.0 || lw == 0.0 || chord == 0.0) return false;
        double depth = std::fabs(ux * wy - uy * wx) / chord;  // twice the triangle's area over its base
        if (depth < 100 * SIMPLIFY * d) return false;  // a hundredfold margin
        // interior angle theta: the offset corner sits d*cot(theta/2) along each edge
        double cos_t = -(ux * wx + uy * wy) / (lu * lw), sin_t = std::fabs(ux * wy - uy * wx) / (lu * lw);
        double along = d * (1.0 + cos_t) / sin_t;
        if (lu < 2.0 * along + 1e-6 || lw < 2.0 * along + 1e-6) return false;
    }
    return true;
}

// How far (inches) GEOS's buffer(EPS/2, mitre) of a convex ring reaches beyond it: (EPS/2)/sin(theta/2) at
// its sharpest corner; NaN where a corner is sharp enough (mitre ratio over 4, GEOS bevels over 5) to bevel.
double mitre_reach(const Ring& r) {
    double reach = 0.0;
    for (size_t i = 0, n = r.size(); i < n; ++i) {
        const Vec& a = r[(i + n - 1) % n];
        const Vec& v = r[i];
        const Vec& b = r[(i + 1) % n];
        double ux = a.x - v.x, uy = a.y - v.y, wx = b.x - v.x, wy = b.y - v.y;
        double cos_t = (ux * wx + uy * wy) / (std::hypot(ux, uy) * std::hypot(wx, wy));
        double half_sin = std::sqrt(std::max(0.0, 0.5 * (1.0 - cos_t)));
        if (!(half_sin >= 0.25)) return NAN;
        reach = std::max(reach, 0.5 * EPS / half_sin);
    }
    return reach * (1.0 + 1e-6);
}

// Which blockers hit have, in the reference's blocking core, exactly their own erosion by EPS/2 (up to
// rounding). One blocker alone: its buffer(-EPS/2), as erode() gives it where erodes_cleanly. Several: the
// reference closes the gaps between them (buffer(+EPS/2) each, union, buffer(-EPS)); a blocker whose grown
// shape stays apart from the others' and has no bevelled corner is a piece of its own, and its closing is
// its erosion by EPS/2 again. The others are "grouped": their part of the core is not reproduced.
std::vector<bool> exact_cores(const std::vector<const Ring*>& hits) {
    size_t n = hits.size();
    std::vector<bool> exact(n);
    if (n == 1) {
        exact[0] = erodes_cleanly(*hits[0]);
        return exact;
    }
    std::vector<double> reach(n);
    for (size_t i = 0; i < n; ++i) reach[i] = mitre_reach(*hits[i]);
    for (size_t i = 0; i < n; ++i) {
        exact[i] = !std::isnan(reach[i]) && erodes_cleanly(*hits[i]);
        for (size_t j = 0; j < n && exact[i]; ++j) {
            double rj = std::isnan(reach[j]) ? MITRE_REACH : reach[j];
            exact[i] = j == i || distance(*hits[i], *hits[j]) > reach[i] + rj + BAND;
        }
    }
    return exact;
}

Ring ring_at(const double* xy, py::ssize_t n) {
    Ring r;
    for (py::ssize_t i = 0; i < n; ++i) {
        Vec v{xy[2 * i], xy[2 * i + 1]};
        if (r.empty() || v.x != r.back().x || v.y != r.back().y) r.push_back(v);
    }
    while (r.size() > 1 && r.front().x == r.back().x && r.front().y == r.back().y) r.pop_back();
    return ccw(r);
}

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;
using Sizes = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;

std::vector<Ring> rings_of(const Array& coords, const Sizes& sizes, const char* what) {
    if (coords.ndim() != 2 || coords.shape(1) != 2)
        throw std::invalid_argument(std::string(what) + ": expected an (n, 2) array of coordinates");
    if (sizes.ndim() != 1) throw std::invalid_argument(std::string(what) + ": expected a 1-d array of ring sizes");
    std::vector<Ring> out;
    const double* xy = coords.data();
    py::ssize_t at = 0, total = coords.shape(0);
    for (py::ssize_t i = 0; i < sizes.shape(0); ++i) {
        int64_t k = sizes.data()[i];
        if (k < 0 || k > total - at) throw std::invalid_argument(std::string(what) + ": ring sizes exceed the coordinates");
        out.push_back(ring_at(xy + 2 * at, k));
        at += k;
    }
    if (at != total) throw std::invalid_argument(std::string(what) + ": ring sizes do not add up to the coordinates");
    return out;
}

// Three-valued "or" of per-segment answers.
struct Any3 {
    bool yes = false, maybe = false;
    void add(int v) { yes |= v == SEES, maybe |= v == UNDECIDED; }
    int value() const { return yes ? SEES : maybe ? UNDECIDED : BLIND; }
};

}  // namespace

// CORE.GEO.LOS as geometry.has_los: 1 sees, 0 does not, -1 undecided (ask the reference).
int line_of_sight(const Pose& vp, double vw, double vd, const Pose& tp, double tw, double td,
                  const std::vector<Ring>& blockers, const std::vector<Ring>& woods) {
    if (blockers.empty() && woods.empty()) return SEES;
    auto vc = corner_list(vp, vw, vd);
    auto tc = corner_list(tp, tw, td);
    const Vec starts[3] = {{0.5 * (vc[0].x + vc[1].x), 0.5 * (vc[0].y + vc[1].y)}, vc[0], vc[1]};
    const Vec ends[5] = {{tp.x, tp.y}, tc[0], tc[1], tc[2], tc[3]};
    int blocked[15] = {};  // 1 blocked, -1 undecided
    Box seg{INFINITY, INFINITY, -INFINITY, -INFINITY};  // all the segments' bounding box
    for (const Vec& p : starts) seg = {std::min(seg.x0, p.x), std::min(seg.y0, p.y), std::max(seg.x1, p.x), std::max(seg.y1, p.y)};
    for (const Vec& p : ends) seg = {std::min(seg.x0, p.x), std::min(seg.y0, p.y), std::max(seg.x1, p.x), std::max(seg.y1, p.y)};

    if (!blockers.empty()) {
        Box vb = bounds(Ring(vc.begin(), vc.end())), tb = bounds(Ring(tc.begin(), tc.end()));
        auto same = [](const Box& a, const Box& b) {
            return std::fabs(a.x0 - b.x0) <= SAME_BOX && std::fabs(a.y0 - b.y0) <= SAME_BOX &&
                   std::fabs(a.x1 - b.x1) <= SAME_BOX && std::fabs(a.y1 - b.y1) <= SAME_BOX;
        };
        std::vector<const Ring*> hits;
        std::vector<unsigned> masks;  // bit k: segment k hits the blocker
        for (const Ring& r : blockers) {
            if (r.size() < 3) return UNDECIDED;
            Box bb = bounds(r);
            if (!(bb.x0 <= seg.x1 && bb.x1 >= seg.x0 && bb.y0 <= seg.y1 && bb.y1 >= seg.y0) || same(bb, vb) || same(bb, tb))
                continue;
            if (!exactly_convex(r)) return UNDECIDED;
            unsigned mask = 0;
            for (int k = 0; k < 15; ++k)
                if (segment_hits(starts[k / 5], ends[k % 5], r, bb)) mask |= 1u << k;
            if (mask) hits.push_back(&r), masks.push_back(mask);
        }
        if (!hits.empty()) {
            // A segment that hits no blocker is clear (the reference tests only those that do). One that
            // hits: blocked if it meets an exact core, or runs deeper than DEEP into a grouped blocker (the
            // closing keeps every point that far inside); clear if it misses the exact cores and keeps
            // GROUPED_CLEAR from the grouped blockers (the closing lies within MITRE_REACH of them).
            std::vector<bool> exact = exact_cores(hits);
            std::vector<Ring> cores(hits.size());
            for (size_t i = 0; i < hits.size(); ++i) {
                double by = exact[i] ? EPS / 2 : DEEP;
                cores[i] = erode(*hits[i], by);
                if (exact[i] && (cores[i].empty() != erode(*hits[i], by - BAND).empty() ||
                                 cores[i].empty() != erode(*hits[i], by + BAND).empty()))
                    return UNDECIDED;  // as thin as EPS, within the band
            }
            unsigned any_hit = 0;
            for (unsigned m : masks) any_hit |= m;
            bool all = true;
            for (int k = 0; k < 15; ++k) {
                if (any_hit >> k & 1u) {
                    const Vec& p = starts[k / 5];
                    const Vec& q = ends[k % 5];
                    bool yes = false, maybe = false;
                    for (size_t i = 0; i < hits.size() && !yes; ++i) {
                        double gap = cores[i].empty() ? INFINITY : axis_gap(p, q, cores[i]);
                        yes = gap < -BAND;
                        if (exact[i]) maybe |= gap <= BAND;
                        else maybe |= axis_gap(p, q, *hits[i]) <= GROUPED_CLEAR;
                    }
                    blocked[k] = yes ? 1 : maybe ? -1 : 0;
                }
                all &= blocked[k] == 1;
            }
            if (all) return BLIND;
        }
    }
    Any3 sees;
    std::vector<const Ring*> near_woods;  // woods out of the segments' box add nothing
    for (const Ring& w : woods) {
        if (w.size() < 3) return UNDECIDED;
        Box wb = bounds(w);
        if (!(wb.x0 <= seg.x1 && wb.x1 >= seg.x0 && wb.y0 <= seg.y1 && wb.y1 >= seg.y0)) continue;
        if (!exactly_convex(w)) return UNDECIDED;
        near_woods.push_back(&w);
    }
    for (int k = 0; k < 15; ++k) {
        if (blocked[k] == 1) continue;
        const Vec& p = starts[k / 5];
        const Vec& q = ends[k % 5];
        double len = std::hypot(q.x - p.x, q.y - p.y), total = 0.0;
        for (const Ring* wp : near_woods) {
            const Ring& w = *wp;
            // Clip the segment to the convex ring (Cyrus-Beck); the length inside adds up.
            double t0 = 0.0, t1 = 1.0;
            for (size_t i = 0, n = w.size(); i < n && t0 <= t1; ++i) {
                const Vec& a = w[i];
                const Vec& b = w[(i + 1) % n];
                double nx = b.y - a.y, ny = a.x - b.x;  // outward normal of a counter-clockwise ring
                double num = nx * (p.x - a.x) + ny * (p.y - a.y), den = nx * (q.x - p.x) + ny * (q.y - p.y);
                if (den == 0.0) {
                    if (num > 0.0) t1 = -1.0;
                } else if (den > 0.0) {
                    t1 = std::min(t1, -num / den);
                } else {
                    t0 = std::max(t0, -num / den);
                }
            }
            if (t1 > t0) total += (t1 - t0) * len;
        }
        int ok = total <= WOODS_LIMIT + EPS - BAND ? SEES : total > WOODS_LIMIT + EPS + BAND ? BLIND : UNDECIDED;
        sees.add(blocked[k] == -1 && ok != BLIND ? UNDECIDED : ok);
        if (sees.yes) return SEES;
    }
    return sees.value();
}

void register_sight(py::module_& m) {
    m.def(
        "line_of_sight",
        [](double vx, double vy, double vf, double vw, double vd, double tx, double ty, double tf, double tw, double td,
           const Array& units, const Array& blocker_xy, const Sizes& blocker_sizes, const Array& woods_xy,
           const Sizes& woods_sizes) {
            if (units.ndim() != 2 || units.shape(1) != 5)
                throw std::invalid_argument("units: expected an (n, 5) array of x, y, facing, width, depth");
            std::vector<Ring> blockers;
            auto u = units.unchecked<2>();
            for (py::ssize_t i = 0; i < u.shape(0); ++i) blockers.push_back(footprint({u(i, 0), u(i, 1), u(i, 2)}, u(i, 3), u(i, 4)));
            for (Ring& r : rings_of(blocker_xy, blocker_sizes, "blockers")) blockers.push_back(std::move(r));
            auto woods = rings_of(woods_xy, woods_sizes, "woods");
            return line_of_sight({vx, vy, vf}, vw, vd, {tx, ty, tf}, tw, td, blockers, woods);
        },
        py::arg("vx"), py::arg("vy"), py::arg("vfacing"), py::arg("vwidth"), py::arg("vdepth"), py::arg("tx"), py::arg("ty"),
        py::arg("tfacing"), py::arg("twidth"), py::arg("tdepth"), py::arg("units"), py::arg("blocker_xy"),
        py::arg("blocker_sizes"), py::arg("woods_xy"), py::arg("woods_sizes"),
        "CORE.GEO.LOS as geometry.has_los: 1 sees, 0 does not, -1 undecided (ask the reference). Blockers are the\n"
        "footprints of ``units`` (an (n, 5) float64 table: x, y, facing, width, depth) and polygons; polygons are given\n"
        "as stacked (k, 2) float64 coordinates (a closing point may repeat the first) and their int64 sizes.");
    m.def(
        "orient", [](double ax, double ay, double bx, double by, double cx, double cy) { return orient({ax, ay}, {bx, by}, {cx, cy}); },
        py::arg("ax"), py::arg("ay"), py::arg("bx"), py::arg("by"), py::arg("cx"), py::arg("cy"),
        "Exact orientation of c against a->b: 1 left, -1 right, 0 on the line.");
}

}  // namespace battleline
