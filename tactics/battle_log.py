"""A finished battle's event log made ready for the tactic detectors: units, positions, charges, flights.

:class:`BattleLog` reads the event log once (plus the final state for the units' profiles and
the scenario for their starting formations) and keeps what the detectors of
:mod:`tactics.detectors` ask of it: each unit's roster facts (:class:`UnitInfo`), a
:class:`Snapshot` of the units' :class:`Pose` after deployment and at the start, after the
movement and at the end of each :class:`PlayerTurn`, the declared charges (:class:`Charge`),
the flights (:class:`Flight`), volleys, rallies, pursuits and destroyed units. It also
answers the geometry the detectors share: footprints and distances (inches), arcs, charge
reach and threat (CORE.CHARGE.ELIGIBLE), control of table space and chokepoints between
terrain features. Nothing is re-simulated.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import shapely
from shapely.ops import nearest_points

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.charges import CHARGE_BONUS_REACH, FLYER_CHARGE_REACH
from battleline.env.rules.config import read_file_text
from battleline.env.rules.state import TerrainFeature, UnitState
from battleline.env.rules.tables import MISSILE_WEAPONS

try:  # war machines (CORE.WM.*) are newer than the rest of the engine
    from battleline.env.rules.war_machine_profiles import MACHINES as _MACHINES
except ImportError:  # pragma: no cover
    _MACHINES = {}

# ============================================================================ the log's settings
# control areas and chokepoints (tactics.md §2.2, §3.1)
CONTROL_GRID = 2.0
"""Spacing in inches of the grid of table points sampled for control areas."""
CHOKE_GAP = 10.0
"""Two difficult or impassable features closer than this (inches) make a chokepoint."""

US_PER_MODEL = {"infantry": 1, "monstrous_infantry": 3, "cavalry": 2, "chariot": 4, "war_machine": 1}
"""Unit Strength per model (CORE.SR.UNIT_STRENGTH); monsters count their Wounds."""

POSITION_RULES = frozenset({
    "CORE.SETUP.DEPLOY", "CORE.SETUP.SCOUTS", "CORE.MOVE.NORMAL", "CORE.MOVE.MARCH", "CORE.MOVE.WHEEL",
    "CORE.MOVE.TURN", "CORE.MOVE.REFORM", "CORE.CHARGE.MOVE", "CORE.CHARGE.FAILED", "CORE.PSY.FLEE.MOVE",
    "CORE.CC.PURSUIT_MOVE", "CORE.MOVE.LEAVE", "CORE.SETUP.VANGUARD", "CORE.TYPE.CHARACTER",
})
"""Events whose x, y and facing (``heading`` for CORE.CHARGE.MOVE) are the unit's new position."""
MOVE_RULES = frozenset({"CORE.MOVE.NORMAL", "CORE.MOVE.MARCH", "CORE.MOVE.WHEEL", "CORE.MOVE.TURN", "CORE.MOVE.REFORM"})
DESTROY_RULES = frozenset({"CORE.CC.CAUGHT", "CORE.PSY.FLEE.DESTROYED", "CORE.CHARGE.VS_FLEEING"})
"""Events that remove a unit; SIEGE.BREAK.DEFENDER does too when it says ``destroyed`` (:func:`_destroys`)."""


def _destroys(e: dict[str, Any]) -> bool:
    """Whether event ``e`` removes its unit: a DESTROY_RULES event, or a wall's broken defender caught by the
    climbers (SIEGE.BREAK.DEFENDER with ``destroyed``; its roll event has none)."""
    return e["rule"] in DESTROY_RULES or (e["rule"] == "SIEGE.BREAK.DEFENDER" and e.get("destroyed") is True)


