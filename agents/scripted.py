"""Scripted agents that play the deployment tactics of ``shared/rules/tactics.md``.

Each agent is a deployment template from :mod:`tactics.deployment` plus a
manoeuvre policy; charges, reactions, shooting and pursuit follow the shared
rules of :class:`agents.base.ScriptedAgent`.

* :class:`LineAdvanceAgent` — a battle line that advances on the enemy.
* :class:`PincersAgent` — ``pincers``: the centre holds, the wings go round.
* :class:`RefusedFlankAgent` — ``refused_flank``: one wing attacks, the other stays back.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from battleline.agents.base import CLOSE, MIN_REACH_FLANK, ChargeOption, ScriptedAgent, gap
from battleline.agents.steering import face_threat
from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.charge_spots import charge_reach
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment import line_template, pincers_template, refused_flank_template
from battleline.tactics.deployment_plan import LEFT, RIGHT, DeploymentPlan, is_fast, own_x
from battleline.tactics.deployment_terrain import choose_strong_side

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


class LineAdvanceAgent(ScriptedAgent):
    """``line_advance``: deploy a battle line across the centre and advance it on the enemy.

    Deployment: :func:`tactics.deployment.line_template` (infantry centre,
    shooters on its flanks, fast units on the wings, characters behind).
    Movement: foot shooters with a target in range stand and shoot; characters
    follow the main block; every other unit heads for the nearest enemy,
    wheeling or turning when it is more than 20° off-axis, marching while no
    enemy is within 12".
    """

    name = "line_advance"

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The battle-line template for this army."""
        return line_template(self.army(battle), battle.state.table_w)

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Shooters with targets hold, characters follow the line, the rest advance on the nearest enemy."""
        if self.holds_to_shoot(battle, u):
            return None
        if u.character:
            return self.follow(battle, u, options)
        return self.advance_on(battle, u, options)


CENTRE_HOLD_TURN = 2
"""The pincers' centre advances at most M up to this turn; later it holds against a close enemy."""
WING_FRONT_DIFF = 2.0
"""Expected first-round lead a wing unit wants before charging an enemy's front."""
WING_FLANK_DIFF = -1.0
"""Expected first-round result above which a wing unit charges a flank or rear."""
FLANK_OFFSET = 6.0
"""Inches outside an enemy's flank where a wing unit aims before it turns in."""


class PincersAgent(ScriptedAgent):
    """``pincers`` (tactics.md §4.3): the infantry centre holds while fast wings close in on the flanks.

    Deployment: :func:`tactics.deployment.pincers_template` (fast units on both
    wings, infantry in the centre with the General and the battle standard at
    its ends, shooters behind it). Plan: in turns 1–2 the centre advances at
    most M; later it holds (facing the threat) while an enemy is within 12"
    and counter-charges, or marches on to meet an enemy that does not come;
    the wings march for the outside of the enemy line —
    preferably an enemy already fighting the centre (anvil and hammer) — and
    turn in once they stand in its flank or rear arc. Wings charge flanks and
    rears readily, fronts only when clearly favourable.
    """

    name = "pincers"

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The pincers template for this army."""
        return pincers_template(self.army(battle), battle.state.table_w)

    def is_wing(self, u: UnitState) -> bool:
        """A fast unit of the left or right wing."""
        return is_fast(u) and not u.character and self.group(u) in (LEFT, RIGHT)

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Wings go round, the centre advances slowly then holds, characters stay with the centre."""
        if self.holds_to_shoot(battle, u):
            return None
        if u.character:
            return self.follow(battle, u, options)
        if self.is_wing(u):
            target = self.wing_target(battle, u)
            if target is None:
                return None
            return self.flank_attack(battle, u, target, flank_waypoint(u, target), options)
        return self.centre_move(battle, u, options)

    def centre_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Turns 1–2: advance at most M. Later: hold and face an enemy within 12", else go and find one."""
        target = self.target_for(battle, u)
        if target is None:
            return None
        if battle.state.turn <= CENTRE_HOLD_TURN:
            return self.advance_on(battle, u, options, target, pace="advance")
        if gap(u, target) <= CLOSE:
            return face_threat(battle, u, options)
        return self.advance_on(battle, u, options, target)

    def wing_target(self, battle: Battle, u: UnitState) -> UnitState | None:
        """An enemy fighting our centre (nearest first), else the outermost enemy on this wing's side."""
        anvil = [e for e in self.enemies(battle) if self.engaged_with_friend(battle, e)]
        if anvil:
            return min(anvil, key=lambda e: (gap(u, e), e.uid))
        enemies = self.enemies(battle)
        if not enemies:
            return None
        sign = 1.0 if self.group(u) == LEFT else -1.0
        w = battle.state.table_w
        return min(enemies, key=lambda e: (sign * own_x(self.side, e.x, w), e.uid))

    def charge_allowed(self, battle: Battle, o: ChargeOption) -> bool:
        """Wings: flank and rear charges unless losing, frontal ones only when clearly favourable."""
        if not self.is_wing(o.charger):
            return super().charge_allowed(battle, o)
        if o.facing != "front":
            return o.p_reach >= MIN_REACH_FLANK and o.first.diff > WING_FLANK_DIFF
        return o.first.diff >= WING_FRONT_DIFF and super().charge_allowed(battle, o)


