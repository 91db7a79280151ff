"""War machines, monsters and chariots: exact values with scripted dice (RULESET.md §3.6, CORE.WM.*).

Dice: the artillery die is one D6 (faces 1..5 show 2, 4, 6, 8, 10; 6 shows
MISFIRE) and the scatter die one D6 (1–4 ARROW, 5–6 HIT) followed by its
direction in degrees (env.rules.dice). Geometry: a machine stands on one
50×100 mm base; its muzzle is the middle of its front edge.
"""

from __future__ import annotations

import math

import pytest

from battleline.env.rules import monsters, psychology, shooting, templates, war_machines
from battleline.env.rules.actions import END_PHASE, Action, IllegalActionError
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import HIT, MISFIRE, Dice, ScriptedDice
from tests.setups import INFANTRY_BASE, end_declarations, placement, rules
from tests.setups import scenario as base_scenario

MACHINE_W, MACHINE_D = 50 / 25.4, 100 / 25.4
MUZZLE_Y = 10 + MACHINE_D / 2  # a machine centred at y = 10 facing +y (90°)


def battle(blue: list[dict], red: list[dict], dice: list[float], phase: str = "shooting", player: str = "blue",
           blue_faction: str = "men", red_faction: str = "orcs") -> Battle:
    scen = base_scenario(blue, red, phase=phase, player=player)
    scen["blue"]["faction"], scen["red"]["faction"] = blue_faction, red_faction
    return Battle.from_scenario(scen, seed=0, dice=ScriptedDice(dice, then_seed=0))


def machine(unit: str, x: float = 36.0, y: float = 10.0, facing: float = 90.0, crew: int = 3) -> dict:
    return placement(unit, x, y, facing, models=crew, files=1)


def block(unit: str, front_y: float, models: int = 20, files: int = 5, facing: float = 270.0, x: float = 36.0) -> dict:
    """A ranked block centred on x whose front edge is at ``front_y``, facing down (270°) or up (90°)."""
    depth = math.ceil(models / files) * INFANTRY_BASE
    y = front_y + depth / 2 if facing == 270.0 else front_y - depth / 2
    return placement(unit, x, y, facing, models=models, files=files)


# --------------------------------------------------------------------- dice and profiles
def test_artillery_and_scatter_dice_read_d6_faces() -> None:
    """CORE.DICE.ARTILLERY: faces 2, 4, 6, 8, 10, MISFIRE; CORE.DICE.SCATTER: 4 ARROW, 2 HIT, a direction."""
    d = ScriptedDice([1, 2, 3, 4, 5, 6, 4, 135, 5, 30])
    assert [d.artillery("CORE.WM.CANNON.SHOT") for _ in range(6)] == [2, 4, 6, 8, 10, MISFIRE]
    assert d.scatter("CORE.WM.STONE.AIM") == ("ARROW", 135.0)
    assert d.scatter("CORE.WM.STONE.AIM") == (HIT, 30.0)
    real = Dice(7)
    assert {real.artillery("CORE.WM.CANNON.SHOT") for _ in range(200)} == {2, 4, 6, 8, 10, MISFIRE}
    kinds = [real.scatter("CORE.WM.STONE.AIM") for _ in range(300)]
    assert 60 <= sum(k == HIT for k, _ in kinds) <= 140 and all(0 <= t < 360 for _, t in kinds)


def test_machine_profile_base_and_unit_strength() -> None:
    """CORE.WM.PROFILES (machine T 7, crew T 3), CORE.GEO.BASES (one 50×100 base, US = crew alive)."""
    b = battle([machine("great_cannon")], [block("orc_warriors", 40)], [])
    cannon = b.unit(0)
    assert (cannon.models, cannon.profile.T, cannon.marks["crew_T"], cannon.profile.BS) == (3, 7, 3, 3)
    assert (cannon.width, cannon.depth, cannon.ranks) == pytest.approx((MACHINE_W, MACHINE_D, 1))
    assert cannon.unit_strength == 3 and cannon.has("slow_to_fire")
    cannon.models = 1
    assert cannon.unit_strength == 1 and cannon.depth == pytest.approx(MACHINE_D)
    assert war_machines.move_allowance(cannon) == 2.0  # CORE.WM.MOVE: 4 − 2 crew lost


# --------------------------------------------------------------------- cannon
def _cannon_at_block(dice: list[float], option: str) -> Battle:
    b = battle([machine("great_cannon")], [block("orc_warriors", 30.0)], dice)
    b.apply(Action("shoot", 0, 1, option))
    return b


