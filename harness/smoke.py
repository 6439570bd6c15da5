"""Acknowledged writes in, the same records out: the first proof that a cluster keeps data.

Used by the `demo` command (the project's main job for now) and by the cluster tests. Values
are the integers 0..count-1, so what is missing or duplicated is named exactly.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError

from kafka_chaos.harness.cluster import KafkaCluster


@dataclass
class SmokeResult:
    topic: str
    sent: int
    acknowledged: int
    failed: int
    read: int
    missing: list[int] = field(default_factory=list)  # acknowledged, never read back
    duplicates: list[int] = field(default_factory=list)  # read more than once
    produce_s: float = 0.0
    consume_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and not self.missing and not self.duplicates and self.acknowledged == self.sent

    def account(self) -> str:
        verdict = "all acknowledged records read back" if self.ok else "RECORDS MISSING OR DUPLICATED"
        return (
            f"topic {self.topic}: sent {self.sent}, acknowledged {self.acknowledged} (acks=all), "
            f"failed {self.failed}, read back {self.read}, missing {len(self.missing)}, "
            f"duplicated {len(self.duplicates)}; produce {self.produce_s:.1f} s, "
            f"consume {self.consume_s:.1f} s: {verdict}"
        )


def produce(cluster: KafkaCluster, topic: str, count: int, timeout_s: float = 60.0) -> tuple[set[int], int, float]:
    """Send the values 0..count-1 with acks=all; (acknowledged values, failed count, seconds)."""
    producer = KafkaProducer(
        bootstrap_servers=cluster.bootstrap_servers,
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
        request_timeout_ms=10000,
        delivery_timeout_ms=30000,
    )
    started = time.monotonic()
    futures = [(i, producer.send(topic, value=str(i).encode())) for i in range(count)]
    producer.flush(timeout=timeout_s)
    acknowledged, failed = set(), 0
    for value, future in futures:
        try:
            future.get(timeout=0)  # flush() does not raise for failed records: check each one
            acknowledged.add(value)
        except KafkaError:
            failed += 1
    producer.close(timeout=5)
    return acknowledged, failed, time.monotonic() - started


def read_all(cluster: KafkaCluster, topic: str, partitions: int, timeout_s: float = 60.0) -> Counter[int]:
    """Every value in the topic, read from the start of each partition up to its end offset."""
    consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, enable_auto_commit=False, group_id=None)
    parts = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(parts)
    consumer.seek_to_beginning(*parts)
    end = consumer.end_offsets(parts)
    seen: Counter[int] = Counter()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(consumer.position(tp) < end[tp] for tp in parts):
        for records in consumer.poll(timeout_ms=500).values():
            seen.update(int(r.value) for r in records)
    consumer.close()
    return seen


def account(topic: str, count: int, produced: tuple[set[int], int, float], seen: Counter[int], read_s: float):
    acknowledged, failed, produce_s = produced
    return SmokeResult(
        topic=topic,
        sent=count,
        acknowledged=len(acknowledged),
        failed=failed,
        read=sum(seen.values()),
        missing=sorted(acknowledged - set(seen)),
        duplicates=sorted(v for v, n in seen.items() if n > 1),
        produce_s=produce_s,
        consume_s=read_s,
    )


def produce_and_read_back(
    cluster: KafkaCluster, topic: str = "smoke", count: int = 5000, partitions: int = 3, timeout_s: float = 60.0
) -> SmokeResult:
    """Write `count` acks=all records to an RF=min(3, brokers) topic, then read the topic from the start."""
    rf = min(3, len(cluster.brokers))
    cluster.create_topic(topic, partitions, rf, {"min.insync.replicas": str(min(2, rf))})
    produced = produce(cluster, topic, count, timeout_s)
    started = time.monotonic()
    seen = read_all(cluster, topic, partitions, timeout_s)
    return account(topic, count, produced, seen, time.monotonic() - started)
