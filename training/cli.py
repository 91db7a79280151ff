"""The ``battleline`` command line: play, tournament, parity, replay, detect, scenarios, tactics, rules (the rules
reference), coverage, and the learning commands of :mod:`training.cli_learning` (train, evaluate,
expert-iteration); ``battleline --version``. The app and the shared error handling are in :mod:`training.cli_common`.

User errors (a bad scenario or army file, an unknown agent, a missing or
unreadable replay) print one red line ``error: <message>`` on stderr and exit
with code 2; so do usage mistakes (a bad or unknown option, a missing argument,
an unknown command), e.g. ``error: battleline replay: Missing argument 'path'.``
A replay that fails ``--check`` exits with code 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from battleline.env.rules.config import NESTED_TOO_DEEPLY, ConfigError, read_file_text
from battleline.env.rules.state import SIDES
from battleline.training.cli_common import (
    EXIT_CHECK_FAILED,
    EXIT_USER_ERROR,
    UserError,
    _agent_flag,
    _check_army_flags,
    _check_list,
    _check_not_model,
    _check_pairing,
    _check_run_options,
    _check_seed,
    _fail,
    _shown,
    _user_error_types,
    _user_errors,
    _warn_unpaired,
    _worker_count,
    app,
    check_distinct,
    check_output,
    console,
    err_console,
    print_result,
    run_command,
    write_replay,
    writing,
)
from battleline.training.console import LoggedProgress


@app.command()
def play(
    scenario: Annotated[str, typer.Option(help="Scenario name in configs/scenarios, or a YAML path.")] = "pitched_battle",
    blue: Annotated[str, typer.Option(help="Agent playing blue.")] = "line_advance",
    red: Annotated[str, typer.Option(help="Agent playing red.")] = "random",
    seed: Annotated[int, typer.Option(help="Dice seed (agents get seeds derived from it).")] = 0,
    blue_army: Annotated[str | None, typer.Option(help="Army list id for blue (overrides the scenario's).")] = None,
    red_army: Annotated[str | None, typer.Option(help="Army list id for red (overrides the scenario's).")] = None,
    replay: Annotated[Path | None, typer.Option(help="Write the replay JSON here.")] = None,
    png: Annotated[Path | None, typer.Option(help="Draw the final table into this PNG.")] = None,
    max_decisions: Annotated[int, typer.Option(help="Give up after this many decisions.")] = 20000,
) -> None:
    """Play one battle and print the winner and the victory points."""
    from battleline.training.play import PlayError, check_model_agents, plan_network_slots, play_battle

    with _user_errors():
        _check_seed(seed)
        _check_army_flags(blue_army, red_army)
        if max_decisions < 1:
            raise UserError(f"--max-decisions must be at least 1, got {max_decisions}")
        for flag, path, suffix in (("--replay", replay, None), ("--png", png, ".png")):
            if path is not None:
                check_output(flag, path, suffix=suffix)
        check_distinct(("--replay", replay), ("--png", png))
        from battleline.agents.registry import MODEL_PREFIX, make_agent
        from battleline.env.rules.battle import Battle

        models = [(flag, name) for flag, name in (("--blue", blue), ("--red", red)) if name.startswith(MODEL_PREFIX)]
        nets = []  # plans:PATH and search:...:prior=PATH: a plan network whose unit slots must fit
        for flag, name in (("--blue", blue), ("--red", red)):
            if (flag, name) in models:  # the replay would replace the trained model
                _check_not_model(("--replay", replay), f"{flag}'s model", name[len(MODEL_PREFIX):])
            else:
                with _agent_flag(flag):
                    if plan_network_slots(name) is None:
                        make_agent(name)
                    else:
                        nets.append((flag, name))
        if models or nets:  # an army list the scenario refuses is the fault, not the slots its units would need
            Battle.from_scenario(scenario, seed=seed, blue_army=blue_army, red_army=red_army)
        for flag, name in [*models, *nets]:
            with _agent_flag(flag):  # a model is built (loaded) once, by check_model_agents
                check_model_agents(scenario, [name], [blue_army] if blue_army else None,
                                   [red_army] if red_army else None)
        try:
            battle = play_battle(scenario, blue, red, seed, blue_army=blue_army, red_army=red_army,
                                 max_decisions=max_decisions)
        except PlayError as exc:
            raise _fail(str(exc), EXIT_CHECK_FAILED) from None
    players = {"blue": blue, "red": red}
    written: list[tuple[str, Path]] = []
    if replay is not None:
        with writing("--replay", replay):
            write_replay(battle, replay, players)
        written.append(("replay", replay))
    if png is not None:
        from battleline.env.render import render_battle

        with writing("--png", png):
            render_battle(battle, png, title=f"{blue} (blue) vs {red} (red), seed {seed}")
        written.append(("png", png))
    print_result(battle, players, written)


@app.command()
def tournament(
    scenario: Annotated[str, typer.Option(help="Scenario name in configs/scenarios, or a YAML path.")] = "pitched_battle",
    agents: Annotated[str | None, typer.Option(
        help="Comma-separated entrants: agent names or agent@army (e.g. line_advance@dwarfs_iron_throng); "
             "'all-scripted' = every agent but random, 'all-field' = the same without the siege roles, "
             "'all' = every agent. Default: all-field on a field scenario, the siege roles on a siege.")
    ] = None,
    games_per_pair: Annotated[int, typer.Option(help="Games per pair of agents, split across both seats.")] = 10,
    seed: Annotated[int, typer.Option(help="Base seed; each game's seed derives from it.")] = 0,
    out: Annotated[Path, typer.Option(help="Output folder: results.json, results.csv, heatmap.png, "
                                           "fingerprint.png.")] = Path("out/t"),
    workers: Annotated[int | None, typer.Option(help="Worker processes, or a local Ray instance's CPUs "
                                                     "(default: all cores; at most one per game and per "
                                                     "core).")] = None,
    blue_army: Annotated[str | None, typer.Option(help="Army list id for blue in every game, for entrants "
                                                       "without their own (agent@army).")] = None,
    red_army: Annotated[str | None, typer.Option(help="Army list id for red in every game, for entrants "
                                                      "without their own (agent@army).")] = None,
    armies: Annotated[str | None, typer.Option(
        help="Comma-separated army list ids: every agent enters once with each (agent@army).")] = None,
    pairing: Annotated[str, typer.Option(
        help="all: every pair of entrants meets; same-agent: only entrants of the same agent (faction balance); "
             "gauntlet: the first entrant against each of the others.")
    ] = "all",
    backend: Annotated[str, typer.Option(help="process: a local process pool; ray: Ray tasks.")] = "process",
    ray_address: Annotated[str | None, typer.Option(
        help="Ray cluster address for --backend ray (default: start a local instance).")] = None,
) -> None:
    """Round robin between agents: ratings with a first-turn term, win rates, fingerprints, CSV and charts."""
    from battleline.training.play import default_agents, expand_agent_names
    from battleline.training.tournament import Entrant, cross_entrants, run_tournament, schedule, validate_inputs

    with _user_errors():
        if agents is None:  # an empty --agents "" is a mistake, not the default
            agents = default_agents(scenario)
        _check_list("--agents", agents, "entrant")
        names = expand_agent_names(agents)
        if armies is not None:
            _check_list("--armies", armies, "army list")
            army_ids = [a.strip() for a in armies.split(",") if a.strip()]
            if not army_ids:
                raise UserError(f"--armies: no army list named in '{armies}'")
            twice = next((a for i, a in enumerate(army_ids) if a in army_ids[:i]), None)
            if twice is not None:  # else schedule() blames the agents: "each agent may appear only once"
                raise UserError(f"--armies: army list '{twice}' is listed twice")
            names = cross_entrants(names, army_ids)
        if len(names) < 2:
            if names:  # an unknown or malformed name is the real mistake
                try:
                    with _agent_flag("--agents"):
                        validate_inputs(scenario, names, (blue_army, red_army))
                except ConfigError:
                    raise
                except ValueError as exc:
                    raise UserError(str(exc)) from None
            given = [a for a in agents.split(",") if a.strip()]
            repeats = " (a name given twice counts once)" if len(given) > len(names) else ""
            raise UserError(f"a tournament needs at least two agents, got {len(names)}: '{agents}'{repeats}")
        if games_per_pair < 1:
            raise UserError(f"--games-per-pair must be at least 1, got {games_per_pair}")
        _check_pairing(pairing)
        _check_seed(seed)
        _check_army_flags(blue_army, red_army)
        _check_run_options(workers, backend, ray_address)
        try:
            n_games = len(schedule(names, games_per_pair, seed, pairing))
        except ValueError as exc:
            raise UserError(str(exc)) from None
        for flag, army in (("--blue-army", blue_army), ("--red-army", red_army)):
            if army and all(Entrant.parse(n).army for n in names):  # an entrant's own army list comes first
                raise UserError(f"{flag} {army}: every entrant names its own army list "
                                f"({'--armies' if armies else 'agent@army'}), so it would apply to no game")
        try:
            with _agent_flag("--agents"):
                validate_inputs(scenario, names, (blue_army, red_army))
        except ConfigError as exc:  # name the flag that gave the entrant's army
            if not (exc.where or "").startswith("entrant "):
                raise
            raise UserError(f"{'--armies' if armies else '--agents'}: {exc}") from None
        check_output("--out", out, folder=True)
    _warn_unpaired("--games-per-pair", games_per_pair)
    workers = _worker_count(workers, n_games, backend, ray_address)
    with _user_errors(), writing("--out", out):
        results = run_tournament(scenario, names, games_per_pair, seed, out, workers=workers,
                                 blue_army=blue_army, red_army=red_army, console=console, backend=backend,
                                 ray_address=ray_address, pairing=pairing)
    n = results["workers"]
    console.print(f"{results['games']} games in {results['seconds']:.1f} s on {n} worker{'s' * (n != 1)} "
                  f"({backend})", soft_wrap=True)
    for name in ("results.json", "results.csv", "heatmap.png", "fingerprint.png"):
        console.print(f"{name}: {_shown(out / name)}", soft_wrap=True)
    if results["games_failed"]:
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command()
def parity(
    agent: Annotated[str, typer.Option(help="The agent that plays both sides.")] = "line_advance",
    scenario: Annotated[str, typer.Option(help="Scenario name in configs/scenarios, or a YAML path.")] = "pitched_battle",
    games: Annotated[int, typer.Option(help="Battles to play; the check needs at least 200 (fewer print a "
                                            "warning: the verdict cannot pass it).")] = 200,
    seed: Annotated[int, typer.Option(help="Base seed; each battle's seed derives from it.")] = 0,
    out: Annotated[Path, typer.Option(help="Output folder: parity.json, parity.csv.")] = Path("out/parity"),
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: all cores; at most one per "
                                                     "game and per core).")] = None,
    backend: Annotated[str, typer.Option(help="process: a local process pool; ray: Ray tasks.")] = "process",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address for --backend ray.")] = None,
) -> None:
    """Seat-parity check: an agent against itself; exit 1 when 0.5 is outside blue's 95% interval (unfair)."""
    from battleline.training.parity import MIN_PARITY_GAMES, run_parity
    from battleline.training.tournament import MAX_GAMES, validate_inputs

    with _user_errors():
        if games < 1:
            raise UserError(f"--games must be at least 1, got {games}")
        if games > MAX_GAMES:
            raise UserError(f"--games must be at most {MAX_GAMES:,}, got {games:,}")
        _check_seed(seed)
        _check_run_options(workers, backend, ray_address)
        try:
            with _agent_flag("--agent"):
                validate_inputs(scenario, [agent], ())
        except _user_error_types():
            raise
        except ValueError as exc:  # a malformed entrant ('', 'agent@')
            raise UserError(f"--agent: {exc}") from None
        check_output("--out", out, folder=True)
    _warn_unpaired("--games", games)
    workers = _worker_count(workers, games, backend, ray_address)
    with _user_errors(), writing("--out", out):
        res = run_parity(scenario, agent, games, seed, out, workers=workers, console=console,
                         backend=backend, ray_address=ray_address)
    if not res["games"]:  # every battle failed: there is no score to show
        raise _fail(f"no battle finished: all {res['games_failed']} failed (their errors are in "
                    f"{_shown(out / 'parity.json')})", EXIT_CHECK_FAILED)
    blue, mover = res["blue"], res["first_mover"]
    lo, hi = blue["score_ci95"]
    if not res["fair"]:
        verdict = Text("UNFAIR", style="bold red")
    else:  # too few battles to call a scenario fair (0.5 outside the interval is already evidence)
        verdict = Text("fair", style="bold green") if res["enough_games"] else Text("inconclusive", style="bold yellow")
    line = Text(f"{agent} vs itself on {scenario}, {res['games']} battles: blue score {blue['score']:.3f} "
                f"[{lo:.3f}, {hi:.3f}] (W-D-L {blue['wins']}-{blue['draws']}-{blue['losses']}): ")
    line.append(verdict)
    line.append(" (0.5 inside the 95% interval)" if res["fair"] else " (0.5 outside the 95% interval)")
    console.print(line, soft_wrap=True)
    if not res["enough_games"]:
        err_console.print(Text(f"warning: {games} battles are fewer than the {MIN_PARITY_GAMES} the parity check needs; "
                               f"this verdict cannot pass it", style="yellow"), soft_wrap=True)
    if mover["games"]:
        console.print(f"first mover score {mover['score']:.3f}, blue moved first in "
                      f"{res['blue_first_share']:.0%} of battles", soft_wrap=True)
    for name in ("parity.json", "parity.csv"):
        console.print(f"{name}: {_shown(out / name)}", soft_wrap=True)
    if res["games_failed"] or not res["fair"]:
        raise typer.Exit(EXIT_CHECK_FAILED)


