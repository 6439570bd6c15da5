"""The control plane's eleven rules, read from ../shared/anomalies.md ("Control plane") alone: an
oracle for the checker that shares none of its code or its narrowings.

`judge(run_dir)` reads a run directory as the evidence writers leave it (history.jsonl,
config.json, control-plane/: nodes.json, quorum-views.jsonl, quorum-replication.jsonl,
metadata/<alias>.jsonl, gaps.json) and returns, per rule, the instances the contract says exist
(`Judgement.found`: rule -> set of identities, see IDENTITY) and the rules it could not check,
in whole or for some fault (`Judgement.not_checked`: rule -> why). It has its own metadata-log replay (the contract's
"Replay rules"), its own fault windows from the history's nemesis operations, and its own reading
of the committed metadata. Plain Python: it judges a small run directory in milliseconds.

Where the contract is silent or ambiguous, these are the readings taken (each the one closest to
its words; the generator avoids evidence whose verdict hangs on the ones marked *):

Fault windows
- A node's state is a step function of the nemesis operations: `kill`/`stop` completed `ok` make
  it down, `pause` completed `ok` paused (a paused node then killed is down); the invoke of an
  operation that undoes it (`start`, `resume`, named by `undone_by`/`heals`) makes it up again, as
  does a `wipe` or `lose-unflushed` (they kill and start it: the node is down from their invoke to
  their completion, then up). A `start` also ends a pause (the nemesis thaws before starting)*.
  An `exit` (the harness saw the node's process end with no fault ending it) makes it down too, as a
  `kill` does: it runs no more, until a `start`. It is no fault the nemesis made: the rules of a
  node "the nemesis killed, stopped or paused" do not judge it, and the rest see it down.
- A fault "stayed so" while the node stays down or paused without a break: a kill after a pause
  continues it; any restart ends it. A partition's grudge holds from its completion until the next
  partition's completion (which replaces it) or a `heal`'s invoke; a grudge cuts both ways. One with
  `listener` CONTROLLER cuts the controller listener only: it cuts nodes off from the quorum and
  from the active controller, not a follower from its partition's leader. One with `listener`
  PLAINTEXT (the brokers' own) cuts replication only: a follower from its partition's leader, not
  a node from the quorum or the active controller.
- Operations that complete `fail` or `info` took no effect*. Other faults that stay in place
  (stalls: `undone_by` heal) cut nobody, but are faults in place until their undoer's invoke.

Quorum views
- A node holds itself leader when its view's `leader_id` is its own id (no `error`); a view holds
  from its sample until the node's next one. The active controller at a moment is the running node
  (not down, paused or being wiped) that holds itself leader in the highest epoch; there may be none.
- `quorum-split-brain`: for each pair of nodes, the consecutive view rounds in which both run and
  both hold themselves leader in different epochs (epochs may change inside the stretch); its
  length is from the first such round to the last one (what the evidence proves). A round in which
  either is not running, or its view is an error, breaks the stretch: a pause ends a stretch, and
  the claim held after it starts a new one. A restarted node's claim counts from its start, once
  its new process wrote it: a view whose file (`written`) predates a fault that ended the node's
  process (a kill, a stop, a restart: from its invoke) before the view was taken is the dead
  node's last view, no claim (a view without `written` is taken as the running process's).
- `quorum-double-leader`: every self-claim of every view (a dead node's too: "at any time"), and
  every `LeaderChange` record (its batch epoch, its `leaderId`) in any node's log.
- `quorum-epoch-regression`: each node's views in time order, errors and epochs below 0 skipped;
  one instance per view whose epoch is below the node's previous one. A `wipe` of the node forgets
  its epochs at the wipe's completion; its views during the wipe are not compared.

Metadata logs
- Every node's log is replayed on its own; an instance is (rule, partition, offset[, broker]),
  the union over the logs. A partition is named "topic/id" from its TopicRecord.
- Records compared by `metadata-divergence`: batch epoch, type, version and data. Offsets below the
  high watermark of the last successful replication sample, in any two logs that hold them (which
  pairs count: "metadata-divergence", below).
- Leader epoch: +1 for a `Leader` other than -2, and +1 more for an ISR that loses a member below
  metadata version 3.6 (both in one record: +2)*. The metadata version is config.json's
  `metadata_version`, else the release's own.
- Brokers: registration sets fenced (its `fenced`, absent: fenced) and in-controlled-shutdown (its
  `inControlledShutdown`, absent: not); Fence/Unfence records and BrokerRegistrationChange's
  `fenced` 1/-1 and `inControlledShutdown` 1 change them, whatever broker epoch they carry*. A
  broker never registered (or unregistered) is neither fenced nor in controlled shutdown*.
- `fenced-in-isr` "adds": the members of the new ISR not in the previous one (all of them for a
  partition created).
- `partition-epoch-regression` compares a PartitionRecord with the partition's state before it (a
  topic removed has none).

Committed metadata and timing
- The committed metadata is the per-offset majority record across the logs, in offset order. At a
  moment D its committed prefix is unknown between samples: at least the high watermark of the
  last sample at or before D, at most the lower of the first sample's at or after D and the first
  offset written after D. A broker is "still unfenced" (a follower "still in the ISR") at D only
  if it is so for every prefix in that range: sampling never makes an alarm.
- The host stall (amended 2026-12-06): control-plane/host-stall.jsonl's wakes ({"time": ns}); the
  stall of a window is, over consecutive wakes more than 150 ms apart that overlap it, the part
  inside it less 100 ms. A bound's deadline is its window's start + bound + the stall inside
  [start, start + bound] (for a count: inside [start, the moment the bound's count was reached]).
  Without the file, 0. *The evidence ends* at the last history event, view or sample.
- `unfenced-down-broker`: per fault (kill, stop, pause completed `ok`) and broker node it faulted,
  from the latest of: the fault taking effect; the activation of each quorum leader elected while
  the broker stayed down (a LeaderChange record, in any log, written in that stretch; activated at
  the first successful sample whose high watermark is past its offset: none is "unknown", not
  checked); each moment in that stretch a majority (running voters pairwise not cut; in a dynamic
  quorum a wiped voter lost its seat) came back. No majority at the fault and none again, or none at
  the deadline: no controller could fence it, not judged. The fault took down the active controller
  when its nodes include the active controller at its invoke: then a leader of a higher epoch must
  be elected in the stretch, else not checked (when the broker stayed down past the bound)*. Not
  checked when the deadline falls after the evidence ends and the broker is still down.
- `stale-isr-member`: per fault and follower: a kill, stop or pause of it, or a partition that cuts
  it from its partition's leader. Its partition's leader and ISR are the log as written by the
  moment the fault took effect (it must be in the ISR then). The count starts at the later of the
  fault taking effect and the completion of the first ok send to that partition (read from the
  history's send completions) invoked at or after it; none: not judged. Each change of the
  partition's leader in the written log starts it again at the change (a cut must still cut the
  follower from the new leader, else the fault is over). Counted time: an active controller exists,
  the leader runs, and is it or not cut from it (a listener's cut counts). The deadline is where the
  counted time reaches the bound (+ stall); the fault undone first: nothing; the evidence ending
  first: not checked.
- `quorum-split-brain` (amended 2026-12-06): a view claiming an epoch its node held in an earlier
  view before a fault ended its process (kill, stop, restart: from its invoke) is no claim.
- `metadata-divergence` (amended 2026-12-06): a pair of different records at an offset counts when
  both carry the same batch epoch, or one of them differs from the final quorum leader's (the last
  successful sample's `leader_id`) and its node was seen, in a sample that leader answered, at a log
  end past the offset.
- `stuck-broker-metadata`: from the end of the last fault (after it every node is up and the network
  whole to the end; a run without faults: from 0); per broker, consecutive successful samples in
  which its log end offset is the same and below the high watermark (error samples and samples
  without it are skipped), from the later of the first one and the fault's end to the last one: a
  broker behind at the same offset before and after the fault's end stayed behind across it. Not
  checked when a fault is open at the end, or when less than 30 s + S remain after the last fault.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from kafka_chaos.history.run_dir import RunDir

#: The slack S of every timing bound, and stuck-broker-metadata's window (../shared/anomalies.md).
S = 5.0
STUCK = 30.0

SPLIT, DOUBLE, REGRESSION = "quorum-split-brain", "quorum-double-leader", "quorum-epoch-regression"
DIVERGENCE, NOT_IN_ISR, EPOCH = "metadata-divergence", "leader-not-in-isr", "partition-epoch-regression"
INACTIVE, FENCED_ISR = "inactive-leader", "fenced-in-isr"
UNFENCED, STALE, STUCK_RULE = "unfenced-down-broker", "stale-isr-member", "stuck-broker-metadata"
RULES = (SPLIT, DOUBLE, REGRESSION, DIVERGENCE, NOT_IN_ISR, EPOCH, INACTIVE, FENCED_ISR, UNFENCED, STALE, STUCK_RULE)
#: What identifies one instance of each rule (the fields of each key in Judgement.found, in order).
IDENTITY = {
    SPLIT: ("nodes",),
    DOUBLE: ("epoch",),
    REGRESSION: ("node", "time_s"),
    DIVERGENCE: ("offset",),
    NOT_IN_ISR: ("partition", "offset"),
    EPOCH: ("partition", "offset"),
    INACTIVE: ("partition", "offset", "broker"),
    FENCED_ISR: ("partition", "offset", "broker"),
    UNFENCED: ("node", "op"),
    STALE: ("node", "partition", "op"),
    STUCK_RULE: ("node",),
}


def read_gaps_file(path: Path) -> dict[str, str]:
    """gaps.json's kinds and reasons; a file that is there and cannot be read is a gap of every kind
    over the whole run (the contract, "Control plane", amended 2026-12-06)."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        return {kind: "gaps.json could not be read" for kind in NEEDS}
    return {str(k): str(v) for k, v in data.items()}


