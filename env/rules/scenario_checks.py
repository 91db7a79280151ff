"""Scenario checks: what a parsed scenario may not do across its files (CORE.SETUP.*, CORE.TERRAIN.TYPES,
SIEGE.SCEN.*, SIEGE.EQUIP.TABLE): unknown or invalid armies, points over the limit, placements off the table,
on impassable terrain, on each other or where the castle forbids them, and units with no room to deploy.

Each problem is a (file, "field path: message") pair (:data:`Problem`); distances are in inches.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from shapely import union_all
from shapely.geometry import Polygon, box

from battleline.env.rules.config_files import army_path, display_path, list_armies, list_factions
from battleline.env.rules.config_models import EPS, IMPASSABLE, fmt_num, footprint, load_army, load_faction
from battleline.env.rules.scenario_models import PlacementConfig, ScenarioConfig

if TYPE_CHECKING:
    from battleline.env.rules.state import BattleState


Problem = tuple[str | None, str]
"""(file, "field path: message"); file None means the scenario's own file."""


def scenario_errors(s: ScenarioConfig) -> list[Problem]:
    """All semantic problems of a parsed scenario, in file order (see :func:`load_scenario`).

    Raises ConfigError when a referenced faction file is itself broken.
    """
    from battleline.env.rules.siege.castle import build_castle

    problems: list[Problem] = [(None, p) for p in _table_errors(s)]
    shapes: list[tuple[str, Polygon]] = []
    castle = build_castle(s) if s.siege else []
    for name in ("blue", "red"):
        problems += _side_errors(s, name, shapes, castle)
    problems += [(None, p) for p in _overlap_errors(shapes)]
    problems += _castle_errors(s, shapes, castle)
    if not problems:
        problems += _room_errors(s)
    return problems


def _room_errors(s: ScenarioConfig) -> list[Problem]:
    """Room to deploy every unit of the army lists, checked on the state the scenario starts from (built once):
    a siege defender's inside the castle (:func:`_castle_room_errors`), everyone else's in their zone
    (:func:`_zone_fit_errors`). Explicit placements need neither."""
    if any(s.side(n).placements is not None for n in ("blue", "red")):
        return []
    from battleline.env.rules.setup import build_state

    state = build_state(s)
    defender = (s.castle.defender if s.castle is not None else "blue") if s.siege else None
    return _castle_room_errors(state, defender) + _zone_fit_errors(s, state, defender)


def _zone_fit_errors(s: ScenarioConfig, state: BattleState, defender: str | None) -> list[Problem]:
    """A unit deployed from an army list into a zone (CORE.SETUP.ZONES: wholly inside) must fit in it: a
    formation deeper than the zone or wider than the table could never deploy (the siege's ``defender``, inside
    the castle, has :func:`_castle_room_errors`; Scouts deploy outside the zones)."""
    problems: list[Problem] = []
    for u in state.units:
        name = ("blue", "red")[u.side]
        if name == defender or u.joined_to is not None or u.has("scouts"):
            continue
        if u.depth > s.zone_depth + EPS or u.width > s.table[0] + EPS:
            problems.append((None, f"{name}.army: '{u.name}' ({u.models} models in {u.files} file{'s' * (u.files != 1)}) is "
                                   f"{fmt_num(round(u.width, 1))}\" wide and {fmt_num(round(u.depth, 1))}\" deep "
                                   f"and cannot stand wholly inside the {fmt_num(s.zone_depth)}\" deployment zone "
                                   f"of the {s.table_text()} table (CORE.SETUP.ZONES); give it more files"))
    return problems


def _castle_room_errors(state: BattleState, defender: str | None) -> list[Problem]:
    """A siege ``defender`` deployed from an army list needs room inside the castle for every unit
    (SIEGE.SCEN.DEPLOY: courtyard or front walls; :func:`env.rules.siege.room.plan`), or the scenario is refused."""
    if defender is None:
        return []
    from battleline.env.rules.siege import room

    crowded = room.plan(state)[1]
    return [] if crowded is None else [(None, f"{defender}.army: {room.no_room_text(crowded)}")]


