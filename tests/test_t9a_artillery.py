"""T9A artillery (module ``t9a.artillery``; RULESET.md §6.1 T9A.ART.*, T9A.SHAKEN, CFG.EXCLUSIVE, CFG.SIEGE_T9A).

Exact values with scripted D6 faces (a D3 reads ceil(face / 2)). Geometry: a war machine on one 50×100 mm base
at (36, 10) facing +y, its muzzle at y = 10 + 100 mm / 2; a red block facing −y whose front edge is at
``front_y``. Men (blue) shoot orcs (red) in blue's Shooting phase.
"""

from __future__ import annotations

import math

import pytest

from battleline.env.rules import charges, movement, shooting, war_machines
from battleline.env.rules.actions import Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.siege import castle as cs
from battleline.env.rules.t9a import artillery as art
from tests.setups import INFANTRY_BASE, battle, placement, rules
from tests.test_siege import feed, siege_scenario

ART = ["t9a.artillery"]
MUZZLE_Y = 10 + (100 / 25.4) / 2
CORE_FIRING = set(art.REPLACED)


def machine(unit: str = "great_cannon", x: float = 36.0, y: float = 10.0, facing: float = 90.0) -> dict:
    return placement(unit, x, y, facing, models=3, files=1)


def block(unit: str, front_y: float, models: int = 20, files: int = 5, x: float = 36.0) -> dict:
    depth = math.ceil(models / files) * INFANTRY_BASE
    return placement(unit, x, front_y + depth / 2, 270.0, models=models, files=files)


def shooting_battle(blue: list[dict], red: list[dict], dice: list[int], modules: list[str] | None = None, **kw) -> Battle:
    return battle(blue, red, dice, phase="shooting", modules=ART if modules is None else modules, **kw)


def fired_core(b: Battle) -> set[str]:
    return {e["rule"] for e in b.events} & CORE_FIRING


# --------------------------------------------------------------------- T9A.ART.PROFILES
def test_t9a_art_profiles_values_and_core_machine_mapping() -> None:
    """T9A.ART.PROFILES: bolt thrower 48" S6 AP3 MW(D3) Rank Piercing; cannon 48" S10 AP10 MW(D6) Rank Piercing;
    catapult 12–60" S4[9] AP1[6] Area Attack (3) [MW(D3)]; flamethrower 12" S4{5} AP1{2} Flaming {MW(D3)};
    volley gun 24" S5 AP2 (3D6). Core machines map: great/light cannon → cannon, stone thrower → catapult,
    flame cannon → flamethrower; the t9a block's ``artillery`` overrides (the only way to a volley gun)."""
    p = art.PROFILES
    assert (p["bolt_thrower"].max_range, p["bolt_thrower"].strength, p["bolt_thrower"].ap, p["bolt_thrower"].wounds,
            p["bolt_thrower"].rank_piercing) == (48.0, 6, 3, "d3", True)
    assert (p["cannon"].max_range, p["cannon"].strength, p["cannon"].ap, p["cannon"].wounds, p["cannon"].rank_piercing,
            p["cannon"].ignores_cover, p["cannon"].misfire_on_one) == (48.0, 10, 10, "d6", True, True, True)
    c = p["catapult"]
    assert (c.min_range, c.max_range, c.strength, c.heavy_strength, c.ap, c.heavy_ap, c.area_attack, c.wounds,
            c.heavy_wounds) == (12.0, 60.0, 4, 9, 1, 6, 3, "", "d3")
    f = p["flamethrower"]
    assert (f.max_range, f.strength, f.short_strength, f.ap, f.short_ap, f.wounds, f.short_wounds, f.flaming) == (
        12.0, 4, 5, 1, 2, "", "d3", True)
    assert (p["volley_gun"].max_range, p["volley_gun"].strength, p["volley_gun"].ap, p["volley_gun"].volley_dice) == (
        24.0, 5, 2, 3)
    b = shooting_battle([machine()], [block("wild_orcs", 30.0)], [])
    gun = b.unit(0)
    gun.t9a = {k: v for k, v in gun.t9a.items() if k != "artillery"}  # the core machine's own mapping
    expected = {"great_cannon": "cannon", "light_cannon": "cannon", "stone_thrower": "catapult",
                "bolt_thrower": "bolt_thrower", "flame_cannon": "flamethrower"}
    for missile, name in expected.items():
        gun.missile = missile
        assert art.profile(gun).kind == name
    gun.t9a = {**gun.t9a, "artillery": "volley_gun"}
    assert art.profile(gun).kind == "volley_gun"
    gun.missile, gun.t9a = None, {}
    with pytest.raises(KeyError):
        art.profile(gun)


