"""The progress ladders (checkers/measures/ladders.py) on hand-made run directories: each rung
reached, and a near miss that stops one rung short (pure Python: no Spark)."""

from __future__ import annotations

from pathlib import Path

from kafka_chaos.checkers.measures.ladders import DATA, LADDERS, QUORUM, VOTER, climb
from tests.checkers.cp_builder import Run, change, rec
from tests.checkers.cp_cases import leader_change, split_brain

S = 1_000_000_000


def data_run(crash: bool = True, regrown: bool = False, fault: str = "lose-unflushed") -> Run:
    """chaos/0 (replicas 1-3, ISR {2, 3} from the start) left with its leader kafka-2 alone at
    10 s; kafka-2 loses power at 20 s (or, with `regrown`, after the
    ISR took kafka-3 back at 15 s); leaderless at 22 s, kafka-2 leads again at 25 s. A write is
    acknowledged every second from 2 s."""
    r = Run().add(change(8, 10, isr=[2]))
    if regrown:
        r.add(change(9, 15, isr=[2, 3]))
    if crash:
        r.fault(fault, ["kafka-2"], 20)
    return r.add(change(10, 22, leader=-1), change(11, 25, leader=2))


def test_the_data_ladder_climbs_to_the_last_replica_leading_again(tmp_path: Path):
    got = climb(data_run().write(tmp_path / "run").parent)
    assert got.depth(DATA) == len(LADDERS[DATA]) == 4
    rungs = {w.name: w for w in got.waypoints if w.ladder == DATA}
    alone = rungs["isr-one-past-flush"]
    assert alone.time == 10 * S and alone.nodes == ("kafka-2",)
    assert rungs["last-replica-lost-unflushed"].time == 20 * S and rungs["leads-again"].time == 25 * S
    assert got.deepest is not None and got.deepest.name == "leads-again"


def test_the_data_ladder_stops_where_the_chain_breaks(tmp_path: Path):
    assert climb(data_run(crash=False).write(tmp_path / "a").parent).depth(DATA) == 2  # nothing ended kafka-2
    assert climb(data_run(fault="wipe").write(tmp_path / "w").parent).depth(DATA) == 4  # its disk lost
    # killed: its page cache outlived the process, so it led again with every write it acknowledged
    assert climb(data_run(fault="kill").write(tmp_path / "k").parent).depth(DATA) == 2
    # kafka-2 crashed after the ISR grew again: it was no longer the last replica
    assert climb(data_run(regrown=True).write(tmp_path / "b").parent).depth(DATA) == 2
    quiet = Run()
    quiet.writes = []  # nothing acknowledged: the last replica holds no acknowledged write
    assert climb(quiet.add(change(8, 10, isr=[2])).write(tmp_path / "c").parent).depth(DATA) == 1


def test_a_replica_that_lost_its_unflushed_writes_in_the_isr_and_is_then_left_alone_climbs(tmp_path: Path):
    """kafka-2 loses power at 8.5 s while in the ISR {2, 3} (writes acknowledged from 2 s), stays
    in it, and is left alone at 10 s: the third rung at 10 s, then it leads again (3.9.1, seed 64:
    explore's KIP-966 finding). The near misses: kafka-2 out of the ISR and back before it was
    left alone (it caught up), and a power loss before any write was acknowledged."""

    def run(tag: str, lost: float, rejoined: bool = False) -> int:
        r = Run().fault("lose-unflushed", ["kafka-2"], lost, took=0.5)
        if rejoined:
            r.add(change(8, 9.0, isr=[3]), change(9, 9.5, isr=[2, 3]))
        r.add(change(10, 10, isr=[2]), change(11, 22, leader=-1), change(12, 25, leader=2))
        got = climb(r.write(tmp_path / tag).parent)
        if tag == "lost":
            rungs = {w.name: w.time for w in got.waypoints if w.ladder == DATA}
            assert (rungs["last-replica-lost-unflushed"], rungs["leads-again"]) == (10 * S, 25 * S), rungs
        return got.depth(DATA)

    assert run("lost", 8.5) == 4
    assert run("rejoined", 8.5, rejoined=True) == 2
    assert run("before-writes", 1.0) == 2


def test_the_last_replica_holds_acknowledged_writes_past_its_flushed_point_unless_it_flushed_them(tmp_path: Path):
    def alone(tag: str, writes: list[float], stop: float | None = None, **config: str) -> int:
        r = data_run(crash=False)
        r.writes, r.broker_config = writes, config
        if stop is not None:  # kafka-2 shut down cleanly (its logs flushed) and started again
            r.fault("stop", ["kafka-2"], stop, took=0.3).fault("start", ["kafka-2"], stop + 0.4, took=0.3)
        return climb(r.write(tmp_path / tag).parent).depth(DATA)

    assert alone("acked-before", [3.0, 4.0]) == 2  # acknowledged before the shrink, never flushed
    assert alone("acked-while-alone", [12.0]) == 2
    assert alone("every-message", [3.0, 12.0], **{"log.flush.interval.messages": "1"}) == 1
    assert alone("every-10", [3.0, 12.0], **{"log.flush.interval.messages": "10"}) == 2
    assert alone("stopped-after", [3.0, 4.0], stop=6.0) == 1  # flushed at its clean stop, nothing since
    assert alone("stopped-then-acked", [3.0, 4.0, 8.0], stop=6.0) == 2
    r = data_run(crash=False)
    r.writes = [3.0, 4.0, 12.5]
    r.fault("stop", ["kafka-2"], 6.0, took=0.3).fault("start", ["kafka-2"], 6.4, took=0.3)
    (rung,) = [w for w in climb(r.write(tmp_path / "when").parent).waypoints if w.name == "isr-one-past-flush"]
    assert rung.time == 12.5 * S + 2_000_000 and rung.nodes == ("kafka-2",)  # the acknowledgement's moment


