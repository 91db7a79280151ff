"""Deployment: roll-off, alternating deployment into slots, first turn.

Rules: CORE.SETUP.ROLL_OFF, CORE.SETUP.ZONES, CORE.SETUP.DEPLOY,
CORE.SETUP.SCOUTS, CORE.SETUP.VANGUARD, CORE.SETUP.FIRST_TURN.

A unit deploys into a *slot*: a column (x = 6, 12, …, 66 inches) and a row (the
unit's front edge 11", 7" or 3" from its own table edge; Scouts also have rows
at 17" and 23"). Slot ``k`` is row ``k // 11``, column ``k % 11``. A slot is
legal when the footprint lies wholly in the zone (Scouts: anywhere more than
12" from every enemy), on the table, clear of impassable terrain and not within
1" of another unit. A unit that no slot fits when its side ends deployment
takes the free place in its zone nearest the table's centre line
(:func:`zone_spot`; DEFAULT): the slots are our grid over the zone, and a
player may deploy anywhere wholly inside it (CORE.SETUP.ZONES).
"""

from __future__ import annotations

import operator
from functools import lru_cache
from itertools import compress
from typing import TYPE_CHECKING, Any

import numpy as np

from battleline.env.rules import characters, kernel, space, special_rules
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import Action
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

COLUMNS = tuple(6.0 * i for i in range(1, 12))
ROWS = (11.0, 7.0, 3.0, 17.0, 23.0)
ZONE_ROWS = 3
N_SLOTS = len(COLUMNS) * len(ROWS)
SPOT_STEP = 0.5
"""Inches between the places :func:`zone_spot` tries, across and into the zone."""


def slot_pose(battle: Battle, u: UnitState, slot: int) -> geo.Pose:
    """The pose of unit ``u`` deployed in ``slot`` (inches, degrees)."""
    s = battle.state
    if s.castle:  # SIEGE.SCEN.DEPLOY
        from battleline.env.rules.siege import play

        return play.deploy_pose(s, u, slot, COLUMNS, ROWS)
    row, col = divmod(slot, len(COLUMNS))
    front = ROWS[row]
    x = COLUMNS[col]
    if u.side == 0:
        return geo.Pose(x, front - u.depth / 2, 90.0)
    return geo.Pose(s.table_w - x, s.table_h - front + u.depth / 2, 270.0)


def _slot_legal(battle: Battle, u: UnitState, slot: int, env: space.Surroundings | None = None) -> bool:
    s = battle.state
    if s.castle:  # SIEGE.SCEN.DEPLOY: the defender in the castle, the attacker at his edge, no Scouts
        from battleline.env.rules.siege import play, room

        files = play.deploy_files(s, u, slot, len(COLUMNS))
        poly = space.footprint_at(u, slot_pose(battle, u, slot), files)
        env = env or space.Surroundings(s, u)
        return play.deploy_legal(s, u, slot, poly, env, len(COLUMNS), s.queue.get("zone_depth", 12.0)) and (
            room.clear_of_plan(s, u, poly))  # room left for the defender's other units
    row = slot // len(COLUMNS)
    scout = u.has("scouts")
    if row >= ZONE_ROWS and not scout:
        return False
    poly = space.footprint_at(u, slot_pose(battle, u, slot))
    minx, miny, maxx, maxy = poly.bounds
    zone = s.queue.get("zone_depth", 12.0)
    if not scout:
        in_zone = maxy <= zone + geo.EPS if u.side == 0 else miny >= s.table_h - zone - geo.EPS
        if not in_zone:
            return False
    env = env or space.Surroundings(s, u)
    if env.blocked(poly, poly):
        return False
    if scout and env.enemy.any():
        return bool((env.nearest_gap(poly)[env.enemy] > 12.0).all())
    return True


