"""Train a MaskablePPO learner against a pool of opponents: ``battleline train --config FILE [--resume]``.

The learner is sb3-contrib's ``MaskablePPO`` with a ``MultiInputPolicy`` over
:class:`env.battle_env.BattleEnv`'s ``Dict`` observation; the action mask goes
to the policy at every rollout step (``action_masks()``), so illegal orders have
zero probability. The ``n_envs`` environments are vectorised by ``vec_env``: ``DummyVecEnv``
(all in the learner's process; the default) or ``SubprocVecEnv`` (a worker process each when
``n_envs > 1``); each draws, per episode, its opponent from
the pool (:mod:`training.pool`), its seat and its army lists.

A run directory (``runs/<id>`` by default) holds::

    config.json          the config of the run (as validated)
    state.json           the resumable state: step count, latest checkpoint, self-play
                         snapshots, RNG states, statistics and rating totals
    checkpoints/         step_<N>.zip model checkpoints (the newest ``keep_checkpoints``)
    pool/                self_<N>.zip frozen snapshots for self-play
    tb/                  TensorBoard event files (one folder for the whole run)
    evaluations.jsonl    one line per periodic evaluation
    model.zip, model.json  the final policy and its metadata (scenario, unit slots, steps)
    summary.json         totals of the last session (steps, seconds, steps per second, checks)

With an ``imitation:`` section, a new run first records the expert's
demonstrations and clones them into the policy (:mod:`training.imitation`),
then writes a checkpoint at step 0 whose ``state.json`` holds the cloning
report (``imitation``), so a resumed run never clones again; PPO then
continues from the cloned weights.

Checkpoints are taken at the start of a rollout, after the update, so a run
killed at any moment resumes (``--resume``) from its last checkpoint with the
same step count, pool, ratings and TensorBoard folder; TensorBoard drops the
points logged after that checkpoint (``purge_step``), so the curves continue
without a fold. The environments of a resumed session are reseeded from
``(seed, step)``; the torch, numpy and ``random`` generators are restored.
The run ends at ``total_timesteps`` rounded up to whole rollouts.
"""

from __future__ import annotations

import base64
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from battleline.env.rules.config import read_file_text
from battleline.training.config import PPOConfig, TrainingConfig
from battleline.training.pool import PoolEntry, TrainingEnv, build_pool

STATE_VERSION = 1


class TrainingError(RuntimeError):
    """A run that cannot start or resume; the message is one line."""


class TrainingInterrupted(TrainingError):
    """Training was interrupted (Ctrl-C); the message names the last checkpoint to resume from."""


@dataclass(frozen=True)
class RunPaths:
    """The files of a run directory (see the module docstring)."""

    root: Path

    @property
    def state(self) -> Path:
        """``state.json``: the resumable state (step count, latest checkpoint, snapshots, RNG states, statistics)."""
        return self.root / "state.json"

    @property
    def config(self) -> Path:
        """``config.json``: the config of the run, as validated."""
        return self.root / "config.json"

    @property
    def checkpoints(self) -> Path:
        """``checkpoints/``: the ``step_<N>.zip`` model checkpoints."""
        return self.root / "checkpoints"

    @property
    def pool(self) -> Path:
        """``pool/``: the ``self_<N>.zip`` frozen self-play snapshots."""
        return self.root / "pool"

    @property
    def tb(self) -> Path:
        """``tb/``: the TensorBoard event files of the whole run."""
        return self.root / "tb"

    @property
    def evaluations(self) -> Path:
        """``evaluations.jsonl``: one JSON line per periodic evaluation."""
        return self.root / "evaluations.jsonl"

    @property
    def model(self) -> Path:
        """``model.zip``: the final policy."""
        return self.root / "model.zip"

    @property
    def summary(self) -> Path:
        """``summary.json``: totals of the last session."""
        return self.root / "summary.json"


