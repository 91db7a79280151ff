"""The scripted agents' forecasts kept across decisions, and worked out in plain floats, equal the reference.

* :meth:`agents.base.ScriptedAgent._kept_danger` and ``_safe_danger`` keep dangers in a store per world (the enemies
  that may charge and the terrain, :meth:`ScriptedAgent._danger_store`), shared by the decisions of that world, keyed
  by the General's Ld where an answer reads it: every answer equals :meth:`ScriptedAgent._danger` as it was (every
  charger weighed, its break test always taken, the polygons' geometry), worked out afresh.
* :func:`agents.threats.in_vision_arc` answers ``geo.partly_in_vision_arc`` in floats (or leaves it to the polygons).
* :func:`agents.threats.front_rank_arc` answers ``charge_facing(..., roll=False) or "front"`` in floats.
* :func:`agents.threats.least_index` with the pool's kept radii equals it without them.
* :func:`agents.dangers.general_ld` (the Generals listed once per decision) equals ``psychology.general_ld``.
* :meth:`ScriptedAgent._danger_below` (safer_option's last resort, weighing up to the least danger so far) is the
  danger where that is at most its bound, else a number above the bound.
* ``tactics.manoeuvres.can_threaten`` with the engaged units listed once, the reach bounds kept per charger key and
  ``estimates.combat_round`` given its combat keys equal them worked out afresh.
* :meth:`ScriptedAgent.holds_to_shoot` in a decision (enemies and engaged units read once) equals the plain test.

Each is compared on decisions of battles played by the scripted agents, their units where they stand and moved.
"""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest

from battleline.agents import estimates
from battleline.agents.base import ScriptedAgent
from battleline.agents.dangers import (
    _BY_GENERAL,
    BREAK_WEIGHT,
    DANGER_LIMIT,
    FAR_MARGIN,
    SAFER_OPTIONS,
    _danger_key,
    _Decision,
    general_ld,
)
from battleline.agents.registry import make_agent
from battleline.agents.steering import moved_copy, predict_pose
from battleline.agents.threats import (
    PoolAnswers,
    _charger_key,
    _kept_reach_bound,
    _reach_bound,
    front_rank_arc,
    gap,
    in_vision_arc,
    least_index,
)
from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, shooting, space
from battleline.env.rules.battle import Battle
from battleline.env.rules.charges import charge_facing, charge_reach
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment import is_fast
from battleline.tactics.manoeuvres import can_threaten, engaged_uids
from tests.setups import agents_and_twins, move_options


def _reference_threat(b: Battle, c: UnitState, t: UnitState) -> tuple[float, str] | None:
    """charge_threat's geometry as it was: reach, the polygons' distance and vision arc, charge_facing's arc."""
    reach = charge_reach(c)
    if not space.near(c, t, reach):
        return None
    target = space.footprint(t)
    dist = geo.distance(space.footprint(c), target)
    if dist > reach or not geo.partly_in_vision_arc(space.pose(c), c.width, c.depth, target):
        return None
    try:
        arc = charge_facing(b, c, t, roll=False) or "front"
    except ValueError:
        arc = "front"
    return estimates.charge_chance(c, dist), arc


def _reference_danger(agent: ScriptedAgent, b: Battle, u: UnitState, ignore: frozenset[int] = frozenset()) -> float:
    """ScriptedAgent._danger as it was, on chargers worked out afresh: every break test taken, and the worst part
    so far returned once it exceeds the charger's reach bound (the local that shadowed ``limit``)."""
    worst = 0.0
    ru = space.radius(u)
    lds: dict = {}
    for e, _, bound in agent._chargers_afresh(b, ignore):
        dx, dy = e.x - u.x, e.y - u.y
        limit = (bound[0] + ru) + bound[1]
        far = limit * FAR_MARGIN
        if dx * dx + dy * dy > far * far or float(np.hypot(dx, dy)) > limit:
            continue
        threat = _reference_threat(b, e, u)
        if threat is None:
            continue
        p, facing = threat
        est = estimates.estimate_combat(b, e, u, facing, lds=lds)
        if est.diff > 0:
            worst = max(worst, p * (est.diff + BREAK_WEIGHT * est.break_chance))
            if worst > limit:
                return worst
    return worst


def _places(b: Battle, u: UnitState) -> list[UnitState]:
    """``u`` where it stands and where each fall-back of safer_option and each legal move of it would take it."""
    options = [a.option for a in b.legal_actions() if a.kind == "move" and a.unit == u.uid]
    out = [u]
    for option in dict.fromkeys([o for o in SAFER_OPTIONS if o is not None] + options):
        try:
            out.append(moved_copy(u, predict_pose(b, u, option)))
        except (KeyError, ValueError):
            continue
    return out


