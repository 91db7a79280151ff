"""Expert iteration over the scripted plans: the search labels, a plan network learns, the network helps the search.

One run (``battleline expert-iteration``) repeats, for ``iterations`` rounds:

1. **Label** (:mod:`training.exit_data`): ``games`` label games on the
   scenario. The apprentice meets the scripted opponents in turn, from both
   seats, and every ``self_play_every``-th game is self-play, both seats the
   apprentice, both labelled (so both sides of a battle feed the data). At
   each of the apprentice's blocks the search (``sims`` rollouts) picks a
   plan; in round 0 the search plays its choice, later every other game lets
   the previous round's network play (DAgger), and the search rolls out with
   that network as its rollout policy (``search:...:prior=``).
2. **Fit** (:func:`fit`): a fresh :class:`agents.plan_net.PlanNet` learns the
   search's choices on every label so far (cross-entropy, Adam), games whose
   number is a multiple of ``holdout_every`` held out; the epoch with the
   lowest held-out loss is kept. Agreement is the share of held-out labels
   whose most likely plan is the search's choice.
3. **Evaluate**: the network alone (``plans:PATH``, no search) plays
   ``eval_games`` paired games against each opponent (the tournament's
   gauntlet schedule and game function).

Everything of a round is written to ``out/iter_KK/`` (``labels.npz``,
``plan_net.pt``, ``metrics.json``); a run started again with the same settings
resumes after the last finished step (given more ``iterations``, it goes on to the new rounds). TensorBoard (``out/tensorboard``):
``exit/agreement``, ``exit/loss``, ``exit/labels``, ``exit/score_mean``,
``exit/score/<opponent>``, ``search/*`` (rollouts per label, the gap between
the best two plans, the share of each plan among the choices, the label
games' score), ``compute/*``, and ``exit_by_cpu_seconds/score_mean`` (the curve
against compute). ``out/curve.png`` draws the scores against rounds and CPU hours.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import StrictInt, field_validator

from battleline.env.rules.config import ConfigModel

DEFAULT_OPPONENTS = ("line_advance", "pincers", "refused_flank", "flank_teeth", "weakened_flank", "abandoned_flank",
                     "shooting_lines", "sacrifice_for_deployment", "protected_bubble", "bait_and_flank",
                     "control_zones", "open_loop")
"""The scripted field agents, the label games' and the evaluation's opponents."""
SETTINGS_FILE = "settings.json"
"""The run's settings, written at its start and compared on a resume."""
EXTENSIBLE = ("iterations", "eval_games")
"""Settings a resumed run may change: more rounds extend it; the evaluation's size changes only later rounds."""


class ExItSettings(ConfigModel):
    """The settings of an expert-iteration run (see the module docstring; counts are games, rollouts, epochs).

    Raises (on validation): pydantic ``ValidationError`` for a count below its least value, an unknown
    opponent, or an empty opponent list (the command line turns it into one line naming the flag).
    """

    scenario: str = "pitched_battle"
    iterations: StrictInt = 3
    games: StrictInt = 48
    sims: StrictInt = 32
    self_play_every: StrictInt = 4
    opponents: list[str] = list(DEFAULT_OPPONENTS)
    eval_games: StrictInt = 10
    epochs: StrictInt = 200
    learning_rate: float = 1e-3
    weight_decay: float = 1e-4
    batch_size: StrictInt = 64
    hidden: list[StrictInt] = [256, 256]
    holdout_every: StrictInt = 8
    target: Literal["choice", "values"] = "choice"
    seed: StrictInt = 0

    @field_validator("iterations", "games", "sims", "eval_games", "epochs", "batch_size")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"must be at least 1, got {v}")
        return v

    @field_validator("self_play_every", "holdout_every")
    @classmethod
    def _every(cls, v: int) -> int:
        if v < 0:
            raise ValueError(f"must be 0 (never) or a positive count, got {v}")
        return v

    @field_validator("opponents")
    @classmethod
    def _opponents(cls, v: list[str]) -> list[str]:
        from battleline.agents.registry import AGENT_NAMES

        if not v:
            raise ValueError("needs at least one opponent")
        for name in v:
            if name not in AGENT_NAMES or name.startswith("siege_"):
                raise ValueError(f"'{name}' is not a field agent; known: {', '.join(DEFAULT_OPPONENTS)}, random")
        return v


