"""The T9A attack attributes module (``t9a.attributes``): T9A.AA.SCOPE, T9A.AA.CONDITIONS,
T9A.AA.MULTIPLE_WOUNDS, T9A.AA.AREA_ATTACK and T9A.AA.DIVINE_LETHAL, with scripted dice.

Men (S3 spearmen, S4 crossbowmen) against Orc Warriors (T4, light armour and shield: 5+, 6+ against S4).
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from battleline.env.rules import shooting, special_rules
from battleline.env.rules.battle import Battle
from battleline.env.rules.config import T9AConfig, from_validation_error
from battleline.env.rules.state import UnitState
from battleline.env.rules.t9a.attributes import Attack, active, attack_of, entries, in_scope, is_divine
from tests.setups import battle, placement, rolls, rules

MOD = ["t9a.attributes"]


def _melee(modules: list[str] | None = None, dice: list[int] | None = None) -> tuple[Battle, UnitState, UnitState]:
    """Spearmen (uid 0) and Orc Warriors (uid 1), 20 each; the dice script the rolls."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)], [placement("orc_warriors", 36, 30, 270)], dice=dice,
               modules=MOD if modules is None else modules)
    return b, b.unit(0), b.unit(1)


def _give(u: UnitState, *attributes: object) -> None:
    u.t9a = {**u.t9a, "attributes": list(attributes)}


def _shoot(attributes: list[object], dice: list[int], orcs: int = 20, files: int = 5) -> Battle:
    """10 crossbowmen (one rank, BS3: 4+ to hit, S4: 4+ to wound, orcs save 6+) shoot orcs 8" away."""
    b = battle([placement("marcher_crossbowmen", 36, 10, 90, models=10, files=10)],
               [placement("orc_warriors", 36, 20, 270, models=orcs, files=files)], dice=dice, modules=MOD)
    _give(b.unit(0), *attributes)
    shooting.resolve_fire(b, b.unit(0), b.unit(1))
    return b


# --------------------------------------------------------------------- T9A.AA.SCOPE
def test_aa_scope_parts_and_tags_pick_the_attacks() -> None:
    """T9A.AA.SCOPE (AA-1..AA-3, A13): a text is the whole model's, tags {close_combat, shooting}; Close
    Combat covers blows and close-combat special attacks, Shooting only shots that are not Special
    Attacks; a weapon's attribute only that weapon's attacks; the rider (who makes no attack here) none."""
    b, u, t = _melee()
    _give(u, "flaming", {"attribute": "divine", "tags": ["close_combat"]},
          {"attribute": "lethal_strike", "part": "melee_weapon"},
          {"attribute": "area_attack (2)", "part": "missile_weapon"},
          {"attribute": "multiple_wounds (2)", "part": "rider"},
          {"attribute": "multiple_wounds (3)", "part": "mount", "tags": ["shooting"]})
    blow, shot = attack_of(True, "CORE.CC.TO_WOUND"), attack_of(False, "CORE.SHOOT.TO_WOUND")
    impact, cannon = attack_of(False, "CORE.SR.IMPACT_HITS"), attack_of(False, "CORE.WM.CANNON")
    assert blow == Attack("close_combat", False, "melee_weapon", "CORE.CC.TO_WOUND")
    assert shot == Attack("shooting", False, "missile_weapon", "CORE.SHOOT.TO_WOUND")
    assert impact == Attack("close_combat", True, None, "CORE.SR.IMPACT_HITS")
    assert cannon == Attack("shooting", True, None, "CORE.WM.CANNON")
    es = entries(u)
    assert es[0].tags == {"close_combat", "shooting"} and es[0].part == "model"
    assert es[2].tags == {"attack_weapon"} and es[3].tags == {"attack_weapon"}
    table = [[in_scope(e, a) for a in (blow, shot, impact, cannon)] for e in es]
    assert table == [
        [True, True, True, False],  # flaming: every close-combat attack, shots but not a special shot
        [True, False, True, False],  # divine, Close Combat only
        [True, False, False, False],  # lethal strike on the melee weapon
        [False, True, False, False],  # area attack on the missile weapon
        [False, False, False, False],  # the rider's
        [False, True, False, False],  # the mount's, Shooting only
    ]
    assert active(b, u, t, shot).keys() == {"flaming", "area_attack", "multiple_wounds"}
    (ev,) = rules(b, "T9A.AA.SCOPE")
    assert ev["applied"] == ["flaming", "area_attack", "multiple_wounds"]
    assert ev["out_of_scope"] == ["divine", "lethal_strike", "multiple_wounds"] and ev["attack"] == "shooting"
    assert active(b, u, t, shot)["multiple_wounds"].params == "3"  # the mount's, the only one in scope