def test_t9a_art_cannon_hit_rank_piercing_and_cfg_exclusive_once() -> None:
    """T9A.ART.HIT, T9A.ART.RANK_PIERCING, CFG.EXCLUSIVE: a cannon 18" from a 5×4 wild orc block (T4, no armour).

    To hit BS3, no modifier: 4+, face 4 hits. Rank 1: S10 v T4 wounds on 2+ (face 2), Multiple Wounds (D6) face 5
    on a W1 orc: 1 wound, the excess lost; rank 2 at S9: face 3 wounds, D6 face 2; rank 3 at S8: face 1 fails and
    the ball stops. Two orcs die. The second cannon's shot (a miss, face 3) emits no second CFG.EXCLUSIVE; no CORE.WM
    firing, damage or misfire rule fires."""
    b = shooting_battle([machine(), machine(x=20.0)], [block("wild_orcs", 30.0)], [4, 2, 5, 3, 2, 1, 3])
    b.apply(Action("shoot", 0, 2))
    hit = rules(b, "T9A.ART.HIT")[0]
    assert (hit["needed"], hit["roll"], hit["hit"], hit["misfire"], hit["modifier"]) == (4, 4, True, False, 0)
    pierce = rules(b, "T9A.ART.RANK_PIERCING")[-1]
    assert pierce["ranks"] == [{"rank": 1, "strength": 10, "slain": True}, {"rank": 2, "strength": 9, "slain": True},
                               {"rank": 3, "strength": 8, "slain": False}]
    assert [e["rolled"] for e in rules(b, "T9A.AA.MULTIPLE_WOUNDS")] == [[5], [2]]
    assert b.unit(2).models == 18
    prof = rules(b, "T9A.ART.PROFILES")[0]
    assert (prof["profile"], prof["range"], prof["strength"], prof["ap"], prof["multiple_wounds"], prof["reload"]) == (
        "cannon", 48.0, 10, 10, "d6", True)
    b.apply(Action("shoot", 1, 2))
    assert rules(b, "T9A.ART.HIT")[-1]["hit"] is False
    exclusive = rules(b, "CFG.EXCLUSIVE")  # logged once, at the battle's start (env.rules.t9a.start)
    assert len(exclusive) == 1
    replaced = exclusive[0]["replaced"]["t9a.artillery"]
    assert "CORE.WM.CANNON.SHOT" in replaced and "CORE.WM.MISFIRE.CANNON" in replaced
    assert fired_core(b) == set()


def test_core_war_machines_unchanged_without_the_module() -> None:
    """CFG.EXCLUSIVE, the other side: without t9a.artillery a cannon fires by CORE.WM.CANNON.SHOT and no T9A rule fires;
    options (fire mode and aim) are accepted only then."""
    b = shooting_battle([machine()], [block("wild_orcs", 30.0)], [], modules=[])
    b.apply(Action("shoot", 0, 1))
    assert rules(b, "CORE.WM.CANNON.SHOT")
    assert not [e for e in b.events if e["rule"].startswith("T9A.") or e["rule"] == "CFG.EXCLUSIVE"]
    on = shooting_battle([machine()], [block("wild_orcs", 30.0)], [])
    off = shooting_battle([machine()], [block("wild_orcs", 30.0)], [], modules=[])
    assert war_machines.accepts(off, Action("shoot", 0, 1, "shot:10"), off.legal_actions())
    assert not war_machines.accepts(on, Action("shoot", 0, 1, "shot:10"), on.legal_actions())


