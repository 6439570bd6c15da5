"""The bounds of a composed fault schedule, in one place: the overlapping mix (nemesis/overlap.py)
REPAIRS its draws so that they keep them (drops a step, stretches a hold, draws again), while
`explore`'s space (nemesis/space.py) and shrinking (runs/shrink.py) REJECT a schedule that breaks
one (`problems` names which). A schedule is a list of timed steps (nemesis/schedule.py `Step`),
its targets roles (nemesis/roles.py) or nodes.

The bounds follow the studies in docs/nemesis.md: 87% of crash-recovery bugs need at most three
crashes and one reboot (CREB, FSE 2018), 98% of failures show on at most three nodes (OSDI 2014).

- AT_ONCE: at most MAX_AT_ONCE faults in place at once; a fault that stays in place counts for its
  hold, a disk fault (which restarts its node) for DISK_WINDOW_S.
- DISK: at most MAX_DISK disk faults (DISK_FAULTS) in a run.
- NETWORK: at most one network fault (NETWORK_FAULTS: those `heal` undoes) in place at once: the
  one `heal` flushes every node's chain, so it would undo both.
- HEAL_IN_PAUSE: no network fault's heal while a pause is held, from the pause's start until
  AFTER_RESUME_S after its resume (`heals_in_pause`): a paused container runs no iptables, so that
  heal would leave the paused node's rules in place and the cut would outlast its hold.
- HOLD: a fault that something undoes is held, at least MIN_HOLD_S; a disk fault is not held.
- SHAPE: a partition's shape is one of SHAPES; a `cut` aims at two distinct sides (`A|B`), a
  `quorum-leader` at the active controller, a `replication` cut at a broker role; the others aim
  at one side or draw their own.
- AIM: a fault that acts on a broker's connections or its remote storage (BROKER_FAULTS: a stall,
  a held transaction marker, a remote-storage gate) aims at a broker role.
- WINDOW: every fault starts after the run's quiet start and is undone by its end (when given).

Where the three disagreed, and which bound won:
- Disk faults: the mix allowed one per node (as many as the cluster's nodes, a guard refusing a
  second on a node once the role resolved), explore's space one per run. One per run wins: a
  schedule names roles, and a role names its node only at the fault's moment, so one per run is
  the only bound a schedule can be held to before it is played, on both sides alike; a fault the
  guard refused made the played schedule differ from the one config.json records and shrinking
  replays; it is the studies' "one reboot"; and two disk faults on two ISR members are past what
  any configuration promises to survive (checkers/measures/promise.py `beyond_promise`).
- How long a disk fault counts as in place: 10 s in the mix, 6 s in the space. 10 s wins (the
  node's restart and its first catch-up, as the checkers' fault windows count a restart): the
  longer window counts more overlap, so no schedule passes that the other reading would refuse.
- The shortest hold: the space's holds began at 2 s and shrinking halved down to 2 s, the mix drew
  half its interval (1 s at an interval of 2 s). MIN_HOLD_S = 2 s wins everywhere: a fault held
  for less is mostly its own apply and heal.
- A stall aimed at a controller role: the mix aimed it at brokers, the space at any role. Brokers
  win: a stall holds a broker's client connections, and a controller has none.
- The partition shapes are SHAPES for all three; the space draws only ROLE_SHAPES, the shapes
  whose sides a role names, since a search's move must say what it hits (the others draw their
  sides from the fault's own random stream).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kafka_chaos.history.faults import AFTER_RESTART_NS
from kafka_chaos.nemesis.faults import BLOCK_CONNECT, HEAL, HEALS, PARTITION, TIERED
from kafka_chaos.nemesis.partition import SHAPES as PARTITION_SHAPES
from kafka_chaos.nemesis.roles import BROKER_ROLES, ROLES
from kafka_chaos.nemesis.schedule import Step

#: At most this many faults in place at once.
MAX_AT_ONCE = 3
#: Faults that lose a node's disk or its unflushed writes (and restart it within their operation).
DISK_FAULTS: tuple[str, ...] = ("wipe", "lose-unflushed")
#: At most this many disk faults in a run.
MAX_DISK = 1
#: How long a disk fault counts as in place: its node's restart and first catch-up (s), as every
#: reader of a history counts it (history/faults.py).
DISK_WINDOW_S = AFTER_RESTART_NS / 1e9
#: A pause holds a network fault's heal until this long after its resume (s).
AFTER_RESUME_S = 1.0
#: The shortest hold of a fault that stays in place (s).
MIN_HOLD_S = 2.0
#: The faults the one `heal` undoes: at most one of them in place at once.
NETWORK_FAULTS: frozenset[str] = frozenset(f for f, undo in HEALS.items() if undo == HEAL.name)
#: The faults that act on a broker's own connections or storage, aimed at broker roles (not a
#: controller's own registration requests).
BROKER_FAULTS: frozenset[str] = (NETWORK_FAULTS - {PARTITION.name, BLOCK_CONNECT.name}) | frozenset(
    f for f in TIERED if f in HEALS
)
#: A partition's shapes.
SHAPES: tuple[str, ...] = PARTITION_SHAPES
#: The shapes whose sides roles name: one side (`isolate`; `replication`, a broker's replication
#: alone), two (`cut`), the active controller.
ROLE_SHAPES: tuple[str, ...] = ("isolate", "quorum-leader", "cut", "replication")

AT_ONCE, DISK, NETWORK, HEAL_IN_PAUSE, HOLD, SHAPE, AIM, WINDOW = (
    "at-once",
    "disk",
    "network",
    "heal-in-pause",
    "hold",
    "shape",
    "aim",
    "window",
)
#: Every bound by name, in the order `problems` checks them.
BOUNDS: tuple[str, ...] = (AT_ONCE, DISK, NETWORK, HEAL_IN_PAUSE, HOLD, SHAPE, AIM, WINDOW)


@dataclass(frozen=True)
class Breach:
    """A bound a schedule breaks (one of BOUNDS), and how."""

    bound: str
    why: str

    def __str__(self) -> str:
        return self.why


def is_network(fault: str) -> bool:
    return fault in NETWORK_FAULTS


def span(step: Step) -> tuple[float, float]:
    """When a step's fault may be in place: its hold, or a disk fault's window, after its guard's
    wait when it has one (nemesis/guards.py: it acts at most `within` seconds after `at`)."""
    wait = (step.within or 0.0) if step.when else 0.0
    return step.at, step.at + wait + (step.hold if step.hold is not None else DISK_WINDOW_S)


def most_at_once(steps: Sequence[Step]) -> int:
    """The most faults in place at one moment (spans are half-open: one may start as another ends)."""
    edges = sorted([(span(s)[0], 1) for s in steps] + [(span(s)[1], -1) for s in steps])
    most = now = 0
    for _, d in edges:
        now += d
        most = max(most, now)
    return most


def in_place(steps: Sequence[Step], at: float) -> int:
    """How many of `steps` are in place at `at`."""
    return sum(1 for s in steps if span(s)[0] <= at < span(s)[1])


def overlap(a: Step, b: Step) -> bool:
    return span(a)[0] < span(b)[1] and span(b)[0] < span(a)[1]


def heals_in_pause(heal: float, pauses: Sequence[tuple[float, float]]) -> bool:
    """Whether a network fault's heal at `heal` falls while one of `pauses` ((start, end) spans) is
    held: from its start until AFTER_RESUME_S after its resume, that moment excluded. Times compare
    at the schedules' resolution of 0.1 s."""
    at = round(heal, 1)
    return any(round(start, 1) <= at < round(end + AFTER_RESUME_S, 1) for start, end in pauses)


