"""Tests of the environments: action codec, observations, BattleEnv, BattleAECEnv, registration.

The exact-mask test walks more than 10,000 decision states of random masked play
(pitched battles with every army list and skirmish lines) and checks at each one
that the mask allows exactly the encoded legal actions.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import battleline  # noqa: F401 - registers the gymnasium ids
from battleline.env.aec_env import BattleAECEnv
from battleline.env.battle_env import LOSS_REWARD, BattleEnv
from battleline.env.encoding import ActionCodec, mirror_pose
from battleline.env.observation import (
    GLOBAL_FEATURES,
    N_GLOBAL_FEAT,
    N_PLANES,
    N_UNIT_FEAT,
    PENDING_KINDS,
    TERRAIN_KINDS,
    UNIT_FEATURES,
    Observer,
)
from battleline.env.rules.actions import END_PHASE, MOVE_OPTIONS, Action, IllegalActionError
from battleline.env.rules.battle import Battle
from battleline.env.rules.deployment import N_SLOTS
from battleline.env.rules.state import PHASES, SIDES

SCENARIOS = ["pitched_battle", "skirmish_line", "siege"]
ARMIES = [
    "dwarfs_hold_warband",
    "dwarfs_iron_throng",
    "elves_kindred_host",
    "elves_wind_host",
    "men_knightly_order",
    "men_marcher_host",
    "orcs_boar_warband",
    "orcs_tusk_horde",
]


# ---------------------------------------------------------------------- helpers
def check_mask_exact(codec: ActionCodec, battle: Battle) -> np.ndarray:
    """Assert the bijection between legal actions and allowed indices; return the decider's mask."""
    player = battle.pending.player
    legal = battle.legal_actions()
    mask = codec.mask(battle, player)
    assert mask.dtype == bool and mask.shape == (codec.size,)
    assert mask[0], "end_phase must always be allowed"
    allowed = np.flatnonzero(mask)
    assert len(allowed) == len(legal) == len(set(legal))
    encoded = {codec.encode(a, battle, player) for a in legal}
    assert encoded == set(allowed.tolist())
    decoded = [codec.decode(i, battle, player) for i in allowed]
    assert set(decoded) == set(legal)
    other = codec.mask(battle, 1 - player)
    assert other.sum() == 1 and other[0], "the player who does not decide sees only the no-op"
    return mask


def mirrored(battle: Battle) -> Battle:
    """The same position with the sides swapped and the table rotated by 180°."""
    m = battle.clone()
    s = m.state
    W, H = s.table_w, s.table_h
    for u in s.units:
        u.side = 1 - u.side
        u.x, u.y, u.facing = mirror_pose(u.x, u.y, u.facing, 1, W, H)
    for t in s.terrain:
        t.polygon = [(W - x, H - y) for x, y in t.polygon]
    for e in s.castle:
        e.polygon = [(W - x, H - y) for x, y in e.polygon]
        e.defender = 1 - e.defender
        e.outward = (e.outward + 180.0) % 360.0
        e.controller = None if e.controller is None else 1 - e.controller
    s.active = 1 - s.active
    s.first_player = 1 - s.first_player
    s.captured_standards = list(reversed(s.captured_standards))
    q = s.queue
    if "deploy_next" in q:
        q["deploy_next"] = 1 - q["deploy_next"]
    if q.get("finished_first") is not None:
        q["finished_first"] = 1 - q["finished_first"]
    if "vanguard" in q:
        q["vanguard"]["next"] = 1 - q["vanguard"]["next"]
        q["vanguard"]["passed"] = [1 - side for side in q["vanguard"]["passed"]]
    m._legal_cache = None
    return m


def play_random(battle: Battle, rng: np.random.Generator, codec: ActionCodec, steps: int | None = None) -> None:
    """Masked random play (through the codec) for ``steps`` decisions or to the end."""
    k = 0
    while not battle.is_over and (steps is None or k < steps):
        p = battle.pending.player
        idx = rng.choice(np.flatnonzero(codec.mask(battle, p)))
        battle.apply(codec.decode(idx, battle, p))
        k += 1


