"""Room in the castle for every defender unit deployed from an army list (SIEGE.SCEN.DEPLOY,
env/rules/siege/room.py): nobody is left off the table, and a castle too small is a config error."""

from __future__ import annotations

import random

import pytest

from battleline.env.rules import space
from battleline.env.rules.battle import Battle
from battleline.env.rules.config import ConfigError, load_scenario
from battleline.env.rules.siege import castle as cs
from battleline.env.rules.siege import room
from tests.test_siege_play import ARMIES_SIEGE

KNIGHTLY_SIEGE = {**ARMIES_SIEGE, "blue": {"faction": "men", "army": "men_knightly_order"}}


def deploy(scenario: dict, choose) -> Battle:
    """A battle from ``scenario`` deployed with ``choose(battle) -> action``."""
    b = Battle.from_scenario(scenario, seed=1)
    while b.state.stage == "deploy":
        b.apply(choose(b))
    return b


def end_at_once(b: Battle):
    return next(a for a in b.legal_actions() if a.kind == "end_phase")


def places(b: Battle, side: int = 0) -> dict[str, tuple]:
    """name -> (x, y, files) of the side's units standing as units of their own (inches)."""
    return {u.name: (round(u.x, 2), round(u.y, 2), u.files) for u in b.state.units if u.side == side and u.alive}


def test_marcher_host_defends_with_every_unit_handgunners_knights_and_outriders_included():
    b = deploy(ARMIES_SIEGE, end_at_once)
    assert places(b) == {
        "Battle Wizard": (36.0, 17.61, 1),  # front wall S2
        "Marcher Spearmen": (36.0, 12.24, 6),  # courtyard row 4 (front 15")
        "Marcher Halberdiers": (24.0, 8.64, 6),
        "Sworn Greatswords": (30.0, 9.03, 6),
        "Marcher Handgunners": (42.0, 6.21, 8),
        "Knights of the Order": (36.0, 1.97, 6),
        "Marcher Outriders": (42.0, 13.03, 5),
        "Great Cannon": (48.0, 5.03, 1),
    }
    assert not [e for e in b.events if e.get("no_room")]
    assert all(u.deployed and not u.removed for u in b.state.units)
    yard = cs.courtyard(b.state).buffer(0.01)
    for u in b.state.units:
        if u.side == 0 and u.alive and u.troop_type == "cavalry":
            assert yard.covers(space.footprint(u)), u.name  # SIEGE.MOVE.WALLS: no cavalry on a wall


def test_a_unit_no_slot_fits_takes_the_place_the_plan_keeps_for_it():
    b = deploy(KNIGHTLY_SIEGE, end_at_once)
    spots = [e for e in b.events if e["rule"] == "SIEGE.SCEN.DEPLOY"]
    assert [(b.state.units[e["unit"]].name, e["slot"], round(e["x"], 2), round(e["y"], 2), e["files"])
            for e in spots] == [("Marcher Outriders", None, 36.0, 1.97, 5), ("Marcher Spearmen", None, 30.18, 1.97, 6)]
    assert sum(u.deployed for u in b.state.units if u.side == 0) == 10
    assert cs.check_invariants(b.state) == []


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scenario", [ARMIES_SIEGE, KNIGHTLY_SIEGE], ids=["marcher_host", "knightly_order"])
def test_random_deployment_choices_never_leave_a_defender_without_room(scenario, seed):
    rng = random.Random(seed)
    b = deploy(scenario, lambda battle: rng.choice(battle.legal_actions()))
    assert [u.name for u in b.state.units if not u.deployed or u.removed] == []
    area = cs.castle_area(b.state).buffer(0.01)
    assert all(area.covers(space.footprint(u)) for u in b.state.units if u.side == 0 and u.alive)
    assert cs.check_invariants(b.state) == []


def test_slots_keep_clear_of_the_places_planned_for_the_units_still_to_deploy():
    b = Battle.from_scenario(ARMIES_SIEGE, seed=1)
    plan = b.state.queue[room.KEY]
    assert sorted(int(k) for k in plan) == [2, 3, 4, 5, 6, 7, 8, 9]  # the two joined characters come with their units
    for a in b.legal_actions():
        if a.kind == "deploy":
            u = b.state.units[a.unit]
            assert room.clear_of_plan(b.state, u, space.footprint_at(u, room.planned(b.state, u)[0])) is True
    spearmen = b.state.units[3]
    knights_place = space.footprint_at(b.state.units[7], room.planned(b.state, b.state.units[7])[0])
    assert room.clear_of_plan(b.state, spearmen, knights_place) is False


def _cramped(depth_free: float) -> dict:
    """The army siege in a custom castle whose keep leaves a courtyard strip ``depth_free`` inches deep."""
    keep = [[20, depth_free], [52, depth_free], [52, 16], [20, 16]]
    return {**ARMIES_SIEGE, "castle": {"defender": "blue", "layout": "custom",
                                       "elements": [{"id": "K", "kind": "citadel", "polygon": keep}]}}


@pytest.mark.parametrize(("depth_free", "unit"), [
    (2, "'Marcher Spearmen' (marcher_spearmen, 39 models)"),
    (6, "'Marcher Handgunners' (marcher_handgunners, 16 models)"),
])
def test_a_defender_army_the_castle_cannot_hold_is_a_one_line_config_error(depth_free, unit):
    with pytest.raises(ConfigError) as err:
        load_scenario(_cramped(depth_free))
    assert str(err.value) == (
        f"<dict>: blue.army: {unit} finds no room inside the castle: the defender deploys everything in the "
        "courtyard or on the walls (SIEGE.SCEN.DEPLOY); field fewer or smaller units")


def test_a_siege_from_army_lists_needs_the_slot_grid_zone_too():
    """The attacker deploys on CORE.SETUP.DEPLOY's grid (rows 3-11" from his edge) in a siege as well: another
    zone depth is a config error, as for a field battle (it used to be skipped whenever there was a castle)."""
    with pytest.raises(ConfigError) as err:
        load_scenario({**ARMIES_SIEGE, "zone_depth": 10}, file="s.yaml")
    assert str(err.value) == ('s.yaml: zone_depth: army lists deploy in rows 3-11" from the edge, a 12" zone, '
                              'not 10" (give explicit placements for another zone)')
