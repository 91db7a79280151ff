"""Charges: declaration, reactions, charge rolls and charge moves.

Rules: CORE.MOVE.SEQUENCE, CORE.CHARGE.* and CORE.REACT.*.

The charge move is resolved as its end state: the charger ends with its front
edge flush against the facing of the target fixed at declaration
(CORE.CHARGE.FACING), slid along that edge by the shortest distance that gives
the most models in contact (CORE.CHARGE.CLOSE_DOOR, CORE.CHARGE.ALIGN); if
that spot is blocked it re-positions along the edge (CORE.CHARGE.BLOCKED).

A spot is blocked when the charger there would leave the table, stand in
impassable terrain or the castle, overlap any unit (the target included),
touch a friend or touch an enemy that is not a target of the charge
(CORE.CHARGE.MOVE, 004:L70), or when no route to it is clear (see
:func:`route_clear`). Coming within 1" of another unit does not block a spot:
the charger ignores the 1" rule and the enemies left within 1" are shifted
clear afterwards (CORE.CHARGE.ONE_INCH, 004:L48).

The geometry lives below: the charged edge and the route test in
:mod:`charge_routes`, the reach, arcs and contact spots (and their memo) in
:mod:`charge_spots`; their names used elsewhere are re-exported here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely
import shapely.ops
from shapely.geometry import Polygon

from battleline.env.rules import geometry as geo
from battleline.env.rules import magic, psychology, shooting, space, special_rules
from battleline.env.rules.actions import REACTIONS, Action
from battleline.env.rules.charge_routes import (
    MAX_FREE_WHEEL,
    WHEEL_STEP,
    ChargeRoute,
    Hull,
    Leg,
    Wheel,
    _legs,
    _overlapping,
    _shrink,
    _sweep,
    _sweep_clear,
    edge_frame,
    leg_clear,
    route_clear,
)
from battleline.env.rules.charge_spots import (
    CHARGE_BONUS_REACH,
    FAVOUR,
    FLYER_CHARGE_REACH,
    _arcs,
    _candidate_offsets,
    _flush_pose,
    _Memo,
    _memo,
    _Neighbours,
    _offsets_on,
    _reach_and_arc,
    _Spots,
    _spots,
    _unit_key,
    charge_facing,
    charge_reach,
    charge_spot,
    contact_placement,
    flush_pose,
    incidental_targets,
)
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.t9a import artillery as t9a_artillery

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

__all__ = [
    # the geometry, re-exported from charge_routes and charge_spots
    "CHARGE_BONUS_REACH",
    "FAVOUR",
    "FLYER_CHARGE_REACH",
    "MAX_FREE_WHEEL",
    "WHEEL_STEP",
    "ChargeRoute",
    "Hull",
    "Leg",
    "Wheel",
    "_Memo",
    "_Neighbours",
    "_Spots",
    "_arcs",
    "_candidate_offsets",
    "_flush_pose",
    "_legs",
    "_memo",
    "_offsets_on",
    "_overlapping",
    "_reach_and_arc",
    "_shrink",
    "_spots",
    "_sweep",
    "_sweep_clear",
    "_unit_key",
    "charge_facing",
    "charge_reach",
    "charge_spot",
    "contact_placement",
    "edge_frame",
    "flush_pose",
    "incidental_targets",
    "leg_clear",
    "route_clear",
    # the declaration, reaction and move rules
    "ONE_INCH_DIRECTIONS",
    "ONE_INCH_MAX_SHIFT",
    "ONE_INCH_STEP",
    "apply_declaration",
    "apply_reaction",
    "can_charge",
    "can_stand_and_shoot",
    "legal_declarations",
    "legal_reactions",
    "resolve_all",
    "start",
    "target_ok",
]

# --------------------------------------------------------------------- declarations
def start(battle: Battle) -> None:
    """Open the Movement phase at the charge declarations (CORE.MOVE.SEQUENCE)."""
    battle.state.queue["charges"] = []
    psychology.forget_fear(battle)
    battle.emit("CORE.MOVE.SEQUENCE", player=battle.state.active, step="charges")
    battle.set_stage("charge")


def can_charge(battle: Battle, c: UnitState) -> bool:
    """CORE.CHARGE.ELIGIBLE for the charger alone (no target checks)."""
    return _can_charge(battle, c, {ch["charger"] for ch in battle.state.queue.get("charges", [])})


def _can_charge(battle: Battle, c: UnitState, declared: set[int]) -> bool:
    """:func:`can_charge`, the uids that have declared a charge this phase given."""
    return (
        c.alive
        and c.side == battle.state.active
        and c.uid not in declared
        and not c.fleeing
        and c.troop_type != "war_machine"
        and not c.flags.get("rallied")
        and not c.flags.get("stupid")
        and c.profile.M > 0
        and not magic.forbids(battle, c, "charge")  # Beast Cowers (CORE.MAGIC.SPELL.BEASTS.3)
        and not t9a_artillery.forbids(battle, c, "charge")  # T9A.SHAKEN
        and not psychology.engaged(battle, c)
    )



def target_ok(battle: Battle, c: UnitState, t: UnitState) -> bool:
    """CORE.CHARGE.ELIGIBLE / FEASIBLE for one target: arc, LOS, reach, a free contact spot."""
    return _target_ok(battle, c, t, _memo(battle))


def _target_ok(battle: Battle, c: UnitState, t: UnitState, memo: _Memo | None) -> bool:
    """:func:`target_ok`, the geometry kept in ``memo`` (the battle's :func:`_memo`, or None for none)."""
    if not t.alive or t.side == c.side:
        return False
    if _door(battle, c, t) is not None:
        return True  # SIEGE.TOWER.ASSAULT: an assault at a tower's door the unit touches
    if memo is None:
        return _target_geometry_ok(battle, c, t, None)
    key = (_unit_key(c), _unit_key(t))
    ok = memo.targets.get(key)
    if ok is None:
        ok = memo.targets[key] = _target_geometry_ok(battle, c, t, memo)
    return ok


def _target_geometry_ok(battle: Battle, c: UnitState, t: UnitState, memo: _Memo | None) -> bool:
    """The tests of :func:`target_ok` after the target's side and a tower door: reach, arc, LOS, a free spot."""
    reach = charge_reach(c)
    if not space.near(c, t, reach):
        return False
    if not _reach_and_arc(c.x, c.y, c.facing, c.width, c.depth, t.x, t.y, t.facing, t.width, t.depth, reach):
        return False
    if not space.line_of_sight(battle.state, c, t):
        return False
    if battle.state.castle:  # SIEGE.ASSAULT.CHARGE: climbing gear to charge defenders on the walls
        from battleline.env.rules.siege import play

        if not play.charge_target_ok(battle.state, c, t):
            return False
    facing = charge_facing(battle, c, t, roll=False)
    if facing is None:
        return False
    return _spots(battle, c, t, facing, frozenset(), True, memo).charge_spot() is not None


def _door(battle: Battle, c: UnitState, t: UnitState):
    """The tower or citadel at whose door ``c`` may assault ``t`` (SIEGE.TOWER.ASSAULT), else None."""
    if not battle.state.castle:
        return None
    from battleline.env.rules.siege import play

    return play.door_element(battle.state, c, t)


def _declare_at_door(battle: Battle, c: UnitState, t: UnitState, eid: str) -> None:
    """SIEGE.TOWER.ASSAULT: a charge at a garrison through its tower's door. No arc or charge move (the
    unit touches the door); the garrison cannot flee through the attacker or shoot out of the door, so
    it holds (DEFAULT); Fear and Terror are tested as for any charge."""
    battle.state.queue["charges"].append(
        {"charger": c.uid, "target": t.uid, "facing": "front", "reaction": None, "start_distance": 0.0,
         "incidental": [], "door": eid})
    c.flags["declared_charge"] = True
    battle.emit("CORE.CHARGE.DECLARE", unit=c.uid, target=t.uid, facing="front", incidental=[], door=eid)
    battle.emit("SIEGE.TOWER.ASSAULT", element=eid, unit=c.uid, target=t.uid, at="door", declared=True)
    outcome = psychology.charge_psychology(battle, c, t)
    if outcome == "cancelled":
        battle.state.queue["charges"].pop()
        return
    if outcome == "fled":  # a garrison failing Terror flees as usual
        battle.state.queue["charges"][-1]["reaction"] = "flee"
        battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction="flee", forced="terror")
        return
    battle.state.queue["charges"][-1]["reaction"] = "hold"
    battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction="hold", forced="door")