# ============================================================================ the log
@dataclass(frozen=True, slots=True)
class UnitInfo:
    """What detectors need of a unit (fixed through the battle)."""

    uid: int
    side: int
    name: str
    troop_type: str
    rules: frozenset[str]
    missile: str | None
    points: int
    M: float
    W: int
    base_w: float
    base_d: float
    files0: int
    models0: int
    character: bool
    general: bool
    wizard: bool = False

    @property
    def fast(self) -> bool:
        """Fast unit (CAV/FC/FLY, tactics.md §0.2), characters excluded."""
        return not self.character and (self.troop_type == "cavalry" or "fast_cavalry" in self.rules or "fly" in self.rules)

    @property
    def heavy_cavalry(self) -> bool:
        """HC: cavalry without Fast Cavalry, not a character."""
        return self.troop_type == "cavalry" and "fast_cavalry" not in self.rules and not self.character

    @property
    def infantry(self) -> bool:
        """INF: a non-character infantry block (Scouts excluded: they deploy by their own rule)."""
        return self.troop_type == "infantry" and not self.character and "scouts" not in self.rules

    @property
    def shooter(self) -> bool:
        """SHOOT or WM: a unit with a missile weapon or a war machine, neither a character nor fast."""
        return self.missile is not None and not self.character and not self.fast

    @property
    def scout(self) -> bool:
        """Whether the unit has the Scouts special rule (CORE.SR.SCOUTS: it deploys under CORE.SETUP.SCOUTS)."""
        return "scouts" in self.rules

    @property
    def reach(self) -> float:
        """Charge reach: M + 6", 16" for flyers (CORE.CHARGE.ELIGIBLE)."""
        return FLYER_CHARGE_REACH if "fly" in self.rules else self.M + CHARGE_BONUS_REACH

    @property
    def war_machine(self) -> bool:
        """WM (CORE.TYPE.WAR_MACHINE)."""
        return self.troop_type == "war_machine"

    @property
    def missile_range(self) -> float:
        """Longest range of its missile weapon or war machine (CORE.SHOOT.WEAPONS, CORE.WM.*); 0 without one."""
        if self.missile in MISSILE_WEAPONS:
            return MISSILE_WEAPONS[self.missile].range
        machine = _MACHINES.get(self.missile or "")
        return float(machine.max_range) if machine is not None else 0.0

    @property
    def label(self) -> str:
        """The name and uid, as evidence strings name the unit: "<name> #<uid>"."""
        return f"{self.name} #{self.uid}"

    def strength(self, models: int) -> int:
        """Unit Strength with ``models`` models (CORE.SR.UNIT_STRENGTH)."""
        if self.troop_type == "monster":
            return self.W * models
        return US_PER_MODEL.get(self.troop_type, 1) * models


@dataclass(frozen=True, slots=True)
class Pose:
    """A unit's position and formation at one moment."""

    x: float
    y: float
    facing: float
    files: int
    models: int
    fleeing: bool = False


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Units on the table at one moment: uid -> pose, the engaged uids, joined character -> host, and the
    Movement of units a lasting spell changes at that moment (uid -> M; ``grounded``: Fly taken away)."""

    poses: dict[int, Pose]
    engaged: frozenset[int]
    hosts: dict[int, int] = field(default_factory=dict)
    moves: dict[int, float] = field(default_factory=dict)
    grounded: frozenset[int] = frozenset()


@dataclass(slots=True)
class PlayerTurn:
    """One player turn: its index in the battle, game turn, player, events [first, stop) and snapshots."""

    index: int
    turn: int
    player: int
    first: int
    stop: int = 0
    start: Snapshot | None = None
    moved: Snapshot | None = None
    end: Snapshot | None = None


@dataclass(slots=True)
class Charge:
    """A declared charge and how it ended (CORE.CHARGE.DECLARE, MOVE, FAILED)."""

    unit: int
    target: int
    declared: str
    event: int
    pt: int
    turn: int
    landed: str | None = None
    landed_event: int | None = None
    vs_fleeing: bool = False


@dataclass(slots=True)
class Flight:
    """A unit starting to flee: a Flee! reaction, a lost break test or a failed Panic test."""

    unit: int
    cause: str
    event: int
    pt: int
    turn: int
    charger: int | None = None
    first: bool = True
    pursuers: tuple[int, ...] = ()
    combat: tuple[int, ...] = ()


def _unit_info(u: UnitState, files0: int | None, m_change: float = 0.0) -> UnitInfo:
    """The unit's roster facts; ``m_change`` is what lasting spells still on it at the end did to its M (the
    final state's profile carries it), so that ``M`` is its own Movement."""
    return UnitInfo(
        uid=u.uid, side=u.side, name=u.name, troop_type=u.troop_type, rules=frozenset(u.special_rules),
        missile=u.missile, points=u.points, M=float(u.profile.M) - m_change, W=u.profile.W, base_w=u.base_w, base_d=u.base_d,
        files0=files0 if files0 is not None else u.files, models0=u.start_models, character=u.character,
        general=u.general, wizard=getattr(u, "wizard_level", 0) > 0,
    )


