"""Bench: recorded operations/s of the queue workload against a plain loop of the same client.

    .venv/bin/python bench/workload_throughput.py [--kafka V] [--clients kafka-python,librdkafka,java]
        [--runs N] [--seconds S] [--concurrency C] [--faults kill,pause,partition --interval 8]

For each client, both run on the same 3-node cluster, alternately, with the same concurrency,
op mix (half sends of one value, half polls), producer sharing and consumer settings. The plain
loop calls the client library through its thin adapter (workloads/clients/: for the Java client
the driver, its only way in from Python) and records nothing and classifies nothing; the ratio
is what the harness keeps of that client's throughput. Goals: ratio >= 0.8 for every client,
and >= 5,000 operations/s on 2 cores.

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

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import FAULT_DETECTION
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.schedule import RandomSchedule, parse_fault_list
from kafka_chaos.runs.run import WorkloadPhase, create_topic
from kafka_chaos.workloads.clients import open_client
from kafka_chaos.workloads.options import WorkloadOptions


def options(topic: str, seconds: float, concurrency: int, client: str) -> WorkloadOptions:
    return WorkloadOptions(
        topic=topic, time_limit=seconds, concurrency=concurrency, rate=1e6, final_time_limit=30, client=client
    )


def harness_run(cluster: KafkaCluster, opts: WorkloadOptions, plan: NemesisPlan | None, seed: int):
    """The recorded workload: ok operations/s of the workload phase, and its liveness."""
    with tempfile.TemporaryDirectory() as tmp:
        summary = WorkloadPhase(cluster, opts, Path(tmp), seed=seed, plan=plan).run()
    return summary.counts.get("ok", 0) / summary.workload_s, summary.liveness


def raw_ops_per_s(cluster: KafkaCluster, opts: WorkloadOptions, plan: NemesisPlan | None, seed: int) -> float:
    """The same work with the client alone: no history, no classification, no final read;
    ok operations/s (a failed or timed-out send is not counted, and the loop goes on)."""
    create_topic(cluster, opts)
    client = open_client(opts, cluster.bootstrap_servers, cluster.version)
    groups = (opts.concurrency + opts.clients_per_producer - 1) // opts.clients_per_producer
    producers = [client.producer(f"raw-p{g}") for g in range(groups)]
    consumers = []
    for slot in range(opts.concurrency):
        consumer = client.consumer(f"raw-c{slot}", "read_uncommitted")
        consumer.assign(opts.poll_keys_for(slot))
        consumers.append(consumer)
    keys = opts.key_names
    counts = [0] * opts.concurrency
    start = time.monotonic()
    stop = start + opts.time_limit

    def work(slot: int) -> None:
        rng = random.Random(slot)
        producer, consumer, value = producers[slot // opts.clients_per_producer], consumers[slot], 0
        while time.monotonic() < stop:
            try:
                if rng.random() < opts.poll_fraction:
                    consumer.poll(opts.poll_timeout_ms)
                else:
                    producer.send(rng.choice(keys), value).result(opts.delivery_timeout_ms / 1000 + 5)
                    value += 1
            except Exception:  # a fault: not counted, go on
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
        p.close(2.0)  # a wedged producer cannot flush (workloads/producers.py)
    client.close()
    return sum(counts) / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default=DEFAULT_VERSION)
    parser.add_argument("--clients", default="kafka-python")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--faults", default=None, help="run both under a random nemesis of these faults")
    parser.add_argument("--interval", type=float, default=8)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    clients = args.clients.split(",")
    plan = NemesisPlan(faults=parse_fault_list(args.faults), interval=args.interval) if args.faults else None
    harness = {c: [] for c in clients}
    raw = {c: [] for c in clients}
    lives = {c: [] for c in clients}
    cluster = KafkaCluster(args.kafka).with_nodes(3).with_config(FAULT_DETECTION if plan else {})
    with cluster:
        for i in range(args.runs):
            for c in clients:  # the clients interleaved, so that a slow stretch of the machine hits them alike
                tag = f"{c}-{i}"
                raw[c].append(
                    raw_ops_per_s(cluster, options(f"raw-{tag}", args.seconds, args.concurrency, c), plan, i + 1)
                )
                ops, live = harness_run(
                    cluster, options(f"harness-{tag}", args.seconds, args.concurrency, c), plan, i + 1
                )
                harness[c].append(ops)
                lives[c].append(live)
                print(
                    f"  run {i + 1} {c}: raw {raw[c][-1]:.0f} ops/s, harness {harness[c][-1]:.0f} ops/s",
                    file=sys.stderr,
                )
    faults = f", faults {args.faults} every {args.interval:g} s" if plan else ""
    print(
        f"\nKafka {args.kafka}, 3 nodes, concurrency {args.concurrency}, {args.seconds:g} s x {args.runs} runs each"
        f"{faults}; ok operations/s, medians (min..max)"
    )
    print("| client | plain loop | harness (recorded) | ratio | goal >= 0.80 |")
    print("|---|---|---|---|---|")
    for c in clients:
        h, r = statistics.median(harness[c]), statistics.median(raw[c])
        spread = {name: f"{min(v[c]):.0f}..{max(v[c]):.0f}" for name, v in (("raw", raw), ("harness", harness))}
        print(
            f"| {c} | {r:.0f} ({spread['raw']}) | {h:.0f} ({spread['harness']}) "
            f"| {h / r:.2f} | {'met' if h / r >= 0.8 else 'NOT met'} |"
        )
        if plan:
            for stretch in ("before_faults", "in_faults", "between_faults"):
                rates = [x["ops_per_s"][stretch] for x in lives[c] if x["ops_per_s"][stretch] is not None]
                if rates:
                    print(f"{c} harness {stretch.replace('_', ' ')}: median {statistics.median(rates):.0f} ok ops/s")
    best = max(statistics.median(harness[c]) for c in clients)
    print(f"absolute: best client {best:.0f} ops/s (goal >= 5000: {'met' if best >= 5000 else 'NOT met'})")


if __name__ == "__main__":
    main()
