"""Reading a history file into Spark, with the format's rules for damaged input.

The file is parsed by Spark's JSON reader, never by Python, so the Python process holds no events.
`value` is read as Spark's VARIANT (parsed by the reader, whatever its shape: clients and the
nemesis give it different ones); tables.py reads the client shapes out of it. Rules from
../shared/history-format.md:
- a truncated (unparseable) last line is a warning, and the line is ignored;
- any other line that is not an event is bad input (BadHistory, exit 2);
- an empty history is not an error: it proves nothing (verdict "unknown").

A history is a local path or a URI Spark reads (`file://`, `hdfs://`, `s3a://`...): a cluster's
executors cannot read the driver's disk. A local file is prechecked before any JVM starts; a URI
is prechecked the same way once Spark is up, through Hadoop's file system API (the bytes of its
first and last lines only).
"""

from __future__ import annotations

import json
import re
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kafka_chaos.checkers.errors import BadHistory, first_line
from kafka_chaos.checkers.sql import in_list
from kafka_chaos.history import columns
from kafka_chaos.history.file import write_columnar_copy
from kafka_chaos.history.run_dir import HISTORY

CORRUPT = "_corrupt_record"
SCHEMA = T.StructType(
    [
        T.StructField("index", T.LongType()),
        T.StructField("time", T.LongType()),
        T.StructField("process", T.StringType()),  # a number or "nemesis"; the text of either
        T.StructField("type", T.StringType()),
        T.StructField("f", T.StringType()),
        T.StructField("value", T.VariantType()),  # parsed once, by the reader (Spark's VARIANT)
        T.StructField("error", T.StringType()),
        T.StructField("phase", T.StringType()),  # "final" on the final read's events (optional)
        T.StructField(CORRUPT, T.StringType()),
    ]
)
TYPES = ("invoke", "ok", "fail", "info")


#: A URI's scheme: what Spark (through Hadoop's file systems) reads, not a local path.
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_uri(path: str | Path) -> bool:
    return isinstance(path, str) and bool(URI.match(path))


def local_of(uri: str | Path) -> Path | None:
    """The local path of a `file:` URI (as Spark or the user writes it), None for any other."""
    text = str(uri)
    if not text.startswith("file:"):
        return None
    return Path(urllib.parse.unquote(urllib.parse.urlparse(text).path))


class Source(Protocol):
    """A history's bytes, as the precheck reads them: its size and any stretch of it."""

    name: str
    size: int

    def read(self, start: int, n: int) -> bytes: ...


@dataclass
class LocalFile:
    path: Path

    @property
    def name(self) -> str:
        return str(self.path)

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    def read(self, start: int, n: int) -> bytes:
        with open(self.path, "rb") as fh:
            fh.seek(start)
            return fh.read(n)


@dataclass
class HadoopFile:
    """A file at a URI, read through the JVM's Hadoop file system (whatever Spark reads)."""

    name: str
    size: int
    _fs: object
    _path: object
    _jvm: object

    def read(self, start: int, n: int) -> bytes:
        n = max(0, min(n, self.size - start))
        if not n:
            return b""
        stream = self._fs.open(self._path)
        try:
            stream.seek(start)
            # A byte[] returned by the JVM comes back as Python bytes (one copy, no per-byte calls).
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream, n))
        finally:
            stream.close()


def open_uri(spark: SparkSession, uri: str) -> HadoopFile:
    """The history at `uri`: the file, or a run directory's history.jsonl (BadHistory when none)."""
    sc = spark.sparkContext
    jvm = sc._jvm
    try:
        path = jvm.org.apache.hadoop.fs.Path(uri)
        fs = path.getFileSystem(sc._jsc.hadoopConfiguration())
        if not fs.exists(path):
            raise BadHistory(f"no history at {uri}")
        status = fs.getFileStatus(path)
        if status.isDirectory():
            path = jvm.org.apache.hadoop.fs.Path(path, HISTORY)
            if not fs.exists(path):
                raise BadHistory(f"no history at {path.toString()}")
            status = fs.getFileStatus(path)
    except BadHistory:
        raise
    except Exception as exc:  # a JVM error: no file system for the scheme, no access...
        raise BadHistory(f"cannot read {uri}: {first_line(exc)}") from None
    return HadoopFile(path.toString(), int(status.getLen()), fs, path, jvm)


