"""Siege orders: the decisions and automatic steps the siege adds to the turn.

Called by the engine modules only when ``state.castle`` is not empty:

* Shooting phase — a war machine may fire at a castle element instead of a
  unit: ``Action("shoot", machine, None, "element:<id>")``, a cannon also
  with a double charge, ``"double_charge:<id>"`` (+1 on the table, two
  artillery dice) (:func:`element_shots`, :func:`fire_order`,
  :func:`fire_at_element`; SIEGE.DMG.CANNON,
  SIEGE.DMG.TEMPLATE, SIEGE.DMG.GATE_SHOTS, SIEGE.DMG.VALUE). Units on an
  element that rolled 15–16 skip their next Shooting phase
  (:func:`start_shooting`; SIEGE.DMG.WALL, SIEGE.DMG.TOWER).
* Movement phase — ``Action("move", unit, None, "gate_open:<id>")`` /
  ``"gate_close:<id>"`` (SIEGE.CASTLE.GATE) and ``"occupy:<id>"``: a wall
  section from outside (SIEGE.CAPTURE.UNDEFENDED), or an undefended tower
  or the citadel through its door (SIEGE.TOWER.ASSAULT)
  (:func:`legal_moves`, :func:`apply_move`); the same ``"occupy:<id>"``
  steps a unit up from the courtyard onto a wall section in contact with it
  that holds no enemy, for half its Movement (SIEGE.MOVE.WALLS,
  :func:`step_up_orders`); ``"through_gate:<id>"`` takes a unit wider than
  the gateway through an open or broken gate, squeezing through and
  re-forming on the far side (SIEGE.CASTLE.GATE, :func:`squeeze_orders`).
* Close Combat phase — before the fights, every unengaged unit of the
  phasing player in contact with an enemy castle element strikes it: a ram
  blow (SIEGE.EQUIP.RAM, SIEGE.EQUIP.PROTECTED_RAM), else one blow per model
  in contact (SIEGE.DMG.MELEE) (:func:`structure_blows`).

DEFAULT readings (the sources are silent):

* "in contact" with an element is within :data:`CONTACT` inches of it;
* a war machine's shot at an element needs the element within range and,
  except a stone thrower's indirect fire, a line from its muzzle to the
  element not crossing blocking terrain or another standing element; a bolt
  thrower's bolt strikes an element without a roll to hit;
* a stone thrower aims at the element's centre and then scatters as usual
  (CORE.WM.STONE.AIM / INDIRECT): models under the template are hit as usual
  (CORE.WM.STONE.DAMAGE), and the element under the hole is struck
  automatically; off every element, the aimed-at element is struck on a 4+;
* a unit gives at most one gate order per turn; a gate with a unit in its
  gateway cannot be closed; a smashed or destroyed gate cannot be moved;
* an undefended tower is entered through its door from the courtyard or
  from a wall section the unit's side holds next to it, walking along the
  wall up to M to the door (SIEGE.TOWER.ASSAULT, SIEGE.MOVE.WALLS): the
  whole unit must fit on the top, where it stands
  centred, squared to the tower, as many files as fit across; a defended
  tower is assaulted at its door by a charge instead
  (:func:`env.rules.siege.play.door_element`);
* a unit occupying a section needs one full rank of it to fit on the
  section; the whole unit then stands on the walls in one rank
  (SIEGE.CASTLE.WALL), facing the courtyard, reaching onto neighbouring
  walls and towers as needed; it must not have moved this phase;
* stepping up from the courtyard (SIEGE.MOVE.WALLS) needs the unit's centre
  in the courtyard, its footprint in contact with the section's inner face
  and one full rank of it fitting on the section; the unmoved unit spends
  M/2 and its move ends there, in one rank, on its own side's wall front
  flush with the outer face facing out, on the enemy's facing the courtyard
  (as a unit taking it);
* a unit wider than the gateway squeezes through an open, smashed or
  destroyed gate (siege.md §3.3) from in contact with its outer or inner
  face, unmoved, with the gateway empty of other units: the move costs the
  gap to the gate + the wall's depth + the unit's depth, against M (M/2
  through a smashed gate); the unit re-forms in the same formation centred
  on the gate, rear edge against the far face, facing its way of travel. A
  unit going out that falls short is placed there all the same (it "comes
  out"); one going in must have the movement to clear the gate.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from shapely.geometry import LineString, Point

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.actions import Action
from battleline.env.rules.siege import damage as dmg
from battleline.env.rules.siege import equipment as eq
from battleline.env.rules.siege.castle import (
    NO_ENTRY_TYPES,
    NO_WALL_TYPES,
    CastleElement,
    castle_area,
    courtyard,
    element,
    element_under,
    units_in,
    units_on,
)
from battleline.env.rules.t9a import ARTILLERY
from battleline.env.rules.t9a import artillery as t9a_artillery
from battleline.env.rules.t9a import on as t9a_on

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

ELEMENT = "element:"
"""Option prefix of a war machine's shot at a castle element."""
DOUBLE_CHARGE = "double_charge:"
"""Option prefix of a cannon's shot at a castle element with a double charge (SIEGE.DMG.CANNON)."""
GATE_OPEN, GATE_CLOSE, OCCUPY, THROUGH_GATE = "gate_open:", "gate_close:", "occupy:", "through_gate:"
MOVE_PREFIXES = (GATE_OPEN, GATE_CLOSE, OCCUPY, THROUGH_GATE)
"""Option prefixes of the siege's ``move`` orders."""
CONTACT = 1.0
"""DEFAULT: inches within which a unit counts as in contact with a castle element."""
STONE_ELEMENT_ROLL = 4
"""SIEGE.DMG.TEMPLATE: off the element, the stone strikes it on a 4+."""