#: Evidence kinds (gaps.json's keys) and the rules that need each.
NEEDS = {
    "views": (SPLIT, DOUBLE, REGRESSION, UNFENCED, STALE),
    "metadata": (DIVERGENCE, NOT_IN_ISR, EPOCH, INACTIVE, FENCED_ISR, UNFENCED, STALE),
    "replication": (DIVERGENCE, UNFENCED, STALE, STUCK_RULE),
}
DOWN, PAUSED, WIPING, UP = "down", "paused", "wiping", "up"
UNDO = ("start", "resume")
RESTARTS = ("wipe", "lose-unflushed")


@dataclass
class Judgement:
    found: dict[str, list[tuple]] = field(default_factory=lambda: {r: [] for r in RULES})
    not_checked: dict[str, str] = field(default_factory=dict)
    #: the bounds used, per timing rule (s)
    bounds: dict[str, float] = field(default_factory=dict)

    def add(self, rule: str, *key: Any) -> None:
        if key not in self.found[rule]:
            self.found[rule].append(key)

    def skip(self, rule: str, why: str) -> None:
        self.not_checked.setdefault(rule, why)

    def counts(self) -> dict[str, int]:
        return {r: len(keys) for r, keys in self.found.items() if keys}


def sec(ns: int | float | None) -> float | None:
    return None if ns is None else ns / 1e9


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:  # a truncated last line
            continue
    return out


# -- the history's nemesis operations


@dataclass
class Op:
    index: int  # the completion's index (the invoke's when it never completed)
    f: str
    nodes: list[str]
    invoked: float
    done: float | None  # None: never completed
    ok: bool
    value: dict[str, Any]


def nemesis_ops(events: list[dict[str, Any]], aliases: list[str]) -> list[Op]:
    ops: list[Op] = []
    pending: dict[str, Any] | None = None
    for e in events:
        if e.get("process") != "nemesis":
            continue
        if e["type"] == "invoke":
            if pending is not None:
                ops.append(_op(pending, None, aliases))
            pending = e
        elif pending is not None:
            ops.append(_op(pending, e, aliases))
            pending = None
    if pending is not None:
        ops.append(_op(pending, None, aliases))
    return ops


def _op(invoke: dict[str, Any], done: dict[str, Any] | None, aliases: list[str]) -> Op:
    value = dict(invoke.get("value") or {})
    if done is not None and isinstance(done.get("value"), dict):
        value.update(done["value"])
    nodes = value.get("nodes")
    if not nodes and value.get("target") in aliases:
        nodes = [value["target"]]
    return Op(
        index=(done or invoke)["index"],
        f=invoke["f"],
        nodes=list(nodes or []),
        invoked=invoke["time"] / 1e9,
        done=None if done is None else done["time"] / 1e9,
        ok=done is not None and done["type"] == "ok",
        value=value,
    )


