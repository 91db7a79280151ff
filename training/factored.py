"""A policy shaped like the game: choose the unit, then the order kind, then the target.

The flat action space of :class:`env.encoding.ActionCodec` (5,814 indices for
``pitched_battle``, 76% of them the ``cast`` block) is factored into three
choices, each its own head over an encoder that attends across the unit slots:

1. **unit** ``u``: an own unit slot ``0..n-1``, or ``n`` = "global" for the
   decisions no own slot makes (``end_phase``, ``react``, ``dispel``);
2. **kind** ``k``: one of :data:`KINDS` (an order block, with the non-unit
   option of ``react``, ``cast`` and the siege orders folded in: ``cast_o``
   for cast option ``o``, ``react_<reaction>``, ``siege_o``);
3. **target** ``t``: for *unit-target* kinds a token slot ``0..2n-1`` (own
   slots, then enemy slots, as the observation's ``units`` rows); for
   *option-target* kinds the option (deployment slot, move option, pursuit
   choice, dispel dice, castle element); for kinds without a target ``0``.

:class:`FactorTable` maps every flat index to its (u, k, t) once per codec;
the map is injective (checked), so the flat mask scattered into a dense
(unit, kind, target) grid gives exact masks at every head: unit mask = any
legal action of the unit, kind mask = any legal target of (unit, kind),
target mask = the legal targets themselves.

The network (:class:`FactoredHead` over :class:`FactoredEncoder`) computes
``log p(u) + log p(k | u) + log p(t | u, k)`` (each a masked log-softmax) for
every flat index and hands these as the logits of sb3-contrib's masked
categorical distribution, so MaskablePPO runs unchanged: the softmax of
those logits is the autoregressive distribution itself (their
exponentials already sum to 1), and illegal indices get -1e8 (probability 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from battleline.env.encoding import CAST_OPTIONS, DISPEL_OPTIONS, ActionCodec
from battleline.env.rules.actions import MOVE_OPTIONS, PURSUIT_CHOICES, REACTIONS
from battleline.env.rules.deployment import N_SLOTS
from battleline.env.siege_encoding import ORDERS as SIEGE_ORDERS
from battleline.env.siege_encoding import SiegeActionCodec
from battleline.training.masking import MaskedMultiInputPolicy
from battleline.training.unit_pairs import head_constructor_parameters, install_head

UNIT_TARGET, OPTION_TARGET, NO_TARGET = "unit", "option", "none"
"""How a kind's target is chosen: a token slot (scored against the unit), an option (a small head), none."""

PAIR_KINDS: tuple[str, ...] = (
    "charge", *(f"react_{r}" for r in REACTIONS), "shoot", "join", "challenge",
    *(f"cast_{o}" for o in range(CAST_OPTIONS)), "swap", "breathe",
)
"""Kinds whose target is a unit slot, in kind order (they come first)."""
NO_TARGET_KINDS: tuple[str, ...] = ("end_phase", "leave", "accept", "refuse", "order")
"""Kinds without a target (the last kinds)."""
NEG = -1e8
"""The flat logit of an illegal index (sb3-contrib's own masked value)."""
_FILL = -1e9
"""What masked entries hold before a log-softmax (finite: no NaN for a row with nothing allowed)."""


def option_kinds(elements: int = 0) -> tuple[tuple[str, int], ...]:
    """(kind, option count) of the option-target kinds, in kind order (after :data:`PAIR_KINDS`)."""
    base = (("deploy", N_SLOTS), ("move", len(MOVE_OPTIONS)), ("pursue", len(PURSUIT_CHOICES)),
            ("dispel", DISPEL_OPTIONS))
    return base + tuple((f"siege_{o}", elements) for o in range(len(SIEGE_ORDERS) if elements else 0))


def kinds(elements: int = 0) -> tuple[str, ...]:
    """Every kind name in kind order: unit-target, option-target, no-target kinds."""
    return PAIR_KINDS + tuple(k for k, _ in option_kinds(elements)) + NO_TARGET_KINDS


KINDS = kinds()
"""The kinds of a battle without a castle (a siege adds ``siege_0..5``)."""