def run_episode(env: BattleEnv, seed: int, policy_seed: int) -> list[tuple[Any, ...]]:
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    trace: list[tuple[Any, ...]] = [(obs, info)]
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, r, term, trunc, info = env.step(a)
        trace.append((a, obs, r, term, trunc, info))
        done = term or trunc
    return trace


def same(a: Any, b: Any) -> bool:
    return data_equivalence(a, b)


# ---------------------------------------------------------------------- codec
def test_codec_layout_and_round_trip() -> None:
    codec = ActionCodec(10)
    L = codec.layout
    assert codec.size == 1 + 10 * N_SLOTS + 10 * len(MOVE_OPTIONS) + 100 + 30 + 100 + 20 + 100 + 10 + 100 + 10 + 10 + 4400 + 13 + 100 + 100 + 10 == 5814
    assert (L.deploy, L.move, L.charge, L.react, L.shoot, L.pursue) == (1, 551, 711, 811, 841, 941)
    b = Battle.from_scenario("pitched_battle", seed=4)
    p = b.pending.player
    assert codec.encode(END_PHASE, b, p) == 0 and codec.decode(0, b, p) == END_PHASE
    first = [u.uid for u in b.state.units if u.side == p][0]
    assert codec.decode(L.deploy + 7, b, p) == Action("deploy", first, None, "7")
    with pytest.raises(ValueError, match="not a unit of player"):
        codec.encode(Action("deploy", first, None, "7"), b, 1 - p)
    with pytest.raises(ValueError, match="outside"):
        codec.decode(codec.size, b, p)
    with pytest.raises(ValueError, match="unit slots"):
        ActionCodec(2).mask(b, p)
    # Slots beyond a side's units decode to a clear error (skirmish: 3 units, 10 slots).
    sk = Battle.from_scenario("skirmish_line", seed=0)
    with pytest.raises(ValueError, match="slot 5"):
        codec.decode(L.move + 5 * len(MOVE_OPTIONS), sk, 0)
    assert codec.describe(L.charge + 2 * 10 + 5) == "charge own 2 -> enemy 5"


def test_mask_equals_legal_set_on_10000_states() -> None:
    """Random masked play over many battles; at every decision the mask is the legal set."""
    codec = ActionCodec(10)
    observer = Observer(codec, planes=False)
    space = observer.space()
    states = 0
    kinds: set[str] = set()
    seed = 0
    pitched = [("pitched_battle", a, b) for a, b in zip(ARMIES, ARMIES[3:] + ARMIES[:3])]
    while states < 10_000:
        seed += 1
        scenario, blue, red = pitched[seed % 8] if seed % 3 == 0 else ("skirmish_line", None, None)
        rng = np.random.default_rng(seed)
        battle = Battle.from_scenario(scenario, seed=seed, blue_army=blue, red_army=red)
        while not battle.is_over:
            mask = check_mask_exact(codec, battle)
            states += 1
            p = battle.pending.player
            kinds.add(battle.pending.kind)
            if states % 25 == 0:
                obs = observer.observe(battle, p, mask)
                assert space.contains(obs)
                assert not any(np.isnan(v).any() for v in obs.values())
            battle.apply(codec.decode(rng.choice(np.flatnonzero(mask)), battle, p))
        over = codec.mask(battle, 0)
        assert over.sum() == 1 and over[0]
    assert states >= 10_000, states
    assert kinds >= {"deploy", "charge", "react", "move", "shoot", "pursue"}


