"""Hypothesis strategies of small control-plane evidence (cp_builder's run directories) in which
each of the eleven rules of ../shared/anomalies.md ("Control plane") fires in a good share of
cases, and misses by a second in others.

A case is a few independent stories over cp_builder's healthy run, each aimed at some rules:
- the quorum's: the active controller (kafka-1) cut off while kafka-2 leads a later epoch, its claim
  outlasting the bound by a second or falling a second short (`quorum-split-brain`), perhaps after a
  short pause; the active controller killed, stopped or paused, a slow or quick election, its broker
  fenced a second either side of the amended bound (`unfenced-down-broker`), perhaps a member of
  chaos/0's ISR that stays in it (`stale-isr-member`); a second leader of an epoch, in the views or
  in a LeaderChange record (`quorum-double-leader`); a node whose epoch drops after a restart, or
  after a wipe (exempt) (`quorum-epoch-regression`);
- a broker's (kafka-3, a follower of chaos/0): killed, stopped, paused, paused then killed, or cut
  off from chaos/0's leader (or from its controller listener only), fenced and dropped from the ISR
  a second either side of each bound, early, or never;
- records', each on a topic and brokers of its own (ids that are no node: they only live in the
  log): `leader-not-in-isr`, `partition-epoch-regression` (a PartitionRecord again, its epochs a
  step either side of the replay's), `inactive-leader` (fenced, in controlled shutdown, registered
  the old way, or the leader named again), `fenced-in-isr`;
- a last record that one node holds differently, below the final high watermark or not
  (`metadata-divergence`);
- a broker whose log end offset stays put after the last fault for a second more or less than
  30 s + S (`stuck-broker-metadata`), or a fault left open at the end (the rule cannot be checked);
- DescribeQuorum failing for a few seconds.

Times of faults sit on quarter seconds off the views' half-second grid, so no bound ends on a
sample. Each case keeps the builder calls that made it (`Case.calls`): a failing example prints a
case one can paste into a test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.checkers.cp_builder import TOPIC_ID, Run, rec

ALL = ["kafka-1", "kafka-2", "kafka-3"]
CONTROLLER_CUT = {"port": 9093, "listener": "CONTROLLER"}
ISOLATE_1 = {"kafka-1": ["kafka-2", "kafka-3"], "kafka-2": ["kafka-1"], "kafka-3": ["kafka-1"]}
CUT_3_FROM_2 = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}


def half_up(t: float) -> float:
    """The first view round at or after t (views every 0.5 s)."""
    return math.ceil(t * 2) / 2


def quarter(draw: Any, low: float, high: float) -> float:
    """A time in [low, high] on x.25 or x.75: between view rounds, never on a sample."""
    return draw(st.integers(math.ceil((low - 0.25) * 2), math.floor((high - 0.25) * 2))) / 2 + 0.25


@dataclass
class Case:
    """A generated run, the builder calls that made it, and what its stories aimed at."""

    run: Run = field(default_factory=Run)
    calls: list[str] = field(default_factory=list)
    #: the stories and their variants, e.g. "split:pause-first" (for the record of what fired)
    tags: set[str] = field(default_factory=set)
    #: (time, {node: (type, batch epoch, data)}): records at one offset each, offsets given at the end
    records: list[tuple[float, dict[str, tuple[str, int, dict[str, Any]]]]] = field(default_factory=list)
    #: (time, "add" | "remove", broker): chaos/0's ISR edits, written as change records at the end
    isr_edits: list[tuple[float, str, int]] = field(default_factory=list)
    next_topic: int = 1
    #: whether the final high watermark stops below the last record
    uncommitted_tail: bool = False

    def call(self, name: str, *args: Any, **kwargs: Any) -> None:
        getattr(self.run, name)(*args, **kwargs)
        shown = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
        self.calls.append(f".{name}({', '.join(shown)})")

    def record(self, t: float, type: str, batch_epoch: int = 1, **data: Any) -> None:
        """A record every node holds (a broker's epoch in it is set when offsets are given)."""
        self.records.append((t, {node: (type, batch_epoch, data) for node in ALL}))

    def differing(self, t: float, held: dict[str, tuple[str, int, dict[str, Any]]]) -> None:
        """One offset that each node holds its own way (a node left out holds nothing there)."""
        self.records.append((t, held))

    def bound(self, rule: str) -> float:
        s = self.run.settings
        return {
            "split": 1.5 * s["controller.quorum.fetch.timeout.ms"] / 1000 + 5,
            "unfenced": s["broker.session.timeout.ms"] / 1000 + 5,
            "stale": 1.5 * s["replica.lag.time.max.ms"] / 1000 + 5,
            "stuck": 35.0,
        }[rule]

    def finish(self) -> Case:
        """Give the records their offsets (in time order, after the base log's 0..7) and each
        broker record the broker's epoch (the offset of its registration), and write chaos/0's ISR
        edits as change records."""
        isr = [2, 3]
        for t, how, broker in sorted(self.isr_edits):
            if how == "add" and broker not in isr:
                isr = [*isr, broker]
            elif how == "remove" and broker in isr:
                isr = [b for b in isr if b != broker]
            else:
                continue
            self.record(t, "PARTITION_CHANGE_RECORD", partitionId=0, topicId=TOPIC_ID, leader=-2, isr=list(isr))
        registered = {1: 0, 2: 1, 3: 2}  # the base log's registrations
        for offset, (t, held) in enumerate(sorted(self.records, key=lambda r: r[0]), start=8):
            kinds = {repr(v): v for v in held.values()}
            for type, epoch, given in kinds.values():
                data = broker_epoch(type, given, offset, registered)
                nodes = tuple(n for n in ALL if held.get(n) == (type, epoch, given))
                self.run.add(rec(offset, t, type, batch_epoch=epoch, **data), nodes=nodes)
                where = "" if nodes == tuple(ALL) else f", nodes={nodes!r}"
                self.calls.append(f".add(rec({offset}, {t!r}, {type!r}, batch_epoch={epoch}, **{data!r}){where})")
        if self.uncommitted_tail:
            self.run.final_hw = max(r["offset"] for log in self.run.logs.values() for r in log)
        return self

    def write(self, path: Path) -> Path:
        return self.run.write(path)

    def __str__(self) -> str:
        settings = f"r = Run(settings={self.run.settings!r}, kafka_version={self.run.kafka_version!r}"
        settings += f", metadata_version={self.run.metadata_version!r})"
        extra = []
        if self.run.hw_per_s:
            extra.append(f"r.hw_per_s = {self.run.hw_per_s}")
        if self.run.final_hw is not None:
            extra.append(f"r.final_hw = {self.run.final_hw}")
        if self.run.sample_errors:
            extra.append(f"r.sample_errors = {self.run.sample_errors!r}")
        return "\n".join([settings, *extra, *("r" + c for c in self.calls), f"# stories: {sorted(self.tags)}"])


def broker_epoch(type: str, data: dict[str, Any], offset: int, registered: dict[int, int]) -> dict[str, Any]:
    """The record's data with its broker's epoch: a registration's own offset, which it records in
    `registered`; the broker's registration's offset in a change of it."""
    if type == "REGISTER_BROKER_RECORD":
        registered[data["brokerId"]] = offset
        return {**data, "brokerEpoch": offset}
    if type in ("FENCE_BROKER_RECORD", "UNFENCE_BROKER_RECORD"):
        return {**data, "epoch": registered.get(data["id"], 0)}
    if type == "BROKER_REGISTRATION_CHANGE_RECORD":
        return {**data, "brokerEpoch": registered.get(data["brokerId"], 0)}
    return data


# -- the quorum's stories (one per case: each moves the quorum's leadership its own way)


def split_brain(draw: Any, c: Case) -> None:
    """kafka-1 cut off from the other voters; kafka-2 leads epoch 2 from `elected`; kafka-1 holds
    itself leader of epoch 1 over `length` seconds of rounds beside it."""
    bound = c.bound("split")
    cut_at = quarter(draw, 8, 22)
    elected = half_up(cut_at + draw(st.sampled_from([1.0, 2.0])))
    length = draw(st.sampled_from([bound - 1, bound + 1, bound - 1, bound + 1, 3.0, bound + 12]))
    released = elected + length + 0.5
    variant = "scoped" if draw(st.booleans()) else "isolate"
    if draw(st.integers(0, 2)) == 0:
        paused = cut_at - draw(st.sampled_from([1.0, 3.0]))
        c.call("fault", "pause", ["kafka-1"], paused)
        c.call("fault", "resume", ["kafka-1"], paused + 0.5)
        c.tags.add("split:pause-first")
    extra = CONTROLLER_CUT if variant == "scoped" else {}
    shape = "quorum-leader" if variant == "scoped" else "isolate"
    c.call("fault", "partition", ["kafka-1"], cut_at, grudge=ISOLATE_1, shape=shape, **extra)
    new_leader(c, elected)
    if length > 4 and draw(st.integers(0, 3)) == 0:
        middle = elected + math.floor(length / 2)
        c.call("views", "kafka-1", middle, middle + 1, None)
        c.tags.add("split:unreadable-view")
    c.call("views", "kafka-1", released, 60, (2, 2))
    c.call("fault", "heal", list(ALL), released + draw(st.sampled_from([0.75, 3.25])))
    c.tags.add(f"split:{variant}:{'past' if length > bound else 'inside'}")


def new_leader(c: Case, elected: float) -> None:
    """kafka-2 elected leader of epoch 2 at `elected`: its and kafka-3's views, the samples, and its
    LeaderChange record."""
    c.call("views", "kafka-2", elected, 60, (2, 2))
    c.call("views", "kafka-3", elected, 60, (2, 2))
    c.call("leads", "kafka-2", elected, 61, 2)
    c.record(elected, "LeaderChange", batch_epoch=2, leaderId=2, voters=[], grantingVoters=[])


def controller_fault(draw: Any, c: Case) -> None:
    """kafka-1, the active controller, killed, stopped or paused; kafka-2 elected after `delay`.
    Broker 1 is fenced a second either side of the amended bound (from the election), early, or
    never; with kafka-1 in chaos/0's ISR, it leaves it a second either side of its bound, or never."""
    kind = draw(st.sampled_from(["kill", "stop", "pause"]))
    delay = draw(st.sampled_from([1.0, 3.0, 5.0]))
    in_isr = draw(st.booleans())
    at = quarter(draw, 5, 14)
    took = at + 0.01
    elected = half_up(took + delay)
    # activated at the first sample (each second) past its LeaderChange record; the count of
    # stale-isr-member from the first write after the kill, paused until a controller is active
    unfenced_by = math.ceil(elected) + c.bound("unfenced")
    stale_by = max(first_write(took), elected) + c.bound("stale")
    undo = draw(st.sampled_from(["short", "long", "never"]))
    back = {"short": at + 2.0, "long": max(unfenced_by, stale_by) + 1.75, "never": None}[undo]
    c.call("fault", kind, ["kafka-1"], at)
    new_leader(c, elected)
    fence = draw(st.sampled_from(["inside", "past", "early", "never"]))
    fenced_at = {"inside": unfenced_by - 1, "past": unfenced_by + 1, "early": took + 0.5, "never": None}[fence]
    if fenced_at is not None and (back is None or fenced_at < back):
        c.record(fenced_at, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=1, fenced=1)
        if back is not None:
            c.record(back + 2, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=1, fenced=-1)
    if back is not None:
        c.call("fault", "resume" if kind == "pause" else "start", ["kafka-1"], back)
        c.call("views", "kafka-1", half_up(back), 60, (2, 2))
    c.tags.add(f"controller:{kind}:delay-{delay:g}:fence-{fence}:undo-{undo}")
    if in_isr:
        c.isr_edits.append((0.6, "add", 1))
        shrink = draw(st.sampled_from(["inside", "past", "never"]))
        dropped = {"inside": stale_by - 1, "past": stale_by + 1, "never": None}[shrink]
        if dropped is not None and (back is None or dropped < back):
            c.isr_edits.append((dropped, "remove", 1))
        c.tags.add(f"controller:in-isr:drop-{shrink}")


def double_leader(draw: Any, c: Case) -> None:
    """kafka-2 leads epoch 1, which kafka-1 led, or epoch 2 (a clean change): in every node's view
    from `at`, or only in a LeaderChange record."""
    at = half_up(quarter(draw, 10, 50))
    epoch = draw(st.sampled_from([1, 2]))
    if draw(st.booleans()):
        for node in ALL:
            c.call("views", node, at, 60, (2, epoch))
        c.call("leads", "kafka-2", at, 61, epoch)
        c.tags.add(f"double:views:epoch-{epoch}")
    else:
        c.record(at, "LeaderChange", batch_epoch=epoch, leaderId=2, voters=[], grantingVoters=[])
        c.tags.add(f"double:log:epoch-{epoch}")


def epoch_regression(draw: Any, c: Case, node: str, low: float, high: float) -> None:
    """`node` restarted (killed and started, or wiped), or running all along, holds epoch 0 for a
    second, then epoch 1 again; or, killed, comes back at epoch 1."""
    kind = draw(st.sampled_from(["kill-drop", "kill-drop", "wipe-drop", "kill-same", "running-drop"]))
    at = quarter(draw, low, high)
    if kind == "running-drop":
        c.call("views", node, half_up(at), half_up(at) + 1, (1, 0))
        c.tags.add(f"regression:{node}:{kind}")
        return
    if kind == "wipe-drop":
        c.call("fault", "wipe", [node], at, took=1.5)
        back = at + 1.5
    else:
        c.call("fault", "kill", [node], at)
        back = at + 2.0
        c.call("fault", "start", [node], back)
    c.call("views", node, half_up(at), half_up(back + 0.01), None)
    if kind != "kill-same":
        c.call("views", node, half_up(back + 0.01), half_up(back + 0.01) + 1, (1, 0))
    c.tags.add(f"regression:{node}:{kind}")


# -- a broker's story: kafka-3, a follower of chaos/0


def first_write(after: float) -> float:
    """When the first ok send to chaos/0 invoked after `after` completes (the builder's writes: one
    each second, 2 ms long): stale-isr-member counts from there."""
    return math.ceil(after) + 0.002


def broker_fault(draw: Any, c: Case, cuts: bool, two_down: bool) -> None:
    """kafka-3 killed, stopped (perhaps then wiped), paused (perhaps then killed), killed with kafka-2
    (no majority until kafka-2 starts), or cut off from chaos/0's leader (perhaps by a partition
    replaced by another, or from its controller listener only): fenced and dropped from the ISR a
    second either side of each bound, early, or never; perhaps chaos/0 deleted under it; perhaps
    DescribeQuorum failing around the fencing's bound."""
    bound_u, bound_s = c.bound("unfenced"), c.bound("stale")
    kinds = ["kill", "stop", "pause", "pause-kill", "stop-wipe", "kill-deleted"]
    kinds += (["cut", "cut-scoped", "cut-replaced"] if cuts else []) + (["two-down"] if two_down else [])
    kind = draw(st.sampled_from(kinds))
    at = quarter(draw, 3, 20)
    took = at + 0.01
    unfenced_by, stale_by = took + bound_u, first_write(took) + bound_s
    if kind == "two-down":
        quorum_back = at + draw(st.sampled_from([3.0, 6.0]))
        unfenced_by = quorum_back + bound_u
    undo = draw(st.sampled_from(["short", "long", "never"]))
    back = {"short": at + 3.5, "long": max(unfenced_by, stale_by) + 1.75, "never": None}[undo]
    if kind == "two-down" and back is not None:
        back = max(back, quorum_back + 0.5)
    if kind.startswith("cut"):
        extra = CONTROLLER_CUT if kind == "cut-scoped" else {}
        c.call("fault", "partition", ["kafka-3"], at, grudge=CUT_3_FROM_2, shape="cut", **extra)
        if kind == "cut-replaced":
            keeps = draw(st.booleans())
            grudge = {"kafka-3": ["kafka-1", "kafka-2"] if keeps else ["kafka-1"]}
            grudge.update({n: ["kafka-3"] for n in grudge["kafka-3"]})
            c.call("fault", "partition", ["kafka-3"], at + 3, grudge=grudge, shape="cut")
            kind = f"cut-replaced-{'keeps' if keeps else 'drops'}"
        if back is not None:
            c.call("fault", "heal", list(ALL), back)
    else:
        first = {"pause-kill": "pause", "stop-wipe": "stop", "kill-deleted": "kill", "two-down": "kill"}.get(kind, kind)
        c.call("fault", first, ["kafka-2", "kafka-3"] if kind == "two-down" else ["kafka-3"], at)
        if kind == "pause-kill":
            c.call("fault", "kill", ["kafka-3"], at + 1.25)
        if kind == "two-down":
            c.call("fault", "start", ["kafka-2"], quorum_back)
        if kind == "kill-deleted":
            c.record(took + 2, "REMOVE_TOPIC_RECORD", topicId=TOPIC_ID)
        if back is not None:
            if kind == "stop-wipe":
                c.call("fault", "wipe", ["kafka-3"], back, took=1.5)
            else:
                c.call("fault", "resume" if kind == "pause" else "start", ["kafka-3"], back)
        fence = draw(st.sampled_from(["inside", "past", "early", "never", "early-then-unfenced"]))
        fenced_at = {"inside": unfenced_by - 1, "past": unfenced_by + 1, "never": None}.get(fence, took + 2.5)
        if fenced_at is not None and (back is None or fenced_at < back):
            c.record(fenced_at, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=3, fenced=1)
            if fence == "early-then-unfenced":  # registered again while still down (KAFKA-18138's kind)
                c.record(took + 4.5, "REGISTER_BROKER_RECORD", brokerId=3, fenced=False)
            elif back is not None:
                c.record(back + 2, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=3, fenced=-1)
            if fence in ("inside", "past") and draw(st.integers(0, 3)) == 0:
                c.run.sample_errors = [(unfenced_by - 2, unfenced_by + 3)]
                c.tags.add("samples:gap-at-bound")
        c.tags.add(f"broker:fence-{fence}")
    shrink = draw(st.sampled_from(["inside", "past", "early", "never"]))
    dropped = {"inside": stale_by - 1, "past": stale_by + 1, "early": took + 3, "never": None}[shrink]
    if dropped is not None and (back is None or dropped < back):
        c.isr_edits.append((dropped, "remove", 3))
        if shrink in ("inside", "past") and not c.run.sample_errors and draw(st.integers(0, 3)) == 0:
            c.run.sample_errors = [(stale_by - 2, stale_by + 3)]
            c.tags.add("samples:gap-at-bound")
    c.tags.add(f"broker:{kind}:undo-{undo}:drop-{shrink}")


# -- records' stories: each on a topic and three brokers of its own


def topic(c: Case, at: float, old_registration: bool = False) -> tuple[str, list[int]]:
    """A new topic of one partition (replicas a, b, c; leader a; ISR all three) on three new
    brokers, registered and unfenced just before `at`."""
    n = c.next_topic
    c.next_topic += 1
    brokers = [10 * n + 1, 10 * n + 2, 10 * n + 3]
    topic_id = f"R{n}"
    for b in brokers:
        if old_registration:
            c.record(at - 0.2, "REGISTER_BROKER_RECORD", brokerId=b)
        else:
            c.record(at - 0.2, "REGISTER_BROKER_RECORD", brokerId=b, fenced=True)
        c.record(at - 0.15, "UNFENCE_BROKER_RECORD", id=b)
    c.record(at - 0.1, "TOPIC_RECORD", name=f"r{n}", topicId=topic_id)
    c.record(at - 0.1, "PARTITION_RECORD", **partition(topic_id, brokers, brokers[0], brokers, 0, 0))
    return topic_id, brokers


def partition(topic_id: str, replicas: list[int], leader: int, isr: list[int], le: int, pe: int) -> dict[str, Any]:
    return {
        "partitionId": 0,
        "topicId": topic_id,
        "replicas": replicas,
        "isr": isr,
        "leader": leader,
        "leaderEpoch": le,
        "partitionEpoch": pe,
    }


def part_change(c: Case, t: float, topic_id: str, leader: int = -2, isr: list[int] | None = None) -> None:
    data: dict[str, Any] = {"partitionId": 0, "topicId": topic_id, "leader": leader}
    if isr is not None:
        data["isr"] = isr
    c.record(t, "PARTITION_CHANGE_RECORD", **data)


def leader_not_in_isr(draw: Any, c: Case, at: float) -> None:
    topic_id, (a, b, d) = topic(c, at)
    variant = draw(st.sampled_from(["shrink-out", "shrink-keeps", "elect-out", "elect-in"]))
    if variant == "shrink-out":
        part_change(c, at, topic_id, isr=[b, d])
    elif variant == "shrink-keeps":
        part_change(c, at, topic_id, isr=[a, b])
    elif variant == "elect-out":
        part_change(c, at, topic_id, isr=[a, b])
        part_change(c, at + 0.5, topic_id, leader=d)
    else:
        part_change(c, at, topic_id, leader=b, isr=[b])
    c.tags.add(f"records:not-in-isr:{variant}")


def partition_epoch_regression(draw: Any, c: Case, at: float) -> None:
    """A few changes, then the partition written again with epochs a step around the replay's."""
    topic_id, (a, b, d) = topic(c, at)
    leader, isr, le, pe = a, [a, b, d], 0, 0
    below_36 = c.run.metadata_version is not None
    t = at
    for step in draw(st.lists(st.sampled_from(["elect", "shrink", "grow", "same-leader"]), min_size=1, max_size=3)):
        t += 0.5
        if step == "elect" and len(isr) > 1:
            leader = next(x for x in isr if x != leader)
            part_change(c, t, topic_id, leader=leader)
            le += 1
        elif step in ("elect", "same-leader"):
            part_change(c, t, topic_id, leader=leader)
            le += 1
        elif step == "shrink" and len(isr) > 1:
            isr = [x for x in isr if x != next(x for x in isr if x != leader)]
            part_change(c, t, topic_id, isr=list(isr))
            le += 1 if below_36 else 0
        else:
            isr = sorted(set(isr) | {a, b, d})
            part_change(c, t, topic_id, isr=list(isr))
        pe += 1
    dl, dp = draw(st.sampled_from([(-1, 0), (0, -1), (0, 0), (1, 0), (0, 1), (-1, -1)]))
    again = partition(topic_id, [a, b, d], leader, isr, le + dl, pe + dp)
    c.record(t + 0.5, "PARTITION_RECORD", **again)
    c.tags.add(f"records:epoch:{dl:+d}{dp:+d}")


def inactive_leader(draw: Any, c: Case, at: float) -> None:
    variant = draw(
        st.sampled_from(["fence", "fence-change", "shutdown", "named-again", "old-registration", "unfenced-first"])
    )
    topic_id, (a, b, d) = topic(c, at, old_registration=variant == "old-registration")
    if variant == "fence":
        c.record(at, "FENCE_BROKER_RECORD", id=b)
        part_change(c, at + 0.5, topic_id, leader=b)
    elif variant == "fence-change":
        c.record(at, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=b, fenced=1)
        part_change(c, at + 0.5, topic_id, leader=b)
    elif variant == "shutdown":
        c.record(at, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=b, inControlledShutdown=1)
        if draw(st.booleans()):
            c.record(at + 0.25, "REGISTER_BROKER_RECORD", brokerId=b, fenced=False)
            variant = "shutdown-registered-again"
        part_change(c, at + 0.5, topic_id, leader=b)
    elif variant == "named-again":
        c.record(at, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=a, fenced=1)
        part_change(c, at + 0.5, topic_id, leader=a)
    elif variant == "old-registration":
        # brokers registered without a `fenced` field are fenced until unfenced: b was, d not
        part_change(c, at + 0.5, topic_id, leader=d if draw(st.booleans()) else b)
    else:
        c.record(at, "FENCE_BROKER_RECORD", id=b)
        c.record(at + 0.25, "UNFENCE_BROKER_RECORD", id=b)
        part_change(c, at + 0.5, topic_id, leader=b)
    c.tags.add(f"records:inactive:{variant}")


def fenced_in_isr(draw: Any, c: Case, at: float) -> None:
    topic_id, (a, b, d) = topic(c, at)
    variant = draw(st.sampled_from(["fenced-then-added", "added-then-fenced", "created-fenced"]))
    if variant == "created-fenced":
        c.record(at, "FENCE_BROKER_RECORD", id=d)
        c.record(at + 0.5, "PARTITION_RECORD", **partition(topic_id, [a, b, d], a, [a, b, d], 1, 1))
    else:
        part_change(c, at, topic_id, isr=[a, b])
        first, second = (0.25, 0.5) if variant == "fenced-then-added" else (0.5, 0.25)
        c.record(at + first, "FENCE_BROKER_RECORD", id=d)
        part_change(c, at + second, topic_id, isr=[a, b, d])
    c.tags.add(f"records:fenced-in-isr:{variant}")


RECORD_STORIES = {
    "not-in-isr": leader_not_in_isr,
    "epoch": partition_epoch_regression,
    "inactive": inactive_leader,
    "fenced-in-isr": fenced_in_isr,
}


# -- the end of the run: divergence, stuck brokers, unanswered samples


def divergence(draw: Any, c: Case) -> None:
    """The run's last record, at 58.5 s: kafka-3 holds another one (or none); committed (the final
    high watermark past it) or not."""
    variant = draw(st.sampled_from(["other-epoch", "other-type", "shorter"]))
    committed = draw(st.booleans())
    held: dict[str, tuple[str, int, dict[str, Any]]] = {n: ("NO_OP_RECORD", 1, {}) for n in ("kafka-1", "kafka-2")}
    if variant == "other-epoch":
        held["kafka-3"] = ("NO_OP_RECORD", 2, {})
    elif variant == "other-type":
        held["kafka-3"] = ("TOPIC_RECORD", 1, {"name": "elsewhere", "topicId": "X9"})
    c.differing(58.5, held)
    c.uncommitted_tail = not committed
    c.tags.add(f"divergence:{variant}:{'committed' if committed else 'uncommitted'}")


def stuck_broker(draw: Any, c: Case) -> None:
    """A short pause early, then a broker's log end offset stays at 8 while the high watermark
    grows, for a second more or less than 30 s + S (from its first sample to its last); or a
    stall left open at the end (then the rule cannot be checked)."""
    at = quarter(draw, 2, 5)
    node = draw(st.sampled_from(ALL))
    c.call("fault", "pause", ["kafka-2"], at)
    c.call("fault", "resume", ["kafka-2"], at + 1.5)
    c.run.hw_per_s = 1
    start = math.ceil(at + 1.5) + draw(st.sampled_from([1, 3]))
    length = draw(st.sampled_from([34, 36, 34, 36, 20, 44]))
    c.call("behind", node, start, start + length + 1, 8)
    if draw(st.integers(0, 3)) == 0:
        c.call("fault", "stall", ["kafka-1"], 50.25)
        c.tags.add("stuck:open-fault")
    c.tags.add(f"stuck:{length}")


def sample_gap(draw: Any, c: Case) -> None:
    start = quarter(draw, 6, 50)
    c.run.sample_errors = [(start, start + draw(st.sampled_from([3.0, 8.0])))]
    c.tags.add("samples:gap")


@st.composite
def cases(draw: Any) -> Case:
    """One generated run: settings, a quorum story, a broker story, record stories, and the end's."""
    c = Case()
    settings = c.run.settings
    settings["controller.quorum.fetch.timeout.ms"] = draw(st.sampled_from([1000, 2000]))
    settings["broker.session.timeout.ms"] = draw(st.sampled_from([6000, 9000]))
    settings["replica.lag.time.max.ms"] = draw(st.sampled_from([6000, 10000]))
    if draw(st.integers(0, 3)) == 0:
        c.run.metadata_version = "3.5-IV2"
    stuck = draw(st.integers(0, 9)) < 3
    quorum = draw(
        st.sampled_from(["split", "controller", "double", "regression", "none"] + ["split", "controller"] * 2)
    )
    broker = not stuck and draw(st.integers(0, 9)) < 7
    if stuck and quorum in ("split", "controller"):
        quorum = "double"
    if quorum == "split":
        split_brain(draw, c)
    elif quorum == "controller":
        controller_fault(draw, c)
    elif quorum == "double":
        double_leader(draw, c)
    elif quorum == "regression":
        low, high = (2, 5) if stuck else (42, 50)
        epoch_regression(draw, c, "kafka-2" if broker else "kafka-3", low, high)
    if broker:
        broker_fault(draw, c, cuts=quorum != "split", two_down=quorum != "controller")
    at = 2.0
    for name, story in RECORD_STORIES.items():
        if draw(st.booleans()):
            story(draw, c, at)
            at += 6.0
            c.tags.add(f"records:{name}")
    if draw(st.integers(0, 2)) == 0:
        divergence(draw, c)
    if stuck:
        stuck_broker(draw, c)
    if not c.run.sample_errors and draw(st.integers(0, 6)) == 0:
        sample_gap(draw, c)
    return c.finish()
