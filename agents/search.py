"""The search agent: portfolio greedy search over the scripted plans (Churchill & Buro), decided by rollouts.

``search`` plays a field battle by choosing, at each of its player turns, which
scripted plan (a scripted agent of :mod:`agents.scripted` or
:mod:`agents.tactical`) to follow for that turn. It chooses by playing each
candidate plan forward on copies of the battle (:meth:`Battle.clone`), the
other side played by an opponent model (a scripted agent, ``line_advance`` by
default), and keeping the plan whose rollouts end best for its side.

Granularity. A search runs at the first decision of each *block* the agent's
side owns: its deployment (the whole deployment stage, Vanguard moves
included, is one block) and each of its player turns (game turn, active
player). The chosen plan's agent then answers every decision of that block one
by one, and also the decisions the side makes in the opponent's turn
(reactions, dispels, pursuits, challenges) until the next search. Each plan's
agent is one persistent instance for the whole battle, so its deployment
plan and its memory (baits bitten, feints read) carry over from turn to turn.

Rollouts. A rollout copies the battle with fresh dice (``battle.clone(reseed=s)``,
the seed ``s`` drawn from the agent's own generator), so the search never sees
the battle's real future rolls; scripted dice never pass into a copy. The
candidate plays the search's side for the whole rollout, the opponent model
the other side (both deep copies of persistent instances, so a rollout leaves
them untouched). A rollout stops at the end of the game or, with a
``horizon`` of ``h`` player turns (0: no horizon), at the first decision of the
``h + 1``-th block since it started (the deployment counts as one block).
Sample ``j`` of every candidate uses the same dice seed (common random numbers),
so the candidates are compared on the same luck.

Value of a rollout, from the search's side: the result term (+1 victory, −1
defeat, 0 draw; at a horizon the game is scored as if it ended there,
CORE.VP.RESULT: a margin of at least ``victory_margin`` of the points limit
wins, a wiped-out side loses) plus the victory-point margin divided by the
points limit (CORE.VP.*). The value lies in [−2, 2].

Budget. ``sims`` rollouts per search, spent by successive halving: the
candidates share the budget over ceil(log2 K) rounds, each round giving every
survivor an equal share (at least one rollout) and keeping the better half
by mean value (ties: portfolio order). With fewer rollouts than candidates,
the current plan and ``sims - 1`` others drawn by the agent's generator get
one rollout each. The budget counts rollouts, not seconds, so the choice does
not depend on the machine; for a given seed and the same battle the agent
makes the same choices.

Names: ``search`` or ``search:KEY=VALUE:KEY=VALUE...`` (colons, because commas
separate agents in ``--agents`` lists), with the keys of :data:`PARAMETERS`,
e.g. ``search:sims=64:horizon=4:opponent=line_advance:portfolio=line_advance+refused_flank``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from battleline.agents.portfolio import DEPLOYMENT_BLOCK, Block, PlanFollower, block_of, ensure_plan
from battleline.env.rules.actions import Action

if TYPE_CHECKING:
    from battleline.agents.base import Agent
    from battleline.agents.plan_net import PlanPolicy
    from battleline.env.rules.battle import Battle

SEARCH_NAME = "search"
"""The registry name of the search agent (and the prefix of its parametrised names, ``search:...``)."""
PARAM_SEP = ":"
"""Separates the name and the parameters (``search:sims=8:horizon=2``)."""
LIST_SEP = "+"
"""Separates the agent names of the ``portfolio`` parameter."""

DEFAULT_SIMS = 64
"""Rollouts per search when ``sims`` is not given."""
DEFAULT_HORIZON = 0
"""Player turns a rollout plays when ``horizon`` is not given: 0, to the end of the game. A short horizon
judges the deployment and the early turns by the quarters held before the lines meet; in the first
measurements (docs/results/search.md) ``horizon=4`` lost 1-3 to ``line_advance`` on ``pitched_battle``
where playing to the end won 4-0, at about twice the CPU time per game."""
DEFAULT_OPPONENT = "line_advance"
"""The opponent model when ``opponent`` is not given."""
DEFAULT_PORTFOLIO: tuple[str, ...] = (
    "line_advance",
    "refused_flank",
    "sacrifice_for_deployment",
    "flank_teeth",
    "pincers",
    "bait_and_flank",
    "shooting_lines",
    "abandoned_flank",
    "weakened_flank",
    "control_zones",
    "protected_bubble",
)
"""The field-battle scripted plans (every scripted and tactical agent but ``open_loop``, which ignores the
enemy), the plain line first: it is the plan played before the first search and the first of equals."""
PARAMETERS = ("sims", "horizon", "opponent", "portfolio", "prior", "top")
"""The parameter keys a ``search:`` name accepts."""
MAX_ROLLOUT_DECISIONS = 20_000
"""A rollout that has not stopped after this many decisions is scored where it stands (a full pitched
battle takes about 150)."""
SEED_BOUND = 2**31
"""Dice seeds of the rollouts are drawn from [0, SEED_BOUND)."""


class SearchSpecError(ValueError):
    """A ``search:`` name with a bad parameter; the message is one line naming the parameter and the fault."""


@dataclass(frozen=True)
class SearchSpec:
    """The parameters of a search agent (see the module docstring).

    Attributes:
        sims: rollouts per search (>= 1).
        horizon: player turns per rollout (>= 0; 0 plays to the end of the game).
        opponent: the registry name of the opponent model.
        portfolio: the registry names of the candidate plans, the default plan first.
        prior: the path of a plan network (:mod:`agents.plan_net`) over the same portfolio, or "" for none.
            With one, the search's side follows the network's plan at every block of a rollout after
            the one searched (the network is the rollout policy), and ``top`` uses it as the prior.
        top: with a prior, search only the ``top`` plans it finds most likely (0: all of them).
    """

    sims: int = DEFAULT_SIMS
    horizon: int = DEFAULT_HORIZON
    opponent: str = DEFAULT_OPPONENT
    portfolio: tuple[str, ...] = DEFAULT_PORTFOLIO
    prior: str = ""
    top: int = 0

    @classmethod
    def parse(cls, name: str) -> SearchSpec:
        """The spec of ``search`` or ``search:KEY=VALUE:...``.

        Raises:
            SearchSpecError: not a search name, an empty parameter, a parameter without ``=``, an unknown or repeated key,
                ``sims`` not an integer >= 1, ``horizon`` not an integer >= 0, an ``opponent`` or a
                ``portfolio`` entry that is not a registered agent (or is a search or ``model:`` agent),
                an empty or repeated ``portfolio`` entry.
        """
        head, sep, rest = name.partition(PARAM_SEP)
        if head != SEARCH_NAME:
            raise SearchSpecError(f"not a search agent name: '{name}'")
        values: dict[str, Any] = {}
        for item in rest.split(PARAM_SEP) if sep else []:
            if not item:
                raise SearchSpecError(f"empty parameter; give KEY=VALUE after each '{PARAM_SEP}'")
            key, eq, value = item.partition("=")
            if not eq:
                raise SearchSpecError(f"parameter '{item}' needs a value, as KEY=VALUE")
            if key not in PARAMETERS:
                raise SearchSpecError(f"unknown parameter '{key}'; parameters: {', '.join(PARAMETERS)}")
            if key in values:
                raise SearchSpecError(f"parameter '{key}' given twice")
            values[key] = _parse_value(key, value)
        spec = cls(**values)
        if spec.top and not spec.prior:
            raise SearchSpecError("top needs a prior (prior=PATH of a plan network)")
        if spec.prior:
            policy = spec.prior_policy()
            if set(policy.portfolio) != set(spec.portfolio):
                raise SearchSpecError(f"prior '{spec.prior}' was trained on the plans {LIST_SEP.join(policy.portfolio)}, "
                                      f"not the search's portfolio {LIST_SEP.join(spec.portfolio)}")
        return spec

    @property
    def name(self) -> str:
        """The canonical name, every parameter spelled out (``prior`` and ``top`` only when a prior is given)."""
        parts = [SEARCH_NAME, f"sims={self.sims}", f"horizon={self.horizon}", f"opponent={self.opponent}",
                 f"portfolio={LIST_SEP.join(self.portfolio)}"]
        if self.prior:
            parts += [f"prior={self.prior}", f"top={self.top}"]
        return PARAM_SEP.join(parts)

    def prior_policy(self) -> PlanPolicy | None:
        """The prior's network (loaded once per process and path), or None without a prior.

        Raises:
            SearchSpecError: the prior's file is missing or not a plan network (one line).
        """
        if not self.prior:
            return None
        from battleline.agents.plan_net import PlanNetError, load_plan_policy

        try:
            return load_plan_policy(self.prior)
        except PlanNetError as exc:
            raise SearchSpecError(f"prior: {exc}") from None


def _parse_int(key: str, value: str, least: int) -> int:
    """``value`` as an integer >= ``least``; SearchSpecError otherwise."""
    try:
        number = int(value)
    except ValueError:
        number = least - 1
    if number < least or not value.strip().lstrip("+").isdigit():
        raise SearchSpecError(f"{key} must be an integer >= {least}, got '{value}'")
    return number


def _check_plan_agent(key: str, value: str) -> str:
    """``value`` if it names a registered agent a search may play with; SearchSpecError otherwise."""
    from battleline.agents.registry import AGENT_NAMES

    if value not in AGENT_NAMES:
        raise SearchSpecError(f"{key} '{value}' is not a registered agent; known agents: {', '.join(AGENT_NAMES)}")
    return value


def _parse_value(key: str, value: str) -> Any:
    """One parameter's value, checked (see :meth:`SearchSpec.parse`)."""
    if key == "sims":
        return _parse_int(key, value, 1)
    if key in ("horizon", "top"):
        return _parse_int(key, value, 0)
    if key == "prior":
        if not value.strip():
            raise SearchSpecError("prior needs the path of a plan network, as prior=PATH")
        return value
    if key == "opponent":
        return _check_plan_agent(key, value)
    names = value.split(LIST_SEP)
    if any(not n for n in names):
        raise SearchSpecError(f"portfolio '{value}' has an empty entry; give agent names joined by '{LIST_SEP}'")
    if len(set(names)) != len(names):
        raise SearchSpecError(f"portfolio '{value}' names an agent twice")
    return tuple(_check_plan_agent("portfolio entry", n) for n in names)


