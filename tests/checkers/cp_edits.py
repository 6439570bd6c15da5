"""Edits of a real run's control-plane evidence, as a broken controller or a broken node would have
left it: what the tests on real evidence (tests/checkers/test_control_plane_real.py, and the live
run of tests/integration/test_control_plane_evidence.py) make the checker flag by name.

`EDITS` holds one edit per control-plane rule of ../shared/anomalies.md; each takes a copy of a
run that killed its active controller and started it again (a `kill` and a `start` in its
history) and returns the facts the rule's first example must show. Each edit finds what it
changes by what it means (the killed broker's fencing, a partition's ISR shrink, the first sample
after the heal), never by offset, and asserts that it found it: an edit that changed nothing would
make a test that cannot fail. A record is changed in every node's log (the controller wrote it,
every voter replicated it), so that the logs still agree, unless the disagreement is the edit;
each offset keeps its time and batch epoch.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kafka_chaos.history.metadata_replay import (
    BROKER_TYPES,
    FENCE,
    NO_CHANGE,
    PARTITION,
    PARTITION_CHANGE,
    REGISTER,
    REGISTRATION_CHANGE,
    UNFENCE,
    Replay,
    Step,
)
from kafka_chaos.history.run_dir import RunDir

NO_OP = "NO_OP_RECORD"
REGISTER_CONTROLLER = "REGISTER_CONTROLLER_RECORD"
MS = 1_000_000
SECOND = 1_000_000_000
#: How long a wrongly elected node holds itself leader of the leader's own epoch (quorum-double-leader).
DOUBLE_CLAIM_NS = SECOND


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


# The run: its nemesis's operations, its nodes.


def _names(e: dict, node: str | None) -> bool:
    """Whether a nemesis event is about `node` (its target, or a node it acted on); None: any."""
    value = e.get("value") or {}
    return node is None or value.get("target") == node or node in value.get("nodes", ())


def nemesis_time(run: RunDir, f: str, kind: str, node: str | None = None) -> int:
    """When the nemesis's (first) `f` (of `node`) was invoked (`kind` "invoke") or completed (any
    other)."""
    return next(
        e["time"]
        for e in lines(run.history)
        if e["process"] == "nemesis"
        and e["f"] == f
        and (e["type"] == "invoke") == (kind == "invoke")
        and _names(e, node)
    )


def killed_node(run: RunDir) -> str:
    """The node the run's kill took down."""
    return next(e for e in lines(run.history) if e["process"] == "nemesis" and e["f"] == "kill" and e["type"] == "ok")[
        "value"
    ]["nodes"][0]


def broker_id(run: RunDir, node: str) -> int:
    return int(json.loads(run.control_plane_nodes.read_text())["nodes"][node]["id"])


def election(run: RunDir) -> tuple[str, int, int]:
    """The next quorum leader after the kill: the first view after the kill's invoke of a node
    holding itself leader in a later epoch than any before it, as (node, epoch, time)."""
    after = nemesis_time(run, "kill", "invoke")
    views = sorted(lines(run.quorum_views), key=lambda v: v["time"])
    before = max(v["leader_epoch"] for v in views if v["time"] <= after and v["error"] is None)
    v = next(
        v
        for v in views
        if v["time"] > after and v["error"] is None and v["leader_id"] == v["node_id"] and v["leader_epoch"] > before
    )
    return v["node"], v["leader_epoch"], v["time"]


def bystander(run: RunDir) -> str:
    """The node that was neither killed nor elected next."""
    nodes = json.loads(run.control_plane_nodes.read_text())["nodes"]
    return next(n for n in sorted(nodes) if n not in (killed_node(run), election(run)[0]))


def _move_undo(run: RunDir, invoke: int, ok: int, undo: str = "start", node: str | None = None) -> None:
    """The nemesis's (only) `undo` (of `node`: the killed node's start, a partition's heal) invoked
    and completed at other times (the history sorted and indexed again)."""
    events = lines(run.history)
    moved = [e for e in events if e["process"] == "nemesis" and e["f"] == undo and _names(e, node)]
    assert len(moved) == 2, f"not one {undo} in the history"
    for e in moved:
        e["time"] = invoke if e["type"] == "invoke" else ok
    events.sort(key=lambda e: e["time"])
    write(run.history, [{**e, "index": i} for i, e in enumerate(events)])