def test_t9a_art_hit_cannon_natural_one_misfires_malfunction() -> None:
    """T9A.ART.HIT: a cannon's natural 1 is a misfire; T9A.ART.MISFIRE face 5 (Malfunction): the firer loses 1 W,
    no saves — one crew model of three."""
    b = shooting_battle([machine()], [block("wild_orcs", 30.0)], [1, 5])
    b.apply(Action("shoot", 0, 1))
    assert rules(b, "T9A.ART.HIT")[0]["misfire"] is True
    mis = rules(b, "T9A.ART.MISFIRE")[0]
    assert (mis["roll"], mis["value"], mis["result"]) == (5, 5, "malfunction")
    assert b.unit(0).models == 2 and b.unit(1).models == 20 and fired_core(b) == set()


def test_t9a_art_hit_bolt_thrower_natural_one_is_a_plain_miss() -> None:
    """T9A.ART.HIT: only cannons and catapults misfire on a natural 1; a bolt thrower just misses."""
    b = shooting_battle([machine()], [block("wild_orcs", 30.0)], [1])
    b.unit(0).t9a = {**b.unit(0).t9a, "artillery": "bolt_thrower"}
    b.apply(Action("shoot", 0, 1))
    hit = rules(b, "T9A.ART.HIT")[0]
    assert (hit["roll"], hit["hit"], hit["misfire"]) == (1, False, False)
    assert not rules(b, "T9A.ART.MISFIRE") and b.unit(0).models == 3


def test_t9a_art_hit_modifiers_gigantic_cover_and_t9a_long_range() -> None:
    """T9A.ART.HIT: a cannon gets +1 against a unit that is all Gigantic (T9A.SIZE), a bolt thrower does not;
    cannons and catapults ignore cover, a bolt thrower takes the hedge's −1; long range is half the T9A range
    (a light cannon 20" away: core 36" range would give −1, the T9A cannon's 48" none)."""
    hedge = {"kind": "hedge", "polygon": [[26, 20], [46, 20], [46, 20.5], [26, 20.5]]}
    b = shooting_battle([machine()], [block("wild_orcs", MUZZLE_Y + 20.0, models=10, files=10)], [], terrain=[hedge])
    gun, orcs = b.unit(0), b.unit(1)
    gun.missile = "light_cannon"
    _, parts = art.hit_modifier(b, gun, orcs, art.profile(gun))
    assert parts == {"cover_ignored": 0}
    _, core_parts = shooting.to_hit_modifier(b, gun, orcs, False, False)
    assert core_parts == {"long_range": -1, "cover": -1}
    gun.t9a = {**gun.t9a, "artillery": "bolt_thrower"}
    assert art.hit_modifier(b, gun, orcs, art.profile(gun)) == (-1, {"cover": -1})
    orcs.t9a = {**orcs.t9a, "size": "gigantic"}
    assert art.hit_modifier(b, gun, orcs, art.profile(gun)) == (-1, {"cover": -1})
    gun.t9a = {**gun.t9a, "artillery": "cannon"}
    assert art.hit_modifier(b, gun, orcs, art.profile(gun)) == (1, {"cover_ignored": 0, "all_gigantic": 1})