def legal_declarations(battle: Battle) -> list[Action]:
    """Legal ``charge`` actions of the phasing player (CORE.CHARGE.ELIGIBLE, CORE.CHARGE.FEASIBLE).

    Outside a siege (where a tower's door comes first) an enemy that fails
    :func:`target_ok`'s first test, the cheap reach pre-filter
    (:func:`space.near` at :func:`charge_reach`), is passed over at once: a
    charger's enemies are measured in one numpy call giving the very values
    :func:`space.near` gives, so the actions are those of asking
    :func:`target_ok` of every enemy.
    """
    s = battle.state
    enemies = space.alive_units(s, 1 - s.active)
    memo = _memo(battle)
    declared = {ch["charger"] for ch in s.queue.get("charges", [])}
    chargers = [c for c in space.alive_units(s, s.active) if _can_charge(battle, c, declared)]
    if s.castle or not chargers or not enemies:
        return [Action("charge", c.uid, t.uid) for c in chargers for t in enemies if _target_ok(battle, c, t, memo)]
    xs = np.array([t.x for t in enemies], dtype=np.float64)
    ys = np.array([t.y for t in enemies], dtype=np.float64)
    radii = np.array([space.radius(t) for t in enemies], dtype=np.float64)
    cx = np.array([[c.x] for c in chargers], dtype=np.float64)
    cy = np.array([[c.y] for c in chargers], dtype=np.float64)
    bonus = np.array([[space.radius(c)] for c in chargers], dtype=np.float64)
    reach = np.array([[charge_reach(c)] for c in chargers], dtype=np.float64)
    near = np.hypot(cx - xs, cy - ys) <= (bonus + radii) + reach  # space.near, term for term, every pair at once
    acts = []
    rows, cols = np.nonzero(near)  # charger by charger, then enemy by enemy
    for k, i in zip(rows.tolist(), cols.tolist()):
        c, t = chargers[k], enemies[i]
        if _target_ok(battle, c, t, memo):
            acts.append(Action("charge", c.uid, t.uid))
    return acts


