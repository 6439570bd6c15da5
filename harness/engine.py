"""The Docker engine: find one, or start the installed one, or say what to do.

CI machines here start with no engine running. Debian's `docker.io` package (installed by the
project's set-up script) provides `dockerd`; as root the harness starts it in the background.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import docker
from docker.errors import DockerException

from kafka_chaos.harness.errors import UsageError

DOCKERD_LOG = Path("/var/log/kafka-chaos-dockerd.log")


def _ping() -> docker.DockerClient | None:
    try:
        client = docker.from_env(timeout=120)
        client.ping()
        return client
    except (DockerException, OSError):
        return None


def docker_client(start: bool = True, wait_s: float = 60.0) -> docker.DockerClient:
    """A client of a running engine; starts the installed `dockerd` when allowed and possible."""
    client = _ping()
    if client is not None:
        return client
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    dockerd = shutil.which("dockerd")
    if not start or os.environ.get("DOCKER_HOST") or os.geteuid() != 0 or dockerd is None:
        hint = (
            "install Docker (as root on Debian: apt-get install docker.io) and start it"
            if dockerd is None
            else "start it (as root: dockerd &, or systemctl start docker)"
        )
        raise UsageError(f"no Docker engine reachable at {where}: {hint}")
    with open(DOCKERD_LOG, "ab") as log:
        subprocess.Popen([dockerd], stdout=log, stderr=log, start_new_session=True)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        client = _ping()
        if client is not None:
            return client
        time.sleep(0.5)
    raise UsageError(f"started {dockerd} but no engine answered within {wait_s:.0f} s; see {DOCKERD_LOG}")
