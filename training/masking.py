"""The masked action distribution of the learner, computed as sb3-contrib computes it, without its slow steps.

sb3-contrib's ``MaskableCategorical`` masks an action by setting its logit to ``-1e8`` and
normalising the logits again with ``torch.logsumexp``. On a CPU, ``exp`` of an argument far
below its underflow point (about -87 for float32) takes a slow path, some twenty times slower
per element than an ordinary one; with thousands of action indices of which a few dozen are
legal, almost every element takes it: on ``pitched_battle`` (5,704 indices) this one ``exp``,
forwards and backwards, was a third of MaskablePPO's update. The distribution is also
normalised three times per batch (once for the raw logits, once more when the constructor
"removes" a mask that was never applied, once for the masked logits) where the result needs
two.

:func:`logsumexp_last` gives bit for bit what ``torch.logsumexp(x, -1, keepdim=True)`` gives,
gradient included: it follows ATen's own steps (``amax``, ``exp_`` of ``x - max``, ``sum``,
``log_``, ``add_``; backwards ``grad * exp(x - result)``) but feeds ``exp`` a zero instead of any
argument below :data:`UNDERFLOW` and writes ``0`` in its place, which is what ``exp`` returns
there (its result underflows to +0 below -103.97 in float32 and -745.2 in float64), so each
element's result is the same. :class:`ExactMaskableCategorical` normalises with it and skips the
normalisation whose result is discarded; :class:`ExactMaskableCategoricalDistribution` builds it
for the policies (:class:`MaskedMultiInputPolicy`, ``training.unit_pairs.UnitPairPolicy``,
``training.factored.FactoredPolicy``). Same seed, same actions, log-probabilities, losses and
parameters: ``tests/test_masking.py`` compares them with sb3-contrib's own classes.

The rollout's step (one masked draw per env, no gradient) needs no distribution object:
:meth:`MaskedMultiInputPolicy.forward` draws through :func:`sample_masked`, the same tensor
operations without the objects' overhead and without ``torch.multinomial``'s input checks.
All of the above is the dense path: sb3-contrib's numbers bit for bit.

The ``mlp`` policy's plain ``nn.Linear`` head takes a sparse path instead (the default; set
``MaskedMultiInputPolicy.sparse_head = False`` for the dense one): a state of ``pitched_battle`` has
2 to about 200 legal action indices (median about 30) of 5,814, and a masked index has probability
exactly 0, so :func:`legal_columns` picks the indices legal anywhere in the batch,
:func:`sparse_log_probs` gathers those rows of the head's weight and bias (one small product) and
normalises over each row's legal ones, :func:`sparse_sample` draws among them (Gumbel-max) and
:func:`sparse_evaluate` gives the taken actions' log-probabilities and the entropies. The same
distribution, equal to floating-point rounding rather than bit for bit (log-probabilities,
entropies and gradients within a few 1e-6, ``tests/test_sparse_head.py``), drawn with other random
numbers; on ``pitched_battle`` a MaskablePPO step (rollout and update) takes about 40% less CPU time.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from sb3_contrib.common.maskable.distributions import (
    MaskableCategorical,
    MaskableCategoricalDistribution,
    MaybeMasks,
)
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy, MaskableMultiInputActorCriticPolicy
from stable_baselines3.common.type_aliases import PyTorchObs
from torch import nn
from torch.distributions import Categorical, Distribution

UNDERFLOW = {torch.float32: -128.0, torch.float64: -1024.0, torch.float16: -32.0, torch.bfloat16: -128.0}
"""Per dtype, an argument below which ``exp`` returns exactly +0 (float32 underflows below -103.97, float64 below
-745.2, float16 below -17.33; bfloat16 has float32's range)."""

HUGE_NEG = -1e8
"""The logit sb3-contrib gives a masked action index."""


def _exp_no_underflow(d: torch.Tensor) -> torch.Tensor:
    """``d.exp_()`` (in place, on a temporary), computing ``exp`` only where it does not underflow to +0."""
    low = d < UNDERFLOW.get(d.dtype, -1024.0)
    return d.masked_fill_(low, 0.0).exp_().masked_fill_(low, 0.0)


def _logsumexp_last_value(x: torch.Tensor) -> torch.Tensor:
    """The value of :func:`logsumexp_last` (no autograd): ATen's ``logsumexp`` steps with :func:`_exp_no_underflow`."""
    maxes = torch.amax(x, -1, keepdim=True)
    maxes.masked_fill_(maxes.abs() == float("inf"), 0)
    return _exp_no_underflow(x - maxes).sum(-1, keepdim=True).log_().add_(maxes)


class _LogSumExpLast(torch.autograd.Function):
    """``torch.logsumexp(x, -1, keepdim=True)`` with its gradient, element for element as ATen computes them."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:  # noqa: D102 - see the class docstring
        result = _logsumexp_last_value(x)
        ctx.save_for_backward(x, result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:  # noqa: D102 - see the class docstring
        x, result = ctx.saved_tensors
        return grad * _exp_no_underflow(x - result)


def logsumexp_last(x: torch.Tensor) -> torch.Tensor:
    """``torch.logsumexp(x, dim=-1, keepdim=True)``, bit for bit and with the same gradient, fast where most of
    ``x`` lies far below its maximum (masked logits).

    Args:
        x: floating tensor of shape (..., n), n ≥ 1.

    Returns:
        tensor of shape (..., 1), ``x``'s dtype.
    """
    return _LogSumExpLast.apply(x)


class ExactMaskableCategorical(MaskableCategorical):
    """sb3-contrib's ``MaskableCategorical`` with the same logits, probabilities, samples and gradients,
    normalising masked logits through :func:`logsumexp_last`.

    Build it with :meth:`from_logits` to skip the constructor's second normalisation (whose result a mask
    then replaces); the ordinary constructor behaves as sb3-contrib's.
    """

    @classmethod
    def from_logits(cls, logits: torch.Tensor, masks: MaybeMasks = None) -> ExactMaskableCategorical:
        """What ``MaskableCategorical(logits=logits)`` followed by ``apply_masking(masks)`` holds.

        Args:
            logits: float tensor of shape (batch, n_actions), unnormalised.
            masks: bool array or tensor of ``logits``' size (True: allowed), or None (no mask).

        Raises:
            ValueError: ``logits`` has no dimension (as torch's ``Categorical``).
        """
        dist = cls.__new__(cls)
        dist.masks = None
        Categorical.__init__(dist, logits=logits)
        dist._original_logits = dist.logits
        dist.apply_masking(masks)
        return dist

    def apply_masking(self, masks: MaybeMasks) -> None:
        """As ``MaskableCategorical.apply_masking``: masked indices get the logit ``-1e8`` and the logits are
        normalised again; ``None`` restores the unmasked logits."""
        if masks is None:
            super().apply_masking(None)
            return
        device = self.logits.device
        self.masks = torch.as_tensor(masks, dtype=torch.bool, device=device).reshape(self.logits.shape)
        huge_neg = torch.tensor(HUGE_NEG, dtype=self.logits.dtype, device=device)
        logits = torch.where(self.masks, self._original_logits, huge_neg)
        self.__dict__.pop("probs", None)
        self._normalise(logits)

    def _normalise(self, logits: torch.Tensor) -> None:
        """``Categorical.__init__(logits=logits, validate_args=self._validate_args)`` with :func:`logsumexp_last`."""
        if logits.dim() < 1:
            raise ValueError("`logits` parameter must be at least one-dimensional.")
        self.logits = logits - logsumexp_last(logits)
        self._param = self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else torch.Size()
        Distribution.__init__(self, batch_shape, validate_args=self._validate_args)


class ExactMaskableCategoricalDistribution(MaskableCategoricalDistribution):
    """sb3-contrib's ``MaskableCategoricalDistribution`` over :class:`ExactMaskableCategorical`.

    :meth:`proba_distribution` keeps the logits and builds the distribution when it is first
    read or masked, so that a mask given next (as the policies do) costs one normalisation,
    not two.
    """

    def __init__(self, action_dim: int) -> None:
        self._logits: torch.Tensor | None = None
        self._distribution: MaskableCategorical | None = None
        super().__init__(action_dim)

    @property
    def distribution(self) -> MaskableCategorical:  # type: ignore[override]
        """The current distribution (built unmasked from the last logits if no mask came since)."""
        if self._logits is not None:
            self._distribution, self._logits = ExactMaskableCategorical.from_logits(self._logits), None
        return self._distribution  # type: ignore[return-value]

    @distribution.setter
    def distribution(self, value: MaskableCategorical | None) -> None:
        self._distribution, self._logits = value, None

    def proba_distribution(self, action_logits: torch.Tensor) -> ExactMaskableCategoricalDistribution:
        """Take ``action_logits`` (float, (batch, n_actions) or any shape of that size) as the new logits."""
        self._distribution, self._logits = None, action_logits.view(-1, self.action_dim)
        return self

    def apply_masking(self, masks: MaybeMasks) -> None:
        """Mask the current distribution (bool, (batch, n_actions); None removes the mask)."""
        if self._logits is not None:
            self._distribution, self._logits = ExactMaskableCategorical.from_logits(self._logits, masks), None
        else:
            self.distribution.apply_masking(masks)


def sample_masked(logits: torch.Tensor, masks: MaybeMasks,
                  deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Actions and their log-probabilities, drawn as ``ExactMaskableCategorical.from_logits(logits, masks)``'s
    ``sample()`` (or ``mode()``) and ``log_prob()`` draw them, bit for bit and with the same random numbers, without
    building the distribution objects (the policy's rollout step, no gradient).

    The same tensor operations in the same order: the raw logits normalised (``Categorical``), masked to ``-1e8``
    and normalised again (:func:`logsumexp_last`), ``softmax``; the draw is what ``torch.multinomial(probs, 1, True)``
    does for one sample per row (``argmax(probs / q)`` with ``q ~ Exp(1)`` of ``probs``' shape, from torch's
    generator), less its input checks, for which one check of the log-probabilities stands.

    Args:
        logits: float tensor of shape (batch, n_actions), unnormalised.
        masks: bool array or tensor of ``logits``' size (True: allowed).
        deterministic: the most probable action (``mode()``) instead of a draw.

    Returns:
        (actions, log_probs): int64 tensor of shape (batch,) and ``logits``' dtype, shape (batch,).

    Raises:
        RuntimeError: the logits hold NaN or infinite values (as ``torch.multinomial`` refuses such probabilities).
    """
    logits = logits - logits.logsumexp(-1, keepdim=True)
    mask = torch.as_tensor(masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
    masked = torch.where(mask, logits, HUGE_NEG)  # the scalar in logits' dtype, as sb3-contrib's tensor
    # logsumexp_last(masked) less its guard against an infinite maximum: a row of masked logits holds -1e8 or
    # normalised logits (finite, or NaN where the raw ones were not finite), so its maximum is never infinite
    maxes = torch.amax(masked, -1, keepdim=True)
    final = masked - _exp_no_underflow(masked - maxes).sum(-1, keepdim=True).log_().add_(maxes)
    probs = torch.softmax(final, -1)
    if deterministic:
        actions = torch.argmax(probs, dim=1)
    else:
        actions = torch.argmax(probs / torch.empty_like(probs).exponential_(1), dim=-1)
    log_probs = final.gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    if not math.isfinite(float(log_probs.min())):  # at most 0 (or NaN, which min passes on)
        raise RuntimeError("the policy's action logits are not finite (NaN or infinite): no action can be drawn")
    return actions, log_probs


class LegalColumns:
    """The legal action indices of a batch of masks, for the sparse action head.

    Attributes:
        columns: int64 tensor of shape (m,), ascending: every action index legal in at least one row.
        legal: bool tensor of shape (batch, m), whether ``columns[j]`` is legal in row ``i``; None when every
            column is legal in every row (one row, or rows with the same legal actions).
        rows: the number of mask rows (batch), or None where unknown (then not checked).
    """

    __slots__ = ("columns", "legal", "rows")

    def __init__(self, columns: torch.Tensor, legal: torch.Tensor | None, rows: int | None = None) -> None:
        self.columns = columns
        self.legal = legal
        self.rows = rows


def legal_columns(masks: MaybeMasks | torch.Tensor, n_actions: int,
                  device: torch.device | str = "cpu") -> LegalColumns | None:
    """The legal action indices of ``masks``, or None where a row has no legal action (sb3-contrib then draws
    uniformly among all indices, which only the dense path gives).

    Args:
        masks: bool or float array or tensor of size (batch * n_actions) (True or non-zero: legal).
        n_actions: the number of action indices (the head's output width).
        device: where the returned tensors live.

    Returns:
        :class:`LegalColumns`, or None.
    """
    if isinstance(masks, torch.Tensor):
        rows = masks.reshape(-1, n_actions)
        if rows.dtype != torch.bool and not bool(rows.amin() >= 0):  # negative or NaN entries (legal: non-zero)
            rows = rows != 0
        if rows.shape[0] == 1:
            columns = rows[0].nonzero().squeeze(1)
            return LegalColumns(columns.to(device), None, 1) if columns.numel() else None
        # a column is legal somewhere where its largest entry is non-zero (entries are bool or non-negative here;
        # one reduction over the float masks instead of a comparison and a reduction)
        columns = (rows.any(0) if rows.dtype == torch.bool else rows.amax(0)).nonzero().squeeze(1)
        legal = rows.index_select(1, columns)
        legal = legal if legal.dtype == torch.bool else legal != 0
        if not bool(legal.any(1).all()):
            return None
        return LegalColumns(columns.to(device), legal.to(device), rows.shape[0])
    array = np.asarray(masks).reshape(-1, n_actions)
    array = array if array.dtype == np.bool_ else array != 0
    if array.shape[0] == 1:
        index = np.flatnonzero(array[0])
        return LegalColumns(torch.from_numpy(index).to(device), None, 1) if index.size else None
    index = np.flatnonzero(array.any(0))
    sub = array[:, index]
    if not sub.any(1).all():
        return None
    legal = None if sub.all() else torch.from_numpy(sub).to(device)
    return LegalColumns(torch.from_numpy(index).to(device), legal, array.shape[0])


def sparse_log_probs(latent: torch.Tensor, head: nn.Linear, columns: LegalColumns) -> torch.Tensor:
    """Normalised log-probabilities over ``columns.columns`` only: the head's logits for those indices (its weight
    and bias rows gathered, one product) through ``log_softmax``, ``-inf`` where ``columns.legal`` is False.

    The same distribution as :class:`ExactMaskableCategorical` (whose masked indices have probability exactly 0),
    equal to floating-point rounding, not bit for bit: it normalises once over the legal logits where the dense
    path normalises over all indices, masks to ``-1e8`` and normalises again. Gradients reach only the gathered rows
    of the head's weight and bias (the dense path's are 0 elsewhere, to rounding).

    Args:
        latent: float tensor of shape (batch, head.in_features).
        head: the action head (``nn.Linear`` with ``out_features`` action indices).
        columns: the batch's :class:`LegalColumns`.

    Returns:
        tensor of shape (batch, m), ``latent``'s dtype.

    Raises:
        ValueError: ``columns`` came from masks with another number of rows than ``latent`` (as the dense path,
            which cannot reshape such masks to its logits' shape, refuses them).
    """
    if columns.rows is not None and columns.rows != latent.shape[0]:
        raise ValueError(f"the action masks hold {columns.rows} row(s) of {head.out_features} action indices but "
                         f"the observations {latent.shape[0]}: one mask per observation")
    weight = head.weight.index_select(0, columns.columns)
    bias = None if head.bias is None else head.bias.index_select(0, columns.columns)
    logits = nn.functional.linear(latent, weight, bias)
    if columns.legal is not None:
        logits = logits.masked_fill(~columns.legal, float("-inf"))
    return torch.log_softmax(logits, -1)


def sparse_sample(log_probs: torch.Tensor, columns: LegalColumns,
                  deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Actions drawn from :func:`sparse_log_probs`' rows (Gumbel-max: ``argmax(log p - log q)``, ``q ~ Exp(1)``, one
    draw per legal-column entry, so fewer random numbers than sb3-contrib's draw over every index, from the same
    distribution), or their most probable legal action (``deterministic``, the lowest index among ties).

    Args:
        log_probs: float tensor of shape (batch, m).
        columns: the batch's :class:`LegalColumns`.
        deterministic: the most probable action instead of a draw.

    Returns:
        (actions, log_probs): int64 tensor of shape (batch,) (action indices) and ``log_probs``' dtype, (batch,).

    Raises:
        RuntimeError: the logits hold NaN or infinite values.
    """
    if deterministic:
        scores = log_probs
    else:
        scores = log_probs - torch.empty_like(log_probs).exponential_(1).log_()
        if columns.legal is not None:
            scores = scores.masked_fill(~columns.legal, float("-inf"))
    positions = scores.argmax(-1, keepdim=True)
    chosen = log_probs.gather(-1, positions).squeeze(-1)
    if not math.isfinite(float(chosen.detach().min())):
        raise RuntimeError("the policy's action logits are not finite (NaN or infinite): no action can be drawn")
    return columns.columns[positions.squeeze(-1)], chosen


def sparse_evaluate(log_probs: torch.Tensor, columns: LegalColumns,
                    actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
    """The log-probabilities of ``actions`` and each row's entropy from :func:`sparse_log_probs`' rows, or None
    when an action is not legal in its row (the dense path then gives its near ``-1e8`` log-probability).

    Args:
        log_probs: float tensor of shape (batch, m).
        columns: the batch's :class:`LegalColumns`.
        actions: integer tensor of shape (batch,), action indices.

    Returns:
        (log_prob, entropy): ``log_probs``' dtype, each of shape (batch,); or None.
    """
    actions = actions.reshape(-1).long()
    positions = torch.searchsorted(columns.columns, actions).clamp_(max=columns.columns.numel() - 1)
    found = columns.columns[positions] == actions
    if columns.legal is not None:
        found &= columns.legal.gather(1, positions.unsqueeze(1)).squeeze(1)
    if not bool(found.all()):
        return None
    log_prob = log_probs.gather(1, positions.unsqueeze(1)).squeeze(1)
    # each row's masked entries (-inf) read as log-probability 0: their terms are exp(0) * 0 = 0, as p log p is
    # there, and exp takes no -inf argument (a slow path on a CPU; see the module docstring)
    finite = log_probs if columns.legal is None else log_probs.masked_fill(~columns.legal, 0.0)
    entropy = -(finite.exp() * finite).sum(-1)
    return log_prob, entropy


def exact_masking(policy: MaskableMultiInputActorCriticPolicy) -> None:
    """Give ``policy`` an :class:`ExactMaskableCategoricalDistribution` in place of sb3-contrib's categorical
    one (nothing else changes: the action net, its weights and the random generator are untouched)."""
    if type(policy.action_dist) is MaskableCategoricalDistribution:
        policy.action_dist = ExactMaskableCategoricalDistribution(policy.action_dist.action_dim)


class MaskedMultiInputPolicy(MaskableMultiInputActorCriticPolicy):
    """sb3-contrib's ``MultiInputPolicy`` (the ``mlp`` policy) with :class:`ExactMaskableCategoricalDistribution`:
    the same network and parameters, faster with large masked action spaces.

    Two paths compute the masked distribution:

    - the sparse path (:attr:`sparse_head` True, an ``nn.Linear`` action head, masks given, every row with a legal
      action): :meth:`forward`, :meth:`evaluate_actions` and :meth:`_predict` (``predict()``) compute logits,
      log-probabilities, entropies and draws over each batch's legal action indices only
      (:func:`legal_columns`, :func:`sparse_log_probs`, :func:`sparse_sample`, :func:`sparse_evaluate`). The same
      distribution as sb3-contrib's, equal to floating-point rounding (log-probabilities, entropies and gradients
      within a few 1e-6), but not bit for bit, and drawn with other random numbers (fewer of them);
    - the dense path (otherwise: :attr:`sparse_head` False, a head that is not a plain ``nn.Linear`` as
      ``unit_pairs``' and ``factored``' heads, no mask, a row with no legal action, sb3-contrib's own distribution
      swapped in): sb3-contrib's numbers bit for bit (:class:`ExactMaskableCategoricalDistribution`, and
      :func:`sample_masked` for the rollout's draw). :meth:`get_distribution` always takes it.
    """

    sparse_head: bool = True
    """Whether an ``nn.Linear`` action head works on the legal action indices only (set False on an instance for
    sb3-contrib's exact numbers)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        exact_masking(self)

    def _sparse_action_net(self) -> nn.Linear | None:
        """The action head when the sparse path applies to it, else None."""
        if (self.sparse_head and type(self.action_net) is nn.Linear
                and type(self.action_dist) is ExactMaskableCategoricalDistribution):
            return self.action_net
        return None

    def _latents(self, obs: PyTorchObs) -> tuple[torch.Tensor, torch.Tensor]:
        """(latent_pi, latent_vf) as sb3-contrib's ``forward`` and ``evaluate_actions`` compute them."""
        features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(features)
        pi_features, vf_features = features
        return self.mlp_extractor.forward_actor(pi_features), self.mlp_extractor.forward_critic(vf_features)

    def _legal(self, head: nn.Linear | None, action_masks: Any) -> LegalColumns | None:
        """The batch's :class:`LegalColumns` when the sparse path applies, else None."""
        if head is None or action_masks is None:
            return None
        return legal_columns(action_masks, head.out_features, head.weight.device)

    def forward(self, obs: PyTorchObs, deterministic: bool = False,
                action_masks: np.ndarray | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """sb3-contrib's ``forward``: actions (batch,) int64, values (batch, 1), log-probabilities (batch,).

        The sparse path where it applies (see the class docstring); otherwise, for the rollout's call (masks
        given, no gradient, :class:`ExactMaskableCategoricalDistribution`), :func:`sample_masked`, the same numbers
        as sb3-contrib's with fewer steps; else sb3-contrib's own ``forward``.
        """
        head = self._sparse_action_net()
        legal = self._legal(head, action_masks)
        if legal is None and (action_masks is None or torch.is_grad_enabled()
                              or type(self.action_dist) is not ExactMaskableCategoricalDistribution):
            return super().forward(obs, deterministic, action_masks)
        latent_pi, latent_vf = self._latents(obs)
        values = self.value_net(latent_vf)
        self.action_dist.distribution = None  # no distribution object is built for this call
        if legal is not None:
            actions, log_probs = sparse_sample(sparse_log_probs(latent_pi, head, legal), legal, deterministic)
        else:
            logits = self.action_net(latent_pi).view(-1, self.action_dist.action_dim)
            actions, log_probs = sample_masked(logits, action_masks, deterministic)
        return actions.reshape((-1, *self.action_space.shape)), values, log_probs

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor,
                         action_masks: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """sb3-contrib's ``evaluate_actions``: values (batch, 1), log-probabilities of ``actions`` (batch,) and
        entropies (batch,), through the sparse path where it applies and every action is legal in its row."""
        head = self._sparse_action_net()
        legal = self._legal(head, action_masks)
        if legal is None:
            return super().evaluate_actions(obs, actions, action_masks)
        latent_pi, latent_vf = self._latents(obs)
        evaluated = sparse_evaluate(sparse_log_probs(latent_pi, head, legal), legal, actions)
        if evaluated is None:
            distribution = self._get_action_dist_from_latent(latent_pi)
            distribution.apply_masking(action_masks)
            evaluated = distribution.log_prob(actions), distribution.entropy()
        return self.value_net(latent_vf), *evaluated

    def _predict(self, observation: PyTorchObs, deterministic: bool = False,
                 action_masks: np.ndarray | None = None) -> torch.Tensor:
        """sb3-contrib's ``_predict`` (``predict()``'s actions, int64 (batch,)), through the sparse path where it
        applies."""
        head = self._sparse_action_net()
        legal = self._legal(head, action_masks)
        if legal is None:
            return super()._predict(observation, deterministic, action_masks)
        features = super(MaskableActorCriticPolicy, self).extract_features(observation, self.pi_features_extractor)
        latent_pi = self.mlp_extractor.forward_actor(features)
        return sparse_sample(sparse_log_probs(latent_pi, head, legal), legal, deterministic)[0]


__all__ = ["ExactMaskableCategorical", "ExactMaskableCategoricalDistribution", "LegalColumns", "MaskedMultiInputPolicy",
           "exact_masking", "legal_columns", "logsumexp_last", "sample_masked", "sparse_evaluate", "sparse_log_probs",
           "sparse_sample"]
