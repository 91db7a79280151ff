"""The ``t9a.characters`` module: characters leaving units, March Tests and Make Way (RULESET.md §6.1).

* T9A.CHAR.LEAVE (⇒ CORE.MOVE.LEAVE): a joined character leaves by an advance
  or a march move out of its unit. It needs a spot ≥ 1" clear of every unit
  (the spots of :func:`env.rules.characters.leave_pose`) that it can reach
  with its move: within M (an advance) or, failing that, within 2·M (a march).
  Never in the phase in which it joined (the ``joined`` flag, as the core).
* T9A.MARCH.TEST (⇒ CORE.MOVE.MARCH_BLOCK): a march with a non-fleeing enemy
  within 8" of the (combined) unit takes a March Test, a Leadership test
  (CORE.TEST.LD). The testers are named with the action: a ``leave`` that
  needs a march names the character alone (its own Ld); a unit's march names
  the unit with its characters (the unit's Ld, CORE.TEST.LD_UNIT).
* T9A.MARCH.CHARACTERS: a characters-only test never covers the unit. A
  character whose test failed does not march: with no spot within M it stays
  in the unit (and has used its move); a unit whose characters tested still
  takes its own test to march, and the characters still in it march only if
  it does.
* T9A.CC.MAKE_WAY: at step 3 of CORE.CC.SEQUENCE a joined character whose
  front-rank slot is not in base contact with the enemy swaps places with a
  front-rank model that is, if its base has the width and depth of the unit's
  R&F (A2); a character that is out of contact and cannot make way does not
  fight (CORE.CC.ATTACKS: only models in base contact fight).

Units: inches and degrees.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from battleline.env.rules import characters, psychology, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.state import Engagement, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MARCH_TEST_RANGE = 8.0  # T9A.MARCH.TEST: an enemy within 8"
TESTED_FLAG = "t9a_march_tested"
"""Host flag: uids of its characters that took a characters-only March Test this turn (T9A.MARCH.CHARACTERS)."""
CONTACT_EPS = 1e-6  # inches of edge overlap that count as base contact


class LeavePlan(NamedTuple):
    """How a joined character would leave (T9A.CHAR.LEAVE).

    Attributes:
        pose: where it ends (inches, degrees), ≥ 1" clear of every unit.
        distance: inches from its slot to ``pose`` (centre to centre, straight).
        march: whether it needs a march (the spot is beyond its M, within 2·M).
    """

    pose: geo.Pose
    distance: float
    march: bool


# --------------------------------------------------------------------- leaving
def may_march_out(battle: Battle, c: UnitState) -> bool:
    """Whether joined character ``c`` may march at all (CORE.MOVE.MARCH: not Aquatic/Hover; no Curse of Storms on its unit)."""
    from battleline.env.rules import magic, movement

    return movement.may_march(c) and not magic.forbids(battle, characters.carrier(battle.state, c), "march")


def leave_plan(battle: Battle, c: UnitState, scenes: dict | None = None) -> LeavePlan | None:
    """The move by which joined character ``c`` leaves, or None if it cannot (T9A.CHAR.LEAVE, CH-2).

    The first free spot (:func:`characters.leave_pose` order) within its M is an
    advance; otherwise the first within 2·M is a march, if it may march. The
    distance is measured straight from its slot; its own unit is no obstacle.
    ``scenes``: as for :func:`characters.leave_pose`.
    """
    from battleline.env.rules import movement

    m = movement.normal_move_allowance(c)
    for reach, march in ((m, False), (2.0 * m, True)):
        if march and not may_march_out(battle, c):
            return None
        pose = characters.leave_pose(battle, c, scenes, reach=reach)
        if pose is not None:
            return LeavePlan(pose, math.hypot(pose.x - c.x, pose.y - c.y), march)
    return None


def can_leave(battle: Battle, c: UnitState, scenes: dict | None = None) -> bool:
    """Whether joined character ``c`` has a leave move (T9A.CHAR.LEAVE); the caller checked the core conditions."""
    return leave_plan(battle, c, scenes) is not None


def leave(battle: Battle, c: UnitState) -> None:
    """Make joined character ``c``'s leave move (T9A.CHAR.LEAVE), with its March Test if it marches near an enemy.

    A march with a non-fleeing enemy within 8" of the unit first takes a March
    Test named for ``c`` alone (T9A.MARCH.TEST, its own Ld). On a failure it
    does not march (T9A.MARCH.CHARACTERS): it stays in the unit, having used
    its move. Emits T9A.CHAR.LEAVE with ``left`` True/False.
    """
    from battleline.env.rules import movement

    s = battle.state
    h = characters.carrier(s, c)
    plan = leave_plan(battle, c)
    if plan is None:  # pragma: no cover - legal_moves checked it
        return
    if plan.march and movement._enemy_within(battle, h, MARCH_TEST_RANGE):
        passed = psychology.test_ld(battle, c, c.profile.Ld, "T9A.MARCH.TEST", testers=[c.uid], host=h.uid)
        h.flags[TESTED_FLAG] = [*h.flags.get(TESTED_FLAG, []), c.uid]
        if not passed:
            c.flags["moved"] = True
            battle.emit("T9A.MARCH.CHARACTERS", unit=c.uid, host=h.uid, marched=False, stays=True)
            battle.emit("T9A.CHAR.LEAVE", unit=c.uid, host=h.uid, left=False, march=True, distance=plan.distance)
            return
    characters.detach(s, c)
    c.x, c.y, c.facing = plan.pose.x, plan.pose.y, plan.pose.facing
    c.flags["moved"] = True
    if plan.march:
        c.flags["marched"] = True
    battle.emit("T9A.CHAR.LEAVE", unit=c.uid, host=h.uid, left=True, march=plan.march, distance=plan.distance,
                x=c.x, y=c.y, facing=c.facing)


# --------------------------------------------------------------------- the unit's March Test
def march_test(battle: Battle, u: UnitState) -> bool:
    """The March Test of unit ``u`` with its characters (T9A.MARCH.TEST); the caller found an enemy within 8".

    Ld: the unit's (CORE.TEST.LD_UNIT, its characters' included). A test its
    characters took alone this turn does not cover it (T9A.MARCH.CHARACTERS,
    emitted with those characters and those still in the unit). Returns True
    on a pass.
    """
    tested = u.flags.get(TESTED_FLAG, [])
    if tested:
        stayed = [i for i in tested if i in u.joined]
        battle.emit("T9A.MARCH.CHARACTERS", unit=u.uid, tested=list(tested), stayed=stayed, covered=False)
    return psychology.test_ld(battle, u, characters.unit_ld(battle, u), "T9A.MARCH.TEST",
                              testers=[u.uid, *(c.uid for c in characters.members(battle.state, u))])


# --------------------------------------------------------------------- Make Way
def contact_span(battle: Battle, host: UnitState, e: Engagement) -> tuple[float, float] | None:
    """The part of ``host``'s front edge in contact across ``e``: (lo, hi) inches along it from its centre
    (positive: to the host's right), or None if ``e`` touches no part of it (the host is a flank/rear defender)."""
    from battleline.env.rules.charge_routes import edge_frame

    if e.attacker == host.uid:
        d = battle.unit(e.defender)
        mx, my, ax, ay, _, _, length = edge_frame(d, e.facing)
        ends = ((mx - ax * length / 2, my - ay * length / 2), (mx + ax * length / 2, my + ay * length / 2))
    elif e.defender == host.uid and e.facing == "front":
        a = battle.unit(e.attacker)
        ends = geo.front_edge(space.pose(a), a.width, a.depth)
    else:
        return None
    hp = space.pose(host)
    xs = [geo.to_local(hp, x, y)[0] for x, y in ends]
    half = host.width / 2
    lo, hi = max(min(xs), -half), min(max(xs), half)
    return (lo, hi) if hi >= lo - CONTACT_EPS else None


def _touches(lo: float, hi: float, span: tuple[float, float]) -> bool:
    """Whether the base from ``lo`` to ``hi`` (inches along the front edge) is in contact along ``span``; a base
    touching it at a corner only is in contact (as :func:`env.rules.combat.fighters` counts it)."""
    a, b = span
    return min(hi, b) - max(lo, a) >= -CONTACT_EPS


def _slot_span(host: UnitState, c: UnitState) -> tuple[float, float]:
    """Where character ``c``'s base lies along ``host``'s front edge (inches from its centre, + right)."""
    lx, _ = geo.to_local(space.pose(host), c.x, c.y)
    return lx - c.base_w / 2, lx + c.base_w / 2


def matching_base(host: UnitState, c: UnitState) -> bool:
    """A2: the character's base has the width and depth of the unit's R&F models."""
    return abs(c.base_w - host.base_w) < 1e-6 and abs(c.base_d - host.base_d) < 1e-6


def _free_files(host: UnitState, span: tuple[float, float], held: list[tuple[float, float]]) -> int:
    """Front-rank R&F models of ``host`` in contact along ``span``: files touching it that no character holds."""
    files = min(host.files, host.models)
    free = 0
    for f in range(files):
        lo = f * host.base_w - host.width / 2
        hi = lo + host.base_w
        mid = (lo + hi) / 2
        if _touches(lo, hi, span) and not any(a - CONTACT_EPS <= mid <= b + CONTACT_EPS for a, b in held):
            free += 1
    return free


def make_way(battle: Battle, group: list[Engagement], fighters: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """T9A.CC.MAKE_WAY over the core's front-rank characters ``fighters`` (character, enemy, host) of ``group``.

    A character whose slot is in contact with an enemy of its host's front
    fights that enemy. One that is not swaps with a front-rank R&F model in
    contact (each model once) when its base matches (A2), and fights the enemy
    that model touched; emits T9A.CC.MAKE_WAY. Otherwise it does not fight.

    Returns:
        the (character, enemy, host) triples that fight, in the order given.
    """
    s = battle.state
    out: list[tuple[int, int, int]] = []
    by_host: dict[int, list[tuple[int, int, int]]] = {}
    for t in fighters:
        by_host.setdefault(t[2], []).append(t)
    for hid, triples in by_host.items():
        h = s.units[hid]
        spans = [(e, sp) for e in group if (sp := contact_span(battle, h, e)) is not None]
        chars = {cid: _slot_span(h, s.units[cid]) for cid, _, _ in triples}
        contact: dict[int, int] = {}
        for cid, span in chars.items():
            e = next((e for e, sp in spans if _touches(*span, sp)), None)
            if e is not None:
                contact[cid] = e.defender if e.attacker == hid else e.attacker
        held = [chars[cid] for cid in contact]
        used = {id(e): 0 for e, _ in spans}
        for cid, _, _ in triples:
            if cid in contact:
                out.append((cid, contact[cid], hid))
                continue
            c = s.units[cid]
            swap = next((e for e, sp in spans if _free_files(h, sp, held) > used[id(e)]), None)
            if swap is None or not matching_base(h, c):
                battle.emit("T9A.CC.MAKE_WAY", unit=cid, host=hid, swapped=False, matching_base=matching_base(h, c),
                            fights=False)
                continue
            used[id(swap)] += 1
            foe = swap.defender if swap.attacker == hid else swap.attacker
            battle.emit("T9A.CC.MAKE_WAY", unit=cid, host=hid, swapped=True, matching_base=True, enemy=foe, fights=True)
            out.append((cid, foe, hid))
    order = {t[0]: i for i, t in enumerate(fighters)}
    return sorted(out, key=lambda t: order[t[0]])
