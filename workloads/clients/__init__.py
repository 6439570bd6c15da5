"""The Kafka client libraries a workload can speak (`--client`), behind one interface (api.py).

kafka-python (kafka_python.py), librdkafka through confluent-kafka (librdkafka.py) and the
official Java client through a small driver of ours (java.py), each one record (record.py)
found by name in the registry (registry.py). The Java client's runtime (its JVM, built driver)
is needed only when a run opens it.
"""

from kafka_chaos.workloads.clients.registry import RECORDS, get, open_client, settings_table
from kafka_chaos.workloads.options import CLIENTS

__all__ = ["CLIENTS", "RECORDS", "get", "open_client", "settings_table"]