# ---------------------------------------------------------------------- observations
def test_observation_layout() -> None:
    assert N_UNIT_FEAT == len(UNIT_FEATURES) == 63
    assert N_GLOBAL_FEAT == len(GLOBAL_FEATURES) == 1 + len(PHASES) + len(PENDING_KINDS) + 13
    codec = ActionCodec(3)
    obs_ = Observer(codec, planes=True)
    b = Battle.from_scenario("skirmish_line", seed=2)
    o = obs_.observe(b, 0)
    assert set(o) == {"units", "globals", "planes", "action_mask"}
    assert o["units"].shape == (6, N_UNIT_FEAT) and o["units"].dtype == np.float32
    assert o["planes"].shape == (N_PLANES, 24, 36) and o["planes"].dtype == np.float32
    assert o["action_mask"].dtype == np.int8
    f = {n: k for k, n in enumerate(UNIT_FEATURES)}
    # Blue spearmen at (30, 18) facing 90 seen by blue; the same unit seen by red is mirrored.
    spear_b = o["units"][0]
    assert spear_b[f["own"]] == 1 and spear_b[f["x"]] == pytest.approx(30 / 72) and spear_b[f["y"]] == pytest.approx(18 / 48)
    assert spear_b[f["sin_facing"]] == pytest.approx(1.0)
    spear_r = obs_.observe(b, 1)["units"][3]
    assert spear_r[f["own"]] == 0 and spear_r[f["x"]] == pytest.approx(42 / 72) and spear_r[f["y"]] == pytest.approx(30 / 48)
    assert spear_r[f["sin_facing"]] == pytest.approx(-1.0)
    # The copse (x 62..68, y 20..28) is on blue's right and on red's left.
    woods = 2 + TERRAIN_KINDS.index("woods")
    assert o["planes"][woods][11:13, 31:33].min() == 1.0 and o["planes"][woods][:, :30].max() == 0.0
    red_woods = obs_.observe(b, 1)["planes"][woods]
    assert red_woods[11:13, 3:5].min() == 1.0 and red_woods[:, 6:].max() == 0.0
    assert o["planes"][0].sum() > 0 and o["planes"][1].sum() > 0


def test_magic_features_while_a_spell_awaits_a_dispel() -> None:
    """Wizards, spells, pools and the pending cast as the dispelling side sees them.

    Blue level-2 Fire wizard (uid 0) casts Fireball (CV 5, CORE.MAGIC.SPELL.FIRE.1) on 2 dice (2 + 3 = 5,
    CORE.MAGIC.CAST) at the orcs (uid 1); red's level-1 Goblin Shaman (uid 2) carries a Dispel Scroll.
    Pools: blue power 2 + 2 = 4 (CORE.MAGIC.POWER_DICE), 2 left after the cast; red dispel 2 + ⌈1/2⌉ = 3
    (CORE.MAGIC.DISPEL_DICE).
    """
    from tests.setups import battle, placement

    fireball = "CORE.MAGIC.SPELL.FIRE.1"
    b = battle(
        [placement("battle_wizard", 30, 20, 90, models=1, files=1, options=["level_2"], lore="fire", spells=[fireball])],
        [placement("orc_warriors", 30, 32, 270),
         placement("goblin_shaman", 62, 44, 270, models=1, files=1, options=["dispel_scroll"], spells=[fireball])],
        dice=[2, 3], phase="magic",
    )
    b.apply(Action("cast", 0, 1, f"{fireball}:2"))
    assert b.pending.kind == "dispel" and b.pending.player == 1
    observer = Observer(ActionCodec(2))
    f = {n: k for k, n in enumerate(UNIT_FEATURES)}
    g = {n: k for k, n in enumerate(GLOBAL_FEATURES)}
    red = observer.observe(b, 1)
    orcs, shaman, wizard = red["units"][0], red["units"][1], red["units"][2]  # own slots 0, 1; enemy slot 0
    assert wizard[f["wizard_level"]] == pytest.approx(2 / 4)
    assert wizard[f["spell_cv_0"]] == pytest.approx(5 / 12) and wizard[f["spell_hostile_0"]] == 1.0
    assert wizard[f["spell_cv_1"]] == 0.0 and wizard[f["pending"]] == 1.0  # the caster
    assert orcs[f["spell_target"]] == 1.0 and orcs[f["wizard_level"]] == 0.0 and shaman[f["spell_target"]] == 0.0
    assert shaman[f["wizard_level"]] == pytest.approx(1 / 4) and shaman[f["dispel_scrolls"]] == pytest.approx(1 / 2)
    gl = red["globals"]
    assert gl[g["power_pool"]] == pytest.approx(3 / 12) and gl[g["dispel_pool"]] == pytest.approx(3 / 12)
    assert gl[g["power_left"]] == pytest.approx(2 / 12) and gl[g["dispel_left"]] == pytest.approx(3 / 12)
    assert gl[g["cast_total"]] == pytest.approx(5 / 24) and gl[g["cast_cv"]] == pytest.approx(5 / 12)
    blue = observer.observe(b, 0)["globals"]
    assert blue[g["power_pool"]] == pytest.approx(4 / 12) and blue[g["dispel_pool"]] == pytest.approx(3 / 12)
    b.apply(END_PHASE)  # no dispel: the spell resolves, nothing awaits a dispel any more
    after = observer.observe(b, 1)
    assert after["globals"][g["cast_total"]] == 0.0 and after["units"][:, f["spell_target"]].max() == 0.0


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_observation_is_the_same_once_mirrored(scenario: str) -> None:
    """A position and its mirror (sides swapped, table rotated) look the same to the matching side."""
    from battleline.env.siege_encoding import castle_elements, make_codec

    codec = make_codec(10, castle_elements(scenario))  # a siege's codec has the castle block
    observer = Observer(codec, planes=True)
    rng = np.random.default_rng(11)
    checked = 0
    for seed in range(3):
        battle = Battle.from_scenario(scenario, seed=seed)
        while not battle.is_over:
            m = mirrored(battle)
            # CORE.VP.QUARTERS counts a centre exactly on x = 36 or y = 24 in the upper quarter, which
            # is not symmetric under rotation; compare the VP features only away from those lines.
            s = battle.state
            on_line = any(u.alive and (u.x == s.table_w / 2 or u.y == s.table_h / 2) for u in s.units)
            keep = np.ones(N_GLOBAL_FEAT, dtype=bool)
            if on_line:
                keep[[GLOBAL_FEATURES.index("vp_for"), GLOBAL_FEATURES.index("vp_against")]] = False
            for p in (0, 1):
                a, b = observer.observe(battle, p), observer.observe(m, 1 - p)
                for key in ("units", "planes"):
                    np.testing.assert_allclose(a[key], b[key], atol=1e-6, err_msg=f"{key} for player {p}")
                np.testing.assert_allclose(a["globals"][keep], b["globals"][keep], atol=1e-6)
                np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
            checked += 1
            play_random(battle, rng, codec, steps=int(rng.integers(1, 8)))
    assert checked > 20


