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
from dataclasses import dataclass, replace
from typing import Any

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis import bounds
from kafka_chaos.nemesis.bounds import BROKER_FAULTS, DISK_WINDOW_S, MAX_AT_ONCE
from kafka_chaos.nemesis.bounds import ROLE_SHAPES as SHAPES
from kafka_chaos.nemesis.faults import HEALS, RANDOM
from kafka_chaos.nemesis.roles import BROKER_ROLES, roles_for
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
        return self.at, self.at + (self.hold if self.hold is not None else DISK_WINDOW_S)

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
    """The most faults in place at one moment (bounds.most_at_once)."""
    return bounds.most_at_once([m.step(_KEY) for m in moves])


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
        if duration - quiet < DISK_WINDOW_S:
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
        played = [m.step(_KEY) for m in moves]
        breaches = bounds.problems(played, start=self.start, duration=self.duration, max_at_once=self.max_at_once)
        out += [f"{b.bound}: {b.why}" for b in breaches]
        return out

    def _move_problems(self, m: Move) -> list[str]:
        out = []
        if m.fault not in self.faults:
            out.append(f"fault {m.fault} is not in this space")
        unknown = [r for r in m.roles if r not in self.roles]
        if unknown:
            out.append(f"role {', '.join(unknown)} names nothing here")
        if m.fault in HEALS and m.hold not in self.holds:
            out.append(f"hold {m.hold} is not one of {self.holds}")
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
            elif shape == "replication":
                roles = (rng.choice([r for r in self.roles if r in BROKER_ROLES] or list(self.roles)),)
        hold = rng.choice(self.holds) if fault in HEALS else None
        length = hold if hold is not None else DISK_WINDOW_S
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
