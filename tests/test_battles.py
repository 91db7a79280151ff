"""Whole battles: 300 random battles with invariants, determinism and replays."""

from __future__ import annotations

import math

import numpy as np
import pytest
import shapely

from battleline.env.rules import geometry as geo
from battleline.env.rules import space
from battleline.env.rules.actions import Action, IllegalActionError
from battleline.env.rules.battle import Battle
from battleline.env.rules.victory import unit_vp


def random_battle(seed: int, scenario: str = "pitched_battle", check: bool = False) -> Battle:
    """Play a battle with uniformly random legal actions (seeded); optionally check invariants each step."""
    rng = np.random.default_rng(seed)
    b = Battle.from_scenario(scenario, seed=seed)
    while not b.is_over:
        acts = b.legal_actions()
        b.apply(acts[int(rng.integers(len(acts)))])
        if check:
            check_invariants(b)
    return b


def check_invariants(b: Battle) -> None:
    """No negative model counts; no two units overlapping unless engaged; turn within the game length.

    A joined character counts as part of its host (CORE.MOVE.JOIN): it is no
    unit of its own on the table, and its base lies inside the host's footprint.
    """
    s = b.state
    assert 0 <= s.turn <= s.max_turns
    for u in s.units:
        assert u.models >= 0
        assert not u.alive or u.models > 0
        if u.joined_to is not None and u.in_play:
            host = s.units[u.joined_to]
            assert host.alive and u.uid in host.joined and len(host.joined) <= 2
            assert space.footprint(host).buffer(geo.EPS).covers(space.footprint(u)), f"character {u.uid} outside {host.uid}"
    alive = space.alive_units(s)
    polys = [space.footprint(u) for u in alive]
    tree = shapely.STRtree(polys)
    engaged = {frozenset((e.attacker, e.defender)) for e in s.engagements}
    left, right = tree.query(polys, predicate="intersects")
    for i, j in zip(left, right, strict=True):
        if i >= j:
            continue
        pair = frozenset((alive[i].uid, alive[j].uid))
        assert not geo.overlaps(polys[i], polys[j]) or pair in engaged, (
            f"units {alive[i].uid} and {alive[j].uid} overlap at turn {s.turn} {s.stage}"
        )


def expected_unit_vp(b: Battle) -> list[dict[str, int]]:
    """Destroyed/off-table (full) and fleeing/below-25% (half) points per scoring side, computed afresh."""
    out = [{"destroyed": 0, "half": 0}, {"destroyed": 0, "half": 0}]
    for u in b.state.units:
        if u.removed:
            out[1 - u.side]["destroyed"] += u.points
        elif u.fleeing or u.models * 4 < u.start_models:
            out[1 - u.side]["half"] += math.ceil(u.points / 2)
    return out


def _check_result(b: Battle) -> None:
    res = b.result
    assert b.is_over and b.state.turn <= 6
    assert res["winner"] in ("blue", "red", "draw")
    exp = expected_unit_vp(b)
    for side, name in enumerate(("blue", "red")):
        parts = res["breakdown"][name]
        assert res["vp"][name] == sum(parts.values())
        assert parts["destroyed"] == exp[side]["destroyed"]
        assert parts["half"] >= exp[side]["half"]  # single models at half W also score half
    for u in b.state.units:
        cat, pts = unit_vp(u)
        assert pts >= 0 and cat in ("destroyed", "half", "none")


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(10))
def test_300_random_battles_run_and_keep_invariants(chunk: int) -> None:
    """Seeds 0–299 between random agents: no error, every battle ends by turn 6, invariants hold."""
    for seed in range(chunk * 30, chunk * 30 + 30):
        b = random_battle(seed, check=seed % 10 == 0)
        _check_result(b)


def test_invariants_every_step_on_small_scenario() -> None:
    for seed in range(5):
        _check_result(random_battle(seed, scenario="skirmish_line", check=True))


def test_same_seed_same_event_log() -> None:
    """CORE.DICE.RNG: the same seed and actions give the same battle, bit for bit."""
    a = random_battle(11, scenario="skirmish_line")
    b = random_battle(11, scenario="skirmish_line")
    assert a.events == b.events
    assert a.to_json() == b.to_json()
    c = random_battle(12, scenario="skirmish_line")
    assert c.events != a.events


def test_replay_reloads_and_resimulates_to_the_same_state() -> None:
    b = random_battle(3)
    text = b.to_json()
    loaded = Battle.from_json(text)
    assert loaded.to_json() == text
    again = Battle.resimulate(text)
    assert again.state.to_dict() == b.state.to_dict()
    assert again.events == loaded.events


def test_replaying_steps_through_every_action() -> None:
    """Battle.replaying yields the set-up battle, then the same object after each action; its end is the battle."""
    b = random_battle(4, scenario="skirmish_line")
    seen = []
    for sim in Battle.replaying(b.scenario, b.seed, b.actions):
        seen.append((id(sim), len(sim.actions), sim.state.step))
    assert [n for _, n, _ in seen] == list(range(len(b.actions) + 1))
    assert len({i for i, _, _ in seen}) == 1
    assert sim.to_json() == b.to_json()
    with pytest.raises(IllegalActionError):
        list(Battle.replaying(b.scenario, b.seed, [Action(kind="charge", unit=0, target=99)]))


@pytest.mark.parametrize("field", ["unit", "target"])
def test_an_action_with_a_float_or_bool_uid_is_illegal_and_changes_nothing(field: str) -> None:
    """2.0 == 2 and True == 1: such an action would pass the legality check, so its fields' types are checked first."""
    b = Battle.from_scenario("pitched_battle", seed=1)
    legal = b.legal_actions()[0]
    before = b.to_json()
    for bad in (2.0, True):
        odd = Action(legal.kind, **{"unit": legal.unit, "target": legal.target, "option": legal.option, field: bad})
        with pytest.raises(IllegalActionError, match=f"malformed action .*: {field}: expected an integer or null, "
                                                     f"got {bad!r}"):
            b.apply(odd)
    assert b.to_json() == before
    with pytest.raises(IllegalActionError, match="kind: expected a string, got 5"):
        b.apply(Action(5))  # type: ignore[arg-type]
    assert str(Action(5)) == "5"  # type: ignore[arg-type]


def test_clone_is_independent() -> None:
    b = Battle.from_scenario("skirmish_line", seed=5)
    c = b.clone()
    rng = np.random.default_rng(0)
    while not c.is_over:
        acts = c.legal_actions()
        c.apply(acts[int(rng.integers(len(acts)))])
    assert not b.is_over and b.state.step == 0
    assert b.legal_actions() == Battle.from_scenario("skirmish_line", seed=5).legal_actions()


def test_mid_battle_json_round_trip_continues_identically() -> None:
    """to_json / from_json mid-battle: both copies continue to the same result."""
    b = Battle.from_scenario("skirmish_line", seed=9)
    rng = np.random.default_rng(1)
    for _ in range(15):
        acts = b.legal_actions()
        b.apply(acts[int(rng.integers(len(acts)))])
    c = Battle.from_json(b.to_json())
    rng_b, rng_c = np.random.default_rng(2), np.random.default_rng(2)
    while not b.is_over:
        acts_b, acts_c = b.legal_actions(), c.legal_actions()
        assert acts_b == acts_c
        i = int(rng_b.integers(len(acts_b)))
        assert i == int(rng_c.integers(len(acts_c)))
        b.apply(acts_b[i])
        c.apply(acts_c[i])
    assert c.is_over and b.result == c.result
