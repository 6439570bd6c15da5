from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from kafka_chaos.harness.cleanup import find_by_label, remove_by_label
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.harness.names import new_run_id
from kafka_chaos.harness.versions import DEFAULT_VERSION
from kafka_chaos.history.reporter import Reporter, silent
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.run import Run
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions
from tests.integration.leftovers import docker_lock


@pytest.fixture(scope="session")
def docker_api():
    """The engine, rid first of what dead runs left (a run killed in an earlier session would fail
    every check for leftovers in this one); live runs, other workers' included, are not touched."""
    client = docker_client()
    with docker_lock():
        remove_by_label(client)
    return client


@pytest.fixture
def assert_nothing_left(docker_api):
    """Call with a run id (or none: any run) after a cluster is gone: nothing of it may remain."""

    def check(run_id: str | None = None) -> None:
        containers, networks = find_by_label(docker_api, run_id)
        assert containers == [] and networks == [], f"left behind: {containers} {networks}"

    return check


class SharedCluster:
    """A module's one cluster for its fault-free runs, one after another: each run on it has its
    own topic, run id, group and transactional ids. A 3-node start is some 8 s of CPU, and these
    runs need no fresh cluster: faults have their own."""

    def __init__(self, spec: ClusterSpec, cluster: KafkaCluster) -> None:
        self.cluster_spec, self.cluster = spec, cluster

    def spec(self, opts: WorkloadOptions, store: Path, seed: int | None = None) -> RunSpec:
        """The run's spec, on a topic of its own."""
        return RunSpec(self.cluster_spec, replace(opts, topic=f"chaos-{new_run_id()}"), seed=seed, store=store)

    def job(self, opts: WorkloadOptions, store: Path, seed: int | None = None, reporter: Reporter = silent) -> Run:
        return Run(self.spec(opts, store, seed), reporter, cluster=self.cluster)

    def run(self, opts: WorkloadOptions, store: Path, seed: int | None = None) -> RunResult:
        return self.job(opts, store, seed).execute()


def serve_shared(spec: ClusterSpec, tmp_path_factory, cluster: KafkaCluster | None = None) -> Iterator[SharedCluster]:
    """A module fixture's body: `spec`'s cluster (or `cluster`, built from it with more settings)
    started in a folder of its own, yielded as a SharedCluster, removed after the module."""
    cluster = (cluster or spec.build()).with_workdir(tmp_path_factory.mktemp("shared-cluster"))
    with cluster.with_log(lambda m: None):
        yield SharedCluster(spec, cluster)


@pytest.fixture(scope="module")
def shared_cluster(docker_api, tmp_path_factory):
    """ClusterSpec(DEFAULT_VERSION), started once for the module. Put the module's tests in one
    xdist_group, or each worker that runs one starts its own."""
    yield from serve_shared(ClusterSpec(DEFAULT_VERSION), tmp_path_factory)
