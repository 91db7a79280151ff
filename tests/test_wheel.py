"""The installed wheel works from any folder, with one import name (``battleline``) and its data inside it.

One test builds the wheel (compiling the core) from a copy of the package's sources (``pip wheel --no-deps``), makes a
fresh virtual environment and installs the wheel with ``pip install -c constraints.txt`` (pip's cache and its
configured package index; nothing else is fetched; ``--no-compile`` skips byte-compiling torch's thousands of
modules, which halves the install); every check then runs the installed ``battleline``
command or Python from a folder outside the repository. Building and installing take about a minute.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("battleline", "env", "agents", "tactics", "training", "configs")
"""The folders the wheel is built from (pyproject's package-dir), copied with pyproject.toml and README.md."""
BUILD_LEFTOVERS = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "*.egg-info", "*.so")
"""Left out of the copy: the wheel's build must compile the core itself."""
BUILD_FILES = ("pyproject.toml", "README.md", "setup.py", "MANIFEST.in")
"""Copied beside the folders: the build's declaration (setup.py builds the compiled core)."""
NOT_DATA = (".py", ".pyc", ".so", ".cpp", ".hpp")
"""Suffixes of files that are code, not package data."""


class Installed:
    """The wheel installed in a fresh virtual environment: ``run`` a command there from a folder outside the repo."""

    def __init__(self, venv: Path, elsewhere: Path) -> None:
        self.bin, self.elsewhere = venv / "bin", elsewhere
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        self.env["PATH"] = f"{self.bin}{os.pathsep}{self.env.get('PATH', '')}"
        self.env["PYTHONIOENCODING"] = "utf-8"

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``args`` (a command of the venv's bin/) in :attr:`elsewhere`; with ``check``, exit 0 is required."""
        result = subprocess.run([str(self.bin / args[0]), *args[1:]], cwd=self.elsewhere, env=self.env,
                                capture_output=True, text=True, encoding="utf-8", timeout=300)
        if check:
            assert result.returncode == 0, f"{' '.join(args)}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result


def _build_and_install(tmp: Path) -> Installed:
    source = tmp / "source"  # a copy: the in-tree build (build/, *.egg-info) stays out of the checkout
    for name in SOURCES:
        shutil.copytree(ROOT / name, source / name, ignore=BUILD_LEFTOVERS)
    for name in BUILD_FILES:
        shutil.copy2(ROOT / name, source / name)
    dist = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)],
                   check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("battleline-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", "-c", str(ROOT / "constraints.txt"),
                    str(wheel)], check=True, capture_output=True, timeout=600)
    elsewhere = tmp / "elsewhere"
    elsewhere.mkdir()
    return Installed(venv, elsewhere)


def test_installed_wheel_works_from_any_folder(tmp_path: Path) -> None:
    """One build, one venv, every check (one test, so that pytest-xdist never builds it twice)."""
    try:
        installed = _build_and_install(tmp_path)
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"{' '.join(map(str, exc.cmd))}: exit {exc.returncode}\n{(exc.stderr or b'').decode()[-3000:]}")
    for check in (_scenarios_lists_the_shipped_scenarios, _play_a_pitched_battle, _tactics_rules_version_and_coverage,
                  _python_api_record_and_data, _package_data_ships_every_data_file):
        check(installed)


def _scenarios_lists_the_shipped_scenarios(installed: Installed) -> None:
    out = installed.run("battleline", "scenarios").stdout
    assert " pitched_battle " in out and " siege " in out
    assert "men_marcher_host" in out and "factions: dwarfs, elves, men, orcs" in out


def _play_a_pitched_battle(installed: Installed) -> None:
    result = installed.run("battleline", "play", "--scenario", "pitched_battle", "--blue", "line_advance", "--red",
                           "random", "--seed", "1")
    first = result.stdout.splitlines()[0]
    assert first.startswith(("winner: blue (line_advance)", "winner: red (random)", "winner: draw")), result.stdout
    assert "scenario: pitched_battle, seed: 1" in result.stdout


