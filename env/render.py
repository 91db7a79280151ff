"""Draw a battle with matplotlib (Agg): table, terrain, castle, units, charges, result.

:func:`render_battle` is what ``battleline play --png`` and ``battleline
replay --png`` use, and what the environments' ``render_mode="rgb_array"``
returns. It only reads the battle. :func:`render_gif` animates a replay, one
frame per game turn (``battleline replay --gif``).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import patheffects
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Polygon, Rectangle
from matplotlib.text import Text

from battleline.env.rules.state import SIDES, BattleState, UnitState

SIDE_COLOURS = ("#2f6db5", "#c0392b")
"""Fill colour of blue's and red's units."""
SIDE_DARK = ("#163a66", "#6e1a12")
"""Front edge, outline and arrow colour of blue's and red's units."""

TERRAIN_STYLE: dict[str, dict[str, Any]] = {
    "hill": {"fc": "#d9c48f", "ec": "#9c8550", "hatch": None, "group": "hill"},
    "woods": {"fc": "#5c9a4f", "ec": "#2f5e27", "hatch": "oo", "group": "woods"},
    "marsh": {"fc": "#9cc7b4", "ec": "#4d7f6b", "hatch": "--", "group": "difficult"},
    "ford": {"fc": "#a9d2ea", "ec": "#5b8fb0", "hatch": "..", "group": "difficult"},
    "rubble": {"fc": "#c2b8a8", "ec": "#7d7263", "hatch": "..", "group": "difficult"},
    "hedge": {"fc": "#2e6b2a", "ec": "#1b3f19", "hatch": None, "group": "obstacle"},
    "fence": {"fc": "#a0703c", "ec": "#5e3f1c", "hatch": None, "group": "obstacle"},
    "wall": {"fc": "#8c8c8c", "ec": "#4a4a4a", "hatch": None, "group": "obstacle"},
    "building": {"fc": "#6d4c41", "ec": "#3b2a24", "hatch": "xx", "group": "impassable"},
    "rocks": {"fc": "#77736e", "ec": "#3d3a37", "hatch": "xx", "group": "impassable"},
    "lake": {"fc": "#4f8fc9", "ec": "#2b5a85", "hatch": "~~", "group": "impassable"},
}
"""Face colour, edge colour, hatch and category of each terrain kind (CORE.TERRAIN.TYPES)."""

_UNKNOWN_TERRAIN = {"fc": "#cccccc", "ec": "#666666", "hatch": "//", "group": "other"}
_TABLE_COLOUR = "#eef2e3"


def _units_and_context(battle_or_state: Any, events: list[dict[str, Any]] | None):
    """(state, events, scenario dict or None, result dict or None, battle or None)."""
    if isinstance(battle_or_state, BattleState):
        state, battle = battle_or_state, None
    elif hasattr(battle_or_state, "state") and isinstance(battle_or_state.state, BattleState):
        battle = battle_or_state
        state = battle.state
    else:
        raise TypeError(f"render_battle needs a Battle or a BattleState, got {type(battle_or_state).__name__}")
    if events is None:
        events = list(getattr(battle, "events", None) or [])
    scenario = getattr(battle, "scenario", None) if battle is not None else None
    result = None
    for ev in reversed(events):
        if ev.get("rule") == "CORE.VP.RESULT":
            result = ev
            break
    if result is None and battle is not None and state.over:
        result = battle.result
    return state, events, scenario, result, battle


def _initial_positions(scenario: dict[str, Any] | None, state: BattleState) -> dict[int, tuple[float, float, float]]:
    """Positions of explicitly placed units at the scenario's start (uid -> (x, y, facing)).

    A side's units are its placements, in order (``env.rules.setup.build_state``).
    """
    out: dict[int, tuple[float, float, float]] = {}
    for side, name in enumerate(SIDES):
        placements = ((scenario or {}).get(name) or {}).get("placements")
        if not placements:
            continue
        units = [u for u in state.units if u.side == side]
        if len(units) != len(placements):
            continue
        for u, p in zip(units, placements):
            out[u.uid] = (float(p["x"]), float(p["y"]), float(p["facing"]))
    return out


def charge_paths(
    events: list[dict[str, Any]], initial: dict[int, tuple[float, float, float]] | None = None
) -> list[dict[str, Any]]:
    """The charges that reached contact, reconstructed from an event log.

    Positions are tracked from every event that carries ``unit``, ``x`` and
    ``y`` (deployment, moves, flight, pursuit, charge moves); the start of a
    charge is the charger's position at its ``CORE.CHARGE.DECLARE``.

    Args:
        events: the battle's event log (dicts with ``rule``).
        initial: known starting positions, uid -> (x, y, facing), for units
            placed by the scenario rather than deployed.

    Returns:
        A list of dicts ``{unit, target, turn, start: (x, y), end: (x, y)}`` in
        inches, in the order the charges were made. Charges whose start is
        unknown are left out.
    """
    pos: dict[int, tuple[float, float]] = {k: (v[0], v[1]) for k, v in (initial or {}).items()}
    declared: dict[int, tuple[float, float]] = {}
    paths = []
    for ev in events:
        rule = ev.get("rule", "")
        unit = ev.get("unit")
        if not isinstance(unit, int):
            continue
        if rule == "CORE.CHARGE.DECLARE":
            if unit in pos:
                declared[unit] = pos[unit]
            continue
        if "x" not in ev or "y" not in ev:
            continue
        end = (float(ev["x"]), float(ev["y"]))
        if rule == "CORE.CHARGE.MOVE":
            start = declared.pop(unit, pos.get(unit))
            if start is not None:
                paths.append({"unit": unit, "target": ev.get("target"), "turn": ev.get("turn", 0), "start": start,
                              "end": end})
        pos[unit] = end
    return paths


def _corners(x: float, y: float, facing: float, width: float, depth: float) -> np.ndarray:
    """Footprint corners (front-left, front-right, rear-right, rear-left), shape (4, 2), inches."""
    f = math.radians(facing)
    fwd = np.array([math.cos(f), math.sin(f)])
    left = np.array([-math.sin(f), math.cos(f)])
    c = np.array([x, y])
    hw, hd = width / 2.0, depth / 2.0
    return np.array([c + fwd * hd + left * hw, c + fwd * hd - left * hw, c - fwd * hd - left * hw,
                     c - fwd * hd + left * hw])


def _wrap(name: str, width: float) -> str:
    """The name broken into lines about as wide as a unit ``width`` inches wide."""
    return "\n".join(textwrap.wrap(name, width=max(7, int(width * 2.8)), break_long_words=False)) or name


def _draw_unit(ax: Any, u: UnitState, last_pos: tuple[float, float, float] | None, last_models: int | None,
               font: float) -> Text:
    """Draw one unit (footprint, ranks, front edge, facing arrow) and return its label."""
    destroyed = u.removed or u.models <= 0
    x, y, facing = (u.x, u.y, u.facing)
    width, depth = u.width, u.depth
    if destroyed:
        if last_pos is not None:
            x, y, facing = last_pos
        # Draw the footprint it had before its last losses.
        n = u.models if u.models > 0 else max(1, last_models or u.start_models)
        width = min(u.files, n) * u.base_w
        depth = math.ceil(n / max(1, u.files)) * u.base_d
    corners = _corners(x, y, facing, width, depth)
    colour, dark = SIDE_COLOURS[u.side], SIDE_DARK[u.side]
    outline = [patheffects.withStroke(linewidth=2.2, foreground="white")]
    if destroyed:
        ax.add_patch(Polygon(corners, closed=True, fill=False, ec=dark, lw=1.0, ls="--", alpha=0.7, zorder=4))
        for a, b in ((0, 2), (1, 3)):
            ax.plot(*zip(corners[a], corners[b]), color=dark, lw=1.2, alpha=0.7, zorder=4)
        return ax.text(x, y, _wrap(u.name, width), ha="center", va="center", fontsize=font * 0.9, color="#444444",
                       style="italic", linespacing=0.95, zorder=7, path_effects=outline, clip_on=True)
    alpha = 0.3 if u.fleeing else 0.75
    ax.add_patch(Polygon(corners, closed=True, fc=colour, ec=dark, lw=0.8, alpha=alpha,
                         ls="--" if u.fleeing else "-", zorder=4))
    # Rank lines: one line across the unit between consecutive ranks.
    f = math.radians(facing)
    fwd = np.array([math.cos(f), math.sin(f)])
    for r in range(1, u.ranks):
        a = corners[0] - fwd * r * u.base_d
        b = corners[1] - fwd * r * u.base_d
        ax.plot(*zip(a, b), color=dark, lw=0.45, alpha=alpha, zorder=5)
    # Front edge and a facing arrow from its middle.
    ax.plot(*zip(corners[0], corners[1]), color=dark, lw=2.6, alpha=min(1.0, alpha + 0.25),
            solid_capstyle="butt", zorder=6)
    mid = (corners[0] + corners[1]) / 2.0
    tip = mid + fwd * 1.4
    ax.add_patch(FancyArrowPatch(tuple(mid), tuple(tip), arrowstyle="-|>", mutation_scale=9, color=dark,
                                 lw=1.2, alpha=min(1.0, alpha + 0.25), zorder=6))
    label = f"{_wrap(u.name, width)}\n{u.models}" + (" fleeing" if u.fleeing else "")
    return ax.text(x, y, label, ha="center", va="center", fontsize=font, linespacing=0.95,
                   color="#555555" if u.fleeing else "#111111", zorder=7, path_effects=outline, clip_on=True)


def separate_labels(ax: Any, labels: list[Text], renderer: Any, passes: int = 4, pad: float = 1.0) -> int:
    """Move unit labels apart vertically where their boxes overlap (a character's label inside its unit's).

    Args:
        ax: the table's matplotlib ``Axes``; ``labels`` are placed in its data coordinates (inches).
        labels: the unit labels, in drawing order; an earlier label never moves for a later one.
        renderer: the figure canvas's renderer, which measures the text boxes (pixels).
        passes: how many times every pair is compared at most.
        pad: the gap left between two separated boxes, in pixels.

    Of an overlapping pair the later label moves up or down, away from the earlier one's
    centre, by the overlap plus ``pad``; labels keep their x and nothing is redrawn.

    Returns:
        The number of moves made (0 when nothing overlapped).
    """
    moves = 0
    to_data = ax.transData.inverted()
    for _ in range(passes):
        moved = False
        boxes = [lab.get_window_extent(renderer) for lab in labels]
        for j in range(len(labels)):
            for i in range(j):
                a, b = boxes[i], boxes[j]
                if not a.overlaps(b):
                    continue
                up = (b.y0 + b.y1) >= (a.y0 + a.y1)
                shift = (a.y1 - b.y0 + pad) if up else -(b.y1 - a.y0 + pad)  # pixels
                x, y = labels[j].get_position()
                px, py = ax.transData.transform((x, y))
                labels[j].set_position(tuple(to_data.transform((px, py + shift))))
                boxes[j] = labels[j].get_window_extent(renderer)
                moves += 1
                moved = True
        if not moved:
            break
    return moves


def _title(state: BattleState, scenario: dict[str, Any] | None, result: dict[str, Any] | None,
           title: str | None) -> str:
    name = (scenario or {}).get("name") or state.scenario
    turn = f"turn {state.turn}/{state.max_turns}" if state.turn else "deployment"
    if result and result.get("winner"):
        vp = result.get("vp", {})
        score = f"{vp.get('blue', 0)}–{vp.get('red', 0)} VP"
        outcome = "draw" if result["winner"] == "draw" else f"{result['winner']} wins"
        status = f"{outcome}, {score}"
    elif state.over:
        status = "game over"
    else:
        status = "in progress"
    line = f"{name} — {turn} — {status}"
    return f"{title}\n{line}" if title else line


CASTLE_DAMAGE_CMAP = "YlOrRd"
"""Colour ramp of a castle element's accumulated damage bonus (SIEGE.DMG.VALUE), 0 to :data:`CASTLE_DAMAGE_TOP`."""
CASTLE_DAMAGE_TOP = 6
GATE_COLOURS = {"closed": "#5d4037", "open": "#ffffff", "smashed": "#a1887f", "destroyed": "#ffffff"}
EQUIPMENT_COLOUR = "#6d4c2f"


