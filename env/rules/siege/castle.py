"""Castle elements (SIEGE.CASTLE.*, SIEGE.SCEN.CASTLE): walls, towers, gates, the citadel.

Every element is a plain dataclass stored in ``BattleState.castle`` (a list,
empty outside sieges), JSON-able through :func:`dataclasses.asdict` and
rebuilt by :meth:`CastleElement.from_dict`. Geometry is a polygon in table
inches; :meth:`CastleElement.shape` gives the shapely polygon.

Kinds:

* ``wall`` — a wall section, 2" deep; its parapet holds one rank of
  defenders and one lane of climbers (SIEGE.CASTLE.WALL); ``outward`` is
  the direction (degrees, like a facing) from the wall to the outside, so the
  outer face is the polygon edge on that side;
* ``tower`` — the top holds what fits, the inside as many again
  (SIEGE.CASTLE.TOWER); one war machine fills the top;
* ``citadel`` — a tower whose roof holds 2 war machines and its tower top 1
  more; damaged on the tower table (SIEGE.DMG.TOWER);
* ``gate`` — set in a wall section (``parent``), open, closed, smashed or
  destroyed (SIEGE.CASTLE.GATE, SIEGE.DMG.GATE).

Material: stone gives hard cover (−2 to hit), wood soft cover (−1)
(SIEGE.CASTLE.WALL, SIEGE.CASTLE.TOWER); a destroyed parapet gives none,
and ruins give hard cover again (SIEGE.DMG.WALL 20+).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import shapely
from shapely.geometry import LineString, Point, Polygon, box

from battleline.env.rules.state import BattleState, UnitState

KINDS = ("wall", "tower", "gate", "citadel")
MATERIALS = ("stone", "wood")
GATE_STATES = ("closed", "open", "smashed", "destroyed")
COVER = {"stone": -2, "wood": -1}
"""To-hit modifier for shooting at troops on a standing element (hard / soft cover)."""
RUINS_COVER = -2
"""Ruins of a collapsed element: hard cover and a defended obstacle (SIEGE.DMG.WALL, SIEGE.DMG.TOWER)."""
WALL_DEPTH = 2.0
"""SIEGE.CASTLE.WALL: a wall is 2" deep."""
PARAPET_MM = 50.0
"""SIEGE.CASTLE.WALL: the parapet is at least 50 mm wide: one defender rank plus one climber lane."""
BREACH_WIDTH = 3.0
"""SIEGE.DMG.WALL 19: infantry may cross the central 3" of a breached section at half speed."""
MACHINE_SLOTS = {"tower": 1, "citadel": 3, "wall": 0, "gate": 0}
"""SIEGE.CASTLE.TOWER: one machine fills a tower top; C takes 2 on its roof and 1 on its tower."""
NO_ENTRY_TYPES = frozenset({"cavalry", "chariot", "monster", "monstrous_infantry"})
"""SIEGE.CASTLE.TOWER: large creatures and cavalry may not enter a tower."""
NO_WALL_TYPES = frozenset({"cavalry", "chariot"})
"""SIEGE.MOVE.WALLS (siege.md §4): cavalry may not go onto walls or towers at all."""


