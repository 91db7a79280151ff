"""War machine fire control for scripted agents: the best target, fire mode and aim (CORE.WM.*).

:func:`best_shot` returns the ``shoot`` action (with its option, see
:mod:`env.rules.war_machines`) worth most for one machine, or None when it
has no legal target. Worth = Σ over the units hit of (expected models
removed × points per model), enemies counted positive and friends negative.
The expectation runs over the machine's own dice without touching the battle:

* solid shot: every artillery result N and bounce B (a MISFIRE bounce buries
  the ball; a MISFIRE first roll hits nothing), for aims every 1" from 10"
  short of the target's near edge to its near edge;
* grapeshot: 6 hits on average (a MISFIRE face is 1 in 6);
* stone thrower: the template at the aim point (a direct HIT) or scattered N"
  in 8 directions (ARROW; indirect HIT: N − BS); aims at the target's centre
  and its front rank;
* bolt thrower: the to-hit chance times the first two ranks at S6 and S5;
* flame cannon: the teardrop slid by each artillery result.

Distances in inches.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from battleline.agents.estimates import p_d6_at_least, p_save, p_shot_hits
from battleline.env.rules import geometry as geo
from battleline.env.rules import space, tables, templates, war_machines
from battleline.env.rules.actions import Action
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ARTILLERY = (2, 4, 6, 8, 10)  # CORE.DICE.ARTILLERY: the five number faces (MISFIRE is the sixth)
P_FACE = 1 / 6
DIRECTIONS = tuple(range(0, 360, 45))
CANNON_AIMS = 10  # solid-shot aims tried, 1" apart, ending at the target's near edge


def model_value(u: UnitState) -> float:
    """Points per model of ``u``."""
    return u.points / max(1, u.start_models)


def p_removed(u: UnitState, strength: int, wounds: float = 1.0, flaming: bool = False) -> float:
    """Chance that one hit at ``strength`` (``wounds`` wounds each) removes a model of ``u`` (a crew model of a machine)."""
    p = p_d6_at_least(tables.to_wound(strength, u.profile.T))
    if not flaming:
        p *= 1 - p_save(tables.armour_save_needed(u.armour_save, strength))
    if war_machines.is_machine(u):
        return p * min(wounds, u.models)
    return p * min(1.0, wounds / max(1, u.profile.W))


def _worth(battle: Battle, shooter: UnitState, hits: dict[int, float], strength: int, wounds: float,
           flaming: bool = False) -> float:
    total = 0.0
    for uid, n in hits.items():
        t = battle.unit(uid)
        value = n * p_removed(t, strength, wounds, flaming) * model_value(t)
        total += value if t.side != shooter.side else -value
    return total


def _count(bases: list[templates.Base]) -> dict[int, float]:
    out: dict[int, float] = {}
    for b in bases:
        out[b.unit] = out.get(b.unit, 0.0) + 1.0
    return out


def _bases(battle: Battle, u: UnitState) -> list[templates.Base]:
    return [b for o in space.alive_units(battle.state) if o.uid != u.uid for b in templates.model_bases(o)]


def cannon_value(battle: Battle, u: UnitState, t: UnitState, aim: float) -> float:
    """Expected worth of a solid shot aimed ``aim``" at ``t`` (CORE.WM.CANNON.SHOT)."""
    m = war_machines.machine(u)
    mz, direction = war_machines._aim_frame(u, t)
    bases = _bases(battle, u)
    wounds = 2.0 if m.wounds == "d3" else 3.5
    total = 0.0
    for n in ARTILLERY:
        p1 = templates.along(mz, direction, aim + n)
        under = templates.base_at(p1, bases)
        total += P_FACE * P_FACE * _worth(battle, u, _count([] if under is None else [under]), m.strength, wounds)
        for b in ARTILLERY:
            hit = templates.on_segment(p1, templates.along(p1, direction, b), bases)
            total += P_FACE * P_FACE * _worth(battle, u, _count(hit), m.strength, wounds)
    return total


def stone_value(battle: Battle, u: UnitState, t: UnitState, aim: float, indirect: bool) -> float:
    """Expected worth of a stone thrower shot aimed ``aim``" at ``t`` (CORE.WM.STONE.*)."""
    m = war_machines.machine(u)
    mz, direction = war_machines._aim_frame(u, t)
    point = templates.along(mz, direction, aim)
    bases = _bases(battle, u)

    def at(centre: tuple[float, float]) -> float:
        tpl = templates.small_template(centre)
        hole = templates.base_at(centre, bases)
        wholly, partly = templates.under(tpl, [b for b in bases if b is not hole])
        hits = _count(wholly)
        for uid, n in _count(partly).items():
            hits[uid] = hits.get(uid, 0.0) + 0.5 * n
        value = _worth(battle, u, hits, m.strength, 1.0)
        if hole is not None:
            value += _worth(battle, u, {hole.unit: 1.0}, m.centre_strength or m.strength, 3.5)
        return value

    p_hit, p_arrow = 1 / 3, 2 / 3
    total = 0.0
    for n in ARTILLERY:
        for d in DIRECTIONS:
            total += P_FACE * p_arrow / len(DIRECTIONS) * at(templates.along(point, d, n))
            shift = max(0, n - u.profile.BS) if indirect else 0
            total += P_FACE * p_hit / len(DIRECTIONS) * at(templates.along(point, d, shift))
    return total


