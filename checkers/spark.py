"""The Spark session the checkers run on.

Local mode (`local[2]`, embedded in the pip package; it needs only a Java 17+ runtime) is the
default. Pass a `spark://host:port` master to run on a cluster when histories outgrow one machine.
The session is built once per Python process and reused: starting a JVM costs seconds.
"""

from __future__ import annotations

import atexit
import glob
import hashlib
import os
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from kafka_chaos.checkers.errors import BadHistory, first_line

DEFAULT_MASTER = "local[2]"
LOG4J = Path(__file__).with_name("log4j2.properties")


def _check_java() -> None:
    if _java() is None:
        raise BadHistory("no Java runtime: the checker runs on Spark, which needs Java 17 or later on PATH")


#: Below this many bytes of history the driver's JIT compiles with C1 only: a small check is over
#: before C2's optimized code would pay for its compile time (about 1 s of a cold check).
QUICK_JIT_BYTES = 64 << 20
#: Above it, C2 compiles fewer methods, later, and inlines less deeply: a fresh check's JIT is a
#: large part of its CPU, and most of what C2 compiled at its default thresholds was Spark's
#: planning, parsing and serialization code that one check runs too briefly to pay the compile
#: back (docs/measurements.md, 2026-11-25).
LATE_C2 = (
    "-XX:Tier4InvocationThreshold=40000 -XX:Tier4CompileThreshold=80000 -XX:Tier4BackEdgeThreshold=300000"
    " -XX:MaxInlineLevel=9 -XX:InlineSmallCode=1000"
)


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else shutil.which("java")
    return Path(found).resolve() if found else None


def class_archive() -> Path | None:
    """Where this machine's Spark driver keeps its class-data archive (JDK AppCDS), or None when
    it is turned off (KAFKA_CHAOS_SPARK_CDS=0).

    A cold JVM spends most of its first seconds loading and verifying Spark's classes; a dynamic
    archive of the classes one check loaded maps them in at the next start instead (the session
    starts in about 2 s instead of 5-6 s). The archive belongs to one JVM build and one set of
    Spark jars, so its name is a hash of both; a JVM that cannot use it ignores it.
    """
    if os.environ.get("KAFKA_CHAOS_SPARK_CDS", "1") == "0":
        return None
    java = _java()
    if java is None:
        return None
    import pyspark

    jars = sorted(glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "*.jar")))
    stat = java.stat()
    ident = "\n".join([str(java), str(stat.st_mtime_ns), pyspark.__version__, *map(os.path.basename, jars)])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kafka-chaos"
    return cache / f"spark-classes-{hashlib.sha256(ident.encode()).hexdigest()[:16]}.jsa"


def _archive_options(archive: Path | None) -> tuple[str, Path | None]:
    """The JVM option that uses the archive, or the one that writes it at exit (into a file of
    this process's own, moved into place by `_end_jvm`), and that file."""
    if archive is None:
        return "", None
    if archive.exists():
        return f"-XX:SharedArchiveFile={archive}", None
    archive.parent.mkdir(parents=True, exist_ok=True)
    for stale in archive.parent.glob("*.jsa.tmp-*"):  # a writer that was killed before it finished
        if time.time() - stale.stat().st_mtime > 600:
            stale.unlink(missing_ok=True)
    partial = archive.with_name(f"{archive.name}.tmp-{os.getpid()}")
    return f"-XX:ArchiveClassesAtExit={partial}", partial


#: From this many bytes of history on, the driver's default heap is LARGE_MEMORY, not MEMORY: the
#: cached table of a 10M-operation history (2.4 GB) no longer fits beside the work in 4 GB.
LARGE_BYTES = 1 << 30
MEMORY, LARGE_MEMORY = "4g", "8g"


def driver_memory(history_bytes: int | None) -> str:
    """The driver's heap: KAFKA_CHAOS_SPARK_MEMORY when set, else by the history's size."""
    default = LARGE_MEMORY if history_bytes is not None and history_bytes >= LARGE_BYTES else MEMORY
    return os.environ.get("KAFKA_CHAOS_SPARK_MEMORY", default)


