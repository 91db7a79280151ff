"""Assaulting the castle (SIEGE.ASSAULT.*, SIEGE.CC.*, SIEGE.CAPTURE.PARAPET, SIEGE.REACT.WALL, oil and stones).

Rule functions for the assault on a wall section, used by the engine hooks:

* who may charge a section and with what (:func:`can_charge`, :func:`assault_mode`);
* how many climbers fight (:func:`climbers`) and how many defenders touch them
  (:func:`defenders_touching`), SIEGE.ASSAULT.CLIMB;
* the defenders' advantages (:func:`climber_to_hit`, :func:`defenders_strike_first`,
  SIEGE.CC.DEFENDER_BONUS) and the combat result at a wall (:func:`wall_result_parts`,
  SIEGE.CC.RESULT);
* boiling oil and its variants (:func:`pour`, SIEGE.EQUIP.OIL .. ALCHEMICAL,
  SIEGE.EQUIP.CAULDRON_USE), stones and logs (:func:`throw_stones`, SIEGE.EQUIP.STONES, LOGS);
* taking the parapet (:func:`attackers_win_round`, SIEGE.CAPTURE.PARAPET).

Dice order: oil — one to-wound die per model under the template, then ward
saves (a protected ram's 4+, or the unit's own), then D3 per wound
(alchemical); stones — one to-hit die per thrower in the front rank, then to
wound and armour; logs — one to-hit die per pair, then to wound, armour,
then a D3 per unsaved hit.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from shapely.geometry import Point

from battleline.env.rules import tables
from battleline.env.rules.siege import equipment as eq
from battleline.env.rules.siege.castle import CastleElement, units_on
from battleline.env.rules.siege.damage import hit_models

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

OIL_TEMPLATE = 3.0
"""SIEGE.EQUIP.OIL: a 3" template under the cauldron, touching the wall's outer face."""
DOOR_FIGHTERS = 2
"""SIEGE.CC.RESULT, SIEGE.TOWER.ASSAULT: at a door or a siege tower's bridge, at most 2 models per side fight."""
NATURAL_SIX = 6


def assault_mode(u: UnitState) -> str | None:
    """How ``u`` assaults a wall: "siege_tower", "hooks", "ladders", or None (structure only, SIEGE.DMG.MELEE)."""
    gear = eq.carried(u)
    for mode in ("siege_tower", "hooks", "ladders"):
        if gear.get(mode, 0):
            return mode
    return None


def can_charge(battle: Battle, u: UnitState, e: CastleElement) -> bool:
    """SIEGE.ASSAULT.CHARGE: a standing wall section with enemies on it; ladders do not reach towers.

    A tower is attacked at its door instead (SIEGE.TOWER.ASSAULT).
    """
    if not e.standing or e.kind not in ("wall", "tower", "citadel"):
        return False
    if not any(o.side != u.side for o in units_on(battle.state, e)):
        return False
    if e.kind != "wall":
        return assault_mode(u) == "siege_tower"
    return True


def climbers(u: UnitState, in_contact: int) -> int:
    """SIEGE.ASSAULT.CLIMB: models that fight on the parapet this round.

    One per ladder (at most the models in contact), every hook-armed model in
    contact, or 2 at a siege tower's bridge; 0 without gear.
    """
    mode = assault_mode(u)
    if mode == "siege_tower":
        return min(DOOR_FIGHTERS, u.models)
    if mode == "hooks":
        return in_contact
    if mode == "ladders":
        return min(eq.carried(u)["ladders"], in_contact)
    return 0


