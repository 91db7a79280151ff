"""The compiled core (battleline.env.rules._kernel) against the shapely reference, and pinned values.

The differential part asks a few hundred random questions of each kind
(benchmarks/kernel_fuzz.py asks 100,000); the pins check the rules' own
numbers through both implementations.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

import numpy as np
import pytest

from battleline.env.rules import charges, kernel, movement, space
from battleline.env.rules import geometry as geo
from battleline.env.rules.battle import Battle
from battleline.env.rules.state import UnitState
from benchmarks import kernel_fuzz
from tests.setups import INFANTRY_BASE as W
from tests.setups import battle as set_up
from tests.setups import placement

pytestmark = pytest.mark.skipif(kernel.native is None, reason="the compiled core is not built")


@pytest.mark.parametrize("kind", [k for k in kernel_fuzz.KINDS if k != "legal"])
def test_core_agrees_with_reference(kind: str) -> None:
    result = kernel_fuzz.run_kind(kind, 400, seed=11)
    assert result["queries"] == 400
    # only exact ties at EPS (an overlap of exactly EPS, where GEOS's rounding decides) may differ
    assert result["disagreements"] == result.get("ties", 0), result["examples"][:3]


def test_furthest_queries_cover_every_outcome() -> None:
    """The random scenes reach every answer a straight move can have, so agreement means something."""
    seen = set()
    for i in range(300):
        scene = kernel_fuzz.random_scene(np.random.default_rng([3, i]))
        m = scene["flags"]["M"]
        d = kernel_fuzz.native_scene(scene).furthest_legal(*scene["mover"], scene["w"], scene["d"], m)
        seen.add("none" if d is None else "undecided" if d < 0 else "zero" if d == 0.0 else "full" if d == m else "partial")
    assert {"none", "zero", "full", "partial"} <= seen <= {"none", "zero", "full", "partial", "undecided"}


def test_legal_move_sets_agree_in_play() -> None:
    result = kernel_fuzz.run_kind("legal", 120, seed=5)
    assert result["queries"] == 120
    assert result["disagreements"] == 0, result["examples"][:3]


def _scene(rows: list[tuple], terrain: list[tuple[str, list]] | None = None, m: float = 5.0) -> dict:
    return {"mover": (20.0, 10.0, 90.0), "w": 5.0, "d": 2.0, "rows": rows, "terrain": terrain or [],
            "flags": {"over_units": False, "skirmishers": False, "aquatic": False, "M": m}}


def _furthest_both(scene: dict, allowance: float) -> tuple[float | None, float | None]:
    ref = movement.furthest_legal(None, kernel_fuzz._stub(scene["w"], scene["d"]), geo.Pose(*scene["mover"]),  # type: ignore[arg-type]
                                  allowance, env=kernel_fuzz.reference_scene(scene))
    core = kernel_fuzz.native_scene(scene).furthest_legal(*scene["mover"], scene["w"], scene["d"], allowance)
    return ref, core


def test_one_inch_rule_stops_a_move_one_inch_short() -> None:
    """CORE.MOVE.ONE_INCH: a 5" x 2" unit facing an enemy 4" ahead (front edge to front edge) may close to 1"."""
    enemy = (20.0, 10.0 + 1.0 + 4.0 + 1.0, 270.0, 5.0, 2.0, 1.0)  # its front edge 4" beyond the mover's
    ref, core = _furthest_both(_scene([enemy]), 5.0)
    assert ref == core
    # 1" less EPS counts as 1" (CORE.CONV.UNITS): the furthest is 3.01", found by bisection to 0.625/2**10"
    assert 3.0 + geo.EPS - 0.625 / 1024 <= core <= 3.0 + geo.EPS


def test_difficult_terrain_doubles_the_cost() -> None:
    """CORE.TERRAIN.COST: through woods every inch costs two, so 6" of allowance moves 3"."""
    woods = ("woods", [(0.0, 0.0), (40.0, 0.0), (40.0, 40.0), (0.0, 40.0)])
    ref, core = _furthest_both(_scene([], [woods]), 6.0)
    assert ref == core == 3.0


def test_table_edge_stops_a_move() -> None:
    """CORE.MOVE.TABLE_EDGE: a unit whose front edge is 2" from the table's edge moves no further than that."""
    scene = _scene([])
    scene["mover"] = (20.0, 48.0 - 1.0 - 2.0, 90.0)
    ref, core = _furthest_both(scene, 5.0)
    assert ref == core
    assert 2.0 - 5e-3 <= core <= 2.0 + geo.EPS