def test_aa_scope_config_takes_texts_and_mappings_and_rejects_bad_ones_in_one_line() -> None:
    """T9A.AA.SCOPE data: ``t9a.attributes`` entries are texts or {attribute, tags, part}; faults are one line."""
    ok = T9AConfig.model_validate({"attributes": ["flaming", {"attribute": "area_attack (3)", "part": "missile_weapon"},
                                                  {"attribute": "divine", "tags": ["close_combat", "shooting"]}]})
    assert ok.model_dump(exclude_defaults=True)["attributes"] == [
        "flaming", {"attribute": "area_attack (3)", "part": "missile_weapon"},
        {"attribute": "divine", "tags": ["close_combat", "shooting"]}]
    cases = [
        ([{"attribute": "flaming", "tags": ["attack_weapon"]}], "entry 0: tag attack_weapon needs part melee_weapon or "
                                                                "missile_weapon, not model"),
        (["divine", {"attribute": "flaming", "tags": []}], "entry 1: tags is empty"),
        ([{"attribute": "flaming", "tags": ["shooting", "shooting"]}], "entry 0: tags name a tag twice"),
        ([{"attribute": "flaming", "part": "horse"}], "entry 0: part: Input should be 'model'"),
        ([{"attribute": "flaming", "colour": 1}], "entry 0: colour: Extra inputs are not permitted"),
        ([3], "entry 0: expected a text or a mapping {attribute, tags, part}, got 3"),
        (["area_attack"], "'area_attack': area_attack needs X, a whole number, d3 or d6"),
        (["multiple_wounds (2 against dragons)"], "unknown criterion 'dragons'"),
        (["dragon (2)"], "unknown attribute 'dragon'"),
    ]
    for value, want in cases:
        with pytest.raises(ValidationError) as err:
            T9AConfig.model_validate({"attributes": value})
        msg = str(from_validation_error(err.value, "men.yaml"))
        assert msg.startswith("men.yaml: attributes: ") and want in msg and "\n" not in msg, msg


# --------------------------------------------------------------------- T9A.AA.CONDITIONS
@pytest.mark.parametrize(("troop", "rules_", "size", "want"), [
    ("monstrous_infantry", [], None, False),  # Large but no monster: the AND fails
    ("monster", [], None, True),  # Large monster
    ("infantry", [], "gigantic", True),  # Gigantic: the second alternative (OR)
    ("monster", ["large_target"], None, True),  # a Large Target monster is Gigantic
    ("infantry", [], None, False),  # Standard infantry: neither
])
def test_aa_conditions_commas_or_spaces_and(troop: str, rules_: list[str], size: str | None, want: bool) -> None:
    """T9A.AA.CONDITIONS (AA-7): 'Multiple Wounds (2 against Large Beasts, Gigantic models)'."""
    b, u, t = _melee()
    _give(u, "multiple_wounds (2 against large monster, gigantic)")
    t.troop_type, t.special_rules = troop, rules_
    if size:
        t.t9a = {**t.t9a, "size": size}
    got = active(b, u, t, attack_of(True, "CORE.CC.TO_WOUND"))
    assert ("multiple_wounds" in got) is want
    (ev,) = rules(b, "T9A.AA.CONDITIONS")
    assert ev["applied"] is want and ev["conditions"] == [["large", "monster"], ["gigantic"]] and ev["pool"] == [1]


def test_aa_conditions_army_book_and_unconditioned_attributes() -> None:
    """T9A.AA.CONDITIONS (AA-6): an army book is a criterion; an attribute without conditions is not tested."""
    b, u, t = _melee()
    _give(u, "flaming (against orcs)", "divine (against men)", "lethal_strike")
    got = active(b, u, t, attack_of(True, "CORE.CC.TO_WOUND"))
    assert set(got) == {"flaming", "lethal_strike"}
    assert [(e["attribute"], e["applied"]) for e in rules(b, "T9A.AA.CONDITIONS")] == [("flaming", True), ("divine", False)]


