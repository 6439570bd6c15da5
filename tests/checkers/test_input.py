"""Damaged and degenerate input, handled as ../shared/history-format.md says: never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_chaos.checkers.errors import BadHistory
from kafka_chaos.frontends.cli import main
from tests.checkers import histories as H
from tests.checkers.builder import History

pytestmark = pytest.mark.spark


def test_truncated_last_line_is_a_warning(check, tmp_path: Path):
    path = H.unseen(False).write(tmp_path / "h.jsonl")
    with open(path, "a") as fh:
        fh.write('{"index":99,"time":1,"process":0,"type":"inv')
    result = check(path)
    assert result.valid is True
    assert any("truncated" in w for w in result.warnings)


def test_bad_line_in_the_middle_is_bad_input(check, tmp_path: Path):
    lines = H.unseen(False).lines().splitlines()
    lines.insert(2, "not json")
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(BadHistory, match="not a JSON event"):
        check(path)


def test_completion_with_no_invoke_is_bad_input(check, tmp_path: Path):
    h = H.unseen(False)
    h.events.insert(0, {"index": 0, "time": 0, "process": 7, "type": "ok", "f": "poll", "value": [["poll", {}]]})
    for i, e in enumerate(h.events):
        e["index"] = i
    with pytest.raises(BadHistory, match="process 7 with no invoke outstanding"):
        check(h)


def test_invoke_with_no_completion_is_info(check):
    """An open send whose value an ok poll read must have committed; the one before it is lost."""
    h = History()
    h.send(0, "t/0", [(1, 0)])
    h.send(1, "t/0", [(2, None), (3, None)], type=None)  # never completed
    h.poll(2, {"t/0": [(0, 1)]})
    h.poll(3, {"t/0": [(2, 3)]})
    h.poll(4, {"t/0": [(1, 2)]}, type="fail")
    result = check(h)
    assert result.stats["operations"]["send"] == {"info": 1, "ok": 1}
    assert result.anomalies["lost-write"]["examples"][0]["values"] == [2]
    assert result.anomalies["lost-write"]["examples"][0]["ops"] == [2]  # named by its invoke


def test_value_nobody_sent_is_garbage_read(check):
    result = check(H.garbage_read(True))
    assert result.anomalies["garbage-read"]["examples"][0]["values"] == [9]


def test_empty_history_is_unknown(check, tmp_path: Path):
    path = tmp_path / "h.jsonl"
    path.write_text("")
    result = check(path)
    assert result.valid == "unknown" and result.exit_code == 3
    assert json.loads(result.results_path.read_text())["valid"] == "unknown"


def test_no_ok_poll_is_unknown(check):
    h = History()
    h.send(0, "t/0", [(1, 0)])
    h.poll(1, {"t/0": [(0, 1)]}, type="info")
    result = check(h)
    assert result.valid == "unknown" and result.exit_code == 3
    assert result.anomalies["unseen"]["count"] == 1 and result.anomalies["unseen"]["errors"] == 0


def test_an_error_beats_unknown(check):
    """The verdict's order: errors first, even when nothing was polled ok."""
    h = History()
    h.send(0, "t/0", [(1, 0)])
    h.poll(1, {"t/0": [(0, 7)]}, type="info")  # 7 was never sent
    assert check(h).valid is False


def test_cli_exit_codes(spark_session, tmp_path: Path, capsys):
    good = H.unseen(False).write(tmp_path / "good.jsonl")
    bad = H.unseen(True).write(tmp_path / "bad.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"index":0}\n{"index":1}\n')
    assert main(["check", str(good), "--no-report"]) == 0
    assert main(["check", str(bad), "--no-report", "--out", str(tmp_path / "o")]) == 1
    assert (tmp_path / "o" / "results.json").exists()
    assert main(["check", str(empty), "--no-report"]) == 3
    assert main(["check", str(broken), "--no-report"]) == 2
    assert main(["check", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"kafka-chaos: error: no history at {tmp_path / 'missing'}"
    assert any("event 0: no integer time" in line for line in err)


def test_check_json_is_one_document_on_stdout(spark_session, tmp_path: Path, capsys):
    bad = H.unseen(True).write(tmp_path / "bad.jsonl")
    assert main(["check", str(bad), "--no-report", "--json", "--quiet"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["valid"] is False and out["errors"] == {"unseen": 1}
    assert out["results"] == str(tmp_path / "results.json") and out["report"] is None


def test_run_directory_gets_results_beside_the_history(spark_session, tmp_path: Path):
    run = tmp_path / "run"
    run.mkdir()
    H.unseen(False).write(run / "history.jsonl")
    assert main(["check", str(run)]) == 0
    assert (run / "results.json").exists() and (run / "report.html").exists()


def test_the_jvm_chatter_stays_off_the_terminal(tmp_path: Path):
    """A fresh process (its own JVM): stderr has our progress lines and nothing of Spark's."""
    path = H.unseen(False).write(tmp_path / "h.jsonl")
    root = Path(__file__).resolve().parents[2]
    cli = "import sys; from frontends.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", cli, "check", str(path), "--no-report"], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert any(line.startswith("kafka-chaos: check: starting Spark") for line in lines), lines
    assert all(line.startswith("kafka-chaos: ") for line in lines), lines


@pytest.mark.parametrize("last, valid", [("[[0,1]]", True), ("[[0,9]]", False)])
def test_a_key_named_twice_in_a_value_keeps_the_last(check, tmp_path: Path, last: str, valid: bool):
    """As json.loads (the oracle's parser) does: the reader parses each value into a VARIANT, and an
    object with a key twice neither makes the event unreadable nor loses the poll's reads."""
    polled = '{"t/0":[[0,7]],"t/0":' + last + "}"  # no dict can say this: the line is written by hand
    lines = [
        '{"index":0,"time":1000,"process":0,"type":"invoke","f":"send","value":[["send","t/0",1]]}',
        '{"index":1,"time":5200,"process":0,"type":"ok","f":"send","value":[["send","t/0",[0,1]]]}',
        '{"index":2,"time":6000,"process":1,"type":"invoke","f":"poll","value":[["poll"]]}',
        '{"index":3,"time":9100,"process":1,"type":"ok","f":"poll","value":[["poll",' + polled + "]]}",
    ]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = check(path)
    assert result.valid is valid
    assert ("garbage-read" in result.anomalies) is not valid
