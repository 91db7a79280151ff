"""The old and the new engine side by side in one sitting: ``python -m benchmarks.compare --baseline 75bcf87``.

::

    python -m benchmarks.compare --baseline 75bcf87 [--repetitions N] [--quick] [--out benchmarks/results/compare.json]
    python -m benchmarks.compare --baseline-dir ../old-checkout      # an existing checkout instead of a worktree

The baseline commit is checked out into a temporary ``git worktree`` beside the current tree
(removed at the end), unless ``--baseline-dir`` names a checkout to use as it is. Every figure
of every repetition runs in its own process (:mod:`benchmarks.compare_worker`) with the side's
tree as working directory and ``PYTHONPATH``, so each side imports its own code, whichever
layout it has (the baseline 75bcf87 predates the ``battleline`` package: its code is the
top-level ``env``, ``training`` and ``benchmarks``); the worker checks the files it imported
and the JSON records them. Both sides use this interpreter and its environment, and both
trees are byte-compiled first (as an installed package is), so no measuring process spends
its clock compiling the modules it imports.

Each process is pinned to the same CPU (``--cpu``, default the first this process may use),
with one BLAS and one torch thread, and times by its CPU clock (:func:`time.process_time`),
which keeps the figures steady on a machine shared with other work. The repetitions alternate
old, new, old, new: repetition ``r`` measures every figure on the old tree then on the new one
with the same seeds (``1000 * r``), and each figure's median over the repetitions is compared.

Figures (``pitched_battle``; the issue's bar for the new/old ratio in brackets):

* battles/s, line_advance v line_advance and random v random (each tree's own
  ``benchmarks.run.battles_per_second``: whole battles, agents included) [5x, 5x];
* engine decisions/s, time in ``legal_actions()`` + ``apply()`` only (each tree's own
  ``benchmarks.run.decisions_per_second``, a seeded random policy) [8x];
* ``BattleEnv`` learner steps/s with uniformly random masked actions, a random opponent
  inside the env [5x];
* MaskablePPO training steps/s: one ``learn()`` of ``--ppo-steps`` steps (one rollout and its
  update, each tree's default PPO network), model construction excluded [3x]; once with one
  environment, once with 8 environments stepped in the learner's process (SB3's ``DummyVecEnv``,
  on both trees; a rollout of ``--ppo-steps`` steps in all, minibatches of 256 and 4 epochs as
  the shipped ``ppo_vs_scripted`` config), which is how training runs now (``vec_env: dummy``).

It prints a table (figure, old, new, ratio, bar, met), the command, both commits, the CPU model,
the load average and the date, and writes them with every repetition's value to ``--out``
(default ``benchmarks/results/compare.json``; ``out/compare_quick.json`` with ``--quick``,
a smoke run of one battle or a few steps per figure, whose ratios say nothing).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from battleline.training.cli_common import UserError, check_output, writing
from benchmarks import check_at_least, check_scenario, flag_errors

console = Console(highlight=False, width=None if Console().is_terminal else 120)  # a log file gets the whole table

TREE = Path(__file__).resolve().parent.parent
"""The current tree: the repository root this file belongs to."""
WORKER = Path(__file__).resolve().parent / "compare_worker.py"


@dataclass(frozen=True)
class Figure:
    """One compared figure: the worker's ``key``, the table's ``label``, its ``unit``, the issue's ``bar``
    (the least new/old ratio asked for) and which size flag sets its work per repetition."""

    key: str
    label: str
    unit: str
    bar: float
    size: str  # "battles" or "env_steps" or "ppo_steps"


FIGURES = (
    Figure("battles_line_advance", "battles/s line_advance v line_advance", "battles/s", 5.0, "battles"),
    Figure("battles_random", "battles/s random v random", "battles/s", 5.0, "battles"),
    Figure("decisions", "engine decisions/s", "decisions/s", 8.0, "battles"),
    Figure("env_steps", "BattleEnv learner steps/s", "steps/s", 5.0, "env_steps"),
    Figure("ppo_steps", "MaskablePPO training steps/s", "steps/s", 3.0, "ppo_steps"),
    Figure("ppo_steps_x8", "MaskablePPO training steps/s, 8 envs", "steps/s", 3.0, "ppo_steps"),
)
"""The figures of the fast-engine issue, in the table's order (the PPO figure with one and with 8 environments)."""

