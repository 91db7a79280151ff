"""The scripted agents' shortcuts give the answers of the code they stand in for.

* :meth:`agents.base.ScriptedAgent.choose_shot` skips volleys whose :func:`agents.estimates.shot_value_bound`
  falls short of the best value found: its choice equals the max of :meth:`ScriptedAgent.valued_shots`.
* :func:`agents.threats.nearest_gaps` keeps each unit's nearest-enemy gap per pool of enemies: the movement order
  equals the one sorted on fresh gaps.
* :meth:`ScriptedAgent.target_for` and :meth:`ScriptedAgent.nearest_enemy` keep their choice per pool of enemies
  and place of the unit (:meth:`ScriptedAgent.enemy_pool`): it equals the min over fresh efforts and gaps.
* :meth:`ScriptedAgent._danger` passes over chargers beyond :func:`agents.threats._reach_bound`: exactly those that
  ``space.near`` rules out.
* :meth:`ScriptedAgent.holds_to_shoot` tries first the enemy that answered yes last time for the unit: its answer
  equals the plain "some enemy in range and sight".
* :meth:`ScriptedAgent.safer_option` weighs a candidate's chargers only until one exceeds the danger limit (exact
  dangers only when every candidate is over it): its choice equals the reference's.
* :meth:`ScriptedAgent._chargers` keeps its list per ``ignore`` for the decision: it equals the list worked out afresh.
* :func:`agents.threats.least_index` measures the enemies of a pool in order of a centre-distance bound and stops once
  the bound exceeds the least found: its choice equals the plain min.
* :func:`tactics.deployment.choose_slot` ranks slots off an order kept per target (:func:`deployment.ranked_slots`)
  and builds the other units' rectangles only as its look-ahead reaches them: its choice equals the reference's.

Each is compared with the reference on decisions of battles played by the scripted agents.
"""

from __future__ import annotations

import random

import pytest

from battleline.agents import estimates
from battleline.agents.base import ScriptedAgent
from battleline.agents.dangers import DANGER_LIMIT, FAR_MARGIN, SAFER_OPTIONS, _Decision
from battleline.agents.registry import make_agent
from battleline.agents.steering import moved_copy, predict_pose, replaced
from battleline.agents.threats import _reach_bound, _threat_geometry, effort, gap, least_index, nearest_gaps
from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, shooting, space
from battleline.env.rules.actions import END_PHASE
from battleline.env.rules.battle import Battle
from battleline.env.rules.charges import charge_reach
from battleline.env.rules.state import UnitState
from battleline.tactics import deployment
from battleline.tactics.deployment import is_fast
from tests.setups import agents_and_twins, move_options


def _decisions(blue: str, red: str, seed: int) -> list[tuple[Battle, ScriptedAgent]]:
    """Every decision of a ``pitched_battle`` between two named agents: a clone of the battle and the agent to act."""
    b = Battle.from_scenario("pitched_battle", seed=seed)
    agents = [make_agent(blue, seed=2 * seed), make_agent(red, seed=2 * seed + 1)]
    for side, agent in enumerate(agents):
        agent.reset(b, side)
    out = []
    while not b.is_over:
        agent = agents[b.pending.player]
        out.append((b.clone(), agent))
        b.apply(agent.act(b))
    return out


@pytest.fixture(scope="module")
def decisions() -> list[tuple[Battle, ScriptedAgent]]:
    """Decisions of line_advance v line_advance (seeds 1, 2) and pincers v refused_flank (seed 3)."""
    return (_decisions("line_advance", "line_advance", 1) + _decisions("line_advance", "line_advance", 2)
            + _decisions("pincers", "refused_flank", 3))


