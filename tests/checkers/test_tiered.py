"""`log-start-moved` (checkers/tiered.py, kafka-chaos's own rule; docs/checker.md): a tiered run
whose retention could delete nothing must end with every partition starting at offset 0, on every
replica and in remote storage. Written from that definition: a start above 0 anywhere is an error;
a run whose starts could not all be read, or whose retention could delete, is not judged and says
so ("unknown")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_chaos.checkers import tiered
from kafka_chaos.checkers.result import TIERED_INCOMPLETE
from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.tiered import TieredReads
from tests.checkers import histories as H

K = H.K


READS = TieredReads(3, 0, {K: 0}, "a record below every local log start is counted as from remote storage")


def _starts(replica_starts: dict[str, int], remote_lowest: int | None = 0, unanswered=None) -> dict:
    replicas = {b: {"log_start": s, "local_log_start": s + 40} for b, s in replica_starts.items()}
    return {
        "partitions": {K: {"replicas": replicas, "remote": {"segments": 3, "lowest_offset": remote_lowest}}},
        "unanswered": unanswered or {},
    }


def _unanswered(starts: dict, broker: str) -> dict:
    """`broker` could not be asked at all: its replicas' starts are unknown."""
    starts["partitions"][K]["replicas"][broker] = {"log_start": None, "local_log_start": None, "error": "timeout"}
    starts["unanswered"] = {broker: "KafkaTimeoutError: timeout"}
    return starts


def _errored(starts: dict, broker: str) -> dict:
    """`broker` answered for the partition with an error (its code)."""
    starts["partitions"][K]["replicas"][broker] = {"log_start": None, "local_log_start": 5, "error": {"log_start": 56}}
    return starts


def _run_dir(tmp_path: Path, starts: dict | None, nothing_deletable: bool | None = True) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir(parents=True)
    retention = {"retention_bytes": 10**9, "largest_partition_bytes": 10**5, "nothing_deletable": nothing_deletable}
    config = {"tiered": {"storage": "LocalTieredStorage", "release": "4.3.1", "retention": retention}}
    if nothing_deletable is None:
        del config["tiered"]["retention"]
    (run_dir / "config.json").write_text(json.dumps(config))
    (run_dir / "summary.json").write_text(json.dumps({"tiered_reads": READS.to_json()}))  # as the run writes it
    if starts is not None:
        (run_dir / "log-starts.json").write_text(json.dumps(starts))
    h = H.History()
    for v in range(1, 4):
        h.send(0, K, [(v, v - 1)])
    h.poll(1, {K: [(0, 1), (1, 2), (2, 3)]})
    h.write(run_dir / "history.jsonl")
    return run_dir


def _judge(run_dir: Path):
    return tiered.judge(run_dir, RunConfig.load(run_dir))


@pytest.mark.parametrize(
    ("starts", "where"),
    [
        (_starts({"1": 0, "2": 512, "3": 0}), "broker 2"),  # one follower's start moved
        (_starts({"1": 0, "2": 0, "3": 0}, remote_lowest=200), "remote"),  # remote's first segment gone
    ],
)
def test_a_start_above_zero_is_an_error_and_its_near_miss_is_not(tmp_path, starts, where):
    found, summary = _judge(_run_dir(tmp_path / "bad", starts))
    (example,) = found["log-start-moved"]["examples"]
    assert example["where"] == where and found["log-start-moved"]["errors"] == 1 and summary["checked"]
    found, summary = _judge(_run_dir(tmp_path / "good", _starts({"1": 0, "2": 0, "3": 0})))
    assert found == {} and summary["checked"] and summary["reads"] == READS.to_json()


def test_a_partition_not_yet_in_remote_storage_has_no_remote_start(tmp_path):
    found, summary = _judge(_run_dir(tmp_path, _starts({"1": 0}, remote_lowest=None)))
    assert found == {} and summary["checked"]


