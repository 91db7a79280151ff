"""Seeded dice (CORE.DICE.*): one numpy Generator per battle, every roll logged.

Every roll goes through :class:`Dice`, which draws from a single
``numpy.random.Generator`` (PCG64) in the order the procedure asks
(CORE.DICE.RNG) and reports each roll to a callback as an event
``(rule_id, dice, result)``. Tests can replace the generator by a script of
faces with :class:`ScriptedDice`.

The artillery and scatter dice are read off D6 faces, so that a script of D6
faces pins them too:

* artillery die (CORE.DICE.ARTILLERY): one D6, face k = 1..5 shows 2k
  (2, 4, 6, 8, 10) and face 6 shows MISFIRE;
* scatter die (CORE.DICE.SCATTER): one D6, faces 1–4 are ARROW and 5–6 HIT,
  then a direction θ uniform on [0°, 360°) (degrees counter-clockwise from
  +x, like a facing). :class:`ScriptedDice` takes θ as the next scripted
  value, in degrees.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

RollLog = Callable[[str, list[int], Any], None]
DieUse = Callable[[str, str], None]

MISFIRE = "MISFIRE"
"""The artillery die's misfire face (CORE.DICE.ARTILLERY)."""
ARTILLERY_FACES: tuple[int | str, ...] = (2, 4, 6, 8, 10, MISFIRE)
"""The artillery die's six faces, indexed by the D6 face − 1 (CORE.DICE.ARTILLERY)."""
ARROW, HIT = "ARROW", "HIT"
"""The scatter die's two kinds of face (CORE.DICE.SCATTER)."""


class Dice:
    """D6-based dice drawn from one seeded generator.

    Args:
        seed: the battle seed (int) or an existing bit-generator state dict.
        log: called as ``log(rule_id, faces, result)`` after every roll.
    """

    def __init__(self, seed: int | dict[str, Any] = 0, log: RollLog | None = None) -> None:
        if isinstance(seed, dict):
            self._rng = np.random.Generator(np.random.PCG64())
            self._rng.bit_generator.state = seed
        else:
            self._rng = np.random.Generator(np.random.PCG64(seed))
        self.log: RollLog = log or (lambda rule, faces, result: None)
        self.on_die: DieUse | None = None
        """Called as ``on_die(die_rule, rule)`` on every roll with the die's own rule ID
        (CORE.DICE.D6, D3, HIGHEST_2D6, SWIFT_3D6, ARTILLERY, SCATTER or D20)."""

    def _die(self, die_rule: str, rule: str) -> None:
        if self.on_die is not None:
            self.on_die(die_rule, rule)

    # ----- state ----------------------------------------------------------
    @property
    def state(self) -> dict[str, Any]:
        """The bit-generator state (JSON-serialisable dict)."""
        return self._rng.bit_generator.state

    def _faces(self, n: int) -> list[int]:
        return [int(v) for v in self._rng.integers(1, 7, size=n)]

    def uniform(self, low: float, high: float) -> float:
        """A real number uniform on [low, high) (for directions, CORE.DICE.SCATTER)."""
        return float(self._rng.uniform(low, high))

    # ----- rolls -------------------------------------------------------------
    def d6(self, rule: str, n: int = 1) -> list[int]:
        """Roll ``n`` D6 (CORE.DICE.D6) for ``rule``; returns the faces, shape (n,)."""
        faces = self._faces(n)
        self._die("CORE.DICE.D6", rule)
        self.log(rule, faces, faces)
        return faces

    def sum_d6(self, rule: str, n: int) -> tuple[int, list[int]]:
        """nD6 summed (CORE.DICE.D6): returns (total, faces)."""
        faces = self._faces(n)
        total = sum(faces)
        self._die("CORE.DICE.D6", rule)
        self.log(rule, faces, total)
        return total, faces

    def d3(self, rule: str) -> int:
        """D3 = ceil(D6 / 2) (CORE.DICE.D3)."""
        face = self._faces(1)
        result = (face[0] + 1) // 2
        self._die("CORE.DICE.D3", rule)
        self.log(rule, face, result)
        return result

    def highest_2d6(self, rule: str) -> tuple[int, list[int]]:
        """Roll 2D6 and keep the larger face (CORE.DICE.HIGHEST_2D6)."""
        faces = self._faces(2)
        result = max(faces)
        self._die("CORE.DICE.HIGHEST_2D6", rule)
        self.log(rule, faces, result)
        return result, faces

    def d20(self, rule: str) -> int:
        """A D20, uniform on 1..20 (CORE.DICE.D20; Magic Resistance only)."""
        face = self._d20_face()
        self._die("CORE.DICE.D20", rule)
        self.log(rule, [face], face)
        return face

    def _d20_face(self) -> int:
        return int(self._rng.integers(1, 21))

    def artillery(self, rule: str) -> int | str:
        """The artillery die (CORE.DICE.ARTILLERY): 2, 4, 6, 8, 10 or :data:`MISFIRE` (one D6: 1..5 → 2k, 6 → MISFIRE)."""
        face = self._faces(1)
        result = ARTILLERY_FACES[face[0] - 1]
        self._die("CORE.DICE.ARTILLERY", rule)
        self.log(rule, face, result)
        return result

    def scatter(self, rule: str) -> tuple[str, float]:
        """The scatter die (CORE.DICE.SCATTER): (:data:`ARROW` or :data:`HIT`, direction θ in degrees).

        One D6 gives the kind (1–4 ARROW, 5–6 HIT); θ is uniform on [0°, 360°):
        the arrow, or on a HIT the small arrow.
        """
        face = self._faces(1)
        kind = ARROW if face[0] <= 4 else HIT
        theta = self._direction()
        self._die("CORE.DICE.SCATTER", rule)
        self.log(rule, face, {"face": kind, "direction": theta})
        return kind, theta

    def _direction(self) -> float:
        return float(self._rng.uniform(0.0, 360.0)) % 360.0

    def flee_roll(self, rule: str, swiftstride: bool) -> tuple[int, list[int]]:
        """2D6, or 3D6 dropping the lowest for Swiftstride (CORE.DICE.SWIFT_3D6)."""
        faces = self._faces(3 if swiftstride else 2)
        result = sum(sorted(faces)[-2:])
        self._die("CORE.DICE.SWIFT_3D6" if swiftstride else "CORE.DICE.D6", rule)
        self.log(rule, faces, result)
        return result, faces


