"""Members of one share group (KIP-932; --consumer share): what a share run's processes read with.

A member polls (a `share-poll`: the records it acquired, each with its delivery count), then
acknowledges every one of them explicitly in one `share-ack`: mostly accept, a share released
(`--share-release`) or rejected (`--share-reject`), committed synchronously, each key's outcome
as the broker gave it. Some members stall past the lock before acknowledging (`--share-stalls`:
the broker takes the records back), some crash after a poll without acknowledging or closing
(`--member-crashes`: their locks run out). The final drain accepts everything, until every
offset up to the highest acknowledged one is settled (accepted or rejected, the outcome ok or
unknown, or delivered up to the limit), or the final time limit passes; then the harness reads the group's start offsets
(`share-offsets`). The history's operations are ../shared/history-format.md's "Share consumers".
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from typing import Any

from kafka_chaos.harness.names import group_id
from kafka_chaos.history.events import CLOSE, CRASH, FAIL, INFO, INVOKE, OK, SHARE_ACK, SHARE_OFFSETS, SHARE_POLL
from kafka_chaos.workloads.clients.api import SET_GROUP_CONFIG, START_OFFSETS, ClientError
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.outcomes import describe
from kafka_chaos.workloads.values import decode

_numbers = itertools.count()
#: The process number of the harness's own `share-offsets` after the drain.
OFFSETS_PROCESS = 1_000_000
#: Acknowledgement errors after which the broker certainly did not take the acknowledgement.
DEFINITE = {
    "InvalidRecordStateException": "the record is no longer acquired by this member (its lock ran out)",
    "INVALID_RECORD_STATE": "the record is no longer acquired by this member (librdkafka's name)",
}
ACCEPT, RELEASE, REJECT = "accept", "release", "reject"


class ShareProgress:
    """Which offsets of each key are settled: accepted or rejected with an ok outcome, or
    delivered up to the delivery limit (the broker archives them). The drain ends when every
    offset up to each key's target is."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._settled: dict[str, set[int]] = {}
        #: Each key's lowest offset not settled yet, as far as the last look went.
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def settle(self, key: str, acks: list[list[Any]]) -> None:
        """The offsets of `acks` ([offset, type] each) that accept or reject their record."""
        with self._lock:
            self._settled.setdefault(key, set()).update(o for o, kind in acks if kind in (ACCEPT, REJECT))

    def delivered(self, got: dict[str, list[list[Any]]]) -> None:
        with self._lock:
            for key, records in got.items():
                done = [r[0] for r in records if isinstance(r[2], int) and r[2] >= self.limit]
                self._settled.setdefault(key, set()).update(done)

    def settled(self, targets: dict[str, int]) -> bool:
        """Whether every offset of each key up to its target is settled. Each look goes on from
        where the last one stopped: the drain asks after every poll of every member."""
        with self._lock:
            for key, target in targets.items():
                done, first = self._settled.get(key, set()), self._open.get(key, 0)
                while first <= target and first in done:
                    first += 1
                self._open[key] = first
                if first <= target:
                    return False
            return True


def record_failed_member(ctx: RunContext, process: int, exc: BaseException) -> None:
    """A member whose client could not even be built: a `share-poll` whose outcome is unknown."""
    invoke = [[SHARE_POLL, settings(ctx)]]
    ctx.record(process, INVOKE, SHARE_POLL, invoke)
    ctx.record(process, INFO, SHARE_POLL, invoke, describe(exc))


def settings(ctx: RunContext) -> dict[str, Any]:
    """The group's settings in force, as every share-poll invoke carries them."""
    return {
        "group": group_id(ctx.run_id),
        "lock_ms": ctx.opts.share_lock_ms,
        "delivery_limit": ctx.opts.share_delivery_limit,
    }


def prepare_group(ctx: RunContext) -> None:
    """Before any member joins: the group starts from the earliest offset (share groups start at
    the latest by default, which would skip what was written before the first member joined),
    with the run's lock."""
    configs = {"share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": str(ctx.opts.share_lock_ms)}
    ctx.client.share_admin(SET_GROUP_CONFIG, group_id(ctx.run_id), configs=configs)


def record_offsets(ctx: RunContext) -> None:
    """The harness's `share-offsets` after the drain: the group's start offset per key."""
    ctx.record(OFFSETS_PROCESS, INVOKE, SHARE_OFFSETS, [[SHARE_OFFSETS]])
    try:
        got = ctx.client.share_admin(START_OFFSETS, group_id(ctx.run_id)).get("offsets", {})
    except Exception as exc:
        ctx.record(OFFSETS_PROCESS, INFO, SHARE_OFFSETS, [[SHARE_OFFSETS]], describe(exc))
        return
    starts = {key: offset for key, offset in got.items() if isinstance(offset, int)}
    ctx.record(OFFSETS_PROCESS, OK, SHARE_OFFSETS, [[SHARE_OFFSETS, starts]])