def _shoot_orcs_with_boss(models: int, dice: list[int]) -> Battle:
    """10 crossbowmen with 'multiple_wounds (2 against standard infantry)' shoot 10 orcs (one rank) cut down to
    ``models``, with a joined Big Boss made Large."""
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement("orc_warriors", 36, 20, 270, models=10, files=10),
           placement("orc_big_boss", 0, 0, 90, models=1, files=1, joins=0)]
    b = battle(blue, red, phase="shooting", modules=MOD)
    b.unit(1).models = models
    b.unit(2).t9a = {**b.unit(2).t9a, "size": "large"}
    _give(b.unit(0), "multiple_wounds (2 against standard infantry)")
    b.dice._script = list(dice)
    shooting.resolve_fire(b, b.unit(0), b.unit(1))
    return b


def test_aa_conditions_pool_is_the_unit_wounded_not_its_joined_character() -> None:
    """T9A.AA.CONDITIONS (AA-8): hits on the R&F form a pool of the unit (its Large Big Boss is not in it), so
    Multiple Wounds applies there; the hit allocated to the Big Boss is a pool of the Big Boss alone, which fails.

    4 orcs and the Big Boss; 3 hits, allocation 6, 2, 3; the orcs: wounds 4, 4, saves 1, 1 → 2 unsaved, × 2 on W1
    models = 2 wounds (excess lost); the Big Boss: wound 5, no save → 1 wound.
    """
    b = _shoot_orcs_with_boss(4, [6, 6, 6, 1, 1, 1, 1, 1, 1, 1] + [6, 2, 3] + [4, 4, 1, 1] + [5])
    tested = [(e["pool"], e["applied"]) for e in rules(b, "T9A.AA.CONDITIONS")]
    assert tested == [([1], True), ([2], False)]
    (mw,) = rules(b, "T9A.AA.MULTIPLE_WOUNDS")
    assert mw["unit"] == 1 and mw["rolled"] == [2, 2] and mw["wounds"] == 2
    assert b.unit(1).models == 2 and b.unit(2).wounds_taken == 1


# --------------------------------------------------------------------- T9A.AA.MULTIPLE_WOUNDS
@pytest.mark.parametrize(("troop", "applied", "inflicted", "killed", "models", "taken"), [
    ("monstrous_infantry", True, 3, 1, 19, 0),  # 2 unsaved × 2 on W3: 2, then 1 (1 lost): one model slain
    ("infantry", False, 2, 0, 20, 2),  # Standard: the condition fails, 2 wounds
])
def test_aa_multiple_wounds_in_close_combat(troop: str, applied: bool, inflicted: int, killed: int, models: int,
                                            taken: int) -> None:
    """T9A.AA.MULTIPLE_WOUNDS: 'multiple_wounds (2 against large)' on spearmen's blows (S3 v T4: 5+; save 5+):
    wounds 5, 6, saves 1, 2 → 2 unsaved; on Large orcs of W3 each becomes 2 wounds, the excess lost."""
    b, u, t = _melee(dice=[5, 6, 1, 2])
    _give(u, "multiple_wounds (2 against large)")
    t.troop_type, t.profile.W = troop, 3
    res = special_rules.wound_and_save(b, u, t, 2, 3, melee=True)
    assert res.unsaved == 2
    (cond,) = rules(b, "T9A.AA.CONDITIONS")
    assert cond["applied"] is applied and cond["conditions"] == [["large"]]
    assert special_rules.apply_result(b, t, res, "CORE.CC.CASUALTIES", attacker=0) == (inflicted, killed)
    assert (t.models, t.wounds_taken) == (models, taken)
    mw = rules(b, "T9A.AA.MULTIPLE_WOUNDS")
    assert [(e["rolled"], e["wounds"]) for e in mw] == ([([2, 2], 3)] if applied else [])


