"""`explore`'s space of fault schedules: fault x target role x moment, within the shared bounds of
nemesis/roles.py, and the three things a search does with it: draw a schedule, mutate one, and
check that one is inside the space (runs/explore.py).

A schedule is a list of `Move`s: a fault, the role (or, for a partition's `cut`, the two roles) it
aims at, when it starts and how long it is held. A move becomes a timed `Step` of
nemesis/schedule.py (`Move.step`), the role a target of nemesis/targets.py resolved at the fault's
moment, and a run plays the steps as a script (`NemesisPlan(script=...)`).

The bounds (`Space.problems`):
- at most `max_steps` faults in a run, and at most MAX_AT_ONCE (nemesis/roles.py) in place at once;
  a fault that restarts its node (wipe, lose-unflushed) counts as in place for DISK_SPAN seconds;
- at most one disk fault (DISK_FAULTS: wipe, lose-unflushed) in a run. Roles resolve when the fault
  happens, so two disk faults on two roles may land on one node; one per run is the only bound a
  schedule can promise that keeps "at most one per node", and it is the studies' "one reboot";
- at most one network fault (a partition or a stall: all are undone by the one `heal`, which
  flushes every rule) in place at once;
- no network fault's heal while a pause is held (overlap.heals_in_pause: from the pause's start
  until AFTER_RESUME_S after its resume): a paused container runs no iptables, so that heal would
  leave the paused node's rules in place and the cut would outlast its hold (the overlapping mix
  moves such a heal to the window's end, nemesis/overlap.py; a search keeps its schedules out);
- every fault starts after `start` seconds of quiet (the liveness baseline) and ends by `duration`.

Every draw comes from the `random.Random` the caller passes (explore derives one per run from the
campaign's seed): the same seed, the same schedules.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis.faults import HEAL, HEALS, RANDOM, TIERED
from kafka_chaos.nemesis.overlap import heals_in_pause
from kafka_chaos.nemesis.roles import BROKER_ROLES, DISK_FAULTS, MAX_AT_ONCE, roles_for
from kafka_chaos.nemesis.roles import BY_NAME as ROLES
from kafka_chaos.nemesis.schedule import Step

#: Today's undirected families, the safe configuration's threats: what `explore` draws from unless
#: `--nemesis` names others.
DEFAULT_FAULTS = ("kill", "pause", "partition", "wipe", "lose-unflushed")
#: The holds a fault that stays in place is drawn from (s): a few heartbeats up to well past every
#: timeout of harness/config.py's fast failure detection.
HOLDS = (2.0, 4.0, 6.0, 8.0, 12.0)
#: How long a fault that kills and restarts its node within its operation counts as in place (s).
DISK_SPAN = 6.0
#: At most this many faults in one run (CREB: most crash-recovery bugs need at most three crashes).
MAX_STEPS = 4
MAX_DISK = 1
#: A partition's shapes in the space: one role cut off, the active controller cut off from the other
#: voters (its role is "controller"), or two roles cut from each other (`cut`).
SHAPES = ("isolate", "quorum-leader", "cut")
#: Moments are multiples of this many seconds.
GRID = 0.5
#: How often a drawn fault starts inside another one's span (so that faults overlap).
OVERLAP_BIAS = 0.5


def _network(fault: str) -> bool:
    return HEALS.get(fault) == HEAL.name


@dataclass(frozen=True)
class Move:
    """One fault of a schedule: `roles` holds one role (two for a partition's `cut`)."""

    at: float
    fault: str
    roles: tuple[str, ...]
    hold: float | None = None
    shape: str | None = None

    @property
    def span(self) -> tuple[float, float]:
        """When it is in place."""
        return self.at, self.at + (self.hold if self.hold is not None else DISK_SPAN)

    def target(self, key: str) -> str:
        """Its target expression (nemesis/targets.py) for a run whose first key is `key`."""
        return "|".join(ROLES[r].resolve(key) for r in self.roles)

    def step(self, key: str) -> Step:
        return Step(self.at, self.fault, self.target(key), self.hold, {"shape": self.shape} if self.shape else {})

    def label(self) -> str:
        """One short line for tables: `8s partition(cut) leader|controller for 6s`."""
        fault = f"{self.fault}({self.shape})" if self.shape else self.fault
        hold = f" for {self.hold:g}s" if self.hold is not None else ""
        return f"{self.at:g}s {fault} {'|'.join(self.roles)}{hold}"

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "fault": self.fault, "roles": list(self.roles), "hold": self.hold, "shape": self.shape}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Move:
        return cls(float(data["at"]), str(data["fault"]), tuple(data["roles"]), data.get("hold"), data.get("shape"))