# ---------------------------------------------------------------------- BattleEnv
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_gymnasium_and_sb3_check_env_with_planes_and_render(scenario: str) -> None:
    """The checkers with the non-default observation (``planes``) and rendering; the defaults: test_checkers.py."""
    from gymnasium.utils.env_checker import check_env as gym_check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gym_check_env(BattleEnv(scenario, planes=True), skip_render_check=True)
        sb3_check_env(BattleEnv(scenario, planes=True), warn=False)
        env_id = f"battleline/{''.join(w.capitalize() for w in scenario.split('_'))}-v0"
        made = gym.make(env_id, render_mode="rgb_array" if scenario == "skirmish_line" else None)
        gym_check_env(made.unwrapped, skip_render_check=scenario != "skirmish_line")


def test_single_agent_terminal_reward_once_and_info() -> None:
    env_ = BattleEnv("skirmish_line", opponent="random")
    outcomes = set()
    for seed in range(12):
        trace = run_episode(env_, seed, seed)
        rewards = [t[2] for t in trace[1:]]
        assert all(r == 0.0 for r in rewards[:-1])
        *_, (a, obs, r, term, trunc, info) = trace
        assert term and not trunc
        expected = 0.0 if info["winner"] == "draw" else (1.0 if info["winner"] == info["learner_side"] else -1.0)
        assert r == expected and info["is_success"] == (expected == 1.0)
        assert sum(1 for x in rewards if x != 0) == (0 if expected == 0 else 1)
        outcomes.add(expected)
        for step in trace[1:]:
            assert step[5]["legal_count"] == int(step[1]["action_mask"].sum()) >= 1
    assert {1.0, -1.0} <= outcomes
    with pytest.raises(RuntimeError, match="reset"):
        env_.step(0)


def test_game_over_before_the_learner_decides() -> None:
    """If the rules end the game while the opponent plays, the mask allows only index 0, which collects the result."""
    env_ = BattleEnv("skirmish_line", learner_side="blue")
    env_.reset(seed=0)
    rng = np.random.default_rng(0)
    play_random(env_.battle, rng, env_.codec)  # both sides, to the end, behind the env's back
    obs = env_._observe()
    assert obs["action_mask"].sum() == 1 and obs["action_mask"][0] == 1
    _, r, term, trunc, info = env_.step(0)
    winner = env_.battle.result["winner"]
    assert term and not trunc and info["winner"] == winner
    assert r == (0.0 if winner == "draw" else (1.0 if winner == "blue" else -1.0))
    env_.reset(seed=0)  # the same finished game, but an index the mask forbids: the learner loses it
    play_random(env_.battle, np.random.default_rng(0), env_.codec)
    env_._observe()
    _, r, term, _, info = env_.step(1)
    assert (r, term, info["illegal"], info["winner"]) == (-1.0, True, True, "red")


