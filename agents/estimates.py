"""Expected-value estimates behind the scripted agents' charges, reactions and shots.

Closed-form averages over the engine's own tables (``env.rules.tables``): no
dice are rolled and no state is changed. They follow the rules the engine
applies (RULESET ids in brackets) closely enough to rank choices, not to
predict a result exactly:

* :func:`charge_reach_probability` — M + the higher of 2D6 reaches the target
  (CORE.CHARGE.RANGE); :func:`catch_fleeing_probability` against a fleer that
  runs again first (CORE.REACT.ALREADY_FLEEING, CORE.CHARGE.VS_FLEEING).
* :func:`estimate_combat` — the first round of a charge (or a later round of
  the same fight): fighters in contact, supporting ranks, the charger striking
  first, hits (WS; only 6s against a defended obstacle), wounds (S v T), saves, then the combat result (wounds,
  charge, ranks, standard, flank or rear, outnumbering) and the loser's chance
  to break (CORE.CC.*).
* :func:`expected_kills` — one unit's shooting at a target (CORE.SHOOT.*).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, fields
from functools import cache
from itertools import product
from typing import TYPE_CHECKING

import shapely

from battleline.env.rules import breath, combat, psychology, shooting, space, special_rules, tables
from battleline.env.rules import geometry as geo
from battleline.env.rules.state import BattleState, Profile, TerrainFeature, UnitState
from battleline.tactics.manoeuvres import flee_distance_pmf

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MAX_RANK_BONUS = combat.MAX_RANK_BONUS
RANK_MIN_MODELS = combat.RANK_MIN_MODELS
FLANK_BONUS = {"front": 0, "left": 1, "right": 1, "rear": 2}


# ----------------------------------------------------------------------------- dice
def p_d6_at_least(needed: int) -> float:
    """P(one D6 ≥ ``needed``), for needs of 1..7."""
    return max(0, min(6, 7 - needed)) / 6


def p_save(needed: int) -> float:
    """P(an armour save succeeds) for a modified save ``needed``; a natural 1 always fails."""
    return 0.0 if needed > 6 else p_d6_at_least(max(2, needed))


def p_shot_hits(needed: int) -> float:
    """P(one shot hits) for a to-hit need of 2..6, 7..9 (a 6 then 4+/5+/6+) or ≥ 10 (impossible)."""
    if needed <= 6:
        return p_d6_at_least(max(2, needed))
    if needed <= 9:
        return p_d6_at_least(6) * p_d6_at_least(needed - 3)
    return 0.0


@cache
def p_2d6_at_most(total: int) -> float:
    """P(2D6 ≤ ``total``)."""
    return sum(1 for a, b in product(range(1, 7), repeat=2) if a + b <= total) / 36


def p_ld_test_passes(ld: int) -> float:
    """P(a Leadership test on ``ld`` passes): 2D6 ≤ ld, a double 1 always passes (CORE.TEST.LD)."""
    return max(p_2d6_at_most(ld), 1 / 36)


def charge_reach_probability(move: float, distance: float) -> float:
    """P(M + the higher of 2D6 ≥ ``distance``) (CORE.CHARGE.RANGE).

    ``move`` (M) and ``distance`` (the gap to close) are in inches; the result is in [0, 1].
    """
    need = math.ceil(distance - move - 1e-6)
    if need <= 1:
        return 1.0
    if need > 6:
        return 0.0
    return 1.0 - ((need - 1) / 6) ** 2


def charge_chance(charger: UnitState, distance: float) -> float:
    """P(``charger``'s charge roll covers ``distance`` inches): :func:`charge_reach_probability` with the M the
    engine rolls with (:func:`env.rules.special_rules.charge_m`: flyers charge with M = 10, CORE.SR.FLY)."""
    return charge_reach_probability(special_rules.charge_m(charger), distance)


def is_swift(u: UnitState) -> bool:
    """Whether the unit flees and pursues with 3D6 drop the lowest: the engine's
    :func:`env.rules.special_rules.swiftstride` (Swiftstride, cavalry, chariots, flyers; CORE.SR.SWIFTSTRIDE)."""
    return special_rules.swiftstride(u)


def catch_fleeing_probability(charger: UnitState, target: UnitState, distance: float) -> float:
    """P(a charge catches a fleeing target that first flees again, straight away from the charger).

    ``distance`` is the edge-to-edge gap between them before the flee, in inches;
    the flee adds 2D6 (3D6 drop the lowest when :func:`is_swift`) inches to it.
    The table edge is ignored (see :func:`destroy_fleeing_probability`).
    """
    return sum(p * charge_chance(charger, distance + f) for f, p in flee_distance_pmf(is_swift(target)).items())


def destroy_fleeing_probability(battle: Battle, charger: UnitState, target: UnitState, distance: float) -> float:
    """P(a charge on a fleeing target destroys it): it flees again straight away from the charger
    (CORE.REACT.ALREADY_FLEEING) and is destroyed if its footprint crosses the table edge
    (CORE.PSY.FLEE.DESTROYED), else if the charge catches it (CORE.CHARGE.VS_FLEEING).

    Args:
        battle: the battle (its table size is read).
        charger, target: the charging unit and the fleeing target.
        distance: edge-to-edge gap between them (inches).

    Returns:
        A probability in [0, 1]; the flee is taken as the bare roll (no clearing of other units).
    """
    s = battle.state
    away = geo.facing_towards((charger.x, charger.y), (target.x, target.y))
    total = 0.0
    for f, p in flee_distance_pmf(is_swift(target)).items():
        end = geo.move_straight(geo.Pose(target.x, target.y, away), float(f))
        off = not geo.within_table(space.footprint_at(target, end), s.table_w, s.table_h)
        total += p * (1.0 if off else charge_chance(charger, distance + f))
    return total


# ----------------------------------------------------------------------------- melee
def melee_hit_chance(attacker: UnitState, target: UnitState, round_one: bool, defended: bool = False) -> float:
    """P(one close-combat attack hits) (CORE.CC.TO_HIT), Hatred re-rolling misses in round 1.

    ``defended``: the target defends an obstacle against this charge, so only 6s hit in round 1
    (CORE.TERRAIN.DEFENDED_OBSTACLE).
    """
    if defended and round_one:
        return p_d6_at_least(6)
    p = p_d6_at_least(tables.cc_to_hit(attacker.profile.WS, target.profile.WS))
    return 1 - (1 - p) ** 2 if attacker.has("hatred") and round_one else p


def obstacle_between(battle: Battle, a: UnitState, b: UnitState) -> bool:
    """Whether a hedge, fence or wall crosses the line between two units' centres.

    A feature whose bounding box the line's box misses is passed over without building the line
    (they cannot meet). Kept per (terrain, both centres) (:func:`space.terrain_key`): all it reads."""
    state = battle.state
    if not state.terrain:
        return False
    terrain = space.terrain_key(state)
    key = (terrain, a.x, a.y, b.x, b.y)
    crossed = _CROSSED.get(key)
    if crossed is None:
        if len(_CROSSED) >= OBSTACLE_MEMO_SIZE:
            _CROSSED.clear()
        crossed = _CROSSED[key] = _obstacle_between(_obstacle_boxes(state, terrain), a.x, a.y, b.x, b.y)
    return crossed


OBSTACLE_MEMO_SIZE = 65536
"""Most (terrain, centre, centre) answers :func:`obstacle_between` keeps (then it starts afresh)."""
_CROSSED: dict[tuple[int, float, float, float, float], bool] = {}
_OBSTACLE_BOXES: dict[int, list[tuple[float, float, float, float, TerrainFeature]]] = {}


def _obstacle_boxes(state: BattleState, terrain: int) -> list[tuple[float, float, float, float, TerrainFeature]]:
    """The table's hedges, fences and walls, each as (min x, min y, max x, max y, feature), in the terrain's order;
    kept per ``terrain`` (:func:`space.terrain_key` of ``state``)."""
    boxes = _OBSTACLE_BOXES.get(terrain)
    if boxes is None:
        if len(_OBSTACLE_BOXES) >= 256:
            _OBSTACLE_BOXES.clear()
        boxes = _OBSTACLE_BOXES[terrain] = [
            (min(p[0] for p in t.polygon), min(p[1] for p in t.polygon),
             max(p[0] for p in t.polygon), max(p[1] for p in t.polygon), t)
            for t in space.terrain_of(state, space.OBSTACLES)
        ]
    return boxes


def _obstacle_between(boxes: list[tuple[float, float, float, float, TerrainFeature]],
                      ax: float, ay: float, bx: float, by: float) -> bool:
    """:func:`obstacle_between` for the centres (ax, ay) and (bx, by) and the :func:`_obstacle_boxes` ``boxes``."""
    x0, x1 = (ax, bx) if ax <= bx else (bx, ax)
    y0, y1 = (ay, by) if ay <= by else (by, ay)
    line = None
    for min_x, min_y, max_x, max_y, t in boxes:
        if x1 < min_x or x0 > max_x or y1 < min_y or y0 > max_y:
            continue
        if line is None:
            line = shapely.LineString([(ax, ay), (bx, by)])
        if line.intersects(space.terrain_poly(t)):
            return True
    return False


def melee_strength(attacker: UnitState, round_one: bool, charged: bool) -> int:
    """Strength of the attacker's blows this round (weapon bonus, Devastating Charge)."""
    eff = tables.melee_effect(attacker.melee, attacker.troop_type, round_one, charged)
    bonus = 1 if attacker.has("devastating_charge") and round_one and charged else 0
    return tables.clamp_characteristic(attacker.profile.S + eff.strength_bonus + bonus, "S")


def unsaved_chance(attacker: UnitState, target: UnitState, strength: int, round_one: bool, target_charged: bool) -> float:
    """P(a wound from ``attacker`` goes unsaved): the target's armour, less its shield with a two-handed weapon."""
    base = target.armour_save
    if target.shield and tables.melee_effect(target.melee, target.troop_type, round_one, target_charged).loses_shield:
        base = min(tables.IMPOSSIBLE, base + 1)
    return 1 - p_save(tables.armour_save_needed(base, strength, attacker.has("armour_piercing")))


def wounds_per_attack(
    attacker: UnitState, target: UnitState, round_one: bool, charged: bool, target_charged: bool = False, defended: bool = False
) -> float:
    """Expected unsaved wounds from one attack (hit, wound, save); ``defended`` as in :func:`melee_hit_chance`."""
    strength = melee_strength(attacker, round_one, charged)
    p_wound = p_d6_at_least(tables.to_wound(strength, target.profile.T))
    hit = melee_hit_chance(attacker, target, round_one, defended)
    return hit * p_wound * unsaved_chance(attacker, target, strength, round_one, target_charged)


def attacks(u: UnitState, fighters: float, support: float, round_one: bool, charged: bool) -> float:
    """Attacks made: fighters × A (weapon and special-rule extras) + supporting attacks + the champion's."""
    eff = tables.melee_effect(u.melee, u.troop_type, round_one, charged)
    per_model = u.profile.A + eff.extra_attacks + (1 if u.has("extra_attack") else 0) + (1 if u.has("frenzy") else 0)
    champion = 1 if u.champion and fighters > 0 else 0
    return fighters * per_model + support + champion


def _models_along(length: float, base: float, cap: int) -> int:
    return max(1, min(cap, math.ceil(length / base - 1e-6)))


def fighters_in_contact(attacker: UnitState, defender: UnitState, facing: str) -> tuple[int, int]:
    """(attacker's, defender's) models in base contact when ``attacker`` is flush on ``facing`` of ``defender``.

    ``facing`` is the defender's side: "front", "left", "right" or "rear". The
    contact length is the attacker's width, capped by that side's length (in inches).
    """
    edge = defender.width if facing in ("front", "rear") else defender.depth
    overlap = min(attacker.width, edge)
    a_n = _models_along(overlap, attacker.base_w, rank_sizes(attacker)[0])
    if facing == "front":
        d_n = _models_along(overlap, defender.base_w, rank_sizes(defender)[0])
    elif facing == "rear":
        d_n = _models_along(overlap, defender.base_w, rank_sizes(defender)[-1])
    else:
        d_n = _models_along(overlap, defender.base_d, len(rank_sizes(defender)))
    return a_n, d_n


_RANK_SIZES: dict[tuple[int, int, str], tuple[int, ...]] = {}


def rank_sizes(u: UnitState) -> tuple[int, ...]:
    """The models in each of ``u``'s ranks, front first (:meth:`UnitState.models_in_rank` for 1..R), kept per
    (files, models, troop type), all they depend on (CORE.GEO.FORMATION)."""
    key = (u.files, u.models, u.troop_type)
    sizes = _RANK_SIZES.get(key)
    if sizes is None:
        sizes = _RANK_SIZES[key] = tuple(u.models_in_rank(r) for r in range(1, u.ranks + 1))
    return sizes


def support_attacks(u: UnitState, fighters: float, charged: bool) -> float:
    """Supporting attacks from the ranks behind the fighters (CORE.CC.SUPPORT)."""
    if fighters <= 0:
        return 0.0
    ranks = 1 + (1 if combat.is_horde(u) else 0)
    if tables.melee_effect(u.melee, u.troop_type, False, charged).extra_rank or u.has("extra_rank"):
        ranks += 1
    sizes = rank_sizes(u)
    return float(sum(min(sizes[r - 1] if r <= len(sizes) else 0, fighters) for r in range(2, 2 + ranks)))


def rank_bonus(u: UnitState) -> int:
    """Ranks of at least :data:`RANK_MIN_MODELS` behind the first, at most 3 (CORE.CC.COMBAT_RESULT.RANKS)."""
    return min(MAX_RANK_BONUS, sum(1 for n in rank_sizes(u)[1:] if n >= RANK_MIN_MODELS))


def break_chance(battle: Battle, loser: UnitState, loser_models: float, winner_models: float, diff: float,
                 lds: dict[int, tuple[UnitState, int | None]] | None = None) -> float:
    """P(``loser`` fails its break test by ``diff``) (CORE.CC.BREAK_TEST, INSPIRED, STUBBORN, UNBREAKABLE).

    ``lds``: where given, the General's Ld lent to each unit (``psychology.general_ld``) kept by the unit object's
    id, with the object (so the id stays its own): the caller keeps it while the battle and those units hold still.
    """
    if diff <= 0 or loser.has("unbreakable"):
        return 0.0
    if lds is None:
        general = psychology.general_ld(battle, loser)
    else:
        kept = lds.get(id(loser))
        if kept is None:
            kept = lds[id(loser)] = (loser, psychology.general_ld(battle, loser))
        general = kept[1]
    ld = max(loser.profile.Ld, general or 0)
    if not (loser.has("stubborn") or loser_models > winner_models):
        ld -= max(1, round(diff))
    return 1.0 - p_ld_test_passes(ld)


@dataclass(frozen=True, slots=True)
class CombatEstimate:
    """The expected outcome of one round of combat.

    Attributes:
        attacker_wounds, defender_wounds: expected unsaved wounds each side inflicts.
        diff: expected combat result of the attacker minus the defender's.
        break_chance: P(the loser breaks): the defender's when diff > 0, else the attacker's.
    """

    attacker_wounds: float
    defender_wounds: float
    diff: float
    break_chance: float

    @property
    def favourable(self) -> bool:
        """The attacker is expected to win the round."""
        return self.diff > 0


ALLY_BONUS = 2.0
"""Combat-result credit for a friend already fighting (or charging) the same enemy."""


def estimate_combat(
    battle: Battle, attacker: UnitState, defender: UnitState, facing: str, charging: bool = True, ally: float = 0.0,
    lds: dict[int, tuple[UnitState, int | None]] | None = None,
) -> CombatEstimate:
    """Expected round of ``attacker`` fighting ``defender`` on the defender's ``facing``.

    Args:
        facing: the defender's side the attacker touches: "front", "left",
            "right" or "rear" (off the front: the flank or rear bonus, and the
            defender gets no rank bonus or supporting attacks).
        charging: the first round of the attacker's charge (it strikes first,
            +1 combat result, charge-only weapon bonuses); False for a later
            round of the same fight (blows struck together, no charge bonuses).
        ally: chance (0..1) that a friend of the attacker fights the defender too (adds that share of :data:`ALLY_BONUS`).
        lds: the General's Ld kept per unit, as in :func:`break_chance` (None: worked out afresh).

    The round before the break test (:func:`_round`) is kept per (:func:`combat_key` of each unit, facing,
    charging, ally, defended obstacle): where the units stand enters only through the obstacle and the
    break test's General, both worked out afresh.

    Raises:
        KeyError: ``facing`` is not one of the four sides.
    """
    a_wounds, d_wounds, diff, a_left, d_left = combat_round(battle, attacker, defender, facing, charging, ally)
    if diff > 0:
        chance = break_chance(battle, defender, d_left, a_left, diff, lds)
    else:
        chance = break_chance(battle, attacker, a_left, d_left, -diff, lds)
    return CombatEstimate(a_wounds, d_wounds, diff, chance)


def combat_round(battle: Battle, attacker: UnitState, defender: UnitState, facing: str, charging: bool = True,
                 ally: float = 0.0, keys: tuple[tuple, tuple] | None = None) -> tuple[float, float, float, float, float]:
    """:func:`estimate_combat` before the break test: (attacker's wounds, defender's wounds, expected combat-result
    difference, attacker's and defender's models left), arguments as there; ``keys``: (:func:`combat_key` of the
    attacker, of the defender) where the caller has them already.

    Kept per (:func:`combat_key` of each unit, facing, charging, ally, defended obstacle); the obstacle
    (:func:`obstacle_between`, CORE.TERRAIN.DEFENDED_OBSTACLE) is looked up afresh. The break test
    (:func:`break_chance` of the loser: the defender when the difference is positive, else the attacker) is left
    to the caller.

    Raises:
        KeyError: ``facing`` is not one of the four sides.
    """
    defended = charging and facing == "front" and obstacle_between(battle, attacker, defender)
    if keys is None:
        keys = (combat_key(attacker), combat_key(defender))
    key = (keys[0], keys[1], facing, charging, ally, defended)
    part = _ROUNDS.get(key)
    if part is None:
        if len(_ROUNDS) >= ROUND_MEMO_SIZE:
            _ROUNDS.clear()
        part = _ROUNDS[key] = _round(attacker, defender, facing, charging, ally, defended)
    return part


ROUND_MEMO_SIZE = 65536
"""Most rounds :func:`estimate_combat` keeps worked out (then it starts afresh)."""
_ROUNDS: dict[tuple, tuple[float, float, float, float, float]] = {}
_PROFILE = operator.attrgetter(*(f.name for f in fields(Profile)))


def combat_key(u: UnitState) -> tuple:
    """Everything of ``u`` a round of :func:`estimate_combat` reads but its place and its General: profile,
    special rules, weapons, troop type, save, formation (files, models, bases) and command models."""
    return (_PROFILE(u.profile), tuple(u.special_rules), u.melee, u.troop_type, u.armour_save, u.shield,
            u.files, u.models, u.base_w, u.base_d, u.champion, u.standard)


def _round(attacker: UnitState, defender: UnitState, facing: str, charging: bool, ally: float,
           defended: bool) -> tuple[float, float, float, float, float]:
    """:func:`estimate_combat` before the break test: (attacker's wounds, defender's wounds, combat-result
    difference, attacker's and defender's models left); ``defended`` as in :func:`melee_hit_chance`.

    Raises:
        KeyError: ``facing`` is not one of the four sides.
    """
    a_n, d_n = fighters_in_contact(attacker, defender, facing)
    flanked = facing != "front"
    a_att = attacks(attacker, a_n, support_attacks(attacker, a_n, charging), charging, charging)
    a_wounds = a_att * wounds_per_attack(attacker, defender, charging, charging, False, defended)
    killed = min(float(defender.models), a_wounds / max(1, defender.profile.W)) if charging else 0.0
    d_fighters = max(0.0, d_n - killed)
    d_support = 0.0 if flanked else min(support_attacks(defender, d_n, False), d_fighters)
    d_att = attacks(defender, d_fighters, d_support, charging, False)
    d_wounds = d_att * wounds_per_attack(defender, attacker, charging, False, charging)
    a_left = max(0.0, attacker.models - d_wounds / max(1, attacker.profile.W))
    d_left = max(0.0, defender.models - a_wounds / max(1, defender.profile.W))
    a_cr = a_wounds + (1 if charging else 0) + rank_bonus(attacker) + (1 if attacker.standard else 0) + FLANK_BONUS[facing]
    d_cr = d_wounds + (0 if flanked else rank_bonus(defender)) + (1 if defender.standard else 0)
    if a_left > d_left:
        a_cr += 1
    elif d_left > a_left:
        d_cr += 1
    diff = a_cr - d_cr + ALLY_BONUS * ally
    return a_wounds, d_wounds, diff, a_left, d_left


# ----------------------------------------------------------------------------- shooting
def expected_kills(battle: Battle, shooter: UnitState, target: UnitState, breath_attack: bool = False) -> float:
    """Expected models ``shooter`` kills shooting at ``target`` now (CORE.SHOOT.*), wounds over W.

    With ``breath_attack`` the shot is its breath weapon's teardrop (CORE.SR.BREATH_WEAPON): the models under
    it are hit (partly under: on a 4+) at the monster's S.
    """
    if breath_attack:
        hits, strength, piercing = breath.expected_hits(shooter, target), shooter.profile.S, shooter.has("armour_piercing")
    else:
        per_model, front, volley, strength, piercing = _volley(battle, shooter)
        mod, _ = shooting.to_hit_modifier(battle, shooter, target, False, per_model > 1)
        hits = per_model * (
            front * p_shot_hits(tables.shooting_to_hit(shooter.profile.BS, mod))
            + volley * p_shot_hits(tables.shooting_to_hit(shooter.profile.BS, mod - 1))
        )
    return _kills(target, hits, strength, piercing)


def _volley(battle: Battle, shooter: UnitState) -> tuple[int, int, int, int, bool]:
    """(shots per model, models shooting from ranks 1–2, Volley Fire models, S, armour piercing) of ``shooter``'s
    missile weapon (CORE.SHOOT.SHOOTERS, CORE.SR.MULTIPLE_SHOTS, CORE.SR.VOLLEY_FIRE)."""
    w = shooting.weapon(shooter, battle.state)
    per_model = w.multiple_shots if w.multiple_shots > 1 else (2 if shooter.has("multiple_shots_2") else 1)
    front, volley = shooting.shooters(shooter, w)
    strength = w.strength if w.strength is not None else shooter.profile.S
    return per_model, front, volley, strength, w.armour_piercing or shooter.has("armour_piercing")


def _kills(target: UnitState, hits: float, strength: int, piercing: bool) -> float:
    """Expected models of ``target`` killed by ``hits`` hits at ``strength``: wounds, saves, over W (CORE.SHOOT.*)."""
    p_wound = p_d6_at_least(tables.to_wound(strength, target.profile.T))
    save = tables.armour_save_needed(target.armour_save, strength, piercing)
    wounds = hits * p_wound * (1 - p_save(save))
    return min(float(target.models), wounds / max(1, target.profile.W))


BEST_SHOT_HIT = p_shot_hits(2)
"""The highest chance one shot hits whatever the to-hit modifiers (5/6: a natural 1 always misses)."""


def shot_value_bound(battle: Battle, shooter: UnitState, target: UnitState) -> float:
    """An upper bound of :func:`shot_value` for a volley (not a breath): every shot hitting with :data:`BEST_SHOT_HIT`.

    The to-hit modifier (cover, range, the line of sight to each model: the costly part) is not worked out.
    Every step of :func:`expected_kills` after the to-hit chance is a product, sum or minimum of non-negative
    floats, and those are monotone in each operand even as rounded, so the bound is never below the value.
    """
    per_model, front, volley, strength, piercing = _volley(battle, shooter)
    hits = per_model * (front * BEST_SHOT_HIT + volley * BEST_SHOT_HIT)
    return target.points / max(1, target.start_models) * _kills(target, hits, strength, piercing)


def shot_value(battle: Battle, shooter: UnitState, target: UnitState, breath_attack: bool = False) -> float:
    """Points per model × expected kills: what a volley (or a breath, ``breath_attack``) is worth."""
    return target.points / max(1, target.start_models) * expected_kills(battle, shooter, target, breath_attack)