FULL_SIZES = {"battles": 4, "env_steps": 1000, "ppo_steps": 512}
QUICK_SIZES = {"battles": 1, "env_steps": 50, "ppo_steps": 16}


class WorkerError(RuntimeError):
    """A measuring process failed (its last stderr line is in the message)."""


# ---------------------------------------------------------------------- git and the machine
def _git(args: list[str], cwd: Path) -> str:
    """``git ARGS`` in ``cwd``; stdout stripped. Raises UserError with git's own last line on failure."""
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"git {' '.join(args)}: {exc}") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["failed"])[-1]
        raise UserError(f"git {' '.join(args)}: {last}")
    return out.stdout.strip()


def resolve_commit(rev: str, repo: Path = TREE) -> str:
    """The full commit id of ``rev`` in ``repo``; UserError "--baseline X: not a commit of REPO" otherwise."""
    try:
        return _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo)
    except UserError:
        raise UserError(f"--baseline {rev}: not a commit of {repo}") from None


def tree_commit(tree: Path) -> dict[str, Any]:
    """``{"commit": full id or "unknown", "dirty": bool or None}`` of the checkout at ``tree``."""
    try:
        commit = _git(["rev-parse", "HEAD"], tree)
        dirty = bool(_git(["status", "--porcelain", "--untracked-files=no"], tree))
    except UserError:
        return {"commit": "unknown", "dirty": None}
    return {"commit": commit, "dirty": dirty}


def build_core(tree: Path) -> None:
    """Build a tree's compiled core in place (``setup.py build_ext --inplace``) when it has one (a ``setup.py``).

    Raises:
        UserError: the build failed (its last output lines are in the message).
    """
    if not (tree / "setup.py").exists():
        return  # an engine from before the compiled core
    console.print(f"building the compiled core of {tree} ...")
    out = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        tail = " | ".join((out.stderr or out.stdout).strip().splitlines()[-3:])
        raise UserError(f"--baseline: building the compiled core of {tree} failed: {tail}")


def compile_tree(tree: Path) -> None:
    """Byte-compile a tree's Python files into its ``__pycache__`` folders, as ``pip install`` does for a user.

    Without it, a shell with ``PYTHONDONTWRITEBYTECODE`` set (or a fresh checkout) makes every measuring process
    compile every module it imports, some of them inside the clock (the agents' modules are imported by the first
    battle): a constant of tens of milliseconds that weighs more on the faster tree.

    The tree's own ``.venv``, ``build`` and ``out`` folders are left out (matched below ``tree`` only, so a tree
    that itself lies under a folder of such a name is still compiled).

    Raises:
        UserError: compiling failed (a syntax error in the tree): the first failing file, its line and the error.
    """
    skip = "^" + re.escape(str(tree).rstrip("/")) + r"/(.*/)?(\.venv|build|out)/"
    out = subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", skip, str(tree)],
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise UserError(f"byte-compiling {tree} failed: {compile_failure(out.stdout + out.stderr)}")


_FAILED_FILE = re.compile(r"^\*\*\* Error compiling '(?P<file>.*)'\.\.\.$")
_FAILED_LINE = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+)')
_FAILURE = re.compile(r"^(Sorry: )?(?P<error>\w*(Error|Exception)\b.*)$")


