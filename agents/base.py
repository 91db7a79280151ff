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
  the phase ends when no unit wants to move;
* **shoot** — the volley worth most (points per model × expected kills);
* **pursue** — always.
"""

from __future__ import annotations

import math
import operator
from collections import defaultdict
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from itertools import repeat
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from battleline.agents import estimates, magic_policy
from battleline.agents.steering import face_threat, moved_copy, off_axis, predict_pose, steer
from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, shooting, space
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.charges import charge_reach, contact_placement
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment import CENTRE, DeploymentPlan, choose_slot, is_fast
from battleline.tactics.manoeuvres import can_threaten, engaged_uids

if TYPE_CHECKING:
    from shapely.geometry import Polygon

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
BREAK_WEIGHT = 3.0
"""Combat-result value of breaking the enemy (a broken unit is usually run down)."""
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
DANGER_LIMIT = 1.0
"""Danger (see :meth:`ScriptedAgent.danger`) above which a move is replaced by a safer one."""
SAFER_OPTIONS = ("advance_half", None, "backward")
"""The fall-backs of a dangerous move, most progress first (None: stay put)."""
WORLD_MEMO_SIZE = 8
"""Most worlds (enemies and terrain) a scripted agent keeps dangers for (:meth:`ScriptedAgent._danger_store`)."""
DANGER_MEMO_SIZE = 65536
"""Most answers one world's store keeps (then it starts afresh)."""
_OVER = "over the danger limit"
"""A kept :meth:`ScriptedAgent._safe_danger` answer: more than :data:`DANGER_LIMIT`, not worked out in full."""
_SAFER = "safer_option's choice"
"""The first element of the keys under which :meth:`ScriptedAgent.safer_option` keeps its choices in a danger store."""
_BY_GENERAL = "kept per the General's Ld"
"""Kept under a danger key whose answers read the General's Ld lent to the unit (see
:meth:`ScriptedAgent._keep_answer`)."""
HYPOT_BAND = space.HYPOT_BAND
FAR_MARGIN = 1.0 + 1e-9
"""Relative margin past which a squared centre distance is surely beyond a reach: ``dx² + dy² > (r·FAR_MARGIN)²``
implies ``hypot(dx, dy) > r`` whatever the rounding (each is within a few units in the last place)."""


class _Decision:
    """What a scripted agent keeps while it works out one decision (the battle holding still).

    Attributes:
        dangers: :meth:`ScriptedAgent._kept_danger`'s answers (:meth:`ScriptedAgent._danger_store`), once looked up:
            the store shared by every decision that sees the same enemies and terrain.
        chargers: :meth:`ScriptedAgent._chargers`'s lists by ``ignore``.
        lds: the General's Ld lent to each unit, as ``estimates.break_chance`` keeps it.
        pool: :meth:`ScriptedAgent.enemy_pool` once read.
        generals: :func:`lending_generals` per side, once read; lenders: their keys (the Generals' uid, Ld, refusal
            and Large Target, their carriers' uid and place) per side, once read.
        targets: (:meth:`ScriptedAgent.enemies`, the uids of the units in combat) once
            :meth:`ScriptedAgent.holds_to_shoot` has read them.
    """

    __slots__ = ("chargers", "dangers", "generals", "lds", "lenders", "pool", "targets")

    def __init__(self) -> None:
        self.dangers: dict[tuple, object] | None = None
        self.chargers: dict[frozenset[int], list[tuple[UnitState, tuple, tuple[float, float]]]] = {}
        self.lds: dict[int, tuple[UnitState, int | None]] = {}
        self.pool: tuple[list[UnitState], PoolAnswers] | None = None
        self.generals: dict[int, list[tuple[UnitState, UnitState, float]]] = {}
        self.lenders: dict[int, tuple] = {}
        self.targets: tuple[list[UnitState], set[int]] | None = None


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


