"""The environments' fast observation, mask and info code gives exactly what the straightforward code gives.

:class:`ReferenceObserver` below is the element-by-element implementation the environments used before
(``Observer.units`` writing each feature into a numpy row, ``global_features`` likewise, ``ActionCodec.mask``
encoding each legal action with per-call closures), kept here only as the reference. Random masked episodes of
``pitched_battle``, ``siege`` and ``skirmish_line`` (and a VP-shaped one, and the AEC environment) compare every
observation array bit for bit (same dtype, same bytes: a -0.0 differs from 0.0), every mask, reward and info.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from battleline.env.aec_env import BattleAECEnv
from battleline.env.battle_env import BattleEnv, outcome_reward
from battleline.env.encoding import (
    _DEPLOY_INDEX,
    _MOVE_INDEX,
    _PURSUE_INDEX,
    _REACT_INDEX,
    CAST_BOUND,
    CAST_OPTIONS,
    CAST_SPELLS,
    DISPEL_OPTIONS,
    ActionCodec,
    _cast_option,
    mirror_pose,
)
from battleline.env.observation import (
    FEAT_HIGH,
    GLOBAL_FEATURES,
    N_GLOBAL_FEAT,
    N_UNIT_FEAT,
    UNIT_FEATURES,
    Observer,
    _magic_queue,
)
from battleline.env.rules import magic, victory
from battleline.env.rules.actions import MOVE_OPTIONS, PURSUIT_CHOICES, REACTIONS, Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.deployment import N_SLOTS
from battleline.env.rules.spells import SPELLS
from battleline.env.rules.state import SIDES
from battleline.env.siege_encoding import ORDERS, SiegeActionCodec

_U = {name: k for k, name in enumerate(UNIT_FEATURES)}
_G = {name: k for k, name in enumerate(GLOBAL_FEATURES)}
_PROFILE = ("M", "WS", "BS", "S", "T", "W", "I", "A", "Ld")
_FLAGS = ("charged", "declared_charge", "moved", "marched", "shot")


def _side_units(battle: Battle, side: int) -> list[int]:
    return [u.uid for u in battle.state.units if u.side == side]


class ReferenceObserver:
    """The previous observation code, element by element (see the module docstring)."""

    def __init__(self, codec: ActionCodec) -> None:
        self.codec = codec
        self.n = codec.n

    def units(self, battle: Battle, player: int) -> np.ndarray:
        s = battle.state
        out = np.zeros((2 * self.n, N_UNIT_FEAT), dtype=np.float32)
        engaged = {e.attacker for e in s.engagements} | {e.defender for e in s.engagements}
        pending = battle.pending
        charger = s.queue["charges"][-1]["charger"] if pending.kind == "react" else None
        m = _magic_queue(battle)
        stopped = set(m["stopped"]) if m else set()
        spell_target = m["pending"]["target"] if m and m.get("pending") else None
        spells_on: dict[tuple[int, bool], int] = {}
        for e in s.effects:
            t, c = e.get("target"), e.get("caster")
            if isinstance(t, int) and 0 <= t < len(s.units):
                caster_side = s.units[c].side if isinstance(c, int) and 0 <= c < len(s.units) else e.get("side")
                key = (t, caster_side == s.units[t].side)
                spells_on[key] = spells_on.get(key, 0) + 1
        for block, side in ((0, player), (1, 1 - player)):
            for slot, uid in enumerate(_side_units(battle, side)):
                u = s.units[uid]
                row = out[block * self.n + slot]
                x, y, facing = mirror_pose(u.x, u.y, u.facing, player, s.table_w, s.table_h)
                rad = math.radians(facing)
                row[_U["present"]] = 1.0
                row[_U["alive"]] = float(u.alive)
                row[_U["own"]] = float(block == 0)
                row[_U["deployed"]] = float(u.deployed)
                row[_U["removed"]] = float(u.removed)
                if u.deployed:
                    row[_U["x"]] = x / s.table_w
                    row[_U["y"]] = y / s.table_h
                    row[_U["sin_facing"]] = math.sin(rad)
                    row[_U["cos_facing"]] = math.cos(rad)
                row[_U["width"]] = u.width / 24.0
                row[_U["depth"]] = u.depth / 24.0
                row[_U["files"]] = u.files / 10.0
                row[_U["ranks"]] = u.ranks / 10.0
                row[_U["models_frac"]] = u.models / max(1, u.start_models)
                row[_U["models"]] = u.models / 50.0
                row[_U["wounds"]] = u.wounds_taken / max(1, u.profile.W)
                for name in _PROFILE:
                    row[_U[name]] = getattr(u.profile, name) / 10.0
                row[_U["armour"]] = (7 - u.armour_save) / 6.0
                row[_U["points"]] = u.points / 1000.0
                row[_U["fleeing"]] = float(u.fleeing)
                row[_U["engaged"]] = float(uid in engaged)
                for flag in _FLAGS:
                    row[_U[flag]] = float(bool(u.flags.get(flag)))
                row[_U["has_missile"]] = float(u.missile is not None)
                row[_U["character"]] = float(u.character)
                row[_U["general"]] = float(u.general)
                row[_U["standard"]] = float(u.standard)
                row[_U["musician"]] = float(u.musician)
                row[_U["champion"]] = float(u.champion)
                row[_U["pending"]] = float(pending.unit == uid)
                row[_U["charging_now"]] = float(charger == uid)
                row[_U[f"type_{u.troop_type}"]] = 1.0
                row[_U["wizard_level"]] = u.wizard_level / 4.0
                for k, sid in enumerate(u.spells[:CAST_SPELLS]):
                    spell = SPELLS.get(sid)
                    if spell is not None:
                        row[_U[f"spell_cv_{k}"]] = spell.cv / 12.0
                        row[_U[f"spell_hostile_{k}"]] = float(spell.hostile)
                row[_U["bound_items"]] = len(u.bound_spells) / CAST_BOUND
                row[_U["dispel_scrolls"]] = u.dispel_scrolls / 2.0
                row[_U["cast_stopped"]] = float(uid in stopped)
                row[_U["friendly_spells"]] = spells_on.get((uid, True), 0) / 4.0
                row[_U["enemy_spells"]] = spells_on.get((uid, False), 0) / 4.0
                row[_U["spell_target"]] = float(spell_target == uid)
        np.clip(out, -1.0, FEAT_HIGH, out=out)
        return out

    def global_features(self, battle: Battle, player: int) -> np.ndarray:
        s = battle.state
        out = np.zeros(N_GLOBAL_FEAT, dtype=np.float32)
        pending = battle.pending
        out[_G["turn"]] = s.turn / max(1, s.max_turns)
        out[_G[f"phase_{s.phase}"]] = 1.0
        out[_G[f"pending_{pending.kind}"]] = 1.0
        out[_G["my_decision"]] = float(pending.player == player)
        in_game = s.phase != "deployment"
        out[_G["my_turn"]] = float(in_game and s.active == player)
        out[_G["went_first"]] = float(in_game and s.first_player == player)
        vp = [sum(part.values()) for part in victory.breakdown(battle)]
        out[_G["vp_for"]] = vp[player] / s.points_limit
        out[_G["vp_against"]] = vp[1 - player] / s.points_limit
        alive = [0, 0]
        for u in s.units:
            if u.alive:
                alive[u.side] += 1
        out[_G["units_for"]] = alive[player] / self.n
        out[_G["units_against"]] = alive[1 - player] / self.n
        out[_G["power_pool"]] = magic.power_pool(s, player) / magic.MAX_POOL
        out[_G["dispel_pool"]] = magic.dispel_pool(s, player) / magic.MAX_POOL
        m = _magic_queue(battle)
        if m:
            out[_G["power_left"]] = m["power"] / magic.MAX_POOL
            out[_G["dispel_left"]] = m["dispel"] / magic.MAX_POOL
            pend = m.get("pending")
            if pend:
                out[_G["cast_total"]] = pend["total"] / 24.0
                spell = SPELLS.get(pend["spell"])
                out[_G["cast_cv"]] = spell.cv / 12.0 if spell is not None else 0.0
        np.clip(out, -1.0, FEAT_HIGH, out=out)
        return out

    def mask(self, battle: Battle, player: int) -> np.ndarray:
        codec = self.codec
        out = np.zeros(codec.size, dtype=bool)
        out[0] = True
        if battle.is_over or battle.pending.player != player:
            return out
        own, enemy = _side_units(battle, player), _side_units(battle, 1 - player)
        own_map, enemy_map = {u: i for i, u in enumerate(own)}, {u: j for j, u in enumerate(enemy)}
        for a in battle.legal_actions():
            out[self._encode(a, player, own_map, enemy_map, battle)] = True
        return out

    def _encode(self, action: Action, player: int, own: dict[int, int], enemy: dict[int, int], battle: Battle) -> int:
        codec = self.codec
        if isinstance(codec, SiegeActionCodec):
            for o, (kind, prefix) in enumerate(ORDERS):
                if action.kind == kind and action.option is not None and action.option.startswith(prefix):
                    ids = [e.id for e in battle.state.castle]
                    eid = action.option[len(prefix):]
                    return codec.siege + (own[action.unit] * codec.elements + ids.index(eid)) * len(ORDERS) + o
        if action.kind == "end_phase":
            return 0
        L, n = codec.layout, codec.n
        kind, option = action.kind, action.option
        if kind == "move" and option == "join":
            return L.join + own[action.unit] * n + own[action.target]
        if kind == "move" and option == "leave":
            return L.leave + own[action.unit]
        if kind == "challenge":
            return L.challenge + own[action.unit] * n + enemy[action.target]
        if kind in ("accept", "refuse"):
            return (L.accept if kind == "accept" else L.refuse) + own[action.unit]
        if kind == "move":
            return L.move + own[action.unit] * len(MOVE_OPTIONS) + _MOVE_INDEX[option]
        if kind == "deploy":
            return L.deploy + own[action.unit] * N_SLOTS + _DEPLOY_INDEX[option]
        if kind == "charge":
            return L.charge + own[action.unit] * n + enemy[action.target]
        if kind == "react":
            return L.react + enemy[action.target] * len(REACTIONS) + _REACT_INDEX[option]
        if kind == "shoot" and option == "breath":
            return L.breathe + own[action.unit] * n + enemy[action.target]
        if kind == "shoot":
            return L.shoot + own[action.unit] * n + enemy[action.target]
        if kind == "pursue":
            return L.pursue + own[action.unit] * len(PURSUIT_CHOICES) + _PURSUE_INDEX[option]
        if kind == "cast":
            target = own[action.target] if action.target in own else n + enemy[action.target]
            return L.cast + (own[action.unit] * CAST_OPTIONS + _cast_option(action, battle)) * 2 * n + target
        if kind == "dispel":
            return L.dispel + (DISPEL_OPTIONS - 1 if option == "scroll" else int(option or 0) - 1)
        if kind == "swap":
            return L.swap + own[action.unit] * n + own[action.target]
        if kind == "order":
            return L.order + own[action.unit]
        raise AssertionError(f"no reference encoding of {action}")

    def observe(self, battle: Battle, player: int) -> dict[str, np.ndarray]:
        return {
            "units": self.units(battle, player),
            "globals": self.global_features(battle, player),
            "action_mask": self.mask(battle, player).astype(np.int8),
        }


def assert_same_array(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Same dtype, shape and bytes (so -0.0 and 0.0, or two NaN payloads, count as different)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.array_equal(got, want), f"{what}: values differ at {np.argwhere(got != want)[:5].tolist()}"
    assert got.tobytes() == want.tobytes(), f"{what}: same values but different bits (signed zeros)"


def assert_same_observation(obs: dict[str, np.ndarray], ref: ReferenceObserver, battle: Battle, player: int,
                            what: str) -> None:
    want = ref.observe(battle, player)
    for key, value in want.items():
        assert_same_array(obs[key], value, f"{what} {key}")


def reference_info(env: BattleEnv, mask: np.ndarray) -> dict[str, Any]:
    """The info keys of every BattleEnv step, as the previous code built them."""
    battle = env.battle
    assert battle is not None
    return {
        "legal_count": int(mask.sum()),
        "illegal": False,
        "illegal_count": 0,
        "learner_side": SIDES[env.learner],
        "opponent": env.opponent_name,
        "turn": battle.state.turn,
        "pending": battle.pending.kind,
    }


def vp_difference(battle: Battle, learner: int) -> float:
    vp = [sum(p.values()) for p in victory.breakdown(battle)]
    return (vp[learner] - vp[1 - learner]) / battle.state.points_limit


@pytest.mark.parametrize(("scenario", "seed", "steps", "shaping"), [
    ("pitched_battle", 3, 260, 0.0),
    ("siege", 11, 220, 0.0),
    ("skirmish_line", 13, 220, 0.0),
    ("pitched_battle", 5, 160, 0.5),
])
def test_battle_env_matches_reference(scenario: str, seed: int, steps: int, shaping: float) -> None:
    """Every observation, mask, reward and info of random masked episodes equals the reference's, bit for bit."""
    env = BattleEnv(scenario, opponent="random", reward_shaping=shaping)
    ref = ReferenceObserver(env.codec)
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    assert_same_observation(obs, ref, env.battle, env.learner, "reset")
    potential = vp_difference(env.battle, env.learner) if shaping else 0.0
    episodes = 1
    for k in range(steps):
        mask = env.action_masks()
        assert_same_array(mask, ref.mask(env.battle, env.learner), f"step {k} action_masks")
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        battle = env.battle
        assert_same_observation(obs, ref, battle, env.learner, f"step {k}")
        want = reference_info(env, obs["action_mask"].astype(bool))
        want_reward = 0.0
        if shaping:
            now = vp_difference(battle, env.learner)
            want_reward += shaping * (now - potential)
            potential = now
        if term:
            winner = battle.result["winner"]
            want_reward += outcome_reward(winner, SIDES[env.learner])
            vp = battle.result["vp"]
            me, them = SIDES[env.learner], SIDES[1 - env.learner]
            want.update(winner=winner, vp=dict(vp), margin=vp[me] - vp[them], is_success=winner == me)
        assert info == want and type(info["legal_count"]) is int
        assert type(reward) is float and reward == want_reward, (reward, want_reward)
        if term or trunc:
            obs, info = env.reset(seed=seed + k + 1)
            assert_same_observation(obs, ref, env.battle, env.learner, f"reset after step {k}")
            potential = vp_difference(env.battle, env.learner) if shaping else 0.0
            episodes += 1
    assert episodes >= 2, "the episodes should include a reset"


