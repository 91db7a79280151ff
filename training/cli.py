"""The ``battleline`` command line: play, tournament, parity, replay, detect, train, evaluate, scenarios, tactics,
rules (the rules reference), coverage; ``battleline --version``.

User errors (a bad scenario or army file, an unknown agent, a missing or
unreadable replay) print one red line ``error: <message>`` on stderr and exit
with code 2; so do usage mistakes (a bad or unknown option, a missing argument,
an unknown command), e.g. ``error: battleline replay: Missing argument 'path'.``
A replay that fails ``--check`` exits with code 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich import box
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

try:  # typer 0.26 and later carry their own copy of Click
    from typer._click.exceptions import NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - an older typer runs on Click itself (NoArgsIsHelpError: Click 8.2 on)
    import click.exceptions

    UsageError = click.exceptions.UsageError  # type: ignore[misc]
    NoArgsIsHelpError = getattr(click.exceptions, "NoArgsIsHelpError", ())  # type: ignore[misc]

from battleline.env.rules.config import NESTED_TOO_DEEPLY, ConfigError, read_file_text
from battleline.env.rules.state import SIDES
from battleline.training.console import LoggedProgress, make_console

EXIT_USER_ERROR = 2
EXIT_CHECK_FAILED = 1

err_console = make_console(stderr=True)


def print_error(message: str) -> None:
    """Print ``error: <message>`` on stderr as one red line (runs of white space, newlines too, become one space)."""
    err_console.print(Text(f"error: {' '.join(str(message).split())}", style="bold red"), soft_wrap=True)


@contextmanager
def _one_line_usage_errors(command_path: Callable[[], str]) -> Iterator[None]:
    """Print a Click usage error (bad value, unknown option or command, missing argument) as one line naming the
    command, ``error: battleline play: Invalid value for '--seed': ...``, and exit with code 2 (typer.Exit).
    ``command_path``: names the command when the error carries no context (``Option '--seed' requires an
    argument.``). Running with no arguments (help) is left to Typer."""
    try:
        yield
    except UsageError as exc:
        if isinstance(exc, NoArgsIsHelpError):
            raise
        print_error(f"{exc.ctx.command_path if exc.ctx is not None else command_path()}: {exc.format_message()}")
        raise typer.Exit(EXIT_USER_ERROR) from None


class _OneLineUsage:
    """Usage errors as one line (see :func:`_one_line_usage_errors`) instead of Typer's usage, hint and boxed panel.

    They are caught in ``make_context`` (this command's own options) and ``invoke`` (a subcommand's name and
    options, and a ``typer.BadParameter`` raised by the command), before ``main`` would print the panel; ``--help``
    and the other exits are Typer's."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        def path() -> str:
            return " ".join(filter(None, (parent.command_path if parent is not None else None, info_name)))

        with _one_line_usage_errors(path):
            return super().make_context(info_name, args, parent=parent, **extra)  # type: ignore[misc]

    def invoke(self, ctx: Any) -> Any:
        with _one_line_usage_errors(lambda: " ".join(filter(None, (ctx.command_path, ctx.invoked_subcommand)))):
            return super().invoke(ctx)  # type: ignore[misc]


class OneLineUsageGroup(_OneLineUsage, TyperGroup):
    """A Typer group (``typer.Typer(cls=OneLineUsageGroup)``) whose usage errors, its subcommands' included, are
    one line on stderr with exit code 2."""


class OneLineUsageCommand(_OneLineUsage, TyperCommand):
    """A single Typer command (``app.command(cls=OneLineUsageCommand)``) whose usage errors are one line on stderr
    with exit code 2."""


def run_command(function: Any, args: list[str] | None = None, prog_name: str | None = None) -> None:
    """``typer.run(function)`` with one-line usage errors (exit code 2); exits (SystemExit) when done.

    ``args``: the command line (default ``sys.argv[1:]``); ``prog_name``: the name errors and help give the command
    (default: as it was run, e.g. ``python -m benchmarks.run``)."""
    one = typer.Typer(add_completion=False, pretty_exceptions_show_locals=False)
    one.command(cls=OneLineUsageCommand)(function)
    one(args=args, prog_name=prog_name)


class OneLineArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line, ``error: <prog>: <message>``, with exit code 2,
    instead of the usage and ``<prog>: error: <message>``; ``--help`` is unchanged."""

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one line and raise SystemExit(2)."""
        print_error(f"{self.prog}: {message}")
        raise SystemExit(EXIT_USER_ERROR)


app = typer.Typer(
    cls=OneLineUsageGroup,
    name="battleline",
    help="Play, replay and rank agents on the battleline rank-and-file wargame engine.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
console = make_console()


def _print_version(value: bool) -> None:
    """``--version``: print ``battleline <version>`` (the installed distribution's, importlib.metadata) and exit 0."""
    if value:
        from battleline import __version__

        console.print(f"battleline {__version__}", soft_wrap=True, highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", help="Print the version and exit.", is_eager=True,
                                          callback=_print_version)] = False,
) -> None:
    """Play, replay and rank agents on the battleline rank-and-file wargame engine."""


class UserError(Exception):
    """A user mistake reported as one line (exit code 2)."""


def _user_error_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [ConfigError, UserError]
    try:
        from battleline.agents.registry import UnknownAgentError

        types.append(UnknownAgentError)
    except ImportError:  # pragma: no cover - the agents package is optional for `scenarios`
        pass
    try:
        from battleline.agents.learned import ModelLoadError

        types.append(ModelLoadError)
    except ImportError:  # pragma: no cover - the learning stack is optional for the other commands
        pass
    return tuple(types)


def _fail(message: str, code: int) -> typer.Exit:
    print_error(message)
    return typer.Exit(code)


