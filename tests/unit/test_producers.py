"""When a producer is broken (workloads/producers.py), on kafka-python's own transaction manager:
the state an expired, retried batch leaves behind is wedged; a producer on its way to an id is not."""

import threading

from kafka.producer.transaction_manager import ProducerIdAndEpoch, TransactionManager, TransactionState

from kafka_chaos.workloads.producers import wedged


class Producer:
    """What wedged() reads of a KafkaProducer: its transaction manager and its sender thread."""

    def __init__(self, manager: TransactionManager | None, sender_alive: bool = True) -> None:
        self._transaction_manager = manager
        self._closed = False
        self._sender = threading.Thread(target=lambda: None)
        if sender_alive:
            self._sender.is_alive = lambda: True  # a running sender, without running one


def ready_idempotent() -> TransactionManager:
    manager = TransactionManager()
    manager.init_producer_id()  # UNINITIALIZED -> INITIALIZING, as the sender does
    manager.set_producer_id_and_epoch(ProducerIdAndEpoch(7, 0))  # the InitProducerId answer
    manager._transition_to(TransactionState.READY)
    return manager


def test_an_idempotent_producer_with_an_id_is_healthy():
    assert wedged(Producer(ready_idempotent())) is None


def test_the_state_after_an_expired_retried_batch_is_wedged():
    manager = ready_idempotent()
    manager.reset_producer_id()  # what Sender._send_producer_data does after such an expiry
    assert manager._current_state == TransactionState.READY and not manager.has_producer_id()
    manager.init_producer_id()  # the sender's loop calls it again and again: it does nothing
    assert not manager.has_producer_id()
    assert "no producer id" in wedged(Producer(manager))


def test_a_producer_waiting_for_its_first_id_is_not_wedged():
    manager = TransactionManager()
    manager.init_producer_id()  # INITIALIZING, no id yet
    assert wedged(Producer(manager)) is None
    assert wedged(Producer(TransactionManager())) is None  # UNINITIALIZED


def test_no_idempotence_or_a_transactional_producer_is_never_judged_wedged():
    assert wedged(Producer(None)) is None
    assert wedged(Producer(TransactionManager(transactional_id="t"))) is None


def test_a_dead_sender_thread_is_broken():
    assert "sender thread died" in wedged(Producer(ready_idempotent(), sender_alive=False))
