// Convex-polygon primitives of the compiled core (see geometry.hpp).
#include "geometry.hpp"

#include <stdexcept>

namespace battleline {

Box bounds(const Ring& r) {
    Box b{r[0].x, r[0].y, r[0].x, r[0].y};
    for (const Vec& v : r) {
        b.x0 = std::min(b.x0, v.x);
        b.y0 = std::min(b.y0, v.y);
        b.x1 = std::max(b.x1, v.x);
        b.y1 = std::max(b.y1, v.y);
    }
    return b;
}

// space.boxes_meeting: boxes that intersect or touch.
bool boxes_meet(const Box& a, const Box& b) { return b.x0 <= a.x1 && b.x1 >= a.x0 && b.y0 <= a.y1 && b.y1 >= a.y0; }

double signed_area(const Ring& r) {
    double s = 0.0;
    for (size_t i = 0, n = r.size(); i < n; ++i) {
        const Vec& p = r[i];
        const Vec& q = r[(i + 1) % n];
        s += p.x * q.y - q.x * p.y;
    }
    return 0.5 * s;
}

Ring ccw(Ring r) {
    if (signed_area(r) < 0) std::reverse(r.begin(), r.end());
    return r;
}

static double cross(const Vec& o, const Vec& a, const Vec& b) {
    return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

// The convex hull of points, counter-clockwise, collinear points dropped (Andrew's monotone chain).
Ring convex_hull(std::vector<Vec> pts) {
    std::sort(pts.begin(), pts.end(), [](const Vec& a, const Vec& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
    pts.erase(std::unique(pts.begin(), pts.end(), [](const Vec& a, const Vec& b) { return a.x == b.x && a.y == b.y; }),
              pts.end());
    if (pts.size() < 3) return pts;
    Ring h(2 * pts.size());
    size_t k = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
        while (k >= 2 && cross(h[k - 2], h[k - 1], pts[i]) <= 0) --k;
        h[k++] = pts[i];
    }
    for (size_t i = pts.size() - 1, t = k + 1; i-- > 0;) {
        while (k >= t && cross(h[k - 2], h[k - 1], pts[i]) <= 0) --k;
        h[k++] = pts[i];
    }
    h.resize(k - 1);
    return h;
}

// geometry.wheel_swept_area: star-shaped about the pivot corner, the arc drawn as chords
// so that the polygon lies inside the true swept area and misses at most EPS/2 of it.
Ring wheel_swept_area(const Pose& p, double width, double depth, double angle_deg) {
    if (!(std::fabs(angle_deg) <= 180.0))  // NaN too
        throw std::invalid_argument("wheel_swept_area: |angle| must be at most 180 degrees");
    if (!std::isfinite(width) || !std::isfinite(depth) || width < 0 || depth < 0)
        throw std::invalid_argument("wheel_swept_area: width and depth must be finite and not negative");
    if (angle_deg == 0.0) return footprint(p, width, depth);
    auto cs = corner_list(p, width, depth);
    auto ce = corner_list(wheel(p, width, angle_deg, depth), width, depth);
    Vec piv, near_s, far_s, far_e, tip_e;
    if (angle_deg > 0) {
        piv = cs[0], near_s = cs[3], far_s = cs[2], far_e = ce[2], tip_e = ce[1];
    } else {
        piv = cs[1], near_s = cs[2], far_s = cs[3], far_e = ce[3], tip_e = ce[0];
    }
    double t = angle_deg * DEG_TO_RAD;
    double r = std::hypot(width, depth);
    double dmax = r > 0 ? 2.0 * std::acos(std::max(-1.0, 1.0 - 0.5 * EPS / r)) : PI;
    long steps = std::max(1L, static_cast<long>(std::ceil(std::fabs(t) / dmax)));
    double step = t / static_cast<double>(steps);
    double vx = far_s.x - piv.x, vy = far_s.y - piv.y;
    Ring ring{piv, near_s, far_s};
    for (long i = 1; i < steps; ++i) {
        double k = static_cast<double>(i) * step;
        double ck = std::cos(k), sk = std::sin(k);
        ring.push_back({piv.x + ck * vx - sk * vy, piv.y + sk * vx + ck * vy});
    }
    ring.push_back(far_e);
    ring.push_back(tip_e);
    return ccw(ring);
}

// The convex ring shrunk by ``by`` inches on every side (the erosion, which is what
// shapely.buffer(-by, join_style="mitre") gives for a convex polygon); empty if it vanishes.
Ring erode(const Ring& r, double by) {
    Ring cur = r;
    size_t n = r.size();
    Ring next;  // one buffer for every cut (a cut adds at most one point)
    next.reserve(2 * n);
    cur.reserve(2 * n);
    for (size_t i = 0; i < n && !cur.empty(); ++i) {
        const Vec& a = r[i];
        const Vec& b = r[(i + 1) % n];
        double ex = b.x - a.x, ey = b.y - a.y;
        double len = std::sqrt(ex * ex + ey * ey);
        if (len == 0.0) continue;
        double nx = ey / len, ny = -ex / len;  // outward normal of a counter-clockwise ring
        double c = nx * a.x + ny * a.y - by;   // keep n·q <= c
        next.clear();
        size_t m = cur.size();
        for (size_t j = 0; j < m; ++j) {
            const Vec& p = cur[j];
            const Vec& q = cur[(j + 1) % m];
            double dp = nx * p.x + ny * p.y - c, dq = nx * q.x + ny * q.y - c;
            if (dp <= 0) next.push_back(p);
            if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
                double t = dp / (dp - dq);
                next.push_back({p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)});
            }
        }
        cur.swap(next);
    }
    if (cur.size() < 3 || signed_area(cur) <= 0.0) return {};
    return cur;
}

static bool separated_along(const Ring& a, const Ring& b, const Ring& edges_of) {
    size_t n = edges_of.size();
    for (size_t i = 0; i < n; ++i) {
        const Vec& p = edges_of[i];
        const Vec& q = edges_of[(i + 1) % n];
        double nx = q.y - p.y, ny = p.x - q.x;
        if (nx == 0.0 && ny == 0.0) continue;
        double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
        for (const Vec& v : a) {
            double d = nx * v.x + ny * v.y;
            amin = std::min(amin, d);
            amax = std::max(amax, d);
        }
        for (const Vec& v : b) {
            double d = nx * v.x + ny * v.y;
            bmin = std::min(bmin, d);
            bmax = std::max(bmax, d);
        }
        if (amax < bmin || bmax < amin) return true;
    }
    return false;
}

// Whether two convex rings share a point (touching counts), by separating axes.
bool intersects(const Ring& a, const Ring& b) {
    if (a.empty() || b.empty()) return false;
    return !separated_along(a, b, a) && !separated_along(a, b, b);
}

// The separating-axis margin of two convex rings (inches): the largest gap between their projections on a unit
// edge normal of either. Positive: apart by at least that much; zero or negative: they meet (negative: each
// reaches that deep into the other along every normal). +infinity when either ring is empty.
double sat_margin(const Ring& a, const Ring& b) {
    if (a.empty() || b.empty()) return INFINITY;
    double best = -INFINITY;
    for (const Ring* edges : {&a, &b}) {
        size_t n = edges->size();
        for (size_t i = 0; i < n; ++i) {
            const Vec& p = (*edges)[i];
            const Vec& q = (*edges)[(i + 1) % n];
            double nx = q.y - p.y, ny = p.x - q.x;
            double len = std::sqrt(nx * nx + ny * ny);
            if (len == 0.0) continue;
            nx /= len, ny /= len;
            double amin = INFINITY, amax = -INFINITY, bmin = INFINITY, bmax = -INFINITY;
            for (const Vec& v : a) {
                double d = nx * v.x + ny * v.y;
                amin = std::min(amin, d), amax = std::max(amax, d);
            }
            for (const Vec& v : b) {
                double d = nx * v.x + ny * v.y;
                bmin = std::min(bmin, d), bmax = std::max(bmax, d);
            }
            best = std::max(best, std::max(bmin - amax, amin - bmax));
        }
    }
    return best;
}

// GEOS's Distance::pointToSegment, term for term.
static double point_segment(const Vec& p, const Vec& A, const Vec& B) {
    if (A.x == B.x && A.y == B.y) return std::sqrt((p.x - A.x) * (p.x - A.x) + (p.y - A.y) * (p.y - A.y));
    double len2 = (B.x - A.x) * (B.x - A.x) + (B.y - A.y) * (B.y - A.y);
    double r = ((p.x - A.x) * (B.x - A.x) + (p.y - A.y) * (B.y - A.y)) / len2;
    if (r <= 0.0) return std::sqrt((p.x - A.x) * (p.x - A.x) + (p.y - A.y) * (p.y - A.y));
    if (r >= 1.0) return std::sqrt((p.x - B.x) * (p.x - B.x) + (p.y - B.y) * (p.y - B.y));
    double s = ((A.y - p.y) * (B.x - A.x) - (A.x - p.x) * (B.y - A.y)) / len2;
    return std::fabs(s) * std::sqrt(len2);
}

static double vertices_to_edges(const Ring& pts, const Ring& ring, double best) {
    size_t n = ring.size();
    for (const Vec& p : pts)
        for (size_t i = 0; i < n; ++i) best = std::min(best, point_segment(p, ring[i], ring[(i + 1) % n]));
    return best;
}

// Distance between two convex rings (0 when they meet), as shapely.distance.
double distance(const Ring& a, const Ring& b) {
    if (intersects(a, b)) return 0.0;
    return vertices_to_edges(b, a, vertices_to_edges(a, b, INFINITY));
}

bool is_convex(const Ring& r) {
    size_t n = r.size();
    if (n < 3) return false;
    for (size_t i = 0; i < n; ++i)
        if (cross(r[i], r[(i + 1) % n], r[(i + 2) % n]) < 0) return false;
    return signed_area(r) > 0;
}

}  // namespace battleline
