"""What the harness knows of one client library, in one record: how it opens, the settings its
producers, consumers and group members are given, and which of its errors are `fail`.

Each client's module ends with its record (kafka_python.py, librdkafka.py, java.py); the registry
(workloads/clients/registry.py) finds them by `--client` name, as workloads/registry.py finds
workloads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients.api import Client, Group
from kafka_chaos.workloads.options import WorkloadOptions


@dataclass(frozen=True)
class ClientRecord:
    #: `--client`, and the history's `client` field.
    name: str
    #: How it opens: (bootstrap servers, options, the cluster's Kafka version, the run directory
    #: for the client's own log, or None) -> the client, ready to make producers and consumers.
    open: Callable[[str, WorkloadOptions, KafkaVersion, Path | None], Client]
    #: The settings a producer is given, by the library's own names (a transactional one adds
    #: its transactional id).
    producer_settings: Callable[[WorkloadOptions], dict[str, Any]]
    #: The settings a consumer is given, for the workload's isolation level.
    consumer_settings: Callable[[WorkloadOptions, str], dict[str, Any]]
    #: What a member of a consumer group adds to consumer_settings'.
    group_settings: Callable[[WorkloadOptions, Group], dict[str, Any]]
    #: Produce errors that prove the write did not happen, by the client's name for them, and why
    #: (workloads/outcomes.py: everything else is `info`).
    definite: dict[str, str]
    #: Errors that look definite and are not: why each stays `info`.
    not_definite: dict[str, str]
    #: Commit errors that prove the group refused the commit (its offsets were not stored).
    commit_definite: dict[str, str]