@contextmanager
def _user_errors() -> Iterator[None]:
    """Turn user errors into one red line on stderr and exit code 2."""
    try:
        yield
    except _user_error_types() as exc:
        raise _fail(str(exc), EXIT_USER_ERROR) from None


@contextmanager
def _agent_flag(flag: str) -> Iterator[None]:
    """Name the flag that gave an unknown agent, or a ``model:`` agent whose file is bad (UserError, one line):
    "--blue: unknown agent 'nope'; known agents: ..."."""
    from battleline.agents.registry import UnknownAgentError

    try:
        yield
    except UnknownAgentError as exc:
        raise UserError(f"{flag}: {exc}") from None


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _os_reason(exc: OSError) -> str:
    """The reason of an OSError in a few words ("is a directory", "permission denied", ...)."""
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, FileExistsError):
        return "a file of that name is in the way"
    return (exc.strerror or type(exc).__name__).lower()


def check_output(flag: str, path: Path, folder: bool = False, suffix: str | None = None) -> None:
    """Check a user-given output path before any work: create its folder, reject what cannot be written.

    ``folder`` True: ``path`` is an output folder (created); otherwise a file whose parent folder is
    created. ``suffix`` (".png", ".gif"): the file name must end in it (the picture is written in that format).
    Raises :class:`UserError` (one line naming ``flag``): "--replay /tmp: is a directory",
    "--out f.json: not a directory", "--png /proc/x/y.png: cannot create /proc/x (no such file or directory)",
    "--png r.txt: the file name must end in .png", "--png ro/p.png: cannot write ro/p.png (permission denied)"
    (:func:`_probe_writable`: the file, or a file in the folder, is opened for writing and nothing is changed).
    """
    try:
        exists, is_dir = path.exists(), path.is_dir()
    except OSError as exc:  # e.g. a name too long for the file system
        raise UserError(f"{flag} {path}: cannot write {path} ({_os_reason(exc)})") from None
    if folder and exists and not is_dir:
        raise UserError(f"{flag} {path}: not a directory (a file of that name exists)")
    if not folder and is_dir:
        raise UserError(f"{flag} {path}: is a directory (give a file name)")
    if suffix is not None and path.suffix.lower() != suffix:  # before any folder is made
        raise UserError(f"{flag} {path}: the file name must end in {suffix}")
    target = path if folder else path.parent
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        where = exc.filename or target
        raise UserError(f"{flag} {path}: cannot create {where} ({_os_reason(exc)})") from None
    try:
        _probe_writable(path, folder)
    except OSError as exc:
        raise UserError(f"{flag} {path}: cannot write {exc.filename or path} ({_os_reason(exc)})") from None


def _probe_writable(path: Path, folder: bool) -> None:
    """Raise the OSError that writing ``path`` would raise, changing nothing: an existing file is opened for
    appending (not truncated) and closed; a new file, or a file in the folder ``path``, is created and removed.
    A real attempt, not a permission check, so it holds for every user (root included) and file system."""
    if folder:
        with tempfile.TemporaryFile(dir=path):
            return
    if path.exists():  # O_NONBLOCK: a named pipe without a reader fails at once instead of waiting
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
        return
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    path.unlink()


def check_distinct(*outputs: tuple[str, Path | None], reads: tuple[str, Path] | None = None) -> None:
    """Reject two outputs given the same file, or an output that is the file being read (one line, UserError):
    "--png r.json: the same file as --replay" — the second write would replace the first."""
    seen: dict[Path, str] = {}
    if reads is not None:
        seen[reads[1].resolve()] = reads[0]
    for flag, path in outputs:
        if path is None:
            continue
        key = path.resolve()
        if key in seen:
            raise UserError(f"{flag} {path}: the same file as {seen[key]}")
        seen[key] = flag


def _check_not_model(output: tuple[str, Path | None], what: str, model: str | Path) -> None:
    """Reject an output that is the model file being played or the ``model.json`` beside it (one line, UserError):
    "--out run/model.json: the same file as --model's model.json"."""
    from battleline.agents.learned import model_file
    from battleline.training.evaluate import metadata_path

    path = model_file(model)
    check_distinct(output, reads=(what, path))
    if path.name:  # '' (the current folder) is no model, and load_model says so
        check_distinct(output, reads=(f"{what}'s model.json", metadata_path(path)))


@contextmanager
def writing(flag: str, path: Path) -> Iterator[None]:
    """Turn an OSError while writing the user-given output ``path`` (or a file in it) into one line naming ``flag``.

    An OSError about another file is not the output's fault and is raised as it is.
    """
    try:
        yield
    except OSError as exc:
        where = Path(exc.filename) if isinstance(exc.filename, (str, os.PathLike)) else path
        if not (where == path or path in where.parents or where in path.parents):
            raise
        raise _fail(f"{flag} {path}: cannot write {where} ({_os_reason(exc)})", EXIT_USER_ERROR) from None


def write_replay(battle: Any, path: Path, players: dict[str, str]) -> None:
    """Write the replay JSON: ``battle.to_json()`` plus ``meta.players`` {side: agent name}.

    Parent folders are created. ``Battle.from_json`` ignores the extra key.
    """
    data = json.loads(battle.to_json())
    data["meta"] = {"players": players}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def _summary_table(battle: Any, players: dict[str, str] | None) -> Table:
    from battleline.training.play import battle_summary

    s = battle_summary(battle)
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    for col in ("side", "agent", "army", "VP", "units destroyed"):
        table.add_column(col, justify="right" if col in ("VP", "units destroyed") else "left")
    for _i, side in enumerate(SIDES):
        army = (battle.scenario.get(side) or {}).get("army") or "placements"
        table.add_row(Text(side, style=side), (players or {}).get(side, "?"), army, str(s["vp"][side]),
                      f"{s['destroyed'][side]}/{s['units'][side]}")
    return table