def _settings(master: str, history_bytes: int | None = None) -> dict[str, str]:
    java_opts = f"-Dlog4j2.configurationFile={LOG4J.as_uri()}"
    # The parallel collector, not G1: G1's concurrent work and write barriers compete with Spark's
    # two task threads for this machine's two cores (docs/measurements.md, 2026-11-25).
    driver_opts = f"{java_opts} -XX:+UseParallelGC"
    if history_bytes is not None and history_bytes < QUICK_JIT_BYTES:
        driver_opts += " -XX:TieredStopAtLevel=1"
    else:
        driver_opts += f" {LATE_C2}"
    return {
        "spark.master": master,
        "spark.app.name": "kafka-chaos check",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.memory": driver_memory(history_bytes),
        "spark.driver.extraJavaOptions": driver_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.shuffle.partitions": "8",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
    }


def log_path() -> Path:
    return Path(tempfile.gettempdir()) / f"kafka-chaos-spark-{os.getpid()}.log"


def _launch_jvm(settings: dict[str, str], partial: Path | None = None, archive: Path | None = None) -> Path:
    """Start Spark's JVM with its own output in a file, not on the user's terminal.

    The JVM prints start-up chatter to stderr before any logging configuration applies ("Using
    incubator modules", "Setting default log level"); our progress lines are what the user should
    see. The file (returned) is named in the error when Spark does not start, and removed at exit.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    log = log_path()
    if SparkContext._gateway is not None:
        return log
    conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
    with open(log, "ab") as out:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": out, "stderr": out})
    SparkContext._ensure_initialized(gateway=gateway)
    atexit.register(lambda: log.unlink(missing_ok=True))
    atexit.register(_end_jvm, gateway.proc, partial, archive)
    return log


#: Whether this process checked a history of QUICK_JIT_BYTES or more (`tune` sets it): its JVM is
#: waited for at exit.
_large_check = False


def _end_jvm(proc, partial: Path | None, archive: Path | None) -> None:  # a subprocess.Popen
    """At exit, after a large check: stop Spark and wait for its JVM to end, so that the process
    ending means its JVM has ended too. Left alone, a large check's JVM goes on after Python's exit
    removing its shuffle and cache files, on the same cores as whatever the user runs next. After
    small checks the JVM is left to end alone: there is little to remove, and waiting would add
    about 1.3 s to a 1k check's command. The first JVM on a machine also writes the class archive
    as it exits: wait for it then too, and move the archive into place; every later check starts
    from it. A JVM that does not finish within a minute is left to end alone (and its partial
    archive to the next writer)."""
    writes_archive = partial is not None and archive is not None
    if not (_large_check or writes_archive):
        return
    try:
        SparkContext = sys.modules["pyspark"].SparkContext
        if SparkContext._active_spark_context is not None:
            SparkContext._active_spark_context.stop()
        proc.stdin.close()  # the gateway exits when its standard input ends
        proc.wait(timeout=60)
        if writes_archive and partial.exists() and partial.stat().st_size:
            os.replace(partial, archive)
    except Exception:  # never fail an exit for it
        pass


def session(master: str | None = None, history_bytes: int | None = None) -> SparkSession:
    """The shared session; a different master than the running session's is an error.

    `history_bytes`, when known before the JVM starts, picks its JIT: C1 only for a small history
    (QUICK_JIT_BYTES), both tiers for a large one."""
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
    settings = _settings(master, history_bytes)
    archive = class_archive()
    use_or_write, partial = _archive_options(archive)
    settings["spark.driver.extraJavaOptions"] += f" {use_or_write}".rstrip()
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        _launch_jvm(settings, partial, archive)
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM's failure is one line for the user
        raise BadHistory(f"Spark did not start on {master}: {first_line(exc)} (Spark's output: {log_path()})") from None
    spark.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        _ship_code(spark)
    return spark


def _ship_code(spark: SparkSession) -> None:
    """Send this package to a cluster's executors: the rules run in Python workers there, which
    need the checker's own modules (their Python needs pandas and pyarrow of its own)."""
    package = Path(__file__).resolve().parent
    archive = Path(tempfile.gettempdir()) / f"kafka-chaos-checkers-{os.getpid()}.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for source in sorted(package.glob("*.py")):  # as kafka_chaos/checkers/ (a namespace package)
            zf.write(source, f"kafka_chaos/checkers/{source.name}")
    spark.sparkContext.addPyFile(str(archive))
    atexit.register(lambda: archive.unlink(missing_ok=True))