def defenders_touching(climbers: int, climber_w: float, defender_w: float, defenders: int) -> int:
    """SIEGE.ASSAULT.CLIMB, CORE.GEO.CONTACT: the wall's defenders in base contact with ``climbers`` climbers.

    The climbers stand side by side in the attacker lane, facing the defenders'
    single rank (SIEGE.CASTLE.WALL), the first one's edge on a defender's file
    edge (files line up as in any engagement). Their joint front is
    ``climbers * climber_w`` inches long; every defender base that touches it,
    corner to corner included, is in base contact: the defenders along the
    front plus one at each end touching only a corner. With equal bases one
    climber touches 3 defenders (the one opposite and its two neighbours),
    two climbers 4, k climbers k + 2 — never more than the ``defenders`` in
    the rank.

    Args:
        climbers: models on the parapet (:func:`climbers`), ≥ 0.
        climber_w, defender_w: base widths in inches (> 0).
        defenders: the defending unit's models in its rank on the wall.

    Returns:
        The defenders that fight the climbers (0 without climbers).
    """
    if climbers <= 0 or defenders <= 0:
        return 0
    front = climbers * climber_w
    # defender j spans [j*w, (j+1)*w] with the front on [0, front]: they touch for j = -1 .. floor(front / w)
    return min(defenders, math.floor(front / defender_w + 1e-6) + 2)


def defender_bonus(mode: str | None, e: CastleElement) -> bool:
    """SIEGE.CC.DEFENDER_BONUS applies: ladder or hook climbers, and the parapet not yet taken (SIEGE.CAPTURE.PARAPET)."""
    return mode in ("ladders", "hooks") and not e.parapet_taken


def climber_to_hit(mode: str | None, e: CastleElement, attacker_ws: int, defender_ws: int) -> int:
    """The climbers' to-hit score against the wall's defenders: only a natural 6 with ladders or hooks
    (SIEGE.CC.DEFENDER_BONUS), else the normal CORE.CC.TO_HIT score (a siege tower suffers no penalty)."""
    if defender_bonus(mode, e):
        return NATURAL_SIX
    return tables.cc_to_hit(attacker_ws, defender_ws)


def defenders_strike_first(mode: str | None, e: CastleElement) -> bool:
    """SIEGE.CC.DEFENDER_BONUS: defenders strike first every round against climbers, even with great weapons."""
    return defender_bonus(mode, e)


def wall_result_parts(parts: dict[str, int]) -> dict[str, int]:
    """SIEGE.CC.RESULT: at a wall neither side counts ranks or outnumber."""
    return {k: v for k, v in parts.items() if k not in ("ranks", "outnumber")}


def attackers_win_round(battle: Battle, e: CastleElement, attacker: UnitState) -> None:
    """SIEGE.CAPTURE.PARAPET: the defenders lose both bonuses; a section with no defenders left is the attacker's."""
    e.parapet_taken = True
    defenders = [o for o in units_on(battle.state, e) if o.side != attacker.side]
    if not defenders:
        e.controller = attacker.side
    battle.emit("SIEGE.CAPTURE.PARAPET", element=e.id, unit=attacker.uid, defenders_left=len(defenders),
                controller=e.controller)


# --------------------------------------------------------------------- cauldrons
def cauldron_ready(c: dict[str, Any], turn: int) -> bool:
    """SIEGE.EQUIP.CAULDRON_USE: used in turn t, next usable in t + 2; never in a turn in which it moved."""
    last = c.get("last_used")
    return (last is None or turn >= last + 2) and c.get("moved") != turn


def template_centre(e: CastleElement, along: float) -> tuple[float, float]:
    """The oil template's centre: 1.5" outside the outer face, ``along`` inches from the face's first end."""
    face = e.outer_face()
    p = face.interpolate(max(0.0, min(along, face.length)))
    ox, oy = math.cos(math.radians(e.outward)), math.sin(math.radians(e.outward))
    return (p.x + ox * OIL_TEMPLATE / 2, p.y + oy * OIL_TEMPLATE / 2)


def models_under(u: UnitState, centre: tuple[float, float], diameter: float = OIL_TEMPLATE) -> int:
    """Models of ``u`` whose base the circular template touches."""
    from battleline.env.rules import geometry as geo
    from battleline.env.rules import space

    pts = geo.model_centres(space.pose(u), u.files, u.models, u.base_w, u.base_d)
    c = Point(centre).buffer(diameter / 2)
    n = 0
    for x, y in pts:
        base = Point(x, y).buffer(max(u.base_w, u.base_d) / 2, cap_style="square")
        n += bool(c.intersects(base))
    return n


