"""One Spark session for all checker tests (starting a JVM costs seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_chaos.checkers import spark
from kafka_chaos.checkers.check import CheckResult, check_history
from tests.checkers.builder import History


@pytest.fixture(scope="session")
def spark_session():
    return spark.session()


@pytest.fixture
def check(spark_session, tmp_path: Path):
    """check(history) -> CheckResult, results.json in a fresh directory (no report unless asked)."""
    counter = iter(range(1_000_000))

    def run(history: History | Path, report: bool = False) -> CheckResult:
        n = next(counter)
        path = history if isinstance(history, Path) else history.write(tmp_path / f"history-{n}.jsonl")
        return check_history(path, tmp_path / f"out-{n}", report=report, session=spark_session)

    return run
