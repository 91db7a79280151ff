"""Exact-value tests pinning psychology and shooting rules (CORE.PSY.*, CORE.SHOOT.*) found wrong in review."""

from __future__ import annotations

import dataclasses

import pytest

from battleline.env.rules import geometry as geo
from battleline.env.rules import psychology, shooting, space
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import ScriptedDice
from tests.setups import INFANTRY_BASE, battle, placement, rules

XBOW_DEPTH = 2 * INFANTRY_BASE  # 10 crossbowmen in 5 files


# --------------------------------------------------------------------- CORE.TERRAIN.COVER (shooting modifier)
def _cover_battle(hedge_half_width: float) -> Battle:
    """10 crossbowmen at (36, 10) facing a 10-file, 2-rank orc line 10" away; a hedge centred on the line of fire."""
    depth2 = 2 * INFANTRY_BASE
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement("orc_warriors", 36, 10 + XBOW_DEPTH / 2 + 10.0 + depth2 / 2, 270, models=20, files=10)]
    hedge = {"kind": "hedge", "polygon": [[36 - hedge_half_width, 16], [36 + hedge_half_width, 16],
                                          [36 + hedge_half_width, 16.5], [36 - hedge_half_width, 16.5]]}
    return battle(blue, red, phase="shooting", terrain=[hedge])


def test_cover_needs_half_the_models_behind_the_feature() -> None:
    """CORE.TERRAIN.COVER: a narrow hedge that hides only the 4 centre models of 20 gives no cover (< half)."""
    b = _cover_battle(0.3)
    mod, parts = shooting.to_hit_modifier(b, b.unit(0), b.unit(1), False, False)
    assert "cover" not in parts and mod == 0


def test_cover_when_half_the_models_are_behind_the_feature() -> None:
    """CORE.TERRAIN.COVER: a hedge that hides every model gives soft cover, −1."""
    b = _cover_battle(5.0)
    mod, parts = shooting.to_hit_modifier(b, b.unit(0), b.unit(1), False, False)
    assert parts == {"cover": -1} and mod == -1


# --------------------------------------------------------------------- CORE.SHOOT.ALLOCATE -> CORE.SAVE.NONE
def test_flaming_shot_allocated_to_a_joined_character_allows_no_armour_save() -> None:
    """CORE.SHOOT.ALLOCATE, CORE.SAVE.NONE: a Flaming hit that a 6 puts on a joined character allows no armour save.

    10 irondrakes (BS3, flaming handguns S4, Armour Piercing) shoot 4 spearmen with a joined captain (T4, W2,
    heavy armour and shield: 4+, worsened to 6+): 1 hit (4+), allocation die 6 -> the captain; to wound 4
    (S4 v T4: 4+) -> 1 wound, and no armour save (a 6 would have saved it).
    """
    scen = {
        "id": "t", "name": "t", "terrain": [],
        "blue": {"faction": "dwarfs", "placements": [placement("irondrakes", 36, 10, 90, models=10)]},
        "red": {"faction": "men", "placements": [
            placement("marcher_spearmen", 36, 10 + XBOW_DEPTH / 2 + 8.0 + INFANTRY_BASE / 2, 270, models=10, files=10),
            placement("marcher_captain", 0, 0, 90, models=1, files=1, joins=0, options=["shield"])]},
        "start": {"turn": 1, "phase": "shooting", "player": "blue"},
    }
    dice = [4] + [1] * 9 + [6] + [4] + [6]  # to hit, allocation, to wound, (an armour save die, if any)
    b = Battle.from_scenario(scen, seed=0, dice=ScriptedDice(dice, then_seed=0))
    b.unit(1).models = 4  # 4 R&F left: fewer than 5
    b.apply(Action("shoot", 0, 1))
    captain = b.unit(2)
    assert captain.wounds_taken == 1 and captain.in_play
    assert not [e for e in rules(b, "CORE.SAVE.MODIFIERS") if e.get("unit") == 2 and e.get("saved")]
    assert any(e.get("unit") == 2 for e in rules(b, "CORE.SAVE.NONE"))


# --------------------------------------------------------------------- CORE.PSY.STUPIDITY: nearest by footprint
def test_stupid_unit_moves_towards_the_enemy_nearest_by_footprint() -> None:
    """CORE.PSY.STUPIDITY with CORE.CONV.DISTANCE: "nearest" is footprint to footprint, not centre to centre.

    Trolls at (36, 30). A: 20 spearmen in 2 files at (48, 30) facing them: centres 12" apart, edges ~5.7".
    B: a lone captain at (36, 20): centres 10" apart, edges ~8.8". The trolls fail (12 > Ld 4) and go for A.
    """
    blue = [placement("marcher_spearmen", 48, 30, 180, models=20, files=2),
            placement("marcher_captain", 36, 20, 90, models=1, files=1)]
    red = [placement("cave_trolls", 36, 30, 270, models=3, files=3)]
    b = battle(blue, red, dice=[6, 6, 3], phase="start", player="red")
    (move,) = [e for e in rules(b, "CORE.PSY.STUPIDITY") if "towards" in e]
    assert move["towards"] == 0 and move["roll"] == 3


