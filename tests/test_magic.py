"""Exact-value tests of the Magic phase (RULESET.md §3.3 CORE.MAGIC.*, CORE.SR.MAGIC_RESISTANCE, LOREMASTER).

Set-up (``_battle``), all distances in inches: blue wizard A (uid 0) at
(30, 20) facing the table's far edge, blue spearmen (uid 1) at (40, 18),
blue wizard B (uid 2) at (26, 20); red orc warriors (uid 3) about 10" in
front of A at (30, 32) facing back, and a red goblin shaman (uid 4) out of
every range at (62, 44). Dice are scripted in the order the rules roll them.
"""

from __future__ import annotations

from typing import Any

import pytest

from battleline.env.rules import charges, config, magic, movement, space, spell_effects
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.battle import Battle
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.spells import FACTION_LORES, LORES, SPELLS, lore_spells
from battleline.env.rules.state import PHASES, Engagement
from tests.setups import battle, placement, rules, scenario

A, SPEARS, B, ORCS, SHAMAN = 0, 1, 2, 3, 4
FIREBALL = "CORE.MAGIC.SPELL.FIRE.1"
FLAMING_SWORDS = "CORE.MAGIC.SPELL.FIRE.2"
DOOM = "CORE.MAGIC.SPELL.DEATH.2"
SPIRIT_LEECH = "CORE.MAGIC.SPELL.DEATH.1"
BURNING_GAZE = "CORE.MAGIC.SPELL.LIGHT.1"
SPEED_OF_LIGHT = "CORE.MAGIC.SPELL.LIGHT.2"
BEAST_STRENGTH = "CORE.MAGIC.SPELL.BEASTS.2"
BEAST_COWERS = "CORE.MAGIC.SPELL.BEASTS.3"
AMBER_SPEAR = "CORE.MAGIC.SPELL.BEASTS.4"
ENFEEBLE = "CORE.MAGIC.SPELL.SHADOW.3"
CURSE = "CORE.MAGIC.SPELL.HEAVENS.3"
STORM_OF_HAIL = "CORE.MAGIC.SPELL.HEAVENS.1"
GLITTERING_ROBE = "CORE.MAGIC.SPELL.METAL.2"


def wizard(x: float, y: float, lore: str, spells: list[str] | None, level: int = 2, facing: float = 90, **kw: Any) -> dict:
    """A Battle Wizard placement of ``level`` (1–3) with explicit ``spells`` (None: rolled)."""
    options = ([f"level_{level}"] if level > 1 else []) + kw.pop("options", [])
    return placement("battle_wizard", x, y, facing, models=1, files=1, options=options, lore=lore, spells=spells, **kw)


def _battle(
    dice: list[int] | None = None,
    a: tuple[str, list[str]] = ("death", [SPIRIT_LEECH, DOOM]),
    b: tuple[str, list[str]] = ("fire", [FIREBALL]),
    shaman: list[str] | None = None,
    orcs: dict | None = None,
    b_at: float = 26.0,
    b_level: int = 1,
    **kw: Any,
) -> Battle:
    blue = [
        wizard(30, 20, a[0], a[1]),
        placement("marcher_spearmen", 40, 18, 90),
        wizard(b_at, 20, b[0], b[1], level=b_level),
    ]
    red = [
        orcs or placement("orc_warriors", 30, 32, 270),
        placement("goblin_shaman", 62, 44, 270, models=1, files=1, options=shaman or [], spells=[FIREBALL]),
    ]
    return battle(blue, red, dice=dice, phase="magic", **kw)


def casts(b: Battle, unit: int) -> set[str]:
    """The spells ``unit`` may cast now (legal ``cast`` options, dice dropped)."""
    return {a.option.rsplit(":", 1)[0] for a in b.legal_actions() if a.kind == "cast" and a.unit == unit}


# --------------------------------------------------------------------- data
def test_spell_table_has_32_spells_and_lore_access_mapping() -> None:
    """CORE.MAGIC.SPELLS, CORE.MAGIC.LORE_ACCESS: 8 lores × 4 spells; men/elves all lores, orcs Fire, dwarfs none."""
    assert len(SPELLS) == 32 and all(len(lore_spells(lore)) == 4 for lore in LORES)
    assert SPELLS[FIREBALL].cv == 5 and SPELLS[FIREBALL].range == 24 and SPELLS[FIREBALL].type == "M"
    assert SPELLS["CORE.MAGIC.SPELL.FIRE.4"].cv == 12 and SPELLS["CORE.MAGIC.SPELL.DEATH.4"].type == "D"
    assert FACTION_LORES["men"] == LORES and FACTION_LORES["elves"] == LORES
    assert FACTION_LORES["orcs"] == ("fire",) and FACTION_LORES["dwarfs"] == ()


def test_faction_may_not_take_a_lore_outside_its_access() -> None:
    """CORE.MAGIC.LORE_ACCESS: an orc wizard of the Lore of Death is rejected; a lore not of its type too."""
    data = config.read_yaml(config.CONFIG_DIR / "factions" / "orcs.yaml")
    shaman = next(u for u in data["units"] if u["id"] == "goblin_shaman")
    shaman["lores"] = ["fire", "death"]
    with pytest.raises(config.ConfigError, match="may not use lore 'death'"):
        config.parse(config.FactionConfig, data, "orcs.yaml")
    bad = scenario([wizard(30, 20, "fire", None)], [placement("goblin_shaman", 30, 40, 270, models=1, files=1, lore="death")])
    with pytest.raises(config.ConfigError, match="may not take lore 'death'"):
        config.load_scenario(bad)


