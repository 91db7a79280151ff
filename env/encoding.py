"""The flat action space of a scenario and the side-relative view of the table.

One :class:`gymnasium.spaces.Discrete` index per concrete order for a concrete
unit slot (DESIGN.md "The environments", *Actions*). Unit slots are fixed for a
battle and relative to the acting side ``player``:

* own slot ``i``: the ``i``-th unit of ``player`` in uid order;
* enemy slot ``j``: the ``j``-th unit of the other side in uid order.

Slots never move during a battle (a destroyed unit keeps its slot). With ``n``
slots per side the index layout is (blocks in this order, ``n = 10`` gives 5814
indices):

============ ======================== ==========================================
block        size                     index within the block
============ ======================== ==========================================
end_phase    1                        index 0, always allowed
deploy       n · N_SLOTS              ``i · N_SLOTS + k``: own unit i in deployment slot k
move         n · len(MOVE_OPTIONS)    ``i · 16 + o``: own unit i, ``MOVE_OPTIONS[o]``
charge       n · n                    ``i · n + j``: own unit i charges enemy j
react        n · len(REACTIONS)       ``j · 3 + r``: the charged (pending) unit answers
                                      the charger in enemy slot j with ``REACTIONS[r]``
shoot        n · n                    ``i · n + j``: own unit i shoots enemy j
pursue       n · len(PURSUIT_CHOICES) ``i · 2 + c``: own unit i, ``PURSUIT_CHOICES[c]``
join         n · n                    ``i · n + j``: own character i joins own unit j
                                      (``move`` option "join", CORE.MOVE.JOIN)
leave        n                        ``i``: own character i leaves its unit
                                      (``move`` option "leave", CORE.MOVE.LEAVE)
challenge    n · n                    ``i · n + j``: own model i (a character, or a
                                      unit's champion) challenges enemy unit j
accept       n                        ``i``: own model i accepts the challenge
refuse       n                        ``i``: own model i refuses it
cast         n · 22 · 2n              ``(i · 22 + o) · 2n + t``: own caster i casts option o
                                      at target slot t (own slots 0..n−1, enemy
                                      slots n..2n−1); o = 5·s + d − 1 for its known
                                      spell s (0..3) on d dice (1..5), o = 20 + b
                                      for its bound item b (0..1) (CORE.MAGIC.CAST, BOUND)
dispel       13                       ``k − 1`` for k dispel dice (1..12), 12 for a
                                      Dispel Scroll (CORE.MAGIC.DISPEL, SCROLL)
swap         n · n                    ``i · n + j``: own Shadow wizard i swaps with own
                                      character j (CORE.MAGIC.ATTR.SHADOW)
breathe      n · n                    ``i · n + j``: own unit i breathes at enemy j
                                      (``shoot`` option "breath", CORE.SR.BREATH_WEAPON)
order        n                        ``i``: the combat of own unit i is fought next
                                      (CORE.CONV.ORDER, CORE.CC.ROUNDS)
============ ======================== ==========================================

Deployment slots are side-relative already (:func:`env.rules.deployment.slot_pose`
mirrors them for red), move options are relative to the unit's own facing, so
no action needs mirroring: the same index means the same order from either
side's point of view.

:func:`mirror_pose` gives the acting side's view of a table position: blue sees
the table as it is, red sees it rotated by 180° (x → W − x, y → H − y,
facing → facing + 180°), so that each side attacks "up" (+y).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from battleline.env.rules.actions import END_PHASE, MOVE_OPTIONS, PURSUIT_CHOICES, REACTIONS, Action
from battleline.env.rules.deployment import N_SLOTS

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle
    from battleline.env.rules.state import UnitState

BLOCKS = (
    "end_phase", "deploy", "move", "charge", "react", "shoot", "pursue", "join", "leave", "challenge", "accept", "refuse",
    "cast", "dispel", "swap", "breathe", "order",
)
"""Block names in index order; each is also the Action.kind it encodes, except
``join`` and ``leave``, which are ``move`` actions with those options, and
``breathe``, a ``shoot`` action with option "breath"."""

_MOVE_INDEX = {o: k for k, o in enumerate(MOVE_OPTIONS)}
_REACT_INDEX = {o: k for k, o in enumerate(REACTIONS)}
_PURSUE_INDEX = {o: k for k, o in enumerate(PURSUIT_CHOICES)}
_DEPLOY_INDEX = {str(k): k for k in range(N_SLOTS)}
CAST_SPELLS, CAST_DICE, CAST_BOUND = 4, 5, 2
"""Known spells, dice counts and bound items a caster's ``cast`` options cover."""
CAST_OPTIONS = CAST_SPELLS * CAST_DICE + CAST_BOUND
DISPEL_OPTIONS = 13  # 1..12 dice, then the scroll


