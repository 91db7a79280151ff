"""Single-learner Gymnasium environment over the rules engine (DESIGN.md "The environments").

:class:`BattleEnv` lets one learner play one side of a battle; an opponent
(an agent name, an agent object or a policy callable) plays the other side
inside the environment, whenever the engine's pending player is not the
learner. Observations and actions are those of :mod:`env.observation` and
:mod:`env.encoding`, always from the learner's side.

Rewards: +1 win, 0 draw, −1 loss (:data:`WIN_REWARD`, :data:`DRAW_REWARD`,
:data:`LOSS_REWARD`), delivered once, on the step that ends the game
(``terminated``), plus, with ``reward_shaping = w > 0``, on every step
``w · Δ(VP_own − VP_enemy) / points_limit`` (the change since the learner's
previous step, so the shaping sums to ``w · final VP difference / points_limit``).
``truncated`` only comes from ``max_steps`` (learner steps).

Illegal actions (an index the action mask forbids), by ``illegal_action``
(:data:`ILLEGAL_ACTION_MODES`), as PettingZoo's classic games treat them by default:

* ``"lose"`` (the default): the game ends at once as a loss for the learner
  (``terminated``, reward :data:`LOSS_REWARD`, ``info["illegal"]`` True and
  ``info["illegal_reason"]`` a one-line reason naming the index), a warning is
  logged (logger ``battleline.env.battle_env``), and the battle is not changed
  (this holds on the step that only collects a finished game's result too: its
  mask allows index 0 alone);
* ``"penalise"``: reward :data:`ILLEGAL_PENALTY`, the battle does not change and
  the game goes on (``info["illegal"]`` True); the step counts towards ``max_steps``;
* ``"raise"`` (for debugging): :class:`~env.rules.actions.IllegalActionError`,
  nothing changes.

So ``gymnasium.utils.env_checker.check_env`` and SB3's ``check_env``, which step
with unmasked random indices, pass with the default arguments.
"""

from __future__ import annotations

import logging
import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from battleline.env.encoding import ActionCodec
from battleline.env.observation import Observer, victory_points
from battleline.env.rules.actions import Action, IllegalActionError
from battleline.env.rules.battle import Battle
from battleline.env.rules.state import SIDES
from battleline.env.siege_encoding import castle_elements, make_codec

PolicyFn = Callable[[dict[str, np.ndarray], np.ndarray], int]
"""A policy callable: ``fn(observation, mask) -> action index``, both from its own side's view
(``mask`` is bool of shape (size,)), e.g. ``lambda o, m: int(model.predict(o, action_masks=m)[0])``."""

WIN_REWARD = 1.0
"""Outcome reward of a won battle."""

DRAW_REWARD = 0.0
"""Outcome reward of a drawn battle."""

LOSS_REWARD = -1.0
"""Outcome reward of a lost battle, an illegal index with ``illegal_action="lose"`` included."""

ILLEGAL_PENALTY = -1.0
"""Reward of an illegal index with ``illegal_action="penalise"`` (the battle does not change)."""

ILLEGAL_ACTION_MODES = ("lose", "penalise", "raise")
"""The values of :class:`BattleEnv`'s ``illegal_action``; the first is the default."""

logger = logging.getLogger(__name__)
"""Logs a warning for every illegal index with ``illegal_action="lose"``."""


def check_illegal_action(value: Any, modes: Sequence[str] = ILLEGAL_ACTION_MODES) -> str:
    """``illegal_action`` checked against ``modes``; returns it.

    Raises:
        ValueError: any other value (one line listing the modes).
    """
    if not isinstance(value, str) or value not in modes:
        listed = ", ".join(repr(m) for m in modes)
        raise ValueError(f"illegal_action must be one of {listed}, got {value!r}")
    return value