def pause_spans(steps: Sequence[Step]) -> list[tuple[float, float]]:
    return [span(s) for s in steps if s.fault == "pause"]


def role_name(target: str) -> str | None:
    """The role a target expression names (`leader:chaos/0` -> leader); None for a node or `random`."""
    for role in ROLES:
        pattern = "^" + re.escape(role.target).replace(re.escape("{key}"), ".+") + "$"
        if re.match(pattern, target):
            return role.name
    return None


def step_problems(step: Step) -> list[Breach]:
    """The bounds one step breaks on its own (HOLD, SHAPE, AIM)."""
    out: list[Breach] = []
    what = f"{step.fault}@{step.target} at {step.at:g} s"
    if step.fault in HEALS:
        if step.hold is None or step.hold < MIN_HOLD_S:
            out.append(Breach(HOLD, f"{what}: held {step.hold} s, less than {MIN_HOLD_S:g} s"))
    elif step.hold is not None:
        out.append(Breach(HOLD, f"{what}: a fault nothing undoes is not held"))
    if step.fault == PARTITION.name:
        shape = step.options.get("shape", "isolate")
        sides = step.target.split("|")
        if shape not in SHAPES:
            out.append(Breach(SHAPE, f"{what}: shape {shape} is not one of {', '.join(SHAPES)}"))
        elif shape == "cut" and (len(sides) != 2 or len(set(sides)) != 2):
            out.append(Breach(SHAPE, f"{what}: a cut aims at 2 distinct sides"))
        elif shape == "quorum-leader" and step.target != "controller":
            out.append(Breach(SHAPE, f"{what}: a quorum-leader partition aims at the controller"))
        elif shape == "replication" and (r := role_name(step.target)) is not None and r not in BROKER_ROLES:
            out.append(Breach(SHAPE, f"{what}: a replication cut aims at a broker role, not {r}"))
        elif shape != "cut" and len(sides) != 1:
            out.append(Breach(SHAPE, f"{what}: only a cut has two sides"))
    if step.fault in BROKER_FAULTS:
        off = [p for p in step.target.split("+") if (r := role_name(p)) is not None and r not in BROKER_ROLES]
        if off:
            out.append(Breach(AIM, f"{what}: aims at {', '.join(off)}, not a broker role"))
    return out


