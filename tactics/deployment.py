"""Deployment templates: any army turned into deployment-slot choices by unit roles.

A template (``shared/rules/tactics.md`` §4.3) looks only at the roles of the
units, so it works for every faction and army list:

* ``character`` — a character model;
* ``fast`` — cavalry, or a unit with the ``fast_cavalry`` special rule;
* ``shooters`` — a unit with a missile weapon;
* ``battle_line`` — infantry with at least 10 models;
* ``elite`` — points per model at least :data:`ELITE_FACTOR` × the army's median;
* ``scouts`` — a unit with the ``scouts`` special rule (it deploys last, ahead of the zone).

:func:`primary_role` picks one role per unit (character > fast > shooters >
battle_line > elite > support). Each template returns a
:class:`DeploymentPlan`: a :class:`SlotTarget` per unit (where it should
stand, in the side's own frame), the order to deploy in, and the group each
unit belongs to for the manoeuvre that follows. :func:`choose_slot` turns a
target into the nearest legal slot of ``env.rules.deployment`` that still
leaves every other unit room to deploy.

Coordinates: ``x`` is measured in inches from the deploying side's own left
table edge (blue: table x; red, which faces the other way: table width − x);
``row`` indexes ``env.rules.deployment.ROWS`` (0: front edge 11" from the own
edge, 1: 7", 2: 3"; 3 and 4 are the Scouts' forward rows). In a 12" zone a
unit deeper than 3" only fits the front row once the front row is filled
(the middle row would end within 1" of it), so the templates keep the front
row for deep units and send shallow ones (shooters, characters) to the back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import median
from typing import TYPE_CHECKING, Iterable, Sequence

import shapely

from env.rules import space
from env.rules.deployment import COLUMNS, ROWS, slot_pose
from env.rules.geometry import EPS
from env.rules.state import UnitState

if TYPE_CHECKING:
    from env.rules.battle import Battle

ELITE_FACTOR = 1.5
"""A unit is elite when its points per model reach this multiple of the army's median."""

ROW_WEIGHT = 2.0
"""Slot cost of one inch of row difference, relative to one inch sideways (prefer shifting a column)."""

FRONT, MIDDLE, BACK, SCOUT_ROW = 0, 1, 2, 3
LEFT, RIGHT, CENTRE = "left", "right", "centre"

REFUSED_SHARE = 0.10
"""The most points the refused wing may hold (tactics.md, refused_flank deployment signature)."""


# ----------------------------------------------------------------------------- roles
def is_fast(u: UnitState) -> bool:
    """Fast: cavalry or a ``fast_cavalry`` unit (tactics.md roles CAV / FC / HC)."""
    return u.troop_type == "cavalry" or u.has("fast_cavalry")


def is_heavy_cavalry(u: UnitState) -> bool:
    """Heavy cavalry (HC): cavalry without ``fast_cavalry``, not a character."""
    return u.troop_type == "cavalry" and not u.has("fast_cavalry") and not u.character


def is_shooter(u: UnitState) -> bool:
    """Shooters: the unit carries a missile weapon."""
    return u.missile is not None


def is_battle_line(u: UnitState) -> bool:
    """Battle line: infantry with at least 10 models at deployment."""
    return u.troop_type == "infantry" and u.start_models >= 10 and not u.character


def points_per_model(u: UnitState) -> float:
    """The unit's points divided by its starting models."""
    return u.points / max(1, u.start_models)


def elite_threshold(army: Sequence[UnitState]) -> float:
    """Points per model from which a non-character unit of ``army`` counts as elite."""
    ppm = [points_per_model(u) for u in army if not u.character]
    return ELITE_FACTOR * median(ppm) if ppm else math.inf


