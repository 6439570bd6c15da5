"""The Kafka client libraries a workload can speak (`--client`), behind one interface (api.py).

kafka-python (kafka_python.py), librdkafka through confluent-kafka (librdkafka.py) and the
official Java client through a small driver of ours (java.py). Each module is imported only
when its client is used, so that a run of one does not need the others' runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafka_chaos.harness.versions import KafkaVersion
    from kafka_chaos.workloads.clients.api import Client
    from kafka_chaos.workloads.options import WorkloadOptions

from kafka_chaos.workloads.clients.api import CLIENTS

__all__ = ["CLIENTS", "open_client"]


def open_client(opts: WorkloadOptions, bootstrap: str, cluster_version: KafkaVersion,
                log_dir: Path | None = None) -> Client:  # fmt: skip
    """The client `opts.client` names, ready to make producers and consumers; the Java client's
    version is `opts.client_version`, else the cluster's."""
    if opts.client == "librdkafka":
        from kafka_chaos.workloads.clients.librdkafka import LibrdkafkaClient

        return LibrdkafkaClient(bootstrap, opts, log_dir)
    if opts.client == "java":
        from kafka_chaos.workloads.clients.java import JavaClient

        return JavaClient(bootstrap, opts, opts.java_version(cluster_version), log_dir)
    from kafka_chaos.workloads.clients.kafka_python import KafkaPythonClient

    return KafkaPythonClient(bootstrap, opts)


def settings_table() -> str:
    """Each client's producer and consumer settings under the default (safe) options, and what a
    member of a consumer group adds (--consumer subscribe), as Markdown for docs/clients.md (a
    test keeps the two equal): what each library is given, by its names."""
    from kafka_chaos.workloads.clients import java, librdkafka
    from kafka_chaos.workloads.clients.api import Group
    from kafka_chaos.workloads.options import WorkloadOptions

    opts = WorkloadOptions()
    group = Group("<run's group>")
    given = {
        "kafka-python": (
            opts.producer_config(), opts.consumer_config("read_uncommitted"), opts.group_config(group.group_id, False)
        ),
        "librdkafka": (
            librdkafka.producer_config(opts), librdkafka.consumer_config(opts, "read_uncommitted"),
            librdkafka.group_config(opts, group),
        ),
        "java": (
            java.producer_config(opts), java.consumer_config(opts, "read_uncommitted"), java.group_config(opts, group)
        ),
    }  # fmt: skip
    lines = ["| client | producer | consumer | a group member adds |", "|---|---|---|---|"]
    for client, configs in given.items():
        cells = [", ".join(f"`{k}={v}`" for k, v in config.items()) for config in configs]
        lines.append(f"| {client} | {' | '.join(cells)} |")
    return "\n".join(lines)