@pytest.mark.parametrize(
    ("starts", "deletable", "why"),
    [
        (None, False, "no log-starts.json"),
        (_starts({"1": 0, "2": 0}), True, "retention could delete"),
        (_unanswered(_starts({"1": 0, "2": 0, "3": 0}), "3"), False, "not every replica answered"),
        (_errored(_starts({"1": 0, "2": 0, "3": 0}), "2"), False, "not every replica answered"),
    ],
)
def test_starts_that_cannot_be_judged_are_not_checked(tmp_path, starts, deletable, why):
    found, summary = _judge(_run_dir(tmp_path, starts, nothing_deletable=not deletable))
    assert found == {} and not summary["checked"] and why in summary["why"]


def _with_keys(run_dir: Path, keys: int) -> Path:
    """config.json says the workload's keys (t/0 .. t/keys-1, K the first)."""
    config = json.loads((run_dir / "config.json").read_text())
    (run_dir / "config.json").write_text(json.dumps({**config, "workload": {"topic": "t", "keys": keys}}))
    return run_dir


@pytest.mark.parametrize(
    ("starts", "keys", "why"),
    [
        ({"partitions": {}, "unanswered": {}}, None, "lists no partition (an empty answer is not a pass)"),
        ({"unanswered": {}}, None, "lists no partition"),
        ({"partitions": [], "unanswered": {}}, None, "is not a listing of log starts"),  # history/tiered.py
        (_starts({"1": 0, "2": 0}), 2, "t/1: not in log-starts.json"),
    ],
    ids=["empty", "no-listing", "not-a-listing", "a-key-missing"],
)
def test_an_empty_or_short_answer_is_not_a_pass(tmp_path, starts, keys, why):
    """anomalies.md, "Tiered storage" (added 2026-12-06): starts that could not all be read are
    `unknown`; an empty answer is not a pass. Near miss: every key of the workload listed."""
    run_dir = _run_dir(tmp_path / "short", starts)
    if keys is not None:
        _with_keys(run_dir, keys)
    found, summary = _judge(run_dir)
    assert found == {} and not summary["checked"] and why in summary["why"], summary
    found, summary = _judge(_with_keys(_run_dir(tmp_path / "whole", _starts({"1": 0, "2": 0})), 1))
    assert found == {} and summary["checked"], summary


def test_a_log_starts_file_that_cannot_be_read_is_not_a_pass(tmp_path):
    run_dir = _run_dir(tmp_path, None)
    (run_dir / "log-starts.json").write_text('{"partitions": {"chaos/0": ')
    found, summary = _judge(run_dir)
    assert found == {} and not summary["checked"] and "log-starts.json could not be read" in summary["why"]


def test_a_run_whose_retention_was_never_proven_is_not_judged(tmp_path):
    found, summary = _judge(_run_dir(tmp_path, _starts({"1": 3}), nothing_deletable=None))
    assert found == {} and not summary["checked"] and "not proven" in summary["why"]


def test_a_moved_start_is_found_even_when_a_broker_did_not_answer(tmp_path):
    found, _ = _judge(_run_dir(tmp_path, _unanswered(_starts({"1": 7, "3": 0}), "3")))
    assert found["log-start-moved"]["errors"] == 1


def test_a_run_that_is_not_tiered_has_no_tiered_result(tmp_path):
    run_dir = _run_dir(tmp_path, _starts({"1": 9}))
    assert tiered.judge(run_dir, RunConfig()) == ({}, None)


@pytest.mark.spark
def test_the_verdict_is_invalid_on_a_moved_start_and_unknown_when_unchecked(check, tmp_path):
    bad = check(_run_dir(tmp_path / "bad", _starts({"1": 0, "2": 512})) / "history.jsonl")
    assert bad.valid is False and bad.exit_code == 1 and bad.errors == ["log-start-moved"]
    good = check(_run_dir(tmp_path / "good", _starts({"1": 0, "2": 0})) / "history.jsonl")
    assert good.valid is True and good.exit_code == 0 and good.tiered["checked"]
    missing = check(_run_dir(tmp_path / "missing", None) / "history.jsonl")
    assert missing.valid == "unknown" and missing.unknown_reason == TIERED_INCOMPLETE and missing.exit_code == 4
    saved = json.loads(bad.results_path.read_text())
    assert saved["tiered"]["partitions"][K]["replicas"]["2"]["log_start"] == 512
