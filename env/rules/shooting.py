"""The Shooting phase and Stand and Shoot (CORE.SHOOT.*, CORE.SAVE.*, CORE.REACT.STAND_SHOOT)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import shapely

from battleline.env.rules import breath, characters, magic, monsters, psychology, space, special_rules, t9a, tables, templates, war_machines
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import Action
from battleline.env.rules.state import BattleState, TerrainFeature, UnitState
from battleline.env.rules.t9a import equipment
from battleline.env.rules.t9a import protections as t9a_pp
from battleline.env.rules.t9a.artillery import forbids as t9a_artillery_forbids

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


def weapon(u: UnitState, state: BattleState | None = None) -> tables.MissileWeapon:
    """The unit's missile weapon (CORE.SHOOT.WEAPONS; T9A.MISSILE.TABLE when ``state`` plays t9a.equipment).

    Raises KeyError if it has none.
    """
    if state is not None and t9a.on(state, t9a.EQUIPMENT):
        return equipment.missile_weapon(u)
    return tables.MISSILE_WEAPONS[u.missile]  # type: ignore[index]


def start(battle: Battle) -> None:
    """Open the Shooting phase: note each unit's front rank for Panic (CORE.PSY.PANIC.TRIGGER_CASUALTIES)."""
    for u in space.alive_units(battle.state):
        u.flags["front_rank_at_phase"] = u.models_in_rank(1)
        u.flags["lost_this_phase"] = 0
    if battle.state.castle:  # SIEGE.DMG.WALL / TOWER 15–16: units that may not shoot this phase
        from battleline.env.rules.siege.orders import start_shooting

        start_shooting(battle)
    battle.set_stage("shoot")


def can_shoot(battle: Battle, u: UnitState) -> bool:
    """CORE.SHOOT.ELIGIBLE: not engaged, fleeing, marched, charged or failed a charge; Move or Fire unmoved."""
    return u.missile is not None and may_fire(battle, u)


def may_fire(battle: Battle, u: UnitState) -> bool:
    """CORE.SHOOT.ELIGIBLE for any shooting attack of ``u`` (a missile weapon's, or a breath weapon's)."""
    if not u.alive or u.side != battle.state.active or u.fleeing:
        return False
    f = u.flags
    get = f.get
    if (get("shot") or get("marched") or get("charged") or get("failed_charge") or get("stupid")
            or get("declared_charge") or get("fled") or get("siege_no_shoot")):  # siege_no_shoot: SIEGE.DMG.WALL / TOWER 15–16
        return False
    move_or_fire = u.troop_type == "war_machine" or (u.missile is not None and weapon(u, battle.state).move_or_fire)
    if move_or_fire and (f.get("moved") or f.get("rallied")):
        return False
    if u.troop_type == "war_machine" and war_machines.silenced(battle, u):
        return False  # CORE.WM.PANIC, CORE.WM.MISFIRE.*: may not shoot this turn
    if u.marks and t9a_artillery_forbids(battle, u, "shoot"):
        return False  # T9A.SHAKEN, T9A.ART.MISFIRE (Shattered)
    return not psychology.engaged(battle, u)


def in_range_and_sight(battle: Battle, u: UnitState, t: UnitState, scan: space.SightScan | None = None) -> bool:
    """Whether ``t`` is partly in ``u``'s vision arc, in LOS and within range (CORE.SHOOT.TARGET).

    ``scan``: :func:`space.sight_scan` of the battle's state as it stands, for a caller asking several questions.
    """
    w = weapon(u, battle.state)
    if not space.near(u, t, w.range):
        return False
    if space.unit_distance(u, t) > w.range:
        return False
    return in_sight(battle, u, t, scan)


def in_sight(battle: Battle, u: UnitState, t: UnitState, scan: space.SightScan | None = None) -> bool:
    """Whether ``t`` is partly in ``u``'s vision arc and in its line of sight (CORE.SHOOT.TARGET), at any range.

    ``scan``: as :func:`in_range_and_sight`'s.
    """
    if not space.in_vision_arc(u, t):
        return False
    return space.line_of_sight(battle.state, u, t, scan)


def _character_shielded(battle: Battle, u: UnitState, t: UnitState) -> bool:
    """CORE.SHOOT.TARGET: a lone character (US < 5) near a friendly unit of US ≥ 5 must be the closest enemy."""
    if not t.character or t.unit_strength >= 5:
        return False
    near_big = any(
        f.uid != t.uid and f.unit_strength >= 5 and space.near(f, t, 5.0) and space.unit_distance(f, t) <= 5.0
        for f in space.alive_units(battle.state, t.side)
    )
    if not near_big:
        return False
    d = space.unit_distance(u, t)
    return any(
        e.uid != t.uid and space.unit_distance(u, e) < d - geo.EPS for e in space.alive_units(battle.state, t.side)
    )