def test_spells_are_rolled_at_battle_start() -> None:
    """CORE.MAGIC.WIZARDS: a level 3 knows #1 plus 2 rolled: D6 6 of [#2 #3 #4] → #4, then D6 1 of [#2 #3] → #2."""
    b = battle([wizard(30, 20, "heavens", None, level=3)], [placement("orc_warriors", 30, 40, 270)], dice=[6, 1])
    assert b.unit(0).spells == [f"CORE.MAGIC.SPELL.HEAVENS.{n}" for n in (1, 2, 4)]
    (ev,) = rules(b, "CORE.MAGIC.WIZARDS")
    assert ev["level"] == 3 and ev["lore"] == "heavens"
    assert [r["dice"] for r in b.events if r["rule"] == "CORE.MAGIC.WIZARDS" and r.get("kind") == "dice"] == [[6], [1]]


def test_loremaster_knows_all_four_spells() -> None:
    """CORE.SR.LOREMASTER: a Loremaster knows every spell of its lore, whatever its level; nothing is rolled."""
    b = battle([wizard(30, 20, "life", None, level=1)], [placement("orc_warriors", 30, 40, 270)])
    u = b.unit(0)
    u.spells, u.special_rules = [], u.special_rules + ["loremaster"]
    n_events = len(b.events)
    magic.generate_spells(b)
    assert u.spells == [f"CORE.MAGIC.SPELL.LIFE.{n}" for n in (1, 2, 3, 4)]
    assert any(e["rule"] == "CORE.SR.LOREMASTER" for e in b.events[n_events:])
    assert not any(e.get("kind") == "dice" for e in b.events[n_events:])


@pytest.mark.parametrize("spell_id", sorted(SPELLS))
def test_every_spell_resolves_on_a_legal_target(spell_id: str) -> None:
    """CORE.MAGIC.SPELL.*: each of the 32 spells, cast Irresistibly (6, 6) at its first legal target, takes effect.

    Hits and single hits are resolved by CORE.MAGIC.DAMAGE; lasting spells start a CORE.MAGIC.DURATION effect.
    """
    sp = SPELLS[spell_id]
    b = _battle(dice=[6, 6], a=(sp.lore, [spell_id]))
    (target, *_) = magic.targets(b, b.unit(A), sp)
    b.apply(Action("cast", A, target, f"{spell_id}:2"))
    assert rules(b, "CORE.MAGIC.IRRESISTIBLE") and rules(b, spell_id)
    if sp.effect in ("hits", "single_hit"):
        assert rules(b, "CORE.MAGIC.DAMAGE")
    if sp.effect == "lasting":
        assert [e["spell"] for e in b.state.effects] == [spell_id]


# --------------------------------------------------------------------- pools
def test_power_and_dispel_pools() -> None:
    """CORE.MAGIC.POWER_DICE 2 + ΣL (A L2, B L1 = 5); CORE.MAGIC.DISPEL_DICE 2 + Σ⌈L/2⌉ (shaman L2: 3)."""
    b = _battle(shaman=["level_2"])
    m = b.state.queue["magic"]
    assert (m["power"], m["dispel"]) == (5, 3)
    (power,) = rules(b, "CORE.MAGIC.POWER_DICE")
    (dispel,) = rules(b, "CORE.MAGIC.DISPEL_DICE")
    assert (power["player"], power["pool"], dispel["player"], dispel["pool"]) == (0, 5, 1, 3)


def test_pools_skip_fleeing_wizards_and_cap_at_12() -> None:
    """CORE.MAGIC.POWER_DICE / DISPEL_DICE: fleeing wizards add nothing; a pool never exceeds 12."""
    b = _battle()
    s = b.state
    b.unit(B).fleeing = True
    assert magic.power_pool(s, 0) == 4 and magic.dispel_pool(s, 0) == 3
    for uid in (A, SPEARS, B):
        b.unit(uid).wizard_level, b.unit(uid).fleeing = 4, False
    assert magic.power_pool(s, 0) == 12 and magic.dispel_pool(s, 0) == 2 + 3 * 2


def test_dice_per_spell_are_1_to_level_plus_1_within_the_pool() -> None:
    """CORE.MAGIC.CAST: a level-2 wizard may roll 1..3 dice, never more than the pool holds."""
    b = _battle()
    dice = {int(a.option.rsplit(":", 1)[1]) for a in b.legal_actions() if a.kind == "cast" and a.unit == A}
    assert dice == {1, 2, 3}
    b.state.queue["magic"]["power"] = 2
    b._legal_cache = None
    assert {int(a.option.rsplit(":", 1)[1]) for a in b.legal_actions() if a.kind == "cast" and a.unit == A} == {1, 2}


# --------------------------------------------------------------------- casting
def test_cast_on_exact_casting_value_then_opponent_may_dispel() -> None:
    """CORE.MAGIC.CAST: Fireball (CV5) on 2 + 3 = 5 is cast; the opponent decides on a dispel (CORE.MAGIC.SEQUENCE)."""
    b = _battle(dice=[2, 3], b=("fire", [FIREBALL]))
    b.apply(Action("cast", B, ORCS, f"{FIREBALL}:2"))
    (cast,) = rules(b, "CORE.MAGIC.CAST")
    assert (cast["total"], cast["cv"], cast["success"], cast["power_left"]) == (5, 5, True, 3)
    assert b.pending.kind == "dispel" and b.pending.player == 1 and b.pending.unit == B
    assert {a.option for a in b.legal_actions() if a.kind == "dispel"} == {"1", "2", "3"}


def test_failed_cast_stops_that_wizard_only() -> None:
    """CORE.MAGIC.CAST: 2 + 2 = 4 < CV5 fails; wizard B may not cast again this phase, wizard A still may."""
    b = _battle(dice=[2, 2])
    b.apply(Action("cast", B, ORCS, f"{FIREBALL}:2"))
    (cast,) = rules(b, "CORE.MAGIC.CAST")
    assert not cast["success"] and b.pending.kind == "cast"
    assert casts(b, B) == set() and casts(b, A) == {SPIRIT_LEECH, DOOM}
    assert b.state.queue["magic"]["power"] == 3