def extend_fault(
    run: RunDir, fault: str = "kill", undo: str = "start", node: str | None = None, past_evidence: bool = False
) -> tuple[int, int]:
    """The fault (of `node`) lasts to the end of the history (or, `past_evidence`, past the last
    quorum sample: to the end of the evidence): its undoing moves to the history's last moments
    (or just past that sample). Returns the fault's completion and the undoing's invoke as
    recorded."""
    end = lines(run.history)[-1]["time"]
    if past_evidence:
        end = max(end, max(s["time"] for s in lines(run.quorum_replication))) + 4 * MS
    done, undone = nemesis_time(run, fault, "ok", node), nemesis_time(run, undo, "invoke", node)
    _move_undo(run, end - 3 * MS, end - 2 * MS, undo, node)
    return done, undone


def extend_kill(run: RunDir) -> tuple[int, int]:
    """`extend_fault` of the run's kill: its start moves to the history's last moments."""
    return extend_fault(run)


def heal_sooner(run: RunDir, before: int) -> None:
    """The killed node's start invoked and completed just before `before`, taking as long as it did."""
    invoke, ok = nemesis_time(run, "start", "invoke"), nemesis_time(run, "start", "ok")
    shift = ok - (before - MS)
    assert shift > 0, "the start already completed before that moment"
    _move_undo(run, invoke - shift, ok - shift)


# Each node's quorum view.


def claim_leadership(run: RunDir, node: str, epoch: int, since: int | None = None, until: int | None = None) -> int:
    """`node` holds itself leader of `epoch` in every view it had (or those in [since, until]):
    beside the quorum's own leader, two leaders at once. Returns how many views changed."""
    views = lines(run.quorum_views)
    changed = 0
    for v in views:
        if v["node"] == node and (since is None or v["time"] >= since) and (until is None or v["time"] <= until):
            v.update(leader_id=v["node_id"], leader_epoch=epoch, error=None)
            changed += 1
    assert changed, f"no view of {node} in that span"
    write(run.quorum_views, views)
    return changed


def forget_epoch(run: RunDir, node: str, after: int) -> int:
    """`node` comes back from its restart (completed at `after`) holding epoch 0 and no leader, as
    if its quorum-state had been lost without a wipe, until its view next changes. Returns the
    epoch it held before."""
    views = lines(run.quorum_views)
    mine = sorted((v for v in views if v["node"] == node and v["time"] >= after), key=lambda v: v["time"])
    first = (mine[0]["leader_id"], mine[0]["leader_epoch"])
    assert first[1] > 0, f"{node} held no epoch after its restart"
    for v in mine:
        if (v["leader_id"], v["leader_epoch"]) != first:
            break
        v.update(leader_id=-1, leader_epoch=0, voted_id=-1, error=None)
    write(run.quorum_views, views)
    return first[1]


# The quorum's replication samples.


def answered(run: RunDir) -> list[dict]:
    """The replication samples that DescribeQuorum answered, in time order."""
    return sorted((s for s in lines(run.quorum_replication) if not s.get("error")), key=lambda s: s["time"])


def hold_log_end(run: RunDir, node: str, seen: int, after: int) -> int:
    """`node` fetches no metadata after `after`: from the first sample at or after it on, every
    sample reports the log end offset (and fetch times) of the last sample taken at or before
    `seen`, while the high watermark goes on; the node's own log ends there too. Returns that
    log end offset."""
    nid = broker_id(run, node)

    def member(s: dict) -> dict:
        return next(m for m in s["voters"] + s["observers"] if m["id"] == nid)

    held = dict(member([s for s in answered(run) if s["time"] <= seen][-1]))
    assert held["log_end_offset"] >= 0
    samples = lines(run.quorum_replication)
    for s in samples:
        if not s.get("error") and s["time"] >= after:
            member(s).update(held)
    write(run.quorum_replication, samples)
    log = run.metadata_logs()[node]
    write(log, [r for r in lines(log) if r["offset"] < held["log_end_offset"]])
    return held["log_end_offset"]


# The metadata logs.


def edit_every_log(run: RunDir, edit: Callable[[list[dict]], Any], same: bool = True) -> Any:
    """`edit` applied to every node's records (in offset order), each log written back. What it
    returned for each log must be something, and with `same` the same in every log (it found the
    same records in each); the first log's is returned."""
    got = []
    for _, path in sorted(run.metadata_logs().items()):
        records = sorted(lines(path), key=lambda r: r["offset"])
        got.append(edit(records))
        write(path, records)
    assert got and all(got) and (not same or all(g == got[0] for g in got)), got
    return got[0]