@dataclass
class Loaded:
    events: DataFrame | None  # None when the check reads the history's columnar copy instead
    path: Path | str  # a local file, or the URI Spark read
    warnings: list[str] = field(default_factory=list)
    empty: bool = False


def resolve(path: str | Path) -> Path:
    """A run directory (its history.jsonl) or a history file."""
    p = Path(path)
    if p.is_dir():
        p = p / HISTORY
    if not p.exists():
        raise BadHistory(f"no history at {p}")
    if not p.is_file():
        raise BadHistory(f"{p} is not a file")
    return p


#: The longest line a history may have. An event is a few KB (a poll of 500 records is about 20 KB);
#: a longer line is some other file (a JSON array, a binary), refused before Spark starts.
MAX_LINE = 16 << 20
HEAD = 64 << 10


def precheck(path: Path | Source) -> None:
    """Refuse, in milliseconds and before any JVM starts, what is plainly not JSON Lines: a binary
    file, text that is not UTF-8, or a first or last line longer than MAX_LINE (a 100 MB JSON
    document on one line would otherwise cost Spark minutes to call corrupt)."""
    src = LocalFile(path) if isinstance(path, Path) else path
    size = src.size
    head = src.read(0, HEAD)
    if b"\0" in head:
        raise BadHistory(f"{src.name} is a binary file, not a history (JSON Lines)")
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut by the end of the chunk
            raise BadHistory(f"{src.name} is not UTF-8 text (byte {exc.start}): not a history") from None
    read, chunk = len(head), head
    while b"\n" not in chunk and read < min(size, MAX_LINE + 1):
        chunk = src.read(read, 1 << 20)
        if not chunk:
            break
        read += len(chunk)
    if b"\n" not in chunk and b"\n" not in head and size > MAX_LINE:
        raise BadHistory(f"{src.name}: line 1 is longer than {MAX_LINE >> 20} MiB: not a history (JSON Lines)")
    last_line(src)  # the same bound from the end


def last_line(path: Path | Source, chunk: int = 1 << 16) -> str:
    """The file's last non-empty line, read from the end (memory bounded by MAX_LINE)."""
    src = LocalFile(path) if isinstance(path, Path) else path
    parts: list[bytes] = []
    held = 0
    pos = src.size
    while pos > 0:
        start = max(0, pos - chunk)
        data = src.read(start, pos - start)
        pos = start
        if not parts:
            data = data.rstrip(b"\r\n")
            if not data:
                continue  # still in the trailing newlines
        cut = data.rfind(b"\n")
        parts.append(data[cut + 1 :])
        held += len(parts[-1])
        if held > MAX_LINE:
            too_long = f"the last line is longer than {MAX_LINE >> 20} MiB"
            raise BadHistory(f"{src.name}: {too_long}: not a history (JSON Lines)")
        if cut >= 0:
            break
    return b"".join(reversed(parts)).decode("utf-8", "replace")


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


#: Why a parsed row is not an event (null when it is one), as SQL: one round trip to the JVM
#: where column objects made dozens.
PROBLEM = f"""CASE
    WHEN `{CORRUPT}` IS NOT NULL THEN 'not a JSON event'
    WHEN `index` IS NULL THEN 'no integer index'
    WHEN `time` IS NULL THEN 'no integer time'
    WHEN process IS NULL THEN 'no process'
    WHEN NOT (`type` IN {in_list(TYPES)})
        THEN concat('type must be one of invoke/ok/fail/info, not ', coalesce(`type`, 'null'))
    WHEN f IS NULL THEN 'no f'
END"""
#: The problem, saying where: "event 7: no f", or "a line: not a JSON event: '{...'".
BAD = f"""CASE WHEN ({PROBLEM}) IS NOT NULL THEN concat(
    coalesce(concat('event ', CAST(`index` AS STRING)), 'a line'), ': ', {PROBLEM},
    coalesce(concat(': ', char(39), substring(trim(`{CORRUPT}`), 1, 80), char(39)), '')
) END"""