BRIEF_CHARS = 60
"""The longest value a failed ``replay --check`` quotes (longer ones are cut, with their length)."""


def _brief(value: Any) -> str:
    """A short summary of a JSON value: its repr up to :data:`BRIEF_CHARS`, or its kind and size."""
    text = repr(value)
    if len(text) <= BRIEF_CHARS:
        return text
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        keys = ", ".join(map(str, list(value)[:4]))
        return f"an object with {len(value)} keys ({keys}{', …' if len(value) > 4 else ''})"
    return f"{text[:BRIEF_CHARS]}… ({len(text)} characters)"


def _first_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The path of the first difference between two JSON values (replay ``a``, re-simulated ``b``), with
    short summaries of both (:func:`_brief`); None if equal. Lists name the first differing index."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            where = f"{path}.{key}" if path else str(key)
            if key not in a or key not in b:
                return f"{where}: only in the {'replay' if key in a else 're-simulated battle'}"
            diff = _first_difference(a[key], b[key], where)
            if diff:
                return diff
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            diff = _first_difference(x, y, f"{path}[{i}]")
            if diff:
                return diff
        if len(a) != len(b):
            i = min(len(a), len(b))
            extra = _brief(a[i] if len(a) > len(b) else b[i])
            return (f"{path}: {len(a)} items (replay) vs {len(b)} (re-simulated); first differing index {i}: "
                    f"{extra} only in the {'replay' if len(a) > len(b) else 're-simulated battle'}")
        return None
    if a != b:
        return f"{path}: {_brief(a)} (replay) vs {_brief(b)} (re-simulated)"
    return None


