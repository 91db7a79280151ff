"""Remaining moves: move, march, wheel, turn, reform (CORE.MOVE.*, CORE.TERRAIN.*).

Each ``move`` action names one of :data:`env.rules.actions.MOVE_OPTIONS`, or
a character's ``join`` / ``leave`` (:mod:`env.rules.characters`). A
translation goes as far as it legally can up to its allowance: the unit stops
where it would come within 1" of an enemy, end within 1" of any unit, pass
through a unit, leave the table or enter impassable terrain
(CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE). An option is legal when the unit
can carry it out over at least :data:`MIN_MOVE` inches (rotations and reforms:
when the new footprint is legal).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import operator
from collections.abc import Container
from itertools import compress
from typing import TYPE_CHECKING, Any, NamedTuple

from battleline.env.rules import characters, kernel, magic, psychology, space, special_rules, t9a, war_machines
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import MOVE_OPTIONS, Action
from battleline.env.rules.state import UnitState
from battleline.env.rules.t9a import artillery as t9a_artillery

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MIN_MOVE = 0.25  # inches
MARCH_BLOCK_RANGE = 8.0  # CORE.MOVE.MARCH_BLOCK
WHEEL = {"wheel_left": 45.0, "wheel_right": -45.0, "wheel_left_short": 22.5, "wheel_right_short": -22.5,
         "march_wheel_left": 45.0, "march_wheel_right": -45.0}


# --------------------------------------------------------------------- legality
Scene = space.Surroundings | Any
"""What a moving unit keeps clear of: the compiled core's scene (:func:`kernel.scene`) or the shapely reference."""


def surroundings(battle: Battle, u: UnitState, table: Any = None) -> Scene:
    """The compiled scene for ``u`` where the core applies, else :class:`space.Surroundings` (the reference).

    ``table``: a :func:`kernel.table_of` the units as they stand now, to build the scene from (:func:`kernel.scene`).
    """
    return kernel.scene(battle.state, u, table=table) or space.Surroundings(battle.state, u)


