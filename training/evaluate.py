"""Evaluate a trained policy against opponents: win/draw/loss rates with Wilson 95% intervals.

``battleline evaluate --model runs/x/model.zip --opponents all-scripted --games 100``
plays, for each opponent, ``games`` battles split across the two seats (game
``g`` puts the model on blue when ``g`` is even); games ``2k`` and ``2k + 1``
share one dice seed, so every seed is played from both seats. The model plays
through :class:`agents.learned.PolicyAgent`, the exact action mask passed at
prediction; any index its mask forbids is counted as an illegal action (must be 0).

The same functions serve the evaluations logged during training
(:mod:`training.callbacks`), with the live model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from battleline.env.rules.battle import Battle
from battleline.env.rules.config import ConfigError, is_scenario, read_file_text
from battleline.env.rules.state import SIDES
from battleline.training.play import agent_seed, check_model_agents, make_agent, play_battle, require_policy_fits
from battleline.training.tournament import wilson_interval

KEY_RULES: dict[str, str] = {
    "CORE.CHARGE.DECLARE": "charges",
    "CORE.CHARGE.FAILED": "failed its charge against",
    "CORE.REACT.DECLARE": "reacts",
    "CORE.CC.BREAK_TEST": "break test",
    "CORE.CC.CHALLENGE.ISSUE": "issues a challenge to",
    "CORE.PSY.PANIC.TEST": "panic test",
}
"""Rule IDs shown in the key events of a battle (besides destructions and the result)."""


@dataclass
class GameRecord:
    """One evaluation game, from the evaluated agent's side.

    Attributes:
        opponent: the opponent's name.
        game: index of the game against this opponent.
        side: the evaluated agent's seat, "blue" or "red".
        seed: the battle's dice seed.
        winner: "blue", "red" or "draw".
        outcome: "win", "draw" or "loss".
        vp_for, vp_against: victory points (ints).
        turns: the game turn the battle ended on.
        battle: the finished battle (only with ``keep_battles``).
    """

    opponent: str
    game: int
    side: str
    seed: int
    winner: str
    outcome: str
    vp_for: int
    vp_against: int
    turns: int
    battle: Battle | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The record without the battle (JSON-able)."""
        return {k: v for k, v in self.__dict__.items() if k != "battle"}


