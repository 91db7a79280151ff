"""The unit-pair policy (training/unit_pairs.py): geometry, the logit layout against the codec, training and saving."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from battleline.env.battle_env import BattleEnv
from battleline.env.encoding import CAST_OPTIONS, ActionCodec
from battleline.env.rules.actions import MOVE_OPTIONS, REACTIONS
from battleline.training.config import load_training_config
from battleline.training.unit_pairs import POSE_FEATURES, UnitPairActionHead, pair_geometry


def _pose(x: float, y: float, facing: float, deployed: float = 1.0) -> list[float]:
    r = math.radians(facing)
    return [x, y, math.sin(r), math.cos(r), deployed, 1.0, 1.0]


def test_pair_geometry_in_each_units_frame() -> None:
    # on a 72" x 48" table: unit 0 at (36", 24") faces +y; unit 1 stands 24" ahead of it, facing it;
    # unit 2 stands 12" to unit 0's right (+x, as unit 0 faces +y), facing +x; unit 3 is not deployed
    poses = torch.tensor([[_pose(0.5, 0.5, 90), _pose(0.5, 1.0, 270), _pose(36 / 72 + 12 / 72, 0.5, 0),
                           _pose(0.1, 0.1, 0, deployed=0.0)]])
    g = pair_geometry(poses, 72.0, 48.0)
    assert g.shape == (1, 4, 4, 8)
    ahead_i, left_i, ahead_j, left_j, dist, cos_rel, sin_rel, valid = g[0, 0, 1].tolist()
    assert (ahead_i, left_i, ahead_j, left_j) == pytest.approx((1.0, 0.0, 1.0, 0.0), abs=1e-6)
    assert (dist, cos_rel, sin_rel, valid) == pytest.approx((1.0, -1.0, 0.0, 1.0), abs=1e-6)
    # unit 2 is half a unit (12") to unit 0's right, so its "left" offset is -0.5
    ahead_i, left_i, ahead_j, left_j = g[0, 0, 2, :4].tolist()
    assert (ahead_i, left_i) == pytest.approx((0.0, -0.5), abs=1e-6)
    assert (ahead_j, left_j) == pytest.approx((-0.5, 0.0), abs=1e-6)  # unit 0 is 12" behind unit 2
    assert g[0, 0, 2, 5:7].tolist() == pytest.approx([0.0, -1.0], abs=1e-6)  # +x is 90 degrees clockwise of +y
    assert torch.count_nonzero(g[0, 3]) == 0 and torch.count_nonzero(g[0, :, 3]) == 0  # undeployed: no geometry


def _latent(n: int, d: int, changed: int | None) -> torch.Tensor:
    """Zero embeddings and poses, except unit row ``changed`` (0..2n-1), which gets a fixed random embedding."""
    h = torch.zeros(1, 2 * n, d)
    if changed is not None:
        h[0, changed] = torch.randn(d, generator=torch.Generator().manual_seed(changed))
    g = torch.zeros(1, d)
    poses = torch.zeros(1, 2 * n * len(POSE_FEATURES))
    return torch.cat([h.flatten(1), g, poses], dim=1)


def _changed(n: int, row: int) -> set[int]:
    torch.manual_seed(0)
    head = UnitPairActionHead(n, 8, 72.0, 48.0)
    for layer in head.output_layers():  # non-zero biases and weights everywhere
        torch.nn.init.normal_(layer.weight)
        torch.nn.init.normal_(layer.bias)
    with torch.no_grad():
        base, moved = head(_latent(n, 8, None)), head(_latent(n, 8, row))
    assert base.shape == (1, ActionCodec(n).size)
    return set(torch.nonzero(base[0] != moved[0]).flatten().tolist())


def _block(codec: ActionCodec, name: str, changed: set[int]) -> set[int]:
    """The indices of ``changed`` in block ``name``, relative to the block start."""
    start = getattr(codec.layout, name)
    return {k - start for k in changed if codec.block_of(k) == name}


def test_logits_of_an_own_unit_sit_at_its_codec_indices() -> None:
    n, i = 4, 2
    codec = ActionCodec(n)
    changed = _changed(n, i)
    moves = len(MOVE_OPTIONS)
    assert _block(codec, "move", changed) == {i * moves + o for o in range(moves)}
    assert _block(codec, "charge", changed) == {i * n + j for j in range(n)}
    assert _block(codec, "shoot", changed) == {i * n + j for j in range(n)}
    assert _block(codec, "pursue", changed) == {i * 2, i * 2 + 1}
    assert _block(codec, "leave", changed) == {i} and _block(codec, "order", changed) == {i}
    # own unit i as the actor of a join (i * n + j) or as the character joined to (a * n + i)
    assert _block(codec, "join", changed) == {i * n + j for j in range(n)} | {a * n + i for a in range(n)}
    # a caster's options at every target, and every caster's options at target slot i
    cast = _block(codec, "cast", changed)
    assert {(i * CAST_OPTIONS + o) * 2 * n + t for o in range(CAST_OPTIONS) for t in range(2 * n)} <= cast
    assert {(a * CAST_OPTIONS + o) * 2 * n + i for a in range(n) for o in range(CAST_OPTIONS)} <= cast
    assert not _block(codec, "react", changed) and 0 not in changed  # end phase is global
    assert not {k for k in changed if codec.block_of(k) == "dispel"}


def test_logits_of_an_enemy_unit_sit_at_its_codec_indices() -> None:
    n, j = 4, 1
    codec = ActionCodec(n)
    changed = _changed(n, n + j)
    assert _block(codec, "charge", changed) == {i * n + j for i in range(n)}
    assert _block(codec, "breathe", changed) == {i * n + j for i in range(n)}
    assert _block(codec, "challenge", changed) == {i * n + j for i in range(n)}
    assert _block(codec, "react", changed) == {j * len(REACTIONS) + r for r in range(len(REACTIONS))}
    assert _block(codec, "cast", changed) == {(i * CAST_OPTIONS + o) * 2 * n + n + j
                                              for i in range(n) for o in range(CAST_OPTIONS)}
    for block in ("move", "deploy", "join", "swap", "leave", "order", "pursue"):
        assert not _block(codec, block, changed), block


@pytest.fixture(scope="module")
def model() -> object:
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    from battleline.training.train import policy_class, policy_kwargs

    ppo = load_training_config("quick", {"ppo": {"policy": "unit_pairs", "embed_dim": 16, "net_arch": [32]}}).ppo
    env = DummyVecEnv([lambda: BattleEnv(scenario="skirmish_line", opponent="random")])
    torch.manual_seed(0)
    return MaskablePPO(policy_class(ppo), env, n_steps=64, batch_size=32, n_epochs=1,
                       policy_kwargs=policy_kwargs(ppo, (72.0, 48.0)), seed=0, device="cpu")


def test_unit_pair_policy_trains_acts_legally_and_reloads(model: object, tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from battleline.training.unit_pairs import UnitPairPolicy

    assert isinstance(model.policy, UnitPairPolicy)  # type: ignore[attr-defined]
    before = [p.detach().clone() for p in model.policy.action_net.parameters()]  # type: ignore[attr-defined]
    model.learn(64)  # type: ignore[attr-defined]
    after = list(model.policy.action_net.parameters())  # type: ignore[attr-defined]
    assert any(not torch.equal(a, b) for a, b in zip(before, after))  # the head is in the optimiser
    env = BattleEnv(scenario="skirmish_line", opponent="random")
    obs, _ = env.reset(seed=3)
    for _ in range(30):
        mask = env.action_masks()
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)  # type: ignore[attr-defined]
        assert mask[int(action)]
        obs, _, done, _, _ = env.step(int(action))
        if done:
            break
    model.save(tmp_path / "m.zip")  # type: ignore[attr-defined]
    again = MaskablePPO.load(tmp_path / "m.zip", device="cpu")
    tensors = {k: torch.as_tensor(v[None]) for k, v in obs.items()}
    with torch.no_grad():
        a = model.policy.get_distribution(tensors).distribution.logits  # type: ignore[attr-defined]
        b = again.policy.get_distribution(tensors).distribution.logits
        value = model.policy.predict_values(tensors).numpy()  # type: ignore[attr-defined]
    assert torch.allclose(a, b)
    assert value.shape == (1, 1) and np.isfinite(value).all()


def test_unknown_policy_is_a_config_error() -> None:
    from battleline.training.config import ConfigError

    with pytest.raises(ConfigError, match="ppo.policy"):
        load_training_config("quick", {"ppo": {"policy": "transformer"}})
