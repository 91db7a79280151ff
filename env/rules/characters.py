"""Characters inside units: joining and leaving, slots, the unit's Ld, the BSB, hit allocation.

A joined character (CORE.MOVE.JOIN) stays a :class:`UnitState` of its own:
its profile, wounds, kit and points are its own, and it scores separately
(CORE.VP.DESTROYED). While joined it is no unit on the table
(``UnitState.alive`` is False, ``in_play`` True): the host's uid is in
``character.joined_to`` and the character's uid in ``host.joined``. It stands
in the host's front rank (the displaced model goes to the last rank, so the
host's footprint does not change), moves, flees and is caught with the host,
and lends it its Ld (CORE.TEST.LD_UNIT). :func:`sync` keeps its pose, its
deployment and its fleeing state equal to the host's; it runs after every
engine step.

In close combat a joined character strikes from the front rank with its own
profile; the enemy's blows go to the R&F (attacks are not allocated by
choice in this engine, so only a challenge puts blows on a character,
CORE.TYPE.CHARACTER). Shooting hits reach it by CORE.SHOOT.ALLOCATE; template
hits may be passed on by CORE.SR.LOOK_OUT_SIR (:func:`look_out_sir`).

Units: inches and degrees, as everywhere in the rules.
"""

from __future__ import annotations

import math
from functools import lru_cache
from types import ModuleType
from typing import TYPE_CHECKING

from battleline.env.rules import geometry as geo
from battleline.env.rules import kernel, space, t9a
from battleline.env.rules.actions import Action
from battleline.env.rules.casualties import flag_shrank
from battleline.env.rules.state import BattleState, Engagement, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MAX_JOINED = 2  # CORE.MOVE.JOIN: at most 2 characters in a unit
LEAVE_GAP = 1.0  # CORE.MOVE.LEAVE: at least 1" from the unit
BSB_RANGE = 12.0  # CORE.SR.BSB
ALLOCATE_MIN_RNF = 5  # CORE.SHOOT.ALLOCATE: fewer than 5 R&F
LOOK_OUT_SIR_RNF = 5  # CORE.SR.LOOK_OUT_SIR: more than 5 R&F
_FAR_MARGIN = 1e-6
"""Inches added to a bound before a pair is passed over as out of reach: far above the rounding of the sums."""
CHARACTER_MOVES = ("join", "leave")
"""``move`` options of characters (:class:`env.rules.actions.Action` ``option``)."""


# --------------------------------------------------------------------- lookups
def _t9a() -> ModuleType:
    """The ``t9a.characters`` module (T9A.CHAR.LEAVE, T9A.CC.MAKE_WAY), imported on use: it imports this module."""
    from battleline.env.rules.t9a import characters as module

    return module


def host_of(state: BattleState, u: UnitState) -> UnitState | None:
    """The unit ``u`` is joined to, or None."""
    return None if u.joined_to is None else state.units[u.joined_to]


def carrier(state: BattleState, u: UnitState) -> UnitState:
    """The unit on the table that carries ``u``: its host if joined, else ``u`` itself."""
    return u if u.joined_to is None else state.units[u.joined_to]


def members(state: BattleState, host: UnitState) -> list[UnitState]:
    """The characters joined to ``host`` that are still in play, in slot order."""
    return [state.units[c] for c in host.joined if state.units[c].in_play]


def rank_and_file(u: UnitState) -> int:
    """R&F models of a unit: its models less the champion, standard and musician."""
    return u.models - int(u.champion) - int(u.standard) - int(u.musician)


def _engaged(state: BattleState, uid: int) -> bool:
    return any(uid in (e.attacker, e.defender) for e in state.engagements)


# --------------------------------------------------------------------- slots
def rank_files(host: UnitState) -> int:
    """Files of the host's front rank as its characters stand in it: its models' files, widened to hold every
    joined character when fewer models than characters are left (CORE.TYPE.CHARACTER), at most ``host.files``."""
    return max(1, min(host.files, max(host.models, len(host.joined))))


