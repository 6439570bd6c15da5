"""A Spark standalone master and its workers on 127.0.0.1, started from the `pyspark` package's own
classes (`spark-class ...deploy.master.Master` / `...deploy.worker.Worker`): the suite's cluster
(tests/checkers/test_spark_cluster.py) and the cluster bench's (bench/check_cluster.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyspark


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive_workers(ui: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as answer:
            return int(json.load(answer).get("aliveworkers", 0))
    except OSError:
        return 0


@contextlib.contextmanager
def cluster(work: Path, workers: int = 2, cores: int = 1, memory: str = "2g") -> Iterator[str]:
    """spark://127.0.0.1:PORT with `workers` workers of `cores` cores and `memory` each, logging to
    `work`/cluster.log; every process stopped after."""
    home = Path(pyspark.__file__).resolve().parent
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(work)}
    spark_class = str(home / "bin" / "spark-class")
    port, ui = _free_port(), _free_port()
    master = f"spark://127.0.0.1:{port}"
    commands = [["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port)]]
    commands[0] += ["--webui-port", str(ui)]
    for i in range(workers):
        commands.append(
            ["org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1", "--cores", str(cores)]
            + ["--memory", memory, "--webui-port", str(_free_port()), "--work-dir", str(work / f"w{i}")]
        )
    procs: list[subprocess.Popen] = []
    with open(work / "cluster.log", "ab") as log:
        try:
            for command in commands:
                procs.append(
                    subprocess.Popen(
                        [spark_class, *command], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                    )
                )
            deadline = time.monotonic() + 90
            while _alive_workers(ui) < workers:
                assert time.monotonic() < deadline, (work / "cluster.log").read_text()[-3000:]
                assert all(p.poll() is None for p in procs), (work / "cluster.log").read_text()[-3000:]
                time.sleep(0.5)
            yield master
        finally:
            for p in procs:
                os.killpg(p.pid, signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
