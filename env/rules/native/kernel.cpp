// The compiled core's movement scene and its Python binding (module battleline.env.rules._kernel).
//
// A Scene is what one moving unit must keep clear of (space.Surroundings in the
// shapely reference): the other units' footprints, impassable, difficult and
// obstacle terrain, the table. Its questions are those of CORE.MOVE.ONE_INCH,
// CORE.MOVE.TABLE_EDGE and CORE.TERRAIN.COST, answered as the reference answers
// them, term for term, over convex polygons.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <array>
#include <cstring>
#include <unordered_map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "geometry.hpp"

namespace py = pybind11;
using namespace battleline;

namespace {

constexpr double MIN_MOVE = 0.25;       // movement.MIN_MOVE (inches)

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

Ring ring_of(const Array& a, const char* what) {
    if (a.ndim() != 2 || a.shape(1) != 2) throw std::invalid_argument(std::string(what) + ": expected an (n, 2) array");
    Ring r;
    auto v = a.unchecked<2>();
    for (py::ssize_t i = 0; i < v.shape(0); ++i) r.push_back({v(i, 0), v(i, 1)});
    if (r.size() > 1 && r.front().x == r.back().x && r.front().y == r.back().y) r.pop_back();
    if (r.size() < 3) throw std::invalid_argument(std::string(what) + ": a polygon needs at least 3 points");
    return ccw(r);
}

py::array_t<double> array_of(const Ring& r) {
    py::array_t<double> out({static_cast<py::ssize_t>(r.size()), static_cast<py::ssize_t>(2)});
    auto v = out.mutable_unchecked<2>();
    for (size_t i = 0; i < r.size(); ++i) v(i, 0) = r[i].x, v(i, 1) = r[i].y;
    return out;
}

constexpr double TIE_BAND = 1e-9;  // inches: margins this near a threshold are left to the reference

// Whether a ring whose EPS/2 erosion is empty is within TIE_BAND of keeping some of it: about EPS thick, where
// GEOS's rounding of its own buffer decides whether anything is left.
bool barely_empty(const Ring& r, const Ring& shrunk) { return shrunk.empty() && !erode(r, EPS / 2 - TIE_BAND).empty(); }

// A footprint or terrain feature; its EPS/2 erosion is worked out when an overlap test first needs it (most
// shapes of a scene are never that near the mover).
struct Shape {
    Ring ring;
    Box box;
    bool enemy = false;
    explicit Shape(Ring r, bool foe = false) : ring(std::move(r)), box(bounds(ring)), enemy(foe) {}
    // The ring eroded by EPS/2.
    const Ring& shrunk() const {
        erode_once();
        return shrunk_;
    }
    // barely_empty: its overlaps are ties.
    bool thin() const {
        erode_once();
        return thin_;
    }

   private:
    void erode_once() const {
        if (eroded_) return;
        shrunk_ = erode(ring, EPS / 2);
        thin_ = barely_empty(ring, shrunk_);
        eroded_ = true;
    }
    mutable Ring shrunk_;
    mutable bool thin_ = false, eroded_ = false;
};

// The units on the table at one decision: footprints (with their EPS/2 cores), sides, uids and poses, built once
// and shared by every scene of the decision (kernel.decision_table).
struct Table {
    std::vector<Shape> shapes;
    std::vector<int> sides;
    std::vector<long> uids;
    std::vector<std::array<double, 5>> rows;  // x, y, facing, width, depth

    explicit Table(const Array& a) {
        if (a.ndim() != 2 || (a.shape(0) > 0 && a.shape(1) != 7))
            throw std::invalid_argument("table: expected an (n, 7) array of x, y, facing, width, depth, side, uid");
        auto t = a.unchecked<2>();
        for (py::ssize_t i = 0; i < a.shape(0); ++i) {
            rows.push_back({t(i, 0), t(i, 1), t(i, 2), t(i, 3), t(i, 4)});
            shapes.emplace_back(footprint({t(i, 0), t(i, 1), t(i, 2)}, t(i, 3), t(i, 4)));
            sides.push_back(static_cast<int>(t(i, 5)));
            uids.push_back(static_cast<long>(t(i, 6)));
        }
    }
    size_t size() const { return rows.size(); }
};

// space.Sweep: a straight move's hull of two footprints (built on first use), or one ready polygon.
class Sweep {
   public:
    Sweep(const Ring* start, const Ring& end) : start_(start), end_(&end) {
        Box a = bounds(*start), b = bounds(end);
        box = {std::min(a.x0, b.x0), std::min(a.y0, b.y0), std::max(a.x1, b.x1), std::max(a.y1, b.y1)};
    }
    explicit Sweep(const Ring& poly) : start_(nullptr), end_(&poly), box(bounds(poly)) {}
    const Ring* origin() const { return start_; }
    const Ring& geom() {
        if (start_ == nullptr) return *end_;
        if (!built_) {
            std::vector<Vec> pts(start_->begin(), start_->end());
            pts.insert(pts.end(), end_->begin(), end_->end());
            hull_ = convex_hull(std::move(pts));
            built_ = true;
        }
        return hull_;
    }
    const Ring& shrunk() {
        if (!shrunk_built_) {
            shrunk_ = erode(geom(), EPS / 2);
            thin_ = barely_empty(geom(), shrunk_);
            shrunk_built_ = true;
        }
        return shrunk_;
    }
    bool thin() {
        shrunk();
        return thin_;
    }

   private:
    const Ring* start_;
    const Ring* end_;
    Ring hull_, shrunk_;
    bool built_ = false, shrunk_built_ = false, thin_ = false;

   public:
    Box box;
};

// The gap between two boxes (inches, 0 when they meet): a lower bound of the distance between any shapes inside them.
double box_gap(const Box& a, const Box& b) {
    double dx = std::max(0.0, std::max(b.x0 - a.x1, a.x0 - b.x1));
    double dy = std::max(0.0, std::max(b.y0 - a.y1, a.y0 - b.y1));
    return std::sqrt(dx * dx + dy * dy);
}

// Overlap by more than EPS, as space.Surroundings.overlapping, with ties told apart: 1 overlap, 0 none, -1 when
// the EPS/2-shrunk shapes' margin is within TIE_BAND of zero (an overlap of exactly EPS, which GEOS's rounding of
// its own buffers decides).
int overlap_sign(Sweep& s, const Shape& p) {
    // Apart or touching: the shrunk shapes are then EPS apart, no tie (and the costly erosion of s is not needed).
    if (!intersects(s.geom(), p.ring)) return 0;
    if (p.thin() || s.thin()) return -1;  // about EPS thick: whether anything is left of it is GEOS's rounding
    double m = sat_margin(s.shrunk(), p.shrunk());
    if (m > TIE_BAND) return 0;
    if (m < -TIE_BAND) return 1;
    return -1;
}


class Scene {
   public:
    Scene(const Array& units, const std::vector<Array>& impassable, const std::vector<Array>& difficult,
          const std::vector<Array>& obstacles, double table_w, double table_h, bool over_units, bool ignores_terrain,
          bool skirmishers, double half_m)
        : table_w_(table_w), table_h_(table_h), over_units_(over_units), ignores_terrain_(ignores_terrain),
          skirmishers_(skirmishers), half_m_(half_m) {
        if (units.ndim() != 2 || (units.shape(0) > 0 && units.shape(1) != 6))
            throw std::invalid_argument("units: expected an (n, 6) array of x, y, facing, width, depth, enemy");
        auto u = units.unchecked<2>();
        for (py::ssize_t i = 0; i < units.shape(0); ++i)
            owned_.emplace_back(footprint({u(i, 0), u(i, 1), u(i, 2)}, u(i, 3), u(i, 4)), u(i, 5) != 0.0);
        for (const Shape& o : owned_) units_.push_back({&o, o.enemy});
        own_terrain(impassable, difficult, obstacles);
    }

