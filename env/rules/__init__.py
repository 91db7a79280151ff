"""The rules engine: battles, sieges and their rules, with no Gymnasium and no torch.

Docstrings, events and tests cite rules by ID (``CORE.CC.BREAK_TEST``, ``SIEGE.DMG.*``, ...).
The text of each, as this engine implements it, ships with the package
(``battleline/env/rules/RULESET.md``): ``battleline rules CORE.CC.BREAK_TEST`` prints one rule,
``battleline rules SIEGE.DMG`` every rule under a prefix, and
:func:`battleline.env.rules.reference.lookup` finds them from Python.
"""
