"""The battleline command line (training/cli.py) and the tournament it runs."""

from __future__ import annotations

import csv
import json
import random
import sys
import types

import pytest
from typer.testing import CliRunner

from battleline.env.rules.config import list_armies, list_scenarios
from battleline.training.cli import app
from battleline.training.tournament import schedule, wilson_interval

SCENARIO = "skirmish_line"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _real_registry() -> bool:
    try:
        from battleline.agents.registry import AGENT_NAMES  # noqa: F401
    except ImportError:
        return False
    return True


class _StandInAgent:
    """A random agent: uniform over the legal actions, or over the non-end_phase ones when ``eager``."""

    def __init__(self, name: str, seed: int, eager: bool) -> None:
        self.name, self.rng, self.eager = name, random.Random(seed), eager

    def reset(self, battle, side) -> None:
        self.side = side

    def act(self, battle):
        legal = battle.legal_actions()
        moves = [a for a in legal if a.kind != "end_phase"]
        return self.rng.choice(moves if self.eager and moves else legal)


def _stand_in_registry() -> types.ModuleType:
    mod = types.ModuleType("battleline.agents.registry")
    names = ["random", "line_advance", "pincers", "refused_flank"]

    class UnknownAgentError(ValueError):
        pass

    def make_agent(name: str, seed: int = 0):
        if name not in names:
            raise UnknownAgentError(f"unknown agent '{name}'; known agents: {', '.join(names)}")
        return _StandInAgent(name, seed, eager=name != "random")

    mod.AGENT_NAMES, mod.UnknownAgentError, mod.make_agent = names, UnknownAgentError, make_agent
    return mod


@pytest.fixture(autouse=True)
def agents_available(monkeypatch):
    """Use agents/registry.py when it exists, otherwise a stand-in with the same names."""
    if not _real_registry():
        monkeypatch.setitem(sys.modules, "battleline.agents.registry", _stand_in_registry())


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in result.output
    return lines[0]


def test_play_writes_replay_and_png_and_prints_the_winner(runner, tmp_path):
    replay, png = tmp_path / "deep" / "r.json", tmp_path / "pics" / "r.png"
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", "line_advance", "--red", "random",
                                 "--seed", "7", "--replay", str(replay), "--png", str(png)])
    assert result.exit_code == 0, result.output
    assert "winner: " in result.stdout
    assert "VP blue" in result.stdout
    data = json.loads(replay.read_text())
    assert data["seed"] == 7
    assert data["meta"]["players"] == {"blue": "line_advance", "red": "random"}
    assert data["state"]["over"] is True
    assert png.read_bytes()[:8] == PNG_MAGIC
    winner = data["events"][-1]["winner"] if data["events"][-1]["rule"] == "CORE.VP.RESULT" else None
    if winner is not None:
        assert f"winner: {winner}" in result.stdout


def test_unknown_agent_is_one_line_and_exit_2(runner):
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", "no_such_agent", "--red", "random"])
    assert result.exit_code == 2
    line = _one_error_line(result)
    assert line.startswith("error: --blue: unknown agent 'no_such_agent'; known agents: ")  # the flag that named it
    assert "random" in line  # the message lists the known names


def test_unknown_agent_in_tournament_is_one_line_and_exit_2(runner, tmp_path):
    result = runner.invoke(app, ["tournament", "--scenario", SCENARIO, "--agents", "random,nobody",
                                 "--games-per-pair", "1", "--out", str(tmp_path / "t"), "--workers", "1"])
    assert result.exit_code == 2
    assert _one_error_line(result).startswith("error: --agents: unknown agent 'nobody'; known agents: ")


def test_unknown_scenario_is_one_line_and_exit_2(runner):
    result = runner.invoke(app, ["play", "--scenario", "no_such_scenario", "--blue", "random", "--red", "random"])
    assert result.exit_code == 2
    assert "no_such_scenario" in _one_error_line(result)


def test_missing_replay_is_one_line_and_exit_2(runner, tmp_path):
    result = runner.invoke(app, ["replay", str(tmp_path / "missing.json")])
    assert result.exit_code == 2
    assert "not found" in _one_error_line(result)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"format": 99}', '{"format": 1}'])
def test_bad_replay_is_one_line_and_exit_2(runner, tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    _one_error_line(result)


NOT_AN_INT = "Input should be a valid integer, unable to parse string as an integer"


@pytest.mark.parametrize(("args", "line"), [
    (["play", "--seed", "abc"], f"battleline play: Invalid value for '--seed': {NOT_AN_INT}"),
    (["tournament", "--games-per-pair", "x"], f"battleline tournament: Invalid value for '--games-per-pair': {NOT_AN_INT}"),
    (["play", "--bogus"], "battleline play: No such option: --bogus (Possible options: --blue)"),
    (["--bogus"], "battleline: No such option: --bogus"),
    (["nope"], "battleline: No such command 'nope'."),
    (["replay"], "battleline replay: Missing argument 'path'."),
    (["play", "--scenario"], "battleline play: Option '--scenario' requires an argument."),
])
def test_usage_mistakes_are_one_line_naming_the_command_and_exit_2(runner, args, line):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr == f"error: {line}\n"
    assert result.stdout == ""


def test_usage_mistake_run_as_a_module_is_one_line(tmp_path):
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    done = subprocess.run([sys.executable, "-m", "battleline.training.cli", "play", "--seed", "abc"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == f"error: python -m battleline.training.cli play: Invalid value for '--seed': {NOT_AN_INT}\n"
    assert done.stdout == ""


def test_no_arguments_and_help_still_print_the_help(runner):
    bare, helped = runner.invoke(app, []), runner.invoke(app, ["--help"])
    assert (bare.exit_code, helped.exit_code) == (2, 0)
    assert bare.stdout.strip() == helped.stdout.strip() and "Usage: battleline [OPTIONS] COMMAND" in bare.stdout
    assert bare.stderr == ""


@pytest.mark.parametrize(("content", "detail"), [
    ('{"format": null}', "not a battleline replay (format null, expected 1)"),
    ('{"format": true}', "not a battleline replay (format true, expected 1)"),
    ('{"format": "1"}', 'not a battleline replay (format "1", expected 1)'),
    ('{"actions": []}', "not a battleline replay (no 'format' field; a replay has format 1)"),
    ('{"format": 99}', "not a battleline replay (format 99, expected 1)"),
    ("[1, 2]", "not a battleline replay (expected a JSON object)"),
])
def test_bad_replay_message_says_it_once(runner, tmp_path, content, detail):
    path = tmp_path / "bad.json"
    path.write_text(content)
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: {path}: {detail}"


def test_replay_check_passes_and_redraws(runner, tmp_path):
    replay, png = tmp_path / "r.json", tmp_path / "r2.png"
    played = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", "random", "--red", "line_advance",
                                 "--seed", "3", "--replay", str(replay)])
    assert played.exit_code == 0, played.output
    result = runner.invoke(app, ["replay", str(replay), "--check", "--png", str(png)])
    assert result.exit_code == 0, result.output
    assert "check passed" in result.stdout
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_replay_check_detects_a_tampered_state(runner, tmp_path):
    replay = tmp_path / "r.json"
    played = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", "random", "--red", "random",
                                 "--seed", "5", "--replay", str(replay)])
    assert played.exit_code == 0, played.output
    data = json.loads(replay.read_text())
    data["state"]["units"][0]["x"] += 1.0
    replay.write_text(json.dumps(data))
    result = runner.invoke(app, ["replay", str(replay), "--check"])
    assert result.exit_code == 1
    assert "replay check failed" in result.stderr
    assert "units[0].x" in result.stderr