    // A scene over a decision's table: every unit but those in ``exclude`` (uids), enemies by ``side``. The table's
    // footprints are read in place: the table must outlive the scene (the binding keeps it alive).
    Scene(const Table& t, int side, const std::vector<long>& exclude, const std::vector<Array>& impassable,
          const std::vector<Array>& difficult, const std::vector<Array>& obstacles, double table_w, double table_h,
          bool over_units, bool ignores_terrain, bool skirmishers, double half_m)
        : table_w_(table_w), table_h_(table_h), over_units_(over_units), ignores_terrain_(ignores_terrain),
          skirmishers_(skirmishers), half_m_(half_m) {
        for (size_t i = 0; i < t.size(); ++i) {
            if (std::find(exclude.begin(), exclude.end(), t.uids[i]) != exclude.end()) continue;
            units_.push_back({&t.shapes[i], t.sides[i] != side});
        }
        own_terrain(impassable, difficult, obstacles);
    }

    // A scene over ready shapes (unit_moves): every unit but ``self_index``, enemies by ``side``. The shapes are
    // read in place, not copied: ``all`` and the terrain must outlive the scene.
    Scene(const std::vector<Shape>& all, const std::vector<int>& sides, size_t self_index, int side,
          std::vector<const Shape*> impassable, std::vector<const Shape*> difficult, std::vector<const Shape*> obstacles,
          double table_w, double table_h, bool over_units, bool skirmishers, double half_m)
        : impassable_(std::move(impassable)), difficult_(std::move(difficult)), obstacles_(std::move(obstacles)),
          table_w_(table_w), table_h_(table_h), over_units_(over_units), ignores_terrain_(over_units),
          skirmishers_(skirmishers), half_m_(half_m) {
        for (size_t i = 0; i < all.size(); ++i) {
            if (i == self_index) continue;
            units_.push_back({&all[i], sides[i] != side});
        }
    }

    // A scene points into its own vectors: it may be moved (their buffers move with it), never copied.
    Scene(const Scene&) = delete;
    Scene& operator=(const Scene&) = delete;
    Scene(Scene&&) = default;
    Scene& operator=(Scene&&) = default;

    // Whether an answer since the last reset() rested on a tie (an overlap of exactly EPS, or a distance within
    // TIE_BAND of the rule's threshold): the caller then asks the shapely reference instead.
    bool unsure() const { return unsure_; }
    void reset() { unsure_ = false; }
    // Note a tie found earlier for the same question (an answer kept by the caller).
    void mark_unsure() { unsure_ = true; }

    // space.Surroundings.terrain_cost: (multiplier, extra inches).
    std::pair<double, double> terrain_cost(Sweep& s) {
        if (ignores_terrain_) return {1.0, 0.0};
        double mult = 1.0;
        if (!skirmishers_ && overlaps_any(s, difficult_)) mult = 2.0;
        int n = 0;
        for (const Shape* o : obstacles_)
            if (boxes_meet(s.box, o->box) && overlaps_sure(s, *o)) ++n;
        return {mult, half_m_ * n};
    }

    // space.Surroundings.blocked.
    bool blocked(const Ring& end, Sweep& path, double gap, bool pass_friends, const Ring* start) {
        Sweep end_only(end);
        Sweep& s = over_units_ ? end_only : path;
        Box eb = bounds(end);
        if (eb.x0 < -EPS || eb.y0 < -EPS || eb.x1 > table_w_ + EPS || eb.y1 > table_h_ + EPS) return true;
        if (overlaps_any(s, impassable_)) return true;
        near_.clear();
        near_box(s.box, gap);
        if (near_.empty()) return false;
        // A ring's distance is never below its box's gap: a box gap clear of the threshold by more than TIE_BAND
        // (and the rounding of either figure) answers "not below, no tie" without the distance.
        const double clear = gap - EPS + 2 * TIE_BAND;
        for (const Other* o : near_)
            if (box_gap(eb, o->shape->box) <= clear && below(distance(end, o->shape->ring), gap - EPS)) return true;
        if (start == nullptr) start = path.origin();
        for (const Other* o : near_) {
            if (!o->enemy || box_gap(s.box, o->shape->box) > clear) continue;  // floor <= gap: clear as above
            double swept = distance(s.geom(), o->shape->ring);
            if (swept > clear) continue;  // floor <= gap: neither below nor a tie, whatever the floor
            double floor = gap;
            if (start != nullptr) floor = std::min(floor, distance(*start, o->shape->ring));
            if (below(swept, floor - EPS)) return true;
        }
        if (!pass_friends)
            for (const Other* o : near_)
                if (!o->enemy && boxes_meet(s.box, o->shape->box) && overlaps_sure(s, *o->shape)) return true;
        return false;
    }

    // movement.furthest_legal: NaN for None (the start itself is illegal).
    // ``start_kept``: when given, the start test's answer for this start, footprint and pass_friends, kept across
    // calls as blocked + 2 * tie (-1: not asked yet).
    double furthest_legal(const Pose& start, double width, double depth, double allowance, double gap, bool pass_friends,
                          bool refine, int* start_kept = nullptr) {
        if (!std::isfinite(allowance) || !std::isfinite(gap))
            throw std::invalid_argument("furthest_legal: allowance and gap must be finite");
        Ring start_poly = footprint(start, width, depth);
        if (start_kept == nullptr || *start_kept < 0) {
            bool earlier = unsure_;
            unsure_ = false;
            Sweep here(start_poly);
            bool at_start = blocked(start_poly, here, 2 * EPS, pass_friends, nullptr);
            if (start_kept != nullptr) *start_kept = static_cast<int>(at_start) + 2 * static_cast<int>(unsure_);
            unsure_ = earlier || unsure_;
            if (at_start) return NAN;
        } else {
            if (*start_kept >= 2) unsure_ = true;
            if (*start_kept & 1) return NAN;
        }
        double sign = allowance >= 0 ? 1.0 : -1.0;
        double full = std::fabs(allowance);
        if (full < MIN_MOVE) return 0.0;
        auto ok = [&](double d) {
            Ring end_poly = footprint(move_straight(start, sign * d), width, depth);
            Sweep path(&start_poly, end_poly);
            auto [mult, extra] = terrain_cost(path);
            return d * mult + extra <= full + EPS && !blocked(end_poly, path, gap, pass_friends, nullptr);
        };
        if (ok(full)) return full;
        if (!refine && ok(MIN_MOVE)) return MIN_MOVE;
        Ring end_poly = footprint(move_straight(start, sign * full), width, depth);
        Sweep whole(&start_poly, end_poly);
        auto [mult, extra] = terrain_cost(whole);
        double affordable = (full - extra) / mult;
        if (MIN_MOVE <= affordable && affordable < full && ok(affordable)) return affordable;
        double top = affordable >= MIN_MOVE ? std::min(full, affordable) : full;
        std::vector<double> grid;
        for (int k = 7; k >= 1; --k) {
            double d = top * static_cast<double>(k) / 8.0;
            if (d >= MIN_MOVE) grid.push_back(d);
        }
        grid.push_back(MIN_MOVE);
        double lo = NAN;
        for (double d : grid)
            if (ok(d)) {
                lo = d;
                break;
            }
        if (std::isnan(lo)) return 0.0;
        if (!refine) return lo;
        double hi = INFINITY;
        if (top > lo) hi = top;
        for (double d : grid)
            if (d > lo) hi = std::min(hi, d);
        if (std::isinf(hi)) hi = lo;
        for (int i = 0; i < 10; ++i) {
            double mid = (lo + hi) / 2;
            if (ok(mid))
                lo = mid;
            else
                hi = mid;
        }
        return lo;
    }

    // The wheel test of movement._plan: ending at the wheeled footprint after sweeping the wheel's area.
    bool wheel_blocked(const Pose& start, double width, double depth, double angle) {
        Ring end = footprint(wheel(start, width, angle, depth), width, depth);
        Ring area = wheel_swept_area(start, width, depth, angle);
        Ring from = footprint(start, width, depth);
        Sweep s(area);
        return blocked(end, s, 1.0, false, &from);
    }

