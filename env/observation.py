"""Observations from the acting side's point of view (DESIGN.md "The environments").

:class:`Observer` turns a :class:`~env.rules.battle.Battle` into a ``Dict`` of
fixed-size arrays, always seen by one ``player`` (0 blue, 1 red) with the table
mirrored for red (x → W − x, y → H − y, facing + 180°) so that the player's own
edge is at y = 0 and it attacks "up". The same position seen from either side
gives the same arrays once mirrored.

Keys (``n`` = unit slots per side, ``size`` = :attr:`ActionCodec.size`):

=============== ================== ======= ==================================================
key             shape              dtype   content
=============== ================== ======= ==================================================
``units``       (2n, N_UNIT_FEAT)  float32 rows 0..n−1: own unit slots, n..2n−1: enemy slots
                                           (uid order per side, as in :mod:`env.encoding`);
                                           an unfilled slot is all zeros; pose, size,
                                           profile, status, wizard level and spells
``globals``     (N_GLOBAL_FEAT,)   float32 turn, phase, pending decision, scores, magic
                                           dice and the cast awaiting a dispel
``planes``      (N_PLANES, 24, 36) float32 only with ``planes=True``: fraction of each
                                           cell covered (row 0 at the player's own edge)
``action_mask`` (size,)            int8    1 = allowed index (see :meth:`ActionCodec.mask`)
=============== ================== ======= ==================================================

Unit features (``units[:, f]``; W × H is the table, 72" × 48" as standard):

== ================ ==========================================================
f  name             meaning and scale
== ================ ==========================================================
0  present          1 if the slot holds a unit (alive or not)
1  alive            1 if on the table with models left
2  own              1 for the observer's units, 0 for the enemy's
3  deployed         1 once placed on the table
4  removed          1 if destroyed or fled off the table
5  x                centre x / W in the player's frame (0..1)
6  y                centre y / H in the player's frame (0 own edge .. 1 enemy edge)
7  sin_facing       sin of the facing in the player's frame (facing "up" = +1)
8  cos_facing       cos of the facing in the player's frame
9  width            footprint width / 24 inches
10 depth            footprint depth / 24 inches
11 files            models in the front rank / 10
12 ranks            ranks / 10
13 models_frac      models / start_models (0..1)
14 models           models / 50
15 wounds           wounds on the last model / its W (0..1)
16 M .. 24 Ld       the profile M WS BS S T W I A Ld, each / 10
25 armour           (7 − armour save) / 6: 0 no save .. 1 a 1+ save
26 points           unit points / 1000
27 fleeing          1 if fleeing
28 engaged          1 if in base contact with an enemy
29 charged          1 if it charged this player turn (flag ``charged``)
30 declared_charge  1 if it declared a charge this player turn
31 moved            1 if it moved this player turn
32 marched          1 if it marched this player turn
33 shot             1 if it shot this player turn
34 has_missile      1 if it has a missile weapon
35 character        1 for a character
36 general          1 for the army's General
37 standard         1 if its standard bearer is alive
38 musician         1 if its musician is alive
39 champion         1 if its champion is alive
40 pending          1 for the unit the pending decision is about (react, pursue)
41 charging_now     1 for the charger whose charge awaits a reaction
42..47 troop type   one-hot: infantry, monstrous_infantry, cavalry, monster,
                    chariot, war_machine
48 wizard_level     wizard level / 4 (0 not a wizard; CORE.MAGIC.WIZARDS)
49..52 spell_cv_s   casting value / 12 of the spell in cast slot s = 0..3 (the
                    s-th spell the unit knows, as in the codec's ``cast`` block);
                    0 for an empty slot
53..56 spell_hostile_s 1 if the spell in cast slot s targets enemies (type M, D
                    or H), 0 if it targets friends or the slot is empty
57 bound_items      bound-spell items carried / 2 (the codec's bound slots)
58 dispel_scrolls   Dispel Scrolls carried / 2 (CORE.MAGIC.SCROLL)
59 cast_stopped     1 if it may not cast again this Magic phase (failed cast or
                    miscast)
60 friendly_spells  lasting spell effects on it cast by its own side / 4
61 enemy_spells     lasting spell effects on it cast by the other side / 4
62 spell_target     1 for the target of the spell awaiting a dispel
== ================ ==========================================================

Global features (``globals[g]``):

====== ================ =====================================================
g      name             meaning and scale
====== ================ =====================================================
0      turn             game turn / max turns (0 during deployment, 1 at the last)
1..6   phase            one-hot over PHASES: deployment, start, movement, magic,
                        shooting, combat
7..18  pending kind     one-hot: deploy, charge, react, move, cast, dispel,
                        shoot, pursue, challenge, accept, game_over, order
19     my_decision      1 if the observer decides now
20     my_turn          1 if the observer is the phasing player (0 in deployment)
21     went_first       1 if the observer took (or takes) the first player turn
22     vp_for           the observer's victory points now / points limit
23     vp_against       the enemy's victory points now / points limit
24     units_for        own units alive / unit slots
25     units_against    enemy units alive / unit slots
26     power_pool       the observer's power pool if it cast now / 12: 2 + its
                        wizards' levels, at most 12 (CORE.MAGIC.POWER_DICE)
27     dispel_pool      the observer's dispel pool if it dispelled now / 12
                        (CORE.MAGIC.DISPEL_DICE)
28     power_left       power dice the casting side has left in this Magic
                        phase / 12 (0 outside one; ``my_turn`` tells whose)
29     dispel_left      dispel dice the other side has left in this Magic phase / 12
30     cast_total       casting total of the spell awaiting a dispel / 24 (0 if none)
31     cast_cv          its casting value / 12 (0 if none)
====== ================ =====================================================

Planes (``planes[c]``), each cell W/36 × H/24 inches (2" × 2" as standard),
value = the fraction of the cell covered (4 × 4 samples per cell):

== ==================================================================
c  content
== ==================================================================
0  own unit footprints
1  enemy unit footprints
2+ one plane per terrain kind, in TERRAIN_KINDS order: hill, woods, marsh,
   ford, rubble, hedge, fence, wall, building, rocks, lake
== ==================================================================
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple, get_args

import numpy as np
import shapely
from gymnasium import spaces

from battleline.env.encoding import CAST_BOUND, CAST_SPELLS, ActionCodec, mirror_pose
from battleline.env.rules import magic
from battleline.env.rules.config import TerrainKind, TroopType
from battleline.env.rules.spells import SPELLS
from battleline.env.rules.state import PHASES

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

TROOP_TYPES: tuple[str, ...] = get_args(TroopType)
TERRAIN_KINDS: tuple[str, ...] = get_args(TerrainKind)
PENDING_KINDS = (
    "deploy", "charge", "react", "move", "cast", "dispel", "shoot", "pursue", "challenge", "accept", "game_over",
    "order",
)

UNIT_FEATURES: tuple[str, ...] = (
    "present", "alive", "own", "deployed", "removed", "x", "y", "sin_facing", "cos_facing",
    "width", "depth", "files", "ranks", "models_frac", "models", "wounds",
    "M", "WS", "BS", "S", "T", "W", "I", "A", "Ld",
    "armour", "points", "fleeing", "engaged", "charged", "declared_charge", "moved", "marched", "shot",
    "has_missile", "character", "general", "standard", "musician", "champion", "pending", "charging_now",
) + tuple(f"type_{t}" for t in TROOP_TYPES) + (
    ("wizard_level",) + tuple(f"spell_cv_{k}" for k in range(CAST_SPELLS))
    + tuple(f"spell_hostile_{k}" for k in range(CAST_SPELLS))
    + ("bound_items", "dispel_scrolls", "cast_stopped", "friendly_spells", "enemy_spells", "spell_target")
)  # fmt: skip
"""Names of the unit feature columns, in order."""

GLOBAL_FEATURES: tuple[str, ...] = (
    ("turn",) + tuple(f"phase_{p}" for p in PHASES) + tuple(f"pending_{k}" for k in PENDING_KINDS)
    + ("my_decision", "my_turn", "went_first", "vp_for", "vp_against", "units_for", "units_against")
    + ("power_pool", "dispel_pool", "power_left", "dispel_left", "cast_total", "cast_cv")
)  # fmt: skip
"""Names of the global features, in order."""

N_UNIT_FEAT = len(UNIT_FEATURES)
N_GLOBAL_FEAT = len(GLOBAL_FEATURES)
PLANE_ROWS, PLANE_COLS = 24, 36
N_PLANES = 2 + len(TERRAIN_KINDS)
SUBSAMPLES = 4
"""Samples per cell along each axis for the plane coverage fractions."""

FEAT_HIGH = 10.0
"""Upper bound of the float features in the observation space (values are clipped to it)."""

_U = {name: k for k, name in enumerate(UNIT_FEATURES)}
_G = {name: k for k, name in enumerate(GLOBAL_FEATURES)}
_PROFILE = ("M", "WS", "BS", "S", "T", "W", "I", "A", "Ld")
_FLAGS = ("charged", "declared_charge", "moved", "marched", "shot")


_TYPE_ONE_HOT: dict[str, list[float]] = {
    t: [1.0 if k == i else 0.0 for k in range(len(TROOP_TYPES))] for i, t in enumerate(TROOP_TYPES)
}
"""The troop-type one-hot columns (``type_*``) of each troop type."""

_NO_SPELL = (0.0, 0.0)
_NO_SPELL_FEATURES = [0.0] * (2 * CAST_SPELLS)


class _RowContext(NamedTuple):
    """What the rows of one :meth:`Observer.units` table read besides their units."""

    player: int
    table_w: float
    table_h: float
    engaged: set[int]
    pending_unit: int | None
    charger: int | None
    stopped: set[int]
    spell_target: int | None
    spells_on: dict[tuple[int, bool], int]


def _spells_on(battle: Battle) -> dict[tuple[int, bool], int]:
    """Lasting spell effects per (target uid, cast by the target's own side)."""
    s = battle.state
    out: dict[tuple[int, bool], int] = {}
    for e in s.effects:
        t, c = e.get("target"), e.get("caster")
        if isinstance(t, int) and 0 <= t < len(s.units):
            caster_side = s.units[c].side if isinstance(c, int) and 0 <= c < len(s.units) else e.get("side")
            key = (t, caster_side == s.units[t].side)
            out[key] = out.get(key, 0) + 1
    return out


def _spell_features(spells: tuple[str, ...]) -> list[float]:
    """``spell_cv_0..3`` then ``spell_hostile_0..3`` of the first :data:`CAST_SPELLS` known spells."""
    feats = [_NO_SPELL] * CAST_SPELLS
    for k, sid in enumerate(spells[:CAST_SPELLS]):
        spell = SPELLS.get(sid)
        if spell is not None:
            feats[k] = (spell.cv / 12.0, float(spell.hostile))
    return [f[0] for f in feats] + [f[1] for f in feats]


_UNIT_READS = attrgetter(
    "deployed", "x", "y", "facing", "removed", "joined_to", "base_w", "base_d", "files", "models", "start_models",
    "wounds_taken", "armour_save", "points", "fleeing", "character", "general", "standard", "musician", "champion",
    "troop_type", "wizard_level", "dispel_scrolls",
)
_DERIVED_READS = attrgetter("alive", "width", "depth", "ranks")
"""The unit's properties a row reads, functions of :data:`_UNIT_READS` alone (deployed, removed, models, joined_to;
files, models, base_w, base_d, troop_type): read only for a row that is worked out."""
_PROFILE_READS = attrgetter("M", "WS", "BS", "S", "T", "W", "I", "A", "Ld")

UnitSnapshot = tuple[tuple[Any, ...], tuple[int, ...], tuple[bool, ...], bool, tuple[str, ...], int, tuple[Any, ...]]
"""Every value one row of the unit table is a function of: the unit's attributes (:data:`_UNIT_READS`), its
profile (:data:`_PROFILE_READS`), its turn flags (:func:`_flag_bits`), whether it has a missile weapon, its first
spells, its bound spells' count and what the table's shared context says of it (:func:`_table_bits`), all
immutable, so an equal snapshot gives an equal row."""


_NO_FLAGS = (False, False, False, False, False)


def _flag_bits(flags: dict[str, Any]) -> tuple[bool, bool, bool, bool, bool]:
    """The turn flags a row reads: charged, declared_charge, moved, marched, shot."""
    if not flags:  # the start of a turn: no flag set yet
        return _NO_FLAGS
    get = flags.get
    return bool(get("charged")), bool(get("declared_charge")), bool(get("moved")), bool(get("marched")), bool(get("shot"))


_NO_TABLE_BITS = (False, False, False, False, 0, 0, False)
"""The table's context bits of a unit it does not single out (:func:`_table_bits`)."""


def _table_bits(uid: int, c: _RowContext) -> tuple[bool, bool, bool, bool, int, int, bool]:
    """What the table's context says of unit ``uid``: engaged, pending, charging, stopped by a dispel, the spell
    effects on it cast by its own side and by the enemy, the target of the pending spell."""
    spells_on = c.spells_on
    return (uid in c.engaged, c.pending_unit == uid, c.charger == uid, uid in c.stopped, spells_on.get((uid, True), 0),
            spells_on.get((uid, False), 0), c.spell_target == uid)


def _singled_out(c: _RowContext) -> set[int | None]:
    """The uids whose :func:`_table_bits` differ from :data:`_NO_TABLE_BITS` (and maybe None)."""
    return c.engaged | c.stopped | {uid for uid, _ in c.spells_on} | {c.pending_unit, c.charger, c.spell_target}


def _unit_snapshot(u: UnitState, uid: int, c: _RowContext, singled_out: set[int | None] | None = None) -> UnitSnapshot:
    """The :data:`UnitSnapshot` of unit ``u`` (uid ``uid``) in a table of context ``c``; ``singled_out``:
    :func:`_singled_out` of ``c``, when the caller has it."""
    if singled_out is None:
        singled_out = _singled_out(c)
    spells = u.spells
    return (_UNIT_READS(u), _PROFILE_READS(u.profile), _flag_bits(u.flags), u.missile is not None,
            tuple(spells[:CAST_SPELLS]) if spells else (), len(u.bound_spells),
            _table_bits(uid, c) if uid in singled_out else _NO_TABLE_BITS)


def _unit_row(snapshot: UnitSnapshot, derived: tuple[bool, float, float, int], own: bool, c: _RowContext) -> list[float]:
    """One row of the unit table (the module's unit feature table, before clipping): N_UNIT_FEAT floats, computed
    from ``snapshot`` (:func:`_unit_snapshot`), the unit's ``derived`` properties (:data:`_DERIVED_READS`, functions
    of the snapshot) and the player and table size of ``c`` alone."""
    (deployed, ux, uy, ufacing, removed, _joined_to, _base_w, _base_d, files, models, start_models, wounds_taken,
     armour_save, points, fleeing, character, general, standard, musician, champion, troop_type, wizard_level,
     dispel_scrolls), profile, (charged, declared, moved, marched, shot), has_missile, spells, bound, (
        engaged, pending, charging, stopped, friendly_spells, enemy_spells, spell_target) = snapshot  # fmt: skip
    M, WS, BS, S, T, W, I, A, Ld = profile  # noqa: N806, E741 - the profile's names
    alive, width, depth, ranks = derived
    if deployed:  # mirror_pose, inline
        w, h = c.table_w, c.table_h
        if c.player == 1:
            x, y, facing = w - ux, h - uy, (ufacing + 180.0) % 360.0
        else:
            x, y, facing = ux, uy, ufacing % 360.0
        rad = math.radians(facing)
        pose = [x / w, y / h, math.sin(rad), math.cos(rad)]
    else:
        pose = [0.0, 0.0, 0.0, 0.0]
    row = [1.0, float(alive), float(own), float(deployed), float(removed)]
    row += pose
    row += [
        width / 24.0, depth / 24.0, files / 10.0, ranks / 10.0,
        models / max(1, start_models), models / 50.0, wounds_taken / max(1, W),
        M / 10.0, WS / 10.0, BS / 10.0, S / 10.0, T / 10.0, W / 10.0, I / 10.0, A / 10.0, Ld / 10.0,
        (7 - armour_save) / 6.0, points / 1000.0, float(fleeing), float(engaged),
        float(charged), float(declared), float(moved), float(marched), float(shot),
        float(has_missile), float(character), float(general), float(standard), float(musician),
        float(champion), float(pending), float(charging),
    ]  # fmt: skip
    row += _TYPE_ONE_HOT[troop_type]
    row.append(wizard_level / 4.0)
    row += _spell_features(spells) if spells else _NO_SPELL_FEATURES
    row += [
        bound / CAST_BOUND, dispel_scrolls / 2.0, float(stopped),
        friendly_spells / 4.0, enemy_spells / 4.0, float(spell_target),
    ]  # fmt: skip
    return row


def _same_row(snapshot: UnitSnapshot, old: UnitSnapshot | None) -> bool:
    """Whether ``old``'s row serves for ``snapshot``: equal snapshots, and, for a deployed unit, no coordinate at
    zero (0.0 == -0.0, yet their rows differ in the sign bit)."""
    reads = snapshot[0]
    return snapshot == old and (not reads[0] or (reads[1] != 0.0 and reads[2] != 0.0))


class _UnitTable:
    """The last unit table an :class:`Observer` built for one (player, table size), with each row's snapshot.

    Attributes:
        table: shape (2n, N_UNIT_FEAT), float32, clipped.
        snapshots: the :data:`UnitSnapshot` of each row (None: an unfilled slot, all zeros).
    """

    __slots__ = ("table", "snapshots")

    def __init__(self, rows: int) -> None:
        self.table = np.zeros((rows, N_UNIT_FEAT), dtype=np.float32)
        self.snapshots: list[UnitSnapshot | None] = [None] * rows


_ZERO_ROW = [0.0] * N_UNIT_FEAT


def victory_points(battle: Battle) -> list[int]:
    """Each side's victory points now, [blue, red] (the sums of :func:`env.rules.victory.breakdown`)."""
    from battleline.env.rules import victory

    return [sum(part.values()) for part in victory.breakdown(battle)]


def _magic_queue(battle: Battle) -> dict[str, Any] | None:
    """The running Magic phase's working data (``state.queue["magic"]``), or None outside a Magic phase."""
    s = battle.state
    if s.phase != "magic":
        return None
    m = s.queue.get("magic")
    return m if isinstance(m, dict) else None


class Observer:
    """Builds observations of a battle for either side.

    Args:
        codec: the action codec (gives the unit slots and the mask size).
        planes: include the raster ``planes`` key.
    """

    def __init__(self, codec: ActionCodec, planes: bool = False) -> None:
        self.codec = codec
        self.n = codec.n
        self.planes = planes
        self._terrain_cache: dict[tuple[Any, ...], np.ndarray] = {}
        self._unit_tables: dict[tuple[int, float, float], _UnitTable] = {}

    # ------------------------------------------------------------------ space
    def space(self) -> spaces.Dict:
        """The ``gymnasium.spaces.Dict`` all observations belong to."""
        d: dict[str, spaces.Space[Any]] = {
            "units": spaces.Box(-1.0, FEAT_HIGH, (2 * self.n, N_UNIT_FEAT), np.float32),
            "globals": spaces.Box(-1.0, FEAT_HIGH, (N_GLOBAL_FEAT,), np.float32),
        }
        if self.planes:
            d["planes"] = spaces.Box(0.0, 1.0, (N_PLANES, PLANE_ROWS, PLANE_COLS), np.float32)
        d["action_mask"] = spaces.Box(0, 1, (self.codec.size,), np.int8)
        return spaces.Dict(d)

    # ------------------------------------------------------------------ observe
    def observe(
        self, battle: Battle, player: int, mask: np.ndarray | None = None, vp: Sequence[int] | None = None
    ) -> dict[str, np.ndarray]:
        """The observation of ``battle`` by ``player`` (0 blue, 1 red).

        Args:
            mask: a precomputed ``codec.mask(battle, player)`` (bool), to save recomputing it.
            vp: precomputed :func:`victory_points` of ``battle`` (blue, red), to save recomputing them.

        Returns:
            A dict matching :meth:`space` (see the module tables).
        """
        if mask is None:
            mask = self.codec.mask(battle, player)
        obs = {"units": self.units(battle, player), "globals": self.global_features(battle, player, vp)}
        if self.planes:
            obs["planes"] = self.raster(battle, player)
        obs["action_mask"] = mask.astype(np.int8)
        return obs

    def units(self, battle: Battle, player: int) -> np.ndarray:
        """The unit table: shape (2n, N_UNIT_FEAT), float32 (see the module table); a new array each call.

        Each row is a function of its unit's :data:`UnitSnapshot` (every value it reads); the observer keeps the
        last table for each player and table size and recomputes only the rows whose snapshot changed.

        Raises:
            ValueError: a side has more units than the codec's slots (as :meth:`ActionCodec.mask`).
        """
        s = battle.state
        n = self.n
        own, enemy = self.codec.slots(battle, player)
        key = (player, s.table_w, s.table_h)
        cache = self._unit_tables.get(key)
        if cache is None:
            cache = self._unit_tables[key] = _UnitTable(2 * n)
        engaged = {e.attacker for e in s.engagements} | {e.defender for e in s.engagements}
        pending = battle.pending
        charger = s.queue["charges"][-1]["charger"] if pending.kind == "react" else None
        m = _magic_queue(battle)
        stopped = set(m["stopped"]) if m else set()
        spell_target = m["pending"]["target"] if m and m.get("pending") else None
        context = _RowContext(player, s.table_w, s.table_h, engaged, pending.unit, charger, stopped, spell_target,
                              _spells_on(battle))
        units, snapshots = s.units, cache.snapshots
        singled_out = _singled_out(context)
        changed: list[int] = []
        fresh: list[UnitSnapshot | None] = []
        rows: list[list[float]] = []
        for base, uids in ((0, own), (n, enemy)):
            i = base
            for uid in uids:
                snapshot = _unit_snapshot(units[uid], uid, context, singled_out)
                if not _same_row(snapshot, snapshots[i]):
                    changed.append(i)
                    fresh.append(snapshot)
                    rows.append(_unit_row(snapshot, _DERIVED_READS(units[uid]), base == 0, context))
                i += 1
            for j in range(i, base + n):  # slots this battle leaves unfilled
                if snapshots[j] is not None:
                    changed.append(j)
                    fresh.append(None)
                    rows.append(_ZERO_ROW)
        if changed:
            block = np.array(rows, dtype=np.float32)
            np.clip(block, -1.0, FEAT_HIGH, out=block)
            cache.table[changed] = block
            for i, snapshot in zip(changed, fresh):
                snapshots[i] = snapshot
        return cache.table.copy()

    def global_features(self, battle: Battle, player: int, vp: Sequence[int] | None = None) -> np.ndarray:
        """The global features: shape (N_GLOBAL_FEAT,), float32 (see the module table).

        Args:
            vp: precomputed :func:`victory_points` of ``battle`` (blue, red); None computes them.
        """
        s = battle.state
        out = [0.0] * N_GLOBAL_FEAT
        pending = battle.pending
        out[_G["turn"]] = s.turn / max(1, s.max_turns)
        out[_G[f"phase_{s.phase}"]] = 1.0
        out[_G[f"pending_{pending.kind}"]] = 1.0
        out[_G["my_decision"]] = float(pending.player == player)
        in_game = s.phase != "deployment"
        out[_G["my_turn"]] = float(in_game and s.active == player)
        out[_G["went_first"]] = float(in_game and s.first_player == player)
        if vp is None:
            vp = victory_points(battle)
        out[_G["vp_for"]] = vp[player] / s.points_limit
        out[_G["vp_against"]] = vp[1 - player] / s.points_limit
        alive = [0, 0]
        for u in s.units:
            if u.alive:
                alive[u.side] += 1
        out[_G["units_for"]] = alive[player] / self.n
        out[_G["units_against"]] = alive[1 - player] / self.n
        out[_G["power_pool"]] = magic.power_pool(s, player) / magic.MAX_POOL
        out[_G["dispel_pool"]] = magic.dispel_pool(s, player) / magic.MAX_POOL
        m = _magic_queue(battle)
        if m:
            out[_G["power_left"]] = m["power"] / magic.MAX_POOL
            out[_G["dispel_left"]] = m["dispel"] / magic.MAX_POOL
            pend = m.get("pending")
            if pend:
                out[_G["cast_total"]] = pend["total"] / 24.0
                spell = SPELLS.get(pend["spell"])
                out[_G["cast_cv"]] = spell.cv / 12.0 if spell is not None else 0.0
        table = np.array(out, dtype=np.float32)
        np.clip(table, -1.0, FEAT_HIGH, out=table)
        return table

    # ------------------------------------------------------------------ planes
    def _samples(self, battle: Battle) -> tuple[np.ndarray, np.ndarray]:
        """Sample points (inches, in the player's frame) of every cell: two arrays of shape (24·k, 36·k)."""
        s = battle.state
        k = SUBSAMPLES
        xs = (np.arange(PLANE_COLS * k) + 0.5) * (s.table_w / (PLANE_COLS * k))
        ys = (np.arange(PLANE_ROWS * k) + 0.5) * (s.table_h / (PLANE_ROWS * k))
        gx, gy = np.meshgrid(xs, ys)
        return gx, gy

    @staticmethod
    def _pool(hits: np.ndarray) -> np.ndarray:
        k = SUBSAMPLES
        return hits.reshape(PLANE_ROWS, k, PLANE_COLS, k).mean(axis=(1, 3), dtype=np.float32)

    def raster(self, battle: Battle, player: int) -> np.ndarray:
        """The planes: shape (N_PLANES, 24, 36), float32 in [0, 1] (see the module table).

        Everything is rasterised in the player's frame (poses and polygons
        mirrored first), so a position and its mirror give identical planes.
        """
        s = battle.state
        out = np.zeros((N_PLANES, PLANE_ROWS, PLANE_COLS), dtype=np.float32)
        gx, gy = self._samples(battle)
        for plane, side in ((0, player), (1, 1 - player)):
            hits = np.zeros(gx.shape, dtype=bool)
            for u in s.units:
                if u.side != side or not u.alive:
                    continue
                x, y, facing = mirror_pose(u.x, u.y, u.facing, player, s.table_w, s.table_h)
                rad = math.radians(facing)
                fx, fy = math.cos(rad), math.sin(rad)  # the unit's front direction
                dx, dy = gx - x, gy - y
                along = dx * fx + dy * fy  # towards the front
                across = -dx * fy + dy * fx  # towards the unit's left
                # a hair of tolerance: a sample exactly on an edge counts in both frames despite rounding
                hits |= (np.abs(along) <= u.depth / 2 + 1e-9) & (np.abs(across) <= u.width / 2 + 1e-9)
            out[plane] = self._pool(hits)
        out[2:] = self._terrain(battle, player, gx, gy)
        return out

    def _terrain(self, battle: Battle, player: int, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
        s = battle.state
        features = [(t.kind, tuple(map(tuple, t.polygon))) for t in s.terrain]
        # a siege's castle: standing walls, towers and closed gates show as buildings (SIEGE.SCEN.CASTLE)
        features += [
            ("building", tuple(map(tuple, e.polygon)))
            for e in s.castle
            if (e.kind == "gate" and e.gate == "closed") or (e.kind != "gate" and e.standing)
        ]
        key = (player, s.table_w, s.table_h, tuple(features))
        cached = self._terrain_cache.get(key)
        if cached is None:
            cached = np.zeros((len(TERRAIN_KINDS), PLANE_ROWS, PLANE_COLS), dtype=np.float32)
            for k, kind in enumerate(TERRAIN_KINDS):
                hits = np.zeros(gx.shape, dtype=bool)
                for t_kind, polygon in features:
                    if t_kind == kind:
                        pts = [mirror_pose(x, y, 0.0, player, s.table_w, s.table_h)[:2] for x, y in polygon]
                        hits |= shapely.contains_xy(shapely.Polygon(pts), gx, gy)
                cached[k] = self._pool(hits)
            if len(self._terrain_cache) > 64:
                self._terrain_cache.clear()
            self._terrain_cache[key] = cached
        return cached
