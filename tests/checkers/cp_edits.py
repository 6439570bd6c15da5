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


def keep_killed(run: RunDir) -> None:
    """The nemesis's start comes at the very end of the history: the killed broker, which the log
    fenced, registered again and unfenced when it really started, is then unfenced while down."""
    events = lines(run.history)
    end = events[-1]["time"]
    for e in events:
        if e["process"] == "nemesis" and e["f"] == "start":
            e["time"] = end - (3 if e["type"] == "invoke" else 2) * 1_000_000
    events.sort(key=lambda e: e["time"])
    write(run.history, [{**e, "index": i} for i, e in enumerate(events)])
