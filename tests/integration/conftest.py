import pytest

from harness.cleanup import find_by_label
from harness.engine import docker_client


@pytest.fixture(scope="session")
def docker_api():
    return docker_client()


@pytest.fixture
def assert_nothing_left(docker_api):
    """Call with a run id (or none: any run) after a cluster is gone: nothing of it may remain."""

    def check(run_id: str | None = None) -> None:
        containers, networks = find_by_label(docker_api, run_id)
        assert containers == [] and networks == [], f"left behind: {containers} {networks}"

    return check
