"""The Close Combat phase (CORE.CC.*): rounds, combat result, break tests, flight and pursuit.

Every combat (a connected group of engaged units) fights one round per
Close Combat phase, in the order the phasing player chooses (CORE.CC.ROUNDS,
CORE.CONV.ORDER): while two or more combats wait, the phasing player names
the next one (an ``order`` decision; ``end_phase`` keeps uid order of their
lowest unit). A round follows CORE.CC.SEQUENCE: fighting models, strikes in
order, combat result, break tests, flee and pursue, pursuit contact, panic.
The other decision is whether a winner pursues (CORE.CC.PURSUE_CHOICE).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import shapely

from battleline.env.rules import challenges, characters, magic, psychology, space, special_rules, t9a, tables, war_machines
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import PURSUIT_CHOICES, Action
from battleline.env.rules.charges import charge_facing, contact_placement, edge_frame
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.t9a import equipment
from battleline.env.rules.t9a import protections as t9a_pp

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MAX_RANK_BONUS = 3  # CORE.CC.COMBAT_RESULT.RANKS
RANK_MIN_MODELS = 4


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


def _round_one(battle: Battle, group: list[Engagement]) -> bool:
    return any(charged_this_turn(battle, e) for e in group)


def _charging_side(battle: Battle, group: list[Engagement]) -> int | None:
    for e in group:
        if charged_this_turn(battle, e):
            return battle.unit(e.attacker).side
    return None


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


# --------------------------------------------------------------------- phase flow
def groups(battle: Battle) -> list[list[Engagement]]:
    """The combats: connected groups of engagements, ordered by their lowest unit uid."""
    engs = battle.state.engagements
    parent = {}

    def find(x: int) -> int:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for e in engs:
        parent[find(e.attacker)] = find(e.defender)
    comps: dict[int, list[Engagement]] = {}
    for e in engs:
        comps.setdefault(find(e.attacker), []).append(e)
    return sorted(comps.values(), key=lambda g: min(min(e.attacker, e.defender) for e in g))


def start(battle: Battle) -> None:
    """Open the Close Combat phase and fight every combat (CORE.CC.ROUNDS)."""
    s = battle.state
    if s.castle:  # SIEGE.EQUIP.RAM, SIEGE.DMG.MELEE: unengaged units strike the castle elements they touch
        from battleline.env.rules.siege.orders import structure_blows

        structure_blows(battle)
    for e in s.engagements:
        if e.turn == -1:  # pursuit contact: counts as charging now (CORE.CC.PURSUIT_CONTACT)
            e.turn = s.turn
    keys = [sorted({u for e in g for u in (e.attacker, e.defender)}) for g in groups(battle)]
    s.queue["combats"] = keys
    battle.emit("CORE.CC.ROUNDS", player=s.active, combats=len(keys))
    _continue(battle)


def _continue(battle: Battle) -> None:
    s = battle.state
    while _waiting_combats(battle):
        if len(s.queue["combats"]) > 1 and not s.queue.pop("ordered", False):
            battle.set_stage("order")  # CORE.CONV.ORDER: the phasing player picks the next combat
            return
        s.queue.pop("ordered", None)
        uids = set(s.queue["combats"].pop(0))
        group = [e for e in s.engagements if e.attacker in uids or e.defender in uids]
        if not group:
            continue
        outcome = fight_round(battle, group)
        if outcome == PAUSED:
            return  # a challenge decision (stage "challenge")
        if outcome:
            battle.set_stage("pursue")
            return
    battle.finish_phase()


def _waiting_combats(battle: Battle) -> list[list[int]]:
    """The queued combats (unit uid lists) that still have an engagement; the others leave the queue."""
    s = battle.state
    s.queue["combats"] = [
        key for key in s.queue["combats"] if any(e.attacker in key or e.defender in key for e in s.engagements)
    ]
    return s.queue["combats"]


def legal_order(battle: Battle) -> list[Action]:
    """The phasing player's ``order`` actions: one per waiting combat, naming its lowest own unit uid.

    CORE.CONV.ORDER, CORE.CC.ROUNDS: effects that trigger at the same moment
    (here: the Close Combat phase's rounds) resolve in the order the phasing
    player chooses.
    """
    s = battle.state
    engaged = {i for e in s.engagements for i in (e.attacker, e.defender)}
    acts = []
    for key in s.queue["combats"]:
        own = [i for i in key if i in engaged and battle.unit(i).side == s.active]
        if own:
            acts.append(Action("order", own[0]))
    return acts


def apply_order(battle: Battle, action: Action) -> None:
    """Fight next the combat of ``action.unit`` (``end_phase``: the first waiting one), then go on (CORE.CONV.ORDER)."""
    s = battle.state
    combats = s.queue["combats"]
    chosen = action.kind == "order"
    k = next(i for i, key in enumerate(combats) if action.unit in key) if chosen else 0
    combats.insert(0, combats.pop(k))
    s.queue["ordered"] = True
    battle.emit("CORE.CONV.ORDER", player=s.active, effect="combat", units=list(combats[0]), chosen=chosen,
                waiting=len(combats) - 1)
    battle.set_stage("combat")
    _continue(battle)


def resume_round(battle: Battle) -> None:
    """Finish the round paused for a challenge (duel, blows, result), then the phase's other combats."""
    q = battle.state.queue.pop("challenge")
    battle.set_stage("combat")
    if fight_blows(battle, q["combat"], q["wounds"], q.get("duel")):
        battle.set_stage("pursue")
        return
    _continue(battle)


PAUSED = "paused"
"""What :func:`fight_round` returns when the round waits for a challenge decision."""


def fight_round(battle: Battle, group: list[Engagement]) -> bool | str:
    """Fight one round of one combat (CORE.CC.SEQUENCE).

    Steps 1–3 are here: fighting models, impact hits, then the challenge
    (:mod:`env.rules.challenges`), which may pause the round; the rest is
    :func:`fight_blows`. Returns True if pursuit decisions are now pending,
    :data:`PAUSED` if a challenge decision is, else False.
    """
    if war_machines.in_combat(battle, group):
        group = war_machines.fight_assaults(battle, group)  # CORE.WM.ASSAULT_TEAM / ASSAULT_OUTCOME
        if not group:
            return False
    r1 = _round_one(battle, group)
    charging_side = _charging_side(battle, group) if r1 else None
    charged_units = _charged_units(battle, group)
    units = sorted({u for e in group for u in (e.attacker, e.defender)})
    battle.emit("CORE.CC.SEQUENCE", units=units, round_one=r1, charging_side=charging_side)
    strikes = _collect_strikes(battle, group, charged_units)
    wounds_by_side = [0, 0]
    for i in units:
        battle.unit(i).flags["fought"] = True
    special_rules.before_blows(battle, group, r1, charged_units, wounds_by_side)
    if r1 and challenges.open_challenge(battle, units, charging_side, wounds_by_side):
        return PAUSED
    return fight_blows(battle, units, wounds_by_side, None, strikes)


def _charged_units(battle: Battle, group: list[Engagement]) -> set[int]:
    """Units that charged this turn and have not fought yet (:func:`charged_this_turn`), with their joined characters."""
    out = {e.attacker for e in group if charged_this_turn(battle, e)}
    return out | {c for u in out for c in battle.unit(u).joined}


def fight_blows(
    battle: Battle, units: list[int], wounds_by_side: list[int], duel: list[int] | None, strikes: list[Strike] | None = None
) -> bool:
    """The rest of a round: the duel, the strikes, the combat result, break tests (CORE.CC.SEQUENCE 3–9).

    Joined characters strike from their host's front rank with their own
    profile (:func:`characters.front_fighters`); duellists and refusers do not
    strike (CORE.CC.CHALLENGE.DUEL, CORE.CC.CHALLENGE.REFUSE).

    Args:
        units: the combat's unit uids when the round began.
        wounds_by_side: unsaved wounds so far this round (impact hits), [blue, red].
        duel: an accepted challenge, [challenger, acceptor] model uids.
        strikes: the units' strikes, when collected before the impact hits.

    Returns True if pursuit decisions are now pending.
    """
    s = battle.state
    uids = set(units)
    group = [e for e in s.engagements if e.attacker in uids or e.defender in uids]
    r1 = _round_one(battle, group)
    charging_side = _charging_side(battle, group) if r1 else None
    charged_units = _charged_units(battle, group)
    sides = {0: [i for i in units if battle.unit(i).side == 0], 1: [i for i in units if battle.unit(i).side == 1]}
    overkill = challenges.fight_duel(battle, duel, charged_units, wounds_by_side) if duel else [0, 0]
    if strikes is None or duel:
        group = [e for e in s.engagements if e.attacker in uids or e.defender in uids]
        strikes = _collect_strikes(battle, group, charged_units)
    defended = {
        (e.attacker, e.defender)
        for e in group
        if e.charged and e.facing == "front" and _obstacle_between(battle, battle.unit(e.attacker), battle.unit(e.defender))
    }
    out_chars, out_champions = challenges.duellists_out(battle, duel)
    for cid, enemy, host in characters.front_fighters(battle, group, out_chars):
        host_strike = next((st for st in strikes if st.unit == host and st.target == enemy and st.fighters > 0), None)
        if host_strike is not None:
            host_strike.fighters -= 1  # the character holds one front-rank slot (CORE.MOVE.JOIN)
        strikes.append(Strike(cid, enemy, 1, 0, False, battle.unit(cid).profile.I))
        if (host, enemy) in defended:
            defended.add((cid, enemy))
    for st in strikes:
        if st.support:
            battle.emit("CORE.CC.SUPPORT", unit=st.unit, target=st.target, fighters=st.fighters, support=st.support)
    champion_used: set[int] = set(out_champions)
    wall_first: set[int] = set()
    if s.castle:  # SIEGE.CC.DEFENDER_BONUS: a wall's defenders strike first against climbers, every round
        from battleline.env.rules.siege import play

        wall_first = {id(st) for st in strikes if play.strikes_first(s, battle.unit(st.unit), battle.unit(st.target))}
    if r1:
        first = [st for st in strikes if battle.unit(st.unit).side == charging_side]
        second = [st for st in strikes if battle.unit(st.unit).side != charging_side]
        if wall_first:
            first, second = (
                [st for st in strikes if id(st) in wall_first],
                [st for st in strikes if id(st) not in wall_first],
            )
        battle.emit("CORE.CC.STRIKE_ORDER.ROUND1", charging_side=charging_side)
        _strike_step(battle, first, r1, charged_units, defended, wounds_by_side, champion_used, None)
        _strike_step(battle, second, r1, charged_units, defended, wounds_by_side, champion_used, "return")
    else:
        steps: dict[tuple[int, int], list[Strike]] = {}
        members = [battle.unit(i) for i in sorted(uids | {st.unit for st in strikes})]
        weapon_last = {u.uid: tables.melee_effect(u.melee, u.troop_type, False, False).strikes_last for u in members}
        tiers = special_rules.strike_tiers(members, weapon_last)
        for uid, tier in tiers.items():
            if tier:
                battle.emit("CORE.SR.ASF" if tier > 0 else "CORE.SR.ASL", unit=uid, strikes="first" if tier > 0 else "last")
        for st in strikes:
            u = battle.unit(st.unit)
            steps.setdefault((99 if id(st) in wall_first else tiers[u.uid], u.profile.I), []).append(st)
        battle.emit("CORE.CC.STRIKE_ORDER.LATER", steps=[list(k) for k in sorted(steps, reverse=True)])
        for key in sorted(steps, reverse=True):
            _strike_step(battle, steps[key], r1, charged_units, defended, wounds_by_side, champion_used, "later")
    if t9a_pp.plays(s):  # T9A.STOMP: Initiative step 0, after every other blow
        t9a_pp.stomp(battle, group, wounds_by_side)
    for e in group:
        e.rounds += 1
    pursuing = _result_and_break(battle, group, sides, wounds_by_side, r1, charging_side, overkill)
    if s.castle:  # SIEGE.TOWER.ASSAULT: the winner of a fight at a door moves into the emptied tower
        from battleline.env.rules.siege import play

        play.settle_doors(battle)
    return pursuing


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


def _side_bonus(battle: Battle, side_units: list[int], enemy_units: list[int], group: list[Engagement]) -> dict[str, int]:
    live = [battle.unit(i) for i in side_units if battle.unit(i).alive and not battle.unit(i).fleeing]
    parts: dict[str, int] = {}
    eligible = [u for u in live if not flank_or_rear_engaged(battle, u) and not u.has("skirmishers")]
    ranks = max((min(MAX_RANK_BONUS, sum(1 for r in range(2, u.ranks + 1) if u.models_in_rank(r) >= RANK_MIN_MODELS))
                 for u in eligible), default=0)
    if ranks:
        parts["ranks"] = ranks
    if any(u.standard for u in live):
        parts["standard"] = 1
        battle.emit("CORE.SR.STANDARD", units=[u.uid for u in live if u.standard], bonus=1)
    uids = {u.uid for u in live}
    facings = {e.facing for e in group if e.attacker in uids and e.defender in enemy_units}
    if facings & {"left", "right"}:
        parts["flank"] = 1
    if "rear" in facings:
        parts["rear"] = 2
    return parts


def combat_result(
    battle: Battle,
    sides: dict[int, list[int]],
    wounds_by_side: list[int],
    charging_side: int | None,
    group: list[Engagement],
    overkill: list[int] | None = None,
) -> tuple[list[int], list[dict[str, int]]]:
    """Each side's combat result total and parts (CORE.CC.COMBAT_RESULT.*).

    Parts: wounds, charge, ranks, standard, bsb (+1 once per side with the
    BSB fighting, CORE.SR.BSB), flank, rear, overkill (a duel's, at most +5,
    CORE.CC.COMBAT_RESULT.OVERKILL), outnumber (joined characters count as
    models), musician.
    """
    parts: list[dict[str, int]] = []
    for side in (0, 1):
        p = {"wounds": wounds_by_side[side]}
        if charging_side == side:
            p["charge"] = 1
        p.update(_side_bonus(battle, sides[side], sides[1 - side], group))
        if characters.side_has_bsb(battle, sides[side]):
            p["bsb"] = 1
        if overkill and overkill[side]:
            p["overkill"] = overkill[side]
        parts.append(p)
    models = [
        sum(battle.unit(i).models for i in sides[side] if battle.unit(i).alive) + characters.joined_models(battle, sides[side])
        for side in (0, 1)
    ]
    if models[0] != models[1]:
        parts[0 if models[0] > models[1] else 1]["outnumber"] = 1
    if battle.state.castle:  # SIEGE.CC.RESULT: no ranks or outnumber at a wall
        from battleline.env.rules.siege import play

        units = [[battle.unit(i) for i in sides[side]] for side in (0, 1)]
        parts = [play.result_parts(battle.state, units[0], units[1], p) for p in parts]
    totals = [sum(p.values()) for p in parts]
    if totals[0] == totals[1]:
        has_music = [any(battle.unit(i).musician and battle.unit(i).alive for i in sides[side]) for side in (0, 1)]
        if has_music[0] != has_music[1]:
            parts[0 if has_music[0] else 1]["musician"] = 1
            totals = [sum(p.values()) for p in parts]
    return totals, parts


def _emit_parts(battle: Battle, parts: list[dict[str, int]]) -> None:
    names = {
        "wounds": "CORE.CC.COMBAT_RESULT.WOUNDS",
        "charge": "CORE.CC.COMBAT_RESULT.CHARGE",
        "ranks": "CORE.CC.COMBAT_RESULT.RANKS",
        "standard": "CORE.CC.COMBAT_RESULT.STANDARD",
        "flank": "CORE.CC.COMBAT_RESULT.FLANK",
        "rear": "CORE.CC.COMBAT_RESULT.REAR",
        "bsb": "CORE.CC.COMBAT_RESULT.STANDARD",
        "overkill": "CORE.CC.COMBAT_RESULT.OVERKILL",
        "outnumber": "CORE.CC.COMBAT_RESULT.OUTNUMBER",
        "musician": "CORE.CC.COMBAT_RESULT.MUSICIAN",
    }
    for side, p in enumerate(parts):
        for key, value in p.items():
            if value:
                battle.emit(names[key], side=side, value=value)


def _unit_models(battle: Battle, u: UnitState) -> int:
    """A unit's models, its joined characters included (CORE.TEST.LD_UNIT, CORE.CC.COMBAT_RESULT.OUTNUMBER)."""
    return u.models + len(characters.members(battle.state, u))


def break_test(battle: Battle, u: UnitState, diff: int, enemies: list[UnitState]) -> bool:
    """CORE.CC.BREAK_TEST with CORE.CC.BREAK_ORDER, CORE.CC.INSPIRED, CORE.SR.STUBBORN, CORE.SR.UNBREAKABLE.

    Inspired compares the unit's models with the largest enemy unit's, joined
    characters counted as models on both sides.

    Returns True if the unit holds.
    """
    if u.has("unbreakable"):
        battle.emit("CORE.CC.BREAK_ORDER", unit=u.uid, step="unbreakable")
        battle.emit("CORE.SR.UNBREAKABLE", unit=u.uid)
        return True
    if u.has("swarm"):
        battle.emit("CORE.CC.BREAK_ORDER", unit=u.uid, step="swarm")
        special_rules.swarm_losses(battle, u, diff)
        return True
    base = psychology.inspired_ld(battle, u)
    largest = max((_unit_models(battle, e) for e in enemies), default=0)
    models = _unit_models(battle, u)
    if u.has("stubborn"):
        ld, why = base, "stubborn"
        battle.emit("CORE.SR.STUBBORN", unit=u.uid, ld=base, difference_ignored=diff)
    elif models > largest:
        ld, why = base, "inspired"
        battle.emit("CORE.CC.INSPIRED", unit=u.uid, models=models, largest_enemy=largest)
    else:
        ld, why = base - diff, "modified"
    battle.emit("CORE.CC.BREAK_ORDER", unit=u.uid, step=why)
    return psychology.test_ld(battle, u, ld, "CORE.CC.BREAK_TEST", difference=diff, base_ld=base, basis=why)


def _result_and_break(
    battle: Battle,
    group: list[Engagement],
    sides: dict[int, list[int]],
    wounds_by_side: list[int],
    r1: bool,
    charging_side: int | None,
    overkill: list[int] | None = None,
) -> bool:
    s = battle.state
    sides = characters.refresh_sides(battle, sides)
    for i in (u for side in sides.values() for u in side):
        battle.unit(i).flags.pop("killed_this_round", None)
    alive = [[i for i in sides[side] if battle.unit(i).alive] for side in (0, 1)]
    if not alive[0] or not alive[1]:
        battle.emit("CORE.CC.COMBAT_RESULT.COMPARE", outright=True, winner=0 if alive[0] else (1 if alive[1] else None))
        return False
    totals, parts = combat_result(battle, sides, wounds_by_side, charging_side, group, overkill)
    _emit_parts(battle, parts)
    if totals[0] == totals[1]:
        battle.emit("CORE.CC.COMBAT_RESULT.COMPARE", totals=totals, winner=None)
        close_gaps(battle, group, s.active)  # CORE.CC.CONTACT_KEEP: a draw, the phasing player's units close up
        return False
    winner = 0 if totals[0] > totals[1] else 1
    diff = abs(totals[0] - totals[1])
    battle.emit("CORE.CC.COMBAT_RESULT.COMPARE", totals=totals, winner=winner, difference=diff)
    losers = [battle.unit(i) for i in alive[1 - winner]]
    if s.castle:  # SIEGE.CAPTURE.PARAPET
        from battleline.env.rules.siege import play

        play.round_won(battle, [battle.unit(i) for i in alive[winner]], losers)
    special_rules.lose_frenzy(battle, losers)
    if len(alive[0]) + len(alive[1]) > 2:
        battle.emit("CORE.CC.MULTI", losers=[u.uid for u in losers], difference=diff)
    enemies = [battle.unit(i) for i in alive[winner]]
    broken: list[int] = []
    for u in losers:
        if not break_test(battle, u, diff, enemies):
            broken.append(u.uid)
            for x in [u, *characters.members(s, u)]:
                x.broken = True  # CORE.VP.BSB: a BSB in a unit that failed a break test
            if u.standard:
                u.standard = False
                s.captured_standards[winner] += 1
                battle.emit("CORE.VP.STANDARD", unit=u.uid, captured_by=winner)
    if broken and s.castle:  # SIEGE.BREAK.ATTACKER, SIEGE.BREAK.DEFENDER, SIEGE.TOWER.ASSAULT: no pursuit
        from battleline.env.rules.siege import play

        broken = play.breaks_at_wall(battle, play.breaks_at_door(battle, broken))
    fought = {str(b): sorted(_contacts(battle, b)) for b in broken}  # CORE.CC.FLEE: whom each flees from
    close_gaps(battle, group, winner)  # CORE.CC.CONTACT_KEEP
    if not broken:
        return False
    ask = []
    for w in alive[winner]:
        wu = battle.unit(w)
        contacts = _contacts(battle, w)
        if contacts and contacts <= set(broken) and not wu.fleeing:
            ask.append(w)
    s.queue["pursuit"] = {"broken": broken, "ask": ask, "answers": {}, "winner": winner, "fought": fought}
    if ask:
        return True
    _flee_and_pursue(battle)
    return False


PURSUIT_GAP = 1.0  # CORE.CC.PURSUIT_MOVE: a pursuer stops 1" from friends and from impassable terrain
CLOSE_UP = 2.0  # CORE.CC.CONTACT_KEEP: the winner closes up to 2" straight ahead
CLOSE_UP_STEP = 0.05  # inches between the positions tried before the exact contact distance is found


def close_gaps(battle: Battle, group: list[Engagement], side: int) -> None:
    """CORE.CC.CONTACT_KEEP: units of ``group`` that lost contact when a footprint shrank close up or disengage.

    Casualties come off the last rank and the front line stays closed
    (000:L968): a unit that lost a rank keeps its front edge, so an enemy in
    its rear is left a rank's depth away, and a front rank that lost files
    slides (:func:`env.rules.casualties.keep_contacts`), which may leave a
    flank enemy apart. Only models in base contact fight (000:L906), so for
    each engagement with a unit whose footprint shrank this round
    (:data:`env.rules.casualties.SHRANK`) whose footprints no longer touch
    (within :data:`env.rules.casualties.CONTACT_GAP` inches), neither unit
    fleeing: the unit of ``side`` (the round's winner; in a draw the phasing
    player's) moves straight ahead by the least distance up to CLOSE_UP
    inches that touches the other again, for free (:func:`_close_up_distance`).
    If none does (for instance a winner whose enemy stands behind it), the
    engagement ends. Units that failed their break test are closed up to as
    well, so the winner may pursue them; one that can no longer be reached
    still flees from the units it fought (:func:`_flee_and_pursue`). Each
    close-up or disengagement emits CORE.CC.CONTACT_KEEP.

    A character left alone when its host was wiped out this round
    (CORE.TYPE.CHARACTER, :func:`characters.on_removed`) stands in its slot
    with the host's engagements: its engagements are those of the combat too.
    """
    from battleline.env.rules.casualties import CONTACT_GAP, SHRANK

    uids = {i for e in group for i in (e.attacker, e.defender)}
    uids |= {u.uid for u in battle.state.units if u.flags.get("inherited") in uids}
    group = [e for e in battle.state.engagements if e.attacker in uids or e.defender in uids]
    shrank = {i for e in group for i in (e.attacker, e.defender) if battle.unit(i).flags.pop(SHRANK, False)}
    for e in [e for e in group if {e.attacker, e.defender} & shrank]:
        a, d = battle.unit(e.attacker), battle.unit(e.defender)
        if not (a.alive and d.alive) or a.fleeing or d.fleeing or e not in battle.state.engagements:
            continue
        if geo.distance(space.footprint(a), space.footprint(d)) <= CONTACT_GAP:
            continue
        if battle.state.castle and _at_door(battle, a, d):
            continue  # SIEGE.TOWER.ASSAULT: a fight at a door never had base contact
        mover, other = (a, d) if a.side == side else (d, a)
        dist = _close_up_distance(battle, mover, other)
        if dist is None:
            battle.state.engagements.remove(e)
            battle.emit("CORE.CC.CONTACT_KEEP", unit=mover.uid, target=other.uid, closed=False, disengaged=True)
            continue
        end = geo.move_straight(space.pose(mover), dist)
        mover.x, mover.y = end.x, end.y
        battle.emit("CORE.CC.CONTACT_KEEP", unit=mover.uid, target=other.uid, closed=True, moved=dist, x=end.x, y=end.y)


def _at_door(battle: Battle, a: UnitState, d: UnitState) -> bool:
    from battleline.env.rules.siege import play

    return play.door_fight(battle.state, a, d) is not None


def _close_up_distance(battle: Battle, u: UnitState, other: UnitState) -> float | None:
    """The least distance (inches, ≤ CLOSE_UP) ``u`` moves straight ahead to touch ``other``, or None.

    None also when the move there is not possible: its end overlaps ``other``,
    its swept path overlaps another unit or impassable terrain, it ends in
    the castle or off the table (CORE.MOVE.TABLE_EDGE), or it would take
    ``u`` out of contact with another enemy it is engaged with.
    """
    from battleline.env.rules.casualties import CONTACT_GAP

    s = battle.state
    target = space.footprint(other)
    start = space.pose(u)
    start_poly = space.footprint(u)
    blockers = [space.footprint(o) for o in space.alive_units(s) if o.uid not in (u.uid, other.uid)]
    blockers += [space.terrain_poly(t) for t in space.terrain_of(s, space.IMPASSABLE)]
    held = [space.footprint(o) for o in map(battle.unit, _contacts(battle, u.uid))
            if o.uid != other.uid and o.alive and geo.distance(start_poly, space.footprint(o)) <= CONTACT_GAP]

    def apart(dist: float) -> float:
        return geo.distance(space.footprint_at(u, geo.move_straight(start, dist)), target)

    lo, hi = 0.0, None
    for k in range(1, round(CLOSE_UP / CLOSE_UP_STEP) + 1):
        if apart(k * CLOSE_UP_STEP) <= 1e-9:
            hi = k * CLOSE_UP_STEP
            break
        lo = k * CLOSE_UP_STEP
    if hi is None:
        return None
    for _ in range(30):  # bisection to the exact contact distance
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if apart(mid) <= 1e-9 else (mid, hi)
    poly = space.footprint_at(u, geo.move_straight(start, hi))
    path = geo.swept_area(start_poly, poly)
    if not geo.within_table(poly, s.table_w, s.table_h) or not space.castle_end_ok(s, u, poly):
        return None
    if geo.overlaps(poly, target) or any(geo.overlaps(path, b) for b in blockers):
        return None
    if any(geo.distance(poly, h) > CONTACT_GAP for h in held):
        return None
    return hi


def _contacts(battle: Battle, uid: int) -> set[int]:
    out = set()
    for e in battle.state.engagements:
        if e.attacker == uid:
            out.add(e.defender)
        elif e.defender == uid:
            out.add(e.attacker)
    return out


# --------------------------------------------------------------------- pursuit
def legal_pursuit(battle: Battle) -> list[Action]:
    """The pending winner's choice: pursue or hold (CORE.CC.PURSUE_CHOICE)."""
    p = battle.state.queue["pursuit"]
    uid = p["ask"][0]
    target = sorted(_contacts(battle, uid))[0]
    return [Action("pursue", uid, target, choice) for choice in PURSUIT_CHOICES]


def apply_pursuit(battle: Battle, action: Action) -> None:
    """Record a pursuit choice; once all are in, flee and pursue (end_phase = pursue).

    A unit that declines tests on its Ld (CORE.CC.PURSUE_CHOICE): the highest
    among its models, joined characters included (CORE.TEST.LD_UNIT).
    """
    p = battle.state.queue["pursuit"]
    uid = p["ask"].pop(0)
    choice = "pursue" if action.kind == "end_phase" else action.option
    u = battle.unit(uid)
    if choice == "hold" and not psychology.test_ld(
        battle, u, characters.unit_ld(battle, u), "CORE.CC.PURSUE_CHOICE", declined=True
    ):
        choice = "pursue"
    p["answers"][str(uid)] = choice
    battle.emit("CORE.CC.PURSUE_CHOICE", unit=uid, choice=choice)
    if p["ask"]:
        return
    _flee_and_pursue(battle)
    battle.set_stage("combat")
    _continue(battle)


def _flee_and_pursue(battle: Battle) -> None:
    """CORE.CC.FLEE, CORE.CC.CAUGHT, CORE.CC.PURSUIT_MOVE, CORE.CC.PURSUIT_CONTACT, panic."""
    s = battle.state
    p = s.queue.pop("pursuit")
    pursuers_all = [int(k) for k, v in p["answers"].items() if v == "pursue"]
    moved: set[int] = set()
    for uid in p["broken"]:
        u = battle.unit(uid)
        if not u.alive:
            continue
        contacts = [battle.unit(i) for i in sorted(_contacts(battle, uid))]
        if not contacts:  # CORE.CC.CONTACT_KEEP disengaged it: it still flees from the units it fought
            contacts = [battle.unit(i) for i in p.get("fought", {}).get(str(uid), []) if battle.unit(i).alive]
        if not contacts:
            continue
        source = flee_source(battle, uid, contacts)
        pursuers = [c for c in contacts if c.uid in pursuers_all and c.uid not in moved]
        flee_roll = psychology.flee_roll(battle, u, "CORE.CC.FLEE")
        rolls = {c.uid: psychology.flee_roll(battle, c, "CORE.CC.CAUGHT") for c in pursuers}
        psychology.panic_nearby(battle, u, "CORE.PSY.PANIC.TRIGGER_BREAK")
        caught = any(r >= flee_roll for r in rolls.values())
        away = geo.facing_towards((source.x, source.y), (u.x, u.y))
        if caught:
            psychology.destroy(battle, u, "CORE.CC.CAUGHT", flee_roll=flee_roll, pursuit_rolls={str(k): v for k, v in rolls.items()})
        else:
            psychology.flee(battle, u, (source.x, source.y), "CORE.CC.FLEE", roll=flee_roll, away_from=source.uid)
        for c in pursuers:
            if c.alive and not psychology.engaged(battle, c):
                pursuit_move(battle, c, away, rolls[c.uid], escaped=None if caught else uid, target=uid)
                moved.add(c.uid)


def flee_source(battle: Battle, uid: int, contacts: list[UnitState]) -> UnitState:
    """The enemy unit a broken unit ``uid`` flees from (CORE.CC.FLEE): the contacting unit with the highest US;
    ties go to a unit that charged it, then are drawn at random: a D6 each (in uid order), the highest
    wins, units tied on the highest roll again."""
    charged = {e.attacker for e in battle.state.engagements if e.defender == uid and e.charged}
    best = max((c.unit_strength, c.uid in charged) for c in contacts)
    tied = [c for c in contacts if (c.unit_strength, c.uid in charged) == best]
    while len(tied) > 1:
        faces = battle.dice.d6("CORE.CC.FLEE", len(tied))
        tied = [c for c, f in zip(tied, faces, strict=True) if f == max(faces)]
    return tied[0]


def pursuit_move(
    battle: Battle, c: UnitState, heading: float, roll: int, escaped: int | None, target: int | None = None
) -> None:
    """CORE.CC.PURSUIT_MOVE: face the flee direction and move the roll straight ahead.

    The pursuer first turns about its centre to face ``heading``. Where the
    turned footprint would overlap a unit or impassable terrain
    (CORE.TERRAIN.TYPES), stand in the castle, or cross the
    table edge (CORE.MOVE.TABLE_EDGE: a pursuer never leaves the table; it
    stops at the edge, and a turn that pokes past the edge is not a pursuit
    off the table), it has no room to turn and pursues straight ahead in its
    current facing instead (an event CORE.MOVE.TABLE_EDGE with
    ``turned=False`` says so for the edge). It then stops exactly 1" from
    friends and from impassable terrain, at the table edge, or touching an
    escaped fleer (distances are not rounded, CORE.CONV.UNITS: the move is
    tried in 0.5" steps, and the last step up to a stop is found by
    bisection). A unit that starts within 1" of a friend or of impassable
    terrain does not move. Touching a fresh enemy starts a new combat
    (CORE.CC.PURSUIT_CONTACT) in which the pursuer counts as charging next
    phase.
    """
    s = battle.state
    start = geo.Pose(c.x, c.y, heading)
    env = space.Surroundings(s, c)
    first = space.footprint_at(c, start)
    if not geo.within_table(first, s.table_w, s.table_h):
        battle.emit("CORE.MOVE.TABLE_EDGE", unit=c.uid, move="CORE.CC.PURSUIT_MOVE", turned=False, heading=heading)
        start = space.pose(c)  # no room to turn on the table: pursue straight ahead
    elif (env.overlapping(first, env.polys).any() or env.overlapping(first, env.impassable).any()
          or not space.castle_end_ok(s, c, first)):
        start = space.pose(c)  # no room to turn about: pursue straight ahead
    impassable = [space.terrain_poly(t) for t in space.terrain_of(s, space.IMPASSABLE)]
    nearby = [o for o in space.alive_units(s) if o.uid != c.uid and space.near(o, c, roll + 2.0)]

    def blocked(d: float) -> tuple[bool, UnitState | None]:
        """(stop, fresh enemy touched) for the pursuer moved ``d`` inches."""
        poly = space.footprint_at(c, geo.move_straight(start, d))
        if not geo.within_table(poly, s.table_w, s.table_h):
            return True, None
        if any(geo.distance(poly, t) < PURSUIT_GAP for t in impassable):
            return True, None
        if not space.castle_end_ok(s, c, poly):  # SIEGE.SCEN.CASTLE, SIEGE.MOVE.WALLS
            return True, None
        for o in nearby:
            gap = geo.distance(poly, space.footprint(o))
            if o.side == c.side and gap < PURSUIT_GAP:
                return True, None
            if o.side != c.side and gap <= geo.EPS:
                return (True, None) if o.uid == escaped or o.fleeing else (False, o)
        return False, None

    dist = 0.0
    step = 0.5
    fresh: UnitState | None = None
    while dist + step <= roll + 1e-9:
        stop, fresh = blocked(dist + step)
        if stop:
            lo, hi = dist, dist + step
            for _ in range(40):  # the exact stop: the farthest distance clear of every stop and enemy
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if blocked(mid) != (False, None) else (mid, hi)
            dist = lo
            fresh = blocked(hi)[1]  # an enemy touched just before the stop
            break
        if fresh:
            break
        dist += step
    end = geo.move_straight(start, dist)
    c.x, c.y, c.facing = end.x, end.y, end.facing % 360.0
    battle.emit("CORE.CC.PURSUIT_MOVE", unit=c.uid, target=target, roll=roll, distance=dist, x=c.x, y=c.y, facing=c.facing)
    if fresh is None:
        return
    facing = charge_facing(battle, c, fresh, roll=True)
    placed = contact_placement(battle, c, fresh, facing) if facing else None
    if placed is None:
        return
    pose, overlap, _ = placed
    c.x, c.y, c.facing = pose.x, pose.y, pose.facing
    s.engagements.append(Engagement(attacker=c.uid, defender=fresh.uid, facing=facing, charged=True, turn=-1))
    battle.emit("CORE.CC.PURSUIT_CONTACT", unit=c.uid, target=fresh.uid, facing=facing, overlap=overlap)
