"""The factored policy's masks against the engine's legal set on random states.

``python -m benchmarks.factored_masks --states 10000 --seed 0 --out benchmarks/results/factored_masks.json``

States come from random legal play (uniform over ``battle.legal_actions()``) through several scenarios in
turn (``--scenarios``, default :data:`SCENARIOS`: ``pitched_battle`` with a random army list per side and
game, ``skirmish_line``, ``pitched_battle_t9a``, ``siege``, ``gate_assault``); every decision of either side
is one state, seen by the deciding side. For each state (:func:`check_state`):

* the unit, kind and target masks (:func:`training.factored.head_masks`) compose, over every
  (unit, kind, target) they allow, to exactly the (unit, kind, target) of ``battle.legal_actions()`` read from
  the actions' own fields (:func:`action_factors`, not the factor table), their flat indices are exactly the
  encoded legal actions, and each decodes to an action of ``battle.legal_actions()``;
* a randomly initialised :class:`training.factored.FactoredPolicy` gives every legal index a positive
  probability and every other index zero, its flat probabilities sum to 1, and each equals
  p(unit) · p(kind | unit) · p(target | unit, kind) of its heads (largest difference reported).

The JSON report gives the command, the states per scenario, how many states allowed each kind of order
(so the rare ones, ``cast``, ``react``, ``dispel``, ``challenge``, the siege orders, are seen to be covered),
the failures (none expected; the command exits 1 if any) and the seconds.
"""

from __future__ import annotations

import json
import random
import shlex
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

SCENARIOS = ("pitched_battle", "skirmish_line", "pitched_battle_t9a", "siege", "gate_assault")
"""The scenarios the states are drawn from, in turn."""
MAX_DECISIONS = 3000
"""Decisions after which a random game is abandoned for a new one (random play can dawdle)."""


@dataclass
class MaskReport:
    """What :func:`check_states` found.

    Attributes:
        states: states checked per scenario.
        kinds: states in which each kind (:data:`training.factored.KINDS` name, siege kinds too) had a legal order.
        failures: one line per failed check (the scenario, the game seed, the decision, what differed).
        max_product_error: the largest |flat probability − product of the head probabilities|.
        seconds: wall-clock seconds.
    """

    states: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    max_product_error: float = 0.0
    seconds: float = 0.0


def random_states(scenario: str, count: int, seed: int) -> Iterator[tuple[Any, int, int]]:
    """``count`` states of random legal play of ``scenario``: (battle at the state, game seed, decision index).

    The battle object is the live game: use it before asking for the next state. ``pitched_battle``
    takes a random army list per side per game (from ``configs/armies``).
    """
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.config import list_armies, load_scenario

    lists = load_scenario(scenario).side("blue").placements is None
    armies = list_armies() if lists else []
    rng = random.Random(seed)
    done, game = 0, 0
    while done < count:
        game_seed = seed * 1000 + game
        game += 1
        armies_of = (rng.choice(armies), rng.choice(armies)) if lists else (None, None)
        battle = Battle.from_scenario(scenario, seed=game_seed, blue_army=armies_of[0], red_army=armies_of[1])
        decision = 0
        while not battle.is_over and decision < MAX_DECISIONS and done < count:
            yield battle, game_seed, decision
            done += 1
            decision += 1
            battle.apply(rng.choice(battle.legal_actions()))


def scenario_codec(scenario: str) -> Any:
    """The codec of ``scenario`` as the training env builds it (unit slots for every army list it may take)."""
    from battleline.env.battle_env import scenario_unit_slots
    from battleline.env.rules.config import list_armies, load_scenario
    from battleline.env.siege_encoding import castle_elements, make_codec

    lists = list(list_armies()) if load_scenario(scenario).side("blue").placements is None else None
    return make_codec(scenario_unit_slots(scenario, lists, lists), castle_elements(scenario))


