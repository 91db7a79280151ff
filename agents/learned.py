"""Learned agents: a trained sb3-contrib ``MaskablePPO`` policy behind the Agent protocol.

:class:`PolicyAgent` plays a side of a battle with a saved model (``model.zip``)
or a live one (during training). At each decision it builds the same
observation the training environment gives (:class:`env.observation.Observer`,
from its own side) and passes the exact action mask of the engine's legal
actions at prediction, so the policy only ever picks legal orders. If a policy
nevertheless picks an index the mask forbids, the agent counts it in
:attr:`PolicyAgent.illegal` and plays ``end_phase`` (always legal) instead.

The model's observation space fixes the unit slots per side ``n`` (``units``
has shape (2n, N_UNIT_FEAT)), whether raster ``planes`` and unit-pair features
(``pairs``, :mod:`agents.pair_features`) are observed, so a
model trained on one scenario plays any battle with at most ``n`` units a side.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from battleline.agents.pair_features import N_PAIR_FEAT, PAIRS_KEY, pair_features
from battleline.env.encoding import ActionCodec
from battleline.env.observation import Observer
from battleline.env.rules.actions import Action
from battleline.env.siege_encoding import ORDERS as SIEGE_ORDERS
from battleline.env.siege_encoding import SiegeActionCodec

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

_MODEL_CACHE: dict[tuple[str, int], Any] = {}
_CACHE_SIZE = 8


class ModelLoadError(ValueError):
    """A saved policy could not be loaded; the message is one line naming the file."""


def model_file(path: str | Path) -> Path:
    """The file a model path names: ``path`` itself, or ``path`` + ``.zip`` when only that exists
    (``run/model`` → ``run/model.zip``, as SB3's ``load`` reads it; ``run/model.backup`` is never ``run/model.zip``)."""
    p = Path(path)
    zipped = p.with_name(p.name + ".zip") if p.name else p
    if str(path) and not p.exists() and p.suffix != ".zip" and zipped.is_file():
        return zipped
    return p


def model_file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot name a saved model file (one line), or None when it is a file.

    The shared check of ``--model``, ``model:PATH`` agents and training configs' ``model:`` opponents.
    """
    if not str(path).strip():
        return "no model path given (expected model:PATH to a model.zip)"
    p = model_file(path)
    if p.is_dir():
        return f"{path} is a directory, not a model file (model.zip)"
    if not p.is_file():
        return f"model file not found: {path}"
    return None


def load_model(path: str | Path) -> Any:
    """Load a saved ``MaskablePPO`` on the CPU, cached by path and modification time.

    The returned model is shared between callers: use it for prediction only.

    Raises:
        ModelLoadError: the file is missing or is not a MaskablePPO model, or its policy's weights
            are not all finite (a diverged training run).
    """
    problem = model_file_problem(path)
    if problem is not None:
        raise ModelLoadError(problem)
    p = model_file(path)
    key = (str(p.resolve()), p.stat().st_mtime_ns)
    model = _MODEL_CACHE.get(key)
    if model is None:
        from sb3_contrib import MaskablePPO

        try:
            model = MaskablePPO.load(str(p), device="cpu")
        except Exception as exc:  # noqa: BLE001 - any failure to unpickle is a bad model file
            msg = " ".join(str(exc).split())[:200]
            raise ModelLoadError(f"{path}: not a MaskablePPO model ({type(exc).__name__}: {msg})") from None
        if not all(bool(param.isfinite().all()) for param in model.policy.parameters()):
            raise ModelLoadError(f"{path}: the policy's weights are not finite (NaN or infinite): "
                                 f"its training diverged, and it cannot choose an action")
        if len(_MODEL_CACHE) >= _CACHE_SIZE:
            _MODEL_CACHE.pop(next(iter(_MODEL_CACHE)))
        _MODEL_CACHE[key] = model
    return model


def _observation_mismatch(model_space: spaces.Dict, expected: spaces.Dict, pair_slots: int) -> str | None:
    """How a model's observation space differs from the one :class:`Observer` builds (``expected``, plus the
    ``pairs`` key of ``pair_slots`` slots when not 0), in a few words, or None when every key's shape matches."""
    want = {key: tuple(box.shape) for key, box in expected.spaces.items()}
    if pair_slots:
        want[PAIRS_KEY] = (pair_slots, pair_slots, N_PAIR_FEAT)
    got = {key: tuple(box.shape or ()) for key, box in model_space.spaces.items()}
    for key, shape in want.items():
        if key not in got:
            return f"the model's observation lacks {key!r}"
        if got[key] != shape:
            return f"the model's {key!r} has shape {got[key]}, expected {shape}"
    extra = sorted(set(got) - set(want))
    return f"the model's observation has unknown keys {', '.join(map(repr, extra))}" if extra else None


