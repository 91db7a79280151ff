"""Scripted agents that play the tactics library, part 2: deployment templates paired with their manoeuvres.

Each agent is a deployment template of :mod:`tactics.deployment` plus the
manoeuvres of :mod:`tactics.manoeuvres` that belong to it in
``shared/rules/tactics.md``; the shared decision rules (charge scoring,
reactions, the dead-zone check on moves, shooting) come from
:class:`agents.base.ScriptedAgent`, and the manoeuvres every tactical agent
shares from :class:`TacticalAgent`:

* **flank seeking and combined charges** — fast units go round to a flank
  before they charge (in turns 1–2, or to hit an enemy already fighting a
  friend: ``position_for_flank_next_turn``); a target that two of our units
  can charge counts the second as support (``flanking_charge_bonus``);
* **charge consequence analysis** — before a charge is declared, the
  battle is cloned with the charger in contact, and a charge that would let
  other enemies win a fight on the charger's flank or rear next turn, with
  no friend to punish them, is declined unless it is decisive or likely to
  break the target (``charge_consequence_analysis``, variant IV when declined);
* **feigned flight** — a unit in a bait group flees from a charge when it can
  escape, drawing the charger across its friends (``feigned_flight``);
* **restrained pursuit** — a winner does not pursue into the enemy's
  position when that leaves it cut off (``restrained_pursuit``);
* **the flyer feint, defended** — an enemy flyer landing among our units
  turns only the one unit nearest it; the others keep facing their targets
  (``flyer_feint``, ``threat_360_check``);
* **engaging** — from :attr:`TacticalAgent.engage_turn` every unit without a
  job left goes for the enemy; from turn :data:`LATE_TURN` the dead-zone
  check no longer holds moves back (a six-turn game has no time to wait).

The agents (registry names):

=========================== =======================================================
``flank_teeth``             strong wings go round to the enemy's rear, the cheap centre delays
``weakened_flank``          Scouts alone on one wing bait, the main body flanks the pursuers
``abandoned_flank``         a fast decoy wing shifts across to the main body in turns 1–2
``shooting_lines``          staggered shooters on high ground, the line unmasks them
``sacrifice_for_deployment`` an isolated irritant shoots, the main army fights elsewhere
``protected_bubble``        the General (or wizard) ringed by four units, moving as one
``bait_and_flank``          a cheap bait in front of a hammer's flank, the hammer punishes
``control_zones``           a holder denies the hill by threat, the rest claim ground
``open_loop``               orders by turn number only, ignoring the enemy (a baseline)
=========================== =======================================================
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection
from typing import TYPE_CHECKING

import shapely

from battleline.agents import estimates
from battleline.agents.base import (
    CLOSE,
    DANGER_LIMIT,
    LIKELY_BREAK,
    MIN_REACH,
    MIN_REACH_FLANK,
    ChargeOption,
    ScriptedAgent,
    charge_arc,
    effort,
    room_to_flee,
)
from battleline.agents.steering import (
    angle_diff,
    enemy_edge_facing,
    enemy_edge_sign,
    face_threat,
    landing,
    moved_copy,
    off_axis,
    predict_pose,
    rotation_option,
    steer,
)
from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, space
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.charges import charge_reach
from battleline.env.rules.movement import can_move, normal_move_allowance, surroundings
from battleline.env.rules.state import UnitState
from battleline.tactics import manoeuvres as mv
from battleline.tactics.deployment import (
    BACK,
    CENTRE,
    FRONT,
    LEFT,
    RIGHT,
    DeploymentPlan,
    SlotTarget,
    abandoned_flank_template,
    approach_side,
    choose_strong_side,
    flank_teeth_template,
    high_ground_spots,
    irritant_spot,
    is_fast,
    is_flyer,
    is_mobile,
    is_swarm,
    line_template,
    open_half,
    other,
    own_x,
    protected_bubble_template,
    sacrifice_template,
    shooting_lines_template,
    weakened_flank_template,
)

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ENGAGE_TURN = 3
"""From this turn on, units without a tactic job left go for the enemy."""
FEIGN_ESCAPE = 0.6
"""Least chance to escape (``flee_viability_check``) for a bait to flee from a charge."""
FEIGN_PAYOFF_ESCAPE = 0.4
"""Least chance to escape for a bait to flee when friends are ready to flank the charger."""
COMBINED_SHARE = 0.8
"""Share of a second charger's reach chance credited as support before it has declared."""
FLANK_FRONT_DIFF = 2.0
"""Expected first-round lead a flanking unit wants before it charges an enemy's front."""
FLANK_DIFF = -1.0
"""Expected first-round result above which a flanking unit charges a flank or rear."""
LATE_TURN = 5
"""From this turn on, moves are no longer held back by the dead-zone check (six turns: time is short)."""
FLANK_TURNS = 2
"""Up to this turn flanking units go round their targets (and keep to flank charges); later they go straight in."""
DECISIVE = 3.0
"""Expected first-round lead at which a charge is made whatever the look-ahead finds (it should win outright)."""
PUNISH_BONUS = 2.0
"""Charge-score bonus for charging an enemy that charged or pursued one of our bait units."""


def move_options(legal: list[Action]) -> dict[int, dict[str, Action]]:
    """The legal ``move`` actions by unit and option."""
    options: dict[int, dict[str, Action]] = defaultdict(dict)
    for a in legal:
        if a.kind == "move":
            options[a.unit][a.option] = a
    return options