def castle_colour(bonus: int) -> tuple[float, float, float, float]:
    """Fill colour of a standing element with damage bonus ``bonus``: pale at 0, dark red at 6 or more."""
    from matplotlib import colormaps

    return colormaps[CASTLE_DAMAGE_CMAP](0.08 + 0.85 * min(bonus, CASTLE_DAMAGE_TOP) / CASTLE_DAMAGE_TOP)


def _draw_castle(ax: Any, state: BattleState, font: float) -> list[Patch]:
    """Draw the castle: elements coloured by damage, outlined in their controller's colour; parapets lost
    hatched, breaches as a gap, ruins dashed, gates by state; then each unit's siege equipment.

    Returns the legend handles of what was drawn.
    """
    from battleline.env.rules.siege.castle import breach_gap, element_under

    drawn: dict[str, Patch] = {}
    for e in state.castle:
        pts = np.asarray(e.polygon, dtype=float)
        edge = SIDE_DARK[e.controller] if e.controller is not None else "#333333"
        if e.kind == "gate":
            fc = GATE_COLOURS.get(e.gate, "#5d4037")
            ax.add_patch(Polygon(pts, closed=True, fc=fc, ec=edge, lw=1.2, ls="--" if e.gate == "destroyed" else "-",
                                 hatch="xx" if e.gate == "smashed" else None, zorder=2.3))
            drawn.setdefault(f"gate {e.gate}", Patch(fc=fc, ec="#333333", hatch="xx" if e.gate == "smashed" else None,
                                                      label=f"gate {e.gate}"))
        elif e.collapsed:
            ax.add_patch(Polygon(pts, closed=True, fill=False, ec="#4e342e", lw=1.2, ls="--", zorder=2.3))
            drawn.setdefault("ruins", Patch(fc=TERRAIN_STYLE["rubble"]["fc"], ec="#4e342e", ls="--", label="ruins"))
        else:
            ax.add_patch(Polygon(pts, closed=True, fc=castle_colour(e.damage_bonus), ec=edge, lw=1.4,
                                 hatch="//" if e.parapet_destroyed else None, zorder=2.2))
            if e.parapet_destroyed:
                drawn.setdefault("parapet lost", Patch(fc=castle_colour(2), ec="#333333", hatch="//",
                                                       label="parapet lost"))
            if e.breached:
                gap = np.asarray(breach_gap(e).exterior.coords, dtype=float)
                ax.add_patch(Polygon(gap, closed=True, fc=_TABLE_COLOUR, ec="#4e342e", lw=0.9, ls=":", zorder=2.25))
                drawn.setdefault("breach", Patch(fc=_TABLE_COLOUR, ec="#4e342e", ls=":", label="breach"))
        cx, cy = pts.mean(axis=0)
        if e.kind != "gate":
            label = e.id + (f" +{e.damage_bonus}" if e.damage_bonus else "")
            ax.text(cx, cy, label, ha="center", va="center", fontsize=font, color="#212121", zorder=2.4,
                    path_effects=[patheffects.withStroke(linewidth=1.5, foreground="white", alpha=0.8)])
    drawn.setdefault("castle", Patch(fc=castle_colour(0), ec="#333333", label="castle (darker: damaged)"))
    for u in state.units:
        if u.alive and u.deployed and u.marks.get("siege"):
            _draw_equipment(ax, u, drawn, up=element_under(state, u) is not None)
    return list(drawn.values())


