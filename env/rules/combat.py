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

from typing import TYPE_CHECKING

from battleline.env.rules import challenges, characters, psychology, special_rules, tables, war_machines
from battleline.env.rules.actions import PURSUIT_CHOICES, Action
from battleline.env.rules.combat_resolution import (
    CLOSE_UP,
    CLOSE_UP_STEP,
    MAX_RANK_BONUS,
    RANK_MIN_MODELS,
    _result_and_break,
    break_test,
    close_gaps,
    combat_result,
)
from battleline.env.rules.pursuit import PURSUIT_GAP, _flee_and_pursue, flee_source, pursuit_move
from battleline.env.rules.state import Engagement
from battleline.env.rules.strikes import (
    Strike,
    _attacks,
    _collect_strikes,
    _contacts,
    _obstacle_between,
    _strike_step,
    champion_attack_on,
    charged_this_turn,
    contact_overlap,
    fighters,
    flank_or_rear_engaged,
    is_horde,
    resolve_strike,
    supporters,
)
from battleline.env.rules.t9a import protections as t9a_pp

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

__all__ = [
    "CLOSE_UP",
    "CLOSE_UP_STEP",
    "MAX_RANK_BONUS",
    "PAUSED",
    "PURSUIT_GAP",
    "RANK_MIN_MODELS",
    "Strike",
    "_attacks",
    "_flee_and_pursue",
    "_result_and_break",
    "_strike_step",
    "apply_order",
    "apply_pursuit",
    "break_test",
    "champion_attack_on",
    "charged_this_turn",
    "close_gaps",
    "combat_result",
    "contact_overlap",
    "fight_blows",
    "fight_round",
    "fighters",
    "flank_or_rear_engaged",
    "flee_source",
    "groups",
    "is_horde",
    "legal_order",
    "legal_pursuit",
    "pursuit_move",
    "resolve_strike",
    "resume_round",
    "start",
    "supporters",
]


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


def _round_one(battle: Battle, group: list[Engagement]) -> bool:
    return any(charged_this_turn(battle, e) for e in group)


def _charging_side(battle: Battle, group: list[Engagement]) -> int | None:
    for e in group:
        if charged_this_turn(battle, e):
            return battle.unit(e.attacker).side
    return None


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
