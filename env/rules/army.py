"""Army-list validation (CORE.SETUP.ARMIES) as small pure functions.

Each ``check_*`` function returns a list of error strings ``"<field path>: <message>"``
(empty when all is well), with paths such as ``units[3].models``. Costs are in points.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from battleline.env.rules.config import ArmyListConfig, FactionConfig, UnitTypeConfig


class UnitEntry(Protocol):
    """What an army entry and an explicit placement have in common."""

    unit: str
    models: int
    files: int | None
    command: Sequence[str]
    options: Sequence[str]
    general: bool
    label: str | None
    joins: int | str | None


MAX_JOINED = 2  # CORE.MOVE.JOIN: at most 2 characters in a unit


def unit_points(entry: UnitEntry, unit_type: UnitTypeConfig) -> int:
    """Points of one unit: models x points_per_model + command costs + option costs.

    An option costs ``points_per_model`` x models + ``points``. Raises ValueError for
    an unknown option or a command model the unit type may not take.
    """
    total = entry.models * unit_type.points_per_model
    for role in entry.command:
        cost = getattr(unit_type.command, role)
        if cost is None:
            raise ValueError(f"'{unit_type.id}' may not take a {role}")
        total += cost
    for oid in entry.options:
        opt = unit_type.option(oid)
        if opt is None:
            raise ValueError(f"unknown option '{oid}' for '{unit_type.id}'")
        total += opt.points_per_model * entry.models + opt.points
    equipment = getattr(entry, "equipment", None)
    if equipment:  # SIEGE.EQUIP.TABLE: siege equipment comes out of army points
        from battleline.env.rules.siege.equipment import points

        total += points(equipment, entry.models)
    return total


def entries_points(entries: Sequence[UnitEntry], faction: FactionConfig) -> int:
    """Total points of army-list entries or explicit placements (see :func:`unit_points`).

    Raises ValueError for an unknown unit, option or command model.
    """
    total = 0
    for entry in entries:
        unit_type = faction.unit(entry.unit)
        if unit_type is None:
            raise ValueError(f"unknown unit '{entry.unit}' for faction '{faction.id}'")
        total += unit_points(entry, unit_type)
    return total


def army_points(army: ArmyListConfig, faction: FactionConfig) -> int:
    """Total points of the army: its entries (:func:`entries_points`) and its castle equipment. Raises ValueError
    for unknown units."""
    total = entries_points(army.units, faction)
    if getattr(army, "castle_equipment", None):
        from battleline.env.rules.siege.equipment import castle_points

        total += castle_points(army.castle_equipment)
    return total


# ----------------------------------------------------------------------------- per-entry checks
def check_size(where: str, entry: UnitEntry, unit_type: UnitTypeConfig) -> list[str]:
    """Models within the unit type's min_size..max_size; a character is one model."""
    if unit_type.character and entry.models != 1:
        return [f"{where}.models: a character is a single model, got {entry.models}"]
    if entry.models < unit_type.min_size:
        return [f"{where}.models: {entry.models} is below the minimum of {unit_type.min_size} for '{unit_type.id}'"]
    if unit_type.max_size is not None and entry.models > unit_type.max_size:
        return [f"{where}.models: {entry.models} is above the maximum of {unit_type.max_size} for '{unit_type.id}'"]
    return []


def check_files(where: str, entry: UnitEntry) -> list[str]:
    """Files between 1 and the number of models (CORE.GEO.FORMATION)."""
    if entry.files is not None and not 1 <= entry.files <= entry.models:
        return [f"{where}.files: {entry.files} files must be between 1 and {entry.models} (the models)"]
    return []


def check_command(where: str, entry: UnitEntry, unit_type: UnitTypeConfig) -> list[str]:
    """Command models only where their cost is not None, each at most once."""
    errors = []
    for i, role in enumerate(entry.command):
        if role in entry.command[:i]:
            errors.append(f"{where}.command[{i}]: '{role}' is listed twice")
        elif getattr(unit_type.command, role) is None:
            errors.append(f"{where}.command[{i}]: a {role} is not available to '{unit_type.id}'")
    return errors


def check_options(where: str, entry: UnitEntry, unit_type: UnitTypeConfig) -> list[str]:
    """Options exist, are not repeated, and no two set the same piece of kit."""
    errors = []
    setters: dict[str, str] = {}
    for i, oid in enumerate(entry.options):
        opt = unit_type.option(oid)
        if opt is None:
            errors.append(f"{where}.options[{i}]: unknown option '{oid}' for '{unit_type.id}'")
            continue
        if oid in entry.options[:i]:
            errors.append(f"{where}.options[{i}]: '{oid}' is listed twice")
            continue
        for key in opt.effect:
            if key != "special_rules" and key in setters:
                errors.append(f"{where}.options[{i}]: '{oid}' conflicts with '{setters[key]}' (both set {key})")
            setters.setdefault(key, oid)
    return errors