def _table_errors(s: ScenarioConfig) -> list[str]:
    errors = []
    if 2 * s.zone_depth >= s.table[1]:
        errors.append(f"zone_depth: two {fmt_num(s.zone_depth)}\" zones leave no room on a {s.table_text()} table")
    table = box(0, 0, *s.table).buffer(EPS, join_style="mitre")
    for i, t in enumerate(s.terrain):
        if not table.covers(t.shape()):
            errors.append(f"terrain[{i}]: {t.kind} '{t.name}' is not wholly on the {s.table_text()} table")
    placed = [n for n in ("blue", "red") if s.side(n).placements is not None]
    if len(placed) == 1:  # explicit placements start the game past deployment: both sides or neither
        other = "red" if placed[0] == "blue" else "blue"
        errors.append(f"{other}.army: {placed[0]} has explicit placements, so {other} needs them too "
                      f"(a scenario places both sides or neither)")
    if s.start is not None and len(placed) < 2:
        errors.append("start: needs placements on both sides (a game from deployment, with army lists, "
                      "starts at turn 1; leave 'start' out)")
    if s.start is None and placed:
        errors.append(f"start: {placed[0]} has explicit placements, so 'start' (turn, phase, player) is required")
    if s.start is not None and s.start.turn > s.turns:
        errors.append(f"start.turn: turn {s.start.turn} is after the last turn ({s.turns})")
    if not placed:  # a siege's attacker deploys on the grid too (the defender inside the castle)
        errors += _deployment_grid_errors(s)
    return errors


DEPLOYMENT_TABLE_WIDTH = 72.0
"""The table width (inches) the deployment slots of CORE.SETUP.DEPLOY are laid out for (columns 6-66")."""

DEPLOYMENT_ZONE_DEPTH = 12.0
"""The zone depth (inches) the deployment rows (3", 7" and 11" from the own edge) are laid out for."""


def _deployment_grid_errors(s: ScenarioConfig) -> list[str]:
    """A battle deployed from army lists uses the fixed slot grid of CORE.SETUP.DEPLOY (the action space's
    deploy block): other table widths or zone depths would silently lose units that find no slot."""
    errors = []
    if abs(s.table[0] - DEPLOYMENT_TABLE_WIDTH) > EPS:
        errors.append(f"table: army lists deploy on the slot grid of a {fmt_num(DEPLOYMENT_TABLE_WIDTH)}\" wide "
                      f"table, not {fmt_num(s.table[0])}\" (give explicit placements for another width)")
    if abs(s.zone_depth - DEPLOYMENT_ZONE_DEPTH) > EPS:
        errors.append(f"zone_depth: army lists deploy in rows 3-11\" from the edge, a "
                      f"{fmt_num(DEPLOYMENT_ZONE_DEPTH)}\" zone, not {fmt_num(s.zone_depth)}\" "
                      f"(give explicit placements for another zone)")
    return errors


