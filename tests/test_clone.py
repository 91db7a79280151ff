"""Battle.clone() and BattleState.copy(): a copy shares nothing mutable with its battle, and replays its future.

The copy is :func:`env.rules.state.copy_data`, a deep copy without ``deepcopy``'s memo; it equals
``copy.deepcopy`` only while no list, dict or dataclass is reachable twice in a state, which
:func:`test_played_states_hold_no_object_twice_and_copy_equals_deepcopy` checks on played battles.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from battleline.env.rules.battle import Battle
from battleline.env.rules.state import Profile, UnitState, _field_copier, copy_data
from battleline.training.play import agent_seed, make_agent

CASES = [
    ("pitched_battle", 0),  # characters (joined), wizards, war machines, a ridden chariot
    ("siege", 1),  # castle elements, siege machines
    ("gate_assault", 2),  # the gate fight
    ("coverage/coverage_magic_a", 0),  # lasting spell effects, a ridden monster
    ("coverage/coverage_gun_line", 0),  # war machines of every kind
]
CLONE_AT = (0.2, 0.5, 0.8)
"""Where in a battle the copies are taken, as fractions of its decisions."""


def _agents(battle: Battle, seed: int) -> list[Any]:
    agents = [make_agent("random", seed=agent_seed(seed, side)) for side in (0, 1)]
    for side, agent in enumerate(agents):
        agent.reset(battle, side)
    return agents


def _play(battle: Battle, seed: int, limit: int = 20000) -> None:
    """Play ``battle`` on with random agents seeded by ``seed`` for at most ``limit`` decisions."""
    agents = _agents(battle, seed)
    for _ in range(limit):
        if battle.is_over:
            return
        battle.apply(agents[battle.pending.player].act(battle))


def _mutables(obj: Any) -> Iterator[int]:
    """The id of every list, dict, set and dataclass instance reachable from ``obj``, once per path."""
    if isinstance(obj, (list, tuple, set)):
        if not isinstance(obj, tuple):
            yield id(obj)
        for x in obj:
            yield from _mutables(x)
    elif isinstance(obj, dict):
        yield id(obj)
        for x in obj.values():
            yield from _mutables(x)
    elif dataclasses.is_dataclass(obj):
        yield id(obj)
        for f in dataclasses.fields(obj):
            yield from _mutables(getattr(obj, f.name))


def _decisions(scenario: str, seed: int) -> int:
    battle = Battle.from_scenario(scenario, seed=seed)
    _play(battle, seed)
    assert battle.is_over
    return len(battle.actions)


@pytest.mark.parametrize(("scenario", "seed"), CASES)
def test_a_clone_played_to_the_end_leaves_its_battle_byte_identical(scenario: str, seed: int) -> None:
    """At three points of a battle: the clone played on to the end changes nothing of the original's
    ``to_json``; the original played on with the same agents ends byte-identical to the clone."""
    total = _decisions(scenario, seed)
    battle = Battle.from_scenario(scenario, seed=seed)
    agents = _agents(battle, seed)
    for frac in CLONE_AT:
        while len(battle.actions) < int(frac * total):
            battle.apply(agents[battle.pending.player].act(battle))
        before = battle.to_json()
        twin = battle.clone()
        assert twin.to_json() == before
        _play(twin, seed + 100)
        assert twin.is_over
        assert battle.to_json() == before, f"{scenario}: playing the clone changed the battle at {frac:.0%}"
    twin = battle.clone()
    _play(twin, seed + 200)
    _play(battle, seed + 200)
    assert battle.is_over and twin.to_json() == battle.to_json()


@pytest.mark.parametrize(("scenario", "seed"), CASES)
def test_played_states_hold_no_object_twice_and_copy_equals_deepcopy(scenario: str, seed: int) -> None:
    """After every decision of a battle: no list, dict or dataclass is reachable twice in the state (so a copy
    without a memo is a deep copy), ``copy()`` equals ``copy.deepcopy``, and shares no mutable object."""
    battle = Battle.from_scenario(scenario, seed=seed)
    agents = _agents(battle, seed)
    checked = 0
    while not battle.is_over:
        ids = list(_mutables(battle.state))
        assert len(ids) == len(set(ids)), f"{scenario}: an object is reachable twice at step {battle.state.step}"
        if battle.state.step % 7 == 0:
            twin = battle.state.copy()
            assert twin == copy.deepcopy(battle.state) == battle.state
            assert twin.to_dict() == battle.state.to_dict()
            assert not set(ids) & set(_mutables(twin))
            checked += 1
        battle.apply(agents[battle.pending.player].act(battle))
    assert checked >= 2


def test_unit_copy_owns_its_profile_lists_and_dicts() -> None:
    battle = Battle.from_scenario("pitched_battle", seed=0)
    rider = next(u for u in battle.state.units if u.rider is not None)
    twin = rider.copy()
    assert twin == rider and twin is not rider
    twin.profile.T += 1
    twin.special_rules.append("flaming")
    twin.flags["moved"] = True
    twin.marks["terror_tested"] = True
    twin.rider["wounds_taken"] += 1  # type: ignore[index]
    assert rider.profile.T == twin.profile.T - 1
    assert "flaming" not in rider.special_rules and not rider.flags.get("moved")
    assert "terror_tested" not in rider.marks and rider.rider["wounds_taken"] == 0  # type: ignore[index]


def test_copy_data_shares_immutables_and_deep_copies_the_rest() -> None:
    point = (1.5, 2.0)
    data = {"a": [point, {"b": [1, 2]}], "s": {3, 4}, "t": ([5],)}
    twin = copy_data(data)
    assert twin == data
    assert twin["a"][0] is point  # a tuple of numbers is shared
    assert twin["a"][1]["b"] is not data["a"][1]["b"]
    assert twin["s"] is not data["s"]  # a set goes through copy.deepcopy
    assert twin["t"] is not data["t"] and twin["t"][0] is not data["t"][0]


def test_dataclasses_with_more_than_their_fields_go_through_deepcopy() -> None:
    @dataclasses.dataclass
    class Loose:  # no __slots__: an instance may carry attributes that are no fields
        xs: list[int]

    loose = Loose([1])
    loose.extra = [2]  # type: ignore[attr-defined]
    twin = copy_data(loose)
    assert _field_copier(Loose) is None
    assert twin.extra == [2] and twin.extra is not loose.extra and twin.xs is not loose.xs
    assert _field_copier(UnitState) is not None and _field_copier(Profile) is not None