def test_impassable_start_is_none() -> None:
    """A unit standing in rocks (CORE.TERRAIN.TYPES: impassable) has no legal straight move at all: None."""
    rocks = ("rocks", [(18.0, 8.0), (22.0, 8.0), (22.0, 12.0), (18.0, 12.0)])
    assert _furthest_both(_scene([], [rocks]), 5.0) == (None, None)


def test_touching_is_not_overlapping() -> None:
    """CORE.CONV.UNITS: footprints that share an edge touch but do not overlap; EPS/2 deeper they still do not."""
    a = kernel.native.footprint(10.0, 10.0, 0.0, 4.0, 2.0)
    for depth, expected in ((0.0, False), (geo.EPS / 2, False), (2 * geo.EPS, True)):
        b = kernel.native.footprint(10.0 + 2.0 - depth, 10.0, 0.0, 4.0, 2.0)  # facing 0: the depth runs along x
        assert kernel.native.overlaps(a, b) is expected
        assert kernel.native.distance(a, b) == 0.0


def test_footprint_and_wheel_are_bit_identical() -> None:
    p = geo.Pose(12.5, 7.25, 33.0)
    ref = np.asarray(geo.footprint(p, 5.0, 3.0).exterior.coords)[:-1]
    assert np.array_equal(kernel.native.footprint(12.5, 7.25, 33.0, 5.0, 3.0), ref)
    w = geo.wheel(p, 5.0, -45.0, 3.0)
    assert kernel.native.wheel_pose(12.5, 7.25, 33.0, 5.0, 3.0, -45.0) == (w.x, w.y, w.facing)