def _load_replay(path: Path) -> tuple[Any, str, dict[str, Any]]:
    from battleline.env.rules.battle import Battle

    text = read_file_text(path, UserError)  # one line: FILE: file not found / is a directory / not UTF-8 text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path}: not valid JSON ({exc.msg}: line {exc.lineno} column {exc.colno})") from None
    except RecursionError:  # 1,000 nested arrays exhaust the decoder
        raise UserError(f"{path}: {NESTED_TOO_DEEPLY}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: not a battleline replay (expected a JSON object)")
    try:
        battle = Battle.from_json(text)
    except RecursionError:  # a value the checks follow level by level
        raise UserError(f"{path}: {NESTED_TOO_DEEPLY}") from None
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        detail = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
        if not detail.startswith("not a battleline replay"):  # the engine's own wording already says it
            detail = f"not a battleline replay ({detail})"
        raise UserError(f"{path}: {detail}") from None
    return battle, text, data


def _in_replay(exc: Exception, path: Path) -> str:
    """The message of an error raised while re-simulating replay ``path``: a ConfigError about the saved scenario
    (a dict, shown as ``<dict>``) names the replay file and its ``scenario`` field instead."""
    if isinstance(exc, ConfigError) and exc.file == "<dict>":
        return str(ConfigError(exc.problem, file=str(path), where=f"scenario.{exc.where}" if exc.where else "scenario"))
    return str(exc)