def _noop(r: dict) -> None:
    r.update(type=NO_OP, version=0, data={})


def _swap(a: dict, b: dict) -> None:
    """Two records trade places: each offset keeps its time and batch epoch, and takes the other's content."""
    for k in ("type", "version", "data"):
        a[k], b[k] = b[k], a[k]


def _time(r: dict) -> int:
    return r.get("time") or 0


def _about(r: dict, broker: int) -> bool:
    """A record about `broker` itself: its registration, fencing, or its controller's registration."""
    data = r.get("data") or {}
    if r.get("type") in BROKER_TYPES:
        return data.get("brokerId", data.get("id")) == broker
    return r.get("type") == REGISTER_CONTROLLER and data.get("controllerId") == broker


def _fences(r: dict, broker: int) -> bool:
    data = r.get("data") or {}
    return data.get("brokerId") == broker and (
        r.get("type") == FENCE or (r.get("type") == REGISTRATION_CHANGE and data.get("fenced") == 1)
    )


def _unfences(r: dict, broker: int) -> bool:
    data = r.get("data") or {}
    return data.get("brokerId") == broker and (
        r.get("type") == UNFENCE or (r.get("type") == REGISTRATION_CHANGE and data.get("fenced") == -1)
    )


def _replayed(records: list[dict]) -> Iterator[tuple[dict, Step]]:
    """Each record with what it does to the log replayed so far (its partition before and after);
    the replay then goes on with the record as the caller left it (a NoOp, say)."""
    replay = Replay(False)
    for r in records:
        yield r, copy.deepcopy(replay).step(r["offset"], r["type"], r.get("data") or {})
        replay.step(r["offset"], r["type"], r.get("data") or {})


def _adds(step: Step, broker: int) -> bool:
    return (
        step.after is not None
        and step.before is not None
        and broker in step.after.isr
        and broker not in step.before.isr
    )


def _drops(step: Step, broker: int) -> bool:
    return (
        step.after is not None
        and step.before is not None
        and broker in step.before.isr
        and broker not in step.after.isr
    )


def _brings_back(step: Step, broker: int) -> bool:
    """Whether a partition change adds `broker` to the ISR or makes it leader."""
    return _adds(step, broker) or (step.after is not None and step.led and step.after.leader == broker)


def keep_killed(run: RunDir, node: str | None = None, past_evidence: bool = False) -> str:
    """The kill (of `node`; the run's kill by default) lasts to the end and the controller never
    fences the killed broker (KAFKA-18138): the nemesis's start moves to the very end of the
    history, and every record written after the kill about that broker (its fencing, its
    registration again, its controller's) or bringing it back (into an ISR, or to lead) becomes a
    NoOp in every node's log. Returns the killed node."""
    given = node
    node = node or killed_node(run)
    broker = broker_id(run, node)
    kill, _ = extend_fault(run, node=given, past_evidence=past_evidence)

    def edit(records: list[dict]) -> int:
        hit = [r for r, s in _replayed(records) if _time(r) >= kill and (_about(r, broker) or _brings_back(s, broker))]
        for r in hit:
            _noop(r)
        return len(hit)

    # A live run's logs may end at different offsets (tests/integration): each must change, not alike.
    edit_every_log(run, edit, same=False)
    return node


def keep_in_isr(
    run: RunDir,
    partition: str,
    node: str | None = None,
    fault: str = "kill",
    undo: str = "start",
    past_evidence: bool = False,
) -> str:
    """The fault lasts to the end (`extend_fault`); the controller never takes `node` (the killed
    follower by default) out of `partition`'s ISR: that partition's change that dropped it becomes
    a NoOp, and so do every record about the broker after the fault was undone (its registration
    again, its unfencing) and every change bringing it back (into an ISR, or to lead). Its fencing
    stays. Returns the node."""
    node = node or killed_node(run)
    broker = broker_id(run, node)
    # A start or a resume undoes one node's fault; a heal, every cut at once.
    done, undone = extend_fault(run, fault, undo, node if undo != "heal" else None, past_evidence)

    def edit(records: list[dict]) -> tuple[list[int], list[int]]:
        shrinks, hit = [], []
        for r, s in _replayed(records):
            restarted = _time(r) >= undone and _about(r, broker) and not _fences(r, broker)
            dropped = s.partition == partition and _drops(s, broker)
            if _time(r) >= done and (dropped or restarted or _brings_back(s, broker)):
                _noop(r)
                (shrinks if dropped else hit).append(r["offset"])
        return shrinks, hit

    shrinks, _ = edit_every_log(run, edit)
    assert shrinks, f"no change took {node} out of {partition}'s ISR"
    return node