def check_magic(where: str, entry: UnitEntry, unit_type: UnitTypeConfig) -> list[str]:
    """A wizard's ``lore`` is one of its type's, and given ``spells`` are ones it may know (CORE.MAGIC.WIZARDS).

    A level-L wizard knows its lore's spell #1 plus L−1 others; a Loremaster (CORE.SR.LOREMASTER) all
    four. Given spells (a set-up's, instead of rolled) are that lore's, none twice, and a subset of such a
    hand: at most L of them, and at most L−1 when spell #1 is not among them. Only a wizard takes
    ``lore`` or ``spells``.
    """
    from battleline.env.rules.spells import SPELLS, lore_spells

    lore = getattr(entry, "lore", None)
    if lore is not None and lore not in unit_type.lores:
        allowed = ", ".join(unit_type.lores) or "none"
        return [f"{where}.lore: '{unit_type.id}' may not take lore '{lore}' (allowed: {allowed})"]
    spells = list(getattr(entry, "spells", None) or [])
    if not spells:
        return []
    level, rules = unit_type.wizard_level, set(unit_type.special_rules)
    for oid in entry.options:
        opt = unit_type.option(oid)
        if opt is not None:
            level = int(opt.effect.get("wizard_level", level))
            rules.update(opt.effect.get("special_rules", []))
    if level == 0 or not unit_type.lores:
        without = " without a wizard_level option" if unit_type.lores else ""
        return [f"{where}.spells: '{unit_type.id}' is not a wizard{without}, so it knows no spells"]
    chosen = lore or unit_type.lores[0]
    for i, sid in enumerate(spells):
        if sid not in SPELLS or SPELLS[sid].lore != chosen:
            return [f"{where}.spells[{i}]: '{sid}' is not a spell of lore '{chosen}'"]
        if sid in spells[:i]:
            return [f"{where}.spells[{i}]: '{sid}' is listed twice"]
    table = lore_spells(chosen)
    known = len(table) if "loremaster" in rules else min(level, len(table))
    first = table[0].id in spells
    if len(spells) > known or (not first and len(spells) > known - 1):
        hand = "only spell #1" if known == 1 else f"spell #1 plus {known - 1} others"
        return [f"{where}.spells: a level-{level} wizard knows {hand} of lore '{chosen}' ({table[0].id} is #1; "
                f"CORE.MAGIC.WIZARDS), got {len(spells)} spells" + ("" if first else " without #1")]
    return []


def check_entry(where: str, entry: UnitEntry, unit_type: UnitTypeConfig) -> list[str]:
    """All per-unit checks: size, files, command, options, lore."""
    return (
        check_size(where, entry, unit_type)
        + check_files(where, entry)
        + check_command(where, entry, unit_type)
        + check_options(where, entry, unit_type)
        + check_magic(where, entry, unit_type)
    )


