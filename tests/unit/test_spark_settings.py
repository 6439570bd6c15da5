"""The Spark driver's settings for a history's size (checkers/spark.py): pure logic, no JVM."""

from __future__ import annotations

import pytest

from kafka_chaos.checkers import spark


@pytest.mark.parametrize(
    "size, heap",
    [
        (None, spark.MEMORY),
        (0, spark.MEMORY),
        (spark.LARGE_BYTES - 1, spark.MEMORY),
        (spark.LARGE_BYTES, spark.LARGE_MEMORY),
    ],
)
def test_the_heap_grows_for_a_large_history(monkeypatch, size, heap):
    monkeypatch.delenv("KAFKA_CHAOS_SPARK_MEMORY", raising=False)
    assert spark._settings("local[2]", size)["spark.driver.memory"] == heap


def test_the_users_heap_wins_at_any_size(monkeypatch):
    monkeypatch.setenv("KAFKA_CHAOS_SPARK_MEMORY", "3g")
    assert spark._settings("local[2]", spark.LARGE_BYTES)["spark.driver.memory"] == "3g"


def test_the_driver_runs_the_parallel_collector_and_c1_only_for_a_small_history():
    small = spark._settings("local[2]", 1 << 20)["spark.driver.extraJavaOptions"].split()
    large = spark._settings("local[2]", spark.QUICK_JIT_BYTES)["spark.driver.extraJavaOptions"].split()
    assert "-XX:+UseParallelGC" in small and "-XX:+UseParallelGC" in large
    assert "-XX:TieredStopAtLevel=1" in small and "-XX:TieredStopAtLevel=1" not in large


@pytest.mark.parametrize("size", [None, spark.QUICK_JIT_BYTES, spark.LARGE_BYTES])
def test_c2_starts_late_where_both_tiers_run(size):
    opts = spark._settings("local[2]", size)["spark.driver.extraJavaOptions"].split()
    assert set(spark.LATE_C2.split()) <= set(opts)


def test_a_small_history_has_no_c2_thresholds():
    opts = spark._settings("local[2]", spark.QUICK_JIT_BYTES - 1)["spark.driver.extraJavaOptions"]
    assert "Tier4" not in opts and "MaxInlineLevel" not in opts


@pytest.fixture(autouse=True)
def no_active_context(monkeypatch):
    """`_end_jvm` stops the process's active Spark context: here it must find none, not the one
    this worker's other tests check their histories on (tests/conftest.py starts it first)."""
    import pyspark

    monkeypatch.setattr(pyspark.SparkContext, "_active_spark_context", None)


class _Jvm:
    """A stand-in for the gateway's subprocess: records what `_end_jvm` asked of it."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.stdin = self

    def close(self) -> None:
        self.calls.append("close")

    def wait(self, timeout: float) -> int:
        self.calls.append("wait")
        return 0


@pytest.mark.parametrize("large, waited", [(False, []), (True, ["close", "wait"])])
def test_the_jvm_is_waited_for_at_exit_only_after_a_large_check(monkeypatch, large, waited):
    monkeypatch.setattr(spark, "_large_check", large)
    jvm = _Jvm()
    spark._end_jvm(jvm, None, None)
    assert jvm.calls == waited


def test_the_first_jvm_is_waited_for_to_write_the_class_archive(monkeypatch, tmp_path):
    monkeypatch.setattr(spark, "_large_check", False)
    partial, archive = tmp_path / "partial.jsa", tmp_path / "archive.jsa"
    partial.write_bytes(b"classes")
    jvm = _Jvm()
    spark._end_jvm(jvm, partial, archive)
    assert jvm.calls == ["close", "wait"] and archive.read_bytes() == b"classes" and not partial.exists()
