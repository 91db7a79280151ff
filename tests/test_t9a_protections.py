"""Exact-value tests of the T9A Personal Protections module (RULESET.md §6.1, ``t9a.protections``):
T9A.PP.*, T9A.SAVE.ONE_SPECIAL, T9A.STOMP and T9A.SIZE, with the CORE rules they replace silent
while the module plays and unchanged without it."""

from __future__ import annotations

from battleline.env.rules import combat, monsters, shooting, special_rules, spell_effects
from battleline.env.rules.battle import Battle
from battleline.env.rules.charges import contact_placement
from battleline.env.rules.state import Engagement, UnitState
from battleline.env.rules.t9a import protections
from battleline.env.rules.t9a.conditions import Attribute
from tests.setups import battle, placement, rolls, rules

PP = ["t9a.protections"]


def _pair(modules: list[str] | None = None) -> tuple[Battle, UnitState, UnitState]:
    """Blue spearmen (uid 0, T3, spear and shield) and red orc warriors (uid 1, S3 T4, hand weapon and shield),
    neither with an armour save (so only the dice under test are drawn)."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 30, 270)],
               modules=PP if modules is None else modules)
    men, orcs = b.unit(0), b.unit(1)
    men.armour_save = orcs.armour_save = 7
    b.events.clear()
    return b, men, orcs


def _protect(u: UnitState, *texts: str) -> None:
    u.t9a = {**u.t9a, "protections": list(texts)}


def _attributes(u: UnitState, *texts: str | dict) -> None:
    u.t9a = {**u.t9a, "attributes": list(texts)}


def _script(b: Battle, faces: list[int]) -> None:
    b.dice._script = list(faces)


# --------------------------------------------------------------------- Aegis and the one special save
def test_t9a_pp_aegis_is_a_special_save_after_armour() -> None:
    """T9A.PP.AEGIS, T9A.SAVE.ONE_SPECIAL: 4 S3 hits on T3 wound on 4+ [4,5,6,1] = 3 wounds; Aegis (4+)
    [4,3,1] saves 1: 2 unsaved. The core pipeline (CORE.SAVE.PIPELINE, CORE.SAVE.WARD) stays silent."""
    b, men, orcs = _pair()
    _protect(men, "aegis (4+)")
    _script(b, [4, 5, 6, 1, 4, 3, 1])
    res = special_rules.wound_and_save(b, orcs, men, 4, 3)
    assert (res.wounds, res.unsaved, res.doubled, res.slain) == (3, 2, 0, 0)
    (aegis,) = rules(b, "T9A.PP.AEGIS")
    assert aegis["needed"] == 4 and aegis["wounds"] == 3 and aegis["saved"] == 1 and aegis["divine_rerolled"] == 0
    assert [r["dice"] for r in rolls(b, "T9A.PP.AEGIS")] == [[4, 3, 1]]
    (one,) = rules(b, "T9A.SAVE.ONE_SPECIAL")
    assert one["save"] == "T9A.PP.AEGIS" and one["wounds"] == 3 and one["unsaved"] == 2
    assert not rules(b, "CORE.SAVE.PIPELINE") and not rules(b, "CORE.SAVE.WARD") and b.dice._script == []


def test_t9a_pp_aegis_successes_are_rerolled_against_divine_attacks() -> None:
    """T9A.PP.AEGIS (T9A.AA.DIVINE_LETHAL): against a Divine attacker the 2 successes of [4,5,2] are re-rolled
    [6,3]: only 1 stands. Without Divine the same first roll saves 2."""
    for divine, faces, saved in ((True, [4, 4, 4, 4, 5, 2, 6, 3], 1), (False, [4, 4, 4, 4, 5, 2], 2)):
        b, men, orcs = _pair()
        _protect(men, "aegis (4+)")
        if divine:
            _attributes(orcs, "divine")
        _script(b, faces)
        res = special_rules.wound_and_save(b, orcs, men, 3, 3)
        (aegis,) = rules(b, "T9A.PP.AEGIS")
        assert aegis["saved"] == saved and res.unsaved == 3 - saved
        assert aegis["divine_rerolled"] == (2 if divine else 0) and b.dice._script == []


def test_t9a_pp_aegis_core_ward_save_is_read_as_aegis_and_core_ward_fires_without_the_module() -> None:
    """T9A.PP.AEGIS ⇒ CORE.SAVE.WARD: a core ``ward_save_5`` plays as Aegis (5+) with the module on ([5,4,6]: 2 saved)
    and as the core ward save without it (CORE.SAVE.WARD, same dice, same count, no T9A event)."""
    for modules in (PP, []):
        b, men, orcs = _pair(modules)
        men.special_rules.append("ward_save_5")
        _script(b, [4, 4, 4, 5, 4, 6])
        res = special_rules.wound_and_save(b, orcs, men, 3, 3)
        assert res.unsaved == 1 and b.dice._script == []
        if modules:
            assert rules(b, "T9A.PP.AEGIS")[0]["needed"] == 5 and not rules(b, "CORE.SAVE.WARD")
        else:
            assert rules(b, "CORE.SAVE.WARD")[0]["saved"] == 2 and rules(b, "CORE.SAVE.PIPELINE")
            assert not [e for e in b.events if e["rule"].startswith("T9A.")]


def test_t9a_save_one_special_takes_only_the_best_save_where_core_takes_ward_then_regeneration() -> None:
    """T9A.SAVE.ONE_SPECIAL ⇒ CORE.SAVE.PIPELINE: core ward_save_5 + regeneration are Aegis (5+) and Regeneration (4+);
    only the better (4+) is rolled: 3 wounds, [4,1,5] save 2. Without the module the core rolls the ward [5,1,1]
    (1 saved) and then Regeneration [4,3] (1 saved) on the same wounds."""
    b, men, orcs = _pair()
    men.special_rules += ["ward_save_5", "regeneration"]
    _script(b, [4, 4, 4, 4, 1, 5])
    res = special_rules.wound_and_save(b, orcs, men, 3, 3)
    (one,) = rules(b, "T9A.SAVE.ONE_SPECIAL")
    assert one["candidates"] == ["aegis (5+)", "regeneration (4+)"] and one["save"] == "T9A.PP.REGENERATION"
    assert one["needed"] == 4 and res.unsaved == 1 and not rolls(b, "T9A.PP.AEGIS") and b.dice._script == []
    assert not rules(b, "CORE.SR.REGENERATION") and not rules(b, "CORE.SAVE.WARD")
    core, men, orcs = _pair([])
    men.special_rules += ["ward_save_5", "regeneration"]
    _script(core, [4, 4, 4, 5, 1, 1, 4, 3])
    res = special_rules.wound_and_save(core, orcs, men, 3, 3)
    assert res.unsaved == 1 and core.dice._script == []
    assert rules(core, "CORE.SAVE.WARD")[0]["saved"] == 1 and rules(core, "CORE.SR.REGENERATION")[0]["saved"] == 1


def test_t9a_save_one_special_best_weighs_the_divine_reroll() -> None:
    """T9A.SAVE.ONE_SPECIAL (A4): Aegis (3+) beats Regeneration (4+) (4/6 > 3/6), but against a Divine attack
    its re-rolled successes make it (4/6)² = 4/9 < 1/2, so Regeneration is taken."""
    saves = [protections.SpecialSave("T9A.PP.AEGIS", 3, "aegis (3+)"),
             protections.SpecialSave("T9A.PP.REGENERATION", 4, "regeneration (4+)")]
    assert protections.best_save(saves) == saves[0]
    divine = [protections.SpecialSave("T9A.PP.AEGIS", 3, "aegis (3+)", reroll_success=True), saves[1]]
    assert protections.best_save(divine) == saves[1]
    b, men, orcs = _pair()
    _protect(men, "aegis (3+)", "regeneration (4+)")
    _attributes(orcs, "divine")
    _script(b, [4, 4, 3, 4])
    res = special_rules.wound_and_save(b, orcs, men, 2, 3)
    assert rules(b, "T9A.SAVE.ONE_SPECIAL")[0]["save"] == "T9A.PP.REGENERATION" and res.unsaved == 1


# --------------------------------------------------------------------- Regeneration
def test_t9a_pp_regeneration_not_against_flaming_or_lethal_strike() -> None:
    """T9A.PP.REGENERATION: barred against a Flaming attacker (no armour save either: CORE.SR.FLAMING) and against
    Lethal Strike (core killing_blow in close combat: [6,4] = 1 Killing Blow + 1 wound, both unsaved); the
    same Killing Blow unit shooting is no Lethal Strike attack: Regeneration [4,3] saves 1. Aegis (6+) still
    works against Flaming ([6,2]: 1 saved)."""
    b, men, orcs = _pair()
    _protect(men, "regeneration (4+)")
    orcs.special_rules.append("flaming")
    _script(b, [4, 4])
    res = special_rules.wound_and_save(b, orcs, men, 2, 3)
    assert res.unsaved == 2 and rules(b, "T9A.PP.REGENERATION")[0]["blocked"] == ["flaming"] and b.dice._script == []
    _protect(men, "regeneration (4+)", "aegis (6+)")
    _script(b, [4, 4, 6, 2])
    assert special_rules.wound_and_save(b, orcs, men, 2, 3).unsaved == 1 and b.dice._script == []
    orcs.special_rules.remove("flaming")
    orcs.special_rules.append("killing_blow")
    _protect(men, "regeneration (4+)")
    b.events.clear()
    _script(b, [6, 4])
    res = special_rules.wound_and_save(b, orcs, men, 2, 3, melee=True)
    assert (res.unsaved, res.slain) == (1, 1) and rules(b, "T9A.PP.REGENERATION")[0]["blocked"] == ["lethal_strike"]
    _script(b, [6, 4, 4, 3])
    res = special_rules.wound_and_save(b, orcs, men, 2, 3)
    assert (res.unsaved, res.slain) == (1, 0) and rules(b, "T9A.PP.REGENERATION")[-1]["saved"] == 1


def test_t9a_pp_regeneration_gives_no_healing_where_core_heals() -> None:
    """T9A.PP.REGENERATION ⇒ CORE.SR.REGENERATION: an idle wounded troll (core regeneration) heals on [4] at the end
    of its player turn without the module, and neither rolls nor heals with it."""
    for modules, healed in (([], 0), (PP, 1)):
        b = battle([placement("marcher_spearmen", 10, 10, 90)], [placement("cave_trolls", 60, 40, 270, models=3, files=3)],
                   modules=modules)
        troll = b.unit(1)
        troll.wounds_taken, b.state.active = 1, troll.side
        _script(b, [4])
        special_rules.end_of_player_turn(b)
        assert troll.wounds_taken == healed
        assert len(rules(b, "CORE.SR.REGENERATION")) == (0 if modules else 1)
        assert b.dice._script == ([4] if modules else [])


# --------------------------------------------------------------------- against
def test_t9a_pp_against_tests_attack_criteria_on_the_attack_and_others_on_the_attacker() -> None:
    """T9A.PP.AGAINST: Aegis (4+, against flaming) saves [4,1] 1 of 2 wounds from a Flaming attacker and is not
    taken against a plain one; Aegis (4+, against orcs) names the attacker's army book: it works against orcs and
    not against men; Aegis (4+, against close_combat) works on blows and not on shots."""
    b, men, orcs = _pair()
    _protect(men, "aegis (4+, against flaming)")
    _script(b, [4, 4])
    assert special_rules.wound_and_save(b, orcs, men, 2, 3).unsaved == 2
    assert rules(b, "T9A.PP.AGAINST")[-1]["applies"] is False and rules(b, "T9A.SAVE.ONE_SPECIAL")[-1]["save"] is None
    orcs.special_rules.append("flaming")
    _script(b, [4, 4, 4, 1])
    assert special_rules.wound_and_save(b, orcs, men, 2, 3).unsaved == 1 and b.dice._script == []
    assert rules(b, "T9A.PP.AGAINST")[-1]["applies"] is True
    orcs.special_rules.remove("flaming")
    _protect(men, "aegis (4+, against orcs)")
    _protect(orcs, "aegis (4+, against orcs)")
    _script(b, [4, 4, 4, 1])
    assert special_rules.wound_and_save(b, orcs, men, 2, 3).unsaved == 1 and b.dice._script == []
    _script(b, [5, 5])  # men S4 on orcs T4: 4+ to wound; the orcs' Aegis is not against men
    assert special_rules.wound_and_save(b, men, orcs, 2, 4).unsaved == 2 and b.dice._script == []
    assert rules(b, "T9A.PP.AGAINST")[-1] == {**rules(b, "T9A.PP.AGAINST")[-1], "unit": 1, "attacker": 0, "applies": False}
    _protect(men, "aegis (4+, against close_combat)")
    _script(b, [4, 4, 4, 1])
    assert special_rules.wound_and_save(b, orcs, men, 2, 3, melee=True).unsaved == 1
    _script(b, [4, 4])
    assert special_rules.wound_and_save(b, orcs, men, 2, 3).unsaved == 2 and b.dice._script == []


# --------------------------------------------------------------------- Flammable
def test_t9a_pp_flammable_rerolls_failed_wounds_instead_of_doubling() -> None:
    """T9A.PP.FLAMMABLE ⇒ CORE.SR.FLAMMABLE: Flaming S3 hits on a Flammable T3 unit (core ``flammable`` read as the
    protection) [4,1,2,6] re-roll the 2 failures [5,3]: 3 wounds, each 1 wound (no doubling). A plain attacker
    re-rolls nothing (2 wounds). Without the module the core doubles the 2 Flaming wounds (CORE.SR.FLAMMABLE)."""
    b, men, orcs = _pair()
    men.special_rules.append("flammable")
    orcs.special_rules.append("flaming")
    _script(b, [4, 1, 2, 6, 5, 3])
    res = special_rules.wound_and_save(b, orcs, men, 4, 3)
    assert (res.wounds, res.unsaved, res.doubled) == (3, 3, 0) and b.dice._script == []
    (fl,) = rules(b, "T9A.PP.FLAMMABLE")
    assert fl["rerolled"] == 2 and fl["wounds"] == 3 and [r["dice"] for r in rolls(b, "T9A.PP.FLAMMABLE")] == [[5, 3]]
    assert special_rules.apply_result(b, men, res, "CORE.CC.CASUALTIES") == (3, 3) and not rules(b, "CORE.SR.FLAMMABLE")
    orcs.special_rules.remove("flaming")
    _script(b, [4, 1, 2, 6])
    assert special_rules.wound_and_save(b, orcs, men, 4, 3).wounds == 2 and len(rules(b, "T9A.PP.FLAMMABLE")) == 1
    core, men, orcs = _pair([])
    men.special_rules.append("flammable")
    orcs.special_rules.append("flaming")
    _script(core, [4, 1, 2, 6])
    res = special_rules.wound_and_save(core, orcs, men, 4, 3)
    assert (res.wounds, res.unsaved, res.doubled) == (2, 0, 2) and core.dice._script == []


def test_t9a_pp_flammable_flaming_spells_reroll_and_do_not_double() -> None:
    """T9A.PP.FLAMMABLE and T9A.SAVE.ONE_SPECIAL on spell damage (CORE.MAGIC.DAMAGE): 2 Flaming S3 hits on Flammable
    T3 [1,4] re-roll the 1 [5]: 2 wounds lost, not 4 (the core doubles [1,4]'s 1 wound to 2)."""
    for modules, faces, lost in ((PP, [1, 4, 5], 2), ([], [1, 4], 2)):
        b, men, orcs = _pair(modules)
        men.special_rules.append("flammable")
        _script(b, faces)
        assert spell_effects.damage(b, orcs, men, 2, 3, flaming=True) == lost and b.dice._script == []
        assert bool(rules(b, "T9A.PP.FLAMMABLE")) == bool(modules) and bool(rules(b, "CORE.SR.FLAMMABLE")) != bool(modules)


# --------------------------------------------------------------------- Distracting and Parry
def _fight(blue: dict, red: dict, facing: str = "front") -> Battle:
    """Red (uid 1) flush against blue's (uid 0) ``facing``, in the Close Combat phase, the module on."""
    b = battle([blue], [red], phase="combat", player="red", modules=PP)
    a, d = b.unit(1), b.unit(0)
    pose, _, _ = contact_placement(b, a, d, facing)
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(1, 0, facing, charged=True, turn=b.state.turn)]
    b.events.clear()
    return b


