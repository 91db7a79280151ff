"""The compiled core's Python face: movement scenes answered in C++ (DESIGN: the compiled core).

:class:`space.Surroundings` answers "may this unit end here, having swept
there?" (CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE, CORE.TERRAIN.COST) with
shapely polygons. The extension ``battleline.env.rules._kernel`` (C++,
pybind11, sources in env/rules/native/) answers the same questions over
convex polygons, term for term as the reference does, thousands of times
faster per question. :func:`scene` builds one for a moving unit, or returns
None where only the reference applies:

* in a siege (the castle's walls, gates and wall-top end checks are Python);
* with a terrain feature that is not convex;
* when the extension is not built, or ``BATTLELINE_KERNEL=reference`` is set
  in the environment (the reference is then used everywhere; the differential
  tests and ``benchmarks.kernel_fuzz`` compare the two).

:func:`line_of_sight` answers CORE.GEO.LOS as ``geometry.has_los`` does (native
sources in env/rules/native/sight.cpp), or returns None for the few questions
whose answer rests on what it does not reproduce (the reference then answers).
:func:`route_scene` and :func:`contact_scene` answer a charge's route and its
end spots (CORE.CHARGE.MOVE) as ``charges.ChargeRoute`` and
``charges._Neighbours`` do with shapely, ties left to them.

Lengths are inches, angles degrees, as everywhere in the engine.
"""

from __future__ import annotations

import os
import warnings
import weakref
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from battleline.env.rules import special_rules
from battleline.env.rules.space import DIFFICULT, IMPASSABLE, OBSTACLES, WATER

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import BattleState, TerrainFeature, UnitState

try:
    from battleline.env.rules import _kernel as native
except ImportError:  # not built: the shapely reference answers everything
    native = None  # type: ignore[assignment]
    if (Path(__file__).parent / "native").is_dir():  # a source checkout whose core was never built
        warnings.warn("battleline's compiled core is not built (pip install -e . builds it); the shapely reference "
                      "answers every question, several times slower", RuntimeWarning, stacklevel=2)

TIE_BAND = 1e-9
"""Inches: a distance this near a rule's threshold is a tie the compiled core leaves to the reference."""

ENV_SWITCH = "BATTLELINE_KERNEL"
"""Environment variable: ``reference`` switches the compiled core off."""


SWITCH_VALUES = ("native", "reference")
"""What ``BATTLELINE_KERNEL`` may say (unset: native)."""



_SWITCHED_ON: dict[Any, bool] = {}
"""Whether each raw value of ``BATTLELINE_KERNEL`` seen so far (None: unset) switches the core on; only the allowed
values are kept, so a bad one is refused every time it is read."""


def available() -> bool:
    """Whether the compiled core is built and switched on (``BATTLELINE_KERNEL`` unset or ``native``).

    Asked several times per decision: the variable is read each time (a change at run time is seen at once) and
    its value looked up among the values already checked.

    Raises:
        ConfigError: ``BATTLELINE_KERNEL`` says anything but ``native`` or ``reference``.
    """
    raw = os.environ.get(ENV_SWITCH)
    on = _SWITCHED_ON.get(raw)
    if on is not None:
        return native is not None and on
    mode = "native" if raw is None else raw
    if mode not in SWITCH_VALUES:
        from battleline.env.rules.config import ConfigError

        raise ConfigError(f"environment variable {ENV_SWITCH}: {mode!r} is not one of {', '.join(SWITCH_VALUES)}")
    _SWITCHED_ON[raw] = mode == "native"
    return native is not None and mode == "native"


@lru_cache(maxsize=512)
def _ring(points: tuple[tuple[float, float], ...]) -> tuple[np.ndarray, bool]:
    arr = np.array(points, dtype=np.float64)
    return arr, bool(native.is_convex(arr))


_BY_FEATURE: dict[int, tuple[TerrainFeature, list, tuple[np.ndarray, bool]]] = {}
"""A feature's ring and convexity by id(feature), with the feature and a copy of its outline (the id stays the
feature's while it is held; a changed outline is seen). Cleared when it grows past 4096 entries."""


def _terrain(t: TerrainFeature) -> tuple[np.ndarray, bool]:
    """The feature's outline as a float64 (k, 2) ring and whether it is convex (cached)."""
    hit = _BY_FEATURE.get(id(t))
    if hit is not None and hit[0] is t and hit[1] == t.polygon:
        return hit[2]
    answer = _ring(tuple((float(p[0]), float(p[1])) for p in t.polygon))
    if len(_BY_FEATURE) > 4096:
        _BY_FEATURE.clear()
    _BY_FEATURE[id(t)] = (t, list(t.polygon), answer)
    return answer


