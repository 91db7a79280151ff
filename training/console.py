"""The rich consoles of the command line: full-width tables also when the output is piped to a file."""

from __future__ import annotations

import os
import sys

from rich.console import Console

PIPED_WIDTH = 200
"""Columns a console uses when its stream is not a terminal and ``COLUMNS`` is unset (rich's own default is 80,
which cuts the right-hand columns of wide tables such as ``battleline evaluate``'s)."""


def make_console(stderr: bool = False) -> Console:
    """A ``rich.console.Console`` on stdout (or stderr) without syntax highlighting.

    On a terminal it takes the terminal's width; piped or redirected, ``COLUMNS`` when set, else
    :data:`PIPED_WIDTH` columns (tables are only as wide as their content needs).
    """
    stream = sys.stderr if stderr else sys.stdout
    piped = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, highlight=False, width=PIPED_WIDTH if piped else None)
