"""The search agent (agents/search.py) and the reseeded clone it rolls out on (Battle.clone(reseed=...))."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from battleline.agents.registry import SearchAgentError, UnknownAgentError, make_agent
from battleline.agents.search import (
    DEFAULT_PORTFOLIO,
    SearchAgent,
    SearchSpec,
    SearchSpecError,
    block_of,
    rollout_value,
)
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import Dice, ScriptedDice
from battleline.training.play import agent_seed, play_battle

SCENARIO = "skirmish_line"
FAST = "search:sims=4:horizon=2:portfolio=line_advance+refused_flank+pincers"
"""A small search: three plans, four rollouts of two player turns each."""


def _d6s(battle: Battle, n: int = 12) -> list[int]:
    return battle.dice.d6("CORE.DICE.D6", n)


def _midgame(seed: int = 3, turns: int = 2) -> Battle:
    """A skirmish_line battle played by line_advance on both sides up to blue's first decision of ``turns + 1``."""
    battle = Battle.from_scenario(SCENARIO, seed=seed)
    agents = [make_agent("line_advance", seed=s) for s in (0, 1)]
    for side, agent in enumerate(agents):
        agent.reset(battle, side)
    while not (battle.state.turn > turns and battle.pending.player == 0):
        battle.apply(agents[battle.pending.player].act(battle))
    assert not battle.is_over
    return battle


# ----------------------------------------------------------------------------- Battle.clone(reseed=...)
def test_clone_without_reseed_replays_the_battles_own_future_rolls() -> None:
    battle = Battle.from_scenario(SCENARIO, seed=5)
    assert _d6s(battle.clone()) == _d6s(battle.clone()) == _d6s(battle)


def test_clone_with_reseed_rolls_fresh_dice_whatever_the_battle_would_roll() -> None:
    a, b = Battle.from_scenario(SCENARIO, seed=5), Battle.from_scenario(SCENARIO, seed=6)
    assert _d6s(a.clone()) != _d6s(b.clone())  # the two battles' futures differ
    fresh = _d6s(a.clone(reseed=99))
    assert fresh == _d6s(b.clone(reseed=99)) == Dice(99).d6("CORE.DICE.D6", 12)
    assert fresh != _d6s(a.clone())


def test_clone_with_reseed_never_passes_scripted_dice_on() -> None:
    battle = Battle.from_scenario(SCENARIO, seed=0, dice=ScriptedDice([6] * 40, then_seed=7))
    copy = battle.clone(reseed=3)
    assert type(copy.dice) is Dice
    assert _d6s(copy) == Dice(3).d6("CORE.DICE.D6", 12)
    assert _d6s(battle) == [6] * 12  # the battle's own script is untouched


def test_clone_reseed_must_be_a_seed() -> None:
    battle = Battle.from_scenario(SCENARIO, seed=0)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ValueError, match="seed must be an integer >= 0"):
            battle.clone(reseed=bad)


def test_reseeded_clone_is_independent_and_logs_its_own_rolls() -> None:
    battle = Battle.from_scenario(SCENARIO, seed=0)
    before = len(battle.events)
    copy = battle.clone(reseed=1)
    copy.dice.d6("CORE.DICE.D6", 2)
    assert copy.events[-1]["rule"] == "CORE.DICE.D6" and copy.events[-1]["kind"] == "dice"
    assert len(battle.events) == before and all(e.get("kind") != "dice" for e in battle.events)


# ----------------------------------------------------------------------------- (1) never the real future dice
def _first_choice(battle: Battle, name: str, seed: int) -> tuple:
    agent = make_agent(name, seed=seed)
    agent.reset(battle, 0)
    action = agent.act(battle)
    record = agent.records[-1]
    return action, record.choice, record.samples, record.values


def test_search_choice_does_not_depend_on_the_battles_future_dice() -> None:
    """Two battles identical but for their dice stream from now on: the same search makes the same choice
    with the same rollout values, and its act leaves the battle (and its dice) as they were."""
    base = _midgame()
    name = "search:sims=6:horizon=0:portfolio=line_advance+refused_flank+pincers"
    one, two = base.clone(reseed=11), base.clone(reseed=22)
    assert one.state.to_dict() == two.state.to_dict() and one.events == two.events
    assert _d6s(one.clone()) != _d6s(two.clone())  # their real futures differ
    dice_before, events_before = one.dice.state, list(one.events)
    first = _first_choice(one, name, seed=4)
    assert first == _first_choice(two, name, seed=4)
    assert one.dice.state == dice_before and one.events == events_before


