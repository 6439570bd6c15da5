"""A member's poll in which a rebalance gave it keys: their records go back to the consumer
(workloads/group.py `put_back`), so that the history shows them after the `subscribe`."""

from __future__ import annotations

from kafka_chaos.workloads.group import GroupMember


class Seeker:
    def __init__(self, refuses: set[str]) -> None:
        self.refuses, self.sought = refuses, []

    def seek(self, key: str, offset: int) -> None:
        if key in self.refuses:
            raise RuntimeError(f"{key} is not assigned")
        self.sought.append((key, offset))


def member(held: list[str], refuses: set[str] = frozenset()) -> GroupMember:
    m = GroupMember.__new__(GroupMember)  # no client: put_back reads only its consumer and keys
    m.keys, m.consumer = held, Seeker(set(refuses))
    return m


def test_the_records_of_keys_a_rebalance_gave_go_back_from_their_first_offset():
    m = member(["t/0"])
    read = {"t/0": [[5, 1]], "t/1": [[10, 2], [11, 3]], "t/2": []}
    m.put_back(read, ["t/0", "t/1", "t/2"])
    assert read == {"t/0": [[5, 1]], "t/2": []}
    assert m.consumer.sought == [("t/1", 10)]


def test_a_key_held_before_or_no_longer_held_keeps_its_records():
    m = member(["t/0", "t/1"])
    read = {"t/0": [[5, 1]], "t/1": [[10, 2]], "t/3": [[1, 9]]}
    m.put_back(read, ["t/0"])  # t/1 revoked, t/3 assigned and revoked inside one poll
    assert read == {"t/0": [[5, 1]], "t/1": [[10, 2]], "t/3": [[1, 9]]}
    assert m.consumer.sought == []


def test_a_key_that_cannot_be_sought_back_keeps_its_records():
    m = member([], refuses={"t/1"})
    read = {"t/1": [[10, 2]], "t/2": [[0, 4]]}
    m.put_back(read, ["t/1", "t/2"])
    assert read == {"t/1": [[10, 2]]}
    assert m.consumer.sought == [("t/2", 0)]
