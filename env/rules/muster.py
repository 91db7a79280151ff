"""The muster: events that record, at the start of a battle, the set-up rules each unit and feature received.

A battle's units and terrain are built from the scenario by :mod:`env.rules.setup`;
this module logs what those rules gave, so that the event log (the replay and the
rule coverage) shows them:

* CORE.SETUP.ARMIES: each side's faction, points and the shared points limit;
* SIEGE.SCEN.POINTS (sieges): each side's points and what it may field, the attacker
  ``attacker_points_ratio`` times the defender's limit;
* CORE.SETUP.TERRAIN and CORE.TERRAIN.TYPES: the scenario's features and the class
  (move cost, cover, impassable) of each;
* CORE.GEO.BASES, CORE.GEO.FORMATION, CORE.GEO.FOOTPRINT: each unit's base (inches),
  Unit Strength, files and ranks, and footprint width × depth (inches);
* CORE.TYPE.INFANTRY / CAVALRY / MONSTROUS_INFANTRY / CHARIOT / FLYER /
  FAST_CAVALRY / SKIRMISHERS: the troop type's fixed values and the rules it brings;
* CORE.SR.GENERAL: the General's Inspiring Presence (Ld and range, inches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from battleline.env.rules import special_rules, war_machine_assault
from battleline.env.rules.psychology import INSPIRING_RANGE, LARGE_TARGET_INSPIRING_RANGE
from battleline.env.rules.space import DIFFICULT, HARD_COVER, IMPASSABLE, OBSTACLES, SOFT_COVER

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

ASSAULT_TEAM = {**war_machine_assault.TEAM_BY_TYPE, "monstrous_infantry": war_machine_assault.TEAM_40MM}
"""Models in an assault team per troop type (CORE.TYPE.*, CORE.WM.ASSAULT_TEAM)."""
TYPE_RULE = {
    "infantry": "CORE.TYPE.INFANTRY",
    "cavalry": "CORE.TYPE.CAVALRY",
    "monstrous_infantry": "CORE.TYPE.MONSTROUS_INFANTRY",
    "chariot": "CORE.TYPE.CHARIOT",
}
"""Troop types whose fixed values are logged at the muster (monsters, war machines and characters log
their own rules when they act: CORE.TYPE.MONSTER, WAR_MACHINE, CHARACTER)."""


def terrain_class(kind: str) -> dict[str, object]:
    """The class of a terrain kind (CORE.TERRAIN.TYPES): move cost, obstacle, cover, impassable."""
    return {
        "move": "impassable" if kind in IMPASSABLE else "difficult" if kind in DIFFICULT else "open",
        "obstacle": kind in OBSTACLES,
        "cover": "hard" if kind in HARD_COVER else "soft" if kind in SOFT_COVER else None,
    }


def record(battle: Battle) -> None:
    """Emit the muster events of every side, feature and unit (see the module docstring)."""
    s = battle.state
    for side in (0, 1):
        units = [u for u in s.units if u.side == side]
        battle.emit("CORE.SETUP.ARMIES", side=side, faction=units[0].faction if units else None,
                    points=sum(u.points for u in units), points_limit=s.points_limit)
        siege = s.queue.get("siege_points")
        if siege is not None:
            battle.emit("SIEGE.SCEN.POINTS", side=side, attacker=side == siege["attacker"], ratio=siege["ratio"],
                        points=sum(u.points for u in units), points_limit=siege["limits"][side])
    battle.emit("CORE.SETUP.TERRAIN", features=len(s.terrain), kinds=[t.kind for t in s.terrain], source="scenario")
    for i, t in enumerate(s.terrain):
        battle.emit("CORE.TERRAIN.TYPES", feature=i, kind=t.kind, name=t.name, **terrain_class(t.kind))
    for u in s.units:
        _unit(battle, u)


def _unit(battle: Battle, u: UnitState) -> None:
    battle.emit("CORE.GEO.BASES", unit=u.uid, base=[round(u.base_w, 3), round(u.base_d, 3)],
                unit_strength=u.unit_strength)
    battle.emit("CORE.GEO.FORMATION", unit=u.uid, models=u.models, files=min(u.files, u.models), ranks=u.ranks)
    battle.emit("CORE.GEO.FOOTPRINT", unit=u.uid, width=round(u.width, 3), depth=round(u.depth, 3))
    rule = TYPE_RULE.get(u.troop_type)
    if rule is not None and not u.character:
        battle.emit(rule, unit=u.uid, assault_team=ASSAULT_TEAM.get(u.troop_type),
                    rules=list(special_rules.TYPE_RULES.get(u.troop_type, ())))
    if special_rules.flyer(u):
        battle.emit("CORE.TYPE.FLYER", unit=u.uid, by="fly" if u.has("fly") else "hover",
                    move=special_rules.move_allowance(u))
    if u.has("fast_cavalry") and u.troop_type == "cavalry":
        battle.emit("CORE.TYPE.FAST_CAVALRY", unit=u.uid)
    if u.has("skirmishers"):
        battle.emit("CORE.TYPE.SKIRMISHERS", unit=u.uid, pitch=[round(u.base_w, 3), round(u.base_d, 3)])
    if u.general:
        reach = LARGE_TARGET_INSPIRING_RANGE if u.has("large_target") else INSPIRING_RANGE
        battle.emit("CORE.SR.GENERAL", unit=u.uid, ld=u.profile.Ld, inspiring_range=reach)
