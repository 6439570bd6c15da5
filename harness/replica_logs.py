"""Replica divergence: each broker's copy of each workload partition, read from its data
directory after the run and compared offset by offset, and against what the clients saw.

Replicas of a partition must agree on every offset they both hold (Kafka's log matching:
followers truncate to the leader); an offset where two replicas hold different values is
divergence. A loss is often healed over by the time the run ends: the old leader came back and
truncated to the new one, so the replicas agree again, on a rewritten log. What the clients
read, and what sends were acknowledged at, is the other side of the comparison: an offset
where a client saw a value that no replica holds there now (`rewritten`), or that no replica
holds at all any more (`gone`). Writes `replicas.json` into the run directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kafka_chaos.harness.logdump import DumpRequest, records, segment_files
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir

MAX_EXAMPLES = 50


def replica_values(entries: Iterable[dict[str, Any]]) -> dict[int, int | str]:
    """offset -> value of one replica's log (control records and non-integers kept as text)."""
    out: dict[int, int | str] = {}
    for entry in entries:
        payload = entry.get("payload")
        if payload is None:
            continue
        try:
            out[entry["offset"]] = int(payload)
        except ValueError:
            out[entry["offset"]] = payload
    return out


def compare(replicas: dict[str, dict[int, int | str]]) -> dict[str, Any]:
    """Offsets where the replicas that hold them disagree, and each replica's extent (pure)."""
    extents = {
        node: {"first": min(log) if log else None, "last": max(log) if log else None, "records": len(log)}
        for node, log in sorted(replicas.items())
    }
    offsets = sorted(set().union(*(set(log) for log in replicas.values()))) if replicas else []
    divergent = []
    for offset in offsets:
        held = {node: log[offset] for node, log in sorted(replicas.items()) if offset in log}
        if len(set(map(str, held.values()))) > 1:
            divergent.append({"offset": offset, "values": held})
    return {"replicas": extents, "divergent_count": len(divergent), "divergent": divergent}


def _observations(history: Path):
    """(key, offset, value, event index) of every ok poll read and ok send with an offset."""
    with open(history, encoding="utf-8") as f:
        for line in f:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a truncated last line
            if event.get("type") != "ok" or event.get("f") not in ("poll", "send", "txn"):
                continue
            for mop in event.get("value") or []:
                if mop and mop[0] == "poll" and len(mop) > 1 and isinstance(mop[1], dict):
                    for key, read in mop[1].items():
                        for offset, value in read:
                            yield key, offset, value, event.get("index")
                elif mop and mop[0] == "send" and len(mop) > 2 and isinstance(mop[2], list) and mop[2][0] is not None:
                    yield mop[1], mop[2][0], mop[2][1], event.get("index")


def against_clients(history: Path, logs: dict[str, dict[str, dict[int, int | str]]]) -> dict[str, dict[str, Any]]:
    """Per key: offsets where a client read (or was acknowledged) a value the replicas do not
    hold there now (`rewritten`), or that no replica holds any more (`gone`). Streams the history;
    memory is the replica logs'."""
    out: dict[str, dict[str, Any]] = {key: {"rewritten": 0, "gone": 0, "examples": []} for key in logs}
    counted: set[tuple[str, int, str]] = set()
    for key, offset, value, index in _observations(history):
        replicas = logs.get(key)
        if replicas is None:
            continue
        held = {node: log[offset] for node, log in replicas.items() if offset in log}
        if held and all(str(v) == str(value) for v in held.values()):
            continue
        mark = (key, offset, str(value))
        if mark in counted:
            continue
        counted.add(mark)
        kind = "rewritten" if held else "gone"
        out[key][kind] += 1
        if len(out[key]["examples"]) < MAX_EXAMPLES:
            out[key]["examples"].append({"offset": offset, "client_saw": value, "op": index, "replicas_hold": held})
    return out


def replicas_request(run_dir: Path, config: RunConfig) -> DumpRequest | None:
    """The tool's run that prints every node's copy of the workload's partitions, on paths
    inside the run's cluster folder (harness/logdump.py); None when no node holds one."""
    run = RunDir(run_dir)
    topic = config.topic
    files = []
    for data in run.node_data_dirs():
        dirs = [d for d in data.glob(f"{topic}-*") if d.is_dir() and d.name[len(topic) + 1 :].isdigit()]
        files += [f"{d.relative_to(run.cluster)}/{name}" for d in sorted(dirs) for name in segment_files(d)]
    return DumpRequest(tuple(files), ("--print-data-log",)) if files else None


def write_replicas(run_dir: Path, output: str, config: RunConfig) -> Path:
    """replicas.json from the tool's output for replicas_request(run_dir): each "Dumping
    /logs/<node>/data/<topic>-<partition>/<segment>" line starts one node's segment."""
    run = RunDir(run_dir)
    topic = config.topic
    logs: dict[str, dict[str, dict[int, int | str]]] = {}
    current = None
    for line in output.splitlines():
        if line.startswith("Dumping "):
            parts = line[len("Dumping ") :].strip().rstrip("/").split("/")
            node, partition = parts[-4], parts[-2].rsplit("-", 1)[1]
            current = logs.setdefault(f"{topic}/{partition}", {}).setdefault(node, {})
        elif current is not None:
            current.update(replica_values(records(line)))
    keys = {key: compare(replicas) for key, replicas in sorted(logs.items())}
    for c in keys.values():
        c["divergent"] = c["divergent"][:MAX_EXAMPLES]
    if run.history.exists():
        for key, seen in against_clients(run.history, logs).items():
            keys[key]["clients"] = seen
    path = run.replicas
    path.write_text(json.dumps({"topic": topic, "keys": keys}, indent=1) + "\n")
    return path