def _deployable(battle: Battle, side: int) -> list[UnitState]:
    units = [
        u for u in battle.state.units if u.side == side and not u.deployed and not u.removed and u.joined_to is None
    ]
    non_scouts = [u for u in units if not u.has("scouts")]
    if non_scouts:
        return non_scouts
    # Scouts deploy only once both sides have deployed everything else.
    other_left = any(
        u.side != side and not u.deployed and not u.removed and not u.has("scouts") and u.joined_to is None
        for u in battle.state.units
    )
    return [] if other_left else units


def start(battle: Battle) -> None:
    """Roll off for the table edges and the deployment order (CORE.SETUP.ROLL_OFF)."""
    while True:
        blue, red = battle.dice.d6("CORE.SETUP.ROLL_OFF", 2)
        if blue != red:
            break
    winner = 0 if blue > red else 1
    # The winner keeps its long edge (the scenario's) and the other deploys first.
    battle.state.queue["deploy_next"] = 1 - winner
    if battle.state.castle:  # SIEGE.SCEN.DEPLOY: the defender deploys everything first, with room for all
        from battleline.env.rules.config import ConfigError
        from battleline.env.rules.siege import room

        battle.state.queue["deploy_next"] = battle.state.castle[0].defender
        crowded = room.replan(battle.state)
        if crowded is not None:  # scenario_errors refuses such a scenario; a state built otherwise lands here
            raise ConfigError(room.no_room_text(crowded))
    battle.state.queue["finished_first"] = None
    battle.emit("CORE.SETUP.ROLL_OFF", winner=winner, deploys_first=1 - winner)
    battle.emit("CORE.SETUP.ZONES", depth=battle.state.queue.get("zone_depth", 12.0))
    battle.set_stage("deploy")


def legal(battle: Battle) -> list[Action]:
    """Legal ``deploy`` actions of the side to deploy (CORE.SETUP.DEPLOY).

    Outside a siege each unit's slots are cached (Scouts aside, whose slots
    depend on every enemy): a slot is tested again only when the unit's
    formation changed or a unit now stands in, or has left, the ground the
    last test looked at (:class:`space.Decision`).
    """
    s = battle.state
    side = s.queue["deploy_next"]
    cache: dict[int, tuple[tuple, dict[int, space.Decision]]] = battle.__dict__.setdefault("_deploy_cache", {})
    units: space.UnitsOnTable | None = None
    acts = []
    for u in _deployable(battle, side):
        env = None
        scene = None if s.castle or u.has("scouts") or not kernel.available() else kernel.scene(
            s, u, table=kernel.decision_table(battle))
        if scene is not None:  # the compiled core: every slot afresh, in one call
            slots = _slots_native(battle, u, scene)
        elif s.castle or u.has("scouts"):
            env = space.Surroundings(s, u)
            slots = [slot for slot in range(N_SLOTS) if _slot_legal(battle, u, slot, env)]
        else:
            units = units or space.UnitsOnTable(s)
            context = (u.files, u.models, s.queue.get("zone_depth", 12.0))
            hit = cache.get(u.uid)
            known = hit[1] if hit is not None and hit[0] == context else {}
            decided: dict[int, space.Decision] = {}
            for slot in range(N_SLOTS):
                d = known.get(slot)
                if d is None or not d.holds(units, u.uid):
                    env = env or space.Surroundings(s, u)
                    d = space.decide(lambda: _slot_legal(battle, u, slot, env), env, units)  # noqa: B023 - called at once
                decided[slot] = d
            cache[u.uid] = (context, decided)
            slots = [slot for slot in range(N_SLOTS) if decided[slot].legal]
        acts.extend(map(_deploy_actions(u.uid).__getitem__, slots))
    return acts


@lru_cache(maxsize=1024)
def _deploy_actions(uid: int) -> tuple[Action, ...]:
    """``Action("deploy", uid, None, str(slot))`` for every slot, by slot: the same (immutable) objects each
    decision, not some 80 new ones per unit."""
    return tuple(Action("deploy", uid, None, str(slot)) for slot in range(N_SLOTS))