def test_failed_rally_flees_from_the_nearest_enemy_ties_at_random() -> None:
    """CORE.MOVE.COMPULSORY: a unit that fails to rally flees from the nearest non-fleeing enemy; a tie is random.

    Spearmen at (36, 20) fail to rally (6 + 6 = 12 > Ld 7). Orcs at (26, 20) and (46, 20) are both 6.06" away,
    edge to edge. The tie D6: 5 names no one (re-rolled), 2 names the second (uid 2, on the right), so the
    spearmen flee 2D6 = 2" to the left.
    """
    blue = [placement("marcher_spearmen", 36, 20, 90, fleeing=True)]
    red = [placement("orc_warriors", 26, 20, 90), placement("orc_warriors", 46, 20, 90)]
    b = battle(blue, red, phase="start", dice=[6, 6, 5, 2, 1, 1])
    (flee,) = [e for e in rules(b, "CORE.MOVE.COMPULSORY") if e.get("flee")]
    assert flee["roll"] == 2 and flee["x"] == pytest.approx(34.0) and flee["y"] == pytest.approx(20.0)
    assert [r["dice"] for r in b.events if r["rule"] == "CORE.MOVE.COMPULSORY" and r.get("kind") == "dice"] == [[5], [2], [1, 1]]


# --------------------------------------------------------------------- CORE.PSY.FLEE.MOVE: "moves on until clear"
def test_flee_moves_on_only_until_one_inch_clear() -> None:
    """CORE.PSY.FLEE.MOVE, CORE.CONV.UNITS: a flee move that ends within 1" of a unit moves on exactly until clear.

    20 spearmen (5 files, 3.94" x 3.15") at (20, 10) flee 7" (3 + 4) straight up the table. Orcs stand beside the
    path, 0.5" to the side, their far end at y = 17.5. Clear means the rear edge is √(1 − 0.5²) = 0.866" past
    y = 17.5, so the centre ends at y = 17.5 + 0.866 + 1.575 and the move is 9.941", not a 0.5" step further.
    """
    w = 5 * INFANTRY_BASE
    d4 = 4 * INFANTRY_BASE
    orc_depth = 7 * INFANTRY_BASE  # 14 orcs in 2 files
    orc_x = 20 + w / 2 + 0.5 + INFANTRY_BASE  # 0.5" to the right of the fleeing column
    blue = [placement("marcher_spearmen", 20, 10, 90)]
    red = [placement("orc_warriors", orc_x, 17.5 - orc_depth / 2, 90, models=14, files=2)]
    b = battle(blue, red, phase="shooting", dice=[3, 4])
    u = b.unit(0)
    psychology.flee(b, u, (20.0, 5.0), "CORE.PSY.PANIC.FAIL")
    (move,) = rules(b, "CORE.PSY.FLEE.MOVE")
    expected = 17.5 + (1 - 0.5**2) ** 0.5 + d4 / 2 - 10
    assert move["distance"] == pytest.approx(expected, abs=1e-3)
    gap = geo.distance(space.footprint(u), space.footprint(b.unit(1)))
    assert gap == pytest.approx(1.0, abs=1e-3) and gap >= 1.0 - geo.EPS


# --------------------------------------------------------------------- CORE.SR.MULTIPLE_SHOTS
def test_multiple_shots_not_taken_when_they_cannot_hit() -> None:
    """CORE.SR.MULTIPLE_SHOTS: "1 shot, or N shots at −1 each"; the engine must not take N impossible shots.

    BS 2 pistoliers (Multiple Shots ×2) at a lone orc warlord behind a wall, beyond half range (pistol 8"):
    −1 long range, −2 hard cover, −1 single model = −4, so one shot needs 7 − 2 + 4 = 9 (a 6 then a 6),
    while two shots at −1 would need 10 (impossible). Each model takes its single shot: 6, 6 -> 1 hit.
    """
    wall = {"kind": "wall", "polygon": [[34, 16.2], [38, 16.2], [38, 16.5], [34, 16.5]]}
    blue = [placement("pistoliers", 36, 10, 90, models=5, files=5)]
    red = [placement("orc_warlord", 36, 10 + 1.0 + 5.5 + 0.5, 270, models=1, files=1)]
    b = battle(blue, red, phase="shooting", terrain=[wall], dice=[6, 6])
    u = b.unit(0)
    u.models = 1  # one pistolier left
    u.profile = dataclasses.replace(u.profile, BS=2)
    mod, parts = shooting.to_hit_modifier(b, u, b.unit(1), False, False)
    assert parts == {"long_range": -1, "cover": -2, "single_model": -1}
    shooting.resolve_fire(b, u, b.unit(1))
    (hit,) = rules(b, "CORE.SHOOT.TO_HIT")
    assert hit["shots"] == 1 and hit["needed"] == 9 and hit["hits"] == 1
    assert not rules(b, "CORE.SR.MULTIPLE_SHOTS")


