"""The charge geometry of a declaration: reach, arcs and the contact spots on the charged edge.

Rules: CORE.CHARGE.ELIGIBLE, CORE.CHARGE.FACING, CORE.GEO.UNIT_ARC, CORE.GEO.VISION_ARC, CORE.CHARGE.MOVE,
CORE.CHARGE.ALIGN, CORE.CHARGE.BLOCKED, CORE.CHARGE.MULTI_TARGET, CORE.CHARGE.FEASIBLE.

A charger ends with its front edge flush against the charged edge
(:func:`flush_pose`), at the candidate offset along it that touches the most
models, else the nearest free one (:func:`contact_placement`). A spot is
free when the charger there stays on the table, out of impassable terrain
and the castle, overlaps no unit, touches no friend and touches no enemy but
the allowed incidental targets (:class:`_Neighbours`), and a clear route
reaches it (:func:`charge_routes.route_clear`). The compiled core settles
every offset at once (:func:`kernel.charge_spots`), the shapely reference
deciding its ties; the answers are kept per arrangement of the table
(:func:`_memo`). :func:`charge_facing` gives the charged facing and
:func:`charge_reach` the declaration reach.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import operator
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
from shapely.geometry import Polygon

from battleline.env.rules import geometry as geo
from battleline.env.rules import kernel, space, special_rules
from battleline.env.rules.charge_routes import ChargeRoute, _shrink, edge_frame, route_clear
from battleline.env.rules.state import BattleState, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

CHARGE_BONUS_REACH = 6.0  # CORE.CHARGE.ELIGIBLE: within M + 6"
FLYER_CHARGE_REACH = 16.0  # CORE.CHARGE.ELIGIBLE: flyers within 16"
FAVOUR = {"front": 0, "left": 1, "right": 1, "rear": 2}


def flush_pose(t: UnitState, facing: str, c: UnitState, offset: float) -> geo.Pose:
    """The charger pose flush against edge ``facing`` of ``t``, its front midpoint ``offset``" along the edge."""
    return _flush_pose(edge_frame(t, facing), c, offset)


def _flush_pose(edge: tuple[float, float, float, float, float, float, float], c: UnitState, offset: float) -> geo.Pose:
    """:func:`flush_pose` on the edge frame ``edge`` (:func:`edge_frame`)."""
    return _flush_at(edge, c.depth, offset)


def _flush_at(edge: tuple[float, float, float, float, float, float, float], depth: float, offset: float) -> geo.Pose:
    """:func:`flush_pose` on the edge frame ``edge`` for a charger ``depth`` inches deep."""
    mx, my, ax, ay, ox, oy, _ = edge
    cx = mx + ax * offset + ox * depth / 2
    cy = my + ay * offset + oy * depth / 2
    return geo.Pose(cx, cy, math.degrees(math.atan2(-oy, -ox)) % 360.0)


def _touched(
    battle: Battle, c: UnitState, target: UnitState, p: geo.Pose, ignore: set[int], route: ChargeRoute | None = None,
) -> set[int] | None:
    """The enemy units other than ``target`` that ``c``'s footprint at ``p`` would touch, or None when the spot
    is not a legal end of the charge move (CORE.CHARGE.MOVE).

    None when the spot is off the table, in impassable terrain or the castle,
    overlaps any unit by more than EPS (the target included: a unit never
    ends inside another), touches a friendly unit, or (with ``route``) when
    no route from the charger's place to it is clear (:func:`route_clear`).
    """
    touched = _Neighbours(battle, c, target, frozenset(ignore)).touched(p)
    if touched is None or (route is not None and not route_clear(route, p)):
        return None
    return touched


