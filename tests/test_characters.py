"""Exact-value tests of characters in units, command groups, the BSB, the General and challenges.

RULESET.md IDs are named in each test's docstring. Set-ups: blue men against
red orcs (:mod:`tests.setups`); uid 0 is the first blue placement.
"""

from __future__ import annotations

import pytest

from battleline.env.encoding import ActionCodec
from battleline.env.rules import challenges, characters, combat, psychology, shooting, space, victory
from battleline.env.rules import geometry as geo
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.army import check_joins
from battleline.env.rules.battle import Battle
from battleline.env.rules.charges import contact_placement
from battleline.env.rules.config import ArmyUnitConfig, ConfigError, load_faction, load_scenario
from battleline.env.rules.dice import ScriptedDice
from battleline.env.rules.state import Engagement
from tests.setups import INFANTRY_BASE, battle, placement, scenario

DEPTH4 = 4 * INFANTRY_BASE  # 20 infantry in 5 files
FAR = 30.0  # red's y when it must stay out of every charge


def rules(b: Battle, rule: str) -> list[dict]:
    """The events of exactly ``rule`` (no dice) up to the end of the first Close Combat phase fought here."""
    rounds = [i for i, e in enumerate(b.events) if e["rule"] == "CORE.CC.ROUNDS"]
    cut = rounds[1] if len(rounds) > 1 else len(b.events)
    return [e for e in b.events[:cut] if e["rule"] == rule and e.get("kind") != "dice"]


def joined(unit: str, host: int, **kw: object) -> dict:
    """A character placement joined to the side's placement ``host`` (its own x, y are ignored)."""
    return placement(unit, 0, 0, 90, models=1, files=1, joins=host, **kw)


def _combat(blue: list[dict], red: list[dict], dice: list[int], red_host: int | None = None,
            **switches: object) -> Battle:
    """Blue uid 0 has charged red ``red_host`` (default: red's first unit) in the front this turn; fight the phase.

    Red's combat phase passes first (nothing engaged), so blue is the phasing
    player; the Close Combat phase then runs with ``dice`` scripted.
    ``switches`` are scenario fields (``champion_attack=False``).
    """
    if switches:
        b = Battle.from_scenario({**scenario(blue, red, phase="combat", player="red"), **switches}, seed=0,
                                 dice=ScriptedDice([], then_seed=0))
    else:
        b = battle(blue, red, phase="combat", player="red")
    s = b.state
    red_host = red_host if red_host is not None else len(blue)
    a, d = b.unit(0), b.unit(red_host)
    pose, _, _ = contact_placement(b, a, d, "front")
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    s.engagements = [Engagement(0, red_host, "front", charged=True, turn=s.turn)]
    s.active, s.phase = 0, "combat"
    b.dice._script = list(dice)
    b.events.clear()
    combat.start(b)  # the engine is not advanced past this phase: the state stays as the phase left it
    return b


def decide(b: Battle, action: Action) -> None:
    """Apply a legal challenge decision without running the engine on into the next turns."""
    assert action in b.legal_actions()
    b._legal_cache = None
    challenges.apply(b, action)


# --------------------------------------------------------------------- joining and leaving
def test_character_joins_a_unit_within_its_move() -> None:
    """CORE.MOVE.JOIN: a lone captain 3" in front of spearmen joins them; it stands in the centre file of the front rank."""
    front = 10 + DEPTH4 / 2
    blue = [
        placement("marcher_spearmen", 30, 10, 90),
        placement("marcher_captain", 30, front + 3 + INFANTRY_BASE / 2, 270, models=1, files=1),
        placement("order_knights", 50, 10, 90, models=5, files=5),
    ]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    assert b.pending.kind == "move"
    join = Action("move", 1, 0, "join")
    assert join in b.legal_actions()
    assert Action("move", 1, 2, "join") not in b.legal_actions()  # cavalry: another base
    width, depth = b.unit(0).width, b.unit(0).depth
    b.apply(join)
    host, cap = b.unit(0), b.unit(1)
    assert cap.joined_to == 0 and host.joined == [1]
    assert not cap.alive and cap.in_play
    assert (host.width, host.depth) == (width, depth)  # the footprint does not change
    assert (cap.x, cap.y, cap.facing) == pytest.approx((30.0, front - INFANTRY_BASE / 2, 90.0))
    (ev,) = rules(b, "CORE.MOVE.JOIN")
    assert ev["unit"] == 1 and ev["host"] == 0 and ev["slot"] == 0
    # Not in the phase it joined (CORE.MOVE.LEAVE); and the captain is no unit of its own to move.
    assert not [a for a in b.legal_actions() if a.unit == 1]


@pytest.mark.parametrize(
    ("case", "gap"),
    [("too_far", 4.5), ("host_full", 1.0), ("host_fleeing", 1.0)],
)
def test_character_may_not_join(case: str, gap: float) -> None:
    """CORE.MOVE.JOIN: not beyond its M (4"), not a unit with 2 characters; CORE.PSY.FLEE.STATUS: not a fleeing unit."""
    front = 10 + DEPTH4 / 2
    blue = [
        placement("marcher_spearmen", 30, 10, 90, fleeing=case == "host_fleeing"),
        placement("marcher_captain", 30, front + gap + INFANTRY_BASE / 2, 270, models=1, files=1),
    ]
    if case == "host_full":
        blue += [joined("marcher_captain", 0), joined("lord_marshal", 0, general=True)]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    assert Action("move", 1, 0, "join") not in b.legal_actions()


