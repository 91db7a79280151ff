"""Special rules and troop types (RULESET.md §4: CORE.SR.*, CORE.TYPE.*): shared helpers.

Unit data names special rules by lower-case ids (``config.SPECIAL_RULES``). A
parameterised rule carries its value in the id: ``impact_hits_3``,
``impact_hits_d6``, ``regeneration_5``, ``multiple_shots_3``, ``ward_save_4``,
``hatred_orcs`` (hatred of one faction; plain ``hatred`` hates every enemy).

This module answers "does this unit have rule X, with which value" and holds
the rule logic that several phases share:

* the wound and save pipeline (CORE.SAVE.PIPELINE) with Poison, Killing Blow,
  Flaming, Flammable, Ethereal, ward saves and Regeneration;
* impact hits and breath weapons before the blows of a combat round;
* strike-order tiers (Always Strikes First / Last);
* Frenzy loss, Swarm losses and Regeneration healing.

Rules that belong to one phase live in that phase's module (Fear, Terror and
Stupidity in :mod:`env.rules.psychology`; the Vanguard move in
:mod:`env.rules.deployment`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from battleline.env.rules import t9a, tables
from battleline.env.rules.casualties import apply_wounds
from battleline.env.rules.state import BattleState, UnitState
from battleline.env.rules.t9a import protections as t9a_pp
from battleline.env.rules.t9a.attributes import attack_attributes, multiple_wounds_applied

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.geometry import Pose
    from battleline.env.rules.state import Engagement

RULE_IDS: dict[str, str] = {
    "always_strikes_first": "CORE.SR.ASF",
    "always_strikes_last": "CORE.SR.ASL",
    "aquatic": "CORE.SR.AQUATIC",
    "armour_piercing": "CORE.SR.ARMOUR_PIERCING",
    "breath_weapon": "CORE.SR.BREATH_WEAPON",
    "devastating_charge": "CORE.SR.DEVASTATING_CHARGE",
    "ethereal": "CORE.SR.ETHEREAL",
    "extra_attack": "CORE.SR.EXTRA_ATTACK",
    "extra_rank": "CORE.SR.EXTRA_RANK",
    "fast_cavalry": "CORE.SR.FAST_CAVALRY",
    "fear": "CORE.SR.FEAR",
    "flaming": "CORE.SR.FLAMING",
    "flammable": "CORE.SR.FLAMMABLE",
    "fly": "CORE.SR.FLY",
    "frenzy": "CORE.SR.FRENZY",
    "hatred": "CORE.SR.HATRED",
    "hover": "CORE.SR.HOVER",
    "immune_to_psychology": "CORE.SR.ITP",
    "impact_hits": "CORE.SR.IMPACT_HITS",
    "killing_blow": "CORE.SR.KILLING_BLOW",
    "large_target": "CORE.SR.LARGE_TARGET",
    "loremaster": "CORE.SR.LOREMASTER",
    "magic_resistance": "CORE.SR.MAGIC_RESISTANCE",
    "multiple_shots": "CORE.SR.MULTIPLE_SHOTS",
    "poison": "CORE.SR.POISON",
    "quick_to_fire": "CORE.SR.QUICK_TO_FIRE",
    "regeneration": "CORE.SR.REGENERATION",
    "scouts": "CORE.SR.SCOUTS",
    "skirmishers": "CORE.TYPE.SKIRMISHERS",
    "slow_to_fire": "CORE.SR.SLOW_TO_FIRE",
    "sniper": "CORE.SR.SNIPER",
    "stubborn": "CORE.SR.STUBBORN",
    "stupidity": "CORE.SR.STUPIDITY",
    "swarm": "CORE.SR.SWARM",
    "swiftstride": "CORE.SR.SWIFTSTRIDE",
    "terror": "CORE.SR.TERROR",
    "unbreakable": "CORE.SR.UNBREAKABLE",
    "volley_fire": "CORE.SR.VOLLEY_FIRE",
    "ward_save": "CORE.SAVE.WARD",
}
"""Unit-data rule id (without its parameter) → RULESET.md rule ID."""

TYPE_RULES: dict[str, tuple[str, ...]] = {
    "cavalry": ("swiftstride",),  # CORE.TYPE.CAVALRY
    "chariot": ("impact_hits_d6", "swiftstride"),  # CORE.TYPE.CHARIOT
    "monster": ("large_target",),  # CORE.TYPE.MONSTER (DEFAULT: Large Target)
}
"""Rules a troop type always has."""

IMPLIED_RULES: dict[str, tuple[str, ...]] = {
    "fly": ("swiftstride",),  # CORE.SR.FLY: flees and pursues on the ground, with Swiftstride
    "hover": ("swiftstride",),  # CORE.SR.HOVER: as Fly
}
"""Rules that come with another rule."""

FLY_MOVE = 10.0  # CORE.MOVE.FLY: 10" (20" marching); CORE.CHARGE.RANGE: flyers use M = 10
DEFAULT_REGENERATION = 4  # CORE.SR.REGENERATION: 4+ if unstated
BREATH_USES = 2  # CORE.SR.BREATH_WEAPON: at most twice per game


# --------------------------------------------------------------------- look-ups
def with_implied_rules(troop_type: str, rules: list[str]) -> list[str]:
    """``rules`` plus the rules its troop type and its rules bring (TYPE_RULES, IMPLIED_RULES), in order."""
    out = list(rules)
    for extra in TYPE_RULES.get(troop_type, ()) + tuple(r for rule in rules for r in IMPLIED_RULES.get(rule, ())):
        base = "impact_hits" if extra.startswith("impact_hits_") else extra
        if not any(r == base or r.startswith(base + "_") for r in out):
            out.append(extra)
    return out


def has_rule(u: UnitState, name: str) -> bool:
    """Whether ``u`` has rule ``name``, bare or with a parameter (``regeneration`` matches ``regeneration_5``)."""
    prefix = name + "_"
    return any(r == name or r.startswith(prefix) for r in u.special_rules)


def rule_param(u: UnitState, name: str) -> str | None:
    """The parameter of rule ``name`` ("" when bare), or None if ``u`` lacks it."""
    prefix = name + "_"
    for r in u.special_rules:
        if r == name:
            return ""
        if r.startswith(prefix):
            return r[len(prefix):]
    return None


def _int_param(u: UnitState, name: str, default: int | None) -> int | None:
    p = rule_param(u, name)
    if p is None:
        return None
    return int(p) if p.isdigit() else default


def regeneration(u: UnitState) -> int | None:
    """The Regeneration save needed (CORE.SR.REGENERATION: 4+ if unstated), or None."""
    return _int_param(u, "regeneration", DEFAULT_REGENERATION)


def ward_save(u: UnitState) -> int | None:
    """The ward save needed (CORE.SAVE.WARD), or None."""
    return _int_param(u, "ward_save", None)


def multiple_shots(u: UnitState) -> int:
    """Shots per model with Multiple Shots ×N (CORE.SR.MULTIPLE_SHOTS), else 1."""
    return _int_param(u, "multiple_shots", 1) or 1


def causes_terror(u: UnitState) -> bool:
    """CORE.SR.TERROR."""
    return u.has("terror")


def causes_fear(u: UnitState) -> bool:
    """CORE.SR.FEAR; Terror includes Fear (CORE.PSY.TERROR)."""
    return u.has("fear") or u.has("terror")


def immune_to_psychology(u: UnitState) -> bool:
    """ItP, Frenzy and Stupidity pass Fear, Terror and Panic tests automatically (CORE.PSY.HELPERS)."""
    return u.has("immune_to_psychology") or u.has("frenzy") or u.has("stupidity")


def fast_cavalry(state: BattleState, u: UnitState) -> bool:
    """CORE.SR.FAST_CAVALRY (Vanguard, no −1 for moving), lost while a non-Fast-Cavalry character is joined."""
    return u.has("fast_cavalry") and all(
        state.units[c].has("fast_cavalry") for c in u.joined if not state.units[c].removed
    )


def flyer(u: UnitState) -> bool:
    """CORE.TYPE.FLYER: a model with Fly or Hover."""
    return u.has("fly") or u.has("hover")


def swiftstride(u: UnitState) -> bool:
    """Flees and pursues with 3D6 dropping the lowest (CORE.SR.SWIFTSTRIDE; cavalry, chariots, flyers)."""
    return u.has("swiftstride") or u.troop_type in ("cavalry", "chariot") or flyer(u)


def move_allowance(u: UnitState) -> float:
    """The M a move uses: flyers fly 10" (CORE.MOVE.FLY), others use their M."""
    return max(float(u.profile.M), FLY_MOVE) if flyer(u) else float(u.profile.M)