def _first_slot(battle: Battle, u: UnitState, order: list[int]) -> int | None:
    """The first slot of ``order`` that :func:`_slot_legal` allows ``u`` now, or None. Outside a siege, for a unit
    that is no Scout, the compiled core tests every slot in one call (:func:`_slots_native`, as :func:`legal`
    does); the reference tests them one by one otherwise."""
    s = battle.state
    scene = None if s.castle or u.has("scouts") or not kernel.available() else kernel.scene(
        s, u, table=kernel.decision_table(battle))
    if scene is None:
        return next((k for k in order if _slot_legal(battle, u, k)), None)
    free = set(_slots_native(battle, u, scene))
    return next((k for k in order if k in free), None)


def _slots_native(battle: Battle, u: UnitState, scene: Any) -> list[int]:
    """The slots :func:`_slot_legal` allows a unit that is not a Scout outside a siege, the footprints
    tested by the compiled core (:func:`kernel.scene`) in one call."""
    s = battle.state
    slots, poses = _zone_slots(u.side, u.width, u.depth, float(s.table_w), float(s.table_h), s.queue.get("zone_depth", 12.0))
    if not slots:
        return []
    blocked = scene.blocked_at_many(poses, u.width, u.depth)  # 1 blocked, 0 free, -1 undecided
    if -1 not in blocked:  # the free slots, picked in C
        return list(compress(slots, map(operator.not_, blocked)))
    # -1: a tie the core leaves to the reference
    return [slot for slot, b in zip(slots, blocked) if b == 0 or (b < 0 and _slot_legal(battle, u, slot))]


@lru_cache(maxsize=1024)
def _zone_slots(side: int, width: float, depth: float, table_w: float, table_h: float, zone: float) -> tuple[list[int], np.ndarray]:
    """The slots (outside a siege) whose footprint lies in the deployment zone (CORE.SETUP.ZONES), and their
    poses as a read-only (n, 3) float64 array of x, y, facing: what :func:`slot_pose` and :func:`_slot_legal`
    work out before looking at the other units."""
    slots, poses = [], []
    for slot in range(ZONE_ROWS * len(COLUMNS)):
        row, col = divmod(slot, len(COLUMNS))
        x = COLUMNS[col]
        p = geo.Pose(x, ROWS[row] - depth / 2, 90.0) if side == 0 else geo.Pose(table_w - x, table_h - ROWS[row] + depth / 2, 270.0)
        ys = [y for _, y in geo.corner_list(p, width, depth)]
        if (max(ys) <= zone + geo.EPS) if side == 0 else (min(ys) >= table_h - zone - geo.EPS):
            slots.append(slot)
            poses.append((p.x, p.y, p.facing))
    out = np.array(poses, dtype=np.float64).reshape(len(poses), 3)
    out.flags.writeable = False
    return slots, out


def _place(battle: Battle, u: UnitState, slot: int) -> None:
    p = slot_pose(battle, u, slot)
    files = u.files
    if battle.state.castle:  # SIEGE.CASTLE.WALL: one rank on a wall
        from battleline.env.rules.siege import play

        files = play.deploy_files(battle.state, u, slot, len(COLUMNS)) or u.files
    _put(battle, u, p, files, _deploy_rule(u), slot)


def _deploy_rule(u: UnitState) -> str:
    """The rule a unit's deployment is recorded under: CORE.SETUP.SCOUTS for Scouts, else CORE.SETUP.DEPLOY."""
    return "CORE.SETUP.SCOUTS" if u.has("scouts") else "CORE.SETUP.DEPLOY"


