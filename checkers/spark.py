"""The Spark session the checkers run on.

Local mode (`local[2]`, embedded in the pip package; it needs only a Java 17+ runtime) is the
default. Pass a `spark://host:port` master to run on a cluster when histories outgrow one machine.
The session is built once per Python process and reused: starting a JVM costs seconds.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from checkers.errors import BadHistory

DEFAULT_MASTER = "local[2]"
LOG4J = Path(__file__).with_name("log4j2.properties")


def _check_java() -> None:
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise BadHistory("no Java runtime: the checker runs on Spark, which needs Java 17 or later on PATH")


def session(master: str | None = None) -> SparkSession:
    """The shared session; a different master than the running session's is an error."""
    master = master or DEFAULT_MASTER
    active = SparkSession.getActiveSession()
    if active is not None:
        if active.sparkContext.master != master:
            raise BadHistory(f"a Spark session on {active.sparkContext.master} is already running in this process")
        return active
    _check_java()
    memory = os.environ.get("KAFKA_CHAOS_SPARK_MEMORY", "4g")
    java_opts = f"-Dlog4j2.configurationFile={LOG4J.as_uri()}"
    builder = (
        SparkSession.builder.master(master)
        .appName("kafka-chaos check")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", memory)
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
    )
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 (the JVM's failure is one line for the user)
        raise BadHistory(f"Spark did not start on {master}: {str(exc).splitlines()[0]}") from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def materialize(df: DataFrame) -> DataFrame:
    """Compute `df` now and cut its lineage.

    The rules share a handful of intermediate tables; with their full lineage the one query that
    unions all rules takes seconds just to plan. A local checkpoint keeps the rows (memory, then
    disk) and gives later queries a plan that starts from them.
    """
    return df.localCheckpoint(eager=True)


SMALL_BYTES = 4 << 20


def tune(spark: SparkSession, history_bytes: int) -> None:
    """Settings for the input's size: a small history spends its time planning and compiling, not
    computing, so it gets one shuffle partition and no code generation; a large one gets both."""
    small = history_bytes < SMALL_BYTES
    partitions = 1 if small else max(8, min(200, history_bytes // (64 << 20)))
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    spark.conf.set("spark.sql.adaptive.enabled", str(not small).lower())
    spark.conf.set("spark.sql.codegen.wholeStage", str(not small).lower())