def compile_failure(output: str) -> str:
    """``compileall -q``'s output summed up on one line: the first failing file, its line where given, the error,
    and how many other files failed (e.g. ``/t/a.py, line 3: SyntaxError: invalid syntax (and 1 more file)``)."""
    lines = output.splitlines()
    starts = [i for i, text in enumerate(lines) if _FAILED_FILE.match(text)]
    if not starts:  # not compileall's own report (the interpreter itself failed): its last lines
        return " | ".join(text.strip() for text in lines[-3:] if text.strip()) or "no output"
    first = starts[0]
    block = lines[first + 1:starts[1] if len(starts) > 1 else len(lines)]
    where = _FAILED_FILE.match(lines[first])["file"]  # type: ignore[index]
    line = next((m["line"] for m in map(_FAILED_LINE.match, block) if m), None)
    error = next((m["error"] for m in map(_FAILURE.match, (t.strip() for t in block)) if m), "failed")
    more = len(starts) - 1
    return (f"{where}{f', line {line}' if line else ''}: {error}"
            + (f" (and {more} more file{'s' * (more != 1)})" if more else ""))


def _exit_on_term(signum: int, frame: object) -> None:
    """SIGTERM → SystemExit(143), so that ``finally`` blocks (the worktree's removal) run."""
    raise SystemExit(128 + signum)


@contextmanager
def baseline_tree(commit: str) -> Iterator[Path]:
    """A temporary detached ``git worktree`` of ``commit`` beside the current tree; removed on exit,
    also when the run is stopped with SIGTERM (``kill``), which exits with status 143."""
    folder = Path(tempfile.mkdtemp(prefix="battleline-baseline-"))
    path = folder / "tree"
    _git(["worktree", "add", "--detach", str(path), commit], TREE)
    previous = signal.signal(signal.SIGTERM, _exit_on_term)
    try:
        build_core(path)
        yield path
    finally:
        signal.signal(signal.SIGTERM, previous)
        try:
            _git(["worktree", "remove", "--force", str(path)], TREE)
        except UserError as exc:  # pragma: no cover - only if git itself fails here
            console.print(f"warning: {exc}", soft_wrap=True)
        shutil.rmtree(folder, ignore_errors=True)


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo's first ``model name``), else :func:`platform.processor`."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def default_cpu() -> int | None:
    """The first CPU this process may run on (None where the OS cannot pin)."""
    return min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def _load() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


