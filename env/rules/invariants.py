"""Invariants of the table: what must hold after every decision of any battle.

:func:`check_invariants` (and :meth:`env.rules.battle.Battle.check_invariants`)
looks at a battle between two decisions and returns every :class:`Violation`
of a state that cannot exist on a real table:

===================  ===================  ==============================================================
kind                 rule                 what is wrong
===================  ===================  ==============================================================
``overlap``          CORE.MOVE.ONE_INCH   two units' footprints overlap by more than EPS (0.01")
``off_table``        CORE.MOVE.TABLE_EDGE a footprint lies past a table edge by more than EPS
``impassable``       CORE.TERRAIN.TYPES   a footprint overlaps building, rocks or lake (lake: not Aquatic)
``in_castle``        SIEGE.SCEN.CASTLE    a unit off the castle stands inside a standing wall, tower or
                                          closed gate it may not enter (breach and open gates allowed)
``on_walls``         SIEGE.MOVE.WALLS     a unit up on the castle overhangs it, or stands on a wall
                                          section in more than one rank (SIEGE.CASTLE.WALL)
``castle_damage``    SIEGE.DMG.VALUE      an element's damage went down since the last check
``detached``         CORE.CC.CONTACT_KEEP two engaged units are not in base contact (more than EPS apart)
``engagement``       CORE.GEO.CONTACT     an engagement names a unit not on the table, or two friends
``models``           CORE.CC.CASUALTIES   models outside 0..start, more command models than models, or
                                          a unit with no model left still on the table
``wounds``           CORE.WOUND.APPLY     wounds on the last model outside 0..W-1
``formation``        CORE.GEO.FORMATION   fewer than one file
``joined``           CORE.MOVE.JOIN       a joined character and its host do not name each other, the
                                          host is removed, or it holds more than 2 characters
``decision``         (the stage's rule)   the pending decision has no real choice, or its legal actions
                                          cannot be computed
===================  ===================  ==============================================================

Footprints, the tolerance and the tests are the engine's own
(:func:`env.rules.space.footprint`, :data:`env.rules.geometry.EPS`,
:func:`env.rules.geometry.overlaps`, :func:`env.rules.geometry.within_table`,
:data:`env.rules.space.IMPASSABLE`, the siege's
:func:`env.rules.siege.castle.impassable_shapes` and
:func:`env.rules.siege.play.end_check`), so the checker cannot disagree with
the moves about what a legal place is.

Only units on the table are checked (``UnitState.alive``): units destroyed,
fled off the table, not yet deployed, joined to a host (they stand in its
front rank) or inside a tower (SIEGE.CASTLE.TOWER) have no footprint of their
own. The castle's damage needs the castle as it was: pass ``castle_before``
(:func:`env.rules.siege.castle.snapshot`) or check through an
:class:`InvariantTracker`, which remembers it from one check to the next.

Cost, measured on a shared 2-core machine: about 0.25 ms a check on a
``pitched_battle`` in its second or third turn (13-16 units on the table), 2-3 ms
in a siege with the tracker's castle snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import shapely

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.characters import MAX_JOINED
from battleline.env.rules.state import SIDES, BattleState, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.siege.castle import CastleElement

KINDS = ("overlap", "off_table", "impassable", "in_castle", "on_walls", "castle_damage", "detached", "engagement",
         "models", "wounds", "formation", "joined", "decision")
"""Every violation kind, in the order :func:`check_invariants` looks for them."""

DECISION_RULES = {
    "deploy": "CORE.SETUP.DEPLOY",
    "vanguard": "CORE.SETUP.VANGUARD",
    "charge": "CORE.CHARGE.DECLARE",
    "react": "CORE.REACT.DECLARE",
    "move": "CORE.MOVE.REMAINING",
    "cast": "CORE.MAGIC.CAST",
    "dispel": "CORE.MAGIC.DISPEL",
    "shoot": "CORE.SHOOT.ELIGIBLE",
    "pursue": "CORE.CC.PURSUE_CHOICE",
    "order": "CORE.CC.ROUNDS",
    "challenge": "CORE.CC.CHALLENGE.ISSUE",
    "accept": "CORE.CC.CHALLENGE.REFUSE",
}
"""The rule each stage's decision answers (the ``decision`` violations name it)."""

