"""`kill`: SIGKILL the broker (the JVM is the container's main process); `start`: start it
again with its disk as it was.

On a local engine the signal goes straight to the JVM's host pid (Docker's kill API takes
about 200 ms to return), and kill() returns once /proc shows the process dead; otherwise
through the API. wait_stopped() waits until Docker reports the container exited, which is
what anything touching the node's files or restarting it needs.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from docker.errors import APIError

from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.nemesis.docker_ops import container, wait_status

STOPPED = {"exited", "dead", "created"}


def _dead(pid: int) -> bool | None:
    """True when the process is gone or a zombie; None when /proc cannot tell (remote engine)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        return None
    return state in ("Z", "X")


def kill(node: KafkaNode, timeout_s: float = 30.0) -> None:
    c = container(node)
    if c.status == "paused":  # a frozen process cannot take a signal until thawed
        c.unpause()
    if c.status not in ("running", "paused", "restarting"):
        return
    pid = int(c.attrs["State"].get("Pid") or 0)
    try:
        if not pid or _dead(pid) is not False:
            raise ProcessLookupError
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            c.kill(signal="SIGKILL")
        except APIError as exc:
            # Docker's status lags the process: a JVM killed a moment ago (kill() returns once
            # /proc shows it dead) is still "running" to the engine, which then refuses to kill
            # a container that is not running (409). It is down: wait for Docker to say so.
            if exc.status_code != 409:
                raise
            wait_stopped(node, timeout_s)
            return
    deadline = time.monotonic() + timeout_s
    while pid and time.monotonic() < deadline:
        dead = _dead(pid)
        if dead is None:
            break
        if dead:
            return
        time.sleep(0.002)
    wait_stopped(node, timeout_s)


def running(node: KafkaNode) -> bool:
    """Whether the node's JVM runs (or is frozen) now: its container running or paused with a live
    main process. A container whose process was killed a moment ago reads "running" until Docker
    reaps it; False too when /proc cannot tell (a remote engine)."""
    c = container(node)
    if c.status not in ("running", "paused"):
        return False
    pid = int(c.attrs["State"].get("Pid") or 0)
    return bool(pid) and _dead(pid) is False


def wait_stopped(node: KafkaNode, timeout_s: float = 30.0) -> None:
    wait_status(node, STOPPED, timeout_s)


def start(node: KafkaNode) -> None:
    c = container(node)
    if c.status == "paused":
        c.unpause()
    elif c.status != "running":
        c.start()
    wait_status(node, {"running"})