class _Neighbours:
    """What :func:`_touched` tests a charger's end spots on one target against, built once for all its spots.

    The units a spot could touch are those near the charger or the target
    (:func:`space.near`, whatever the spot); their footprints go into one
    object array so that a single vectorised distance call serves a spot.
    The answers are those of testing every unit in turn.

    Args:
        battle: the battle.
        c: the charger; target: the charged unit.
        ignore: uids left out.
    """

    def __init__(self, battle: Battle, c: UnitState, target: UnitState, ignore: frozenset[int]) -> None:
        s = battle.state
        self.state, self.c, self.target = s, c, target
        self.table = (s.table_w, s.table_h)
        reach = c.width + c.depth
        others = [o for o in s.units if o.alive and o.uid != c.uid and o.uid != target.uid and o.uid not in ignore]
        xs = np.array([o.x for o in others], dtype=np.float64)
        ys = np.array([o.y for o in others], dtype=np.float64)
        radii = np.array([space.radius(o) for o in others], dtype=np.float64)
        # space.near(o, c, 0.5) or space.near(o, target, reach), term for term, for all of them at once
        close = (np.hypot(xs - c.x, ys - c.y) <= (radii + space.radius(c)) + 0.5) | (
            np.hypot(xs - target.x, ys - target.y) <= (radii + space.radius(target)) + reach)
        near = [others[i] for i in np.flatnonzero(close).tolist()]
        self.rows = [(o.x, o.y, o.facing, o.width, o.depth) for o in near]
        """The footprints (x, y, facing, width, depth) of the units near the charger or the target, as they stand
        now, in the order they are tested."""
        self.uids = [o.uid for o in near]
        self.friend = [o.side == c.side for o in near]
        self._reference: tuple[list[Polygon], Polygon, np.ndarray] | None = None
        self._cores: dict[tuple[str, int], Polygon] = {}
        """The terrain's, target's and units' polygons shrunk by EPS/2 (:func:`_shrink`), once needed."""
        self.compiled = kernel.contact_scene(s, c, target, near, self.rows)
        """The same tests in the compiled core (:func:`kernel.contact_scene`), or None."""

    @property
    def reference(self) -> tuple[list[Polygon], Polygon, np.ndarray]:
        """The shapely reference's shapes, built on first use (with the compiled core, only for a tie): the
        impassable terrain's polygons, the target's footprint and the near units' footprints (object array (n,))."""
        if self._reference is None:
            self._reference = (
                [space.terrain_poly(t) for t in space.terrain_of(self.state, space.IMPASSABLE)],
                space.footprint(self.target),
                np.array([geo.footprint(geo.Pose(x, y, f), w, d) for x, y, f, w, d in self.rows], dtype=object),
            )
        return self._reference

    def touched(self, p: geo.Pose) -> set[int] | None:
        """:func:`_touched` at pose ``p``, without the route test."""
        if self.compiled is not None:
            answer, uids = self.compiled.touched(p.x, p.y, p.facing)
            if answer >= 0:
                return set(uids) if answer else None
            # -1: a tie, which the shapely reference below decides
        return self._touched_reference(p)

    def _touched_reference(self, p: geo.Pose) -> set[int] | None:
        """:meth:`touched` by the shapely reference."""
        impassable, target_poly, polys = self.reference
        poly = space.footprint_at(self.c, p)
        if not geo.within_table(poly, *self.table):
            return None
        core: list[Polygon] = []
        for k, t in enumerate(impassable):
            if self._overlaps(poly, core, ("terrain", k), t):
                return None
        if not space.castle_end_ok(self.state, self.c, poly):  # SIEGE.SCEN.CASTLE, SIEGE.MOVE.WALLS
            return None
        if self._overlaps(poly, core, ("target", 0), target_poly):
            return None
        touched: set[int] = set()
        if len(polys):
            for i in np.flatnonzero(shapely.distance(poly, polys) <= geo.EPS).tolist():
                if self.friend[i] or self._overlaps(poly, core, ("unit", i), polys[i]):
                    return None
                touched.add(self.uids[i])
        return touched

    def _overlaps(self, poly: Polygon, core: list[Polygon], key: tuple[str, int], other: Polygon) -> bool:
        """:func:`geo.overlaps` of ``poly`` and ``other``, with ``poly`` shrunk at most once (kept in ``core``, empty
        until then) and ``other`` shrunk at most once per spot set (kept under ``key``)."""
        if not poly.intersects(other):
            return False
        if not core:
            core.append(_shrink(poly))
        if key not in self._cores:
            self._cores[key] = _shrink(other)
        return bool(shapely.intersects(core[0], self._cores[key]))


def _candidate_offsets(c: UnitState, t: UnitState, facing: str) -> tuple[list[float], float]:
    """(offsets along edge ``facing`` of ``t`` to try, preferred first; the charger's projected offset), inches.

    The preferred spot projects the charger's centre onto the edge and clamps
    it so that the most models touch (CORE.CHARGE.ALIGN); the others step
    away from it by a base width while the charger still overlaps the edge
    by at least one base.
    """
    return _offsets_on(c, edge_frame(t, facing))


