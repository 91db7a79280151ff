"""The README's and docs' statements that code can check: the README's length, observation shapes, layout and
commands; the training reference's order buckets and imitation defaults; the links and commits of docs/."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from battleline.env.battle_env import BattleEnv
from battleline.env.observation import N_GLOBAL_FEAT, N_PLANES, N_UNIT_FEAT, PLANE_COLS, PLANE_ROWS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TRAINING = ROOT / "docs" / "training.md"
RESULTS = ROOT / "docs" / "results"
README_MAX_LINES = 500


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
    row = next(line for line in TRAINING.read_text(encoding="utf-8").splitlines() if line.startswith("| `orders/<phase>`"))
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

    text = TRAINING.read_text(encoding="utf-8")
    block = text[text.index("```yaml\nimitation:") + len("```yaml\n"):]
    block = block[: block.index("```")]
    assert yaml.safe_load(block)["imitation"] == ImitationConfig().model_dump()


def test_readme_is_at_most_500_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert 0 < len(lines) <= README_MAX_LINES, len(lines)


def test_readme_layout_maps_each_folder_to_its_package() -> None:
    """``env/rules/  battleline.env.rules: ...`` names the package that the folder is."""
    import importlib

    text = README.read_text(encoding="utf-8")
    block = text[text.index("## Layout"):]
    block = block[block.index("```") + 3:]
    block = block[: block.index("```")]
    pairs = re.findall(r"^(\S+/)\s+(battleline(?:\.\w+)*):", block, flags=re.M)
    assert {name for _, name in pairs} >= {"battleline.env", "battleline.env.rules", "battleline.agents",
                                            "battleline.tactics", "battleline.training", "battleline.configs"}
    for folder, name in pairs:
        module = importlib.import_module(name)
        assert (ROOT / folder).resolve() in {Path(p).resolve() for p in module.__path__}, (folder, name)


def _markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _code_lines(text: str) -> list[str]:
    """The lines of the fenced code blocks, a trailing backslash joining a line to the next."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    return [line.strip() for block in blocks for line in block.replace("\\\n", " ").splitlines()]


def test_readme_commands_and_options_exist() -> None:
    """Every ``battleline CMD --option`` in the README's code blocks is a command and an option of it."""
    import typer

    from battleline.training.cli import app

    group = typer.main.get_command(app)
    commands = [line.split("#", 1)[0] for line in _code_lines(README.read_text(encoding="utf-8"))
                if line.startswith("battleline ")]
    assert len(commands) >= 10
    for line in commands:
        words = line.split()
        command = group.commands.get(words[1])  # type: ignore[attr-defined]
        assert command is not None, line
        options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
        used = {w.split("=", 1)[0] for w in words[2:] if w.startswith("--")}
        assert used <= options, (line, used - options)


def test_docs_battleline_commands_name_shipped_data_by_id() -> None:
    """A ``battleline`` command in the README's or docs' code blocks names shipped data by its id, not by a
    ``configs/`` path: an installed wheel's user has no such folder ('--config configs/training/quick.yaml'
    failed from any folder but the repository's)."""
    commands = [line for path in _markdown_files() for line in _code_lines(path.read_text(encoding="utf-8"))
                if line.startswith("battleline ")]
    assert len(commands) >= 10
    assert [line for line in commands if "configs/" in line] == []


def test_docs_python_m_modules_are_battleline_or_benchmarks() -> None:
    """``python -m X`` in the README and docs/ names a battleline.* module or a repository benchmark script."""
    import importlib.util

    found = 0
    for path in _markdown_files():
        for name in re.findall(r"python -m ([\w.]+)", path.read_text(encoding="utf-8")):
            found += 1
            if name == "venv":
                continue
            top, _, rest = name.partition(".")
            assert top in ("battleline", "benchmarks"), (path.name, name)
            if top == "benchmarks":
                assert (ROOT / "benchmarks" / f"{rest}.py").is_file(), (path.name, name)
            else:
                assert importlib.util.find_spec(name) is not None, (path.name, name)
    assert found >= 10


def test_docs_python_imports_use_battleline_names() -> None:
    """No code block in the README or docs/ imports the folders by their plain names (env, agents, ...)."""
    plain = re.compile(r"^(?:from|import) (?:env|agents|tactics|training|configs)\b")
    for path in _markdown_files():
        for line in _code_lines(path.read_text(encoding="utf-8")):
            assert not plain.match(line), (path.name, line)


def test_docs_relative_links_resolve() -> None:
    links = 0
    for path in _markdown_files():
        for target in re.findall(r"\]\(([^)\s]+)\)", path.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+://", target):
                continue
            links += 1
            file = target.split("#", 1)[0]
            assert (path.parent / file).exists(), (path.name, target)
    assert links >= 10


@pytest.mark.parametrize("name", ["tactics", "tournament", "siege", "learning", "benchmarks", "coverage"])
def test_results_file_is_headed_with_its_commit(name: str) -> None:
    """Each docs/results file names, before its first section, the commit its figures were measured at."""
    text = (RESULTS / f"{name}.md").read_text(encoding="utf-8")
    head = text[: text.find("\n## ")] if "\n## " in text else text
    assert text.startswith("# ")
    assert re.search(r"commit\s+\*\*[0-9a-f]{7}\*\*", head), name
    assert f"(docs/results/{name}.md)" in README.read_text(encoding="utf-8")