class ScriptedAgent:
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

    def danger(self, battle: Battle, u: UnitState, ignore: frozenset[int] = frozenset()) -> float:
        """How badly an enemy charge next turn would go for ``u`` where it stands.

        The worst, over enemies that could declare a charge on it (in reach,
        ``u`` in their front arc), of chance to reach × (the charger's expected
        combat-result lead + the value of breaking ``u``); 0 when no enemy
        expects to win. ``u`` may be a forecast copy (see ``steering.moved_copy``);
        enemies in ``ignore`` are left out.
        """
        return self._kept_danger(battle, u, ignore)

    def _kept_danger(self, battle: Battle, u: UnitState, ignore: frozenset[int],
                     chargers: list[tuple[UnitState, tuple, tuple[float, float]]] | None = None,
                     lds: dict[int, tuple[UnitState, int | None]] | None = None) -> float:
        """:meth:`_danger` of ``u`` against :meth:`_chargers` (``chargers`` when read already; ``lds`` as there).

        Within :meth:`act` (the battle holding still) the answer is kept in :meth:`_danger_store` (shared by the
        decisions that see the same enemies and terrain) per ``ignore`` and all :meth:`_danger` reads of ``u``: uid,
        side, the unit it is joined to, its :func:`_target_key` (place, formation, special rules) and its
        ``estimates.combat_key``, and, where the answer reads it, the General's Ld lent to ``u``
        (:meth:`_kept_answer`)."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            return self._danger(battle, u, self._chargers(battle, ignore) if chargers is None else chargers, lds)
        store = self._danger_store(battle, decision)
        key = _danger_key(ignore, u)
        d = self._kept_answer(battle, decision, store, key, u)
        if d is None or d is _OVER:
            if chargers is None:
                chargers = self._chargers(battle, ignore)
            d = self._danger(battle, u, chargers, decision.lds)
            self._keep_answer(store, key, u, d, decision.lds)
        return d  # type: ignore[return-value]

    def _danger_store(self, battle: Battle, decision: _Decision) -> dict[tuple, object]:
        """Where :meth:`_kept_danger` keeps its answers for ``decision``: one store per "world" of the enemies that
        may charge (:meth:`_chargers` with nobody ignored: each one's uid, :func:`_charger_key` and
        ``estimates.combat_key``, in order) and the terrain (``space.terrain_key``). That is all :meth:`_danger`
        reads besides ``u`` and the General's Ld lent to it, so a store serves every decision of that world (a
        movement phase in which only our own units move). The last :data:`WORLD_MEMO_SIZE` worlds are kept."""
        store = decision.dangers
        if store is None:
            world = (space.terrain_key(battle.state),
                     tuple((e.uid, key, estimates.combat_key(e)) for e, key, _ in self._chargers(battle)))
            worlds: dict[tuple, dict[tuple, object]] = self.__dict__.setdefault("_worlds", {})
            store = worlds.get(world)
            if store is None:
                if len(worlds) >= WORLD_MEMO_SIZE:
                    worlds.clear()
                store = worlds[world] = {}
            elif len(store) >= DANGER_MEMO_SIZE:
                store.clear()
            decision.dangers = store
        return store

    @staticmethod
    def _kept_answer(battle: Battle, decision: _Decision, store: dict[tuple, object], key: tuple,
                     u: UnitState) -> object:
        """The answer kept in ``store`` under ``key`` (:func:`_danger_key` of ``u``): a danger, :data:`_OVER` (more
        than :data:`DANGER_LIMIT`, not worked out in full) or None (none kept). An answer that read the General's
        Ld lent to ``u`` is kept under ``key + (that Ld,)`` (:data:`_BY_GENERAL` under ``key``); the Ld is then
        looked up (:func:`general_ld`, kept in ``decision.lds`` as ``estimates.break_chance`` keeps it)."""
        d = store.get(key)
        if d is _BY_GENERAL:
            kept = decision.lds.get(id(u))
            if kept is None:
                kept = decision.lds[id(u)] = (u, general_ld(battle, u, decision))
            d = store.get(key + (kept[1],))
        return d

    @staticmethod
    def _keep_answer(store: dict[tuple, object], key: tuple, u: UnitState, d: object,
                     lds: dict[int, tuple[UnitState, int | None]]) -> None:
        """Keep :meth:`_danger`'s answer ``d`` for ``u`` (a danger, or :data:`_OVER`) in ``store`` under ``key``.

        :meth:`_danger` reads the General's Ld lent to ``u`` only through ``estimates.break_chance`` (which keeps
        it in ``lds``), at the latest for the first charger expected to win with a chance to reach above 0 (``u``
        not Unbreakable): whether it reads it at all depends on nothing the Ld changes. When ``lds`` holds no Ld for
        ``u`` it was not read, and a danger of 0 is 0 whatever the Ld (every part is the chance to reach × a
        positive number): such an answer is kept under ``key`` itself. Otherwise under ``key + (the Ld,)``, with
        :data:`_BY_GENERAL` under ``key``."""
        kept = lds.get(id(u))
        if kept is None or (d is not _OVER and d == 0.0):
            store[key] = d
        else:
            store[key] = _BY_GENERAL
            store[key + (kept[1],)] = d

    def _chargers(self, battle: Battle, ignore: frozenset[int] = frozenset()) -> list[tuple[UnitState, tuple, tuple[float, float]]]:
        """The enemies :meth:`danger` weighs (not in ``ignore``, able to declare a charge: ``can_threaten``), each
        with its part of the :func:`charge_threat` key (:func:`_charger_key`) and its :func:`_reach_bound`, in
        :meth:`enemies`' order. Kept per ``ignore`` for the decision while :meth:`act` works it out (the list is
        shared then: read it, never change it); a list with some ignored is the one with nobody ignored, less those."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            return self._chargers_afresh(battle, ignore)
        found = decision.chargers.get(ignore)
        if found is None:
            if ignore:  # the list with nobody ignored, less the ignored: the same elements in the same order
                found = [c for c in self._chargers(battle) if c[0].uid not in ignore]
            else:
                found = self._chargers_afresh(battle, ignore)
            decision.chargers[ignore] = found
        return found

    def _chargers_afresh(self, battle: Battle, ignore: frozenset[int]) -> list[tuple[UnitState, tuple, tuple[float, float]]]:
        """:meth:`_chargers` worked out (``can_threaten`` with the engaged units listed once; each bound kept per
        :func:`_charger_key`, all it is worked out from: :func:`_kept_reach_bound`)."""
        engaged = engaged_uids(battle)
        out = []
        for e in self.enemies(battle):
            if e.uid not in ignore and can_threaten(battle, e, engaged):
                key = _charger_key(e)
                out.append((e, key, _kept_reach_bound(e, key)))
        return out

    def _danger(self, battle: Battle, u: UnitState, chargers: list[tuple[UnitState, tuple, tuple[float, float]]],
                lds: dict[int, tuple[UnitState, int | None]] | None = None, limit: float | None = None) -> float:
        """:meth:`danger` of ``u`` against ``chargers`` (:meth:`_chargers`, read once for several places of ``u``).

        ``limit``: once some charger's part exceeds it, that part is returned at once (above ``limit``, and never
        above the danger, the max of all the parts); None: every charger is weighed. At most ``limit``, the answer
        is the danger either way. Whatever ``limit``, the greatest part so far is also returned at once when it
        exceeds the charger's reach bound (its :func:`_reach_bound` plus ``u``'s radius, inches): the answer these
        agents have always played with.

        A charger whose centre lies beyond its :func:`_reach_bound` plus ``u``'s radius fails the first test of
        :func:`_threat_geometry` (``space.near``, term for term, ``math.hypot`` answering outside its
        :data:`space.HYPOT_BAND`) and is passed over without a key built; one whose squared centre distance exceeds
        that bound's square by a margin (:data:`FAR_MARGIN`) is passed over without the distance taken; the others
        have passed that test, so their geometry (:func:`_kept_threat`) is worked out with the reach known. Each
        part is ``estimate_combat``'s (the round, then the break test of ``u`` when the charger wins it); the break
        test is skipped where even a sure break (chance 1) could not raise the worst part so far. ``lds``: the
        General's Ld kept per unit (:func:`estimates.break_chance`) while the battle holds still (a new one when
        None)."""
        if not chargers:
            return 0.0
        worst = 0.0
        target = u_key = None
        ru = space.radius(u)
        ux, uy = u.x, u.y
        if lds is None:
            lds = {}
        for e, key, bound in chargers:
            dx, dy = e.x - ux, e.y - uy
            reach = (bound[0] + ru) + bound[1]
            far = reach * FAR_MARGIN
            if dx * dx + dy * dy > far * far:
                continue
            d = math.hypot(dx, dy)
            if d > reach if abs(d - reach) > HYPOT_BAND * (1.0 + abs(reach)) else float(np.hypot(dx, dy)) > reach:
                continue
            if target is None:
                target = _target_key(u)
            threat = _kept_threat(battle, e, u, key + target, bound[1])
            if threat is None:
                continue
            p, facing = threat
            if u_key is None:
                u_key = estimates.combat_key(u)
            _, _, diff, a_left, d_left = estimates.combat_round(battle, e, u, facing, keys=(estimates.combat_key(e), u_key))
            if diff > 0:
                if p * (diff + BREAK_WEIGHT) > worst:  # else this part, at most that, cannot raise the worst
                    if id(u) not in lds and not u.has("unbreakable"):  # where break_chance reads it
                        lds[id(u)] = (u, general_ld(battle, u, self.__dict__.get("_decision")))
                    chance = estimates.break_chance(battle, u, d_left, a_left, diff, lds)
                    worst = max(worst, p * (diff + BREAK_WEIGHT * chance))
                if worst > reach or (limit is not None and worst > limit):
                    return worst
        return worst

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """Whether ``u`` moves without :meth:`safer_option`'s dead-zone check (subclasses: a unit whose job is
        to stand in the enemy's reach). The base agent never does."""
        return False

    def safer_option(self, battle: Battle, u: UnitState, option: str, options: Collection[str]) -> str | None:
        """``option``, unless it ends where :meth:`danger` exceeds :data:`DANGER_LIMIT`; then the least
        dangerous of it and the fall-backs :data:`SAFER_OPTIONS` (most progress first on a tie). Where
        :meth:`ignores_danger` says so, ``option`` as it is. Within :meth:`act` the choice is kept in the world's
        :meth:`_danger_store` for the decisions after (see the comment below)."""
        if self.ignores_danger(battle, u):
            return option
        candidates = [option] + [o for o in SAFER_OPTIONS if o != option and (o is None or o in options)]
        decision = self.__dict__.get("_decision")
        if decision is None or option == "reform_face" or u.joined_to is not None:
            return self._safer_choice(battle, u, option, candidates)
        # Kept in the world's store (the enemies that may charge, the terrain) per all the choice reads besides:
        # the unit (its danger key: place, formation, profile, special rules), the candidates and the Generals that
        # may lend their Ld (reform_face, whose forecast reads the nearest enemy, and joined units are not kept).
        store = self._danger_store(battle, decision)
        generals = decision.lenders.get(u.side)
        if generals is None:
            generals = decision.lenders[u.side] = tuple(
                (g.uid, g.profile.Ld, g.refused, g.has("large_target"), gc.uid, _place_key(gc))
                for g, gc, _ in lending_generals(battle, u.side))
        key = (_SAFER, _danger_key(frozenset(), u), tuple(candidates), generals)
        found = store.get(key, _UNSET)
        if found is _UNSET:
            found = store[key] = self._safer_choice(battle, u, option, candidates)
        return found  # type: ignore[return-value]

    def _safer_choice(self, battle: Battle, u: UnitState, option: str, candidates: list[str | None]) -> str | None:
        """:meth:`safer_option`'s choice among ``candidates`` (``option`` first, then its fall-backs)."""
        chargers = self._chargers(battle)
        lds: dict[int, tuple[UnitState, int | None]] = {}  # the General's Ld per unit, for every candidate place
        places: dict[tuple[float, float, float], tuple[UnitState, float | None]] = {}  # one place, one danger
        over: list[tuple[str | None, UnitState]] = []
        for cand in candidates:
            pose = predict_pose(battle, u, cand) if cand is not None else space.pose(u)
            kept = places.get(pose)
            if kept is None:
                copy = moved_copy(u, pose)
                kept = places[pose] = (copy, self._safe_danger(battle, copy, chargers, lds))
            if kept[1] is not None:
                return cand
            over.append((cand, kept[0]))
        # Every candidate is over the limit: the least dangerous (the first on a tie), on exact dangers.
        best, best_danger = option, math.inf
        for cand, copy in over:
            d = self._danger_below(battle, copy, chargers, lds, best_danger)
            if d < best_danger:
                best, best_danger = cand, d
        return best

    def _danger_below(self, battle: Battle, u: UnitState, chargers: list[tuple[UnitState, tuple, tuple[float, float]]],
                      lds: dict[int, tuple[UnitState, int | None]], bound: float) -> float:
        """:meth:`_kept_danger` of ``u`` (nobody ignored) where it is at most ``bound``; else some number above
        ``bound`` (the danger is at least that): the chargers are weighed only until a part exceeds ``bound``
        (:meth:`_danger`'s ``limit``; ``math.inf``: all). Only exact answers are kept."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            return self._danger(battle, u, chargers, lds, bound)
        store = self._danger_store(battle, decision)
        key = _danger_key(frozenset(), u)
        d = self._kept_answer(battle, decision, store, key, u)
        if d is None or d is _OVER:
            d = self._danger(battle, u, chargers, decision.lds, bound)
            if d <= bound:
                self._keep_answer(store, key, u, d, decision.lds)
        return d  # type: ignore[return-value]

    def _safe_danger(self, battle: Battle, u: UnitState, chargers: list[tuple[UnitState, tuple, tuple[float, float]]],
                     lds: dict[int, tuple[UnitState, int | None]]) -> float | None:
        """:meth:`_kept_danger` of ``u`` (nobody ignored) when it is at most :data:`DANGER_LIMIT`, else None: the
        chargers are weighed only until one part exceeds the limit (:meth:`_danger`'s ``limit``); such a partial
        answer is kept as :data:`_OVER` (an exact one as :meth:`_kept_danger` keeps it)."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            d = self._danger(battle, u, chargers, lds, DANGER_LIMIT)
            return d if d <= DANGER_LIMIT else None
        store = self._danger_store(battle, decision)
        key = _danger_key(frozenset(), u)
        d = self._kept_answer(battle, decision, store, key, u)
        if d is None:
            d = self._danger(battle, u, chargers, decision.lds, DANGER_LIMIT)
            self._keep_answer(store, key, u, d if d <= DANGER_LIMIT else _OVER, decision.lds)
        elif d is _OVER:
            return None
        return d if d <= DANGER_LIMIT else None  # type: ignore[operator,return-value]

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


def effort(u: UnitState, e: UnitState) -> float:
    """Inches of movement for ``u`` to reach ``e``: the gap plus the wheel that faces it (W·θ)."""
    return gap(u, e) + geo.wheel_distance(u.width, off_axis(u, (e.x, e.y)))


def lending_generals(battle: Battle, side: int) -> list[tuple[UnitState, UnitState, float]]:
    """The Generals of ``side`` that may lend their Ld (CORE.SR.GENERAL): in play, their carrier (``characters.carrier``:
    the host when joined) deployed and not fleeing; each as (General, carrier, Inspiring Presence range in inches:
    18" for a Large Target, else 12"), in the order of ``battle.state.units``."""
    state = battle.state
    out = []
    for g in state.units:
        if g.general and g.side == side and g.in_play:
            gc = g if g.joined_to is None else state.units[g.joined_to]
            if gc.fleeing or not gc.deployed:
                continue
            reach = psychology.LARGE_TARGET_INSPIRING_RANGE if g.has("large_target") else psychology.INSPIRING_RANGE
            out.append((g, gc, reach))
    return out


def general_ld(battle: Battle, u: UnitState, decision: _Decision | None = None) -> int | None:
    """``psychology.general_ld(battle, u)`` (CORE.SR.GENERAL, CORE.SR.INSPIRING_PRESENCE, CORE.CC.CHALLENGE.REFUSE):
    the same tests on the Generals of :func:`lending_generals`, listed once per ``decision`` (the battle holding still;
    None: listed afresh)."""
    if decision is None:
        generals = lending_generals(battle, u.side)
    else:
        generals = decision.generals.get(u.side)
        if generals is None:
            generals = decision.generals[u.side] = lending_generals(battle, u.side)
    target = u if u.joined_to is None else battle.state.units[u.joined_to]
    for g, gc, reach in generals:
        if gc.uid == target.uid:
            return None if g.refused else g.profile.Ld
        if space.near(gc, target, reach) and space.unit_distance(gc, target) <= reach:
            return g.profile.Ld
    return None


GAP_MEMO_SIZE = 65536
"""Most pairs of unit places :func:`gap` keeps distances for (then it starts afresh)."""
_GAPS: dict[tuple, float] = {}


def gap(u: UnitState, e: UnitState) -> float:
    """:func:`space.unit_distance` of ``u`` and ``e`` (inches, edge to edge), kept per pair of footprints.

    The footprints are keyed by what they are built from: centre, facing,
    files, models, bases and troop type (CORE.GEO.FOOTPRINT).
    """
    key = (u.x, u.y, u.facing, u.files, u.models, u.base_w, u.base_d, u.troop_type,
           e.x, e.y, e.facing, e.files, e.models, e.base_w, e.base_d, e.troop_type)
    d = _GAPS.get(key)
    if d is None:
        if len(_GAPS) >= GAP_MEMO_SIZE:
            _GAPS.clear()
        d = _GAPS[key] = space.unit_distance(u, e)
    return d


def _danger_key(ignore: frozenset[int], u: UnitState) -> tuple:
    """What :meth:`ScriptedAgent._kept_danger` keeps a danger under: ``ignore`` and all :meth:`ScriptedAgent._danger`
    reads of ``u``: uid, side, the unit it is joined to (the General's Ld it is lent), its :func:`_target_key` (place,
    formation, special rules) and its ``estimates.combat_key``."""
    return (ignore, u.uid, u.side, u.joined_to, _target_key(u), estimates.combat_key(u))


def _place_key(u: UnitState) -> tuple:
    """What ``u``'s footprint is built from (one half of :func:`gap`'s key): centre, facing, files, models, bases
    and troop type (CORE.GEO.FOOTPRINT)."""
    return (u.x, u.y, u.facing, u.files, u.models, u.base_w, u.base_d, u.troop_type)


class PoolAnswers:
    """What the scripted agents keep for one pool of enemies (:func:`pool_answers`), per :func:`_place_key` of the unit
    asking: ``gap`` its least :func:`gap` to the pool (inches), ``nearest`` and ``target`` the index in the pool of
    its nearest enemy and of its :meth:`ScriptedAgent.target_for` choice."""

    __slots__ = ("gap", "nearest", "radii", "target")

    def __init__(self) -> None:
        self.gap: dict[tuple, float] = {}
        self.nearest: dict[tuple, int] = {}
        self.target: dict[tuple, int] = {}
        self.radii: list[float] | None = None

    def radii_of(self, pool: list[UnitState]) -> list[float]:
        """:func:`space.radius` of each enemy of ``pool`` (the pool these answers are kept for), inches."""
        radii = self.radii
        if radii is None:
            radii = self.radii = [space.radius(e) for e in pool]
        return radii


POOL_MEMO_SIZE = 4096
"""Most pools of enemies :func:`pool_answers` keeps answers for (then it starts afresh)."""
_POOLS: dict[tuple, PoolAnswers] = {}


def pool_answers(pool: list[UnitState]) -> PoolAnswers:
    """The answers kept for ``pool``: per the uid and :func:`_place_key` of each of its enemies, in order (all that
    :func:`gap` and :func:`effort` read of them, and the uid that breaks ties)."""
    key = tuple((e.uid, e.x, e.y, e.facing, e.files, e.models, e.base_w, e.base_d, e.troop_type) for e in pool)
    kept = _POOLS.get(key)
    if kept is None:
        if len(_POOLS) >= POOL_MEMO_SIZE:
            _POOLS.clear()
        kept = _POOLS[key] = PoolAnswers()
    return kept


def nearest_gaps(pool: list[UnitState], kept: PoolAnswers | None = None) -> Callable[[UnitState], float]:
    """``u -> min(gap(u, e) for e in pool)`` (inches; inf for an empty pool), kept per the footprints of the pool
    and of ``u`` (``kept``: :func:`pool_answers` of ``pool``, looked up when None), so a unit that has not moved
    against enemies that have not moved is answered without a distance looked up."""
    answers = pool_answers(pool) if kept is None else kept
    gaps = answers.gap

    def nearest(u: UnitState) -> float:
        key = _place_key(u)
        d = gaps.get(key)
        if d is None:
            d = gaps[key] = gap(u, pool[least_index(u, pool, gap, answers.radii_of(pool))]) if pool else float("inf")
        return d

    return nearest


GAP_SLACK = 1e-6
"""Inches by which an enemy's lower bound (:func:`least_index`) must exceed the least measure found before the enemy
is passed over (far above the rounding of a centre distance and two radii)."""
SMALL_POOL = 3
"""Pools up to this size are measured enemy by enemy in :func:`least_index` (no bounds worked out)."""


def least_index(u: UnitState, pool: list[UnitState], measure: Callable[[UnitState, UnitState], float],
                radii: list[float] | None = None) -> int:
    """The index in ``pool`` (not empty, distinct units) of the enemy with the least ``(measure(u, e), e.uid)``:
    ``min(range(len(pool)), key=lambda j: (measure(u, pool[j]), pool[j].uid))``.

    ``measure`` is never below :func:`gap` (:func:`gap` itself, :func:`effort`), and the gap between two footprints is
    never below their centre distance less both radii (:func:`space.radius`: every point of a footprint lies within it
    of its centre). So the enemies are measured in order of that bound, and once the bound of the next exceeds the
    least measure found by :data:`GAP_SLACK`, it and all after it are passed over: none of them can be least.
    ``radii``: the pool's radii when kept already (:meth:`PoolAnswers.radii_of`), else worked out.
    """
    n = len(pool)
    if n <= SMALL_POOL:
        return min(range(n), key=lambda j: (measure(u, pool[j]), pool[j].uid))
    ux, uy, ru = u.x, u.y, space.radius(u)
    if radii is None:
        radii = [space.radius(e) for e in pool]
    bounds = sorted((math.hypot(e.x - ux, e.y - uy) - ru - radii[j], j) for j, e in enumerate(pool))
    best_j = bounds[0][1]
    e = pool[best_j]
    best = (measure(u, e), e.uid)
    for bound, j in bounds[1:]:
        if bound > best[0] + GAP_SLACK:
            break
        e = pool[j]
        found = (measure(u, e), e.uid)
        if found < best:
            best, best_j = found, j
    return best_j


def charge_arc(battle: Battle, c: UnitState, t: UnitState) -> str:
    """The facing of ``t`` that ``c`` would charge (ties: the least favourable), "front" when undecidable.

    Forecast copies may overlap their target, where the engine's
    ``charge_facing`` has no answer. Kept per :func:`_threat_key` of ``c`` and ``t`` (their places,
    formations, bases and special rules: all the unrolled ``charge_facing`` reads; no die is rolled);
    worked out in plain floats (:func:`front_rank_arc`).
    """
    key = _threat_key(c, t)
    arc = _ARCS.get(key)
    if arc is None:
        if len(_ARCS) >= THREAT_MEMO_SIZE:
            _ARCS.clear()
        if t.has("skirmishers"):
            arc = "front"  # as charge_facing: CORE.TYPE.SKIRMISHERS, always charged in the front
        else:
            arc = front_rank_arc(c, t)
        _ARCS[key] = arc
    return arc


def front_rank_arc(c: UnitState, t: UnitState) -> str:
    """``charge_facing(battle, c, t, roll=False) or "front"`` for a ``t`` without Skirmishers, in plain floats: the
    first arc of ``t`` (``geo.ARCS`` order: front, left, right, rear; CORE.GEO.UNIT_ARC) holding the most of ``c``'s
    front-rank model centres, "front" when every centre is inside ``t``.

    The centres are ``geo.front_rank_centres``' and their arcs ``geo.arc_counts``', worked out on the same floats
    in the same order of operations (numpy's element-wise arithmetic rounds as Python's does)."""
    f = min(c.files, c.models)
    if f < 1:
        return "front"  # geo.model_centres refuses it; charge_facing's caller answers "front"
    ranks = -(-c.models // f)
    hw = 0.5 * f * c.base_w
    ly = 0.5 * ranks * c.base_d - 0.5 * c.base_d
    cos_c, sin_c = geo.Pose(c.x, c.y, c.facing).front()
    cos_t, sin_t = geo.Pose(t.x, t.y, t.facing).front()
    thw, thd = 0.5 * t.width, 0.5 * t.depth
    counts = dict.fromkeys(geo.ARCS, 0)
    for i in range(f):
        lx = -hw + (i + 0.5) * c.base_w
        px = c.x + lx * sin_c + ly * cos_c
        py = c.y - lx * cos_c + ly * sin_c
        dx = px - t.x
        dy = py - t.y
        arc = geo.point_arc(dx * sin_t - dy * cos_t, dx * cos_t + dy * sin_t, thw, thd)
        if arc != "inside":
            counts[arc] += 1
    best = max(counts.values())
    if best == 0:
        return "front"
    return next(a for a in geo.ARCS if counts[a] == best)


_ARCS: dict[tuple, str] = {}


def charge_threat(battle: Battle, c: UnitState, t: UnitState, target: Polygon | None = None) -> tuple[float, str] | None:
    """Whether ``c`` could declare a charge on ``t`` next: (chance to reach, the facing of ``t`` it would hit), or None.

    None when ``c`` could not declare a charge in its next movement phase
    (:func:`tactics.manoeuvres.can_threaten`: fleeing, a war machine, M 0, engaged), ``t`` is beyond its reach
    (:func:`env.rules.charges.charge_reach`, inches, edge to edge) or not partly in
    its front vision arc (CORE.CHARGE.ELIGIBLE). The chance is the charge roll (the engine's charge M, flyers 10,
    + the higher of 2D6) reaching the gap (:func:`agents.estimates.charge_chance`, CORE.CHARGE.RANGE).
    ``target``: ``t``'s footprint when already built (``t`` may be a forecast copy).
    The geometry (:func:`_threat_geometry`) is kept for the same places of ``c`` and ``t``.
    """
    if not can_threaten(battle, c):
        return None
    if target is not None:
        return _threat_geometry(battle, c, t, target)
    return _kept_threat(battle, c, t, _threat_key(c, t))


def _kept_threat(battle: Battle, c: UnitState, t: UnitState, key: tuple,
                 reach: float | None = None) -> tuple[float, str] | None:
    """:func:`charge_threat`'s kept geometry for ``c`` (able to threaten) and ``t``; ``key`` is :func:`_threat_key`;
    ``reach``: as in :func:`_threat_geometry`."""
    threat = _THREATS.get(key, _UNSET)
    if threat is _UNSET:
        if len(_THREATS) >= THREAT_MEMO_SIZE:
            _THREATS.clear()
        threat = _THREATS[key] = _threat_geometry(battle, c, t, None, reach)
    return threat  # type: ignore[return-value]


THREAT_MEMO_SIZE = 65536
"""Most (charger, target) places :func:`charge_threat` keeps its geometry for (then it starts afresh)."""
_THREATS: dict[tuple, tuple[float, str] | None] = {}


_UNSET = object()


def _threat_key(c: UnitState, t: UnitState) -> tuple:
    """All :func:`_threat_geometry` reads of ``c`` and ``t``: places, formations, bases, M and special rules
    (:func:`_charger_key` of ``c`` then :func:`_target_key` of ``t``)."""
    return _charger_key(c) + _target_key(t)


def _charger_key(c: UnitState) -> tuple:
    """The charger's part of :func:`_threat_key`: place, formation, bases, troop type, M and special rules."""
    return (c.x, c.y, c.facing, c.files, c.models, c.base_w, c.base_d, c.troop_type, c.profile.M, tuple(c.special_rules))


def _target_key(t: UnitState) -> tuple:
    """The target's part of :func:`_threat_key`: place, formation, bases, troop type and special rules."""
    return (t.x, t.y, t.facing, t.files, t.models, t.base_w, t.base_d, t.troop_type, tuple(t.special_rules))


_BOUNDS: dict[tuple, tuple[float, float]] = {}


def _kept_reach_bound(c: UnitState, key: tuple) -> tuple[float, float]:
    """:func:`_reach_bound` of ``c``, kept per ``key`` (its :func:`_charger_key`: the footprint's formation, bases and
    troop type, M and special rules, all the radius and the charge reach read)."""
    bound = _BOUNDS.get(key)
    if bound is None:
        if len(_BOUNDS) >= THREAT_MEMO_SIZE:
            _BOUNDS.clear()
        bound = _BOUNDS[key] = _reach_bound(c)
    return bound


def _reach_bound(c: UnitState) -> tuple[float, float]:
    """(:func:`space.radius` of ``c``, :func:`charge_reach` of ``c``) in inches: ``space.near(c, t, reach)`` is
    ``hypot(c.x - t.x, c.y - t.y) <= (radius + radius(t)) + reach``, the first test of :func:`_threat_geometry`."""
    return space.radius(c), charge_reach(c)


def _threat_geometry(battle: Battle, c: UnitState, t: UnitState, target: Polygon | None,
                     reach: float | None = None) -> tuple[float, str] | None:
    """:func:`charge_threat` once ``c`` can threaten: reach, front arc, chance and facing (geometry of ``c`` and
    ``t`` alone; ``battle`` is not read, ``target`` as there).

    ``reach``: :func:`charge_reach` of ``c`` from a caller that has found ``space.near(c, t, reach)`` true already
    (:meth:`ScriptedAgent._danger`, through :func:`_reach_bound`): neither is worked out again. None: both are."""
    if reach is None:
        reach = charge_reach(c)
        if not space.near(c, t, reach):
            return None
    if target is None:  # the arc in floats first, then the footprints' distance
        seen = in_vision_arc(c, t)
        if seen is None:
            seen = geo.partly_in_vision_arc(space.pose(c), c.width, c.depth, space.footprint(t))
        if not seen:
            return None
        dist = geo.distance(space.footprint(c), space.footprint(t))
        if dist > reach:
            return None
    else:
        dist = geo.distance(space.footprint(c), target)
        if dist > reach:
            return None
        seen = geo.partly_in_vision_arc(space.pose(c), c.width, c.depth, target)
    if not seen:
        return None
    return estimates.charge_chance(c, dist), charge_arc(battle, c, t)


ARC_MARGIN = 1e-6
"""Inches by which every corner of a target must lie beyond a side of the viewer's front arc for
:func:`in_vision_arc` to answer False (far above the rounding of the arc's polygon in table inches)."""


def in_vision_arc(c: UnitState, t: UnitState) -> bool | None:
    """``geo.partly_in_vision_arc`` of ``c``'s footprint and ``t``'s (CORE.GEO.VISION_ARC) in plain floats, or None
    where only the polygons can tell.

    True when a corner of ``t`` (``geo.corner_list``: the vertices of its footprint polygon) is in ``c``'s front
    arc as ``geo.point_arc`` says: the first test of ``partly_in_vision_arc``, on the same floats (its local
    frame is worked out element by element in the same order). False when every corner lies more than
    :data:`ARC_MARGIN` inches beyond one side of the arc (behind the front edge's line, or outside one of the 45°
    rays from the front corners): the rectangle then lies in an open half-plane that misses the arc, so the
    interiors cannot meet. None otherwise (the polygons' relation decides)."""
    cs = geo.Pose(c.x, c.y, c.facing)
    cos_f, sin_f = cs.front()
    hw, hd = 0.5 * c.width, 0.5 * c.depth
    cx, cy = c.x, c.y
    behind = right = left = True
    for px, py in geo.corner_list(geo.Pose(t.x, t.y, t.facing), t.width, t.depth):
        dx = px - cx
        dy = py - cy
        lx = dx * sin_f - dy * cos_f
        ly = dx * cos_f + dy * sin_f
        if geo.point_arc(lx, ly, hw, hd) == "front":
            return True
        fy = ly - hd
        behind = behind and fy < -ARC_MARGIN
        right = right and fy < lx - hw - ARC_MARGIN
        left = left and fy < -lx - hw - ARC_MARGIN
    return False if behind or right or left else None


def room_to_flee(battle: Battle, t: UnitState, c: UnitState, distance: float = 12.0) -> bool:
    """Whether ``t`` can flee ``distance`` inches straight away from ``c`` and stay on the table."""
    away = geo.facing_towards((c.x, c.y), (t.x, t.y)) if (c.x, c.y) != (t.x, t.y) else t.facing + 180.0
    end = geo.move_straight(geo.Pose(t.x, t.y, away), distance)
    poly = space.footprint_at(t, end)
    return geo.within_table(poly, battle.state.table_w, battle.state.table_h)