class TacticalAgent(ScriptedAgent):
    """The shared manoeuvres of the tactical agents (see the module docstring).

    Subclasses implement :meth:`make_plan` and :meth:`role_move`; they tune
    the class attributes:

    Attributes:
        engage_turn: the turn from which units without a job engage.
        bait_groups: plan groups whose units flee from a charge they can escape.
        flank_groups: plan groups whose units seek flanks (charge flanks readily, fronts only when clearly favourable).
        looks_ahead: run the charge consequence analysis before charging.
    """

    name = "tactical"
    engage_turn = ENGAGE_TURN
    bait_groups: frozenset[str] = frozenset()
    flank_groups: frozenset[str] = frozenset()
    looks_ahead = True

    def reset(self, battle: Battle, side: int) -> None:
        """Start a new battle on ``side``."""
        super().reset(battle, side)
        self._potential: dict[int, list[int]] = {}
        self._events_seen = 0
        self.bitten: set[int] = set()
        self._feints: dict[tuple[int, int, int], int | None] = {}
        self._step_key: tuple[int, int] | None = None
        self._step: dict[int, str] = {}
        self._step_order: list[int] = []

    def act(self, battle: Battle) -> Action:
        """Read any flyer feint before the first order of a player turn, then answer as the base agent."""
        if battle.pending.kind in ("charge", "move") and battle.state.active == self.side:
            for e in self.enemies(battle):
                if is_flyer(e):
                    self.ignores(battle, e, e)  # fixes this turn's reading of e (see :meth:`ignores`)
        return super().act(battle)

    # ------------------------------------------------------------------ moves
    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Shooters with targets hold, characters follow, each unit's role move, else engage."""
        if self.holds_to_shoot(battle, u):
            return None
        if u.character and self.group(u) in ("character", "support"):
            return self.follow(battle, u, options, groups=self.follow_groups())
        return self.role_move(battle, u, options)

    def role_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The tactic's move for ``u``; the default engages."""
        return self.engage(battle, u, options)

    def follow_groups(self) -> tuple[str, ...]:
        """The groups a lone character keeps behind."""
        return (CENTRE,)

    def engaging(self, battle: Battle) -> bool:
        """Whether the army has reached :attr:`engage_turn`."""
        return battle.state.turn >= self.engage_turn

    def engage(self, battle: Battle, u: UnitState, options: Collection[str], target: UnitState | None = None) -> str | None:
        """Go for the enemy: flanking units round the target's flank (``position_for_flank_next_turn``), the rest straight at it."""
        target = target or self.target_for(battle, u)
        if target is None:
            return None
        if self.flanks(u) and space.unit_distance(u, target) > CLOSE / 2 and self.worth_flanking(battle, u, target):
            return self.flank_attack(battle, u, target, mv.flank_point(target, u), options)
        return self.advance_on(battle, u, options, target)

    def flanks(self, u: UnitState) -> bool:
        """Whether ``u`` seeks flanks: a fast or flying unit of a flanking group."""
        return is_mobile(u) and not u.character and self.group(u) in self.flank_groups

    def worth_flanking(self, battle: Battle, u: UnitState, target: UnitState) -> bool:
        """Whether going round ``target`` pays: it is fighting a friend (hammer and anvil), or early in the
        game with its flank within two marches (later the detour costs more turns than the game has); a march is
        twice the engine's move (:func:`env.rules.movement.normal_move_allowance`: flyers 10", CORE.MOVE.FLY)."""
        if self.engaged_with_friend(battle, target):
            return True
        if battle.state.turn > FLANK_TURNS:
            return False
        fx, fy = mv.flank_point(target, u)
        return math.hypot(fx - u.x, fy - u.y) <= 4.0 * normal_move_allowance(u)

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """The dead-zone check is dropped from turn :data:`LATE_TURN`: with the game ending, waiting wins nothing."""
        return battle.state.turn >= LATE_TURN

    def hold(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Stay put, facing the nearest enemy — unless that is a feinting flyer someone else watches."""
        nearest = psychology.nearest_enemy(battle, u)
        if nearest is not None and self.ignores(battle, u, nearest):
            return None
        return face_threat(battle, u, options)

    def ignores(self, battle: Battle, u: UnitState, e: UnitState) -> bool:
        """``flyer_feint`` (defender): ``e`` is a flyer feinting among us and ``u`` is not the one unit that watches it.

        The reading is made once per player turn (the first time the flyer
        is looked at) and kept, so the answer does not change as our units move.
        """
        key = (battle.state.turn, battle.state.active, e.uid)
        if key not in self._feints:
            feint = mv.feinting(battle, e)
            watcher = mv.feint_watcher(battle, e) if feint else None
            self._feints[key] = (watcher.uid if watcher is not None else -1) if feint else None
        watcher_uid = self._feints[key]
        return watcher_uid is not None and watcher_uid != u.uid

    def targets(self, battle: Battle, u: UnitState) -> list[UnitState]:
        """The enemies ``u`` may pick as its target: every non-fleeing enemy but a feinting flyer someone else watches."""
        return [e for e in self.enemies(battle) if not self.ignores(battle, u, e)]

    def target_for(self, battle: Battle, u: UnitState) -> UnitState | None:
        """The base target, passing over a feinting flyer that another unit watches (``threat_360_check``)."""
        target = super().target_for(battle, u)
        if target is None or not self.ignores(battle, u, target):
            return target
        others = [e for e in self.enemies(battle) if e.uid != target.uid]
        return min(others, key=lambda e: (effort(u, e), e.uid), default=target)

    def step_out_of_reach(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Step back from an enemy that could charge next turn, else hold facing it (``withdraw_and_hold_line``)."""
        fp = space.footprint(u)
        if mv.threats_on(battle, fp, 1 - self.side) and "backward" in options:
            return "backward"
        return self.hold(battle, u, options)

    def keep_out_of_reach(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """Advance only while the move ends outside every enemy's threat region; otherwise hold or step back."""
        for opt in ("advance", "advance_half"):
            if opt in options:
                pose = predict_pose(battle, u, opt)
                if not mv.threats_on(battle, space.footprint_at(u, pose), 1 - self.side):
                    return opt
        return self.step_out_of_reach(battle, u, options)

    def toward(self, battle: Battle, u: UnitState, goal: tuple[float, float], options: Collection[str], pace: str = "march") -> str | None:
        """Steer ``u`` to a waypoint (no overshoot), or hold facing the enemy once there."""
        return steer(battle, u, goal, pace, options, approach=False) or self.hold(battle, u, options)

    def forward_point(self, battle: Battle, u: UnitState, depth: float) -> tuple[float, float]:
        """The table point ``depth`` inches into the table from this side's edge, level with ``u``."""
        y = depth if self.side == 0 else battle.state.table_h - depth
        return (u.x, y)

    def own_x(self, battle: Battle, u: UnitState) -> float:
        """``u``'s x in this side's frame (inches from its own left edge)."""
        return own_x(self.side, u.x, battle.state.table_w)

    # ------------------------------------------------------------------ charges: combined charges, consequences
    def choose_charge(self, battle: Battle, legal: list[Action]) -> Action:
        """Note the combined charges open this phase, then declare as the base agent does."""
        self.note_events(battle)
        self._potential = {t: [o.charger for o in opts] for t, opts in mv.combined_charges(battle, legal).items()}
        return super().choose_charge(battle, legal)

    def ally_support(self, battle: Battle, enemy: UnitState) -> float:
        """The base support, or :data:`COMBINED_SHARE` of a second charger's reach chance (a combined charge)."""
        base = super().ally_support(battle, enemy)
        declared = {ch["charger"] for ch in battle.state.queue.get("charges", [])}
        others = [uid for uid in self._potential.get(enemy.uid, []) if uid not in declared]
        if len(others) < 2:
            return base
        chances = [
            estimates.charge_chance(battle.unit(uid), space.unit_distance(battle.unit(uid), enemy))
            for uid in others
        ]
        second = sorted(chances)[-2]
        return max(base, COMBINED_SHARE * second)

    def charge_score(self, battle: Battle, c: UnitState, t: UnitState) -> float | None:
        """The base score, plus :data:`PUNISH_BONUS` against an enemy that went for our bait."""
        score = super().charge_score(battle, c, t)
        if score is not None and t.uid in self.bitten:
            score += PUNISH_BONUS
        return score

    def charge_allowed(self, battle: Battle, o: ChargeOption) -> bool:
        """Flanking units (up to turn :data:`FLANK_TURNS`) and punishers of bait-chasers charge flanks readily,
        fronts only when clearly better; the rest use the base rule. Then the charge consequence analysis
        may veto a charge that is neither decisive nor likely to break the target."""
        if (self.flanks(o.charger) and battle.state.turn <= FLANK_TURNS) or o.target.uid in self.bitten:
            if o.facing != "front":
                ok = o.p_reach >= MIN_REACH_FLANK and o.first.diff > FLANK_DIFF
            else:
                ok = o.first.diff >= FLANK_FRONT_DIFF and super().charge_allowed(battle, o)
        else:
            ok = super().charge_allowed(battle, o)
        if not ok or not self.looks_ahead or o.first.break_chance >= LIKELY_BREAK or o.first.diff >= DECISIVE:
            return ok
        return self.consequences_acceptable(battle, o.charger, o.target)

    def consequences_acceptable(self, battle: Battle, c: UnitState, t: UnitState) -> bool:
        """``charge_consequence_analysis``: no enemy could hit the charger's flank or rear next turn unpunished.

        Each enemy that could charge ``c`` in the flank or rear once it is in
        contact with ``t`` (``battle.clone()`` look-ahead), and would expect to
        win that fight, must be within reach of a friend that could charge it
        in turn (variants I–III).
        """
        for e, arc in mv.counter_chargers(battle, c, t):
            if arc == "front" or estimates.estimate_combat(battle, e, c, arc).diff <= 0:
                continue  # a frontal counter-charge, or one that would not win, changes nothing
            if not mv.covering_friends(battle, self.side, e, exclude=(c.uid,)):
                return False
        return True

    # ------------------------------------------------------------------ reactions: feigned flight
    def should_flee(self, battle: Battle, t: UnitState, c: UnitState, facing: str) -> bool:
        """The base rule, or a bait that can escape (``feigned_flight``, ``flee_viability_check``)."""
        if super().should_flee(battle, t, c, facing):
            return True
        if self.group(t) not in self.bait_groups or not room_to_flee(battle, t, c):
            return False
        gap = space.unit_distance(t, c)
        p = mv.flee_escape_probability(gap, c, t)
        if p >= FEIGN_ESCAPE:
            return True
        return p >= FEIGN_PAYOFF_ESCAPE and bool(mv.feigned_flight_payoff(battle, t, c))

    def choose_reaction(self, battle: Battle, legal: list[Action]) -> Action:
        """React as the base agent; a bait charged marks its charger for punishment."""
        action = super().choose_reaction(battle, legal)
        ch = battle.state.queue.get("charges", [])
        if ch and self.group(battle.unit(ch[-1]["target"])) in self.bait_groups:
            self.bitten.add(ch[-1]["charger"])
        return action

    # ------------------------------------------------------------------ pursuit: restrained
    def choose_pursuit(self, battle: Battle, legal: list[Action]) -> Action:
        """Pursue, unless it would carry the winner deep among enemies far from friends (``restrained_pursuit``)."""
        pursue = next((a for a in legal if a.option == "pursue"), None)
        hold = next((a for a in legal if a.option == "hold"), None)
        if pursue is None:
            return END_PHASE
        if hold is not None and pursue.target is not None:
            winner, fleer = battle.unit(pursue.unit), battle.unit(pursue.target)
            if self.cut_off(battle, winner, fleer):
                return hold
        return pursue

    def cut_off(self, battle: Battle, winner: UnitState, fleer: UnitState) -> bool:
        """Whether pursuing leaves ``winner`` > 12" from friends among ≥ 2 enemies that expect to beat it there."""
        threats, gap = mv.pursuit_exposure(battle, winner, fleer)
        if gap <= mv.PURSUIT_FRIEND_GAP:
            return False
        ghost = moved_copy(winner, mv.pursuit_pose(winner, fleer))
        winning = [e for e in threats if estimates.estimate_combat(battle, e, ghost, mv.arc_of_front_rank(e, ghost)).diff > 0]
        return len(winning) >= mv.PURSUIT_THREATS

    # ------------------------------------------------------------------ events
    def note_events(self, battle: Battle) -> None:
        """Remember enemies that charged or pursued our bait units (read from the event log)."""
        bait = {u.uid for u in self.army(battle) if self.group(u) in self.bait_groups}
        if not bait:
            self._events_seen = len(battle.events)
            return
        for ev in battle.events[self._events_seen:]:
            rule = ev.get("rule")
            if rule == "CORE.CHARGE.DECLARE" and ev.get("target") in bait:
                self.bitten.add(ev["unit"])
            elif rule == "CORE.CC.PURSUIT_MOVE" and ev.get("unit") is not None and battle.unit(ev["unit"]).side != self.side:
                self.bitten.add(ev["unit"])
        self._events_seen = len(battle.events)


# ============================================================================= deployment-template agents
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


RING_FULL = 270.0
"""Degrees of ring coverage that count as a full ring (tactics.md ``protected_bubble`` detection)."""
RING_MARGIN = 5.0
"""Degrees above RING_FULL the forecast of a bubble step must keep (the forecast is rough)."""
HELPER_REACH = 12.0
"""Inches from the asset within which a line unit helps close a gap in its ring."""
RING_MIN_GAIN = 1.0
"""Degrees of coverage a ring unit's move must add to be worth making."""
POCKET_STEP = 0.5
"""Inches the asset must move in a turn to count as moving with its bubble."""
POST_SLACK = 0.1 + 1e-6
"""Inches the front unit of a closing ring may stand short of its post (:meth:`ProtectedBubbleAgent.post_move`):
with the posts RING_GAP apart, it may close to the engine's 1" from the asset but no nearer the side units."""
FLOOR_PENALTY = 20.0
"""Inches added to the miss of a landing short of the front post (it would block the side units)."""
BACK_LIMIT = 100.0
"""Degrees from straight ahead (towards the enemy's edge) beyond which a ring unit faces back."""
BACK_PENALTY = 20.0
"""Inches added to the miss of a ring unit's landing that faces back (:meth:`ProtectedBubbleAgent.step_option`)."""
RING_REACH = 6.0
"""Friends within this many inches of the asset count as its ring (tactics.md ``protected_bubble``)."""


CLOSING_TURNS = 1
"""Turns before the last in which a full bubble steps forward even into the enemy's charge reach."""
BUBBLE_MARCH = 2.0
"""The bubble's longest forward step, in multiples of its slowest member's move (its M; flyers 10", CORE.MOVE.FLY):
a march (CORE.MOVE.MARCH, 2 M), tried before the single moves. Measured (against ``random``, seeds 0-59): a bubble
that only advanced M a turn, after the turns it takes to close, ended the game in its own half (42 wins); marching, 44."""
RING_SAFE_DANGER = 0.0
"""Most :meth:`agents.base.ScriptedAgent.danger` a ring unit may stand in after a forward step into the
enemy's charge reach (:meth:`ProtectedBubbleAgent.ring_unbeaten`): 0, no enemy that could charge it
expects to win. Measured against ``random``: stepping into reach lifted the wins of seeds 0-59 from 45 to
49; with the move check's limit (DANGER_LIMIT, 1.0) instead, shooters in the ring's front walked into
charges that broke them (seeds 5 and 9 lost their wins, 15 of seeds 0-19, measured with the ring's
charges freed as well); with 0, 16."""


class ProtectedBubbleAgent(TacticalAgent):
    """``protected_bubble`` (tactics.md §4.4): the key piece ringed on every side, the ring moving with it.

    Deployment: :func:`tactics.deployment.protected_bubble_template` (on a
    table already set up, the ring is read off the units standing round the
    asset). Each movement phase the bubble moves first, judged by the
    asset's ring coverage (:func:`tactics.manoeuvres.ring_coverage`) at
    each option's landing (:func:`agents.steering.landing`), one move per
    unit: a full ring (>= RING_FULL degrees) steps as one (:meth:`plan_step`:
    every member shifted by the same step, marching while it can, forward
    while no enemy could charge it or none that could would beat the ring
    unit it charged, else sideways), its units facing the enemy
    (:meth:`face_in_ring`), the asset taking the best-covered spot in reach
    (:meth:`pocket_move`). A ring that is not full closes up on posts
    derived from the units' real footprints (:meth:`post_move`,
    :func:`tactics.manoeuvres.ring_posts`: the front unit clears the way,
    the asset comes level with the side units, they turn in on its flanks)
    when the asset deployed level with its side units (a shallow front
    unit); with the asset in the back row behind deeper blocks, where the
    front unit would have to step clear and come back (a turn lost: in
    play that closed the ring later), the asset moves up first, to the
    spot its ring closes best round (:meth:`closed_coverage`), and the
    ring units make the moves that add the most coverage
    (:meth:`close_ring`). Line units within HELPER_REACH help close gaps.
    Ring units never turn their rear to the enemy. Swarms screen the
    asset from the nearest enemy missile unit (``swarm_screen``). The rest
    of the army advances beside the bubble and engages; fast units flank.
    In the game's last turn the units outside the bubble take the moves
    that hold the most table quarters (:meth:`quarter_move`).
    """

    name = "protected_bubble"
    flank_groups = frozenset({LEFT, RIGHT})
    engage_turn = 1
    RING = ("ring_front", "ring_left", "ring_right", "ring_rear")
    posts = True
    """Whether a ring that is not full closes on :meth:`post_move`'s posts (set by :meth:`make_plan`)."""

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The bubble template in the middle of the zone (a ring that closes in play: in the middle of the own half
        whose no-man's land hampers an advance least, :func:`tactics.deployment.open_half`); on a table already
        set up, the ring as it stands."""
        army = self.army(battle)
        plan = protected_bubble_template(army, battle.state.table_w)
        asset = next((uid for uid, g in plan.groups.items() if g == "asset"), None)
        self.posts = asset is None or plan.targets[asset].row != BACK
        if not self.posts and battle.state.stage == "deploy":
            half = open_half(battle, self.side)
            if half is not None:
                w = battle.state.table_w
                plan = protected_bubble_template(army, w, w / 4 if half == LEFT else 3 * w / 4)
        if battle.state.stage != "deploy":
            self.posts = True
            self.ring_as_placed(plan, army)
        return plan

    def ring_as_placed(self, plan: DeploymentPlan, army: list[UnitState]) -> None:
        """Name the ring after the units standing round the asset: the nearest in front, left, right and behind it."""
        asset = next((u for u in army if plan.groups.get(u.uid) == "asset" and u.alive), None)
        if asset is None:
            return
        for uid, group in list(plan.groups.items()):
            if group in self.RING:
                plan.groups[uid] = "line"
        names = {"front": "ring_front", "left": "ring_left", "right": "ring_right", "rear": "ring_rear"}
        best: dict[str, tuple[float, int]] = {}
        for u in army:
            if u.uid == asset.uid or u.character or not u.alive or space.unit_distance(asset, u) > RING_REACH:
                continue
            arc = mv.arc_of_point(asset, u.x, u.y)
            if arc in names and (arc not in best or space.unit_distance(asset, u) < best[arc][0]):
                best[arc] = (space.unit_distance(asset, u), u.uid)
        for arc, (_, uid) in best.items():
            plan.groups[uid] = names[arc]

    def asset(self, battle: Battle) -> UnitState | None:
        """The protected unit, if still on the table."""
        for u in self.army(battle):
            if self.group(u) == "asset" and u.alive:
                return u
        return None

    ORDER = ("ring_front", "asset", "ring_left", "ring_right", "ring_rear")
    """The order the bubble closes up in: the front unit first clears (or closes) the asset's front, the asset
    comes level with the side units, then they close in on it (a step goes in its own order, see
    :meth:`rigid_step`)."""

    def choose_move(self, battle: Battle, legal: list[Action]) -> Action:
        """The bubble first (:attr:`ORDER`, the asset first when it moves up into its pocket), then the others
        (the base order)."""
        options = move_options(legal)
        key = (battle.state.turn, battle.state.active)
        if self._step_key != key:
            self._step_key, self._step = key, self.plan_step(battle, options)
        order = self.ORDER if self.posts else ("asset",) + tuple(g for g in self.ORDER if g != "asset")
        for group in order:
            for uid, opts in sorted(options.items()):
                u = battle.unit(uid)
                if self.group(u) != group:
                    continue
                opt = self.move_option(battle, u, opts)
                if opt is not None and opt in opts:
                    return opts[opt]
        rest = [a for a in legal if not (a.kind == "move" and self.group(battle.unit(a.unit)) in self.ORDER)]
        return super().choose_move(battle, rest) if rest else END_PHASE

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """A full ring steps forward together, else the ring closes round the asset; swarms screen; others as the tactical agents."""
        group = self.group(u)
        if group == "asset" or group in self.RING:
            asset = self.asset(battle)
            if asset is None:
                return self.engage(battle, u, options) if group in self.RING else None
            if self._step:
                return self.rigid_step(battle, u, options)
            if self.posts and mv.ring_coverage(battle, asset) < RING_FULL:
                return self.post_move(battle, u, asset, options)
            if u is asset:
                return self.pocket_move(battle, u, options)
            return self.face_in_ring(battle, u, asset, options) or self.close_ring(battle, u, asset, options)
        if is_swarm(u):
            return self.screen_move(battle, u, options)
        asset = self.asset(battle)
        if (asset is not None and group == "line" and not self._step
                and space.unit_distance(asset, u) <= HELPER_REACH and mv.ring_coverage(battle, asset) < RING_FULL):
            option = self.close_ring(battle, u, asset, options)
            if option is not None:
                return option
        option = super().move_option(battle, u, options)
        if option is not None and asset is not None and not self.keeps_ring(battle, u, asset, option):
            option = None
        if battle.state.turn >= battle.state.max_turns:
            return self.quarter_move(battle, u, options, option)
        return option

    def quarter_move(self, battle: Battle, u: UnitState, options: Collection[str], planned: str | None) -> str | None:
        """In the game's last turn (CORE.GAME.LENGTH), ``planned`` (None: stay) unless another move, or
        staying, leaves more table quarters held (CORE.VP.QUARTERS, 100 VP each:
        :func:`tactics.manoeuvres.quarter_balance` with ``u`` at the move's landing); the first best such
        move, options in name order. Kills are made by then: what is left to score is where units stand
        (measured against ``random``: one more win in seeds 0-59, a draw by 8 VP turned by a quarter)."""
        env = surroundings(battle, u)

        def balance(option: str | None) -> int:
            moved = {u.uid: landing(battle, u, option, env)} if option is not None else None
            return mv.quarter_balance(battle, self.side, moved)

        best, best_balance = planned, balance(planned)
        for option in [None, *sorted(o for o in options if not (o.startswith("reform") or o in ("join", "leave")))]:
            held = balance(option)
            if held > best_balance:
                best, best_balance = option, held
        return best

    @staticmethod
    def keeps_ring(battle: Battle, u: UnitState, asset: UnitState, option: str) -> bool:
        """Whether ``u``'s move leaves a full ring (>= RING_FULL degrees) full: a unit standing within
        RING_REACH of the asset is part of its cover, and does not walk out of a full ring."""
        if space.unit_distance(asset, u) > RING_REACH:
            return True
        if mv.ring_coverage(battle, asset) < RING_FULL:
            return True
        return mv.ring_coverage(battle, asset, moved={u.uid: landing(battle, u, option)}) >= RING_FULL

    def plan_step(self, battle: Battle, options: dict[int, dict[str, Action]]) -> dict[int, str]:
        """The bubble's step this movement phase: a move option per member, or {} to close the ring instead.

        Only a full ring (>= RING_FULL degrees) steps, never back towards its own edge (a unit
        charged there would flee off the table); forward only where no enemy could charge a member
        afterwards (:meth:`reach_margin`) or none that could expects to beat the ring unit it would
        charge (:meth:`ring_unbeaten`), sideways only where no enemy could charge or the nearest
        gets no nearer to charging one: the ring does not walk into charges it would lose. Steps are
        tried in turn: towards the enemy's edge by a march (BUBBLE_MARCH times the slowest member's
        move, :func:`env.rules.movement.normal_move_allowance`), its whole move, three quarters of it (a turn's move), half of it, then
        half of it to either side, away from the nearest enemy first. Each is played out on one
        copy of the battle (moves roll no dice): the members move front first along the step,
        each taking the option whose landing (:func:`agents.steering.landing`) comes closest to
        its pose shifted by the step. The first step after which the ring is still full (with
        RING_MARGIN to spare) is taken; its order is kept in ``_step_order``.
        """
        asset = self.asset(battle)
        if asset is None or asset.uid not in options or mv.ring_coverage(battle, asset) < RING_FULL:
            return {}
        members = [m for m in self.army(battle) if self.group(m) in self.ORDER and m.alive and m.uid in options]
        slowest = min(normal_move_allowance(m) for m in members)
        ahead = enemy_edge_sign(asset.side)
        enemy = min(self.enemies(battle), key=lambda e: (space.unit_distance(asset, e), e.uid), default=None)
        away = -1.0 if enemy is not None and enemy.x > asset.x else 1.0
        steps = [(0.0, ahead, BUBBLE_MARCH * slowest), (0.0, ahead, slowest), (0.0, ahead, 0.75 * slowest),
                 (0.0, ahead, slowest / 2), (away, 0.0, slowest / 2), (-away, 0.0, slowest / 2)]
        now = self.reach_margin(battle, members)
        for dx, dy, step in steps:
            sim = battle.clone()
            order = sorted(members, key=lambda m: (-(m.x * dx + m.y * dy), m.uid))
            plan: dict[int, str] = {}
            for m in order:
                mu = sim.unit(m.uid)
                legal = {a.option: a for a in sim.legal_actions() if a.kind == "move" and a.unit == m.uid}
                option = self.step_option(sim, mu, legal, (mu.x + dx * step, mu.y + dy * step), m is asset)
                if option is not None:
                    sim.apply(legal[option])
                    plan[m.uid] = option
            if asset.uid not in plan or mv.ring_coverage(sim, sim.unit(asset.uid)) < RING_FULL + RING_MARGIN:
                continue
            margin = self.reach_margin(sim, [sim.unit(m.uid) for m in members])
            ring = [sim.unit(m.uid) for m in members if m is not asset]
            if (margin > 0.0 or (dy == 0.0 and margin >= min(now, 0.0))
                    or (dy != 0.0 and (self.closing_in(battle) or self.ring_unbeaten(sim, ring)))):
                self._step_order = [m.uid for m in order if m.uid in plan]
                return plan
        return {}

    def ring_unbeaten(self, battle: Battle, ring: list[UnitState]) -> bool:
        """Whether no enemy that could charge one of the ``ring`` units next turn expects to win the fight
        (:meth:`agents.base.ScriptedAgent.danger` at most RING_SAFE_DANGER for each): a full ring may then step
        into the enemy's charge reach, the asset still behind it, and its units charge out in turn."""
        return all(self.danger(battle, m) <= RING_SAFE_DANGER for m in ring)

    def reach_margin(self, battle: Battle, members: list[UnitState]) -> float:
        """Inches by which the nearest enemy falls short of charging one of ``members`` (its gap less its
        charge reach, M + 6", CORE.CHARGE.ELIGIBLE); negative when one could charge; inf with no enemy."""
        return min((space.unit_distance(m, e) - charge_reach(e) for m in members for e in self.enemies(battle)
                    if not e.fleeing), default=math.inf)

    @staticmethod
    def step_option(battle: Battle, u: UnitState, options: Collection[str], goal: tuple[float, float],
                    free_facing: bool, floor: float | None = None) -> str | None:
        """The option whose landing comes closest to ``goal`` (a turn away from the unit's facing costs
        1" per 180 degrees unless ``free_facing``), or None when staying put is as close.

        With ``floor`` (inches towards the enemy's edge, as a table y for blue and minus one for red), a
        pose whose centre stays short of it costs FLOOR_PENALTY inches more (the front unit of a
        closing ring must clear the way before it closes up again); unless ``free_facing``, a pose
        facing more than BACK_LIMIT degrees away from the enemy's edge costs BACK_PENALTY more (a
        ring unit never shows the enemy its rear)."""
        env = surroundings(battle, u)
        turn_cost = 0.0 if free_facing else 1.0 / 180.0
        ahead = enemy_edge_sign(u.side)
        forward = enemy_edge_facing(u.side)

        def penalty(end: UnitState) -> float:
            short = FLOOR_PENALTY if floor is not None and ahead * end.y < floor else 0.0
            back = BACK_PENALTY if not free_facing and abs(angle_diff(end.facing, forward)) > BACK_LIMIT else 0.0
            return short + back

        best, best_miss = None, math.hypot(goal[0] - u.x, goal[1] - u.y) + penalty(u)
        for opt in options:
            if opt.startswith("reform") or opt in ("join", "leave"):
                continue
            end = landing(battle, u, opt, env)
            miss = (math.hypot(end.x - goal[0], end.y - goal[1]) + abs(angle_diff(end.facing, u.facing)) * turn_cost
                    + penalty(end))
            if miss < best_miss - 0.1:
                best, best_miss = opt, miss
        return best

    def post_move(self, battle: Battle, u: UnitState, asset: UnitState, options: Collection[str]) -> str | None:
        """A bubble member's move towards its post round the asset (:func:`tactics.manoeuvres.ring_posts`).

        The move whose landing comes nearest the post (:meth:`step_option`); the front unit does not
        stay short of its post by more than POST_SLACK inches (it steps ahead first and closes back
        onto the asset later, so that the side units can come level with the asset). A side or rear
        unit that cannot get nearer its post makes the move that adds the most coverage (:meth:`close_ring`).
        """
        ring = {g[len("ring_"):]: m for m in self.army(battle)
                if (g := self.group(m)) in self.RING and m.alive and not m.fleeing}
        key = "asset" if u.uid == asset.uid else self.group(u)[len("ring_"):]
        posts = mv.ring_posts(asset, ring)
        if key not in posts:
            return None
        goal = posts[key]
        ahead = enemy_edge_sign(u.side)
        floor = ahead * goal[1] - POST_SLACK if key == "front" else None
        option = self.step_option(battle, u, options, goal, u is asset, floor)
        if option is None and key not in ("asset", "front"):
            option = self.close_ring(battle, u, asset, options)
        return option

    def rigid_step(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``u``'s part of the bubble's step, once every member before it in the step's order has moved."""
        option = self._step.get(u.uid)
        if option is None or option not in options:
            return None
        for uid in self._step_order:
            if uid == u.uid:
                return option
            if can_move(battle, battle.unit(uid)) and self._step.get(uid) in move_options(battle.legal_actions()).get(uid, {}):
                return None
        return option

    @staticmethod
    def face_in_ring(battle: Battle, u: UnitState, asset: UnitState, options: Collection[str]) -> str | None:
        """A full ring's unit turned away from the nearest enemy (a sidestep leaves it so) reforms to
        face it (:func:`agents.steering.face_threat`) when the ring stays full."""
        option = face_threat(battle, u, options)
        if option is None:
            return None
        end = landing(battle, u, option)
        return option if mv.ring_coverage(battle, asset, moved={u.uid: end}) >= RING_FULL else None

    def close_ring(self, battle: Battle, u: UnitState, asset: UnitState, options: Collection[str]) -> str | None:
        """The ring unit's move that leaves the asset best covered (staying put unless a move covers
        RING_MIN_GAIN degrees more), never one that turns it to face back (BACK_LIMIT)."""
        env = surroundings(battle, u)
        forward = enemy_edge_facing(u.side)
        best, best_cov = None, mv.ring_coverage(battle, asset) + RING_MIN_GAIN
        for opt in options:
            if opt == "reform_face":
                continue
            end = landing(battle, u, opt, env)
            if abs(angle_diff(end.facing, forward)) > BACK_LIMIT:
                continue
            cov = mv.ring_coverage(battle, asset, moved={u.uid: end})
            if cov > best_cov:
                best, best_cov = opt, cov
        return best

    def pocket_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The asset's move with the best ring round it where it lands (tactics.md ``protected_bubble``).

        Every option (and staying put) is scored by :func:`tactics.manoeuvres.ring_coverage` at the
        pose the move ends in (:func:`agents.steering.landing`): a full ring (>= RING_FULL degrees)
        first, then (with a full ring) a move of at least POCKET_STEP inches, then more coverage,
        then fewer inches from the front ring unit. While the ring is not full the coverage is the one
        left once the ring units have closed round the landing (:meth:`closed_coverage`), not the one
        at the landing itself: the asset picks the spot its ring can close on this turn.
        """
        env = surroundings(battle, u)
        front = next((f for f in self.army(battle) if self.group(f) == "ring_front" and f.alive and not f.fleeing), None)
        closing = mv.ring_coverage(battle, u) < RING_FULL

        def score(end: UnitState, opt: str | None) -> tuple[bool, bool, float, float]:
            cov = self.closed_coverage(battle, u, opt) if closing else mv.ring_coverage(battle, end)
            step = math.hypot(end.x - u.x, end.y - u.y)
            gap = math.hypot(end.x - front.x, end.y - front.y) if front is not None else 0.0
            full = cov >= RING_FULL
            return full, full and step >= POCKET_STEP, cov, -gap

        best, best_key = None, score(u, None)
        for opt in options:
            if opt.startswith("reform") or opt in ("join", "leave"):
                continue
            key = score(landing(battle, u, opt, env), opt)
            if key > best_key:
                best, best_key = opt, key
        return best

    def closed_coverage(self, battle: Battle, asset: UnitState, option: str | None) -> float:
        """Degrees of ring coverage round ``asset`` once it has taken ``option`` (None: stays put) and its
        ring units have closed round it as in play (:meth:`face_in_ring`, :meth:`close_ring`, in
        :attr:`ORDER`, one move each), played out on ``battle.clone()`` (moves roll no dice)."""
        sim = battle.clone()
        if option is not None:
            act = next((a for a in sim.legal_actions() if a.kind == "move" and a.unit == asset.uid and a.option == option), None)
            if act is None:
                return mv.ring_coverage(battle, asset)
            sim.apply(act)
        ring = [g for g in self.ORDER if g != "asset"]
        while True:
            options = move_options([a for a in sim.legal_actions() if a.kind == "move"])
            move = None
            for group in ring:
                for uid, opts in sorted(options.items()):
                    m, a = sim.unit(uid), sim.unit(asset.uid)
                    if self.group(m) != group:
                        continue
                    opt = self.face_in_ring(sim, m, a, opts) or self.close_ring(sim, m, a, opts)
                    if opt is not None and opt in opts:
                        move = opts[opt]
                        break
                if move is not None:
                    break
            if move is None:
                return mv.ring_coverage(sim, sim.unit(asset.uid))
            sim.apply(move)

    def screen_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``swarm_screen``: stand between the asset and the nearest enemy missile unit."""
        asset = self.asset(battle)
        shooters = [e for e in self.enemies(battle) if e.missile is not None]
        if asset is None or not shooters:
            return super().move_option(battle, u, options)
        s = min(shooters, key=lambda e: (space.unit_distance(asset, e), e.uid))
        return self.toward(battle, u, mv.screen_point(asset, (s.x, s.y), u), options, "march")

    def should_flee(self, battle: Battle, t: UnitState, c: UnitState, facing: str) -> bool:
        """A ring unit holds its place round a living asset (a fleeing one opens the ring); others as the base agent."""
        if self.group(t) in self.RING and self.asset(battle) is not None:
            return False
        return super().should_flee(battle, t, c, facing)

    def consequences_acceptable(self, battle: Battle, c: UnitState, t: UnitState) -> bool:
        """Ring units also stay home unless the charge is safe (the ring is the asset's shield). In the game's
        last turn (:meth:`last_turn`) no enemy turn follows: every charge the base rule allows is made."""
        if self.last_turn(battle):
            return True
        if self.group(c) in self.RING and self.asset(battle) is not None and space.unit_distance(c, t) > CLOSE / 2:
            return False
        return super().consequences_acceptable(battle, c, t)

    @staticmethod
    def closing_in(battle: Battle) -> bool:
        """Whether the bubble steps forward into the enemy's charge reach: in the second player's last
        CLOSING_TURNS turns before the last, so that its units can charge in the game's last player turn
        (:meth:`last_turn`; a draw needs the enemy destroyed). The first player keeps its distance: its
        ring never charges out (the enemy's last turn follows)."""
        s = battle.state
        return s.active != s.first_player and s.turn >= s.max_turns - CLOSING_TURNS

    @staticmethod
    def last_turn(battle: Battle) -> bool:
        """Whether this is the game's last player turn (CORE.GAME.LENGTH: the last game turn, the second
        player's): no enemy turn follows, so an opened ring costs nothing and only what is destroyed now counts."""
        s = battle.state
        return s.turn >= s.max_turns and s.active != s.first_player


# ============================================================================= manoeuvre agents
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


# ============================================================================= the open-loop baseline
class OpenLoopAgent(ScriptedAgent):
    """``open_loop``: orders by turn number only, ignoring the enemy — a baseline that loses to ``line_advance``.

    Deploys the battle line; every unit marches straight ahead in turns 1–2
    and advances straight ahead afterwards (never wheeling towards anyone);
    from turn 3 it declares the first legal charge, whatever it meets;
    charged units always hold; shooters fire at the first legal target;
    winners always pursue.
    """

    name = "open_loop"
    CHARGE_TURN = 3
    MARCH_TURNS = 2

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The battle line."""
        return line_template(self.army(battle), battle.state.table_w)

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """March straight ahead in turns 1–2, advance straight ahead later."""
        if battle.state.turn <= self.MARCH_TURNS and "march" in options:
            return "march"
        return "advance" if "advance" in options else None

    def choose_move(self, battle: Battle, legal: list[Action]) -> Action:
        """Each unit in uid order takes its scheduled move (no dead-zone check)."""
        options = move_options(legal)
        for uid in sorted(options):
            option = self.move_option(battle, battle.unit(uid), options[uid])
            if option is not None and option in options[uid]:
                return options[uid][option]
        return END_PHASE

    def choose_charge(self, battle: Battle, legal: list[Action]) -> Action:
        """From turn 3 the first legal charge (lowest charger, then target uid), else none."""
        if battle.state.turn < self.CHARGE_TURN:
            return END_PHASE
        charges = sorted((a for a in legal if a.kind == "charge"), key=lambda a: (a.unit, a.target))
        return charges[0] if charges else END_PHASE

    def choose_reaction(self, battle: Battle, legal: list[Action]) -> Action:
        """Always hold (the only reaction that needs no look at the charger)."""
        return next((a for a in legal if a.option == "hold"), legal[0] if legal else END_PHASE)

    def choose_shot(self, battle: Battle, legal: list[Action]) -> Action:
        """The first legal shot."""
        shots = sorted((a for a in legal if a.kind == "shoot"), key=lambda a: (a.unit, a.target is None, a.target or 0))
        return shots[0] if shots else END_PHASE


TACTICAL_AGENTS: dict[str, type[ScriptedAgent]] = {
    cls.name: cls
    for cls in (
        FlankTeethAgent,
        WeakenedFlankAgent,
        AbandonedFlankAgent,
        ShootingLinesAgent,
        SacrificeForDeploymentAgent,
        ProtectedBubbleAgent,
        BaitAndFlankAgent,
        ControlZonesAgent,
        OpenLoopAgent,
    )
}
"""Registry name -> agent class, in display order."""

__all__ = [
    "AbandonedFlankAgent",
    "BaitAndFlankAgent",
    "ControlZonesAgent",
    "FlankTeethAgent",
    "OpenLoopAgent",
    "ProtectedBubbleAgent",
    "SacrificeForDeploymentAgent",
    "ShootingLinesAgent",
    "TACTICAL_AGENTS",
    "TacticalAgent",
    "WeakenedFlankAgent",
]
