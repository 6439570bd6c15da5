"""Bench: time from start to ready, for 1 and 3 nodes, cold (image built) and warm (cached).

    .venv/bin/python bench/cluster_startup.py [--kafka VERSION] [--runs N] [--cold-base]

Cold removes the version's image and its resolved-jar cache first, so the run resolves the
jars with Maven (from Maven's local repository when it has them) and builds the image; with
--cold-base the Java base image is rebuilt from Debian packages too. Warm starts with
everything cached. Prints medians over N runs. Goal: warm 3 nodes ready in under 20 s.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import time

from docker.errors import ImageNotFound

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.harness.images import BASE_IMAGE, image_tag
from kafka_chaos.harness.maven import jars_dir
from kafka_chaos.harness.versions import DEFAULT_VERSION, KafkaVersion


def make_cold(version: KafkaVersion, base: bool) -> None:
    client = docker_client()
    tags = [image_tag(version)] + ([BASE_IMAGE] if base else [])
    for tag in tags:
        try:
            client.images.remove(tag, force=True)
        except ImageNotFound:
            pass
    shutil.rmtree(jars_dir(version), ignore_errors=True)


def time_to_ready(version: str, nodes: int) -> float:
    started = time.monotonic()
    with KafkaCluster(version).with_nodes(nodes):
        ready = time.monotonic() - started
    return ready


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default=DEFAULT_VERSION)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold-base", action="store_true", help="rebuild the Java base image too when cold")
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    version = KafkaVersion.parse(args.kafka)

    rows = []
    for nodes in (1, 3):
        for mode in ("cold", "warm"):
            samples = []
            for _ in range(args.runs):
                if mode == "cold":
                    make_cold(version, args.cold_base)
                samples.append(time_to_ready(str(version), nodes))
                print(f"  {mode} {nodes} node(s): {samples[-1]:.1f} s", file=sys.stderr, flush=True)
            rows.append((nodes, mode, samples))

    print(f"\nKafka {version}: start to ready (s), {args.runs} runs each")
    print(f"{'nodes':>5}  {'cache':<5}  {'median':>7}  {'min':>6}  {'max':>6}")
    for nodes, mode, samples in rows:
        print(f"{nodes:>5}  {mode:<5}  {statistics.median(samples):>7.1f}  {min(samples):>6.1f}  {max(samples):>6.1f}")
    warm3 = statistics.median(next(s for n, m, s in rows if n == 3 and m == "warm"))
    print(f"goal: warm 3 nodes < 20 s: {'met' if warm3 < 20 else 'NOT met'} ({warm3:.1f} s)")


if __name__ == "__main__":
    main()