def _draw_equipment(ax: Any, u: UnitState, drawn: dict[str, Patch], up: bool = False) -> None:
    """A unit's siege gear ahead of its front edge: a 4" x 4" siege tower, a ram, ladders, hooks (left
    behind, not drawn, once the unit is ``up`` on the castle); a cauldron a dot on the front."""
    gear = dict(u.marks["siege"])
    if up:
        gear = {k: v for k, v in gear.items() if k in ("oil", "blood", "metal", "alchemical")}
    rad = math.radians(u.facing)
    fx, fy = math.cos(rad), math.sin(rad)
    lx, ly = -fy, fx
    front = (u.x + fx * u.depth / 2, u.y + fy * u.depth / 2)
    if gear.get("siege_tower"):
        ax.add_patch(Polygon(_corners(front[0] + fx * 2.0, front[1] + fy * 2.0, u.facing, 4.0, 4.0), closed=True,
                             fc="#a1887f", ec=EQUIPMENT_COLOUR, lw=1.2, hatch="||", alpha=0.9, zorder=5.5))
        drawn.setdefault("siege tower", Patch(fc="#a1887f", ec=EQUIPMENT_COLOUR, hatch="||", label="siege tower"))
    if gear.get("ram") or gear.get("protected_ram"):
        tip = (front[0] + fx * 1.6, front[1] + fy * 1.6)
        ax.plot([front[0], tip[0]], [front[1], tip[1]], color=EQUIPMENT_COLOUR, lw=4.5, solid_capstyle="butt",
                zorder=5.5)
        drawn.setdefault("ram", Patch(fc=EQUIPMENT_COLOUR, ec=EQUIPMENT_COLOUR, label="ram"))
    n = int(gear.get("ladders", 0))
    for k in range(n):
        off = (k - (n - 1) / 2) * min(1.2, u.width / max(n, 1))
        bx, by = front[0] + lx * off, front[1] + ly * off
        for side in (-0.18, 0.18):
            ax.plot([bx + lx * side, bx + lx * side + fx * 1.3], [by + ly * side, by + ly * side + fy * 1.3],
                    color=EQUIPMENT_COLOUR, lw=0.9, zorder=5.5)
    if n:
        drawn.setdefault("ladders", Patch(fc="none", ec=EQUIPMENT_COLOUR, label="ladders"))
    if gear.get("hooks"):
        ax.plot([front[0]], [front[1]], marker="^", ms=5, color=EQUIPMENT_COLOUR,
                zorder=5.5)
        drawn.setdefault("hooks", Patch(fc=EQUIPMENT_COLOUR, ec=EQUIPMENT_COLOUR, label="hooks"))
    if any(gear.get(c) for c in ("oil", "blood", "metal", "alchemical")):
        ax.plot([front[0]], [front[1]], marker="o", ms=5, color="#ef6c00", mec="#4e342e", zorder=5.6)
        drawn.setdefault("cauldron", Patch(fc="#ef6c00", ec="#4e342e", label="cauldron"))