def legal(battle: Battle) -> list[Action]:
    """Legal ``shoot`` actions of the phasing player (a breath attack carries the option "breath")."""
    acts = []
    enemies = space.alive_units(battle.state, 1 - battle.state.active)
    free = None  # the enemies not engaged (CORE.SHOOT.TARGET), found once for every shooter
    scan = None  # what line of sight reads of the state (it holds still here), read once for every shooter
    for u in space.alive_units(battle.state, battle.state.active):
        if u.missile is None and "breath_weapon" not in u.special_rules:
            continue  # nothing to shoot with (CORE.SHOOT.WEAPONS, CORE.SR.BREATH_WEAPON): no action either way
        if not may_fire(battle, u):
            continue
        if scan is None:
            scan = space.sight_scan(battle.state)
        if u.troop_type == "war_machine":
            if u.missile is not None:
                acts += war_machines.legal_shots(battle, u, scan)  # CORE.WM.*: free pivot, the machine's own ranges
            continue
        if free is None:
            free = [t for t in enemies if not psychology.engaged(battle, t)]
        if u.missile is not None:
            for t in free:
                if in_range_and_sight(battle, u, t, scan) and not _character_shielded(battle, u, t):
                    acts.append(Action("shoot", u.uid, t.uid))
        if special_rules.breath_ready(battle, u):  # CORE.SR.BREATH_WEAPON, shooting form
            targets = [
                t for t in free
                if space.near(u, t, templates.TEARDROP_LENGTH) and in_sight(battle, u, t, scan)
                and not _character_shielded(battle, u, t)
            ]
            acts += breath.legal(battle, u, targets)
    return acts


def apply(battle: Battle, action: Action) -> None:
    """Fire one unit, or end the Shooting phase."""
    if action.kind == "end_phase":
        battle.finish_phase()
        return
    if action.target is None and battle.state.castle:  # SIEGE.DMG.*: a war machine fires at a castle element
        from battleline.env.rules.siege.orders import fire_order

        battle.unit(action.unit).flags["shot"] = True
        fire_order(battle, battle.unit(action.unit), action.option)  # "element:<id>" or "double_charge:<id>"
        return
    u, t = battle.unit(action.unit), battle.unit(action.target)
    u.flags["shot"] = True  # CORE.SHOOT.ELIGIBLE: each unit shoots once, at one target
    battle.emit("CORE.SHOOT.ELIGIBLE", unit=u.uid, target=t.uid, moved=bool(u.flags.get("moved")))
    if action.option == breath.OPTION:
        breath.breathe(battle, u, t)  # CORE.SR.BREATH_WEAPON
        return
    if u.troop_type == "war_machine":
        war_machines.fire(battle, u, t, action.option)  # CORE.WM.*; the option picks the fire mode and aim
        return
    resolve_fire(battle, u, t)


@lru_cache(maxsize=256)
def _outline_box(points: tuple[tuple[float, float], ...]) -> tuple[float, float, float, float]:
    """The bounding box (x0, y0, x1, y1) of a terrain outline's vertices, inches (its polygon's ``bounds``)."""
    xs = [q[0] for q in points]
    ys = [q[1] for q in points]
    return min(xs), min(ys), max(xs), max(ys)


def cover(battle: Battle, shooter: UnitState, t: UnitState) -> int:
    """Cover to-hit modifier: 0, −1 soft or −2 hard (CORE.TERRAIN.COVER); only the best counts.

    A feature gives cover only if at least half the target's models are in it
    (their centre inside) or behind it (the line from the shooter's front
    midpoint to the model's centre crosses it). Model centres come from the
    formation (CORE.GEO.FORMATION); a war machine is one model, its centre.
    The terrain's part is kept per shooter footprint, target formation and
    terrain (:func:`terrain_cover`); a castle's part is worked out each time.
    """
    state = battle.state
    key = (space.terrain_key(state), shooter.x, shooter.y, shooter.facing, shooter.width, shooter.depth,
           t.troop_type == "war_machine" or t.models <= 1, t.x, t.y, t.facing, t.files, t.models, t.base_w, t.base_d)
    best = _COVER.get(key)
    if best is None:
        if len(_COVER) >= 16384:
            _COVER.clear()
        best = _COVER[key] = terrain_cover(state.terrain, shooter, t)
    if state.castle:  # SIEGE.CASTLE.WALL / TOWER: stone hard, wood soft, ruins hard
        from battleline.env.rules.siege.castle import cover_for

        best = max(best, -(cover_for(state, t) or 0))
    return -best


