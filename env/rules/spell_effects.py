"""What a cast spell does: damage, lasting effects, moves, and the lore attributes.

:func:`resolve` runs a spell that was cast and not dispelled
(CORE.MAGIC.SPELL.*); :func:`after_cast` applies the lore attributes that
follow a wizard's successful cast (CORE.MAGIC.ATTR.LIFE, SHADOW, DEATH).
Spell hits resolve like shots from allocation on (CORE.MAGIC.DAMAGE):
to-wound S v T, armour save unless the spell or Flaming forbids it, ward and
Regeneration, casualties (CORE.CC.CASUALTIES), then Panic on heavy losses
(CORE.PSY.PANIC.TRIGGER_CASUALTIES). Distances are in inches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import shapely

from battleline.env.rules import geometry as geo
from battleline.env.rules import magic, movement, psychology, space, t9a, tables, war_machine_profiles
from battleline.env.rules.casualties import apply_wounds
from battleline.env.rules.spells import Spell
from battleline.env.rules.state import UnitState
from battleline.env.rules.t9a import protections as t9a_pp

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

COMET_REACH = 3.0  # CORE.MAGIC.SPELL.HEAVENS.4
LIFE_REACH = 12.0  # CORE.MAGIC.ATTR.LIFE
SHADOW_REACH = 18.0  # CORE.MAGIC.ATTR.SHADOW
FLYING = ("fly", "hover")  # CORE.TYPE.FLYER


def resolve(battle: Battle, caster: UnitState, sp: Spell, target: UnitState) -> int:
    """Apply ``sp`` cast by ``caster`` on ``target``. Returns the wounds it caused (CORE.MAGIC.ATTR.DEATH).

    An enemy target with Magic Resistance may cancel it first
    (CORE.SR.MAGIC_RESISTANCE); an enemy flyer hit by a hostile Heavens spell
    takes D6 extra S4 hits (CORE.MAGIC.ATTR.HEAVENS).
    """
    if not target.alive:
        return 0
    if sp.effect in ("hits", "single_hit", "lasting"):  # the other kinds record their own event
        battle.emit(sp.id, unit=caster.uid, target=target.uid, name=sp.name)
    if sp.params.get("comet"):
        return _comet(battle, caster, sp, target)
    if magic.resisted(battle, caster, target, sp):
        return 0
    kind = sp.effect
    wounds = 0
    if kind == "hits":
        wounds = _hits(battle, caster, sp, target)
    elif kind == "single_hit":
        wounds = damage(battle, caster, target, 1, sp.params["S"], save=sp.params["S"] is not None,
                        flaming=sp.lore == "fire", multi=sp.params["wounds"], spell=sp.id)
    elif kind == "lasting":
        magic.add_effect(battle, caster, sp, target)
    elif kind == "spirit_leech":
        wounds = _spirit_leech(battle, caster, sp, target)
    elif kind == "dwellers":
        wounds = _dwellers(battle, caster, sp, target)
    elif kind == "steed":
        _steed(battle, caster, sp, target)
    elif kind == "lurker":
        _lurker(battle, caster, sp, target)
    if sp.lore == "heavens" and sp.hostile and target.alive and target.side != caster.side and any(target.has(r) for r in FLYING):
        extra = battle.dice.sum_d6("CORE.MAGIC.ATTR.HEAVENS", 1)[0]
        battle.emit("CORE.MAGIC.ATTR.HEAVENS", unit=caster.uid, target=target.uid, hits=extra)
        wounds += damage(battle, caster, target, extra, 4, spell=sp.id)
    return wounds


def _hit_count(battle: Battle, sp: Spell, t: UnitState) -> int:
    """Hits of a ``hits`` spell: n D6 + fixed; +1 D6 against Undead and Daemons (CORE.MAGIC.ATTR.LIGHT)."""
    dice = sp.params["dice"]
    if sp.lore == "light" and (t.has("undead") or t.has("daemon")):
        dice += 1
        battle.emit("CORE.MAGIC.ATTR.LIGHT", spell=sp.id, target=t.uid, dice=dice)
    rolled = battle.dice.sum_d6("CORE.MAGIC.DAMAGE", dice)[0] if dice else 0
    return rolled + sp.params.get("fixed", 0)


def _hits(battle: Battle, caster: UnitState, sp: Spell, t: UnitState) -> int:
    hits = _hit_count(battle, sp, t)
    fire = sp.lore == "fire"
    wounds = damage(battle, caster, t, hits, sp.params["S"], save=sp.params["save"], flaming=fire, spell=sp.id)
    if fire and hits > 0:
        battle.state.queue["magic"]["fire_hits"].append([t.uid, caster.uid])
    return wounds


def _comet(battle: Battle, caster: UnitState, sp: Spell, target: UnitState) -> int:
    """Comet: D6 S4 hits on the target and on each other unit within 3" of it, friends included."""
    hit = [target] + [
        o for o in space.alive_units(battle.state)
        if o.uid != target.uid and space.near(o, target, COMET_REACH) and space.unit_distance(o, target) <= COMET_REACH + geo.EPS
    ]
    wounds = 0
    for u in hit:
        if not u.alive or magic.resisted(battle, caster, u, sp):
            continue
        wounds += damage(battle, caster, u, _hit_count(battle, sp, u), sp.params["S"], spell=sp.id)
    return wounds