def slot_file(host: UnitState, index: int) -> int:
    """The front-rank file (0 = leftmost) of the ``index``-th joined character: the centre file, then its right and left.

    A front rank narrower than the characters it holds (one model left with two characters) widens by their files,
    so no two characters share a base's spot (CORE.TYPE.CHARACTER: each stands alone if the unit is wiped out).
    """
    return _slot_file(rank_files(host), index)


@lru_cache(maxsize=256)
def _slot_file(files: int, index: int) -> int:
    """:func:`slot_file` for a front rank of ``files`` files (worked out once per pair)."""
    centre = (files - 1) // 2
    order = [centre]
    for k in range(1, files):
        for f in (centre + k, centre - k):
            if 0 <= f < files and f not in order:
                order.append(f)
    return order[min(index, len(order) - 1)]


def slot_pose(host: UnitState, index: int, shift: int = 0) -> geo.Pose:
    """Pose (inches, degrees) of the ``index``-th joined character's base in the host's front rank, its file moved
    ``shift`` files to the right (negative: left; see :func:`widen_shift`)."""
    return _slot_pose(host.x, host.y, host.facing, rank_files(host), host.base_w, host.base_d, host.width,
                      host.depth, index, shift)


@lru_cache(maxsize=4096)
def _slot_pose(x: float, y: float, facing: float, files: int, base_w: float, base_d: float, width: float,
               depth: float, index: int, shift: int) -> geo.Pose:
    """:func:`slot_pose` from exactly the host's values it reads (kept per pose: :func:`sync` asks every step)."""
    lx = (_slot_file(files, index) + shift + 0.5) * base_w - width / 2
    ly = depth / 2 - base_d / 2
    wx, wy = geo.to_world(geo.Pose(x, y, facing), lx, ly)
    return geo.Pose(wx, wy, facing)


@lru_cache(maxsize=4096)
def _slot_xyf(x: float, y: float, facing: float, files: int, base_w: float, base_d: float, width: float,
              depth: float, index: int, shift: int) -> tuple[float, float, float]:
    """:func:`_slot_pose` as a tuple (x, y, facing): what :func:`sync` writes on the character."""
    p = _slot_pose(x, y, facing, files, base_w, base_d, width, depth, index, shift)
    return p.x, p.y, p.facing


def widen_shift(state: BattleState, host: UnitState) -> int:
    """Files (≤ 0: to the left) by which a front rank widened for its characters (:func:`slot_file`) moves.

    The rank widens by the files the host's models no longer fill; those files
    go to the right first, then as far left as needed, so that no character's
    base overlaps another unit on the table (an enemy touching the host's flank,
    CORE.TYPE.CHARACTER: a character left alone stands where it fought, never
    inside another unit). 0 when the rank does not widen or no side is clear.
    """
    front = min(host.files, max(1, host.models))
    extra = rank_files(host) - front
    if extra <= 0:
        return 0
    own = {host.uid, *host.joined}
    others = [space.footprint(o) for o in state.units if o.alive and o.uid not in own]
    for shift in range(0, -extra - 1, -1):
        bases = [geo.footprint(slot_pose(host, i, shift), host.base_w, host.base_d) for i in range(len(host.joined))]
        if not any(geo.overlaps(b, o) for b in bases for o in others):
            return shift
    return 0


