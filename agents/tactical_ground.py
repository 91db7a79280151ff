"""Tactical agents that hold ground: ``shooting_lines``, ``sacrifice_for_deployment``, ``control_zones``.

A staggered gunline on high ground, an isolated irritant shooting from its
post while the army fights elsewhere, and a hill holder that denies the key
hill by threat while the line claims ground: deployment templates of
:mod:`tactics.deployment` paired with the manoeuvres of :mod:`tactics.manoeuvres`
that belong to them. The shared manoeuvres come from
:class:`agents.tactical_base.TacticalAgent`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

import shapely

from battleline.agents import estimates
from battleline.agents.base import DANGER_LIMIT, MIN_REACH, ChargeOption, charge_arc
from battleline.agents.steering import (
    angle_diff,
    enemy_edge_facing,
    enemy_edge_sign,
    moved_copy,
    off_axis,
    predict_pose,
    rotation_option,
    steer,
)
from battleline.agents.tactical_base import DECISIVE, ENGAGE_TURN, TacticalAgent, move_options
from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.actions import Action
from battleline.env.rules.charge_spots import charge_reach
from battleline.env.rules.movement import normal_move_allowance
from battleline.env.rules.state import UnitState
from battleline.tactics import manoeuvres as mv
from battleline.tactics.deployment import line_template, sacrifice_template, shooting_lines_template
from battleline.tactics.deployment_plan import BACK, CENTRE, FRONT, LEFT, RIGHT, DeploymentPlan, SlotTarget, is_mobile, own_x
from battleline.tactics.deployment_terrain import approach_side, high_ground_spots, irritant_spot

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

UNMASK_OPTIONS = ("advance", "wheel_left", "wheel_right", "march", "backward", "turn_left", "turn_right")
"""The moves a unit masking a shooter tries, in order of preference (ties keep the earlier)."""
PUSH_TURN = ENGAGE_TURN + 1
"""From this turn ``shooting_lines`` moves without the dead-zone check (its late push; the others wait for
:data:`LATE_TURN`)."""


class ShootingLinesAgent(TacticalAgent):
    """``shooting_lines`` (tactics.md §4.4): a staggered gunline on high ground, the line in front unmasking it.

    Deployment: :func:`tactics.deployment.shooting_lines_template` with the
    hills of the own zone as high-ground spots. Shooters hold and shoot while
    they have targets (``ranged_area_denial``), else close in. Until turn 3 the
    battle line advances in front of them only while it stays out of the
    enemy's charge reach (else it holds or steps back); a unit that masks a
    shooter moves so the shooter sees more targets (``unmask_shooters``) —
    moving first in the phase. Guards stay in front of their war machines;
    fast units flank. Everyone engages from turn 3, and from turn
    :data:`PUSH_TURN` closes in without the dead-zone check, so that the
    battle is decided rather than drawn. An engaging unit marches round
    impassable terrain in its lane to the target (:meth:`detour`), and one
    with no move towards it (the table edge in the way) turns to face it
    (:meth:`unblock`).
    """

    name = "shooting_lines"
    flank_groups = frozenset({LEFT, RIGHT})

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The shooting-lines template, shooters on the own zone's hills."""
        spots = high_ground_spots(battle, self.side)
        return shooting_lines_template(self.army(battle), battle.state.table_w, spots, approach_side(battle, self.side))

    def choose_move(self, battle: Battle, legal: list[Action]) -> Action:
        """Units masking a friendly shooter move first, to the option that unmasks it most."""
        options = move_options(legal)
        shooters = [s for s in space.alive_units(battle.state, self.side) if s.missile is not None and not s.fleeing]
        for s in shooters:
            for m in mv.maskers(battle, s):
                if m.uid not in options or m.missile is not None:
                    continue
                best = self.unmask_option(battle, m, options[m.uid], shooters)
                if best is not None:
                    return options[m.uid][best]
        return super().choose_move(battle, legal)

    def unmask_option(self, battle: Battle, m: UnitState, options: Collection[str], shooters: list[UnitState]) -> str | None:
        """The move of ``m`` that gives the shooters the most new targets without walking into danger (None: none helps)."""
        best, best_gain = None, 0
        for opt in UNMASK_OPTIONS:
            if opt not in options:
                continue
            pose = predict_pose(battle, m, opt)
            if self.danger(battle, moved_copy(m, pose)) > 1.0:
                continue
            gain = mv.unmask_gain(battle, m, pose, shooters)
            if gain > best_gain:
                best, best_gain = opt, gain
        return best

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Until turn 3 guards hold (stepping back from a threat) and the line advances while out of the enemy's
        reach; shooters without targets close in; the rest engage, going round what blocks them (:meth:`detour`,
        :meth:`unblock`)."""
        group = self.group(u)
        if group == "guard" and not self.engaging(battle):
            return self.step_out_of_reach(battle, u, options)
        if group == CENTRE and not self.engaging(battle):
            return self.keep_out_of_reach(battle, u, options)
        if group == "shooters":
            if mv.maskers(battle, u):
                return None  # a friend steps aside first; moving would spoil the shot
            target = self.target_for(battle, u)
            return self.advance_on(battle, u, options, target, pace="advance") if target is not None else None
        return self.detour(battle, u, options) or self.engage(battle, u, options) or self.unblock(battle, u, options)

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """The dead-zone check is dropped from turn :data:`PUSH_TURN`, the turn after the line engages: the
        shooting has done its work and the army closes in to finish the battle (a draw needs a 10% VP margin
        to turn into a win, CORE.VP.RESULT)."""
        return battle.state.turn >= PUSH_TURN

    def detour(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """March round an impassable feature in the straight lane to ``u``'s target, via
        :func:`tactics.manoeuvres.detour_point`; None when the lane is clear (or no move gets nearer the point)."""
        target = self.target_for(battle, u)
        point = mv.detour_point(battle, u, (target.x, target.y)) if target is not None else None
        return steer(battle, u, point, "march", options, approach=False) if point is not None else None

    def unblock(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """A unit that wants to engage but has no move towards its target (the table edge, or terrain that
        :meth:`detour` does not get round, in the way) changes direction instead
        (:func:`agents.steering.rotation_option`: reform to face the target, else turn or wheel) so that it can
        go round; None once within 1" of the target."""
        target = self.target_for(battle, u)
        if target is None or space.unit_distance(u, target) <= 1.0:
            return None
        goal = (target.x, target.y)
        return rotation_option(battle, u, off_axis(u, goal), goal, options)


