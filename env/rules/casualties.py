"""Removing casualties (CORE.CC.CASUALTIES, CORE.WOUND.APPLY, CORE.SHOOT.CASUALTIES)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from env.rules import geometry as geo
from env.rules.state import UnitState

if TYPE_CHECKING:
    from env.rules.battle import Battle


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
    old_depth = u.depth
    u.models -= killed
    rnf_left = before - command_models(u) - killed
    for attr in ("musician", "standard", "champion"):
        if rnf_left < 0 and getattr(u, attr):
            setattr(u, attr, False)
            rnf_left += 1
    if u.models and u.depth < old_depth:
        # The last rank went: the front edge stays where it was.
        shift = (old_depth - u.depth) / 2.0
        fx, fy = geo.Pose(u.x, u.y, u.facing).front()
        u.x += fx * shift
        u.y += fy * shift
    u.flags["lost_this_phase"] = u.flags.get("lost_this_phase", 0) + killed
    battle.emit("CORE.CC.CASUALTIES", unit=u.uid, wounds=wounds, killed=killed, models=u.models, cause=rule, **info)
    if u.models == 0:
        from env.rules.psychology import destroy

        destroy(battle, u, rule, wiped_out=True)
    return killed


def slay_champion(battle: Battle, u: UnitState, rule: str, **info: object) -> None:
    """Remove ``u``'s champion at once, out of the casualty order (CORE.CC.CASUALTIES: a duel, Look Out Sir! failed).

    The last rank closes up as in :func:`apply_wounds`; a unit left with no
    model is destroyed.
    """
    if not u.champion or not u.in_play:
        return
    old_depth = u.depth
    u.champion = False
    u.models -= 1
    if u.models and u.depth < old_depth:
        shift = (old_depth - u.depth) / 2.0
        fx, fy = geo.Pose(u.x, u.y, u.facing).front()
        u.x += fx * shift
        u.y += fy * shift
    u.flags["lost_this_phase"] = u.flags.get("lost_this_phase", 0) + 1
    battle.emit("CORE.CC.CASUALTIES", unit=u.uid, wounds=1, killed=1, models=u.models, cause=rule, champion=True, **info)
    if u.models == 0:
        from env.rules.psychology import destroy

        destroy(battle, u, rule, wiped_out=True)