# ----------------------------------------------------------------------------- schedule
def label_schedule(settings: ExItSettings, iteration: int) -> list[Any]:
    """The label games of round ``iteration`` (:class:`training.exit_data.LabelGame`), in a fixed order."""
    from battleline.training.exit_data import APPRENTICE, LabelGame

    games = []
    opponents = settings.opponents
    k = 0
    for i in range(settings.games):
        self_play = settings.self_play_every and i % settings.self_play_every == settings.self_play_every - 1
        if self_play:
            blue, red = APPRENTICE, APPRENTICE
        else:
            opponent = opponents[k % len(opponents)]
            blue, red = (APPRENTICE, opponent) if (k // len(opponents)) % 2 == 0 else (opponent, APPRENTICE)
            k += 1
        mode = "search" if iteration == 0 or i % 2 == 0 else "net"
        ss = np.random.SeedSequence([settings.seed, iteration, i])
        seed, search_seed = (int(x & 0x7FFFFFFF) for x in ss.generate_state(2))
        games.append(LabelGame(i, iteration, seed, blue, red, mode, search_seed))
    return games


# ----------------------------------------------------------------------------- fit
def holdout_mask(labels: dict[str, np.ndarray], every: int) -> np.ndarray:
    """bool (N,): the labels of held-out games (game number a multiple of ``every``; none when ``every`` is 0)."""
    if not every:
        return np.zeros(len(labels["choice"]), dtype=bool)
    return labels["game"] % every == 0


def fit(labels: dict[str, np.ndarray], settings: ExItSettings, portfolio: tuple[str, ...], unit_slots: int,
        seed: int) -> tuple[Any, dict[str, float]]:
    """Train a fresh plan network on ``labels`` (see the module docstring, step 2).

    With ``settings.target == "choice"`` the network is a policy head fitted by cross-entropy to the search's
    choices; with ``"values"`` a value head fitted to the search's mean rollout value of every plan it tried,
    a squared error weighted by the plan's rollouts (so each rollout counts once), and it plays the plan of
    highest predicted value.

    Returns:
        The :class:`agents.plan_net.PlanPolicy` of the kept epoch, and its statistics: ``loss`` and
        ``agreement`` on the held-out labels (on the training labels when none are held out),
        ``train_agreement``, ``epoch`` (the kept one, from 1), ``labels``, ``heldout``.
    """
    import torch

    from battleline.agents.plan_net import PlanNet, PlanPolicy, feature_size

    torch.manual_seed(seed)
    x = torch.from_numpy(labels["features"])
    y = torch.from_numpy(labels["choice"].astype(np.int64))
    weights = torch.from_numpy(labels["samples"].astype(np.float32))
    values = torch.from_numpy(np.nan_to_num(labels["values"], nan=0.0))
    held = torch.from_numpy(holdout_mask(labels, settings.holdout_every))
    train = ~held if bool((~held).any()) else torch.ones_like(held)
    check = held if bool(held.any()) else train
    head = "value" if settings.target == "values" else "policy"
    net = PlanNet(feature_size(unit_slots), len(portfolio), settings.hidden, head=head)

    def loss_of(rows: torch.Tensor) -> torch.Tensor:
        out = net(x[rows])
        if head == "policy":
            return torch.nn.functional.cross_entropy(out, y[rows])
        w = weights[rows]
        return (w * (out - values[rows]) ** 2).sum() / w.sum().clamp(min=1.0)

    opt = torch.optim.Adam(net.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay)
    trained = torch.nonzero(train).flatten()
    generator = torch.Generator().manual_seed(seed)
    best: tuple[float, int, dict[str, Any]] = (math.inf, 0, {})
    for epoch in range(1, settings.epochs + 1):
        net.train()
        order = trained[torch.randperm(len(trained), generator=generator)]
        for start in range(0, len(order), settings.batch_size):
            loss = loss_of(order[start:start + settings.batch_size])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            val = float(loss_of(check))
        if val < best[0]:
            best = (val, epoch, {k: v.clone() for k, v in net.state_dict().items()})
    net.load_state_dict(best[2])
    net.eval()
    with torch.no_grad():
        agreement = float((net(x[check]).argmax(1) == y[check]).float().mean())
        train_agreement = float((net(x[train]).argmax(1) == y[train]).float().mean())
    stats = {"loss": best[0], "agreement": agreement, "train_agreement": train_agreement, "epoch": best[1],
             "labels": len(y), "heldout": int(held.sum())}
    return PlanPolicy(net, portfolio, unit_slots), stats


# ----------------------------------------------------------------------------- statistics
def search_statistics(labels: dict[str, np.ndarray], portfolio: tuple[str, ...]) -> dict[str, float]:
    """Statistics of one round's searches: ``rollouts_per_label``, ``value_gap`` (mean difference between the
    best and second-best mean rollout value), ``choice_entropy`` (nats) and ``share/<plan>``."""
    n = len(labels["choice"])
    if n == 0:
        return {}
    values = np.where(np.isnan(labels["values"]), -np.inf, labels["values"])
    top2 = -np.sort(-values, axis=1)[:, :2]
    gap = top2[:, 0] - top2[:, 1]
    share = np.bincount(labels["choice"], minlength=len(portfolio)) / n
    nz = share[share > 0]
    out = {"rollouts_per_label": float(labels["samples"].sum(1).mean()),
           "value_gap": float(gap[np.isfinite(gap)].mean()) if np.isfinite(gap).any() else 0.0,
           "choice_entropy": float(-(nz * np.log(nz)).sum())}
    out.update({f"share/{p}": float(s) for p, s in zip(portfolio, share, strict=True)})
    return out


def apprentice_score(rows: list[dict[str, Any]]) -> float | None:
    """The apprentice's score over label games against scripted opponents (self-play games left out); None
    when every game was self-play."""
    from battleline.training.exit_data import APPRENTICE

    points = []
    for r in rows:
        if r["blue"] == APPRENTICE and r["red"] == APPRENTICE:
            continue
        side = "blue" if r["blue"] == APPRENTICE else "red"
        points.append(0.5 if r["winner"] == "draw" else float(r["winner"] == side))
    return float(np.mean(points)) if points else None


def evaluate(net_path: Path, settings: ExItSettings, iteration: int, workers: int) -> tuple[dict[str, Any], float]:
    """The network alone against each opponent, ``eval_games`` paired games each (the tournament's gauntlet).

    Returns ({opponent: the pair record of :func:`training.tournament.pair_table`, from the network's side},
    the games' summed seconds).
    """
    from battleline.training.backends import run_games
    from battleline.training.tournament import pair_table, play_game, schedule

    entrant = f"plans:{net_path}"
    specs = schedule([entrant, *settings.opponents], settings.eval_games, 10_000 + settings.seed * 100 + iteration,
                     pairing="gauntlet")
    rows = list(run_games(play_game, specs, (settings.scenario, 20_000, False), workers=workers,
                          description=f"round {iteration}: evaluation"))
    failed = [r for r in rows if "error" in r]
    if failed:
        raise RuntimeError(f"evaluation game {failed[0]['index']} failed: {failed[0]['error']}")
    pairs, _ = pair_table(rows, [entrant, *settings.opponents])
    return ({p["opponent"]: p for p in pairs if p["agent"] == entrant},
            float(sum(r["seconds"] for r in rows)))


# ----------------------------------------------------------------------------- the run
class ExItRunError(ValueError):
    """An output folder that cannot be resumed: a run with other settings or more finished rounds, or a damaged
    file; one line naming the file and the fault."""


def _read_json(path: Path, kind: type, what: str) -> Any:
    """The JSON value in ``path``, of type ``kind`` (dict or list).

    Raises:
        ExItRunError: the file cannot be read, is not JSON, or holds another type (one line naming it).
    """
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ExItRunError(f"{path}: not {what} (not JSON: {exc.msg}, line {exc.lineno})") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = "is a directory" if isinstance(exc, IsADirectoryError) else str(getattr(exc, "strerror", "") or exc)
        raise ExItRunError(f"{path}: cannot read {what} ({reason.lower()})") from None
    if not isinstance(data, kind):
        raise ExItRunError(f"{path}: not {what} (a JSON {'object' if kind is dict else 'list'} expected)")
    return data


def _check_settings(out: Path, settings: ExItSettings) -> None:
    """When ``out/settings.json`` exists, check it matches ``settings`` but for :data:`EXTENSIBLE` (a resume).

    Raises:
        ExItRunError: the file is not a run's settings, or records another value of a setting.
    """
    path = out / SETTINGS_FILE
    if not (path.exists() or path.is_symlink()):
        return
    theirs = _read_json(path, dict, "a run's settings")
    mine = settings.model_dump()
    for key in mine:
        recorded = theirs.get(key, ExItSettings.model_fields[key].default)  # a setting added since: its default
        if key not in EXTENSIBLE and recorded != mine[key]:
            raise ExItRunError(f"{path}: the run there has {key} = {recorded!r}, not {mine[key]!r}; "
                               "give the same settings to resume it (more --iterations extend it), or another --out")


def _write_settings(out: Path, settings: ExItSettings) -> None:
    """Write ``out/settings.json`` (on a resume, the new values of :data:`EXTENSIBLE`)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / SETTINGS_FILE).write_text(json.dumps(settings.model_dump(), indent=2) + "\n")


def _read_labels(path: Path, unit_slots: int, plans: int) -> dict[str, np.ndarray]:
    """A round's labels (:func:`training.exit_data.load_labels`), checked against the run's feature and plan counts.

    Raises:
        ExItRunError: the file is not a label file of this run (one line naming it).
    """
    from battleline.agents.plan_net import feature_size
    from battleline.training.exit_data import load_labels

    try:
        labels = load_labels(path)
    except ValueError as exc:
        raise ExItRunError(str(exc)) from None
    want = {"features": feature_size(unit_slots), "values": plans, "samples": plans}
    for key, width in want.items():
        if labels[key].ndim != 2 or labels[key].shape[1] != width:
            raise ExItRunError(f"{path}: not a label file of this run ({key} of shape {labels[key].shape}, "
                               f"not (N, {width}))")
    return labels


def _read_games(path: Path) -> list[dict[str, Any]]:
    """A round's label games (``games.json``).

    Raises:
        ExItRunError: the file is not a list of label games (one line naming it).
    """
    games = _read_json(path, list, "a round's label games")
    needed = ("blue", "red", "winner", "cpu_seconds", "rollouts")
    for g in games:
        if not isinstance(g, dict) or any(k not in g for k in needed):
            raise ExItRunError(f"{path}: not a round's label games (each needs {', '.join(needed)})")
    return games


def _read_round(folder: Path, unit_slots: int, portfolio: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A finished round's metrics and labels, its network checked to read back for this run.

    Raises:
        ExItRunError: a file of the round is missing or damaged (one line naming it).
    """
    from battleline.agents.plan_net import PlanNetError, load_plan_policy

    path = folder / "metrics.json"
    metrics = _read_json(path, dict, "a round's metrics")
    try:
        int(metrics["iteration"]), float(metrics["score_mean"])
        float(metrics["compute"]["cpu_seconds"]), int(metrics["compute"]["rollouts"])
        [float(s["score"]) for s in metrics["scores"].values()]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ExItRunError(f"{path}: not a round's metrics ({type(exc).__name__}: {exc})") from None
    labels = _read_labels(folder / "labels.npz", unit_slots, len(portfolio))
    try:
        policy = load_plan_policy(folder / "plan_net.pt")
    except PlanNetError as exc:
        raise ExItRunError(str(exc)) from None
    if policy.portfolio != portfolio or policy.unit_slots != unit_slots:
        raise ExItRunError(f"{folder / 'plan_net.pt'}: not this run's plan network (another portfolio or unit slots)")
    return metrics, labels


def run(settings: ExItSettings, out: Path, workers: int = 1, log: Any = print) -> list[dict[str, Any]]:
    """Run (or resume) expert iteration into ``out``; returns each round's metrics (``metrics.json``).

    Every file of ``out`` a resume reads (the settings, the finished rounds, the labels of a round begun) is
    checked before anything is written, so a damaged run folder is left as it was.

    Raises:
        ExItRunError: ``out`` holds a run with other settings, more finished rounds than ``settings.iterations``,
            or a damaged file (one line naming it).
        RuntimeError: a label or evaluation game failed (its message).
    """
    from torch.utils.tensorboard import SummaryWriter

    from battleline.agents.search import DEFAULT_PORTFOLIO
    from battleline.env.battle_env import resolve_unit_slots
    from battleline.training.backends import run_games
    from battleline.training.exit_data import concat_labels, label_game, save_labels

    _check_settings(out, settings)
    unit_slots = resolve_unit_slots(None, settings.scenario)
    portfolio = DEFAULT_PORTFOLIO
    history: list[dict[str, Any]] = []
    parts: list[dict[str, np.ndarray]] = []
    prior: Path | None = None
    cpu_total, rollouts_total = 0.0, 0
    for it in range(settings.iterations):  # the finished rounds, read before anything is written
        folder = out / f"iter_{it:02d}"
        if folder.exists() and not folder.is_dir():
            raise ExItRunError(f"{folder}: not a round's folder (a file of that name is in the way)")
        if not (folder / "metrics.json").exists():
            break
        metrics, labels = _read_round(folder, unit_slots, portfolio)
        parts.append(labels)
        prior = folder / "plan_net.pt"
        cpu_total, rollouts_total = metrics["compute"]["cpu_seconds"], metrics["compute"]["rollouts"]
        history.append(metrics)
    finished = settings.iterations
    while (out / f"iter_{finished:02d}" / "metrics.json").exists():
        finished += 1
    if finished > settings.iterations:  # resuming would put an earlier round's network in out/plan_net.pt
        raise ExItRunError(f"--iterations: the run in {out} has finished {finished} rounds, more than "
                           f"{settings.iterations}; give --iterations {finished} or more to resume it")
    begun: tuple[dict[str, np.ndarray], list[dict[str, Any]]] | None = None
    folder = out / f"iter_{len(history):02d}"
    if len(history) < settings.iterations and (folder / "labels.npz").exists() and (folder / "games.json").exists():
        begun = _read_labels(folder / "labels.npz", unit_slots, len(portfolio)), _read_games(folder / "games.json")
    _write_settings(out, settings)
    for metrics in history:
        log(f"round {metrics['iteration']}: done before (score {metrics['score_mean']:.3f}), resumed after it")
    writer = SummaryWriter(log_dir=str(out / "tensorboard"))
    try:
        for it in range(len(history), settings.iterations):
            folder = out / f"iter_{it:02d}"
            folder.mkdir(exist_ok=True)
            t0 = time.perf_counter()
            labels_path, games_path, metrics_path = folder / "labels.npz", folder / "games.json", folder / "metrics.json"
            if begun is not None:
                (labels, games), begun = begun, None
            else:
                specs = label_schedule(settings, it)
                rows = list(run_games(label_game, specs, (settings.scenario, settings.sims,
                                                          str(prior) if prior else None, unit_slots),
                                      workers=workers, description=f"round {it}: label games"))
                labels = concat_labels([r.pop("labels") for r in rows])
                games = rows
                save_labels(labels_path, labels)
                games_path.write_text(json.dumps(games, indent=1) + "\n")
            parts.append(labels)
            dataset = concat_labels(parts)
            policy, fit_stats = fit(dataset, settings, portfolio, unit_slots, settings.seed * 1000 + it)
            net_path = folder / "plan_net.pt"
            policy.save(net_path, {"iteration": it, "labels": int(fit_stats["labels"])})
            scores, eval_seconds = evaluate(net_path, settings, it, workers)
            cpu_total += sum(g["cpu_seconds"] for g in games) + eval_seconds
            rollouts_total += sum(g["rollouts"] for g in games)
            metrics = {"iteration": it, "fit": fit_stats, "search": search_statistics(labels, portfolio),
                       "label_games": len(games), "apprentice_score": apprentice_score(games),
                       "scores": scores, "score_mean": float(np.mean([s["score"] for s in scores.values()])),
                       "compute": {"cpu_seconds": cpu_total, "rollouts": rollouts_total,
                                   "wall_seconds": time.perf_counter() - t0}}
            metrics_path.write_text(json.dumps(metrics, indent=2) + "\n")
            _chart(writer, metrics)
            history.append(metrics)
            prior = net_path
            worst = min(scores, key=lambda o: scores[o]["score"])
            log(f"round {it}: {fit_stats['labels']} labels, agreement {fit_stats['agreement']:.3f}, network alone "
                f"{metrics['score_mean']:.3f} mean score (lowest {worst} {scores[worst]['score']:.3f})")
        if prior is not None:
            (out / "plan_net.pt").write_bytes(Path(prior).read_bytes())
        draw_curve(history, out / "curve.png")
    finally:
        writer.close()
    return history


def _chart(writer: Any, m: dict[str, Any]) -> None:
    """One round's TensorBoard scalars (module docstring)."""
    it = m["iteration"]
    for key in ("agreement", "loss", "train_agreement", "labels"):
        writer.add_scalar(f"exit/{key}", m["fit"][key], it)
    writer.add_scalar("exit/score_mean", m["score_mean"], it)
    for opponent, record in m["scores"].items():
        writer.add_scalar(f"exit/score/{opponent}", record["score"], it)
    for key, value in m["search"].items():
        writer.add_scalar(f"search/{key}", value, it)
    if m["apprentice_score"] is not None:  # None when every label game was self-play
        writer.add_scalar("search/label_games_score", m["apprentice_score"], it)
    writer.add_scalar("compute/cpu_seconds", m["compute"]["cpu_seconds"], it)
    writer.add_scalar("compute/rollouts", m["compute"]["rollouts"], it)
    writer.add_scalar("exit_by_cpu_seconds/score_mean", m["score_mean"], int(round(m["compute"]["cpu_seconds"])))
    writer.flush()


def draw_curve(history: list[dict[str, Any]], path: Path) -> None:
    """Scores of the network alone against rounds (each opponent, and the mean) and against CPU hours."""
    if not history:
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rounds = [m["iteration"] for m in history]
    hours = [m["compute"]["cpu_seconds"] / 3600 for m in history]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = plt.get_cmap("tab20").colors
    for k, opponent in enumerate(history[-1]["scores"]):
        left.plot(rounds, [m["scores"][opponent]["score"] for m in history], lw=0.9, alpha=0.8, label=opponent,
                  color=colours[k % len(colours)])
    for ax, xs, xlabel in ((left, rounds, "round"), (right, hours, "CPU hours (label games and evaluation)")):
        ax.plot(xs, [m["score_mean"] for m in history], "k-o", lw=2.2, label="mean")
        ax.axhline(0.5, color="grey", ls="--", lw=0.8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("score of the plan network alone")
        ax.set_ylim(0, 1)
    left.set_xticks(rounds)
    left.legend(fontsize=6, ncol=2, loc="lower right")
    fig.suptitle("Expert iteration: the distilled plan network without search")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


__all__ = ["DEFAULT_OPPONENTS", "ExItRunError", "ExItSettings", "apprentice_score", "draw_curve", "evaluate", "fit",
           "holdout_mask", "label_schedule", "run", "search_statistics"]