def split(option: str | None, prefix: str) -> str | None:
    """The element id of an option with ``prefix`` ("element:G" → "G"), else None."""
    if option is None or not option.startswith(prefix):
        return None
    return option[len(prefix):]


def is_siege_move(option: str | None) -> bool:
    """Whether a ``move`` option is a siege order (gate or occupy)."""
    return option is not None and option.startswith(MOVE_PREFIXES)


# --------------------------------------------------------------------- war machines at elements
def _muzzle_towards(u: UnitState, p: tuple[float, float]) -> tuple[float, float]:
    """The middle of ``u``'s front edge once pivoted to face point ``p``."""
    facing = geo.facing_towards((u.x, u.y), p) if (u.x, u.y) != p else u.facing
    fl, fr = geo.front_edge(geo.Pose(u.x, u.y, facing), u.width, u.depth)
    return ((fl[0] + fr[0]) / 2, (fl[1] + fr[1]) / 2)


def aim_point(e: CastleElement) -> tuple[float, float]:
    """Where shots at ``e`` are aimed: its centre (inches)."""
    c = e.shape().centroid
    return (c.x, c.y)


def _clear_line(battle: Battle, u: UnitState, e: CastleElement, mz: tuple[float, float]) -> bool:
    """No blocking terrain and no other standing element (``e``'s own wall section aside) cross muzzle → ``e``."""
    near = e.shape().exterior.interpolate(e.shape().exterior.project(Point(mz)))
    line = LineString([mz, (near.x, near.y)])
    own = element_under(battle.state, u)
    skip = {e.id, e.parent, own.id if own else None}
    for o in battle.state.castle:
        if o.id in skip or o.kind == "gate" or not o.standing:
            continue
        if line.crosses(o.shape()) or line.within(o.shape()):
            return False
    return not any(line.intersects(space.terrain_poly(t)) for t in battle.state.terrain if t.kind in space.BLOCKING)


