"""Scripted agents that play the tactics library, part 2: deployment templates paired with their manoeuvres.

Each agent is a deployment template of :mod:`tactics.deployment` plus the
manoeuvres of :mod:`tactics.manoeuvres` that belong to it in
``shared/rules/tactics.md``; the manoeuvres every tactical agent shares
(flank seeking and combined charges, charge consequence analysis, feigned
flight, restrained pursuit, the flyer feint defended, engaging) come from
:class:`agents.tactical_base.TacticalAgent`. The agents live by family in
:mod:`agents.tactical_flanks`, :mod:`agents.tactical_ground` and
:mod:`agents.tactical_bubble`; this module holds the ``open_loop`` baseline
and the registry :data:`TACTICAL_AGENTS`.

The agents (registry names):

=========================== =======================================================
``flank_teeth``             strong wings go round to the enemy's rear, the cheap centre delays
``weakened_flank``          Scouts alone on one wing bait, the main body flanks the pursuers
``abandoned_flank``         a fast decoy wing shifts across to the main body in turns 1–2
``shooting_lines``          staggered shooters on high ground, the line unmasks them
``sacrifice_for_deployment`` an isolated irritant shoots, the main army fights elsewhere
``protected_bubble``        the General (or wizard) ringed by four units, moving as one
``bait_and_flank``          a cheap bait in front of a hammer's flank, the hammer punishes
``control_zones``           a holder denies the hill by threat, the rest claim ground
``open_loop``               orders by turn number only, ignoring the enemy (a baseline)
=========================== =======================================================
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from battleline.agents.base import ScriptedAgent
from battleline.agents.tactical_base import TacticalAgent, move_options
from battleline.agents.tactical_bubble import BUBBLE_MARCH, ProtectedBubbleAgent
from battleline.agents.tactical_flanks import (
    DETOUR_GAIN,
    DETOUR_OPTIONS,
    LURE_AHEAD,
    LURE_EDGE_GAP,
    LURE_EDGE_SNAP,
    LURE_SIDE,
    LURE_TURNS,
    STRIKE_MIN_REACH,
    AbandonedFlankAgent,
    BaitAndFlankAgent,
    FlankTeethAgent,
    WeakenedFlankAgent,
)
from battleline.agents.tactical_ground import (
    CONTROL_ENGAGE_TURN,
    HILL_MARGIN,
    ControlZonesAgent,
    SacrificeForDeploymentAgent,
    ShootingLinesAgent,
)
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.state import UnitState
from battleline.tactics.deployment import line_template
from battleline.tactics.deployment_plan import DeploymentPlan

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle


# ============================================================================= the open-loop baseline
class OpenLoopAgent(ScriptedAgent):
    """``open_loop``: orders by turn number only, ignoring the enemy — a baseline that loses to ``line_advance``.

    Deploys the battle line; every unit marches straight ahead in turns 1–2
    and advances straight ahead afterwards (never wheeling towards anyone);
    from turn 3 it declares the first legal charge, whatever it meets;
    charged units always hold; shooters fire at the first legal target;
    winners always pursue.
    """

    name = "open_loop"
    CHARGE_TURN = 3
    MARCH_TURNS = 2

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The battle line."""
        return line_template(self.army(battle), battle.state.table_w)

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """March straight ahead in turns 1–2, advance straight ahead later."""
        if battle.state.turn <= self.MARCH_TURNS and "march" in options:
            return "march"
        return "advance" if "advance" in options else None

    def choose_move(self, battle: Battle, legal: list[Action]) -> Action:
        """Each unit in uid order takes its scheduled move (no dead-zone check)."""
        options = move_options(legal)
        for uid in sorted(options):
            option = self.move_option(battle, battle.unit(uid), options[uid])
            if option is not None and option in options[uid]:
                return options[uid][option]
        return END_PHASE

    def choose_charge(self, battle: Battle, legal: list[Action]) -> Action:
        """From turn 3 the first legal charge (lowest charger, then target uid), else none."""
        if battle.state.turn < self.CHARGE_TURN:
            return END_PHASE
        charges = sorted((a for a in legal if a.kind == "charge"), key=lambda a: (a.unit, a.target))
        return charges[0] if charges else END_PHASE

    def choose_reaction(self, battle: Battle, legal: list[Action]) -> Action:
        """Always hold (the only reaction that needs no look at the charger)."""
        return next((a for a in legal if a.option == "hold"), legal[0] if legal else END_PHASE)

    def choose_shot(self, battle: Battle, legal: list[Action]) -> Action:
        """The first legal shot."""
        shots = sorted((a for a in legal if a.kind == "shoot"), key=lambda a: (a.unit, a.target is None, a.target or 0))
        return shots[0] if shots else END_PHASE


TACTICAL_AGENTS: dict[str, type[ScriptedAgent]] = {
    cls.name: cls
    for cls in (
        FlankTeethAgent,
        WeakenedFlankAgent,
        AbandonedFlankAgent,
        ShootingLinesAgent,
        SacrificeForDeploymentAgent,
        ProtectedBubbleAgent,
        BaitAndFlankAgent,
        ControlZonesAgent,
        OpenLoopAgent,
    )
}
"""Registry name -> agent class, in display order."""

__all__ = [
    "BUBBLE_MARCH",
    "CONTROL_ENGAGE_TURN",
    "DETOUR_GAIN",
    "DETOUR_OPTIONS",
    "HILL_MARGIN",
    "LURE_AHEAD",
    "LURE_EDGE_GAP",
    "LURE_EDGE_SNAP",
    "LURE_SIDE",
    "LURE_TURNS",
    "STRIKE_MIN_REACH",
    "TACTICAL_AGENTS",
    "AbandonedFlankAgent",
    "BaitAndFlankAgent",
    "ControlZonesAgent",
    "FlankTeethAgent",
    "OpenLoopAgent",
    "ProtectedBubbleAgent",
    "SacrificeForDeploymentAgent",
    "ShootingLinesAgent",
    "TacticalAgent",
    "WeakenedFlankAgent",
    "move_options",
]
