"""The factored policy (training/factored.py): the factor table, exact head masks on random states,
the flat distribution as the product of the heads, training, saving and playing as ``model:PATH``."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
import torch
from rich.console import Console

from battleline.env.encoding import CAST_OPTIONS, ActionCodec
from battleline.env.rules.actions import MOVE_OPTIONS, REACTIONS
from battleline.env.rules.config import ConfigError
from battleline.env.rules.deployment import N_SLOTS
from battleline.env.siege_encoding import SiegeActionCodec
from battleline.training.config import load_training_config
from battleline.training.factored import KINDS, codec_for, factor_table, head_masks
from benchmarks.factored_masks import check_state, check_states, random_states, scenario_codec

MASK_STATES = 500
"""Random states of the mask test here; ``python -m benchmarks.factored_masks`` checks 10,000 (docs/training.md)."""


def test_factor_table_places_each_block() -> None:
    n = 4
    codec = ActionCodec(n)
    table = factor_table(codec)
    L, K = codec.layout, len(KINDS)
    assert table.grid == (n + 1, K, N_SLOTS)  # 55 deployment slots are the widest target axis
    for name in ("unit", "kind", "target", "dense"):
        array = getattr(table, name)
        assert array.shape == (codec.size,) and array.dtype == np.int64
    assert len(np.unique(table.dense)) == codec.size

    def at(index: int) -> tuple[int, str, int]:
        return int(table.unit[index]), KINDS[table.kind[index]], int(table.target[index])

    assert at(0) == (n, "end_phase", 0)
    assert at(L.charge + 2 * n + 1) == (2, "charge", n + 1)  # own 2 charges enemy 1: target token n + 1
    assert at(L.move + 3 * len(MOVE_OPTIONS) + 5) == (3, "move", 5)
    assert at(L.react + 1 * len(REACTIONS) + 2) == (n, f"react_{REACTIONS[2]}", n + 1)  # answer enemy 1
    assert at(L.join + 1 * n + 3) == (1, "join", 3)
    assert at(L.cast + (2 * CAST_OPTIONS + 7) * 2 * n + 5) == (2, "cast_7", 5)  # at enemy slot 1
    assert at(L.dispel + 12) == (n, "dispel", 12)  # the scroll
    assert at(L.order + 3) == (3, "order", 0)
    assert at(L.deploy + 1 * N_SLOTS + 54) == (1, "deploy", 54)
    assert at(L.shoot + 0 * n + 3) == (0, "shoot", n + 3)
    assert at(L.pursue + 2 * 2 + 1) == (2, "pursue", 1)
    assert at(L.leave + 1) == (1, "leave", 0)
    assert at(L.challenge + 3 * n + 0) == (3, "challenge", n)
    assert at(L.accept + 2) == (2, "accept", 0) and at(L.refuse + 2) == (2, "refuse", 0)
    assert at(L.swap + 2 * n + 0) == (2, "swap", 0)  # with own character 0
    assert at(L.breathe + 1 * n + 2) == (1, "breathe", n + 2)
    assert at(L.cast + (0 * CAST_OPTIONS + 21) * 2 * n + 0) == (0, "cast_21", 0)  # bound item 1 at own slot 0
    siege = SiegeActionCodec(n, 10)
    st = factor_table(siege)
    assert st.grid == (n + 1, K + 6, N_SLOTS) and len(np.unique(st.dense)) == siege.size
    assert (int(st.unit[siege.siege + (1 * 10 + 7) * 6 + 4]), st.kinds[st.kind[siege.siege + (1 * 10 + 7) * 6 + 4]],
            int(st.target[siege.siege + (1 * 10 + 7) * 6 + 4])) == (1, "siege_4", 7)


def test_codec_for_reads_the_action_space() -> None:
    assert type(codec_for(3, ActionCodec(3).size)) is ActionCodec
    siege = codec_for(3, SiegeActionCodec(3, 10).size)
    assert isinstance(siege, SiegeActionCodec) and siege.elements == 10
    with pytest.raises(ValueError, match="3 unit slots give 704 actions .or more with a castle., the action space has 705"):
        codec_for(3, 705)


def test_head_masks_of_a_hand_made_mask() -> None:
    n = 2
    codec = ActionCodec(n)
    table = factor_table(codec)
    L = codec.layout
    mask = torch.zeros(1, codec.size, dtype=torch.bool)
    mask[0, [0, L.charge + 1 * n + 0, L.move + 3]] = True  # end phase, own 1 charges enemy 0, own 0 move option 3
    unit, kind, target = (m[0] for m in head_masks(table, mask))
    assert unit.tolist() == [True, True, True]
    assert torch.nonzero(kind).tolist() == [[0, KINDS.index("move")], [1, KINDS.index("charge")],
                                           [2, KINDS.index("end_phase")]]
    assert torch.nonzero(target).tolist() == [[0, KINDS.index("move"), 3], [1, KINDS.index("charge"), n + 0],
                                             [2, KINDS.index("end_phase"), 0]]


def test_head_masks_equal_the_legal_set_on_random_states() -> None:
    report = check_states(MASK_STATES, seed=0)
    assert report.failures == []
    assert sum(report.states.values()) == MASK_STATES
    assert set(report.states) == {"pitched_battle", "skirmish_line", "pitched_battle_t9a", "siege", "gate_assault"}
    assert report.max_product_error < 1e-6  # the flat distribution is the product of the heads
    covered = set(report.kinds)
    assert {"deploy", "move", "charge", "shoot", "challenge", "accept", "join", "dispel", "siege_1"} <= covered
    assert any(k.startswith("cast_") for k in covered) and any(k.startswith("react_") for k in covered)


def test_a_wrong_table_fails_the_mask_check() -> None:
    codec = scenario_codec("skirmish_line")
    table = factor_table(codec)
    battle, _, _ = next(iter(random_states("skirmish_line", 1, seed=0)))
    player = battle.pending.player
    legal = np.flatnonzero(codec.mask(battle, player))
    illegal = int(np.flatnonzero(~codec.mask(battle, player))[0])
    section = table.section.copy()
    section[[legal[1], illegal]] = section[[illegal, legal[1]]]  # two indices swap their (unit, kind, target)
    _, problems = check_state(dataclasses.replace(table, section=section), codec, battle, player)
    assert problems and problems[0].startswith("heads allow [(") and "not legal, miss [(" in problems[0]
    assert check_state(table, codec, battle, player)[1] == []


def _policy(scenario: str = "skirmish_line") -> tuple[object, object]:
    from gymnasium.spaces import Discrete

    from battleline.env.observation import Observer
    from battleline.training.factored import FactoredPolicy

    codec = scenario_codec(scenario)
    observer = Observer(codec)
    torch.manual_seed(1)
    policy = FactoredPolicy(observer.space(), Discrete(codec.size), lambda _: 3e-4, embed_dim=16, attention_heads=2)
    policy.set_training_mode(False)
    return policy, observer


def test_flat_probabilities_are_the_product_of_the_heads() -> None:
    policy, observer = _policy("pitched_battle")
    head = policy.action_net  # type: ignore[attr-defined]
    table = head.table
    codec = observer.codec  # type: ignore[attr-defined]
    battle, _, _ = list(random_states("pitched_battle", 40, seed=3))[-1]
    for _ in range(3):
        battle.apply(battle.legal_actions()[0])
    player = battle.pending.player
    mask = codec.mask(battle, player)
    obs = {k: torch.as_tensor(v[None]) for k, v in observer.observe(battle, player, mask).items()}  # type: ignore[attr-defined]
    with torch.no_grad():
        flat = policy.get_distribution(obs).distribution.probs[0].double()  # type: ignore[attr-defined]
        masked = policy.get_distribution(obs, action_masks=mask[None]).distribution.probs[0].double()  # type: ignore[attr-defined]
        unit_lp, kind_lp, target_lp, _ = head.head_log_probs(policy.extract_features(obs))  # type: ignore[attr-defined]
    legal = np.flatnonzero(mask)
    assert len(legal) > 1
    for index in legal:
        u, k, t = int(table.unit[index]), int(table.kind[index]), int(table.target[index])
        product = float(unit_lp[0, u].exp() * kind_lp[0, u, k].exp() * target_lp[0, u, k, t].exp())
        assert float(flat[index]) == pytest.approx(product, rel=1e-5, abs=1e-9)
    assert float(flat.sum()) == pytest.approx(1.0, abs=1e-6)
    assert torch.count_nonzero(flat[torch.as_tensor(~mask)]) == 0
    assert torch.allclose(flat, masked, atol=1e-7)  # sb3-contrib's mask changes nothing: the head is masked already


def test_factored_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"ppo: .*embed_dim 30 is not a multiple of attention_heads 4"):
        load_training_config("quick", {"ppo": {"policy": "factored", "embed_dim": 30}})
    with pytest.raises(ConfigError, match=r"ppo.attention_layers: .*greater than or equal to 1"):
        load_training_config("quick", {"ppo": {"policy": "factored", "attention_layers": 0}})
    with pytest.raises(ConfigError, match="planes: the factored policy does not read the raster planes"):
        load_training_config("quick", {"ppo": {"policy": "factored"}, "planes": True})
    with pytest.raises(ConfigError, match="pairs: the factored policy does not read the unit-pair features"):
        load_training_config("quick", {"ppo": {"policy": "factored"}, "pairs": True})
    with pytest.raises(ConfigError, match="ppo: .*mask_features: the factored policy reads the mask only to mask"):
        load_training_config("quick", {"ppo": {"policy": "factored", "mask_features": True}})
    ok = load_training_config("quick", {"ppo": {"policy": "factored", "embed_dim": 30, "attention_heads": 3}})
    assert ok.ppo.policy == "factored"


def test_factored_run_trains_saves_and_plays_as_a_model_agent(tmp_path: Path) -> None:
    from battleline.agents.learned import PolicyAgent
    from battleline.agents.registry import make_agent
    from battleline.env.rules.battle import Battle
    from battleline.training.factored import FactoredPolicy
    from battleline.training.train import train

    run = tmp_path / "run"
    config = load_training_config("quick", {
        "run_dir": str(run), "total_timesteps": 256, "eval_every": 256, "eval_games": 2, "checkpoint_every": 128,
        "ppo": {"policy": "factored", "embed_dim": 16, "attention_layers": 1, "attention_heads": 2, "n_steps": 128,
                "batch_size": 64, "n_epochs": 2, "net_arch": [32]},
    })
    summary = train(config, console=Console(file=io.StringIO()), progress=False)
    assert summary["num_timesteps"] == 256 and summary["illegal_actions"] == 0
    assert summary["eval_illegal_actions"] == 0 and summary["last_evaluation"] is not None
    agent = make_agent(f"model:{run / 'model.zip'}")
    assert isinstance(agent, PolicyAgent) and isinstance(agent.model.policy, FactoredPolicy)
    assert agent.model.policy.action_net.table.n == 3  # skirmish_line: three unit slots a side
    battle = Battle.from_scenario("skirmish_line", seed=5)
    opponent = make_agent("random")
    agent.reset(battle, 0)
    opponent.reset(battle, 1)
    while not battle.is_over:
        battle.apply((agent if battle.pending.player == 0 else opponent).act(battle))
    assert agent.decisions > 10 and agent.illegal == 0
    battle = Battle.from_scenario("skirmish_line", seed=6)
    for _ in range(12):
        battle.apply(battle.legal_actions()[-1])
    side = battle.pending.player
    mask = agent.codec.mask(battle, side)
    assert mask.sum() > 1
    probs = agent.action_probabilities(agent.observer.observe(battle, side, mask), mask)
    assert ((probs > 0) == mask).all() and probs.sum() == pytest.approx(1.0, abs=1e-6)