def test_character_leaves_in_front_of_its_unit() -> None:
    """CORE.MOVE.LEAVE: a joined captain leaves and ends in front of the unit, at least 1" away."""
    blue = [placement("marcher_spearmen", 30, 10, 90), joined("marcher_captain", 0)]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    leave = Action("move", 1, None, "leave")
    assert leave in b.legal_actions()
    b.apply(leave)
    host, cap = b.unit(0), b.unit(1)
    assert cap.joined_to is None and host.joined == [] and cap.alive
    gap = space.unit_distance(host, cap)
    assert gap == pytest.approx(1.05) and cap.y > host.y
    (ev,) = rules(b, "CORE.MOVE.LEAVE")
    assert ev["unit"] == 1 and ev["host"] == 0
    # Having left, it has moved: no second move this phase.
    assert not [a for a in b.legal_actions() if a.unit == 1]


def test_engaged_character_may_not_leave() -> None:
    """CORE.MOVE.LEAVE / CORE.MOVE.REMAINING: a character may not leave an engaged unit."""
    blue = [placement("marcher_spearmen", 30, 10, 90), joined("marcher_captain", 0)]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    b.state.engagements = [Engagement(2, 0, "front")]
    b._legal_cache = None
    assert Action("move", 1, None, "leave") not in b.legal_actions()


# --------------------------------------------------------------------- close combat
def test_joined_character_fights_from_the_front_rank() -> None:
    """CORE.MOVE.JOIN, CORE.CC.ATTACKS: the captain (WS5, S4, A3) strikes the orcs with its own profile;
    the spearmen fight with 4 front models (the captain holds the fifth slot) plus 5 supporters."""
    blue = [placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0)]
    red = [placement("orc_warriors", 36, FAR, 270)]
    # Spearmen: 9 misses. Captain: hits on 3+ (6, 6, 1), wounds T4 on 4+ (4, 3), orc save 6+ (5) fails.
    # Orcs strike back with 4 fighters + 4 supporters: 8 misses. Orcs' break test 1 + 2 passes.
    b = _combat(blue, red, [1] * 9 + [6, 6, 1, 4, 3, 5] + [1] * 8 + [1, 2])
    hits = {e["unit"]: e for e in rules(b, "CORE.CC.TO_HIT")}
    assert (hits[0]["attacks"], hits[0]["needed"], hits[0]["hits"]) == (9, 4, 0)
    assert (hits[1]["attacks"], hits[1]["needed"], hits[1]["hits"]) == (3, 3, 2)
    assert hits[2]["attacks"] == 8
    assert b.unit(2).models == 19
    compare = rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")[0]
    # Blue: 1 wound + charge + 3 ranks + outnumber (20 and the captain against 19) = 6; red: 3 ranks.
    assert compare["totals"] == [6, 3]
    assert rules(b, "CORE.CC.BREAK_TEST")[0]["passed"]


def test_challenge_accepted_duel_and_overkill() -> None:
    """CORE.CC.CHALLENGE.ISSUE, CORE.CC.CHALLENGE.DUEL, CORE.CC.CHALLENGE.OVERKILL, CORE.CC.COMBAT_RESULT.OVERKILL,
    CORE.WOUND.APPLY: the captain challenges the orc champion, strikes first and causes 3 wounds on a
    1-wound champion: 1 wound and +2 overkill for blue."""
    blue = [placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0)]
    red = [placement("orc_warriors", 36, FAR, 270, command=["champion"])]
    b = _combat(blue, red, [])
    assert b.pending.kind == "challenge" and b.pending.player == 0
    assert b.legal_actions() == [Action("challenge", 1, 2), END_PHASE]
    decide(b, Action("challenge", 1, 2))
    assert b.pending.kind == "accept" and b.pending.player == 1 and b.pending.unit == 2
    assert set(b.legal_actions()) == {Action("accept", 2), Action("refuse", 2), END_PHASE}
    # Duel: captain hits on 3+ (6, 6, 6), wounds on 4+ (6, 6, 6), the champion's 6+ save fails (1, 1, 1).
    # Blows: spearmen 5 + 5 supporters miss; orcs 5 + 5 (no champion's attack) miss; orcs' break test 6 + 6 fails.
    b.dice._script = [6, 6, 6, 6, 6, 6, 1, 1, 1] + [1] * 10 + [1] * 10 + [6, 6]
    decide(b, Action("accept", 2))
    orcs = b.unit(2)
    assert not orcs.champion and orcs.models == 19
    (duel,) = rules(b, "CORE.CC.CHALLENGE.DUEL")
    assert duel["round"] == 1 and duel["wounds"] == {"1": 1, "2": 0} and duel["standing"] == [True, False]
    (ok,) = rules(b, "CORE.CC.CHALLENGE.OVERKILL")
    assert (ok["side"], ok["excess"], ok["overkill"]) == (0, 2, 2)
    assert rules(b, "CORE.WOUND.APPLY")[0]["excess"] == 2
    assert [e["attacks"] for e in rules(b, "CORE.CC.TO_HIT")] == [3, 10, 10]
    assert rules(b, "CORE.CC.COMBAT_RESULT.OVERKILL") == [
        {"rule": "CORE.CC.COMBAT_RESULT.OVERKILL", "turn": b.state.turn, "phase": "combat", "side": 0, "value": 2}
    ]
    # Blue: 1 duel wound + charge + 3 ranks + overkill 2 + outnumber (21 v 19) = 8; red: 3 ranks.
    assert rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")[0]["totals"] == [8, 3]
    assert not rules(b, "CORE.CC.BREAK_TEST")[0]["passed"]


