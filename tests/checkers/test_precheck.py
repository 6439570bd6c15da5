"""What is plainly not a history is refused in one line before Spark starts (checkers/load.py
precheck): no JVM, so these tests need none."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_chaos.checkers import load
from kafka_chaos.checkers.errors import BadHistory
from kafka_chaos.frontends.cli import main
from tests.checkers import histories as H


def one_line(path: Path, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.write(b'[{"index": 0, "pad": "')
        fh.write(b"x" * size)
        fh.write(b'"}]')
    return path


def test_a_history_passes(tmp_path: Path):
    path = H.unseen(False).write(tmp_path / "h.jsonl")
    load.precheck(path)
    assert load.last_line(path).startswith('{"index": 5')


def test_a_document_on_one_line_is_refused(tmp_path: Path):
    path = one_line(tmp_path / "array.json", load.MAX_LINE + 1)
    with pytest.raises(BadHistory, match="line 1 is longer than 16 MiB"):
        load.precheck(path)


def test_a_long_last_line_is_refused(tmp_path: Path):
    path = H.unseen(False).write(tmp_path / "h.jsonl")
    with open(path, "ab") as fh:
        fh.write(b"y" * (load.MAX_LINE + 1))
    with pytest.raises(BadHistory, match="the last line is longer than 16 MiB"):
        load.precheck(path)


def test_long_lines_under_the_bound_pass(tmp_path: Path):
    path = one_line(tmp_path / "big-but-allowed.json", load.MAX_LINE - 100)
    load.precheck(path)  # Spark then reads it and calls it what it is


def test_a_binary_file_is_refused(tmp_path: Path):
    path = tmp_path / "core"
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 100)
    with pytest.raises(BadHistory, match="binary file"):
        load.precheck(path)


def test_text_that_is_not_utf8_is_refused(tmp_path: Path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"index": 0, "f": "caf\u00e9"}\n'.encode("latin-1") * 10)
    with pytest.raises(BadHistory, match="not UTF-8"):
        load.precheck(path)


def test_the_command_line_exits_2_in_one_line(tmp_path: Path, capsys):
    path = one_line(tmp_path / "array.json", load.MAX_LINE + 1)
    assert main(["check", str(path), "--no-report"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"kafka-chaos: error: {path}: line 1 is longer than 16 MiB: not a history (JSON Lines)"]
