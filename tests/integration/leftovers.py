"""What a finished test may not leave behind, checked safely beside tests running in parallel.

`leftovers` (harness/cleanup.py) are the containers and networks whose creating process is gone.
A test that kills a run on purpose makes leftovers for a moment, until its `clean` removes them;
it holds `docker_lock(exclusive=True)` over that moment, and every check takes the lock shared,
so no other worker's check sees them. The lock file is shared by every pytest process (xdist
workers and concurrent sessions alike), as the Docker engine is.
"""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kafka_chaos.harness.cleanup import leftovers

LOCK = Path(tempfile.gettempdir()) / "kafka-chaos-tests.lock"


@contextmanager
def docker_lock(exclusive: bool = False) -> Iterator[None]:
    with open(LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def assert_no_leftovers(client) -> None:
    with docker_lock():
        containers, networks = leftovers(client)
    assert containers == [] and networks == [], f"left behind: {containers} {networks}"