def test_tournament_writes_consistent_results(runner, tmp_path):
    out = tmp_path / "t"
    agents = ["random", "line_advance", "pincers"]
    result = runner.invoke(app, ["tournament", "--scenario", SCENARIO, "--agents", ",".join(agents),
                                 "--games-per-pair", "2", "--seed", "1", "--out", str(out), "--workers", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "results.json").read_text())
    for key in ("scenario", "agents", "games_per_pair", "seed", "games", "games_failed", "pairs", "ratings",
                "matrix", "errors", "first_turn", "fingerprint", "factions"):
        assert key in data
    assert data["agents"] == agents
    assert data["games_failed"] == 0 and data["errors"] == []
    assert data["games"] == 3 * 2
    assert len(data["pairs"]) == 3
    for p in data["pairs"]:
        assert set(p) >= {"agent", "opponent", "games", "wins", "draws", "losses", "mean_vp_for",
                          "mean_vp_against", "win_rate_ci95", "score_ci95"}
        assert p["score_ci95"][0] <= p["score"] <= p["score_ci95"][1]
        assert p["games"] == 2 == p["wins"] + p["draws"] + p["losses"]
        assert p["games_as_blue"] == 1  # the games of a pair are split across the seats
    for name in agents:
        r = data["ratings"][name]
        assert set(r) >= {"mu", "sigma", "ordinal", "win_rate", "win_rate_ci95"}
        assert r["games"] == 4 == r["wins"] + r["draws"] + r["losses"]
        lo, hi = r["win_rate_ci95"]
        assert 0.0 <= lo <= r["win_rate"] <= hi <= 1.0
        assert r["ordinal"] == pytest.approx(r["mu"] - 3 * r["sigma"], abs=1e-3)
    assert sum(r["wins"] for r in data["ratings"].values()) == sum(r["losses"] for r in data["ratings"].values())

    with (out / "results.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == data["games"]
    assert set(rows[0]) == {"pair", "game", "seat", "blue", "red", "blue_army", "red_army", "seed", "first_turn",
                            "winner", "vp_blue", "vp_red", "turns"}
    assert all(r["winner"] in ("blue", "red", "draw") for r in rows)
    assert all(r["first_turn"] in ("blue", "red") for r in rows)
    for p in data["pairs"]:
        mine = [r for r in rows if r["pair"] == f"{p['agent']} vs {p['opponent']}"]
        wins = sum(1 for r in mine if r["winner"] != "draw" and r[r["winner"]] == p["agent"])
        assert wins == p["wins"]
    assert (out / "heatmap.png").read_bytes()[:8] == PNG_MAGIC
    assert (out / "fingerprint.png").read_bytes()[:8] == PNG_MAGIC
    assert set(data["fingerprint"]["rates"]) == set(agents)


@pytest.mark.skipif(not _real_registry(), reason="worker processes need agents/registry.py")
def test_tournament_in_worker_processes_matches_one_process(tmp_path):
    from battleline.training.tournament import run_tournament

    kw = {"scenario": SCENARIO, "agents": ["random", "line_advance"], "games_per_pair": 2, "seed": 4,
          "progress": False}
    one = run_tournament(out=tmp_path / "one", workers=1, **kw)
    two = run_tournament(out=tmp_path / "two", workers=2, **kw)
    assert one["pairs"] == two["pairs"] and one["ratings"] == two["ratings"]
    assert (tmp_path / "one" / "results.csv").read_text() == (tmp_path / "two" / "results.csv").read_text()


def test_schedule_splits_seats_and_shares_seeds():
    games = schedule(["a", "b", "c"], 4, seed=0)
    assert len(games) == 3 * 4
    for pair in range(3):
        mine = [g for g in games if g.pair == pair]
        assert sum(1 for g in mine if g.blue == g.a) == 2
        assert mine[0].seed == mine[1].seed != mine[2].seed == mine[3].seed
    assert [g.seed for g in schedule(["a", "b", "c"], 4, seed=0)] == [g.seed for g in games]
    assert [g.seed for g in schedule(["a", "b", "c"], 4, seed=1)] != [g.seed for g in games]
    with pytest.raises(ValueError):
        schedule(["a"], 2, seed=0)


def test_wilson_interval():
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0)