def pour(battle: Battle, crew: UnitState, e: CastleElement, target: UnitState, along: float | None = None,
         models: int | None = None) -> int:
    """Pour the crew's cauldron on ``target`` at the foot of ``e`` (SIEGE.EQUIP.OIL and its variants).

    Every model under the template takes one hit: S5 (metal S6), no armour save,
    1 wound (alchemical: D3, Flaming). A protected ram gives a 4+ ward against it;
    boiling blood makes a unit with casualties take a Panic test. Never against a
    siege tower (SIEGE.REACT.WALL). ``models`` overrides the template count (tests).
    Returns the unsaved wounds.
    """
    variant = eq.cauldron_variant(crew)
    if variant is None:
        raise ValueError(f"unit {crew.uid} crews no cauldron")
    if assault_mode(target) == "siege_tower":
        raise ValueError("oil is never poured on a siege tower's unit (SIEGE.REACT.WALL)")
    it = eq.item(variant)
    rule = it["rule"]
    if models is None:
        centre = template_centre(e, e.outer_face().length / 2 if along is None else along)
        models = models_under(target, centre)
    ward = eq.item("protected_ram")["ward_against_oil"] if eq.carried(target).get("protected_ram") else None
    battle.emit(rule, crew=crew.uid, element=e.id, target=target.uid, models=models, strength=it["strength"])
    before = target.models
    wounds = hit_models(battle, target, models, it["strength"], rule, armour=False, wounds=it["wounds"], ward=ward,
                        flaming=bool(it.get("flaming")), element=e.id)
    c = _cauldron_of(e, crew)
    c["last_used"] = battle.state.turn
    if variant == "blood" and target.alive and target.models < before:
        from battleline.env.rules import psychology

        psychology.panic_test(battle, target, (crew.x, crew.y), "CORE.PSY.PANIC.TRIGGER_CASUALTIES", source=crew.uid)
    return wounds


def _cauldron_of(e: CastleElement, crew: UnitState) -> dict[str, Any]:
    for c in e.cauldrons:
        if c.get("crew") == crew.uid:
            return c
    c = {"id": f"{e.id}-{crew.uid}", "variant": eq.cauldron_variant(crew), "crew": crew.uid, "along": None,
         "last_used": None, "moved": None}
    e.cauldrons.append(c)
    return c


# --------------------------------------------------------------------- stones and logs
def throw_stones(battle: Battle, u: UnitState, target: UnitState, cover: int = 0) -> int:
    """SIEGE.EQUIP.STONES / LOGS: the wall's defenders drop stones (or logs) on a unit in contact with the wall.

    To hit with the base BS, without move or range modifiers (other modifiers,
    such as ``cover``, still apply): stones one per model in the front rank,
    S4, 1 wound; logs one per 2 models, S4, D3 wounds. Never against a siege
    tower's unit. Returns the unsaved wounds.
    """
    gear = eq.carried(u)
    kind = "logs" if gear.get("logs") else "stones" if gear.get("stones") else None
    if kind is None:
        raise ValueError(f"unit {u.uid} has neither stones nor logs")
    if assault_mode(target) == "siege_tower":
        raise ValueError("stones are never thrown at a siege tower's unit (SIEGE.REACT.WALL)")
    it = eq.item(kind)
    front = u.models_in_rank(1)
    shots = front // 2 if kind == "logs" else front
    needed = tables.shooting_to_hit(u.profile.BS, cover)
    faces = battle.dice.d6(it["rule"], shots) if shots else []
    hits = sum(1 for f in faces if tables.shot_hits(needed, f, None))
    battle.emit(it["rule"], unit=u.uid, target=target.uid, shots=shots, needed=needed, hits=hits)
    return hit_models(battle, target, hits, it["strength"], it["rule"], wounds=it["wounds"])
