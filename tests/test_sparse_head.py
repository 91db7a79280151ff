"""training.masking's sparse action head: the same masked distribution as the dense (sb3-contrib) path, to rounding.

The sparse path computes logits, log-probabilities, entropies and draws over each batch's legal action indices
only; these tests hold it against the dense path (``policy.sparse_head = False``, sb3-contrib's numbers bit for
bit) on real ``pitched_battle`` states: log-probabilities, entropies, values and gradients to 1e-5, the draws'
frequencies, the deterministic action, a state with one legal action, and the dense fallbacks.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategorical

from battleline.training.masking import (
    LegalColumns,
    MaskedMultiInputPolicy,
    legal_columns,
    sparse_evaluate,
    sparse_log_probs,
    sparse_sample,
)

TOL = 1e-5


def _model(scenario: str = "pitched_battle", seed: int = 3) -> Any:
    """A MaskablePPO of the default ``mlp`` policy on ``scenario`` (fresh weights)."""
    from sb3_contrib import MaskablePPO

    from battleline.env.battle_env import BattleEnv
    from battleline.env.rules.battle import Battle
    from battleline.training.config import PPOConfig
    from battleline.training.train import policy_class, policy_kwargs

    ppo = PPOConfig()
    state = Battle.from_scenario(scenario, seed=0).state
    env = BattleEnv(scenario, opponent="random")
    return MaskablePPO(policy_class(ppo), env, n_steps=8, batch_size=8, seed=seed, device="cpu",
                       policy_kwargs=policy_kwargs(ppo, (float(state.table_w), float(state.table_h))))


def _states(model: Any, count: int, seed: int = 0) -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
    """``count`` real states of ``model``'s env under random play: (observations, float32 masks (count, n) as the
    rollout buffer holds them, int64 legal actions (count,) drawn uniformly)."""
    from stable_baselines3.common.utils import obs_as_tensor

    env = model.env.envs[0].unwrapped
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    observations, masks, actions = [], [], []
    for k in range(count):
        mask = env.action_masks()
        action = int(rng.choice(np.flatnonzero(mask)))
        observations.append(obs)
        masks.append(mask)
        actions.append(action)
        obs, _, term, trunc, _ = env.step(action)
        if term or trunc:
            obs, _ = env.reset(seed=seed + k + 1)
    batch = {key: np.stack([o[key] for o in observations]) for key in observations[0]}
    return (obs_as_tensor(batch, "cpu"), torch.as_tensor(np.stack(masks), dtype=torch.float32),
            torch.as_tensor(actions))


def _evaluate(policy: MaskedMultiInputPolicy, sparse: bool, obs: dict[str, torch.Tensor], actions: torch.Tensor,
              masks: torch.Tensor) -> tuple[list[torch.Tensor], dict[str, torch.Tensor]]:
    """``policy.evaluate_actions`` on one path: its (values, log-probs, entropies) and the gradients of a loss
    mixing all three (as PPO's), per parameter name."""
    policy.sparse_head = sparse
    policy.zero_grad(set_to_none=True)
    values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
    weights = torch.linspace(-1.0, 1.0, len(actions))
    (values.squeeze(1) * 0.5 + (log_prob * weights) - 0.01 * entropy).mean().backward()
    grads = {name: p.grad.clone() for name, p in policy.named_parameters() if p.grad is not None}
    return [values.detach(), log_prob.detach(), entropy.detach()], grads


@contextlib.contextmanager
def _head_weights(policy: MaskedMultiInputPolicy, std: float | None, seed: int = 0) -> Iterator[None]:
    """Within the block, the action head's weight and bias drawn from N(0, ``std``) (None: as they are)."""
    saved = [p.detach().clone() for p in policy.action_net.parameters()]
    generator = torch.Generator().manual_seed(seed)
    try:
        if std is not None:
            with torch.no_grad():
                for p in policy.action_net.parameters():
                    p.copy_(torch.randn(p.shape, generator=generator) * std)
        yield
    finally:
        with torch.no_grad():
            for p, value in zip(policy.action_net.parameters(), saved):
                p.copy_(value)


@pytest.fixture(scope="module")
def pitched() -> tuple[Any, tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]]:
    """A fresh pitched_battle model and 96 of its real states."""
    model = _model()
    return model, _states(model, 96)


