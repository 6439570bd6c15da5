"""Our RemoteStorageManager (harness/tiered-rsm/), built as a tiered cluster of 4.4.0 builds it,
called as a broker calls it, against Kafka 4.4.0's own classes but without a broker
(tiered_rsm/RsmCheck.java): fetches by position, indexes, retried copies and deletes, which a
fault-free run seldom reaches. Then the folder it leaves is read as the harness reads
LocalTieredStorage's. Needs Maven and a JDK, no Docker; a tiered cluster of it is
tests/integration/test_tiered.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kafka_chaos.harness.maven import resolve_broker_jars
from kafka_chaos.harness.tiered import OWN_JAR, STORAGE_ROOT, build_own, partition_of_folder, remote_segments
from kafka_chaos.harness.versions import KafkaVersion

CHECK = Path(__file__).parent / "tiered_rsm" / "RsmCheck.java"
VERSION = KafkaVersion(4, 4, 0)


def test_our_remote_storage_keeps_local_tiered_storages_layout_and_serves_what_it_copied(tmp_path):
    remote, source = tmp_path / "remote", tmp_path / "source"
    source.mkdir()
    classpath = f"{build_own(VERSION) / OWN_JAR}:{resolve_broker_jars(VERSION)}/*"
    proc = subprocess.run(
        ["java", "-cp", classpath, str(CHECK), str(remote), str(source)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    topic_id, segment_id = proc.stdout.split()
    folder = f"my-topic-3-{topic_id}"
    assert partition_of_folder(folder) == ("my-topic", "3")
    ((base, log),) = remote_segments(remote)[folder]  # the deleted segment is gone
    assert (base, log.name) == (1234, f"{1234:020d}-{segment_id}.log")
    assert sorted(
        p.name.removeprefix(f"{1234:020d}-{segment_id}") for p in (remote / STORAGE_ROOT / folder).iterdir()
    ) == [
        ".index",
        ".leader_epoch_checkpoint",
        ".log",
        ".snapshot",
        ".timeindex",
    ]  # no temporary file left, no transaction index (the retried copy had none)
