"""Castle damage (SIEGE.DMG.*): the wall, tower and gate tables and the attacks that use them.

Pure functions give a table's row for a value (:func:`wall_row`,
:func:`tower_row`, :func:`gate_row`) and the value itself
(:func:`table_value`); :func:`damage_element` applies a row to an element of
``battle.state.castle``, hits the models on and near it, and emits the
SIEGE.* events. The attack functions (:func:`cannon_hit`,
:func:`stone_thrower_hit`, :func:`bolt_thrower_hit`, :func:`ram_blow`,
:func:`melee_blows`, :func:`gate_shot`) roll their base and call it.

Dice order (for scripted tests):

* a cannon: the artillery die (two with a double charge; misfire check only),
  then the D6 of wounds (SIEGE.DMG.CANNON);
* a stone thrower: the 4+ D6 when the hole is off the element, then the D6
  of wounds (SIEGE.DMG.TEMPLATE);
* a bolt thrower: its wounds (D3) (SIEGE.DMG.GATE_SHOTS for a gate);
* a shot at a gate: first the D6 deciding gate (5–6) or section (1–4);
* a ram: one D6 (base 7 + D6, SIEGE.EQUIP.RAM);
* the table's own dice, in unit order: 15–16 one D6 per unit; 17–18 one D6
  of hits per unit, then its to-wound and save dice; 19 (towers) one I test
  per model, then wounds and saves for the failures; collapse: S5 hits on the
  element's models, then S3 hits on the models within 4"; the tower's 20+ D6
  comes first.

Hits on models (:func:`hit_models`) roll to wound, then armour saves (unless
``armour`` is False), then the unit's ward save, and remove casualties as
usual (CORE.WOUND.APPLY).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from battleline.env.rules import t9a, tables
from battleline.env.rules.casualties import apply_wounds
from battleline.env.rules.siege.castle import CastleElement, element, units_in, units_on, units_within

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

# rows: (name, bonus) ------------------------------------------------------------
NO_EFFECT = "no_effect"
WALL_ROWS = (
    # (lowest value, row name, bonus added)
    (20, "collapse", 0),
    (19, "breach", 1),
    (17, "parapet_destroyed", 1),
    (15, "heavily_damaged", 1),
    (13, "shakes", 1),
)
"""SIEGE.DMG.WALL, highest row first."""
TOWER_ROWS = (
    (20, "collapse", 0),
    (19, "partial_destruction", 1),
    (17, "parapet_destroyed", 1),
    (15, "heavily_damaged", 1),
    (13, "shakes", 1),
)
"""SIEGE.DMG.TOWER (also for the citadel), highest row first."""
GATE_ROWS = (
    (16, "destroyed", 0),
    (15, "smashed", 3),
    (13, "buckled", 2),
    (11, "crack", 1),
)
"""SIEGE.DMG.GATE, highest row first."""
COLLAPSE_NEAR = 4.0
"""Collapse: one S3 hit on each model within 4" (SIEGE.DMG.WALL, SIEGE.DMG.TOWER)."""
PARAPET_HITS_S = 4
COLLAPSE_ON_S = 5
COLLAPSE_NEAR_S = 3
PARTIAL_S = 5
CANNON_BASE_S = 10  # SIEGE.DMG.CANNON: base = D6 + 10
STONE_BASE_S = 9  # SIEGE.DMG.TEMPLATE: base = D6 + 9
RAM_BASE = 7  # SIEGE.EQUIP.RAM: base = 7 + D6
FLAT_TRAJECTORY = frozenset({"great_cannon", "light_cannon", "bolt_thrower"})
"""SIEGE.DMG.GATE_SHOTS: only cannons and bolt throwers may target a gate."""
MISFIRE = "MISFIRE"
"""The artillery die's misfire face (CORE.DICE.ARTILLERY: one D6, face 6)."""
CANNONS = frozenset({"great_cannon", "light_cannon"})
"""SIEGE.DMG.CANNON: cannons (organ guns included) hit elements automatically; mortars do not."""


