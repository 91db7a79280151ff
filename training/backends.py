"""Where tournament games run: in this process, on a local process pool, or as Ray tasks.

:func:`run_games` calls ``fn(spec, *args)`` once per game spec and returns the
rows in the order of the specs, whatever order they finish in. ``fn`` must be a
module-level function (it is pickled by reference for worker processes and Ray
workers) whose result depends only on its arguments, so every backend gives the
same rows for the same specs.

Backends (:data:`BACKENDS`):

* ``process`` — :class:`concurrent.futures.ProcessPoolExecutor` with
  ``workers`` processes started by a fork server (:data:`START_METHOD`);
  ``workers=1`` plays in this process.
* ``ray`` — one Ray task per game (``num_cpus=1`` each). An already initialised
  Ray is used as it is; otherwise ``ray.init(address=ray_address)`` joins a
  cluster, or, without an address, starts a local instance with ``workers``
  CPUs and no dashboard, shut down again at the end. The machines of a cluster
  need this package installed (``pip install -e .``).

Callers size ``workers`` with :func:`worker_count`: at most one per game and
one per CPU of this machine.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from battleline.training.console import LoggedProgress

BACKENDS = ("process", "ray")
"""The names :func:`run_games` accepts as ``backend``."""

START_METHOD = "forkserver"
"""How the process pool starts its workers: from a clean server process, not by forking this one. A fork
copies torch's OpenMP thread pool in whatever state the parent left it (the parent loads each ``model:PATH``
entrant and runs its policy once to check it), and a forked worker's first policy forward then waits
forever on that pool's barrier."""


def worker_count(workers: int | None, games: int) -> tuple[int, str | None]:
    """The workers to start for ``games`` games: ``workers`` (None: one per CPU) capped at ``games`` (more
    would have no game to play) and at :func:`os.cpu_count` (more would only share the CPUs), and at least 1.
    It sizes the process pool and a local Ray instance; a Ray cluster (``ray_address``) brings its own CPUs.

    Returns:
        The count, and why a requested ``workers`` was lowered ("the number of games", "the machine's CPU
        count", or both joined by "and"); None when ``workers`` is None or not lowered.

    Raises:
        ValueError: ``workers`` < 1.
    """
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    cpus = os.cpu_count() or 1
    caps = {"the number of games": max(1, games), "the machine's CPU count": cpus}
    n = min(workers or cpus, *caps.values())
    if workers is None or n == workers:
        return n, None
    return n, " and ".join(why for why, cap in caps.items() if cap == n)


class Spec(Protocol):
    """A game spec: anything with its position ``index`` in the schedule."""

    index: int


Row = dict[str, Any]


def _serial(fn: Callable[..., Row], specs: Sequence[Spec], args: tuple[Any, ...]) -> Iterator[Row]:
    for spec in specs:
        yield fn(spec, *args)


def _process_pool(fn: Callable[..., Row], specs: Sequence[Spec], args: tuple[Any, ...], workers: int) -> Iterator[Row]:
    pool = ProcessPoolExecutor(max_workers=min(workers, len(specs)), mp_context=multiprocessing.get_context(START_METHOD))
    try:
        # Submit (and so start the worker processes) before the caller's progress bar starts its thread.
        futures = [pool.submit(fn, spec, *args) for spec in specs]
        for fut in as_completed(futures):
            yield fut.result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


RAY_CONNECT_TIMEOUT = 5.0
"""Seconds :func:`check_ray_address` waits for the cluster's port to answer."""


def check_ray_address(address: str, timeout: float = RAY_CONNECT_TIMEOUT) -> None:
    """Check that a Ray cluster address (``host:port`` or ``ray://host:port``; ``auto``/``local`` are left to Ray)
    answers on its port, so that joining an unreachable cluster fails at once rather than in Ray's retries.

    Raises:
        ConnectionError: the address is malformed or nothing answers there (one line naming it).
    """
    target = address.removeprefix("ray://")
    if target in ("auto", "local"):
        return
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise ConnectionError(f"--ray-address {address}: expected host:port (or ray://host:port, auto)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__).lower()
        raise ConnectionError(f"--ray-address {address}: cannot reach a Ray cluster there ({reason})") from None


def _ray_tasks(fn: Callable[..., Row], specs: Sequence[Spec], args: tuple[Any, ...], workers: int,
               address: str | None) -> Iterator[Row]:
    import ray

    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        started = True
    pending: list[Any] = []
    try:
        task = ray.remote(num_cpus=1)(fn)
        shared = [ray.put(a) for a in args]
        pending = [task.remote(spec, *shared) for spec in specs]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()


def run_games(
    fn: Callable[..., Row],
    specs: Sequence[Spec],
    args: tuple[Any, ...] = (),
    backend: str = "process",
    workers: int = 1,
    ray_address: str | None = None,
    console: Console | None = None,
    progress: bool = True,
    description: str = "games",
) -> list[Row]:
    """Run ``fn(spec, *args)`` for every spec on ``backend``, with a rich progress bar.

    Args:
        fn: a module-level function returning one row (a dict) per spec.
        specs: the games; each has an ``index``.
        args: further arguments of ``fn``, the same for every game (picklable).
        backend: ``"process"`` or ``"ray"`` (see the module docstring).
        workers: processes for ``process`` (1: this process), CPUs of a local Ray instance for ``ray``.
        ray_address: the Ray cluster to join (``ray``); None starts a local instance when none is running.
        console: where the progress bar goes (default: stdout).
        progress: show the progress bar.
        description: the progress bar's label.

    Returns:
        The rows, sorted by their spec's ``index`` (each row must carry ``index``).

    Raises:
        ValueError: an unknown backend or ``workers`` < 1.
        ImportError: ``backend="ray"`` without Ray installed (``pip install -e '.[dev]'``).
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend '{backend}'; known backends: {', '.join(BACKENDS)}")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if not specs:
        return []
    if backend == "ray":
        rows = _ray_tasks(fn, specs, args, workers, ray_address)
    elif workers == 1:
        rows = _serial(fn, specs, args)
    else:
        rows = _process_pool(fn, specs, args, workers)
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    out: list[Row] = []
    first = next(rows)  # start the workers before the progress bar's thread
    with LoggedProgress(*columns, console=console or Console(), disable=not progress, unit="games") as bar:
        task = bar.add_task(description, total=len(specs))
        out.append(first)
        bar.advance(task)
        for row in rows:
            out.append(row)
            bar.advance(task)
    return sorted(out, key=lambda r: r["index"])


__all__ = ["BACKENDS", "run_games"]