def print_result(battle: Any, players: dict[str, str] | None, written: list[tuple[str, Path]]) -> None:
    """Print the winner, VP, turns, units destroyed per side and the files written (to stdout); a battle not over
    (a replay saved mid-battle) says so instead of naming a winner."""
    from battleline.training.play import battle_summary

    s = battle_summary(battle)
    winner = s["winner"]
    if winner in SIDES:
        who = f" ({players[winner]})" if players and winner in players else ""
        headline = Text(f"winner: {winner}{who}", style=f"bold {winner}")
    elif winner is None:  # a replay saved before the end
        headline = Text("winner: none yet (the battle is unfinished)", style="bold")
    else:
        headline = Text(f"winner: {winner}", style="bold")
    so_far = " so far" if winner is None else ""
    headline.append(f"  —  VP{so_far} blue {s['vp']['blue']}, red {s['vp']['red']}", style="default")
    console.print(headline, soft_wrap=True)
    console.print(f"turns: {s['turn']}, decisions: {s['decisions']}, scenario: {battle.scenario.get('id', '?')}, "
                  f"seed: {battle.seed}", soft_wrap=True)
    console.print(_summary_table(battle, players))
    for what, path in written:
        console.print(f"{what}: {_shown(path)}", soft_wrap=True)


@app.command()
def play(
    scenario: Annotated[str, typer.Option(help="Scenario name in configs/scenarios, or a YAML path.")] = "pitched_battle",
    blue: Annotated[str, typer.Option(help="Agent playing blue.")] = "line_advance",
    red: Annotated[str, typer.Option(help="Agent playing red.")] = "random",
    seed: Annotated[int, typer.Option(help="Dice seed (agents get seeds derived from it).")] = 0,
    blue_army: Annotated[str | None, typer.Option(help="Army list id for blue (overrides the scenario's).")] = None,
    red_army: Annotated[str | None, typer.Option(help="Army list id for red (overrides the scenario's).")] = None,
    replay: Annotated[Path | None, typer.Option(help="Write the replay JSON here.")] = None,
    png: Annotated[Path | None, typer.Option(help="Draw the final table into this PNG.")] = None,
    max_decisions: Annotated[int, typer.Option(help="Give up after this many decisions.")] = 20000,
) -> None:
    """Play one battle and print the winner and the victory points."""
    from battleline.training.play import PlayError, check_model_agents, plan_network_slots, play_battle

    with _user_errors():
        _check_seed(seed)
        _check_army_flags(blue_army, red_army)
        if max_decisions < 1:
            raise UserError(f"--max-decisions must be at least 1, got {max_decisions}")
        for flag, path, suffix in (("--replay", replay, None), ("--png", png, ".png")):
            if path is not None:
                check_output(flag, path, suffix=suffix)
        check_distinct(("--replay", replay), ("--png", png))
        from battleline.agents.registry import MODEL_PREFIX, make_agent
        from battleline.env.rules.battle import Battle

        models = [(flag, name) for flag, name in (("--blue", blue), ("--red", red)) if name.startswith(MODEL_PREFIX)]
        nets = []  # plans:PATH and search:...:prior=PATH: a plan network whose unit slots must fit
        for flag, name in (("--blue", blue), ("--red", red)):
            if (flag, name) in models:  # the replay would replace the trained model
                _check_not_model(("--replay", replay), f"{flag}'s model", name[len(MODEL_PREFIX):])
            else:
                with _agent_flag(flag):
                    if plan_network_slots(name) is None:
                        make_agent(name)
                    else:
                        nets.append((flag, name))
        if models or nets:  # an army list the scenario refuses is the fault, not the slots its units would need
            Battle.from_scenario(scenario, seed=seed, blue_army=blue_army, red_army=red_army)
        for flag, name in [*models, *nets]:
            with _agent_flag(flag):  # a model is built (loaded) once, by check_model_agents
                check_model_agents(scenario, [name], [blue_army] if blue_army else None,
                                   [red_army] if red_army else None)
        try:
            battle = play_battle(scenario, blue, red, seed, blue_army=blue_army, red_army=red_army,
                                 max_decisions=max_decisions)
        except PlayError as exc:
            raise _fail(str(exc), EXIT_CHECK_FAILED) from None
    players = {"blue": blue, "red": red}
    written: list[tuple[str, Path]] = []
    if replay is not None:
        with writing("--replay", replay):
            write_replay(battle, replay, players)
        written.append(("replay", replay))
    if png is not None:
        from battleline.env.render import render_battle

        with writing("--png", png):
            render_battle(battle, png, title=f"{blue} (blue) vs {red} (red), seed {seed}")
        written.append(("png", png))
    print_result(battle, players, written)


def _check_list(flag: str, spec: str, what: str) -> None:
    """Refuse an empty entry of a comma-separated list (UserError, one line): "--agents 'random,,line_advance':
    entrant 2 is empty" — a comma too many would otherwise drop an entry silently. ``what``: an entry's name."""
    if "," not in spec:  # a single name: its own checks say what is wrong with ""
        return
    for i, entry in enumerate(spec.split(","), start=1):
        if not entry.strip():
            raise UserError(f"{flag} '{spec}': {what} {i} is empty")


def _check_seed(seed: int) -> None:
    """Reject a negative ``--seed`` (UserError, one line): seeds feed numpy's SeedSequence, which takes none."""
    if seed < 0:
        raise UserError(f"--seed must be at least 0, got {seed}")


