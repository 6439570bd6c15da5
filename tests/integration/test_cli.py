"""The command line against a real engine: Ctrl-C, killed runs, versions with no artifacts."""

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from kafka_chaos.harness.cleanup import leftovers, owned_by
from tests.integration.leftovers import assert_no_leftovers, docker_lock
from tests.integration.processes import (
    assert_a_live_owner_keeps_its_own,
    cli,
    interrupt,
    kill_and_clean,
    library_owner,
    ready_line,
)

pytestmark = pytest.mark.cluster
CLI = [sys.executable, "-m", "kafka_chaos.frontends.cli"]


def start_up(*args: str) -> subprocess.Popen:
    return cli(["up", "--nodes", "1", *args])


def wait_for_bootstrap(proc: subprocess.Popen, timeout_s: float = 180) -> str:
    """The first stdout line of `up` is the bootstrap servers."""
    deadline = time.monotonic() + timeout_s
    line = proc.stdout.readline()
    assert time.monotonic() < deadline
    assert line.startswith("127.0.0.1:"), (line, proc.stderr.read() if proc.poll() is not None else "")
    return line.strip()


def test_up_prints_bootstrap_and_ctrl_c_removes_everything(docker_api, tmp_path):
    proc = start_up("--workdir", str(tmp_path))
    try:
        bootstrap = wait_for_bootstrap(proc)
        containers, networks = owned_by(docker_api, proc.pid)
        assert len(containers) == 1 and len(networks) == 1
        code, _, err = interrupt(proc, 120)
        assert code == 130, err
    finally:
        kill_and_clean(docker_api, proc)
    assert_no_leftovers(docker_api)
    assert bootstrap.count(",") == 0
    assert (tmp_path / "kafka-1" / "logs" / "server.log").is_file()


def test_clean_removes_what_a_killed_run_left_and_not_a_live_run(docker_api, tmp_path):
    killed = library_owner("KafkaCluster().with_nodes(1)")  # no workdir: a temporary one
    live = start_up("--workdir", str(tmp_path / "live"))
    try:
        workdir = Path(ready_line(killed))
        assert workdir.is_dir() and workdir.is_relative_to(tempfile.gettempdir()), workdir
        wait_for_bootstrap(live)
        with docker_lock(exclusive=True):  # no other test's check may see the leftovers meanwhile
            killed.kill()  # SIGKILL: no chance to clean up
            killed.wait(timeout=30)
            containers, networks = owned_by(docker_api, killed.pid)
            assert len(containers) == 1 and len(networks) == 1
            assert (containers, networks) == leftovers(docker_api)
            out = subprocess.run([*CLI, "clean"], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "removed 1 container(s) and 1 network(s), 1 temporary workdir(s)" in out.stdout
        assert not workdir.exists()
        assert owned_by(docker_api, killed.pid) == ([], [])
        assert_a_live_owner_keeps_its_own(docker_api, live)  # its owner runs: not a leftover
    finally:
        for proc in (killed, live):
            kill_and_clean(docker_api, proc)
    assert owned_by(docker_api, live.pid) == ([], [])


def test_version_with_no_artifacts_is_bad_input(docker_api):
    # 3.4.9 was never released: Maven finds no kafka_2.13 of that version.
    env = {**os.environ, "KAFKA_CHAOS_OFFLINE": "1"}
    out = subprocess.run([*CLI, "up", "--kafka", "3.4.9"], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 2, out.stderr
    errors = [line for line in out.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Kafka 3.4.9 has no complete set of artifacts" in errors[0], out.stderr
    assert_no_leftovers(docker_api)


def test_port_in_use_is_bad_input(docker_api):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([*CLI, "up", "--port-base", str(port)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert f"port 127.0.0.1:{port} is in use" in out.stderr
    assert_no_leftovers(docker_api)
