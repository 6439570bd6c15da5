"""Closing a kafka-python producer for good.

kafka-python 3.0.12's `KafkaProducer.close(timeout)` flushes first and raises
KafkaTimeoutError when the flush times out (brokers down), before its own force-close step:
the sender thread keeps running and `__del__` raises again at exit. After a failed close this
force-closes the sender the way close() itself would have.
"""

from __future__ import annotations

from kafka import KafkaProducer


def close_producer(producer: KafkaProducer, timeout_s: float = 5.0) -> None:
    try:
        producer.close(timeout=timeout_s)
        return
    except Exception:  # noqa: BLE001
        pass
    sender = getattr(producer, "_sender", None)
    if sender is not None and sender.is_alive():
        sender.force_close()
    producer._closed = True  # what close() sets at its end; stops __del__ from closing again