def problems(
    steps: Sequence[Step],
    *,
    start: float | None = None,
    duration: float | None = None,
    max_at_once: int = MAX_AT_ONCE,
) -> list[Breach]:
    """Every bound `steps` break ([]: they keep them all); `start`, `duration`: the run's quiet
    start and its length, when the WINDOW bound is to be checked; `max_at_once`: a tighter AT_ONCE."""
    out: list[Breach] = []
    if most_at_once(steps) > max_at_once:
        out.append(Breach(AT_ONCE, f"more than {max_at_once} faults in place at once"))
    disks = [s for s in steps if s.fault in DISK_FAULTS]
    if len(disks) > MAX_DISK:
        out.append(Breach(DISK, f"{len(disks)} disk faults ({', '.join(DISK_FAULTS)}), more than {MAX_DISK} in a run"))
    network = [s for s in steps if is_network(s.fault)]
    if any(overlap(a, b) for i, a in enumerate(network) for b in network[i + 1 :]):
        out.append(Breach(NETWORK, "two network faults in place at once (one heal undoes both)"))
    pauses = pause_spans(steps)
    for s in network:
        if heals_in_pause(span(s)[1], pauses):
            why = f"{s.fault} at {s.at:g} s: healed while a pause is held (its node keeps its rules)"
            out.append(Breach(HEAL_IN_PAUSE, why))
    for s in steps:
        out += step_problems(s)
        begin, end = span(s)
        if (start is not None and begin < start) or (duration is not None and end > duration):
            lo = f"{start:g}" if start is not None else "0"
            hi = f"{duration:g}" if duration is not None else "the end"
            out.append(Breach(WINDOW, f"{s.fault} at {s.at:g} s: in place outside {lo}-{hi} s"))
    return out


def broken(steps: Sequence[Step], *, start: float | None = None, duration: float | None = None) -> set[str]:
    """The names of the bounds `steps` break."""
    return {b.bound for b in problems(steps, start=start, duration=duration)}