def render_battle(
    battle_or_state: Any,
    path: str | Path | None = None,
    title: str | None = None,
    events: list[dict[str, Any]] | None = None,
    dpi: int = 100,
) -> np.ndarray | None:
    """Draw the table: terrain, deployment zones, units, charge paths and a title.

    Units are drawn as their footprints (CORE.GEO.FOOTPRINT) in their side's
    colour with a dark front edge and a facing arrow, one thin line per rank
    boundary, and a label "name (models)". Fleeing units are faded and dashed;
    destroyed units are a dashed, crossed outline at their last known position.
    Charges that reached contact are arrows from the charger's position at
    declaration to its contact position (see :func:`charge_paths`). Deployment
    zones are shaded when the log shows a deployment (CORE.SETUP.ZONES).

    Args:
        battle_or_state: a :class:`~env.rules.battle.Battle` or a bare
            :class:`~env.rules.state.BattleState`.
        path: write a PNG here (parent folders are created); None returns the image.
        title: an extra first line of the title (scenario, turn and result
            are always shown).
        events: the event log to use; defaults to the battle's. A bare state
            without events gets no charge arrows and no result.
        dpi: resolution; the figure is 12 x 8.6 inches (1200 x 860 pixels at 100 dpi).

    Returns:
        With ``path`` None, the image as a ``numpy.uint8`` array of shape
        (H, W, 3), RGB; otherwise None.

    Raises:
        TypeError: ``battle_or_state`` is neither a Battle nor a BattleState.
    """
    state, events, scenario, result, battle = _units_and_context(battle_or_state, events)
    W, H = float(state.table_w), float(state.table_h)

    fig = Figure(figsize=(12, 8.6), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_axes((0.04, 0.11, 0.92, 0.80))
    ax.set_xlim(-0.5, W + 0.5)
    ax.set_ylim(-0.5, H + 0.5)
    ax.set_aspect("equal")
    ax.set_xticks(np.arange(0, W + 0.01, 6))
    ax.set_yticks(np.arange(0, H + 0.01, 6))
    ax.tick_params(labelsize=7, length=2, colors="#666666")
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.add_patch(Rectangle((0, 0), W, H, fc=_TABLE_COLOUR, ec="#555555", lw=1.2, zorder=0))
    ax.grid(True, color="#d5dbc7", lw=0.5, zorder=0.5)
    ax.set_axisbelow(True)
    font = 6.5

    # Deployment zones.
    if any(ev.get("rule") == "CORE.SETUP.ZONES" for ev in events) or (not events and state.phase == "deployment"):
        zone = float(state.queue.get("zone_depth", 12.0))
        # each label inside its own zone, just behind the zone's front line
        for side, (y0, label_y, va) in enumerate(((0.0, zone, "top"), (H - zone, H - zone, "bottom"))):
            ax.add_patch(Rectangle((0, y0), W, zone, fc=SIDE_COLOURS[side], alpha=0.07, lw=0, zorder=1))
            ax.plot([0, W], [label_y, label_y], color=SIDE_COLOURS[side], lw=0.8, ls=(0, (4, 3)), alpha=0.6, zorder=1)
            ax.text(0.6, label_y + (-0.3 if side == 0 else 0.3), f"{SIDES[side]} deployment zone",
                    fontsize=6.5, color=SIDE_DARK[side], alpha=0.8, va=va, zorder=1)

    # Terrain.
    legend: dict[str, Patch] = {}
    for t in state.terrain:
        st = TERRAIN_STYLE.get(t.kind, _UNKNOWN_TERRAIN)
        pts = np.asarray(t.polygon, dtype=float)
        ax.add_patch(Polygon(pts, closed=True, fc=st["fc"], ec=st["ec"], lw=1.0, hatch=st["hatch"], alpha=0.85,
                             zorder=2))
        if t.name:
            cx, cy = pts.mean(axis=0)
            below = st["group"] == "obstacle"
            ax.text(cx, cy - (0.9 if below else 0.0), t.name, ha="center", va="top" if below else "center",
                    fontsize=6.5, color="#333333", style="italic", zorder=3,
                    path_effects=[patheffects.withStroke(linewidth=1.8, foreground="white", alpha=0.7)])
        label = t.kind if st["group"] in ("hill", "woods", "other") else f"{t.kind} ({st['group']})"
        legend.setdefault(label, Patch(fc=st["fc"], ec=st["ec"], hatch=st["hatch"], label=label))

    # A siege's castle and the siege equipment (SIEGE.*).
    if state.castle:
        for h in _draw_castle(ax, state, font):
            legend.setdefault(str(h.get_label()), h)

    # Charge paths, under the units.
    initial = _initial_positions(scenario, state)
    paths = charge_paths(events, initial)
    last_turn = max((p["turn"] for p in paths), default=0)
    for p in paths:
        side = state.units[p["unit"]].side if 0 <= p["unit"] < len(state.units) else 0
        recent = p["turn"] == last_turn
        ax.add_patch(FancyArrowPatch(p["start"], p["end"], arrowstyle="-|>", mutation_scale=14,
                                     color=SIDE_DARK[side], lw=1.6 if recent else 1.0, ls="-",
                                     alpha=0.85 if recent else 0.45, shrinkA=0, shrinkB=0, zorder=3.5))
        mx, my = (p["start"][0] + p["end"][0]) / 2, (p["start"][1] + p["end"][1]) / 2
        ax.text(mx, my, f"T{p['turn']}", fontsize=6, color=SIDE_DARK[side], ha="center", va="center", zorder=3.6,
                clip_on=True,
                path_effects=[patheffects.withStroke(linewidth=1.5, foreground="white")])

    # Units: last known positions for destroyed ones.
    last_pos: dict[int, tuple[float, float, float]] = dict(initial)
    last_models: dict[int, int] = {}
    for ev in events:
        if isinstance(ev.get("unit"), int) and isinstance(ev.get("models"), int) and ev["models"] > 0:
            last_models[ev["unit"]] = ev["models"]
        if isinstance(ev.get("unit"), int) and "x" in ev and "y" in ev:
            prev = last_pos.get(ev["unit"], (0.0, 0.0, 0.0))
            heading = ev.get("facing") if isinstance(ev.get("facing"), (int, float)) else ev.get("heading")
            last_pos[ev["unit"]] = (float(ev["x"]), float(ev["y"]),
                                    float(heading) if isinstance(heading, (int, float)) else prev[2])
    labels = []
    for u in sorted(state.units, key=lambda u: (not (u.removed or u.models <= 0), u.uid)):
        if not u.deployed and u.uid not in last_pos:
            continue
        labels.append(_draw_unit(ax, u, last_pos.get(u.uid), last_models.get(u.uid), font))
    separate_labels(ax, labels, canvas.get_renderer())

    # Legend: sides, unit states, terrain kinds present.
    handles: list[Any] = [
        Patch(fc=SIDE_COLOURS[0], ec=SIDE_DARK[0], alpha=0.75, label="blue unit"),
        Patch(fc=SIDE_COLOURS[1], ec=SIDE_DARK[1], alpha=0.75, label="red unit"),
        Patch(fc="#999999", ec="#444444", alpha=0.3, ls="--", label="fleeing"),
        Line2D([], [], color="#444444", marker="x", ls="--", lw=1, label="destroyed"),
    ]
    if paths:
        handles.append(Line2D([], [], color="#444444", lw=1.4, marker=">", markevery=[1], label="charge (turn)"))
    handles += list(legend.values())
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.045), ncol=min(len(handles), 10),
              fontsize=7.5, frameon=False, handlelength=1.6, columnspacing=1.2)
    fig.suptitle(_title(state, scenario, result, title), fontsize=11, y=0.975)
    ax.text(W, -1.6, "blue's edge (y = 0)", ha="right", va="top", fontsize=6.5, color=SIDE_DARK[0])
    ax.text(W, H + 1.6, "red's edge (y = 48)" if H == 48 else f"red's edge (y = {H:g})", ha="right",
            va="bottom", fontsize=6.5, color=SIDE_DARK[1])

    if path is not None:
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, format="png", dpi=dpi)
        return None
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    return np.ascontiguousarray(rgba[..., :3], dtype=np.uint8)


