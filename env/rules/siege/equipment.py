"""Siege equipment (SIEGE.EQUIP.*): costs, limits and what a unit carries.

Costs and limits are configuration (``configs/siege/equipment.yaml``,
DEFAULT values where the source gives none). An army-list entry or an
explicit placement buys equipment with an ``equipment`` mapping, item id to
count, e.g. ``{ladders: 2}`` or ``{stones: 1}`` (per-model items take 1:
the whole unit or none). The army list's ``castle_equipment`` buys
castle-wide items (``reinforced_gate``). Points are added to the unit's cost
(:func:`points`), and :func:`check_army` gives the limit errors for
:func:`env.rules.army.validate_army`.

In the battle a unit's equipment lives in ``UnitState.marks["siege"]``
(item → count; :func:`carried`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import yaml

from battleline.env.rules.config import CONFIG_DIR

EQUIPMENT_FILE = CONFIG_DIR / "siege" / "equipment.yaml"
CAULDRONS = ("oil", "blood", "metal", "alchemical")
CLIMBING = ("ladders", "hooks", "siege_tower")
"""SIEGE.ASSAULT.CHARGE: the gear that lets a unit fight defenders on a wall."""
RAMS = ("ram", "protected_ram")


@lru_cache(maxsize=1)
def catalogue() -> dict[str, Any]:
    """The equipment table: item id → its entry (side, cost, per, limits, rule)."""
    return yaml.safe_load(EQUIPMENT_FILE.read_text(encoding="utf-8"))


def items() -> dict[str, dict[str, Any]]:
    """Every item id → entry (the ``limits`` block left out)."""
    return {k: v for k, v in catalogue().items() if k != "limits"}


def item(name: str) -> dict[str, Any]:
    """One item's entry (KeyError for an unknown item)."""
    return items()[name]


def cost(name: str, count: int, models: int) -> int:
    """Points for ``count`` of item ``name`` on a unit of ``models`` models (per model: the whole unit)."""
    it = item(name)
    if it["per"] == "model":
        return it["cost"] * models if count else 0
    return it["cost"] * count


def points(equipment: dict[str, int] | None, models: int) -> int:
    """Total points of a unit's equipment."""
    return sum(cost(k, v, models) for k, v in (equipment or {}).items() if k in items())


def check_unit(where: str, equipment: dict[str, int], models: int, troop_type: str, faction: str) -> list[str]:
    """Per-unit limits (SIEGE.EQUIP.TABLE): known items, counts, faction, troop type and size, one ram type."""
    errors: list[str] = []
    for name, n in equipment.items():
        w = f"{where}.equipment.{name}"
        if name not in items():
            errors.append(f"{w}: unknown siege equipment '{name}'")
            continue
        it = item(name)
        if it.get("castle"):
            errors.append(f"{w}: '{name}' is bought for the castle (castle_equipment), not by a unit")
            continue
        if n < 0 or (it["per"] == "model" and n > 1):
            errors.append(f"{w}: {n} is not a valid count (per-model items take 1: the whole unit)")
            continue
        if n == 0:
            continue
        if "max_per_unit" in it and n > it["max_per_unit"]:
            errors.append(f"{w}: at most {it['max_per_unit']} per unit")
        if "models_per_item" in it and n * it["models_per_item"] > models:
            errors.append(f"{w}: at most 1 per {it['models_per_item']} models ({models} models)")
        if it.get("min_models") and models < it["min_models"]:
            errors.append(f"{w}: needs a unit of at least {it['min_models']} models")
        if it.get("infantry_only") and troop_type != "infantry":
            errors.append(f"{w}: infantry only, not {troop_type}")
        if it.get("factions") and faction not in it["factions"]:
            errors.append(f"{w}: only for {', '.join(it['factions'])}")
        if troop_type in ("chariot", "war_machine") and it["side"] == "attacker":
            errors.append(f"{w}: a {troop_type} carries no siege gear")
    if equipment.get("ram") and equipment.get("protected_ram"):
        errors.append(f"{where}.equipment: a unit may not take both ram types")
    if sum(equipment.get(c, 0) for c in CAULDRONS) > 1:
        errors.append(f"{where}.equipment: at most 1 cauldron per infantry unit")
    return errors


def check_army(army: Any, faction: Any) -> list[str]:
    """Every siege-equipment problem of an army list (per unit, then per castle)."""
    errors: list[str] = []
    bought: list[dict[str, int]] = []
    for i, e in enumerate(army.units):
        eq = getattr(e, "equipment", None) or {}
        if not eq:
            continue
        ut = faction.unit(e.unit)
        if ut is None:
            continue
        errors += check_unit(f"units[{i}]", eq, e.models, ut.troop_type, faction.id)
        bought.append(eq)
    errors += cauldron_errors("units", bought)
    for name, n in (getattr(army, "castle_equipment", None) or {}).items():
        if name not in items() or not item(name).get("castle"):
            errors.append(f"castle_equipment.{name}: not a castle item")
        elif n < 0:
            errors.append(f"castle_equipment.{name}: a count of 0 or more (one per gate), got {n}")
    return errors


def cauldron_errors(where: str, equipment: list[dict[str, int]]) -> list[str]:
    """At most ``limits.cauldrons_per_castle`` cauldrons over the units with this ``equipment`` (SIEGE.EQUIP.OIL);
    ``where`` names the units (``units``, ``blue.placements``)."""
    cauldrons = sum(eq.get(c, 0) for eq in equipment for c in CAULDRONS)
    limit = catalogue()["limits"]["cauldrons_per_castle"]
    return [f"{where}: {cauldrons} cauldrons; at most {limit} per castle (SIEGE.EQUIP.OIL)"] if cauldrons > limit else []


def castle_points(castle_equipment: dict[str, int] | None) -> int:
    """Points of the castle-wide items (the castle itself is free, SIEGE.SCEN.POINTS)."""
    return sum(cost(k, v, 0) for k, v in (castle_equipment or {}).items() if k in items())


def side_errors(where: str, equipment: dict[str, int], role: str) -> list[str]:
    """Items that belong to the other side (``role`` is "attacker" or "defender")."""
    return [
        f"{where}.equipment.{k}: '{k}' is {item(k)['side']} equipment, and this side is the {role}"
        for k, v in equipment.items()
        if v and k in items() and item(k)["side"] != role
    ]


def carried(u: Any) -> dict[str, int]:
    """What a unit carries in battle (item → count)."""
    return dict(u.marks.get("siege", {}))


def has_climbing_gear(u: Any) -> bool:
    """Ladders, hooks or a siege tower (SIEGE.ASSAULT.CHARGE)."""
    eq = carried(u)
    return any(eq.get(k, 0) for k in CLIMBING)


def cauldron_variant(u: Any) -> str | None:
    """The unit's cauldron variant, if it crews one."""
    eq = carried(u)
    return next((c for c in CAULDRONS if eq.get(c, 0)), None)
