"""The option caches of movement and deployment give the legal actions a fresh computation gives.

See :func:`env.rules.movement.legal`, :func:`env.rules.deployment.legal` and
:class:`env.rules.space.Decision`. The caches serve the shapely reference (the
compiled core decides every option afresh), so these tests run on the reference.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from battleline.env.rules import deployment, kernel, movement
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from tests.setups import battle, end_declarations, placement


@pytest.fixture(autouse=True)
def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(kernel.ENV_SWITCH, "reference")


DEPTH = 4 * 20 / 25.4  # a 20-model, 5-file unit of 20 mm bases, inches
CACHES: dict[str, tuple[str, Callable[[Battle], list[Action]]]] = {
    "move": ("_move_cache", movement.legal),
    "deploy": ("_deploy_cache", deployment.legal),
}


def _fresh(b: Battle, stage: str = "move") -> list[Action]:
    """The legal actions of ``stage`` computed with an empty cache (the battle's own cache is kept)."""
    name, legal = CACHES[stage]
    saved = b.__dict__.pop(name, None)
    try:
        return legal(b)
    finally:
        if saved is not None:
            b.__dict__[name] = saved


@pytest.mark.parametrize(("scenario", "seed", "stages"), [("skirmish_line", 0, ("move",)), ("pitched_battle", 1, ("move", "deploy"))])
def test_cached_moves_and_deployments_equal_fresh_ones_through_a_battle(scenario: str, seed: int, stages: tuple[str, ...]) -> None:
    rng = np.random.default_rng(seed)
    b = Battle.from_scenario(scenario, seed=seed)
    checked = {"move": 0, "deploy": 0}
    while not b.is_over:
        acts = b.legal_actions()
        stage = b.state.stage
        if stage in CACHES:
            assert CACHES[stage][1](b) == _fresh(b, stage), f"{stage} decision {len(b.actions)}"
            checked[stage] += 1
        b.apply(acts[int(rng.integers(len(acts)))])
    assert all(checked[stage] > 3 for stage in stages)


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



@pytest.mark.parametrize("edit", ["base_d", "troop_type"])
def test_a_unit_edited_in_place_is_seen_by_the_kept_options(edit: str) -> None:
    """A friend in front of unit 0 whose footprint changes in place, its centre kept (CORE.GEO.FOOTPRINT): deeper
    bases bring its rear edge from 3" to 1.1" away, closing the forward moves; made a war machine (one base deep,
    CORE.GEO.BASES) it shrinks from 1.1" to about 2.3" away, opening them. The kept options follow a fresh
    computation; they once missed both edits (a unit's place was keyed without its bases and troop type)."""
    gap = 3.0 if edit == "base_d" else 1.1
    b = battle([placement("marcher_spearmen", 20, 10, 90), placement("marcher_spearmen", 20, 30, 90)],
               [placement("orc_warriors", 60, 40, 270)])
    end_declarations(b)
    friend = b.unit(1)
    friend.y = 10 + DEPTH / 2 + gap + friend.depth / 2  # its rear edge ``gap`` in front of unit 0's front edge
    forward = {"advance", "advance_half", "march"}
    before = {a.option for a in movement.legal(b) if a.unit == 0}
    assert forward <= before if edit == "base_d" else not forward & before
    if edit == "base_d":
        friend.base_d += (gap - 1.1) / 2  # four ranks: the rear edge comes 1.9" nearer
    else:
        friend.troop_type = "war_machine"  # one rank of bases: the rear edge goes 1.5 bases farther
    after = movement.legal(b)
    options = {a.option for a in after if a.unit == 0}
    assert not forward & options if edit == "base_d" else forward <= options
    assert after == _fresh(b)
