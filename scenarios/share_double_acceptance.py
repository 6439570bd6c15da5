"""share-double-acceptance: a member's acceptance of a record it no longer holds is answered as
taken, after another member accepted the record.

KIP-932: a record's acquisition lock bounds how long its member may take to acknowledge it; once
the lock expires the record is available again, and an acknowledgement of it by the member that
let the lock run out fails. The broker's `SharePartition.acknowledge` (4.1.0 to 4.4.0, read from
the sources and 4.4.0's bytecode) checks the owner of a record still in flight, but it first skips
an acknowledgement batch whose offsets all lie below the share-partition start offset ("All
offsets in the acknowledgement batch ... are already archived", at TRACE) and answers it with no
error. So when another member was given the record and accepted it, and the start offset moved
past it, the late acceptance is answered NONE: the application is told its acceptance was taken,
and the group's state holds the record accepted once. No JIRA names it (the nearest are
KAFKA-19476 and KAFKA-19859), and no release is known to be without it.

Story (three brokers, no fault; four Java members of one share group on one partition, a lock of
3 s; a third of the members' polls hold their records past the lock before accepting them):
1. The partition's leader's `SharePartition` logger is set to TRACE, once the leader has loaded
   the share partition (Kafka refuses a logger that does not exist yet).
2. The members poll and accept for a minute. A member that held its records past the lock
   accepts them late: another member has often been given them and accepted them by then.
3. The script reads the brokers' logs for the acknowledgement batches skipped as already archived
   (the scenario's own evidence, `late-accept-below-start`).

Shown as `share-double-acceptance`: two members' acceptances of one record, both answered ok.
"""

from __future__ import annotations

import re
from typing import Any

from kafka_chaos.scenarios.base import LOSS, Scenario
from kafka_chaos.scenarios.script import Script

LOGGER = "kafka.server.share.SharePartition"
#: The broker's line for an acknowledgement it skipped (4.1.0 to 4.4.0).
SKIPPED = re.compile(
    r"^\[(?P<at>[^\]]+)\].*All offsets in the acknowledgement batch .*firstOffset=(?P<first>\d+), "
    r"lastOffset=(?P<last>\d+).* are already archived: .*:(?P<topic>[^:\s]+)-(?P<partition>\d+)(?: \(.*\))?\s*$"
)
FINDING = "late-accept-below-start"
RUN_S = 60.0

WORKLOAD = {
    "client": "java",
    "consumer": "share",
    "keys": 1,
    "concurrency": 4,
    "rate": 100.0,
    "share_lock_ms": 3000,
    "share_release": 0.0,
    "share_stalls": 0.3,
    "time_limit": 100.0,
    "final_time_limit": 30.0,
}


def skipped_batches(log: str) -> list[dict[str, Any]]:
    """The acknowledgement batches a broker's log says it skipped as already archived."""
    out = []
    for line in log.splitlines():
        m = SKIPPED.match(line)
        if m:
            key = f"{m['topic']}/{m['partition']}"
            out.append({"at": m["at"], "key": key, "first": int(m["first"]), "last": int(m["last"])})
    return out


def tracing(s: Script, alias: str) -> bool:
    """Whether the broker took the logger's level (False: its share partition not loaded yet)."""
    try:
        s.log_level(LOGGER, "TRACE", alias)
    except RuntimeError:
        return False
    return True


def script(s: Script) -> None:
    # The logger exists once the share partition's leader has loaded it: on the first delivery.
    leader = s.name("L", s.alias(s.partition(s.key(0)).leader))
    s.wait_for(f"{leader} logs {LOGGER} at TRACE", lambda: tracing(s, leader), 30, every_s=1.0)
    s.sleep(RUN_S)
    batches = [
        {**batch, "broker": node.alias}
        for node in s.cluster.brokers
        for batch in skipped_batches(s.server_log(node.alias))
        if batch["key"].startswith(f"{s.topic}/")
    ]
    s.note(f"{len(batches)} acknowledgement batches skipped as already archived")
    if batches:
        s.observe(FINDING, count=len(batches), batches=batches)


SCENARIO = Scenario(
    name="share-double-acceptance",
    story=__doc__,
    script=script,
    brokers=3,
    workload=WORKLOAD,
    expect=lambda version, mv: LOSS,
    shows=("share-double-acceptance",),
    since="4.1.0",
    references=(
        "KIP-932: an acknowledgement of a record whose acquisition lock expired fails",
        "SharePartition.acknowledge skips a batch below the start offset with no error (4.1.0 to 4.3.x sources, "
        "4.4.0 bytecode); no JIRA or fix known (nearest: KAFKA-19476, KAFKA-19859)",
    ),
    summary="a member's late acceptance answered as taken after another member accepted the record",
)