@dataclass
class SearchRecord:
    """What one search did.

    Attributes:
        block: the block searched, (game turn, active side); (0, -1) for the deployment.
        candidates: the portfolio names tried, in portfolio order.
        samples: rollouts per candidate, same order.
        values: mean rollout value per candidate (nan when not tried), same order.
        choice: the plan chosen.
        sims: rollouts spent (<= the budget).
    """

    block: tuple[int, int]
    candidates: list[str]
    samples: list[int] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    choice: str = ""
    sims: int = 0


def rollout_value(battle: Battle, side: int) -> float:
    """The value of ``battle`` as it stands for ``side`` (0 blue, 1 red): result term + VP margin / points limit.

    The result term is +1 for a victory, −1 for a defeat, 0 for a draw (CORE.VP.RESULT); a battle still
    running is scored as if it ended now (a side with no models left loses, CORE.GAME.END, else a margin of
    at least ``victory_margin`` × points limit wins). Returns a float in [−2, 2].
    """
    from battleline.env.rules import space

    res = battle.result
    s = battle.state
    limit = max(1, s.points_limit)
    blue_margin = res["margin"]
    winner = res["winner"]
    if winner is None:
        wiped = [not space.alive_units(s, i) for i in (0, 1)]
        if wiped[0] != wiped[1]:
            winner = "red" if wiped[0] else "blue"
        elif abs(blue_margin) >= s.queue.get("victory_margin", 0.10) * limit:
            winner = "blue" if blue_margin > 0 else "red"
        else:
            winner = "draw"
    term = 0.0 if winner == "draw" else (1.0 if winner == ("blue", "red")[side] else -1.0)
    margin = blue_margin if side == 0 else -blue_margin
    return term + max(-1.0, min(1.0, margin / limit))


