"""The scripted agents' round robin under the core rules and under the T9A variant: same armies, paired seeds.

``python -m benchmarks.variant_tournament --games-per-pair 40 --workers 2 --out docs/results/variant_tournament``

Two tournaments (:func:`training.tournament.run_tournament`) with the same entrants, army lists and
schedule: one on ``pitched_battle`` (the core rules), one on ``pitched_battle_t9a`` (the same table, terrain
and armies with every T9A module on, RULESET.md §6.1). The schedule depends only on the entrants and the
seed, so game ``i`` of one rule set is game ``i`` of the other: the same two agents in the same seats with the
same battle seed (paired seeds). The dice still differ where the rule sets roll differently.

Outputs (in ``--out``): ``core/`` and ``t9a/`` (each tournament's results.json, results.csv, heatmap.png and
fingerprint.png), ``comparison.json`` (:func:`compare`: per agent the score under each rule set with its Wilson
95% interval, the paired difference with its 95% interval, and the share of paired games whose result
changed), ``comparison.md`` (the same as a table) and ``comparison.png`` (the two score heatmaps side by side
and a bar chart of each agent's score under both rule sets with the intervals).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from battleline.training.cli_common import UserError, check_output, writing
from benchmarks import check_at_least, flag_errors

RULE_SETS: dict[str, str] = {"core": "pitched_battle", "t9a": "pitched_battle_t9a"}
"""Rule set → the scenario that plays it (the same table, terrain and army lists)."""
Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


def default_agents() -> list[str]:
    """The scripted field agents and the tactical agents (``benchmarks.fuzz.scripted_agents``), as in
    ``battleline tournament``'s round robin."""
    from benchmarks.fuzz import scripted_agents

    return scripted_agents()


def _points(row: dict[str, Any], agent: str) -> float:
    """1, 0.5 or 0: the agent's result in a finished game row."""
    side = "blue" if row["blue"] == agent else "red"
    return 0.5 if row["winner"] == "draw" else float(row["winner"] == side)


def paired_difference(core_rows: list[dict[str, Any]], t9a_rows: list[dict[str, Any]],
                      agent: str) -> dict[str, Any]:
    """The agent's score change from core to t9a over the games both rule sets finished (paired by ``index``).

    Returns ``{"games", "difference", "difference_ci95", "changed"}``: the mean of t9a points − core points
    (points 1, 0.5, 0), its normal 95% interval [low, high] (None with fewer than two pairs), and the share
    of paired games whose result differs (None without pairs).
    """
    core = {r["index"]: r for r in core_rows if "error" not in r and agent in (r["blue"], r["red"])}
    t9a = {r["index"]: r for r in t9a_rows if "error" not in r and agent in (r["blue"], r["red"])}
    diffs = np.array([_points(t9a[i], agent) - _points(core[i], agent) for i in sorted(core.keys() & t9a.keys())])
    n = len(diffs)
    if n == 0:
        return {"games": 0, "difference": None, "difference_ci95": None, "changed": None}
    mean = float(diffs.mean())
    ci = None
    if n > 1:
        half = Z95 * float(diffs.std(ddof=1)) / math.sqrt(n)
        ci = [round(mean - half, 4), round(mean + half, 4)]
    return {"games": n, "difference": round(mean, 4), "difference_ci95": ci,
            "changed": round(float(np.count_nonzero(diffs)) / n, 4)}


