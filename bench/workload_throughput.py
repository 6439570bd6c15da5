"""Bench: recorded operations/s of the queue workload against a plain kafka-python loop.

    .venv/bin/python bench/workload_throughput.py [--kafka V] [--runs N] [--seconds S] [--concurrency C]
        [--faults kill,pause,partition --interval 8]

Both run on the same 3-node cluster, alternately, with the same concurrency, op mix (half
sends of one value, half polls), producer sharing and consumer settings. The plain loop
records nothing and classifies nothing; the ratio is what the harness keeps of the raw
client's throughput. Goals: ratio >= 0.8, and >= 5,000 operations/s on 2 cores.

With --faults, each of the two runs under its own random nemesis of those faults (the same
seed, so the same faults on the same targets at the same times), on a cluster with the fast
failure detection `run` gives a nemesis (harness/config.py). Both count ok operations only:
the plain loop counts a send whose future failed or timed out as not done and goes on with the
same producer, as a naive application would; the harness replaces a broken producer
(workloads/producers.py). The harness's liveness (rates before, in and between faults) is
printed too.
"""

from __future__ import annotations

import argparse
import logging
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.schedule import RandomSchedule, parse_fault_list
from kafka_chaos.runs.run import WorkloadPhase, create_topic
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.producers import close_producer


def options(topic: str, seconds: float, concurrency: int) -> WorkloadOptions:
    return WorkloadOptions(topic=topic, time_limit=seconds, concurrency=concurrency, rate=1e6, final_time_limit=30)


def harness_run(cluster: KafkaCluster, opts: WorkloadOptions, plan: NemesisPlan | None, seed: int):  # noqa: ANN201
    """The recorded workload: ok operations/s of the workload phase, and its liveness."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = WorkloadPhase(cluster, opts, Path(tmp), seed=seed, plan=plan).run()
    return summary.counts.get("ok", 0) / summary.workload_s, summary.liveness


def raw_ops_per_s(cluster: KafkaCluster, opts: WorkloadOptions, plan: NemesisPlan | None, seed: int) -> float:
    """The same work with kafka-python alone: no history, no classification, no final read;
    ok operations/s (a failed or timed-out send is not counted, and the loop goes on)."""
    create_topic(cluster, opts)
    keys = [TopicPartition(opts.topic, p) for p in range(opts.keys)]
    groups = (opts.concurrency + opts.clients_per_producer - 1) // opts.clients_per_producer
    producers = [
        KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **opts.producer_config()) for _ in range(groups)
    ]
    consumers = []
    for slot in range(opts.concurrency):
        consumer = KafkaConsumer(bootstrap_servers=cluster.bootstrap_servers, **opts.consumer_config())
        mine = [tp for tp in keys if f"{tp.topic}/{tp.partition}" in opts.poll_keys_for(slot)]
        consumer.assign(mine)
        consumer.seek_to_beginning(*mine)
        consumers.append(consumer)
    counts = [0] * opts.concurrency
    start = time.monotonic()
    stop = start + opts.time_limit

    def work(slot: int) -> None:
        rng = random.Random(slot)
        producer, consumer, value = producers[slot // opts.clients_per_producer], consumers[slot], 0
        while time.monotonic() < stop:
            try:
                if rng.random() < opts.poll_fraction:
                    consumer.poll(timeout_ms=opts.poll_timeout_ms, max_records=opts.max_poll_records)
                else:
                    tp = rng.choice(keys)
                    wait = opts.delivery_timeout_ms / 1000 + 5
                    producer.send(tp.topic, value=str(value).encode(), partition=tp.partition).get(timeout=wait)
                    value += 1
            except Exception:  # noqa: BLE001 (a fault: not counted, go on)
                continue
            counts[slot] += 1

    schedule = RandomSchedule(Nemesis(cluster, None, seed), plan.faults, plan.interval, seed) if plan else None
    threads = [threading.Thread(target=work, args=(slot,)) for slot in range(opts.concurrency)]
    if schedule is not None:
        schedule.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if schedule is not None:
        schedule.stop_and_heal()
    elapsed = time.monotonic() - start
    for c in consumers:
        c.close()
    for p in producers:
        close_producer(p, 2.0)  # a wedged producer cannot flush (workloads/producers.py)
    return sum(counts) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default=DEFAULT_VERSION)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--faults", default=None, help="run both under a random nemesis of these faults")
    parser.add_argument("--interval", type=float, default=8)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    plan = NemesisPlan(faults=parse_fault_list(args.faults), interval=args.interval) if args.faults else None
    harness, raw, lives = [], [], []
    cluster = KafkaCluster(args.kafka).with_nodes(3).with_config(FAULT_DETECTION if plan else {})
    with cluster:
        for i in range(args.runs):
            raw.append(raw_ops_per_s(cluster, options(f"raw-{i}", args.seconds, args.concurrency), plan, i + 1))
            ops, live = harness_run(cluster, options(f"harness-{i}", args.seconds, args.concurrency), plan, i + 1)
            harness.append(ops)
            lives.append(live)
            print(f"  run {i + 1}: raw {raw[-1]:.0f} ops/s, harness {harness[-1]:.0f} ops/s", file=sys.stderr)
    h, r = statistics.median(harness), statistics.median(raw)
    faults = f", faults {args.faults} every {args.interval:g} s" if plan else ""
    print(f"\nKafka {args.kafka}, 3 nodes, concurrency {args.concurrency}, {args.seconds:g} s x {args.runs} runs each"
          f"{faults}; ok operations/s")  # fmt: skip
    print(f"{'client':<22} {'median ops/s':>12} {'min':>8} {'max':>8}")
    print(f"{'plain kafka-python':<22} {r:>12.0f} {min(raw):>8.0f} {max(raw):>8.0f}")
    print(f"{'harness (recorded)':<22} {h:>12.0f} {min(harness):>8.0f} {max(harness):>8.0f}")
    print(f"ratio harness/plain: {h / r:.2f} (goal >= 0.80: {'met' if h / r >= 0.8 else 'NOT met'})")
    print(f"absolute: {h:.0f} ops/s (goal >= 5000: {'met' if h >= 5000 else 'NOT met'})")
    if plan:
        for stretch in ("before_faults", "in_faults", "between_faults"):
            rates = [x["ops_per_s"][stretch] for x in lives if x["ops_per_s"][stretch] is not None]
            if rates:
                print(f"harness {stretch.replace('_', ' ')}: median {statistics.median(rates):.0f} ok ops/s")


if __name__ == "__main__":
    main()
