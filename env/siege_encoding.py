"""The siege's block of the flat action space (SIEGE.*; :mod:`env.rules.siege.orders`).

:class:`SiegeActionCodec` is :class:`env.encoding.ActionCodec` with one more
block after the others, for the orders that name a castle element instead of
a unit. With ``n`` unit slots and ``e`` castle elements (in
``state.castle`` order) the block holds ``n · e · 6`` indices:

============ ====================== ==============================================
order o      action                 rule
============ ====================== ==============================================
0 shoot      ``shoot`` option        SIEGE.DMG.CANNON, SIEGE.DMG.TEMPLATE,
             "element:<id>"          SIEGE.DMG.GATE_SHOTS
1 occupy     ``move`` option         SIEGE.CAPTURE.UNDEFENDED,
             "occupy:<id>"           SIEGE.TOWER.ASSAULT,
                                     SIEGE.MOVE.WALLS (stepping up
                                     from the courtyard)
2 gate_open  ``move`` option         SIEGE.CASTLE.GATE
             "gate_open:<id>"
3 gate_close ``move`` option         SIEGE.CASTLE.GATE
             "gate_close:<id>"
4 double     ``shoot`` option        SIEGE.DMG.CANNON (a cannon's
             "double_charge:<id>"    double charge)
5 through    ``move`` option         SIEGE.CASTLE.GATE (a unit wider
             "through_gate:<id>"     than the gateway squeezes through)
============ ====================== ==============================================

Index: ``siege + (i · e + k) · 6 + o`` for own unit slot i and element k.
The assault on a defended tower's garrison at its door (SIEGE.TOWER.ASSAULT)
needs no index here: it is the plain charge order of the unit at the door
against the garrison, in the charge block.
Elements are the same for both sides, so no mirroring is needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from battleline.env.encoding import ActionCodec
from battleline.env.rules.actions import Action
from battleline.env.rules.siege.orders import DOUBLE_CHARGE, ELEMENT, GATE_CLOSE, GATE_OPEN, OCCUPY, THROUGH_GATE

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

ORDERS = (("shoot", ELEMENT), ("move", OCCUPY), ("move", GATE_OPEN), ("move", GATE_CLOSE), ("shoot", DOUBLE_CHARGE),
          ("move", THROUGH_GATE))
"""(Action kind, option prefix) of the six siege orders, in block order."""

_ORDER_KINDS = frozenset(kind for kind, _ in ORDERS)

SIEGE_BLOCK = "siege"
"""The block name of the siege orders (:meth:`SiegeActionCodec.block_of`), after :data:`env.encoding.BLOCKS`."""


def castle_elements(scenario: str | dict[str, Any]) -> int:
    """How many castle elements a scenario's battle has (0 without the siege module)."""
    from battleline.env.rules.config import load_scenario
    from battleline.env.rules.siege.castle import build_castle

    cfg = load_scenario(scenario)
    return len(build_castle(cfg)) if cfg.siege else 0


def make_codec(n_units_per_side: int, elements: int = 0) -> ActionCodec:
    """The codec for ``n`` unit slots: a :class:`SiegeActionCodec` when there are castle elements."""
    return SiegeActionCodec(n_units_per_side, elements) if elements else ActionCodec(n_units_per_side)


class SiegeActionCodec(ActionCodec):
    """:class:`ActionCodec` plus the siege block (module table).

    Attributes:
        elements: castle elements e covered by the block.
        siege: the block's first index (the plain codec's size).
    """

    def __init__(self, n_units_per_side: int, elements: int) -> None:
        super().__init__(n_units_per_side)
        if elements < 1:
            raise ValueError(f"a siege codec needs at least 1 castle element, got {elements}")
        self.elements = int(elements)
        self.siege = self.size
        self.size = self.siege + self.n * self.elements * len(ORDERS)

    @staticmethod
    def _order(action: Action) -> tuple[int, str] | None:
        """(order o, element id) of a siege action, else None."""
        option = action.option
        if option is None or action.kind not in _ORDER_KINDS:  # most actions: no order to look for
            return None
        for o, (kind, prefix) in enumerate(ORDERS):
            if action.kind == kind and option.startswith(prefix):
                return o, option[len(prefix):]
        return None

    def _encode(self, action: Action, player: int, own: dict[int, int], enemy: dict[int, int],
                battle: Battle | None = None) -> int:
        hit = self._order(action)
        if hit is None:
            return super()._encode(action, player, own, enemy, battle)
        if battle is None:
            raise ValueError(f"cannot encode '{action}' without the battle (its castle)")
        o, eid = hit
        ids = [e.id for e in battle.state.castle]
        if eid not in ids or ids.index(eid) >= self.elements:
            raise ValueError(f"cannot encode '{action}': castle element {eid!r} is not among the codec's {self.elements}")
        slot = own.get(action.unit) if action.unit is not None else None
        if slot is None:
            raise ValueError(f"unit {action.unit} of '{action}' is not a unit of player {player}")
        return self.siege + (slot * self.elements + ids.index(eid)) * len(ORDERS) + o

    def block_of(self, index: int) -> str:
        """The block name of ``index``; "siege" for the siege block."""
        if self.siege <= index < self.size:
            return SIEGE_BLOCK
        return super().block_of(index)

    def decode(self, index: int, battle: Battle, player: int) -> Action:
        """The action that ``index`` stands for when ``player`` decides in ``battle``.

        Indices outside the siege block are decoded by :meth:`ActionCodec.decode`;
        a siege index becomes ``Action(kind, own unit, None, prefix + element id)``
        with (kind, prefix) from :data:`ORDERS`.

        Raises:
            ValueError: the index names an own unit slot or a castle element that
                this battle does not fill (or, outside the siege block, whatever
                :meth:`ActionCodec.decode` raises).
        """
        index = int(index)
        if not self.siege <= index < self.size:
            return super().decode(index, battle, player)
        rest, o = divmod(index - self.siege, len(ORDERS))
        i, k = divmod(rest, self.elements)
        own, _ = self._slots(battle, player)
        if i >= len(own) or k >= len(battle.state.castle):
            raise ValueError(f"action index {index} names own slot {i} and element {k}, which this battle does not fill")
        kind, prefix = ORDERS[o]
        return Action(kind, own[i], None, prefix + battle.state.castle[k].id)

    def describe(self, index: int) -> str:
        """A human-readable name of ``index`` in slot terms, e.g. "occupy own 2 -> castle element 1"."""
        if not self.siege <= index < self.size:
            return super().describe(index)
        rest, o = divmod(index - self.siege, len(ORDERS))
        i, k = divmod(rest, self.elements)
        return f"{ORDERS[o][1].rstrip(':')} own {i} -> castle element {k}"