def element_modes(battle: Battle, u: UnitState, e: CastleElement) -> list[str]:
    """How war machine ``u`` may fire at element ``e`` now: [] or ["shot"], ["direct", "indirect"], ["indirect"].

    Only an enemy castle's standing elements; only cannons and stone throwers
    and bolt throwers (SIEGE.DMG.CANNON, SIEGE.DMG.TEMPLATE); a gate only by
    cannons and bolt throwers (SIEGE.DMG.GATE_SHOTS); in range; in sight
    except for a stone thrower's indirect fire.
    """
    from battleline.env.rules.war_machine_profiles import MACHINES

    kind = str(u.missile)
    if e.defender == u.side or not e.standing or kind not in MACHINES:
        return []
    if t9a_on(battle.state, ARTILLERY) and not t9a_artillery.strikes_elements(u):
        return []  # CFG.SIEGE_T9A: only cannons, bolt throwers and catapults
    if kind not in dmg.CANNONS and kind not in ("stone_thrower", "bolt_thrower"):
        return []
    if e.kind == "gate" and kind not in dmg.FLAT_TRAJECTORY:
        return []
    m = MACHINES[kind]
    target = aim_point(e)
    mz = _muzzle_towards(u, target)
    if kind == "stone_thrower":
        d = math.dist(mz, target)
        if not m.min_range - geo.EPS <= d <= m.max_range + geo.EPS:
            return []
        return ["direct", "indirect"] if _clear_line(battle, u, e, mz) else ["indirect"]
    if e.shape().distance(Point(mz)) > m.max_range + geo.EPS or not _clear_line(battle, u, e, mz):
        return []
    return ["shot"]


def element_shots(battle: Battle, u: UnitState) -> list[Action]:
    """The legal shots of war machine ``u`` at castle elements: one per element it may strike, then for a
    cannon the same shots with a double charge (SIEGE.DMG.CANNON)."""
    ids = [e.id for e in battle.state.castle if element_modes(battle, u, e)]
    doubles = ids if u.missile in dmg.CANNONS and not t9a_on(battle.state, ARTILLERY) else []  # CFG.SIEGE_T9A: none
    return [Action("shoot", u.uid, None, ELEMENT + i) for i in ids] + [
        Action("shoot", u.uid, None, DOUBLE_CHARGE + i) for i in doubles]


def fire_order(battle: Battle, u: UnitState, option: str | None) -> str:
    """Carry out a shot at a castle element, option ``"element:<id>"`` or ``"double_charge:<id>"``
    (:func:`fire_at_element`); ValueError for any other option."""
    eid = split(option, ELEMENT)
    if eid is not None:
        return fire_at_element(battle, u, eid)
    eid = split(option, DOUBLE_CHARGE)
    if eid is None:
        raise ValueError(f"not a shot at a castle element: {option!r}")
    return fire_at_element(battle, u, eid, double_charge=True)


def fire_at_element(battle: Battle, u: UnitState, eid: str, double_charge: bool = False) -> str:
    """Fire war machine ``u`` at castle element ``eid``; returns the damage row, "misfire" or "missed".

    The machine pivots to face the element (CORE.WM.MOVE). Cannon: SIEGE.DMG.CANNON
    (a MISFIRE goes to CORE.WM.MISFIRE.CANNON), with ``double_charge`` two
    artillery dice, a MISFIRE on either misfiring, and +1 on the table
    (ValueError for any other machine); bolt thrower: D3 + S; a gate:
    SIEGE.DMG.GATE_SHOTS. Stone thrower: aim, artillery and scatter dice as
    CORE.WM.STONE.AIM / INDIRECT, the template's hits on models, then
    SIEGE.DMG.TEMPLATE on the element under the hole (the gate's section for
    a gate), else on the aimed-at element on a 4+.
    """
    from battleline.env.rules import war_machine_shots as wm
    from battleline.env.rules.dice import HIT, MISFIRE
    from battleline.env.rules.war_machine_profiles import machine

    e = element(battle.state, eid)
    ms = element_modes(battle, u, e)
    if not ms:
        raise ValueError(f"unit {u.uid} cannot fire at castle element {eid!r} now")
    if double_charge and u.missile not in dmg.CANNONS:
        raise ValueError(f"unit {u.uid} ({u.missile}) is no cannon: no double charge (SIEGE.DMG.CANNON)")
    target = aim_point(e)
    _face(battle, u, target)
    if t9a_on(battle.state, ARTILLERY):
        return t9a_artillery.fire_at_element(battle, u, e)  # CFG.SIEGE_T9A
    battle.emit("CORE.WM.FIRE_RULES", unit=u.uid, element=eid, machine=u.missile, mode=ms[0], bs=u.profile.BS,
                crew=u.models, double_charge=double_charge)
    if u.missile != "stone_thrower":
        row = dmg.machine_hit(battle, u, e, double_charge=double_charge)
        if row == "misfire":
            wm.cannon_misfire(battle, u)
        return row
    indirect = ms[0] == "indirect"
    rule = "CORE.WM.STONE.INDIRECT" if indirect else "CORE.WM.STONE.AIM"
    n = battle.dice.artillery(rule)
    kind, theta = battle.dice.scatter(rule)
    if n == MISFIRE:
        battle.emit(rule, unit=u.uid, element=eid, roll=MISFIRE, scatter=kind)
        wm.stone_misfire(battle, u)
        return "misfire"
    moved = (max(0, int(n) - u.profile.BS) if indirect else 0) if kind == HIT else int(n)
    centre = (target[0] + moved * math.cos(math.radians(theta)), target[1] + moved * math.sin(math.radians(theta)))
    battle.emit(rule, unit=u.uid, element=eid, aim_point=list(target), roll=n, scatter=kind, direction=theta,
                scattered=moved, centre=list(centre))
    wm.stone_damage(battle, u, centre)
    under = _element_at(battle, u, centre)
    if under is not None:
        return dmg.stone_thrower_hit(battle, under, True, strength=machine(u).centre_strength or dmg.STONE_BASE_S,
                                     shooter=u.uid)
    return dmg.stone_thrower_hit(battle, e, False, strength=machine(u).centre_strength or dmg.STONE_BASE_S,
                                 shooter=u.uid)


