"""Scripted agents for a siege (RULESET.md §5, SIEGE.*): ``siege_attacker`` and ``siege_defender``.

* :class:`SiegeAttackerAgent` — war machines bombard the gate, else the most
  defended wall section (:meth:`SiegeAttackerAgent.bombard`); units with ladders, hooks or a siege tower
  advance on the defended wall section nearest the gate and charge its
  defenders (SIEGE.ASSAULT.CHARGE); units without climbing gear advance on
  enemies off the walls, else close up behind the assault; characters follow;
  inside the castle, units make for the citadel's door and enter it, or
  assault its garrison there (SIEGE.TOWER.ASSAULT).
* :class:`SiegeDefenderAgent` — deploys infantry on the walls facing the
  attacker and keeps its largest infantry unit in the courtyard as the
  reserve (SIEGE.SCEN.DEPLOY); units on the walls never leave or flee from
  them, the reserve attacks enemies inside the castle, shooters shoot.

Every other decision (magic, shooting, pursuit, reactions, and whole battles
without a castle, where both play like ``line_advance``) is the base
:class:`agents.base.ScriptedAgent` behaviour, so both play legally in either seat.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING

from shapely.geometry import Point
from shapely.ops import nearest_points

from battleline.agents.base import ScriptedAgent
from battleline.agents.steering import steer
from battleline.env.rules import space
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.siege import assault
from battleline.env.rules.siege import equipment as eq
from battleline.env.rules.siege.castle import (
    NO_ENTRY_TYPES,
    CastleElement,
    castle_area,
    courtyard,
    element,
    element_under,
    units_on,
)
from battleline.env.rules.siege.orders import OCCUPY, in_contact
from battleline.env.rules.siege.orders import inside as in_castle
from battleline.env.rules.siege.play import WALL_ROW, defender, door_element
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment import line_template
from battleline.tactics.deployment_plan import DeploymentPlan

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ASSAULT_BONUS = 10.0
"""Added to the score of a charge by climbers on a wall's defenders: the attacker's main business."""
EMPTY_WALL_REACH = 12.0
"""Climbers take an empty wall section within this many inches before assaulting a defended one."""
APPROACH_GAP = 1.5
"""Inches outside a wall's outer face where climbers aim before they charge."""


class _SiegeAgent(ScriptedAgent):
    """Shared helpers: the battle-line plan (both seats), the castle, the gate."""

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The battle-line template (used for deployment order and groups)."""
        return line_template(self.army(battle), battle.state.table_w)

    def fallback_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``line_advance``: shooters with targets hold, characters follow, the rest advance."""
        if self.holds_to_shoot(battle, u):
            return None
        if u.character:
            return self.follow(battle, u, options)
        return self.advance_on(battle, u, options)

    @staticmethod
    def gate(battle: Battle) -> CastleElement | None:
        return next((e for e in battle.state.castle if e.kind == "gate"), None)


