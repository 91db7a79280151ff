"""Training-run configuration: the pydantic model of ``configs/training/*.yaml`` and its loader.

A training run (``battleline train --config FILE``) trains one MaskablePPO
learner on one scenario against a weighted pool of opponents. Units: steps are
learner decisions (environment steps, summed over the vectorised envs);
``reward_shaping`` is the weight ``w`` of :class:`env.battle_env.BattleEnv`'s
VP-difference shaping (dimensionless, 0 = win/draw/loss reward only).

Errors are :class:`env.rules.config.ConfigError`: one line
``<file>: <field path>: <problem>``, like the game-data configs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, StrictInt, field_validator, model_validator

from battleline.env.rules.config import (
    CONFIG_DIR,
    REPO_ROOT,
    ConfigError,
    ConfigModel,
    display_path,
    is_scenario,
    list_armies,
    list_scenarios,
    parse,
    read_yaml,
)

TRAINING_CONFIG_DIR: Path = CONFIG_DIR / "training"
"""The repository's ``configs/training/`` folder."""

SELF = "self"
"""Opponent name for frozen past checkpoints of the learner (self-play)."""

MAX_SEED = 2**32 - 1
"""The largest ``seed`` (NumPy and SB3 seed with 32-bit unsigned integers)."""

MAX_LAYER_WIDTH = 65_536
"""The widest hidden layer ``ppo.net_arch`` may ask for (wider layers do not fit in memory next to a 5,704-action head)."""


# Every training-config model is a ConfigModel, as the rules' config files are (unknown fields, non-finite floats,
# YAML booleans given for numbers and text given for numbers or booleans are errors; ``5.0`` is no integer).


class OpponentConfig(ConfigModel):
    """One entry of the opponent pool.

    Attributes:
        agent: a registered agent name (``agents.registry.AGENT_NAMES``),
            ``model:PATH`` (a saved policy) or ``self`` (the learner's own frozen
            checkpoints, see :class:`SelfPlayConfig`).
        weight: relative probability of drawing this entry for an episode (finite, > 0).
    """

    agent: str
    weight: float = Field(1.0, gt=0)

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, v: str) -> str:
        from battleline.agents.registry import AGENT_NAMES, MODEL_PREFIX

        if v == SELF or v in AGENT_NAMES:
            return v
        if v.startswith(MODEL_PREFIX) and v[len(MODEL_PREFIX):]:
            from battleline.agents.learned import model_file_problem

            problem = model_file_problem(v[len(MODEL_PREFIX):])
            if problem is not None:
                raise ValueError(problem)
            return v
        raise ValueError(f"unknown agent '{v}'; known agents: {', '.join(AGENT_NAMES)}, self, model:PATH")


class ArmiesConfig(ConfigModel):
    """Army lists drawn per episode for each seat (ids in ``configs/armies``); empty = the scenario's own."""

    blue: list[str] = Field(default_factory=list)
    red: list[str] = Field(default_factory=list)

    @field_validator("blue", "red")
    @classmethod
    def _known_armies(cls, v: list[str]) -> list[str]:
        known = list_armies()
        for army in v:
            if army not in known:
                raise ValueError(f"unknown army list '{army}'; known: {', '.join(known)}")
        return v


