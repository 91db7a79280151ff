"""Decisions: what the engine waits for (:class:`Pending`) and the answers (:class:`Action`).

Action kinds and their fields:

============== ======== ======== ==============================================
kind           unit     target   option
============== ======== ======== ==============================================
deploy         uid      —        deployment slot index as a string ("0".."32")
charge         uid      enemy    — (CORE.CHARGE.DECLARE)
react          uid      charger  "hold" | "stand_and_shoot" | "flee" (CORE.REACT.*)
move           uid      —        a MOVE_OPTIONS name (CORE.MOVE.*)
shoot          uid      enemy    — (CORE.SHOOT.*); a machine's fire mode and aim
                                 (CORE.WM.*); "breath" for a breath weapon's
                                 teardrop (CORE.SR.BREATH_WEAPON)
pursue         uid      broken   "pursue" | "hold" (CORE.CC.PURSUE_CHOICE)
cast           uid      target   "<SPELL_ID>:<dice>" (1..L+1 power dice) or
                                 "<SPELL_ID>:bound" (CORE.MAGIC.CAST, BOUND)
dispel         —        —        "<n>" dispel dice, or "scroll" (CORE.MAGIC.DISPEL, SCROLL)
swap           wizard   friend   — a Shadow wizard swaps places (CORE.MAGIC.ATTR.SHADOW)
order          uid      —        — the phasing player resolves next the waiting
                                 combat of its unit uid (CORE.CONV.ORDER, CC.ROUNDS)
end_phase      —        —        — ends the current sub-phase (always legal)
============== ======== ======== ==============================================
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

ACTION_KINDS = ("deploy", "charge", "react", "move", "shoot", "pursue", "cast", "dispel", "swap", "order", "end_phase")

REACTIONS = ("hold", "stand_and_shoot", "flee")
PURSUIT_CHOICES = ("pursue", "hold")

MOVE_OPTIONS = (
    "advance",  # forward up to M (CORE.MOVE.NORMAL)
    "advance_half",  # forward up to M/2
    "march",  # forward up to 2M (CORE.MOVE.MARCH, CORE.MOVE.MARCH_BLOCK)
    "wheel_left",  # wheel 45° left, then forward with what is left of M (CORE.MOVE.WHEEL)
    "wheel_right",
    "wheel_left_short",  # wheel 22.5° left, then forward
    "wheel_right_short",
    "march_wheel_left",  # wheel 45° left within a march, then forward
    "march_wheel_right",
    "turn_left",  # 90° turn about the centre for M/4, then forward (CORE.MOVE.TURN)
    "turn_right",
    "about_face",  # 180° turn for M/4
    "backward",  # backward at double cost: up to M/2 (CORE.MOVE.NORMAL)
    "reform_wide",  # reform to more files (CORE.MOVE.REFORM)
    "reform_deep",  # reform to fewer files
    "reform_face",  # reform to face the nearest enemy
)


@dataclass(frozen=True, slots=True)
class Action:
    """One answer to a decision.

    Attributes:
        kind: one of ACTION_KINDS.
        unit: the acting unit's uid, or None for ``end_phase``.
        target: the target unit's uid, if any.
        option: the option string (see the module table), if any.
    """

    kind: str
    unit: int | None = None
    target: int | None = None
    option: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields ``kind``, ``unit``, ``target``, ``option`` as a JSON-ready dict; read back by :meth:`from_dict`."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Action:
        """The action saved by :meth:`to_dict`.

        Raises:
            KeyError: no ``kind``.
            ValueError: a field of the wrong type (:meth:`field_error`).
        """
        action = cls(kind=d["kind"], unit=d.get("unit"), target=d.get("target"), option=d.get("option"))
        problem = action.field_error()
        if problem:
            raise ValueError(problem)
        return action

    def field_error(self) -> str | None:
        """What is wrong with the fields' types ("unit: expected an integer or null, got 2.0"), or None.

        ``kind`` and ``option`` are strings (``option`` may be None); ``unit`` and ``target`` are
        integers or None (not floats or booleans, which compare equal to integers).
        """
        if not isinstance(self.kind, str):
            return f"kind: expected a string, got {self.kind!r}"
        for name in ("unit", "target"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                return f"{name}: expected an integer or null, got {value!r}"
        if self.option is not None and not isinstance(self.option, str):
            return f"option: expected a string or null, got {self.option!r}"
        return None

    def __str__(self) -> str:
        parts = [str(self.kind)]
        if self.unit is not None:
            parts.append(f"unit={self.unit}")
        if self.target is not None:
            parts.append(f"target={self.target}")
        if self.option is not None:
            parts.append(f"option={self.option}")
        return " ".join(parts)


END_PHASE = Action("end_phase")


@dataclass(frozen=True, slots=True)
class Pending:
    """The decision the engine waits for.

    Attributes:
        player: the deciding side (0 blue, 1 red), or None when the game is over.
        kind: "deploy", "charge" (declarations), "react", "move" (remaining
            moves), "cast" (the magic phase), "dispel" (the opponent answers a
            spell), "shoot", "pursue", "order" (which waiting combat is fought
            next) or "game_over".
        unit: the unit the decision is about, for "react", "pursue" and
            "dispel" (the caster).
    """

    player: int | None
    kind: str
    unit: int | None = None


class IllegalActionError(ValueError):
    """An action that is not in ``legal_actions()``; the battle is unchanged."""
