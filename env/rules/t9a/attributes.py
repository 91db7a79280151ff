"""T9A attack attributes (RULESET.md §6.1, T9A.AA.*): their scope, their conditions and their effects.

:func:`area_attack_hits` is T9A.AA.AREA_ATTACK; :func:`multiple_wounds` is
T9A.AA.MULTIPLE_WOUNDS. T9A artillery (T9A.ART.*) and the attribute module both
call them; each emits its rule ID.

With the ``t9a.attributes`` module on, every roll to wound goes through
:func:`attack_attributes` (it wraps ``special_rules.wound_and_save``) and every
application of its result through :func:`multiple_wounds_applied` (it wraps
``special_rules.apply_result``). For each attack:

1. T9A.AA.SCOPE: the attacker's ``t9a.attributes`` entries (:func:`entries`) that match the attack
   (:func:`in_scope`): a close-combat blow (melee weapon), a shot (missile weapon) or a special attack
   (impact hits, a breath weapon and Stomp in close combat; war machine shots).
2. T9A.AA.CONDITIONS: of those, the ones whose conditions every unit of the wound pool meets. The pool
   is the unit whose models take the wounds: blows and shots on a unit go to its R&F, so its joined
   characters are not in it; hits allocated to a joined character (CORE.SHOOT.ALLOCATE) form a pool of
   that character alone.
3. The effects: ``flaming`` gives the attack the core Flaming Attacks (CORE.SR.FLAMING, magical);
   ``lethal_strike`` the core Killing Blow (CORE.SR.KILLING_BLOW: close combat only, as in the core);
   ``divine`` makes :func:`is_divine` true for the save pipeline (T9A.AA.DIVINE_LETHAL: the Aegis
   re-roll is the protections module's); ``area_attack (X)`` turns each hit into
   min(X, files) × min(X, ranks) hits (T9A.AA.AREA_ATTACK); ``multiple_wounds (X)`` turns each
   unsaved wound into X wounds, excess lost, when the wounds are applied (T9A.AA.MULTIPLE_WOUNDS).
   Where two entries of one attribute apply, the first listed counts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from battleline.env.rules.t9a import ATTRIBUTES, on
from battleline.env.rules.t9a.conditions import Attribute, applies, parse

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.special_rules import WoundResult
    from battleline.env.rules.state import UnitState

Kind = Literal["close_combat", "shooting"]
MODEL_TAGS: frozenset[str] = frozenset({"close_combat", "shooting"})
"""The tags of an entry given as plain text, or of a model-part entry without ``tags`` (AA-1, AA-2, A13)."""
WEAPON_TAGS: frozenset[str] = frozenset({"attack_weapon"})
"""The tags of a weapon entry without ``tags``: it applies to that weapon's attacks (AA-2 Attack & Weapon)."""
WEAPON_PARTS: tuple[str, ...] = ("melee_weapon", "missile_weapon")
SHOOTING_WOUND_RULE = "CORE.SHOOT.TO_WOUND"
"""The to-wound rule of a unit's shots (its missile weapon) and of shots allocated to a joined character."""
CLOSE_COMBAT_SPECIAL: tuple[str, ...] = ("CORE.SR.IMPACT_HITS", "CORE.SR.BREATH_WEAPON", "T9A.STOMP")
"""To-wound rules of special attacks made in close combat; every other non-blow, non-shot roll to wound
(war machines) is a special shooting attack."""
GRANTED: dict[str, str] = {"flaming": "flaming", "lethal_strike": "killing_blow", "divine": "divine"}
"""Attribute → the rule the attacker has while it wounds (core Flaming, core Killing Blow, Divine)."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One attack attribute of a unit with its scope (T9A.AA.SCOPE).

    Attributes:
        attr: the parsed attribute (name, params, conditions).
        tags: a subset of {close_combat, shooting, attack_weapon}.
        part: model, mount, rider, melee_weapon or missile_weapon.
    """

    attr: Attribute
    tags: frozenset[str]
    part: str