def apply_declaration(battle: Battle, action: Action) -> None:
    """Declare a charge (then wait for the reaction) or end the declarations."""
    if action.kind == "end_phase":
        resolve_all(battle)
        return
    c, t = battle.unit(action.unit), battle.unit(action.target)
    door = _door(battle, c, t)
    if door is not None:
        _declare_at_door(battle, c, t, door.id)
        return
    lx, ly = geo.to_local(space.pose(t), c.x, c.y)
    battle.emit("CORE.GEO.LOCAL_FRAME", unit=t.uid, point_of=c.uid, x=round(lx, 3), y=round(ly, 3),
                half_width=round(t.width / 2, 3), half_depth=round(t.depth / 2, 3))
    facing = charge_facing(battle, c, t, roll=True)
    spot = charge_spot(battle, c, t, facing) if facing is not None else None
    incidental = sorted(spot[1]) if spot is not None else []
    battle.state.queue["charges"].append(
        {"charger": c.uid, "target": t.uid, "facing": facing, "reaction": None, "start_distance": space.unit_distance(c, t),
         "incidental": incidental}
    )
    c.flags["declared_charge"] = True
    battle.emit("CORE.CHARGE.ELIGIBLE", unit=c.uid, target=t.uid, distance=round(space.unit_distance(c, t), 3))
    battle.emit("CORE.CHARGE.DECLARE", unit=c.uid, target=t.uid, facing=facing, incidental=incidental)
    if incidental:  # the incidental targets hold (DEFAULT); the charged unit reacts as usual
        battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, incidental=incidental, stage="declared")
    battle.emit("CORE.CHARGE.FACING", unit=c.uid, target=t.uid, facing=facing)
    outcome = psychology.charge_psychology(battle, c, t)
    if outcome == "cancelled":  # the charger failed Terror (CORE.PSY.TERROR)
        battle.state.queue["charges"].pop()
        return
    if outcome == "fled":  # the charged unit failed Terror: its Flee! is made (CORE.PSY.TERROR)
        battle.state.queue["charges"][-1]["reaction"] = "flee"
        battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction="flee", forced="terror")
        return
    battle.set_stage("react")


