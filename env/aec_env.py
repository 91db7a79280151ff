"""PettingZoo AEC environment over the rules engine, for two learners and self-play.

:class:`BattleAECEnv` has the agents ``"blue"`` and ``"red"``. The agent
selected is always the engine's pending player (it may be selected many times
in a row). Spaces are those of :class:`env.battle_env.BattleEnv` with the same
scenario: ``Discrete(codec.size)`` actions and a ``Dict`` observation seen from
the observing agent's side, with ``action_mask`` inside (int8; for an agent that
does not decide now only index 0 is allowed).

Rewards: +1 to the winner and −1 to the loser (0 each for a draw), set once on
the step that ends the game; each agent then reads its reward once from
``last()`` and answers with ``step(None)``. ``max_steps`` (decisions of both
agents) truncates both agents without a reward.

Illegal actions, by ``illegal_action`` (:data:`AEC_ILLEGAL_ACTION_MODES`):
``"lose"`` (the default, PettingZoo's classic-games convention) ends the game at
once as a loss for the agent that chose an index its mask forbids (−1 to it, +1
to the other, every agent terminated; each agent's info has ``illegal`` True,
``illegal_agent`` and ``illegal_reason``, a one line reason naming the index), a
warning is logged (logger ``battleline.env.aec_env``) and the battle is not
changed; ``"raise"`` (for debugging) raises
:class:`~env.rules.actions.IllegalActionError` and changes nothing.

Module conventions of PettingZoo: :func:`env` is the raw environment inside
PettingZoo's standard wrappers (``AssertOutOfBoundsWrapper``: an index outside
the action space is an ``AssertionError``; ``OrderEnforcingWrapper``), and
:func:`raw_env` the bare :class:`BattleAECEnv`.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from battleline.env.battle_env import (
    action_index,
    army_pool,
    check_common,
    check_illegal_action,
    outcome_reward,
    reset_options,
    resolve_unit_slots,
)
from battleline.env.observation import Observer
from battleline.env.rules.actions import IllegalActionError
from battleline.env.rules.battle import Battle, check_seed
from battleline.env.rules.state import SIDES
from battleline.env.siege_encoding import castle_elements, make_codec

AEC_ILLEGAL_ACTION_MODES = ("lose", "raise")
"""The values of :class:`BattleAECEnv`'s ``illegal_action``; the first is the default."""

logger = logging.getLogger(__name__)
"""Logs a warning for every illegal index with ``illegal_action="lose"``."""