def test_t9a_pp_distracting_minus_one_to_hit_in_close_combat_only() -> None:
    """T9A.PP.DISTRACTING: WS3 orcs need 4+ against WS3 spearmen; against Distracting 5+ (the blow [5,4] hits once),
    not when another negative modifier applies (4+, A5), and shooting at them has no such modifier."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    men, orcs = b.unit(0), b.unit(1)
    assert protections.melee_to_hit(b, orcs, men, 3, 3) == 4 and not rules(b, "T9A.PP.DISTRACTING")
    _protect(men, "distracting")
    assert protections.melee_to_hit(b, orcs, men, 3, 3) == 5
    assert protections.melee_to_hit(b, orcs, men, 3, 3, other_negative=True) == 4
    assert [e["modifier"] for e in rules(b, "T9A.PP.DISTRACTING")] == [-1, 0]
    _script(b, [5, 4, 1])
    combat.resolve_strike(b, combat.Strike(1, 0, 2, 0, True, 2), 2, False, set(), set())
    hit = rules(b, "CORE.CC.TO_HIT")[-1]
    assert hit["needed"] == 5 and hit["hits"] == 1
    orcs.missile = "bow"
    core, parts = shooting.to_hit_modifier(b, orcs, men, False, False)
    assert parts == {} and core == 0  # in contact, unmoved: no core modifier, and none from Distracting


def test_t9a_pp_parry_defence_is_max_ws_plus_one_attacker_ws_from_the_front() -> None:
    """T9A.PP.PARRY: orcs with hand weapon and shield parry: WS3 spearmen need 5+ (defence 4), WS5 need 4+
    (defence 5, where the core gives 3+); Paired Weapons ignore it (4+); from the flank it does not work (4+);
    the protection alone (spear, no shield) parries too; a spear without it does not."""
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 36, 30, 270))
    men, orcs = b.unit(0), b.unit(1)
    assert protections.melee_to_hit(b, men, orcs, 3, 3) == 5
    assert protections.melee_to_hit(b, men, orcs, 5, 3) == 4
    assert rules(b, "T9A.PP.PARRY")[-1]["defence"] == 5
    men.melee = "additional_hand_weapon"
    assert protections.melee_to_hit(b, men, orcs, 3, 3) == 4 and rules(b, "T9A.PP.PARRY")[-1]["ignored"] == "paired_weapons"
    men.melee = "spear"
    orcs.melee = "spear"
    assert protections.melee_to_hit(b, men, orcs, 3, 3) == 4
    _protect(orcs, "parry")
    assert protections.melee_to_hit(b, men, orcs, 3, 3) == 5
    flank = _fight(placement("marcher_spearmen", 36, 10, 90), placement("orc_warriors", 10, 20, 0), facing="flank")
    _protect(flank.unit(0), "parry")
    assert protections.melee_to_hit(flank, flank.unit(1), flank.unit(0), 3, 3) == 4
    assert rules(flank, "T9A.PP.PARRY")[-1]["ignored"] == "not_front"
    assert protections.melee_to_hit(flank, flank.unit(0), flank.unit(1), 3, 3) == 5  # the orcs' front: they parry


# --------------------------------------------------------------------- Hard Target
def test_t9a_pp_hard_target_minus_one_per_instance_when_most_models_have_it() -> None:
    """T9A.PP.HARD_TARGET: shooting at 20 spearmen with Hard Target is −1 (two instances −2) on top of the core
    modifiers; with a joined 1-model character without it, 1 model of 2 is not a majority (0) and 2 of 3 is (−1)."""
    b = battle([placement("marcher_spearmen", 36, 10, 90), placement("lord_marshal", 60, 10, 90, models=1, files=1)],
               [placement("orc_archers", 36, 30, 270)], modules=PP)
    men, marshal, archers = b.unit(0), b.unit(1), b.unit(2)
    core, core_parts = shooting.to_hit_modifier(b, archers, men, False, False)
    _protect(men, "hard_target")
    mod, parts = shooting.to_hit_modifier(b, archers, men, False, False)
    assert parts["hard_target"] == -1 and mod == core - 1 and {k: v for k, v in parts.items() if k != "hard_target"} == core_parts
    _protect(men, "hard_target", "hard_target")
    assert protections.hard_target_parts(b, men) == {"hard_target": -2}
    _protect(men, "hard_target")
    men.joined, marshal.joined_to = [marshal.uid], men.uid
    men.models = 1
    assert protections.hard_target_parts(b, men) == {}
    men.models = 2
    assert protections.hard_target_parts(b, men) == {"hard_target": -1}
    assert not rules(b, "T9A.PP.HARD_TARGET")  # estimates leave the log alone; a shot logs it:
    shooting.resolve_fire(b, archers, men)
    assert rules(b, "T9A.PP.HARD_TARGET") == [{**rules(b, "T9A.PP.HARD_TARGET")[0], "unit": 0, "shooter": 2, "modifier": -1}]
    assert rules(b, "CORE.SHOOT.MODIFIERS")[0]["parts"]["hard_target"] == -1


# --------------------------------------------------------------------- whole model and Sizes
def test_t9a_pp_whole_model_rider_protections_cover_the_model_unless_the_mount_is_gigantic() -> None:
    """T9A.PP.WHOLE_MODEL, T9A.SIZE: a chariot (Large) whose crew has Aegis (5+) has it as a whole model; on a
    Gigantic mount only the mount's protections count. Shots on the rider take the model's Aegis (4+): 2 S3 hits
    on the crew's T4 wound on 5+ [5,6], Aegis [4,2] saves 1, so the W1 crewman falls."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("boar_chariot", 36, 30, 270, models=1, files=1)],
               modules=PP)
    chariot = b.unit(1)
    chariot.t9a = {**chariot.t9a, "rider_protections": ["aegis (5+)"]}
    assert protections.model_protections(b, chariot) == [Attribute("aegis", "5+")]
    assert rules(b, "T9A.PP.WHOLE_MODEL")[-1]["rider_extended"] == ["aegis"]
    chariot.t9a = {**chariot.t9a, "size": "gigantic"}
    assert protections.model_protections(b, chariot) == []
    assert rules(b, "T9A.PP.WHOLE_MODEL")[-1]["rider_ignored"] == ["aegis"]
    assert rules(b, "T9A.SIZE")[-1] == {**rules(b, "T9A.SIZE")[-1], "size": "gigantic", "decides": "whole_model"}
    chariot.t9a = {**chariot.t9a, "size": None, "rider_protections": [], "protections": ["aegis (4+)"]}
    assert chariot.rider is not None
    chariot.rider["save"] = 7
    _script(b, [5, 6, 4, 2])
    assert monsters.wound_rider(b, b.unit(0), chariot, 2, 3) == 1 and chariot.rider["slain"] and b.dice._script == []
    assert rules(b, "T9A.PP.AEGIS")[-1]["saved"] == 1