def test_reward_shaping_sums_to_vp_difference() -> None:
    """The shaping terms telescope: they sum to w · (final − initial VP difference) / points limit."""
    env_ = BattleEnv("skirmish_line", opponent="line_advance", reward_shaping=0.5, learner_side="blue")
    env_.reset(seed=3)
    start = env_._vp_potential()
    trace = run_episode(env_, 3, 3)
    info = trace[-1][5]
    terminal = 0.0 if info["winner"] == "draw" else (1.0 if info["is_success"] else -1.0)
    shaped = sum(t[2] for t in trace[1:]) - terminal
    assert shaped == pytest.approx(0.5 * (info["margin"] / 2000 - start))
    assert any(t[2] not in (0.0, terminal) for t in trace[1:])


def test_same_seed_same_episode_and_sides() -> None:
    for scenario in SCENARIOS:
        a = run_episode(BattleEnv(scenario, opponent="random"), 7, 1)
        b = run_episode(BattleEnv(scenario, opponent="random"), 7, 1)
        assert len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    sides = {BattleEnv("skirmish_line").reset(seed=s)[1]["learner_side"] for s in range(8)}
    assert sides == {"blue", "red"}
    assert BattleEnv("skirmish_line", learner_side="red").reset(seed=0)[1]["learner_side"] == "red"


def first_masked_out(obs: dict[str, np.ndarray]) -> int:
    """The lowest index the observation's action mask forbids."""
    return int(np.flatnonzero(obs["action_mask"] == 0)[0])


def test_illegal_action_loses_the_game_by_default(caplog: pytest.LogCaptureFixture) -> None:
    """PettingZoo's classic-games convention: terminated, the loss reward, info says why, a warning, battle unchanged."""
    env_ = BattleEnv("skirmish_line", learner_side="blue")
    assert env_.illegal_action == "lose"
    for bad in ("masked", "outside"):
        obs, _ = env_.reset(seed=0)
        index = first_masked_out(obs) if bad == "masked" else env_.codec.size
        before, actions = env_.battle.to_json(), len(env_.battle.actions)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="battleline.env.battle_env"):
            obs2, r, term, trunc, info = env_.step(index)
        assert (r, term, trunc) == (LOSS_REWARD, True, False) and LOSS_REWARD == -1.0
        assert info["illegal"] is True and info["illegal_count"] == 1
        assert info["illegal_reason"].startswith(f"action index {index} is not allowed now (")
        assert ("outside 0.." in info["illegal_reason"]) == (bad == "outside")
        assert info["winner"] == "red" and info["is_success"] is False
        assert info["vp"] == env_.battle.result["vp"] and info["margin"] == info["vp"]["blue"] - info["vp"]["red"]
        assert env_.battle.to_json() == before and len(env_.battle.actions) == actions and same(obs, obs2)
        warned = [rec for rec in caplog.records if rec.name == "battleline.env.battle_env"]
        assert len(warned) == 1 and warned[0].levelno == logging.WARNING
        assert f"loss for blue: action index {index} is not allowed" in warned[0].getMessage()
        with pytest.raises(RuntimeError, match="reset"):
            env_.step(0)


def test_illegal_action_lost_as_red_gives_red_the_loss() -> None:
    env_ = BattleEnv("skirmish_line", learner_side="red", reward_shaping=0.5)
    obs, _ = env_.reset(seed=1)
    _, r, term, _, info = env_.step(first_masked_out(obs))
    assert (r, term, info["winner"], info["learner_side"]) == (-1.0, True, "blue", "red")