FORCED_STAGES = frozenset({"react", "pursue", "accept"})
"""Stages the engine always stops at (``Battle._advance``): the stage's own actions, end_phase aside, must exist."""



@dataclass(frozen=True, slots=True)
class Violation:
    """One broken invariant.

    Attributes:
        kind: one of :data:`KINDS`.
        rule: the RULESET.md rule ID the state breaks.
        units: (uid, label) of each unit concerned, label "Name (side)"; empty for the castle or a decision.
        message: what is wrong, with the numbers (inches, square inches, counts).
        last_event: the last event before the check whose acting ``unit`` is one of ``units`` (dice rolls
            aside; else the battle's last event), as "RULE.ID (turn T, phase)"; "" for a battle without events.
    """

    kind: str
    rule: str
    units: tuple[tuple[int, str], ...]
    message: str
    last_event: str

    def line(self) -> str:
        """The violation as one line: kind, rule, units, message, last event.

        e.g. ``overlap CORE.MOVE.ONE_INCH [#3 Spearmen (blue), #7 Orc Boyz (red)]: footprints overlap by
        2.0000 sq in; last event CORE.CHARGE.ALIGN (turn 2, movement)``.
        """
        who = f" [{', '.join(f'#{uid} {label}' for uid, label in self.units)}]" if self.units else ""
        return f"{self.kind} {self.rule}{who}: {self.message}; last event {self.last_event or 'none'}"

    def __str__(self) -> str:
        return self.line()


def label(u: UnitState) -> str:
    """A unit's label in violations: "Name (side)"."""
    return f"{u.name} ({SIDES[u.side]})"


def _last_event(events: list[dict[str, Any]], uids: tuple[int, ...]) -> str:
    """The last non-dice event whose ``unit`` is one of ``uids`` (else the last event), as "RULE (turn T, phase)"."""
    chosen = None
    for ev in reversed(events):
        if ev.get("kind") == "dice":
            continue
        if not uids or ev.get("unit") in uids:
            chosen = ev
            break
    if chosen is None and events:
        chosen = events[-1]
    return "" if chosen is None else f"{chosen['rule']} (turn {chosen['turn']}, {chosen['phase']})"


class _Found:
    """Collects violations, naming the last event of their units."""

    def __init__(self, state: BattleState, events: list[dict[str, Any]]) -> None:
        self.state, self.events = state, events
        self.items: list[Violation] = []

    def add(self, kind: str, rule: str, units: list[UnitState], message: str) -> None:
        uids = tuple(u.uid for u in units)
        self.items.append(Violation(kind, rule, tuple((u.uid, label(u)) for u in units), message,
                                    _last_event(self.events, uids)))


# --------------------------------------------------------------------- geometry
def _on_table(state: BattleState) -> list[UnitState]:
    """The units with a footprint of their own on the table: ``alive``, and not inside a tower (SIEGE.CASTLE.TOWER:
    a tower's inside holds units off the table's plane, ``CastleElement.inside``)."""
    inside = {uid for e in state.castle for uid in e.inside}
    return [u for u in state.units if u.alive and u.uid not in inside]


def _check_overlaps(found: _Found, units: list[UnitState], polys: np.ndarray) -> None:
    """CORE.MOVE.ONE_INCH: no unit passes through another, so no two footprints overlap by more than EPS.

    No exemption in a siege: units on the walls and units below stand at other levels but never overlap
    (:func:`env.rules.siege.orders._too_close` counts overlaps at every level).
    """
    if len(polys) < 2:
        return
    left, right = shapely.STRtree(polys).query(polys, predicate="intersects")
    for i, j in zip(left.tolist(), right.tolist(), strict=True):
        if i < j and geo.overlaps(polys[i], polys[j]):
            a, b = units[i], units[j]
            area = shapely.area(shapely.intersection(polys[i], polys[j]))
            found.add("overlap", "CORE.MOVE.ONE_INCH", [a, b], f"footprints overlap by {area:.4f} sq in")


