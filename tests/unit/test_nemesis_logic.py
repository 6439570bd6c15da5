import contextlib
import random
import struct
import threading
import uuid
from types import SimpleNamespace

import pytest

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.names import coordinator_partition, java_hash, share_state_key
from kafka_chaos.nemesis import targets
from kafka_chaos.nemesis.partition import bridge, drop_rules, halves, isolate, majorities_ring, shape, swap
from kafka_chaos.nemesis.schedule import parse_fault_list, parse_script
from kafka_chaos.nemesis.targets import TargetError, quorum_size, resolve
from kafka_chaos.nemesis.unflushed import cut_segment, drop_unflushed, read_checkpoint

NODES = ["kafka-1", "kafka-2", "kafka-3", "kafka-4", "kafka-5"]


def sees(grudge, nodes):
    """Who can talk with whom: a pair is cut when either side holds a grudge."""
    return {a: {b for b in nodes if b not in grudge.get(a, ()) and a not in grudge.get(b, ())} for a in nodes}


def test_isolate_cuts_one_node_from_all_others():
    view = sees(isolate(NODES, "kafka-3"), NODES)
    assert view["kafka-3"] == {"kafka-3"}
    assert view["kafka-1"] == set(NODES) - {"kafka-3"}


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_halves_is_a_majority_and_a_minority(n):
    nodes = NODES[:n] + [f"kafka-{i}" for i in range(6, n + 1)]
    view = sees(halves(nodes, random.Random(n)), nodes)
    sizes = sorted({len(v) for v in view.values()})
    assert sizes == sorted({n // 2, n - n // 2})


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_majorities_ring_every_node_sees_a_different_majority(n):
    nodes = [f"kafka-{i}" for i in range(1, n + 1)]
    view = sees(majorities_ring(nodes, random.Random(n)), nodes)
    assert all(len(v) >= n // 2 + 1 for v in view.values())
    assert len({frozenset(v) for v in view.values()}) == n
    assert any(len(v) < n for v in view.values())  # it is a partition


def test_bridge_node_sees_both_sides_that_cannot_see_each_other():
    view = sees(bridge(NODES, random.Random(3)), NODES)
    middle = [a for a, v in view.items() if v == set(NODES)]
    assert len(middle) == 1
    others = [a for a in NODES if a != middle[0]]
    assert all(len(view[a]) == 3 for a in others)  # own half (2) + the bridge


def test_unknown_shape_is_refused():
    with pytest.raises(ValueError, match="unknown partition shape"):
        shape("star", NODES, random.Random(1))


@pytest.mark.parametrize(
    ("voters", "sizes"),
    [
        (3, {"voters": 2, "quorum-majority": 2, "quorum-minority": 1}),
        (5, {"voters": 4, "quorum-majority": 3, "quorum-minority": 2}),
    ],
)
def test_quorum_targets_take_the_leaders_peers_by_count(voters, sizes):
    assert {t: quorum_size(t, voters) for t in sizes} == sizes


def test_a_quorum_of_one_has_no_peers_and_one_of_two_no_minority():
    with pytest.raises(TargetError, match="1 voter, no peer"):
        quorum_size("quorum-minority", 1)
    with pytest.raises(TargetError, match="2 voters has no minority"):
        quorum_size("quorum-minority", 2)
    with pytest.raises(TargetError, match="a majority of 2 voters needs the active controller"):
        quorum_size("quorum-majority", 2)
    assert quorum_size("voters", 2) == 1


def test_a_cut_drops_everything_between_two_nodes_or_one_ports_tcp():
    assert drop_rules(["10.0.0.2"]) == [
        "iptables -A KAFKA-CHAOS -s 10.0.0.2 -j DROP",
        "iptables -A KAFKA-CHAOS -d 10.0.0.2 -j DROP",
    ]
    assert drop_rules(["10.0.0.2"], 9093) == [
        "iptables -A KAFKA-CHAOS -s 10.0.0.2 -p tcp --dport 9093 -j DROP",
        "iptables -A KAFKA-CHAOS -s 10.0.0.2 -p tcp --sport 9093 -j DROP",
        "iptables -A KAFKA-CHAOS -d 10.0.0.2 -p tcp --dport 9093 -j DROP",
        "iptables -A KAFKA-CHAOS -d 10.0.0.2 -p tcp --sport 9093 -j DROP",
    ]


def test_a_partition_swaps_a_nodes_rules_in_one_commit():
    script = swap(drop_rules(["10.0.0.2"]))
    ready, _, restore = script.partition(" && printf ")
    assert "-F KAFKA-CHAOS" not in ready and "iptables -F" not in ready  # no flush outside the commit
    assert restore.endswith("| iptables-restore --noflush")
    body = restore.split("'")[3]
    assert body.splitlines() == [
        "*filter",
        "-F KAFKA-CHAOS",
        "-A KAFKA-CHAOS -s 10.0.0.2 -j DROP",
        "-A KAFKA-CHAOS -d 10.0.0.2 -j DROP",
        "COMMIT",
    ]


class Named:
    """Nodes by alias and id, as resolve reads them; kafka-4 to kafka-6 are the brokers."""

    def __init__(self) -> None:
        self.nodes = [SimpleNamespace(alias=f"kafka-{i}", node_id=i) for i in range(1, 7)]
        self.brokers = self.nodes[3:]

    def node(self, alias_or_id):
        return next(n for n in self.nodes if alias_or_id in (n.alias, n.node_id))


def test_a_union_target_acts_on_both_parts_in_their_order():
    rng = random.Random(2)
    assert [n.alias for n in resolve(Named(), "kafka-3+kafka-1", rng)] == ["kafka-3", "kafka-1"]
    assert [n.alias for n in resolve(Named(), "2+kafka-2,kafka-5", rng)] == ["kafka-2", "kafka-5"]  # once each
    picked = resolve(Named(), "kafka-1+random-broker", rng)
    assert picked[0].alias == "kafka-1" and picked[1].alias in ("kafka-4", "kafka-5", "kafka-6") and len(picked) == 2


def test_the_controller_lookup_stops_waiting_for_a_describe_quorum_that_never_answers(monkeypatch):
    """As against a paused broker: the call is given up on, and the files decide alone; an answer
    in time is taken (the near miss)."""
    answered = threading.Event()

    def describe(admin):
        assert answered.wait(10), "never released"
        return {"topics": [{"partitions": [{"leader_id": 2, "leader_epoch": 7}]}]}

    cluster = SimpleNamespace(admin=lambda **kw: contextlib.nullcontext())
    monkeypatch.setattr(targets, "describe_quorum", describe)
    monkeypatch.setattr(targets, "DESCRIBE_QUORUM_S", 0.2)
    assert targets._described_leader(cluster) is None and not answered.is_set()
    answered.set()
    assert targets._described_leader(cluster) == (7, 2)


def test_fault_lists():
    assert parse_fault_list("kill, pause,partition") == ["kill", "pause", "partition"]
    with pytest.raises(UsageError, match="unknown fault 'meteor'"):
        parse_fault_list("kill,meteor")
    assert parse_fault_list("kill,pause@group-coordinator") == ["kill", "pause@group-coordinator"]
    with pytest.raises(UsageError, match="unknown fault 'meteor@controller'"):
        parse_fault_list("kill,meteor@controller")
    with pytest.raises(UsageError, match="names no target after '@'"):
        parse_fault_list("kill@")


@pytest.mark.parametrize(
    ("name", "java_hash_code", "partition"),
    # Computed with Java 17: s.hashCode(), and (h == MIN_VALUE ? 0 : Math.abs(h)) % 50.
    [
        ("kafka-chaos-7d81e139c2", 906935803, 3),
        ("polygenelubricants", -2147483648, 0),
        ("grüße-😀", 347391577, 27),
        ("", 0, 0),
    ],
)
def test_coordinators_are_placed_as_kafka_places_them(name, java_hash_code, partition):
    assert java_hash(name) == java_hash_code
    assert coordinator_partition(name, 50) == partition


def test_a_share_groups_state_is_placed_as_kafka_places_it():
    # Computed with kafka-clients 4.3.1 in jshell: new Uuid(0x0123456789abcdefL, 0xfedcba9876543210L)
    # .toString() in the key, and Utils.abs(key.hashCode()) % 50.
    key = share_state_key("kafka-chaos-abc", uuid.UUID("0123456789abcdeffedcba9876543210").bytes, 3)
    assert key == "kafka-chaos-abc:ASNFZ4mrze_-3LqYdlQyEA:3"
    assert coordinator_partition(key, 50) == 32


def test_script_steps_parse_and_only_network_overlaps_are_refused():
    steps = parse_script([{"at": 1, "fault": "kill", "target": "leader:t/0", "for": 5}, {"at": 7, "fault": "pause"}])
    assert [(s.at, s.fault, s.target, s.hold) for s in steps] == [
        (1, "kill", "leader:t/0", 5),
        (7, "pause", "random", None),
    ]
    # steps may overlap now (tests/unit/test_overlap.py), except network faults, which one heal undoes
    assert len(parse_script([{"at": 1, "fault": "kill", "for": 5}, {"at": 4, "fault": "pause"}])) == 2
    with pytest.raises(UsageError, match="step 1 .* starts while step 0's partition is held"):
        parse_script([{"at": 1, "fault": "partition", "for": 5}, {"at": 4, "fault": "stall"}])
    with pytest.raises(UsageError, match="unknown fault 'melt'"):
        parse_script([{"at": 1, "fault": "melt"}])
    with pytest.raises(UsageError, match="unknown field"):
        parse_script([{"at": 1, "fault": "kill", "after": 3}])
    with pytest.raises(UsageError, match="JSON list"):
        parse_script({"at": 1})


def test_script_steps_carry_the_options_given_and_each_is_checked_by_its_fault():
    steps = parse_script([{"at": 1, "fault": "partition", "shape": "cut", "target": "a|b"}, {"at": 2, "fault": "kill"}])
    assert [s.options for s in steps] == [{"shape": "cut"}, {}]
    with pytest.raises(UsageError, match="step 0: unknown partition shape 'star'"):
        parse_script([{"at": 1, "fault": "partition", "shape": "star"}])
    # A shape on another fault's step is checked, kept, and not read (as it always was).
    (kill,) = parse_script([{"at": 1, "fault": "kill", "shape": "halves"}])
    assert kill.options == {"shape": "halves"}
    with pytest.raises(UsageError, match="step 0: unknown partition shape"):
        parse_script([{"at": 1, "fault": "kill", "shape": "star"}])


def batch(base_offset: int, records: int, payload: bytes = b"x" * 40) -> bytes:
    """A record batch as far as truncation reads it: baseOffset, batchLength, then the rest."""
    body = b"\0" * 4 + b"\2" + b"\0" * 6 + struct.pack(">i", records - 1) + payload
    return struct.pack(">qi", base_offset, len(body)) + body


def partition_dir(tmp_path, name, segments):
    d = tmp_path / name
    d.mkdir()
    for base, batches in segments.items():
        (d / f"{base:020d}.log").write_bytes(b"".join(batch(b, n) for b, n in batches))
        (d / f"{base:020d}.index").write_bytes(b"\0" * 8)
    return d


def test_read_checkpoint(tmp_path):
    (tmp_path / "cp").write_text("0\n2\nchaos 0 42\nmy topic 3 7\n")
    assert read_checkpoint(tmp_path / "cp") == {"chaos-0": 42, "my topic-3": 7}


def test_cut_segment_at_the_first_batch_at_or_after_the_recovery_point(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(batch(0, 5) + batch(5, 5) + batch(10, 5))
    size = len(batch(0, 5))
    assert cut_segment(log, 5) == 2 * size
    assert log.stat().st_size == size
    assert cut_segment(log, 5) == 0  # nothing left past it


def test_drop_unflushed_cuts_each_partition_to_its_recovery_point(tmp_path):
    flushed = partition_dir(tmp_path, "chaos-0", {0: [(0, 10), (10, 10)], 20: [(20, 10)]})
    unflushed = partition_dir(tmp_path, "chaos-1", {0: [(0, 10), (10, 10)]})
    metadata = partition_dir(tmp_path, "__cluster_metadata-0", {0: [(0, 10)]})
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n2\nchaos 0 30\nchaos 1 10\n")
    cuts = {t.partition: t for t in drop_unflushed(tmp_path)}
    assert cuts["chaos-0"].bytes_removed == 0  # all flushed: nothing lost
    assert cuts["chaos-1"].bytes_removed == len(batch(10, 10))
    assert (unflushed / "00000000000000000000.log").stat().st_size == len(batch(0, 10))
    assert not (unflushed / "00000000000000000000.index").exists()  # Kafka rebuilds it
    assert (flushed / "00000000000000000000.index").exists()
    assert "__cluster_metadata-0" not in cuts and (metadata / "00000000000000000000.log").stat().st_size > 0


def test_partition_missing_from_the_checkpoint_loses_everything(tmp_path):
    d = partition_dir(tmp_path, "chaos-0", {0: [(0, 10)], 10: [(10, 10)]})
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n0\n")
    (cut,) = drop_unflushed(tmp_path)
    assert cut.segments_removed == 2 and not list(d.glob("*.log"))


# stall: the client connections of a node's /proc/net/tcp, and the rules that hold them.
PROC_NET_TCP = """  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:24BE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1
   1: 020012AC:24BE 010012AC:A1B2 01 00000000:00000000 00:00000000 00000000     0        0 2 1
   2: 020012AC:24BE 010012AC:A1B3 06 00000000:00000000 00:00000000 00000000     0        0 3 1
   3: 020012AC:2384 030012AC:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4 1
"""


def test_stall_holds_only_established_client_connections():
    from kafka_chaos.nemesis.stall import client_connections, rules

    # 0x24BE = 9406, 0x2384 = 9092 (broker to broker): only the established one on the client port.
    assert client_connections(PROC_NET_TCP, port=9406) == [("172.18.0.1", 0xA1B2)]
    assert client_connections(PROC_NET_TCP, port=9094) == []
    assert rules([("172.18.0.1", 41394)], port=9094) == [
        "iptables -A KAFKA-CHAOS -p tcp -s 172.18.0.1 --sport 41394 --dport 9094 -j DROP",
        "iptables -A KAFKA-CHAOS -p tcp -d 172.18.0.1 --dport 41394 --sport 9094 -j DROP",
    ]


def test_hold_endtxn_drops_only_the_clients_segments_that_start_an_end_txn():
    from kafka_chaos.nemesis.stall import END_TXN, rules

    (rule,) = rules([("172.18.0.1", 41394)], port=9094, api_key=END_TXN)
    assert rule == (
        "iptables -A KAFKA-CHAOS -p tcp -s 172.18.0.1 --sport 41394 --dport 9094"
        ' -m u32 --u32 "0>>22&0x3C@12>>26&0x3C@4>>16=0x1a" -j DROP'
    )


def test_block_connect_drops_only_the_syn_of_the_nodes_new_connections_to_the_controllers():
    from kafka_chaos.nemesis.faults import BLOCK_CONNECT
    from kafka_chaos.nemesis.stall import connect_rules

    # to the controllers' listener of any node, only a connection's opening segment: open ones carry on
    assert connect_rules(BLOCK_CONNECT.port) == ["iptables -A KAFKA-CHAOS -p tcp --dport 9093 --syn -j DROP"]
    assert BLOCK_CONNECT.outgoing and not BLOCK_CONNECT.random  # a scenario's fault, drawn by no mix


def test_rules_skip_a_node_whose_container_stopped_and_fail_on_a_running_one(monkeypatch):
    from kafka_chaos.nemesis import partition

    def refuse(node, *cmd):
        raise RuntimeError(f"sh -c ... on {node.alias} exited 126: OCI runtime exec failed: {node.answer}")

    monkeypatch.setattr(partition, "exec_root", refuse)
    # Docker still says running while the runtime already refuses: the runtime's word is taken
    partition._in_running(SimpleNamespace(alias="kafka-3", state=lambda: "running", answer=partition.STOPPED), "true")
    partition._in_running(SimpleNamespace(alias="kafka-3", state=lambda: "exited", answer="no such file"), "true")
    with pytest.raises(RuntimeError, match="exited 126"):
        partition._in_running(SimpleNamespace(alias="kafka-3", state=lambda: "running", answer="no such file"), "true")


def test_a_kill_of_a_node_docker_still_calls_running_but_whose_process_ended_waits_for_it(monkeypatch):
    """Docker's status lags the process: a node killed a moment ago is still "running" to the
    engine, which refuses a second kill (409, "is not running"): that node is down. The near
    miss: any other refusal is the engine's error, raised."""
    from docker.errors import APIError

    from kafka_chaos.nemesis import kill as kill_mod

    waited = []

    class Lagging:
        status, attrs = "running", {"State": {"Pid": 0}}

        def __init__(self, code: int) -> None:
            self.code = code

        def kill(self, signal: str) -> None:
            raise APIError("refused", response=SimpleNamespace(status_code=self.code, reason="", url=""))

    monkeypatch.setattr(kill_mod, "wait_stopped", lambda node, timeout_s=30.0: waited.append(node))
    monkeypatch.setattr(kill_mod, "container", lambda node: Lagging(node))
    kill_mod.kill(409)  # type: ignore[arg-type] (the fake container reads its code from the node)
    assert waited == [409]
    with pytest.raises(APIError):
        kill_mod.kill(500)  # type: ignore[arg-type]
