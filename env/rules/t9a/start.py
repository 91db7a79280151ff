"""What a battle under T9A modules records at its start (RULESET.md §6.4): the mode, the modules and the CORE
rules they replace (CFG.MODE, CFG.MODULES, CFG.EXCLUSIVE)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from battleline.env.rules.t9a import ARTILLERY, ATTRIBUTES, CHARACTERS, EQUIPMENT, PROTECTIONS
from battleline.env.rules.t9a.artillery import REPLACED

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

REPLACES: dict[str, tuple[str, ...]] = {
    CHARACTERS: ("CORE.MOVE.LEAVE", "CORE.MOVE.MARCH_BLOCK"),
    PROTECTIONS: ("CORE.SAVE.PIPELINE", "CORE.SAVE.WARD", "CORE.SR.FLAMMABLE", "CORE.SR.REGENERATION"),
    EQUIPMENT: ("CORE.SAVE.ARMOUR_TABLE", "CORE.SAVE.MODIFIERS", "CORE.SHOOT.WEAPONS", "CORE.WEAPON.MELEE"),
    ARTILLERY: tuple(sorted(REPLACED)),
    ATTRIBUTES: (),
}
"""T9A module → the CORE rule IDs it replaces (the ⇒ of RULESET.md §6.1; ``t9a.artillery``: every CORE.WM firing,
damage and misfire rule, CFG.EXCLUSIVE). The T9A attributes add to the core rules and replace none."""


def record(battle: Battle) -> None:
    """Log the battle's rule configuration; called at the start of a battle that plays a T9A module.

    Emits CFG.MODE (``mode`` "core": this engine's one mode), CFG.MODULES (``modules``: the T9A modules in
    the scenario's order; ``siege``: whether the siege module plays too) and CFG.EXCLUSIVE (``replaced``:
    {module: the CORE rule IDs it switches off, sorted}, for the modules on that replace any).
    """
    modules = list(battle.state.modules)
    battle.emit("CFG.MODE", mode="core")
    battle.emit("CFG.MODULES", modules=modules, siege="siege" in battle.scenario.get("modules", []))
    battle.emit("CFG.EXCLUSIVE", replaced={m: list(REPLACES[m]) for m in modules if REPLACES[m]})