def action_factors(action: Any, battle: Any, player: int, codec: Any, own: dict[int, int],
                   enemy: dict[int, int]) -> tuple[int, str, int]:
    """(unit, kind name, target) of an engine action, read from its fields, independently of the factor table.

    Unit: the own slot of ``action.unit``, or ``n`` ("global") for ``end_phase``, ``react`` and ``dispel``.
    Target: the token slot of ``action.target`` (own slot, or ``n`` + enemy slot) for unit-target kinds; the option
    number for ``deploy``, ``move``, ``pursue``, ``dispel`` and the siege orders (the castle element); else 0.
    """
    from battleline.env.encoding import _cast_option
    from battleline.env.rules.actions import MOVE_OPTIONS, PURSUIT_CHOICES
    from battleline.env.siege_encoding import SiegeActionCodec

    n, kind, option = codec.n, action.kind, action.option
    if kind == "end_phase":
        return n, "end_phase", 0
    if kind == "react":
        return n, f"react_{option}", n + enemy[action.target]
    if kind == "dispel":
        return n, "dispel", 12 if option == "scroll" else int(option) - 1
    unit = own[action.unit]
    order = SiegeActionCodec._order(action) if isinstance(codec, SiegeActionCodec) else None
    if order is not None:
        return unit, f"siege_{order[0]}", [e.id for e in battle.state.castle].index(order[1])
    if kind == "move" and option == "join":
        return unit, "join", own[action.target]
    if kind == "move" and option == "leave":
        return unit, "leave", 0
    if kind == "move":
        return unit, "move", MOVE_OPTIONS.index(option)
    if kind == "deploy":
        return unit, "deploy", int(option)
    if kind == "pursue":
        return unit, "pursue", PURSUIT_CHOICES.index(option)
    if kind in ("accept", "refuse", "order"):
        return unit, kind, 0
    if kind == "swap":
        return unit, "swap", own[action.target]
    if kind == "cast":
        target = own[action.target] if action.target in own else n + enemy[action.target]
        return unit, f"cast_{_cast_option(action, battle)}", target
    if kind == "shoot" and option == "breath":
        return unit, "breathe", n + enemy[action.target]
    return unit, kind, n + enemy[action.target]  # charge, shoot, challenge


def check_state(table: Any, codec: Any, battle: Any, player: int) -> tuple[np.ndarray, list[str]]:
    """The flat mask of ``player`` (bool (size,)) and what differs between the heads' masks and the legal set.

    The heads' set is every (unit, kind, target) that the unit, kind and target masks (derived from the flat
    mask by the table) all allow. It must equal the legal actions' (unit, kind, target) read from the actions
    themselves (:func:`action_factors`); its flat indices must equal the legal actions encoded one by one, and
    each must decode to a legal action.
    """
    import torch

    from battleline.training.factored import head_masks

    legal = battle.legal_actions()
    own, enemy = codec.slots(battle, player)
    own_map, enemy_map = {u: i for i, u in enumerate(own)}, {u: j for j, u in enumerate(enemy)}
    legal_set = {codec._encode(a, player, own_map, enemy_map, battle) for a in legal}
    engine = {action_factors(a, battle, player, codec, own_map, enemy_map) for a in legal}
    mask = np.zeros(codec.size, dtype=bool)
    mask[list(legal_set)] = True
    unit_m, kind_m, target_m = (m[0].numpy() for m in head_masks(table, torch.as_tensor(mask)[None]))
    allowed = unit_m[:, None, None] & kind_m[:, :, None] & target_m
    triples = np.argwhere(allowed)
    heads = {(int(u), table.kinds[k], int(t)) for u, k, t in triples}
    problems = []
    if heads != engine:
        problems.append(f"heads allow {sorted(heads - engine)[:3]} not legal, miss {sorted(engine - heads)[:3]}")
    inverse = np.full(int(np.prod(table.grid)), -1, dtype=np.int64)
    inverse[table.dense] = np.arange(table.size)
    flat = inverse[np.ravel_multi_index(triples.T, table.grid)] if len(triples) else np.zeros(0, dtype=np.int64)
    if (flat < 0).any():
        problems.append(f"{int((flat < 0).sum())} allowed (unit, kind, target) name no flat index")
    if set(flat[flat >= 0].tolist()) != legal_set:
        problems.append("the heads' flat indices are not the encoded legal actions")
    legal_actions = set(legal)
    for index in flat[flat >= 0].tolist():
        action = codec.decode(index, battle, player)
        if action not in legal_actions:
            problems.append(f"index {index} ({codec.describe(index)}) decodes to {action}, not a legal action")
            break
    return mask, problems


