"""The scripted agents' forecast of the enemy charges next turn: the danger of a place and the dead-zone check.

:class:`DangerForecast` (a base of ``agents.base.ScriptedAgent``) answers how badly an enemy charge next turn would
go for a unit where it stands (:meth:`DangerForecast.danger`) and replaces a move that would end in the enemy's dead
zone by a safer one (:meth:`DangerForecast.safer_option`). While an agent works out one decision (the battle holding
still) it keeps what it reads in a :class:`_Decision`, and its dangers in a store shared by every decision that sees
the same enemies and terrain (:meth:`DangerForecast._danger_store`). The charge geometry is :mod:`agents.threats`'.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING

import numpy as np

from battleline.agents import estimates
from battleline.agents.steering import moved_copy, predict_pose
from battleline.agents.threats import (
    _UNSET,
    _charger_key,
    _kept_reach_bound,
    _kept_threat,
    _place_key,
    _target_key,
)
from battleline.env.rules import psychology, space
from battleline.env.rules.state import UnitState
from battleline.tactics.threat_zones import can_threaten, engaged_uids

if TYPE_CHECKING:
    from battleline.agents.threats import PoolAnswers
    from battleline.env.rules.battle import Battle


BREAK_WEIGHT = 3.0
"""Combat-result value of breaking the enemy (a broken unit is usually run down)."""
DANGER_LIMIT = 1.0
"""Danger (see :meth:`DangerForecast.danger`) above which a move is replaced by a safer one."""
SAFER_OPTIONS = ("advance_half", None, "backward")
"""The fall-backs of a dangerous move, most progress first (None: stay put)."""
WORLD_MEMO_SIZE = 8
"""Most worlds (enemies and terrain) a scripted agent keeps dangers for (:meth:`DangerForecast._danger_store`)."""
DANGER_MEMO_SIZE = 65536
"""Most answers one world's store keeps (then it starts afresh)."""
_OVER = "over the danger limit"
"""A kept :meth:`DangerForecast._safe_danger` answer: more than :data:`DANGER_LIMIT`, not worked out in full."""
_SAFER = "safer_option's choice"
"""The first element of the keys under which :meth:`DangerForecast.safer_option` keeps its choices in a danger store."""
_BY_GENERAL = "kept per the General's Ld"
"""Kept under a danger key whose answers read the General's Ld lent to the unit (see
:meth:`DangerForecast._keep_answer`)."""
HYPOT_BAND = space.HYPOT_BAND
FAR_MARGIN = 1.0 + 1e-9
"""Relative margin past which a squared centre distance is surely beyond a reach: ``dx² + dy² > (r·FAR_MARGIN)²``
implies ``hypot(dx, dy) > r`` whatever the rounding (each is within a few units in the last place)."""


class _Decision:
    """What a scripted agent keeps while it works out one decision (the battle holding still).

    Attributes:
        dangers: :meth:`DangerForecast._kept_danger`'s answers (:meth:`DangerForecast._danger_store`), once looked up:
            the store shared by every decision that sees the same enemies and terrain.
        chargers: :meth:`DangerForecast._chargers`'s lists by ``ignore``.
        lds: the General's Ld lent to each unit, as ``estimates.break_chance`` keeps it.
        pool: :meth:`agents.base.ScriptedAgent.enemy_pool` once read.
        generals: :func:`lending_generals` per side, once read; lenders: their keys (the Generals' uid, Ld, refusal
            and Large Target, their carriers' uid and place) per side, once read.
        targets: (:meth:`agents.base.ScriptedAgent.enemies`, the uids of the units in combat) once
            :meth:`agents.base.ScriptedAgent.holds_to_shoot` has read them.
    """

    __slots__ = ("chargers", "dangers", "generals", "lds", "lenders", "pool", "targets")

    def __init__(self) -> None:
        self.dangers: dict[tuple, object] | None = None
        self.chargers: dict[frozenset[int], list[tuple[UnitState, tuple, tuple[float, float]]]] = {}
        self.lds: dict[int, tuple[UnitState, int | None]] = {}
        self.pool: tuple[list[UnitState], PoolAnswers] | None = None
        self.generals: dict[int, list[tuple[UnitState, UnitState, float]]] = {}
        self.lenders: dict[int, tuple] = {}
        self.targets: tuple[list[UnitState], set[int]] | None = None


