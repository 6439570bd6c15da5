"""The official Java client (org.apache.kafka:kafka-clients) behind the client interface.

A small driver of ours (java-driver/src/main/java/kafkachaos/Driver.java) runs the client in one JVM
per run: one JSON command per line on its stdin, one JSON completion per line on its stdout.
Python stays the one writer of the history; the driver only calls the client and reports what
it said, errors under the exception's simple class name (classified in workloads/outcomes.py).

The driver is built with Maven against the kafka-clients version asked for, the first time
that version is used, and cached (like the broker's jars, harness/maven.py). Its log (WARN and
above) goes to `client-java.log` in the run directory. Its record, `CLIENT`, ends the module.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.maven import MissingArtifact, build_project, resolve_once_locked, source_digest
from kafka_chaos.harness.paths import cache_dir
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.workloads.clients.api import ClientConfigError, ClientDied, ClientError, Group, split_key
from kafka_chaos.workloads.clients.record import ClientRecord
from kafka_chaos.workloads.clients.settings import (
    RECONNECT_BACKOFF,
    blocking_ms,
    consumer_timeout_ms,
    producer_properties,
    transactional_properties,
)
from kafka_chaos.workloads.options import WorkloadOptions

SOURCE = Path(__file__).parent / "java-driver"  # not a Python name: setuptools ships it as data, not as a package
#: The first kafka-clients with a share consumer (KIP-932): the driver's share calls are built for it on.
SHARE_CLIENTS = KafkaVersion.parse("4.1.0")
#: How long the JVM may take to start and build its first client.
START_TIMEOUT_S = 60.0

#: The producer and consumer settings config.json records, as the Java client names them.
REPORTED = (
    "acks",
    "enable.idempotence",
    "retries",
    "delivery.timeout.ms",
    "request.timeout.ms",
    "max.in.flight.requests.per.connection",
    "linger.ms",
    "transactional.id",
    "max.block.ms",
)
REPORTED_CONSUMER = (
    "isolation.level",
    "auto.offset.reset",
    "enable.auto.commit",
    "request.timeout.ms",
    "max.poll.records",
    "default.api.timeout.ms",
    "group.id",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "max.poll.interval.ms",
    "auto.commit.interval.ms",
    "group.protocol",
    "partition.assignment.strategy",
)


REPORTED_SHARE = (
    "group.id",
    "share.acknowledgement.mode",
    "request.timeout.ms",
    "default.api.timeout.ms",
    "max.poll.records",
)
#: Member settings KIP-848's protocol does not use (the coordinator sets the heartbeat and session
#: and assigns): not reported for such a member, whose client still holds its defaults.
CLASSIC_ONLY = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")


def driver_dir(version: KafkaVersion) -> Path:
    return cache_dir() / "clients" / f"java-{version}-{source_digest(SOURCE)}"


def build_driver(version: KafkaVersion, log: Any = None) -> Path:
    """driver.jar and lib/ (kafka-clients `version` and what it needs), built once per version
    and driver source, then cached. UsageError when Maven Central has no such kafka-clients."""

    def build(dest: Path) -> None:
        if log is not None:
            log(f"building the Java client driver against kafka-clients {version} (once; cached)")
        args = [f"-Dkafka.version={version}", *(["-Dshare"] if version >= SHARE_CLIENTS else [])]
        try:
            build_project(
                SOURCE,
                dest,
                [*args, "package", "dependency:copy-dependencies"],
                ["driver.jar", "lib"],
                "the Java client driver",
                "--client java",
            )
        except MissingArtifact as missing:
            raise UsageError(f"kafka-clients {version} is not on Maven Central: {missing}") from None

    return resolve_once_locked(driver_dir(version), version, build)


class _Pending:
    """One command's completion, filled by the driver's reader thread."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._event = threading.Event()
        self._ok: dict[str, Any] | None = None
        self._error: BaseException | None = None

    def complete(self, line: dict[str, Any]) -> None:
        if "error" in line:
            err = line["error"]
            self._error = ClientError(
                err.get("name", "DriverError"),
                err.get("message", ""),
                cause=err.get("cause"),
                refused=bool(err.get("thrown_by_send")),
            )
        else:
            self._ok = line.get("ok") or {}
        self._event.set()

    def die(self, why: str) -> None:
        self._error = ClientDied(why)
        self._event.set()

    def result(self, timeout_s: float) -> dict[str, Any]:
        if not self._event.wait(timeout_s):
            raise TimeoutError(f"the Java client's {self.what} did not complete within {timeout_s:g} s")
        if self._error is not None:
            raise self._error
        return self._ok or {}

    def done(self) -> bool:
        return self._event.is_set()


