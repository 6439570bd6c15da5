"""auto-commit-crash: a consumer group with auto-commit skips the records a member had polled
but not handled when it crashed; the same group committing synchronously after handling each
poll (`sync-commit-crash`) skips nothing.

Every process reads as a member of one group (`--consumer subscribe`). Now and then a member
crashes right after a poll returned records, before it handled them (`--member-crashes`): the
application never saw those records, and its `finally` block closes the consumer. With
`enable.auto.commit=true` a consumer's close commits the positions of everything its polls
returned (kafka-python's `close(autocommit=True)`, the Java client's close, librdkafka's close
of the offsets it stored for what consume() returned), so the group's committed offset jumps
past the records nobody handled. The member that takes the partition over resumes there: the
records are skipped. The checker sees acknowledged values that no member delivered while later
values of the same key were delivered: `lost-write` (lost to the application, not to Kafka; the
log still holds them), and `unseen` for skipped values that no later delivered value of their
key follows (a skip at a key's end: the group's drain resumes past them too).

With `--commit sync` the member commits {key: next offset} only after it handled a poll's
records; a crash before that commits nothing, the next member resumes at the last commit and
reads the records again (at least once): nothing is skipped.

Expected: skips on every Kafka version and with every client, since this is the clients'
documented auto-commit behaviour, not a broker bug: the Java client's documentation warns
that auto-commit gives at-least-once only if records are handled before the next poll or
close. No faults: the cluster stays healthy throughout, the group only sees its members come
and go.
"""

from __future__ import annotations

from dataclasses import replace

from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario
from kafka_chaos.scenarios.script import Script

SECONDS = 30


def script(s: Script) -> None:
    s.note(f"members crash after some polls for {SECONDS} s; no broker fault")
    s.sleep(SECONDS)


_WORKLOAD = {
    "consumer": "subscribe",
    # A fifth of the polls that return records: in CI's load the group barely held keys, and at
    # 0.05 no member crashed at all (docs/measurements.md, 2026-11-25).
    "member_crashes": 0.2,
    "keys": 4,
    "concurrency": 6,
    "rate": 300.0,
    "time_limit": 120.0,
    "final_time_limit": 60.0,
}

SCENARIO = Scenario(
    name="auto-commit-crash",
    story=__doc__,
    script=script,
    brokers=3,
    workload={**_WORKLOAD, "commit": "auto"},
    expect=lambda version, mv: LOSS,
    shows=("lost-write", "unseen"),
    references=(
        "KafkaConsumer documentation (auto-commit): at-least-once only when every record a poll returned "
        "is handled before the next poll or close",
    ),
)

# The same group and crashes; only the commits differ.
CONTROL = replace(
    SCENARIO,
    name="sync-commit-crash",
    workload={**_WORKLOAD, "commit": "sync"},
    expect=lambda version, mv: SAFE,
    references=("a synchronous commit after the records are handled: a crash before it re-delivers, never skips",),
    summary="the auto-commit-crash members with synchronous commits after each poll: the control, nothing skipped",
)