def test_real_states_have_few_legal_actions(pitched: Any) -> None:
    _, (_, masks, _) = pitched
    counts = masks.sum(1)
    assert masks.shape[1] == 5814 and counts.min() >= 1 and counts.max() < 400


@pytest.mark.parametrize("std", [None, 1.0])
def test_evaluate_actions_and_gradients_equal_the_dense_path(pitched: Any, std: float | None) -> None:
    """Values, log-probabilities, entropies and every parameter's gradient to 1e-5, with the fresh head (nearly
    uniform) and a sharp one (N(0, 1) weights: some rows put almost all mass on one action)."""
    model, (obs, masks, actions) = pitched
    policy = model.policy
    try:
        with _head_weights(policy, std):
            dense, dense_grads = _evaluate(policy, False, obs, actions, masks)
            sparse, sparse_grads = _evaluate(policy, True, obs, actions, masks)
    finally:
        policy.sparse_head = True
    if std is not None:
        assert float(dense[2].min()) < 0.05  # some rows nearly deterministic
    for want, got in zip(dense, sparse):
        assert torch.allclose(want, got, rtol=TOL, atol=TOL)
    assert dense_grads.keys() == sparse_grads.keys()
    for name in dense_grads:
        assert torch.allclose(dense_grads[name], sparse_grads[name], rtol=TOL, atol=TOL), name
    illegal = masks == 0
    assert torch.all(sparse_grads["action_net.weight"][illegal.all(0)] == 0)  # never-legal rows get no gradient


def test_evaluate_matches_maskable_categorical_directly(pitched: Any) -> None:
    """The sparse functions against sb3-contrib's ``MaskableCategorical`` over the same logits."""
    model, (obs, masks, actions) = pitched
    policy = model.policy
    with torch.no_grad():
        latent_pi, _ = policy._latents(obs)
        latent_pi = latent_pi * 3.0
        want = MaskableCategorical(logits=policy.action_net(latent_pi))
        want.apply_masking(masks.numpy())
        legal = legal_columns(masks, 5814)
        got = sparse_evaluate(sparse_log_probs(latent_pi, policy.action_net, legal), legal, actions)
    assert got is not None
    assert torch.allclose(got[0], want.log_prob(actions), rtol=TOL, atol=TOL)
    assert torch.allclose(got[1], want.entropy(), rtol=TOL, atol=TOL)


def test_rollout_forward_gives_legal_actions_and_the_dense_log_probs(pitched: Any) -> None:
    model, (obs, masks, _) = pitched
    policy = model.policy
    bool_masks = masks.numpy().astype(bool)
    for batch in (1, 8):
        for start in range(0, 32, batch):
            part = {k: v[start:start + batch] for k, v in obs.items()}
            mask = bool_masks[start:start + batch]
            with torch.no_grad():
                actions, values, log_probs = policy(part, action_masks=mask)
                policy.sparse_head = False
                dense_values, dense_log_probs, _ = policy.evaluate_actions(part, actions, torch.as_tensor(mask))
                policy.sparse_head = True
            assert actions.dtype == torch.int64 and actions.shape == (batch,)
            assert mask[np.arange(batch), actions.numpy()].all()
            assert torch.equal(values, dense_values)
            assert torch.allclose(log_probs, dense_log_probs, rtol=TOL, atol=TOL)