def damage(
    battle: Battle,
    caster: UnitState,
    t: UnitState,
    hits: int,
    strength: int | None,
    save: bool = True,
    flaming: bool = False,
    multi: str | None = None,
    rule: str = "CORE.MAGIC.DAMAGE",
    spell: str | None = None,
) -> int:
    """Resolve ``hits`` magical hits on ``t`` like shots (CORE.MAGIC.DAMAGE). Returns wounds lost.

    Args:
        strength: hit S; None for a Metal hit: S = 7 − the target's save, no
            armour save, no effect on a model without a save (CORE.MAGIC.ATTR.METAL).
        save: whether armour saves are allowed; Flaming hits allow none
            (CORE.SAVE.NONE, CORE.MAGIC.ATTR.FIRE) and no Regeneration.
        multi: "D3" or "D6": each unsaved hit costs one model that many W
            (CORE.WOUND.APPLY: the excess is lost).
        rule: the rule ID recorded as the casualties' cause.
    """
    if hits <= 0 or not magic._in_play(t):
        return 0
    if strength is None:
        base = t.armour_save
        if base >= tables.IMPOSSIBLE:
            battle.emit("CORE.MAGIC.ATTR.METAL", target=t.uid, unaffected=True)
            return 0
        strength, save = 7 - base, False
        battle.emit("CORE.MAGIC.ATTR.METAL", target=t.uid, strength=strength)
    needed = tables.to_wound(strength, t.profile.T)
    wound_faces = battle.dice.d6("CORE.SHOOT.TO_WOUND", hits)
    if t9a_pp.plays(battle.state):  # T9A.PP.FLAMMABLE: Flaming spells re-roll failed wounds
        wound_faces = t9a_pp.flammable_rerolls(battle, caster, t, wound_faces, needed, flaming=flaming)
    wounds = sum(1 for f in wound_faces if f >= needed)
    needed_save, saved = tables.IMPOSSIBLE, 0
    if save and not flaming:
        needed_save, save_rule = tables.armour_save_needed(t.armour_save, strength), "CORE.SAVE.MODIFIERS"
        if t9a.on(battle.state, t9a.EQUIPMENT):  # T9A.ARMOUR.VALUE: a spell's hits have AP 0
            from battleline.env.rules.t9a import equipment

            needed_save, save_rule = equipment.save_needed(battle, None, t, 0, False, False), "T9A.ARMOUR.VALUE"
        if wounds and needed_save <= 6:
            saved = sum(1 for f in battle.dice.d6(save_rule, wounds) if tables.save_passes(needed_save, f))
    elif wounds:
        battle.emit("CORE.SAVE.NONE", unit=t.uid, reason="flaming" if flaming else "no armour save")
    if t9a_pp.plays(battle.state):  # T9A.SAVE.ONE_SPECIAL ⇒ the ward save and Regeneration
        unsaved = t9a_pp.spell_saves(battle, caster, t, wounds - saved, flaming)
    else:
        unsaved = ward_and_regen(battle, t, wounds - saved, flaming)
    if flaming and unsaved > 0 and t.has("flammable") and not t9a_pp.plays(battle.state):
        battle.emit("CORE.SR.FLAMMABLE", unit=t.uid, wounds=unsaved, doubled=2 * unsaved)
        unsaved *= 2
    lost = unsaved
    if multi and unsaved > 0:
        per_hit = battle.dice.d3(rule) if multi == "D3" else battle.dice.d6(rule)[0]
        lost = min(per_hit, max(1, t.profile.W - t.wounds_taken))
    battle.emit(
        "CORE.MAGIC.DAMAGE", unit=caster.uid, target=t.uid, spell=spell, hits=hits, strength=strength,
        to_wound=needed, wounds=wounds, save=needed_save, saved=saved, unsaved=unsaved, lost=lost,
    )
    battle.emit("CORE.SHOOT.ALLOCATE", unit=caster.uid, target=t.uid, unsaved=lost, magic=True)
    apply_wounds(battle, t, lost, rule=rule, caster=caster.uid)
    check_panic(battle, caster, t)
    return lost