def turn_states(battle: Any) -> Iterator[Any]:
    """Re-simulate ``battle`` from its scenario, seed and actions, yielding the battle at the start of
    every game turn (after deployment; ``state.turn`` changes), then at the end.

    The same :class:`~env.rules.battle.Battle` object is yielded each time, advanced in place.

    Raises:
        env.rules.actions.IllegalActionError: a saved action is not legal on re-simulation.
    """
    from battleline.env.rules.battle import Battle

    shown, stage, sim = None, None, None
    for sim in Battle.replaying(battle.scenario, battle.seed, battle.actions):
        now = (sim.state.turn, sim.state.phase == "deployment")
        # the set-up table when the armies are placed, then each change of game turn or of deployment
        if (now != stage and stage is not None) or (stage is None and not now[1]):
            shown = sim.state.step
            yield sim
        stage = now
    if sim is not None and shown != sim.state.step:
        yield sim


def render_gif(battle: Any, path: str | Path, title: str | None = None, dpi: int = 60, fps: float = 1.0) -> int:
    """Write an animated GIF of ``battle``: one :func:`render_battle` frame per game turn (:func:`turn_states`),
    and a last one of the final table.

    Every frame is drawn before the file is opened, so a battle that cannot be re-simulated writes nothing.
    Frames go through matplotlib's ``PillowWriter``; parent folders are created.

    Args:
        battle: a :class:`~env.rules.battle.Battle` (its scenario, seed and actions are replayed).
        path: the GIF file.
        title: an extra first title line on every frame.
        dpi: frame resolution, > 0 (the figure is 12 x 8.6 inches: 720 x 516 pixels at 60 dpi).
        fps: frames (game turns) per second, > 0.

    Returns:
        The number of frames written.

    Raises:
        ValueError: ``dpi`` or ``fps`` not positive; a saved action is not legal on re-simulation
            (:class:`~env.rules.actions.IllegalActionError`).
    """
    from matplotlib.animation import PillowWriter

    if not dpi > 0 or not fps > 0 or not math.isfinite(fps):
        raise ValueError(f"dpi and fps must be positive, got dpi={dpi!r}, fps={fps!r}")
    frames = [render_battle(state, title=title, dpi=dpi) for state in turn_states(battle)]
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(12, 8.6), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    image = ax.imshow(frames[0], interpolation="nearest")
    writer = PillowWriter(fps=fps)
    with writer.saving(fig, str(out), dpi):
        for rgb in frames:
            image.set_data(rgb)
            writer.grab_frame()
    return len(frames)
