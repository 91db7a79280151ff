"""Learning curve: ``python -m benchmarks.learning [--minutes 60] [--n-envs N] [--out benchmarks/results]``.

Trains MaskablePPO (the ``ppo_vs_scripted`` hyper-parameters) on
``pitched_battle`` against ``random`` and ``line_advance`` for a wall-clock
budget (default one hour) or a step budget, whichever ends first, and records:

* the training curve: after every PPO update, the step count, the elapsed
  seconds and the win rate over the last 100 finished training episodes against
  each opponent (and overall);
* the evaluation curve: every ``--eval-every`` steps, ``--eval-games`` games
  against each opponent (both seats, deterministic policy), win/draw/loss rates
  with Wilson 95% intervals;
* training throughput: learner steps per wall-clock second, evaluations
  included and excluded.
* with ``--imitation-episodes N`` (and ``--expert``, ``--imitation-epochs``), a
  behaviour-cloning warm start first (:mod:`training.imitation`): N games of
  the expert recorded, the policy cloned on them, then PPO; the recording and
  cloning time counts in the wall-clock budget, and their report (decisions,
  masked accuracy before and after, seconds) goes to ``learning.json``;
* the final evaluation of the trained model (``--final-eval OPPONENT=GAMES``,
  default 100 games against ``random`` and 40 against ``line_advance``), after
  the time budget, with Wilson 95% intervals.

The PPO settings default to a short budget on few cores (``--n-steps 256
--batch-size 128 --n-epochs 8 --gamma 0.99``: an update every 512 steps with
two environments) and VP-difference shaping of weight 1 (``--reward-shaping``),
the other hyper-parameters being ``configs/training/ppo_vs_scripted.yaml``'s.

Writes ``<out>/learning.json`` and ``<out>/learning.png`` (win rate vs steps);
the run itself (checkpoints, TensorBoard) goes to ``runs/benchmark_learning``
(``--run-dir``), so ``--resume`` continues a benchmark that was stopped.
"""

from __future__ import annotations

import json
import math
import os
import platform
import shlex
import sys
import time
from collections import defaultdict, deque
from pathlib import Path
from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

from benchmarks import flag_errors

OPPONENTS = ("random", "line_advance")
WINDOW = 100


class CurveCallback(BaseCallback):
    """Records the training win rates after every update and stops training when the time budget is spent.

    Args:
        seconds: wall-clock budget in seconds.
        started: ``time.perf_counter()`` the budget counts from (default: the first PPO step);
            the benchmark passes the time before the imitation warm start, so that it counts.
    """

    def __init__(self, seconds: float, started: float | None = None) -> None:
        super().__init__()
        self.seconds = seconds
        self.started = started
        self.t0 = 0.0
        self.eval_seconds = 0.0
        self.wins: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=WINDOW))
        self.all: deque[float] = deque(maxlen=WINDOW)
        self.points: list[dict[str, Any]] = []
        self.stopped_by_time = False

    def _on_training_start(self) -> None:
        self.t0 = time.perf_counter() if self.started is None else self.started

    def _on_step(self) -> bool:
        for info, done in zip(self.locals["infos"], self.locals["dones"]):
            if done and "winner" in info:
                won = float(bool(info.get("is_success")))
                self.wins[str(info.get("opponent_group"))].append(won)
                self.all.append(won)
        if time.perf_counter() - self.t0 >= self.seconds:
            self.stopped_by_time = True
            return False
        return True

    def _on_rollout_end(self) -> None:
        point: dict[str, Any] = {"step": int(self.num_timesteps), "seconds": round(time.perf_counter() - self.t0, 2)}
        point["win_rate"] = {k: round(sum(v) / len(v), 4) for k, v in sorted(self.wins.items()) if v}
        point["win_rate_all"] = round(sum(self.all) / len(self.all), 4) if self.all else None
        point["episodes"] = {k: len(v) for k, v in sorted(self.wins.items())}
        self.points.append(point)