@dataclass
class World:
    """Each node's state and the network's cuts over time, from the nemesis operations."""

    voters: list[str]
    dynamic: bool
    #: node -> [(from, state)], in time order
    states: dict[str, list[tuple[float, str]]]
    #: [(from, grudge (both ways), whether it cuts the controller listener only)]
    grudges: list[tuple[float, dict[str, set[str]], bool]]
    #: node -> [(wipe invoked, wipe completed or None)]
    wipes: dict[str, list[tuple[float, float | None]]]
    #: [(from, to)]: other faults in place (stalls), to their undoer's invoke (inf: never undone)
    others: list[tuple[float, float]]
    #: every moment at which a state or a cut changes
    times: list[float]
    #: node -> when each fault that ended its process was invoked (a kill, a stop, a restart)
    ends: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def of(cls, ops: list[Op], aliases: list[str], voters: list[str], dynamic: bool) -> World:
        changes: list[tuple[float, int, str, Any]] = []
        wipes: dict[str, list[tuple[float, float | None]]] = {a: [] for a in aliases}
        others: list[tuple[float, float]] = []
        ends: dict[str, list[float]] = {}
        for i, op in enumerate(ops):
            if (op.f in ("kill", "stop", "exit") and op.ok) or op.f in RESTARTS:
                for n in op.nodes:
                    ends.setdefault(n, []).append(op.invoked)
            if op.f in ("kill", "stop", "exit") and op.ok:
                changes.append((op.done, i, "set", (op.nodes, DOWN, None)))
            elif op.f == "pause" and op.ok:
                changes.append((op.done, i, "set", (op.nodes, PAUSED, (UP,))))
            elif op.f == "start":
                changes.append((op.invoked, i, "set", (op.nodes, UP, (DOWN, PAUSED))))
            elif op.f == "resume":
                changes.append((op.invoked, i, "set", (op.nodes, UP, (PAUSED,))))
            elif op.f in RESTARTS:
                changes.append((op.invoked, i, "set", (op.nodes, WIPING, None)))
                if op.ok:
                    changes.append((op.done, i, "set", (op.nodes, UP, None)))
                if op.f == "wipe":
                    for n in op.nodes:
                        wipes.setdefault(n, []).append((op.invoked, op.done if op.ok else None))
            elif op.f == "partition" and op.ok:
                grudge: dict[str, set[str]] = {}
                for a, enemies in (op.value.get("grudge") or {}).items():
                    for b in enemies:
                        grudge.setdefault(a, set()).add(b)
                        grudge.setdefault(b, set()).add(a)
                changes.append((op.done, i, "cut", (grudge, op.value.get("listener"))))
            elif op.f == "heal":
                changes.append((op.invoked, i, "cut", ({}, None)))
            elif op.ok and op.done is not None and op.value.get("undone_by"):
                # another fault that stays in place (a stall): it cuts nobody, until its undoer
                undoer = next((u.invoked for u in ops[i + 1 :] if u.f == op.value["undone_by"]), float("inf"))
                others.append((op.done, undoer))
        states: dict[str, list[tuple[float, str]]] = {a: [(float("-inf"), UP)] for a in aliases}
        grudges: list[tuple[float, dict[str, set[str]], str | None]] = [(float("-inf"), {}, None)]
        for t, _, kind, args in sorted(changes, key=lambda c: (c[0], c[1])):
            if kind == "cut":
                grudges.append((t, *args))
                continue
            nodes, state, only_from = args
            for n in nodes:
                if n in states and (only_from is None or states[n][-1][1] in only_from):
                    states[n].append((t, state))
        return cls(voters, dynamic, states, grudges, wipes, others, sorted({c[0] for c in changes}), ends)

    def state(self, node: str, t: float) -> str:
        current = UP
        for at, s in self.states.get(node, []):
            if at <= t:
                current = s
        return current

    def running(self, node: str, t: float) -> bool:
        return self.state(node, t) == UP

    def faulted_until(self, node: str, since: float) -> float:
        """When the node's unbroken down-or-paused stretch that holds at `since` ends (inf: never)."""
        states = self.states.get(node, [])
        current = max(i for i, (at, _) in enumerate(states) if at <= since)
        if states[current][1] not in (DOWN, PAUSED):
            return since
        return next((at for at, s in states[current + 1 :] if s not in (DOWN, PAUSED)), float("inf"))

    def grudge(self, t: float) -> tuple[dict[str, set[str]], str | None]:
        current: tuple[dict[str, set[str]], str | None] = ({}, None)
        for at, g, listener in self.grudges:
            if at <= t:
                current = (g, listener)
        return current

    def cut(self, a: str, b: str, t: float, quorum: bool) -> bool:
        """Whether a and b cannot reach each other at t: a cut of every port counts for both; for
        replication (`quorum` False) a CONTROLLER listener's cut does not, for the quorum and the
        controller a PLAINTEXT listener's does not."""
        g, listener = self.grudge(t)
        if listener == ("PLAINTEXT" if quorum else "CONTROLLER"):
            return False
        return b in g.get(a, set())

    def in_wipe(self, node: str, t: float) -> bool:
        return any(a <= t and (b is None or t <= b) for a, b in self.wipes.get(node, []))

    def seatless(self, node: str, t: float) -> bool:
        """A voter of a dynamic quorum wiped by t: its seat is held by its lost directory."""
        return self.dynamic and any(a <= t for a, _ in self.wipes.get(node, []))

    def majority(self, t: float) -> bool:
        """Whether a majority of the voters run and reach each other at t."""
        need = len(self.voters) // 2 + 1
        alive = [v for v in self.voters if self.running(v, t) and not self.seatless(v, t)]
        return any(
            all(not self.cut(a, b, t, quorum=True) for a, b in combinations(group, 2))
            for size in range(need, len(alive) + 1)
            for group in combinations(alive, size)
        )

    def quiet_from(self) -> float | None:
        """When the last fault ended, if every node is up and the network whole from then to the
        end; None when a fault is still open at the end."""
        if any(s[-1][1] != UP for s in self.states.values()) or self.grudges[-1][1]:
            return None
        if any(end == float("inf") for _, end in self.others):
            return None
        ends = [at for s in self.states.values() for at, _ in s[1:]] + [at for at, _, _ in self.grudges[1:]]
        return max(ends + [end for _, end in self.others], default=0.0)


