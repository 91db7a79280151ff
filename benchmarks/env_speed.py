"""Environment throughput on one core: ``python -m benchmarks.env_speed [--quick]``.

Measures, as the median over several repetitions, with uniformly random
masked actions:

* ``BattleEnv`` learner steps per second (a random opponent plays inside the
  env, so one step includes the opponent's decisions up to the learner's next);
* ``BattleEnv`` with the raster ``planes`` in the observation;
* ``--num-envs`` (default 8) battles in one process through Gymnasium's ``SyncVectorEnv``
  (``gymnasium.make_vec``, :mod:`battleline.env.vector`): learner steps per second summed over the
  battles (the autoreset steps, which start a new battle without a decision, are not counted);
* ``BattleAECEnv`` decisions per second (``step`` + ``observe`` of the next agent).

Every figure includes the engine, the mask and the observation. The process
pins itself to one CPU (where the OS allows it), like ``benchmarks.run``.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import platform  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from battleline.training.cli_common import OneLineArgumentParser  # noqa: E402
from benchmarks import check_at_least, check_scenario, flag_errors  # noqa: E402
from benchmarks.run import pin_to_one_core  # noqa: E402


def battle_env_steps_per_second(scenario: str, steps: int, seed: int, planes: bool = False) -> float:
    """Learner steps per wall-clock second of :class:`BattleEnv` (resets included)."""
    from battleline.env.battle_env import BattleEnv

    env = BattleEnv(scenario, opponent="random", planes=planes)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    t0 = time.perf_counter()
    for k in range(steps):
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        if term or trunc:
            env.reset(seed=seed + k + 1)
    return steps / (time.perf_counter() - t0)


def vector_env_steps_per_second(scenario: str, steps: int, seed: int, num_envs: int) -> float:
    """Learner steps per wall-clock second, summed over ``num_envs`` battles in one ``SyncVectorEnv`` (random
    masked actions; about ``steps`` learner steps in all, autoreset steps not counted but timed)."""
    import gymnasium as gym

    from battleline.env.vector import action_masks

    vec = gym.make_vec("battleline/Battle-v0", num_envs=num_envs, vectorization_mode="sync", scenario=scenario,
                       opponent="random")
    rng = np.random.default_rng(seed)
    vec.reset(seed=seed)
    resetting = np.zeros(num_envs, dtype=bool)
    done = 0
    t0 = time.perf_counter()
    while done < steps:
        actions = [int(rng.choice(np.flatnonzero(row))) for row in action_masks(vec)]
        _, _, term, trunc, _ = vec.step(np.array(actions))
        done += int(num_envs - resetting.sum())
        resetting = term | trunc
    seconds = time.perf_counter() - t0
    vec.close()
    return done / seconds


def aec_decisions_per_second(scenario: str, steps: int, seed: int) -> float:
    """Decisions per wall-clock second of :class:`BattleAECEnv` (``observe`` + ``step``; resets included)."""
    from battleline.env.aec_env import BattleAECEnv

    env = BattleAECEnv(scenario)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    t0 = time.perf_counter()
    done = 0
    while done < steps:
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            if not env.agents:
                env.reset(seed=seed + done)
            continue
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        done += 1
    return steps / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> None:
    """Command line (see the module docstring): print each row's median throughput, in steps or decisions per second.

    Args:
        argv: the arguments after the program name; None reads ``sys.argv``.

    Raises:
        SystemExit: bad arguments (argparse, exit code 2) or ``--help``.
    """
    parser = OneLineArgumentParser(prog="python -m benchmarks.env_speed", description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="pitched_battle", help="scenario name (default pitched_battle)")
    parser.add_argument("--steps", type=int, default=1000, help="steps per repetition (default 1000)")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions; the median is reported (default 5)")
    parser.add_argument("--num-envs", type=int, default=8,
                        help="battles of the vector env row, one process (default 8)")
    parser.add_argument("--quick", action="store_true", help="200 steps x 3 repetitions")
    args = parser.parse_args(argv)
    steps, repeats = (200, 3) if args.quick else (args.steps, args.repeats)
    with flag_errors():
        check_at_least(1, steps=steps, repeats=repeats, num_envs=args.num_envs)
        check_scenario(args.scenario)

    command = "python -m benchmarks.env_speed" + ("" if len(sys.argv) < 2 else " " + shlex.join(sys.argv[1:]))
    print(f"command: {command}")
    print(f"python {platform.python_version()} on {platform.machine()}, {pin_to_one_core()}")
    print(f"scenario {args.scenario}, {steps} steps x {repeats} repetitions, random masked actions")
    rows = [
        ("BattleEnv learner steps/s", lambda r: battle_env_steps_per_second(args.scenario, steps, 1000 * r)),
        ("BattleEnv + planes steps/s", lambda r: battle_env_steps_per_second(args.scenario, steps, 1000 * r, True)),
        (f"SyncVectorEnv x{args.num_envs} steps/s",
         lambda r: vector_env_steps_per_second(args.scenario, steps, 1000 * r, args.num_envs)),
        ("BattleAECEnv decisions/s", lambda r: aec_decisions_per_second(args.scenario, steps, 1000 * r)),
    ]
    for label, fn in rows:
        values = [fn(r) for r in range(repeats)]
        spread = f"(min {min(values):.0f}, max {max(values):.0f})"
        print(f"{label:<28} median {statistics.median(values):8.0f}  {spread}")


if __name__ == "__main__":
    main()
