"""For every control-plane anomaly of ../shared/anomalies.md, a run that has it (bad=True) and a
near-identical one that does not (bad=False), from cp_builder's healthy run."""

from __future__ import annotations

from collections.abc import Callable

from tests.checkers.cp_builder import NODES, Run, change, fence, rec

#: kafka-1 cut off from the two other nodes
ISOLATE_1 = {"kafka-1": ["kafka-2", "kafka-3"], "kafka-2": ["kafka-1"], "kafka-3": ["kafka-1"]}


def leader_change(offset: int, t: float, leader: int, epoch: int) -> dict:
    """The LeaderChange record a new quorum leader writes first in its epoch."""
    return rec(offset, t, "LeaderChange", batch_epoch=epoch, leaderId=leader, voters=[], grantingVoters=[])


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
    return r.add(fence(8, at + 5, 1), leader_change(9, elected, 2, 2))


def split_brain(bad: bool) -> Run:
    """kafka-1 (the quorum leader) cut off from 10 s to 40 s keeps holding itself leader of epoch 1
    while kafka-2 leads epoch 2 from 12 s (KAFKA-15489). Near miss: kafka-1 killed instead; its
    last view is not a claim."""
    return _leader_cut_off(Run(), bad, 10, 40)


def split_brain_after_restart(bad: bool) -> Run:
    """kafka-1, the quorum leader, killed from 10 s to 20 s while kafka-2 leads epoch 2 from 12 s;
    from 20.5 s to 30 s its file, written by its new process, names it leader of epoch 3 (bad: it
    was elected again, in a new epoch: a claim beside kafka-2's for 9.5 s, past 1.5 x 2 + 5 s), or
    of epoch 1, the one it held before the kill (near miss: KRaft starts a former leader resigned
    in its old epoch while its quorum-state file still names it; no claim until it is elected
    again: amended 2026-12-06)."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 20)
    r.views("kafka-2", 12, 60, (2, 2)).views("kafka-3", 12, 60, (2, 2))
    r.views("kafka-1", 20.5, 30, (1, 3) if bad else (1, 1)).views("kafka-1", 30, 60, None if bad else (2, 2))
    return r.add(fence(8, 15, 1), leader_change(9, 12, 2, 2))


def split_brain_beside_the_file_a_dead_process_left(bad: bool) -> Run:
    """kafka-1, the quorum leader, killed from 10 s to 20 s while kafka-2 leads epoch 2 from 12 s;
    its JVM then takes until 30 s to follow kafka-2 (a slow start on a loaded machine). Its file
    says (1, 3) from 20 s to 30 s, written by its new process at 20.5 s (elected again in a new
    epoch: a claim, 9.5 s beside kafka-2's, past 8 s), or (near miss) left by the process the kill
    ended, never written since: the dead node's last view, which the contract says is no claim."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 20)
    r.views("kafka-2", 12, 60, (2, 2)).views("kafka-3", 12, 60, (2, 2))
    r.views("kafka-1", 20.5, 30, (1, 3), written=20.5 if bad else -1.0).views("kafka-1", 30, 60, None)
    return r.add(fence(8, 15, 1), leader_change(9, 12, 2, 2))


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
    """kafka-3 holds offset 9 from another epoch (an uncommitted tail of its own), below the
    quorum's final high watermark, 10; kafka-2 answers the samples as quorum leader from 50 s on.
    Bad: its samples show kafka-3 at log end 10: it fetched from the final leader past offset 9 and
    still holds another record there. Near miss: they show kafka-3 at 9: it has not fetched past
    it from that leader, and a node cut off or down may hold an older epoch's tail until its next
    fetch truncates it (amended 2026-12-06)."""
    r = Run().add(rec(8, 5, "NO_OP_RECORD"))
    r.add(rec(9, 6, "NO_OP_RECORD"), nodes=("kafka-1", "kafka-2"))
    r.add(rec(9, 6, "NO_OP_RECORD", batch_epoch=2), nodes=("kafka-3",))
    r.leads("kafka-2", 50, 1000, 2)
    return r if bad else r.behind("kafka-3", 50, 1000, 9)


def divergence_same_epoch(bad: bool) -> Run:
    """kafka-3 holds another record at offset 9 and has not fetched past it from kafka-2, the final
    quorum leader (from 50 s on: its samples show kafka-3 at log end 9): in the same epoch as the
    others' (bad: Raft's log matching is broken, whoever fetched what), or in another (near miss: an
    uncommitted tail it has not fetched over)."""
    r = Run().add(rec(8, 5, "NO_OP_RECORD"))
    r.add(rec(9, 6, "NO_OP_RECORD"), nodes=("kafka-1", "kafka-2"))
    r.add(rec(9, 6, "TOPIC_RECORD", batch_epoch=1 if bad else 2, name="x", topicId="T9"), nodes=("kafka-3",))
    return r.leads("kafka-2", 50, 1000, 2).behind("kafka-3", 50, 1000, 9)


def divergence_shorter(bad: bool) -> Run:
    """A wiped node may hold less, never something else: kafka-3 lacks offsets 8 and 9 (near miss)
    or holds another record at 9."""
    r = Run().add(rec(8, 5, "NO_OP_RECORD"), rec(9, 6, "NO_OP_RECORD"), nodes=("kafka-1", "kafka-2"))
    if bad:
        r.add(rec(9, 6, "TOPIC_RECORD", name="other", topicId="T9"), nodes=("kafka-3",))
    return r


def divergence_committed_by_its_leader(bad: bool) -> Run:
    """kafka-3 led epoch 2 from 5 to 10 s and wrote offsets 8 and 9; kafka-1 then led epoch 3 and
    wrote others there; the samples of kafka-1, the final leader, show kafka-3 at their high
    watermark (it fetched from it past offsets 8 and 9) until 59.5 s, then at 8 (it died on the
    truncation below its high watermark, KAFKA-14077). Its records were committed: the samples gave
    a high watermark of 10 while it led, and 10 at the end. Near miss: neither side's offsets 8 and
    9 were ever committed (the samples gave 8 while it led and 8 at the end)."""
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
    is elected only at 15 s (DescribeQuorum fails meanwhile), and activated then (the first sample,
    at 15 s, has the high watermark past its LeaderChange record). A controller that takes over
    starts every broker's session afresh, so the bound runs from 15 s: 15 + 9 + 5 = 29 s. Near
    miss: kafka-1 fenced at 28 s (past the bound from the kill, 24 s: the false alarm of 4.3.1
    under load); bad: at 30 s."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 50)
    r.sample_errors = [(10.5, 15)]
    r.leads("kafka-2", 15, 1000, 2)
    r.views("kafka-2", 15, 60, (2, 2)).views("kafka-3", 15, 60, (2, 2)).views("kafka-1", 50.5, 60, (2, 2))
    at = 30 if bad else 28
    return r.add(leader_change(8, 15, 2, 2), fence(9, at, 1), fence(10, 52, 1, fenced=-1))


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
    """kafka-1, the quorum leader, killed at 10 s; kafka-2 elected at 11 s and activated then (the
    samples of 11 and 12 s); then DescribeQuorum fails until 30 s, so the last high watermark
    sampled before the deadline (25 s) predates every record since. kafka-1's broker is fenced at
    26 s, after the deadline; near miss: at 19 s, before it."""
    r = Run().fault("kill", ["kafka-1"], 10).fault("start", ["kafka-1"], 40)
    r.sample_errors = [(12.5, 30)]
    r.views("kafka-2", 11, 60, (2, 2)).views("kafka-3", 11, 60, (2, 2)).views("kafka-1", 40.5, 60, (2, 2))
    at = 26 if bad else 19
    return r.add(leader_change(8, 11, 2, 2), fence(9, at, 1), fence(10, 42, 1, fenced=-1))


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


def stale_isr_member_replication_cut(bad: bool) -> Run:
    """chaos/0's leader, kafka-2, cut off from both followers on the brokers' own listener alone
    (`listener` PLAINTEXT, the replication shape) from 5 s to 58 s: it still reaches the active
    controller, kafka-1, so the count runs. The ISR drops both at 57 s, past 1.5 x 30 + 5 s (bad),
    or at 40 s (near miss). Read as a cut of every port, the leader could not reach the controller
    and the count would pause: the bad case would pass."""
    grudge = {"kafka-2": ["kafka-1", "kafka-3"], "kafka-1": ["kafka-2"], "kafka-3": ["kafka-2"]}
    scoped = {"port": 9092, "listener": "PLAINTEXT"}
    r = Run().fault("partition", ["kafka-2"], 5, grudge=grudge, shape="replication", **scoped)
    return r.fault("heal", ["kafka-1"], 58).add(change(8, 57 if bad else 40, isr=[2]))


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
    r.add(leader_change(8, 7, 1, 2), fence(9, 12, 3))
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
    """kafka-3 is cut off from chaos/0's leader from 5 s to 58 s and still in the ISR at the end;
    chaos/0 takes writes at 2, 3 and 4 s, and (bad) one more at 30 s: counted from its completion,
    1.5 x 10 + 5 s had passed by 50 s. Near miss: no ok send wrote chaos/0 after the cut: Kafka
    holds a follower whose log ends where its leader's does as caught up, however long ago it
    fetched (KAFKA-4485), and the partition is not judged (amended 2026-12-06)."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut").fault("heal", ["kafka-1"], 58)
    r.settings["replica.lag.time.max.ms"] = 10000
    r.writes = [2.0, 3.0, 4.0] + ([30.0] if bad else [])
    return r


def stale_isr_member_late(bad: bool) -> Run:
    """chaos/0 is idle from 4 s; kafka-3 is cut off from its leader at 5 s; writes start again at
    15 s (the first completes at 15.002 s), and the count of 1.5 x 10 + 5 s runs from there, to
    35.002 s: the ISR drops kafka-3 at 36 s (bad), a second past, or at 34 s (near miss), a second
    inside (both past the bound counted from the cut: amended 2026-12-06)."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut").fault("heal", ["kafka-1"], 58)
    r.settings["replica.lag.time.max.ms"] = 10000
    r.writes = [2.0, 3.0, 4.0] + [float(t) for t in range(15, 58)]
    return r.add(change(8, 36 if bad else 34, isr=[2]))


