"""Plain-data battle state: units, terrain, turn and phase.

Everything here is JSON-serialisable through :func:`dataclasses.asdict` and
rebuilt by the ``from_dict`` class methods, so that ``Battle.to_json`` /
``Battle.from_json`` round-trip exactly.

Coordinates (CORE.CONV.TABLE): inches, x along the long edge 0..72, y 0..48.
Side 0 ("blue", player A) has its edge at y = 0, side 1 ("red", player B) at
y = 48. A facing is in degrees counter-clockwise from +x: the unit's front
points along (cos f, sin f), so blue usually faces 90° and red 270°.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any

SIDES = ("blue", "red")
MM_PER_INCH = 25.4

_ATOMIC: frozenset[type] = frozenset({int, float, str, bool, type(None)})
"""The immutable leaf types of a battle state, shared (not copied) by :func:`copy_data`."""

_COPIERS: dict[type, Callable[[Any], Any] | None] = {}
"""A copier for each dataclass :func:`copy_data` has met (filled on first use): None for a dataclass whose
instances may hold more than their fields (see :func:`_field_copier`)."""


def copy_data(value: Any) -> Any:
    """A deep copy of battle-state data: what :func:`copy.deepcopy` gives, in a fraction of its time.

    Lists, dicts and dataclasses (units, profiles, terrain, engagements, castle elements) are copied
    all the way down; ints, floats, strings, booleans, None, and tuples of them are immutable and
    shared; anything else goes through :func:`copy.deepcopy`. Unlike ``deepcopy`` it keeps no memo, so
    an object reachable twice would be copied twice: a battle state holds none (each list, dict and
    dataclass in it has one owner), which ``tests/test_clone.py`` checks on played battles. Dict keys
    are shared (they are strings or numbers).

    Args:
        value: a :class:`BattleState` or any part of one.

    Returns:
        An equal object that shares no list, dict or dataclass with ``value``.
    """
    t = type(value)
    if t in _ATOMIC:
        return value
    if t is list:
        return [x if type(x) in _ATOMIC else copy_data(x) for x in value]
    if t is dict:
        return {k: (x if type(x) in _ATOMIC else copy_data(x)) for k, x in value.items()}
    if t is tuple:
        for x in value:
            if type(x) not in _ATOMIC:
                return tuple(copy_data(y) for y in value)
        return value
    if t not in _COPIERS:
        _COPIERS[t] = _field_copier(t) if is_dataclass(t) else None
    copier = _COPIERS[t]
    return copy.deepcopy(value) if copier is None else copier(value)


def _field_copier(cls: type) -> Callable[[Any], Any] | None:
    """A function copying an instance of dataclass ``cls`` by passing :func:`copy_data` of each field, in
    order, to its ``__init__``; None (use :func:`copy.deepcopy`) unless ``__init__`` takes every field and
    does nothing else (no ``__post_init__``) and ``__slots__`` are exactly the fields (nothing else to copy)."""
    fs = fields(cls)
    names = tuple(f.name for f in fs)
    slots = cls.__dict__.get("__slots__")
    if (slots is None or set(slots) != set(names) or "__dict__" in dir(cls) or hasattr(cls, "__post_init__")
            or not all(f.init for f in fs)):
        return None
    read = operator.attrgetter(*names)
    atomic = _ATOMIC

    def copier(obj: Any) -> Any:
        values = read(obj) if len(names) > 1 else (read(obj),)
        return cls(*[v if type(v) in atomic else copy_data(v) for v in values])

    return copier


PHASES = ("deployment", "start", "movement", "magic", "shooting", "combat")
"""Phase names. ``deployment`` precedes turn 1 (CORE.SETUP.DEPLOY); the others
are the player-turn phases of CORE.GAME.PHASES in order."""


@dataclass(slots=True)
class Profile:
    """A model's characteristic profile (CORE.CONV.CHARACTERISTICS).

    M is in inches; the others are integers 0..10.
    """

    M: int
    WS: int
    BS: int
    S: int
    T: int
    W: int
    I: int  # noqa: E741 - the standard name of Initiative
    A: int
    Ld: int


_US_PER_MODEL = {"infantry": 1, "monstrous_infantry": 3, "cavalry": 2, "chariot": 4, "war_machine": 1}
"""Unit Strength per model by troop type (CORE.SR.UNIT_STRENGTH, CORE.GEO.BASES table); monsters count their W."""


@dataclass(slots=True)
class UnitState:
    """One unit on (or off) the table.

    Attributes:
        uid: index of the unit in ``BattleState.units`` (stable for a battle).
        side: 0 (blue) or 1 (red).
        name: display name, e.g. "Spearmen".
        type_id: the unit type id in the faction file, e.g. "spearmen".
        faction: faction id.
        troop_type: infantry, monstrous_infantry, cavalry, monster, chariot,
            war_machine (CORE.TYPE.*).
        character: True for a character model (a single-model unit here).
        general: True for the army's General (CORE.SETUP.ARMIES).
        profile: the R&F profile (for a character, its own).
        armour_save: the unmodified armour save needed (7 = none), from
            CORE.SAVE.ARMOUR_TABLE; shield included (the combat loss of the
            shield bonus is applied by the rules).
        shield: whether the save includes a shield.
        melee: melee weapon id (CORE.WEAPON.MELEE).
        missile: missile weapon id or None (CORE.SHOOT.WEAPONS).
        special_rules: special rule ids.
        base_w, base_d: base width and depth in inches (CORE.GEO.BASES).
        models: models alive, command models included.
        start_models: models at deployment.
        wounds_taken: wounds on the current (last) model, 0..W-1.
        files: models in the front rank (CORE.GEO.FORMATION).
        champion, standard, musician: command models still alive.
        points: the unit's total points (upgrades included).
        x, y, facing: centre of the footprint (inches) and facing (degrees).
        deployed: on the table (False before deployment).
        removed: destroyed or off the table (scores CORE.VP.DESTROYED).
        fled_off: left the table while fleeing.
        fleeing: the unit is fleeing (CORE.PSY.FLEE.STATUS).
        flags: per-turn markers (moved, marched, charged, rallied, ...), reset
            at the start of each player turn.
        bsb: the army's Battle Standard Bearer (CORE.SR.BSB, CORE.SETUP.ARMIES).
        joined: for a unit, the uids of the characters joined to it, in slot
            order (CORE.MOVE.JOIN; at most 2).
        joined_to: for a joined character, the uid of its host unit. A joined
            character keeps its own profile and wounds but is no unit on the
            table of its own: it moves, flees and is caught with its host
            (:mod:`env.rules.characters`).
        refused: a refused challenge (CORE.CC.CHALLENGE.REFUSE) until its
            combat ends; on a character: it refused; on a unit: its champion did.
        broken: the unit (or the host of a joined character) has failed a
            break test this game (CORE.VP.BSB).
        wizard_level: 0 (not a wizard) or 1..4 (CORE.MAGIC.WIZARDS).
        lore: the wizard's lore id (env.rules.spells.LORES), or None.
        spells: the spell rule IDs it knows, e.g. ["CORE.MAGIC.SPELL.FIRE.1"].
        dispel_scrolls: Dispel Scrolls carried (CORE.MAGIC.SCROLL).
        bound_spells: bound items, each {"name", "spell", "power"} (CORE.MAGIC.BOUND).
        rider: a ridden monster's or chariot's rider, a second profile as a
            plain dict (:mod:`env.rules.monsters`), or None.
        marks: markers that outlast the turn (Terror tested, Fear failed
            against, breath weapon uses).
        t9a: what the T9A modules read (:mod:`env.rules.t9a`): the body armour
            (``armour``: none, light, heavy, plate), ``barding``, and the unit
            type's ``t9a:`` block (size, protections, attributes, artillery);
            empty unless the battle plays a T9A module.
    """

    uid: int
    side: int
    name: str
    type_id: str
    faction: str
    troop_type: str
    profile: Profile
    armour_save: int
    base_w: float
    base_d: float
    models: int
    start_models: int
    files: int
    points: int
    character: bool = False
    general: bool = False
    shield: bool = False
    melee: str = "hand_weapon"
    missile: str | None = None
    special_rules: list[str] = field(default_factory=list)
    wounds_taken: int = 0
    champion: bool = False
    standard: bool = False
    musician: bool = False
    x: float = 0.0
    y: float = 0.0
    facing: float = 90.0
    deployed: bool = False
    removed: bool = False
    fled_off: bool = False
    fleeing: bool = False
    flags: dict[str, Any] = field(default_factory=dict)
    bsb: bool = False
    joined: list[int] = field(default_factory=list)
    joined_to: int | None = None
    refused: bool = False
    broken: bool = False
    wizard_level: int = 0
    lore: str | None = None
    spells: list[str] = field(default_factory=list)
    dispel_scrolls: int = 0
    bound_spells: list[dict[str, Any]] = field(default_factory=list)
    marks: dict[str, Any] = field(default_factory=dict)
    rider: dict[str, Any] | None = None
    t9a: dict[str, Any] = field(default_factory=dict)

    # ----- derived quantities -------------------------------------------
    # ranks, width and depth are read some 25,000 times a battle (every footprint): they compare
    # instead of calling max/min, with the same values as max(1, ...) and min(F, ...).
    @property
    def ranks(self) -> int:
        """R = ceil(N / max(1, F)), at least 1 (CORE.GEO.FORMATION)."""
        if self.troop_type == "war_machine":
            return 1  # the crew is abstracted into one base (CORE.GEO.BASES)
        f = self.files
        r = -(-self.models // (f if f > 1 else 1))  # ceil(N / F) in integers, without a float quotient
        return r if r > 1 else 1

    @property
    def width(self) -> float:
        """Footprint width W = min(F, max(1, N))·w in inches (CORE.GEO.FOOTPRINT)."""
        n = self.models
        if n < 1:
            n = 1
        f = self.files
        return (f if f <= n else n) * self.base_w

    @property
    def depth(self) -> float:
        """Footprint depth D = R·d in inches (CORE.GEO.FOOTPRINT)."""
        if self.troop_type == "war_machine":
            return self.base_d  # one rank: 1·d
        f = self.files
        r = -(-self.models // (f if f > 1 else 1))
        return (r if r > 1 else 1) * self.base_d

    @property
    def alive(self) -> bool:
        """On the table as a unit of its own, with at least one model (a joined character is not)."""
        return self.deployed and not self.removed and self.models > 0 and self.joined_to is None

    @property
    def in_play(self) -> bool:
        """On the table with at least one model, joined characters included."""
        return self.deployed and not self.removed and self.models > 0

    def models_in_rank(self, rank: int) -> int:
        """Models in rank ``rank`` (1-based); the last rank may be short."""
        f = min(self.files, self.models)
        if rank < 1 or rank > self.ranks:
            return 0
        if rank < self.ranks:
            return f
        return self.models - f * (self.ranks - 1)

    @property
    def unit_strength(self) -> int:
        """Unit Strength (CORE.SR.UNIT_STRENGTH, CORE.GEO.BASES table)."""
        if self.troop_type == "monster":
            rider = self.rider is not None and not self.rider.get("slain", False)
            return self.profile.W * self.models + int(rider)  # its starting W; W + 1 ridden (CORE.TYPE.MONSTER)
        return _US_PER_MODEL.get(self.troop_type, 1) * self.models

    def has(self, rule: str) -> bool:
        """Whether the unit has special rule ``rule``."""
        return rule in self.special_rules

    def copy(self) -> UnitState:
        """An independent copy (:func:`copy_data`): its profile, flags, marks, lists and rider are its own."""
        return copy_data(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> UnitState:
        """The unit saved by :func:`dataclasses.asdict` (``d["profile"]`` a dict of :class:`Profile` fields).

        ``d`` is copied, not changed.

        Raises:
            KeyError: no ``profile``.
            TypeError: a missing or unknown field of the unit or its profile.
        """
        d = dict(d)
        d["profile"] = Profile(**d["profile"])
        return cls(**d)


@dataclass(slots=True)
class TerrainFeature:
    """A terrain feature (CORE.TERRAIN.TYPES).

    Attributes:
        kind: hill, woods, marsh, ford, rubble, hedge, fence, wall, building,
            rocks, lake.
        polygon: outline vertices in inches, counter-clockwise or not.
        name: display name.
    """

    kind: str
    polygon: list[tuple[float, float]]
    name: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TerrainFeature:
        """The feature saved by :func:`dataclasses.asdict`; polygon vertices become (x, y) tuples in inches.

        Raises:
            KeyError: no ``kind`` or ``polygon``.
        """
        return cls(kind=d["kind"], polygon=[tuple(p) for p in d["polygon"]], name=d.get("name", ""))


@dataclass(slots=True)
class Engagement:
    """Base contact between two enemy units (CORE.GEO.CONTACT).

    ``attacker`` touches ``defender`` on the defender's ``facing`` (front,
    left, right or rear). ``charged`` is True if ``attacker`` made contact by a
    charge (or a pursuit that counts as charging), in game turn ``turn``;
    ``rounds`` counts the rounds fought. The charge's R1 is the first round,
    fought in the same player turn (``env.rules.combat.charged_this_turn``).
    """

    attacker: int
    defender: int
    facing: str
    charged: bool = False
    turn: int = 0
    rounds: int = 0


@dataclass(slots=True)
class BattleState:
    """The whole mutable battle state.

    Attributes:
        scenario: scenario name.
        table_w, table_h: table size in inches.
        max_turns: game length (CORE.GAME.LENGTH).
        points_limit: points limit (CORE.SETUP.ARMIES).
        units: every unit of both sides, indexed by uid.
        terrain: terrain features.
        engagements: current base contacts between enemies.
        turn: game turn 1..max_turns (0 during deployment).
        phase: one of PHASES.
        active: the phasing player (0 or 1).
        first_player: the side that takes the first player turn.
        over: the game has ended (CORE.GAME.END).
        captured_standards: standards captured, per side (CORE.VP.STANDARD).
        step: decisions applied so far.
        stage: the engine stage (see :mod:`env.rules.battle`).
        queue: JSON data of the procedure in progress (declared charges,
            pursuit decisions, deployment order, ...).
        effects: lasting spell effects, JSON dicts (see :mod:`env.rules.magic`,
            CORE.MAGIC.DURATION).
        castle: the castle elements of a siege (:mod:`env.rules.siege.castle`);
            empty in other battles.
        modules: the T9A modules the battle plays (CFG.MODULES; a siege shows in ``castle``).
    """

    scenario: str
    table_w: float
    table_h: float
    max_turns: int
    points_limit: int
    units: list[UnitState]
    terrain: list[TerrainFeature]
    engagements: list[Engagement] = field(default_factory=list)
    turn: int = 0
    phase: str = "deployment"
    active: int = 0
    first_player: int = 0
    over: bool = False
    captured_standards: list[int] = field(default_factory=lambda: [0, 0])
    step: int = 0
    stage: str = "deploy"
    queue: dict[str, Any] = field(default_factory=dict)
    effects: list[dict[str, Any]] = field(default_factory=list)
    castle: list[Any] = field(default_factory=list)  # siege: CastleElement list (env.rules.siege.castle)
    modules: list[str] = field(default_factory=list)  # the scenario's T9A modules (CFG.MODULES; env.rules.t9a.on)

    def copy(self) -> BattleState:
        """An independent copy (:func:`copy_data`): equal to ``copy.deepcopy(self)``, sharing only immutable
        values (numbers, strings, tuples of them), so playing on either leaves the other unchanged."""
        return copy_data(self)

    def to_dict(self) -> dict[str, Any]:
        """The whole state as nested dicts (:func:`dataclasses.asdict`, a deep copy); read back by :meth:`from_dict`.

        ``modules`` and a unit's ``t9a`` are left out when empty, so a core battle's dict is the same
        as before the T9A modules existed (saved battles and the golden logs stay valid).
        """
        d = asdict(self)
        if not d["modules"]:
            del d["modules"]
        for u in d["units"]:
            if not u["t9a"]:
                del u["t9a"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BattleState:
        """The state saved by :meth:`to_dict`: units, terrain, engagements and castle elements are rebuilt.

        Fields missing from ``d`` that have defaults take them; unknown keys are ignored.

        Raises:
            KeyError: no ``units`` or ``terrain``.
            TypeError: a required field is missing, a unit or engagement has a
                missing or unknown field, or a castle element a missing one.
        """
        kw = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        kw["units"] = [UnitState.from_dict(u) for u in d["units"]]
        kw["terrain"] = [TerrainFeature.from_dict(t) for t in d["terrain"]]
        kw["engagements"] = [Engagement(**e) for e in d.get("engagements", [])]
        if d.get("castle"):
            from battleline.env.rules.siege.castle import CastleElement

            kw["castle"] = [CastleElement.from_dict(c) for c in d["castle"]]
        return cls(**kw)