def outcome_reward(winner: str, side: str) -> float:
    """The outcome reward of ``side`` ("blue"/"red") when ``winner`` ("blue", "red" or "draw") won."""
    if winner == "draw":
        return DRAW_REWARD
    return WIN_REWARD if winner == side else LOSS_REWARD

NOT_RUNNING = "the episode has ended (or never started): call reset() first"
"""The RuntimeError's message of ``step`` (and ``action_masks``) when no episode is running."""

OpponentSpec = Any
"""An agent name (``agents.registry.AGENT_NAMES``), an object with ``reset(battle, side)`` and
``act(battle) -> Action``, or a :data:`PolicyFn`."""


def army_pool(value: str | Sequence[str] | None, name: str) -> list[str] | None:
    """An army argument as a list of army ids: one id (a string) or a sequence of ids; None or empty: None.

    Raises:
        TypeError: ``value`` is neither a string nor a sequence of strings (``name`` is the argument's name).
    """
    if value is None:
        return None
    if isinstance(value, str):
        return [value] if value else None
    if not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be an army id or a list of army ids, got {value!r}")
    return list(value) or None


def check_count(name: str, value: Any, hint: str = "") -> None:
    """Reject a ``value`` for the argument ``name`` that is not None or an integer of at least 1.

    Raises:
        TypeError: not an integer (a bool is not one); ValueError: below 1 (``hint`` is added to the message).
    """
    if value is None:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer or None, got {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1{hint}, got {value}")


MAX_UNIT_SLOTS = 128
"""The most unit slots a side an environment takes: the flat action space grows with the square of the slots (an
order for each unit on each enemy), 829,454 actions at 128; 1,000 slots asked for some 50 million and 100,000
ran out of memory."""


def check_unit_slots(unit_slots: Any) -> None:
    """Reject a ``unit_slots`` that is not None or an integer from 1 to :data:`MAX_UNIT_SLOTS` (TypeError /
    ValueError)."""
    check_count("unit_slots", unit_slots, " (or None for the scenario's need)")
    if unit_slots is not None and unit_slots > MAX_UNIT_SLOTS:
        raise ValueError(f"unit_slots must be at most {MAX_UNIT_SLOTS} (the action space grows with the square of "
                         f"the slots), got {unit_slots}")


def check_max_steps(max_steps: Any) -> None:
    """Reject a ``max_steps`` that is not None or an integer of at least 1 (TypeError / ValueError)."""
    check_count("max_steps", max_steps)


def check_scenario(scenario: Any) -> None:
    """Reject a ``scenario`` that is not a scenario name, a YAML path or a dict.

    Raises:
        TypeError: any other kind of value (the scenario itself is checked when it is loaded).
    """
    if not isinstance(scenario, (str, os.PathLike, dict)):
        raise TypeError(f"scenario must be a scenario name, a YAML path or a dict, got {scenario!r}")


def check_flag(name: str, value: Any) -> bool:
    """``value`` of the argument ``name`` as a bool: True or False (a numpy bool too).

    Raises:
        TypeError: anything else (a string such as "no" is not a flag).
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_common(render_mode: Any, max_steps: Any, unit_slots: Any, scenario: Any, planes: Any) -> bool:
    """Check the arguments both environments share (:func:`check_max_steps`, :func:`check_unit_slots`,
    :func:`check_scenario`, :func:`check_flag`); returns ``planes`` as a bool.

    Raises:
        ValueError: ``render_mode`` other than None or "rgb_array", or a count below 1.
        TypeError: an argument of the wrong kind.
    """
    if render_mode not in (None, "rgb_array"):
        raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
    check_max_steps(max_steps)
    check_unit_slots(unit_slots)
    check_scenario(scenario)
    return check_flag("planes", planes)


def check_reward_shaping(value: Any) -> float:
    """``reward_shaping`` as a float: a finite number of at least 0 (the rule of training configs).

    Raises:
        TypeError: not a real number (a bool is not one); ValueError: NaN, infinite or negative.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"reward_shaping must be a number, got {value!r}")
    try:
        weight = float(value)
    except OverflowError:  # an int too large for a float
        weight = math.inf
    if not (math.isfinite(weight) and weight >= 0):
        raise ValueError(f"reward_shaping must be a finite number >= 0, got {value!r}")
    return weight


