"""The Magic phase (CORE.MAGIC.*), lasting spell effects and their hooks.

Flow (stages of :mod:`env.rules.battle`):

* :func:`start` opens the phasing player's magic phase: →N effects of that
  side end (CORE.MAGIC.DURATION), the power pool (CORE.MAGIC.POWER_DICE)
  and the opponent's dispel pool (CORE.MAGIC.DISPEL_DICE) are filled, and the
  stage becomes ``cast``.
* ``cast`` (the phasing player): ``Action("cast", wizard, target,
  "<SPELL_ID>:<n>")`` rolls n power dice (CORE.MAGIC.CAST), or
  ``"<SPELL_ID>:bound"`` uses a bound item (CORE.MAGIC.BOUND); ``swap`` answers
  the Shadow attribute; ``end_phase`` ends the phase, unused dice are lost
  (CORE.MAGIC.SEQUENCE).
* ``dispel`` (the opponent) follows every cast that is not Irresistible:
  ``Action("dispel", option="<n>")`` rolls n dispel dice, ``option="scroll"``
  reads a Dispel Scroll, ``end_phase`` lets the spell through
  (CORE.MAGIC.DISPEL, CORE.MAGIC.SCROLL). Then the spell resolves
  (:mod:`env.rules.spell_effects`) and the stage returns to ``cast``.

The phase's working data is ``state.queue["magic"]`` (JSON): ``side``,
``power`` and ``dispel`` (dice left), ``cast`` and ``bound`` ([uid, spell]
pairs used this phase), ``stopped`` (uids that may not cast again),
``pending`` (the spell awaiting a dispel: caster, spell, target, total,
bound), ``fire_hits`` ([target, wizard] pairs, CORE.MAGIC.ATTR.FIRE) and
``swap`` (the Shadow wizard that may swap now, or None).

Lasting effects live in ``state.effects``, one JSON dict per effect:
``spell``, ``name``, ``caster``, ``side`` (the caster's), ``target``,
``duration`` ("N", "EoT" or "next_turn"), ``until`` (the last player-turn
sequence number it lasts through, :func:`turn_seq`; None for "N"), ``mods``
and the bookkeeping of what it changed (``applied``, ``granted``,
``revoked``, ``combat``). ``mods`` keys: characteristic modifiers
``M WS BS S T I Ld``, ``halve_M`` and ``difficult`` (M halved), ``save``
(armour save worse by N), ``ward`` / ``regeneration`` (X+, given as the
special rules ``ward_save_X`` / ``regeneration_X``), ``fear``, ``no_fly``,
``cc_S`` and ``cc_flaming`` (Close Combat phase only), and the flags the
hooks read: ``reroll_hits``, ``no_charge``, ``no_march``.

The effects change the unit's profile, armour save and special rules while
they last (and undo exactly that when they end), so every phase sees them
without a look-up; only what no characteristic or special rule expresses is
asked for through the hooks :func:`forbids` (charges, marches) and
:func:`rerolls_hits` / :func:`reroll_missed_shots` (Portent of Fate).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, space, tables
from battleline.env.rules.actions import Action
from battleline.env.rules.spells import SPELLS, Spell, lore_spells
from battleline.env.rules.state import BattleState, UnitState

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

MAX_POOL = 12  # CORE.MAGIC.POWER_DICE, DISPEL_DICE, ATTR.DEATH
BASE_POOL = 2
BEASTS_TYPES = frozenset({"cavalry", "monster", "chariot"})  # CORE.MAGIC.ATTR.BEASTS


# --------------------------------------------------------------------- wizards
def generate_spells(battle: Battle) -> None:
    """CORE.MAGIC.WIZARDS / CORE.SR.LOREMASTER: each wizard's spells, rolled at battle start.

    A level-L wizard knows its lore's spell #1 plus L−1 of the other three;
    a Loremaster (or a level 4) knows all four. Each pick rolls a D6 over the
    k spells not yet known: spell ⌈face·k/6⌉ of them (DEFAULT: no re-rolls).
    Wizards whose spells were given (explicit placements) roll nothing.
    """
    for u in battle.state.units:
        if u.wizard_level <= 0 or u.lore is None:
            continue
        table = lore_spells(u.lore)
        if not u.spells:
            if u.has("loremaster") or u.wizard_level >= len(table):
                u.spells = [sp.id for sp in table]
            else:
                known, rest = [table[0]], table[1:]
                for _ in range(u.wizard_level - 1):
                    face = battle.dice.d6("CORE.MAGIC.WIZARDS")[0]
                    known.append(rest.pop(math.ceil(face * len(rest) / 6) - 1))
                u.spells = [sp.id for sp in sorted(known, key=lambda sp: sp.number)]
        battle.emit("CORE.MAGIC.LORE_ACCESS", unit=u.uid, faction=u.faction, lore=u.lore)
        if u.has("loremaster"):
            battle.emit("CORE.SR.LOREMASTER", unit=u.uid, lore=u.lore)
        battle.emit("CORE.MAGIC.WIZARDS", unit=u.uid, side=u.side, level=u.wizard_level, lore=u.lore, spells=list(u.spells))


def wizards(state: BattleState, side: int) -> list[UnitState]:
    """The side's wizards on the table (joined to a unit or not) and not fleeing."""
    return [u for u in state.units if u.side == side and u.wizard_level > 0 and _in_play(u) and not u.fleeing]


