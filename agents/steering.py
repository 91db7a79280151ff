"""Steering: turn "go there at this pace" into one of the engine's move options.

The engine offers a fixed menu of moves (``env.rules.actions.MOVE_OPTIONS``):
straight moves of M/2, M or 2M, wheels of 22.5° or 45° (also within a
march), 90° turns, an about face and a free reform to face the nearest enemy.
:func:`steer` picks from the options legal for a unit:

* off-axis by at most :data:`ON_AXIS` degrees — go straight, as far as the
  pace allows (and, for a waypoint, no further than needed);
* up to :data:`WHEEL_LIMIT` degrees — wheel towards the goal, the 22.5° or 45°
  wheel whichever is closer to the angle, within a march when marching;
* more — reform to face the nearest enemy when that also faces the goal,
  otherwise turn (single models and small units) or wheel 45°.

Angles are in degrees, counter-clockwise positive, so a positive off-axis
angle means the goal lies to the unit's left.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, space
from battleline.env.rules.movement import MIN_MOVE, WHEEL, Scene, furthest_legal, may_march, normal_move_allowance
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ON_AXIS = 20.0
WHEEL_LIMIT = 60.0
TURN_LIMIT = 135.0
SHORT_WHEEL_BELOW = 34.0  # below this, the 22.5° wheel is the closer of the two
SMALL_UNIT = 5  # up to this many models a 90° turn costs little formation

PACES = ("hold", "half", "advance", "march")
"""How fast a unit may go: not at all, M/2, M, or 2M (march)."""


def angle_diff(a: float, b: float) -> float:
    """a − b reduced to (−180, 180] degrees."""
    d = (a - b + 180.0) % 360.0 - 180.0
    return 180.0 if d == -180.0 else d


def bearing(u: UnitState, point: tuple[float, float]) -> float:
    """Facing (degrees) from the unit's centre to ``point``; the unit's own facing if they coincide."""
    if abs(point[0] - u.x) < 1e-9 and abs(point[1] - u.y) < 1e-9:
        return u.facing
    return geo.facing_towards((u.x, u.y), point)


def off_axis(u: UnitState, point: tuple[float, float]) -> float:
    """Signed angle from the unit's facing to ``point`` (positive: to its left)."""
    return angle_diff(bearing(u, point), u.facing)


def enemy_edge_facing(side: int) -> float:
    """Facing (degrees CCW from +x) straight at the enemy's table edge: 90 for blue (side 0), 270 for red."""
    return 90.0 if side == 0 else 270.0


def enemy_edge_sign(side: int) -> float:
    """+1.0 for blue (side 0, advancing up the table's +y), -1.0 for red."""
    return 1.0 if side == 0 else -1.0


def ahead(u: UnitState, point: tuple[float, float]) -> float:
    """How far ``point`` lies in front of the unit's front edge, along its facing (inches; negative behind)."""
    _, ly = geo.to_local(space.pose(u), point[0], point[1])
    return ly - u.depth / 2


def distance_to(u: UnitState, point: tuple[float, float]) -> float:
    """Centre-to-point distance in inches."""
    return float(((u.x - point[0]) ** 2 + (u.y - point[1]) ** 2) ** 0.5)


def forward_option(u: UnitState, pace: str, options: Collection[str], room: float | None) -> str | None:
    """The straight move for ``pace``: the longest allowed, or (with ``room``) the longest not overshooting it by much."""
    m = normal_move_allowance(u)
    allowed = {"half": ("advance_half",), "advance": ("advance", "advance_half"), "march": ("march", "advance", "advance_half")}
    lengths = {"advance_half": m / 2, "advance": m, "march": 2 * m if may_march(u) else m}
    choices = [o for o in allowed.get(pace, ()) if o in options]
    if room is not None:
        fitting = [o for o in choices if lengths[o] <= room + m / 4]
        choices = fitting or [o for o in choices if o == "advance_half" and room > 0.5]
    return max(choices, key=lambda o: lengths[o], default=None)


def wheel_option(off: float, pace: str, options: Collection[str]) -> str | None:
    """The wheel towards a goal ``off`` degrees off-axis (left when positive), closest angle first."""
    side = "left" if off > 0 else "right"
    short, full, march = f"wheel_{side}_short", f"wheel_{side}", f"march_wheel_{side}"
    order = [short, full] if abs(off) < SHORT_WHEEL_BELOW else [full, short]
    if pace == "march" and abs(off) >= SHORT_WHEEL_BELOW:
        order.insert(0, march)
    return next((o for o in order if o in options), None)


def rotation_option(battle: Battle, u: UnitState, off: float, goal: tuple[float, float], options: Collection[str]) -> str | None:
    """A large change of direction: reform to face the nearest enemy if it also faces the goal, else turn or wheel."""
    enemy = psychology.nearest_enemy(battle, u)
    if "reform_face" in options and enemy is not None:
        if abs(angle_diff(bearing(u, (enemy.x, enemy.y)), bearing(u, goal))) <= ON_AXIS:
            return "reform_face"
    if u.models > SMALL_UNIT:
        wheel = wheel_option(off, "march", options)
        if wheel is not None:
            return wheel
    if abs(off) > TURN_LIMIT and "about_face" in options:
        return "about_face"
    turn = "turn_left" if off > 0 else "turn_right"
    return turn if turn in options else wheel_option(off, "march", options)