@dataclass(frozen=True, slots=True)
class Attack:
    """What makes an attack, for T9A.AA.SCOPE.

    Attributes:
        kind: ``close_combat`` or ``shooting``.
        special: a Special Attack (impact hits, breath weapon, Stomp, a war machine's shot).
        weapon: ``melee_weapon`` / ``missile_weapon`` for the unit's weapon attacks, None for a special attack.
        rule: the rule the roll to wound is made under.
    """

    kind: Kind
    special: bool
    weapon: str | None
    rule: str


def area_attack_hits(x: int, files: int, ranks: int) -> int:
    """Hits of Area Attack (X) on a unit of ``files`` × ``ranks`` (T9A.AA.AREA_ATTACK, DEFAULT D-AR):
    min(X, files) × min(X, ranks); 0 when X ≤ 0.

    Example: Area Attack (3) on 5 files × 2 ranks = 3 × 2 = 6 hits.
    """
    if x <= 0:
        return 0
    return min(x, max(files, 0)) * min(x, max(ranks, 0))


def roll_param(battle: Battle, param: str, rule: str) -> int:
    """The value of an attribute parameter: a whole number as written, or ``d3`` / ``d6`` rolled
    (one die, logged under ``rule``).

    Raises:
        ValueError: ``param`` is neither a whole number nor d3/d6.
    """
    p = param.lower()
    if p.isdigit():
        return int(p)
    if p == "d3":
        return battle.dice.d3(rule)
    if p == "d6":
        return battle.dice.d6(rule)[0]
    raise ValueError(f"attribute parameter '{param}' is not a whole number, d3 or d6")


def multiple_wounds(battle: Battle, param: str, unsaved: int, wounds_per_model: int, wounds_left: int,
                    unit: int) -> int:
    """Wounds caused by ``unsaved`` unsaved wounds with Multiple Wounds (X) (T9A.AA.MULTIPLE_WOUNDS, D-MW).

    Each unsaved wound becomes X wounds (X rolled per wound when ``param`` is d3/d6), but no more
    than the model it lands on has left: the excess is lost. Wounds land model by model, the
    first on a model with ``wounds_left`` of ``wounds_per_model`` Wounds.

    Args:
        param: X as written (``"2"``, ``"d3"``, ``"d6"``).
        unsaved: unsaved wounds (≥ 0).
        wounds_per_model: W of the target's models (≥ 1).
        wounds_left: Wounds the first model has left (1..W).
        unit: the target's uid, for the event.

    Returns:
        The wounds to apply, each capped at the wounds of the model it lands on.
    """
    total, left = 0, wounds_left
    per: list[int] = []
    for _ in range(unsaved):
        x = roll_param(battle, param, "T9A.AA.MULTIPLE_WOUNDS")
        dealt = min(x, left)
        per.append(x)
        total += dealt
        left -= dealt
        if left <= 0:
            left = wounds_per_model
    if unsaved:
        battle.emit("T9A.AA.MULTIPLE_WOUNDS", unit=unit, param=param, unsaved=unsaved, rolled=per, wounds=total)
    return total


# --------------------------------------------------------------------- data
@functools.lru_cache(maxsize=1024)
def _entry(text: str, tags: tuple[str, ...] | None, part: str) -> Entry:
    default = WEAPON_TAGS if part in WEAPON_PARTS else MODEL_TAGS
    return Entry(parse(text), frozenset(tags) if tags is not None else default, part)


def entries(u: UnitState) -> list[Entry]:
    """The unit's attack attributes (``u.t9a["attributes"]``, T9A.AA.SCOPE): a text is given to the whole
    model with tags {close_combat, shooting}; a mapping ``{attribute, tags, part}`` as written, its tags by
    default {close_combat, shooting} on a model part and {attack_weapon} on a weapon."""
    out = []
    for a in u.t9a.get("attributes", ()):
        if isinstance(a, str):
            out.append(_entry(a, None, "model"))
        else:
            tags = a.get("tags")
            out.append(_entry(a["attribute"], None if tags is None else tuple(tags), a.get("part", "model")))
    return out


