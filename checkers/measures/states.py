"""The states a run reached, as a set of small hashable features: `explore`'s map of where its
schedules have been (runs/explore.py keeps a schedule that reached a feature no run had before).

Read from what every run already records, never from the checker's verdict:
- every node's decoded metadata log (control-plane/metadata/, replayed by history/metadata_replay.py):
  a workload partition's ISR shrunk to one replica, a partition with no leader, a leader elected
  (from the ISR, from the ELR, or unclean) and where its replica came from (steady, restarted,
  lost its unflushed writes, wiped), the ELR in use, a broker fenced while it led, a broker
  registered again after its disk was lost, a quorum election and where its new leader came from;
- each node's quorum views (control-plane/quorum-views.jsonl): the quorum's epoch changed, or a
  node's went back (a wiped voter), or two nodes up at once held themselves leader in different
  epochs;
- the history: the nemesis's operations (what was in place when), and writes acknowledged while
  the metadata log held their partition's ISR at one replica.

Each feature carries the kind of faults in place at its moment (`context`: network, process,
disk, remote, "several" or "quiet"), as Mallory's abstract states carry the events around them:
"ISR shrunk to one under a network fault" is a state "ISR shrunk to one" alone is not. The context
is coarse on purpose: when it named every combination of faults in place, overlapping one more
fault made any feature "new" (issue 61), and the count rewarded piling faults up rather than
getting further. The vocabulary is finite, so the count of distinct states measures coverage.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_chaos.history import faults as model
from kafka_chaos.history.events import FAIL, OK, STARTED, WRITES
from kafka_chaos.history.evidence import ENDS_PROCESS, left_by_the_dead, read_gaps, record_data
from kafka_chaos.history.file import read_history
from kafka_chaos.history.metadata_replay import (
    FENCE,
    NO_LEADER,
    REGISTER,
    REGISTRATION_CHANGE,
    Replay,
    bumps_on_isr_shrink,
)
from kafka_chaos.history.nodes import NodesFile
from kafka_chaos.history.quorum_view import claims_to_lead
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir

State = tuple[str, ...]
QUIET, SEVERAL = "quiet", "several"
#: A fault's kind in a feature's context, by what its effect means (history/faults.py).
NETWORK, PROCESS, DISK, REMOTE = "network", "process", "disk", "remote"
#: How long after a fault that restarts its node (wipe, lose-unflushed) it counts as in place (ns):
#: the one model's (history/faults.py).
AFTER_RESTART_NS = model.AFTER_RESTART_NS
#: A leader's origin: the last thing that happened to its node before it was elected, unless it
#: had led that partition since.
STEADY, RESTARTED_FROM, LOST, EMPTIED = "steady", "restarted", "lost-unflushed", "emptied"
LEADER_RECOVERING = 1  # PartitionChangeRecord.leaderRecoveryState after an unclean election


@dataclass
class Window:
    """A fault in place: its name (with a partition's shape), the nodes it names, from and to (ns)."""

    name: str
    f: str
    nodes: set[str]
    start: int
    end: float = float("inf")
    effect: str | None = None
    #: a network fault's cut: node -> the nodes it cannot reach (empty for any other fault)
    grudge: dict[str, list[str]] = field(default_factory=dict)

    def parts(self, alias: str, others: set[str]) -> bool:
        """Whether it cuts `alias` from one of `others`: its grudge parts them, or (no grudge
        known) it names `alias`."""
        if not self.grudge:
            return alias in self.nodes
        peers = set(self.grudge.get(alias, ())) | {n for n, cut in self.grudge.items() if alias in cut}
        return bool(peers & (others - {alias}))


def family(w: Window) -> str:
    """The kind of fault a window is: network (a cut, a stall), process (killed, paused, exited),
    disk (a power loss, a wipe), remote (its storage impaired), else its fault's name."""
    means = model.meaning(w.effect)
    if means.network:
        return NETWORK
    if means.restarts:
        return DISK
    if means.down:
        return PROCESS
    return REMOTE if means.outside else w.f


@dataclass
class Faults:
    """The nemesis's operations read from the history: the windows, and what each node went through."""

    windows: list[Window] = field(default_factory=list)
    #: alias -> [(time ns, origin)]: the moments a node came back changed (restarted, lost, emptied).
    origins: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    #: alias -> [(from, to) ns]: when it may not have been running (killed, stopped, paused,
    #: restarting), from its fault's invoke until its undo completed (history/faults.py)
    downs: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    def context(self, t: int | None) -> str:
        """The kind of faults in place at `t` (FAMILIES: a network fault, a process's, a disk's, a
        remote storage's), "several" when more than one kind is, or "quiet": coarse, so that
        overlapping more faults does not make a feature new (issue 61)."""
        if t is None:
            return "unknown"
        kinds = {family(w) for w in self.windows if w.start <= t < w.end}
        return QUIET if not kinds else kinds.pop() if len(kinds) == 1 else SEVERAL

    def down(self, alias: str, t: int | None) -> bool:
        """Whether `alias` may not have been running at `t` (killed, stopped, paused, restarting):
        its view then is no claim (../shared/anomalies.md, `quorum-split-brain`)."""
        return t is not None and any(a <= t <= b for a, b in self.downs.get(alias, ()))

    def from_the_dead(self, alias: str, t: int, written: int | None) -> bool:
        """Whether a file of `alias` read at `t` was written by a process that a fault ended before
        then (a kill, a stop, a restart): not yet written again by the one that runs now."""
        return left_by_the_dead(
            written, t, (w.start for w in self.windows if w.effect in ENDS_PROCESS and alias in w.nodes)
        )

    def origin(self, alias: str | None, t: int | None, since: int | None) -> str:
        """Where `alias` came from at `t`: its last restart, loss or wipe before `t`, unless that was
        before `since` (it has led since)."""
        if alias is None or t is None:
            return STEADY
        before = [(at, o) for at, o in self.origins.get(alias, []) if at <= t]
        if not before or (since is not None and before[-1][0] <= since):
            return STEADY
        return before[-1][1]


def read_faults(events: Iterable[dict[str, Any]]) -> Faults:
    """The windows of the nemesis's operations, from the one model of them (history/faults.py): a
    fault that stays in place from its invoke until its undo on that node completed (never, when
    none came), a fault that restarts its node from its invoke until AFTER_RESTART_NS after it
    completed. Failed operations did nothing."""
    ops = model.pair(events)
    end = max((t for op in ops for t in (op.itime, op.ctime) if t is not None), default=0)
    nodes = {(op.op, op.f, op.itime): set(op.nodes) for op in ops}
    out = Faults()
    ws = model.windows(ops, end)
    out.downs = model.down_spans(ws, unhealed=float("inf"))
    for w in ws:
        name = f"{w.f}:{w.shape}" if w.shape and w.f == "partition" else w.f
        start, stop = w.in_place
        named = {w.node} if w.node is not None else nodes[(w.op, w.f, w.invoke)]
        out.windows.append(Window(name, w.f, named, start, stop, w.does, dict(w.grudge)))
    for op in ops:
        if op.type == FAIL or op.ctime is None:
            continue
        if op.effect == STARTED:  # back from a kill or stop: restarted with its disk as it was
            origin = RESTARTED_FROM
        elif op.means.restarts:
            origin = EMPTIED if op.means.empties else LOST
        else:
            continue
        for alias in op.nodes:
            out.origins.setdefault(alias, []).append((op.ctime, origin))
    return out


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """A JSON-lines evidence file's records (a metadata log's `data` an object: {} for null)."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                rec["data"] = record_data(rec)  # an object as written (history/evidence.py), {} for null
                yield rec


def is_leader_change(kind: Any) -> bool:
    """Whether a metadata log record is the quorum's LeaderChange control record (the dump tool
    spells it `LeaderChange` in 4.x, `LEADER_CHANGE` in 3.x: harness/logdump.py)."""
    return str(kind or "").replace("_", "").upper() == "LEADERCHANGE"


def epoch_leaders(run: RunDir) -> dict[int, int]:
    """Each quorum epoch's leader, as the quorum's replication samples and the nodes' own views
    name it: the leader of a LeaderChange record that 3.x's dump prints without its data."""
    out: dict[int, int] = {}
    for path in (run.quorum_replication, run.quorum_views):
        if not path.is_file():
            continue
        for r in read_records(path):
            epoch, leader = r.get("leader_epoch"), r.get("leader_id")
            if not r.get("error") and isinstance(epoch, int) and isinstance(leader, int) and leader >= 0:
                out.setdefault(epoch, leader)
    return out