def _row(rows: tuple[tuple[int, str, int], ...], value: int) -> tuple[str, int]:
    for low, name, bonus in rows:
        if value >= low:
            return name, bonus
    return NO_EFFECT, 0


def wall_row(value: int) -> tuple[str, int]:
    """SIEGE.DMG.WALL: (row, bonus) for a table value: ≤12 nothing, 13–14 shakes, 15–16 heavily
    damaged, 17–18 parapet destroyed, 19 breach (each +1), 20+ collapse."""
    return _row(WALL_ROWS, value)


def tower_row(value: int) -> tuple[str, int]:
    """SIEGE.DMG.TOWER: (row, bonus): as the wall up to 17–18, 19 partial destruction (+1), 20+ collapse."""
    return _row(TOWER_ROWS, value)


def gate_row(value: int) -> tuple[str, int]:
    """SIEGE.DMG.GATE: (row, bonus): ≤10 nothing, 11–12 crack +1, 13–14 buckled +2, 15 smashed +3, 16+ destroyed."""
    return _row(GATE_ROWS, value)


def row_for(e: CastleElement, value: int) -> tuple[str, int]:
    """The row of ``e``'s table (wall, tower/citadel or gate) for ``value``."""
    if e.kind == "gate":
        return gate_row(value)
    if e.is_tower:
        return tower_row(value)
    return wall_row(value)


def table_value(e: CastleElement, base: int, modifiers: int = 0) -> int:
    """SIEGE.DMG.VALUE: base (wounds + S) + the element's bonus + modifiers, −1 for a reinforced gate."""
    return base + e.damage_bonus + modifiers - (1 if e.kind == "gate" and e.reinforced else 0)


def table_rule(e: CastleElement) -> str:
    """The rule ID of ``e``'s table."""
    return "SIEGE.DMG.GATE" if e.kind == "gate" else "SIEGE.DMG.TOWER" if e.is_tower else "SIEGE.DMG.WALL"


# ------------------------------------------------------------------- hits on models
def hit_models(
    battle: Battle,
    u: UnitState,
    hits: int,
    strength: int,
    rule: str,
    *,
    armour: bool = True,
    wounds: str = "1",
    ward: int | None = None,
    flaming: bool = False,
    **info: Any,
) -> int:
    """Resolve ``hits`` hits of Strength ``strength`` on unit ``u`` (no attacking unit).

    To wound (CORE.SHOOT.TO_WOUND), armour saves unless ``armour`` is False,
    then the unit's ward save or ``ward`` (the better), then casualties.
    ``wounds`` per unsaved hit is "1" or "d3" (capped at the model's wounds).
    ``flaming`` denies Regeneration only (no regeneration rolls are made here).
    Returns the unsaved wounds.
    """
    from battleline.env.rules import special_rules

    if hits <= 0 or not u.in_play:
        return 0
    needed = tables.to_wound(strength, u.profile.T)
    faces = battle.dice.d6(rule, hits)
    wounded = sum(1 for f in faces if f >= needed or f == 6)
    save = tables.armour_save_needed(u.armour_save, strength) if armour else tables.IMPOSSIBLE
    if armour and t9a.on(battle.state, t9a.EQUIPMENT):  # T9A.ARMOUR.VALUE: a structure's hits have AP 0
        from battleline.env.rules.t9a import equipment

        save = equipment.save_needed(battle, None, u, 0, False, False)
    saved = 0
    if wounded and save <= 6:
        saved = sum(1 for f in battle.dice.d6(rule, wounded) if tables.save_passes(save, f))
    left = wounded - saved
    own_ward = special_rules.ward_save(u)
    best = min(w for w in (own_ward, ward, 7) if w is not None)
    warded = 0
    if left and best <= 6:
        warded = sum(1 for f in battle.dice.d6(rule, left) if tables.save_passes(best, f))
    left -= warded
    total = 0
    for _ in range(left):
        n = 1 if wounds == "1" else battle.dice.d3(rule)
        total += min(n, max(1, u.profile.W))
    battle.emit(rule, kind="hits", unit=u.uid, hits=hits, strength=strength, needed=needed, wounds=wounded,
                armour_needed=save, saved=saved, ward=best if best <= 6 else None, warded=warded, unsaved=total, **info)
    if total:
        if wounds == "1" or u.profile.W <= 1:
            apply_wounds(battle, u, total, rule=rule, **info)
        else:
            # each hit's D3 wounds stay on one model (CORE.WOUND.APPLY): apply hit by hit
            apply_wounds(battle, u, total, rule=rule, **info)
    return total