def test_a_spell_is_cast_once_per_wizard_per_phase() -> None:
    """CORE.MAGIC.CAST: a wizard picks a spell it has not cast this phase."""
    b = _battle(dice=[3, 4])
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    b.apply(END_PHASE)  # no dispel
    assert casts(b, A) == {SPIRIT_LEECH}


def test_irresistible_force_cannot_be_dispelled_even_by_a_scroll() -> None:
    """CORE.MAGIC.IRRESISTIBLE: two natural 6s; no dispel decision, the Dispel Scroll stays unread (CORE.MAGIC.SCROLL)."""
    b = _battle(dice=[6, 6], shaman=["dispel_scroll"])
    assert b.unit(SHAMAN).dispel_scrolls == 1
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    assert rules(b, "CORE.MAGIC.IRRESISTIBLE")
    assert b.pending.kind == "cast" and not rules(b, "CORE.MAGIC.DISPEL") and not rules(b, "CORE.MAGIC.SCROLL")
    assert b.unit(SHAMAN).dispel_scrolls == 1
    assert b.unit(ORCS).profile.Ld == 5  # Doom and Darkness took effect


@pytest.mark.parametrize(
    ("face", "result"), [(1, "blast"), (2, "wound"), (3, "wound"), (4, "stop"), (5, "stop"), (6, "none")]
)
def test_miscast_on_two_ones_each_table_row(face: int, result: str) -> None:
    """CORE.MAGIC.MISCAST_TRIGGER / MISCAST: two natural 1s fail the spell and roll on the table.

    1: S10 hit on the wizard (no armour save), an S4 hit on each other model within 3" (wizard B at 2"),
    all power dice lost. 2–3: the wizard loses 1 W and the phase ends. 4–5 and 6: the wizard stops.
    """
    dice = [1, 1, face] + ([6, 5] if face == 1 else [])  # S10 v T3 wounds on 2+; S4 v T3 on 3+ (no armour)
    b = _battle(dice=dice, b_at=28.0)
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    (trigger,) = rules(b, "CORE.MAGIC.MISCAST_TRIGGER")
    (mis,) = rules(b, "CORE.MAGIC.MISCAST")
    assert trigger["ones"] == 2 and not trigger["cast"] and mis["roll"] == face and mis["result"] == result
    assert not rules(b, "CORE.MAGIC.DISPEL") and b.unit(ORCS).profile.Ld == 7
    if face == 1:
        assert b.unit(A).wounds_taken == 1 and b.unit(B).wounds_taken == 1
        hits = [(e["target"], e["strength"], e["save"]) for e in rules(b, "CORE.MAGIC.DAMAGE")]
        assert hits == [(A, 10, 7), (B, 4, 7)]
        assert b.state.phase != "magic"  # no power dice left: the phase ended
        assert rules(b, "CORE.MAGIC.SEQUENCE")[-1]["unused_power"] == 0
    elif face in (2, 3):
        assert b.unit(A).wounds_taken == 1 and b.state.phase != "magic"
        assert rules(b, "CORE.MAGIC.SEQUENCE")[-1]["ended"] == "miscast"
    else:
        assert b.unit(A).wounds_taken == 0 and b.pending.kind == "cast"
        assert casts(b, A) == set() and casts(b, B) == {FIREBALL}


# --------------------------------------------------------------------- dispelling
def test_dispel_total_at_least_the_casting_total() -> None:
    """CORE.MAGIC.DISPEL: cast 3 + 4 = 7; dispel 3 + 4 = 7 dispels, 3 + 3 = 6 does not."""
    b = _battle(dice=[3, 4, 3, 4])
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    b.apply(Action("dispel", option="2"))
    (d,) = rules(b, "CORE.MAGIC.DISPEL")
    assert d["dispelled"] and d["casting_total"] == 7 and d["dispel_left"] == 1
    assert b.unit(ORCS).profile.Ld == 7 and b.pending.kind == "cast"
    b = _battle(dice=[3, 4, 3, 3])
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    b.apply(Action("dispel", option="2"))
    assert not rules(b, "CORE.MAGIC.DISPEL")[0]["dispelled"] and b.unit(ORCS).profile.Ld == 5


def test_two_sixes_always_dispel_and_two_ones_always_fail() -> None:
    """CORE.MAGIC.DISPEL: 6 + 6 = 12 beats a 14; 1 + 1 + 6 = 8 fails against a 7."""
    b = _battle(dice=[5, 5, 4, 6, 6])
    b.apply(Action("cast", A, ORCS, f"{DOOM}:3"))
    b.apply(Action("dispel", option="2"))
    (d,) = rules(b, "CORE.MAGIC.DISPEL")
    assert d["total"] == 12 and d["casting_total"] == 14 and d["dispelled"]
    b = _battle(dice=[3, 4, 1, 1, 6])
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    b.apply(Action("dispel", option="3"))
    (d,) = rules(b, "CORE.MAGIC.DISPEL")
    assert d["total"] == 8 and not d["dispelled"] and b.unit(ORCS).profile.Ld == 5