def elected(rec: dict[str, Any], leaders: dict[int, int]) -> int | None:
    """The leader a LeaderChange record names: its `leaderId`, else its batch's epoch's leader
    (`epoch_leaders`); None when neither is known."""
    leader = rec["data"].get("leaderId")
    if not isinstance(leader, int):
        leader = leaders.get(rec.get("batch_epoch"))  # type: ignore[arg-type]
    return leader if isinstance(leader, int) and leader >= 0 else None


@dataclass
class Nodes:
    """The nodes' ids and aliases (control-plane/nodes.json; kafka-ID when it is missing)."""

    ids: dict[str, int] = field(default_factory=dict)

    @classmethod
    def load(cls, run: RunDir) -> Nodes:
        try:
            return cls(NodesFile.read(run.control_plane_nodes).ids)
        except (OSError, ValueError):
            return cls()

    def alias(self, node_id: int) -> str:
        for alias, i in self.ids.items():
            if i == node_id:
                return alias
        return f"kafka-{node_id}"


@dataclass
class RunStates:
    """A run's features, and the ISR of each workload partition over time (for the acknowledgements)."""

    features: set[State] = field(default_factory=set)
    #: key -> ([time ns], [ISR size]) from the longest metadata log
    isr: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)
    #: evidence the run could not collect whole (control-plane/gaps.json)
    gaps: dict[str, str] = field(default_factory=dict)


