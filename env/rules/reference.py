"""The rules reference: the text of each rule ID, read from the RULESET.md shipped beside this module.

``RULESET.md`` (a copy of the authoritative rules index, ``shared/rules/RULESET.md``) gives each rule
as a Markdown bullet at the start of a line, ``- **CORE.CC.BREAK_TEST**: text``, whose text goes on
in the indented lines, blank lines and tables that follow, up to the next line at column 0 that is
neither a table row nor blank (the next rule, a heading). A few IDs are rows of a table introduced
by a rule (``| **CORE.MAGIC.SPELL.FIRE.1** | Fireball | 5 | ...``, under ``CORE.MAGIC.SPELLS``):
such a row's text names each column, and the rule that introduces its table.

``battleline rules ID`` prints a rule (or every rule under a prefix such as ``SIEGE.DMG``) through
:func:`lookup`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files

RULESET_FILE = files(__package__) / "RULESET.md"
"""The shipped rules document (``battleline/env/rules/RULESET.md``)."""

_BULLET = re.compile(r"^- \*\*([A-Z0-9_]+(?:\.[A-Z0-9_]+)+)\*\*:\s?(.*)$")
_ROW_ID = re.compile(r"^\*\*([A-Z0-9_]+(?:\.[A-Z0-9_]+)+)\*\*$")


@dataclass(frozen=True)
class Rule:
    """One rule of RULESET.md.

    Attributes:
        id: the rule ID, e.g. ``"CORE.CC.BREAK_TEST"``.
        section: the heading the rule stands under, e.g. ``"3.7 Close combat"``.
        text: the rule's text as the document gives it (Markdown, lines joined by newlines, its
            continuation lines' two-space indent and trailing blank lines removed), without the
            ``- **ID**:`` that opens it.
        line: the 1-based line of RULESET.md where the rule starts.
    """

    id: str
    section: str
    text: str
    line: int


class UnknownRuleQuery(LookupError):
    """A query that names no rule ID and no prefix of one; the message is one line with close IDs."""


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row ``| a | b |``, stripped."""
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _is_separator(row: str) -> bool:
    return all(set(c) <= set("-: ") and c for c in _cells(row))


def _table_rows(rule: Rule, body: list[str], first_line: int) -> list[Rule]:
    """The rules given as rows of the tables in ``body`` (a rule's lines): each row whose first cell is ``**ID**``
    becomes a Rule whose text lists ``column: value`` and names ``rule``, whose table it is."""
    out: list[Rule] = []
    header: list[str] | None = None
    for offset, line in enumerate(body):
        if not line.startswith("|"):
            header = None
            continue
        if header is None:
            header = _cells(line)
            continue
        if _is_separator(line):
            continue
        cells = _cells(line)
        match = _ROW_ID.match(cells[0]) if cells else None
        if match is None:
            continue
        pairs = [f"{name}: {value}" for name, value in zip(header[1:], cells[1:])]
        intro = rule.text.splitlines()[0] if rule.text else ""
        text = "\n".join([*pairs, f"(a row of the table of {rule.id}: {intro})"])
        out.append(Rule(match.group(1), rule.section, text, first_line + offset))
    return out


def parse_ruleset(text: str) -> dict[str, Rule]:
    """Every rule of a RULESET.md text, by ID, in document order (see the module docstring for the layout).

    Returns a dict {rule ID: Rule}; bullets and table rows that open with ``**ID**`` are rules,
    every other line (the preamble, headings, the conflicts table) is not.
    """
    rules: dict[str, Rule] = {}
    section = ""
    current: tuple[str, int, list[str]] | None = None  # (ID, line, text lines)

    def close() -> None:
        if current is None:
            return
        rule_id, line, body = current
        while body and not body[-1].strip():
            body.pop()
        rule = Rule(rule_id, section, "\n".join(body), line)
        rules[rule_id] = rule
        for row in _table_rows(rule, body, line):
            rules.setdefault(row.id, row)

    for number, line in enumerate(text.splitlines(), start=1):
        match = _BULLET.match(line)
        if match is not None:
            close()
            current = (match.group(1), number, [match.group(2)])
        elif line.startswith("#"):
            close()
            current = None
            section = line.lstrip("#").strip()
        elif current is not None and (not line.strip() or line[0] in " \t|"):
            current[2].append(line[2:] if line.startswith("  ") else line.rstrip())
        else:
            close()
            current = None
    close()
    return rules


@lru_cache(maxsize=1)
def ruleset_rules() -> dict[str, Rule]:
    """The rules of the shipped RULESET.md (:data:`RULESET_FILE`), by ID (parsed once)."""
    return parse_ruleset(RULESET_FILE.read_text(encoding="utf-8"))


def normalize_query(query: str) -> str:
    """A query as IDs are written: upper case, without surrounding blanks or a closing ``.*`` or ``.``
    (``" core.cc.* "`` → ``"CORE.CC"``)."""
    wanted = query.strip().upper()
    if wanted.endswith(".*"):
        wanted = wanted[:-2]
    return wanted.rstrip(".")


def lookup(query: str, rules: dict[str, Rule] | None = None) -> list[Rule]:
    """The rules a query names: the rule of that ID, or every rule under that prefix, in document order.

    ``query`` is a rule ID (``CORE.CC.BREAK_TEST``) or the start of IDs ending at a dot (``SIEGE.DMG``,
    ``CORE.CC``, also written ``CORE.CC.`` or ``CORE.CC.*``); letters' case does not matter.
    ``rules``: the rules to search (default :func:`ruleset_rules`).

    Raises:
        UnknownRuleQuery: nothing matches: "unknown rule ID 'CORE.CC.BRAKE_TEST'; close IDs: CORE.CC.BREAK_TEST, ...".
    """
    rules = ruleset_rules() if rules is None else rules
    wanted = normalize_query(query)
    if wanted in rules:
        return [rules[wanted]]
    found = [r for r in rules.values() if wanted and r.id.startswith(f"{wanted}.")]
    if found:
        return found
    raise UnknownRuleQuery(f"unknown rule ID '{query}'{_suggestion(wanted, rules)}")


def _suggestion(wanted: str, rules: dict[str, Rule]) -> str:
    """``"; close IDs: A, B"`` (difflib, IDs and their prefixes), or a pointer to the list when none is close."""
    prefixes = {".".join(r.split(".")[:n]) for r in rules for n in range(1, r.count(".") + 1)}
    close = difflib.get_close_matches(wanted, sorted(set(rules) | prefixes), n=3, cutoff=0.6)
    if close:
        return f"; close IDs: {', '.join(close)}"
    return "; 'battleline rules' lists every rule ID"


def summary(rule: Rule, width: int = 80) -> str:
    """The first line of a rule's text, cut to ``width`` characters (with ``…``)."""
    first = rule.text.splitlines()[0] if rule.text else ""
    return first if len(first) <= width else first[: width - 1].rstrip() + "…"
