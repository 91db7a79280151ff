"""The matplotlib renderer (env/render.py)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from battleline.env.render import charge_paths, render_battle
from battleline.env.rules.battle import Battle
from battleline.env.rules.config import load_scenario
from battleline.env.rules.setup import build_state

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _random_battle(scenario: str, seed: int) -> Battle:
    battle = Battle.from_scenario(scenario, seed=seed)
    rng = random.Random(seed)
    for _ in range(5000):
        if battle.is_over:
            break
        legal = battle.legal_actions()
        moves = [a for a in legal if a.kind != "end_phase"]
        battle.apply(rng.choice(moves or legal))
    return battle


def test_state_renders_to_an_rgb_uint8_array():
    state = build_state(load_scenario("skirmish_line"))
    img = render_battle(state)
    assert isinstance(img, np.ndarray)
    assert img.dtype == np.uint8
    assert img.ndim == 3 and img.shape[2] == 3
    assert img.shape[:2] == (860, 1200)
    assert img.std() > 0  # something was drawn


def test_dpi_scales_the_array():
    state = build_state(load_scenario("skirmish_line"))
    assert render_battle(state, dpi=50).shape == (430, 600, 3)


def test_finished_battle_writes_a_png(tmp_path):
    battle = _random_battle("skirmish_line", seed=2)
    path = tmp_path / "sub" / "battle.png"
    assert render_battle(battle, path, title="random vs random") is None
    assert path.read_bytes()[:8] == PNG_MAGIC


def test_pitched_battle_with_deployment_renders():
    battle = _random_battle("pitched_battle", seed=1)
    img = render_battle(battle)
    assert img.shape == (860, 1200, 3) and img.dtype == np.uint8


def test_charge_paths_run_from_declaration_to_contact():
    events = [
        {"rule": "CORE.SETUP.DEPLOY", "turn": 0, "phase": "deployment", "unit": 0, "x": 10.0, "y": 5.0},
        {"rule": "CORE.MOVE.NORMAL", "turn": 1, "phase": "movement", "unit": 0, "x": 10.0, "y": 9.0},
        {"rule": "CORE.CHARGE.DECLARE", "turn": 2, "phase": "movement", "unit": 0, "target": 1},
        {"rule": "CORE.CHARGE.MOVE", "turn": 2, "phase": "movement", "unit": 0, "target": 1, "x": 12.0, "y": 20.0},
        {"rule": "CORE.CHARGE.DECLARE", "turn": 2, "phase": "movement", "unit": 2, "target": 1},
        {"rule": "CORE.CHARGE.MOVE", "turn": 2, "phase": "movement", "unit": 2, "target": 1, "x": 1.0, "y": 1.0},
    ]
    paths = charge_paths(events)
    assert paths == [{"unit": 0, "target": 1, "turn": 2, "start": (10.0, 9.0), "end": (12.0, 20.0)}]
    # A unit placed by the scenario has a known start without any event.
    assert len(charge_paths(events, initial={2: (3.0, 3.0, 90.0)})) == 2


def test_bad_input_raises_type_error():
    with pytest.raises(TypeError):
        render_battle(object())


def test_siege_castle_drawn_with_damage_state_and_equipment():
    """The castle: each element coloured by its damage bonus, breach, ruins and gate state; the siege gear."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon as MplPolygon

    from battleline.env.render import _draw_castle, castle_colour
    from battleline.env.rules.siege import castle as cs

    b = Battle.from_scenario("siege", seed=0)
    plain = render_battle(b)
    s3 = cs.element(b.state, "S3")
    s3.damage_bonus, s3.breached, s3.parapet_destroyed = 5, True, True
    cs.element(b.state, "T2").collapsed = True
    cs.element(b.state, "G").gate = "smashed"
    damaged = render_battle(b)
    assert plain.shape == damaged.shape and (plain != damaged).any()
    ax = Figure().add_subplot()
    labels = {str(h.get_label()) for h in _draw_castle(ax, b.state, 6.5)}
    assert {"breach", "ruins", "gate smashed", "parapet lost", "siege tower", "ladders", "hooks", "ram",
            "cauldron"} <= labels
    fills = [tuple(p.get_facecolor()) for p in ax.patches if isinstance(p, MplPolygon)]
    assert tuple(castle_colour(5)) in fills and tuple(castle_colour(0)) in fills
    assert castle_colour(0) != castle_colour(3) != castle_colour(6) == castle_colour(9)


@pytest.mark.parametrize(("dpi", "fps"), [(0, 1.0), (60, 0.0), (60, -1.0), (60, float("nan"))])
def test_gif_needs_a_positive_dpi_and_fps(tmp_path, dpi, fps):
    from battleline.env.render import render_gif

    battle = Battle.from_scenario("skirmish_line", seed=1)
    with pytest.raises(ValueError, match="dpi and fps must be positive"):
        render_gif(battle, tmp_path / "b.gif", dpi=dpi, fps=fps)
    assert not (tmp_path / "b.gif").exists()


def test_gif_of_an_unplayed_placed_battle_is_its_set_up_table(tmp_path):
    from PIL import Image

    from battleline.env.render import render_gif

    battle = Battle.from_scenario("skirmish_line", seed=1)
    assert render_gif(battle, tmp_path / "b.gif", dpi=20) == 1
    with Image.open(tmp_path / "b.gif") as image:
        assert image.size == (240, 172)


def test_overlapping_unit_labels_are_moved_apart():
    """A character's label drawn on its unit's moves off it; labels that do not overlap stay where they are."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from battleline.env.render import separate_labels

    fig = Figure(figsize=(6, 4), dpi=100)
    canvas = FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.set_xlim(0, 72)
    ax.set_ylim(0, 48)
    unit = ax.text(36, 24, "Tusk Guard\n19", ha="center", va="center")
    boss = ax.text(36, 24, "Orc Big Boss\n1", ha="center", va="center")
    far = ax.text(10, 5, "Rock Lobber\n3", ha="center", va="center")
    renderer = canvas.get_renderer()
    assert separate_labels(ax, [unit, boss, far], renderer) == 1  # one move: the boss's label
    assert unit.get_position() == (36, 24) and far.get_position() == (10, 5)
    bx, by = boss.get_position()
    assert bx == pytest.approx(36) and by != pytest.approx(24)
    boxes = [t.get_window_extent(renderer) for t in (unit, boss, far)]
    assert not boxes[0].overlaps(boxes[1])
    assert separate_labels(ax, [unit, boss, far], renderer) == 0  # nothing left to move