_COVER: dict[tuple, int] = {}
""":func:`terrain_cover` by (terrain number, the shooter's footprint, the target's formation): see :func:`cover`."""


def terrain_cover(terrain: list[TerrainFeature], shooter: UnitState, t: UnitState) -> int:
    """The best cover the terrain features give ``t`` against ``shooter``: 0, 1 soft or 2 hard (CORE.TERRAIN.COVER).

    Reads the shooter's footprint (x, y, facing, width, depth; inches, degrees), the target's place and
    formation (x, y, facing, files, models, base size, war machine or not) and the features' kinds and outlines.
    """
    fl, fr = geo.front_edge(space.pose(shooter), shooter.width, shooter.depth)
    mid = ((fl[0] + fr[0]) / 2, (fl[1] + fr[1]) / 2)
    if t.troop_type == "war_machine" or t.models <= 1:
        centres = np.array([[t.x, t.y]])
    else:
        centres = geo.model_centres(space.pose(t), t.files, t.models, t.base_w, t.base_d)
    lo = np.minimum(centres.min(axis=0), mid).tolist()  # the box holding every line and centre (inches)
    hi = np.maximum(centres.max(axis=0), mid).tolist()
    lines = points = None  # built for the first feature whose box meets that box
    best = 0
    for feat in terrain:
        value = 2 if feat.kind in space.HARD_COVER else 1 if feat.kind in space.SOFT_COVER else 0
        if value <= best:
            continue
        x0, y0, x1, y1 = _outline_box(tuple(tuple(q) for q in feat.polygon))
        if x0 > hi[0] or x1 < lo[0] or y0 > hi[1] or y1 < lo[1]:
            continue  # no line crosses it and no centre is in it: no model has this cover
        if lines is None:
            lines = shapely.linestrings([[mid, (float(x), float(y))] for x, y in centres])
            points = shapely.points(centres)
        poly = space.terrain_poly(feat)
        covered = shapely.intersects(lines, poly) | shapely.contains(poly, points)
        if 2 * int(covered.sum()) >= len(centres):
            best = value
    return best


def to_hit_modifier(battle: Battle, u: UnitState, t: UnitState, stand_and_shoot: bool, multi: bool) -> tuple[int, dict]:
    """The cumulative to-hit modifier and its parts (CORE.SHOOT.MODIFIERS)."""
    w = weapon(u, battle.state)
    parts: dict[str, int] = {}
    if space.unit_distance(u, t) > w.range / 2:
        parts["long_range"] = -1
    moved = u.flags.get("moved") or u.flags.get("rallied")
    fast = special_rules.fast_cavalry(battle.state, u)
    if moved and not stand_and_shoot and not (w.quick_to_fire or u.has("quick_to_fire") or fast):
        parts["moved"] = -1
    c = cover(battle, u, t)
    if c:
        parts["cover"] = c
    if multi:
        parts["multiple_shots"] = -1
    if stand_and_shoot:
        parts["stand_and_shoot"] = -1
    if t.has("large_target"):
        parts["large_target"] = 1
    elif t.models == 1 and not u.has("sniper"):
        parts["single_model"] = -1
    if t.has("skirmishers"):
        parts["skirmishers"] = -1
    if t9a.on(battle.state, t9a.EQUIPMENT):  # T9A.MISSILE.RULES: Accurate, Unwieldy
        equipment.missile_modifiers(u, w, parts, stand_and_shoot)
    if t9a_pp.plays(battle.state):  # T9A.PP.HARD_TARGET
        parts.update(t9a_pp.hard_target_parts(battle, t))
    return sum(parts.values()), parts


def shooters(u: UnitState, w: tables.MissileWeapon | None = None) -> tuple[int, int]:
    """(models in ranks 1–2, extra Volley Fire models) (CORE.SHOOT.SHOOTERS, CORE.SR.VOLLEY_FIRE; a T9A
    weapon ``w`` may carry Volley Fire, T9A.MISSILE.TABLE)."""
    first_two = u.models_in_rank(1) + u.models_in_rank(2)
    rest = u.models - first_two
    volley = rest // 2 if u.has("volley_fire") or getattr(w, "volley_fire", False) else 0
    return first_two, volley