def _check_table(found: _Found, units: list[UnitState], polys: np.ndarray) -> None:
    """CORE.MOVE.TABLE_EDGE: every footprint on the table to EPS (a fleeing unit crossing it is destroyed,
    CORE.PSY.FLEE.DESTROYED, so none is left standing past it either)."""
    s = found.state
    for u, p in zip(units, polys, strict=True):
        if not geo.within_table(p, s.table_w, s.table_h):
            x0, y0, x1, y1 = p.bounds
            past = max(-x0, -y0, x1 - s.table_w, y1 - s.table_h)
            found.add("off_table", "CORE.MOVE.TABLE_EDGE", [u],
                      f"footprint x {x0:.3f}..{x1:.3f}, y {y0:.3f}..{y1:.3f} lies {past:.3f}\" past the "
                      f"{s.table_w:g}x{s.table_h:g} table's edge")


def _check_terrain(found: _Found, units: list[UnitState], polys: np.ndarray) -> None:
    """CORE.TERRAIN.TYPES: no footprint overlaps impassable terrain (:data:`env.rules.space.IMPASSABLE`; a lake is
    open to Aquatic units, CORE.SR.AQUATIC). Flyers and Ethereal units cross it but may not end in it
    (CORE.MOVE.FLY, CORE.SR.ETHEREAL): no exemption."""
    blocks = [t for t in found.state.terrain if t.kind in space.IMPASSABLE]
    for t in blocks:
        tp = space.terrain_poly(t)
        for u, p in zip(units, polys, strict=True):
            if t.kind in space.WATER and u.has("aquatic"):
                continue
            if geo.overlaps(p, tp):
                area = shapely.area(shapely.intersection(p, tp))
                name = f" '{t.name}'" if t.name else ""
                found.add("impassable", "CORE.TERRAIN.TYPES", [u],
                          f"footprint overlaps {t.kind}{name} by {area:.4f} sq in")


def _check_castle_places(found: _Found, units: list[UnitState], polys: np.ndarray) -> None:
    """SIEGE.SCEN.CASTLE, SIEGE.MOVE.WALLS: where units may stand on and around the castle, by the moves' own tests.

    A unit off every element (centre on none: :func:`env.rules.siege.castle.element_under`) may not overlap the
    outlines that block its moves (:func:`env.rules.siege.castle.impassable_shapes`: standing walls, towers and
    closed gates; an open or broken gate's gateway and, for infantry, a breach's central 3" are open,
    SIEGE.CASTLE.GATE, SIEGE.DMG.WALL 19). A unit on an element must stand where its moves may end
    (:func:`env.rules.siege.play.end_check`): wholly on the walls and towers, and on a wall section in one
    rank (SIEGE.CASTLE.WALL). Units in a gateway stand below the parapet, on no element (``element_under``).
    """
    from battleline.env.rules.siege import castle as cs
    from battleline.env.rules.siege.play import end_check

    s = found.state
    shapes = [e.shape() for e in s.castle if e.standing]
    if not shapes:
        return
    near = shapely.intersects(polys, shapely.union_all(shapes)) if len(polys) else np.zeros(0, dtype=bool)
    for u, p, hit in zip(units, polys, near.tolist(), strict=True):
        if not hit:
            continue
        here = cs.element_under(s, u)
        if here is None:
            inside = [b for b in cs.impassable_shapes(s, u) if geo.overlaps(p, b)]
            if inside:
                area = sum(shapely.area(shapely.intersection(p, b)) for b in inside)
                found.add("in_castle", "SIEGE.SCEN.CASTLE", [u],
                          f"footprint overlaps the castle's walls, towers or closed gates by {area:.4f} sq in "
                          f"with its centre ({u.x:.3f}, {u.y:.3f}) on no element")
            continue
        ok = end_check(s, u)
        if ok is not None and not ok(p):
            found.add("on_walls", "SIEGE.MOVE.WALLS", [u],
                      f"stands on {here.kind} {here.id} in {u.ranks} rank(s), {u.width:.3f}\" x {u.depth:.3f}\", "
                      f"not wholly on the walls and towers in one rank on a wall (SIEGE.CASTLE.WALL)")