def stale_isr_member_new_leader(bad: bool) -> Run:
    """kafka-3 killed at 5 s (fenced at 6 s, started at 58 s); chaos/0's leader moves from kafka-2
    to kafka-1 at 15 s, and the count starts again there: 1.5 x 10 + 5 s to 35 s. The ISR drops
    kafka-3 at 36 s (bad), a second past, or at 34 s (near miss), a second inside (both past the
    bound counted from the first write after the kill, 26 s: amended 2026-12-06)."""
    r = Run().fault("kill", ["kafka-3"], 5).fault("start", ["kafka-3"], 58)
    r.settings["replica.lag.time.max.ms"] = 10000
    return r.add(fence(8, 6, 3), change(9, 15, leader=1, isr=[1, 3]), change(10, 36 if bad else 34, isr=[1]))


def stale_isr_member_leader_cut_from_the_controller(bad: bool) -> Run:
    """kafka-3 killed at 5 s (fenced at 6 s, started at 58 s); kafka-1, the active controller, is
    cut off from the other nodes from 10 s to 20 s (and holds itself leader throughout): chaos/0's
    leader, kafka-2, cannot reach it, and the count pauses (amended 2026-12-06). From the first
    write after the kill (6.002 s), 1.5 x 10 + 5 s of counted time end at about 36 s: the ISR drops
    kafka-3 at 37 s (bad) or 35 s (near miss; both past the bound counted without the pause)."""
    r = Run().fault("kill", ["kafka-3"], 5).fault("start", ["kafka-3"], 58)
    r.fault("partition", ["kafka-1"], 10, grudge=ISOLATE_1, shape="isolate").fault("heal", ["kafka-1"], 20)
    r.settings["replica.lag.time.max.ms"] = 10000
    return r.add(fence(8, 6, 3), change(9, 37 if bad else 35, isr=[2]))


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


