"""Removing casualties (CORE.CC.CASUALTIES, CORE.WOUND.APPLY, CORE.SHOOT.CASUALTIES)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from battleline.env.rules import geometry as geo
from battleline.env.rules.state import BattleState, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


def command_models(u: UnitState) -> int:
    """Command models alive (champion, standard, musician)."""
    return int(u.champion) + int(u.standard) + int(u.musician)


def apply_wounds(battle: Battle, u: UnitState, wounds: int, rule: str, **info: object) -> int:
    """Apply ``wounds`` unsaved wounds of one-wound hits to unit ``u``.

    Each hit's wound goes to one model (CORE.WOUND.APPLY): models with W > 1
    accumulate wounds on the last model. A joined character takes its own
    wounds (it is a unit of one model). Casualties come from the last rank
    in the order R&F, musician, standard, champion (CORE.CC.CASUALTIES). A
    unit with no models left is destroyed (its friends may Panic).

    Returns:
        the number of models removed.
    """
    if wounds <= 0 or not u.in_play:
        return 0
    w = max(1, u.profile.W)
    total = u.wounds_taken + wounds
    killed = min(u.models, total // w)
    u.wounds_taken = total % w if killed < u.models else 0
    before = u.models
    old_depth, old_width = u.depth, u.width
    if killed == before and u.joined:  # its characters stand in their slots as the unit stands now, and fight on
        from battleline.env.rules import characters  # alone there (CORE.TYPE.CHARACTER: sync leaves a wiped-out

        characters.sync(battle.state)  # host's characters where they are)
    u.models -= killed
    rnf_left = before - command_models(u) - killed
    for attr in ("musician", "standard", "champion"):
        if rnf_left < 0 and getattr(u, attr):
            setattr(u, attr, False)
            rnf_left += 1
    _close_up(battle, u, old_depth, old_width)
    u.flags["lost_this_phase"] = u.flags.get("lost_this_phase", 0) + killed
    battle.emit("CORE.CC.CASUALTIES", unit=u.uid, wounds=wounds, killed=killed, models=u.models, cause=rule, **info)
    if u.models == 0:
        from battleline.env.rules.psychology import destroy

        destroy(battle, u, rule, wiped_out=True)
    return killed


def slay_champion(battle: Battle, u: UnitState, rule: str, **info: object) -> None:
    """Remove ``u``'s champion at once, out of the casualty order (CORE.CC.CASUALTIES: a duel, Look Out Sir! failed).

    The last rank closes up as in :func:`apply_wounds`; a unit left with no
    model is destroyed.
    """
    if not u.champion or not u.in_play:
        return
    old_depth, old_width = u.depth, u.width
    if u.models == 1 and u.joined:  # as above: the characters stand where the last model's rank stood
        from battleline.env.rules import characters

        characters.sync(battle.state)
    u.champion = False
    u.models -= 1
    _close_up(battle, u, old_depth, old_width)
    u.flags["lost_this_phase"] = u.flags.get("lost_this_phase", 0) + 1
    battle.emit("CORE.CC.CASUALTIES", unit=u.uid, wounds=1, killed=1, models=u.models, cause=rule, champion=True, **info)
    if u.models == 0:
        from battleline.env.rules.psychology import destroy

        destroy(battle, u, rule, wiped_out=True)


SHRANK = "footprint_shrank"
"""The unit flag set when an engaged unit's footprint shrinks (CORE.CC.CONTACT_KEEP): the sorted uids of the
enemies it was engaged with then (list[int]); read and cleared by :func:`env.rules.combat.close_gaps` at the
round's result."""


def flag_shrank(state: BattleState, u: UnitState) -> None:
    """Flag ``u`` :data:`SHRANK` with the enemies it is engaged with now (added to any already flagged); nothing
    if it is engaged with none (CORE.CC.CONTACT_KEEP)."""
    enemies = {e.defender if e.attacker == u.uid else e.attacker for e in state.engagements
               if u.uid in (e.attacker, e.defender)}
    if enemies:
        u.flags[SHRANK] = sorted(enemies | set(u.flags.get(SHRANK, [])))