@dataclass(frozen=True)
class FactorTable:
    """Every flat action index as (unit, kind, target).

    The targets live in three *sections*, so that no kind pays for the widest target axis:
    unit-target kinds a (units, n_pair, 2n) grid, option-target kinds a (units, n_option,
    option_width) grid, kinds without a target a (units, n_none) grid; the head scores each section
    and the flat logits are gathered from the three, concatenated flat in this order.

    Attributes:
        n: unit slots per side; ``units = n + 1`` (slot ``n`` is "global").
        elements: castle elements of a siege codec (0 otherwise).
        kinds: kind names (:func:`kinds`); ``n_pair`` / ``n_option`` of them are unit- / option-target
            kinds, the remaining ``n_none`` have no target.
        targets: ``T``, the dense target axis: max(2n, option_width).
        option_width: the largest option count of an option-target kind.
        unit, kind, target: int64 arrays of shape (size,): the factors of each flat index.
        dense: int64 (size,): ``(unit * K + kind) * T + target``, the index into a flattened
            (units, K, T) grid; all distinct.
        unit_kind: int64 (size,): ``unit * K + kind``.
        section: int64 (size,): the index into the three sections' grids, flattened and concatenated.
        option_counts: int64 (n_option,): options of each option-target kind.
    """

    n: int
    elements: int
    kinds: tuple[str, ...]
    n_pair: int
    n_option: int
    targets: int
    unit: np.ndarray
    kind: np.ndarray
    target: np.ndarray
    dense: np.ndarray
    unit_kind: np.ndarray
    section: np.ndarray
    option_counts: np.ndarray

    @property
    def n_none(self) -> int:
        """Kinds without a target."""
        return len(self.kinds) - self.n_pair - self.n_option

    @property
    def option_width(self) -> int:
        """The option-target section's target axis: the largest option count."""
        return int(self.option_counts.max())

    @property
    def section_sizes(self) -> tuple[int, int, int]:
        """Entries of the unit-target, option-target and no-target sections: units·n_pair·2n, units·n_option·width,
        units·n_none."""
        u = self.units
        return u * self.n_pair * 2 * self.n, u * self.n_option * self.option_width, u * self.n_none

    @property
    def size(self) -> int:
        """Flat indices covered (the codec's size)."""
        return int(self.unit.shape[0])

    @property
    def units(self) -> int:
        """Choices of the unit head: n own slots and "global"."""
        return self.n + 1

    @property
    def grid(self) -> tuple[int, int, int]:
        """(units, K, T), the shape of the dense (unit, kind, target) grid."""
        return self.units, len(self.kinds), self.targets