class ScriptedDice(Dice):
    """Dice whose faces come from a script, for tests that pin exact values.

    Args:
        faces: the D6 faces to return, in order (a scatter direction takes the
            next value as degrees; see the module docstring).
        then_seed: once the script runs out, roll from a generator with this
            seed; None (the default) raises ``IndexError`` instead.
    """

    def __init__(self, faces: Iterable[int], log: RollLog | None = None, then_seed: int | None = None) -> None:
        super().__init__(0 if then_seed is None else then_seed, log)
        self._script = list(faces)
        self._then = then_seed

    def _faces(self, n: int) -> list[int]:
        if len(self._script) < n:
            if self._then is not None and not self._script:
                return super()._faces(n)
            raise IndexError(f"scripted dice exhausted: needed {n}, {len(self._script)} left")
        out, self._script = self._script[:n], self._script[n:]
        return out

    def uniform(self, low: float, high: float) -> float:
        """The midpoint (low + high) / 2, without using the script (deterministic for tests)."""
        return (low + high) / 2.0

    def _d20_face(self) -> int:
        """The next scripted face (1..20) as a D20, or a seeded D20 once the script is done."""
        if not self._script:
            if self._then is not None:
                return super()._d20_face()
            raise IndexError("scripted dice exhausted: needed a D20")
        face, self._script = self._script[0], self._script[1:]
        return face

    def _direction(self) -> float:
        """The next scripted value as a scatter direction in degrees, or a seeded one once the script is done."""
        if not self._script:
            if self._then is not None:
                return super()._direction()
            raise IndexError("scripted dice exhausted: needed a scatter direction")
        theta, self._script = self._script[0], self._script[1:]
        return float(theta) % 360.0

    def push(self, *faces: int) -> None:
        """Append faces to the script."""
        self._script.extend(faces)