# One edit per rule: each returns the facts the rule's first example must show.


def split_brain(run: RunDir) -> dict[str, Any]:
    """The bystander holds itself leader of the next epoch from the election on, beside the new
    leader: two running leaders in different epochs, to the end."""
    leader, epoch, elected = election(run)
    other = bystander(run)
    claim_leadership(run, other, epoch + 1, since=elected)
    pair = sorted([(leader, epoch), (other, epoch + 1)])
    return {"nodes": [n for n, _ in pair], "epochs": [e for _, e in pair]}


def double_leader(run: RunDir) -> dict[str, Any]:
    """The bystander holds itself leader of the new leader's own epoch for a moment after the
    election: two leaders of one epoch."""
    leader, epoch, elected = election(run)
    other = bystander(run)
    claim_leadership(run, other, epoch, since=elected, until=elected + DOUBLE_CLAIM_NS)
    return {"epoch": epoch, "leaders": sorted([broker_id(run, leader), broker_id(run, other)])}


def epoch_regression(run: RunDir) -> dict[str, Any]:
    """The killed node comes back from its start holding epoch 0 (`forget_epoch`)."""
    node = killed_node(run)
    held = forget_epoch(run, node, nemesis_time(run, "start", "ok"))
    return {"node": node, "epochs": [held, 0]}


def divergence(run: RunDir) -> dict[str, Any]:
    """The bystander's log alone holds another min.insync.replicas for the workload's topic: its
    config record differs from the others' at one offset below the high watermark."""
    path = run.metadata_logs()[bystander(run)]
    records = lines(path)
    r = next(
        r
        for r in records
        if r["type"] == "CONFIG_RECORD"
        and r["data"].get("resourceType") == 2
        and r["data"]["name"] == "min.insync.replicas"
    )
    r["data"]["value"] = str(int(r["data"]["value"]) - 1)
    write(path, records)
    return {"offset": r["offset"]}


def leader_not_in_isr(run: RunDir) -> dict[str, Any]:
    """The first ISR change after the kill that keeps its partition's leader is written with that
    leader left out of the ISR."""
    kill = nemesis_time(run, "kill", "ok")

    def edit(records: list[dict]) -> tuple[str, int]:
        for r, s in _replayed(records):
            data = r.get("data") or {}
            if (
                r["type"] == PARTITION_CHANGE
                and _time(r) >= kill
                and data.get("isr") is not None
                and data.get("leader", NO_CHANGE) == NO_CHANGE
                and s.before is not None
                and s.before.leader in data["isr"]
            ):
                data["isr"] = [b for b in data["isr"] if b != s.before.leader]
                return s.partition, r["offset"]
        raise AssertionError("no ISR change after the kill")

    partition, offset = edit_every_log(run, edit)
    return {"partition": partition, "offset": offset}


def partition_epoch_regression(run: RunDir) -> dict[str, Any]:
    """After the last change of the partition that changed most (the highest partition epoch, then
    leader epoch, at the end), the controller writes its PartitionRecord again as it was created,
    epochs 0, in place of the next NoOp: both of its epochs go back."""

    def edit(records: list[dict]) -> tuple[str, int]:
        steps = list(_replayed(records))
        final = {s.partition: s.after for _, s in steps if s.after is not None}
        part = max(final, key=lambda p: (final[p].partition_epoch, final[p].leader_epoch, p))
        assert final[part].partition_epoch > 0
        created = [r for r, s in steps if r["type"] == PARTITION and s.partition == part][-1]
        last = max(r["offset"] for r, s in steps if s.partition == part)
        spare = next(r for r in records if r["offset"] > last and r["type"] == NO_OP)
        spare.update(type=PARTITION, version=created["version"], data=dict(created["data"]))
        return part, spare["offset"]

    partition, offset = edit_every_log(run, edit)
    return {"partition": partition, "offset": offset}


