"""Producers that stay usable through faults: closing one for good, and telling when one is broken.

kafka-python 3.0.12's `KafkaProducer.close(timeout)` flushes first and raises
KafkaTimeoutError when the flush times out (brokers down), before its own force-close step:
the sender thread keeps running and `__del__` raises again at exit. After a failed close this
force-closes the sender the way close() itself would have.

A broken producer is one that can no longer finish a send, whatever the cluster does. The
workload replaces it (Jepsen rebuilds a client after an indeterminate error); its unfinished
sends end `info`, since their records may or may not have reached a broker. Two ways to break:

- **Wedged idempotent producer** (kafka-python 3.0.12). When a batch that was already being
  retried reaches the delivery timeout, the sender calls `reset_producer_id()`: the producer
  id becomes -1 but the transaction manager stays READY. `init_producer_id()` only asks for
  a new id from UNINITIALIZED, and the sender's loop returns early while there is no producer
  id, before it sends or expires any batch. From then on every send waits forever (our own
  wait ends it). One broker paused or killed past the delivery timeout is enough; the run of
  issue 13 lost its whole write traffic this way after the first fault.
- **Overdue futures**: any future still unresolved after the delivery timeout (plus a margin)
  means the producer broke its own bound, whatever the reason; the same remedy applies.
"""

from __future__ import annotations

from typing import Any

from kafka import KafkaProducer

#: A future still unresolved this long after the delivery timeout means a broken producer.
OVERDUE_MARGIN_S = 2.0


def close_producer(producer: KafkaProducer, timeout_s: float = 5.0) -> None:
    try:
        producer.close(timeout=timeout_s)
        return
    except Exception:
        pass
    sender = getattr(producer, "_sender", None)
    if sender is not None and sender.is_alive():
        sender.force_close()
    producer._closed = True  # what close() sets at its end; stops __del__ from closing again


def wedged(producer: Any) -> str | None:
    """Why this producer can never finish a send again, or None while it can.

    Reads kafka-python's transaction manager (private state: anything missing reads as "not
    wedged", so a kafka-python without the bug, or without these names, is never replaced)."""
    manager = getattr(producer, "_transaction_manager", None)
    if manager is None:
        return None  # idempotence off: no producer id to lose
    sender = getattr(producer, "_sender", None)
    if sender is not None and not sender.is_alive() and not getattr(producer, "_closed", False):
        return "its sender thread died"
    try:
        if manager.is_transactional():
            return None
        if manager.has_fatal_error():
            return f"fatal error: {manager.last_error}"
        # The state first: a new producer's id arrives before its state turns READY, so the
        # other order could catch a healthy one between the two and call it wedged.
        ready = manager._current_state == type(manager._current_state).READY
        if ready and not manager.has_producer_id():
            return "no producer id after an expired batch (kafka-python 3.0.12 never asks for a new one)"
    except Exception:
        return None
    return None
