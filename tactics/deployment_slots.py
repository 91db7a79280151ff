"""Slot choice: a template's target turned into a legal deployment slot that leaves every other unit room.

:func:`choose_slot` ranks a unit's legal slots of ``env.rules.deployment``
by :func:`slot_cost` to its :class:`~battleline.tactics.deployment_plan.SlotTarget`
(inches, rows weighted by :data:`ROW_WEIGHT`) and takes the first one after
which a bounded backtracking search (:data:`SEARCH_BUDGET` placements) still
finds footprints at least 1" apart (CORE.MOVE.ONE_INCH) for the units yet to
deploy.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from battleline.env.rules.deployment import COLUMNS, ROWS, slot_pose
from battleline.env.rules.geometry import EPS
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment_plan import FRONT, SlotTarget

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ROW_WEIGHT = 2.0
"""Slot cost of one inch of row difference, relative to one inch sideways (prefer shifting a column)."""


# ----------------------------------------------------------------------------- slots
def slot_cost(slot: int, target: SlotTarget) -> float:
    """Inches between a slot and a target (row differences weighted by :data:`ROW_WEIGHT`)."""
    row, col = divmod(slot, len(COLUMNS))
    return abs(COLUMNS[col] - target.x) + ROW_WEIGHT * abs(ROWS[row] - ROWS[target.row])


Rect = tuple[float, float, float, float]
"""An axis-aligned footprint: (min x, min y, max x, max y), inches."""

SEARCH_BUDGET = 2000
"""Placements tried when checking that the other units still fit; past it the check gives up (and trusts the slot)."""


def slot_rect(battle: Battle, u: UnitState, slot: int) -> Rect:
    """The footprint ``u`` would have in ``slot`` (deployment poses face straight ahead, so it is axis-aligned).

    Outside a siege the rectangle is kept per (side, footprint width and depth, slot, table size), all
    :func:`env.rules.deployment.slot_pose` reads there.
    """
    s = battle.state
    if s.castle:
        return _slot_rect(battle, u, slot)
    key = (u.side, u.width, u.depth, slot, s.table_w, s.table_h)
    rect = _SLOT_RECTS.get(key)
    if rect is None:
        if len(_SLOT_RECTS) >= SLOT_MEMO_SIZE:
            _SLOT_RECTS.clear()
        rect = _SLOT_RECTS[key] = _slot_rect(battle, u, slot)
    return rect


SLOT_MEMO_SIZE = 16384
"""Most slot rectangles :func:`slot_rect` keeps (then it starts afresh)."""
_SLOT_RECTS: dict[tuple, Rect] = {}


def _slot_rect(battle: Battle, u: UnitState, slot: int) -> Rect:
    """:func:`slot_rect` worked out afresh."""
    p = slot_pose(battle, u, slot)
    return (p.x - u.width / 2, p.y - u.depth / 2, p.x + u.width / 2, p.y + u.depth / 2)


def too_close(a: Rect, b: Rect, gap: float = 1.0) -> bool:
    """Whether two axis-aligned footprints are less than ``gap`` inches apart (CORE.MOVE.ONE_INCH)."""
    dx = max(0.0, max(a[0], b[0]) - min(a[2], b[2]))
    dy = max(0.0, max(a[1], b[1]) - min(a[3], b[3]))
    return dx * dx + dy * dy < (gap - EPS) ** 2


def _all_fit(placed: list[Rect], options: Sequence[Iterable[Rect]], budget: list[int]) -> bool:
    """Backtracking: can each remaining unit (its options best first) get a footprint clear of the others?"""
    if not options:
        return True
    first, rest = options[0], options[1:]
    for rect in first:
        budget[0] -= 1
        if budget[0] < 0:
            return True
        if not any(too_close(rect, other) for other in placed) and _all_fit(placed + [rect], rest, budget):
            return True
    return False


def choose_slot(battle: Battle, uid: int, legal: dict[int, list[int]], targets: dict[int, SlotTarget]) -> int:
    """The slot for unit ``uid`` nearest its target that leaves every other unit in ``legal`` room to deploy.

    Args:
        legal: uid -> its legal slots now, for every unit still to deploy (``uid`` included).
        targets: uid -> :class:`SlotTarget` (units without one aim at the centre of the front row).

    Without this look-ahead a greedy choice can use up the front row that
    deep units need, and a unit with no legal slot never arrives.
    """
    units = battle.state.units
    default = SlotTarget(battle.state.table_w / 2, FRONT)

    def ranked(v: int) -> list[int]:
        return ranked_slots(legal[v], targets.get(v, default))

    others = sorted((v for v in legal if v != uid), key=lambda v: len(legal[v]))
    options: list[Iterable[Rect]] = [_LazyRects(battle, units[v], legal[v], targets.get(v, default)) for v in others]
    candidates = ranked(uid)
    for k in candidates:
        if _all_fit([slot_rect(battle, units[uid], k)], options, [SEARCH_BUDGET]):
            return k
    return candidates[0]


def ranked_slots(slots: Sequence[int], target: SlotTarget) -> list[int]:
    """``slots`` in order of :func:`slot_cost` to ``target`` (ties: the lower slot): ``sorted(slots, key=lambda k:
    (slot_cost(k, target), k))``, read off the order of every slot kept per target (:func:`_slot_order`)."""
    if len(slots) > 1:
        wanted = set(slots)
        order = [k for k in _slot_order(target) if k in wanted]
        if len(order) == len(slots):  # every slot a table slot, none twice
            return order
    return sorted(slots, key=lambda k: (slot_cost(k, target), k))


_SLOT_ORDERS: dict[SlotTarget, tuple[int, ...]] = {}


def _slot_order(target: SlotTarget) -> tuple[int, ...]:
    """Every slot of the table (0 .. len(ROWS)·len(COLUMNS) − 1) by (:func:`slot_cost` to ``target``, slot), kept
    per target (a few hundred at most: one per plan target)."""
    order = _SLOT_ORDERS.get(target)
    if order is None:
        if len(_SLOT_ORDERS) >= SLOT_MEMO_SIZE:
            _SLOT_ORDERS.clear()
        order = _SLOT_ORDERS[target] = tuple(sorted(range(len(ROWS) * len(COLUMNS)), key=lambda k: (slot_cost(k, target), k)))
    return order


class _LazyRects:
    """The footprints (:func:`slot_rect`) of ``u`` in its legal ``slots`` ranked for ``target``
    (:func:`ranked_slots`), in that order, the ranking made when an iteration first starts and each footprint built
    when an iteration first reaches it (:func:`_all_fit` mostly settles on the first few, often before it reaches
    this unit at all); iterable any number of times."""

    __slots__ = ("_battle", "_built", "_legal", "_slots", "_target", "_unit")

    def __init__(self, battle: Battle, u: UnitState, slots: Sequence[int], target: SlotTarget) -> None:
        self._battle, self._unit, self._legal, self._target = battle, u, slots, target
        self._slots: list[int] | None = None
        self._built: list[Rect] = []

    def __iter__(self) -> Iterator[Rect]:
        if self._slots is None:
            self._slots = ranked_slots(self._legal, self._target)
        slots = self._slots
        built = self._built
        i = 0
        while i < len(slots):
            if i == len(built):
                built.append(slot_rect(self._battle, self._unit, slots[i]))
            yield built[i]
            i += 1
