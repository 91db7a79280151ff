"""Engine and battle throughput on one core: ``python -m benchmarks.run [--quick]`` (``make bench``).

Measures, as the median over several repetitions:

* full battles per second, agent time included: line_advance vs line_advance
  and random vs random (:func:`training.play.play_battle`), with the full
  armies and again with magic and war machines switched off (the scenario's
  ``magic: false`` and ``war_machines: false``: the same armies without their
  wizards, bound spells and war machines);
* engine decisions per second: the time spent in ``legal_actions()`` plus
  ``apply()`` only, over battles in which a seeded uniform-random policy picks
  among the legal actions.

The process pins itself to one CPU (where the OS allows it) and limits BLAS
threads to one, so the figures are per core. ``--cpu-time`` times by the
process's CPU clock rather than the wall clock, which keeps the figures
steadier on a machine busy with other work.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import platform  # noqa: E402
import random  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Annotated, Any  # noqa: E402

import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from benchmarks import check_at_least, check_scenario, flag_errors  # noqa: E402

console = Console(highlight=False)


def pin_to_one_core() -> str:
    """Restrict this process to one CPU; returns a description of what was done."""
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[0]})
        return f"pinned to CPU {cpus[0]}"
    return "not pinned (no sched_setaffinity on this OS)"


def without_magic_and_war_machines(scenario: str) -> dict[str, Any]:
    """The scenario as a dict with ``magic: false`` and ``war_machines: false`` (env.rules.config.ScenarioConfig)."""
    from battleline.env.rules.config import load_scenario

    return {**load_scenario(scenario).model_dump(mode="json"), "magic": False, "war_machines": False}


def battles_per_second(
    scenario: str | dict[str, Any], blue: str, red: str, battles: int, seed0: int,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Play ``battles`` battles (seeds seed0, seed0+1, ...) and return battles per wall-clock second."""
    from battleline.training.play import play_battle

    t0 = clock()
    for k in range(battles):
        play_battle(scenario, blue, red, seed=seed0 + k)
    return battles / (clock() - t0)


def decisions_per_second(scenario: str, battles: int, seed0: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Engine decisions per second: time in ``legal_actions()`` + ``apply()`` over random battles."""
    from battleline.env.rules.battle import Battle

    engine_s, decisions = 0.0, 0
    for k in range(battles):
        battle = Battle.from_scenario(scenario, seed=seed0 + k)
        rng = random.Random(seed0 + k)
        while not battle.is_over:
            t0 = clock()
            legal = battle.legal_actions()
            t1 = clock()
            action = rng.choice(legal)
            t2 = clock()
            battle.apply(action)
            engine_s += (t1 - t0) + (clock() - t2)
            decisions += 1
    return decisions / engine_s if engine_s > 0 else float("nan")


def _repeat(fn: Callable[[int], float], repetitions: int) -> list[float]:
    return [fn(1000 * r) for r in range(repetitions)]


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             check=False)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def main(
    quick: Annotated[bool, typer.Option("--quick", help="Fewer battles and repetitions (a smoke run).")] = False,
    repetitions: Annotated[int | None, typer.Option(help="Repetitions per benchmark (default 5, quick 3).")] = None,
    battles: Annotated[int | None, typer.Option(help="Battles per repetition (default 4, quick 1).")] = None,
    scenario: Annotated[str, typer.Option(help="Scenario to play.")] = "pitched_battle",
    cpu_time: Annotated[bool, typer.Option("--cpu-time", help="Time by this process's CPU clock instead of the "
                                           "wall clock: steadier on a busy shared machine.")] = False,
) -> None:
    """Measure battles per second and engine decisions per second on one core; print a table."""
    with flag_errors():
        check_at_least(1, repetitions=repetitions, battles=battles)
        check_scenario(scenario)
    reps = repetitions or (3 if quick else 5)
    n = battles or (1 if quick else 4)
    clock = time.process_time if cpu_time else time.perf_counter
    pinned = pin_to_one_core()
    command = "python -m benchmarks.run" + ("" if len(sys.argv) < 2 else " " + shlex.join(sys.argv[1:]))
    console.print(f"command: {command}", soft_wrap=True)
    console.print(f"python {platform.python_version()}, {platform.machine()} {platform.processor() or ''}, "
                  f"{pinned}, commit {_commit()}, scenario {scenario}, {reps} repetitions x {n} battles, "
                  f"{'CPU' if cpu_time else 'wall-clock'} time",
                  soft_wrap=True)

    table = Table(title="battleline benchmarks (one core, median over repetitions)", header_style="bold")
    for col, justify in (("benchmark", "left"), ("median", "right"), ("min", "right"), ("max", "right"),
                         ("unit", "left")):
        table.add_column(col, justify=justify, no_wrap=True)

    plain = without_magic_and_war_machines(scenario)
    cases: list[tuple[str, str, Callable[[int], float]]] = [
        ("battle: line_advance vs line_advance", "battles/s",
         lambda s: battles_per_second(scenario, "line_advance", "line_advance", n, s, clock)),
        ("  same, magic and war machines off", "battles/s",
         lambda s: battles_per_second(plain, "line_advance", "line_advance", n, s, clock)),
        ("battle: random vs random", "battles/s",
         lambda s: battles_per_second(scenario, "random", "random", n, s, clock)),
        ("  same, magic and war machines off", "battles/s",
         lambda s: battles_per_second(plain, "random", "random", n, s, clock)),
        ("engine: legal_actions + apply", "decisions/s",
         lambda s: decisions_per_second(scenario, n, s, clock)),
    ]
    notes: list[str] = []
    for label, unit, fn in cases:
        with console.status(f"{label} ..."):
            try:
                values = _repeat(fn, reps)
            except ImportError as exc:
                table.add_row(label, "n/a", "", "", unit)
                notes.append(f"{label}: not measured ({exc})")
                continue
        fmt = "{:,.0f}" if unit == "decisions/s" else "{:.2f}"
        table.add_row(label, fmt.format(statistics.median(values)), fmt.format(min(values)),
                      fmt.format(max(values)), unit)
    console.print(table)
    for note in notes:
        console.print(note, soft_wrap=True)


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