# -- the quorum views


@dataclass
class Views:
    """Every round of views (a round: the views taken at one moment), in time order."""

    ids: dict[str, int]
    rounds: list[tuple[float, dict[str, dict[str, Any]]]]
    _index: dict[str, tuple[list[float], list[dict[str, Any]]]] | None = None
    _held: dict[tuple[str, int], float] | None = None

    @classmethod
    def of(cls, rows: list[dict[str, Any]], ids: dict[str, int]) -> Views:
        by_time: dict[int, dict[str, dict[str, Any]]] = {}
        for v in rows:
            by_time.setdefault(v["time"], {})[v["node"]] = v
        return cls(ids, [(t / 1e9, views) for t, views in sorted(by_time.items())])

    def view(self, node: str, t: float) -> dict[str, Any] | None:
        """The node's latest view at or before t."""
        times, rows = self._by_node().get(node, ([], []))
        i = bisect_right(times, t)
        return rows[i - 1] if i else None

    def _by_node(self) -> dict[str, tuple[list[float], list[dict[str, Any]]]]:
        if self._index is None:
            self._index = {}
            for t, round_ in self.rounds:
                for node, v in round_.items():
                    times, rows = self._index.setdefault(node, ([], []))
                    times.append(t)
                    rows.append(v)
        return self._index

    def claim(self, node: str, view: dict[str, Any] | None) -> int | None:
        """The epoch the node holds itself leader of in this view, or None."""
        if not view or view.get("error") is not None or view.get("leader_epoch") is None:
            return None
        own = view.get("node_id", self.ids.get(node))
        return view["leader_epoch"] if view.get("leader_id") == own else None

    def live(self, world: World, node: str, view: dict[str, Any] | None) -> int | None:
        """The epoch of the node's claim in this view, unless its file is what a process that a
        fault ended before the view was taken left (the module's docstring)."""
        epoch = self.claim(node, view)
        if view is None or epoch is None:
            return epoch
        taken = view["time"] / 1e9
        # A node restarted since it last held itself leader of an epoch holds no claim to it
        # (amended 2026-12-06): it held it in a view before a fault that ended its process.
        held = self.first_held(node, epoch)
        if held is not None and any(held < end < taken for end in world.ends.get(node, ())):
            return None
        written = sec(view.get("written"))
        if written is None:
            return epoch
        return None if any(written < end < taken for end in world.ends.get(node, ())) else epoch

    def first_held(self, node: str, epoch: int) -> float | None:
        """When the node's views first held it leader of `epoch`."""
        if self._held is None:
            self._held = {}
            for t, round_ in self.rounds:
                for n, v in round_.items():
                    e = self.claim(n, v)
                    if e is not None:
                        self._held.setdefault((n, e), t)
        return self._held.get((node, epoch))

    def active(self, world: World, t: float) -> tuple[str, int] | None:
        """The active controller at t (see the module's docstring) and its epoch."""
        claims = []
        for node in self.ids:
            epoch = self.live(world, node, self.view(node, t))
            if epoch is not None and world.running(node, t):
                claims.append((epoch, -self.ids[node], node))
        if not claims:
            return None
        epoch, _, node = max(claims)
        return node, epoch

    def times(self) -> list[float]:
        return [t for t, _ in self.rounds]


# -- the metadata log replayed


@dataclass(frozen=True)
class Part:
    leader: int
    isr: tuple[int, ...]
    replicas: tuple[int, ...]
    leader_epoch: int
    partition_epoch: int


@dataclass(frozen=True)
class Broker:
    fenced: bool
    shutdown: bool


@dataclass
class Image:
    """The replayed state after some prefix of a log."""

    topics: dict[str, str] = field(default_factory=dict)
    parts: dict[tuple[str, int], Part] = field(default_factory=dict)
    brokers: dict[int, Broker] = field(default_factory=dict)

    def copy(self) -> Image:
        return Image(dict(self.topics), dict(self.parts), dict(self.brokers))

    def name(self, topic_id: str, partition: int) -> str:
        return f"{self.topics.get(topic_id, topic_id)}/{partition}"

    def inactive(self, broker: int) -> bool:
        b = self.brokers.get(broker)
        return b is not None and (b.fenced or b.shutdown)

    def fenced(self, broker: int) -> bool:
        b = self.brokers.get(broker)
        return b is not None and b.fenced

    def unfenced(self, broker: int) -> bool:
        b = self.brokers.get(broker)
        return b is not None and not b.fenced


def replay(image: Image, record: dict[str, Any], bump_on_shrink: bool, say: Callable[..., None]) -> None:
    """Apply one record to `image` (the contract's replay rules), telling `say(rule, partition,
    broker)` each record rule it breaks."""
    kind, data = record.get("type"), record.get("data") or {}
    if kind == "REGISTER_BROKER_RECORD":
        image.brokers[data["brokerId"]] = Broker(bool(data.get("fenced", True)), bool(data.get("inControlledShutdown")))
    elif kind in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD"):
        b = image.brokers.get(data["id"])
        if b is not None:
            image.brokers[data["id"]] = Broker(kind == "FENCE_BROKER_RECORD", b.shutdown)
    elif kind == "BROKER_REGISTRATION_CHANGE_RECORD":
        b = image.brokers.get(data["brokerId"])
        if b is not None:
            fenced = {1: True, -1: False}.get(data.get("fenced", 0), b.fenced)
            image.brokers[data["brokerId"]] = Broker(fenced, b.shutdown or data.get("inControlledShutdown") == 1)
    elif kind == "UNREGISTER_BROKER_RECORD":
        image.brokers.pop(data["brokerId"], None)
    elif kind == "TOPIC_RECORD":
        image.topics[data["topicId"]] = data["name"]
    elif kind == "REMOVE_TOPIC_RECORD":
        for key in [k for k in image.parts if k[0] == data["topicId"]]:
            del image.parts[key]
    elif kind == "PARTITION_RECORD":
        key = (data["topicId"], data["partitionId"])
        name = image.name(*key)
        before = image.parts.get(key)
        after = Part(
            data["leader"],
            tuple(data.get("isr") or ()),
            tuple(data.get("replicas") or ()),
            data.get("leaderEpoch", 0),
            data.get("partitionEpoch", 0),
        )
        if before is not None and (
            after.leader_epoch < before.leader_epoch or after.partition_epoch < before.partition_epoch
        ):
            say(EPOCH, name, None)
        _judge_change(image, name, before, after, after.leader >= 0, say)
        image.parts[key] = after
    elif kind == "PARTITION_CHANGE_RECORD":
        key = (data["topicId"], data["partitionId"])
        before = image.parts.get(key)
        if before is None:
            return
        leader, isr, epoch = before.leader, before.isr, before.leader_epoch
        named = data.get("leader", -2) != -2
        if named:
            leader, epoch = data["leader"], epoch + 1
        if data.get("isr") is not None:
            isr = tuple(data["isr"])
            if bump_on_shrink and set(before.isr) - set(isr):
                epoch += 1
        replicas = tuple(data["replicas"]) if data.get("replicas") is not None else before.replicas
        after = Part(leader, isr, replicas, epoch, before.partition_epoch + 1)
        _judge_change(image, image.name(*key), before, after, named and leader >= 0, say)
        image.parts[key] = after


