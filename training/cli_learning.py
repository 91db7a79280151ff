"""The learning commands of the ``battleline`` command line: train, evaluate, expert-iteration.

They are registered on :data:`training.cli_common.app` when :mod:`training.cli` is imported, and share its
error handling: a user mistake is one line ``error: <message>`` on stderr and exit code 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from battleline.env.rules.state import SIDES
from battleline.training.cli_common import (
    EXIT_CHECK_FAILED,
    UserError,
    _agent_flag,
    _check_list,
    _check_not_model,
    _check_run_options,
    _check_seed,
    _shown,
    _user_errors,
    _warn_unpaired,
    _worker_count,
    app,
    check_output,
    console,
    err_console,
    writing,
)
from battleline.training.console import LoggedProgress


@app.command("train")
def train_cmd(
    config: Annotated[Path, typer.Option(help="Training config: a YAML path or a name in configs/training.")],
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run in the config's run_dir from its "
                                         "last checkpoint (same step count, pool and TensorBoard curves).")] = False,
    run_dir: Annotated[Path | None, typer.Option(help="Override the config's run_dir.")] = None,
    total_timesteps: Annotated[int | None, typer.Option(help="Override the config's total_timesteps.")] = None,
    progress: Annotated[bool, typer.Option(help="Show the progress bar.")] = True,
) -> None:
    """Train a MaskablePPO policy against the config's opponent pool (checkpoints, TensorBoard in run_dir/tb)."""
    from battleline.training.config import load_training_config
    from battleline.training.train import TrainingError, TrainingInterrupted, train

    overrides: dict[str, Any] = {}
    if run_dir is not None:
        overrides["run_dir"] = str(run_dir)
    if total_timesteps is not None:
        overrides["total_timesteps"] = total_timesteps
    with _user_errors():
        flags = {"run_dir": "--run-dir", "total_timesteps": "--total-timesteps"}
        cfg = load_training_config(config, overrides, flags={k: f for k, f in flags.items() if k in overrides})
        check_output("--run-dir" if run_dir is not None else f"{config}: run_dir", cfg.run_path(), folder=True)
        try:
            summary = train(cfg, resume=resume, console=console, progress=progress)
        except TrainingInterrupted as exc:
            err_console.print(Text(str(exc), style="yellow"), soft_wrap=True)
            raise typer.Exit(130) from None
        except TrainingError as exc:
            raise UserError(str(exc)) from None
    console.print(f"{summary['num_timesteps']} steps ({summary['session_steps']} this session) in "
                  f"{summary['seconds']:.1f} s: {summary['steps_per_second']:.1f} steps/s; "
                  f"{summary['episodes']} episodes, illegal actions: {summary['illegal_actions']}", soft_wrap=True)
    console.print(f"model: {_shown(Path(summary['model']))}", soft_wrap=True)
    console.print(f"tensorboard: {tensorboard_command()} --logdir {_shown(cfg.run_path() / 'tb')}", soft_wrap=True)


def tensorboard_command() -> str:
    """How to start TensorBoard in this environment: the ``tensorboard`` script beside the running Python, relative
    to the current folder when inside it (``.venv/bin/tensorboard`` from the repository), else its absolute path;
    plain ``tensorboard`` when there is no such script."""
    script = Path(sys.executable).parent / "tensorboard"
    if not script.is_file():
        return "tensorboard"
    try:
        return script.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(script)