def sync(state: BattleState) -> None:
    """Put every joined character in its slot and give it its host's deployment and fleeing state.

    Also ends CORE.CC.CHALLENGE.REFUSE for units no longer engaged (the
    combat has ended).
    """
    units = state.units
    # it runs after every engine step: the units with joined characters or a refusal are picked in one pass
    for h in [h for h in units if h.joined or h.refused]:
        if h.refused and not _engaged(state, carrier(state, h).uid):
            h.refused = False
        joined = h.joined
        if not joined:
            continue
        for c in joined:
            if units[c].removed:
                h.joined = joined = [c for c in joined if not units[c].removed]
                break
        models = h.models
        if models <= 0:
            continue  # wiped out: no front rank is left, its characters keep the slots they stood in (CORE.TYPE.CHARACTER)
        h_files, held = h.files, len(joined)  # rank_files(h), inline: max(1, min(F, max(N, characters)))
        need = models if models >= held else held
        files = h_files if h_files <= need else need
        if files < 1:
            files = 1
        front = h_files if h_files <= models else models  # min(F, N): models > 0 here
        shift = 0 if files <= front else widen_shift(state, h)  # 0 unless widened
        x, y, facing, deployed, fleeing = h.x, h.y, h.facing, h.deployed, h.fleeing
        base_w, base_d = h.base_w, h.base_d
        # UnitState.width and .depth, inline, with the same values (N > 0 here)
        width = front * base_w
        if h.troop_type == "war_machine":
            depth = base_d
        else:
            r = -(-models // (h_files if h_files > 1 else 1))
            depth = (r if r > 1 else 1) * base_d
        i = 0
        for cid in joined:
            c = units[cid]
            c.x, c.y, c.facing = _slot_xyf(x, y, facing, files, base_w, base_d, width, depth, i, shift)
            c.deployed = deployed
            c.fleeing = fleeing
            i += 1


# --------------------------------------------------------------------- joining and leaving
def can_host(state: BattleState, c: UnitState, h: UnitState) -> bool:
    """Whether character ``c`` may join unit ``h`` (CORE.MOVE.JOIN, CORE.PSY.FLEE.STATUS, CORE.SR.ETHEREAL).

    A non-fleeing friendly non-character unit with the same base and fewer
    than 2 characters; an Ethereal unit takes only Ethereal characters.
    """
    return (
        h.uid != c.uid
        and h.side == c.side
        and not h.character
        and not h.fleeing
        and h.troop_type != "war_machine"
        and abs(h.base_w - c.base_w) < 1e-6
        and abs(h.base_d - c.base_d) < 1e-6
        and len(members(state, h)) < MAX_JOINED
        and (c.has("ethereal") or not h.has("ethereal"))
    )


def attach(state: BattleState, c: UnitState, h: UnitState) -> None:
    """Join ``c`` to ``h`` and put it in its slot (no rules checked; set-up and :func:`join`)."""
    c.joined_to = h.uid
    h.joined.append(c.uid)
    sync(state)


def detach(state: BattleState, c: UnitState) -> None:
    """Take ``c`` out of its host; it keeps its current pose."""
    h = host_of(state, c)
    if h is not None and c.uid in h.joined:
        h.joined.remove(c.uid)
    c.joined_to = None


def leave_pose(battle: Battle, c: UnitState, scenes: dict | None = None, reach: float | None = None) -> geo.Pose | None:
    """Where a leaving character ends (CORE.MOVE.LEAVE): ≥ 1" clear of every unit.

    Tried in order: in front of the host (centre, then along the front),
    off its right and left flanks, behind it; each spot must obey
    CORE.MOVE.ONE_INCH and CORE.MOVE.TABLE_EDGE. None if none is free.
    ``scenes``: compiled scenes to reuse within one decision, by (side, aquatic):
    a joined character is not on the table itself, so every character of a side
    stands against the same units. ``reach``: skip spots farther (inches, straight from ``c``) than this (T9A.CHAR.LEAVE).
    """
    s = battle.state
    h = carrier(s, c)
    hw, hd, cw, cd, facing = h.width, h.depth, c.width, c.depth, h.facing
    spots = _leave_spots(h.x, h.y, facing, hw, hd, c.base_w, c.base_d)
    key = (c.side, c.has("aquatic"))
    scene = scenes[key] if scenes is not None and key in scenes else (
        kernel.scene(s, c, table=kernel.decision_table(battle)) if kernel.available() and not s.castle else None)
    if scenes is not None and c.joined_to is not None:
        scenes[key] = scene
    env: space.Surroundings | None = None
    for x, y in spots:
        if reach is not None and math.hypot(x - c.x, y - c.y) > reach + geo.EPS:
            continue  # T9A.CHAR.LEAVE: beyond the character's move
        if scene is not None:  # the compiled core: the same tests, no polygons built
            blocked = scene.blocked_at(x, y, facing, cw, cd, LEAVE_GAP)
            gap = kernel.native.footprint_distance(x, y, facing, cw, cd, h.x, h.y, facing, hw, hd)
            if blocked >= 0 and abs(gap - (LEAVE_GAP - geo.EPS)) > kernel.TIE_BAND:
                if not blocked and gap >= LEAVE_GAP - geo.EPS:
                    return geo.Pose(x, y, facing)
                continue
        p = geo.Pose(x, y, facing)
        env = env or space.Surroundings(s, c, exclude=frozenset())  # the reference (or a tie the core left to it)
        poly = space.footprint_at(c, p)
        if not env.blocked(poly, poly, gap=LEAVE_GAP) and geo.distance(poly, space.footprint(h)) >= LEAVE_GAP - geo.EPS:
            return p
    return None


@lru_cache(maxsize=4096)
def _leave_spots(x: float, y: float, facing: float, width: float, depth: float, base_w: float,
                 base_d: float) -> tuple[tuple[float, float], ...]:
    """The table points (inches) :func:`leave_pose` tries, in order, for a character of base ``base_w`` x ``base_d``
    leaving a host of footprint ``width`` x ``depth`` at (``x``, ``y``, ``facing``): in front of the host (centre,
    then along the front), off its right and left flanks, behind it (kept per pose: every decision asks)."""
    hp = geo.Pose(x, y, facing)
    d_out = LEAVE_GAP + 0.05
    front_y = depth / 2 + d_out + base_d / 2
    side_x = width / 2 + d_out + base_w / 2
    local = [(k * base_w, front_y) for k in (0.0, 1.0, -1.0, 2.0, -2.0)]
    local += [(side_x, 0.0), (-side_x, 0.0), (0.0, -(depth / 2 + d_out + base_d / 2))]
    return tuple(geo.to_world(hp, lx, ly) for lx, ly in local)


def legal_moves(battle: Battle) -> list[Action]:
    """The phasing player's ``join`` and ``leave`` moves (CORE.MOVE.JOIN, CORE.MOVE.LEAVE).

    Join: ``Action("move", character, host, "join")`` for a lone character
    that may still move and a host within its M (footprint to footprint),
    neither engaged. Leave: ``Action("move", character, None, "leave")`` for
    a joined character that did not join this phase, whose host has not moved
    and is not engaged, when :func:`leave_pose` finds a spot.
    """
    from battleline.env.rules.movement import can_move

    s = battle.state
    active = s.active
    chars = [c for c in s.units  # UnitState.in_play, spelt out
             if c.character and c.side == active and c.deployed and not c.removed and c.models > 0]
    if not chars:
        return []
    engaged = {uid for e in s.engagements for uid in (e.attacker, e.defender)}  # as _engaged, once per decision
    acts: list[Action] = []
    scenes: dict = {}
    hosts: list[tuple[UnitState, float, float, float]] | None = None
    for c in chars:
        if c.joined_to is None:
            if not can_move(battle, c, engaged):
                continue
            if hosts is None:  # the side's units on the table, not engaged: every lone character's candidates,
                # each with its centre and its half-diagonals' bound (w + d) / 2 (inches), worked out once per decision
                hosts = [(h, h.x, h.y, (h.width + h.depth) / 2) for h in s.units  # UnitState.alive, spelt out
                         if h.side == active and h.deployed and not h.removed and h.models > 0 and h.joined_to is None
                         and h.uid not in engaged]
            reach = c.profile.M
            x, y, spread = c.x, c.y, (c.width + c.depth) / 2 + reach + _FAR_MARGIN
            for h, hx, hy, half in hosts:
                # a host farther along x or y than the half-diagonals' bound (w + d) / 2 plus M fails space.near
                # anyway (the centres' distance is at least that offset): it is passed over without the numpy call
                bound = spread + half
                if abs(hx - x) > bound or abs(hy - y) > bound:
                    continue
                if can_host(s, c, h) and space.near(c, h, reach) and space.unit_distance(c, h) <= reach + geo.EPS:
                    acts.append(Action("move", c.uid, h.uid, "join"))
        elif not c.flags.get("joined") and not c.flags.get("moved"):
            h = carrier(s, c)
            if can_move(battle, h, engaged) and (leave_pose(battle, c, scenes) is not None
                                                 if not t9a.on(s, t9a.CHARACTERS)
                                                 else _t9a().can_leave(battle, c, scenes)):
                acts.append(Action("move", c.uid, None, "leave"))
    return acts


def apply_move(battle: Battle, action: Action) -> None:
    """Make a ``join`` or ``leave`` move; the character counts as having moved."""
    c = battle.unit(action.unit)
    if action.option == "join":
        h = battle.unit(action.target)
        attach(battle.state, c, h)
        c.flags["joined"] = True
        c.flags["moved"] = True
        battle.emit("CORE.MOVE.JOIN", unit=c.uid, host=h.uid, slot=h.joined.index(c.uid))
        return
    if t9a.on(battle.state, t9a.CHARACTERS):
        return _t9a().leave(battle, c)  # T9A.CHAR.LEAVE replaces CORE.MOVE.LEAVE
    h = carrier(battle.state, c)
    pose = leave_pose(battle, c)
    if pose is None:  # pragma: no cover - legal_moves checked it
        return
    detach(battle.state, c)
    c.x, c.y, c.facing = pose.x, pose.y, pose.facing
    c.flags["moved"] = True
    battle.emit("CORE.MOVE.LEAVE", unit=c.uid, host=h.uid, x=c.x, y=c.y, facing=c.facing)


# --------------------------------------------------------------------- removal
def on_removed(battle: Battle, u: UnitState, rule: str) -> None:
    """Keep joins consistent when ``u`` is removed (called by ``psychology.destroy``).

    A removed character leaves its host. A removed host whose models were all
    slain while not fleeing leaves its characters on the table: each stands in
    its slot as a unit of its own and takes over the host's engagements in
    which the host's front rank fought (CORE.TYPE.CHARACTER); the footprint has shrunk to its base, so it is
    flagged :data:`env.rules.casualties.SHRANK` and an enemy left apart is closed up to, or disengages, at the
    round's result (CORE.CC.CONTACT_KEEP, :func:`env.rules.combat.close_gaps`). A host caught,
    fled off the table or destroyed while fleeing takes its characters with
    it (CORE.CC.CAUGHT, CORE.PSY.FLEE.DESTROYED).
    """
    s = battle.state
    if u.joined_to is not None:
        detach(s, u)
    if not u.joined:
        return
    sync(s)
    chars = members(s, u)
    wiped_out = u.models <= 0 and not u.fleeing
    for c in chars:
        detach(s, c)
        if not wiped_out:
            from battleline.env.rules.psychology import destroy

            c.fled_off = u.fled_off
            destroy(battle, c, rule, panic=False, with_unit=u.uid)
            continue
        c.flags["inherited"] = u.uid
        for e in list(s.engagements):
            if e.attacker == u.uid:
                s.engagements.append(Engagement(c.uid, e.defender, e.facing, e.charged, e.turn, e.rounds))
            elif e.defender == u.uid and e.facing == "front":
                s.engagements.append(Engagement(e.attacker, c.uid, e.facing, e.charged, e.turn, e.rounds))
        flag_shrank(s, c)  # CORE.CC.CONTACT_KEEP: the enemies of the host's front may not touch its slot
        battle.emit("CORE.TYPE.CHARACTER", unit=c.uid, host=u.uid, alone=True, x=c.x, y=c.y)
    u.joined = []


# --------------------------------------------------------------------- leadership
def unit_ld(battle: Battle, u: UnitState, emit: bool = True) -> int:
    """The Ld the unit tests on: the highest among its models, joined characters included (CORE.TEST.LD_UNIT).

    A character that refused a challenge lends no Ld (CORE.CC.CHALLENGE.REFUSE).
    With ``emit`` (the rules' own tests), emits CORE.TEST.LD_UNIT when a
    character raises the unit's own Ld; estimates pass ``emit=False``.
    """
    best, source = u.profile.Ld, None
    for c in members(battle.state, u):
        if not c.refused and c.profile.Ld > best:
            best, source = c.profile.Ld, c.uid
    if emit and source is not None:
        battle.emit("CORE.TEST.LD_UNIT", unit=u.uid, character=source, ld=best, own_ld=u.profile.Ld)
    return best


def bsb_in_range(battle: Battle, u: UnitState) -> UnitState | None:
    """The friendly BSB whose re-roll unit ``u`` may use (CORE.SR.BSB), or None.

    The BSB must be in play and not fleeing, its unit within 12" of ``u``
    (footprint to footprint, 0 in its own unit), and not have refused a
    challenge in ``u``'s combat (CORE.CC.CHALLENGE.REFUSE).
    """
    s = battle.state
    target = carrier(s, u)
    for b in s.units:
        if not b.bsb or b.side != u.side or not b.in_play:
            continue
        bc = carrier(s, b)
        if bc.fleeing or not bc.deployed:
            continue
        if bc.uid == target.uid:
            if not b.refused:
                return b
            continue
        if space.near(bc, target, BSB_RANGE) and space.unit_distance(bc, target) <= BSB_RANGE:
            return b
    return None


def side_has_bsb(battle: Battle, uids: list[int]) -> bool:
    """Whether the BSB fights among ``uids`` (units or their joined characters), not having refused (CORE.CC.COMBAT_RESULT.STANDARD)."""
    s = battle.state
    for i in uids:
        u = s.units[i]
        if not u.in_play or u.fleeing:
            continue
        if (u.bsb and not u.refused) or any(c.bsb and not c.refused for c in members(s, u)):
            return True
    return False


# --------------------------------------------------------------------- shooting
def allocate_hits(battle: Battle, host: UnitState, hits: int) -> tuple[int, dict[int, int]]:
    """Split ``hits`` on ``host`` between its R&F and its joined characters (CORE.SHOOT.ALLOCATE).

    With fewer than 5 R&F, each hit rolls a D6 and a 6 hits a joined
    character (with two, a further D6: 1–3 the first, 4–6 the second).

    Returns:
        (hits on the unit, {character uid: hits}).
    """
    chars = members(battle.state, host)
    if not chars or hits <= 0 or rank_and_file(host) >= ALLOCATE_MIN_RNF:
        return hits, {}
    faces = battle.dice.d6("CORE.SHOOT.ALLOCATE", hits)
    on_chars: dict[int, int] = {}
    for f in faces:
        if f != 6:
            continue
        pick = chars[0]
        if len(chars) > 1:
            pick = chars[0] if battle.dice.d6("CORE.SHOOT.ALLOCATE")[0] <= 3 else chars[1]
        on_chars[pick.uid] = on_chars.get(pick.uid, 0) + 1
    rest = hits - sum(on_chars.values())
    battle.emit("CORE.SHOOT.ALLOCATE", unit=host.uid, hits=hits, rank_and_file=rest, characters={str(k): v for k, v in on_chars.items()})
    return rest, on_chars


def shoot_character(battle: Battle, shooter: UnitState, c: UnitState, hits: int, strength: int, armour_piercing: bool,
                    ap: int | None = None) -> int:
    """Resolve shooting hits allocated to a joined character (CORE.SHOOT.ALLOCATE), as hits on the unit are.

    CORE.SHOOT.TO_WOUND against its T, then the whole save pipeline
    (CORE.SAVE.PIPELINE: no armour save against Flaming or Ethereal shots,
    CORE.SAVE.NONE; its ward save and Regeneration; Flammable), then its
    wounds (CORE.WOUND.APPLY). Returns the wounds inflicted. ``ap``: the shot's AP (T9A.ARMOUR.VALUE).
    """
    from battleline.env.rules import special_rules, t9a, tables

    res = special_rules.wound_and_save(battle, shooter, c, hits, strength, armour_piercing=armour_piercing,
                                       wound_rule="CORE.SHOOT.TO_WOUND", ap=ap)
    battle.emit("CORE.SHOOT.TO_WOUND", unit=shooter.uid, target=c.uid, hits=hits, strength=strength,
                needed=tables.to_wound(strength, c.profile.T), wounds=res.wounds)
    if not t9a.on(battle.state, t9a.EQUIPMENT):  # T9A.ARMOUR.VALUE replaces it
        battle.emit("CORE.SAVE.MODIFIERS", unit=c.uid, needed=res.armour_needed, saved=res.armour_saved)
    inflicted, _ = special_rules.apply_result(battle, c, res, "CORE.SHOOT.CASUALTIES", shooter=shooter.uid)
    return inflicted


def look_out_sir(battle: Battle, host: UnitState, model: int | None) -> bool:
    """CORE.SR.LOOK_OUT_SIR for a template hit on a joined character (uid) or, with None, the champion.

    In a unit of more than 5 R&F a D6 of 2+ passes the hit to an R&F model.
    Returns True if the hit goes to the R&F instead.
    """
    if rank_and_file(host) <= LOOK_OUT_SIR_RNF:
        return False
    face = battle.dice.d6("CORE.SR.LOOK_OUT_SIR")[0]
    saved = face >= 2
    battle.emit("CORE.SR.LOOK_OUT_SIR", unit=host.uid, model="champion" if model is None else model, roll=face, saved=saved)
    return saved


# --------------------------------------------------------------------- combat
def front_fighters(battle: Battle, group: list[Engagement], excluded: set[int]) -> list[tuple[int, int, int]]:
    """Joined characters that fight from their host's front rank: (character, enemy unit, host).

    A host's front rank fights where the host is the attacker or is
    contacted on its front; each character attacks the first such enemy
    (CORE.MOVE.JOIN, CORE.CC.ATTACKS). Characters in ``excluded`` (duellists,
    refusers) and refusers do not fight.
    """
    s = battle.state
    out: list[tuple[int, int, int]] = []
    hosts = sorted({u for e in group for u in (e.attacker, e.defender)})
    for hid in hosts:
        h = s.units[hid]
        if not h.alive or h.fleeing:
            continue
        enemy = next(
            (e.defender if e.attacker == hid else e.attacker for e in group
             if e.attacker == hid or (e.defender == hid and e.facing == "front")),
            None,
        )
        if enemy is None:
            continue
        for c in members(s, h):
            if c.uid not in excluded and not c.refused:
                out.append((c.uid, enemy, hid))
    if t9a.on(s, t9a.CHARACTERS):
        return _t9a().make_way(battle, group, out)  # T9A.CC.MAKE_WAY: who is in base contact
    return out


def joined_models(battle: Battle, uids: list[int]) -> int:
    """Joined characters in play in the units ``uids`` (they count as models, CORE.CC.COMBAT_RESULT.OUTNUMBER)."""
    s = battle.state
    return sum(len(members(s, s.units[i])) for i in uids if s.units[i].alive)


def refresh_sides(battle: Battle, sides: dict[int, list[int]]) -> dict[int, list[int]]:
    """Add to each side the characters left alone when their host was wiped out this phase."""
    out = {k: list(v) for k, v in sides.items()}
    for u in battle.state.units:
        host = u.flags.get("inherited")
        if host is not None and u.alive:
            for _side, uids in out.items():
                if host in uids and u.uid not in uids:
                    uids.append(u.uid)
    return out