def unit_roles(u: UnitState, army: Sequence[UnitState]) -> frozenset[str]:
    """Every role of ``u`` within ``army`` (a unit may be fast and a shooter)."""
    roles = set()
    if u.character:
        roles.add("character")
    if is_fast(u):
        roles.add("fast")
    if is_shooter(u):
        roles.add("shooters")
    if is_battle_line(u):
        roles.add("battle_line")
    if not u.character and points_per_model(u) >= elite_threshold(army):
        roles.add("elite")
    if u.has("scouts"):
        roles.add("scouts")
    return frozenset(roles)


def primary_role(u: UnitState, army: Sequence[UnitState]) -> str:
    """The one role that places ``u``: character > fast > shooters > battle_line > elite > support."""
    roles = unit_roles(u, army)
    for role in ("character", "fast", "shooters", "battle_line", "elite"):
        if role in roles:
            return role
    return "support"


# ----------------------------------------------------------------------------- plans
@dataclass(frozen=True, slots=True)
class SlotTarget:
    """Where a unit should deploy: ``x`` inches from the own left edge, preferred ``row``."""

    x: float
    row: int


@dataclass(slots=True)
class DeploymentPlan:
    """A template applied to one army.

    Attributes:
        targets: uid -> :class:`SlotTarget`.
        order: uids in the order to deploy them (most important first).
        groups: uid -> the unit's group in the plan ("centre", "left",
            "right", "strong", "refused", "hc", "support"); the manoeuvre
            policies read it.
        strong_side: for a refused flank, the strong wing ("left"/"right")
            in the side's own frame; None otherwise.
    """

    targets: dict[int, SlotTarget] = field(default_factory=dict)
    order: list[int] = field(default_factory=list)
    groups: dict[int, str] = field(default_factory=dict)
    strong_side: str | None = None

    def place(self, units: Iterable[UnitState], xs: dict[int, float], row: int, group: str) -> None:
        """Record targets (at ``row``, x from ``xs``) and the group for ``units``, appending to the order."""
        for u in units:
            self.targets[u.uid] = SlotTarget(xs[u.uid], row)
            self.groups[u.uid] = group
            self.order.append(u.uid)

    def deep_units_first(self, army: Sequence[UnitState]) -> DeploymentPlan:
        """Reorder so units that only fit the front row deploy before those that fit the back row too.

        Behind a deep front rank the middle row is out of reach (it would end
        within 1"), so deep units share the front row alone: placing them first
        keeps thin units from taking the room they need.
        """
        thin = {u.uid for u in army if fits_back_row(u)}
        self.order.sort(key=lambda uid: uid in thin)
        return self


def fits_back_row(u: UnitState) -> bool:
    """Whether ``u`` is shallow enough for the back row (front edge 3" from the own table edge)."""
    return u.depth <= ROWS[BACK] + 1e-6


def own_x(side: int, x: float, table_w: float) -> float:
    """Table x -> inches from ``side``'s own left edge (red faces the other way)."""
    return x if side == 0 else table_w - x


STEP = COLUMNS[1] - COLUMNS[0]
"""Inches between deployment columns."""


def spacing(a: UnitState, b: UnitState) -> float:
    """Least distance between the centres of two units side by side on the column grid (1" apart or more)."""
    return STEP * math.ceil(((a.width + b.width) / 2 + 1.0) / STEP - 1e-9)


def pack(units: Sequence[UnitState], first: float, direction: int = 1) -> dict[int, float]:
    """Centres (inches) of units side by side on the column grid: the first at ``first``, then rightwards (+1) or leftwards (−1)."""
    xs: dict[int, float] = {}
    prev: UnitState | None = None
    x = first
    for u in units:
        if prev is not None:
            x += direction * spacing(prev, u)
        xs[u.uid] = x
        prev = u
    return xs


def pack_centred(units: Sequence[UnitState], centre: float) -> dict[int, float]:
    """Units side by side, left to right in the given order, shifted along the grid to centre on ``centre``."""
    xs = pack(units, 0.0, 1)
    if not units:
        return xs
    lo = xs[units[0].uid] - units[0].width / 2
    hi = xs[units[-1].uid] + units[-1].width / 2
    shift = STEP * round((centre - (lo + hi) / 2) / STEP)
    return {uid: x + shift for uid, x in xs.items()}