    // Surroundings.terrain_cost of the area a straight move from ``a`` to ``b`` sweeps (CORE.TERRAIN.COST).
    std::pair<double, double> terrain_cost_between(const Pose& a, const Pose& b, double width, double depth) {
        Ring from = footprint(a, width, depth), to = footprint(b, width, depth);
        Sweep s(&from, to);
        return terrain_cost(s);
    }

    // Surroundings.blocked(poly, poly, gap, pass_friends): standing at a footprint.
    bool blocked_at(const Pose& p, double width, double depth, double gap, bool pass_friends) {
        Ring poly = footprint(p, width, depth);
        Sweep s(poly);
        return blocked(poly, s, gap, pass_friends, nullptr);
    }

   private:
    bool overlaps_any(Sweep& s, const std::vector<const Shape*>& shapes) {
        for (const Shape* o : shapes)
            if (boxes_meet(s.box, o->box) && overlaps_sure(s, *o)) return true;
        return false;
    }

    // The terrain given as rings, kept by the scene (impassable_, difficult_ and obstacles_ point into it).
    void own_terrain(const std::vector<Array>& impassable, const std::vector<Array>& difficult,
                     const std::vector<Array>& obstacles) {
        for (const auto& a : impassable) terrain_.emplace_back(ring_of(a, "impassable"));
        for (const auto& a : difficult) terrain_.emplace_back(ring_of(a, "difficult"));
        for (const auto& a : obstacles) terrain_.emplace_back(ring_of(a, "obstacles"));
        size_t k = 0;
        for (size_t i = 0; i < impassable.size(); ++i) impassable_.push_back(&terrain_[k++]);
        for (size_t i = 0; i < difficult.size(); ++i) difficult_.push_back(&terrain_[k++]);
        for (size_t i = 0; i < obstacles.size(); ++i) obstacles_.push_back(&terrain_[k++]);
    }

    // overlap_sign as a yes or no, a tie noted (unsure_) and read as no.
    bool overlaps_sure(Sweep& s, const Shape& o) {
        int sign = overlap_sign(s, o);
        unsure_ = unsure_ || sign < 0;
        return sign == 1;
    }

    // value < threshold, a value within TIE_BAND of the threshold noted (unsure_).
    bool below(double value, double threshold) {
        if (std::fabs(value - threshold) <= TIE_BAND) unsure_ = true;
        return value < threshold;
    }

    // space.Surroundings._near_box: units whose boxes lie within ``reach`` of ``box``.
    void near_box(const Box& q, double reach) {
        for (const Other& u : units_) {
            const Box& b = u.shape->box;
            double dx = std::max(0.0, std::max(b.x0 - q.x1, q.x0 - b.x1));
            double dy = std::max(0.0, std::max(b.y0 - q.y1, q.y0 - b.y1));
            if (dx * dx + dy * dy < reach * reach) near_.push_back(&u);
        }
    }

    // Another unit's footprint in this scene, and whether it is an enemy of the mover.
    struct Other {
        const Shape* shape;
        bool enemy;
    };

    std::vector<Shape> owned_;  // the footprints this scene built or copied (units_ points into it, or elsewhere)
    std::vector<Other> units_;
    std::vector<Shape> terrain_;  // the terrain this scene built (the pointers below point into it, or elsewhere)
    std::vector<const Shape*> impassable_, difficult_, obstacles_;
    std::vector<const Other*> near_;
    double table_w_, table_h_;
    bool over_units_, ignores_terrain_, skirmishers_;
    double half_m_;
    bool unsure_ = false;
};

Pose pose_of(double x, double y, double facing) { return {x, y, facing}; }

// charges.ChargeRoute's obstacle test (CORE.CHARGE.MOVE, CORE.CHARGE.FEASIBLE): a route's swept areas must stay
// on the table and overlap by more than EPS none of the obstacles the charger does not already overlap.
class RouteScene {
   public:
    RouteScene(const Array& units, const std::vector<Array>& terrain, double table_w, double table_h, const Pose& start,
               double width, double depth)
        : table_w_(table_w), table_h_(table_h) {
        if (units.ndim() != 2 || (units.shape(0) > 0 && units.shape(1) != 5))
            throw std::invalid_argument("units: expected an (n, 5) array of x, y, facing, width, depth");
        std::vector<Shape> all;
        for (const auto& a : terrain) all.emplace_back(ring_of(a, "terrain"));
        auto u = units.unchecked<2>();
        for (py::ssize_t i = 0; i < units.shape(0); ++i)
            all.emplace_back(footprint({u(i, 0), u(i, 1), u(i, 2)}, u(i, 3), u(i, 4)));
        Ring here = footprint(start, width, depth);
        Sweep at(here);
        for (Shape& o : all) {
            int sign = overlap_sign(at, o);
            unsure_ = unsure_ || sign < 0;
            if (sign == 0) obstacles_.push_back(std::move(o));  // already overlapped: the route cannot worsen it
        }
    }

    // charges._sweep_clear for the hull of two footprints of the charger: 1 clear, 0 blocked, -1 undecided.
    int clear_hull(const Pose& a, const Pose& b, double width, double depth) {
        Ring from = footprint(a, width, depth), to = footprint(b, width, depth);
        Sweep s(&from, to);
        return clear(s);
    }

    // charges._sweep_clear for a wheel's swept area (|angle| <= 90: the area is convex): 1, 0 or -1 as clear_hull.
    int clear_wheel(const Pose& p, double width, double depth, double angle) {
        if (!(std::fabs(angle) <= 90.0)) throw std::invalid_argument("clear_wheel: |angle| must be <= 90 degrees");
        Ring area = wheel_swept_area(p, width, depth, angle);
        Sweep s(area);
        return clear(s);
    }

    size_t size() const { return obstacles_.size(); }

   private:
    int clear(Sweep& s) const {
        const Box& b = s.box;
        if (b.x0 < -EPS || b.y0 < -EPS || b.x1 > table_w_ + EPS || b.y1 > table_h_ + EPS) return 0;
        bool unsure = unsure_ || std::fabs(b.x0 + EPS) <= TIE_BAND || std::fabs(b.y0 + EPS) <= TIE_BAND ||
                      std::fabs(b.x1 - table_w_ - EPS) <= TIE_BAND || std::fabs(b.y1 - table_h_ - EPS) <= TIE_BAND;
        for (const Shape& o : obstacles_) {
            if (!boxes_meet(b, o.box)) continue;
            int sign = overlap_sign(s, o);
            if (sign == 1) return 0;
            unsure = unsure || sign < 0;
        }
        return unsure ? -1 : 1;
    }