def _side_errors(s: ScenarioConfig, name: str, shapes: list[tuple[str, Polygon]], castle: list[Any]) -> list[Problem]:
    """Problems of one side; appends the placements' footprints to ``shapes``."""
    from battleline.env.rules.army import army_points, check_entry, check_joins, check_labels, entries_points, validate_army

    side = s.side(name)
    if side.faction is None:  # an army list without a faction whose file is missing (SideConfig)
        return [(None, f"{name}.army: unknown army list '{side.army}'")]
    if side.faction not in list_factions():
        return [(None, f"{name}.faction: unknown faction '{side.faction}'")]
    faction = load_faction(side.faction)
    if side.army is not None:
        if side.army not in list_armies():
            return [(None, f"{name}.army: unknown army list '{side.army}'")]
        army = load_army(side.army, validate=False)
        if army.faction != side.faction:
            return [(None, f"{name}.army: '{side.army}' is a '{army.faction}' army, not '{side.faction}'")]
        errors = validate_army(army, faction)
        if errors:
            return [(display_path(army_path(side.army)), errors[0])]
        return _points_errors(s, name, f"{name}.army: '{side.army}' is", army_points(army, faction))
    problems: list[Problem] = [
        (None, f"{name}.{e}") for e in check_labels(side.placements or [], "placements")
        + check_joins(side.placements or [], faction, "placements")
    ]
    generals = [i for i, p in enumerate(side.placements or []) if p.general]
    if len(generals) > 1:
        problems.append((None, f"{name}.placements[{generals[1]}].general: a side has at most one general"))
    for i, p in enumerate(side.placements or []):
        where = f"{name}.placements[{i}]"
        unit_type = faction.unit(p.unit)
        if unit_type is None:
            problems.append((None, f"{where}.unit: unknown unit '{p.unit}' for faction '{faction.id}'"))
            continue
        problems += [(None, e) for e in check_entry(where, p, unit_type)]
        if p.equipment:  # SIEGE.EQUIP.TABLE
            from battleline.env.rules.siege.equipment import check_unit

            problems += [(None, e) for e in check_unit(where, p.equipment, p.models, unit_type.troop_type, faction.id)]
        if p.general and not unit_type.character:
            problems.append((None, f"{where}.general: the general must be a character, '{p.unit}' is not"))
        if p.files > p.models or p.joins is not None:
            continue  # a joined character stands in its host's front rank
        one_base = unit_type.troop_type == "war_machine"  # the crew stands on one base (CORE.GEO.BASES)
        fp = footprint(unit_type.base_mm(), 1 if one_base else p.models, 1 if one_base else p.files, p.x, p.y, p.facing)
        problems += [(None, f"{where}: {e}") for e in _placement_errors(s, p, fp)]
        if castle:
            ranks = 1 if one_base else math.ceil(p.models / p.files)
            problems += [(None, f"{where}: {e}")
                         for e in _castle_placement_errors(castle, unit_type.troop_type, ranks, p.x, p.y, fp)]
        shapes.append((f"{where}: unit at ({p.x:.1f}, {p.y:.1f})", fp))
    if not problems:  # the total needs known units, options and command models
        pts = entries_points(side.placements or [], faction)
        problems += _points_errors(s, name, f"{name}.placements: the units are", pts)
    return problems


def _points_errors(s: ScenarioConfig, name: str, what: str, points: int) -> list[Problem]:
    """Side ``name`` at ``points`` points over what it may field (CORE.SETUP.ARMIES; a siege's attacker:
    SIEGE.SCEN.POINTS, :meth:`ScenarioConfig.points_limit_of`); ``what`` opens the message with the field and its
    subject, e.g. "blue.placements: the units are"."""
    limit = s.points_limit_of(name)
    if points <= limit:
        return []
    if limit == s.points_limit:
        return [(None, f"{what} {points:,} points, over the scenario's {limit:,}-point limit")]
    return [(None, f"{what} {points:,} points, over the attacker's {limit:,}-point limit "
                   f"({fmt_num(s.attacker_points_ratio)} x the scenario's {s.points_limit:,}, SIEGE.SCEN.POINTS)")]


def _placement_errors(s: ScenarioConfig, p: PlacementConfig, fp: Polygon) -> list[str]:
    at = f"unit at ({p.x:.1f}, {p.y:.1f})"
    if not box(0, 0, *s.table).buffer(EPS, join_style="mitre").covers(fp):
        return [f"{at} is off the {s.table_text()} table"]
    inner = fp.buffer(-EPS, join_style="mitre")
    return [
        f"{at} overlaps impassable {t.kind}" + (f" '{t.name}'" if t.name else f" (terrain[{j}])")
        for j, t in enumerate(s.terrain)
        if t.kind in IMPASSABLE and inner.intersects(t.shape())
    ]


