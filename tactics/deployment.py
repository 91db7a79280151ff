"""Deployment templates: any army turned into deployment-slot choices by unit roles.

A template (``shared/rules/tactics.md`` §4.3) looks only at the roles of the
units, so it works for every faction and army list:

* ``character`` — a character model;
* ``fast`` — cavalry, or a unit with the ``fast_cavalry`` special rule;
* ``shooters`` — a unit with a missile weapon;
* ``battle_line`` — infantry with at least 10 models;
* ``elite`` — points per model at least :data:`ELITE_FACTOR` × the army's median;
* ``scouts`` — a unit with the ``scouts`` special rule (it deploys last, ahead of the zone);
* ``flyers``, ``war_machines``, ``swarms`` — Fly/Hover units, war machines and swarms
  (:func:`is_flyer`, :func:`is_war_machine`, :func:`is_swarm`).

:func:`primary_role` picks one role per unit (character > fast > shooters >
battle_line > elite > support). Each template returns a
:class:`DeploymentPlan`: a :class:`SlotTarget` per unit (where it should
stand, in the side's own frame), the order to deploy in, and the group each
unit belongs to for the manoeuvre that follows. The templates: the battle
line, ``pincers``, ``refused_flank``, ``flank_teeth``, ``weakened_flank``,
``abandoned_flank``, ``shooting_lines``, ``sacrifice_for_deployment`` and
``protected_bubble`` (see :data:`TEMPLATES`). :func:`choose_slot` turns a
target into the nearest legal slot of ``env.rules.deployment`` that still
leaves every other unit room to deploy.

Roles, plans and packing on the column grid live in
:mod:`tactics.deployment_plan`, the terrain-aware choices (the strong wing,
high ground, the irritant's spot) in :mod:`tactics.deployment_terrain` and
the slot choice in :mod:`tactics.deployment_slots`; the names callers import
from here are re-exported.

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
from collections.abc import Sequence
from statistics import median

from battleline.env.rules.deployment import COLUMNS, ROWS
from battleline.env.rules.geometry import EPS
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment_plan import (
    BACK,
    CENTRE,
    FRONT,
    LEFT,
    MIDDLE,
    RIGHT,
    SCOUT_ROW,
    STEP,
    DeploymentPlan,
    SlotTarget,
    _points,
    beside,
    edge_of,
    fits_back_row,
    is_fast,
    is_flyer,
    is_heavy_cavalry,
    is_mobile,
    is_scout,
    is_shooter,
    is_swarm,
    is_war_machine,
    line_end,
    other,
    own_x,
    pack,
    pack_centred,
    primary_role,
    split_wings,
    split_wings_fitting,
    strongest_in_middle,
)
from battleline.tactics.deployment_slots import SEARCH_BUDGET, _all_fit, _slot_rect, choose_slot, ranked_slots, slot_cost, slot_rect
from battleline.tactics.deployment_terrain import approach_side, choose_strong_side, high_ground_spots, irritant_spot, open_half

__all__ = [
    # re-exported from deployment_plan, deployment_slots and deployment_terrain: the names callers import from here
    "BACK", "CENTRE", "DeploymentPlan", "FRONT", "LEFT", "MIDDLE", "RIGHT", "SCOUT_ROW", "SEARCH_BUDGET", "SlotTarget", "_all_fit",
    "_slot_rect", "approach_side", "choose_slot", "choose_strong_side", "fits_back_row", "high_ground_spots", "irritant_spot",
    "is_fast", "is_flyer", "is_mobile", "is_swarm", "open_half", "other", "own_x", "ranked_slots", "slot_cost", "slot_rect",
]

REFUSED_SHARE = 0.10
"""The most points the refused wing may hold (tactics.md, refused_flank deployment signature)."""

TEETH_CENTRE_SHARE = 0.20
"""The most points the sacrificial centre of ``flank_teeth`` may hold (its deployment signature)."""
TEETH_CENTRE_UNITS = 2
"""The most units in that centre screen."""
WEAK_SHARE = 0.15
"""The most points on the weak wing of ``weakened_flank``."""
WEAK_UNITS = 2
"""The most units on that weak wing."""
WEAK_U = 0.25
"""Lateral position (fraction of the table width from the weak edge) of the weak wing's units."""
WEAK_EDGE_GAP = 12.0
"""Least inches from the side edge to the weak wing's column (tactics.md: >= 12" from the edges, the 2D6 flee)."""
STRIKE_GAP = 12.0
"""Least inches between the weak wing's column and a strike unit's (twice the 6" Panic range)."""
DECOY_SHARE = (0.20, 0.35)
"""Points share of the decoy wing of ``abandoned_flank`` (its deployment signature)."""
DECOY_STEP = 4 * 6.0
"""Inches between the decoys of ``abandoned_flank`` (every fourth deployment column: room for a square turn and
its 0.75·12" Vanguard move without the two turned columns, about 10" long each, ending within 1")."""
IRRITANT_COLUMNS = 2
"""Deployment columns in from its wing's edge where the ``sacrifice_for_deployment`` irritant stands without a hill."""
IRRITANT_ISOLATION = 13.0
"""Least gap (inches) the irritant keeps from the main body's front row when it steps in from the edge (over 12")."""
IRRITANT_GAP = 18.0
"""Inches the main body keeps from the ``sacrifice_for_deployment`` irritant (tactics.md: ≥ 18", PROPOSAL)."""
STAGGER_ROWS = (FRONT, BACK)
"""Rows that ``shooting_lines`` alternates its shooters between, so their line is never straight."""
BUBBLE_REACH = 6.0
"""protected_bubble: ring units stand within this many inches of the asset (tactics.md ring coverage)."""
GUARD_SHARE = 0.25
"""The most points ``shooting_lines`` spends on war machine guards (``guard_balance``)."""


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
    refused = refused_units(body, total, table_w, strong_side)
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


