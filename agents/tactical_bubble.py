"""The ``protected_bubble`` tactical agent: the General (or wizard) ringed by four units, moving as one.

Deployment: :func:`tactics.deployment.protected_bubble_template`; the ring's
steps are planned together with the ring tests of :mod:`tactics.manoeuvres`
(``ring_posts``, ``ring_coverage``, ``quarter_balance``). The shared
manoeuvres come from :class:`agents.tactical_base.TacticalAgent`.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import TYPE_CHECKING

from battleline.agents.base import CLOSE
from battleline.agents.steering import (
    angle_diff,
    enemy_edge_facing,
    enemy_edge_sign,
    face_threat,
    landing,
)
from battleline.agents.tactical_base import TacticalAgent, move_options
from battleline.env.rules import space
from battleline.env.rules.actions import END_PHASE, Action
from battleline.env.rules.charge_spots import charge_reach
from battleline.env.rules.movement import can_move, normal_move_allowance, surroundings
from battleline.env.rules.state import UnitState
from battleline.tactics import manoeuvres as mv
from battleline.tactics.deployment import protected_bubble_template
from battleline.tactics.deployment_plan import BACK, LEFT, RIGHT, DeploymentPlan, is_swarm
from battleline.tactics.deployment_terrain import open_half

if TYPE_CHECKING:
    from battleline.env.rules.battle import Battle

RING_FULL = 270.0
"""Degrees of ring coverage that count as a full ring (tactics.md ``protected_bubble`` detection)."""
RING_MARGIN = 5.0
"""Degrees above RING_FULL the forecast of a bubble step must keep (the forecast is rough)."""
HELPER_REACH = 12.0
"""Inches from the asset within which a line unit helps close a gap in its ring."""
RING_MIN_GAIN = 1.0
"""Degrees of coverage a ring unit's move must add to be worth making."""
POCKET_STEP = 0.5
"""Inches the asset must move in a turn to count as moving with its bubble."""
POST_SLACK = 0.1 + 1e-6
"""Inches the front unit of a closing ring may stand short of its post (:meth:`ProtectedBubbleAgent.post_move`):
with the posts RING_GAP apart, it may close to the engine's 1" from the asset but no nearer the side units."""
FLOOR_PENALTY = 20.0
"""Inches added to the miss of a landing short of the front post (it would block the side units)."""
BACK_LIMIT = 100.0
"""Degrees from straight ahead (towards the enemy's edge) beyond which a ring unit faces back."""
BACK_PENALTY = 20.0
"""Inches added to the miss of a ring unit's landing that faces back (:meth:`ProtectedBubbleAgent.step_option`)."""
RING_REACH = 6.0
"""Friends within this many inches of the asset count as its ring (tactics.md ``protected_bubble``)."""


CLOSING_TURNS = 1
"""Turns before the last in which a full bubble steps forward even into the enemy's charge reach."""
BUBBLE_MARCH = 2.0
"""The bubble's longest forward step, in multiples of its slowest member's move (its M; flyers 10", CORE.MOVE.FLY):
a march (CORE.MOVE.MARCH, 2 M), tried before the single moves. Measured (against ``random``, seeds 0-59): a bubble
that only advanced M a turn, after the turns it takes to close, ended the game in its own half (42 wins); marching, 44."""
RING_SAFE_DANGER = 0.0
"""Most :meth:`agents.base.ScriptedAgent.danger` a ring unit may stand in after a forward step into the
enemy's charge reach (:meth:`ProtectedBubbleAgent.ring_unbeaten`): 0, no enemy that could charge it
expects to win. Measured against ``random``: stepping into reach lifted the wins of seeds 0-59 from 45 to
49; with the move check's limit (DANGER_LIMIT, 1.0) instead, shooters in the ring's front walked into
charges that broke them (seeds 5 and 9 lost their wins, 15 of seeds 0-19, measured with the ring's
charges freed as well); with 0, 16."""


