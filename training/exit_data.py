"""Expert iteration, the data: label games played with the search, and the labelled dataset.

A label game (:func:`label_game`) is one pitched battle in which one seat (or,
in a self-play game, both seats) is the *apprentice*. At the first decision
of each of the apprentice's blocks (its deployment, then each of its player
turns; :mod:`agents.portfolio`) the search (:class:`agents.search.SearchAgent`,
on a copy of the battle with fresh dice) chooses a plan, and the position is
stored with the search's answer: that is one label. Who then plays the block
depends on the game's mode:

* ``search``: the search's own choice (the states the search's own games reach);
* ``net``: the plan network's choice (the states the apprentice's own games
  reach: DAgger, the search labelling the network's mistakes).

A label holds the features the network reads
(:class:`agents.plan_net.PlanFeatures`), the index of the search's choice in
the portfolio, and the search's statistics over the whole portfolio (mean
rollout value and rollouts of each plan, NaN and 0 for a plan not tried).
"""

from __future__ import annotations

import time
import zipfile
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from battleline.agents.plan_net import PlanFeatures, PlanPolicy, load_plan_policy
from battleline.agents.search import SearchAgent, SearchRecord, SearchSpec

MODES = ("search", "net")
"""Who plays an apprentice's block after the search has labelled it (module docstring)."""
APPRENTICE = "apprentice"
"""The seat name of the apprentice in a :class:`LabelGame`."""
LABEL_KEYS = ("features", "choice", "values", "samples", "side", "turn", "game", "iteration", "mode")
"""The arrays of a dataset (:func:`save_labels`), each with one row per label."""


@dataclass(frozen=True)
class LabelGame:
    """One label game.

    Attributes:
        index: the game's number within its iteration (orders the results).
        iteration: the expert-iteration round.
        seed: the battle's dice seed.
        blue, red: :data:`APPRENTICE` or the registry name of a scripted opponent.
        mode: one of :data:`MODES`.
        search_seed: seeds the search agents (the blue apprentice's; red's is ``search_seed + 1``).
    """

    index: int
    iteration: int
    seed: int
    blue: str
    red: str
    mode: str
    search_seed: int


class LabellingSearch(SearchAgent):
    """A search agent that stores a label at each search and, in ``net`` mode, plays the network's plan.

    Args:
        seed, spec: as :class:`agents.search.SearchAgent`.
        features: the network's feature maker.
        follow: in ``net`` mode the network whose plan is played; None plays the search's choice.

    Attributes:
        labels: (features float32 (F,), record) per search of the current battle.
    """

    def __init__(self, seed: int, spec: SearchSpec, features: PlanFeatures, follow: PlanPolicy | None) -> None:
        super().__init__(seed=seed, spec=spec)
        self.features = features
        self.follow = follow
        self.labels: list[tuple[np.ndarray, SearchRecord]] = []

    def _follow(self, battle: Any, record: SearchRecord) -> str:
        self.labels.append((self.features(battle, self.side), record))
        return record.choice if self.follow is None else self.follow.choose(battle, self.side)


def search_spec(sims: int, prior: str | Path | None) -> SearchSpec:
    """The labelling search: ``sims`` rollouts per search over the default portfolio, with the plan
    network at ``prior`` as its rollout policy when given."""
    return SearchSpec(sims=sims, prior=str(prior) if prior else "")


