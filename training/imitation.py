"""Behaviour-cloning warm start: record a scripted expert's decisions, then fit the policy to them.

A training config with an ``imitation:`` section (:class:`training.config.ImitationConfig`)
runs two steps before PPO (``battleline train``):

1. :func:`record_demonstrations` plays ``episodes`` games of the training
   environment (:class:`env.battle_env.BattleEnv` inside
   :class:`training.pool.TrainingEnv`, so opponents, seats and army lists are
   drawn as in training, from fixed seeds) in which the learner's seat is
   played by the expert agent (any registered agent name). At every learner
   decision it stores the observation the policy sees, the expert's engine
   action encoded by the env's own codec (:meth:`env.encoding.ActionCodec.encode`)
   into the flat ``Discrete`` index, and the action mask; an index the mask
   does not allow raises :class:`DemonstrationError`.
2. :func:`behaviour_clone` trains the MaskablePPO policy (features extractor,
   policy network and action net) with the masked cross-entropy
   ``-log Σ_{a in A_expert} π(a | s)``, where ``A_expert`` is the expert's label
   set (its one choice, or with ``any_order`` every order it would give next in
   any order of its units), π the policy's action distribution with
   the mask applied exactly as sb3-contrib applies it (masked logits set to
   −1e8), for ``epochs`` passes over shuffled minibatches, with its own Adam
   optimiser (PPO's optimiser state is left untouched). With ``value: true`` the
   value network is fitted as well (mean squared error) to each decision's
   discounted return-to-go of the recorded episode (``gamma`` of the run).

Units: rewards and returns as :class:`~env.battle_env.BattleEnv` delivers them
(±1 for a win/loss plus the configured VP shaping); accuracy is the share of
decisions whose masked argmax equals the expert's index.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from battleline.training.config import ImitationConfig, TrainingConfig
from battleline.training.pool import PoolEntry, TrainingEnv, build_pool


class DemonstrationError(RuntimeError):
    """The expert chose an action whose index the learner's mask does not allow (one line)."""


@dataclass
class Demonstrations:
    """Recorded expert decisions, stacked along axis 0 (``N`` decisions).

    Attributes:
        observations: the env's observation keys, each an array of shape (N, *key shape),
            dtype as in the observation space (float32 features, int8 ``action_mask``).
        label_sets: int64 (N, K): every index the expert accepts at the decision (its
            ``acceptable_actions``; column 0 is the order it gives itself), padded with -1;
            K = 1 for an expert that has a single answer.
        masks: bool (N, codec size): the learner's mask at each decision.
        returns: float32 (N,): discounted return-to-go of the decision's episode.
        episode: int32 (N,): the episode each decision belongs to.
        episodes: games played; wins: games the expert won; seconds: wall-clock recording time.
    """

    observations: dict[str, np.ndarray]
    label_sets: np.ndarray
    masks: np.ndarray
    returns: np.ndarray
    episode: np.ndarray
    episodes: int
    wins: int
    seconds: float

    @property
    def actions(self) -> np.ndarray:
        """int64 (N,): the expert's own action index at each decision (column 0 of ``label_sets``)."""
        return self.label_sets[:, 0]

    def __len__(self) -> int:
        return int(self.label_sets.shape[0])

    def __add__(self, other: Demonstrations) -> Demonstrations:
        """Both sets of decisions (``other``'s episode ids shifted past this one's); counts and seconds add."""
        shift = int(self.episode.max()) + 1 if len(self) else 0
        return Demonstrations(
            observations={k: np.concatenate([v, other.observations[k]]) for k, v in self.observations.items()},
            label_sets=_stack_padded([self.label_sets, other.label_sets]),
            masks=np.concatenate([self.masks, other.masks]),
            returns=np.concatenate([self.returns, other.returns]),
            episode=np.concatenate([self.episode, other.episode + shift]),
            episodes=self.episodes + other.episodes, wins=self.wins + other.wins, seconds=self.seconds + other.seconds,
        )


def _stack_padded(blocks: list[np.ndarray]) -> np.ndarray:
    """Concatenate int64 (n_i, k_i) label sets along axis 0, padding the narrower ones with -1 columns."""
    width = max(b.shape[1] for b in blocks)
    return np.concatenate([np.pad(b, ((0, 0), (0, width - b.shape[1])), constant_values=-1) for b in blocks])