def rule_value(u: UnitState, name: str, default: int) -> int | None:
    """The X of special rule ``name_X`` (``default`` when bare), or None without it; the first listed counts."""
    for r in u.special_rules:
        if r == name:
            return default
        if r.startswith(name + "_") and r[len(name) + 1 :].isdigit():
            return int(r[len(name) + 1 :])
    return None


def ward_and_regen(battle: Battle, t: UnitState, unsaved: int, flaming: bool) -> int:
    """Ward save, then Regeneration (not against Flaming), on ``unsaved`` wounds. Returns the wounds left.

    CORE.SAVE.PIPELINE, CORE.SAVE.WARD, CORE.SR.REGENERATION (4+ if unstated);
    spell-given saves are special rules while they last (:mod:`env.rules.magic`).
    """
    ward = rule_value(t, "ward_save", 7)
    if ward is not None and unsaved > 0:
        saved = sum(1 for f in battle.dice.d6("CORE.SAVE.WARD", unsaved) if tables.save_passes(ward, f))
        battle.emit("CORE.SAVE.WARD", unit=t.uid, needed=ward, saved=saved)
        unsaved -= saved
    regen = rule_value(t, "regeneration", 4)
    if regen is not None and unsaved > 0:
        if flaming:
            battle.emit("CORE.SR.REGENERATION", unit=t.uid, needed=regen, blocked="flaming")
        else:
            saved = sum(1 for f in battle.dice.d6("CORE.SR.REGENERATION", unsaved) if f >= regen)
            battle.emit("CORE.SR.REGENERATION", unit=t.uid, needed=regen, saved=saved)
            unsaved -= saved
    return unsaved


def check_panic(battle: Battle, caster: UnitState, t: UnitState) -> None:
    """CORE.PSY.PANIC.TRIGGER_CASUALTIES for magic-phase losses (CORE.MAGIC.DAMAGE)."""
    if t.alive and t.flags.get("lost_this_phase", 0) > t.flags.get("front_rank_at_phase", t.files):
        psychology.panic_test(battle, t, (caster.x, caster.y), "CORE.PSY.PANIC.TRIGGER_CASUALTIES", source=caster.uid)