def test_refused_challenge_refuser_does_not_fight_and_lends_no_ld() -> None:
    """CORE.CC.CHALLENGE.REFUSE, CORE.TEST.LD_UNIT: the orc Big Boss (Ld8) refuses: it makes no attack and
    the orcs take their break test on their own Ld7."""
    blue = [placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0)]
    red = [placement("orc_warriors", 36, FAR, 270), joined("orc_big_boss", 0)]
    b = _combat(blue, red, [])
    decide(b, Action("challenge", 1, 2))
    assert set(b.legal_actions()) == {Action("accept", 3), Action("refuse", 3), END_PHASE}
    # Spearmen 4 + 5 miss; captain hits 3, wounds 3, saves fail; orcs 2 fighters + 2 supporters miss;
    # break test on Ld7 − 6 = 1 with a double 1: passed.
    b.dice._script = [1] * 9 + [6, 6, 6, 6, 6, 6, 1, 1, 1] + [1] * 4 + [1, 1]
    decide(b, Action("refuse", 3))
    assert b.unit(3).refused
    (ref,) = rules(b, "CORE.CC.CHALLENGE.REFUSE")
    assert ref["unit"] == 3 and ref["host"] == 2 and ref["champion"] is False
    strikers = [e["unit"] for e in rules(b, "CORE.CC.TO_HIT")]
    assert strikers == [0, 1, 2]  # the Big Boss does not attack
    assert b.unit(2).models == 17
    # Blue: 3 wounds + charge + 3 ranks + outnumber (21 v 18) = 8; red: 2 ranks (17 models).
    assert rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")[0]["totals"] == [8, 2]
    (bt,) = rules(b, "CORE.CC.BREAK_TEST")
    assert bt["base_ld"] == 7 and bt["ld"] == 1 and bt["passed"]
    assert characters.unit_ld(b, b.unit(2)) == 7


def test_surrounded_unit_and_lone_character_must_accept() -> None:
    """CORE.CC.CHALLENGE.REFUSE: a surrounded unit must accept (CORE.GEO.SURROUNDED)."""
    blue = [placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0)]
    red = [placement("orc_warriors", 36, FAR, 270, command=["champion"])]
    b = _combat(blue, red, [])
    decide(b, Action("challenge", 1, 2))
    b.state.engagements += [Engagement(9, 2, f) for f in ("left", "right", "rear")]
    b._legal_cache = None
    assert set(b.legal_actions()) == {Action("accept", 2), END_PHASE}


def test_champion_adds_one_attack() -> None:
    """CORE.CC.CHAMPION_ATTACK, CORE.CC.ATTACKS: the champion makes one attack more: 5 fighters + 5 supporters
    + 1 = 11 attacks, logged once under its own ID; CORE.CC.ATTACKS itself gives no bonus."""
    blue = [placement("marcher_spearmen", 36, 10, 90, command=["champion"])]
    red = [placement("orc_warriors", 36, FAR, 270)]
    b = _combat(blue, red, [1] * 11 + [1] * 10 + [1, 1])
    assert b.pending.kind != "challenge"  # no character or champion to challenge
    assert rules(b, "CORE.CC.TO_HIT")[0]["attacks"] == 11
    assert [(e["unit"], e["target"], e["extra_attacks"]) for e in rules(b, "CORE.CC.CHAMPION_ATTACK")] == [(0, 1, 1)]
    assert [(e["unit"], e["fighters"], e["support"], e["attacks"]) for e in rules(b, "CORE.CC.ATTACKS")] == [
        (0, 5, 5, 11), (1, 5, 5, 10)]


def test_champion_attack_switched_off() -> None:
    """CORE.CC.CHAMPION_ATTACK is a DEFAULT and a scenario switch: with ``champion_attack: false`` the champion
    strikes with its profile's A: 5 fighters + 5 supporters = 10 attacks, and no CORE.CC.CHAMPION_ATTACK."""
    blue = [placement("marcher_spearmen", 36, 10, 90, command=["champion"])]
    red = [placement("orc_warriors", 36, FAR, 270)]
    b = _combat(blue, red, [1] * 10 + [1] * 10 + [1, 1], champion_attack=False)
    assert b.state.queue["champion_attack"] is False
    assert [e["attacks"] for e in rules(b, "CORE.CC.TO_HIT")] == [10, 10]
    assert rules(b, "CORE.CC.CHAMPION_ATTACK") == []
    with pytest.raises(ConfigError, match="champion_attack: Input should be a valid boolean, got the string 'no'"):
        load_scenario({**scenario(blue, red, phase="combat", player="red"), "champion_attack": "no"})


# --------------------------------------------------------------------- shooting
def _shoot_at_orcs(models: int, dice: list[int]) -> Battle:
    """10 crossbowmen (BS3, S4) 10" from orcs cut down to ``models`` (one rank) with a joined Big Boss."""
    blue = [placement("marcher_crossbowmen", 36, 10, 90, models=10)]
    red = [placement("orc_warriors", 36, 10 + 10.0, 270, models=10, files=10), joined("orc_big_boss", 0)]
    b = battle(blue, red, phase="shooting")
    b.unit(1).models = models
    b.dice._script = list(dice)
    shooting.resolve_fire(b, b.unit(0), b.unit(1))
    return b


