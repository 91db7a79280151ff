"""Events: every rule that fires records one, carrying its rule ID.

The event log is the replay, the input of the tactic detectors and the proof
that a rule is implemented (rule coverage). Events are plain dicts so that the
log is JSON as it stands.
"""

from __future__ import annotations

from typing import Any

from battleline.env.rules.ruleset import check_rule_id

Event = dict[str, Any]

EVENT_FIELDS: tuple[tuple[str, type], ...] = (("rule", str), ("turn", int), ("phase", str))
"""The fields every event has (:func:`make_event`) and their JSON types; a replay's events are checked against them."""


def make_event(rule: str, turn: int, phase: str, **data: Any) -> Event:
    """Build an event.

    Args:
        rule: the RULESET.md rule ID, e.g. ``"CORE.CC.BREAK_TEST"``; an
            unknown ID raises :class:`~env.rules.ruleset.UnknownRuleError`.
        turn: game turn (0 during deployment).
        phase: phase name.
        **data: rule-specific fields (unit uids, dice, results, distances in inches).
    """
    return {"rule": check_rule_id(rule), "turn": turn, "phase": phase, **data}


def events_for(events: list[Event], rule: str) -> list[Event]:
    """The events of ``events`` whose rule ID equals or starts with ``rule`` + "."."""
    return [e for e in events if e["rule"] == rule or e["rule"].startswith(rule + ".")]