def _each_model(battle: Battle, units: list[UnitState], strength: int, rule: str, **info: Any) -> None:
    """One hit of ``strength`` on every model of ``units`` (and their joined characters)."""
    for u in units:
        for t in [u] + [battle.unit(c) for c in u.joined]:
            if t.in_play:
                hit_models(battle, t, t.models, strength, rule, **info)


# ------------------------------------------------------------------- applying a result
def damage_element(battle: Battle, e: CastleElement, base: int, modifiers: int = 0, *, source: str = "", **info: Any) -> str:
    """Look ``base`` up on ``e``'s table and apply the row (SIEGE.DMG.VALUE + the table's rule).

    Returns the row name (``no_effect`` .. ``collapse`` / ``destroyed``).
    """
    if not e.standing:
        battle.emit("SIEGE.DMG.VALUE", element=e.id, base=base, value=None, row=NO_EFFECT, reason="already destroyed")
        return NO_EFFECT
    value = table_value(e, base, modifiers)
    row, bonus = row_for(e, value)
    rule = table_rule(e)
    battle.emit("SIEGE.DMG.VALUE", element=e.id, base=base, bonus=e.damage_bonus, modifiers=modifiers,
                reinforced=e.kind == "gate" and e.reinforced, value=value, row=row, source=source, **info)
    first = row not in e.results
    if row != NO_EFFECT:
        e.results.append(row)
    if row in ("collapse", "breach", "smashed", "destroyed"):
        forget_moves(battle)
    if e.kind == "gate":
        _gate(battle, e, row, bonus)
    elif row == "collapse":
        if e.is_tower:
            _tower_collapse(battle, e)
        else:
            _wall_collapse(battle, e)
    else:
        if row == "heavily_damaged":
            _no_shoot(battle, e, rule)
        elif row == "parapet_destroyed" and first:
            e.parapet_destroyed = True
            for u in units_on(battle.state, e):
                n = battle.dice.d6(rule)[0]
                battle.emit(rule, row=row, element=e.id, unit=u.uid, hits=n, strength=PARAPET_HITS_S)
                hit_models(battle, u, n, PARAPET_HITS_S, rule, element=e.id)
        elif row == "breach" and first:
            e.breached = True
        elif row == "partial_destruction" and first:
            e.partially_destroyed = True
            _initiative_or_hit(battle, e, rule)
        e.damage_bonus += bonus
        battle.emit(rule, element=e.id, row=row, first=first, bonus_added=bonus, damage_bonus=e.damage_bonus)
    return row


def forget_moves(battle: Battle) -> None:
    """Drop the cached move options (env.rules.movement.legal): the castle's passable ground has changed."""
    battle.__dict__.pop("_move_cache", None)


def _no_shoot(battle: Battle, e: CastleElement, rule: str) -> None:
    """15–16: a D6 per unit on the element; on 4+ it may not shoot in its next Shooting phase."""
    for u in units_on(battle.state, e):
        face = battle.dice.d6(rule)[0]
        if face >= 4 and u.uid not in e.no_shoot:
            e.no_shoot.append(u.uid)
        battle.emit(rule, row="heavily_damaged", element=e.id, unit=u.uid, roll=face, no_shoot=face >= 4)