@dataclass(slots=True)
class CastleElement:
    """One castle element (a rules object with its own damage track).

    Attributes:
        id: "S1".."S5", "T1".."T3", "C", "G" in the standard castle.
        kind: wall, tower, gate or citadel.
        polygon: outline in table inches.
        defender: the side that holds the castle at the start (0 or 1).
        material: stone or wood.
        outward: direction from the element to the outside, degrees
            counter-clockwise from +x (walls and gates; the outer face).
        parent: a gate's wall section id; None otherwise.
        damage_bonus: the accumulated bonus on later damage rolls (SIEGE.DMG.VALUE).
        results: every damage-table result so far, in order (first-time-only rows).
        reinforced: a reinforced gate, −1 on its rolls (SIEGE.EQUIP.REINFORCED_GATE).
        gate: a gate's state (closed, open, smashed, destroyed); "" for others.
        parapet_destroyed: wall/tower 17–18: no more hard cover on top.
        breached: wall 19 (SIEGE.DMG.WALL).
        partially_destroyed: tower 19 (SIEGE.DMG.TOWER).
        collapsed: the element is ruins: a defended obstacle with hard cover.
        no_shoot: uids that may not shoot in their next Shooting phase (15–16).
        inside: uids inside a tower (not targetable; SIEGE.CASTLE.TOWER).
        machines: uids of war machines on a tower top.
        controller: the side holding the element (SIEGE.SCEN.VICTORY), None: nobody.
        victory: what holding it gives the attacker at the end (SIEGE.SCEN.VICTORY): "key" wins outright
            and counts (the citadel), "counts" is one of the elements counted towards the number needed,
            "" neither (gates).
        parapet_taken: the attackers won a round here: the defenders have
            lost strike-first and the defended obstacle (SIEGE.CAPTURE.PARAPET).
        cauldrons: cauldrons standing here, dicts {"id", "variant", "crew",
            "along", "last_used", "moved"} (SIEGE.EQUIP.CAULDRON_USE).
        door_fights: [attacker uid, defender uid] pairs fighting at a tower's or
            the citadel's door (SIEGE.TOWER.ASSAULT): engaged without base contact.
    """

    id: str
    kind: str
    polygon: list[tuple[float, float]]
    defender: int = 0
    material: str = "stone"
    outward: float = 90.0
    parent: str | None = None
    damage_bonus: int = 0
    results: list[str] = field(default_factory=list)
    reinforced: bool = False
    gate: str = ""
    parapet_destroyed: bool = False
    breached: bool = False
    partially_destroyed: bool = False
    collapsed: bool = False
    no_shoot: list[int] = field(default_factory=list)
    inside: list[int] = field(default_factory=list)
    machines: list[int] = field(default_factory=list)
    controller: int | None = None
    parapet_taken: bool = False
    cauldrons: list[dict[str, Any]] = field(default_factory=list)
    door_fights: list[list[int]] = field(default_factory=list)
    victory: str = ""

    # ----- geometry -----------------------------------------------------------
    def shape(self) -> Polygon:
        """The element's outline as a shapely polygon (inches)."""
        return _poly(tuple(tuple(p) for p in self.polygon))

    @property
    def length(self) -> float:
        """A wall's or gate's length along the wall (the longer side of its bounding box)."""
        x0, y0, x1, y1 = self.shape().bounds
        return max(x1 - x0, y1 - y0)

    @property
    def depth(self) -> float:
        """A wall's depth across the wall (the shorter side of its bounding box)."""
        x0, y0, x1, y1 = self.shape().bounds
        return min(x1 - x0, y1 - y0)

    def outer_face(self) -> LineString:
        """The edge of the polygon facing ``outward`` (walls, gates): where chargers end flush."""
        pts = [tuple(p) for p in self.polygon]
        ox, oy = math.cos(math.radians(self.outward)), math.sin(math.radians(self.outward))
        best, best_v = None, -math.inf
        for a, b in zip(pts, pts[1:] + pts[:1], strict=True):
            mx, my = (a[0] + b[0]) / 2, (a[1] + b[1]) / 2
            v = mx * ox + my * oy
            if v > best_v + 1e-9:
                best, best_v = (a, b), v
        assert best is not None
        return LineString(best)

    def inner_face(self) -> LineString:
        """The edge opposite the outer face (towards the courtyard)."""
        pts = [tuple(p) for p in self.polygon]
        ox, oy = math.cos(math.radians(self.outward)), math.sin(math.radians(self.outward))
        best, best_v = None, math.inf
        for a, b in zip(pts, pts[1:] + pts[:1], strict=True):
            v = (a[0] + b[0]) / 2 * ox + (a[1] + b[1]) / 2 * oy
            if v < best_v - 1e-9:
                best, best_v = (a, b), v
        assert best is not None
        return LineString(best)

    @property
    def standing(self) -> bool:
        """Whether the element still stands (not ruins, not a destroyed gate)."""
        return not self.collapsed and self.gate != "destroyed"

    @property
    def is_tower(self) -> bool:
        """Towers and the citadel (the tower table, SIEGE.DMG.TOWER)."""
        return self.kind in ("tower", "citadel")

    def capacity(self, base_w: float, base_d: float | None = None) -> int:
        """How many models of base ``base_w`` × ``base_d`` inches fit.

        A wall's parapet holds one rank: length ÷ base width (SIEGE.CASTLE.WALL);
        a tower top holds what fits by area, the inside as many again
        (SIEGE.CASTLE.TOWER); a gate holds nobody.
        """
        if self.kind == "wall":
            return int(math.floor(self.length / base_w + 1e-9))
        if self.is_tower:
            d = base_d if base_d is not None else base_w
            x0, y0, x1, y1 = self.shape().bounds
            return int(math.floor((x1 - x0) / base_w + 1e-9)) * int(math.floor((y1 - y0) / d + 1e-9))
        return 0

    def cover(self) -> int:
        """To-hit modifier for shooting at troops on this element: −2 stone, −1 wood, 0 once the parapet is gone."""
        if self.collapsed:
            return RUINS_COVER
        if self.parapet_destroyed:
            return 0
        return COVER[self.material]

    @property
    def machine_slots(self) -> int:
        """War machines its top may hold (SIEGE.CASTLE.TOWER)."""
        return MACHINE_SLOTS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        """The element as a JSON-ready dict (:func:`dataclasses.asdict`); read back by :meth:`from_dict`."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CastleElement:
        """The element saved by :meth:`to_dict`; unknown keys are ignored; without ``victory`` (saved by an older
        version) the standard castle's part by id (:func:`victory_role`).

        Polygon vertices become (x, y) tuples, in inches.

        Raises:
            KeyError: no ``polygon``.
            TypeError: a required field is missing.
        """
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        kw["polygon"] = [tuple(p) for p in d["polygon"]]
        if "victory" not in d:  # saved before elements carried their SIEGE.SCEN.VICTORY part: the standard ids
            kw["victory"] = victory_role(str(d.get("id")), str(d.get("kind")), standard=True)
        return cls(**kw)


def _poly(points: tuple[tuple[float, float], ...]) -> Polygon:
    return _POLY_CACHE.get(points) or _POLY_CACHE.setdefault(points, Polygon(points))


_POLY_CACHE: dict[tuple[tuple[float, float], ...], Polygon] = {}


# --------------------------------------------------------------------- the standard castle
STANDARD_LAYOUT: tuple[tuple[str, str, tuple[float, float, float, float], float, str | None], ...] = (
    # id, kind, (x0, x1, y0, y1) in the defender's frame (his edge y = 0), outward, parent
    ("T1", "tower", (18, 22, 14, 18), 90.0, None),
    ("S1", "wall", (22, 31, 16, 18), 90.0, None),
    ("S2", "wall", (31, 41, 16, 18), 90.0, None),
    ("G", "gate", (34.5, 37.5, 16, 18), 90.0, "S2"),
    ("S3", "wall", (41, 50, 16, 18), 90.0, None),
    ("T2", "tower", (50, 54, 14, 18), 90.0, None),
    ("S4", "wall", (18, 20, 6, 14), 180.0, None),
    ("S5", "wall", (52, 54, 4, 14), 0.0, None),
    ("C", "citadel", (18, 24, 0, 6), 180.0, None),
    ("T3", "tower", (50, 54, 0, 4), 0.0, None),
)
"""SIEGE.SCEN.CASTLE: the standard castle."""
COURTYARD = (20.0, 52.0, 0.0, 16.0)
"""SIEGE.SCEN.CASTLE: the courtyard, x 20–52, y 0–16 in the defender's frame, less the elements."""
VICTORY_ELEMENTS = ("T1", "T2", "T3", "C", "S1", "S2", "S3", "S4", "S5")
"""SIEGE.SCEN.VICTORY: the 9 elements that count."""
VICTORY_KEY = "C"
"""SIEGE.SCEN.VICTORY: the element whose capture wins outright."""
VICTORY_SHARE = (5, 9)
"""SIEGE.SCEN.VICTORY: 5 of the 9 counted elements win; a custom castle needs the same share, rounded up (DEFAULT)."""