_warmed: set[int] = set()


def warm_python(spark: SparkSession) -> None:
    """Start a Python worker, with the rules' imports, beside the check's first Spark action.

    The first action is the JVM's alone (JSON, the pairing window); the second is the per-key
    pass, whose first task would otherwise wait for Spark to start its Python daemon and a worker
    to import pandas, pyarrow and the rules (over a second on a fresh process). A tiny job on a
    thread of its own does that on the other core meanwhile; Spark keeps the worker for the
    pass. Once per session, and only in local mode (a cluster's executors start their own)."""
    sc = spark.sparkContext
    if id(sc) in _warmed or not sc.master.startswith("local"):
        return
    _warmed.add(id(sc))

    def run() -> None:
        from kafka_chaos.checkers.data_plane.per_key import warm

        try:
            spark.range(1).groupBy("id").applyInPandas(warm, "id long").collect()
        except Exception:  # an optimization: the pass starts its worker itself if this fails
            pass

    threading.Thread(target=run, name="kafka-chaos-warm-python", daemon=True).start()


def materialize(df: DataFrame) -> DataFrame:
    """Compute `df` now and cut its lineage.

    The rules share a handful of intermediate tables; with their full lineage the one query that
    unions all rules takes seconds just to plan. A local checkpoint keeps the rows (memory, then
    disk) and gives later queries a plan that starts from them.
    """
    return df.localCheckpoint(eager=True)


SMALL_BYTES = 4 << 20
#: Below this many bytes of history, expressions are interpreted, not compiled (see `tune`).
INTERPRETED_BYTES = 2 << 20


def tune(spark: SparkSession, history_bytes: int) -> None:
    """Settings for the input's size: a small history spends its time planning and compiling, not
    computing, so it gets one shuffle partition and no code generation; a large one gets both."""
    global _large_check
    _large_check = _large_check or history_bytes >= QUICK_JIT_BYTES
    small = history_bytes < SMALL_BYTES
    # Four shuffle partitions below QUICK_JIT_BYTES, not eight: less CPU at 100k operations, no
    # slower at 1M (docs/measurements.md, 2026-11-25).
    partitions = 1 if small else 4 if history_bytes < QUICK_JIT_BYTES else max(8, min(200, history_bytes // (64 << 20)))
    # The file is read in pieces of at most this many bytes: every core parses JSON from the first
    # stage on (Spark's default, 128 MB, reads a history of under 128 MB on one core).
    cores = spark.sparkContext.defaultParallelism
    piece = max(4 << 20, min(128 << 20, history_bytes // max(1, 2 * cores) + 1))
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(piece))
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    spark.conf.set("spark.sql.adaptive.enabled", str(not small).lower())
    spark.conf.set("spark.sql.codegen.wholeStage", str(not small).lower())
    # Without whole-stage code, Spark still compiles (Janino) a class for each projection, filter
    # and ordering of the plan, and a check's plan has more of them than its code cache keeps:
    # a small check compiled them again every time. Interpreted is faster for a small history and
    # slower for a large one (docs/measurements.md, 2026-11-25).
    interpreted = history_bytes < INTERPRETED_BYTES
    spark.conf.set("spark.sql.codegen.factoryMode", "NO_CODEGEN" if interpreted else "FALLBACK")
    # A value is parsed into a VARIANT by the JSON reader (checkers/load.py); an object with a key
    # twice keeps the last, as Python's json does, instead of making the whole event unreadable.
    # Set here, per check, so that a session the caller made (check_history's `session`) parses alike.
    spark.conf.set("spark.sql.variant.allowDuplicateKeys", "true")
    # The flat table is cached without compression: choosing a column's encoding looks every value
    # of a long or string column up in a boxed hash map (its dictionary encoder never gives up on
    # a 10,000-row batch), the largest single cost of building the cache (docs/measurements.md,
    # 2026-11-25).
    spark.conf.set("spark.sql.inMemoryColumnarStorage.compressed", "false")