def attack_of(melee: bool, wound_rule: str) -> Attack:
    """The attack a roll to wound belongs to: a blow (``melee``), a shot (CORE.SHOOT.TO_WOUND), a special
    attack in close combat (:data:`CLOSE_COMBAT_SPECIAL`) or else a special shooting attack."""
    if melee:
        return Attack("close_combat", False, "melee_weapon", wound_rule)
    if wound_rule == SHOOTING_WOUND_RULE:
        return Attack("shooting", False, "missile_weapon", wound_rule)
    return Attack("close_combat" if wound_rule in CLOSE_COMBAT_SPECIAL else "shooting", True, None, wound_rule)


def in_scope(e: Entry, attack: Attack) -> bool:
    """T9A.AA.SCOPE (AA-1..AA-3, A13): whether entry ``e`` applies to ``attack``.

    A weapon's entry applies only to attacks made with that weapon, when tagged Attack & Weapon or with
    the attack's kind. A model or mount entry applies to the unit's close-combat attacks (special ones
    included) when tagged Close Combat and to its shots that are not Special Attacks when tagged Shooting.
    A rider entry applies to nothing: in this engine the unit's profile makes every attack and the rider
    of a ridden monster or chariot does not strike (monsters.py, DEFAULT).
    """
    if e.part in WEAPON_PARTS:
        return attack.weapon == e.part and ("attack_weapon" in e.tags or attack.kind in e.tags)
    if e.part == "rider":
        return False
    if attack.kind == "close_combat":
        return "close_combat" in e.tags
    return "shooting" in e.tags and not attack.special


def active(battle: Battle, u: UnitState, t: UnitState, attack: Attack) -> dict[str, Attribute]:
    """The attributes of ``u`` that apply to ``attack`` on the wound pool ``[t]``, by name (the first
    listed of a name wins). Emits T9A.AA.SCOPE (in and out of scope) and, for each entry in scope with
    conditions, T9A.AA.CONDITIONS (``applied`` true or false)."""
    found = entries(u)
    if not found:
        return {}
    scoped = [e for e in found if in_scope(e, attack)]
    battle.emit("T9A.AA.SCOPE", unit=u.uid, target=t.uid, attack=attack.kind, special=attack.special,
                weapon=attack.weapon, source=attack.rule, applied=[e.attr.name for e in scoped],
                out_of_scope=[e.attr.name for e in found if e not in scoped])
    crit = frozenset({attack.kind, *(n for n in ("flaming", "magical") if u.has(n))})
    out: dict[str, Attribute] = {}
    for e in scoped:
        ok = applies(e.attr, [t], attack=crit)
        if e.attr.conditions:
            battle.emit("T9A.AA.CONDITIONS", unit=u.uid, target=t.uid, attribute=e.attr.name, applied=ok,
                        conditions=[list(run) for run in e.attr.conditions], pool=[t.uid])
        if ok:
            out.setdefault(e.attr.name, e.attr)
    return out


def is_divine(attacker: UnitState) -> bool:
    """T9A.AA.DIVINE_LETHAL: whether ``attacker`` is making a Divine attack, i.e. a ``divine`` attribute
    in scope whose conditions the wound pool meets. True only while its roll to wound and saves run
    (inside ``special_rules.wound_and_save``), where the protections module forces the Aegis re-roll."""
    return "divine" in attacker.special_rules


@contextmanager
def _granted(u: UnitState, rules: list[str]) -> Iterator[None]:
    """Give ``u`` the extra special ``rules`` for the duration (a new list: the unit type's list is shared)."""
    if not rules:
        yield
        return
    saved = u.special_rules
    u.special_rules = [*saved, *rules]
    try:
        yield
    finally:
        u.special_rules = saved


# --------------------------------------------------------------------- hooks
@functools.lru_cache(maxsize=1)
def _result_type() -> type:
    """``WoundResult`` with ``multiple_wounds``: the X of T9A.AA.MULTIPLE_WOUNDS to apply ("" none)."""
    from battleline.env.rules.special_rules import WoundResult

    @dataclass
    class MultipleWoundsResult(WoundResult):
        """A :class:`WoundResult` whose unsaved wounds become X each when applied (T9A.AA.MULTIPLE_WOUNDS)."""

        multiple_wounds: str = ""

    return MultipleWoundsResult