def resolve_fire(battle: Battle, u: UnitState, t: UnitState, stand_and_shoot: bool = False) -> int:
    """Resolve one unit's shooting at ``t``: hits, wounds, saves, casualties, Panic.

    CORE.SHOOT.TO_HIT, MODIFIERS, TO_WOUND, ALLOCATE, CASUALTIES;
    CORE.SAVE.ARMOUR_TABLE, MODIFIERS; CORE.PSY.PANIC.TRIGGER_CASUALTIES
    (not for Stand and Shoot). With CORE.SR.MULTIPLE_SHOTS ×N each model
    takes N shots at −1, unless N × the chance of one such shot is below the
    chance of a single shot (:func:`env.rules.tables.shot_chance`; e.g. a
    single shot needing 9 against N shots needing an impossible 10). Returns
    the models killed.
    """
    w = weapon(u, battle.state)
    # CORE.SR.MULTIPLE_SHOTS: 1 shot, or N shots at −1 each; the N shots unless they expect fewer hits.
    shots_per_model = max(w.multiple_shots, special_rules.multiple_shots(u))
    multi = shots_per_model > 1
    if multi:
        single, _ = to_hit_modifier(battle, u, t, stand_and_shoot, False)
        one = tables.shot_chance(tables.shooting_to_hit(u.profile.BS, single))
        if shots_per_model * tables.shot_chance(tables.shooting_to_hit(u.profile.BS, single - 1)) < one:
            shots_per_model, multi = 1, False
    if multi:
        battle.emit("CORE.SR.MULTIPLE_SHOTS", unit=u.uid, shots_per_model=shots_per_model)
    mod, parts = to_hit_modifier(battle, u, t, stand_and_shoot, multi)
    front, volley = shooters(u, w)
    _log_shot(battle, u, t, stand_and_shoot, parts, front, volley)
    rule = "CORE.REACT.STAND_SHOOT" if stand_and_shoot else "CORE.SHOOT.TO_HIT"
    sixes: list[int] = []
    hits = _roll_hits(battle, u.profile.BS, mod, front * shots_per_model, rule, sixes)
    hits = magic.reroll_missed_shots(battle, u, front * shots_per_model, hits, tables.shooting_to_hit(u.profile.BS, mod))
    if volley:
        hits += _roll_hits(battle, u.profile.BS, mod - 1, volley * shots_per_model, "CORE.SR.VOLLEY_FIRE", sixes)
    hits, on_characters = characters.allocate_hits(battle, t, hits)  # CORE.SHOOT.ALLOCATE
    hits, rider_hits = monsters.split_rider_hits(battle, t, hits)  # CORE.SHOOT.ALLOCATE: a rider on 5–6
    if t.troop_type == "war_machine":
        battle.emit("CORE.WM.SHOT_AT", unit=t.uid, shooter=u.uid, hits=hits, toughness=t.profile.T)
    strength = w.strength if w.strength is not None else u.profile.S
    needed = tables.to_wound(strength, t.profile.T)
    res = special_rules.wound_and_save(
        battle, u, t, hits, strength, armour_piercing=w.armour_piercing or u.has("armour_piercing"), poisoned=sum(sixes),
        wound_rule="CORE.SHOOT.TO_WOUND", ap=equipment.missile_ap(w),
    )
    wounds, save, saved, unsaved = res.wounds, res.armour_needed, res.armour_saved, res.unsaved
    battle.emit(
        "CORE.SHOOT.MODIFIERS", unit=u.uid, target=t.uid, modifier=mod, parts=parts, needed=tables.shooting_to_hit(u.profile.BS, mod)
    )
    battle.emit(
        "CORE.SHOOT.TO_WOUND", unit=u.uid, target=t.uid, hits=hits, strength=strength, needed=needed, wounds=wounds
    )
    if not t9a.on(battle.state, t9a.EQUIPMENT):  # T9A.ARMOUR.VALUE replaces it
        battle.emit("CORE.SAVE.ARMOUR_TABLE", unit=t.uid, base_save=t.armour_save, needed=save, saved=saved)
    battle.emit("CORE.SHOOT.ALLOCATE", unit=u.uid, target=t.uid, unsaved=unsaved)
    champion = t.champion
    _, killed = special_rules.apply_result(battle, t, res, "CORE.SHOOT.CASUALTIES", shooter=u.uid)
    if u.has("sniper") and champion and t.champion and killed:
        t.champion = False  # CORE.SR.SNIPER: the shooter picks the champion, removed first (CORE.CC.CASUALTIES)
        battle.emit("CORE.SR.SNIPER", unit=u.uid, target=t.uid, champion_slain=True)
    for cid, n in on_characters.items():
        characters.shoot_character(battle, u, battle.unit(cid), n, strength, w.armour_piercing or u.has("armour_piercing"),
                                   ap=equipment.missile_ap(w))
    monsters.wound_rider(battle, u, t, rider_hits, strength, armour_piercing=w.armour_piercing or u.has("armour_piercing"),
                         ap=equipment.missile_ap(w))
    if not stand_and_shoot:
        psychology.panic_after_shooting(battle, u, [t.uid])
    return killed


