"""Tactic detectors: did a side use a tactic of ``shared/rules/tactics.md``, and when?

:func:`detect` reads a finished battle (a :class:`~env.rules.battle.Battle`, a replay
file written by ``battleline play --replay``, its JSON text or parsed dict) and returns,
for every detectable tactic of :mod:`tactics.catalogue`, a :class:`Detection`: whether
the side used it, the game turn when its signature was first met (0 = deployment) and
a one-line evidence.

Each detector makes the signature of tactics.md concrete over the event log. The
thresholds are module constants; tactics.md calls its numbers proposals, and so are
these. Everything is pure Python over the events (plus the final state for the units'
profiles and the scenario for their starting formations): nothing is re-simulated, and
the same battle always gives the same detections.

Positions through the battle are rebuilt from the events that carry them
(CORE.SETUP.DEPLOY/SCOUTS, CORE.MOVE.*, CORE.CHARGE.MOVE/FAILED, CORE.PSY.FLEE.MOVE,
CORE.CC.PURSUIT_MOVE); the small shifts of CORE.CHARGE.ALIGN and CORE.CHARGE.ONE_INCH carry
no end position and are not applied. A unit "threatens" another when that one is partly
in its vision arc and within its charge reach (M + 6", CORE.CHARGE.ELIGIBLE); line of
sight is not checked. That is the "threat zone" of tactics.md §0.1.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

import numpy as np
import shapely
from shapely.ops import nearest_points

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.charges import CHARGE_BONUS_REACH, FLYER_CHARGE_REACH
from battleline.env.rules.config import read_file_text
from battleline.env.rules.state import SIDES, TerrainFeature, UnitState
from battleline.env.rules.tables import MISSILE_WEAPONS

try:  # war machines (CORE.WM.*) are newer than the rest of the engine
    from battleline.env.rules.war_machines import MACHINES as _MACHINES
except ImportError:  # pragma: no cover
    _MACHINES = {}

# ============================================================================ thresholds
# Shared frame (tactics.md §0.1).
WING_SHARE = 0.25
"""pincers wings: x < 0.25·W or x > 0.75·W (18" and 54" on the 72" table)."""
THIRD = 1.0 / 3.0
"""Lateral thirds (left u < 1/3, centre, right u > 2/3) for flank_teeth, refused_flank, weakened_flank."""
FLANK_ARCS = frozenset({"left", "right", "rear"})
"""Arcs of a flank or rear charge (CORE.CHARGE.FACING)."""

# flee_to_preserve / flee_viability_check (tactics.md §2.1)
FLEE_STRENGTH_RATIO = 1.5
"""A flee counts as preserving when the charger's unit strength is at least this multiple of the fleer's."""
FLEE_RALLY_SHARE = 0.5
"""Least share of those flees followed by a successful rally."""
DOOMED_ESCAPE = 0.2
"""A flee with a chance of escape below this is doomed."""
DOOMED_SHARE_MAX = 0.1
"""Most share of doomed flees for flee_viability_check."""

# feigned_flight, bait_unit and the variants of charge_consequence_analysis (§2.1, §2.2, §3.2)
FEIGN_WINDOW = 1
"""feigned_flight: the flank charge on the charger comes within this many game turns of the flee."""
BAIT_WINDOW = 2
"""bait_unit, sacrificial_flank_lure, weakened_flank: turns from the charge on the bait to the punishment."""
BAIT_MAX_SHARE = 0.10
"""bait_unit: the bait is worth at most this share of the army's points."""
LURE_MIN_CHARGERS = 2
"""sacrificial_flank_lure: distinct friendly units charging the lured enemy in one player turn (a combined charge)."""

# scout_decoy_jam (§2.1)
JAM_WINDOW = 2
"""Game turns after the scout's flight in which the jam must happen."""
JAM_FRONT_GAP = 3.0
"""The lured enemy ends within this many inches in front of another enemy unit."""
JAM_SLOW_SHARE = 0.5
"""The blocked enemy moves less than this share of its M in its next movement phase."""

# flanking_charge_bonus (§2.2)
FLANK_RATE_MIN = 0.35
"""Least share of declared charges aimed at a flank or rear."""

# threat_zone_forecast (§2.2)
EXPOSURE_MAX = 0.2
"""Most share of end-of-move positions inside the enemy threat zone."""
EXPOSURE_MIN_SAMPLES = 4
"""Least end-of-move positions to judge the exposure rate."""

# terrain_denial_by_threat (§2.2)
DENIAL_TURNS = 3
"""Consecutive game turns the hill stays in friendly control."""

# area_control / advance_to_expand_control (§2.2, §3.2)
CONTROL_GRID = 2.0
"""Spacing in inches of the grid of table points sampled for control areas."""
CONTROL_TURNS = (1, 2, 3)
"""Game turns of the opening read by area_control (the side's own player turns in them)."""
CONTROL_SHARE_MIN = 0.55
"""area_control: least mean control share at the ends of the side's player turns in CONTROL_TURNS."""
CONTROL_TREND_MIN = 0.05
"""area_control: least rise of that control share per game turn over CONTROL_TURNS."""
ADVANCE_MIN = 2.0
"""advance_to_expand_control: least mean forward displacement (inches) of non-static units by the end of turn 2."""

# herding_corridor (§2.2)
HERD_WINDOW = 2
"""Game turns between the enemy's safe move and the friendly charge."""
HERD_MIN_THREATS = 2
"""Friendly units threatening the herded enemy when it is charged."""

# ranged_area_denial (§2.2)
DENIAL_MIN_ENTRIES = 2
"""Least enemy entries into friendly missile range."""
DENIAL_PUNISH_SHARE = 0.6
"""Least share of entries answered by a volley with an unsaved wound in the next friendly turn."""

# terrain_cover_from_ranged (§3.1)
COVER_HALF = 0.5
"""Share of the footprint inside a cover feature that counts as in cover (src L235)."""
COVER_MIN_SAMPLES = 2
"""Least exposed end-of-move positions in cover."""

# mobility_denial_terrain / gap_check / cover_approach_zones (§3.1, §4.4)
CHOKE_GAP = 10.0
"""Two difficult or impassable features closer than this (inches) make a chokepoint."""
CHOKE_CONTROL_SHARE = 0.5
"""Least share of game turns a chokepoint lies in friendly control."""
PATH_INFLATION = 1.3
"""Least path-length / straight-distance ratio of an enemy cavalry unit."""
GAP_LANE = 24.0
"""gap_check: length of a unit's forward lane at deployment (to the enemy zone)."""

# threat_360_check (§3.1): no constant; all enemy charges must land in the front.

# position_for_flank_next_turn (§3.2)
FLANK_PREP_WINDOW = 2
"""Friendly player turns before the flank charge in which the charger moved into the flank arc."""

# charge_consequence_analysis and variants (§3.2)
COUNTER_CHARGE_MAX_SHARE = 0.25
"""Most share of friendly chargers charged by another enemy unit in the next enemy turn."""
COVER_FLANK_GAP = 1.0
"""hold_and_cover_flanks: supporters within this many inches of the charger's flank edges."""
SAME_FACING = 15.0
"""Degrees within which two units face the same way."""
LINE_TOLERANCE = 2.0
"""withdraw_and_hold_line: front edges collinear within this many inches."""
LINE_MIN_UNITS = 3
"""withdraw_and_hold_line: units in the dressed line."""
OVEREXTEND_THREATS = 2
"""restrained_pursuit: a pursuit ending inside this many enemy threat zones ..."""
OVEREXTEND_GAP = 12.0
"""... and further than this from the nearest friend is over-extended."""

# deployment advice (§4.2)
SHOOTER_ACTIVE_SHARE = 0.6
"""shooters_deploy_after_targets: least share of shooter-turns with a volley."""
STRONGEST_LAST_RHO = 0.3
"""strongest_last: least Spearman correlation between points and deployment order."""
GUARD_RANGE = 6.0
"""fast_threat_preparation / protected_bubble: a guard stands within this many inches."""
GUARD_SHARE = 0.8
"""fast_threat_preparation: least share of character turn-ends with a guard."""
EARLY_TURNS = 3
"""fast_threat_preparation: the early turns."""

# deployment types (§4.3)
PINCERS_WING_FAST = 0.70
"""pincers: least share of fast-unit points on the wings."""
PINCERS_EACH_WING = 0.25
"""pincers: least share of fast-unit points on each wing (two-sided variant)."""
PINCERS_CENTRE_INF = 0.60
"""pincers: least share of infantry points in the centre third."""
PINCERS_CENTRE_TURNS = 2
"""pincers: the centre advances at most M a turn (no march) in game turns 1..this."""
PINCERS_MIN_WINGS = 1
"""pincers: wings that must close in (1: the one-sided variant counts, tactics.md G-16)."""
TEETH_CENTRE_MAX = 0.20
TEETH_EACH_WING = 0.30
TEETH_WINGS = 0.80
TEETH_BEHIND_SHARE = 0.5
TEETH_BY_TURN = 4
REFUSED_STRONG_SHARE = 0.70
"""refused_flank / weakened_flank: least share of points in the strong half (tactics.md proposes 0.75; a
2,000-point army on the 6" deployment grid spills a block over the centre line, and a battle line holds
about 0.55)."""
REFUSED_THIRD_MAX = 0.15
"""refused_flank: most share of points in the refused third."""
REFUSED_HOLD_MARGIN = 6.0
"""refused_flank: refused units stay within the deployment zone depth plus this many inches ..."""
REFUSED_HOLD_TURNS = 2
"""... for this many game turns."""
WEAK_MAX_UNITS = 2
WEAK_MAX_SHARE = 0.15
SCOUT_EDGE_GAP = 12.0
"""weakened_flank: scouts stand this far from the side and rear edges (max 2D6 flee)."""
ABANDON_SHARE = (0.20, 0.35)
"""abandoned_flank: share of points of the decoy half."""
ABANDON_FAST_SHARE = 0.5
ABANDON_SHIFT = 0.2
"""abandoned_flank: least centroid shift toward the main half by the end of turn 2, as a share of W."""
ABANDON_MAIN_SHARE = 0.9

# shooting lines and set-ups (§4.4)
STAGGER_MIN_STD = 2.0
"""staggered_shooting_line: least standard deviation of the shooters' front-edge depth (inches)."""
APPROACH_COVER_SHARE = 0.75
SHOOTING_LINES_RULES = ("staggered_shooting_line", "cover_approach_zones", "guard_balance")
"""The playable sub-rules of shooting_lines (not shooters_on_high_ground: hills give no LOS benefit yet)."""
SHOOTING_LINES_MIN_RULES = 2
SHELTER_GAP = 3.0
"""sheltered_war_machine: impassable terrain or a hill within this many inches covers a side ..."""
SHELTER_SIDES = 2
"""... and at least this many of the machine's four sides must be covered."""
SHELTER_TARGET_SHARE = 0.5
"""sheltered_war_machine: least share of friendly turns with an enemy in the machine's arc and range."""
GUARD_WM_RANGE = 8.0
"""guard_balance: a guard stands within this many inches of the war machine, nearer the enemy."""
GUARD_WM_SHARE = 0.8
"""guard_balance: least share of guarded war machines."""
GUARD_POINTS_MAX = 0.25
"""guard_balance: most share of the army's points spent on guards."""
IRRITANT_ISOLATION = 12.0
ATTENTION_RATIO_MIN = 3.0
IRRITANT_MIN_ATTACKS = 2
DIVERTED_SHARE = 0.15
"""sacrifice_for_deployment: least share of enemy points drawn towards the irritant (tactics.md §4.4)."""
DIVERT_TURNS = (1, 2, 3)
"""... measured at the end of the enemy's movement in these turns."""
RING_COVERAGE = 270.0
"""protected_bubble: least angular coverage (degrees) by friends within GUARD_RANGE."""
RING_SNAPSHOT_SHARE = 0.7
BUBBLE_MOVE_SHARE = 0.5
"""protected_bubble: least share of friendly turns in which the asset moves ..."""
BUBBLE_MIN_STEP = 0.5
"""... at least this many inches (on its own or carried by the unit it joined)."""

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


# ============================================================================ results
@dataclass(frozen=True, slots=True)
class Detection:
    """Whether a side used a tactic, the game turn it was first seen (0 = deployment), and why."""

    used: bool
    turn: int | None
    evidence: str


def _yes(turn: int | None, evidence: str) -> Detection:
    return Detection(True, turn, evidence)


def _no(evidence: str) -> Detection:
    return Detection(False, None, evidence)


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


# ============================================================================ registry
Detector = Callable[[BattleLog, int], Detection]
DETECTORS: dict[str, Detector] = {}
"""tactic id -> detector, one per detectable tactic of the catalogue."""


def detector(tactic_id: str) -> Callable[[Detector], Detector]:
    """Decorator registering a detector in :data:`DETECTORS` under ``tactic_id`` (a catalogue id)."""

    def register(fn: Detector) -> Detector:
        DETECTORS[tactic_id] = fn
        return fn

    return register


def side_index(side: int | str) -> int:
    """0/1 or "blue"/"red" -> 0/1. Raises ValueError otherwise."""
    if isinstance(side, str) and side in SIDES:
        return SIDES.index(side)
    if side in (0, 1):
        return int(side)
    raise ValueError(f"side must be 0, 1, 'blue' or 'red', got {side!r}")


def detect(battle_or_replay: Any, side: int | str) -> dict[str, Detection]:
    """Every detector's verdict for ``side`` in one battle, in catalogue order.

    Args:
        battle_or_replay: a finished Battle, a :class:`BattleLog`, a replay path, its JSON text or dict.
        side: 0 / "blue" or 1 / "red".

    Returns:
        tactic id -> :class:`Detection` for every detectable tactic of the catalogue.
    """
    from battleline.tactics.catalogue import detectable_ids

    log = BattleLog.from_any(battle_or_replay)
    s = side_index(side)
    return {tid: DETECTORS[tid](log, s) for tid in detectable_ids()}


# ============================================================================ helpers
def _label(log: BattleLog, uid: int) -> str:
    return log.units[uid].label


def _landed(log: BattleLog, side: int) -> list[Charge]:
    return [c for c in log.charges if log.units[c.unit].side == side and c.landed is not None]


def _declared(log: BattleLog, side: int) -> list[Charge]:
    return [c for c in log.charges if log.units[c.unit].side == side]


def _flank_charges_on(log: BattleLog, side: int, target: int, after: int, max_turn: int,
                      exclude: Iterable[int] = ()) -> list[Charge]:
    """Charges by ``side`` on ``target``'s flank or rear after event ``after``, up to game turn ``max_turn``.

    A charge counts when it lands in the flank or rear, or when it was declared at the flank or rear
    (CORE.CHARGE.FACING fixes the facing at declaration) and ``target``, not yet fleeing, fled from it
    (CORE.REACT.FLEE): tactics.md's conversions ask that a unit "charges E in the flank or rear", and a
    fast pursuer driven off by that charge is not a failure of the charger.
    """
    ex = set(exclude)
    fled = {(f.charger, f.turn) for f in log.flights if f.unit == target and f.cause == "reaction" and f.first}
    return [c for c in _declared(log, side) if c.target == target and c.event > after and c.turn <= max_turn
            and c.unit not in ex and (c.landed in FLANK_ARCS
                                      or (c.declared in FLANK_ARCS and (c.unit, c.turn) in fled))]


def _flank_hit(c: Charge, active: bool = False) -> str:
    """How a :func:`_flank_charges_on` charge hit its target, for the evidence: "charged in the left" /
    "driven off by a charge at its left", or with ``active`` "charged it in the left" / "charged at its left
    and it fled"."""
    if c.landed in FLANK_ARCS:
        return f"charged it in the {c.landed}" if active else f"charged in the {c.landed}"
    return f"charged at its {c.declared} and it fled" if active else f"driven off by a charge at its {c.declared}"


def _models_at(log: BattleLog, snap: Snapshot | None, uid: int) -> int:
    if snap is not None and uid in snap.poses:
        return snap.poses[uid].models
    return log.units[uid].models0


def _p_escape(gap: float, charger_m: float, swift: bool) -> float:
    """P(flee roll + gap > M + highest of 2D6): the fleer ends out of the charge range (CORE.CHARGE.RANGE)."""
    d6 = range(1, 7)
    flee = [sorted((a, b, c))[1] + sorted((a, b, c))[2] for a in d6 for b in d6 for c in d6] if swift else \
        [a + b for a in d6 for b in d6]
    high = [max(a, b) for a in d6 for b in d6]
    wins = sum(1 for f in flee for h in high if f + gap > charger_m + h)
    return wins / (len(flee) * len(high))


def _spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(v: list[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    if len(xs) < 3:
        return 0.0
    rx, ry = np.array(ranks(xs)), np.array(ranks(ys))
    if rx.std() == 0 or ry.std() == 0:
        return 0.0
    return float(np.corrcoef(rx, ry)[0, 1])


def _third(log: BattleLog, side: int, x: float) -> str:
    u = log.own_x(side, x) / log.table_w
    return "left" if u < THIRD else "right" if u > 1 - THIRD else "centre"


def _half(log: BattleLog, side: int, x: float) -> str:
    return "left" if log.own_x(side, x) < log.table_w / 2 else "right"


def _deployed_units(log: BattleLog, side: int) -> list[tuple[UnitInfo, Pose]]:
    return [(log.units[uid], p) for uid, p in sorted(log.deployed.poses.items()) if log.units[uid].side == side]


def _placed_units(log: BattleLog, side: int) -> list[tuple[UnitInfo, Pose]]:
    """Units where deployment placed them (CORE.SETUP.DEPLOY), before any Vanguard move; else as deployed."""
    return [(log.units[uid], log.placed.get(uid, p)) for uid, p in sorted(log.deployed.poses.items())
            if log.units[uid].side == side]


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _pct(v: float) -> str:
    return f"{100 * v:.0f}%"


# ============================================================================ §2.1 Running away
@detector("flee_to_preserve")
def flee_to_preserve(log: BattleLog, side: int) -> Detection:
    """flee_to_preserve (src L177): Flee! from a charger of >= FLEE_STRENGTH_RATIO x the unit strength, then rally.

    Used when at least one such flee happened and at least FLEE_RALLY_SHARE of them were
    followed by a passed rally of the fleer (CORE.REACT.DECLARE flee, CORE.PSY.RALLY).
    """
    flees = []
    for f in log.flights:
        if f.cause != "reaction" or not f.first or log.units[f.unit].side != side or f.charger is None:
            continue
        snap = log.turns[f.pt].start if f.pt >= 0 else None
        us_f = log.units[f.unit].strength(_models_at(log, snap, f.unit))
        us_c = log.units[f.charger].strength(_models_at(log, snap, f.charger))
        if us_c >= FLEE_STRENGTH_RATIO * us_f:
            flees.append(f)
    if not flees:
        return _no("no Flee! from a clearly stronger charger")
    rallied = [(f, next((i for i, u in log.rallies if u == f.unit and i > f.event), None)) for f in flees]
    ok = [(f, i) for f, i in rallied if i is not None]
    share = len(ok) / len(flees)
    text = f"{len(flees)} flee(s) from stronger chargers, {len(ok)} rallied ({_pct(share)})"
    if share >= FLEE_RALLY_SHARE:
        f, i = ok[0]
        return _yes(log.event_turn(i), f"{text}; first: {_label(log, f.unit)} fled turn {f.turn}, "
                                       f"rallied turn {log.event_turn(i)}")
    return _no(text)


@detector("flee_viability_check")
def flee_viability_check(log: BattleLog, side: int) -> Detection:
    """flee_viability_check (src L178): few Flee! reactions with P(escape) < DOOMED_ESCAPE.

    P(escape) = P(flee roll + gap > charger M + highest 2D6), with the gap measured at the start
    of the charging player's turn; 2D6 flee, 3D6 drop lowest with Swiftstride or as cavalry.
    Used when the side fled at least once and at most DOOMED_SHARE_MAX of its flees were doomed.
    """
    rows = []
    for f in log.flights:
        if f.cause != "reaction" or not f.first or log.units[f.unit].side != side or f.charger is None or f.pt < 0:
            continue
        snap = log.turns[f.pt].start
        if f.unit not in snap.poses or f.charger not in snap.poses:
            continue
        gap = log.distance(f.unit, snap.poses[f.unit], f.charger, snap.poses[f.charger])
        u = log.units[f.unit]
        swift = "swiftstride" in u.rules or u.troop_type == "cavalry"
        rows.append((f, _p_escape(gap, log.units[f.charger].M, swift)))
    if not rows:
        return _no("no Flee! reaction")
    doomed = [f for f, p in rows if p < DOOMED_ESCAPE]
    share = len(doomed) / len(rows)
    text = (f"{len(rows)} flee(s), {len(doomed)} doomed (P(escape) < {DOOMED_ESCAPE}); "
            f"P(escape) {', '.join(f'{p:.2f}' for _, p in rows)}")
    return _yes(rows[0][0].turn, text) if share <= DOOMED_SHARE_MAX else _no(text)


@detector("feigned_flight")
def feigned_flight(log: BattleLog, side: int) -> Detection:
    """feigned_flight (src L178): a Flee! reaction, then the charger is charged in the flank or rear.

    Bait conversion: unit B of ``side`` declares Flee! against enemy charger E at turn t; a
    friendly unit K != B charges E in the flank or rear after that, by turn t + FEIGN_WINDOW
    (:func:`_flank_charges_on`: the charge lands there, or E flees from it).
    """
    for f in log.flights:
        if f.cause != "reaction" or log.units[f.unit].side != side or f.charger is None:
            continue
        hits = _flank_charges_on(log, side, int(f.charger), f.event, f.turn + FEIGN_WINDOW, exclude=[f.unit])
        if hits:
            k = hits[0]
            return _yes(k.turn, f"{_label(log, f.unit)} fled from {_label(log, int(f.charger))} at turn {f.turn}; "
                                f"{_label(log, k.unit)} {_flank_hit(k, active=True)} at turn {k.turn}")
    return _no("no flee reaction followed by a flank or rear charge on the charger")


def _scout_retreats(log: BattleLog, side: int, units: Iterable[int] | None = None
                    ) -> list[tuple[int, int, int, int, set[int]]]:
    """(uid, event, pt, turn, followers) for every flight or backward move of a friendly Scouts unit (or of ``units``).

    Followers: enemy units that charged it from a game turn before to one after, or pursued it.
    """
    chosen = set(units) if units is not None else {u.uid for u in log.side_units(side) if u.scout}
    rows = [(f.unit, f.event, f.pt, f.turn, set(f.pursuers)) for f in log.flights
            if log.units[f.unit].side == side and f.unit in chosen]
    rows += [(e["unit"], i, pt, int(e["turn"]), set()) for i, pt, e in log.moves
             if e.get("option") == "backward" and log.units[e["unit"]].side == side and e["unit"] in chosen]
    for uid, _, _, turn, follow in rows:
        follow |= {c.unit for c in log.charges if c.target == uid and turn - 1 <= c.turn <= turn + 1}
    return sorted(rows, key=lambda r: r[1])


@detector("scout_decoy_jam")
def scout_decoy_jam(log: BattleLog, side: int) -> Detection:
    """scout_decoy_jam (src L179-L181): a scout falls back, its follower jams its own infantry and is shot in the flank.

    Within JAM_WINDOW game turns after a friendly Scouts unit flees or moves backward: an enemy
    unit E that charged or pursued it ends an enemy turn within JAM_FRONT_GAP in front of another
    enemy unit I; I moves less than JAM_SLOW_SHARE x M in its next movement phase; and a friendly
    shooter standing in E's flank arc shoots E (CORE.SHOOT.ALLOCATE).
    """
    enemy = 1 - side
    for uid, _ev, _pt, turn, followers in _scout_retreats(log, side):
        for p in log.turns:
            if p.player != enemy or p.turn < turn or p.turn > turn + JAM_WINDOW or p.end is None:
                continue
            for e_uid in sorted(followers):
                if e_uid not in p.end.poses:
                    continue
                pe = p.end.poses[e_uid]
                for i_uid, pi in sorted(p.end.poses.items()):
                    if i_uid == e_uid or log.units[i_uid].side != enemy:
                        continue
                    if log.arc(i_uid, pi, pe.x, pe.y) != "front" or log.distance(e_uid, pe, i_uid, pi) > JAM_FRONT_GAP:
                        continue
                    nxt = log.next_turn_of(p.index, enemy)
                    if nxt is None:
                        continue
                    moved = sum(float(e.get("distance", 0)) for e in log.moved_in(nxt.index, i_uid))
                    moved += sum(1.0 for c in log.charges if c.pt == nxt.index and c.unit == i_uid) * log.units[i_uid].M
                    if moved >= JAM_SLOW_SHARE * log.units[i_uid].M:
                        continue
                    for i, vpt, v in log.volleys:
                        if v.get("target") != e_uid or log.units[v["unit"]].side != side or vpt <= p.index:
                            continue
                        if log.event_turn(i) > turn + JAM_WINDOW:
                            continue
                        snap = log.turns[vpt].moved
                        if snap is None or v["unit"] not in snap.poses or e_uid not in snap.poses:
                            continue
                        ps = snap.poses[v["unit"]]
                        if log.arc(e_uid, snap.poses[e_uid], ps.x, ps.y) in ("left", "right"):
                            return _yes(log.event_turn(i), (
                                f"scout {_label(log, uid)} fell back at turn {turn}; {_label(log, e_uid)} followed, "
                                f"blocked {_label(log, i_uid)} and was shot in the flank by "
                                f"{_label(log, v['unit'])} at turn {log.event_turn(i)}"))
    return _no("no scout retreat that jammed the enemy and exposed a flank to shooting")


# ============================================================================ §2.2 Preliminary calculations
@detector("flanking_charge_bonus")
def flanking_charge_bonus(log: BattleLog, side: int) -> Detection:
    """flanking_charge_bonus (src L185): a charge lands in a flank or rear, and >= FLANK_RATE_MIN of declared charges aim there.

    Declared arcs come from CORE.CHARGE.DECLARE (charges at fleeing units excluded), the
    landing from CORE.CHARGE.MOVE ``facing`` in left/right/rear.
    """
    declared = [c for c in _declared(log, side) if not c.vs_fleeing]
    landed = [c for c in _landed(log, side) if c.landed in FLANK_ARCS]
    if not declared:
        return _no("no charge declared")
    rate = sum(1 for c in declared if c.declared in FLANK_ARCS) / len(declared)
    text = f"{len(landed)} flank/rear charge(s) landed; flank/rear rate {_pct(rate)} of {len(declared)} declared"
    if landed and rate >= FLANK_RATE_MIN:
        c = landed[0]
        return _yes(c.turn, f"{text}; first: {_label(log, c.unit)} into the {c.landed} of "
                            f"{_label(log, c.target)} at turn {c.turn}")
    return _no(text)


@detector("threat_zone_forecast")
def threat_zone_forecast(log: BattleLog, side: int) -> Detection:
    """threat_zone_forecast (src L187-L191): few end-of-move positions inside the enemy threat zone.

    Samples: every friendly unit that made a CORE.MOVE.* move in a friendly movement phase, at
    the end of that phase, not engaged or fleeing. Exposed: an enemy unit threatens it. Used
    when there are >= EXPOSURE_MIN_SAMPLES samples and the exposed share is <= EXPOSURE_MAX.
    """
    samples, exposed, first = 0, 0, None
    for p in log.player_turns(side):
        snap = p.moved
        if snap is None:
            continue
        for uid in sorted({e["unit"] for e in (m for _, pt, m in log.moves if pt == p.index)}):
            if uid not in snap.poses or uid in snap.engaged or snap.poses[uid].fleeing:
                continue
            samples += 1
            first = p.turn if first is None else first
            if log.threats_on(snap, uid, 1 - side):
                exposed += 1
    if samples < EXPOSURE_MIN_SAMPLES:
        return _no(f"only {samples} end-of-move position(s)")
    rate = exposed / samples
    text = f"{exposed} of {samples} end-of-move positions inside the enemy threat zone ({_pct(rate)})"
    return _yes(first, text) if rate <= EXPOSURE_MAX else _no(text)


@detector("terrain_denial_by_threat")
def terrain_denial_by_threat(log: BattleLog, side: int) -> Detection:
    """terrain_denial_by_threat (src L189): a hill in friendly control for DENIAL_TURNS turns, held by threat alone.

    At the end of each game turn the hill's representative point must lie in control(own)
    (threatened by a friendly unit, by no enemy unit), with no friendly unit's centre on the
    hill, and any enemy unit standing on it must be charged in the next game turn.
    """
    hills = log.terrain_polys({"hill"})
    last = max((p.turn for p in log.turns), default=0)
    for t, poly in hills:
        pt = poly.representative_point()
        run = 0
        for turn in range(1, last + 1):
            snap = log.turn_end(turn)
            ok = snap is not None and log.in_control(snap, side, pt.x, pt.y)
            if ok:
                on = [uid for uid, p in snap.poses.items() if poly.contains(shapely.Point(p.x, p.y))]
                if any(log.units[u].side == side for u in on):
                    ok = False
                for u in on:
                    if log.units[u].side != side and not any(
                            c.target == u and c.turn == turn + 1 for c in _declared(log, side)):
                        ok = False
            run = run + 1 if ok else 0
            if run >= DENIAL_TURNS:
                return _yes(turn, f"{t.name or t.kind} in friendly control and unoccupied for turns "
                                  f"{turn - DENIAL_TURNS + 1}-{turn}")
    return _no(f"no hill denied for {DENIAL_TURNS} turns" if hills else "no hill on the table")


def _entered_reach(log: BattleLog, p: PlayerTurn, side: int) -> list[int]:
    """Units of ``side`` that the movement phase of its player turn ``p`` took from outside every enemy's charge
    reach into one (:meth:`BattleLog.threats_on`): on the table before and after, neither engaged (a charge) nor
    fleeing after it, characters aside."""
    start, moved = p.start or log.deployed, p.moved or p.end
    if moved is None:
        return []
    return [
        u for u in sorted(moved.poses)
        if log.units[u].side == side and not log.units[u].character and u in start.poses
        and u not in moved.engaged and not moved.poses[u].fleeing
        and not log.threats_on(start, u, 1 - side) and log.threats_on(moved, u, 1 - side)
    ]


@detector("area_control")
def area_control(log: BattleLog, side: int) -> Detection:
    """area_control (src L193, L199; L187-L191): the side claims table space, fast units leading, and its line
    stays out of the enemy's reach while it does.

    Over the side's player turns in CONTROL_TURNS, control_share (:meth:`BattleLog.control_share`, on
    the CONTROL_GRID grid) is read at the end of each of them; the space is claimed when its mean is
    >= CONTROL_SHARE_MIN or it rises by >= CONTROL_TREND_MIN per game turn (last - first over the turns
    between). It is claimed, not merely advanced into, when no unit of the side's line — every unit but
    the fast ones (CAV/FC/FLY, which claim space fastest, src L199) and characters — was taken by those
    turns' movement phases from outside every enemy's charge reach into one (:func:`_entered_reach`):
    the line claims ground up to the enemy's reach and leaves the dead zone for the enemy to enter
    (src L187-L191; tactics.md §6 G-4), so the space it holds is space it can manoeuvre in safely (L193).
    """
    turns = [p for p in log.player_turns(side) if p.turn in CONTROL_TURNS and p.end is not None]
    if len(turns) < 2:
        return _no("the battle ended before the control turns")
    values = [log.control_share(p.end, side) for p in turns]
    mean = sum(values) / len(values)
    trend = (values[-1] - values[0]) / (turns[-1].turn - turns[0].turn)
    entered = [(p.turn, u) for p in turns for u in _entered_reach(log, p, side) if not log.units[u].fast]
    text = f"control share {', '.join(f'{v:.2f}' for v in values)} (mean {mean:.2f}, trend {trend:+.2f}/turn)"
    if entered:
        t, u = entered[0]
        text += f"; {len(entered)} move(s) of the line into enemy reach, first {_label(log, u)} at turn {t}"
    else:
        text += "; the line kept out of enemy reach"
    claimed = mean >= CONTROL_SHARE_MIN or trend >= CONTROL_TREND_MIN
    return _yes(turns[-1].turn, text) if claimed and not entered else _no(text)


@detector("herding_corridor")
def herding_corridor(log: BattleLog, side: int) -> Detection:
    """herding_corridor (src L195): an enemy that moved outside our threat zone is charged while >= 2 friends threaten it.

    A friendly charge on enemy unit E at turn t counts when E made a CORE.MOVE.* move ending
    outside the friendly threat zone in an enemy turn of turns t - HERD_WINDOW .. t, and at the
    start of the charging turn at least HERD_MIN_THREATS friendly units threaten E.
    """
    for c in _declared(log, side):
        if c.pt < 0:
            continue
        start = log.turns[c.pt].start
        threats = log.threats_on(start, c.target, side)
        if len(threats) < HERD_MIN_THREATS:
            continue
        for p in log.player_turns(1 - side):
            if not (c.turn - HERD_WINDOW <= p.turn <= c.turn) or p.index >= c.pt or p.moved is None:
                continue
            if log.moved_in(p.index, c.target) and not log.threats_on(p.moved, c.target, side):
                return _yes(c.turn, f"{_label(log, c.target)} moved outside our threat zone at turn {p.turn}, "
                                    f"then {_label(log, c.unit)} charged it ({c.declared}) at turn {c.turn} "
                                    f"with {len(threats)} friends in reach")
    return _no("no enemy herded from a safe lane into a charge")


def _in_missile_range(log: BattleLog, snap: Snapshot, shooter: int, target: int) -> bool:
    ps, pt = snap.poses.get(shooter), snap.poses.get(target)
    if ps is None or pt is None or ps.fleeing:
        return False
    tp = log.footprint(target, pt)
    if log.footprint(shooter, ps).distance(tp) > log.units[shooter].missile_range:
        return False
    w, d = log.dims(shooter, ps)
    return geo.partly_in_vision_arc(geo.Pose(ps.x, ps.y, ps.facing), w, d, tp)


@detector("ranged_area_denial")
def ranged_area_denial(log: BattleLog, side: int) -> Detection:
    """ranged_area_denial (src L196): enemy units entering friendly missile range are punished.

    An entry: an enemy unit that ends its movement phase in range and vision arc of a friendly
    shooter without having been so at the start of that turn. Punished: a friendly volley with
    an unsaved wound hits it in the next friendly turn. Used with >= DENIAL_MIN_ENTRIES entries
    and a punished share >= DENIAL_PUNISH_SHARE.
    """
    shooters = [u.uid for u in log.side_units(side) if u.shooter]
    if not shooters:
        return _no("no missile troops")
    entries, punished, first = 0, 0, None
    for p in log.player_turns(1 - side):
        if p.start is None or p.moved is None:
            continue
        for uid in sorted(p.moved.poses):
            if log.units[uid].side == side:
                continue
            now = any(_in_missile_range(log, p.moved, s, uid) for s in shooters)
            before = any(_in_missile_range(log, p.start, s, uid) for s in shooters)
            if not now or before:
                continue
            entries += 1
            nxt = log.next_turn_of(p.index, side)
            if nxt and any(pt == nxt.index and v.get("target") == uid and v.get("unsaved", 0) > 0
                           for _, pt, v in log.volleys):
                punished += 1
                first = nxt.turn if first is None else first
    if entries < DENIAL_MIN_ENTRIES:
        return _no(f"{entries} enemy entr{'y' if entries == 1 else 'ies'} into missile range")
    share = punished / entries
    text = f"{punished} of {entries} enemy entries into missile range punished next turn ({_pct(share)})"
    return _yes(first, text) if share >= DENIAL_PUNISH_SHARE else _no(text)


@detector("bait_unit")
def bait_unit(log: BattleLog, side: int) -> Detection:
    """bait_unit (src L197): a cheap unit (<= BAIT_MAX_SHARE of the points) is charged, then its charger is charged.

    An enemy unit E declares a charge on friendly bait B; within BAIT_WINDOW game turns a
    friendly unit K != B declares a charge on E (flank or rear preferred; reported).
    """
    limit = BAIT_MAX_SHARE * log.side_points(side)
    for c in log.charges:
        b = log.units[c.target]
        if b.side != side or b.points > limit:
            continue
        for k in _declared(log, side):
            if k.target == c.unit and k.unit != c.target and k.event > c.event and k.turn <= c.turn + BAIT_WINDOW:
                arc = k.landed or k.declared
                return _yes(k.turn, f"bait {_label(log, b.uid)} ({b.points} pts) charged by {_label(log, c.unit)} "
                                    f"at turn {c.turn}; {_label(log, k.unit)} charged it ({arc}) at turn {k.turn}")
    return _no("no cheap unit charged and avenged")


# ============================================================================ §3.1 Terrain
def _cover_share(log: BattleLog, uid: int, p: Pose) -> float:
    fp = log.footprint(uid, p)
    area = sum(fp.intersection(poly).area for _, poly in log.terrain_polys(space.SOFT_COVER | space.HARD_COVER))
    return min(1.0, area / fp.area) if fp.area else 0.0


@detector("terrain_cover_from_ranged")
def terrain_cover_from_ranged(log: BattleLog, side: int) -> Detection:
    """terrain_cover_from_ranged (src L227, L235-L237): exposed units end their moves at least half in cover.

    Samples: friendly non-shooting units ending a friendly movement phase (after a move) in
    range and vision arc of an enemy shooter. In cover: >= COVER_HALF of the footprint inside
    soft or hard cover (CORE.TERRAIN.COVER features); wasted: some but less. Used with
    >= COVER_MIN_SAMPLES in cover and no more wasted than in cover.
    """
    enemy_shooters = [u.uid for u in log.side_units(1 - side) if u.shooter]
    covered = wasted = exposed = 0
    first = None
    for p in log.player_turns(side):
        snap = p.moved
        if snap is None:
            continue
        for uid in sorted({m["unit"] for _, pt, m in log.moves if pt == p.index}):
            if log.units[uid].shooter or uid not in snap.poses:
                continue
            if not any(_in_missile_range(log, snap, s, uid) for s in enemy_shooters):
                continue
            exposed += 1
            share = _cover_share(log, uid, snap.poses[uid])
            if share >= COVER_HALF:
                covered += 1
                first = p.turn if first is None else first
            elif share > 0:
                wasted += 1
    text = f"{covered} of {exposed} exposed end-of-move positions in cover, {wasted} half-covered (wasted)"
    return _yes(first, text) if covered >= COVER_MIN_SAMPLES and wasted <= covered else _no(text)


def _path_length(log: BattleLog, uid: int) -> tuple[float, float]:
    """(sum of straight legs between successive positions, straight distance start -> end) of a unit."""
    pts = []
    for e in log.events:
        if e["rule"] in POSITION_RULES and e.get("unit") == uid and "x" in e:
            pts.append((float(e["x"]), float(e["y"])))
    if len(pts) < 2:
        return 0.0, 0.0
    path = sum(math.dist(a, b) for a, b in zip(pts, pts[1:]))
    return path, math.dist(pts[0], pts[-1])


@detector("mobility_denial_terrain")
def mobility_denial_terrain(log: BattleLog, side: int) -> Detection:
    """mobility_denial_terrain (src L239-L245): a chokepoint held and enemy cavalry forced round.

    A chokepoint (midpoint of a gap < CHOKE_GAP between difficult/impassable features) lies in
    control(own) at >= CHOKE_CONTROL_SHARE of the game-turn ends, and an enemy cavalry unit's
    path is >= PATH_INFLATION x its straight displacement (path >= its M).
    """
    chokes = log.chokepoints()
    if not chokes:
        return _no("no chokepoint on the table")
    ends = [(t, s) for t in sorted({p.turn for p in log.turns}) if (s := log.turn_end(t)) is not None]
    best = None
    for x, y in chokes:
        held = [t for t, s in ends if log.in_control(s, side, x, y)]
        if ends and len(held) / len(ends) >= CHOKE_CONTROL_SHARE:
            best = (x, y, held)
            break
    if best is None:
        return _no(f"no chokepoint held for {_pct(CHOKE_CONTROL_SHARE)} of the turns")
    for u in log.side_units(1 - side):
        if u.troop_type != "cavalry":
            continue
        path, straight = _path_length(log, u.uid)
        if path >= u.M and path >= PATH_INFLATION * straight:
            return _yes(best[2][0], f"chokepoint ({best[0]:.0f}, {best[1]:.0f}) held at turns "
                                    f"{', '.join(map(str, best[2]))}; {_label(log, u.uid)} went {path:.0f}\" "
                                    f"for {straight:.0f}\" of progress")
    return _no(f"chokepoint ({best[0]:.0f}, {best[1]:.0f}) held but no enemy cavalry path inflated")


def _lane(log: BattleLog, uid: int, p: Pose, length: float) -> shapely.Polygon:
    """The rectangle in front of a unit: its frontage wide, ``length`` deep."""
    w, d = log.dims(uid, p)
    cx, cy = geo.to_world(geo.Pose(p.x, p.y, p.facing), 0.0, d / 2 + length / 2)
    return geo.footprint(geo.Pose(cx, cy, p.facing), w, length)


@detector("gap_check")
def gap_check(log: BattleLog, side: int) -> Detection:
    """gap_check (src L241): no mobile unit deployed behind difficult or impassable terrain.

    Lane: the unit's frontage, GAP_LANE inches forward of its front edge. Mobile: not a
    character, shooter or Scouts unit. Used when some lane of the deployment zone would be
    blocked (a difficult/impassable feature lies in front of the zone) and no mobile unit's
    lane meets one.
    """
    feats = log.terrain_polys(space.IMPASSABLE | space.DIFFICULT)
    zone_front = shapely.box(0, log.zone_depth, log.table_w, log.zone_depth + GAP_LANE)
    if side == 1:
        zone_front = shapely.box(0, log.table_h - log.zone_depth - GAP_LANE, log.table_w, log.table_h - log.zone_depth)
    if not any(poly.intersects(zone_front) for _, poly in feats):
        return _no("no difficult or impassable terrain in front of the deployment zone")
    mobile = [(u, p) for u, p in _deployed_units(log, side) if not (u.character or u.shooter or u.scout)]
    if not mobile:
        return _no("no mobile units deployed")
    blocked = [u for u, p in mobile if any(_lane(log, u.uid, p, GAP_LANE).intersects(poly) for _, poly in feats)]
    if blocked:
        return _no(f"{len(blocked)} unit(s) deployed behind terrain: {', '.join(u.label for u in blocked[:3])}")
    return _yes(0, f"all {len(mobile)} mobile units deployed with clear lanes")


@detector("threat_360_check")
def threat_360_check(log: BattleLog, side: int) -> Detection:
    """threat_360_check (src L247): the enemy charged, and none of its charges landed in a flank or rear.

    Read without flyers: every landed enemy charge on the side's units hit the front.
    """
    enemy = [c for c in log.charges if log.units[c.unit].side != side and log.units[c.target].side == side]
    if not enemy:
        return _no("the enemy declared no charge")
    bad = [c for c in enemy if c.landed in FLANK_ARCS]
    if bad:
        c = bad[0]
        return _no(f"{len(bad)} enemy charge(s) landed in a flank or rear; first: {_label(log, c.unit)} into the "
                   f"{c.landed} of {_label(log, c.target)} at turn {c.turn}")
    return _yes(enemy[-1].turn, f"all {len(enemy)} enemy charge(s) met the front")


# ============================================================================ §3.2 Useful checks
def _blocked_line(log: BattleLog, snap: Snapshot, s: int, t: int) -> list[int]:
    """Units whose footprints cross the segment from shooter ``s``'s front middle to target ``t``'s centre."""
    ps, pt = snap.poses[s], snap.poses[t]
    _, d = log.dims(s, ps)
    mx, my = geo.to_world(geo.Pose(ps.x, ps.y, ps.facing), 0.0, d / 2)
    line = shapely.LineString([(mx, my), (pt.x, pt.y)])
    return [o for o, po in sorted(snap.poses.items()) if o not in (s, t) and line.intersects(log.footprint(o, po))]


@detector("unmask_shooters")
def unmask_shooters(log: BattleLog, side: int) -> Detection:
    """unmask_shooters (src L254-L256): a friend moves out of a shooter's line, which then fires along it.

    A friendly volley at T in a friendly turn whose line (shooter front middle -> T's centre)
    was crossed at the start of the turn only by friendly units that moved this turn, and is
    clear at the end of movement. (An approximation of CORE.GEO.LOS.)
    """
    for i, pt, v in log.volleys:
        s, t = v["unit"], v.get("target")
        p = log.turns[pt] if pt >= 0 else None
        if p is None or log.units[s].side != side or p.player != side or log.events[i]["phase"] != "shooting":
            continue
        if s not in p.start.poses or t not in p.start.poses or p.moved is None or t not in p.moved.poses:
            continue
        before = _blocked_line(log, p.start, s, t)
        if not before or any(log.units[o].side != side or not log.moved_in(pt, o) for o in before):
            continue
        if not _blocked_line(log, p.moved, s, t):
            return _yes(p.turn, f"{', '.join(_label(log, o) for o in before)} moved aside and "
                                f"{_label(log, s)} shot {_label(log, t)} at turn {p.turn}")
    return _no("no shooter unmasked by a friend's move")


@detector("position_for_flank_next_turn")
def position_for_flank_next_turn(log: BattleLog, side: int) -> Detection:
    """position_for_flank_next_turn (src L258-L260): a move into the target's flank arc, then a flank charge.

    A friendly flank/rear charge by C on T whose charger, in one of the FLANK_PREP_WINDOW
    previous friendly turns, made a CORE.MOVE.* move that took its centre from outside T's
    flank/rear arcs into one of them.
    """
    for c in _landed(log, side):
        if c.landed not in FLANK_ARCS:
            continue
        earlier = [p for p in log.player_turns(side) if p.index < c.pt][-FLANK_PREP_WINDOW:]
        for p in earlier:
            if not log.moved_in(p.index, c.unit) or p.moved is None:
                continue
            a, b = p.start.poses, p.moved.poses
            if c.unit not in a or c.unit not in b or c.target not in a or c.target not in b:
                continue
            was = log.arc(c.target, a[c.target], a[c.unit].x, a[c.unit].y)
            now = log.arc(c.target, b[c.target], b[c.unit].x, b[c.unit].y)
            if was not in FLANK_ARCS and now in FLANK_ARCS:
                return _yes(p.turn, f"{_label(log, c.unit)} moved into the {now} arc of {_label(log, c.target)} "
                                    f"at turn {p.turn} and charged its {c.landed} at turn {c.turn}")
    return _no("no flank charge prepared by an earlier move")


@detector("advance_to_expand_control")
def advance_to_expand_control(log: BattleLog, side: int) -> Detection:
    """advance_to_expand_control (src L262-L264): non-static units advance and the control share grows.

    Mean forward displacement (own frame) of non-static units (not characters, shooters or
    Scouts) from deployment to the end of game turn 2 >= ADVANCE_MIN inches, and the control
    share at the end of turn 2 exceeds the one after deployment.
    """
    end = log.turn_end(2) or log.turn_end(1)
    if end is None:
        return _no("the battle ended before turn 1 was over")
    ds = []
    for u, p0 in _deployed_units(log, side):
        if u.character or u.shooter or u.scout or u.uid not in end.poses:
            continue
        ds.append(log.own_y(side, end.poses[u.uid].y) - log.own_y(side, p0.y))
    if not ds:
        return _no("no non-static unit")
    adv = sum(ds) / len(ds)
    c0, c2 = log.control_share(log.deployed, side), log.control_share(end, side)
    text = f"mean advance {adv:.1f}\"; control share {c0:.2f} -> {c2:.2f}"
    return _yes(1, text) if adv >= ADVANCE_MIN and c2 > c0 else _no(text)


@detector("charge_consequence_analysis")
def charge_consequence_analysis(log: BattleLog, side: int) -> Detection:
    """charge_consequence_analysis (src L266-L280): few friendly chargers are counter-charged next enemy turn.

    Of the friendly charges that landed, at most COUNTER_CHARGE_MAX_SHARE saw an enemy unit
    other than the original target declare a charge on the charger in the next enemy turn.
    """
    landed = _landed(log, side)
    if not landed:
        return _no("no friendly charge landed")
    hit = []
    for c in landed:
        nxt = log.next_turn_of(c.pt, 1 - side)
        if nxt and any(k.pt == nxt.index and k.target == c.unit and k.unit != c.target for k in log.charges):
            hit.append(c)
    share = len(hit) / len(landed)
    text = f"{len(hit)} of {len(landed)} charger(s) counter-charged by another enemy next turn ({_pct(share)})"
    return _yes(landed[0].turn, text) if share <= COUNTER_CHARGE_MAX_SHARE else _no(text)


def _same_facing(a: float, b: float) -> bool:
    return abs((a - b + 180.0) % 360.0 - 180.0) <= SAME_FACING


@detector("hold_and_cover_flanks")
def hold_and_cover_flanks(log: BattleLog, side: int) -> Detection:
    """hold_and_cover_flanks (variant I, src L272): two friends beside the charger's flanks within 1 turn.

    After a friendly charge by C lands, at the end of movement of that friendly turn or the
    next, one friendly unit on each side of C stands within COVER_FLANK_GAP inches of its
    footprint, beside its flank (its centre outside C's width), facing within SAME_FACING.
    """
    for c in _landed(log, side):
        turns = [p for p in log.player_turns(side) if p.index >= c.pt][:2]
        for p in turns:
            snap = p.moved if p.index > c.pt else p.end
            if snap is None or c.unit not in snap.poses:
                continue
            pc = snap.poses[c.unit]
            w, _ = log.dims(c.unit, pc)
            sides: dict[str, int] = {}
            for o, po in sorted(snap.poses.items()):
                if o == c.unit or log.units[o].side != side or not _same_facing(po.facing, pc.facing):
                    continue
                if log.distance(o, po, c.unit, pc) > COVER_FLANK_GAP:
                    continue
                lx, _ = geo.to_local(geo.Pose(pc.x, pc.y, pc.facing), po.x, po.y)
                if abs(lx) > w / 2:
                    sides.setdefault("left" if lx < 0 else "right", o)
            if len(sides) == 2:
                return _yes(p.turn, f"{_label(log, sides['left'])} and {_label(log, sides['right'])} covered the "
                                    f"flanks of {_label(log, c.unit)} at turn {p.turn}")
    return _no("no charger with both flanks covered")


@detector("counter_charge_pursuer")
def counter_charge_pursuer(log: BattleLog, side: int) -> Detection:
    """counter_charge_pursuer (variant II, src L273): the enemy that pursued a broken friend is flank-charged next turn.

    A friendly unit loses its break test (CORE.CC.BREAK_TEST); an enemy unit of that combat
    pursues (CORE.CC.PURSUE_CHOICE pursue); in the next friendly turn a friendly charge lands in
    that pursuer's flank or rear (two such charges are reported as a double flank charge).
    """
    for f in log.flights:
        if f.cause != "break" or log.units[f.unit].side != side:
            continue
        nxt = log.next_turn_of(f.pt, side) if f.pt >= 0 else None
        if nxt is None:
            continue
        for e in f.pursuers:
            hits = [c for c in _landed(log, side) if c.pt == nxt.index and c.target == e and c.landed in FLANK_ARCS]
            if hits:
                who = " and ".join(_label(log, c.unit) for c in hits)
                return _yes(nxt.turn, f"{_label(log, f.unit)} broke at turn {f.turn}; pursuer {_label(log, e)} "
                                      f"charged in the flank by {who} at turn {nxt.turn}")
    return _no("no pursuer of a broken friend charged in the flank")


@detector("defensive_reposition")
def defensive_reposition(log: BattleLog, side: int) -> Detection:
    """defensive_reposition (variant III, src L274): supporters out of all enemy reach but threatening a common enemy.

    In a friendly turn in which a friendly charge landed, at the end of movement at least two
    other friendly units (not engaged or fleeing) are threatened by no enemy unit and both
    threaten one same enemy unit.
    """
    for c in _landed(log, side):
        p = log.turns[c.pt]
        snap = p.moved
        if snap is None:
            continue
        safe = [u for u in sorted(snap.poses) if log.units[u].side == side and u != c.unit and log.can_charge(snap, u)
                and not log.threats_on(snap, u, 1 - side)]
        for e in sorted(snap.poses):
            if log.units[e].side == side:
                continue
            joint = [u for u in safe if log.threatens(snap, u, e)]
            if len(joint) >= 2:
                return _yes(p.turn, f"after {_label(log, c.unit)} charged at turn {p.turn}, "
                                    f"{_label(log, joint[0])} and {_label(log, joint[1])} stood out of enemy reach, "
                                    f"both threatening {_label(log, e)}")
    return _no("no safe joint threat set up after a charge")


@detector("withdraw_and_hold_line")
def withdraw_and_hold_line(log: BattleLog, side: int) -> Detection:
    """withdraw_and_hold_line (variant IV, src L276): decline a charge, step back, dress the line out of reach.

    A friendly unit U that threatened an enemy at the start of a friendly turn declares no
    charge, moves backward (own-frame depth falls), and at the end of movement U and at least
    LINE_MIN_UNITS - 1 other friendly units facing the same way have front edges within
    LINE_TOLERANCE inches of U's, none of them threatened by an enemy unit.
    """
    for p in log.player_turns(side):
        if p.moved is None:
            continue
        chargers = {c.unit for c in log.charges if c.pt == p.index}
        for uid in sorted(p.start.poses):
            if log.units[uid].side != side or uid in chargers or uid not in p.moved.poses:
                continue
            if not any(log.threatens(p.start, uid, e) for e in p.start.poses if log.units[e].side != side):
                continue
            if log.own_y(side, p.moved.poses[uid].y) >= log.own_y(side, p.start.poses[uid].y) - 0.25:
                continue
            pu = p.moved.poses[uid]
            fy = log.front_edge_y(uid, pu)
            line = [o for o, po in sorted(p.moved.poses.items()) if log.units[o].side == side
                    and log.can_charge(p.moved, o) and _same_facing(po.facing, pu.facing)
                    and abs(log.front_edge_y(o, po) - fy) <= LINE_TOLERANCE]
            if uid in line and len(line) >= LINE_MIN_UNITS and not any(
                    log.threats_on(p.moved, o, 1 - side) for o in line):
                return _yes(p.turn, f"{_label(log, uid)} declined a charge and withdrew at turn {p.turn}; "
                                    f"line of {len(line)} units out of enemy reach")
    return _no("no withdrawal into a dressed line")


@detector("sacrificial_flank_lure")
def sacrificial_flank_lure(log: BattleLog, side: int) -> Detection:
    """sacrificial_flank_lure (variant V, src L278): a line infantry unit is charged, then a combined charge on its charger.

    An enemy unit E declares a charge on a friendly INF unit; within BAIT_WINDOW game turns at
    least LURE_MIN_CHARGERS distinct friendly units declare charges on E in the same player
    turn (a combined charge, CORE.CHARGE.SAME_TARGET).
    """
    for c in log.charges:
        if log.units[c.target].side != side or not log.units[c.target].infantry:
            continue
        by_turn: dict[int, list[Charge]] = {}
        for k in _declared(log, side):
            if k.target == c.unit and k.unit != c.target and k.event > c.event and k.turn <= c.turn + BAIT_WINDOW:
                by_turn.setdefault(k.pt, []).append(k)
        for ks in by_turn.values():
            chargers = sorted({k.unit for k in ks})
            if len(chargers) >= LURE_MIN_CHARGERS:
                return _yes(ks[0].turn, f"{_label(log, c.unit)} charged {_label(log, c.target)} at turn {c.turn}; "
                                        f"then {', '.join(_label(log, u) for u in chargers)} charged it together "
                                        f"at turn {ks[0].turn}")
    return _no("no line unit avenged by a combined charge")


@detector("restrained_pursuit")
def restrained_pursuit(log: BattleLog, side: int) -> Detection:
    """restrained_pursuit (variant VI, src L280): a unit holds instead of pursuing, and no pursuit over-extends.

    Used when a friendly unit chose not to pursue (CORE.CC.PURSUE_CHOICE hold, after its Ld
    test) and no friendly pursuit move ended inside >= OVEREXTEND_THREATS enemy threat zones
    more than OVEREXTEND_GAP inches from the nearest friend.
    """
    holds = [(i, u) for i, u, ch, _ in log.pursuits if ch == "hold" and log.units[u].side == side]
    bad = []
    for i, uid, pose in log.pursuit_moves:
        if log.units[uid].side != side:
            continue
        pt = log.pt_of[i]
        snap = log.turns[pt].end if pt >= 0 else None
        if snap is None:
            continue
        poses = dict(snap.poses)
        poses[uid] = pose
        s = Snapshot(poses, snap.engaged)
        friends = [o for o in poses if o != uid and log.units[o].side == side]
        gap = min((log.distance(uid, pose, o, poses[o]) for o in friends), default=math.inf)
        if len(log.threats_on(s, uid, 1 - side)) >= OVEREXTEND_THREATS and gap > OVEREXTEND_GAP:
            bad.append((i, uid))
    text = f"{len(holds)} pursuit(s) held back, {len(bad)} over-extended pursuit(s)"
    if holds and not bad:
        return _yes(log.event_turn(holds[0][0]), text)
    return _no(text)


# ============================================================================ §4.2 Deployment advice
@detector("shooters_deploy_after_targets")
def shooters_deploy_after_targets(log: BattleLog, side: int) -> Detection:
    """shooters_deploy_after_targets (src L319): shooters deploy late and then shoot.

    The shooters' mean index in the side's deployment order (CORE.SETUP.DEPLOY; Scouts
    excluded) exceeds the army's mean, and >= SHOOTER_ACTIVE_SHARE of the shooter-turns (a
    shooter on the table, not fleeing or engaged, in a friendly turn) had a volley.
    """
    order = [u for u in log.deploy_order[side] if not log.units[u].scout]
    shooters = [i for i, u in enumerate(order) if log.units[u].shooter]
    if not shooters:
        return _no("no shooters deployed")
    mean_all = (len(order) - 1) / 2
    mean_s = sum(shooters) / len(shooters)
    turns = active = 0
    for p in log.player_turns(side):
        snap = p.moved
        if snap is None:
            continue
        for uid in (order[i] for i in shooters):
            if uid in snap.poses and not snap.poses[uid].fleeing and uid not in snap.engaged:
                turns += 1
                active += any(pt == p.index and v["unit"] == uid and log.events[i]["phase"] == "shooting"
                              for i, pt, v in log.volleys)
    share = _share(active, turns)
    text = f"shooters' mean deployment index {mean_s:.1f} vs army {mean_all:.1f}; volleys in {_pct(share)} of shooter-turns"
    return _yes(0, text) if mean_s > mean_all and share >= SHOOTER_ACTIVE_SHARE else _no(text)


@detector("strongest_last")
def strongest_last(log: BattleLog, side: int) -> Detection:
    """strongest_last (src L321): Spearman correlation of points with deployment order >= STRONGEST_LAST_RHO."""
    order = [u for u in log.deploy_order[side] if not log.units[u].scout]
    if len(order) < 3:
        return _no("fewer than 3 units deployed in turn")
    rho = _spearman([float(log.units[u].points) for u in order], [float(i) for i in range(len(order))])
    text = f"Spearman rho(points, deployment order) = {rho:+.2f} over {len(order)} units"
    return _yes(0, text) if rho >= STRONGEST_LAST_RHO else _no(text)


@detector("fast_threat_preparation")
def fast_threat_preparation(log: BattleLog, side: int) -> Detection:
    """fast_threat_preparation (src L322): the fragile pieces guarded and never charged by fast enemies early.

    Pieces: the side's wizards (CORE.MAGIC.WIZARDS), or its characters when it has no wizard.
    The enemy has fast units; no piece is charged by an enemy fast unit in turns
    1..EARLY_TURNS; and at >= GUARD_SHARE of the piece turn-ends of those turns a friendly
    non-character unit stands within GUARD_RANGE inches.
    """
    if not any(u.fast for u in log.side_units(1 - side)):
        return _no("the enemy has no fast units")
    kind = "wizard" if any(u.wizard for u in log.side_units(side)) else "character"
    pieces = [u.uid for u in log.side_units(side) if (u.wizard if kind == "wizard" else u.character)]
    if not pieces:
        return _no("no characters to guard")
    hit = [c for c in log.charges if c.target in pieces and log.units[c.unit].fast and c.turn <= EARLY_TURNS]
    if hit:
        c = hit[0]
        return _no(f"{_label(log, c.target)} charged by fast {_label(log, c.unit)} at turn {c.turn}")
    n = guarded = 0
    for p in log.turns:
        if p.turn > EARLY_TURNS or p.end is None:
            continue
        for ch in pieces:
            if ch not in p.end.poses:
                continue
            n += 1
            guarded += any(log.units[o].side == side and not log.units[o].character
                           and log.distance(ch, p.end.poses[ch], o, po) <= GUARD_RANGE
                           for o, po in p.end.poses.items())
    share = _share(guarded, n)
    text = f"no {kind} charged by fast enemies in turns 1-{EARLY_TURNS}; guarded at {_pct(share)} of turn-ends"
    return _yes(EARLY_TURNS, text) if n and share >= GUARD_SHARE else _no(text)


@detector("heavy_cavalry_flank_shock")
def heavy_cavalry_flank_shock(log: BattleLog, side: int) -> Detection:
    """heavy_cavalry_flank_shock (src L323): a heavy-cavalry charge lands in a flank or rear.

    Evidence counts the enemy Panic tests (CORE.PSY.PANIC.TEST) in the same game turn.
    """
    for c in _landed(log, side):
        if c.landed in FLANK_ARCS and log.units[c.unit].heavy_cavalry:
            panics = sum(1 for i, u in log.panic_tests if log.units[u].side != side and log.event_turn(i) == c.turn)
            return _yes(c.turn, f"{_label(log, c.unit)} charged the {c.landed} of {_label(log, c.target)} at turn "
                                f"{c.turn}; {panics} enemy Panic test(s) that turn")
    return _no("no heavy cavalry flank or rear charge")


@detector("maneuver_spacing")
def maneuver_spacing(log: BattleLog, side: int) -> Detection:
    """maneuver_spacing (src L324): no fast unit boxed in by a friend at deployment.

    A fast unit is boxed in when the lane in front of it (its frontage wide, M deep) meets a
    friendly unit's footprint.
    """
    deployed = _deployed_units(log, side)
    fast = [(u, p) for u, p in deployed if u.fast]
    if not fast:
        return _no("no fast units")
    boxed = [u for u, p in fast if any(
        o.uid != u.uid and _lane(log, u.uid, p, u.M).intersects(log.footprint(o.uid, po)) for o, po in deployed)]
    if boxed:
        return _no(f"{len(boxed)} fast unit(s) boxed in: {', '.join(u.label for u in boxed)}")
    return _yes(0, f"all {len(fast)} fast unit(s) have clear lanes")


# ============================================================================ §4.3 Deployment types
def _wing(log: BattleLog, x: float) -> str | None:
    if x < WING_SHARE * log.table_w:
        return "left"
    if x > (1 - WING_SHARE) * log.table_w:
        return "right"
    return None


@detector("pincers")
def pincers(log: BattleLog, side: int) -> Detection:
    """pincers (src L330-L334): fast units on both wings, an infantry centre that holds, a wing closing in.

    Deployment: fast units on the wings (table x < WING_SHARE·W or > (1 − WING_SHARE)·W, i.e.
    18" and 54") hold >= PINCERS_WING_FAST of the fast points, each wing >= PINCERS_EACH_WING;
    >= PINCERS_CENTRE_INF of the infantry points stand in the centre third. Behaviour: the
    centre holds — no centre infantry unit marches (CORE.MOVE.MARCH) in turns
    1..PINCERS_CENTRE_TURNS, so it advances at most M a turn — while at least PINCERS_MIN_WINGS
    wing(s) close in: one of its fast units lands a flank/rear charge, or ends a game turn past
    the centre line still on its wing (going round, not converging on the centre). One wing
    is enough (tactics.md G-16: "fast units on both flanks ... or on one").
    """
    deployed = _deployed_units(log, side)
    fast = [(u, p) for u, p in deployed if u.fast]
    fast_pts = sum(u.points for u, _ in fast)
    if not fast_pts:
        return _no("no fast units")
    wings: dict[str, list[int]] = {"left": [], "right": []}
    for u, p in fast:
        w = _wing(log, p.x)
        if w:
            wings[w].append(u.uid)
    share = {w: sum(log.units[u].points for u in us) / fast_pts for w, us in wings.items()}
    inf = [(u, p) for u, p in deployed if u.infantry]
    centre = [u.uid for u, p in inf if _third(log, side, p.x) == "centre"]
    inf_centre = _share(sum(log.units[u].points for u in centre), sum(u.points for u, _ in inf))
    text = (f"fast points on the wings {_pct(share['left'])} / {_pct(share['right'])}, "
            f"infantry in the centre {_pct(inf_centre)}")
    if (share["left"] + share["right"] < PINCERS_WING_FAST or min(share.values()) < PINCERS_EACH_WING
            or inf_centre < PINCERS_CENTRE_INF):
        return _no(f"deployment: {text}")
    marched = [e for _, _, e in log.moves if e["unit"] in centre and e["rule"] == "CORE.MOVE.MARCH"
               and int(e["turn"]) <= PINCERS_CENTRE_TURNS]
    if marched:
        e = marched[0]
        return _no(f"{text}; the centre did not hold ({_label(log, e['unit'])} marched at turn {e['turn']})")
    half = log.table_h / 2
    closed: dict[str, int] = {}
    for w, us in wings.items():
        turns = [c.turn for c in _landed(log, side) if c.unit in us and c.landed in FLANK_ARCS]
        for t in sorted({p.turn for p in log.turns}):
            snap = log.turn_end(t)
            if snap and any(u in snap.poses and log.own_y(side, snap.poses[u].y) > half
                            and _wing(log, snap.poses[u].x) == w for u in us):
                turns.append(t)
                break
        if turns:
            closed[w] = min(turns)
    if len(closed) < PINCERS_MIN_WINGS:
        return _no(f"{text}; the centre held but no wing closed in")
    how = ", ".join(f"{w} wing at turn {t}" for w, t in sorted(closed.items()))
    return _yes(max(PINCERS_CENTRE_TURNS, min(closed.values())), f"{text}; the centre held; closed in: {how}")


def _lateral(log: BattleLog, side: int, units: list[tuple[UnitInfo, Pose]], cuts: tuple[float, ...]
             ) -> list[float]:
    """Share of the points in each lateral part of the own frame, cut at the given fractions of W.

    A unit's points are split by the share of its footprint's lateral extent in each part, so
    a unit straddling a border counts on both sides.
    """
    edges = [0.0, *(c * log.table_w for c in cuts), log.table_w]
    total = sum(u.points for u, _ in units) or 1
    out = [0.0] * (len(edges) - 1)
    for u, p in units:
        lo, hi = (log.own_x(side, v) for v in log.footprint(u.uid, p).bounds[0::2])
        lo, hi = min(lo, hi), max(lo, hi)
        span = max(hi - lo, 1e-9)
        for k in range(len(out)):
            out[k] += u.points / total * max(0.0, min(hi, edges[k + 1]) - max(lo, edges[k])) / span
    return out


def _halves(log: BattleLog, side: int, units: list[tuple[UnitInfo, Pose]]) -> dict[str, float]:
    left, right = _lateral(log, side, units, (0.5,))
    return {"left": left, "right": right}


def _thirds(log: BattleLog, side: int, units: list[tuple[UnitInfo, Pose]]) -> dict[str, float]:
    left, centre, right = _lateral(log, side, units, (THIRD, 1 - THIRD))
    return {"left": left, "centre": centre, "right": right}


@detector("flank_teeth")
def flank_teeth(log: BattleLog, side: int) -> Detection:
    """flank_teeth (src L336-L338): strength on both wings, a cheap centre, and the wings get behind the enemy.

    Deployment (thirds of the own frame): centre <= TEETH_CENTRE_MAX of the points, every centre
    unit cheaper than the army's median unit; each wing >= TEETH_EACH_WING, wings >= TEETH_WINGS.
    Behaviour: by the end of turn TEETH_BY_TURN >= TEETH_BEHIND_SHARE of the wing units stand
    beyond the enemy's frontmost unit and in some enemy unit's rear arc, or an enemy unit is
    destroyed leaving the table.
    """
    deployed = _deployed_units(log, side)
    share = _thirds(log, side, deployed)
    med = median([u.points for u, _ in deployed]) if deployed else 0
    cheap = all(u.points < med for u, p in deployed if _third(log, side, p.x) == "centre")
    text = f"points left/centre/right {_pct(share['left'])}/{_pct(share['centre'])}/{_pct(share['right'])}"
    if (share["centre"] > TEETH_CENTRE_MAX or not cheap or min(share["left"], share["right"]) < TEETH_EACH_WING
            or share["left"] + share["right"] < TEETH_WINGS):
        return _no(f"deployment: {text}")
    off = [(i, u) for i, u, rule, off_table in log.destroyed if off_table and log.units[u].side != side]
    if off:
        return _yes(log.event_turn(off[0][0]), f"{text}; {_label(log, off[0][1])} fled off the table")
    wing_units = [u.uid for u, p in deployed if _third(log, side, p.x) != "centre" and not u.character]
    for t in range(1, TEETH_BY_TURN + 1):
        snap = log.turn_end(t)
        if snap is None:
            break
        enemies = [(e, pe) for e, pe in snap.poses.items() if log.units[e].side != side]
        if not enemies:
            break
        front = min(log.own_y(side, pe.y) for _, pe in enemies)
        behind = [u for u in wing_units if u in snap.poses and log.own_y(side, snap.poses[u].y) > front
                  and any(log.arc(e, pe, snap.poses[u].x, snap.poses[u].y) == "rear" for e, pe in enemies)]
        if wing_units and len(behind) / len(wing_units) >= TEETH_BEHIND_SHARE:
            return _yes(t, f"{text}; {len(behind)} of {len(wing_units)} wing units behind the enemy at turn {t}")
    return _no(f"{text}; the wings did not get behind the enemy")


@detector("refused_flank")
def refused_flank(log: BattleLog, side: int) -> Detection:
    """refused_flank (src L340-L344): the army massed in one half, the other wing held back while the strong wing attacks.

    Deployment: >= REFUSED_STRONG_SHARE of the points in one half (own frame), <= REFUSED_THIRD_MAX
    in the far third. Behaviour: the units deployed in the far third stay within the zone depth
    + REFUSED_HOLD_MARGIN of the own edge at the end of game turns 1..REFUSED_HOLD_TURNS, and a
    unit deployed in the strong half declares a charge, or half of those units cross the
    centre line.
    """
    deployed = _deployed_units(log, side)
    halves = _halves(log, side, deployed)
    strong = max(("left", "right"), key=lambda h: (halves[h], h == "left"))
    weak = "right" if strong == "left" else "left"
    thirds = _thirds(log, side, deployed)
    text = f"{_pct(halves[strong])} of the points in the {strong} half, {_pct(thirds[weak])} in the {weak} third"
    if halves[strong] < REFUSED_STRONG_SHARE or thirds[weak] > REFUSED_THIRD_MAX:
        return _no(f"deployment: {text}")
    refused = [u.uid for u, p in deployed if _third(log, side, p.x) == weak]
    limit = log.zone_depth + REFUSED_HOLD_MARGIN
    for t in range(1, REFUSED_HOLD_TURNS + 1):
        snap = log.turn_end(t)
        if snap is None:
            return _no(f"{text}; the battle ended before turn {t}")
        ahead = [u for u in refused if u in snap.poses and log.own_y(side, snap.poses[u].y) > limit]
        if ahead:
            return _no(f"{text}; {_label(log, ahead[0])} left the refused wing at turn {t}")
    strong_units = [u.uid for u, p in deployed if _half(log, side, p.x) == strong and not u.character]
    attack = [c.turn for c in _declared(log, side) if c.unit in strong_units]
    for t in sorted({p.turn for p in log.turns}):
        snap = log.turn_end(t)
        if snap and strong_units and sum(1 for u in strong_units if u in snap.poses
                                         and log.own_y(side, snap.poses[u].y) > log.table_h / 2) * 2 >= len(strong_units):
            attack.append(t)
            break
    if not attack:
        return _no(f"{text}; the strong wing did not attack")
    return _yes(max(REFUSED_HOLD_TURNS, min(attack)), f"{text}; {len(refused)} refused unit(s) held back, "
                                                      f"the strong wing attacked at turn {min(attack)}")


@detector("weakened_flank")
def weakened_flank(log: BattleLog, side: int) -> Detection:
    """weakened_flank (src L346-L350): scouts alone on one wing draw the enemy onto the main army's flank charge.

    Deployment: an outer third holds 1..WEAK_MAX_UNITS units, <= WEAK_MAX_SHARE of the points and
    >= 1 lure unit standing >= SCOUT_EDGE_GAP from the side edge (Scouts: and from the rear edge,
    where they deploy ahead of the zone); the opposite half holds >= REFUSED_STRONG_SHARE. The lure
    units are Scouts; an army without Scouts uses its fast units (CAV/FC), which the source values
    the scouts for (fast, manoeuvrable, cheap). Behaviour, a conversion: a lure flees or moves
    backward, an enemy unit charged or pursued it, and within BAIT_WINDOW turns another friendly unit
    charges that enemy in the flank or rear (:func:`_flank_charges_on`: the charge lands there, or the
    enemy flees from it).
    """
    deployed = _deployed_units(log, side)
    thirds = _thirds(log, side, deployed)
    halves = _halves(log, side, deployed)
    has_scouts = any(u.scout for u in log.side_units(side))
    for weak, strong in (("left", "right"), ("right", "left")):
        units = [(u, p) for u, p in deployed if _third(log, side, p.x) == weak]
        lures = [u.uid for u, p in units if (u.scout if has_scouts else u.fast)
                 and min(p.x, log.table_w - p.x) >= SCOUT_EDGE_GAP
                 and (not u.scout or log.own_y(side, p.y) >= SCOUT_EDGE_GAP)]
        if not (1 <= len(units) <= WEAK_MAX_UNITS and thirds[weak] <= WEAK_MAX_SHARE and lures
                and halves[strong] >= REFUSED_STRONG_SHARE):
            continue
        kind = "scouts" if has_scouts else "fast units"
        text = f"{len(units)} unit(s) ({_pct(thirds[weak])}) with {kind} on the {weak}, {_pct(halves[strong])} opposite"
        retreats = [r for r in _scout_retreats(log, side, lures)]
        for uid, ev, _pt, turn, follow in retreats:
            for e in sorted(follow):
                hits = _flank_charges_on(log, side, e, ev, turn + BAIT_WINDOW, exclude=lures)
                if hits:
                    return _yes(hits[0].turn, f"{text}; {_label(log, e)} followed {_label(log, uid)} and was "
                                              f"{_flank_hit(hits[0])} at turn {hits[0].turn}")
        followed = sum(1 for r in retreats if r[4])
        return _no(f"{text}; no conversion ({len(retreats)} fall-back(s), {followed} followed)")
    return _no(f"deployment: points left/centre/right {_pct(thirds['left'])}/{_pct(thirds['centre'])}/"
               f"{_pct(thirds['right'])}, no lone lure on a wing")


@detector("abandoned_flank")
def abandoned_flank(log: BattleLog, side: int) -> Detection:
    """abandoned_flank (src L352-L354): a fast decoy half shifts across to join the main body by turn 2.

    Deployment: one half X holds ABANDON_SHARE of the points, >= ABANDON_FAST_SHARE of them fast.
    By the end of turn 2 the points centroid of the units deployed in X (own frame, from where they
    were placed: a Vanguard move is part of the shift) moved >=
    ABANDON_SHIFT·W toward the other half Y, every surviving fast unit of X stands in Y, and Y
    holds >= ABANDON_MAIN_SHARE of the surviving points. (tactics.md measures the whole army's
    centroid; with a decoy of 20-35 % of the points that needs the decoys to cross the whole table,
    while the template deploys them by the centre line so that the shift is short.)
    """
    deployed = _deployed_units(log, side)
    halves = _halves(log, side, deployed)
    end = log.turn_end(2)
    for x_half, y_half in (("left", "right"), ("right", "left")):
        units = [(u, p) for u, p in deployed if _half(log, side, p.x) == x_half and not u.character]
        pts = sum(u.points for u, _ in units)
        fast = [u.uid for u, _ in units if u.fast]
        if not (ABANDON_SHARE[0] <= halves[x_half] <= ABANDON_SHARE[1]) or \
                sum(log.units[f].points for f in fast) < ABANDON_FAST_SHARE * pts:
            continue
        text = f"decoy {x_half} half {_pct(halves[x_half])} of the points, mostly fast"
        if end is None:
            return _no(f"{text}; the battle ended before turn 2")
        sign = 1.0 if y_half == "right" else -1.0
        decoys = [u.uid for u, _ in units]

        def centroid(poses: dict[int, Pose], decoys: list[int] = decoys) -> float:
            us = [(log.units[u], poses[u]) for u in decoys if u in poses]
            tot = sum(u.points for u, _ in us) or 1
            return sum(u.points * log.own_x(side, p.x) for u, p in us) / tot

        alive = [u for u in decoys if u in end.poses]
        start = {u: log.placed.get(u, p) for u, p in log.deployed.poses.items()}
        shift = sign * (centroid(end.poses) - centroid(start)) / log.table_w if alive else 0.0
        on_table = [(log.units[u], p) for u, p in end.poses.items() if log.units[u].side == side and not p.fleeing]
        y_share = _halves(log, side, on_table)[y_half]
        crossed = all(_half(log, side, end.poses[f].x) == y_half for f in fast if f in end.poses)
        text += f"; the decoys shifted {shift:+.2f} W, {_pct(y_share)} in the {y_half} half after turn 2"
        if shift >= ABANDON_SHIFT and crossed and y_share >= ABANDON_MAIN_SHARE:
            return _yes(2, text)
        return _no(text + ("" if crossed else "; a fast decoy stayed behind"))
    return _no("deployment: no fast decoy half")


# ============================================================================ §4.4 Shooting lines and set-ups
@detector("staggered_shooting_line")
def staggered_shooting_line(log: BattleLog, side: int) -> Detection:
    """staggered_shooting_line (src L362): shooters' front edges not in one straight line at deployment.

    The population standard deviation of the own-frame depth of the front edges of the units with
    a missile weapon, as placed (before Vanguard moves; characters and Scouts excluded: Scouts deploy
    by their own rule), is >= STAGGER_MIN_STD inches, with >= 2 such units. Fast units with bows
    count: they are part of the army's firepower wherever they stand.
    """
    rows = [log.front_edge_y(u.uid, p) for u, p in _placed_units(log, side)
            if u.missile is not None and not u.character and not u.scout]
    if len(rows) < 2:
        return _no(f"{len(rows)} shooter unit(s) deployed")
    std = float(np.std(rows))
    text = f"shooters' front edges at {', '.join(f'{y:.1f}' for y in rows)}\" (std {std:.1f}\")"
    return _yes(0, text) if std >= STAGGER_MIN_STD else _no(text)


def _approach_points(log: BattleLog, side: int) -> list[tuple[float, float]]:
    """Where the enemy can appear from: the near side of LOS-blocking or difficult features in no-man's land, and chokepoints."""
    lo, hi = log.zone_depth, log.table_h - log.zone_depth
    out = []
    for _t, poly in log.terrain_polys(space.IMPASSABLE | space.DIFFICULT | {"hill"}):
        if not poly.intersects(shapely.box(0, lo, log.table_w, hi)):
            continue
        coords = list(poly.exterior.coords)
        x, y = min(coords, key=lambda c: (log.own_y(side, c[1]), c[0]))
        out.append((x, y))
    return out + log.chokepoints()


@detector("cover_approach_zones")
def cover_approach_zones(log: BattleLog, side: int) -> Detection:
    """cover_approach_zones (src L364): the shooters' fire covers the approaches at deployment.

    Approach points: the vertex nearest the own edge of each hill, difficult or impassable
    feature reaching no-man's land, and each chokepoint. Covered: within a shooter's missile
    range of its footprint and in its front arc. Used when >= APPROACH_COVER_SHARE are covered.
    """
    points = _approach_points(log, side)
    shooters = [(u, p) for u, p in _deployed_units(log, side) if u.shooter]
    if not points:
        return _no("no approach zones on the table")
    if not shooters:
        return _no("no shooters deployed")
    covered = 0
    for x, y in points:
        pt = shapely.Point(x, y)
        covered += any(log.footprint(u.uid, p).distance(pt) <= u.missile_range and log.arc(u.uid, p, x, y) == "front"
                       for u, p in shooters)
    share = covered / len(points)
    text = f"{covered} of {len(points)} approach zones under fire ({_pct(share)})"
    return _yes(0, text) if share >= APPROACH_COVER_SHARE else _no(text)


@detector("shooting_lines")
def shooting_lines(log: BattleLog, side: int) -> Detection:
    """shooting_lines (src L356-L366): at least SHOOTING_LINES_MIN_RULES of its playable sub-rules fire."""
    found = {r: DETECTORS[r](log, side) for r in SHOOTING_LINES_RULES}
    fired = [r for r, d in found.items() if d.used]
    text = f"{len(fired)} of {len(found)} sub-rules: {', '.join(fired) or 'none'}"
    return _yes(0, text) if len(fired) >= SHOOTING_LINES_MIN_RULES else _no(text)


@detector("sheltered_war_machine")
def sheltered_war_machine(log: BattleLog, side: int) -> Detection:
    """sheltered_war_machine (src L243): a war machine with terrain on two sides that still has targets.

    At deployment, a friendly war machine has >= SHELTER_SIDES of its arcs (front, left, right,
    rear) covered: an impassable feature or a hill lies within SHELTER_GAP inches, its nearest
    point in that arc. The trade-off: at the end of >= SHELTER_TARGET_SHARE of the friendly
    movement phases an enemy unit stands in the machine's front arc within its range.
    """
    machines = [(u, p) for u, p in _deployed_units(log, side) if u.war_machine]
    if not machines:
        return _no("no war machines deployed")
    feats = log.terrain_polys(space.IMPASSABLE | {"hill"})
    best = ""
    for u, p in machines:
        fp = log.footprint(u.uid, p)
        arcs = set()
        for _t, poly in feats:
            if fp.distance(poly) <= SHELTER_GAP:
                near = nearest_points(fp, poly)[1]
                arcs.add(log.arc(u.uid, p, near.x, near.y))
        arcs.discard("inside")
        turns = [q.moved for q in log.player_turns(side) if q.moved is not None and u.uid in q.moved.poses]
        seen = sum(1 for snap in turns if any(
            log.units[e].side != side and _in_missile_range(log, snap, u.uid, e) for e in snap.poses))
        share = _share(seen, len(turns))
        text = (f"{u.label} covered on {len(arcs)} side(s) ({', '.join(sorted(arcs)) or 'none'}), "
                f"enemy in its arc at {_pct(share)} of turns")
        if len(arcs) >= SHELTER_SIDES and share >= SHELTER_TARGET_SHARE:
            return _yes(0, text)
        best = best or text
    return _no(best)


@detector("guard_balance")
def guard_balance(log: BattleLog, side: int) -> Detection:
    """guard_balance (shooting lines D, src L366): war machines guarded, without over-guarding.

    As placed at deployment (before Vanguard moves), for >= GUARD_WM_SHARE of the friendly war
    machines a friendly combat unit (not a character, war machine or shooter) stands within
    GUARD_WM_RANGE inches of the machine and nearer than it to the nearest enemy unit; the guards
    hold <= GUARD_POINTS_MAX of the points.
    """
    deployed = _placed_units(log, side)
    machines = [(u, p) for u, p in deployed if u.war_machine]
    if not machines:
        return _no("no war machines deployed")
    enemies = [(u.uid, p) for u, p in _placed_units(log, 1 - side)]
    combat = [(u, p) for u, p in deployed if not (u.character or u.war_machine or u.shooter)]
    guards: set[int] = set()
    guarded = 0
    for m, pm in machines:
        if not enemies:
            break
        e, pe = min(enemies, key=lambda ep: (log.distance(m.uid, pm, ep[0], ep[1]), ep[0]))
        d_m = log.distance(m.uid, pm, e, pe)
        mine = [g.uid for g, pg in combat if log.distance(m.uid, pm, g.uid, pg) <= GUARD_WM_RANGE
                and log.distance(g.uid, pg, e, pe) < d_m]
        guarded += bool(mine)
        guards |= set(mine)
    share = guarded / len(machines)
    pts = sum(log.units[g].points for g in guards) / log.side_points(side)
    text = f"{guarded} of {len(machines)} war machine(s) guarded; guards hold {_pct(pts)} of the points"
    return _yes(0, text) if share >= GUARD_WM_SHARE and pts <= GUARD_POINTS_MAX else _no(text)


def _diverted(log: BattleLog, side: int, irritant: int) -> list[int]:
    """Enemy units drawn towards the irritant: after moving in an enemy movement phase of DIVERT_TURNS
    they stand nearer to it than at deployment, and it is the nearest unit of ``side`` to them."""
    out: set[int] = set()
    for p in log.player_turns(1 - side):
        snap = p.moved
        if p.turn not in DIVERT_TURNS or snap is None or irritant not in snap.poses:
            continue
        pi = snap.poses[irritant]
        for e in {m["unit"] for _, pt, m in log.moves if pt == p.index}:
            if e not in snap.poses or e not in log.deployed.poses or log.units[e].side == side:
                continue
            pe = snap.poses[e]
            ours = [(log.distance(e, pe, o, po), o) for o, po in snap.poses.items() if log.units[o].side == side
                    and o not in snap.hosts]
            if not ours or min(ours)[1] != irritant:
                continue
            d0 = log.distance(e, log.deployed.poses[e], irritant, log.deployed.poses.get(irritant, pi))
            if log.distance(e, pe, irritant, pi) < d0:
                out.add(e)
    return sorted(out)


@detector("sacrifice_for_deployment")
def sacrifice_for_deployment(log: BattleLog, side: int) -> Detection:
    """sacrifice_for_deployment (src L368-L376): an isolated missile unit or war machine draws the enemy's attacks.

    Irritant: a friendly shooter or war machine with no friendly unit within IRRITANT_ISOLATION
    inches at deployment. It draws the enemy when either (tactics.md §4.4) the attention ratio
    = (share of enemy volleys, war machine shots and charges aimed at it) / (its share of the
    army's points) >= ATTENTION_RATIO_MIN with >= IRRITANT_MIN_ATTACKS attacks on it, or enemy
    units holding >= DIVERTED_SHARE of the enemy's points move towards it (:func:`_diverted`).
    """
    deployed = _deployed_units(log, side)
    attacks = [v["target"] for _, _, v in log.volleys if log.units[v["unit"]].side != side]
    attacks += [c.target for c in log.charges if log.units[c.unit].side != side]
    pts = log.side_points(side)
    for u, p in deployed:
        if not u.shooter:
            continue
        if any(o.uid != u.uid and log.distance(u.uid, p, o.uid, po) <= IRRITANT_ISOLATION for o, po in deployed):
            continue
        on = attacks.count(u.uid)
        ratio = _share(on, len(attacks)) / (u.points / pts)
        drawn = _diverted(log, side, u.uid)
        share = sum(log.units[e].points for e in drawn) / log.side_points(1 - side)
        text = (f"isolated {u.label} drew {on} of {len(attacks)} enemy attacks (attention ratio {ratio:.1f}); "
                f"{_pct(share)} of the enemy points moved towards it")
        if (on >= IRRITANT_MIN_ATTACKS and ratio >= ATTENTION_RATIO_MIN) or share >= DIVERTED_SHARE:
            return _yes(0, text)
        return _no(text)
    return _no("no isolated missile unit or war machine at deployment")


def _coverage(log: BattleLog, snap: Snapshot, asset: int, side: int) -> float:
    """Degrees around the asset covered by other friendly units within GUARD_RANGE of it.

    A joined asset is measured around the unit it joined (that unit and the characters in it
    are not ring units); joined characters never count as ring units.
    """
    core = snap.hosts.get(asset, asset)
    if core not in snap.poses:
        return 0.0
    pc = snap.poses[core]
    intervals = []
    for o, po in snap.poses.items():
        if o in (asset, core) or o in snap.hosts or log.units[o].side != side:
            continue
        if log.distance(core, pc, o, po) > GUARD_RANGE:
            continue
        w, d = log.dims(o, po)
        angles = [math.atan2(y - pc.y, x - pc.x) for x, y in geo.corners(geo.Pose(po.x, po.y, po.facing), w, d)]
        mid = math.atan2(po.y - pc.y, po.x - pc.x)
        rel = [((a - mid + math.pi) % (2 * math.pi)) - math.pi for a in angles]
        intervals.append((mid + min(rel), mid + max(rel)))
    covered = np.zeros(360, dtype=bool)
    for lo, hi in intervals:
        for k in range(int(math.floor(math.degrees(lo))), int(math.ceil(math.degrees(hi)))):
            covered[k % 360] = True
    return float(covered.sum())


def _bubble(log: BattleLog, side: int, asset: int) -> tuple[bool, str]:
    snaps = [log.deployed] + [p.end for p in log.player_turns(side) if p.end is not None]
    snaps = [s for s in snaps if asset in s.poses]
    if not snaps:
        return False, f"{_label(log, asset)} never on the table"
    ringed = sum(1 for s in snaps if _coverage(log, s, asset, side) >= RING_COVERAGE) / len(snaps)
    moves = [p for p in log.player_turns(side) if asset in p.start.poses and p.end is not None and asset in p.end.poses]
    moved = sum(1 for p in moves if math.dist((p.start.poses[asset].x, p.start.poses[asset].y),
                                              (p.end.poses[asset].x, p.end.poses[asset].y)) >= BUBBLE_MIN_STEP)
    moved = moved / len(moves) if moves else 0.0
    last = log.turns[-1].end if log.turns else log.deployed
    alive = last is not None and asset in last.poses
    text = (f"{_label(log, asset)} ringed >= {RING_COVERAGE:.0f} deg at {_pct(ringed)} of snapshots, "
            f"moved in {_pct(moved)} of turns, {'alive' if alive else 'lost'}")
    return ringed >= RING_SNAPSHOT_SHARE and moved >= BUBBLE_MOVE_SHARE and alive, text


@detector("protected_bubble")
def protected_bubble(log: BattleLog, side: int) -> Detection:
    """protected_bubble (src L378-L383): a key character ringed by friends, the bubble moving, the character alive.

    Candidate assets: the side's characters, wizards first (highest level), then the General,
    then by points; the first that meets the signature is reported. Ring coverage (degrees
    around it covered by other units within GUARD_RANGE; a joined character is measured around
    its unit) >= RING_COVERAGE at >= RING_SNAPSHOT_SHARE of the snapshots (deployment and each
    friendly turn's end); the asset moves >= BUBBLE_MIN_STEP inches in >= BUBBLE_MOVE_SHARE of the
    friendly turns (alone or with the unit it joined); it is alive at the end.
    """
    chars = sorted((u for u in log.side_units(side) if u.character),
                   key=lambda u: (not u.wizard, not u.general, -u.points, u.uid))
    if not chars:
        return _no("no character to protect")
    first = None
    for u in chars:
        ok, text = _bubble(log, side, u.uid)
        if ok:
            return _yes(0, text)
        first = first or text
    return _no(first or "")


__all__ = ["BattleLog", "DETECTORS", "Detection", "detect", "side_index"]