@pytest.mark.parametrize(("scenario", "seed", "decisions"), [("pitched_battle", 23, 300), ("siege", 29, 200)])
def test_aec_env_matches_reference(scenario: str, seed: int, decisions: int) -> None:
    """Both agents' observations at every decision of a random masked AEC game equal the reference's."""
    env = BattleAECEnv(scenario)
    ref = ReferenceObserver(env.codec)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    done = 0
    while done < decisions:
        for player, agent in enumerate(SIDES):
            assert_same_observation(env.observe(agent), ref, env.battle, player, f"decision {done} {agent}")
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(None)
            if not env.agents:
                env.reset(seed=seed + done)
            continue
        legal = len(env.battle.legal_actions())
        assert env.infos[agent]["legal_count"] == legal
        env.step(int(rng.choice(np.flatnonzero(env.observe(agent)["action_mask"]))))
        done += 1


def test_one_observer_across_battles_and_edits() -> None:
    """The observer's kept tables never leak between battles, players, or edits made between two calls."""
    one = Battle.from_scenario("pitched_battle", seed=1)
    two = Battle.from_scenario("skirmish_line", seed=2)
    n = max(sum(u.side == s for u in b.state.units) for b in (one, two) for s in (0, 1))
    codec = ActionCodec(n)
    observer, ref = Observer(codec), ReferenceObserver(codec)
    for battle in (one, two, one, two):  # skirmish_line fields fewer units: its unfilled slots must be zeros
        for player in (0, 1, 0):
            assert_same_array(observer.units(battle, player), ref.units(battle, player), "units")
    while not all(u.deployed for u in one.state.units) and not one.is_over:
        one.apply(one.legal_actions()[0])
    u = next(u for u in one.state.units if u.deployed and u.side == 0)
    table = observer.units(one, 0)
    table[:] = 5.0  # the caller's copy: the observer's own table is untouched
    edits: list[tuple[str, Any]] = [("x", 0.0), ("x", -0.0), ("y", -0.0), ("y", 0.0), ("x", 30.0), ("y", 20.0)]
    for name, value in edits:
        setattr(u, name, value)
        assert_same_array(observer.units(one, 0), ref.units(one, 0), f"units after {name} = {value!r}")
    in_place: dict[str, Callable[[], Any]] = {  # one at a time: each alone must show
        "profile": lambda: setattr(u.profile, "T", u.profile.T + 1),  # as spells and war machines do
        "flags": lambda: u.flags.update(moved=True),
        "spells": lambda: u.spells.append(next(iter(SPELLS))),
        "bound spells": lambda: u.bound_spells.append({"name": "x", "spell": next(iter(SPELLS)), "power": 1}),
        "models": lambda: setattr(u, "models", u.models - 1),
    }
    for name, edit in in_place.items():
        edit()
        for player in (0, 1):
            assert_same_array(observer.units(one, player), ref.units(one, player), f"units after an edit of {name}")
    u.x = 0.0
    observer.units(one, 0)
    u.x = -0.0  # equal to 0.0, yet its row differs in the sign bit
    got, want = observer.units(one, 0), ref.units(one, 0)
    assert np.signbit(want[[v.uid for v in one.state.units if v.side == 0].index(u.uid), UNIT_FEATURES.index("x")])
    assert_same_array(got, want, "units at x = -0.0")


def test_one_codec_across_battles_and_slot_layouts() -> None:
    """The codec's kept action indices (by action object and by fields, per slot layout) never leak between battles
    (a cast's index follows its caster's spells, drawn for each battle), slot layouts or players: one codec playing
    three battles in turns masks as the reference."""
    battles = [Battle.from_scenario("pitched_battle", seed=3), Battle.from_scenario("pitched_battle", seed=8),
               Battle.from_scenario("skirmish_line", seed=4)]
    n = max(sum(u.side == s for u in b.state.units) for b in battles for s in (0, 1))
    codec = ActionCodec(n)
    ref = ReferenceObserver(codec)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(250):
        for battle in battles:
            if battle.is_over:
                continue
            for player in (0, 1):
                mask = codec.mask(battle, player)
                assert np.array_equal(mask, ref.mask(battle, player)), f"mask of player {player} at step {battle.state.step}"
                checked += int(mask.sum())
            legal = battle.legal_actions()
            battle.apply(legal[int(rng.integers(len(legal)))])
    assert checked > 1000  # the masks held many allowed indices, deployments, moves and casts among them