# --------------------------------------------------------------------- reactions
def _forced_reaction(battle: Battle, t: UnitState) -> str | None:
    if psychology.engaged(battle, t):
        return "hold"  # CORE.REACT.ENGAGED
    if t.troop_type == "war_machine":
        return "hold"  # CORE.TYPE.WAR_MACHINE: a crew neither flees nor stands and shoots (CORE.WM.PANIC, FIRE_RULES)
    if t.fleeing:
        return "flee"  # CORE.REACT.ALREADY_FLEEING / FLEE_FINAL
    return None


def can_stand_and_shoot(battle: Battle, t: UnitState, c: UnitState, start_distance: float) -> bool:
    """CORE.REACT.STAND_SHOOT eligibility (not engaged, charger ≥ its M away, no Move or Fire / Slow to Fire).

    ``start_distance`` is the charger's footprint-to-footprint distance from ``t``
    when the charge was declared, in inches (0 for a charge at a tower door). In a
    siege, a unit not engaged that has not stood and shot yet may also react with
    boiling oil or stones from a wall (SIEGE.REACT.WALL), with or without missiles.
    """
    if battle.state.castle and not psychology.engaged(battle, t) and not t.flags.get("stood_and_shot"):
        from battleline.env.rules.siege import play

        if play.wall_reaction_gear(battle.state, t, c) is not None:
            return True  # SIEGE.REACT.WALL: oil or stones, with or without missiles
    if t.missile is None or t.has("slow_to_fire") or psychology.engaged(battle, t):
        return False
    if shooting.weapon(t, battle.state).move_or_fire:
        return False
    if start_distance < c.profile.M:
        return False
    if t.flags.get("stood_and_shot"):
        return False
    return shooting.in_range_and_sight(battle, t, c)


def legal_reactions(battle: Battle) -> list[Action]:
    """Legal ``react`` actions of the charged unit (CORE.REACT.DECLARE)."""
    ch = battle.state.queue["charges"][-1]
    t, c = battle.unit(ch["target"]), battle.unit(ch["charger"])
    forced = _forced_reaction(battle, t)
    if forced is not None:
        return [Action("react", t.uid, c.uid, forced)]
    options = ["hold", "flee"]
    if can_stand_and_shoot(battle, t, c, ch["start_distance"]):
        options.append("stand_and_shoot")
    return [Action("react", t.uid, c.uid, o) for o in REACTIONS if o in options]


