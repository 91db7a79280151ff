"""The grammar of T9A attributes and protections, and model Sizes.

An attribute or a protection is written ``name``, ``name (params)`` or
``name (params against conditions)``; a protection may put a comma before
``against`` ("Aegis (4+, against Flaming)", T9A.PP.AGAINST). The conditions
are alternatives separated by commas (OR), each a run of criteria separated by
spaces (AND); a criterion is an army book (a faction id), a Size, a troop type
or a special rule (T9A.AA.CONDITIONS, variant_t9a.md AA-4..AA-8). An attribute
applies to a wound pool only when every model in it meets the conditions.

Examples::

    parse("multiple_wounds (2 against large monster, gigantic)")
    # Attribute(name='multiple_wounds', params='2', conditions=(('large', 'monster'), ('gigantic',)))
    parse("aegis (4+, against flaming)")
    # Attribute(name='aegis', params='4+', conditions=(('flaming',),))
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from battleline.env.rules.state import UnitState

Size = Literal["standard", "large", "gigantic"]
SIZES: tuple[str, ...] = ("standard", "large", "gigantic")
"""T9A.SIZE: the three Sizes, smallest first."""
TROOP_TYPES: tuple[str, ...] = ("infantry", "monstrous_infantry", "cavalry", "monster", "chariot", "war_machine")
"""The troop types a criterion may name (CORE.TYPE.*)."""
ATTACK_CRITERIA: tuple[str, ...] = ("flaming", "divine", "lethal_strike", "magical", "close_combat", "shooting")
"""Criteria that describe the attack rather than the target: a protection's "against" may name these
(T9A.PP.AGAINST: "Aegis (4+, against Flaming)")."""

_NAME = re.compile(r"[a-z][a-z0-9_]*")
_FORM = re.compile(r"^\s*(?P<name>[a-z][a-z0-9_]*)\s*(?:\((?P<inner>[^()]*)\))?\s*$")


class ConditionError(ValueError):
    """An attribute or protection text that does not parse, or names an unknown criterion (one line)."""


@dataclass(frozen=True, slots=True)
class Attribute:
    """One parsed attribute or protection (T9A.AA.CONDITIONS, T9A.PP.AGAINST).

    Attributes:
        name: its id, e.g. ``multiple_wounds``.
        params: the parameter text, e.g. ``"2"``, ``"d3"``, ``"4+"``; ``""`` when none.
        conditions: alternatives (OR) of criteria runs (AND); ``()`` means it always applies.
    """

    name: str
    params: str = ""
    conditions: tuple[tuple[str, ...], ...] = ()

    @property
    def value(self) -> int | None:
        """The leading whole number of ``params`` (``"4+"`` → 4, ``"2"`` → 2), or None (``"d3"``, ``""``)."""
        m = re.match(r"\d+", self.params)
        return int(m.group()) if m else None


def parse(text: str, known: Iterable[str] = ()) -> Attribute:
    """Parse ``name (params against conditions)`` (T9A.AA.CONDITIONS).

    Args:
        text: the written attribute, lower case, ids in snake_case.
        known: extra words a criterion may be besides army books, Sizes, troop types,
            attack criteria and special rules (for example the module's own rule names).

    Raises:
        ConditionError: the text does not parse, a condition is empty, or a criterion is unknown.
    """
    m = _FORM.match(text)
    if m is None:
        raise ConditionError(f"'{text}' is not of the form name, name (params) or name (params against conditions)")
    name, inner = m.group("name"), (m.group("inner") or "").strip()
    params, conds = inner, ""
    words = inner.split()
    if "against" in words:
        head, _, tail = inner.partition("against")
        params, conds = head.strip().rstrip(",").strip(), tail.strip()
        if not conds:
            raise ConditionError(f"'{text}': 'against' names no condition")
    if params and not re.fullmatch(r"[a-z0-9+]+", params.replace(" ", "")):
        raise ConditionError(f"'{text}': parameter '{params}' is not a number, a dice expression or X+")
    conditions: list[tuple[str, ...]] = []
    if conds:
        allowed = _criteria() | set(known)
        for alt in conds.split(","):
            run = tuple(alt.split())
            if not run:
                raise ConditionError(f"'{text}': an empty condition between commas")
            for word in run:
                if word not in allowed:
                    raise ConditionError(f"'{text}': unknown criterion '{word}' (an army book, a Size, a troop "
                                         f"type, a special rule or one of {', '.join(ATTACK_CRITERIA)})")
            conditions.append(run)
    return Attribute(name, params.replace(" ", ""), tuple(conditions))


def _criteria() -> set[str]:
    from battleline.env.rules.config import SPECIAL_RULES, list_factions

    return {*SIZES, *TROOP_TYPES, *ATTACK_CRITERIA, *list_factions(), *SPECIAL_RULES}


def size(u: UnitState) -> str:
    """The unit's Size (T9A.SIZE, DEFAULT D-SZ): ``standard``, ``large`` or ``gigantic``.

    Standard: infantry, cavalry and war machines; Large: monstrous infantry, chariots and monsters
    that are not Large Targets; Gigantic: Large Targets. A ``size`` in the unit type's ``t9a:``
    block overrides it.
    """
    given = u.t9a.get("size")
    if given:
        return str(given)
    if any(r == "large_target" for r in u.special_rules):
        return "gigantic"
    if u.troop_type in ("monstrous_infantry", "chariot", "monster"):
        return "large"
    return "standard"


def meets(u: UnitState, run: tuple[str, ...], attack: frozenset[str] = frozenset()) -> bool:
    """Whether ``u`` (and the attack, for attack criteria) meets every criterion of ``run`` (AND)."""
    from battleline.env.rules.special_rules import has_rule

    for word in run:
        if word in ATTACK_CRITERIA:
            ok = word in attack
        elif word in SIZES:
            ok = size(u) == word
        elif word in TROOP_TYPES:
            ok = u.troop_type == word
        elif word == u.faction:
            ok = True
        else:
            ok = has_rule(u, word) or word in _t9a_names(u)
        if not ok:
            return False
    return True


def _t9a_names(u: UnitState) -> set[str]:
    """The names of the unit's T9A protections and attributes (its ``t9a:`` block)."""
    attributes = (a if isinstance(a, str) else a["attribute"] for a in u.t9a.get("attributes", ()))  # T9A.AA.SCOPE
    texts = [*u.t9a.get("protections", ()), *attributes]
    return {t.split("(")[0].strip() for t in texts}


def applies(attr: Attribute, pool: Iterable[UnitState], attack: frozenset[str] = frozenset()) -> bool:
    """Whether ``attr`` applies to a wound pool (T9A.AA.CONDITIONS, AA-8): with no conditions always;
    otherwise every unit of ``pool`` must meet one of the alternatives. An empty pool never qualifies."""
    units = list(pool)
    if not attr.conditions:
        return True
    return bool(units) and all(any(meets(u, run, attack) for run in attr.conditions) for u in units)