    bool unsure_ = false;  // an obstacle's overlap with the start was a tie: every answer goes to the reference
    std::vector<Shape> obstacles_;
    double table_w_, table_h_;
};

// charges._Neighbours.touched outside a siege for a charger's footprint ``poly`` at an end spot: 1 and the uids it
// touches, 0 when it is no legal end of the charge move, -1 when the answer rests on a tie (a distance within
// TIE_BAND of a threshold, an overlap of about EPS), left to the reference. ``unit(i)`` is the i-th of ``n`` units
// near the charger or the charged unit; ``friends`` and ``uids`` say, for each, whether it is a friend and its uid.
template <class UnitAt>
std::pair<int, std::vector<long>> touched_at(const Ring& poly, double table_w, double table_h,
                                             const std::vector<Shape>& impassable, const Shape& target, size_t n,
                                             UnitAt unit, const std::vector<bool>& friends,
                                             const std::vector<long>& uids) {
    Box b = bounds(poly);
    if (b.x0 < -EPS || b.y0 < -EPS || b.x1 > table_w + EPS || b.y1 > table_h + EPS) return {0, {}};
    // Any later "no" stands whatever an earlier tie would have said (every tie could only have said "no" or
    // added a touched unit), so a tie is noted and the tests go on.
    bool unsure = std::fabs(b.x0 + EPS) <= TIE_BAND || std::fabs(b.y0 + EPS) <= TIE_BAND ||
                  std::fabs(b.x1 - table_w - EPS) <= TIE_BAND || std::fabs(b.y1 - table_h - EPS) <= TIE_BAND;
    Sweep here(poly);
    for (const Shape& o : impassable) {
        int sign = overlap_sign(here, o);
        if (sign == 1) return {0, {}};
        unsure = unsure || sign < 0;
    }
    int sign = overlap_sign(here, target);
    if (sign == 1) return {0, {}};
    unsure = unsure || sign < 0;
    std::vector<long> out;
    for (size_t i = 0; i < n; ++i) {
        const Shape& o = unit(i);
        double d = distance(poly, o.ring);
        if (std::fabs(d - EPS) <= TIE_BAND) {
            unsure = true;
            continue;
        }
        if (d > EPS) continue;
        if (friends[i]) return {0, {}};
        sign = overlap_sign(here, o);
        if (sign == 1) return {0, {}};
        unsure = unsure || sign < 0;
        out.push_back(uids[i]);
    }
    if (unsure) return {-1, {}};
    return {1, out};
}

// charges._Neighbours.touched outside a siege (CORE.CHARGE.MOVE): whether a charger's footprint at an end spot lies
// on the table and overlaps by more than EPS no impassable terrain, not the charged unit and no unit near the
// charger or the charged unit, touches (comes within EPS of) no friend, and which of those units it touches.
class ContactScene {
   public:
    ContactScene(const Array& units, std::vector<bool> friends, std::vector<long> uids, const Array& target,
                 const std::vector<Array>& impassable, double table_w, double table_h, double width, double depth)
        : friends_(std::move(friends)), uids_(std::move(uids)), table_w_(table_w), table_h_(table_h), width_(width),
          depth_(depth) {
        if (units.ndim() != 2 || (units.shape(0) > 0 && units.shape(1) != 5))
            throw std::invalid_argument("units: expected an (n, 5) array of x, y, facing, width, depth");
        if (friends_.size() != static_cast<size_t>(units.shape(0)) || uids_.size() != friends_.size())
            throw std::invalid_argument("friends and uids: one per unit");
        if (target.ndim() != 1 || target.shape(0) != 5)
            throw std::invalid_argument("target: expected x, y, facing, width, depth");
        auto u = units.unchecked<2>();
        for (py::ssize_t i = 0; i < units.shape(0); ++i)
            units_.emplace_back(footprint({u(i, 0), u(i, 1), u(i, 2)}, u(i, 3), u(i, 4)));
        auto t = target.unchecked<1>();
        target_.emplace_back(footprint({t(0), t(1), t(2)}, t(3), t(4)));
        for (const auto& a : impassable) impassable_.emplace_back(ring_of(a, "impassable"));
    }

    // The footprint at ``p``: 1 and the uids it touches, 0 when it is no legal end of the charge move, -1 when the
    // answer rests on a tie, left to the reference (touched_at).
    std::pair<int, std::vector<long>> touched(const Pose& p) const {
        return touched_at(footprint(p, width_, depth_), table_w_, table_h_, impassable_, target_[0], units_.size(),
                          [this](size_t k) -> const Shape& { return units_[k]; }, friends_, uids_);
    }

   private:
    std::vector<Shape> units_, target_, impassable_;
    std::vector<bool> friends_;
    std::vector<long> uids_;
    double table_w_, table_h_, width_, depth_;
};

// Tri-state answers (1 yes, 0 no, -1 undecided) combined as the Python's all() and any() of the exact answers.
int all3(int a, int b) { return (a == 0 || b == 0) ? 0 : (a < 0 || b < 0) ? -1 : 1; }
int any3(int a, int b) { return (a == 1 || b == 1) ? 1 : (a < 0 || b < 0) ? -1 : 0; }

constexpr double RAD_TO_DEG = 180.0 / PI;  // as Python's math.degrees
constexpr double MAX_FREE_WHEEL = 90.0;    // charges.MAX_FREE_WHEEL (degrees)
constexpr double WHEEL_STEP = 15.0;        // charges.WHEEL_STEP (degrees)


// charges._Spots in one call, outside a siege: for each candidate offset along the charged edge, the charger's
// end spot there (charges._Neighbours.touched, CORE.CHARGE.MOVE) and, where the spot may be a legal end, whether
// a route to it is clear (charges.route_clear: routes 1-4, CORE.CHARGE.MOVE, CORE.CHARGE.FEASIBLE,
// CORE.CHARGE.CLOSE_DOOR, CORE.CHARGE.ALIGN). Every answer is 1, 0 or -1 (undecided: a tie, or a wheel of more
// than 90 degrees, which the caller leaves to the shapely reference).
class ChargeSpots {
   public:
    struct Charger {
        long uid;
        int side;
        Pose pose;
        double width, depth, max_slide;
        bool flies;
    };

    ChargeSpots(const Table& table, const Charger& c, long target_uid, const Pose& target, double target_w,
                double target_d, const std::vector<long>& ignore, const std::vector<Array>& impassable,
                const std::vector<Array>& route_terrain, double table_w, double table_h)
        : c_(c), table_w_(table_w), table_h_(table_h), target_(footprint(target, target_w, target_d)) {
        for (const auto& a : impassable) impassable_.emplace_back(ring_of(a, "impassable"));
        for (const auto& a : route_terrain) route_terrain_.emplace_back(ring_of(a, "route terrain"));
        // charges._Neighbours: the units near the charger (0.5") or near the target (the charger's W + D), as
        // space.near measures them (half diagonals by hypot, centre distances by hypot).
        double reach = c.width + c.depth;
        double rc = 0.5 * std::hypot(c.width, c.depth), rt = 0.5 * std::hypot(target_w, target_d);
        Ring start = footprint(c.pose, c.width, c.depth);
        Sweep at(start);
        for (size_t i = 0; i < table.size(); ++i) {
            long uid = table.uids[i];
            if (uid == c.uid || uid == target_uid) continue;
            if (std::find(ignore.begin(), ignore.end(), uid) != ignore.end()) continue;
            const auto& r = table.rows[i];
            double ro = 0.5 * std::hypot(r[3], r[4]);
            if (std::hypot(r[0] - c.pose.x, r[1] - c.pose.y) <= (ro + rc) + 0.5 ||
                std::hypot(r[0] - target.x, r[1] - target.y) <= (ro + rt) + reach) {
                near_.push_back(&table.shapes[i]);
                friends_.push_back(table.sides[i] == c.side);
                uids_.push_back(uid);
            }
        }
        if (c.flies) return;
        // charges.ChargeRoute: impassable terrain for the charger, then every unit but the charger, the target and
        // ``ignore``, less those the charger's footprint already overlaps where it stands.
        std::vector<const Shape*> all;
        for (const Shape& t : route_terrain_) all.push_back(&t);
        for (size_t i = 0; i < table.size(); ++i) {
            long uid = table.uids[i];
            if (uid == c.uid || uid == target_uid) continue;
            if (std::find(ignore.begin(), ignore.end(), uid) != ignore.end()) continue;
            all.push_back(&table.shapes[i]);
        }
        for (const Shape* o : all) {
            int sign = overlap_sign(at, *o);
            route_unsure_ = route_unsure_ || sign < 0;
            if (sign == 0) obstacles_.push_back(o);
        }
    }

