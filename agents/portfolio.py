"""Plan followers: agents that pick a scripted plan per block and let that plan's agent give the orders.

The search (:mod:`agents.search`) and the distilled plan network
(:mod:`agents.plan_net`) both play a field battle the same way: at the first
decision of each *block* their side owns (the deployment stage, Vanguard
moves included, is one block; then each of the side's player turns) they
choose one plan of a portfolio of scripted agents, and that plan's agent
answers every decision until the next choice, the reactions, dispels,
pursuits and challenges of the opponent's turn included. Each plan's agent is
one persistent instance for the whole battle, so its deployment plan and its
memory (baits bitten, feints read) carry over from turn to turn.

:class:`PlanFollower` holds that shared part: the plan agents, the block
bookkeeping and the deployment plans made up front.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from battleline.agents.base import Agent
    from battleline.env.rules.battle import Battle

Block = tuple[int, int]
"""A block: (game turn, active side), or (0, -1) for the deployment stage and Vanguard moves."""

DEPLOYMENT_BLOCK: Block = (0, -1)
"""The block of the deployment stage (Vanguard moves included)."""


def block_of(battle: Battle) -> Block:
    """The block a decision belongs to: (game turn, active side), or (0, -1) during deployment and Vanguard."""
    s = battle.state
    if s.phase == "deployment" or s.turn == 0:
        return DEPLOYMENT_BLOCK
    return (s.turn, s.active)


def make_plan_agents(portfolio: Sequence[str], battle: Battle, side: int) -> dict[str, Agent]:
    """Fresh agents for the plans of ``portfolio`` (registry names), seeded by position, reset for ``side``."""
    from battleline.agents.registry import make_agent

    plans = {n: make_agent(n, seed=i) for i, n in enumerate(portfolio)}
    for agent in plans.values():
        agent.reset(battle, side)
    return plans


def ensure_plan(agent: Agent | None, battle: Battle) -> None:
    """Give a scripted agent its deployment plan now (as its first decision would), so that copies of it
    share one plan instead of each making it again, and a plan chosen late still has one."""
    if agent is not None and getattr(agent, "plan", False) is None:
        agent.plan = agent.make_plan(battle)  # type: ignore[attr-defined]


class PlanFollower:
    """The shared part of the plan-choosing agents (see the module docstring).

    Args:
        portfolio: registry names of the plans, the default plan (played until the first choice) first.

    Attributes:
        side: 0 blue, 1 red.
        plans: plan name -> its persistent agent (empty before :meth:`reset`).
        current: the plan answering now.
        block: the last block a plan was chosen for (None before the first).
    """

    def __init__(self, portfolio: Sequence[str]) -> None:
        self.portfolio = tuple(portfolio)
        self.side = 0
        self.plans: dict[str, Agent] = {}
        self.current = self.portfolio[0]
        self.block: Block | None = None

    def reset(self, battle: Battle, side: int) -> None:
        """Start a battle on ``side``: fresh plan agents, the default plan current."""
        self.side = side
        self.plans = make_plan_agents(self.portfolio, battle, side)
        self.current = self.portfolio[0]
        self.block = None

    def choosing(self, battle: Battle) -> bool:
        """Whether the decision pending in ``battle`` opens one of the side's blocks (a new plan is due);
        marks the block as chosen for when it does."""
        block = block_of(battle)
        if block != self.block and (block == DEPLOYMENT_BLOCK or block[1] == self.side):
            self.block = block
            return True
        return False

    def ensure_plans(self, battle: Battle) -> None:
        """Make every plan agent's deployment plan that is not made yet (:func:`ensure_plan`)."""
        for agent in self.plans.values():
            ensure_plan(agent, battle)

    def act(self, battle: Battle) -> Any:
        """The current plan's order for the pending decision; a new block of the side first makes the plans'
        deployment plans and switches to :meth:`next_plan`'s choice."""
        if not self.plans:
            self.reset(battle, battle.pending.player or 0)
        if self.choosing(battle):
            self.ensure_plans(battle)
            self.current = self.next_plan(battle)
        return self.plans[self.current].act(battle)

    def next_plan(self, battle: Battle) -> str:
        """The plan for the block opening in ``battle`` (:attr:`block`); the subclasses' choice.

        Raises:
            NotImplementedError: always, here.
        """
        raise NotImplementedError


class PlanSequenceAgent(PlanFollower):
    """``sequence:A+B+...``: a fixed sequence of plans, one per block of the side, the last one repeated.

    The first plan deploys (the deployment block), the second plays the side's first player turn, and so
    on; e.g. ``sequence:control_zones+line_advance`` deploys with ``control_zones``' template and then
    advances as ``line_advance`` every turn. A baseline for plan-choosing agents (the search, ``plans:PATH``):
    the same plans, chosen without looking at the position.

    Args:
        plans: the registry names, in block order (at least one).
        seed: unused (the agent is deterministic); accepted for the registry's signature.
        name: the display name (default ``sequence:`` and the plans joined by ``+``).

    Raises:
        ValueError: no plan, or a name that is not a scripted field agent (one line).
    """

    def __init__(self, plans: Sequence[str], seed: int = 0, name: str | None = None) -> None:
        from battleline.agents.registry import AGENT_NAMES

        if not plans or any(not p for p in plans):
            raise ValueError("a plan sequence needs plan names joined by '+', e.g. sequence:control_zones+line_advance")
        for p in plans:
            if p not in AGENT_NAMES or p == "random" or p.startswith("siege_"):
                raise ValueError(f"'{p}' is not a scripted field agent")
        self.sequence = tuple(plans)
        super().__init__(tuple(dict.fromkeys(plans)))
        self.name = name or "sequence:" + "+".join(plans)
        self.blocks = 0

    def reset(self, battle: Battle, side: int) -> None:
        """Start a battle on ``side``, at the sequence's first plan."""
        super().reset(battle, side)
        self.blocks = 0

    def next_plan(self, battle: Battle) -> str:
        """The sequence's next plan (the last one once the sequence is used up)."""
        plan = self.sequence[min(self.blocks, len(self.sequence) - 1)]
        self.blocks += 1
        return plan


__all__ = ["DEPLOYMENT_BLOCK", "Block", "PlanFollower", "PlanSequenceAgent", "block_of", "ensure_plan",
           "make_plan_agents"]