def compare(core: dict[str, Any], t9a: dict[str, Any], core_rows: list[dict[str, Any]],
            t9a_rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The comparison of two tournaments' results (``results.json`` dicts) and rows (``results.csv``'s games).

    Returns ``{"agents": {agent: {"core": {score, score_ci95, games}, "t9a": {...}, "paired": ...}},
    "matrix": {"agents", "core", "t9a"}}``: ``paired`` from :func:`paired_difference`; the matrices are each
    tournament's row-against-column scores.

    Raises:
        ValueError: the two tournaments do not have the same entrants.
    """
    if core["agents"] != t9a["agents"]:
        raise ValueError("the two tournaments have different agents")
    agents = list(core["agents"])
    per = {}
    for a in agents:
        per[a] = {rs: {k: res["ratings"][a][k] for k in ("score", "score_ci95", "games")}
                  for rs, res in (("core", core), ("t9a", t9a))}
        per[a]["paired"] = paired_difference(core_rows, t9a_rows, a)
    return {"agents": per, "matrix": {"agents": agents, "core": core["matrix"]["score"],
                                      "t9a": t9a["matrix"]["score"]}}


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def markdown_table(comparison: dict[str, Any]) -> str:
    """The comparison as a Markdown table, agents sorted by their core score (highest first)."""
    lines = ["| agent | core score [95% CI] | t9a score [95% CI] | t9a − core (paired) [95% CI] | results changed |",
             "|---|---|---|---|---|"]
    rows = sorted(comparison["agents"].items(), key=lambda kv: -(kv[1]["core"]["score"] or 0.0))
    for agent, r in rows:
        c, t, p = r["core"], r["t9a"], r["paired"]
        ci = p["difference_ci95"]
        diff = "n/a" if p["difference"] is None else f"{p['difference']:+.2f}"
        diff += "" if ci is None else f" [{ci[0]:+.2f}, {ci[1]:+.2f}]"
        changed = "n/a" if p["changed"] is None else f"{p['changed']:.0%} of {p['games']}"
        lines.append(f"| `{agent}` | {_pct(c['score'])} [{c['score_ci95'][0]:.2f}, {c['score_ci95'][1]:.2f}] | "
                     f"{_pct(t['score'])} [{t['score_ci95'][0]:.2f}, {t['score_ci95'][1]:.2f}] | {diff} | {changed} |")
    return "\n".join(lines) + "\n"


def write_picture(comparison: dict[str, Any], path: Path, title: str) -> None:
    """Write ``comparison.png``: the core and t9a score heatmaps (row agent against column agent) side by side
    and, below, each agent's score under both rule sets as bars with their Wilson 95% intervals."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    agents = comparison["matrix"]["agents"]
    n = len(agents)
    side = 2.0 + 0.55 * n
    fig = Figure(figsize=(2 * side + 1.5, side + 4.0), dpi=110)
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 2, height_ratios=[side, 3.6], hspace=0.55)
    for k, rs in enumerate(("core", "t9a")):
        ax = fig.add_subplot(grid[0, k])
        data = np.array([[np.nan if v is None else v for v in row] for row in comparison["matrix"][rs]], dtype=float)
        im = ax.imshow(np.ma.masked_invalid(data), cmap="RdYlGn", vmin=0.0, vmax=1.0)
        ax.set_xticks(range(n), labels=agents, rotation=40, ha="right", fontsize=7)
        ax.set_yticks(range(n), labels=agents, fontsize=7)
        for i in range(n):
            for j in range(n):
                if not np.isnan(data[i, j]):
                    ax.text(j, i, f"{data[i, j]:.2f}", ha="center", va="center", fontsize=6,
                            color="black" if 0.2 < data[i, j] < 0.8 else "white")
        ax.set_title(f"{rs} rules ({RULE_SETS[rs]}): score of row agent", fontsize=9)
    fig.colorbar(im, ax=fig.axes, fraction=0.02, pad=0.02)
    bars = fig.add_subplot(grid[1, :])
    x = np.arange(n)
    for k, (rs, colour) in enumerate((("core", "#4477aa"), ("t9a", "#cc6677"))):
        scores = [comparison["agents"][a][rs]["score"] or 0.0 for a in agents]
        lows = [s - comparison["agents"][a][rs]["score_ci95"][0] for a, s in zip(agents, scores)]
        highs = [comparison["agents"][a][rs]["score_ci95"][1] - s for a, s in zip(agents, scores)]
        bars.bar(x + (k - 0.5) * 0.38, scores, 0.38, yerr=[lows, highs], capsize=2, color=colour, label=rs)
    bars.axhline(0.5, color="#888888", linewidth=0.8, linestyle="--")
    bars.set_xticks(x, labels=agents, rotation=30, ha="right", fontsize=7)
    bars.set_ylim(0, 1)
    bars.set_ylabel("score (wins + draws/2) / games", fontsize=8)
    bars.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, format="png")