def _initiative_or_hit(battle: Battle, e: CastleElement, rule: str) -> None:
    """Tower 19: each model on or in the tower passes an I test (CORE.TEST.CHARACTERISTIC) or takes one S5 hit."""
    for u in units_in(battle.state, e):
        for t in [u] + [battle.unit(c) for c in u.joined]:
            if not t.in_play:
                continue
            faces = battle.dice.d6("CORE.TEST.CHARACTERISTIC", t.models)
            failed = sum(1 for f in faces if f == 6 or (f != 1 and f > t.profile.I))
            battle.emit(rule, row="partial_destruction", element=e.id, unit=t.uid, tests=len(faces), failed=failed)
            hit_models(battle, t, failed, PARTIAL_S, rule, element=e.id)


def _ruins(battle: Battle, e: CastleElement) -> None:
    """The ruins: a hard-cover defended obstacle and difficult terrain (rubble, CORE.TERRAIN.TYPES)."""
    from battleline.env.rules.state import TerrainFeature

    e.collapsed = True
    e.no_shoot = []
    battle.state.terrain.append(TerrainFeature(kind="rubble", polygon=[tuple(p) for p in e.polygon], name=f"ruins of {e.id}"))


def _wall_collapse(battle: Battle, e: CastleElement) -> None:
    """Wall 20+: one S5 hit on each model on the wall, one S3 hit on each model within 4"; ruins."""
    on = units_on(battle.state, e)
    near = units_within(battle.state, e, COLLAPSE_NEAR)
    battle.emit("SIEGE.DMG.WALL", element=e.id, row="collapse", on=[u.uid for u in on], near=[u.uid for u in near])
    _each_model(battle, on, COLLAPSE_ON_S, "SIEGE.DMG.WALL", element=e.id)
    _each_model(battle, near, COLLAPSE_NEAR_S, "SIEGE.DMG.WALL", element=e.id)
    _ruins(battle, e)
    from battleline.env.rules.siege.castle import gate_of

    g = gate_of(battle.state, e)
    if g is not None and g.gate != "destroyed":
        g.gate = "destroyed"  # the gate falls with its wall
        battle.emit("SIEGE.DMG.GATE", element=g.id, row="destroyed", cause=f"{e.id} collapsed")


def _tower_collapse(battle: Battle, e: CastleElement) -> None:
    """Tower 20+: D6 1–3 the 19 result (+1) plus S3 hits within 4"; 4–6 destroyed: S5 on each model in it, S3 within 4"."""
    face = battle.dice.d6("SIEGE.DMG.TOWER")[0]
    near = units_within(battle.state, e, COLLAPSE_NEAR)
    if face <= 3:
        battle.emit("SIEGE.DMG.TOWER", element=e.id, row="collapse", roll=face, outcome="partial_destruction",
                    near=[u.uid for u in near])
        e.partially_destroyed = True
        _initiative_or_hit(battle, e, "SIEGE.DMG.TOWER")
        _each_model(battle, near, COLLAPSE_NEAR_S, "SIEGE.DMG.TOWER", element=e.id)
        e.damage_bonus += 1
        battle.emit("SIEGE.DMG.TOWER", element=e.id, row="collapse", bonus_added=1, damage_bonus=e.damage_bonus)
        return
    inside = units_in(battle.state, e)
    battle.emit("SIEGE.DMG.TOWER", element=e.id, row="collapse", roll=face, outcome="destroyed",
                on=[u.uid for u in inside], near=[u.uid for u in near])
    _each_model(battle, inside, COLLAPSE_ON_S, "SIEGE.DMG.TOWER", element=e.id)
    _each_model(battle, near, COLLAPSE_NEAR_S, "SIEGE.DMG.TOWER", element=e.id)
    e.inside = [i for i in e.inside if battle.unit(i).alive]
    _ruins(battle, e)


def _gate(battle: Battle, e: CastleElement, row: str, bonus: int) -> None:
    if row == "destroyed":
        e.gate = "destroyed"
    elif row == "smashed":
        e.gate = "smashed"
    e.damage_bonus += bonus
    battle.emit("SIEGE.DMG.GATE", element=e.id, row=row, bonus_added=bonus, damage_bonus=e.damage_bonus, gate=e.gate)