class PPOConfig(ConfigModel):
    """MaskablePPO hyper-parameters (sb3-contrib names and meanings).

    ``n_steps`` is per environment: one rollout holds ``n_steps * n_envs``
    steps; ``net_arch`` lists the hidden layer widths shared by the policy and
    value networks (MultiInputPolicy over the Dict observation).
    ``policy`` picks the network: ``mlp`` (that MLP over the flattened
    observation) or ``unit_pairs`` (:class:`training.unit_pairs.UnitPairPolicy`:
    shared unit and unit-pair embeddings of width ``embed_dim``, one logit head
    per action block; ``net_arch`` is then its value MLP) or ``factored``
    (:class:`training.factored.FactoredPolicy`: a transformer encoder of
    ``attention_layers`` layers and ``attention_heads`` heads over the unit
    slots, tokens of width ``embed_dim`` (a multiple of ``attention_heads``),
    then the unit, the order kind and the target chosen in turn, each with
    an exact mask; ``net_arch`` is then its value MLP).
    ``mask_features`` feeds the observation's ``action_mask`` to the networks
    as input as well (SB3's ``CombinedExtractor``); by default the networks see
    every other key only (:class:`training.features.MaskFreeExtractor`), since
    the mask is applied to the logits anyway.
    """

    learning_rate: float = Field(3e-4, gt=0)
    n_steps: StrictInt = Field(512, ge=8)
    batch_size: StrictInt = Field(64, ge=2)
    n_epochs: StrictInt = Field(4, ge=1)
    gamma: float = Field(0.99, gt=0, le=1)
    gae_lambda: float = Field(0.95, ge=0, le=1)
    clip_range: float = Field(0.2, gt=0)
    ent_coef: float = Field(0.01, ge=0)
    vf_coef: float = Field(0.5, ge=0)
    max_grad_norm: float = Field(0.5, gt=0)
    net_arch: list[StrictInt] = Field(default_factory=lambda: [128, 128])
    mask_features: bool = False
    policy: Literal["mlp", "unit_pairs", "factored"] = "mlp"
    embed_dim: StrictInt = Field(64, ge=4, le=4096)
    attention_layers: StrictInt = Field(2, ge=1, le=16)
    attention_heads: StrictInt = Field(4, ge=1, le=64)

    @field_validator("net_arch")
    @classmethod
    def _positive_layers(cls, v: list[int]) -> list[int]:
        if not v or any(w < 1 or w > MAX_LAYER_WIDTH for w in v):
            raise ValueError(f"must be a non-empty list of layer widths from 1 to {MAX_LAYER_WIDTH}")
        return v

    @model_validator(mode="after")
    def _heads_divide_width(self) -> PPOConfig:
        if self.policy == "factored" and self.embed_dim % self.attention_heads:
            raise ValueError(f"embed_dim {self.embed_dim} is not a multiple of attention_heads {self.attention_heads} "
                             f"(each attention head reads an equal share of a token)")
        if self.policy == "factored" and self.mask_features:
            raise ValueError("mask_features: the factored policy reads the mask only to mask its three heads, "
                             "never as an input (set mask_features: false)")
        return self


class SelfPlayConfig(ConfigModel):
    """How frozen checkpoints of the learner join the pool (used when an opponent is ``self``).

    Attributes:
        snapshot_every: steps between frozen snapshots (the initial policy is the first).
        max_snapshots: the most recent snapshots kept in the pool.
        deterministic: frozen selves play their most likely action (else they sample).
    """

    snapshot_every: StrictInt = Field(20_000, ge=1)
    max_snapshots: StrictInt = Field(5, ge=1)
    deterministic: bool = False


class ImitationConfig(ConfigModel):
    """Behaviour-cloning warm start before PPO (:mod:`training.imitation`); absent = off.

    Attributes:
        expert: the registered agent whose decisions are cloned (e.g. ``line_advance``).
        episodes: games the expert plays in the learner's seat (opponents drawn from the pool).
        epochs: passes of masked cross-entropy over the recorded decisions.
        batch_size: decisions per minibatch.
        learning_rate: Adam step size of the cloning optimiser.
        value: also fit the value head to the recorded discounted returns.
        dagger_rounds: after the first cloning, rounds of DAgger: the cloned policy plays
            ``dagger_episodes`` games, the expert labels every state it reached, and the policy
            is cloned again (``epochs`` passes) on all decisions gathered so far (0 = plain cloning).
        dagger_episodes: games the policy plays in each DAgger round.
        any_order: label each decision with every order the expert would give next in any
            order of its units (its units' moves, volleys, charges; see
            ``ScriptedAgent.acceptable_actions``) rather than only the one it gives first.
    """

    expert: str = "line_advance"
    episodes: StrictInt = Field(20, ge=1)
    epochs: StrictInt = Field(10, ge=1)
    batch_size: StrictInt = Field(64, ge=1)
    learning_rate: float = Field(1e-3, gt=0)
    value: bool = True
    dagger_rounds: StrictInt = Field(0, ge=0)
    dagger_episodes: StrictInt = Field(10, ge=1)
    any_order: bool = True

    @field_validator("expert")
    @classmethod
    def _registered_agent(cls, v: str) -> str:
        from battleline.agents.registry import AGENT_NAMES

        if v not in AGENT_NAMES:
            raise ValueError(f"unknown expert '{v}'; known agents: {', '.join(AGENT_NAMES)}")
        return v