def _offsets_on(c: UnitState, edge: tuple[float, float, float, float, float, float, float]) -> tuple[list[float], float]:
    """:func:`_candidate_offsets` on the edge frame ``edge`` (:func:`edge_frame`)."""
    mx, my, ax, ay, _, _, length = edge
    proj = (c.x - mx) * ax + (c.y - my) * ay
    half_gap = abs(length - c.width) / 2
    preferred = max(-half_gap, min(half_gap, proj))
    limit = (length + c.width) / 2 - min(c.base_w, length) / 2
    step = max(c.base_w, 0.25)
    candidates = [preferred]
    k = 1
    while k * step <= 2 * limit + step:
        for sign in (1, -1):
            off = preferred + sign * k * step
            if abs(off) <= limit:
                candidates.append(off)
        k += 1
    return candidates, proj


def contact_placement(
    battle: Battle, c: UnitState, t: UnitState, facing: str, ignore: set[int] | None = None,
    allowed: frozenset[int] = frozenset(), route: bool = True,
) -> tuple[geo.Pose, float, float] | None:
    """Where a charger ends in contact: (pose, overlap in inches, slide in inches), or None.

    The preferred spot projects the charger's centre onto the edge and clamps
    it so that the most models touch (CORE.CHARGE.ALIGN); blocked spots are
    replaced by the nearest free offset along the edge, even with fewer
    contacts (CORE.CHARGE.BLOCKED). A spot may touch the enemy units in
    ``allowed`` (incidental targets, CORE.CHARGE.MULTI_TARGET) but no other
    unit. A spot also needs a clear route from where ``c`` stands
    (:func:`route_clear`); ``route=False`` skips that test (a unit put in
    contact without a charge move). Returns None when no spot is free
    (CORE.CHARGE.FEASIBLE).
    """
    return _spots(battle, c, t, facing, frozenset(ignore or ()), route).placement(allowed)


def incidental_targets(battle: Battle, c: UnitState, t: UnitState, facing: str) -> frozenset[int]:
    """CORE.CHARGE.DECLARE: the enemy units that every free contact spot on ``t``'s edge ``facing`` touches.

    Empty when some free spot touches no other enemy, when no enemy is
    common to all of them, or when no spot is free.
    """
    return _spots(battle, c, t, facing, frozenset(), True).incidental()


def charge_spot(
    battle: Battle, c: UnitState, t: UnitState, facing: str
) -> tuple[tuple[geo.Pose, float, float], frozenset[int]] | None:
    """(contact placement, incidental targets) of a charge of ``c`` at ``t``'s ``facing``; None if no spot is legal.

    A spot touching no other unit needs no incidental target; otherwise the
    enemies every spot touches become incidental targets and the charge may
    end touching them (CORE.CHARGE.DECLARE, CORE.CHARGE.MULTI_TARGET).
    """
    return _spots(battle, c, t, facing, frozenset(), True).charge_spot()


def _table_key(state: BattleState) -> tuple | None:
    """All the charge geometry reads of the table: its size, terrain and every unit on it (place, formation,
    side, Large Target); None in a siege, whose castle changes in ways this does not see."""
    if state.castle:
        return None
    return (  # UnitState.alive and .has spelt out, with the same values; the terrain by its space.terrain_key number
        state.table_w, state.table_h, space.terrain_key(state),
        tuple((o.uid, o.side, o.x, o.y, o.facing, o.files, o.models, o.base_w, o.base_d, o.troop_type,
               "large_target" in o.special_rules)
              for o in state.units if o.deployed and not o.removed and o.models > 0 and o.joined_to is None),
    )


def _unit_key(u: UnitState) -> tuple:
    """All the charge geometry reads of a charger or target (it may be a forecast copy off the table)."""
    return (u.uid, u.side, u.x, u.y, u.facing, u.files, u.models, u.base_w, u.base_d, u.troop_type, u.profile.M,
            tuple(u.special_rules))


