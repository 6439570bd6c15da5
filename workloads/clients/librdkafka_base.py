"""What librdkafka's producers, consumers and share consumers (librdkafka.py,
librdkafka_share.py) have in common: its errors as the client interface's ClientError, and a
close that cannot hold the run."""

from __future__ import annotations

import threading
from typing import Any

from confluent_kafka import KafkaError, KafkaException

from kafka_chaos.workloads.clients.api import ClientError


def error_of(err: KafkaError | None, refused: bool = False) -> ClientError:
    if err is None:
        return ClientError("UNKNOWN", "no error object", refused=refused)
    return ClientError(err.name(), err.str(), refused=refused)


def from_exception(exc: BaseException, refused: bool = False) -> ClientError:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return error_of(exc.args[0], refused)
    if isinstance(exc, BufferError):  # the local queue is full: produce() took nothing
        return ClientError("_QUEUE_FULL", str(exc), refused=refused)
    return ClientError(type(exc).__name__, str(exc), refused=refused)


def close_within(consumer: Any, seconds: float) -> None:
    """Close a librdkafka consumer (a member leaves its group, committing what it must), waiting
    at most `seconds`: a close must not hold the run; one that fails is let go."""

    def close() -> None:
        try:
            consumer.close()
        except Exception:
            pass

    thread = threading.Thread(target=close, daemon=True)
    thread.start()
    thread.join(seconds)