def mirror_pose(x: float, y: float, facing: float, player: int, table_w: float, table_h: float) -> tuple[float, float, float]:
    """A table pose as ``player`` sees it.

    Args:
        x, y: inches on the table; facing: degrees CCW from +x.
        player: 0 (blue: unchanged) or 1 (red: rotated 180°).
        table_w, table_h: table size in inches.

    Returns:
        (x, y, facing) in the player's frame; facing in [0, 360).
    """
    if player == 1:
        return table_w - x, table_h - y, (facing + 180.0) % 360.0
    return x, y, facing % 360.0


def side_units(battle: Battle, side: int) -> list[int]:
    """The uids of ``side``'s units in uid order (the side's unit slots)."""
    return [u.uid for u in battle.state.units if u.side == side]


def units_per_side(battle: Battle) -> int:
    """The larger of the two sides' unit counts."""
    counts = [0, 0]
    for u in battle.state.units:
        counts[u.side] += 1
    return max(counts)


@dataclass(frozen=True)
class CodecLayout:
    """Start offsets of the blocks (see the module table)."""

    deploy: int
    move: int
    charge: int
    react: int
    shoot: int
    pursue: int
    join: int
    leave: int
    challenge: int
    accept: int
    refuse: int
    cast: int
    dispel: int
    swap: int
    breathe: int
    order: int
    size: int


_KEPT_SLOTS = 16
"""At most this many slot layouts keep their actions' indices in one codec (:meth:`ActionCodec.mask`)."""
_KEPT_ACTIONS = 10_000
"""At most this many action objects' indices kept per slot layout (then they are dropped and kept afresh)."""