def beside(units: Sequence[UnitState], block: Sequence[UnitState], xs: dict[int, float], direction: int, default: float) -> dict[int, float]:
    """Units packed outwards from the right (+1) or left (−1) end of ``block`` (placed at ``xs``); from ``default`` without a block."""
    if not units or not block:
        return pack(units, default, direction)
    end = block[-1] if direction > 0 else block[0]
    return pack(units, xs[end.uid] + direction * spacing(end, units[0]), direction)


def strongest_in_middle(units: Sequence[UnitState]) -> list[UnitState]:
    """Order units left to right so the most expensive stands in the middle, the cheapest outside."""
    ranked = sorted(units, key=lambda u: (-u.points, u.uid))
    left: list[UnitState] = []
    right: list[UnitState] = []
    for i, u in enumerate(ranked):
        (right if i % 2 == 0 else left).append(u)
    return left[::-1] + right


def split_wings(units: Sequence[UnitState]) -> tuple[list[UnitState], list[UnitState]]:
    """Share units between the left and right wings, balancing points (the stronger wing gets the next)."""
    left: list[UnitState] = []
    right: list[UnitState] = []
    for u in sorted(units, key=lambda u: (-u.points, u.uid)):
        if sum(x.points for x in left) < sum(x.points for x in right):
            left.append(u)
        else:
            right.append(u)
    return left, right


def _by_role(army: Sequence[UnitState]) -> dict[str, list[UnitState]]:
    out: dict[str, list[UnitState]] = {}
    for u in army:
        role = "scouts" if u.has("scouts") else primary_role(u, army)
        out.setdefault(role, []).append(u)
    return out


def _characters_first_general(chars: Sequence[UnitState]) -> list[UnitState]:
    return sorted(chars, key=lambda u: (not u.general, -u.points, u.uid))


# ----------------------------------------------------------------------------- templates
def line_template(army: Sequence[UnitState], table_w: float) -> DeploymentPlan:
    """The battle line: infantry centre, shooters on its flanks, fast units on the wings.

    Battle-line, elite and other foot units stand in the front row across the
    centre, the strongest in the middle; shooters close the line on both
    sides; fast units hold the outer wings; characters stand behind the main
    block (the General in the middle); Scouts go forward on the flanks.
    """
    roles = _by_role(army)
    plan = DeploymentPlan()
    centre = strongest_in_middle(roles.get("battle_line", []) + roles.get("elite", []) + roles.get("support", []))
    xs = pack_centred(centre, table_w / 2)
    plan.place(centre, xs, FRONT, CENTRE)
    shoot_l, shoot_r = split_wings(roles.get("shooters", []))
    plan.place(shoot_l, beside(shoot_l, centre, xs, -1, table_w / 2), FRONT, LEFT)
    plan.place(shoot_r, beside(shoot_r, centre, xs, 1, table_w / 2), FRONT, RIGHT)
    fast_l, fast_r = split_wings(roles.get("fast", []))
    plan.place(fast_l, pack(fast_l, COLUMNS[0], 1), FRONT, LEFT)
    plan.place(fast_r, pack(fast_r, COLUMNS[-1], -1), FRONT, RIGHT)
    _place_characters(plan, roles.get("character", []), table_w / 2)
    _place_scouts(plan, roles.get("scouts", []), table_w, (LEFT, RIGHT))
    return plan.deep_units_first(army)