# ---------------------------------------------------------------------- environments
def env_kwargs(config: TrainingConfig, unit_slots: int) -> dict[str, Any]:
    """The :class:`BattleEnv` keyword arguments of a run (illegal indices are penalised and counted, not raised)."""
    return {
        "scenario": config.scenario,
        "learner_side": config.learner_side,
        "blue_army": config.armies.blue or None,
        "red_army": config.armies.red or None,
        "reward_shaping": config.reward_shaping,
        "max_steps": config.max_episode_steps,
        "illegal_action": "penalise",
        "planes": config.planes,
        "unit_slots": unit_slots,
    }


def battle_env(kwargs: dict[str, Any], pairs: bool = False) -> Any:
    """A :class:`BattleEnv` from :func:`env_kwargs`, wrapped in :class:`training.pair_observation.PairObservation`
    when the run observes unit pairs (``pairs``)."""
    from battleline.env.battle_env import BattleEnv

    env = BattleEnv(**kwargs)
    if pairs:
        from battleline.training.pair_observation import PairObservation

        return PairObservation(env)
    return env


def _env_factory(
    kwargs: dict[str, Any], pool: list[dict[str, Any]], seed: int, in_subprocess: bool, pairs: bool = False
) -> Callable[[], Any]:
    def make() -> Any:
        if in_subprocess:
            import torch

            torch.set_num_threads(1)
        from stable_baselines3.common.monitor import Monitor

        return Monitor(TrainingEnv(battle_env(kwargs, pairs), [PoolEntry(**e) for e in pool], seed=seed))

    return make


def make_vec_env(config: TrainingConfig, pool: list[PoolEntry], unit_slots: int) -> Any:
    """``n_envs`` training environments: ``SubprocVecEnv`` (one worker process each) when more than one and
    ``config.vec_env`` is ``"subproc"``, else ``DummyVecEnv`` (all in this process)."""
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    kwargs = env_kwargs(config, unit_slots)
    entries = [e.to_dict() for e in pool]
    sub = config.n_envs > 1 and config.vec_env == "subproc"
    fns = [_env_factory(kwargs, entries, config.seed + i, sub, config.pairs) for i in range(config.n_envs)]
    return SubprocVecEnv(fns) if sub else DummyVecEnv(fns)


def _table_size(config: TrainingConfig) -> tuple[float, float]:
    """The scenario's table (width, height) in inches."""
    from battleline.env.rules.battle import Battle

    state = Battle.from_scenario(config.scenario, seed=0).state
    return float(state.table_w), float(state.table_h)


def policy_class(ppo: PPOConfig) -> Any:
    """The MaskablePPO policy ``ppo.policy`` names: :class:`training.masking.MaskedMultiInputPolicy` (sb3-contrib's
    ``MultiInputPolicy`` with a faster, equal masked distribution), :class:`training.unit_pairs.UnitPairPolicy`
    or :class:`training.factored.FactoredPolicy`."""
    if ppo.policy == "factored":
        from battleline.training.factored import FactoredPolicy

        return FactoredPolicy
    if ppo.policy == "unit_pairs":
        from battleline.training.unit_pairs import UnitPairPolicy

        return UnitPairPolicy
    from battleline.training.masking import MaskedMultiInputPolicy

    return MaskedMultiInputPolicy


def optimizer_kwargs() -> dict[str, Any]:
    """The learner's Adam settings: SB3's own (``eps=1e-5``) with torch's fused kernel where torch has one for
    every device (torch 2.4 and later: on a CPU about five times faster per update for the ``mlp`` network, the
    same update up to floating-point rounding)."""
    import torch

    kwargs: dict[str, Any] = {"eps": 1e-5}
    if tuple(int(v) for v in torch.__version__.split(".")[:2]) >= (2, 4):
        kwargs["fused"] = True
    return kwargs


