"""One measurement of :mod:`benchmarks.compare`, in its own process, against one side's source tree.

Run as ``python -P benchmarks/compare_worker.py --root TREE --figure NAME --size N --seed S --cpu C`` with
``TREE`` as the working directory and as ``PYTHONPATH`` (``-P`` keeps this file's own folder off
``sys.path``), so that the tree's own code is imported: a tree with a ``battleline/`` folder is
imported as ``battleline.*``, an older one (before the package layout, e.g. 75bcf87) through its
top-level ``env``, ``training`` and ``benchmarks`` packages. The worker checks that the engine and
benchmark modules it imported lie inside ``TREE`` and exits with code 3 otherwise.

It pins itself to CPU ``C``, limits BLAS and torch to one thread, times by its CPU clock
(:func:`time.process_time`) and prints one JSON line: ``{"figure", "value", "unit", "count",
"cpu_s", "engine_file", "benchmarks_file", "layout"}``, ``value`` being ``count / cpu_s`` (both null
for ``decisions``, whose rate the tree's own function returns).

This file imports nothing from the project at module level: the same file serves both trees.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

FIGURES = ("battles_line_advance", "battles_random", "decisions", "env_steps", "ppo_steps", "ppo_steps_x8")
"""The figures one worker can measure (see :func:`measure`)."""

EXIT_WRONG_TREE = 3


def _layout(root: Path) -> str:
    """``"battleline."`` when ``root`` holds the package folder ``battleline/``, else ``""`` (top-level packages)."""
    return "battleline." if (root / "battleline" / "__init__.py").is_file() else ""


def _own_module(root: Path, name: str) -> ModuleType:
    """Import ``name`` and check that its file lies inside ``root``; SystemExit(3) with one line otherwise."""
    module = importlib.import_module(name)
    path = Path(module.__file__ or "").resolve()
    if not path.is_relative_to(root):
        print(f"error: {name} was imported from {path}, not from the tree {root}", file=sys.stderr)
        raise SystemExit(EXIT_WRONG_TREE)
    return module


def _warm_up(prefix: str, scenario: str) -> None:
    """Load the scenario and ask for the first legal actions once, outside the clock (config caches, lazy imports)."""
    battle_mod = importlib.import_module(prefix + "env.rules.battle")
    battle = battle_mod.Battle.from_scenario(scenario, seed=0)
    battle.legal_actions()


def env_steps(prefix: str, scenario: str, steps: int, seed: int) -> tuple[int, float]:
    """``steps`` BattleEnv learner steps with uniformly random masked actions (a random opponent inside the env,
    resets included); returns (steps, CPU seconds). The same body as ``benchmarks.env_speed``, on the CPU clock."""
    import numpy as np

    battle_env = importlib.import_module(prefix + "env.battle_env")
    env = battle_env.BattleEnv(scenario, opponent="random")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    t0 = time.process_time()
    for k in range(steps):
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term or trunc:
            env.reset(seed=seed + k + 1)
    return steps, time.process_time() - t0


def ppo_steps(prefix: str, scenario: str, steps: int, seed: int, n_envs: int = 1) -> tuple[int, float]:
    """One ``MaskablePPO.learn(steps)`` (one rollout of ``steps`` steps and its update) on ``n_envs`` BattleEnvs
    against the random opponent in one ``DummyVecEnv``, with the tree's own default :class:`training.config.PPOConfig`
    network and ``n_steps = steps // n_envs`` (batch ``min(64, steps)`` with one env, else ``min(256, steps)`` and 4
    epochs, as the shipped ppo_vs_scripted config); model construction is outside the clock. Returns (timesteps,
    CPU seconds)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)  # as training.train does
    train = importlib.import_module(prefix + "training.train")
    config = importlib.import_module(prefix + "training.config")
    battle_env = importlib.import_module(prefix + "env.battle_env")
    battle_mod = importlib.import_module(prefix + "env.rules.battle")
    state = battle_mod.Battle.from_scenario(scenario, seed=0).state
    n_steps = max(8, steps // n_envs)  # PPOConfig takes at least 8
    if n_envs == 1:
        p = config.PPOConfig(n_steps=n_steps, batch_size=min(64, steps))
    else:
        p = config.PPOConfig(n_steps=n_steps, batch_size=min(256, n_steps * n_envs), n_epochs=4)
    vec_env = DummyVecEnv([lambda: battle_env.BattleEnv(scenario, opponent="random") for _ in range(n_envs)])
    model = MaskablePPO(
        train.policy_class(p), vec_env, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
        n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range, ent_coef=p.ent_coef,
        vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
        policy_kwargs=train.policy_kwargs(p, (float(state.table_w), float(state.table_h))),
        seed=seed, device="cpu", verbose=0,
    )
    t0 = time.process_time()
    model.learn(total_timesteps=n_steps * n_envs)
    return int(model.num_timesteps), time.process_time() - t0


def measure(root: Path, figure: str, scenario: str, size: int, seed: int) -> dict[str, Any]:
    """Measure ``figure`` on the tree at ``root`` with ``size`` battles (battles, decisions) or steps (env, PPO).

    Battles and decisions use the tree's own ``benchmarks.run.battles_per_second`` and
    ``decisions_per_second`` with ``clock=time.process_time``; the env and PPO figures use
    :func:`env_steps` and :func:`ppo_steps`, which run against either layout.

    Returns:
        the JSON record described in the module docstring.

    Raises:
        ValueError: unknown ``figure``.
    """
    prefix = _layout(root)
    engine = _own_module(root, prefix + "env.rules.battle")
    bench = _own_module(root, "benchmarks.run")
    _warm_up(prefix, scenario)
    clock = time.process_time
    if figure in ("battles_line_advance", "battles_random"):
        agent = "line_advance" if figure == "battles_line_advance" else "random"
        value = bench.battles_per_second(scenario, agent, agent, size, seed, clock)
        count, unit = size, "battles/s"
        cpu_s = count / value
    elif figure == "decisions":
        value = bench.decisions_per_second(scenario, size, seed, clock)
        count, unit, cpu_s = None, "decisions/s", None  # the tree's function returns the rate only
    elif figure == "env_steps":
        count, cpu_s = env_steps(prefix, scenario, size, seed)
        value, unit = count / cpu_s, "steps/s"
    elif figure in ("ppo_steps", "ppo_steps_x8"):
        count, cpu_s = ppo_steps(prefix, scenario, size, seed, 8 if figure == "ppo_steps_x8" else 1)
        value, unit = count / cpu_s, "steps/s"
    else:
        raise ValueError(f"unknown figure {figure!r}; known: {', '.join(FIGURES)}")
    return {
        "figure": figure, "value": value, "unit": unit, "count": count, "cpu_s": cpu_s,
        "engine_file": engine.__file__, "benchmarks_file": bench.__file__,
        "layout": "battleline package" if prefix else "top-level packages",
        "compiled_core": _core_on(prefix),
    }


def _core_on(prefix: str) -> bool:
    """Whether the tree's engine answers through its compiled core (False for an engine without one)."""
    try:
        kernel = importlib.import_module(prefix + "env.rules.kernel")
    except ImportError:
        return False
    return bool(kernel.available())


def main(argv: list[str] | None = None) -> None:
    """Parse the flags, pin to one CPU, limit threads, measure and print the JSON line."""
    parser = argparse.ArgumentParser(prog="benchmarks/compare_worker.py", description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the source tree to import and measure")
    parser.add_argument("--figure", required=True, choices=FIGURES)
    parser.add_argument("--scenario", default="pitched_battle")
    parser.add_argument("--size", type=int, required=True, help="battles or steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu", type=int, default=None, help="the CPU to pin to (default: the first allowed)")
    args = parser.parse_args(argv)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    if hasattr(os, "sched_setaffinity"):
        cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
    record = measure(Path(args.root).resolve(), args.figure, args.scenario, args.size, args.seed)
    print(json.dumps(record))


if __name__ == "__main__":
    main()
