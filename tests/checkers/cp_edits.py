"""Edits of a real run's control-plane evidence, as a broken controller would have left it: what
the tests on real evidence (tests/checkers/test_control_plane_real.py, and the live run of
tests/integration/test_control_plane_evidence.py) make the checker flag by name."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_chaos.history.run_dir import RunDir


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def claim_leadership(run: RunDir, node: str, epoch: int) -> None:
    """`node` holds itself leader of `epoch` in every view it had: with the quorum's own leader, two
    leaders at once, in different epochs."""
    views = lines(run.quorum_views)
    for v in views:
        if v["node"] == node:
            v.update(leader_id=v["node_id"], leader_epoch=epoch, error=None)
    write(run.quorum_views, views)


BROKER_RECORDS = (
    "REGISTER_BROKER_RECORD",
    "FENCE_BROKER_RECORD",
    "UNFENCE_BROKER_RECORD",
    "BROKER_REGISTRATION_CHANGE_RECORD",
)


def keep_killed(run: RunDir) -> str:
    """The kill lasts to the end and the controller never fences the killed broker (KAFKA-18138):
    the nemesis's start moves to the very end of the history, and every record about that broker
    written after the kill becomes a NoOp in every node's log (offsets, times and epochs kept, so
    the logs still agree). The killed node's alias is returned."""
    events = lines(run.history)
    end = events[-1]["time"]
    kill = next(e for e in events if e["process"] == "nemesis" and e["f"] == "kill" and e["type"] == "invoke")
    killed = next(e for e in events if e["process"] == "nemesis" and e["f"] == "kill" and e["type"] != "invoke")
    node = killed["value"]["nodes"][0]
    for e in events:
        if e["process"] == "nemesis" and e["f"] == "start":
            e["time"] = end - (3 if e["type"] == "invoke" else 2) * 1_000_000
    events.sort(key=lambda e: e["time"])
    write(run.history, [{**e, "index": i} for i, e in enumerate(events)])
    broker = json.loads(run.control_plane_nodes.read_text())["nodes"][node]["id"]
    for path in run.metadata_logs().values():
        records = lines(path)
        for r in records:
            data = r.get("data") or {}
            about = data.get("brokerId", data.get("id"))
            if r.get("type") in BROKER_RECORDS and about == broker and (r.get("time") or 0) >= kill["time"]:
                r.update(type="NO_OP_RECORD", data={})
        write(path, records)
    return node