def _element_at(battle: Battle, u: UnitState, p: tuple[float, float]) -> CastleElement | None:
    """The enemy castle's standing element under point ``p``; a gate counts as its wall section."""
    pt = Point(p)
    hit = [e for e in battle.state.castle if e.defender != u.side and e.standing and e.shape().covers(pt)]
    walls = [e for e in hit if e.kind != "gate"]
    if walls:
        return walls[0]
    for g in hit:
        return element(battle.state, g.parent) if g.parent else None
    return None


def _face(battle: Battle, u: UnitState, p: tuple[float, float]) -> None:
    """CORE.WM.MOVE: the free pivot towards ``p`` when the pivoted footprint is legal."""
    facing = geo.facing_towards((u.x, u.y), p)
    turn = abs((facing - u.facing + 180.0) % 360.0 - 180.0)
    if turn < 0.5:
        return
    poly = space.footprint_at(u, geo.Pose(u.x, u.y, facing))
    if space.Surroundings(battle.state, u).blocked(poly, poly, gap=2 * geo.EPS):
        battle.emit("CORE.WM.MOVE", unit=u.uid, pivot=turn, free=True, blocked=True)
        return
    u.facing = facing
    battle.emit("CORE.WM.MOVE", unit=u.uid, pivot=turn, free=True, facing=facing)


def start_shooting(battle: Battle) -> None:
    """SIEGE.DMG.WALL / TOWER 15–16: the phasing units that rolled 4+ may not shoot in this Shooting phase."""
    s = battle.state
    for e in s.castle:
        keep = []
        for uid in e.no_shoot:
            u = battle.unit(uid)
            if u.side == s.active:
                u.flags["siege_no_shoot"] = True
                battle.emit(dmg.table_rule(e), element=e.id, unit=uid, row="heavily_damaged", shooting_lost=True)
            else:
                keep.append(uid)
        e.no_shoot = keep


# --------------------------------------------------------------------- gates and undefended walls
def inside(state, u: UnitState) -> bool:
    """Whether ``u``'s centre is inside the castle (the courtyard or an element)."""
    return castle_area(state).covers(Point(u.x, u.y))


def _can_order(battle: Battle, u: UnitState) -> bool:
    from battleline.env.rules import psychology

    return u.alive and not u.fleeing and not psychology.engaged(battle, u) and not u.flags.get("siege_order")


def gate_orders(battle: Battle, u: UnitState) -> list[Action]:
    """SIEGE.CASTLE.GATE: ``u`` (two or more models inside the castle, not a lone character) opens a closed
    gate or closes an open one with no unit in the gateway, at no cost."""
    s = battle.state
    if u.models < 2 or u.character or u.troop_type == "war_machine" or not _can_order(battle, u) or not inside(s, u):
        return []
    out = []
    for g in s.castle:
        if g.kind != "gate":
            continue
        if g.gate == "closed":
            out.append(Action("move", u.uid, None, GATE_OPEN + g.id))
        elif g.gate == "open" and not _gateway_busy(s, g):
            out.append(Action("move", u.uid, None, GATE_CLOSE + g.id))
    return out