# --------------------------------------------------------------------- T9A.ART.CATAPULT
def test_t9a_art_catapult_hit_area_attack_three_with_one_bracketed_hit() -> None:
    """T9A.ART.CATAPULT: a hit (face 4) on a 5×4 block is Area Attack (3): min(3, 5) × min(3, 4) = 9 hits. One is
    [S9 AP6 MW(D3)]: S9 v T4 face 2 wounds, D3 face 5 = 3 on a W1 orc (1 dealt); 8 at S4: faces 4 4 4 1 1 1 1 1,
    3 wounds. Four orcs die."""
    b = shooting_battle([machine("marcher_mortar")], [block("wild_orcs", 30.0)],
                        [4, 2, 5, 4, 4, 4, 1, 1, 1, 1, 1])
    b.apply(Action("shoot", 0, 1))
    cat = rules(b, "T9A.ART.CATAPULT")
    assert (cat[0]["partial"], cat[0]["area_attack"], cat[0]["hits"], cat[0]["bracketed_hits"]) == (False, 3, 9, 1)
    area = rules(b, "T9A.AA.AREA_ATTACK")  # the catapult's Area Attack (3) is the attribute's arithmetic
    assert [(e["x"], e["files"], e["ranks"], e["hits"]) for e in area] == [(3, 5, 4, 9)]
    batches = [(e["hits"], e["strength"], e["ap"], e["wounds"]) for e in cat[1:]]
    assert batches == [(1, 9, 6, 1), (8, 4, 1, 3)]
    assert b.unit(1).models == 16 and fired_core(b) == set()


def test_t9a_art_catapult_partial_hit_halves_and_drops_brackets() -> None:
    """T9A.ART.CATAPULT: a miss that is no natural 1 (face 2) rolls the Partial Hit: face 5 hits, Area Attack (2)
    = 2 × 2 = 4 hits at ⌈4/2⌉ = S2, ⌈1/2⌉ = AP1, no bracketed rule: S2 v T4 wounds on 6 (faces 6 6 5 1): 2 die."""
    b = shooting_battle([machine("marcher_mortar")], [block("wild_orcs", 30.0)], [2, 5, 6, 6, 5, 1])
    b.apply(Action("shoot", 0, 1))
    cat = rules(b, "T9A.ART.CATAPULT")
    assert (cat[0]["partial"], cat[0]["roll"], cat[0]["hit"], cat[0]["area_attack"], cat[0]["hits"],
            cat[0]["strength"], cat[0]["ap"]) == (True, 5, True, 2, 4, 2, 1)
    assert (cat[1]["hits"], cat[1]["strength"], cat[1]["wounds"], cat[1]["multiple_wounds"]) == (4, 2, 2, None)
    assert [(e["x"], e["hits"]) for e in rules(b, "T9A.AA.AREA_ATTACK")] == [(2, 4)]
    assert b.unit(1).models == 18 and not rules(b, "T9A.AA.MULTIPLE_WOUNDS")


def test_t9a_art_catapult_partial_hit_ignores_misfires() -> None:
    """T9A.ART.CATAPULT: the Partial Hit's natural 1 is only a miss (misfires ignored): nothing happens."""
    b = shooting_battle([machine("marcher_mortar")], [block("wild_orcs", 30.0)], [3, 1])
    b.apply(Action("shoot", 0, 1))
    cat = rules(b, "T9A.ART.CATAPULT")
    assert [(e["partial"], e["roll"], e["hit"], e["hits"]) for e in cat] == [(True, 1, False, 0)]
    assert not rules(b, "T9A.ART.MISFIRE") and b.unit(1).models == 20


def test_t9a_art_catapult_needs_twelve_inches() -> None:
    """T9A.ART.PROFILES: the catapult's 12" minimum: a block 8" away is no target, one 20" away is."""
    near = shooting_battle([machine("marcher_mortar")], [block("wild_orcs", MUZZLE_Y + 8.0)], [])
    far = shooting_battle([machine("marcher_mortar")], [block("wild_orcs", MUZZLE_Y + 20.0)], [])
    assert Action("shoot", 0, 1) not in near.legal_actions()
    assert Action("shoot", 0, 1) in far.legal_actions()


# --------------------------------------------------------------------- T9A.ART.FLAMETHROWER
def _flamer(front_y: float, dice: list[int], models: int = 20, files: int = 5) -> Battle:
    b = shooting_battle([machine()], [block("wild_orcs", front_y, models=models, files=files)], dice)
    b.unit(0).t9a = {**b.unit(0).t9a, "artillery": "flamethrower"}
    return b


