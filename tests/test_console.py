"""The command line's consoles keep wide tables whole when the output is piped."""

from __future__ import annotations

import io

import pytest

from training.console import PIPED_WIDTH, make_console


def test_a_piped_console_is_wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert make_console().width == PIPED_WIDTH == 200


def test_columns_wins_over_the_piped_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "97")
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert make_console(stderr=True).width == 97