def _check_castle_damage(found: _Found, before: list[CastleElement] | None) -> None:
    """SIEGE.DMG.VALUE: an element's damage never decreases (its bonus, the results so far, parapet / breach /
    collapse, the gate's state), against the castle ``before`` (:func:`env.rules.siege.castle.check_invariants`;
    its own unit checks are made by :func:`_check_castle_places`, with the moves' tests)."""
    from battleline.env.rules.siege import castle as cs

    for problem in cs.check_invariants(found.state, before):
        if problem.startswith("unit "):
            continue
        found.add("castle_damage", "SIEGE.DMG.VALUE", [], problem)  # "S1: damage bonus fell from 3 to 1"


def _check_engagements(found: _Found) -> None:
    """CORE.GEO.CONTACT, CORE.CC.CONTACT_KEEP: engaged units are enemies on the table, in base contact (within EPS).

    Exemptions: a fight at a tower's door (SIEGE.TOWER.ASSAULT, :func:`env.rules.siege.play.door_fight`) is an
    engagement without base contact. A pair of which a unit lost models before its combat's round had a result
    (impact hits or a breath weapon before a challenge, a spell or a miscast in the Magic phase; its host wiped
    out, a character left alone): the unit carries :data:`env.rules.casualties.SHRANK` naming the other, and
    CORE.CC.CONTACT_KEEP has the round's winner close up, so the gap stands until that round's result
    (:func:`env.rules.combat.close_gaps`, which clears the flag). Climbers on ladders fight from the foot of the
    wall, touching the defenders' front on the parapet (SIEGE.ASSAULT.CLIMB): no exemption.
    """
    from battleline.env.rules.casualties import SHRANK

    s = found.state
    for e in s.engagements:
        a, d = s.units[e.attacker], s.units[e.defender]
        gone = [u for u in (a, d) if not u.alive]
        if gone:
            found.add("engagement", "CORE.GEO.CONTACT", [a, d],
                      f"engaged ({e.facing}) with {', '.join(f'#{u.uid}' for u in gone)} not on the table as a unit "
                      f"(removed {gone[0].removed}, models {gone[0].models}, joined to {gone[0].joined_to})")
            continue
        if a.side == d.side:
            found.add("engagement", "CORE.GEO.CONTACT", [a, d], "engaged with a friend")
            continue
        gap = geo.distance(space.footprint(a), space.footprint(d))
        if gap <= geo.EPS:
            continue
        if d.uid in a.flags.get(SHRANK, ()) or a.uid in d.flags.get(SHRANK, ()):
            continue  # CORE.CC.CONTACT_KEEP: the close-up waits for the round's winner
        if s.castle:
            from battleline.env.rules.siege.play import door_fight

            if door_fight(s, a, d) is not None:
                continue
        found.add("detached", "CORE.CC.CONTACT_KEEP", [a, d],
                  f"engaged ({e.facing}, round {e.rounds}) but {gap:.3f}\" apart")


# --------------------------------------------------------------------- the units' own numbers
def _check_numbers(found: _Found) -> None:
    """CORE.CC.CASUALTIES, CORE.WOUND.APPLY, CORE.GEO.FORMATION, CORE.MOVE.JOIN for every unit, on the table or not."""
    from battleline.env.rules.casualties import command_models

    s = found.state
    for u in s.units:
        if not 0 <= u.models <= u.start_models:
            found.add("models", "CORE.CC.CASUALTIES", [u], f"{u.models} models, {u.start_models} at the start")
        if command_models(u) > max(0, u.models):
            found.add("models", "CORE.CC.CASUALTIES", [u],
                      f"{command_models(u)} command models (champion {u.champion}, standard {u.standard}, "
                      f"musician {u.musician}) in {u.models} models")
        if u.models <= 0 and u.deployed and not u.removed:
            found.add("models", "CORE.CC.CASUALTIES", [u], "no model left but not removed")
        if not 0 <= u.wounds_taken < max(1, u.profile.W):
            found.add("wounds", "CORE.WOUND.APPLY", [u],
                      f"{u.wounds_taken} wounds on the last model of W {u.profile.W}")
        if u.files < 1:
            found.add("formation", "CORE.GEO.FORMATION", [u], f"{u.files} files")
        _check_joined(found, u)