def test_t9a_art_flamethrower_short_range_braced_values() -> None:
    """T9A.ART.FLAMETHROWER: D6 face 4 (no misfire); 5" away (short range: ≤ 6") the {S5 AP2 MW(D3)} values; hits =
    D6 3 + one D3 per rank after the first (faces 2 4 6 = 1 + 2 + 3) = 9; S5 v T4 3+: faces 3 3 3 3 1 1 1 1 1 = 4
    wounds, MW(D3) faces 4 4 4 4 (2 each, 1 dealt on W1): 4 orcs die."""
    b = _flamer(MUZZLE_Y + 5.0, [4, 3, 2, 4, 6, 3, 3, 3, 3, 1, 1, 1, 1, 1, 4, 4, 4, 4])
    b.apply(Action("shoot", 0, 1))
    fl = rules(b, "T9A.ART.FLAMETHROWER")
    assert (fl[0]["roll"], fl[0]["arc"], fl[0]["dice"], fl[0]["hits"], fl[0]["short_range"], fl[0]["strength"],
            fl[0]["ap"], fl[0]["multiple_wounds"]) == (4, "front", [3, 1, 2, 3], 9, True, 5, 2, "d3")
    assert (fl[1]["hits"], fl[1]["wounds"]) == (9, 4)
    assert b.unit(1).models == 16 and fired_core(b) == set()


def test_t9a_art_flamethrower_long_range_plain_values_and_caps() -> None:
    """T9A.ART.FLAMETHROWER: 8" away (beyond 6") S4 AP1, no Multiple Wounds; 5×6 = 30 orcs in 6 ranks: at most 4 extra
    D3 (5 ranks after the first); a 5×2 block of 6 models: D6 6 + D3 3 = 9 hits, capped at its 6 models."""
    b = _flamer(MUZZLE_Y + 8.0, [2, 1, 1, 1, 1, 1] + [1] * 5, models=30)
    b.apply(Action("shoot", 0, 1))
    fl = rules(b, "T9A.ART.FLAMETHROWER")[0]
    assert (fl["dice"], fl["hits"], fl["short_range"], fl["strength"], fl["ap"], fl["multiple_wounds"]) == (
        [1, 1, 1, 1, 1], 5, False, 4, 1, None)
    small = _flamer(MUZZLE_Y + 8.0, [2, 6, 6] + [1] * 6, models=10)
    small.unit(1).models = 6
    small.apply(Action("shoot", 0, 1))
    fl = rules(small, "T9A.ART.FLAMETHROWER")[0]
    assert (fl["dice"], fl["hits"]) == ([6, 3], 6)


def test_t9a_art_flamethrower_through_a_flank_counts_files() -> None:
    """T9A.ART.FLAMETHROWER: from the target's flank, a D3 per file after the first: 5 files → 4 D3."""
    blue = [machine(x=30.0, y=40.0, facing=0.0)]
    red = [placement("wild_orcs", 36.0, 40.0, 270.0, models=10, files=5)]
    b = shooting_battle(blue, red, [3, 2, 2, 2, 2, 2] + [1] * 10)
    b.unit(0).t9a = {**b.unit(0).t9a, "artillery": "flamethrower"}
    b.apply(Action("shoot", 0, 1))
    fl = rules(b, "T9A.ART.FLAMETHROWER")[0]
    assert fl["arc"] in ("left", "right") and fl["dice"] == [2, 1, 1, 1, 1] and fl["hits"] == 6


def test_t9a_art_flamethrower_natural_one_misfires_at_minus_one_explosion() -> None:
    """T9A.ART.FLAMETHROWER + T9A.ART.MISFIRE: D6 face 1 misfires; the table's face 1 − 1 = 0 is an Explosion: the
    D6" radius (face 5) reaches the orcs' front rank 5" away (the second rank is 5.79" away): each of its 5 models
    takes an S5 AP2 hit; the machine is removed."""
    b = _flamer(MUZZLE_Y + 5.0, [1, 1, 5] + [1] * 30)
    b.apply(Action("shoot", 0, 1))
    mis = rules(b, "T9A.ART.MISFIRE")[0]
    assert (mis["roll"], mis["modifier"], mis["value"], mis["result"], mis["radius"]) == (1, -1, 0, "explosion", 5)
    assert not b.unit(0).alive and mis["hits"] == {"1": 5}
    blast = [(e["hits"], e["strength"], e["ap"]) for e in rules(b, "T9A.ART.MISFIRE") if "strength" in e]
    assert blast == [(5, 5, 2)]


