"""Challenges and duels (CORE.CC.CHALLENGE.*, CORE.CC.COMBAT_RESULT.OVERKILL).

A challenge may be issued in the first round of a new combat (no engagement
of it has fought a round yet), after impact hits (CORE.CC.SEQUENCE step 3).
The round then pauses in two decision stages, the way ``pursue`` pauses the
combat queue:

* ``challenge``: the deciding side (the charging side first, then the other)
  issues ``Action("challenge", model, enemy_unit)`` or passes with
  ``end_phase`` (CORE.CC.CHALLENGE.ISSUE);
* ``accept``: the challenged side answers ``Action("accept", model)`` or
  ``Action("refuse", model)`` (CORE.CC.CHALLENGE.REFUSE); ``end_phase``
  accepts with the first model offered. A surrounded unit, and a lone
  character, must accept.

A *model* is named by a uid: a character's own uid (joined or alone), or the
uid of a unit for its champion. The challenger's unit must be engaged with the
challenged unit, and both must contain a character or a champion. One
challenge per combat: once its first round is fought, none is offered.

``state.queue["challenge"]`` while paused: ``{"combat": [unit uids],
"wounds": [blue, red] (unsaved wounds so far this round), "deciders": [a unit
of each side still to decide, in order], "challenger": model | None, "target": unit | None, "duel":
[challenger, acceptor] | None}``. :func:`env.rules.combat.resume_round` then
fights the duel (:func:`fight_duel`) and the rest of the round.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from battleline.env.rules import characters, tables
from battleline.env.rules.actions import Action, Pending
from battleline.env.rules.casualties import apply_wounds, slay_champion
from battleline.env.rules.state import BattleState, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MAX_DUEL_ROUNDS = 10  # CORE.CC.CHALLENGE.DUEL: the duel stops after 10 rounds
OVERKILL_CAP = 5  # CORE.CC.CHALLENGE.OVERKILL


# --------------------------------------------------------------------- who may duel
def models_of(state: BattleState, unit: UnitState) -> list[int]:
    """The models of table unit ``unit`` that may issue or answer a challenge.

    Its joined characters (their uids) and its champion (the unit's uid), or
    a lone character itself; a model that refused a challenge is left out.
    """
    if not unit.alive or unit.fleeing:
        return []
    if unit.character:
        return [unit.uid]
    out = [c.uid for c in characters.members(state, unit) if not c.refused]
    if unit.champion and not unit.refused:
        out.append(unit.uid)
    return out


def _contacts(state: BattleState, uid: int) -> list[int]:
    out = {e.defender if e.attacker == uid else e.attacker for e in state.engagements if uid in (e.attacker, e.defender)}
    return sorted(out)


def surrounded(state: BattleState, u: UnitState) -> bool:
    """CORE.GEO.SURROUNDED: enemies in contact with ``u``'s front, both flanks and rear."""
    faces = {e.facing for e in state.engagements if e.defender == u.uid}
    if any(e.attacker == u.uid for e in state.engagements):
        faces.add("front")
    return faces >= {"front", "left", "right", "rear"}


def _issue_actions(battle: Battle, side: int, units: list[int]) -> list[Action]:
    s = battle.state
    acts = []
    for uid in units:
        u = s.units[uid]
        if u.side != side:
            continue
        mine = models_of(s, u)
        for t in _contacts(s, uid):
            if mine and t in units and models_of(s, s.units[t]):
                acts.extend(Action("challenge", m, t) for m in mine)
    return acts


def open_challenge(battle: Battle, units: list[int], charging_side: int | None, wounds_by_side: list[int]) -> bool:
    """Pause the round for challenge decisions if a side of this new combat may challenge.

    Args:
        units: the combat's unit uids.
        charging_side: the side that charged this turn (it decides first).
        wounds_by_side: unsaved wounds so far this round (impact hits), kept
            for the rest of the round.

    Returns:
        True if the battle now waits in stage ``challenge``.
    """
    s = battle.state
    if any(e.rounds > 0 for e in s.engagements if e.attacker in units or e.defender in units):
        return False
    first = s.active if charging_side is None else charging_side
    sides = [x for x in (first, 1 - first) if _issue_actions(battle, x, units)]
    if not sides:
        return False
    deciders = [next(i for i in units if s.units[i].side == x) for x in sides]
    s.queue["challenge"] = {
        "combat": list(units), "wounds": list(wounds_by_side), "deciders": deciders,
        "challenger": None, "target": None, "duel": None,
    }
    battle.set_stage("challenge")
    return True


# --------------------------------------------------------------------- decisions
def pending(battle: Battle) -> Pending:
    """Who decides in stage ``challenge`` (the side to issue) or ``accept`` (the challenged unit's side)."""
    q = battle.state.queue["challenge"]
    if battle.state.stage == "challenge":
        return Pending(battle.unit(q["deciders"][0]).side, "challenge")
    return Pending(battle.unit(q["target"]).side, "accept", q["target"])


def legal(battle: Battle) -> list[Action]:
    """Legal ``challenge`` actions, or ``accept`` / ``refuse`` actions of the challenged unit."""
    s = battle.state
    q = s.queue["challenge"]
    if s.stage == "challenge":
        return _issue_actions(battle, s.units[q["deciders"][0]].side, q["combat"])
    t = s.units[q["target"]]
    models = models_of(s, t)
    acts = [Action("accept", m) for m in models]
    if not t.character and not surrounded(s, t):
        acts += [Action("refuse", m) for m in models]
    return acts


def apply(battle: Battle, action: Action) -> None:
    """Issue (or pass), accept or refuse; once decided, the round goes on (:func:`env.rules.combat.resume_round`)."""
    from battleline.env.rules.combat import resume_round

    s = battle.state
    q = s.queue["challenge"]
    if s.stage == "challenge":
        if action.kind == "end_phase":
            q["deciders"].pop(0)
            if not q["deciders"]:
                resume_round(battle)
            return
        q["challenger"], q["target"] = action.unit, action.target
        battle.emit(
            "CORE.CC.CHALLENGE.ISSUE", unit=action.unit, target=action.target, side=battle.unit(action.unit).side,
            champion=not battle.unit(action.unit).character,
        )
        battle.set_stage("accept")
        return
    if action.kind == "end_phase":
        action = legal(battle)[0]  # accept with the first model offered
    if action.kind == "accept":
        q["duel"] = [q["challenger"], action.unit]
        battle.emit("CORE.CC.CHALLENGE.ISSUE", unit=q["challenger"], target=q["target"], answer="accept", acceptor=action.unit)
    else:
        refuser = battle.unit(action.unit)
        refuser.refused = True
        battle.emit(
            "CORE.CC.CHALLENGE.REFUSE", unit=action.unit, host=q["target"], champion=not refuser.character,
            challenger=q["challenger"],
        )
    resume_round(battle)


# --------------------------------------------------------------------- the duel
def _is_champion(u: UnitState) -> bool:
    return not u.character


def _wounds_left(u: UnitState, taken: dict[int, int]) -> int:
    """Wounds a duellist has left: a champion has its unit's W (wounds counted in ``taken``), a character its own."""
    if _is_champion(u):
        return max(1, u.profile.W) - taken.get(u.uid, 0)
    return max(1, u.profile.W) - u.wounds_taken


def _standing(u: UnitState) -> bool:
    return u.in_play and (u.champion if _is_champion(u) else True)


def _tier(u: UnitState) -> int:
    """+1 ASF, −1 ASL (great weapons included), else 0 (CORE.CC.STRIKE_ORDER.LATER)."""
    eff = tables.melee_effect(u.melee, u.troop_type, False, False)
    if u.has("always_strikes_first"):
        return 1
    return -1 if (eff.strikes_last or u.has("always_strikes_last")) else 0


def _order(a: UnitState, b: UnitState, duel_round: int) -> list[list[UnitState]]:
    """Strike steps of one duel round: the challenger first in round 1, then ASF / I / ASL, equal I together."""
    if duel_round == 1:
        return [[a], [b]]
    ta, tb = _tier(a), _tier(b)
    if {ta, tb} == {1, -1}:
        ta = tb = 0  # one has each: I decides
    ka, kb = (ta, a.profile.I), (tb, b.profile.I)
    if ka == kb:
        return [[a, b]]
    return [[a], [b]] if ka > kb else [[b], [a]]


def fight_duel(battle: Battle, duel: list[int], charged_units: set[int], wounds_by_side: list[int]) -> list[int]:
    """Fight an accepted challenge to the end (CORE.CC.CHALLENGE.DUEL, CORE.WOUND.APPLY, CORE.CC.CHALLENGE.OVERKILL).

    The two models fight only each other, round after round, until one
    dies; the duel stops after 10 rounds or when neither has an attack.
    Each round is a to-hit, to-wound and save roll per striker
    (:func:`env.rules.combat.resolve_strike`). Unsaved wounds count to the
    striker's side (added to ``wounds_by_side``); the wounds beyond what the
    slain model had left are overkill, at most +5 per side.

    Args:
        duel: [challenger, acceptor] model uids (a unit's uid: its champion).
        charged_units: units (and their characters) that charged this turn.
        wounds_by_side: the round's unsaved wounds per side, updated in place.

    Returns:
        Overkill per side, [blue, red].
    """
    from battleline.env.rules.strikes import Strike, _attacks, resolve_strike

    a, b = battle.unit(duel[0]), battle.unit(duel[1])
    taken: dict[int, int] = {}
    overkill = [0, 0]
    for duel_round in range(1, MAX_DUEL_ROUNDS + 1):
        attacks = {}
        for m, other in ((a, b), (b, a)):
            st = Strike(m.uid, other.uid, 1, 0, True, m.profile.I)
            attacks[m.uid] = (st, _attacks(battle, m, st, duel_round == 1, m.uid in charged_units, set()))
        if all(n <= 0 for _, n in attacks.values()):
            battle.emit("CORE.CC.CHALLENGE.DUEL", units=duel, round=duel_round, stopped="no attacks")
            break
        dealt_round = {a.uid: 0, b.uid: 0}
        for step in _order(a, b, duel_round):
            results = []
            for m in step:
                if not _standing(m):
                    continue
                st, n = attacks[m.uid]
                unsaved = resolve_strike(battle, st, n, duel_round == 1, charged_units, set())
                res = st.info.get("result")
                wounds = unsaved + 2 * getattr(res, "doubled", 0)
                results.append((m, b if m is a else a, wounds, getattr(res, "slain", 0)))
            for m, other, wounds, slain in results:
                left = _wounds_left(other, taken)
                if slain:
                    wounds = max(wounds, left)  # CORE.SR.KILLING_BLOW slays outright
                dealt, excess = min(wounds, left), max(0, wounds - left)
                if dealt <= 0:
                    continue
                wounds_by_side[m.side] += dealt
                dealt_round[m.uid] += dealt
                if _is_champion(other):
                    taken[other.uid] = taken.get(other.uid, 0) + dealt
                    if taken[other.uid] >= max(1, other.profile.W):
                        slay_champion(battle, other, "CORE.CC.CHALLENGE.DUEL", attacker=m.uid)
                else:
                    apply_wounds(battle, other, dealt, rule="CORE.CC.CHALLENGE.DUEL", attacker=m.uid)
                if not _standing(other):
                    overkill[m.side] += excess
                    if excess:
                        battle.emit("CORE.WOUND.APPLY", unit=other.uid, excess=excess, overkill=True)
            if not (_standing(a) and _standing(b)):
                break
        battle.emit(
            "CORE.CC.CHALLENGE.DUEL", units=duel, round=duel_round, wounds={str(k): v for k, v in dealt_round.items()},
            standing=[_standing(a), _standing(b)],
        )
        if not (_standing(a) and _standing(b)):
            break
    capped = [min(OVERKILL_CAP, o) for o in overkill]
    for side in (0, 1):
        if overkill[side]:
            battle.emit("CORE.CC.CHALLENGE.OVERKILL", side=side, excess=overkill[side], overkill=capped[side])
    return capped


def duellists_out(battle: Battle, duel: list[int] | None) -> tuple[set[int], set[int]]:
    """Who sits out the round's blows: (characters, units whose champion) duelled or refused.

    Duellists fight only each other (CORE.CC.CHALLENGE.DUEL); a refuser does
    not attack (CORE.CC.CHALLENGE.REFUSE; refusers are marked on the units).
    """
    chars: set[int] = set()
    champions: set[int] = set()
    for m in duel or []:
        (champions if _is_champion(battle.unit(m)) else chars).add(m)
    for u in battle.state.units:
        if u.refused:
            (champions if _is_champion(u) else chars).add(u.uid)
    return chars, champions
