"""Close-combat strikes (CORE.CC.ATTACKS .. CORE.CC.CASUALTIES): who fights and the attack rolls.

The models in base contact across an engagement and their supporting ranks
(CORE.CC.SUPPORT), one :class:`Strike` per unit against each enemy unit it
touches, the attacks of a strike (CORE.CC.CHAMPION_ATTACK included), the
rolls to hit, to wound and to save (:func:`resolve_strike`), and a strike
step: simultaneous strikes, then their casualties, the models slain earlier
in the round not striking (CORE.CC.RETURN_STRIKE, CORE.CC.STRIKE_ORDER.LATER).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import shapely

from battleline.env.rules import geometry as geo
from battleline.env.rules import magic, psychology, space, special_rules, t9a, tables
from battleline.env.rules.charges import edge_frame
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.t9a import equipment
from battleline.env.rules.t9a import protections as t9a_pp

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


# --------------------------------------------------------------------- contact
def contact_overlap(battle: Battle, e: Engagement) -> float:
    """Length (inches) of the attacker's front edge lying along the defender's contacted edge."""
    a, d = battle.unit(e.attacker), battle.unit(e.defender)
    mx, my, ax, ay, _, _, length = edge_frame(d, e.facing)
    fl, fr = geo.front_edge(space.pose(a), a.width, a.depth)
    p1 = (fl[0] - mx) * ax + (fl[1] - my) * ay
    p2 = (fr[0] - mx) * ax + (fr[1] - my) * ay
    lo, hi = min(p1, p2), max(p1, p2)
    return max(0.0, min(hi, length / 2) - max(lo, -length / 2))


def _count(overlap: float, base: float, cap: int) -> int:
    """Models along ``overlap`` inches of an edge of ``base``-inch bases (at least 1 for corner contact)."""
    return max(1, min(cap, math.ceil(overlap / base - 1e-6)))


def fighters(battle: Battle, e: Engagement) -> tuple[int, int]:
    """(attacker's, defender's) models in base contact across engagement ``e`` (CORE.CC.ATTACKS)."""
    a, d = battle.unit(e.attacker), battle.unit(e.defender)
    ov = contact_overlap(battle, e)
    a_n = _count(ov, a.base_w, a.models_in_rank(1))
    if e.facing == "front":
        d_n = _count(ov, d.base_w, d.models_in_rank(1))
    elif e.facing == "rear":
        d_n = _count(ov, d.base_w, d.models_in_rank(d.ranks))
    else:
        d_n = _count(ov, d.base_d, d.ranks)
    return a_n, d_n


def is_horde(u: UnitState) -> bool:
    """CORE.CC.SUPPORT: front ≥ 10 wide, ≥ 3 ranks and ≥ 30 models."""
    return min(u.files, u.models) >= 10 and u.ranks >= 3 and u.models >= 30


def flank_or_rear_engaged(battle: Battle, u: UnitState) -> bool:
    """Whether an enemy is engaged with ``u``'s flank or rear."""
    return any(e.defender == u.uid and e.facing != "front" for e in battle.state.engagements)


def supporters(battle: Battle, u: UnitState, front_fighters: int, charged: bool) -> int:
    """Supporting attacks (CORE.CC.SUPPORT): rank 2 behind fighters; Horde rank 3; Fight in Extra Rank one more.

    A charged unit supports only while no enemy is engaged with its flank or rear.
    """
    if front_fighters <= 0 or (not charged and flank_or_rear_engaged(battle, u)):
        return 0
    ranks = 1
    if is_horde(u):
        ranks += 1
    if tables.melee_effect(u.melee, u.troop_type, False, charged).extra_rank or u.has("extra_rank") or (
            t9a.on(battle.state, t9a.EQUIPMENT) and equipment.fights_in_extra_rank(u)):  # T9A.WEAPON.SPEAR
        ranks += 1
        extra = min(u.models_in_rank(1 + ranks), front_fighters)
        if u.has("extra_rank") and extra:
            battle.emit("CORE.SR.EXTRA_RANK", unit=u.uid, rank=1 + ranks, supporting=extra)
    return sum(min(u.models_in_rank(r), front_fighters) for r in range(2, 2 + ranks))


def _contacts(battle: Battle, uid: int) -> set[int]:
    out = set()
    for e in battle.state.engagements:
        if e.attacker == uid:
            out.add(e.defender)
        elif e.defender == uid:
            out.add(e.attacker)
    return out


