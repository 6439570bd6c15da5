"""A remote storage's fault (effect `impaired`) on a node lasts until `remote-heal` opens that
node's gate: a restart of the node (wipe, start) leaves the gate closed, since the gate is outside
it."""

from kafka_chaos.checkers.control_plane.node_faults import NemesisOp, windows
from kafka_chaos.history import events


def _ops() -> list[NemesisOp]:
    return [
        NemesisOp(1, "remote-unavailable", "ok", 10, 11, ["kafka-2"], undone_by="remote-heal", effect=events.IMPAIRED),
        NemesisOp(3, "wipe", "ok", 20, 25, ["kafka-2"], effect=events.WIPED),
        NemesisOp(5, "remote-heal", "ok", 40, 41, ["kafka-2"], heals=["remote-unavailable"], effect=events.RESTORED),
    ]


def test_a_remote_fault_ends_at_its_heal_not_at_a_restart_of_its_node():
    (remote,) = [w for w in windows(_ops(), 100) if w.f == "remote-unavailable"]
    assert (remote.undone, remote.healed) == (40, 41)


def test_a_kill_on_the_same_node_still_ends_at_its_restart():
    ops = [
        NemesisOp(1, "kill", "ok", 10, 11, ["kafka-2"], undone_by="start", effect=events.DOWN),
        NemesisOp(3, "wipe", "ok", 20, 25, ["kafka-2"], effect=events.WIPED),
    ]
    (kill,) = [w for w in windows(ops, 100) if w.f == "kill"]
    assert (kill.undone, kill.healed) == (20, 25)