class JavaDriver:
    """The driver process: commands out, completions in, and what ended it."""

    def __init__(self, home: Path, version: KafkaVersion, log_dir: Path | None) -> None:
        self.version = version
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._lock = threading.Lock()
        self.died: str | None = None
        self._stopping = False
        self._stderr: IO[bytes] | int = (
            (log_dir / "client-java.log").open("ab") if log_dir is not None else subprocess.DEVNULL
        )
        self.proc = subprocess.Popen(
            [
                "java",
                "-Xss512k",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp",
                f"{home}/driver.jar:{home}/lib/*",
                "kafkachaos.Driver",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            bufsize=0,
        )
        self._log_path = log_dir / "client-java.log" if log_dir is not None else None
        ready = _Pending("start")
        self._pending[0] = ready
        self._reader = threading.Thread(target=self._read, name="java-driver-reader", daemon=True)
        self._reader.start()
        try:
            ready.result(START_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            key = 0 if line.get("ready") else line.get("id")
            with self._lock:
                pending = self._pending.pop(key, None)
            if pending is not None:
                pending.complete(line)
        code = self.proc.wait()
        why = f"the java client (kafka-clients {self.version}) driver exited with code {code}{self._last_log_line()}"
        with self._lock:
            if not self._stopping:
                self.died = why
            pending_all, self._pending = list(self._pending.values()), {}
        for pending in pending_all:
            pending.die(why)

    def _last_log_line(self) -> str:
        if self._log_path is None or not self._log_path.exists():
            return ""
        lines = [line for line in self._log_path.read_text(errors="replace").splitlines() if line.strip()]
        return f": {lines[-1].strip()[:200]}" if lines else ""

    def call(self, op: str, name: str, **fields: Any) -> _Pending:
        pending = _Pending(op)
        with self._lock:
            if self.died is not None or self._stopping:
                pending.die(self.died or "the java client was closed")
                return pending
            number = next(self._ids)
            self._pending[number] = pending
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write((json.dumps({"id": number, "op": op, "name": name, **fields}) + "\n").encode())
            except (BrokenPipeError, OSError, ValueError):
                self._pending.pop(number, None)
                pending.die(self.died or f"the java client (kafka-clients {self.version}) driver is gone")
        return pending

    def close(self) -> None:
        with self._lock:
            self._stopping = True
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()  # end of input: the driver halts at once
        except OSError:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if not isinstance(self._stderr, int):
            self._stderr.close()


class _Delivery:
    def __init__(self, pending: _Pending) -> None:
        self.pending = pending

    def result(self, timeout_s: float) -> int | None:
        return self.pending.result(timeout_s).get("offset")

    def done(self) -> bool:
        return self.pending.done()


def _offsets(offsets: dict[str, int]) -> list[list[Any]]:
    """{key: next offset} as the driver's `commit` and `send_offsets` take it: [topic, partition, offset]s."""
    return [[*split_key(k), o] for k, o in offsets.items()]


def _strings(config: dict[str, Any]) -> dict[str, str]:
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in config.items()}


def producer_config(opts: WorkloadOptions) -> dict[str, Any]:
    """Java producer settings: the options' under Kafka's names (settings.producer_properties), and
    a bound on how long a send (its metadata) or a transactional call may block."""
    return {**producer_properties(opts), "max.block.ms": blocking_ms(opts)}


def consumer_config(opts: WorkloadOptions, isolation_level: str) -> dict[str, Any]:
    timeout = consumer_timeout_ms(opts)
    return {
        "enable.auto.commit": False,
        "auto.offset.reset": opts.auto_offset_reset,
        "isolation.level": isolation_level,
        "request.timeout.ms": timeout,
        "default.api.timeout.ms": timeout,
        "max.poll.records": opts.max_poll_records,
        **RECONNECT_BACKOFF,
    }


def group_config(opts: WorkloadOptions, group: Group) -> dict[str, Any]:
    """A group member's settings on top of consumer_config's (the client's own assignors: what
    applications run). With KIP-848's protocol the coordinator assigns and sets the heartbeat and
    session (the brokers' group.consumer.* settings: WorkloadOptions.broker_defaults), which
    replace the client's own."""
    config = {"group.id": group.group_id, "enable.auto.commit": group.auto_commit}
    if opts.group_protocol == "consumer":
        config["group.protocol"] = "consumer"
    else:
        config |= {"session.timeout.ms": opts.session_timeout_ms, "heartbeat.interval.ms": opts.heartbeat_interval_ms}
    return config | {"max.poll.interval.ms": opts.max_poll_interval_ms}


def _build(driver: JavaDriver, kind: str, name: str, config: dict[str, Any]) -> dict[str, Any]:
    """Make a producer or consumer handle in the driver; its effective config."""
    try:
        return driver.call(kind, name, config=_strings(config)).result(START_TIMEOUT_S).get("config", {})
    except ClientError as exc:
        if exc.name == "ConfigException":
            raise ClientConfigError(f"the Java client refused its {kind} settings: {exc.message}") from exc
        raise


def _reported(effective: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: effective.get(k) for k in keys}


class JavaProducer:
    def __init__(
        self,
        driver: JavaDriver,
        opts: WorkloadOptions,
        bootstrap: str,
        client_id: str,
        name: str,
        transactional_id: str | None,
    ) -> None:
        self.driver, self.name = driver, name
        self._timeout_s = opts.request_timeout_ms / 1000 + 5
        config = {
            "bootstrap.servers": bootstrap,
            "client.id": client_id,
            **producer_config(opts),
            **transactional_properties(opts, transactional_id),
        }
        self.config = _reported(_build(driver, "producer", name, config), REPORTED)

    def send(self, key: str, value: int) -> _Delivery:
        topic, partition = split_key(key)
        return _Delivery(self.driver.call("send", self.name, topic=topic, partition=partition, value=str(value)))

    def broken(self) -> str | None:
        return None  # the Java client ends every send by the delivery timeout, or reports why not

    def init_transactions(self, timeout_s: float) -> None:
        self.driver.call("init_transactions", self.name).result(timeout_s)

    def begin_transaction(self) -> None:
        self.driver.call("begin_transaction", self.name).result(self._timeout_s)

    def commit_transaction(self, timeout_s: float) -> None:
        self.driver.call("commit_transaction", self.name).result(timeout_s)

    def abort_transaction(self, timeout_s: float) -> None:
        self.driver.call("abort_transaction", self.name).result(timeout_s)

    def send_offsets(self, offsets: dict[str, int], consumer: JavaConsumer, timeout_s: float) -> None:
        self.driver.call("send_offsets", self.name, consumer=consumer.name, offsets=_offsets(offsets)).result(timeout_s)

    def close(self, timeout_s: float = 5.0) -> None:
        self.driver.call("close", self.name, timeout_ms=int(timeout_s * 1000))


class JavaConsumer:
    def __init__(
        self,
        driver: JavaDriver,
        opts: WorkloadOptions,
        bootstrap: str,
        client_id: str,
        name: str,
        isolation_level: str,
        group: Group | None = None,
    ) -> None:
        self.driver, self.name = driver, name
        self._timeout_s = consumer_timeout_ms(opts) / 1000 + 5
        self._held: list[str] | None = None
        config = {"bootstrap.servers": bootstrap, "client.id": client_id, **consumer_config(opts, isolation_level)}
        if group is not None:
            config.update(group_config(opts, group))
        reported = _reported(_build(driver, "consumer", name, config), REPORTED_CONSUMER)
        if config.get("group.protocol") == "consumer":  # the coordinator's to set: the client's are unused
            reported = {k: v for k, v in reported.items() if k not in CLASSIC_ONLY}
        self.config = reported

    def assign(self, keys: list[str]) -> None:
        self.driver.call("assign", self.name, keys=[list(split_key(k)) for k in keys]).result(self._timeout_s)

    def poll(self, timeout_ms: int) -> dict[str, list[tuple[int, str | None]]]:
        reply = self.driver.call("poll", self.name, timeout_ms=timeout_ms).result(timeout_ms / 1000 + self._timeout_s)
        if "held" in reply:
            self._held = list(reply["held"])
        read: dict[str, list[tuple[int, str | None]]] = {}
        for topic, partition, offset, value in reply.get("records", []):
            read.setdefault(f"{topic}/{partition}", []).append((offset, value))
        return read

    def position(self, key: str) -> int:
        topic, partition = split_key(key)
        timeout_ms = int((self._timeout_s - 5) * 1000)
        reply = self.driver.call("position", self.name, topic=topic, partition=partition, timeout_ms=timeout_ms)
        return int(reply.result(self._timeout_s)["offset"])

    def seek(self, key: str, offset: int) -> None:
        topic, partition = split_key(key)
        self.driver.call("seek", self.name, topic=topic, partition=partition, offset=offset).result(self._timeout_s)

    def subscribe(self, topics: list[str]) -> None:
        self.driver.call("subscribe", self.name, topics=topics).result(self._timeout_s)

    def rebalanced(self) -> list[str] | None:
        held, self._held = self._held, None
        return held

    def commit(self, offsets: dict[str, int]) -> None:
        self.driver.call("commit", self.name, offsets=_offsets(offsets)).result(self._timeout_s)

    def close(self) -> None:
        self.driver.call("close", self.name, timeout_ms=2000)


class JavaShareConsumer:
    """A KafkaShareConsumer in the driver (share/ShareOps.java), acknowledging explicitly."""

    def __init__(
        self, driver: JavaDriver, opts: WorkloadOptions, bootstrap: str, client_id: str, name: str, group_id: str
    ) -> None:
        self.driver, self.name = driver, name
        self._timeout_s = consumer_timeout_ms(opts) / 1000 + 5
        config = {
            "bootstrap.servers": bootstrap,
            "client.id": client_id,
            "group.id": group_id,
            "share.acknowledgement.mode": "explicit",
            "request.timeout.ms": consumer_timeout_ms(opts),
            **RECONNECT_BACKOFF,
        }
        self.config = _reported(_build(driver, "share_consumer", name, config), REPORTED_SHARE)

    def subscribe(self, topics: list[str]) -> None:
        self.driver.call("share_subscribe", self.name, topics=topics).result(self._timeout_s)

    def poll(self, timeout_ms: int) -> dict[str, list[tuple[int, str | None, int | None]]]:
        call = self.driver.call("share_poll", self.name, timeout_ms=timeout_ms)
        reply = call.result(timeout_ms / 1000 + self._timeout_s)
        got: dict[str, list[tuple[int, str | None, int | None]]] = {}
        for topic, partition, offset, value, count in reply.get("records", []):
            got.setdefault(f"{topic}/{partition}", []).append((offset, value, count))
        return got

    def acknowledge(self, acks: dict[str, list[tuple[int, str]]], timeout_ms: int) -> dict[str, ClientError | None]:
        rows = [[*split_key(key), offset, kind] for key, done in acks.items() for offset, kind in done]
        reply = self.driver.call("share_ack", self.name, acks=rows, timeout_ms=timeout_ms)
        outcomes = reply.result(timeout_ms / 1000 + self._timeout_s).get("outcomes", {})
        out: dict[str, ClientError | None] = {}
        for key in acks:
            got = outcomes.get(key)
            if got == "ok":
                out[key] = None
            elif isinstance(got, dict):
                out[key] = ClientError(got.get("name", "DriverError"), got.get("message", ""), cause=got.get("cause"))
            else:  # the commit said nothing of the key: its outcome is unknown
                out[key] = ClientError("NoOutcome", f"the commit returned no outcome for {key}")
        return out

    def close(self, timeout_s: float = 2.0) -> None:
        self.driver.call("close", self.name, timeout_ms=int(timeout_s * 1000))


class JavaClient:
    name = "java"

    def __init__(
        self, bootstrap: str, opts: WorkloadOptions, version: KafkaVersion, log_dir: Path | None = None
    ) -> None:
        self.bootstrap, self.opts = bootstrap, opts
        self.version = str(version)
        self.driver = JavaDriver(build_driver(version), version, log_dir)
        self._names = itertools.count()

    def producer(self, client_id: str, transactional_id: str | None = None) -> JavaProducer:
        name = f"p{next(self._names)}"
        return JavaProducer(self.driver, self.opts, self.bootstrap, client_id, name, transactional_id)

    def consumer(self, client_id: str, isolation_level: str, group: Group | None = None) -> JavaConsumer:
        name = f"c{next(self._names)}"
        return JavaConsumer(self.driver, self.opts, self.bootstrap, client_id, name, isolation_level, group)

    def share_consumer(self, client_id: str, group_id: str) -> JavaShareConsumer:
        name = f"s{next(self._names)}"
        return JavaShareConsumer(self.driver, self.opts, self.bootstrap, client_id, name, group_id)

    def share_admin(self, call: str, group: str, timeout_s: float = 30.0, **args: Any) -> dict[str, Any]:
        """An admin call for a share group (share/ShareOps.java `admin`): its reply."""
        config = _strings({"bootstrap.servers": self.bootstrap, "request.timeout.ms": 10000})
        asked = dict(call=call, group=group, timeout_ms=int(timeout_s * 1000), **args)
        return self.driver.call("share_admin", "", config=config, **asked).result(timeout_s + 5)

    def died(self) -> str | None:
        return self.driver.died

    def close(self) -> None:
        self.driver.close()


def _open(bootstrap: str, opts: WorkloadOptions, cluster_version: KafkaVersion, log_dir: Path | None) -> JavaClient:
    """The kafka-clients release of --client-version, else the cluster's."""
    return JavaClient(bootstrap, opts, opts.java_version(cluster_version), log_dir)


CLIENT = ClientRecord(
    name=JavaClient.name,
    open=_open,
    producer_settings=producer_config,
    consumer_settings=consumer_config,
    group_settings=group_config,
    definite={
        "RecordTooLargeException": "the record is over the size limit; every attempt is rejected",
        "RecordBatchTooLargeException": "the batch is over the size limit; every attempt is rejected",
        "InvalidRecordException": "the broker rejects the record itself; every attempt is rejected",
        "InvalidTopicException": "the topic name is invalid; nothing is appended",
        "InvalidRequiredAcksException": "the acks setting is refused before any append",
        "TopicAuthorizationException": "not authorized to write; nothing is appended",
        "ClusterAuthorizationException": "not authorized; nothing is appended",
        "TransactionalIdAuthorizationException": "not authorized to use the transactional id",
        "UnsupportedVersionException": "the broker cannot take the request at all",
        "SerializationException": "the record could not be serialized; it never left the client",
    },
    not_definite={
        "TimeoutException": "an attempt may have been appended before the timeout",
        "NotEnoughReplicasAfterAppendException": "the leader appended the record before it found too few replicas",
        "NotLeaderOrFollowerException": "an earlier attempt may have been appended by the old leader (KAFKA-13574)",
        "OutOfOrderSequenceException": "an earlier batch of the producer was lost; this one may be in the log",
        "ProducerFencedException": "a send is fenced after its transaction may have committed",
    },
    commit_definite={
        "CommitFailedException": "the group rebalanced and gave the member's keys away; nothing was stored",
        "RebalanceInProgressException": "the group is rebalancing; the coordinator stored nothing",
        "IllegalGenerationException": "the member's generation is over; the coordinator stored nothing",
        "UnknownMemberIdException": "the member was removed from the group; the coordinator stored nothing",
        "FencedInstanceIdException": "a newer member has the instance id; the coordinator stored nothing",
    },
)
