import threading

import pytest

from kafka_chaos.history.events import CLIENT, FAIL, INVOKE, OK
from kafka_chaos.nemesis.core import PAUSE_CLIENT, Nemesis
from kafka_chaos.workloads.stalls import ClientStalls


class Written:
    """The nemesis's history, as written."""

    def __init__(self):
        self.events = []

    def write(self, process, type, f, value, error=None):
        self.events.append((type, f, value, error))


def test_a_hold_goes_to_one_process_only_and_one_is_asked_at_a_time():
    stalls = ClientStalls()
    assert stalls.take(1) is None  # nothing asked
    hold = stalls.ask(5.0)
    with pytest.raises(ValueError, match="already asked"):
        stalls.ask(1.0)
    assert stalls.take(3) is hold and hold.process == 3
    assert stalls.take(4) is None and not stalls.withdraw(hold)  # taken: it cannot be withdrawn
    ClientStalls.finish(hold, "fail", "InvalidTxnStateException: ...")
    assert stalls.ask(1.0) is not hold  # done: the next may be asked


def test_a_held_process_is_recorded_from_the_ask_to_the_end_of_its_transaction():
    history, stalls = Written(), ClientStalls()
    nemesis = Nemesis(None, history, clients=stalls)  # type: ignore[arg-type] (no node is touched)

    def process():
        while (hold := stalls.take(7)) is None:
            threading.Event().wait(0.01)
        ClientStalls.finish(hold, "fail", "InvalidProducerEpochException: old epoch")

    taker = threading.Thread(target=process)
    taker.start()
    value = nemesis.hold_client(20.0, within_s=5)
    taker.join()
    asked = {"target": "txn-process", "seconds": 20.0, "effect": CLIENT}
    done = {**asked, "process": 7, "txn_outcome": "fail", "txn_error": "InvalidProducerEpochException: old epoch"}
    assert value == done
    assert history.events == [(INVOKE, PAUSE_CLIENT, asked, None), (OK, PAUSE_CLIENT, done, None)]


def test_a_hold_no_process_takes_is_withdrawn_and_recorded_as_failed():
    history, stalls = Written(), ClientStalls()
    nemesis = Nemesis(None, history, clients=stalls)  # type: ignore[arg-type]
    value = nemesis.hold_client(20.0, within_s=0.05)
    assert value["error"] == "no workload process took the hold within 0.05 s"
    assert [(t, f) for t, f, _, _ in history.events] == [(INVOKE, PAUSE_CLIENT), (FAIL, PAUSE_CLIENT)]
    assert stalls.take(1) is None  # withdrawn: no process takes it later


def test_a_run_without_workload_processes_to_hold_refuses_the_hold():
    with pytest.raises(ValueError, match="takes no holds"):
        Nemesis(None).hold_client(1.0)  # type: ignore[arg-type]
