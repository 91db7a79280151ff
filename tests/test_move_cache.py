"""The movement module's option cache gives the legal moves a fresh computation gives (env/rules/movement.py)."""

from __future__ import annotations

import numpy as np
import pytest

from env.rules import movement
from env.rules.actions import Action
from env.rules.battle import Battle
from tests.setups import battle, end_declarations, placement

DEPTH = 4 * 20 / 25.4  # a 20-model, 5-file unit of 20 mm bases, inches


def _fresh(b: Battle) -> list[Action]:
    """The legal moves computed with an empty cache (the battle's own cache is kept)."""
    saved = b.__dict__.pop("_move_cache", None)
    try:
        return movement.legal(b)
    finally:
        if saved is not None:
            b.__dict__["_move_cache"] = saved


@pytest.mark.parametrize(("scenario", "seed"), [("skirmish_line", 0), ("pitched_battle", 1)])
def test_cached_moves_equal_fresh_ones_through_a_battle(scenario: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    b = Battle.from_scenario(scenario, seed=seed)
    checked = 0
    while not b.is_over:
        acts = b.legal_actions()
        if b.state.stage == "move":
            assert movement.legal(b) == _fresh(b), f"decision {len(b.actions)}"
            checked += 1
        b.apply(acts[int(rng.integers(len(acts)))])
    assert checked > 10


def test_a_move_outside_the_regions_looked_at_decides_nothing_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A friend 20" to the side moves within the neighbourhood but away from every option: no option is re-decided.

    When it then stands 1.1" in front of the unit, the forward moves (which
    could go only 0.1", less than MIN_MOVE) are decided again and are no longer legal.
    """
    blue = [placement("marcher_spearmen", 20, 10, 90), placement("marcher_spearmen", 40, 10, 90)]
    red = [placement("orc_warriors", 60, 40, 270)]
    b = battle(blue, red)
    end_declarations(b)
    assert b.state.stage == "move"
    decided: list[str] = []  # unit 0's options decided
    real = movement._decide

    def decide(bt: Battle, u, option: str, env, units):  # noqa: ANN001 - pass-through spy
        if u.uid == 0:
            decided.append(option)
        return real(bt, u, option, env, units)

    monkeypatch.setattr(movement, "_decide", decide)
    before = {a.option for a in movement.legal(b) if a.unit == 0}
    assert {"advance", "advance_half", "march"} <= before

    friend = b.unit(1)
    near_before = movement._neighbourhood(b, b.unit(0))
    friend.x = 41.0
    assert movement._neighbourhood(b, b.unit(0)) != near_before  # the unit's options are looked at again
    decided.clear()
    assert {a.option for a in movement.legal(b) if a.unit == 0} == before
    assert decided == []

    friend.x, friend.y = 20.0, 10 + DEPTH + 1.1
    decided.clear()
    after = movement.legal(b)
    assert {"advance", "advance_half", "march"} & {a.option for a in after if a.unit == 0} == set()
    assert {"advance", "advance_half", "march"} <= set(decided)
    assert after == _fresh(b)