def _gateway_busy(state, g: CastleElement, but: int | None = None) -> bool:
    shape = g.shape().buffer(-geo.EPS)
    return any(u.alive and u.uid != but and space.footprint(u).intersects(shape) for u in state.units)


SQUEEZE_GAP = 0.01
"""Inches between a squeezed unit's rear edge and the gate's far face (clear of the wall)."""


def squeeze(battle: Battle, u: UnitState, g: CastleElement) -> tuple[geo.Pose, float, float, bool] | None:
    """How ``u`` would squeeze through gate ``g`` (siege.md §3.3, SIEGE.CASTLE.GATE): (pose on the far side,
    inches the move costs, inches it may move, whether it is going out), or None when it may not.

    ``u`` must be wider than the gateway, in contact with one face of a passable gate, the gateway free of
    other units and the far-side place clear; going in it must have the movement to clear the gate.
    """
    from battleline.env.rules.siege.castle import passable

    s = battle.state
    if g.kind != "gate" or not passable(g) or u.width <= g.length + geo.EPS or element_under(s, u) is not None:
        return None
    going_out = inside(s, u)
    near, far = (g.inner_face(), g.outer_face()) if going_out else (g.outer_face(), g.inner_face())
    fp = space.footprint(u)
    gap = near.distance(fp)
    if gap > CONTACT + geo.EPS or _gateway_busy(s, g, but=u.uid):
        return None
    cost = gap + g.depth + u.depth
    allowed = u.profile.M / 2 if g.gate == "smashed" else float(u.profile.M)
    if not going_out and cost > allowed + geo.EPS:
        return None
    heading = g.outward if going_out else (g.outward + 180.0) % 360.0
    m = far.interpolate(0.5, normalized=True)
    off = u.depth / 2 + SQUEEZE_GAP
    pose = geo.Pose(m.x + off * math.cos(math.radians(heading)), m.y + off * math.sin(math.radians(heading)), heading)
    end = space.footprint_at(u, pose)
    if space.Surroundings(s, u).blocked(end, end):
        return None
    return pose, cost, allowed, going_out


def squeeze_orders(battle: Battle, u: UnitState) -> list[Action]:
    """siege.md §3.3, SIEGE.CASTLE.GATE: ``u`` (unmoved, no character or war machine) squeezes through each
    gate :func:`squeeze` allows: ``Action("move", uid, None, "through_gate:<id>")``."""
    if not _may_take(battle, u, frozenset()):
        return []
    return [Action("move", u.uid, None, THROUGH_GATE + g.id) for g in battle.state.castle
            if g.kind == "gate" and squeeze(battle, u, g) is not None]


def in_contact(u: UnitState, e: CastleElement) -> bool:
    """Whether ``u``'s footprint is within :data:`CONTACT` inches of ``e``."""
    return e.shape().distance(space.footprint(u)) <= CONTACT + geo.EPS


def _may_take(battle: Battle, u: UnitState, barred: frozenset[str]) -> bool:
    """Whether ``u`` may take an element this Movement phase: a unit (no character, war machine or troop type
    in ``barred``) that may still move (CORE.MOVE.REMAINING) and give an order."""
    from battleline.env.rules.movement import can_move

    if u.troop_type in barred or u.troop_type == "war_machine" or u.character:
        return False
    return can_move(battle, u) and _can_order(battle, u)