def test_cannon_ball_bounces_through_every_rank_in_line() -> None:
    """CORE.WM.CANNON.SHOT: aim 10", N = 4 lands at 14" from the muzzle; bounce 8" runs through all 4 ranks.

    The line of fire runs down the middle file of a 5×4 block 18.03" away: each rank loses one model
    to an S10 hit (D6 wounds on W1 models: one model each, the excess lost).
    """
    b = _cannon_at_block([2, 4, 2, 2, 2, 2, 6, 1, 3, 3], "shot:10")
    (ev,) = rules(b, "CORE.WM.CANNON.SHOT")
    assert (ev["roll"], ev["bounce"], ev["buried"]) == (4, 8, False)
    assert ev["landing"] == pytest.approx([36.0, MUZZLE_Y + 14.0])
    assert ev["end"] == pytest.approx([36.0, MUZZLE_Y + 22.0])
    assert ev["hits"] == {"1": 4}
    assert b.unit(1).models == 16
    assert len(rules(b, "CORE.WM.FIRE_RULES")) == 1
    (profile,) = rules(b, "CORE.WM.PROFILES")
    assert (profile["max_range"], profile["strength"], profile["wounds"], profile["toughness"]) == (48.0, 10, "d6", 7)


def test_cannon_bounce_short_of_the_rear_ranks() -> None:
    """CORE.WM.CANNON.SHOT: aim 16", N = 2 lands 0.03" short of the front; a 2" bounce reaches rank 3 only."""
    b = _cannon_at_block([1, 1, 2, 2, 2, 1, 1, 1], "shot:16")
    (ev,) = rules(b, "CORE.WM.CANNON.SHOT")
    assert ev["hits"] == {"1": 3}
    assert b.unit(1).models == 17


def test_buried_ball_hits_only_the_model_under_the_landing_point() -> None:
    """CORE.WM.CANNON.SHOT: a MISFIRE bounce buries the ball; only the model under P1 is hit (none if P1 is clear)."""
    b = _cannon_at_block([4, 6, 2, 1], "shot:12")  # lands at 20": rank 3 of the block
    (ev,) = rules(b, "CORE.WM.CANNON.SHOT")
    assert ev["buried"] and ev["hits"] == {"1": 1}
    assert b.unit(1).models == 19
    b = _cannon_at_block([1, 6], "shot:4")  # lands at 6": open ground
    (ev,) = rules(b, "CORE.WM.CANNON.SHOT")
    assert ev["buried"] and ev["hits"] == {} and b.unit(1).models == 20


def test_grapeshot_hits_within_12_inches() -> None:
    """CORE.WM.CANNON.GRAPESHOT: N = 6 automatic S5 hits; 3+ to wound T4, no save from light armour and shield."""
    b = battle([machine("great_cannon")], [block("orc_warriors", MUZZLE_Y + 8)], [3, 3, 3, 3, 3, 1, 6])
    b.apply(Action("shoot", 0, 1, "grapeshot"))
    (ev,) = rules(b, "CORE.WM.CANNON.GRAPESHOT")
    assert (ev["roll"], ev["hits"]) == (6, 6)
    assert b.unit(1).models == 15
    far = battle([machine("great_cannon")], [block("orc_warriors", MUZZLE_Y + 13)], [])
    with pytest.raises(IllegalActionError):
        far.apply(Action("shoot", 0, 1, "grapeshot"))
    with pytest.raises(IllegalActionError):
        far.apply(Action("shoot", 0, 1, "shot:49"))  # beyond the great cannon's 48"


def test_default_fire_mode_is_a_legal_bare_shot() -> None:
    """CORE.WM.CANNON.SHOT: the legal actions carry one bare shot per target; the engine aims it itself."""
    b = battle([machine("great_cannon")], [block("orc_warriors", 30.0)], [])
    assert [a for a in b.legal_actions() if a.kind == "shoot"] == [Action("shoot", 0, 1)]
    assert war_machines.default_option(b, b.unit(0), b.unit(1)) == f"shot:{30.0 - MUZZLE_Y - 4.0:.2f}"


