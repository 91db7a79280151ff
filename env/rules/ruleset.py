"""The rule IDs of RULESET.md, and the check that every event names a real one.

``rule_ids.txt`` beside this module lists every ID of the authoritative
ruleset (one per line). :func:`check_rule_id` makes an event or a dice roll
with an unknown ID fail loudly (issue: "an unknown rule ID in code or data
fails loudly").
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

RULE_IDS_FILE = files(__package__) / "rule_ids.txt"


class UnknownRuleError(ValueError):
    """An event or roll named a rule ID that RULESET.md does not define."""


@lru_cache(maxsize=1)
def rule_ids() -> frozenset[str]:
    """Every rule ID of RULESET.md (CORE, SIEGE, T9A, SKIRMISH, ACT, CFG)."""
    lines = RULE_IDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def core_rule_ids() -> list[str]:
    """The CORE.* rule IDs, sorted."""
    return sorted(r for r in rule_ids() if r.startswith("CORE."))


@lru_cache(maxsize=4096)
def check_rule_id(rule: str) -> str:
    """Return ``rule`` if RULESET.md defines it.

    Raises:
        UnknownRuleError: the ID is not in RULESET.md.
    """
    if rule not in rule_ids():
        raise UnknownRuleError(f"unknown rule ID {rule!r} (not in RULESET.md)")
    return rule
