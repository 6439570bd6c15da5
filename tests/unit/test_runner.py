"""The runner's control flow, with stand-in clients (no Kafka): faults are healed whatever happens."""

import threading
import time

import pytest

from kafka_chaos.harness.errors import KafkaChaosError
from kafka_chaos.history.file import HistoryWriter
from kafka_chaos.workloads.context import RunContext
from kafka_chaos.workloads.options import WorkloadOptions
from kafka_chaos.workloads.runner import Runner, WorkloadCrash
from kafka_chaos.workloads.txn import prepare_transactions


class Schedule:
    def __init__(self):
        self.calls = []
        self.finished = threading.Event()

    def start(self):
        self.calls.append("start")

    def stop_and_heal(self):
        self.calls.append("stop_and_heal")


class Idle:
    """A client library with nothing to say: the stand-in clients below make no Kafka calls."""

    name = "idle"

    def died(self):
        return None


class Exploding:
    process = 0

    def __init__(self, *args):
        pass

    def step(self, rng):
        raise RuntimeError("bug in a client")

    def close(self):
        pass


def test_a_crashing_client_stops_the_run_and_every_fault_is_healed(tmp_path):
    schedule = Schedule()
    with HistoryWriter(tmp_path / "h.jsonl") as history:
        ctx = RunContext(
            history=history,
            opts=WorkloadOptions(concurrency=2, time_limit=30, rate=100),
            bootstrap_servers="",
            client=Idle(),
        )
        with pytest.raises(WorkloadCrash, match="RuntimeError: bug in a client"):
            Runner(ctx, faults=schedule, client_factory=Exploding).run()
    assert schedule.calls == ["start", "stop_and_heal"]


class Stepping(Exploding):
    steps = 0

    def step(self, rng):
        Stepping.steps += 1
        return "ok"


@pytest.mark.parametrize("script_ends", [True, False])
def test_the_workload_phase_ends_when_a_scripted_schedule_finishes(tmp_path, monkeypatch, script_ends):
    monkeypatch.setattr(Runner, "_final_phase", lambda self, slot, targets: None)
    schedule = Schedule()
    if script_ends:
        schedule.start = lambda: threading.Timer(0.5, schedule.finished.set).start()
    with HistoryWriter(tmp_path / "h.jsonl") as history:
        ctx = RunContext(
            history=history,
            opts=WorkloadOptions(concurrency=2, time_limit=8, rate=100),
            bootstrap_servers="",
            client=Idle(),
        )
        started = time.monotonic()
        Runner(ctx, faults=schedule, client_factory=Stepping).run()
    elapsed = time.monotonic() - started
    assert (elapsed < 5.0) == script_ends, elapsed  # the time limit is 8 s


def test_a_transaction_coordinator_that_never_gets_ready_stops_the_run_with_a_named_error():
    started = time.monotonic()
    opts = WorkloadOptions(workload="txn", request_timeout_ms=300)
    with pytest.raises(KafkaChaosError, match="transaction coordinator was not ready within 1 s"):
        prepare_transactions("127.0.0.1:9", opts, "nobody", timeout_s=1)  # nothing listens on port 9
    assert time.monotonic() - started < 15


def test_a_mixed_run_keeps_the_assigning_and_the_member_settings_apart():
    class Built:
        def __init__(self, **config):
            self.config = config

    ctx = RunContext(history=None, opts=WorkloadOptions(), bootstrap_servers="x", client=object())
    ctx.note_config(member=Built(group_id="g"))  # a member built first, as a mixed run's threads may
    ctx.note_config(consumer=Built(group_id=None))
    ctx.note_config(member=Built(group_id="later"), consumer=Built(group_id="later"))  # the first of each is kept
    assert ctx.effective_consumer_config == {"group_id": None}
    assert ctx.effective_member_config == {"group_id": "g"}