def test_search_choice_does_not_depend_on_scripted_real_dice() -> None:
    """Rig the real dice with scripts of all sixes and all ones: the search's choice is the same."""
    battles = [Battle.from_scenario(SCENARIO, seed=0, dice=ScriptedDice([face] * 400)) for face in (6, 1)]
    assert battles[0].state.to_dict() == battles[1].state.to_dict()
    name = "search:sims=6:horizon=4:portfolio=line_advance+refused_flank+pincers"
    assert _first_choice(battles[0], name, seed=2) == _first_choice(battles[1], name, seed=2)


def test_the_future_dice_check_catches_a_search_that_peeks(monkeypatch) -> None:
    """The check above can fail: with clones that keep the real dice (reseed ignored), the rollout values
    follow the battle's future rolls and the two battles give different values."""
    base = _midgame()
    name = "search:sims=6:horizon=0:portfolio=line_advance+refused_flank+pincers"
    one, two = base.clone(reseed=11), base.clone(reseed=22)
    real_clone = Battle.clone
    monkeypatch.setattr(Battle, "clone", lambda self, reseed=None: real_clone(self))
    assert _first_choice(one, name, seed=4)[3] != _first_choice(two, name, seed=4)[3]


# ----------------------------------------------------------------------------- (2) same seed, same choices
def test_same_seed_same_choices_different_seed_other_rollouts() -> None:
    runs = [play_battle(SCENARIO, FAST, "line_advance", seed=5) for _ in range(2)]
    assert runs[0].actions == runs[1].actions
    assert runs[0].result == runs[1].result
    agents = [make_agent(FAST, seed=s) for s in (1, 1, 2)]
    for agent in agents:
        play_battle(SCENARIO, agent, "line_advance", seed=5)
    assert [(r.choice, r.samples, r.values) for r in agents[0].records] == \
           [(r.choice, r.samples, r.values) for r in agents[1].records]
    assert [r.values for r in agents[0].records] != [r.values for r in agents[2].records]


# ----------------------------------------------------------------------------- (3) names and errors
def test_plain_name_gives_the_defaults() -> None:
    agent = make_agent("search", seed=0)
    assert isinstance(agent, SearchAgent) and agent.name == "search"
    assert agent.spec == SearchSpec(sims=64, horizon=0, opponent="line_advance", portfolio=DEFAULT_PORTFOLIO)
    assert "open_loop" not in DEFAULT_PORTFOLIO and DEFAULT_PORTFOLIO[0] == "line_advance"


def test_parameters_are_parsed() -> None:
    agent = make_agent("search:sims=8:horizon=0:opponent=random:portfolio=pincers+line_advance", seed=0)
    assert agent.spec == SearchSpec(sims=8, horizon=0, opponent="random", portfolio=("pincers", "line_advance"))
    assert agent.name == "search:sims=8:horizon=0:opponent=random:portfolio=pincers+line_advance"
    assert SearchSpec.parse(agent.spec.name) == agent.spec  # the canonical name reads back


@pytest.mark.parametrize(("name", "message"), [
    ("search:sims=0", "sims must be an integer >= 1, got '0' (agent 'search:sims=0')"),
    ("search:sims=x", "sims must be an integer >= 1, got 'x' (agent 'search:sims=x')"),
    ("search:sims=2.5", "sims must be an integer >= 1, got '2.5' (agent 'search:sims=2.5')"),
    ("search:horizon=-1", "horizon must be an integer >= 0, got '-1' (agent 'search:horizon=-1')"),
    ("search:sims", "parameter 'sims' needs a value, as KEY=VALUE (agent 'search:sims')"),
    ("search:", "empty parameter; give KEY=VALUE after each ':' (agent 'search:')"),
    ("search:sims=2:", "empty parameter; give KEY=VALUE after each ':' (agent 'search:sims=2:')"),
    ("search:depth=3", "unknown parameter 'depth'; parameters: sims, horizon, opponent, portfolio, prior, top "
                       "(agent 'search:depth=3')"),
    ("search:sims=2:sims=3", "parameter 'sims' given twice (agent 'search:sims=2:sims=3')"),
    ("search:portfolio=line_advance++pincers", "portfolio 'line_advance++pincers' has an empty entry; give agent "
                                               "names joined by '+' (agent 'search:portfolio=line_advance++pincers')"),
    ("search:portfolio=pincers+pincers", "portfolio 'pincers+pincers' names an agent twice "
                                         "(agent 'search:portfolio=pincers+pincers')"),
])
def test_bad_parameters_are_one_line_errors(name: str, message: str) -> None:
    with pytest.raises(SearchAgentError) as info:
        make_agent(name)
    assert str(info.value) == message
    assert isinstance(info.value, UnknownAgentError) and "\n" not in str(info.value)


@pytest.mark.parametrize("name", ["search:opponent=nobody", "search:portfolio=line_advance+search",
                                  "search:opponent=search"])