def _check_army_flags(blue_army: str | None, red_army: str | None) -> None:
    """Reject an empty ``--blue-army`` / ``--red-army`` (UserError, one line): "" names no army list."""
    for flag, army in (("--blue-army", blue_army), ("--red-army", red_army)):
        if army is not None and not army.strip():
            raise UserError(f"{flag}: no army list named (an empty name)")


def _warn_unpaired(flag: str, games: int) -> None:
    """Warn (one line, stderr) when an odd ``games`` leaves the last seed played from one seat only."""
    if games % 2:
        err_console.print(Text(f"warning: {flag} {games} is odd: games 2k and 2k+1 share a seed with the seats "
                               f"swapped, so the last game has no partner", style="yellow"), soft_wrap=True)


def _check_pairing(pairing: str) -> None:
    """Reject an unknown ``--pairing`` in one line naming the flag (names are lower case, as typed in the help).

    Raises:
        UserError: ``pairing`` is not one of ``training.tournament.PAIRINGS``.
    """
    from battleline.training.tournament import PAIRINGS

    if pairing not in PAIRINGS:
        hint = f" (did you mean '{pairing.lower()}'?)" if pairing.lower() in PAIRINGS else ""
        raise UserError(f"--pairing: unknown pairing '{pairing}'{hint}; known pairings: {', '.join(PAIRINGS)}")


def _check_run_options(workers: int | None, backend: str, ray_address: str | None = None) -> None:
    """Reject ``--workers`` below 1, an unknown ``--backend`` and, with ``--backend ray``, a ``--ray-address``
    where no cluster answers (UserError, one line)."""
    from battleline.training.backends import BACKENDS, check_ray_address

    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}")
    if backend not in BACKENDS:
        raise UserError(f"--backend: unknown backend '{backend}'; known backends: {', '.join(BACKENDS)}")
    if backend == "ray" and ray_address:
        try:
            check_ray_address(ray_address)
        except ConnectionError as exc:
            raise UserError(str(exc)) from None


def _worker_count(workers: int | None, games: int, backend: str, ray_address: str | None) -> int:
    """The workers for ``games`` games (:func:`training.backends.worker_count`: at most one per game and per CPU),
    saying so on stderr (one line) when that lowers ``--workers``: "warning: --workers 64: using 2 (the machine's
    CPU count)". A Ray cluster (``--ray-address``) brings its own CPUs, so nothing is said there."""
    from battleline.training.backends import worker_count

    n, why = worker_count(workers, games)
    if why and not (backend == "ray" and ray_address):
        err_console.print(Text(f"warning: --workers {workers}: using {n} ({why})", style="yellow"), soft_wrap=True)
    return n


