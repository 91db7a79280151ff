"""The decision-point battle engine (DESIGN.md "The rules engine").

The engine runs the rules on its own until a player must choose; then it
stops, exposes :attr:`Battle.pending` and :meth:`Battle.legal_actions`, and
waits for :meth:`Battle.apply`. An illegal action raises
:class:`IllegalActionError` and leaves the battle unchanged.

Stages (``state.stage``):

* ``deploy`` — alternate deployment (CORE.SETUP.DEPLOY);
* ``vanguard`` — Fast Cavalry Vanguard moves before the first turn, pending
  kind "move" (CORE.SETUP.VANGUARD);
* ``charge`` — charge declarations by the phasing player (CORE.MOVE.SEQUENCE 1);
* ``react`` — the charged unit's reaction (CORE.REACT.*);
* ``move`` — remaining moves (CORE.MOVE.REMAINING);
* ``cast`` — the phasing player's spells (CORE.MAGIC.SEQUENCE, CAST, BOUND);
* ``dispel`` — the opponent answers a spell (CORE.MAGIC.DISPEL, SCROLL);
* ``shoot`` — the shooting phase (CORE.SHOOT.*);
* ``pursue`` — a winner decides whether to pursue (CORE.CC.PURSUE_CHOICE);
* ``challenge`` — a side in a new combat may issue a challenge
  (CORE.CC.CHALLENGE.ISSUE), the charging side first;
* ``accept`` — the challenged side accepts or refuses (CORE.CC.CHALLENGE.REFUSE);
* ``over`` — the game has ended (CORE.GAME.END).

Everything between these stages (start of turn, charge rolls and moves,
compulsory moves, the close-combat rounds, break tests, flight and pursuit,
panic) is resolved automatically with the battle's dice.
"""

from __future__ import annotations

import functools
import json
import numbers
import operator
from collections.abc import Iterable, Iterator
from itertools import repeat
from pathlib import Path
from typing import Any

from battleline.env.rules import (
    challenges,
    characters,
    charges,
    combat,
    deployment,
    geometry,
    kernel,
    magic,
    movement,
    muster,
    psychology,
    shooting,
    special_rules,
    victory,
    war_machines,
)
from battleline.env.rules.actions import END_PHASE, Action, IllegalActionError, Pending
from battleline.env.rules.dice import Dice, ScriptedDice
from battleline.env.rules.events import EVENT_FIELDS, Event, make_event
from battleline.env.rules.setup import build_state
from battleline.env.rules.state import SIDES, BattleState, UnitState
from battleline.env.rules.t9a import start as t9a_start

FORMAT_VERSION = 1

_QUOTED_CHARS = 60
"""The longest value a state type error quotes (longer ones are cut with '…')."""


@functools.cache
def _state_adapters() -> tuple[Any, Any]:
    """pydantic TypeAdapters over :class:`BattleState` and a list of castle elements (built once: tens of ms).

    They check subclasses that add pydantic's ``allow_inf_nan=False`` (nested units, profiles and terrain
    inherit it): the engine never saves NaN or an infinite number, so one is a hand edit that would break
    the drawing or the rules later.
    """
    from pydantic import ConfigDict, TypeAdapter

    from battleline.env.rules.siege.castle import CastleElement

    finite = {"__pydantic_config__": ConfigDict(allow_inf_nan=False)}
    state = type("FiniteBattleState", (BattleState,), finite)
    castle = type("FiniteCastleElement", (CastleElement,), finite)
    return TypeAdapter(state), TypeAdapter(list[castle])