def _castle_placement_errors(castle: list[Any], troop_type: str, ranks: int, x: float, y: float,
                             fp: Polygon) -> list[str]:
    """What forbids a unit of ``troop_type`` in ``ranks`` ranks, centred at (x, y), to stand where it is placed on
    the castle: cavalry and chariots never on walls or towers (SIEGE.MOVE.WALLS), large creatures not in a tower
    (SIEGE.CASTLE.TOWER), war machines only on towers and the citadel (SIEGE.CASTLE.TOWER), and one rank on a
    wall section (SIEGE.CASTLE.WALL); a unit off the castle (footprint ``fp``) may not reach into a wall section.
    A unit whose centre is over a gate stands in the gateway, below the parapet."""
    from shapely.geometry import Point

    from battleline.env.rules.siege.castle import MACHINE_SLOTS, NO_ENTRY_TYPES, NO_WALL_TYPES

    centre, inner = Point(x, y), fp.buffer(-0.02, join_style="mitre")
    gate = next((g for g in castle if g.kind == "gate" and g.shape().covers(centre)), None)
    walls = union_all([w.shape() for w in castle if w.kind != "gate"]).buffer(0.01, join_style="mitre")
    if gate is not None and not walls.covers(fp):  # in the gateway: it may fill the gate, not the wall beside it
        wall = next((w for w in castle if w.kind == "wall" and
                     inner.intersection(w.shape()).difference(gate.shape()).area > 1e-6), None)
        return [] if wall is None else [f"stands in the gateway of {gate.id} but reaches into wall {wall.id} "
                                        f"(SIEGE.CASTLE.WALL)"]
    e = next((e for e in castle if e.kind != "gate" and e.shape().covers(centre)), None)
    if e is None:
        wall = next((w for w in castle if w.kind == "wall" and inner.intersects(w.shape())), None)
        return [] if wall is None else [f"stands inside wall {wall.id}: a unit on a wall has its centre on it and "
                                        f"stands in one rank (SIEGE.CASTLE.WALL)"]
    if troop_type in NO_WALL_TYPES:
        return [f"{troop_type} may not stand on {e.kind} {e.id} (SIEGE.MOVE.WALLS)"]
    if e.kind != "wall" and troop_type in NO_ENTRY_TYPES:
        return [f"{troop_type} may not enter {e.kind} {e.id} (SIEGE.CASTLE.TOWER)"]
    if troop_type == "war_machine" and not MACHINE_SLOTS.get(e.kind, 0):
        return [f"a war machine may not stand on {e.kind} {e.id}: only towers and the citadel hold machines "
                f"(SIEGE.CASTLE.TOWER)"]
    if e.kind == "wall" and ranks > 1:
        return [f"a unit on wall {e.id} stands in one rank (SIEGE.CASTLE.WALL), not {ranks}"]
    return []