def unfenced_under_a_stall(bad: bool) -> Run:
    """kafka-3 killed from 10 s to 40 s, fenced at 25.01 s: a second past 9 + 5 s after the kill
    took effect (bad). Near miss: the host stalled 2 s inside that window (the probe slept from
    15 s to 17.1 s), which lengthens it to 26.01 s (amended 2026-12-06)."""
    r = Run().fault("kill", ["kafka-3"], 10).fault("start", ["kafka-3"], 40).stall(1, 0.1)
    if not bad:
        r.stall(15, 2.1)
    return r.add(change(8, 12, isr=[2]), fence(9, 25.01, 3), fence(10, 42, 3, fenced=-1))


def unfenced_beside_an_exit(bad: bool) -> Run:
    """kafka-3 killed from 10 s to 40 s, fenced at 25.01 s: a second past 9 + 5 s after the kill
    took effect (bad). Near miss: kafka-2 ended by itself at 11 s (the nemesis's `exit`, down until
    its start at 20 s), so no majority of the voters was up from 11 s to 20 s, and the bound counts
    from 20 s, the majority regained."""
    r = Run().fault("kill", ["kafka-3"], 10).fault("start", ["kafka-3"], 40)
    if not bad:
        r.fault("exit", ["kafka-2"], 11, took=0.0).fault("start", ["kafka-2"], 20)
    return r.add(change(8, 12, isr=[2]), fence(9, 25.01, 3), fence(10, 42, 3, fenced=-1))


