"""Monsters, ridden monsters and chariots (CORE.TYPE.MONSTER, CORE.TYPE.CHARIOT, CORE.SHOOT.ALLOCATE).

A monster is a single 50×50 mm model with US = W and Large Target
(:data:`env.rules.special_rules.TYPE_RULES`); a chariot is a 50×100 mm model
with US 4, Impact Hits D6 and Swiftstride. Either may carry a rider (a ridden
monster, a chariot's crew): a second profile on the unit, ``UnitState.rider``,
a plain dict

    {"name": str, "profile": {M, WS, BS, S, T, W, I, A, Ld}, "save": int,
     "wounds_taken": int, "slain": bool}

(``save`` is the rider's unmodified armour save, mount included; 7 = none).
Shooting hits on such a unit go to the mount on a D6 of 1–4 and to the rider
on 5–6 (CORE.SHOOT.ALLOCATE); a ridden monster has US W + 1 while its rider
lives (CORE.TYPE.MONSTER). The rider's wounds never pass to the mount
(CORE.WOUND.APPLY); a slain rider leaves the mount fighting on alone.

Simplified (DEFAULT): in close combat and against spells every hit goes to
the mount and the rider does not strike; the rider lends its Ld only through
the unit's own profile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from battleline.env.rules import special_rules, t9a, tables
from battleline.env.rules.state import UnitState
from battleline.env.rules.t9a import equipment
from battleline.env.rules.t9a import protections as t9a_pp

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

RIDER_FACES = (5, 6)  # CORE.SHOOT.ALLOCATE: the rider takes the hit on 5–6
RIDDEN_TYPES = ("monster", "chariot")


def has_rider(u: UnitState) -> bool:
    """Whether ``u`` carries a living rider."""
    return u.rider is not None and not u.rider.get("slain", False)


def make_rider(name: str, profile: dict[str, int], save: int) -> dict[str, Any]:
    """A rider dict (see the module docstring)."""
    return {"name": name, "profile": dict(profile), "save": save, "wounds_taken": 0, "slain": False}


def split_rider_hits(battle: Battle, t: UnitState, hits: int) -> tuple[int, int]:
    """(hits on the mount, hits on the rider): a D6 per hit, 5–6 the rider (CORE.SHOOT.ALLOCATE)."""
    if hits <= 0 or not has_rider(t) or t.troop_type not in RIDDEN_TYPES:
        return hits, 0
    faces = battle.dice.d6("CORE.SHOOT.ALLOCATE", hits)
    rider = sum(1 for f in faces if f in RIDER_FACES)
    battle.emit("CORE.SHOOT.ALLOCATE", unit=t.uid, hits=hits, mount=hits - rider, rider=rider)
    return hits - rider, rider


def _wounds_per_hit(battle: Battle, expr: str, rule: str) -> int:
    if expr == "d6":
        return battle.dice.d6(rule)[0]
    if expr == "d3":
        return battle.dice.d3(rule)
    return int(expr)


def wound_rider(
    battle: Battle,
    shooter: UnitState,
    t: UnitState,
    hits: int,
    strength: int,
    expr: str = "1",
    rule: str = "CORE.SHOOT.TO_WOUND",
    armour_piercing: bool = False,
    ap: int | None = None,
) -> int:
    """Resolve ``hits`` on ``t``'s rider: to wound against its T, its armour save, its wounds. Returns the wounds taken.

    CORE.SHOOT.TO_WOUND, CORE.SAVE.MODIFIERS, CORE.SAVE.NONE (Flaming shots),
    CORE.WOUND.APPLY (each hit's wounds on the rider, excess lost). With t9a.equipment the save is
    T9A.ARMOUR.VALUE's against ``ap``, rolled under that ID.
    """
    if hits <= 0 or not has_rider(t):
        return 0
    r = t.rider
    assert r is not None
    p = r["profile"]
    needed = tables.to_wound(strength, p["T"])
    faces = battle.dice.d6(rule, hits)
    wounded = sum(1 for f in faces if f >= needed or f == 6)
    save = tables.IMPOSSIBLE if special_rules.magical_attacks(shooter) else tables.armour_save_needed(
        r["save"], strength, armour_piercing)
    save_rule = "CORE.SAVE.MODIFIERS"
    if t9a.on(battle.state, t9a.EQUIPMENT) and not special_rules.magical_attacks(shooter):
        save, save_rule = equipment.rider_save_needed(battle, shooter, t, r["save"], ap, armour_piercing), "T9A.ARMOUR.VALUE"
    save_faces = battle.dice.d6(save_rule, wounded) if wounded and save <= 6 else []
    unsaved = wounded - sum(1 for f in save_faces if tables.save_passes(save, f))
    if t9a_pp.plays(battle.state):  # T9A.PP.WHOLE_MODEL: the model's special save covers the rider
        unsaved = t9a_pp.rider_saves(battle, shooter, t, unsaved, rule)
    taken = 0
    for _ in range(unsaved):
        if r["slain"]:
            break
        n = min(_wounds_per_hit(battle, expr, rule), p["W"] - r["wounds_taken"])
        r["wounds_taken"] += n
        taken += n
        if r["wounds_taken"] >= p["W"]:
            r["slain"] = True
    battle.emit("CORE.SHOOT.TO_WOUND", unit=shooter.uid, target=t.uid, rider=True, hits=hits, strength=strength,
                needed=needed, wounds=wounded, saved=wounded - unsaved, wounds_taken=taken)
    if r["slain"]:
        battle.emit("CORE.TYPE.MONSTER" if t.troop_type == "monster" else "CORE.TYPE.CHARIOT",
                    unit=t.uid, rider=r["name"], rider_slain=True, unit_strength=t.unit_strength)
    return taken
