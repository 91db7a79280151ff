"""The shared part of the ``battleline`` command line: the Typer app, its consoles and the one-line error handling.

:mod:`training.cli` (play, tournament, parity, replay, ...) and :mod:`training.cli_learning` (train, evaluate,
expert-iteration) register their commands on :data:`app`; the entry point is ``battleline.training.cli:app``.
User errors print one red line ``error: <message>`` on stderr and exit with code 2 (:func:`_user_errors`).
"""


from __future__ import annotations

import argparse
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

try:  # typer 0.26 and later carry their own copy of Click
    from typer._click.exceptions import NoArgsIsHelpError, UsageError
except ImportError:  # pragma: no cover - an older typer runs on Click itself (NoArgsIsHelpError: Click 8.2 on)
    import click.exceptions

    UsageError = click.exceptions.UsageError  # type: ignore[misc]
    NoArgsIsHelpError = getattr(click.exceptions, "NoArgsIsHelpError", ())  # type: ignore[misc]

from battleline.env.rules.config import ConfigError
from battleline.env.rules.state import SIDES
from battleline.training.console import make_console

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