def _judge_change(
    image: Image, name: str, before: Part | None, after: Part, elects: bool, say: Callable[..., None]
) -> None:
    if elects and image.inactive(after.leader):
        say(INACTIVE, name, after.leader)
    for b in after.isr:
        if (before is None or b not in before.isr) and image.fenced(b):
            say(FENCED_ISR, name, b)
    if after.leader >= 0 and after.leader not in after.isr:
        say(NOT_IN_ISR, name, None)


def content(record: dict[str, Any]) -> str:
    """What metadata-divergence compares of a record."""
    return json.dumps([record.get("batch_epoch"), record.get("type"), record.get("version"), record.get("data")])


@dataclass
class Committed:
    """The committed metadata: the majority record of each offset, replayed, and the high
    watermark's samples, to say what was surely so at a moment."""

    offsets: list[int]  # the reference log's offsets, in order
    times: list[float | None]  # each one's write time (s)
    images: list[Image]  # images[i]: after the first i records
    samples: list[tuple[float, int]]  # (time s, high watermark) of each successful sample

    @classmethod
    def of(cls, logs: dict[str, list[dict[str, Any]]], samples: list[tuple[float, int]], bump: bool) -> Committed:
        by_offset: dict[int, list[dict[str, Any]]] = {}
        for alias in sorted(logs):
            for r in logs[alias]:
                by_offset.setdefault(r["offset"], []).append(r)
        offsets, times, images = [], [], [Image()]
        for offset in sorted(by_offset):
            held = by_offset[offset]
            best, _ = Counter(content(r) for r in held).most_common(1)[0]
            record = next(r for r in held if content(r) == best)
            image = images[-1].copy()
            replay(image, record, bump, lambda *_: None)
            offsets.append(offset)
            times.append(sec(record.get("time")))
            images.append(image)
        return cls(offsets, times, images, samples)

    def prefixes(self, t: float) -> range:
        """The indices i (images[i]) that may be the committed metadata at t."""
        low = max([hw for at, hw in self.samples if at <= t], default=0)
        high = min([hw for at, hw in self.samples if at >= t], default=float("inf"))
        written = next((o for o, w in zip(self.offsets, self.times, strict=True) if w is not None and w > t), None)
        if written is not None:
            high = min(high, written)
        high = max(high, low)
        first = sum(1 for o in self.offsets if o < low)
        last = sum(1 for o in self.offsets if o < high)
        return range(first, last + 1)

    def surely(self, t: float, holds: Callable[[Image], bool]) -> bool:
        return all(holds(self.images[i]) for i in self.prefixes(t))

    def written(self, t: float) -> Image:
        """The log as written by t."""
        n = sum(1 for w in self.times if w is not None and w <= t)
        return self.images[n]


# -- the run directory


@dataclass
class Evidence:
    run: RunDir
    end: float  # the history's last event (s)
    aliases: dict[str, int]  # alias -> node id
    brokers: list[str]
    voters: list[str]
    dynamic: bool
    settings: dict[str, int]
    bump_on_shrink: bool
    ops: list[Op]
    views: list[dict[str, Any]]
    samples: list[dict[str, Any]]
    logs: dict[str, list[dict[str, Any]]]
    gaps: dict[str, str]
    #: the stall probe's wake times (s), in order; None: no probe (judged with S alone)
    wakes: list[float] | None = None
    #: partition -> (invoke s, completion s) of each ok send to it
    sends: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    #: when the evidence ends (s): the history's last event, view or replication sample
    evidence_end: float = 0.0

    def stall(self, a: float, b: float) -> float:
        """The host stall inside [a, b] (s): over the probe's intervals that lasted over 150 ms and
        overlap the window, the part of each inside it less 100 ms."""
        if not self.wakes or b <= a:
            return 0.0
        total = 0.0
        for x, y in zip(self.wakes, self.wakes[1:], strict=False):
            if y - x > 0.15 and x < b and y > a:
                total += max(0.0, min(y, b) - max(x, a) - 0.1)
        return total

    def first_send(self, partition: str, after: float) -> float | None:
        """The completion of the first ok send to `partition` invoked at or after `after`."""
        invoked = [(i, c) for i, c in self.sends.get(partition, []) if i >= after]
        return min(invoked)[1] if invoked else None


def release(version: str | None) -> tuple[int, int] | None:
    if not version:
        return None
    parts = version.split("-")[0].split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return None


