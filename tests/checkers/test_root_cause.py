"""Root cause in the check: every lost write attributed to a controller decision, when the run
directory holds a metadata timeline; nothing of the kind when it does not."""

import json

from tests.checkers.builder import History

K = "t/0"


def lossy_history() -> History:
    """Values 1 and 2 acknowledged (ops at 2 ms and 4 ms), then 3; a poll reads 1 and 3 only."""
    h = History()
    for value in (1, 2, 3):
        h.send(0, K, [(value, value - 1)])
    h.poll(1, {K: [(0, 1)]})
    h.poll(2, {K: [(2, 3)]})
    return h


def timeline(ms_join: float, ms_elect: float) -> dict:
    base = {"kind": "partition", "key": K, "leader_epoch": 0, "partition_epoch": 0, "unclean": False}
    return {
        "events": [
            {"t_s": 0.0, "change": "created", "leader": 1, "isr": [1], **base},
            {
                "t_s": ms_join / 1000,
                "change": "isr",
                "leader": 1,
                "isr": [1, 2],
                "previous_leader": 1,
                "previous_isr": [1],
                **base,
            },
            {
                "t_s": ms_elect / 1000,
                "change": "leader+isr",
                "leader": 2,
                "isr": [2],
                "previous_leader": 1,
                "previous_isr": [1, 2],
                **base,
            },
        ]
    }


def test_every_lost_write_is_attributed(check, tmp_path):
    path = lossy_history().write(tmp_path / "history.jsonl")
    (tmp_path / "metadata-timeline.json").write_text(json.dumps(timeline(ms_join=5, ms_elect=20)))
    result = check(path, report=True)
    assert result.anomalies["lost-write"]["count"] == 1
    groups = result.root_cause["lost_write_groups"]
    assert [(g["count"], g["offsets"], g["cause"]) for g in groups] == [(1, [1, 1], "joined-isr-after-ack")]
    assert result.root_cause["lost_writes"][0]["cause"] == "joined-isr-after-ack"
    assert "Every lost write" in result.report_path.read_text()
    # Near miss: broker 2 joined the ISR before the write: it had it, so the cause is another.
    (tmp_path / "metadata-timeline.json").write_text(json.dumps(timeline(ms_join=1, ms_elect=20)))
    again = check(path)
    assert [g["cause"] for g in again.root_cause["lost_write_groups"]] == ["in-isr-at-ack"]


def test_no_timeline_no_root_cause(check, tmp_path):
    result = check(lossy_history().write(tmp_path / "history.jsonl"))
    assert result.root_cause is None and "root_cause" not in json.loads(result.results_path.read_text())
