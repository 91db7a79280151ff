"""Agent names -> agents.

``make_agent("line_advance", seed=3)`` builds a fresh agent. Every name in
:data:`AGENT_NAMES` is a playable agent; anything else raises
:class:`UnknownAgentError`. The scripted agents of ``agents/scripted.py`` come
first, then the tactical agents of ``agents/tactical.py`` (deployment
templates with their manoeuvres, the manoeuvre agents and the ``open_loop``
baseline), then the siege agents of ``agents/siege.py``.

Two families of parametrised names are built by :func:`make_agent` without
being listed in :data:`AGENT_NAMES` (so ``all`` and ``all-scripted`` stay the
fixed agents): ``model:PATH``, ``plans:PATH``, ``sequence:A+B+...`` and ``search`` / ``search:KEY=VALUE:...``.
"""

from __future__ import annotations

from collections.abc import Callable

from battleline.agents.base import Agent
from battleline.agents.random_agent import RandomAgent
from battleline.agents.scripted import LineAdvanceAgent, PincersAgent, RefusedFlankAgent
from battleline.agents.siege import SiegeAttackerAgent, SiegeDefenderAgent
from battleline.agents.tactical import TACTICAL_AGENTS

AGENT_NAMES = ["random", "line_advance", "pincers", "refused_flank", *TACTICAL_AGENTS, "siege_attacker", "siege_defender"]
"""The registered agent names, in display order."""

_FACTORIES: dict[str, Callable[[int], Agent]] = {
    "random": RandomAgent,
    "line_advance": LineAdvanceAgent,
    "pincers": PincersAgent,
    "refused_flank": RefusedFlankAgent,
    **TACTICAL_AGENTS,
    "siege_attacker": SiegeAttackerAgent,
    "siege_defender": SiegeDefenderAgent,
}

SEARCH_NAME = "search"
"""Names ``search`` and ``search:KEY=VALUE:...`` build the search agent (:class:`agents.search.SearchAgent`)."""

MODEL_PREFIX = "model:"
"""Names ``model:PATH`` load the trained policy saved at PATH (:class:`agents.learned.PolicyAgent`)."""

SEQUENCE_PREFIX = "sequence:"
"""Names ``sequence:A+B+...`` build a fixed plan sequence (:class:`agents.portfolio.PlanSequenceAgent`)."""
PLANS_PREFIX = "plans:"
"""Names ``plans:PATH`` load the plan network saved at PATH (:class:`agents.plan_net.PlanNetAgent`)."""


class UnknownAgentError(ValueError):
    """An agent name that is not registered; the message is one line listing the known names."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown agent '{name}'; known agents: {', '.join(AGENT_NAMES)}")
        self.agent_name = name


class AgentNameError(UnknownAgentError):
    """A parametrised agent name (``model:``, ``plans:``, ``sequence:``, ``search:``) whose parameter is at fault;
    one line, the reason first, then the name."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(name)
        self.args = (f"{reason} (agent '{name}')",)


class ModelAgentError(AgentNameError):
    """A ``model:PATH`` name whose file is missing or is not a loadable policy; one line, the reason first."""


class PlanNetAgentError(AgentNameError):
    """A ``plans:PATH`` name whose file is missing or is not a plan network; one line, the reason first."""


class SequenceAgentError(AgentNameError):
    """A ``sequence:...`` name with a bad plan; one line, the reason first."""


class SearchAgentError(AgentNameError):
    """A ``search:...`` name with a bad parameter; one line, the reason first."""


def make_agent(name: str, seed: int = 0) -> Agent:
    """A new agent called ``name``, seeded with ``seed``.

    ``model:PATH`` builds a :class:`agents.learned.PolicyAgent` playing the
    saved MaskablePPO policy at PATH deterministically, masks passed at
    prediction (models are cached per process). ``search`` and
    ``search:KEY=VALUE:...`` build a :class:`agents.search.SearchAgent`
    (portfolio search over the scripted plans; see :mod:`agents.search`).
    ``plans:PATH`` builds a :class:`agents.plan_net.PlanNetAgent` (the plan
    network saved at PATH choosing a scripted plan per turn, without search).
    ``sequence:A+B+...`` builds a :class:`agents.portfolio.PlanSequenceAgent`
    (plan A deploys, B plays the first turn, ..., the last plan every later turn).

    Raises:
        UnknownAgentError: ``name`` is not in :data:`AGENT_NAMES`;
            :class:`ModelAgentError` (a subclass, "model file not found: PATH"
            or the loader's reason) when ``name`` is ``model:PATH`` and the file
            at PATH is missing or not a policy; :class:`SearchAgentError` (a subclass, the
            parameter's fault first) when ``name`` is ``search:...`` with a bad parameter;
            :class:`PlanNetAgentError` (a subclass) when ``name`` is ``plans:PATH`` and PATH is not a plan network;
            :class:`SequenceAgentError` (a subclass) for a ``sequence:`` name with a plan that is not a
            scripted field agent.
    """
    if name.startswith(MODEL_PREFIX):
        from battleline.agents.learned import ModelLoadError, PolicyAgent, model_file_problem

        problem = model_file_problem(name[len(MODEL_PREFIX):])
        if problem is not None:
            raise ModelAgentError(name, problem)
        try:
            return PolicyAgent(name[len(MODEL_PREFIX):], deterministic=True, seed=seed, name=name)
        except ModelLoadError as exc:
            raise ModelAgentError(name, str(exc)) from None
    if name.startswith(PLANS_PREFIX):
        from battleline.agents.plan_net import PlanNetAgent, PlanNetError

        try:
            return PlanNetAgent(name[len(PLANS_PREFIX):], seed=seed, name=name)
        except PlanNetError as exc:
            raise PlanNetAgentError(name, str(exc)) from None
    if name.startswith(SEQUENCE_PREFIX):
        from battleline.agents.portfolio import PlanSequenceAgent

        try:
            return PlanSequenceAgent(name[len(SEQUENCE_PREFIX):].split("+"), seed=seed, name=name)
        except ValueError as exc:
            raise SequenceAgentError(name, str(exc)) from None
    if name == SEARCH_NAME or name.startswith(SEARCH_NAME + ":"):
        from battleline.agents.search import SearchSpecError, make_search_agent

        try:
            return make_search_agent(name, seed=seed)
        except SearchSpecError as exc:
            raise SearchAgentError(name, str(exc)) from None
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownAgentError(name)
    return factory(seed)