class _Memo:
    """Answers of the charge geometry for one arrangement of the table (:func:`_memo`).

    Attributes:
        key: the :func:`_table_key` they hold for.
        spots: :class:`_Spots` by (charger key, target key, facing, ignore, route).
        targets: :func:`_target_geometry_ok` by (charger key, target key).
        table: the units on the table for the compiled core (:func:`kernel.decision_table`), once asked.
    """

    __slots__ = ("key", "spots", "table", "targets")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self.spots: dict[tuple, _Spots] = {}
        self.targets: dict[tuple, bool] = {}
        self.table: Any = None

    def __reduce__(self) -> tuple[type, tuple[tuple]]:
        """A copy or pickle of the memo is an empty memo for the same table (its answers hold compiled objects,
        which neither copy nor pickle; a battle copied with its memo works them out again)."""
        return _Memo, (self.key,)

    def units_table(self, battle: Battle) -> Any:
        """:attr:`table`, made on first use: every unit's row in it is read from what :attr:`key` records of the
        unit (place, facing, files, models, bases, troop type, side, uid), so it holds while the key does."""
        if self.table is None:
            self.table = kernel.decision_table(battle)
        return self.table


_UNIT_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(UnitState))) if (
    all(f.init for f in dataclasses.fields(UnitState)) and not hasattr(UnitState, "__post_init__")) else None
"""Every field of a :class:`UnitState` in order, when each is an ``__init__`` argument and nothing else happens
there (a shallow copy is then ``UnitState(*fields)``); else None."""


def _snapshot(u: UnitState) -> UnitState:
    """A copy of ``u`` that later changes to ``u`` (its place, formation, M or rules) leave as it is."""
    snap = copy.copy(u) if _UNIT_FIELDS is None else UnitState(*_UNIT_FIELDS(u))  # copy.copy's shallow copy, faster
    snap.profile = copy.copy(u.profile)
    snap.special_rules = list(u.special_rules)
    return snap


def _memo(battle: Battle) -> _Memo | None:
    """The battle's charge memo for the table as it stands now (a fresh one if anything moved); None in a siege.

    Every answer kept depends only on what :func:`_table_key` and
    :func:`_unit_key` record, so an answer found again under the same keys
    is the one a fresh computation gives.
    """
    key = _table_key(battle.state)
    if key is None:
        return None
    memo = battle.__dict__.get("_charge_memo")
    if memo is None or memo.key != key:
        memo = _Memo(key)
        battle.__dict__["_charge_memo"] = memo
    return memo


def _spots(
    battle: Battle, c: UnitState, t: UnitState, facing: str, ignore: frozenset[int], route: bool, memo: _Memo | None = None,
) -> _Spots:
    """The :class:`_Spots` of ``c`` on ``t``'s ``facing``, from the battle's memo when the table has not changed."""
    memo = memo or _memo(battle)
    if memo is None:
        return _Spots(battle, c, t, facing, ignore, route)
    key = (_unit_key(c), _unit_key(t), facing, ignore, route)
    spots = memo.spots.get(key)
    if spots is None:
        spots = memo.spots[key] = _Spots(battle, c, t, facing, ignore, route, memo)
    return spots