def _log_shot(
    battle: Battle, u: UnitState, t: UnitState, stand_and_shoot: bool, parts: dict[str, int], front: int, volley: int
) -> None:
    """Log the rules a shot was declared and counted under.

    CORE.SHOOT.WEAPONS (the weapon's profile), CORE.SHOOT.TARGET with
    CORE.GEO.VISION_ARC and CORE.GEO.LOS (the target seen, at its distance in
    inches; a Stand and Shoot aims at its charger), CORE.SHOOT.MOVE_OR_FIRE
    (the weapon fires unmoved), CORE.SHOOT.SHOOTERS (the models shooting:
    ranks 1–2 and the CORE.SR.VOLLEY_FIRE extra), and the modifiers' sources: CORE.SR.QUICK_TO_FIRE
    or CORE.SR.FAST_CAVALRY (no −1 for moving), CORE.TERRAIN.HILL_LEVEL (the
    shooter's and target's levels, when either stands on a hill),
    CORE.TERRAIN.COVER and CORE.SR.LARGE_TARGET.
    """
    w = weapon(u, battle.state)
    distance = round(space.unit_distance(u, t), 3)
    if t9a.on(battle.state, t9a.EQUIPMENT):  # T9A.MISSILE.TABLE replaces CORE.SHOOT.WEAPONS
        equipment.log_missile(battle, u, t, w, parts, distance, volley)
    else:
        battle.emit("CORE.SHOOT.WEAPONS", unit=u.uid, weapon=w.name, range=w.range, strength=w.strength,
                    armour_piercing=w.armour_piercing, move_or_fire=w.move_or_fire, quick_to_fire=w.quick_to_fire)
    battle.emit("CORE.SHOOT.TARGET", unit=u.uid, target=t.uid, distance=distance, range=w.range,
                stand_and_shoot=stand_and_shoot)
    if not stand_and_shoot:
        battle.emit("CORE.GEO.VISION_ARC", unit=u.uid, target=t.uid, in_arc=True)
        battle.emit("CORE.GEO.LOS", unit=u.uid, target=t.uid, seen=True)
    if w.move_or_fire:
        battle.emit("CORE.SHOOT.MOVE_OR_FIRE", unit=u.uid, weapon=w.name, moved=False)
    battle.emit("CORE.SHOOT.SHOOTERS", unit=u.uid, ranks_1_2=front, volley=volley)
    if (u.flags.get("moved") or u.flags.get("rallied")) and not stand_and_shoot and "moved" not in parts:
        waived = "CORE.SR.QUICK_TO_FIRE" if w.quick_to_fire or u.has("quick_to_fire") else "CORE.SR.FAST_CAVALRY"
        battle.emit(waived, unit=u.uid, moved=True, modifier=0)
    levels = [int(space.on_hill(battle.state, x)) for x in (u, t)]
    if any(levels):
        battle.emit("CORE.TERRAIN.HILL_LEVEL", unit=u.uid, target=t.uid, levels=levels)
    if "cover" in parts:
        battle.emit("CORE.TERRAIN.COVER", unit=t.uid, shooter=u.uid, modifier=parts["cover"])
    if "large_target" in parts:
        battle.emit("CORE.SR.LARGE_TARGET", unit=t.uid, shooter=u.uid, modifier=parts["large_target"])
    t9a_pp.log_hard_target(battle, u, t, parts)  # T9A.PP.HARD_TARGET (only in parts when the module plays)


def _roll_hits(battle: Battle, bs: int, mod: int, shots: int, rule: str, sixes: list[int] | None = None) -> int:
    """Roll ``shots`` to-hit dice with follow-up dice for needs of 7–9 (CORE.SHOOT.TO_HIT).

    Appends to ``sixes`` how many hits were natural 6s (CORE.SR.POISON).
    """
    if shots <= 0:
        return 0
    needed = tables.shooting_to_hit(bs, mod)
    if needed >= 10:
        battle.emit(rule, shots=shots, needed=needed, hits=0, impossible=True)
        return 0
    faces = battle.dice.d6(rule, shots)
    hits = six_hits = 0
    for f in faces:
        second = battle.dice.d6(rule)[0] if needed > 6 and f == 6 else None
        hit = tables.shot_hits(needed, f, second)
        hits += hit
        six_hits += hit and f == 6
    if sixes is not None:
        sixes.append(six_hits)
    battle.emit(rule, shots=shots, needed=needed, hits=hits)
    return hits
