"""A policy that reads unit pairs: per-unit embeddings, egocentric pair geometry, one logit head per action block.

The flat ``MultiInputPolicy`` maps absolute unit positions through one MLP to
every one of the 5,814 action indices of ``pitched_battle`` separately, so it
must learn "charge the enemy ahead of you" once for every (unit slot, enemy
slot) pair. :class:`UnitPairPolicy` shares that knowledge across slots:

1. **Tokens.** Each of the ``2n`` unit rows of the observation (own slots
   first, then enemy slots; :mod:`env.observation`) is embedded with the
   global features by one shared MLP: ``h_i`` of size ``d``.
2. **Pairs.** For every ordered pair (i, j) the geometry of j seen from i's
   own frame is computed (:func:`pair_geometry`: where j stands ahead of and
   beside i in units of 24 inches, where i stands seen from j, the distance,
   the relative facing), and a shared pair MLP turns ``[h_i, h_j, geometry]``
   into a message; each unit adds the mean and max of its messages from
   present units (one round of message passing).
3. **Heads.** Every action block of :class:`env.encoding.ActionCodec` gets
   logits from the objects it names: ``move``/``deploy``/``pursue``/``leave``/
   ``accept``/``refuse``/``order`` from the acting unit's embedding;
   ``charge``/``shoot``/``challenge``/``breathe`` from the (own unit, enemy
   unit) pair, ``join``/``swap`` from (own, own) pairs, ``cast`` from (caster,
   any target) pairs; ``react`` from the charging enemy's embedding;
   ``end_phase`` and ``dispel`` from the global embedding. The blocks are
   concatenated in the codec's index order, so index ``k`` of the output is
   the logit of the codec's action ``k`` (checked against ``codec.size``).

The value function is SB3's MLP over the flattened unit embeddings and the
global embedding. The mask is applied to the logits by sb3-contrib as usual.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from battleline.env.encoding import CAST_OPTIONS, DISPEL_OPTIONS, ActionCodec
from battleline.env.observation import UNIT_FEATURES
from battleline.env.rules.actions import MOVE_OPTIONS, PURSUIT_CHOICES, REACTIONS
from battleline.env.rules.deployment import N_SLOTS
from battleline.training.masking import MaskedMultiInputPolicy

POSE_FEATURES = ("x", "y", "sin_facing", "cos_facing", "deployed", "alive", "present")
"""Unit columns the pair geometry reads, in this order."""
N_GEOMETRY = 8
"""Features per ordered pair returned by :func:`pair_geometry`."""
_POSE_COLUMNS = [UNIT_FEATURES.index(name) for name in POSE_FEATURES]
SCALE = 24.0
"""Inches per unit of the pair distances (a long charge reach)."""


def pair_geometry(poses: torch.Tensor, table_w: float, table_h: float) -> torch.Tensor:
    """The egocentric geometry of every ordered unit pair.

    Args:
        poses: float tensor (batch, units, 7): the :data:`POSE_FEATURES` columns of the
            observation's ``units`` (x, y as fractions of the table, facing as sin/cos).
        table_w, table_h: the table size in inches (to undo the fractions).

    Returns:
        float tensor (batch, units, units, 8); entry [b, i, j] holds, in units of
        :data:`SCALE` inches, j's offset along i's facing and to i's left, i's offset
        along j's facing and to j's left, their distance, cos and sin of j's facing
        minus i's, and 1.0 when both units are deployed and alive (else the row is 0).
    """
    x = poses[..., 0] * table_w / SCALE
    y = poses[..., 1] * table_h / SCALE
    s, c = poses[..., 2], poses[..., 3]
    valid = poses[..., 4] * poses[..., 5]
    dx = x[:, None, :] - x[:, :, None]  # [b, i, j] = x_j - x_i
    dy = y[:, None, :] - y[:, :, None]
    si, ci = s[:, :, None], c[:, :, None]
    sj, cj = s[:, None, :], c[:, None, :]
    ahead_i, left_i = dx * ci + dy * si, -dx * si + dy * ci
    ahead_j, left_j = -(dx * cj + dy * sj), -(-dx * sj + dy * cj)
    dist = torch.sqrt(dx * dx + dy * dy + 1e-8)
    cos_rel, sin_rel = ci * cj + si * sj, sj * ci - cj * si
    both = valid[:, :, None] * valid[:, None, :]
    geometry = torch.stack([ahead_i, left_i, ahead_j, left_j, dist, cos_rel, sin_rel, torch.ones_like(dist)], dim=-1)
    return geometry * both[..., None]


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers)


class UnitPairExtractor(BaseFeaturesExtractor):
    """Unit tokens with one round of pair messages (module docstring, steps 1 and 2).

    Args:
        observation_space: the env's ``Dict`` space (``units`` of shape (2n, F), ``globals`` (G,)).
        embed_dim: ``d``, the width of every embedding.
        table_w, table_h: table size in inches (``pitched_battle``: 72 × 48).

    Output: float tensor (batch, 2n·d + d + 2n·7): the unit embeddings (own slots
    first), the global embedding, and the raw pose columns the action head needs.

    Raises:
        ValueError: the space lacks ``units`` or ``globals``.
    """

    def __init__(self, observation_space: gym.spaces.Dict, embed_dim: int = 64,
                 table_w: float = 72.0, table_h: float = 48.0) -> None:
        spaces = getattr(observation_space, "spaces", {})
        if "units" not in spaces or "globals" not in spaces:
            raise ValueError("UnitPairExtractor needs 'units' and 'globals' in the observation space")
        slots, n_feat = spaces["units"].shape
        n_global = spaces["globals"].shape[0]
        super().__init__(observation_space, features_dim=slots * embed_dim + embed_dim + slots * len(POSE_FEATURES))
        self.slots, self.embed_dim = int(slots), int(embed_dim)
        self.table_w, self.table_h = float(table_w), float(table_h)
        d = embed_dim
        self.global_net = _mlp([n_global, d, d])
        self.token_net = _mlp([n_feat + d, d, d])
        self.message_net = _mlp([2 * d + N_GEOMETRY, d, d])
        self.update_net = _mlp([3 * d, d])

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        """(batch, features_dim) float tensor: embeddings, global embedding, poses (class docstring)."""
        units = observations["units"].float()
        g = self.global_net(observations["globals"].float())
        b, m, _ = units.shape
        h = self.token_net(torch.cat([units, g[:, None, :].expand(b, m, -1)], dim=-1))
        poses = units[..., _POSE_COLUMNS]
        geometry = pair_geometry(poses, self.table_w, self.table_h)
        pairs = torch.cat([h[:, :, None, :].expand(b, m, m, -1), h[:, None, :, :].expand(b, m, m, -1), geometry], -1)
        messages = self.message_net(pairs)  # [b, i, j, d]: what i learns from j
        present = poses[..., 6][:, None, :, None]  # j present
        total = present.sum(dim=2).clamp(min=1.0)
        mean = (messages * present).sum(dim=2) / total
        peak = (messages * present - (1.0 - present) * 1e4).max(dim=2).values.clamp(min=0.0)
        h = h + self.update_net(torch.cat([h, mean, peak], dim=-1))
        return torch.cat([h.flatten(1), g, poses.flatten(1)], dim=1)


class UnitPairActionHead(nn.Module):
    """Logits for every index of an :class:`env.encoding.ActionCodec` from unit and pair embeddings.

    Args:
        n: unit slots per side (the codec's ``n``).
        embed_dim: ``d`` of the extractor.
        table_w, table_h: table size in inches.

    Input: the extractor's output (batch, 2n·d + d + 2n·7). Output: float logits
    (batch, ActionCodec(n).size) in the codec's index order.
    """

    def __init__(self, n: int, embed_dim: int, table_w: float, table_h: float) -> None:
        super().__init__()
        self.n, self.d = n, embed_dim
        self.table_w, self.table_h = table_w, table_h
        self.size = ActionCodec(n).size
        d = embed_dim
        self.unit_heads = nn.Linear(d, N_SLOTS + len(MOVE_OPTIONS) + len(PURSUIT_CHOICES) + 4)
        self.react_head = nn.Linear(d, len(REACTIONS))
        self.global_head = nn.Linear(d, 1 + DISPEL_OPTIONS)
        self.pair_net = _mlp([2 * d + N_GEOMETRY, d, d])
        self.enemy_pair_head = nn.Linear(d, 4)  # charge, shoot, challenge, breathe
        self.own_pair_head = nn.Linear(d, 2)  # join, swap
        self.cast_head = nn.Linear(d, CAST_OPTIONS)

    def output_layers(self) -> list[nn.Linear]:
        """The layers that give logits (initialised small, as SB3 does for its action net)."""
        return [self.unit_heads, self.react_head, self.global_head, self.enemy_pair_head, self.own_pair_head,
                self.cast_head]

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        """(batch, codec size) float logits (class docstring)."""
        n, d = self.n, self.d
        b = latent.shape[0]
        h = latent[:, : 2 * n * d].reshape(b, 2 * n, d)
        g = latent[:, 2 * n * d: 2 * n * d + d]
        poses = latent[:, 2 * n * d + d:].reshape(b, 2 * n, len(POSE_FEATURES))
        own, enemy = h[:, :n], h[:, n:]
        geometry = pair_geometry(poses, self.table_w, self.table_h)[:, :n]  # [b, own i, any t]
        pairs = self.pair_net(torch.cat([own[:, :, None, :].expand(b, n, 2 * n, d),
                                         h[:, None, :, :].expand(b, n, 2 * n, d), geometry], dim=-1))
        enemy_pairs = self.enemy_pair_head(pairs[:, :, n:])  # [b, i, j, 4]
        own_pairs = self.own_pair_head(pairs[:, :, :n])  # [b, i, j, 2]
        cast = self.cast_head(pairs).permute(0, 1, 3, 2)  # [b, i, option, t]
        units = self.unit_heads(own)
        k0, k1, k2 = N_SLOTS, N_SLOTS + len(MOVE_OPTIONS), N_SLOTS + len(MOVE_OPTIONS) + len(PURSUIT_CHOICES)
        glob = self.global_head(g)
        blocks = [
            glob[:, :1],  # end_phase
            units[..., :k0].flatten(1),  # deploy: i * N_SLOTS + k
            units[..., k0:k1].flatten(1),  # move: i * 16 + o
            enemy_pairs[..., 0].flatten(1),  # charge: i * n + j
            self.react_head(enemy).flatten(1),  # react: j * 3 + r
            enemy_pairs[..., 1].flatten(1),  # shoot
            units[..., k1:k2].flatten(1),  # pursue: i * 2 + c
            own_pairs[..., 0].flatten(1),  # join
            units[..., k2],  # leave
            enemy_pairs[..., 2].flatten(1),  # challenge
            units[..., k2 + 1],  # accept
            units[..., k2 + 2],  # refuse
            cast.flatten(1),  # cast: (i * 22 + o) * 2n + t
            glob[:, 1:],  # dispel
            own_pairs[..., 1].flatten(1),  # swap
            enemy_pairs[..., 3].flatten(1),  # breathe
            units[..., k2 + 3],  # order
        ]
        return torch.cat(blocks, dim=1)


class UnitPairPolicy(MaskedMultiInputPolicy):
    """sb3-contrib's maskable actor-critic with :class:`UnitPairExtractor` and :class:`UnitPairActionHead`.

    Keyword arguments as :class:`MaskableMultiInputActorCriticPolicy`, plus ``embed_dim``
    (default 64), ``table_w``/``table_h`` (inches, default 72 × 48) and ``value_arch``
    (the value MLP's hidden widths, default [256, 256]). The actor has no MLP of its own:
    the head reads the extractor's embeddings directly.

    Raises:
        ValueError: the action space is not the ``Discrete`` of a codec over the observation's unit slots.
    """

    def __init__(self, observation_space: gym.spaces.Dict, action_space: gym.spaces.Space, lr_schedule: Any,
                 embed_dim: int = 64, table_w: float = 72.0, table_h: float = 48.0,
                 value_arch: list[int] | None = None, **kwargs: Any) -> None:
        self._head_args = (embed_dim, float(table_w), float(table_h))
        kwargs.pop("net_arch", None)
        kwargs.update(
            features_extractor_class=UnitPairExtractor,
            features_extractor_kwargs={"embed_dim": embed_dim, "table_w": table_w, "table_h": table_h},
            net_arch={"pi": [], "vf": list(value_arch or [256, 256])},
        )
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        slots = self.observation_space["units"].shape[0]  # type: ignore[index]
        embed_dim, table_w, table_h = self._head_args
        head = UnitPairActionHead(slots // 2, embed_dim, table_w, table_h)
        if head.size != getattr(self.action_space, "n", None):
            raise ValueError(f"UnitPairPolicy: {slots} unit slots give {head.size} actions, "
                             f"the action space has {getattr(self.action_space, 'n', None)}")
        install_head(self, head, lr_schedule)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        embed_dim, table_w, table_h = self._head_args
        return head_constructor_parameters(super()._get_constructor_parameters(), embed_dim=embed_dim,
                                           table_w=table_w, table_h=table_h, value_arch=self.net_arch["vf"])


def install_head(policy: Any, head: nn.Module, lr_schedule: Any) -> None:
    """Make ``head`` the policy's action net (its output layers orthogonal with gain 0.01, biases 0, as SB3 does for
    its own action net) and rebuild the optimiser over every parameter. ``head`` must have ``output_layers()``."""
    for module in head.output_layers():
        nn.init.orthogonal_(module.weight, gain=0.01)
        nn.init.zeros_(module.bias)
    policy.action_net = head.to(policy.device)
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=lr_schedule(1), **policy.optimizer_kwargs)


def head_constructor_parameters(data: dict[str, Any], **own: Any) -> dict[str, Any]:
    """A custom-head policy's constructor parameters for saving: SB3's ``data`` with the policy's ``own`` keyword
    arguments and without the extractor and ``net_arch`` entries the policy sets itself."""
    data.update(own)
    for key in ("features_extractor_class", "features_extractor_kwargs", "net_arch"):
        data.pop(key, None)
    return data


__all__ = ["N_GEOMETRY", "POSE_FEATURES", "UnitPairActionHead", "UnitPairExtractor", "UnitPairPolicy",
           "head_constructor_parameters", "install_head", "pair_geometry"]