# --------------------------------------------------------------------- Stomp
def _giant_v_spearmen() -> Battle:
    b = _fight(placement("marcher_spearmen", 36, 10, 90), placement("hill_giant", 36, 30, 270, models=1, files=1))
    b.unit(0).armour_save = 7
    _attributes(b.unit(1), "stomp (2)")
    return b


def test_t9a_stomp_x_hits_at_strength_on_a_standard_unit_in_contact() -> None:
    """T9A.STOMP, T9A.SIZE: a Hill Giant with Stomp (2) in contact with spearmen (Standard) makes 2 automatic S6 hits:
    2+ to wound on T3, [2,1] = 1 wound, which counts for the giant's side and removes a model."""
    b = _giant_v_spearmen()
    _script(b, [2, 1])
    wounds = [0, 0]
    protections.stomp(b, b.state.engagements, wounds)
    (st,) = rules(b, "T9A.STOMP")
    assert st["target"] == 0 and st["hits"] == 2 and st["models"] == 1 and st["strength"] == 6
    assert rules(b, "T9A.SIZE")[-1]["size"] == "standard" and rules(b, "T9A.SIZE")[-1]["eligible"]
    assert wounds == [0, 1] and b.unit(0).models == 19 and b.dice._script == []


def test_t9a_pp_cannot_be_stomped_and_non_standard_units_are_no_target() -> None:
    """T9A.PP.CANNOT_BE_STOMPED: the spearmen with it are never the target; a Large unit is no target (T9A.SIZE):
    no hits, no dice."""
    for setup in ("cannot_be_stomped", "large"):
        b = _giant_v_spearmen()
        men = b.unit(0)
        if setup == "large":
            men.t9a = {**men.t9a, "size": "large"}
            _protect(men)
        else:
            _protect(men, "cannot_be_stomped")
        wounds = [0, 0]
        protections.stomp(b, b.state.engagements, wounds)
        assert rules(b, "T9A.STOMP")[-1]["target"] is None and wounds == [0, 0] and men.models == 20
        if setup == "large":
            assert rules(b, "T9A.SIZE")[-1] == {**rules(b, "T9A.SIZE")[-1], "size": "large", "eligible": False}
        else:
            assert rules(b, "T9A.PP.CANNOT_BE_STOMPED")[-1]["stomper"] == 1 and not rules(b, "T9A.SIZE")


