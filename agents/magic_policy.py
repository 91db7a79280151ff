"""A small magic policy for the scripted agents: which spell to cast, and when to dispel.

Call :func:`choose_cast` when ``battle.pending.kind == "cast"`` and
:func:`choose_dispel` when it is ``"dispel"``; both return an element of
``legal`` (``battle.legal_actions()``) and never change the battle.

* **cast** — every legal ``cast`` action is scored as P(cast) × the spell's
  value in points − :data:`DIE_COST` per power die; the best positive one is
  cast, otherwise the phase ends. Bound items (no dice) are always worth
  casting when they have any value.
* **dispel** — the value of the pending spell to its caster decides: a
  Dispel Scroll answers a spell worth at least :data:`SCROLL_VALUE`; otherwise
  the fewest dispel dice with P(dispel) ≥ :data:`DISPEL_CHANCE` are rolled for
  a spell worth at least :data:`DISPEL_VALUE`, or all dice if none reach it.

Values (points) are rough expectations: damage spells are expected wounds ×
points per wound of the target; lasting effects a fraction of the target's
points, more when it is engaged or near the enemy.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from battleline.env.rules import psychology, space, tables
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.spells import SPELLS, Spell
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

DIE_COST = 4.0
"""Points a power die is worth keeping for a later spell."""
DISPEL_CHANCE = 0.6
"""Least chance of a dispel to settle for fewer dice."""
DISPEL_VALUE = 15.0
"""Least value (points) of a spell worth dispel dice."""
SCROLL_VALUE = 60.0
"""Least value (points) of a spell worth a Dispel Scroll."""
LASTING_SHARE = 0.08
"""Share of the target's points a lasting effect is worth (doubled when the target is engaged or near enemies)."""
NEAR = 12.0
"""Inches within which a unit counts as near the enemy."""


@cache
def _outcomes(n: int) -> dict[tuple[int, int, int], float]:
    """Distribution of (sum, min(sixes, 2), min(ones, 2)) for n D6."""
    dist = {(0, 0, 0): 1.0}
    for _ in range(n):
        nxt: dict[tuple[int, int, int], float] = {}
        for (total, sixes, ones), p in dist.items():
            for face in range(1, 7):
                key = (total + face, min(2, sixes + (face == 6)), min(2, ones + (face == 1)))
                nxt[key] = nxt.get(key, 0.0) + p / 6.0
        dist = nxt
    return dist


@cache
def cast_chance(n: int, cv: int) -> float:
    """P(a spell of casting value ``cv`` is cast on n dice): two 6s always, two 1s never (CORE.MAGIC.CAST)."""
    return sum(p for (t, six, one), p in _outcomes(n).items() if six >= 2 or (one < 2 and t >= cv))


@cache
def dispel_chance(n: int, total: int) -> float:
    """P(n dispel dice dispel a casting total): two 1s never, two 6s always, else sum ≥ total (CORE.MAGIC.DISPEL)."""
    return sum(p for (t, six, one), p in _outcomes(n).items() if one < 2 and (six >= 2 or t >= total))


def _per_wound(u: UnitState) -> float:
    return u.points / max(1, u.start_models * max(1, u.profile.W))


def _hit_value(t: UnitState, hits: float, strength: int | None, save: bool, flaming: bool) -> float:
    if strength is None:  # Metal: S = 7 − save, no save
        if t.armour_save >= tables.IMPOSSIBLE:
            return 0.0
        strength, save = 7 - t.armour_save, False
    p_wound = (7 - tables.to_wound(strength, t.profile.T)) / 6.0
    needed = tables.armour_save_needed(t.armour_save, strength) if save and not flaming else tables.IMPOSSIBLE
    p_unsaved = 1.0 if needed > 6 else (needed - 1) / 6.0
    return hits * p_wound * p_unsaved * _per_wound(t)


def spell_value(battle: Battle, caster: UnitState, sp: Spell, t: UnitState) -> float:
    """Rough value in points of ``sp`` on ``t`` to ``caster``'s side."""
    p = sp.params
    if sp.effect == "hits":
        hits = 3.5 * p["dice"] + p.get("fixed", 0)
        return _hit_value(t, hits, p["S"], p["save"], sp.lore == "fire")
    if sp.effect == "single_hit":
        wounds = min(2.0 if p["wounds"] == "D3" else 3.5, max(1, t.profile.W - t.wounds_taken))
        return _hit_value(t, 1.0, p["S"], p["S"] is not None, False) * wounds
    if sp.effect == "spirit_leech":
        return 0.4 * _per_wound(t) * max(0, caster.profile.Ld - t.profile.Ld + 2)
    if sp.effect == "dwellers":
        fail = 1.0 - min(5, max(1, t.profile.S)) / 6.0
        return t.models * fail * _per_wound(t) * max(1, t.profile.W)
    if sp.effect == "lasting":
        if sp.params["duration"] == "next_turn" and t.side != caster.side:  # Beast Cowers: only near our units
            return LASTING_SHARE * t.points if _near_enemy(battle, t) else 0.0
        busy = psychology.engaged(battle, t) or _near_enemy(battle, t)
        return LASTING_SHARE * t.points * (2.0 if busy else 0.5)
    return 0.0  # Steed of Shadows, Unseen Lurker: moves the policy does not plan


def _near_enemy(battle: Battle, u: UnitState) -> bool:
    return any(
        space.near(u, e, NEAR) and space.unit_distance(u, e) <= NEAR for e in space.alive_units(battle.state, 1 - u.side)
    )


def choose_cast(battle: Battle, legal: list[Action]) -> Action:
    """The best ``cast`` of ``legal`` by P(cast) × value − dice, or ``end_phase`` when none is worth it."""
    best, best_score = END_PHASE, 0.0
    for a in legal:
        if a.kind != "cast":
            continue
        sid, how = a.option.rsplit(":", 1)
        sp, caster, t = SPELLS[sid], battle.unit(a.unit), battle.unit(a.target)
        value = spell_value(battle, caster, sp, t)
        if how == "bound":
            score = value
        else:
            n = int(how)
            cv = sp.cv - (1 if sp.lore == "beasts" and t.side != caster.side and t.troop_type in ("cavalry", "monster", "chariot") else 0)
            score = cast_chance(n, cv) * value - DIE_COST * n
        if score > best_score:
            best, best_score = a, score
    return best


def choose_dispel(battle: Battle, legal: list[Action]) -> Action:
    """A scroll, dispel dice or ``end_phase`` against the pending spell (see the module docstring)."""
    pend = battle.state.queue["magic"]["pending"]
    sp, caster, t = SPELLS[pend["spell"]], battle.unit(pend["caster"]), battle.unit(pend["target"])
    value = spell_value(battle, caster, sp, t)
    scroll = Action("dispel", option="scroll")
    dice = sorted(int(a.option) for a in legal if a.kind == "dispel" and a.option != "scroll")
    if scroll in legal and value >= SCROLL_VALUE and (not dice or dispel_chance(dice[-1], pend["total"]) < DISPEL_CHANCE):
        return scroll
    if value < DISPEL_VALUE or not dice:
        return scroll if scroll in legal and value >= SCROLL_VALUE else END_PHASE
    for n in dice:
        if dispel_chance(n, pend["total"]) >= DISPEL_CHANCE:
            return Action("dispel", option=str(n))
    return Action("dispel", option=str(dice[-1]))