def test_bad_arrays_raise_value_error() -> None:
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        kernel.native.distance(np.zeros((3, 3)), np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="at least 3 points"):
        kernel.native.overlaps(np.zeros((2, 2)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"\(n, 6\)"):
        kernel.native.Scene(np.zeros((2, 5)), [], [], [], 72.0, 48.0, False, False, False, 2.5)
    request = (0, False, False, False, 2.5, 5.0, True, 5, 20, 1.0, 1.0, False, ([99], float("nan")))
    table = kernel.native.Table(np.array([[10.0, 10.0, 90.0, 5.0, 4.0, 0.0, 7.0]]))
    with pytest.raises(ValueError, match="unknown option code"):
        kernel.native.unit_moves(table, [], 72.0, 48.0, [request])
    with pytest.raises(ValueError, match="13 fields"):
        kernel.native.unit_moves(table, [], 72.0, 48.0, [request[:5]])
    with pytest.raises(ValueError, match="row out of range"):
        kernel.native.unit_moves(table, [], 72.0, 48.0, [(1, *request[1:])])
    with pytest.raises(ValueError, match=r"\(n, 7\)"):
        kernel.native.Table(np.zeros((1, 6)))


def test_a_decision_table_serves_the_scenes_of_one_decision_only() -> None:
    """While legal actions are worked out the state holds still and one compiled table serves every scene; the
    scene built from it answers as the one built from the units themselves."""
    from battleline.env.rules.battle import Battle

    battle = Battle.from_scenario("pitched_battle", seed=2)
    assert kernel.decision_table(battle) is not kernel.decision_table(battle)  # outside a decision: built afresh
    battle._deciding = True
    try:
        assert kernel.decision_table(battle) is kernel.decision_table(battle)
    finally:
        battle._deciding = False
        battle._kernel_table = None
    import random

    pick = random.Random(2)
    while battle.state.turn < 2 and not battle.state.over:
        acts = battle.legal_actions()
        battle.apply(acts[pick.randrange(len(acts))])
    table = kernel.table_of(battle.state)
    answers = set()
    for u in [o for o in battle.state.units if o.alive]:
        for dx, dy in ((0.0, 0.0), (0.0, 3.0), (2.5, -1.0)):
            args = (u.x + dx, u.y + dy, u.facing, u.width, u.depth)
            ours = kernel.scene(battle.state, u, table=table).blocked_at(*args)
            assert ours == kernel.scene(battle.state, u).blocked_at(*args)
            answers.add(ours)
    assert answers == {0, 1}  # free and blocked places both asked


def test_switch_selects_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    from battleline.env.rules.battle import Battle

    battle = Battle.from_scenario("pitched_battle", seed=1)
    u = battle.state.units[0]
    monkeypatch.setenv(kernel.ENV_SWITCH, "reference")
    assert not kernel.available()
    assert kernel.scene(battle.state, u) is None
    monkeypatch.setenv(kernel.ENV_SWITCH, "native")
    assert kernel.available()
    assert kernel.scene(battle.state, u) is not None


def test_non_convex_terrain_falls_back_to_the_reference() -> None:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import TerrainFeature

    battle = Battle.from_scenario("pitched_battle", seed=1)
    battle.state.terrain.append(TerrainFeature("rocks", [(0, 0), (4, 0), (4, 4), (2, 1), (0, 4)]))
    assert kernel.terrain_table(battle.state) is None
    assert kernel.scene(battle.state, battle.state.units[0]) is None


# ------------------------------------------------------------------ line of sight (CORE.GEO.LOS)
VIEWER = (20.0, 10.0, 90.0, 4.0, 2.0)  # front edge y = 11 from x = 18 to 22
TARGET = (20.0, 30.0, 270.0, 4.0, 2.0)  # x 18..22, y 29..31


def _sight(blockers: list[list[tuple[float, float]]], woods: list[list[tuple[float, float]]] | None = None) -> tuple[bool, int]:
    scene = {"viewer": VIEWER, "target": TARGET, "blockers": [np.array(b, dtype=np.float64) for b in blockers],
             "woods": [np.array(w, dtype=np.float64) for w in woods or []]}
    return kernel_fuzz.sight_both(scene)


def _rect(x0: float, y0: float, x1: float, y1: float) -> list[tuple[float, float]]:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def test_sight_queries_reach_every_answer() -> None:
    """The random sight scenes give both answers decided by the core, and leave few to the reference."""
    answers = [kernel_fuzz.sight_both(kernel_fuzz.random_sight(np.random.default_rng([4, i])))[1] for i in range(400)]
    assert answers.count(1) > 100 and answers.count(0) > 100
    assert answers.count(-1) <= 20


def test_unit_behind_a_blocker_is_not_seen() -> None:
    """CORE.GEO.LOS: a unit squarely between viewer and target blocks all 15 sight lines; beside them it does not."""
    assert _sight([_rect(14.0, 19.0, 26.0, 21.0)]) == (False, 0)
    assert _sight([_rect(23.0, 19.0, 35.0, 21.0)]) == (True, 1)


def test_grazing_a_corner_is_clear() -> None:
    """CORE.GEO.LOS: the sight lines along x = 18 only touch the diamond's corner (18, 20): clear, so V sees T.

    Every other line enters the diamond; moved EPS towards them the corner cuts x = 18 EPS deep (more than
    EPS/2) and nothing is seen.
    """
    diamond = [(18.0, 20.0), (22.0, 16.0), (26.0, 20.0), (22.0, 24.0)]
    assert _sight([diamond]) == (True, 1)
    assert _sight([[(x - geo.EPS, y) for x, y in diamond]]) == (False, 0)


def test_two_and_a_half_inches_of_woods_block() -> None:
    """CORE.GEO.LOS: woods block a sight line that crosses more than 2" of them: 2.5" block, 1.5" do not."""
    assert _sight([], [_rect(0.0, 19.0, 40.0, 21.5)]) == (False, 0)
    assert _sight([], [_rect(0.0, 19.0, 40.0, 20.5)]) == (True, 1)
    # the vertical lines at x = 18 and x = 22 cross exactly 2" (allowed), or 2.02" (more than 2" + EPS)
    assert _sight([], [_rect(0.0, 19.0, 40.0, 21.0)]) == (True, 1)
    assert _sight([], [_rect(0.0, 19.0, 40.0, 21.02)]) == (False, 0)


def test_sight_leaves_non_convex_blockers_to_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A non-convex blocker in the way is undecided (-1); space.line_of_sight then answers with geometry.has_los."""
    from battleline.env.rules import space
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import TerrainFeature

    notch = [(14.0, 19.0), (26.0, 19.0), (26.0, 21.0), (20.0, 20.0), (14.0, 21.0)]
    ref, core = _sight([notch])
    assert core == -1 and ref is False
    battle = Battle.from_scenario("pitched_battle", seed=1)
    viewer, target = battle.state.units[0], next(u for u in battle.state.units if u.side != battle.state.units[0].side)
    v = (viewer.x, viewer.y, viewer.facing, viewer.width, viewer.depth)
    t = (target.x, target.y, target.facing, target.width, target.depth)
    assert kernel.line_of_sight(v, t, (), (), ()) is True
    mx, my = (viewer.x + target.x) / 2, (viewer.y + target.y) / 2
    rocks = TerrainFeature("rocks", [(mx - 3, my - 1), (mx + 3, my - 1), (mx, my), (mx + 3, my + 1), (mx - 3, my + 1)])
    battle.state.terrain = [x for x in battle.state.terrain if x.kind not in space.BLOCKING | {"woods"}] + [rocks]
    assert kernel.line_of_sight(v, t, (), (space.terrain_poly(rocks),), ()) is None
    others = [o for o in battle.state.units if o.alive and o.uid not in (viewer.uid, target.uid)]
    assert not any(o.has("large_target") for o in (viewer, target))
    expected = geo.has_los(space.pose(viewer), viewer.width, viewer.depth, space.pose(target), target.width,
                           target.depth, [space.footprint(o) for o in others] + [space.terrain_poly(rocks)])
    assert space.line_of_sight(battle.state, viewer, target) is expected
    monkeypatch.setenv(kernel.ENV_SWITCH, "reference")
    assert kernel.line_of_sight(v, t, (), (), ()) is None


@pytest.mark.parametrize("kind", ["wall", "woods", "rocks"])
def test_a_feature_about_eps_thick_is_left_to_the_reference(kind: str) -> None:
    """A feature 0.01" thick (within rounding of EPS): whether its EPS/2 erosion keeps anything is GEOS's rounding,
    so the core calls the answer undecided and the reference's is taken (CORE.TERRAIN.COST, CORE.MOVE.ONE_INCH)."""
    strip = (kind, [(14.0, 16.0), (26.0, 16.0), (26.0, 16.01), (14.0, 16.01)])
    scene = _scene([], [strip], m=8.0)
    core = kernel_fuzz.native_scene(scene).furthest_legal(*scene["mover"], scene["w"], scene["d"], 8.0)
    assert core == -1.0
    ref = movement.furthest_legal(None, kernel_fuzz._stub(scene["w"], scene["d"]), geo.Pose(*scene["mover"]),  # type: ignore[arg-type]
                                  8.0, env=kernel_fuzz.reference_scene(scene))
    assert ref is not None and ref < 8.0  # the reference does count the strip


def test_the_compiled_functions_refuse_bad_numbers() -> None:
    """Sizes that would overflow, zero files, NaN or huge angles: one ValueError, never a crash."""
    k = kernel.native
    with pytest.raises(ValueError, match="ring sizes"):
        k.line_of_sight(0, 0, 0, 1, 1, 5, 5, 0, 1, 1, np.empty((0, 5)), np.zeros((1, 2)),
                        np.array([1, 2**63 - 1], dtype=np.int64), np.empty((0, 2)), np.empty(0, dtype=np.int64))
    table = k.Table(np.array([[10.0, 10.0, 0.0, 5.0, 2.0, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="at least 1"):
        k.unit_moves(table, [], 48.0, 48.0, [(0, 0, 0, 0, 2.0, 4.0, 1, 0, 10, 1.0, 1.0, 0, (list(range(16)), 0.0))])
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        k.convex_hull(np.zeros((5, 1)))
    for angle in (1e10, float("nan")):
        with pytest.raises(ValueError, match="180 degrees"):
            k.wheel_swept_area(0.0, 0.0, 0.0, 100.0, 10.0, angle)
    scene = k.Scene(np.empty((0, 6)), [], [], [], 72.0, 48.0, False, False, False, 2.0)
    with pytest.raises(ValueError, match="finite"):
        scene.furthest_legal(10.0, 10.0, 0.0, 2.0, 2.0, float("nan"))


def test_an_unknown_switch_value_is_one_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from battleline.env.rules.config import ConfigError

    monkeypatch.setenv(kernel.ENV_SWITCH, "shapely")
    with pytest.raises(ConfigError, match="BATTLELINE_KERNEL: 'shapely' is not one of native, reference"):
        kernel.available()


def test_the_switch_is_read_again_at_every_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every change of BATTLELINE_KERNEL at run time is seen by the next question, and a bad value is refused
    every time it is read, also after good values were answered."""
    from battleline.env.rules.config import ConfigError

    seen = []
    for value in ("reference", "native", "reference", None, "shapely", "shapely", "native"):
        if value is None:
            monkeypatch.delenv(kernel.ENV_SWITCH, raising=False)
        else:
            monkeypatch.setenv(kernel.ENV_SWITCH, value)
        try:
            seen.append(kernel.available())
        except ConfigError:
            seen.append("refused")
    assert seen == [False, True, False, True, "refused", "refused", True]
    monkeypatch.setattr(kernel, "native", None)  # not built: never available, whatever the switch says
    assert not kernel.available()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_automatic_deployment_agrees_with_the_reference(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """CORE.SETUP.DEPLOY: ending deployment at once puts every unit in the same slot whether the compiled core
    or the reference tests the slots."""
    from battleline.env.rules.actions import END_PHASE

    def deploy_all(mode: str) -> list[tuple]:
        monkeypatch.setenv(kernel.ENV_SWITCH, mode)
        b = Battle.from_scenario("pitched_battle", seed=seed)
        while b.state.stage == "deploy":
            b.apply(END_PHASE)
        return [(e["unit"], e["slot"], e["x"], e["y"]) for e in b.events if e["rule"] == "CORE.SETUP.DEPLOY"]

    native = deploy_all("native")
    assert len(native) > 0 and all(slot is not None for _, slot, _, _ in native)
    assert native == deploy_all("reference")



def _spots_agree(battle: Battle, c: UnitState, t: UnitState, facing: str, offsets: Iterable[float],
                 outcomes: dict[str, int]) -> None:
    """Assert charges._Neighbours.touched answers alike from the compiled core and from shapely at each offset."""
    compiled = charges._Neighbours(battle, c, t, frozenset())
    reference = charges._Neighbours(battle, c, t, frozenset())
    assert compiled.compiled is not None
    reference.compiled = None
    for offset in offsets:
        p = charges.flush_pose(t, facing, c, float(offset))
        got = compiled.touched(p)
        assert got == reference.touched(p), (c.uid, t.uid, facing, offset)
        outcomes["blocked" if got is None else "touching" if got else "free"] += 1


def test_charge_end_spots_agree_with_the_reference() -> None:
    """charges._Neighbours.touched (CORE.CHARGE.MOVE) gives the same answer from the compiled core
    (kernel.contact_scene) as from shapely: at every candidate spot of every charger near an enemy in random
    battles, and along the front of an orc unit flush beside another (whose front a spot past the shared
    flank touches) and of one with a unit jutting 1" ahead beside it (which such a spot overlaps)."""
    outcomes = {"free": 0, "touching": 0, "blocked": 0}
    for seed in range(3):
        b = Battle.from_scenario("pitched_battle", seed=seed)
        rng = random.Random(seed)
        while not b.is_over:
            s = b.state
            if s.stage == "charge":
                for c in space.alive_units(s, s.active):
                    for t in space.alive_units(s, 1 - s.active):
                        facing = charges.charge_facing(b, c, t, roll=False)
                        if facing is not None and space.near(c, t, charges.charge_reach(c)):
                            _spots_agree(b, c, t, facing, charges._candidate_offsets(c, t, facing)[0], outcomes)
            b.apply(rng.choice(b.legal_actions()))
    for ahead in (0.0, 1.0):
        blue = [placement("marcher_spearmen", 36.0 + 1.5 * W, 10.0, 90)]
        red = [placement("orc_warriors", 36.0, 20.0 + 2.5 * W, 270, models=10, files=2),
               placement("orc_warriors", 36.0 + 3.5 * W, 20.0 - ahead + W, 270, models=10, files=5)]
        b = set_up(blue, red)
        _spots_agree(b, b.unit(0), b.unit(1), "front", np.linspace(-4 * W, 4 * W, 33), outcomes)
    assert min(outcomes.values()) > 0, outcomes



def test_the_move_memo_answers_as_a_fresh_call_in_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit whose request and neighbours are as they were gets its kept answer (kernel.move_memo): over random
    battles every answer equals the one worked out afresh, and the memo does answer some requests itself."""
    calls = []
    real = kernel.native.unit_moves

    def both(table, terrain, w, h, requests, memo=None):  # noqa: ANN001, ANN202 - the native signature
        got = real(table, terrain, w, h, requests, memo)
        calls.append((got, real(table, terrain, w, h, requests, None)))
        return got

    monkeypatch.setattr(kernel.native, "unit_moves", both)
    memos = []
    for seed in (4, 9):
        battle = Battle.from_scenario("pitched_battle", seed=seed)
        pick = random.Random(seed)
        while not battle.is_over:
            acts = battle.legal_actions()
            battle.apply(acts[pick.randrange(len(acts))])
        memos.append(kernel.move_memo(battle))
    assert len(calls) > 50
    assert all(got == fresh for got, fresh in calls)
    assert sum(m.hits + m.misses for m in memos) == sum(len(got) for got, _ in calls)
    assert all(m.hits > 0 and m.misses > 0 for m in memos)


def _memo_call(rows: list[tuple], memo: object) -> list[list[int]]:
    """unit_moves for the unit in row 0 (10 models of 1" bases, 5 files, M 5) on an open 72 x 48" table."""
    table = kernel.native.Table(np.array(rows, dtype=np.float64))
    request = (0, False, False, False, 2.5, 5.0, True, 5, 10, 1.0, 1.0, False, (list(range(16)), float("nan")))
    return kernel.unit_moves(table, [], 72.0, 48.0, [request], memo)


def test_the_move_memo_forgets_a_unit_when_a_neighbour_moves() -> None:
    """A unit within reach of the mover's options (2M + 1.5 diagonals + 2") moving is a changed input (a miss); one
    beyond it is not (a hit), and either way the answer is the fresh one."""
    mover, near, far = (20.0, 10.0, 90.0, 5.0, 2.0, 0.0, 0.0), (20.0, 16.0, 270.0, 5.0, 2.0, 1.0, 1.0), (
        65.0, 40.0, 270.0, 5.0, 2.0, 1.0, 2.0)
    memo = kernel.native.MoveMemo()
    first = _memo_call([mover, near, far], memo)
    assert (memo.hits, memo.misses) == (0, 1)
    assert _memo_call([mover, near, far], memo) == first
    assert (memo.hits, memo.misses) == (1, 1)
    moved_far = (66.0, *far[1:])
    assert _memo_call([mover, near, moved_far], memo) == _memo_call([mover, near, moved_far], None)
    assert (memo.hits, memo.misses) == (2, 1)
    moved_near = (20.0, 12.5, *near[2:])  # now within 1" of the mover: its advance is blocked
    answer = _memo_call([mover, moved_near, moved_far], memo)
    assert (memo.hits, memo.misses) == (2, 2)
    assert answer == _memo_call([mover, moved_near, moved_far], None) != first


def _front_spots(b: Battle, target: int, ignore: frozenset[int] = frozenset()) -> tuple[list[float], list]:
    """Unit 0's candidate offsets on unit ``target``'s front and kernel.charge_spots's answers there."""
    c, t = b.unit(0), b.unit(target)
    edge = charges.edge_frame(t, "front")
    offsets, _ = charges._offsets_on(c, edge)
    answers = kernel.charge_spots(b, c, t, ignore, edge, offsets, True)
    assert answers is not None
    return offsets, answers


def test_charge_spots_touch_the_enemy_beside_the_target_and_never_a_friend() -> None:
    """kernel.charge_spots (CORE.CHARGE.MOVE): the orcs charged have an orc unit flush on their right and a friend of
    the charger flush on their left. A spot slid towards the orcs (offset > 0) is a legal end touching them, with a
    clear straight route; the centred spot touches both and a spot slid the other way touches the friend, so
    neither is a legal end, and no route is worked out for them."""
    blue = [placement("marcher_spearmen", 36.0, 10.0, 90), placement("marcher_spearmen", 36.0 + 5 * W, 20.0, 270,
                                                                     models=10, files=5)]
    red = [placement("orc_warriors", 36.0, 20.0, 270, models=10, files=5),
           placement("orc_warriors", 36.0 - 5 * W, 20.0, 270, models=10, files=5)]
    b = set_up(blue, red)
    offsets, answers = _front_spots(b, 2)
    assert len(offsets) == len(answers) == 9 and offsets[0] == 0.0
    for off, answer in zip(offsets, answers):
        assert answer == ((1, [3], 1) if off > 0 else (0, [], -2)), (off, answer)


def test_charge_spots_are_blocked_by_a_unit_in_the_way_unless_it_is_ignored() -> None:
    """kernel.charge_spots (CORE.CHARGE.FEASIBLE): an orc unit square across the way between the spearmen and the
    orcs they charge blocks every route (the straight corridor and every wheel-and-close-the-door route), so each spot
    is free but unreachable; left out (``ignore``), every route is clear."""
    blue = [placement("marcher_spearmen", 36.0, 10.0, 90)]
    red = [placement("orc_warriors", 36.0, 20.0, 270, models=10, files=5),
           placement("orc_warriors", 36.0, 15.0, 270, models=10, files=5)]
    b = set_up(blue, red)
    _, answers = _front_spots(b, 1)
    assert answers == [(1, [], 0)] * 9
    _, answers = _front_spots(b, 1, frozenset({2}))
    assert answers == [(1, [], 1)] * 9
    assert charges.charge_spot(b, b.unit(0), b.unit(1), "front") is None


def test_charge_spots_refuse_bad_rings() -> None:
    """The compiled charge_spots refuses a malformed terrain ring with one ValueError."""
    b = set_up([placement("marcher_spearmen", 36.0, 10.0, 90)], [placement("orc_warriors", 36.0, 20.0, 270)])
    c, t = b.unit(0), b.unit(1)
    with pytest.raises(ValueError, match="impassable"):
        kernel.native.charge_spots(kernel.decision_table(b), c.uid, c.side, c.x, c.y, c.facing, c.width, c.depth, 8.0,
                                   False, t.uid, t.x, t.y, t.facing, t.width, t.depth, [], [np.zeros((2, 2))], [],
                                   72.0, 48.0, charges.edge_frame(t, "front"), [0.0], True)


def test_charge_spots_give_the_reference_placements_in_play(monkeypatch: pytest.MonkeyPatch) -> None:
    """charges.charge_spot and contact_placement (CORE.CHARGE.ALIGN, CORE.CHARGE.BLOCKED, CORE.CHARGE.MULTI_TARGET)
    answer alike with the compiled core (kernel.charge_spots) and with the shapely reference alone, for every charger
    and enemy within reach on every facing, at every charge declaration of random battles."""
    asked = found = 0
    for seed in range(3):
        asked, found = _placements_agree(monkeypatch, seed, asked, found)
    assert asked > 50 and 0 < found < asked, (asked, found)


def _placements_agree(monkeypatch: pytest.MonkeyPatch, seed: int, asked: int, found: int) -> tuple[int, int]:
    """One random battle of test_charge_spots_give_the_reference_placements_in_play: (asked, found) counted on."""
    b = Battle.from_scenario("pitched_battle", seed=seed)
    rng = random.Random(seed)
    while not b.is_over:
        s = b.state
        if s.stage == "charge":
            for c in space.alive_units(s, s.active):
                for t in space.alive_units(s, 1 - s.active):
                    if not space.near(c, t, charges.charge_reach(c)):
                        continue
                    for facing in ("front", "left", "right", "rear"):
                        answers = []
                        for mode in ("native", "reference"):
                            monkeypatch.setenv("BATTLELINE_KERNEL", mode)
                            spots = charges._Spots(b, c, t, facing, frozenset(), True)
                            answers.append((spots.charge_spot(), spots.placement(frozenset()), spots.incidental()))
                        monkeypatch.delenv("BATTLELINE_KERNEL")
                        assert answers[0] == answers[1], (c.uid, t.uid, facing)
                        asked += 1
                        found += answers[0][0] is not None
        b.apply(rng.choice(b.legal_actions()))
    return asked, found