class TrainingConfig(ConfigModel):
    """One training run (``configs/training/<id>.yaml``).

    Attributes:
        id: the run's name (the default run directory is ``runs/<id>``).
        scenario: a scenario name in ``configs/scenarios`` or a YAML path.
        opponents: the opponent pool, drawn per episode by weight.
        learner_side: the learner's seat: ``random`` (drawn per episode), ``blue`` or ``red``.
        armies: army lists drawn per episode per seat.
        total_timesteps: learner steps to train (rounded up to whole rollouts).
        n_envs: environments stepped together (each rollout step is one step of each).
        vec_env: how the ``n_envs`` environments run: ``dummy`` (SB3's ``DummyVecEnv``: all of them in the
            learner's process, one after the other; the default, measured faster on two cores, see
            docs/training.md) or ``subproc`` (``SubprocVecEnv``: each in a worker process of its own when
            ``n_envs`` > 1, for machines with a free core per environment). Either gives the same rollouts.
        ppo: MaskablePPO hyper-parameters; ``ppo.batch_size`` is at most a rollout (``ppo.n_steps * n_envs``)
            and must not leave a last mini-batch of one step (its normalised advantage is NaN).
        checkpoint_every: steps between resumable checkpoints.
        keep_checkpoints: checkpoints kept on disk (older ones are deleted).
        eval_every: steps between evaluations against every scripted opponent of the pool.
        eval_games: games per opponent per evaluation (split across both seats).
        images_every: PPO updates (rollouts) between images and key events of one evaluation battle.
        reward_shaping: VP-difference shaping weight (0 = terminal reward only).
        max_episode_steps: truncate an episode after this many learner steps (None: never).
        planes: add the raster planes to the observation.
        pairs: add the unit-pair features (``pairs``, :mod:`agents.pair_features`) to the observation.
        self_play: snapshot settings (needed only with a ``self`` opponent).
        imitation: behaviour-cloning warm start run once before PPO (None: off).
        seed: seeds the policy, the environments and the opponent draws.
        run_dir: where checkpoints, TensorBoard logs and the final model go
            (relative paths are from the current directory); default ``runs/<id>``.
        device: torch device for the learner ("cpu" or "auto").
        torch_threads: CPU threads torch may use in the learner's process (the
            environments' worker processes use one each); small policy networks
            run fastest on one, and more threads slow down badly on a busy machine.
    """

    id: str
    description: str = ""
    scenario: str
    opponents: list[OpponentConfig] = Field(min_length=1)
    learner_side: Literal["random", "blue", "red"] = "random"
    armies: ArmiesConfig = Field(default_factory=ArmiesConfig)
    total_timesteps: StrictInt = Field(ge=1)
    n_envs: StrictInt = Field(1, ge=1, le=256)
    vec_env: Literal["dummy", "subproc"] = "dummy"
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    checkpoint_every: StrictInt = Field(10_000, ge=1)
    keep_checkpoints: StrictInt = Field(3, ge=1)
    eval_every: StrictInt = Field(10_000, ge=1)
    eval_games: StrictInt = Field(10, ge=0)
    images_every: StrictInt = Field(10, ge=1)
    reward_shaping: float = Field(0.0, ge=0)
    max_episode_steps: StrictInt | None = Field(None, ge=1)
    planes: bool = False
    pairs: bool = False
    self_play: SelfPlayConfig = Field(default_factory=SelfPlayConfig)
    imitation: ImitationConfig | None = None
    seed: StrictInt = Field(0, ge=0, le=MAX_SEED)
    run_dir: str | None = None
    device: Literal["cpu", "auto"] = "cpu"
    torch_threads: StrictInt = Field(1, ge=1, le=256)

    @field_validator("id")
    @classmethod
    def _id_is_a_name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", v):
            raise ValueError("must contain only letters, digits, '_', '.' and '-'")
        if not v.strip("."):  # "." or ".." would make runs/<id> the runs folder itself or its parent
            raise ValueError(f"'{v}' is not a name (it needs a letter, digit, '_' or '-')")
        return v

    @field_validator("scenario")
    @classmethod
    def _known_scenario(cls, v: str) -> str:
        if is_scenario(v):
            return v
        if Path(v).suffix in (".yaml", ".yml"):  # a path, not a name: the list of names would not help
            if Path(v).is_dir():
                raise ValueError(f"{v}: is a directory, not a scenario file")
            raise ValueError(f"file not found: {v} (a relative path is from the current directory)")
        raise ValueError(f"unknown scenario '{v}'; known: {', '.join(list_scenarios())} (or a YAML path)")

    @model_validator(mode="after")
    def _batch_fits_rollout(self) -> TrainingConfig:
        rollout = self.ppo.n_steps * self.n_envs
        if self.ppo.batch_size > rollout:
            raise ValueError(f"ppo.batch_size {self.ppo.batch_size} is larger than a rollout "
                             f"(ppo.n_steps × n_envs = {rollout})")
        if rollout % self.ppo.batch_size == 1:  # a one-decision mini-batch: its advantages' std is NaN
            raise ValueError(f"ppo.batch_size {self.ppo.batch_size} leaves a mini-batch of 1 decision in each rollout "
                             f"(ppo.n_steps × n_envs = {rollout}), whose normalised advantage is NaN and "
                             f"turns the policy's weights into NaN; use a batch size that divides {rollout}")
        return self

    @model_validator(mode="after")
    def _pairs_need_the_mlp(self) -> TrainingConfig:
        if self.pairs and self.ppo.policy != "mlp":
            raise ValueError(f"pairs: the {self.ppo.policy} policy does not read the unit-pair features "
                             f"(set ppo.policy: mlp or pairs: false)")
        if self.planes and self.ppo.policy == "factored":
            raise ValueError("planes: the factored policy does not read the raster planes "
                             "(set ppo.policy: mlp or planes: false)")
        return self

    # ------------------------------------------------------------------ derived
    @property
    def rollout_steps(self) -> int:
        """Steps per PPO update: ``ppo.n_steps * n_envs``."""
        return self.ppo.n_steps * self.n_envs

    @property
    def final_timesteps(self) -> int:
        """The step count a finished run ends at: ``total_timesteps`` rounded up to whole rollouts."""
        r = self.rollout_steps
        return -(-self.total_timesteps // r) * r

    @property
    def scripted_opponents(self) -> list[str]:
        """Names of the pool's registered (non-``self``, non-model) opponents, in pool order."""
        from battleline.agents.registry import AGENT_NAMES

        return [o.agent for o in self.opponents if o.agent in AGENT_NAMES]

    @property
    def uses_self_play(self) -> bool:
        """Whether the pool contains frozen selves."""
        return any(o.agent == SELF for o in self.opponents)

    def run_path(self) -> Path:
        """The run directory: ``run_dir`` or ``runs/<id>``."""
        return Path(self.run_dir) if self.run_dir else Path("runs") / self.id


def training_config_path(source: str | Path) -> Path:
    """A config name in ``configs/training`` (``quick``) or a path, as a path."""
    path = Path(source)
    if not path.suffix and not path.exists():
        path = TRAINING_CONFIG_DIR / f"{source}.yaml"
    return path


def load_training_config(
    source: str | Path | dict[str, Any],
    overrides: dict[str, Any] | None = None,
    flags: dict[str, str] | None = None,
) -> TrainingConfig:
    """Load and validate a training config.

    Args:
        source: a name in ``configs/training``, a YAML path, or a dict.
        overrides: top-level keys replacing the file's (``run_dir``, ``total_timesteps``, ...).
        flags: field path → the command-line flag that gave it (``{"total_timesteps":
            "--total-timesteps"}``): an error in such a field names the flag, not the file.

    Raises:
        ConfigError: one line ``<file>: <field path>: <problem>``, or ``<flag>: <problem>``; a name no
            shipped config has: "unknown training config 'x'; shipped: bc_warm_start, ...".
    """
    if isinstance(source, dict):
        data, shown = dict(source), "<dict>"
    else:
        path = training_config_path(source)
        if path != Path(source) and not path.exists():  # a name no shipped config has (a path is read as given)
            shipped = ", ".join(sorted(p.stem for p in TRAINING_CONFIG_DIR.glob("*.yaml")))
            raise ConfigError(f"unknown training config '{source}'; shipped: {shipped} (a config of your own: its YAML path)")
        data, shown = read_yaml(path), display_path(path)
    data.update(overrides or {})
    try:
        config = parse(TrainingConfig, data, shown)
    except ConfigError as exc:
        flag = _flag_of(exc.where or "", flags or {})
        if flag is not None:
            raise ConfigError(exc.problem, where=flag) from None
        problem = _with_flags(exc.problem, flags or {}) if not exc.where else exc.problem
        if problem == exc.problem:
            raise
        # a check across fields set by flags: name the flags in the text (and the file, when one was read)
        raise ConfigError(problem, file=None if isinstance(source, dict) else exc.file) from None
    check_scenario_fit(config, shown)
    return config


def check_scenario_fit(config: TrainingConfig, shown: str = "<dict>") -> None:
    """Checks across fields, against the scenario: army lists only for sides the scenario does not place,
    and every ``model:`` opponent able to play the scenario with those armies
    (:func:`training.play.require_policy_fits`: unit slots, siege orders).

    Raises:
        ConfigError: one line ``<file>: <field path>: <problem>`` (``armies.blue``, ``opponents[i].agent``).
    """
    from battleline.agents.registry import MODEL_PREFIX, make_agent
    from battleline.env.rules.config import load_scenario

    scenario = load_scenario(config.scenario)
    for side in ("blue", "red"):
        armies = getattr(config.armies, side)
        if armies and scenario.side(side).placements is not None:
            raise ConfigError(f"scenario '{scenario.id}' places its {side} units explicitly (placements), so its "
                              f"army lists cannot be replaced", file=shown, where=f"armies.{side}")
    if not any(o.agent.startswith(MODEL_PREFIX) for o in config.opponents):
        return
    from battleline.agents.learned import ModelLoadError
    from battleline.agents.registry import UnknownAgentError
    from battleline.training.play import require_policy_fits

    for i, opponent in enumerate(config.opponents):
        if opponent.agent.startswith(MODEL_PREFIX):
            try:
                require_policy_fits(make_agent(opponent.agent), opponent.agent, config.scenario,
                                    config.armies.blue or None, config.armies.red or None)
            except (ModelLoadError, UnknownAgentError) as exc:
                raise ConfigError(str(exc), file=shown, where=f"opponents[{i}].agent") from None


def _with_flags(problem: str, flags: dict[str, str]) -> str:
    """``problem`` with each field path of ``flags`` it names (longest first, whole words) replaced by its flag:
    "ppo.batch_size 3 leaves ... (ppo.n_steps × n_envs = 256)" → "--batch-size 3 leaves ... (--n-steps × --n-envs
    = 256)"."""
    for field in sorted(flags, key=len, reverse=True):
        problem = re.sub(rf"(?<![\w.-]){re.escape(field)}(?![\w])", flags[field], problem)
    return problem


def _flag_of(where: str, flags: dict[str, str]) -> str | None:
    """The flag of the longest field path in ``flags`` that ``where`` is, or lies under."""
    hits = [k for k in flags if where == k or where.startswith((f"{k}.", f"{k}["))]
    return flags[max(hits, key=len)] if hits else None


__all__ = [
    "ArmiesConfig", "ConfigError", "ImitationConfig", "OpponentConfig", "PPOConfig", "REPO_ROOT", "SELF", "SelfPlayConfig",
    "TRAINING_CONFIG_DIR", "TrainingConfig", "check_scenario_fit", "load_training_config", "training_config_path",
]
