"""Tactical agents that win on a flank: ``flank_teeth``, ``weakened_flank``, ``abandoned_flank``, ``bait_and_flank``.

Deployment templates of :mod:`tactics.deployment` (and, for ``bait_and_flank``,
the battle line with a bait and a hammer picked out) paired with the manoeuvres
of :mod:`tactics.manoeuvres` that take the army round to the enemy's flank or
rear, or draw the enemy across a hidden flanker. The shared manoeuvres come
from :class:`agents.tactical_base.TacticalAgent`.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING

from battleline.agents import estimates
from battleline.agents.base import (
    CLOSE,
    DANGER_LIMIT,
    MIN_REACH_FLANK,
    ChargeOption,
    room_to_flee,
)
from battleline.agents.steering import (
    enemy_edge_facing,
    moved_copy,
    off_axis,
    predict_pose,
    steer,
)
from battleline.agents.tactical_base import FLANK_DIFF, TacticalAgent, move_options
from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.actions import Action
from battleline.env.rules.charge_spots import charge_reach
from battleline.env.rules.state import UnitState
from battleline.tactics import manoeuvres as mv
from battleline.tactics.deployment import abandoned_flank_template, flank_teeth_template, line_template, weakened_flank_template
from battleline.tactics.deployment_plan import CENTRE, LEFT, RIGHT, DeploymentPlan, is_fast, is_flyer, is_mobile, other, own_x
from battleline.tactics.deployment_terrain import choose_strong_side

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

DETOUR_OPTIONS = ("march", "advance", "advance_half", "wheel_left", "wheel_right", "wheel_left_short",
                  "wheel_right_short", "march_wheel_left", "march_wheel_right", "turn_left", "turn_right")
"""The moves a ``flank_teeth`` wing weighs to go round the enemy's charge reach (:meth:`FlankTeethAgent.detour`).
Measured against ``line_advance`` (detector validation, seeds 0-59): the detour lifts the detector rate from 41
to 47 of 60 (as red, where the wings stalled at the edge of the enemy's reach, from 16 to 22 of 30). The about
face is left out: with it the rate fell to 43 of 60 (a wing that turns its back loses the next turn turning
round)."""
DETOUR_GAIN = 1.0
"""Least inches a detour must bring a wing nearer its waypoint than standing still; below it the dead-zone
check's own fall-backs (shorter move, halt, step back) apply. 0" measured the same (47 of 60)."""


class FlankTeethAgent(TacticalAgent):
    """``flank_teeth`` (tactics.md §4.3): the wings go round to the enemy's rear; the cheap centre delays.

    Deployment: :func:`tactics.deployment.flank_teeth_template`. The centre
    screen is bait: it holds facing the enemy and flees from a charge it can
    escape (``feigned_flight``), buying time. The wings march forward and
    inwards every turn for a point behind the outermost enemy on their side
    (via its flank), to charge rears so that broken enemies flee towards their
    own table edge (and off it); where the straight way ends in an enemy's
    winning charge reach they detour round it (:meth:`detour`) instead of
    halting at its edge; from turn 4 they take whatever is nearest.
    """

    name = "flank_teeth"
    bait_groups = frozenset({CENTRE})
    flank_groups = frozenset({LEFT, RIGHT})
    engage_turn = 4

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The flank-teeth template."""
        return flank_teeth_template(self.army(battle), battle.state.table_w)

    def follow_groups(self) -> tuple[str, ...]:
        return (LEFT, RIGHT)

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Centre: hold until the wings strike. Wings: round to the rear of the outermost enemy."""
        group = self.group(u)
        if group == CENTRE and not self.engaging(battle):
            return self.hold(battle, u, options)
        if group in (LEFT, RIGHT) and not self.engaging(battle):
            target = self.outermost_enemy(battle, u, group)
            if target is None:
                return None
            if mv.attack_arc(battle, u, target) == "rear" or space.unit_distance(u, target) <= CLOSE / 2:
                return self.advance_on(battle, u, options, target)
            waypoint = mv.flank_point(target, u) if mv.attack_arc(battle, u, target) == "front" else mv.rear_point(target, u)
            move = steer(battle, u, waypoint, "march", options, approach=False) or self.advance_on(battle, u, options, target)
            return self.detour(battle, u, waypoint, move, options)
        return self.engage(battle, u, options)

    def detour(self, battle: Battle, u: UnitState, waypoint: tuple[float, float], move: str | None,
               options: Collection[str]) -> str | None:
        """Go round the enemy's charge reach on the way to ``waypoint`` (table inches) rather than stop at its edge.

        ``move`` (the straight steer) stands when it ends where :meth:`ScriptedAgent.danger` is within
        :data:`agents.base.DANGER_LIMIT`. Otherwise the wing takes the move of :data:`DETOUR_OPTIONS` that
        ends safe and nearest ``waypoint`` (forecast by :func:`agents.steering.predict_pose`), if it gains
        at least :data:`DETOUR_GAIN` inches on standing still; failing that ``move``, which the dead-zone
        check (:meth:`ScriptedAgent.safer_option`) then shortens, halts or steps back.
        """
        if move is None or self.danger(battle, moved_copy(u, predict_pose(battle, u, move))) <= DANGER_LIMIT:
            return move
        best, best_gap = move, math.hypot(waypoint[0] - u.x, waypoint[1] - u.y) - DETOUR_GAIN
        for opt in (o for o in DETOUR_OPTIONS if o in options):
            pose = predict_pose(battle, u, opt)
            gap = math.hypot(waypoint[0] - pose.x, waypoint[1] - pose.y)
            if gap < best_gap and self.danger(battle, moved_copy(u, pose)) <= DANGER_LIMIT:
                best, best_gap = opt, gap
        return best

    def outermost_enemy(self, battle: Battle, u: UnitState, wing: str) -> UnitState | None:
        """The enemy (that ``u`` may target) furthest towards ``wing``'s side of the table (own frame)."""
        enemies = self.targets(battle, u)
        sign = 1.0 if wing == LEFT else -1.0
        return min(enemies, key=lambda e: (sign * self.own_x(battle, e), e.uid), default=None)


LURE_AHEAD = 8.0
"""Inches ahead of the strike unit's front (towards the enemy's edge) where the lure baits."""
LURE_SIDE = 12.0
"""Inches from the strike unit's centre towards the weak wing's edge where the lure baits: the strike unit then
stands beyond the Panic range of the lure breaking (CORE.PSY.PANIC.TRIGGER_BREAK: 12" between centres leave > 6"
between a 6"-wide strike unit and a 5"-wide lure) and out of its flight. Measured against ``line_advance``
(detector validation, 120 battles): 12" converts more often than 15" or 18" when the strike unit stands away
from the weak edge; near the edge :data:`LURE_EDGE_SNAP` applies."""
LURE_EDGE_GAP = 9.0
"""Least inches from a side edge to the lure's post (its centre). A lure baiting at the edge is chased into it,
where the strike unit cannot reach the chaser's flank; one kept 12" in (the deployment gap of tactics.md) stands
so near the strike unit that its chaser ends facing it. Measured: 9" converts most often (8"-13" tried)."""
LURE_EDGE_SNAP = 12.0
"""A post this near a side edge or nearer goes out to :data:`LURE_EDGE_GAP` from it: a chaser pursuing the lure
there has no room to flee 12" (2D6 at most) from the strike unit's charge from the inside (``room_to_flee``)."""
LURE_SLACK = 1.0
"""Inches a move must bring the lure nearer its post than staying put (it does not shuffle on the spot)."""
STRIKE_MIN_REACH = 0.25
"""Least chance to reach for which the strike group charges a chaser of the lure in the flank or rear."""
PURSUIT_RUNS = (3.0, 7.0, 11.0)
"""Pursuit moves (inches; 2D6 is 3 or more 97% of the time, 7 on average) at which a chaser of the lure is forecast."""
FORECAST_OPTIONS = ("advance", "advance_half", "march", "wheel_left", "wheel_right", "wheel_left_short",
                    "wheel_right_short", "march_wheel_left", "march_wheel_right", "backward", "turn_left", "turn_right")
"""The moves weighed by forecast: the strike unit's for an ambush (:meth:`WeakenedFlankAgent.ambush_move`), the
lure's on its way to its post (:meth:`WeakenedFlankAgent.nearest_move`)."""
FLEE_DISCOUNT = 0.2
"""Weight of a strike unit's flank charge on a chaser that would flee from it (a fast unit no dearer, with room
to run: the base agents' Flee! rule): a charge on a fleeing unit lands in no flank."""
STRIKE_FACING = 30.0
"""Degrees off-axis beyond which a waiting strike unit wheels to face the lure."""
LURE_TURNS = 3
"""Up to this turn the lure baits at its post beside the strike unit and the strike group lies in wait for its
chasers."""


class WeakenedFlankAgent(TacticalAgent):
    """``weakened_flank`` (tactics.md §4.3): Scouts alone on one wing pick a fight, fall back, and the army flanks the pursuers.

    Deployment: :func:`tactics.deployment.weakened_flank_template` on the wing
    chosen by :func:`tactics.deployment.choose_strong_side`. Turns
    1–:data:`LURE_TURNS`: the weak wing ("weak") leaves its wing for its post
    beside the strike unit (:meth:`lure_post`: :data:`LURE_AHEAD` ahead of it,
    :data:`LURE_SIDE` to its weak-wing side), where it stands in the enemy's
    reach without charging; in the enemy's reach it takes instead the move after
    which the strike group could best charge its forecast chasers in the flank
    (:meth:`bait_move`; a chaser that would flee the charge counts little). Charged, it flees only where the charger would end
    in a friend's flank reach (:func:`tactics.manoeuvres.feigned_flight_payoff`)
    or where breaking would make a friend test Panic, else it holds: it loses,
    flees straight away from the charger and is pursued. The strike unit ("inner") takes the move after which it could
    charge the forecast pursuers of the lure in the flank or rear
    (:meth:`ambush_move`); with none, it steps out of reach or wheels towards
    where the lure's chaser would end (:meth:`face_lure`). Once an enemy has
    charged or pursued the lure, the group goes for it: flank and rear charges
    readily, no frontal charge while the lure baits (:meth:`charge_allowed`).
    The strong wing ("strong") advances. Everyone engages after turn
    :data:`LURE_TURNS`; the strike group keeps after pursuers first.
    """

    name = "weakened_flank"
    bait_groups = frozenset({"weak"})
    flank_groups = frozenset({"inner", "strong"})
    engage_turn = LURE_TURNS + 1

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The weakened-flank template, the strong wing where the terrain and the enemy allow."""
        strong = choose_strong_side(battle, self.side)
        return weakened_flank_template(self.army(battle), battle.state.table_w, strong)

    def follow_groups(self) -> tuple[str, ...]:
        return ("strong", "inner")

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Lure to its post beside the strike unit; strike group: chasers first, else an ambush of the lure's
        chasers, else out of reach facing the chase; then engage."""
        group = self.group(u)
        chasers = [e for e in self.enemies(battle) if e.uid in self.bitten]
        if group == "inner" and chasers:
            target = min(chasers, key=lambda e: (space.unit_distance(u, e), e.uid))
            return self.strike(battle, u, options, target)
        if group == "strong" or self.engaging(battle):
            return self.engage(battle, u, options)
        if group == "weak":
            post = self.lure_post(battle, u)
            if post is None:
                return self.engage(battle, u, options)
            if battle.state.turn < 1:  # Vanguard: a plain march towards the post keeps the lure on its wing
                return self.toward(battle, u, post, options, "march")
            bait = self.bait_move(battle, u, options)
            if bait is not None:
                return bait or None
            return self.nearest_move(battle, u, post, options)
        if group == "inner":
            ambush = self.ambush_move(battle, u, options) if battle.state.turn >= 1 else None
            if ambush is not None:
                return ambush or None
            if mv.threats_on(battle, space.footprint(u), 1 - self.side):
                return self.step_out_of_reach(battle, u, options)
            return self.face_lure(battle, u, options)
        return self.engage(battle, u, options)

    def nearest_move(self, battle: Battle, u: UnitState, goal: tuple[float, float], options: Collection[str]) -> str | None:
        """The move of :data:`FORECAST_OPTIONS` (or staying put, None) forecast (:func:`agents.steering.predict_pose`)
        to end ``u`` nearest ``goal``; staying put faces the nearest enemy (:meth:`TacticalAgent.hold`)."""
        best, best_d = None, math.hypot(goal[0] - u.x, goal[1] - u.y) - LURE_SLACK
        for opt in (o for o in FORECAST_OPTIONS if o in options):
            pose = predict_pose(battle, u, opt)
            d = math.hypot(goal[0] - pose.x, goal[1] - pose.y)
            if d < best_d:
                best, best_d = opt, d
        return best if best is not None else self.hold(battle, u, options)

    def live_lure(self, battle: Battle) -> UnitState | None:
        """The lure (the first alive, steady unit of the weak wing), if any."""
        return next((w for w in self.army(battle) if self.group(w) == "weak" and w.alive and not w.fleeing), None)

    def chase_ends(self, battle: Battle, lure: UnitState) -> list[UnitState]:
        """Forecast copies of the enemies that could charge ``lure`` (maybe a forecast copy) next turn, where each
        would end pursuing it (:func:`tactics.manoeuvres.pursuit_pose`): :data:`PURSUIT_RUNS` inches on from
        where it meets the lure."""
        out = []
        for e in mv.threats_on(battle, space.footprint(lure), 1 - self.side):
            contact = math.hypot(lure.x - e.x, lure.y - e.y) - (e.depth + lure.depth) / 2
            out += [moved_copy(e, mv.pursuit_pose(e, lure, contact + run)) for run in PURSUIT_RUNS]
        return out

    def strike_poses(self, battle: Battle, u: UnitState, options: Collection[str], chasers: Collection[int]) -> list[tuple[str, UnitState]]:
        """(option, forecast copy) for strike unit ``u`` staying put (``""``) and for each of its
        :data:`FORECAST_OPTIONS`, leaving out poses that an enemy other than ``chasers`` could charge."""
        out = []
        for opt in ("", *(o for o in FORECAST_OPTIONS if o in options)):
            ghost = moved_copy(u, space.pose(u) if not opt else predict_pose(battle, u, opt))
            if not mv.threats_on(battle, space.footprint(ghost), 1 - self.side, exclude=chasers):
                out.append((opt, ghost))
        return out

    @staticmethod
    def flank_chance(s: UnitState, g: UnitState) -> float:
        """P(``s`` reaches ``g``, forecast copies both, with a flank or rear charge) (CORE.CHARGE.RANGE: M + the
        higher of 2D6, :func:`agents.estimates.charge_reach_probability`): 0 unless ``g`` is within its charge
        reach, partly in its front arc, and most of its front rank in ``g``'s flank or rear arc."""
        fg = space.footprint(g)
        gap = geo.distance(space.footprint(s), fg)
        if (gap > charge_reach(s) or not geo.partly_in_vision_arc(space.pose(s), s.width, s.depth, fg)
                or mv.arc_of_front_rank(s, g) == "front"):
            return 0.0
        return estimates.charge_chance(s, gap)

    def strike_chance(self, battle: Battle, s: UnitState, g: UnitState) -> float:
        """:meth:`flank_chance` of strike unit ``s`` on a forecast chaser ``g``, times :data:`FLEE_DISCOUNT` where
        ``g`` would flee the charge: a fast unit no dearer than ``s`` with room to flee 12" straight away from it
        (:func:`agents.base.room_to_flee`; the base agents' Flee! rule) — a charge on a fleeing unit lands in no
        flank (CORE.REACT.FLEE)."""
        p = self.flank_chance(s, g)
        if p > 0 and is_fast(g) and g.points <= s.points and room_to_flee(battle, g, s):
            p *= FLEE_DISCOUNT
        return p

    def bait_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The lure's move (``""``: stay put; else one of :data:`FORECAST_OPTIONS`) after which the strike units
        could best charge the forecast chasers of the lure (:meth:`chase_ends`) in the flank or rear: for each
        strike unit its best ambush pose (:meth:`strike_poses`, over the moves it has left this phase) by the
        sum of its :meth:`strike_chance`; None when no move gives any chance (ties: staying put, then the earlier
        option). The strike units then lay their ambush for where the lure stands (:meth:`ambush_move`)."""
        strikers = [s for s in self.army(battle) if self.group(s) == "inner" and s.alive and not s.fleeing]
        left: dict[int, set[str]] = {}
        for a in battle.legal_actions() if strikers else ():
            if a.kind == "move" and a.option is not None:
                left.setdefault(a.unit, set()).add(a.option)
        best, best_n = None, 0.0
        for opt in ("", *(o for o in FORECAST_OPTIONS if o in options)) if strikers else ():
            ends = self.chase_ends(battle, moved_copy(u, space.pose(u) if not opt else predict_pose(battle, u, opt)))
            chasers = {g.uid for g in ends}
            n = sum(max((sum(self.strike_chance(battle, sg, g) for g in ends)
                         for _, sg in self.strike_poses(battle, s, left.get(s.uid, ()), chasers)), default=0.0)
                    for s in strikers) if ends else 0.0
            if n > best_n + 1e-9:
                best, best_n = opt, n
        return best

    def ambush_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The strike unit's move (``""``: stay put) after which its flank or rear charges on the forecast chasers
        of the lure (:meth:`chase_ends`) are likeliest to land (the sum of their :meth:`flank_chance`: a chaser
        just inside the M + 6" reach counts for little), where no other enemy could charge it; None when no move
        gives any chance (forecasts by :func:`agents.steering.predict_pose`; ties: the earlier option)."""
        lure = self.live_lure(battle)
        ends = self.chase_ends(battle, lure) if lure is not None else []
        if not ends:
            return None
        best, best_n = None, 0.0
        for opt, ghost in self.strike_poses(battle, u, options, {g.uid for g in ends}):
            n = sum(self.strike_chance(battle, ghost, g) for g in ends)
            if n > best_n + 1e-9:
                best, best_n = opt, n
        return best

    def face_lure(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Wheel towards where the lure's first chaser is forecast to end (:meth:`chase_ends`, the middle pursuit
        move), else towards the lure, once that point stands more than :data:`STRIKE_FACING`° off-axis (the chaser
        then ends in the strike unit's front arc); else stay put."""
        lure = self.live_lure(battle)
        if lure is None:
            return self.hold(battle, u, options)
        ends = self.chase_ends(battle, lure)
        goal = (ends[len(PURSUIT_RUNS) // 2].x, ends[len(PURSUIT_RUNS) // 2].y) if ends else (lure.x, lure.y)
        off = off_axis(u, goal)
        if abs(off) <= STRIKE_FACING:
            return None
        side = "left" if off > 0 else "right"
        order = [f"wheel_{side}_short", f"wheel_{side}"] if abs(off) < 2 * STRIKE_FACING else [f"wheel_{side}", f"wheel_{side}_short"]
        return next((o for o in order if o in options), None)

    def strike_unit(self, battle: Battle) -> UnitState | None:
        """The strike unit the lure baits for: the alive flank-strike unit with the most points (lowest uid on ties)."""
        inner = [s for s in self.army(battle) if self.group(s) == "inner" and s.alive and not s.fleeing]
        return max(inner, key=lambda s: (s.points, -s.uid), default=None)

    def weak_edge_sign(self) -> float:
        """+1 when the weak wing is on the own right, −1 on the own left."""
        strong = self.plan.strong_side if self.plan and self.plan.strong_side else LEFT
        return 1.0 if strong == LEFT else -1.0

    def lure_post(self, battle: Battle, lure: UnitState) -> tuple[float, float] | None:
        """Where the lure baits: :data:`LURE_AHEAD` ahead of the strike unit's centre line plus half its depth
        (ahead: towards the enemy's edge) and :data:`LURE_SIDE` from it towards the weak wing's edge, but at least
        :data:`LURE_EDGE_GAP` from either side edge, and out to it from within :data:`LURE_EDGE_SNAP` of the
        edge. None without a strike unit or an enemy."""
        hammer = self.strike_unit(battle)
        if hammer is None or self.nearest_enemy(battle, lure) is None:
            return None
        ahead = enemy_edge_facing(self.side)  # facing the enemy's edge, local +x is the own right for either side
        x, y = geo.to_world(geo.Pose(hammer.x, hammer.y, ahead), self.weak_edge_sign() * LURE_SIDE,
                            hammer.depth / 2 + LURE_AHEAD)
        w = battle.state.table_w
        if min(x, w - x) <= LURE_EDGE_SNAP:
            x = LURE_EDGE_GAP if x < w / 2 else w - LURE_EDGE_GAP
        return min(max(x, LURE_EDGE_GAP), w - LURE_EDGE_GAP), y

    def strike(self, battle: Battle, u: UnitState, options: Collection[str], e: UnitState) -> str | None:
        """Go for a pursuer ``e``: straight in from its flank or rear, else round to its flank first."""
        if mv.attack_arc(battle, u, e) != "front":
            return self.advance_on(battle, u, options, e)
        return self.flank_attack(battle, u, e, mv.flank_point(e, u), options)

    def charge_allowed(self, battle: Battle, o: ChargeOption) -> bool:
        """While the lure baits, it does not charge, and the strike group does not charge a chaser of the lure
        in the front (it waits for the flank) but charges its flank or rear at any chance to reach of at least
        :data:`STRIKE_MIN_REACH`, whatever the fight promises (the flank charge is the tactic, and a chaser left
        alone turns to face); the rest as the tactical agents (punishers charge chasers' flanks readily)."""
        if self.group(o.charger) == "weak" and not self.engaging(battle):
            return False
        if self.group(o.charger) == "inner" and o.target.uid in self.bitten and not self.engaging(battle):
            if o.facing == "front":
                return False
            if o.p_reach >= STRIKE_MIN_REACH:
                return True
        return super().charge_allowed(battle, o)

    def should_flee(self, battle: Battle, t: UnitState, c: UnitState, facing: str) -> bool:
        """While it baits, the lure flees only where its charger would end in reach of a flank or rear charge by
        the strike group (:func:`tactics.manoeuvres.feigned_flight_payoff`, the "inner" units: they wait for
        it); otherwise it holds, so that a charger that reaches it breaks it and pursues past the strike unit —
        also beside a friend that its breaking makes test Panic (CORE.PSY.PANIC.TRIGGER_BREAK): a lure fleeing
        from a charger in contact range draws no pursuer (the charge fails short and the charger stays).
        Measured against ``line_advance`` (detector validation, seeds 0-39, 40-79, 100-139): the conversion
        in 62.5% of 120 battles holding there, 57.5% fleeing. Others as the tactical agents."""
        if self.group(t) == "weak" and not self.engaging(battle):
            return room_to_flee(battle, t, c) and any(
                self.group(f) == "inner" for f, _ in mv.feigned_flight_payoff(battle, t, c))
        return super().should_flee(battle, t, c, facing)

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """The lure goes to its post whatever the dead-zone check says (standing in the enemy's reach is its job),
        and so does the strike group going for a chaser of the lure (the punishment is the tactic)."""
        chasing = self.group(u) == "inner" and any(e.uid in self.bitten for e in self.enemies(battle))
        return (self.group(u) == "weak" and not self.engaging(battle)) or chasing or super().ignores_danger(battle, u)


SHIFT_TURNS = 2
"""The decoys of ``abandoned_flank`` shift across in these first turns."""
SHIFT_DEPTH_X = 24.0
"""Inches past the centre line, into the main body's half, that the first decoy (lane 0) aims for."""
SHIFT_LANE_GAP = 12.0
"""Inches between the goals of successive decoys on the lane (a turned cavalry column is about 10" long)."""
SHIFT_MIN_X = 4.0
"""The least inches past the centre line that any decoy aims for."""
SHIFT_TURN_ANGLE = 45.0
"""Degrees off a decoy's facing beyond which it turns or wheels towards its shift point before it marches."""


class AbandonedFlankAgent(TacticalAgent):
    """``abandoned_flank`` (tactics.md §4.3): a fast decoy wing shifts across to the main body; the army hits one flank.

    Deployment: :func:`tactics.deployment.abandoned_flank_template`, the decoy
    on the weaker side for the advance (the main body gets the better one),
    next to the centre line in the middle row. Turns 1–2: the decoys
    ("decoy") and the decoy infantry ("decoy_inf") turn square and march
    across into the main body's half along the lane behind its front row
    (out of the enemy's march-block and charge reach), queueing one behind
    the other; the main body advances. Then everything attacks the
    enemy units on the main body's side, fast units round their flank.
    Flyers land as a feint (``flyer_feint``) where they threaten several
    enemy flanks at once, then charge the true target.
    """

    name = "abandoned_flank"
    flank_groups = frozenset({"decoy", "main"})

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The abandoned-flank template; the main body on the strong side."""
        strong = choose_strong_side(battle, self.side)
        return abandoned_flank_template(self.army(battle), battle.state.table_w, other(strong))

    def follow_groups(self) -> tuple[str, ...]:
        return ("main",)

    def main_x(self, battle: Battle) -> float:
        """Table x of the main body's side, a sixth of the table in from its edge."""
        w = battle.state.table_w
        main_side = self.plan.strong_side if self.plan and self.plan.strong_side else RIGHT
        x = w / 6 if main_side == LEFT else 5 * w / 6
        return own_x(self.side, x, w)

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Decoys shift across in turns 1–2; then all go for the enemies on the main body's side."""
        group = self.group(u)
        turn = battle.state.turn
        if is_flyer(u) and turn >= 2:
            feint = self.flyer_feint(battle, u, options)
            if feint is not None:
                return feint
        if group in ("decoy", "decoy_inf") and turn <= SHIFT_TURNS:
            return self.shift_across(battle, u, options)
        return self.engage(battle, u, options, self.flank_target(battle, u))

    def shift_point(self, battle: Battle, u: UnitState) -> tuple[float, float]:
        """Where a decoy goes in turns 1–2: straight across at its own depth (the lane behind the main
        body's front row, where the template deploys the decoys, out of the enemy's march-block and charge
        reach), to :data:`SHIFT_DEPTH_X` past the centre line for the decoy nearest the main body, each
        next one :data:`SHIFT_LANE_GAP` less (at least :data:`SHIFT_MIN_X`), so that they queue on the lane."""
        w = battle.state.table_w
        main_left = (self.plan.strong_side if self.plan and self.plan.strong_side else RIGHT) == LEFT
        lane = next((i for i, d in enumerate(self.decoys_in_lane_order(battle)) if d.uid == u.uid), 0)
        past = max(SHIFT_DEPTH_X - SHIFT_LANE_GAP * lane, SHIFT_MIN_X)
        return (own_x(self.side, w / 2 - past if main_left else w / 2 + past, w), u.y)

    def decoys_in_lane_order(self, battle: Battle) -> list[UnitState]:
        """The decoys (FLY/FC and i1), the one placed nearest the main body first: lane 0, and first to move."""
        main_left = (self.plan.strong_side if self.plan and self.plan.strong_side else RIGHT) == LEFT
        sign = 1.0 if main_left else -1.0
        placed = self.plan.targets if self.plan else {}
        return sorted((d for d in self.army(battle) if self.group(d) in ("decoy", "decoy_inf")),
                      key=lambda d: (sign * placed[d.uid].x if d.uid in placed else 0.0, d.uid))

    def choose_move(self, battle: Battle, legal: list[Action]) -> Action:
        """In the shift turns the decoys move first, lane 0 first, so that none waits behind another or
        behind a main-body unit that has not yet made room; then as the base agent."""
        if battle.state.turn <= SHIFT_TURNS:
            options = move_options(legal)
            for d in self.decoys_in_lane_order(battle):
                if d.uid in options and not d.fleeing:
                    option = self.move_option(battle, d, options[d.uid])
                    if option is not None and option in options[d.uid]:
                        return options[d.uid][option]
        return super().choose_move(battle, legal)

    def shift_across(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The lateral shift: a square turn towards the shift point (a column along the lane; a wheel only
        when there is no room to turn), then a march along the lane — a normal move where the march is
        blocked. In the Vanguard move only the square turn is made (a wheel would walk into the enemy's
        reach)."""
        goal = self.shift_point(battle, u)
        off = off_axis(u, goal)
        vanguard = battle.state.turn == 0
        if abs(off) > SHIFT_TURN_ANGLE:
            side = "left" if off > 0 else "right"
            order = [f"turn_{side}"] if vanguard else [f"turn_{side}", f"march_wheel_{side}", f"wheel_{side}"]
            return next((o for o in order if o in options), None)
        if vanguard:
            return None
        return self.toward(battle, u, goal, options, "march")

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """During the shift the decoys go on whatever the dead-zone check says: the shift is the tactic
        (tactics.md: the whole army must be on one flank by turn 2), and a decoy that waits is left behind."""
        return (self.group(u) in ("decoy", "decoy_inf") and battle.state.turn <= SHIFT_TURNS) \
            or super().ignores_danger(battle, u)

    def flank_target(self, battle: Battle, u: UnitState) -> UnitState | None:
        """The enemy on the main body's side nearest ``u`` (the flank the whole army concentrates on)."""
        enemies = self.targets(battle, u)
        if not enemies:
            return None
        mx = self.main_x(battle)
        return min(enemies, key=lambda e: (abs(e.x - mx) + space.unit_distance(u, e), e.uid))

    def flyer_feint(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``flyer_feint``: fly to a spot behind the enemy threatening several flanks, safe from their fronts."""
        points = [mv.rear_point(e, u, 4.0) for e in self.enemies(battle)]
        spot = mv.feint_landing(battle, u, points)
        if spot is None:
            return None
        return steer(battle, u, spot, "march", options, approach=False)


class BaitAndFlankAgent(TacticalAgent):
    """``bait_unit`` / ``feigned_flight`` as a plan: a cheap bait tempts the enemy across a hammer's front.

    Deployment: the battle line (:func:`tactics.deployment.line_template`),
    then the cheapest unit (fast ones first: they flee further) becomes the
    bait and the strongest fast unit (else the strongest) the hammer: its
    charge reach must cover the bait's post. The bait goes to its post
    (:func:`tactics.manoeuvres.bait_post`: 10" ahead of the hammer, 8" to
    its inner side) and waits there in the enemy's reach; charged, it flees
    when it can escape. The hammer keeps out of the enemy's threat zone
    until an enemy goes for the bait (or turn 3), then charges it (flank and
    rear charges readily). The rest of the line goes for the enemy at once.
    """

    name = "bait_and_flank"
    bait_groups = frozenset({"bait"})
    flank_groups = frozenset({"hammer"})

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The battle line with a bait and a hammer picked out."""
        army = self.army(battle)
        plan = line_template(army, battle.state.table_w)
        body = [u for u in army if not u.character]
        if len(body) >= 3:
            bait = min(body, key=lambda u: (not is_mobile(u), u.points, u.uid))
            hammer = max((u for u in body if u is not bait), key=lambda u: (is_mobile(u), u.points, -u.uid))
            plan.groups[bait.uid] = "bait"
            plan.groups[hammer.uid] = "hammer"
            self.bait_beside_hammer(plan, bait, hammer, battle.state.table_w)
        return plan

    @staticmethod
    def bait_beside_hammer(plan: DeploymentPlan, bait: UnitState, hammer: UnitState, table_w: float) -> None:
        """Swap the bait's deployment target with that of the unit next to the hammer on its inner side, so the
        bait deploys by the hammer (its post is in front of the hammer's flank) rather than across the table."""
        hx = plan.targets[hammer.uid].x
        inner = 1.0 if hx < table_w / 2 else -1.0
        row = plan.targets[hammer.uid].row
        near = [uid for uid, t in plan.targets.items() if uid not in (bait.uid, hammer.uid) and t.row == row
                and inner * (t.x - hx) > 0]
        if not near or abs(plan.targets[bait.uid].x - hx) <= min(abs(plan.targets[u].x - hx) for u in near):
            return
        other = min(near, key=lambda uid: (abs(plan.targets[uid].x - hx), uid))
        plan.targets[bait.uid], plan.targets[other] = plan.targets[other], plan.targets[bait.uid]

    def member(self, battle: Battle, group: str) -> UnitState | None:
        """The alive unit of ``group``, if any."""
        return next((u for u in self.army(battle) if self.group(u) == group and u.alive), None)

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Bait to its post; hammer out of reach until the enemy bites (or turn 3); the rest of the line engages."""
        group = self.group(u)
        chasers = [e for e in self.enemies(battle) if e.uid in self.bitten]
        if group == "hammer":
            if chasers:
                return self.engage(battle, u, options, min(chasers, key=lambda e: (space.unit_distance(u, e), e.uid)))
            if self.engaging(battle):
                return self.engage(battle, u, options)
            return self.keep_out_of_reach(battle, u, options)
        if group == "bait" and not self.engaging(battle):
            hammer = self.member(battle, "hammer")
            enemy = self.nearest_enemy(battle, u)
            if hammer is None or enemy is None:
                return self.engage(battle, u, options)
            inner = 1.0 if self.own_x(battle, hammer) < battle.state.table_w / 2 else -1.0
            sign = inner if self.side == 0 else -inner
            post = mv.bait_post(hammer, (enemy.x, enemy.y), sign)
            return self.toward(battle, u, post, options, "march")
        return self.engage(battle, u, options)

    def charge_allowed(self, battle: Battle, o: ChargeOption) -> bool:
        """The bait does not charge while it baits; the hammer charges an enemy that went for the bait in any
        arc unless it expects to lose (tactics.md ``bait_unit`` step 3); the rest as the tactical agents."""
        if self.group(o.charger) == "bait" and not self.engaging(battle):
            return False
        if self.group(o.charger) == "hammer" and o.target.uid in self.bitten:
            return o.p_reach >= MIN_REACH_FLANK and o.first.diff > FLANK_DIFF
        return super().charge_allowed(battle, o)

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """The bait goes to its post whatever the dead-zone check says: standing in the enemy's reach is its job."""
        return (self.group(u) == "bait" and not self.engaging(battle)) or super().ignores_danger(battle, u)
