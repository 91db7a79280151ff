"""The README's statements that code can check: the observation shapes, the files named in its layout, the imitation defaults."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from battleline.env.battle_env import BattleEnv
from battleline.env.observation import N_GLOBAL_FEAT, N_PLANES, N_UNIT_FEAT, PLANE_COLS, PLANE_ROWS

README = Path(__file__).resolve().parents[1] / "README.md"


def _observation_rows() -> dict[str, str]:
    """{key: shape text} from the README's Observations table (``| `key` | (shape) | ...``)."""
    text = README.read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `(units|globals|planes)` \| (\([0-9, ]+\)) \|", text, flags=re.M))


def test_readme_observation_shapes_match_pitched_battle() -> None:
    env_ = BattleEnv("pitched_battle", planes=True)
    space = env_.observation_space
    rows = _observation_rows()
    assert set(rows) == {"units", "globals", "planes"}
    assert rows["units"] == str(space["units"].shape) == str((2 * env_.codec.n, N_UNIT_FEAT))
    assert rows["globals"] == str(space["globals"].shape) == str((N_GLOBAL_FEAT,))
    assert rows["planes"] == str(space["planes"].shape) == str((N_PLANES, PLANE_ROWS, PLANE_COLS))


@pytest.mark.parametrize("word", ["alive, own, deployed", "starting models left", "wounds left", "declared a charge", "the charger awaiting a reaction"])
def test_readme_units_row_names_the_features(word: str) -> None:
    row = next(line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| `units` |"))
    assert word in row


def test_readme_order_buckets_are_the_codec_blocks() -> None:
    from battleline.env.encoding import BLOCKS
    from battleline.training.callbacks import ORDER_BUCKETS

    assert ORDER_BUCKETS[: len(BLOCKS)] == BLOCKS
    row = next(line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("| `orders/<phase>`"))
    listed = re.search(r"\(0 end_phase, [^;)]*", row)
    assert listed is not None
    assert listed.group(0)[1:] == ", ".join(f"{k} {b}" for k, b in enumerate(ORDER_BUCKETS))


def test_readme_layout_names_existing_files() -> None:
    text = README.read_text(encoding="utf-8")
    block = text[text.index("## Layout"):]
    block = block[block.index("```") + 3:]
    block = block[: block.index("```")]
    root = README.parent
    names = {p.name for p in root.rglob("*") if p.is_file() and ".venv" not in p.parts}
    listed = set(re.findall(r"\b[\w]+\.(?:py|yaml|json|txt)\b", block))
    assert listed and not listed - names
    for line in block.splitlines():
        folder = line.split(" ", 1)[0]
        if folder.endswith("/"):
            assert (root / folder).is_dir(), folder


def test_readme_imitation_block_shows_every_key_with_its_default() -> None:
    import yaml

    from battleline.training.config import ImitationConfig

    text = README.read_text(encoding="utf-8")
    block = text[text.index("```yaml\nimitation:") + len("```yaml\n"):]
    block = block[: block.index("```")]
    assert yaml.safe_load(block)["imitation"] == ImitationConfig().model_dump()
