"""Tiered storage (KIP-405) for a chaos cluster: one remote storage that every broker shares.

The remote storage is a RemoteStorageManager over a folder: Kafka's own for tests,
`LocalTieredStorage`, when the `kafka-storage` test jar of the release (or of an earlier patch
release of its minor line) is on Maven Central; else ours, `FolderRemoteStorageManager`
(tiered-rsm/, built with Maven against the release's kafka-storage-api once, then cached), which
keeps LocalTieredStorage's folder layout, so what reads the folder here reads either. The jar is
mounted read-only into every broker with the folder itself (a host folder under the cluster's
workdir, the same path in every container, each broker's through a gate of its own that the
remote-storage faults close or slow: harness/remote_gate.py). The remote log metadata stays Kafka's default, the
`__remote_log_metadata` topic.

The broker settings make a minute's run tier most of what it writes: the remote log manager's
task runs every second, and retention (which is what deletes local segments once they are
remote) is checked every second. The topics' own settings are `topic_config`'s.
"""

from __future__ import annotations

import re
import shutil
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.maven import (
    MissingArtifact,
    build_project,
    copy_artifacts,
    dependency_xml,
    resolve_once_locked,
    source_digest,
)
from kafka_chaos.harness.paths import cache_dir
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.tiered import LogStarts, PartitionStarts, RemoteStart, ReplicaStart, TieredReads

#: The first release with tiered storage (early access; production-ready from 3.9.0).
FIRST = (3, 6, 0)
RSM_CLASS = "org.apache.kafka.server.log.remote.storage.LocalTieredStorage"
#: Ours, for a release without LocalTieredStorage on Maven Central: its source and class.
OWN_SOURCE = Path(__file__).parent / "tiered-rsm"  # not a Python name: setuptools ships it as data
OWN_CLASS = "kafkachaos.tiered.FolderRemoteStorageManager"
OWN_JAR = "kafka-chaos-rsm.jar"
#: Where every broker sees the shared remote storage (through its gate) and the jar that implements it.
REMOTE_DIR = "/var/lib/kafka-chaos/remote"
PLUGIN_DIR = "/opt/kafka-chaos/tiered"
#: LocalTieredStorage keeps its segments under this folder of its `dir` (and so does ours).
STORAGE_ROOT = "kafka-tiered-storage"
#: More than a workload's record takes in a log (its batch's header shared or not).
RECORD_BYTES = 200
METADATA = "https://repo.maven.apache.org/maven2/org/apache/kafka/kafka-storage/maven-metadata.xml"


def check_tiered(version: KafkaVersion) -> None:
    """UsageError for a release without tiered storage."""
    if version.tuple < FIRST:
        raise UsageError(f"--tiered needs Kafka 3.6.0 or later (tiered storage, KIP-405); {version} has none")


def plugin_jar(release: str) -> str:
    """The test jar's file name, as Maven copies it."""
    return f"kafka-storage-{release}-test.jar"


@dataclass(frozen=True)
class Plugin:
    """The RemoteStorageManager a tiered cluster's brokers load (`resolve_plugin`)."""

    folder: Path  # on the host, holding `jar`; mounted at PLUGIN_DIR
    jar: str
    class_name: str
    #: What config.json's `tiered.storage` calls it: LocalTieredStorage or FolderRemoteStorageManager.
    storage: str
    #: The Kafka release the jar is from (LocalTieredStorage) or was built against (ours).
    release: str

    @classmethod
    def local_tiered_storage(cls, folder: Path, release: str) -> Plugin:
        return cls(folder, plugin_jar(release), RSM_CLASS, RSM_CLASS.rsplit(".", 1)[1], release)

    @classmethod
    def own(cls, folder: Path, release: str) -> Plugin:
        return cls(folder, OWN_JAR, OWN_CLASS, OWN_CLASS.rsplit(".", 1)[1], release)

    def describe(self) -> dict[str, str]:
        """config.json's `tiered` block (the run adds `retention`)."""
        return {"storage": self.storage, "release": self.release}

    def __str__(self) -> str:
        """For the cluster's start line."""
        if self.class_name == RSM_CLASS:
            return f"{self.release}'s LocalTieredStorage"
        return f"kafka-chaos's {self.storage}, built against {self.release}"


