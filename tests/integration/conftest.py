import pytest

from harness.cleanup import MANAGED, RUN
from harness.engine import docker_client


@pytest.fixture(scope="session")
def docker_api():
    return docker_client()


def leftovers(client, run_id: str | None = None) -> tuple[list, list]:
    """Containers and networks that carry the project's label (of one run, or of any)."""
    selector = f"{RUN}={run_id}" if run_id else f"{MANAGED}=true"
    return (
        client.containers.list(all=True, filters={"label": selector}),
        client.networks.list(filters={"label": selector}),
    )


@pytest.fixture
def assert_nothing_left(docker_api):
    """Call with a run id after a cluster is gone: no container or network of it may remain."""

    def check(run_id: str | None = None) -> None:
        containers, networks = leftovers(docker_api, run_id)
        assert containers == [] and networks == [], f"left behind: {containers} {networks}"

    return check