@app.command()
def tournament(
    scenario: Annotated[str, typer.Option(help="Scenario name in configs/scenarios, or a YAML path.")] = "pitched_battle",
    agents: Annotated[str | None, typer.Option(
        help="Comma-separated entrants: agent names or agent@army (e.g. line_advance@dwarfs_iron_throng); "
             "'all-scripted' = every agent but random, 'all-field' = the same without the siege roles, "
             "'all' = every agent. Default: all-field on a field scenario, the siege roles on a siege.")
    ] = None,
    games_per_pair: Annotated[int, typer.Option(help="Games per pair of agents, split across both seats.")] = 10,
    seed: Annotated[int, typer.Option(help="Base seed; each game's seed derives from it.")] = 0,
    out: Annotated[Path, typer.Option(help="Output folder: results.json, results.csv, heatmap.png, "
                                           "fingerprint.png.")] = Path("out/t"),
    workers: Annotated[int | None, typer.Option(help="Worker processes, or a local Ray instance's CPUs "
                                                     "(default: all cores; at most one per game and per "
                                                     "core).")] = None,
    blue_army: Annotated[str | None, typer.Option(help="Army list id for blue in every game, for entrants "
                                                       "without their own (agent@army).")] = None,
    red_army: Annotated[str | None, typer.Option(help="Army list id for red in every game, for entrants "
                                                      "without their own (agent@army).")] = None,
    armies: Annotated[str | None, typer.Option(
        help="Comma-separated army list ids: every agent enters once with each (agent@army).")] = None,
    pairing: Annotated[str, typer.Option(
        help="all: every pair of entrants meets; same-agent: only entrants of the same agent (faction balance); "
             "gauntlet: the first entrant against each of the others.")
    ] = "all",
    backend: Annotated[str, typer.Option(help="process: a local process pool; ray: Ray tasks.")] = "process",
    ray_address: Annotated[str | None, typer.Option(
        help="Ray cluster address for --backend ray (default: start a local instance).")] = None,
) -> None:
    """Round robin between agents: ratings with a first-turn term, win rates, fingerprints, CSV and charts."""
    from battleline.training.play import default_agents, expand_agent_names
    from battleline.training.tournament import Entrant, cross_entrants, run_tournament, schedule, validate_inputs

    with _user_errors():
        if agents is None:  # an empty --agents "" is a mistake, not the default
            agents = default_agents(scenario)
        _check_list("--agents", agents, "entrant")
        names = expand_agent_names(agents)
        if armies is not None:
            _check_list("--armies", armies, "army list")
            army_ids = [a.strip() for a in armies.split(",") if a.strip()]
            if not army_ids:
                raise UserError(f"--armies: no army list named in '{armies}'")
            twice = next((a for i, a in enumerate(army_ids) if a in army_ids[:i]), None)
            if twice is not None:  # else schedule() blames the agents: "each agent may appear only once"
                raise UserError(f"--armies: army list '{twice}' is listed twice")
            names = cross_entrants(names, army_ids)
        if len(names) < 2:
            if names:  # an unknown or malformed name is the real mistake
                try:
                    with _agent_flag("--agents"):
                        validate_inputs(scenario, names, (blue_army, red_army))
                except ConfigError:
                    raise
                except ValueError as exc:
                    raise UserError(str(exc)) from None
            given = [a for a in agents.split(",") if a.strip()]
            repeats = " (a name given twice counts once)" if len(given) > len(names) else ""
            raise UserError(f"a tournament needs at least two agents, got {len(names)}: '{agents}'{repeats}")
        if games_per_pair < 1:
            raise UserError(f"--games-per-pair must be at least 1, got {games_per_pair}")
        _check_pairing(pairing)
        _check_seed(seed)
        _check_army_flags(blue_army, red_army)
        _check_run_options(workers, backend, ray_address)
        try:
            n_games = len(schedule(names, games_per_pair, seed, pairing))
        except ValueError as exc:
            raise UserError(str(exc)) from None
        for flag, army in (("--blue-army", blue_army), ("--red-army", red_army)):
            if army and all(Entrant.parse(n).army for n in names):  # an entrant's own army list comes first
                raise UserError(f"{flag} {army}: every entrant names its own army list "
                                f"({'--armies' if armies else 'agent@army'}), so it would apply to no game")
        try:
            with _agent_flag("--agents"):
                validate_inputs(scenario, names, (blue_army, red_army))
        except ConfigError as exc:  # name the flag that gave the entrant's army
            if not (exc.where or "").startswith("entrant "):
                raise
            raise UserError(f"{'--armies' if armies else '--agents'}: {exc}") from None
        check_output("--out", out, folder=True)
    _warn_unpaired("--games-per-pair", games_per_pair)
    workers = _worker_count(workers, n_games, backend, ray_address)
    with _user_errors(), writing("--out", out):
        results = run_tournament(scenario, names, games_per_pair, seed, out, workers=workers,
                                 blue_army=blue_army, red_army=red_army, console=console, backend=backend,
                                 ray_address=ray_address, pairing=pairing)
    n = results["workers"]
    console.print(f"{results['games']} games in {results['seconds']:.1f} s on {n} worker{'s' * (n != 1)} "
                  f"({backend})", soft_wrap=True)
    for name in ("results.json", "results.csv", "heatmap.png", "fingerprint.png"):
        console.print(f"{name}: {_shown(out / name)}", soft_wrap=True)
    if results["games_failed"]:
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command()
def parity(
    agent: Annotated[str, typer.Option(help="The agent that plays both sides.")] = "line_advance",
    scenario: Annotated[str, typer.Option(help="Scenario name in configs/scenarios, or a YAML path.")] = "pitched_battle",
    games: Annotated[int, typer.Option(help="Battles to play; the check needs at least 200 (fewer print a "
                                            "warning: the verdict cannot pass it).")] = 200,
    seed: Annotated[int, typer.Option(help="Base seed; each battle's seed derives from it.")] = 0,
    out: Annotated[Path, typer.Option(help="Output folder: parity.json, parity.csv.")] = Path("out/parity"),
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: all cores; at most one per "
                                                     "game and per core).")] = None,
    backend: Annotated[str, typer.Option(help="process: a local process pool; ray: Ray tasks.")] = "process",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address for --backend ray.")] = None,
) -> None:
    """Seat-parity check: an agent against itself; exit 1 when 0.5 is outside blue's 95% interval (unfair)."""
    from battleline.training.parity import MIN_PARITY_GAMES, run_parity
    from battleline.training.tournament import MAX_GAMES, validate_inputs

    with _user_errors():
        if games < 1:
            raise UserError(f"--games must be at least 1, got {games}")
        if games > MAX_GAMES:
            raise UserError(f"--games must be at most {MAX_GAMES:,}, got {games:,}")
        _check_seed(seed)
        _check_run_options(workers, backend, ray_address)
        try:
            with _agent_flag("--agent"):
                validate_inputs(scenario, [agent], ())
        except _user_error_types():
            raise
        except ValueError as exc:  # a malformed entrant ('', 'agent@')
            raise UserError(f"--agent: {exc}") from None
        check_output("--out", out, folder=True)
    _warn_unpaired("--games", games)
    workers = _worker_count(workers, games, backend, ray_address)
    with _user_errors(), writing("--out", out):
        res = run_parity(scenario, agent, games, seed, out, workers=workers, console=console,
                         backend=backend, ray_address=ray_address)
    if not res["games"]:  # every battle failed: there is no score to show
        raise _fail(f"no battle finished: all {res['games_failed']} failed (their errors are in "
                    f"{_shown(out / 'parity.json')})", EXIT_CHECK_FAILED)
    blue, mover = res["blue"], res["first_mover"]
    lo, hi = blue["score_ci95"]
    if not res["fair"]:
        verdict = Text("UNFAIR", style="bold red")
    else:  # too few battles to call a scenario fair (0.5 outside the interval is already evidence)
        verdict = Text("fair", style="bold green") if res["enough_games"] else Text("inconclusive", style="bold yellow")
    line = Text(f"{agent} vs itself on {scenario}, {res['games']} battles: blue score {blue['score']:.3f} "
                f"[{lo:.3f}, {hi:.3f}] (W-D-L {blue['wins']}-{blue['draws']}-{blue['losses']}): ")
    line.append(verdict)
    line.append(" (0.5 inside the 95% interval)" if res["fair"] else " (0.5 outside the 95% interval)")
    console.print(line, soft_wrap=True)
    if not res["enough_games"]:
        err_console.print(Text(f"warning: {games} battles are fewer than the {MIN_PARITY_GAMES} the parity check needs; "
                               f"this verdict cannot pass it", style="yellow"), soft_wrap=True)
    if mover["games"]:
        console.print(f"first mover score {mover['score']:.3f}, blue moved first in "
                      f"{res['blue_first_share']:.0%} of battles", soft_wrap=True)
    for name in ("parity.json", "parity.csv"):
        console.print(f"{name}: {_shown(out / name)}", soft_wrap=True)
    if res["games_failed"] or not res["fair"]:
        raise typer.Exit(EXIT_CHECK_FAILED)


