"""The plan network (agents/plan_net.py), the plan follower it shares with the search, and the search with a prior."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from battleline.agents.plan_net import (
    PlanFeatures,
    PlanNet,
    PlanNetAgent,
    PlanNetError,
    PlanPolicy,
    feature_size,
    load_plan_policy,
)
from battleline.agents.registry import PlanNetAgentError, SearchAgentError, make_agent
from battleline.agents.search import DEFAULT_PORTFOLIO, PriorRollout, SearchAgent, SearchSpec
from battleline.env.battle_env import resolve_unit_slots
from battleline.env.observation import N_GLOBAL_FEAT, N_UNIT_FEAT
from battleline.env.rules.battle import Battle
from battleline.training.play import play_battle

SCENARIO = "skirmish_line"
PLANS = ("line_advance", "refused_flank", "pincers")


class Fixed(PlanNet):
    """A network whose logits ignore the position: ``favourite`` always wins."""

    def __init__(self, inputs: int, plans: int, favourite: int) -> None:
        super().__init__(inputs, plans, hidden=(4,))
        self.favourite = favourite
        with torch.no_grad():
            for p in self.parameters():
                p.zero_()
            self.body[-1].bias[favourite] = 5.0


def _policy(favourite: int, plans: tuple[str, ...] = PLANS, scenario: str = SCENARIO) -> PlanPolicy:
    n = resolve_unit_slots(None, scenario)
    return PlanPolicy(Fixed(feature_size(n), len(plans), favourite), plans, n)


def _saved(tmp_path: Path, favourite: int, plans: tuple[str, ...] = PLANS, name: str = "net.pt") -> Path:
    path = tmp_path / name
    _policy(favourite, plans).save(path, {"note": "test"})
    return path


# ----------------------------------------------------------------------------- features and network
def test_features_are_the_observers_unit_table_and_globals_for_that_side() -> None:
    battle = Battle.from_scenario(SCENARIO, seed=1)
    n = resolve_unit_slots(None, SCENARIO)
    features = PlanFeatures(n)
    blue, red = features(battle, 0), features(battle, 1)
    assert blue.shape == red.shape == (feature_size(n),) == (2 * n * N_UNIT_FEAT + N_GLOBAL_FEAT,)
    assert blue.dtype == np.float32
    units = features.observer.units(battle, 0)
    assert np.array_equal(blue[: units.size], units.reshape(-1))
    assert not np.array_equal(blue, red)  # each side sees its own units first


def test_probabilities_sum_to_one_and_choose_takes_the_most_likely() -> None:
    battle = Battle.from_scenario(SCENARIO, seed=1)
    policy = _policy(2)
    p = policy.probabilities(battle, 0)
    assert p.shape == (3,) and abs(p.sum() - 1) < 1e-6 and int(np.argmax(p)) == 2
    assert policy.choose(battle, 1) == "pincers"


def test_a_network_that_does_not_fit_its_portfolio_is_refused() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        PlanPolicy(PlanNet(10, 3), PLANS, 2)


def test_save_and_load_give_the_same_probabilities(tmp_path: Path) -> None:
    torch.manual_seed(0)
    n = resolve_unit_slots(None, SCENARIO)
    policy = PlanPolicy(PlanNet(feature_size(n), 3), PLANS, n)
    policy.save(tmp_path / "a.pt")
    loaded = load_plan_policy(tmp_path / "a.pt")
    battle = Battle.from_scenario(SCENARIO, seed=2)
    assert loaded.portfolio == PLANS and loaded.unit_slots == n
    assert np.allclose(loaded.probabilities(battle, 0), policy.probabilities(battle, 0))


@pytest.mark.parametrize(("content", "message"), [
    (None, "plan network not found"),
    (b"not a torch file", "not a plan network"),
    ({"format": "other"}, "no format"),
    ({"format": "battleline-plan-net/1", "portfolio": ["a"]}, "damaged plan network"),
])
def test_bad_files_are_one_line_errors(tmp_path: Path, content: object, message: str) -> None:
    path = tmp_path / "bad.pt"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        torch.save(content, path)
    with pytest.raises(PlanNetError, match=message) as info:
        load_plan_policy(path)
    assert "\n" not in str(info.value)
    with pytest.raises(PlanNetAgentError, match=f"agent 'plans:{path}'"):
        make_agent(f"plans:{path}")


# ----------------------------------------------------------------------------- the agent
def test_the_agent_follows_its_networks_plan_at_each_own_block_and_plays_legally(tmp_path: Path) -> None:
    agent = make_agent(f"plans:{_saved(tmp_path, 1)}", seed=0)
    assert isinstance(agent, PlanNetAgent)
    battle = Battle.from_scenario(SCENARIO, seed=3)
    other = make_agent("line_advance", seed=1)
    agent.reset(battle, 0)
    other.reset(battle, 1)
    while not battle.is_over:
        player = battle.pending.player
        action = (agent if player == 0 else other).act(battle)
        assert action in battle.legal_actions()
        battle.apply(action)
    blocks = [b for b, _ in agent.choices]
    assert blocks and all(b == (0, -1) or b[1] == 0 for b in blocks)  # its deployment, then its own turns
    assert len(blocks) == len(set(blocks)) and {p for _, p in agent.choices} == {"refused_flank"}


def test_following_one_plan_plays_exactly_as_that_plan(tmp_path: Path) -> None:
    """A network that always picks refused_flank gives the battle refused_flank itself gives (same seeds)."""
    net = play_battle(SCENARIO, f"plans:{_saved(tmp_path, 1)}", "line_advance", seed=4)
    plain = play_battle(SCENARIO, "refused_flank", "line_advance", seed=4)
    assert net.actions == plain.actions and net.result == plain.result


def test_the_agent_plays_from_the_command_line(tmp_path: Path) -> None:
    from battleline.training.cli import app

    path = _saved(tmp_path, 0)
    result = CliRunner().invoke(app, ["play", "--scenario", SCENARIO, "--blue", f"plans:{path}", "--red", "random"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(app, ["play", "--scenario", SCENARIO, "--blue", "plans:/no/such.pt"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --blue: plan network not found: /no/such.pt (agent 'plans:/no/such.pt')"]


# ----------------------------------------------------------------------------- the search with a prior
def _midgame(seed: int = 3) -> Battle:
    battle = Battle.from_scenario(SCENARIO, seed=seed)
    agents = [make_agent("line_advance", seed=s) for s in (0, 1)]
    for side, agent in enumerate(agents):
        agent.reset(battle, side)
    while not (battle.state.turn > 1 and battle.pending.player == 0):
        battle.apply(agents[battle.pending.player].act(battle))
    return battle


def test_prior_parameters_are_checked(tmp_path: Path) -> None:
    path = _saved(tmp_path, 0)
    spec = SearchSpec.parse(f"search:sims=4:portfolio=line_advance+refused_flank+pincers:prior={path}:top=2")
    assert spec.prior == str(path) and spec.top == 2 and spec.name.endswith(f"prior={path}:top=2")
    for name, message in [
        ("search:top=2", "top needs a prior"),
        ("search:prior=", "prior needs the path"),
        (f"search:prior={tmp_path / 'missing.pt'}", "prior: plan network not found"),
        (f"search:prior={path}", "was trained on the plans line_advance\\+refused_flank\\+pincers"),
        (f"search:portfolio=line_advance+refused_flank+pincers:prior={path}:top=-1", "top must be an integer >= 0"),
    ]:
        with pytest.raises(SearchAgentError, match=message):
            make_agent(name)


def test_top_searches_only_the_priors_most_likely_plans(tmp_path: Path) -> None:
    path = _saved(tmp_path, 2)
    agent = make_agent(f"search:sims=4:horizon=2:portfolio=line_advance+refused_flank+pincers:prior={path}:top=1")
    battle = _midgame()
    agent.reset(battle, 0)
    record = agent.search(battle.clone(reseed=0))
    assert record.candidates == ["pincers"] and record.choice == "pincers"


def test_with_a_prior_rollouts_follow_the_network_after_the_block_searched(tmp_path: Path) -> None:
    """In a rollout the candidate plays the block searched; at the side's next block the prior's plan takes over."""
    battle = _midgame()
    policy = _policy(2)
    plans = {n: make_agent(n, seed=i) for i, n in enumerate(PLANS)}
    for agent in plans.values():
        agent.reset(battle, 0)
    from battleline.agents.portfolio import block_of

    rollout = PriorRollout(plans, "refused_flank", block_of(battle), policy, 0)
    sim = battle.clone(reseed=1)
    other = make_agent("line_advance", seed=9)
    other.reset(sim, 1)
    seen = []
    while not sim.is_over and sim.state.turn <= 3:
        player = sim.pending.player
        if player == 0:
            sim.apply(rollout.act(sim))
            seen.append((block_of(sim), rollout.current))
        else:
            sim.apply(other.act(sim))
    first = [p for b, p in seen if b == block_of(battle)]
    later = [p for b, p in seen if b[0] > block_of(battle)[0] and b[1] == 0]
    assert first and set(first) == {"refused_flank"} and later and set(later) == {"pincers"}
    assert set(rollout.plans) == {"refused_flank", "pincers"}  # copies made on use only
    assert all(rollout.plans[n] is not plans[n] for n in rollout.plans)


def test_a_search_with_a_prior_is_deterministic_and_changes_with_its_rollout_policy(tmp_path: Path) -> None:
    base = "search:sims=6:horizon=0:portfolio=line_advance+refused_flank+pincers"
    runs = []
    for favourite, seed in ((0, 1), (0, 1), (2, 1)):
        agent: SearchAgent = make_agent(f"{base}:prior={_saved(tmp_path, favourite, name=f'n{favourite}.pt')}", seed=seed)
        battle = _midgame()
        agent.reset(battle, 0)
        runs.append(agent.search(battle.clone(reseed=0)).values)
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def test_the_default_search_is_unchanged_by_the_prior_option() -> None:
    assert SearchSpec.parse("search").prior == "" and SearchSpec.parse("search").prior_policy() is None
    assert SearchSpec.parse("search").portfolio == DEFAULT_PORTFOLIO


def test_a_value_head_saves_its_kind_and_turns_values_into_probabilities(tmp_path: Path) -> None:
    from battleline.agents.plan_net import VALUE_TEMPERATURE

    n = resolve_unit_slots(None, SCENARIO)
    net = PlanNet(feature_size(n), 3, hidden=(4,), head="value")
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.body[-1].bias[:] = torch.tensor([0.1, 0.3, 0.2])
    PlanPolicy(net, PLANS, n).save(tmp_path / "v.pt")
    loaded = load_plan_policy(tmp_path / "v.pt")
    assert loaded.net.head == "value"
    p = loaded.probabilities(Battle.from_scenario(SCENARIO, seed=0), 0)
    expected = np.exp(np.array([0.1, 0.3, 0.2]) / VALUE_TEMPERATURE)
    assert np.allclose(p, expected / expected.sum(), atol=1e-6)
    with pytest.raises(ValueError, match="head must be one of policy, value"):
        PlanNet(4, 3, head="q")


# ----------------------------------------------------------------------------- fixed plan sequences
def test_a_plan_sequence_plays_its_plans_block_by_block_and_repeats_the_last() -> None:
    from battleline.agents.portfolio import PlanSequenceAgent

    agent = make_agent("sequence:refused_flank+pincers+line_advance")
    assert isinstance(agent, PlanSequenceAgent)
    battle = Battle.from_scenario("pitched_battle", seed=2)
    other = make_agent("line_advance", seed=1)
    agent.reset(battle, 0)
    other.reset(battle, 1)
    chosen: list[tuple[tuple[int, int], str]] = []
    while not battle.is_over:
        player = battle.pending.player
        action = (agent if player == 0 else other).act(battle)
        if player == 0 and (not chosen or chosen[-1][0] != agent.block):
            chosen.append((agent.block, agent.current))
        battle.apply(action)
    assert chosen[0] == ((0, -1), "refused_flank")
    assert chosen[1][1] == "pincers" and chosen[1][0][1] == 0
    assert {p for _, p in chosen[2:]} == {"line_advance"} and len(chosen) >= 4


def test_a_one_plan_sequence_is_that_plan(tmp_path: Path) -> None:
    seq = play_battle(SCENARIO, "sequence:refused_flank", "line_advance", seed=4)
    plain = play_battle(SCENARIO, "refused_flank", "line_advance", seed=4)
    assert seq.actions == plain.actions


@pytest.mark.parametrize(("name", "message"), [
    ("sequence:", "a plan sequence needs plan names joined by '\\+'"),
    ("sequence:line_advance++pincers", "a plan sequence needs plan names"),
    ("sequence:line_advance+nope", "'nope' is not a scripted field agent"),
    ("sequence:random", "'random' is not a scripted field agent"),
    ("sequence:siege_attacker", "'siege_attacker' is not a scripted field agent"),
])
def test_bad_plan_sequences_are_one_line_errors(name: str, message: str) -> None:
    from battleline.agents.registry import SequenceAgentError

    with pytest.raises(SequenceAgentError, match=message) as info:
        make_agent(name)
    assert "\n" not in str(info.value) and str(info.value).endswith(f"(agent '{name}')")