@pytest.mark.parametrize(
    ("face", "result", "crew", "silenced"),
    [(2, "crew_slain", 2, True), (3, "crew_slain", 2, True), (4, "no_shooting_next_turn", 3, True),
     (5, "no_shooting_next_turn", 3, True), (6, "no_effect", 3, False)],
)
def test_cannon_misfire_table(face: int, result: str, crew: int, silenced: bool) -> None:
    """CORE.WM.MISFIRE.CANNON rows 2–6: crew slain and silenced; silenced; no effect."""
    b = _cannon_at_block([6, face], "shot:10")
    (ev,) = [e for e in rules(b, "CORE.WM.MISFIRE.CANNON") if "result" in e]
    assert ev["result"] == result and ev["roll"] == face
    cannon = b.unit(0)
    assert cannon.models == crew and cannon.alive
    assert (cannon.marks.get("silenced_turn") == 2) is silenced
    _to_next_blue_turn(b)
    assert war_machines.silenced(b, cannon) is silenced
    assert shooting.can_shoot(b, cannon) is not silenced


def _to_next_blue_turn(b: Battle) -> None:
    """End every phase until blue's Movement phase of turn 2 (the cannon has not moved)."""
    while not (b.state.turn == 2 and b.state.active == 0 and b.state.phase == "movement"):
        kind = b.pending.kind
        b.apply(b.legal_actions()[0] if kind in ("react", "pursue") else END_PHASE)


def test_cannon_misfire_1_destroys_the_machine_and_blasts_models_within_d3() -> None:
    """CORE.WM.MISFIRE.CANNON row 1: the cannon is removed; every model within D3" (here 2") takes an S4 hit.

    Spearmen stand 1.5" off the cannon's flank: only their first file (2 models) is within 2".
    """
    side_x = 36 + MACHINE_W / 2 + 1.5 + 5 * INFANTRY_BASE / 2
    spears = placement("marcher_spearmen", side_x, 10, 90, models=10, files=5)
    b = battle([machine("great_cannon"), spears], [block("orc_warriors", 30.0)], [6, 1, 3, 2, 2, 3, 2, 1])
    b.apply(Action("shoot", 0, 2, "shot:10"))
    (ev,) = [e for e in rules(b, "CORE.WM.MISFIRE.CANNON") if "result" in e]
    assert (ev["result"], ev["radius"], ev["hits"]) == ("destroyed", 2, {"1": 2})
    assert b.unit(0).removed
    assert b.unit(1).models == 9  # wounds on 3+ then a 6+ save (S4 on light armour and shield): one dies


# --------------------------------------------------------------------- stone thrower
def _mortar(dice: list[float], option: str, front_y: float = 40.0) -> Battle:
    b = battle([machine("marcher_mortar")], [block("orc_warriors", front_y)], dice)
    b.apply(Action("shoot", 0, 1, option))
    return b


def test_stone_thrower_template_on_a_ranked_unit() -> None:
    """CORE.WM.STONE.DAMAGE, CORE.WM.TEMPLATES: centred on the middle model of rank 2 of a 5×4 block.

    The hole's model takes S9 with D6 wounds; 4 models lie wholly under the 3" template (its neighbours in
    rank 2 and in ranks 1 and 3) and take S3 hits; 13 more lie partly under, each hit on a 4+.
    """
    aim = 40.0 + 1.5 * INFANTRY_BASE - MUZZLE_Y
    partly = [4, 4, 4, 4, 4, 4, 1, 1, 1, 1, 1, 1, 1]  # 6 of the 13 partly covered models are hit
    dice = [1, 5, 0] + partly + [2, 4] + [5] * 10 + [1] * 10  # hole: wounds, D6 W; 10 S3 hits: 5+ wounds, saves fail
    b = _mortar(dice, f"direct:{aim}")
    (aim_ev,) = rules(b, "CORE.WM.STONE.AIM")
    assert (aim_ev["roll"], aim_ev["scatter"], aim_ev["scattered"]) == (2, HIT, 0)
    (dmg,) = rules(b, "CORE.WM.STONE.DAMAGE")
    assert dmg["centre"] == pytest.approx([36.0, 40.0 + 1.5 * INFANTRY_BASE])
    assert dmg["hole"] == [1, 7]  # rank 2, file 3
    assert sorted(s for _, s in dmg["wholly"]) == [2, 6, 8, 12]
    assert len(dmg["partly"]) == 13 and len(dmg["partly_hit"]) == 6
    (tpl,) = rules(b, "CORE.WM.TEMPLATES")
    assert (tpl["template"], tpl["wholly"], tpl["partly"]) == ("small", 4, 13)
    assert b.unit(1).models == 20 - 1 - 10


