"""Assaults on war machines: the chargers' assault teams against the crew (CORE.WM.ASSAULT_TEAM,
CORE.WM.ASSAULT_OUTCOME; CORE.TYPE.WAR_MACHINE).

A combat group that holds a war machine (:func:`in_combat`) fights each
assault on it here (:func:`fight_assaults`) before the rest of the group
fights normally (:mod:`env.rules.combat`): each charger fights the crew with
its assault team only (:func:`team_size`), the crew with its own T, and the
result makes a losing team flee or a losing crew test to break.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from battleline.env.rules import psychology, special_rules
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.war_machine_profiles import CREW_PROFILE, is_machine

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


# --------------------------------------------------------------------- close combat
TEAM_BY_TYPE = {"infantry": 5, "cavalry": 3}
TEAM_40MM = 2
BASE_40MM = 40 / 25.4
TEAM_MIN_US = 5


def team_size(c: UnitState) -> tuple[int, str]:
    """CORE.WM.ASSAULT_TEAM: (models in the assault team, why)."""
    if c.models <= 1:
        return min(1, c.models), "single model"
    if abs(c.base_w - BASE_40MM) < 1e-6 and abs(c.base_d - BASE_40MM) < 1e-6:
        return min(TEAM_40MM, c.models), "40 mm bases"
    if c.troop_type in TEAM_BY_TYPE and not c.has("skirmishers"):
        return min(TEAM_BY_TYPE[c.troop_type], c.models), c.troop_type
    per_model = max(1, c.unit_strength // max(1, c.models))
    return min(c.models, math.ceil(TEAM_MIN_US / per_model)), f"US {per_model} per model"


@contextlib.contextmanager
def _crew_toughness(m: UnitState) -> Iterator[None]:
    """In close combat the crew's own T counts (CORE.WM.ASSAULT_TEAM: the team fights the crew)."""
    machine_t = m.profile.T
    m.profile.T = int(m.marks.get("crew_T", CREW_PROFILE["T"]))
    try:
        yield
    finally:
        m.profile.T = machine_t


def in_combat(battle: Battle, group: list[Engagement]) -> bool:
    """Whether combat ``group`` involves a war machine."""
    return any(is_machine(battle.unit(i)) for e in group for i in (e.attacker, e.defender))


def fight_assaults(battle: Battle, group: list[Engagement]) -> list[Engagement]:
    """Fight one round of every assault on a war machine in ``group``; return the engagements left to fight normally.

    CORE.WM.ASSAULT_TEAM, CORE.WM.ASSAULT_OUTCOME. Each charger fights the crew
    with its assault team only. In R1 the teams strike first and the crew
    strikes back with its survivors; later, higher I first (equal I:
    simultaneously). Results: the teams count their wounds, +1 for the charge
    and +1 for a standard; the crew counts its wounds. A losing team makes its
    whole unit flee (the Flee! reaction); a losing crew takes a break test and
    its machine is removed if it fails (no pursuit); a draw goes on.
    """
    uids = sorted({i for e in group for i in (e.attacker, e.defender)})
    for mid in uids:
        m = battle.unit(mid)
        if not is_machine(m) or not m.alive:
            continue
        engs = [e for e in battle.state.engagements if mid in (e.attacker, e.defender)]
        if engs:
            _assault_round(battle, m, engs)
    left = battle.state.engagements
    return [e for e in group if e in left and not is_machine(battle.unit(e.attacker)) and not is_machine(battle.unit(e.defender))]