def state_type_error(state: dict[str, Any], where: str = "state") -> str | None:
    """The first field of a saved state (:meth:`BattleState.to_dict` read back from JSON, found at ``where``) whose
    type is wrong, as "state.units[3].profile.M: Input should be a valid integer, got null", or None when every
    type is right.

    pydantic checks ``state`` in strict JSON mode against the annotations of :class:`BattleState` (units,
    profiles, terrain, engagements) and, for ``castle``, of :class:`env.rules.siege.castle.CastleElement`: an
    integer field takes no float, string or boolean; a float field takes an integer but no NaN or infinity;
    a missing required field is named ("state.units[3]: missing field 'uid'"). Unknown keys are not its
    concern. The cost is one ``json.dumps`` of the state, not of the replay's events.
    """
    from pydantic import ValidationError

    from battleline.env.rules.config import loc_text

    battle_state, castle = _state_adapters()
    checks = [(battle_state, state, (where,))]
    if isinstance(state.get("castle"), list):
        checks.append((castle, state["castle"], (where, "castle")))
    for adapter, value, prefix in checks:
        try:
            adapter.validate_json(json.dumps(value), strict=True)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = prefix + tuple(err["loc"])
            if err["type"] == "missing":
                return f"{loc_text(loc[:-1])}: missing field '{loc[-1]}'"
            quoted = json.dumps(err["input"])
            if len(quoted) > _QUOTED_CHARS:
                quoted = quoted[:_QUOTED_CHARS] + "…"
            return f"{loc_text(loc)}: {err['msg']}, got {quoted}"
    return None