def flank_waypoint(u: UnitState, e: UnitState) -> tuple[float, float]:
    """A point :data:`FLANK_OFFSET` outside ``e``'s flank on ``u``'s side, level with its centre (table inches)."""
    lx, _ = geo.to_local(space.pose(e), u.x, u.y)
    sign = 1.0 if lx >= 0 else -1.0
    return geo.to_world(space.pose(e), sign * (e.width / 2 + FLANK_OFFSET + u.depth / 2), 0.0)


EDGE_LANE = 0.1
"""The heavy cavalry's edge run keeps within this fraction of the table width from the side edge."""


class RefusedFlankAgent(ScriptedAgent):
    """``refused_flank`` (tactics.md §4.3): attack with one strong wing, keep the other back.

    Deployment: :func:`tactics.deployment.refused_flank_template` on the wing
    chosen by :func:`tactics.deployment.choose_strong_side` (better terrain for
    the advance, the enemy's weaker side); heavy cavalry on the strong table
    edge, a token unit set back on the refused wing. Plan: the strong wing
    advances like a battle line and attacks; the heavy cavalry runs along the
    table edge and turns in on the flank of the outermost enemy; the refused
    wing holds out of reach (stepping back from a threat, facing it) and only
    counter-charges enemies that came into its half or are already fighting.
    """

    name = "refused_flank"

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The refused-flank template on the chosen strong wing."""
        strong = choose_strong_side(battle, self.side)
        return refused_flank_template(self.army(battle), battle.state.table_w, strong)

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Refused units hold back, the heavy cavalry runs the edge, the strong wing advances."""
        if self.holds_to_shoot(battle, u):
            return None
        if u.character:
            return self.follow(battle, u, options, groups=("strong", "hc"))
        group = self.group(u)
        if group == "refused":
            return self.hold_back(battle, u, options)
        if group == "hc":
            return self.edge_run(battle, u, options)
        return self.advance_on(battle, u, options)

    def strong_edge_x(self, battle: Battle) -> float:
        """Table x of the strong side's edge."""
        w = battle.state.table_w
        strong_left = (self.plan.strong_side if self.plan else LEFT) == LEFT
        return own_x(self.side, 0.0 if strong_left else w, w)

    def edge_run(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Heavy cavalry: along the strong edge to the level of the outermost enemy, then into its flank."""
        enemies = self.enemies(battle)
        if not enemies:
            return None
        edge = self.strong_edge_x(battle)
        target = min(enemies, key=lambda e: (abs(e.x - edge), e.uid))
        lane = edge + (1 if edge < battle.state.table_w / 2 else -1) * EDGE_LANE * battle.state.table_w
        return self.flank_attack(battle, u, target, (lane, target.y), options)

    def hold_back(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Stay out of reach: step back from an enemy that could charge next turn, else face the nearest."""
        threat = self.nearest_enemy(battle, u)
        if threat is not None and gap(u, threat) <= charge_reach(threat) + 1.0 and "backward" in options:
            return "backward"
        return face_threat(battle, u, options)

    def charge_allowed(self, battle: Battle, o: ChargeOption) -> bool:
        """The refused wing only counter-charges: enemies in our half or already fighting us."""
        if self.group(o.charger) == "refused":
            in_our_half = abs(o.target.y - (0.0 if self.side == 0 else battle.state.table_h)) < battle.state.table_h / 2
            if not (in_our_half or self.engaged_with_friend(battle, o.target)):
                return False
        return super().charge_allowed(battle, o)


__all__ = ["LineAdvanceAgent", "PincersAgent", "RefusedFlankAgent"]