def eval_seed(base_seed: int, opponent_index: int, game: int) -> int:
    """The dice seed of ``game`` against opponent ``opponent_index`` (shared by games 2k and 2k+1)."""
    ss = np.random.SeedSequence([int(base_seed), 0xE7A1, int(opponent_index), int(game) // 2])
    return int(ss.generate_state(1)[0] & 0x7FFFFFFF)


def play_evaluation(
    agent: Any,
    opponents: Sequence[str],
    games: int,
    scenario: str,
    seed: int = 0,
    blue_armies: Sequence[str] | None = None,
    red_armies: Sequence[str] | None = None,
    keep_battles: bool = False,
    on_game: Callable[[GameRecord], None] | None = None,
) -> list[GameRecord]:
    """Play ``games`` games against each opponent, both seats, and return one record per game.

    Args:
        agent: the evaluated agent (``reset``/``act``), reused for every game.
        opponents: opponent agent names (built fresh per game with :func:`make_agent`).
        games: games per opponent; even games put ``agent`` on blue.
        scenario: scenario name or YAML path.
        seed: base seed (see :func:`eval_seed`).
        blue_armies, red_armies: army lists drawn per game (by the game's seed) for each seat;
            None plays the scenario's own.
        keep_battles: keep each finished battle in its record.
        on_game: called after each game (progress reporting).
    """
    records = []
    for oi, opp in enumerate(opponents):
        for g in range(games):
            s = eval_seed(seed, oi, g)
            side = g % 2
            pick = np.random.default_rng(s)
            blue_army = blue_armies[int(pick.integers(len(blue_armies)))] if blue_armies else None
            red_army = red_armies[int(pick.integers(len(red_armies)))] if red_armies else None
            other = make_agent(opp, seed=agent_seed(s, 1 - side))
            blue, red = (agent, other) if side == 0 else (other, agent)
            battle = play_battle(scenario, blue, red, s, blue_army=blue_army, red_army=red_army)
            res = battle.result
            me, them = SIDES[side], SIDES[1 - side]
            winner = res["winner"]
            outcome = "draw" if winner == "draw" else ("win" if winner == me else "loss")
            rec = GameRecord(opp, g, me, s, winner, outcome, int(res["vp"][me]), int(res["vp"][them]),
                             int(res.get("turn", battle.state.turn)), battle if keep_battles else None)
            records.append(rec)
            if on_game is not None:
                on_game(rec)
    return records


def summarise(records: Sequence[GameRecord]) -> dict[str, dict[str, Any]]:
    """Per-opponent results (in first-seen order).

    Returns ``{opponent: {...}}`` with ``games``, ``wins``, ``draws``, ``losses``,
    ``win_rate``, ``draw_rate``, ``loss_rate`` (fractions), ``win_ci95``,
    ``draw_ci95``, ``loss_ci95`` ([low, high], Wilson), ``vp_diff`` (mean VP for
    − against), and ``by_seat`` {"blue"/"red": [wins, draws, losses]}.
    """
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        d = out.setdefault(r.opponent, {"games": 0, "wins": 0, "draws": 0, "losses": 0, "vp_sum": 0,
                                        "by_seat": {"blue": [0, 0, 0], "red": [0, 0, 0]}})
        d["games"] += 1
        key = {"win": "wins", "draw": "draws", "loss": "losses"}[r.outcome]
        d[key] += 1
        d["vp_sum"] += r.vp_for - r.vp_against
        d["by_seat"][r.side][("win", "draw", "loss").index(r.outcome)] += 1
    for d in out.values():
        n = d["games"]
        for key, rate in (("wins", "win"), ("draws", "draw"), ("losses", "loss")):
            d[f"{rate}_rate"] = d[key] / n
            d[f"{rate}_ci95"] = list(wilson_interval(d[key], n))
        d["vp_diff"] = d.pop("vp_sum") / n
    return out


def metadata_path(model_path: str | Path) -> Path:
    """Where the ``model.json`` of a model saved as ``model_path`` lies: beside it, ``run/model.zip`` → ``run/model.json``.

    Raises:
        ValueError: ``model_path`` has no file name (``''``, the current folder).
    """
    return Path(model_path).with_suffix(".json")


def model_metadata(model_path: str | Path) -> dict[str, Any]:
    """The ``model.json`` saved beside a trained ``model.zip`` ({} when there is none).

    Raises:
        ConfigError: the file cannot be read, is not a JSON object, or its ``scenario`` is not a
            scenario name or YAML path that exists (one line naming ``model.json`` and the field).
    """
    meta = metadata_path(model_path)
    if not meta.is_file():
        return {}
    try:
        data = json.loads(read_file_text(meta))
    except ValueError as exc:
        raise ConfigError(f"not valid JSON ({exc})", file=str(meta)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"expected a JSON object, got {type(data).__name__}", file=str(meta))
    scenario = data.get("scenario")
    if scenario is not None and not is_scenario(scenario):
        raise ConfigError(f"unknown scenario {scenario!r} (give the model's scenario with --scenario)",
                          file=str(meta), where="scenario")
    return data


def evaluate_model(
    model_path: str | Path,
    opponents: Sequence[str],
    games: int,
    scenario: str | None = None,
    seed: int = 0,
    deterministic: bool = True,
    on_game: Callable[[GameRecord], None] | None = None,
) -> dict[str, Any]:
    """Evaluate the saved model at ``model_path``.

    Args:
        scenario: None uses the scenario the model was trained on (``model.json``), else ``pitched_battle``.
        deterministic: the model plays its most likely allowed action (else it samples, seeded by ``seed``).

    Returns:
        ``{"model", "scenario", "games_per_opponent", "seed", "decisions", "illegal_actions",
        "opponents": summarise(...), "records": [GameRecord.to_dict()]}``.

    Raises:
        agents.learned.ModelLoadError: the model (or an opponent ``model:``) cannot be loaded, or
            cannot play the scenario (too few unit slots, no siege orders for its castle).
        UnknownAgentError: an opponent name is not registered.
        ConfigError: ``scenario`` is None and the ``model.json`` beside the model is damaged
            (:func:`model_metadata`).
    """
    from battleline.agents.learned import PolicyAgent

    scenario = scenario or model_metadata(model_path).get("scenario") or "pitched_battle"
    agent = PolicyAgent(model_path, deterministic=deterministic, seed=seed, name=f"model:{model_path}")
    require_policy_fits(agent, f"model:{model_path}", scenario)
    check_model_agents(scenario, opponents)  # an opponent model must fit the scenario too
    records = play_evaluation(agent, opponents, games, scenario, seed, on_game=on_game)
    return {
        "model": str(model_path),
        "scenario": scenario,
        "games_per_opponent": games,
        "seed": seed,
        "deterministic": deterministic,
        "decisions": agent.decisions,
        "illegal_actions": agent.illegal,
        "opponents": summarise(records),
        "records": [r.to_dict() for r in records],
    }


# ---------------------------------------------------------------------- pictures and key events of a battle
def deployment_battle(battle: Battle) -> Battle:
    """The battle as it stood when deployment ended, re-simulated from its scenario, seed and actions.

    A scenario without deployment (units placed) gives the opening position.
    """
    again = Battle.from_scenario(battle.scenario, seed=battle.seed)
    for action in battle.actions:
        if again.state.phase != "deployment" or again.is_over:
            break
        again.apply(action)
    return again


def _unit_label(battle: Battle, uid: Any) -> str:
    try:
        u = battle.unit(int(uid))
    except (TypeError, ValueError, KeyError, IndexError):
        return str(uid)
    return f"{u.name} ({SIDES[u.side]})"


def key_events(battle: Battle, max_lines: int = 40) -> str:
    """A short Markdown list of a battle's key events: charges, reactions, challenges, break and
    panic tests, units destroyed, and the result. Dice-only events are skipped.

    Returns:
        Markdown text (one ``- T<turn> <phase>: ...`` bullet per event, at most ``max_lines``).
    """
    lines: list[str] = []

    def add(line: str) -> None:
        if not lines or lines[-1] != line:  # one line for the events a rule records twice
            lines.append(line)

    for e in battle.events:
        rule = e.get("rule", "")
        if e.get("kind") == "dice":
            continue
        where = f"T{e.get('turn', '?')} {e.get('phase', '')}"
        who = _unit_label(battle, e["unit"]) if "unit" in e else ""
        if e.get("destroyed"):
            how = "fled off the table" if e.get("off_table") else "destroyed"
            add(f"- {where}: {who} {how} ({rule})")
        elif rule in ("CORE.CHARGE.DECLARE", "CORE.CHARGE.FAILED", "CORE.CC.CHALLENGE.ISSUE"):
            add(f"- {where}: {who} {KEY_RULES[rule]} {_unit_label(battle, e.get('target'))}")
        elif rule == "CORE.REACT.DECLARE" and e.get("reaction") not in (None, "hold"):
            add(f"- {where}: {who} {e['reaction'].replace('_', ' ')} against {_unit_label(battle, e.get('charger'))}")
        elif rule in ("CORE.CC.BREAK_TEST", "CORE.PSY.PANIC.TEST") and e.get("passed") is False:
            add(f"- {where}: {who} fails its {KEY_RULES[rule]}")
        if len(lines) >= max_lines:
            lines.append("- …")
            break
    res = battle.result if battle.is_over else None
    if res:
        lines.append(f"- result: {res['winner']} — VP blue {res['vp']['blue']}, red {res['vp']['red']}")
    return "\n".join(lines) if lines else "- (no key events)"


__all__ = [
    "GameRecord", "deployment_battle", "eval_seed", "evaluate_model", "key_events", "model_metadata",
    "play_evaluation", "summarise",
]