def _seed_problem(seed: Any) -> str | None:
    """Why ``seed`` cannot replay a battle (it must be an integer >= 0; None would draw fresh entropy), or None."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        return f"seed must be an integer >= 0, got {seed!r}"
    return None


def check_seed(seed: Any) -> None:
    """Reject a battle seed that is not an integer >= 0 (CORE.DICE.RNG: one seeded generator per battle).

    Raises:
        ValueError: "seed must be an integer >= 0, got ..." (a bool, a float, a string, a negative number, None).
    """
    problem = _seed_problem(seed)
    if problem:
        raise ValueError(problem)


class Battle:
    """One battle: state, dice and event log behind a decision-point API.

    Create with :meth:`from_scenario` or :meth:`from_json`.

    Attributes:
        state: the mutable :class:`BattleState` (read it, do not write it).
        dice: the battle's seeded :class:`Dice`.
        events: the event log, a list of dicts each with a ``rule`` ID.
        actions: every action applied so far, in order.
        seed: the seed the battle started from.
        scenario: the validated scenario as a plain dict.
    """

    def __init__(self, state: BattleState, dice: Dice, scenario: dict[str, Any], seed: int) -> None:
        self.state = state
        self.dice = dice
        self.dice.log = self._log_roll
        self.dice.on_die = self._note_die
        self._die_kinds: set[str] | None = None
        self.scenario = scenario
        self.seed = seed
        self.events: list[Event] = []
        self.actions: list[Action] = []
        self._legal_cache: list[Action] | None = None

    # ------------------------------------------------------------------ build
    @classmethod
    def from_scenario(
        cls,
        scenario: str | Path | dict[str, Any],
        seed: int = 0,
        blue_army: str | None = None,
        red_army: str | None = None,
        dice: Dice | None = None,
    ) -> Battle:
        """Start a battle from a scenario.

        Args:
            scenario: a scenario name in ``configs/scenarios``, a YAML path, or a dict.
            seed: the RNG seed (CORE.DICE.RNG).
            blue_army, red_army: army-list ids overriding the scenario's (not allowed
                when the scenario places its units explicitly).
            dice: replacement dice (tests use :class:`ScriptedDice`).

        Raises:
            ConfigError: the scenario or an army list is invalid (one line
                naming the file, the field and the fault), or an army overrides a
                side the scenario places.
            ValueError: without ``dice``, a ``seed`` that is not an integer >= 0 (:func:`check_seed`).
        """
        from battleline.env.rules.config import load_scenario, scenario_file

        if dice is None:
            check_seed(seed)
        cfg = load_scenario(scenario)
        data = cfg.model_dump(mode="json")
        for side, army in (("blue", blue_army), ("red", red_army)):
            if army is not None:
                from battleline.env.rules.config import ConfigError, load_army

                if cfg.side(side).placements is not None:
                    raise ConfigError(f"{side} army '{army}': scenario '{cfg.id}' places its units explicitly "
                                      f"(placements), so its army lists cannot be replaced")
                arm = load_army(army)
                data[side] = {"faction": arm.faction, "army": army, "placements": None}
        if blue_army or red_army:
            cfg = load_scenario(data, file=scenario_file(scenario))
        state = build_state(cfg)
        battle = cls(state, dice or Dice(seed), data, seed)
        battle._start()
        return battle

    def _start(self) -> None:
        s = self.state
        self.emit("CORE.CONV.TABLE", width=s.table_w, height=s.table_h)
        self.emit("CORE.CONV.UNITS", unit="inch", tolerance=geometry.EPS)
        self.emit("CORE.DICE.RNG", seed=self.seed, scripted=isinstance(self.dice, ScriptedDice))
        if s.modules:  # CFG.MODE, CFG.MODULES, CFG.EXCLUSIVE: a battle under T9A modules logs them
            t9a_start.record(self)
        muster.record(self)
        magic.generate_spells(self)
        if s.stage == "deploy":
            deployment.start(self)
        else:
            for u in s.units:
                if u.deployed:
                    self.emit("CORE.SETUP.DEPLOY", unit=u.uid, side=u.side, slot=None, x=u.x, y=u.y, facing=u.facing, placed=True)
            self._enter_phase(s.phase)
        self._advance()

    # ------------------------------------------------------------------ events
    def emit(self, rule: str, **data: Any) -> Event:
        """Record an event for ``rule`` at the current turn and phase."""
        ev = make_event(rule, self.state.turn, self.state.phase, **data)
        self.events.append(ev)
        return ev

    def _note_die(self, die_rule: str, rule: str) -> None:
        """The first roll of each kind of die in a battle records the die's own rule (CORE.DICE.D6 and the rest)."""
        seen = getattr(self, "_die_kinds", None)
        if seen is None:
            seen = self._die_kinds = {e["rule"] for e in self.events if e["rule"].startswith("CORE.DICE.")}
        if die_rule not in seen:
            seen.add(die_rule)
            self.emit(die_rule, first_roll_for=rule)

    def _log_roll(self, rule: str, faces: list[int], result: Any) -> None:
        self.events.append(make_event(rule, self.state.turn, self.state.phase, kind="dice", dice=faces, result=result))

    # ------------------------------------------------------------------ API
    @property
    def pending(self) -> Pending:
        """Who must decide now, and what kind of decision."""
        s = self.state
        if s.over:
            return Pending(None, "game_over")
        if s.stage == "react":
            charge = s.queue["charges"][-1]
            return Pending(1 - s.active, "react", charge["target"])
        if s.stage == "pursue":
            unit = s.queue["pursuit"]["ask"][0]
            return Pending(s.units[unit].side, "pursue", unit)
        if s.stage in ("challenge", "accept"):
            return challenges.pending(self)
        if s.stage == "deploy":
            return Pending(s.queue["deploy_next"], "deploy")
        if s.stage == "vanguard":  # CORE.SETUP.VANGUARD: move decisions before the first turn
            return Pending(s.queue["vanguard"]["next"], "move")
        if s.stage == "dispel":
            return Pending(1 - s.active, "dispel", s.queue["magic"]["pending"]["caster"])
        return Pending(s.active, s.stage)

    @property
    def is_over(self) -> bool:
        """True once the game has ended (CORE.GAME.END)."""
        return self.state.over

    @property
    def result(self) -> dict[str, Any]:
        """Winner and victory points (CORE.VP.*).

        Returns a dict: ``winner`` ("blue", "red" or "draw"; None while the
        game runs), ``vp`` {side: points}, ``breakdown`` {side: {source:
        points}} and ``margin`` (blue − red).
        """
        return victory.result(self)

    def legal_actions(self) -> list[Action]:
        """Every legal action now; ``end_phase`` is always among them."""
        return list(self._legal())

    def _legal(self) -> list[Action]:
        """The kept legal list, worked out when missing. While it is worked out the state holds still, so
        :func:`kernel.decision_table` may keep one table of the units for every compiled scene of the decision;
        that table is kept with the list (:func:`kernel.keep_decided`) for :meth:`apply` to reuse."""
        if self._legal_cache is None:
            self._deciding = True  # the state holds still: kernel.decision_table may keep its table
            try:
                self._legal_cache = self._compute_legal()
                kernel.keep_decided(self, self._legal_cache, self.__dict__.get("_kernel_table"))
            finally:
                self._deciding = False
                self._kernel_table = None
        return self._legal_cache

    @staticmethod
    def _handed_out(action: Action, legal: list[Action]) -> bool:
        """Whether ``action`` is one of the objects in ``legal`` (an action handed out by :meth:`legal_actions`):
        found by identity, in C, without comparing it field by field to the ones before it."""
        return any(map(operator.is_, legal, repeat(action)))

    def _compute_legal(self) -> list[Action]:
        s = self.state
        if s.over:
            return []
        stage = s.stage
        if stage == "deploy":
            acts = deployment.legal(self)
        elif stage == "vanguard":
            acts = deployment.legal_vanguard(self)
        elif stage == "charge":
            acts = charges.legal_declarations(self)
        elif stage == "react":
            acts = charges.legal_reactions(self)
        elif stage == "move":
            acts = movement.legal(self)
        elif stage == "shoot":
            acts = shooting.legal(self)
        elif stage in ("cast", "dispel"):
            acts = magic.legal(self)
        elif stage == "pursue":
            acts = combat.legal_pursuit(self)
        elif stage == "order":
            acts = combat.legal_order(self)
        elif stage in ("challenge", "accept"):
            acts = challenges.legal(self)
        else:  # pragma: no cover - defensive
            acts = []
        return acts + [END_PHASE]

    def apply(self, action: Action) -> None:
        """Apply one legal action and run the rules to the next decision.

        Raises:
            IllegalActionError: the action is not legal now, or not an :class:`Action`
                at all (None, a string); nothing changes.
        """
        if not isinstance(action, Action):
            raise IllegalActionError(
                f"not an action: {action!r} ({type(action).__name__}); pass an env.rules.actions.Action, "
                f"e.g. END_PHASE, not the string 'end_phase'"
            )
        problem = action.field_error()
        if problem:
            raise IllegalActionError(f"malformed action {action!r}: {problem}")
        if self.state.over:
            raise IllegalActionError("the battle is over; no action is legal")
        legal = self._legal()
        # a machine's fire mode and aim: war_machines.accepts
        if not self._handed_out(action, legal) and action not in legal and not war_machines.accepts(self, action, legal):
            raise IllegalActionError(
                f"illegal action '{action}' at turn {self.state.turn}, stage '{self.state.stage}' "
                f"(player {SIDES[self.pending.player or 0]}); {len(legal)} legal actions"
            )
        self._legal_cache = None
        self.actions.append(action)
        self.state.step += 1
        stage = self.state.stage
        if stage == "deploy":
            deployment.apply(self, action)
        elif stage == "vanguard":
            deployment.apply_vanguard(self, action)
        elif stage == "charge":
            charges.apply_declaration(self, action)
        elif stage == "react":
            charges.apply_reaction(self, action)
        elif stage == "move":
            mover = self.unit(action.unit) if action.unit is not None else None
            start = None if mover is None else geometry.Pose(mover.x, mover.y, mover.facing)
            movement.apply(self, action, kernel.decided_table(self, legal))  # the state is as ``legal`` found it
            if mover is not None and action.option not in characters.CHARACTER_MOVES:
                special_rules.log_move(self, mover, start, action.option)
        elif stage == "shoot":
            shooting.apply(self, action)
        elif stage in ("cast", "dispel"):
            magic.apply(self, action)
        elif stage == "pursue":
            combat.apply_pursuit(self, action)
        elif stage == "order":
            combat.apply_order(self, action)
        elif stage in ("challenge", "accept"):
            challenges.apply(self, action)
        self._advance()

    # ------------------------------------------------------------------ flow
    def set_stage(self, stage: str) -> None:
        """Move to ``stage`` (called by the phase modules)."""
        self.state.stage = stage
        self._legal_cache = None

    def _advance(self) -> None:
        """Run automatic steps; skip stages whose only legal action is end_phase."""
        self._legal_cache = None
        guard = 0
        while not self.state.over:
            guard += 1
            if guard > 10000:  # pragma: no cover - defensive
                raise RuntimeError("engine loop did not reach a decision")
            characters.sync(self.state)
            if self.state.stage == "next":
                self._next_phase()
                continue
            if self.state.stage in ("react", "pursue", "challenge", "accept"):
                return
            if len(self._legal()) > 1:
                return
            # Only end_phase: take it automatically (no choice to make).
            self._legal_cache = None
            self._end_stage()

    def _end_stage(self) -> None:
        stage = self.state.stage
        if stage == "deploy":
            deployment.apply(self, END_PHASE)
        elif stage == "vanguard":
            deployment.apply_vanguard(self, END_PHASE)
        elif stage == "charge":
            charges.apply_declaration(self, END_PHASE)
        elif stage == "move":
            movement.apply(self, END_PHASE)
        elif stage == "shoot":
            shooting.apply(self, END_PHASE)
        elif stage in ("cast", "dispel"):
            magic.apply(self, END_PHASE)
        elif stage == "order":
            combat.apply_order(self, END_PHASE)

    def finish_phase(self) -> None:
        """Mark the current phase finished; the next starts on the next step."""
        self.set_stage("next")

    def _next_phase(self) -> None:
        s = self.state
        order = ("start", "movement", "magic", "shooting", "combat")
        if s.phase == "deployment":
            self._begin_player_turn(s.first_player, 1)
            return
        i = order.index(s.phase)
        if i + 1 < len(order):
            self._enter_phase(order[i + 1])
            return
        # End of a player turn.
        special_rules.end_of_player_turn(self)  # CORE.SR.REGENERATION healing
        if s.active == s.first_player:
            self._begin_player_turn(1 - s.active, s.turn)
        elif s.turn >= s.max_turns:
            victory.end_game(self, reason="turns")
        else:
            self._begin_player_turn(s.first_player, s.turn + 1)

    def _begin_player_turn(self, player: int, turn: int) -> None:
        s = self.state
        s.active = player
        s.turn = turn
        for u in s.units:
            u.flags = {}
        self.emit("CORE.GAME.LENGTH", player=player, max_turns=s.max_turns)
        self._enter_phase("start")

    def _enter_phase(self, phase: str) -> None:
        s = self.state
        s.phase = phase
        self.emit("CORE.GAME.PHASES", player=s.active, phase_started=phase)
        magic.on_phase(self)
        if victory.check_wipeout(self):
            return
        if phase == "start":
            psychology.start_of_turn(self)
            self.finish_phase()
        elif phase == "movement":
            charges.start(self)
        elif phase == "magic":
            magic.start(self)
        elif phase == "shooting":
            shooting.start(self)
        elif phase == "combat":
            combat.start(self)

    # ------------------------------------------------------------------ helpers
    def unit(self, uid: int) -> UnitState:
        """The unit with ``uid``."""
        return self.state.units[uid]

    def check_invariants(self, castle_before: list[Any] | None = None) -> list[Any]:
        """The table's invariants broken now (:func:`env.rules.invariants.check_invariants`): overlapping or
        off-table footprints, impassable terrain, engaged units out of contact, inconsistent models and wounds, a
        decision without a choice; with ``castle_before`` (a castle snapshot) damage that went down.

        Returns:
            A list of :class:`env.rules.invariants.Violation` (empty when all hold); the battle is not changed.
        """
        from battleline.env.rules.invariants import check_invariants

        return check_invariants(self, castle_before)

    def clone(self, reseed: int | None = None) -> Battle:
        """An independent copy (state, dice, events, actions).

        Args:
            reseed: None copies the dice's generator, so the copy rolls exactly the
                dice this battle would (a replay of its future). An integer >= 0 gives
                the copy fresh dice seeded with it instead (CORE.DICE.RNG), so a
                look-ahead on the copy never sees this battle's future rolls; scripted
                dice (:class:`ScriptedDice`) never pass into a copy either way.

        Raises:
            ValueError: ``reseed`` is not None and not an integer >= 0 (:func:`check_seed`).
        """
        if reseed is not None:
            check_seed(reseed)
        other = Battle.__new__(Battle)
        other.state = self.state.copy()
        other.dice = Dice(self.dice.state if reseed is None else int(reseed))  # ``state`` is a fresh dict each read
        other.dice.log = other._log_roll
        other.dice.on_die = other._note_die
        other._die_kinds = None
        other.scenario = self.scenario
        other.seed = self.seed
        other.events = list(self.events)
        other.actions = list(self.actions)
        other._legal_cache = None
        return other

    # ------------------------------------------------------------------ JSON
    def to_json(self) -> str:
        """Serialise the whole battle: scenario, seed, actions, events, state, RNG."""
        return json.dumps(
            {
                "format": FORMAT_VERSION,
                "scenario": self.scenario,
                "seed": self.seed,
                "actions": [a.to_dict() for a in self.actions],
                "events": self.events,
                "state": self.state.to_dict(),
                "rng": self.dice.state,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> Battle:
        """Rebuild a battle saved by :meth:`to_json` (exact round trip).

        Raises:
            ValueError: the text is not a battle saved by this format (or its
                ``events`` or ``actions`` are not lists of objects, or a field of
                ``state`` has the wrong type: :func:`state_type_error`, e.g.
                "not a battleline replay (state.units[3].x: Input should be a valid number, got \"abc\")").
        """
        data = cls._replay_data(text)
        for key in ("state", "rng"):
            if not isinstance(data[key], dict):
                raise ValueError(f"not a battleline replay ({key} must be an object)")
        problem = state_type_error(data["state"])
        if problem:
            raise ValueError(f"not a battleline replay ({problem})")
        state = BattleState.from_dict(data["state"])
        battle = cls(state, Dice(data["rng"]), data["scenario"], data["seed"])
        battle.events = data["events"]
        battle.actions = cls._replay_actions(data)
        return battle

    @staticmethod
    def _replay_data(text: str) -> dict[str, Any]:
        """The JSON object of a saved battle, its format, ``scenario``, ``seed``, ``events`` and ``actions`` checked.

        Raises:
            KeyError: a field is missing.
            ValueError: not this format, or a field of the wrong type (the message names it).
        """
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("not a battleline replay (expected a JSON object)")
        if "format" not in data:
            raise ValueError(f"not a battleline replay (no 'format' field; a replay has format {FORMAT_VERSION})")
        if type(data["format"]) is not int or data["format"] != FORMAT_VERSION:  # JSON true is no format 1
            raise ValueError(f"not a battleline replay (format {json.dumps(data['format'])}, "
                             f"expected {FORMAT_VERSION})")
        for key in ("events", "actions"):
            if not (isinstance(data[key], list) and all(isinstance(e, dict) for e in data[key])):
                raise ValueError(f"not a battleline replay ({key} must be a list of objects)")
        for i, event in enumerate(data["events"]):
            for key, kind in EVENT_FIELDS:
                if key not in event:
                    raise ValueError(f"not a battleline replay (events[{i}]: missing field '{key}')")
                if type(event[key]) is not kind:
                    raise ValueError(f"not a battleline replay (events[{i}].{key}: expected "
                                     f"{'an integer' if kind is int else 'a string'}, got {json.dumps(event[key])})")
        if not isinstance(data["scenario"], dict):
            raise ValueError(f"not a battleline replay (scenario must be the saved scenario object, "
                             f"got {type(data['scenario']).__name__})")
        problem = _seed_problem(data["seed"])
        if problem:
            raise ValueError(f"not a battleline replay ({problem})")
        return data

    @staticmethod
    def _replay_actions(data: dict[str, Any]) -> list[Action]:
        """``data["actions"]`` as actions.

        Raises:
            ValueError: an action lacks ``kind`` or has a field of the wrong type ("actions[3].unit: ...").
        """
        out = []
        for i, a in enumerate(data["actions"]):
            try:
                out.append(Action.from_dict(a))
            except KeyError as exc:
                raise ValueError(f"not a battleline replay (actions[{i}]: missing field {exc})") from None
            except ValueError as exc:
                raise ValueError(f"not a battleline replay (actions[{i}].{exc})") from None
        return out

    @classmethod
    def replaying(cls, scenario: Any, seed: int, actions: Iterable[Action]) -> Iterator[Battle]:
        """Re-run a battle from its scenario, seed and actions, step by step.

        Yields one :class:`Battle` object, advanced in place: first as set up by
        :meth:`from_scenario`, then after each action is applied. Exhausting the
        generator leaves the finished re-simulation.

        Raises:
            ValueError: ``seed`` is not an integer >= 0 (a None seed would draw fresh entropy).
            ConfigError: the scenario is invalid.
            IllegalActionError: an action is not legal on re-simulation.
        """
        battle = cls.from_scenario(scenario, seed=seed)  # checks the seed
        yield battle
        for action in actions:
            battle.apply(action)
            yield battle

    @classmethod
    def resimulate(cls, text: str) -> Battle:
        """Re-run a saved battle (:meth:`to_json` text) from its scenario, seed and actions (:meth:`replaying`).

        Raises:
            ValueError: the text is not a battle saved by this format (:meth:`from_json`'s checks).
            IllegalActionError: a saved action is not legal on re-simulation.
        """
        data = cls._replay_data(text)
        *_, battle = cls.replaying(data["scenario"], data["seed"], cls._replay_actions(data))  # the last state
        return battle