def factor_table(codec: ActionCodec) -> FactorTable:
    """The :class:`FactorTable` of ``codec`` (a plain or a siege codec), built from its block layout.

    Raises:
        ValueError: two flat indices would share a (unit, kind, target) (a codec this table does not know).
    """
    n, L = codec.n, codec.layout
    elements = codec.elements if isinstance(codec, SiegeActionCodec) else 0
    names = kinds(elements)
    kid = {name: k for k, name in enumerate(names)}
    counts = option_kinds(elements)
    targets = max([2 * n] + [c for _, c in counts])
    unit = np.full(codec.size, -1, dtype=np.int64)
    kind = np.full(codec.size, -1, dtype=np.int64)
    target = np.full(codec.size, -1, dtype=np.int64)

    def put(start: int, u: np.ndarray, k: np.ndarray | int, t: np.ndarray | int) -> None:
        idx = start + np.arange(len(u))
        unit[idx], kind[idx], target[idx] = u, k, t

    i_ = np.arange(n)
    pairs_i, pairs_j = np.repeat(i_, n), np.tile(i_, n)  # index i * n + j
    glob = n

    def per_unit(options: int) -> tuple[np.ndarray, np.ndarray]:  # index i * options + o
        return np.repeat(i_, options), np.tile(np.arange(options), n)

    put(0, np.array([glob]), kid["end_phase"], 0)
    put(L.deploy, *_unit_option(per_unit(N_SLOTS), kid["deploy"]))
    put(L.move, *_unit_option(per_unit(len(MOVE_OPTIONS)), kid["move"]))
    put(L.charge, pairs_i, kid["charge"], n + pairs_j)
    j, r = np.repeat(i_, len(REACTIONS)), np.tile(np.arange(len(REACTIONS)), n)  # index j * 3 + r
    put(L.react, np.full(len(j), glob), kid[f"react_{REACTIONS[0]}"] + r, n + j)
    put(L.shoot, pairs_i, kid["shoot"], n + pairs_j)
    put(L.pursue, *_unit_option(per_unit(len(PURSUIT_CHOICES)), kid["pursue"]))
    put(L.join, pairs_i, kid["join"], pairs_j)
    put(L.leave, i_, kid["leave"], 0)
    put(L.challenge, pairs_i, kid["challenge"], n + pairs_j)
    put(L.accept, i_, kid["accept"], 0)
    put(L.refuse, i_, kid["refuse"], 0)
    rest, t = np.divmod(np.arange(n * CAST_OPTIONS * 2 * n), 2 * n)  # index (i * 22 + o) * 2n + t
    ci, co = np.divmod(rest, CAST_OPTIONS)
    put(L.cast, ci, kid["cast_0"] + co, t)
    put(L.dispel, np.full(DISPEL_OPTIONS, glob), kid["dispel"], np.arange(DISPEL_OPTIONS))
    put(L.swap, pairs_i, kid["swap"], pairs_j)
    put(L.breathe, pairs_i, kid["breathe"], n + pairs_j)
    put(L.order, i_, kid["order"], 0)
    if elements:
        rest, o = np.divmod(np.arange(n * elements * len(SIEGE_ORDERS)), len(SIEGE_ORDERS))  # (i * e + k) * 6 + o
        si, sk = np.divmod(rest, elements)
        put(codec.siege, si, kid["siege_0"] + o, sk)
    K, P, n_opt = len(names), len(PAIR_KINDS), len(counts)
    width = max(c for _, c in counts)
    dense = (unit * K + kind) * targets + target
    pair_size, option_size = (n + 1) * P * 2 * n, (n + 1) * n_opt * width
    section = np.where(kind < P, (unit * P + kind) * 2 * n + target,
                       np.where(kind < P + n_opt, pair_size + (unit * n_opt + kind - P) * width + target,
                                pair_size + option_size + unit * (K - P - n_opt) + kind - P - n_opt))
    if (unit < 0).any() or len(np.unique(dense)) != codec.size or len(np.unique(section)) != codec.size:
        raise ValueError(f"factor_table: the codec's {codec.size} indices do not map one-to-one onto "
                         f"(unit, kind, target); is it a codec this table knows?")
    return FactorTable(n, elements, names, P, n_opt, targets, unit, kind, target, dense, unit * K + kind, section,
                       np.array([c for _, c in counts], dtype=np.int64))


def _unit_option(pair: tuple[np.ndarray, np.ndarray], k: int) -> tuple[np.ndarray, int, np.ndarray]:
    """(units, kind, targets) of a per-unit option block."""
    return pair[0], k, pair[1]


