"""Group coverage (checkers/measures/group_coverage.py) on hand-made histories."""

from kafka_chaos.checkers.measures.group_coverage import count_events, format_coverage

KEYS = ["t/0", "t/1"]


class History:
    def __init__(self) -> None:
        self.events: list[dict] = []

    def op(self, process, f, at: float, value, *, done: float | None = None, type_="ok", invoke=None, phase=None):
        inv = {"time": int(at * 1e9), "process": process, "type": "invoke", "f": f, "value": invoke}
        if phase:
            inv["phase"] = phase
        self.events.append(inv)
        self.events.append({"time": int((done or at) * 1e9), "process": process, "type": type_, "f": f, "value": value})
        return self

    def holds(self, process, at: float, keys: list[str]):
        return self.op(process, "subscribe", at, keys, invoke=["t"])

    def poll(self, process, at: float, records: dict, phase=None):
        return self.op(process, "poll", at, [["poll", records]], invoke=[["poll"]], phase=phase)

    def send(self, process, at: float):
        return self.op(process, "send", at, [["send", "t/0", [0, 1]]], invoke=[["send", "t/0", 1]])


def two_members(handover_at: float) -> History:
    """Member 1 holds both keys from 1 s, leaves at 4 s; member 2 gets them at `handover_at`;
    the workload runs from 0 to 10 s."""
    h = History().send(9, 0.0).holds(1, 0.5, []).holds(1, 1.0, KEYS)
    h.poll(1, 2.0, {"t/0": [[0, 1]]}).poll(1, 4.0, {})  # member 1's last operation: it leaves
    h.holds(2, 3.0, []).holds(2, handover_at, KEYS).poll(2, 9.0, {"t/1": [[0, 2]]}).send(9, 10.0)
    return h


def test_every_key_held_over_half_the_workload_passes():
    c = count_events(two_members(handover_at=5.0).events, KEYS)
    # held 1-4 by member 1 and 5-9 by member 2 (its last operation): 7 of 10 s
    assert c["every_key_share"] == 0.7 and c["some_key_share"] == 0.7
    assert c["longest_unheld_s"] == 1.0  # 0 to 1 s, and 4 to 5 s
    assert c["polls_with_records"] == 2
    assert c["warning"] is None


def test_a_handover_late_enough_to_leave_keys_unheld_half_the_time_warns():
    c = count_events(two_members(handover_at=7.5).events, KEYS)
    assert c["every_key_share"] == 0.45
    assert c["longest_unheld_s"] == 3.5
    assert "45% of the workload" in c["warning"]


def test_keys_held_by_two_members_at_once_are_reported():
    h = History().send(9, 0.0).holds(1, 0.0, KEYS).holds(2, 2.0, ["t/1"]).holds(1, 3.0, ["t/0"]).send(9, 10.0)
    h.poll(1, 10.0, {}).poll(2, 10.0, {})
    c = count_events(h.events, KEYS)
    assert c["double_held_s"] == {"t/1": 1.0}
    assert c["every_key_share"] == 1.0


def test_no_key_held_twice_when_the_revocation_comes_first():
    h = History().send(9, 0.0).holds(1, 0.0, KEYS).holds(1, 2.0, ["t/0"]).holds(2, 2.0, ["t/1"]).send(9, 10.0)
    h.poll(1, 10.0, {}).poll(2, 10.0, {})
    assert count_events(h.events, KEYS)["double_held_s"] == {}


def test_a_commit_of_a_key_the_member_does_not_hold_is_a_stray_commit():
    h = History().send(9, 0.0).holds(1, 0.0, ["t/0"]).holds(2, 0.0, ["t/1"])
    h.op(1, "commit", 1.0, {"t/0": 1}, invoke={"t/0": 1}).op(2, "commit", 1.0, {"t/0": 3}, invoke={"t/0": 3})
    c = count_events(h.send(9, 5.0).events, KEYS)
    assert c["stray_commits"] == 1
    assert c["stray_commit_examples"] == [{"process": 2, "key": "t/0", "time_s": 1.0}]
    assert "1 commits of keys not held" in format_coverage(c)


def test_the_final_drain_is_not_the_workload():
    h = two_members(handover_at=5.0)
    h.op(2, "subscribe", 12.0, KEYS, invoke=["t"], phase="final").poll(2, 13.0, {"t/0": [[1, 3]]}, phase="final")
    assert count_events(h.events, KEYS)["every_key_share"] == 0.7


def test_a_run_without_members_has_no_coverage():
    h = History().send(1, 0.0).op(1, "assign", 0.0, KEYS, invoke=KEYS).send(1, 5.0)
    assert count_events(h.events, KEYS) is None