def refused_units(body: Sequence[UnitState], total: float, table_w: float, strong_side: str) -> list[UnitState]:
    """The token units of a refused wing: at most two, together at most :data:`REFUSED_SHARE` of ``total`` points.

    Among the sets that qualify, the one that lets the rest's front row
    (heavy cavalry at the edge, then the deep units, strongest first) end
    within the strong half is preferred, then the cheapest (the refused wing
    is a token). Shapes: ``body`` is the army without characters and Scouts.
    """
    from itertools import combinations

    if not body:  # only characters and Scouts: no wing to refuse
        return []
    edge, inward = edge_of(strong_side)
    limit = table_w / 2

    def overflow(refused: tuple[UnitState, ...]) -> float:
        rest = [u for u in body if u not in refused]
        hc = sorted((u for u in rest if is_heavy_cavalry(u)), key=lambda u: (-u.points, u.uid))
        deep = sorted((u for u in rest if u not in hc and not fits_back_row(u)), key=lambda u: (-u.points, u.uid))
        return max(0.0, inward * (line_end(hc + deep, edge, inward) - limit))

    sets = [c for k in (0, 1, 2) for c in combinations(sorted(body, key=lambda u: (u.points, u.uid)), k)
            if _points(c) <= REFUSED_SHARE * total and len(c) < len(body)]
    best = min(sets, key=lambda c: (overflow(c) > EPS, overflow(c), -len(c), _points(c)))
    return list(best)


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


# ----------------------------------------------------------------------------- more templates (tactics.md §4.3, §4.4)
def body_units(army: Sequence[UnitState]) -> list[UnitState]:
    """The army's units that are not characters."""
    return [u for u in army if not u.character]


def fill_from_edge(
    plan: DeploymentPlan,
    units: Sequence[UnitState],
    edge: float,
    inward: int,
    groups: dict[int, str] | str,
    limit: float | None = None,
) -> None:
    """Line ``units`` up from the column ``edge`` inwards (+1 rightwards, −1 leftwards), in the given order.

    Deep units take the front row; shallow ones (:func:`fits_back_row`) the
    front row too while it has room before ``limit`` (inches from the own
    left edge), else a second line in the back row from the same edge. Deep
    units past ``limit`` carry on in the front row (an army too wide for its
    part of the table spills over). ``groups``: one group for all, or uid -> group.
    """
    group = (lambda u: groups) if isinstance(groups, str) else (lambda u: groups.get(u.uid, "support"))
    deep = [u for u in units if not fits_back_row(u)]
    thin = [u for u in units if fits_back_row(u)]
    front: list[UnitState] = []
    back: list[UnitState] = []

    def end_of(line: list[UnitState], u: UnitState) -> float:
        xs = pack(line + [u], edge, inward)
        return xs[u.uid] + inward * u.width / 2

    def fits(u: UnitState, line: list[UnitState]) -> bool:
        return limit is None or inward * (end_of(line, u) - limit) <= 0

    for u in deep:
        front.append(u)
    for u in thin:
        (front if fits(u, front) else back).append(u)
    for line, row in ((front, FRONT), (back, BACK)):
        xs = pack(line, edge, inward)
        for u in line:
            plan.place([u], xs, row, group(u))


def _unjoined_characters(army: Sequence[UnitState]) -> list[UnitState]:
    return [u for u in army if u.character and u.joined_to is None]


def _place_rest(plan: DeploymentPlan, army: Sequence[UnitState], table_w: float) -> None:
    """Characters the template did not place go behind the centre; Scouts it did not place go forward on the flanks."""
    _place_characters(plan, [u for u in army if u.character and u.uid not in plan.targets], table_w / 2)
    _place_scouts(plan, [u for u in army if is_scout(u) and u.uid not in plan.targets], table_w, (LEFT, RIGHT))


