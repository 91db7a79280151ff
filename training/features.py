"""The policy's features extractor: the ``Dict`` observation flattened, without the action mask.

:class:`env.battle_env.BattleEnv` puts the action mask in its observation
(``action_mask``, one int8 per action index: 5,704 on ``pitched_battle``)
because the issue's API asks for it, but MaskablePPO already applies the mask
to the logits (``action_masks()``), so feeding it to the network as well only
adds inputs: on ``pitched_battle`` it is six times the size of every other
feature together (985 floats), and the first layer's weights grow in
proportion. :class:`MaskFreeExtractor` flattens and concatenates every other
key (``units``, ``globals``, optional ``planes``) in sorted key order, as
SB3's ``CombinedExtractor`` does for ``Box`` spaces.
"""

from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

MASK_KEY = "action_mask"
"""The observation key the extractor leaves out."""


class MaskFreeExtractor(BaseFeaturesExtractor):
    """Concatenate the flattened ``Box`` entries of a ``Dict`` observation, except :data:`MASK_KEY`.

    Args:
        observation_space: the environment's ``Dict`` space (``Box`` entries only).

    Output: float32 tensor of shape (batch, sum of the kept entries' sizes).

    Raises:
        ValueError: the space is not a ``Dict`` or has nothing but the mask.
    """

    def __init__(self, observation_space: gym.spaces.Dict) -> None:
        if not isinstance(observation_space, gym.spaces.Dict):
            raise ValueError(f"MaskFreeExtractor needs a Dict observation space, got {observation_space}")
        keys = sorted(k for k in observation_space.spaces if k != MASK_KEY)
        if not keys:
            raise ValueError("MaskFreeExtractor: the observation has no key besides the action mask")
        size = sum(int(gym.spaces.utils.flatdim(observation_space.spaces[k])) for k in keys)
        super().__init__(observation_space, features_dim=size)
        self.keys = keys

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        """(batch, features_dim) float tensor of the kept entries, flattened and concatenated."""
        return torch.cat([observations[k].flatten(start_dim=1).float() for k in self.keys], dim=1)


__all__ = ["MASK_KEY", "MaskFreeExtractor"]