# --------------------------------------------------------------------- T9A.ART.VOLLEY_GUN
def _volley(dice: list[int]) -> Battle:
    b = shooting_battle([machine()], [block("wild_orcs", MUZZLE_Y + 10.0)], dice)
    b.unit(0).t9a = {**b.unit(0).t9a, "artillery": "volley_gun"}
    return b


def test_t9a_art_volley_gun_one_six_is_minus_one_to_hit() -> None:
    """T9A.ART.VOLLEY_GUN: shot dice 2 3 6 = 11 shots, one natural 6: −1 to hit (BS3: 5+); faces 5 5 5 then 1s: 3 hits;
    S5 v T4 3+: faces 3 3 2: 2 wounds, 2 orcs die."""
    b = _volley([2, 3, 6] + [5, 5, 5] + [1] * 8 + [3, 3, 2])
    b.apply(Action("shoot", 0, 1))
    vg = rules(b, "T9A.ART.VOLLEY_GUN")[0]
    assert (vg["dice"], vg["shots"], vg["sixes"], vg["misfire"], vg["modifier"]) == ([2, 3, 6], 11, 1, False, -1)
    hit = rules(b, "T9A.ART.HIT")[-1]
    assert (hit["needed"], hit["shots"], hit["hits"], hit["parts"]) == (5, 11, 3, {"volley_gun_six": -1})
    assert b.unit(1).models == 18


def test_t9a_art_volley_gun_two_sixes_misfire_and_nothing_fires() -> None:
    """T9A.ART.VOLLEY_GUN: shot dice 6 6 1: a misfire, no shot is fired; T9A.ART.MISFIRE face 2: Shattered."""
    b = _volley([6, 6, 1, 2])
    b.apply(Action("shoot", 0, 1))
    assert rules(b, "T9A.ART.VOLLEY_GUN")[0]["misfire"] is True and not rules(b, "T9A.ART.HIT")
    assert rules(b, "T9A.ART.MISFIRE")[0]["result"] == "shattered" and b.unit(1).models == 20


# --------------------------------------------------------------------- T9A.ART.RANK_PIERCING
def test_t9a_art_rank_piercing_bolt_stops_at_a_survivor_and_goes_by_files_through_a_flank() -> None:
    """T9A.ART.RANK_PIERCING: a bolt (S6 AP3; to hit face 4) from the flank of a 5-file, 2-rank block goes file by
    file: file 1 at S6 (S6 v T4 2+: face 2; D3 face 1) slain; file 2 at S5 (3+: face 2 fails): the bolt stops.
    Orc warriors' light armour and shield (core 5+) worsen by S − 3 to 8+: no save die."""
    blue = [machine(x=26.0, y=40.0, facing=0.0)]
    red = [placement("orc_warriors", 36.0, 40.0, 270.0, models=10, files=5)]
    b = shooting_battle(blue, red, [4, 2, 1, 2])
    b.unit(0).t9a = {**b.unit(0).t9a, "artillery": "bolt_thrower"}
    b.apply(Action("shoot", 0, 1))
    pierce = rules(b, "T9A.ART.RANK_PIERCING")[-1]
    assert pierce["through"] in ("left", "right")
    assert pierce["ranks"] == [{"rank": 1, "strength": 6, "slain": True}, {"rank": 2, "strength": 5, "slain": False}]
    assert b.unit(1).models == 9


