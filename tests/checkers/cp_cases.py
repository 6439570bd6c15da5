"""For every control-plane anomaly of ../shared/anomalies.md, a run that has it (bad=True) and a
near-identical one that does not (bad=False), from cp_builder's healthy run."""

from __future__ import annotations

from collections.abc import Callable

from tests.checkers.cp_builder import Run, change, fence, rec


def _leader_cut_off(r: Run, bad: bool, at: float, until: float) -> Run:
    """kafka-1 (the quorum leader) cut off from `at` to `until` (bad), or killed then (the near
    miss: a dead node's last view is no claim), while kafka-2 leads epoch 2 from `at` + 2 s;
    kafka-1's broker is fenced and its controller sees the new leader either way."""
    others = {"kafka-1": ["kafka-2", "kafka-3"], "kafka-2": ["kafka-1"], "kafka-3": ["kafka-1"]}
    if bad:
        r.fault("partition", ["kafka-1"], at, grudge=others, shape="isolate").fault("heal", list(r.logs), until)
    else:
        r.fault("kill", ["kafka-1"], at).fault("start", ["kafka-1"], until)
    elected = at + 2
    r.views("kafka-2", elected, 60, (2, 2)).views("kafka-3", elected, 60, (2, 2)).views(
        "kafka-1", until + 0.5, 60, (2, 2)
    )
    return r.add(fence(8, at + 5, 1), rec(9, elected, "NO_OP_RECORD", batch_epoch=2))


def split_brain(bad: bool) -> Run:
    """kafka-1 (the quorum leader) cut off from 10 s to 40 s keeps holding itself leader of epoch 1
    while kafka-2 leads epoch 2 from 12 s (KAFKA-15489). Near miss: kafka-1 killed instead; its
    last view is not a claim."""
    return _leader_cut_off(Run(), bad, 10, 40)