def _tactics_rules_version_and_coverage(installed: Installed) -> None:
    tactics = installed.run("battleline", "tactics").stdout
    assert "Tactics (tactics/catalogue.yaml)" in tactics and " tactics, " in tactics.splitlines()[-1]
    rules = installed.run("battleline", "rules", "CORE.CC.BREAK_TEST").stdout
    assert rules == ("CORE.CC.BREAK_TEST  (RULESET.md, 3.7 Close combat)\n"
                     "A losing unit passes if 2D6 ≤ Ld − difference. A natural double 1 always passes. "
                     "(src: 000:L992-L996, L1010-L1014)\n")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert installed.run("battleline", "--version").stdout == f"battleline {project['version']}\n"
    assert "Rule coverage" in installed.run("battleline", "coverage", "--help").stdout


def _python_api_record_and_data(installed: Installed) -> None:
    """import battleline, gym.make and one legal (masked) step; the RECORD's only top-level name is battleline;
    coverage reads the shipped test index (no tests/ beside an installed package)."""
    snippet = textwrap.dedent("""
        import importlib.metadata as md
        import importlib.util

        import gymnasium as gym
        import numpy as np

        import battleline
        from battleline.training import coverage

        env = gym.make("battleline/PitchedBattle-v0")
        obs, info = env.reset(seed=0)
        mask = env.unwrapped.action_masks()
        assert mask.any() and np.array_equal(mask, obs["action_mask"].astype(bool))
        action = int(np.flatnonzero(mask)[0])
        obs, reward, terminated, truncated, info = env.step(action)
        assert not info.get("illegal_action"), info
        print("step", action, float(reward), terminated, truncated)

        files = md.distribution("battleline").files
        print("top", sorted({f.parts[0] for f in files if f.parts[0] != ".." and not f.parts[0].endswith(".dist-info")}))
        print("plain", [n for n in ("env", "agents", "tactics", "training", "configs") if importlib.util.find_spec(n)])
        tests, source = coverage.known_tests()
        print("tests", source, len(tests) > 200)
        print("ids", len(gym.registry.keys() & {"battleline/PitchedBattle-v0", "battleline/Siege-v0"}))
    """)
    lines = installed.run("python", "-c", snippet).stdout.splitlines()
    assert lines[0].startswith("step "), lines
    assert lines[1:] == ["top ['battleline']", "plain []", "tests the shipped index test_index.json True", "ids 2"]


def _package_data_ships_every_data_file(installed: Installed) -> None:
    """Every data file of the source folders is in the installed package: configs (scenarios, coverage set-ups,
    siege, training, armies, factions, coverage exceptions), the tactic catalogue and its validation, the rule-ID
    list, the rules document and the coverage test index."""
    data = sorted(
        (("battleline" if name == "battleline" else f"battleline/{name}") + "/" + p.relative_to(ROOT / name).as_posix())
        for name in SOURCES for p in (ROOT / name).rglob("*")
        if p.is_file() and p.suffix not in NOT_DATA and "__pycache__" not in p.parts
    )
    snippet = "import importlib.metadata as md; print('\\n'.join(sorted(str(f) for f in md.distribution('battleline').files)))"
    record = set(installed.run("python", "-c", snippet).stdout.splitlines())
    assert "battleline/configs/scenarios/coverage/coverage_magic_a.yaml" in data
    assert {"battleline/env/rules/RULESET.md", "battleline/env/rules/rule_ids.txt", "battleline/training/test_index.json",
            "battleline/tactics/catalogue.yaml", "battleline/tactics/validation.json"} <= set(data)
    assert [f for f in data if f not in record] == []
    compiled = [f for f in record if f.startswith("battleline/env/rules/_kernel") and f.endswith(".so")]
    assert len(compiled) == 1, compiled  # the compiled core, built by the wheel's own build
    probe = "from battleline.env.rules import kernel; print(kernel.available(), kernel.native.__name__)"
    assert installed.run("python", "-c", probe).stdout.split() == ["True", "battleline.env.rules._kernel"]
