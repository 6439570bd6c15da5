"""The consumer-group pieces that are pure logic: where an aborted transaction rewinds a
member to, and when the group's drain is done. Real groups: tests/integration/test_groups.py."""

from kafka_chaos.workloads.context import GroupProgress
from kafka_chaos.workloads.txn import rewind


def test_an_abort_rewinds_keys_held_at_the_start_and_keys_a_rebalance_gave_mid_transaction():
    done = [
        ["poll", {"t/0": [[5, 50], [6, 60]]}],
        ["send", "t/1", [3, 7]],
        ["poll", {"t/2": [[9, 90], [10, 100]], "t/0": [[7, 70]]}],  # t/2 came with a rebalance
    ]
    assert rewind({"t/0": 5}, done) == {"t/0": 5, "t/2": 9}
    assert rewind({"t/0": 5, "t/2": 8}, done) == {"t/0": 5, "t/2": 8}  # held at the start: its start wins
    assert rewind({}, [["poll", {"t/3": []}]]) == {}  # nothing read, nothing to rewind


def test_the_drain_is_done_when_some_member_read_every_key_to_its_target():
    group = GroupProgress()
    group.note({"t/0": [[3, 30], [4, 40]], "t/1": []})
    assert not group.caught_up({"t/0": 4, "t/1": 0})
    group.note({"t/1": [[0, 1]], "t/0": [[2, 20]]})  # a re-read behind does not move it back
    assert group.caught_up({"t/0": 4, "t/1": 0})
    assert not group.caught_up({"t/0": 5})