def load(path: Path) -> Evidence:
    run = RunDir(path)
    events = lines(run.history)
    config = json.loads(run.config.read_text()) if run.config.exists() else {}
    nodes = json.loads(run.control_plane_nodes.read_text())
    aliases = {a: n["id"] for a, n in nodes["nodes"].items()}
    brokers = [a for a, n in nodes["nodes"].items() if "broker" in n.get("roles", ["broker"])]
    by_id = {i: a for a, i in aliases.items()}
    voters = [by_id[v] for v in nodes.get("voters", []) if v in by_id]
    version = release(config.get("metadata_version")) or release(config.get("kafka_version")) or (99, 0)
    gaps_file = run.control_plane / "gaps.json"
    stall_file = run.control_plane / "host-stall.jsonl"
    wakes = sorted(w["time"] / 1e9 for w in lines(stall_file) if isinstance(w.get("time"), int))
    views, samples = lines(run.quorum_views), lines(run.quorum_replication)
    return Evidence(
        run=run,
        end=max((e["time"] for e in events), default=0) / 1e9,
        aliases=aliases,
        brokers=brokers,
        voters=voters,
        dynamic=nodes.get("quorum") == "dynamic",
        settings=nodes.get("settings", {}),
        bump_on_shrink=version < (3, 6),
        ops=nemesis_ops(events, list(aliases)),
        views=views,
        samples=samples,
        logs={alias: lines(p) for alias, p in run.metadata_logs().items()},
        gaps=read_gaps_file(gaps_file),
        wakes=wakes if stall_file.exists() else None,
        sends=ok_sends(events),
        evidence_end=max(e["time"] for e in [*events, *views, *samples, {"time": 0}]) / 1e9,
    )


def ok_sends(events: list[dict[str, Any]]) -> dict[str, list[tuple[float, float]]]:
    """partition -> (invoke, completion) of each ok send that wrote it (its completion's value)."""
    out: dict[str, list[tuple[float, float]]] = {}
    invoked: dict[Any, dict[str, Any]] = {}
    for e in events:
        if e.get("process") == "nemesis" or e.get("f") != "send":
            continue
        if e["type"] == "invoke":
            invoked[e["process"]] = e
            continue
        start = invoked.pop(e["process"], None)
        if start is None or e["type"] != "ok":
            continue
        for m in e.get("value") or []:
            if isinstance(m, list) and len(m) >= 2 and m[0] == "send":
                out.setdefault(str(m[1]), []).append((start["time"] / 1e9, e["time"] / 1e9))
    return out


def judge(path: Path) -> Judgement:
    """What the contract says of the control plane of the run directory at `path`."""
    ev = load(path)
    out = Judgement()
    world = World.of(ev.ops, list(ev.aliases), ev.voters, ev.dynamic)
    views = Views.of(ev.views, ev.aliases)
    good = [(s["time"] / 1e9, s["high_watermark"]) for s in ev.samples if s.get("error") is None]
    missing = dict(ev.gaps)
    if not views.rounds:
        missing.setdefault("views", "no quorum views")
    if not any(ev.logs.values()):
        missing.setdefault("metadata", "no metadata log")
    if not good:
        missing.setdefault("replication", "no replication sample")
    for kind, why in missing.items():
        for rule in NEEDS.get(kind, ()):
            out.skip(rule, why)
    committed = Committed.of(ev.logs, good, ev.bump_on_shrink)
    fetch, session, lag = (
        ev.settings["controller.quorum.fetch.timeout.ms"] / 1000,
        ev.settings["broker.session.timeout.ms"] / 1000,
        ev.settings["replica.lag.time.max.ms"] / 1000,
    )
    out.bounds = {SPLIT: 1.5 * fetch + S, UNFENCED: session + S, STALE: 1.5 * lag + S, STUCK_RULE: STUCK + S}
    if "views" not in missing:
        split_brain(out, ev, world, views)
        double_leader(out, views, ev.logs)
        epoch_regression(out, world, views)
    if "metadata" not in missing:
        record_rules(out, ev.logs, ev.bump_on_shrink)
        if "replication" not in missing:
            divergence(out, ev)
    if not {"views", "metadata", "replication"} & set(missing):
        unfenced(out, ev, world, views, committed)
        stale(out, ev, world, views, committed)
    if "replication" not in missing:
        stuck(out, ev, world)
    return out


# -- the rules


def split_brain(out: Judgement, ev: Evidence, world: World, views: Views) -> None:
    bound = out.bounds[SPLIT]
    for a, b in combinations(sorted(views.ids), 2):
        stretch: list[float] = []
        for t in [*views.times(), float("inf")]:
            ea, eb = views.live(world, a, views.view(a, t)), views.live(world, b, views.view(b, t))
            both = (
                t != float("inf")
                and ea is not None
                and eb is not None
                and ea != eb
                and world.running(a, t)
                and world.running(b, t)
            )
            if both:
                stretch.append(t)
                continue
            if stretch and stretch[-1] - stretch[0] > bound + ev.stall(stretch[0], stretch[0] + bound):
                out.add(SPLIT, (a, b))
            stretch = []


def double_leader(out: Judgement, views: Views, logs: dict[str, list[dict[str, Any]]]) -> None:
    leaders: dict[int, set[int]] = {}
    for _, round_ in views.rounds:
        for node, v in round_.items():
            epoch = views.claim(node, v)
            if epoch is not None and epoch >= 0:
                leaders.setdefault(epoch, set()).add(v.get("node_id", views.ids.get(node)))
    for log in logs.values():
        for r in log:
            data = r.get("data") or {}
            if r.get("type") == "LeaderChange" and r.get("batch_epoch") is not None and data.get("leaderId", -1) >= 0:
                leaders.setdefault(r["batch_epoch"], set()).add(data["leaderId"])
    for epoch, ids in sorted(leaders.items()):
        if len(ids) > 1:
            out.add(DOUBLE, epoch)


def epoch_regression(out: Judgement, world: World, views: Views) -> None:
    for node in views.ids:
        previous: int | None = None
        wipes = world.wipes.get(node, [])
        forgotten: set[int] = set()
        for t, round_ in views.rounds:
            if world.in_wipe(node, t):
                continue
            for i, (_, done) in enumerate(wipes):
                if done is not None and done < t and i not in forgotten:
                    forgotten.add(i)
                    previous = None
            v = round_.get(node)
            epoch = None if not v or v.get("error") is not None else v.get("leader_epoch")
            if epoch is None or epoch < 0:
                continue
            if previous is not None and epoch < previous:
                out.add(REGRESSION, node, round(t, 3))
            previous = epoch