def _convex_rings(state: BattleState, kinds: frozenset[str]) -> list[np.ndarray] | None:
    """The rings (float64, (k, 2), inches) of the terrain features of ``kinds``; None if one is not convex
    (the reference then answers)."""
    rings = []
    for t in state.terrain:
        if t.kind in kinds:
            ring, convex = _terrain(t)
            if not convex:
                return None
            rings.append(ring)
    return rings


def table_of(state: BattleState) -> Any:
    """The units on the table as a compiled :class:`_kernel.Table`: their footprints, built once for every scene of a
    decision (rows x, y, facing, width, depth, side, uid, in ``state.units`` order)."""
    flat: list[float] = []
    add = flat.extend
    for o in state.units:  # UnitState.alive, .width and .depth read from the fields, with the same values
        n = o.models
        if n < 1 or not o.deployed or o.removed or o.joined_to is not None:
            continue
        f = o.files
        if o.troop_type == "war_machine":
            depth = o.base_d
        else:
            r = -(-n // (f if f > 1 else 1))
            depth = (r if r > 1 else 1) * o.base_d
        add((o.x, o.y, o.facing, (f if f <= n else n) * o.base_w, depth, float(o.side), float(o.uid)))
    return native.Table(np.array(flat, dtype=np.float64).reshape(len(flat) // 7, 7))


def decision_table(battle: Battle) -> Any:
    """:func:`table_of` the battle's state, kept while the battle works out one decision's legal actions (the state
    does not change then; :meth:`Battle.legal_actions` opens and closes that window), built afresh otherwise."""
    kept = battle.__dict__.get("_kernel_table")
    if kept is not None:
        return kept
    table = table_of(battle.state)
    if battle.__dict__.get("_deciding"):
        battle._kernel_table = table
    return table


_DECIDED: weakref.WeakKeyDictionary[Battle, tuple[list, Any]] = weakref.WeakKeyDictionary()
"""Each battle's :func:`decision_table` of its last worked-out decision, with the legal list it was worked out for
(kept beside the battle rather than on it, so that a battle stays picklable)."""


def keep_decided(battle: Battle, legal: list, table: Any | None) -> None:
    """Keep ``table`` (the :func:`decision_table` the battle's decision ``legal`` was worked out with; None for
    none) until the battle works out another decision."""
    if table is None:
        _DECIDED.pop(battle, None)
    else:
        _DECIDED[battle] = (legal, table)


def decided_table(battle: Battle, legal: list) -> Any | None:
    """The table :func:`keep_decided` kept with ``legal``, the battle's current legal list, else None.

    Every change to the battle replaces its legal list (:meth:`Battle.apply` and every stage change reset it), so
    while ``legal`` is still the one the table was kept with, the units stand as the table has them.
    """
    kept = _DECIDED.get(battle)
    return kept[1] if kept is not None and kept[0] is legal else None


_SCENE_KINDS = {False: (IMPASSABLE, DIFFICULT), True: (IMPASSABLE - WATER, DIFFICULT - WATER)}
"""The terrain kinds impassable and difficult to a unit, by whether it is Aquatic (CORE.SR.AQUATIC: water is open)."""


def scene(state: BattleState, u: UnitState, exclude: frozenset[int] = frozenset(), table: Any = None) -> Any | None:
    """What ``u`` must keep clear of, as a compiled :class:`_kernel.Scene`; None where only the reference applies.

    The scene holds the footprints of every unit on the table but ``u`` and
    ``exclude`` (from ``table``, a :func:`decision_table`, when given; else
    from an (n, 6) float64 array: x, y, facing, width, depth, enemy),
    the impassable, difficult and obstacle terrain for ``u`` (water is open to
    Aquatic units, CORE.SR.AQUATIC), and ``u``'s own exemptions (CORE.MOVE.FLY,
    CORE.SR.ETHEREAL, CORE.TYPE.SKIRMISHERS), exactly as
    :class:`space.Surroundings` does. Methods: ``furthest_legal`` (-1.0 when
    undecided), ``wheel_blocked``, ``blocked_at`` and ``blocked_at_many`` (1
    blocked, 0 free, -1 undecided), ``terrain_cost`` ((multiplier, extra inches),
    None when undecided). Undecided: the answer
    rested on a tie (an overlap of exactly EPS, or a distance within 1e-9 inch of
    the rule's threshold), which the caller leaves to the shapely reference.
    """
    if state.castle or not available():
        return None
    impassable_kinds, difficult_kinds = _SCENE_KINDS[u.has("aquatic")]
    impassable, difficult, obstacles = [], [], []
    for t in state.terrain:
        bucket = impassable if t.kind in impassable_kinds else difficult if t.kind in difficult_kinds else (
            obstacles if t.kind in OBSTACLES else None)
        if bucket is None:
            continue
        ring, convex = _terrain(t)
        if not convex:
            return None
        bucket.append(ring)
    moves_over = special_rules.moves_over_units(u)
    flags = (float(state.table_w), float(state.table_h), moves_over, moves_over, u.has("skirmishers"), u.profile.M / 2.0)
    if table is not None:  # a decision's table (:func:`decision_table`)
        return native.Scene(table, u.side, [u.uid, *exclude], impassable, difficult, obstacles, *flags)
    rows = [(o.x, o.y, o.facing, o.width, o.depth, float(o.side != u.side))
            for o in state.units if o.alive and o.uid != u.uid and o.uid not in exclude]
    units = np.array(rows, dtype=np.float64).reshape(len(rows), 6)
    return native.Scene(units, impassable, difficult, obstacles, *flags)


_TERRAIN_CLASS = {
    **{k: 0 for k in IMPASSABLE - WATER},  # impassable to all
    **{k: 1 for k in IMPASSABLE & WATER},  # lake: impassable but to Aquatic units (CORE.SR.AQUATIC)
    **{k: 2 for k in DIFFICULT - WATER},
    **{k: 3 for k in DIFFICULT & WATER},  # marsh, ford: difficult but to Aquatic units
    **{k: 4 for k in OBSTACLES},
}


def terrain_table(state: BattleState) -> list[tuple[int, np.ndarray]] | None:
    """The terrain the move options read, as (class, (k, 2) ring) pairs; None if a feature is not convex.

    Classes: 0 impassable, 1 lake, 2 difficult, 3 marsh or ford, 4 obstacle
    (CORE.TERRAIN.TYPES); hills and open kinds are left out.
    """
    out = []
    for t in state.terrain:
        cls = _TERRAIN_CLASS.get(t.kind)
        if cls is None:
            continue
        ring, convex = _terrain(t)
        if not convex:
            return None
        out.append((cls, ring))
    return out


OPTION_CODES = {name: code for code, name in enumerate((
    "advance", "advance_half", "march", "backward", "wheel_left", "wheel_right", "wheel_left_short", "wheel_right_short",
    "march_wheel_left", "march_wheel_right", "turn_left", "turn_right", "about_face", "reform_wide", "reform_deep",
    "reform_face"))}
"""The compiled core's code of each move option (actions.MOVE_OPTIONS)."""


def move_memo(battle: Battle) -> Any:
    """The battle's :class:`_kernel.MoveMemo` for :func:`unit_moves` (made on first use; kept beside the battle, not
    on it, so that a battle stays picklable and a clone starts with none of its own)."""
    memo = _MOVE_MEMOS.get(battle)
    if memo is None:
        memo = _MOVE_MEMOS[battle] = native.MoveMemo()
    return memo


_MOVE_MEMOS: weakref.WeakKeyDictionary[Battle, Any] = weakref.WeakKeyDictionary()
"""Each battle's :func:`move_memo`."""


def unit_moves(table: np.ndarray, terrain: list[tuple[int, np.ndarray]], table_w: float, table_h: float,
               requests: list[tuple], memo: Any = None) -> list[list[bool]]:
    """Which move options of several units are legal, decided in one native call as ``movement._plan`` decides them.

    Args:
        table: :func:`table_of` (or :func:`decision_table`) the units on the table.
        terrain: :func:`terrain_table`.
        table_w, table_h: the table in inches.
        requests: one per moving unit, a 13-tuple: (row in ``table``, moves over units (CORE.MOVE.FLY,
            CORE.SR.ETHEREAL), skirmishers (CORE.TYPE.SKIRMISHERS), aquatic (CORE.SR.AQUATIC), M/2, the normal
            move allowance in inches, may march (CORE.MOVE.MARCH), files, models, base width, base depth,
            war machine, (option codes (:data:`OPTION_CODES`), facing towards the nearest enemy in degrees or
            NaN for none)).
        memo: a :func:`move_memo`, or None. A unit whose request, row, table size, terrain and neighbours (the rows,
            in table order, of every unit whose box comes within reach of anything its options test) are those of
            its last answer in the memo gets that answer again, bit for bit the same inputs, so the same answer.

    Returns:
        One list per request, one int per option code asked: 1 legal, 0 not (CORE.MOVE.ONE_INCH,
        CORE.MOVE.TABLE_EDGE, CORE.TERRAIN.COST, CORE.MOVE.WHEEL, CORE.MOVE.TURN, CORE.MOVE.REFORM), -1
        undecided: the answer rested on a tie (an overlap of exactly EPS, or a distance within 1e-9 inch of
        the rule's threshold) and the caller asks the shapely reference.

    Raises:
        ValueError: a malformed table, ring, request or option code.
    """
    return native.unit_moves(table, terrain, table_w, table_h, requests, memo)


def _rings(polys: Sequence[shapely.Geometry]) -> tuple[np.ndarray, np.ndarray]:
    """The polygons' stacked coordinates (float64, (k, 2)) and ring sizes (int64); kept for a tuple (immutable, as
    its shapely polygons are) while it is held, the tuple :func:`space._sight_terrain` keeps per terrain."""
    if type(polys) is not tuple:
        return _rings_of(polys)
    hit = _RINGS_KEPT.get(id(polys))
    if hit is not None and hit[0] is polys:
        return hit[1]
    if len(_RINGS_KEPT) >= 256:
        _RINGS_KEPT.clear()
    rings = _rings_of(polys)
    _RINGS_KEPT[id(polys)] = (polys, rings)
    return rings


_RINGS_KEPT: dict[int, tuple[tuple, tuple[np.ndarray, np.ndarray]]] = {}
""":func:`_rings` by id(tuple), with the tuple (held, so that its id is not reused while kept)."""


def _rings_of(polys: Sequence[shapely.Geometry]) -> tuple[np.ndarray, np.ndarray]:
    if not polys:
        return np.empty((0, 2), dtype=np.float64), np.empty(0, dtype=np.int64)
    return shapely.get_coordinates(polys), shapely.get_num_coordinates(polys).astype(np.int64)


def line_of_sight(viewer: tuple[float, ...], target: tuple[float, ...], units: Sequence[tuple[float, ...]],
                  blocking: Sequence[shapely.Geometry], woods: Sequence[shapely.Geometry]) -> bool | None:
    """CORE.GEO.LOS decided by the compiled core as ``geometry.has_los`` decides it; None where only the reference applies.

    Args:
        viewer, target: footprints as (x, y, facing, width, depth), inches and degrees.
        units: the footprints of the third units that may block, each as ``viewer``.
        blocking: blocking features' polygons.
        woods: woods polygons, as given to ``geometry.has_los``.

    Returns:
        Whether ``viewer`` sees ``target``; None when the answer is left to the reference: the core is off,
        blockers hit come within about EPS of one another and a sight line runs between them, a polygon in
        play is not convex, or a distance lies within a micro-inch of a threshold the reference rounds
        differently.
    """
    if not available():
        return None
    return switched_on_line_of_sight(viewer, target, units, blocking, woods)


def switched_on_line_of_sight(viewer: tuple[float, ...], target: tuple[float, ...], units: Sequence[tuple[float, ...]],
                              blocking: Sequence[shapely.Geometry], woods: Sequence[shapely.Geometry]) -> bool | None:
    """:func:`line_of_sight` for a caller that has just found the core :func:`available` (``space.sight_scan`` reads
    it once for many questions): the same answer, without reading ``BATTLELINE_KERNEL`` again. Arguments and
    result as :func:`line_of_sight`'s (None: undecided, the reference answers)."""
    table = np.array(units, dtype=np.float64).reshape(len(units), 5)
    seen = native.line_of_sight(*viewer, *target, table, *_rings(blocking), *_rings(woods))
    return None if seen < 0 else bool(seen)


def contact_scene(state: BattleState, c: UnitState, target: UnitState, near: Sequence[UnitState],
                  rows: Sequence[tuple[float, float, float, float, float]] | None = None) -> Any | None:
    """The end-spot test of a charge (charges._Neighbours) as a compiled :class:`_kernel.ContactScene`; None where only
    the reference applies (a siege, non-convex impassable terrain, the core off).

    Args:
        state: the battle state (its table and impassable terrain: every impassable kind, water too).
        c: the charger (its footprint's width and depth).
        target: the charged unit.
        near: the units a spot may touch, in the order they are tested.
        rows: their footprints as (x, y, facing, width, depth), inches and degrees, when the caller has them
            already (the same values as the units' own).

    The scene's ``touched(x, y, facing)`` gives (1, uids touched), (0, []) for no legal end of the charge move
    (CORE.CHARGE.MOVE), or (-1, []) where the answer rests on a tie, which the caller leaves to the reference.
    """
    if state.castle or not available():
        return None
    rings = _convex_rings(state, IMPASSABLE)
    if rings is None:
        return None
    if rows is None:
        rows = [(o.x, o.y, o.facing, o.width, o.depth) for o in near]
    units = np.array(rows, dtype=np.float64).reshape(len(rows), 5)
    spot = np.array([target.x, target.y, target.facing, target.width, target.depth], dtype=np.float64)
    return native.ContactScene(units, [o.side == c.side for o in near], [o.uid for o in near], spot, rings,
                               float(state.table_w), float(state.table_h), c.width, c.depth)


def route_scene(state: BattleState, c: UnitState, exclude: frozenset[int]) -> tuple[Any, np.ndarray] | None:
    """A charge route's obstacles (charges.ChargeRoute) as a compiled :class:`_kernel.RouteScene`, with the units'
    table it was built from (float64, (n, 5): x, y, facing, width, depth); None where only the reference applies
    (a siege, non-convex impassable terrain, the core off).

    The obstacles are impassable terrain (water not for Aquatic units, CORE.SR.AQUATIC) and every unit on the table
    but ``c`` and ``exclude``, less those ``c``'s footprint already overlaps (CORE.CHARGE.MOVE).
    """
    if state.castle or not available():
        return None
    kinds = IMPASSABLE - (WATER if c.has("aquatic") else frozenset())
    rings = _convex_rings(state, kinds)
    if rings is None:
        return None
    rows = [(o.x, o.y, o.facing, o.width, o.depth) for o in state.units if o.alive and o.uid != c.uid and o.uid not in exclude]
    table = np.array(rows, dtype=np.float64).reshape(len(rows), 5)
    return native.RouteScene(table, rings, float(state.table_w), float(state.table_h), c.x, c.y, c.facing, c.width,
                             c.depth), table


def charge_spots(battle: Battle, c: UnitState, t: UnitState, ignore: frozenset[int],
                 edge: tuple[float, float, float, float, float, float, float], offsets: Sequence[float],
                 route: bool, table: Any = None) -> list[tuple[int, list[int], int]] | None:
    """A charger's contact spots on one edge of its target, each with its route, in one native call
    (charges._Spots); None where only the reference applies (a siege, non-convex impassable terrain, the core off).

    Args:
        battle: the battle (its :func:`decision_table` gives the units on the table).
        c: the charger (its place, footprint, side, M (the 2×M align slide, CORE.CHARGE.ALIGN) and whether it
            flies over units, CORE.MOVE.FLY, CORE.SR.ETHEREAL); t: the charged unit. Either may be a copy.
        ignore: uids left out of the units a spot may touch and of the route's obstacles.
        edge: the charged edge (mid_x, mid_y, along_x, along_y, out_x, out_y, length), see charges.edge_frame.
        offsets: the offsets along it to try (inches), see charges._candidate_offsets.
        route: whether to work out the routes.
        table: the units on the table as :func:`table_of` has them now, when the caller keeps one (else
            :func:`decision_table`).

    Returns:
        One (touched, uids, route) per offset: ``touched`` and ``uids`` as :func:`contact_scene`'s ``touched``
        (1 and the uids touched, 0 for no legal end of the charge move, -1 undecided); ``route`` as
        charges.route_clear (1 clear, 0 blocked, -1 undecided, -2 not worked out: the spot is no legal end or
        ``route`` is False). Undecided answers rest on a tie (or a close-the-door pivot of more than 90°) and
        are left to the shapely reference.
    """
    state = battle.state
    if state.castle or not available():
        return None
    rings = _convex_rings(state, IMPASSABLE)
    if rings is None:
        return None
    if c.has("aquatic"):
        route_rings = _convex_rings(state, IMPASSABLE - WATER)
        if route_rings is None:
            return None
    else:
        route_rings = rings
    return native.charge_spots(
        decision_table(battle) if table is None else table, c.uid, c.side, c.x, c.y, c.facing, c.width, c.depth, 2.0 * c.profile.M,
        special_rules.moves_over_units(c), t.uid, t.x, t.y, t.facing, t.width, t.depth, list(ignore), rings,
        route_rings, float(state.table_w), float(state.table_h), edge, list(offsets), route)
