"""Workload options, with their defaults and the checks that make bad input exit 2.

The defaults are the safe configuration: acks=all, idempotence on (passed explicitly, since
kafka-python silently turns it off on conflicting settings), RF 3, min.insync.replicas 2,
and `auto_offset_reset="none"`, so that a truncated log surfaces as an error instead of a
silent seek.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.versions import KafkaVersion

#: `--client` values, the client libraries a workload can speak (workloads/clients/registry.py
#: holds each one's record); the first is the default.
CLIENTS = ("kafka-python", "librdkafka", "java")
ACKS = ("0", "1", "all")
#: The oldest kafka-clients release --client java takes.
JAVA_CLIENT_MINIMUM = KafkaVersion(3, 4, 0)
OFFSET_RESETS = ("none", "earliest", "latest")
#: --txn-start-epoch's highest: Kafka's producer epoch ends at 32767 (Short.MAX_VALUE), and a
#: producer's own InitProducerId adds one more; from 32766 the coordinator moves to a new producer id.
MAX_START_EPOCH = 32765
#: --consumer: how a process's consumer gets its keys. `mixed`: even process numbers subscribe,
#: odd ones assign (Jepsen's Kafka test mixes the two per process); `share`: members of one share
#: group (KIP-932, workloads/share.py).
CONSUMERS = ("assign", "subscribe", "mixed", "share")
#: The first Kafka release, broker and Java client, with share groups (a preview in 4.1, GA in 4.2).
SHARE_GROUPS = KafkaVersion(4, 1, 0)
#: The first release whose share groups are on without `group.share.enable` (GA; 4.3 removed it).
SHARE_GROUPS_GA = KafkaVersion(4, 2, 0)
#: The clients with a share consumer this harness drives.
SHARE_CLIENTS = ("java", "librdkafka")
#: --commit: what a subscribed member commits. `sync`: after each poll, what it returned;
#: `auto`: the client's auto-commit; `none`: nothing.
COMMITS = ("sync", "auto", "none")
#: Group protocols: `classic` (the member's client assigns, every rebalance a join round) and
#: `consumer` (KIP-848: the coordinator assigns, incrementally; generally available from Kafka 4.0).
GROUP_PROTOCOLS = ("classic", "consumer")
#: The first Kafka release, broker and Java client, whose `consumer` group protocol is generally available.
KIP_848_GA = KafkaVersion(4, 0, 0)
#: The clients that speak KIP-848's protocol (kafka-python does not).
KIP_848_CLIENTS = ("java", "librdkafka")


def flag(name: str, help: str | None = None) -> dict[str, str | None]:
    """A field's command-line flag and help: `kafka-chaos run` makes one flag per such field, in
    field order (frontends/cli.py), and the checks below name the flag."""
    return {"flag": name, "help": help}


@dataclass
class WorkloadOptions:
    workload: str = field(default="queue", metadata=flag("--workload", "queue or txn (default queue)"))
    #: The client library every Kafka call of the workload goes through (workloads/clients/).
    client: str = field(
        default="kafka-python", metadata=flag("--client", "kafka-python, librdkafka or java (default kafka-python)")
    )
    #: --client java: the kafka-clients release; None: the cluster's Kafka version.
    client_version: str | None = field(
        default=None,
        metadata=flag(
            "--client-version", "--client java: kafka-clients release, 3.4.0 or later (default: the cluster's)"
        ),
    )
    #: Seconds of workload before the final read phase.
    time_limit: float = field(default=30.0, metadata=flag("--time-limit", "seconds of workload (default 30)"))
    final_time_limit: float = field(default=60.0, metadata=flag("--final-time-limit", "bound on the final read"))
    #: Target operations per second, all processes together.
    rate: float = field(default=2000.0, metadata=flag("--rate", "target operations/s, all clients (default 2000)"))
    #: Logical client processes.
    concurrency: int = field(default=16, metadata=flag("--concurrency", "client processes (default 16)"))
    #: Partitions of the topic; a key is "topic/partition".
    keys: int = field(default=4, metadata=flag("--keys", "keys = partitions of the topic (default 4)"))
    topic: str = field(default="chaos", metadata=flag("--topic"))
    replication_factor: int = field(default=3, metadata=flag("--replication-factor"))
    min_insync_replicas: int = field(default=2, metadata=flag("--min-insync-replicas"))
    #: Share of operations that are polls.
    poll_fraction: float = field(default=0.5, metadata=flag("--poll-fraction"))
    #: Values per send operation (1 to this many).
    send_values: int = field(default=1, metadata=flag("--send-values", "values per send (1..N)"))
    acks: str = field(default="all", metadata=flag("--acks", "0, 1 or all (default all)"))
    enable_idempotence: bool = field(default=True, metadata=flag("--idempotence", "true or false (default true)"))
    #: None: kafka-python's default (unlimited, bounded by the delivery timeout).
    retries: int | None = field(default=None, metadata=flag("--retries", "default: unlimited within the timeout"))
    delivery_timeout_ms: int = field(default=10000, metadata=flag("--delivery-timeout-ms"))
    max_in_flight_requests_per_connection: int = field(default=5, metadata=flag("--max-in-flight"))
    auto_offset_reset: str = field(
        default="none", metadata=flag("--auto-offset-reset", "none, earliest or latest (default none)")
    )
    #: How consumers get their keys: `assign` (each process its own keys), `subscribe` (one
    #: consumer group for the run), or `mixed` (workloads/group.py).
    consumer: str = field(
        default="assign", metadata=flag("--consumer", "assign, subscribe, mixed or share (default assign)")
    )
    commit: str = field(
        default="sync", metadata=flag("--commit", "subscribe: sync after each poll, auto or none (default sync)")
    )
    #: Seconds between member changes of the group (one leaves, a new one joins); 0: none.
    group_churn: float = field(
        default=0.0, metadata=flag("--group-churn", "subscribe: a member leaves, one joins, every S s (default off)")
    )
    #: Share of a member's polls after which it crashes before handling what it read: the poll
    #: ends `info` with nothing delivered and the member's consumer is closed, as an
    #: application's `finally` block closes it (with auto-commit, the close commits first).
    member_crashes: float = field(
        default=0.0, metadata=flag("--member-crashes", "subscribe: share of polls a member crashes after (default 0)")
    )
    #: The group protocol of subscribed members (KIP-848's `consumer`, or `classic`). With
    #: `consumer`, heartbeats and sessions are the coordinator's: the run sets the brokers'
    #: group.consumer.* settings to this workload's heartbeat and session (`broker_defaults`).
    group_protocol: str = field(
        default="classic",
        metadata=flag("--group-protocol", "subscribe: classic or consumer (KIP-848: java, librdkafka; Kafka 4.0+)"),
    )
    #: --consumer share: the group's record lock (share.record.lock.duration.ms) and delivery
    #: limit (share.delivery.count.limit), set on the brokers and the group for the run. Only a
    #: lock longer than the checker's slack S (history/kraft.py) lets `share-concurrent-delivery`
    #: fire (checkers/share/context.py); the check warns when no lock was.
    share_lock_ms: int = field(
        default=10000, metadata=flag("--share-lock-ms", "share: record lock, ms (default 10000)")
    )
    share_delivery_limit: int = field(
        default=5, metadata=flag("--share-delivery-limit", "share: deliveries before a record is archived (default 5)")
    )
    #: --consumer share: shares of the records a member releases and rejects (the rest it accepts),
    #: and of its polls after which it stalls past the lock before acknowledging.
    share_release: float = field(default=0.05, metadata=flag("--share-release", "share: share released (0.05)"))
    share_reject: float = field(default=0.02, metadata=flag("--share-reject", "share: share rejected (0.02)"))
    share_stalls: float = field(
        default=0.02, metadata=flag("--share-stalls", "share: share of polls a member stalls past the lock after")
    )
    #: txn workload: transactions deliberately aborted.
    txn_abort_fraction: float = field(default=0.1, metadata=flag("--abort-fraction", "txn: deliberate aborts"))
    txn_start_epoch: int | None = field(
        default=None,
        metadata=flag(
            "--txn-start-epoch",
            "txn: raise each process's transactional id to this producer epoch before the run, as "
            "Admin.fenceProducers does, one InitProducerId each (at most 32765: near the epoch's end)",
        ),
    )
    # No flag: set from Python (chaos_run's keywords) or a scenario.
    #: Topic settings over the run's own (min.insync.replicas, a tiered run's harness/tiered.py
    #: `topic_config`): what a scenario's story needs of its topic (kafka-20732: a tiered topic
    #: that keeps its local copies, under a `retention.bytes` it sets).
    topic_config: dict[str, str] = field(default_factory=dict)
    poll_keys: int = 2  # keys each process assigns for its polls
    poll_timeout_ms: int = 10  # a poll with nothing new returns after this long
    max_poll_records: int = 500
    request_timeout_ms: int = 5000
    #: How long a send (its metadata) or a transactional call may block; None: request_timeout_ms.
    #: Longer than the request timeout, a Java producer's commit outlives a request that timed out
    #: and is sent again on a new connection (the kafka-17754 scenario).
    max_block_ms: int | None = None
    clients_per_producer: int = 16  # queue workload: processes that share one producer
    txn_max_ops: int = 4
    txn_min_ops: int = 1  # a transaction's micro-operations: from this many to txn_max_ops
    txn_timeout_s: float = 15.0  # watchdog on commit and abort
    #: A transactional producer's `transaction.timeout.ms` (the coordinator aborts a transaction
    #: open longer); None: the client's default (60 s).
    transaction_timeout_ms: int | None = None
    #: Group members: a member that stops heartbeating (or polling) for this long is removed.
    session_timeout_ms: int = 10000
    #: Group members learn of a rebalance by a heartbeat's answer: how often they ask.
    heartbeat_interval_ms: int = 500
    max_poll_interval_ms: int = 30000
    #: A kafka-python member in a rebalance (its keys revoked, none assigned yet) polls this long at
    #: least: kafka-python 3.0.12 sends a new JoinGroup when the last one completed on its IO thread
    #: between two polls, so members polling for `poll_timeout_ms` rejoined over and over and kept
    #: the group rebalancing (docs/history.md, "Coverage").
    rebalance_poll_timeout_ms: int = 100

    def validate(self) -> WorkloadOptions:
        """UsageError naming the first bad option by its flag (or keyword, where it has none).
        The workload's name and its own rules are checked with its record (workloads/registry.py
        check_workload, which calls this)."""
        n = named
        if self.client not in CLIENTS:
            raise UsageError(f"{n('client')} must be one of {', '.join(CLIENTS)}; got {self.client!r}")
        if self.client_version is not None:
            if self.client != "java":
                raise UsageError(f"{n('client_version')} applies to --client java only (the client is {self.client})")
            self.java_version(None)
        if not self.rate > 0:
            raise UsageError(f"{n('rate')} must be greater than 0, got {self.rate:g}")
        if self.max_block_ms is not None and self.max_block_ms < 1:
            raise UsageError(f"{n('max_block_ms')} must be at least 1 ms, got {self.max_block_ms}")
        if not isinstance(self.topic_config, dict) or not all(isinstance(k, str) for k in self.topic_config):
            raise UsageError(f"{n('topic_config')} must map topic settings to values, got {self.topic_config!r}")
        if self.acks not in ACKS:
            raise UsageError(f"{n('acks')} must be one of 0, 1, all; got {self.acks!r}")
        if self.keys < 1:
            raise UsageError(f"{n('keys')} must be at least 1, got {self.keys}")
        if self.concurrency < 1:
            raise UsageError(f"{n('concurrency')} must be at least 1, got {self.concurrency}")
        if not self.time_limit > 0:
            raise UsageError(f"{n('time_limit')} must be greater than 0, got {self.time_limit:g}")
        if self.auto_offset_reset not in OFFSET_RESETS:
            raise UsageError(f"{n('auto_offset_reset')} must be one of {', '.join(OFFSET_RESETS)}")
        if not 0 <= self.poll_fraction <= 1 or not 0 <= self.txn_abort_fraction <= 1:
            raise UsageError(f"{n('poll_fraction')} and {n('txn_abort_fraction')} must be between 0 and 1")
        if not 0 <= self.member_crashes <= 1:
            raise UsageError(f"{n('member_crashes')} must be between 0 and 1, got {self.member_crashes:g}")
        if self.consumer == "assign" and (self.group_churn or self.member_crashes):
            what = n("group_churn") if self.group_churn else n("member_crashes")
            raise UsageError(f"{what} applies to group members: add {n('consumer')} subscribe or mixed")
        self._check_share()
        if self.send_values < 1 or self.txn_max_ops < 1 or self.poll_keys < 1:
            raise UsageError(f"{n('send_values')}, {n('txn_max_ops')} and {n('poll_keys')} must be at least 1")
        if not 1 <= self.txn_min_ops <= self.txn_max_ops:
            raise UsageError(f"{n('txn_min_ops')} must be between 1 and {n('txn_max_ops')}, got {self.txn_min_ops}")
        if self.txn_start_epoch is not None and self.workload != "txn":
            raise UsageError(f"{n('txn_start_epoch')} applies to transactional ids: add --workload txn")
        if self.txn_start_epoch is not None and not 0 <= self.txn_start_epoch <= MAX_START_EPOCH:
            raise UsageError(
                f"{n('txn_start_epoch')} must be between 0 and {MAX_START_EPOCH}, got {self.txn_start_epoch}"
            )
        if self.transaction_timeout_ms is not None and self.transaction_timeout_ms < 1:
            raise UsageError(f"{n('transaction_timeout_ms')} must be at least 1, got {self.transaction_timeout_ms}")
        if self.consumer not in CONSUMERS:
            raise UsageError(f"{n('consumer')} must be one of {', '.join(CONSUMERS)}; got {self.consumer!r}")
        if self.commit not in COMMITS:
            raise UsageError(f"{n('commit')} must be one of {', '.join(COMMITS)}; got {self.commit!r}")
        if self.group_protocol not in GROUP_PROTOCOLS:
            raise UsageError(
                f"{n('group_protocol')} must be one of {', '.join(GROUP_PROTOCOLS)}; got {self.group_protocol!r}"
            )
        if self.group_protocol == "consumer":
            if self.consumer == "assign":
                raise UsageError(
                    f"{n('group_protocol')} consumer applies to group members: add {n('consumer')} subscribe or mixed"
                )
            if self.client not in KIP_848_CLIENTS:
                raise UsageError(
                    f"{n('group_protocol')} consumer needs {n('client')} java or librdkafka: "
                    f"{self.client} speaks only the classic protocol"
                )
        if not self.group_churn >= 0:
            raise UsageError(f"{n('group_churn')} must be 0 (off) or more seconds, got {self.group_churn:g}")
        if self.acks != "all" and self.enable_idempotence:
            # kafka-python raises KafkaConfigurationError for this once the run has started.
            needs = f"{n('acks')} {self.acks} needs {n('enable_idempotence')} false"
            raise UsageError(f"{needs} (the idempotent producer requires acks=all)")
        return self

    def _check_share(self) -> None:
        n = named
        if self.consumer != "share":
            return
        if self.client not in SHARE_CLIENTS:
            raise UsageError(
                f"{n('consumer')} share needs {n('client')} java or librdkafka: {self.client} has no share consumer"
                " (docs/clients.md)"
            )
        if self.workload != "queue":
            raise UsageError(f"{n('consumer')} share is for {n('workload')} queue (a share group has no transactions)")
        if self.group_protocol != "classic":
            raise UsageError(f"{n('group_protocol')} is for consumer groups; a share group has its own protocol")
        if self.group_churn:
            raise UsageError(f"{n('group_churn')} applies to consumer groups (subscribe or mixed), not to share")
        if not 1000 <= self.share_lock_ms <= 3_600_000:
            raise UsageError(f"{n('share_lock_ms')} must be between 1000 and 3600000 ms, got {self.share_lock_ms}")
        if not 2 <= self.share_delivery_limit <= 10:
            raise UsageError(f"{n('share_delivery_limit')} must be between 2 and 10, got {self.share_delivery_limit}")
        for name in ("share_release", "share_reject", "share_stalls"):
            if not 0 <= getattr(self, name) <= 1:
                raise UsageError(f"{n(name)} must be between 0 and 1, got {getattr(self, name):g}")
        if self.share_release + self.share_reject > 1:
            raise UsageError(f"{n('share_release')} and {n('share_reject')} together must be at most 1")

    def check_share(self, cluster_version: KafkaVersion) -> None:
        """UsageError when the cluster or the Java client has no share groups (--consumer share)."""
        if self.consumer == "share":
            self._needs(f"{named('consumer')} share", SHARE_GROUPS, "KIP-932", cluster_version)

    def _needs(self, what: str, first: KafkaVersion, kip: str, cluster_version: KafkaVersion) -> None:
        """UsageError unless the cluster, and a Java client, are `first` or later."""
        if cluster_version < first:
            raise UsageError(f"{what} needs Kafka {first} or later ({kip}), the cluster is {cluster_version}")
        if self.client == "java" and (v := self.java_version(cluster_version)) < first:
            raise UsageError(f"{what} needs kafka-clients {first} or later ({kip}), {named('client_version')} is {v}")

    def java_version(self, cluster_version: KafkaVersion | None) -> KafkaVersion:
        """The kafka-clients release of --client java: --client-version, else the cluster's;
        UsageError for a malformed one or one before 3.4.0."""
        text = self.client_version if self.client_version is not None else str(cluster_version)
        match = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)", text.strip()) if isinstance(text, str) else None
        if match is None:
            raise UsageError(f"{named('client_version')} must be a release such as 3.9.1, got {text!r}")
        version = KafkaVersion(*(int(g) for g in match.groups()))
        if version < JAVA_CLIENT_MINIMUM:
            raise UsageError(
                f"{named('client_version')} {version} is too old: the Java client runs from {JAVA_CLIENT_MINIMUM} on"
            )
        return version

    def check_group_protocol(self, cluster_version: KafkaVersion) -> None:
        """UsageError when the cluster or the Java client cannot speak the group protocol asked for."""
        if self.group_protocol == "consumer":
            self._needs(f"{named('group_protocol')} consumer", KIP_848_GA, "KIP-848", cluster_version)

    def broker_defaults(self) -> dict[str, str]:
        """Broker settings the workload needs (under the user's): with the `consumer` protocol the
        coordinator sets each member's heartbeat interval and session timeout, so the classic
        members' values (`heartbeat_interval_ms`, `session_timeout_ms`) go to the brokers, with the
        bounds lowered to allow them (Kafka's defaults: 5 s and 45 s, also the minimums)."""
        if self.consumer == "share":
            return self.share_broker_defaults()
        if self.group_protocol != "consumer" or not self.grouped:
            return {}
        heartbeat, session = str(self.heartbeat_interval_ms), str(self.session_timeout_ms)
        out = {
            "group.consumer.min.heartbeat.interval.ms": heartbeat,
            "group.consumer.heartbeat.interval.ms": heartbeat,
            "group.consumer.min.session.timeout.ms": session,
            "group.consumer.session.timeout.ms": session,
        }
        # Past Kafka's maximums (15 s and 60 s) the brokers would refuse to start: raise them too.
        if self.heartbeat_interval_ms > 15000:
            out["group.consumer.max.heartbeat.interval.ms"] = heartbeat
        if self.session_timeout_ms > 60000:
            out["group.consumer.max.session.timeout.ms"] = session
        return out

    def share_broker_defaults(self) -> dict[str, str]:
        """A share run's brokers: the group's lock and limit as the defaults, their bounds lowered
        to allow them (Kafka's minimum lock is 15 s), and share groups on before they are GA."""
        lock = str(self.share_lock_ms)
        heartbeat, session = str(self.heartbeat_interval_ms), str(self.session_timeout_ms)
        return {
            "group.share.enable": "true",  # 4.1 and 4.2 (4.3 has no such setting and ignores it)
            "group.share.min.record.lock.duration.ms": str(min(self.share_lock_ms, 15000)),
            "group.share.record.lock.duration.ms": lock,
            "group.share.delivery.count.limit": str(self.share_delivery_limit),
            # A member learns its partitions from a heartbeat's answer (Kafka's 5 s, also the
            # minimum) and leaves after a session (45 s): as the KIP-848 members' (above).
            "group.share.min.heartbeat.interval.ms": heartbeat,
            "group.share.heartbeat.interval.ms": heartbeat,
            "group.share.min.session.timeout.ms": session,
            "group.share.session.timeout.ms": session,
            # A group whose state could not be initialised (its coordinator's partition not yet
            # created, the controller busy) delivers nothing until the retry: Kafka waits 30 s
            # (4.2 on), longer than a short run's quiet start. 5 s is the least it takes (it
            # uses offsets.commit.timeout.ms when that is longer).
            "group.share.initialize.retry.interval.ms": "5000",
        }

    @property
    def shares(self) -> bool:
        """The run's consumers are members of one share group (--consumer share)."""
        return self.consumer == "share"

    def subscribes(self, process: int) -> bool:
        """Whether this process's consumer joins the run's group (--consumer)."""
        return self.consumer == "subscribe" or (self.consumer == "mixed" and process % 2 == 0)

    @property
    def grouped(self) -> bool:
        """Some consumer of the run subscribes as its consumer group."""
        return self.consumer in ("subscribe", "mixed")

    @property
    def key_names(self) -> list[str]:
        return [f"{self.topic}/{p}" for p in range(self.keys)]

    def poll_keys_for(self, slot: int) -> list[str]:
        """The keys a client slot assigns for its polls: `poll_keys` consecutive keys from its own."""
        keys = self.key_names
        return [keys[(slot + j) % len(keys)] for j in range(min(len(keys), self.poll_keys))]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def named(option: str) -> str:
    """How a user names an option: its flag (`--abort-fraction`), or for an option with no flag
    its keyword (`txn_max_ops`, as chaos_run and scenarios take it)."""
    spec = next(f for f in fields(WorkloadOptions) if f.name == option)
    return spec.metadata.get("flag") or option