def steer(
    battle: Battle,
    u: UnitState,
    goal: tuple[float, float],
    pace: str,
    options: Collection[str],
    approach: bool = True,
) -> str | None:
    """The move option that takes ``u`` towards ``goal`` at ``pace``, or None to stay put.

    Args:
        goal: a table point (inches).
        pace: one of :data:`PACES`.
        options: the move options legal for ``u`` now.
        approach: the goal is an enemy (go as far as allowed; the engine stops
            1" short); False for a waypoint (do not overshoot it).
    """
    if pace == "hold" or not options or distance_to(u, goal) < 0.5:
        return None
    off = off_axis(u, goal)
    if abs(off) <= ON_AXIS:
        room = None if approach else ahead(u, goal)
        return forward_option(u, pace, options, room)
    if abs(off) <= WHEEL_LIMIT:
        return wheel_option(off, pace, options) or forward_option(u, pace, options, None if approach else ahead(u, goal))
    return rotation_option(battle, u, off, goal, options)


STRAIGHT = {"advance_half": 0.5, "advance": 1.0, "backward": -0.5}
ROTATIONS = {"turn_left": 90.0, "turn_right": -90.0, "about_face": 180.0}


def predict_pose(battle: Battle, u: UnitState, option: str) -> geo.Pose:
    """Where ``option`` would take ``u`` if nothing were in the way (the engine stops moves short of units).

    A rough forecast for weighing options: the full allowance is moved,
    formation changes are ignored, reforms keep the centre.
    """
    m = normal_move_allowance(u)
    start = space.pose(u)
    if option in STRAIGHT:
        return geo.move_straight(start, STRAIGHT[option] * m)
    if option == "march":
        return geo.move_straight(start, 2 * m if may_march(u) else m)
    if option in WHEEL:
        allowance = 2 * m if option.startswith("march") else m
        after = geo.wheel(start, u.width, WHEEL[option], u.depth)
        return geo.move_straight(after, max(0.0, allowance - geo.wheel_distance(u.width, WHEEL[option])))
    if option in ROTATIONS:
        return geo.move_straight(geo.turn(start, ROTATIONS[option]), 0.75 * m)
    if option == "reform_face":
        enemy = psychology.nearest_enemy(battle, u)
        if enemy is not None:
            return geo.Pose(u.x, u.y, bearing(u, (enemy.x, enemy.y)))
    return start


REFORM_FILES = {"reform_wide": lambda u: min(u.models, u.files + 2), "reform_deep": lambda u: max(1, u.files - 2)}
"""Files after a reform in place (CORE.MOVE.REFORM: two files more or fewer, the centre kept)."""


def landing(battle: Battle, u: UnitState, option: str, env: Scene | None = None) -> UnitState:
    """A throw-away copy of ``u`` where ``option`` takes it (the battle is not touched).

    The rotation (wheel or turn) is taken as :func:`predict_pose` does, a turn reforming the unit to
    as many files as it had ranks (CORE.MOVE.TURN); the forward part then goes as far as
    :func:`env.rules.movement.furthest_legal` allows (1" short of units, the table edge).

    Args:
        option: a ``move`` option of ``u`` (advance, march, wheel, turn, backward, ...).
        env: ``u``'s scene (:func:`env.rules.movement.surroundings`: the compiled core's where it applies),
            when the caller already has it.

    Returns:
        A copy of ``u`` at the end pose (x, y in inches, facing in degrees) and, after a quarter
        turn or a reform (:data:`REFORM_FILES`), the new files; a move shorter than ``MIN_MOVE`` inches ends at the forecast pose.
    """
    if option in REFORM_FILES:
        return replaced(u, files=REFORM_FILES[option](u))
    start = space.pose(u)
    end = predict_pose(battle, u, option)
    shadow = u
    rotated = start
    if option in ROTATIONS:
        rotated = geo.Pose(start.x, start.y, end.facing)
        if option != "about_face":
            shadow = replaced(u, files=min(u.models, u.ranks))
    elif option in WHEEL:
        rotated = geo.wheel(start, u.width, WHEEL[option], u.depth)
    wanted = math.hypot(end.x - rotated.x, end.y - rotated.y)
    if wanted < MIN_MOVE:
        return moved_copy(shadow, end)
    sign = -1.0 if option == "backward" else 1.0
    d = furthest_legal(battle, shadow, rotated, sign * wanted, env=env)
    return moved_copy(shadow, geo.move_straight(rotated, sign * (d or 0.0)))


_FIELDS = tuple(f.name for f in dataclasses.fields(UnitState))
_READ = operator.attrgetter(*_FIELDS)
_INDEX = {name: i for i, name in enumerate(_FIELDS)}


def replaced(u: UnitState, **changes: Any) -> UnitState:
    """``dataclasses.replace(u, **changes)`` in a quarter of its time: a new unit sharing every other field's value.

    Raises:
        KeyError: a name in ``changes`` is not a field of :class:`UnitState`.
    """
    if type(u) is not UnitState:
        return dataclasses.replace(u, **changes)
    values = list(_READ(u))
    for name, value in changes.items():
        values[_INDEX[name]] = value
    return UnitState(*values)


def moved_copy(u: UnitState, pose: geo.Pose) -> UnitState:
    """A throw-away copy of ``u`` standing at ``pose`` (for forecasts; the battle is not touched)."""
    return replaced(u, x=pose.x, y=pose.y, facing=pose.facing)


def face_threat(battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
    """Reform to face the nearest enemy when it stands more than :data:`WHEEL_LIMIT`° off-axis (a holding unit's only move)."""
    enemy = psychology.nearest_enemy(battle, u)
    if enemy is None or "reform_face" not in options:
        return None
    return "reform_face" if abs(off_axis(u, (enemy.x, enemy.y))) > WHEEL_LIMIT else None