def test_stone_thrower_scatters_the_artillery_distance() -> None:
    """CORE.WM.STONE.AIM: an ARROW moves the template N" in direction θ (here 8" at 0°: off the block)."""
    aim = 40.0 + 1.5 * INFANTRY_BASE - MUZZLE_Y
    b = _mortar([4, 1, 0], f"direct:{aim}")
    (ev,) = rules(b, "CORE.WM.STONE.AIM")
    assert ev["centre"] == pytest.approx([44.0, 40.0 + 1.5 * INFANTRY_BASE])
    (dmg,) = rules(b, "CORE.WM.STONE.DAMAGE")
    assert dmg["hole"] is None and dmg["wholly"] == [] and dmg["partly"] == []
    assert b.unit(1).models == 20


def test_indirect_fire_hit_still_scatters_n_minus_bs() -> None:
    """CORE.WM.STONE.INDIRECT: needs no LOS; a HIT moves the template max(0, N − BS)" along the small arrow."""
    screen = placement("orc_warriors", 36, 25, 270, models=20, files=10)  # blocks the mortar's sight
    target = block("orc_warriors", 40.0)
    b = battle([machine("marcher_mortar")], [screen, target], [4, 6, 90])
    assert Action("shoot", 0, 2) in b.legal_actions()
    assert war_machines.modes(b, b.unit(0), b.unit(2)) == ["indirect"]
    with pytest.raises(IllegalActionError):
        b.apply(Action("shoot", 0, 2, "direct:30"))
    with pytest.raises(IllegalActionError):
        b.apply(Action("shoot", 0, 2, "indirect:11"))  # the aim is at least 12"
    b.apply(Action("shoot", 0, 2, "indirect:20"))
    (ev,) = rules(b, "CORE.WM.STONE.INDIRECT")
    assert (ev["roll"], ev["scatter"], ev["scattered"]) == (8, HIT, 5)
    assert ev["centre"] == pytest.approx([36.0, MUZZLE_Y + 25.0])


@pytest.mark.parametrize(
    ("face", "result", "crew", "silenced"),
    [(2, "crew_slain", 2, True), (3, "crew_slain", 2, True), (4, "no_shooting_next_turn", 3, True),
     (5, "no_shooting_next_turn", 3, True)],
)
def test_stone_thrower_misfire_rows_2_to_5(face: int, result: str, crew: int, silenced: bool) -> None:
    """CORE.WM.MISFIRE.STONE rows 2–5."""
    b = _mortar([6, 1, 0, face], "direct:30")
    (ev,) = [e for e in rules(b, "CORE.WM.MISFIRE.STONE") if "result" in e]
    assert (ev["result"], b.unit(0).models, b.unit(0).marks.get("silenced_turn") == 2) == (result, crew, silenced)


def test_stone_thrower_misfire_1_removes_it() -> None:
    """CORE.WM.MISFIRE.STONE row 1: the machine is removed."""
    b = _mortar([6, 1, 0, 1], "direct:30")
    assert b.unit(0).removed and not b.unit(0).alive


def test_stone_thrower_misfire_6_is_a_wild_shot_2d6_from_the_machine() -> None:
    """CORE.WM.MISFIRE.STONE row 6: the template lands 2D6" (3 + 4) from the machine in a scatter direction."""
    b = _mortar([6, 1, 0, 6, 3, 4, 2, 180], "direct:30")
    (ev,) = [e for e in rules(b, "CORE.WM.MISFIRE.STONE") if "result" in e]
    assert (ev["result"], ev["distance"], ev["direction"]) == ("wild_shot", 7, 180.0)
    assert ev["centre"] == pytest.approx([29.0, MUZZLE_Y])
    assert len(rules(b, "CORE.WM.STONE.DAMAGE")) == 1 and b.unit(0).alive


# --------------------------------------------------------------------- bolt thrower
def _chukka(spear_models: int, dice: list[float]) -> Battle:
    """An orc spear chukka 13" in front of a block of spearmen (5 files), red's shooting phase."""
    chukka = machine("spear_chukka", 36, 40, 270, crew=2)
    spears = block("marcher_spearmen", 40 - MACHINE_D / 2 - 13, models=spear_models, facing=90.0)
    b = battle([spears], [chukka], dice, player="red")
    b.apply(Action("shoot", 1, 0))
    return b