@app.command("evaluate")
def evaluate_cmd(
    model: Annotated[Path, typer.Option(help="A trained policy (model.zip) written by 'battleline train'.")],
    opponents: Annotated[str | None, typer.Option(
        help="Comma-separated agent names; 'all-scripted' = every agent but random, 'all-field' = the same "
             "without the siege roles, 'all' = every agent. Default: all-field on a field scenario, the siege "
             "roles on a siege.")
    ] = None,
    games: Annotated[int, typer.Option(help="Games per opponent, split across both seats.")] = 100,
    scenario: Annotated[str | None, typer.Option(
        help="Scenario name or YAML path (default: the one the model was trained on).")] = None,
    seed: Annotated[int, typer.Option(help="Base seed; games 2k and 2k+1 share a dice seed.")] = 0,
    sample: Annotated[bool, typer.Option("--sample", help="Sample the policy's actions instead of "
                                         "playing the most likely one.")] = False,
    out: Annotated[Path | None, typer.Option(help="Also write the results as JSON here.")] = None,
) -> None:
    """Win/draw/loss rates of a trained policy against opponents, with Wilson 95% intervals (masks at prediction)."""
    from battleline.agents.learned import ModelLoadError, model_file_problem
    from battleline.training.evaluate import evaluate_model, model_metadata
    from battleline.training.play import check_model_agents, default_agents, expand_agent_names
    from battleline.training.tournament import check_games_total

    with _user_errors():
        # before any progress bar; a missing model (or '', the current folder) is reported by make_agent below
        trained_on = None if scenario or model_file_problem(model) else model_metadata(model).get("scenario")
        defaulted = not (scenario or trained_on)  # e.g. a checkpoint: no model.json beside it
        scenario = scenario or trained_on or "pitched_battle"
        if opponents is None:  # an empty --opponents "" is a mistake, not the default
            opponents = default_agents(scenario)
        _check_list("--opponents", opponents, "opponent")
        names = expand_agent_names(opponents)
        if not names:
            raise UserError(f"--opponents: no agent named in '{opponents}'")
        if games < 1:
            raise UserError(f"--games must be at least 1, got {games}")
        try:
            check_games_total(games * len(names), f"--games {games:,} × {len(names)} opponent{'s' * (len(names) != 1)}")
        except ValueError as exc:
            raise UserError(str(exc)) from None
        _check_seed(seed)
        if out is not None:
            check_output("--out", out)
            _check_not_model(("--out", out), "--model", model)  # the results would replace it
        from battleline.agents.registry import MODEL_PREFIX, make_agent

        for name in names:
            with _agent_flag("--opponents"):
                make_agent(name)  # unknown names fail here, before any game
        try:
            with _agent_flag("--model"):  # a bad file fails here, before the progress bar, as play's --blue/--red
                make_agent(f"{MODEL_PREFIX}{model}")
            try:
                check_model_agents(scenario, [f"model:{model}", *names])  # and a bad scenario or a model that does not fit
            except ModelLoadError as exc:
                if not defaulted:
                    raise
                raise ModelLoadError(f"{exc}; {scenario} is the default when no model.json beside the model names "
                                     f"its scenario: give it with --scenario") from None
            _warn_unpaired("--games", games)
            with LoggedProgress(console=console, transient=True, unit="games") as bar:
                task = bar.add_task("evaluation", total=games * len(names))
                report = evaluate_model(model, names, games, scenario=scenario, seed=seed, deterministic=not sample,
                                        on_game=lambda _r: bar.advance(task))
        except ModelLoadError as exc:
            raise UserError(str(exc)) from None

    def rate(d: dict[str, Any], what: str) -> str:
        lo, hi = d[f"{what}_ci95"]
        return f"{d[f'{what}_rate']:.0%} {lo * 100:.0f}–{hi * 100:.0f}"

    table = Table(title=f"{_shown(model)} on {report['scenario']}", caption="rates with Wilson 95% intervals (%)",
                  header_style="bold", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  collapse_padding=True)
    for col in ("opponent", "games", "win", "draw", "loss", "VP diff", "W-D-L b|r"):
        table.add_column(col, justify="left" if col == "opponent" else "right", no_wrap=True)
    for opp, d in report["opponents"].items():
        seats = "|".join("-".join(str(v) for v in d["by_seat"][s]) for s in SIDES)
        table.add_row(opp, str(d["games"]), rate(d, "win"), rate(d, "draw"), rate(d, "loss"), f"{d['vp_diff']:+.0f}",
                      seats)
    console.print(table)
    style = "green" if report["illegal_actions"] == 0 else "bold red"
    console.print(Text(f"decisions: {report['decisions']}, illegal actions: {report['illegal_actions']}", style=style),
                  soft_wrap=True)
    if out is not None:
        with writing("--out", out):
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(report, indent=1), encoding="utf-8")
        console.print(f"results: {_shown(out)}", soft_wrap=True)
    if report["illegal_actions"]:
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command("expert-iteration")
def expert_iteration_cmd(
    out: Annotated[Path, typer.Option(help="Run folder: settings.json, iter_KK/, tensorboard/, plan_net.pt, "
                                      "curve.png. A folder holding a run with the same settings is resumed.")
                   ] = Path("out/expert_iteration"),
    scenario: Annotated[str, typer.Option(help="Scenario name in configs/scenarios.")] = "pitched_battle",
    iterations: Annotated[int, typer.Option(help="Rounds of label, fit, evaluate.")] = 3,
    games: Annotated[int, typer.Option(help="Label games per round.")] = 48,
    sims: Annotated[int, typer.Option(help="Rollouts per search (one search per block of the apprentice).")] = 32,
    self_play_every: Annotated[int, typer.Option(help="Every N-th label game is self-play, both seats labelled "
                                                 "(0: none).")] = 4,
    opponents: Annotated[str, typer.Option(help="Comma-separated scripted field agents: the label games' and "
                                           "the evaluation's opponents; 'all-field' = all of them.")] = "all-field",
    eval_games: Annotated[int, typer.Option(help="Games of the network alone against each opponent per round, "
                                            "split across both seats.")] = 10,
    epochs: Annotated[int, typer.Option(help="Training epochs per round (the best held-out epoch is kept).")] = 200,
    target: Annotated[str, typer.Option(help="What the network learns: 'choice' (the search's choice, a policy "
                                        "head) or 'values' (each plan's mean rollout value, a value head).")
                      ] = "choice",
    seed: Annotated[int, typer.Option(help="Base seed of the label games, searches and evaluation.")] = 0,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: one per CPU).")] = None,
) -> None:
    """Expert iteration: the search labels plan choices, a plan network learns them and plays without search."""
    from pydantic import ValidationError

    from battleline.training.expert_iteration import ExItRunError, ExItSettings, run
    from battleline.training.play import expand_agent_names

    flags = {"iterations": "--iterations", "games": "--games", "sims": "--sims", "eval_games": "--eval-games",
             "epochs": "--epochs", "self_play_every": "--self-play-every", "opponents": "--opponents",
             "scenario": "--scenario", "target": "--target"}
    with _user_errors():
        _check_seed(seed)
        try:
            settings = ExItSettings(scenario=scenario, iterations=iterations, games=games, sims=sims,
                                    self_play_every=self_play_every, opponents=expand_agent_names(opponents),
                                    eval_games=eval_games, epochs=epochs, target=target, seed=seed)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = str(err["loc"][0]) if err["loc"] else ""
            raise UserError(f"{flags.get(field, field)}: {err['msg'].removeprefix('Value error, ')}") from None
        from battleline.env.rules.config import list_scenarios, load_scenario

        if scenario not in list_scenarios():
            raise UserError(f"--scenario: unknown scenario '{scenario}'; known: {', '.join(list_scenarios())}")
        if load_scenario(scenario).siege:
            raise UserError(f"--scenario: '{scenario}' is a siege; expert iteration plays field battles (its plans "
                            "and opponents are the field agents)")
        _check_run_options(workers, "process")
        check_output("--out", out, folder=True)
        count = _worker_count(workers, games, "process", None)
        try:
            with writing("--out", out):
                history = run(settings, out, workers=count, log=lambda line: console.print(line, soft_wrap=True))
        except ExItRunError as exc:
            raise UserError(str(exc)) from None
    last = history[-1]
    where = "" if scenario == "pitched_battle" else f" --scenario {scenario}"  # it fits scenarios with as many units
    console.print(f"plan network: {_shown(out / 'plan_net.pt')} (play it as plans:{_shown(out / 'plan_net.pt')}{where}); "
                  f"mean score alone {last['score_mean']:.3f}; curve: {_shown(out / 'curve.png')}", soft_wrap=True)
    console.print(f"tensorboard: {tensorboard_command()} --logdir {_shown(out / 'tensorboard')}", soft_wrap=True)