# --------------------------------------------------------------------- strikes
@dataclass
class Strike:
    """One unit's attacks against one enemy unit in one strike step."""

    unit: int
    target: int
    fighters: int
    support: int
    frontal: bool
    initiative: int
    priority: int = 0  # larger strikes earlier
    wounds: int = 0
    killed: int = 0
    info: dict[str, Any] = field(default_factory=dict)


def charged_this_turn(battle: Battle, e: Engagement) -> bool:
    """Whether ``e`` is a charge (or a pursuit that counts as one) whose R1 is still to be fought (CORE.CC.ROUNDS).

    R1 is the round fought in the player turn in which the charge made
    contact. ``e.turn`` is the game turn, which both players' turns share, so
    the engagement must also not have fought a round yet: the round fought in
    the other player's turn of the same game turn is round 2.
    """
    return e.charged and e.turn == battle.state.turn and e.rounds == 0


def _collect_strikes(battle: Battle, group: list[Engagement], charged_units: set[int]) -> list[Strike]:
    strikes: list[Strike] = []
    front_counts: dict[int, int] = {}
    for e in group:
        a, d = battle.unit(e.attacker), battle.unit(e.defender)
        a_n, d_n = fighters(battle, e)
        if battle.state.castle:  # SIEGE.ASSAULT.CLIMB: only the climbers fight the wall's defenders
            from battleline.env.rules.siege import play

            a_n, d_n = play.fighters(battle, a, d, a_n, d_n)
        strikes.append(Strike(a.uid, d.uid, a_n, 0, True, a.profile.I))
        strikes.append(Strike(d.uid, a.uid, d_n, 0, e.facing == "front", d.profile.I))
        front_counts[a.uid] = front_counts.get(a.uid, 0) + a_n
        if e.facing == "front":
            front_counts[d.uid] = front_counts.get(d.uid, 0) + d_n
    # Supporting attacks go with the unit's first frontal strike.
    done: set[int] = set()
    for st in strikes:
        if st.frontal and st.unit not in done:
            u = battle.unit(st.unit)
            st.support = supporters(battle, u, min(front_counts.get(u.uid, 0), u.models_in_rank(1)), u.uid in charged_units)
            done.add(st.unit)
    if battle.state.castle:  # SIEGE.ASSAULT.CLIMB: only climbers and the defenders they touch fight
        from battleline.env.rules.siege import play

        for st in strikes:  # and at a tower's door only the 2 models there (SIEGE.TOWER.ASSAULT)
            if play.no_support(battle.state, battle.unit(st.unit), battle.unit(st.target)):
                st.support = 0
    return strikes


def champion_attack_on(battle: Battle) -> bool:
    """Whether the scenario plays CORE.CC.CHAMPION_ATTACK (DEFAULT, on; ``champion_attack: false`` turns it off)."""
    return bool(battle.state.queue.get("champion_attack", True))


def _attacks(battle: Battle, u: UnitState, st: Strike, round_one: bool, charged: bool, champion_used: set[int]) -> int:
    """The attacks of strike ``st`` (CORE.CC.ATTACKS): fighters × A (weapon, Extra Attack, Frenzy) plus support,
    plus the champion's one extra attack once per round while it fights (CORE.CC.CHAMPION_ATTACK, emitted)."""
    eff = tables.melee_effect(u.melee, u.troop_type, round_one, charged)
    a = u.profile.A + eff.extra_attacks + (1 if u.has("extra_attack") else 0) + (1 if u.has("frenzy") else 0)
    total = st.fighters * a + st.support
    if u.champion and u.uid not in champion_used and st.fighters > 0 and champion_attack_on(battle):
        total += 1
        champion_used.add(u.uid)
        battle.emit("CORE.CC.CHAMPION_ATTACK", unit=u.uid, target=st.target, extra_attacks=1)
    return total


def _obstacle_between(battle: Battle, a: UnitState, d: UnitState) -> bool:
    line = shapely.LineString([(a.x, a.y), (d.x, d.y)])
    return any(line.intersects(space.terrain_poly(t)) for t in space.terrain_of(battle.state, space.OBSTACLES))


