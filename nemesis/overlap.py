"""Overlapping faults (`--nemesis-mix overlap`): each fault family on its own clock, the families
at once, as Jepsen's nemesis/combined.clj composes its packages (each a staggered flip-flop of
fault and heal, the packages combined with `gen/any`), so that a partition is held while a kill,
a pause, a wipe or a power loss happens. The serial mix (schedule.py RandomSchedule) never does
that, and most losses of the scenario library need two faults at once (docs/nemesis.md).

The whole timeline is drawn before the run, from the run's seed, as timed steps (schedule.py
`Step`) that may overlap; config.json records it, and schedule.py `play` plays it. Targets are
roles (nemesis/roles.py), resolved from the live cluster at each step's moment.

Families, derived from the table of faults (nemesis/faults.py):
- network: the faults `heal` undoes that a random schedule may draw (partition, stall,
  hold-endtxn, hold-markers). `heal` flushes every node's chain, so the family holds one
  network fault at a time; and as a paused container
  runs no iptables, a network fault whose heal would fall while a pause is held is held until
  just after that pause ends (a heal then would leave the paused node's own rules in place).
- kill (kill/start), pause (pause/resume): a fault held, healed, a quiet period, again.
- remote (remote-unavailable, remote-slow; a tiered cluster's): a fault held, healed (`remote-heal`
  of its own brokers), a quiet period, again; aimed at broker roles, a slow gate's delay drawn.
- disk (wipe, lose-unflushed): instant faults (the node restarts), at most MAX_DISK in a run.

The bounds are nemesis/bounds.py's, shared with explore's space and shrinking, which reject a
schedule that breaks one; this mix repairs its draws instead, so that every timeline it draws keeps
them: a step that would put more than MAX_AT_ONCE faults in place is dropped (its family's clock
left as drawn), as is a network step that starts before the one before it healed; a network heal
that would fall in a pause is moved past it; holds are at least MIN_HOLD_S; a stall or a remote
gate is aimed at a broker role; disk faults past MAX_DISK are not drawn. `DiskOnce` still refuses,
once the target resolved, a second disk fault on a node, for a timeline played again from a
config.json that held more.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from kafka_chaos.nemesis.bounds import (
    AFTER_RESUME_S,
    BROKER_FAULTS,
    DISK_FAULTS,
    DISK_WINDOW_S,
    MAX_AT_ONCE,
    MAX_DISK,
    MIN_HOLD_S,
    heals_in_pause,
    in_place,
)
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.faults import BY_NAME as FAULTS
from kafka_chaos.nemesis.faults import HEAL, HEALS, REMOTE_HEAL, RESUME, START
from kafka_chaos.nemesis.roles import BROKER_ROLES, CONTROLLER_ROLES, Role
from kafka_chaos.nemesis.schedule import ScriptedSchedule, Step

NETWORK, KILL, PAUSE, DISK, REMOTE = "network", "kill", "pause", "disk", "remote"
#: The families in the order their clocks are drawn (the network's reads the pauses').
FAMILIES: tuple[str, ...] = (PAUSE, KILL, DISK, NETWORK, REMOTE)
#: A partition's shapes as the mix draws them (each of bounds.SHAPES): the shapes aimed at roles
#: (isolate one, cut two apart) twice as often as the shapes that draw their own sides.
SHAPES: tuple[str, ...] = ("isolate", "isolate", "cut", "cut", "halves", "majorities-ring", "bridge", "quorum-leader")


def family_of(fault: str) -> str:
    """The family of a fault of the random mix (nemesis/faults.py RANDOM), from what undoes it."""
    if fault in DISK_FAULTS:
        return DISK
    undo = HEALS.get(fault)
    by_undo = {HEAL.name: NETWORK, START.name: KILL, RESUME.name: PAUSE, REMOTE_HEAL.name: REMOTE}
    if undo not in by_undo:
        raise ValueError(f"{fault!r} is in no family of the overlapping mix")
    return by_undo[undo]


def families(entries: Sequence[str]) -> dict[str, list[str]]:
    """A fault list's entries (`kill`, `kill@group-coordinator`) by family, in FAMILIES' order."""
    out: dict[str, list[str]] = {}
    for entry in entries:
        out.setdefault(family_of(entry.partition("@")[0]), []).append(entry)
    return {f: out[f] for f in FAMILIES if f in out}


def pool_roles(roles: Sequence[Role], pool: str) -> list[Role]:
    """The roles a target pool keeps (schedule.py TARGET_POOLS): every role, the brokers' or the controllers'."""
    keep = {"brokers": BROKER_ROLES, "controllers": CONTROLLER_ROLES}.get(pool)
    return [r for r in roles if keep is None or r.name in keep]


def _clock(
    rng: random.Random, first: float, interval: float, duration: float, instant: bool
) -> list[tuple[float, float | None]]:
    """One family's (at, hold) pairs: a stagger, then fault, hold, heal, quiet, again (holds and
    quiet periods each 0.5 to 1.5 intervals, a hold MIN_HOLD_S at least; an instant family's quiet
    periods 1 to 3), every
    fault's time in place (an instant one's DISK_WINDOW_S) within `duration`."""
    out: list[tuple[float, float | None]] = []
    t = first + rng.uniform(0, interval)
    while True:
        hold = None if instant else max(MIN_HOLD_S, round(rng.uniform(0.5, 1.5) * interval, 1))
        at = round(t, 1)
        if at + (DISK_WINDOW_S if hold is None else hold) > duration:
            return out
        out.append((at, hold))
        t = at + (hold or 0) + rng.uniform(*((1.0, 3.0) if instant else (0.5, 1.5))) * interval


def _past_pauses(at: float, hold: float, pauses: Sequence[tuple[float, float]]) -> float:
    """The hold of a network fault from `at`, stretched until its heal falls in no pause."""
    spans = [(p_at, p_at + p_hold) for p_at, p_hold in pauses]
    end = at + hold
    while heals_in_pause(end, spans):
        end = max(p_end + AFTER_RESUME_S for p_start, p_end in spans if heals_in_pause(end, [(p_start, p_end)]))
    return round(end - at, 1)


def _network_step(rng: random.Random, fault: str, roles: Sequence[Role], key: str) -> tuple[str, dict]:
    """A network fault's target and options: a partition of a drawn shape (isolating a role,
    cutting two roles apart, or a shape that draws its own sides), a stall of a broker role."""
    if fault in BROKER_FAULTS:
        brokers = [r for r in roles if r.name in BROKER_ROLES] or list(roles)
        return rng.choice(brokers).resolve(key), {}
    controllers = any(r.name in CONTROLLER_ROLES for r in roles)
    shapes = [s for s in SHAPES if s != "quorum-leader" or controllers]
    if len(roles) < 2:
        shapes = [s for s in shapes if s != "cut"]
    shape = rng.choice(shapes)
    if shape == "isolate":
        return rng.choice(roles).resolve(key), {"shape": shape}
    if shape == "cut":
        a, b = rng.sample(list(roles), 2)
        return f"{a.resolve(key)}|{b.resolve(key)}", {"shape": shape}
    return ("controller" if shape == "quorum-leader" else "random"), {"shape": shape}


def _bounded(steps: list[tuple[int, Step]], max_at_once: int) -> list[Step]:
    """The steps in time order, each dropped that would put more than `max_at_once` faults in place."""
    kept: list[Step] = []
    for _, step in sorted(steps, key=lambda s: (s[1].at, s[0])):
        if in_place(kept, step.at) < max_at_once:
            kept.append(step)
    return kept


def draw_overlapping(
    rng: random.Random,
    families: Mapping[str, Sequence[str]],
    roles: Sequence[Role],
    duration: float,
    *,
    key: str,
    interval: float = 10.0,
    start: float | None = None,
    nodes: int | None = None,
    max_at_once: int = MAX_AT_ONCE,
) -> list[Step]:
    """The whole timeline of an overlapping mix, drawn from `rng` alone: each family of
    `families` (family -> fault entries, `families()`) on its own clock, its first fault after
    `start` s of quiet (default `interval`) and a stagger of its own, its holds and quiet periods
    around `interval`, every heal within `duration`; targets drawn from `roles` (with `key`, the
    workload's first partition, for the roles that name one) unless an entry pins one
    (`kill@group-coordinator`); at most `max_at_once` faults in place at once and at most MAX_DISK
    disk faults (fewer when `nodes` is fewer). Sorted by `at`. Each family draws from a stream of
    its own (seeded from `rng`), so that adding a family leaves the others' clocks as they were."""
    if not roles:
        raise ValueError("an overlapping mix needs at least one role to aim at")
    base = rng.getrandbits(64)
    first = interval if start is None else start
    pauses: list[tuple[float, float]] = []
    drawn: list[tuple[int, Step]] = []
    for order, family in enumerate(f for f in FAMILIES if families.get(f)):
        frng = random.Random(f"{base}:{family}")
        windows = _clock(frng, first, interval, duration, instant=family == DISK)
        if family == DISK:
            windows = windows[: MAX_DISK if nodes is None else min(nodes, MAX_DISK)]
        bag: list[str] = []
        for at, hold in windows:
            if not bag:  # every entry once per round, in a random order, as the serial mix does
                bag = frng.sample(list(families[family]), len(families[family]))
            fault, _, pinned = bag.pop().partition("@")
            if family == NETWORK:
                target, options = _network_step(frng, fault, roles, key)
                if pinned:
                    target, options = pinned, FAULTS[fault].draw(frng)
                assert hold is not None
                hold = _past_pauses(at, hold, pauses)
                if at + hold > duration:
                    break
            elif family == REMOTE:  # a broker's gate: aimed at a broker role, its options drawn
                brokers = [r for r in roles if r.name in BROKER_ROLES] or list(roles)
                target, options = pinned or frng.choice(brokers).resolve(key), FAULTS[fault].draw(frng)
            else:
                target, options = pinned or frng.choice(list(roles)).resolve(key), {}
            if family == PAUSE and hold is not None:
                pauses.append((at, hold))
            drawn.append((order, Step(at, fault, target, hold, options)))
        if family == NETWORK:  # a stretched hold may run into the next network fault: keep them apart
            drawn = _one_network_at_a_time(drawn, order)
    return _bounded(drawn, max_at_once)


def _one_network_at_a_time(drawn: list[tuple[int, Step]], order: int) -> list[tuple[int, Step]]:
    """Drop each network step that starts before the one before it healed."""
    out, free_at = [], -1.0
    for o, step in drawn:
        if o == order:
            if step.at < free_at:
                continue
            free_at = step.at + (step.hold or 0)
        out.append((o, step))
    return out


class DiskOnce:
    """The overlapping mix's guard (Nemesis.refuse): at most one disk fault per node in a run. A
    role names its node only at the fault's moment, so the draw cannot promise it; this refuses,
    once the target resolved, a disk fault on a node that had one, with the reason the history
    records in the fault's `fail`."""

    def __init__(self) -> None:
        #: node alias -> the disk fault it had
        self.hit: dict[str, str] = {}

    def __call__(self, fault: str, nodes: Sequence[str]) -> str | None:
        if fault not in DISK_FAULTS:
            return None
        again = [n for n in nodes if n in self.hit]
        if again:
            return f"at most one disk fault per node in a run: {again[0]} had {self.hit[again[0]]} already"
        for node in nodes:
            self.hit[node] = fault
        return None


class OverlapSchedule(ScriptedSchedule):
    """A drawn timeline played like a script (schedule.py play), with the disk guard in place."""

    def __init__(self, nemesis: Nemesis, steps: list[Step]) -> None:
        super().__init__(nemesis, steps)
        self.guard = DiskOnce()

    def loop(self) -> None:
        self.nemesis.refuse = self.guard
        super().loop()
