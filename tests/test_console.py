"""The command line's consoles keep wide tables whole when the output is piped."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from battleline.training.console import PIPED_WIDTH, LoggedProgress, make_console


def test_a_piped_console_is_wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("sys.stdout", io.StringIO())
    assert make_console().width == PIPED_WIDTH == 200


def test_columns_wins_over_the_piped_width(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "97")
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert make_console(stderr=True).width == 97


def _piped(width: int = 200) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=False, width=width), buf


def test_logged_progress_prints_plain_lines_to_a_log() -> None:
    console, buf = _piped()
    with LoggedProgress(console=console, interval=0.0, unit="games") as bar:
        task = bar.add_task("tournament", total=4)
        for _ in range(4):
            bar.advance(task)
    lines = [ln for ln in buf.getvalue().splitlines() if ln.startswith("tournament:")]
    assert [ln.split(",")[0] for ln in lines] == [
        "tournament: 1/4 games (25%)", "tournament: 2/4 games (50%)", "tournament: 3/4 games (75%)",
        "tournament: 4/4 games (100%)",
    ]
    assert "eta" not in lines[-1] and "elapsed" in lines[-1]
    assert [ln for ln in buf.getvalue().splitlines() if ln.strip()] == lines  # no final bar after the lines


def test_logged_progress_waits_for_its_interval_but_always_reports_the_end() -> None:
    console, buf = _piped()
    with LoggedProgress(console=console, interval=3600.0) as bar:
        task = bar.add_task("training", total=3)
        bar.update(task, completed=1)
        bar.update(task, completed=3)
        bar.update(task, completed=3)  # the end is reported once
    lines = [ln for ln in buf.getvalue().splitlines() if ln.startswith("training:")]
    assert len(lines) == 1 and lines[0].startswith("training: 3/3 (100%), 0:00:0")


def test_logged_progress_is_rich_alone_on_a_terminal_and_silent_when_disabled() -> None:
    buf = io.StringIO()
    with LoggedProgress(console=Console(file=buf, force_terminal=True), interval=0.0, unit="games") as bar:
        task = bar.add_task("tournament", total=2)
        bar.advance(task, 2)
    assert "tournament: 2/2 games" not in buf.getvalue()
    console, piped = _piped()
    with LoggedProgress(console=console, interval=0.0, disable=True) as bar:
        bar.advance(bar.add_task("x", total=1))
    assert piped.getvalue() == ""


@pytest.mark.parametrize("encoding", ["ascii", "latin-1", "cp1252"])
def test_a_console_on_a_narrow_encoding_replaces_what_it_cannot_write(monkeypatch: pytest.MonkeyPatch,
                                                                      encoding: str) -> None:
    """Output redirected under an ASCII locale or a Windows code page: the rules' '≤' and '−' print as '?'
    ('battleline rules CORE.CC.BREAK_TEST' ended in a UnicodeEncodeError traceback)."""
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding)
    monkeypatch.setattr("sys.stdout", stream)
    make_console().print("2D6 ≤ Ld − difference", soft_wrap=True)
    stream.flush()
    assert raw.getvalue().decode(encoding) == "2D6 ? Ld ? difference\n"


def test_a_utf8_stream_is_left_strict(monkeypatch: pytest.MonkeyPatch) -> None:
    stream = io.TextIOWrapper(io.BytesIO(), encoding="UTF8")
    monkeypatch.setattr("sys.stdout", stream)
    make_console()
    assert stream.errors == "strict"