def split_brain_after_restart(bad: bool) -> Run:
    """kafka-1, the quorum leader, killed from 10 s to 20 s while kafka-2 leads epoch 2 from 12 s;
    its file says (1, 1), what it held as it went down, written back as it starts again, until
    30 s (bad) or 27 s (near miss), then it follows kafka-2. Once it runs, that view is a claim
    (the contract exempts only a dead node's view): beside kafka-2's from its start, for 9 s (past
    1.5 x 2 + 5 s) or 6 s. The down stretch is no claim: counted from kafka-2's election at 12 s,
    even the near miss would be past the bound."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 20)
    r.views("kafka-2", 12, 60, (2, 2)).views("kafka-3", 12, 60, (2, 2))
    follows = 30 if bad else 27
    r.views("kafka-1", 20.5, follows, (1, 1)).views("kafka-1", follows, 60, (2, 2))
    return r.add(fence(8, 15, 1), rec(9, 12, "NO_OP_RECORD", batch_epoch=2))


def split_brain_beside_the_file_a_dead_process_left(bad: bool) -> Run:
    """kafka-1, the quorum leader, killed from 10 s to 20 s while kafka-2 leads epoch 2 from 12 s;
    its JVM then takes until 30 s to follow kafka-2 (a slow start on a loaded machine). Its file
    says (1, 1) from 20 s to 30 s, written by its new process at 20.5 s (KRaft starts a former
    leader as resigned in its epoch: a claim, 9.5 s beside kafka-2's, past 8 s),
    or (near miss) left by the process the kill ended, never written since: the dead node's last
    view, which the contract says is no claim."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 20)
    r.views("kafka-2", 12, 60, (2, 2)).views("kafka-3", 12, 60, (2, 2))
    r.views("kafka-1", 20.5, 30, (1, 1), written=20.5 if bad else -1.0).views("kafka-1", 30, 60, (2, 2))
    return r.add(fence(8, 15, 1), rec(9, 12, "NO_OP_RECORD", batch_epoch=2))


def split_brain_after_a_pause(bad: bool) -> Run:
    """kafka-1, the quorum leader, paused for 0.5 s at 8 s, then cut off from 16 s to 46 s while
    kafka-2 leads epoch 2 from 18 s; kafka-1 keeps holding itself leader of epoch 1 (KAFKA-15489,
    as a 3.6.2 cluster did). A pause carries no claim over: this is a split brain (checked VALID at
    192bec4). Near miss: kafka-1 is killed at 16 s instead of cut off: its last view is no claim."""
    r = Run().fault("pause", ["kafka-1"], 8).fault("resume", ["kafka-1"], 8.5)
    return _leader_cut_off(r, bad, 16, 46)


def double_leader(bad: bool) -> Run:
    """From 30 s kafka-2 holds itself leader of epoch 1, which kafka-1 led (near miss: of epoch 2)."""
    epoch = 1 if bad else 2
    return (
        Run()
        .views("kafka-2", 30, 60, (2, epoch))
        .views("kafka-1", 30, 60, (2, epoch))
        .views("kafka-3", 30, 60, (2, epoch))
    )


def double_leader_in_log(bad: bool) -> Run:
    """Two LeaderChange records of epoch 1 naming different leaders (near miss: the second in epoch 2)."""
    return Run().add(
        rec(8, 5, "LeaderChange", batch_epoch=1, leaderId=1, voters=[], grantingVoters=[]),
        rec(9, 30, "LeaderChange", batch_epoch=1 if bad else 2, leaderId=2, voters=[], grantingVoters=[]),
    )


def epoch_regression(bad: bool) -> Run:
    """kafka-3 restarts at 20 s and holds epoch 0 for a second before epoch 1 again; near miss: it
    was wiped (a wiped node starts again from nothing)."""
    r = Run().fault("kill" if bad else "wipe", ["kafka-3"], 20, took=2)
    if bad:
        r.fault("start", ["kafka-3"], 22)
    return r.views("kafka-3", 20.5, 22.5, None).views("kafka-3", 22.5, 23.5, (1, 0))


def divergence(bad: bool) -> Run:
    """kafka-3's record at offset 8 was written in another epoch; near miss: offset 8 is not
    committed (the quorum's final high watermark is 8)."""
    r = Run().add(rec(8, 5, "NO_OP_RECORD"), nodes=("kafka-1", "kafka-2"))
    r.add(rec(8, 5, "NO_OP_RECORD", batch_epoch=2), nodes=("kafka-3",))
    r.final_hw = None if bad else 8
    return r


def divergence_not_fetched(bad: bool) -> Run:
    """kafka-3 holds offset 9 from another epoch (an uncommitted tail of its own) and the last sample
    has its log end at 9: it has not fetched past it since. Compared all the same below the quorum's
    final high watermark, 10 (the contract names no exemption for a node that has not fetched); near
    miss: the final high watermark is 9, and offset 9 is not below it."""
    r = Run().add(rec(8, 5, "NO_OP_RECORD"))
    r.add(rec(9, 6, "NO_OP_RECORD"), nodes=("kafka-1", "kafka-2"))
    r.add(rec(9, 6, "NO_OP_RECORD", batch_epoch=2), nodes=("kafka-3",))
    r.final_hw = None if bad else 9
    return r.behind("kafka-3", 59.5, 61, 9)


def divergence_shorter(bad: bool) -> Run:
    """A wiped node may hold less, never something else: kafka-3 lacks offsets 8 and 9 (near miss)
    or holds another record at 9."""
    r = Run().add(rec(8, 5, "NO_OP_RECORD"), rec(9, 6, "NO_OP_RECORD"), nodes=("kafka-1", "kafka-2"))
    if bad:
        r.add(rec(9, 6, "TOPIC_RECORD", name="other", topicId="T9"), nodes=("kafka-3",))
    return r


def divergence_committed_by_its_leader(bad: bool) -> Run:
    """kafka-3 led epoch 2 from 5 to 10 s and wrote offsets 8 and 9; kafka-1 then led epoch 3 and
    wrote others there, and kafka-3 never fetched again (the last sample has its log end at 8: it
    died on the truncation below its high watermark, KAFKA-14077). Its records were committed: the
    samples gave a high watermark of 10 while it led, and 10 at the end. Near miss: neither side's
    offsets 8 and 9 were ever committed (the samples gave 8 while it led and 8 at the end)."""
    r = Run().add(rec(8, 12, "NO_OP_RECORD", batch_epoch=3), rec(9, 12, "NO_OP_RECORD", batch_epoch=3))
    r.logs["kafka-3"] = r.logs["kafka-3"][:-2] + [
        rec(8, 6, "TOPIC_RECORD", batch_epoch=2, name="gone", topicId="T8"),
        rec(9, 7, "NO_OP_RECORD", batch_epoch=2),
    ]
    r.final_hw = None if bad else 8
    return r.leads("kafka-3", 5, 10, 2, hw=10 if bad else 8).behind("kafka-3", 59.5, 61, 8)


def leader_not_in_isr(bad: bool) -> Run:
    """The ISR of chaos/0 shrinks to [3] while 2 leads (near miss: to [2])."""
    return Run().add(change(8, 5, isr=[3] if bad else [2]))


def leader_not_in_isr_elected(bad: bool) -> Run:
    """A change elects 1, which is not in the ISR (near miss: it also sets the ISR to [1])."""
    return Run().add(change(8, 5, leader=1) if bad else change(8, 5, leader=1, isr=[1]))


def partition_epoch_regression(bad: bool) -> Run:
    """chaos/0 moves to 3 (epochs 1, 1), then a PartitionRecord sets it again with epochs 0, 0
    (near miss: 1, 1)."""
    e = 0 if bad else 1
    again = rec(
        9,
        6,
        "PARTITION_RECORD",
        partitionId=0,
        topicId="T0",
        replicas=[1, 2, 3],
        isr=[2, 3],
        leader=3,
        leaderEpoch=e,
        partitionEpoch=e,
    )
    return Run().add(change(8, 5, leader=3), again)


def inactive_leader(bad: bool) -> Run:
    """Broker 3 is fenced, then made leader of chaos/0 (near miss: broker 1 is the one fenced)."""
    return Run().add(fence(8, 5, 3 if bad else 1), change(9, 6, leader=3))


def inactive_leader_shutdown(bad: bool) -> Run:
    """Broker 3 enters controlled shutdown, then is made leader (near miss: it registers again first)."""
    shutdown = rec(8, 5, "BROKER_REGISTRATION_CHANGE_RECORD", brokerId=3, brokerEpoch=2, inControlledShutdown=1)
    r = Run().add(shutdown)
    if not bad:
        r.add(
            rec(9, 5.5, "REGISTER_BROKER_RECORD", brokerId=3, brokerEpoch=9, fenced=False),
        )
    return r.add(change(10, 6, leader=3))


def inactive_leader_named_again(bad: bool) -> Run:
    """Broker 2, chaos/0's leader, is fenced at 5 s; a change at 6 s names it leader again (the
    contract's replay: any `Leader` other than -2 sets the leader, even the same one; exempt at
    192bec4). Near miss: the change at 6 s leaves the leader alone (-2) and only shrinks the ISR."""
    return Run().add(fence(8, 5, 2), change(9, 6, leader=2 if bad else -2, isr=[2]))


def fenced_in_isr(bad: bool) -> Run:
    """Broker 1 is fenced, then added to the ISR (near miss: added first, fenced after)."""
    if bad:
        return Run().add(fence(8, 5, 1), change(9, 6, isr=[2, 3, 1]))
    return Run().add(change(8, 5, isr=[2, 3, 1]), fence(9, 6, 1))


def unfenced_down_broker(bad: bool) -> Run:
    """kafka-3 killed from 10 s to 40 s is fenced at 30 s (bound: 9 + 5 s after 10 s); near miss: at 19 s."""
    at = 30 if bad else 19
    r = Run().fault("kill", ["kafka-3"], 10).fault("start", ["kafka-3"], 40)
    return r.add(change(8, at, isr=[2]), fence(9, at, 3), fence(10, 42, 3, fenced=-1))


def unfenced_after_a_slow_election(bad: bool) -> Run:
    """kafka-1, the quorum leader and a broker, killed at 10 s (until 50 s); the next leader, kafka-2,
    is elected only at 15 s (DescribeQuorum fails meanwhile). A controller that takes over starts
    every broker's session afresh, so the bound runs from 15 s: 15 + 9 + 5 = 29 s. Near miss:
    kafka-1 fenced at 28 s (past the bound from the kill, 24 s: the false alarm of 4.3.1 under
    load); bad: at 30 s."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 50)
    r.sample_errors = [(10.5, 15)]
    r.leads("kafka-2", 15, 1000, 2)
    r.views("kafka-2", 15, 60, (2, 2)).views("kafka-3", 15, 60, (2, 2)).views("kafka-1", 50.5, 60, (2, 2))
    at = 30 if bad else 28
    return r.add(rec(8, 15, "NO_OP_RECORD", batch_epoch=2), fence(9, at, 1), fence(10, 52, 1, fenced=-1))


def unfenced_after_quorum_loss(bad: bool) -> Run:
    """kafka-2 and kafka-3 killed at 10 s: no majority of voters until kafka-2 starts at 20 s; kafka-3
    (down until 50 s) fenced at 32 s: within 9 + 5 s of the majority's return (near miss) or not,
    when its start at 20 s is replaced by one at 15 s (bad: 15 + 14 = 29 < 32)."""
    r = Run().fault("kill", ["kafka-2", "kafka-3"], 10)
    r.fault("start", ["kafka-2"], 15 if bad else 20).fault("start", ["kafka-3"], 50)
    return r.add(change(8, 32, leader=2, isr=[2]), fence(9, 32, 3), fence(10, 52, 3, fenced=-1))


def unfenced_without_a_dynamic_seat(bad: bool) -> Run:
    """kafka-2's disk wiped at 8 s, kafka-3 killed from 10 s to 50 s and never fenced. In a dynamic
    quorum (near miss) kafka-2 came back an observer, its seat held by its lost directory: kafka-1
    alone is no majority, so no controller can fence kafka-3. In a static quorum kafka-2 is a voter
    again, and kafka-1 with it must fence kafka-3 by 24 s."""
    r = Run(quorum="static" if bad else "dynamic").fault("wipe", ["kafka-2"], 8, took=1)
    return r.fault("kill", ["kafka-3"], 10).fault("start", ["kafka-3"], 50)


def unfenced_while_unsampled(bad: bool) -> Run:
    """kafka-1, the quorum leader, killed at 10 s: DescribeQuorum fails until 30 s, so the last
    high watermark sampled before the deadline (24 s) predates every record since. kafka-1's
    broker is fenced at 26 s, after the deadline; near miss: at 19 s, before it."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 40)
    r.sample_errors = [(10.5, 30)]
    r.views("kafka-2", 11, 60, (2, 2)).views("kafka-3", 11, 60, (2, 2)).views("kafka-1", 40.5, 60, (2, 2))
    at = 26 if bad else 19
    return r.add(rec(8, 11, "NO_OP_RECORD", batch_epoch=2), fence(9, at, 1), fence(10, 42, 1, fenced=-1))


def unfenced_after_pause_and_kill(bad: bool) -> Run:
    """kafka-3 paused at 10 s, killed at 12 s and started at 15 s (a start ends its pause too),
    registered again unfenced at 17 s; bad: the start at 15 s is kafka-2's, so kafka-3 stays
    paused and killed, and unfenced."""
    r = Run().fault("pause", ["kafka-3"], 10).fault("kill", ["kafka-3"], 12)
    r.fault("start", ["kafka-2" if bad else "kafka-3"], 15)
    return r.add(rec(8, 17, "REGISTER_BROKER_RECORD", brokerId=3, brokerEpoch=8, fenced=False))


def unfenced_after_restart(bad: bool) -> Run:
    """kafka-3 stopped at 10 s is never fenced; near miss: a wipe started it again at 12 s (the
    kafka-14139 scenario's B), while the bad run's wipe was of kafka-2."""
    r = Run().fault("stop", ["kafka-3"], 10).fault("wipe", ["kafka-2" if bad else "kafka-3"], 12)
    return r


def stale_isr_member(bad: bool) -> Run:
    """kafka-3 cut off from chaos/0's leader (kafka-2) from 5 s to 58 s, the leader still reaching
    the controller: the ISR drops 3 at 57 s, past 1.5 x 30 + 5 s after the cut took effect (near
    miss: at 40 s)."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut").fault("heal", ["kafka-1"], 58)
    return r.add(change(8, 57 if bad else 40, isr=[2]))


def stale_isr_member_of_the_active_controller(bad: bool) -> Run:
    """kafka-3, a follower in chaos/0's ISR and the quorum leader (epoch 1), is killed at 5 s and
    started at 58 s; kafka-1 leads epoch 2 from 7 s, and chaos/0's leader (kafka-2) reaches it
    throughout. kafka-3's leftover quorum-state still names it leader while it is dead: that is no
    active controller (at 192bec4 it exempted every fault on it). Bad: kafka-3 stays in the ISR;
    near miss: the ISR drops it at 20 s."""
    r = Run().fault("kill", ["kafka-3"], 5).fault("start", ["kafka-3"], 58)
    for node in ("kafka-1", "kafka-2", "kafka-3"):
        r.views(node, 0, 7, (3, 1))
    r.views("kafka-1", 7, 60, (1, 2)).views("kafka-2", 7, 60, (1, 2)).views("kafka-3", 58.5, 60, (1, 2))
    r.leads("kafka-3", 0, 5, 1).leads("kafka-1", 7, 1000, 2)
    r.sample_errors = [(5, 7)]
    r.add(rec(8, 7, "NO_OP_RECORD", batch_epoch=2), fence(9, 12, 3))
    return r if bad else r.add(change(10, 20, isr=[2]))


def stale_isr_member_quorum_only(bad: bool) -> Run:
    """The same cut of kafka-3 from chaos/0's leader from 5 s to 58 s, and kafka-3 never leaves the
    ISR; near miss: the cut was of the controller listener only (`listener`, the quorum-leader cut on
    combined nodes), so kafka-3 goes on fetching and stays in sync."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    scoped = {} if bad else {"port": 9093, "listener": "CONTROLLER"}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut", **scoped)
    return r.fault("heal", ["kafka-1"], 58)