def test_dispel_scroll_dispels_once() -> None:
    """CORE.MAGIC.SCROLL: the scroll dispels a non-Irresistible spell, once; then it is no longer offered."""
    b = _battle(dice=[5, 5, 4, 3, 3], shaman=["dispel_scroll"])
    b.apply(Action("cast", A, ORCS, f"{DOOM}:3"))
    assert Action("dispel", option="scroll") in b.legal_actions()
    b.apply(Action("dispel", option="scroll"))
    (sc,) = rules(b, "CORE.MAGIC.SCROLL")
    assert sc["unit"] == SHAMAN and sc["scrolls_left"] == 0 and b.unit(ORCS).profile.Ld == 7
    b.apply(Action("cast", A, ORCS, f"{SPIRIT_LEECH}:2"))
    assert b.pending.kind == "dispel" and Action("dispel", option="scroll") not in b.legal_actions()


# --------------------------------------------------------------------- bound spells
def _dwarfs(dice: list[int]) -> Battle:
    data = scenario(
        [placement("rune_priest", 30, 20, 90, models=1, files=1), placement("clan_warriors", 40, 18, 90)],
        [placement("orc_warriors", 30, 32, 270), placement("goblin_shaman", 62, 44, 270, models=1, files=1, spells=[FIREBALL])],
        phase="magic",
    )
    data["blue"]["faction"] = "dwarfs"
    return Battle.from_scenario(data, seed=0, dice=ScriptedDice(dice, then_seed=0))


def test_bound_spell_casts_at_its_power_level_without_dice() -> None:
    """CORE.MAGIC.BOUND: Rune of Warding (Glittering Robe, power 4): no dice, no miscast; a dispel of 3 fails."""
    b = _dwarfs([3])
    assert b.state.queue["magic"]["power"] == 2  # no wizards: the base pool
    b.apply(Action("cast", 0, 1, f"{GLITTERING_ROBE}:bound"))
    assert not [e for e in b.events if e["rule"] == "CORE.MAGIC.CAST"]
    (bound,) = rules(b, "CORE.MAGIC.BOUND")
    assert bound["power"] == 4 and b.state.queue["magic"]["power"] == 2
    b.apply(Action("dispel", option="1"))
    assert not rules(b, "CORE.MAGIC.DISPEL")[0]["dispelled"]
    assert "ward_save_5" in b.unit(1).special_rules
    assert f"{GLITTERING_ROBE}:bound" not in {a.option for a in b.legal_actions()}  # once per phase


def test_bound_spell_is_dispelled_on_its_power_level() -> None:
    """CORE.MAGIC.BOUND: dispelled on a total ≥ P (a 4 against power 4)."""
    b = _dwarfs([4])
    b.apply(Action("cast", 0, 1, f"{GLITTERING_ROBE}:bound"))
    b.apply(Action("dispel", option="1"))
    assert rules(b, "CORE.MAGIC.DISPEL")[0]["dispelled"] and "ward_save_5" not in b.unit(1).special_rules


# --------------------------------------------------------------------- targeting
def _targets(b: Battle, uid: int, spell: str) -> list[int]:
    return magic.targets(b, b.unit(uid), SPELLS[spell])


def test_targeting_by_spell_type_arc_and_range() -> None:
    """CORE.MAGIC.TARGETING: M needs the front arc; D any arc; both LOS and range; A friends within range."""
    blue = [wizard(30, 20, "fire", [FIREBALL]), placement("marcher_spearmen", 40, 18, 90), placement("marcher_spearmen", 60, 10, 90)]
    red = [
        placement("orc_warriors", 30, 32, 270),  # 3: in front, ~10"
        placement("wolf_riders", 30, 10, 90, models=5, files=5),  # 4: behind the wizard
        placement("orc_archers", 30, 46, 270, models=10, files=5),  # 5: in front, ~24.8"
    ]
    b = battle(blue, red, phase="magic")
    assert _targets(b, 0, FIREBALL) == [3]  # M: front arc only, 24"
    assert _targets(b, 0, "CORE.MAGIC.SPELL.FIRE.3") == [3, 4]  # D: any arc, 18"
    assert _targets(b, 0, DOOM) == [3, 4]  # H: 24", no LOS needed
    assert _targets(b, 0, FLAMING_SWORDS) == [0, 1]  # A: friends within 12" (itself included)
    assert _targets(b, 0, "CORE.MAGIC.SPELL.SHADOW.1") == [0]  # Steed of Shadows: characters only


def test_targeting_line_of_sight_and_engaged_targets() -> None:
    """CORE.MAGIC.TARGETING: a building blocks M and D but not H; an engaged enemy takes only H spells."""
    building = {"kind": "building", "polygon": [[26, 24], [34, 24], [34, 27], [26, 27]]}
    b = battle([wizard(30, 20, "fire", [FIREBALL])], [placement("orc_warriors", 30, 32, 270)], phase="magic", terrain=[building])
    assert _targets(b, 0, FIREBALL) == [] and _targets(b, 0, "CORE.MAGIC.SPELL.FIRE.3") == []
    assert _targets(b, 0, DOOM) == [1]
    b = _battle()
    b.state.engagements.append(Engagement(SPEARS, ORCS, "front"))
    assert _targets(b, A, FIREBALL) == [] and _targets(b, A, "CORE.MAGIC.SPELL.DEATH.4") == []
    assert _targets(b, A, DOOM) == [ORCS]


def test_engaged_caster_casts_on_its_own_unit_and_enemies_in_contact() -> None:
    """CORE.MAGIC.ENGAGED_CASTER: only A/S spells on itself and H spells on enemies in contact."""
    b = _battle()
    b.state.engagements.append(Engagement(ORCS, A, "front"))
    assert _targets(b, A, FLAMING_SWORDS) == [A]
    assert _targets(b, A, DOOM) == [ORCS]
    assert _targets(b, A, FIREBALL) == [] and _targets(b, A, SPIRIT_LEECH) == []


