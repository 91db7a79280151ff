"""Agent names -> agents.

``make_agent("line_advance", seed=3)`` builds a fresh agent. Every name in
:data:`AGENT_NAMES` is a playable agent; anything else raises
:class:`UnknownAgentError`.
"""

from __future__ import annotations

from typing import Callable

from agents.base import Agent
from agents.random_agent import RandomAgent
from agents.scripted import LineAdvanceAgent, PincersAgent, RefusedFlankAgent

AGENT_NAMES = ["random", "line_advance", "pincers", "refused_flank"]
"""The registered agent names, in display order."""

_FACTORIES: dict[str, Callable[[int], Agent]] = {
    "random": RandomAgent,
    "line_advance": LineAdvanceAgent,
    "pincers": PincersAgent,
    "refused_flank": RefusedFlankAgent,
}

MODEL_PREFIX = "model:"
"""Names ``model:PATH`` are reserved for trained policies loaded from PATH (not available yet)."""


class UnknownAgentError(ValueError):
    """An agent name that is not registered; the message is one line listing the known names."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown agent '{name}'; known agents: {', '.join(AGENT_NAMES)}")
        self.agent_name = name


def make_agent(name: str, seed: int = 0) -> Agent:
    """A new agent called ``name``, seeded with ``seed``.

    Raises:
        UnknownAgentError: ``name`` is not in :data:`AGENT_NAMES`. Until trained
            policies can be loaded, ``model:PATH`` names are unknown too.
    """
    # Hook for learned agents: a name starting with MODEL_PREFIX will load the
    # policy saved at PATH (agents/learned.py, with training/). It is not
    # implemented yet, so such names fall through to UnknownAgentError.
    factory = _FACTORIES.get(name)
    if factory is None:
        raise UnknownAgentError(name)
    return factory(seed)