def resolve_strike(
    battle: Battle, st: Strike, attacks: int, round_one: bool, charged_units: set[int], defended: set[tuple[int, int]]
) -> int:
    """Roll one strike: to hit (WS), to wound (S v T), saves. Returns the ordinary unsaved wounds.

    The whole outcome (Killing Blows and Flammable doubles included) is left in
    ``st.info["result"]`` as a :class:`special_rules.WoundResult`.

    CORE.CC.TO_HIT, CORE.CC.TO_WOUND, CORE.SAVE.MODIFIERS, CORE.WEAPON.MELEE,
    CORE.SR.HATRED, CORE.SR.ASF (re-roll against lower I), CORE.SR.POISON,
    CORE.SR.DEVASTATING_CHARGE, CORE.PSY.FEAR (WS 1), CORE.SAVE.PIPELINE,
    CORE.TERRAIN.DEFENDED_OBSTACLE. Where only natural 6s hit (a defended
    obstacle, SIEGE.CC.DEFENDER_BONUS), the re-rolls of failed to-hit rolls
    still apply, to every face but a 6.
    """
    u, t = battle.unit(st.unit), battle.unit(st.target)
    st.info.pop("result", None)
    if attacks <= 0 or not u.in_play or not t.in_play:
        return 0
    charged = u.uid in charged_units
    eff = tables.melee_effect(u.melee, u.troop_type, round_one, charged)
    prof = equipment.melee_profile(battle, u, t, round_one, charged) if t9a.on(battle.state, t9a.EQUIPMENT) else None
    eff = eff if prof is None else prof.effect  # T9A.WEAPON.* replace CORE.WEAPON.MELEE
    battle.emit("CORE.CC.ATTACKS", unit=u.uid, target=t.uid, fighters=st.fighters, support=st.support, attacks=attacks)
    if prof is None:
        battle.emit("CORE.WEAPON.MELEE", unit=u.uid, weapon=u.melee, strength_bonus=eff.strength_bonus,
                    extra_attacks=eff.extra_attacks)
    if u.has("extra_attack") and st.fighters:
        battle.emit("CORE.SR.EXTRA_ATTACK", unit=u.uid, extra_attacks=st.fighters)
    ws, target_ws = psychology.combat_ws(battle, u), psychology.combat_ws(battle, t)
    needed_hit = tables.cc_to_hit(ws + (prof.ws if prof else 0), target_ws)  # T9A.WEAPON.PAIRED: +1 WS
    if t9a_pp.plays(battle.state):  # T9A.PP.PARRY, T9A.PP.DISTRACTING
        needed_hit = t9a_pp.melee_to_hit(battle, u, t, ws + (prof.ws if prof else 0), target_ws)
    sixes_only = round_one and (u.uid, t.uid) in defended
    if battle.state.castle and not sixes_only:  # SIEGE.CC.DEFENDER_BONUS: climbers hit only on a natural 6
        from battleline.env.rules.siege import play

        if play.to_hit(battle.state, u, t, needed_hit) == 6 and play.wall_fight(battle.state, u, t):
            sixes_only = True
            battle.emit("SIEGE.CC.DEFENDER_BONUS", unit=u.uid, target=t.uid, needed=6)
    faces = battle.dice.d6("CORE.CC.TO_HIT", attacks)
    reroll = None
    if round_one and special_rules.hates(u, t):
        reroll = "CORE.SR.HATRED"
    elif u.has("always_strikes_first") and u.profile.I > t.profile.I:
        reroll = "CORE.SR.ASF"
    elif magic.rerolls_hits(battle, u):
        reroll = "CORE.MAGIC.SPELL.HEAVENS.2"  # Portent of Fate
    if reroll is not None:  # where only natural 6s hit, every other face is a failed roll to re-roll
        score = 6 if sixes_only else needed_hit
        misses = [f for f in faces if f < score]
        if misses:  # one re-roll of the misses, whatever the sources (CORE.DICE.REROLL)
            rerolled = battle.dice.d6(reroll, len(misses))
            faces = [f for f in faces if f >= score] + rerolled
            battle.emit(reroll, unit=u.uid, target=t.uid, rerolled=len(misses))
            battle.emit("CORE.DICE.REROLL", unit=u.uid, source=reroll, dice=len(misses))
    hits = sum(1 for f in faces if (f == 6 if sixes_only else f >= needed_hit))
    devastating = u.has("devastating_charge") and round_one and charged
    if devastating:
        battle.emit("CORE.SR.DEVASTATING_CHARGE", unit=u.uid, strength_bonus=1)
    strength = tables.clamp_characteristic(u.profile.S + eff.strength_bonus + int(devastating), "S")
    base_save = t.armour_save
    if t.shield and tables.melee_effect(t.melee, t.troop_type, round_one, t.uid in charged_units).loses_shield:
        base_save = min(tables.IMPOSSIBLE, base_save + 1)  # no shield bonus with a two-handed weapon
    res = special_rules.wound_and_save(
        battle, u, t, hits, strength, base_save=base_save, armour_piercing=u.has("armour_piercing"),
        poisoned=sum(1 for f in faces if f == 6), melee=True, ap=None if prof is None else prof.ap,
    )
    st.info["result"] = res
    battle.emit(
        "CORE.CC.TO_HIT", unit=u.uid, target=t.uid, attacks=attacks, needed=6 if sixes_only else needed_hit, hits=hits
    )
    if ws != u.profile.WS or target_ws != t.profile.WS:
        battle.emit("CORE.PSY.FEAR", unit=u.uid, target=t.uid, ws=ws, target_ws=target_ws, in_combat=True)
    if sixes_only:
        battle.emit("CORE.TERRAIN.DEFENDED_OBSTACLE", unit=u.uid, target=t.uid)
    battle.emit(
        "CORE.CC.TO_WOUND", unit=u.uid, target=t.uid, strength=strength, needed=tables.to_wound(strength, t.profile.T),
        wounds=res.wounds,
    )
    if prof is None:  # T9A.ARMOUR.VALUE replaces it
        battle.emit("CORE.SAVE.MODIFIERS", unit=t.uid, needed=res.armour_needed, saved=res.armour_saved)
    return res.unsaved


