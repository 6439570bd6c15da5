"""Reading a history file into Spark, with the format's rules for damaged input.

The file is parsed by Spark's JSON reader, never by Python, so the Python process holds no events.
`value` is kept as raw JSON text here: clients and the nemesis give it different shapes, and
tables.py parses the client shapes. Rules from ../shared/history-format.md:
- a truncated (unparseable) last line is a warning, and the line is ignored;
- any other line that is not an event is bad input (BadHistory, exit 2);
- an empty history is not an error: it proves nothing (verdict "unknown").
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from checkers.errors import BadHistory

CORRUPT = "_corrupt_record"
SCHEMA = T.StructType(
    [
        T.StructField("index", T.LongType()),
        T.StructField("time", T.LongType()),
        T.StructField("process", T.StringType()),  # a number or "nemesis"; the text of either
        T.StructField("type", T.StringType()),
        T.StructField("f", T.StringType()),
        T.StructField("value", T.StringType()),  # raw JSON text
        T.StructField("error", T.StringType()),
        T.StructField("phase", T.StringType()),  # "final" on the final read's events (optional)
        T.StructField(CORRUPT, T.StringType()),
    ]
)
TYPES = ("invoke", "ok", "fail", "info")


@dataclass
class Loaded:
    events: DataFrame
    path: Path
    warnings: list[str] = field(default_factory=list)
    empty: bool = False


def resolve(path: str | Path) -> Path:
    """A run directory (its history.jsonl) or a history file."""
    p = Path(path)
    if p.is_dir():
        p = p / "history.jsonl"
    if not p.exists():
        raise BadHistory(f"no history at {p}")
    if not p.is_file():
        raise BadHistory(f"{p} is not a file")
    return p


#: The longest line a history may have. An event is a few KB (a poll of 500 records is about 20 KB);
#: a longer line is some other file (a JSON array, a binary), refused before Spark starts.
MAX_LINE = 16 << 20
HEAD = 64 << 10


def precheck(path: Path) -> None:
    """Refuse, in milliseconds and before any JVM starts, what is plainly not JSON Lines: a binary
    file, text that is not UTF-8, or a first or last line longer than MAX_LINE (a 100 MB JSON
    document on one line would otherwise cost Spark minutes to call corrupt)."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(HEAD)
        if b"\0" in head:
            raise BadHistory(f"{path} is a binary file, not a history (JSON Lines)")
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if exc.start < len(head) - 3:  # not merely a character cut by the end of the chunk
                raise BadHistory(f"{path} is not UTF-8 text (byte {exc.start}): not a history") from None
        read = len(head)
        while b"\n" not in head and read < min(size, MAX_LINE + 1):
            head = fh.read(1 << 20)
            read += len(head)
        if b"\n" not in head and size > MAX_LINE:
            raise BadHistory(f"{path}: line 1 is longer than {MAX_LINE >> 20} MiB: not a history (JSON Lines)")
    last_line(path)  # the same bound from the end


def last_line(path: Path, chunk: int = 1 << 16) -> str:
    """The file's last non-empty line, read from the end (memory bounded by MAX_LINE)."""
    parts: list[bytes] = []
    held = 0
    with open(path, "rb") as fh:
        pos = fh.seek(0, os.SEEK_END)
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            data = fh.read(pos - start)
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
                raise BadHistory(f"{path}: {too_long}: not a history (JSON Lines)")
            if cut >= 0:
                break
    return b"".join(reversed(parts)).decode("utf-8", "replace")


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _problem(col_text: str) -> F.Column:
    """Why a parsed row is not an event (null when it is one)."""
    return (
        F.when(F.col(CORRUPT).isNotNull(), F.lit("not a JSON event"))
        .when(F.col("index").isNull(), F.lit("no integer index"))
        .when(F.col("time").isNull(), F.lit("no integer time"))
        .when(F.col("process").isNull(), F.lit("no process"))
        .when(~F.col("type").isin(*TYPES), F.concat(F.lit("type must be one of invoke/ok/fail/info, not "), col_text))
        .when(F.col("f").isNull(), F.lit("no f"))
    )


def load(spark: SparkSession, path: str | Path) -> Loaded:
    """The events, parsed lazily: nothing runs until tables.build, so the file is parsed once.

    Rows that are not events keep a `bad` message (tables.build reports the first as bad input);
    the truncated last line, when there is one, is left out with a warning.
    """
    p = resolve(path)
    tail = last_line(p)
    if p.stat().st_size == 0 or not tail.strip():
        empty = spark.createDataFrame([], T.StructType([*SCHEMA.fields[:-1], T.StructField("bad", T.StringType())]))
        return Loaded(empty, p, ["the history is empty"], True)
    raw = (
        spark.read.schema(SCHEMA).option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", CORRUPT).json(str(p))
    )
    warnings: list[str] = []
    if not _is_json_object(tail):
        warnings.append(f"the last line is truncated ({len(tail)} characters); it was ignored")
        raw = raw.where(F.col(CORRUPT).isNull() | (F.trim(F.col(CORRUPT)) != F.lit(tail.strip())))
    problem = _problem(F.coalesce(F.col("type"), F.lit("null")))
    where = F.coalesce(F.concat(F.lit("event "), F.col("index").cast("string")), F.lit("a line"))
    text = F.substring(F.trim(F.col(CORRUPT)), 1, 80)
    bad = F.when(
        problem.isNotNull(),
        F.concat(where, F.lit(": "), problem, F.coalesce(F.concat(F.lit(": '"), text, F.lit("'")), F.lit(""))),
    )
    return Loaded(raw.withColumn("bad", bad).drop(CORRUPT), p, warnings, False)
