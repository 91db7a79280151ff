"""training.masking: the learner's masked distribution gives sb3-contrib's numbers bit for bit, faster (the dense
path; the ``mlp`` policy's sparse path, equal to rounding, is tested in tests/test_sparse_head.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategorical, MaskableCategoricalDistribution

from battleline.training.masking import (
    HUGE_NEG,
    ExactMaskableCategorical,
    ExactMaskableCategoricalDistribution,
    MaskedMultiInputPolicy,
    logsumexp_last,
    sample_masked,
)

N_ACTIONS = 5704  # pitched_battle's action indices


def _masked_logits(seed: int, batch: int, legal: float, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Normalised random logits with all but a ``legal`` share of each row set to -1e8 (row 0 all masked when
    ``seed`` is even), as sb3-contrib's masking leaves them."""
    g = torch.Generator().manual_seed(seed)
    raw = (torch.randn(batch, N_ACTIONS, generator=g, dtype=dtype) * (0.01 if seed % 3 else 4.0))
    raw = raw - raw.logsumexp(-1, keepdim=True)
    mask = torch.rand(batch, N_ACTIONS, generator=g) < legal
    if seed % 2 == 0:
        mask[0] = False
    return torch.where(mask, raw, torch.tensor(HUGE_NEG, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batch,legal", [(1, 0.005), (7, 0.05), (64, 0.005), (64, 1.0)])
def test_logsumexp_last_equals_torch_logsumexp_and_its_gradient_bit_for_bit(
        batch: int, legal: float, dtype: torch.dtype) -> None:
    for seed in range(6):
        x = _masked_logits(seed, batch, legal, dtype)
        x[-1, :3] = torch.tensor([float("-inf"), -90.0, -110.0], dtype=dtype)  # underflow edges and -inf
        a, b = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        want, got = a.logsumexp(-1, keepdim=True), logsumexp_last(b)
        assert got.dtype == dtype and got.shape == (batch, 1)
        assert torch.equal(want, got)
        weights = torch.randn(batch, 1, generator=torch.Generator().manual_seed(seed), dtype=dtype)
        (want * weights).sum().backward()
        (got * weights).sum().backward()
        assert torch.equal(a.grad, b.grad)


def test_logsumexp_last_of_an_all_masked_row_is_its_logit_plus_log_n() -> None:
    x = torch.full((1, 4), HUGE_NEG)
    assert torch.equal(logsumexp_last(x), x.logsumexp(-1, keepdim=True))
    assert logsumexp_last(x).item() == pytest.approx(HUGE_NEG + np.log(4))


@pytest.mark.parametrize("masked", [True, False])
def test_exact_categorical_holds_what_maskable_categorical_holds(masked: bool) -> None:
    g = torch.Generator().manual_seed(1)
    raw = torch.randn(64, N_ACTIONS, generator=g) * 0.1
    masks = (torch.rand(64, N_ACTIONS, generator=g) < 0.01).numpy() if masked else None
    want = MaskableCategorical(logits=raw)
    want.apply_masking(masks)
    got = ExactMaskableCategorical.from_logits(raw, masks)
    assert torch.equal(want.logits, got.logits) and torch.equal(want.probs, got.probs)
    assert torch.equal(want.entropy(), got.entropy())
    torch.manual_seed(5)
    actions = want.sample()
    torch.manual_seed(5)
    assert torch.equal(actions, got.sample())
    assert torch.equal(want.log_prob(actions), got.log_prob(actions))
    assert (want.masks is None) == (got.masks is None) == (not masked)
    want.apply_masking(None)
    got.apply_masking(None)  # the mask removed again: the unmasked logits come back
    assert torch.equal(want.logits, got.logits)


def test_exact_distribution_builds_unmasked_when_read_before_a_mask() -> None:
    raw = torch.randn(3, 10, generator=torch.Generator().manual_seed(2))
    want = MaskableCategoricalDistribution(10).proba_distribution(raw)
    got = ExactMaskableCategoricalDistribution(10).proba_distribution(raw)
    assert isinstance(got.distribution, ExactMaskableCategorical)
    assert torch.equal(want.distribution.logits, got.distribution.logits)
    assert torch.equal(want.mode(), got.mode())
    mask = np.zeros((3, 10), dtype=bool)
    mask[:, 4] = True
    got.apply_masking(mask)  # masking a distribution already built goes through it
    assert torch.equal(got.mode(), torch.full((3,), 4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("batch,legal", [(1, 0.005), (8, 0.05), (64, 0.005), (3, 1.0)])
def test_sample_masked_draws_what_maskable_categorical_draws(batch: int, legal: float, dtype: torch.dtype) -> None:
    """Same actions, log-probabilities and random generator state afterwards as sb3-contrib's ``sample()``
    (or ``mode()``) and ``log_prob()``, over raw logits of three scales, all-masked rows included."""
    for seed in range(8):
        g = torch.Generator().manual_seed(seed)
        raw = torch.randn(batch, N_ACTIONS, generator=g, dtype=dtype) * (0.01, 4.0, 40.0)[seed % 3]
        masks = (torch.rand(batch, N_ACTIONS, generator=g) < legal).numpy()
        if seed % 2 == 0:
            masks[0] = False  # no legal action: sb3-contrib draws uniformly among all
        for deterministic in (False, True):
            want = MaskableCategorical(logits=raw)
            want.apply_masking(masks)
            torch.manual_seed(seed)
            actions = torch.argmax(want.probs, dim=1) if deterministic else want.sample()
            rng_after = torch.get_rng_state()
            torch.manual_seed(seed)
            with torch.no_grad():
                got_actions, got_log_probs = sample_masked(raw, masks, deterministic)
            assert got_actions.dtype == torch.int64 and got_actions.shape == (batch,)
            assert torch.equal(got_actions, actions)
            assert torch.equal(got_log_probs, want.log_prob(actions))
            assert torch.equal(torch.get_rng_state(), rng_after)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_sample_masked_refuses_logits_that_are_not_finite(bad: float) -> None:
    raw = torch.zeros(2, 10)
    raw[1, 3] = bad
    with pytest.raises(RuntimeError, match="not finite"):
        sample_masked(raw, np.ones((2, 10), dtype=bool))


def test_policy_forward_draws_what_sb3_contrib_forward_draws() -> None:
    """The rollout's call (no gradient, masks) through :func:`sample_masked` gives sb3-contrib's actions, values
    and log-probabilities, and leaves the random generator where sb3-contrib's leaves it."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.utils import obs_as_tensor

    from battleline.env.battle_env import BattleEnv
    from battleline.training.config import PPOConfig
    from battleline.training.train import policy_class, policy_kwargs

    ppo = PPOConfig()
    env = BattleEnv("skirmish_line", opponent="random")
    model = MaskablePPO(policy_class(ppo), env, n_steps=8, batch_size=8, seed=3, device="cpu",
                        policy_kwargs=policy_kwargs(ppo, (72.0, 48.0)))
    policy = model.policy
    policy.sparse_head = False  # the dense path: sb3-contrib's numbers bit for bit
    original = MaskableCategoricalDistribution(policy.action_dist.action_dim)
    ours = policy.action_dist
    obs, _ = env.reset(seed=4)
    for step in range(20):
        masks = env.action_masks()[None]
        batch = obs_as_tensor({k: v[None] for k, v in obs.items()}, "cpu")
        results = []
        for dist in (original, ours):
            policy.action_dist = dist
            torch.manual_seed(step)
            with torch.no_grad():
                results.append((*policy(batch, deterministic=step % 5 == 4, action_masks=masks),
                                torch.get_rng_state()))
        assert all(torch.equal(a, b) for a, b in zip(*results))
        obs, _, term, trunc, _ = env.step(int(results[1][0][0]))
        if term or trunc:
            obs, _ = env.reset(seed=step)


def _learned(policy: str, original: bool) -> Any:
    """A MaskablePPO of the ``policy`` (the config's name) after two rollouts of 64 steps and their updates;
    ``original`` swaps sb3-contrib's own distribution back in before learning; the ``mlp`` policy takes its dense
    path (``sparse_head = False``), sb3-contrib's numbers bit for bit."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from battleline.env.battle_env import BattleEnv
    from battleline.training.config import PPOConfig
    from battleline.training.train import policy_class, policy_kwargs

    ppo = PPOConfig(policy=policy, embed_dim=16, net_arch=[32, 32], attention_heads=2)
    env = DummyVecEnv([lambda: BattleEnv("skirmish_line", opponent="random") for _ in range(2)])
    model = MaskablePPO(policy_class(ppo), env, n_steps=32, batch_size=32, n_epochs=2, seed=7, device="cpu",
                        policy_kwargs=policy_kwargs(ppo, (72.0, 48.0)))
    assert isinstance(model.policy.action_dist, ExactMaskableCategoricalDistribution)
    model.policy.sparse_head = False
    if original:
        model.policy.action_dist = MaskableCategoricalDistribution(model.policy.action_dist.action_dim)
    model.learn(128)
    return model


@pytest.mark.parametrize("policy", ["mlp", "unit_pairs", "factored"])
def test_same_seed_same_actions_losses_and_parameters_as_sb3_contrib(policy: str) -> None:
    ours, theirs = _learned(policy, original=False), _learned(policy, original=True)
    assert isinstance(ours.policy, MaskedMultiInputPolicy)
    assert np.array_equal(ours.rollout_buffer.actions, theirs.rollout_buffer.actions)
    assert np.array_equal(ours.rollout_buffer.log_probs, theirs.rollout_buffer.log_probs)
    assert ours.logger.name_to_value == theirs.logger.name_to_value  # losses, KL, clip fraction
    assert ours.logger.name_to_value["train/n_updates"] == 4
    state, other = ours.policy.state_dict(), theirs.policy.state_dict()
    assert state.keys() == other.keys() and all(torch.equal(state[k], other[k]) for k in state)