def charge_m(u: UnitState) -> int:
    """The M of a charge roll (CORE.CHARGE.RANGE): flyers use M = 10 (CORE.SR.FLY)."""
    return int(FLY_MOVE) if flyer(u) else u.profile.M


def moves_over_units(u: UnitState) -> bool:
    """Flyers and Ethereal units ignore terrain and units en route (CORE.MOVE.FLY, CORE.SR.ETHEREAL, CORE.MOVE.ONE_INCH)."""
    return flyer(u) or u.has("ethereal")


STRAIGHT_MOVES = frozenset({"advance", "advance_half", "march", "backward"})
"""Move options that go straight ahead or back, costed over the area swept from start to end."""


_TERRAIN_SCENES: dict[tuple[Any, ...], tuple[list[Any], Any]] = {}
"""Terrain-only compiled scenes by (the terrain's rings, the mover's terrain exemptions), with the rings they were
built from (held, so that an id in a key stays that ring's). Cleared when it grows past 256 entries."""


def _terrain_scene(state: BattleState, u: UnitState) -> Any | None:
    """``kernel.scene(state, u)`` with every unit left out (a scene whose ``terrain_cost`` reads its terrain only),
    kept while the terrain stands as it was: the same scene for every move of a unit with the same exemptions
    (CORE.MOVE.FLY, CORE.SR.ETHEREAL, CORE.TYPE.SKIRMISHERS, CORE.SR.AQUATIC) and M/2. None where only the
    reference applies."""
    from battleline.env.rules import kernel

    terrain = None if state.castle or not kernel.available() else kernel.terrain_table(state)
    if terrain is None:  # a siege, no core, or a feature that is not convex: kernel.scene decides, afresh
        return kernel.scene(state, u, exclude=frozenset(o.uid for o in state.units))
    key = (tuple((cls, id(ring)) for cls, ring in terrain), u.has("aquatic"), moves_over_units(u), u.has("skirmishers"),
           u.profile.M / 2.0, float(state.table_w), float(state.table_h))
    hit = _TERRAIN_SCENES.get(key)
    if hit is None:
        if len(_TERRAIN_SCENES) > 256:
            _TERRAIN_SCENES.clear()
        hit = _TERRAIN_SCENES[key] = (terrain, kernel.scene(state, u, exclude=frozenset(o.uid for o in state.units)))
    return hit[1]