def test_illegal_actions_raise_or_penalise() -> None:
    env_ = BattleEnv("skirmish_line", learner_side="blue", illegal_action="raise")
    obs, _ = env_.reset(seed=0)
    bad = first_masked_out(obs)
    before = env_.battle.to_json()
    with pytest.raises(IllegalActionError, match=f"action index {bad} is not allowed"):
        env_.step(bad)
    with pytest.raises(IllegalActionError, match="outside"):
        env_.step(env_.codec.size)
    assert env_.battle.to_json() == before
    env_.step(0)  # the episode goes on
    pen = BattleEnv("skirmish_line", learner_side="blue", illegal_action="penalise")
    obs, _ = pen.reset(seed=0)
    before = pen.battle.to_json()
    obs2, r, term, trunc, info = pen.step(bad)
    assert (r, term, trunc, info["illegal"], info["illegal_count"]) == (-1.0, False, False, True, 1)
    assert info["illegal_reason"].startswith(f"action index {bad} is not allowed now")
    assert pen.battle.to_json() == before and same(obs, obs2)


def test_penalised_illegal_steps_count_towards_max_steps() -> None:
    """A learner that only picks masked-out indices under "penalise" is still truncated at max_steps
    (it was not: the illegal step did not count, so such an episode never ended)."""
    pen = BattleEnv("skirmish_line", learner_side="blue", illegal_action="penalise", max_steps=2)
    obs, _ = pen.reset(seed=0)
    bad = first_masked_out(obs)
    before = pen.battle.to_json()
    assert pen.step(bad)[1:4] == (-1.0, False, False)
    assert pen.step(bad)[1:4] == (-1.0, False, True)
    assert pen.battle.to_json() == before
    with pytest.raises(RuntimeError, match="call reset"):
        pen.step(bad)