    // One (touched answer, uids touched, route answer) per offset: the touched answer as ContactScene.touched; the
    // route answer 1 clear, 0 blocked, -1 undecided, -2 not worked out (the spot is no legal end, or no route is
    // needed).
    std::vector<std::tuple<int, std::vector<long>, int>> answer(const std::array<double, 7>& edge,
                                                                const std::vector<double>& offsets, bool route) {
        edge_ = edge;
        std::vector<std::tuple<int, std::vector<long>, int>> out;
        double flush_facing = py_mod(std::atan2(-edge[5], -edge[4]) * RAD_TO_DEG, 360.0);
        for (double off : offsets) {
            // charges._flush_pose
            Pose p{edge[0] + edge[2] * off + edge[4] * c_.depth / 2, edge[1] + edge[3] * off + edge[5] * c_.depth / 2,
                   flush_facing};
            auto [free, uids] = touched(p);
            int clear = -2;
            if (route && free != 0) clear = c_.flies ? 1 : route_clear(p);
            out.emplace_back(free, std::move(uids), clear);
        }
        return out;
    }

   private:
    // charges._Neighbours.touched (ContactScene.touched over the near units).
    std::pair<int, std::vector<long>> touched(const Pose& p) const {
        return touched_at(footprint(p, c_.width, c_.depth), table_w_, table_h_, impassable_, target_, near_.size(),
                          [this](size_t k) -> const Shape& { return *near_[k]; }, friends_, uids_);
    }

    // RouteScene.clear on this route's obstacles.
    int clear(Sweep& s) const {
        const Box& b = s.box;
        if (b.x0 < -EPS || b.y0 < -EPS || b.x1 > table_w_ + EPS || b.y1 > table_h_ + EPS) return 0;
        bool unsure = route_unsure_ || std::fabs(b.x0 + EPS) <= TIE_BAND || std::fabs(b.y0 + EPS) <= TIE_BAND ||
                      std::fabs(b.x1 - table_w_ - EPS) <= TIE_BAND || std::fabs(b.y1 - table_h_ - EPS) <= TIE_BAND;
        for (const Shape* o : obstacles_) {
            if (!boxes_meet(b, o->box)) continue;
            int sign = overlap_sign(s, *o);
            if (sign == 1) return 0;
            unsure = unsure || sign < 0;
        }
        return unsure ? -1 : 1;
    }

    // charges.leg_clear of Hull(a, b).
    int hull(const Pose& a, const Pose& b) const {
        Ring from = footprint(a, c_.width, c_.depth), to = footprint(b, c_.width, c_.depth);
        Sweep s(&from, to);
        return clear(s);
    }

    // charges.leg_clear of Wheel(p, angle): more than 90 degrees is left to the reference.
    int wheel_leg(const Pose& p, double angle) const {
        if (!(std::fabs(angle) <= 90.0)) return -1;
        Ring area = wheel_swept_area(p, c_.width, c_.depth, angle);
        Sweep s(area);
        return clear(s);
    }

    // charges._wheel_first_clear, kept by angle.
    int wheel_first(double turn) {
        for (const auto& [angle, answer] : wheel_first_)
            if (angle == turn) return answer;
        int answer = wheel_leg(c_.pose, turn);
        wheel_first_.emplace_back(turn, answer);
        return answer;
    }

    // charges.route_clear to ``end`` (the charger does not fly).
    int route_clear(const Pose& end) {
        const Pose& start = c_.pose;
        int any = hull(start, end);  // route 1
        if (any == 1) return 1;
        double turn = py_mod(end.facing - start.facing + 180.0, 360.0) - 180.0;
        if (EPS < std::fabs(turn) && std::fabs(turn) <= MAX_FREE_WHEEL) {
            int first = wheel_first(turn);  // route 2
            if (first != 0) any = any3(any, all3(first, hull(wheel(start, c_.width, turn, c_.depth), end)));
            if (any == 1) return 1;
            Pose last = wheel_about(end, c_.width, -turn, c_.depth, turn >= 0);  // route 3
            int legs = hull(start, last);
            if (legs != 0) legs = all3(legs, wheel_leg(last, turn));
            any = any3(any, legs);
            if (any == 1) return 1;
        }
        for (const auto& [flush, ok] : contacts()) {  // route 4
            double gap = std::hypot(flush.x - end.x, flush.y - end.y), bound = c_.max_slide + EPS;
            int within = std::fabs(gap - bound) <= TIE_BAND ? -1 : gap <= bound ? 1 : 0;
            if (within == 0) continue;
            any = any3(any, all3(all3(within, ok), hull(flush, end)));
            if (any == 1) return 1;
        }
        return any;
    }

    // charges.ChargeRoute.contacts: route 4's flush poses (charges._door_contacts), each with whether its wheel,
    // move and close-the-door pivot are clear (1, 0 or -1); worked out once.
    const std::vector<std::pair<Pose, int>>& contacts() {
        if (contacts_built_) return contacts_;
        contacts_built_ = true;
        const Pose& start = c_.pose;
        double mx = edge_[0], my = edge_[1], ax = edge_[2], ay = edge_[3], ox = edge_[4], oy = edge_[5], len = edge_[6];
        double flush_facing = py_mod(std::atan2(-oy, -ox) * RAD_TO_DEG, 360.0);
        int steps = static_cast<int>(std::floor(MAX_FREE_WHEEL / WHEEL_STEP));
        std::vector<double> phis;
        for (int k = -steps; k <= steps; ++k) phis.push_back(k * WHEEL_STEP);
        std::stable_sort(phis.begin(), phis.end(), [](double a, double b) { return std::fabs(a) < std::fabs(b); });
        for (double phi : phis) {
            Pose wheeled = phi != 0.0 ? wheel(start, c_.width, phi, c_.depth) : start;
            double fx = std::cos(wheeled.facing * DEG_TO_RAD), fy = std::sin(wheeled.facing * DEG_TO_RAD);
            double closing = fx * ox + fy * oy;
            if (closing > -EPS) continue;
            Vec left = to_world(wheeled, -c_.width / 2, c_.depth / 2), right = to_world(wheeled, c_.width / 2, c_.depth / 2);
            double kl = (left.x - mx) * ox + (left.y - my) * oy, kr = (right.x - mx) * ox + (right.y - my) * oy;
            bool lead_left = !(kr < kl);  // min() keeps the first of equals: the left corner
            Vec k = lead_left ? left : right;
            double dist = -((k.x - mx) * ox + (k.y - my) * oy) / closing;
            double along = (k.x + fx * dist - mx) * ax + (k.y + fy * dist - my) * ay;
            if (dist < -EPS || std::fabs(along) > len / 2 + EPS) continue;
            Pose touch = move_straight(wheeled, std::max(0.0, dist));
            double door = py_mod(flush_facing - touch.facing + 180.0, 360.0) - 180.0;
            if (std::fabs(door) > EPS && (door > 0) != lead_left) continue;
            Pose flush = std::fabs(door) > EPS ? wheel(touch, c_.width, door, c_.depth) : touch;
            int ok = 1;
            if (phi != 0.0) ok = wheel_leg(start, phi);
            if (ok != 0) ok = all3(ok, hull(wheeled, touch));
            if (ok != 0 && std::fabs(door) > EPS) ok = all3(ok, wheel_leg(touch, door));
            if (ok != 0) contacts_.emplace_back(flush, ok);
        }
        return contacts_;
    }