def test_shooting_hits_a_joined_character_on_a_6_with_fewer_than_5_rank_and_file() -> None:
    """CORE.SHOOT.ALLOCATE: 4 orcs and a Big Boss; 3 hits, allocation dice 6, 2, 3: one hit on the Big Boss.

    The orcs take 2 hits (wound 4+: 4, 4; save 6+: 1, 1), the Big Boss (T5, light armour: no save
    against S4) 1 hit, wounded on 5+ (5).
    """
    b = _shoot_at_orcs(4, [6, 6, 6, 1, 1, 1, 1, 1, 1, 1] + [6, 2, 3] + [4, 4, 1, 1] + [5])
    (alloc,) = [e for e in rules(b, "CORE.SHOOT.ALLOCATE") if "characters" in e]
    assert alloc["hits"] == 3 and alloc["rank_and_file"] == 2 and alloc["characters"] == {"2": 1}
    assert b.unit(1).models == 2
    assert b.unit(2).wounds_taken == 1 and b.unit(2).in_play


def test_shooting_never_hits_a_character_in_a_unit_of_5_rank_and_file() -> None:
    """CORE.SHOOT.ALLOCATE: with 5 R&F no allocation roll is made; all hits go to the R&F."""
    b = _shoot_at_orcs(5, [6, 6, 6, 1, 1, 1, 1, 1, 1, 1] + [4, 4, 4, 1, 1, 1])
    assert not [e for e in rules(b, "CORE.SHOOT.ALLOCATE") if "characters" in e]
    assert b.unit(1).models == 2 and b.unit(2).wounds_taken == 0


@pytest.mark.parametrize(("models", "face", "saved"), [(6, 2, True), (6, 1, False), (5, None, False)])
def test_look_out_sir(models: int, face: int | None, saved: bool) -> None:
    """CORE.SR.LOOK_OUT_SIR: in a unit of more than 5 R&F a character hit by a template passes it on a 2+."""
    b = battle([placement("marcher_spearmen", 36, 10, 90, models=10, files=10), joined("marcher_captain", 0)],
               [placement("orc_warriors", 36, 40, 270)])
    b.unit(0).models = models
    b.dice._script = [] if face is None else [face]
    assert characters.look_out_sir(b, b.unit(0), 1) is saved
    assert len(rules(b, "CORE.SR.LOOK_OUT_SIR")) == (0 if face is None else 1)


# --------------------------------------------------------------------- leadership, BSB, General
def _engaged_pair(blue: list[dict], red: list[dict]) -> Battle:
    b = battle(blue, red, phase="combat", player="red")
    a, d = b.unit(0), b.unit(len(blue))
    pose, _, _ = contact_placement(b, a, d, "front")
    a.x, a.y, a.facing = pose.x, pose.y, pose.facing
    b.state.engagements = [Engagement(0, d.uid, "front", charged=True, turn=b.state.turn)]
    b.events.clear()
    return b


def test_unit_uses_the_joined_characters_ld() -> None:
    """CORE.TEST.LD_UNIT: spearmen (Ld7) with a captain (Ld8) break-test on Ld8 − 2: 3 + 3 passes (21 models
    against 25 orcs: not Inspired)."""
    b = _engaged_pair([placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0)],
                      [placement("orc_warriors", 36, FAR, 270, models=25)])
    b.dice._script = [3, 3]
    assert combat.break_test(b, b.unit(0), 2, [b.unit(2)])
    (bt,) = rules(b, "CORE.CC.BREAK_TEST")
    assert bt["base_ld"] == 8 and bt["ld"] == 6
    (ld,) = rules(b, "CORE.TEST.LD_UNIT")
    assert ld["unit"] == 0 and ld["character"] == 1 and ld["ld"] == 8


def test_bsb_rerolls_a_failed_break_test_and_adds_one() -> None:
    """CORE.SR.BSB, CORE.CC.BREAK_ORDER: 6 + 6 fails, the BSB's re-roll 1 + 2 passes; +1 combat result."""
    b = _engaged_pair(
        [placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0, options=["battle_standard"])],
        [placement("orc_warriors", 36, FAR, 270)],
    )
    assert b.unit(1).bsb
    b.dice._script = [6, 6, 1, 2]
    assert combat.break_test(b, b.unit(0), 2, [b.unit(2)])
    (rr,) = rules(b, "CORE.SR.BSB")
    assert rr["bsb"] == 1 and rr["test"] == "CORE.CC.BREAK_TEST" and rr["roll"] == 3 and rr["passed"]
    totals, parts = combat.combat_result(b, {0: [0], 1: [2]}, [0, 0], 0, b.state.engagements)
    assert parts[0]["bsb"] == 1 and "bsb" not in parts[1]


def test_bsb_reroll_reaches_12_inches() -> None:
    """CORE.SR.BSB: a unit 11" from the BSB's unit re-rolls a failed Panic test; one 13" away does not."""
    blue = [
        placement("marcher_spearmen", 20, 10, 90),
        joined("marcher_captain", 0, options=["battle_standard"]),
        placement("marcher_spearmen", 20 + 5 * INFANTRY_BASE + 11.0, 10, 90),
        placement("marcher_spearmen", 20 - 5 * INFANTRY_BASE - 13.0, 10, 90),
    ]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    assert characters.bsb_in_range(b, b.unit(2)) is b.unit(1)
    assert characters.bsb_in_range(b, b.unit(3)) is None
    b.dice._script = [6, 6, 2, 2]
    assert psychology.test_ld(b, b.unit(2), 7, "CORE.PSY.PANIC.TEST")
    b.dice._script = [6, 6]
    assert not psychology.test_ld(b, b.unit(3), 7, "CORE.PSY.PANIC.TEST")
    assert [e["unit"] for e in rules(b, "CORE.SR.BSB")] == [2]


