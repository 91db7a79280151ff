"""The shared manoeuvres of the tactical agents: :class:`TacticalAgent` and its tuning constants.

Every tactical agent (:mod:`agents.tactical`) is a :class:`TacticalAgent`; the
shared decision rules (charge scoring, reactions, the dead-zone check on
moves, shooting) come from :class:`agents.base.ScriptedAgent`, and the
manoeuvres every tactical agent shares from :class:`TacticalAgent`:

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
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection
from typing import TYPE_CHECKING

from battleline.agents import estimates
from battleline.agents.base import (
    CLOSE,
    LIKELY_BREAK,
    MIN_REACH_FLANK,
    ChargeOption,
    ScriptedAgent,
    effort,
    room_to_flee,
)
from battleline.agents.steering import face_threat, moved_copy, predict_pose, steer
from battleline.env.rules import psychology, space
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.movement import normal_move_allowance
from battleline.env.rules.state import UnitState
from battleline.tactics import manoeuvres as mv
from battleline.tactics.deployment_plan import CENTRE, is_flyer, is_mobile, own_x

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