def log_move(battle: Battle, u: UnitState, start: Pose | None = None, option: str | None = None) -> None:
    """Log the rules that shaped a move ``u`` just made from ``start`` (after :func:`env.rules.movement.apply`).

    CORE.MOVE.FLY with CORE.SR.FLY or CORE.SR.HOVER: a flyer's allowance is
    10" (20" marching; Hover never marches). CORE.SR.AQUATIC: an Aquatic unit
    standing in water, which counts as open ground to it. CORE.TERRAIN.COST: a
    straight move whose swept area crossed difficult ground (×2) or obstacles
    (+M/2 each), with the multiplier and extra inches the move paid.
    """
    if not u.flags.get("moved") or not u.alive:
        return
    from battleline.env.rules import geometry as geo
    from battleline.env.rules import space

    if start is not None and option in STRAIGHT_MOVES and (start.x, start.y) != (u.x, u.y):
        rough = space.DIFFICULT | space.OBSTACLES
        if any(t.kind in rough for t in battle.state.terrain):
            scene = _terrain_scene(battle.state, u)
            cost = None if scene is None else scene.terrain_cost(start.x, start.y, start.facing, u.x, u.y, u.facing,
                                                                u.width, u.depth)
            if cost is not None:  # the compiled core: the same hull and tests
                mult, extra = cost
            else:  # the reference (or a tie the core left to it)
                path = geo.swept_area(space.footprint_at(u, start), space.footprint(u))
                mult, extra = space.Surroundings(battle.state, u).terrain_cost(path)
            if mult > 1.0 or extra > 0.0:
                moved = round(math.hypot(u.x - start.x, u.y - start.y), 3)
                battle.emit("CORE.TERRAIN.COST", unit=u.uid, option=option, distance=moved, multiplier=mult,
                            obstacle_inches=extra)
    if flyer(u):
        hover = not u.has("fly")
        marched = bool(u.flags.get("marched"))
        battle.emit("CORE.MOVE.FLY", unit=u.uid, allowance=FLY_MOVE * (2 if marched else 1), marched=marched)
        battle.emit("CORE.SR.HOVER" if hover else "CORE.SR.FLY", unit=u.uid, may_march=not hover)
    if u.has("aquatic"):
        poly = space.footprint(u)
        water = [t.kind for t in battle.state.terrain if t.kind in space.WATER and poly.intersects(space.terrain_poly(t))]
        if water:
            battle.emit("CORE.SR.AQUATIC", unit=u.uid, water=water, open_ground=True)


