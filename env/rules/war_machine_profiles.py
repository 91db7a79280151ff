"""War machine profiles, their tests, "may not shoot next turn" and the line of fire (CORE.WM.PROFILES,
CORE.WM.TESTS, CORE.WM.PANIC; RULESET.md §3.6).

What a war machine is (:mod:`env.rules.war_machines` describes the whole of
them): :data:`MACHINES`, the profile of each machine by missile id, the
crew's profile and the constants of the machines' rules; the set-up of a
war machine unit (:func:`prepare`); the tests it fails automatically
(:func:`auto_fails`); the mark that keeps a machine from shooting in its
next turn (:func:`silence`, :func:`silenced`); and where its line of fire
starts and points (:func:`muzzle`, :func:`_aim_frame`). Distances in inches,
directions in degrees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.state import UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


# --------------------------------------------------------------------- profiles
@dataclass(frozen=True, slots=True)
class Machine:
    """A machine's profile (CORE.WM.PROFILES). Ranges in inches; ``wounds`` is "1", "d3" or "d6"."""

    kind: str
    max_range: float
    strength: int
    wounds: str
    crew: int
    toughness: int
    fire_rule: str
    min_range: float = 0.0
    centre_strength: int | None = None  # stone thrower: the hole's S (CORE.WM.STONE.DAMAGE)
    centre_wounds: str = "1"
    grapeshot: bool = False
    flaming: bool = False
    misfire: str | None = None  # the misfire table's rule ID


MACHINES: dict[str, Machine] = {
    "great_cannon": Machine("great_cannon", 48.0, 10, "d6", 3, 7, "CORE.WM.CANNON.SHOT", grapeshot=True,
                            misfire="CORE.WM.MISFIRE.CANNON"),
    "light_cannon": Machine("light_cannon", 36.0, 10, "d3", 3, 7, "CORE.WM.CANNON.SHOT", grapeshot=True,
                            misfire="CORE.WM.MISFIRE.CANNON"),
    "stone_thrower": Machine("stone_thrower", 60.0, 3, "1", 3, 7, "CORE.WM.STONE.AIM", min_range=12.0,
                             centre_strength=9, centre_wounds="d6", misfire="CORE.WM.MISFIRE.STONE"),
    "bolt_thrower": Machine("bolt_thrower", 48.0, 6, "d3", 2, 6, "CORE.WM.BOLT"),
    "flame_cannon": Machine("flame_cannon", 12.0, 5, "1", 2, 6, "CORE.WM.FLAME", flaming=True,
                            misfire="CORE.WM.MISFIRE.CANNON"),
}
"""The machines of CORE.WM.PROFILES by missile id (also in :data:`env.rules.tables.MISSILE_WEAPONS`)."""

CREW_PROFILE = {"M": 4, "WS": 3, "BS": 3, "S": 3, "T": 3, "W": 1, "I": 3, "A": 1, "Ld": 7}
"""CORE.WM.PROFILES: the crew, with no armour."""
GRAPESHOT_RANGE = 12.0  # CORE.WM.CANNON.GRAPESHOT
GRAPESHOT_STRENGTH = 5
MISFIRE_BLAST_STRENGTH = 4  # CORE.WM.MISFIRE.CANNON row 1
STONE_PARTIAL = 4  # CORE.WM.STONE.DAMAGE: partly under, a hit on 4+
CANNON_LEAD = 4.0
"""DEFAULT aim of :func:`default_option`: a solid shot lands 4" + N short of where the line enters the target."""
TESTS_ROLLED = frozenset({"T", "Ld"})  # CORE.WM.TESTS


def is_machine(u: UnitState) -> bool:
    """CORE.TYPE.WAR_MACHINE."""
    return u.troop_type == "war_machine"


def machine(u: UnitState) -> Machine:
    """The machine of war machine ``u``. Raises KeyError if it has none."""
    return MACHINES[u.missile]  # type: ignore[index]


def prepare(u: UnitState) -> None:
    """Set-up of a war machine unit: one base (CORE.GEO.BASES); Slow to Fire (CORE.WM.FIRE_RULES; Move or Fire
    comes with its machine's weapon); the machine's T, the crew's kept in ``marks["crew_T"]`` (CORE.WM.PROFILES)."""
    u.files = 1
    if not u.has("slow_to_fire"):
        u.special_rules.append("slow_to_fire")
    if u.missile in MACHINES:
        u.marks["crew_T"] = u.profile.T
        u.profile.T = machine(u).toughness


def crew_lost(u: UnitState) -> int:
    """Crew models lost so far."""
    return max(0, u.start_models - u.models)


def auto_fails(battle: Battle, u: UnitState, test: str) -> bool:
    """CORE.WM.TESTS: whether ``u`` fails a characteristic test ``test`` ("WS", "S", "T", "Ld", ...) automatically."""
    if not is_machine(u) or test in TESTS_ROLLED:
        return False
    battle.emit("CORE.WM.TESTS", unit=u.uid, test=test, failed=True, automatic=True)
    return True

# --------------------------------------------------------------------- may not shoot next turn
def _next_own_turn(battle: Battle, side: int) -> int:
    s = battle.state
    if s.active == side:
        return s.turn + 1
    return s.turn if s.active == s.first_player else s.turn + 1


def silence(battle: Battle, u: UnitState, rule: str, **info: object) -> None:
    """The machine may not shoot in its next turn (CORE.WM.PANIC, MISFIRE.*): ``marks["silenced_turn"]``."""
    u.marks["silenced_turn"] = _next_own_turn(battle, u.side)
    battle.emit(rule, unit=u.uid, may_not_shoot_turn=u.marks["silenced_turn"], **info)


def silenced(battle: Battle, u: UnitState) -> bool:
    """Whether the machine may not shoot this turn."""
    s = battle.state
    return s.active == u.side and u.marks.get("silenced_turn") == s.turn


def crew_stands(battle: Battle, u: UnitState, rule: str) -> None:
    """CORE.WM.PANIC: a crew that fails Panic (or Terror) does not flee; the machine may not shoot next turn."""
    silence(battle, u, "CORE.WM.PANIC", cause=rule, flees=False)


# --------------------------------------------------------------------- line of fire
def muzzle(u: UnitState) -> tuple[float, float]:
    """The middle of the machine's front edge (inches)."""
    fl, fr = geo.front_edge(space.pose(u), u.width, u.depth)
    return ((fl[0] + fr[0]) / 2, (fl[1] + fr[1]) / 2)


def _aim_frame(u: UnitState, t: UnitState) -> tuple[tuple[float, float], float]:
    """(muzzle, direction of the line of fire) for ``u`` firing at ``t``, as if ``u`` had pivoted to face ``t``."""
    facing = geo.facing_towards((u.x, u.y), (t.x, t.y)) if (u.x, u.y) != (t.x, t.y) else u.facing
    pose = geo.Pose(u.x, u.y, facing)
    fl, fr = geo.front_edge(pose, u.width, u.depth)
    mz = ((fl[0] + fr[0]) / 2, (fl[1] + fr[1]) / 2)
    if math.dist(mz, (t.x, t.y)) < 1e-9:
        return mz, facing
    return mz, geo.facing_towards(mz, (t.x, t.y))