def stale_isr_member_replaced(bad: bool) -> Run:
    """kafka-3 cut off from chaos/0's leader (kafka-2) at 5 s; at 10 s another partition replaces
    that one (a partition replaces every rule of the one before) and cuts kafka-3 from kafka-1
    only, until the heal at 58 s: kafka-3 fetches again and stays in the ISR rightly (near miss).
    Bad: the new partition keeps kafka-3 cut from kafka-2 too (bound 1.5 x 10 + 5 s)."""
    first = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    second = {"kafka-3": ["kafka-1"], "kafka-1": ["kafka-3"]}
    if bad:
        second = {"kafka-3": ["kafka-1", "kafka-2"], "kafka-1": ["kafka-3"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=first, shape="cut")
    r.fault("partition", ["kafka-3"], 10, grudge=second, shape="cut").fault("heal", ["kafka-1"], 58)
    r.settings["replica.lag.time.max.ms"] = 10000
    return r


def stale_isr_member_deleted(bad: bool) -> Run:
    """kafka-3 cut off from chaos/0's leader from 5 s to 58 s and still in its ISR; near miss: the
    topic was deleted at 4 s (as the harness deletes its readiness topic), so there is no ISR."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut").fault("heal", ["kafka-1"], 58)
    return r if bad else r.add(rec(8, 4, "REMOVE_TOPIC_RECORD", topicId="T0"))


def stale_isr_member_idle(bad: bool) -> Run:
    """chaos/0 takes no write after 4 s; kafka-3 is cut off from its leader from 5 s to 58 s and
    still in the ISR at the end: the contract's bound runs from the cut taking effect, whether or
    not the partition took a write since (Kafka itself counts such a follower caught up: KAFKA-4485).
    Near miss: the ISR drops kafka-3 at 54 s, a second inside 1.5 x 30 + 5 s after the cut."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut").fault("heal", ["kafka-1"], 58)
    r.writes = [2.0, 3.0, 4.0]
    return r if bad else r.add(change(8, 54, isr=[2]))


