"""Every client library by `--client` name: its record (workloads/clients/record.py). A run,
the error tables (workloads/outcomes.py) and the settings table of docs/clients.md resolve here;
a new client is its module, its record, one line below and its name in options.CLIENTS.
"""

from __future__ import annotations

from pathlib import Path

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients.api import Client, Group
from kafka_chaos.workloads.clients.java import CLIENT as JAVA
from kafka_chaos.workloads.clients.kafka_python import CLIENT as KAFKA_PYTHON
from kafka_chaos.workloads.clients.librdkafka import CLIENT as LIBRDKAFKA
from kafka_chaos.workloads.clients.record import ClientRecord
from kafka_chaos.workloads.options import WorkloadOptions

#: In the order of `--client`'s values (options.CLIENTS; a test keeps the two equal).
RECORDS: dict[str, ClientRecord] = {c.name: c for c in (KAFKA_PYTHON, LIBRDKAFKA, JAVA)}


def get(name: str) -> ClientRecord:
    try:
        return RECORDS[name]
    except KeyError:
        raise UsageError(f"unknown client {name!r}: expected one of {', '.join(RECORDS)}") from None


def open_client(
    opts: WorkloadOptions, bootstrap: str, cluster_version: KafkaVersion, log_dir: Path | None = None
) -> Client:
    """The client `opts.client` names, ready to make producers and consumers; the Java client's
    version is `opts.client_version`, else the cluster's."""
    return get(opts.client).open(bootstrap, opts, cluster_version, log_dir)


def settings_table() -> str:
    """Each client's producer and consumer settings under the default (safe) options, and what a
    member of a consumer group adds (--consumer subscribe), as Markdown for docs/clients.md (a
    test keeps the two equal): what each library is given, by its names."""
    opts = WorkloadOptions()
    group = Group("<run's group>")
    lines = ["| client | producer | consumer | a group member adds |", "|---|---|---|---|"]
    for record in RECORDS.values():
        configs = (
            record.producer_settings(opts),
            record.consumer_settings(opts, "read_uncommitted"),
            record.group_settings(opts, group),
        )
        cells = [", ".join(f"`{k}={v}`" for k, v in config.items()) for config in configs]
        lines.append(f"| {record.name} | {' | '.join(cells)} |")
    return "\n".join(lines)
