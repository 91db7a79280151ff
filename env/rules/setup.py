"""Build the initial :class:`BattleState` from a validated scenario (CORE.SETUP.*)."""

from __future__ import annotations

from typing import Any

from battleline.env.rules import characters, monsters, special_rules, war_machine_profiles
from battleline.env.rules.army import join_target, unit_points
from battleline.env.rules.config import (
    ArmyUnitConfig,
    FactionConfig,
    PlacementConfig,
    ScenarioConfig,
    UnitTypeConfig,
    load_army,
    load_faction,
)
from battleline.env.rules.state import MM_PER_INCH, SIDES, BattleState, Profile, TerrainFeature, UnitState

DEFAULT_FILES = {"infantry": 5, "monstrous_infantry": 3, "cavalry": 5, "monster": 1, "chariot": 1, "war_machine": 1}


def _apply_options(ut: UnitTypeConfig, option_ids: list[str]) -> dict[str, Any]:
    """Gear after options: armour, shield, barding, melee, missile, special rules, wizard level, dispel scrolls."""
    gear: dict[str, Any] = {
        "armour": ut.armour,
        "shield": ut.shield,
        "barding": ut.barding,
        "melee": ut.melee,
        "missile": ut.missile,
        "special_rules": list(ut.special_rules),
        "wizard_level": ut.wizard_level,
        "dispel_scrolls": ut.dispel_scrolls,
    }
    by_id = {o.id: o for o in ut.options}
    for oid in option_ids:
        effect = by_id[oid].effect
        for key, value in effect.items():
            if key == "special_rules":
                gear["special_rules"] += [r for r in value if r not in gear["special_rules"]]
            elif key in gear:
                gear[key] = value
    return gear


def make_unit(
    uid: int,
    side: int,
    faction: FactionConfig,
    entry: ArmyUnitConfig | PlacementConfig,
    t9a: bool = False,
) -> UnitState:
    """Make a unit from an army-list entry or an explicit placement.

    Distances in inches (bases converted from mm, CORE.GEO.BASES); points
    include command and options. With ``t9a`` (the battle plays a T9A module)
    the unit's ``t9a`` holds its body armour, barding and the unit type's
    ``t9a:`` block (:mod:`env.rules.t9a`).
    """
    ut = next(t for t in faction.units if t.id == entry.unit)
    gear = _apply_options(ut, list(entry.options))
    base_w, base_d = (v / MM_PER_INCH for v in ut.base_mm())
    if "skirmishers" in gear["special_rules"]:
        base_w, base_d = base_w + 1.0, base_d + 1.0  # CORE.TYPE.SKIRMISHERS: a loose grid, pitch base + 1"
    files = getattr(entry, "files", None) or min(entry.models, DEFAULT_FILES.get(ut.troop_type, 5))
    command = set(entry.command)
    p = ut.profile
    points = unit_points(entry, ut) if isinstance(entry, ArmyUnitConfig) else _placement_points(entry, ut)
    label = entry.label or ut.name
    u = UnitState(
        uid=uid,
        side=side,
        name=label,
        type_id=ut.id,
        faction=faction.id,
        troop_type=ut.troop_type,
        character=ut.character,
        general=bool(entry.general),
        profile=Profile(M=p.M, WS=p.WS, BS=p.BS, S=p.S, T=p.T, W=p.W, I=p.I, A=p.A, Ld=p.Ld),
        armour_save=ut.armour_save(gear["armour"], gear["shield"], gear["barding"]),
        shield=bool(gear["shield"]),
        melee=gear["melee"],
        missile=gear["missile"],
        special_rules=special_rules.with_implied_rules(ut.troop_type, gear["special_rules"]),
        base_w=base_w,
        base_d=base_d,
        models=entry.models,
        start_models=entry.models,
        files=max(1, min(files, entry.models)),
        points=points,
        champion="champion" in command,
        standard="standard" in command,
        musician="musician" in command,
        wizard_level=gear["wizard_level"],
        lore=getattr(entry, "lore", None) or (ut.lores[0] if gear["wizard_level"] and ut.lores else None),
        spells=list(getattr(entry, "spells", None) or []),
        dispel_scrolls=gear["dispel_scrolls"],
        bound_spells=[b.model_dump() for b in ut.bound_spells],
        bsb=any(o.is_battle_standard for o in ut.options if o.id in entry.options),
        rider=None if ut.rider is None else monsters.make_rider(ut.rider.name, ut.rider.profile.model_dump(), ut.rider.armour_save()),
    )
    if ut.troop_type == "war_machine":
        war_machine_profiles.prepare(u)  # machine T, one base (CORE.WM.PROFILES, CORE.GEO.BASES)
    if t9a:
        u.t9a = {"armour": gear["armour"], "barding": bool(gear["barding"]), **ut.t9a.model_dump(exclude_defaults=True)}
    return u


