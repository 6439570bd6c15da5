import pytest

from kafka_chaos.harness.cleanup import find_by_label, remove_by_label
from kafka_chaos.harness.engine import docker_client
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