def test_bolt_strength_falls_by_rank_until_a_model_survives() -> None:
    """CORE.WM.BOLT: a 4+ hits; rank 1 at S6 and rank 2 at S5 are slain (no save), rank 3 at S4 saves on 6."""
    b = _chukka(20, [4, 2, 1, 2, 1, 3, 6])
    (ev,) = [e for e in rules(b, "CORE.WM.BOLT") if "ranks" in e]
    assert ev["through"] == "front"
    assert ev["ranks"] == [
        {"rank": 1, "strength": 6, "slain": True},
        {"rank": 2, "strength": 5, "slain": True},
        {"rank": 3, "strength": 4, "slain": False},
    ]
    assert b.unit(0).models == 18
    assert rules(b, "CORE.WM.MISFIRE.BOLT")  # no artillery die, never a misfire


def test_bolt_stops_when_strength_reaches_zero() -> None:
    """CORE.WM.BOLT: through an 8-rank block every rank dies until rank 7, where S would be 0."""
    per_rank = [[2, 1], [2, 1], [3, 1, 1], [4, 1, 1], [5, 1, 1], [6, 1, 1]]  # wound, (save,) D3 wounds
    b = _chukka(40, [4] + [f for r in per_rank for f in r] + [2, 2])
    (ev,) = [e for e in rules(b, "CORE.WM.BOLT") if "ranks" in e]
    assert [r["strength"] for r in ev["ranks"]] == [6, 5, 4, 3, 2, 1]
    assert all(r["slain"] for r in ev["ranks"]) and b.unit(0).models == 34


def test_bolt_thrower_misses_on_its_ballistic_skill() -> None:
    """CORE.WM.BOLT: BS 3 needs a 4+ (no modifiers here); a 3 misses and nothing else is rolled."""
    b = _chukka(20, [3])
    (ev,) = [e for e in rules(b, "CORE.WM.BOLT") if "hit" in e]
    assert ev["hit"] is False and b.unit(0).models == 20


# --------------------------------------------------------------------- flame cannon
def _flame(front_y: float, dice: list[float]) -> Battle:
    b = battle([machine("flame_cannon", crew=2)], [block("orc_warriors", front_y)], dice, blue_faction="dwarfs")
    b.apply(Action("shoot", 0, 1))
    return b


def test_flame_cannon_hits_every_model_the_teardrop_touches() -> None:
    """CORE.WM.FLAME, CORE.WM.TEMPLATES: slid 2", the teardrop touches ranks 1 and 2 (5 each) and 3 of rank 3.

    13 automatic S5 Flaming hits: 3+ to wound T4 and no armour save (CORE.SR.FLAMING); the unit that lost
    models takes a Panic test (passed on a double 1).
    """
    b = _flame(MUZZLE_Y + 8, [1] + [3] * 10 + [2] * 3 + [1, 1])
    (ev,) = [e for e in rules(b, "CORE.WM.FLAME") if "missed" in e]
    assert ev["missed"] is False and ev["hits"] == {"1": 13}
    assert ev["tip"] == pytest.approx([36.0, MUZZLE_Y + 2])
    assert b.unit(1).models == 10
    assert rules(b, "CORE.SAVE.NONE")
    (panic,) = rules(b, "CORE.PSY.PANIC.TEST")
    assert panic["trigger"] == "CORE.WM.FLAME" and panic["passed"]


def test_flame_cannon_overshoot_misses() -> None:
    """CORE.WM.FLAME: slid 10" the teardrop has passed a target 3" away: the shot misses."""
    b = _flame(MUZZLE_Y + 3, [5])
    (ev,) = [e for e in rules(b, "CORE.WM.FLAME") if "missed" in e]
    assert ev["missed"] is True and b.unit(1).models == 20


def test_flame_cannon_misfire_uses_the_cannon_table() -> None:
    """CORE.WM.FLAME: a MISFIRE rolls on CORE.WM.MISFIRE.CANNON (here 4: no shooting next turn)."""
    b = _flame(MUZZLE_Y + 8, [6, 4])
    (ev,) = [e for e in rules(b, "CORE.WM.MISFIRE.CANNON") if "result" in e]
    assert ev["result"] == "no_shooting_next_turn" and b.unit(1).models == 20


