"""Unit-pair observation features (agents/pair_features.py, training/pair_observation.py)."""

from __future__ import annotations

import numpy as np
import pytest

from battleline.agents import estimates
from battleline.agents.pair_features import N_PAIR_FEAT, PAIR_FEATURES, PAIRS_KEY, pair_features
from tests.setups import INFANTRY_BASE, battle, placement

DEPTH4 = 4 * INFANTRY_BASE  # 20 infantry models in 5 files
F = {name: k for k, name in enumerate(PAIR_FEATURES)}


def _facing_off(gap: float):
    """Blue spearmen (M4) and orc warriors (M4) face each other ``gap`` inches apart; a second orc unit 30" away."""
    blue = [placement("marcher_spearmen", 36, 10, 90)]
    red = [placement("orc_warriors", 36, 10 + DEPTH4 + gap, 270), placement("orc_warriors", 66, 40, 270)]
    return battle(blue, red)


def test_pair_features_pin_the_charge_arithmetic() -> None:
    """6" apart, front to front: M4 + the higher of 2D6 reaches 6" unless both dice are 1 (CORE.CHARGE.RANGE):
    35/36 each way, the front arc; the far orc unit (about 30" away) is out of reach."""
    b = _facing_off(6.0)
    f = pair_features(b, 0, 3)
    assert f.shape == (3, 3, N_PAIR_FEAT) and f.dtype == np.float32
    near, far = f[0, 0], f[0, 1]
    assert near[F["valid"]] == 1 and near[F["distance"]] == pytest.approx(6.0 / 24, abs=1e-5)
    assert near[F["reach"]] == pytest.approx(35 / 36) and near[F["enemy_reach"]] == pytest.approx(35 / 36)
    assert (near[F["arc_front"]], near[F["arc_flank"]], near[F["arc_rear"]]) == (1, 0, 0)
    est = estimates.estimate_combat(b, b.unit(0), b.unit(1), "front")
    assert near[F["cr_diff"]] == pytest.approx(np.clip(est.diff / 10, -1, 1))
    assert far[F["valid"]] == 1 and far[F["reach"]] == 0 and far[F["enemy_reach"]] == 0 and far[F["distance"]] > 1
    assert not f[1:].any() and not f[:, 2].any()  # empty slots stay zero


def test_pair_features_seen_from_the_other_side_swap_roles() -> None:
    """Red's row for the orcs is blue's column for them with 'own' and 'enemy' swapped (mirroring changes nothing)."""
    b = _facing_off(9.0)
    blue, red = pair_features(b, 0, 2), pair_features(b, 1, 2)
    assert blue[0, 0, F["reach"]] == pytest.approx(red[0, 0, F["enemy_reach"]])
    assert blue[0, 0, F["enemy_reach"]] == pytest.approx(red[0, 0, F["reach"]])
    assert blue[0, 0, F["cr_diff"]] == pytest.approx(red[0, 0, F["enemy_cr_diff"]])
    assert blue[0, 0, F["distance"]] == pytest.approx(red[0, 0, F["distance"]])
    assert blue[0, 0, F["reach"]] == pytest.approx(estimates.charge_reach_probability(4, 9.0))  # 4 + 2D6max >= 9


@pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")  # the wrapper is the point
def test_pair_observation_wraps_battle_env_and_passes_the_checkers() -> None:
    from gymnasium.utils.env_checker import check_env

    from battleline.env.battle_env import BattleEnv
    from battleline.training.pair_observation import PairObservation

    env = PairObservation(BattleEnv("skirmish_line", illegal_action="penalise"))
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    n = env.unwrapped.codec.n
    assert obs[PAIRS_KEY].shape == (n, n, N_PAIR_FEAT) and env.observation_space.contains(obs)
    assert np.array_equal(env.action_masks(), env.unwrapped.action_masks())
    with pytest.raises(ValueError, match="already has a 'pairs' key"):
        PairObservation(env)


def test_policy_agent_observes_pairs_when_its_model_does() -> None:
    """A model built on the wrapped env plays a whole battle through PolicyAgent with legal orders only."""
    from sb3_contrib import MaskablePPO

    from battleline.agents.learned import PolicyAgent
    from battleline.env.battle_env import BattleEnv
    from battleline.training.features import MaskFreeExtractor
    from battleline.training.pair_observation import PairObservation
    from battleline.training.play import play_battle

    env = PairObservation(BattleEnv("skirmish_line", illegal_action="penalise"))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=64, seed=0,
                        policy_kwargs={"features_extractor_class": MaskFreeExtractor, "net_arch": [16]})
    agent = PolicyAgent(model, seed=0)
    assert agent.pairs
    b = play_battle("skirmish_line", agent, "random", 2)
    assert b.is_over and agent.decisions > 0 and agent.illegal == 0


def test_pairs_need_the_mlp_policy() -> None:
    from battleline.training.config import ConfigError, load_training_config

    data = load_training_config("quick").model_dump(mode="json")
    data["pairs"] = True
    data["ppo"]["policy"] = "unit_pairs"
    with pytest.raises(ConfigError, match="pairs: the unit_pairs policy does not read the unit-pair features"):
        load_training_config(data)
