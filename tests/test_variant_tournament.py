"""benchmarks/variant_tournament.py: the scripted agents under the core rules and the T9A variant, paired."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from benchmarks import variant_tournament as vt


def _row(index: int, blue: str, red: str, winner: str) -> dict:
    return {"index": index, "blue": blue, "red": red, "winner": winner}


def test_paired_difference_counts_points_per_paired_game() -> None:
    """t9a points − core points per game both finished (1, 0.5, 0 from the agent's seat), mean and normal 95%
    interval; unpaired and failed games are left out."""
    core = [_row(0, "a", "b", "blue"), _row(1, "b", "a", "blue"), _row(2, "a", "b", "draw"),
            _row(3, "a", "b", "red"), {**_row(4, "a", "b", "blue"), "error": "x"}]
    t9a = [_row(0, "a", "b", "red"), _row(1, "b", "a", "blue"), _row(2, "a", "b", "blue"), _row(4, "a", "b", "red")]
    p = vt.paired_difference(core, t9a, "a")
    # pairs 0, 1, 2: a's points core (1, 0, 0.5) → t9a (0, 0, 1): differences −1, 0, +0.5
    assert (p["games"], p["difference"], p["changed"]) == (3, round(-0.5 / 3, 4), round(2 / 3, 4))
    half = vt.Z95 * (((-1 + 1 / 6) ** 2 + (1 / 6) ** 2 + (0.5 + 1 / 6) ** 2) / 2) ** 0.5 / 3 ** 0.5
    assert p["difference_ci95"] == [round(-1 / 6 - half, 4), round(-1 / 6 + half, 4)]
    assert vt.paired_difference([], t9a, "a") == {"games": 0, "difference": None, "difference_ci95": None,
                                                  "changed": None}


def test_tiny_variant_tournament_writes_both_rule_sets_paired_and_the_comparison(tmp_path: Path) -> None:
    """Two agents, two games per pair: pitched_battle and pitched_battle_t9a play the same games (agents, seats,
    seeds, army lists), and comparison.json/.md/.png hold each agent's score under both rule sets."""
    out = tmp_path / "vt"
    comparison = vt.run(["line_advance", "pincers"], 2, 7, out, workers=1, progress=False)
    for rs in ("core", "t9a"):
        assert {p.name for p in (out / rs).iterdir()} == {"results.json", "results.csv", "heatmap.png",
                                                         "fingerprint.png"}
    keys = ("pair", "game", "blue", "red", "seed", "blue_army", "red_army")
    games = {rs: [tuple(r[k] for k in keys) for r in csv.DictReader((out / rs / "results.csv").open())]
             for rs in ("core", "t9a")}
    assert games["core"] == games["t9a"] and len(games["core"]) == 2
    assert {g[5:] for g in games["core"]} == {("men_marcher_host", "orcs_tusk_horde")}
    assert json.loads((out / "t9a" / "results.json").read_text())["scenario"] == "pitched_battle_t9a"
    saved = json.loads((out / "comparison.json").read_text())
    assert saved == json.loads(json.dumps(comparison)) and saved["games"] == {"core": 2, "t9a": 2}
    for a in ("line_advance", "pincers"):
        row = saved["agents"][a]
        assert row["core"]["games"] == row["t9a"]["games"] == row["paired"]["games"] == 2
    a, b = saved["agents"]["line_advance"], saved["agents"]["pincers"]
    assert a["core"]["score"] + b["core"]["score"] == 1.0 and a["t9a"]["score"] + b["t9a"]["score"] == 1.0
    table = (out / "comparison.md").read_text()
    assert table.startswith("| agent | core score [95% CI] | t9a score [95% CI] |") and "`pincers`" in table
    assert (out / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_agents_are_one_line_before_any_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as bad:
        vt.main(games_per_pair=2, seed=0, agents="line_advance", workers=1, blue_army=None, red_army=None,
                out=tmp_path / "o")
    assert bad.value.code == 2
    assert capsys.readouterr().err == "error: --agents: expected at least two comma-separated agents, got 'line_advance'\n"
    with pytest.raises(SystemExit) as bad:
        vt.main(games_per_pair=2, seed=0, agents="line_advance,nobody", workers=1, blue_army=None, red_army=None,
                out=tmp_path / "o")
    assert bad.value.code == 2 and "nobody" in capsys.readouterr().err
    assert not (tmp_path / "o" / "core").exists()