class ActionCodec:
    """Bijection between the engine's legal actions and allowed indices of a flat space.

    Args:
        n_units_per_side: unit slots per side (at least the larger army's unit count).

    Attributes:
        n: unit slots per side.
        size: number of indices (the ``Discrete`` size).
        layout: block offsets (:class:`CodecLayout`).
    """

    def __init__(self, n_units_per_side: int) -> None:
        if n_units_per_side < 1:
            raise ValueError(f"n_units_per_side must be at least 1, got {n_units_per_side}")
        n = self.n = int(n_units_per_side)
        deploy = 1
        move = deploy + n * N_SLOTS
        charge = move + n * len(MOVE_OPTIONS)
        react = charge + n * n
        shoot = react + n * len(REACTIONS)
        pursue = shoot + n * n
        join = pursue + n * len(PURSUIT_CHOICES)
        leave = join + n * n
        challenge = leave + n
        accept = challenge + n * n
        refuse = accept + n
        cast = refuse + n
        dispel = cast + n * CAST_OPTIONS * 2 * n
        swap = dispel + DISPEL_OPTIONS
        breathe = swap + n * n
        order = breathe + n * n
        size = order + n
        self.layout = CodecLayout(
            deploy, move, charge, react, shoot, pursue, join, leave, challenge, accept, refuse, cast, dispel, swap, breathe,
            order, size,
        )
        self.size = size
        self._starts = (0, deploy, move, charge, react, shoot, pursue, join, leave, challenge, accept, refuse, cast,
                        dispel, swap, breathe, order)  # the first index of each block of BLOCKS
        self._slot_encoders = {
            "charge": (charge, True), "shoot": (shoot, True), "challenge": (challenge, True),
            "swap": (swap, False),
        }  # fmt: skip
        self._kept: dict[tuple[int, tuple[int, ...], tuple[int, ...]], tuple[dict[int, tuple[Action, int]],
                                                                          dict[tuple[Any, ...], int]]] = {}
        """By (player, own uids, enemy uids): the (action, index) of encoded action objects by their id, and the
        indices by the actions' (kind, unit, target, option); see :meth:`mask`."""

    # ------------------------------------------------------------------ slots
    def slots(self, battle: Battle, player: int) -> tuple[list[int], list[int]]:
        """The uids in ``player``'s own unit slots and in its enemy slots (uid order, one pass over the units).

        Raises:
            ValueError: a side has more units than the codec's ``n`` slots.
        """
        own: list[int] = []
        enemy: list[int] = []
        for u in battle.state.units:
            if u.side == player:
                own.append(u.uid)
            elif u.side == 1 - player:
                enemy.append(u.uid)
        if len(own) > self.n or len(enemy) > self.n:
            raise ValueError(
                f"battle has {len(own)} and {len(enemy)} units per side but the codec has only {self.n} unit slots"
            )
        return own, enemy

    _slots = slots

    def block_of(self, index: int) -> str:
        """The block name (an Action kind) of ``index``.

        Raises:
            ValueError: ``index`` is outside 0..size−1.
        """
        if not 0 <= index < self.size:
            raise ValueError(f"action index {index} outside 0..{self.size - 1}")
        return BLOCKS[bisect.bisect_right(self._starts, index) - 1]

    # ------------------------------------------------------------------ encode
    def encode(self, action: Action, battle: Battle, player: int) -> int:
        """The index of ``action`` taken by ``player`` (0 blue, 1 red).

        Raises:
            ValueError: the action's units do not belong to the expected sides,
                or its kind or option is unknown.
        """
        if action.kind == "end_phase":
            return 0
        own, enemy = self._slots(battle, player)
        return self._encode(action, player, {u: i for i, u in enumerate(own)}, {u: j for j, u in enumerate(enemy)}, battle)

    def _encode(self, action: Action, player: int, own: dict[int, int], enemy: dict[int, int], battle: Battle | None = None) -> int:
        """:meth:`encode` with the slot maps (uid → slot) given."""
        kind = action.kind
        if kind == "end_phase":
            return 0
        L, n = self.layout, self.n
        option = action.option
        if kind == "move":
            if option == "join":
                return L.join + _own_slot(action, player, own, action.unit) * n + _own_slot(action, player, own, action.target)
            if option == "leave":
                return L.leave + _own_slot(action, player, own, action.unit)
            return L.move + _own_slot(action, player, own, action.unit) * len(MOVE_OPTIONS) + _option(action, _MOVE_INDEX)
        pair = self._slot_encoders.get(kind)
        if pair is not None and not (kind == "shoot" and option == "breath"):
            start, versus_enemy = pair
            unit = _own_slot(action, player, own, action.unit)
            if versus_enemy:
                return start + unit * n + _enemy_slot(action, player, enemy, action.target)
            return start + unit * n + _own_slot(action, player, own, action.target)
        if kind in ("accept", "refuse"):
            return (L.accept if kind == "accept" else L.refuse) + _own_slot(action, player, own, action.unit)
        if kind == "deploy":
            return L.deploy + _own_slot(action, player, own, action.unit) * N_SLOTS + _option(action, _DEPLOY_INDEX)
        if kind == "react":
            _own_slot(action, player, own, action.unit)
            return L.react + _enemy_slot(action, player, enemy, action.target) * len(REACTIONS) + _option(action, _REACT_INDEX)
        if kind == "shoot":  # option "breath"
            return L.breathe + _own_slot(action, player, own, action.unit) * n + _enemy_slot(action, player, enemy, action.target)
        if kind == "pursue":
            return L.pursue + _own_slot(action, player, own, action.unit) * len(PURSUIT_CHOICES) + _option(action, _PURSUE_INDEX)
        if kind == "cast" and battle is not None:
            target = own[action.target] if action.target in own else n + _enemy_slot(action, player, enemy, action.target)
            caster = _own_slot(action, player, own, action.unit)
            return L.cast + (caster * CAST_OPTIONS + _cast_option(action, battle)) * 2 * n + target
        if kind == "dispel":
            return L.dispel + (DISPEL_OPTIONS - 1 if option == "scroll" else int(option or 0) - 1)
        if kind == "order":
            return L.order + _own_slot(action, player, own, action.unit)
        raise ValueError(f"cannot encode '{action}': unknown kind '{kind}'")

    # ------------------------------------------------------------------ decode
    def decode(self, index: int, battle: Battle, player: int) -> Action:
        """The action that ``index`` stands for when ``player`` decides in ``battle``.

        The result is legal exactly when ``mask(battle, player)[index]`` is
        True. ``react`` takes the unit from ``battle.pending``; ``pursue`` takes
        the broken enemy from the engine's legal pursuit actions.

        Raises:
            ValueError: ``index`` is out of range or names a unit slot the
                battle does not fill.
        """
        index = int(index)
        block = self.block_of(index)
        if block == "end_phase":
            return END_PHASE
        own, enemy = self._slots(battle, player)
        L, n = self.layout, self.n

        def pick(uids: list[int], slot: int, what: str) -> int:
            if slot >= len(uids):
                raise ValueError(f"action index {index} names {what} slot {slot}, but player {player} sees only {len(uids)}")
            return uids[slot]

        if block == "deploy":
            i, k = divmod(index - L.deploy, N_SLOTS)
            return Action("deploy", pick(own, i, "own"), None, str(k))
        if block == "move":
            i, o = divmod(index - L.move, len(MOVE_OPTIONS))
            return Action("move", pick(own, i, "own"), None, MOVE_OPTIONS[o])
        if block == "charge":
            i, j = divmod(index - L.charge, n)
            return Action("charge", pick(own, i, "own"), pick(enemy, j, "enemy"))
        if block == "react":
            j, r = divmod(index - L.react, len(REACTIONS))
            return Action("react", battle.pending.unit, pick(enemy, j, "enemy"), REACTIONS[r])
        if block == "shoot":
            i, j = divmod(index - L.shoot, n)
            return Action("shoot", pick(own, i, "own"), pick(enemy, j, "enemy"))
        if block == "join":
            i, j = divmod(index - L.join, n)
            return Action("move", pick(own, i, "own"), pick(own, j, "own"), "join")
        if block == "leave":
            return Action("move", pick(own, index - L.leave, "own"), None, "leave")
        if block == "challenge":
            i, j = divmod(index - L.challenge, n)
            return Action("challenge", pick(own, i, "own"), pick(enemy, j, "enemy"))
        if block in ("accept", "refuse"):
            return Action(block, pick(own, index - (L.accept if block == "accept" else L.refuse), "own"))
        if block == "cast":
            rest, t = divmod(index - L.cast, 2 * n)
            i, o = divmod(rest, CAST_OPTIONS)
            uid = pick(own, i, "own")
            target = pick(own, t, "own") if t < n else pick(enemy, t - n, "enemy")
            return Action("cast", uid, target, _cast_option_text(battle.unit(uid), o, index))
        if block == "dispel":
            k = index - L.dispel
            return Action("dispel", option="scroll" if k == DISPEL_OPTIONS - 1 else str(k + 1))
        if block == "swap":
            i, j = divmod(index - L.swap, n)
            return Action("swap", pick(own, i, "own"), pick(own, j, "own"))
        if block == "breathe":
            i, j = divmod(index - L.breathe, n)
            return Action("shoot", pick(own, i, "own"), pick(enemy, j, "enemy"), "breath")
        if block == "order":
            return Action("order", pick(own, index - L.order, "own"))
        i, c = divmod(index - L.pursue, len(PURSUIT_CHOICES))
        uid = pick(own, i, "own")
        target = next((a.target for a in battle.legal_actions() if a.kind == "pursue" and a.unit == uid), None)
        return Action("pursue", uid, target, PURSUIT_CHOICES[c])

    # ------------------------------------------------------------------ mask
    def mask(self, battle: Battle, player: int) -> np.ndarray:
        """Allowed indices for ``player``: shape (size,), dtype bool.

        When ``player`` decides now, the allowed set is exactly the encoded
        ``battle.legal_actions()``. Otherwise (the other side decides, or the
        game is over) only index 0 (end_phase, a no-op placeholder) is
        allowed, so the mask is never empty.
        """
        out = np.zeros(self.size, dtype=bool)
        out[0] = True
        if battle.is_over or battle.pending.player != player:
            return out
        own, enemy = self.slots(battle, player)
        own_map, enemy_map = {u: i for i, u in enumerate(own)}, {u: j for j, u in enumerate(enemy)}
        encode = self._encode
        legal = battle.legal_actions()
        if type(self)._encode is not ActionCodec._encode:  # a codec of its own kinds: every action encoded afresh
            out[[encode(a, player, own_map, enemy_map, battle) for a in legal]] = True
            return out
        # An index is a function of the action's fields and the slots alone (but a cast's, which reads the
        # battle), so the indices met before with the same slots are kept: by the action object's id (the engine
        # hands out the same objects again, a unit's move options; each entry holds its action, so the id stays
        # its), else by the action's fields (a deployment's actions are made afresh for every decision).
        key = (player, tuple(own), tuple(enemy))
        kept = self._kept.get(key)
        if kept is None:
            if len(self._kept) >= _KEPT_SLOTS:
                self._kept.clear()
            kept = self._kept[key] = ({}, {})
        by_id, by_fields = kept
        if len(by_id) >= _KEPT_ACTIONS or len(by_fields) >= _KEPT_ACTIONS:
            by_id.clear()
            by_fields.clear()
        indices = []
        for a in legal:
            entry = by_id.get(id(a))
            if entry is not None and entry[0] is a:
                indices.append(entry[1])
                continue
            if a.kind == "cast":
                indices.append(encode(a, player, own_map, enemy_map, battle))
                continue
            fields = (a.kind, a.unit, a.target, a.option)
            index = by_fields.get(fields)
            if index is None:
                index = by_fields[fields] = encode(a, player, own_map, enemy_map, battle)
            by_id[id(a)] = (a, index)
            indices.append(index)
        out[indices] = True
        return out

    def describe(self, index: int) -> str:
        """A human-readable name of ``index`` in slot terms, e.g. "charge own 2 -> enemy 5"."""
        L, n = self.layout, self.n
        block = self.block_of(index)
        if block == "end_phase":
            return "end_phase"
        if block == "deploy":
            i, k = divmod(index - L.deploy, N_SLOTS)
            return f"deploy own {i} in slot {k}"
        if block == "move":
            i, o = divmod(index - L.move, len(MOVE_OPTIONS))
            return f"move own {i} {MOVE_OPTIONS[o]}"
        if block == "charge":
            i, j = divmod(index - L.charge, n)
            return f"charge own {i} -> enemy {j}"
        if block == "react":
            j, r = divmod(index - L.react, len(REACTIONS))
            return f"react {REACTIONS[r]} to enemy {j}"
        if block == "shoot":
            i, j = divmod(index - L.shoot, n)
            return f"shoot own {i} -> enemy {j}"
        if block in ("join", "challenge"):
            i, j = divmod(index - getattr(L, block), n)
            return f"{block} own {i} -> {'own' if block == 'join' else 'enemy'} {j}"
        if block in ("leave", "accept", "refuse"):
            return f"{block} own {index - getattr(L, block)}"
        if block == "cast":
            rest, t = divmod(index - L.cast, 2 * n)
            i, o = divmod(rest, CAST_OPTIONS)
            what = (f"bound item {o - CAST_SPELLS * CAST_DICE}" if o >= CAST_SPELLS * CAST_DICE
                    else f"spell {o // CAST_DICE} on {o % CAST_DICE + 1} dice")
            return f"cast own {i} {what} -> {'own ' + str(t) if t < n else 'enemy ' + str(t - n)}"
        if block == "dispel":
            k = index - L.dispel
            return "dispel with a scroll" if k == DISPEL_OPTIONS - 1 else f"dispel with {k + 1} dice"
        if block == "swap":
            i, j = divmod(index - L.swap, n)
            return f"swap own {i} with own {j}"
        if block == "breathe":
            i, j = divmod(index - L.breathe, n)
            return f"breathe own {i} -> enemy {j}"
        if block == "order":
            return f"order: the combat of own {index - L.order} next"
        i, c = divmod(index - L.pursue, len(PURSUIT_CHOICES))
        return f"pursue own {i}: {PURSUIT_CHOICES[c]}"