def broker_config(broker_count: int, plugin: Plugin) -> dict[str, str]:
    """What a broker of a tiered cluster sets over the harness's defaults to load `plugin`
    (`resolve_plugin`) over the remote folder."""
    return {
        "remote.log.storage.system.enable": "true",
        "remote.log.storage.manager.class.name": plugin.class_name,
        "remote.log.storage.manager.class.path": f"{PLUGIN_DIR}/{plugin.jar}",
        "remote.log.storage.manager.impl.prefix": "rsm.config.",
        "rsm.config.dir": REMOTE_DIR,
        "remote.log.metadata.manager.impl.prefix": "rlmm.config.",
        "remote.log.metadata.manager.listener.name": "PLAINTEXT",
        "rlmm.config.remote.log.metadata.topic.replication.factor": str(min(3, broker_count)),
        "remote.log.manager.task.interval.ms": "1000",
        "log.retention.check.interval.ms": "1000",
        # The first retention check, which is what deletes a local copy once it is remote, waits
        # this long after the broker starts (Kafka's default, docs/cluster.md; unknown before 3.8,
        # and ignored there).
        "log.initial.task.delay.ms": "1000",
    }


#: What a dedicated controller of a tiered cluster sets: a controller checks a topic's
#: `remote.storage.enable` against its own `remote.log.storage.system.enable` (CreateTopics is
#: refused with "Tiered Storage functionality is disabled in the broker" otherwise).
CONTROLLER_CONFIG = {"remote.log.storage.system.enable": "true"}


def topic_config(rate: float, seconds: float) -> dict[str, str]:
    """A tiered topic whose segments roll every second, whose local copy is deleted a second
    after its segment is remote, and whose retention cannot delete anything a run of `rate`
    operations/s for `seconds` writes: `retention.bytes` and `retention.ms` a hundred times what
    such a run could write (at `RECORD_BYTES` a record) and lasts."""
    most = int(rate * max(seconds, 60) * RECORD_BYTES)
    return {
        "remote.storage.enable": "true",
        "segment.ms": "1000",
        "local.retention.ms": "1000",
        "retention.bytes": str(max(most, 1 << 20) * 100),
        "retention.ms": str(int(max(seconds, 60) * 1000) * 100),
    }


def remote_segments(remote_dir: Path) -> dict[str, list[tuple[int, Path]]]:
    """The remote storage's log segments per partition folder (`<topic>-<partition>-<topic id>`,
    the id 22 characters): (base offset, path), lowest first. LocalTieredStorage (and ours) names
    a segment's log `<base offset, 20 digits>-<segment id>.log`."""
    out: dict[str, list[tuple[int, Path]]] = {}
    root = remote_dir / STORAGE_ROOT
    if not root.is_dir():
        return out
    for partition in sorted(p for p in root.iterdir() if p.is_dir()):
        logs = []
        for log in partition.glob("*.log"):
            match = re.match(r"(\d{20})-", log.name)
            if match:
                logs.append((int(match.group(1)), log))
        out[partition.name] = sorted(logs)
    return out


def segments_of(remote: dict[str, list[tuple[int, Path]]], key: str) -> list[tuple[int, Path]]:
    """A key's (`topic/partition`) remote segments, of every folder of it (a topic recreated
    under the same name has a folder per topic id), from `remote_segments`."""
    topic, partition = key.rsplit("/", 1)
    return [
        segment
        for folder, logs in remote.items()
        if partition_of_folder(folder) == (topic, partition)
        for segment in logs
    ]


def partition_of_folder(folder: str) -> tuple[str, str] | None:
    """(topic, partition) of a remote partition folder's name, `<topic>-<partition>-<topic id>`."""
    match = re.fullmatch(r"(.+)-(\d+)-[A-Za-z0-9_-]{22}", folder)
    return (match.group(1), match.group(2)) if match else None


def _release_versions(upto: KafkaVersion) -> list[str]:
    """kafka-storage's releases on Maven Central at or below `upto` in its minor line (4.2.0 to
    4.2.2 for 4.2.2), newest first: a patch release does not move the classes the test jar uses,
    a minor one may (4.3.1's LocalTieredStorage does not load in 4.4.0, whose LogContext moved)."""
    with urllib.request.urlopen(METADATA, timeout=30) as answer:
        tree = ElementTree.fromstring(answer.read())
    found = []
    for node in tree.iter("version"):
        text = (node.text or "").strip()
        if re.fullmatch(r"\d+\.\d+\.\d+", text):
            key = tuple(int(x) for x in text.split("."))
            if key <= upto.tuple and key[:2] == upto.tuple[:2] and key >= FIRST:
                found.append(key)
    return [".".join(map(str, k)) for k in sorted(found, reverse=True)]


def _fetch_test_jar(release: str, dest: Path) -> bool:
    """kafka-storage's test jar of `release` into `dest`; False when Maven Central lacks it."""
    jar = dependency_xml("org.apache.kafka", "kafka-storage", release, False, classifier="test")
    try:
        copy_artifacts([jar], dest, f"kafka-storage {release}'s test jar")
    except MissingArtifact:
        return False
    return True