def test_stupid_or_fleeing_wizard_cannot_cast() -> None:
    """CORE.MAGIC.CAST: a non-fleeing wizard; a unit that failed Stupidity may not cast (000:L704)."""
    b = _battle()
    b.unit(A).fleeing = True
    b.unit(B).flags["stupid"] = True
    b._legal_cache = None
    assert casts(b, A) == set() and casts(b, B) == set()


# --------------------------------------------------------------------- damage
def test_damage_spell_end_to_end_hits_wounds_saves_casualties_panic() -> None:
    """CORE.MAGIC.DAMAGE: Burning Gaze D6 S4 hits resolve like shots; 3 losses > front rank 2 force Panic.

    Cast 2 + 3 = 5 (CV5), no dispel; D6 = 6 hits; S4 v T4 wounds on 4+: 4; light armour + shield 5+ at S4
    is 6+: one saved; 3 orcs die; Panic 6 + 5 = 11 > Ld 7 fails and they flee 3 + 3.
    """
    b = _battle(
        dice=[2, 3, 6, 4, 4, 4, 4, 1, 2, 6, 1, 2, 3, 6, 5, 3, 3],
        a=("light", [BURNING_GAZE]),
        orcs=placement("orc_warriors", 30, 32, 270, models=20, files=2),
    )
    b.apply(Action("cast", A, ORCS, f"{BURNING_GAZE}:2"))
    b.apply(END_PHASE)  # red lets it through
    (dmg,) = rules(b, "CORE.MAGIC.DAMAGE")
    assert (dmg["hits"], dmg["strength"], dmg["to_wound"], dmg["wounds"], dmg["save"], dmg["saved"], dmg["lost"]) == (
        6, 4, 4, 4, 6, 1, 3,
    )
    orcs = b.unit(ORCS)
    assert orcs.models == 17 and orcs.flags["lost_this_phase"] == 3
    (panic,) = rules(b, "CORE.PSY.PANIC.TEST")
    assert panic["roll"] == 11 and not panic["passed"] and orcs.fleeing


def test_flaming_spell_allows_no_armour_save() -> None:
    """CORE.MAGIC.ATTR.FIRE: Fireball hits are Flaming: no armour save (CORE.SAVE.NONE)."""
    b = _battle(dice=[3, 3, 2, 6, 6], b=("fire", [FIREBALL]))
    b.apply(Action("cast", B, ORCS, f"{FIREBALL}:2"))
    b.apply(END_PHASE)
    (dmg,) = rules(b, "CORE.MAGIC.DAMAGE")
    assert dmg["hits"] == 2 and dmg["wounds"] == 2 and dmg["save"] == 7 and dmg["saved"] == 0
    assert rules(b, "CORE.SAVE.NONE") and b.unit(ORCS).models == 18


# --------------------------------------------------------------------- lasting effects
def _advance_to(b: Battle, turn: int, player: int, phase: str) -> None:
    """Answer every decision with end_phase until the first decision at or after ``player``'s ``phase`` of ``turn``."""
    s = b.state

    def key(t: int, p: int, ph: str) -> tuple[int, int, int]:
        return t, 0 if p == s.first_player else 1, PHASES.index(ph)

    while key(s.turn, s.active, s.phase) < key(turn, player, phase):
        b.apply(END_PHASE)


def test_augment_lasts_until_the_casters_next_magic_phase() -> None:
    """CORE.MAGIC.DURATION →N: Beast Strength +1 S +1 T on the spearmen through red's turn, gone at blue's next magic."""
    b = _battle(dice=[3, 3], a=("beasts", [BEAST_STRENGTH]))
    b.apply(Action("cast", A, SPEARS, f"{BEAST_STRENGTH}:2"))
    b.apply(END_PHASE)
    sp = b.unit(SPEARS)
    assert (sp.profile.S, sp.profile.T) == (4, 4)
    _advance_to(b, 1, 1, "combat")
    assert (sp.profile.S, sp.profile.T) == (4, 4)
    _advance_to(b, 2, 0, "magic")
    assert (sp.profile.S, sp.profile.T) == (3, 3) and not b.state.effects
    assert rules(b, "CORE.MAGIC.DURATION")[-1]["ended"] == "next magic phase"


def test_hex_ends_early_when_the_caster_flees() -> None:
    """CORE.MAGIC.DURATION: Enfeeble −1 S −1 T on the orcs ends when its caster flees."""
    b = _battle(dice=[4, 4], a=("shadow", [ENFEEBLE]))
    b.apply(Action("cast", A, ORCS, f"{ENFEEBLE}:2"))
    b.apply(END_PHASE)
    orcs = b.unit(ORCS)
    assert (orcs.profile.S, orcs.profile.T) == (2, 3)
    b.unit(A).fleeing = True
    magic.expire(b)
    assert (orcs.profile.S, orcs.profile.T) == (3, 4) and not b.state.effects
    assert rules(b, "CORE.MAGIC.DURATION")[-1]["ended"] == "caster fled"


def test_end_of_turn_effect_ends_with_the_player_turn() -> None:
    """CORE.MAGIC.DURATION EoT: Speed of Light +2 WS +2 I lasts through blue's turn and ends before red's."""
    b = _battle(dice=[4, 4, 4, 4], a=("light", [SPEED_OF_LIGHT]), b=("fire", [FLAMING_SWORDS]), b_level=2)
    b.apply(Action("cast", A, SPEARS, f"{SPEED_OF_LIGHT}:2"))
    b.apply(END_PHASE)
    sp = b.unit(SPEARS)
    assert (sp.profile.WS, sp.profile.I) == (5, 5)
    b.apply(Action("cast", B, SPEARS, f"{FLAMING_SWORDS}:2"))
    b.apply(END_PHASE)  # nothing left to cast: the turn runs on to red's first decision
    assert b.state.active == 1 and not b.state.effects
    assert (sp.profile.WS, sp.profile.I, sp.profile.S) == (3, 3, 3) and "flaming" not in sp.special_rules
    assert {e["ended"] for e in rules(b, "CORE.MAGIC.DURATION") if "ended" in e} == {"end of turn"}