def test_unknown_plan_agents_name_the_known_ones(name: str) -> None:
    with pytest.raises(SearchAgentError, match=r"is not a registered agent; known agents: random, line_advance, ") as info:
        make_agent(name)
    assert "\n" not in str(info.value)


def test_other_search_lookalikes_stay_unknown_agents() -> None:
    with pytest.raises(UnknownAgentError) as info:
        make_agent("searching")
    assert not isinstance(info.value, SearchAgentError)
    with pytest.raises(SearchSpecError, match="not a search agent name: 'searching'"):
        SearchSpec.parse("searching")


def test_bad_search_name_on_the_command_line_is_one_line() -> None:
    from battleline.training.cli import app

    result = CliRunner().invoke(app, ["play", "--scenario", SCENARIO, "--blue", "search:sims=0", "--red", "random"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines == ["error: --blue: sims must be an integer >= 1, got '0' (agent 'search:sims=0')"]


# ----------------------------------------------------------------------------- (4) a whole battle, legally
def test_plays_a_whole_skirmish_legally_and_searches_once_per_own_turn() -> None:
    battle = Battle.from_scenario(SCENARIO, seed=2)
    agents = [make_agent(FAST, seed=agent_seed(2, 0)), make_agent("random", seed=agent_seed(2, 1))]
    for side, agent in enumerate(agents):
        agent.reset(battle, side)
    own_blocks = []
    while not battle.is_over:
        side = battle.pending.player
        action = agents[side].act(battle)
        assert action in battle.legal_actions()
        if side == 0 and block_of(battle) not in own_blocks and battle.state.active == 0:
            own_blocks.append(block_of(battle))
        battle.apply(action)
    assert battle.result["winner"] in ("blue", "red", "draw")
    records = agents[0].records
    assert [r.block for r in records] == own_blocks  # one search per own player turn, at its first decision
    assert all(r.sims == 4 and r.choice in r.candidates for r in records)


def test_plays_from_the_command_line_and_as_an_env_opponent() -> None:
    from battleline.env.battle_env import BattleEnv
    from battleline.training.cli import app

    result = CliRunner().invoke(app, ["play", "--scenario", SCENARIO, "--blue", FAST, "--red", "random", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "winner: " in result.stdout
    env = BattleEnv(SCENARIO, opponent=FAST, learner_side="blue")
    obs, _ = env.reset(seed=0)
    for _ in range(30):
        obs, _, term, trunc, _ = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
        if term or trunc:
            break
    assert env._opponent.agent.records  # the opponent searched during red's turns


# ----------------------------------------------------------------------------- budget and value
def test_successive_halving_spends_the_budget_and_keeps_the_best() -> None:
    battle = _midgame()
    agent = make_agent("search:sims=20:horizon=2", seed=0)
    agent.reset(battle, 0)
    record = agent.search(battle.clone(reseed=0))
    assert record.sims == sum(record.samples) == 20
    assert min(record.samples) >= 1  # every plan tried
    most = max(record.samples)
    finalists = [i for i, n in enumerate(record.samples) if n == most]
    assert record.choice in [record.candidates[i] for i in finalists]
    best = max(finalists, key=lambda i: (record.values[i], -i))
    assert record.choice == record.candidates[best]


def test_a_budget_below_the_portfolio_tries_the_current_plan_and_drawn_others() -> None:
    battle = _midgame()
    agent = make_agent("search:sims=3:horizon=2", seed=0)
    agent.reset(battle, 0)
    record = agent.search(battle.clone(reseed=0))
    assert record.sims == 3 and sorted(record.samples, reverse=True)[:4] == [1, 1, 1, 0]
    assert record.samples[0] == 1  # line_advance, the current plan
    assert sum(math.isnan(v) for v in record.values) == len(DEFAULT_PORTFOLIO) - 3


def test_rollout_value_is_result_plus_margin_over_points_limit() -> None:
    battle = play_battle(SCENARIO, "line_advance", "random", seed=1)
    res, limit = battle.result, battle.state.points_limit
    term = {"draw": 0.0, "blue": 1.0, "red": -1.0}[res["winner"]]
    assert rollout_value(battle, 0) == pytest.approx(term + max(-1, min(1, res["margin"] / limit)))
    assert rollout_value(battle, 1) == pytest.approx(-rollout_value(battle, 0))
    start = Battle.from_scenario(SCENARIO, seed=1)
    assert start.result["winner"] is None
    assert rollout_value(start, 0) == pytest.approx(start.result["margin"] / start.state.points_limit
                                                    + (0.0 if abs(start.result["margin"]) < 0.1 * limit else
                                                       math.copysign(1.0, start.result["margin"])))