def _assault_round(battle: Battle, m: UnitState, engs: list[Engagement]) -> None:
    from battleline.env.rules import combat

    chargers = [battle.unit(e.attacker if e.defender == m.uid else e.defender) for e in engs]
    chargers = [c for c in chargers if c.alive]
    if not chargers:
        return
    r1 = any(combat.charged_this_turn(battle, e) for e in engs)  # CORE.CC.ROUNDS: not again in the other turn
    charged = {e.attacker for e in engs if combat.charged_this_turn(battle, e)}
    for e in engs:
        if e.defender == m.uid and e.facing != "front":  # CORE.TYPE.WAR_MACHINE: always charged in its front
            battle.emit("CORE.TYPE.WAR_MACHINE", unit=m.uid, charger=e.attacker, contact=e.facing, counts_as="front")
            e.facing = "front"
    teams: dict[int, int] = {}
    for c in chargers:
        size, why = team_size(c)
        teams[c.uid] = size
        battle.emit("CORE.WM.ASSAULT_TEAM", unit=c.uid, machine=m.uid, team=size, basis=why,
                    standard=c.standard, champion=c.champion)
    battle.emit("CORE.CC.SEQUENCE", units=sorted([m.uid] + [c.uid for c in chargers]), round_one=r1,
                charging_side=chargers[0].side if r1 else None, assault=True)
    for u in [m, *chargers]:
        u.flags["fought"] = True
    team_strikes = [combat.Strike(c.uid, m.uid, teams[c.uid], 0, True, c.profile.I) for c in chargers]
    crew_strike = combat.Strike(m.uid, chargers[0].uid, m.models, 0, True, m.profile.I)
    wounds = {"team": 0, "crew": 0}
    used: set[int] = set()

    def roll(st: combat.Strike) -> None:
        u = battle.unit(st.unit)
        if not u.in_play or not battle.unit(st.target).alive or u.fleeing:
            st.info["result"] = None
            return
        if st.unit == m.uid:
            st.fighters = m.models  # the crew alive now strikes
        attacks = combat._attacks(battle, u, st, r1, u.uid in charged, used)
        combat.resolve_strike(battle, st, attacks, r1, charged, set())

    def land(st: combat.Strike) -> None:
        res = st.info.get("result")
        t = battle.unit(st.target)
        if res is None or not res.any or not t.alive:
            return
        inflicted, _ = special_rules.apply_result(battle, t, res, "CORE.CC.CASUALTIES", attacker=st.unit)
        wounds["crew" if st.unit == m.uid else "team"] += inflicted

    with _crew_toughness(m):
        if r1 or m.profile.I < min(c.profile.I for c in chargers):
            order = [team_strikes, [crew_strike]]
        elif m.profile.I > max(c.profile.I for c in chargers):
            order = [[crew_strike], team_strikes]
        else:
            order = [team_strikes + [crew_strike]]
        for step in order:
            for st in step:
                roll(st)
            for st in step:
                land(st)
    for e in engs:
        e.rounds += 1
    _assault_outcome(battle, m, chargers, wounds, r1 and bool(charged))


def _assault_outcome(battle: Battle, m: UnitState, chargers: list[UnitState], wounds: dict[str, int], charge: bool) -> None:
    from battleline.env.rules import combat

    team_parts = {"wounds": wounds["team"]}
    if charge:
        team_parts["charge"] = 1
    if any(c.standard and c.alive for c in chargers):
        team_parts["standard"] = 1
    crew_parts = {"wounds": wounds["crew"]}
    team, crew = sum(team_parts.values()), sum(crew_parts.values())
    live = [c for c in chargers if c.alive]
    info = {"machine": m.uid, "chargers": [c.uid for c in chargers], "team": team_parts, "crew": crew_parts}
    if not m.alive or not live:
        battle.emit("CORE.WM.ASSAULT_OUTCOME", outright=True, winner="team" if live else "crew", **info)
        return
    if team == crew:
        battle.emit("CORE.WM.ASSAULT_OUTCOME", winner=None, result="draw", **info)
        return
    if team > crew:
        diff = team - crew
        held = combat.break_test(battle, m, diff, live)
        battle.emit("CORE.WM.ASSAULT_OUTCOME", winner="team", difference=diff, crew_broke=not held, **info)
        if not held:
            psychology.destroy(battle, m, "CORE.WM.ASSAULT_OUTCOME", crew_broke=True, pursuit=False)
        return
    battle.emit("CORE.WM.ASSAULT_OUTCOME", winner="crew", difference=crew - team, **info)
    for c in live:
        if c.alive and not c.fleeing:
            psychology.flee(battle, c, (m.x, m.y), "CORE.WM.ASSAULT_OUTCOME", reaction="flee", machine=m.uid)