def pincers_template(army: Sequence[UnitState], table_w: float) -> DeploymentPlan:
    """``pincers`` (tactics.md §4.3): fast units on both wings, infantry centre, shooters behind it.

    Roles table: CAV/FC → wings (split by points; one fast unit makes the
    one-sided variant); INF → centre; GEN + BSB in or beside the centre
    blocks (here: in the front row at the block's ends); SHOOT → behind the
    centre (back row).
    """
    roles = _by_role(army)
    plan = DeploymentPlan()
    centre = strongest_in_middle(roles.get("battle_line", []) + roles.get("elite", []) + roles.get("support", []))
    chars = _characters_first_general(roles.get("character", []))
    steady, others = chars[:2], chars[2:]
    line = ([steady[0]] if steady else []) + centre + steady[1:]
    xs = pack_centred(line, table_w / 2)
    plan.place(centre, xs, FRONT, CENTRE)
    fast_l, fast_r = split_wings(roles.get("fast", []))
    plan.place(fast_l, pack(fast_l, COLUMNS[0], 1), FRONT, LEFT)
    plan.place(fast_r, pack(fast_r, COLUMNS[-1], -1), FRONT, RIGHT)
    shooters = roles.get("shooters", [])
    plan.place(shooters, pack_centred(shooters, table_w / 2), BACK, CENTRE)
    plan.place(steady, xs, FRONT, CENTRE)
    _place_characters(plan, others, table_w / 2)
    _place_scouts(plan, roles.get("scouts", []), table_w, (LEFT, RIGHT))
    return plan.deep_units_first(army)


def refused_flank_template(army: Sequence[UnitState], table_w: float, strong_side: str) -> DeploymentPlan:
    """``refused_flank`` (tactics.md §4.3): the bulk on one wing, a token unit set back on the other.

    The heavy cavalry (HC) stands on the strong side's table edge and the
    other deep units line up inwards from it in the front row, strongest
    first; shallow units form a second line in the back row behind them. The
    cheapest units up to :data:`REFUSED_SHARE` of the points (at most two)
    hold the refused wing at the far edge, set back in the back row when they
    fit it; characters stand behind the strong wing. An army too wide for its
    strong half spills over the centre line.
    """
    roles = _by_role(army)
    plan = DeploymentPlan(strong_side=strong_side)
    total = sum(u.points for u in army) or 1
    body = [u for u in army if not u.character and not u.has("scouts")]
    refused: list[UnitState] = []
    for u in sorted(body, key=lambda u: (u.points, u.uid)):
        if len(refused) < 2 and sum(r.points for r in refused) + u.points <= REFUSED_SHARE * total:
            refused.append(u)
    hc = sorted((u for u in body if is_heavy_cavalry(u) and u not in refused), key=lambda u: (-u.points, u.uid))
    strong = sorted((u for u in body if u not in refused and u not in hc), key=lambda u: (-u.points, u.uid))
    first_line = hc + [u for u in strong if not fits_back_row(u)]
    second_line = [u for u in strong if fits_back_row(u)]
    edge, inward = (COLUMNS[0], 1) if strong_side == LEFT else (COLUMNS[-1], -1)
    for line, row in ((first_line, FRONT), (second_line, BACK)):
        xs = pack(line, edge, inward)
        for u in line:
            plan.place([u], xs, row, "hc" if u in hc else "strong")
    xs = pack(refused, table_w - edge, -inward)
    for u in refused:
        plan.place([u], xs, BACK if fits_back_row(u) else FRONT, "refused")
    _place_characters(plan, roles.get("character", []), edge + inward * table_w / 4)
    _place_scouts(plan, roles.get("scouts", []), table_w, (strong_side,))
    return plan.deep_units_first(army)


def _place_characters(plan: DeploymentPlan, chars: Sequence[UnitState], centre: float) -> None:
    """Characters behind the main block, General first and in the middle."""
    ordered = _characters_first_general(chars)
    plan.place(ordered, pack_centred(strongest_in_middle(ordered), centre), BACK, "character")


def _place_scouts(plan: DeploymentPlan, scouts: Sequence[UnitState], table_w: float, sides: Sequence[str]) -> None:
    """Scouts in the forward row, a third of the way in from the given wing(s), alternating."""
    for i, u in enumerate(scouts):
        side = sides[i % len(sides)]
        x = table_w / 4 if side == LEFT else 3 * table_w / 4
        plan.place([u], {u.uid: x}, SCOUT_ROW, side)


