"""A scenario: a cluster, a workload and a scripted nemesis that together reproduce one way
Kafka can lose acknowledged writes, and the Kafka versions expected to lose them.

Each scenario module (scenarios/kafka_14139.py, ...) defines one `SCENARIO`; its docstring is
the story. A user's own scenario is a file of the same parts (scenarios/files.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka_chaos.harness.fsync_disk import PAGE_CACHE
from kafka_chaos.harness.versions import KafkaVersion, metadata_version_key
from kafka_chaos.history.kraft import STATIC
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.schedule import Schedule
from kafka_chaos.scenarios.script import Script, ScriptStopped, StepTimeout
from kafka_chaos.workloads.options import WorkloadOptions

#: What a scenario expects of a version: its acknowledged writes are lost, or they are safe.
LOSS, SAFE = "loss", "safe"
ScriptFn = Callable[[Script], None]

#: The workload of the scenarios that lose acknowledged writes (a scenario adds its own
#: replication factor and min.insync.replicas):
#: - consumers that lag (few records per poll, few polls): by the checker's rules a lost value
#:   some poll had already read is not a lost write, so only unread values can show the loss;
#: - writes without idempotence, acks=all, no retries, one request in flight: a new leader
#:   with an empty or cut log does not know the producers' sequence numbers, and kafka-python's
#:   idempotent producer stalls on that; these writes go on, and reads past the lost offsets
#:   show which acknowledged values are gone.
LOSS_WORKLOAD: dict[str, Any] = {
    "keys": 1,
    "concurrency": 4,
    "rate": 200.0,
    "poll_fraction": 0.2,
    "max_poll_records": 2,
    "enable_idempotence": False,
    "retries": 0,
    "max_in_flight_requests_per_connection": 1,
    "time_limit": 240.0,
    "final_time_limit": 20.0,
}
#: The workload of the scenarios that hold a transaction still (`pause-client`): one Java
#: transactional producer on one partition (each scenario sets its transactions' size), no
#: deliberate abort and no reads until the final read_committed one, so that what happens to the
#: held transaction is all there is to see.
ONE_TXN_PRODUCER: dict[str, Any] = {
    "workload": "txn",
    "client": "java",
    "keys": 1,
    "concurrency": 1,
    "rate": 20.0,
    "poll_fraction": 0.0,
    "txn_abort_fraction": 0.0,
}


@dataclass
class Scenario:
    name: str
    story: str
    script: ScriptFn
    #: Cluster shape: dedicated controllers (0: combined nodes) and brokers.
    controllers: int = 0
    brokers: int = 3
    broker_config: dict[str, str] = field(default_factory=dict)
    #: WorkloadOptions fields that differ from the safe defaults.
    workload: dict[str, Any] = field(default_factory=dict)
    #: Format storage at this metadata version (None: the release's newest).
    metadata_version: str | None = None
    #: "static" (`controller.quorum.voters`) or "dynamic" (KIP-853).
    quorum: str = STATIC
    #: "page-cache" or "fsync-tracked" (a power loss drops exactly what was not fsynced).
    disk: str = PAGE_CACHE
    #: Tiered storage: the brokers share one remote storage (harness/tiered.py).
    tiered: bool = False
    #: LOSS or SAFE for a version (and the metadata version it is formatted at, None = newest).
    expect: Callable[[KafkaVersion, str | None], str] = lambda version, mv: LOSS
    #: The error anomalies that show the scenario's loss (any of them counts as reproduced), or
    #: the scenario's own findings (`Script.observe`) where no anomaly of the contract applies;
    #: none: a measure expected clean, which any error anomaly contradicts.
    shows: tuple[str, ...] = ("lost-write",)
    #: The first release the story can be told on (a feature it needs); a run on an older one is
    #: refused before it starts.
    since: str | None = None
    #: Where the expectation comes from, one line per fact (shown with the table).
    references: tuple[str, ...] = ()
    #: One line for `kafka-chaos scenarios` (default: the story's first sentence).
    summary: str = ""
    #: Why the script has not shown the bug on an affected release yet, after an honest try (what
    #: was tried: docs/scenarios.md); empty when it reproduces. The scenario stays in the library
    #: and its expectation stays Kafka's: `kafka-chaos scenarios` marks it.
    not_reproduced: str = ""

    def one_line(self) -> str:
        if self.summary:
            return self.summary
        first = " ".join(self.story.strip().split("\n\n")[0].split())
        return first.split(": ", 1)[-1].split(". ")[0]

    def expectation(self, version: KafkaVersion, metadata_version: str | None = None) -> str:
        return self.expect(version, metadata_version or self.metadata_version)


class ScenarioSchedule(Schedule):
    """Runs a scenario's script in the nemesis thread; the workload phase ends when it does."""

    def __init__(self, nemesis: Nemesis, script: ScriptFn, topic: str, workload: WorkloadOptions | None = None) -> None:
        super().__init__(nemesis)
        self.script_fn = script
        self.handle = Script(nemesis.cluster, nemesis, self.stop, topic, workload)
        self.outcome = "not started"
        self.error: str | None = None

    def loop(self) -> None:
        self.handle.started = self.started
        self.outcome = "running"
        try:
            self.script_fn(self.handle)
            self.outcome = "completed"
        except StepTimeout as exc:
            self.outcome, self.error = "step failed", str(exc)
            self.handle.note(f"script stopped: {exc}")
        except ScriptStopped:
            self.outcome = "stopped by the time limit"
        except Exception as exc:  # recorded; the run still heals and reads
            self.outcome, self.error = "crashed", f"{type(exc).__name__}: {exc}"
            self.handle.note(f"script crashed: {self.error}")
        finally:
            self.finished.set()

    def report(self) -> dict[str, Any]:
        """scenario.json: what the script did and how it ended."""
        return {
            "outcome": self.outcome,
            "error": self.error,
            "roles": self.handle.roles,
            "steps": self.handle.steps,
            "observed": self.handle.observed,
        }


def at_least(version: KafkaVersion, text: str) -> bool:
    return version >= KafkaVersion.parse(text)


def metadata_at_least(metadata_version: str | None, text: str) -> bool:
    """Compare metadata versions like 3.5-IV1 (None: the release's newest, which is enough)."""
    if metadata_version is None:
        return True
    return metadata_version_key(metadata_version) >= metadata_version_key(text)