def test_bsb_in_a_broken_unit_scores_100() -> None:
    """CORE.VP.BSB, CORE.SR.BSB: orcs with their BSB fail the break test and the re-roll: +100 for blue."""
    b = _engaged_pair([placement("marcher_spearmen", 36, 10, 90)],
                      [placement("orc_warriors", 36, FAR, 270, models=10), joined("orc_big_boss", 0, options=["battle_standard"])])
    b.dice._script = [6, 6, 6, 6]
    combat._result_and_break(b, b.state.engagements, {0: [0], 1: [1]}, [5, 0], True, 0)
    (bt,) = rules(b, "CORE.CC.BREAK_TEST")
    assert bt["base_ld"] == 8 and not bt["passed"]
    (rr,) = rules(b, "CORE.SR.BSB")
    assert not rr["passed"] and rr["test"] == "CORE.CC.BREAK_TEST"
    assert b.unit(1).broken and b.unit(2).broken
    assert victory.breakdown(b)[0]["bsb"] == 100


def test_slain_general_and_bsb_score_100_each() -> None:
    """CORE.VP.GENERAL, CORE.VP.BSB, CORE.VP.DESTROYED: a slain General and BSB score +100 each, and their points."""
    red = [
        placement("orc_warriors", 36, 40, 270),
        joined("orc_warlord", 0, general=True),
        placement("orc_big_boss", 20, 40, 270, models=1, files=1, options=["battle_standard"]),
    ]
    b = battle([placement("marcher_spearmen", 36, 10, 90)], red)
    assert victory.breakdown(b)[0]["general"] == 0 and victory.breakdown(b)[0]["bsb"] == 0
    b.unit(2).removed = True
    b.unit(3).removed = True
    parts = victory.breakdown(b)[0]
    assert parts["general"] == 100 and parts["bsb"] == 100
    assert parts["destroyed"] == b.unit(2).points + b.unit(3).points  # scored apart from the orcs


def test_joined_general_flees_with_its_unit() -> None:
    """CORE.VP.GENERAL: a General in a fleeing unit is fleeing too (CORE.PSY.FLEE.STATUS)."""
    b = battle([placement("marcher_spearmen", 36, 10, 90)],
               [placement("orc_warriors", 36, 38, 270), joined("orc_warlord", 0, general=True)])
    psychology.flee(b, b.unit(1), (36.0, 10.0), "CORE.PSY.PANIC.FAIL", roll=3)
    characters.sync(b.state)
    assert b.unit(2).fleeing and victory.breakdown(b)[0]["general"] == 100


@pytest.mark.parametrize(("gap", "large", "ld"), [(10.0, False, 9), (13.0, False, None), (13.0, True, 9)])
def test_general_inspiring_presence_from_its_unit(gap: float, large: bool, ld: int | None) -> None:
    """CORE.SR.GENERAL, CORE.SR.INSPIRING_PRESENCE: 12" from the General's unit (18" for a Large Target)."""
    blue = [
        placement("marcher_spearmen", 20, 10, 90),
        joined("lord_marshal", 0, general=True),
        placement("marcher_spearmen", 20 + 5 * INFANTRY_BASE + gap, 10, 90),
    ]
    b = battle(blue, [placement("orc_warriors", 36, 40, 270)])
    if large:
        b.unit(1).special_rules.append("large_target")
    assert psychology.general_ld(b, b.unit(2)) == ld
    assert psychology.general_ld(b, b.unit(0)) == 9


# --------------------------------------------------------------------- casualties and flight
def test_command_models_die_last_in_order() -> None:
    """CORE.CC.CASUALTIES: R&F first, then the musician, the standard bearer and the champion."""
    from battleline.env.rules.casualties import apply_wounds

    b = battle([placement("marcher_spearmen", 36, 10, 90, models=10, command=["champion", "standard", "musician"])],
               [placement("orc_warriors", 36, 40, 270)])
    u = b.unit(0)
    assert apply_wounds(b, u, 7, rule="CORE.CC.CASUALTIES") == 7  # the 7 R&F
    assert (u.models, u.musician, u.standard, u.champion) == (3, True, True, True)
    apply_wounds(b, u, 1, rule="CORE.CC.CASUALTIES")
    assert (u.musician, u.standard, u.champion) == (False, True, True)
    apply_wounds(b, u, 1, rule="CORE.CC.CASUALTIES")
    assert (u.models, u.standard, u.champion) == (1, False, True)


def test_excess_wounds_are_lost_outside_a_duel() -> None:
    """CORE.WOUND.APPLY: a 2-wound captain alone takes 3 wounds: slain, the excess is lost (no overkill)."""
    from battleline.env.rules.casualties import apply_wounds

    b = battle([placement("marcher_captain", 36, 10, 90, models=1, files=1)], [placement("orc_warriors", 36, 40, 270)])
    assert apply_wounds(b, b.unit(0), 3, rule="CORE.CC.CASUALTIES") == 1
    assert b.unit(0).removed and not rules(b, "CORE.WOUND.APPLY")


def test_break_test_on_the_generals_ld() -> None:
    """CORE.SR.INSPIRING_PRESENCE, CORE.CC.BREAK_ORDER: spearmen (Ld7) 10" from the General (Ld9) test on 9 − 3."""
    b = _engaged_pair(
        [placement("marcher_spearmen", 36, 10, 90), placement("lord_marshal", 10, 10, 90, models=1, files=1, general=True)],
        [placement("orc_warriors", 36, FAR, 270)],
    )
    spears, general = b.unit(0), b.unit(1)
    general.x, general.y = spears.x - spears.width / 2 - 10.0 - INFANTRY_BASE / 2, spears.y  # 10" from the spearmen
    assert space.unit_distance(spears, general) == pytest.approx(10.0)
    b.dice._script = [3, 3]
    assert combat.break_test(b, b.unit(0), 3, [b.unit(2)])
    (ip,) = rules(b, "CORE.SR.INSPIRING_PRESENCE")
    assert ip["ld"] == 9 and ip["own_ld"] == 7
    assert rules(b, "CORE.CC.BREAK_TEST")[0]["ld"] == 6