# ----------------------------------------------------------------------------- the strong side
def half_region(battle: Battle, side: int, half: str) -> shapely.Polygon:
    """No-man's land in front of ``side``'s own ``half`` ("left"/"right") of the table, as a polygon."""
    s = battle.state
    zone = s.queue.get("zone_depth", 12.0)
    w, h = s.table_w, s.table_h
    left_in_table = (side == 0) == (half == LEFT)
    x0, x1 = (0.0, w / 2) if left_in_table else (w / 2, w)
    return shapely.box(x0, zone, x1, h - zone)


TERRAIN_WEIGHT = {"impassable": 1.0, "difficult": 0.7, "obstacle": 0.3, "hill": -0.3}


def _terrain_class(kind: str) -> str | None:
    if kind in space.IMPASSABLE:
        return "impassable"
    if kind in space.DIFFICULT:
        return "difficult"
    if kind in space.OBSTACLES:
        return "obstacle"
    return "hill" if kind == "hill" else None


def terrain_penalty(battle: Battle, side: int, half: str) -> float:
    """How much terrain hampers an advance on that half: weighted covered share of its no-man's land (hills help)."""
    region = half_region(battle, side, half)
    penalty = 0.0
    for t in battle.state.terrain:
        cls = _terrain_class(t.kind)
        if cls is not None:
            penalty += TERRAIN_WEIGHT[cls] * region.intersection(space.terrain_poly(t)).area / region.area
    return penalty


def enemy_share(battle: Battle, side: int, half: str) -> float:
    """Share of the enemy's points already deployed opposite ``side``'s own ``half``."""
    s = battle.state
    enemies = [u for u in s.units if u.side != side]
    total = sum(u.points for u in enemies) or 1
    opposite = 0
    for u in enemies:
        if u.deployed and not u.removed:
            x = own_x(side, u.x, s.table_w)
            if (x < s.table_w / 2) == (half == LEFT):
                opposite += u.points
    return opposite / total


def choose_strong_side(battle: Battle, side: int) -> str:
    """The refused flank's strong wing: better terrain for the advance and the enemy's weaker side.

    Score per half = −terrain penalty − share of enemy points deployed
    opposite; the higher score wins (left on a tie).
    """
    scores = {h: -terrain_penalty(battle, side, h) - enemy_share(battle, side, h) for h in (LEFT, RIGHT)}
    return LEFT if scores[LEFT] >= scores[RIGHT] else RIGHT


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
    """The footprint ``u`` would have in ``slot`` (deployment poses face straight ahead, so it is axis-aligned)."""
    p = slot_pose(battle, u, slot)
    return (p.x - u.width / 2, p.y - u.depth / 2, p.x + u.width / 2, p.y + u.depth / 2)


def too_close(a: Rect, b: Rect, gap: float = 1.0) -> bool:
    """Whether two axis-aligned footprints are less than ``gap`` inches apart (CORE.MOVE.ONE_INCH)."""
    dx = max(0.0, max(a[0], b[0]) - min(a[2], b[2]))
    dy = max(0.0, max(a[1], b[1]) - min(a[3], b[3]))
    return dx * dx + dy * dy < (gap - EPS) ** 2


def _all_fit(placed: list[Rect], options: list[list[Rect]], budget: list[int]) -> bool:
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
        return sorted(legal[v], key=lambda k: (slot_cost(k, targets.get(v, default)), k))

    others = sorted((v for v in legal if v != uid), key=lambda v: len(legal[v]))
    options = [[slot_rect(battle, units[v], k) for k in ranked(v)] for v in others]
    candidates = ranked(uid)
    for k in candidates:
        if _all_fit([slot_rect(battle, units[uid], k)], options, [SEARCH_BUDGET]):
            return k
    return candidates[0]