# --------------------------------------------------------------------- shot at, panic
def test_shooting_at_a_war_machine_wounds_its_t_and_kills_crew() -> None:
    """CORE.WM.SHOT_AT: bows (S3) wound the cannon's T7 only on 6s; each unsaved wound kills one crew model."""
    archers = block("orc_archers", 20.0, models=10)  # 8" away: short range
    b = battle([machine("great_cannon")], [archers], [4, 4, 4, 4, 4, 4, 1, 1, 1, 1, 6, 6, 5, 5, 1, 2],
               player="red")
    b.apply(Action("shoot", 1, 0))
    (shot,) = rules(b, "CORE.WM.SHOT_AT")
    assert (shot["toughness"], shot["hits"]) == (7, 6)
    assert b.unit(0).models == 1 and war_machines.move_allowance(b.unit(0)) == 2.0
    b2 = battle([machine("great_cannon")], [archers], [4] * 10 + [6] * 10, player="red")
    b2.apply(Action("shoot", 1, 0))
    assert b2.unit(0).removed  # the machine goes with its last crew model


def test_crew_that_fails_panic_stays_but_may_not_shoot_next_turn() -> None:
    """CORE.WM.PANIC: the crew tests on Ld 7; failing, it does not flee and its machine is silenced."""
    b = battle([machine("great_cannon")], [block("orc_warriors", 40.0)], [6, 6])
    cannon = b.unit(0)
    psychology.panic_test(b, cannon, (36.0, 40.0), "CORE.PSY.PANIC.TRIGGER_DESTROYED")
    (test,) = rules(b, "CORE.PSY.PANIC.TEST")
    assert not test["passed"]
    (ev,) = rules(b, "CORE.WM.PANIC")
    assert ev["flees"] is False and not cannon.fleeing and (cannon.x, cannon.y) == (36.0, 10.0)
    assert cannon.marks["silenced_turn"] == 2
    assert [a for a in b.legal_actions() if a.kind == "shoot"]  # this turn it still shoots
    _to_next_blue_turn(b)
    assert war_machines.silenced(b, cannon) and not shooting.can_shoot(b, cannon)


def test_war_machines_fail_every_test_but_t_and_ld() -> None:
    """CORE.WM.TESTS: S (and WS, BS, I) tests fail automatically; T and Ld are rolled."""
    b = battle([machine("great_cannon")], [block("orc_warriors", 40.0)], [])
    cannon = b.unit(0)
    assert war_machines.auto_fails(b, cannon, "S") and war_machines.auto_fails(b, cannon, "I")
    assert not war_machines.auto_fails(b, cannon, "T") and not war_machines.auto_fails(b, cannon, "Ld")
    assert not war_machines.auto_fails(b, b.unit(1), "S")
    assert len(rules(b, "CORE.WM.TESTS")) == 2


# --------------------------------------------------------------------- assault
def _assault(dice: list[float]) -> Battle:
    """Orc warriors 5" in front of a cannon charge it (red's movement phase); the cannon holds."""
    orcs = block("orc_warriors", MUZZLE_Y + 5)
    b = battle([machine("great_cannon")], [orcs], dice, phase="movement", player="red")
    b.apply(Action("charge", 1, 0))
    assert [a for a in b.legal_actions() if a.kind == "react"] == [Action("react", 0, 1, "hold")]
    b.apply(Action("react", 0, 1, "hold"))
    end_declarations(b)
    while not [e for e in rules(b, "CORE.WM.ASSAULT_OUTCOME") if "winner" in e]:
        b.apply(END_PHASE)  # the remaining moves; magic and shooting have nothing to do
    return b


def test_assault_team_wins_and_the_crew_breaks() -> None:
    """CORE.WM.ASSAULT_TEAM: 5 orcs fight the crew (WS 3 v 3: 4+; S3 v crew T3: 4+), the rest of the unit idles.

    Team: 3 hits, 2 wounds, +1 charge = 3. Crew (1 left): 1 hit, S3 v T4 wounds on 5+, saved on 5+ = 0.
    CORE.WM.ASSAULT_OUTCOME: the crew loses by 3 and breaks (2D6 = 6 > Ld 7 − 3): the cannon is removed.
    """
    b = _assault([1, 6, 4, 4, 4, 1, 1, 4, 4, 1, 4, 5, 5, 3, 3])
    (team,) = rules(b, "CORE.WM.ASSAULT_TEAM")
    assert (team["team"], team["basis"]) == (5, "infantry")
    (out,) = [e for e in rules(b, "CORE.WM.ASSAULT_OUTCOME") if "winner" in e]
    assert out["team"] == {"wounds": 2, "charge": 1} and out["crew"] == {"wounds": 0}
    assert (out["winner"], out["difference"], out["crew_broke"]) == ("team", 3, True)
    assert b.unit(0).removed and not b.state.engagements
    (hit,) = [e for e in rules(b, "CORE.CC.TO_HIT") if e["unit"] == 1]
    assert hit["attacks"] == 5  # the team only, no supporting ranks