def _padded(rows: list[list[int]]) -> np.ndarray:
    """int64 (len(rows), longest row, at least 1): the rows left-aligned, padded with -1."""
    out = np.full((len(rows), max(map(len, rows), default=1)), -1, dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out


def _returns_to_go(rewards: list[float], gamma: float) -> list[float]:
    out, acc = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        acc = rewards[t] + gamma * acc
        out[t] = acc
    return out


def record_demonstrations(
    env: TrainingEnv, expert: str, episodes: int, seed: int = 0, gamma: float = 0.99, policy: Any = None,
    any_order: bool = False,
) -> Demonstrations:
    """Play ``episodes`` games with ``expert`` in the learner's seat and record its decisions.

    Args:
        env: a training environment (its ``BattleEnv`` draws the seat and armies, the
            wrapper the opponent); episode ``e`` is reset with seed ``seed + e``.
        expert: a registered agent name (``agents.registry.AGENT_NAMES``); a fresh
            agent, seeded ``seed + e``, is asked for its order at every learner decision
            of each episode: that order is the recorded label.
        episodes: games to play (>= 1).
        gamma: discount of the recorded returns-to-go.
        policy: None: the expert's orders are played (behaviour cloning). A
            ``MaskableActorCriticPolicy``: the policy's own deterministic masked action is
            played and the expert only labels the states the policy reaches (a DAgger
            round: Ross, Gordon & Bagnell 2011); ``wins`` then counts the policy's wins.
        any_order: label each decision with every order the expert accepts there
            (:meth:`agents.base.ScriptedAgent.acceptable_actions`: its units' moves, volleys
            and charges in any order) instead of its single choice; experts without that
            method keep the single choice.

    Raises:
        DemonstrationError: the expert's action encodes to an index its mask forbids.
        ValueError: ``episodes`` < 1 or an unknown expert name (from ``make_agent``).
    """
    from battleline.agents.registry import make_agent

    if episodes < 1:
        raise ValueError(f"episodes must be at least 1, got {episodes}")
    base = env.unwrapped
    obs_rows: dict[str, list[np.ndarray]] = {}
    label_sets: list[list[int]] = []
    masks: list[np.ndarray] = []
    returns: list[float] = []
    episode_ids: list[int] = []
    wins = 0
    t0 = time.perf_counter()
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        agent = make_agent(expert, seed=seed + e)
        agent.reset(base.battle, base.learner)
        rewards: list[float] = []
        done, info = False, {}
        while not done:
            battle = base.battle
            mask = env.action_masks()
            if battle.is_over or battle.pending.player != base.learner:
                index = 0  # nothing to decide: index 0 only collects the result (not a decision)
            else:
                choices = (agent.acceptable_actions(battle) if any_order and hasattr(agent, "acceptable_actions")
                           else [agent.act(battle)])
                labels = [base.codec.encode(a, battle, base.learner) for a in choices]
                for index in labels:
                    if not mask[index]:
                        raise DemonstrationError(
                            f"expert '{expert}' chose index {index} ({base.codec.describe(index)}), "
                            f"which the mask does not allow (episode {e}, seed {seed + e})")
                label_sets.append(labels)
                for key, value in obs.items():
                    obs_rows.setdefault(key, []).append(np.asarray(value).copy())
                index = labels[0] if policy is None else int(policy.predict(obs, deterministic=True,
                                                                         action_masks=mask)[0])
                masks.append(mask)
                episode_ids.append(e)
                rewards.append(0.0)
            obs, reward, terminated, truncated, info = env.step(index)
            if rewards:
                rewards[-1] += float(reward)  # the reward of the decision just taken
            done = terminated or truncated
        returns += _returns_to_go(rewards, gamma)
        wins += bool(info.get("is_success"))
    space = env.observation_space  # the wrapped env's: it may add keys (training.pair_observation)
    observations = {k: np.stack(v).astype(space[k].dtype, copy=False) for k, v in obs_rows.items()}
    return Demonstrations(
        observations=observations,
        label_sets=_padded(label_sets),
        masks=np.stack(masks).astype(bool), returns=np.asarray(returns, dtype=np.float32),
        episode=np.asarray(episode_ids, dtype=np.int32), episodes=episodes, wins=wins,
        seconds=time.perf_counter() - t0,
    )


def _batch(policy: Any, demos: Demonstrations, idx: np.ndarray) -> tuple[dict[str, Any], Any, np.ndarray, Any]:
    import torch

    obs = {k: torch.as_tensor(v[idx], device=policy.device) for k, v in demos.observations.items()}
    label_sets = torch.as_tensor(demos.label_sets[idx], device=policy.device)
    returns = torch.as_tensor(demos.returns[idx], device=policy.device)
    return obs, label_sets, demos.masks[idx], returns


def _set_log_prob(log_probs: Any, label_sets: Any) -> Any:
    """log Σ_{a in set} π(a | s) per row: ``log_probs`` float (B, A), ``label_sets`` int64 (B, K) padded with -1."""
    import torch

    picked = log_probs.gather(1, label_sets.clamp(min=0))
    return torch.logsumexp(picked.masked_fill(label_sets < 0, -float("inf")), dim=1)


def _hits(log_probs: Any, label_sets: Any) -> int:
    """Rows whose most likely action (masked argmax) is in the row's label set."""
    return int((log_probs.argmax(dim=1, keepdim=True) == label_sets).any(dim=1).sum())


def masked_accuracy(policy: Any, demos: Demonstrations, batch_size: int = 256) -> float:
    """Share of the decisions whose masked argmax (deterministic policy action) is in the expert's label set."""
    import torch

    hits = 0
    with torch.no_grad():
        for start in range(0, len(demos), batch_size):
            idx = np.arange(start, min(start + batch_size, len(demos)))
            obs, label_sets, masks, _ = _batch(policy, demos, idx)
            dist = policy.get_distribution(obs, action_masks=masks)
            hits += _hits(dist.distribution.logits, label_sets)
    return hits / max(1, len(demos))


def behaviour_clone(
    policy: Any,
    demos: Demonstrations,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    fit_value: bool = True,
    value_coef: float = 0.5,
    max_grad_norm: float = 0.5,
    seed: int = 0,
    on_epoch: Callable[[dict[str, float]], None] | None = None,
) -> list[dict[str, float]]:
    """Fit a ``MaskableActorCriticPolicy`` to the demonstrations by masked cross-entropy.

    Args:
        policy: ``model.policy`` of a MaskablePPO model (trained in place).
        demos: the recorded decisions.
        epochs: passes over the data; batch_size: decisions per minibatch (the last one may be smaller).
        learning_rate: Adam step size of the cloning optimiser.
        fit_value: also fit the value head to ``demos.returns`` (MSE).
        value_coef: weight of the value loss in the summed loss (PPO's ``vf_coef``).
        max_grad_norm: gradient norm clip of each step (PPO's ``max_grad_norm``).
        seed: seeds the minibatch shuffling.
        on_epoch: called with each epoch's statistics.

    Returns:
        One dict per epoch: ``epoch``, ``loss`` (mean masked cross-entropy, nats),
        ``accuracy`` (masked argmax = expert, measured on each minibatch just
        before its step), ``value_loss`` (mean squared error; 0 without ``fit_value``).
    """
    import torch

    policy.set_training_mode(True)
    optimiser = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    history: list[dict[str, float]] = []
    for epoch in range(epochs):
        order = rng.permutation(len(demos))
        totals = {"loss": 0.0, "value_loss": 0.0, "hits": 0.0}
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            obs, label_sets, masks, returns = _batch(policy, demos, idx)
            dist = policy.get_distribution(obs, action_masks=masks)
            loss = -_set_log_prob(dist.distribution.logits, label_sets).mean()
            value_loss = (torch.nn.functional.mse_loss(policy.predict_values(obs).flatten(), returns)
                          if fit_value else torch.zeros(()))
            optimiser.zero_grad()
            (loss + value_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
            optimiser.step()
            totals["hits"] += _hits(dist.distribution.logits.detach(), label_sets)
            totals["loss"] += float(loss.detach()) * len(idx)
            totals["value_loss"] += float(value_loss.detach()) * len(idx)
        row = {"epoch": float(epoch), "loss": totals["loss"] / len(demos),
               "accuracy": totals["hits"] / len(demos), "value_loss": totals["value_loss"] / len(demos)}
        history.append(row)
        if on_epoch is not None:
            on_epoch(row)
    policy.set_training_mode(False)
    return history


def warm_start(
    model: Any, config: TrainingConfig, unit_slots: int, writer: Any = None
) -> dict[str, Any]:
    """Record the expert's demonstrations and clone them into ``model.policy`` (``config.imitation``).

    Opponents are drawn from the run's pool (``self`` entries, which have no
    snapshot yet, are left out; ``random`` when nothing else is left); seeds
    are ``config.seed + 10_000 + e``, apart from the training episodes'. With
    ``dagger_rounds`` > 0, each round then plays ``dagger_episodes`` games with
    the cloned policy (seeds continuing after the previous round's), has the
    expert label the states reached, and clones again on everything gathered.

    Args:
        writer: a TensorBoard ``SummaryWriter``: ``imitation/loss``, ``imitation/accuracy``,
            ``imitation/value_loss`` per epoch (x = epoch, counted over all rounds),
            ``imitation/expert_win_rate`` and, per DAgger round (x = round),
            ``imitation/policy_win_rate`` (the cloned policy's games of that round).

    Returns:
        A JSON-able report: ``expert``, ``any_order`` (label sets used), ``episodes`` (all games recorded, DAgger rounds included),
        ``decisions``, ``expert_wins`` (of the expert's own games), ``accuracy_before``, ``accuracy``
        (masked argmax = expert after the last epoch, on all decisions), ``loss`` (last epoch),
        ``record_seconds``, ``clone_seconds``, ``history``, and ``dagger``: one row per round
        (``round``, ``episodes``, ``policy_wins``, ``decisions``, ``accuracy_on_new`` — the
        policy's agreement with the expert on the round's states before it is cloned again).
    """
    from battleline.training.train import battle_env, env_kwargs

    imitation: ImitationConfig | None = config.imitation
    if imitation is None:
        raise ValueError("the config has no imitation section")
    pool = build_pool(config, []) or [PoolEntry("random", "random", "agent", "random", 1.0)]
    env = TrainingEnv(battle_env(env_kwargs(config, unit_slots), config.pairs), pool, seed=config.seed + 10_000)
    seed = config.seed + 10_000
    demos = record_demonstrations(env, imitation.expert, imitation.episodes, seed=seed, gamma=config.ppo.gamma,
                                  any_order=imitation.any_order)
    expert_wins, expert_games, first_seconds = demos.wins, demos.episodes, demos.seconds
    seed += imitation.episodes
    before = masked_accuracy(model.policy, demos)
    history: list[dict[str, float]] = []

    def log(row: dict[str, float]) -> None:
        row["epoch"] = float(len(history))
        history.append(row)
        if writer is not None:
            for key in ("loss", "accuracy", "value_loss"):
                writer.add_scalar(f"imitation/{key}", row[key], int(row["epoch"]))

    def clone() -> None:
        behaviour_clone(model.policy, demos, imitation.epochs, imitation.batch_size, imitation.learning_rate,
                        fit_value=imitation.value, value_coef=config.ppo.vf_coef,
                        max_grad_norm=config.ppo.max_grad_norm, seed=config.seed + len(history), on_epoch=log)

    t0 = time.perf_counter()
    clone()
    dagger: list[dict[str, Any]] = []
    for r in range(1, imitation.dagger_rounds + 1):
        new = record_demonstrations(env, imitation.expert, imitation.dagger_episodes, seed=seed,
                                    gamma=config.ppo.gamma, policy=model.policy, any_order=imitation.any_order)
        seed += imitation.dagger_episodes
        dagger.append({"round": r, "episodes": new.episodes, "policy_wins": new.wins, "decisions": len(new),
                       "accuracy_on_new": round(masked_accuracy(model.policy, new), 4)})
        if writer is not None:
            writer.add_scalar("imitation/policy_win_rate", new.wins / new.episodes, r)
        demos = demos + new
        clone()
    env.close()
    after = masked_accuracy(model.policy, demos)
    if writer is not None:
        writer.add_scalar("imitation/expert_win_rate", expert_wins / expert_games, 0)
        writer.add_scalar("imitation/final_accuracy", after, 0)
        writer.flush()
    return {
        "expert": imitation.expert, "any_order": imitation.any_order, "episodes": demos.episodes, "decisions": len(demos),
        "expert_wins": expert_wins,
        "accuracy_before": round(before, 4), "accuracy": round(after, 4),
        "loss": round(history[-1]["loss"], 4) if history else None,
        "record_seconds": round(demos.seconds, 2),
        "clone_seconds": round(time.perf_counter() - t0 - (demos.seconds - first_seconds), 2),
        "history": [{k: round(v, 4) for k, v in row.items()} for row in history],
        "dagger": dagger,
    }


__all__ = ["DemonstrationError", "Demonstrations", "behaviour_clone", "masked_accuracy", "record_demonstrations",
           "warm_start"]