class _Spots:
    """The contact spots of charger ``c`` on edge ``facing`` of ``t``: each candidate offset's :func:`_touched`.

    :func:`contact_placement`, :func:`incidental_targets` and
    :func:`charge_spot` read the same offsets (:func:`_candidate_offsets`)
    against the same units and route; this works each one out once. With
    the compiled core every offset is settled at once, as the units stand
    now (:func:`kernel.charge_spots` in one call, the shapely reference for
    its ties); else lazily, on copies of the units: the
    :class:`ChargeRoute` is built only when a spot gets as far as its route
    test, and a spot's route only when the spot is otherwise acceptable.
    Kept by :func:`_spots` while the table stays as it is.

    Args:
        battle: the battle; c: the charger; t: the charged unit.
        facing: the charged edge of ``t``.
        ignore: uids left out (of the units and of the route).
        route: whether a spot needs a clear route (:func:`route_clear`).
        memo: the battle's :func:`_memo`, whose units' table the compiled core reads; None for none.
    """

    def __init__(self, battle: Battle, c: UnitState, t: UnitState, facing: str, ignore: frozenset[int], route: bool,
                 memo: _Memo | None = None) -> None:
        self.battle, self.c, self.t, self.facing, self.ignore, self.needs_route = battle, c, t, facing, ignore, route
        self.edge = edge_frame(t, facing)
        self.offsets, self.proj = _offsets_on(c, self.edge)
        """Offsets along the edge (inches), preferred first, and the charger's projected offset."""
        self.length, self.width, self.depth = self.edge[6], c.width, c.depth
        self._poses: list[geo.Pose | None] = [None] * len(self.offsets)
        self._neighbours: _Neighbours | None = None
        self._route: ChargeRoute | None = None
        self._free: list[set[int] | None] = []
        """:func:`_touched` without the route test at ``offsets[i]``, for the first ``len`` offsets."""
        self._reachable: dict[int, bool] = {}
        """:func:`route_clear` to ``offsets[i]``, by ``i``, once asked."""
        self._placements: dict[frozenset[int], tuple[geo.Pose, float, float] | None] = {}
        self._incidental: frozenset[int] | None = None
        table = memo.units_table(battle) if memo is not None and kernel.available() else None
        native = kernel.charge_spots(battle, c, t, ignore, self.edge, self.offsets, route, table)
        if native is None:
            self.c, self.t = _snapshot(c), _snapshot(t)  # the spots are worked out later, as the units stand now
        else:
            self._settle(native)
            self.c = self.t = None  # type: ignore[assignment]  # every answer is in; nothing reads the units again

    def _settle(self, native: list[tuple[int, list[int], int]]) -> None:
        """Every offset's :meth:`free` and (where asked) :meth:`reachable` from the compiled core's answers, the
        shapely reference deciding its ties, while the units stand as they did when the answers were worked out."""
        for k, (answer, uids, clear) in enumerate(native):
            if answer >= 0:
                free = set(uids) if answer else None
            else:  # the compiled core's answer rested on a tie: the shapely reference decides
                if self._neighbours is None:
                    self._neighbours = _Neighbours(self.battle, self.c, self.t, self.ignore)
                free = self._neighbours._touched_reference(self.pose(k))
            self._free.append(free)
            if self.needs_route and free is not None:
                # undecided (a tie) or not worked out: route_clear, whose legs the core answers where it can
                self._reachable[k] = bool(clear) if clear >= 0 else route_clear(self.route, self.pose(k))

    def pose(self, i: int) -> geo.Pose:
        """The charger's flush pose at ``offsets[i]``; worked out once."""
        p = self._poses[i]
        if p is None:
            p = self._poses[i] = _flush_at(self.edge, self.depth, self.offsets[i])
        return p

    def free(self, i: int) -> set[int] | None:
        """:func:`_touched` at ``offsets[i]`` without the route test; worked out once."""
        while len(self._free) <= i:
            if self._neighbours is None:
                self._neighbours = _Neighbours(self.battle, self.c, self.t, self.ignore)
            self._free.append(self._neighbours.touched(self.pose(len(self._free))))
        return self._free[i]

    def reachable(self, i: int) -> bool:
        """Whether a route to ``offsets[i]`` is clear (:func:`route_clear`; True when no route is needed)."""
        if not self.needs_route:
            return True
        if i not in self._reachable:
            self._reachable[i] = route_clear(self.route, self.pose(i))
        return self._reachable[i]

    def touched(self, i: int) -> set[int] | None:
        """:func:`_touched` at ``offsets[i]``, the route tested if :attr:`needs_route`."""
        free = self.free(i)
        return free if free is not None and self.reachable(i) else None

    @property
    def route(self) -> ChargeRoute:
        """The charge route, built on first use."""
        if self._route is None:
            self._route = ChargeRoute(self.battle, self.c, self.t, self.facing, self.ignore)
        return self._route

    def placement(self, allowed: frozenset[int]) -> tuple[geo.Pose, float, float] | None:
        """:func:`contact_placement` with ``allowed`` incidental targets."""
        if allowed not in self._placements:
            self._placements[allowed] = self._place(allowed)
        return self._placements[allowed]

    def _place(self, allowed: frozenset[int]) -> tuple[geo.Pose, float, float] | None:
        width, length = self.width, self.length
        for i, off in enumerate(self.offsets):
            touched = self.free(i)  # the route last: a spot touching others than ``allowed`` needs none
            if touched is not None and touched <= allowed and self.reachable(i):
                overlap = min(off + width / 2, length / 2) - max(off - width / 2, -length / 2)
                return self.pose(i), max(0.0, overlap), abs(off - self.proj)
        return None

    def charge_spot(self) -> tuple[tuple[geo.Pose, float, float], frozenset[int]] | None:
        """:func:`charge_spot`: the placement touching no other unit, else the one allowed the incidental targets."""
        placed = self.placement(frozenset())
        if placed is not None:
            return placed, frozenset()
        incidental = self.incidental()
        if incidental:
            placed = self.placement(incidental)
            if placed is not None:
                return placed, incidental
        return None

    def incidental(self) -> frozenset[int]:
        """:func:`incidental_targets` (the route always tested)."""
        if self._incidental is None:
            common: set[int] | None = None
            for i in range(len(self.offsets)):
                touched = self.touched(i)
                if touched is None:
                    continue
                common = touched if common is None else common & touched
                if not common:
                    break
            self._incidental = frozenset(common or ())
        return self._incidental