class ShareMember:
    """One process's member of the run's share group."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.consumer = ctx.client.share_consumer(f"kafka-chaos-{ctx.run_id}-s{next(_numbers)}", group_id(ctx.run_id))
        ctx.note_config(member=self.consumer)
        self.consumer.subscribe([ctx.opts.topic])
        #: The process stopped being this member's: it crashed, or an operation ended `info`.
        self.crashed = self.ended = False

    def poll(self, process: int, rng: random.Random | None = None, drain: bool = False) -> str:
        """A share-poll, then (when it acquired records) a share-ack of every one of them; a
        crash instead, or a stall before the ack, as `rng` draws. Returns the outcome that
        decides the process's fate (INFO: it ends, and a new process takes the slot)."""
        opts = self.ctx.opts
        invoke = [[SHARE_POLL, settings(self.ctx)]]
        self.ctx.record(process, INVOKE, SHARE_POLL, invoke)
        try:
            polled = self.consumer.poll(opts.poll_timeout_ms)
        except Exception as exc:
            self.ctx.record(process, INFO, SHARE_POLL, invoke, describe(exc))
            self.ended = True
            return INFO
        got = {key: [[o, decode(_bytes(raw)), n] for o, raw, n in rs] for key, rs in polled.items() if rs}
        self.ctx.record(process, OK, SHARE_POLL, [[SHARE_POLL, got]])
        if not got:
            return OK
        self.ctx.share.delivered(got)
        if not drain and rng is not None and rng.random() < opts.member_crashes:
            self.crash(process)
            return INFO
        if not drain and rng is not None and rng.random() < opts.share_stalls:
            time.sleep(opts.share_lock_ms / 1000 + 1.0)  # past the lock: the broker takes the records back
        acks = {key: [[r[0], ACCEPT if drain else _choose(rng, opts)] for r in records] for key, records in got.items()}
        return self.acknowledge(process, acks)

    def acknowledge(self, process: int, acks: dict[str, list[list[Any]]]) -> str:
        invoke = [[SHARE_ACK, acks]]
        self.ctx.record(process, INVOKE, SHARE_ACK, invoke)
        timeout_ms = max(self.ctx.opts.request_timeout_ms, 5000)
        try:
            outcomes = self.consumer.acknowledge({k: [tuple(a) for a in v] for k, v in acks.items()}, timeout_ms)
        except Exception as exc:
            self.ctx.record(process, INFO, SHARE_ACK, [[SHARE_ACK, {key: INFO for key in acks}]], describe(exc))
            for key, done in acks.items():
                self.ctx.share.settle(key, done)
            self.ended = True
            return INFO
        per_key = {key: _outcome(outcomes.get(key)) for key in acks}
        for key, outcome in per_key.items():
            # An unknown outcome may have been taken: such a record may never come back, and a
            # drain that waited for it would wait to its end. One that was not comes back and is
            # settled then.
            if outcome in (OK, INFO):
                self.ctx.share.settle(key, acks[key])
        kinds = set(per_key.values())
        kind = OK if kinds == {OK} else FAIL if kinds == {FAIL} else INFO
        errors = [e for e in outcomes.values() if e is not None]
        self.ctx.record(process, kind, SHARE_ACK, [[SHARE_ACK, per_key]], describe(errors[0]) if errors else None)
        self.ended = kind == INFO
        return kind

    def crash(self, process: int) -> None:
        """The member stops without acknowledging or closing: its acquisitions stay until their
        locks run out. Its client, which still heartbeats, is closed once they have (`close`)."""
        self.ctx.record(process, INVOKE, CRASH, None)
        self.ctx.record(process, OK, CRASH, None)
        self.ctx.note_crash()
        self.crashed = True

    def close(self, process: int | None = None) -> None:
        """Leave the group cleanly (its acquired records are released): a `close` when the
        process is still the member's (not after a crash or an info)."""
        if self.crashed:  # a crashed member's locks run out first, as if its process had died
            timer = threading.Timer(self.ctx.opts.share_lock_ms / 1000 + 1.0, _quietly, (self.consumer.close,))
            timer.daemon = True
            timer.start()
            return
        if process is not None and not self.ended:
            self.ctx.record(process, INVOKE, CLOSE, None)
            self.ctx.record(process, OK, CLOSE, None)
        self.consumer.close()


def _quietly(call: Any) -> None:
    try:
        call()
    except Exception:  # the run's client may be gone already
        pass


def _bytes(raw: Any) -> bytes | None:
    return raw.encode() if isinstance(raw, str) else raw


def _choose(rng: random.Random | None, opts: Any) -> str:
    r = rng.random() if rng is not None else 1.0
    return RELEASE if r < opts.share_release else REJECT if r < opts.share_release + opts.share_reject else ACCEPT


def _outcome(error: ClientError | None) -> str:
    if error is None:
        return OK
    return FAIL if error.name in DEFINITE else INFO