@pytest.mark.parametrize(("blue", "red", "seed"), [("line_advance", "line_advance", 11),
                                                    ("pincers", "refused_flank", 12)])
def test_dangers_kept_across_decisions_equal_the_reference(blue: str, red: str, seed: int) -> None:
    """Through a whole battle, at every movement decision, before the agent acts, in a new decision of the acting
    agent (its stores kept from the decisions before): for each of its units where it stands and at each place a move
    would take it, with nobody and with the nearest enemy ignored, _kept_danger equals the reference and
    _safe_danger is it when at most the limit, else None. Some answers are found in the store before they are asked
    (kept by an earlier decision of the same world), some are kept per the General's Ld, some parts are over the
    limit."""
    b = Battle.from_scenario("pitched_battle", seed=seed)
    agents = [make_agent(blue, seed=1), make_agent(red, seed=2)]
    for side, agent in enumerate(agents):
        agent.reset(b, side)
    found = by_general = over = compared = 0
    while not b.is_over:
        agent = agents[b.pending.player]
        if b.pending.kind == "move" and isinstance(agent, ScriptedAgent):
            agent._decision = _Decision()
            try:
                store = agent._danger_store(b, agent._decision)
                for u in space.alive_units(b.state, agent.side):
                    nearest = agent.nearest_enemy(b, u)
                    ignores = [frozenset()] + ([frozenset({nearest.uid})] if nearest is not None else [])
                    for v in _places(b, u):
                        for ignore in ignores:
                            key = _danger_key(ignore, v)
                            found += agent._kept_answer(b, agent._decision, store, key, v) is not None
                            want = _reference_danger(agent, b, v, ignore)
                            if not ignore:
                                safe = agent._safe_danger(b, v, agent._chargers(b), agent._decision.lds)
                                assert safe == (want if want <= DANGER_LIMIT else None)
                                over += want > DANGER_LIMIT
                            assert agent._kept_danger(b, v, ignore) == want
                            by_general += store.get(key) is _BY_GENERAL
                            compared += 1
            finally:
                agent._decision = None
        b.apply(agent.act(b))
    assert compared > 1000 and found > 100 and by_general > 10 and over > 10


def test_a_dangers_general_is_part_of_its_key() -> None:
    """Where a kept danger (of a unit where a move would take it) reads the General's Ld, a battle with the General's
    Ld one higher (the same enemies and terrain: the same store) gets its own answer, equal to the reference there
    (and different somewhere), and the first battle keeps its own."""
    b = Battle.from_scenario("pitched_battle", seed=13)
    agents = [make_agent("line_advance", seed=1), make_agent("line_advance", seed=2)]
    for side, agent in enumerate(agents):
        agent.reset(b, side)
    checked = differs = 0
    while not b.is_over and checked < 20:
        agent = agents[b.pending.player]
        if b.pending.kind == "move":
            generals = [g for g in b.state.units if g.side == agent.side and g.general and g.in_play]
            places = [v for u in space.alive_units(b.state, agent.side) for v in _places(b, u)]
            for u in places:
                if not generals or checked >= 20:
                    break
                agent._decision = _Decision()
                try:
                    want = agent._kept_danger(b, u, frozenset())
                    kept = agent._danger_store(b, agent._decision).get(_danger_key(frozenset(), u))
                finally:
                    agent._decision = None
                if kept is not _BY_GENERAL or psychology.general_ld(b, u) is None:
                    continue  # only answers that read a General's Ld
                other = b.clone()
                g = other.unit(generals[0].uid)
                g.profile = dataclasses.replace(g.profile, Ld=g.profile.Ld + 1)
                v = u if u.uid != g.uid else moved_copy(g, space.pose(u))
                agent._decision = _Decision()
                try:
                    there = agent._kept_danger(other, v, frozenset())
                    assert there == _reference_danger(agent, other, v)
                    differs += there != want
                finally:
                    agent._decision = None
                agent._decision = _Decision()
                try:
                    assert agent._kept_danger(b, u, frozenset()) == want == _reference_danger(agent, b, u)
                finally:
                    agent._decision = None
                checked += 1
        b.apply(agent.act(b))
    assert checked >= 5 and differs > 0