def record_rules(out: Judgement, logs: dict[str, list[dict[str, Any]]], bump_on_shrink: bool) -> None:
    for log in logs.values():
        image = Image()
        for record in sorted(log, key=lambda r: r["offset"]):
            offset = record["offset"]

            def say(rule: str, partition: str, broker: int | None, offset: int = offset) -> None:
                if rule in (INACTIVE, FENCED_ISR):
                    out.add(rule, partition, offset, broker)
                else:
                    out.add(rule, partition, offset)

            replay(image, record, bump_on_shrink, say)


def divergence(out: Judgement, ev: Evidence) -> None:
    """Different records at one offset below the final high watermark, where both carry the same
    epoch, or the node whose record differs from the final quorum leader's fetched from that leader
    past the offset: a successful sample that leader answered shows its log end beyond it."""
    good = [s for s in ev.samples if s.get("error") is None]
    last = max(good, key=lambda s: s["time"])
    by_id = {i: a for a, i in ev.aliases.items()}
    leader = by_id.get(last.get("leader_id"))
    fetched: dict[str, int] = {}
    for sample in good:
        if sample.get("leader_id") != last.get("leader_id"):
            continue
        for r in sample.get("voters", []) + sample.get("observers", []):
            node = by_id.get(r["id"])
            if node is not None and r.get("log_end_offset") is not None:
                fetched[node] = max(fetched.get(node, -1), r["log_end_offset"])
    held: dict[int, dict[str, dict[str, Any]]] = {}
    for alias, log in ev.logs.items():
        for r in log:
            if r["offset"] < last["high_watermark"]:
                held.setdefault(r["offset"], {})[alias] = r
    for offset, records in sorted(held.items()):
        ref = records.get(leader) if leader is not None else None
        for (a, ra), (b, rb) in combinations(sorted(records.items()), 2):
            if content(ra) == content(rb):
                continue
            same_epoch = ra.get("batch_epoch") == rb.get("batch_epoch")
            past = any(
                ref is not None and content(r) != content(ref) and fetched.get(n, -1) > offset
                for n, r in ((a, ra), (b, rb))
            )
            if same_epoch or past:
                out.add(DIVERGENCE, offset)


def _moments(times: Iterable[float], start: float, end: float) -> list[float]:
    return [start] + [t for t in times if start < t <= end]


def leader_changes(ev: Evidence) -> list[tuple[int, int, float | None]]:
    """(epoch, offset, written at s) of each quorum leader's LeaderChange record, in any node's log."""
    seen: dict[tuple[int, int], float | None] = {}
    for log in ev.logs.values():
        for r in log:
            # DumpLogSegments spells the control record LeaderChange in 4.x, LEADER_CHANGE in 3.x
            kind = str(r.get("type") or "").replace("_", "").upper()
            if kind.startswith("LEADERCHANGE") and r.get("batch_epoch") is not None:
                seen.setdefault((r["batch_epoch"], r["offset"]), sec(r.get("time")))
    return sorted((e, o, t) for (e, o), t in seen.items())


def activated(ev: Evidence, offset: int) -> float | None:
    """The first moment the quorum's high watermark is seen past `offset` (a successful sample)."""
    seen = [s["time"] / 1e9 for s in ev.samples if s.get("error") is None and s["high_watermark"] > offset]
    return min(seen, default=None)


def count_until(
    need: float, start: float, stop: float, moments: Iterable[float], counts: Callable[[float], bool]
) -> float | None:
    """The moment at which `need` s of counted time have passed from `start` (between two moments the
    state is the one at the first: `counts`), or None when fewer pass before `stop`."""
    points = sorted({start, stop} | {m for m in moments if start < m < stop})
    acc = 0.0
    for x, y in zip(points, points[1:], strict=False):
        if counts(x):
            if acc + (y - x) >= need:
                return x + (need - acc)
            acc += y - x
    return None


def unfenced(out: Judgement, ev: Evidence, world: World, views: Views, committed: Committed) -> None:
    """From the latest of: the fault taking effect; the activation of each quorum leader elected
    (its LeaderChange record written) while the broker stayed down; the last moment a majority of the
    voters came to reach each other again. A fault on the active controller waits for the activation
    of a leader of a higher epoch: without one in the evidence the deadline is not known."""
    bound = out.bounds[UNFENCED]
    changes = leader_changes(ev)
    for op in ev.ops:
        if op.f not in ("kill", "stop", "pause") or not op.ok or op.done is None:
            continue
        took = op.done
        active = views.active(world, op.invoked)
        for node in op.nodes:
            if node not in ev.brokers:
                continue
            until = world.faulted_until(node, took)
            if until <= took:
                continue
            starts = [took]
            moments = [t for t in world.times if took < t < until]
            had = world.majority(took)
            regains = [t for t in moments if world.majority(t) and not world.majority(t - 1e-6)]
            if not had and not regains:
                continue  # no majority again: no controller could fence it, the bound never starts
            starts += regains
            # since the fault began (a stopped controller resigns while its stop is under way)*
            elected = [(e, o) for e, o, t in changes if t is not None and op.invoked <= t < until]
            unknown = False
            for _, offset in elected:
                when = activated(ev, offset)
                if when is None:
                    unknown = True
                    break
                starts.append(when)
            if unknown:
                out.skip(UNFENCED, f"op {op.index}: a quorum leader elected while {node} was down never activated")
                continue
            if active is not None and active[0] in op.nodes and not any(e > active[1] for e, _ in elected):
                if took + bound < until:
                    out.skip(UNFENCED, f"no quorum leader elected after op {op.index} took down the active controller")
                continue
            begin = max(starts)
            deadline = begin + bound + ev.stall(begin, begin + bound)
            if until <= deadline:
                if until == float("inf") and deadline > ev.evidence_end:
                    out.skip(UNFENCED, f"op {op.index}: the evidence ended before its deadline")
                continue
            if deadline > ev.evidence_end:
                out.skip(UNFENCED, f"op {op.index}: the evidence ended before its deadline")
                continue
            if not world.majority(deadline):
                continue
            broker = ev.aliases[node]
            if committed.surely(deadline, lambda image, b=broker: image.unfenced(b)):
                out.add(UNFENCED, node, op.index)