class DangerForecast:
    """The danger forecast and the dead-zone check of a scripted agent (``agents.base.ScriptedAgent``).

    Reads the agent's :attr:`side`, its :meth:`enemies` and, while it works out a decision, its ``_decision``
    (a :class:`_Decision`; absent or None: every answer afresh); keeps its danger stores in ``_worlds``.
    """

    side: int

    if TYPE_CHECKING:
        def enemies(self, battle: Battle, fleeing: bool = False) -> list[UnitState]:
            """Enemy units on the table; fleeing ones only if ``fleeing`` (``agents.base.ScriptedAgent.enemies``)."""

    def danger(self, battle: Battle, u: UnitState, ignore: frozenset[int] = frozenset()) -> float:
        """How badly an enemy charge next turn would go for ``u`` where it stands.

        The worst, over enemies that could declare a charge on it (in reach,
        ``u`` in their front arc), of chance to reach × (the charger's expected
        combat-result lead + the value of breaking ``u``); 0 when no enemy
        expects to win. ``u`` may be a forecast copy (see ``steering.moved_copy``);
        enemies in ``ignore`` are left out.
        """
        return self._kept_danger(battle, u, ignore)

    def _kept_danger(self, battle: Battle, u: UnitState, ignore: frozenset[int],
                     chargers: list[tuple[UnitState, tuple, tuple[float, float]]] | None = None,
                     lds: dict[int, tuple[UnitState, int | None]] | None = None) -> float:
        """:meth:`_danger` of ``u`` against :meth:`_chargers` (``chargers`` when read already; ``lds`` as there).

        Within the agent's ``act`` (the battle holding still) the answer is kept in :meth:`_danger_store` (shared by the
        decisions that see the same enemies and terrain) per ``ignore`` and all :meth:`_danger` reads of ``u``: uid,
        side, the unit it is joined to, its :func:`_target_key` (place, formation, special rules) and its
        ``estimates.combat_key``, and, where the answer reads it, the General's Ld lent to ``u``
        (:meth:`_kept_answer`)."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            return self._danger(battle, u, self._chargers(battle, ignore) if chargers is None else chargers, lds)
        store = self._danger_store(battle, decision)
        key = _danger_key(ignore, u)
        d = self._kept_answer(battle, decision, store, key, u)
        if d is None or d is _OVER:
            if chargers is None:
                chargers = self._chargers(battle, ignore)
            d = self._danger(battle, u, chargers, decision.lds)
            self._keep_answer(store, key, u, d, decision.lds)
        return d  # type: ignore[return-value]

    def _danger_store(self, battle: Battle, decision: _Decision) -> dict[tuple, object]:
        """Where :meth:`_kept_danger` keeps its answers for ``decision``: one store per "world" of the enemies that
        may charge (:meth:`_chargers` with nobody ignored: each one's uid, :func:`_charger_key` and
        ``estimates.combat_key``, in order) and the terrain (``space.terrain_key``). That is all :meth:`_danger`
        reads besides ``u`` and the General's Ld lent to it, so a store serves every decision of that world (a
        movement phase in which only our own units move). The last :data:`WORLD_MEMO_SIZE` worlds are kept."""
        store = decision.dangers
        if store is None:
            world = (space.terrain_key(battle.state),
                     tuple((e.uid, key, estimates.combat_key(e)) for e, key, _ in self._chargers(battle)))
            worlds: dict[tuple, dict[tuple, object]] = self.__dict__.setdefault("_worlds", {})
            store = worlds.get(world)
            if store is None:
                if len(worlds) >= WORLD_MEMO_SIZE:
                    worlds.clear()
                store = worlds[world] = {}
            elif len(store) >= DANGER_MEMO_SIZE:
                store.clear()
            decision.dangers = store
        return store

    @staticmethod
    def _kept_answer(battle: Battle, decision: _Decision, store: dict[tuple, object], key: tuple,
                     u: UnitState) -> object:
        """The answer kept in ``store`` under ``key`` (:func:`_danger_key` of ``u``): a danger, :data:`_OVER` (more
        than :data:`DANGER_LIMIT`, not worked out in full) or None (none kept). An answer that read the General's
        Ld lent to ``u`` is kept under ``key + (that Ld,)`` (:data:`_BY_GENERAL` under ``key``); the Ld is then
        looked up (:func:`general_ld`, kept in ``decision.lds`` as ``estimates.break_chance`` keeps it)."""
        d = store.get(key)
        if d is _BY_GENERAL:
            kept = decision.lds.get(id(u))
            if kept is None:
                kept = decision.lds[id(u)] = (u, general_ld(battle, u, decision))
            d = store.get(key + (kept[1],))
        return d

    @staticmethod
    def _keep_answer(store: dict[tuple, object], key: tuple, u: UnitState, d: object,
                     lds: dict[int, tuple[UnitState, int | None]]) -> None:
        """Keep :meth:`_danger`'s answer ``d`` for ``u`` (a danger, or :data:`_OVER`) in ``store`` under ``key``.

        :meth:`_danger` reads the General's Ld lent to ``u`` only through ``estimates.break_chance`` (which keeps
        it in ``lds``), at the latest for the first charger expected to win with a chance to reach above 0 (``u``
        not Unbreakable): whether it reads it at all depends on nothing the Ld changes. When ``lds`` holds no Ld for
        ``u`` it was not read, and a danger of 0 is 0 whatever the Ld (every part is the chance to reach × a
        positive number): such an answer is kept under ``key`` itself. Otherwise under ``key + (the Ld,)``, with
        :data:`_BY_GENERAL` under ``key``."""
        kept = lds.get(id(u))
        if kept is None or (d is not _OVER and d == 0.0):
            store[key] = d
        else:
            store[key] = _BY_GENERAL
            store[key + (kept[1],)] = d

    def _chargers(self, battle: Battle, ignore: frozenset[int] = frozenset()) -> list[tuple[UnitState, tuple, tuple[float, float]]]:
        """The enemies :meth:`danger` weighs (not in ``ignore``, able to declare a charge: ``can_threaten``), each
        with its part of the :func:`agents.threats.charge_threat` key (:func:`_charger_key`) and its :func:`_reach_bound`, in
        :meth:`enemies`' order. Kept per ``ignore`` for the decision while :meth:`act` works it out (the list is
        shared then: read it, never change it); a list with some ignored is the one with nobody ignored, less those."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            return self._chargers_afresh(battle, ignore)
        found = decision.chargers.get(ignore)
        if found is None:
            if ignore:  # the list with nobody ignored, less the ignored: the same elements in the same order
                found = [c for c in self._chargers(battle) if c[0].uid not in ignore]
            else:
                found = self._chargers_afresh(battle, ignore)
            decision.chargers[ignore] = found
        return found

    def _chargers_afresh(self, battle: Battle, ignore: frozenset[int]) -> list[tuple[UnitState, tuple, tuple[float, float]]]:
        """:meth:`_chargers` worked out (``can_threaten`` with the engaged units listed once; each bound kept per
        :func:`_charger_key`, all it is worked out from: :func:`_kept_reach_bound`)."""
        engaged = engaged_uids(battle)
        out = []
        for e in self.enemies(battle):
            if e.uid not in ignore and can_threaten(battle, e, engaged):
                key = _charger_key(e)
                out.append((e, key, _kept_reach_bound(e, key)))
        return out

    def _danger(self, battle: Battle, u: UnitState, chargers: list[tuple[UnitState, tuple, tuple[float, float]]],
                lds: dict[int, tuple[UnitState, int | None]] | None = None, limit: float | None = None) -> float:
        """:meth:`danger` of ``u`` against ``chargers`` (:meth:`_chargers`, read once for several places of ``u``).

        ``limit``: once some charger's part exceeds it, that part is returned at once (above ``limit``, and never
        above the danger, the max of all the parts); None: every charger is weighed. At most ``limit``, the answer
        is the danger either way. Whatever ``limit``, the greatest part so far is also returned at once when it
        exceeds the charger's reach bound (its :func:`_reach_bound` plus ``u``'s radius, inches): the answer these
        agents have always played with.

        A charger whose centre lies beyond its :func:`_reach_bound` plus ``u``'s radius fails the first test of
        :func:`agents.threats._threat_geometry` (``space.near``, term for term, ``math.hypot`` answering outside its
        :data:`space.HYPOT_BAND`) and is passed over without a key built; one whose squared centre distance exceeds
        that bound's square by a margin (:data:`FAR_MARGIN`) is passed over without the distance taken; the others
        have passed that test, so their geometry (:func:`agents.threats._kept_threat`) is worked out with the reach known. Each
        part is ``estimate_combat``'s (the round, then the break test of ``u`` when the charger wins it); the break
        test is skipped where even a sure break (chance 1) could not raise the worst part so far. ``lds``: the
        General's Ld kept per unit (:func:`estimates.break_chance`) while the battle holds still (a new one when
        None)."""
        if not chargers:
            return 0.0
        worst = 0.0
        target = u_key = None
        ru = space.radius(u)
        ux, uy = u.x, u.y
        if lds is None:
            lds = {}
        for e, key, bound in chargers:
            dx, dy = e.x - ux, e.y - uy
            reach = (bound[0] + ru) + bound[1]
            far = reach * FAR_MARGIN
            if dx * dx + dy * dy > far * far:
                continue
            d = math.hypot(dx, dy)
            if d > reach if abs(d - reach) > HYPOT_BAND * (1.0 + abs(reach)) else float(np.hypot(dx, dy)) > reach:
                continue
            if target is None:
                target = _target_key(u)
            threat = _kept_threat(battle, e, u, key + target, bound[1])
            if threat is None:
                continue
            p, facing = threat
            if u_key is None:
                u_key = estimates.combat_key(u)
            _, _, diff, a_left, d_left = estimates.combat_round(battle, e, u, facing, keys=(estimates.combat_key(e), u_key))
            if diff > 0:
                if p * (diff + BREAK_WEIGHT) > worst:  # else this part, at most that, cannot raise the worst
                    if id(u) not in lds and not u.has("unbreakable"):  # where break_chance reads it
                        lds[id(u)] = (u, general_ld(battle, u, self.__dict__.get("_decision")))
                    chance = estimates.break_chance(battle, u, d_left, a_left, diff, lds)
                    worst = max(worst, p * (diff + BREAK_WEIGHT * chance))
                if worst > reach or (limit is not None and worst > limit):
                    return worst
        return worst

    def ignores_danger(self, battle: Battle, u: UnitState) -> bool:
        """Whether ``u`` moves without :meth:`safer_option`'s dead-zone check (subclasses: a unit whose job is
        to stand in the enemy's reach). The base agent never does."""
        return False

    def safer_option(self, battle: Battle, u: UnitState, option: str, options: Collection[str]) -> str | None:
        """``option``, unless it ends where :meth:`danger` exceeds :data:`DANGER_LIMIT`; then the least
        dangerous of it and the fall-backs :data:`SAFER_OPTIONS` (most progress first on a tie). Where
        :meth:`ignores_danger` says so, ``option`` as it is. Within :meth:`act` the choice is kept in the world's
        :meth:`_danger_store` for the decisions after (see the comment below)."""
        if self.ignores_danger(battle, u):
            return option
        candidates = [option] + [o for o in SAFER_OPTIONS if o != option and (o is None or o in options)]
        decision = self.__dict__.get("_decision")
        if decision is None or option == "reform_face" or u.joined_to is not None:
            return self._safer_choice(battle, u, option, candidates)
        # Kept in the world's store (the enemies that may charge, the terrain) per all the choice reads besides:
        # the unit (its danger key: place, formation, profile, special rules), the candidates and the Generals that
        # may lend their Ld (reform_face, whose forecast reads the nearest enemy, and joined units are not kept).
        store = self._danger_store(battle, decision)
        generals = decision.lenders.get(u.side)
        if generals is None:
            generals = decision.lenders[u.side] = tuple(
                (g.uid, g.profile.Ld, g.refused, g.has("large_target"), gc.uid, _place_key(gc))
                for g, gc, _ in lending_generals(battle, u.side))
        key = (_SAFER, _danger_key(frozenset(), u), tuple(candidates), generals)
        found = store.get(key, _UNSET)
        if found is _UNSET:
            found = store[key] = self._safer_choice(battle, u, option, candidates)
        return found  # type: ignore[return-value]

    def _safer_choice(self, battle: Battle, u: UnitState, option: str, candidates: list[str | None]) -> str | None:
        """:meth:`safer_option`'s choice among ``candidates`` (``option`` first, then its fall-backs)."""
        chargers = self._chargers(battle)
        lds: dict[int, tuple[UnitState, int | None]] = {}  # the General's Ld per unit, for every candidate place
        places: dict[tuple[float, float, float], tuple[UnitState, float | None]] = {}  # one place, one danger
        over: list[tuple[str | None, UnitState]] = []
        for cand in candidates:
            pose = predict_pose(battle, u, cand) if cand is not None else space.pose(u)
            kept = places.get(pose)
            if kept is None:
                copy = moved_copy(u, pose)
                kept = places[pose] = (copy, self._safe_danger(battle, copy, chargers, lds))
            if kept[1] is not None:
                return cand
            over.append((cand, kept[0]))
        # Every candidate is over the limit: the least dangerous (the first on a tie), on exact dangers.
        best, best_danger = option, math.inf
        for cand, copy in over:
            d = self._danger_below(battle, copy, chargers, lds, best_danger)
            if d < best_danger:
                best, best_danger = cand, d
        return best

    def _danger_below(self, battle: Battle, u: UnitState, chargers: list[tuple[UnitState, tuple, tuple[float, float]]],
                      lds: dict[int, tuple[UnitState, int | None]], bound: float) -> float:
        """:meth:`_kept_danger` of ``u`` (nobody ignored) where it is at most ``bound``; else some number above
        ``bound`` (the danger is at least that): the chargers are weighed only until a part exceeds ``bound``
        (:meth:`_danger`'s ``limit``; ``math.inf``: all). Only exact answers are kept."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            return self._danger(battle, u, chargers, lds, bound)
        store = self._danger_store(battle, decision)
        key = _danger_key(frozenset(), u)
        d = self._kept_answer(battle, decision, store, key, u)
        if d is None or d is _OVER:
            d = self._danger(battle, u, chargers, decision.lds, bound)
            if d <= bound:
                self._keep_answer(store, key, u, d, decision.lds)
        return d  # type: ignore[return-value]

    def _safe_danger(self, battle: Battle, u: UnitState, chargers: list[tuple[UnitState, tuple, tuple[float, float]]],
                     lds: dict[int, tuple[UnitState, int | None]]) -> float | None:
        """:meth:`_kept_danger` of ``u`` (nobody ignored) when it is at most :data:`DANGER_LIMIT`, else None: the
        chargers are weighed only until one part exceeds the limit (:meth:`_danger`'s ``limit``); such a partial
        answer is kept as :data:`_OVER` (an exact one as :meth:`_kept_danger` keeps it)."""
        decision = self.__dict__.get("_decision")
        if decision is None:
            d = self._danger(battle, u, chargers, lds, DANGER_LIMIT)
            return d if d <= DANGER_LIMIT else None
        store = self._danger_store(battle, decision)
        key = _danger_key(frozenset(), u)
        d = self._kept_answer(battle, decision, store, key, u)
        if d is None:
            d = self._danger(battle, u, chargers, decision.lds, DANGER_LIMIT)
            self._keep_answer(store, key, u, d if d <= DANGER_LIMIT else _OVER, decision.lds)
        elif d is _OVER:
            return None
        return d if d <= DANGER_LIMIT else None  # type: ignore[operator,return-value]


def lending_generals(battle: Battle, side: int) -> list[tuple[UnitState, UnitState, float]]:
    """The Generals of ``side`` that may lend their Ld (CORE.SR.GENERAL): in play, their carrier (``characters.carrier``:
    the host when joined) deployed and not fleeing; each as (General, carrier, Inspiring Presence range in inches:
    18" for a Large Target, else 12"), in the order of ``battle.state.units``."""
    state = battle.state
    out = []
    for g in state.units:
        if g.general and g.side == side and g.in_play:
            gc = g if g.joined_to is None else state.units[g.joined_to]
            if gc.fleeing or not gc.deployed:
                continue
            reach = psychology.LARGE_TARGET_INSPIRING_RANGE if g.has("large_target") else psychology.INSPIRING_RANGE
            out.append((g, gc, reach))
    return out


def general_ld(battle: Battle, u: UnitState, decision: _Decision | None = None) -> int | None:
    """``psychology.general_ld(battle, u)`` (CORE.SR.GENERAL, CORE.SR.INSPIRING_PRESENCE, CORE.CC.CHALLENGE.REFUSE):
    the same tests on the Generals of :func:`lending_generals`, listed once per ``decision`` (the battle holding still;
    None: listed afresh)."""
    if decision is None:
        generals = lending_generals(battle, u.side)
    else:
        generals = decision.generals.get(u.side)
        if generals is None:
            generals = decision.generals[u.side] = lending_generals(battle, u.side)
    target = u if u.joined_to is None else battle.state.units[u.joined_to]
    for g, gc, reach in generals:
        if gc.uid == target.uid:
            return None if g.refused else g.profile.Ld
        if space.near(gc, target, reach) and space.unit_distance(gc, target) <= reach:
            return g.profile.Ld
    return None


def _danger_key(ignore: frozenset[int], u: UnitState) -> tuple:
    """What :meth:`DangerForecast._kept_danger` keeps a danger under: ``ignore`` and all :meth:`DangerForecast._danger`
    reads of ``u``: uid, side, the unit it is joined to (the General's Ld it is lent), its :func:`_target_key` (place,
    formation, special rules) and its ``estimates.combat_key``."""
    return (ignore, u.uid, u.side, u.joined_to, _target_key(u), estimates.combat_key(u))