# ------------------------------------------------------------------- attacks
def cannon_hit(battle: Battle, e: CastleElement, *, strength: int = CANNON_BASE_S, double_charge: bool = False,
               machine: str = "great_cannon", shooter: int | None = None) -> str:
    """SIEGE.DMG.CANNON: an automatic hit; the artillery die checks only for a misfire (two dice and +1
    with a double charge); base = D6 + S. Returns the row, or "misfire" (the caller rolls the misfire table)."""
    if machine not in CANNONS:
        raise ValueError(f"'{machine}' is no cannon: it does not hit a castle element automatically")
    dice = [_artillery(battle) for _ in range(2 if double_charge else 1)]
    if MISFIRE in dice:
        battle.emit("SIEGE.DMG.CANNON", element=e.id, artillery=dice, misfire=True, unit=shooter)
        return "misfire"
    wounds = battle.dice.d6("SIEGE.DMG.CANNON")[0]
    battle.emit("SIEGE.DMG.CANNON", element=e.id, artillery=dice, wounds=wounds, strength=strength,
                double_charge=double_charge, unit=shooter)
    return damage_element(battle, e, wounds + strength, 1 if double_charge else 0, source="cannon", unit=shooter)


def _artillery(battle: Battle) -> int | str:
    """One artillery die (CORE.DICE.ARTILLERY): D6 face k = 1..5 shows 2k, face 6 shows MISFIRE."""
    roll = getattr(battle.dice, "artillery", None)
    if roll is not None:
        return roll("SIEGE.DMG.CANNON")
    face = battle.dice.d6("SIEGE.DMG.CANNON")[0]
    return MISFIRE if face == 6 else 2 * face


def stone_thrower_hit(battle: Battle, e: CastleElement, hole_on_element: bool, *, strength: int = STONE_BASE_S,
                      shooter: int | None = None) -> str:
    """SIEGE.DMG.TEMPLATE: automatic when the hole is on the element, else on a 4+; base = D6 + 9.

    Returns the row, or "missed" when the 4+ fails."""
    if not hole_on_element:
        face = battle.dice.d6("SIEGE.DMG.TEMPLATE")[0]
        if face < 4:
            battle.emit("SIEGE.DMG.TEMPLATE", element=e.id, hole_on=False, roll=face, hit=False, unit=shooter)
            return "missed"
    wounds = battle.dice.d6("SIEGE.DMG.TEMPLATE")[0]
    battle.emit("SIEGE.DMG.TEMPLATE", element=e.id, hole_on=hole_on_element, hit=True, wounds=wounds, strength=strength,
                unit=shooter)
    return damage_element(battle, e, wounds + strength, source="stone_thrower", unit=shooter)


def bolt_thrower_hit(battle: Battle, e: CastleElement, *, strength: int = 6, shooter: int | None = None) -> str:
    """A bolt thrower's bolt on an element: base = its D3 wounds + S (SIEGE.DMG.VALUE)."""
    wounds = battle.dice.d3("SIEGE.DMG.VALUE")
    return damage_element(battle, e, wounds + strength, source="bolt_thrower", unit=shooter)


def gate_shot(battle: Battle, gate: CastleElement, machine: str, **kw: Any) -> tuple[CastleElement, str]:
    """SIEGE.DMG.GATE_SHOTS: a shot aimed at a gate. Cannons and bolt throwers roll a D6: 1–4 the
    gate's wall section, 5–6 the gate; every other weapon hits the section. Returns (element hit, row)."""
    section = element(battle.state, gate.parent) if gate.parent else gate
    if machine in FLAT_TRAJECTORY:
        face = battle.dice.d6("SIEGE.DMG.GATE_SHOTS")[0]
        target = gate if face >= 5 else section
        battle.emit("SIEGE.DMG.GATE_SHOTS", gate=gate.id, machine=machine, roll=face, hit=target.id)
    else:
        target = section
        battle.emit("SIEGE.DMG.GATE_SHOTS", gate=gate.id, machine=machine, roll=None, hit=target.id)
    if machine in CANNONS:
        return target, cannon_hit(battle, target, machine=machine, **kw)
    if machine == "bolt_thrower":
        return target, bolt_thrower_hit(battle, target, **kw)
    if machine == "stone_thrower":
        return target, stone_thrower_hit(battle, target, True, **kw)
    raise ValueError(f"'{machine}' does not damage castle elements")