def unfenced_of_its_own_exit(bad: bool) -> Run:
    """kafka-3 killed from 10 s to 40 s and fenced at 25.01 s, a second past 9 + 5 s (bad). Near
    miss: kafka-3 ended by itself at 10 s (the nemesis's `exit`), the same fencing: a node the
    nemesis did not kill, stop or pause is no case of the rule, down as it was."""
    r = Run().fault("kill" if bad else "exit", ["kafka-3"], 10).fault("start", ["kafka-3"], 40)
    return r.add(change(8, 12, isr=[2]), fence(9, 25.01, 3), fence(10, 42, 3, fenced=-1))


def stale_under_a_stall(bad: bool) -> Run:
    """kafka-3 cut off from chaos/0's leader from 5 s to 58 s; counted from the first write after
    the cut (6.002 s), 1.5 x 10 + 5 s end at 26.002 s; the ISR drops kafka-3 at 27.002 s (bad). Near
    miss: a 2 s host stall inside the window lengthens it to 28.002 s."""
    grudge = {"kafka-3": ["kafka-2"], "kafka-2": ["kafka-3"]}
    r = Run().fault("partition", ["kafka-3"], 5, grudge=grudge, shape="cut").fault("heal", ["kafka-1"], 58)
    r.settings["replica.lag.time.max.ms"] = 10000
    r.stall(1, 0.1)
    if not bad:
        r.stall(15, 2.1)
    return r.add(change(8, 27.002, isr=[2]))


def split_brain_under_a_stall(bad: bool) -> Run:
    """kafka-1 cut off at 10 s holds epoch 1 in the rounds from 12 s to 21 s beside kafka-2's epoch
    2: 9 s, a second past 1.5 x 2 + 5 s (bad). Near miss: a 2 s host stall inside the window."""
    others = {"kafka-1": ["kafka-2", "kafka-3"], "kafka-2": ["kafka-1"], "kafka-3": ["kafka-1"]}
    r = Run().fault("partition", ["kafka-1"], 10, grudge=others, shape="isolate").fault("heal", list(NODES), 35)
    r.views("kafka-2", 12, 60, (2, 2)).views("kafka-3", 12, 60, (2, 2)).views("kafka-1", 21.5, 60, (2, 2))
    r.stall(1, 0.1)
    if not bad:
        r.stall(14, 2.1)
    return r.add(fence(8, 15, 1), leader_change(9, 12, 2, 2))


def stuck_under_a_stall(bad: bool) -> Run:
    """After a heal at 5 s, kafka-3's log end offset stays at 8 while the quorum moves on, in the
    samples from 10 s to 46 s: 36 s, a second past 30 s + S (bad). Near miss: a 2 s host stall
    inside the window."""
    r = Run().fault("pause", ["kafka-3"], 2).fault("resume", ["kafka-3"], 5).stall(1, 0.1)
    if not bad:
        r.stall(20, 2.1)
    r.hw_per_s = 1
    return r.behind("kafka-3", 10, 47, 8)


Case = Callable[[bool], Run]
#: name -> the builders whose bad run has exactly that anomaly
CASES: dict[str, list[Case]] = {
    "quorum-split-brain": [
        split_brain,
        split_brain_after_restart,
        split_brain_beside_the_file_a_dead_process_left,
        split_brain_after_a_pause,
        split_brain_under_a_stall,
    ],
    "quorum-double-leader": [double_leader, double_leader_in_log],
    "quorum-epoch-regression": [epoch_regression],
    "metadata-divergence": [
        divergence,
        divergence_shorter,
        divergence_not_fetched,
        divergence_same_epoch,
        divergence_committed_by_its_leader,
    ],
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
        unfenced_under_a_stall,
        unfenced_beside_an_exit,
        unfenced_of_its_own_exit,
    ],
    "stale-isr-member": [
        stale_isr_member,
        stale_isr_member_idle,
        stale_isr_member_late,
        stale_isr_member_deleted,
        stale_isr_member_replaced,
        stale_isr_member_quorum_only,
        stale_isr_member_replication_cut,
        stale_isr_member_of_the_active_controller,
        stale_isr_member_new_leader,
        stale_isr_member_leader_cut_from_the_controller,
        stale_under_a_stall,
    ],
    "stuck-broker-metadata": [stuck_broker_metadata, stuck_from_the_heal, stuck_under_a_stall],
}