BRIEF_CHARS = 60
"""The longest value a failed ``replay --check`` quotes (longer ones are cut, with their length)."""


def _brief(value: Any) -> str:
    """A short summary of a JSON value: its repr up to :data:`BRIEF_CHARS`, or its kind and size."""
    text = repr(value)
    if len(text) <= BRIEF_CHARS:
        return text
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        keys = ", ".join(map(str, list(value)[:4]))
        return f"an object with {len(value)} keys ({keys}{', …' if len(value) > 4 else ''})"
    return f"{text[:BRIEF_CHARS]}… ({len(text)} characters)"


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The path of the first difference between two JSON values (replay ``a``, re-simulated ``b``), with
    short summaries of both (:func:`_brief`); None if equal. Lists name the first differing index."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            where = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                return f"{where}: only in the {'replay' if key in a else 're-simulated battle'}"
            diff = _first_difference(a[key], b[key], where)
            if diff:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            diff = _first_difference(x, y, f"{path}[{i}]")
            if diff:
                return diff
        if len(a) != len(b):
            i = min(len(a), len(b))
            extra = _brief(a[i] if len(a) > len(b) else b[i])
            return (f"{path}: {len(a)} items (replay) vs {len(b)} (re-simulated); first differing index {i}: "
                    f"{extra} only in the {'replay' if len(a) > len(b) else 're-simulated battle'}")
        return None
    if a != b:
        return f"{path}: {_brief(a)} (replay) vs {_brief(b)} (re-simulated)"
    return None


def _load_replay(path: Path) -> tuple[Any, str, dict[str, Any]]:
    from battleline.env.rules.battle import Battle

    text = read_file_text(path, UserError)  # one line: FILE: file not found / is a directory / not UTF-8 text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno})") from None
    except RecursionError:  # 1,000 nested arrays exhaust the decoder
        raise UserError(f"{path}: {NESTED_TOO_DEEPLY}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a battleline replay (expected a JSON object)")
    try:
        battle = Battle.from_json(text)
    except RecursionError:  # a value the checks follow level by level
        raise UserError(f"{path}: {NESTED_TOO_DEEPLY}") from None
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        if not detail.startswith("not a battleline replay"):  # the engine's own wording already says it
            detail = f"not a battleline replay ({detail})"
        raise UserError(f"{path}: {detail}") from None
    return battle, text, data


def _in_replay(exc: Exception, path: Path) -> str:
    """The message of an error raised while re-simulating replay ``path``: a ConfigError about the saved scenario
    (a dict, shown as ``<dict>``) names the replay file and its ``scenario`` field instead."""
    if isinstance(exc, ConfigError) and exc.file == "<dict>":
        return str(ConfigError(exc.problem, file=str(path), where=f"scenario.{exc.where}" if exc.where else "scenario"))
    return str(exc)


def _replay_players(path: Path, data: dict[str, Any]) -> dict[str, str] | None:
    """The agent names a replay's ``meta.players`` gives each side, or None when it has none.

    Raises:
        UserError: ``meta`` is not an object, or ``meta.players`` not an object naming both sides (one line).
    """
    meta = data.get("meta")
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise UserError(f"{path}: meta: expected an object, got {type(meta).__name__}")
    players = meta.get("players")
    if players is None:
        return None
    if not (isinstance(players, dict) and all(isinstance(players.get(side), str) for side in SIDES)):
        raise UserError(f"{path}: meta.players: expected an object with the agent name of each side "
                        f"({', '.join(SIDES)}), got {json.dumps(players)[:BRIEF_CHARS]}")
    return {side: players[side] for side in SIDES}


@app.command("replay")
def replay_cmd(
    path: Annotated[Path, typer.Argument(help="A replay JSON written by 'battleline play --replay'.")],
    png: Annotated[Path | None, typer.Option(help="Redraw the final table into this PNG.")] = None,
    gif: Annotated[Path | None, typer.Option(help="Animate the battle into this GIF, one frame per game turn "
                                             "and one of the final table (re-simulated from scenario, seed and "
                                             "actions).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Re-simulate from scenario, seed and actions and "
                                        "verify the final state, events and dice match.")] = False,
) -> None:
    """Reload a replay, optionally re-simulate it to check it, and redraw it (PNG) or animate it (GIF)."""
    from battleline.env.rules.battle import Battle

    with _user_errors():
        for flag, out, suffix in (("--png", png, ".png"), ("--gif", gif, ".gif")):
            if out is not None:
                check_output(flag, out, suffix=suffix)
        check_distinct(("--png", png), ("--gif", gif), reads=("the replay", path))
        battle, text, data = _load_replay(path)
        players = _replay_players(path, data)
    if check:
        try:
            again = Battle.resimulate(text)
        except Exception as exc:  # noqa: BLE001 - any failure to re-run is a failed check
            raise _fail(f"replay check failed: re-simulation raised {type(exc).__name__}: "
                        f"{_in_replay(exc, path)}", EXIT_CHECK_FAILED) from None
        mine = json.loads(again.to_json())
        for key in ("actions", "state", "events", "rng"):
            diff = _first_difference(data.get(key), mine.get(key), key)
            if diff:
                raise _fail(f"replay check failed: {diff}", EXIT_CHECK_FAILED)
        console.print(Text(f"check passed: re-simulating {len(battle.actions)} actions gives the same state, "
                           f"{len(battle.events)} events and dice", style="green"), soft_wrap=True)
    written: list[tuple[str, Path]] = []
    title = f"{players['blue']} (blue) vs {players['red']} (red), seed {battle.seed}" if players else None
    if png is not None:
        from battleline.env.render import render_battle

        try:
            with writing("--png", png):
                render_battle(battle, png, title=title)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:  # a hand-edited state
            raise _fail(f"--png: cannot draw {path}'s final state ({type(exc).__name__}: {' '.join(str(exc).split())})",
                        EXIT_USER_ERROR) from None
        written.append(("png", png))
    if gif is not None:
        from battleline.env.render import render_gif

        try:
            with writing("--gif", gif):
                frames = render_gif(battle, gif, title=title)
        except (ConfigError, ValueError, TypeError, KeyError) as exc:  # IllegalActionError is a ValueError
            raise _fail(f"--gif: cannot re-simulate {path} ({type(exc).__name__}: {_in_replay(exc, path)})",
                        EXIT_CHECK_FAILED) from None
        written.append((f"gif ({frames} frame{'' if frames == 1 else 's'})", gif))
    print_result(battle, players, written)


