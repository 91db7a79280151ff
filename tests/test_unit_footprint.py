"""UnitState.ranks / width / depth against the formulas of CORE.GEO.FORMATION and CORE.GEO.FOOTPRINT."""

from __future__ import annotations

import itertools
import math

from battleline.env.rules.state import Profile, UnitState

INFANTRY_BASE = 20 / 25.4  # a 20 mm base, in inches (CORE.GEO.BASES)


def _unit(troop_type: str, models: int, files: int, base_w: float, base_d: float) -> UnitState:
    return UnitState(uid=0, side=0, name="u", type_id="u", faction="f", troop_type=troop_type,
                     profile=Profile(4, 3, 3, 3, 3, 1, 3, 1, 7), armour_save=7, base_w=base_w, base_d=base_d,
                     models=models, start_models=max(models, 1), files=files, points=0)


def test_ranks_width_depth_follow_the_formulas_for_every_small_unit() -> None:
    """R = max(1, ceil(N / max(1, F))) (1 for a war machine's single base), W = min(F, max(1, N))·w,
    D = R·d: the same numbers and types for N = 0..59, F = 0..11 and several base sizes."""
    bases = ((INFANTRY_BASE, INFANTRY_BASE), (25 / 25.4, 50 / 25.4), (40 / 25.4, 40 / 25.4), (1.0, 2.0))
    for troop, n, f, (w, d) in itertools.product(("infantry", "war_machine"), range(60), range(12), bases):
        u = _unit(troop, n, f, w, d)
        ranks = 1 if troop == "war_machine" else max(1, math.ceil(n / max(1, f)))
        width = min(f, max(1, n)) * w
        assert (u.ranks, u.width, u.depth) == (ranks, width, ranks * d)
        assert type(u.ranks) is int and type(u.width) is type(width)


def test_a_unit_of_23_in_five_files() -> None:
    """CORE.GEO.FORMATION: 23 models in 5 files stand in 5 ranks, the last of 3; 5 bases wide, 5 deep."""
    u = _unit("infantry", 23, 5, INFANTRY_BASE, INFANTRY_BASE)
    assert (u.ranks, u.models_in_rank(1), u.models_in_rank(5), u.models_in_rank(6)) == (5, 5, 3, 0)
    assert u.width == 5 * INFANTRY_BASE and u.depth == 5 * INFANTRY_BASE