class SiegeAttackerAgent(_SiegeAgent):
    """``siege_attacker``: storm the defended wall nearest the gate with ladders, hooks and towers."""

    name = "siege_attacker"

    def assault_wall(self, battle: Battle, u: UnitState) -> CastleElement | None:
        """The standing, defended wall section (or tower, with a siege tower) nearest the gate that ``u`` may assault."""
        s = battle.state
        g = self.gate(battle)
        anchor = g.shape().centroid if g is not None else Point(s.table_w / 2, s.table_h / 2)
        walls = [e for e in s.castle if assault.can_charge(battle, u, e) and (e.kind == "wall" or assault.assault_mode(u) == "siege_tower")]
        return min(walls, key=lambda e: (e.shape().distance(anchor), e.shape().distance(Point(u.x, u.y)), e.id), default=None)

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The attacker's move for ``u``: the first of these that applies.

        Outside a siege, or seated as the defender: :meth:`fallback_move`. Else:

        * War machines stay put (None).
        * An ``occupy:<id>`` order: elements not yet held first (from a wall,
          only those), and among them the citadel (SIEGE.SCEN.VICTORY), then
          towers, then walls.
        * On a wall: :meth:`walk_the_walls`, else :meth:`from_the_walls`.
        * Inside the castle, a non-character unit that may enter goes to the door of
          a citadel not yet held (SIEGE.TOWER.ASSAULT).
        * A ram goes to a standing gate unless its unit has climbing gear and an
          empty wall to climb; climbing gear goes to an empty wall within
          :data:`EMPTY_WALL_REACH` inches, else the assault wall
          (:meth:`assault_wall`), else the nearest empty wall.
        * Characters otherwise follow (:meth:`fallback_move`).
        * The rest advance on the nearest enemy outside the castle, else the nearest
          not on a wall; with none, they wait 8" outside the gate (holding once
          within 3" of that point).
        """
        s = battle.state
        if not s.castle or u.side == defender(s):
            return self.fallback_move(battle, u, options)
        if u.troop_type == "war_machine":
            return None  # machines stand and bombard
        on_wall = element_under(s, u) is not None
        def target(o: str) -> CastleElement:
            return element(s, o[len(OCCUPY):])

        occupy = sorted(
            (o for o in options if o.startswith(OCCUPY) and (not on_wall or target(o).controller != u.side)),
            key=lambda o: (target(o).controller == u.side, target(o).victory != "key", not target(o).is_tower, o),
        )
        if occupy:  # what we do not hold yet: the key element (the citadel) first (SIEGE.SCEN.VICTORY), then towers,
            return occupy[0]  # then walls; from outside any empty section, to walk the walls from there
        if on_wall:
            return self.walk_the_walls(battle, u, options) or self.from_the_walls(battle, u, options)
        citadel = next((e for e in s.castle if e.kind == "citadel" and e.standing), None)
        if (citadel is not None and in_castle(s, u) and citadel.controller != u.side and u.troop_type not in NO_ENTRY_TYPES
                and not u.character):  # to its door: to enter it, or to assault its garrison (SIEGE.TOWER.ASSAULT)
            return self.to_door(battle, u, options, citadel)
        g = self.gate(battle)
        carried = eq.carried(u)
        area = castle_area(s)
        outside = [e for e in self.enemies(battle, fleeing=True) if not area.covers(Point(e.x, e.y))]
        climb = self.empty_wall(battle, u) if eq.has_climbing_gear(u) else None
        if (carried.get("ram") or carried.get("protected_ram")) and g is not None and g.standing and climb is None:
            return self.to_gate(battle, u, options, g)
        if eq.has_climbing_gear(u):
            empty = self.empty_wall(battle, u)
            if empty is not None and empty.outer_face().distance(Point(u.x, u.y)) > EMPTY_WALL_REACH:
                empty = None
            wall = empty or self.assault_wall(battle, u) or self.empty_wall(battle, u)
            if wall is not None:
                return self.to_wall(battle, u, options, wall)
        if u.character:
            return self.fallback_move(battle, u, options)
        # without gear: hunt the defenders outside the castle, then those off the walls, else wait by the gate
        inside = outside or [e for e in self.enemies(battle) if element_under(s, e) is None]
        if inside:
            target = min(inside, key=lambda e: (space.unit_distance(u, e), e.uid))
            return self.advance_on(battle, u, options, target)
        if g is None:
            return None
        c = g.shape().centroid
        ox, oy = math.cos(math.radians(g.outward)), math.sin(math.radians(g.outward))
        goal = (c.x + ox * 8.0, c.y + oy * 8.0)
        if math.dist((u.x, u.y), goal) < 3.0:
            return None
        return steer(battle, u, goal, "advance", options, approach=False)

    def empty_wall(self, battle: Battle, u: UnitState) -> CastleElement | None:
        """The nearest standing wall section of the enemy castle with nobody on it and room for one rank of
        ``u`` (one not held yet counts 6" nearer): where ``u`` climbs next, to walk the walls from there
        (SIEGE.CAPTURE.UNDEFENDED); None once every element that counts is held."""
        s = battle.state
        walls = [
            e for e in s.castle
            if e.kind == "wall" and e.standing and e.defender != u.side and not units_on(s, e)
            and e.capacity(u.base_w) >= u.files
        ]
        if all(e.controller == u.side for e in s.castle if e.victory):
            return None
        return min(walls, key=lambda e: (e.outer_face().distance(Point(u.x, u.y)) + 6.0 * (e.controller == u.side),
                                         e.id), default=None)

    @staticmethod
    def to_wall(battle: Battle, u: UnitState, options: Collection[str], wall: CastleElement) -> str | None:
        """Climbers' approach, aimed between the unit and the middle of the wall's outer face: right up to an
        empty wall, or :data:`APPROACH_GAP` short of a defended one (to charge its defenders)."""
        face = wall.outer_face()
        p = face.interpolate(face.project(Point(u.x, u.y)))
        mid = face.interpolate(0.5, normalized=True)
        p = Point((p.x + mid.x) / 2, (p.y + mid.y) / 2)
        ox, oy = math.cos(math.radians(wall.outward)), math.sin(math.radians(wall.outward))
        defended = bool(units_on(battle.state, wall))
        gap = APPROACH_GAP if defended else 0.0
        goal = (p.x + ox * (gap + u.depth / 2), p.y + oy * (gap + u.depth / 2))
        pace = "march" if math.dist((u.x, u.y), goal) > 12.0 else "advance"
        # an empty wall: right up to it (the wall itself stops the move); a defended one: short of it, to charge
        return steer(battle, u, goal, pace, options, approach=not defended)

    def walk_the_walls(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Along the walls towards the nearest element of the enemy castle we do not hold yet: the walk
        order (``occupy:<id>`` onto an adjoining element) that starts the shortest way there (SIEGE.MOVE.WALLS)."""
        s = battle.state
        here = element_under(s, u)
        steps = {o[len(OCCUPY):]: o for o in options if o.startswith(OCCUPY)}
        if here is None or not steps:
            return None
        ring = [e for e in s.castle if e.kind != "gate" and e.standing and e.defender != u.side]
        nbrs = {e.id: [o.id for o in ring if o is not e and e.shape().distance(o.shape()) < 1e-6] for e in ring}
        first: dict[str, str] = {eid: eid for eid in nbrs.get(here.id, []) if eid in steps}
        queue = list(first)
        while queue:
            eid = queue.pop(0)
            if element(s, eid).controller != u.side:
                return steps[first[eid]]
            for nxt in nbrs.get(eid, []):
                if nxt not in first and nxt != here.id:
                    first[nxt] = first[eid]
                    queue.append(nxt)
        return None

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """Storming a castle means going where the defenders can charge: the attacker takes no fall-back
        (the danger estimate does not see the walls that stop most of those charges)."""
        return bool(battle.state.castle) and u.side != defender(battle.state) or super().ignores_danger(battle, u)

    def from_the_walls(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """A unit that took a wall (facing the courtyard; the wall stays held when it leaves): with defenders
        left in the courtyard, or the citadel still to take, it marches straight down, else it holds the wall."""
        s = battle.state
        area = castle_area(s)
        below = [e for e in self.enemies(battle) if area.covers(Point(e.x, e.y)) and element_under(s, e) is None]
        citadel = next((e for e in s.castle if e.kind == "citadel" and e.standing), None)
        for_citadel = citadel is not None and citadel.controller != u.side and u.troop_type not in NO_ENTRY_TYPES
        if not below and not for_citadel:
            return None
        for step in ("march", "advance"):  # straight down into the courtyard: a wall leaves no room to wheel
            if step in options:
                return step
        if not below:
            return None  # no straight way down
        target = min(below, key=lambda e: (space.unit_distance(u, e), e.uid))
        return self.advance_on(battle, u, options, target)

    @staticmethod
    def to_door(battle: Battle, u: UnitState, options: Collection[str], e: CastleElement) -> str | None:
        """Into contact with tower or citadel ``e`` from the courtyard, to enter it next (SIEGE.TOWER.ASSAULT):
        straight at the nearest point of its outline that faces the courtyard, as far as the move allows."""
        yard = courtyard(battle.state).buffer(0.05)
        face = e.shape().exterior.intersection(yard)
        door = nearest_points(face if not face.is_empty else e.shape().exterior, Point(u.x, u.y))[0]
        pace = "march" if math.dist((u.x, u.y), (door.x, door.y)) > 8.0 else "advance"
        return steer(battle, u, (door.x, door.y), pace, options, approach=True)

    @staticmethod
    def to_gate(battle: Battle, u: UnitState, options: Collection[str], g: CastleElement) -> str | None:
        """A ram's approach: straight at the gate's outer face (the gate stops the move); None once in contact
        (SIEGE.EQUIP.RAM)."""
        if in_contact(u, g):
            return None
        c = g.outer_face().interpolate(0.5, normalized=True)
        ox, oy = math.cos(math.radians(g.outward)), math.sin(math.radians(g.outward))
        goal = (c.x + ox * u.depth / 2, c.y + oy * u.depth / 2)
        pace = "march" if math.dist((u.x, u.y), goal) > 12.0 else "advance"
        return steer(battle, u, goal, pace, options, approach=True)

    def choose_shot(self, battle: Battle, legal: list[Action]) -> Action:
        """War machines bombard the castle (:meth:`bombard`); every other shot as the base rules judge."""
        s = battle.state
        if s.castle and self.side != defender(s):
            shot = self.bombard(battle, legal)
            if shot is not None:
                return shot
        return super().choose_shot(battle, legal)

    def bombard(self, battle: Battle, legal: list[Action]) -> Action | None:
        """A machine's shot at the castle: the gate while it stands (cannons, bolt throwers), else the
        standing wall section with the most defenders on it, nearest the gate first (SIEGE.DMG.*)."""
        s = battle.state
        shots = [a for a in legal if a.kind == "shoot" and a.target is None and a.option]
        if not shots:
            return None
        g = self.gate(battle)
        anchor = g.shape().centroid if g is not None else Point(s.table_w / 2, s.table_h / 2)

        def key(a: Action) -> tuple[int, int, float]:
            e = element(s, a.option.split(":", 1)[1])  # type: ignore[union-attr]
            held = sum(u.models for u in units_on(s, e) if u.side != self.side)
            return (e.kind == "gate", held if e.kind == "wall" else -1, -e.shape().distance(anchor))

        return max(shots, key=key)

    def charge_score(self, battle: Battle, c: UnitState, t: UnitState) -> float | None:
        """Climbers charge a wall's defenders, and units at a tower's door its garrison
        (SIEGE.TOWER.ASSAULT), whenever they can; other charges as the base rules judge them."""
        s = battle.state
        if s.castle and door_element(s, c, t) is not None:
            base = super().charge_score(battle, c, t)
            return ASSAULT_BONUS + (base if base is not None else 0.0)
        if s.castle and element_under(s, t) is not None and element_under(s, c) is None and eq.has_climbing_gear(c):
            base = super().charge_score(battle, c, t)
            return ASSAULT_BONUS + (base if base is not None else 0.0)
        return super().charge_score(battle, c, t)


class SiegeDefenderAgent(_SiegeAgent):
    """``siege_defender``: man the walls facing the attacker, keep a reserve in the courtyard."""

    name = "siege_defender"

    def reserve(self, battle: Battle) -> int | None:
        """The reserve: the largest (by points) infantry unit that is not a character."""
        foot = [u for u in self.army(battle) if u.troop_type == "infantry" and not u.character and u.missile is None]
        return max(foot, key=lambda u: (u.points, -u.uid)).uid if foot else None

    def choose_deploy(self, battle: Battle, legal: list[Action]) -> Action:
        """Infantry on the wall slots (the reserve and shooters that do not fit in the courtyard), the rest in the courtyard."""
        s = battle.state
        if not s.castle or self.side != defender(s):
            return super().choose_deploy(battle, legal)
        deploys = [a for a in legal if a.kind == "deploy"]
        if not deploys:
            return END_PHASE
        reserve = self.reserve(battle)
        n_cols = 11
        walls = [a for a in deploys if int(a.option) // n_cols == WALL_ROW and a.unit != reserve]
        if walls:
            centre = s.table_w / 2
            from battleline.env.rules.deployment import COLUMNS

            def col_x(a: Action) -> float:
                return COLUMNS[int(a.option) % n_cols]

            return min(walls, key=lambda a: (abs(col_x(a) - centre), a.unit, int(a.option)))
        yard = [a for a in deploys if int(a.option) // n_cols != WALL_ROW]
        pool = yard or deploys
        return super().choose_deploy(battle, pool)

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The defender's move for ``u`` (outside a siege, or seated as attacker: :meth:`fallback_move`).

        Units on a castle element hold it (None). Others, unless war machines or
        shooters holding to shoot, advance on the nearest enemy inside the castle
        area and off the walls; with none, they wait (None).
        """
        s = battle.state
        if not s.castle or u.side != defender(s):
            return self.fallback_move(battle, u, options)
        if element_under(s, u) is not None:
            return None  # hold the walls
        area = castle_area(s)
        intruders = [e for e in self.enemies(battle) if area.covers(Point(e.x, e.y)) and element_under(s, e) is None]
        if intruders and u.troop_type != "war_machine" and not self.holds_to_shoot(battle, u):
            target = min(intruders, key=lambda e: (space.unit_distance(u, e), e.uid))
            return self.advance_on(battle, u, options, target)
        return None  # the reserve and the rest wait in the courtyard

    def should_flee(self, battle: Battle, t: UnitState, c: UnitState, facing: str) -> bool:
        """Never give up a wall; elsewhere the base rule."""
        if battle.state.castle and element_under(battle.state, t) is not None:
            return False
        return super().should_flee(battle, t, c, facing)

    def charge_score(self, battle: Battle, c: UnitState, t: UnitState) -> float | None:
        """Units on the walls stay there; the reserve charges as the base rules judge."""
        s = battle.state
        if s.castle and element_under(s, c) is not None and units_on(s, element_under(s, c)):  # type: ignore[arg-type]
            return None
        return super().charge_score(battle, c, t)