def _chi_square(counts: np.ndarray, probs: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic of ``counts`` against ``probs`` (cells of expected count under 5 pooled) and its
    degrees of freedom."""
    expected = probs * counts.sum()
    big = expected >= 5
    observed = np.append(counts[big], counts[~big].sum())
    wanted = np.append(expected[big], expected[~big].sum())
    keep = wanted > 0
    stat = float((((observed - wanted) ** 2)[keep] / wanted[keep]).sum())
    return stat, int(keep.sum()) - 1


@pytest.mark.parametrize("index", [0, 5, 40])
def test_draws_follow_the_dense_probabilities(pitched: Any, index: int) -> None:
    """20,000 draws from one state (a batch of copies, the sparse :meth:`forward`) against the dense
    probabilities: Pearson's chi-square below its mean plus six standard deviations, and the statistic of a
    uniform draw over the legal actions far above it (the test tells the distributions apart)."""
    model, (obs, masks, _) = pitched
    policy = model.policy
    copies = 20_000
    part = {k: v[index:index + 1].expand(copies, *v.shape[1:]) for k, v in obs.items()}
    mask = np.repeat(masks[index:index + 1].numpy().astype(bool), copies, axis=0)
    with _head_weights(policy, 0.2, seed=index), torch.no_grad():  # far from uniform
        torch.manual_seed(index)
        actions, _, _ = policy(part, action_masks=mask)
        dense = MaskableCategorical(logits=policy.action_net(policy._latents(
            {k: v[index:index + 1] for k, v in obs.items()})[0]))
        dense.apply_masking(mask[:1])
    probs = dense.probs[0].double().numpy()
    counts = np.bincount(actions.numpy(), minlength=probs.size).astype(float)
    assert counts[probs == 0].sum() == 0
    stat, df = _chi_square(counts, probs)
    assert stat < df + 6 * math.sqrt(2 * df), (stat, df)
    legal = mask[0]
    uniform_stat, uniform_df = _chi_square(counts, legal / legal.sum())
    assert uniform_stat > uniform_df + 6 * math.sqrt(2 * uniform_df)


def test_deterministic_is_the_argmax_over_legal_actions(pitched: Any) -> None:
    model, (obs, masks, _) = pitched
    policy = model.policy
    bool_masks = masks.numpy().astype(bool)
    with torch.no_grad():
        actions, _, _ = policy(obs, deterministic=True, action_masks=bool_masks)
        logits = policy.action_net(policy._latents(obs)[0])
        want = torch.where(masks.bool(), logits, float("-inf")).argmax(1)
        predicted, _ = policy.predict({k: v.numpy() for k, v in obs.items()}, deterministic=True,
                                      action_masks=bool_masks)
    assert torch.equal(actions, want)
    assert np.array_equal(predicted, want.numpy())


def test_predict_draws_legal_actions_for_one_observation(pitched: Any) -> None:
    model, (obs, masks, _) = pitched
    single = {k: v[3].numpy() for k, v in obs.items()}
    mask = masks[3].numpy().astype(bool)
    for _ in range(20):
        action, _ = model.policy.predict(single, action_masks=mask)
        assert action.shape == () and mask[int(action)]


@pytest.mark.parametrize("mask_rows", [1, 2, 3])
def test_masks_with_another_number_of_rows_than_the_observations_are_refused(pitched: Any, mask_rows: int) -> None:
    """One mask row for two observations (or three for two) is an error on the dense path (the masks cannot take
    the logits' shape); the sparse path once applied the lone row to every observation, or drew one action per
    mask row. Both now refuse it."""
    model, (obs, masks, _) = pitched
    batch = {k: v[:2].numpy() for k, v in obs.items()}
    given = masks[:mask_rows].numpy().astype(bool)
    if mask_rows == 2:  # the right count is accepted: legal actions, one per observation
        actions, _ = model.policy.predict(batch, action_masks=given)
        assert actions.shape == (2,) and all(given[i, int(a)] for i, a in enumerate(actions))
        return
    with pytest.raises(ValueError, match=f"{mask_rows} row\\(s\\) of 5814 action indices but the observations 2"):
        model.policy.predict(batch, action_masks=given)
    with pytest.raises(ValueError, match="one mask per observation"):
        model.policy.evaluate_actions(obs_slice(obs, 2), torch.zeros(2, dtype=torch.long),
                                      torch.as_tensor(masks[:mask_rows]))
    model.policy.sparse_head = False
    try:
        with pytest.raises(RuntimeError, match="invalid for input of size"):
            model.policy.predict(batch, action_masks=given)
    finally:
        model.policy.sparse_head = True


def obs_slice(obs: dict[str, torch.Tensor], count: int) -> dict[str, torch.Tensor]:
    """The first ``count`` observations of a batch."""
    return {k: v[:count] for k, v in obs.items()}


def test_a_state_with_one_legal_action() -> None:
    head = torch.nn.Linear(4, 6)
    latent = torch.randn(3, 4)
    masks = np.zeros((3, 6), dtype=bool)
    masks[0, 2] = masks[1, 5] = masks[2, [1, 2, 3]] = True
    legal = legal_columns(masks, 6)
    assert legal is not None and legal.columns.tolist() == [1, 2, 3, 5]
    log_probs = sparse_log_probs(latent, head, legal)
    for _ in range(10):
        actions, chosen = sparse_sample(log_probs, legal)
        assert actions[:2].tolist() == [2, 5] and chosen[:2].tolist() == [0.0, 0.0]
        assert actions[2].item() in (1, 2, 3)
    log_prob, entropy = sparse_evaluate(log_probs, legal, torch.tensor([2, 5, 3]))
    assert log_prob[:2].tolist() == [0.0, 0.0] and entropy[:2].tolist() == [0.0, 0.0]
    want = MaskableCategorical(logits=head(latent))
    want.apply_masking(masks)
    assert torch.allclose(entropy, want.entropy(), atol=TOL) and entropy[2] > 0


def test_gradients_are_finite_with_masked_columns() -> None:
    """Entries of the batch's columns that a row masks (-inf log-probabilities) give no NaN gradients."""
    head = torch.nn.Linear(4, 6)
    latent = torch.randn(2, 4, requires_grad=True)
    masks = torch.tensor([[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]], dtype=torch.float32)
    legal = legal_columns(masks, 6)
    assert legal is not None and legal.legal is not None
    log_prob, entropy = sparse_evaluate(sparse_log_probs(latent, head, legal), legal, torch.tensor([1, 2]))
    (log_prob.sum() + entropy.sum()).backward()
    assert torch.isfinite(latent.grad).all() and torch.isfinite(head.weight.grad).all()
    assert torch.all(head.weight.grad[4:] == 0)


def test_legal_columns_from_arrays_and_tensors_agree() -> None:
    rng = np.random.default_rng(0)
    masks = rng.random((5, 50)) < 0.1
    masks[:, 7] = True
    for batch in (1, 5):
        a = legal_columns(masks[:batch], 50)
        b = legal_columns(torch.as_tensor(masks[:batch], dtype=torch.float32), 50)
        assert a is not None and b is not None
        assert torch.equal(a.columns, b.columns)
        assert torch.equal(a.columns, torch.as_tensor(np.flatnonzero(masks[:batch].any(0))))
        if batch == 1:
            assert a.legal is None and b.legal is None
        else:
            assert torch.equal(a.legal, b.legal)
    odd = torch.as_tensor(masks, dtype=torch.float32)
    odd[2, 3], odd[4, 11] = -1.0, float("nan")  # legal where non-zero, as sb3-contrib's bool cast reads them
    a, b = legal_columns(odd, 50), legal_columns(odd.bool(), 50)
    assert torch.equal(a.columns, b.columns) and torch.equal(a.legal, b.legal) and {3, 11} <= set(a.columns.tolist())
    same = np.repeat(masks[:1], 3, axis=0)
    assert legal_columns(same, 50).legal is None  # every column legal in every row: no per-row mask


def test_a_row_without_legal_actions_takes_the_dense_path(pitched: Any) -> None:
    """sb3-contrib draws uniformly among all indices there; the policy gives its numbers bit for bit."""
    model, (obs, masks, actions) = pitched
    policy = model.policy
    masks = masks[:4].clone()
    masks[1] = 0
    assert legal_columns(masks, 5814) is None and legal_columns(masks[1:2].numpy(), 5814) is None
    part = {k: v[:4] for k, v in obs.items()}
    with torch.no_grad():
        sparse = policy.evaluate_actions(part, actions[:4], masks)
        policy.sparse_head = False
        dense = policy.evaluate_actions(part, actions[:4], masks)
        policy.sparse_head = True
    assert all(torch.equal(a, b) for a, b in zip(sparse, dense))


def test_an_illegal_action_takes_the_dense_path(pitched: Any) -> None:
    model, (obs, masks, actions) = pitched
    policy = model.policy
    part = {k: v[:4] for k, v in obs.items()}
    actions = actions[:4].clone()
    actions[2] = int(torch.nonzero(masks[2] == 0)[0])
    legal = legal_columns(masks[:4], 5814)
    with torch.no_grad():
        assert sparse_evaluate(sparse_log_probs(policy._latents(part)[0], policy.action_net, legal), legal,
                               actions) is None
        sparse = policy.evaluate_actions(part, actions, masks[:4])
        policy.sparse_head = False
        dense = policy.evaluate_actions(part, actions, masks[:4])
        policy.sparse_head = True
    assert all(torch.equal(a, b) for a, b in zip(sparse, dense))
    assert float(sparse[1][2]) < -1e7


def test_sparse_sample_refuses_logits_that_are_not_finite() -> None:
    legal = LegalColumns(torch.tensor([0, 3]), None)
    with pytest.raises(RuntimeError, match="not finite"):
        sparse_sample(torch.tensor([[float("nan"), 0.0]]), legal)


def test_custom_heads_keep_the_dense_path() -> None:
    from battleline.training.config import PPOConfig
    from battleline.training.train import policy_class

    for name in ("unit_pairs", "factored"):
        assert issubclass(policy_class(PPOConfig(policy=name)), MaskedMultiInputPolicy)
    model = _model("skirmish_line")
    assert model.policy._sparse_action_net() is model.policy.action_net
    model.policy.action_net = torch.nn.Sequential(model.policy.action_net)
    assert model.policy._sparse_action_net() is None


def test_a_short_learn_on_the_sparse_path() -> None:
    """Two rollouts of 64 steps and their updates: finite losses and an entropy near the dense path's (the
    random streams differ, the scale does not)."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from battleline.env.battle_env import BattleEnv
    from battleline.training.config import PPOConfig
    from battleline.training.train import policy_class, policy_kwargs

    values = []
    for sparse in (True, False):
        ppo = PPOConfig(net_arch=[32, 32])
        env = DummyVecEnv([lambda: BattleEnv("skirmish_line", opponent="random") for _ in range(2)])
        model = MaskablePPO(policy_class(ppo), env, n_steps=32, batch_size=32, n_epochs=2, seed=7, device="cpu",
                            policy_kwargs=policy_kwargs(ppo, (72.0, 48.0)))
        model.policy.sparse_head = sparse
        model.learn(128)
        values.append(model.logger.name_to_value)
    sparse_log, dense_log = values
    assert sparse_log["train/n_updates"] == dense_log["train/n_updates"] == 4
    for key in ("train/entropy_loss", "train/policy_gradient_loss", "train/value_loss", "train/loss"):
        assert math.isfinite(sparse_log[key]), key
    assert abs(sparse_log["train/entropy_loss"] - dense_log["train/entropy_loss"]) < 0.2 * abs(
        dense_log["train/entropy_loss"])
