"""Tactic fingerprints: how often a side used each tactic over a set of battles.

``fingerprint(battles, side)`` runs :func:`tactics.detectors.detect` on each battle and
returns, for every detectable tactic of the catalogue, the share of battles in which its
detector fired. Training logs it to TensorBoard (:func:`as_scalars`) and tournaments
report it per agent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from battleline.tactics.catalogue import detectable_ids
from battleline.tactics.detectors import detect
from battleline.tactics.detectors_common import Detection


def _sides(side: int | str | Sequence[int | str]) -> Iterable[int | str]:
    if isinstance(side, (int, str)):
        while True:
            yield side
    yield from side


def fingerprint(battles: Iterable[Any], side: int | str | Sequence[int | str]) -> dict[str, float]:
    """Share of ``battles`` in which each tactic's detector fired for ``side``.

    Args:
        battles: finished battles, replay paths, replay JSON texts or dicts (anything
            :func:`tactics.detectors.detect` takes).
        side: the side to look at in every battle (0 / "blue", 1 / "red"), or one side per
            battle (when an agent changes seats).

    Returns:
        tactic id -> rate in [0, 1], for every detectable tactic in catalogue order (all 0.0
        when there are no battles).

    Raises:
        ValueError: fewer sides than battles were given, or a side is not 0, 1, blue or red.
    """
    sides = iter(_sides(side))

    def detections() -> Iterable[dict[str, Detection]]:
        for n, battle in enumerate(battles):
            try:
                s = next(sides)
            except StopIteration:
                raise ValueError(f"fewer sides than battles: no side for battle {n + 1}") from None
            yield detect(battle, s)

    return rates(detections())


def used_ids(found: dict[str, Detection]) -> list[str]:
    """The tactic ids of one :func:`detect` result whose detector fired, in its order."""
    return [tid for tid, d in found.items() if d.used]


def shares(used_per_battle: Iterable[Iterable[str]]) -> dict[str, float]:
    """Rates from the tactic ids used in each battle (one :func:`used_ids` list per battle).

    Returns:
        tactic id -> share of the battles whose list holds it, every detectable tactic in
        catalogue order first (all 0.0 when there are no battles), then any other id seen.
    """
    counts = dict.fromkeys(detectable_ids(), 0)
    n = 0
    for used in used_per_battle:
        for tid in set(used):
            counts[tid] = counts.get(tid, 0) + 1
        n += 1
    return {tid: (c / n if n else 0.0) for tid, c in counts.items()}


def rates(detections: Iterable[dict[str, Detection]]) -> dict[str, float]:
    """The same rates from detections already computed (one :func:`detect` result per battle)."""
    return shares(used_ids(found) for found in detections)


def as_scalars(fp: dict[str, float], prefix: str = "tactics/") -> dict[str, float]:
    """TensorBoard scalar tags for a fingerprint: ``{prefix}{tactic id}`` -> rate."""
    return {f"{prefix}{tid}": float(rate) for tid, rate in fp.items()}


__all__ = ["as_scalars", "fingerprint", "rates", "shares", "used_ids"]