def test_character_fights_on_when_its_unit_is_wiped_out() -> None:
    """CORE.TYPE.CHARACTER: the last spearman slain, the captain stands alone and takes over the engagement."""
    b = _engaged_pair([placement("marcher_spearmen", 36, 10, 90, models=10, files=10), joined("marcher_captain", 0)],
                      [placement("orc_warriors", 36, FAR, 270)])
    from battleline.env.rules.casualties import apply_wounds

    apply_wounds(b, b.unit(0), 10, rule="CORE.CC.CASUALTIES")
    cap = b.unit(1)
    assert b.unit(0).removed and cap.alive and cap.joined_to is None
    assert [(e.attacker, e.defender, e.facing) for e in b.state.engagements] == [(1, 2, "front")]
    assert geo.distance(space.footprint(cap), space.footprint(b.unit(2))) <= geo.EPS


def test_character_left_alone_stands_in_the_front_rank_it_fought_in() -> None:
    """CORE.TYPE.CHARACTER: 20 spearmen in 4 ranks of 5 (front edge at y = 28.43) all slain at once: the captain
    stands in its front-rank slot, (36, 28.03) facing 90°, touching the orcs, not in the middle of the dead unit."""
    b = _engaged_pair([placement("marcher_spearmen", 36, 10, 90, models=20, files=5), joined("marcher_captain", 0)],
                      [placement("orc_warriors", 36, FAR, 270)])
    from battleline.env.rules.casualties import apply_wounds

    assert b.unit(0).y == pytest.approx(26.8504, abs=1e-4) and b.unit(0).depth == pytest.approx(4 * INFANTRY_BASE)
    apply_wounds(b, b.unit(0), 20, rule="CORE.CC.CASUALTIES")
    cap = b.unit(1)
    assert cap.alive and (cap.x, round(cap.y, 4), cap.facing) == (36.0, 28.0315, 90.0)
    assert [(e.attacker, e.defender, e.facing) for e in b.state.engagements] == [(1, 2, "front")]
    assert geo.distance(space.footprint(cap), space.footprint(b.unit(2))) <= geo.EPS
    assert b.check_invariants() == []


def test_two_characters_left_alone_stand_side_by_side() -> None:
    """CORE.TYPE.CHARACTER: a captain and a lord marshal in spearmen cut down to one model, then wiped out: the
    captain stands in the centre slot (36, 28.03), the marshal one base (0.79") to its right, both touching the
    orcs, not on one spot (they overlapped by 0.62 sq in)."""
    b = _engaged_pair([placement("marcher_spearmen", 36, 10, 90, models=10, files=5), joined("marcher_captain", 0),
                       joined("lord_marshal", 0)], [placement("orc_warriors", 36, FAR, 270)])
    from battleline.env.rules.casualties import apply_wounds

    apply_wounds(b, b.unit(0), 9, rule="CORE.CC.CASUALTIES")
    apply_wounds(b, b.unit(0), 1, rule="CORE.CC.CASUALTIES")
    captain, marshal = b.unit(1), b.unit(2)
    assert (captain.x, round(captain.y, 4)) == (36.0, 28.0315)
    assert (round(marshal.x, 4), round(marshal.y, 4)) == (round(36 + INFANTRY_BASE, 4), 28.0315)
    assert sorted((e.attacker, e.defender) for e in b.state.engagements) == [(1, 3), (2, 3)]
    assert b.check_invariants() == []


def test_characters_left_alone_widen_away_from_an_enemy_on_the_flank() -> None:
    """CORE.TYPE.CHARACTER, CORE.CC.CONTACT_KEEP: spearmen (10 in 2 files) with a captain and a lord marshal, orcs in
    front and more orcs touching their right flank; cut to one model, it slides 0.394" right to keep both contacts
    (36.394, 28.03); wiped out, the rank widens to the left, clear of the flank orcs: the captain at (35.606, 28.03),
    the marshal at (36.394, 28.03), not at 37.181, inside the flank orcs by 0.62 sq in."""
    from battleline.env.rules.casualties import apply_wounds

    b = _engaged_pair([placement("marcher_spearmen", 36, 10, 90, models=10, files=2), joined("marcher_captain", 0),
                       joined("lord_marshal", 0)],
                      [placement("orc_warriors", 36, FAR, 270), placement("orc_warriors", 60, FAR, 180, files=5)])
    host, flank = b.unit(0), b.unit(4)
    flank.x = host.x + host.width / 2 + flank.depth / 2  # its front on the spearmen's right side
    flank.y = host.y + host.depth / 2 - flank.width / 2  # its left end level with the spearmen's front
    b.state.engagements.append(Engagement(4, 0, "right", charged=False, turn=b.state.turn))
    assert b.check_invariants() == []
    apply_wounds(b, host, 9, rule="CORE.CC.CASUALTIES")
    assert (round(host.x, 4), round(host.y, 4), host.models) == (36.3937, 28.0315, 1)
    assert rules(b, "CORE.CC.CONTACT_KEEP")[-1]["contacts"] == 2
    assert characters.widen_shift(b.state, host) == -1
    apply_wounds(b, host, 1, rule="CORE.CC.CASUALTIES")
    captain, marshal = b.unit(1), b.unit(2)
    assert host.removed and captain.alive and marshal.alive
    assert [(round(c.x, 4), round(c.y, 4)) for c in (captain, marshal)] == [(35.6063, 28.0315), (36.3937, 28.0315)]
    assert b.check_invariants() == []


