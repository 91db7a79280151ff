"""The siege in play: the hooks through which the engine calls the siege rules.

Each function is called by one engine module only when ``state.castle`` is
not empty (a battle with the ``siege`` module):

* deployment (SIEGE.SCEN.DEPLOY): :func:`deploy_pose`, :func:`deploy_legal`,
  :func:`deploy_files` — the defender deploys first, on the front walls
  (slot row 0, one rank, front flush with the outer face) or in the
  courtyard (rows 1–4, :data:`COURTYARD_FRONTS`); the attacker in the normal
  12" zone; no Scouts rows (:mod:`env.rules.siege.room` keeps room in the
  castle for every defender unit);
* movement: :class:`env.rules.space.Surroundings` adds
  :func:`env.rules.siege.castle.impassable_shapes` to its impassable terrain;
* close combat (SIEGE.ASSAULT.*, SIEGE.CC.*): :func:`wall_fight` tells
  whether two units fight at a wall and with which assault mode;
  :func:`to_hit` and :func:`strikes_first` give the defenders' bonus,
  :func:`result_parts` drops ranks and outnumber, :func:`round_won` takes
  the parapet;
* victory (SIEGE.SCEN.VICTORY): :func:`update_control` and :func:`winner`;
* fighting at a tower's door (SIEGE.TOWER.ASSAULT): :func:`door_element` (who may
  assault whom), :func:`engage_at_door` (the engagement without base contact,
  recorded in ``CastleElement.door_fights``), :func:`door_fighters` (2 a side),
  :func:`breaks_at_door` and :func:`settle_doors` (the winner moves in).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

from battleline.env.rules import geometry as geo
from battleline.env.rules.siege import assault
from battleline.env.rules.siege import equipment as eq
from battleline.env.rules.siege.castle import (
    NO_WALL_TYPES,
    CastleElement,
    courtyard,
    element_under,
    units_in,
    units_on,
    victory_needed,
)

if TYPE_CHECKING:
    from battleline.env.rules import space
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import BattleState, UnitState

WALL_ROW = 0
"""Slot row 0 of the defender is a place on the front walls (SIEGE.SCEN.DEPLOY)."""
COURTYARD_FRONTS = {1: 7.0, 2: 3.0, 3: 11.0, 4: 15.0}
"""The defender's courtyard slot rows: the front edge's distance (inches) from his own edge. Rows 3 and 4 are
the Scouts rows elsewhere (17" and 23"), which a siege has no use for (SIEGE.SCEN.DEPLOY)."""
COURTYARD_ROWS = tuple(COURTYARD_FRONTS)
FRONT = ("S1", "S2", "S3")
"""The front wall sections of the standard castle (facing the attacker's edge)."""


def defender(state: BattleState) -> int:
    """The side holding the castle."""
    return state.castle[0].defender


# --------------------------------------------------------------------- deployment
def _front_walls(state: BattleState) -> list[CastleElement]:
    """The standing wall sections that face the attacker's edge (outward towards him)."""
    d = defender(state)
    want = 90.0 if d == 0 else 270.0
    return [e for e in state.castle if e.kind == "wall" and e.standing and abs((e.outward - want) % 360.0) < 1e-6]


def deploy_files(state: BattleState, u: UnitState, slot: int, n_columns: int) -> int | None:
    """Files the unit takes in ``slot``: all its models (one rank) on a wall, None to keep its formation."""
    if u.side == defender(state) and slot // n_columns == WALL_ROW:
        return max(1, u.models)
    return None


def deploy_pose(state: BattleState, u: UnitState, slot: int, columns: tuple[float, ...], rows: tuple[float, ...]) -> geo.Pose:
    """The pose of ``u`` in ``slot`` in a siege.

    The defender's row-0 slots stand on the front walls, one rank deep, the
    front flush with the outer face; his rows 1–4 stand in the courtyard, the
    front edge :data:`COURTYARD_FRONTS` inches from his edge; the attacker's
    slots are the normal ones (``rows``: front edges in inches).
    """
    row, col = divmod(slot, len(columns))
    x = columns[col]
    if u.side == defender(state) and row == WALL_ROW and _front_walls(state):
        walls = _front_walls(state)
        d = defender(state)
        # the outer face: the front walls' edge towards the attacker
        outer = max(max(p[1] for p in e.polygon) for e in walls) if d == 0 else min(min(p[1] for p in e.polygon) for e in walls)
        if d == 0:
            return geo.Pose(x, outer - u.base_d / 2, 90.0)
        return geo.Pose(state.table_w - x, outer + u.base_d / 2, 270.0)
    front = COURTYARD_FRONTS[row] if u.side == defender(state) and row in COURTYARD_FRONTS else rows[row]
    if u.side == 0:
        return geo.Pose(x, front - u.depth / 2, 90.0)
    return geo.Pose(state.table_w - x, state.table_h - front + u.depth / 2, 270.0)


def deploy_legal(state: BattleState, u: UnitState, slot: int, poly, env: space.Surroundings, n_columns: int,
                 zone: float) -> bool:
    """Whether ``u`` may deploy in ``slot`` (footprint ``poly``) in a siege (SIEGE.SCEN.DEPLOY).

    Defender: row 0 on the front walls (no cavalry or chariots, one rank,
    wholly on the walls and towers), rows 1–4 wholly in the courtyard
    (:func:`in_courtyard`).
    Attacker: rows 0–2 within ``zone`` inches of his edge. No Scouts rows.
    """
    row = slot // n_columns
    if u.side == defender(state):
        if row == WALL_ROW:
            if u.troop_type in NO_WALL_TYPES or u.troop_type == "war_machine":
                return False
            import shapely

            walls = shapely.union_all([e.shape() for e in state.castle if e.kind in ("wall", "tower") and e.standing])
            if not walls.buffer(geo.EPS).covers(poly):
                return False
            if element_under(state, _at(u, poly)) is None:
                return False
            on_wall = copy.copy(env)  # the castle does not block a unit deploying onto it
            on_wall.impassable = env.terrain_impassable
            return not on_wall.blocked(poly, poly)
        return row in COURTYARD_ROWS and in_courtyard(state, poly, env)
    if row > 2:
        return False
    minx, miny, maxx, maxy = poly.bounds
    in_zone = maxy <= zone + geo.EPS if u.side == 0 else miny >= state.table_h - zone - geo.EPS
    return in_zone and not env.blocked(poly, poly)


def in_courtyard(state: BattleState, poly, env: space.Surroundings) -> bool:
    """Whether footprint ``poly`` stands wholly in the courtyard, clear (1") of every other unit and of
    impassable terrain (SIEGE.SCEN.CASTLE, CORE.MOVE.ONE_INCH)."""
    return courtyard(state).buffer(geo.EPS).covers(poly) and not env.blocked(poly, poly)


class _Centre:
    """A stand-in with only a centre, for :func:`element_under`."""

    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y


def _at(u: UnitState, poly) -> UnitState:
    c = poly.centroid
    return _Centre(c.x, c.y)  # type: ignore[return-value]


# --------------------------------------------------------------------- close combat at a wall
def wall_fight(state: BattleState, attacker: UnitState, target: UnitState) -> tuple[CastleElement, str | None] | None:
    """The wall section and assault mode when ``attacker`` (off the walls) strikes ``target`` on a wall section.

    None when the fight is not at a wall: the target stands on no wall, or the
    attacker stands on an element too (a fight along the walls).
    """
    if not state.castle:
        return None
    e = element_under(state, target)
    if e is None or e.kind != "wall" or element_under(state, attacker) is not None:
        return None
    return e, assault.assault_mode(attacker)


def to_hit(state: BattleState, attacker: UnitState, target: UnitState, normal: int) -> int:
    """The attacker's to-hit score against ``target`` (SIEGE.CC.DEFENDER_BONUS): 6 for climbers on ladders or hooks."""
    w = wall_fight(state, attacker, target)
    if w is None:
        return normal
    e, mode = w
    return assault.NATURAL_SIX if assault.defender_bonus(mode, e) else normal


def strikes_first(state: BattleState, u: UnitState, enemy: UnitState) -> bool:
    """Whether ``u`` on a wall strikes first against ``enemy`` climbing with ladders or hooks (SIEGE.CC.DEFENDER_BONUS)."""
    w = wall_fight(state, enemy, u)
    if w is None:
        return False
    e, mode = w
    return assault.defenders_strike_first(mode, e)


def at_wall(state: BattleState, a: list[UnitState], b: list[UnitState]) -> CastleElement | None:
    """The wall section a combat between unit lists ``a`` and ``b`` is fought at, if any."""
    for x in a:
        for y in b:
            w = wall_fight(state, x, y) or wall_fight(state, y, x)
            if w is not None:
                return w[0]
    return None


def result_parts(state: BattleState, a: list[UnitState], b: list[UnitState], parts: dict[str, int]) -> dict[str, int]:
    """SIEGE.CC.RESULT: at a wall, or at a tower's door (DEFAULT: 2 models a side fight there), neither side
    counts ranks or outnumber."""
    if at_wall(state, a, b) is None and at_door(state, a, b) is None:
        return parts
    return assault.wall_result_parts(parts)


def round_won(battle: Battle, winners: list[UnitState], losers: list[UnitState]) -> None:
    """SIEGE.CAPTURE.PARAPET: attackers off the walls won a round against a wall's defenders."""
    for w in winners:
        for x in losers:
            hit = wall_fight(battle.state, w, x)
            if hit is not None and not hit[0].parapet_taken:
                assault.attackers_win_round(battle, hit[0], w)
                return


# --------------------------------------------------------------------- victory
def controller(state: BattleState, e: CastleElement) -> int | None:
    """SIEGE.SCEN.VICTORY: the side with a non-fleeing unit on or in ``e`` and the enemy none; else who held it."""
    sides = {u.side for u in units_in(state, e) if not u.fleeing}
    if len(sides) == 1:
        return sides.pop()
    return e.controller


def update_control(battle: Battle) -> None:
    """Refresh each element's controller (called at the end of every turn)."""
    for e in battle.state.castle:
        c = controller(battle.state, e)
        if c != e.controller:
            e.controller = c
            battle.emit("SIEGE.SCEN.VICTORY", element=e.id, controller=c)


def defenders_gone(state: BattleState) -> bool:
    """SIEGE.SCEN.VICTORY: every defender unit is destroyed or has fled (off the table)."""
    d = defender(state)
    return not any(u.alive and u.side == d for u in state.units if not u.removed)


def winner(state: BattleState) -> int:
    """SIEGE.SCEN.VICTORY at the end: the attacker wins with C or at least 5 of the 9 elements, else the defender.

    A custom castle: with any element whose ``victory`` is "key", or with as many of the counted ones as
    :func:`env.rules.siege.castle.victory_needed` says (the castle's own ``victory_needed``, kept in
    ``state.queue["siege_victory_needed"]``, else the standard share)."""
    d = defender(state)
    att = 1 - d
    if defenders_gone(state):
        return att
    held = [e for e in state.castle if e.victory and controller(state, e) == att]
    if any(e.victory == "key" for e in held) or len(held) >= victory_needed(state.castle,
                                                                           state.queue.get("siege_victory_needed")):
        return att
    return d


def bridge_at_tower(state: BattleState, a: UnitState, d: UnitState) -> CastleElement | None:
    """The tower or citadel a fight between ``a`` and ``d`` is fought at across a siege tower's bridge: one
    stands on it, the other, off every element, assaults with a siege tower (SIEGE.EQUIP.SIEGE_TOWER,
    SIEGE.CC.RESULT); None otherwise."""
    for off, on in ((a, d), (d, a)):
        e = element_under(state, on)
        if e is None or not e.is_tower or element_under(state, off) is not None:
            continue
        if assault.assault_mode(off) == "siege_tower":
            return e
    return None


def fighters(battle: Battle, a: UnitState, d: UnitState, a_n: int, d_n: int) -> tuple[int, int]:
    """SIEGE.ASSAULT.CLIMB, SIEGE.CC.RESULT: fighting models of an engagement ``a`` → ``d`` at a wall or tower.

    The unit off the wall fights with its climbers only (none without gear;
    at most 2 at a siege tower's bridge, and 2 defenders there). Against
    ladder or hook climbers only the defenders touching them fight
    (:func:`env.rules.siege.assault.defenders_touching`: 3 for one climber
    with equal bases), logged as SIEGE.ASSAULT.CLIMB with the element, the
    climbing unit, its target, the mode, its ladders and both counts. Across a
    siege tower's bridge onto a tower or the citadel, at most 2 models per
    side fight (:func:`bridge_at_tower`; event SIEGE.CC.RESULT), and so at a tower's door
    (:func:`door_fighters`, SIEGE.TOWER.ASSAULT), where there is no base contact.
    """
    state = battle.state
    at_the_door = door_fighters(battle, a, d)
    if at_the_door is not None:
        return at_the_door
    tower = bridge_at_tower(state, a, d)
    if tower is not None:
        n = (min(a_n, assault.DOOR_FIGHTERS), min(d_n, assault.DOOR_FIGHTERS))
        battle.emit("SIEGE.CC.RESULT", element=tower.id, at="bridge", unit=a.uid, target=d.uid, models=[a_n, d_n],
                    fighters=list(n))
        return n
    for off, on, swap in ((a, d, False), (d, a, True)):
        w = wall_fight(state, off, on)
        if w is None:
            continue
        e, mode = w
        n_off, n_on = (d_n, a_n) if swap else (a_n, d_n)
        n_off = assault.climbers(off, n_off)
        if mode == "siege_tower":
            n_on = min(n_on, assault.DOOR_FIGHTERS)
        elif mode in ("ladders", "hooks"):
            n_on = assault.defenders_touching(n_off, off.base_w, on.base_w, on.models_in_rank(1))
            battle.emit("SIEGE.ASSAULT.CLIMB", element=e.id, unit=off.uid, target=on.uid, mode=mode,
                        ladders=eq.carried(off).get("ladders", 0), climbers=n_off, defenders=n_on)
        return (n_on, n_off) if swap else (n_off, n_on)
    return a_n, d_n


def _fall_back(battle: Battle, u: UnitState, e: CastleElement, away_from: int, **info: object) -> None:
    """SIEGE.BREAK.ATTACKER: broken attacker ``u`` falls back 2D6" away from element ``e``, fleeing, unpursued."""
    from battleline.env.rules import psychology

    c = e.shape().centroid
    roll, _ = battle.dice.flee_roll("SIEGE.BREAK.ATTACKER", False)
    battle.emit("SIEGE.BREAK.ATTACKER", unit=u.uid, element=e.id, distance=roll, **info)
    psychology.flee(battle, u, (c.x, c.y), "SIEGE.BREAK.ATTACKER", roll=roll, away_from=away_from)


def breaks_at_wall(battle: Battle, broken: list[int]) -> list[int]:
    """SIEGE.BREAK.ATTACKER / DEFENDER for units broken in a fight at a wall; returns the others.

    A broken attacker falls back 2D6" away from the wall, fleeing, and is not
    pursued. A broken defender flees 2D6" into the courtyard (away from the
    climbers; CORE.CC.FLEE): each climbing unit rolls 2D6 and destroys it
    only on a higher roll — a tie escapes (SIEGE.BREAK.DEFENDER, RULESET.md
    conflict 8, unlike CORE.CC.CAUGHT in the field) — without a pursuit
    move. The rolls, the verdict and the destruction are all logged under
    SIEGE.BREAK.DEFENDER (``roll``, ``pursuit_rolls``, ``caught``).
    """
    from battleline.env.rules import psychology

    s = battle.state
    rest: list[int] = []
    for uid in broken:
        u = battle.unit(uid)
        if not u.alive:
            continue
        enemies = [battle.unit(e.defender if e.attacker == uid else e.attacker) for e in s.engagements
                   if uid in (e.attacker, e.defender)]
        off = [o for o in enemies if o.alive and wall_fight(s, u, o) is not None]
        on = [o for o in enemies if o.alive and wall_fight(s, o, u) is not None]
        if off:  # u stands off the wall: a broken attacker
            e, _mode = wall_fight(s, u, off[0])  # type: ignore[misc]
            _fall_back(battle, u, e, off[0].uid)
        elif on:  # u stands on the wall: a broken defender
            e = element_under(s, u)
            flee_roll, _ = battle.dice.flee_roll("SIEGE.BREAK.DEFENDER", False)
            rolls = {str(o.uid): battle.dice.flee_roll("SIEGE.BREAK.DEFENDER", False)[0] for o in on}
            caught = any(r > flee_roll for r in rolls.values())  # a tie escapes
            battle.emit("SIEGE.BREAK.DEFENDER", unit=uid, element=e.id if e else None, roll=flee_roll,
                        pursuit_rolls=rolls, caught=caught)
            if caught:
                psychology.destroy(battle, u, "SIEGE.BREAK.DEFENDER", flee_roll=flee_roll, pursuit_rolls=rolls)
            else:
                src = on[0]
                psychology.flee(battle, u, (src.x, src.y), "CORE.CC.FLEE", roll=flee_roll, away_from=src.uid)
            if e is not None:
                take_section(battle, e, on[0])
        else:
            rest.append(uid)
    return rest


# --------------------------------------------------------------------- charges at a wall
def charge_target_ok(state: BattleState, c: UnitState, t: UnitState) -> bool:
    """SIEGE.ASSAULT.CHARGE: a unit off the walls charges an enemy on a wall section or tower only with
    climbing gear (ladders and hooks on walls, a siege tower on walls and towers); cavalry never."""
    if element_under(state, c) is not None:
        return True  # along the walls: the normal rules
    e = element_under(state, t)
    if e is None:
        return True
    if c.troop_type in NO_WALL_TYPES or not eq.has_climbing_gear(c):
        return False
    mode = assault.assault_mode(c)
    return e.kind == "wall" or mode == "siege_tower"


def wall_reaction_gear(state: BattleState, t: UnitState, c: UnitState) -> str | None:
    """The oil or stones ``t`` may add to a Stand and Shoot against ``c`` (SIEGE.REACT.WALL), or None.

    ``t`` must stand on a wall section, ``c`` come off the walls with ladders or
    hooks (never a siege tower); a cauldron must be ready (SIEGE.EQUIP.CAULDRON_USE).
    """
    e = element_under(state, t)
    if e is None or e.kind != "wall" or element_under(state, c) is not None:
        return None
    if assault.assault_mode(c) not in ("ladders", "hooks"):
        return None
    gear = eq.carried(t)
    variant = eq.cauldron_variant(t)
    if variant is not None and t.models >= 2:
        cauldron = next((k for k in e.cauldrons if k.get("crew") == t.uid), None)
        if cauldron is None or assault.cauldron_ready(cauldron, state.turn):
            return "cauldron"
    if gear.get("stones") or gear.get("logs"):
        return "stones"
    return None


def wall_reaction(battle: Battle, t: UnitState, c: UnitState) -> int:
    """Pour the cauldron or drop stones on ``c`` now that it reached the wall (SIEGE.REACT.WALL); unsaved wounds."""
    from shapely.geometry import Point

    gear = wall_reaction_gear(battle.state, t, c)
    if gear is None or not t.alive or not c.alive:
        return 0
    e = element_under(battle.state, t)
    assert e is not None
    battle.emit("SIEGE.REACT.WALL", unit=t.uid, charger=c.uid, gear=gear, element=e.id)
    if gear == "cauldron":
        along = e.outer_face().project(Point(c.x, c.y))
        return assault.pour(battle, t, e, c, along=along)
    return assault.throw_stones(battle, t, c, cover=0)


# --------------------------------------------------------------------- moving on the walls
def end_check(state: BattleState, u: UnitState):
    """For a unit standing on a castle element, a test of where its moves may end (SIEGE.MOVE.WALLS,
    SIEGE.CASTLE.WALL): off every standing element, or wholly on the walls and towers with its centre on
    one and, on a wall section, in one rank (the footprint one base deep); None for every other unit (the
    castle blocks it instead)."""
    import math

    import shapely

    if element_under(state, u) is None:
        return None
    shapes = [e.shape() for e in state.castle if e.kind != "gate" and e.standing]
    if not shapes:
        return None
    solid = shapely.union_all(shapes)
    on_top = solid.buffer(0.01, join_style="mitre")
    one_rank = u.models * u.base_w

    def ok(end) -> bool:
        inner = end.buffer(-geo.EPS, join_style="mitre")
        if not inner.intersects(solid):
            return True
        c = end.centroid
        e = next((x for x in state.castle if x.kind != "gate" and x.standing and x.shape().covers(c)), None)
        if e is None or u.troop_type in NO_WALL_TYPES or not on_top.covers(end):
            return False  # nothing overhangs a wall or tower
        if e.kind != "wall":
            return True
        pts = list(end.exterior.coords)
        sides = sorted(math.dist(pts[i], pts[i + 1]) for i in range(2))
        return abs(sides[0] - u.base_d) < 1e-3 and abs(sides[1] - one_rank) < 1e-3

    return ok


def move_option_ok(state: BattleState, u: UnitState, option: str) -> bool:
    """SIEGE.CASTLE.WALL: a unit on a wall section keeps its one rank: no turns or reforms there."""
    if not option.startswith(("turn_", "reform_")):
        return True
    e = element_under(state, u)
    return e is None or e.kind != "wall"


def wall_pose(e: CastleElement, u: UnitState, inward: bool = False) -> geo.Pose:
    """Where ``u`` stands on wall section ``e`` in one rank, as near its present position along the wall as
    the section allows (SIEGE.CASTLE.WALL): front flush with the outer face facing out, or with ``inward``
    (attackers taking the wall) front flush with the inner face, facing the courtyard. A unit longer than
    the section is centred on it and reaches onto its neighbours."""
    import math

    from shapely.geometry import Point

    face = e.inner_face() if inward else e.outer_face()
    along = face.project(Point(u.x, u.y))
    half = u.models * u.base_w / 2
    along = min(max(along, half), max(half, face.length - half)) if 2 * half <= face.length else face.length / 2
    p = face.interpolate(along)
    ox, oy = math.cos(math.radians(e.outward)), math.sin(math.radians(e.outward))
    if inward:
        return geo.Pose(p.x + ox * u.base_d / 2, p.y + oy * u.base_d / 2, (e.outward + 180.0) % 360.0)
    return geo.Pose(p.x - ox * u.base_d / 2, p.y - oy * u.base_d / 2, e.outward)


def take_section(battle: Battle, e: CastleElement, attacker: UnitState) -> None:
    """SIEGE.CAPTURE.PARAPET: a wall section left without defenders belongs to the attacker, who steps onto
    it in one rank facing the courtyard (:func:`wall_pose`) where the whole unit fits.

    An attacker still engaged with another enemy unit stays where it fights (a unit in combat does not move
    out of base contact, CORE.CC.CONTACT_KEEP): the section is its side's, and the event says ``stepped``
    False with ``engaged`` naming the enemies.
    """
    from battleline.env.rules.siege.orders import _placement

    s = battle.state
    if any(o.side != attacker.side for o in units_on(s, e)) or not attacker.alive:
        return
    e.controller = attacker.side
    if attacker.troop_type in NO_WALL_TYPES:
        battle.emit("SIEGE.CAPTURE.PARAPET", element=e.id, unit=attacker.uid, controller=e.controller, stepped=False)
        return
    engaged = sorted(g.defender if g.attacker == attacker.uid else g.attacker for g in s.engagements
                     if attacker.uid in (g.attacker, g.defender))
    if engaged:
        battle.emit("SIEGE.CAPTURE.PARAPET", element=e.id, unit=attacker.uid, controller=e.controller, stepped=False,
                    engaged=engaged)
        return
    pose = _placement(battle, e, attacker)
    if pose is not None:
        from battleline.env.rules import characters

        attacker.x, attacker.y, attacker.facing, attacker.files = pose.x, pose.y, pose.facing, attacker.models
        characters.sync(s)
    battle.emit("SIEGE.CAPTURE.PARAPET", element=e.id, unit=attacker.uid, controller=e.controller,
                stepped=pose is not None)


# --------------------------------------------------------------------- fighting at a tower's door
def door_element(state: BattleState, c: UnitState, t: UnitState) -> CastleElement | None:
    """The tower or citadel at whose door ``c`` may assault ``t`` (SIEGE.TOWER.ASSAULT), or None.

    ``t`` stands on or in a standing tower or the citadel; ``c`` (not cavalry, a chariot, a large creature
    or a war machine, which may not enter towers; not a lone character) stands in the courtyard, or on a
    wall section its side holds that adjoins the tower, and touches the tower (within
    :data:`env.rules.siege.orders.CONTACT` inches: DEFAULT, the door is wherever the unit touches it).
    """
    from battleline.env.rules import space
    from battleline.env.rules.siege.castle import NO_ENTRY_TYPES
    from battleline.env.rules.siege.orders import CONTACT, in_courtyard

    if not state.castle or c.side == t.side or c.troop_type in NO_ENTRY_TYPES or c.troop_type == "war_machine":
        return None
    if c.character or t.fleeing:
        return None
    e = element_under(state, t)
    if e is None or not e.is_tower:
        e = next((x for x in state.castle if t.uid in x.inside and x.is_tower and x.standing), None)
    if e is None or c.uid in e.inside:
        return None
    here = element_under(state, c)
    if here is None:
        if not in_courtyard(state, c):
            return None
    elif here.kind != "wall" or here.controller != c.side or here.shape().distance(e.shape()) > geo.EPS:
        return None
    return e if e.shape().distance(space.footprint(c)) <= CONTACT + geo.EPS else None


def door_fight(state: BattleState, a: UnitState, d: UnitState) -> CastleElement | None:
    """The tower or citadel whose door ``a`` and ``d`` (either way round) are fighting at, or None."""
    pair = sorted((a.uid, d.uid))
    for e in state.castle:
        if any(sorted(p) == pair for p in e.door_fights):
            return e
    return None


def engage_at_door(battle: Battle, c: UnitState, t: UnitState, e: CastleElement) -> None:
    """SIEGE.TOWER.ASSAULT: ``c``'s assault on ``t`` at ``e``'s door arrives: no charge move (``c`` already
    touches the door); the two are engaged, ``c`` as the charger, without base contact (a door fight)."""
    from battleline.env.rules.state import Engagement

    c.flags["charged"] = True
    c.flags["charged_into"] = t.uid
    battle.state.engagements.append(Engagement(attacker=c.uid, defender=t.uid, facing="front", charged=True,
                                               turn=battle.state.turn))
    e.door_fights.append([c.uid, t.uid])
    here = element_under(battle.state, c)
    battle.emit("SIEGE.TOWER.ASSAULT", element=e.id, unit=c.uid, target=t.uid, at="door", engaged=True,
                via=here.id if here else "courtyard")


def door_fighters(battle: Battle, a: UnitState, d: UnitState) -> tuple[int, int] | None:
    """SIEGE.CC.RESULT, SIEGE.TOWER.ASSAULT: (a's, d's) fighting models at a door: 2 a side (fewer if a
    side has fewer models), whatever the geometry; None when ``a`` and ``d`` do not fight at a door."""
    e = door_fight(battle.state, a, d)
    if e is None:
        return None
    n = (min(a.models, assault.DOOR_FIGHTERS), min(d.models, assault.DOOR_FIGHTERS))
    battle.emit("SIEGE.CC.RESULT", element=e.id, at="door", unit=a.uid, target=d.uid, models=[a.models, d.models],
                fighters=list(n))
    return n


def no_support(state: BattleState, u: UnitState, t: UnitState) -> bool:
    """SIEGE.ASSAULT.CLIMB, SIEGE.CC.RESULT: ``u`` striking ``t`` gets no supporting attacks (a fight at a wall
    or at a door: only the climbers or the 2 models at the door fight)."""
    return wall_fight(state, u, t) is not None or door_fight(state, u, t) is not None


def at_door(state: BattleState, a: list[UnitState], b: list[UnitState]) -> CastleElement | None:
    """The tower or citadel whose door a combat between unit lists ``a`` and ``b`` is fought at, if any."""
    for x in a:
        for y in b:
            e = door_fight(state, x, y)
            if e is not None:
                return e
    return None


def breaks_at_door(battle: Battle, broken: list[int]) -> list[int]:
    """SIEGE.TOWER.ASSAULT, SIEGE.BREAK.ATTACKER for units broken in a fight at a door; returns the others.

    A broken garrison (a unit on or in the tower) is destroyed. A broken attacker falls back 2D6" away from
    the tower, fleeing, and is not pursued (DEFAULT: as at a wall).
    """
    from battleline.env.rules import psychology

    s = battle.state
    pairs = {uid: (e, p) for e in s.castle for p in e.door_fights for uid in p}
    for uid in (i for i in broken if i in pairs and battle.unit(i).alive):
        e, (attacker, garrison) = pairs[uid]
        if uid == garrison:
            psychology.destroy(battle, battle.unit(uid), "SIEGE.TOWER.ASSAULT", element=e.id, broken=True, at="door")
        else:
            _fall_back(battle, battle.unit(uid), e, garrison, at="door")
    return [i for i in broken if i not in pairs]


def settle_doors(battle: Battle) -> None:
    """After a round: door fights whose engagement is over end; where the garrison is gone (destroyed, or
    the tower holds no enemy of the attacker any more), the winner enters the tower (SIEGE.TOWER.ASSAULT)
    if it is not fleeing, fights nobody else and the whole unit fits on the top (SIEGE.CASTLE.TOWER;
    DEFAULT: a unit is never split, so a unit too big for the tower stays at the door)."""
    from battleline.env.rules import characters, psychology
    from battleline.env.rules.siege.orders import _tower_pose

    s = battle.state
    live = {(g.attacker, g.defender) for g in s.engagements}
    for e in s.castle:
        for pair in list(e.door_fights):
            if tuple(pair) in live:
                continue
            e.door_fights.remove(pair)
            a = battle.unit(pair[0])
            if not a.alive or a.fleeing or psychology.engaged(battle, a):
                continue
            if any(o.side != a.side for o in units_in(s, e)):
                continue
            placed = _tower_pose(battle, e, a) if e.capacity(a.base_w, a.base_d) >= a.models else None
            if placed is None:
                battle.emit("SIEGE.TOWER.ASSAULT", element=e.id, unit=a.uid, at="door", entered=False,
                            capacity=e.capacity(a.base_w, a.base_d), models=a.models)
                continue
            pose, files = placed
            a.x, a.y, a.facing, a.files = pose.x, pose.y, pose.facing, files
            e.controller = a.side
            characters.sync(s)
            battle.emit("SIEGE.TOWER.ASSAULT", element=e.id, unit=a.uid, at="door", entered=True,
                        x=round(a.x, 3), y=round(a.y, 3), files=files, controller=a.side)