def test_shot_chance_table() -> None:
    """CORE.SHOOT.TO_HIT: the chance of one shot by the score needed (2+ is 5/6: a natural 1 misses)."""
    from battleline.env.rules.tables import shot_chance

    assert [shot_chance(n) for n in (1, 2, 4, 6, 7, 8, 9, 10)] == [5 / 6, 5 / 6, 3 / 6, 1 / 6, 3 / 36, 2 / 36, 1 / 36, 0]


# --------------------------------------------------------------------- CORE.PSY.FLEE.MOVE -> CORE.TERRAIN.DANGEROUS
def test_chariot_fleeing_through_an_enemy_takes_d6_wounds_on_a_1() -> None:
    """CORE.PSY.FLEE.MOVE, CORE.TERRAIN.DANGEROUS: a model fleeing through an enemy tests; a chariot takes D6 W on a 1.

    A boar chariot (W4) at (36, 30) flees 3D6 drop lowest = 6 + 6 = 12" away from (36, 40), through spearmen at
    (36, 22). Its dangerous terrain D6 is a 1, and the D6 of wounds a 3: 3 wounds, no save.
    """
    blue = [placement("marcher_spearmen", 36, 22, 90)]
    red = [placement("boar_chariot", 36, 30, 270, models=1, files=1)]
    b = battle(blue, red, phase="shooting", dice=[6, 6, 1, 1, 3])
    chariot = b.unit(1)
    psychology.flee(b, chariot, (36.0, 40.0), "CORE.PSY.PANIC.FAIL")
    (dt,) = rules(b, "CORE.TERRAIN.DANGEROUS")
    assert dt["unit"] == 1 and dt["enemy"] == 0 and dt["wounds"] == 3
    assert chariot.in_play and chariot.wounds_taken == 3


def test_stupid_unit_moves_towards_the_nearest_enemy_even_if_it_flees() -> None:
    """CORE.PSY.STUPIDITY: "towards the nearest enemy" names no exception (CORE.MOVE.COMPULSORY says
    "non-fleeing"): trolls at (36, 30) go for fleeing spearmen 8" to the south, not the captain 10" north."""
    blue = [placement("marcher_spearmen", 36, 30 - 0.79 - 8.0 - 1.575, 90, fleeing=True),
            placement("marcher_captain", 36, 30 + 0.79 + 10.0 + 0.39, 270, models=1, files=1)]
    red = [placement("cave_trolls", 36, 30, 270, models=3, files=3)]
    b = battle(blue, red, dice=[6, 6, 3], phase="start", player="red")
    (move,) = [e for e in rules(b, "CORE.PSY.STUPIDITY") if "towards" in e]
    assert move["towards"] == 0 and move["distance"] == pytest.approx(3.0)


# --------------------------------------------------------------------- CORE.PSY.PANIC.EXEMPT is logged
def test_panic_exemption_is_logged_with_its_reason() -> None:
    """CORE.PSY.PANIC.EXEMPT: a unit that may not test says why: already tested this phase, fleeing, engaged."""
    b = battle([placement("marcher_crossbowmen", 36, 10, 90, models=10)],
               [placement("orc_warriors", 36, 30, 270)], phase="shooting", dice=[1, 2])
    t = b.unit(1)
    psychology.panic_test(b, t, (36.0, 10.0), "CORE.PSY.PANIC.TRIGGER_DESTROYED")
    psychology.panic_test(b, t, (36.0, 10.0), "CORE.PSY.PANIC.TRIGGER_CASUALTIES")
    t.fleeing = True
    psychology.panic_test(b, t, (36.0, 10.0), "CORE.PSY.PANIC.TRIGGER_BREAK")
    assert len(rules(b, "CORE.PSY.PANIC.TEST")) == 1
    assert [(e["unit"], e["trigger"], e["reason"]) for e in rules(b, "CORE.PSY.PANIC.EXEMPT")] == [
        (1, "CORE.PSY.PANIC.TRIGGER_CASUALTIES", "tested_this_phase"), (1, "CORE.PSY.PANIC.TRIGGER_BREAK", "fleeing")]