def apply_reaction(battle: Battle, action: Action) -> None:
    """Record the reaction; Flee! is made at once (CORE.REACT.FLEE)."""
    ch = battle.state.queue["charges"][-1]
    t, c = battle.unit(ch["target"]), battle.unit(ch["charger"])
    if action.kind == "end_phase":
        reaction = _forced_reaction(battle, t) or "hold"
    else:
        reaction = action.option
    ch["reaction"] = reaction
    rule = {"hold": "CORE.REACT.HOLD", "stand_and_shoot": "CORE.REACT.STAND_SHOOT", "flee": "CORE.REACT.FLEE"}[reaction]
    battle.emit("CORE.REACT.DECLARE", unit=t.uid, charger=c.uid, reaction=reaction)
    if reaction == "flee":
        if t.flags.get("fled_reaction"):
            battle.emit("CORE.REACT.FLEE_FINAL", unit=t.uid, charger=c.uid)
        elif t.fleeing:
            battle.emit("CORE.REACT.ALREADY_FLEEING", unit=t.uid, charger=c.uid)
            _flee_from(battle, t, c)
        else:
            _flee_from(battle, t, c)  # emits CORE.REACT.FLEE with the flee move
    elif reaction == "stand_and_shoot":
        t.flags["stood_and_shot"] = True
        battle.emit(rule, unit=t.uid, charger=c.uid)
    else:
        battle.emit(rule if not psychology.engaged(battle, t) else "CORE.REACT.ENGAGED", unit=t.uid, charger=c.uid)
        if t.missile is not None and t.has("slow_to_fire") and t.troop_type != "war_machine":
            battle.emit("CORE.SR.SLOW_TO_FIRE", unit=t.uid, charger=c.uid, stand_and_shoot=False)
    battle.set_stage("charge")


def _can_fire(battle: Battle, t: UnitState, c: UnitState) -> bool:
    """A siege Stand and Shoot fires missiles only where the normal rules allow it (the rest is oil or stones)."""
    if shooting.weapon(t, battle.state).move_or_fire or t.has("slow_to_fire"):
        return False
    return shooting.in_range_and_sight(battle, t, c)


def _flee_from(battle: Battle, t: UnitState, c: UnitState) -> None:
    t.flags["fled_reaction"] = True
    psychology.flee(battle, t, (c.x, c.y), "CORE.REACT.FLEE")


# --------------------------------------------------------------------- resolution
def resolve_all(battle: Battle) -> None:
    """Resolve stand-and-shoot, then every charge roll and move, then compulsory moves.

    CORE.MOVE.SEQUENCE steps 2–4; chargers of one target roll first, then move
    in declaration order (CORE.CHARGE.SAME_TARGET, CORE.CHARGE.RESOLVE).
    """
    charges: list[dict[str, Any]] = battle.state.queue.get("charges", [])
    for ch in charges:
        if ch["reaction"] == "stand_and_shoot":
            t, c = battle.unit(ch["target"]), battle.unit(ch["charger"])
            if t.alive and c.alive and t.missile is not None and (not battle.state.castle or _can_fire(battle, t, c)):
                shooting.resolve_fire(battle, t, c, stand_and_shoot=True)
    targets: list[int] = []
    for ch in charges:
        if ch["target"] not in targets:
            targets.append(ch["target"])
    for tid in targets:
        group = [ch for ch in charges if ch["target"] == tid]
        for ch in group:
            c = battle.unit(ch["charger"])
            ch["range"] = None
            if ch.get("door") and ch["reaction"] == "hold":
                _arrive_at_door(battle, c, battle.unit(ch["target"]), ch["door"])
                continue
            if c.alive and not c.fleeing:
                high, faces = battle.dice.highest_2d6("CORE.CHARGE.RANGE")
                ch["range"] = special_rules.charge_m(c) + high
                if special_rules.flyer(c):
                    battle.emit("CORE.SR.FLY", unit=c.uid, charge_m=special_rules.charge_m(c), range=ch["range"])
                ch["high"] = high
        if len(group) > 1:
            battle.emit("CORE.CHARGE.SAME_TARGET", target=tid, chargers=[ch["charger"] for ch in group])
        for ch in group:
            if ch["range"] is not None:
                _resolve_one(battle, ch)
    battle.state.queue["charges"] = []
    battle.emit("CORE.CHARGE.RESOLVE", player=battle.state.active, charges=len(charges))
    psychology.compulsory_moves(battle)
    battle.emit("CORE.MOVE.REMAINING", player=battle.state.active)
    battle.set_stage("move")