def charge_facing(battle: Battle, c: UnitState, t: UnitState, roll: bool) -> str | None:
    """The facing of ``t`` that ``c`` charges (CORE.GEO.UNIT_ARC, CORE.CHARGE.FACING).

    Ties between arcs are settled by a D6 when ``roll`` is True (1–3 the least
    favourable arc for the charger, 4–6 the most favourable); when False the
    least favourable is returned. None if no front-rank model lies in any arc.
    """
    if t.has("skirmishers"):
        return "front"  # CORE.TYPE.SKIRMISHERS: always charged in the front
    found = _arcs(t.x, t.y, t.facing, t.width, t.depth, c.x, c.y, c.facing, c.files, c.models, c.base_w, c.base_d)
    if found is None:  # every front-rank model inside the target: no arc
        return None
    arcs = list(found)
    if roll:
        battle.emit("CORE.GEO.ARCS", unit=c.uid, target=t.uid, arcs=arcs)
    if not arcs:
        return None
    if len(arcs) == 1 or not roll:
        return arcs[0]
    face = battle.dice.d6("CORE.GEO.UNIT_ARC")[0]
    ordered = sorted(arcs, key=lambda a: FAVOUR[a])
    chosen = ordered[0] if face <= 3 else ordered[-1]
    battle.emit("CORE.GEO.UNIT_ARC", unit=c.uid, target=t.uid, tied=arcs, roll=face, arc=chosen)
    return chosen


@lru_cache(maxsize=16384)
def _arcs(tx: float, ty: float, tf: float, tw: float, td: float, cx: float, cy: float, cf: float, files: int,
          models: int, base_w: float, base_d: float) -> tuple[str, ...] | None:
    """The arcs of a target (pose, footprint W x D) holding the most of a charger's front-rank centres (pose,
    files, models, base), 'inside' left out (:func:`geo.unit_arc`, CORE.GEO.UNIT_ARC); None when every centre is
    inside the target. Inches and degrees; kept by value (the answer is a function of these numbers alone)."""
    try:
        arcs = geo.unit_arc(geo.Pose(tx, ty, tf), tw, td, geo.front_rank_centres(geo.Pose(cx, cy, cf), files, models,
                                                                                 base_w, base_d))
    except ValueError:
        return None
    return tuple(a for a in arcs if a != "inside")


@lru_cache(maxsize=16384)
def _reach_and_arc(cx: float, cy: float, cf: float, cw: float, cd: float, tx: float, ty: float, tf: float, tw: float,
                   td: float, reach: float) -> bool:
    """Whether a target's footprint (pose, W x D) lies within ``reach`` inches of a charger's and partly in its
    front arc (CORE.CHARGE.ELIGIBLE, CORE.GEO.VISION_ARC: :func:`geo.distance`, :func:`geo.partly_in_vision_arc`).
    Inches and degrees; kept by value (the answer is a function of these numbers alone)."""
    tt = space._footprint(tx, ty, tf, tw, td)  # space.footprint's own cache of footprints by value
    if geo.distance(space._footprint(cx, cy, cf, cw, cd), tt) > reach:
        return False
    return geo.partly_in_vision_arc(geo.Pose(cx, cy, cf), cw, cd, tt)  # its corners decide first, without shapely


def charge_reach(c: UnitState) -> float:
    """The longest distance ``c`` may declare a charge at: M + 6", flyers 16" (CORE.CHARGE.ELIGIBLE)."""
    return FLYER_CHARGE_REACH if special_rules.flyer(c) else c.profile.M + CHARGE_BONUS_REACH