def _placement_points(entry: PlacementConfig, ut: UnitTypeConfig) -> int:
    as_army = ArmyUnitConfig(
        unit=entry.unit, models=entry.models, files=entry.files, command=list(entry.command), options=list(entry.options),
        equipment=dict(entry.equipment),
    )
    return unit_points(as_army, ut)


def _switched_on(cfg: ScenarioConfig, faction: FactionConfig, entry: ArmyUnitConfig | PlacementConfig) -> bool:
    """Whether the scenario's ``magic`` / ``war_machines`` switches keep this entry (a wizard, a war machine)."""
    ut = next(t for t in faction.units if t.id == entry.unit)
    if not cfg.war_machines and ut.troop_type == "war_machine":
        return False
    return cfg.magic or _apply_options(ut, list(entry.options))["wizard_level"] == 0


def build_state(cfg: ScenarioConfig) -> BattleState:
    """The state at the scenario's start: deployment, or explicit placements.

    With ``cfg.start`` unset, no unit is deployed and the stage is ``deploy``
    (CORE.SETUP.DEPLOY). With it set, every side uses explicit placements and
    the battle starts at that turn, phase and player. ``cfg.magic`` false
    leaves wizards out and strips bound spells and dispel scrolls;
    ``cfg.war_machines`` false leaves war machines out (uids stay consecutive).
    """
    units: list[UnitState] = []
    joins: list[tuple[int, int]] = []  # (character uid, host uid)
    t9a = any(m.startswith("t9a.") for m in cfg.modules)
    for side, name in enumerate(SIDES):
        side_cfg = getattr(cfg, name)
        faction = load_faction(side_cfg.faction)
        entries: list[Any] = list(side_cfg.placements or load_army(side_cfg.army).units)
        uid_of: dict[int, int] = {}  # entry index -> uid, for the entries the scenario's switches keep
        for i, entry in enumerate(entries):
            if not _switched_on(cfg, faction, entry):
                continue
            u = make_unit(len(units), side, faction, entry, t9a=t9a)
            if not cfg.magic:
                u.bound_spells, u.dispel_scrolls = [], 0
            if side_cfg.placements:
                u.x, u.y, u.facing = entry.x, entry.y, entry.facing
                u.deployed = True
                u.fleeing = entry.fleeing
            uid_of[i] = u.uid
            units.append(u)
            if getattr(entry, "equipment", None):
                u.marks["siege"] = {k: v for k, v in entry.equipment.items() if v}  # SIEGE.EQUIP.TABLE
        for i in uid_of:
            j = join_target(entries, i)
            if j is not None and j in uid_of:
                joins.append((uid_of[i], uid_of[j]))
    state = BattleState(
        scenario=cfg.id,
        table_w=float(cfg.table[0]),
        table_h=float(cfg.table[1]),
        max_turns=cfg.turns,
        points_limit=cfg.points_limit,
        units=units,
        terrain=[TerrainFeature(kind=t.kind, polygon=[tuple(p) for p in t.polygon], name=t.name) for t in cfg.terrain],
    )
    if cfg.siege:  # SIEGE.SCEN.CASTLE
        from battleline.env.rules.siege.castle import build_castle

        state.castle = build_castle(cfg)
        if cfg.castle is not None and cfg.castle.victory_needed is not None:  # SIEGE.SCEN.VICTORY
            state.queue["siege_victory_needed"] = cfg.castle.victory_needed
        state.queue["siege_points"] = {"limits": [cfg.points_limit_of(n) for n in SIDES],  # SIEGE.SCEN.POINTS
                                       "attacker": SIDES.index(cfg.attacker()), "ratio": cfg.attacker_points_ratio}
    state.modules = [m for m in cfg.modules if m.startswith("t9a.")]  # siege shows in state.castle
    state.queue["zone_depth"] = cfg.zone_depth
    state.queue["victory_margin"] = cfg.victory_margin
    if not cfg.champion_attack:  # CORE.CC.CHAMPION_ATTACK switched off (on unless the queue says false)
        state.queue["champion_attack"] = False
    for c, h in joins:  # CORE.SETUP.DEPLOY: a joined character deploys with its unit
        characters.attach(state, units[c], units[h])
    if cfg.start is None or not all(u.deployed for u in units):
        state.stage = "deploy"
        state.phase = "deployment"
    else:
        state.turn = cfg.start.turn
        state.active = SIDES.index(cfg.start.player)
        state.first_player = state.active
        state.phase = cfg.start.phase
        state.stage = "next"
    return state