RESET_OPTIONS = ("learner_side", "blue_army", "red_army")
"""The keys :meth:`BattleEnv.reset` accepts in ``options``."""


def reset_options(options: Any, accepted: Sequence[str] | None) -> dict[str, Any]:
    """``reset``'s ``options`` as a dict: None (no options) or a mapping whose keys are all in ``accepted``
    (None: any key), with army ids (``blue_army``, ``red_army``) that are strings or None.

    Raises:
        TypeError: ``options`` is not a mapping, or an army option is not a string or None.
        ValueError: an unknown key (the message lists the accepted keys).
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options must be a dict or None, got {options!r}")
    for key in options:
        if accepted is not None and key not in accepted:
            raise ValueError(f"options: unknown key {key!r}; accepted keys: {', '.join(accepted)}")
    for key in ("blue_army", "red_army"):
        value = options.get(key)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"options['{key}'] must be an army id (a string) or None, got {value!r}")
    return dict(options)


def action_index(action: Any, name: str = "action") -> int:
    """An action index as an int: a Python int, a numpy integer or a 0-d integer array (as SB3 passes them).

    ``name`` is what the message calls the value (e.g. an opponent's action).

    Raises:
        TypeError: anything else (a float, a string, a bool, an array of several values).
    """
    if isinstance(action, np.ndarray) and action.ndim == 0:
        action = action[()]
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    shown = f"array of shape {action.shape}" if isinstance(action, np.ndarray) else repr(action)
    raise TypeError(f"{name} must be an integer index (int or numpy integer), got {type(action).__name__} {shown}")


def scenario_unit_slots(
    scenario: str | dict[str, Any],
    blue_armies: Sequence[str] | None = None,
    red_armies: Sequence[str] | None = None,
) -> int:
    """Unit slots a scenario needs: the most units any side can field (its army, or any listed army)."""
    from battleline.env.rules.config import load_army

    battle = Battle.from_scenario(scenario, seed=0)
    counts = [sum(u.side == side for u in battle.state.units) for side in (0, 1)]
    pools = (army_pool(blue_armies, "blue_armies"), army_pool(red_armies, "red_armies"))
    for side, pool in enumerate(pools):
        for army in pool or ():
            counts[side] = max(counts[side], len(load_army(army).units))
    return max(counts)


class _Opponent:
    """Adapter: every kind of :data:`OpponentSpec` behind ``reset`` / ``act``."""

    def __init__(self, spec: OpponentSpec, codec: ActionCodec, observer: Observer) -> None:
        if not (isinstance(spec, str) or hasattr(spec, "act") or callable(spec)):
            raise TypeError(f"opponent must be an agent name, an agent with reset/act, or a callable policy; got {spec!r}")
        if isinstance(spec, str):  # an unknown name fails here, not at the next reset
            from battleline.agents import registry

            if spec not in registry.AGENT_NAMES and not spec.startswith(registry.MODEL_PREFIX):
                registry.make_agent(spec)  # raises UnknownAgentError, one line listing the known names
        self.spec = spec
        self.codec = codec
        self.observer = observer
        self.agent: Any = None
        self.side = 1

    @property
    def name(self) -> str:
        if isinstance(self.spec, str):
            return self.spec
        default = getattr(self.spec, "__name__", type(self.spec).__name__)
        return str(getattr(self.spec, "name", default))

    def reset(self, battle: Battle, side: int, seed: int) -> None:
        self.side = side
        if isinstance(self.spec, str):
            from battleline.agents.registry import make_agent

            self.agent = make_agent(self.spec, seed=seed)
        else:
            self.agent = self.spec
        if hasattr(self.agent, "reset"):
            self.agent.reset(battle, side)

    def act(self, battle: Battle) -> Action:
        if hasattr(self.agent, "act"):
            return self.agent.act(battle)
        mask = self.codec.mask(battle, self.side)
        obs = self.observer.observe(battle, self.side, mask)
        index = action_index(self.agent(obs, mask), f"the action of opponent {self.name!r}")
        if not (0 <= index < self.codec.size and mask[index]):
            raise IllegalActionError(f"opponent policy chose index {index}, which its mask does not allow")
        return self.codec.decode(index, battle, self.side)


def resolve_unit_slots(
    unit_slots: int | None,
    scenario: str | dict[str, Any],
    blue_armies: Sequence[str] | None = None,
    red_armies: Sequence[str] | None = None,
) -> int:
    """Unit slots per side of an environment: ``unit_slots``, or :func:`scenario_unit_slots` when None.

    Raises:
        ValueError: ``unit_slots`` is fewer than the scenario (and army pools) field a side; the battle
            could not be encoded (at the first observation, before this check).
    """
    need = scenario_unit_slots(scenario, blue_armies, red_armies)
    if unit_slots is None:
        return need
    if unit_slots < need:
        raise ValueError(f"unit_slots {unit_slots} is too few: the scenario (with its army lists) fields up to "
                         f"{need} units a side")
    return unit_slots


class BattleEnv(gym.Env[dict[str, np.ndarray], np.int64]):
    """One learner against an opponent played inside the environment.

    Args:
        scenario: a scenario name in ``configs/scenarios`` (or a YAML path or dict).
        opponent: :data:`OpponentSpec`; a name builds a fresh agent each episode,
            seeded from the episode's seed. A ``model:PATH`` is loaded and checked
            against the scenario (and army lists) here, as the CLI checks it.
        learner_side: "blue", "red" or "random" (drawn each episode).
        blue_army, red_army: army-list ids to draw from each episode, or one id
            (None: the scenario's).
        reward_shaping: weight ``w`` of the VP-difference shaping, a finite number >= 0
            (0 = terminal reward only).
        max_steps: truncate after this many learner steps (None: never).
        render_mode: None or "rgb_array".
        illegal_action: what an index the mask forbids (or one outside the action space) does;
            the battle is never changed by it:
            "lose" (default, PettingZoo's classic-games convention): the game ends as a loss for
            the learner (``terminated``, reward :data:`LOSS_REWARD`, ``info["illegal"]`` True,
            ``info["illegal_reason"]`` naming the index, a logged warning); "penalise": reward
            :data:`ILLEGAL_PENALTY`, the game goes on (``info["illegal"]`` True; the step counts towards
            ``max_steps``); "raise" (for debugging): :class:`IllegalActionError`.
        planes: add the raster ``planes`` to the observation (True or False).
        unit_slots: unit slots per side, at least the scenario's need (None: :func:`scenario_unit_slots`);
            set it to share one action space between scenarios or army pools.

    Raises:
        ValueError / TypeError: a bad argument (named in the message).
        agents.registry.UnknownAgentError: an unknown agent name, or a ``model:PATH`` opponent
            whose file is missing or is not a policy.
        agents.learned.ModelLoadError: a ``model:PATH`` opponent that cannot play the scenario
            (too few unit slots, or no siege orders for its castle); the message names the model.

    Spaces:
        ``action_space``: ``Discrete(codec.size)``; ``observation_space``: the
        ``Dict`` of :meth:`Observer.space` (``units``, ``globals``, optional
        ``planes``, ``action_mask``).

    Info keys (every step): ``legal_count`` (allowed indices now),
    ``illegal`` (the index was refused), ``illegal_count`` (this episode),
    ``learner_side`` ("blue"/"red"), ``opponent``, ``turn``, ``pending``
    (kind of the learner's next decision); at the end also ``winner``,
    ``vp`` {side: points}, ``margin`` (learner VP − enemy VP) and
    ``is_success`` (the learner won); after an illegal index also
    ``illegal_reason`` (one line naming the index; with "lose" ``winner`` is the
    opponent's side and ``vp`` the standing when the game was lost).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(
        self,
        scenario: str | dict[str, Any] = "pitched_battle",
        opponent: OpponentSpec = "random",
        learner_side: str = "random",
        blue_army: Sequence[str] | None = None,
        red_army: Sequence[str] | None = None,
        reward_shaping: float = 0.0,
        max_steps: int | None = None,
        render_mode: str | None = None,
        illegal_action: str = "lose",
        planes: bool = False,
        unit_slots: int | None = None,
    ) -> None:
        if learner_side not in ("random", "blue", "red"):
            raise ValueError(f"learner_side must be 'random', 'blue' or 'red', got {learner_side!r}")
        check_illegal_action(illegal_action)
        planes = check_common(render_mode, max_steps, unit_slots, scenario, planes)
        self.scenario = scenario
        self.learner_side_mode = learner_side
        self.blue_armies = army_pool(blue_army, "blue_army")
        self.red_armies = army_pool(red_army, "red_army")
        self.reward_shaping = check_reward_shaping(reward_shaping)
        self.max_steps = max_steps
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        n = resolve_unit_slots(unit_slots, scenario, self.blue_armies, self.red_armies)
        self.codec = make_codec(n, castle_elements(scenario))  # a siege adds its block (env.siege_encoding)
        self.observer = Observer(self.codec, planes=planes)
        self.action_space = spaces.Discrete(self.codec.size)
        self.observation_space = self.observer.space()
        self._opponent = self._new_opponent(opponent)
        self.battle: Battle | None = None
        self.learner = 0
        self._mask = np.zeros(self.codec.size, dtype=bool)
        self._potential = 0.0
        self._steps = 0
        self._illegal = 0
        self._done = True
        self._abandoned: str | None = None

    # ------------------------------------------------------------------ opponent
    def set_opponent(self, opponent: OpponentSpec) -> None:
        """Replace the opponent (:data:`OpponentSpec`); call it between episodes.

        Called mid-episode, the new opponent is reset onto the running battle
        and plays the rest of it. A bad opponent raises and the old one stays.

        Raises:
            TypeError: ``opponent`` is no :data:`OpponentSpec`.
            agents.registry.UnknownAgentError: an unknown agent name, or a ``model:PATH``
                whose file is missing or is not a policy.
            agents.learned.ModelLoadError: a ``model:PATH`` that cannot play the scenario.
        """
        new = self._new_opponent(opponent)
        if self.battle is not None and not self._done:
            new.reset(self.battle, 1 - self.learner, int(self.np_random.integers(2**31)))
        self._opponent = new

    def _new_opponent(self, spec: OpponentSpec) -> _Opponent:
        """:class:`_Opponent` for ``spec``; a ``model:PATH`` is loaded now and must fit the scenario and armies."""
        opponent = _Opponent(spec, self.codec, self.observer)
        if isinstance(spec, str):  # the CLI's and training configs' check; it loads nothing for other names
            from battleline.training.play import check_model_agents  # training is a layer above env: imported on use

            check_model_agents(self.scenario, [spec], self.blue_armies, self.red_armies)
        return opponent

    @property
    def opponent_name(self) -> str:
        """The opponent's name (agent name, agent ``name`` attribute, or class name)."""
        return self._opponent.name

    # ------------------------------------------------------------------ gym API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Start a new battle.

        Options (all optional; :data:`RESET_OPTIONS`): ``learner_side`` ("blue"/"red"),
        ``blue_army``, ``red_army`` (army ids) override the per-episode draws.

        The same ``seed`` (with the same options and opponent) gives the same
        episode for the same learner actions.

        Raises:
            ValueError: an unknown option key, or a bad ``learner_side``.
            TypeError: ``options`` is not a dict, or an army option is not a string or None
                (bad options change nothing, the random generator included).
            ConfigError: an army id that does not exist or does not fit the scenario.
        """
        options = reset_options(options, RESET_OPTIONS)
        side = options.get("learner_side", self.learner_side_mode)
        if side not in ("random", "blue", "red"):
            raise ValueError(f"options['learner_side'] must be 'random', 'blue' or 'red', got {side!r}")
        super().reset(seed=seed)
        rng = self.np_random
        self._done, self._abandoned = True, None
        self.learner = int(rng.integers(2)) if side == "random" else SIDES.index(side)
        blue = options.get("blue_army") or (self.blue_armies[int(rng.integers(len(self.blue_armies)))] if self.blue_armies else None)
        red = options.get("red_army") or (self.red_armies[int(rng.integers(len(self.red_armies)))] if self.red_armies else None)
        battle_seed, opp_seed = (int(v) for v in rng.integers(2**31, size=2))
        self.battle = Battle.from_scenario(self.scenario, seed=battle_seed, blue_army=blue, red_army=red)
        self._opponent.reset(self.battle, 1 - self.learner, opp_seed)
        self._steps = 0
        self._illegal = 0
        self._potential = self._vp_potential()
        self._play_opponent()
        self._done = False
        obs = self._observe()
        return obs, self._info(illegal=False)

    def step(self, action: int | np.integer) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """Apply the learner's action index, then let the opponent play until the learner decides again.

        Raises:
            TypeError: ``action`` is not an integer (see :func:`action_index`).
            IllegalActionError: the mask forbids ``action`` (only with ``illegal_action="raise"``;
                nothing changes; with "lose" the game ends as a loss, with "penalise" it goes on),
                or the opponent chose an illegal action (the episode is then abandoned: call
                :meth:`reset`).
            RuntimeError: the episode has ended or was abandoned; call :meth:`reset`.
        """
        if self._abandoned is not None:
            raise RuntimeError(f"the episode was abandoned ({self._abandoned}): call reset() first")
        if self.battle is None or self._done:
            raise RuntimeError(NOT_RUNNING)
        index = action_index(action)
        battle = self.battle
        if not (0 <= index < self.codec.size and self._mask[index]):
            return self._illegal_step(index)
        if not battle.is_over:  # over already: index 0 only collects the result
            battle.apply(self.codec.decode(index, battle, self.learner))
            self._play_opponent()
        self._steps += 1
        reward = 0.0
        vp = None
        if self.reward_shaping:  # the observation's VP features share the one count
            vp = victory_points(battle)
            potential = self._vp_potential(vp)
            reward += self.reward_shaping * (potential - self._potential)
            self._potential = potential
        terminated = battle.is_over
        truncated = not terminated and self.max_steps is not None and self._steps >= self.max_steps
        obs = self._observe(vp)
        info = self._info(illegal=False)
        if terminated:
            winner = battle.result["winner"]
            reward += outcome_reward(winner, SIDES[self.learner])
            info.update(self._outcome_info(winner))
        self._done = terminated or truncated
        return obs, float(reward), terminated, truncated, info

    def _illegal_step(self, index: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        """The step of an index the mask forbids, by ``illegal_action``; the battle is not changed.

        Raises:
            IllegalActionError: with ``illegal_action="raise"`` (nothing changes).
        """
        assert self.battle is not None
        reason = (
            f"action index {index} is not allowed now ({self._describe(index)}; "
            f"{int(self._mask.sum())} allowed, pending {self.battle.pending.kind})"
        )
        if self.illegal_action == "raise":
            raise IllegalActionError(reason)
        self._illegal += 1
        info = self._info(illegal=True)
        info["illegal_reason"] = reason
        if self.illegal_action == "penalise":  # a learner step all the same: max_steps still truncates
            self._steps += 1
            truncated = self.max_steps is not None and self._steps >= self.max_steps
            self._done = truncated
            return self._observe(), ILLEGAL_PENALTY, False, truncated, info
        logger.warning("illegal action: the game ends as a loss for %s: %s", SIDES[self.learner], reason)
        self._steps += 1
        self._done = True
        info.update(self._outcome_info(SIDES[1 - self.learner]))
        return self._observe(), LOSS_REWARD, True, False, info

    def _outcome_info(self, winner: str) -> dict[str, Any]:
        """The end-of-game info keys: ``winner``, ``vp`` (the standing now), ``margin``, ``is_success``."""
        assert self.battle is not None
        vp = self.battle.result["vp"]
        me, them = SIDES[self.learner], SIDES[1 - self.learner]
        return {"winner": winner, "vp": dict(vp), "margin": vp[me] - vp[them], "is_success": winner == me}

    def action_masks(self) -> np.ndarray:
        """The learner's current mask, bool of shape (size,) (for sb3-contrib's MaskablePPO).

        Raises:
            RuntimeError: before the first :meth:`reset` (there is no battle to mask).
        """
        if self.battle is None:
            raise RuntimeError(NOT_RUNNING)
        return self._mask.copy()

    def render(self) -> np.ndarray | None:
        """With ``render_mode="rgb_array"``: the table as a uint8 (H, W, 3) RGB array; else None."""
        if self.render_mode != "rgb_array" or self.battle is None:
            return None
        from battleline.env.render import render_battle

        return render_battle(self.battle)

    # ------------------------------------------------------------------ helpers
    def _play_opponent(self) -> None:
        """Let the opponent decide until the learner's turn; if it fails, the episode is abandoned.

        An opponent that raises (an illegal choice, a crash) leaves a battle the
        learner cannot go on with: ``step`` then raises until :meth:`reset`.
        """
        battle = self.battle
        assert battle is not None
        try:
            while not battle.is_over and battle.pending.player != self.learner:
                battle.apply(self._opponent.act(battle))
        except Exception as exc:
            self._done = True
            self._abandoned = f"the opponent {self._opponent.name!r} failed: {type(exc).__name__}: {exc}"
            if isinstance(exc, IllegalActionError):
                raise IllegalActionError(f"opponent {self._opponent.name!r}: {exc}; "
                                         f"the episode is abandoned: call reset()") from exc
            exc.add_note("the episode is abandoned: call reset()")
            raise

    def _observe(self, vp: list[int] | None = None) -> dict[str, np.ndarray]:
        """The learner's observation now; its mask is kept for :meth:`action_masks` and the next step.

        ``vp``: :func:`victory_points` of the battle now, when already counted.
        """
        assert self.battle is not None
        self._mask = self.codec.mask(self.battle, self.learner)
        return self.observer.observe(self.battle, self.learner, self._mask, vp)

    def _vp_potential(self, vp: list[int] | None = None) -> float:
        """The shaping potential (learner VP − enemy VP) / points limit; 0 without shaping.

        ``vp``: :func:`victory_points` of the battle now, when already counted.
        """
        if not self.reward_shaping or self.battle is None:
            return 0.0
        if vp is None:
            vp = victory_points(self.battle)
        return (vp[self.learner] - vp[1 - self.learner]) / self.battle.state.points_limit

    def _describe(self, index: int) -> str:
        if not 0 <= index < self.codec.size:
            return f"outside 0..{self.codec.size - 1}"
        return self.codec.describe(index)

    def _info(self, illegal: bool) -> dict[str, Any]:
        assert self.battle is not None
        return {
            "legal_count": int(np.count_nonzero(self._mask)),
            "illegal": illegal,
            "illegal_count": self._illegal,
            "learner_side": SIDES[self.learner],
            "opponent": self._opponent.name,
            "turn": self.battle.state.turn,
            "pending": self.battle.pending.kind,
        }
