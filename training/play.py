"""Play one battle between two agents.

The loop is the engine's decision-point pattern: whoever
``battle.pending.player`` names chooses one of ``battle.legal_actions()``, the
engine applies it and runs the rules to the next decision, until the game ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from battleline.env.rules.battle import Battle
from battleline.env.rules.state import SIDES

if TYPE_CHECKING:
    from battleline.agents.base import Agent
    from battleline.agents.learned import PolicyAgent


class PlayError(RuntimeError):
    """A battle could not be played to its end (an agent misbehaved, or the decision cap was hit)."""


class AgentError(PlayError):
    """An agent returned an action that is not legal now. The message names the agent and its side."""


def agent_seed(seed: int, side: int) -> int:
    """The seed an agent gets in a battle played with ``seed`` from ``side`` (0 blue, 1 red).

    Derived with :class:`numpy.random.SeedSequence`, so the two agents of a
    battle draw independent streams. Returns an int in [0, 2**31).
    """
    return int(np.random.SeedSequence([int(seed), 1 + int(side)]).generate_state(1)[0] & 0x7FFFFFFF)


def make_agent(name: str, seed: int = 0) -> Agent:
    """``agents.registry.make_agent`` (imported on first use).

    Raises:
        UnknownAgentError: ``name`` is not a registered agent (a ValueError
            whose one-line message lists the known names).
    """
    from battleline.agents.registry import make_agent as _make

    return _make(name, seed=seed)


def agent_names() -> list[str]:
    """The registered agent names (``agents.registry.AGENT_NAMES``)."""
    from battleline.agents.registry import AGENT_NAMES

    return list(AGENT_NAMES)


def expand_agent_names(spec: str | list[str]) -> list[str]:
    """Expand an agent list such as ``"random,all-scripted"`` into names, in order, without repeats.

    ``all`` stands for every registered agent, ``all-scripted`` for every
    registered agent except ``random``, and ``all-field`` for those of
    ``all-scripted`` that play field battles (not the ``siege_`` roles). Names
    are not checked here: an unknown name fails in :func:`make_agent`.
    """
    tokens = spec.split(",") if isinstance(spec, str) else list(spec)
    out: list[str] = []
    for tok in (t.strip() for t in tokens):
        if not tok:
            continue
        if tok == "all":
            names = agent_names()
        elif tok == "all-scripted":
            names = [n for n in agent_names() if n != "random"]
        elif tok == "all-field":
            names = [n for n in agent_names() if n != "random" and not n.startswith("siege_")]
        else:
            names = [tok]
        out += [n for n in names if n not in out]
    return out


def require_unit_slots(
    slots: int,
    label: str,
    scenario: str | Path | dict[str, Any],
    blue_armies: Sequence[str] | None = None,
    red_armies: Sequence[str] | None = None,
    elements: int | None = None,
    what: str = "model",
) -> None:
    """Check that a policy with ``slots`` unit slots a side (and ``elements`` castle elements) can play ``scenario``.

    A trained policy's action codec holds ``slots`` units a side (own and enemy),
    so it cannot play a battle in which a side fields more units
    (:func:`env.battle_env.scenario_unit_slots`, the scenario's own armies and
    any of ``blue_armies`` / ``red_armies``). A siege's castle orders need the
    codec's siege block (:mod:`env.siege_encoding`) with at least as many castle
    elements as the scenario's castle has; ``elements`` is the block's element
    count (0: trained without siege orders; None: not checked).

    ``what`` names the policy in the message ("model", "plan network").

    Raises:
        agents.learned.ModelLoadError: too few slots or castle elements (one line naming
            ``label``, what the model was trained with and what the scenario needs).
    """
    from battleline.agents.learned import ModelLoadError
    from battleline.env.battle_env import scenario_unit_slots
    from battleline.env.siege_encoding import castle_elements

    needs: list[str] = []
    needed = scenario_unit_slots(scenario, blue_armies, red_armies)
    if needed > slots:
        needs.append(f"fields up to {needed} units a side")
    castle = castle_elements(scenario) if elements is not None else 0
    if castle > (elements or 0):
        needs.append(f"is a siege with {castle} castle elements")
    if not needs:
        return
    shown = scenario.get("id", "<dict>") if isinstance(scenario, dict) else scenario
    has = f"{slots} unit slots a side"
    if castle > (elements or 0):
        has += f" and siege orders for {elements} castle elements" if elements else " and no siege orders"
    raise ModelLoadError(f"{label}: the {what} has {has} but scenario '{shown}' {' and '.join(needs)}")


def require_policy_fits(
    agent: PolicyAgent,
    label: str,
    scenario: str | Path | dict[str, Any],
    blue_armies: Sequence[str] | None = None,
    red_armies: Sequence[str] | None = None,
) -> None:
    """:func:`require_unit_slots` for a loaded policy: its unit slots and its siege block's castle elements.

    Raises:
        agents.learned.ModelLoadError: the policy's action codec cannot play ``scenario``.
    """
    from battleline.env.siege_encoding import SiegeActionCodec

    elements = agent.codec.elements if isinstance(agent.codec, SiegeActionCodec) else 0
    require_unit_slots(agent.n, label, scenario, blue_armies, red_armies, elements=elements)


def check_model_agents(
    scenario: str | Path | dict[str, Any],
    names: Sequence[str],
    blue_armies: Sequence[str] | None = None,
    red_armies: Sequence[str] | None = None,
) -> None:
    """Load every ``model:PATH`` agent among ``names`` and check it can play ``scenario`` (:func:`require_policy_fits`);
    likewise the plan network of every ``plans:PATH`` agent and ``search:...:prior=PATH`` (its unit slots).

    Other names are left alone; nothing is loaded when there is no such agent.

    Raises:
        UnknownAgentError: a ``model:`` or ``plans:`` file is missing or is not a policy / plan network, or a
            ``search:`` name with a bad parameter.
        agents.learned.ModelLoadError: a model or plan network has too few unit slots for the scenario, or a
            model lacks the siege orders (castle elements) its castle needs.
    """
    from battleline.agents.learned import PolicyAgent
    from battleline.agents.registry import MODEL_PREFIX

    for name in dict.fromkeys(names):
        if name.startswith(MODEL_PREFIX):
            agent = make_agent(name)
            assert isinstance(agent, PolicyAgent)  # make_agent builds one for every model: name
            require_policy_fits(agent, name, scenario, blue_armies, red_armies)
            continue
        slots = plan_network_slots(name)
        if slots is not None:
            require_unit_slots(slots, name, scenario, blue_armies, red_armies, what="plan network")


def plan_network_slots(name: str) -> int | None:
    """The unit slots a side of the plan network the agent ``name`` reads (``plans:PATH``, or a ``search:``
    name with ``prior=PATH``); None for an agent without one.

    Raises:
        UnknownAgentError: a bad ``plans:`` file or ``search:`` parameter (one line).
    """
    from battleline.agents.plan_net import PlanNetAgent
    from battleline.agents.registry import PLANS_PREFIX, SEARCH_NAME
    from battleline.agents.search import SearchAgent

    if not (name.startswith(PLANS_PREFIX) or name.startswith(SEARCH_NAME + ":")):
        return None
    agent = make_agent(name)
    if isinstance(agent, PlanNetAgent):
        return agent.policy.unit_slots
    return agent.prior.unit_slots if isinstance(agent, SearchAgent) and agent.prior is not None else None


def default_agents(scenario: str | Path | dict[str, Any]) -> str:
    """The default entrants / opponents for ``scenario``: ``all-field`` for a field battle, the siege roles
    (the ``siege_`` agents) for a siege (the scenario's ``modules`` include ``siege``).

    Raises:
        ConfigError: the scenario is invalid.
    """
    from battleline.env.rules.config import load_scenario

    if load_scenario(scenario).siege:
        return ",".join(n for n in agent_names() if n.startswith("siege_"))
    return "all-field"


def _label(agent: Agent | str) -> str:
    return agent if isinstance(agent, str) else str(getattr(agent, "name", type(agent).__name__))


def play_battle(
    scenario: str | Path | dict[str, Any],
    blue: str | Agent,
    red: str | Agent,
    seed: int,
    blue_army: str | None = None,
    red_army: str | None = None,
    max_decisions: int = 20000,
) -> Battle:
    """Play a whole battle and return it (``battle.is_over`` is True).

    Args:
        scenario: a scenario name in ``configs/scenarios``, a YAML path or a dict.
        blue, red: agent names (built with :func:`make_agent`, each with its own
            seed from :func:`agent_seed`) or ready agent objects.
        seed: the battle's dice seed; the same seed and agents give the same battle.
        blue_army, red_army: army-list ids overriding the scenario's.
        max_decisions: the most decisions (``apply`` calls) before giving up.

    Returns:
        The finished :class:`Battle`: ``result``, ``events`` and ``to_json()`` hold the game.

    Raises:
        ConfigError: the scenario or an army list is invalid.
        UnknownAgentError: an agent name is not registered.
        AgentError: an agent returned an illegal action (the message names it).
        PlayError: the game did not end within ``max_decisions`` decisions.
    """
    agents = [
        make_agent(a, seed=agent_seed(seed, side)) if isinstance(a, str) else a for side, a in enumerate((blue, red))
    ]
    battle = Battle.from_scenario(scenario, seed=seed, blue_army=blue_army, red_army=red_army)
    for side, agent in enumerate(agents):
        agent.reset(battle, side)
    decisions = 0
    while not battle.is_over:
        if decisions >= max_decisions:
            raise PlayError(
                f"the battle did not end within {max_decisions} decisions "
                f"(turn {battle.state.turn}, stage '{battle.state.stage}')"
            )
        side = battle.pending.player
        if side is None:  # pragma: no cover - the engine says game_over only when is_over
            break
        agent = agents[side]
        action = agent.act(battle)
        if action not in battle.legal_actions():
            raise AgentError(
                f"agent '{_label(agent)}' ({SIDES[side]}) returned an illegal action '{action}' "
                f"at turn {battle.state.turn}, decision '{battle.pending.kind}'"
            )
        battle.apply(action)
        decisions += 1
    return battle


def battle_summary(battle: Battle) -> dict[str, Any]:
    """A small summary of a finished (or running) battle.

    Returns a dict: ``winner``, ``vp`` {side: int}, ``turn``, ``decisions``
    (actions applied), ``destroyed`` {side: units of that side destroyed or off
    the table}, ``units`` {side: units of that side}.
    """
    res = battle.result
    units = battle.state.units
    return {
        "winner": res["winner"],
        "vp": dict(res["vp"]),
        "turn": res.get("turn", battle.state.turn),
        "decisions": len(battle.actions),
        "destroyed": {name: sum(1 for u in units if u.side == i and u.removed) for i, name in enumerate(SIDES)},
        "units": {name: sum(1 for u in units if u.side == i) for i, name in enumerate(SIDES)},
    }