class SearchAgent(PlanFollower):
    """``search``: portfolio greedy search over the scripted plans, by rollouts on reseeded clones.

    See the module docstring for the granularity, the rollouts, the value and the budget.

    Args:
        seed: seeds the agent's own ``numpy.random.Generator`` (the rollouts' dice seeds and the candidate
            subset when the budget is smaller than the portfolio); the battle's dice are separate.
        spec: the parameters (default: :class:`SearchSpec`'s defaults).
        name: the name the agent reports (default: ``spec``'s canonical name).

    Attributes:
        records: one :class:`SearchRecord` per search of the current battle, in order.
        prior: the plan network of ``spec.prior`` (None without one).

    Raises:
        SearchSpecError: ``spec.prior`` is not a plan network.
    """

    def __init__(self, seed: int = 0, spec: SearchSpec | None = None, name: str | None = None) -> None:
        self.spec = spec or SearchSpec()
        super().__init__(self.spec.portfolio)
        self.name = name or self.spec.name
        self.rng = np.random.default_rng(seed)
        self.prior = self.spec.prior_policy()
        self.opponent: Agent | None = None
        self.records: list[SearchRecord] = []

    # ------------------------------------------------------------------ protocol
    def reset(self, battle: Battle, side: int) -> None:
        """Start a battle on ``side``: fresh plan agents and opponent model, the default plan current."""
        from battleline.agents.registry import make_agent

        super().reset(battle, side)
        self.opponent = make_agent(self.spec.opponent, seed=len(self.spec.portfolio))
        self.opponent.reset(battle, 1 - side)
        self.records = []

    def act(self, battle: Battle) -> Action:
        """Search at the first decision of each of the side's blocks, then answer with the current plan.

        Every agent the search consults (its plans, its opponent model) sees a copy of ``battle`` with
        fresh dice, never ``battle`` itself, so nothing it runs can read the real future rolls.
        """
        if not self.plans:
            self.reset(battle, battle.pending.player or 0)
        view = battle.clone(reseed=self._draw_seed())
        if self.choosing(view):
            record = self.search(view)
            self.records.append(record)
            self.current = self._follow(view, record)
        return self.plans[self.current].act(view)

    def _follow(self, battle: Battle, record: SearchRecord) -> str:
        """The plan to follow after ``record``'s search of ``battle``: its choice (a hook for labelling agents)."""
        return record.choice

    # ------------------------------------------------------------------ search
    def candidates(self, battle: Battle) -> list[str]:
        """The plans searched: the portfolio, or with a prior and ``top`` its ``top`` most likely plans
        (ties to the earlier plan), in portfolio order."""
        names = list(self.spec.portfolio)
        if self.prior is None or not self.spec.top or self.spec.top >= len(names):
            return names
        p = self.prior.probabilities(battle, self.side)
        chance = dict(zip(self.prior.portfolio, p, strict=True))
        ranked = sorted(range(len(names)), key=lambda i: (-chance[names[i]], i))
        return [names[i] for i in sorted(ranked[: self.spec.top])]

    def search(self, battle: Battle) -> SearchRecord:
        """Choose a plan for the block now starting in ``battle`` (a copy the search may read); see the module docstring.

        Returns the :class:`SearchRecord`; the persistent plan agents are not changed beyond their
        deployment plans being made.
        """
        names = self.candidates(battle)
        record = SearchRecord(block_of(battle), names, [0] * len(names), [0.0] * len(names))
        self.ensure_plans(battle)
        ensure_plan(self.opponent, battle)
        seeds = [int(s) for s in self.rng.integers(0, SEED_BOUND, size=self.spec.sims)]
        totals = [0.0] * len(names)
        if len(names) == 1:
            survivors = [0]
        elif self.spec.sims < len(names):
            survivors = self._subset(names)
            for i in survivors:
                totals[i] += self.rollout(battle, names[i], seeds[0])
                record.samples[i] += 1
        else:
            survivors = self._halve(battle, names, seeds, totals, record)
        record.values = [totals[i] / record.samples[i] if record.samples[i] else math.nan for i in range(len(names))]
        best = max(survivors, key=lambda i: (record.values[i] if record.samples[i] else -math.inf, -i))
        record.choice = names[best]
        record.sims = sum(record.samples)
        return record

    def _subset(self, names: Sequence[str]) -> list[int]:
        """With fewer rollouts than candidates: the current plan (when a candidate, else the first) and
        ``sims - 1`` others drawn by the generator."""
        current = names.index(self.current) if self.current in names else 0
        others = [i for i in range(len(names)) if i != current]
        drawn = self.rng.choice(len(others), size=self.spec.sims - 1, replace=False) if self.spec.sims > 1 else []
        return sorted([current, *(others[int(k)] for k in drawn)])

    def _halve(self, battle: Battle, names: Sequence[str], seeds: Sequence[int], totals: list[float],
               record: SearchRecord) -> list[int]:
        """Successive halving over all candidates with ``len(seeds)`` rollouts; returns the last survivors."""
        survivors = list(range(len(names)))
        rounds = math.ceil(math.log2(len(names)))
        used = 0
        for r in range(rounds):
            share = (len(seeds) - used) // (rounds - r)
            last = r == rounds - 1
            per = max(1, math.ceil(share / len(survivors)) if last else share // len(survivors))
            for _ in range(per):
                for i in survivors:
                    if used >= len(seeds):
                        break
                    totals[i] += self.rollout(battle, names[i], seeds[record.samples[i]])
                    record.samples[i] += 1
                    used += 1
            if len(survivors) > 1:
                survivors.sort(key=lambda i: (-totals[i] / max(1, record.samples[i]), i))
                survivors = sorted(survivors[: math.ceil(len(survivors) / 2)])
        return survivors

    def rollout(self, battle: Battle, plan: str, seed: int) -> float:
        """Play ``plan`` for the search's side against the opponent model on a copy of ``battle`` with dice
        seeded by ``seed``, to the end or the horizon; returns :func:`rollout_value` for the search's side.

        Without a prior the plan plays the whole rollout; with one, the plan plays the block searched and
        the prior's most likely plan each later block of the side (:class:`PriorRollout`)."""
        sim = battle.clone(reseed=seed)
        mine: Agent | PriorRollout
        if self.prior is None:
            mine = copy.deepcopy(self.plans[plan])
        else:
            mine = PriorRollout(self.plans, plan, block_of(battle), self.prior, self.side)
        players = {self.side: mine, 1 - self.side: copy.deepcopy(self.opponent)}
        blocks = 1
        block = block_of(sim)
        for _ in range(MAX_ROLLOUT_DECISIONS):
            if sim.is_over:
                break
            now = block_of(sim)
            if now != block:
                block, blocks = now, blocks + 1
                if self.spec.horizon and blocks > self.spec.horizon:
                    break
            player = sim.pending.player
            sim.apply(players[player if player is not None else sim.state.active].act(sim))
        return rollout_value(sim, self.side)

    # ------------------------------------------------------------------ helpers
    def _draw_seed(self) -> int:
        """A fresh dice seed from the agent's generator."""
        return int(self.rng.integers(0, SEED_BOUND))


class PriorRollout(PlanFollower):
    """The search's side in a rollout with a prior: ``first`` for the block searched, then at each later
    block of the side the prior's most likely plan.

    The plan agents are deep copies of the search's persistent ones, made when a plan is first used, so a
    rollout leaves the search's agents untouched.

    Args:
        plans: the search's plan agents (read, copied on use).
        first: the plan of the block searched.
        block: the block searched.
        prior: the plan network.
        side: the search's side.
    """

    def __init__(self, plans: dict[str, Agent], first: str, block: Block, prior: PlanPolicy, side: int) -> None:
        super().__init__(tuple(plans))
        self.source = plans
        self.side = side
        self.block = block
        self.current = first
        self.prior = prior

    def act(self, battle: Battle) -> Action:
        """The current plan's order; a new block of the side first switches to the prior's plan."""
        if self.choosing(battle):
            self.current = self.prior.choose(battle, self.side)
        agent = self.plans.get(self.current)
        if agent is None:
            agent = self.plans[self.current] = copy.deepcopy(self.source[self.current])
        return agent.act(battle)


def make_search_agent(name: str, seed: int = 0) -> SearchAgent:
    """The search agent called ``name`` (``search`` or ``search:KEY=VALUE:...``), seeded with ``seed``.

    Raises:
        SearchSpecError: a bad parameter (one line; see :meth:`SearchSpec.parse`).
    """
    return SearchAgent(seed=seed, spec=SearchSpec.parse(name), name=name)


__all__ = ["DEPLOYMENT_BLOCK", "PriorRollout", "SearchAgent", "SearchRecord", "SearchSpec", "SearchSpecError",
           "block_of", "make_search_agent", "rollout_value"]
