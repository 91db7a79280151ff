"""The files and tables of a tournament: results.csv, heatmap.png, fingerprint.png, rich tables.

Everything here reads the rows of :func:`training.tournament.play_game` and
the summary of :func:`training.tournament.summarise`; nothing plays games.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
from rich import box
from rich.table import Table

CSV_COLUMNS = ("pair", "game", "seat", "blue", "red", "blue_army", "red_army", "seed", "first_turn", "winner",
               "vp_blue", "vp_red", "turns")
"""Columns of ``results.csv``. ``pair`` is "a vs b"; ``seat`` is the side of the pair's first entrant;
``blue_army`` / ``red_army`` the army lists played; ``first_turn`` the side that took the first turn."""


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    """Write one finished game per line, columns :data:`CSV_COLUMNS` (failed games are left out)."""
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(CSV_COLUMNS)
        for r in sorted(rows, key=lambda r: r["index"]):
            if "error" in r:
                continue
            seat = "blue" if r["blue"] == r["a"] else "red"
            w.writerow([f"{r['a']} vs {r['b']}", r["game"], seat, r["blue"], r["red"], r["blue_army"], r["red_army"],
                        r["seed"], r["first_turn"], r["winner"], r["vp_blue"], r["vp_red"], r["turns"]])


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)
    return fig


def write_heatmap(agents: list[str], matrix: list[list[float | None]], pairs: list[dict[str, Any]], path: Path,
                  title: str) -> None:
    """Write the entrant-vs-entrant score heatmap (PNG).

    Cell (i, j) is entrant i's score against entrant j, (wins + draws/2) / games,
    annotated with the score and W-D-L; the diagonal is blank.
    """
    n = len(agents)
    data = np.array([[np.nan if v is None else v for v in row] for row in matrix], dtype=float)
    wdl: dict[tuple[str, str], tuple[int, int, int]] = {}
    for p in pairs:
        wdl[(p["agent"], p["opponent"])] = (p["wins"], p["draws"], p["losses"])
        wdl[(p["opponent"], p["agent"])] = (p["losses"], p["draws"], p["wins"])
    size = 1.6 + 1.25 * n
    fig = _figure(size + 1.4, size)
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(np.ma.masked_invalid(data), cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), labels=agents, rotation=30, ha="right", fontsize=9)
    ax.set_yticks(range(n), labels=agents, fontsize=9)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    for i in range(n):
        for j in range(n):
            if i == j:
                ax.text(j, i, "—", ha="center", va="center", color="#888888")
                continue
            if np.isnan(data[i, j]):
                ax.text(j, i, "n/a", ha="center", va="center", color="#888888", fontsize=8)
                continue
            won, drawn, lost = wdl.get((agents[i], agents[j]), (0, 0, 0))
            ax.text(j, i, f"{data[i, j]:.2f}\n{won}-{drawn}-{lost}", ha="center", va="center", fontsize=8.5,
                    color="black" if 0.2 < data[i, j] < 0.8 else "white")
    cbar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    cbar.set_label("score of row agent: (wins + draws/2) / games", fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")


def write_fingerprint_chart(fingerprints: dict[str, dict[str, float]], path: Path, title: str) -> None:
    """Write the tactic fingerprint chart (PNG): entrants (rows) x tactics (columns), cell = detector rate.

    Args:
        fingerprints: entrant -> tactic id -> share of its games in which the tactic was
            detected for its side (``results.json["fingerprint"]["rates"]``).
        path: the PNG to write.
        title: the chart title (the number of tactics never detected is appended).

    Tactics no entrant used are left out of the columns (their count is in the title).
    """
    agents = list(fingerprints)
    tactics = list(next(iter(fingerprints.values()), {}))
    shown = [t for t in tactics if any(fingerprints[a].get(t, 0.0) > 0 for a in agents)] or tactics[:1]
    data = np.array([[fingerprints[a].get(t, 0.0) for t in shown] for a in agents], dtype=float).reshape(
        len(agents), len(shown))
    fig = _figure(2.6 + 0.42 * len(shown), 2.0 + 0.42 * len(agents))
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(data, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(len(shown)), labels=shown, rotation=60, ha="right", fontsize=7.5)
    ax.set_yticks(range(len(agents)), labels=agents, fontsize=8.5)
    for i in range(len(agents)):
        for j in range(len(shown)):
            if data[i, j] > 0:
                ax.text(j, i, f"{data[i, j]:.2f}".lstrip("0") if data[i, j] < 1 else "1", ha="center",
                        va="center", fontsize=6, color="black" if data[i, j] > 0.6 else "white")
    cbar = fig.colorbar(im, ax=ax, fraction=0.03, pad=0.02)
    cbar.set_label("share of its games detected", fontsize=8)
    hidden = len(tactics) - len(shown)
    ax.set_title(f"{title}; {hidden} tactics never detected are not shown" if hidden else title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")


def _ci(rate: float | None, ci: list[float]) -> str:
    return "—" if rate is None else f"{rate:.0%} [{ci[0]:.0%},{ci[1]:.0%}]"


def results_table(summary: dict[str, Any]) -> Table:
    """A rich table of the entrants, best ordinal first (``summary`` from :func:`~training.tournament.summarise`)."""
    table = Table(title="Tournament results", header_style="bold", box=box.SIMPLE_HEAD, pad_edge=False,
                  collapse_padding=True)
    for col, justify in (("#", "right"), ("agent", "left"), ("games", "right"), ("W-D-L", "center"),
                         ("win [95% CI]", "right"), ("score", "right"), ("mu±sigma", "right"), ("ordinal", "right")):
        # Long entrant names (agent@army) fold onto a second line rather than squeezing the numbers.
        table.add_column(col, justify=justify, no_wrap=col != "agent", overflow="fold" if col == "agent" else "ellipsis")
    ranked = sorted(summary["agents"].items(), key=lambda kv: kv[1]["ordinal"], reverse=True)
    for rank, (name, s) in enumerate(ranked, 1):
        table.add_row(str(rank), name, str(s["games"]), f"{s['wins']}-{s['draws']}-{s['losses']}",
                      _ci(s["win_rate"], s["win_rate_ci95"]), "—" if s["score"] is None else f"{s['score']:.2f}",
                      f"{s['mu']:.1f}±{s['sigma']:.1f}", f"{s['ordinal']:.2f}")
    return table


def faction_table(factions: dict[str, Any]) -> Table:
    """A rich table of the factions' results against the other factions (``summary["factions"]``)."""
    table = Table(title="Factions (games between different factions)", header_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False, collapse_padding=True)
    for col in ("faction", "games", "W-D-L", "win [95% CI]", "score"):
        table.add_column(col, justify="left" if col == "faction" else "right", no_wrap=True)
    for name, f in factions["factions"].items():
        table.add_row(name + (" (>75%)" if f["over_limit"] else ""), str(f["games"]),
                      f"{f['wins']}-{f['draws']}-{f['losses']}", _ci(f["win_rate"], f["win_rate_ci95"]),
                      "—" if f["score"] is None else f"{f['score']:.2f}")
    return table


__all__ = ["CSV_COLUMNS", "faction_table", "results_table", "write_csv", "write_fingerprint_chart", "write_heatmap"]