def machine_hit(battle: Battle, shooter: UnitState, e: CastleElement, hole_on_element: bool = True,
                double_charge: bool = False) -> str:
    """A war machine's shot at an element, with its own profile (env.rules.war_machines.MACHINES).

    Cannons: SIEGE.DMG.CANNON with the machine's S; stone throwers: the hole's S
    (SIEGE.DMG.TEMPLATE); bolt throwers: D3 + S. Grapeshot and flame cannons do no castle damage.
    A gate is resolved through :func:`gate_shot`.
    """
    from battleline.env.rules.war_machine_profiles import MACHINES

    kind = str(shooter.missile)
    m = MACHINES[kind]
    if e.kind == "gate":
        kw: dict[str, Any] = {"shooter": shooter.uid}
        if kind in CANNONS:
            kw.update(strength=m.strength, double_charge=double_charge)
        elif kind == "bolt_thrower":
            kw.update(strength=m.strength)
        elif kind == "stone_thrower":
            kw.update(strength=m.centre_strength or STONE_BASE_S)
        return gate_shot(battle, e, kind, **kw)[1]
    if kind in CANNONS:
        return cannon_hit(battle, e, strength=m.strength, double_charge=double_charge, machine=kind, shooter=shooter.uid)
    if kind == "stone_thrower":
        return stone_thrower_hit(battle, e, hole_on_element, strength=m.centre_strength or STONE_BASE_S, shooter=shooter.uid)
    if kind == "bolt_thrower":
        return bolt_thrower_hit(battle, e, strength=m.strength, shooter=shooter.uid)
    raise ValueError(f"'{kind}' does no castle damage")


def ram_blow(battle: Battle, e: CastleElement, unit: int | None = None, protected: bool = False) -> str:
    """SIEGE.EQUIP.RAM / PROTECTED_RAM: one blow, base = 7 + D6."""
    face = battle.dice.d6("SIEGE.EQUIP.PROTECTED_RAM" if protected else "SIEGE.EQUIP.RAM")[0]
    battle.emit("SIEGE.EQUIP.PROTECTED_RAM" if protected else "SIEGE.EQUIP.RAM", element=e.id, unit=unit, roll=face,
                base=RAM_BASE + face)
    return damage_element(battle, e, RAM_BASE + face, source="ram", unit=unit)


def melee_base(u: UnitState) -> int:
    """SIEGE.DMG.MELEE: one model's blow: S (with weapon) + its wounds per hit (1)."""
    from battleline.env.rules.tables import melee_effect

    bonus = melee_effect(u.melee, u.troop_type, round_one=True, charged=False).strength_bonus
    return tables.clamp_characteristic(u.profile.S + bonus, "S") + 1


def melee_blows(battle: Battle, u: UnitState, e: CastleElement, models: int) -> list[str]:
    """SIEGE.DMG.MELEE: ``models`` models in contact give up their attacks for one automatic blow each.

    Chariots may not (ValueError); the castle never strikes back. Returns the rows, one per blow.
    """
    if u.troop_type == "chariot":
        raise ValueError("chariots may not attack castle elements (SIEGE.DMG.MELEE)")
    base = melee_base(u)
    battle.emit("SIEGE.DMG.MELEE", element=e.id, unit=u.uid, blows=models, base=base)
    rows = []
    for _ in range(models):
        if not e.standing:
            break
        rows.append(damage_element(battle, e, base, source="melee", unit=u.uid))
    return rows


def spell_may_target(e: CastleElement | None) -> bool:
    """Magic (siege.md §9): spells never target castle elements, only troops on them."""
    return e is None