def inactive_leader(run: RunDir) -> dict[str, Any]:
    """The controller fences the killed broker before the change that moves the leadership of the
    partition it led, and that change, instead of moving it, names the fenced broker leader again
    (the ISR left as it was): the fencing and that change trade places, and the change names the
    fenced broker."""
    broker = broker_id(run, killed_node(run))
    kill = nemesis_time(run, "kill", "ok")

    def edit(records: list[dict]) -> tuple[str, int]:
        steps = list(_replayed(records))
        fence = next(r for r, _ in steps if _time(r) >= kill and _fences(r, broker))
        moved, step = next(
            (r, s)
            for r, s in steps
            if _time(r) >= kill
            and r["offset"] < fence["offset"]
            and r["type"] == PARTITION_CHANGE
            and s.led
            and s.before is not None
            and s.before.leader == broker
        )
        _swap(fence, moved)
        change = fence  # the later offset, which now holds the partition's change
        change["data"] = {k: change["data"][k] for k in ("partitionId", "topicId")} | {"leader": broker}
        return step.partition, change["offset"]

    partition, offset = edit_every_log(run, edit)
    return {"partition": partition, "offset": offset, "broker": broker, "fenced": True}


def readmit_fenced(run: RunDir, broker: int, since: Callable[[list[tuple[dict, Step]]], int]) -> dict[str, Any]:
    """`broker` is let back into an ISR before it is unfenced: its first unfencing past the offset
    `since` finds and the first change after it that adds it to an ISR trade places."""

    def edit(records: list[dict]) -> tuple[str, int]:
        steps = list(_replayed(records))
        after = since(steps)
        unfence = next(r for r, _ in steps if r["offset"] > after and _unfences(r, broker))
        added, step = next((r, s) for r, s in steps if r["offset"] > unfence["offset"] and _adds(s, broker))
        _swap(unfence, added)
        return step.partition, unfence["offset"]

    partition, offset = edit_every_log(run, edit)
    return {"partition": partition, "offset": offset, "broker": broker}


def fenced_in_isr(run: RunDir) -> dict[str, Any]:
    """After its restart the killed broker is let back into an ISR before it is unfenced: its
    unfencing (the first after its last registration) and the first change that adds it to an ISR
    trade places."""
    broker = broker_id(run, killed_node(run))
    return readmit_fenced(
        run,
        broker,
        lambda steps: max(r["offset"] for r, _ in steps if r["type"] == REGISTER and r["data"]["brokerId"] == broker),
    )


def fenced_cut_in_isr(run: RunDir) -> dict[str, Any]:
    """The cut-off follower (`cut_follower`), fenced while the cut kept it from the active
    controller, is let back into an ISR before it is unfenced: its unfencing after its last fencing
    and the first change that adds it to an ISR trade places."""
    broker = broker_id(run, cut_follower(run)[1])
    return readmit_fenced(run, broker, lambda steps: max(r["offset"] for r, _ in steps if _fences(r, broker)))


def unfenced_down_broker(run: RunDir) -> dict[str, Any]:
    """`keep_killed`: the kill lasts to the end and the broker is never fenced."""
    node = keep_killed(run)
    return {"node": node, "broker": broker_id(run, node), "fault": "kill"}


def stale_isr_member(run: RunDir) -> dict[str, Any]:
    """`keep_in_isr` for the partition of the history's first acknowledged send after the kill (the
    rule's clock starts when the kill took effect; that partition is one the history still holds)."""
    kill = nemesis_time(run, "kill", "ok")
    events = lines(run.history)
    invoked: dict[Any, dict] = {}
    sends = []
    for e in events:
        if e["type"] == "invoke":
            invoked[e["process"]] = e
        elif e["f"] == "send" and e["type"] == "ok" and invoked[e["process"]]["time"] > kill:
            sends.append(e["value"][0][1])
    node = keep_in_isr(run, sends[0])
    return {"node": node, "partition": sends[0], "fault": "kill"}


