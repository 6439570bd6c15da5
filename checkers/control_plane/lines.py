"""The control-plane evidence's JSON lines as Spark reads them, and the evidence that reading them
shows to be short: a rule checked on less than it needs is not checked (../shared/anomalies.md,
"Control plane"), so what is short here is a gap, beside the run's own (control-plane/gaps.json).

- A malformed line (not JSON, not an object, or without the fields that place it: a view's time
  and node, a sample's time, a record's offset) is kept from the rules and counted; a kind of
  evidence that lost any says how many, per file. A truncated last line, with no newline after
  it, is not counted: the file of a run that died half way, or one still being appended, ends so
  (history-format.md tolerates it in the history). A blank line is no evidence and no loss.
- A node none of whose quorum views could be read (each an `error`) is a views gap for that node:
  the rules that read the views would see the quorum without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import reduce
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from kafka_chaos.checkers.control_plane.rules import METADATA, REPLICATION, VIEWS

#: Per kind of evidence, the fields without which a line places nothing.
REQUIRED = {VIEWS: ("time", "node"), REPLICATION: ("time",), METADATA: ("offset",)}
#: How much of a file's end is read to find its last line.
TAIL_BYTES = 1 << 16


def read(
    ops: DataFrame, paths: list[Path], schema: str, kind: str, node_from_file: bool = False
) -> tuple[DataFrame, DataFrame]:
    """The well-formed lines of `paths`, parsed (`node`: the file's name, a metadata log's alias),
    and the malformed ones counted per file (`kind`, `file`, `n`; `dropped` reads them)."""
    text = ops.sparkSession.read.text([str(p) for p in paths])
    parsed = text.where("trim(value) != ''").select(
        F.from_json("value", schema).alias("r"), F.col("_metadata.file_name").alias("file")
    )
    placed = " AND ".join(f"r.`{name}` IS NOT NULL" for name in REQUIRED[kind])
    good = parsed.where(placed)
    cols = ["r.*"]
    if node_from_file:
        good = good.withColumn("node", F.regexp_extract("file", r"^(.+)\.jsonl$", 1))
        cols.append("node")
    bad = (
        parsed.where(f"NOT coalesce({placed}, false)")
        .groupBy("file")
        .agg(F.count("*").alias("n"))
        .select(F.lit(kind).alias("kind"), "file", "n")
    )
    return good.select(*cols), bad


def union(counts: list[DataFrame]) -> DataFrame:
    """The malformed lines of every kind, in one query (checkers/parts.py collects it)."""
    return reduce(DataFrame.unionByName, counts)


def _places(line: str, kind: str) -> bool:
    """Whether a line is one `read` keeps (Python's reading of the same test)."""
    try:
        data = json.loads(line)
    except ValueError:
        return False
    return isinstance(data, dict) and all(data.get(name) is not None for name in REQUIRED[kind])


def truncated_tail(path: Path, kind: str) -> bool:
    """Whether `path` ends in a line cut short (no newline after it) that `read` counted malformed."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - TAIL_BYTES))
            tail = f.read()
    except OSError:
        return False
    if not tail or tail.endswith(b"\n"):
        return False
    last = tail.rsplit(b"\n", 1)[-1].decode(errors="replace")
    return bool(last.strip()) and not _places(last, kind)


def dropped(rows: list[dict[str, Any]], paths: dict[str, list[Path]]) -> dict[str, str]:
    """Each kind whose files lost malformed lines (`read`'s counts) -> why, file by file, less each
    file's truncated last line; `paths`: each kind's files, by which a count's file is found."""
    out: dict[str, list[str]] = {}
    for row in sorted(rows, key=lambda r: (r["kind"], r["file"])):
        kind, name, n = row["kind"], row["file"], int(row["n"])
        path = next((p for p in paths.get(kind, []) if p.name == name), None)
        if path is not None and truncated_tail(path, kind):
            n -= 1
        if n > 0:
            out.setdefault(kind, []).append(f"{name}: {n} malformed line{'s' if n > 1 else ''} dropped")
    return {kind: "; ".join(whys) for kind, whys in out.items()}


def unread_nodes(views: list[dict[str, Any]], nodes: Iterable[str]) -> str | None:
    """Why the views miss a node (None: every node has a readable view): the nodes of nodes.json,
    and any other the views name, none of whose views could be read."""
    errors: dict[str, list[str]] = {}
    readable: set[str] = set()
    for v in sorted(views, key=lambda v: v["time"]):
        if v["error"] is None:
            readable.add(v["node"])
        else:
            errors.setdefault(v["node"], []).append(str(v["error"]))
    missing = []
    for node in sorted({*nodes, *errors} - readable):
        said = errors.get(node)
        missing.append(f"no readable quorum view of {node}" + (f" (its last: {said[-1]})" if said else ""))
    return "; ".join(missing) or None


def gaps(
    given: dict[str, str],
    got: dict[str, list[dict[str, Any]]],
    paths: dict[str, list[Path]],
    nodes: Iterable[str],
) -> dict[str, str]:
    """The run's own gaps (`given`, gaps.json) with those the lines show: malformed lines dropped
    (`dropped`) and nodes without a readable view (`unread_nodes`, when the views were sampled)."""
    found = dropped(got.get("cp_malformed", []), paths)
    if "cp_views" in got:
        unread = unread_nodes(got["cp_views"], nodes)
        if unread:
            found[VIEWS] = f"{found[VIEWS]}; {unread}" if VIEWS in found else unread
    out = dict(given)
    for kind, why in found.items():
        out[kind] = f"{out[kind]}; {why}" if kind in out else why
    return out