def test_opponents_and_set_opponent() -> None:
    calls: list[int] = []

    def policy(obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        calls.append(int(mask.sum()))
        assert obs["action_mask"].sum() == mask.sum()
        return int(np.flatnonzero(mask)[-1])

    class Counting:
        name = "counting"

        def __init__(self) -> None:
            self.resets = 0

        def reset(self, battle: Battle, side: int) -> None:
            self.resets += 1

        def act(self, battle: Battle) -> Action:
            return END_PHASE

    env_ = BattleEnv("skirmish_line", opponent=policy, learner_side="red")
    run_episode(env_, 0, 0)
    assert calls and env_.opponent_name == "policy"
    agent = Counting()
    env_.unwrapped.set_opponent(agent)
    for seed in range(2):
        info = run_episode(env_, seed, seed)[-1][5]
        assert info["opponent"] == "counting"
    assert agent.resets == 2
    env_.set_opponent("pincers")
    assert env_.reset(seed=0)[1]["opponent"] == "pincers"
    with pytest.raises(TypeError):
        env_.set_opponent(42)


def test_armies_sampled_and_render() -> None:
    env_ = BattleEnv("pitched_battle", blue_army=["dwarfs_iron_throng", "elves_wind_host"], red_army=["orcs_boar_warband"],
                     render_mode="rgb_array", max_steps=3)
    factions = set()
    for seed in range(6):
        env_.reset(seed=seed)
        factions.add(env_.battle.state.units[0].faction)
        assert env_.battle.state.units[-1].faction == "orcs"
    assert factions == {"dwarfs", "elves"}
    trace = run_episode(env_, 0, 0)
    assert len(trace) == 4 and trace[-1][4] and not trace[-1][3]  # truncated after 3 learner steps
    img = env_.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3


def test_registered_ids() -> None:
    ids = [k for k in gym.registry if k.startswith("battleline/")]
    assert {"battleline/Battle-v0", "battleline/PitchedBattle-v0", "battleline/SkirmishLine-v0", "battleline/Siege-v0",
            "battleline/GateAssault-v0"} <= set(ids)
    e = gym.make("battleline/Battle-v0", scenario="skirmish_line", opponent="line_advance")
    obs, info = e.reset(seed=0)
    assert e.unwrapped.codec.n == 3 and info["opponent"] == "line_advance"
    assert gym.make("battleline/PitchedBattle-v0").unwrapped.scenario == "pitched_battle"


# ---------------------------------------------------------------------- AEC
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_pettingzoo_api_and_seed(scenario: str) -> None:
    from pettingzoo.test import api_test, seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(BattleAECEnv(scenario), num_cycles=1000)
        seed_test(lambda: BattleAECEnv(scenario), num_cycles=200)


def test_aec_terminal_rewards_exactly_once() -> None:
    env_ = BattleAECEnv("skirmish_line")
    for seed in range(6):
        env_.reset(seed=seed)
        rng = np.random.default_rng(seed)
        seen: dict[str, list[float]] = {a: [] for a in SIDES}
        finished: dict[str, int] = dict.fromkeys(SIDES, 0)
        for agent in env_.agent_iter():
            obs, r, term, trunc, info = env_.last()
            seen[agent].append(r)
            if term or trunc:
                finished[agent] += 1
                env_.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.sum() == info["legal_count"] >= 1
            assert np.isfinite(obs["units"]).all()
            env_.step(int(rng.choice(np.flatnonzero(mask))))
        assert finished == {"blue": 1, "red": 1} and env_.agents == []
        winner = env_.battle.result["winner"]
        for agent in SIDES:
            expected = 0.0 if winner == "draw" else (1.0 if agent == winner else -1.0)
            assert seen[agent][-1] == expected and all(x == 0 for x in seen[agent][:-1])


def test_aec_illegal_action_raises_when_asked() -> None:
    env_ = BattleAECEnv("skirmish_line", illegal_action="raise")
    env_.reset(seed=0)
    obs = env_.observe(env_.agent_selection)
    other = "red" if env_.agent_selection == "blue" else "blue"
    assert env_.observe(other)["action_mask"].sum() == 1
    bad = first_masked_out(obs)
    with pytest.raises(IllegalActionError, match=f"action index {bad} is not allowed for {env_.agent_selection} now"):
        env_.step(bad)
    assert env_.battle.actions == []  # nothing was applied
    assert env_.terminations == {"blue": False, "red": False}


def test_aec_illegal_action_loses_the_game_by_default(caplog: pytest.LogCaptureFixture) -> None:
    """The offender gets −1, the other +1, both are terminated, infos say why, a warning, the battle is unchanged."""
    env_ = BattleAECEnv("skirmish_line")
    assert env_.illegal_action == "lose"
    env_.reset(seed=0)
    env_.step(int(np.flatnonzero(env_.observe(env_.agent_selection)["action_mask"])[0]))  # one legal decision first
    offender = env_.agent_selection
    other = "red" if offender == "blue" else "blue"
    bad = first_masked_out(env_.observe(offender))
    before, actions = env_.battle.to_json(), len(env_.battle.actions)
    with caplog.at_level(logging.WARNING, logger="battleline.env.aec_env"):
        env_.step(bad)
    assert env_.battle.to_json() == before and len(env_.battle.actions) == actions and not env_.battle.is_over
    assert env_.terminations == {"blue": True, "red": True} and env_.truncations == {"blue": False, "red": False}
    assert env_.rewards == {offender: -1.0, other: 1.0}
    for agent in SIDES:
        info = env_.infos[agent]
        assert (info["illegal"], info["illegal_agent"], info["winner"]) == (True, offender, other)
        assert info["illegal_reason"].startswith(f"action index {bad} is not allowed for {offender} now (")
    warned = [rec for rec in caplog.records if rec.name == "battleline.env.aec_env"]
    assert len(warned) == 1 and f"loss for {offender}: action index {bad}" in warned[0].getMessage()
    seen = {}
    for agent in env_.agent_iter():
        _, r, term, trunc, _ = env_.last()
        seen[agent] = (r, term, trunc)
        env_.step(None)
    assert seen == {offender: (-1.0, True, False), other: (1.0, True, False)} and env_.agents == []


# ---------------------------------------------------------------------- misuse
def test_one_army_id_is_one_list_not_its_characters() -> None:
    e = gym.make("battleline/PitchedBattle-v0", blue_army="men_marcher_host")
    assert e.unwrapped.blue_armies == ["men_marcher_host"]
    aec = BattleAECEnv("skirmish_line", red_army="men_marcher_host")
    assert aec.red_armies == ["men_marcher_host"]
    with pytest.raises(TypeError, match="blue_army must be an army id or a list of army ids, got 3"):
        BattleEnv("skirmish_line", blue_army=3)


@pytest.mark.parametrize("action", [1.7, "0", True, np.float64(0.0), np.array([0])])
def test_step_rejects_non_integer_actions(action: Any) -> None:
    env_ = BattleEnv("skirmish_line", learner_side="blue")
    env_.reset(seed=0)
    before = env_.battle.to_json()
    with pytest.raises(TypeError, match="action must be an integer index \\(int or numpy integer\\), got"):
        env_.step(action)
    assert env_.battle.to_json() == before
    aec = BattleAECEnv("skirmish_line")
    aec.reset(seed=0)
    with pytest.raises(TypeError, match="action must be an integer index"):
        aec.step(action)
    assert aec.battle.actions == []


def test_step_accepts_numpy_integers_and_0d_arrays() -> None:
    env_ = BattleEnv("skirmish_line", learner_side="blue")
    env_.reset(seed=0)
    env_.step(np.int32(0))
    env_.step(np.array(0, dtype=np.int64))
    assert len(env_.battle.actions) >= 2


def test_bad_env_arguments_name_the_allowed_values() -> None:
    env_ = BattleEnv("skirmish_line")
    with pytest.raises(ValueError, match="options\\['learner_side'\\] must be 'random', 'blue' or 'red', got 'green'"):
        env_.reset(options={"learner_side": "green"})
    for cls in (BattleEnv, BattleAECEnv):
        with pytest.raises(ValueError, match="unit_slots must be at least 1 .*got 0"):
            cls("skirmish_line", unit_slots=0)
        for bad in (0, -1):
            with pytest.raises(ValueError, match=f"max_steps must be at least 1, got {bad}"):
                cls("skirmish_line", max_steps=bad)


def test_set_opponent_rejects_before_installing() -> None:
    env_ = BattleEnv("skirmish_line", opponent="random", learner_side="blue")
    env_.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'nobody'; known agents: random"):
        env_.set_opponent("nobody")
    assert env_.opponent_name == "random"
    for _ in range(3):
        env_.step(0)  # the old opponent still plays


def test_opponent_illegal_choice_abandons_the_episode() -> None:
    def bad(obs: dict[str, np.ndarray], mask: np.ndarray) -> int:
        return int(np.flatnonzero(~mask)[0])

    env_ = BattleEnv("skirmish_line", opponent=bad, learner_side="blue")
    env_.reset(seed=0)
    with pytest.raises(IllegalActionError, match="opponent 'bad': opponent policy chose index .* the episode is "
                                                  "abandoned: call reset\\(\\)"):
        for _ in range(10):
            env_.step(0)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="the episode was abandoned \\(the opponent 'bad' failed"):
            env_.step(0)
    env_.set_opponent("random")
    env_.reset(seed=0)
    env_.step(0)