def test_assault_team_that_loses_makes_the_whole_unit_flee() -> None:
    """CORE.WM.ASSAULT_OUTCOME: the team misses (0 + 1 charge); the crew wounds twice (2): the unit flees."""
    b = _assault([1, 6, 1, 1, 1, 1, 1, 4, 4, 4, 5, 5, 1, 1, 1])
    (out,) = [e for e in rules(b, "CORE.WM.ASSAULT_OUTCOME") if "winner" in e]
    assert out["winner"] == "crew" and out["team"] == {"wounds": 0, "charge": 1} and out["crew"] == {"wounds": 2}
    orcs = b.unit(1)
    assert orcs.fleeing and orcs.models == 18 and b.unit(0).alive


def test_team_sizes_by_troop_type() -> None:
    """CORE.WM.ASSAULT_TEAM: 5 infantry, 3 cavalry, 2 on 40 mm bases, else the fewest models with US ≥ 5."""
    b = battle([machine("great_cannon")], [block("orc_warriors", 40.0)], [])
    u = b.unit(1)
    assert war_machines.team_size(u) == (5, "infantry")
    u.troop_type = "cavalry"
    assert war_machines.team_size(u)[0] == 3
    u.base_w = u.base_d = 40 / 25.4
    assert war_machines.team_size(u)[0] == 2
    u.base_w, u.base_d, u.troop_type = 50 / 25.4, 100 / 25.4, "chariot"
    assert war_machines.team_size(u)[0] == 2  # US 4 each
    u.models = 1
    assert war_machines.team_size(u) == (1, "single model")


# --------------------------------------------------------------------- movement
def test_war_machine_movement_limits() -> None:
    """CORE.WM.MOVE: M = 4 − crew lost, never a march; a bolt thrower may only pivot; a moved machine may not shoot."""
    b = battle([machine("hold_cannon"), machine("hold_cannon", x=20)], [block("orc_warriors", 44.0)], [],
               phase="movement", blue_faction="dwarfs")
    b.unit(0).models = 2
    b._legal_cache = None
    opts = {a.option for a in b.legal_actions() if a.kind == "move" and a.unit == 0}
    assert "advance" in opts and not any(o.startswith("march") for o in opts) and "reform_wide" not in opts
    b.apply(Action("move", 0, None, "advance"))
    assert b.unit(0).y == pytest.approx(13.0)  # 3": one crew lost
    (ev,) = rules(b, "CORE.WM.MOVE")
    assert (ev["allowance"], ev["crew_lost"]) == (3.0, 1)
    b.apply(END_PHASE)
    assert b.state.phase == "shooting"
    shooters = {a.unit for a in b.legal_actions() if a.kind == "shoot"}
    assert shooters == {1}  # CORE.WM.FIRE_RULES: Move or Fire

    bolt = battle([machine("bolt_thrower", crew=2)], [block("orc_warriors", 44.0, facing=270.0, x=50)], [],
                  phase="movement", blue_faction="dwarfs")
    assert {a.option for a in bolt.legal_actions() if a.kind == "move"} == {"reform_face"}


def test_war_machine_shoots_without_facing_its_target() -> None:
    """CORE.WM.MOVE: the free pivot of the Shooting phase turns the machine to face its target."""
    b = battle([machine("great_cannon", facing=0.0)], [block("orc_warriors", 30.0)], [1, 6])
    assert Action("shoot", 0, 1) in b.legal_actions()
    b.apply(Action("shoot", 0, 1, "shot:4"))
    assert b.unit(0).facing == pytest.approx(90.0)
    (pivot,) = [e for e in rules(b, "CORE.WM.MOVE") if e.get("free")]
    assert pivot["pivot"] == pytest.approx(90.0)