def test_flaming_swords_apply_in_close_combat_only() -> None:
    """CORE.MAGIC.SPELL.FIRE.2: +1 S and Flaming attacks during the Close Combat phase, not while shooting."""
    b = _battle()
    sp = b.unit(SPEARS)
    magic.add_effect(b, b.unit(B), SPELLS[FLAMING_SWORDS], sp)
    assert sp.profile.S == 3 and "flaming" not in sp.special_rules
    b.state.phase = "combat"
    magic.on_phase(b)
    assert sp.profile.S == 4 and "flaming" in sp.special_rules
    b.state.phase = "shooting"
    magic.on_phase(b)
    assert sp.profile.S == 3 and "flaming" not in sp.special_rules


def test_hex_curse_of_storms_halves_m_and_forbids_marching() -> None:
    """CORE.MAGIC.SPELL.HEAVENS.3: M 4 → 2 and no march option while it lasts."""
    b = _battle(dice=[4, 4], a=("heavens", [CURSE]))
    b.apply(Action("cast", A, ORCS, f"{CURSE}:2"))
    b.apply(END_PHASE)
    orcs = b.unit(ORCS)
    assert orcs.profile.M == 2 and magic.forbids(b, orcs, "march")
    assert movement._plan(b, orcs, "march", space.Surroundings(b.state, orcs)) is None
    assert movement._plan(b, orcs, "advance", space.Surroundings(b.state, orcs)) is not None


def test_hex_beast_cowers_forbids_charges_in_the_targets_next_turn() -> None:
    """CORE.MAGIC.SPELL.BEASTS.3: the orcs may not charge in red's turn 1; in red's turn 2 they may."""
    b = _battle(dice=[4, 4], a=("beasts", [BEAST_COWERS]))
    b.apply(Action("cast", A, ORCS, f"{BEAST_COWERS}:2"))
    b.apply(END_PHASE)
    _advance_to(b, 1, 1, "movement")
    assert not charges.can_charge(b, b.unit(ORCS))
    _advance_to(b, 2, 1, "movement")
    assert charges.can_charge(b, b.unit(ORCS)) and not b.state.effects


def test_hex_doom_and_darkness_keeps_ld_at_least_2() -> None:
    """CORE.MAGIC.SPELL.DEATH.2: −2 Ld, minimum 2 (Ld 3 becomes 2)."""
    b = _battle(dice=[4, 4])
    b.unit(ORCS).profile.Ld = 3
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    b.apply(END_PHASE)
    assert b.unit(ORCS).profile.Ld == 2
    magic.expire(b, magic_side=0)
    assert b.unit(ORCS).profile.Ld == 3


def test_effects_survive_a_json_round_trip() -> None:
    """CORE.MAGIC.DURATION: lasting effects are JSON state; a reloaded battle ends them the same way."""
    b = _battle(dice=[3, 3], a=("beasts", [BEAST_STRENGTH]))
    b.apply(Action("cast", A, SPEARS, f"{BEAST_STRENGTH}:2"))
    b.apply(END_PHASE)
    c = Battle.from_json(b.to_json())
    assert c.state.effects == b.state.effects and c.unit(SPEARS).profile.S == 4
    magic.expire(c, magic_side=0)
    assert c.unit(SPEARS).profile.S == 3 and not c.state.effects


# --------------------------------------------------------------------- magic resistance
@pytest.mark.parametrize(("level", "roll", "cancelled"), [(2, 10, True), (2, 11, False), (1, 5, True), (3, 16, False)])
def test_magic_resistance_on_a_d20(level: int, roll: int, cancelled: bool) -> None:
    """CORE.SR.MAGIC_RESISTANCE: MR n cancels an enemy spell that was not dispelled on a D20 (CORE.DICE.D20) of 1..5n."""
    b = _battle(dice=[4, 4, roll])
    b.unit(ORCS).special_rules.append(f"magic_resistance_{level}")
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    b.apply(END_PHASE)
    (mr,) = rules(b, "CORE.SR.MAGIC_RESISTANCE")
    assert mr["roll"] == roll and mr["cancelled"] is cancelled
    assert b.unit(ORCS).profile.Ld == (7 if cancelled else 5)


def test_magic_resistance_4_always_cancels_and_friends_never_resist() -> None:
    """CORE.SR.MAGIC_RESISTANCE: MR4 always cancels, with no roll; a friendly augment is not resisted."""
    b = _battle(dice=[4, 4, 3, 4], b=("fire", [FLAMING_SWORDS]), b_level=2)
    b.unit(ORCS).special_rules.append("magic_resistance_4")
    b.unit(SPEARS).special_rules.append("magic_resistance_4")
    b.apply(Action("cast", A, ORCS, f"{DOOM}:2"))
    b.apply(END_PHASE)
    (mr,) = rules(b, "CORE.SR.MAGIC_RESISTANCE")
    assert mr["roll"] is None and mr["cancelled"] and b.unit(ORCS).profile.Ld == 7
    b.apply(Action("cast", B, SPEARS, f"{FLAMING_SWORDS}:2"))
    b.apply(END_PHASE)
    assert len(rules(b, "CORE.SR.MAGIC_RESISTANCE")) == 1 and b.state.effects


