"""What a finished test may not leave behind, checked safely beside tests running in parallel.

`leftovers` (harness/cleanup.py) are the containers and networks whose creating process is gone.
A test that kills a run on purpose makes leftovers for a moment, until its `clean` removes them;
it holds `docker_lock(exclusive=True)` over that moment, and every check takes the lock shared,
so no other worker's check sees them. The lock is the harness's own REAP_LOCK
(harness/cleanup.py), which every cluster's start takes shared to reap what dead owners left:
so no other worker's start reaps them either. It is shared by every pytest process (xdist
workers and concurrent sessions alike), as the Docker engine is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kafka_chaos.harness.cleanup import leftovers, reap_lock


@contextmanager
def docker_lock(exclusive: bool = False) -> Iterator[None]:
    with reap_lock(exclusive):
        yield


def assert_no_leftovers(client) -> None:
    with docker_lock():
        containers, networks = leftovers(client)
    assert containers == [] and networks == [], f"left behind: {containers} {networks}"