def stale_isr_member_late(bad: bool) -> Run:
    """chaos/0 is idle from 4 s; kafka-3 is cut off from its leader at 5 s; writes start again at
    15 s, and the ISR drops kafka-3 at 26 s: past 1.5 x 10 + 5 s after the cut took effect, though
    inside that bound after the first write (near miss: at 24 s, inside it after the cut too)."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut").fault("heal", ["kafka-1"], 58)
    r.settings["replica.lag.time.max.ms"] = 10000
    r.writes = [2.0, 3.0, 4.0] + [float(t) for t in range(15, 58)]
    return r.add(change(8, 26 if bad else 24, isr=[2]))


def stuck_broker_metadata(bad: bool) -> Run:
    """After a heal at 5 s, kafka-3's log end offset stays at 8 while the quorum moves on, for 45 s
    (near miss: 30 s)."""
    r = Run().fault("pause", ["kafka-3"], 2).fault("resume", ["kafka-3"], 5)
    r.hw_per_s = 1
    return r.behind("kafka-3", 10, 55 if bad else 40, 8)


def stuck_from_the_heal(bad: bool) -> Run:
    """kafka-3 paused from 2 s to 5 s stays behind at log end 8 from the heal on, while the quorum
    moves on, to the end of the samples, 36 s after the heal: it has stayed behind since the heal,
    not since the first sample after it (a real run's samples end 35 s after the heal and cannot
    hold a stretch longer than that from its first sample). Near miss: it fetches again at 39 s."""
    r = Run().fault("pause", ["kafka-3"], 2).fault("resume", ["kafka-3"], 5)
    r.hw_per_s = 1
    return r.behind("kafka-3", 5, 1000 if bad else 39, 8)


Case = Callable[[bool], Run]
#: name -> the builders whose bad run has exactly that anomaly
CASES: dict[str, list[Case]] = {
    "quorum-split-brain": [
        split_brain,
        split_brain_after_restart,
        split_brain_beside_the_file_a_dead_process_left,
        split_brain_after_a_pause,
    ],
    "quorum-double-leader": [double_leader, double_leader_in_log],
    "quorum-epoch-regression": [epoch_regression],
    "metadata-divergence": [divergence, divergence_shorter, divergence_not_fetched, divergence_committed_by_its_leader],
    "leader-not-in-isr": [leader_not_in_isr, leader_not_in_isr_elected],
    "partition-epoch-regression": [partition_epoch_regression],
    "inactive-leader": [inactive_leader, inactive_leader_shutdown, inactive_leader_named_again],
    "fenced-in-isr": [fenced_in_isr],
    "unfenced-down-broker": [
        unfenced_down_broker,
        unfenced_after_quorum_loss,
        unfenced_after_restart,
        unfenced_without_a_dynamic_seat,
        unfenced_while_unsampled,
        unfenced_after_pause_and_kill,
        unfenced_after_a_slow_election,
    ],
    "stale-isr-member": [
        stale_isr_member,
        stale_isr_member_idle,
        stale_isr_member_late,
        stale_isr_member_deleted,
        stale_isr_member_replaced,
        stale_isr_member_quorum_only,
        stale_isr_member_of_the_active_controller,
    ],
    "stuck-broker-metadata": [stuck_broker_metadata, stuck_from_the_heal],
}