def magical_attacks(u: UnitState) -> bool:
    """Flaming and Ethereal attacks are magical (CORE.SR.FLAMING, CORE.SR.ETHEREAL)."""
    return u.has("flaming") or u.has("ethereal")


def hates(u: UnitState, t: UnitState) -> bool:
    """CORE.SR.HATRED: ``hatred`` hates every enemy, ``hatred_<faction>`` that faction only."""
    p = rule_param(u, "hatred")
    return p is not None and (p == "" or p == t.faction)


def strike_tiers(units: list[UnitState], strikes_last: dict[int, bool]) -> dict[int, int]:
    """Strike-order tier per unit from round 2 (CORE.CC.STRIKE_ORDER.LATER): +1 ASF, −1 ASL, 0 otherwise.

    A model with both strikes by I (tier 0). If one side has ASF and the other
    ASL, I decides for the whole combat (every tier 0).
    ``strikes_last`` says which units strike last by their weapon (great weapon).
    """
    tiers: dict[int, int] = {}
    for u in units:
        asf = u.has("always_strikes_first")
        asl = u.has("always_strikes_last") or strikes_last.get(u.uid, False)
        tiers[u.uid] = 0 if asf == asl else (1 if asf else -1)
    by_side = {u.uid: u.side for u in units}
    first = {by_side[i] for i, t in tiers.items() if t > 0}
    last = {by_side[i] for i, t in tiers.items() if t < 0}
    if any(s1 != s2 for s1 in first for s2 in last):
        return {i: 0 for i in tiers}
    return tiers


# --------------------------------------------------------------------- wounds and saves
@dataclass
class WoundResult:
    """Outcome of a batch of hits on one unit (CORE.SAVE.PIPELINE).

    Attributes:
        wounds: wounds caused before saves (auto-wounding Poison hits included).
        armour_needed: the modified armour save (7 = none).
        armour_saved: wounds stopped by armour.
        unsaved: ordinary unsaved wounds (one wound per hit).
        doubled: unsaved Flaming hits on a Flammable model (two wounds each).
        slain: unsaved Killing Blows (each slays a model outright).
    """

    wounds: int = 0
    armour_needed: int = tables.IMPOSSIBLE
    armour_saved: int = 0
    unsaved: int = 0
    doubled: int = 0
    slain: int = 0

    @property
    def any(self) -> bool:
        """Whether any wound got through: an unsaved wound, a doubled Flaming wound or a Killing Blow."""
        return bool(self.unsaved or self.doubled or self.slain)