def _close_up(battle: Battle, u: UnitState, old_depth: float, old_width: float) -> None:
    """After casualties (CORE.CC.CASUALTIES, 000:L968: removed from the last rank so the front line stays
    closed): the front edge stays where it was when the last rank goes; a front rank that shrank slides to
    keep its contacts (:func:`keep_contacts`).

    An engaged unit whose footprint shrank, by a rank or by files, is flagged
    (:data:`SHRANK`): an enemy touching its rear or the back of a flank may no
    longer touch it, and the round's winner closes up at the end of the round
    (CORE.CC.CONTACT_KEEP, :func:`env.rules.combat.close_gaps`).
    """
    if not u.models:
        return
    if u.depth < old_depth:
        shift = (old_depth - u.depth) / 2.0
        fx, fy = geo.Pose(u.x, u.y, u.facing).front()
        u.x += fx * shift
        u.y += fy * shift
    if u.width < old_width - 1e-9:
        keep_contacts(battle, u, old_width)
    if u.depth < old_depth - 1e-9 or u.width < old_width - 1e-9:
        flag_shrank(battle.state, u)


def contacts(battle: Battle, u: UnitState, pose: geo.Pose | None = None) -> int:
    """Models of ``u`` (its front rank, at ``pose`` or where it stands) in base contact with an enemy it is
    engaged with, counted once per enemy unit touched (CORE.CC.CONTACT_KEEP)."""
    from battleline.env.rules import space

    pose = pose or space.pose(u)
    engaged = [battle.unit(e.defender if e.attacker == u.uid else e.attacker) for e in battle.state.engagements
               if u.uid in (e.attacker, e.defender)]
    enemies = [space.footprint(o) for o in engaged if o.alive]
    bases = [geo.footprint(geo.Pose(float(x), float(y), pose.facing), u.base_w, u.base_d)
             for x, y in geo.front_rank_centres(pose, u.files, u.models, u.base_w, u.base_d)]
    return sum(geo.distance(b, e) <= CONTACT_GAP for b in bases for e in enemies)


CONTACT_GAP = 0.01  # inches: bases this close count as touching (CORE.CC.CONTACT_KEEP)


def keep_contacts(battle: Battle, u: UnitState, old_width: float) -> None:
    """CORE.CC.CONTACT_KEEP: the models left in a shrunken front rank slide to keep the most contacts.

    The rank (now ``u.width`` wide, ``old_width`` before) may stand at any
    file slot of its old front: offsets −s, −s + w, …, +s along the unit's
    right, with s = (old_width − width)/2 and w the base width (inches).
    The offset with the most models in contact with engaged enemies wins,
    ties going towards the old centre (the smaller |offset|, then the left).
    A unit engaged with no one keeps its centre. Units that lost contact are
    handled after the round's result (:func:`env.rules.combat.close_gaps`).
    """
    if not any(u.uid in (e.attacker, e.defender) for e in battle.state.engagements):
        return
    slack = (old_width - u.width) / 2.0
    steps = round(2 * slack / u.base_w)
    pose = geo.Pose(u.x, u.y, u.facing)
    rx, ry = pose.right()
    options = []
    for k in range(steps + 1):
        off = -slack + k * u.base_w
        moved = geo.Pose(u.x + rx * off, u.y + ry * off, u.facing)
        options.append((-contacts(battle, u, moved), round(abs(off), 9), off, moved))
    best = min(options, key=lambda o: o[:3])
    u.x, u.y = best[3].x, best[3].y
    battle.emit("CORE.CC.CONTACT_KEEP", unit=u.uid, slide=best[2], contacts=-best[0], old_width=old_width, width=u.width)
