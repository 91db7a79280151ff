"""Terrain-aware deployment choices: the strong wing, the open half, high ground and the irritant's spot.

Each reads the table of one :class:`~battleline.env.rules.battle.Battle`
(terrain, deployed enemies) for one side and answers in that side's own
frame (``"left"``/``"right"`` halves, ``x`` inches from its own left edge,
rows of ``env.rules.deployment.ROWS``); the templates of
:mod:`tactics.deployment` take the answers as arguments.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import shapely

from battleline.env.rules import space
from battleline.env.rules.deployment import ROWS
from battleline.tactics.deployment_plan import BACK, FRONT, LEFT, MIDDLE, RIGHT, own_x

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


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


def open_half(battle: Battle, side: int) -> str | None:
    """The own half ("left"/"right") whose no-man's land hampers an advance least (:func:`terrain_penalty`:
    hills help, woods, rocks and obstacles hamper), or None on a tie. ``protected_bubble`` moves its ring
    as a rigid formation (tactics.md: "move the bubble as a rigid formation"), which difficult ground and
    narrow gaps break up (``gap_check``), so a ring that closes in play forms on that half."""
    penalty = {h: terrain_penalty(battle, side, h) for h in (LEFT, RIGHT)}
    if math.isclose(penalty[LEFT], penalty[RIGHT]):
        return None
    return LEFT if penalty[LEFT] < penalty[RIGHT] else RIGHT


def approach_side(battle: Battle, side: int) -> str | None:
    """The own half ("left"/"right") whose no-man's land holds more hills, difficult and impassable features
    (where the enemy can appear from, ``cover_approach_zones``); None on a tie."""
    counts = {}
    for half in (LEFT, RIGHT):
        region = half_region(battle, side, half)
        counts[half] = sum(1 for t in battle.state.terrain if _terrain_class(t.kind) in ("impassable", "difficult", "hill")
                           and region.intersects(space.terrain_poly(t)))
    if counts[LEFT] == counts[RIGHT]:
        return None
    return LEFT if counts[LEFT] > counts[RIGHT] else RIGHT


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



# ----------------------------------------------------------------------------- terrain-aware choices
def zone_rows(battle: Battle, side: int) -> dict[int, float]:
    """Table y of the front edge of each deployment row of ``side`` (rows 0–2)."""
    h = battle.state.table_h
    return {r: (ROWS[r] if side == 0 else h - ROWS[r]) for r in (FRONT, MIDDLE, BACK)}


def high_ground_spots(battle: Battle, side: int, limit: int = 2) -> list[tuple[float, int]]:
    """Hills reaching into ``side``'s deployment zone, as (x in the own frame, row) spots nearest each hill's middle.

    At most ``limit`` spots, the biggest hill area inside the zone first
    (``shooters_on_high_ground``).
    """
    s = battle.state
    zone_depth = s.queue.get("zone_depth", 12.0)
    zone = shapely.box(0, 0, s.table_w, zone_depth) if side == 0 else shapely.box(0, s.table_h - zone_depth, s.table_w, s.table_h)
    found = []
    for t in s.terrain:
        if t.kind != "hill":
            continue
        part = space.terrain_poly(t).intersection(zone)
        if part.area <= 0:
            continue
        c = part.centroid
        rows = zone_rows(battle, side)
        row = min(rows, key=lambda r: abs(abs(rows[r] - c.y) - 1.0))
        found.append((part.area, own_x(side, c.x, s.table_w), row))
    found.sort(key=lambda f: -f[0])
    return [(x, row) for _, x, row in found[:limit]]


def irritant_spot(battle: Battle, side: int) -> tuple[str, float | None]:
    """Where the ``sacrifice_for_deployment`` irritant goes: (wing, x in the own frame or None for the edge column).

    The wing with a hill in the own zone (the irritant stands on it), else
    the wing whose no-man's land is more cluttered by terrain (twice as hard
    to reach), else the left.
    """
    spots = high_ground_spots(battle, side, limit=4)
    w = battle.state.table_w
    for x, _ in spots:
        if x < w / 3 or x > 2 * w / 3:
            return (LEFT if x < w / 2 else RIGHT), x
    pen = {h: terrain_penalty(battle, side, h) for h in (LEFT, RIGHT)}
    return (LEFT if pen[LEFT] >= pen[RIGHT] else RIGHT), None
