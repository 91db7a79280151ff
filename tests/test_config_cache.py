"""config.load_scenario keeps a checked scenario until a file it depends on changes, and hands out copies."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from battleline.env.rules.config import CONFIG_DIR, ConfigError, load_scenario


def _write(path: Path, data: dict, mtime_ns: int) -> None:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    data = yaml.safe_load((CONFIG_DIR / "scenarios" / "pitched_battle.yaml").read_text(encoding="utf-8"))
    path = tmp_path / "mine.yaml"
    _write(path, {**data, "turns": 5}, 1_000_000_000)
    assert load_scenario(path).turns == 5
    _write(path, {**data, "turns": 4}, 2_000_000_000)
    assert load_scenario(path).turns == 4
    _write(path, {**data, "turns": "many"}, 3_000_000_000)
    with pytest.raises(ConfigError, match="turns"):
        load_scenario(path)


def test_each_caller_gets_its_own_copy() -> None:
    first = load_scenario("pitched_battle")
    first.turns = 99
    assert load_scenario("pitched_battle").turns != 99
    assert load_scenario("pitched_battle") is not load_scenario("pitched_battle")


def test_same_name_in_two_folders_and_a_same_stamp_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept scenario follows the file's resolved path and bytes: the same name in another folder, or an edit
    that keeps the size and the modification time, is read afresh."""
    data = yaml.safe_load((CONFIG_DIR / "scenarios" / "pitched_battle.yaml").read_text(encoding="utf-8"))
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    _write(a / "s.yaml", {**data, "turns": 6}, 5_000_000_000)
    _write(b / "s.yaml", {**data, "turns": 4}, 5_000_000_000)
    monkeypatch.chdir(a)
    assert load_scenario("s.yaml").turns == 6
    monkeypatch.chdir(b)
    assert load_scenario("s.yaml").turns == 4
    _write(b / "s.yaml", {**data, "turns": 5}, 5_000_000_000)  # same size, same time
    assert load_scenario("s.yaml").turns == 5