    Charger c_;
    double table_w_, table_h_;
    Shape target_;
    std::vector<Shape> impassable_, route_terrain_;
    std::vector<const Shape*> near_, obstacles_;
    std::vector<bool> friends_;
    std::vector<long> uids_;
    bool route_unsure_ = false;
    std::array<double, 7> edge_{};
    std::vector<std::pair<double, int>> wheel_first_;
    std::vector<std::pair<Pose, int>> contacts_;
    bool contacts_built_ = false;
};

// Terrain classes of unit_moves: impassable, lake (impassable but to Aquatic units), difficult,
// marsh/ford (difficult but to Aquatic units), obstacle (CORE.TERRAIN.TYPES, CORE.SR.AQUATIC).
enum TerrainClass { IMPASSABLE = 0, IMPASSABLE_WATER = 1, DIFFICULT = 2, DIFFICULT_WATER = 3, OBSTACLE = 4 };


// One unit's own figures for unit_moves (movement._plan's inputs besides the table).
struct Mover {
    size_t row;
    bool over_units, skirmishers, aquatic, march_ok, war_machine;
    double half_m, m;
    long files, models;
    double x, y, facing, base_w, base_d, width, depth, face;  // face: towards the nearest enemy, NaN for none
};

// Option codes of unit_moves: kernel.OPTION_CODES gives each of actions.MOVE_OPTIONS one.
enum Code { ADVANCE = 0, ADVANCE_HALF, MARCH, BACKWARD, WHEEL_L, WHEEL_R, WHEEL_L_SHORT, WHEEL_R_SHORT, MARCH_WHEEL_L,
            MARCH_WHEEL_R, TURN_L, TURN_R, ABOUT_FACE, REFORM_WIDE, REFORM_DEEP, REFORM_FACE, N_CODES };

// ceil(a / b) for a >= 0, b >= 1, as Python's -(-a // b).
long ceil_div(long a, long b) { return (a + b - 1) / b; }

// space.footprint_at(u, pose, files): (width, depth).
std::pair<double, double> stand_dims(const Mover& u, long files) {
    if (u.war_machine) return {u.width, u.depth};
    return {static_cast<double>(std::min(files, u.models)) * u.base_w, static_cast<double>(ceil_div(u.models, files)) * u.base_d};
}

// The footprint of movement._with_files(u, files) (UnitState.width, UnitState.depth).
std::pair<double, double> shadow_dims(const Mover& u, long files) {
    double w = static_cast<double>(std::min(files, std::max(1L, u.models))) * u.base_w;
    long ranks = u.war_machine ? 1 : std::max(1L, ceil_div(u.models, std::max(1L, files)));
    return {w, static_cast<double>(ranks) * u.base_d};
}

// One mover's wheel tests by angle (45, -45, 22.5, -22.5 degrees), each (blocked, a tie) once worked out: a wheel
// and the march wheel of the same angle ask the very same question; so do the straight moves of their start.
struct WheelMemo {
    std::array<int, 4> state{-1, -1, -1, -1};  // -1 not asked yet, else blocked + 2 * tie
    int start = -1;  // the straight moves' start test (Scene::furthest_legal's start_kept)
};

// movement._plan(check_only=True) for one option code: whether it is legal. ``s`` is reset for this code.
bool code_legal(Scene& s, const Mover& u, int code, WheelMemo& wheels_asked) {
    const Pose start{u.x, u.y, u.facing};
    static const double straight[] = {1.0, 0.5, 2.0, -0.5};
    static const double wheels[] = {45.0, -45.0, 22.5, -22.5, 45.0, -45.0};
    bool is_march = code == MARCH || code == MARCH_WHEEL_L || code == MARCH_WHEEL_R;
    if (is_march && !u.march_ok) return false;
    const double m = u.m;
    if (code <= BACKWARD) {
        double d = s.furthest_legal(start, u.width, u.depth, straight[code] * m, 1.0, false, false, &wheels_asked.start);
        return !std::isnan(d) && d >= MIN_MOVE;
    }
    if (code <= MARCH_WHEEL_R) {
        double angle = wheels[code - WHEEL_L];
        if (wheel_distance(u.width, angle) > (is_march ? 2 * m : m) + EPS) return false;
        int& kept = wheels_asked.state[(code - WHEEL_L) % 4];  // march wheels share the 45-degree slots
        if (kept < 0) {  // the scene was reset for this code: its tie flag is this question's alone
            bool blocked = s.wheel_blocked(start, u.width, u.depth, angle);
            kept = static_cast<int>(blocked) + 2 * static_cast<int>(s.unsure());
        } else if (kept >= 2) {
            s.mark_unsure();
        }
        return (kept & 1) == 0;
    }
    if (code <= ABOUT_FACE) {
        double angle = code == TURN_L ? 90.0 : code == TURN_R ? -90.0 : 180.0;
        long ranks = u.war_machine ? 1 : std::max(1L, ceil_div(u.models, std::max(1L, u.files)));
        long files = code == ABOUT_FACE ? u.files : std::min(u.models, ranks);
        auto [sw, sd] = stand_dims(u, files);
        auto [mw, md] = shadow_dims(u, files);
        Pose after{u.x, u.y, norm_deg(u.facing + angle)};
        if (s.blocked_at(after, sw, sd, 2 * EPS, false)) return false;
        double d = s.furthest_legal(after, mw, md, 0.75 * m, 1.0, false, false);
        if (std::isnan(d)) d = 0.0;
        return !(d < MIN_MOVE && s.blocked_at(after, sw, sd, 1.0, false));
    }
    long files = u.files;
    double facing = u.facing;
    if (code == REFORM_WIDE) {
        files = std::min(u.models, u.files + 2);
    } else if (code == REFORM_DEEP) {
        files = std::max(1L, u.files - 2);
    } else if (code == REFORM_FACE) {
        if (std::isnan(u.face)) return false;
        facing = u.face;
        if (std::fabs(py_mod(facing - u.facing + 180.0, 360.0) - 180.0) < 1.0) return false;
    } else {
        throw std::invalid_argument("unit_moves: unknown option code " + std::to_string(code));
    }
    if (files == u.files && facing == u.facing) return false;
    auto [w, d] = stand_dims(u, files);
    return !s.blocked_at({u.x, u.y, facing}, w, d, 1.0, false);
}

// The answers of unit_moves kept per unit with everything they were worked out from (kernel.MoveMemo): a unit's
// request, its row, the table's size, and the rows (in table order) of every other unit whose box comes near
// anything its options sweep, all as exact bits; a memo also holds the terrain and forgets all when that changes.
// Units further away never enter a scene's tests (near_box, boxes_meet), so equal inputs give equal answers.
struct MoveMemo {
    std::vector<double> terrain;
    std::unordered_map<long, std::pair<std::vector<double>, std::vector<int>>> by_uid;
    long hits = 0, misses = 0;  // requests answered from the memo, and worked out
};

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// How far from its centre (inches) anything one of ``u``'s option tests builds may reach: the longest move (a march,
// 2M) plus one and a half of the longest diagonal among its footprints (a wheel sweeps within a diagonal of a front
// corner, half a diagonal from the centre), whatever the files a turn or reform gives it.
double move_reach(const Mover& u) {
    double diag = std::hypot(u.width, u.depth);
    long ranks = u.war_machine ? 1 : std::max(1L, ceil_div(u.models, std::max(1L, u.files)));
    for (long files : {u.files, std::min(u.models, ranks), std::min(u.models, u.files + 2), std::max(1L, u.files - 2)}) {
        auto [sw, sd] = stand_dims(u, files);
        auto [mw, md] = shadow_dims(u, files);
        diag = std::max(diag, std::max(std::hypot(sw, sd), std::hypot(mw, md)));
    }
    return 2.0 * std::fabs(u.m) + 1.5 * diag;
}

// The memo key of a request: its figures and option codes, the mover's row, the table's size and the neighbours.
std::vector<double> move_key(const Table& table, const Mover& u, const std::vector<int>& codes, double table_w,
                             double table_h) {
    std::vector<double> key{static_cast<double>(u.over_units), static_cast<double>(u.skirmishers),
                            static_cast<double>(u.aquatic), static_cast<double>(u.march_ok),
                            static_cast<double>(u.war_machine), u.half_m, u.m, static_cast<double>(u.files),
                            static_cast<double>(u.models), u.base_w, u.base_d, u.face, u.x, u.y, u.facing, u.width,
                            u.depth, table_w, table_h, static_cast<double>(codes.size())};
    for (int c : codes) key.push_back(static_cast<double>(c));
    // Units whose boxes lie more than 1" (the largest gap a test uses) beyond the reach square never count; 2"
    // leaves room for rounding.
    double r = move_reach(u) + 2.0;
    Box reach{u.x - r, u.y - r, u.x + r, u.y + r};
    int side = table.sides[u.row];
    for (size_t i = 0; i < table.size(); ++i) {
        if (i == u.row || !boxes_meet(reach, table.shapes[i].box)) continue;
        const auto& row = table.rows[i];
        key.insert(key.end(), row.begin(), row.end());
        key.push_back(table.sides[i] != side ? 1.0 : 0.0);
    }
    return key;
}

// All the move options of several units in one call: see kernel.unit_moves.
std::vector<std::vector<int>> unit_moves(const Table& table, const std::vector<std::pair<int, Array>>& terrain,
                                          double table_w, double table_h, const std::vector<py::tuple>& requests,
                                          MoveMemo* memo) {
    const std::vector<Shape>& all = table.shapes;
    const std::vector<int>& sides = table.sides;
    std::vector<std::pair<int, Shape>> shapes;
    for (const auto& [cls, ring] : terrain) shapes.emplace_back(cls, Shape(ring_of(ring, "terrain")));
    if (memo != nullptr) {
        std::vector<double> sig;
        for (const auto& [cls, shape] : shapes) {
            sig.push_back(static_cast<double>(cls));
            sig.push_back(static_cast<double>(shape.ring.size()));
            for (const Vec& v : shape.ring) sig.push_back(v.x), sig.push_back(v.y);
        }
        if (!same_bits(sig, memo->terrain)) {
            memo->terrain = std::move(sig);
            memo->by_uid.clear();
        }
    }
    std::vector<std::vector<int>> out;
    for (const py::tuple& req : requests) {
        if (req.size() != 13) throw std::invalid_argument("unit_moves: a request has 13 fields");
        Mover u{};
        long row = req[0].cast<long>();
        if (row < 0 || static_cast<size_t>(row) >= all.size()) throw std::invalid_argument("unit_moves: unit row out of range");
        u.row = static_cast<size_t>(row);
        u.over_units = req[1].cast<bool>(), u.skirmishers = req[2].cast<bool>(), u.aquatic = req[3].cast<bool>();
        u.half_m = req[4].cast<double>(), u.m = req[5].cast<double>(), u.march_ok = req[6].cast<bool>();
        u.files = req[7].cast<long>(), u.models = req[8].cast<long>();
        if (u.files < 1 || u.models < 1) throw std::invalid_argument("unit_moves: files and models must be at least 1");
        u.base_w = req[9].cast<double>(), u.base_d = req[10].cast<double>(), u.war_machine = req[11].cast<bool>();
        const auto& r = table.rows[u.row];
        u.x = r[0], u.y = r[1], u.facing = r[2], u.width = r[3], u.depth = r[4];
        auto codes_face = req[12].cast<std::pair<std::vector<int>, double>>();
        u.face = codes_face.second;
        std::vector<double> key;
        if (memo != nullptr) {
            key = move_key(table, u, codes_face.first, table_w, table_h);
            auto hit = memo->by_uid.find(table.uids[u.row]);
            if (hit != memo->by_uid.end() && same_bits(hit->second.first, key)) {
                out.push_back(hit->second.second);
                ++memo->hits;
                continue;
            }
        }
        std::vector<const Shape*> impassable, difficult, obstacles;
        for (const auto& [cls, shape] : shapes) {
            if (cls == IMPASSABLE || (cls == IMPASSABLE_WATER && !u.aquatic)) impassable.push_back(&shape);
            else if (cls == DIFFICULT || (cls == DIFFICULT_WATER && !u.aquatic)) difficult.push_back(&shape);
            else if (cls == OBSTACLE) obstacles.push_back(&shape);
        }
        Scene scene(all, sides, u.row, sides[u.row], impassable, difficult, obstacles, table_w, table_h, u.over_units,
                    u.skirmishers, u.half_m);
        std::vector<int> legal;
        WheelMemo wheels_asked;
        for (int code : codes_face.first) {
            scene.reset();
            bool ok = code_legal(scene, u, code, wheels_asked);
            legal.push_back(scene.unsure() ? -1 : static_cast<int>(ok));
        }
        if (memo != nullptr) {
            memo->by_uid[table.uids[u.row]] = {std::move(key), legal};
            ++memo->misses;
        }
        out.push_back(std::move(legal));
    }
    return out;
}


}  // namespace