def _spirit_leech(battle: Battle, caster: UnitState, sp: Spell, t: UnitState) -> int:
    """Spirit Leech: caster and target model each roll 2D6 + Ld; the target loses the excess in W, no saves."""
    mine = battle.dice.sum_d6(sp.id, 2)[0] + caster.profile.Ld
    theirs = battle.dice.sum_d6(sp.id, 2)[0] + t.profile.Ld
    lost = min(mine - theirs, max(1, t.profile.W - t.wounds_taken)) if mine > theirs else 0
    model = "character" if t.character else "champion" if t.champion else "rank_and_file"
    battle.emit(sp.id, unit=caster.uid, target=t.uid, model=model, caster_total=mine, target_total=theirs, lost=lost)
    if lost:
        apply_wounds(battle, t, lost, rule="CORE.MAGIC.DAMAGE", caster=caster.uid)
        check_panic(battle, caster, t)
    return lost


def remove_models(battle: Battle, t: UnitState, n: int, caster: UnitState) -> int:
    """Remove ``n`` whole models (no saves). Returns the wounds that took."""
    n = min(n, t.models)
    if n <= 0:
        return 0
    wounds = n * max(1, t.profile.W) - t.wounds_taken
    apply_wounds(battle, t, wounds, rule="CORE.MAGIC.DAMAGE", caster=caster.uid)
    return wounds


def _dwellers(battle: Battle, caster: UnitState, sp: Spell, t: UnitState) -> int:
    """Dwellers Below: an S test per model (CORE.TEST.CHARACTERISTIC); each failure is removed, no saves."""
    s = t.profile.S
    if war_machine_profiles.auto_fails(battle, t, "S"):  # CORE.WM.TESTS: a war machine fails every S test
        failed = t.models
        battle.emit(sp.id, unit=caster.uid, target=t.uid, strength=s, tests=t.models, failed=failed, automatic=True)
        wounds = remove_models(battle, t, failed, caster)
        check_panic(battle, caster, t)
        return wounds
    faces = battle.dice.d6(sp.id, t.models)
    failed = sum(1 for f in faces if f == 6 or (f != 1 and f > s))
    battle.emit("CORE.TEST.CHARACTERISTIC", unit=t.uid, characteristic="S", value=s, dice=faces, failed=failed)
    battle.emit(sp.id, unit=caster.uid, target=t.uid, strength=s, tests=len(faces), failed=failed)
    wounds = remove_models(battle, t, failed, caster)
    check_panic(battle, caster, t)
    return wounds


def _steed(battle: Battle, caster: UnitState, sp: Spell, t: UnitState) -> None:
    """Steed of Shadows: the character flies up to 20" towards the nearest enemy, ending ≥ 1" from every unit.

    DEFAULT: the destination is the furthest legal point on the line to the
    nearest enemy (tried in 0.5" steps); the character then faces that enemy.
    """
    enemy = psychology.nearest_enemy(battle, t)
    if enemy is None:
        return
    heading = geo.facing_towards((t.x, t.y), (enemy.x, enemy.y))
    env = space.Surroundings(battle.state, t)
    dist = sp.params["distance"]
    while dist > 0:
        end = geo.move_straight(geo.Pose(t.x, t.y, heading), dist)
        poly = space.footprint_at(t, end)
        if not env.blocked(poly, poly, gap=1.0):
            t.x, t.y, t.facing = end.x, end.y, end.facing % 360.0
            battle.emit(sp.id, unit=caster.uid, target=t.uid, distance=dist, x=t.x, y=t.y, facing=t.facing)
            return
        dist -= 0.5
    battle.emit(sp.id, unit=caster.uid, target=t.uid, distance=0.0, x=t.x, y=t.y, facing=t.facing)


def _lurker(battle: Battle, caster: UnitState, sp: Spell, t: UnitState) -> None:
    """Unseen Lurker: the unit advances straight up to M, ending ≥ 1" from enemies (CORE.MOVE.NORMAL)."""
    d = movement.furthest_legal(battle, t, space.pose(t), float(t.profile.M)) or 0.0
    end = geo.move_straight(space.pose(t), d)
    t.x, t.y = end.x, end.y
    t.flags["moved"] = True
    battle.emit(sp.id, unit=caster.uid, target=t.uid, distance=d, x=t.x, y=t.y, facing=t.facing)


