"""The history's columnar copy (history/columns.py) against the checker's JSON path.

The copy must hold exactly the rows checkers/tables.py builds from the JSON, and a check of the copy
must say exactly what a check of the JSON says. Both paths live while the copy is new: these tests
hold them equal on every hand-made case of the anomaly table, a share run, a control-plane run's
nemesis and a concurrent transactional history.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from kafka_chaos.checkers import load, tables
from kafka_chaos.checkers.check import check_history
from kafka_chaos.history import columns
from kafka_chaos.history.file import write_columnar_copy
from tests.checkers.builder import History
from tests.checkers.concurrent_txns import generate
from tests.checkers.histories import CASES

pytestmark = pytest.mark.spark

BUILDERS = list(dict.fromkeys(build for cases in CASES.values() for build, _ in cases))


def _rows(df) -> list[tuple]:
    names = df.columns
    out = []
    for r in df.collect():
        d = r.asDict()
        if d["nvalue"] is not None:  # JSON text: equal when it says the same
            d["nvalue"] = json.loads(d["nvalue"])
        out.append(tuple(json.dumps(d[n], sort_keys=True) for n in names))
    return sorted(out)


def _from_json(spark, path: Path):
    return tables.flat(tables.pair(load.load(spark, path).events))


def _nemesis_history() -> History:
    h = History()
    h.assign(0, ["t/0"])
    h.send(1, "t/0", [(1, 0), (2, 1)])
    h.nemesis("kill", ["kafka-1"])
    h.nemesis("start", ["kafka-1"])
    h.op(0, "commit", {"t/0": 2}, {"t/0": 2})
    h.poll(0, {"t/0": [(0, 1), (1, 2)]})
    h.invoke(2, "send", [["send", "t/0", 3]])  # left open: info, no completion
    return h


def _share_history() -> History:
    h = History()
    h.send(1, "t/0", [(1, 0), (2, 1)])
    h.share_poll(0, {"t/0": [(0, 1, 1), (1, 2, 1)]})
    h.share_ack(0, {"t/0": [(0, "accept"), (1, "release")]})
    h.share_poll(2, {"t/0": [(1, 2, 2)]})
    h.share_ack(2, {"t/0": [(1, "reject")]}, outcome="timeout")
    h.share_offsets({"t/0": 2})
    return h


def _one_history(histories: list[list[dict]]) -> list[dict]:
    """The histories one after another as one history: each one's processes renamed apart
    ("<i>.<process>"; the nemesis stays the nemesis), its events numbered on. Every shape of every
    history is in it, and one Spark job reads it."""
    out: list[dict] = []
    for i, events in enumerate(histories):
        for e in events:
            p = e["process"]
            out.append({**e, "index": len(out), "process": p if p == "nemesis" else f"{i}.{p}"})
    return out


def test_the_copy_holds_the_rows_the_checker_builds_from_the_json(spark_session, tmp_path: Path):
    built = [b(bad).events for b in BUILDERS for bad in (False, True)]
    txns = tmp_path / "txns.jsonl"
    generate(txns, 300, 4, 4)
    built += [_nemesis_history().events, _share_history().events]
    built.append([json.loads(line) for line in txns.read_text().splitlines()])
    path = tmp_path / "history.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in _one_history(built)), encoding="utf-8")
    copy = write_columnar_copy(path)
    assert copy is not None
    from_copy, from_json = load.columnar(spark_session, copy), _from_json(spark_session, path)
    assert _rows(from_copy) == _rows(from_json)
    # One spelling of the columns, their types and the rows' kinds (history/columns.py) for both.
    spark_types = {"int64": "bigint", "string": "string"}
    schema = [(name, spark_types[kind]) for name, kind in columns.COLUMNS]
    for df in (from_copy, from_json):
        assert [(f.name, f.dataType.simpleString()) for f in df.schema.fields] == schema
    kinds = {v for k, v in vars(columns.Kind).items() if not k.startswith("_")}
    assert {r.kind for r in from_json.select("kind").distinct().collect()} == kinds


def _results(out: Path) -> dict:
    got = json.loads((out / "results.json").read_text())
    for k in ("history", "timings", "check_s"):
        got.pop(k, None)
    return got


def _json_only(monkeypatch) -> None:
    """No copy written by the checks from here on: each reads the JSON, as a check of a history
    the copy does not take does."""
    monkeypatch.setattr(load, "write_columnar_copy", lambda path: None)


def _write(name: str, path: Path) -> Path:
    if name == "txns":
        generate(path, 300, 4, 4)
    else:
        (_share_history() if name == "share" else CASES["lost-write"][0][0](True)).write(path)
    return path


@pytest.mark.parametrize(
    ("name", "file"), [("share", "history.jsonl"), ("txns", "txns.jsonl"), ("lost", "history.jsonl")]
)
def test_the_first_check_of_a_bare_history_writes_its_copy_and_says_what_json_says(
    spark_session, tmp_path: Path, monkeypatch, name, file
):
    """A history without its columnar copy (a bare file: `txns.jsonl` gets `txns.parquet`): the first
    check writes the copy and reads it, a second reads it without writing, and both say exactly
    what a check of the JSON says."""
    bare, json_ = tmp_path / "bare", tmp_path / "json"
    bare.mkdir(), json_.mkdir()
    history = _write(name, bare / file)
    said: list[str] = []
    first = check_history(history, bare / "out", report=False, session=spark_session, progress=said.append)
    copy = columns.current(history)
    assert copy == columns.copy_path(history) and copy.name == file.replace(".jsonl", ".parquet")
    assert any(s.startswith(f"check: wrote {copy}") for s in said), said
    if name == "lost":  # a second check reads the copy it finds
        said.clear()
        check_history(history, bare / "again", report=False, session=spark_session, progress=said.append)
        assert any(s.startswith(f"check: reading {copy}, the columnar copy") for s in said), said
        assert _results(bare / "again") == _results(bare / "out")
    _json_only(monkeypatch)
    said.clear()
    from_json = check_history(
        _write(name, json_ / file), json_ / "out", report=False, session=spark_session, progress=said.append
    )
    assert any(" as JSON: " in s for s in said) and not list(json_.glob("*.parquet")), said
    assert (first.valid, first.anomalies) == (from_json.valid, from_json.anomalies)
    assert _results(bare / "out") == _results(json_ / "out")


def test_a_history_in_a_folder_the_check_may_not_write_is_checked_from_its_json(
    spark_session, tmp_path: Path, monkeypatch
):
    folder = tmp_path / "read-only"
    folder.mkdir()
    history = CASES["lost-write"][0][0](True).write(folder / "history.jsonl")
    folder.chmod(0o555)
    if os.geteuid() == 0:  # root writes anyway: the file system's refusal, as a non-root check meets it

        def refused(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

        monkeypatch.setattr(load, "write_columnar_copy", refused)
    said: list[str] = []
    try:
        result = check_history(history, tmp_path / "out", report=False, session=spark_session, progress=said.append)
    finally:
        folder.chmod(0o755)
    assert any(
        s.startswith(f"check: reading {history}") and "as JSON: its columnar copy could not be written" in s
        for s in said
    ), said
    assert result.valid is False and "lost-write" in result.errors
    assert not list(folder.glob("*.parquet")) and not list(folder.glob(".*partial"))


def test_what_the_check_reads_when_there_is_no_current_copy(tmp_path: Path):
    """checkers/load.py `copy_for`, without Spark: a stale copy is written again, a file at the
    copy's place that is no copy is left alone, a URI and a history the copy does not take are
    read as JSON."""
    path = _nemesis_history().write(tmp_path / "history.jsonl")
    made = load.copy_for(path, 1)
    assert made.path == tmp_path / "history.parquet" == columns.current(path)
    assert load.copy_for(path, 1).said.startswith("check: reading")  # current: read, not written
    with open(path, "a", encoding="utf-8") as fh:  # stale: written again
        fh.write(json.dumps({"index": 99, "time": 1, "process": 5, "type": "invoke", "f": "poll", "value": []}) + "\n")
    assert load.copy_for(path, 1).said.startswith("check: wrote") and columns.current(path) == made.path
    foreign = tmp_path / "other"
    foreign.mkdir()
    other = _nemesis_history().write(foreign / "history.jsonl")
    (foreign / "history.parquet").write_text("someone else's file\n")
    chosen = load.copy_for(other, 1)
    assert chosen.path is None and "is not a columnar copy of it, and is left alone" in chosen.said
    assert (foreign / "history.parquet").read_text() == "someone else's file\n"
    remote = load.copy_for("hdfs://namenode/runs/1/history.jsonl", 1, remote=True)
    assert remote.path is None and "a history at a URI gets no columnar copy" in remote.said
    truncated = tmp_path / "truncated.jsonl"
    truncated.write_text('{"index":0,"time":1,"process":0,"type":"invoke","f":"poll","value":[]}\n{"index":1,"ti')
    refused = load.copy_for(truncated, 1)
    assert refused.path is None and "outside the shapes" in refused.said


def test_a_copy_is_current_only_for_the_file_it_was_made_of(tmp_path: Path):
    path = _nemesis_history().write(tmp_path / "history.jsonl")
    copy = write_columnar_copy(path)
    assert copy == tmp_path / "history.parquet" and columns.current(path) == copy
    with open(path, "a", encoding="utf-8") as fh:  # appended to after the copy: the JSON is read
        fh.write(json.dumps({"index": 99, "time": 1, "process": 5, "type": "invoke", "f": "poll", "value": []}) + "\n")
    assert columns.current(path) is None
    assert write_columnar_copy(path) == copy and columns.current(path) == copy
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))  # rewritten in place, same size
    assert columns.current(path) is None


@pytest.mark.parametrize(
    "lines",
    [
        ['{"index":0,"time":1,"process":0,"type":"invoke","f":"poll","value":[]}', '{"index":1,"ti'],  # truncated
        [
            '{"index":0,"time":1,"process":0,"type":"ok","f":"poll","value":[]}',  # a completion first
        ],
        [
            '{"index":0,"time":1,"process":0,"type":"invoke","f":"poll","value":[]}',
            '{"index":1,"time":2,"process":0,"type":"invoke","f":"poll","value":[]}',  # invoked twice
        ],
        [
            '{"index":0,"time":1,"process":0,"type":"invoke","f":"send","value":[["send","t/0","7"]]}',
            # a value that is a string
            '{"index":1,"time":2,"process":0,"type":"ok","f":"send","value":[["send","t/0",[0,"7"]]]}',
        ],
        [
            '{"index":1,"time":1,"process":0,"type":"invoke","f":"poll","value":[]}',
            '{"index":0,"time":2,"process":0,"type":"ok","f":"poll","value":[]}',  # indices out of order
        ],
        [],  # empty
    ],
    ids=["truncated", "no-invoke", "invoked-twice", "string-value", "out-of-order", "empty"],
)
def test_a_history_outside_the_shapes_gets_no_copy_and_is_read_as_json(tmp_path: Path, lines):
    path = tmp_path / "history.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    assert write_columnar_copy(path) is None
    assert not list(tmp_path.glob("*.parquet")) and not list(tmp_path.glob(".*partial"))
