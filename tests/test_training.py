"""Training: config errors, the opponent pool, the CI smoke run (train, kill, resume), learned agents.

The smoke run trains ``configs/training/quick.yaml`` (2,048 steps of MaskablePPO on
skirmish_line) in a subprocess, kills it after its first checkpoint, resumes it
with ``--resume`` and checks the step count, the TensorBoard event files, the
reward audit and that a saved model plays with masks at prediction (evaluate,
play, tournament: no illegal action in more than 1,000 decisions).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from battleline.env.battle_env import BattleEnv, scenario_unit_slots
from battleline.env.rules.config import ConfigError
from battleline.training.cli import app
from battleline.training.config import TRAINING_CONFIG_DIR, load_training_config
from battleline.training.pool import PoolEntry, TrainingEnv, build_pool

REPO = Path(__file__).resolve().parents[1]
QUICK = TRAINING_CONFIG_DIR / "quick.yaml"
SMOKE_TIMEOUT_S = 600


def _quick_data() -> dict[str, Any]:
    return yaml.safe_load(QUICK.read_text(encoding="utf-8"))


def _write(tmp_path: Path, data: dict[str, Any], name: str = "run.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------------- configs
@pytest.mark.parametrize("name", ["quick", "ppo_vs_scripted", "selfplay"])
def test_shipped_configs_validate(name: str) -> None:
    cfg = load_training_config(name)
    assert cfg.id == name
    assert cfg.final_timesteps % cfg.rollout_steps == 0 and cfg.final_timesteps >= cfg.total_timesteps
    assert cfg.scripted_opponents, "every shipped run evaluates against scripted opponents"


def test_quick_config_fits_ci() -> None:
    cfg = load_training_config("quick")
    assert 2000 <= cfg.total_timesteps <= 4096 and cfg.n_envs == 1
    assert cfg.checkpoint_every < cfg.total_timesteps


@pytest.mark.parametrize(
    ("change", "where", "words"),
    [
        ({"opponents": [{"agent": "napoleon"}]}, "opponents[0].agent", "unknown agent 'napoleon'"),
        ({"opponents": [{"agent": "random", "weight": 0}]}, "opponents[0].weight", "greater than 0"),
        ({"opponents": []}, "opponents", "at least 1"),
        ({"total_timesteps": -5}, "total_timesteps", "greater than or equal to 1"),
        ({"scenario": "atlantis"}, "scenario", "unknown scenario 'atlantis'"),
        ({"scenario": "maps/atlantis.yaml"}, "scenario",
         "scenario: file not found: maps/atlantis.yaml (a relative path is from the current directory)"),
        ({"armies": {"blue": ["elves_wind_host", "nope"]}}, "armies.blue", "unknown army list 'nope'"),
        ({"ppo": {"n_steps": 64, "batch_size": 128}}, None, "batch_size 128 is larger than a rollout"),
        ({"ppo": {"n_steps": 256, "batch_size": 3}}, None,
         "ppo.batch_size 3 leaves a mini-batch of 1 decision in each rollout (ppo.n_steps × n_envs = 256), whose "
         "normalised advantage is NaN and turns the policy's weights into NaN; use a batch size that divides 256"),
        ({"ppo": {"learning_rate": "fast"}}, "ppo.learning_rate", "valid number"),
        ({"learner_side": "green"}, "learner_side", "'random', 'blue' or 'red'"),
        ({"checkpoints_every": 10}, "checkpoints_every", "unknown field"),
        ({"total_timesteps": True}, "total_timesteps", "expected a number, got a boolean (true/false)"),
        ({"reward_shaping": True}, "reward_shaping", "expected a number, got a boolean (true/false)"),
        ({"ppo": {"net_arch": [True, 3]}}, "ppo.net_arch[0]", "valid integer, got True"),
        ({"ppo": {"net_arch": [10**11]}}, "ppo.net_arch", "layer widths from 1 to 65536"),
        ({"seed": 2**32}, "seed", "less than or equal to 4294967295"),
        ({"id": ".."}, "id", "'..' is not a name"),
        ({"vec_env": "threads"}, "vec_env", "Input should be 'dummy' or 'subproc', got 'threads'"),
    ],
)
def test_config_errors_are_one_line_naming_file_and_field(tmp_path: Path, change: dict[str, Any], where: str | None,
                                                          words: str) -> None:
    data = _quick_data()
    data.update(change)
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_training_config(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"{path}: ")
    if where:
        assert f": {where}: " in msg
    assert words in msg


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"ppo": {"learning_rate": "3e-4"}}, "ppo.learning_rate: Input should be a valid number, got the string "
                                             "'3e-4' (YAML reads an exponent as a number only with a '.' and a sign, "
                                             "e.g. 3.0e-4)"),
        ({"opponents": [{"agent": "random", "weight": "2"}]}, "opponents[0].weight: Input should be a valid number, "
                                                              "got the string '2'"),
        ({"planes": "no"}, "planes: Input should be a valid boolean, got the string 'no'"),
        ({"pairs": "yes"}, "pairs: Input should be a valid boolean, got the string 'yes'"),
    ],
)
def test_config_numbers_and_booleans_are_strict(tmp_path: Path, change: dict[str, Any], problem: str) -> None:
    """Text is no number and no boolean in a training config either (``learning_rate: 3e-4`` is text to YAML)."""
    path, message = _config_error(tmp_path, change)
    assert message == f"{path}: {problem}"


def _config_error(tmp_path: Path, change: dict[str, Any]) -> tuple[Path, str]:
    """The quick config with ``change`` written to a file, and the ConfigError its loading raises."""
    data = _quick_data()
    data.update(change)
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_training_config(path)
    return path, str(info.value)


def test_config_missing_field_and_bad_yaml(tmp_path: Path) -> None:
    data = _quick_data()
    del data["scenario"]
    with pytest.raises(ConfigError, match=r"run\.yaml: scenario: required field is missing$"):
        load_training_config(_write(tmp_path, data))
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\nopponents: [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.yaml: invalid YAML"):
        load_training_config(bad)
    with pytest.raises(ConfigError, match=r"nothing\.yaml: file not found"):
        load_training_config(tmp_path / "nothing.yaml")
    # a name is a shipped config: not "configs/training/nope.yaml: file not found", a file the user never gave
    with pytest.raises(ConfigError) as unknown:
        load_training_config("nope")
    assert str(unknown.value) == ("unknown training config 'nope'; shipped: bc_warm_start, ppo_vs_scripted, quick, selfplay "
                                  "(a config of your own: its YAML path)")


def test_cli_train_config_error_is_one_red_line(tmp_path: Path) -> None:
    data = _quick_data()
    data["n_envs"] = 0
    result = CliRunner().invoke(app, ["train", "--config", str(_write(tmp_path, data))])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and ": n_envs: " in lines[0]


def test_cli_train_flag_error_names_the_flag() -> None:
    result = CliRunner().invoke(app, ["train", "--config", str(QUICK), "--total-timesteps", "-5"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: --total-timesteps: Input should be greater than or equal to 1, got -5"


def test_cli_train_names_the_config_field_when_no_flag_was_given(tmp_path: Path) -> None:
    """A config's own total_timesteps or run_dir is named as FILE: field, not as the flag the user did not give."""
    data = _quick_data()
    data["total_timesteps"] = -5
    path = _write(tmp_path, data)
    result = CliRunner().invoke(app, ["train", "--config", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: {path}: total_timesteps: Input should be greater than or equal to 1, got -5"


@pytest.mark.parametrize("flag", [True, False])
def test_cli_train_run_dir_that_cannot_be_made_is_one_line(tmp_path: Path, flag: bool) -> None:
    """A run_dir under a file cannot be created: one line naming --run-dir or FILE: run_dir, nothing trained."""
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    data = _quick_data()
    run = blocker / "run"
    if not flag:
        data["run_dir"] = str(run)
    path = _write(tmp_path, data)
    result = CliRunner().invoke(app, ["train", "--config", str(path)] + (["--run-dir", str(run)] if flag else []))
    assert result.exit_code == 2
    label = "--run-dir" if flag else f"{path}: run_dir"
    assert result.output.strip() == f"error: {label} {run}: cannot create {run} (not a directory)"


def test_learning_benchmark_flag_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.learning import main

    with pytest.raises(SystemExit) as info:
        main(["--steps", "-5", "--out", "unused"])
    assert info.value.code == 2
    assert capsys.readouterr().err == "error: --steps: Input should be greater than or equal to 1, got -5\n"


def test_learning_benchmark_checks_minutes_and_final_eval_before_training(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.learning import main

    with pytest.raises(SystemExit) as info:
        main(["--minutes", "-1", "--out", "unused"])
    assert info.value.code == 2
    assert capsys.readouterr().err == "error: --minutes must be above 0, got -1\n"
    with pytest.raises(SystemExit) as info:
        main(["--final-eval", "nope=3", "--out", "unused"])
    assert info.value.code == 2
    assert capsys.readouterr().err.startswith("error: --final-eval: unknown agent 'nope'; known agents: random, ")
    with pytest.raises(SystemExit) as info:
        main(["--final-eval", "random=0", "--out", "unused"])
    assert info.value.code == 2
    assert capsys.readouterr().err == "error: --final-eval: 'random=0' is not OPPONENT=GAMES with GAMES >= 1\n"
    for bad in ("random=0", "pincers=2", "random=x", "random=inf"):
        with pytest.raises(SystemExit) as info:
            main(["--opponent-weight", bad, "--out", "unused"])
        assert info.value.code == 2
        assert capsys.readouterr().err == (f"error: --opponent-weight: '{bad}' is not OPPONENT=WEIGHT with OPPONENT one "
                                           f"of random, line_advance and WEIGHT a number above 0\n")


def test_learning_benchmark_opponent_weights() -> None:
    """``--opponent-weight``: the training pool's weights, 1 for each opponent not named."""
    from benchmarks.learning import _weight_spec

    assert _weight_spec([]) == {"random": 1.0, "line_advance": 1.0}
    assert _weight_spec(["random=3", "line_advance=0.5"]) == {"random": 3.0, "line_advance": 0.5}


def test_cli_resume_without_a_run_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["train", "--config", str(QUICK), "--run-dir", str(tmp_path / "r"), "--resume"])
    assert result.exit_code == 2
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "nothing to resume" in lines[0]


@pytest.mark.parametrize(("change", "where"), [
    ({"opponents": [{"agent": "random", "weight": float("inf")}]}, "opponents[0].weight"),
    ({"opponents": [{"agent": "random", "weight": float("nan")}]}, "opponents[0].weight"),
    ({"reward_shaping": float("inf")}, "reward_shaping"),
    ({"ppo": {"learning_rate": float("nan")}}, "ppo.learning_rate"),
    ({"imitation": {"learning_rate": float("inf")}}, "imitation.learning_rate"),
])
def test_config_floats_must_be_finite(tmp_path: Path, change: dict[str, Any], where: str) -> None:
    path, message = _config_error(tmp_path, change)
    assert message.startswith(f"{path}: {where}: must be a finite number")


def test_config_armies_on_a_placed_scenario_name_the_file_and_field(tmp_path: Path) -> None:
    data = _quick_data()
    data["armies"] = {"blue": ["men_marcher_host"]}
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_training_config(path)
    assert str(info.value) == (f"{path}: armies.blue: scenario 'skirmish_line' places its blue units explicitly "
                               f"(placements), so its army lists cannot be replaced")


@pytest.mark.parametrize("what", ["missing", "directory"])
def test_config_model_opponent_file_is_checked(tmp_path: Path, what: str) -> None:
    model = tmp_path / "nope.zip"
    if what == "directory":
        model.mkdir()
    data = _quick_data()
    data["opponents"] = [{"agent": "random"}, {"agent": f"model:{model}"}]
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as info:
        load_training_config(path)
    problem = f"model file not found: {model}" if what == "missing" else f"{model} is a directory, not a model file"
    assert str(info.value).startswith(f"{path}: opponents[1].agent: {problem}")


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished quick.yaml run of one rollout (256 steps, 3 unit slots a side): its run directory."""
    import io

    from rich.console import Console

    from battleline.training.train import train

    run = tmp_path_factory.mktemp("quick_run") / "run"
    train(load_training_config(QUICK, {"run_dir": str(run), "total_timesteps": 1}), console=Console(file=io.StringIO()),
          progress=False)
    return run


@pytest.mark.parametrize(("scenario", "problem"), [
    ("gate_assault", "the model has 3 unit slots a side and no siege orders but scenario 'gate_assault' is a siege "
                     "with 10 castle elements"),
    ("pitched_battle", "the model has 3 unit slots a side but scenario 'pitched_battle' fields up to 10 units a side"),
])
def test_config_model_opponent_must_fit_the_scenario(tmp_path: Path, quick_run: Path, scenario: str,
                                                     problem: str) -> None:
    model = quick_run / "model.zip"
    data = _quick_data()
    data.update(scenario=scenario, opponents=[{"agent": f"model:{model}"}])
    path = _write(tmp_path, data)
    result = CliRunner().invoke(app, ["train", "--config", str(path), "--run-dir", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: {path}: opponents[0].agent: model:{model}: {problem}"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("ppo", "message"), [
    ({"net_arch": [32, 32]}, "'ppo.net_arch' differs (run: [64, 64], config: [32, 32])"),
    ({"policy": "unit_pairs"}, "'ppo.policy' differs (run: mlp, config: unit_pairs)"),
    ({"mask_features": True}, "'ppo.mask_features' differs (run: false, config: true)"),
    ({"embed_dim": 32}, "'ppo.embed_dim' differs (run: 64, config: 32)"),
    ({"n_steps": 128}, "'ppo.n_steps' differs (run: 256, config: 128)"),
])
def test_resume_refuses_a_changed_network(tmp_path: Path, quick_run: Path, ppo: dict[str, Any], message: str) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(quick_run, run)
    before = (run / "config.json").read_bytes()
    data = _quick_data()
    data["ppo"].update(ppo)
    result = CliRunner().invoke(app, ["train", "--config", str(_write(tmp_path, data)), "--run-dir", str(run),
                                      "--resume", "--total-timesteps", "512"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().startswith(f"error: cannot resume: {message}")
    assert (run / "config.json").read_bytes() == before


def test_resume_reads_a_field_the_run_predates_as_its_default(tmp_path: Path, quick_run: Path) -> None:
    """A run made before ``pairs`` and ``ppo.embed_dim`` existed (no such keys in its config.json) resumes with
    their defaults (it was refused: "'pairs' differs (run: (none), config: false)")."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(quick_run, run)
    saved = json.loads((run / "config.json").read_text(encoding="utf-8"))
    del saved["pairs"], saved["ppo"]["embed_dim"]
    (run / "config.json").write_text(json.dumps(saved), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", "--config", str(_write(tmp_path, _quick_data())), "--run-dir", str(run),
                                      "--resume", "--total-timesteps", "512"])
    assert result.exit_code == 0, result.output
    assert json.loads((run / "state.json").read_text(encoding="utf-8"))["num_timesteps"] == 512


def test_tournament_with_a_model_entrant_on_two_workers_finishes(tmp_path: Path, quick_run: Path) -> None:
    """A ``model:PATH`` entrant on a two-process pool: the workers used to hang forever in torch's OpenMP pool,
    forked after the parent had run the policy (training.backends.START_METHOD)."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "battleline.training.cli", "tournament", "--scenario", "skirmish_line", "--agents",
           f"model:{quick_run / 'model.zip'},line_advance", "--games-per-pair", "2", "--workers", "2",
           "--out", str(tmp_path / "t")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "t" / "results.json").read_text())["games"] == 2


def _damage_state(run: Path, text: str) -> str:
    (run / "state.json").write_text(text, encoding="utf-8")
    return str(run / "state.json")


def _damage_state_field(run: Path, key: str, value: Any) -> str:
    state = json.loads((run / "state.json").read_text(encoding="utf-8"))
    state[key] = value
    return _damage_state(run, json.dumps(state))


def _damage_checkpoint(run: Path, data: bytes) -> str:
    ckpt = run / json.loads((run / "state.json").read_text(encoding="utf-8"))["checkpoint"]
    ckpt.write_bytes(data)
    return f"checkpoint {ckpt}"


def _zip_without_a_model() -> bytes:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("junk", "x")
    return buf.getvalue()


@pytest.mark.parametrize(("damage", "problem"), [
    (lambda run: _damage_state(run, '{"version": 1, "num_timesteps'), ": not valid JSON ("),
    (lambda run: _damage_state(run, "[]"), ": not the run's resumable state (expected a JSON object, got list)"),
    (lambda run: _damage_state(run, '{"version": 1}'), ": not the run's resumable state (missing 'checkpoint', "),
    (lambda run: _damage_state_field(run, "stats", 5), ": not the run's resumable state (bad 'stats': "),
    (lambda run: _damage_state_field(run, "snapshots", ["pool/x.zip"]),
     ": not the run's resumable state (bad 'snapshots.0': "),
    (lambda run: _damage_state_field(run, "num_timesteps", True),
     ": not the run's resumable state (bad 'num_timesteps': Input should be a valid integer"),
    (lambda run: _damage_checkpoint(run, b""), ": not a model checkpoint (not a zip file)"),
    (lambda run: _damage_checkpoint(run, _zip_without_a_model()), ": not a readable model checkpoint ("),
    (lambda run: (run / "config.json").unlink() or str(run / "config.json"), " not found (the run's config)"),
])
def test_resume_of_a_damaged_run_is_one_line_naming_the_file(tmp_path: Path, quick_run: Path, damage: Any,
                                                             problem: str) -> None:
    import shutil

    run = tmp_path / "run"
    shutil.copytree(quick_run, run)
    shown = damage(run)
    result = CliRunner().invoke(app, ["train", "--config", str(QUICK), "--run-dir", str(run), "--resume",
                                      "--total-timesteps", "512"])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot resume: {shown}{problem}"), result.output


# ---------------------------------------------------------------------- policy features
def test_policy_reads_every_observation_key_but_the_mask() -> None:
    """The default extractor concatenates units and globals only; ``mask_features`` keeps SB3's (mask included)."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.torch_layers import CombinedExtractor

    from battleline.training.features import MaskFreeExtractor
    from battleline.training.train import policy_kwargs

    env = BattleEnv("skirmish_line", opponent="random")
    space = env.observation_space
    units, globals_ = int(np.prod(space["units"].shape)), int(space["globals"].shape[0])
    ppo = load_training_config(_quick_data()).ppo
    model = MaskablePPO("MultiInputPolicy", env, n_steps=8, batch_size=8, policy_kwargs=policy_kwargs(ppo), device="cpu")
    extractor = model.policy.features_extractor
    assert isinstance(extractor, MaskFreeExtractor) and extractor.features_dim == units + globals_
    obs, _ = env.reset(seed=1)
    batch = {k: torch.as_tensor(v[None]) for k, v in obs.items()}
    features = extractor(batch)
    assert features.shape == (1, units + globals_)
    expected = np.concatenate([obs["globals"], obs["units"].ravel()])  # sorted keys: globals, units
    np.testing.assert_allclose(features[0].numpy(), expected)
    assert not ppo.mask_features
    with_mask = ppo.model_copy(update={"mask_features": True})
    assert policy_kwargs(with_mask) == {"net_arch": list(ppo.net_arch), "optimizer_kwargs": {"eps": 1e-5, "fused": True}}
    full = MaskablePPO("MultiInputPolicy", env, n_steps=8, batch_size=8, policy_kwargs=policy_kwargs(with_mask),
                       device="cpu")
    assert isinstance(full.policy.features_extractor, CombinedExtractor)
    assert full.policy.features_extractor.features_dim == units + globals_ + env.action_space.n


@pytest.mark.parametrize("policy", ["mlp", "unit_pairs", "factored"])
def test_every_policy_learns_with_sb3s_adam_eps_in_torchs_fused_kernel_and_keeps_it_saved(
        tmp_path: Path, policy: str) -> None:
    """SB3's default Adam ``eps`` (1e-5) stays; the fused kernel is asked for; a saved model loads with the same
    optimizer settings and state and learns on."""
    import torch
    from sb3_contrib import MaskablePPO

    from battleline.training.config import PPOConfig
    from battleline.training.train import optimizer_kwargs, policy_class, policy_kwargs

    assert optimizer_kwargs() == {"eps": 1e-5, "fused": True}  # torch 2.13 (constraints.txt) has the fused kernel
    ppo = PPOConfig(policy=policy, embed_dim=16, net_arch=[16], attention_heads=2)
    env = BattleEnv("skirmish_line", opponent="random")
    model = MaskablePPO(policy_class(ppo), env, n_steps=8, batch_size=8, n_epochs=1, seed=1, device="cpu",
                        policy_kwargs=policy_kwargs(ppo, (72.0, 48.0)))
    group = model.policy.optimizer.param_groups[0]
    assert isinstance(model.policy.optimizer, torch.optim.Adam)
    assert group["eps"] == 1e-5 and group["fused"] is True
    model.learn(8)
    model.save(tmp_path / "m.zip")
    loaded = MaskablePPO.load(tmp_path / "m.zip", env=env, device="cpu")
    loaded_group = loaded.policy.optimizer.param_groups[0]
    assert loaded_group["eps"] == 1e-5 and loaded_group["fused"] is True
    saved, restored = model.policy.optimizer.state_dict()["state"], loaded.policy.optimizer.state_dict()["state"]
    assert saved.keys() == restored.keys()
    assert all(torch.equal(saved[i]["exp_avg_sq"], restored[i]["exp_avg_sq"]) for i in saved)
    loaded.learn(8, reset_num_timesteps=False)
    assert loaded.num_timesteps == 16


# ---------------------------------------------------------------------- pool and wrapper
def test_pool_shares_the_self_weight_among_the_latest_snapshots() -> None:
    data = _quick_data()
    data["opponents"] = [{"agent": "random", "weight": 1}, {"agent": "self", "weight": 2}]
    data["self_play"] = {"max_snapshots": 2}
    cfg = load_training_config(data)
    assert [e.label for e in build_pool(cfg, [])] == ["random"]
    pool = build_pool(cfg, [(0, "a.zip"), (100, "b.zip"), (200, "c.zip")])
    assert [(e.label, e.group, e.kind, e.spec, e.weight) for e in pool] == [
        ("random", "random", "agent", "random", 1.0),
        ("self@100", "self", "model", "b.zip", 1.0),
        ("self@200", "self", "model", "c.zip", 1.0),
    ]


def _vec_rollout(vec_env: Any, steps: int) -> list[Any]:
    """What ``steps`` random masked steps of an SB3 VecEnv return (seeded actions), after its reset with seed 5."""
    from sb3_contrib.common.maskable.utils import get_action_masks

    rng = np.random.default_rng(0)
    vec_env.seed(5)  # as training seeds them: sub-env i from 5 + i
    out: list[Any] = [dict(vec_env.reset())]
    for _ in range(steps):
        masks = get_action_masks(vec_env)
        obs, rewards, dones, infos = vec_env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        # the values, not SB3's containers (DummyVecEnv: an OrderedDict and float32 rewards; SubprocVecEnv: float64)
        out.append((dict(obs), rewards.astype(np.float64), dones, [info["legal_count"] for info in infos]))
    vec_env.close()
    return out


def test_vec_env_dummy_runs_n_envs_in_one_process_like_subproc() -> None:
    """``vec_env: dummy`` (the default) steps ``n_envs`` battles in the learner's process; the rollouts are
    those of ``subproc`` (one worker process each), so the choice changes speed only."""
    from gymnasium.utils.env_checker import data_equivalence
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from battleline.training.train import make_vec_env

    data = {**_quick_data(), "n_envs": 2}
    pool, slots = build_pool(load_training_config(data), []), scenario_unit_slots(data["scenario"])
    dummy = make_vec_env(load_training_config(data), pool, slots)  # the default
    subproc = make_vec_env(load_training_config({**data, "vec_env": "subproc"}), pool, slots)
    one = make_vec_env(load_training_config({**data, "n_envs": 1, "vec_env": "subproc"}), pool, slots)
    assert isinstance(dummy, DummyVecEnv) and isinstance(subproc, SubprocVecEnv) and isinstance(one, DummyVecEnv)
    assert dummy.num_envs == subproc.num_envs == 2 and one.num_envs == 1
    one.close()
    got = _vec_rollout(dummy, 8)
    units = [np.stack([step[0]["units"][i] for step in got[1:]]) for i in (0, 1)]
    assert not data_equivalence(units[0], units[1])  # two battles of their own
    assert data_equivalence(got, _vec_rollout(subproc, 8))


def test_training_env_draws_opponents_and_delivers_the_outcome_once() -> None:
    pool = [PoolEntry("random", "random", "agent", "random", 3.0), PoolEntry("line_advance", "line_advance", "agent",
                                                                               "line_advance", 1.0)]
    env = TrainingEnv(BattleEnv(scenario="skirmish_line", illegal_action="penalise"), pool, seed=0)
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    groups, sides, orders = set(), set(), set()
    for _ in range(6):
        done = False
        rewards: list[float] = []
        while not done:
            mask = env.action_masks()
            _, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            rewards.append(r)
            orders.add(info["order"])
            done = term or trunc
        assert term and info["outcome_rewards"] == 1 and info["return_matches_outcome"]
        assert all(r == 0.0 for r in rewards[:-1]) and rewards[-1] == info["episode_return"]
        groups.add(info["opponent_group"])
        sides.add(info["learner_side"])
        env.reset()
    assert groups <= {"random", "line_advance"} and sides == {"blue", "red"}
    assert all(kind != "invalid" for _, kind in orders)
    # an illegal index is penalised, counted, and is not an outcome
    mask = env.action_masks()
    bad = int(np.flatnonzero(~mask)[0])
    _, r, term, _, info = env.step(bad)
    assert info["illegal"] and r == -1.0 and not term and "order" not in info


# ---------------------------------------------------------------------- the smoke run
def _state(run: Path) -> dict[str, Any] | None:
    try:
        return json.loads((run / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "battleline.training.cli", *args]


def _stop_after_checkpoint(
    args: list[str], run: Path, after: int, sig: int, env: dict[str, str]
) -> tuple[int, str, int]:
    """Start ``battleline train ARGS``, send ``sig`` once state.json holds a checkpoint beyond step ``after``.

    Returns (checkpoint step when stopped, output, exit code).
    """
    proc = subprocess.Popen(_cli("train", *args), cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    stopped_at, t0 = None, time.perf_counter()
    try:
        while time.perf_counter() - t0 < SMOKE_TIMEOUT_S and proc.poll() is None:
            state = _state(run)
            if state and state["num_timesteps"] > after:
                proc.send_signal(sig)
                stopped_at = state["num_timesteps"]
                break
            time.sleep(0.2)
        out = proc.communicate(timeout=120)[0]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert stopped_at is not None, f"no checkpoint after step {after} before the process ended:\n{out[-3000:]}"
    return stopped_at, out, proc.returncode


def _smoke_run(run: Path) -> dict[str, Any]:
    """Train quick.yaml in subprocesses: SIGKILL after the first checkpoint, resume, Ctrl-C (SIGINT) after the
    next checkpoint, resume again to the end."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_NUM_THREADS": "1"}
    args = ["--config", str(QUICK), "--run-dir", str(run), "--no-progress"]
    t0 = time.perf_counter()
    killed_at, _, _ = _stop_after_checkpoint(args, run, 0, signal.SIGKILL, env)
    killed_state = _state(run)
    interrupted_at, out, code = _stop_after_checkpoint(args + ["--resume"], run, killed_at, signal.SIGINT, env)
    assert code == 130, out[-3000:]
    assert "the last checkpoint is at step" in out and "continue with --resume" in out
    last = subprocess.run(_cli("train", *args, "--resume"), cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=SMOKE_TIMEOUT_S)
    seconds = time.perf_counter() - t0
    assert last.returncode == 0, last.stdout[-3000:] + last.stderr[-3000:]
    print(f"\nsmoke run: killed at step {killed_at}, interrupted after step {interrupted_at}, "
          f"finished in {seconds:.1f} s in all")
    return {"run": run, "killed_at": killed_at, "killed_state": killed_state, "interrupted_at": interrupted_at,
            "output": last.stdout, "seconds": seconds}


@pytest.mark.filterwarnings("ignore:Tight layout not applied")  # the heatmap of a long model:PATH name
def test_smoke_run_killed_resumed_charted_and_played(tmp_path: Path) -> None:
    """One test (one training run, even under pytest-xdist): train, kill, resume; check the step count, the
    reward audit, the TensorBoard charts, and that the model plays with masks at prediction."""
    smoke_run = _smoke_run(tmp_path / "run")
    _check_resumed_run(smoke_run)
    _check_tensorboard_charts(smoke_run)
    _check_model_plays_with_masks_at_prediction(smoke_run)


def _check_resumed_run(smoke_run: dict[str, Any]) -> None:
    run = smoke_run["run"]
    cfg = load_training_config(QUICK)
    state = _state(run)
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert smoke_run["killed_state"]["finished"] is False
    assert 0 < smoke_run["killed_at"] < cfg.final_timesteps
    assert smoke_run["killed_at"] < smoke_run["interrupted_at"]
    resumed = summary["resumed_from"]
    assert smoke_run["interrupted_at"] <= resumed < cfg.final_timesteps and resumed % cfg.checkpoint_every == 0
    assert state["finished"] and state["num_timesteps"] == summary["num_timesteps"] == cfg.final_timesteps
    assert summary["session_steps"] == cfg.final_timesteps - resumed
    assert state["resumes"] == 2
    meta = json.loads((run / "model.json").read_text(encoding="utf-8"))
    assert meta["num_timesteps"] == cfg.final_timesteps and meta["scenario"] == "skirmish_line"
    assert (run / "model.zip").is_file()
    assert len(list((run / "checkpoints").glob("step_*.zip"))) <= cfg.keep_checkpoints
    # illegal actions stay at zero; the win/draw/loss reward came exactly once per finished episode
    assert summary["illegal_actions"] == 0 and summary["eval_illegal_actions"] == 0
    assert summary["terminated_episodes"] > 0
    assert summary["outcome_rewards"] == summary["terminated_episodes"]
    assert summary["return_mismatches"] == 0
    assert "illegal actions: 0" in smoke_run["output"]
    evaluations = [json.loads(ln) for ln in (run / "evaluations.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evaluations] == sorted({e["step"] for e in evaluations})


def _check_tensorboard_charts(smoke_run: dict[str, Any]) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run = smoke_run["run"]
    assert len(list((run / "tb").glob("events.out.tfevents.*"))) >= 3, "one event file per session, same folder"
    acc = EventAccumulator(str(run / "tb"), size_guidance={"scalars": 0, "images": 0, "histograms": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    scalars = set(tags["scalars"])
    for tag in ("games/win_rate/random", "games/win_rate/line_advance", "games/win_rate", "games/vp_diff",
                "games/episode_length", "checks/illegal_actions", "checks/outcome_rewards_per_episode",
                "eval/win_rate/random", "eval/win_rate/line_advance", "eval/draw_rate/random", "eval/vp_diff/random",
                "eval/rating_mu", "eval/rating_ordinal", "checks/eval_illegal_actions", "train/value_loss"):
        assert tag in scalars, f"missing scalar {tag}"
    assert any(t.startswith("orders/share/") for t in scalars)
    assert any(t.startswith("orders/") for t in tags["histograms"])
    assert {"battle/deployment", "battle/final"} <= set(tags["images"])
    assert any(t.startswith("battle/key_events") for t in tags["tensors"])
    final = load_training_config(QUICK).final_timesteps
    steps = [e.step for e in acc.Scalars("games/episode_length")]
    assert steps == sorted(set(steps)), "points logged after the last checkpoint are purged on resume"
    assert steps[-1] == final
    assert all(e.value == 0 for e in acc.Scalars("checks/illegal_actions"))
    assert all(e.value == 0 for e in acc.Scalars("checks/eval_illegal_actions"))
    assert all(e.value == 1.0 for e in acc.Scalars("checks/outcome_rewards_per_episode"))
    image = acc.Images("battle/final")[-1]
    assert image.width > 100 and image.height > 100
    from battleline.training.callbacks import _fingerprint_fn

    fp = _fingerprint_fn()
    if fp is not None:
        try:
            from battleline.training.play import play_battle

            works = bool(fp([play_battle("skirmish_line", "random", "random", 0)], 0))
        except Exception:  # noqa: BLE001 - the detectors are optional and may be mid-change
            works = False
        if works:
            assert any(t.startswith("tactics/") for t in scalars)


def _check_model_plays_with_masks_at_prediction(smoke_run: dict[str, Any]) -> None:
    """1,000+ decisions of model:PATH in evaluation games, none illegal; play and tournament accept it too."""
    from battleline.agents.learned import PolicyAgent
    from battleline.agents.registry import make_agent
    from battleline.training.evaluate import evaluate_model
    from battleline.training.tournament import run_tournament

    model = smoke_run["run"] / "model.zip"
    agent = make_agent(f"model:{model}", seed=1)
    assert isinstance(agent, PolicyAgent)
    report = evaluate_model(model, ["random", "line_advance"], games=2)
    assert report["scenario"] == "skirmish_line" and report["illegal_actions"] == 0
    from battleline.agents.learned import ModelLoadError

    with pytest.raises(ModelLoadError, match="3 unit slots a side but scenario 'pitched_battle'"):
        evaluate_model(model, ["random"], games=1, scenario="pitched_battle")
    decisions = report["decisions"]
    games = 0
    from battleline.training.evaluate import play_evaluation

    sampled = PolicyAgent(model, deterministic=False, seed=5)
    while agent.decisions + sampled.decisions + decisions < 1000:
        play_evaluation(agent, ["random"], 2, "skirmish_line", seed=100 + games)
        play_evaluation(sampled, ["pincers"], 2, "skirmish_line", seed=200 + games)
        games += 4
    assert agent.decisions + sampled.decisions + decisions >= 1000
    assert agent.illegal == 0 and sampled.illegal == 0

    runner = CliRunner()
    out = smoke_run["run"] / "cli"
    result = runner.invoke(app, ["evaluate", "--model", str(model), "--opponents", "random", "--games", "2",
                                 "--out", str(out / "eval.json")])
    assert result.exit_code == 0, result.output
    assert "illegal actions: 0" in result.output
    assert json.loads((out / "eval.json").read_text())["opponents"]["random"]["games"] == 2
    result = runner.invoke(app, ["play", "--scenario", "skirmish_line", "--blue", f"model:{model}", "--red",
                                 "line_advance", "--seed", "3"])
    assert result.exit_code == 0, result.output
    results = run_tournament("skirmish_line", [f"model:{model}", "random"], 2, 0, out / "t", workers=1)
    assert results["games_failed"] == 0


def test_evaluate_cli_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["evaluate", "--model", str(tmp_path / "none.zip")])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "model file not found" in result.output
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    result = runner.invoke(app, ["evaluate", "--model", str(junk)])
    assert result.exit_code == 2 and result.output.startswith("error: ") and "not a MaskablePPO model" in result.output


@pytest.mark.parametrize(("text", "problem"), [
    ("[1]", "expected a JSON object, got list"),
    ("{bad", "not valid JSON ("),
    ('{"scenario": 5}', "scenario: unknown scenario 5 (give the model's scenario with --scenario)"),
    ('{"scenario": "nope"}', "scenario: unknown scenario 'nope' (give the model's scenario with --scenario)"),
])
def test_evaluate_names_a_damaged_model_json(tmp_path: Path, quick_run: Path, text: str, problem: str) -> None:
    """The model.json beside a model tells evaluate its scenario; damaged, it is named in one line (no traceback,
    no silent fall-back to pitched_battle); with --scenario it is not read."""
    import shutil

    model = tmp_path / "model.zip"
    shutil.copy(quick_run / "model.zip", model)
    (tmp_path / "model.json").write_text(text, encoding="utf-8")
    result = CliRunner().invoke(app, ["evaluate", "--model", str(model), "--opponents", "random", "--games", "2"])
    assert result.exit_code == 2
    assert " ".join(result.output.split()).startswith(f"error: {tmp_path / 'model.json'}: {problem}")
    result = CliRunner().invoke(app, ["evaluate", "--model", str(model), "--opponents", "random", "--games", "2",
                                      "--scenario", "skirmish_line"])
    assert result.exit_code == 0, result.output


def test_key_events_and_deployment_snapshot() -> None:
    from battleline.training.evaluate import deployment_battle, key_events
    from battleline.training.play import play_battle

    battle = play_battle("skirmish_line", "line_advance", "pincers", seed=5)
    text = key_events(battle)
    lines = text.splitlines()
    assert lines[-1].startswith("- result: ") and all(ln.startswith("- T") for ln in lines[:-1])
    assert all(a != b for a, b in zip(lines, lines[1:]))
    opening = deployment_battle(battle)  # no deployment in skirmish_line: the opening position
    assert opening.actions == [] and opening.state.turn == 1


def test_ctrl_c_during_the_warm_start_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the expert is being cloned: one yellow line, exit 130, and the run can start over."""
    import battleline.training.imitation as imitation_module

    def interrupted(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise KeyboardInterrupt

    monkeypatch.setattr(imitation_module, "warm_start", interrupted)
    data = _quick_data()
    data["imitation"] = {"episodes": 1, "epochs": 1}
    data["run_dir"] = str(tmp_path / "run")
    result = CliRunner().invoke(app, ["train", "--config", str(_write(tmp_path, data)), "--no-progress"])
    assert result.exit_code == 130
    assert " ".join(result.output.split()).endswith("interrupted during the imitation warm start; no checkpoint "
                                                    "was written yet: run the same command again to start over")
    assert not (tmp_path / "run" / "state.json").exists()


def test_ctrl_c_stops_training_at_the_next_step_and_a_second_one_at_once() -> None:
    """SIGINT only raises the flag of InterruptCallback; its next step raises KeyboardInterrupt (never lost in a
    finaliser); a second SIGINT raises at once; the previous handler is restored afterwards."""
    import os
    import signal as sig

    from battleline.training.callbacks import InterruptCallback

    callback = InterruptCallback()
    before = sig.getsignal(sig.SIGINT)
    with callback.installed():
        assert callback._on_step() is True
        os.kill(os.getpid(), sig.SIGINT)
        time.sleep(0.05)  # the handler runs at the next bytecode boundary
        assert callback.requested is True
        with pytest.raises(KeyboardInterrupt):
            callback._on_step()
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), sig.SIGINT)
            time.sleep(0.05)
    assert sig.getsignal(sig.SIGINT) is before


def test_a_check_across_fields_keeps_the_file_when_flags_are_given(tmp_path: Path) -> None:
    """A file's cross-field fault names the file even when the command line set other fields (``--run-dir``);
    it names the flags instead only where a flag set what the message names."""
    data = _quick_data()
    data["ppo"] = {**data.get("ppo", {}), "n_steps": 256, "batch_size": 3}
    data["n_envs"] = 1
    path = _write(tmp_path, data)
    with pytest.raises(ConfigError) as err:
        load_training_config(path, overrides={"seed": 5}, flags={"seed": "--seed"})
    assert str(err.value).startswith(f"{path}: ppo.batch_size 3 leaves a mini-batch of 1 decision in each rollout "
                                     "(ppo.n_steps × n_envs = 256)")
    with pytest.raises(ConfigError) as err:
        load_training_config(path, flags={"ppo.batch_size": "--batch-size"})
    assert str(err.value).startswith(f"{path}: --batch-size 3 leaves a mini-batch")