def load(spark: SparkSession, path: str | Path | HadoopFile) -> Loaded:
    """The events, parsed lazily: nothing runs until the check's first action, and the file is parsed once.

    Rows that are not events keep a `bad` message (the check reports the first as bad input);
    the truncated last line, when there is one, is left out with a warning.
    """
    p: Path | str
    if isinstance(path, HadoopFile):
        p, size, tail = path.name, path.size, last_line(path)
    else:
        p = resolve(path)
        size, tail = p.stat().st_size, last_line(p)
    if size == 0 or not tail.strip():
        empty = spark.createDataFrame([], T.StructType([*SCHEMA.fields[:-1], T.StructField("bad", T.StringType())]))
        return Loaded(empty, p, ["the history is empty"], True)
    reader = spark.read.schema(SCHEMA).option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT)
    raw = reader.json(str(p))
    warnings: list[str] = []
    if not _is_json_object(tail):
        warnings.append(f"the last line is truncated ({len(tail)} characters); it was ignored")
        raw = raw.where(F.col(CORRUPT).isNull() | (F.trim(F.col(CORRUPT)) != F.lit(tail.strip())))
    return Loaded(raw.selectExpr("*", f"{BAD} AS bad").drop(CORRUPT), p, warnings, False)


def columnar(spark: SparkSession, copy: Path) -> DataFrame:
    """The flat table (checkers/tables.py `flat`) read from a history's columnar copy
    (history/columns.py), with the copy's own schema: no JSON parsed, no event paired."""
    types = {"int64": T.LongType(), "string": T.StringType()}
    schema = T.StructType([T.StructField(name, types[kind]) for name, kind in columns.COLUMNS])
    return spark.read.schema(schema).parquet(str(copy))


@dataclass
class Copy:
    """What a check reads: the history's columnar copy (`path`), or its JSON (`path` None), and
    the progress line that says which and, for the JSON, why."""

    path: Path | None
    said: str


def copy_for(history: Path | str, size: int, remote: bool = False) -> Copy:
    """The history's current columnar copy (history/columns.py), written now when it is missing or
    stale, so that only the first check of a history parses its JSON in Python, and a later one reads
    no JSON at all. The JSON is read instead (as it always was) for a history at a URI (the copy is
    written beside a local file only), a folder the check may not write, a file at the copy's place
    that is no copy of this program's (never overwritten), and a history the copy does not take
    (bad input, a truncated last line, an empty file: the JSON path reports them). `remote`: the
    history was named by a URI (Spark reads it; `history` is then the name Hadoop gave it)."""
    as_json = f"check: reading {history} ({size / 1e6:.1f} MB) as JSON"
    if remote or is_uri(history):
        return Copy(None, f"{as_json}: a history at a URI gets no columnar copy")
    history = Path(history)
    copy = columns.current(history)
    if copy is not None:
        return Copy(copy, f"check: reading {copy}, the columnar copy of {history} ({_mb(copy)})")
    target = columns.copy_path(history)
    if target.exists() and columns.stamp_of(target) is None:
        return Copy(None, f"{as_json}: {target} is not a columnar copy of it, and is left alone")
    started = time.perf_counter()
    try:
        copy = write_columnar_copy(history)
    except OSError as exc:  # a folder the check may not write (EACCES, EROFS), a full disk
        return Copy(None, f"{as_json}: its columnar copy could not be written ({exc.strerror or exc})")
    if copy is None:
        return Copy(None, f"{as_json}: it is outside the shapes a columnar copy takes")
    took = time.perf_counter() - started
    return Copy(copy, f"check: wrote {copy}, the columnar copy of {history}, in {took:.1f} s ({_mb(copy)}); reading it")


def _mb(path: Path) -> str:
    return f"{path.stat().st_size / 1e6:.1f} MB"
