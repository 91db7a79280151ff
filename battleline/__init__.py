"""battleline: AI opponents and tactics research on a rank-and-file fantasy battle-and-siege wargame.

One import name, with the repository's folders mapped into it:

* :mod:`battleline.env`: the Gymnasium and PettingZoo environments;
* :mod:`battleline.env.rules`: the rules engine (no Gymnasium, no torch);
* :mod:`battleline.agents`: random, scripted and learned agents;
* :mod:`battleline.tactics`: the tactic catalogue, deployments, manoeuvres, detectors;
* :mod:`battleline.training`: training, tournaments, the ``battleline`` command;
* :mod:`battleline.configs`: the shipped data (scenarios, factions, army lists, training runs).

Importing ``battleline`` registers every Gymnasium id (``battleline/PitchedBattle-v0``, ...),
so ``gymnasium.make("battleline:battleline/PitchedBattle-v0")`` works without a prior import.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

_SOURCE_ROOT = Path(__file__).resolve().parent.parent
if (_SOURCE_ROOT / "pyproject.toml").is_file() and (_SOURCE_ROOT / "env" / "rules").is_dir():
    # A source checkout: env/, agents/, tactics/, training/ and configs/ stand beside this folder
    # (the wheel puts them inside it), so the checkout itself is importable, whatever install
    # the environment holds.
    __path__.append(str(_SOURCE_ROOT))

try:
    __version__ = version("battleline")
except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
    __version__ = "0+unknown"

from battleline import env as _env  # noqa: E402,F401 - registers the Gymnasium ids

__all__ = ["__version__"]
