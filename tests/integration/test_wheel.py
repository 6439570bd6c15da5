"""kafka-chaos as a user installs it: a wheel (not an editable install) in a fresh virtualenv
outside the checkout, used from a directory of the user's own.

Everything the package reads (the image recipes, POM template and log configs) must travel in
the wheel as package data, and every module must come from under the one `kafka_chaos`
namespace: a wheel that found its recipes relative to the source tree failed here with
`FileNotFoundError: .../site-packages/docker/kafka/pom.xml.in`. The dependencies come from
PyPI (pip's cache after the first time); the image is the one the rest of the suite built.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from kafka_chaos.harness.versions import DEFAULT_VERSION
from tests.integration.leftovers import assert_no_leftovers

pytestmark = [pytest.mark.cluster, pytest.mark.spark, pytest.mark.slow, pytest.mark.timeout(1500)]

CHECKOUT = Path(__file__).resolve().parents[2]
NOT_SOURCE = (".git", ".venv", "store", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis")

USER_TESTS = """
import pytest


@pytest.mark.kafka(nodes=3)
def test_kills_are_survived(chaos_run):
    result = chaos_run(nemesis="kill", interval=4, time_limit=12, rate=200, concurrency=4, seed=5)
    assert result.valid is True
    assert result.faults["kill"] >= 1


@pytest.mark.kafka(nodes=1)
def test_a_started_cluster(kafka_cluster):
    kafka_cluster.create_topic("t", 1, 1)
"""


def _run(cmd: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    said = f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{said}"
    return proc


def test_the_wheel_installed_elsewhere_builds_images_runs_the_demo_and_the_plugin(tmp_path, docker_api):
    dist, env, user = tmp_path / "dist", tmp_path / "venv", tmp_path / "my-project"
    user.mkdir()
    # From a copy: building writes build/ into the source tree, and the checkout is not ours to litter.
    source = tmp_path / "source"
    shutil.copytree(CHECKOUT, source, ignore=shutil.ignore_patterns(*NOT_SOURCE))
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)], cwd=tmp_path)
    (wheel,) = dist.glob("kafka_chaos-*.whl")
    venv.create(env, with_pip=True)
    python, bin_ = env / "bin" / "python", env / "bin"
    _run([str(python), "-m", "pip", "install", "-q", str(wheel), "pytest==9.1.1"], cwd=user, timeout=1200)

    # Only the namespace is installed: no harness, checkers or docker of ours beside the Docker SDK.
    where = _run([str(python), "-c", PROBE], cwd=user).stdout.split()
    assert where[0].startswith(str(env)) and where[1] == "absent" and "/docker/" in where[2], where

    built = _run([str(bin_ / "kafka-chaos"), "images", "build", "--kafka", DEFAULT_VERSION], cwd=user)
    assert f"kafka-chaos/kafka:{DEFAULT_VERSION}" in built.stdout + built.stderr

    demo = _run([str(bin_ / "kafka-chaos"), "demo", "--records", "500"], cwd=user)
    assert demo.stdout.startswith(f"Kafka {DEFAULT_VERSION}") and "500" in demo.stdout, demo.stdout

    (user / "test_my_chaos.py").write_text(USER_TESTS)
    chaos = _run([str(bin_ / "pytest"), "-q", "-p", "no:cacheprovider", "--kafka-store", str(user / "store")], cwd=user)
    assert "2 passed" in chaos.stdout, chaos.stdout
    assert (user / "store").is_dir()
    assert_no_leftovers(docker_api)


PROBE = """
import importlib.util, kafka_chaos.frontends.cli as cli, docker
print(cli.__file__)
ours = [name for name in ("harness", "checkers", "nemesis", "workloads", "scenarios") if importlib.util.find_spec(name)]
print("present:" + ",".join(ours) if ours else "absent")
print(docker.__file__)
"""