def replay_log(
    path: Path,
    topic: str,
    bump: bool,
    faults: Faults,
    nodes: Nodes,
    out: RunStates,
    timeline: bool,
    leaders: dict[int, int] | None = None,
) -> None:
    """One node's metadata log replayed: its features into `out` (and, with `timeline`, the ISR
    sizes); `leaders`: each quorum epoch's leader (`epoch_leaders`)."""
    replay = Replay(bump)
    led: dict[tuple[str, int], int] = {}  # (partition, broker) -> when it last became leader
    led_quorum: dict[int, int] = {}  # controller -> when it last became the quorum's leader
    prefix = f"{topic}/"
    for rec in read_records(path):
        kind, data, t = rec.get("type"), rec["data"], rec.get("time")
        if is_leader_change(kind):
            leader = elected(rec, leaders or {})
            if leader is not None:
                origin = faults.origin(nodes.alias(leader), t, led_quorum.get(leader))
                out.features.add(("quorum-election", origin, faults.context(t)))
                led_quorum[leader] = t or 0
            continue
        step = replay.step(int(rec.get("offset", -1)), kind, data)
        if step.broker is not None:
            _broker_features(kind, data, step.broker, t, replay, prefix, faults, nodes, out)
            continue
        if step.partition is None or not step.partition.startswith(prefix) or step.after is None:
            continue
        before, after, ctx = step.before, step.after, faults.context(t)
        if timeline and t is not None:
            times, sizes = out.isr.setdefault(step.partition, ([], []))
            times.append(int(t))
            sizes.append(len(after.isr))
        if before is None:
            if after.leader != NO_LEADER:
                led[(step.partition, after.leader)] = t or 0
            continue
        if "isr" in step.changes and len(after.isr) == 1 and len(before.isr) > 1:
            out.features.add(("isr-one", ctx))
        if "elr" in step.changes and after.elr:
            out.features.add(("elr", ctx))
        if step.led and after.leader == NO_LEADER and before.leader != NO_LEADER:
            out.features.add(("leaderless", ctx))
        if step.led and after.leader not in (NO_LEADER, before.leader):
            if data.get("leaderRecoveryState") == LEADER_RECOVERING:
                how = "unclean"
            else:
                how = "isr" if after.leader in before.isr else "elr" if after.leader in before.elr else "unclean"
            since = led.get((step.partition, after.leader))
            origin = faults.origin(nodes.alias(after.leader), t, since)
            out.features.add(("leader-elected", how, origin, ctx))
            led[(step.partition, after.leader)] = t or 0