def test_scenarios_lists_scenarios_and_armies(runner):
    result = runner.invoke(app, ["scenarios"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "skirmish_line" in result.stdout and "pitched_battle" in result.stdout
    assert "men_marcher_host" in result.stdout


@pytest.fixture(scope="module")
def three_slot_model(tmp_path_factory):
    """An untrained MaskablePPO saved for skirmish_line: 3 unit slots a side."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from battleline.env.battle_env import BattleEnv

    path = tmp_path_factory.mktemp("model") / "model.zip"
    model = MaskablePPO("MultiInputPolicy", BattleEnv(SCENARIO, opponent="random"), n_steps=8, batch_size=8,
                        device="cpu")
    model.save(str(path))
    return path


SLOTS_ERROR = "the model has 3 unit slots a side but scenario 'pitched_battle' fields up to 10 units a side"


@pytest.mark.parametrize("command", [
    ["play", "--red", "pincers"],
    ["tournament", "--agents", "MODEL,pincers", "--games-per-pair", "2", "--workers", "1"],
    ["parity", "--agent", "MODEL", "--games", "2", "--workers", "1"],
])
def test_model_with_too_few_unit_slots_fails_before_playing(runner, tmp_path, three_slot_model, command):
    name = f"model:{three_slot_model}"
    args = [a.replace("MODEL", name) for a in command] + ["--scenario", "pitched_battle"]
    if command[0] == "play":
        args += ["--blue", name]
    else:
        args += ["--out", str(tmp_path / "out")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: {name}: {SLOTS_ERROR}"
    assert not (tmp_path / "out" / "results.json").exists()


@pytest.mark.parametrize(("scenario", "problem"), [
    ("atlantis", f"unknown scenario 'atlantis'; shipped: {', '.join(list_scenarios())} (a scenario of your own: its YAML path)"),
    ("pitched_battle", "model:MODEL: " + SLOTS_ERROR),
])
def test_evaluate_refuses_a_bad_scenario_before_its_progress_bar(runner, three_slot_model, scenario, problem):
    """These were found inside the progress bar, which left a blank line on stdout before the error."""
    result = runner.invoke(app, ["evaluate", "--model", str(three_slot_model), "--opponents", "random",
                                 "--games", "2", "--scenario", scenario])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: {problem.replace('MODEL', str(three_slot_model))}"
    assert result.stdout == ""


@pytest.mark.parametrize("command", [
    ["play", "--scenario", SCENARIO, "--blue", "model:MODEL"],
    ["evaluate", "--model", "MODEL", "--opponents", "random", "--games", "2"],
])
def test_model_with_nan_weights_is_refused_before_playing(runner, tmp_path, three_slot_model, command):
    """A diverged run's policy (NaN weights) is refused at load, not by a torch traceback at its first decision."""
    import torch
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(three_slot_model), device="cpu")
    with torch.no_grad():
        next(model.policy.parameters()).fill_(float("nan"))
    path = tmp_path / "nan.zip"
    model.save(str(path))
    result = runner.invoke(app, [a.replace("MODEL", str(path)) for a in command])
    assert result.exit_code == 2, result.output
    problem = (f"{path}: the policy's weights are not finite (NaN or infinite): its training diverged, "
               f"and it cannot choose an action")
    flag = "--model" if command[0] == "evaluate" else "--blue"
    assert _one_error_line(result) == f"error: {flag}: {problem} (agent 'model:{path}')"


@pytest.mark.parametrize("command", [
    ["play", "--scenario", SCENARIO],
    ["tournament", "--scenario", SCENARIO, "--agents", "random,pincers", "--workers", "1"],
    ["parity", "--scenario", SCENARIO, "--games", "2", "--workers", "1"],
    ["evaluate", "--model", "none.zip"],
])
def test_negative_seed_is_one_line_naming_the_flag(runner, tmp_path, command):
    out = [] if command[0] in ("play", "evaluate") else ["--out", str(tmp_path / "out")]
    result = runner.invoke(app, [*command, *out, "--seed", "-1"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == "error: --seed must be at least 0, got -1"


def test_army_override_on_a_placed_scenario_is_one_line(runner):
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue-army", "dwarfs_iron_throng"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == (
        "error: blue army 'dwarfs_iron_throng': scenario 'skirmish_line' places its units explicitly (placements), "
        "so its army lists cannot be replaced")


def test_missing_model_file_in_play_is_one_line(runner, tmp_path):
    missing = tmp_path / "nope.zip"
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", f"model:{missing}"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: --blue: model file not found: {missing} (agent 'model:{missing}')"


def test_default_agents_follow_the_scenario():
    from battleline.training.play import default_agents, expand_agent_names

    assert default_agents(SCENARIO) == default_agents("pitched_battle") == "all-field"
    assert not any(n.startswith("siege_") for n in expand_agent_names(default_agents(SCENARIO)))
    assert expand_agent_names(default_agents("siege")) == ["siege_attacker", "siege_defender"]


def test_tournament_without_agents_enters_the_field_agents(runner, tmp_path, monkeypatch):
    import battleline.training.tournament as tournament
    from battleline.training.cli import UserError

    seen = {}

    def fake_run(scenario, names, *args, **kwargs):
        seen["names"] = names
        raise UserError("stopped before the games")

    monkeypatch.setattr(tournament, "run_tournament", fake_run)
    runner.invoke(app, ["tournament", "--scenario", SCENARIO, "--out", str(tmp_path / "t"), "--workers", "1"])
    from battleline.training.play import expand_agent_names

    assert seen["names"] == expand_agent_names("all-field")


def test_tactics_help_names_the_catalogue_file(runner):
    result = runner.invoke(app, ["tactics", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "tactics/catalogue.yaml" in result.output and "shared/rules" not in result.output


@pytest.fixture(scope="module")
def replay_text() -> str:
    """A finished random skirmish_line battle as replay JSON (written by ``write_replay``)."""
    import tempfile
    from pathlib import Path

    from battleline.env.rules.battle import Battle
    from battleline.training.cli import write_replay

    battle = Battle.from_scenario(SCENARIO, seed=5)
    rng = random.Random(5)
    while not battle.is_over:
        battle.apply(rng.choice(battle.legal_actions()))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.json"
        write_replay(battle, path, {"blue": "random", "red": "random"})
        return path.read_text(encoding="utf-8")


def test_replay_png_of_a_hand_edited_state_is_one_line(runner, tmp_path, replay_text):
    """A side that is no side (well typed, so the replay loads) ended the drawing in a traceback."""
    data = json.loads(replay_text)
    data["state"]["units"][0]["side"] = 7
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["replay", str(path), "--png", str(tmp_path / "r.png")])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == (f"error: --png: cannot draw {path}'s final state "
                                       f"(IndexError: tuple index out of range)")


@pytest.mark.parametrize(("edit", "problem"), [
    (lambda s: s.update(turn="x"), 'state.turn: Input should be a valid integer, got "x"'),
    (lambda s: s["units"][3].update(x="abc"), 'state.units[3].x: Input should be a valid number, got "abc"'),
    (lambda s: s["units"][3]["profile"].update(M=None),
     "state.units[3].profile.M: Input should be a valid integer, got null"),
    (lambda s: s["units"][1].update(models=2.0), "state.units[1].models: Input should be a valid integer, got 2.0"),
    (lambda s: s["units"][0].update(deployed=1), "state.units[0].deployed: Input should be a valid boolean, got 1"),
    (lambda s: s["units"][2].pop("uid"), "state.units[2]: missing field 'uid'"),
    (lambda s: s.pop("units"), "state: missing field 'units'"),
    (lambda s: s.update(units={"a": 1}), 'state.units: Input should be a valid array, got {"a": 1}'),
    (lambda s: s["units"][0].update(facing=float("nan")), "state.units[0].facing: Input should be a finite number, got NaN"),
    (lambda s: s["terrain"][0].update(polygon=[[0.0, 0.0, 1.0]]),
     "state.terrain[0].polygon[0]: Tuple should have at most 2 items after validation, not 3, got [0.0, 0.0, 1.0]"),
])
@pytest.mark.parametrize("command", [["replay"], ["replay", "--check"], ["detect"]])
def test_a_saved_state_field_of_the_wrong_type_is_one_line(runner, tmp_path, replay_text, edit, problem, command):
    """The state was loaded unchecked: "turns: x" was printed, or a later step raised a traceback."""
    path = _edited_replay(tmp_path, replay_text, lambda d: edit(d["state"]))
    result = runner.invoke(app, [*command, path])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: {path}: not a battleline replay ({problem})"
    assert result.stdout == ""


def test_a_castle_element_field_of_the_wrong_type_is_one_line(runner, tmp_path):
    from battleline.env.rules.battle import Battle
    from battleline.training.cli import write_replay

    path = tmp_path / "siege.json"
    write_replay(Battle.from_scenario("gate_assault", seed=1), path, {"blue": "random", "red": "random"})
    assert runner.invoke(app, ["replay", str(path)]).exit_code == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    data["state"]["castle"][1]["damage_bonus"] = "3"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == (f"error: {path}: not a battleline replay "
                                       f'(state.castle[1].damage_bonus: Input should be a valid integer, got "3")')


@pytest.mark.parametrize("flag", ["--replay", "--png"])
def test_play_output_path_that_is_a_folder_is_one_line(runner, tmp_path, flag):
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", "random", "--red", "random",
                                 flag, str(tmp_path)])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: {flag} {tmp_path}: is a directory (give a file name)"


def test_output_under_a_file_is_one_line(runner, tmp_path, replay_text):
    blocker = tmp_path / "existing.json"
    blocker.write_text("{}")
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", "random", "--red", "random",
                                 "--replay", str(blocker / "x.json")])
    assert result.exit_code == 2
    assert _one_error_line(result) == (f"error: --replay {blocker / 'x.json'}: cannot create {blocker} "
                                       f"(a file of that name is in the way)")
    replay = tmp_path / "r.json"
    replay.write_text(replay_text)
    for flag in ("--png", "--gif"):
        result = runner.invoke(app, ["replay", str(replay), flag, str(tmp_path)])
        assert result.exit_code == 2
        assert _one_error_line(result) == f"error: {flag} {tmp_path}: is a directory (give a file name)"
        name = blocker / f"x.{flag[2:]}"
        result = runner.invoke(app, ["replay", str(replay), flag, str(name)])
        assert result.exit_code == 2
        assert f"error: {flag} {name}: cannot create {blocker}" in _one_error_line(result)


@pytest.mark.parametrize("command", [
    ["tournament", "--agents", "random,line_advance", "--games-per-pair", "2"],
    ["parity", "--agent", "random", "--games", "2"],
])
def test_out_folder_that_is_a_file_is_one_line(runner, tmp_path, command):
    blocker = tmp_path / "results"
    blocker.write_text("x")
    result = runner.invoke(app, [*command, "--scenario", SCENARIO, "--workers", "1", "--out", str(blocker)])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: --out {blocker}: not a directory (a file of that name exists)"


def test_writing_names_the_flag_on_an_os_error(tmp_path):
    import typer

    from battleline.training.cli import writing

    target = tmp_path / "x.png"
    with pytest.raises(typer.Exit) as caught:
        with writing("--png", target):
            raise PermissionError(13, "Permission denied", str(target))
    assert caught.value.exit_code == 2
    with pytest.raises(PermissionError):  # another file's error is not the output's
        with writing("--png", target):
            raise PermissionError(13, "Permission denied", "/elsewhere/config.yaml")


