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
