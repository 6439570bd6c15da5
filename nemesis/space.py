"""`explore`'s space of fault schedules: fault x target role x moment, within the shared bounds of
nemesis/bounds.py, and the three things a search does with it: draw a schedule, mutate one, and
check that one is inside the space (runs/explore.py).

A schedule is a list of `Move`s: a fault, the role (or, for a partition's `cut`, the two roles) it
aims at, when it starts and how long it is held. A move becomes a timed `Step` of
nemesis/schedule.py (`Move.step`), the role a target of nemesis/targets.py resolved at the fault's
moment, and a run plays the steps as a script (`NemesisPlan(script=...)`).

The bounds (`Space.problems`): nemesis/bounds.py's, which the overlapping mix and shrinking share
(at most MAX_AT_ONCE faults in place at once, one disk fault in a run, one network fault at once,
no network heal in a pause, holds, shapes, aims, every fault in place between the quiet `start`
and `duration`); a search rejects a schedule that breaks one, where the mix repairs its draws.
The space's own, narrower choices: at most `max_steps` faults in a run, holds from `holds`,
moments on a GRID, only the faults and roles of the campaign, and only the partition shapes whose
sides roles name (bounds.ROLE_SHAPES).

Every draw comes from the `random.Random` the caller passes (explore derives one per run from the
campaign's seed): the same seed, the same schedules.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis import bounds
from kafka_chaos.nemesis.bounds import BROKER_FAULTS, DISK_WINDOW_S, MAX_AT_ONCE
from kafka_chaos.nemesis.bounds import ROLE_SHAPES as SHAPES
from kafka_chaos.nemesis.faults import HEALS, RANDOM
from kafka_chaos.nemesis.guards import HOLD_NAMES, NAMED_DEFAULTS, NEXT, named_holds
from kafka_chaos.nemesis.roles import (
    BROKER_ROLES,
    CAME_BACK,
    LAST_ISR_MEMBER,
    RELATED,
    binding,
    related_for,
    roles_for,
)
from kafka_chaos.nemesis.roles import BY_NAME as ROLES
from kafka_chaos.nemesis.schedule import Step

#: Today's undirected families, the safe configuration's threats: what `explore` draws from unless
#: `--nemesis` names others.
DEFAULT_FAULTS = ("kill", "pause", "partition", "wipe", "lose-unflushed")
#: The holds a fault that stays in place is drawn from (s): a few heartbeats up to well past every
#: timeout of harness/config.py's fast failure detection.
HOLDS = (2.0, 4.0, 6.0, 8.0, 12.0)
#: At most this many faults in one run (CREB: most crash-recovery bugs need at most three crashes).
MAX_STEPS = 4
#: The workload key moves are resolved at when the space checks them against the bounds.
_KEY = "chaos/0"
#: Moments are multiples of this many seconds.
GRID = 0.5
#: How often a drawn fault starts inside another one's span (so that faults overlap).
OVERLAP_BIAS = 0.5
#: The guards a move may wait for (nemesis/guards.py), each with the roles whose first use binds
#: what it reads: an ISR left with one or two members, a partition's or the quorum's new leader,
#: the old leader or a follower fenced, the old controller's or a voter's metadata log emptied.
GUARDS: dict[str, tuple[str, ...]] = {
    "isr:{key} <= 1": (),
    "isr:{key} <= 2": (),
    "leader:{key} != $leader": ("leader",),
    "controller != $controller": ("controller",),
    "fenced:$leader": ("leader",),
    "fenced:$follower": ("follower",),
    "emptied:$controller": ("controller",),
    "emptied:$any_controller": ("any-controller",),
}
#: The guard a move aimed at the last ISR member waits for: it names a node only then.
LAST_ISR_GUARD = "isr:{key} <= 1"
#: How long a guarded move waits at most (s), and how often a drawn move is guarded.
WITHINS = (10.0, 20.0, 40.0)
GUARD_BIAS = 0.3
#: How often a drawn move aims at a related role, when the schedule so far binds one.
RELATED_BIAS = 0.3
#: What each related role reads: the roles whose first use binds it.
NEEDS: dict[str, tuple[str, ...]] = {r.name: r.needs for r in RELATED}


@dataclass(frozen=True)
class Chain:
    """A shape a fresh draw takes: how often each move after the first aims at a role related to
    an earlier one, waits for a guard, and starts inside an earlier one's span. `explore` chooses
    among them by the depth their runs reach (runs/bandit.py); none names a bug or a release."""

    name: str
    related: float
    guard: float
    overlap: float
    doc: str
    #: the fewest moves it draws (a chain of one move is no chain)
    fewest: int = 2


CHAINS: tuple[Chain, ...] = (
    Chain("scatter", RELATED_BIAS, GUARD_BIAS, OVERLAP_BIAS, "moves mostly independent of each other", fewest=1),
    Chain("related", 1.0, GUARD_BIAS, 1.0, "each move on a role related to an earlier one's, inside its span"),
    Chain("guarded", RELATED_BIAS, 1.0, OVERLAP_BIAS, "each move waits for a state of the cluster"),
    Chain("causal", 1.0, 1.0, 1.0, "each move waits for a state, inside an earlier one's span, on a related role"),
)
CHAIN: dict[str, Chain] = {c.name: c for c in CHAINS}
#: Where a mutation aims the move it adds at a run's deepest waypoint (Space.deepen): per ladder and
#: rung reached, the roles that name the waypoint's nodes at its moment, the next rung's target
#: (checkers/measures/ladders.py): the partition's leader, the last replica, or its new leader;
#: the old or the new quorum leader.
NEXT_ROLES: dict[tuple[str, int], tuple[str, ...]] = {
    ("data", 1): ("leader", "other-follower"),
    ("data", 2): ("leader", "last-isr-member"),
    ("data", 3): ("new-leader", "follower"),
    ("quorum", 1): ("old-controller", "controller"),
    ("quorum", 2): ("old-controller", "new-controller"),
    ("voter", 1): ("controller", "new-controller"),
    ("voter", 2): ("new-controller", "old-controller"),
}
#: The holds by name a space draws beside its seconds (nemesis/guards.py).
NAMED_HOLDS: tuple[str, ...] = HOLD_NAMES


@dataclass(frozen=True)
class Move:
    """One fault of a schedule: `roles` holds one role (two for a partition's `cut`); `hold` seconds
    or a hold's name (nemesis/guards.py: the run's timeouts, or `next`); `when` a guard (its `{key}`
    the run's first key) it waits for from `at`, up to `within` seconds."""

    at: float
    fault: str
    roles: tuple[str, ...]
    hold: float | str | None = None
    shape: str | None = None
    when: str | None = None
    within: float | None = None

    @property
    def span(self) -> tuple[float, float]:
        """When it may be in place, its holds by name at Kafka's defaults (Space.played has the run's)."""
        return self.at, self.at + (self.within or 0.0) + _seconds(self.hold, NAMED_DEFAULTS)

    @property
    def binds(self) -> bool:
        """Whether it aims at one side, so that its first use of a role binds that role's node."""
        return len(self.roles) == 1 and self.shape not in ("cut", "quorum-leader")

    def target(self, key: str) -> str:
        """Its target expression (nemesis/targets.py) for a run whose first key is `key`."""
        return "|".join(ROLES[r].resolve(key) for r in self.roles)

    def step(self, key: str, bind: str | None = None) -> Step:
        named = self.hold if isinstance(self.hold, str) else None
        hold = None if named else self.hold
        when = self.when.format(key=key) if self.when else None
        options = {"shape": self.shape} if self.shape else {}
        return Step(
            self.at, self.fault, self.target(key), hold, options, named, when, self.within if when else None, bind
        )

    def label(self) -> str:
        """One short line for tables: `8s partition(cut) leader|controller for 6s`."""
        fault = f"{self.fault}({self.shape})" if self.shape else self.fault
        hold = (
            f" for {self.hold:g}s" if isinstance(self.hold, float | int) else f" for {self.hold}" if self.hold else ""
        )
        when = f" when {self.when} (within {self.within:g}s)" if self.when else ""
        return f"{self.at:g}s {fault} {'|'.join(self.roles)}{hold}{when}"

    def to_json(self) -> dict[str, Any]:
        out = {"at": self.at, "fault": self.fault, "roles": list(self.roles), "hold": self.hold, "shape": self.shape}
        return {**out, **({"when": self.when, "within": self.within} if self.when else {})}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Move:
        return cls(
            float(data["at"]),
            str(data["fault"]),
            tuple(data["roles"]),
            data.get("hold"),
            data.get("shape"),
            data.get("when"),
            data.get("within"),
        )


def _seconds(hold: float | str | None, named: dict[str, float], until_next: float | None = None) -> float:
    """A hold's length: seconds as given, a timeout's by `named`, `next` until `until_next` (s after
    its move's `at`; 0 when unknown), none a disk fault's window."""
    if hold is None:
        return DISK_WINDOW_S
    if isinstance(hold, str):
        return named[hold] if hold in named else max(until_next or 0.0, bounds.MIN_HOLD_S)
    return float(hold)


def at_once(moves: Sequence[Move]) -> int:
    """The most faults in place at one moment (bounds.most_at_once)."""
    return bounds.most_at_once(played(moves, NAMED_DEFAULTS))


def played(moves: Sequence[Move], named: dict[str, float], key: str = _KEY) -> list[Step]:
    """The moves as the bounds see them (nemesis/bounds.py): each a step held for as long as it may
    be in place, with its guard's wait, its hold by name in seconds, `next` until the next move may
    have acted."""
    out = []
    ordered_moves = ordered(moves)
    for i, m in enumerate(ordered_moves):
        nxt = ordered_moves[i + 1] if i + 1 < len(ordered_moves) else None
        until = None if nxt is None else nxt.at + (nxt.within or 0.0) - m.at
        step = m.step(key)
        hold = _seconds(m.hold, named, until) if m.hold is not None else None
        out.append(replace(step, hold=hold, hold_name=None))
    return out


def bindings(moves: Sequence[Move]) -> list[str | None]:
    """Per move (in the order given, which must be the schedule's), the name its first use of a role
    binds, or None."""
    seen: set[str] = set()
    out: list[str | None] = []
    for m in moves:
        name = m.roles[0] if m.binds and m.roles[0] not in seen else None
        if name is not None:
            seen.add(name)
        out.append(None if name is None else binding(name))
    return out


@dataclass(frozen=True)
class Space:
    """The schedules one campaign draws from: its faults, the roles that name something in its
    runs, and each run's length."""

    faults: tuple[str, ...]
    roles: tuple[str, ...]
    duration: float
    #: Quiet seconds before the first fault (the liveness baseline is their second half).
    start: float = 5.0
    holds: tuple[float | str, ...] = HOLDS
    max_steps: int = MAX_STEPS
    max_at_once: int = MAX_AT_ONCE
    #: The related roles its moves may aim at (nemesis/roles.py RELATED), once an earlier move binds them.
    related: tuple[str, ...] = ()
    #: The guards its moves may wait for (GUARDS' keys).
    guards: tuple[str, ...] = ()
    #: The timeout holds' seconds in its runs (nemesis/guards.py), for the bounds.
    named: dict[str, float] = field(default_factory=lambda: dict(NAMED_DEFAULTS))

    @classmethod
    def for_run(
        cls,
        faults: Sequence[str] | None,
        workload: str,
        group: bool,
        duration: float,
        start: float | None = None,
        share: bool = False,
        config: dict[str, str] | None = None,
    ) -> Space:
        """The space of a campaign's runs; UsageError for a fault `--nemesis` may not mix, or runs
        too short to hold a fault after the quiet start. `config`: the runs' broker settings, for
        the holds named for their timeouts."""
        chosen = tuple(dict.fromkeys(f.partition("@")[0] for f in faults)) if faults else DEFAULT_FAULTS
        unknown = [f for f in chosen if f not in RANDOM]
        if unknown:
            raise UsageError(f"unknown fault {', '.join(unknown)}: expected some of {', '.join(RANDOM)}")
        quiet = min(5.0, duration / 4) if start is None else start
        if duration - quiet < DISK_WINDOW_S:
            raise UsageError(f"runs of {duration:g} s leave no room for a fault after {quiet:g} s of quiet")
        named = named_holds(config or {})
        room = duration - quiet
        holds = (*(h for h in HOLDS if h <= room), *(h for h in NAMED_HOLDS if named.get(h, 0.0) <= room))
        roles = tuple(r.name for r in roles_for(workload, group, share))
        usable = tuple(g for g, needs in GUARDS.items() if all(n in roles for n in needs))
        return cls(chosen, roles, duration, quiet, holds, related=related_for(roles), guards=usable, named=named)

    # Bounds.

    def problems(self, moves: Sequence[Move]) -> list[str]:
        """What puts `moves` outside the space; [] when it is inside."""
        out = []
        if not moves:
            out.append("no fault")
        if len(moves) > self.max_steps:
            out.append(f"{len(moves)} faults, more than {self.max_steps}")
        for m in moves:
            out += [f"{m.label()}: {p}" for p in self._move_problems(m)]
        out += _order_problems(ordered(moves))
        steps = played(moves, self.named)
        breaches = bounds.problems(steps, start=self.start, duration=self.duration, max_at_once=self.max_at_once)
        out += [f"{b.bound}: {b.why}" for b in breaches]
        return out

    def _move_problems(self, m: Move) -> list[str]:
        out = []
        if m.fault not in self.faults:
            out.append(f"fault {m.fault} is not in this space")
        unknown = [r for r in m.roles if r not in self.roles and r not in self.related]
        if unknown:
            out.append(f"role {', '.join(unknown)} names nothing here")
        if m.fault in HEALS and m.hold not in self.holds:
            out.append(f"hold {m.hold} is not one of {self.holds}")
        if m.fault not in HEALS and m.hold is not None:
            out.append("a fault nothing undoes is not held")
        if m.when is not None and (m.when not in self.guards or m.within not in WITHINS):
            out.append(f"guard {m.when} within {m.within} is not one of {self.guards} within {WITHINS}")
        if m.fault == "partition":
            wanted = {"cut": 2}.get(m.shape or "", 1)
            if m.shape not in SHAPES:
                out.append(f"partition shape {m.shape} is not one of {SHAPES}")
            elif len(m.roles) != wanted or len(set(m.roles)) != len(m.roles):
                out.append(f"a {m.shape} partition aims at {wanted} distinct role(s)")
        elif m.shape is not None or len(m.roles) != 1:
            out.append("only a partition takes a shape, and only a cut two roles")
        if round(m.at / GRID) * GRID != m.at:
            out.append(f"not on the {GRID:g} s grid")
        return out

    # Draws.

    def _snap(self, t: float, length: float) -> float:
        first = math.ceil(self.start / GRID) * GRID
        last = math.floor((self.duration - length) / GRID) * GRID
        return min(max(round(t / GRID) * GRID, first), last)

    def _aims(self, fault: str) -> tuple[str, ...]:
        """The roles `fault` is drawn at: a stall's or a remote-storage gate's, the brokers' (bounds AIM)."""
        if fault in BROKER_FAULTS:
            return tuple(r for r in self.roles if r in BROKER_ROLES) or self.roles
        return self.roles

    def draw_move(self, rng: random.Random, near: Sequence[Move] = (), chain: Chain = CHAINS[0]) -> Move:
        """One fault, its role(s), its hold, and its moment: inside another's span (the chain's
        `overlap`) when there are others, anywhere in the run otherwise; a related role (its
        `related`) when `near` binds what one reads, a guard (its `guard`, once there are others)."""
        fault = rng.choice(self.faults)
        shape = None
        aims = self._aims(fault)
        bound = {m.roles[0] for m in near if m.binds}
        # related to what an earlier move did: never the first move, the node that came back only after a heal
        related = [r.name for r in RELATED if r.name in self.related and set(r.needs) <= bound] if near else []
        if not any(_heals(m) for m in near):
            related = [r for r in related if r != CAME_BACK]
        if fault in BROKER_FAULTS:
            related = [r for r in related if r in BROKER_ROLES]
        if related and rng.random() < chain.related:
            aims = tuple(related)
        roles: tuple[str, ...] = (rng.choice(aims),)
        if fault == "partition":
            shapes = [s for s in SHAPES if s != "quorum-leader" or "controller" in self.roles]
            shape = rng.choice(shapes)
            if shape == "quorum-leader":
                roles = ("controller",)
            elif shape == "cut":
                roles = tuple(rng.sample(self.roles, 2))
            elif shape == "replication":
                roles = (rng.choice([r for r in self.roles if r in BROKER_ROLES] or list(self.roles)),)
        hold = rng.choice(self.holds) if fault in HEALS else None
        when = within = None
        usable = [g for g in self.guards if set(GUARDS[g]) <= bound]
        if roles == (LAST_ISR_MEMBER,) and LAST_ISR_GUARD in usable:
            when, within = LAST_ISR_GUARD, rng.choice(WITHINS)  # it names a node only in that state
        elif usable and rng.random() < (chain.guard if near else GUARD_BIAS):
            when, within = rng.choice(usable), rng.choice(WITHINS)
        length = (within or 0.0) + _seconds(hold, self.named)
        if near and rng.random() < chain.overlap:
            other = rng.choice(list(near))
            t = rng.uniform(*other.span)
        else:
            t = rng.uniform(self.start, self.duration - length)
        return Move(self._snap(t, length), fault, roles, hold, shape, when, within)

    def draw(self, rng: random.Random, chain: Chain = CHAINS[0]) -> list[Move]:
        """A schedule of one (the chain's fewest) to `max_steps` faults inside the space, of the
        chain's shape."""
        fewest = min(chain.fewest, self.max_steps)
        wanted = rng.randint(fewest, self.max_steps)
        moves: list[Move] = []
        for _ in range(8 if fewest > 1 else 1):  # a first move that leaves no room for a second: again
            moves = []
            for _ in range(wanted * 8):
                if len(moves) == wanted:
                    break
                move = self.draw_move(rng, moves, chain)
                if not self.problems([*moves, move]):
                    moves.append(move)
            if len(moves) >= fewest:
                break
        return ordered(moves)

    def mutate(self, moves: Sequence[Move], rng: random.Random) -> list[Move]:
        """A neighbour of `moves` inside the space: a fault added, dropped or moved, its role, its
        fault or its hold changed; a fresh draw when no neighbour is found."""
        ops = (self._add, self._drop, self._shift, self._role, self._fault, self._hold)
        for _ in range(32):
            changed = rng.choice(ops)(list(moves), rng)
            if changed is not None and changed != list(moves) and not self.problems(changed):
                return ordered(changed)
        return self.draw(rng)

    def deepen(self, moves: Sequence[Move], waypoint: Any, rng: random.Random) -> list[Move] | None:
        """`moves` with one more move at a waypoint's moment (checkers/measures/ladders.py: a
        `ladder`, its `rung`, its `time` in ns), aimed at a role that names its nodes then
        (NEXT_ROLES), when one fits inside the space; None when none does."""
        wanted = [
            r for r in NEXT_ROLES.get((waypoint.ladder, waypoint.rung), ()) if r in self.roles or r in self.related
        ]
        if not wanted:
            return None
        for _ in range(16):
            move = replace(self.draw_move(rng, moves), when=None, within=None)  # the waypoint is its moment
            length = move.span[1] - move.span[0]
            aimed = replace(move, at=self._snap(waypoint.time / 1e9, length), roles=(rng.choice(wanted),), shape=None)
            if aimed.fault == "partition":
                aimed = replace(aimed, shape=rng.choice(["isolate", "replication"]))
            candidate = ordered([*moves, aimed])
            if len(candidate) <= self.max_steps and not self.problems(candidate):
                return candidate
        return None

    def _add(self, moves: list[Move], rng: random.Random) -> list[Move] | None:
        return [*moves, self.draw_move(rng, moves)] if len(moves) < self.max_steps else None

    def _drop(self, moves: list[Move], rng: random.Random) -> list[Move] | None:
        if len(moves) < 2:
            return None
        moves.pop(rng.randrange(len(moves)))
        return moves

    def _shift(self, moves: list[Move], rng: random.Random) -> list[Move]:
        i = rng.randrange(len(moves))
        m = moves[i]
        length = m.span[1] - m.span[0]
        moves[i] = replace(m, at=self._snap(m.at + rng.choice((-4.0, -2.0, -1.0, 1.0, 2.0, 4.0)), length))
        return moves

    def _role(self, moves: list[Move], rng: random.Random) -> list[Move]:
        i = rng.randrange(len(moves))
        m = moves[i]
        roles = list(m.roles)
        roles[rng.randrange(len(roles))] = rng.choice(self.roles)
        moves[i] = replace(m, roles=tuple(roles))
        return moves

    def _fault(self, moves: list[Move], rng: random.Random) -> list[Move]:
        i = rng.randrange(len(moves))
        fresh = self.draw_move(rng)
        moves[i] = replace(fresh, at=self._snap(moves[i].at, fresh.span[1] - fresh.span[0]))
        return moves

    def _hold(self, moves: list[Move], rng: random.Random) -> list[Move] | None:
        held = [i for i, m in enumerate(moves) if m.hold is not None]
        if not held:
            return None
        i = rng.choice(held)
        moves[i] = replace(moves[i], hold=rng.choice(self.holds))
        return moves

    def to_json(self) -> dict[str, Any]:
        return {
            "faults": list(self.faults),
            "roles": list(self.roles),
            "duration": self.duration,
            "start": self.start,
            "holds": list(self.holds),
            "max_steps": self.max_steps,
            "max_at_once": self.max_at_once,
            "related": list(self.related),
            "guards": list(self.guards),
            "named": self.named,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Space:
        """A saved space (a campaign from before related roles and guards draws none of them)."""
        return cls(
            tuple(data["faults"]),
            tuple(data["roles"]),
            float(data["duration"]),
            float(data["start"]),
            tuple(data["holds"]),
            int(data["max_steps"]),
            int(data["max_at_once"]),
            tuple(data.get("related", ())),
            tuple(data.get("guards", ())),
            {k: float(v) for k, v in data.get("named", NAMED_DEFAULTS).items()},
        )


def _heals(m: Move) -> bool:
    """Whether a heal undoes the move (and binds `$back` to what it brought back)."""
    return m.fault in HEALS and m.hold is not None


def _healed_before(moves: list[Move], i: int) -> bool:
    """Whether a heal of an earlier move is due before move i starts (a `next` hold heals once the
    move after it acted: before move i when that move is not move i)."""
    return any(
        _heals(p) and (k < i - 1 if p.hold == NEXT else p.span[1] <= moves[i].at) for k, p in enumerate(moves[:i])
    )


def _order_problems(moves: list[Move]) -> list[str]:
    """What the order of `moves` (by start) breaks: a related role or a guard read before a move
    binds what it reads, a related role first (a script plays its steps in order: a first move
    waiting for an ISR of one would hold back the move that makes it), the node that came back
    named before any heal is due, a hold until the next move with none after it."""
    out: list[str] = []
    bound: set[str] = set()
    for i, m in enumerate(moves):
        needs = [n for r in m.roles for n in NEEDS.get(r, ())]
        needs += list(GUARDS.get(m.when or "", ()))
        missing = sorted(set(needs) - bound)
        if missing:
            out.append(f"{m.label()}: reads {', '.join(missing)} before a move hits it")
        if CAME_BACK in m.roles and not _healed_before(moves, i):
            out.append(f"{m.label()}: names the node that came back before any heal is due")
        if i == 0 and set(m.roles) & set(NEEDS):  # a later move's state it would wait for, in vain
            out.append(f"{m.label()}: a related role before any other move")
        if m.hold == NEXT and i == len(moves) - 1:
            out.append(f"{m.label()}: held until a next move, and none comes")
        if m.binds:
            bound.add(m.roles[0])
    return out


def ordered(moves: Sequence[Move]) -> list[Move]:
    """Moves by start (a script's order), ties by fault and roles."""
    return sorted(moves, key=lambda m: (m.at, m.fault, m.roles))


def steps(moves: Sequence[Move], key: str) -> list[Step]:
    """The script a run plays: each move a timed step aimed at `key`'s roles, the first use of each
    role binding its node (`as`) for the related roles and guards of later moves."""
    moves = ordered(moves)
    return [m.step(key, b) for m, b in zip(moves, bindings(moves), strict=True)]
