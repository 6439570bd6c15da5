"""Hand-made histories for checker tests: a tiny writer of the shared history format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kafka_chaos.nemesis.faults import named_ends


class History:
    """Events in the order they are added; each op is an invoke and (unless left open) its completion."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.time = 0

    def _event(self, process: int | str, type: str, f: str, value: Any, error: str | None = None) -> int:
        self.time += 1_000_000
        event = {"index": len(self.events), "time": self.time, "process": process, "type": type, "f": f, "value": value}
        if error:
            event["error"] = error
        self.events.append(event)
        return event["index"]

    def op(
        self, process: int | str, f: str, invoke: Any, complete: Any, type: str = "ok", error: str | None = None
    ) -> int:
        """An operation; returns the index of its completion (the op's name in results), or of its invoke."""
        idx = self._event(process, "invoke", f, invoke)
        if type is None:
            return idx
        return self._event(process, type, f, complete, error)

    def send(self, process: int, key: str, sends: list[tuple[int, int | None]], type: str = "ok") -> int:
        """sends: (value, offset) pairs; offset None when unknown."""
        invoke = [["send", key, v] for v, _ in sends]
        done = [["send", key, [o, v]] for v, o in sends]
        return self.op(process, "send", invoke, done, type, None if type in ("ok", None) else "timeout")

    def poll(self, process: int, read: dict[str, list[tuple[int, int]]], type: str = "ok") -> int:
        return self.op(
            process, "poll", [["poll"]], [["poll", {k: [list(p) for p in v] for k, v in read.items()}]], type
        )

    def assign(self, process: int, keys: list[str], f: str = "assign") -> int:
        return self.op(process, f, keys, keys)

    def txn(self, process: int, micro: list[Any], done: list[Any], type: str = "ok") -> int:
        return self.op(process, "txn", micro, done, type)

    def invoke(self, process: int, f: str, value: Any) -> int:
        """An invoke alone, for operations that overlap others: `complete` ends it later."""
        return self._event(process, "invoke", f, value)

    def complete(self, process: int, f: str, value: Any, type: str = "ok") -> int:
        return self._event(process, type, f, value)

    def wait(self, seconds: float) -> None:
        """Time passes: the next event comes `seconds` later (plus the usual millisecond)."""
        self.time += int(seconds * 1e9)

    def share_poll(
        self,
        process: int,
        got: dict[str, list[tuple[int, int, int | None]]],
        lock_ms: int = 10_000,
        limit: int = 5,
        type: str = "ok",
        took: float = 0.0,
    ) -> int:
        """A share-poll that acquired `got` ({key: [(offset, value, delivery count)]}), its
        completion `took` seconds after its invoke."""
        settings = {"group": "g", "lock_ms": lock_ms, "delivery_limit": limit}
        self.invoke(process, "share-poll", [["share-poll", settings]])
        self.wait(took)
        done = [["share-poll", {k: [list(r) for r in v] for k, v in got.items()}]]
        return self.complete(process, "share-poll", done, type)

    def share_ack(self, process: int, acks: dict[str, list[tuple[int, str]]], outcome: str = "ok") -> int:
        """A share-ack of `acks` ({key: [(offset, "accept"|"release"|"reject")]}), every key `outcome`."""
        invoke = [["share-ack", {k: [list(a) for a in v] for k, v in acks.items()}]]
        done = [["share-ack", {k: outcome for k in acks}]]
        type_ = outcome if outcome in ("ok", "fail") else "info"
        return self.op(process, "share-ack", invoke, done, type_)

    def share_offsets(self, starts: dict[str, int], process: int = 99) -> int:
        return self.op(process, "share-offsets", [["share-offsets"]], [["share-offsets", starts]])

    def nemesis(self, f: str, nodes: list[str]) -> int:
        """A nemesis operation as the nemesis writes it, saying how its fault ends (nemesis/faults.py)."""
        value = {"nodes": nodes, **named_ends(f)}
        return self.op("nemesis", f, value, value)

    def lines(self) -> str:
        return "".join(json.dumps(e) + "\n" for e in self.events)

    def write(self, path: Path) -> Path:
        path.write_text(self.lines(), encoding="utf-8")
        return path


S = 1_000_000_000  # nanoseconds per second


class TimedHistory:
    """A history whose events happen at chosen times: ops at a rate over a stretch, faults, a final read."""

    def __init__(self) -> None:
        self.events: list[tuple[int, dict[str, Any]]] = []
        self.seq = 0

    def _add(self, t: float, **event: Any) -> None:
        self.seq += 1
        self.events.append((int(t * S), {"process": 0, **event, "_seq": self.seq}))

    def ops(self, f: str, start: float, end: float, per_s: float, process: int = 0, phase: str | None = None) -> None:
        """Operations completing at `per_s` per second over [start, end), each 1 ms long."""
        n = round((end - start) * per_s)
        for i in range(n):
            t = start + i / per_s
            extra = {"phase": phase} if phase else {}
            self._add(t, process=process, type="invoke", f=f, value=None, **extra)
            self._add(t + 0.001, process=process, type="ok", f=f, value=None, **extra)

    def fault(self, f: str, heal: str, start: float, end: float, node: str = "kafka-1") -> None:
        """A fault on `node` and the operation that heals it, each saying how it ends and naming the
        node, as the nemesis writes them (history/faults.py pairs them by node)."""
        applied, healed = {"undone_by": heal, "nodes": [node]}, {"heals": [f], "nodes": [node]}
        self._add(start, process="nemesis", type="invoke", f=f, value=applied)
        self._add(start + 0.01, process="nemesis", type="ok", f=f, value=applied)
        self._add(end, process="nemesis", type="invoke", f=heal, value=healed)
        self._add(end + 0.01, process="nemesis", type="ok", f=heal, value=healed)

    def history(self) -> list[dict[str, Any]]:
        ordered = sorted(self.events, key=lambda e: (e[0], e[1]["_seq"]))
        return [
            {**{k: v for k, v in e.items() if k != "_seq"}, "index": i, "time": t} for i, (t, e) in enumerate(ordered)
        ]

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(e) + "\n" for e in self.history()), encoding="utf-8")
        return path