def models_within(battle: Battle, u: UnitState, reach: float) -> list[tuple[UnitState, int]]:
    """(unit, models) for every other unit with model centres within ``reach`` inches of ``u``'s footprint.

    Any side's units count, ``u``'s own too; only units with at least one such model are listed.
    """
    poly = space.footprint(u)
    out = []
    for o in space.alive_units(battle.state):
        if o.uid == u.uid or not space.near(o, u, reach + max(o.base_w, o.base_d)):
            continue
        centres = geo.model_centres(space.pose(o), o.files, o.models, o.base_w, o.base_d)
        n = int(np.count_nonzero(shapely.distance(shapely.points(centres), poly) <= reach + geo.EPS))
        if n:
            out.append((o, n))
    return out


# --------------------------------------------------------------------- lore attributes
def after_cast(battle: Battle, wizard: UnitState, sp: Spell, wounds: int) -> None:
    """Lore attributes after a wizard's successful cast: LIFE heals, DEATH adds dice, SHADOW offers a swap."""
    if sp.lore == "life":
        _life(battle, wizard)
    elif sp.lore == "death" and wounds > 0:
        m = battle.state.queue["magic"]
        faces = battle.dice.d6("CORE.MAGIC.ATTR.DEATH", wounds)
        gained = min(sum(1 for f in faces if f >= 5), max(0, magic.MAX_POOL - m["power"]))
        m["power"] += gained
        battle.emit("CORE.MAGIC.ATTR.DEATH", unit=wizard.uid, wounds=wounds, dice=faces, gained=gained, power=m["power"])
    elif sp.lore == "shadow" and shadow_partners(battle, wizard):
        battle.state.queue["magic"]["swap"] = wizard.uid
        battle.emit("CORE.MAGIC.ATTR.SHADOW", unit=wizard.uid, offered=[p.uid for p in shadow_partners(battle, wizard)])


def _life(battle: Battle, wizard: UnitState) -> None:
    """CORE.MAGIC.ATTR.LIFE: the wizard, else the most wounded friendly model within 12", regains 1 W.

    DEFAULT: only a wounded model heals (no model returns); ties go to the lower uid.
    """
    wounded = [
        f for f in space.alive_units(battle.state, wizard.side)
        if f.wounds_taken > 0 and (f.uid == wizard.uid or space.unit_distance(f, wizard) <= LIFE_REACH)
    ]
    if not wounded:
        return
    f = wizard if wizard in wounded else max(wounded, key=lambda x: (x.wounds_taken, -x.uid))
    f.wounds_taken -= 1
    battle.emit("CORE.MAGIC.ATTR.LIFE", unit=wizard.uid, healed=f.uid, wounds_taken=f.wounds_taken)


def shadow_partners(battle: Battle, wizard: UnitState) -> list[UnitState]:
    """CORE.MAGIC.ATTR.SHADOW: friendly infantry characters within 18" the wizard may swap with.

    Neither may be engaged or fleeing; the bases must match (DEFAULT), so the
    swap leaves both footprints where the other's was.
    """
    if not wizard.alive or wizard.fleeing or psychology.engaged(battle, wizard):
        return []
    return [
        f for f in space.alive_units(battle.state, wizard.side)
        if f.uid != wizard.uid and f.character and f.troop_type == "infantry" and not f.fleeing
        and (f.base_w, f.base_d) == (wizard.base_w, wizard.base_d)
        and not psychology.engaged(battle, f) and space.unit_distance(f, wizard) <= SHADOW_REACH
    ]


def shadow_swap(battle: Battle, wizard: UnitState, other: UnitState) -> None:
    """Swap the places (centre and facing) of the Shadow wizard and a friendly character."""
    (wizard.x, wizard.y, wizard.facing), (other.x, other.y, other.facing) = (
        (other.x, other.y, other.facing),
        (wizard.x, wizard.y, wizard.facing),
    )
    battle.emit("CORE.MAGIC.ATTR.SHADOW", unit=wizard.uid, swapped_with=other.uid, x=wizard.x, y=wizard.y)
