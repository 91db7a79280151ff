"""The T9A variant modules (RULESET.md §6.1): rules a scenario switches on with ``modules:``.

A core scenario may name any subset of :data:`T9A_MODULES` (CFG.MODULES); each
module replaces the CORE rules it names (the ⇒ of RULESET.md) and emits its
T9A.* rule IDs. The battle records its T9A modules in ``BattleState.modules``;
rules code asks :func:`on` whether a module plays.

Submodules:

* :mod:`.conditions`: the attribute and protection grammar "Name (X against C)"
  (T9A.AA.CONDITIONS) and the model Sizes (T9A.SIZE);
* :mod:`.profile`: the ``t9a:`` block of a faction's unit type (validated data).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from battleline.env.rules.state import BattleState

CHARACTERS = "t9a.characters"
"""T9A.CHAR.LEAVE, T9A.MARCH.*, T9A.CC.MAKE_WAY."""
PROTECTIONS = "t9a.protections"
"""T9A.PP.*, T9A.SAVE.ONE_SPECIAL, T9A.STOMP, T9A.SIZE."""
EQUIPMENT = "t9a.equipment"
"""T9A.ARMOUR.*, T9A.WEAPON.*, T9A.MISSILE.* (CFG.MODULES: the three together)."""
ARTILLERY = "t9a.artillery"
"""T9A.ART.*, T9A.SHAKEN (CFG.EXCLUSIVE: replaces the CORE.WM firing and misfire rules)."""
ATTRIBUTES = "t9a.attributes"
"""T9A.AA.*."""
T9A_MODULES: tuple[str, ...] = (CHARACTERS, PROTECTIONS, EQUIPMENT, ARTILLERY, ATTRIBUTES)
"""Every T9A module a core scenario may name (CFG.MODULES)."""


def on(state: BattleState, module: str) -> bool:
    """Whether the battle plays ``module``, one of :data:`T9A_MODULES`.

    Raises:
        KeyError: ``module`` is not a T9A module name (a typo in the rules code).
    """
    if module not in T9A_MODULES:
        raise KeyError(f"unknown module '{module}'")
    return module in state.modules


def any_on(state: BattleState) -> bool:
    """Whether any T9A module plays."""
    return bool(state.modules)