def _castle_errors(s: ScenarioConfig, shapes: list[tuple[str, Polygon]], castle: list[Any]) -> list[Problem]:
    """Siege equipment only in a siege, on its own side (SIEGE.EQUIP.TABLE; an army list's ``castle_equipment``
    only on the defender's); the castle, standard or custom, lies wholly on the table and its elements overlap
    neither each other (a gate lies in its wall section) nor impassable terrain; no attacker's placement stands on
    or in a tower or the citadel: one enters those only from an adjacent element one holds
    (SIEGE.MOVE.WALLS) and at the start the defender holds every element. (An attacker may stand on a wall
    section: it climbs there from outside.)

    ``shapes``: the placements' footprints from :func:`_side_errors`; ``castle``: the scenario's castle elements
    (:func:`env.rules.siege.castle.build_castle`, built once by :func:`scenario_errors`; empty outside a siege).
    """
    from battleline.env.rules.siege.equipment import cauldron_errors, side_errors

    errors: list[Problem] = []
    defender = s.castle.defender if s.castle is not None else "blue"
    for name in ("blue", "red"):
        side = s.side(name)
        in_army = side.placements is None and side.army in list_armies()
        entries = side.placements if side.placements is not None else (
            load_army(side.army, validate=False).units if in_army else [])
        army_file = f"{name}.army: {display_path(army_path(str(side.army)))}"
        where = f"{army_file}: units" if in_army else f"{name}.placements"
        role = "defender" if name == defender else "attacker"
        if in_army and any(load_army(side.army, validate=False).castle_equipment.values()) and (
                not s.siege or role == "attacker"):
            errors.append((None, f"{army_file}: castle_equipment: " + (
                "castle equipment needs the siege module" if not s.siege
                else f"castle equipment is the defender's ({defender}), and this side is the attacker")))
        elif in_army and s.siege and role == "defender":
            from battleline.env.rules.siege.castle import bought_gate_errors

            errors += [(None, f"{army_file}: {p}") for p in bought_gate_errors(s)]
        for i, e in enumerate(entries):
            if e.equipment and not s.siege:
                errors.append((None, f"{where}[{i}].equipment: siege equipment needs the siege module"))
            elif e.equipment:
                errors += [(None, p) for p in side_errors(f"{where}[{i}]", e.equipment, role)]
        if side.placements is not None and s.siege:  # an army list's cauldrons are counted by validate_army
            errors += [(None, p) for p in cauldron_errors(where, [e.equipment for e in side.placements])]
    if not s.siege:
        return errors
    table = box(0, 0, *s.table).buffer(EPS, join_style="mitre")
    standard = s.castle is None or s.castle.layout == "standard"
    for i, e in enumerate(castle):
        if table.covers(e.shape()):
            continue
        if standard:  # SIEGE.SCEN.CASTLE: x 18-54, y 0-18 from the defender's edge
            errors.append((None, f"castle: the standard castle's {e.kind} '{e.id}' is not wholly on the "
                                 f"{s.table_text()} table (it needs at least 54x18 from the defender's edge)"))
            return errors
        errors.append((None, f"castle.elements[{i}]: {e.kind} '{e.id}' is not wholly on the {s.table_text()} table"))
    for i, e in enumerate(castle):
        inner = e.shape().buffer(-EPS, join_style="mitre")
        for other in castle[:i]:
            if e.parent != other.id and other.parent != e.id and inner.intersects(other.shape()):
                errors.append((None, f"castle.elements[{i}] overlaps {other.id}: castle elements may touch, "
                                     f"not overlap (a gate lies inside its 'parent' wall section)"))
        errors += [(None, f"castle: {e.kind} '{e.id}' overlaps impassable {t.kind}"
                          + (f" '{t.name}'" if t.name else f" (terrain[{j}])"))
                   for j, t in enumerate(s.terrain) if t.kind in IMPASSABLE and inner.intersects(t.shape())]
    attacker = "red" if defender == "blue" else "blue"
    towers = [e for e in castle if e.kind in ("tower", "citadel")]
    for where, fp in shapes:
        if not where.startswith(f"{attacker}."):
            continue
        inner = fp.buffer(-EPS, join_style="mitre")
        hit = next((e for e in towers if inner.intersects(e.shape())), None)
        if hit is not None:
            errors.append((None, f"{where.split(':')[0]} overlaps {hit.kind} {hit.id}: a tower is entered only from "
                                 f"a held element (SIEGE.MOVE.WALLS) and at the start the defender ({defender}) "
                                 f"holds them all"))
    return errors


def _overlap_errors(shapes: list[tuple[str, Polygon]]) -> list[str]:
    errors = []
    for j, (where, fp) in enumerate(shapes):
        inner = fp.buffer(-EPS, join_style="mitre")
        for other, other_fp in shapes[:j]:
            if inner.intersects(other_fp):
                errors.append(f"{where} overlaps {other.split(':')[0]}")
    return errors
