"""The agent protocol and the base class of the scripted agents.

An agent answers the engine's decisions (DESIGN.md "Agents, tactics,
training"): ``reset(battle, side)`` once per battle, then ``act(battle)``
whenever ``battle.pending.player`` is its side, returning one element of
``battle.legal_actions()``. Scripted agents read the engine state directly and
never change it.

:class:`ScriptedAgent` answers every kind of decision with shared rules and
leaves two things to its subclasses: the deployment template
(:meth:`ScriptedAgent.make_plan`) and the manoeuvre of each unit
(:meth:`ScriptedAgent.move_option`). The shared rules:

* **deploy** — the plan's units in the plan's order, each in the legal slot
  nearest its target (``tactics.deployment``);
* **charge** — :meth:`ScriptedAgent.charge_score`: charge when the expected
  first round favours the charger or the target is the weaker fighter, never
  into the front of a clearly stronger unit, and only with a fair chance to
  reach; fleeing units are run down when they can be caught;
* **react** — flee with a cheap fast unit charged by a much stronger one
  (when there is room to run), stand and shoot when allowed, otherwise hold;
* **move** — each unit's :meth:`ScriptedAgent.move_option`, units nearest the
  enemy first, replaced by a shorter move, a halt or a step back when it
  would end where an enemy expects to win by charging it (the "dead zone");
  the phase ends when no unit wants to move (the danger forecast: :class:`agents.dangers.DangerForecast`, on the
  charge geometry of :mod:`agents.threats`);
* **shoot** — the volley worth most (points per model × expected kills);
* **pursue** — always.
"""

from __future__ import annotations

import operator
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from battleline.agents import estimates, magic_policy
from battleline.agents.dangers import BREAK_WEIGHT, DangerForecast, _Decision
from battleline.agents.dangers import DANGER_LIMIT as DANGER_LIMIT  # re-exported: the tactical agents import it from here
from battleline.agents.steering import face_threat, moved_copy, steer
from battleline.agents.threats import PoolAnswers, _place_key, charge_arc, effort, gap, least_index, nearest_gaps, pool_answers
from battleline.agents.threats import charge_threat as charge_threat  # re-exported: agents.pair_features imports it from here
from battleline.env.rules import geometry as geo
from battleline.env.rules import shooting, space
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.charge_spots import contact_placement
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment_plan import CENTRE, DeploymentPlan, is_fast
from battleline.tactics.deployment_slots import choose_slot
from battleline.tactics.threat_zones import engaged_uids

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


@runtime_checkable
class Agent(Protocol):
    """Anything that can play a side of a battle.

    Attributes:
        name: the registry name ("random", "line_advance", ...).
    """

    name: str

    def reset(self, battle: Battle, side: int) -> None:
        """Prepare to play ``side`` (0 blue, 1 red) in ``battle``; called once before the first decision."""
        ...

    def act(self, battle: Battle) -> Action:
        """Answer ``battle.pending`` with an element of ``battle.legal_actions()``."""
        ...


# Charge thresholds (inches of combat result, probabilities).
FAVOURABLE_DIFF = 1.0
"""Expected combat-result lead that makes a charge favourable."""
CLEARLY_STRONGER = -2.0
"""Expected combat result at or below which a target's front is never charged."""
MIN_REACH = 0.5
"""Least chance of reaching the target to declare a frontal charge."""
MIN_REACH_FLANK = 0.35
"""Least chance of reaching the target for a flank or rear charge."""
MIN_CATCH = 0.35
"""Least chance of catching a fleeing target to charge it."""
# BREAK_WEIGHT, the combat-result value of breaking the enemy, is agents.dangers' (the danger forecast weighs it too).
GRIND_WEIGHT = 0.5
"""Weight of a later round's expected result in a charge's score (the fight goes on if the enemy holds)."""
GRIND_LIMIT = CLEARLY_STRONGER
"""Expected later-round result at or below which a unit's front is not charged (it would grind the charger down)."""
LIKELY_BREAK = 0.5
"""First-round break chance that justifies charging a unit which would win the later rounds."""
CATCH_VALUE = 0.1
"""Charge score per point of a fleeing target (a fleer caught by a charge is destroyed)."""
EXPOSURE_WEIGHT = 0.5
"""Weight, in a charge's score, of the danger the charger will stand in after contact."""
TIE_BREAK = 1e-3
"""Charge score per point of the target, to prefer the more valuable of two equal charges."""
MUCH_STRONGER = 3.0
"""Expected combat result of a charger that makes a cheap fast unit flee."""
CLOSE = 12.0
"""Inches: an enemy nearer than this is close (no marching towards it)."""
FOLLOW_GAP = 2.0
"""Inches a character keeps behind the unit it follows."""


