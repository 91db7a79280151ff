"""The demo's hint names a ``battleline`` command that runs from where the demo was started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from battleline.training import demo


def test_launcher_is_the_bare_command_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo.shutil, "which", lambda name: f"/somewhere/bin/{name}")
    assert demo.launcher() == "battleline"


def test_launcher_is_the_script_beside_python_off_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "battleline").write_text("#!/bin/sh\n")
    monkeypatch.setattr(demo.shutil, "which", lambda name: None)
    monkeypatch.setattr(sys, "executable", str(bin_dir / "python"))
    monkeypatch.chdir(tmp_path)
    assert demo.launcher() == str(Path(".venv") / "bin" / "battleline")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert demo.launcher() == str(bin_dir / "battleline")