def _broker_features(
    kind: str | None,
    data: dict[str, Any],
    broker: int,
    t: int | None,
    replay: Replay,
    prefix: str,
    faults: Faults,
    nodes: Nodes,
    out: RunStates,
) -> None:
    fenced = kind == FENCE or (kind == REGISTRATION_CHANGE and data.get("fenced") == 1)
    if fenced:
        leads = any(replay.name(*pid).startswith(prefix) and p.leader == broker for pid, p in replay.partitions.items())
        out.features.add(("fenced", "leader" if leads else "follower", faults.context(t)))
    elif kind == REGISTER and replay.brokers[broker].epoch > 0:
        origin = faults.origin(nodes.alias(broker), t, None)
        if origin != STEADY:
            out.features.add(("registered", origin, faults.context(t)))


def view_features(run: RunDir, faults: Faults, out: RunStates) -> None:
    """The quorum's epoch changing while faults were in place, a node's epoch going back, and two
    nodes up at once each holding itself leader in a different epoch (`quorum-two-claims`: the
    step before a split brain, which a search can then hold longer; a node that is down keeps its
    last file, and is not counted, nor is that file once it starts, until its new process writes)."""
    if not run.quorum_views.is_file():
        return
    last: dict[str, int] = {}
    claims: dict[str, int] = {}  # node -> the epoch its latest view claims leadership in
    for v in read_records(run.quorum_views):
        epoch, node, t = v.get("leader_epoch"), v.get("node"), v.get("time")
        if v.get("error") or not isinstance(epoch, int) or node is None:
            continue
        seen = last.get(node)
        if seen is not None and epoch > seen:
            out.features.add(("quorum-epoch-change", faults.context(t)))
        elif seen is not None and epoch < seen:
            out.features.add(("quorum-epoch-back", faults.context(t)))
        last[node] = epoch
        if claims_to_lead(v) and not faults.from_the_dead(node, t, v.get("written")):
            claims[node] = epoch
        else:
            claims.pop(node, None)
        if len({e for n, e in claims.items() if not faults.down(n, t)}) > 1:
            out.features.add(("quorum-two-claims", faults.context(t)))


def ack_features(history: Path, faults: Faults, out: RunStates) -> None:
    """Writes acknowledged while their partition's ISR was one replica in the metadata log (where
    the log holds that partition: otherwise it is not knowable here)."""
    if not any(1 in sizes for _, sizes in out.isr.values()):
        return  # no ISR of one replica: no need to read the history again
    for e in read_history(history):
        if e["type"] != OK or e["f"] not in WRITES or not isinstance(e.get("value"), list):
            continue
        for mop in e["value"]:
            if not (isinstance(mop, list) and len(mop) >= 2 and mop[0] == "send"):
                continue
            timeline = out.isr.get(str(mop[1]))
            if timeline is None:
                continue
            i = bisect.bisect_right(timeline[0], e["time"]) - 1
            if i >= 0 and timeline[1][i] == 1:
                out.features.add(("acked-isr-one", faults.context(e["time"])))


def run_states(run_dir: str | Path) -> RunStates:
    """Every feature a run directory's files show (an empty set when it has none of them)."""
    run = RunDir(Path(run_dir))
    cfg = RunConfig.load(run.path)
    out = RunStates(gaps=read_gaps(run))
    faults = read_faults(read_history(run.history)) if run.history.is_file() else Faults()
    nodes = Nodes.load(run)
    bump = bumps_on_isr_shrink(cfg.metadata_version, cfg.kafka_version)
    logs = run.metadata_logs()
    longest = max(logs.values(), key=lambda p: p.stat().st_size) if logs else None
    leaders = epoch_leaders(run) if logs else {}
    for path in logs.values():
        replay_log(path, cfg.topic, bump, faults, nodes, out, timeline=path == longest, leaders=leaders)
    view_features(run, faults, out)
    if run.history.is_file():
        ack_features(run.history, faults, out)
    return out


def state_text(state: State) -> str:
    """A feature on one line: `leader-elected isr restarted | several`."""
    *what, ctx = state
    return f"{' '.join(what)} | {ctx}"
