"""What a share run's drain waits for (workloads/share.py ShareProgress): every offset up to
each key's target accepted or rejected, or delivered up to the limit."""

from kafka_chaos.workloads.share import ShareProgress


def test_the_drain_waits_for_every_offset_up_to_each_target():
    p = ShareProgress(limit=3)
    p.settle("t/0", [[0, "accept"], [1, "release"], [2, "reject"]])
    assert not p.settled({"t/0": 2})  # 1 was released: it comes back
    p.delivered({"t/0": [[1, 7, 3]]})  # delivered the third time: archived after it
    assert p.settled({"t/0": 2})
    assert not p.settled({"t/0": 2, "t/1": 0})
    p.settle("t/1", [[0, "accept"]])
    assert p.settled({"t/0": 2, "t/1": 0})
    assert not p.settled({"t/0": 3, "t/1": 0})  # a later target asks for more
