"""MaskablePPO training speed per policy network, side by side on one scenario.

``python -m benchmarks.policy_speed --scenario pitched_battle --steps 2048 --policies mlp factored``

For each ``ppo.policy`` (:mod:`training.config`; the defaults of ``PPOConfig``: ``net_arch`` [128, 128],
``embed_dim`` 64, two attention layers of four heads) a MaskablePPO learner with ``n_steps`` 512, batch 64 and
4 epochs trains ``--steps`` steps against ``random`` on one environment with one torch thread, as
:func:`training.train.train` builds it. Reported per policy: the learner steps per second of ``learn``
(rollouts and updates, the engine and the opponent included) per wall-clock second and per CPU second of the
process (steadier on a shared machine), the CPU milliseconds of one rollout step's policy call (batch 1) and
of one update mini-batch's ``evaluate_actions`` with its backward pass (batch 64), and the parameter count.
The JSON report (``--out``) holds the command and the rows.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402


def measure(policy: str, scenario: str, steps: int, seed: int = 0) -> dict[str, Any]:
    """One row of the report for ``policy`` (module docstring)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from battleline.env.battle_env import BattleEnv
    from battleline.env.rules.battle import Battle
    from battleline.training.config import PPOConfig
    from battleline.training.train import policy_class, policy_kwargs

    torch.set_num_threads(1)
    torch.distributions.Distribution.set_default_validate_args(False)  # as train() does
    ppo = PPOConfig(policy=policy)
    state = Battle.from_scenario(scenario, seed=0).state
    env = DummyVecEnv([lambda: BattleEnv(scenario=scenario, opponent="random")])
    model = MaskablePPO(policy_class(ppo), env, n_steps=512, batch_size=64, n_epochs=4, seed=seed, device="cpu",
                        policy_kwargs=policy_kwargs(ppo, (float(state.table_w), float(state.table_h))))
    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(steps)
    learn_s, learn_cpu = time.perf_counter() - t0, time.process_time() - c0
    one = BattleEnv(scenario=scenario, opponent="random")
    obs, _ = one.reset(seed=seed)
    tensors, _ = model.policy.obs_to_tensor(obs)
    mask = one.action_masks()[None]
    with torch.no_grad():
        model.policy(tensors, action_masks=mask)
        t0 = time.process_time()
        for _ in range(50):
            model.policy(tensors, action_masks=mask)
        rollout_ms = (time.process_time() - t0) / 50 * 1000
    batch = {k: v.repeat(64, *([1] * (v.dim() - 1))) for k, v in tensors.items()}
    masks = np.repeat(mask, 64, axis=0)
    actions = torch.as_tensor(np.repeat(int(np.flatnonzero(mask[0])[0]), 64))
    t0 = time.process_time()
    for _ in range(10):
        _, log_prob, entropy = model.policy.evaluate_actions(batch, actions, action_masks=masks)
        (log_prob.mean() + entropy.mean()).backward()
    update_ms = (time.process_time() - t0) / 10 * 1000
    return {
        "policy": policy, "steps": int(model.num_timesteps), "learn_seconds": round(learn_s, 2),
        "steps_per_second": round(model.num_timesteps / learn_s, 1), "learn_cpu_seconds": round(learn_cpu, 2),
        "steps_per_cpu_second": round(model.num_timesteps / learn_cpu, 1), "rollout_call_ms": round(rollout_ms, 2),
        "update_batch64_ms": round(update_ms, 1), "parameters": sum(p.numel() for p in model.policy.parameters()),
    }


def main(argv: list[str] | None = None) -> int:
    """Measure each policy, print a table and write the JSON report."""
    from battleline.training.cli_common import OneLineArgumentParser

    parser = OneLineArgumentParser(prog="python -m benchmarks.policy_speed", description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="pitched_battle")
    parser.add_argument("--steps", type=int, default=2048, help="learner steps per policy (whole rollouts of 512)")
    parser.add_argument("--policies", nargs="+", default=["mlp", "factored"], choices=["mlp", "unit_pairs", "factored"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/policy_speed.json"))
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    rows = []
    for policy in args.policies:
        row = measure(policy, args.scenario, args.steps, args.seed)
        rows.append(row)
        print(f"{policy:>10}: {row['steps_per_second']:7.1f} steps/s ({row['steps']} steps in {row['learn_seconds']} s; "
              f"{row['steps_per_cpu_second']} per CPU second), "
              f"rollout call {row['rollout_call_ms']} ms, update batch of 64 {row['update_batch64_ms']} ms, "
              f"{row['parameters']:,} parameters", flush=True)
    data = {"command": "python -m benchmarks.policy_speed " + shlex.join(sys.argv[1:] if argv is None else argv),
            "scenario": args.scenario, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
