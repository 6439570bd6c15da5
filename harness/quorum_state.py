"""Each node's own quorum state, read from its data folder on the host: the leader id and epoch
it holds, and its vote (`__cluster_metadata-0/quorum-state`, Kafka's QuorumStateData, which
KRaft rewrites on every change of its election state). Every Kafka release writes it, so it says
who leads the quorum where a client library cannot read DescribeQuorum; the control-plane
sampler (harness/control_plane.py) and the `controller` target (nemesis/targets.py) read it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_chaos.history.quorum_view import claims_to_lead

if TYPE_CHECKING:  # kept out at run time: the view sampler's own process imports this module
    from kafka_chaos.harness.node import KafkaNode

#: A node's metadata log's folder in its data folder, and the quorum-state file in it.
METADATA_DIR = "__cluster_metadata-0"
QUORUM_STATE = "quorum-state"


def path_of(node: KafkaNode) -> Path:
    return node.data_dir / METADATA_DIR / QUORUM_STATE


def log_bytes(node: KafkaNode) -> int:
    """How many bytes of the metadata log the node holds on its disk: its segments' sizes (0 while
    its folder is missing, as in a wipe)."""
    total = 0
    try:
        for f in (node.data_dir / METADATA_DIR).glob("*.log"):
            try:
                total += f.stat().st_size
            except OSError:  # a segment deleted since the listing
                pass
    except OSError:
        return 0
    return total


def parse_quorum_state(text: str) -> dict[str, int]:
    """leader_id, leader_epoch and voted_id from a quorum-state file's JSON (-1 where it holds
    none). ValueError when it is not that JSON."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return {
        "leader_id": int(data.get("leaderId", -1)),
        "leader_epoch": int(data.get("leaderEpoch", -1)),
        "voted_id": int(data.get("votedId", -1)),
    }


def read_view(path: Path) -> dict[str, Any]:
    """One node's view now: its quorum-state, or why it could not be read (`error`); and when the
    file was last written (`mtime_ns`, the host's wall clock; None when unread). KRaft replaces the
    file whole (a temporary file renamed over it), so the time read is the text's."""
    try:
        with open(path, "rb") as fh:
            mtime_ns = os.fstat(fh.fileno()).st_mtime_ns
            return {**parse_quorum_state(fh.read().decode()), "error": None, "mtime_ns": mtime_ns}
    except FileNotFoundError:
        error = "no quorum-state file"
    except ValueError as exc:  # a JSONDecodeError or a UnicodeDecodeError is one
        error = f"bad quorum-state: {exc}"
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"
    return {"leader_id": None, "leader_epoch": None, "voted_id": None, "error": error, "mtime_ns": None}


def leader_claims(controllers: list[KafkaNode]) -> list[tuple[int, int]]:
    """(epoch, id) of each running controller that holds itself leader now, highest epoch first.

    More than one claim is the quorum mid-change, or split (KAFKA-15489: an isolated leader that
    never resigns keeps its claim beside the majority's leader of a later epoch); a former leader
    that was stopped writes its old claim back as it starts. The highest epoch is the quorum's
    newest leader: an epoch is only ever won by a majority's votes."""
    claims = []
    for node in controllers:
        if node.state() != "running":
            continue
        view = read_view(path_of(node))
        if claims_to_lead({**view, "node_id": node.node_id}):
            claims.append((view["leader_epoch"], node.node_id))
    return sorted(claims, reverse=True)