def policy_kwargs(ppo: PPOConfig, table: tuple[float, float] = (72.0, 48.0)) -> dict[str, Any]:
    """Policy keyword arguments.

    Every policy: :func:`optimizer_kwargs`. ``unit_pairs``: embedding width, table size (inches) and the value
    MLP's widths; ``factored``: token width, attention layers and heads, and the value MLP's widths; ``mlp``: the
    layer widths and, unless ``ppo.mask_features``, the mask-free extractor.
    """
    if ppo.policy == "factored":
        return {"embed_dim": ppo.embed_dim, "attention_layers": ppo.attention_layers,
                "attention_heads": ppo.attention_heads, "value_arch": list(ppo.net_arch),
                "optimizer_kwargs": optimizer_kwargs()}
    if ppo.policy == "unit_pairs":
        return {"embed_dim": ppo.embed_dim, "table_w": table[0], "table_h": table[1], "value_arch": list(ppo.net_arch),
                "optimizer_kwargs": optimizer_kwargs()}
    kwargs: dict[str, Any] = {"net_arch": list(ppo.net_arch), "optimizer_kwargs": optimizer_kwargs()}
    if not ppo.mask_features:
        from battleline.training.features import MaskFreeExtractor

        kwargs["features_extractor_class"] = MaskFreeExtractor
    return kwargs


# ---------------------------------------------------------------------- state files
def _write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a temporary file renamed over ``path``)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _numpy_state() -> list[Any]:
    name, keys, pos, has_gauss, gauss = np.random.get_state(legacy=True)
    return [name, [int(k) for k in keys], int(pos), int(has_gauss), float(gauss)]


def _rng_state() -> dict[str, Any]:
    import torch

    return {
        "torch": base64.b64encode(torch.get_rng_state().numpy().tobytes()).decode("ascii"),
        "numpy": _numpy_state(),
        "random": [random.getstate()[0], list(random.getstate()[1]), random.getstate()[2]],
    }


def _set_rng_state(state: dict[str, Any]) -> None:
    import torch

    torch.set_rng_state(torch.frombuffer(bytearray(base64.b64decode(state["torch"])), dtype=torch.uint8))
    name, keys, pos, has_gauss, gauss = state["numpy"]
    np.random.set_state((name, np.array(keys, dtype=np.uint32), pos, has_gauss, gauss))
    version, internal, gauss = state["random"]
    random.setstate((version, tuple(internal), gauss))


def _tb_logger(folder: Path, purge_step: int | None) -> Any:
    """An SB3 logger writing only TensorBoard events into ``folder`` (dropping steps >= ``purge_step``)."""
    from stable_baselines3.common.logger import Logger, TensorBoardOutputFormat
    from torch.utils.tensorboard import SummaryWriter

    class _Format(TensorBoardOutputFormat):
        def __init__(self) -> None:  # noqa: D107 - same as the base class, with purge_step
            self.writer = SummaryWriter(log_dir=str(folder), purge_step=purge_step)
            self._is_closed = False

    return Logger(folder=str(folder), output_formats=[_Format()])


RESUME_FIXED = ("scenario", "n_envs", "planes", "pairs", "armies", "learner_side", "ppo")
"""Config fields a checkpoint depends on: a resumed run must keep them (``ppo``: every field, compared one by
one; the network's architecture and its hyper-parameters are saved in the checkpoint and would be kept anyway)."""


def _check_resumable(config: TrainingConfig, saved: dict[str, Any]) -> None:
    """Raise TrainingError (one line naming the field, its run and config values) when ``config`` changes
    a field of :data:`RESUME_FIXED` from the run's ``config.json`` (``saved``). A field the run's file does
    not have (a run made before the field existed) counts as the field's default."""
    now = config.model_dump(mode="json")
    defaults = {k: f.get_default(call_default_factory=True) for k, f in TrainingConfig.model_fields.items()
                if not f.is_required()}
    ppo_defaults = PPOConfig().model_dump(mode="json")
    raw_ppo = saved.get("ppo", {})
    saved_ppo = {**ppo_defaults, **raw_ppo} if isinstance(raw_ppo, dict) else {}
    for key in RESUME_FIXED:
        if key == "ppo":
            pairs = [(f"ppo.{k}", saved_ppo.get(k), v) for k, v in now["ppo"].items()]
        else:
            old = saved[key] if key in saved else _json_value(defaults.get(key))
            pairs = [(key, old, now.get(key))]
        for field, old, new in pairs:
            if old != new:
                raise TrainingError(f"cannot resume: '{field}' differs (run: {_shown_value(old)}, "
                                    f"config: {_shown_value(new)}); keep the run's value or start a new run_dir")