namespace battleline {
void register_sight(py::module_& m);  // sight.cpp: CORE.GEO.LOS
}

PYBIND11_MODULE(_kernel, m) {
    m.doc() = "battleline's compiled core: convex-polygon geometry and the movement scene (see battleline.env.rules.kernel).";
    m.attr("EPS") = EPS;
    m.attr("MIN_MOVE") = MIN_MOVE;
    register_sight(m);

    m.def("footprint", [](double x, double y, double facing, double w, double d) { return array_of(footprint(pose_of(x, y, facing), w, d)); },
          py::arg("x"), py::arg("y"), py::arg("facing"), py::arg("width"), py::arg("depth"));
    m.def("wheel_pose", [](double x, double y, double facing, double w, double d, double angle) {
              Pose p = wheel(pose_of(x, y, facing), w, angle, d);
              return std::make_tuple(p.x, p.y, p.facing);
          },
          py::arg("x"), py::arg("y"), py::arg("facing"), py::arg("width"), py::arg("depth"), py::arg("angle"));
    m.def("wheel_swept_area", [](double x, double y, double facing, double w, double d, double angle) {
              return array_of(wheel_swept_area(pose_of(x, y, facing), w, d, angle));
          },
          py::arg("x"), py::arg("y"), py::arg("facing"), py::arg("width"), py::arg("depth"), py::arg("angle"));
    m.def("convex_hull", [](const Array& a) {
              if (a.ndim() != 2 || a.shape(1) != 2) throw std::invalid_argument("points: expected an (n, 2) array");
              Ring r;
              auto v = a.unchecked<2>();
              for (py::ssize_t i = 0; i < v.shape(0); ++i) r.push_back({v(i, 0), v(i, 1)});
              return array_of(convex_hull(r));
          },
          py::arg("points"));
    m.def("overlaps", [](const Array& a, const Array& b) {
              Ring ra = ring_of(a, "a"), rb = ring_of(b, "b");
              return intersects(ra, rb) && intersects(erode(ra, EPS / 2), erode(rb, EPS / 2));
          },
          py::arg("a"), py::arg("b"));
    m.def("distance", [](const Array& a, const Array& b) { return distance(ring_of(a, "a"), ring_of(b, "b")); }, py::arg("a"),
          py::arg("b"));
    m.def("footprint_distance",
          [](double x1, double y1, double f1, double w1, double d1, double x2, double y2, double f2, double w2, double d2) {
              return distance(footprint(pose_of(x1, y1, f1), w1, d1), footprint(pose_of(x2, y2, f2), w2, d2));
          },
          py::arg("x1"), py::arg("y1"), py::arg("facing1"), py::arg("width1"), py::arg("depth1"), py::arg("x2"), py::arg("y2"),
          py::arg("facing2"), py::arg("width2"), py::arg("depth2"));
    m.def("is_convex", [](const Array& a) { return is_convex(ring_of(a, "polygon")); }, py::arg("polygon"));

    py::class_<MoveMemo>(m, "MoveMemo")
        .def(py::init<>())
        .def("__len__", [](const MoveMemo& memo) { return memo.by_uid.size(); })
        .def_readonly("hits", &MoveMemo::hits)
        .def_readonly("misses", &MoveMemo::misses);
    m.def("unit_moves", &unit_moves, py::arg("table"), py::arg("terrain"), py::arg("table_w"), py::arg("table_h"),
          py::arg("requests"), py::arg("memo") = nullptr,
          "Legal move options of several units in one call (see battleline.env.rules.kernel.unit_moves).");
    m.attr("N_CODES") = static_cast<int>(N_CODES);

    py::class_<RouteScene>(m, "RouteScene")
        .def(py::init([](const Array& units, const std::vector<Array>& terrain, double table_w, double table_h, double x,
                         double y, double facing, double w, double d) {
                 return RouteScene(units, terrain, table_w, table_h, pose_of(x, y, facing), w, d);
             }),
             py::arg("units"), py::arg("terrain"), py::arg("table_w"), py::arg("table_h"), py::arg("x"), py::arg("y"),
             py::arg("facing"), py::arg("width"), py::arg("depth"))
        .def("clear_hull",
             [](RouteScene& r, double x1, double y1, double f1, double x2, double y2, double f2, double w, double d) {
                 return r.clear_hull(pose_of(x1, y1, f1), pose_of(x2, y2, f2), w, d);
             },
             py::arg("x1"), py::arg("y1"), py::arg("facing1"), py::arg("x2"), py::arg("y2"), py::arg("facing2"),
             py::arg("width"), py::arg("depth"))
        .def("clear_wheel",
             [](RouteScene& r, double x, double y, double f, double w, double d, double angle) {
                 return r.clear_wheel(pose_of(x, y, f), w, d, angle);
             },
             py::arg("x"), py::arg("y"), py::arg("facing"), py::arg("width"), py::arg("depth"), py::arg("angle"))
        .def("__len__", &RouteScene::size);

    py::class_<ContactScene>(m, "ContactScene")
        .def(py::init<const Array&, std::vector<bool>, std::vector<long>, const Array&, const std::vector<Array>&, double,
                      double, double, double>(),
             py::arg("units"), py::arg("friends"), py::arg("uids"), py::arg("target"), py::arg("impassable"),
             py::arg("table_w"), py::arg("table_h"), py::arg("width"), py::arg("depth"))
        .def("touched",
             [](const ContactScene& c, double x, double y, double facing) { return c.touched(pose_of(x, y, facing)); },
             py::arg("x"), py::arg("y"), py::arg("facing"));

    m.def("charge_spots",
          [](const Table& table, long uid, int side, double x, double y, double facing, double width, double depth,
             double max_slide, bool flies, long target_uid, double tx, double ty, double tfacing, double tw, double td,
             const std::vector<long>& ignore, const std::vector<Array>& impassable,
             const std::vector<Array>& route_terrain, double table_w, double table_h, const std::array<double, 7>& edge,
             const std::vector<double>& offsets, bool route) {
              ChargeSpots::Charger c{uid, side, pose_of(x, y, facing), width, depth, max_slide, flies};
              ChargeSpots spots(table, c, target_uid, pose_of(tx, ty, tfacing), tw, td, ignore, impassable,
                                route_terrain, table_w, table_h);
              return spots.answer(edge, offsets, route);
          },
          py::arg("table"), py::arg("uid"), py::arg("side"), py::arg("x"), py::arg("y"), py::arg("facing"),
          py::arg("width"), py::arg("depth"), py::arg("max_slide"), py::arg("flies"), py::arg("target_uid"),
          py::arg("tx"), py::arg("ty"), py::arg("tfacing"), py::arg("twidth"), py::arg("tdepth"), py::arg("ignore"),
          py::arg("impassable"), py::arg("route_terrain"), py::arg("table_w"), py::arg("table_h"), py::arg("edge"),
          py::arg("offsets"), py::arg("route"),
          "A charger's contact spots on one edge, each with its route (see battleline.env.rules.kernel.charge_spots).");

    py::class_<Table>(m, "Table")
        .def(py::init<const Array&>(), py::arg("rows"))
        .def("__len__", &Table::size);

    py::class_<Scene>(m, "Scene")
        .def(py::init<const Array&, const std::vector<Array>&, const std::vector<Array>&, const std::vector<Array>&, double,
                      double, bool, bool, bool, double>(),
             py::arg("units"), py::arg("impassable"), py::arg("difficult"), py::arg("obstacles"), py::arg("table_w"),
             py::arg("table_h"), py::arg("over_units"), py::arg("ignores_terrain"), py::arg("skirmishers"), py::arg("half_m"))
        .def(py::init<const Table&, int, const std::vector<long>&, const std::vector<Array>&, const std::vector<Array>&,
                      const std::vector<Array>&, double, double, bool, bool, bool, double>(),
             py::arg("table"), py::arg("side"), py::arg("exclude"), py::arg("impassable"), py::arg("difficult"),
             py::arg("obstacles"), py::arg("table_w"), py::arg("table_h"), py::arg("over_units"), py::arg("ignores_terrain"),
             py::arg("skirmishers"), py::arg("half_m"), py::keep_alive<1, 2>())
        .def("furthest_legal",
             [](Scene& s, double x, double y, double facing, double w, double d, double allowance, double gap, bool pass_friends,
                bool refine) -> std::optional<double> {
                 s.reset();
                 double r = s.furthest_legal(pose_of(x, y, facing), w, d, allowance, gap, pass_friends, refine);
                 if (s.unsure()) return -1.0;  // a tie: the reference decides
                 if (std::isnan(r)) return std::nullopt;
                 return r;
             },
             py::arg("x"), py::arg("y"), py::arg("facing"), py::arg("width"), py::arg("depth"), py::arg("allowance"),
             py::arg("gap") = 1.0, py::arg("pass_friends") = false, py::arg("refine") = true)
        .def("wheel_blocked",
             [](Scene& s, double x, double y, double facing, double w, double d, double angle) {
                 s.reset();
                 bool b = s.wheel_blocked(pose_of(x, y, facing), w, d, angle);
                 return s.unsure() ? -1 : static_cast<int>(b);
             },
             py::arg("x"), py::arg("y"), py::arg("facing"), py::arg("width"), py::arg("depth"), py::arg("angle"))
        .def("blocked_at",
             [](Scene& s, double x, double y, double facing, double w, double d, double gap, bool pass_friends) {
                 s.reset();
                 bool b = s.blocked_at(pose_of(x, y, facing), w, d, gap, pass_friends);
                 return s.unsure() ? -1 : static_cast<int>(b);
             },
             py::arg("x"), py::arg("y"), py::arg("facing"), py::arg("width"), py::arg("depth"), py::arg("gap") = 1.0,
             py::arg("pass_friends") = false)
        .def("terrain_cost",
             [](Scene& s, double x1, double y1, double f1, double x2, double y2, double f2, double w, double d)
                 -> std::optional<std::pair<double, double>> {
                 s.reset();
                 auto cost = s.terrain_cost_between(pose_of(x1, y1, f1), pose_of(x2, y2, f2), w, d);
                 if (s.unsure()) return std::nullopt;  // a tie: the reference decides
                 return cost;
             },
             py::arg("x1"), py::arg("y1"), py::arg("facing1"), py::arg("x2"), py::arg("y2"), py::arg("facing2"),
             py::arg("width"), py::arg("depth"))
        .def("blocked_at_many",
             [](Scene& s, const Array& poses, double w, double d, double gap, bool pass_friends) {
                 if (poses.ndim() != 2 || (poses.shape(0) > 0 && poses.shape(1) != 3))
                     throw std::invalid_argument("poses: expected an (n, 3) array of x, y, facing");
                 auto p = poses.unchecked<2>();
                 std::vector<int> out;
                 for (py::ssize_t i = 0; i < poses.shape(0); ++i) {
                     s.reset();
                     bool b = s.blocked_at(pose_of(p(i, 0), p(i, 1), p(i, 2)), w, d, gap, pass_friends);
                     out.push_back(s.unsure() ? -1 : static_cast<int>(b));
                 }
                 return out;
             },
             py::arg("poses"), py::arg("width"), py::arg("depth"), py::arg("gap") = 1.0, py::arg("pass_friends") = false);
}