@dataclass(frozen=True)
class ChargeOption:
    """One charge a scripted agent weighs (:meth:`ScriptedAgent.charge_allowed`).

    Attributes:
        charger: the unit that would charge; target: the unit charged.
        facing: the arc of the target it would hit, ``"front"``, ``"flank"`` or ``"rear"``
            (CORE.CHARGE.ARC).
        first: the estimated first round of the combat (the charger charging).
        later: the estimated rounds after it (nobody charging).
        p_reach: probability (0..1) that the charge roll covers the distance.
    """

    charger: UnitState
    target: UnitState
    facing: str
    first: estimates.CombatEstimate
    later: estimates.CombatEstimate
    p_reach: float


_HANDLERS = {"deploy": "choose_deploy", "charge": "choose_charge", "react": "choose_reaction", "move": "choose_move",
             "shoot": "choose_shot", "pursue": "choose_pursuit"}
"""The :class:`ScriptedAgent` method that answers each kind of decision (``cast`` and ``dispel``: :mod:`magic_policy`)."""


class ScriptedAgent(DangerForecast):
    """Base class of the scripted agents: shared decision rules, per-agent template and manoeuvres.

    Subclasses set :attr:`name` and implement :meth:`make_plan` and
    :meth:`move_option`; they may refine :meth:`charge_allowed`.

    Args:
        seed: accepted like every agent's; the scripted agents are
            deterministic and do not use it.
    """

    name = "scripted"
    keep_decisions = True
    """Whether :meth:`act` keeps answers for the decision it works out (False: every answer afresh; the same choices)."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.side = 0
        self.plan: DeploymentPlan | None = None

    # ------------------------------------------------------------------ protocol
    def reset(self, battle: Battle, side: int) -> None:
        """Start a new battle on ``side``; the plan is made at the first decision."""
        self.side = side
        self.plan = None
        self._sighted: dict[int, int] = {}

    def act(self, battle: Battle) -> Action:
        """Answer the pending decision with one of the legal actions.

        While it decides, the battle holds still: :meth:`danger`'s answers are kept for the decision (see
        :meth:`_kept_danger`) and dropped when it returns (unless :attr:`keep_decisions` is False)."""
        if not self.keep_decisions:
            return self._act(battle)
        outer = self.__dict__.get("_decision")
        self._decision = _Decision()
        try:
            return self._act(battle)
        finally:
            self._decision = outer

    def _act(self, battle: Battle) -> Action:
        """:meth:`act`'s choice."""
        legal = battle.legal_actions()
        if self.plan is None:
            self.plan = self.make_plan(battle)
        kind = battle.pending.kind
        name = _HANDLERS.get(kind)
        if name is not None:
            action = getattr(self, name)(battle, legal)
        elif kind == "cast":
            action = magic_policy.choose_cast(battle, legal)
        elif kind == "dispel":
            action = magic_policy.choose_dispel(battle, legal)
        else:
            action = END_PHASE
        # The handlers choose from ``legal``; the check keeps the protocol's promise regardless. An element of
        # ``legal`` itself is found by identity first (a C-level scan, no Action compared field by field).
        if any(map(operator.is_, legal, repeat(action))):
            return action
        return action if action in legal else END_PHASE

    def acceptable_actions(self, battle: Battle) -> list[Action]:
        """The orders this agent would give next, in any order of its units (a label set for imitation).

        The first element is :meth:`act`'s choice. In the movement, shooting and
        charge phases, when the subclass keeps the shared chooser of that phase,
        every other unit's own choice is added (the move it wants, its best volley,
        its best charge): the agent gives each of them during the phase in an order
        only its unit sort decides, so an imitator that gives them in another order
        plays the same phase. Other decisions have the single answer of :meth:`act`.

        Returns:
            Distinct elements of ``battle.legal_actions()``, :meth:`act`'s choice first.
        """
        first = self.act(battle)
        legal = battle.legal_actions()
        kind, cls = battle.pending.kind, type(self)
        extra: list[Action] = []
        if kind == "move" and cls.choose_move is ScriptedAgent.choose_move:
            extra = list(self.unit_moves(battle, legal))
        elif kind == "shoot" and cls.choose_shot is ScriptedAgent.choose_shot:
            extra = best_per_unit(self.valued_shots(battle, legal))
        elif kind == "charge" and cls.choose_charge is ScriptedAgent.choose_charge:
            extra = best_per_unit(self.scored_charges(battle, legal))
        return [first] + [a for a in dict.fromkeys(extra) if a != first and a in legal]

    # ------------------------------------------------------------------ subclass hooks
    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The deployment plan for this battle (a ``tactics.deployment`` template)."""
        raise NotImplementedError

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The move option for ``u`` (one of ``options``), or None to leave it where it is."""
        raise NotImplementedError

    # ------------------------------------------------------------------ army helpers
    def army(self, battle: Battle) -> list[UnitState]:
        """All units of this agent's side (deployed or not)."""
        return [u for u in battle.state.units if u.side == self.side]

    def group(self, u: UnitState) -> str:
        """The unit's group in the plan ("support" if the plan does not name it)."""
        return self.plan.groups.get(u.uid, "support") if self.plan is not None else "support"

    def enemies(self, battle: Battle, fleeing: bool = False) -> list[UnitState]:
        """Enemy units on the table; fleeing ones only if ``fleeing``."""
        return [e for e in space.alive_units(battle.state, 1 - self.side) if fleeing or not e.fleeing]

    def enemy_pool(self, battle: Battle) -> tuple[list[UnitState], PoolAnswers]:
        """The enemies :meth:`nearest_enemy`, :meth:`target_for` and the movement order choose from (those not
        fleeing, else the fleeing ones), with the answers kept for that pool (:func:`pool_answers`); read once per
        decision while :meth:`act` works it out. The list is shared: read it, never change it."""
        decision = self.__dict__.get("_decision")
        if decision is not None and decision.pool is not None:
            return decision.pool
        pool = self.enemies(battle) or self.enemies(battle, fleeing=True)
        found = (pool, pool_answers(pool))
        if decision is not None:
            decision.pool = found
        return found

    def _pool_pick(self, battle: Battle, u: UnitState, answers: str,
                   measure: Callable[[UnitState, UnitState], float]) -> UnitState | None:
        """The enemy of the pool (:meth:`enemy_pool`) with the least ``measure(u, enemy)``, ties to the lower uid;
        kept in the pool's ``answers`` store ("nearest" or "target") per ``u``'s place."""
        pool, kept = self.enemy_pool(battle)
        if not pool:
            return None
        store = getattr(kept, answers)
        key = _place_key(u)
        i = store.get(key)
        if i is None:
            i = store[key] = least_index(u, pool, measure, kept.radii_of(pool))
        return pool[i]

    def nearest_enemy(self, battle: Battle, u: UnitState) -> UnitState | None:
        """The enemy nearest ``u`` (edge to edge; ties: the lower uid), non-fleeing ones preferred; kept per the
        enemies' and ``u``'s places (:meth:`enemy_pool`)."""
        return self._pool_pick(battle, u, "nearest", gap)

    def target_for(self, battle: Battle, u: UnitState) -> UnitState | None:
        """The enemy ``u`` can reach with least effort: distance plus the wheel needed to face it (W·θ).

        Preferring enemies ahead keeps a line from zig-zagging after whichever
        enemy happens to be nearest; non-fleeing enemies come first; ties go to the lower uid. Kept per the
        enemies' and ``u``'s places (:meth:`enemy_pool`; :func:`effort` reads nothing else).
        """
        return self._pool_pick(battle, u, "target", effort)

    def engaged_with_friend(self, battle: Battle, enemy: UnitState) -> bool:
        """Whether a unit of ours is in combat with ``enemy``."""
        for e in battle.state.engagements:
            other = e.attacker if e.defender == enemy.uid else e.defender if e.attacker == enemy.uid else None
            if other is not None and battle.unit(other).side == self.side:
                return True
        return False

    def ally_support(self, battle: Battle, enemy: UnitState) -> float:
        """Chance that a friend fights ``enemy`` this turn: 1 if one is in combat with it, else the
        best chance that one of our charges declared on it this phase reaches it."""
        if self.engaged_with_friend(battle, enemy):
            return 1.0
        chances = [
            estimates.charge_chance(battle.unit(ch["charger"]), ch["start_distance"])
            for ch in battle.state.queue.get("charges", [])
            if ch["target"] == enemy.uid and battle.unit(ch["charger"]).side == self.side
        ]
        return max(chances, default=0.0)

    # ------------------------------------------------------------------ deploy
    def choose_deploy(self, battle: Battle, legal: list[Action]) -> Action:
        """Deploy the plan's next unit in the legal slot nearest its target that leaves the others room."""
        slots: dict[int, list[int]] = defaultdict(list)
        for a in legal:
            if a.kind == "deploy":
                slots[a.unit].append(int(a.option))
        if not slots:
            return END_PHASE
        plan = self.plan or DeploymentPlan()
        uid = next((i for i in plan.order if i in slots), min(slots))
        return Action("deploy", uid, None, str(choose_slot(battle, uid, slots, plan.targets)))

    # ------------------------------------------------------------------ charge
    def choose_charge(self, battle: Battle, legal: list[Action]) -> Action:
        """Declare the best-scoring charge, or end the declarations when none is worth it."""
        scored = self.scored_charges(battle, legal)
        return max(scored, key=lambda a: scored[a]) if scored else END_PHASE

    def scored_charges(self, battle: Battle, legal: list[Action]) -> dict[Action, float]:
        """Every legal charge worth declaring with its :meth:`charge_score` (in ``legal``'s order)."""
        scored: dict[Action, float] = {}
        for a in legal:
            if a.kind == "charge":
                score = self.charge_score(battle, battle.unit(a.unit), battle.unit(a.target))
                if score is not None:
                    scored[a] = score
        return scored

    def charge_score(self, battle: Battle, c: UnitState, t: UnitState) -> float | None:
        """How good charging ``t`` with ``c`` is, or None when the charge should not be made.

        A fleeing target is worth its points times the chance to catch it. For
        others: chance to reach × (expected first-round result + the value of
        breaking the enemy + what the following rounds promise if it holds −
        the danger of where the charger ends up), if :meth:`charge_allowed`
        agrees.
        """
        dist = gap(c, t)
        if t.fleeing:
            p = estimates.catch_fleeing_probability(c, t, dist)
            return p * CATCH_VALUE * t.points if p >= MIN_CATCH else None
        facing = charge_arc(battle, c, t)
        p = estimates.charge_chance(c, dist)
        ally = self.ally_support(battle, t)
        decision = self.__dict__.get("_decision")
        lds = decision.lds if decision is not None else None  # the General's Ld kept while the battle holds still
        first = estimates.estimate_combat(battle, c, t, facing, ally=ally, lds=lds)
        later = estimates.estimate_combat(battle, c, t, facing, charging=False, ally=ally, lds=lds)
        if not self.charge_allowed(battle, ChargeOption(c, t, facing, first, later, p)):
            return None
        sign = 1.0 if first.diff > 0 else -1.0
        holds = 1.0 - first.break_chance if first.diff > 0 else 1.0
        value = first.diff + sign * BREAK_WEIGHT * first.break_chance + holds * GRIND_WEIGHT * later.diff
        return p * (value - EXPOSURE_WEIGHT * self.exposure_after_charge(battle, c, t, facing)) + TIE_BREAK * t.points

    def exposure_after_charge(self, battle: Battle, c: UnitState, t: UnitState, facing: str) -> float:
        """:meth:`danger` where ``c`` will stand once its charge on ``t`` reaches (other enemies' charges next turn)."""
        placed = contact_placement(battle, c, t, facing)
        if placed is None:
            return 0.0
        return self.danger(battle, moved_copy(c, placed[0]), ignore=frozenset({t.uid}))

    def charge_allowed(self, battle: Battle, o: ChargeOption) -> bool:
        """Whether the charge ``o`` may be made (subclasses refine it).

        The line's charge rule: a fair chance to reach, a favourable first round or a weaker target,
        and never the front of a clearly stronger unit (one that wins the first round, or grinds the
        charger down in the rounds after unless it is likely to break at once)."""
        if o.p_reach < (MIN_REACH if o.facing == "front" else MIN_REACH_FLANK):
            return False
        if o.facing == "front":
            if o.first.diff <= CLEARLY_STRONGER:
                return False
            if o.later.diff <= GRIND_LIMIT and o.first.break_chance < LIKELY_BREAK:
                return False
        weaker = o.first.attacker_wounds > o.first.defender_wounds and o.first.diff > CLEARLY_STRONGER
        return o.first.diff >= FAVOURABLE_DIFF or weaker

    # ------------------------------------------------------------------ react
    def choose_reaction(self, battle: Battle, legal: list[Action]) -> Action:
        """Flee with a cheap fast unit from a much stronger charger, else stand and shoot, else hold."""
        options = {a.option: a for a in legal if a.kind == "react"}
        if not options:
            return END_PHASE
        if len(options) == 1:
            return next(iter(options.values()))
        charge = battle.state.queue["charges"][-1]
        t, c = battle.unit(charge["target"]), battle.unit(charge["charger"])
        if "flee" in options and self.should_flee(battle, t, c, charge.get("facing") or "front"):
            return options["flee"]
        return options.get("stand_and_shoot") or options.get("hold") or next(iter(options.values()))

    def should_flee(self, battle: Battle, t: UnitState, c: UnitState, facing: str) -> bool:
        """A cheap fast unit facing a much stronger charger runs, if it will not run off the table."""
        if not is_fast(t) or t.points > c.points:
            return False
        est = estimates.estimate_combat(battle, c, t, facing)
        return est.diff >= MUCH_STRONGER and room_to_flee(battle, t, c)

    # ------------------------------------------------------------------ move
    def choose_move(self, battle: Battle, legal: list[Action]) -> Action:
        """Move the first unit (nearest the enemy first) that wants to move; end the phase when none does."""
        return next(self.unit_moves(battle, legal), END_PHASE)

    def unit_moves(self, battle: Battle, legal: list[Action]) -> Iterator[Action]:
        """The move each unit wants, one per unit, units nearest the enemy first (lazily evaluated)."""
        options: dict[int, dict[str, Action]] = defaultdict(dict)
        for a in legal:
            if a.kind == "move":
                options[a.unit][a.option] = a
        units = [battle.unit(uid) for uid in options]
        if type(self).enemy_distance is ScriptedAgent.enemy_distance:  # the pool of enemies read once
            pool, kept = self.enemy_pool(battle)
            nearest = nearest_gaps(pool, kept)
            units.sort(key=lambda u: (nearest(u), u.uid))
        else:
            units.sort(key=lambda u: (self.enemy_distance(battle, u), u.uid))
        for u in units:
            option = self.move_option(battle, u, options[u.uid])
            if option is not None:
                option = self.safer_option(battle, u, option, options[u.uid])
            if option is not None and option in options[u.uid]:
                yield options[u.uid][option]

    def enemy_distance(self, battle: Battle, u: UnitState) -> float:
        """Edge-to-edge distance from ``u`` to the nearest enemy (inf if none)."""
        e = self.nearest_enemy(battle, u)
        return gap(u, e) if e is not None else float("inf")

    def holds_to_shoot(self, battle: Battle, u: UnitState) -> bool:
        """A foot shooter with a target in range and sight stays put (moving spoils or forbids its shot).

        Whether *some* enemy (not fleeing, not engaged) is in range and sight does not depend on the order they are
        tried in, so the enemy that answered yes for a unit of this uid last time (:attr:`_sighted`, a hint only) is
        tried first: a shooter that holds decision after decision is mostly settled by one sight line. Within
        :meth:`act` the enemies and the engaged units (``tactics.manoeuvres.engaged_uids``: ``psychology.engaged``
        for each) are read once per decision."""
        if u.missile is None or is_fast(u):
            return False
        sighted: dict[int, int] = self.__dict__.setdefault("_sighted", {})
        hint = sighted.get(u.uid)
        decision = self.__dict__.get("_decision")
        if decision is None:
            enemies, engaged = self.enemies(battle), engaged_uids(battle)
        else:  # read once per decision
            if decision.targets is None:
                decision.targets = (self.enemies(battle), engaged_uids(battle))
            enemies, engaged = decision.targets
        if hint is not None:
            for e in enemies:
                if e.uid == hint:
                    if e.uid not in engaged and shooting.in_range_and_sight(battle, u, e):
                        return True
                    break
        for e in enemies:
            if e.uid != hint and e.uid not in engaged and shooting.in_range_and_sight(battle, u, e):
                sighted[u.uid] = e.uid
                return True
        return False

    def advance_on(
        self, battle: Battle, u: UnitState, options: Collection[str], target: UnitState | None = None, pace: str | None = None
    ) -> str | None:
        """Go for ``target`` (default: :meth:`target_for`): march while it is far, advance once it is close."""
        target = target or self.target_for(battle, u)
        if target is None:
            return None
        if pace is None:
            pace = "march" if gap(u, target) > CLOSE else "advance"
        return steer(battle, u, (target.x, target.y), pace, options, approach=True)

    def follow(self, battle: Battle, u: UnitState, options: Collection[str], groups: Collection[str] = (CENTRE,)) -> str | None:
        """Keep a character :data:`FOLLOW_GAP` behind the nearest friendly block of ``groups`` (any block if none)."""
        friends = [f for f in space.alive_units(battle.state, self.side) if not f.character and not f.fleeing]
        blocks = [f for f in friends if self.group(f) in groups] or friends
        if not blocks:
            return self.advance_on(battle, u, options)
        anchor = blocks[least_index(u, blocks, gap)]  # min by (gap, uid), the far ones passed over
        goal = geo.to_world(space.pose(anchor), 0.0, -(anchor.depth / 2 + FOLLOW_GAP + u.depth / 2))
        pace = "march" if gap(u, anchor) > CLOSE else "advance"
        return steer(battle, u, goal, pace, options, approach=False) or face_threat(battle, u, options)

    def flank_attack(self, battle: Battle, u: UnitState, e: UnitState, waypoint: tuple[float, float],
                     options: Collection[str]) -> str | None:
        """Go round ``e``: via ``waypoint`` while still in its front arc, then straight at it from the flank or rear."""
        if charge_arc(battle, u, e) != "front":
            return steer(battle, u, (e.x, e.y), "march", options, approach=True)
        return steer(battle, u, waypoint, "march", options, approach=False) or self.advance_on(battle, u, options, e)

    # ------------------------------------------------------------------ shoot / pursue
    def choose_shot(self, battle: Battle, legal: list[Action]) -> Action:
        """Fire the volley worth most: points per model × expected kills (ties: the lower unit id, then the first
        in ``legal``), as the max of :meth:`valued_shots`.

        With the shared :meth:`valued_shots`, a volley whose :func:`estimates.shot_value_bound` is below the best
        value already found is not valued: it cannot be the best (the bound is never below its value)."""
        if type(self).valued_shots is not ScriptedAgent.valued_shots:
            valued = self.valued_shots(battle, legal)
            return max(valued, key=lambda a: (valued[a], -a.unit)) if valued else END_PHASE
        shots = list(dict.fromkeys(a for a in legal if a.kind == "shoot" and a.target is not None))
        if len(shots) <= 1:
            return shots[0] if shots else END_PHASE  # the only volley is the best whatever its value
        bounded = []
        for i, a in enumerate(shots):
            u, t = battle.unit(a.unit), battle.unit(a.target)
            breath_attack = a.option == "breath"
            bound = estimates.shot_value(battle, u, t, True) if breath_attack else estimates.shot_value_bound(battle, u, t)
            bounded.append((bound, i, a, u, t, breath_attack))
        bounded.sort(key=lambda b: -b[0])
        best: tuple[float, int, int] | None = None
        choice = END_PHASE
        for bound, i, a, u, t, breath_attack in bounded:
            if best is not None and bound < best[0]:
                break  # this bound and every later one fall short of the best value
            value = bound if breath_attack else estimates.shot_value(battle, u, t)
            key = (value, -a.unit, -i)
            if best is None or key > best:
                best, choice = key, a
        return choice

    def valued_shots(self, battle: Battle, legal: list[Action]) -> dict[Action, float]:
        """Every legal volley at a unit (not at castle elements) with its value: points per model × expected kills."""
        return {a: estimates.shot_value(battle, battle.unit(a.unit), battle.unit(a.target), a.option == "breath")
                for a in legal if a.kind == "shoot" and a.target is not None}

    def choose_pursuit(self, battle: Battle, legal: list[Action]) -> Action:
        """Always pursue a broken enemy."""
        return next((a for a in legal if a.option == "pursue"), END_PHASE)


def best_per_unit(values: dict[Action, float]) -> list[Action]:
    """The highest-valued action of each unit (the first one on ties), in order of first appearance."""
    best: dict[int, Action] = {}
    for a, v in values.items():
        if a.unit not in best or v > values[best[a.unit]]:
            best[a.unit] = a
    return list(best.values())


def room_to_flee(battle: Battle, t: UnitState, c: UnitState, distance: float = 12.0) -> bool:
    """Whether ``t`` can flee ``distance`` inches straight away from ``c`` and stay on the table."""
    away = geo.facing_towards((c.x, c.y), (t.x, t.y)) if (c.x, c.y) != (t.x, t.y) else t.facing + 180.0
    end = geo.move_straight(geo.Pose(t.x, t.y, away), distance)
    poly = space.footprint_at(t, end)
    return geo.within_table(poly, battle.state.table_w, battle.state.table_h)
