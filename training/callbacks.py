"""Stable-Baselines3 callbacks of a training run: TensorBoard statistics, evaluations, checkpoints, progress.

TensorBoard tags (the x axis is the learner's step count; see README "Training"):

==================================== =======================================================
tag                                  meaning
==================================== =======================================================
``games/win_rate/<opponent>``        wins / episodes over the last ``window`` training
                                     episodes against that opponent (``self`` = frozen selves)
``games/win_rate``                   the same over all opponents
``games/vp_diff``                    mean final VP (own − enemy) of those episodes
``games/episode_length``             mean learner steps per episode
``checks/illegal_actions``           illegal indices the learner chose, total (must stay 0)
``checks/outcome_rewards_per_episode`` win/draw/loss rewards per finished episode (must be 1)
``checks/return_mismatches``         episodes whose return differs from the outcome, total
                                     (only checked without reward shaping; must stay 0)
``orders/<phase>``                   histogram of the order kinds given in that phase during
                                     the last rollout (bucket = codec block index, see
                                     :data:`ORDER_BUCKETS`)
``orders/share/<kind>``              share of the rollout's orders of that kind
``eval/win_rate/<opponent>``         periodic evaluation (both seats): wins / games;
                                     also ``eval/draw_rate/…``, ``eval/loss_rate/…``,
                                     ``eval/vp_diff/…`` and ``eval/win_rate`` over all
``eval/rating_mu``, ``eval/rating_ordinal`` openskill (PlackettLuce) rating of the learner
                                     over all evaluation games so far (ordinal = mu − 3σ)
``checks/eval_illegal_actions``      illegal indices in evaluation games, total (must be 0)
``tactics/<tactic id>``              share of the evaluation battles in which the learner
                                     used that tactic (when ``tactics.fingerprint`` exists)
``battle/deployment``, ``battle/final`` images of one evaluation battle (RGB, ``render_battle``)
``battle/key_events``                text: that battle's key events
==================================== =======================================================
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Image

from battleline.env.encoding import BLOCKS
from battleline.env.rules.state import PHASES
from battleline.env.siege_encoding import SIEGE_BLOCK

ORDER_BUCKETS: tuple[str, ...] = (*BLOCKS, SIEGE_BLOCK)
"""The ``orders/<phase>`` histogram buckets: bucket k = the k-th block of the action codec
(:data:`env.encoding.BLOCKS`, then the siege codec's block); an unknown kind goes to −1."""

NOT_STDOUT = ("stdout", "log", "json", "csv")
"""Logger outputs that images, texts and histograms skip (TensorBoard only)."""


def _fingerprint_fn() -> Callable[[list[Any], list[int]], dict[str, float]] | None:
    """``tactics.fingerprint.fingerprint`` when that module exists, else None."""
    try:
        from battleline.tactics.fingerprint import fingerprint
    except Exception:  # noqa: BLE001 - optional module, absent or broken: no fingerprint
        return None
    return fingerprint


class EpisodeStatsCallback(BaseCallback):
    """Statistics of the training episodes, from the infos of :class:`training.pool.TrainingEnv`.

    Args:
        window: episodes per opponent (and overall) in the rolling means.

    Attributes (totals over the run, kept in checkpoints):
        illegal_total, episodes, terminated, outcome_rewards, return_mismatches.
    """

    def __init__(self, window: int = 100, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.window = window
        self.by_group: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=window))
        self.recent: deque[tuple[float, float, float]] = deque(maxlen=window)  # (won, vp diff, length)
        self.outcome_window: deque[int] = deque(maxlen=window)
        self.orders: dict[str, Counter[str]] = defaultdict(Counter)
        self.illegal_total = 0
        self.episodes = 0
        self.terminated = 0
        self.outcome_rewards = 0
        self.return_mismatches = 0

    def _on_step(self) -> bool:
        infos: Sequence[dict[str, Any]] = self.locals.get("infos", ())
        dones = self.locals.get("dones", np.zeros(len(infos), dtype=bool))
        for info, done in zip(infos, dones):
            if info.get("illegal"):
                self.illegal_total += 1
            order = info.get("order")
            if order is not None:
                self.orders[order[0]][order[1]] += 1
            if done:
                self._episode_end(info)
        return True

    def _episode_end(self, info: dict[str, Any]) -> None:
        self.episodes += 1
        length = float((info.get("episode") or {}).get("l", 0))
        if "winner" in info:  # the game ended (not truncated)
            self.terminated += 1
            won = 1.0 if info.get("is_success") else 0.0
            self.by_group[str(info.get("opponent_group", info.get("opponent", "?")))].append(won)
            self.recent.append((won, float(info.get("margin", 0.0)), length))
            n = int(info.get("outcome_rewards", 1))
            self.outcome_rewards += n
            self.outcome_window.append(n)
            if info.get("return_matches_outcome") is False:
                self.return_mismatches += 1
        else:
            self.outcome_rewards += int(info.get("outcome_rewards", 0))

    def _on_rollout_end(self) -> None:
        rec = self.logger.record
        for group, wins in sorted(self.by_group.items()):
            if wins:
                rec(f"games/win_rate/{group}", float(np.mean(wins)))
        if self.recent:
            arr = np.array(self.recent, dtype=np.float64)
            rec("games/win_rate", float(arr[:, 0].mean()))
            rec("games/vp_diff", float(arr[:, 1].mean()))
            rec("games/episode_length", float(arr[:, 2].mean()))
        if self.outcome_window:
            rec("checks/outcome_rewards_per_episode", float(np.mean(self.outcome_window)))
        rec("checks/illegal_actions", self.illegal_total)
        rec("checks/return_mismatches", self.return_mismatches)
        total = sum(sum(c.values()) for c in self.orders.values())
        if total:
            kinds: Counter[str] = Counter()
            for phase in PHASES:
                counts = self.orders.get(phase)
                if not counts:
                    continue
                kinds.update(counts)
                values = np.concatenate([np.full(n, ORDER_BUCKETS.index(k) if k in ORDER_BUCKETS else -1, dtype=np.float32)
                                         for k, n in counts.items()])
                rec(f"orders/{phase}", values, exclude=NOT_STDOUT)
            for kind, n in kinds.items():
                rec(f"orders/share/{kind}", n / total)
        self.orders.clear()

    def win_rate(self) -> float | None:
        """The rolling win rate over all opponents (None before the first finished episode)."""
        return float(np.mean([r[0] for r in self.recent])) if self.recent else None

    def state_dict(self) -> dict[str, Any]:
        """Totals and rolling windows (JSON-able) for checkpoints."""
        return {
            "illegal_total": self.illegal_total, "episodes": self.episodes, "terminated": self.terminated,
            "outcome_rewards": self.outcome_rewards, "return_mismatches": self.return_mismatches,
            "by_group": {k: list(v) for k, v in self.by_group.items()}, "recent": [list(r) for r in self.recent],
            "outcome_window": list(self.outcome_window),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output."""
        for key in ("illegal_total", "episodes", "terminated", "outcome_rewards", "return_mismatches"):
            setattr(self, key, int(state.get(key, 0)))
        for k, v in (state.get("by_group") or {}).items():
            self.by_group[k].extend(v)
        self.recent.extend(tuple(r) for r in state.get("recent", ()))
        self.outcome_window.extend(state.get("outcome_window", ()))


class EvaluationCallback(BaseCallback):
    """Periodic evaluations of the live policy against fixed opponents, ratings, images and texts.

    Args:
        opponents: agent names to evaluate against (both seats).
        scenario: scenario name or path.
        eval_every: learner steps between evaluations.
        eval_games: games per opponent per evaluation.
        images_every: PPO updates (rollouts) between battle images and key events.
        rollout_steps: steps per update (``n_steps * n_envs``).
        seed: base seed of the evaluation games (the same games every evaluation).
        blue_armies, red_armies: army lists drawn per game for each seat (None: the scenario's).
        log_path: append one JSON line per evaluation here (step, per-opponent results, rating).
        image_dpi: resolution of the battle images (600 × 430 pixels at 50 dpi).
    """

    def __init__(self, opponents: Sequence[str], scenario: str, eval_every: int, eval_games: int,
                 images_every: int, rollout_steps: int, seed: int = 0, blue_armies: Sequence[str] | None = None,
                 red_armies: Sequence[str] | None = None, log_path: Path | None = None, image_dpi: int = 50,
                 verbose: int = 0) -> None:
        super().__init__(verbose)
        from openskill.models import PlackettLuce

        self.opponents = list(opponents)
        self.scenario = scenario
        self.eval_every = eval_every
        self.eval_games = eval_games
        self.images_every = images_every
        self.rollout_steps = rollout_steps
        self.seed = seed
        self.blue_armies = list(blue_armies) if blue_armies else None
        self.red_armies = list(red_armies) if red_armies else None
        self.log_path = log_path
        self.image_dpi = image_dpi
        self.next_eval = eval_every
        self.last_image_update = 0
        self.images_done = 0
        self.illegal_total = 0
        self.evaluations = 0
        self.last: dict[str, Any] | None = None
        self.rating_model = PlackettLuce()
        self.ratings: dict[str, Any] = {}
        self._fingerprint = _fingerprint_fn()

    # ------------------------------------------------------------------ helpers
    def _agent(self) -> Any:
        from battleline.agents.learned import PolicyAgent

        return PolicyAgent(self.model, deterministic=True, seed=self.seed, name="learner")

    def _rating(self, name: str) -> Any:
        if name not in self.ratings:
            self.ratings[name] = self.rating_model.rating(name=name)
        return self.ratings[name]

    def _rate(self, opponent: str, outcome: str) -> None:
        me, them = self._rating("learner"), self._rating(opponent)
        ranks = {"win": [0, 1], "loss": [1, 0], "draw": [0, 0]}[outcome]
        [[me], [them]] = self.rating_model.rate([[me], [them]], ranks=ranks)
        self.ratings["learner"], self.ratings[opponent] = me, them

    # ------------------------------------------------------------------ SB3 hooks
    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        n = self.num_timesteps
        if self.opponents and self.eval_games > 0 and n >= self.next_eval:
            while self.next_eval <= n:
                self.next_eval += self.eval_every
            self.evaluate()
        update = n // max(1, self.rollout_steps)
        if self.opponents and update - self.last_image_update >= self.images_every:
            self.last_image_update = update
            self.battle_pictures()

    def evaluate(self) -> dict[str, Any]:
        """Play the evaluation games now and record their statistics; returns the per-opponent summary."""
        from battleline.training.evaluate import play_evaluation, summarise

        agent = self._agent()
        t0 = time.perf_counter()
        records = play_evaluation(agent, self.opponents, self.eval_games, self.scenario, self.seed,
                                  self.blue_armies, self.red_armies, keep_battles=self._fingerprint is not None)
        summary = summarise(records)
        for r in records:
            self._rate(r.opponent, r.outcome)
        self.illegal_total += agent.illegal
        self.evaluations += 1
        rec = self.logger.record
        for opp, d in summary.items():
            for what in ("win_rate", "draw_rate", "loss_rate", "vp_diff"):
                rec(f"eval/{what}/{opp}", float(d[what]))
        rec("eval/win_rate", float(np.mean([r.outcome == "win" for r in records])))
        me = self.ratings["learner"]
        rec("eval/rating_mu", float(me.mu))
        rec("eval/rating_ordinal", float(me.ordinal()))
        for opp in self.opponents:
            rec(f"eval/rating_ordinal/{opp}", float(self.ratings[opp].ordinal()))
        rec("checks/eval_illegal_actions", self.illegal_total)
        seconds = time.perf_counter() - t0
        rec("eval/seconds", seconds)
        if self._fingerprint is not None:
            try:
                fp = self._fingerprint([r.battle for r in records], [0 if r.side == "blue" else 1 for r in records])
            except Exception as exc:  # noqa: BLE001 - a detector bug must not stop training
                print(f"warning: tactic fingerprint disabled ({type(exc).__name__}: {exc})", file=sys.stderr)
                self._fingerprint = None
            else:
                for tid, rate in fp.items():
                    rec(f"tactics/{tid}", float(rate))
        self.last = {"step": self.num_timesteps, "opponents": summary, "rating_mu": float(me.mu),
                     "rating_ordinal": float(me.ordinal()), "illegal_actions": agent.illegal,
                     "decisions": agent.decisions, "games": len(records), "seconds": round(seconds, 3)}
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(self.last) + "\n")
        return summary

    def battle_pictures(self) -> None:
        """Play one evaluation battle and log its deployment and final table (images) and key events (text)."""
        from battleline.env.render import render_battle
        from battleline.training.evaluate import deployment_battle, key_events, play_evaluation

        opp = self.opponents[self.images_done % len(self.opponents)]
        agent = self._agent()
        seed = self.seed + 1_000_003 * (self.images_done + 1)
        rec = play_evaluation(agent, [opp], 1 + self.images_done % 2, self.scenario, seed, self.blue_armies,
                              self.red_armies, keep_battles=True)[-1]
        self.images_done += 1
        self.illegal_total += agent.illegal
        assert rec.battle is not None
        title = f"learner ({rec.side}) vs {opp}, step {self.num_timesteps}"
        first = render_battle(deployment_battle(rec.battle), title=title + ": deployment", dpi=self.image_dpi)
        final = render_battle(rec.battle, title=title, dpi=self.image_dpi)
        self.logger.record("battle/deployment", Image(first, "HWC"), exclude=NOT_STDOUT)
        self.logger.record("battle/final", Image(final, "HWC"), exclude=NOT_STDOUT)
        text = f"**learner ({rec.side}) vs {opp}**, seed {rec.seed}: {rec.outcome}\n\n{key_events(rec.battle)}"
        self.logger.record("battle/key_events", text, exclude=NOT_STDOUT)

    # ------------------------------------------------------------------ checkpoints
    def state_dict(self) -> dict[str, Any]:
        """Schedule, counters and ratings (JSON-able) for checkpoints."""
        return {
            "next_eval": self.next_eval, "last_image_update": self.last_image_update,
            "images_done": self.images_done, "illegal_total": self.illegal_total, "evaluations": self.evaluations,
            "ratings": {k: [float(r.mu), float(r.sigma)] for k, r in self.ratings.items()}, "last": self.last,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s output."""
        for key in ("next_eval", "last_image_update", "images_done", "illegal_total", "evaluations"):
            if key in state:
                setattr(self, key, int(state[key]))
        self.last = state.get("last")
        self.ratings = {k: self.rating_model.rating(mu=mu, sigma=sigma, name=k)
                        for k, (mu, sigma) in (state.get("ratings") or {}).items()}


class PeriodicCallback(BaseCallback):
    """Calls ``action(num_timesteps)`` at the start of a rollout (after the previous update) every ``every``
    steps, and ``final(num_timesteps)`` when training ends.

    Used for checkpoints and self-play snapshots: at a rollout start the model
    has trained on every step counted, so a checkpoint there resumes exactly.

    Args:
        every: steps between calls (the first at ``start + every``).
        action: called with the step count.
        final: called once at the end of training (None: nothing).
        start: the step count the schedule starts from (a resumed run's).
    """

    def __init__(self, every: int, action: Callable[[int], None], final: Callable[[int], None] | None = None,
                 start: int = 0, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.every = every
        self.action = action
        self.final = final
        self.next_at = start + every

    def _on_step(self) -> bool:
        return True

    def _on_rollout_start(self) -> None:
        n = self.num_timesteps
        if n >= self.next_at:
            while self.next_at <= n:
                self.next_at += self.every
            self.action(n)

    def _on_training_end(self) -> None:
        if self.final is not None:
            self.final(self.num_timesteps)


class InterruptCallback(BaseCallback):
    """Ctrl-C (SIGINT) during learning, turned into ``KeyboardInterrupt`` at the next environment step.

    While :meth:`installed` is active (main thread only), SIGINT only raises a
    flag; the next ``_on_step`` raises ``KeyboardInterrupt`` from ordinary code,
    so the interrupt is never lost in a finaliser or a C callback, and training
    stops between two steps (the run resumes from its last checkpoint). A
    second Ctrl-C before that step raises at once.
    """

    def __init__(self, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.requested = False

    def _on_step(self) -> bool:
        if self.requested:
            raise KeyboardInterrupt
        return True

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    @contextmanager
    def installed(self) -> Iterator[None]:
        """Install the SIGINT handler for the duration of the block (a no-op outside the main thread)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.signal(signal.SIGINT, self._handle)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


class RichProgressCallback(BaseCallback):
    """A rich progress bar: steps done of the run's total, steps per second, time left, and the
    rolling win rate and illegal-action count of :class:`EpisodeStatsCallback`.

    Args:
        total: the step count the run ends at.
        stats: the run's episode statistics (for the status text).
        console: a ``rich.console.Console`` (default: stdout).
    """

    def __init__(self, total: int, stats: EpisodeStatsCallback, console: Any = None, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.total = total
        self.stats = stats
        self.console = console
        self.progress: Any = None
        self.task: Any = None
        self._last = 0

    def _on_training_start(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        from battleline.training.console import LoggedProgress

        self.progress = LoggedProgress(TextColumn("[bold]training"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[rate]}"),
                                 TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[status]}"),
                                 console=self.console, transient=False, unit="steps")
        self.progress.start()
        self._last = self.num_timesteps
        self._t0, self._n0 = time.perf_counter(), self.num_timesteps
        self.task = self.progress.add_task("train", total=self.total, completed=self.num_timesteps, rate="",
                                           status="")

    def _on_step(self) -> bool:
        n = self.num_timesteps
        if n - self._last >= 64 or n >= self.total:
            self._update()
        return True

    def _update(self) -> None:
        n = self.num_timesteps
        dt = max(1e-9, time.perf_counter() - self._t0)
        wr = self.stats.win_rate()
        status = f"win {wr:.0%}" if wr is not None else "win –"
        status += f", illegal {self.stats.illegal_total}"
        self.progress.update(self.task, completed=n, rate=f"{(n - self._n0) / dt:6.0f} steps/s", status=status)
        self._last = n

    def _on_training_end(self) -> None:
        if self.progress is not None:
            self._update()
            self.progress.stop()


__all__ = ["EpisodeStatsCallback", "EvaluationCallback", "InterruptCallback", "NOT_STDOUT", "PeriodicCallback", "RichProgressCallback"]