def _remove_slain(battle: Battle, strikes: list[Strike], mode: str) -> None:
    """Take the models slain so far this round off the fighters of their unit's strikes in this step.

    CORE.CC.RETURN_STRIKE (``mode`` "return"): the return attacks are ΣA of the
    fighting front-rank models minus ΣA of the models just killed, and the
    supporting attacks min(eligible supporters, surviving fighters), only
    against a frontal charge. CORE.CC.STRIKE_ORDER.LATER ("later"): a model
    slain before its step does not strike, counted the same way. Casualties
    are taken from the last rank, but count here as fighters slain before
    they struck. A unit's slain are counted once over all its strikes (one per
    enemy unit it touches), taken off them in order; its supporting attacks
    are capped by its surviving fighters in all. Emits the rule with the
    fighters, supporters and slain of each strike (for "later" only where
    models were slain).
    """
    by_unit: dict[int, list[Strike]] = {}
    for st in strikes:
        u = battle.unit(st.unit)
        if u.in_play and not u.fleeing and battle.unit(st.target).alive:
            by_unit.setdefault(st.unit, []).append(st)
    for uid, own in by_unit.items():
        slain = min(sum(st.fighters for st in own), battle.unit(uid).flags.get("killed_this_round", 0))
        if mode == "later" and not slain:
            continue
        left, lost = slain, {}
        for st in own:
            lost[id(st)] = min(st.fighters, left)
            st.fighters -= lost[id(st)]
            left -= lost[id(st)]
        survivors = sum(st.fighters for st in own)
        for st in own:
            st.support = min(st.support, survivors) if (st.frontal or mode == "later") else 0
            rule = "CORE.CC.RETURN_STRIKE" if mode == "return" else "CORE.CC.STRIKE_ORDER.LATER"
            battle.emit(rule, unit=uid, target=st.target, fighters=st.fighters, support=st.support, lost=lost[id(st)])


def _strike_step(
    battle: Battle,
    strikes: list[Strike],
    r1: bool,
    charged_units: set[int],
    defended: set[tuple[int, int]],
    wounds_by_side: list[int],
    champion_used: set[int],
    mode: str | None,
) -> None:
    """Resolve simultaneous strikes, then remove casualties (CORE.CC.SEQUENCE step 4).

    ``mode`` "return" is the charged side's return strike in R1 (CORE.CC.RETURN_STRIKE);
    "later" a step of an Initiative-ordered round (CORE.CC.STRIKE_ORDER.LATER). In both,
    the models slain earlier in the round do not strike (:func:`_remove_slain`).
    """
    if mode is not None:
        _remove_slain(battle, strikes, mode)
    pending: list[tuple[Strike, int]] = []
    for st in strikes:
        u = battle.unit(st.unit)
        if not u.in_play or not battle.unit(st.target).alive or u.fleeing:
            continue
        attacks = _attacks(battle, u, st, r1, u.uid in charged_units, champion_used)
        pending.append((st, resolve_strike(battle, st, attacks, r1, charged_units, defended)))
    for st, wounds in pending:
        t = battle.unit(st.target)
        res = st.info.get("result") or special_rules.WoundResult(unsaved=max(0, wounds))
        if not res.any or not t.alive:
            continue
        inflicted, killed = special_rules.apply_result(battle, t, res, "CORE.CC.CASUALTIES", attacker=st.unit)
        wounds_by_side[battle.unit(st.unit).side] += inflicted
        t.flags["killed_this_round"] = t.flags.get("killed_this_round", 0) + killed
