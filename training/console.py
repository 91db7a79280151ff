"""The rich consoles of the command line: full-width tables also when the output is piped to a file, and progress
that still reports to a log file."""

from __future__ import annotations

import codecs
import io
import os
import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import Progress, TaskID

PIPED_WIDTH = 200
"""Columns a console uses when its stream is not a terminal and ``COLUMNS`` is unset (rich's own default is 80,
which cuts the right-hand columns of wide tables such as ``battleline evaluate``'s)."""


def make_console(stderr: bool = False) -> Console:
    """A ``rich.console.Console`` on stdout (or stderr) without syntax highlighting.

    On a terminal it takes the terminal's width; piped or redirected, ``COLUMNS`` when set, else
    :data:`PIPED_WIDTH` columns (tables are only as wide as their content needs).
    """
    stream = sys.stderr if stderr else sys.stdout
    replace_unencodable(stream)
    piped = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, highlight=False, width=PIPED_WIDTH if piped else None)


def replace_unencodable(stream: object) -> None:
    """Let a text stream whose encoding is not UTF-8 (an ASCII locale, a Windows code page when the output is
    redirected) write a character it cannot encode as ``?`` instead of raising UnicodeEncodeError: the rules'
    text (``≤``, ``−``) and the result lines (``—``) would otherwise end the command in a traceback."""
    if not isinstance(stream, io.TextIOWrapper) or stream.errors != "strict":
        return
    try:
        utf8 = codecs.lookup(stream.encoding).name == "utf-8"
    except LookupError:
        utf8 = False
    if not utf8:
        stream.reconfigure(errors="replace")


PIPED_INTERVAL = 30.0
"""Seconds between the plain progress lines :class:`LoggedProgress` prints when its console is not a terminal."""


class LoggedProgress(Progress):
    """A ``rich.progress.Progress`` that also reports to a log: when its console is not a terminal (output piped
    or redirected, where rich draws nothing until the end), it prints one plain line per task every
    ``interval`` seconds and when the task completes, e.g. ``tournament: 120/2640 games (5%), 0:01:02 elapsed,
    eta 0:19:30``, and the bar rich would draw at the end is left out. On a terminal it is rich's bar unchanged.

    Args:
        columns: rich progress columns, as for ``Progress``.
        interval: seconds between lines (default :data:`PIPED_INTERVAL`).
        unit: what a step counts (``games``, ``steps``), shown in the lines.
        kwargs: passed to ``Progress`` (``console``, ``transient``, ``disable``, ...).
    """

    def __init__(self, *columns: Any, interval: float = PIPED_INTERVAL, unit: str = "", **kwargs: Any) -> None:
        super().__init__(*columns, **kwargs)
        if not self.console.is_terminal:  # the plain lines stand in for the bar: rich's final bar is not drawn
            self.live.transient = True
        self.interval = interval
        self.unit = unit
        self._logged: dict[TaskID, float] = {}
        self._finished: set[TaskID] = set()

    def update(self, task_id: TaskID, **kwargs: Any) -> None:  # type: ignore[override]
        """``Progress.update``, then a log line if one is due."""
        super().update(task_id, **kwargs)
        self._log(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        """``Progress.advance``, then a log line if one is due."""
        super().advance(task_id, advance)
        self._log(task_id)

    def _log(self, task_id: TaskID) -> None:
        if self.disable or self.console.is_terminal or task_id in self._finished:
            return
        task = self._tasks[task_id]
        now = time.monotonic()
        last = self._logged.setdefault(task_id, now)
        done = task.total is not None and task.completed >= task.total
        if not done and now - last < self.interval:
            return
        self._logged[task_id] = now
        if done:
            self._finished.add(task_id)
        line = f"{task.description}: {task.completed:.0f}"
        if task.total is not None:
            line += f"/{task.total:.0f}"
        line = f"{line} {self.unit}".rstrip()
        if task.total:
            line += f" ({task.percentage:.0f}%)"
        line += f", {_clock(task.elapsed or 0.0)} elapsed"
        if not done and task.time_remaining is not None:
            line += f", eta {_clock(task.time_remaining)}"
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def _clock(seconds: float) -> str:
    """``h:mm:ss`` of a duration in seconds."""
    s = int(seconds)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