def bolt_value(battle: Battle, u: UnitState, t: UnitState) -> float:
    """Expected worth of a bolt (CORE.WM.BOLT): the hit chance times the first two ranks."""
    from battleline.env.rules import shooting

    mod, _ = shooting.to_hit_modifier(battle, u, t, False, False)
    p = p_shot_hits(tables.shooting_to_hit(u.profile.BS, mod))
    first = p_removed(t, 6, 2.0)
    second = first * p_removed(t, 5, 2.0) if t.ranks > 1 else 0.0
    return p * (first + second) * model_value(t)


def flame_value(battle: Battle, u: UnitState, t: UnitState) -> float:
    """Expected worth of a flame cannon shot (CORE.WM.FLAME)."""
    m = war_machines.machine(u)
    mz, direction = war_machines._aim_frame(u, t)
    bases = _bases(battle, u)
    total = 0.0
    for n in ARTILLERY:
        tpl = templates.teardrop(templates.along(mz, direction, n), direction)
        wholly, partly = templates.under(tpl, bases)
        touched = wholly + partly
        if any(b.unit == t.uid for b in touched):
            total += P_FACE * _worth(battle, u, _count(touched), m.strength, 1.0, flaming=True)
    return total


def options(battle: Battle, u: UnitState, t: UnitState) -> list[str]:
    """The fire modes and aims :func:`best_shot` weighs for ``u`` at ``t``."""
    m = war_machines.machine(u)
    modes = war_machines.modes(battle, u, t)
    out: list[str] = []
    if "grapeshot" in modes:
        out.append("grapeshot")
    if "shot" in modes:
        edge = war_machines.entry_distance(u, t)
        for k in range(CANNON_AIMS + 1):
            d = edge - k
            if 0 < d <= m.max_range:
                out.append(f"shot:{d:.2f}")
    for mode in ("direct", "indirect"):
        if mode in modes:
            mz, _ = war_machines._aim_frame(u, t)
            for d in (math.dist(mz, (t.x, t.y)), war_machines.entry_distance(u, t) + t.base_d / 2):
                d = min(m.max_range, max(m.min_range, d))
                out.append(f"{mode}:{d:.2f}")
            break  # indirect only when there is no direct line
    if "fire" in modes:
        out.append("fire")
    return out


def option_value(battle: Battle, u: UnitState, t: UnitState, option: str) -> float:
    """Expected worth (points) of firing ``u`` at ``t`` with ``option``."""
    mode, d = war_machines.parse_option(option)
    if mode == "shot":
        return cannon_value(battle, u, t, float(d))  # type: ignore[arg-type]
    if mode == "grapeshot":
        mean_hits = sum(ARTILLERY) * P_FACE  # 5: a MISFIRE face gives none
        return mean_hits * p_removed(t, war_machines.GRAPESHOT_STRENGTH) * model_value(t)
    if mode in ("direct", "indirect"):
        return stone_value(battle, u, t, float(d), indirect=mode == "indirect")  # type: ignore[arg-type]
    if war_machines.machine(u).kind == "bolt_thrower":
        return bolt_value(battle, u, t)
    return flame_value(battle, u, t)


def best_shot(battle: Battle, u: UnitState, legal: list[Action] | None = None) -> Action | None:
    """The ``shoot`` action with an option worth most for war machine ``u``, or None (no legal target or no gain)."""
    legal = battle.legal_actions() if legal is None else legal
    best: tuple[float, Action] | None = None
    for a in legal:
        if a.kind != "shoot" or a.unit != u.uid or a.option is not None:
            continue
        t = battle.unit(a.target)  # type: ignore[arg-type]
        for opt in options(battle, u, t):
            value = option_value(battle, u, t, opt)
            if best is None or value > best[0] + 1e-9:
                best = (value, Action("shoot", u.uid, t.uid, None if opt == "fire" else opt))
    if best is None or best[0] <= 0:
        return None
    return best[1]


def best_target_and_aim(battle: Battle, u: UnitState) -> tuple[int, str | None] | None:
    """(target uid, option) of :func:`best_shot`, or None."""
    a = best_shot(battle, u)
    return None if a is None else (a.target, a.option)  # type: ignore[return-value]


def facing_error(u: UnitState, t: UnitState) -> float:
    """Degrees the machine must pivot to face ``t`` (free in the Shooting phase, CORE.WM.MOVE)."""
    want = geo.facing_towards((u.x, u.y), (t.x, t.y))
    return abs((want - u.facing + 180.0) % 360.0 - 180.0)
