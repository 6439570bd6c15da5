"""The poll side shared by the queue and txn clients: an assigned consumer and its poll operation,
through whichever client library the run speaks (workloads/clients/)."""

from __future__ import annotations

import itertools
from typing import Any

from kafka_chaos.history.events import ASSIGN, INFO, INVOKE, OK, POLL
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.outcomes import describe
from kafka_chaos.workloads.values import decode

_numbers = itertools.count()


def record_failed_assign(ctx: RunContext, process: int, keys: list[str], exc: BaseException) -> None:
    """An `assign` whose client could not even be built: its outcome is unknown."""
    ctx.record(process, INVOKE, ASSIGN, keys)
    ctx.record(process, INFO, ASSIGN, keys, describe(exc))


def _decode(raw: bytes | str | None) -> int | str | None:
    return decode(raw.encode() if isinstance(raw, str) else raw)


class PollingConsumer:
    """A consumer that reads its assigned keys from the beginning, as one logical process."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.consumer = ctx.client.consumer(f"kafka-chaos-{ctx.run_id}-c{next(_numbers)}", ctx.isolation_level)
        ctx.note_config(consumer=self.consumer)
        self.keys: list[str] = []

    def assign(self, process: int, keys: list[str]) -> bool:
        """An `assign` operation: hold these keys, positioned at the start of each log."""
        self.ctx.record(process, INVOKE, ASSIGN, keys)
        try:
            self.consumer.assign(list(keys))
        except Exception as exc:  # any client error makes the process's state unknown
            self.ctx.record(process, INFO, ASSIGN, keys, describe(exc))
            return False
        self.keys = list(keys)
        self.ctx.record(process, OK, ASSIGN, keys)
        return True

    def poll_once(self) -> dict[str, list[list[Any]]]:
        """One poll; raises what the consumer raises."""
        read: dict[str, list[list[Any]]] = {}
        for key, records in self.consumer.poll(self.ctx.opts.poll_timeout_ms).items():
            read[key] = [[offset, _decode(raw)] for offset, raw in records]
            if records:
                self.ctx.observe(key, records[-1][0])
        return read

    def invoke_poll(self, process: int) -> dict[str, list[list[Any]]] | None:
        """A `poll` operation's invoke and poll; on an error its `info` completion and None, else
        what it read (the caller completes it)."""
        self.ctx.record(process, INVOKE, POLL, [[POLL]])
        try:
            return self.poll_once()
        except Exception as exc:
            self.ctx.record(process, INFO, POLL, [[POLL]], describe(exc))
            return None

    def poll(self, process: int) -> str:
        """A `poll` operation; returns its outcome type."""
        read = self.invoke_poll(process)
        if read is None:
            return INFO
        self.ctx.record(process, OK, POLL, [[POLL, read]])
        return OK

    def positions(self) -> dict[str, int]:
        """Each assigned key's next offset to read; raises what the consumer raises."""
        return {k: self.consumer.position(k) for k in self.keys}

    def seek(self, positions: dict[str, int]) -> None:
        for key, offset in positions.items():
            self.consumer.seek(key, offset)

    def caught_up(self, targets: dict[str, int]) -> bool:
        """Every assigned key read past the highest offset any operation observed."""
        try:
            return all(self.consumer.position(k) > off for k, off in targets.items() if k in self.keys)
        except Exception:
            return False

    def close(self) -> None:
        self.consumer.close()