@attack_attributes  # T9A.AA.* (t9a.attributes on)
def wound_and_save(
    battle: Battle,
    u: UnitState,
    t: UnitState,
    hits: int,
    strength: int,
    *,
    base_save: int | None = None,
    armour_piercing: bool = False,
    poisoned: int = 0,
    melee: bool = False,
    wound_rule: str = "CORE.CC.TO_WOUND",
    save_rule: str = "CORE.SAVE.MODIFIERS",
    ap: int | None = None,
) -> WoundResult:
    """Roll to wound and every save for ``hits`` hits of ``u`` on ``t`` (CORE.SAVE.PIPELINE).

    Dice are drawn in this order: to wound (``wound_rule``), armour saves
    (``save_rule``), ward saves, Regeneration. A unit without these rules draws
    exactly the to-wound and armour dice.

    Args:
        hits: hits scored.
        strength: S of the hits.
        base_save: the target's unmodified armour save (default its own).
        armour_piercing: CORE.SR.ARMOUR_PIERCING (weapon or rule).
        poisoned: how many hits were natural 6s to hit (CORE.SR.POISON wounds them
            automatically, with no armour save, if ``u`` has Poison).
        melee: close-combat blows (CORE.SR.KILLING_BLOW works only there).
        ap: the weapon's Armour Penetration under T9A.ARMOUR.VALUE (module t9a.equipment, which then
            replaces the armour save and rolls it under its own ID); None: the attacker's default.
    """
    res = WoundResult()
    if hits <= 0:
        return res
    magical = magical_attacks(u)
    if t.has("ethereal") and not magical:
        battle.emit("CORE.SR.ETHEREAL", unit=t.uid, attacker=u.uid, hits=hits, wounds=0)
        return res
    auto = min(poisoned, hits) if u.has("poison") else 0
    if auto:
        battle.emit("CORE.SR.POISON", unit=u.uid, target=t.uid, automatic_wounds=auto)
    needed = tables.to_wound(strength, t.profile.T)
    faces = battle.dice.d6(wound_rule, hits - auto) if hits > auto else []
    if t9a_pp.plays(battle.state):  # T9A.PP.FLAMMABLE ⇒ CORE.SR.FLAMMABLE: re-roll failed wounds
        faces = t9a_pp.flammable_rerolls(battle, u, t, faces, needed)
    rolled = [f for f in faces if f >= needed or f == 6]
    kb = sum(1 for f in rolled if f == 6) if melee and u.has("killing_blow") else 0
    if kb:
        battle.emit("CORE.SR.KILLING_BLOW", unit=u.uid, target=t.uid, killing_blows=kb)
    normal = len(rolled) - kb
    res.wounds = len(rolled) + auto
    # 1. armour save: none against Flaming or Ethereal attacks, Poison 6s or Killing Blows (CORE.SAVE.NONE).
    if armour_piercing and normal:
        battle.emit("CORE.SR.ARMOUR_PIERCING", unit=u.uid, target=t.uid)
    if magical:
        res.armour_needed = tables.IMPOSSIBLE
        if u.has("flaming"):
            battle.emit("CORE.SR.FLAMING", unit=u.uid, target=t.uid, wounds=res.wounds, magical=True)
        if normal:
            battle.emit("CORE.SAVE.NONE", unit=t.uid, attacker=u.uid, reason="flaming" if u.has("flaming") else "ethereal")
    elif t9a.on(battle.state, t9a.EQUIPMENT):  # T9A.ARMOUR.VALUE: 7 − (Armour − AP), S plays no part
        from battleline.env.rules.t9a import equipment

        res.armour_needed = equipment.save_needed(battle, u, t, ap, armour_piercing, melee)
        save_rule = "T9A.ARMOUR.VALUE" if save_rule == "CORE.SAVE.MODIFIERS" else save_rule
    else:
        res.armour_needed = tables.armour_save_needed(t.armour_save if base_save is None else base_save, strength, armour_piercing)
    if normal and res.armour_needed <= 6:
        save_faces = battle.dice.d6(save_rule, normal)
        res.armour_saved = sum(1 for f in save_faces if tables.save_passes(res.armour_needed, f))
    normal -= res.armour_saved
    if t9a_pp.plays(battle.state):  # T9A.SAVE.ONE_SPECIAL ⇒ steps 2-4 (ward, Regeneration, Flammable)
        return t9a_pp.finish_saves(battle, u, t, res, normal, auto, kb, melee, wound_rule)
    # 2. ward save (CORE.SAVE.WARD): never modified, against everything.
    ward = ward_save(t)
    if ward is not None and normal + auto + kb:
        groups = [normal, auto, kb]
        wf = battle.dice.d6("CORE.SAVE.WARD", sum(groups))
        saved, i = [], 0
        for n in groups:
            saved.append(sum(1 for f in wf[i : i + n] if tables.save_passes(ward, f)))
            i += n
        normal, auto, kb = (n - s for n, s in zip(groups, saved, strict=True))
        battle.emit("CORE.SAVE.WARD", unit=t.uid, needed=ward, saved=sum(saved))
    # 3. Regeneration: not against Flaming or Killing Blow (CORE.SR.REGENERATION).
    regen = regeneration(t)
    if regen is not None and normal + auto:
        if u.has("flaming"):
            battle.emit("CORE.SR.REGENERATION", unit=t.uid, needed=regen, blocked="flaming")
        else:
            groups = [normal, auto]
            rf = battle.dice.d6("CORE.SR.REGENERATION", sum(groups))
            saved = [sum(1 for f in rf[: groups[0]] if f >= regen), sum(1 for f in rf[groups[0] :] if f >= regen)]
            normal, auto = normal - saved[0], auto - saved[1]
            battle.emit("CORE.SR.REGENERATION", unit=t.uid, needed=regen, saved=sum(saved))
    # 4. application: Flaming on Flammable doubles (CORE.SR.FLAMMABLE); Killing Blow slays outright.
    if u.has("flaming") and t.has("flammable"):
        res.doubled = normal + auto
    else:
        res.unsaved = normal + auto
    res.slain = kb
    battle.emit("CORE.SAVE.PIPELINE", unit=t.uid, attacker=u.uid, unsaved=res.unsaved, doubled=res.doubled, slain=res.slain)
    return res


