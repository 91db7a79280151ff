"""The vocabulary of the deployment templates: unit roles, the plan a template returns, units packed on the column grid.

Roles (``shared/rules/tactics.md`` §4.3) come from the unit alone
(:func:`is_fast`, :func:`is_shooter`, :func:`is_battle_line`, ...) or from
its army (``elite``, :func:`unit_roles`, :func:`primary_role`). A
:class:`DeploymentPlan` holds a :class:`SlotTarget` per unit, the deployment
order and each unit's group. :func:`pack`, :func:`pack_centred`,
:func:`beside`, :func:`split_wings` and :func:`split_wings_fitting` set units side by side on the
deployment columns of ``env.rules.deployment``, at least 1" apart.

Coordinates: ``x`` is measured in inches from the deploying side's own left
table edge (:func:`own_x`); ``row`` indexes ``env.rules.deployment.ROWS``
(:data:`FRONT`, :data:`MIDDLE`, :data:`BACK`, :data:`SCOUT_ROW`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import median

from battleline.env.rules import special_rules
from battleline.env.rules.deployment import COLUMNS, ROWS
from battleline.env.rules.geometry import EPS
from battleline.env.rules.state import UnitState

ELITE_FACTOR = 1.5
"""A unit is elite when its points per model reach this multiple of the army's median."""

FRONT, MIDDLE, BACK, SCOUT_ROW = 0, 1, 2, 3
LEFT, RIGHT, CENTRE = "left", "right", "centre"


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


def is_flyer(u: UnitState) -> bool:
    """FLY: a unit with Fly or Hover (CORE.TYPE.FLYER)."""
    return special_rules.flyer(u)


def is_mobile(u: UnitState) -> bool:
    """Fast or flying: the units that go round (tactics.md roles CAV / FC / HC / FLY)."""
    return is_fast(u) or is_flyer(u)


def is_war_machine(u: UnitState) -> bool:
    """WM: a war machine."""
    return u.troop_type == "war_machine"


def is_swarm(u: UnitState) -> bool:
    """SWARM: a unit with the ``swarm`` special rule."""
    return u.has("swarm")


def is_scout(u: UnitState) -> bool:
    """SCOUT: a unit with the ``scouts`` special rule."""
    return u.has("scouts")


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


def beside(units: Sequence[UnitState], block: Sequence[UnitState], xs: dict[int, float], direction: int,
           default: float) -> dict[int, float]:
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


def line_end(line: Sequence[UnitState], edge: float, inward: int) -> float:
    """Inches (own frame) where the far side of ``line``, packed from the column ``edge`` (+1 rightwards, −1 leftwards), ends."""
    if not line:
        return edge
    xs = pack(line, edge, inward)
    return xs[line[-1].uid] + inward * line[-1].width / 2


def _points(units: Iterable[UnitState]) -> int:
    return sum(u.points for u in units)


def edge_of(side: str) -> tuple[float, int]:
    """(first column, inward direction) of the own ``side`` ("left"/"right") edge."""
    return (COLUMNS[0], 1) if side == LEFT else (COLUMNS[-1], -1)


def other(side: str) -> str:
    """The opposite wing."""
    return RIGHT if side == LEFT else LEFT


def split_wings_fitting(units: Sequence[UnitState], table_w: float, width: float) -> tuple[list[UnitState], list[UnitState]]:
    """Share units between the left and right wings, each packed from its table edge, keeping each wing's front row within ``width`` inches.

    Like :func:`split_wings` (balance the points, strongest first), but a
    deep unit (it needs the front row, :func:`fits_back_row`) goes to the
    weaker wing only while its front row still ends within ``width`` of the
    edge; shallow units can stand in a second row and always go by points.
    A unit that fits neither wing goes to the weaker one.
    """
    wings: dict[str, list[UnitState]] = {LEFT: [], RIGHT: []}

    def fits(u: UnitState, name: str) -> bool:
        if fits_back_row(u):
            return True
        edge, inward = edge_of(name)
        deep = [v for v in wings[name] if not fits_back_row(v)] + [u]
        return inward * (line_end(deep, edge, inward) - edge) + abs(edge - (0.0 if name == LEFT else table_w)) <= width + EPS

    for u in sorted(units, key=lambda u: (-u.points, u.uid)):
        by_points = sorted((LEFT, RIGHT), key=lambda n: (_points(wings[n]), n != LEFT))
        name = next((n for n in by_points if fits(u, n)), by_points[0])
        wings[name].append(u)
    return wings[LEFT], wings[RIGHT]