def test_choose_shot_equals_the_best_valued_shot(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """At every shooting decision: choose_shot is the max of valued_shots (value, then lower unit id, first in the
    legal list on a tie), every volley's bound is at least its value, and some volley is skipped somewhere (its
    bound below the chosen value)."""
    shots = skipped = 0
    for b, agent in decisions:
        if b.pending.kind != "shoot":
            continue
        agent.plan = agent.plan or agent.make_plan(b)
        legal = b.legal_actions()
        valued = agent.valued_shots(b, legal)
        want = max(valued, key=lambda a: (valued[a], -a.unit)) if valued else END_PHASE
        assert agent.choose_shot(b, legal) == want
        for a, v in valued.items():
            if a.option != "breath":
                bound = estimates.shot_value_bound(b, b.unit(a.unit), b.unit(a.target))
                assert bound >= v
                skipped += bound < valued[want]
            shots += 1
    assert shots > 20 and skipped > 0


def test_unit_order_with_kept_nearest_gaps_equals_fresh_gaps(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """At every movement decision: each moving unit's kept nearest-enemy gap equals the min of fresh
    space.unit_distance over the pool (asked twice: computed, then kept), and an empty pool gives inf."""
    compared = 0
    for b, agent in decisions:
        if b.pending.kind != "move":
            continue
        pool = agent.enemies(b) or agent.enemies(b, fleeing=True)
        for u in space.alive_units(b.state, agent.side):
            want = min((space.unit_distance(u, e) for e in pool), default=float("inf"))
            assert nearest_gaps(pool)(u) == want == nearest_gaps(pool)(u)
            compared += 1
    assert compared > 100
    assert nearest_gaps([])(b.state.units[0]) == float("inf")


def test_reach_bound_rules_out_what_near_rules_out(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """For every pair of opposing units, where the target stands and 3" ahead: the _danger prefilter passes a
    charger over exactly when space.near(charger, target, charge_reach) is False, the threat geometry of a pair it
    keeps, given the reach, equals the geometry worked out in full, and some pairs are near."""
    import numpy as np

    near = far = 0
    for b, _ in decisions[::7]:
        for e in space.alive_units(b.state):
            rc, reach = _reach_bound(e)
            assert reach == charge_reach(e)
            for t in space.alive_units(b.state, 1 - e.side):
                for u in (t, moved_copy(t, geo.move_straight(space.pose(t), 3.0))):
                    dx, dy = e.x - u.x, e.y - u.y
                    limit = (rc + space.radius(u)) + reach
                    far = limit * FAR_MARGIN
                    skipped = float(np.hypot(dx, dy)) > limit
                    if dx * dx + dy * dy > far * far:
                        assert skipped
                    assert skipped == (not space.near(e, u, charge_reach(e)))
                    if not skipped:  # the geometry with the reach handed on (near not asked) is the full test's
                        assert _threat_geometry(b, e, u, None, reach) == _threat_geometry(b, e, u, None)
                    near += not skipped
                    far += skipped
    assert near > 0 and far > 0


def test_gap_of_the_kept_pool_is_the_gap(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """nearest_gaps keeps answers apart per pool: a pool of one enemy answers that enemy's gap for every unit."""
    b, agent = next((b, a) for b, a in decisions if b.pending.kind == "move")
    for e in agent.enemies(b)[:3]:
        for u in space.alive_units(b.state, agent.side):
            assert nearest_gaps([e])(u) == gap(u, e)


def test_far_margin_never_passes_over_a_centre_within_reach() -> None:
    """200,000 random offsets (inches) against reaches at and about their own length: whenever the squared test says
    far, np.hypot says beyond the reach; and the squared test does say far for offsets 1e-6 beyond (it decides)."""
    import numpy as np

    rng = np.random.default_rng(7)
    dx = rng.uniform(-80, 80, 200_000)
    dy = rng.uniform(-80, 80, 200_000)
    d = np.hypot(dx, dy)
    for limit in (d, np.nextafter(d, 0), np.nextafter(d, np.inf), d * (1 - 1e-9), d - 1e-6):
        far = limit * FAR_MARGIN
        said_far = dx * dx + dy * dy > far * far
        assert not np.any(said_far & ~(d > limit))
    assert np.mean(dx * dx + dy * dy > ((d - 1e-6) * FAR_MARGIN) ** 2) > 0.99


def test_estimate_combat_with_kept_general_ld_equals_afresh(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """For every pair of opposing units in every tenth decision, on each facing, charging or not, where the defender
    stands and 3" ahead: estimate_combat with one kept lds dict per decision equals it worked out afresh, and
    some of those estimates have a break chance above 0 (the General's Ld read)."""
    breaking = 0
    for b, _ in decisions[::10]:
        lds: dict = {}
        for a in space.alive_units(b.state):
            for d in space.alive_units(b.state, 1 - a.side):
                for t in (d, moved_copy(d, geo.move_straight(space.pose(d), 3.0))):
                    for facing in ("front", "left", "rear"):
                        for charging in (True, False):
                            want = estimates.estimate_combat(b, a, t, facing, charging)
                            assert estimates.estimate_combat(b, a, t, facing, charging, lds=lds) == want
                            breaking += want.break_chance > 0
    assert breaking > 0


@pytest.mark.parametrize(("blue", "red", "seed", "repeats"), [
    ("line_advance", "line_advance", 4, False),
    ("flank_teeth", "line_advance", 5, True),
    ("pincers", "refused_flank", 6, False),
    ("bait_and_flank", "weakened_flank", 7, False),
])
def test_kept_decisions_choose_what_afresh_answers_choose(blue: str, red: str, seed: int, repeats: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A whole battle in which, at every decision, the acting agent (keeping its dangers for the decision) and a twin
    with keep_decisions off (every danger afresh) choose the same action; where the tactic asks a danger twice in a
    decision (flank_teeth's detour, then the dead-zone check), the kept answers are used."""
    b = Battle.from_scenario("pitched_battle", seed=seed)
    agents, twins = agents_and_twins(b, blue, red)
    worked_out = {True: 0, False: 0}  # _danger calls by agents keeping (True) and not keeping (False) their answers
    original = ScriptedAgent._danger

    def counting(self: ScriptedAgent, *args: object, **kwargs: object) -> float:
        worked_out[self.keep_decisions] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ScriptedAgent, "_danger", counting)
    decisions = 0
    while not b.is_over:
        side = b.pending.player
        action = agents[side].act(b)
        assert twins[side].act(b) == action
        b.apply(action)
        decisions += 1
    assert decisions > 50 and worked_out[True] <= worked_out[False]
    assert worked_out[True] < worked_out[False] or not repeats


def test_kept_targets_equal_fresh_choices(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """At every decision, for every unit of the acting side, where it stands and 3" ahead, asked twice (worked out,
    then kept) and once more inside a decision's pool: target_for and nearest_enemy equal the min over the pool of
    fresh (effort, uid) and (space.unit_distance, uid)."""
    compared = 0
    for b, agent in decisions:
        pool = agent.enemies(b) or agent.enemies(b, fleeing=True)
        for u in space.alive_units(b.state, agent.side):
            for v in (u, moved_copy(u, geo.move_straight(space.pose(u), 3.0))):
                want_target = min(pool, key=lambda e: (effort(v, e), e.uid), default=None)
                want_near = min(pool, key=lambda e: (space.unit_distance(v, e), e.uid), default=None)
                for _ in range(2):
                    assert agent.target_for(b, v) is want_target
                    assert agent.nearest_enemy(b, v) is want_near
                compared += 1
    assert compared > 500


def _reference_choose_slot(battle: Battle, uid: int, legal: dict[int, list[int]],
                           targets: dict[int, deployment.SlotTarget]) -> int:
    """choose_slot as it was: every other unit's rectangles built for every legal slot, each list sorted afresh."""
    units = battle.state.units
    default = deployment.SlotTarget(battle.state.table_w / 2, deployment.FRONT)

    def ranked(v: int) -> list[int]:
        return sorted(legal[v], key=lambda k: (deployment.slot_cost(k, targets.get(v, default)), k))

    others = sorted((v for v in legal if v != uid), key=lambda v: len(legal[v]))
    options = [[deployment.slot_rect(battle, units[v], k) for k in ranked(v)] for v in others]
    candidates = ranked(uid)
    for k in candidates:
        if deployment._all_fit([deployment.slot_rect(battle, units[uid], k)], options, [deployment.SEARCH_BUDGET]):
            return k
    return candidates[0]


def test_choose_slot_equals_the_reference(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """At every deployment decision, for every unit still to deploy (not only the plan's next): choose_slot (slots
    ranked off the order kept per target, rectangles built as the look-ahead reaches them) equals the reference."""
    compared = 0
    for b, agent in decisions:
        if b.pending.kind != "deploy":
            continue
        plan = agent.plan or agent.make_plan(b)
        slots: dict[int, list[int]] = {}
        for a in b.legal_actions():
            if a.kind == "deploy":
                slots.setdefault(a.unit, []).append(int(a.option))
        for uid in slots:
            want = _reference_choose_slot(b, uid, slots, plan.targets)
            assert deployment.choose_slot(b, uid, slots, plan.targets) == want
            compared += 1
    assert compared > 100


def test_ranked_slots_equal_sorted_slots() -> None:
    """3,000 random lists of the table's 55 slots (a slot twice and empty lists among them) and targets (x across the
    table and beyond, every row): ranked_slots equals sorting on (slot_cost, slot)."""
    rng = random.Random(5)
    n = len(deployment.ROWS) * len(deployment.COLUMNS)
    for _ in range(3000):
        target = deployment.SlotTarget(rng.choice([rng.uniform(-10, 90), 6.0 * rng.randint(0, 12)]),
                                       rng.randrange(len(deployment.ROWS)))
        slots = rng.sample(range(n), rng.randint(0, n))
        if slots and rng.random() < 0.1:
            slots.append(rng.choice(slots))
        want = sorted(slots, key=lambda k: (deployment.slot_cost(k, target), k))
        assert deployment.ranked_slots(slots, target) == want


def test_least_index_equals_the_plain_min(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """For 400 random pools drawn from a decision's units (forecast copies 0-8" ahead, turned, and twins of one enemy
    on the same spot with other uids, so gaps tie) and every unit of the other side asking: least_index with gap and
    with effort equals the min over (measure, uid) of every enemy; the bound passes some enemies over."""
    rng = random.Random(11)
    counted = {"asked": 0}
    original = gap

    def counting_gap(u: UnitState, e: UnitState) -> float:
        counted["asked"] += 1
        return original(u, e)

    pools = 0
    moves = [(b, a) for b, a in decisions if b.pending.kind == "move"]
    for _ in range(400):
        b, agent = rng.choice(moves)
        enemies = space.alive_units(b.state, 1 - agent.side)
        pool = []
        for e in rng.sample(enemies, rng.randint(1, len(enemies))):
            pose = geo.Pose(e.x, e.y, e.facing + rng.choice([0.0, 45.0, 180.0]))
            pool.append(moved_copy(e, geo.move_straight(pose, rng.uniform(0.0, 8.0))))
        if rng.random() < 0.3:
            pool.append(replaced(pool[0], uid=pool[0].uid + 100))
        for u in space.alive_units(b.state, agent.side):
            for measure in (gap, effort):
                want = min(range(len(pool)), key=lambda j: (measure(u, pool[j]), pool[j].uid))
                assert least_index(u, pool, measure) == want
            before = counted["asked"]
            least_index(u, pool, counting_gap)
            pools += 1
            counted["skipped"] = counted.get("skipped", 0) + len(pool) - (counted["asked"] - before)
    assert pools > 1000 and counted["skipped"] > 0


def test_kept_chargers_equal_fresh_ones(decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """At every decision, inside a decision of the acting agent, with nothing and with each enemy ignored: _chargers
    asked twice gives one kept list, equal element for element (the same units) to the list worked out afresh
    outside a decision; some lists are not empty."""
    filled = 0
    for b, agent in decisions[::4]:
        ignores = [frozenset()] + [frozenset({e.uid}) for e in agent.enemies(b)]
        fresh = [agent._chargers(b, ignore) for ignore in ignores]
        agent._decision = _Decision()
        try:
            for ignore, want in zip(ignores, fresh, strict=True):
                kept = agent._chargers(b, ignore)
                assert agent._chargers(b, ignore) is kept
                assert [(e.uid, key, bound) for e, key, bound in kept] == [(e.uid, k, r) for e, k, r in want]
                assert all(e is w[0] for (e, _, _), w in zip(kept, want, strict=True))
                filled += bool(kept)
        finally:
            agent._decision = None
    assert filled > 100


def test_holds_to_shoot_with_a_hint_equals_any_enemy_in_range_and_sight(
        decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """At every movement decision, for every unit of the acting side where it stands and 4" ahead, with no hint and
    with each enemy (and a uid no unit has) as the hint: holds_to_shoot equals the plain test (some enemy, not engaged,
    in range and sight); both answers occur, and some hinted enemy is the one that answers yes."""
    answers = {True: 0, False: 0}
    hinted = 0
    for b, agent in decisions:
        if b.pending.kind != "move":
            continue
        enemies = agent.enemies(b)
        for u in space.alive_units(b.state, agent.side):
            for v in (u, moved_copy(u, geo.move_straight(space.pose(u), 4.0))):
                want = (v.missile is not None and not is_fast(v) and any(
                    not psychology.engaged(b, e) and shooting.in_range_and_sight(b, v, e) for e in enemies))
                for hint in [None, 10_000] + [e.uid for e in enemies]:
                    agent._sighted = {} if hint is None else {v.uid: hint}
                    assert agent.holds_to_shoot(b, v) == want
                    if want and agent._sighted.get(v.uid) == hint:
                        hinted += 1
                answers[want] += 1
    assert answers[True] > 20 and answers[False] > 20 and hinted > 0


def _reference_safer_option(agent: ScriptedAgent, b: Battle, u: UnitState, option: str,
                            options: list[str]) -> str | None:
    """safer_option as it was: every candidate's full danger, worked out afresh, the first safe one, else the least."""
    if agent.ignores_danger(b, u):
        return option
    candidates = [option] + [o for o in SAFER_OPTIONS if o != option and (o is None or o in options)]
    best, best_danger = option, float("inf")
    chargers = agent._chargers_afresh(b, frozenset())
    for cand in candidates:
        pose = predict_pose(b, u, cand) if cand is not None else space.pose(u)
        d = ScriptedAgent._danger(agent, b, moved_copy(u, pose), chargers, {})
        if d <= DANGER_LIMIT:
            return cand
        if d < best_danger:
            best, best_danger = cand, d
    return best


def test_safer_option_weighing_chargers_up_to_the_limit_equals_the_reference(
        decisions: list[tuple[Battle, ScriptedAgent]]) -> None:
    """At every movement decision, for every unit of the acting side with move options and every one of its options:
    safer_option (inside a decision, chargers weighed only until one exceeds the danger limit) equals the reference
    (every danger in full); some options are replaced, and some units find every candidate over the limit."""
    replaced_count = all_over = compared = 0
    for b, agent in decisions:
        if b.pending.kind != "move":
            continue
        options = move_options(b)
        agent._decision = _Decision()
        try:
            for uid, opts in options.items():
                u = b.unit(uid)
                for option in opts:
                    want = _reference_safer_option(agent, b, u, option, opts)
                    assert agent.safer_option(b, u, option, opts) == want
                    replaced_count += want != option
                    candidates = [option] + [o for o in SAFER_OPTIONS if o != option and (o is None or o in opts)]
                    all_over += want not in candidates[:1] and all(
                        ScriptedAgent._danger(agent, b, moved_copy(u, predict_pose(b, u, c) if c is not None
                                                                   else space.pose(u)),
                                              agent._chargers_afresh(b, frozenset()), {}) > DANGER_LIMIT
                        for c in candidates)
                    compared += 1
        finally:
            agent._decision = None
    assert compared > 1000 and replaced_count > 20 and all_over > 0