def power_pool(state: BattleState, side: int) -> int:
    """CORE.MAGIC.POWER_DICE: 2 + Σ levels of the side's non-fleeing wizards, at most 12."""
    return min(MAX_POOL, BASE_POOL + sum(u.wizard_level for u in wizards(state, side)))


def dispel_pool(state: BattleState, side: int) -> int:
    """CORE.MAGIC.DISPEL_DICE: 2 + Σ⌈L/2⌉ over the side's non-fleeing wizards, at most 12."""
    return min(MAX_POOL, BASE_POOL + sum(math.ceil(u.wizard_level / 2) for u in wizards(state, side)))


# --------------------------------------------------------------------- phase
def start(battle: Battle) -> None:
    """Open the phasing player's Magic phase (CORE.MAGIC.SEQUENCE, POWER_DICE, DISPEL_DICE)."""
    s = battle.state
    expire(battle, magic_side=s.active)
    for u in space.alive_units(s):
        u.flags["front_rank_at_phase"] = _front_rank(u)  # CORE.MAGIC.DAMAGE: losses count for Panic
        u.flags["lost_this_phase"] = 0
    casters = [u.uid for u in _casters(s, s.active)]
    power, dispel = power_pool(s, s.active), dispel_pool(s, 1 - s.active)
    s.queue["magic"] = {
        "side": s.active, "power": power, "dispel": dispel, "cast": [], "bound": [], "stopped": [],
        "pending": None, "fire_hits": [], "swap": None,
    }
    battle.emit("CORE.MAGIC.SEQUENCE", player=s.active, casters=casters)
    if casters:
        battle.emit("CORE.MAGIC.POWER_DICE", player=s.active, pool=power)
        battle.emit("CORE.MAGIC.DISPEL_DICE", player=1 - s.active, pool=dispel)
    battle.set_stage("cast")


