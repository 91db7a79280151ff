"""The engine's answers kept by value (``functools.lru_cache`` on floats) equal the answers worked out afresh.

Over random states of every shipped scenario, with every kept answer of the process in place and then with every
``lru_cache`` of ``battleline`` cleared: vision arcs (CORE.GEO.VISION_ARC), footprint distances (CORE.CONV.DISTANCE),
the charged arc (CORE.GEO.UNIT_ARC), the charge pre-filter (CORE.CHARGE.ELIGIBLE) and footprints
(CORE.GEO.FOOTPRINT) of every pair of units on the table, and the legal actions; then the same after a unit is edited
in place (moved, turned, re-formed, re-based, given another troop type or Large Target) between two questions in
the same decision. Keys that compare equal but are not the same number (``0.0`` and ``-0.0``, ``1`` and ``1.0``)
give the answer of the number asked.
"""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
import pytest

from battleline.env.rules import charges, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.battle import Battle

SCENARIOS = ["skirmish_line", "pitched_battle", "siege", "gate_assault", "pitched_battle_t9a"]
EDITS = ["x", "facing", "files", "models", "base_w", "base_d", "troop_type", "large_target"]


def _clear_caches() -> int:
    """Clear every ``lru_cache`` defined in a ``battleline`` module; how many were cleared."""
    cleared = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("battleline") or module is None:
            continue
        for obj in list(vars(module).values()):
            if callable(getattr(obj, "cache_clear", None)) and getattr(obj, "__module__", "").startswith("battleline"):
                obj.cache_clear()
                cleared += 1
    return cleared


def _pair_answers(b: Battle) -> list[tuple]:
    """Every ordered pair of units on the table: (uids, vision arc, distance, charged arc, charge pre-filter at the
    charger's reach, the target's footprint as WKB)."""
    units = [u for u in b.state.units if u.alive]
    answers = []
    for a, t in itertools.permutations(units, 2):
        reach = charges.charge_reach(a)
        answers.append((a.uid, t.uid, space.in_vision_arc(a, t), space.unit_distance(a, t),
                        charges.charge_facing(b, a, t, False),
                        charges._reach_and_arc(a.x, a.y, a.facing, a.width, a.depth, t.x, t.y, t.facing, t.width,
                                               t.depth, reach),
                        space.footprint(t).wkb))
    return answers


def _edit(b: Battle, rng: np.random.Generator, edit: str) -> bool:
    """Change one unit on the table in place as ``edit`` says; False where no unit is on the table."""
    units = [u for u in b.state.units if u.alive]
    if not units:
        return False
    u = units[int(rng.integers(len(units)))]
    if edit == "x":
        u.x += 0.5
    elif edit == "facing":
        u.facing = (u.facing + 45.0) % 360.0
    elif edit == "files":
        u.files = max(1, u.files - 1)
    elif edit == "models":
        u.models = max(1, u.models - 1)
    elif edit == "base_w":
        u.base_w += 1.0
    elif edit == "base_d":
        u.base_d += 1.0
    elif edit == "troop_type":
        u.troop_type = "war_machine" if u.troop_type != "war_machine" else "infantry"
    else:
        u.special_rules.append("large_target")
    return True


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_kept_answers_equal_fresh_ones_over_random_states(scenario: str) -> None:
    rng = np.random.default_rng(7)
    b = Battle.from_scenario(scenario, seed=7)
    checked = edited = 0
    for step in range(120):
        if b.is_over:
            break
        acts = b.legal_actions()
        if step % 4 == 0:
            warm = _pair_answers(b)
            fresh = b.clone()
            assert _clear_caches() > 10
            assert _pair_answers(fresh) == warm, f"{scenario} decision {step}"
            assert fresh.legal_actions() == acts, f"{scenario} decision {step}"
            # the same decision asked again after an edit in place: kept answers vs a fresh battle, caches cleared
            edit = EDITS[checked % len(EDITS)]
            again = b.clone()
            again.legal_actions()
            _pair_answers(again)
            if _edit(again, rng, edit):
                again._legal_cache = None  # the battle's list for the decision (Battle._legal) is kept until it changes
                pairs, legal = _pair_answers(again), again.legal_actions()
                other = again.clone()
                _clear_caches()
                assert _pair_answers(other) == pairs, f"{scenario} decision {step}, {edit} edited"
                assert other.legal_actions() == legal, f"{scenario} decision {step}, {edit} edited"
                checked += 1
                edited += edit in ("base_w", "base_d", "troop_type")
        b.apply(acts[int(rng.integers(len(acts)))])
    assert checked >= 4 and edited >= 1


def test_equal_keys_of_other_numbers_give_the_answer_of_the_number_asked() -> None:
    """``-0.0 == 0.0`` and ``1 == 1.0`` share an ``lru_cache`` entry: the answer kept for one is the other's."""
    values = [0.0, -0.0, 0, 1, 1.0, 90.0, -90.0, 270.0, 360.0, 0.5]
    rng = np.random.default_rng(3)
    for _ in range(400):
        x, y, tx, ty = (values[int(i)] for i in rng.integers(len(values), size=4))
        facing, tfacing = (values[int(i)] for i in rng.integers(len(values), size=2))
        args = (x, y, facing, 2.0, 1.0, tx + 3.0, ty, tfacing, 1.0, 1.0)
        assert space._in_arc(*args) == space._in_arc.__wrapped__(*args)
        kept, fresh = space._footprint_distance(*args), space._footprint_distance.__wrapped__(*args)
        assert kept == fresh and math.copysign(1.0, kept) == math.copysign(1.0, fresh)
        assert charges._reach_and_arc(*args, 6.0) == charges._reach_and_arc.__wrapped__(*args, 6.0)
        arcs = (tx + 3.0, ty, tfacing, 1.0, 1.0, x, y, facing, 3, 5, 1.0, 1.0)
        assert charges._arcs(*arcs) == charges._arcs.__wrapped__(*arcs)
        assert geo._vision_region(x, y, facing, 2.0, 1.0).wkb == geo._vision_region.__wrapped__(x, y, facing, 2.0,
                                                                                              1.0).wkb
        assert space._footprint(x, y, facing, 2.0, 1.0).wkb == space._footprint.__wrapped__(x, y, facing, 2.0, 1.0).wkb
