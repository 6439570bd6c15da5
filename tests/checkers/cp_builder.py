"""Hand-made run directories with control-plane evidence, in the format of the evidence writer
(control-plane/: nodes.json, quorum-views.jsonl, quorum-replication.jsonl, metadata/<alias>.jsonl).

`Run` starts from a healthy 60 s run of three combined nodes (kafka-1..3, ids 1..3, all voters):
kafka-1 leads the quorum in epoch 1 throughout; every node's log registers and unfences the three
brokers and creates chaos/0 (replicas 1, 2, 3; leader 2; ISR 2, 3); the quorum's high watermark
covers every record written up to each sample; one acknowledged send to t/0, and one to chaos/0
every second from 2 s to 57 s, are read at the end. A case
changes what it needs: more records, other views, nemesis operations.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_chaos.history.kraft import stuck_window_s
from kafka_chaos.history.run_dir import RunDir
from kafka_chaos.nemesis.faults import named_ends

S = 1_000_000_000
NODES = {"kafka-1": 1, "kafka-2": 2, "kafka-3": 3}
TOPIC_ID = "T0"
END = 60.0


def rec(offset: int, t: float, type: str, batch_epoch: int | None = 1, **data: Any) -> dict[str, Any]:
    return {
        "offset": offset,
        "batch_epoch": batch_epoch,
        "create_time_ms": int(t * 1000),
        "time": int(t * S),
        "type": type,
        "version": 0,
        "data": data,
    }


def change(offset: int, t: float, leader: int = -2, isr: list[int] | None = None, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"partitionId": 0, "topicId": TOPIC_ID, "leader": leader, **extra}
    if isr is not None:
        data["isr"] = isr
    return rec(offset, t, "PARTITION_CHANGE_RECORD", **data)


def fence(offset: int, t: float, broker: int, fenced: int = 1) -> dict[str, Any]:
    return rec(offset, t, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=broker, brokerEpoch=broker - 1, fenced=fenced)


def base_log() -> list[dict[str, Any]]:
    log = [rec(b - 1, 0.1, "REGISTER_BROKER_RECORD", brokerId=b, brokerEpoch=b - 1, fenced=True) for b in (1, 2, 3)]
    log += [fence(2 + b, 0.2, b, fenced=-1) for b in (1, 2, 3)]
    log.append(rec(6, 0.3, "TOPIC_RECORD", name="chaos", topicId=TOPIC_ID))
    log.append(
        rec(
            7,
            0.3,
            "PARTITION_RECORD",
            partitionId=0,
            topicId=TOPIC_ID,
            replicas=[1, 2, 3],
            isr=[2, 3],
            leader=2,
            leaderEpoch=0,
            partitionEpoch=0,
        )
    )
    return log


@dataclass
class Run:
    settings: dict[str, int] = field(
        default_factory=lambda: {
            "controller.quorum.fetch.timeout.ms": 2000,
            "broker.session.timeout.ms": 9000,
            "replica.lag.time.max.ms": 30000,
            "controller.quorum.election.timeout.ms": 1000,
            "broker.heartbeat.interval.ms": 2000,
        }
    )
    kafka_version: str = "3.9.1"
    metadata_version: str | None = None
    quorum: str = "static"
    #: alias -> that node's log (every node's starts as base_log()).
    logs: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {a: base_log() for a in NODES})
    #: (node, from s, to s, (leader id, epoch) or None (an error view), when its file was written),
    #: for samples every 0.5 s.
    view_spans: list[tuple[str, float, float, tuple[int, int] | None, float]] = field(default_factory=list)
    #: per sample second: id -> log end offset overrides (default: the high watermark).
    leo: dict[str, list[tuple[float, float, int]]] = field(default_factory=dict)
    #: the high watermark's lowest value at the end (None: the end of the reference log)
    final_hw: int | None = None
    #: (node, from s, to s, epoch, high watermark or None): who answers the samples then (default kafka-1, epoch 1)
    led: list[tuple[str, float, float, int, int | None]] = field(default_factory=list)
    #: extra high watermark growth per second (as NoOp records would bring)
    hw_per_s: int = 0
    nemesis: list[tuple[float, float, str, list[str], dict[str, Any]]] = field(default_factory=list)
    #: (from s, to s): DescribeQuorum failed then (its samples are errors)
    sample_errors: list[tuple[float, float]] = field(default_factory=list)
    #: when an acknowledged send to chaos/0 is invoked (each is read at the end)
    writes: list[float] = field(default_factory=lambda: [float(t) for t in range(2, 58)])
    #: until when the evidence is sampled (None: as a run does, `sampled_until`)
    until: float | None = None
    #: the host stall probe (control-plane/host-stall.jsonl): None, no probe; else (from s, for s)
    #: of each stall, the probe waking every 100 ms outside them
    stalls: list[tuple[float, float]] | None = None
    #: config.json's `broker_config`
    broker_config: dict[str, Any] = field(default_factory=dict)

    def sampled_until(self) -> float:
        """Until when the evidence is sampled: the run's end, or, as a run does (runs/run.py), the
        window of `stuck-broker-metadata` after the last nemesis operation, whichever is later."""
        if self.until is not None:
            return self.until
        last = max((done for _, done, *_ in self.nemesis), default=0.0)
        return max(END, last + stuck_window_s() + 1) if self.nemesis else END

    def add(self, *records: dict[str, Any], nodes: tuple[str, ...] = tuple(NODES)) -> Run:
        for node in nodes:
            self.logs[node] += [dict(r) for r in records]
        return self

    def views(
        self, node: str, start: float, end: float, held: tuple[int, int] | None, written: float | None = None
    ) -> Run:
        """What `node` holds over [start, end): (leader id, epoch), or None (its view unreadable);
        its file written at `written` (default: `start`, when the node wrote what it holds)."""
        self.view_spans.append((node, start, end, held, start if written is None else written))
        return self

    def behind(self, node: str, start: float, end: float, leo: int) -> Run:
        """`node`'s log end offset stays at `leo` over [start, end) in the replication samples."""
        self.leo.setdefault(node, []).append((start, end, leo))
        return self

    def leads(self, node: str, start: float, end: float, epoch: int, hw: int | None = None) -> Run:
        """The samples over [start, end) come from `node`, leader of `epoch` (at high watermark `hw`)."""
        self.led.append((node, start, end, epoch, hw))
        return self

    def stall(self, at: float, seconds: float) -> Run:
        """The host stalled from `at` for `seconds`: the probe, which wakes every 100 ms, slept
        through it (a measured stall of `seconds` less 100 ms)."""
        self.stalls = [*(self.stalls or []), (at, seconds)]
        return self

    def _wakes(self) -> list[int]:
        wakes, t, end = [], 0.0, self.sampled_until()
        while t <= end:
            wakes.append(round(t * S))
            gap = next((s for a, s in self.stalls or [] if a <= t < a + 0.1), None)
            t = round(t + (gap if gap is not None else 0.1), 6)
        return wakes

    def fault(self, f: str, nodes: list[str], at: float, took: float = 0.01, **value: Any) -> Run:
        """A nemesis operation invoked at `at`, completed `took` later."""
        self.nemesis.append((at, at + took, f, nodes, value))
        return self

    # -- writing

    def _view(self, t: float, node: str) -> dict[str, Any]:
        held: tuple[int, int] | None = (1, 1)
        written = -1.0  # the healthy run's file: written before the history began
        for n, a, b, h, w in self.view_spans:
            if n == node and a <= t and (t < b or b >= END):
                held, written = h, w
        base = {"time": int(t * S), "node": node, "node_id": NODES[node], "voted_id": -1, "after": None}
        if held is None:
            return {**base, "leader_id": None, "leader_epoch": None, "voted_id": None, "error": "no quorum-state"}
        return {**base, "leader_id": held[0], "leader_epoch": held[1], "error": None, "written": int(written * S)}

    def _hw(self, t: float) -> int:
        ref = max(self.logs.values(), key=len)
        written = [r["offset"] for r in ref if r["time"] <= t * S]
        hw = (max(written) + 1 if written else 0) + int(self.hw_per_s * t)
        return hw if self.final_hw is None else min(hw, self.final_hw)

    def _sample(self, t: float) -> dict[str, Any]:
        if any(a <= t < b for a, b in self.sample_errors):
            return {"time": int(t * S), "error": "RequestTimedOutError: Request timed out after 1999 ms"}
        hw = self._hw(t)
        voters = []
        for node, nid in NODES.items():
            leo = hw
            for a, b, value in self.leo.get(node, ()):
                if a <= t < b:
                    leo = value
            voters.append({"id": nid, "log_end_offset": leo, "last_fetch_unix_ms": -1, "last_caught_up_unix_ms": -1})
        leader, epoch = 1, 1
        for node, a, b, e, at_hw in self.led:
            if a <= t < b:
                leader, epoch, hw = NODES[node], e, hw if at_hw is None else at_hw
        return {
            "time": int(t * S),
            "leader_id": leader,
            "leader_epoch": epoch,
            "high_watermark": hw,
            "voters": voters,
            "observers": [],
            "error": None,
        }

    def history(self) -> list[dict[str, Any]]:
        events: list[tuple[float, int, dict[str, Any]]] = []
        seq = iter(range(1_000_000))
        send = [["send", "t/0", 1]]
        events.append((1.0, next(seq), {"process": 0, "type": "invoke", "f": "send", "value": send}))
        events.append((1.001, next(seq), {"process": 0, "type": "ok", "f": "send", "value": [["send", "t/0", [0, 1]]]}))
        free = 0.0  # the nemesis runs one operation at a time: a clash waits for the one before
        for at, done, f, nodes, extra in sorted(self.nemesis, key=lambda n: n[0]):
            if at < free:
                at, done = free + 0.001, done + free + 0.001 - at
            free = done
            value = {"target": nodes[0] if nodes else "random", **named_ends(f), "nodes": nodes, **extra}
            events.append((at, next(seq), {"process": "nemesis", "type": "invoke", "f": f, "value": value}))
            events.append((done, next(seq), {"process": "nemesis", "type": "ok", "f": f, "value": value}))
        for offset, t in enumerate(sorted(self.writes)):
            sent = [["send", "chaos/0", offset + 1]]
            events.append((t, next(seq), {"process": 2, "type": "invoke", "f": "send", "value": sent}))
            done = [["send", "chaos/0", [offset, offset + 1]]]
            events.append((t + 0.002, next(seq), {"process": 2, "type": "ok", "f": "send", "value": done}))
        events.append((59.0, next(seq), {"process": 1, "type": "invoke", "f": "poll", "value": [["poll"]]}))
        written = [[offset, offset + 1] for offset in range(len(self.writes))]
        read = [["poll", {"t/0": [[0, 1]], **({"chaos/0": written} if written else {})}]]
        events.append((59.001, next(seq), {"process": 1, "type": "ok", "f": "poll", "value": read}))
        events.sort(key=lambda e: (e[0], e[1]))
        return [{"index": i, "time": int(t * S), **e} for i, (t, _, e) in enumerate(events)]

    def write(self, path: Path) -> Path:
        """The run directory at `path`; returns its history file."""
        run = RunDir(path)
        path.mkdir(parents=True, exist_ok=True)
        run.history.write_text("".join(json.dumps(e) + "\n" for e in self.history()))
        config = {
            "kafka_version": self.kafka_version,
            "metadata_version": self.metadata_version,
            "history_started_unix_ms": 0,
            "broker_config": self.broker_config,
        }
        run.config.write_text(json.dumps(config))
        (run.control_plane / "metadata").mkdir(parents=True, exist_ok=True)
        nodes = {a: {"id": i, "roles": ["broker", "controller"]} for a, i in NODES.items()}
        run.control_plane_nodes.write_text(
            json.dumps(
                {"nodes": nodes, "voters": sorted(NODES.values()), "quorum": self.quorum, "settings": self.settings}
            )
        )
        ticks = [i / 2 for i in range(int(self.sampled_until() * 2) + 1)]
        run.quorum_views.write_text("".join(json.dumps(self._view(t, node)) + "\n" for t in ticks for node in NODES))
        run.quorum_replication.write_text("".join(json.dumps(self._sample(t)) + "\n" for t in ticks if t == int(t)))
        if self.stalls is not None:
            run.host_stall.write_text("".join(json.dumps({"time": w}) + "\n" for w in self._wakes()))
        for alias, log in self.logs.items():
            ordered = sorted(log, key=lambda r: r["offset"])
            run.metadata_log(alias).write_text("".join(json.dumps(r) + "\n" for r in ordered))
        return run.history
