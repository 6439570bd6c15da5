"""Replaying decoded KRaft metadata records into a leader / ISR / registration timeline."""

import json

from kafka_chaos.harness.logdump import records
from kafka_chaos.harness.metadata_log import replay
from kafka_chaos.history.metadata_replay import bumps_on_isr_shrink

T0 = 1_000_000.0


def rec(offset: int, at_s: float, kind: str, **data) -> dict:
    payload = json.dumps({"type": kind, "version": 0, "data": data})
    return {"offset": offset, "create_time_ms": T0 + at_s * 1000, "payload": payload}


def history(isr_after_shrink=(3,)):
    return [
        rec(1, 0.0, "REGISTER_BROKER_RECORD", brokerId=2, brokerEpoch=9, fenced=True, incarnationId="a"),
        rec(2, 0.5, "UNFENCE_BROKER_RECORD", id=2, epoch=9),
        rec(3, 1.0, "TOPIC_RECORD", name="chaos", topicId="T"),
        rec(4, 1.0, "TOPIC_RECORD", name="other", topicId="U"),
        rec(
            5,
            1.1,
            "PARTITION_RECORD",
            partitionId=0,
            topicId="T",
            replicas=[3, 2],
            isr=[3, 2],
            leader=3,
            leaderEpoch=0,
            partitionEpoch=0,
        ),
        rec(6, 1.1, "PARTITION_RECORD", partitionId=0, topicId="U", replicas=[3], isr=[3], leader=3),
        rec(7, 2.0, "PARTITION_CHANGE_RECORD", partitionId=0, topicId="T", isr=list(isr_after_shrink), leader=-2),
        rec(8, 3.0, "PARTITION_CHANGE_RECORD", partitionId=0, topicId="T", isr=[3, 2], leader=-2),
        rec(9, 4.0, "PARTITION_CHANGE_RECORD", partitionId=0, topicId="T", isr=[2], leader=2, leaderRecoveryState=1),
    ]


def test_replay_follows_registrations_and_the_workload_topic_only():
    events = replay(history(), "chaos", bumps_on_isr_shrink(None, "3.4.1"), T0)
    assert [e["kind"] for e in events] == ["register", "unfence", "partition", "partition", "partition", "partition"]
    assert events[0] == {
        "t_s": 0.0,
        "offset": 1,
        "kind": "register",
        "broker": 2,
        "broker_epoch": 9,
        "fenced": True,
        "incarnation": "a",
    }
    shrink, grow, elect = events[3:]
    assert (shrink["change"], shrink["isr"], shrink["previous_isr"]) == ("isr", [3], [3, 2])
    assert (grow["change"], grow["isr"], grow["partition_epoch"]) == ("isr", [3, 2], 2)
    assert (elect["change"], elect["leader"], elect["previous_leader"], elect["unclean"]) == ("leader+isr", 2, 3, True)


def test_leader_epoch_bumps_on_isr_shrink_only_before_3_6():
    old = replay(history(), "chaos", bumps_on_isr_shrink(None, "3.4.1"), T0)
    new = replay(history(), "chaos", bumps_on_isr_shrink(None, "3.6.0"), T0)
    assert [e.get("leader_epoch") for e in old if e["kind"] == "partition"] == [0, 1, 1, 2]
    assert [e.get("leader_epoch") for e in new if e["kind"] == "partition"] == [0, 0, 0, 1]


def test_a_change_that_repeats_the_isr_is_not_an_isr_change():
    events = replay(history(isr_after_shrink=(2, 3)), "chaos", bumps_on_isr_shrink(None, "3.4.1"), T0)
    assert events[3]["change"] == "other"


def test_records_parses_the_tool_output_and_skips_batch_headers():
    output = "\n".join(
        [
            "Dumping /logs/00000000000000000000.log",
            "baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 CreateTime: 1690000000000 size: 77",
            "| offset: 0 CreateTime: 1690000000000 keySize: -1 valueSize: 3 sequence: -1 headerKeys: [] payload: 123",
            "| offset: 1 CreateTime: 1690000000001 keySize: 4 valueSize: 6 headerKeys: [] endTxnMarker: COMMIT",
        ]
    )
    assert list(records(output)) == [
        {"offset": 0, "create_time_ms": 1690000000000, "payload": "123"},
        {"offset": 1, "create_time_ms": 1690000000001, "payload": None},
    ]