def _check_joined(found: _Found, u: UnitState) -> None:
    """CORE.MOVE.JOIN: a joined character and its host name each other, the host has models and is not removed
    (before deployment neither is on the table); at most 2 joined."""
    s = found.state
    if u.joined_to is not None and not u.removed:
        h = s.units[u.joined_to]
        if u.uid not in h.joined or h.removed or h.models <= 0 or h.joined_to is not None:
            found.add("joined", "CORE.MOVE.JOIN", [u, h],
                      f"joined to #{h.uid}, whose joined list is {h.joined} (removed {h.removed}, models {h.models})")
    live = [c for c in u.joined if not s.units[c].removed]
    if len(live) > MAX_JOINED:
        found.add("joined", "CORE.MOVE.JOIN", [u], f"{len(live)} characters joined: {live}")
    for c in live:
        if s.units[c].joined_to != u.uid:
            found.add("joined", "CORE.MOVE.JOIN", [u, s.units[c]],
                      f"lists #{c} as joined, which is joined to {s.units[c].joined_to}")


# --------------------------------------------------------------------- the decision
def _check_decision(found: _Found, battle: Battle) -> None:
    """The pending decision has a real choice: the engine stops only where a player must choose.

    At ``react``, ``pursue`` and ``accept`` (:data:`FORCED_STAGES`) the stage's own actions must exist (end_phase
    alone would answer a question nobody can ask); elsewhere the engine stops only with something besides
    end_phase (``Battle._advance``), except ``challenge``, where passing is the choice. The pending unit of a
    reaction or pursuit is in play. An exception while listing the legal actions is a violation too.
    """
    from battleline.env.rules.actions import END_PHASE

    s = battle.state
    if s.over:
        return
    stage = s.stage
    rule = DECISION_RULES.get(stage, "CORE.GAME.PHASES")
    who: list[UnitState] = []
    try:
        pending = battle.pending
        who = [s.units[pending.unit]] if pending.unit is not None and 0 <= pending.unit < len(s.units) else []
        legal = battle.legal_actions()
    except Exception as exc:  # noqa: BLE001 - any failure to say who decides, or to list the choices, is the violation
        found.add("decision", rule, who, f"stage '{stage}': the pending decision raises {type(exc).__name__}: {exc}")
        return
    if pending.player not in (0, 1):
        found.add("decision", rule, who, f"stage '{stage}' waits on player {pending.player!r}")
    if stage in ("react", "pursue") and who and not who[0].in_play:
        found.add("decision", rule, who, f"stage '{stage}' asks a unit that is not in play")
    own = [a for a in legal if a != END_PHASE]
    if not own and stage != "challenge":
        found.add("decision", rule, who, f"stage '{stage}' ({pending.kind}) stops with end_phase its only action")


# --------------------------------------------------------------------- entry points
def check_invariants(battle: Battle, castle_before: list[CastleElement] | None = None) -> list[Violation]:
    """Every invariant the battle breaks now (see the module's table); empty when the state could stand on a table.

    Args:
        battle: the battle between two decisions (after ``apply`` returned, or as built).
        castle_before: the castle at the previous check (:func:`env.rules.siege.castle.snapshot`); None skips
            the damage comparison (SIEGE.DMG.VALUE) but not the gate states.

    Returns:
        The violations, in :data:`KINDS` order per check; reading the state changes nothing in it.
    """
    s = battle.state
    found = _Found(s, battle.events)
    units = _on_table(s)
    polys = np.array([space.footprint(u) for u in units], dtype=object)
    _check_overlaps(found, units, polys)
    _check_table(found, units, polys)
    _check_terrain(found, units, polys)
    if s.castle:
        _check_castle_places(found, units, polys)
        _check_castle_damage(found, castle_before)
    _check_engagements(found)
    _check_numbers(found)
    _check_decision(found, battle)
    return found.items


class InvariantTracker:
    """Checks one battle decision after decision, remembering the castle from one check to the next
    (SIEGE.DMG.VALUE: damage never decreases between two checks).

    ``tracker = InvariantTracker(); for each decision: battle.apply(a); problems = tracker.check(battle)``.
    """

    def __init__(self) -> None:
        self._castle: list[CastleElement] | None = None

    def check(self, battle: Battle) -> list[Violation]:
        """:func:`check_invariants` against the castle of the previous check; remembers this one."""
        out = check_invariants(battle, self._castle)
        if battle.state.castle:
            from battleline.env.rules.siege.castle import snapshot

            self._castle = snapshot(battle.state)
        return out