def at_once(moves: Sequence[Move]) -> int:
    """The most faults in place at one moment (spans are half-open: one may start as another ends)."""
    edges = sorted([(m.span[0], 1) for m in moves] + [(m.span[1], -1) for m in moves], key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, d in edges:
        now += d
        most = max(most, now)
    return most


def _overlap(a: Move, b: Move) -> bool:
    return a.span[0] < b.span[1] and b.span[0] < a.span[1]


@dataclass(frozen=True)
class Space:
    """The schedules one campaign draws from: its faults, the roles that name something in its
    runs, and each run's length."""

    faults: tuple[str, ...]
    roles: tuple[str, ...]
    duration: float
    #: Quiet seconds before the first fault (the liveness baseline is their second half).
    start: float = 5.0
    holds: tuple[float, ...] = HOLDS
    max_steps: int = MAX_STEPS
    max_at_once: int = MAX_AT_ONCE

    @classmethod
    def for_run(
        cls,
        faults: Sequence[str] | None,
        workload: str,
        group: bool,
        duration: float,
        start: float | None = None,
        share: bool = False,
    ) -> Space:
        """The space of a campaign's runs; UsageError for a fault `--nemesis` may not mix, or runs
        too short to hold a fault after the quiet start."""
        chosen = tuple(dict.fromkeys(f.partition("@")[0] for f in faults)) if faults else DEFAULT_FAULTS
        unknown = [f for f in chosen if f not in RANDOM]
        if unknown:
            raise UsageError(f"unknown fault {', '.join(unknown)}: expected some of {', '.join(RANDOM)}")
        quiet = min(5.0, duration / 4) if start is None else start
        if duration - quiet < DISK_SPAN:
            raise UsageError(f"runs of {duration:g} s leave no room for a fault after {quiet:g} s of quiet")
        holds = tuple(h for h in HOLDS if h <= duration - quiet)
        return cls(chosen, tuple(r.name for r in roles_for(workload, group, share)), duration, quiet, holds)

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
        if at_once(moves) > self.max_at_once:
            out.append(f"more than {self.max_at_once} faults in place at once")
        disks = [m for m in moves if m.fault in DISK_FAULTS]
        if len(disks) > MAX_DISK:
            out.append(f"{len(disks)} disk faults ({', '.join(DISK_FAULTS)}), more than {MAX_DISK}")
        network = [m for m in moves if _network(m.fault)]
        if any(_overlap(a, b) for i, a in enumerate(network) for b in network[i + 1 :]):
            out.append("two network faults in place at once (one heal undoes both)")
        pauses = [m.span for m in moves if m.fault == "pause"]
        for m in network:
            if heals_in_pause(m.span[1], pauses):
                out.append(f"{m.label()}: healed while a pause is held (the paused node keeps its rules)")
        return out

    def _move_problems(self, m: Move) -> list[str]:
        out = []
        if m.fault not in self.faults:
            out.append(f"fault {m.fault} is not in this space")
        unknown = [r for r in m.roles if r not in self.roles]
        if unknown:
            out.append(f"role {', '.join(unknown)} names nothing here")
        if m.fault in HEALS:
            if m.hold not in self.holds:
                out.append(f"hold {m.hold} is not one of {self.holds}")
        elif m.hold is not None:
            out.append("a fault that restarts its node is not held")
        if m.fault == "partition":
            wanted = {"cut": 2}.get(m.shape or "", 1)
            if m.shape not in SHAPES:
                out.append(f"partition shape {m.shape} is not one of {SHAPES}")
            elif len(m.roles) != wanted or len(set(m.roles)) != len(m.roles):
                out.append(f"a {m.shape} partition aims at {wanted} distinct role(s)")
            elif m.shape == "quorum-leader" and m.roles != ("controller",):
                out.append("a quorum-leader partition aims at the controller")
        elif m.shape is not None or len(m.roles) != 1:
            out.append("only a partition takes a shape, and only a cut two roles")
        start, end = m.span
        if start < self.start or end > self.duration:
            out.append(f"outside {self.start:g}-{self.duration:g} s")
        if round(m.at / GRID) * GRID != m.at:
            out.append(f"not on the {GRID:g} s grid")
        return out

    # Draws.

    def _snap(self, t: float, length: float) -> float:
        first = math.ceil(self.start / GRID) * GRID
        last = math.floor((self.duration - length) / GRID) * GRID
        return min(max(round(t / GRID) * GRID, first), last)

    def _aims(self, fault: str) -> tuple[str, ...]:
        """The roles `fault` is drawn at: a remote-storage fault's, the brokers' (a controller has no gate)."""
        if fault in TIERED:
            return tuple(r for r in self.roles if r in BROKER_ROLES) or self.roles
        return self.roles

    def draw_move(self, rng: random.Random, near: Sequence[Move] = ()) -> Move:
        """One fault, its role(s), its hold, and its moment: inside another's span (OVERLAP_BIAS)
        when there are others, anywhere in the run otherwise."""
        fault = rng.choice(self.faults)
        shape = None
        roles: tuple[str, ...] = (rng.choice(self._aims(fault)),)
        if fault == "partition":
            shapes = [s for s in SHAPES if s != "quorum-leader" or "controller" in self.roles]
            shape = rng.choice(shapes)
            if shape == "quorum-leader":
                roles = ("controller",)
            elif shape == "cut":
                roles = tuple(rng.sample(self.roles, 2))
        hold = rng.choice(self.holds) if fault in HEALS else None
        length = hold if hold is not None else DISK_SPAN
        if near and rng.random() < OVERLAP_BIAS:
            other = rng.choice(list(near))
            t = rng.uniform(*other.span)
        else:
            t = rng.uniform(self.start, self.duration - length)
        return Move(self._snap(t, length), fault, roles, hold, shape)

    def draw(self, rng: random.Random) -> list[Move]:
        """A schedule of one to `max_steps` faults inside the space."""
        wanted = rng.randint(1, self.max_steps)
        moves: list[Move] = []
        for _ in range(wanted * 8):
            if len(moves) == wanted:
                break
            move = self.draw_move(rng, moves)
            if not self.problems([*moves, move]):
                moves.append(move)
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
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Space:
        return cls(
            tuple(data["faults"]),
            tuple(data["roles"]),
            float(data["duration"]),
            float(data["start"]),
            tuple(data["holds"]),
            int(data["max_steps"]),
            int(data["max_at_once"]),
        )


def ordered(moves: Sequence[Move]) -> list[Move]:
    """Moves by start (a script's order), ties by fault and roles."""
    return sorted(moves, key=lambda m: (m.at, m.fault, m.roles))


def steps(moves: Sequence[Move], key: str) -> list[Step]:
    """The script a run plays: each move a timed step aimed at `key`'s roles."""
    return [m.step(key) for m in ordered(moves)]