def occupy_orders(battle: Battle, u: UnitState) -> list[Action]:
    """SIEGE.CAPTURE.UNDEFENDED: ``u``, unmoved, takes an undefended standing wall section of the enemy castle
    on which one full rank of it fits, stepping onto the walls in one rank facing the courtyard (the whole
    unit, reaching onto the next sections as needed): from outside with climbing gear, in contact with the
    section's outer face; or along the walls (SIEGE.MOVE.WALLS) from a wall or tower its side holds that
    adjoins the section."""
    s = battle.state
    if not _may_take(battle, u, NO_WALL_TYPES):
        return []
    here = element_under(s, u)
    if here is None and not eq.has_climbing_gear(u):
        return []
    if here is not None and here.controller != u.side:
        return []
    out = []
    for e in s.castle:
        if e.kind != "wall" or not e.standing or e.defender == u.side or e is here or units_on(s, e):
            continue
        if e.capacity(u.base_w) < u.files:
            continue
        if here is None and e.outer_face().distance(space.footprint(u)) > CONTACT + geo.EPS:
            continue
        if here is not None and here.shape().distance(e.shape()) > geo.EPS:
            continue
        if _placement(battle, e, u) is not None:
            out.append(Action("move", u.uid, None, OCCUPY + e.id))
    return out


def in_courtyard(state, u: UnitState) -> bool:
    """Whether ``u``'s centre stands in the courtyard (open ground inside the castle, off every element)."""
    return element_under(state, u) is None and courtyard(state).covers(Point(u.x, u.y))


def step_up_orders(battle: Battle, u: UnitState) -> list[Action]:
    """SIEGE.MOVE.WALLS: ``u`` (not cavalry, a chariot, a war machine or a character; unmoved) in the
    courtyard steps up onto a standing wall section whose inner face it touches (within :data:`CONTACT`)
    and which holds no enemy, for half its Movement, when one full rank of it fits on the section
    (SIEGE.CASTLE.WALL): ``Action("move", uid, None, "occupy:<id>")``."""
    s = battle.state
    if not _may_take(battle, u, NO_WALL_TYPES) or not in_courtyard(s, u):
        return []
    fp = space.footprint(u)
    out = []
    for e in s.castle:
        if e.kind != "wall" or not e.standing or e.capacity(u.base_w) < u.files:
            continue
        if any(o.side != u.side for o in units_on(s, e)) or e.inner_face().distance(fp) > CONTACT + geo.EPS:
            continue
        if _placement(battle, e, u) is not None:
            out.append(Action("move", u.uid, None, OCCUPY + e.id))
    return out


def tower_orders(battle: Battle, u: UnitState) -> list[Action]:
    """SIEGE.TOWER.ASSAULT, SIEGE.MOVE.WALLS: ``u`` (not cavalry or a large creature, unmoved) enters an
    undefended tower or the citadel of the enemy castle through its door, from the courtyard or from a wall
    section its side holds next to it, when the whole unit fits on the top (SIEGE.CASTLE.TOWER)."""
    s = battle.state
    if not _may_take(battle, u, NO_ENTRY_TYPES):
        return []
    here = element_under(s, u)
    if here is not None and (here.kind != "wall" or here.controller != u.side):
        return []
    if here is None and not inside(s, u):
        return []
    out = []
    for e in s.castle:
        if not e.is_tower or not e.standing or e.defender == u.side or e is here:
            continue
        reach = u.profile.M if here is not None else CONTACT  # along the walls to the door, or at it
        if any(o.side != u.side for o in units_in(s, e)) or e.shape().distance(space.footprint(u)) > reach + geo.EPS:
            continue
        if here is not None and here.shape().distance(e.shape()) > geo.EPS:
            continue  # the section must adjoin the tower
        if e.capacity(u.base_w, u.base_d) < u.models or _tower_pose(battle, e, u) is None:
            continue
        out.append(Action("move", u.uid, None, OCCUPY + e.id))
    return out


def _tower_pose(battle: Battle, e: CastleElement, u: UnitState) -> tuple[geo.Pose, int] | None:
    """``u`` on ``e``'s top: centred, facing as now squared to the tower, as many files as fit; None if not clear."""
    x0, y0, x1, y1 = e.shape().bounds
    c = e.shape().centroid
    facing = round(u.facing / 90.0) * 90.0 % 360.0
    across = (x1 - x0) if facing in (90.0, 270.0) else (y1 - y0)
    files = max(1, min(u.models, int(math.floor(across / u.base_w + 1e-9))))
    pose = geo.Pose(c.x, c.y, facing)
    return (pose, files) if _clear_up_there(battle, u, pose, files) else None