def _rows(folder: Path) -> list[dict[str, Any]]:
    """The finished games of a tournament folder, from its results.csv, as dicts with the columns and
    ``index`` = (pair, game): the same in both rule sets' schedules."""
    import csv

    with (folder / "results.csv").open(encoding="utf-8") as fh:
        return [{**r, "index": (r["pair"], int(r["game"]))} for r in csv.DictReader(fh)]


def run(agents: list[str], games_per_pair: int, seed: int, out: Path, workers: int | None = None,
        blue_army: str | None = None, red_army: str | None = None, progress: bool = True) -> dict[str, Any]:
    """Play both tournaments into ``out/core`` and ``out/t9a`` and write the comparison; returns it.

    Raises:
        ConfigError, UnknownAgentError, ValueError: as :func:`training.tournament.run_tournament`, before any game.
    """
    from battleline.training.tournament import run_tournament, validate_inputs

    for scenario in RULE_SETS.values():  # both rule sets' inputs before any game
        validate_inputs(scenario, agents, (blue_army, red_army))
    t0 = time.perf_counter()
    results = {rs: run_tournament(scenario, agents, games_per_pair, seed, out / rs, workers=workers,
                                  blue_army=blue_army, red_army=red_army, progress=progress)
               for rs, scenario in RULE_SETS.items()}
    comparison = {
        "scenarios": RULE_SETS, "agents_list": agents, "games_per_pair": games_per_pair, "seed": seed,
        "blue_army": blue_army, "red_army": red_army, "seconds": round(time.perf_counter() - t0, 2),
        "games": {rs: r["games"] for rs, r in results.items()},
        "games_failed": {rs: r["games_failed"] for rs, r in results.items()},
        "pairing": "game i of both tournaments: the same agents, seats and battle seed",
        **compare(results["core"], results["t9a"], _rows(out / "core"), _rows(out / "t9a")),
    }
    (out / "comparison.json").write_text(json.dumps(comparison, indent=1) + "\n", encoding="utf-8")
    (out / "comparison.md").write_text(markdown_table(comparison), encoding="utf-8")
    write_picture(comparison, out / "comparison.png",
                  f"Scripted agents, core rules against the T9A variant ({games_per_pair} games per pair, seed {seed})")
    return comparison


def main(
    games_per_pair: Annotated[int, typer.Option(help="games for each pair of agents, split across the seats")] = 40,
    seed: Annotated[int, typer.Option(help="base seed of both schedules (paired seeds)")] = 0,
    agents: Annotated[str | None, typer.Option(help="comma-separated agents; default: every scripted agent")] = None,
    workers: Annotated[int | None, typer.Option(help="worker processes (default: one per CPU)")] = None,
    blue_army: Annotated[str | None, typer.Option(help="blue's army list in both rule sets (default: the "
                                                       "scenarios', men_marcher_host)")] = None,
    red_army: Annotated[str | None, typer.Option(help="red's army list in both rule sets (default: the "
                                                      "scenarios', orcs_tusk_horde)")] = None,
    out: Annotated[Path, typer.Option(help="output folder")] = Path("docs/results/variant_tournament"),
) -> None:
    """Play the scripted agents' round robin under the core rules and the T9A variant and compare them."""
    with flag_errors():
        check_at_least(1, games_per_pair=games_per_pair, workers=workers)
        names = [a.strip() for a in agents.split(",")] if agents else default_agents()
        if len(names) < 2 or not all(names):
            raise UserError(f"--agents: expected at least two comma-separated agents, got '{agents}'")
        check_output("--out", out, folder=True)
        try:
            with writing("--out", out):
                comparison = run(names, games_per_pair, seed, out, workers, blue_army, red_army)
        except ValueError as exc:  # ConfigError and UnknownAgentError included: one line
            raise UserError(str(exc)) from None
    typer.echo(markdown_table(comparison), nl=False)
    typer.echo(f"{out}: core/, t9a/, comparison.json, comparison.md, comparison.png "
               f"({comparison['games']['core']} + {comparison['games']['t9a']} games, {comparison['seconds']} s)")


if __name__ == "__main__":
    from battleline.training.cli_common import run_command

    run_command(main)