def _put(battle: Battle, u: UnitState, p: geo.Pose, files: int, rule: str, slot: int | None) -> None:
    """Stand ``u`` at pose ``p`` with ``files`` files and record it under ``rule``."""
    u.x, u.y, u.facing, u.files = p.x, p.y, p.facing, files
    u.deployed = True
    characters.sync(battle.state)  # a joined character deploys with its unit (CORE.SETUP.DEPLOY)
    battle.emit(rule, unit=u.uid, side=u.side, slot=slot, x=p.x, y=p.y, facing=p.facing, files=u.files, joined=list(u.joined))
    if battle.state.castle and u.side == battle.state.castle[0].defender:  # SIEGE.SCEN.DEPLOY: room for the rest
        from battleline.env.rules.siege import room

        room.replan(battle.state)


def zone_spot(battle: Battle, u: UnitState) -> geo.Pose | None:
    """The free place for ``u`` wholly inside its deployment zone (CORE.SETUP.ZONES), facing the enemy edge.

    Centres are tried every :data:`SPOT_STEP` inches: the column nearest the table's centre line first, in it
    the place nearest the own edge. Free: on the table, clear of impassable terrain and 1" from every unit
    (as a slot). Returns the pose (inches, degrees), or None when the zone has no such place.
    """
    s = battle.state
    zone = s.queue.get("zone_depth", 12.0)
    half_w, half_d = u.width / 2, u.depth / 2
    n_x = int((s.table_w - u.width) / SPOT_STEP + geo.EPS) + 1
    n_d = int((zone - u.depth) / SPOT_STEP + geo.EPS) + 1
    xs = sorted((half_w + k * SPOT_STEP for k in range(n_x)), key=lambda x: (abs(x - s.table_w / 2), x))
    facing = 90.0 if u.side == 0 else 270.0
    env = space.Surroundings(s, u)
    for x in xs:
        for k in range(n_d):
            depth = half_d + k * SPOT_STEP
            pose = geo.Pose(x, depth, facing) if u.side == 0 else geo.Pose(s.table_w - x, s.table_h - depth, facing)
            poly = space.footprint_at(u, pose)
            if not env.blocked(poly, poly):
                return pose
    return None