def _replay_players(path: Path, data: dict[str, Any]) -> dict[str, str] | None:
    """The agent names a replay's ``meta.players`` gives each side, or None when it has none.

    Raises:
        UserError: ``meta`` is not an object, or ``meta.players`` not an object naming both sides (one line).
    """
    meta = data.get("meta")
    if meta is None:
        return None
    if not isinstance(meta, dict):
        raise UserError(f"{path}: meta: expected an object, got {type(meta).__name__}")
    players = meta.get("players")
    if players is None:
        return None
    if not (isinstance(players, dict) and all(isinstance(players.get(side), str) for side in SIDES)):
        raise UserError(f"{path}: meta.players: expected an object with the agent name of each side "
                        f"({', '.join(SIDES)}), got {json.dumps(players)[:BRIEF_CHARS]}")
    return {side: players[side] for side in SIDES}


@app.command("replay")
def replay_cmd(
    path: Annotated[Path, typer.Argument(help="A replay JSON written by 'battleline play --replay'.")],
    png: Annotated[Path | None, typer.Option(help="Redraw the final table into this PNG.")] = None,
    gif: Annotated[Path | None, typer.Option(help="Animate the battle into this GIF, one frame per game turn "
                                             "and one of the final table (re-simulated from scenario, seed and "
                                             "actions).")] = None,
    check: Annotated[bool, typer.Option("--check", help="Re-simulate from scenario, seed and actions and "
                                        "verify the final state, events and dice match.")] = False,
) -> None:
    """Reload a replay, optionally re-simulate it to check it, and redraw it (PNG) or animate it (GIF)."""
    from battleline.env.rules.battle import Battle

    with _user_errors():
        for flag, out, suffix in (("--png", png, ".png"), ("--gif", gif, ".gif")):
            if out is not None:
                check_output(flag, out, suffix=suffix)
        check_distinct(("--png", png), ("--gif", gif), reads=("the replay", path))
        battle, text, data = _load_replay(path)
        players = _replay_players(path, data)
    if check:
        try:
            again = Battle.resimulate(text)
        except Exception as exc:  # noqa: BLE001 - any failure to re-run is a failed check
            raise _fail(f"replay check failed: re-simulation raised {type(exc).__name__}: "
                        f"{_in_replay(exc, path)}", EXIT_CHECK_FAILED) from None
        mine = json.loads(again.to_json())
        for key in ("actions", "state", "events", "rng"):
            diff = _first_difference(data.get(key), mine.get(key), key)
            if diff:
                raise _fail(f"replay check failed: {diff}", EXIT_CHECK_FAILED)
        console.print(Text(f"check passed: re-simulating {len(battle.actions)} actions gives the same state, "
                           f"{len(battle.events)} events and dice", style="green"), soft_wrap=True)
    written: list[tuple[str, Path]] = []
    title = f"{players['blue']} (blue) vs {players['red']} (red), seed {battle.seed}" if players else None
    if png is not None:
        from battleline.env.render import render_battle

        try:
            with writing("--png", png):
                render_battle(battle, png, title=title)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:  # a hand-edited state
            raise _fail(f"--png: cannot draw {path}'s final state ({type(exc).__name__}: {' '.join(str(exc).split())})",
                        EXIT_USER_ERROR) from None
        written.append(("png", png))
    if gif is not None:
        from battleline.env.render import render_gif

        try:
            with writing("--gif", gif):
                frames = render_gif(battle, gif, title=title)
        except (ConfigError, ValueError, TypeError, KeyError) as exc:  # IllegalActionError is a ValueError
            raise _fail(f"--gif: cannot re-simulate {path} ({type(exc).__name__}: {_in_replay(exc, path)})",
                        EXIT_CHECK_FAILED) from None
        written.append((f"gif ({frames} frame{'' if frames == 1 else 's'})", gif))
    print_result(battle, players, written)