def legal_moves(battle: Battle) -> list[Action]:
    """Every siege ``move`` order of the phasing player now (gates, undefended sections and towers)."""
    acts: list[Action] = []
    for u in space.alive_units(battle.state, battle.state.active):
        acts += gate_orders(battle, u) + occupy_orders(battle, u) + tower_orders(battle, u) + step_up_orders(battle, u)
        acts += squeeze_orders(battle, u)
    return list(dict.fromkeys(acts))


def apply_move(battle: Battle, action: Action) -> None:
    """Carry out a siege ``move`` order (it must be legal)."""
    u = battle.unit(action.unit)
    u.flags["siege_order"] = True
    opt = action.option or ""
    for prefix, state in ((GATE_OPEN, "open"), (GATE_CLOSE, "closed")):
        gid = split(opt, prefix)
        if gid is not None:
            g = element(battle.state, gid)
            g.gate = state
            dmg.forget_moves(battle)
            battle.emit("SIEGE.CASTLE.GATE", element=gid, unit=u.uid, gate=state, models=u.models)
            return
    gid = split(opt, THROUGH_GATE)
    if gid is not None:
        _squeeze_through(battle, u, element(battle.state, gid))
        return
    eid = split(opt, OCCUPY)
    if eid is None:
        raise ValueError(f"not a siege order: {opt!r}")
    e = element(battle.state, eid)
    from battleline.env.rules import characters

    if e.is_tower:
        placed = _tower_pose(battle, e, u)
        if placed is None:
            raise ValueError(f"unit {u.uid} cannot enter {eid!r}")
        pose, files = placed
        came_from = element_under(battle.state, u)
        u.x, u.y, u.facing, u.files = pose.x, pose.y, pose.facing, files
        u.flags["moved"] = True
        e.controller = u.side
        characters.sync(battle.state)
        battle.emit("SIEGE.TOWER.ASSAULT", element=eid, unit=u.uid, undefended=True,
                    via=came_from.id if came_from else "courtyard", x=u.x, y=u.y, controller=u.side)
        return
    if in_courtyard(battle.state, u):
        _step_up(battle, e, u)
        return
    pose = _placement(battle, e, u)
    if pose is None:
        raise ValueError(f"unit {u.uid} cannot occupy {eid!r}")
    came_from = element_under(battle.state, u)
    u.x, u.y, u.facing, u.files = pose.x, pose.y, pose.facing, u.models
    u.flags["moved"] = True
    e.controller = u.side
    characters.sync(battle.state)
    battle.emit("SIEGE.CAPTURE.UNDEFENDED", element=eid, unit=u.uid, cost=u.profile.M / 2, x=u.x, y=u.y,
                controller=u.side, via=came_from.id if came_from else "outside")
    if came_from is not None:
        battle.emit("SIEGE.MOVE.WALLS", unit=u.uid, start=came_from.id, end=eid)


def _squeeze_through(battle: Battle, u: UnitState, g: CastleElement) -> None:
    """siege.md §3.3, SIEGE.CASTLE.GATE: ``u`` squeezes through gate ``g`` and re-forms on the far side."""
    from battleline.env.rules import characters

    how = squeeze(battle, u, g)
    if how is None:
        raise ValueError(f"unit {u.uid} cannot squeeze through {g.id!r}")
    pose, cost, allowed, going_out = how
    u.x, u.y, u.facing = pose.x, pose.y, pose.facing
    u.flags["moved"] = True
    characters.sync(battle.state)
    battle.emit("SIEGE.CASTLE.GATE", element=g.id, unit=u.uid, gate=g.gate, squeeze=True, width=round(u.width, 3),
                gateway=g.length, way="out" if going_out else "in", cost=round(cost, 3), allowed=allowed,
                came_out_short=going_out and cost > allowed + geo.EPS, x=round(u.x, 3), y=round(u.y, 3),
                facing=u.facing)