# --------------------------------------------------------------------- monsters and chariots
def test_ridden_monster_rider_takes_hits_on_5_and_6() -> None:
    """CORE.SHOOT.ALLOCATE, CORE.TYPE.MONSTER: US W + 1 while ridden; hits split 1–4 mount, 5–6 rider."""
    griffon = placement("griffon_knight", 36, 20, 90, models=1, files=1)
    archers = block("orc_archers", 30.0, models=10)
    dice = [5] * 8 + [1, 1] + [2, 3, 5, 6, 4, 4, 4, 1] + [1] * 6 + [6, 6] + [1, 1]  # hit, split, mount, rider
    b = battle([griffon], [archers], dice, player="red")
    g = b.unit(0)
    assert (g.unit_strength, g.has("large_target"), g.has("fear"), g.rider["save"]) == (5, True, True, 2)
    b.apply(Action("shoot", 1, 0))
    (split,) = [e for e in rules(b, "CORE.SHOOT.ALLOCATE") if "rider" in e]
    assert (split["mount"], split["rider"]) == (6, 2)
    rider = [e for e in rules(b, "CORE.SHOOT.TO_WOUND") if e.get("rider")]
    assert rider and rider[0]["hits"] == 2
    assert b.unit(0).rider["slain"] and g.unit_strength == 4
    (gone,) = rules(b, "CORE.TYPE.MONSTER")
    assert gone["rider_slain"]


def test_chariot_and_monster_data() -> None:
    """CORE.TYPE.CHARIOT (50×100, US 4, Impact Hits D6, Swiftstride) and CORE.TYPE.MONSTER (50×50, Terror)."""
    b = battle([placement("great_cannon", 10, 10, 90, models=3, files=1)],
               [placement("boar_chariot", 36, 40, 270, models=1, files=1), placement("hill_giant", 50, 40, 270, models=1, files=1)],
               [])
    chariot, giant = b.unit(1), b.unit(2)
    assert (chariot.width, chariot.depth, chariot.unit_strength) == pytest.approx((50 / 25.4, 100 / 25.4, 4))
    assert chariot.has("impact_hits_d6") and chariot.has("swiftstride") and monsters.has_rider(chariot)
    assert (giant.width, giant.unit_strength, giant.has("terror"), giant.has("large_target")) == (
        pytest.approx(50 / 25.4), 6, True, True)


def test_templates_geometry() -> None:
    """CORE.WM.TEMPLATES: the small template is 3" across; the teardrop 8" long, 1" and 3" wide at its ends."""
    small = templates.small_template((0.0, 0.0))
    assert small.bounds == pytest.approx((-1.5, -1.5, 1.5, 1.5), abs=1e-3)
    tear = templates.teardrop((0.0, 0.0), 90.0)
    assert tear.bounds == pytest.approx((-1.5, 0.0, 1.5, 8.0), abs=1e-3)


def test_look_out_sir_for_a_champion_under_a_template() -> None:
    """CORE.SR.LOOK_OUT_SIR: the champion (front rank, centre file) lies wholly under the template; a 1 fails
    Look Out Sir!, so he takes the S3 hit himself: wounded on 5, unsaved, he is removed (CORE.CC.CASUALTIES)."""
    target = block("orc_warriors", 40.0)
    target["command"] = ["champion"]
    aim = 40.0 + 1.5 * INFANTRY_BASE - MUZZLE_Y
    dice = [1, 5, 0] + [1] * 13 + [2, 4] + [1] + [5, 1] + [1, 1, 1]  # partly: none; hole; LOS; champion; 3 R&F
    b = _mortar_on(target, dice, f"direct:{aim}")
    (los,) = rules(b, "CORE.SR.LOOK_OUT_SIR")
    assert (los["model"], los["roll"], los["saved"]) == ("champion", 1, False)
    assert not b.unit(1).champion and b.unit(1).models == 18


def _mortar_on(target: dict, dice: list[float], option: str) -> Battle:
    b = battle([machine("marcher_mortar")], [target], dice)
    b.apply(Action("shoot", 0, 1, option))
    return b


def test_fire_control_helper_picks_a_legal_aimed_shot() -> None:
    """CORE.WM.CANNON.SHOT, CORE.WM.STONE.AIM: agents.war_machine_policy returns an accepted ``shoot`` with its aim."""
    from battleline.agents import war_machine_policy as policy

    b = battle([machine("great_cannon"), machine("marcher_mortar", x=20)], [block("orc_warriors", 30.0)], [])
    shot = policy.best_shot(b, b.unit(0))
    assert shot is not None and shot.target == 2 and shot.option.startswith("shot:")
    aim = float(shot.option.split(":")[1])
    assert 30.0 - MUZZLE_Y - 10 <= aim <= 30.0 - MUZZLE_Y
    lob = policy.best_shot(b, b.unit(1))
    assert lob is not None and lob.option.startswith("direct:")
    b.apply(shot)
    assert rules(b, "CORE.WM.CANNON.SHOT")[0]["aim"] == pytest.approx(aim)