@multiple_wounds_applied  # T9A.AA.MULTIPLE_WOUNDS (t9a.attributes on)
def apply_result(battle: Battle, t: UnitState, res: WoundResult, rule: str, **info: object) -> tuple[int, int]:
    """Apply a :class:`WoundResult` to ``t``: (wounds inflicted, models removed).

    Ordinary wounds first, then each doubled Flaming hit (2 wounds on one
    model, excess lost: CORE.WOUND.APPLY) and each Killing Blow (the model's
    remaining wounds).
    """
    inflicted = res.unsaved
    killed = apply_wounds(battle, t, res.unsaved, rule=rule, **info) if res.unsaved else 0
    for kind, count in (("flammable", res.doubled), ("killing_blow", res.slain)):
        for _ in range(count):
            if not t.alive:
                break
            left = max(1, t.profile.W) - t.wounds_taken
            n = min(2, left) if kind == "flammable" else left
            battle.emit("CORE.SR.FLAMMABLE" if kind == "flammable" else "CORE.SR.KILLING_BLOW", unit=t.uid, wounds=n, slain=True)
            inflicted += n
            killed += apply_wounds(battle, t, n, rule=rule, **info)
    return inflicted, killed


# --------------------------------------------------------------------- combat hooks
def _strength(u: UnitState) -> int:
    return tables.clamp_characteristic(u.profile.S, "S")


