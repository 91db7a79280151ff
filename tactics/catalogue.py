"""The tactics catalogue: every entry of ``shared/rules/tactics.md`` as validated data.

The entries live in ``tactics/catalogue.yaml`` (data, not code); :func:`load_catalogue`
reads and validates them with pydantic. Each :class:`Tactic` carries its id, title, kind,
the unit roles it needs (tactics.md §0.2), whether the current engine can play it, whether
its use can be seen in an event log, its source lines and its detection signature.

>>> from tactics.catalogue import catalogue
>>> catalogue()["pincers"].kind
'deployment'
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from battleline.env.rules.config import package_data_dir, read_file_text

CATALOGUE_PATH = package_data_dir(__package__) / "catalogue.yaml"
"""The YAML file holding the catalogue."""

Kind = Literal["deployment", "manoeuvre", "magic", "principle"]
KINDS: tuple[str, ...] = ("deployment", "manoeuvre", "magic", "principle")

ROLE_TAGS = frozenset(
    {"INF", "CAV", "HC", "FC", "FLY", "SCOUT", "SWARM", "SHOOT", "WM", "WIZ", "GEN", "BSB", "LT", "ASSET",
     "ENEMY_BLOCK", "ANY"}
)
"""The unit role tags of tactics.md §0.2, plus ``ANY`` (any unit can take the role)."""


class CatalogueError(ValueError):
    """The catalogue file is missing or invalid (one line naming the file and the fault)."""


class Tactic(BaseModel):
    """One entry of tactics.md.

    Attributes:
        id: the tactic id (tactics.md §7 index).
        title: a short English title.
        kind: deployment, manoeuvre, magic or principle.
        section: the tactics.md section, e.g. "4.3".
        source: source lines in ``shared/seeds/000_e657fefe375da8fc.txt``, e.g. "000:L330-L334".
        parent: the umbrella entry of a variant or sub-rule, if any.
        description: the idea in one or two sentences.
        roles: role tags the tactic needs.
        playable: the current engine has what the tactic needs.
        detectable: its use can be seen in a battle's event log (defaults to ``playable``).
        note: why it is not playable or detectable, or how it is read with the current engine.
        signature: the detection signature of tactics.md (thresholds there are proposals).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    title: str = Field(min_length=1)
    kind: Kind
    section: str = Field(pattern=r"^\d+\.\d+$")
    source: str = Field(pattern=r"^000:L\d+")
    parent: str | None = None
    description: str = Field(min_length=1)
    roles: tuple[str, ...] = Field(min_length=1)
    playable: bool
    detectable: bool | None = None
    note: str = ""
    signature: str = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> Tactic:
        unknown = sorted(set(self.roles) - ROLE_TAGS)
        if unknown:
            raise ValueError(f"unknown role tags {unknown}; known: {sorted(ROLE_TAGS)}")
        if self.detectable is None:
            object.__setattr__(self, "detectable", self.playable)
        if self.detectable and not self.playable:
            raise ValueError("a tactic that is not playable cannot be detectable")
        if (not self.playable or not self.detectable) and not self.note:
            raise ValueError("a note must say why the tactic is not playable or not detectable")
        return self


class Catalogue(BaseModel):
    """The whole catalogue file: a list of tactics with unique ids and known parents."""

    model_config = ConfigDict(extra="forbid")

    tactics: list[Tactic]

    @model_validator(mode="after")
    def _check(self) -> Catalogue:
        ids = [t.id for t in self.tactics]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate tactic ids {dupes}")
        orphans = sorted(t.id for t in self.tactics if t.parent is not None and t.parent not in ids)
        if orphans:
            raise ValueError(f"tactics with an unknown parent: {orphans}")
        return self


def load_catalogue(path: str | Path = CATALOGUE_PATH) -> dict[str, Tactic]:
    """Read and validate a catalogue YAML file; returns id -> :class:`Tactic` in file order.

    Raises:
        CatalogueError: the file is missing, not YAML, or fails validation.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(read_file_text(path, CatalogueError))
    except OSError as exc:
        raise CatalogueError(f"{path}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise CatalogueError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    try:
        cat = Catalogue.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise CatalogueError(f"{path}: {where}: {err['msg']}") from None
    return {t.id: t for t in cat.tactics}


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Tactic]:
    """The catalogue of ``tactics/catalogue.yaml`` (loaded once). Do not mutate the dict."""
    return load_catalogue()


def playable_ids() -> list[str]:
    """Ids of the tactics the current engine can play, in catalogue order."""
    return [t.id for t in catalogue().values() if t.playable]


def detectable_ids() -> list[str]:
    """Ids of the tactics whose use :mod:`tactics.detectors` looks for, in catalogue order."""
    return [t.id for t in catalogue().values() if t.detectable]


__all__ = ["CATALOGUE_PATH", "Catalogue", "CatalogueError", "KINDS", "ROLE_TAGS", "Tactic", "catalogue",
           "detectable_ids", "load_catalogue", "playable_ids"]