def test_aa_multiple_wounds_d3_in_shooting() -> None:
    """T9A.AA.MULTIPLE_WOUNDS with d3 on crossbow shots at W2 orcs: hits 6, 6; wounds 4, 5; saves 1, 1;
    D3s of 6 and 1 → 3 (2 dealt, 1 lost: a model slain) and 1 → 3 wounds, 1 model slain, 1 wound on the next."""
    b = battle([placement("marcher_crossbowmen", 36, 10, 90, models=10, files=10)],
               [placement("orc_warriors", 36, 20, 270)], dice=[6, 6] + [1] * 8 + [4, 5, 1, 1, 6, 1], modules=MOD)
    _give(b.unit(0), "multiple_wounds (d3)")
    t = b.unit(1)
    t.profile.W = 2
    assert shooting.resolve_fire(b, b.unit(0), t) == 1
    (mw,) = rules(b, "T9A.AA.MULTIPLE_WOUNDS")
    assert mw["rolled"] == [3, 1] and mw["wounds"] == 3 and mw["unsaved"] == 2
    assert [r["dice"] for r in rolls(b, "T9A.AA.MULTIPLE_WOUNDS")] == [[6], [1]]
    assert (t.models, t.wounds_taken) == (19, 1)


# --------------------------------------------------------------------- T9A.AA.AREA_ATTACK
def test_aa_area_attack_on_a_missile_weapon_multiplies_each_hit() -> None:
    """T9A.AA.AREA_ATTACK: Area Attack (2) on the crossbows, orcs 5 files × 4 ranks: each hit is
    min(2, 5) × min(2, 4) = 4 hits. Hits 6, 6 → 8 hits; wounds 6, 6, 6, 6, 1, 1, 1, 1; saves 1 ×4 → 4 slain."""
    b = _shoot([{"attribute": "area_attack (2)", "part": "missile_weapon"}],
               [6, 6] + [1] * 8 + [6, 6, 6, 6, 1, 1, 1, 1] + [1] * 4)
    (ev,) = rules(b, "T9A.AA.AREA_ATTACK")
    assert (ev["x"], ev["files"], ev["ranks"], ev["hits"], ev["each"], ev["total"]) == (2, 5, 4, 2, 4, 8)
    assert [r["dice"] for r in rolls(b, "CORE.SHOOT.TO_WOUND")] == [[6, 6, 6, 6, 1, 1, 1, 1]]
    assert b.unit(1).models == 16


def test_aa_area_attack_x_above_files_and_out_of_scope() -> None:
    """T9A.AA.AREA_ATTACK: X = 3 on 5 files × 2 ranks is 3 × 2 = 6 hits a hit; a Close Combat-only Area Attack
    does nothing to shots (T9A.AA.SCOPE): the 2 hits roll 2 to-wound dice."""
    b = _shoot(["area_attack (3)"], [6, 6] + [1] * 8 + [1] * 12, orcs=10)
    (ev,) = rules(b, "T9A.AA.AREA_ATTACK")
    assert (ev["files"], ev["ranks"], ev["each"], ev["total"]) == (5, 2, 6, 12)
    b = _shoot([{"attribute": "area_attack (3)", "tags": ["close_combat"]}], [6, 6] + [1] * 8 + [1, 1])
    assert rules(b, "T9A.AA.AREA_ATTACK") == []
    assert [r["dice"] for r in rolls(b, "CORE.SHOOT.TO_WOUND")] == [[1, 1]]


# --------------------------------------------------------------------- T9A.AA.DIVINE_LETHAL, flaming
def test_aa_lethal_strike_is_the_core_killing_blow() -> None:
    """T9A.AA.DIVINE_LETHAL: Lethal Strike = CORE.SR.KILLING_BLOW. Blows wound on 6, 5 (S3 v T4); the 5 is an
    ordinary wound, its save (5+) fails on a 1: 1 wound; the 6 slays outright (no armour save), taking the 2
    wounds the W3 orc has left: 3 wounds, 1 model."""
    b, u, t = _melee(dice=[6, 5, 1])
    _give(u, "lethal_strike")
    t.profile.W = 3
    res = special_rules.wound_and_save(b, u, t, 2, 3, melee=True)
    assert (res.unsaved, res.slain) == (1, 1)
    assert rules(b, "CORE.SR.KILLING_BLOW")[0]["killing_blows"] == 1
    (ev,) = rules(b, "T9A.AA.DIVINE_LETHAL")
    assert (ev["lethal_strikes"], ev["slain"], ev["divine"]) == (1, 1, False)
    assert "killing_blow" not in u.special_rules  # given for the roll only
    assert special_rules.apply_result(b, t, res, "CORE.CC.CASUALTIES", attacker=0) == (3, 1)


