"""Breath weapons used in the Shooting phase (CORE.SR.BREATH_WEAPON, shooting form).

A monster with ``breath_weapon`` may, instead of shooting, put the teardrop
template (CORE.WM.TEMPLATES) with its narrow end at its head and breathe:

* models wholly under the template are hit automatically;
* models partly under it (a base that overlaps it) are hit on a 4+;
* the hits are at the monster's own S (clamped 1..10), with its own rules
  (Flaming only if its entry has ``flaming``), and are resolved like a
  template's shooting hits (CORE.SHOOT.ALLOCATE onwards, Look Out Sir! on a
  champion's or character's slot); every model under it is hit, friend or foe.

The use limit (twice per game, once per player turn) is shared with the
combat form (:func:`env.rules.special_rules.breath_ready`).

DEFAULT choices, where the rules are silent: the head is the middle of the
monster's front edge; the template points from the head at the centre of
the chosen target, which must be a legal shooting target
(CORE.SHOOT.ELIGIBLE, CORE.SHOOT.TARGET: not engaged, partly in the vision
arc, in line of sight) with at least one model under the template; an
engaged monster does not breathe in the Shooting phase (special_rules.md
§1); breathing counts as the monster's shooting for the turn.

Distances in inches, directions in degrees counter-clockwise from +x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapely.geometry import Polygon

from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, space, special_rules, tables, templates, war_machine_profiles, war_machine_shots
from battleline.env.rules.actions import Action
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

RULE = "CORE.SR.BREATH_WEAPON"
OPTION = "breath"  # the ``shoot`` action's option that makes it a breath attack
PARTIAL = 4  # CORE.SR.BREATH_WEAPON: a model partly under is hit on a 4+


def aim(u: UnitState, t: UnitState) -> tuple[tuple[float, float], float]:
    """(tip, direction): the monster's head (front-edge middle) and the bearing from it to ``t``'s centre."""
    head = war_machine_profiles.muzzle(u)
    if head == (t.x, t.y):
        return head, u.facing
    return head, geo.facing_towards(head, (t.x, t.y))


def template(u: UnitState, t: UnitState) -> Polygon:
    """The teardrop ``u`` breathes at ``t`` (see :func:`aim`)."""
    tip, direction = aim(u, t)
    return templates.teardrop(tip, direction)


def reaches(u: UnitState, t: UnitState) -> bool:
    """Whether at least one model of ``t`` is (wholly or partly) under the teardrop aimed at it."""
    if not space.near(u, t, templates.TEARDROP_LENGTH):
        return False
    tpl = template(u, t)
    wholly, partly = templates.under(tpl, templates.bases_near([t], tpl))
    return bool(wholly or partly)


def legal(battle: Battle, u: UnitState, targets: list[UnitState]) -> list[Action]:
    """The legal breath attacks of ``u``: ``shoot`` actions with option "breath", one per target it reaches.

    The caller checks that ``u`` may shoot (CORE.SHOOT.ELIGIBLE) and may still
    breathe (:func:`env.rules.special_rules.breath_ready`); ``targets`` are the
    enemy units it may pick as a shooting target (CORE.SHOOT.TARGET).
    """
    return [Action("shoot", u.uid, t.uid, OPTION) for t in targets if reaches(u, t)]


def breathe(battle: Battle, u: UnitState, t: UnitState) -> dict[str, list[list[int]]]:
    """Resolve ``u``'s breath at ``t`` (CORE.SR.BREATH_WEAPON): the template, the 4+ rolls, the hits and Panic.

    Emits CORE.SR.BREATH_WEAPON with ``form="shooting"``; the 4+ rolls are
    dice of the same rule. Returns the [unit uid, model slot] pairs by kind:
    "wholly", "partly" (under the template) and "partly_hit" (those of
    "partly" that rolled 4+).
    """
    tip, direction = aim(u, t)
    tpl = templates.teardrop(tip, direction)
    others = [o for o in space.alive_units(battle.state) if o.uid != u.uid]
    wholly, partly = templates.under(tpl, templates.bases_near(others, tpl))
    faces = battle.dice.d6(RULE, len(partly)) if partly else []
    partly_hit = [b for b, f in zip(partly, faces, strict=True) if f >= PARTIAL]
    strength = tables.clamp_characteristic(u.profile.S, "S")
    uses = special_rules.use_breath(battle, u)
    report = {
        "wholly": [[b.unit, b.slot] for b in wholly],
        "partly": [[b.unit, b.slot] for b in partly],
        "partly_hit": [[b.unit, b.slot] for b in partly_hit],
    }
    by_unit: dict[int, list[int]] = {}
    for b in wholly + partly_hit:
        by_unit.setdefault(b.unit, []).append(b.slot)
    battle.emit(RULE, unit=u.uid, target=t.uid, form="shooting", tip=list(tip), direction=direction, strength=strength,
                uses=uses, rolls=faces, hits={str(k): len(v) for k, v in sorted(by_unit.items())}, **report)
    for uid, slots in sorted(by_unit.items()):
        war_machine_shots.resolve_hits(battle, u, battle.unit(uid), len(slots), strength, "1", RULE, slots=slots)
    psychology.panic_after_shooting(battle, u, sorted(by_unit))
    return report


def expected_hits(u: UnitState, t: UnitState) -> float:
    """Expected breath hits on ``t`` if ``u`` breathed at it now: wholly under + half of partly under (no dice)."""
    tpl = template(u, t)
    wholly, partly = templates.under(tpl, templates.bases_near([t], tpl))
    return len(wholly) + len(partly) * (7 - PARTIAL) / 6
