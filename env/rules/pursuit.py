"""Flight and pursuit after a close-combat round (CORE.CC.FLEE, CORE.CC.CAUGHT, CORE.CC.PURSUIT_*).

Each broken unit flees from the enemy it fought (:func:`flee_source`), the
winners that chose to pursue roll to catch it, and each pursuer then moves
the roll straight after it (:func:`pursuit_move`), which may bring it into
contact with a fresh enemy (CORE.CC.PURSUIT_CONTACT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, space
from battleline.env.rules.charges import charge_facing, contact_placement
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.strikes import _contacts

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

PURSUIT_GAP = 1.0  # CORE.CC.PURSUIT_MOVE: a pursuer stops 1" from friends and from impassable terrain


def _flee_and_pursue(battle: Battle) -> None:
    """CORE.CC.FLEE, CORE.CC.CAUGHT, CORE.CC.PURSUIT_MOVE, CORE.CC.PURSUIT_CONTACT, panic."""
    s = battle.state
    p = s.queue.pop("pursuit")
    pursuers_all = [int(k) for k, v in p["answers"].items() if v == "pursue"]
    moved: set[int] = set()
    for uid in p["broken"]:
        u = battle.unit(uid)
        if not u.alive:
            continue
        contacts = [battle.unit(i) for i in sorted(_contacts(battle, uid))]
        if not contacts:  # CORE.CC.CONTACT_KEEP disengaged it: it still flees from the units it fought
            contacts = [battle.unit(i) for i in p.get("fought", {}).get(str(uid), []) if battle.unit(i).alive]
        if not contacts:
            continue
        source = flee_source(battle, uid, contacts)
        pursuers = [c for c in contacts if c.uid in pursuers_all and c.uid not in moved]
        flee_roll = psychology.flee_roll(battle, u, "CORE.CC.FLEE")
        rolls = {c.uid: psychology.flee_roll(battle, c, "CORE.CC.CAUGHT") for c in pursuers}
        psychology.panic_nearby(battle, u, "CORE.PSY.PANIC.TRIGGER_BREAK")
        caught = any(r >= flee_roll for r in rolls.values())
        away = geo.facing_towards((source.x, source.y), (u.x, u.y))
        if caught:
            psychology.destroy(battle, u, "CORE.CC.CAUGHT", flee_roll=flee_roll, pursuit_rolls={str(k): v for k, v in rolls.items()})
        else:
            psychology.flee(battle, u, (source.x, source.y), "CORE.CC.FLEE", roll=flee_roll, away_from=source.uid)
        for c in pursuers:
            if c.alive and not psychology.engaged(battle, c):
                pursuit_move(battle, c, away, rolls[c.uid], escaped=None if caught else uid, target=uid)
                moved.add(c.uid)


def flee_source(battle: Battle, uid: int, contacts: list[UnitState]) -> UnitState:
    """The enemy unit a broken unit ``uid`` flees from (CORE.CC.FLEE): the contacting unit with the highest US;
    ties go to a unit that charged it, then are drawn at random: a D6 each (in uid order), the highest
    wins, units tied on the highest roll again."""
    charged = {e.attacker for e in battle.state.engagements if e.defender == uid and e.charged}
    best = max((c.unit_strength, c.uid in charged) for c in contacts)
    tied = [c for c in contacts if (c.unit_strength, c.uid in charged) == best]
    while len(tied) > 1:
        faces = battle.dice.d6("CORE.CC.FLEE", len(tied))
        tied = [c for c, f in zip(tied, faces, strict=True) if f == max(faces)]
    return tied[0]


def pursuit_move(
    battle: Battle, c: UnitState, heading: float, roll: int, escaped: int | None, target: int | None = None
) -> None:
    """CORE.CC.PURSUIT_MOVE: face the flee direction and move the roll straight ahead.

    The pursuer first turns about its centre to face ``heading``. Where the
    turned footprint would overlap a unit or impassable terrain
    (CORE.TERRAIN.TYPES), stand in the castle, or cross the
    table edge (CORE.MOVE.TABLE_EDGE: a pursuer never leaves the table; it
    stops at the edge, and a turn that pokes past the edge is not a pursuit
    off the table), it has no room to turn and pursues straight ahead in its
    current facing instead (an event CORE.MOVE.TABLE_EDGE with
    ``turned=False`` says so for the edge). It then stops exactly 1" from
    friends and from impassable terrain, at the table edge, or touching an
    escaped fleer (distances are not rounded, CORE.CONV.UNITS: the move is
    tried in 0.5" steps, and the last step up to a stop is found by
    bisection). A unit that starts within 1" of a friend or of impassable
    terrain does not move. Touching a fresh enemy starts a new combat
    (CORE.CC.PURSUIT_CONTACT) in which the pursuer counts as charging next
    phase.
    """
    s = battle.state
    start = geo.Pose(c.x, c.y, heading)
    env = space.Surroundings(s, c)
    first = space.footprint_at(c, start)
    if not geo.within_table(first, s.table_w, s.table_h):
        battle.emit("CORE.MOVE.TABLE_EDGE", unit=c.uid, move="CORE.CC.PURSUIT_MOVE", turned=False, heading=heading)
        start = space.pose(c)  # no room to turn on the table: pursue straight ahead
    elif (env.overlapping(first, env.polys).any() or env.overlapping(first, env.impassable).any()
          or not space.castle_end_ok(s, c, first)):
        start = space.pose(c)  # no room to turn about: pursue straight ahead
    impassable = [space.terrain_poly(t) for t in space.terrain_of(s, space.IMPASSABLE)]
    nearby = [o for o in space.alive_units(s) if o.uid != c.uid and space.near(o, c, roll + 2.0)]

    def blocked(d: float) -> tuple[bool, UnitState | None]:
        """(stop, fresh enemy touched) for the pursuer moved ``d`` inches."""
        poly = space.footprint_at(c, geo.move_straight(start, d))
        if not geo.within_table(poly, s.table_w, s.table_h):
            return True, None
        if any(geo.distance(poly, t) < PURSUIT_GAP for t in impassable):
            return True, None
        if not space.castle_end_ok(s, c, poly):  # SIEGE.SCEN.CASTLE, SIEGE.MOVE.WALLS
            return True, None
        for o in nearby:
            gap = geo.distance(poly, space.footprint(o))
            if o.side == c.side and gap < PURSUIT_GAP:
                return True, None
            if o.side != c.side and gap <= geo.EPS:
                return (True, None) if o.uid == escaped or o.fleeing else (False, o)
        return False, None

    dist = 0.0
    step = 0.5
    fresh: UnitState | None = None
    while dist + step <= roll + 1e-9:
        stop, fresh = blocked(dist + step)
        if stop:
            lo, hi = dist, dist + step
            for _ in range(40):  # the exact stop: the farthest distance clear of every stop and enemy
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if blocked(mid) != (False, None) else (mid, hi)
            dist = lo
            fresh = blocked(hi)[1]  # an enemy touched just before the stop
            break
        if fresh:
            break
        dist += step
    end = geo.move_straight(start, dist)
    c.x, c.y, c.facing = end.x, end.y, end.facing % 360.0
    battle.emit("CORE.CC.PURSUIT_MOVE", unit=c.uid, target=target, roll=roll, distance=dist, x=c.x, y=c.y, facing=c.facing)
    if fresh is None:
        return
    facing = charge_facing(battle, c, fresh, roll=True)
    placed = contact_placement(battle, c, fresh, facing) if facing else None
    if placed is None:
        return
    pose, overlap, _ = placed
    c.x, c.y, c.facing = pose.x, pose.y, pose.facing
    s.engagements.append(Engagement(attacker=c.uid, defender=fresh.uid, facing=facing, charged=True, turn=-1))
    battle.emit("CORE.CC.PURSUIT_CONTACT", unit=c.uid, target=fresh.uid, facing=facing, overlap=overlap)