def _arrive_at_door(battle: Battle, c: UnitState, t: UnitState, eid: str) -> None:
    """SIEGE.TOWER.ASSAULT: a door assault needs no charge roll; it engages if the door is still there to
    fight at (both alive, the garrison still in the tower, the attacker still touching it)."""
    from battleline.env.rules.siege import play
    from battleline.env.rules.siege.castle import element

    if c.alive and not c.fleeing and t.alive and play.door_element(battle.state, c, t) is element(battle.state, eid):
        play.engage_at_door(battle, c, t, element(battle.state, eid))
        return
    c.flags["charged"] = True
    battle.emit("SIEGE.TOWER.ASSAULT", element=eid, unit=c.uid, target=t.uid, at="door", engaged=False)


def _resolve_one(battle: Battle, ch: dict[str, Any]) -> None:
    c, t = battle.unit(ch["charger"]), battle.unit(ch["target"])
    c.flags["charged"] = True
    if not t.alive:
        battle.emit("CORE.CHARGE.FEASIBLE", unit=c.uid, target=t.uid, possible=False, reason="target gone")
        _failed_move(battle, c, t, ch.get("high", 0), (t.x, t.y))
        return
    dist = space.unit_distance(c, t)
    success = ch["range"] >= dist - geo.EPS
    battle.emit("CORE.CHARGE.RANGE", unit=c.uid, target=t.uid, range=ch["range"], distance=dist, success=success)
    if ch["reaction"] == "flee" or t.fleeing:
        _versus_fleeing(battle, c, t, success, ch)
        return
    incidental = ch.get("incidental", [])
    if not success:
        if incidental:  # CORE.CHARGE.MULTI_TARGET: an unreachable primary target fails the whole charge
            battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="failed", primary_unreachable=True)
        _failed_move(battle, c, t, ch["high"], (t.x, t.y))
        return
    allowed = _reachable_incidental(battle, c, t, ch) if incidental else frozenset()
    placed = contact_placement(battle, c, t, ch["facing"], allowed=allowed)
    if placed is None:
        if len(allowed) < len(incidental):
            battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="failed", no_path_avoids_dropped=True)
        battle.emit("CORE.CHARGE.FEASIBLE", unit=c.uid, target=t.uid, possible=False, reason="no clear spot or route")
        battle.emit("CORE.CHARGE.BLOCKED", unit=c.uid, target=t.uid)
        _failed_move(battle, c, t, ch["high"], (t.x, t.y))
        return
    pose, overlap, slide = placed
    old_facing = c.facing
    c.x, c.y, c.facing = pose.x, pose.y, pose.facing
    battle.emit("CORE.CHARGE.MOVE", unit=c.uid, target=t.uid, facing=ch["facing"], x=pose.x, y=pose.y, heading=pose.facing)
    turn = (pose.facing - old_facing + 180.0) % 360.0 - 180.0
    battle.emit("CORE.CHARGE.CLOSE_DOOR", unit=c.uid, target=t.uid, pivot=turn)
    battle.emit("CORE.CHARGE.ALIGN", unit=c.uid, target=t.uid, slide=slide, overlap=overlap, x=c.x, y=c.y, facing=c.facing)
    if allowed:
        _engage_incidental(battle, c, t, allowed)  # before the 1" shift, which moves only unengaged enemies
    _one_inch_shift(battle, c, t)
    battle.state.engagements.append(
        Engagement(attacker=c.uid, defender=t.uid, facing=ch["facing"], charged=True, turn=battle.state.turn)
    )
    battle.emit("CORE.GEO.CONTACT", unit=c.uid, target=t.uid, facing=ch["facing"], engaged=True)
    c.flags["charged_into"] = t.uid
    c.flags["charge_start_distance"] = ch["start_distance"]  # CORE.SR.IMPACT_HITS: charged from more than M away
    if ch["reaction"] == "stand_and_shoot" and battle.state.castle:  # SIEGE.REACT.WALL: oil or stones at the wall
        from battleline.env.rules.siege import play

        play.wall_reaction(battle, t, c)