def check_probabilities(policy: Any, observations: list[dict[str, np.ndarray]], masks: np.ndarray) -> tuple[list[int], float]:
    """(positions in the batch whose flat distribution is not positive exactly on the mask or does not sum to 1,
    largest |flat probability − product of the head probabilities|) for ``policy`` (a FactoredPolicy)."""
    import torch

    head = policy.action_net
    table = head.table
    batch = {k: torch.as_tensor(np.stack([o[k] for o in observations])) for k in observations[0]}
    with torch.no_grad():
        features = policy.extract_features(batch)
        probs = policy.get_distribution(batch).distribution.probs.double()
        unit_lp, kind_lp, target_lp, _ = head.head_log_probs(features)
    u, k, t = (torch.as_tensor(a) for a in (table.unit, table.kind, table.target))
    b = torch.arange(probs.shape[0])[:, None]
    product = (unit_lp.double()[b, u] + kind_lp.double()[b, u, k] + target_lp.double()[b, u, k, t]).exp()
    legal = torch.as_tensor(masks)
    error = float((probs - torch.where(legal, product, torch.zeros_like(product))).abs().max())
    bad = ((probs > 0) != legal).any(dim=1) | ((probs.sum(dim=1) - 1).abs() > 1e-5)
    return torch.nonzero(bad).flatten().tolist(), error


def check_states(states: int, seed: int = 0, scenarios: tuple[str, ...] = SCENARIOS, batch: int = 256) -> MaskReport:
    """Check ``states`` random states, split evenly over ``scenarios`` (module docstring)."""
    import torch
    from gymnasium.spaces import Discrete

    from battleline.env.observation import Observer
    from battleline.training.factored import FactoredPolicy, factor_table

    report = MaskReport()
    t0 = time.perf_counter()
    per = [states // len(scenarios) + (i < states % len(scenarios)) for i in range(len(scenarios))]
    for scenario, count in zip(scenarios, per):
        codec = scenario_codec(scenario)
        table = factor_table(codec)
        observer = Observer(codec)
        torch.manual_seed(seed)
        policy = FactoredPolicy(observer.space(), Discrete(codec.size),
                                lambda _: 3e-4, embed_dim=16, attention_heads=2)
        policy.set_training_mode(False)
        pending: list[tuple[dict[str, np.ndarray], np.ndarray, str]] = []
        for battle, game_seed, decision in random_states(scenario, count, seed):
            player = battle.pending.player
            mask, problems = check_state(table, codec, battle, player)
            at = f"{scenario} seed {game_seed} decision {decision}"
            report.failures.extend(f"{at}: {p}" for p in problems)
            report.states[scenario] += 1
            for kind in {table.kinds[k] for k in table.kind[mask]}:
                report.kinds[kind] += 1
            pending.append((observer.observe(battle, player, mask), mask, at))
            if len(pending) == batch:
                _flush(report, policy, pending)
        if pending:
            _flush(report, policy, pending)
    report.seconds = time.perf_counter() - t0
    return report


def _flush(report: MaskReport, policy: Any, pending: list[tuple[dict[str, np.ndarray], np.ndarray, str]]) -> None:
    """Check the probabilities of the ``pending`` (observation, mask, where) states into ``report``; empty the list."""
    bad, error = check_probabilities(policy, [p[0] for p in pending], np.stack([p[1] for p in pending]))
    report.max_product_error = max(report.max_product_error, error)
    report.failures.extend(f"{pending[i][2]}: the policy's probabilities are not positive exactly on the legal set"
                           for i in bad)
    pending.clear()


def main(argv: list[str] | None = None) -> int:
    """Run the check and write the JSON report; 1 when any state failed."""
    from battleline.training.cli_common import OneLineArgumentParser

    parser = OneLineArgumentParser(prog="python -m benchmarks.factored_masks", description=__doc__.splitlines()[0])
    parser.add_argument("--states", type=int, default=10_000, help="random states in all (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random play and the policy's weights")
    parser.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), help="scenarios, states split evenly")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/factored_masks.json"))
    args = parser.parse_args(argv)
    if args.states < 1:
        parser.error(f"--states must be at least 1, got {args.states}")
    report = check_states(args.states, args.seed, tuple(args.scenarios))
    data = {
        "command": "python -m benchmarks.factored_masks " + shlex.join(sys.argv[1:] if argv is None else argv),
        "states": sum(report.states.values()), "states_by_scenario": dict(report.states),
        "states_with_kind": dict(sorted(report.kinds.items())), "failures": report.failures[:50],
        "failure_count": len(report.failures), "max_product_error": report.max_product_error,
        "seconds": round(report.seconds, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{data['states']} states, {len(report.failures)} failures, largest |flat - product| "
          f"{report.max_product_error:.2e}, {report.seconds:.0f} s -> {args.out}")
    return 1 if report.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