class SacrificeForDeploymentAgent(TacticalAgent):
    """``sacrifice_for_deployment`` (tactics.md §4.4): an isolated irritant shoots while the army fights elsewhere.

    Deployment: :func:`tactics.deployment.sacrifice_template`, the irritant on
    the wing with a hill (or the most broken ground) in front, the main body
    at the other edge. The irritant never leaves its post while it has
    targets and turns to face the nearest enemy otherwise; the main body
    advances with the charge consequence analysis, its fast units flanking.
    """

    name = "sacrifice_for_deployment"
    flank_groups = frozenset({"main"})
    engage_turn = 1

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The sacrifice template on the irritant's wing."""
        wing, x = irritant_spot(battle, self.side)
        return sacrifice_template(self.army(battle), battle.state.table_w, wing, x)

    def follow_groups(self) -> tuple[str, ...]:
        return ("main",)

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The irritant holds its post (closing in only when nothing is in range); the main body engages."""
        if self.group(u) == "irritant":
            if battle.state.turn <= 2:
                return self.hold(battle, u, options)
            target = self.target_for(battle, u)
            return self.advance_on(battle, u, options, target, pace="half") if target is not None else None
        return self.engage(battle, u, options)


HILL_MARGIN = 0.5
"""Inches inside its charge reach at which the hill holder keeps the key hill's point (``terrain_denial_by_threat``):
a small margin, so that a holder already covering the point stays back rather than stepping up into the reach of
the enemy that advances on the hill."""
CONTROL_ENGAGE_TURN = 4
"""control_zones engages from this turn: turns 1–3 are the opening in which it claims ground (``area_control``)."""
CLAIM_FACING = 45.0
"""Most degrees off straight ahead (towards the enemy's edge) a unit of the line may face after a claiming move."""
ADVANCE_WEIGHT = 0.002
"""Control share a unit of the line trades for each inch it gains towards the enemy in the opening (so it
keeps closing while the share holds: 10" forward is worth 0.02)."""
SHARE_GAIN = 0.005
"""Least rise of the control share for which a unit of the line moves in the opening (``area_control``)."""
HILL_ESCORT_GAP = 6.0
"""Inches inward of the hill holder's column where a screen that would stand outside it deploys instead."""
HILL_CHARGE_DIFF = -1.0
"""Expected first-round result above which any unit charges an enemy standing on the key hill."""
TRAP_WEIGHT = 0.25
"""Weight of the trap (ground two of our units could charge) in a screen's choice of ground."""
HILL_STRIKE_DIFF = DECISIVE
"""Expected first-round lead with which a unit other than the holder goes for an enemy contesting the key hill."""


class ControlZonesAgent(TacticalAgent):
    """``area_control`` / ``terrain_denial_by_threat`` / ``herding_corridor`` / ``swarm_speed_bump`` as a plan.

    Deployment: the battle line. The strongest fast unit is the hill holder:
    it deploys in the column of the key hill (:func:`tactics.manoeuvres.key_hill`)
    and all game keeps the hill's point in its charge reach and front arc
    without standing on it (where no enemy charge would go badly for it),
    closes on and charges any enemy it beats that climbs the hill or
    threatens its point, and charges nothing else; no screen deploys outside
    it (it would only draw the enemy down the hill's lane). While an enemy
    contests the hill, our nearest unit that expects to beat it by
    :data:`HILL_STRIKE_DIFF` (the striker) goes for it whatever the dead-zone
    check says: the hill is ours only while nothing of the enemy's can charge
    its point. A fast unit that outreaches the rival is the first choice, the
    holder among them: it stalks the rival from outside its reach and charges
    it first; once the holder has left the hill so, or from the engage turn,
    whichever fast unit covers the hill's point holds it. No unit of ours ends a move on the hill. The other fast
    units are screens: in the opening each takes the move that adds the most
    no-man's land (hills count double) to our control — our threat zone minus
    the enemy's — and to the trap where two of our units could charge whatever
    comes down the lane left open, while ending outside every enemy threat
    region. The line (``advance_to_expand_control``) takes the move that
    raises our control share most, plus a little for ground gained, facing
    ahead and ending outside the enemy's reach (the dead zone is the enemy's to
    enter), counter-charging what comes in. The cheapest small unit is a speed
    bump in the path of the enemy's fastest unit towards our line. Until turn
    :data:`CONTROL_ENGAGE_TURN` no unit but the holder and a fast striker moves from
    outside every enemy's charge reach into one (``area_control``: ground is
    claimed up to the enemy's reach, the dead zone is the enemy's to enter; such
    a move becomes staying put), and a screen in reach that cannot claim ground
    safely steps out of it. From turn :data:`CONTROL_ENGAGE_TURN` everyone but
    the holder engages.
    """

    name = "control_zones"
    flank_groups = frozenset({"screen"})
    engage_turn = CONTROL_ENGAGE_TURN

    def reset(self, battle: Battle, side: int) -> None:
        """Start a new battle on ``side``; the planned hill holder is at its post."""
        super().reset(battle, side)
        self.left_post = False

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The battle line; fast units are screens, the cheapest small unit the speed bump, and the strongest
        (most points) fast unit the hill holder, deployed in the column facing the key hill (it must win
        against what climbs the hill, and reach it from afar)."""
        army = self.army(battle)
        plan = line_template(army, battle.state.table_w)
        body = [u for u in army if not u.character]
        total = sum(u.points for u in body) or 1
        for u in body:
            if is_mobile(u):
                plan.groups[u.uid] = "screen"
                t = plan.targets.get(u.uid)
                if t is not None and t.row > BACK:  # a Scout row: deep in the enemy's reach before it moves
                    plan.targets[u.uid] = SlotTarget(t.x, FRONT)
        small = [u for u in body if not is_mobile(u) and u.points <= 0.1 * total]
        if small:
            plan.groups[min(small, key=lambda u: (u.points, u.uid)).uid] = "bump"
        hill = mv.key_hill(battle)
        holders = [u for u in body if u.troop_type != "war_machine" and u.profile.M > 0 and plan.groups.get(u.uid) != "bump"]
        if hill is not None and holders:
            holder = max(holders, key=lambda u: (is_mobile(u), u.points, -u.uid))
            plan.groups[holder.uid] = "hill"
            x = own_x(self.side, hill.representative_point().x, battle.state.table_w)
            plan.targets[holder.uid] = SlotTarget(x, FRONT)
            inward = 1.0 if x < battle.state.table_w / 2 else -1.0
            for u in body:  # no screen on the outside of the holder: it would only draw the enemy down the hill's lane
                t = plan.targets.get(u.uid)
                if plan.groups.get(u.uid) == "screen" and t is not None and (t.x - x) * inward < 0:
                    plan.targets[u.uid] = SlotTarget(x + inward * HILL_ESCORT_GAP, t.row)
        return plan

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The tactical agents' move, except that none of ours ends a move on the key hill
        (``terrain_denial_by_threat`` holds it with threat, not bodies) or, in the opening, walks into enemy
        reach (:meth:`enters_reach`): such a move becomes staying put."""
        option = super().move_option(battle, u, options)
        if option is None:
            return None
        pose = predict_pose(battle, u, option)
        if self.on_key_hill(battle, pose) or self.enters_reach(battle, u, pose):
            return None
        return option

    def enters_reach(self, battle: Battle, u: UnitState, pose: geo.Pose) -> bool:
        """``area_control``: whether, in the opening (before :data:`CONTROL_ENGAGE_TURN`), ``u`` would move from
        outside every enemy's charge reach to ``pose`` inside one: ground is claimed up to the enemy's reach, and
        the dead zone is the enemy's to enter (tactics.md §2.2, §6 G-4). The hill holder and a fast or flying
        hill striker are exempt (``terrain_denial_by_threat``: the hill is ours only while nothing of the
        enemy's can charge its point, and driving that off means closing on it; fast units lead the claim,
        src L199); a slow striker closes only up to the enemy's reach in the opening."""
        if self.engaging(battle) or mv.threats_on(battle, space.footprint(u), 1 - self.side):
            return False
        holder, strike = self.hill_roles(battle)
        if holder is not None and holder.uid == u.uid:
            return False
        if strike is not None and strike[0].uid == u.uid and is_mobile(u):
            return False
        return bool(mv.threats_on(battle, space.footprint_at(u, pose), 1 - self.side))

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The holder keeps the key hill under threat, screens take ground, the bump blocks the fastest
        enemy's lane, the line claims the share of control (:meth:`claim_share`)."""
        group = self.group(u)
        holder, strike = self.hill_roles(battle)
        if strike is not None and strike[0].uid == u.uid:
            return self.strike_at(battle, u, strike[1], options)
        if holder is not None and holder.uid == u.uid:
            return self.hold_hill(battle, u, options)
        if self.engaging(battle):
            return self.engage(battle, u, options)
        if group == "screen":
            return self.claim_ground(battle, u, options)
        if group == "bump":
            bump = self.bump_point(battle, u)
            if bump is not None:
                return self.toward(battle, u, bump, options, "march")
        return self.claim_share(battle, u, options)

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """The hill striker (:meth:`hill_striker`) closes on its rival whatever the dead-zone check says:
        bringing the enemy that contests the hill into its charge reach is its job."""
        _, strike = self.hill_roles(battle)
        return (strike is not None and strike[0].uid == u.uid) or super().ignores_danger(battle, u)

    def claim_ground(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The move (or none) ending outside enemy reach and off the key hill that maximises the ground ``u``
        controls and the trap it helps set."""
        enemy_zone = mv.threat_zone(battle, 1 - self.side)
        land = mv.no_mans_land(battle)
        hills = mv.hills(battle)
        best, best_score = None, self.ground_score(battle, u, space.pose(u), enemy_zone, land, hills)
        if mv.threats_on(battle, space.footprint(u), 1 - self.side):
            best_score = -1.0
        for opt in options:
            if opt.startswith("reform") or opt in ("about_face",):
                continue
            pose = predict_pose(battle, u, opt)
            if self.unsafe_end(battle, u, pose) or self.on_key_hill(battle, pose):
                continue
            score = self.ground_score(battle, u, pose, enemy_zone, land, hills)
            if score > best_score + 1.0:
                best, best_score = opt, score
        if best is None and best_score < 0.0:  # in reach and no claiming move gets out of it
            return self.step_out_of_reach(battle, u, options)
        return best

    def unsafe_end(self, battle: Battle, u: UnitState, pose: geo.Pose) -> bool:
        """Whether ``u`` ending a move at ``pose`` stands in an enemy's charge reach (exposure > 0), or the move
        would run into an enemy (the engine stops it short of the forecast, in the enemy's face)."""
        fp = space.footprint_at(u, pose)
        if any(geo.distance(fp, space.footprint(e)) < 1.0 for e in self.enemies(battle)):
            return True
        return bool(mv.threats_on(battle, fp, 1 - self.side))

    @staticmethod
    def on_key_hill(battle: Battle, pose: geo.Pose) -> bool:
        """Whether a unit centred at ``pose`` stands on the key hill (``terrain_denial_by_threat`` holds it
        with threat, not bodies: none of ours ends a claiming move there)."""
        hill = mv.key_hill(battle)
        return hill is not None and hill.contains(shapely.Point(pose.x, pose.y))

    def ground_score(
        self, battle: Battle, u: UnitState, pose: geo.Pose, enemy_zone: shapely.Geometry, land: shapely.Geometry, hills: list
    ) -> float:
        """With ``u`` at ``pose``: square inches of no-man's land (hills twice) that our army threatens and the
        enemy does not, plus :data:`TRAP_WEIGHT` × the no-man's land two or more of our units could charge
        (``herding_corridor``: the trap at the end of the lane left open)."""
        moved = {u.uid: pose}
        ours = [mv.threat_region(f, moved.get(f.uid)) for f in space.alive_units(battle.state, self.side) if mv.can_threaten(battle, f)]
        region = shapely.union_all(ours).difference(enemy_zone) if ours else shapely.Polygon()
        trap = mv.trap_zone(battle, self.side, moved).intersection(land).area
        return region.intersection(land).area + sum(region.intersection(h).area for h in hills) + TRAP_WEIGHT * trap

    def charge_allowed(self, battle: Battle, o: ChargeOption) -> bool:
        """An enemy contesting the key hill (on it, or threatening its point) is charged by whoever can reach
        it and would not lose the first round by more than :data:`HILL_CHARGE_DIFF` (``terrain_denial_by_threat``:
        the hill cannot be taken uncharged); the hill holder charges nothing else (it must not be drawn off
        the hill); the rest use the tactical agents' rule."""
        hill = mv.key_hill(battle)
        contests = hill is not None and self.contests_hill(battle, o.target, hill)
        if contests and o.p_reach >= MIN_REACH and o.first.diff >= HILL_CHARGE_DIFF:
            return True
        holder, _ = self.hill_roles(battle)
        if holder is not None and holder.uid == o.charger.uid and not contests:
            return False
        return super().charge_allowed(battle, o)

    @staticmethod
    def contests_hill(battle: Battle, e: UnitState, hill: shapely.Polygon) -> bool:
        """Whether enemy ``e`` stands on ``hill`` or could charge a unit at its representative point (so the
        hill is not in our control while ``e`` is free)."""
        rp = hill.representative_point()
        return hill.contains(shapely.Point(e.x, e.y)) or (
            mv.can_threaten(battle, e) and mv.covers_point(e, space.pose(e), (rp.x, rp.y)))

    def hill_holder(self, battle: Battle) -> UnitState | None:
        """The unit that keeps the key hill under threat: the planned holder while it is free to charge,
        else the free unit (not a character, war machine or the speed bump) nearest to threatening the
        hill's point; None without a hill or a free unit. Once the planned holder has left its post to
        strike (:meth:`hill_roles`), or from :data:`CONTROL_ENGAGE_TURN`, a fast or flying unit that covers
        the hill's point holds it (the planned holder first, then the nearest): the hill stays ours while
        the holder is away, and no one leaves it to come back."""
        hill = mv.key_hill(battle)
        if hill is None:
            return None
        free = [
            u for u in space.alive_units(battle.state, self.side)
            if not u.character and self.group(u) != "bump" and mv.can_threaten(battle, u)
        ]
        rp = hill.representative_point()
        if self.left_post or self.engaging(battle):
            covering = [u for u in free if is_mobile(u) and mv.covers_point(u, space.pose(u), (rp.x, rp.y))]
            if covering:
                return min(covering, key=lambda u: (self.group(u) != "hill", geo.distance(space.footprint(u), rp), u.uid))
        planned = [u for u in free if self.group(u) == "hill"]
        if planned:
            return planned[0]
        return min(free, key=lambda u: (geo.distance(space.footprint(u), rp) - charge_reach(u), u.uid), default=None)

    def hill_roles(self, battle: Battle) -> tuple[UnitState | None, tuple[UnitState, UnitState] | None]:
        """(holder, (striker, rival) or None): :meth:`hill_holder` and :meth:`hill_striker`. When the holder
        is the striker it has left its post (:meth:`hill_holder` then looks for who covers the hill)."""
        holder = self.hill_holder(battle)
        strike = self.hill_striker(battle, holder)
        if strike is not None and holder is not None and strike[0].uid == holder.uid:
            self.left_post = True
        return holder, strike

    def hold_hill(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``terrain_denial_by_threat``: keep the key hill's point (its representative point, as the detector
        reads it) in ``u``'s charge reach and front arc without standing on the hill, and drive off or charge
        whatever contests it.

        Of staying put and the legal moves (reforms aside) that keep the point covered by
        :data:`HILL_MARGIN` inches, off the hill, the one that first ends where no enemy charge would go
        badly (:meth:`ScriptedAgent.danger`; the dead-zone check would refuse the others), then brings the
        nearest enemy contesting the hill (:meth:`contests_hill`) that ``u`` would beat (:meth:`beats`)
        into ``u``'s charge reach and front arc (it must then give way or be charged: the hill is ours only
        while nothing of the enemy's can charge its point), then ends in the fewest enemies' reach,
        staying put on a tie. When no move keeps the point covered, ``u`` steers for the post on our side
        of the hill (:meth:`hill_post`).
        """
        hill = mv.key_hill(battle)
        if hill is None:
            return self.edge_of_reach(battle, u, options)
        rp = hill.representative_point()
        point = (rp.x, rp.y)
        rivals = [e for e in self.enemies(battle) if self.contests_hill(battle, e, hill) and self.beats(battle, u, e)]
        rival = min(rivals, key=lambda e: (space.unit_distance(u, e), e.uid), default=None)
        best, best_key = None, None
        for opt in [None, *sorted(o for o in options if not o.startswith("reform"))]:
            pose = space.pose(u) if opt is None else predict_pose(battle, u, opt)
            if not mv.covers_point(u, pose, point, HILL_MARGIN) or hill.contains(shapely.Point(pose.x, pose.y)):
                continue
            reaches_rival = rival is not None and mv.covers(u, pose, space.footprint(rival))
            key = (self.danger(battle, moved_copy(u, pose)) > DANGER_LIMIT, not reaches_rival,
                   len(mv.threats_on(battle, space.footprint_at(u, pose), 1 - self.side)), opt is not None)
            if best_key is None or key < best_key:
                best, best_key = opt, key
        if best_key is not None:
            return best
        return steer(battle, u, self.hill_post(battle, u, hill), "march", options, approach=False) or self.hold(battle, u, options)

    def hill_striker(self, battle: Battle, holder: UnitState | None) -> tuple[UnitState, UnitState] | None:
        """``terrain_denial_by_threat``: (striker, rival) where rival is a free enemy contesting the key hill
        (:meth:`contests_hill`: while it can charge the hill's point the hill is not ours) and striker the
        nearest of our free units (not a character or the speed bump) that expects to win the first round
        charging it by :data:`HILL_STRIKE_DIFF`, those that outreach it first (:meth:`outreaches`: fast
        units lead, src L199, and charge it before it can charge them), the holder only if it outreaches
        the rival; it goes for the rival (:meth:`strike_at`; the rival must then give way or be charged,
        :meth:`charge_allowed`). None without a hill, a rival or a striker."""
        hill = mv.key_hill(battle)
        if hill is None:
            return None
        rivals = [e for e in self.enemies(battle) if mv.can_threaten(battle, e) and self.contests_hill(battle, e, hill)]
        if not rivals:
            return None
        free = [f for f in space.alive_units(battle.state, self.side)
                if not f.character and self.group(f) != "bump" and mv.can_threaten(battle, f)]
        pairs = [
            (not self.outreaches(f, e), space.unit_distance(f, e), f.uid, e.uid, f, e)
            for f in free
            for e in rivals
            if (holder is None or f.uid != holder.uid or self.outreaches(f, e))
            and estimates.estimate_combat(battle, f, e, charge_arc(battle, f, e)).diff >= HILL_STRIKE_DIFF
        ]
        if not pairs:
            return None
        *_, striker, rival = min(pairs, key=lambda t: t[:4])
        return striker, rival

    @staticmethod
    def outreaches(f: UnitState, e: UnitState) -> bool:
        """Whether ``f`` is fast or flying and its charge reach exceeds ``e``'s: it can charge ``e`` from where
        ``e`` cannot charge it (:meth:`strike_at`)."""
        return is_mobile(f) and charge_reach(f) > charge_reach(e)

    def strike_at(self, battle: Battle, u: UnitState, rival: UnitState, options: Collection[str]) -> str | None:
        """The hill striker's move on ``rival``. One that outreaches it (:meth:`outreaches`) charges first: of
        staying put and the legal moves (reforms aside) that end off the key hill and short of the enemy, the
        one that first ends where no enemy charge would go badly for it (:meth:`ScriptedAgent.danger`), then
        outside the rival's reach and front arc, then with the rival in its own (:func:`tactics.manoeuvres.covers`;
        it charges next turn, :meth:`charge_allowed`), then nearest the rival, staying put on a tie. Any
        other striker goes straight for the rival (:meth:`advance_on`): the rival must charge it or give way."""
        if not self.outreaches(u, rival):
            return self.advance_on(battle, u, options, rival)
        target, rival_pose = space.footprint(rival), space.pose(rival)
        best, best_key = None, None
        for opt in [None, *sorted(o for o in options if not o.startswith("reform"))]:
            pose = space.pose(u) if opt is None else predict_pose(battle, u, opt)
            fp = space.footprint_at(u, pose)
            if opt is not None and (self.on_key_hill(battle, pose) or any(
                    geo.distance(fp, space.footprint(e)) < 1.0 for e in self.enemies(battle))):
                continue
            covered = mv.covers(u, pose, target)
            key = (self.danger(battle, moved_copy(u, pose)) > DANGER_LIMIT, mv.covers(rival, rival_pose, fp),
                   not covered, 0.0 if covered else geo.distance(fp, target), opt is not None)
            if best_key is None or key < best_key:
                best, best_key = opt, key
        return best

    def beats(self, battle: Battle, u: UnitState, e: UnitState) -> bool:
        """Whether ``u`` charging ``e`` would not lose the first round by more than :data:`HILL_CHARGE_DIFF`
        (the bar of :meth:`charge_allowed` for charges on an enemy contesting the hill)."""
        return estimates.estimate_combat(battle, u, e, charge_arc(battle, u, e)).diff >= HILL_CHARGE_DIFF

    def hill_post(self, battle: Battle, u: UnitState, hill: shapely.Polygon) -> tuple[float, float]:
        """Where the holder stands to threaten ``hill``: level with its representative point, its front edge
        1" short of the hill's edge on our side (centre off the hill, the point well inside its reach)."""
        rp = hill.representative_point()
        _, miny, _, maxy = hill.bounds
        if self.side == 0:
            return (rp.x, miny - 1.0 - u.depth / 2)
        return (rp.x, maxy + 1.0 + u.depth / 2)

    def claim_share(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``area_control`` / ``advance_to_expand_control``: of staying put and the legal moves (reforms and
        about-faces aside, facing at most :data:`CLAIM_FACING` off straight ahead) that end in no enemy's
        charge reach and off the key hill, the one with the best control share
        (:func:`tactics.manoeuvres.control_areas`) plus :data:`ADVANCE_WEIGHT` per inch gained towards the
        enemy's edge; staying put unless a move beats it by :data:`SHARE_GAIN`. A unit already in reach
        steps out if it can."""
        forward = enemy_edge_facing(self.side)
        sign = enemy_edge_sign(self.side)

        def score(pose: geo.Pose | None) -> float:
            own, opp = mv.control_areas(battle, self.side, {u.uid: pose} if pose is not None else None)
            share = own / (own + opp) if own + opp > 0 else 0.5
            return share + (ADVANCE_WEIGHT * sign * (pose.y - u.y) if pose is not None else 0.0)

        exposed = bool(mv.threats_on(battle, space.footprint(u), 1 - self.side))
        best, best_score = None, -1.0 if exposed else score(None) + SHARE_GAIN
        for opt in sorted(options):
            if opt.startswith("reform") or opt == "about_face":
                continue
            pose = predict_pose(battle, u, opt)
            if abs(angle_diff(pose.facing, forward)) > CLAIM_FACING or self.unsafe_end(battle, u, pose) or \
                    self.on_key_hill(battle, pose):
                continue
            value = score(pose)
            if value > best_score:
                best, best_score = opt, value
        if best is None and exposed:
            return self.step_out_of_reach(battle, u, options)
        return best

    def bump_point(self, battle: Battle, u: UnitState) -> tuple[float, float] | None:
        """A point on the fastest enemy's path to our nearest unit (``swarm_speed_bump``), or None without fast enemies."""
        fast = [e for e in self.enemies(battle) if is_mobile(e)]
        friends = [f for f in space.alive_units(battle.state, self.side) if f.uid != u.uid and not f.character]
        if not fast or not friends:
            return None
        e = max(fast, key=lambda e: (normal_move_allowance(e), e.points, -e.uid))
        goal = min(friends, key=lambda f: (space.unit_distance(e, f), f.uid))
        return mv.speed_bump_point(e, (goal.x, goal.y))

    def edge_of_reach(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The longest forward move that ends outside every enemy's threat region (none: hold facing the enemy)."""
        if u.character:
            return self.follow(battle, u, options)
        target = self.target_for(battle, u)
        if target is None:
            return None
        for pace in ("march", "advance", "half"):
            opt = steer(battle, u, (target.x, target.y), pace, options, approach=True)
            if opt is None:
                continue
            pose = predict_pose(battle, u, opt)
            if not mv.threats_on(battle, space.footprint_at(u, pose), 1 - self.side):
                return opt
        return self.hold(battle, u, options)