# --------------------------------------------------------------------- lore attributes
def test_fire_attribute_adds_d3_after_another_wizards_fire_hit() -> None:
    """CORE.MAGIC.ATTR.FIRE: A's Fireball hits the orcs; B's Fireball at them adds D3 (a 6: +3) to 1 + 2."""
    b = _battle(dice=[3, 3, 2, 6, 6, 1, 2, 6], a=("fire", [FIREBALL]), b=("fire", [FIREBALL]))
    b.apply(Action("cast", A, ORCS, f"{FIREBALL}:2"))
    b.apply(END_PHASE)
    b.apply(Action("cast", B, ORCS, f"{FIREBALL}:2"))
    (fire,) = rules(b, "CORE.MAGIC.ATTR.FIRE")
    assert fire["bonus"] == 3
    assert rules(b, "CORE.MAGIC.CAST")[-1]["total"] == 6 and rules(b, "CORE.MAGIC.CAST")[-1]["success"]


def test_beasts_attribute_lowers_cv_against_cavalry() -> None:
    """CORE.MAGIC.ATTR.BEASTS: Amber Spear (CV9) at wolf riders needs 8: 4 + 4 casts."""
    b = _battle(dice=[4, 4], a=("beasts", [AMBER_SPEAR]), orcs=placement("wolf_riders", 30, 32, 270, models=5, files=5))
    b.apply(Action("cast", A, ORCS, f"{AMBER_SPEAR}:2"))
    (cast,) = rules(b, "CORE.MAGIC.CAST")
    assert cast["cv"] == 8 and cast["success"] and rules(b, "CORE.MAGIC.ATTR.BEASTS")


def test_metal_attribute_strength_from_the_save_and_no_effect_without_one() -> None:
    """CORE.MAGIC.ATTR.METAL: S = 7 − save (orcs 5+: S2, no armour save); the shaman (no save) is unaffected."""
    b = _battle(dice=[6, 6, 1])
    lost = spell_effects.damage(b, b.unit(A), b.unit(ORCS), 3, None)
    (metal,) = rules(b, "CORE.MAGIC.ATTR.METAL")
    assert metal["strength"] == 2 and lost == 2 and b.unit(ORCS).models == 18
    assert spell_effects.damage(b, b.unit(A), b.unit(SHAMAN), 3, None) == 0
    assert rules(b, "CORE.MAGIC.ATTR.METAL")[-1]["unaffected"]


def test_death_attribute_adds_power_dice_on_5_and_6() -> None:
    """CORE.MAGIC.ATTR.DEATH: a D6 per wound caused; 5 and 6 add a die each (pool at most 12)."""
    b = _battle(dice=[5, 6, 1])
    b.state.queue["magic"]["power"] = 3
    spell_effects.after_cast(b, b.unit(A), SPELLS[SPIRIT_LEECH], 3)
    (death,) = rules(b, "CORE.MAGIC.ATTR.DEATH")
    assert death["gained"] == 2 and b.state.queue["magic"]["power"] == 5


def test_life_attribute_heals_the_wizard_first() -> None:
    """CORE.MAGIC.ATTR.LIFE: after a cast the wizard (or a friend within 12") regains 1 W."""
    b = _battle()
    b.unit(A).wounds_taken = 1
    b.unit(B).wounds_taken = 1
    spell_effects.after_cast(b, b.unit(A), SPELLS["CORE.MAGIC.SPELL.LIFE.3"], 0)
    assert b.unit(A).wounds_taken == 0 and b.unit(B).wounds_taken == 1
    spell_effects.after_cast(b, b.unit(A), SPELLS["CORE.MAGIC.SPELL.LIFE.3"], 0)
    assert b.unit(B).wounds_taken == 0


def test_shadow_attribute_offers_a_swap_with_a_friendly_character() -> None:
    """CORE.MAGIC.ATTR.SHADOW: after a Shadow cast, wizard A may swap places with wizard B (within 18")."""
    b = _battle(dice=[4, 4], a=("shadow", [ENFEEBLE]))
    b.apply(Action("cast", A, ORCS, f"{ENFEEBLE}:2"))
    b.apply(END_PHASE)
    assert Action("swap", A, B) in b.legal_actions()
    b.apply(Action("swap", A, B))
    assert (b.unit(A).x, b.unit(B).x) == (26.0, 30.0)
    assert Action("swap", A, B) not in b.legal_actions()


def test_heavens_attribute_adds_hits_on_flyers_and_light_on_undead() -> None:
    """CORE.MAGIC.ATTR.HEAVENS: D6 extra S4 hits on an enemy flyer; CORE.MAGIC.ATTR.LIGHT: +1 D6 of hits on Undead."""
    b = _battle(dice=[1, 2, 3, 1, 1, 1] + [1, 1, 1, 1])
    orcs = b.unit(ORCS)
    orcs.special_rules.append("fly")
    spell_effects.resolve(b, b.unit(A), SPELLS[STORM_OF_HAIL], orcs)
    (heavens,) = rules(b, "CORE.MAGIC.ATTR.HEAVENS")
    assert heavens["hits"] == 3 and [e["hits"] for e in rules(b, "CORE.MAGIC.DAMAGE")] == [1, 3]
    orcs.special_rules.append("undead")
    spell_effects.resolve(b, b.unit(A), SPELLS[BURNING_GAZE], orcs)
    (light,) = rules(b, "CORE.MAGIC.ATTR.LIGHT")
    assert light["dice"] == 2 and rules(b, "CORE.MAGIC.DAMAGE")[-1]["hits"] == 2


# --------------------------------------------------------------------- the scripted agents' magic policy
def test_magic_policy_probabilities() -> None:
    """CORE.MAGIC.CAST / DISPEL odds: 2D6 ≥ 7 is 21/36; CV13 only on two 6s; 3 dice dispel a 4 unless two 1s."""
    from battleline.agents.magic_policy import cast_chance, dispel_chance

    assert cast_chance(2, 7) == pytest.approx(21 / 36) and cast_chance(1, 7) == 0.0
    assert cast_chance(2, 13) == pytest.approx(1 / 36)
    assert dispel_chance(3, 4) == pytest.approx(200 / 216)


