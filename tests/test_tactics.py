"""The tactics library: catalogue (tactics/catalogue.yaml), detectors, fingerprints and the CLI commands.

Detectors are checked on small hand-built event logs (a positive and a negative case each, with
the exact Detection expected), then on real battles between scripted agents.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from battleline.env.rules.state import Profile, TerrainFeature, UnitState
from battleline.tactics.catalogue import CatalogueError, catalogue, detectable_ids, load_catalogue
from battleline.tactics.detectors import DETECTORS, BattleLog, Detection, detect
from battleline.tactics.fingerprint import as_scalars, fingerprint, rates

TACTICS_MD = Path(__file__).resolve().parents[1] / "shared" / "rules" / "tactics.md"
if not TACTICS_MD.is_file():  # the shared folder sits beside the checkout
    TACTICS_MD = Path(__file__).resolve().parents[2] / "shared" / "rules" / "tactics.md"


# ============================================================================ catalogue
def _index_ids() -> list[str]:
    """The tactic ids of the tactics.md §7 index table."""
    text = TACTICS_MD.read_text(encoding="utf-8")
    index = text.split("## 7. Index of tactic ids", 1)[1]
    return re.findall(r"^\| `([a-z0-9_]+)`", index, flags=re.M)


@pytest.mark.skipif(not TACTICS_MD.is_file(), reason="shared/rules/tactics.md not found")
def test_catalogue_has_every_tactic_of_tactics_md():
    ids = _index_ids()
    assert len(ids) == 55
    assert set(ids) == set(catalogue())
    assert len(catalogue()) == 55


def test_catalogue_entries_are_complete_and_consistent():
    cat = catalogue()
    assert {t.kind for t in cat.values()} == {"deployment", "manoeuvre", "magic", "principle"}
    for t in cat.values():
        assert t.title and t.description and t.signature and t.roles
        if not t.playable or not t.detectable:
            assert t.note
    assert cat["hold_and_cover_flanks"].parent == "charge_consequence_analysis"
    assert cat["staggered_shooting_line"].parent == "shooting_lines"
    assert not cat["pre_game_terrain_measuring"].detectable and cat["pre_game_terrain_measuring"].playable


def test_every_detectable_tactic_has_exactly_one_detector():
    assert set(DETECTORS) == set(detectable_ids())
    assert len(DETECTORS) == 42


def test_invalid_catalogue_is_one_clear_error(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("tactics:\n  - id: x\n    title: X\n    kind: magic\n    section: '1.1'\n    source: '000:L1'\n"
                   "    description: d\n    roles: [WIZ]\n    playable: false\n    signature: s\n")
    with pytest.raises(CatalogueError, match="a note must say why"):
        load_catalogue(bad)
    bad.write_text(bad.read_text().replace("roles: [WIZ]", "roles: [WIZARD]"))
    with pytest.raises(CatalogueError, match="unknown role tags"):
        load_catalogue(bad)
    bad.write_text("tactics: [")
    with pytest.raises(CatalogueError, match="not valid YAML"):
        load_catalogue(bad)


# ============================================================================ hand-built logs
def unit(uid: int, side: int, troop: str = "infantry", *, M: int = 4, points: int = 100, files: int = 5,
         models: int = 20, base: tuple[float, float] = (1.0, 1.0), rules: tuple[str, ...] = (),
         missile: str | None = None, character: bool = False, general: bool = False, name: str = "") -> UnitState:
    """A unit for a hand-built log (only what the detectors read)."""
    return UnitState(
        uid=uid, side=side, name=name or f"U{uid}", type_id="t", faction="f", troop_type=troop,
        profile=Profile(M, 3, 3, 3, 3, 1, 3, 1, 7), armour_save=7, base_w=base[0], base_d=base[1],
        models=models, start_models=models, files=files, points=points, missile=missile,
        special_rules=list(rules), character=character, general=general,
    )


def cav(uid: int, side: int, **kw: Any) -> UnitState:
    """Five cavalry models on 1"x2" bases (5" wide, 2" deep), M8."""
    kw.setdefault("M", 8)
    kw.setdefault("models", 5)
    kw.setdefault("base", (1.0, 2.0))
    return unit(uid, side, "cavalry", **kw)


def E(rule: str, **data: Any) -> dict[str, Any]:
    return {"rule": rule, **data}


def deploy(uid: int, side: int, x: float, y: float, facing: float | None = None) -> dict[str, Any]:
    f = facing if facing is not None else (90.0 if side == 0 else 270.0)
    return E("CORE.SETUP.DEPLOY", unit=uid, side=side, slot=0, x=x, y=y, facing=f)


def move(uid: int, x: float, y: float, facing: float = 90.0, option: str = "advance", distance: float = 4.0,
         rule: str = "CORE.MOVE.NORMAL", files: int | None = None) -> dict[str, Any]:
    d = dict(unit=uid, option=option, distance=distance, x=x, y=y, facing=facing)
    if files is not None:
        d["files"] = files
    return E(rule, **d)


def charge(uid: int, target: int, landed: str | None = "front", declared: str | None = None,
           at: tuple[float, float, float] = (0.0, 0.0, 90.0)) -> list[dict[str, Any]]:
    """A declared charge that lands on ``landed`` (None: it fails) with the charger ending at ``at``."""
    out = [E("CORE.CHARGE.DECLARE", unit=uid, target=target, facing=declared or landed or "front")]
    if landed is None:
        out.append(E("CORE.CHARGE.FAILED", unit=uid, target=target, high=1, moved=1.0, x=at[0], y=at[1], facing=at[2]))
    else:
        out.append(E("CORE.CHARGE.MOVE", unit=uid, target=target, facing=landed, x=at[0], y=at[1], heading=at[2]))
    return out


def flee(uid: int, charger: int, x: float, y: float, facing: float = 270.0) -> list[dict[str, Any]]:
    return [E("CORE.REACT.DECLARE", unit=uid, charger=charger, reaction="flee"),
            E("CORE.PSY.FLEE.MOVE", unit=uid, distance=7.0, x=x, y=y, facing=facing)]


def volley(uid: int, target: int, unsaved: int = 1) -> dict[str, Any]:
    return E("CORE.SHOOT.ALLOCATE", unit=uid, target=target, unsaved=unsaved)


def turn(t: int, player: int, movement: list | None = None, shooting: list | None = None,
         combat: list | None = None, start: list | None = None) -> list[dict[str, Any]]:
    """One player turn: the phase events of the engine with the given events in their phases."""
    out: list[dict[str, Any]] = []

    def phase(name: str, events: list | None) -> None:
        out.append({"rule": "CORE.GAME.PHASES", "turn": t, "phase": name, "player": player, "phase_started": name})
        for e in _flat(events or []):
            out.append({"turn": t, "phase": name, **e})

    phase("start", start)
    phase("movement", movement)
    phase("magic", None)
    phase("shooting", shooting)
    phase("combat", combat)
    return out


def _flat(events: list) -> list[dict[str, Any]]:
    out = []
    for e in events:
        out.extend(_flat(e) if isinstance(e, list) else [e])
    return out


def game(units: list[UnitState], deployment: list, *turns: list, terrain: tuple = ()) -> BattleLog:
    """A BattleLog from units, deployment events and player turns (made with :func:`turn`)."""
    events = [{"turn": 0, "phase": "deployment", **e} for e in _flat(deployment)]
    for t in turns:
        events.extend(t)
    return BattleLog(events, units, list(terrain), 72.0, 48.0)


def quiet(*spec: tuple[int, int]) -> list[list[dict[str, Any]]]:
    """Empty player turns, e.g. quiet((1, 0), (1, 1))."""
    return [turn(t, p) for t, p in spec]


def hill(x0: float, y0: float, x1: float, y1: float, kind: str = "hill", name: str = "") -> TerrainFeature:
    return TerrainFeature(kind=kind, polygon=[(x0, y0), (x1, y0), (x1, y1), (x0, y1)], name=name)


def check(log: BattleLog, tid: str, side: int = 0) -> Detection:
    return DETECTORS[tid](log, side)


# ============================================================================ detector cases
def charge_with(uid: int, target: int, reaction: list, landed: str | None = None,
                at: tuple[float, float, float] = (0.0, 0.0, 90.0), declared: str = "front") -> list:
    """A charge with a reaction between the declaration and the resolution."""
    first, last = charge(uid, target, landed, declared, at)
    return [first, reaction, last]


def inf(uid: int, side: int, **kw: Any) -> UnitState:
    return unit(uid, side, **kw)


def _flee_to_preserve(rally: bool) -> BattleLog:
    units = [inf(0, 0, models=10), cav(1, 1, models=10)]
    return game(units, [deploy(0, 0, 36, 20), deploy(1, 1, 36, 34)],
                turn(1, 0), turn(1, 1, movement=charge_with(1, 0, flee(0, 1, 36, 13), at=(36, 28, 270))),
                turn(2, 0, start=[E("CORE.PSY.RALLY", unit=0, passed=True)] if rally else []))


def _flee_viability(red_y: float) -> BattleLog:
    units = [inf(0, 0, models=10), cav(1, 1, models=10)]
    return game(units, [deploy(0, 0, 36, 20), deploy(1, 1, 36, red_y)],
                turn(1, 0), turn(1, 1, movement=charge_with(1, 0, flee(0, 1, 36, 13), at=(36, 22, 270))))


def _feigned(arc: str) -> BattleLog:
    units = [inf(0, 0), cav(1, 1), inf(2, 0)]
    return game(units, [deploy(0, 0, 20, 20), deploy(2, 0, 30, 20), deploy(1, 1, 20, 34)],
                turn(1, 0), turn(1, 1, movement=charge_with(1, 0, flee(0, 1, 20, 12), at=(20, 27, 270))),
                turn(2, 0, movement=charge(2, 1, arc, at=(22, 27, 180))))


def _scout_jam(blocked_moves: bool) -> BattleLog:
    units = [inf(0, 0, models=5, rules=("scouts",), points=60), inf(2, 0, models=10, missile="bow"),
             cav(1, 1), inf(3, 1)]
    red2 = [move(3, 36, 33, 270)] if blocked_moves else []
    return game(units, [deploy(0, 0, 36, 22), deploy(2, 0, 36, 10), deploy(1, 1, 46, 33), deploy(3, 1, 36, 37)],
                turn(1, 0), turn(1, 1, movement=charge_with(1, 0, flee(0, 1, 36, 15), at=(36, 30, 180))),
                turn(2, 0, shooting=[volley(2, 1)]), turn(2, 1, movement=red2))


def _flanking(arc: str) -> BattleLog:
    return game([cav(0, 0), inf(1, 1)], [deploy(0, 0, 30, 20), deploy(1, 1, 36, 30)],
                turn(1, 0, movement=charge(0, 1, arc, at=(30, 30, 0))))


def _threat_zone(y: float) -> BattleLog:
    xs = (12, 24, 48, 60)
    units = [inf(2 * i, 0) for i in range(4)] + [inf(1, 1)]
    dep = [deploy(2 * i, 0, x, 6) for i, x in enumerate(xs)] + [deploy(1, 1, 36, 44)]
    return game(units, dep, turn(1, 0, movement=[move(2 * i, x, y) for i, x in enumerate(xs)]), turn(1, 1))


def _denial(on_hill: bool) -> BattleLog:
    y = 23 if on_hill else 14
    return game([inf(0, 0), inf(1, 1)], [deploy(0, 0, 36, y), deploy(1, 1, 10, 44)],
                *quiet((1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)),
                terrain=(hill(30, 20, 42, 26, name="Watch Hill"),))


def _area(symmetric: bool, line_y: float = 8.0) -> BattleLog:
    """Blue cavalry forward at y 20 and a blue block at y 8 that moves to ``line_y`` in turn 2 (y 33: into the
    red block's reach); red one block at y 46, plus (``symmetric``) cavalry facing blue's at y 28."""
    units = [cav(0, 0), cav(2, 0), inf(4, 0), inf(1, 1)] + ([cav(3, 1), cav(5, 1)] if symmetric else [])
    dep = [deploy(0, 0, 24, 20), deploy(2, 0, 48, 20), deploy(4, 0, 36, 8), deploy(1, 1, 36, 46)]
    if symmetric:
        dep += [deploy(3, 1, 24, 28), deploy(5, 1, 48, 28)]
    line = [move(4, 36, line_y, distance=line_y - 8.0)] if line_y != 8.0 else None
    return game(units, dep, *quiet((1, 0), (1, 1)), turn(2, 0, movement=line), *quiet((2, 1), (3, 0), (3, 1)))


def _herding(both: bool) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(1, 1)]
    blue2 = [move(0, 30, 28), move(2, 42, 28)] if both else [move(0, 30, 28)]
    return game(units, [deploy(0, 0, 20, 10), deploy(2, 0, 52, 10), deploy(1, 1, 36, 44)],
                turn(1, 0), turn(1, 1, movement=[move(1, 36, 36, 270)]), turn(2, 0, movement=blue2),
                turn(2, 1), turn(3, 0, movement=charge(0, 1, "front", at=(35, 32, 90))))


def _ranged(unsaved: int) -> BattleLog:
    units = [inf(0, 0, models=10, files=10, missile="bow"), inf(2, 0, models=10, files=10, missile="bow"),
             inf(1, 1), inf(3, 1)]
    return game(units, [deploy(0, 0, 30, 8), deploy(2, 0, 42, 8), deploy(1, 1, 30, 44), deploy(3, 1, 42, 44)],
                turn(1, 0), turn(1, 1, movement=[move(1, 30, 30, 270, distance=14), move(3, 42, 30, 270, distance=14)]),
                turn(2, 0, shooting=[volley(0, 1, unsaved), volley(2, 3, unsaved)]))


def _bait(bait_points: int) -> BattleLog:
    units = [inf(0, 0, points=bait_points, models=10), inf(2, 0, points=400), inf(4, 0), cav(1, 1)]
    return game(units, [deploy(0, 0, 20, 20), deploy(2, 0, 30, 16), deploy(4, 0, 50, 10), deploy(1, 1, 20, 34)],
                turn(1, 0), turn(1, 1, movement=charge(1, 0, "front", at=(20, 24, 270))),
                turn(2, 0, movement=charge(2, 1, "right", at=(25, 24, 180))))


def _cover(woods: bool) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(1, 1, models=10, files=10, missile="bow")]
    terrain = (hill(30, 26, 42, 34, kind="woods"),) if woods else ()
    return game(units, [deploy(0, 0, 33, 14), deploy(2, 0, 39, 14), deploy(1, 1, 36, 44)],
                turn(1, 0, movement=[move(0, 33, 30), move(2, 39, 30)]), terrain=terrain)


def _mobility(two_rocks: bool) -> BattleLog:
    terrain = [hill(30, 22, 34, 26, kind="rocks")] + ([hill(40, 22, 44, 26, kind="rocks")] if two_rocks else [])
    return game([inf(0, 0), cav(1, 1)], [deploy(0, 0, 37, 14), deploy(1, 1, 10, 44)],
                turn(1, 0), turn(1, 1, movement=[move(1, 20, 40, 270, distance=8)]),
                turn(2, 0), turn(2, 1, movement=[move(1, 10, 38, 270, distance=8)]), terrain=tuple(terrain))


def _gap(x: float) -> BattleLog:
    return game([inf(0, 0), inf(1, 1)], [deploy(0, 0, x, 9), deploy(1, 1, 36, 44)],
                terrain=(hill(30, 16, 42, 24, kind="woods", name="Thornwood"),))


def _threat360(arc: str) -> BattleLog:
    return game([inf(0, 0), cav(1, 1)], [deploy(0, 0, 36, 20), deploy(1, 1, 36, 34)],
                turn(1, 0), turn(1, 1, movement=charge(1, 0, arc, at=(36, 25, 270))))


def _unmask(to_x: float) -> BattleLog:
    units = [inf(0, 0, models=10, files=10, missile="bow"), inf(2, 0), inf(1, 1)]
    return game(units, [deploy(0, 0, 36, 5), deploy(2, 0, 36, 12), deploy(1, 1, 36, 40)],
                turn(1, 0, movement=[move(2, to_x, 12)], shooting=[volley(0, 1)]))


def _flank_prep(start_x: float) -> BattleLog:
    start_y = 18 if start_x == 36 else 30
    return game([cav(0, 0), inf(1, 1)], [deploy(0, 0, start_x, start_y, 90 if start_x == 36 else 180),
                                        deploy(1, 1, 36, 30)],
                turn(1, 0, movement=[move(0, 46, 31, 180)]), turn(1, 1),
                turn(2, 0, movement=charge(0, 1, "left", at=(40, 30, 180))))


def _advance(moves: bool) -> BattleLog:
    units = [inf(0, 0, files=1), inf(1, 1)]
    t1 = [move(0, 36, 20, files=1, distance=8)] if moves else []
    t2 = [move(0, 36, 20, option="reform_wide", distance=0, rule="CORE.MOVE.REFORM", files=5)] if moves else []
    return game(units, [deploy(0, 0, 36, 12), deploy(1, 1, 36, 44)],
                turn(1, 0, movement=t1), turn(1, 1), turn(2, 0, movement=t2), turn(2, 1))


def _consequence(counter: bool) -> BattleLog:
    units = [inf(0, 0), inf(1, 1), cav(3, 1)]
    red = charge(3, 0, "right", at=(42, 28, 180)) if counter else []
    return game(units, [deploy(0, 0, 36, 20), deploy(1, 1, 36, 34), deploy(3, 1, 50, 30)],
                turn(1, 0, movement=charge(0, 1, "front", at=(36, 28, 90))), turn(1, 1, movement=red))


def _cover_flanks(right_facing: float) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(4, 0), inf(1, 1)]
    return game(units, [deploy(0, 0, 36, 20), deploy(2, 0, 30, 16), deploy(4, 0, 42, 16), deploy(1, 1, 36, 34)],
                turn(1, 0, movement=charge(0, 1, "front", at=(36, 30, 90))), turn(1, 1),
                turn(2, 0, movement=[move(2, 30.5, 30), move(4, 41.5, 30, right_facing)]))


def _pursuer(arc: str) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(1, 1)]
    cc = [E("CORE.CC.SEQUENCE", units=[0, 1]), E("CORE.CC.BREAK_TEST", unit=0, passed=False),
          E("CORE.CC.PURSUE_CHOICE", unit=1, choice="pursue")]
    return game(units, [deploy(0, 0, 36, 20), deploy(2, 0, 46, 16), deploy(1, 1, 36, 30)],
                turn(1, 0), turn(1, 1, combat=cc), turn(2, 0, movement=charge(2, 1, arc, at=(40, 20, 180))))


def _reposition(x_facing: float) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(4, 0), inf(1, 1), inf(3, 1)]
    return game(units, [deploy(0, 0, 20, 20), deploy(2, 0, 46, 20), deploy(4, 0, 54, 20), deploy(1, 1, 20, 34),
                        deploy(3, 1, 50, 30, x_facing)],
                turn(1, 0, movement=charge(0, 1, "front", at=(20, 30, 90))))


def _withdraw(back: bool) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(4, 0), inf(1, 1)]
    return game(units, [deploy(0, 0, 36, 16), deploy(2, 0, 30, 14), deploy(4, 0, 42, 14), deploy(1, 1, 36, 24, 90)],
                turn(1, 0, movement=[move(0, 36, 14, option="backward", distance=4)] if back else []))


def _lure(both: bool) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(4, 0), cav(1, 1)]
    blue = [charge(2, 1, "left", at=(14, 24, 0))] + ([charge(4, 1, "right", at=(26, 24, 180))] if both else [])
    return game(units, [deploy(0, 0, 20, 20), deploy(2, 0, 10, 16), deploy(4, 0, 30, 16), deploy(1, 1, 20, 34)],
                turn(1, 0), turn(1, 1, movement=charge(1, 0, "front", at=(20, 24, 270))), turn(2, 0, movement=blue))


def _pursuit(hold: bool) -> BattleLog:
    units = [inf(0, 0), inf(2, 0), inf(1, 1), inf(3, 1), inf(5, 1)]
    cc = [E("CORE.CC.SEQUENCE", units=[0, 5]), E("CORE.CC.BREAK_TEST", unit=5, passed=False)]
    cc += [E("CORE.CC.PURSUE_CHOICE", unit=0, choice="hold")] if hold else [
        E("CORE.CC.PURSUE_CHOICE", unit=0, choice="pursue"),
        E("CORE.CC.PURSUIT_MOVE", unit=0, roll=8, distance=8.0, x=36, y=40, facing=90)]
    return game(units, [deploy(0, 0, 36, 30), deploy(2, 0, 36, 10), deploy(1, 1, 30, 46), deploy(3, 1, 42, 46),
                        deploy(5, 1, 36, 34)],
                turn(1, 0, combat=cc))


def _shooters_late(late: bool) -> BattleLog:
    units = [inf(0, 0, models=10, missile="bow"), inf(2, 0), inf(4, 0), inf(1, 1)]
    order = [(2, 20), (4, 50), (0, 36)] if late else [(0, 36), (2, 20), (4, 50)]
    return game(units, [deploy(u, 0, x, 9) for u, x in order] + [deploy(1, 1, 36, 30)],
                turn(1, 0, shooting=[volley(0, 1)]))


def _strongest(order: tuple[int, ...]) -> BattleLog:
    units = [inf(0, 0, points=100), inf(2, 0, points=200), inf(4, 0, points=300), inf(1, 1)]
    xs = {0: 12, 2: 36, 4: 60}
    return game(units, [deploy(u, 0, xs[u], 9) for u in order] + [deploy(1, 1, 36, 44)])


def _fast_threat(guard_x: float) -> BattleLog:
    units = [inf(0, 0, models=1, files=1, character=True, general=True, name="General"), inf(2, 0), cav(1, 1)]
    return game(units, [deploy(0, 0, 36, 6), deploy(2, 0, guard_x, 10), deploy(1, 1, 36, 44)],
                *quiet((1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)))


def _hc_shock(fast: bool) -> BattleLog:
    units = [cav(0, 0, rules=("fast_cavalry",) if fast else (), name="Knights"), inf(1, 1), inf(3, 1)]
    return game(units, [deploy(0, 0, 36, 40), deploy(1, 1, 36, 30), deploy(3, 1, 44, 30)],
                turn(1, 0), turn(1, 1), turn(2, 0, movement=charge(0, 1, "rear", at=(36, 36, 270)),
                                            combat=[E("CORE.PSY.PANIC.TEST", unit=3, passed=True)]))


def _spacing(block_y: float) -> BattleLog:
    return game([cav(0, 0), inf(2, 0), inf(1, 1)], [deploy(0, 0, 6, 9), deploy(2, 0, 6 if block_y else 20, block_y or 9),
                                                  deploy(1, 1, 36, 44)])


def _pincers(centre_marches: bool) -> BattleLog:
    units = [cav(0, 0, points=150), cav(2, 0, points=250), inf(4, 0, points=300), inf(6, 0, points=300), inf(1, 1)]
    centre = [move(4, 36, 17, option="march", distance=8, rule="CORE.MOVE.MARCH")] if centre_marches else \
        [move(4, 36, 13)]
    return game(units, [deploy(0, 0, 6, 9), deploy(2, 0, 66, 9), deploy(4, 0, 36, 9), deploy(6, 0, 30, 9),
                        deploy(1, 1, 36, 44)],
                turn(1, 0, movement=centre + [move(2, 66, 25, option="march", distance=16, rule="CORE.MOVE.MARCH")]),
                turn(1, 1))


def _teeth(centre_points: int) -> BattleLog:
    units = [cav(0, 0, points=400), cav(2, 0, points=400), inf(4, 0, points=centre_points), inf(1, 1)]
    return game(units, [deploy(0, 0, 6, 9), deploy(2, 0, 66, 9), deploy(4, 0, 36, 9), deploy(1, 1, 36, 46)],
                turn(1, 0), turn(1, 1), turn(2, 0), turn(2, 1), turn(3, 0, combat=[
                    E("CORE.PSY.FLEE.DESTROYED", unit=1, side=1, destroyed=True, off_table=True)]))


def _refused(refused_advances: bool) -> BattleLog:
    units = [inf(0, 0, points=400), inf(2, 0, points=400), inf(4, 0, points=300), inf(6, 0, points=50), inf(1, 1)]
    t1 = [move(6, 60, 25, distance=8, option="march", rule="CORE.MOVE.MARCH")] if refused_advances else []
    return game(units, [deploy(0, 0, 10, 9), deploy(2, 0, 22, 9), deploy(4, 0, 30, 9), deploy(6, 0, 60, 5),
                        deploy(1, 1, 20, 40)],
                turn(1, 0, movement=t1), turn(1, 1), turn(2, 0), turn(2, 1),
                turn(3, 0, movement=charge(0, 1, None, at=(12, 30, 90))))


def _weakened(arc: str) -> BattleLog:
    units = [inf(0, 0, models=5, points=50, rules=("scouts",), name="Scouts"), inf(2, 0, points=400),
             inf(4, 0, points=400), cav(1, 1)]
    return game(units, [deploy(0, 0, 15, 16), deploy(2, 0, 50, 9), deploy(4, 0, 62, 9), deploy(1, 1, 15, 34)],
                turn(1, 0), turn(1, 1, movement=charge_with(1, 0, flee(0, 1, 15, 8), at=(15, 24, 270))),
                turn(2, 0, movement=charge(2, 1, arc, at=(20, 24, 180))))


def _weakened_driven_off(arc: str) -> BattleLog:
    """:func:`_weakened` where the pursuer, charged at its ``arc`` at turn 2, flees from the charge instead."""
    units = [inf(0, 0, models=5, points=50, rules=("scouts",), name="Scouts"), inf(2, 0, points=400),
             inf(4, 0, points=400), cav(1, 1)]
    return game(units, [deploy(0, 0, 15, 16), deploy(2, 0, 50, 9), deploy(4, 0, 62, 9), deploy(1, 1, 15, 34)],
                turn(1, 0), turn(1, 1, movement=charge_with(1, 0, flee(0, 1, 15, 8), at=(15, 24, 270))),
                turn(2, 0, movement=charge_with(2, 1, flee(1, 2, 28, 24, 0.0), declared=arc, at=(26, 24, 0))))


def _abandoned(shift: bool) -> BattleLog:
    units = [cav(0, 0, points=400), inf(2, 0, points=400), inf(4, 0, points=400), inf(1, 1)]
    t1 = [move(0, 40, 20, option="march", distance=16, rule="CORE.MOVE.MARCH")] if shift else []
    t2 = [move(0, 60, 20, option="march", distance=16, rule="CORE.MOVE.MARCH")] if shift else []
    return game(units, [deploy(0, 0, 6, 9), deploy(2, 0, 50, 9), deploy(4, 0, 62, 9), deploy(1, 1, 36, 44)],
                turn(1, 0, movement=t1), turn(1, 1), turn(2, 0, movement=t2), turn(2, 1))


def _shooters(y2: float, woods: bool = False, facing: float = 90.0) -> BattleLog:
    units = [inf(0, 0, models=10, missile="bow"), inf(2, 0, models=10, missile="bow"), inf(1, 1)]
    terrain = (hill(30, 20, 42, 28, kind="woods"),) if woods else ()
    return game(units, [deploy(0, 0, 36, 9.5, facing), deploy(2, 0, 20, y2, facing), deploy(1, 1, 36, 44)],
                terrain=terrain)


def _irritant(guard_x: float) -> BattleLog:
    units = [inf(0, 0, models=10, points=100, missile="bow", name="Irritant"), inf(2, 0, points=500),
             inf(4, 0, points=500), inf(1, 1, models=10, missile="bow")]
    return game(units, [deploy(0, 0, 6, 6), deploy(2, 0, guard_x, 9), deploy(4, 0, 52, 9), deploy(1, 1, 20, 40)],
                turn(1, 0), turn(1, 1, shooting=[volley(1, 0)]), turn(2, 0), turn(2, 1, shooting=[volley(1, 0)]),
                turn(3, 0), turn(3, 1, shooting=[volley(1, 2)]))


def _bubble(ring: bool) -> BattleLog:
    gen = inf(0, 0, models=1, files=1, character=True, general=True, name="General")
    ring_units = [(2, 36, 13), (4, 30, 10), (6, 42, 10), (8, 36, 7)] if ring else [(2, 60, 10)]
    units = [gen] + [inf(u, 0) for u, _, _ in ring_units] + [inf(1, 1)]
    dep = [deploy(0, 0, 36, 10)] + [deploy(u, 0, x, y) for u, x, y in ring_units] + [deploy(1, 1, 36, 44)]
    t1 = [move(0, 36, 14)] + [move(u, x, y + 4) for u, x, y in ring_units]
    t2 = [move(0, 36, 18)] + [move(u, x, y + 8) for u, x, y in ring_units]
    return game(units, dep, turn(1, 0, movement=t1), turn(1, 1), turn(2, 0, movement=t2), turn(2, 1))


def wm(uid: int, side: int, **kw: Any) -> UnitState:
    """A great cannon: one model on a 2"x4" base."""
    kw.setdefault("missile", "great_cannon")
    return unit(uid, side, "war_machine", models=1, files=1, base=(2.0, 4.0), **kw)


def _sheltered(terrain: bool) -> BattleLog:
    feats = (hill(8, 0, 12, 8, kind="rocks"), hill(14, 0, 24, 4)) if terrain else ()
    return game([wm(0, 0, name="Cannon"), inf(2, 0), inf(1, 1)], [deploy(0, 0, 14, 7), deploy(2, 0, 40, 9),
                                                                 deploy(1, 1, 14, 40)],
                turn(1, 0), turn(1, 1), terrain=feats)


def _guards(guard_x: float) -> BattleLog:
    units = [wm(0, 0, points=100), inf(2, 0, points=100), inf(4, 0, points=400), inf(1, 1)]
    return game(units, [deploy(0, 0, 36, 5), deploy(2, 0, guard_x, 10), deploy(4, 0, 10, 9), deploy(1, 1, 36, 40)])


CASES: dict[str, tuple[Any, Any]] = {
    "flee_to_preserve": (lambda: _flee_to_preserve(True), lambda: _flee_to_preserve(False)),
    "flee_viability_check": (lambda: _flee_viability(34), lambda: _flee_viability(25)),
    "feigned_flight": (lambda: _feigned("left"), lambda: _feigned("front")),
    "scout_decoy_jam": (lambda: _scout_jam(False), lambda: _scout_jam(True)),
    "flanking_charge_bonus": (lambda: _flanking("left"), lambda: _flanking("front")),
    "threat_zone_forecast": (lambda: _threat_zone(10), lambda: _threat_zone(34)),
    "terrain_denial_by_threat": (lambda: _denial(False), lambda: _denial(True)),
    "area_control": (lambda: _area(False, 12.0), lambda: _area(False, 33.0)),
    "herding_corridor": (lambda: _herding(True), lambda: _herding(False)),
    "ranged_area_denial": (lambda: _ranged(1), lambda: _ranged(0)),
    "bait_unit": (lambda: _bait(50), lambda: _bait(200)),
    "terrain_cover_from_ranged": (lambda: _cover(True), lambda: _cover(False)),
    "mobility_denial_terrain": (lambda: _mobility(True), lambda: _mobility(False)),
    "gap_check": (lambda: _gap(12), lambda: _gap(36)),
    "threat_360_check": (lambda: _threat360("front"), lambda: _threat360("rear")),
    "unmask_shooters": (lambda: _unmask(48), lambda: _unmask(38)),
    "position_for_flank_next_turn": (lambda: _flank_prep(36), lambda: _flank_prep(46)),
    "advance_to_expand_control": (lambda: _advance(True), lambda: _advance(False)),
    "charge_consequence_analysis": (lambda: _consequence(False), lambda: _consequence(True)),
    "hold_and_cover_flanks": (lambda: _cover_flanks(90), lambda: _cover_flanks(0)),
    "counter_charge_pursuer": (lambda: _pursuer("right"), lambda: _pursuer("front")),
    "defensive_reposition": (lambda: _reposition(90), lambda: _reposition(270)),
    "withdraw_and_hold_line": (lambda: _withdraw(True), lambda: _withdraw(False)),
    "sacrificial_flank_lure": (lambda: _lure(True), lambda: _lure(False)),
    "restrained_pursuit": (lambda: _pursuit(True), lambda: _pursuit(False)),
    "shooters_deploy_after_targets": (lambda: _shooters_late(True), lambda: _shooters_late(False)),
    "strongest_last": (lambda: _strongest((0, 2, 4)), lambda: _strongest((4, 2, 0))),
    "fast_threat_preparation": (lambda: _fast_threat(36), lambda: _fast_threat(60)),
    "heavy_cavalry_flank_shock": (lambda: _hc_shock(False), lambda: _hc_shock(True)),
    "maneuver_spacing": (lambda: _spacing(0), lambda: _spacing(14)),
    "pincers": (lambda: _pincers(False), lambda: _pincers(True)),
    "flank_teeth": (lambda: _teeth(50), lambda: _teeth(400)),
    "refused_flank": (lambda: _refused(False), lambda: _refused(True)),
    "weakened_flank": (lambda: _weakened("left"), lambda: _weakened("front")),
    "abandoned_flank": (lambda: _abandoned(True), lambda: _abandoned(False)),
    "staggered_shooting_line": (lambda: _shooters(5.5), lambda: _shooters(9.5)),
    "cover_approach_zones": (lambda: _shooters(9.5, woods=True), lambda: _shooters(9.5, woods=True, facing=270)),
    "shooting_lines": (lambda: _shooters(5.5, woods=True), lambda: _shooters(5.5)),
    "sheltered_war_machine": (lambda: _sheltered(True), lambda: _sheltered(False)),
    "guard_balance": (lambda: _guards(36), lambda: _guards(60)),
    "sacrifice_for_deployment": (lambda: _irritant(40), lambda: _irritant(14)),
    "protected_bubble": (lambda: _bubble(True), lambda: _bubble(False)),
}


EXPECTED: dict[str, tuple[Detection, Detection]] = {
    'flee_to_preserve': (
        Detection(True, 2, '1 flee(s) from stronger chargers, 1 rallied (100%); first: U0 #0 fled turn 1, rallied turn 2'),
        Detection(False, None, '1 flee(s) from stronger chargers, 0 rallied (0%)'),
    ),
    'flee_viability_check': (
        Detection(True, 1, '1 flee(s), 0 doomed (P(escape) < 0.2); P(escape) 0.97'),
        Detection(False, None, '1 flee(s), 1 doomed (P(escape) < 0.2); P(escape) 0.08'),
    ),
    'feigned_flight': (
        Detection(True, 2, 'U0 #0 fled from U1 #1 at turn 1; U2 #2 charged it in the left at turn 2'),
        Detection(False, None, 'no flee reaction followed by a flank or rear charge on the charger'),
    ),
    'scout_decoy_jam': (
        Detection(True, 2, 'scout U0 #0 fell back at turn 1; U1 #1 followed, blocked U3 #3 and was shot in the flank by U2 #2 at turn 2'),
        Detection(False, None, 'no scout retreat that jammed the enemy and exposed a flank to shooting'),
    ),
    'flanking_charge_bonus': (
        Detection(True, 1, '1 flank/rear charge(s) landed; flank/rear rate 100% of 1 declared; first: U0 #0 into the left of U1 #1 at turn 1'),
        Detection(False, None, '0 flank/rear charge(s) landed; flank/rear rate 0% of 1 declared'),
    ),
    'threat_zone_forecast': (
        Detection(True, 1, '0 of 4 end-of-move positions inside the enemy threat zone (0%)'),
        Detection(False, None, '2 of 4 end-of-move positions inside the enemy threat zone (50%)'),
    ),
    'terrain_denial_by_threat': (
        Detection(True, 3, 'Watch Hill in friendly control and unoccupied for turns 1-3'),
        Detection(False, None, 'no hill denied for 3 turns'),
    ),
    'area_control': (
        Detection(True, 3, 'control share 0.80, 0.80, 0.80 (mean 0.80, trend +0.00/turn); the line kept out of enemy reach'),
        Detection(False, None, 'control share 0.80, 0.89, 0.89 (mean 0.86, trend +0.04/turn); '
                               '1 move(s) of the line into enemy reach, first U4 #4 at turn 2'),
    ),
    'herding_corridor': (
        Detection(True, 3, 'U1 #1 moved outside our threat zone at turn 1, then U0 #0 charged it (front) at turn 3 with 2 friends in reach'),
        Detection(False, None, 'no enemy herded from a safe lane into a charge'),
    ),
    'ranged_area_denial': (
        Detection(True, 2, '2 of 2 enemy entries into missile range punished next turn (100%)'),
        Detection(False, None, '0 of 2 enemy entries into missile range punished next turn (0%)'),
    ),
    'bait_unit': (
        Detection(True, 2, 'bait U0 #0 (50 pts) charged by U1 #1 at turn 1; U2 #2 charged it (right) at turn 2'),
        Detection(False, None, 'no cheap unit charged and avenged'),
    ),
    'terrain_cover_from_ranged': (
        Detection(True, 1, '2 of 2 exposed end-of-move positions in cover, 0 half-covered (wasted)'),
        Detection(False, None, '0 of 2 exposed end-of-move positions in cover, 0 half-covered (wasted)'),
    ),
    'mobility_denial_terrain': (
        Detection(True, 1, 'chokepoint (37, 22) held at turns 1, 2; U1 #1 went 21" for 6" of progress'),
        Detection(False, None, 'no chokepoint on the table'),
    ),
    'gap_check': (
        Detection(True, 0, 'all 1 mobile units deployed with clear lanes'),
        Detection(False, None, '1 unit(s) deployed behind terrain: U0 #0'),
    ),
    'threat_360_check': (
        Detection(True, 1, 'all 1 enemy charge(s) met the front'),
        Detection(False, None, '1 enemy charge(s) landed in a flank or rear; first: U1 #1 into the rear of U0 #0 at turn 1'),
    ),
    'unmask_shooters': (
        Detection(True, 1, 'U2 #2 moved aside and U0 #0 shot U1 #1 at turn 1'),
        Detection(False, None, "no shooter unmasked by a friend's move"),
    ),
    'position_for_flank_next_turn': (
        Detection(True, 1, 'U0 #0 moved into the left arc of U1 #1 at turn 1 and charged its left at turn 2'),
        Detection(False, None, 'no flank charge prepared by an earlier move'),
    ),
    'advance_to_expand_control': (
        Detection(True, 1, 'mean advance 8.0"; control share 0.41 -> 0.50'),
        Detection(False, None, 'mean advance 0.0"; control share 0.41 -> 0.41'),
    ),
    'charge_consequence_analysis': (
        Detection(True, 1, '0 of 1 charger(s) counter-charged by another enemy next turn (0%)'),
        Detection(False, None, '1 of 1 charger(s) counter-charged by another enemy next turn (100%)'),
    ),
    'hold_and_cover_flanks': (
        Detection(True, 2, 'U2 #2 and U4 #4 covered the flanks of U0 #0 at turn 2'),
        Detection(False, None, 'no charger with both flanks covered'),
    ),
    'counter_charge_pursuer': (
        Detection(True, 2, 'U0 #0 broke at turn 1; pursuer U1 #1 charged in the flank by U2 #2 at turn 2'),
        Detection(False, None, 'no pursuer of a broken friend charged in the flank'),
    ),
    'defensive_reposition': (
        Detection(True, 1, 'after U0 #0 charged at turn 1, U2 #2 and U4 #4 stood out of enemy reach, both threatening U3 #3'),
        Detection(False, None, 'no safe joint threat set up after a charge'),
    ),
    'withdraw_and_hold_line': (
        Detection(True, 1, 'U0 #0 declined a charge and withdrew at turn 1; line of 3 units out of enemy reach'),
        Detection(False, None, 'no withdrawal into a dressed line'),
    ),
    'sacrificial_flank_lure': (
        Detection(True, 2, 'U1 #1 charged U0 #0 at turn 1; then U2 #2, U4 #4 charged it together at turn 2'),
        Detection(False, None, 'no line unit avenged by a combined charge'),
    ),
    'restrained_pursuit': (
        Detection(True, 1, '1 pursuit(s) held back, 0 over-extended pursuit(s)'),
        Detection(False, None, '0 pursuit(s) held back, 1 over-extended pursuit(s)'),
    ),
    'shooters_deploy_after_targets': (
        Detection(True, 0, "shooters' mean deployment index 2.0 vs army 1.0; volleys in 100% of shooter-turns"),
        Detection(False, None, "shooters' mean deployment index 0.0 vs army 1.0; volleys in 100% of shooter-turns"),
    ),
    'strongest_last': (
        Detection(True, 0, 'Spearman rho(points, deployment order) = +1.00 over 3 units'),
        Detection(False, None, 'Spearman rho(points, deployment order) = -1.00 over 3 units'),
    ),
    'fast_threat_preparation': (
        Detection(True, 3, 'no character charged by fast enemies in turns 1-3; guarded at 100% of turn-ends'),
        Detection(False, None, 'no character charged by fast enemies in turns 1-3; guarded at 0% of turn-ends'),
    ),
    'heavy_cavalry_flank_shock': (
        Detection(True, 2, 'Knights #0 charged the rear of U1 #1 at turn 2; 1 enemy Panic test(s) that turn'),
        Detection(False, None, 'no heavy cavalry flank or rear charge'),
    ),
    'maneuver_spacing': (
        Detection(True, 0, 'all 1 fast unit(s) have clear lanes'),
        Detection(False, None, '1 fast unit(s) boxed in: U0 #0'),
    ),
    'pincers': (
        Detection(True, 2, 'fast points on the wings 38% / 62%, infantry in the centre 100%; the centre held; closed in: right wing at turn 1'),
        Detection(False, None, 'fast points on the wings 38% / 62%, infantry in the centre 100%; the centre did not hold (U4 #4 marched at turn 1)'),
    ),
    'flank_teeth': (
        Detection(True, 3, 'points left/centre/right 47%/6%/47%; U1 #1 fled off the table'),
        Detection(False, None, 'deployment: points left/centre/right 33%/33%/33%'),
    ),
    'refused_flank': (
        Detection(True, 3, '96% of the points in the left half, 4% in the right third; 1 refused unit(s) held back, the strong wing attacked at turn 3'),
        Detection(False, None, '96% of the points in the left half, 4% in the right third; U6 #6 left the refused wing at turn 1'),
    ),
    'weakened_flank': (
        Detection(True, 2, '1 unit(s) (6%) with scouts on the left, 94% opposite; U1 #1 followed Scouts #0 and was charged in the left at turn 2'),
        Detection(False, None, '1 unit(s) (6%) with scouts on the left, 94% opposite; no conversion (1 fall-back(s), 1 followed)'),
    ),
    'abandoned_flank': (
        Detection(True, 2, 'decoy left half 33% of the points, mostly fast; the decoys shifted +0.75 W, 100% in the right half after turn 2'),
        Detection(False, None, 'decoy left half 33% of the points, mostly fast; the decoys shifted +0.00 W, 67% in the right half after turn 2; a fast decoy stayed behind'),
    ),
    'staggered_shooting_line': (
        Detection(True, 0, 'shooters\' front edges at 10.5, 6.5" (std 2.0")'),
        Detection(False, None, 'shooters\' front edges at 10.5, 10.5" (std 0.0")'),
    ),
    'cover_approach_zones': (
        Detection(True, 0, '1 of 1 approach zones under fire (100%)'),
        Detection(False, None, '0 of 1 approach zones under fire (0%)'),
    ),
    'shooting_lines': (
        Detection(True, 0, '2 of 3 sub-rules: staggered_shooting_line, cover_approach_zones'),
        Detection(False, None, '1 of 3 sub-rules: staggered_shooting_line'),
    ),
    'sheltered_war_machine': (
        Detection(True, 0, 'Cannon #0 covered on 2 side(s) (left, rear), enemy in its arc at 100% of turns'),
        Detection(False, None, 'Cannon #0 covered on 0 side(s) (none), enemy in its arc at 100% of turns'),
    ),
    'guard_balance': (
        Detection(True, 0, '1 of 1 war machine(s) guarded; guards hold 17% of the points'),
        Detection(False, None, '0 of 1 war machine(s) guarded; guards hold 0% of the points'),
    ),
    'sacrifice_for_deployment': (
        Detection(True, 0, 'isolated Irritant #0 drew 2 of 3 enemy attacks (attention ratio 7.3); 0% of the enemy points moved towards it'),
        Detection(False, None, 'no isolated missile unit or war machine at deployment'),
    ),
    'protected_bubble': (
        Detection(True, 0, 'General #0 ringed >= 270 deg at 100% of snapshots, moved in 100% of turns, alive'),
        Detection(False, None, 'General #0 ringed >= 270 deg at 0% of snapshots, moved in 100% of turns, alive'),
    ),
}


@pytest.mark.parametrize("tid", list(CASES))
def test_detector_on_hand_built_logs(tid):
    positive, negative = CASES[tid]
    assert check(positive(), tid) == EXPECTED[tid][0]
    assert check(negative(), tid) == EXPECTED[tid][1]


def test_a_pursuer_driven_off_by_a_flank_charge_is_a_conversion() -> None:
    """weakened_flank and feigned_flight (tactics.md: a friend "charges E in the flank or rear"): a charge declared
    at the pursuer's flank (CORE.CHARGE.FACING) counts when the pursuer flees from it (CORE.REACT.FLEE) rather
    than being hit; one declared at its front does not."""
    yes = check(_weakened_driven_off("left"), "weakened_flank")
    assert yes == Detection(True, 2, "1 unit(s) (6%) with scouts on the left, 94% opposite; U1 #1 followed Scouts #0 "
                                     "and was driven off by a charge at its left at turn 2")
    assert not check(_weakened_driven_off("front"), "weakened_flank").used
    feigned = check(_weakened_driven_off("rear"), "feigned_flight")
    assert feigned == Detection(True, 2, "Scouts #0 fled from U1 #1 at turn 1; U2 #2 charged at its rear and it fled "
                                         "at turn 2")
    assert not check(_weakened_driven_off("front"), "feigned_flight").used


def test_every_detector_has_a_hand_built_case():
    assert set(CASES) == set(DETECTORS) == set(EXPECTED)


def test_area_control_wants_the_share_as_well() -> None:
    """Out of enemy reach but facing as much cavalry as it fields, blue holds no more than half the control."""
    assert check(_area(True), "area_control") == Detection(
        False, None, "control share 0.50, 0.50, 0.50 (mean 0.50, trend +0.00/turn); the line kept out of enemy reach")


def test_area_control_lets_fast_units_close_up() -> None:
    """A cavalry unit (CAV: it claims space fastest, src L199) moving into the red block's reach does not count."""
    log = game([cav(0, 0), cav(2, 0), inf(1, 1)], [deploy(0, 0, 24, 20), deploy(2, 0, 48, 20), deploy(1, 1, 36, 46)],
               turn(1, 0), turn(1, 1), turn(2, 0, movement=[move(0, 34, 35, distance=17.0)]), *quiet((2, 1), (3, 0), (3, 1)))
    from battleline.tactics.detectors import _entered_reach

    assert [_entered_reach(log, p, 0) for p in log.player_turns(0)] == [[], [0], []]
    assert check(log, "area_control") == Detection(
        True, 3, "control share 0.75, 0.86, 0.86 (mean 0.82, trend +0.05/turn); the line kept out of enemy reach")


def test_area_control_reads_the_reach_a_lasting_spell_leaves() -> None:
    """Curse of Storms halves the red block's M (4 -> 2, reach 10" -> 8") from blue's turn-1 magic phase to its
    turn-2 one: blue's block moving to y 33 (front 9" from red's) stays out of reach, as it would not uncursed."""
    curse = dict(spell="CORE.MAGIC.SPELL.HEAVENS.3", caster=0, target=1)
    started = E("CORE.MAGIC.DURATION", duration="N", mods={"halve_M": 1, "no_march": 1, "no_fly": 1}, started=True, **curse)
    ended = E("CORE.MAGIC.DURATION", ended="next magic phase", **curse)
    units = [cav(0, 0), cav(2, 0), inf(4, 0), inf(1, 1)]
    dep = [deploy(0, 0, 24, 20), deploy(2, 0, 48, 20), deploy(4, 0, 36, 8), deploy(1, 1, 36, 46)]
    log = game(units, dep, turn(1, 0, shooting=[started]), turn(1, 1),
               turn(2, 0, movement=[move(4, 36, 33, distance=25.0)], shooting=[ended]), *quiet((2, 1), (3, 0), (3, 1)))
    from battleline.tactics.detectors import _entered_reach

    turns = log.player_turns(0)
    assert [log.reach(p.end, 1) for p in turns] == [8.0, 10.0, 10.0]
    assert [_entered_reach(log, p, 0) for p in turns] == [[], [], []]
    assert check(log, "area_control").used
    assert not check(_area(False, 33.0), "area_control").used


def test_battle_log_takes_lasting_spells_off_the_final_profiles() -> None:
    """A unit that ends the battle cursed (final M 2, the effect's applied M -2) moved at its own M 4 before."""
    log = BattleLog([], [inf(1, 1, M=2)], effects=[{"target": 1, "applied": {"M": -2}}])
    assert log.units[1].M == 4.0 and log.units[1].reach == 10.0


def test_detectors_look_at_the_side_asked_for():
    log = _flanking("left")
    assert detect(log, "blue")["flanking_charge_bonus"].used
    assert detect(log, 1)["flanking_charge_bonus"] == Detection(False, None, "no charge declared")
    with pytest.raises(ValueError, match="side must be"):
        detect(log, "green")


def test_empty_log_detects_nothing():
    log = BattleLog([], [inf(0, 0), inf(1, 1)])
    found = detect(log, 0)
    assert list(found) == detectable_ids()
    assert not any(d.used for d in found.values())


# ============================================================================ real battles
@pytest.fixture(scope="module")
def real_battle():
    from battleline.training.play import play_battle

    try:
        from battleline.agents.registry import make_agent
    except ImportError:  # pragma: no cover
        pytest.skip("agents.registry is not available")
    return play_battle("pitched_battle", make_agent("pincers", 1), make_agent("refused_flank", 2), seed=3)


def test_detectors_run_on_a_real_battle_and_on_its_replay(real_battle, tmp_path):
    found = [detect(real_battle, side) for side in (0, 1)]
    for side_found in found:
        assert list(side_found) == detectable_ids()
        for d in side_found.values():
            assert isinstance(d.used, bool) and d.evidence
            assert (d.turn is None) == (not d.used)
            assert d.turn is None or 0 <= d.turn <= real_battle.state.max_turns
    text = real_battle.to_json()
    data = json.loads(text)
    data["meta"] = {"players": {"blue": "pincers", "red": "refused_flank"}}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    for again in (path, str(path), json.dumps(data), data):
        assert [detect(again, side) for side in (0, 1)] == found  # deterministic, whatever the input form


def test_fingerprint_is_the_share_of_battles(real_battle):
    one = detect(real_battle, 0)
    fp = fingerprint([real_battle, _flanking("left")], [0, 0])
    assert set(fp) == set(detectable_ids())
    assert fp["flanking_charge_bonus"] == (one["flanking_charge_bonus"].used + 1) / 2
    assert rates([one]) == {tid: float(d.used) for tid, d in one.items()}
    assert fingerprint([], 0) == dict.fromkeys(detectable_ids(), 0.0)
    assert as_scalars({"pincers": 0.5}) == {"tactics/pincers": 0.5}
    with pytest.raises(ValueError, match="fewer sides than battles"):
        fingerprint([real_battle, real_battle], [0])


def test_validation_table_marks_the_checks():
    from battleline.tactics.validate import markdown

    rates_ = {tid: 0.0 for tid in detectable_ids()}
    result = {
        "rates": {"pincers": {**rates_, "pincers": 0.9}, "line_advance": {**rates_, "pincers": 0.1}},
        "games": {"pincers": 10, "line_advance": 10},
        "checks": [{"agent": "pincers", "tactic": "pincers", "own": 0.9, "baseline": 0.1, "ok": True}],
        "failed": [],
    }
    text = markdown(result)
    assert "| **pincers** | deployment | 90% ✓ | 10% |" in text
    assert "- pincers: pincers 90% (target ≥ 80%), line_advance 10% (target ≤ 20%): pass" in text


# ============================================================================ CLI
@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def test_cli_tactics_lists_the_catalogue(runner):
    from battleline.training.cli import app

    result = runner.invoke(app, ["tactics"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "refused_flank" in result.stdout and "early_spell_pressure" in result.stdout
    assert "55 tactics, 43 playable, 42 with a detector" in result.stdout


def test_cli_detect_prints_each_side(runner, real_battle, tmp_path):
    import battleline.training.cli as cli
    from battleline.training.cli import app, write_replay

    path = tmp_path / "r.json"
    write_replay(real_battle, path, {"blue": "pincers", "red": "refused_flank"})
    saved = cli.console.width
    cli.console.width = 250  # the console is made at import, before COLUMNS is set
    try:
        result = runner.invoke(app, ["detect", str(path)], env={"COLUMNS": "250"})
    finally:
        cli.console.width = saved
    assert result.exit_code == 0, result.output
    for side, name in ((0, "blue (pincers)"), (1, "red (refused_flank)")):
        found = detect(real_battle, side)
        used = [tid for tid, d in found.items() if d.used]
        assert f"{name}: {len(used)} of {len(found)} tactics detected" in result.stdout
        for tid in used:
            assert tid in result.stdout
            assert found[tid].evidence in result.stdout
    everything = runner.invoke(app, ["detect", str(path), "--all"], env={"COLUMNS": "250"})
    assert everything.exit_code == 0
    assert all(tid in everything.stdout for tid in detectable_ids())


@pytest.mark.parametrize("content", [None, "{not json", "[1, 2]", '{"format": 1}'])
def test_cli_detect_errors_are_one_line_and_exit_2(runner, tmp_path, content):
    from battleline.training.cli import app

    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    result = runner.invoke(app, ["detect", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output


def test_joined_characters_stand_with_their_host():
    units = [inf(0, 0), inf(1, 0, models=1, files=1, character=True), inf(2, 1)]
    dep = [E("CORE.SETUP.DEPLOY", unit=0, side=0, slot=0, x=30.0, y=9.0, facing=90.0, joined=[1]),
           deploy(2, 1, 36, 40)]
    log = game(units, dep, turn(1, 0, movement=[move(0, 30, 17, distance=8)]))
    assert (log.deployed.poses[1].x, log.deployed.poses[1].y) == (30.0, 9.0)
    assert (log.turns[0].end.poses[1].x, log.turns[0].end.poses[1].y) == (30.0, 17.0)
    assert log.deploy_order[0] == [0]


def test_sacrificial_flank_lure_needs_the_charges_in_one_turn():
    units = [inf(0, 0), inf(2, 0), inf(4, 0), cav(1, 1)]
    log = game(units, [deploy(0, 0, 20, 20), deploy(2, 0, 10, 16), deploy(4, 0, 30, 16), deploy(1, 1, 20, 34)],
               turn(1, 0), turn(1, 1, movement=charge(1, 0, "front", at=(20, 24, 270))),
               turn(2, 0, movement=charge(2, 1, None, at=(14, 22, 0))), turn(2, 1),
               turn(3, 0, movement=charge(4, 1, "right", at=(26, 24, 180))))
    assert check(log, "sacrificial_flank_lure") == Detection(False, None, "no line unit avenged by a combined charge")


def test_vanguard_moves_and_lone_characters_update_positions():
    units = [cav(0, 0), inf(1, 0, models=1, files=1, character=True), inf(2, 1)]
    dep = [E("CORE.SETUP.DEPLOY", unit=0, side=0, slot=0, x=6.0, y=9.0, facing=90.0, joined=[1]),
           E("CORE.SETUP.VANGUARD", unit=0, option="advance", distance=12.0, x=6.0, y=21.0, facing=90.0),
           deploy(2, 1, 36, 40, 270)]
    log = game(units, dep, turn(1, 0, combat=[E("CORE.TYPE.CHARACTER", unit=1, host=0, alone=True, x=7.0, y=20.0)]))
    assert log.deployed.poses[0].y == 21.0 and log.deployed.poses[1].y == 21.0
    end = log.turns[0].end.poses[1]
    assert (end.x, end.y, end.facing) == (7.0, 20.0, 90.0)


def test_fast_threat_preparation_guards_the_wizards_first():
    wizard = inf(3, 0, models=1, files=1, character=True, name="Wizard")
    wizard.wizard_level = 2
    units = [inf(0, 0, models=1, files=1, character=True, general=True, name="General"), inf(2, 0), wizard, cav(1, 1)]
    log = game(units, [deploy(0, 0, 36, 6), deploy(2, 0, 36, 10), deploy(3, 0, 6, 6), deploy(1, 1, 36, 44)],
               *quiet((1, 0), (1, 1), (2, 0), (2, 1), (3, 0), (3, 1)))
    assert check(log, "fast_threat_preparation") == Detection(
        False, None, "no wizard charged by fast enemies in turns 1-3; guarded at 0% of turn-ends")


def test_hit_allocation_events_are_not_volleys():
    units = [inf(0, 0, models=10, missile="bow"), inf(1, 1), inf(2, 1, models=1, files=1, character=True)]
    log = game(units, [deploy(0, 0, 36, 9), deploy(1, 1, 36, 30)],
               turn(1, 0, shooting=[volley(0, 1), E("CORE.SHOOT.ALLOCATE", unit=1, hits=3, rank_and_file=2,
                                                     characters={"2": 1})]))
    assert [v["unit"] for _, _, v in log.volleys] == [0]
    assert detect(log, 1)["sacrifice_for_deployment"].evidence == "no isolated missile unit or war machine at deployment"


def test_protected_bubble_does_not_count_the_unit_a_character_joined():
    gen = inf(0, 0, models=1, files=1, character=True, general=True, name="General")
    units = [gen, inf(2, 0), inf(1, 1)]
    dep = [E("CORE.SETUP.DEPLOY", unit=2, side=0, slot=0, x=36.0, y=9.0, facing=90.0, joined=[0]),
           deploy(1, 1, 36, 44)]
    log = game(units, dep, turn(1, 0, movement=[move(2, 36, 13)]), turn(1, 1))
    assert check(log, "protected_bubble") == Detection(
        False, None, "General #0 ringed >= 270 deg at 0% of snapshots, moved in 100% of turns, alive")


def test_war_machine_shots_are_volleys_and_pivots_turn_the_machine():
    log = game([wm(0, 0), inf(1, 1)], [deploy(0, 0, 36, 5), deploy(1, 1, 36, 40)],
               turn(1, 0, shooting=[E("CORE.WM.MOVE", unit=0, pivot=20.0, free=True, facing=110.0),
                                    E("CORE.WM.FIRE_RULES", unit=0, target=1, machine="great_cannon")]))
    assert [(v["unit"], v["target"]) for _, _, v in log.volleys] == [(0, 1)]
    assert log.turns[0].end.poses[0].facing == 110.0
    assert log.units[0].missile_range == 48.0


def test_sacrifice_irritant_draws_enemy_movement_without_attacks():
    """tactics.md §4.4: enemy points moving towards the irritant (>= 15 %) count even when it is not attacked."""
    units = [inf(0, 0, models=10, points=100, missile="bow", name="Irritant"), inf(2, 0, points=500),
             inf(1, 1, points=300), inf(3, 1, points=700)]
    dep = [deploy(0, 0, 6, 6), deploy(2, 0, 52, 9), deploy(1, 1, 10, 40), deploy(3, 1, 52, 40)]
    drawn = game(units, dep, turn(1, 0), turn(1, 1, movement=[move(1, 8, 34, 270.0)]))
    assert check(drawn, "sacrifice_for_deployment") == Detection(
        True, 0, "isolated Irritant #0 drew 0 of 0 enemy attacks (attention ratio 0.0); "
                 "30% of the enemy points moved towards it")
    away = game(units, dep, turn(1, 0), turn(1, 1, movement=[move(1, 30, 34, 270.0)]))
    assert not check(away, "sacrifice_for_deployment").used


def test_refused_flank_plays_an_army_with_no_fighting_blocks() -> None:
    """An army of characters only has no wing to refuse (``refused_units`` of no units is none); the
    refused_flank agent deploys and plays it to the end instead of failing on an empty choice."""
    from battleline.tactics.deployment import LEFT, refused_units
    from battleline.training.play import play_battle
    from tests.setups import placement, scenario

    assert refused_units([], 100, 72.0, LEFT) == []
    data = scenario([placement("lord_marshal", 36, 10, 90, models=1, files=1)],
                    [placement("orc_warriors", 36, 38, 270)])
    battle = play_battle(data, "refused_flank", "random", seed=0)
    assert battle.result["winner"] in ("blue", "red", "draw") and battle.state.turn >= 1


def test_a_caught_wall_defender_counts_as_destroyed_and_an_escaped_one_does_not() -> None:
    """SIEGE.BREAK.DEFENDER: the detectors count a broken wall defender as destroyed only from the event that says
    ``destroyed`` (caught: a climber rolled more); the roll event of a tie (escaped) removes nobody."""
    log = game([inf(0, 0), inf(1, 1)], [deploy(0, 0, 36, 9), deploy(1, 1, 36, 40)],
               turn(1, 0, combat=[E("SIEGE.BREAK.DEFENDER", unit=1, element="S1", roll=7, pursuit_rolls={"0": 7},
                                    caught=False)]),
               turn(1, 1),
               turn(2, 0, combat=[E("SIEGE.BREAK.DEFENDER", unit=1, element="S1", roll=7, pursuit_rolls={"0": 8},
                                    caught=True),
                                  E("SIEGE.BREAK.DEFENDER", unit=1, side=1, destroyed=True, flee_roll=7,
                                    pursuit_rolls={"0": 8})]))
    assert [(uid, rule, off) for _, uid, rule, off in log.destroyed] == [(1, "SIEGE.BREAK.DEFENDER", False)]