def test_aa_lethal_strike_does_not_apply_against_unmet_conditions_or_to_shots() -> None:
    """T9A.AA.DIVINE_LETHAL: 'lethal_strike (against large)' on Standard orcs: the 6 is an ordinary wound; and
    Lethal Strike on a shot does nothing (the core Killing Blow is a close-combat rule)."""
    b, u, t = _melee(dice=[6, 5, 1, 1])
    _give(u, "lethal_strike (against large)")
    res = special_rules.wound_and_save(b, u, t, 2, 3, melee=True)
    assert (res.unsaved, res.slain) == (2, 0)
    assert rules(b, "CORE.SR.KILLING_BLOW") == [] and rules(b, "T9A.AA.DIVINE_LETHAL") == []
    b, u, t = _melee(dice=[6, 1])
    _give(u, "lethal_strike")
    res = special_rules.wound_and_save(b, u, t, 1, 4, wound_rule="CORE.SHOOT.TO_WOUND")
    assert (res.unsaved, res.slain) == (1, 0) and rules(b, "T9A.AA.DIVINE_LETHAL") == []


@pytest.mark.parametrize(("troop", "divine"), [("monster", True), ("infantry", False)])
def test_aa_divine_is_seen_by_the_save_pipeline_only_when_it_applies(monkeypatch: pytest.MonkeyPatch, troop: str,
                                                                     divine: bool) -> None:
    """T9A.AA.DIVINE_LETHAL: 'divine (against large)': while the saves of a Divine attack run,
    ``is_divine(attacker)`` is true (the protections module re-rolls Aegis on it); never after."""
    b, u, t = _melee(dice=[5, 1])
    _give(u, "divine (against large)")
    t.troop_type = troop
    seen: list[bool] = []
    ward = special_rules.ward_save
    monkeypatch.setattr(special_rules, "ward_save", lambda x: (seen.append(is_divine(u)), ward(x))[1])
    special_rules.wound_and_save(b, u, t, 1, 3, melee=True)
    assert seen == [divine] and not is_divine(u)
    assert [e["divine"] for e in rules(b, "T9A.AA.DIVINE_LETHAL")] == ([True] if divine else [])


@pytest.mark.parametrize(("text", "flaming"), [("flaming", True), ("flaming (against monster)", False)])
def test_aa_flaming_attribute_is_the_core_flaming_attacks(text: str, flaming: bool) -> None:
    """'flaming' gives the attack CORE.SR.FLAMING: magical, no armour save (CORE.SAVE.NONE); unmet conditions
    leave the armour save (5+, faces 1, 1)."""
    b, u, t = _melee(dice=[5, 6, 1, 1])
    _give(u, text)
    res = special_rules.wound_and_save(b, u, t, 2, 3, melee=True)
    assert res.unsaved == 2 and "flaming" not in u.special_rules
    assert bool(rules(b, "CORE.SR.FLAMING")) is flaming
    assert [r["dice"] for r in rolls(b, "CORE.SAVE.MODIFIERS")] == ([] if flaming else [[1, 1]])


# --------------------------------------------------------------------- module off
@pytest.mark.parametrize("modules", [[], ["t9a.protections"]])
def test_aa_core_unchanged_when_the_module_is_off(modules: list[str]) -> None:
    """With ``t9a.attributes`` off the attributes (even if present in ``t9a``) change nothing: same dice, same
    events, same casualties as a unit without them."""
    logs = []
    for give in (False, True):
        b, u, t = _melee(modules=modules, dice=[6, 5, 1, 2])
        if give:
            _give(u, "multiple_wounds (2)", "flaming", "lethal_strike", "area_attack (2)", "divine")
        t.profile.W = 3
        res = special_rules.wound_and_save(b, u, t, 2, 3, melee=True)
        special_rules.apply_result(b, t, res, "CORE.CC.CASUALTIES", attacker=0)
        logs.append((b.events, t.models, t.wounds_taken))
    assert logs[0] == logs[1]
    assert not any(e["rule"].startswith("T9A.AA") for e in logs[1][0])
    assert logs[1][2] == 2  # two ordinary wounds on a W3 orc