def holds_class(jar: Path, class_name: str) -> bool:
    """Whether `jar` holds `class_name`: Maven Central serves kafka-storage 4.4.0's test jar, and
    that jar no longer holds LocalTieredStorage, so a jar's presence says nothing of its class."""
    entry = class_name.replace(".", "/") + ".class"
    try:
        with zipfile.ZipFile(jar) as archive:
            return entry in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _fetch_local_tiered_storage(release: str, dest: Path) -> bool:
    """`release`'s test jar into `dest` when Maven Central has it and it holds LocalTieredStorage;
    a jar without the class is removed."""
    if not _fetch_test_jar(release, dest):
        return False
    if holds_class(dest / plugin_jar(release), RSM_CLASS):
        return True
    (dest / plugin_jar(release)).unlink(missing_ok=True)
    return False


#: In a resolved plugin folder: the release whose test jar it holds, or that it holds none.
_RELEASE = "release"
_NO_TEST_JAR = "no-test-jar"


def resolve_plugin(version: KafkaVersion, log: Callable[[str], None] | None = None) -> Plugin:
    """The remote storage of a tiered cluster of `version`.

    LocalTieredStorage from the version's own test jar when Maven Central has it and the jar holds
    the class; else from the newest earlier patch release of the same minor line whose jar does;
    else ours, built against the version's kafka-storage-api (`build_own`). config.json's `tiered`
    says which. What Maven has is asked once per version, then cached."""
    dest = cache_dir() / "jars" / f"{version}-tiered"

    def resolve(into: Path) -> None:
        if _fetch_local_tiered_storage(str(version), into):
            (into / _RELEASE).write_text(str(version))
            return
        for release in _release_versions(version):
            if release != str(version) and _fetch_local_tiered_storage(release, into):
                (into / _RELEASE).write_text(release)
                return
        line = f"{version.major}.{version.minor}"
        (into / _NO_TEST_JAR).write_text(f"no kafka-storage test jar of {line} up to {version} holds {RSM_CLASS}")

    resolve_once_locked(dest, version, resolve)
    if (dest / _RELEASE).exists():
        release = (dest / _RELEASE).read_text().strip()
        if holds_class(dest / plugin_jar(release), RSM_CLASS):
            return Plugin.local_tiered_storage(dest, release)
        # a folder cached before the class was checked: ask Maven again
        shutil.rmtree(dest, ignore_errors=True)
        return resolve_plugin(version, log)
    return Plugin.own(build_own(version, log), str(version))


def own_dir(version: KafkaVersion) -> Path:
    return cache_dir() / "tiered" / f"rsm-{version}-{source_digest(OWN_SOURCE)}"


def build_own(version: KafkaVersion, log: Callable[[str], None] | None = None) -> Path:
    """The folder holding our RemoteStorageManager's jar, built with Maven against
    kafka-storage-api `version` once per version and source, then cached. UsageError when Maven
    Central has no such kafka-storage-api."""

    def build(dest: Path) -> None:
        if log is not None:
            log(f"building kafka-chaos's remote storage against kafka-storage-api {version} (once; cached)")
        needs = f"--tiered on Kafka {version} builds kafka-chaos's remote storage, which"
        try:
            build_project(
                OWN_SOURCE,
                dest,
                [f"-Dkafka.version={version}", "package"],
                [OWN_JAR],
                "kafka-chaos's remote storage",
                needs,
            )
        except MissingArtifact as missing:
            raise UsageError(
                f"--tiered on Kafka {version} needs kafka-storage's test jar (LocalTieredStorage) or "
                f"kafka-storage-api {version} to build ours, and Maven Central has neither: {missing}"
            ) from None

    return resolve_once_locked(own_dir(version), version, build)


def local_log_starts(data_dirs: list[Path], keys: list[str]) -> dict[str, int | None]:
    """Per key (`topic/partition`): the lowest base offset of any local segment on any of the
    brokers' data folders (None when no broker holds a segment of it). A record below it is on
    no broker's disk: a read of it is served from remote storage."""
    out: dict[str, int | None] = {}
    for key in keys:
        topic, partition = key.rsplit("/", 1)
        bases = [
            int(log.stem)
            for data in data_dirs
            for log in (data / f"{topic}-{partition}").glob("*.log")
            if log.stem.isdigit()
        ]
        out[key] = min(bases) if bases else None
    return out


class ReadSources:
    """Where the final read's records came from: a tap on the history (runs/run.py) that, once
    `begin` has the local log starts of the moment the final read began, counts each record a
    `poll` returned as read from remote storage (below its key's start) or from a local log."""

    def __init__(self) -> None:
        self.starts: dict[str, int | None] | None = None
        self.read: dict[str, set[int]] = {}  # offsets per key, each counted once however often read

    def begin(self, starts: dict[str, int | None]) -> None:
        self.starts = starts

    def add(self, event: dict) -> None:
        if self.starts is None or event.get("f") != "poll" or event.get("type") != "ok":
            return
        for key, records in (event["value"][0][1] or {}).items():
            self.read.setdefault(key, set()).update(record[0] for record in records)

    def measure(self) -> TieredReads:
        """summary.json's `tiered_reads`: distinct records (key, offset) the final read got."""
        remote = local = 0
        for key, offsets in self.read.items():
            start = (self.starts or {}).get(key)
            below = sum(1 for offset in offsets if start is not None and offset < start)
            remote, local = remote + below, local + len(offsets) - below
        return TieredReads(
            remote,
            local,
            self.starts,
            "a record below every broker's local log start when the final read began (the brokers' "
            "ListOffsets answer, else their lowest segment file) is counted as read from remote storage",
        )