def attack_attributes(fn: Callable[..., WoundResult]) -> Callable[..., WoundResult]:
    """Decorate ``special_rules.wound_and_save(battle, u, t, hits, strength, **kw)`` with T9A.AA.*.

    Module off, no hits or no attributes: the core call, unchanged. Otherwise :func:`active` picks the
    attributes; ``area_attack (X)`` multiplies the hits (T9A.AA.AREA_ATTACK); ``flaming``,
    ``lethal_strike`` and ``divine`` are given to the attacker for the call (:data:`GRANTED`); a Lethal
    Strike or Divine attack emits T9A.AA.DIVINE_LETHAL; ``multiple_wounds (X)`` marks the result for
    :func:`multiple_wounds_applied`.
    """

    @functools.wraps(fn)
    def wrapper(battle: Battle, u: UnitState, t: UnitState, hits: int, strength: int, **kw: Any) -> WoundResult:
        if hits <= 0 or not on(battle.state, ATTRIBUTES) or not u.t9a.get("attributes"):
            return fn(battle, u, t, hits, strength, **kw)
        attack = attack_of(bool(kw.get("melee", False)), str(kw.get("wound_rule", "CORE.CC.TO_WOUND")))
        attrs = active(battle, u, t, attack)
        area = attrs.get("area_attack")
        if area is not None:
            hits = _area_hits(battle, u, t, area, hits)
        grants = [GRANTED[n] for n in GRANTED if n in attrs and not u.has(GRANTED[n])]
        start = len(battle.events)
        with _granted(u, grants):
            res = fn(battle, u, t, hits, strength, **kw)
        lethal = 0
        if "killing_blow" in grants:
            lethal = sum(e["killing_blows"] for e in battle.events[start:]
                         if e["rule"] == "CORE.SR.KILLING_BLOW" and e.get("unit") == u.uid and e.get("kind") != "dice")
        if lethal or "divine" in grants:
            battle.emit("T9A.AA.DIVINE_LETHAL", unit=u.uid, target=t.uid, divine="divine" in grants,
                        lethal_strikes=lethal, slain=res.slain if lethal else 0)
        mw = attrs.get("multiple_wounds")
        if mw is not None and res.unsaved:
            res = _result_type()(**asdict(res), multiple_wounds=mw.params)
        return res

    return wrapper


def _area_hits(battle: Battle, u: UnitState, t: UnitState, area: Attribute, hits: int) -> int:
    """Each of ``hits`` hits becomes Area Attack (X) hits on ``t`` (T9A.AA.AREA_ATTACK); emits the rule."""
    x = roll_param(battle, area.params, "T9A.AA.AREA_ATTACK")
    files = min(t.files, t.models)  # a unit narrower than its files setting: its front rank
    each = area_attack_hits(x, files, t.ranks)
    battle.emit("T9A.AA.AREA_ATTACK", unit=u.uid, target=t.uid, x=x, files=files, ranks=t.ranks,
                hits=hits, each=each, total=hits * each)
    return hits * each


def multiple_wounds_applied(fn: Callable[..., tuple[int, int]]) -> Callable[..., tuple[int, int]]:
    """Decorate ``special_rules.apply_result(battle, t, res, rule, **info)``: a result marked by
    :func:`attack_attributes` has each unsaved wound become X wounds, capped by the model it lands on
    (T9A.AA.MULTIPLE_WOUNDS, :func:`multiple_wounds`), counted from the wounds ``t`` has when they land."""

    @functools.wraps(fn)
    def wrapper(battle: Battle, t: UnitState, res: WoundResult, rule: str, **info: Any) -> tuple[int, int]:
        x = getattr(res, "multiple_wounds", "")
        if x and res.unsaved and t.in_play:
            w = max(1, t.profile.W)
            n = multiple_wounds(battle, x, res.unsaved, w, w - t.wounds_taken, t.uid)
            res = replace(res, unsaved=n, multiple_wounds="")
        return fn(battle, t, res, rule, **info)

    return wrapper