# ----------------------------------------------------------------------------- army-wide checks
def check_faction(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """The army is for this faction."""
    if army.faction != faction.id:
        return [f"faction: the army is for '{army.faction}', not '{faction.id}'"]
    return []


def check_unit_ids(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """Every entry names a unit type of the faction."""
    return [
        f"units[{i}].unit: unknown unit '{e.unit}' for faction '{faction.id}'"
        for i, e in enumerate(army.units)
        if faction.unit(e.unit) is None
    ]


def check_points(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """The total is within ``points_limit`` (CORE.SETUP.ARMIES); skipped while units or options are unknown."""
    try:
        total = army_points(army, faction)
    except ValueError:
        return []
    if total > army.points_limit:
        return [f"points_limit: army is {total:,} points, over its {army.points_limit:,}-point limit"]
    return []


def check_general(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """Exactly one General, a character with the army's highest character Ld (CORE.SETUP.ARMIES)."""
    generals = [i for i, e in enumerate(army.units) if e.general]
    if not generals:
        return ["units: the army has no general (set general: true on one character)"]
    if len(generals) > 1:
        return [f"units[{generals[1]}].general: the army has {len(generals)} generals; exactly one is allowed"]
    i = generals[0]
    general = faction.unit(army.units[i].unit)
    if general is None:
        return []
    if not general.character:
        return [f"units[{i}].general: the general must be a character, '{general.id}' is not"]
    for j, e in enumerate(army.units):
        other = faction.unit(e.unit)
        if other is not None and other.character and other.profile.Ld > general.profile.Ld:
            return [
                f"units[{i}].general: the general must have the highest Ld among the characters, "
                f"but units[{j}] '{other.id}' has Ld{other.profile.Ld} > Ld{general.profile.Ld}"
            ]
    return []


def check_max_per_army(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """No unit type appears more often than its ``max_per_army``."""
    errors, seen = [], Counter[str]()
    for i, e in enumerate(army.units):
        seen[e.unit] += 1
        unit_type = faction.unit(e.unit)
        limit = unit_type.max_per_army if unit_type is not None else None
        if limit is not None and seen[e.unit] == limit + 1:
            errors.append(f"units[{i}].unit: '{e.unit}' is limited to {limit} per army")
    return errors


def check_battle_standard(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """At most one Battle Standard Bearer (CORE.SETUP.ARMIES, CORE.SR.BSB)."""
    bearers = []
    for i, e in enumerate(army.units):
        unit_type = faction.unit(e.unit)
        if unit_type is None:
            continue
        for oid in e.options:
            opt = unit_type.option(oid)
            if opt is not None and opt.is_battle_standard:
                bearers.append(i)
    if len(bearers) > 1:
        return [f"units[{bearers[1]}].options: a second battle standard bearer; an army has at most one"]
    return []


def join_target(entries: Sequence[UnitEntry], i: int) -> int | None:
    """The index of the entry that entry ``i`` joins (its ``joins``), or None.

    ``joins`` is an index, a label, or a unit id that only one entry has.
    Raises ValueError when it names no entry, or more than one.
    """
    ref = entries[i].joins
    if ref is None:
        return None
    if isinstance(ref, int):
        if not 0 <= ref < len(entries):
            raise ValueError(f"no entry {ref} (0..{len(entries) - 1})")
        return ref
    hits = [j for j, e in enumerate(entries) if e.label == ref] or [j for j, e in enumerate(entries) if e.unit == ref]
    if len(hits) != 1:
        raise ValueError(f"'{ref}' names {'no' if not hits else len(hits)} entries; use a label or an index")
    return hits[0]


def check_labels(entries: Sequence[UnitEntry], what: str = "units") -> list[str]:
    """Explicit labels name one entry each: the second entry with a label already given is refused.

    A label is how ``joins``, the battle log and replays tell units apart; two entries with the same
    unit id and no label are fine (each shows its unit's name and uid).
    """
    first: dict[str, int] = {}
    errors: list[str] = []
    for i, e in enumerate(entries):
        if e.label is None:
            continue
        if e.label in first:
            errors.append(f"{what}[{i}].label: '{e.label}' is also {what}[{first[e.label]}]'s label; a label names one unit")
        else:
            first[e.label] = i
    return errors


def check_joins(entries: Sequence[UnitEntry], faction: FactionConfig, what: str = "units") -> list[str]:
    """Joined characters (CORE.MOVE.JOIN, CORE.SETUP.DEPLOY).

    Only a character joins; it joins another entry that is no character and
    has the same base; a unit takes at most 2 characters.
    """
    errors: list[str] = []
    count: Counter[int] = Counter()
    for i, e in enumerate(entries):
        if e.joins is None:
            continue
        where = f"{what}[{i}].joins"
        me = faction.unit(e.unit)
        try:
            j = join_target(entries, i)
        except ValueError as exc:
            errors.append(f"{where}: {exc}")
            continue
        host = faction.unit(entries[j].unit) if j is not None else None
        if me is None or host is None:
            continue
        if not me.character:
            errors.append(f"{where}: only a character may join a unit, '{me.id}' is not one")
        elif j == i:
            errors.append(f"{where}: a character cannot join itself ({e.joins!r} is this entry)")
        elif host.character:
            errors.append(f"{where}: '{me.id}' cannot join '{host.id}', a character (a character joins a unit that is not one)")
        elif host.base_mm() != me.base_mm():
            errors.append(f"{where}: '{me.id}' and '{host.id}' have different bases")
        else:
            count[j] += 1
            if count[j] == MAX_JOINED + 1:
                errors.append(f"{where}: {what}[{j}] would hold more than {MAX_JOINED} characters")
    return errors


def validate_army(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """Every problem with the army list, in a stable order; empty when the list is legal.

    Rules: CORE.SETUP.ARMIES (points limit, one General, at most one BSB) and the
    faction's unit limits (sizes, formation, command, options, max per army).
    """
    errors = check_faction(army, faction) + check_unit_ids(army, faction)
    for i, e in enumerate(army.units):
        unit_type = faction.unit(e.unit)
        if unit_type is not None:
            errors += check_entry(f"units[{i}]", e, unit_type)
    return (
        errors
        + check_points(army, faction)  # after the entries: an oversized unit is named, not only the total
        + check_general(army, faction)
        + check_max_per_army(army, faction)
        + check_battle_standard(army, faction)
        + check_labels(army.units)
        + check_joins(army.units, faction)
        + check_siege_equipment(army, faction)
    )


def check_siege_equipment(army: ArmyListConfig, faction: FactionConfig) -> list[str]:
    """Siege equipment limits per unit and per castle (SIEGE.EQUIP.TABLE, SIEGE.EQUIP.OIL)."""
    if not any(e.equipment for e in army.units) and not army.castle_equipment:
        return []
    from battleline.env.rules.siege.equipment import check_army

    return check_army(army, faction)