def test_character_left_alone_apart_from_an_inherited_enemy_disengages_at_the_round_result() -> None:
    """CORE.TYPE.CHARACTER, CORE.CC.CONTACT_KEEP: 10 spearmen in one rank (36, 20) facing 90° with a captain in the
    centre slot (x 35.21..36.00); orcs in 2 files touch only their files 8-9 (x 38.36..39.94). The spearmen are
    wiped out: the captain stands alone in his slot, 3 bases (2.362") from the orcs, with the spearmen's
    engagement. Red wins 4 − 0 (3 wounds, outnumber): the orcs' 2" straight ahead (−y) never reach him, so they
    disengage; the captain breaks on Ld 8 − 4 (rolls 3 + 3) and flees 2 + 2 = 4" away from the orcs he fought."""
    from battleline.env.rules.casualties import SHRANK, apply_wounds

    w = INFANTRY_BASE
    b = battle([placement("marcher_spearmen", 36, 20, 90, models=10, files=10), joined("marcher_captain", 0)],
               [placement("orc_warriors", 36 + 4 * w, 20 + 3 * w, 270, models=10, files=2)], phase="combat",
               player="red")
    group = [Engagement(0, 2, "front", charged=True, turn=b.state.turn)]
    b.state.engagements = list(group)
    apply_wounds(b, b.unit(0), 10, rule="CORE.CC.CASUALTIES")
    cap, orcs = b.unit(1), b.unit(2)
    assert (cap.x, cap.y, cap.flags[SHRANK]) == (pytest.approx(36 - w / 2), 20.0, [2])
    assert [(e.attacker, e.defender) for e in b.state.engagements] == [(1, 2)]
    assert geo.distance(space.footprint(cap), space.footprint(orcs)) == pytest.approx(3 * w)
    b.events.clear()
    b.dice._script = [3, 3, 2, 2]
    assert combat._result_and_break(b, group, {0: [0], 1: [2]}, [0, 3], False, None) is False
    (compare,) = rules(b, "CORE.CC.COMBAT_RESULT.COMPARE")
    assert (compare["totals"], compare["winner"]) == ([0, 4], 1)
    (bt,) = rules(b, "CORE.CC.BREAK_TEST")
    assert (bt["unit"], bt["ld"], bt["roll"], bt["passed"]) == (1, 4, 6, False)
    (keep,) = rules(b, "CORE.CC.CONTACT_KEEP")
    assert (keep["unit"], keep["target"], keep["closed"], keep["disengaged"]) == (2, 1, False, True)
    (flee,) = rules(b, "CORE.CC.FLEE")
    assert (flee["unit"], flee["away_from"], flee["roll"], flee["distance"]) == (1, 2, 4, 4.0)
    assert cap.fleeing and b.state.engagements == [] and SHRANK not in cap.flags
    assert (orcs.x, orcs.y) == pytest.approx((36 + 4 * w, 20 + 3 * w))
    assert b.check_invariants() == []


def test_character_is_caught_with_its_unit() -> None:
    """CORE.CC.CAUGHT: the orcs flee 5, the pursuit rolls 6: the orcs and their Big Boss are destroyed."""
    b = _engaged_pair([placement("marcher_spearmen", 36, 10, 90)],
                      [placement("orc_warriors", 36, FAR, 270, models=10), joined("orc_big_boss", 0)])
    b.state.queue["pursuit"] = {"broken": [1], "ask": [], "answers": {"0": "pursue"}, "winner": 0}
    b.dice._script = [2, 3, 3, 3]
    combat._flee_and_pursue(b)
    assert b.unit(1).removed and b.unit(2).removed
    assert victory.breakdown(b)[0]["destroyed"] == b.unit(1).points + b.unit(2).points


# --------------------------------------------------------------------- deployment, data, codec
def test_army_list_characters_deploy_with_their_units() -> None:
    """CORE.SETUP.DEPLOY: characters with ``joins`` deploy inside their units' front ranks."""
    b = Battle.from_scenario("pitched_battle", seed=1)
    while b.state.stage == "deploy":
        b.apply(END_PHASE)
    joined_chars = [u for u in b.state.units if u.joined_to is not None]
    assert len(joined_chars) >= 2
    for c in joined_chars:
        host = b.unit(c.joined_to)
        assert c.deployed and host.deployed and c.uid in host.joined
        assert space.footprint(host).buffer(geo.EPS).covers(space.footprint(c))
    bsbs = [u for u in b.state.units if u.bsb]
    generals = [u for u in b.state.units if u.general]
    assert sorted(u.side for u in bsbs) == [0, 1] and sorted(u.side for u in generals) == [0, 1]


def _no_slot_for(monkeypatch: pytest.MonkeyPatch, uid: int) -> None:
    from battleline.env.rules import deployment

    first = deployment._first_slot  # where the automatic deployment looks for a unit's slot
    monkeypatch.setattr(deployment, "_first_slot", lambda battle, u, order: None if u.uid == uid else first(battle, u, order))


def _deploy_all(seed: int = 1) -> Battle:
    b = Battle.from_scenario("pitched_battle", seed=seed)
    while b.state.stage == "deploy":
        b.apply(END_PHASE)
    return b