# ---------------------------------------------------------------------- measuring
def run_worker(tree: Path, figure: str, size: int, seed: int, scenario: str, cpu: int | None) -> dict[str, Any]:
    """Measure one figure on ``tree`` in a fresh process (see :mod:`benchmarks.compare_worker`); its JSON record.

    Raises:
        WorkerError: the process failed or printed no record (the message holds its last stderr line).
    """
    cmd = [sys.executable, "-P", str(WORKER), "--root", str(tree), "--figure", figure, "--size", str(size),
           "--seed", str(seed), "--scenario", scenario]
    if cpu is not None:
        cmd += ["--cpu", str(cpu)]
    env = {**os.environ, "PYTHONPATH": str(tree), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    out = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        last = (out.stderr.strip().splitlines() or [f"no output, exit code {out.returncode}"])[-1]
        raise WorkerError(f"{figure} on {tree}: {last}")
    return json.loads(lines[-1])


def median_or_nan(values: list[float]) -> float:
    """The median of ``values``; NaN when empty."""
    return statistics.median(values) if values else float("nan")


def summarise(values: dict[str, dict[str, list[float]]]) -> list[dict[str, Any]]:
    """Per figure: each side's values and median, the ratio new/old of the medians, the bar and whether it is met."""
    rows = []
    for fig in FIGURES:
        old, new = values[fig.key]["old"], values[fig.key]["new"]
        m_old, m_new = median_or_nan(old), median_or_nan(new)
        ratio = m_new / m_old if m_old > 0 else float("nan")
        rows.append({
            "figure": fig.key, "label": fig.label, "unit": fig.unit,
            "old": {"median": m_old, "min": min(old), "max": max(old), "values": old},
            "new": {"median": m_new, "min": min(new), "max": max(new), "values": new},
            "ratio": ratio, "bar": fig.bar, "met": bool(math.isfinite(ratio) and ratio >= fig.bar),
        })
    return rows


def _fmt(value: float, unit: str) -> str:
    return f"{value:,.0f}" if unit in ("decisions/s", "steps/s") else f"{value:.2f}"


def results_table(rows: list[dict[str, Any]], old_name: str, new_name: str) -> Table:
    """The rich table: figure, old and new medians (min-max), ratio, bar, met."""
    table = Table(title="old and new engine, one core, CPU time, medians", header_style="bold")
    table.add_column("figure")
    table.add_column(f"old {old_name}", justify="right")
    table.add_column(f"new {new_name}", justify="right")
    table.add_column("ratio", justify="right")
    table.add_column("bar", justify="right")
    table.add_column("met", justify="center")
    for row in rows:
        u = row["unit"]
        cells = [f"{_fmt(row[s]['median'], u)} ({_fmt(row[s]['min'], u)}-{_fmt(row[s]['max'], u)})" for s in ("old", "new")]
        table.add_row(row["label"], *cells, f"{row['ratio']:.2f}x", f"{row['bar']:g}x",
                      "[green]yes[/]" if row["met"] else "[red]no[/]")
    return table


def measure_sides(
    trees: dict[str, Path], sizes: dict[str, int], repetitions: int, scenario: str, cpu: int | None,
) -> tuple[dict[str, dict[str, list[float]]], dict[str, dict[str, str]]]:
    """Alternate old, new, old, new over ``repetitions`` x figures; every value and the files each side imported.

    Raises:
        WorkerError: a measuring process failed.
    """
    values = {fig.key: {"old": [], "new": []} for fig in FIGURES}
    files: dict[str, dict[str, str]] = {}
    total = repetitions * len(FIGURES) * len(trees)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("measuring", total=total)
        for rep in range(repetitions):
            for fig in FIGURES:
                for side, tree in trees.items():
                    progress.update(task, description=f"rep {rep + 1}/{repetitions} {side} {fig.key}")
                    record = run_worker(tree, fig.key, sizes[fig.size], 1000 * rep, scenario, cpu)
                    values[fig.key][side].append(float(record["value"]))
                    files[side] = {"engine_file": record["engine_file"], "benchmarks_file": record["benchmarks_file"],
                                   "layout": record["layout"]}
                    progress.console.print(f"rep {rep + 1}/{repetitions}  {side}  {fig.label}: "
                                           f"{_fmt(float(record['value']), fig.unit)} {fig.unit}", soft_wrap=True)
                    progress.advance(task)
    return values, files


def main(
    baseline: Annotated[str, typer.Option(help="The old engine's commit (checked out into a temporary worktree).")]
    = "75bcf87",
    baseline_dir: Annotated[Path | None, typer.Option(help="Use this checkout as the old side instead of a new "
                                                      "worktree of --baseline.")] = None,
    repetitions: Annotated[int | None, typer.Option(help="Repetitions per side and figure (default 5, quick 1).")]
    = None,
    quick: Annotated[bool, typer.Option("--quick", help="A smoke run: 1 battle, 50 env steps, 16 PPO steps "
                                        "per figure.")] = False,
    battles: Annotated[int | None, typer.Option(help="Battles per repetition for the battle and decision "
                                                "figures (default 4).")] = None,
    env_steps: Annotated[int | None, typer.Option(help="BattleEnv steps per repetition (default 1000).")] = None,
    ppo_steps: Annotated[int | None, typer.Option(help="MaskablePPO steps per repetition, one rollout "
                                                  "(default 512, at least 8).")] = None,
    scenario: Annotated[str, typer.Option(help="Scenario to measure on.")] = "pitched_battle",
    cpu: Annotated[int | None, typer.Option(help="The CPU to pin every measuring process to (default the first "
                                            "allowed).")] = None,
    out: Annotated[Path | None, typer.Option(help="JSON report (default benchmarks/results/compare.json; "
                                             "out/compare_quick.json with --quick).")] = None,
) -> None:
    """Measure the baseline and the current tree side by side; print the ratios; write the JSON report."""
    out = out or Path("out/compare_quick.json" if quick else "benchmarks/results/compare.json")
    with flag_errors():
        check_at_least(1, repetitions=repetitions, battles=battles, env_steps=env_steps)
        check_at_least(8, ppo_steps=ppo_steps)
        check_scenario(scenario)
        allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
        if cpu is not None and allowed is not None and cpu not in allowed:
            raise UserError(f"--cpu {cpu}: not one of this process's CPUs {allowed}")
        if baseline_dir is not None and not baseline_dir.is_dir():
            raise UserError(f"--baseline-dir {baseline_dir}: not a directory")
        commit = resolve_commit(baseline) if baseline_dir is None else None
        check_output("--out", out)
    reps = repetitions or (1 if quick else 5)
    sizes = dict(QUICK_SIZES if quick else FULL_SIZES)
    sizes.update({k: v for k, v in (("battles", battles), ("env_steps", env_steps), ("ppo_steps", ppo_steps))
                  if v is not None})
    cpu = cpu if cpu is not None else default_cpu()
    command = "python -m benchmarks.compare" + ("" if len(sys.argv) < 2 else " " + shlex.join(sys.argv[1:]))
    date = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat()
    console.print(f"command: {command}", soft_wrap=True)
    console.print(f"{date}, {cpu_model()}, python {platform.python_version()}, pinned to CPU {cpu}, CPU time, "
                  f"{reps} repetitions, sizes {sizes}, scenario {scenario}", soft_wrap=True)
    load_before = _load()
    with flag_errors():
        with (baseline_tree(commit) if baseline_dir is None else _as_is(baseline_dir.resolve())) as old_tree:
            old_info = tree_commit(old_tree)
            new_info = tree_commit(TREE)
            console.print(f"old: {old_info['commit']} at {old_tree}", soft_wrap=True)
            console.print(f"new: {new_info['commit']}{' (uncommitted changes)' if new_info['dirty'] else ''} "
                          f"at {TREE}", soft_wrap=True)
            for tree in (old_tree, TREE):
                compile_tree(tree)
            try:
                values, files = measure_sides({"old": old_tree, "new": TREE}, sizes, reps, scenario, cpu)
            except WorkerError as exc:
                raise UserError(f"measuring failed: {exc}") from None
    rows = summarise(values)
    console.print(results_table(rows, old_info["commit"][:7], new_info["commit"][:7]))
    met = sum(row["met"] for row in rows)
    console.print(f"{met} of {len(rows)} bars met. command: {command}", soft_wrap=True)
    report = {
        "command": command, "date": date, "cpu_model": cpu_model(), "python": platform.python_version(),
        "pinned_cpu": cpu, "clock": "time.process_time (CPU time)", "load_average": {"before": load_before,
                                                                                     "after": _load()},
        "scenario": scenario, "repetitions": reps, "quick": quick, "sizes": sizes,
        "old": {**old_info, "baseline": baseline if baseline_dir is None else None, **files["old"]},
        "new": {**new_info, **files["new"]},
        "figures": rows, "bars_met": met,
    }
    with flag_errors(), writing("--out", out):
        write_whole(out, json.dumps(report, indent=1) + "\n")
    console.print(f"wrote {out}", soft_wrap=True)


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all: into a temporary file beside it, renamed over it, so
    that a failed write (a full disk) leaves the report already there as it was.

    Raises:
        OSError: the write or the rename failed (its ``filename`` is ``path``; the temporary file is removed).
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(path)) from None


@contextmanager
def _as_is(path: Path) -> Iterator[Path]:
    build_core(path)  # up to date: a no-op
    yield path


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