def test_engine_rejects_non_actions_unchanged() -> None:
    battle = Battle.from_scenario("skirmish_line", seed=0)
    before = battle.to_json()
    for bad in (None, "end_phase"):
        with pytest.raises(IllegalActionError, match=f"not an action: {bad!r}"):
            battle.apply(bad)
    assert battle.to_json() == before


def test_aec_misuse_gives_clear_errors() -> None:
    env_ = BattleAECEnv("skirmish_line")
    with pytest.raises(RuntimeError, match="step\\(\\) before reset\\(\\): call reset\\(\\) first"):
        env_.step(0)
    with pytest.raises(RuntimeError, match="last\\(\\) before reset\\(\\)"):
        env_.last()
    with pytest.raises(RuntimeError, match="observe\\(\\) before reset\\(\\)"):
        env_.observe("blue")
    env_.reset(seed=0)
    with pytest.raises(ValueError, match="unknown agent 'green'; the agents are 'blue', 'red'"):
        env_.observe("green")
    for _agent in env_.agent_iter():
        _, _, term, trunc, _ = env_.last()
        env_.step(None if term or trunc else 0)
    assert env_.agents == []
    n = len(env_.battle.actions)
    for action in (0, None):
        with pytest.warns(UserWarning, match="step\\(\\) called after every agent is done .* the step is ignored"):
            env_.step(action)
    assert len(env_.battle.actions) == n
    with pytest.raises(RuntimeError, match="every agent is done \\(agents == \\[\\]\\): call reset\\(\\)"):
        env_.last()