def _reachable_incidental(battle: Battle, c: UnitState, t: UnitState, ch: dict[str, Any]) -> frozenset[int]:
    """CORE.CHARGE.MULTI_TARGET: the declared incidental targets still reachable (alive, not fleeing, within the
    charge range); the others are dropped, and the charger may then not touch them."""
    keep, dropped = [], []
    for uid in ch["incidental"]:
        o = battle.unit(uid)
        ok = o.alive and not o.fleeing and ch["range"] >= space.unit_distance(c, o) - geo.EPS
        (keep if ok else dropped).append(uid)
    if dropped:
        battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="dropped", dropped=dropped, kept=keep)
    return frozenset(keep)


def _engage_incidental(battle: Battle, c: UnitState, t: UnitState, allowed: frozenset[int]) -> None:
    """CORE.CHARGE.MULTI_TARGET: the charger in contact with incidental targets is engaged with each, as charger."""
    poly = space.footprint(c)
    engaged = []
    for uid in sorted(allowed):
        o = battle.unit(uid)
        if geo.distance(poly, space.footprint(o)) <= geo.EPS:
            facing = charge_facing(battle, c, o, roll=False) or "front"
            battle.state.engagements.append(
                Engagement(attacker=c.uid, defender=uid, facing=facing, charged=True, turn=battle.state.turn)
            )
            engaged.append({"unit": uid, "facing": facing})
    battle.emit("CORE.CHARGE.MULTI_TARGET", unit=c.uid, target=t.uid, stage="moved", engaged=engaged)


def _versus_fleeing(battle: Battle, c: UnitState, t: UnitState, success: bool, ch: dict[str, Any]) -> None:
    """CORE.CHARGE.VS_FLEEING: a fleer caught by the charge roll is destroyed."""
    if not success:
        _failed_move(battle, c, t, ch["high"], (t.x, t.y))
        return
    last = (t.x, t.y)
    psychology.destroy(battle, t, "CORE.CHARGE.VS_FLEEING", charger=c.uid, caught=True)
    moved = _move_towards(battle, c, last, ch["range"], stop_gap=1.0)
    battle.emit("CORE.CHARGE.MOVE", unit=c.uid, target=t.uid, facing=None, x=c.x, y=c.y, heading=c.facing, moved=moved)


def _failed_move(battle: Battle, c: UnitState, t: UnitState, high: int, aim: tuple[float, float]) -> None:
    """CORE.CHARGE.FAILED: move the high die towards the target, stopping 1" from any unit."""
    c.flags["failed_charge"] = True
    moved = _move_towards(battle, c, aim, float(high), stop_gap=1.0)
    battle.emit("CORE.CHARGE.FAILED", unit=c.uid, target=t.uid, high=high, moved=moved, x=c.x, y=c.y, facing=c.facing)


def _move_towards(battle: Battle, c: UnitState, aim: tuple[float, float], allowance: float, stop_gap: float) -> float:
    """Wheel to face ``aim`` (paying W·θ) then move straight, stopping ``stop_gap``" from units."""
    from battleline.env.rules.movement import furthest_legal

    heading = geo.facing_towards((c.x, c.y), aim)
    turn = abs((heading - c.facing + 180.0) % 360.0 - 180.0)
    cost = geo.wheel_distance(c.width, turn)
    if cost > allowance:
        return 0.0
    start = geo.Pose(c.x, c.y, heading)
    dist = furthest_legal(battle, c, start, allowance - cost, gap=stop_gap, pass_friends=False)
    if dist is None:
        return 0.0
    end = geo.move_straight(start, dist)
    c.x, c.y, c.facing = end.x, end.y, end.facing
    return dist