def retention_margin(topic: dict[str, str], data_dirs: list[Path], remote_dir: Path, keys: list[str], wall_s: float):
    """config.json's proof that retention could not delete anything the run wrote: per key, the
    bytes of its remote segments plus the largest local copy of the rest, against
    `retention.bytes`; the run's wall time against `retention.ms`. A local segment whose base
    offset a remote segment has is that segment's local copy (the remote log manager copies
    segments whole), counted once, as Kafka counts it when its highest remote offset is known."""
    remote = remote_segments(remote_dir)
    largest = 0
    for key in keys:
        topic_name, partition = key.rsplit("/", 1)
        logs = segments_of(remote, key)
        remote_bytes = sum(log.stat().st_size for _, log in logs)
        remote_bases = {base for base, _ in logs}
        local_bytes = max(
            (
                sum(
                    log.stat().st_size
                    for log in (d / f"{topic_name}-{partition}").glob("*.log")
                    if not (log.stem.isdigit() and int(log.stem) in remote_bases)
                )
                for d in data_dirs
            ),
            default=0,
        )
        largest = max(largest, remote_bytes + local_bytes)
    retention_bytes, retention_ms = int(topic["retention.bytes"]), int(topic["retention.ms"])
    return {
        "retention_bytes": retention_bytes,
        "retention_ms": retention_ms,
        "largest_partition_bytes": largest,
        "run_s": round(wall_s, 1),
        "nothing_deletable": largest < retention_bytes and wall_s * 1000 < retention_ms,
    }


def log_starts(
    ask: Callable[[int], dict[str, Any]],
    assignment: dict[str, list[int]] | None,
    broker_ids: list[int],
    keys: list[str],
    remote_dir: Path,
) -> LogStarts:
    """log-starts.json (history/tiered.py): where each partition of the run begins at its end, on every replica and in
    remote storage. `ask(broker_id)` is that broker's own answer (harness/admin.py
    `log_starts_from`); `assignment`, each key's replicas from the cluster's metadata (None when
    it could not be read: then every broker counts as a replica of every key).

    Every replica of a key is listed: with its `log_start` and `local_log_start`, or with
    `log_start` None and `error` when it did not answer for that key (a broker that could not be
    asked at all is also in `unanswered`, with why). None is never a start of 0: the checker's
    `log-start-moved` (checkers/tiered.py) does not judge such a replica. With retention that could
    delete nothing, every start is 0 (the topic is new)."""
    replicas: dict[str, dict[str, ReplicaStart]] = {key: {} for key in keys}
    unanswered: dict[str, str] = {}
    expected = {key: broker_ids if assignment is None else assignment.get(key, broker_ids) for key in keys}
    for broker in sorted({b for replicas in expected.values() for b in replicas}):
        try:
            answer = ask(broker)
        except Exception as exc:  # the file says so: the checker then cannot judge this broker's replicas
            unanswered[str(broker)] = f"{type(exc).__name__}: {exc}"
            answer = {}
        for key in keys:
            if broker not in expected[key]:
                continue
            entry = answer.get(key) or {"log_start": None, "local_log_start": None}
            if entry.get("log_start") is None and "error" not in entry:
                entry = {**entry, "error": unanswered.get(str(broker), "no answer for this partition")}
            replicas[key][str(broker)] = ReplicaStart.from_json(entry)
    remote = remote_segments(remote_dir)
    partitions = {}
    for key in keys:
        bases = [base for base, _ in segments_of(remote, key)]
        partitions[key] = PartitionStarts(replicas[key], RemoteStart(len(bases), min(bases) if bases else None))
    return LogStarts(
        partitions,
        unanswered,
        "after the final read, from every replica (ListOffsets for its own copy) and the remote folder",
        "from the cluster's metadata" if assignment is not None else "unknown: every broker asked",
    )


def lowest_local_starts(starts: LogStarts) -> dict[str, int]:
    """Per key of a `log_starts` document, the lowest local log start its replicas answered
    (a key none answered for is left out)."""
    out: dict[str, int] = {}
    for key, partition in starts.partitions.items():
        answered = [r.local_log_start for r in partition.replicas.values()]
        known = [start for start in answered if start is not None and start >= 0]
        if known:
            out[key] = min(known)
    return out