def _step_up(battle: Battle, e: CastleElement, u: UnitState) -> None:
    """SIEGE.MOVE.WALLS: ``u`` steps up from the courtyard onto wall section ``e`` in one rank (M/2; its move ends)."""
    from battleline.env.rules import characters

    pose = _placement(battle, e, u)
    if pose is None:
        raise ValueError(f"unit {u.uid} cannot step up onto {e.id!r}")
    u.x, u.y, u.facing, u.files = pose.x, pose.y, pose.facing, u.models
    u.flags["moved"] = True
    e.controller = u.side
    characters.sync(battle.state)
    battle.emit("SIEGE.MOVE.WALLS", unit=u.uid, start="courtyard", end=e.id, cost=u.profile.M / 2,
                x=u.x, y=u.y, facing=u.facing, controller=u.side)


def _placement(battle: Battle, e: CastleElement, u: UnitState) -> geo.Pose | None:
    """Where ``u`` stands on wall ``e`` in one rank, nearest its position; None when that place is not clear."""
    from battleline.env.rules.siege.play import wall_pose

    pose = wall_pose(e, u, inward=e.defender != u.side)
    return pose if _clear_up_there(battle, u, pose, u.models) else None


def _clear_up_there(battle: Battle, u: UnitState, pose: geo.Pose, files: int) -> bool:
    """Whether ``u`` in ``files`` files at ``pose`` stands legally on the castle (SIEGE.MOVE.WALLS end rules)
    and clear of the units up there (:func:`_too_close`); ``u`` itself is left as it was."""
    old = (u.x, u.y, u.facing, u.files)
    u.x, u.y, u.facing, u.files = pose.x, pose.y, pose.facing, files
    try:
        poly = space.footprint(u)
        env = space.Surroundings(battle.state, u)
        return env.castle_end is not None and bool(env.castle_end(poly)) and not _too_close(env, poly, battle.state)
    finally:
        u.x, u.y, u.facing, u.files = old


def _too_close(env: space.Surroundings, poly, state=None) -> bool:
    """Another unit within 1" of ``poly`` (CORE.MOVE.ONE_INCH); with ``state``, only units up on the walls
    and towers count (those on the ground below stand at another level), overlaps always."""
    import shapely

    near = env.near(poly, 1.0)
    if not near.any():
        return False
    gaps = shapely.distance(poly, env.polys[near])
    if state is None:
        return bool((gaps < 1.0 - geo.EPS).any())
    up = np.array([element_under(state, state.units[int(i)]) is not None for i in env.uids[near]], dtype=bool)
    return bool(((gaps < 1.0 - geo.EPS) & up).any() or (gaps <= geo.EPS).any())


# --------------------------------------------------------------------- blows on the structure
def _models_in_contact(u: UnitState, e: CastleElement) -> int:
    """Front-rank models of ``u`` whose bases lie within :data:`CONTACT` inches of ``e``."""
    shape = e.shape()
    centres = geo.model_centres(space.pose(u), u.files, u.models, u.base_w, u.base_d)[: min(u.files, u.models)]
    reach = CONTACT + max(u.base_w, u.base_d) / 2
    return sum(1 for x, y in centres if shape.distance(Point(x, y)) <= reach + geo.EPS)


def structure_blows(battle: Battle) -> None:
    """Start of the phasing player's Close Combat phase: unengaged units in contact strike enemy castle elements.

    A unit with a ram strikes a gate it touches (else a wall section or tower)
    once (SIEGE.EQUIP.RAM / PROTECTED_RAM: 7 + D6); any other unit (not a
    chariot or war machine, not fleeing) makes one automatic blow per model in
    contact (SIEGE.DMG.MELEE), on a gate before a wall.
    """
    from battleline.env.rules import psychology

    s = battle.state
    for u in space.alive_units(s, s.active):
        if u.fleeing or u.troop_type in ("chariot", "war_machine") or psychology.engaged(battle, u):
            continue
        touching = [e for e in s.castle if e.defender != u.side and e.standing and in_contact(u, e)]
        if not touching:
            continue
        e = min(touching, key=lambda x: (x.kind != "gate", x.id))
        gear = eq.carried(u)
        if gear.get("ram") or gear.get("protected_ram"):
            dmg.ram_blow(battle, e, unit=u.uid, protected=bool(gear.get("protected_ram")))
            continue
        n = _models_in_contact(u, e)
        if n:
            dmg.melee_blows(battle, u, e, n)