def _front_rank(u: UnitState) -> int:
    """``u.models_in_rank(1)``, the models of its front rank, read once from the fields: min(F, N) when the unit
    has more than one rank (R = ceil(N / max(1, F)) > 1, war machines never), else all N (CORE.GEO.FORMATION)."""
    models, files = u.models, u.files
    if u.troop_type != "war_machine" and -(-models // (files if files > 1 else 1)) > 1:
        return files if files <= models else models
    return models


def _queue(battle: Battle) -> dict[str, Any]:
    return battle.state.queue["magic"]


def legal(battle: Battle) -> list[Action]:
    """Legal actions of the ``cast`` or ``dispel`` stage (``end_phase`` is added by the battle)."""
    if battle.state.stage == "dispel":
        return legal_dispels(battle)
    return legal_casts(battle)


def _casters(state: BattleState, side: int) -> list[UnitState]:
    """The side's wizards and bound-item bearers in play."""
    return [u for u in state.units if u.side == side and (u.wizard_level > 0 or u.bound_spells) and _in_play(u)]


def can_cast(battle: Battle, u: UnitState) -> bool:
    """A caster in play, not fleeing, not stupid this turn (CORE.MAGIC.CAST, CORE.SR.STUPIDITY)."""
    body = _body(battle, u)
    return (
        _in_play(u) and u.side == battle.state.active and not (u.fleeing or body.fleeing)
        and not (u.flags.get("stupid") or body.flags.get("stupid"))
    )


def legal_casts(battle: Battle) -> list[Action]:
    """Every (caster, spell, target, dice) the phasing player may cast now (CORE.MAGIC.CAST, BOUND)."""
    m = _queue(battle)
    acts: list[Action] = []
    if m.get("swap") is not None:
        from battleline.env.rules.spell_effects import shadow_partners

        w = battle.unit(m["swap"])
        acts += [Action("swap", w.uid, p.uid) for p in shadow_partners(battle, w)]
    memo: dict[tuple[str, int, int], Any] = {}  # distances, arcs and sight of this decision, shared by the spells
    for u in _casters(battle.state, battle.state.active):
        if not can_cast(battle, u):
            continue
        if u.wizard_level > 0 and u.uid not in m["stopped"] and m["power"] > 0:
            most = min(u.wizard_level + 1, m["power"])
            for sid in u.spells:
                if [u.uid, sid] in m["cast"]:
                    continue
                for t in targets(battle, u, SPELLS[sid], memo):
                    acts += [Action("cast", u.uid, t, f"{sid}:{n}") for n in range(1, most + 1)]
        for item in u.bound_spells:
            if [u.uid, item["spell"]] not in m["bound"]:
                acts += [Action("cast", u.uid, t, f"{item['spell']}:bound")
                         for t in targets(battle, u, SPELLS[item["spell"]], memo)]
    return acts


def targets(battle: Battle, caster: UnitState, sp: Spell, memo: dict[tuple[str, int, int], Any] | None = None) -> list[int]:
    """Legal target uids of ``sp`` for ``caster`` (CORE.MAGIC.TARGETING, ENGAGED_CASTER).

    M: an enemy partly in the caster's vision arc, in LOS, not engaged; D: an
    enemy in LOS, not engaged; H: an enemy, engaged or not; A: a friendly unit
    (the caster's own included); S: the caster. All within range of the
    footprint (closest points). An engaged caster may cast A/S spells only on
    its own unit and H spells only on enemies in contact with it. Steed of
    Shadows needs a non-engaged character, Unseen Lurker a non-engaged unit
    that can move; neither targets a fleeing unit. A wizard joined to a unit
    casts from its unit's footprint, and that unit is "its own unit". In a
    siege, castle elements are never targets, the troops on them are
    (CORE.MAGIC.NO_CASTLE).

    ``memo``: a dict kept for one decision (the battle unchanged), in which the footprint distances (inches),
    vision arcs and lines of sight between two units are kept for the next spell that asks; None keeps none.
    """
    s = battle.state
    body = _body(battle, caster)
    engaged = psychology.engaged(battle, body)
    if sp.type == "S":
        return [caster.uid]
    if sp.type == "A":
        friends = [body] if engaged else _near(s, body, caster.side, sp.range, memo)
        return [f.uid for f in friends if (f.uid == body.uid or _within(body, f, sp.range, memo)) and _augment_ok(battle, f, sp)]
    if engaged:
        if sp.type != "H":
            return []
        contact = {e.attacker for e in s.engagements if e.defender == body.uid}
        contact |= {e.defender for e in s.engagements if e.attacker == body.uid}
        return sorted(uid for uid in contact if battle.unit(uid).alive)
    out = []
    for t in _near(s, body, 1 - caster.side, sp.range, memo):
        if t.uid != body.uid and not _within(body, t, sp.range, memo):
            continue
        if sp.type in ("M", "D"):
            if psychology.engaged(battle, t):
                continue
            if sp.type == "M" and not _kept(memo, ("arc", body.uid, t.uid), lambda t=t: space.in_vision_arc(body, t)):
                continue
            if not _kept(memo, ("los", body.uid, t.uid), lambda t=t: space.line_of_sight(s, body, t, _scan(s, memo))):
                continue
        out.append(t.uid)
    return out


def _kept(memo: dict[tuple[str, int, int], Any] | None, key: tuple[str, int, int], work: Any) -> Any:
    """``work()``, kept in ``memo`` under ``key`` (worked out again when ``memo`` is None)."""
    if memo is None:
        return work()
    if key not in memo:
        memo[key] = work()
    return memo[key]


def _scan(state: BattleState, memo: dict[tuple[str, int, int], Any] | None) -> space.SightScan | None:
    """:func:`space.sight_scan` of ``state``, read once per decision into ``memo``; None without a memo."""
    if memo is None:
        return None
    scan = memo.get(("scan", 0, 0))
    if scan is None:
        scan = memo[("scan", 0, 0)] = space.sight_scan(state)
    return scan


def _within(a: UnitState, b: UnitState, reach: float, memo: dict[tuple[str, int, int], Any] | None) -> bool:
    """Whether ``b``'s footprint is within ``reach`` inches of ``a``'s (CORE.CONV.DISTANCE), the distance kept in
    ``memo``."""
    return _kept(memo, ("dist", a.uid, b.uid), lambda: space.unit_distance(a, b)) <= reach + geo.EPS


def _near(state: BattleState, a: UnitState, side: int, reach: float, memo: dict[tuple[str, int, int], Any] | None) -> list[UnitState]:
    """The units of ``side`` on the table (in uid order) that :func:`space.near` keeps at ``reach`` from ``a``, with
    ``a`` itself: the candidates :func:`_within` decides. With a ``memo``, the centres' distances and the radii's sums
    of every unit of the side are worked out once per decision in one numpy pass (``space.near``'s values, term for
    term) and compared to each spell's ``reach``."""
    units = space.alive_units(state, side)
    if memo is None:
        return [u for u in units if u.uid == a.uid or space.near(a, u, reach)]
    key: Any = ("near", a.uid, side)
    terms = memo.get(key)
    if terms is None:
        xs = np.array([u.x for u in units], dtype=np.float64)
        ys = np.array([u.y for u in units], dtype=np.float64)
        ra = space.radius(a)
        terms = memo[key] = (np.hypot(a.x - xs, a.y - ys), np.array([ra + space.radius(u) for u in units], dtype=np.float64))
    close = (terms[0] <= terms[1] + reach).tolist()
    return [u for u, ok in zip(units, close) if ok or u.uid == a.uid]


def _augment_ok(battle: Battle, f: UnitState, sp: Spell) -> bool:
    if sp.effect == "steed":
        return f.character and not f.fleeing and not psychology.engaged(battle, f)
    if sp.effect == "lurker":
        return not f.fleeing and f.profile.M > 0 and f.troop_type != "war_machine" and not psychology.engaged(battle, f)
    return True


def apply(battle: Battle, action: Action) -> None:
    """Apply a ``cast``-stage or ``dispel``-stage action (see the module docstring)."""
    if battle.state.stage == "dispel":
        _answer_dispel(battle, action)
        return
    m = _queue(battle)
    if action.kind == "swap":
        from battleline.env.rules.spell_effects import shadow_swap

        m["swap"] = None
        shadow_swap(battle, battle.unit(action.unit), battle.unit(action.target))
        return
    m["swap"] = None
    if action.kind == "end_phase":
        end_phase(battle)
        return
    _cast(battle, action)


def end_phase(battle: Battle, reason: str = "caster stopped") -> None:
    """CORE.MAGIC.SEQUENCE: the phase ends; unused power dice are lost."""
    m = _queue(battle)
    battle.emit("CORE.MAGIC.SEQUENCE", player=battle.state.active, ended=reason, unused_power=m["power"])
    m["power"] = 0
    m["pending"] = None
    battle.finish_phase()


# --------------------------------------------------------------------- casting
def _cast(battle: Battle, action: Action) -> None:
    """CORE.MAGIC.CAST, IRRESISTIBLE, MISCAST_TRIGGER, BOUND, ATTR.FIRE, ATTR.BEASTS."""
    m = _queue(battle)
    u, t = battle.unit(action.unit), battle.unit(action.target)
    sid, how = action.option.rsplit(":", 1)
    sp = SPELLS[sid]
    body = _body(battle, u)
    battle.emit("CORE.MAGIC.TARGETING", unit=u.uid, spell=sid, type=sp.type, target=t.uid, distance=space.unit_distance(body, t))
    if battle.state.castle:
        _troops_on_castle(battle, u, sid, t)
    if psychology.engaged(battle, body):
        battle.emit("CORE.MAGIC.ENGAGED_CASTER", unit=u.uid, spell=sid, type=sp.type, target=t.uid)
    if how == "bound":
        power = next(item["power"] for item in u.bound_spells if item["spell"] == sid)
        m["bound"].append([u.uid, sid])
        battle.emit("CORE.MAGIC.BOUND", unit=u.uid, spell=sid, target=t.uid, power=power)
        _await_dispel(battle, {"caster": u.uid, "spell": sid, "target": t.uid, "total": power, "bound": True})
        return
    n = int(how)
    m["power"] -= n
    m["cast"].append([u.uid, sid])
    faces = battle.dice.d6("CORE.MAGIC.CAST", n)
    total = sum(faces)
    if sp.lore == "fire" and any(tt == t.uid and w != u.uid for tt, w in m["fire_hits"]):
        bonus = battle.dice.d3("CORE.MAGIC.ATTR.FIRE")
        total += bonus
        battle.emit("CORE.MAGIC.ATTR.FIRE", unit=u.uid, target=t.uid, bonus=bonus)
    cv = sp.cv
    if sp.lore == "beasts" and t.side != u.side and t.troop_type in BEASTS_TYPES:
        cv -= 1
        battle.emit("CORE.MAGIC.ATTR.BEASTS", unit=u.uid, target=t.uid, cv=cv)
    irresistible = faces.count(6) >= 2
    miscast = faces.count(1) >= 2
    success = irresistible or (not miscast and total >= cv)
    battle.emit(
        "CORE.MAGIC.CAST", unit=u.uid, spell=sid, target=t.uid, dice=faces, total=total, cv=cv,
        success=success, power_left=m["power"],
    )
    if not success:
        m["stopped"].append(u.uid)
    if irresistible:
        battle.emit("CORE.MAGIC.IRRESISTIBLE", unit=u.uid, spell=sid, total=total)
        _resolve(battle, {"caster": u.uid, "spell": sid, "target": t.uid, "total": total, "bound": False})
    if miscast:
        battle.emit("CORE.MAGIC.MISCAST_TRIGGER", unit=u.uid, spell=sid, ones=faces.count(1), cast=success)
        miscast_roll(battle, u)
    if success and not irresistible:
        _await_dispel(battle, {"caster": u.uid, "spell": sid, "target": t.uid, "total": total, "bound": False})


def _troops_on_castle(battle: Battle, u: UnitState, sid: str, t: UnitState) -> None:
    """CORE.MAGIC.NO_CASTLE: a spell at troops on a wall section, tower or citadel targets the troops only.

    Castle elements are never spell targets (a ``cast`` action names a unit;
    :func:`targets` lists units only), so the spell's effects fall on the
    unit and never on the element it stands on; this records that element.
    """
    from battleline.env.rules.siege import castle, damage

    e = castle.element_under(battle.state, t)
    if e is not None and not damage.spell_may_target(e):
        battle.emit("CORE.MAGIC.NO_CASTLE", unit=u.uid, spell=sid, target=t.uid, element=e.id, element_targeted=False)


def _await_dispel(battle: Battle, pending: dict[str, Any]) -> None:
    _queue(battle)["pending"] = pending
    battle.set_stage("dispel")


def miscast_roll(battle: Battle, u: UnitState) -> int:
    """CORE.MAGIC.MISCAST: roll a D6 and apply the row. Returns the face.

    1: one S10 hit on the wizard (no armour save), one S4 hit on every other
    model within 3" of it, and all power dice lost; 2–3: the wizard loses 1 W
    (no saves) and the phase ends; 4–5: the wizard may not cast again; 6: no
    further effect.
    """
    from battleline.env.rules import spell_effects

    m = _queue(battle)
    face = battle.dice.d6("CORE.MAGIC.MISCAST")[0]
    result = {1: "blast", 2: "wound", 3: "wound", 4: "stop", 5: "stop"}.get(face, "none")
    battle.emit("CORE.MAGIC.MISCAST", unit=u.uid, roll=face, result=result)
    if face == 1:
        near = spell_effects.models_within(battle, u, 3.0)
        spell_effects.damage(battle, u, u, 1, 10, save=False, rule="CORE.MAGIC.MISCAST")
        for other, n in near:
            spell_effects.damage(battle, u, other, n, 4, rule="CORE.MAGIC.MISCAST")
        m["power"] = 0
    elif face in (2, 3):
        from battleline.env.rules.casualties import apply_wounds

        apply_wounds(battle, u, 1, rule="CORE.MAGIC.MISCAST")
        end_phase(battle, reason="miscast")
    elif face in (4, 5) and u.uid not in m["stopped"]:
        m["stopped"].append(u.uid)
    return face


def legal_dispels(battle: Battle) -> list[Action]:
    """The opponent's answers to the pending spell: n dispel dice, or a scroll (CORE.MAGIC.DISPEL, SCROLL)."""
    m = _queue(battle)
    acts = [Action("dispel", option=str(n)) for n in range(1, m["dispel"] + 1)]
    if scroll_bearer(battle, 1 - battle.state.active) is not None:
        acts.append(Action("dispel", option="scroll"))
    return acts


def scroll_bearer(battle: Battle, side: int) -> UnitState | None:
    """The side's first model in play, not fleeing, with a Dispel Scroll left (CORE.MAGIC.SCROLL)."""
    units = battle.state.units
    return next((u for u in units if u.side == side and u.dispel_scrolls > 0 and _in_play(u) and not u.fleeing), None)


def _answer_dispel(battle: Battle, action: Action) -> None:
    """CORE.MAGIC.DISPEL / SCROLL: dispelled on a total ≥ the casting total; two 6s always, two 1s never."""
    m = _queue(battle)
    pend = m["pending"]
    m["pending"] = None
    battle.set_stage("cast")
    opp = 1 - battle.state.active
    dispelled = False
    if action.kind == "end_phase":
        battle.emit("CORE.MAGIC.DISPEL", player=opp, spell=pend["spell"], dice=[], dispelled=False, declined=True)
    elif action.option == "scroll":
        bearer = scroll_bearer(battle, opp)
        bearer.dispel_scrolls -= 1
        dispelled = True
        battle.emit("CORE.MAGIC.SCROLL", unit=bearer.uid, spell=pend["spell"], scrolls_left=bearer.dispel_scrolls)
    else:
        n = int(action.option)
        m["dispel"] -= n
        faces = battle.dice.d6("CORE.MAGIC.DISPEL", n)
        total = sum(faces)
        if faces.count(1) >= 2:
            dispelled = False  # DEFAULT: two 1s fail even beside two 6s
        elif faces.count(6) >= 2:
            dispelled = True
        else:
            dispelled = total >= pend["total"]
        battle.emit(
            "CORE.MAGIC.DISPEL", player=opp, spell=pend["spell"], dice=faces, total=total,
            casting_total=pend["total"], dispelled=dispelled, dispel_left=m["dispel"],
        )
    if not dispelled:
        _resolve(battle, pend)


def _resolve(battle: Battle, pend: dict[str, Any]) -> None:
    """The spell takes effect (CORE.MAGIC.DAMAGE, DURATION, lore attributes)."""
    from battleline.env.rules import spell_effects

    caster, sp = battle.unit(pend["caster"]), SPELLS[pend["spell"]]
    wounds = spell_effects.resolve(battle, caster, sp, battle.unit(pend["target"]))
    if not pend["bound"] and _in_play(caster):
        spell_effects.after_cast(battle, caster, sp, wounds)


def resisted(battle: Battle, caster: UnitState, u: UnitState, sp: Spell) -> bool:
    """CORE.SR.MAGIC_RESISTANCE: a D20 against an enemy spell; MR n cancels on 1..5n, MR4 always."""
    if u.side == caster.side:
        return False
    level = max((int(r.rsplit("_", 1)[1]) for r in u.special_rules if r.startswith("magic_resistance_")), default=0)
    if level <= 0:
        return False
    if level >= 4:
        battle.emit("CORE.SR.MAGIC_RESISTANCE", unit=u.uid, spell=sp.id, level=level, roll=None, cancelled=True)
        return True
    face = battle.dice.d20("CORE.SR.MAGIC_RESISTANCE")
    cancelled = face <= 5 * level
    battle.emit("CORE.SR.MAGIC_RESISTANCE", unit=u.uid, spell=sp.id, level=level, roll=face, cancelled=cancelled)
    return cancelled


# --------------------------------------------------------------------- lasting effects
CHARACTERISTICS = ("M", "WS", "BS", "S", "T", "I", "Ld")
GRANTS = {"ward": "ward_save_{}", "regeneration": "regeneration_{}", "fear": "fear"}
"""mods keys that give the target a special rule while the effect lasts."""
REVOKES = {"no_fly": ("fly", "hover")}
"""mods keys that take special rules away while the effect lasts."""


def turn_seq(state: BattleState) -> int:
    """The player-turn sequence number: 2·turn, +1 for the second player's turn."""
    return 2 * state.turn + (0 if state.active == state.first_player else 1)


def add_effect(battle: Battle, caster: UnitState, sp: Spell, target: UnitState) -> dict[str, Any]:
    """Start ``sp``'s lasting effect on ``target`` (CORE.MAGIC.DURATION); a re-cast replaces it.

    Characteristic and armour-save modifiers change ``target.profile`` /
    ``target.armour_save`` at once (clamped, CORE.CONV.CHARACTERISTICS), and
    the change actually made is stored in ``applied`` so that the end of the
    effect undoes exactly that. Granted rules (ward, Regeneration, Fear) are
    added to ``target.special_rules`` and revoked ones (Fly, Hover) taken
    away. ``cc_`` modifiers (Flaming Swords) are applied only during the
    Close Combat phase (:func:`on_phase`).
    """
    s = battle.state
    for old in [e for e in s.effects if e["spell"] == sp.id and e["target"] == target.uid]:
        _end_effect(battle, old, "replaced")
    duration = sp.params["duration"]
    mods = dict(sp.params["mods"])
    until = None if duration == "N" else turn_seq(s) + (1 if duration == "next_turn" else 0)
    effect: dict[str, Any] = {
        "spell": sp.id, "name": sp.name, "caster": caster.uid, "side": caster.side, "target": target.uid,
        "duration": duration, "until": until, "mods": mods, "applied": {}, "granted": [], "revoked": [],
        "combat": False,
    }
    s.effects.append(effect)
    _changed(battle)
    _apply(target, effect, {k: v for k, v in mods.items() if not k.startswith("cc_")})
    if s.phase == "combat":
        _apply_combat(target, effect, True)
    battle.emit(
        "CORE.MAGIC.DURATION", spell=sp.id, caster=caster.uid, target=target.uid, duration=duration, mods=mods,
        started=True,
    )
    return effect


def _apply(u: UnitState, effect: dict[str, Any], mods: dict[str, int]) -> None:
    """Apply ``mods`` to ``u``, recording what changed in ``effect``."""
    applied = effect["applied"]
    for name in CHARACTERISTICS:
        halve = name == "M" and (mods.get("halve_M") or mods.get("difficult"))
        if name not in mods and not halve:
            continue
        old = getattr(u.profile, name)
        new = old + mods.get(name, 0)
        if halve:
            new = math.ceil(new / 2)  # CORE.CONV.ROUNDING: halved characteristics round up
        if name == "Ld" and mods.get(name, 0) < 0:
            new = max(2, new)  # Doom and Darkness: minimum 2
        new = tables.clamp_characteristic(new, name)
        setattr(u.profile, name, new)
        applied[name] = applied.get(name, 0) + new - old
    if mods.get("save"):
        new = min(tables.IMPOSSIBLE, u.armour_save + mods["save"])
        applied["armour_save"] = applied.get("armour_save", 0) + new - u.armour_save
        u.armour_save = new
    for key, pattern in GRANTS.items():
        rule = pattern.format(mods[key]) if mods.get(key) else None
        if rule is not None and rule not in u.special_rules:
            u.special_rules.insert(0, rule)  # first: the better save (a new one is tried first)
            effect["granted"].append(rule)
    for key, rules in REVOKES.items():
        for rule in rules if mods.get(key) else ():
            if rule in u.special_rules:
                u.special_rules.remove(rule)
                effect["revoked"].append(rule)


def _undo(u: UnitState, effect: dict[str, Any]) -> None:
    """Undo everything :func:`_apply` recorded in ``effect``."""
    for name, delta in effect["applied"].items():
        if name == "armour_save":
            u.armour_save = min(tables.IMPOSSIBLE, max(1, u.armour_save - delta))
        else:
            setattr(u.profile, name, tables.clamp_characteristic(getattr(u.profile, name) - delta, name))
    for rule in effect["granted"]:
        if rule in u.special_rules:
            u.special_rules.remove(rule)
    u.special_rules.extend(r for r in effect["revoked"] if r not in u.special_rules)
    effect["applied"], effect["granted"], effect["revoked"] = {}, [], []


def _apply_combat(u: UnitState, effect: dict[str, Any], on: bool) -> None:
    """Switch the ``cc_`` part of an effect (combat S bonus, Flaming attacks) on or off."""
    cc = {k[3:]: v for k, v in effect["mods"].items() if k.startswith("cc_")}
    if not cc or effect["combat"] == on:
        return
    effect["combat"] = on
    key = "combat_applied"
    if on:
        part: dict[str, Any] = {"applied": {}, "granted": [], "revoked": []}
        _apply(u, part, {k: v for k, v in cc.items() if k in CHARACTERISTICS})
        if cc.get("flaming") and "flaming" not in u.special_rules:
            u.special_rules.append("flaming")
            part["granted"].append("flaming")
        effect[key] = part
    elif key in effect:
        _undo(u, effect.pop(key))


def _ended(battle: Battle, e: dict[str, Any], magic_side: int | None = None) -> str | None:
    """Why effect ``e`` is over, or None while it lasts (CORE.MAGIC.DURATION)."""
    s = battle.state
    if not _in_play(s.units[e["target"]]):
        return "target gone"
    if e["duration"] == "N":
        caster = s.units[e["caster"]]
        if magic_side == e["side"]:
            return "next magic phase"
        if not _in_play(caster):
            return "caster slain"
        if caster.fleeing:
            return "caster fled"
        return None
    return "end of turn" if turn_seq(s) > e["until"] else None


def _end_effect(battle: Battle, e: dict[str, Any], reason: str) -> None:
    s = battle.state
    target = s.units[e["target"]]
    _apply_combat(target, e, False)
    _undo(target, e)
    s.effects = [x for x in s.effects if x is not e]
    _changed(battle)
    battle.emit("CORE.MAGIC.DURATION", spell=e["spell"], caster=e["caster"], target=e["target"], ended=reason)


def expire(battle: Battle, magic_side: int | None = None) -> None:
    """End every effect that is over; ``magic_side`` opens its magic phase (its →N effects end)."""
    for e in list(battle.state.effects):
        reason = _ended(battle, e, magic_side)
        if reason is not None:
            _end_effect(battle, e, reason)


def on_phase(battle: Battle) -> None:
    """At every phase start: end the effects that are over; ``cc_`` parts apply in Close Combat only."""
    if not battle.state.effects:
        return
    expire(battle)
    combat = battle.state.phase == "combat"
    for e in battle.state.effects:
        _apply_combat(battle.state.units[e["target"]], e, combat)


def effects_on(battle: Battle, u: UnitState) -> list[dict[str, Any]]:
    """The effects in play on ``u`` now (its host's too, for a joined character)."""
    effects = battle.state.effects
    if not effects:
        return []
    uids = {u.uid, _body(battle, u).uid}
    return [e for e in effects if e["target"] in uids and _ended(battle, e) is None]


# --------------------------------------------------------------------- hooks
def forbids(battle: Battle, u: UnitState, what: str) -> bool:
    """Whether a spell forbids ``u`` to ``what``: "charge" (Beast Cowers) or "march" (Curse of Storms)."""
    key = {"charge": "no_charge", "march": "no_march"}[what]
    return bool(battle.state.effects) and any(e["mods"].get(key) for e in effects_on(battle, u))


def rerolls_hits(battle: Battle, u: UnitState) -> bool:
    """Portent of Fate: ``u`` re-rolls failed to-hit rolls (one re-roll per die, CORE.DICE.REROLL)."""
    return bool(battle.state.effects) and any(e["mods"].get("reroll_hits") for e in effects_on(battle, u))


def reroll_missed_shots(battle: Battle, u: UnitState, shots: int, hits: int, needed: int) -> int:
    """Portent of Fate for shooting: re-roll each missed shot once (CORE.SHOOT.TO_HIT). Returns the new hit count."""
    misses = shots - hits
    if misses <= 0 or needed >= 10 or not rerolls_hits(battle, u):
        return hits
    faces = battle.dice.d6("CORE.MAGIC.SPELL.HEAVENS.2", misses)
    extra = 0
    for f in faces:
        second = battle.dice.d6("CORE.MAGIC.SPELL.HEAVENS.2")[0] if needed > 6 and f == 6 else None
        extra += tables.shot_hits(needed, f, second)
    battle.emit("CORE.MAGIC.SPELL.HEAVENS.2", unit=u.uid, rerolled=misses, hits=extra)
    battle.emit("CORE.DICE.REROLL", unit=u.uid, source="CORE.MAGIC.SPELL.HEAVENS.2", dice=misses)
    return hits + extra


# --------------------------------------------------------------------- helpers
def _changed(battle: Battle) -> None:
    """A unit's M or rules changed: drop the movement module's per-unit option cache."""
    battle.__dict__.pop("_move_cache", None)
    battle._legal_cache = None


def _in_play(u: UnitState) -> bool:
    """On the table with models left (a joined character included)."""
    return u.deployed and not u.removed and u.models > 0


def _body(battle: Battle, u: UnitState) -> UnitState:
    """The unit on the table that carries ``u``: its host when joined, else itself."""
    host = getattr(u, "joined_to", None)
    return u if host is None else battle.state.units[host]