@app.command()
def scenarios() -> None:
    """List the scenarios and army lists in configs/."""
    from battleline.env.rules.army import army_points
    from battleline.env.rules.config import list_armies, list_factions, list_scenarios, load_army, load_faction, load_scenario

    table = Table(title="Scenarios (configs/scenarios)", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("id", "table", "turns", "points", "blue", "red"):
        table.add_column(col, no_wrap=True)
    for sid in list_scenarios():
        try:
            s = load_scenario(sid)
        except ConfigError as exc:
            table.add_row(sid, "", "", "", Text(f"invalid: {exc}", style="red"), "")
            continue
        sides = [s.side(n).army or f"{s.side(n).faction}: {len(s.side(n).placements or [])} placed" for n in SIDES]
        table.add_row(sid, s.table_text(), str(s.turns), str(s.points_limit), *sides)
    console.print(table)

    armies = Table(title="Army lists (configs/armies)", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("id", "faction", "name", "units", "points"):
        armies.add_column(col)
    for aid in list_armies():
        try:
            a = load_army(aid)
            pts = army_points(a, load_faction(a.faction))
        except (ConfigError, ValueError) as exc:
            armies.add_row(aid, "", Text(f"invalid: {exc}", style="red"), "", "")
            continue
        armies.add_row(aid, a.faction, a.name, str(len(a.units)), f"{pts:,}")
    console.print(armies)
    console.print(f"factions: {', '.join(list_factions())}", soft_wrap=True)


@app.command("coverage")
def coverage_cmd(
    battles: Annotated[int, typer.Option(help="Random battles per shipped scenario in the fuzz corpus.")] = 12,
    show: Annotated[str, typer.Option(help="Rows to list: missing, all.")] = "missing",
    module: Annotated[str, typer.Option(
        help="Rule set: core (the CORE rule IDs) or t9a (the T9A variant's T9A.* and CFG.* IDs, played on "
             "pitched_battle_t9a and configs/scenarios/coverage_t9a/).")] = "core",
) -> None:
    """Rule coverage: tests pinning each rule ID of a rule set and how often it fires in a fixed fuzz corpus."""
    from battleline.training import coverage as cov
    from battleline.training.tournament import check_games_total

    with _user_errors():
        if battles < 1:
            raise UserError(f"--battles must be at least 1, got {battles}")
        if show not in ("missing", "all"):
            raise UserError(f"--show must be 'missing' or 'all', got '{show}'")
        if module not in cov.MODULES:
            raise UserError(f"--module must be one of {', '.join(cov.MODULES)}, got '{module}'")
        try:  # every empty case (no tests, no index, no army list, no core rule) is one line, before any battle
            per = len(cov.corpus_games(1, module))  # the corpus' set-ups: battles each
            check_games_total(per * battles, f"--battles {battles:,} × {per} set-ups")
            exceptions = cov.load_exceptions()
            tests, source = cov.known_tests()
        except ValueError as exc:  # CoverageError included
            raise UserError(str(exc)) from None
        if not cov.module_rule_ids(module):
            raise UserError(f"no {cov.MODULE_TITLES[module]} rule ID to report: the rule-ID list names none")
    with _user_errors(), LoggedProgress(console=console, transient=True, unit="games") as progress:
        task = progress.add_task("fuzz corpus", total=len(cov.corpus_games(battles, module)))
        counts = cov.fuzz_corpus_counts(battles, progress=lambda n: progress.advance(task, n), module=module)
    rows = cov.coverage(counts, tests, exceptions, module)
    words = cov.MODULE_TITLES[module]
    table = Table(title=f"{words[0].upper()}{words[1:]} rule coverage", header_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    for col in ("rule", "tests", "fired", "status"):
        table.add_column(col)
    for r in rows:
        full = bool(r.tests) and r.fired > 0
        if show == "missing" and full:
            continue
        status = "ok" if full else (f"excused: {r.exception}" if r.exception else "MISSING")
        table.add_row(r.rule, str(len(r.tests)), str(r.fired), status)
    console.print(table)
    s = cov.summary(rows)
    console.print(
        f"{s['tested_and_fired']}/{s['rules']} {words} rule IDs tested and firing ({s['share']:.0%}); "
        f"{s['tested']} tested, {s['fired']} fired, {s['excused']} excused.", soft_wrap=True
    )
    console.print(f"tests read from {source}", soft_wrap=True, highlight=False)
    least = cov.MIN_SHARE.get(module)
    if least is not None and s["share"] < least:
        console.print(f"below the required {least:.0%} tested and firing", soft_wrap=True, highlight=False)
    if any(not r.ok for r in rows) or (least is not None and s["share"] < least):
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command("rules")
def rules_cmd(
    rule: Annotated[str | None, typer.Argument(
        help="A rule ID (CORE.CC.BREAK_TEST) or the start of IDs (SIEGE.DMG, CORE.CC); none lists every ID.")
    ] = None,
) -> None:
    """Print a rule's text from the shipped rules document (RULESET.md), or every rule under a prefix."""
    from battleline.env.rules.reference import UnknownRuleQuery, lookup, normalize_query, ruleset_rules, summary

    if rule is None:
        for r in ruleset_rules().values():
            console.print(Text(f"{r.id}  {summary(r)}"), soft_wrap=True)
        console.print(f"{len(ruleset_rules())} rules; 'battleline rules ID' prints one, "
                      f"'battleline rules CORE.CC' every rule under a prefix", soft_wrap=True, highlight=False)
        return
    try:
        found = lookup(rule)
    except UnknownRuleQuery as exc:
        raise _fail(str(exc), EXIT_USER_ERROR) from None
    for i, r in enumerate(found):
        if i:
            console.print()
        heading = Text(r.id, style="bold")
        heading.append(f"  (RULESET.md, {r.section})", style="dim")
        console.print(heading, soft_wrap=True)
        console.print(Text(r.text), soft_wrap=True)
    if len(found) > 1:
        console.print()
        console.print(f"{len(found)} rules under {normalize_query(rule)}", soft_wrap=True, highlight=False)


@app.command("tactics")
def tactics_cmd() -> None:
    """List the tactics catalogue (tactics/catalogue.yaml, drawn from tactics.md): id, kind, playable, title."""
    from battleline.tactics.catalogue import CatalogueError, catalogue

    with _user_errors():
        try:
            cat = catalogue()
        except CatalogueError as exc:
            raise UserError(str(exc)) from None
    table = Table(title="Tactics (tactics/catalogue.yaml)", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("id", "kind", "playable", "title"):
        table.add_column(col, no_wrap=col != "title")
    for t in cat.values():
        table.add_row(t.id, t.kind, Text("yes", style="green") if t.playable else Text("no", style="red"), t.title)
    console.print(table)
    n_play = sum(t.playable for t in cat.values())
    n_det = sum(bool(t.detectable) for t in cat.values())
    console.print(f"{len(cat)} tactics, {n_play} playable, {n_det} with a detector", soft_wrap=True)


@app.command("detect")
def detect_cmd(
    path: Annotated[Path, typer.Argument(help="A replay JSON written by 'battleline play --replay'.")],
    all_tactics: Annotated[bool, typer.Option("--all", help="Also list the tactics not detected.")] = False,
) -> None:
    """Detect the tactics each side used in a replay, with the turn and the evidence."""
    from battleline.tactics.detectors import detect

    with _user_errors():
        battle, _, data = _load_replay(path)
        players = _replay_players(path, data) or {}
        try:
            found = [detect(battle, side) for side in range(len(SIDES))]
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise UserError(f"{path}: cannot read the battle's events ({type(exc).__name__}: {exc})") from None
    if not battle.is_over:  # a replay saved mid-battle: e.g. "all 1 mobile units deployed" of a deployment under way
        err_console.print(Text(f"warning: {path}: the battle is unfinished (turn {battle.state.turn}, "
                               f"{battle.state.stage} stage): tactics are detected in the part played only",
                               style="yellow"), soft_wrap=True)
    for i, side in enumerate(SIDES):
        used = {tid: d for tid, d in found[i].items() if d.used}
        who = f" ({players[side]})" if side in players else ""
        console.print(Text(f"{side}{who}: {len(used)} of {len(found[i])} tactics detected", style=f"bold {side}"),
                      soft_wrap=True)
        table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("tactic", no_wrap=True)
        table.add_column("turn", justify="right", no_wrap=True)
        table.add_column("evidence")
        for tid, d in (found[i] if all_tactics else used).items():
            table.add_row(tid, "" if d.turn is None else str(d.turn), d.evidence, style=None if d.used else "dim")
        if table.row_count:
            console.print(table)


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
    seed: Annotated[int, typer.Option(help="Base seed of the label games, searches and evaluation.")] = 0,
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: one per CPU).")] = None,
) -> None:
    """Expert iteration: the search labels plan choices, a plan network learns them and plays without search."""
    from pydantic import ValidationError

    from battleline.training.expert_iteration import ExItRunError, ExItSettings, run
    from battleline.training.play import expand_agent_names

    flags = {"iterations": "--iterations", "games": "--games", "sims": "--sims", "eval_games": "--eval-games",
             "epochs": "--epochs", "self_play_every": "--self-play-every", "opponents": "--opponents",
             "scenario": "--scenario"}
    with _user_errors():
        _check_seed(seed)
        try:
            settings = ExItSettings(scenario=scenario, iterations=iterations, games=games, sims=sims,
                                    self_play_every=self_play_every, opponents=expand_agent_names(opponents),
                                    eval_games=eval_games, epochs=epochs, seed=seed)
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
    console.print(f"plan network: {_shown(out / 'plan_net.pt')} (play it as plans:{_shown(out / 'plan_net.pt')}); "
                  f"mean score alone {last['score_mean']:.3f}; curve: {_shown(out / 'curve.png')}", soft_wrap=True)
    console.print(f"tensorboard: {tensorboard_command()} --logdir {_shown(out / 'tensorboard')}", soft_wrap=True)


if __name__ == "__main__":  # pragma: no cover
    app()