def test_the_quorum_ladder_climbs_to_two_claims(tmp_path: Path):
    bad = split_brain(True).add(leader_change(100, 0.5, 1, 1))
    got = climb(bad.write(tmp_path / "bad").parent)
    assert got.depth(QUORUM) == 3, got.waypoints
    (two,) = [w for w in got.waypoints if w.name == "two-claims"]
    assert two.nodes == ("kafka-1", "kafka-2") and two.time >= 12 * S
    # the old leader killed, not cut off: it does not run beside the new one
    killed = split_brain(False).add(leader_change(100, 0.5, 1, 1))
    assert climb(killed.write(tmp_path / "killed").parent).depth(QUORUM) == 0
    resigned = split_brain(True).add(leader_change(100, 0.5, 1, 1)).views("kafka-1", 10.5, 60, (2, 2))
    assert climb(resigned.write(tmp_path / "resigned").parent).depth(QUORUM) == 2


def test_the_quorum_ladder_reads_a_cut_from_its_grudge_whichever_nodes_it_names(tmp_path: Path):
    """A bridge names its bridge (kafka-3) and parts the others: the quorum leader kafka-1 cut from
    kafka-2 is the first rung (the serial mix's split brain on 3.6.2 came from one). The near miss:
    a bridge through kafka-1 that parts kafka-2 from kafka-3 leaves the leader its voters."""

    def bridge(leader_cut: bool) -> Run:
        grudge = (
            {"kafka-1": ["kafka-2"], "kafka-2": ["kafka-1"]}
            if leader_cut
            else {"kafka-2": ["kafka-3"], "kafka-3": ["kafka-2"]}
        )
        r = Run().fault("partition", ["kafka-3" if leader_cut else "kafka-1"], 10, grudge=grudge, shape="bridge")
        r.fault("heal", ["kafka-1", "kafka-2", "kafka-3"], 40)
        r.views("kafka-2", 12, 60, (2, 2)).views("kafka-3", 12, 60, (2, 2)).views("kafka-1", 40.5, 60, (2, 2))
        return r.add(leader_change(100, 0.5, 1, 1), leader_change(9, 12, 2, 2))

    got = climb(bridge(True).write(tmp_path / "cut").parent)
    assert got.depth(QUORUM) == 3, got.waypoints
    assert [w.nodes for w in got.waypoints if w.name == "leader-isolated"] == [("kafka-1",)]
    assert climb(bridge(False).write(tmp_path / "kept").parent).depth(QUORUM) == 0


def test_the_voter_ladder_climbs_to_a_leader_below_the_old_high_watermark(tmp_path: Path):
    def voter_run(below: bool) -> Run:
        r = (
            Run()
            .fault("wipe", ["kafka-1"], 10, took=3)
            .add(leader_change(100, 0.5, 1, 1), leader_change(101, 15, 2, 2))
        )
        return r.leads("kafka-2", 15, 60, 2, 3 if below else None)

    got = climb(voter_run(True).write(tmp_path / "below").parent)
    assert got.depth(VOTER) == 3, got.waypoints
    assert [w.nodes for w in got.waypoints if w.ladder == VOTER] == [("kafka-1",), ("kafka-2",), ("kafka-2",)]
    assert climb(voter_run(False).write(tmp_path / "kept").parent).depth(VOTER) == 2
    assert climb(Run().write(tmp_path / "none").parent).depths == {DATA: 1, QUORUM: 0, VOTER: 0}


def test_a_3x_log_names_its_elections_leaders_by_their_epochs(tmp_path: Path):
    """3.x's dump tool prints a LeaderChange record's type only (`LEADER_CHANGE`, no leaderId):
    the leader of its batch's epoch comes from the quorum's samples and views. The near miss: no
    sample names epoch 2's leader, so the election after the wipe is not known."""

    def voter_run_3x(named: bool) -> Run:
        r = (
            Run()
            .fault("wipe", ["kafka-1"], 10, took=3)
            .add(
                {**rec(100, 0.5, "LEADER_CHANGE", batch_epoch=1), "version": None, "data": None},
                {**rec(101, 15, "LEADER_CHANGE", batch_epoch=2), "version": None, "data": None},
            )
        )
        return r.leads("kafka-2", 15, 60, 2, 3) if named else r

    got = climb(voter_run_3x(True).write(tmp_path / "named").parent)
    assert got.depth(VOTER) == 3, got.waypoints
    assert [w.nodes for w in got.waypoints if w.ladder == VOTER][1] == ("kafka-2",)
    assert climb(voter_run_3x(False).write(tmp_path / "unnamed").parent).depth(VOTER) == 1