@app.command()
def scenarios() -> None:
    """List the scenarios and army lists in configs/."""
    from battleline.env.rules.army import army_points
    from battleline.env.rules.config import list_armies, list_factions, list_scenarios, load_army, load_faction, load_scenario

    table = Table(title="Scenarios (configs/scenarios)", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("id", "table", "turns", "points", "blue", "red"):
        table.add_column(col, no_wrap=True)
    for sid in list_scenarios():
        try:
            s = load_scenario(sid)
        except ConfigError as exc:
            table.add_row(sid, "", "", "", Text(f"invalid: {exc}", style="red"), "")
            continue
        sides = [s.side(n).army or f"{s.side(n).faction}: {len(s.side(n).placements or [])} placed" for n in SIDES]
        table.add_row(sid, s.table_text(), str(s.turns), str(s.points_limit), *sides)
    console.print(table)

    armies = Table(title="Army lists (configs/armies)", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("id", "faction", "name", "units", "points"):
        armies.add_column(col)
    for aid in list_armies():
        try:
            a = load_army(aid)
            pts = army_points(a, load_faction(a.faction))
        except (ConfigError, ValueError) as exc:
            armies.add_row(aid, "", Text(f"invalid: {exc}", style="red"), "", "")
            continue
        armies.add_row(aid, a.faction, a.name, str(len(a.units)), f"{pts:,}")
    console.print(armies)
    console.print(f"factions: {', '.join(list_factions())}", soft_wrap=True)


@app.command("coverage")
def coverage_cmd(
    battles: Annotated[int, typer.Option(help="Random battles per shipped scenario in the fuzz corpus.")] = 12,
    show: Annotated[str, typer.Option(help="Rows to list: missing, all.")] = "missing",
    module: Annotated[str, typer.Option(
        help="Rule set: core (the CORE rule IDs) or t9a (the T9A variant's T9A.* and CFG.* IDs, played on "
             "pitched_battle_t9a and configs/scenarios/coverage_t9a/).")] = "core",
) -> None:
    """Rule coverage: tests pinning each rule ID of a rule set and how often it fires in a fixed fuzz corpus."""
    from battleline.training import coverage as cov
    from battleline.training.tournament import check_games_total

    with _user_errors():
        if battles < 1:
            raise UserError(f"--battles must be at least 1, got {battles}")
        if show not in ("missing", "all"):
            raise UserError(f"--show must be 'missing' or 'all', got '{show}'")
        if module not in cov.MODULES:
            raise UserError(f"--module must be one of {', '.join(cov.MODULES)}, got '{module}'")
        try:  # every empty case (no tests, no index, no army list, no core rule) is one line, before any battle
            per = len(cov.corpus_games(1, module))  # the corpus' set-ups: battles each
            check_games_total(per * battles, f"--battles {battles:,} × {per} set-ups")
            exceptions = cov.load_exceptions()
            tests, source = cov.known_tests()
        except ValueError as exc:  # CoverageError included
            raise UserError(str(exc)) from None
        if not cov.module_rule_ids(module):
            raise UserError(f"no {cov.MODULE_TITLES[module]} rule ID to report: the rule-ID list names none")
    with _user_errors(), LoggedProgress(console=console, transient=True, unit="games") as progress:
        task = progress.add_task("fuzz corpus", total=len(cov.corpus_games(battles, module)))
        counts = cov.fuzz_corpus_counts(battles, progress=lambda n: progress.advance(task, n), module=module)
    rows = cov.coverage(counts, tests, exceptions, module)
    words = cov.MODULE_TITLES[module]
    table = Table(title=f"{words[0].upper()}{words[1:]} rule coverage", header_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    for col in ("rule", "tests", "fired", "status"):
        table.add_column(col)
    for r in rows:
        full = bool(r.tests) and r.fired > 0
        if show == "missing" and full:
            continue
        status = "ok" if full else (f"excused: {r.exception}" if r.exception else "MISSING")
        table.add_row(r.rule, str(len(r.tests)), str(r.fired), status)
    console.print(table)
    s = cov.summary(rows)
    console.print(
        f"{s['tested_and_fired']}/{s['rules']} {words} rule IDs tested and firing ({s['share']:.0%}); "
        f"{s['tested']} tested, {s['fired']} fired, {s['excused']} excused.", soft_wrap=True
    )
    console.print(f"tests read from {source}", soft_wrap=True, highlight=False)
    least = cov.MIN_SHARE.get(module)
    if least is not None and s["share"] < least:
        console.print(f"below the required {least:.0%} tested and firing", soft_wrap=True, highlight=False)
    if any(not r.ok for r in rows) or (least is not None and s["share"] < least):
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command("rules")
def rules_cmd(
    rule: Annotated[str | None, typer.Argument(
        help="A rule ID (CORE.CC.BREAK_TEST) or the start of IDs (SIEGE.DMG, CORE.CC); none lists every ID.")
    ] = None,
) -> None:
    """Print a rule's text from the shipped rules document (RULESET.md), or every rule under a prefix."""
    from battleline.env.rules.reference import UnknownRuleQuery, lookup, normalize_query, ruleset_rules, summary

    if rule is None:
        for r in ruleset_rules().values():
            console.print(Text(f"{r.id}  {summary(r)}"), soft_wrap=True)
        console.print(f"{len(ruleset_rules())} rules; 'battleline rules ID' prints one, "
                      f"'battleline rules CORE.CC' every rule under a prefix", soft_wrap=True, highlight=False)
        return
    try:
        found = lookup(rule)
    except UnknownRuleQuery as exc:
        raise _fail(str(exc), EXIT_USER_ERROR) from None
    for i, r in enumerate(found):
        if i:
            console.print()
        heading = Text(r.id, style="bold")
        heading.append(f"  (RULESET.md, {r.section})", style="dim")
        console.print(heading, soft_wrap=True)
        console.print(Text(r.text), soft_wrap=True)
    if len(found) > 1:
        console.print()
        console.print(f"{len(found)} rules under {normalize_query(rule)}", soft_wrap=True, highlight=False)


@app.command("tactics")
def tactics_cmd() -> None:
    """List the tactics catalogue (tactics/catalogue.yaml, drawn from tactics.md): id, kind, playable, title."""
    from battleline.tactics.catalogue import CatalogueError, catalogue

    with _user_errors():
        try:
            cat = catalogue()
        except CatalogueError as exc:
            raise UserError(str(exc)) from None
    table = Table(title="Tactics (tactics/catalogue.yaml)", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
    for col in ("id", "kind", "playable", "title"):
        table.add_column(col, no_wrap=col != "title")
    for t in cat.values():
        table.add_row(t.id, t.kind, Text("yes", style="green") if t.playable else Text("no", style="red"), t.title)
    console.print(table)
    n_play = sum(t.playable for t in cat.values())
    n_det = sum(bool(t.detectable) for t in cat.values())
    console.print(f"{len(cat)} tactics, {n_play} playable, {n_det} with a detector", soft_wrap=True)


@app.command("detect")
def detect_cmd(
    path: Annotated[Path, typer.Argument(help="A replay JSON written by 'battleline play --replay'.")],
    all_tactics: Annotated[bool, typer.Option("--all", help="Also list the tactics not detected.")] = False,
) -> None:
    """Detect the tactics each side used in a replay, with the turn and the evidence."""
    from battleline.tactics.detectors import detect

    with _user_errors():
        battle, _, data = _load_replay(path)
        players = _replay_players(path, data) or {}
        try:
            found = [detect(battle, side) for side in range(len(SIDES))]
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise UserError(f"{path}: cannot read the battle's events ({type(exc).__name__}: {exc})") from None
    if not battle.is_over:  # a replay saved mid-battle: e.g. "all 1 mobile units deployed" of a deployment under way
        err_console.print(Text(f"warning: {path}: the battle is unfinished (turn {battle.state.turn}, "
                               f"{battle.state.stage} stage): tactics are detected in the part played only",
                               style="yellow"), soft_wrap=True)
    for i, side in enumerate(SIDES):
        used = {tid: d for tid, d in found[i].items() if d.used}
        who = f" ({players[side]})" if side in players else ""
        console.print(Text(f"{side}{who}: {len(used)} of {len(found[i])} tactics detected", style=f"bold {side}"),
                      soft_wrap=True)
        table = Table(header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("tactic", no_wrap=True)
        table.add_column("turn", justify="right", no_wrap=True)
        table.add_column("evidence")
        for tid, d in (found[i] if all_tactics else used).items():
            table.add_row(tid, "" if d.turn is None else str(d.turn), d.evidence, style=None if d.used else "dim")
        if table.row_count:
            console.print(table)




# last, so that train, evaluate and expert-iteration (registered on import) list after the commands above
from battleline.training.cli_learning import tensorboard_command  # noqa: E402

__all__ = ["UserError", "app", "check_output", "console", "run_command", "tensorboard_command", "write_replay",
           "writing"]
"""The names other modules and the tests import from here (the commands register themselves on :data:`app`)."""

if __name__ == "__main__":  # pragma: no cover
    app()
