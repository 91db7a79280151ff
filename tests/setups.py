"""Small explicit-placement set-ups for rules tests."""

from __future__ import annotations

from typing import Any

from battleline.env.rules.actions import END_PHASE
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import ScriptedDice

INFANTRY_BASE = 20 / 25.4  # inches


def placement(unit: str, x: float, y: float, facing: float, models: int = 20, files: int = 5, **kw: Any) -> dict:
    """An explicit placement dict for a scenario (inches, degrees)."""
    return {"unit": unit, "models": models, "files": files, "x": x, "y": y, "facing": facing, **kw}


def scenario(blue: list[dict], red: list[dict], phase: str = "movement", player: str = "blue", terrain=None,
             modules: list[str] | None = None) -> dict:
    """A scenario dict: men (blue) against orcs (red), explicit placements, no terrain by default,
    ``modules`` on (for example the T9A modules, CFG.MODULES)."""
    return {
        "id": "test_setup",
        "name": "Test set-up",
        "modules": list(modules or []),
        "terrain": terrain or [],
        "blue": {"faction": "men", "placements": blue},
        "red": {"faction": "orcs", "placements": red},
        "start": {"turn": 1, "phase": phase, "player": player},
    }


def battle(blue: list[dict], red: list[dict], dice: list[int] | None = None, **kw: Any) -> Battle:
    """A battle on the set-up; ``dice`` scripts the D6 faces (then seeded dice take over)."""
    scripted = ScriptedDice(dice or [], then_seed=0)
    return Battle.from_scenario(scenario(blue, red, **kw), seed=0, dice=scripted)


def rules(b: Battle, rule: str) -> list[dict]:
    """The events of exactly ``rule``, dice rolls left out (they carry ``kind="dice"``)."""
    return [e for e in b.events if e["rule"] == rule and e.get("kind") != "dice"]


def rolls(b: Battle, rule: str) -> list[dict]:
    """The dice-roll events of ``rule``."""
    return [e for e in b.events if e["rule"] == rule and e.get("kind") == "dice"]


def end_declarations(b: Battle) -> None:
    """End the charge declarations if the engine still waits for them (it skips a stage with no choice)."""
    if b.pending.kind == "charge":
        b.apply(END_PHASE)


def snapshots(scenario: str, blue: str, red: str, seed: int, every: int, limit: int | None = None) -> list[Battle]:
    """Copies (:meth:`Battle.clone`) of a battle of ``scenario`` between two named agents (seeded ``2·seed`` and
    ``2·seed + 1``), one every ``every`` decisions, until the end or ``limit`` decisions."""
    from battleline.agents.registry import make_agent

    b = Battle.from_scenario(scenario, seed=seed)
    agents = [make_agent(blue, seed=2 * seed), make_agent(red, seed=2 * seed + 1)]
    for side, agent in enumerate(agents):
        agent.reset(b, side)
    shots, n = [], 0
    while not b.is_over and (limit is None or n < limit):
        b.apply(agents[b.pending.player].act(b))
        n += 1
        if n % every == 0:
            shots.append(b.clone())
    return shots



def move_options(b: Battle) -> dict[int, list[str]]:
    """The move options of ``b``'s legal actions, per unit uid, in the legal list's order."""
    options: dict[int, list[str]] = {}
    for a in b.legal_actions():
        if a.kind == "move":
            options.setdefault(a.unit, []).append(a.option)
    return options


def agents_and_twins(b: Battle, blue: str, red: str) -> tuple[list[Any], list[Any]]:
    """Two pairs of agents reset on ``b`` (blue seeded 1, red 2): the agents, and their twins that keep no answers
    from one decision to the next (``keep_decisions`` off)."""
    from battleline.agents.registry import make_agent

    agents = [make_agent(blue, seed=1), make_agent(red, seed=2)]
    twins = [make_agent(blue, seed=1), make_agent(red, seed=2)]
    for side in (0, 1):
        agents[side].reset(b, side)
        twins[side].reset(b, side)
        twins[side].keep_decisions = False
    return agents, twins