class ProtectedBubbleAgent(TacticalAgent):
    """``protected_bubble`` (tactics.md §4.4): the key piece ringed on every side, the ring moving with it.

    Deployment: :func:`tactics.deployment.protected_bubble_template` (on a
    table already set up, the ring is read off the units standing round the
    asset). Each movement phase the bubble moves first, judged by the
    asset's ring coverage (:func:`tactics.manoeuvres.ring_coverage`) at
    each option's landing (:func:`agents.steering.landing`), one move per
    unit: a full ring (>= RING_FULL degrees) steps as one (:meth:`plan_step`:
    every member shifted by the same step, marching while it can, forward
    while no enemy could charge it or none that could would beat the ring
    unit it charged, else sideways), its units facing the enemy
    (:meth:`face_in_ring`), the asset taking the best-covered spot in reach
    (:meth:`pocket_move`). A ring that is not full closes up on posts
    derived from the units' real footprints (:meth:`post_move`,
    :func:`tactics.manoeuvres.ring_posts`: the front unit clears the way,
    the asset comes level with the side units, they turn in on its flanks)
    when the asset deployed level with its side units (a shallow front
    unit); with the asset in the back row behind deeper blocks, where the
    front unit would have to step clear and come back (a turn lost: in
    play that closed the ring later), the asset moves up first, to the
    spot its ring closes best round (:meth:`closed_coverage`), and the
    ring units make the moves that add the most coverage
    (:meth:`close_ring`). Line units within HELPER_REACH help close gaps.
    Ring units never turn their rear to the enemy. Swarms screen the
    asset from the nearest enemy missile unit (``swarm_screen``). The rest
    of the army advances beside the bubble and engages; fast units flank.
    In the game's last turn the units outside the bubble take the moves
    that hold the most table quarters (:meth:`quarter_move`).
    """

    name = "protected_bubble"
    flank_groups = frozenset({LEFT, RIGHT})
    engage_turn = 1
    RING = ("ring_front", "ring_left", "ring_right", "ring_rear")
    posts = True
    """Whether a ring that is not full closes on :meth:`post_move`'s posts (set by :meth:`make_plan`)."""

    def make_plan(self, battle: Battle) -> DeploymentPlan:
        """The bubble template in the middle of the zone (a ring that closes in play: in the middle of the own half
        whose no-man's land hampers an advance least, :func:`tactics.deployment.open_half`); on a table already
        set up, the ring as it stands."""
        army = self.army(battle)
        plan = protected_bubble_template(army, battle.state.table_w)
        asset = next((uid for uid, g in plan.groups.items() if g == "asset"), None)
        self.posts = asset is None or plan.targets[asset].row != BACK
        if not self.posts and battle.state.stage == "deploy":
            half = open_half(battle, self.side)
            if half is not None:
                w = battle.state.table_w
                plan = protected_bubble_template(army, w, w / 4 if half == LEFT else 3 * w / 4)
        if battle.state.stage != "deploy":
            self.posts = True
            self.ring_as_placed(plan, army)
        return plan

    def ring_as_placed(self, plan: DeploymentPlan, army: list[UnitState]) -> None:
        """Name the ring after the units standing round the asset: the nearest in front, left, right and behind it."""
        asset = next((u for u in army if plan.groups.get(u.uid) == "asset" and u.alive), None)
        if asset is None:
            return
        for uid, group in list(plan.groups.items()):
            if group in self.RING:
                plan.groups[uid] = "line"
        names = {"front": "ring_front", "left": "ring_left", "right": "ring_right", "rear": "ring_rear"}
        best: dict[str, tuple[float, int]] = {}
        for u in army:
            if u.uid == asset.uid or u.character or not u.alive or space.unit_distance(asset, u) > RING_REACH:
                continue
            arc = mv.arc_of_point(asset, u.x, u.y)
            if arc in names and (arc not in best or space.unit_distance(asset, u) < best[arc][0]):
                best[arc] = (space.unit_distance(asset, u), u.uid)
        for arc, (_, uid) in best.items():
            plan.groups[uid] = names[arc]

    def asset(self, battle: Battle) -> UnitState | None:
        """The protected unit, if still on the table."""
        for u in self.army(battle):
            if self.group(u) == "asset" and u.alive:
                return u
        return None

    ORDER = ("ring_front", "asset", "ring_left", "ring_right", "ring_rear")
    """The order the bubble closes up in: the front unit first clears (or closes) the asset's front, the asset
    comes level with the side units, then they close in on it (a step goes in its own order, see
    :meth:`rigid_step`)."""

    def choose_move(self, battle: Battle, legal: list[Action]) -> Action:
        """The bubble first (:attr:`ORDER`, the asset first when it moves up into its pocket), then the others
        (the base order)."""
        options = move_options(legal)
        key = (battle.state.turn, battle.state.active)
        if self._step_key != key:
            self._step_key, self._step = key, self.plan_step(battle, options)
        order = self.ORDER if self.posts else ("asset",) + tuple(g for g in self.ORDER if g != "asset")
        for group in order:
            for uid, opts in sorted(options.items()):
                u = battle.unit(uid)
                if self.group(u) != group:
                    continue
                opt = self.move_option(battle, u, opts)
                if opt is not None and opt in opts:
                    return opts[opt]
        rest = [a for a in legal if not (a.kind == "move" and self.group(battle.unit(a.unit)) in self.ORDER)]
        return super().choose_move(battle, rest) if rest else END_PHASE

    def move_option(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """A full ring steps forward together, else the ring closes round the asset; swarms screen; others as the tactical agents."""
        group = self.group(u)
        if group == "asset" or group in self.RING:
            asset = self.asset(battle)
            if asset is None:
                return self.engage(battle, u, options) if group in self.RING else None
            if self._step:
                return self.rigid_step(battle, u, options)
            if self.posts and mv.ring_coverage(battle, asset) < RING_FULL:
                return self.post_move(battle, u, asset, options)
            if u is asset:
                return self.pocket_move(battle, u, options)
            return self.face_in_ring(battle, u, asset, options) or self.close_ring(battle, u, asset, options)
        if is_swarm(u):
            return self.screen_move(battle, u, options)
        asset = self.asset(battle)
        if (asset is not None and group == "line" and not self._step
                and space.unit_distance(asset, u) <= HELPER_REACH and mv.ring_coverage(battle, asset) < RING_FULL):
            option = self.close_ring(battle, u, asset, options)
            if option is not None:
                return option
        option = super().move_option(battle, u, options)
        if option is not None and asset is not None and not self.keeps_ring(battle, u, asset, option):
            option = None
        if battle.state.turn >= battle.state.max_turns:
            return self.quarter_move(battle, u, options, option)
        return option

    def quarter_move(self, battle: Battle, u: UnitState, options: Collection[str], planned: str | None) -> str | None:
        """In the game's last turn (CORE.GAME.LENGTH), ``planned`` (None: stay) unless another move, or
        staying, leaves more table quarters held (CORE.VP.QUARTERS, 100 VP each:
        :func:`tactics.manoeuvres.quarter_balance` with ``u`` at the move's landing); the first best such
        move, options in name order. Kills are made by then: what is left to score is where units stand
        (measured against ``random``: one more win in seeds 0-59, a draw by 8 VP turned by a quarter)."""
        env = surroundings(battle, u)

        def balance(option: str | None) -> int:
            moved = {u.uid: landing(battle, u, option, env)} if option is not None else None
            return mv.quarter_balance(battle, self.side, moved)

        best, best_balance = planned, balance(planned)
        for option in [None, *sorted(o for o in options if not (o.startswith("reform") or o in ("join", "leave")))]:
            held = balance(option)
            if held > best_balance:
                best, best_balance = option, held
        return best

    @staticmethod
    def keeps_ring(battle: Battle, u: UnitState, asset: UnitState, option: str) -> bool:
        """Whether ``u``'s move leaves a full ring (>= RING_FULL degrees) full: a unit standing within
        RING_REACH of the asset is part of its cover, and does not walk out of a full ring."""
        if space.unit_distance(asset, u) > RING_REACH:
            return True
        if mv.ring_coverage(battle, asset) < RING_FULL:
            return True
        return mv.ring_coverage(battle, asset, moved={u.uid: landing(battle, u, option)}) >= RING_FULL

    def plan_step(self, battle: Battle, options: dict[int, dict[str, Action]]) -> dict[int, str]:
        """The bubble's step this movement phase: a move option per member, or {} to close the ring instead.

        Only a full ring (>= RING_FULL degrees) steps, never back towards its own edge (a unit
        charged there would flee off the table); forward only where no enemy could charge a member
        afterwards (:meth:`reach_margin`) or none that could expects to beat the ring unit it would
        charge (:meth:`ring_unbeaten`), sideways only where no enemy could charge or the nearest
        gets no nearer to charging one: the ring does not walk into charges it would lose. Steps are
        tried in turn: towards the enemy's edge by a march (BUBBLE_MARCH times the slowest member's
        move, :func:`env.rules.movement.normal_move_allowance`), its whole move, three quarters of it (a turn's move), half of it, then
        half of it to either side, away from the nearest enemy first. Each is played out on one
        copy of the battle (moves roll no dice): the members move front first along the step,
        each taking the option whose landing (:func:`agents.steering.landing`) comes closest to
        its pose shifted by the step. The first step after which the ring is still full (with
        RING_MARGIN to spare) is taken; its order is kept in ``_step_order``.
        """
        asset = self.asset(battle)
        if asset is None or asset.uid not in options or mv.ring_coverage(battle, asset) < RING_FULL:
            return {}
        members = [m for m in self.army(battle) if self.group(m) in self.ORDER and m.alive and m.uid in options]
        slowest = min(normal_move_allowance(m) for m in members)
        ahead = enemy_edge_sign(asset.side)
        enemy = min(self.enemies(battle), key=lambda e: (space.unit_distance(asset, e), e.uid), default=None)
        away = -1.0 if enemy is not None and enemy.x > asset.x else 1.0
        steps = [(0.0, ahead, BUBBLE_MARCH * slowest), (0.0, ahead, slowest), (0.0, ahead, 0.75 * slowest),
                 (0.0, ahead, slowest / 2), (away, 0.0, slowest / 2), (-away, 0.0, slowest / 2)]
        now = self.reach_margin(battle, members)
        for dx, dy, step in steps:
            sim = battle.clone()
            order = sorted(members, key=lambda m: (-(m.x * dx + m.y * dy), m.uid))
            plan: dict[int, str] = {}
            for m in order:
                mu = sim.unit(m.uid)
                legal = {a.option: a for a in sim.legal_actions() if a.kind == "move" and a.unit == m.uid}
                option = self.step_option(sim, mu, legal, (mu.x + dx * step, mu.y + dy * step), m is asset)
                if option is not None:
                    sim.apply(legal[option])
                    plan[m.uid] = option
            if asset.uid not in plan or mv.ring_coverage(sim, sim.unit(asset.uid)) < RING_FULL + RING_MARGIN:
                continue
            margin = self.reach_margin(sim, [sim.unit(m.uid) for m in members])
            ring = [sim.unit(m.uid) for m in members if m is not asset]
            if (margin > 0.0 or (dy == 0.0 and margin >= min(now, 0.0))
                    or (dy != 0.0 and (self.closing_in(battle) or self.ring_unbeaten(sim, ring)))):
                self._step_order = [m.uid for m in order if m.uid in plan]
                return plan
        return {}

    def ring_unbeaten(self, battle: Battle, ring: list[UnitState]) -> bool:
        """Whether no enemy that could charge one of the ``ring`` units next turn expects to win the fight
        (:meth:`agents.base.ScriptedAgent.danger` at most RING_SAFE_DANGER for each): a full ring may then step
        into the enemy's charge reach, the asset still behind it, and its units charge out in turn."""
        return all(self.danger(battle, m) <= RING_SAFE_DANGER for m in ring)

    def reach_margin(self, battle: Battle, members: list[UnitState]) -> float:
        """Inches by which the nearest enemy falls short of charging one of ``members`` (its gap less its
        charge reach, M + 6", CORE.CHARGE.ELIGIBLE); negative when one could charge; inf with no enemy."""
        return min((space.unit_distance(m, e) - charge_reach(e) for m in members for e in self.enemies(battle)
                    if not e.fleeing), default=math.inf)

    @staticmethod
    def step_option(battle: Battle, u: UnitState, options: Collection[str], goal: tuple[float, float],
                    free_facing: bool, floor: float | None = None) -> str | None:
        """The option whose landing comes closest to ``goal`` (a turn away from the unit's facing costs
        1" per 180 degrees unless ``free_facing``), or None when staying put is as close.

        With ``floor`` (inches towards the enemy's edge, as a table y for blue and minus one for red), a
        pose whose centre stays short of it costs FLOOR_PENALTY inches more (the front unit of a
        closing ring must clear the way before it closes up again); unless ``free_facing``, a pose
        facing more than BACK_LIMIT degrees away from the enemy's edge costs BACK_PENALTY more (a
        ring unit never shows the enemy its rear)."""
        env = surroundings(battle, u)
        turn_cost = 0.0 if free_facing else 1.0 / 180.0
        ahead = enemy_edge_sign(u.side)
        forward = enemy_edge_facing(u.side)

        def penalty(end: UnitState) -> float:
            short = FLOOR_PENALTY if floor is not None and ahead * end.y < floor else 0.0
            back = BACK_PENALTY if not free_facing and abs(angle_diff(end.facing, forward)) > BACK_LIMIT else 0.0
            return short + back

        best, best_miss = None, math.hypot(goal[0] - u.x, goal[1] - u.y) + penalty(u)
        for opt in options:
            if opt.startswith("reform") or opt in ("join", "leave"):
                continue
            end = landing(battle, u, opt, env)
            miss = (math.hypot(end.x - goal[0], end.y - goal[1]) + abs(angle_diff(end.facing, u.facing)) * turn_cost
                    + penalty(end))
            if miss < best_miss - 0.1:
                best, best_miss = opt, miss
        return best

    def post_move(self, battle: Battle, u: UnitState, asset: UnitState, options: Collection[str]) -> str | None:
        """A bubble member's move towards its post round the asset (:func:`tactics.manoeuvres.ring_posts`).

        The move whose landing comes nearest the post (:meth:`step_option`); the front unit does not
        stay short of its post by more than POST_SLACK inches (it steps ahead first and closes back
        onto the asset later, so that the side units can come level with the asset). A side or rear
        unit that cannot get nearer its post makes the move that adds the most coverage (:meth:`close_ring`).
        """
        ring = {g[len("ring_"):]: m for m in self.army(battle)
                if (g := self.group(m)) in self.RING and m.alive and not m.fleeing}
        key = "asset" if u.uid == asset.uid else self.group(u)[len("ring_"):]
        posts = mv.ring_posts(asset, ring)
        if key not in posts:
            return None
        goal = posts[key]
        ahead = enemy_edge_sign(u.side)
        floor = ahead * goal[1] - POST_SLACK if key == "front" else None
        option = self.step_option(battle, u, options, goal, u is asset, floor)
        if option is None and key not in ("asset", "front"):
            option = self.close_ring(battle, u, asset, options)
        return option

    def rigid_step(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``u``'s part of the bubble's step, once every member before it in the step's order has moved."""
        option = self._step.get(u.uid)
        if option is None or option not in options:
            return None
        for uid in self._step_order:
            if uid == u.uid:
                return option
            if can_move(battle, battle.unit(uid)) and self._step.get(uid) in move_options(battle.legal_actions()).get(uid, {}):
                return None
        return option

    @staticmethod
    def face_in_ring(battle: Battle, u: UnitState, asset: UnitState, options: Collection[str]) -> str | None:
        """A full ring's unit turned away from the nearest enemy (a sidestep leaves it so) reforms to
        face it (:func:`agents.steering.face_threat`) when the ring stays full."""
        option = face_threat(battle, u, options)
        if option is None:
            return None
        end = landing(battle, u, option)
        return option if mv.ring_coverage(battle, asset, moved={u.uid: end}) >= RING_FULL else None

    def close_ring(self, battle: Battle, u: UnitState, asset: UnitState, options: Collection[str]) -> str | None:
        """The ring unit's move that leaves the asset best covered (staying put unless a move covers
        RING_MIN_GAIN degrees more), never one that turns it to face back (BACK_LIMIT)."""
        env = surroundings(battle, u)
        forward = enemy_edge_facing(u.side)
        best, best_cov = None, mv.ring_coverage(battle, asset) + RING_MIN_GAIN
        for opt in options:
            if opt == "reform_face":
                continue
            end = landing(battle, u, opt, env)
            if abs(angle_diff(end.facing, forward)) > BACK_LIMIT:
                continue
            cov = mv.ring_coverage(battle, asset, moved={u.uid: end})
            if cov > best_cov:
                best, best_cov = opt, cov
        return best

    def pocket_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """The asset's move with the best ring round it where it lands (tactics.md ``protected_bubble``).

        Every option (and staying put) is scored by :func:`tactics.manoeuvres.ring_coverage` at the
        pose the move ends in (:func:`agents.steering.landing`): a full ring (>= RING_FULL degrees)
        first, then (with a full ring) a move of at least POCKET_STEP inches, then more coverage,
        then fewer inches from the front ring unit. While the ring is not full the coverage is the one
        left once the ring units have closed round the landing (:meth:`closed_coverage`), not the one
        at the landing itself: the asset picks the spot its ring can close on this turn.
        """
        env = surroundings(battle, u)
        front = next((f for f in self.army(battle) if self.group(f) == "ring_front" and f.alive and not f.fleeing), None)
        closing = mv.ring_coverage(battle, u) < RING_FULL

        def score(end: UnitState, opt: str | None) -> tuple[bool, bool, float, float]:
            cov = self.closed_coverage(battle, u, opt) if closing else mv.ring_coverage(battle, end)
            step = math.hypot(end.x - u.x, end.y - u.y)
            gap = math.hypot(end.x - front.x, end.y - front.y) if front is not None else 0.0
            full = cov >= RING_FULL
            return full, full and step >= POCKET_STEP, cov, -gap

        best, best_key = None, score(u, None)
        for opt in options:
            if opt.startswith("reform") or opt in ("join", "leave"):
                continue
            key = score(landing(battle, u, opt, env), opt)
            if key > best_key:
                best, best_key = opt, key
        return best

    def closed_coverage(self, battle: Battle, asset: UnitState, option: str | None) -> float:
        """Degrees of ring coverage round ``asset`` once it has taken ``option`` (None: stays put) and its
        ring units have closed round it as in play (:meth:`face_in_ring`, :meth:`close_ring`, in
        :attr:`ORDER`, one move each), played out on ``battle.clone()`` (moves roll no dice)."""
        sim = battle.clone()
        if option is not None:
            act = next((a for a in sim.legal_actions() if a.kind == "move" and a.unit == asset.uid and a.option == option), None)
            if act is None:
                return mv.ring_coverage(battle, asset)
            sim.apply(act)
        ring = [g for g in self.ORDER if g != "asset"]
        while True:
            options = move_options([a for a in sim.legal_actions() if a.kind == "move"])
            move = None
            for group in ring:
                for uid, opts in sorted(options.items()):
                    m, a = sim.unit(uid), sim.unit(asset.uid)
                    if self.group(m) != group:
                        continue
                    opt = self.face_in_ring(sim, m, a, opts) or self.close_ring(sim, m, a, opts)
                    if opt is not None and opt in opts:
                        move = opts[opt]
                        break
                if move is not None:
                    break
            if move is None:
                return mv.ring_coverage(sim, sim.unit(asset.uid))
            sim.apply(move)

    def screen_move(self, battle: Battle, u: UnitState, options: Collection[str]) -> str | None:
        """``swarm_screen``: stand between the asset and the nearest enemy missile unit."""
        asset = self.asset(battle)
        shooters = [e for e in self.enemies(battle) if e.missile is not None]
        if asset is None or not shooters:
            return super().move_option(battle, u, options)
        s = min(shooters, key=lambda e: (space.unit_distance(asset, e), e.uid))
        return self.toward(battle, u, mv.screen_point(asset, (s.x, s.y), u), options, "march")

    def should_flee(self, battle: Battle, t: UnitState, c: UnitState, facing: str) -> bool:
        """A ring unit holds its place round a living asset (a fleeing one opens the ring); others as the base agent."""
        if self.group(t) in self.RING and self.asset(battle) is not None:
            return False
        return super().should_flee(battle, t, c, facing)

    def consequences_acceptable(self, battle: Battle, c: UnitState, t: UnitState) -> bool:
        """Ring units also stay home unless the charge is safe (the ring is the asset's shield). In the game's
        last turn (:meth:`last_turn`) no enemy turn follows: every charge the base rule allows is made."""
        if self.last_turn(battle):
            return True
        if self.group(c) in self.RING and self.asset(battle) is not None and space.unit_distance(c, t) > CLOSE / 2:
            return False
        return super().consequences_acceptable(battle, c, t)

    @staticmethod
    def closing_in(battle: Battle) -> bool:
        """Whether the bubble steps forward into the enemy's charge reach: in the second player's last
        CLOSING_TURNS turns before the last, so that its units can charge in the game's last player turn
        (:meth:`last_turn`; a draw needs the enemy destroyed). The first player keeps its distance: its
        ring never charges out (the enemy's last turn follows)."""
        s = battle.state
        return s.active != s.first_player and s.turn >= s.max_turns - CLOSING_TURNS

    @staticmethod
    def last_turn(battle: Battle) -> bool:
        """Whether this is the game's last player turn (CORE.GAME.LENGTH: the last game turn, the second
        player's): no enemy turn follows, so an opened ring costs nothing and only what is destroyed now counts."""
        s = battle.state
        return s.turn >= s.max_turns and s.active != s.first_player