class BattleAECEnv(AECEnv[str, dict[str, np.ndarray], int]):
    """Two learners, one battle, alternating by the engine's pending player.

    Args:
        scenario: a scenario name in ``configs/scenarios`` (or a YAML path or dict).
        blue_army, red_army: army-list ids to draw from each episode, or one id
            (None: the scenario's).
        max_steps: truncate after this many decisions in all, at least 1 (None: never).
        render_mode: None or "rgb_array".
        planes: add the raster ``planes`` to observations.
        unit_slots: unit slots per side, at least the scenario's need (None: that need).
        illegal_action: "lose" (default): an index the agent's mask forbids (or one outside
            the action space) ends the game as a loss for that agent (reward −1, +1 to the
            other, every agent terminated, ``illegal``/``illegal_agent``/``illegal_reason``
            in every agent's info, a logged warning; the battle is not changed); "raise"
            (for debugging): :class:`IllegalActionError`, nothing changes.

    Raises:
        ValueError / TypeError: a bad argument (named in the message).

    Misuse raises a clear error: ``step``, ``last`` or ``observe`` before
    :meth:`reset` (RuntimeError), an unknown agent name (ValueError), a
    non-integer action (TypeError). Once every agent is done (``agents == []``),
    ``step`` warns and does nothing, as PettingZoo's order-enforcing wrapper
    does, and ``last`` raises (RuntimeError): call :meth:`reset`.

    Attributes:
        battle: the running :class:`~env.rules.battle.Battle`.
        codec: the :class:`~env.encoding.ActionCodec`.
    """

    metadata = {"name": "battleline_v0", "render_modes": ["rgb_array"], "is_parallelizable": False, "render_fps": 2}

    def __init__(
        self,
        scenario: str | dict[str, Any] = "pitched_battle",
        blue_army: Sequence[str] | None = None,
        red_army: Sequence[str] | None = None,
        max_steps: int | None = None,
        render_mode: str | None = None,
        planes: bool = False,
        unit_slots: int | None = None,
        illegal_action: str = "lose",
    ) -> None:
        super().__init__()
        planes = check_common(render_mode, max_steps, unit_slots, scenario, planes)
        self.illegal_action = check_illegal_action(illegal_action, AEC_ILLEGAL_ACTION_MODES)
        self.scenario = scenario
        self.blue_armies = army_pool(blue_army, "blue_army")
        self.red_armies = army_pool(red_army, "red_army")
        self.max_steps = max_steps
        self.render_mode = render_mode
        n = resolve_unit_slots(unit_slots, scenario, self.blue_armies, self.red_armies)
        self.codec = make_codec(n, castle_elements(scenario))  # a siege adds its block (env.siege_encoding)
        self.observer = Observer(self.codec, planes=planes)
        self.possible_agents = list(SIDES)
        self._obs_space = self.observer.space()
        self._act_space = spaces.Discrete(self.codec.size)
        self._rng: np.random.Generator | None = None
        self.battle: Battle | None = None
        self._steps = 0
        self._mask_key: tuple[int, int, int] | None = None
        self._mask_value = np.zeros(self.codec.size, dtype=bool)

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Dict:
        """The observation ``Dict`` (the same object for both agents)."""
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        """``Discrete(codec.size)`` (the same object for both agents)."""
        return self._act_space

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a battle; the same ``seed`` and actions give the same episode.

        Options (optional): ``blue_army``, ``red_army`` override the draws. Other keys
        are ignored (PettingZoo's ``api_test`` passes one), unlike :meth:`BattleEnv.reset`.

        Raises:
            TypeError: ``options`` is not a dict, or an army option is not a string or None
                (bad options change nothing, the random generator included).
            ValueError: ``seed`` is neither None nor an integer >= 0 (changes nothing either).
            ConfigError: an army id that does not exist or does not fit the scenario.
        """
        options = reset_options(options, None)
        if seed is not None:
            check_seed(seed)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        rng = self._rng
        blue = options.get("blue_army") or (self.blue_armies[int(rng.integers(len(self.blue_armies)))] if self.blue_armies else None)
        red = options.get("red_army") or (self.red_armies[int(rng.integers(len(self.red_armies)))] if self.red_armies else None)
        self.battle = Battle.from_scenario(self.scenario, seed=int(rng.integers(2**31)), blue_army=blue, red_army=red)
        self._steps = 0
        self._mask_key = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self.agent_selection = SIDES[self.battle.pending.player or 0]
        self._update_infos()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation (its own side's view, ``action_mask`` included).

        Raises:
            RuntimeError: before :meth:`reset`.
            ValueError: ``agent`` is not "blue" or "red".
        """
        self._check_reset("observe")
        assert self.battle is not None
        if agent not in SIDES:
            raise ValueError(f"unknown agent {agent!r}; the agents are {', '.join(map(repr, self.possible_agents))}")
        player = SIDES.index(agent)
        return self.observer.observe(self.battle, player, self._mask(player))

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """Observation, cumulative reward, terminated, truncated and info of the selected agent.

        Raises:
            RuntimeError: before :meth:`reset`, or once every agent is done (``agents == []``).
        """
        self._check_reset("last")
        if not self.agents:
            raise RuntimeError("last(): the game is over and every agent is done (agents == []): call reset()")
        return super().last(observe)

    def _check_reset(self, what: str) -> None:
        if self.battle is None:
            raise RuntimeError(f"{what}() before reset(): call reset() first")

    def _mask(self, player: int) -> np.ndarray:
        """``codec.mask`` for ``player``, memoised for the current decision."""
        assert self.battle is not None
        key = (id(self.battle), self.battle.state.step, player)
        if self._mask_key != key:
            self._mask_key, self._mask_value = key, self.codec.mask(self.battle, player)
        return self._mask_value

    def step(self, action: int | np.integer | None) -> None:
        """Apply the selected agent's action index (None for an agent that is done).

        Once every agent is done (``agents == []``) it warns and does nothing.

        Raises:
            RuntimeError: before :meth:`reset`.
            TypeError: ``action`` is neither None nor an integer.
            IllegalActionError: the agent's mask forbids ``action``, with ``illegal_action="raise"``
                (nothing changes; with "lose" the game ends as that agent's loss), or ``action``
                is None for an agent still playing.
        """
        self._check_reset("step")
        if not self.agents:
            warnings.warn("step() called after every agent is done (agents == []): call reset(); "
                          "the step is ignored", stacklevel=2)
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.battle is not None
        player = SIDES.index(agent)
        if action is None:
            raise IllegalActionError(f"agent {agent} is still playing; None is only for an agent that is done")
        index = action_index(action)
        mask = self._mask(player)
        if not (0 <= index < self.codec.size and mask[index]):
            reason = (f"action index {index} is not allowed for {agent} now ({self._describe(index)}; "
                      f"{int(mask.sum())} allowed, pending {self.battle.pending.kind})")
            if self.illegal_action == "raise":
                raise IllegalActionError(reason)
            self._lose_by_illegal_action(agent, reason)
            return
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self.battle.apply(self.codec.decode(index, self.battle, player))
        self._steps += 1
        if self.battle.is_over:
            winner = self.battle.result["winner"]
            for a in self.agents:
                self.rewards[a] = outcome_reward(winner, a)
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = SIDES[1 - player]
        elif self.max_steps is not None and self._steps >= self.max_steps:
            self.truncations = dict.fromkeys(self.agents, True)
            self.agent_selection = SIDES[1 - player]
        else:
            self.agent_selection = SIDES[self.battle.pending.player or 0]
        self._update_infos()
        self._accumulate_rewards()

    def render(self) -> np.ndarray | None:
        """With ``render_mode="rgb_array"``: the table as a uint8 (H, W, 3) RGB array; else None."""
        if self.render_mode != "rgb_array" or self.battle is None:
            return None
        from battleline.env.render import render_battle

        return render_battle(self.battle)

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ helpers
    def _lose_by_illegal_action(self, agent: str, reason: str) -> None:
        """End the game as ``agent``'s loss for an illegal index (``illegal_action="lose"``); the battle is kept."""
        logger.warning("illegal action: the game ends as a loss for %s: %s", agent, reason)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._steps += 1
        other = SIDES[1 - SIDES.index(agent)]
        for a in self.agents:
            self.rewards[a] = outcome_reward(other, a)
        self.terminations = dict.fromkeys(self.agents, True)
        self._update_infos()
        for a in self.agents:
            self.infos[a].update(illegal=True, illegal_agent=agent, illegal_reason=reason, winner=other)
        self.agent_selection = other
        self._accumulate_rewards()

    def _describe(self, index: int) -> str:
        if not 0 <= index < self.codec.size:
            return f"outside 0..{self.codec.size - 1}"
        return self.codec.describe(index)

    def _update_infos(self) -> None:
        assert self.battle is not None
        pending = self.battle.pending
        result = self.battle.result if self.battle.is_over else None
        for a in self.agents:
            info: dict[str, Any] = {"turn": self.battle.state.turn, "pending": pending.kind, "illegal": False}
            if pending.player == SIDES.index(a):
                info["legal_count"] = len(self.battle.legal_actions())
            if result is not None:
                info.update(winner=result["winner"], vp=dict(result["vp"]))
            self.infos[a] = info


def raw_env(**kwargs: Any) -> BattleAECEnv:
    """The bare :class:`BattleAECEnv` (PettingZoo's ``raw_env`` convention); ``kwargs`` are its arguments.

    Raises:
        ValueError / TypeError: a bad argument (named in the message).
    """
    return BattleAECEnv(**kwargs)


def env(**kwargs: Any) -> AECEnv[str, dict[str, np.ndarray], int]:
    """:func:`raw_env` inside PettingZoo's standard wrappers (``AssertOutOfBoundsWrapper``,
    ``OrderEnforcingWrapper``), as PettingZoo's own environments' ``env()``.

    The illegal-move wrapper is not added: the raw environment's default ``illegal_action="lose"``
    already ends the game as the offender's loss, and gives the other agent the win.

    Raises:
        ValueError / TypeError: a bad argument (named in the message).
    """
    wrapped: AECEnv[str, dict[str, np.ndarray], int] = wrappers.AssertOutOfBoundsWrapper(raw_env(**kwargs))
    return wrappers.OrderEnforcingWrapper(wrapped)