def _own_slot(action: Action, player: int, own: dict[int, int], uid: int | None) -> int:
    """The own slot of ``uid`` (a unit of ``action``). Raises ValueError if it is not one of ``player``'s units."""
    slot = None if uid is None else own.get(uid)
    if slot is None:
        raise ValueError(f"unit {uid} of '{action}' is not a unit of player {player}")
    return slot


def _enemy_slot(action: Action, player: int, enemy: dict[int, int], uid: int | None) -> int:
    """The enemy slot of ``uid`` (the target of ``action``). Raises ValueError if it is not an enemy of ``player``."""
    slot = None if uid is None else enemy.get(uid)
    if slot is None:
        raise ValueError(f"target {uid} of '{action}' is not an enemy of player {player}")
    return slot


def _option(action: Action, table: dict[str, int]) -> int:
    """The index of ``action.option`` in ``table``. Raises ValueError for an unknown option."""
    k = None if action.option is None else table.get(action.option)
    if k is None:
        raise ValueError(f"cannot encode '{action}': unknown option {action.option!r}")
    return k


def _cast_option(action: Action, battle: Battle) -> int:
    """The option index o of a ``cast`` action (see the module table). Raises ValueError if it has none."""
    u = battle.unit(action.unit)
    spell, how = (action.option or ":").rsplit(":", 1)
    if how == "bound":
        k = next((b for b, item in enumerate(u.bound_spells) if item["spell"] == spell), None)
        if k is None or k >= CAST_BOUND:
            raise ValueError(f"cannot encode '{action}': no bound item slot for {spell}")
        return CAST_SPELLS * CAST_DICE + k
    if spell not in u.spells or u.spells.index(spell) >= CAST_SPELLS or not how.isdigit() or not 1 <= int(how) <= CAST_DICE:
        raise ValueError(f"cannot encode '{action}': unknown option {action.option!r}")
    return u.spells.index(spell) * CAST_DICE + int(how) - 1


def _cast_option_text(u: UnitState, o: int, index: int) -> str:
    """The ``cast`` option string of option index ``o`` for caster ``u``. Raises ValueError if ``u`` has no such spell."""
    if o >= CAST_SPELLS * CAST_DICE:
        b = o - CAST_SPELLS * CAST_DICE
        if b >= len(u.bound_spells):
            raise ValueError(f"action index {index} names bound item {b}, but unit {u.uid} carries {len(u.bound_spells)}")
        return f"{u.bound_spells[b]['spell']}:bound"
    s, d = divmod(o, CAST_DICE)
    if s >= len(u.spells):
        raise ValueError(f"action index {index} names spell {s}, but unit {u.uid} knows {len(u.spells)}")
    return f"{u.spells[s]}:{d + 1}"