def stale(out: Judgement, ev: Evidence, world: World, views: Views, committed: Committed) -> None:
    """Counted time from the later of the fault taking effect and the first ok send to the
    partition invoked after it (none: not judged), again from each change of its leader; counted
    while an active controller exists and the leader, up, reaches it; not checked when the
    evidence ends before the count reaches the bound."""
    bound = out.bounds[STALE]
    by_id = {i: a for a, i in ev.aliases.items()}
    checks = sorted(set(world.times) | set(views.times()) | {t for t in committed.times if t is not None})
    for op in ev.ops:
        if op.f not in ("kill", "stop", "pause", "partition") or not op.ok or op.done is None:
            continue
        took = op.done
        image = committed.written(took)
        for key, part in sorted(image.parts.items()):
            if by_id.get(part.leader) is None:
                continue
            name = image.name(*key)
            for follower in part.isr:
                node = by_id.get(follower)
                if follower == part.leader or node is None or (part.replicas and follower not in part.replicas):
                    continue
                if op.f == "partition":
                    if not world.cut(node, by_id[part.leader], took, quorum=False):
                        continue
                elif node not in op.nodes or world.faulted_until(node, took) <= took:
                    continue
                first = ev.first_send(name, took)
                if first is None:
                    continue  # no ok send wrote the partition after the fault: not judged
                _stale_one(out, ev, world, views, committed, op, key, name, node, max(took, first), checks, bound)


def _stale_one(
    out: Judgement,
    ev: Evidence,
    world: World,
    views: Views,
    committed: Committed,
    op: Op,
    key: tuple[str, int],
    name: str,
    node: str,
    start: float,
    checks: list[float],
    bound: float,
) -> None:
    by_id = {i: a for a, i in ev.aliases.items()}
    took = op.done
    assert took is not None
    # the partition's leader from the fault on, as the log was written: (from, leader alias or None)
    terms: list[tuple[float, str | None]] = [(took, by_id.get(committed.written(took).parts[key].leader))]
    for t in sorted({t for t in committed.times if t is not None and t > took}):
        im = committed.written(t)
        now = by_id.get(im.parts[key].leader) if key in im.parts else None
        if now != terms[-1][1]:
            terms.append((t, now))
    end = ev.evidence_end
    for i, (since, leader) in enumerate(terms):
        nxt = terms[i + 1][0] if i + 1 < len(terms) else float("inf")
        if leader is None or leader == node:
            if nxt == float("inf"):
                return
            continue
        if op.f == "partition":
            if not world.cut(node, leader, since, quorum=False):
                return
            stays = next(
                (t for t in checks if t > since and not world.cut(node, leader, t, quorum=False)), float("inf")
            )
        else:
            stays = world.faulted_until(node, took)
        begin = max(start, since)
        stop = min(nxt, stays, end)

        def counts(t: float, leader: str = leader) -> bool:
            active = views.active(world, t)
            return (
                active is not None
                and world.running(leader, t)
                and (active[0] == leader or not world.cut(leader, active[0], t, quorum=True))
            )

        plain = count_until(bound, begin, stop, checks, counts)
        deadline = None
        if plain is not None:
            deadline = count_until(bound + ev.stall(begin, plain), begin, stop, checks, counts)
        if deadline is None:
            if nxt < min(stays, end):
                continue  # the leader changed first: the count starts again
            if stays < end:
                return  # the fault was undone first
            out.skip(STALE, f"op {op.index}: the evidence ended before its count reached the bound")
            return
        if committed.surely(deadline, lambda im, k=key, f=ev.aliases[node]: k in im.parts and f in im.parts[k].isr):
            out.add(STALE, node, name, op.index)
        return


def _reaches(world: World, views: Views, node: str, t: float) -> bool:
    """Whether `node` can reach the active controller at t (true when there is none)."""
    active = views.active(world, t)
    return active is None or active[0] == node or not world.cut(node, active[0], t, quorum=True)


def stuck(out: Judgement, ev: Evidence, world: World) -> None:
    quiet = world.quiet_from()
    if quiet is None:
        out.skip(STUCK_RULE, "a fault is still open at the end of the history")
        return
    # The run samples on after its history's last event (the Must of issue 45: until 30 s + S after
    # the last heal), so what ends the rule's evidence is the last replication sample.
    # Short of that, the rule's answer is known once every broker was seen fetching since the
    # heal (not behind the high watermark, or its log end moved): none then stays behind from it.
    sampled = max((_time(s) / 1e9 for s in ev.samples), default=ev.end)
    samples = sorted((s for s in ev.samples if s.get("error") is None), key=_time)
    if max(ev.end, sampled) - quiet <= out.bounds[STUCK_RULE] and not all(
        _fetched_since(samples, ev.aliases[node], quiet) for node in ev.brokers
    ):
        out.skip(STUCK_RULE, "the samples end less than 30 s + S after the last fault was undone")
        return
    for node in ev.brokers:
        nid = ev.aliases[node]
        stretch: list[tuple[float, int]] = []
        for s in [*samples, None]:
            entry = None
            if s is not None:
                entry = next((r for r in s.get("voters", []) + s.get("observers", []) if r["id"] == nid), None)
                if entry is None:
                    continue
            behind = s is not None and entry["log_end_offset"] < s["high_watermark"]
            if behind and stretch and entry["log_end_offset"] == stretch[0][1]:
                stretch.append((s["time"] / 1e9, entry["log_end_offset"]))
                continue
            begin = max(stretch[0][0], quiet) if stretch else 0.0
            bound = out.bounds[STUCK_RULE]
            if stretch and stretch[-1][0] - begin > bound + ev.stall(begin, begin + bound):
                out.add(STUCK_RULE, node)
            stretch = [(s["time"] / 1e9, entry["log_end_offset"])] if behind else []


def _time(sample: dict[str, Any]) -> int:
    return sample["time"]


def _fetched_since(samples: list[dict[str, Any]], nid: int, quiet: float) -> bool:
    """Whether node `nid` is seen, in the answered samples asked from `quiet` on, at or past the
    high watermark, or at a log end other than the one it first showed then."""
    ends = [
        (r["log_end_offset"], s["high_watermark"])
        for s in samples
        if s["time"] / 1e9 >= quiet
        for r in s.get("voters", []) + s.get("observers", [])
        if r["id"] == nid and r["log_end_offset"] is not None and s.get("high_watermark") is not None
    ]
    return any(leo >= hw for leo, hw in ends) or len({leo for leo, _ in ends}) > 1