def test_t9a_stomp_comes_after_every_blow_of_the_round_and_not_in_core() -> None:
    """T9A.STOMP at Initiative step 0: in a whole round it follows every CORE.CC.TO_HIT and precedes the result;
    without the module the same giant does not stomp."""
    for modules in (PP, []):
        b = _giant_v_spearmen()
        b.state.modules = list(modules)
        b.dice = type(b.dice)([], then_seed=3)
        combat.fight_round(b, list(b.state.engagements))
        names = [e["rule"] for e in b.events if e.get("kind") != "dice"]
        if modules:
            assert names.index("T9A.STOMP") > max(i for i, n in enumerate(names) if n == "CORE.CC.TO_HIT")
            assert names.index("T9A.STOMP") < min(i for i, n in enumerate(names) if n.startswith("CORE.CC.COMBAT_RESULT"))
        else:
            assert "T9A.STOMP" not in names


def test_t9a_pp_whole_model_rider_protections_are_validated_like_protections() -> None:
    """T9A.PP.WHOLE_MODEL: a unit type's ``t9a.rider_protections`` take the protection grammar; a bad one is one
    line naming the field and the fault."""
    import pydantic

    from battleline.env.rules.config import T9AConfig

    assert T9AConfig(rider_protections=["aegis (5+, against flaming)"]).rider_protections == ["aegis (5+, against flaming)"]
    try:
        T9AConfig(rider_protections=["stomp (2)"])
    except pydantic.ValidationError as err:
        assert err.errors()[0]["loc"] == ("rider_protections",)
        assert "unknown protection 'stomp'" in err.errors()[0]["msg"]
    else:
        raise AssertionError("a rider protection named 'stomp' was accepted")