class PolicyAgent:
    """An agent that plays with a MaskablePPO policy, masks passed at prediction.

    Args:
        model: a path to a saved model (``.zip``) or a live ``MaskablePPO``.
        deterministic: play the most likely allowed action (True) or sample from
            the masked action distribution with the agent's own generator (False).
        seed: seeds the sampling generator (unused when deterministic).
        name: the display name (default ``model:<path>`` or ``policy``).

    Raises:
        ModelLoadError: the file cannot be loaded (:func:`load_model`), or the model's observation space
            (keys and shapes) or action space is not the one :class:`Observer` and the action codec give
            (one line naming the model).

    Attributes:
        decisions: decisions answered since creation (int).
        illegal: decisions where the policy chose an index its mask forbids (must stay 0).
        n: unit slots per side of the model's observation space.
    """

    def __init__(self, model: str | Path | Any, deterministic: bool = True, seed: int = 0,
                 name: str | None = None) -> None:
        if isinstance(model, (str, Path)):
            self.path: str | None = str(model)
            self.model = load_model(model)
        else:
            self.path = None
            self.model = model
        self.name = name or (f"model:{self.path}" if self.path else "policy")
        self.deterministic = deterministic
        self.rng = np.random.default_rng(seed)
        space = self.model.observation_space
        if not isinstance(space, spaces.Dict) or not {"units", "action_mask"} <= set(space.spaces):
            raise ModelLoadError(f"{self.name}: the model does not observe a battle (its observation space is "
                                 f"{space}, not a Dict of units, globals and action_mask)")
        self.n = int(space["units"].shape[0]) // 2
        self.codec = ActionCodec(self.n)
        extra = int(space["action_mask"].shape[0]) - self.codec.size
        if extra > 0 and extra % (self.n * len(SIEGE_ORDERS)) == 0:  # trained on a siege: its castle block
            self.codec = SiegeActionCodec(self.n, extra // (self.n * len(SIEGE_ORDERS)))
        self.observer = Observer(self.codec, planes="planes" in space.spaces)
        self.pairs = PAIRS_KEY in space.spaces  # the unit-pair features (agents.pair_features)
        if int(space["action_mask"].shape[0]) != self.codec.size:
            raise ModelLoadError(
                f"{self.name}: the model's action mask has {space['action_mask'].shape[0]} entries but "
                f"{self.n} unit slots give {self.codec.size}; was it trained with another action codec?"
            )
        mismatch = _observation_mismatch(space, self.observer.space(), self.n if self.pairs else 0)
        actions = getattr(self.model.action_space, "n", None)
        if mismatch is None and actions != self.codec.size:
            mismatch = f"the model chooses among {actions} actions but its action mask has {self.codec.size} entries"
        if mismatch is not None:
            raise ModelLoadError(f"{self.name}: {mismatch}; was it trained with another version of battleline?")
        self.side = 0
        self.decisions = 0
        self.illegal = 0

    def reset(self, battle: Battle, side: int) -> None:
        """Remember the side (0 blue, 1 red); the sampling generator keeps its stream across battles."""
        self.side = side

    def act(self, battle: Battle) -> Action:
        """The policy's order for the pending decision (an element of ``battle.legal_actions()``)."""
        mask = self.codec.mask(battle, self.side)
        obs = self.observer.observe(battle, self.side, mask)
        if self.pairs:
            obs[PAIRS_KEY] = pair_features(battle, self.side, self.n)
        index = self.choose(obs, mask)
        return self.codec.decode(index, battle, self.side)

    def __call__(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """:data:`env.battle_env.PolicyFn` form: an action index from an observation and its mask."""
        return self.choose(observation, mask)

    def action_probabilities(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> np.ndarray:
        """The masked policy distribution: float64 of shape (size,), zero where ``mask`` is False."""
        import torch

        policy = self.model.policy
        obs_t, _ = policy.obs_to_tensor(observation)
        with torch.no_grad():
            dist = policy.get_distribution(obs_t, action_masks=np.asarray(mask, dtype=bool)[None, :])
            probs = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        return probs

    def choose(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> int:
        """An action index allowed by ``mask`` (bool of shape (size,)); see the class notes on illegal picks."""
        mask = np.asarray(mask, dtype=bool)
        self.decisions += 1
        if self.deterministic:
            action, _ = self.model.predict(observation, deterministic=True, action_masks=mask)
            index = int(np.asarray(action).reshape(-1)[0])
        else:
            probs = self.action_probabilities(observation, mask)
            total = probs.sum()
            index = int(self.rng.choice(len(probs), p=probs / total)) if total > 0 else 0
        if not (0 <= index < mask.shape[0] and mask[index]):
            self.illegal += 1
            index = 0
        return index


__all__ = ["ModelLoadError", "PolicyAgent", "load_model", "model_file", "model_file_problem"]