def codec_for(n: int, size: int) -> ActionCodec:
    """The codec of ``n`` unit slots whose action space has ``size`` indices (a siege codec when larger).

    Raises:
        ValueError: ``size`` is neither the plain codec's size nor a plain size plus whole siege blocks.
    """
    plain = ActionCodec(n)
    extra = size - plain.size
    if extra == 0:
        return plain
    if extra > 0 and extra % (n * len(SIEGE_ORDERS)) == 0:
        return SiegeActionCodec(n, extra // (n * len(SIEGE_ORDERS)))
    raise ValueError(f"{n} unit slots give {plain.size} actions (or more with a castle), the action space has {size}")


def section_masks(table: FactorTable, flat_mask: torch.Tensor,
                  index: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The flat mask laid out in the three target sections (:class:`FactorTable`).

    Args:
        flat_mask: bool (batch, size): allowed flat indices.
        index: ``table.section`` as an int64 tensor on ``flat_mask``'s device (made from the table when None).

    Returns:
        bool (batch, units, n_pair, 2n), (batch, units, n_option, option_width), (batch, units, n_none):
        True where the (unit, kind, target) is a legal flat index.
    """
    b = flat_mask.shape[0]
    if index is None:
        index = torch.as_tensor(table.section, device=flat_mask.device)
    grid = torch.zeros(b, sum(table.section_sizes), dtype=torch.bool, device=flat_mask.device)
    grid.index_copy_(1, index, flat_mask)
    pair, option, none = grid.split(table.section_sizes, dim=1)
    u = table.units
    return (pair.view(b, u, table.n_pair, 2 * table.n), option.view(b, u, table.n_option, table.option_width),
            none.view(b, u, table.n_none))


def kind_mask_of(pair: torch.Tensor, option: torch.Tensor, none: torch.Tensor) -> torch.Tensor:
    """bool (batch, units, K): a kind is allowed for a unit when one of its targets is (from :func:`section_masks`)."""
    return torch.cat([pair.any(dim=-1), option.any(dim=-1), none], dim=2)


def dense_targets(table: FactorTable, pair: torch.Tensor, option: torch.Tensor, none: torch.Tensor,
                  fill: float | bool) -> torch.Tensor:
    """The three sections (batch, units, ·, ·) as one (batch, units, K, T) grid: target 0 of the no-target kinds
    holds ``none``; the entries no section has hold ``fill``."""
    T = table.targets
    pad = torch.nn.functional.pad
    none_t = pad(none[..., None].to(pair.dtype), (0, T - 1), value=fill)
    return torch.cat([pad(pair, (0, T - pair.shape[-1]), value=fill), pad(option, (0, T - option.shape[-1]),
                                                                           value=fill), none_t], dim=2)


def head_masks(table: FactorTable, flat_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The masks of the three heads from the flat mask, as :class:`FactoredHead` uses them.

    Args:
        flat_mask: bool (batch, size): allowed flat indices.

    Returns:
        (unit mask bool (batch, units), kind mask bool (batch, units, K), target mask bool
        (batch, units, K, T)): a unit is allowed when some legal action is its own, a kind when
        some target of (unit, kind) is legal, a target when its flat index is legal.
    """
    pair, option, none = section_masks(table, flat_mask)
    kind = kind_mask_of(pair, option, none)
    return kind.any(dim=-1), kind, dense_targets(table, pair, option, none, False)


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``log_softmax`` over the last axis with the entries ``mask`` forbids left out (they get junk, finite values)."""
    return torch.log_softmax(logits.masked_fill(~mask, _FILL), dim=-1)


class FactoredEncoder(BaseFeaturesExtractor):
    """A transformer encoder over the unit slots and one global token.

    Args:
        observation_space: the env's ``Dict`` space (``units`` (2n, F), ``globals`` (G,), ``action_mask`` (size,)).
        embed_dim: ``d``, the token width (a multiple of ``heads``).
        layers: encoder layers; heads: attention heads per layer.

    Output: float (batch, (2n+1)·d + size): the tokens (own slots, enemy slots, global) after the encoder,
    flattened, then the action mask as 0/1 floats (the head reads it back). Empty slots (``present`` = 0) are
    left out of the attention as keys.

    Raises:
        ValueError: the space lacks ``units``, ``globals`` or ``action_mask``.
    """

    def __init__(self, observation_space: gym.spaces.Dict, embed_dim: int = 64, layers: int = 2,
                 heads: int = 4) -> None:
        spaces = getattr(observation_space, "spaces", {})
        if not {"units", "globals", "action_mask"} <= set(spaces):
            raise ValueError("FactoredEncoder needs 'units', 'globals' and 'action_mask' in the observation space")
        slots, n_feat = spaces["units"].shape
        size = spaces["action_mask"].shape[0]
        super().__init__(observation_space, features_dim=(slots + 1) * embed_dim + size)
        self.slots, self.embed_dim = int(slots), int(embed_dim)
        d = embed_dim
        self.unit_in = nn.Sequential(nn.Linear(n_feat, d), nn.ReLU(), nn.Linear(d, d))
        self.global_in = nn.Sequential(nn.Linear(spaces["globals"].shape[0], d), nn.ReLU(), nn.Linear(d, d))
        self.side = nn.Parameter(torch.zeros(2, d))  # own / enemy slot embedding
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=2 * d, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        """(batch, features_dim) float: encoded tokens and the mask (class docstring)."""
        units = observations["units"].float()
        b, m, _ = units.shape
        side = torch.repeat_interleave(self.side, m // 2, dim=0)  # (2n, d)
        tokens = torch.cat([self.unit_in(units) + side, self.global_in(observations["globals"].float())[:, None]], 1)
        absent = torch.cat([units[..., 0] < 0.5, torch.zeros(b, 1, dtype=torch.bool, device=units.device)], 1)
        h = self.norm(self.encoder(tokens, src_key_padding_mask=absent))
        return torch.cat([h.flatten(1), observations["action_mask"].float()], dim=1)


class FactoredHead(nn.Module):
    """Flat logits ``log p(u) + log p(k | u) + log p(t | u, k)`` from the encoder's tokens (module docstring).

    Args:
        table: the :class:`FactorTable` of the action space.
        embed_dim: ``d`` of the encoder.
        pair_dim: width of the query/key vectors that score (unit, target slot) pairs per unit-target kind.

    Input: the encoder's output (batch, (2n+1)·d + size). Output: float (batch, size) flat logits; illegal
    indices hold :data:`NEG`, and the exponentials of the legal ones sum to 1.
    """

    def __init__(self, table: FactorTable, embed_dim: int, pair_dim: int = 16) -> None:
        super().__init__()
        self.table, self.d, self.pair_dim = table, embed_dim, pair_dim
        d, K = embed_dim, len(table.kinds)
        self.unit_logit = nn.Linear(d, 1)
        self.kind_logits = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, K))
        self.query = nn.Linear(d, table.n_pair * pair_dim)
        self.key = nn.Linear(d, table.n_pair * pair_dim)
        self.options = nn.Linear(d, table.n_option * table.option_width)
        self.register_buffer("unit_kind", torch.as_tensor(table.unit_kind), persistent=False)
        self.register_buffer("section", torch.as_tensor(table.section), persistent=False)

    def output_layers(self) -> list[nn.Linear]:
        """The layers that give logits (initialised small, as SB3 does for its action net)."""
        return [self.unit_logit, self.kind_logits[-1], self.query, self.options]

    def split(self, latent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(unit tokens (batch, n+1, d): own slots then global; slot tokens (batch, 2n, d); flat mask bool (batch, size))."""
        n, d = self.table.n, self.d
        b = latent.shape[0]
        tokens = latent[:, : (2 * n + 1) * d].reshape(b, 2 * n + 1, d)
        mask = latent[:, (2 * n + 1) * d:] > 0.5
        return torch.cat([tokens[:, :n], tokens[:, 2 * n:]], dim=1), tokens[:, : 2 * n], mask

    def _heads(self, latent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor,
                                                    tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """unit (batch, units) and kind (batch, units, K) log-probabilities, the flat mask, and the target
        log-probabilities of the unit-target (batch, units, n_pair, 2n) and option-target (batch, units,
        n_option, width) sections with the no-target section's mask."""
        table = self.table
        units_h, slots_h, mask = self.split(latent)
        b, U = units_h.shape[:2]
        P, pd = table.n_pair, self.pair_dim
        q = self.query(units_h).view(b, U, P, pd)
        k = self.key(slots_h).view(b, slots_h.shape[1], P, pd)
        pair = torch.einsum("bupd,btpd->bupt", q, k) / pd ** 0.5  # (b, U, P, 2n)
        option = self.options(units_h).view(b, U, table.n_option, table.option_width)
        pair_m, option_m, none_m = section_masks(table, mask, self.section)
        kind_mask = kind_mask_of(pair_m, option_m, none_m)
        unit_lp = masked_log_softmax(self.unit_logit(units_h).squeeze(-1), kind_mask.any(dim=-1))
        kind_lp = masked_log_softmax(self.kind_logits(units_h), kind_mask)
        targets = (masked_log_softmax(pair, pair_m), masked_log_softmax(option, option_m), none_m)
        return unit_lp, kind_lp, mask, targets[0], targets

    def head_log_probs(self, latent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The three heads' masked log-probabilities and the flat mask.

        Returns:
            unit (batch, units), kind (batch, units, K), target (batch, units, K, T) log-probabilities (finite
            junk where masked; the no-target kinds' target 0 has log-probability 0) and the flat mask bool
            (batch, size).
        """
        unit_lp, kind_lp, mask, _, (pair, option, none) = self._heads(latent)
        return unit_lp, kind_lp, dense_targets(self.table, pair, option, torch.zeros_like(none, dtype=pair.dtype),
                                               _FILL), mask

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        """(batch, size) flat logits (class docstring)."""
        unit_lp, kind_lp, mask, _, (pair, option, none) = self._heads(latent)
        b = unit_lp.shape[0]
        unit_kind = (unit_lp[:, :, None] + kind_lp).flatten(1)
        target = torch.cat([pair.flatten(1), option.flatten(1), pair.new_zeros(b, none[0].numel())], dim=1)
        flat = unit_kind.index_select(1, self.unit_kind) + target.index_select(1, self.section)
        return torch.where(mask, flat, torch.full_like(flat, NEG))


class _ValueLatent(nn.Module):
    """SB3's ``mlp_extractor`` role: the actor sees the encoder's output as is; the critic an MLP over the
    global token and the mean of the present slot tokens."""

    def __init__(self, slots: int, embed_dim: int, net_arch: list[int], features_dim: int) -> None:
        super().__init__()
        self.slots, self.d = slots, embed_dim
        layers: list[nn.Module] = []
        width = 2 * embed_dim
        for w in net_arch:
            layers += [nn.Linear(width, w), nn.ReLU()]
            width = w
        self.value = nn.Sequential(*layers)
        self.latent_dim_pi, self.latent_dim_vf = features_dim, width

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        """The encoder's output, unchanged (batch, features_dim)."""
        return features

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        """(batch, net_arch[-1]) value latent."""
        m, d = self.slots, self.d
        tokens = features[:, : (m + 1) * d].reshape(features.shape[0], m + 1, d)
        return self.value(torch.cat([tokens[:, :m].mean(dim=1), tokens[:, m]], dim=1))

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(actor latent, critic latent)."""
        return self.forward_actor(features), self.forward_critic(features)


class FactoredPolicy(MaskedMultiInputPolicy):
    """sb3-contrib's maskable actor-critic with :class:`FactoredEncoder` and :class:`FactoredHead`.

    Keyword arguments as :class:`MaskableMultiInputActorCriticPolicy`, plus ``embed_dim`` (default 64),
    ``attention_layers`` (2), ``attention_heads`` (4) and ``value_arch`` (the value MLP's widths over
    the pooled tokens, default [128, 128]).

    Raises:
        ValueError: the action space is not the ``Discrete`` of a (siege) codec over the observation's unit slots.
    """

    def __init__(self, observation_space: gym.spaces.Dict, action_space: gym.spaces.Space, lr_schedule: Any,
                 embed_dim: int = 64, attention_layers: int = 2, attention_heads: int = 4,
                 value_arch: list[int] | None = None, **kwargs: Any) -> None:
        self._factored_args = (int(embed_dim), int(attention_layers), int(attention_heads),
                               list(value_arch or [128, 128]))
        kwargs.pop("net_arch", None)
        kwargs.update(
            features_extractor_class=FactoredEncoder,
            features_extractor_kwargs={"embed_dim": embed_dim, "layers": attention_layers, "heads": attention_heads},
            net_arch=[],
        )
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        slots = self.observation_space["units"].shape[0]  # type: ignore[index]
        embed_dim, _, _, value_arch = self._factored_args
        self.mlp_extractor = _ValueLatent(slots, embed_dim, value_arch, self.features_dim).to(self.device)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        slots = self.observation_space["units"].shape[0]  # type: ignore[index]
        size = int(getattr(self.action_space, "n", 0))
        try:
            self.factor_table = factor_table(codec_for(slots // 2, size))
        except ValueError as exc:
            raise ValueError(f"FactoredPolicy: {exc}") from None
        install_head(self, FactoredHead(self.factor_table, self._factored_args[0]), lr_schedule)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        embed_dim, layers, heads, value_arch = self._factored_args
        return head_constructor_parameters(super()._get_constructor_parameters(), embed_dim=embed_dim,
                                           attention_layers=layers, attention_heads=heads, value_arch=value_arch)


__all__ = [
    "KINDS", "NEG", "NO_TARGET_KINDS", "PAIR_KINDS", "FactorTable", "FactoredEncoder", "FactoredHead",
    "FactoredPolicy", "codec_for", "dense_targets", "factor_table", "head_masks", "kind_mask_of", "kinds",
    "masked_log_softmax", "option_kinds", "section_masks",
]