def plot(result: dict[str, Any], path: Path) -> None:
    """Win rate vs steps: training (rolling) as lines, evaluations as markers with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    colours = {"random": "#1f77b4", "line_advance": "#d62728"}
    for opp in OPPONENTS:
        pts = [(p["step"], p["win_rate"][opp]) for p in result["train_curve"] if opp in p["win_rate"]]
        if pts:
            ax.plot(*zip(*pts), color=colours[opp], lw=1.2, label=f"training vs {opp} (last {WINDOW} games)")
        ev = [(e["step"], e["opponents"][opp]) for e in result["eval_curve"] if opp in e["opponents"]]
        if ev:
            xs = [s for s, _ in ev]
            ys = [d["win_rate"] for _, d in ev]
            lo = [max(0.0, d["win_rate"] - d["win_ci95"][0]) for _, d in ev]  # the Wilson bound can be 1e-17 off
            hi = [max(0.0, d["win_ci95"][1] - d["win_rate"]) for _, d in ev]
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", color=colours[opp], capsize=3, ms=5,
                        label=f"evaluation vs {opp} (95% CI)")
        fin = (result.get("final_evaluation") or {}).get("opponents", {}).get(opp)
        if fin:
            ax.errorbar([result["num_timesteps"]], [fin["win_rate"]],
                        yerr=[[max(0.0, fin["win_rate"] - fin["win_ci95"][0])],
                              [max(0.0, fin["win_ci95"][1] - fin["win_rate"])]],
                        fmt="s", color=colours[opp], capsize=4, ms=7,
                        label=f"final evaluation vs {opp}, {fin['games']} games (95% CI)")
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(True, alpha=0.3)
    ax.set_title(f"MaskablePPO on pitched_battle — {result['num_timesteps']} steps in "
                 f"{result['seconds'] / 60:.1f} min ({result['steps_per_second']:.1f} steps/s)", fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def _final_eval_spec(items: list[str]) -> dict[str, int]:
    """Parse ``OPPONENT=GAMES`` items into ``{opponent: games}``.

    Raises:
        training.cli.UserError: an item is malformed or names an unknown agent (one line naming it).
    """
    from battleline.training.cli_common import UserError

    out: dict[str, int] = {}
    for item in items:
        name, _, games = item.partition("=")
        if not name or not games.isdigit() or int(games) < 1:
            raise UserError(f"--final-eval: '{item}' is not OPPONENT=GAMES with GAMES >= 1")
        out[name] = int(games)
    from battleline.agents.registry import UnknownAgentError, make_agent

    for name in out:  # now, not after the training
        try:
            make_agent(name)
        except UnknownAgentError as exc:
            raise UserError(f"--final-eval: {exc}") from None
    return out


def _weight_spec(items: list[str]) -> dict[str, float]:
    """Parse ``OPPONENT=WEIGHT`` items into the training pool's weights, every one of :data:`OPPONENTS`
    defaulting to 1.

    Raises:
        training.cli.UserError: an item is malformed, its weight is not a number above 0, or it names an
            agent outside :data:`OPPONENTS` (one line naming it).
    """
    from battleline.training.cli_common import UserError

    out = dict.fromkeys(OPPONENTS, 1.0)
    for item in items:
        name, _, value = item.partition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = float("nan")
        if name not in OPPONENTS or not (weight > 0 and math.isfinite(weight)):
            raise UserError(f"--opponent-weight: '{item}' is not OPPONENT=WEIGHT with OPPONENT one of "
                            f"{', '.join(OPPONENTS)} and WEIGHT a number above 0")
        out[name] = weight
    return out


def final_evaluation(model: Path, games: dict[str, int], scenario: str, seed: int) -> dict[str, Any]:
    """Evaluate the final model (deterministic, both seats alternating) against each opponent.

    Returns ``{"seconds", "seed", "decisions", "illegal_actions", "opponents": {name: summary}}``
    with the per-opponent summaries of :func:`training.evaluate.summarise` (Wilson 95% intervals).
    The evaluation seeds (:func:`training.evaluate.eval_seed`) differ from the training episodes'.
    """
    from battleline.training.evaluate import evaluate_model

    t0 = time.perf_counter()
    out: dict[str, Any] = {"seed": seed, "opponents": {}, "decisions": 0, "illegal_actions": 0}
    for opp, n in games.items():
        res = evaluate_model(model, [opp], n, scenario=scenario, seed=seed)
        out["opponents"][opp] = res["opponents"][opp]
        out["decisions"] += int(res.get("decisions", 0))
        out["illegal_actions"] += int(res.get("illegal_actions", 0))
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


FLAGS = {
    "total_timesteps": "--steps", "n_envs": "--n-envs", "eval_every": "--eval-every", "eval_games": "--eval-games",
    "seed": "--seed", "run_dir": "--run-dir", "reward_shaping": "--reward-shaping", "checkpoint_every": "--eval-every",
    "ppo.n_steps": "--n-steps", "ppo.batch_size": "--batch-size", "ppo.n_epochs": "--n-epochs", "ppo.gamma": "--gamma",
    "ppo.learning_rate": "--learning-rate", "ppo.ent_coef": "--ent-coef", "ppo.policy": "--policy",
    "ppo.embed_dim": "--embed-dim", "imitation.expert": "--expert", "imitation.episodes": "--imitation-episodes",
    "imitation.epochs": "--imitation-epochs", "imitation.batch_size": "--imitation-batch-size",
    "imitation.learning_rate": "--imitation-lr", "imitation.dagger_rounds": "--dagger-rounds",
    "imitation.dagger_episodes": "--dagger-episodes", "pairs": "--pairs",
}
"""Training-config field → the flag of this benchmark that sets it (errors name the flag)."""


def _config(data: dict[str, Any]) -> Any:
    """The run's :class:`training.config.TrainingConfig`; a bad value raises ConfigError naming its flag."""
    from battleline.training.config import load_training_config

    return load_training_config(data, flags=FLAGS)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Command line (see the module docstring): train, evaluate, write ``learning.json`` and ``learning.png``.

    Args:
        argv: the arguments after the program name; None reads ``sys.argv``.

    Returns:
        The result written to ``<out>/learning.json``.

    Raises:
        SystemExit: exit code 2 for bad arguments, a config value out of range
            (the message names the flag; a bad ``--final-eval`` item too) or a run
            that cannot start or resume.
        TrainingInterrupted: training was interrupted (Ctrl-C); the message
            names the checkpoint to resume from.
    """
    from battleline.training.cli_common import OneLineArgumentParser

    parser = OneLineArgumentParser(prog="python -m benchmarks.learning", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60.0, help="wall-clock budget (default 60)")
    parser.add_argument("--steps", type=int, default=10_000_000, help="step budget (default 10,000,000)")
    parser.add_argument("--n-envs", type=int, default=min(8, os.cpu_count() or 1), help="parallel environments")
    parser.add_argument("--eval-every", type=int, default=16_384, help="steps between evaluations")
    parser.add_argument("--eval-games", type=int, default=10, help="games per opponent per evaluation")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run-dir", type=Path, default=Path("runs/benchmark_learning"))
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"))
    parser.add_argument("--resume", action="store_true", help="continue the run in --run-dir")
    parser.add_argument("--n-steps", type=int, default=256, help="PPO steps per env per rollout (default 256)")
    parser.add_argument("--batch-size", type=int, default=128, help="PPO minibatch (default 128)")
    parser.add_argument("--n-epochs", type=int, default=8, help="PPO epochs per rollout (default 8)")
    parser.add_argument("--gamma", type=float, default=0.99, help="discount (default 0.99)")
    parser.add_argument("--learning-rate", type=float, default=None,
                        help="PPO Adam step size (default: ppo_vs_scripted's, 3e-4)")
    parser.add_argument("--ent-coef", type=float, default=None, help="PPO entropy bonus (default: ppo_vs_scripted's)")
    parser.add_argument("--reward-shaping", type=float, default=1.0, help="VP-difference shaping weight (default 1)")
    parser.add_argument("--final-eval", action="append", metavar="OPPONENT=GAMES",
                        help="games of the final evaluation per opponent (default random=100, line_advance=40)")
    parser.add_argument("--opponent-weight", action="append", metavar="OPPONENT=WEIGHT",
                        help="relative chance of drawing random or line_advance for a training game (default 1 each)")
    parser.add_argument("--imitation-episodes", type=int, default=0,
                        help="behaviour-cloning warm start: expert games to record first (default 0: none)")
    parser.add_argument("--expert", default="line_advance", help="the agent cloned (default line_advance)")
    parser.add_argument("--imitation-epochs", type=int, default=10, help="cloning epochs (default 10)")
    parser.add_argument("--imitation-batch-size", type=int, default=64, help="cloning minibatch (default 64)")
    parser.add_argument("--imitation-lr", type=float, default=1e-3, help="cloning Adam step size (default 1e-3)")
    parser.add_argument("--dagger-rounds", type=int, default=0,
                        help="DAgger rounds after the cloning (the policy plays, the expert labels; default 0)")
    parser.add_argument("--dagger-episodes", type=int, default=10, help="games per DAgger round (default 10)")
    parser.add_argument("--single-label", action="store_true",
                        help="clone only the expert's first choice, not every order it would give in any unit order")
    parser.add_argument("--policy", choices=("mlp", "unit_pairs", "factored"), default=None,
                        help="policy network (default: ppo_vs_scripted's)")
    parser.add_argument("--embed-dim", type=int, default=None, help="unit_pairs / factored embedding width (default 64)")
    parser.add_argument("--pairs", action="store_true",
                        help="observe the unit-pair features (agents.pair_features: charge reach, arcs, expected combat)")
    parser.add_argument("--note", default="", help="free text stored in learning.json (e.g. machine load)")
    args = parser.parse_args(argv)
    from battleline.training.cli_common import EXIT_USER_ERROR, UserError, print_error

    with flag_errors():
        if not args.minutes > 0:  # a budget of 0 or less would stop the run at once, and report nothing
            raise UserError(f"--minutes must be above 0, got {args.minutes:g}")
        final_eval = _final_eval_spec(args.final_eval or ["random=100", "line_advance=40"])
        weights = _weight_spec(args.opponent_weight or [])

    from battleline.training.config import load_training_config
    from battleline.training.train import TrainingError, TrainingInterrupted, train

    base = load_training_config("ppo_vs_scripted").model_dump(mode="json")
    ppo = dict(base["ppo"], n_steps=args.n_steps, batch_size=min(args.batch_size, args.n_steps * args.n_envs),
               n_epochs=args.n_epochs, gamma=args.gamma,
               **{k: v for k, v in (("learning_rate", args.learning_rate), ("ent_coef", args.ent_coef),
                                              ("policy", args.policy), ("embed_dim", args.embed_dim))
                  if v is not None})
    with flag_errors():  # a flag out of range: one line naming the flag, exit code 2 (as argparse)
        config = _config({
            **base, "id": "benchmark_learning", "opponents": [{"agent": o, "weight": weights[o]} for o in OPPONENTS],
            "total_timesteps": args.steps, "n_envs": args.n_envs, "ppo": ppo, "eval_every": args.eval_every,
            "eval_games": args.eval_games, "checkpoint_every": max(args.eval_every, args.n_steps * args.n_envs),
            "reward_shaping": args.reward_shaping, "seed": args.seed, "run_dir": str(args.run_dir),
            "pairs": args.pairs,
            "imitation": ({"expert": args.expert, "episodes": args.imitation_episodes, "epochs": args.imitation_epochs,
                           "batch_size": args.imitation_batch_size, "learning_rate": args.imitation_lr,
                           "dagger_rounds": args.dagger_rounds, "dagger_episodes": args.dagger_episodes,
                           "any_order": not args.single_label}
                          if args.imitation_episodes > 0 else None),
        })
    load_start = os.getloadavg()
    curve = CurveCallback(args.minutes * 60.0, started=time.perf_counter())
    try:
        summary = train(config, resume=args.resume, extra_callbacks=[curve], progress=False)
    except TrainingError as exc:  # a run that cannot start or resume (e.g. a changed flag on --resume): one line
        if isinstance(exc, TrainingInterrupted):
            raise
        print_error(str(exc))
        raise SystemExit(EXIT_USER_ERROR) from None
    load_end = os.getloadavg()
    final = final_evaluation(Path(summary["model"]), final_eval, config.scenario, seed=args.seed + 1000)
    evals_path = config.run_path() / "evaluations.jsonl"
    evals = [json.loads(ln) for ln in evals_path.read_text().splitlines() if ln.strip()] if evals_path.is_file() else []
    eval_seconds = sum(float(e.get("seconds", 0.0)) for e in evals)
    result = {
        "command": "python -m benchmarks.learning " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "cpus": os.cpu_count(), "load_average_1_5_15_at_start": [round(v, 2) for v in load_start],
                    "load_average_1_5_15_at_end": [round(v, 2) for v in load_end]},
        "note": args.note,
        "scenario": config.scenario, "opponents": list(OPPONENTS), "opponent_weights": weights, "n_envs": config.n_envs,
        "ppo": config.ppo.model_dump(), "reward_shaping": config.reward_shaping,
        "budget": {"minutes": args.minutes, "steps": args.steps},
        "stopped_by": "time" if curve.stopped_by_time else "steps",
        "num_timesteps": summary["num_timesteps"], "session_steps": summary["session_steps"],
        "seconds": summary["seconds"], "steps_per_second": summary["steps_per_second"],
        "steps_per_second_without_evaluations": round(
            summary["session_steps"] / max(1e-9, summary["seconds"] - eval_seconds), 2),
        "episodes": summary["episodes"], "illegal_actions": summary["illegal_actions"],
        "imitation": summary.get("imitation"), "imitation_seconds": summary.get("imitation_seconds", 0.0),
        "seconds_with_imitation": round(summary["seconds"] + summary.get("imitation_seconds", 0.0), 2),
        "train_curve": curve.points,
        "eval_curve": [{"step": e["step"], "opponents": e["opponents"], "rating_ordinal": e.get("rating_ordinal")}
                       for e in evals],
        "final_evaluation": final,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "learning.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    plot(result, args.out / "learning.png")
    if result["imitation"]:
        im = result["imitation"]
        print(f"imitation: {im['episodes']} games of {im['expert']}, {im['decisions']} decisions, masked accuracy "
              f"{im['accuracy_before']:.1%} -> {im['accuracy']:.1%} in {result['imitation_seconds']:.0f} s")
    print(f"{result['num_timesteps']} steps in {result['seconds']:.0f} s: {result['steps_per_second']:.1f} steps/s "
          f"({result['steps_per_second_without_evaluations']:.1f} without evaluations), stopped by "
          f"{result['stopped_by']}; final evaluation: "
          + ", ".join(f"{o} {d['win_rate']:.0%} of {d['games']} (95% CI {d['win_ci95'][0]:.0%}-{d['win_ci95'][1]:.0%})"
                      for o, d in final["opponents"].items())
          + f"; wrote {args.out / 'learning.json'} and {args.out / 'learning.png'}")
    return result


if __name__ == "__main__":
    main()
