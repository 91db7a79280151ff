"""T9A attack attributes (RULESET.md §6.1, T9A.AA.*): the arithmetic other T9A modules share.

:func:`area_attack_hits` is T9A.AA.AREA_ATTACK; :func:`multiple_wounds` is
T9A.AA.MULTIPLE_WOUNDS. T9A artillery (T9A.ART.*) and the attribute module both
call them; each emits its rule ID.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


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