def stuck_broker_metadata(run: RunDir) -> dict[str, Any]:
    """The killed node comes back with a fetcher that never fetches (KAFKA-19354's stuck
    observer): from its start on, every sample reports the log end offset of the last sample
    before the kill, and its log ends there (`hold_log_end`).

    The start also moves to just before the last sample answered before it. The run sampled the
    rule's window after its heal and stopped at the first answer past it, while the rule measures
    from the first sample after the heal, which came later than that overrun: no stretch of
    samples after the recorded heal is longer than the bound, and the held log end offset alone is
    checked and valid. harness/control_plane.py holds its window from the heal, and
    checkers/control_plane/fault_timing.py measures the stretch from a sample: until they agree,
    a broker stuck from the heal on can pass unflagged."""
    node = killed_node(run)
    kill, start = nemesis_time(run, "kill", "invoke"), nemesis_time(run, "start", "invoke")
    heal_sooner(run, [s for s in answered(run) if s["time"] < start][-1]["time"])
    offset = hold_log_end(run, node, seen=kill, after=nemesis_time(run, "start", "ok"))
    return {"node": node, "broker": broker_id(run, node), "log_end_offset": offset}


def cut_follower(run: RunDir) -> tuple[str, str]:
    """The run's (first) partition's cut-off follower: the first partition, in name order, whose
    leader at the cut's effect was on the other side of the cut from a follower in its ISR that a
    later change took out of it. Returns (partition, follower)."""
    cut = next(
        e for e in lines(run.history) if e["process"] == "nemesis" and e["f"] == "partition" and e["type"] == "ok"
    )
    grudge, effect = cut["value"]["grudge"], cut["time"]
    nodes = json.loads(run.control_plane_nodes.read_text())["nodes"]
    by_id = {int(nodes[n]["id"]): n for n in nodes}
    records = sorted(lines(next(iter(run.metadata_logs().values()))), key=lambda r: r["offset"])
    at_effect: dict[str, Any] = {}
    for r, step in _replayed(records):
        if step.partition is None or step.after is None:
            continue
        if _time(r) < effect:
            at_effect[step.partition] = step.after
            continue
        now = at_effect.get(step.partition)
        if now is None or step.before is None:
            continue
        leader = by_id.get(now.leader)
        for b in step.before.isr:
            follower = by_id.get(b)
            if follower in grudge.get(leader or "", ()) and _drops(step, b) and b in now.isr:
                return step.partition, follower
    raise AssertionError("no follower cut off from its leader left an ISR after the cut")


def stale_cut_follower(run: RunDir) -> dict[str, Any]:
    """`keep_in_isr` of the cut-off follower (`cut_follower`): the cut lasts to the end and the
    controller never takes the follower out of its partition's ISR."""
    partition, follower = cut_follower(run)
    keep_in_isr(run, partition, follower, fault="partition", undo="heal")
    return {"node": follower, "partition": partition, "fault": "partition"}


def unfenced_killed_follower(run: RunDir) -> dict[str, Any]:
    """`keep_killed` of the broker the run killed as a partition's follower (the nemesis's target
    `follower:<partition>`), whatever else the nemesis did meanwhile, to past the evidence's end
    (an overlapping controller pause restarts the broker's deadline, past the history's end)."""
    node, _ = killed_follower(run)
    keep_killed(run, node, past_evidence=True)
    return {"node": node, "broker": broker_id(run, node), "fault": "kill"}


def stale_killed_follower(run: RunDir) -> dict[str, Any]:
    """`keep_in_isr` of the broker the run killed as a partition's follower, in that partition, to
    past the evidence's end (`unfenced_killed_follower`)."""
    node, partition = killed_follower(run)
    keep_in_isr(run, partition, node, past_evidence=True)
    return {"node": node, "partition": partition, "fault": "kill"}


def killed_follower(run: RunDir) -> tuple[str, str]:
    """The node the run's kill of a partition's follower took down, and that partition."""
    e = next(
        e
        for e in lines(run.history)
        if e["process"] == "nemesis"
        and e["f"] == "kill"
        and e["type"] == "ok"
        and str(e["value"].get("target", "")).startswith("follower:")
    )
    return e["value"]["nodes"][0], e["value"]["target"].removeprefix("follower:")


#: One edit per control-plane rule of ../shared/anomalies.md, by the rule's name.
EDITS: dict[str, Callable[[RunDir], dict[str, Any]]] = {
    "quorum-split-brain": split_brain,
    "quorum-double-leader": double_leader,
    "quorum-epoch-regression": epoch_regression,
    "metadata-divergence": divergence,
    "leader-not-in-isr": leader_not_in_isr,
    "partition-epoch-regression": partition_epoch_regression,
    "inactive-leader": inactive_leader,
    "fenced-in-isr": fenced_in_isr,
    "unfenced-down-broker": unfenced_down_broker,
    "stale-isr-member": stale_isr_member,
    "stuck-broker-metadata": stuck_broker_metadata,
}