def _dims(u: UnitState, files: int | None = None) -> tuple[float, float]:
    """The footprint (width, depth) in inches :func:`space.footprint_at` gives ``u`` with ``files`` files."""
    if files is None or u.troop_type == "war_machine":
        return u.width, u.depth
    return min(files, u.models) * u.base_w, -(-u.models // files) * u.base_d


def furthest_legal(
    battle: Battle,
    u: UnitState,
    start: geo.Pose,
    allowance: float,
    gap: float = 1.0,
    pass_friends: bool = False,
    env: Scene | None = None,
    refine: bool = True,
) -> float | None:
    """The furthest straight move (inches, ≥ 0) from ``start`` within ``allowance``.

    Negative allowances move backwards. Terrain costs are paid
    (CORE.TERRAIN.COST); the move stops short of anything that would break
    CORE.MOVE.ONE_INCH or CORE.MOVE.TABLE_EDGE. A unit that starts within
    1" of another may move away from it. Returns None when the start itself
    overlaps or touches a unit or leaves the table; 0.0 when no distance of at
    least MIN_MOVE is legal. With ``refine=False`` some legal distance
    (≥ MIN_MOVE) is returned, not necessarily the furthest: enough to decide
    whether the move can be made at all. ``env``: the unit's scene
    (:func:`surroundings`), built if not given; the compiled core answers when
    it is a compiled scene.
    """
    env = env or surroundings(battle, u)
    if not isinstance(env, space.Surroundings):
        d = env.furthest_legal(start.x, start.y, start.facing, u.width, u.depth, allowance, gap, pass_friends, refine)
        if d is None or d >= 0.0:
            return d
        env = space.Surroundings(battle.state, u)  # a tie: the reference decides
    start_poly = space.footprint_at(u, start)
    if env.blocked(start_poly, start_poly, 2 * geo.EPS, pass_friends):
        return None
    sign = 1.0 if allowance >= 0 else -1.0
    full = abs(allowance)
    if full < MIN_MOVE:
        return 0.0

    def ok(d: float) -> bool:
        end = geo.move_straight(start, sign * d)
        end_poly = space.footprint_at(u, end)
        path = space.Sweep(start_poly, end_poly)
        mult, extra = env.terrain_cost(path)
        return d * mult + extra <= full + geo.EPS and not env.blocked(end_poly, path, gap, pass_friends)

    if ok(full):
        return full
    if not refine and ok(MIN_MOVE):  # MIN_MOVE is always tried below, and the likeliest to be legal
        return MIN_MOVE
    end_poly = space.footprint_at(u, geo.move_straight(start, sign * full))
    mult, extra = env.terrain_cost(space.Sweep(start_poly, end_poly))
    affordable = (full - extra) / mult
    if MIN_MOVE <= affordable < full and ok(affordable):
        return affordable
    top = min(full, affordable) if affordable >= MIN_MOVE else full
    grid = [top * k / 8 for k in range(7, 0, -1) if top * k / 8 >= MIN_MOVE] + [MIN_MOVE]
    lo = next((d for d in grid if ok(d)), None)
    if lo is None:
        return 0.0
    if not refine:
        return lo
    hi = min((d for d in [top, *grid] if d > lo), default=lo)
    for _ in range(10):
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


_DONE_FLAGS = ("moved", "charged", "fled", "rallied", "failed_charge", "stupid", "declared_charge")
"""Turn flags that leave a unit no remaining move (CORE.MOVE.REMAINING)."""


def can_move(battle: Battle, u: UnitState, engaged: Container[int] | None = None) -> bool:
    """CORE.MOVE.REMAINING: not charged, fled, rallied, compulsorily moved or engaged, and not moved yet.

    ``engaged``: the uids of every unit in an engagement, when the caller has them (:func:`psychology.engaged`
    is asked otherwise).
    """
    f = u.flags
    return (
        u.alive
        and u.side == battle.state.active
        and not u.fleeing
        and not (f and any(map(f.get, _DONE_FLAGS)))
        and u.profile.M > 0
        and not (psychology.engaged(battle, u) if engaged is None else u.uid in engaged)
    )


def may_march(u: UnitState) -> bool:
    """CORE.MOVE.MARCH: Aquatic (on land), Hover, chariots (CORE.TYPE.CHARIOT) and war machines never march."""
    return not (u.has("aquatic") or u.has("hover") or u.troop_type in ("war_machine", "chariot"))


def normal_move_allowance(u: UnitState) -> float:
    """The inches a normal move of ``u`` may cover: its M, flyers 10" (CORE.MOVE.FLY), war machines
    4" less the crew lost (CORE.WM.MOVE)."""
    if u.troop_type == "war_machine":
        return float(war_machines.move_allowance(u))
    return float(special_rules.move_allowance(u))


def _plan(
    battle: Battle,
    u: UnitState,
    option: str,
    env: Scene,
    marching: bool | None = None,
    check_only: bool = False,
    memo: dict[tuple[str, float], bool] | None = None,
) -> dict | None:
    """Work out a move option: the new pose/files and the distance, or None if impossible.

    With ``check_only`` only legality is decided (a translation is legal if its
    first MIN_MOVE inches are) and the returned dict may be empty.
    """
    if battle.state.castle:  # SIEGE.CASTLE.WALL: one rank on a wall
        from battleline.env.rules.siege import play

        if not play.move_option_ok(battle.state, u, option):
            return None
    m = normal_move_allowance(u)
    start = space.pose(u)
    if option.startswith("march") and (magic.forbids(battle, u, "march") or t9a_artillery.forbids(battle, u, "march")):
        return None  # Curse of Storms (CORE.MAGIC.SPELL.HEAVENS.3); T9A.SHAKEN
    if option in ("advance", "advance_half", "march", "backward"):
        if option == "march" and not may_march(u):
            return None
        sign = -1.0 if option == "backward" else 1.0
        allowance_now = {"advance": m, "advance_half": m / 2, "backward": -m / 2}.get(option, 2 * m)
        if check_only:
            key = ("straight", allowance_now)
            if memo is None or key not in memo:
                d = furthest_legal(battle, u, start, allowance_now, env=env, refine=False)
                ok = d is not None and d >= MIN_MOVE
                if memo is None:
                    return {} if ok else None
                memo[key] = ok
            return {} if memo[key] else None
        allowance = {"advance": m, "advance_half": m / 2, "backward": -m / 2}.get(option, 2 * m if marching is not False else m)
        d = furthest_legal(battle, u, start, allowance, env=env)
        if d is None or d < MIN_MOVE:
            return None
        cost = 2 * d if option == "backward" else d
        return {"pose": geo.move_straight(start, sign * d), "distance": cost, "files": u.files}
    if option in WHEEL:
        is_march = option.startswith("march")
        if is_march and not may_march(u):
            return None
        allowance = (2 * m if marching is not False else m) if is_march else m
        angle = WHEEL[option]
        cost = geo.wheel_distance(u.width, angle)
        if cost > allowance + geo.EPS:
            return None
        after = geo.wheel(start, u.width, angle, u.depth)
        key = ("wheel", angle)
        if memo is not None and key in memo:
            blocked = memo[key]
        else:
            answer = -1 if isinstance(env, space.Surroundings) else env.wheel_blocked(
                start.x, start.y, start.facing, u.width, u.depth, angle)
            if answer >= 0:
                blocked = bool(answer)
            else:  # the reference (or a tie the core left to it)
                ref = env if isinstance(env, space.Surroundings) else space.Surroundings(battle.state, u)
                sweep = geo.wheel_swept_area(start, u.width, u.depth, angle)
                blocked = ref.blocked(space.footprint_at(u, after), sweep, start=space.footprint_at(u, start))
            if memo is not None:
                memo[key] = blocked
            if memo is not None:
                memo[key] = blocked
        if blocked:
            return None
        if check_only:
            return {}
        d = furthest_legal(battle, u, after, allowance - cost, env=env) or 0.0
        return {"pose": geo.move_straight(after, d), "distance": cost + d, "files": u.files, "wheel": angle}
    if option in ("turn_left", "turn_right", "about_face"):
        angle = {"turn_left": 90.0, "turn_right": -90.0, "about_face": 180.0}[option]
        files = u.files if option == "about_face" else min(u.models, u.ranks)
        after = geo.turn(start, angle)
        if _blocked_at(battle, env, u, after, files, 2 * geo.EPS):
            return None  # no room to turn about the centre
        shadow = _with_files(u, files)
        d = furthest_legal(battle, shadow, after, 0.75 * m, env=env, refine=not check_only) or 0.0
        if d < MIN_MOVE and _blocked_at(battle, env, u, after, files):
            return None  # it could only end where it turned, within 1" of a unit
        if check_only:
            return {}
        return {"pose": geo.move_straight(after, d), "distance": m / 4 + d, "files": files, "turn": angle}
    if option in ("reform_wide", "reform_deep", "reform_face"):
        files = u.files
        facing = u.facing
        if option == "reform_wide":
            files = min(u.models, u.files + 2)
        elif option == "reform_deep":
            files = max(1, u.files - 2)
        else:
            enemy = psychology.nearest_enemy(battle, u)
            if enemy is None:
                return None
            facing = geo.facing_towards((u.x, u.y), (enemy.x, enemy.y))
            if abs((facing - u.facing + 180.0) % 360.0 - 180.0) < 1.0:
                return None
        if files == u.files and facing == u.facing:
            return None
        after = geo.Pose(u.x, u.y, facing)
        if _blocked_at(battle, env, u, after, files):
            return None
        return {"pose": after, "distance": 0.0, "files": files, "reform": True}
    raise ValueError(f"unknown move option {option!r}")


def _blocked_at(battle: Battle, env: Scene, u: UnitState, p: geo.Pose, files: int, gap: float = 1.0) -> bool:
    """Whether ``u`` with ``files`` files may not stand at pose ``p`` (CORE.MOVE.ONE_INCH, CORE.MOVE.TABLE_EDGE)."""
    if not isinstance(env, space.Surroundings):
        answer = env.blocked_at(p.x, p.y, p.facing, *_dims(u, files), gap)
        if answer >= 0:
            return bool(answer)
        env = space.Surroundings(battle.state, u)  # a tie: the reference decides
    poly = space.footprint_at(u, p, files)
    return env.blocked(poly, poly, gap)


_UNIT_FIELDS = operator.attrgetter(*(f.name for f in dataclasses.fields(UnitState))) if (
    all(f.init for f in dataclasses.fields(UnitState)) and not hasattr(UnitState, "__post_init__")) else None
"""Every field of a :class:`UnitState` in order, when each is an ``__init__`` argument and nothing else happens
there (a shallow copy is then ``UnitState(*fields)``); else None."""


def _with_files(u: UnitState, files: int) -> UnitState:
    """A throw-away shallow copy of ``u`` (what :func:`copy.copy` gives, faster) with another number of files
    (for planning)."""
    other = copy.copy(u) if _UNIT_FIELDS is None else UnitState(*_UNIT_FIELDS(u))
    other.files = files
    return other


def _neighbourhood(battle: Battle, u: UnitState) -> tuple:
    """What a unit's move options depend on: the units within reach and the nearest enemy."""
    reach = 2.0 * special_rules.move_allowance(u) + 2.0 * space.radius(u) + 14.0
    near = tuple(
        space.placed(o) for o in battle.state.units if o.alive and abs(o.x - u.x) <= reach and abs(o.y - u.y) <= reach
    )
    enemy = psychology.nearest_enemy(battle, u)
    return near, None if enemy is None else (enemy.uid, enemy.x, enemy.y)


def _own_context(battle: Battle, u: UnitState, enemy: tuple | None) -> tuple:
    """All a unit's move options depend on apart from the other units on the table (see :func:`_plan`)."""
    machine = war_machines.move_allowance(u) if u.troop_type == "war_machine" else None
    return (space.placed(u), special_rules.move_allowance(u), machine, u.profile.M, magic.forbids(battle, u, "march"),
            may_march(u) and not t9a_artillery.forbids(battle, u, "march"),
            special_rules.moves_over_units(u), u.has("aquatic"), u.has("skirmishers"), enemy)


class _Entry(NamedTuple):
    """A unit's cached move options (see :func:`legal`)."""

    neighbourhood: tuple
    options: list[str]
    context: tuple
    decisions: dict[str, space.Decision]


def _decide(battle: Battle, u: UnitState, option: str, env: space.Surroundings, units: space.UnitsOnTable) -> space.Decision:
    """Decide whether ``option`` is legal for ``u`` now, recording the units that decision looked at."""
    return space.decide(lambda: _plan(battle, u, option, env, check_only=True) is not None, env, units)


def legal(battle: Battle) -> list[Action]:
    """Legal ``move`` actions of the phasing player (CORE.MOVE.REMAINING).

    Each unit's options are cached against its neighbourhood (the units within
    its reach and the nearest enemy), so a decision only re-checks the units
    near the one that just moved. Within a re-check, an option is decided
    again only if a unit has moved into, out of or within the region its last
    decision looked at (:class:`space.Decision`); outside a siege, where the
    castle may change, the answers are those of deciding every option afresh.

    Where the compiled core applies (:func:`kernel.terrain_table`: no siege,
    convex terrain) every option of every unit is decided afresh in one
    native call (:func:`kernel.unit_moves`), with the same answers (a tie goes to the reference).
    """
    terrain = None if battle.state.castle or not kernel.available() else kernel.terrain_table(battle.state)
    if terrain is not None:
        return _legal_native(battle, terrain) + characters.legal_moves(battle)
    cache: dict[int, _Entry] = battle.__dict__.setdefault("_move_cache", {})
    acts = []
    units: space.UnitsOnTable | None = None
    for u in space.alive_units(battle.state, battle.state.active):
        if not can_move(battle, u):
            continue
        key = _neighbourhood(battle, u)
        hit = cache.get(u.uid)
        if hit is not None and hit.neighbourhood == key:
            options = hit.options
        else:
            units = units or space.UnitsOnTable(battle.state)
            context = _own_context(battle, u, key[1])
            known = hit.decisions if hit is not None and hit.context == context and not battle.state.castle else {}
            env: space.Surroundings | None = None
            candidates = war_machines.move_options(u, list(MOVE_OPTIONS)) if u.troop_type == "war_machine" else MOVE_OPTIONS
            decisions = {}
            for o in candidates:
                d = known.get(o)
                if d is None or not d.holds(units, u.uid):
                    env = env or space.Surroundings(battle.state, u)  # the reference: no compiled core here
                    d = _decide(battle, u, o, env, units)
                decisions[o] = d
            options = [o for o in candidates if decisions[o].legal]
            cache[u.uid] = _Entry(key, options, context, decisions)
        acts.extend(Action("move", u.uid, None, o) for o in options)
    if battle.state.castle:  # SIEGE.CASTLE.GATE, SIEGE.CAPTURE.UNDEFENDED: gate and occupy orders
        from battleline.env.rules.siege.orders import legal_moves

        acts += legal_moves(battle)
    return acts + characters.legal_moves(battle)


_ALL_CODES = [kernel.OPTION_CODES[o] for o in MOVE_OPTIONS]

_MOVE_ACTIONS: dict[tuple[int, tuple[str, ...]], tuple[Action, ...]] = {}
"""Move actions by (uid, options), made once: an :class:`Action` is frozen, so one object serves every decision."""


def _move_actions(uid: int, options: tuple[str, ...]) -> tuple[Action, ...]:
    """``Action("move", uid, None, o)`` for each of ``options``, the same objects each time."""
    acts = _MOVE_ACTIONS.get((uid, options))
    if acts is None:
        acts = _MOVE_ACTIONS[(uid, options)] = tuple(Action("move", uid, None, o) for o in options)
    return acts


_OWN_FIGURES: dict[tuple[tuple[str, ...], str, int], tuple[bool, bool, bool, float, float, bool]] = {}
"""A unit's figures for a :func:`kernel.unit_moves` request that rest on its special rules, troop type and M only,
by (special rules, troop type, M): moves over units, skirmishers, aquatic, M/2, normal move allowance, may march.
Cleared when it grows past 4096 entries."""


def _own_figures(u: UnitState) -> tuple[bool, bool, bool, float, float, bool]:
    """(moves over units (CORE.MOVE.FLY, CORE.SR.ETHEREAL), skirmishers, aquatic, M/2, :func:`normal_move_allowance`,
    :func:`may_march`) of ``u``, a unit that is no war machine (its allowance rests on its crew), from a cache."""
    key = (tuple(u.special_rules), u.troop_type, u.profile.M)
    hit = _OWN_FIGURES.get(key)
    if hit is None:
        if len(_OWN_FIGURES) > 4096:
            _OWN_FIGURES.clear()
        hit = _OWN_FIGURES[key] = (special_rules.moves_over_units(u), u.has("skirmishers"), u.has("aquatic"),
                                   u.profile.M / 2.0, normal_move_allowance(u), may_march(u))
    return hit


def _legal_native(battle: Battle, terrain: list) -> list[Action]:
    """:func:`legal`'s move actions (characters' aside) decided by the compiled core, all units in one call.

    What every mover's request reads of the others is gathered once: the engaged uids (:func:`can_move`) and
    the non-fleeing enemies in uid order, whose nearest (centre to centre, the lower uid on a tie) is
    :func:`psychology.nearest_enemy`'s answer, met with the same ``math.hypot`` distances.
    """
    s = battle.state
    active = s.active
    # UnitState.alive from its fields: the rows of kernel.table_of, in order
    on_table = [o for o in s.units if o.models > 0 and o.deployed and not o.removed and o.joined_to is None]
    engaged = {uid for e in s.engagements for uid in (e.attacker, e.defender)}
    foes = [(e.x, e.y) for e in on_table if e.side != active and not e.fleeing]
    spells = bool(s.effects)  # magic.forbids answers no without any spell in effect
    artillery = t9a.on(s, t9a.ARTILLERY)  # t9a_artillery.forbids answers no without the module
    hypot = math.hypot
    requests, asked = [], []
    for row, u in enumerate(on_table):
        f = u.flags
        # can_move (CORE.MOVE.REMAINING) of a unit on the table
        if (u.side != active or u.fleeing or (f and any(map(f.get, _DONE_FLAGS))) or u.profile.M <= 0
                or u.uid in engaged):
            continue
        war_machine = u.troop_type == "war_machine"
        if war_machine:
            names = tuple(war_machines.move_options(u, list(MOVE_OPTIONS)))
            own = (special_rules.moves_over_units(u), u.has("skirmishers"), u.has("aquatic"), u.profile.M / 2.0,
                   normal_move_allowance(u), may_march(u))
        else:
            names = MOVE_OPTIONS
            own = _own_figures(u)
        face = math.nan
        if foes and (not war_machine or "reform_face" in names):
            x, y = u.x, u.y
            ex, ey = foes[0]
            best = hypot(ex - x, ey - y)
            for fx, fy in foes:
                d = hypot(fx - x, fy - y)
                if d < best:
                    ex, ey, best = fx, fy, d
            face = geo.facing_towards((x, y), (ex, ey))
        march_ok = (own[5] and not (spells and magic.forbids(battle, u, "march"))
                    and not (artillery and t9a_artillery.forbids(battle, u, "march")))
        codes = [kernel.OPTION_CODES[o] for o in names] if war_machine else _ALL_CODES
        requests.append((row, own[0], own[1], own[2], own[3], own[4], march_ok, u.files, u.models, u.base_w, u.base_d,
                         war_machine, (codes, face)))
        asked.append((u.uid, names))
    if not requests:
        return []
    answers = kernel.unit_moves(kernel.decision_table(battle), terrain, float(s.table_w), float(s.table_h), requests,
                                kernel.move_memo(battle))
    acts: list[Action] = []
    for (uid, names), legal in zip(asked, answers):
        if -1 in legal:  # a tie: the reference decides
            u = battle.unit(uid)
            legal = [ok if ok >= 0 else _plan(battle, u, o, space.Surroundings(s, u), check_only=True) is not None
                     for o, ok in zip(names, legal)]
        acts.extend(compress(_move_actions(uid, names), legal))
    return acts


def _enemy_within(battle: Battle, u: UnitState, reach: float) -> bool:
    for e in space.alive_units(battle.state, 1 - u.side):
        if not e.fleeing and space.near(u, e, reach) and space.unit_distance(u, e) <= reach:
            return True
    return False


def apply(battle: Battle, action: Action, table: Any = None) -> None:
    """Make one remaining move, or end the Movement phase (end_phase).

    ``table``: the units as they stand, a :func:`kernel.table_of` kept from working out the legal actions
    (:func:`kernel.decided_table`), or None; the move's scene is built from it.
    """
    if action.kind == "end_phase":
        battle.finish_phase()
        return
    if action.option in characters.CHARACTER_MOVES:
        characters.apply_move(battle, action)  # CORE.MOVE.JOIN / CORE.MOVE.LEAVE
        return
    if battle.state.castle:  # SIEGE.CASTLE.GATE, SIEGE.CAPTURE.UNDEFENDED
        from battleline.env.rules.siege import orders

        if orders.is_siege_move(action.option):
            orders.apply_move(battle, action)
            return
    u = battle.unit(action.unit)
    option = action.option
    marching = None
    if option.startswith("march"):
        marching = True
        if _enemy_within(battle, u, MARCH_BLOCK_RANGE):
            marching = (_t9a_march_test(battle, u) if t9a.on(battle.state, t9a.CHARACTERS)  # ⇒ T9A.MARCH.TEST
                        else psychology.test_ld(battle, u, characters.unit_ld(battle, u), "CORE.MOVE.MARCH_BLOCK"))
    plan = _plan(battle, u, option, surroundings(battle, u, table), marching)
    if plan is None:  # the march failed its test and the normal move is blocked
        u.flags["moved"] = True
        battle.emit("T9A.MARCH.TEST" if t9a.on(battle.state, t9a.CHARACTERS) else "CORE.MOVE.MARCH_BLOCK", unit=u.uid, moved=False)
        return
    pose = plan["pose"]
    u.x, u.y, u.facing = pose.x, pose.y, pose.facing % 360.0
    u.files = plan["files"]
    u.flags["moved"] = True
    if marching:
        u.flags["marched"] = True
    rule = _rule_for(option, marching)
    battle.emit(rule, unit=u.uid, option=option, distance=plan["distance"], x=u.x, y=u.y, facing=u.facing, files=u.files)
    if u.troop_type == "war_machine":
        war_machines.moved(battle, u, option, plan["distance"])


def _t9a_march_test(battle: Battle, u: UnitState) -> bool:
    """T9A.MARCH.TEST for ``u`` with its characters (:func:`env.rules.t9a.characters.march_test`)."""
    from battleline.env.rules.t9a.characters import march_test

    return march_test(battle, u)


def _rule_for(option: str, marching: bool | None) -> str:
    if option.startswith("reform"):
        return "CORE.MOVE.REFORM"
    if option in ("turn_left", "turn_right", "about_face"):
        return "CORE.MOVE.TURN"
    if "wheel" in option:
        return "CORE.MOVE.WHEEL"
    if marching:
        return "CORE.MOVE.MARCH"
    return "CORE.MOVE.NORMAL"