def test_t9a_pp_aegis_divine_reroll_follows_the_attribute_scope_with_t9a_attributes_on() -> None:
    """T9A.PP.AEGIS with T9A.AA.SCOPE: with both modules on, a Divine attribute given to the orcs' missile weapon
    makes their shots Divine (the 2 Aegis successes of [4,5] re-rolled [6,1]: 1 stands) but not their blows
    (the same [4,5] save 2, nothing re-rolled)."""
    for melee, faces, saved in ((False, [4, 4, 4, 5, 6, 1], 1), (True, [4, 4, 4, 5], 2)):
        b, men, orcs = _pair([*PP, "t9a.attributes"])
        _protect(men, "aegis (4+)")
        _attributes(orcs, {"attribute": "divine", "part": "missile_weapon"})
        _script(b, faces)
        rule = "CORE.CC.TO_WOUND" if melee else "CORE.SHOOT.TO_WOUND"
        res = special_rules.wound_and_save(b, orcs, men, 2, 3, melee=melee, wound_rule=rule)
        (aegis,) = rules(b, "T9A.PP.AEGIS")
        assert aegis["saved"] == saved and res.unsaved == 2 - saved and b.dice._script == []
        assert aegis["divine_rerolled"] == (0 if melee else 2) and "divine" not in orcs.special_rules