def before_blows(battle: Battle, group: list[Engagement], round_one: bool, charged_units: set[int], wounds_by_side: list[int]) -> None:
    """Impact hits (R1) and breath weapons, before the other blows (CORE.CC.SEQUENCE step 2).

    CORE.SR.IMPACT_HITS: each fighting model of a unit that charged this turn
    from more than its M away makes X automatic hits at its S on the charged
    unit. CORE.SR.BREATH_WEAPON (combat form): 2D6 automatic hits at its S on
    an enemy unit in contact, at most twice per game and once per player turn.
    Wounds count for the result; casualties are removed at once and count as
    killed this round (CORE.CC.RETURN_STRIKE).
    """
    from battleline.env.rules.strikes import fighters

    if round_one:
        for e in group:
            c, t = battle.unit(e.attacker), battle.unit(e.defender)
            spec = rule_param(c, "impact_hits")
            if spec is None or c.uid not in charged_units or not c.alive or not t.alive:
                continue
            start = c.flags.get("charge_start_distance")
            if start is None or start <= c.profile.M:
                battle.emit("CORE.SR.IMPACT_HITS", unit=c.uid, target=t.uid, hits=0, start_distance=start, too_close=True)
                continue
            models = fighters(battle, e)[0]
            if spec in ("d3", "d6"):
                faces = battle.dice.d6("CORE.SR.IMPACT_HITS", models)
                hits = sum((f + 1) // 2 for f in faces) if spec == "d3" else sum(faces)
            else:
                hits = models * int(spec or 1)
            battle.emit("CORE.SR.IMPACT_HITS", unit=c.uid, target=t.uid, hits=hits, models=models, start_distance=start)
            _auto_hits(battle, c, t, hits, "CORE.SR.IMPACT_HITS", wounds_by_side)
    for uid in sorted({i for e in group for i in (e.attacker, e.defender)}):
        u = battle.unit(uid)
        if not breath_ready(battle, u):
            continue
        enemies = sorted({e.defender if e.attacker == uid else e.attacker for e in group if uid in (e.attacker, e.defender)})
        enemies = [i for i in enemies if battle.unit(i).alive]
        if not enemies:
            continue
        t = battle.unit(enemies[0])
        hits, faces = battle.dice.sum_d6("CORE.SR.BREATH_WEAPON", 2)
        uses = use_breath(battle, u)
        battle.emit("CORE.SR.BREATH_WEAPON", unit=u.uid, target=t.uid, hits=hits, uses=uses, form="combat")
        _auto_hits(battle, u, t, hits, "CORE.SR.BREATH_WEAPON", wounds_by_side)


def breath_ready(battle: Battle, u: UnitState) -> bool:
    """CORE.SR.BREATH_WEAPON: ``u`` has a breath weapon, is alive and not fleeing, has used it fewer than
    BREATH_USES times this game and not yet in this player turn (S-1: "turn" is a player turn)."""
    if not u.has("breath_weapon") or not u.alive or u.fleeing:
        return False
    s = battle.state
    return u.marks.get("breath_uses", 0) < BREATH_USES and u.marks.get("breath_turn") != f"{s.turn}:{s.active}"


def use_breath(battle: Battle, u: UnitState) -> int:
    """Record one use of ``u``'s breath weapon in this player turn (CORE.SR.BREATH_WEAPON); returns the uses so far."""
    s = battle.state
    u.marks["breath_uses"] = u.marks.get("breath_uses", 0) + 1
    u.marks["breath_turn"] = f"{s.turn}:{s.active}"
    return u.marks["breath_uses"]


def _auto_hits(battle: Battle, u: UnitState, t: UnitState, hits: int, rule: str, wounds_by_side: list[int]) -> None:
    """Resolve automatic hits at the model's S (to wound, saves), apply them and count them for the result."""
    res = wound_and_save(battle, u, t, hits, _strength(u), wound_rule=rule, save_rule="CORE.SAVE.MODIFIERS")
    battle.emit("CORE.CC.TO_WOUND", unit=u.uid, target=t.uid, strength=_strength(u),
                needed=tables.to_wound(_strength(u), t.profile.T), wounds=res.wounds, source=rule)
    if not res.any or not t.alive:
        return
    inflicted, killed = apply_result(battle, t, res, "CORE.CC.CASUALTIES", attacker=u.uid)
    wounds_by_side[u.side] += inflicted
    t.flags["killed_this_round"] = t.flags.get("killed_this_round", 0) + killed


def lose_frenzy(battle: Battle, losers: list[UnitState]) -> None:
    """CORE.SR.FRENZY: a unit that loses a round of combat loses Frenzy for good."""
    for u in losers:
        if u.has("frenzy"):
            u.special_rules = [r for r in u.special_rules if r != "frenzy"]
            battle.emit("CORE.SR.FRENZY", unit=u.uid, lost=True)


def swarm_losses(battle: Battle, u: UnitState, diff: int) -> None:
    """CORE.SR.SWARM: no break test; the swarm suffers wounds equal to the difference, with no saves."""
    battle.emit("CORE.SR.SWARM", unit=u.uid, difference=diff, wounds=diff)
    if diff > 0:
        apply_wounds(battle, u, diff, rule="CORE.SR.SWARM")


# --------------------------------------------------------------------- end of turn
IDLE_FLAGS = ("moved", "marched", "charged", "declared_charge", "failed_charge", "shot", "stood_and_shot", "fled",
              "rallied", "stupid", "fought")


def end_of_player_turn(battle: Battle) -> None:
    """CORE.SR.REGENERATION healing: a wounded model of the phasing player idle all turn rolls X+ to regain 1 W."""
    from battleline.env.rules.psychology import engaged

    s = battle.state
    if t9a_pp.plays(s):  # T9A.PP.REGENERATION ⇒ CORE.SR.REGENERATION: no healing
        return
    for u in s.units:
        if u.side != s.active or not u.alive or u.wounds_taken <= 0 or u.fleeing:
            continue
        regen = regeneration(u)
        if regen is None or any(u.flags.get(k) for k in IDLE_FLAGS) or engaged(battle, u):
            continue
        face = battle.dice.d6("CORE.SR.REGENERATION")[0]
        healed = face >= regen
        if healed:
            u.wounds_taken -= 1
        battle.emit("CORE.SR.REGENERATION", unit=u.uid, needed=regen, roll=face, healed=healed, wounds_taken=u.wounds_taken)