def _pairs(seed: int) -> list[tuple[Battle, UnitState, UnitState]]:
    """Pairs of units of a line_advance battle (every fifth decision), each viewer also turned and moved about."""
    b = Battle.from_scenario("pitched_battle", seed=seed)
    agents = [make_agent("line_advance", seed=1), make_agent("line_advance", seed=2)]
    for side, agent in enumerate(agents):
        agent.reset(b, side)
    rng = random.Random(seed)
    out = []
    k = 0
    while not b.is_over:
        if k % 5 == 0:
            snap = b.clone()
            units = space.alive_units(snap.state)
            for c in units:
                for t in units:
                    if t.uid == c.uid:
                        continue
                    out.append((snap, c, t))
                    pose = geo.Pose(c.x, c.y, (c.facing + rng.choice([0.0, 45.0, 90.0, 180.0, rng.uniform(0, 360)])) % 360)
                    out.append((snap, moved_copy(c, geo.move_straight(pose, rng.uniform(0.0, 12.0))), t))
        b.apply(agents[b.pending.player].act(b))
        k += 1
    return out


@pytest.fixture(scope="module")
def pairs() -> list[tuple[Battle, UnitState, UnitState]]:
    """Unit pairs from two line_advance battles (seeds 14, 15)."""
    return _pairs(14) + _pairs(15)


def test_in_vision_arc_equals_the_polygons(pairs: list[tuple[Battle, UnitState, UnitState]]) -> None:
    """For every pair: in_vision_arc is None or geo.partly_in_vision_arc of the footprints; both True and False are
    answered in floats many times."""
    answers = {True: 0, False: 0, None: 0}
    for _, c, t in pairs:
        got = in_vision_arc(c, t)
        answers[got] += 1
        if got is not None:
            assert got == geo.partly_in_vision_arc(space.pose(c), c.width, c.depth, space.footprint(t))
    assert answers[True] > 500 and answers[False] > 500


def test_front_rank_arc_equals_charge_facing(pairs: list[tuple[Battle, UnitState, UnitState]]) -> None:
    """For every pair (the target without Skirmishers): front_rank_arc equals charge_facing without a roll, "front"
    where it has no answer; every arc is answered."""
    seen: dict[str, int] = {}
    for b, c, t in pairs:
        if t.has("skirmishers"):
            continue
        try:
            want = charge_facing(b, c, t, roll=False) or "front"
        except ValueError:
            want = "front"
        got = front_rank_arc(c, t)
        assert got == want
        seen[got] = seen.get(got, 0) + 1
    assert set(seen) == set(geo.ARCS)


def test_least_index_with_kept_radii_equals_without(pairs: list[tuple[Battle, UnitState, UnitState]]) -> None:
    """For each unit of a pair against the enemies of its battle: least_index with PoolAnswers.radii_of equals it
    without radii."""
    checked = 0
    for b, c, _ in pairs[::7]:
        pool = space.alive_units(b.state, 1 - c.side)
        if not pool:
            continue
        radii = PoolAnswers().radii_of(pool)
        assert least_index(c, pool, gap, radii) == least_index(c, pool, gap)
        checked += 1
    assert checked > 100


def test_general_ld_equals_the_engines(pairs: list[tuple[Battle, UnitState, UnitState]]) -> None:
    """For every unit of a pair (where it stands and moved about), and every character in play of its battle, on
    both sides: general_ld, afresh and with the Generals listed once per decision, equals psychology.general_ld;
    some units are lent an Ld and some are not."""
    lent = {True: 0, False: 0}
    decisions: dict[int, _Decision] = {}
    for b, c, _ in pairs[::3]:
        decision = decisions.setdefault(id(b), _Decision())
        units = [c] + [x for x in b.state.units if x.character and x.in_play]
        for u in units:
            want = psychology.general_ld(b, u)
            assert general_ld(b, u) == want
            assert general_ld(b, u, decision) == want
            lent[want is not None] += 1
    assert lent[True] > 100 and lent[False] > 100


def test_danger_below_a_bound_is_the_danger_or_above_the_bound(
        pairs: list[tuple[Battle, UnitState, UnitState]]) -> None:
    """For units of pairs (moved about) against their enemies' chargers, in a decision and outside one, with bounds
    of 0.5, 2, 5 and inf: _danger_below is the reference danger where that is at most the bound, else above the bound
    and at most the danger; some answers are cut short."""
    agents = {side: make_agent("line_advance", seed=side) for side in (0, 1)}
    cut = exact = 0
    for b, c, _ in pairs[1::9]:
        agent = agents[c.side]
        agent.reset(b, c.side)
        want = _reference_danger(agent, b, c)
        for keep in (False, True):
            for bound in (0.5, 2.0, 5.0, math.inf):
                agent._decision = _Decision() if keep else None
                try:
                    got = agent._danger_below(b, c, agent._chargers(b), {}, bound)
                finally:
                    agent._decision = None
                if want <= bound:
                    assert got == want
                    exact += 1
                else:
                    assert bound < got <= want
                    cut += got < want
    assert exact > 100 and cut > 0