def test_t9a_armour_save_uses_ap_with_equipment() -> None:
    """T9A.ART.PROFILES AP with t9a.equipment: the save is 7 − (Armour − AP) (T9A.ARMOUR.VALUE), S does not
    modify it: orc warriors (light 1 + shield 1 = 2) hit by a catapult Partial Hit (S2 AP1) save on 6+, and by
    S6 AP1 also on 6+; without equipment the core save (light + shield 5+) with the core S modifier: S6 → none."""
    needed = []
    for modules, strength in ((["t9a.artillery", "t9a.equipment"], 2), (["t9a.artillery", "t9a.equipment"], 6),
                              (["t9a.artillery"], 6)):
        b = shooting_battle([machine()], [block("orc_warriors", 30.0)], [6, 6, 6, 6], modules=modules)
        art._wound(b, b.unit(0), b.unit(1), 2, art.Shot(strength, 1), "T9A.ART.CATAPULT")
        needed.append(rules(b, "T9A.ART.CATAPULT")[-1]["armour_needed"])
    assert needed == [6, 6, 7]


# --------------------------------------------------------------------- T9A.ART.MISFIRE and T9A.SHAKEN
@pytest.mark.parametrize(("face", "modifier", "result"), [
    (1, -1, "explosion"), (1, 0, "shattered"), (2, 0, "shattered"), (3, 0, "jammed"), (4, 0, "jammed"),
    (5, 0, "malfunction"), (6, 0, "malfunction"), (5, -1, "jammed")])
def test_t9a_art_misfire_table_rows(face: int, modifier: int, result: str) -> None:
    """T9A.ART.MISFIRE: D6 + modifier: ≤0 explosion, 1–2 shattered, 3–4 jammed, 5–6 malfunction."""
    b = shooting_battle([machine()], [block("wild_orcs", 40.0)], [face, 1])
    assert art.misfire(b, b.unit(0), modifier) == result
    assert rules(b, "T9A.ART.MISFIRE")[0]["value"] == face + modifier


def test_t9a_art_misfire_shattered_never_shoots_again() -> None:
    """T9A.ART.MISFIRE 1–2 (Shattered): the weapon may never shoot again: no shots now or in a later turn."""
    b = shooting_battle([machine()], [block("wild_orcs", 30.0)], [2])
    gun = b.unit(0)
    art.misfire(b, gun)
    assert not art.legal_shots(b, gun) and not shooting.may_fire(b, gun)
    b.state.turn += 3
    assert not shooting.may_fire(b, gun)


def test_t9a_shaken_after_jammed_forbids_shooting_until_end_of_next_own_turn() -> None:
    """T9A.ART.MISFIRE 3–4 on a War Machine: Shaken (T9A.SHAKEN) until the end of its controller's next turn: in
    blue's turn 1 (the misfire), red's turn 1 and blue's turn 2 it is Shaken and may not shoot; from red's turn 2 it
    is not, and in blue's turn 3 it shoots again."""
    b = shooting_battle([machine("marcher_mortar")], [block("wild_orcs", 30.0)], [1, 3])
    b.apply(Action("shoot", 0, 1))
    gun = b.unit(0)
    assert rules(b, "T9A.ART.MISFIRE")[0]["result"] == "jammed"
    sh = rules(b, "T9A.SHAKEN")[0]
    assert (sh["unit"], sh["until_turn"], sh["cause"]) == (0, 2, "T9A.ART.MISFIRE")
    assert (b.state.turn, b.state.active) == (1, 1) and art.shaken(b, gun)  # red's turn 1: still Shaken
    gun.flags.clear()
    b.state.turn, b.state.active = 2, 0
    assert art.shaken(b, gun) and not shooting.may_fire(b, gun)
    assert all(a.unit != 0 for a in shooting.legal(b))
    b.state.active = 1
    assert not art.shaken(b, gun)
    b.state.turn, b.state.active = 3, 0
    assert not art.shaken(b, gun) and shooting.may_fire(b, gun)


