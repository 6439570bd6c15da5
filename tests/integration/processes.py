"""Starting a CLI subprocess as a terminal does, and stopping it the way a user does (Ctrl-C),
without the traps of signals and pipes.

A child inherits an ignored (or blocked) SIGINT, and Python then leaves it so: CI's third run
showed `up` still asleep in `cmd_up` 120 s after its Ctrl-C (its stack, dumped on SIGUSR1), and
the same test passes on an idle machine and in a fresh xdist worker, whose SIGINT is Python's
default handler. What in a busy worker came to ignore or block SIGINT is not known yet. A
terminal's Ctrl-C reaches a program whose SIGINT is the default, so `cli` starts the child so.

A subprocess whose stdout and stderr are pipes blocks once a pipe's buffer is full and nobody
reads it; waiting for it with `wait()` then never ends, more likely on a loaded machine, where
clients log more. `interrupt` reads both pipes while it waits, and if the process outlives the
wait it asks it for every thread's stack (the CLI dumps them on SIGUSR1) before killing it, so a
failure says where it hung. `kill_and_clean` leaves nothing behind for the next test's check.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import docker

from kafka_chaos.harness.cleanup import owned_by, remove

#: `run`'s options for one combined node: the quickest cluster a command-line test can start.
ONE_NODE = ["--nodes", "1", "--replication-factor", "1", "--min-insync-replicas", "1"]


def library_owner(cluster: str) -> subprocess.Popen:
    """A process that starts `cluster` (an expression building a KafkaCluster) through the Python
    API, not the CLI, prints its workdir once ready and waits to be killed: the owner a test
    SIGKILLs to leave what only a reaper or `clean` removes. Read its folder with `ready_line`."""
    script = "\n".join(
        [
            "import time",
            "from kafka_chaos.harness.cluster import KafkaCluster",
            f"cluster = {cluster}.start()",
            "print(cluster.workdir, flush=True)",
            "time.sleep(600)",
        ]
    )
    return subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ready_line(proc: subprocess.Popen) -> str:
    """The first stdout line, printed once the cluster is ready (`up`: the bootstrap servers;
    `library_owner`: its workdir); a process that ended first fails with its stderr."""
    line = proc.stdout.readline()
    assert line.strip(), proc.stderr.read() if proc.poll() is not None else ""
    return line.strip()


def _sigint_as_in_a_terminal() -> None:
    """In the child before it runs: SIGINT neither ignored nor blocked (both are inherited)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def cli(args: list[str], **popen: Any) -> subprocess.Popen:
    """`python -m kafka_chaos.frontends.cli ARGS` with both pipes, its SIGINT the default."""
    return subprocess.Popen(
        [sys.executable, "-m", "kafka_chaos.frontends.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_sigint_as_in_a_terminal,
        **popen,
    )


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


def kill_and_clean(client: docker.DockerClient, proc: subprocess.Popen) -> None:
    """A process a failed test left running: killed, and what it created removed."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate()
    remove(*owned_by(client, proc.pid))


def assert_a_live_owner_keeps_its_own(client: docker.DockerClient, live: subprocess.Popen) -> None:
    """What a clean-up left to `live`, a run whose owner still runs: its one container and its
    network, both still there; then `live` stops on Ctrl-C, as a run does (exit 130)."""
    containers, networks = owned_by(client, live.pid)
    assert len(containers) == 1 and len(networks) == 1
    code, _, err = interrupt(live, 120)
    assert code == 130, err


def parent_pid(pid: int) -> int | None:
    """The parent of process `pid` (/proc/PID/stat), or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])
