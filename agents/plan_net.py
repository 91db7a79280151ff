"""The plan network: a policy over the scripted plans, distilled from the search, that plays without search.

The search (:mod:`agents.search`) decides, at the start of each of its side's
blocks, which scripted plan to follow, by rollouts. The plan network learns
that decision from the search's labels (expert iteration,
:mod:`training.expert_iteration`) and then makes it alone from the position:
one forward pass of a small multilayer perceptron over the observation the
environments give (:class:`env.observation.Observer`: the unit table and the
global features, the table mirrored for red), ``(2n × N_UNIT_FEAT + N_GLOBAL_FEAT,)``
float32 in, one output per plan out (the logit of the search choosing it, or the
value of its rollouts, :data:`HEADS`). The chosen plan's scripted agent then
gives the orders of the block (:class:`agents.portfolio.PlanFollower`).

It serves three roles:

* an agent, ``plans:PATH`` (:class:`PlanNetAgent`): the most likely plan at
  each block, no rollouts;
* the search's prior (``search:...:prior=PATH``): the candidates it tries
  first or only (``top``);
* the search's rollout policy: in a rollout, the search's side follows the
  candidate for the block searched and the network's choice at each later
  block.

A saved network (``torch.save`` of a dict, read with ``weights_only=True``)
holds :data:`FORMAT`, the portfolio, the unit slots ``n``, the layer sizes
and the weights.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from battleline.agents.portfolio import PlanFollower
from battleline.env.encoding import ActionCodec
from battleline.env.observation import N_GLOBAL_FEAT, N_UNIT_FEAT, Observer

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

PLAN_NET_PREFIX = "plans:"
"""Names ``plans:PATH`` build a :class:`PlanNetAgent` from the network saved at PATH."""
FORMAT = "battleline-plan-net/1"
"""The ``format`` entry of a saved plan network."""
DEFAULT_HIDDEN = (256, 256)
"""Hidden layer widths of a new network."""
HEADS = ("policy", "value")
"""What a network's outputs are: ``policy`` logits of the search's choice, or the ``value`` of each plan (the
search's mean rollout value for the searching side, in [−2, 2], :func:`agents.search.rollout_value`)."""
VALUE_TEMPERATURE = 0.1
"""A value head's probabilities are softmax(values / VALUE_TEMPERATURE) (the most likely plan is the most valued)."""


class PlanNetError(ValueError):
    """A plan network file that is missing or is not a plan network; one line naming the file."""


def feature_size(unit_slots: int) -> int:
    """Inputs of a network for ``unit_slots`` slots per side: 2n × N_UNIT_FEAT + N_GLOBAL_FEAT."""
    return 2 * unit_slots * N_UNIT_FEAT + N_GLOBAL_FEAT


class PlanFeatures:
    """The network's input for a side of a battle: the observer's unit table, flattened, then the globals.

    Args:
        unit_slots: unit slots per side ``n`` (a side with more units raises ValueError on :meth:`__call__`).
    """

    def __init__(self, unit_slots: int) -> None:
        self.n = int(unit_slots)
        self.observer = Observer(ActionCodec(self.n))

    def __call__(self, battle: Battle, side: int) -> np.ndarray:
        """float32 of shape (:func:`feature_size`,): ``side``'s view of ``battle`` (0 blue, 1 red)."""
        units = self.observer.units(battle, side)
        return np.concatenate([units.reshape(-1), self.observer.global_features(battle, side)]).astype(np.float32)


class PlanNet(nn.Module):
    """A multilayer perceptron from the features to one output per plan.

    Args:
        inputs: feature count (:func:`feature_size`).
        plans: the portfolio's size K.
        hidden: hidden layer widths (ReLU between layers, dropout ``dropout`` after each).
        head: one of :data:`HEADS`: the outputs are logits (``policy``) or plan values (``value``).

    Input float32 (batch, inputs); output float32 (batch, K).

    Raises:
        ValueError: an unknown ``head``.
    """

    def __init__(self, inputs: int, plans: int, hidden: Sequence[int] = DEFAULT_HIDDEN, dropout: float = 0.1,
                 head: str = "policy") -> None:
        if head not in HEADS:
            raise ValueError(f"head must be one of {', '.join(HEADS)}, got '{head}'")
        super().__init__()
        self.head = head
        layers: list[nn.Module] = []
        width = inputs
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
            width = h
        layers.append(nn.Linear(width, plans))
        self.body = nn.Sequential(*layers)
        self.inputs, self.plans, self.hidden, self.dropout = inputs, plans, tuple(hidden), dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (batch, K) for features (batch, inputs)."""
        return self.body(x)


class PlanPolicy:
    """A trained :class:`PlanNet` with its portfolio and features: the plan probabilities of a position.

    Args:
        net: the network (put in evaluation mode).
        portfolio: the plan names, in the network's output order.
        unit_slots: unit slots per side of its features.
    """

    def __init__(self, net: PlanNet, portfolio: Sequence[str], unit_slots: int) -> None:
        if net.plans != len(portfolio) or net.inputs != feature_size(unit_slots):
            raise ValueError(f"a network of {net.inputs} inputs and {net.plans} plans does not fit "
                             f"{unit_slots} unit slots and {len(portfolio)} plans")
        self.net = net.eval()
        self.portfolio = tuple(portfolio)
        self.unit_slots = int(unit_slots)
        self.features = PlanFeatures(unit_slots)

    def probabilities(self, battle: Battle, side: int) -> np.ndarray:
        """float64 (K,): the network's probability of each plan for ``side`` in ``battle`` (for a value head,
        softmax of the values over :data:`VALUE_TEMPERATURE`)."""
        x = torch.from_numpy(self.features(battle, side))[None, :]
        scale = VALUE_TEMPERATURE if self.net.head == "value" else 1.0
        with torch.no_grad():
            p = torch.softmax(self.net(x) / scale, dim=1)[0]
        return p.double().numpy()

    def choose(self, battle: Battle, side: int) -> str:
        """The most likely plan (the first of equals in portfolio order)."""
        return self.portfolio[int(np.argmax(self.probabilities(battle, side)))]

    def save(self, path: str | Path, meta: dict[str, Any] | None = None) -> None:
        """Write the network to ``path`` (:data:`FORMAT`; ``meta`` is stored as given: plain values only)."""
        torch.save({"format": FORMAT, "portfolio": list(self.portfolio), "unit_slots": self.unit_slots,
                    "inputs": self.net.inputs, "hidden": list(self.net.hidden), "dropout": self.net.dropout,
                    "head": self.net.head, "state_dict": self.net.state_dict(), "meta": dict(meta or {})}, str(path))


def load_plan_policy(path: str | Path) -> PlanPolicy:
    """The plan network saved at ``path``, cached by path and modification time (share it read-only).

    Raises:
        PlanNetError: the file is missing, unreadable, or not a plan network of this format.
    """
    if not str(path).strip():
        raise PlanNetError(f"{PLAN_NET_PREFIX} needs the path of a plan network, as {PLAN_NET_PREFIX}PATH")
    p = Path(path)
    if p.is_dir():
        raise PlanNetError(f"{path}: is a directory, not a plan network")
    if not p.is_file():
        raise PlanNetError(f"plan network not found: {path}")
    return _load(str(p.resolve()), p.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: int) -> PlanPolicy:
    """Read and check one saved network (see :func:`load_plan_policy`)."""
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001 - any unreadable file is the user's file fault
        # torch's own message talks of weights_only and trusting the file: beside the point for a file that is not ours
        raise PlanNetError(f"{path}: not a plan network (torch cannot read it as a saved plan network)") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PlanNetError(f"{path}: not a plan network (no format '{FORMAT}')")
    try:
        portfolio = _checked_portfolio(data["portfolio"])
        net = PlanNet(int(data["inputs"]), len(portfolio), [int(h) for h in data["hidden"]],
                      float(data["dropout"]), str(data.get("head", "policy")))
        net.load_state_dict(data["state_dict"])
        return PlanPolicy(net, portfolio, int(data["unit_slots"]))
    except (KeyError, TypeError, ValueError, RuntimeError) as exc:
        raise PlanNetError(f"{path}: a damaged plan network ({type(exc).__name__}: {str(exc).splitlines()[0][:120]})") from None


def _checked_portfolio(names: Any) -> list[str]:
    """A saved portfolio: a list of distinct registered agent names (the plans a follower plays).

    Raises:
        ValueError: not a list of names, a name that is not a registered agent, or a name given twice.
    """
    from battleline.agents.registry import AGENT_NAMES

    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ValueError("portfolio is not a list of agent names")
    for i, name in enumerate(names):
        if name not in AGENT_NAMES:
            raise ValueError(f"portfolio entry '{name}' is not a registered agent")
        if name in names[:i]:
            raise ValueError(f"portfolio names '{name}' twice")
    return list(names)


class PlanNetAgent(PlanFollower):
    """``plans:PATH``: the plan network playing without search.

    At the first decision of each of its side's blocks it follows the network's most likely plan; that
    plan's scripted agent answers the block's decisions (:class:`agents.portfolio.PlanFollower`).

    Args:
        policy: the network, or the path of a saved one.
        seed: unused (the agent is deterministic); accepted for the registry's signature.
        name: the display name (default ``plans:PATH`` or ``plans``).

    Attributes:
        choices: (block, plan) of each choice of the current battle.

    Raises:
        PlanNetError: a path that is not a plan network.
    """

    def __init__(self, policy: PlanPolicy | str | Path, seed: int = 0, name: str | None = None) -> None:
        path = None if isinstance(policy, PlanPolicy) else str(policy)
        self.policy = policy if isinstance(policy, PlanPolicy) else load_plan_policy(policy)
        super().__init__(self.policy.portfolio)
        self.name = name or (f"{PLAN_NET_PREFIX}{path}" if path else "plans")
        self.choices: list[tuple[tuple[int, int], str]] = []

    def reset(self, battle: Battle, side: int) -> None:
        """Start a battle on ``side`` (fresh plan agents; see :meth:`PlanFollower.reset`)."""
        super().reset(battle, side)
        self.choices = []

    def next_plan(self, battle: Battle) -> str:
        """The network's most likely plan for the side, recorded in :attr:`choices`."""
        plan = self.policy.choose(battle, self.side)
        self.choices.append((self.block or (0, -1), plan))
        return plan


__all__ = ["FORMAT", "HEADS", "PLAN_NET_PREFIX", "VALUE_TEMPERATURE", "PlanFeatures", "PlanNet", "PlanNetAgent",
           "PlanNetError", "PlanPolicy", "feature_size", "load_plan_policy"]