def test_t9a_shaken_unit_may_not_march_or_declare_charges() -> None:
    """T9A.SHAKEN: a Shaken unit may not march or declare charges (legal-action generation); the same unit in a
    core battle (module off) may: the mark means nothing there."""
    for modules, shaken in ((ART, True), ([], False)):
        b = battle([placement("marcher_spearmen", 36, 10, 90)], [block("wild_orcs", 20.0)], [], phase="movement",
                   modules=modules)
        spear = b.unit(0)
        spear.marks["t9a_shaken_until"] = 2 * b.state.turn + 1
        declared = [a for a in charges.legal_declarations(b) if a.unit == 0]
        assert (declared == []) is shaken
        assert art.forbids(b, spear, "charge") is shaken
        b.state.phase = "movement"
        moves = {a.option for a in movement.legal(b) if a.unit == 0}
        assert any(o.startswith("march") for o in moves) is not shaken


# --------------------------------------------------------------------- CFG.SIEGE_T9A
def _siege(unit: str, dice: list[int]) -> Battle:
    scen = siege_scenario([machine(unit)], [placement("orc_warriors", 45.5, 30.394, 270, models=10, files=10)],
                          defender="red", player="blue")
    scen["modules"] = ["siege", "t9a.artillery"]
    return Battle.from_scenario(scen, seed=0, dice=ScriptedDice(dice, then_seed=0))


def test_cfg_siege_t9a_cannon_base_is_s_plus_rolled_multiple_wounds() -> None:
    """CFG.SIEGE_T9A: a T9A to-hit roll (face 4, BS3 4+) lands the cannon's shot; the base is S10 + MW(D6) face 4 =
    14: the wall shakes (+1). No double charge is offered (it needs the artillery dice)."""
    b = _siege("great_cannon", [])
    opts = {a.option for a in b.legal_actions() if a.kind == "shoot" and a.target is None}
    assert "element:S2" in opts and not any(o.startswith("double_charge:") for o in opts)
    feed(b, [4, 4])
    b.apply(Action("shoot", 0, None, "element:S2"))
    ev = rules(b, "CFG.SIEGE_T9A")[0]
    assert (ev["hit"], ev["strength"], ev["rolled"], ev["base"]) == (True, 10, 4, 14)
    assert rules(b, "SIEGE.DMG.VALUE")[-1]["row"] == "shakes" and cs.element(b.state, "S2").damage_bonus == 1
    assert not rules(b, "SIEGE.DMG.CANNON") and fired_core(b) == set()


def test_cfg_siege_t9a_a_missed_cannon_does_nothing_and_a_one_misfires() -> None:
    """CFG.SIEGE_T9A: face 3 misses (no damage); face 1 misfires on the T9A table (face 6: Malfunction)."""
    b = _siege("great_cannon", [])
    feed(b, [3])
    b.apply(Action("shoot", 0, None, "element:S2"))
    assert rules(b, "CFG.SIEGE_T9A")[0]["hit"] is False and not rules(b, "SIEGE.DMG.VALUE")
    b2 = _siege("great_cannon", [])
    feed(b2, [1, 6])
    b2.apply(Action("shoot", 0, None, "element:S2"))
    assert rules(b2, "T9A.ART.MISFIRE")[0]["result"] == "malfunction" and b2.unit(0).models == 2


def test_cfg_siege_t9a_catapult_bracketed_hit_and_partial_hit() -> None:
    """CFG.SIEGE_T9A: a catapult hit uses [S9] + [MW(D3)] face 6 = 3: base 12 (no effect); a Partial Hit (first face
    2, second 4) uses ⌈4/2⌉ = 2 and no Multiple Wounds: base 2."""
    b = _siege("marcher_mortar", [])
    feed(b, [4, 6])
    b.apply(Action("shoot", 0, None, "element:S2"))
    ev = rules(b, "CFG.SIEGE_T9A")[0]
    assert (ev["partial"], ev["strength"], ev["rolled"], ev["base"]) == (False, 9, 3, 12)
    b2 = _siege("marcher_mortar", [])
    feed(b2, [2, 4])
    b2.apply(Action("shoot", 0, None, "element:S2"))
    ev = rules(b2, "CFG.SIEGE_T9A")[0]
    assert (ev["partial"], ev["strength"], ev["rolled"], ev["base"]) == (True, 2, 0, 2)
    assert rules(b2, "SIEGE.DMG.VALUE")[-1]["row"] == "no_effect"