def test_magic_policy_casts_and_dispels_from_legal_actions() -> None:
    """CORE.MAGIC.SEQUENCE: the policy picks a legal cast, dispels a strong spell and lets a weak one through."""
    from battleline.agents.magic_policy import choose_cast, choose_dispel

    b = _battle(dice=[4, 4, 3], a=("death", ["CORE.MAGIC.SPELL.DEATH.4"]))
    legal = b.legal_actions()
    act = choose_cast(b, legal)
    assert act in legal and act.kind == "cast" and act.target == ORCS
    b.apply(Action("cast", A, ORCS, "CORE.MAGIC.SPELL.DEATH.4:3"))  # 4 + 4 + 3 = 11: Wind of Death is cast
    answer = choose_dispel(b, b.legal_actions())
    assert answer.kind == "dispel" and answer in b.legal_actions()
    b = _battle(dice=[3, 3])
    b.apply(Action("cast", B, ORCS, f"{FIREBALL}:2"))  # about 10 points of orcs: not worth dispel dice
    assert choose_dispel(b, b.legal_actions()) == END_PHASE


def test_portent_of_fate_rerolls_missed_shots() -> None:
    """CORE.MAGIC.SPELL.HEAVENS.2 (EoT): the unit re-rolls its failed to-hit rolls, once each (CORE.DICE.REROLL).

    10 crossbows (BS3, 4+ at short range) roll eight 1s and two 4s: 2 hits; the 8 misses are re-rolled,
    four 4s hit: 6 hits.
    """
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement("orc_warriors", 36, 10 + 0.8 + 10 + 1.6, 270)]
    b = battle(blue, red, dice=[1] * 8 + [4, 4] + [4, 4, 4, 4, 1, 1, 1, 1], phase="shooting")
    magic.add_effect(b, b.unit(0), SPELLS["CORE.MAGIC.SPELL.HEAVENS.2"], b.unit(0))
    b.apply(Action("shoot", 0, 1))
    (portent,) = rules(b, "CORE.MAGIC.SPELL.HEAVENS.2")[-1:]
    assert portent["rerolled"] == 8 and portent["hits"] == 4
    assert rules(b, "CORE.SHOOT.TO_WOUND")[0]["hits"] == 6


# --------------------------------------------------------------------- sieges
def test_spells_target_troops_on_a_wall_never_the_wall() -> None:
    """CORE.MAGIC.NO_CASTLE: in a siege the red shaman's Fireball may target the 10 spearmen on wall S1, not S1.

    Cast on [3, 4] = 7 ≥ CV5, not dispelled; D6 = 3 Flaming S4 hits wound on 4+ [4, 4, 4]: 3 spearmen die and
    wall S1 takes no damage roll. A ``cast`` naming no unit (an element) is illegal.
    """
    from battleline.env.rules.actions import IllegalActionError
    from battleline.env.rules.siege import castle
    from tests.test_siege import siege_scenario

    blue = [placement("marcher_spearmen", 26.5, 17.0, 90, models=10, files=10)]
    red = [placement("goblin_shaman", 26.5, 28, 270, models=1, files=1, spells=[FIREBALL])]
    b = Battle.from_scenario(siege_scenario(blue, red, phase="magic"), seed=0, dice=ScriptedDice([3, 4], then_seed=0))
    wall = castle.element(b.state, "S1")
    assert castle.element_under(b.state, b.unit(0)) is wall
    assert magic.targets(b, b.unit(1), SPELLS[FIREBALL]) == [0]
    with pytest.raises(IllegalActionError):
        b.apply(Action("cast", 1, None, f"{FIREBALL}:2"))
    b.apply(Action("cast", 1, 0, f"{FIREBALL}:2"))
    (ev,) = rules(b, "CORE.MAGIC.NO_CASTLE")
    assert (ev["target"], ev["element"], ev["element_targeted"]) == (0, "S1", False)
    b.dice._script = [3, 4, 4, 4]
    b.apply(END_PHASE)  # no dispel
    (dmg,) = rules(b, "CORE.MAGIC.DAMAGE")
    assert (dmg["hits"], dmg["strength"], dmg["unsaved"], b.unit(0).models) == (3, 4, 3, 7)
    assert wall.results == [] and not [e for e in b.events if e["rule"].startswith("SIEGE.DMG")]


@pytest.mark.parametrize("troop_type", ["infantry", "war_machine"])
def test_front_rank_at_phase_start_is_the_models_in_the_first_rank(troop_type: str) -> None:
    """CORE.MAGIC.DAMAGE: the front rank the Magic phase remembers is ``models_in_rank(1)``: min(F, N) for a unit of
    several ranks, all N in one rank (a war machine is one base); e.g. 12 models in 5 files: 5, 3 in 5 files: 3."""
    import dataclasses

    u = Battle.from_scenario("pitched_battle", seed=0).state.units[3]
    pins = {(12, 5): 5, (3, 5): 3, (5, 5): 5, (6, 5): 5, (1, 0): 1, (2, 0): 0, (0, 4): 0}
    for (models, files), front in pins.items():
        v = dataclasses.replace(u, models=models, files=files, troop_type=troop_type)
        assert magic._front_rank(v) == v.models_in_rank(1)
        if troop_type == "infantry":
            assert magic._front_rank(v) == front
        else:
            assert magic._front_rank(v) == models  # one base whatever the files (CORE.GEO.BASES)
    for models in range(0, 25):
        for files in range(0, 9):
            v = dataclasses.replace(u, models=models, files=files, troop_type=troop_type)
            assert magic._front_rank(v) == v.models_in_rank(1)
