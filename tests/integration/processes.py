"""Stopping a CLI subprocess the way a user does (Ctrl-C), without the traps of pipes.

A subprocess whose stdout and stderr are pipes blocks once a pipe's buffer is full and nobody
reads it; waiting for it with `wait()` then never ends, more likely on a loaded machine, where
clients log more. `interrupt` reads both pipes while it waits, and if the process outlives the
wait it asks it for every thread's stack (the CLI dumps them on SIGUSR1) before killing it, so a
failure says where it hung. `kill_and_clean` leaves nothing behind for the next test's check.
"""

from __future__ import annotations

import signal
import subprocess
import time

from kafka_chaos.harness.cleanup import owned_by, remove_container


def interrupt(proc: subprocess.Popen, timeout_s: float) -> tuple[int, str, str]:
    """SIGINT, then (exit code, the rest of stdout, the rest of stderr); AssertionError with the
    process's thread stacks when it is still running after `timeout_s`."""
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGUSR1)  # frontends/cli.py: faulthandler prints every thread's stack
        time.sleep(2)
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"still running {timeout_s:g} s after Ctrl-C; its stderr ends:\n{err[-6000:]}") from None
    return proc.returncode, out or "", err or ""


def kill_and_clean(client, proc: subprocess.Popen) -> None:  # noqa: ANN001 (a docker.DockerClient)
    """A process a failed test left running: killed, and what it created removed."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate()
    containers, networks = owned_by(client, proc.pid)
    for container in containers:
        remove_container(container)
    for network in networks:
        network.remove()