ONE_INCH_STEP = 0.1
"""Inches between the shift distances tried by CORE.CHARGE.ONE_INCH."""
ONE_INCH_MAX_SHIFT = 3.0
"""The longest shift (inches) CORE.CHARGE.ONE_INCH tries before reporting the unit as blocked."""
ONE_INCH_DIRECTIONS = 24
"""Directions (evenly spaced, degrees apart = 360 / this) a CORE.CHARGE.ONE_INCH shift may take."""


def _one_inch_shift(battle: Battle, c: UnitState, t: UnitState) -> None:
    """CORE.CHARGE.ONE_INCH: a non-engaged enemy left within 1" of the charger is shifted clear.

    The non-phasing player's unit moves the minimum distance needed (in
    :data:`ONE_INCH_STEP` steps, facing unchanged) to a legal spot 1" clear of
    the charger: at each distance every one of :data:`ONE_INCH_DIRECTIONS`
    directions is tried, nearest first to the direction straight away from the
    charger's footprint (the line between the closest points), so an unhindered
    unit moves straight away and a hindered one sideways. This does not count
    as moving. With no legal spot within :data:`ONE_INCH_MAX_SHIFT` it stays,
    and the event says so (``shift`` None, ``blocked``).
    """
    cp = space.footprint(c)
    for o in space.alive_units(battle.state, 1 - battle.state.active):
        if o.uid == t.uid or psychology.engaged(battle, o) or not space.near(o, c, 1.0):
            continue
        op = space.footprint(o)
        gap = geo.distance(cp, op)
        if gap >= 1.0 - geo.EPS:
            continue
        spot = _one_inch_spot(battle, o, cp, op)
        if spot is not None:
            shift, moved = spot
            o.x, o.y = moved.x, moved.y
            battle.emit("CORE.CHARGE.ONE_INCH", unit=o.uid, charger=c.uid, shift=shift, x=o.x, y=o.y, facing=o.facing)
        else:  # no legal spot within the limit: it stays, within 1" (it may move away later, CORE.MOVE.ONE_INCH)
            battle.emit("CORE.CHARGE.ONE_INCH", unit=o.uid, charger=c.uid, shift=None, gap=round(gap, 3),
                        blocked=True)


def _one_inch_spot(battle: Battle, o: UnitState, charger_poly: Polygon, poly: Polygon) -> tuple[float, geo.Pose] | None:
    """The shortest legal CORE.CHARGE.ONE_INCH shift of ``o`` (footprint ``poly``) 1" clear of ``charger_poly``:
    (distance in inches, rounded to 0.1, new pose), or None within :data:`ONE_INCH_MAX_SHIFT`."""
    near_c, near_o = shapely.ops.nearest_points(charger_poly, poly)
    if near_c.distance(near_o) > geo.EPS:
        away = math.degrees(math.atan2(near_o.y - near_c.y, near_o.x - near_c.x))
    else:  # touching or overlapping: straight away from the charger's centre
        cc = charger_poly.centroid
        away = math.degrees(math.atan2(o.y - cc.y, o.x - cc.x))
    turns = sorted(range(ONE_INCH_DIRECTIONS), key=lambda k: min(k, ONE_INCH_DIRECTIONS - k))
    env = space.Surroundings(battle.state, o)
    for k in range(1, round(ONE_INCH_MAX_SHIFT / ONE_INCH_STEP) + 1):
        shift = round(ONE_INCH_STEP * k, 3)
        for turn in turns:
            r = math.radians(away + 360.0 * turn / ONE_INCH_DIRECTIONS)
            moved = geo.Pose(o.x + math.cos(r) * shift, o.y + math.sin(r) * shift, o.facing)
            end = space.footprint_at(o, moved)
            if geo.distance(charger_poly, end) >= 1.0 - geo.EPS and not env.blocked(end, end, gap=2 * geo.EPS):
                return shift, moved
    return None
