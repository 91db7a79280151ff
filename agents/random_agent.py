"""The random agent: a uniform choice among the legal actions."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from battleline.env.rules.actions import Action

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


class RandomAgent:
    """Picks uniformly among ``battle.legal_actions()`` (``end_phase`` included) — the baseline opponent.

    Args:
        seed: seeds the agent's own ``numpy.random.Generator``; the battle's
            dice are separate, so the same seeds replay the same game.
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.side = 0

    def reset(self, battle: Battle, side: int) -> None:
        """Remember the side; the generator keeps its stream across battles."""
        self.side = side

    def act(self, battle: Battle) -> Action:
        """A uniformly random legal action."""
        legal = battle.legal_actions()
        return legal[int(self.rng.integers(len(legal)))]