def label_game(game: LabelGame, scenario: str, sims: int, prior: str | None, unit_slots: int) -> dict[str, Any]:
    """Play one label game (in a worker) and return its labels and result.

    Args:
        game: the game.
        scenario: the scenario name.
        sims: rollouts per search.
        prior: the current plan network's path (the search's rollout policy, and the player in ``net``
            mode); None before the first network.
        unit_slots: unit slots per side of the features.

    Returns:
        A dict: the game's fields, ``winner``, ``vp`` [blue, red], ``rollouts`` (spent by its searches),
        ``cpu_seconds`` (this process's CPU time for the game), and ``labels``: a dict of the
        :data:`LABEL_KEYS` arrays for its labels (one row per search).
    """
    from battleline.training.play import play_battle

    t0 = time.process_time()
    spec = search_spec(sims, prior)
    follow = load_plan_policy(prior) if (prior and game.mode == "net") else None
    features = PlanFeatures(unit_slots)
    seats: list[Any] = []
    for side, who in enumerate((game.blue, game.red)):
        seats.append(LabellingSearch(game.search_seed + side, spec, features, follow) if who == APPRENTICE else who)
    battle = play_battle(scenario, seats[0], seats[1], game.seed)
    portfolio = list(spec.portfolio)
    rows: dict[str, list[Any]] = {k: [] for k in LABEL_KEYS}
    rollouts = 0
    for side, agent in enumerate(seats):
        if not isinstance(agent, LabellingSearch):
            continue
        for feats, record in agent.labels:
            values = np.full(len(portfolio), np.nan, dtype=np.float32)
            samples = np.zeros(len(portfolio), dtype=np.int32)
            for name, v, n in zip(record.candidates, record.values, record.samples, strict=True):
                values[portfolio.index(name)], samples[portfolio.index(name)] = v, n
            for key, value in zip(LABEL_KEYS, (feats, portfolio.index(record.choice), values, samples, side,
                                               record.block[0], game.index, game.iteration,
                                               MODES.index(game.mode)), strict=True):
                rows[key].append(value)
            rollouts += record.sims
    res = battle.result
    return {**asdict(game), "winner": res["winner"], "vp": [int(res["vp"]["blue"]), int(res["vp"]["red"])],
            "rollouts": rollouts, "cpu_seconds": time.process_time() - t0, "labels": stack_rows(rows, unit_slots)}


def stack_rows(rows: dict[str, list[Any]], unit_slots: int) -> dict[str, np.ndarray]:
    """The :data:`LABEL_KEYS` lists as arrays (features float32 (N, F), values float32 (N, K), samples int32
    (N, K), the rest int32 (N,)); empty arrays of the right widths when there are no rows."""
    from battleline.agents.plan_net import feature_size
    from battleline.agents.search import DEFAULT_PORTFOLIO

    k = len(DEFAULT_PORTFOLIO)
    if not rows["choice"]:
        return {"features": np.zeros((0, feature_size(unit_slots)), np.float32), "values": np.zeros((0, k), np.float32),
                "samples": np.zeros((0, k), np.int32),
                **{key: np.zeros(0, np.int32) for key in LABEL_KEYS if key not in ("features", "values", "samples")}}
    out = {"features": np.stack(rows["features"]).astype(np.float32), "values": np.stack(rows["values"]).astype(np.float32),
           "samples": np.stack(rows["samples"]).astype(np.int32)}
    for key in LABEL_KEYS:
        if key not in out:
            out[key] = np.asarray(rows[key], dtype=np.int32)
    return out


def concat_labels(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The datasets ``parts`` (at least one) joined along axis 0."""
    return {key: np.concatenate([p[key] for p in parts], axis=0) for key in LABEL_KEYS}


def save_labels(path: Path, labels: dict[str, np.ndarray]) -> None:
    """Write a dataset as a compressed ``.npz`` (written to a temporary file, then moved into place)."""
    tmp = path.with_name(path.name + ".part.npz")
    np.savez_compressed(tmp, **labels)
    tmp.replace(path)


def load_labels(path: Path) -> dict[str, np.ndarray]:
    """Read a dataset written by :func:`save_labels`.

    Raises:
        ValueError: the file cannot be read as an ``.npz``, a key of :data:`LABEL_KEYS` is missing, or the arrays
            do not have one row per label each (one line naming the file).
    """
    try:
        with np.load(path) as data:
            missing = [k for k in LABEL_KEYS if k not in data.files]
            if missing:
                raise ValueError(f"{path}: not a label file (missing {', '.join(missing)})")
            labels = {k: data[k] for k in LABEL_KEYS}
    except (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error, AttributeError) as exc:
        if str(exc).startswith(f"{path}: "):
            raise
        reason = "numpy cannot read it as an .npz of arrays" if "pickle" in str(exc) else (
            f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}" if str(exc) else type(exc).__name__)
        raise ValueError(f"{path}: not a label file ({reason})") from None
    rows = {len(a) if a.ndim else -1 for a in labels.values()}
    if len(rows) != 1:
        raise ValueError(f"{path}: not a label file (its arrays do not have one row per label each)")
    return labels


__all__ = ["APPRENTICE", "LABEL_KEYS", "MODES", "LabelGame", "LabellingSearch", "concat_labels", "label_game",
           "load_labels", "save_labels", "search_spec", "stack_rows"]
