"""The scenario library by name, and user scenario files (scenarios/files.py) by path."""

from __future__ import annotations

from pathlib import Path

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.scenarios import (
    acks1_failover,
    auto_commit_crash,
    controller_disk_loss,
    controller_pause,
    kafka_14139,
    kafka_15221,
    kafka_15489,
    kafka_16541,
    kafka_17754,
    kafka_18138,
    kafka_19690,
    kafka_19789,
    kafka_19954,
    kafka_20090,
    kafka_20247,
    kafka_20634,
    kafka_20732,
    kafka_20742,
    kip848_coordinator_move,
    last_replica_standing,
    share_double_acceptance,
    stale_controller_channel,
    stuck_broker_metadata,
    unclean_election,
)
from kafka_chaos.scenarios.base import Scenario
from kafka_chaos.scenarios.files import load

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        kafka_14139.SCENARIO,
        acks1_failover.SCENARIO,
        acks1_failover.CONTROL,
        last_replica_standing.SCENARIO,
        unclean_election.SCENARIO,
        unclean_election.CONFIG,
        auto_commit_crash.SCENARIO,
        auto_commit_crash.CONTROL,
        kip848_coordinator_move.SCENARIO,
        kafka_17754.SCENARIO,
        kafka_15489.SCENARIO,
        kafka_18138.SCENARIO,
        kafka_15221.SCENARIO,
        kafka_16541.SCENARIO,
        stuck_broker_metadata.SCENARIO,
        controller_pause.SCENARIO,
        controller_disk_loss.SCENARIO,
        controller_disk_loss.CONTROL,
        kafka_19954.SCENARIO,
        kafka_19690.SCENARIO,
        kafka_20090.SCENARIO,
        kafka_19789.SCENARIO,
        kafka_20634.SCENARIO,
        kafka_20247.SCENARIO,
        kafka_20732.SCENARIO,
        kafka_20742.SCENARIO,
        stale_controller_channel.SCENARIO,
        share_double_acceptance.SCENARIO,
    )
}


def get(name_or_path: str) -> Scenario:
    """A scenario of the library, or one read from a file (.yaml, .yml, .json or .py)."""
    if name_or_path in SCENARIOS:
        return SCENARIOS[name_or_path]
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml", ".json", ".py"):
        return load(path)
    raise UsageError(f"unknown scenario {name_or_path!r}: expected one of {', '.join(SCENARIOS)}, or a scenario file")