def _json_value(value: Any) -> Any:
    """A config default as it reads back from ``config.json`` (pydantic models dumped to plain JSON)."""
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value


def _shown_value(value: Any) -> str:
    """A config value as it reads in YAML (``mlp``, ``[64, 64]``, ``true``); a missing one is ``(none)``."""
    return "(none)" if value is None else value if isinstance(value, str) else json.dumps(value)


def _read_run_json(path: Path, what: str) -> dict[str, Any]:
    """The JSON object in ``path`` (a run's ``state.json`` or ``config.json``).

    Raises:
        TrainingError: missing, unreadable, not JSON or not an object (one line naming the file).
    """
    if not path.is_file():
        raise TrainingError(f"cannot resume: {path} not found (the run's {what})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise TrainingError(f"cannot resume: {path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise TrainingError(f"cannot resume: {path}: not valid JSON ({exc.msg}: line {exc.lineno} "
                            f"column {exc.colno})") from None
    if not isinstance(data, dict):
        raise TrainingError(f"cannot resume: {path}: not the run's {what} (expected a JSON object, "
                            f"got {type(data).__name__})")
    return data


class _StatsState(BaseModel):
    """:meth:`training.callbacks.EpisodeStatsCallback.state_dict` as saved in ``state.json``."""

    illegal_total: StrictInt = 0
    episodes: StrictInt = 0
    terminated: StrictInt = 0
    outcome_rewards: StrictInt = 0
    return_mismatches: StrictInt = 0
    by_group: dict[str, list[Any]] = {}
    recent: list[list[Any]] = []
    outcome_window: list[Any] = []


class _EvaluationState(BaseModel):
    """:meth:`training.callbacks.EvaluationCallback.state_dict` as saved in ``state.json``."""

    next_eval: StrictInt = 0
    last_image_update: StrictInt = 0
    images_done: StrictInt = 0
    illegal_total: StrictInt = 0
    evaluations: StrictInt = 0
    ratings: dict[str, tuple[float, float]] = {}
    last: Any = None


class _RunState(BaseModel):
    """The parts of a run's ``state.json`` that a resumed run reads back (other keys are kept as they are)."""

    model_config = ConfigDict(extra="allow")

    checkpoint: str
    num_timesteps: StrictInt = Field(ge=0)
    snapshots: list[tuple[StrictInt, str]] = []
    stats: _StatsState = _StatsState()
    evaluation: _EvaluationState = _EvaluationState()
    imitation: dict[str, Any] | None = None
    resumes: StrictInt = 0


def _resume_state(paths: RunPaths, config: TrainingConfig) -> tuple[dict[str, Any], Path]:
    """The run's ``state.json`` and the checkpoint it names, after checking the run can be resumed with ``config``.

    Checked before anything is written: ``state.json`` (an object with ``checkpoint``, ``num_timesteps`` and
    ``rng``), ``config.json`` (present, and :func:`_check_resumable`) and the checkpoint (a zip file).

    Raises:
        TrainingError: one line naming the file and what is wrong.
    """
    import zipfile

    if not paths.state.is_file():
        raise TrainingError(f"nothing to resume: {paths.state} not found (start the run without --resume)")
    state = _read_run_json(paths.state, "resumable state")
    missing = [k for k in ("checkpoint", "num_timesteps", "rng") if k not in state]
    if missing:
        raise TrainingError(f"cannot resume: {paths.state}: not the run's resumable state "
                            f"(missing {', '.join(repr(k) for k in missing)})")
    try:
        _RunState.model_validate(state)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise TrainingError(f"cannot resume: {paths.state}: not the run's resumable state "
                            f"(bad '{where}': {err['msg']})") from None
    _check_resumable(config, _read_run_json(paths.config, "config"))
    ckpt = paths.root / state["checkpoint"]
    if not ckpt.is_file():
        raise TrainingError(f"cannot resume: checkpoint {ckpt} not found")
    if not zipfile.is_zipfile(ckpt):
        raise TrainingError(f"cannot resume: checkpoint {ckpt}: not a model checkpoint (not a zip file)")
    return state, ckpt


# ---------------------------------------------------------------------- the run
def train(
    config: TrainingConfig,
    resume: bool = False,
    console: Any = None,
    progress: bool = True,
    extra_callbacks: list[Any] | None = None,
) -> dict[str, Any]:
    """Train (or resume) the run described by ``config``.

    Args:
        resume: continue the run in ``config.run_path()`` from its last checkpoint.
        console: a ``rich.console.Console`` for the progress bar and messages (default: stdout).
        progress: show the rich progress bar.
        extra_callbacks: more SB3 callbacks (benchmarks, tests).

    Returns:
        The summary written to ``summary.json``: ``num_timesteps``, ``session_steps``,
        ``seconds``, ``steps_per_second`` (this session, evaluations included),
        ``episodes``, ``illegal_actions``, ``outcome_rewards``, ``terminated_episodes``,
        ``return_mismatches``, ``eval_illegal_actions``, ``last_evaluation``, ``model`` (path),
        ``imitation`` (the cloning report of :func:`training.imitation.warm_start`, or None) and
        ``imitation_seconds`` (recording + cloning in this session; not in ``seconds``).

    Raises:
        TrainingError: the run directory already holds a run (without ``resume``),
            or holds none / an incompatible one (with ``resume``).
        TrainingInterrupted: Ctrl-C; the message names the last checkpoint.
    """
    import torch
    from rich.console import Console
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList

    from battleline.env.battle_env import scenario_unit_slots
    from battleline.training.callbacks import (
        EpisodeStatsCallback,
        EvaluationCallback,
        InterruptCallback,
        PeriodicCallback,
        RichProgressCallback,
    )

    torch.set_num_threads(config.torch_threads)
    torch.distributions.Distribution.set_default_validate_args(False)  # masks are exact: skip the checks (~2x faster)
    console = console or Console(highlight=False)
    paths = RunPaths(config.run_path())
    state: dict[str, Any] = {}
    ckpt = paths.checkpoints
    if resume:
        state, ckpt = _resume_state(paths, config)
    elif paths.state.is_file():
        raise TrainingError(f"run directory {paths.root} already holds a run; pass --resume to continue it, "
                            f"or set another run_dir")
    for folder in (paths.root, paths.checkpoints, paths.pool, paths.tb):
        folder.mkdir(parents=True, exist_ok=True)

    unit_slots = scenario_unit_slots(config.scenario, config.armies.blue or None, config.armies.red or None)
    snapshots = [(int(s), str((paths.root / p).resolve())) for s, p in state.get("snapshots", [])]
    pool = build_pool(config, snapshots)
    if not pool and not config.uses_self_play:  # pragma: no cover - the config requires an opponent
        raise TrainingError("the opponent pool is empty")
    vec_env = make_vec_env(config, pool or [PoolEntry("random", "random", "agent", "random", 1.0)], unit_slots)

    start_step = 0
    if resume:
        try:
            model = MaskablePPO.load(str(ckpt), env=vec_env, device=config.device)
        except Exception as exc:  # noqa: BLE001 - any failure to load is a damaged checkpoint
            vec_env.close()
            msg = " ".join(str(exc).split())[:200]
            raise TrainingError(f"cannot resume: checkpoint {ckpt}: not a readable model checkpoint "
                                f"({type(exc).__name__}: {msg})") from None
        start_step = int(model.num_timesteps)
        if start_step != int(state["num_timesteps"]):
            vec_env.close()
            raise TrainingError(f"cannot resume: {ckpt} holds step {start_step}, "
                                f"state.json says {state['num_timesteps']}")
        try:
            _set_rng_state(state["rng"])
        except (KeyError, TypeError, ValueError, RuntimeError) as exc:
            vec_env.close()
            raise TrainingError(f"cannot resume: {paths.state}: bad 'rng' ({type(exc).__name__}: {exc})") from None
        vec_env.seed(int(np.random.SeedSequence([config.seed, start_step]).generate_state(1)[0] & 0x7FFFFFFF))
        _truncate_evaluations(paths.evaluations, start_step)
    else:
        p = config.ppo
        model = MaskablePPO(
            policy_class(p), vec_env, learning_rate=p.learning_rate, n_steps=p.n_steps, batch_size=p.batch_size,
            n_epochs=p.n_epochs, gamma=p.gamma, gae_lambda=p.gae_lambda, clip_range=p.clip_range,
            ent_coef=p.ent_coef, vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
            policy_kwargs=policy_kwargs(p, _table_size(config)), seed=config.seed, device=config.device, verbose=0,
        )
    _write_json(paths.config, config.model_dump(mode="json"))  # once the run is known to start or resume
    logger = _tb_logger(paths.tb, start_step + 1 if resume else None)
    model.set_logger(logger)
    if not resume:
        text = "```\n" + json.dumps(config.model_dump(mode="json"), indent=1) + "\n```"
        logger.output_formats[0].writer.add_text("run/config", text, 0)

    stats = EpisodeStatsCallback(window=100)
    evaluation = EvaluationCallback(
        config.scripted_opponents, config.scenario, config.eval_every, config.eval_games, config.images_every,
        config.rollout_steps, seed=config.seed, blue_armies=config.armies.blue or None,
        red_armies=config.armies.red or None, log_path=paths.evaluations,
    )
    if resume:
        stats.load_state_dict(state.get("stats", {}))
        evaluation.load_state_dict(state.get("evaluation", {}))

    def set_pool() -> None:
        vec_env.env_method("set_pool", [e.to_dict() for e in build_pool(config, snapshots)])

    def snapshot(step: int) -> None:
        path = (paths.pool / f"self_{step:010d}.zip").resolve()
        model.save(str(path))
        snapshots.append((step, str(path)))
        set_pool()
        kept = {p for _, p in snapshots[-config.self_play.max_snapshots:]}
        for old in paths.pool.glob("self_*.zip"):
            if str(old.resolve()) not in kept:
                old.unlink(missing_ok=True)
        del snapshots[:-config.self_play.max_snapshots]

    last_checkpoint = [start_step if resume else None]
    imitation: dict[str, Any] | None = state.get("imitation")

    def checkpoint(step: int, finished: bool = False) -> None:
        last_checkpoint[0] = step
        ckpt = paths.checkpoints / f"step_{step:010d}.zip"
        model.save(str(ckpt))
        _write_json(paths.state, {
            "version": STATE_VERSION, "num_timesteps": step, "finished": finished,
            "checkpoint": ckpt.relative_to(paths.root).as_posix(),
            "snapshots": [[s, os.path.relpath(p, paths.root.resolve())] for s, p in snapshots],
            "rng": _rng_state(), "stats": stats.state_dict(), "evaluation": evaluation.state_dict(),
            "resumes": int(state.get("resumes", 0)) + int(resume), "saved_at": time.time(),
            "imitation": imitation,
        })
        old = sorted(paths.checkpoints.glob("step_*.zip"))
        for f in old[:-config.keep_checkpoints]:
            f.unlink(missing_ok=True)

    def finish(step: int) -> None:
        model.logger.dump(step)
        checkpoint(step, finished=True)
        model.save(str(paths.model))
        _write_json(paths.model.with_suffix(".json"), {
            "algorithm": "MaskablePPO", "scenario": config.scenario, "unit_slots": unit_slots,
            "planes": config.planes, "pairs": config.pairs, "armies": config.armies.model_dump(), "num_timesteps": step,
            "config_id": config.id,
        })

    imitation_seconds = 0.0
    if config.imitation is not None and imitation is None and not resume:
        from battleline.training.imitation import warm_start

        im = config.imitation
        dagger = (f", then {im.dagger_rounds} DAgger round(s) of {im.dagger_episodes} game(s) each"
                  if im.dagger_rounds else "")
        console.print(f"imitation: {im.episodes} game(s) of {im.expert}, {im.epochs} epochs of behaviour cloning"
                      f"{dagger}", soft_wrap=True)
        t_imitation = time.perf_counter()
        try:
            imitation = warm_start(model, config, unit_slots, writer=logger.output_formats[0].writer)
        except KeyboardInterrupt:
            vec_env.close()
            raise TrainingInterrupted("interrupted during the imitation warm start; no checkpoint was written yet: "
                                      "run the same command again to start over") from None
        imitation_seconds = time.perf_counter() - t_imitation
        for row in imitation["dagger"]:
            console.print(f"imitation: DAgger round {row['round']}: the policy won {row['policy_wins']} of "
                          f"{row['episodes']} game(s), agreed with the expert on {row['accuracy_on_new']:.1%} "
                          f"of {row['decisions']} new decisions", soft_wrap=True)
        console.print(f"imitation: {imitation['decisions']} decisions from {imitation['episodes']} game(s), masked "
                      f"accuracy {imitation['accuracy_before']:.1%} (the expert's games, before cloning) -> "
                      f"{imitation['accuracy']:.1%} (all decisions) in {imitation_seconds:.0f} s", soft_wrap=True)
        checkpoint(0)  # a resume starts from the cloned weights and does not clone again

    if config.uses_self_play and not snapshots:
        snapshot(start_step)
    elif config.uses_self_play:
        set_pool()

    interrupt = InterruptCallback()
    callbacks: list[Any] = [interrupt, stats, evaluation]
    if config.uses_self_play:
        callbacks.append(PeriodicCallback(config.self_play.snapshot_every, snapshot, start=start_step))
    callbacks.append(PeriodicCallback(config.checkpoint_every, checkpoint, final=finish, start=start_step))
    if progress:
        callbacks.append(RichProgressCallback(config.final_timesteps, stats, console=console))
    callbacks += extra_callbacks or []

    remaining = config.total_timesteps - start_step
    t0 = time.perf_counter()
    try:
        with interrupt.installed():
            if remaining > 0:
                model.learn(total_timesteps=remaining, callback=CallbackList(callbacks), reset_num_timesteps=not resume)
            elif not state.get("finished"):
                finish(start_step)
    except (KeyboardInterrupt, EOFError, BrokenPipeError, ConnectionResetError) as exc:
        if not isinstance(exc, KeyboardInterrupt) and not interrupt.requested:
            raise  # a worker died without a Ctrl-C: a real error
        where = (f"the last checkpoint is at step {last_checkpoint[0]}: continue with --resume"
                 if last_checkpoint[0] is not None else "no checkpoint was written yet")
        raise TrainingInterrupted(f"interrupted at step {model.num_timesteps}; {where}") from None
    finally:
        try:
            vec_env.close()
        except (EOFError, BrokenPipeError, ConnectionResetError):  # workers already gone after Ctrl-C
            pass
        logger.close()
    seconds = time.perf_counter() - t0
    session = int(model.num_timesteps) - start_step
    summary = {
        "num_timesteps": int(model.num_timesteps), "session_steps": session, "seconds": round(seconds, 3),
        "steps_per_second": round(session / seconds, 2) if seconds > 0 else 0.0, "resumed_from": start_step,
        "episodes": stats.episodes, "terminated_episodes": stats.terminated, "outcome_rewards": stats.outcome_rewards,
        "illegal_actions": stats.illegal_total, "return_mismatches": stats.return_mismatches,
        "eval_illegal_actions": evaluation.illegal_total, "last_evaluation": evaluation.last,
        "model": str(paths.model), "imitation": imitation, "imitation_seconds": round(imitation_seconds, 3),
    }
    _write_json(paths.summary, summary)
    return summary


def _truncate_evaluations(path: Path, step: int) -> None:
    """Drop the evaluation lines logged after ``step`` (they are redone after a resume)."""
    if not path.is_file():
        return
    keep = [ln for ln in read_file_text(path, TrainingError).splitlines() if ln.strip() and json.loads(ln)["step"] <= step]
    path.write_text("".join(ln + "\n" for ln in keep), encoding="utf-8")


__all__ = ["RunPaths", "TrainingError", "TrainingInterrupted", "env_kwargs", "make_vec_env", "optimizer_kwargs",
           "policy_class", "policy_kwargs", "train"]