@pytest.mark.parametrize(("edit", "detail"), [
    (lambda e: e.pop("rule"), "events[4]: missing field 'rule'"),
    (lambda e: e.update(turn="1"), 'events[4].turn: expected an integer, got "1"'),
    (lambda e: e.update(phase=None), "events[4].phase: expected a string, got null"),
])
def test_an_event_without_its_rule_turn_or_phase_is_named(runner, tmp_path, replay_text, edit, detail):
    """Not 'cannot read the battle's events (KeyError: 'rule')' from the detectors."""
    data = json.loads(replay_text)
    edit(data["events"][4])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    for args in (["detect", str(path)], ["replay", str(path), "--check"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2
        assert _one_error_line(result) == f"error: {path}: not a battleline replay ({detail})"


@pytest.mark.parametrize("events", ["x", [1, 2], {"rule": "x"}])
def test_events_not_a_list_of_objects_is_one_line(runner, tmp_path, replay_text, events):
    data = json.loads(replay_text)
    data["events"] = events
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    expected = f"error: {path}: not a battleline replay (events must be a list of objects)"
    for args in (["detect", str(path)], ["replay", str(path), "--png", str(tmp_path / "x.png")],
                 ["replay", str(path), "--check"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, args
        assert _one_error_line(result) == expected


def test_replay_check_mismatch_is_short(runner, tmp_path, replay_text):
    data = json.loads(replay_text)
    n = len(data["events"])
    data["events"] = data["events"][:3]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["replay", str(path), "--check"])
    assert result.exit_code == 1
    line = result.stderr.strip()
    assert line.startswith(f"error: replay check failed: events: 3 items (replay) vs {n} (re-simulated); "
                           f"first differing index 3: ")
    assert len(line) < 300 and "\n" not in line
    data = json.loads(replay_text)
    data["events"][2]["rule"] = "X" * 5000
    path.write_text(json.dumps(data))
    result = runner.invoke(app, ["replay", str(path), "--check"])
    assert result.exit_code == 1
    assert "replay check failed: events[2].rule: 'XXXX" in result.stderr
    assert "… (5002 characters) (replay) vs" in result.stderr
    assert len(result.stderr) < 300


def test_replay_gif_has_a_frame_per_game_turn(runner, tmp_path, replay_text):
    from PIL import Image

    replay, gif = tmp_path / "r.json", tmp_path / "out" / "r.gif"
    replay.write_text(replay_text)
    result = runner.invoke(app, ["replay", str(replay), "--gif", str(gif)])
    assert result.exit_code == 0, result.output
    turns = json.loads(replay_text)["state"]["turn"]
    with Image.open(gif) as image:
        assert image.format == "GIF" and image.n_frames > 1
        frames = image.n_frames
    assert frames == turns + 1  # the start of each game turn and the end
    assert f"gif ({frames} frames): " in result.stdout


def test_replay_gif_of_an_impossible_battle_is_one_line(runner, tmp_path, replay_text):
    data = json.loads(replay_text)
    data["actions"] = [{"kind": "shoot", "unit": 99, "target": 98}]
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps(data))
    result = runner.invoke(app, ["replay", str(replay), "--gif", str(tmp_path / "r.gif")])
    assert result.exit_code == 1
    assert f"error: --gif: cannot re-simulate {replay} (IllegalActionError: illegal action" in \
        result.stderr.strip().splitlines()[0]


@pytest.fixture(scope="module")
def siege_model(tmp_path_factory):
    """An untrained MaskablePPO saved for gate_assault: 2 unit slots a side and the siege block (10 castle elements)."""
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from battleline.env.battle_env import BattleEnv

    path = tmp_path_factory.mktemp("siege_model") / "model.zip"
    model = MaskablePPO("MultiInputPolicy", BattleEnv("gate_assault", opponent="random"), n_steps=8, batch_size=8,
                        device="cpu")
    model.save(str(path))
    return path


SIEGE_ERROR = "the model has 3 unit slots a side and no siege orders but scenario 'gate_assault' is a siege with 10 castle elements"


@pytest.mark.parametrize("command", [
    ["evaluate", "--model", "PATH", "--opponents", "random", "--games", "2", "--scenario", "gate_assault"],
    ["play", "--scenario", "gate_assault", "--blue", "siege_defender", "--red", "MODEL", "--seed", "1"],
    ["tournament", "--scenario", "gate_assault", "--agents", "MODEL,siege_defender", "--games-per-pair", "2",
     "--workers", "1", "--out", "OUT"],
    ["parity", "--scenario", "gate_assault", "--agent", "MODEL", "--games", "2", "--workers", "1", "--out", "OUT"],
])
def test_field_model_on_a_siege_fails_before_playing(runner, tmp_path, three_slot_model, command):
    args = [a.replace("MODEL", f"model:{three_slot_model}").replace("PATH", str(three_slot_model))
            .replace("OUT", str(tmp_path / "out")) for a in command]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: model:{three_slot_model}: {SIEGE_ERROR}"
    assert not (tmp_path / "out").exists()


def test_play_refuses_an_army_the_scenario_places_before_a_model_slot_check(runner, three_slot_model):
    """With a model agent, the slot check ran first and blamed the scenario for the refused army's 10 units."""
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", f"model:{three_slot_model}",
                                 "--blue-army", "dwarfs_iron_throng"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == (f"error: blue army 'dwarfs_iron_throng': scenario '{SCENARIO}' places its "
                                       f"units explicitly (placements), so its army lists cannot be replaced")


def test_evaluate_says_when_the_scenario_that_does_not_fit_is_the_default(runner, three_slot_model):
    """A checkpoint has no model.json beside it: the error named pitched_battle, which the user never gave."""
    result = runner.invoke(app, ["evaluate", "--model", str(three_slot_model), "--opponents", "random",
                                 "--games", "2"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == (f"error: model:{three_slot_model}: {SLOTS_ERROR}; pitched_battle is the "
                                       f"default when no model.json beside the model names its scenario: give it "
                                       f"with --scenario")


def test_evaluate_checks_opponent_models_too(runner, three_slot_model, siege_model):
    result = runner.invoke(app, ["evaluate", "--model", str(three_slot_model), "--opponents", f"model:{siege_model}",
                                 "--games", "2", "--scenario", SCENARIO])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == (f"error: model:{siege_model}: the model has 2 unit slots a side but scenario "
                                       f"'{SCENARIO}' fields up to 3 units a side")


def test_siege_model_with_too_few_castle_elements_is_refused():
    from battleline.agents.learned import ModelLoadError
    from battleline.training.play import require_unit_slots

    require_unit_slots(3, "m", "gate_assault", elements=10)
    with pytest.raises(ModelLoadError, match=r"^m: the model has 3 unit slots a side and siege orders for 4 castle "
                                             r"elements but scenario 'gate_assault' is a siege with 10 castle elements$"):
        require_unit_slots(3, "m", "gate_assault", elements=4)


def test_empty_model_path_is_one_line(runner):
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", "model:", "--red", "random"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == "error: --blue: no model path given (expected model:PATH to a model.zip) (agent 'model:')"


def _saved_model(path, observation_space, action_space):
    """Save an untrained MaskablePPO for the given spaces at ``path`` (a model of another game or version)."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    class Spaces(gym.Env):
        def __init__(self) -> None:
            self.observation_space, self.action_space = observation_space, action_space

    MaskablePPO("MultiInputPolicy" if isinstance(observation_space, gym.spaces.Dict) else "MlpPolicy", Spaces(),
                n_steps=8, batch_size=8, device="cpu").save(str(path))
    return path


@pytest.mark.parametrize(("change", "problem"), [
    ("box", "the model does not observe a battle (its observation space is Box(-1.0, 1.0, (4,), float32), not a "
            "Dict of units, globals and action_mask)"),
    ("features", "the model's 'units' has shape (6, FEAT+1), expected (6, FEAT); was it trained with another "
                 "version of battleline?"),
    ("globals", "the model's observation lacks 'globals'; was it trained with another version of battleline?"),
    ("actions", "the model chooses among 709 actions but its action mask has 704 entries; was it trained with "
                "another version of battleline?"),
])
def test_model_of_another_observation_is_one_line(runner, tmp_path, three_slot_model, change, problem):
    """These played on and crashed at the first decision with a traceback (or failed in SB3's prediction)."""
    import numpy as np
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO

    from battleline.env.observation import N_UNIT_FEAT

    model = MaskablePPO.load(str(three_slot_model), device="cpu")
    obs, act = dict(model.observation_space.spaces), model.action_space
    if change == "features":
        obs["units"] = spaces.Box(-1.0, 10.0, (6, N_UNIT_FEAT + 1), np.float32)
    elif change == "globals":
        del obs["globals"]
    elif change == "actions":
        act = spaces.Discrete(act.n + 5)
    space = spaces.Box(-1.0, 1.0, (4,), np.float32) if change == "box" else spaces.Dict(obs)
    name = f"model:{_saved_model(tmp_path / 'm.zip', space, act)}"
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--blue", name, "--red", "random"])
    assert result.exit_code == 2, result.output
    problem = problem.replace("FEAT+1", str(N_UNIT_FEAT + 1)).replace("FEAT", str(N_UNIT_FEAT))
    assert _one_error_line(result) == f"error: --blue: {name}: {problem} (agent '{name}')"
    result = runner.invoke(app, ["evaluate", "--scenario", SCENARIO, "--model", str(tmp_path / "m.zip"),
                                 "--opponents", "random", "--games", "2"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: --model: {name}: {problem} (agent '{name}')"


def test_evaluate_an_empty_model_path_is_one_line(runner):
    """``--model ''`` (the current folder) ended in a traceback looking for model.json beside it."""
    result = runner.invoke(app, ["evaluate", "--model", "", "--opponents", "random", "--games", "2"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == "error: --model: . is a directory, not a model file (model.zip) (agent 'model:.')"


@pytest.fixture
def unfinished_replay(tmp_path):
    """A skirmish_line replay saved after 10 random decisions, and its battle."""
    from battleline.env.rules.battle import Battle
    from battleline.training.cli import write_replay

    battle = Battle.from_scenario(SCENARIO, seed=5)
    rng = random.Random(5)
    for _ in range(10):
        battle.apply(rng.choice(battle.legal_actions()))
    write_replay(battle, tmp_path / "r.json", {"blue": "random", "red": "random"})
    return tmp_path / "r.json", battle


def test_replay_of_an_unfinished_battle_names_no_winner(runner, unfinished_replay):
    """A replay saved mid-battle printed "winner: None"."""
    path, battle = unfinished_replay
    vp = battle.result["vp"]
    result = runner.invoke(app, ["replay", str(path), "--check"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1] == (f"winner: none yet (the battle is unfinished)  —  VP so far blue "
                                             f"{vp['blue']}, red {vp['red']}")


def test_detect_warns_of_an_unfinished_battle(runner, unfinished_replay):
    """Detections of a battle saved mid-battle were shown as those of a whole battle."""
    path, battle = unfinished_replay
    result = runner.invoke(app, ["detect", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == (f"warning: {path}: the battle is unfinished (turn {battle.state.turn}, "
                                     f"{battle.state.stage} stage): tactics are detected in the part played only")
    assert "tactics detected" in result.stdout


@pytest.mark.parametrize("command", [
    ["play", "--scenario", SCENARIO, "--blue", "random", "--red", "model:MODEL", "--replay", "MODEL"],
    ["evaluate", "--model", "MODEL", "--opponents", "random", "--games", "2", "--out", "MODEL"],
])
def test_outputs_never_replace_the_model_played(runner, tmp_path, three_slot_model, command):
    """The replay or the results were written over the trained model.zip."""
    model = tmp_path / "model.zip"
    model.write_bytes(three_slot_model.read_bytes())
    result = runner.invoke(app, [a.replace("MODEL", str(model)) for a in command])
    assert result.exit_code == 2, result.output
    flag, reads = ("--replay", "--red's model") if command[0] == "play" else ("--out", "--model")
    assert _one_error_line(result) == f"error: {flag} {model}: the same file as {reads}"
    assert model.read_bytes() == three_slot_model.read_bytes()
    meta = model.with_suffix(".json")  # nor the model.json beside it
    meta.write_text("{}")
    result = runner.invoke(app, [a.replace("MODEL", str(model)) for a in command[:-1]] + [str(meta)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: {flag} {meta}: the same file as {reads}'s model.json"
    assert meta.read_text() == "{}"


def test_evaluate_a_directory_says_so(runner, tmp_path):
    result = runner.invoke(app, ["evaluate", "--model", str(tmp_path), "--opponents", "random", "--games", "2"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == (f"error: --model: {tmp_path} is a directory, not a model file (model.zip) "
                                       f"(agent 'model:{tmp_path}')")


@pytest.mark.parametrize(("content", "problem"), [
    (None, "model file not found: PATH"),
    (b"not a zip", "PATH: not a MaskablePPO model (ValueError: Error: the file PATH wasn't a zip-file)"),
])
@pytest.mark.parametrize("command", [
    ["play", "--scenario", SCENARIO, "--blue", "model:PATH", "--red", "random"],
    ["evaluate", "--scenario", SCENARIO, "--model", "PATH", "--opponents", "random", "--games", "2"],
])
def test_a_bad_model_file_names_its_option(runner, tmp_path, content, problem, command):
    """evaluate's errors about its model did not name --model, as play's name --blue or --red."""
    path = tmp_path / "m.zip"
    if content is not None:
        path.write_bytes(content)
    result = runner.invoke(app, [a.replace("PATH", str(path)) for a in command])
    assert result.exit_code == 2, result.output
    flag = "--model" if command[0] == "evaluate" else "--blue"
    assert _one_error_line(result) == f"error: {flag}: {problem.replace('PATH', str(path))} (agent 'model:{path}')"
    assert result.stdout == ""


def test_coverage_rejects_a_negative_battle_count(runner):
    result = runner.invoke(app, ["coverage", "--battles", "-1"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == "error: --battles must be at least 1, got -1"


@pytest.mark.parametrize(("flags", "message"), [
    (["--agents", "random,line_advance@men_marcher_host"],
     "error: --agents: entrant 'line_advance@men_marcher_host': scenario 'skirmish_line' places its units "
     "explicitly (placements), so its army lists cannot be replaced"),
    (["--agents", "random@nope,line_advance"],
     f"error: --agents: entrant 'random@nope': unknown army list 'nope'; known: {', '.join(list_armies())}"),
    (["--agents", "random,line_advance", "--armies", "nope"],
     f"error: --armies: entrant 'random@nope': unknown army list 'nope'; known: {', '.join(list_armies())}"),
    (["--agents", "random,line_advance", "--blue-army", "men_marcher_host"],
     "error: blue army 'men_marcher_host': scenario 'skirmish_line' places its units explicitly (placements), "
     "so its army lists cannot be replaced"),
])
def test_tournament_refuses_bad_entrant_armies_before_any_game(runner, tmp_path, flags, message):
    result = runner.invoke(app, ["tournament", "--scenario", SCENARIO, *flags, "--games-per-pair", "2",
                                 "--workers", "1", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("flags", "message"), [
    (["--agents", "random@men_marcher_host,line_advance@orcs_tusk_horde", "--blue-army", "elves_wind_host"],
     "error: --blue-army elves_wind_host: every entrant names its own army list (agent@army), so it would apply to "
     "no game"),
    (["--agents", "random,line_advance", "--armies", "men_marcher_host", "--red-army", "orcs_tusk_horde"],
     "error: --red-army orcs_tusk_horde: every entrant names its own army list (--armies), so it would apply to "
     "no game"),
])
def test_tournament_refuses_an_army_flag_no_game_would_use(runner, tmp_path, flags, message):
    """An entrant's own army list comes first: with one on every entrant, --blue-army was silently ignored."""
    result = runner.invoke(app, ["tournament", "--scenario", "pitched_battle", *flags, "--games-per-pair", "2",
                                 "--workers", "1", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == message
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["tournament", "--scenario", SCENARIO, "--agents", "random,line_advance,pincers", "--games-per-pair", "50000"],
     "error: 3 pairs × 50,000 games per pair make 150,000 games, over the limit of 100,000 a run plays"),
    (["parity", "--scenario", SCENARIO, "--agent", "random", "--games", "1000000000"],
     "error: --games must be at most 100,000, got 1,000,000,000"),
    (["evaluate", "--model", "MODEL", "--opponents", "random,pincers", "--games", "50001"],
     "error: --games 50,001 × 2 opponents make 100,002 games, over the limit of 100,000 a run plays"),
    (["coverage", "--battles", "1000000000"],
     "error: --battles 1,000,000,000 × SETUPS set-ups make TOTAL games, over the limit of 100,000 a run plays"),
])
def test_a_run_of_more_than_max_games_is_refused_at_once(runner, tmp_path, three_slot_model, args, message):
    """A mistyped count (--games-per-pair 1000000000) spent minutes and gigabytes on its schedule, silently."""
    from battleline.training.coverage import corpus_games

    out = [] if args[0] == "coverage" else ["--out", str(tmp_path / "o" / ("e.json" if args[0] == "evaluate" else ""))]
    result = runner.invoke(app, [a.replace("MODEL", str(three_slot_model)) for a in args] + out)
    assert result.exit_code == 2, result.output
    per = len(corpus_games(1))
    assert _one_error_line(result) == message.replace("SETUPS", str(per)).replace("TOTAL", f"{per * 10**9:,}")
    assert not (tmp_path / "o").exists()


def test_an_odd_number_of_games_warns_that_the_last_has_no_partner(runner, tmp_path):
    result = runner.invoke(app, ["tournament", "--scenario", "skirmish_line", "--agents", "random,line_advance",
                                 "--games-per-pair", "3", "--out", str(tmp_path / "t"), "--workers", "1"])
    assert result.exit_code == 0, result.stderr
    assert result.stderr.strip().splitlines() == [
        "warning: --games-per-pair 3 is odd: games 2k and 2k+1 share a seed with the seats swapped, so the last "
        "game has no partner"]
    even = runner.invoke(app, ["tournament", "--scenario", "skirmish_line", "--agents", "random,line_advance",
                               "--games-per-pair", "2", "--out", str(tmp_path / "t2"), "--workers", "1"])
    assert even.exit_code == 0 and "warning" not in even.stderr


def _edited_replay(tmp_path, replay_text, edit) -> str:
    data = json.loads(replay_text)
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["actions"][0].update(unit=float(d["actions"][0]["unit"] or 0)),
     "not a battleline replay (actions[0].unit: expected an integer or null, got "),
    (lambda d: d.update(scenario="skirmish_line"),
     "not a battleline replay (scenario must be the saved scenario object, got str)"),
    (lambda d: d.update(seed=None), "not a battleline replay (seed must be an integer >= 0, got None)"),
    (lambda d: d.update(state=None), "not a battleline replay (state must be an object)"),
    (lambda d: d.update(meta=[1]), "meta: expected an object, got list"),
    (lambda d: d.update(meta={"players": "bluered"}),
     'meta.players: expected an object with the agent name of each side (blue, red), got "bluered"'),
    (lambda d: d.update(meta={"players": {"red": "x"}}),
     'meta.players: expected an object with the agent name of each side (blue, red), got {"red": "x"}'),
])
@pytest.mark.parametrize("command", ["replay", "detect"])
def test_malformed_replay_fields_are_one_line(runner, tmp_path, replay_text, edit, message, command):
    path = _edited_replay(tmp_path, replay_text, edit)
    result = runner.invoke(app, [command, path])
    assert result.exit_code == 2
    assert _one_error_line(result).startswith(f"error: {path}: {message}")


def test_an_output_may_not_overwrite_the_replay(runner, tmp_path, replay_text):
    replay = tmp_path / "r.png"  # a replay is JSON whatever its name
    replay.write_text(replay_text, encoding="utf-8")
    result = runner.invoke(app, ["replay", str(replay), "--png", str(replay)])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: --png {replay}: the same file as the replay"
    assert replay.read_text(encoding="utf-8") == replay_text
    out = tmp_path / "p.png"
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--replay", str(out), "--png", str(out)])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: --png {out}: the same file as --replay"
    assert not out.exists()


def test_replay_gif_needs_a_gif_name_and_writes_nothing_it_cannot_finish(runner, tmp_path, replay_text):
    replay = tmp_path / "r.json"
    replay.write_text(replay_text, encoding="utf-8")
    result = runner.invoke(app, ["replay", str(replay), "--gif", str(tmp_path / "r.txt")])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: --gif {tmp_path / 'r.txt'}: the file name must end in .gif"
    for args in (["replay", str(replay)], ["play", "--scenario", SCENARIO]):  # a PNG is written as a PNG
        result = runner.invoke(app, [*args, "--png", str(tmp_path / "r.txt")])
        assert result.exit_code == 2
        assert _one_error_line(result) == f"error: --png {tmp_path / 'r.txt'}: the file name must end in .png"
        assert not (tmp_path / "r.txt").exists()
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--png", str(tmp_path / "new" / "r.txt")])
    assert result.exit_code == 2 and not (tmp_path / "new").exists()  # refused before its folder is made
    bad = _edited_replay(tmp_path, replay_text, lambda d: d["actions"].insert(0, {"kind": "shoot", "unit": 99}))
    gif = tmp_path / "bad.gif"
    result = runner.invoke(app, ["replay", bad, "--gif", str(gif)])
    assert result.exit_code == 1
    assert _one_error_line(result).startswith(f"error: --gif: cannot re-simulate {bad} (IllegalActionError: ")
    assert not gif.exists()


def test_play_needs_a_positive_decision_limit(runner):
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--max-decisions", "0"])
    assert result.exit_code == 2
    assert _one_error_line(result) == "error: --max-decisions must be at least 1, got 0"


def test_a_lone_unknown_entrant_is_named(runner):
    result = runner.invoke(app, ["tournament", "--scenario", SCENARIO, "--agents", "nope"])
    assert result.exit_code == 2
    assert _one_error_line(result).startswith("error: --agents: unknown agent 'nope'; known agents: random, ")


def test_coverage_show_takes_missing_or_all(runner):
    result = runner.invoke(app, ["coverage", "--show", "nope"])
    assert result.exit_code == 2
    assert _one_error_line(result) == "error: --show must be 'missing' or 'all', got 'nope'"


def test_train_run_dir_that_is_a_file_is_one_line(runner, tmp_path):
    target = tmp_path / "file"
    target.write_text("x", encoding="utf-8")
    result = runner.invoke(app, ["train", "--config", "configs/training/quick.yaml", "--run-dir", str(target),
                                 "--total-timesteps", "1"])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: --run-dir {target}: not a directory (a file of that name exists)"


def test_an_empty_scenario_name_is_one_line(runner):
    result = runner.invoke(app, ["play", "--scenario", ""])
    assert result.exit_code == 2
    assert _one_error_line(result) == ("error: no scenario named (an empty name); give a name in configs/scenarios "
                                       "or a YAML path")


@pytest.mark.parametrize(("address", "reason"), [
    ("127.0.0.1:1", "cannot reach a Ray cluster there (connection refused)"),
    ("nonsense", "expected host:port (or ray://host:port, auto)"),
])
@pytest.mark.parametrize("command", ["tournament", "parity"])
def test_an_unreachable_ray_address_fails_at_once(runner, tmp_path, command, address, reason):
    agents = ["--agents", "random,line_advance"] if command == "tournament" else ["--agent", "random"]
    result = runner.invoke(app, [command, "--scenario", SCENARIO, *agents, "--backend", "ray",
                                 "--ray-address", address, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: --ray-address {address}: {reason}"


def test_tournament_armies_must_name_an_army(runner, tmp_path):
    result = runner.invoke(app, ["tournament", "--scenario", "pitched_battle", "--agents", "line_advance,random",
                                 "--armies", ",", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert _one_error_line(result) == "error: --armies ',': army list 1 is empty"


def test_tournament_armies_may_not_repeat_an_army(runner, tmp_path):
    """Not 'each agent may appear only once in a tournament': the repeat is in --armies."""
    result = runner.invoke(app, ["tournament", "--scenario", "pitched_battle", "--agents", "line_advance,random",
                                 "--armies", "men_marcher_host,orcs_tusk_horde,men_marcher_host",
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert _one_error_line(result) == "error: --armies: army list 'men_marcher_host' is listed twice"


def test_a_bad_saved_scenario_is_named_in_the_replay(runner, tmp_path, replay_text):
    path = _edited_replay(tmp_path, replay_text, lambda d: d["scenario"].update(turns=0))
    result = runner.invoke(app, ["replay", path, "--check"])
    assert result.exit_code == 1
    line = _one_error_line(result)
    assert line.startswith(f"error: replay check failed: re-simulation raised ConfigError: {path}: scenario.turns: ")
    gif = runner.invoke(app, ["replay", path, "--gif", str(tmp_path / "r.gif")])
    assert _one_error_line(gif).startswith(f"error: --gif: cannot re-simulate {path} (ConfigError: {path}: "
                                           f"scenario.turns: ")


@pytest.mark.parametrize(("args", "message"), [
    (["play", "--scenario", SCENARIO, "--blue-army", ""], "error: --blue-army: no army list named (an empty name)"),
    (["play", "--scenario", SCENARIO, "--red-army", " "], "error: --red-army: no army list named (an empty name)"),
    (["tournament", "--scenario", SCENARIO, "--agents", "random,line_advance", "--blue-army", ""],
     "error: --blue-army: no army list named (an empty name)"),
])
def test_an_empty_army_flag_is_named(runner, tmp_path, args, message):
    """"" is no army list: not 'configs/armies/.yaml: file not found'."""
    out = ["--out", str(tmp_path / "o")] if args[0] == "tournament" else []
    result = runner.invoke(app, [*args, *out])
    assert result.exit_code == 2
    assert _one_error_line(result) == message


@pytest.mark.parametrize("army", ["../factions/men", "configs/armies/men_marcher_host.yaml", "men_marcher_host.yaml"])
def test_an_army_flag_that_is_a_path_is_refused(runner, army):
    """An army flag takes an id in configs/armies: '../factions/men' read the men faction file as an army list, and
    a path was reported as 'configs/armies/<path>.yaml.yaml: file not found'."""
    from battleline.env.rules.config import list_armies

    result = runner.invoke(app, ["play", "--scenario", "pitched_battle", "--blue-army", army, "--max-decisions", "1"])
    assert result.exit_code == 2
    assert _one_error_line(result) == (f"error: '{army}' is not an id in configs/armies (a file name without "
                                       f"'.yaml', not a path); known: {', '.join(list_armies())}")


def test_an_empty_agents_list_is_not_the_default_field(runner, tmp_path):
    """--agents "" names no agent: an error, not a round robin of every scripted agent."""
    result = runner.invoke(app, ["tournament", "--scenario", SCENARIO, "--agents", "", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert _one_error_line(result) == "error: a tournament needs at least two agents, got 0: ''"
    assert not (tmp_path / "o").exists()


def test_an_agent_named_twice_is_one_entrant_and_the_error_says_so(runner, tmp_path):
    result = runner.invoke(app, ["tournament", "--scenario", SCENARIO, "--agents", "random,random",
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert _one_error_line(result) == ("error: a tournament needs at least two agents, got 1: 'random,random' "
                                       "(a name given twice counts once)")


def test_an_empty_opponents_list_is_not_the_default_field(runner, tmp_path):
    result = runner.invoke(app, ["evaluate", "--model", str(tmp_path / "none.zip"), "--opponents", ""])
    assert result.exit_code == 2
    assert _one_error_line(result) == "error: --opponents: no agent named in ''"


@pytest.mark.parametrize("agent", ["", "random@"])
def test_parity_names_a_malformed_agent(runner, tmp_path, agent):
    result = runner.invoke(app, ["parity", "--scenario", SCENARIO, "--agent", agent, "--games", "2",
                                 "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: --agent: entrant '{agent}': expected 'agent' or 'agent@army'"


@pytest.mark.parametrize(("args", "flag"), [
    (["play", "--scenario", SCENARIO, "--red", "nope"], "--red"),
    (["parity", "--scenario", SCENARIO, "--agent", "nope", "--games", "2"], "--agent"),
    (["evaluate", "--model", "none.zip", "--opponents", "random,nope"], "--opponents"),
])
def test_an_unknown_agent_names_its_flag(runner, args, flag):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert _one_error_line(result).startswith(f"error: {flag}: unknown agent 'nope'; known agents: random, ")


# ----------------------------------------------------------------------------- rules reference, --version
def test_rules_prints_one_rule_with_its_section(runner):
    result = runner.invoke(app, ["rules", "CORE.CC.BREAK_TEST"])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "CORE.CC.BREAK_TEST  (RULESET.md, 3.7 Close combat)\n"
        "A losing unit passes if 2D6 ≤ Ld − difference. A natural double 1 always passes. "
        "(src: 000:L992-L996, L1010-L1014)\n"
    )


def test_rules_prints_a_rule_with_its_table_and_a_table_row(runner):
    result = runner.invoke(app, ["rules", "siege.dmg.gate"])  # case does not matter
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "SIEGE.DMG.GATE  (RULESET.md, 5. Siege module (SIEGE; on CORE))\n"
        "Gate damage table. (src: 000:L78-L84)\n"
        "\n"
        "| Value | Result |\n"
        "|---|---|\n"
        "| ≤10 | no effect |\n"
        "| 11–12 | +1 |\n"
        "| 13–14 | +2 |\n"
        "| 15 | Smashed (half speed). +3. |\n"
        "| 16+ | Destroyed, open. |\n"
    )
    row = runner.invoke(app, ["rules", "CORE.MAGIC.SPELL.FIRE.1"])
    assert row.exit_code == 0, row.output
    assert row.stdout == (
        "CORE.MAGIC.SPELL.FIRE.1  (RULESET.md, 3.3 Magic)\n"
        "Name: Fireball\nCV: 5\nR\": 24\nType: M\nEffect: D6 S4 hits\n"
        "(a row of the table of CORE.MAGIC.SPELLS: Each lore has four spells (the source has none). (DEFAULT))\n"
    )


def test_rules_prefix_prints_every_matching_rule_with_its_id(runner):
    result = runner.invoke(app, ["rules", "SIEGE.DMG"])
    assert result.exit_code == 0, result.output
    headings = [line.split("  (")[0] for line in result.stdout.splitlines() if line.startswith("SIEGE.DMG.")]
    assert headings == ["SIEGE.DMG.VALUE", "SIEGE.DMG.WALL", "SIEGE.DMG.TOWER", "SIEGE.DMG.GATE", "SIEGE.DMG.CANNON",
                        "SIEGE.DMG.TEMPLATE", "SIEGE.DMG.GATE_SHOTS", "SIEGE.DMG.MELEE"]
    assert result.stdout.endswith("\n8 rules under SIEGE.DMG\n")
    assert runner.invoke(app, ["rules", "SIEGE.DMG.*"]).stdout == result.stdout


def test_rules_unknown_id_is_one_line_with_close_ids(runner):
    result = runner.invoke(app, ["rules", "CORE.CC.BRAKE_TEST"])
    assert result.exit_code == 2
    assert _one_error_line(result) == ("error: unknown rule ID 'CORE.CC.BRAKE_TEST'; close IDs: CORE.CC.BREAK_TEST, "
                                       "CORE.CC.BREAK_ORDER, CORE.CC.COMBAT_RESULT")
    assert result.stdout == ""
    far = runner.invoke(app, ["rules", "NOTHING.LIKE.IT"])
    assert far.exit_code == 2
    assert _one_error_line(far) == "error: unknown rule ID 'NOTHING.LIKE.IT'; 'battleline rules' lists every rule ID"


def test_rules_without_an_id_lists_every_rule(runner):
    from battleline.env.rules.ruleset import rule_ids

    result = runner.invoke(app, ["rules"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    listed = {line.split("  ")[0] for line in lines[:-1]}
    assert listed >= set(rule_ids())
    assert "CORE.CC.BREAK_TEST  A losing unit passes if 2D6 ≤ Ld − difference. A natural double 1 always passes…" in lines
    assert lines[-1] == (f"{len(lines) - 1} rules; 'battleline rules ID' prints one, "
                         "'battleline rules CORE.CC' every rule under a prefix")


def test_version_prints_the_installed_distribution_version(runner):
    from importlib.metadata import version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"battleline {version('battleline')}\n"


# ----------------------------------------------------------------------------- outputs checked before any work
TOO_LONG = "x" * 300  # a file name over the 255 bytes file systems allow: unwritable for every user, root included


def test_play_with_an_unwritable_png_overwrites_no_replay(runner, tmp_path):
    """Every output is opened for writing before the battle: the replay named beside a PNG that cannot be
    written keeps its old contents."""
    replay, png = tmp_path / "r.json", tmp_path / f"{TOO_LONG}.png"
    replay.write_text("old replay")
    result = runner.invoke(app, ["play", "--scenario", SCENARIO, "--replay", str(replay), "--png", str(png)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: --png {png}: cannot write {png} (file name too long)"
    assert result.stdout == "" and replay.read_text() == "old replay"


def test_replay_with_an_unwritable_gif_writes_no_png(runner, tmp_path, replay_text):
    path, png, gif = tmp_path / "r.json", tmp_path / "r.png", tmp_path / f"{TOO_LONG}.gif"
    path.write_text(replay_text)
    png.write_bytes(b"old picture")
    result = runner.invoke(app, ["replay", str(path), "--png", str(png), "--gif", str(gif)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: --gif {gif}: cannot write {gif} (file name too long)"
    assert png.read_bytes() == b"old picture"


def test_an_output_folder_where_no_file_can_be_made_is_refused_before_any_game(runner, tmp_path, monkeypatch):
    """tournament --out: a file is made and removed in the folder first (here the file system refuses it)."""
    import tempfile

    out = tmp_path / "t"

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(kwargs["dir"]))

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    result = runner.invoke(app, ["tournament", "--scenario", SCENARIO, "--agents", "random,line_advance",
                                 "--games-per-pair", "2", "--out", str(out), "--workers", "1"])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == f"error: --out {out}: cannot write {out} (permission denied)"
    assert list(out.iterdir()) == []


def test_an_existing_output_is_checked_without_being_changed(tmp_path):
    from battleline.training.cli import check_output

    png = tmp_path / "old.png"
    png.write_bytes(b"old picture")
    before = png.stat().st_mtime_ns
    check_output("--png", png, suffix=".png")
    check_output("--out", tmp_path, folder=True)
    assert png.read_bytes() == b"old picture" and png.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.png"]  # the probe file is gone
    new = tmp_path / "sub" / "new.png"
    check_output("--png", new, suffix=".png")
    assert not new.exists() and new.parent.is_dir()


# ----------------------------------------------------------------------------- files nested too deeply
NESTED = "error: {}: nested too deeply to read (lists or mappings inside one another beyond Python's recursion limit)"


def test_a_scenario_nested_1000_levels_deep_is_one_line(runner, tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("id: deep\nturns: " + "[" * 1000 + "]" * 1000 + "\n")
    result = runner.invoke(app, ["play", "--scenario", str(deep)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == NESTED.format(deep)
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("id: deep\nnotes: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n")
    result = runner.invoke(app, ["tournament", "--scenario", str(mapping), "--agents", "random,line_advance",
                                 "--out", str(tmp_path / "t")])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == NESTED.format(mapping)


def test_a_scenario_dict_too_deep_to_check_is_one_line(monkeypatch):
    """A RecursionError while the schema is checked (a dict handed in, e.g. a replay's saved scenario) names the file."""
    from battleline.env.rules.config import ConfigError, ScenarioConfig, parse

    def recurse(data):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(ScenarioConfig, "model_validate", recurse)
    with pytest.raises(ConfigError) as info:
        parse(ScenarioConfig, {"id": "x"}, "r.json")
    assert str(info.value) == NESTED.format("r.json").removeprefix("error: ")


@pytest.mark.parametrize("command", ["replay", "detect"])
def test_a_replay_nested_1000_levels_deep_is_one_line(runner, tmp_path, command):
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": 1, "scenario": ' + "[" * 1000 + "]" * 1000 + "}")
    result = runner.invoke(app, [command, str(deep)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == NESTED.format(deep)


# ----------------------------------------------------------------------------- empty list entries
@pytest.mark.parametrize(("args", "message"), [
    (["tournament", "--agents", "random,,line_advance"], "error: --agents 'random,,line_advance': entrant 2 is empty"),
    (["tournament", "--agents", "random,line_advance,"], "error: --agents 'random,line_advance,': entrant 3 is empty"),
    (["tournament", "--agents", "random,line_advance", "--armies", ",men_marcher_host"],
     "error: --armies ',men_marcher_host': army list 1 is empty"),
    (["evaluate", "--model", "m.zip", "--opponents", "random, ,line_advance"],
     "error: --opponents 'random, ,line_advance': opponent 2 is empty"),
])
def test_an_empty_entry_of_a_list_is_refused(runner, tmp_path, args, message):
    result = runner.invoke(app, [*args, "--scenario", "pitched_battle", *(["--out", str(tmp_path / "o")]
                                                                         if args[0] == "tournament" else [])])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result) == message
    assert not (tmp_path / "o").exists()


def test_the_tensorboard_hint_names_this_environments_script(tmp_path, monkeypatch):
    """'train' ends with how to start TensorBoard: the script beside the running Python (an installed wheel's venv
    has no '.venv/bin/tensorboard' in the user's folder), relative to the current folder when inside it."""
    from battleline.training.cli import tensorboard_command

    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    monkeypatch.chdir(tmp_path)
    assert tensorboard_command() == "tensorboard"  # no script there: the plain command
    (venv_bin / "tensorboard").write_text("#!/bin/sh\n")
    assert tensorboard_command() == "venv/bin/tensorboard"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert tensorboard_command() == str(venv_bin / "tensorboard")


def test_a_truncated_replay_is_one_line_with_the_json_fault(runner, tmp_path):
    """A cut-off replay names the decoder's fault and where ('...starting at at line' read twice before)."""
    path = tmp_path / "cut.json"
    path.write_text('{"format": 1, "scenario": "ab', encoding="utf-8")
    for command in (["replay", str(path), "--check"], ["detect", str(path)]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2
        assert _one_error_line(result) == f"error: {path}: not valid JSON (Unterminated string starting at: line 1 column 27)"
