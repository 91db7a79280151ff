"""End of the game and victory points (CORE.GAME.END, CORE.VP.*)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from battleline.env.rules import characters, space
from battleline.env.rules.geometry import EPS
from battleline.env.rules.state import SIDES, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

BONUS = 100  # CORE.VP.STANDARD / GENERAL / BSB / QUARTERS (DEFAULT)


def unit_vp(u: UnitState) -> tuple[str, int]:
    """What an enemy unit is worth to its opponent now: (category, points).

    ``destroyed`` (full points: destroyed or off the table, CORE.VP.DESTROYED),
    ``half`` (half points, rounded up: fleeing, below 25% of its starting
    models, or a single model that lost at least half its W, CORE.VP.HALF), or
    ``none``.
    """
    if u.removed or u.models <= 0:
        return "destroyed", u.points
    if not u.deployed:
        return "none", 0
    single_half = u.start_models == 1 and u.wounds_taken * 2 >= u.profile.W and u.wounds_taken > 0
    if u.fleeing or u.models * 4 < u.start_models or single_half:
        return "half", math.ceil(u.points / 2)
    return "none", 0


def _side_of(value: float, line: float) -> int | None:
    """0 below the dividing line, 1 above it, None on it (within EPS: a centre on the line is in no quarter)."""
    if abs(value - line) <= EPS:
        return None
    return int(value > line)


def quarter_strengths(battle: Battle, moved: Mapping[int, UnitState] | None = None) -> list[list[int]]:
    """The total Unit Strength (CORE.SR.UNIT_STRENGTH) [blue, red] in each quarter, in the order of
    :func:`quarter_holders`: non-fleeing units of US ≥ 5 whose centre lies in the quarter. ``moved`` (uid ->
    a copy of the unit, e.g. where a move would take it) stands in for those units (a forecast)."""
    s = battle.state
    moved = moved or {}
    mid_x, mid_y = s.table_w / 2, s.table_h / 2
    out: list[list[int]] = [[0, 0], [0, 0], [0, 0], [0, 0]]
    for u in space.alive_units(s):  # one pass: each unit adds its US to the one quarter its centre lies in
        u = moved.get(u.uid, u)
        if u.fleeing:
            continue
        strength = u.unit_strength
        if strength < 5:
            continue
        qx, qy = _side_of(u.x, mid_x), _side_of(u.y, mid_y)
        if qx is not None and qy is not None:
            out[2 * qx + qy][u.side] += strength
    return out


def quarter_holders(battle: Battle, moved: Mapping[int, UnitState] | None = None) -> list[int | None]:
    """CORE.VP.QUARTERS: the side holding each quarter (x < 36 / ≥ 36, y < 24 / ≥ 24), or None.

    A quarter is held by the side with the higher total US of non-fleeing units
    of US ≥ 5 whose centre lies in it; a centre on a dividing line (within
    EPS) lies in none, so the count is the same seen from either side.
    ``moved`` as in :func:`quarter_strengths`.
    """
    return [None if us[0] == us[1] else (0 if us[0] > us[1] else 1) for us in quarter_strengths(battle, moved)]


def breakdown(battle: Battle) -> list[dict[str, int]]:
    """Victory points per side, by source: destroyed, half, standards, general, bsb, quarters.

    Joined characters score separately from their units (CORE.VP.DESTROYED).
    CORE.VP.GENERAL: the enemy General slain, off the table or fleeing (with
    its unit, when joined). CORE.VP.BSB: the enemy BSB slain, off the table
    or in a unit that failed a break test.
    """
    s = battle.state
    out = [{"destroyed": 0, "half": 0, "standards": 0, "general": 0, "bsb": 0, "quarters": 0} for _ in SIDES]
    for u in s.units:
        cat, pts = unit_vp(u)
        if cat != "none":
            out[1 - u.side][cat] += pts
        if u.general and (u.removed or characters.carrier(s, u).fleeing):
            out[1 - u.side]["general"] += BONUS
        if u.bsb and (u.removed or u.broken):
            out[1 - u.side]["bsb"] += BONUS
    for side in (0, 1):
        out[side]["standards"] = BONUS * s.captured_standards[side]
    for holder in quarter_holders(battle):
        if holder is not None:
            out[holder]["quarters"] += BONUS
    return out


def result(battle: Battle) -> dict[str, Any]:
    """The result: winner, VP per side, breakdown and margin (CORE.VP.RESULT).

    A VP margin of at least ``victory_margin`` (default 10%) of the points
    limit wins; less is a draw. A side with no models left loses
    (CORE.GAME.END). ``winner`` is None while the game runs.
    """
    s = battle.state
    parts = breakdown(battle)
    vp = {SIDES[i]: sum(parts[i].values()) for i in (0, 1)}
    margin = vp["blue"] - vp["red"]
    winner: str | None = None
    if s.over and s.castle:  # SIEGE.SCEN.VICTORY: the castle decides, not the VP margin
        from battleline.env.rules.siege import play

        winner = SIDES[play.winner(s)]
    elif s.over:
        wiped = [not space.alive_units(s, side) for side in (0, 1)]
        if wiped[0] != wiped[1]:
            winner = "red" if wiped[0] else "blue"
        elif abs(margin) >= s.queue.get("victory_margin", 0.10) * s.points_limit:
            winner = "blue" if margin > 0 else "red"
        else:
            winner = "draw"
    return {
        "winner": winner,
        "vp": vp,
        "breakdown": {SIDES[i]: parts[i] for i in (0, 1)},
        "margin": margin,
        "turn": s.turn,
    }


def check_wipeout(battle: Battle) -> bool:
    """End the game at once if a side has no models left (CORE.GAME.END)."""
    s = battle.state
    if s.over or s.stage == "deploy" or s.phase == "deployment":
        return False
    units = s.units  # each side with a unit on the table (UnitState.alive), each search stopping at its first
    if not (any(u.side == 0 and u.alive for u in units) and any(u.side == 1 and u.alive for u in units)):
        end_game(battle, reason="wiped_out")
        return True
    return False


def end_game(battle: Battle, reason: str) -> None:
    """End the game and record the result (CORE.GAME.END, CORE.VP.RESULT)."""
    s = battle.state
    s.over = True
    s.stage = "over"
    if s.castle:  # SIEGE.SCEN.VICTORY: who controls each element at the end
        from battleline.env.rules.siege import play

        play.update_control(battle)
    res = result(battle)
    battle.emit("CORE.GAME.END", reason=reason, winner=res["winner"], vp=res["vp"])
    for quarter, us in enumerate(quarter_strengths(battle)):
        battle.emit("CORE.SR.UNIT_STRENGTH", quarter=quarter, unit_strength=us)
    for side in SIDES:
        for key, rule in (
            ("destroyed", "CORE.VP.DESTROYED"),
            ("half", "CORE.VP.HALF"),
            ("quarters", "CORE.VP.QUARTERS"),
            ("general", "CORE.VP.GENERAL"),
            ("bsb", "CORE.VP.BSB"),
        ):
            if res["breakdown"][side][key]:
                battle.emit(rule, side=side, vp=res["breakdown"][side][key])
    battle.emit("CORE.VP.RESULT", winner=res["winner"], vp=res["vp"], breakdown=res["breakdown"], margin=res["margin"])