def victory_role(eid: str, kind: str, standard: bool) -> str:
    """An element's part in SIEGE.SCEN.VICTORY (see :attr:`CastleElement.victory`): in the standard castle "key"
    for C and "counts" for the other eight of :data:`VICTORY_ELEMENTS`; in a custom castle by kind (DEFAULT):
    a citadel is a key, a gate does not count, every other element counts."""
    if standard:
        return "key" if eid == VICTORY_KEY else "counts" if eid in VICTORY_ELEMENTS else ""
    return "key" if kind == "citadel" else "" if kind == "gate" else "counts"


def element_victory(e: Any) -> str:
    """The SIEGE.SCEN.VICTORY part of a custom castle's element config ``e`` (``victory`` and ``kind``): its own
    ``victory`` ("none" is ""), else :func:`victory_role` by kind."""
    if e.victory is not None:
        return "" if e.victory == "none" else e.victory
    return victory_role(e.id, e.kind, standard=False)


def victory_needed(castle: list[CastleElement], needed: int | None = None) -> int:
    """How many counted elements (keys included) the attacker must hold to win (SIEGE.SCEN.VICTORY): ``needed``
    when a custom castle sets it, else the standard 5 of 9 as a share of the counted elements, rounded up (5 for
    the standard castle), and at least 1: a castle with no counted element is won by its key or by wiping out its
    defenders."""
    if needed is not None:
        return needed
    counted = sum(1 for e in castle if e.victory)
    return max(1, -(-VICTORY_SHARE[0] * counted // VICTORY_SHARE[1]))


def to_table(defender: int, table_w: float, table_h: float, x: float, y: float) -> tuple[float, float]:
    """A point of the defender's frame on the table: blue's frame is the table's; red's is turned 180°."""
    return (x, y) if defender == 0 else (table_w - x, table_h - y)


def _rect(defender: int, tw: float, th: float, x0: float, x1: float, y0: float, y1: float) -> list[tuple[float, float]]:
    pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    return [to_table(defender, tw, th, x, y) for x, y in pts]


def standard_castle(
    defender: int = 0,
    table_w: float = 72.0,
    table_h: float = 48.0,
    material: str = "stone",
    reinforced_gate: bool = False,
) -> list[CastleElement]:
    """The standard castle of SIEGE.SCEN.CASTLE for ``defender`` (0 blue, 1 red)."""
    out = []
    for eid, kind, (x0, x1, y0, y1), outward, parent in STANDARD_LAYOUT:
        out.append(
            CastleElement(
                id=eid,
                kind=kind,
                polygon=_rect(defender, table_w, table_h, x0, x1, y0, y1),
                defender=defender,
                material=material,
                outward=outward if defender == 0 else (outward + 180.0) % 360.0,
                parent=parent,
                reinforced=reinforced_gate and kind == "gate",
                gate="closed" if kind == "gate" else "",
                controller=defender,
                victory=victory_role(eid, kind, standard=True),
            )
        )
    return out


def courtyard(state: BattleState) -> Polygon:
    """The courtyard (open ground inside the castle) on the table, less the elements."""
    if not state.castle:
        return Polygon()
    d = state.castle[0].defender
    x0, x1, y0, y1 = COURTYARD
    pts = _rect(d, state.table_w, state.table_h, x0, x1, y0, y1)
    area: shapely.Geometry = Polygon(pts)
    for e in state.castle:
        area = area.difference(e.shape())
    return area


def castle_area(state: BattleState) -> Polygon:
    """The courtyard and every element together: "inside the castle" (SIEGE.SCEN.DEPLOY)."""
    if not state.castle:
        return Polygon()
    return shapely.union_all([courtyard(state)] + [e.shape() for e in state.castle]).buffer(0)


# --------------------------------------------------------------------- queries
def element(state: BattleState, eid: str) -> CastleElement:
    """The element with id ``eid`` (KeyError when there is none)."""
    for e in state.castle:
        if e.id == eid:
            return e
    raise KeyError(f"no castle element {eid!r}")


def gate_of(state: BattleState, section: CastleElement) -> CastleElement | None:
    """The gate set in wall section ``section``, if any."""
    return next((e for e in state.castle if e.kind == "gate" and e.parent == section.id), None)


def element_under(state: BattleState, u: UnitState) -> CastleElement | None:
    """The wall section, tower or citadel whose polygon holds the unit's centre, or None; a unit in a
    gateway (:func:`in_gateway`) stands below the parapet, on no element."""
    if not state.castle:
        return None
    pt = Point(u.x, u.y)
    for e in state.castle:
        if e.kind != "gate" and e.standing and e.shape().covers(pt) and not in_gateway(state, e, u):
            return e
    return None


def in_gateway(state: BattleState, e: CastleElement, u: UnitState) -> bool:
    """Whether ``u`` stands in the gateway of a gate set in wall section ``e``, below the parapet: its centre
    over the gate and its footprint not wholly on the walls and towers, or wholly within the gateway in more
    than one rank (SIEGE.CASTLE.WALL: up on a wall a unit stands in one rank, so a deeper one that fits the
    gateway, say one whose rear ranks fell there, stands below; a bare position: never)."""
    pt = Point(u.x, u.y)
    gates = [g for g in state.castle if g.kind == "gate" and g.parent == e.id and g.shape().covers(pt)]
    if not gates or not hasattr(u, "files"):
        return False
    from battleline.env.rules import space

    foot = space.footprint(u)
    if u.ranks > 1 and gates[0].shape().buffer(0.01, join_style="mitre").covers(foot):
        return True
    walls = shapely.union_all([o.shape() for o in state.castle if o.kind != "gate" and o.standing])
    return not walls.buffer(0.01, join_style="mitre").covers(foot)


def units_on(state: BattleState, e: CastleElement) -> list[UnitState]:
    """Alive units standing on ``e`` (centre on the element, not in its gateway), towers' insides excluded."""
    shape = e.shape()
    return [
        u for u in state.units
        if u.alive and u.uid not in e.inside and shape.covers(Point(u.x, u.y))
        and not in_gateway(state, e, u)
    ]


def units_in(state: BattleState, e: CastleElement) -> list[UnitState]:
    """Alive units on or inside ``e`` (a tower's inside included)."""
    on = units_on(state, e)
    inner = [state.units[i] for i in e.inside if state.units[i].alive]
    return on + [u for u in inner if u not in on]


def units_within(state: BattleState, e: CastleElement, dist: float) -> list[UnitState]:
    """Alive units within ``dist`` inches of ``e`` but not on or in it (collapse hits)."""
    from battleline.env.rules import space

    shape = e.shape()
    mine = {u.uid for u in units_in(state, e)}
    return [u for u in state.units if u.alive and u.uid not in mine and shape.distance(space.footprint(u)) <= dist + 1e-9]


def passable(e: CastleElement) -> bool:
    """Whether ground troops may move through the element's outline: an open, smashed or destroyed gate, or ruins."""
    if e.kind == "gate":
        return e.gate in ("open", "smashed", "destroyed")
    return e.collapsed


def impassable_shapes(state: BattleState, u: UnitState) -> list[Polygon]:
    """The castle outlines that block ``u``'s moves (SIEGE.SCEN.CASTLE: impassable except by the SIEGE rules).

    A unit standing on a wall or tower moves along the walls normally
    (SIEGE.MOVE.WALLS), so nothing blocks it; every other unit is kept out of
    standing elements, except through an open or broken gate and, for
    infantry, the central 3" of a breach (SIEGE.DMG.WALL 19).
    """
    if not state.castle or element_under(state, u) is not None:
        return []
    gates = [e.shape() for e in state.castle if e.kind == "gate" and passable(e)]
    out: list[Polygon] = []
    for e in state.castle:
        if e.kind == "gate" or passable(e):
            continue
        shape = e.shape()
        for g in gates:
            shape = shape.difference(g.buffer(0.01, join_style="mitre"))
        if e.kind == "wall" and e.breached and u.troop_type in ("infantry", "monstrous_infantry"):
            shape = shape.difference(breach_gap(e))
        if not shape.is_empty:
            out.append(shape)
    gate_closed = [e.shape() for e in state.castle if e.kind == "gate" and not passable(e)]
    return out + gate_closed


def breach_gap(e: CastleElement) -> Polygon:
    """The central 3" of a breached wall section, across its full depth (SIEGE.DMG.WALL 19)."""
    c = e.shape().centroid
    x0, y0, x1, y1 = e.shape().bounds
    h = BREACH_WIDTH / 2
    if (x1 - x0) >= (y1 - y0):
        return box(c.x - h, y0 - 0.01, c.x + h, y1 + 0.01)
    return box(x0 - 0.01, c.y - h, x1 + 0.01, c.y + h)


def cover_for(state: BattleState, t: UnitState) -> int | None:
    """The siege cover modifier for shooting at ``t`` (None: not on an element; ruins count)."""
    if not state.castle:
        return None
    pt = Point(t.x, t.y)
    for e in state.castle:
        if e.kind != "gate" and e.shape().covers(pt):
            return e.cover()
    return None


def one_rank_ok(state: BattleState, u: UnitState) -> bool:
    """Invariant of SIEGE.CASTLE.WALL: a unit on a wall section stands in one rank."""
    e = element_under(state, u)
    return e is None or e.kind != "wall" or u.ranks == 1


def check_invariants(state: BattleState, before: list[CastleElement] | None = None) -> list[str]:
    """Castle invariants, as a list of problems (empty when they hold).

    Damage never decreases (bonus, results, flags) against ``before``; no unit
    overlaps a standing wall without standing on it in one rank; gates have a
    valid state.
    """
    problems: list[str] = []
    prior = {e.id: e for e in before or []}
    for e in state.castle:
        p = prior.get(e.id)
        if e.kind == "gate" and e.gate not in GATE_STATES:
            problems.append(f"{e.id}: bad gate state {e.gate!r}")
        if p is None:
            continue
        if e.damage_bonus < p.damage_bonus and not e.collapsed and e.gate != "destroyed":
            problems.append(f"{e.id}: damage bonus fell from {p.damage_bonus} to {e.damage_bonus}")
        if e.results[: len(p.results)] != p.results:
            problems.append(f"{e.id}: damage results were rewritten")
        for flag in ("parapet_destroyed", "breached", "partially_destroyed", "collapsed"):
            if getattr(p, flag) and not getattr(e, flag):
                problems.append(f"{e.id}: {flag} was undone")
        order = {"closed": 0, "open": 0, "smashed": 1, "destroyed": 2}
        if e.kind == "gate" and order[e.gate] < order[p.gate]:
            problems.append(f"{e.id}: gate went from {p.gate} to {e.gate}")
    from battleline.env.rules import space

    for u in state.units:
        if not u.alive:
            continue
        fp = space.footprint(u).buffer(-0.02, join_style="mitre")
        for e in state.castle:
            if e.kind != "wall" or not e.standing or not fp.intersects(e.shape()):
                continue
            if element_under(state, u) is None:
                if e.breached and fp.difference(breach_gap(e)).intersection(e.shape()).area < 1e-6:
                    continue
                gate = gate_of(state, e)
                if gate is not None and passable(gate) and fp.intersection(e.shape()).difference(gate.shape()).area < 1e-6:
                    continue
                problems.append(f"unit {u.uid} ({u.name}) stands inside wall {e.id}")
            elif not one_rank_ok(state, u):
                problems.append(f"unit {u.uid} ({u.name}) is on wall {e.id} in {u.ranks} ranks")
    return problems


def snapshot(state: BattleState) -> list[CastleElement]:
    """A deep copy of the castle (for :func:`check_invariants`)."""
    return [CastleElement.from_dict(e.to_dict()) for e in state.castle]


def bought_gates(cfg: Any) -> int:
    """How many gates the defender's army list reinforces: its ``castle_equipment: {reinforced_gate: n}``, 20 points
    each, one gate each (SIEGE.EQUIP.REINFORCED_GATE; siege.md §1.2: per gate). 0 without such a list."""
    from battleline.env.rules.config import list_armies, load_army

    side = cfg.side(cfg.castle.defender if cfg.castle is not None else "blue")
    if side.army is None or side.army not in list_armies():  # a missing list is reported by the scenario's checks
        return 0
    return max(0, load_army(side.army, validate=False).castle_equipment.get("reinforced_gate", 0))


def build_castle(cfg: Any, bought: int | None = None) -> list[CastleElement]:
    """The castle of a validated scenario with the siege module (its ``castle`` section, or the standard one).

    A gate is reinforced by the scenario (``castle.reinforced_gate``, or a custom gate's ``reinforced``) or bought
    by the defender's army list (``castle_equipment: {reinforced_gate: n}``, paid from its points): the ``n``
    bought reinforce the first ``n`` gates the scenario leaves plain, in the castle's element order
    (SIEGE.EQUIP.REINFORCED_GATE). ``bought`` overrides the army list's count (0: the scenario's castle alone).
    A count above the plain gates is refused by the scenario's checks; here the extra ones reinforce nothing.
    """
    c = cfg.castle
    tw, th = float(cfg.table[0]), float(cfg.table[1])
    if c is None:
        out = standard_castle(0, tw, th)
    elif c.layout == "standard":
        out = standard_castle(0 if c.defender == "blue" else 1, tw, th, c.material, c.reinforced_gate)
    else:
        defender = 0 if c.defender == "blue" else 1
        out = [
            CastleElement(
                id=e.id,
                kind=e.kind,
                polygon=[tuple(p) for p in e.polygon],
                defender=defender,
                material=e.material,
                outward=e.outward,
                parent=e.parent,
                reinforced=e.reinforced and e.kind == "gate",
                gate="closed" if e.kind == "gate" else "",
                controller=defender,
                victory=element_victory(e),
            )
            for e in c.elements
        ]
    plain = [e for e in out if e.kind == "gate" and not e.reinforced]
    for g in plain[: bought_gates(cfg) if bought is None else bought]:
        g.reinforced = True
    return out


def bought_gate_errors(cfg: Any) -> list[str]:
    """The defender's army list buys more reinforced gates than the castle has gates the scenario leaves plain
    (SIEGE.EQUIP.REINFORCED_GATE: one a gate); the message starts at the army list's field."""
    n = bought_gates(cfg)
    gates = [e for e in build_castle(cfg, bought=0) if e.kind == "gate"]
    done = sum(e.reinforced for e in gates)
    if n <= len(gates) - done:
        return []
    has = f"{len(gates)} gate{'s' * (len(gates) != 1)}" + (f", {done} already reinforced by the scenario" if done else "")
    return [f"castle_equipment.reinforced_gate: {n} bought, but the castle has {has}"
            + " (one reinforced gate per gate, SIEGE.EQUIP.REINFORCED_GATE)"]