def test_a_unit_that_finds_no_slot_takes_a_free_place_in_its_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    """CORE.SETUP.DEPLOY / CORE.SETUP.ZONES: the Marcher Spearmen (uid 3, with the Marcher Captain) fit no slot:
    they deploy at the free place of the zone nearest the centre line (slot None), wholly inside the 12" zone,
    1" clear of every unit, the Captain with them."""
    from battleline.env.rules import geometry as geo

    _no_slot_for(monkeypatch, 3)
    b = _deploy_all()
    (ev,) = [e for e in b.events if e["rule"] == "CORE.SETUP.DEPLOY" and e["unit"] == 3]
    assert (ev["slot"], round(ev["x"], 3), round(ev["y"], 3), ev["facing"], ev["joined"]) == (None, 35.862, 2.756, 90.0, [1])
    spears, captain = b.unit(3), b.unit(1)
    assert spears.deployed and captain.deployed and not [e for e in b.events if e.get("no_room")]
    poly = space.footprint(spears)
    assert poly.bounds[1] >= -geo.EPS and poly.bounds[3] <= 12.0 + geo.EPS
    others = [u for u in b.state.units if u.alive and u.uid != 3]
    assert min(geo.distance(poly, space.footprint(o)) for o in others) >= 1.0 - geo.EPS


def test_a_unit_with_no_room_in_its_zone_takes_its_joined_character_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """CORE.SETUP.DEPLOY: when the zone has no free place either, the unit never arrives, and neither does the
    character joined to it (it used to stay undeployed and not removed)."""
    from battleline.env.rules import deployment

    _no_slot_for(monkeypatch, 3)
    monkeypatch.setattr(deployment, "zone_spot", lambda battle, u: None)
    b = _deploy_all()
    gone = [(e["unit"], e["slot"], e["no_room"]) for e in b.events if e.get("no_room")]
    assert gone == [(3, None, True), (1, None, True)]
    assert b.unit(3).removed and b.unit(1).removed and not b.unit(1).deployed


def test_joins_validation() -> None:
    """CORE.MOVE.JOIN in army lists: only characters join, into a unit with the same base, at most 2."""
    men = load_faction("men")

    def entry(unit: str, models: int = 1, **kw: object) -> ArmyUnitConfig:
        return ArmyUnitConfig(unit=unit, models=models, **kw)

    spears = entry("marcher_spearmen", 20, label="Spears")
    assert check_joins([spears, entry("marcher_captain", joins="Spears")], men) == []
    assert check_joins([spears, entry("marcher_captain", joins=0)], men) == []
    assert check_joins([spears, entry("marcher_captain", joins=1)], men) == [
        "units[1].joins: a character cannot join itself (1 is this entry)"]
    errors = check_joins(
        [
            spears,
            entry("marcher_halberdiers", 20, joins=0),
            entry("marcher_captain", joins="Knights"),
            entry("order_knights", 5, label="Knights"),
            entry("marcher_captain", joins="Nobody"),
            entry("marcher_captain", joins=0),
            entry("marcher_captain", joins=0),
            entry("lord_marshal", joins=0),
        ],
        men,
    )
    assert errors == [
        "units[1].joins: only a character may join a unit, 'marcher_halberdiers' is not one",
        "units[2].joins: 'marcher_captain' and 'order_knights' have different bases",
        "units[4].joins: 'Nobody' names no entries; use a label or an index",
        "units[7].joins: units[0] would hold more than 2 characters",
    ]


@pytest.mark.parametrize("joins", [1, "Hero", "lord_marshal"])
def test_a_character_cannot_join_itself(joins: object) -> None:
    """A placement whose ``joins`` names the character itself (index, label or unit id) says so."""
    data = scenario([placement("marcher_spearmen", 30, 10, 90),
                     placement("lord_marshal", 40, 10, 90, models=1, files=1, label="Hero", joins=joins)],
                    [placement("orc_warriors", 30, 38, 270)])
    with pytest.raises(ConfigError) as info:
        load_scenario(data)
    assert str(info.value) == (
        f"<dict>: blue.placements[1].joins: a character cannot join itself ({joins!r} is this entry)")


def test_placements_refuse_a_duplicate_label() -> None:
    """Explicit placements: a label given twice is refused at the second, as in army lists."""
    data = scenario([placement("marcher_spearmen", 30, 10, 90, label="Line"),
                     placement("marcher_halberdiers", 50, 10, 90, label="Line")],
                    [placement("orc_warriors", 30, 38, 270)])
    with pytest.raises(ConfigError) as info:
        load_scenario(data)
    assert str(info.value) == "<dict>: blue.placements[1].label: 'Line' is also placements[0]'s label; a label names one unit"


def test_codec_round_trips_join_leave_challenge_accept_refuse() -> None:
    """CORE.MOVE.JOIN / LEAVE, CORE.CC.CHALLENGE.ISSUE / REFUSE through the flat action codec."""
    codec = ActionCodec(10)
    blue = [placement("marcher_spearmen", 36, 10, 90), joined("marcher_captain", 0)]
    b = _combat(blue, [placement("orc_warriors", 36, FAR, 270, command=["champion"])], [])
    for a in (Action("move", 1, 0, "join"), Action("move", 1, None, "leave"), Action("challenge", 1, 2)):
        assert codec.decode(codec.encode(a, b, 0), b, 0) == a
    for a in (Action("accept", 2), Action("refuse", 2)):
        assert codec.decode(codec.encode(a, b, 1), b, 1) == a
    mask = codec.mask(b, 0)
    assert mask[codec.encode(Action("challenge", 1, 2), b, 0)] and mask.sum() == 2
    assert codec.describe(codec.layout.challenge + 1 * 10 + 0) == "challenge own 1 -> enemy 0"
