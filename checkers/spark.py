"""The Spark session the checkers run on.

Local mode (`local[2]`, embedded in the pip package; it needs only a Java 17+ runtime) is the
default. Pass a `spark://host:port` master to run on a cluster when histories outgrow one machine.
The session is built once per Python process and reused: starting a JVM costs seconds.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from checkers.errors import BadHistory

DEFAULT_MASTER = "local[2]"
LOG4J = Path(__file__).with_name("log4j2.properties")


def _check_java() -> None:
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise BadHistory("no Java runtime: the checker runs on Spark, which needs Java 17 or later on PATH")


def _settings(master: str) -> dict[str, str]:
    java_opts = f"-Dlog4j2.configurationFile={LOG4J.as_uri()}"
    return {
        "spark.master": master,
        "spark.app.name": "kafka-chaos check",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": os.environ.get("KAFKA_CHAOS_SPARK_MEMORY", "4g"),
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
    }


def _jvm_log() -> Path:
    return Path(tempfile.gettempdir()) / f"kafka-chaos-spark-{os.getpid()}.log"


def _launch_jvm(settings: dict[str, str]) -> Path:
    """Start Spark's JVM with its own output in a file, not on the user's terminal.

    The JVM prints start-up chatter to stderr before any logging configuration applies ("Using
    incubator modules", "Setting default log level"); our progress lines are what the user should
    see. The file (returned) is named in the error when Spark does not start, and removed at exit.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    log = _jvm_log()
    if SparkContext._gateway is not None:
        return log
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    with open(log, "ab") as out:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": out, "stderr": out})
    SparkContext._ensure_initialized(gateway=gateway)
    atexit.register(lambda: log.unlink(missing_ok=True))
    return log


def session(master: str | None = None) -> SparkSession:
    """The shared session; a different master than the running session's is an error."""
    master = master or DEFAULT_MASTER
    active = SparkSession.getActiveSession()
    if active is not None:
        if active.sparkContext.master != master:
            raise BadHistory(f"a Spark session on {active.sparkContext.master} is already running in this process")
        return active
    _check_java()
    # The rules run in Python workers (applyInPandas): this interpreter, with its packages, unless
    # the user names another (PYSPARK_PYTHON, as Spark documents for clusters).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    settings = _settings(master)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        _launch_jvm(settings)
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 (the JVM's failure is one line for the user)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise BadHistory(f"Spark did not start on {master}: {first} (Spark's output: {_jvm_log()})") from None
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