def test_listed_engagements_kept_bounds_and_given_keys_equal_afresh(
        pairs: list[tuple[Battle, UnitState, UnitState]]) -> None:
    """For every pair: can_threaten with the engaged units listed once equals it asking psychology.engaged; the
    reach bound kept per charger key equals _reach_bound; combat_round given both combat keys equals it working them
    out, on every facing; some units are engaged and cannot threaten."""
    engaged_seen = 0
    listed: dict[int, set[int]] = {}
    for b, c, t in pairs:
        engaged = listed.setdefault(id(b), engaged_uids(b))
        assert can_threaten(b, c, engaged) == can_threaten(b, c)
        engaged_seen += c.uid in engaged and not can_threaten(b, c)
        assert _kept_reach_bound(c, _charger_key(c)) == _reach_bound(c)
        for facing in ("front", "left", "right", "rear"):
            keys = (estimates.combat_key(c), estimates.combat_key(t))
            assert estimates.combat_round(b, c, t, facing, keys=keys) == estimates.combat_round(b, c, t, facing)
    assert engaged_seen > 0


def test_holds_to_shoot_in_a_decision_equals_the_plain_test(pairs: list[tuple[Battle, UnitState, UnitState]]) -> None:
    """In a decision (the enemies and engaged units read once), for every unit of each snapshot where it stands and
    4" ahead, with no hint and with the hint each answer leaves: holds_to_shoot equals "not fast, a missile weapon
    and some enemy not engaged in range and sight"; both answers occur."""
    answers = {True: 0, False: 0}
    for b in {id(b): b for b, _, _ in pairs}.values():
        for side in (0, 1):
            agent = make_agent("line_advance", seed=side)
            agent.reset(b, side)
            enemies = agent.enemies(b)
            agent._decision = _Decision()
            try:
                for u in space.alive_units(b.state, side):
                    for v in (u, moved_copy(u, geo.move_straight(space.pose(u), 4.0))):
                        want = (v.missile is not None and not is_fast(v) and any(
                            not psychology.engaged(b, e) and shooting.in_range_and_sight(b, v, e) for e in enemies))
                        assert agent.holds_to_shoot(b, v) == want
                        assert agent.holds_to_shoot(b, v) == want  # now with the hint it left
                        answers[want] += 1
            finally:
                agent._decision = None
    assert answers[True] > 20 and answers[False] > 20


@pytest.mark.parametrize(("blue", "red", "seed"), [("line_advance", "line_advance", 12),
                                                    ("pincers", "refused_flank", 18)])
def test_safer_choices_kept_across_decisions_equal_afresh(blue: str, red: str, seed: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Through a whole battle, at every movement decision, before the agent acts, in a new decision of the acting
    agent (its stores kept from the decisions before): for every unit and each of its move options, safer_option
    equals a twin's that keeps nothing (keep_decisions off); many choices are found kept, some options replaced."""
    b = Battle.from_scenario("pitched_battle", seed=seed)
    agents, twins = agents_and_twins(b, blue, red)
    worked_out = [0]
    original = ScriptedAgent._safer_choice

    def counting(self: ScriptedAgent, *args: object) -> str | None:
        worked_out[0] += self.keep_decisions
        return original(self, *args)

    monkeypatch.setattr(ScriptedAgent, "_safer_choice", counting)
    found = replaced = compared = 0
    while not b.is_over:
        side = b.pending.player
        agent, twin = agents[side], twins[side]
        if b.pending.kind == "move" and agent.plan is not None:
            twin.plan = agent.plan
            options = move_options(b)
            agent._decision = _Decision()
            try:
                for uid, opts in options.items():
                    u = b.unit(uid)
                    for option in opts:
                        before = worked_out[0]
                        got = agent.safer_option(b, u, option, opts)
                        found += worked_out[0] == before
                        assert got == twin.safer_option(b, u, option, opts)
                        replaced += got != option
                        compared += 1
            finally:
                agent._decision = None
        b.apply(agent.act(b))
    assert compared > 1000 and found > 100 and replaced > 20