def _initial_files(scenario: dict[str, Any] | None, seed: int, units: list[UnitState]) -> dict[int, int]:
    """Each unit's files before the battle, rebuilt from the scenario (CORE.SETUP.*).

    Empty when the scenario cannot be built, or builds other units than ``units`` (the
    configuration files changed since the battle): the final files are used then.
    """
    if not scenario:
        return {}
    try:
        from battleline.env.rules.battle import Battle

        b = Battle.from_scenario(scenario, seed=seed)
    except Exception:  # noqa: BLE001 - a hand-made log may carry no buildable scenario
        return {}
    if [(u.uid, u.type_id, u.side) for u in b.state.units] != [(u.uid, u.type_id, u.side) for u in units]:
        return {}
    return {u.uid: u.files for u in b.state.units}


class BattleLog:
    """A battle's event log made ready for the detectors: units, positions per player turn, charges, flights.

    Args:
        events: the event log (dicts with ``rule``, ``turn``, ``phase``).
        units: the units (final state); only their profiles and sides are read.
        terrain: terrain features.
        table_w, table_h: table size (inches).
        files0: uid -> files at the start (default: the units' final files).
        effects: the lasting spell effects still on at the end (the final state's ``effects``): their
            ``applied`` M is taken off the final profiles.
    """

    def __init__(
        self,
        events: list[dict[str, Any]],
        units: Iterable[UnitState],
        terrain: Iterable[TerrainFeature] = (),
        table_w: float = 72.0,
        table_h: float = 48.0,
        files0: dict[int, int] | None = None,
        effects: Iterable[dict[str, Any]] = (),
    ) -> None:
        files0 = files0 or {}
        self.events = [e for e in events if e.get("kind") != "dice"]
        m_change: dict[int, float] = defaultdict(float)
        for eff in effects:
            m_change[eff.get("target")] += float((eff.get("applied") or {}).get("M", 0))
        self.units: dict[int, UnitInfo] = {u.uid: _unit_info(u, files0.get(u.uid), m_change.get(u.uid, 0.0))
                                           for u in units}
        self.terrain = list(terrain)
        self.table_w, self.table_h = float(table_w), float(table_h)
        self.zone_depth = 12.0
        self.turns: list[PlayerTurn] = []
        self.pt_of: list[int] = []
        self.deployed = Snapshot({}, frozenset())
        self.placed: dict[int, Pose] = {}  # uid -> pose where CORE.SETUP.DEPLOY put it (before Vanguard moves)
        self.deploy_order: dict[int, list[int]] = {0: [], 1: []}
        self.charges: list[Charge] = []
        self.flights: list[Flight] = []
        self.moves: list[tuple[int, int, dict[str, Any]]] = []  # (event index, pt, event)
        self.volleys: list[tuple[int, int, dict[str, Any]]] = []  # CORE.SHOOT.ALLOCATE
        self.rallies: list[tuple[int, int]] = []  # (event index, uid) of passed rallies
        self.pursuits: list[tuple[int, int, str, tuple[int, ...]]] = []  # (event, uid, choice, combat units)
        self.pursuit_moves: list[tuple[int, int, Pose]] = []  # (event, uid, pose)
        self.destroyed: list[tuple[int, int, str, bool]] = []  # (event, uid, rule, off_table)
        self.panic_tests: list[tuple[int, int]] = []  # (event, uid)
        self._fp_cache: dict[tuple, shapely.Polygon] = {}
        self._grid: np.ndarray | None = None
        self._build()

    # ------------------------------------------------------------------ building
    def _build(self) -> None:
        poses: dict[int, Pose] = {}
        engaged: set[frozenset[int]] = set()
        current: PlayerTurn | None = None
        pending: dict[tuple[int, int, int], Charge] = {}
        combat: tuple[int, ...] = ()
        broken: dict[int, Flight] = {}
        joined: dict[int, int] = {}  # character -> host (CORE.MOVE.JOIN): it stands where its host stands
        spells: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)  # target -> spell -> mods of its lasting effect
        moves: dict[int, float] = {}
        grounded: set[int] = set()

        def snap() -> Snapshot:
            return Snapshot(dict(poses), frozenset(u for pair in engaged for u in pair), dict(joined), dict(moves),
                            frozenset(grounded))

        def spell_moves(uid: int) -> None:
            """The M of ``uid`` under its lasting spells (CORE.MAGIC.DURATION), applied in the order they were
            cast as the rules engine applies them: + the M modifier, then halved rounding up."""
            moves.pop(uid, None)
            grounded.discard(uid)
            m = self.units[uid].M
            for mods in spells[uid].values():
                m += float(mods.get("M", 0))
                if mods.get("halve_M") or mods.get("difficult"):
                    m = float(math.ceil(m / 2))
                if mods.get("no_fly"):
                    grounded.add(uid)
            if m != self.units[uid].M:
                moves[uid] = max(0.0, m)

        def carry(host: int) -> None:
            """Joined characters stand where their host stands."""
            hp = poses[host]
            for c in [c for c, h in joined.items() if h == host]:
                old_c = poses.get(c)
                info_c = self.units[c]
                poses[c] = Pose(hp.x, hp.y, hp.facing, old_c.files if old_c else info_c.files0,
                                old_c.models if old_c else info_c.models0, hp.fleeing)

        def drop(uid: int) -> None:
            for pair in [p for p in engaged if uid in p]:
                engaged.discard(pair)

        for i, e in enumerate(self.events):
            rule = e["rule"]
            if rule == "CORE.GAME.PHASES":
                started = e.get("phase_started")
                if started == "start":
                    if current is None:
                        self.deployed = snap()
                    else:
                        current.stop, current.end = i, snap()
                        current.moved = current.moved or current.end
                    current = PlayerTurn(len(self.turns), int(e["turn"]), int(e.get("player", 0)), i, start=snap())
                    self.turns.append(current)
                    pending = {}
                elif started in ("magic", "shooting", "combat") and current is not None and current.moved is None:
                    current.moved = snap()
            pt = current.index if current is not None else -1
            self.pt_of.append(pt)
            turn = int(e.get("turn", 0))
            uid = e.get("unit")
            if rule == "CORE.SETUP.ZONES":
                self.zone_depth = float(e.get("depth", self.zone_depth))
            elif rule == "CORE.MOVE.JOIN" and uid in self.units and e.get("host") in self.units:
                joined[uid] = int(e["host"])
                if joined[uid] in poses:
                    carry(joined[uid])
            elif rule in ("CORE.MOVE.LEAVE", "CORE.TYPE.CHARACTER"):
                joined.pop(uid, None)
            elif rule == "CORE.MAGIC.DURATION" and e.get("target") in self.units:
                target = int(e["target"])
                spells[target].pop(str(e.get("spell")), None)  # a re-cast replaces the effect
                if e.get("started"):
                    spells[target][str(e.get("spell"))] = dict(e.get("mods") or {})
                spell_moves(target)
            if rule in POSITION_RULES and uid in self.units and "x" in e:
                old = poses.get(uid)
                info = self.units[uid]
                facing = e.get("heading", e.get("facing"))
                if facing is None:  # e.g. CORE.TYPE.CHARACTER carries no facing: keep the last one
                    facing = old.facing if old else (90.0 if info.side == 0 else 270.0)
                poses[uid] = Pose(
                    float(e["x"]), float(e["y"]), float(facing) % 360.0,
                    int(e.get("files") or (old.files if old else info.files0)),
                    old.models if old else info.models0,
                    rule == "CORE.PSY.FLEE.MOVE" or (old.fleeing if old else False),
                )
                if rule == "CORE.SETUP.DEPLOY" and not e.get("placed") and e.get("side") in (0, 1):
                    self.deploy_order[int(e["side"])].append(uid)
                if rule == "CORE.SETUP.DEPLOY" and current is None:
                    self.placed[uid] = poses[uid]
                for c in e.get("joined") or ():
                    if c in self.units:
                        joined[int(c)] = uid
                carry(uid)
                if rule in MOVE_RULES and pt >= 0:
                    self.moves.append((i, pt, e))
                if rule == "CORE.PSY.FLEE.MOVE":
                    drop(uid)
                if rule == "CORE.CC.PURSUIT_MOVE":
                    self.pursuit_moves.append((i, uid, poses[uid]))
            if rule == "CORE.CHARGE.DECLARE" and uid in self.units:
                ch = Charge(uid, int(e["target"]), str(e.get("facing")), i, pt, turn)
                self.charges.append(ch)
                pending[(uid, ch.target, pt)] = ch
            elif rule == "CORE.CHARGE.MOVE" and uid in self.units:
                ch = pending.get((uid, int(e["target"]), pt))
                if ch is not None:
                    ch.landed_event = i
                    if e.get("facing") is None:
                        ch.vs_fleeing = True
                    else:
                        ch.landed = str(e["facing"])
                if e.get("facing") is not None:
                    engaged.add(frozenset((uid, int(e["target"]))))
            elif rule == "CORE.CC.PURSUIT_CONTACT" and uid in self.units:
                engaged.add(frozenset((uid, int(e["target"]))))
            elif rule == "CORE.REACT.DECLARE" and e.get("reaction") == "flee" and uid in self.units:
                was = poses.get(uid)
                self.flights.append(Flight(uid, "reaction", i, pt, turn, charger=e.get("charger"),
                                           first=not (was and was.fleeing)))
            elif rule == "CORE.CC.SEQUENCE":
                combat = tuple(int(u) for u in e.get("units", []))
                broken = {}
            elif rule == "CORE.CC.BREAK_TEST" and e.get("passed") is False and uid in self.units:
                fl = Flight(uid, "break", i, pt, turn, combat=combat)
                self.flights.append(fl)
                broken[uid] = fl
            elif rule == "CORE.PSY.PANIC.FAIL" and uid in self.units:
                self.flights.append(Flight(uid, "panic", i, pt, turn))
            elif rule == "CORE.PSY.PANIC.TEST" and uid in self.units:
                self.panic_tests.append((i, uid))
            elif rule == "CORE.CC.PURSUE_CHOICE" and "choice" in e and uid in self.units:
                self.pursuits.append((i, uid, str(e["choice"]), combat))
                if e["choice"] == "pursue":
                    for fl in broken.values():
                        if uid in fl.combat and self.units[uid].side != self.units[fl.unit].side:
                            fl.pursuers = tuple(sorted(set(fl.pursuers) | {uid}))
            elif (rule in ("CORE.SHOOT.ALLOCATE", "CORE.WM.FIRE_RULES") and uid in self.units
                  and e.get("target") in self.units):
                self.volleys.append((i, pt, e))  # a volley, magic missile or war machine shot: unit -> target
            elif rule == "CORE.WM.MOVE" and uid in poses and e.get("facing") is not None:
                p = poses[uid]  # a free pivot: the facing changes, the position stays
                poses[uid] = Pose(p.x, p.y, float(e["facing"]) % 360.0, p.files, p.models, p.fleeing)
            elif rule == "CORE.PSY.RALLY" and e.get("passed") and not e.get("automatic") and uid in self.units:
                self.rallies.append((i, uid))
                if uid in poses:
                    p = poses[uid]
                    poses[uid] = Pose(p.x, p.y, p.facing, p.files, p.models, False)
            elif rule == "CORE.CC.CASUALTIES" and uid in self.units and uid in poses:
                p = poses[uid]
                models = int(e.get("models", p.models))
                poses[uid] = Pose(p.x, p.y, p.facing, p.files, models, p.fleeing)
                if models <= 0:
                    self.destroyed.append((i, uid, rule, False))
            if _destroys(e) and uid in self.units:
                self.destroyed.append((i, uid, rule, bool(e.get("off_table"))))
            if (_destroys(e) or (rule == "CORE.CC.CASUALTIES" and e.get("models", 1) <= 0)) and uid in poses:
                del poses[uid]
                drop(uid)
        if current is None:
            self.deployed = snap()
        else:
            current.stop, current.end = len(self.events), snap()
            current.moved = current.moved or current.end

    # ------------------------------------------------------------------ construction helpers
    @classmethod
    def from_any(cls, battle_or_replay: Any) -> BattleLog:
        """A log from a Battle, a BattleLog, a replay path, replay JSON text or a parsed replay dict.

        Raises:
            ValueError: the input is not a battle or a battleline replay; ConfigError (a ValueError): a
                replay path cannot be read (one line: not found, a directory, not UTF-8 text).
        """
        if isinstance(battle_or_replay, BattleLog):
            return battle_or_replay
        if isinstance(battle_or_replay, Path) or (isinstance(battle_or_replay, str)
                                                   and not battle_or_replay.lstrip().startswith("{")):
            return cls.from_any(read_file_text(Path(battle_or_replay)))  # ConfigError: one line
        if isinstance(battle_or_replay, str):
            try:
                data = json.loads(battle_or_replay)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno})") from None
            return cls.from_any(data)
        if isinstance(battle_or_replay, dict):
            from battleline.env.rules.state import BattleState

            try:
                state = BattleState.from_dict(battle_or_replay["state"])
                events = battle_or_replay["events"]
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"not a battleline replay ({type(exc).__name__}: {exc})") from None
            return cls._from_parts(events, state, battle_or_replay.get("scenario"), battle_or_replay.get("seed", 0))
        if hasattr(battle_or_replay, "events") and hasattr(battle_or_replay, "state"):
            return cls._from_parts(battle_or_replay.events, battle_or_replay.state,
                                   getattr(battle_or_replay, "scenario", None), getattr(battle_or_replay, "seed", 0))
        raise ValueError(f"not a battle or a replay: {type(battle_or_replay).__name__}")

    @classmethod
    def _from_parts(cls, events: list[dict[str, Any]], state: Any, scenario: Any, seed: Any) -> BattleLog:
        files0 = _initial_files(scenario if isinstance(scenario, dict) else None, int(seed or 0), list(state.units))
        return cls(events, state.units, state.terrain, state.table_w, state.table_h, files0,
                   getattr(state, "effects", ()))

    # ------------------------------------------------------------------ frames and sides
    def own_x(self, side: int, x: float) -> float:
        """Inches from ``side``'s own left edge (red faces the other way)."""
        return x if side == 0 else self.table_w - x

    def own_y(self, side: int, y: float) -> float:
        """Inches from ``side``'s own table edge."""
        return y if side == 0 else self.table_h - y

    def side_units(self, side: int) -> list[UnitInfo]:
        """The units of ``side`` (0 blue, 1 red), as listed at the start of the battle."""
        return [u for u in self.units.values() if u.side == side]

    def side_points(self, side: int) -> int:
        """Points of ``side``'s units (at least 1, so that shares never divide by zero)."""
        return sum(u.points for u in self.side_units(side)) or 1

    def player_turns(self, side: int) -> list[PlayerTurn]:
        """The player turns in which ``side`` was the phasing player, in game order."""
        return [p for p in self.turns if p.player == side]

    def turn_end(self, turn: int) -> Snapshot | None:
        """The snapshot at the end of game turn ``turn`` (0: after deployment); None if not reached."""
        if turn <= 0:
            return self.deployed
        ends = [p.end for p in self.turns if p.turn == turn]
        return ends[-1] if ends else None

    def event_turn(self, i: int) -> int:
        """The game turn of event ``i`` of the log (0 before the first turn)."""
        return int(self.events[i].get("turn", 0))

    # ------------------------------------------------------------------ geometry
    def dims(self, uid: int, p: Pose) -> tuple[float, float]:
        """Footprint width and depth of unit ``uid`` in pose ``p`` (CORE.GEO.FOOTPRINT)."""
        u = self.units[uid]
        if u.war_machine:  # the crew is abstracted into one model on one base (CORE.WM.*)
            return u.base_w, u.base_d
        models = max(1, p.models)
        files = max(1, p.files)
        return min(files, models) * u.base_w, math.ceil(models / files) * u.base_d

    def footprint(self, uid: int, p: Pose) -> shapely.Polygon:
        """The footprint polygon (inches) of unit ``uid`` in pose ``p`` (CORE.GEO.FOOTPRINT), cached per pose."""
        key = (uid, p.x, p.y, p.facing, p.files, p.models)
        poly = self._fp_cache.get(key)
        if poly is None:
            w, d = self.dims(uid, p)
            poly = self._fp_cache[key] = geo.footprint(geo.Pose(p.x, p.y, p.facing), w, d)
        return poly

    def distance(self, a: int, pa: Pose, b: int, pb: Pose) -> float:
        """Closest distance in inches between the footprints of ``a`` in pose ``pa`` and ``b`` in pose ``pb``."""
        return geo.distance(self.footprint(a, pa), self.footprint(b, pb))

    def arc(self, target: int, pt: Pose, x: float, y: float) -> str:
        """The arc of ``target`` (in pose ``pt``) a table point lies in (CORE.GEO.ARCS)."""
        w, d = self.dims(target, pt)
        lx, ly = geo.to_local(geo.Pose(pt.x, pt.y, pt.facing), x, y)
        return geo.point_arc(lx, ly, w / 2, d / 2)

    def front_edge_y(self, uid: int, p: Pose) -> float:
        """Own-frame depth (inches from the own edge) of the middle of the unit's front edge."""
        _, d = self.dims(uid, p)
        fx, fy = geo.to_world(geo.Pose(p.x, p.y, p.facing), 0.0, d / 2)
        return self.own_y(self.units[uid].side, fy)

    def can_charge(self, snap: Snapshot, uid: int) -> bool:
        """Whether ``uid`` is on the table in ``snap``, not fleeing, not engaged and not a war machine."""
        p = snap.poses.get(uid)
        return p is not None and not p.fleeing and uid not in snap.engaged and self.units[uid].troop_type != "war_machine"

    def reach(self, snap: Snapshot, uid: int) -> float:
        """Charge reach of ``uid`` at this snapshot (CORE.CHARGE.ELIGIBLE): M + 6", 16" for flyers, with the M
        its lasting spells give it then (e.g. Curse of Storms halves it and grounds flyers)."""
        u = self.units[uid]
        if "fly" in u.rules and uid not in snap.grounded:
            return FLYER_CHARGE_REACH
        return snap.moves.get(uid, u.M) + CHARGE_BONUS_REACH

    def threatens(self, snap: Snapshot, a: int, t: int) -> bool:
        """Whether ``a`` could charge ``t`` from this snapshot: ``t`` partly in its vision arc and within reach."""
        if not self.can_charge(snap, a) or t not in snap.poses:
            return False
        pa, pt = snap.poses[a], snap.poses[t]
        reach = self.reach(snap, a)
        if math.hypot(pa.x - pt.x, pa.y - pt.y) > reach + 20.0:
            return False
        tp = self.footprint(t, pt)
        if geo.distance(self.footprint(a, pa), tp) > reach:
            return False
        w, d = self.dims(a, pa)
        return geo.partly_in_vision_arc(geo.Pose(pa.x, pa.y, pa.facing), w, d, tp)

    def threats_on(self, snap: Snapshot, t: int, by_side: int) -> list[int]:
        """Units of ``by_side`` that threaten ``t``."""
        return [a for a in sorted(snap.poses) if self.units[a].side == by_side and self.threatens(snap, a, t)]

    def grid(self) -> np.ndarray:
        """Table points sampled for control areas, shape (n, 2)."""
        if self._grid is None:
            xs = np.arange(CONTROL_GRID / 2, self.table_w, CONTROL_GRID)
            ys = np.arange(CONTROL_GRID / 2, self.table_h, CONTROL_GRID)
            gx, gy = np.meshgrid(xs, ys)
            self._grid = np.column_stack([gx.ravel(), gy.ravel()])
        return self._grid

    def zone_mask(self, snap: Snapshot, side: int, pts: np.ndarray | None = None) -> np.ndarray:
        """Which points lie in ``side``'s threat zone (front arc and within reach of a unit that can charge)."""
        pts = self.grid() if pts is None else pts
        mask = np.zeros(len(pts), dtype=bool)
        for uid, p in snap.poses.items():
            if self.units[uid].side != side or not self.can_charge(snap, uid):
                continue
            w, d = self.dims(uid, p)
            r = math.radians(p.facing)
            c, s = math.cos(r), math.sin(r)
            dx, dy = pts[:, 0] - p.x, pts[:, 1] - p.y
            lx, ly = dx * s - dy * c, dx * c + dy * s
            ax = np.abs(lx) - w / 2
            fy = ly - d / 2
            front = (fy > 0) & (fy >= ax)
            dist = np.hypot(np.maximum(ax, 0.0), np.maximum(fy, 0.0))
            mask |= front & (dist <= self.reach(snap, uid))
        return mask

    def control_share(self, snap: Snapshot, side: int) -> float:
        """area(control(side)) / (area(control(side)) + area(control(enemy))), 0.5 when neither controls any."""
        own, opp = self.zone_mask(snap, side), self.zone_mask(snap, 1 - side)
        a, b = int(np.sum(own & ~opp)), int(np.sum(opp & ~own))
        return 0.5 if a + b == 0 else a / (a + b)

    def in_control(self, snap: Snapshot, side: int, x: float, y: float) -> bool:
        """Whether table point (x, y) in inches lies in ``side``'s threat zone and not in the enemy's."""
        pts = np.array([[x, y]])
        return bool(self.zone_mask(snap, side, pts)[0]) and not bool(self.zone_mask(snap, 1 - side, pts)[0])

    def terrain_polys(self, kinds: Iterable[str]) -> list[tuple[TerrainFeature, shapely.Polygon]]:
        """The terrain features of the given kinds with their polygons (inches)."""
        kinds = frozenset(kinds)
        return [(t, space.terrain_poly(t)) for t in self.terrain if t.kind in kinds]

    def chokepoints(self) -> list[tuple[float, float]]:
        """Midpoints of the gaps narrower than :data:`CHOKE_GAP` between difficult or impassable features."""
        feats = self.terrain_polys(space.IMPASSABLE | space.DIFFICULT)
        out = []
        for i in range(len(feats)):
            for j in range(i + 1, len(feats)):
                a, b = feats[i][1], feats[j][1]
                if 0.0 < a.distance(b) < CHOKE_GAP:
                    pa, pb = nearest_points(a, b)
                    out.append(((pa.x + pb.x) / 2, (pa.y + pb.y) / 2))
        return out

    def moved_in(self, pt: int, uid: int) -> list[dict[str, Any]]:
        """The CORE.MOVE.* events of ``uid`` in player turn ``pt``."""
        return [e for _, p, e in self.moves if p == pt and e["unit"] == uid]

    def next_turn_of(self, pt: int, player: int) -> PlayerTurn | None:
        """The first player turn of ``player`` after player turn index ``pt``; None if the battle ended first."""
        for p in self.turns[pt + 1:]:
            if p.player == player:
                return p
        return None