def _auto_deploy(battle: Battle, side: int) -> None:
    """Deploy the side's remaining units, each in its first legal slot from the centre.

    A unit with no legal slot is not left out: in a siege a defender unit takes the place the castle's plan
    keeps for it (SIEGE.SCEN.DEPLOY, :mod:`env.rules.siege.room`); elsewhere it takes :func:`zone_spot`
    (CORE.SETUP.DEPLOY with ``slot`` None). Only when its zone has no free place at all does it never arrive
    (``no_room``), with the characters joined to it.
    """
    order = sorted(range(N_SLOTS), key=lambda k: (k // len(COLUMNS), abs(k % len(COLUMNS) - 5)))
    castle = battle.state.castle and side == battle.state.castle[0].defender
    for u in list(_deployable(battle, side)):
        slot = _first_slot(battle, u, order)
        if slot is not None:
            _place(battle, u, slot)
        elif castle:
            from battleline.env.rules.siege import room

            pose, files = room.planned(battle.state, u)
            _put(battle, u, pose, files, "SIEGE.SCEN.DEPLOY", None)
        elif (spot := zone_spot(battle, u)) is not None:
            _put(battle, u, spot, u.files, _deploy_rule(u), None)
        else:  # no room on the table: the unit never arrives, nor do the characters joined to it
            for gone in [u, *(c for c in battle.state.units if c.joined_to == u.uid)]:
                gone.removed = True
                battle.emit("CORE.SETUP.DEPLOY", unit=gone.uid, side=side, slot=None, no_room=True)


def apply(battle: Battle, action: Action) -> None:
    """Deploy a unit (or, with end_phase, all the side's remaining units)."""
    s = battle.state
    side = s.queue["deploy_next"]
    if action.kind == "end_phase":
        _auto_deploy(battle, side)
    else:
        _place(battle, s.units[action.unit], int(action.option))
    if s.queue["finished_first"] is None and not any(
        u.side == side and not u.deployed and not u.removed and not u.has("scouts") and u.joined_to is None
        for u in s.units
    ):
        s.queue["finished_first"] = side
    other = 1 - side
    if s.castle and _deployable(battle, side):  # SIEGE.SCEN.DEPLOY: one side after the other
        s.queue["deploy_next"] = side
    elif _deployable(battle, other):
        s.queue["deploy_next"] = other
    elif _deployable(battle, side):
        s.queue["deploy_next"] = side
    elif s.castle or not _start_vanguard(battle):  # SIEGE.SCEN.DEPLOY: no Vanguard
        _first_turn(battle)


# --------------------------------------------------------------------- Vanguard
VANGUARD_MOVE = 12  # CORE.SETUP.VANGUARD: up to 12" under the normal-move rules
VANGUARD_CLEARANCE = 12.0  # and not ending within 12" of an enemy
VANGUARD_OPTIONS = (
    "advance", "advance_half", "wheel_left", "wheel_right", "wheel_left_short", "wheel_right_short",
    "turn_left", "turn_right", "about_face", "backward", "reform_wide", "reform_deep", "reform_face",
)  # fmt: skip
"""The normal-move options a Vanguard move may use (no march)."""


def _vanguard_units(battle: Battle, side: int) -> list[UnitState]:
    done = set(battle.state.queue.get("vanguard", {}).get("done", []))
    return [
        u for u in space.alive_units(battle.state, side)
        if u.joined_to is None and special_rules.fast_cavalry(battle.state, u) and u.uid not in done
    ]


def _start_vanguard(battle: Battle) -> bool:
    """Open the Vanguard moves if any Fast Cavalry is on the table (CORE.SETUP.VANGUARD)."""
    if not (_vanguard_units(battle, 0) or _vanguard_units(battle, 1)):
        return False
    first = battle.state.queue.get("finished_first") or 0
    if not _vanguard_units(battle, first):
        first = 1 - first
    battle.state.queue["vanguard"] = {"next": first, "done": [], "passed": []}
    battle.set_stage("vanguard")
    return True


def _vanguard_shadow(u: UnitState) -> UnitState:
    """A copy of ``u`` that moves as a Vanguard move does: M = 12", neither Fly nor Hover (CORE.SETUP.VANGUARD)."""
    from copy import copy
    from dataclasses import replace

    shadow = copy(u)
    shadow.profile = replace(u.profile, M=VANGUARD_MOVE)
    shadow.special_rules = [r for r in u.special_rules if r not in ("fly", "hover")]
    return shadow


def _vanguard_plan(battle: Battle, u: UnitState, option: str, env: Any = None,
                   shared: tuple[UnitState, list[UnitState]] | None = None) -> dict | None:
    """A Vanguard move of ``u``: the plan of a normal move with M = 12", ending more than 12" from every enemy.

    ``env``: ``u``'s scene (:func:`movement.surroundings`, the same for every option), built if not given.
    ``shared``: :func:`_vanguard_shadow` of ``u`` and the enemy units on the table, the same for every option of
    one decision; worked out here if not given. The compiled core measures the gaps to the enemies
    (:func:`kernel.available`); a gap within ``kernel.TIE_BAND`` of 12" is left to the shapely reference.
    """
    from battleline.env.rules import movement

    shadow = shared[0] if shared is not None else _vanguard_shadow(u)
    plan = movement._plan(battle, shadow, option, env or movement.surroundings(battle, u), marching=False)
    if plan is None:
        return None
    enemies = shared[1] if shared is not None else space.alive_units(battle.state, 1 - u.side)
    files = plan["files"]
    if u.troop_type == "war_machine":  # the footprint space.footprint_at(u, pose, files) has, in inches
        width, depth = u.width, u.depth
    else:
        width, depth = min(files, u.models) * u.base_w, -(-u.models // files) * u.base_d
    least = VANGUARD_CLEARANCE + geo.EPS
    gap_of = kernel.native.footprint_distance if kernel.available() else None

    def clear(p: geo.Pose) -> bool:
        if gap_of is not None:
            for e in enemies:
                gap = gap_of(p.x, p.y, p.facing, width, depth, e.x, e.y, e.facing, e.width, e.depth)
                if abs(gap - least) <= kernel.TIE_BAND:
                    break  # a tie: the reference decides
                if gap <= least:
                    return False
            else:
                return True
        poly = space.footprint_at(u, p, files)
        return all(geo.distance(poly, space.footprint(e)) > least for e in enemies)

    if clear(plan["pose"]):
        return plan
    if option != "advance":
        return None
    start, lo, hi = space.pose(u), 0.0, plan["distance"]
    for _ in range(12):  # the furthest straight advance that stays clear
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if clear(geo.move_straight(start, mid)) else (lo, mid)
    if lo < movement.MIN_MOVE:
        return None
    return {"pose": geo.move_straight(start, lo), "distance": lo, "files": u.files}


def legal_vanguard(battle: Battle) -> list[Action]:
    """The Vanguard moves of the side whose turn it is: ``move`` actions (CORE.SETUP.VANGUARD)."""
    from battleline.env.rules import movement

    side = battle.state.queue["vanguard"]["next"]
    acts = []
    for u in _vanguard_units(battle, side):
        table = kernel.decision_table(battle) if kernel.available() and not battle.state.castle else None
        env = movement.surroundings(battle, u, table)
        shared = (_vanguard_shadow(u), space.alive_units(battle.state, 1 - u.side))
        acts.extend(Action("move", u.uid, None, o) for o in VANGUARD_OPTIONS
                    if _vanguard_plan(battle, u, o, env, shared) is not None)
    return acts


def apply_vanguard(battle: Battle, action: Action) -> None:
    """Make one Vanguard move, or pass (end_phase: the side makes no more); sides alternate."""
    s = battle.state
    vg = s.queue["vanguard"]
    side = vg["next"]
    if action.kind == "end_phase":
        vg["passed"].append(side)
        battle.emit("CORE.SETUP.VANGUARD", side=side, passed=True)
    else:
        u = battle.unit(action.unit)
        plan = _vanguard_plan(battle, u, action.option)
        assert plan is not None  # legal actions only
        pose = plan["pose"]
        u.x, u.y, u.facing, u.files = pose.x, pose.y, pose.facing % 360.0, plan["files"]
        characters.sync(s)  # joined characters move with their unit
        vg["done"].append(u.uid)
        battle.emit("CORE.SETUP.VANGUARD", unit=u.uid, side=side, option=action.option, distance=plan["distance"],
                    x=u.x, y=u.y, facing=u.facing, files=u.files)
    waiting = [p for p in (1 - side, side) if p not in vg["passed"] and _vanguard_units(battle, p)]
    if waiting:
        vg["next"] = waiting[0]
        return
    del s.queue["vanguard"]
    _first_turn(battle)


def _first_turn(battle: Battle) -> None:
    """CORE.SETUP.FIRST_TURN: D6 each, +1 for the first to finish; the higher goes first."""
    s = battle.state
    bonus = s.queue.get("finished_first")
    while True:
        blue, red = battle.dice.d6("CORE.SETUP.FIRST_TURN", 2)
        totals = [blue + (1 if bonus == 0 else 0), red + (1 if bonus == 1 else 0)]
        if totals[0] != totals[1]:
            break
    s.first_player = 0 if totals[0] > totals[1] else 1
    if s.castle:  # SIEGE.SCEN.TURNS: the attacker goes first
        s.first_player = 1 - s.castle[0].defender
    battle.emit("CORE.SETUP.FIRST_TURN", totals=totals, first_player=s.first_player)
    battle.finish_phase()