def flank_teeth_template(army: Sequence[UnitState], table_w: float) -> DeploymentPlan:
    """``flank_teeth`` (tactics.md §4.3): all strength on the two wings, a cheap sacrificial screen in the centre.

    Centre ("centre"): at most :data:`TEETH_CENTRE_UNITS` units cheaper than
    the army's median unit and together at most :data:`TEETH_CENTRE_SHARE` of
    the points — swarms and Scouts first, then the cheapest. Wings ("left",
    "right"): every other unit, split by points, lined up from the table
    edges inwards with the fast and flying units outermost (they go round
    first). Characters stand behind the wings, the General with the stronger.
    """
    body = body_units(army)
    total = _points(body) or 1
    med = median([u.points for u in body]) if body else 0
    screen: list[UnitState] = []
    for u in sorted(body, key=lambda u: (not is_swarm(u), not is_scout(u), u.points, u.uid)):
        if len(screen) < TEETH_CENTRE_UNITS and u.points < med and _points(screen) + u.points <= TEETH_CENTRE_SHARE * total:
            screen.append(u)
    plan = DeploymentPlan()
    wings = [u for u in body if u not in screen]
    left, right = split_wings_fitting(wings, table_w, table_w / 3)
    for wing, name in ((left, LEFT), (right, RIGHT)):
        edge, inward = edge_of(name)
        ordered = sorted(wing, key=lambda u: (not is_mobile(u), -u.points, u.uid))
        fill_from_edge(plan, [u for u in ordered if not is_scout(u)], edge, inward, name,
                       limit=table_w / 3 if name == LEFT else 2 * table_w / 3)
        _place_scouts(plan, [u for u in ordered if is_scout(u)], table_w, (name,))
    centre_line = [u for u in screen if not is_scout(u)]
    plan.place(centre_line, pack_centred(centre_line, table_w / 2), FRONT, CENTRE)
    for u in screen:
        if is_scout(u):
            plan.place([u], {u.uid: table_w / 2}, SCOUT_ROW, CENTRE)
    chars = _characters_first_general(_unjoined_characters(army))
    strong = LEFT if _points(left) >= _points(right) else RIGHT
    for i, c in enumerate(chars):
        name = strong if i % 2 == 0 else other(strong)
        edge, inward = edge_of(name)
        plan.place([c], {c.uid: edge + inward * (STEP * (1 + i // 2))}, BACK, "character")
    _place_rest(plan, army, table_w)
    return plan.deep_units_first(army)


def weak_wing_units(army: Sequence[UnitState]) -> list[UnitState]:
    """Who holds the weak wing of ``weakened_flank``: Scouts (cheapest first), else the cheapest fast unit, else the cheapest unit.

    At most :data:`WEAK_UNITS` units and :data:`WEAK_SHARE` of the points;
    at least one unit whenever the army has two or more.
    """
    body = body_units(army)
    if len(body) < 2:
        return []
    total = _points(body) or 1
    weak: list[UnitState] = []
    for u in sorted((u for u in body if is_scout(u)), key=lambda u: (u.points, u.uid)):
        if len(weak) < WEAK_UNITS and _points(weak) + u.points <= WEAK_SHARE * total:
            weak.append(u)
    if weak:
        return weak
    fast = sorted((u for u in body if is_mobile(u)), key=lambda u: (u.points, u.uid))
    if fast and fast[0].points <= WEAK_SHARE * total:
        return fast[:1]
    return [min(body, key=lambda u: (u.points, u.uid))]


def weak_wing_x(table_w: float, weak_edge: str, strike_xs: Sequence[float]) -> float:
    """Column (inches from the own left edge) of the ``weakened_flank`` weak wing's first unit.

    :data:`WEAK_U` of the table in from the weak edge, moved out towards that
    edge while it stands within :data:`STRIKE_GAP` of a strike unit (at
    ``strike_xs``), so that the lure breaking makes no strike unit test Panic
    (CORE.PSY.PANIC, 6") and a chaser following it passes beside the strike
    group; never nearer the side edge than :data:`WEAK_EDGE_GAP` (tactics.md:
    room to flee and rally).
    """
    out = -1 if weak_edge == LEFT else 1
    x = WEAK_U * table_w if weak_edge == LEFT else (1 - WEAK_U) * table_w
    least = WEAK_EDGE_GAP if weak_edge == LEFT else table_w - WEAK_EDGE_GAP
    while out * (least - x) >= STEP and any(abs(x - s) < STRIKE_GAP for s in strike_xs):
        x += out * STEP
    return x


def war_machines_apart(line: Sequence[UnitState]) -> list[UnitState]:
    """``line`` (ordered from the edge inwards) with its war machines moved just outside its innermost unit that
    is no war machine and takes the front row (not :func:`fits_back_row`), so that a unit packed on after the line
    (the ``weakened_flank`` strike unit) stands that unit's column and more away from them: the enemy's
    artillery kills war machines early, and one destroyed within 6" of a unit makes it test Panic
    (CORE.PSY.PANIC.TRIGGER_DESTROYED). The other units keep their order; unchanged without such a unit."""
    wms = [u for u in line if is_war_machine(u)]
    rest = [u for u in line if not is_war_machine(u)]
    spacer = next((i for i in range(len(rest) - 1, -1, -1) if not fits_back_row(rest[i])), None)
    if not wms or spacer is None:
        return list(line)
    return rest[:spacer] + wms + rest[spacer:]


def weakened_flank_template(army: Sequence[UnitState], table_w: float, strong_side: str) -> DeploymentPlan:
    """``weakened_flank`` (tactics.md §4.3): one or two cheap units (Scouts) alone on one wing, the army on the other.

    Weak wing ("weak"): :func:`weak_wing_units`, a quarter of the table in
    from the weak edge, or further out (≥ 12" from the side edge) where that
    keeps it :data:`STRIKE_GAP` from the strike units (:func:`weak_wing_x`),
    Scouts in their forward row (so ≥ 12" from the own edge behind their
    flight); it deploys first. Main body: lined
    up from the strong edge inwards; its units nearest the weak wing form the
    flank-strike group ("inner") that turns on the pursuers — the main body's
    fast and flying units, which have the reach to catch them in the flank,
    else the inner third of its units other than war machines (at least
    one); the rest is "strong", its war machines a deep unit away from the
    strike units (:func:`war_machines_apart`: the enemy's artillery kills
    them early, and the strike unit would test Panic).
    Characters stand behind the main body.
    """
    plan = DeploymentPlan(strong_side=strong_side)
    weak = weak_wing_units(army)
    weak_edge = other(strong_side)
    main = sorted((u for u in body_units(army) if u not in weak), key=lambda u: (is_mobile(u), -u.points, u.uid))
    main_line = [u for u in main if not is_scout(u)]
    fighters = [u for u in main_line if not is_war_machine(u)] or main_line
    strikers = [u for u in main_line if is_mobile(u)] or fighters[-max(1, len(fighters) // 3):]
    inner = {u.uid for u in strikers}
    line = war_machines_apart([u for u in main_line if u.uid not in inner]) + strikers
    edge, inward = edge_of(strong_side)
    fill_from_edge(plan, line, edge, inward, {u.uid: "inner" if u.uid in inner else "strong" for u in main_line},
                   limit=table_w / 2)
    x_weak = weak_wing_x(table_w, weak_edge, [plan.targets[u.uid].x for u in strikers])
    for i, u in enumerate(weak):
        x = x_weak + (STEP if weak_edge == LEFT else -STEP) * i
        plan.place([u], {u.uid: x}, SCOUT_ROW if is_scout(u) else FRONT, "weak")
    plan.order = plan.order[-len(weak):] + plan.order[:-len(weak)] if weak else plan.order
    _place_scouts(plan, [u for u in main if is_scout(u)], table_w, (strong_side,))
    _place_characters(plan, _unjoined_characters(army), edge + inward * table_w / 4)
    _place_rest(plan, army, table_w)
    return plan.deep_units_first(army)


def decoy_wing_units(army: Sequence[UnitState]) -> list[UnitState]:
    """The decoy wing of ``abandoned_flank``: fast and flying units, then one cheap infantry unit (i1).

    Fast/flying units, most expensive first, while the wing stays within
    :data:`DECOY_SHARE` of the points; then the cheapest infantry unit if it
    keeps the wing within the share and the fast units ≥ half of it. An army
    without fast units sends its cheapest units up to the lower share.
    """
    body = body_units(army)
    total = _points(body) or 1
    lo, hi = DECOY_SHARE
    decoy: list[UnitState] = []
    for u in sorted((u for u in body if is_mobile(u)), key=lambda u: (-u.points, u.uid)):
        if _points(decoy) + u.points <= hi * total:
            decoy.append(u)
    if not decoy:
        for u in sorted(body, key=lambda u: (u.points, u.uid)):
            if _points(decoy) + u.points <= lo * total and len(decoy) < len(body) - 1:
                decoy.append(u)
        return decoy
    fast_pts = _points(decoy)
    foot = sorted((u for u in body if u.troop_type == "infantry" and not is_scout(u) and u not in decoy), key=lambda u: (u.points, u.uid))
    if foot and _points(decoy) + foot[0].points <= hi * total and fast_pts >= 0.5 * (fast_pts + foot[0].points):
        decoy.append(foot[0])
    return decoy


def clears_decoy_lane(u: UnitState) -> bool:
    """Whether ``u`` in the front row leaves the ``abandoned_flank`` decoys' lane behind it open: not a war
    machine (it pivots to shoot) and no deeper than the gap between the front and middle rows (4")."""
    return not is_war_machine(u) and u.depth <= ROWS[FRONT] - ROWS[MIDDLE] + 1e-6


def abandoned_flank_template(army: Sequence[UnitState], table_w: float, decoy_side: str) -> DeploymentPlan:
    """``abandoned_flank`` (tactics.md §4.3): a fast decoy wing on one side, the main body on the other.

    Decoy wing in the ``decoy_side`` half: :func:`decoy_wing_units` — fast
    and flying units ("decoy") and one infantry unit ("decoy_inf", the
    source's i1), every :data:`DECOY_STEP` from the centre line outwards, so
    that the shift is short, in the middle row where they fit: their lane
    across runs behind the main body's front row. Main body ("main"):
    everything else from the other edge inwards, the units that
    :func:`clears_decoy_lane` at its inner end; lone characters behind its
    outer end. In turns 1–2 the decoys shift across to the main body (the
    manoeuvre), so the whole army hits one enemy flank.
    """
    main_side = other(decoy_side)
    plan = DeploymentPlan(strong_side=main_side)
    decoy = decoy_wing_units(army)
    outward = 1 if decoy_side == RIGHT else -1
    first = min(COLUMNS, key=lambda x: (outward * (table_w / 2 - x) >= 0, abs(x - table_w / 2), -outward * x))
    # Every third column, so that each decoy has room to turn square and set off across (tactics.md: the
    # shift is made in turns 1-2); an army too large for that spills over as a plain line.
    for i, u in enumerate(decoy):
        x = first + outward * DECOY_STEP * i
        if not COLUMNS[0] <= x <= COLUMNS[-1]:
            x = first + outward * STEP * i
        plan.place([u], {u.uid: x}, MIDDLE if u.depth <= ROWS[MIDDLE] + 1e-6 else FRONT,
                   "decoy" if is_mobile(u) else "decoy_inf")
    # Shallow units (rear edge no deeper than the middle row's front) at the main body's inner end, deep ones and
    # war machines (which pivot to shoot) at its outer end: the decoys' lane behind the front row stays open.
    main = sorted((u for u in body_units(army) if u not in decoy), key=lambda u: (clears_decoy_lane(u), -u.points, u.uid))
    edge, inward = edge_of(main_side)
    # The main body keeps to its own half where it can (thin units in a second line), so that nothing slow
    # stands among the decoys: it would be left behind by the shift, and a loss there panics them. A war
    # machine that still spills over goes to the back row from the main body's edge.
    fill_from_edge(plan, [u for u in main if not is_scout(u)], edge, inward, "main", limit=table_w / 2)
    spilled = [u for u in main if is_war_machine(u) and outward * (plan.targets[u.uid].x - table_w / 2) > 0]
    for i, u in enumerate(spilled):
        plan.targets[u.uid] = SlotTarget(edge + inward * STEP * i, BACK)
    _place_scouts(plan, [u for u in main if is_scout(u)], table_w, (main_side,))
    # Lone characters behind the main body's outer end, off the decoys' lane behind its front row.
    _place_characters(plan, _unjoined_characters(army), edge + inward * table_w / 8)
    _place_rest(plan, army, table_w)
    return plan.deep_units_first(army)


def shooting_lines_template(
    army: Sequence[UnitState], table_w: float, high_ground: Sequence[tuple[float, int]] = (), lone_side: str | None = None
) -> DeploymentPlan:
    """``shooting_lines`` (tactics.md §4.4): shooters on high ground, never in a straight line, guarded war machines.

    * ``shooters_on_high_ground``: the first shooters (war machines first,
      then the longest-ranged) take the ``high_ground`` spots, (x, row) in the
      own frame (see :func:`high_ground_spots`).
    * ``staggered_shooting_line``: the other shooters close the infantry line
      on both sides, alternating between the rows of :data:`STAGGER_ROWS`, so
      no probe on an end shooter's flank is out of every other shooter's sight.
    * ``guard_balance``: each war machine gets the cheapest infantry unit as a
      guard beside it (on its outer side, clear of its line of fire) while
      the guards cost at most :data:`GUARD_SHARE`.
    * ``cover_approach_zones``: a lone line shooter stands beside the centre
      on ``lone_side`` (see :func:`approach_side`), the wing facing more of
      the features the enemy can appear from.
    * The battle line holds the centre, fast units the wings, characters
      behind the line. Groups: "shooters", "guard", "centre", "left", "right".
    """
    plan = DeploymentPlan()
    body = body_units(army)
    total = _points(body) or 1
    shooters = [u for u in body if (is_shooter(u) or is_war_machine(u)) and not is_mobile(u) and not is_scout(u)]
    shooters.sort(key=lambda u: (not is_war_machine(u), -_range(u), -u.points, u.uid))
    guards: dict[int, UnitState] = {}
    foot = sorted((u for u in body if u.troop_type == "infantry" and u not in shooters and not is_scout(u)),
                  key=lambda u: (u.points, u.uid))
    for wm in (u for u in shooters if is_war_machine(u)):
        if foot and _points(guards.values()) + foot[0].points <= GUARD_SHARE * total:
            guards[wm.uid] = foot.pop(0)
    spots = list(high_ground)
    on_high = shooters[: len(spots)]
    for u, (x, row) in zip(on_high, spots):
        plan.place([u], {u.uid: x}, row, "shooters")
        if u.uid in guards:
            g = guards[u.uid]
            steps = math.ceil((u.width + g.width) / 2 / STEP + 1e-9)
            plan.place([g], {g.uid: x + STEP * (1 if x < table_w / 2 else -1) * steps}, FRONT, "guard")
    line_shooters = shooters[len(spots):]
    centre = strongest_in_middle([u for u in body if u not in shooters and u not in guards.values()
                                  and not is_mobile(u) and not is_scout(u)])
    xs = pack_centred(centre, table_w / 2)
    plan.place(centre, xs, FRONT, CENTRE)
    rows = stagger_rows(line_shooters)
    left, right = split_wings(line_shooters)
    if len(line_shooters) == 1 and lone_side is not None:
        left, right = (line_shooters, []) if lone_side == LEFT else ([], line_shooters)
    for wing, direction in ((left, -1), (right, 1)):
        wing = _guards_outside(wing + [guards[u.uid] for u in wing if u.uid in guards], guards)
        wxs = beside(wing, centre, xs, direction, table_w / 2)
        for u in wing:
            plan.place([u], wxs, rows.get(u.uid, FRONT), "guard" if u in guards.values() else "shooters")
    fast_l, fast_r = split_wings([u for u in body if is_mobile(u) and not is_scout(u)])
    plan.place(fast_l, pack(fast_l, COLUMNS[0], 1), FRONT, LEFT)
    plan.place(fast_r, pack(fast_r, COLUMNS[-1], -1), FRONT, RIGHT)
    _place_characters(plan, _unjoined_characters(army), table_w / 2)
    _place_rest(plan, army, table_w)
    return plan.deep_units_first(army)


def stagger_rows(shooters: Sequence[UnitState]) -> dict[int, int]:
    """Rows for a shooting line that is never straight (``staggered_shooting_line``).

    Shallow shooters alternate between the back and the front row (back
    first when a deep one holds the front); deep ones take the front row,
    or the middle row when every shooter is deep.
    """
    deep = [u for u in shooters if not fits_back_row(u)]
    thin = [u for u in shooters if fits_back_row(u)]
    rows = {u.uid: FRONT for u in deep}
    for i, u in enumerate(thin):
        rows[u.uid] = STAGGER_ROWS[(i + 1) % len(STAGGER_ROWS)]
    if not thin:
        for i, u in enumerate(deep):
            rows[u.uid] = FRONT if i % 2 == 0 else MIDDLE
    return rows


def _guards_outside(wing: list[UnitState], guards: dict[int, UnitState]) -> list[UnitState]:
    """A wing's units in order, each guard right after its war machine (beside it, on the outer side)."""
    guard_of = {g.uid: wm for wm, g in guards.items()}
    ordered = [u for u in wing if u.uid not in guard_of]
    for g in (u for u in wing if u.uid in guard_of):
        wm = guard_of[g.uid]
        at = next((i for i, u in enumerate(ordered) if u.uid == wm), len(ordered) - 1)
        ordered.insert(at + 1, g)
    return ordered


def fits_row(u: UnitState, row: int) -> bool:
    """Whether ``u`` fits a deployment row behind a filled front row (only shallow units fit the back row)."""
    return row == FRONT or fits_back_row(u)


def _range(u: UnitState) -> float:
    if u.missile is None:
        return 0.0
    from battleline.env.rules.tables import MISSILE_WEAPONS

    w = MISSILE_WEAPONS.get(u.missile)
    return float(w.range) if w is not None else 0.0


def irritant_unit(army: Sequence[UnitState]) -> UnitState | None:
    """The ``sacrifice_for_deployment`` irritant: the cheapest war machine, else the longest-ranged foot shooter.

    Not the weakest unit: among shooters of equal range the more expensive
    one (it must bother the enemy). None if the army has no missile unit.
    """
    body = body_units(army)
    wms = sorted((u for u in body if is_war_machine(u)), key=lambda u: (u.points, u.uid))
    if wms:
        return wms[0]
    shooters = [u for u in body if is_shooter(u) and not is_mobile(u)] or [u for u in body if is_shooter(u)]
    if not shooters or len(body) < 2:
        return None
    return max(shooters, key=lambda u: (_range(u), u.points, -u.uid))


def sacrifice_template(army: Sequence[UnitState], table_w: float, irritant_side: str, irritant_x: float | None = None) -> DeploymentPlan:
    """``sacrifice_for_deployment`` (tactics.md §4.4): one irritating shooter alone, the main army far from it.

    The irritant (:func:`irritant_unit`, group "irritant") stands on the
    ``irritant_side`` wing — at ``irritant_x`` (own frame; a hill, see
    :func:`irritant_spot`) or up to :data:`IRRITANT_COLUMNS` in from the edge
    while :data:`IRRITANT_ISOLATION` inches clear of the main body's front
    row, else the outermost column. The main body ("main")
    lines up from the other edge inwards, keeping :data:`IRRITANT_GAP`
    inches from the irritant while the rows have room. Characters stand
    behind the main body.
    """
    main_side = other(irritant_side)
    plan = DeploymentPlan(strong_side=main_side)
    irritant = irritant_unit(army)
    edge_i, inward_i = edge_of(irritant_side)
    main = sorted((u for u in body_units(army) if u is not irritant), key=lambda u: (not is_mobile(u), -u.points, u.uid))
    edge, inward = edge_of(main_side)
    x_i = irritant_x if irritant_x is not None else edge_i
    if irritant_x is None and irritant is not None:
        # Without a hill: up to IRRITANT_COLUMNS in from the wing's edge, in front of the enemy's wing (the
        # nearest target for several of its units) rather than in the corner where nothing passes, as long
        # as it stays isolated from the main body's front row.
        end = line_end([u for u in main if not is_scout(u) and not fits_back_row(u)], edge, inward)
        for k in range(IRRITANT_COLUMNS, 0, -1):
            x = edge_i + inward_i * STEP * k
            if inward * (x - end) - irritant.width / 2 >= IRRITANT_ISOLATION:
                x_i = x
                break
    if irritant is not None:
        plan.place([irritant], {irritant.uid: x_i}, BACK if fits_back_row(irritant) else FRONT, "irritant")
    limit = x_i - inward * IRRITANT_GAP
    fill_from_edge(plan, [u for u in main if not is_scout(u)], edge, inward, "main", limit=limit)
    _place_scouts(plan, [u for u in main if is_scout(u)], table_w, (main_side,))
    _place_characters(plan, _unjoined_characters(army), edge + inward * table_w / 4)
    _place_rest(plan, army, table_w)
    return plan.deep_units_first(army)


def bubble_asset(army: Sequence[UnitState]) -> UnitState | None:
    """The ``protected_bubble`` asset (H): the General if it stands alone, else the best wizard, else the dearest lone character.

    None when every character is joined to a unit (the bubble then forms
    around that army's most expensive unit, see :func:`protected_bubble_template`).
    """
    chars = _unjoined_characters(army)
    if not chars:
        return None
    return min(chars, key=lambda u: (not u.general, -u.wizard_level, -u.points, u.uid))


def protected_bubble_template(army: Sequence[UnitState], table_w: float, centre_x: float | None = None) -> DeploymentPlan:
    """``protected_bubble`` (tactics.md §4.4): the key piece ringed by friends on every side.

    Asset ("asset"): :func:`bubble_asset`, or without a lone character the
    army's most expensive unit. Ring ("ring_front", "ring_left",
    "ring_right", "ring_rear"): a shallow unit in front (front row), the two
    strongest blocks level with the asset on its left and right (middle
    row), a narrow shallow unit behind it (back row); with no shallow unit
    for the front the asset stands in the back row (the table edge at its
    back) with the narrowest blocks in front (front row) and beside it
    (middle row), so that the 6" deployment grid keeps them close. War
    machines never stand in the ring. A unit as the asset gets blocks on
    both sides. Other blocks extend the line outwards ("line"); fast units
    hold the wings ("left"/"right"); other characters stand behind the line.
    """
    plan = DeploymentPlan()
    cx = centre_x if centre_x is not None else table_w / 2
    body = [u for u in body_units(army) if not is_scout(u)]
    asset = bubble_asset(army)
    if asset is None and body:
        asset = max(body, key=lambda u: (u.points, -u.uid))
        body.remove(asset)
    blocks = sorted((u for u in body if not is_mobile(u) and not is_war_machine(u)), key=lambda u: (-u.points, u.uid))
    ring: dict[str, UnitState] = {}
    lone = asset is not None and asset.character and fits_back_row(asset)
    thin = [u for u in blocks if fits_back_row(u)]
    if lone and thin:
        # The asset in the middle row: a shallow unit in front, the strongest blocks level with it.
        asset_row, side_row = MIDDLE, MIDDLE
        ring["ring_front"] = thin[0]
        blocks.remove(thin[0])
    elif lone:
        # No shallow unit: the asset in the back row, the two deepest blocks (once turned in on its
        # flanks they cover the most of them) in the middle row beside it, and in front of it the
        # widest unit narrow enough to stand between them; the asset moves up into that pocket in play.
        asset_row, side_row = BACK, MIDDLE
        blocks.sort(key=lambda u: (-u.depth, -u.width, -u.points, u.uid))
        sides = blocks[:2]
        room = STEP - max((u.width for u in sides), default=0.0) / 2 - 1.0
        fronts = sorted((u for u in body if u is not asset and u not in sides and not is_war_machine(u)
                         and u.width / 2 <= room and ROWS[FRONT] - u.depth - ROWS[BACK] <= BUBBLE_REACH),
                        key=lambda u: (-u.width, -u.points, u.uid))
        if fronts:
            ring["ring_front"] = fronts[0]
            if fronts[0] in blocks:
                blocks.remove(fronts[0])
    else:
        # A unit (or a large model) as the asset: blocks on both sides in the front row.
        asset_row, side_row = FRONT, FRONT
    for name in ("ring_left", "ring_right"):
        if blocks:
            ring[name] = blocks.pop(0)
    if asset_row == MIDDLE:
        widest = max((ring[k].width for k in ("ring_left", "ring_right") if k in ring), default=0.0)
        rears = [u for u in blocks if fits_back_row(u) and u.width / 2 + widest / 2 + 1.0 <= STEP]
        if rears:
            ring["ring_rear"] = rears[0]
            blocks.remove(rears[0])
    pool = blocks + [u for u in body if is_war_machine(u)]
    if asset is not None:
        plan.place([asset], {asset.uid: cx}, asset_row, "asset")
    if "ring_front" in ring:
        u = ring["ring_front"]
        plan.place([u], {u.uid: cx}, FRONT, "ring_front")
    if "ring_rear" in ring:
        u = ring["ring_rear"]
        plan.place([u], {u.uid: cx}, BACK, "ring_rear")
    # The side units must clear whatever shares (or nearly shares) their rows: the front unit when they
    # stand in the front row, the rear unit behind a middle-row asset.
    level = ("ring_front",) if asset_row != MIDDLE else ("ring_rear",)
    half = max([asset.width if asset else 0.0] + [ring[k].width for k in level if k in ring]) / 2
    sides: dict[str, float] = {}
    for name, sign in (("ring_left", -1), ("ring_right", 1)):
        if name in ring:
            u = ring[name]
            x = cx + sign * STEP * math.ceil((half + u.width / 2 + 1.0) / STEP - 1e-9)
            sides[name] = x
            plan.place([u], {u.uid: x}, side_row, name)
    rest = strongest_in_middle(pool)
    left_rest, right_rest = rest[: len(rest) // 2][::-1], rest[len(rest) // 2:]
    # A bubble off the middle (centre_x) sends the line units that would leave the column grid (or stand on
    # the fast units' wing columns) to its other side.
    fast_l, fast_r = split_wings([u for u in body if is_mobile(u) and u not in ring.values()])
    lo = COLUMNS[0] + STEP * len(fast_l) - 1e-6
    hi = COLUMNS[-1] - STEP * len(fast_r) + 1e-6
    spots: dict[int, dict[int, float]] = {}
    for units, other_units, sign, name in ((left_rest, right_rest, -1, "ring_left"), (right_rest, left_rest, 1, "ring_right"),
                                           (left_rest, right_rest, -1, "ring_left")):
        anchor = sides.get(name, cx)
        width = ring[name].width if name in ring else 2 * half
        while units:
            start = anchor + sign * STEP * math.ceil((width / 2 + units[0].width / 2 + 1.0) / STEP - 1e-9)
            spots[sign] = pack(units, start, sign)
            if all(lo <= x <= hi for x in spots[sign].values()) or not other_units:
                break
            other_units.append(units.pop())
        else:
            spots[sign] = {}
    # The General's unit stands next to the ring, its Leadership aura over the bubble (tactics.md: the aura covers the ring).
    hosts = {u.joined_to for u in army if u.character and u.general and u.joined_to is not None}
    for units, sign, name in ((left_rest, -1, "ring_left"), (right_rest, 1, "ring_right")):
        if units and units[0].uid not in hosts and any(u.uid in hosts for u in units):
            k = next(i for i, u in enumerate(units) if u.uid in hosts)
            units[0], units[k] = units[k], units[0]
            width = ring[name].width if name in ring else 2 * half
            start = sides.get(name, cx) + sign * STEP * math.ceil((width / 2 + units[0].width / 2 + 1.0) / STEP - 1e-9)
            spots[sign] = pack(units, start, sign)
    for units, sign in ((left_rest, -1), (right_rest, 1)):
        if units:
            plan.place(units, spots[sign], FRONT, "line")
    plan.place(fast_l, pack(fast_l, COLUMNS[0], 1), FRONT, LEFT)
    plan.place(fast_r, pack(fast_r, COLUMNS[-1], -1), FRONT, RIGHT)
    others = [u for u in _unjoined_characters(army) if u is not asset]
    _place_characters(plan, others, cx + 2 * STEP)
    _place_rest(plan, army, table_w)
    order = [asset.uid] if asset is not None else []
    order += [ring[k].uid for k in ("ring_front", "ring_left", "ring_right", "ring_rear") if k in ring]
    plan.order = order + [uid for uid in plan.order if uid not in order]
    return plan

TEMPLATES = (
    "line",
    "pincers",
    "refused_flank",
    "flank_teeth",
    "weakened_flank",
    "abandoned_flank",
    "shooting_lines",
    "sacrifice_for_deployment",
    "protected_bubble",
)
"""The deployment templates of this module (tactics.md §4.3–§4.4), by tactic id."""