def test_t9a_pp_hard_target_counts_against_t9a_artillery() -> None:
    """T9A.PP.HARD_TARGET with T9A.ART.HIT: a cannon's to-hit modifiers take the −1 against orcs with Hard Target,
    and the shot logs the rule; without it the parts hold no hard_target."""
    from battleline.env.rules.t9a import artillery

    b = battle([placement("great_cannon", 36, 10, 90, models=3, files=1)], [placement("orc_warriors", 36, 30, 270)],
               modules=[*PP, "t9a.artillery"])
    cannon, orcs = b.unit(0), b.unit(1)
    mod, parts = artillery.hit_modifier(b, cannon, orcs, artillery.profile(cannon))
    assert "hard_target" not in parts and not rules(b, "T9A.PP.HARD_TARGET")
    _protect(orcs, "hard_target")
    mod2, parts2 = artillery.hit_modifier(b, cannon, orcs, artillery.profile(cannon))
    assert parts2["hard_target"] == -1 and mod2 == mod - 1
    assert rules(b, "T9A.PP.HARD_TARGET") == [{**rules(b, "T9A.PP.HARD_TARGET")[0], "unit": 1, "shooter": 0, "modifier": -1}]


def test_t9a_pp_core_rule_restated_in_the_t9a_block_counts_once() -> None:
    """T9A.SAVE.ONE_SPECIAL with the core readings: cave trolls' core ``regeneration`` and their t9a block's
    Regeneration (4+) are one protection (one candidate), while a spell-given ward save (core ``ward_save_5``)
    beside a conditional Aegis stays a second one."""
    b = battle([placement("marcher_spearmen", 10, 10, 90)], [placement("cave_trolls", 60, 40, 270, models=3, files=3)],
               modules=PP)
    trolls = b.unit(1)
    assert trolls.has("regeneration") and "regeneration (4+)" in trolls.t9a["protections"]
    regen = [a for a in protections.model_protections(b, trolls) if a.name == "regeneration"]
    assert regen == [Attribute("regeneration", "4+")]
    _protect(trolls, "aegis (4+, against magical)")
    trolls.special_rules.append("ward_save_5")
    assert [a for a in protections.model_protections(b, trolls) if a.name == "aegis"] == [
        Attribute("aegis", "4+", (("magical",),)), Attribute("aegis", "5+")]
