"""What the tactic detectors share: thresholds, the verdict, the registry and the evidence helpers.

The thresholds are the numbers of the signatures of ``shared/rules/tactics.md`` (proposals,
as tactics.md calls its own); :class:`Detection` is a detector's verdict for one side;
:func:`detector` registers a detector in :data:`DETECTORS` under its catalogue id; the
helpers read charges, models, escape odds, the side's own thirds and halves of the table
and shares from a :class:`~tactics.battle_log.BattleLog` for the evidence strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import shapely

from battleline.env.rules import geometry as geo
from battleline.tactics.battle_log import BattleLog, Charge, Pose, Snapshot, UnitInfo

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


def _in_missile_range(log: BattleLog, snap: Snapshot, shooter: int, target: int) -> bool:
    ps, pt = snap.poses.get(shooter), snap.poses.get(target)
    if ps is None or pt is None or ps.fleeing:
        return False
    tp = log.footprint(target, pt)
    if log.footprint(shooter, ps).distance(tp) > log.units[shooter].missile_range:
        return False
    w, d = log.dims(shooter, ps)
    return geo.partly_in_vision_arc(geo.Pose(ps.x, ps.y, ps.facing), w, d, tp)


def _lane(log: BattleLog, uid: int, p: Pose, length: float) -> shapely.Polygon:
    """The rectangle in front of a unit: its frontage wide, ``length`` deep."""
    w, d = log.dims(uid, p)
    cx, cy = geo.to_world(geo.Pose(p.x, p.y, p.facing), 0.0, d / 2 + length / 2)
    return geo.footprint(geo.Pose(cx, cy, p.facing), w, length)
