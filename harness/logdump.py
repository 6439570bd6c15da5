"""Kafka's own log decoder (DumpLogSegments), run from the broker image of the run's version
on log files the run left in its directory.

The cluster is gone by then; a throwaway container of the same image reads the files (mounted
read-only, no network) and prints what it decoded. Its records are parsed here into plain
dicts: `offset`, `create_time_ms` and `payload` (the text after "payload: ", or None).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

from kafka_chaos.harness.cleanup import labels_for, remove_by_label
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.harness.images import ensure_image
from kafka_chaos.harness.maven import resolve_tools_jars
from kafka_chaos.harness.versions import KafkaVersion

_RECORD = re.compile(r"^\|?\s*offset: (\d+)\s.*?CreateTime: (-?\d+)(.*)$")
#: The tool's class: in the broker's core jar through 3.x, in kafka-tools from 4.0 on.
_CORE, _TOOLS = "kafka.tools.DumpLogSegments", "org.apache.kafka.tools.DumpLogSegments"


def dump(version: KafkaVersion, directory: Path, files: list[str], *options: str) -> str:
    """The tool's output for `files` (names inside `directory`), e.g. with --print-data-log."""
    client = docker_client()
    image = ensure_image(client, version, lambda _m: None)
    run_id = f"dump-{uuid.uuid4().hex[:8]}"
    paths = ",".join(f"/logs/{name}" for name in files)
    volumes = {str(directory.resolve()): {"bind": "/logs", "mode": "ro"}}
    try:
        out, err = _run(
            client, image, run_id, volumes, f"{_CORE} {' '.join(options)} --files {paths}", "/opt/kafka/libs/*"
        )
        if out is None and "ClassNotFoundException" in err:  # 4.x: the tool moved to kafka-tools
            volumes[str(resolve_tools_jars(version))] = {"bind": "/tools", "mode": "ro"}
            command = f"{_TOOLS} {' '.join(options)} --files {paths}"
            out, err = _run(client, image, run_id, volumes, command, "/opt/kafka/libs/*:/tools/*")
    finally:
        remove_by_label(client, run_id)
    if out is None:
        raise RuntimeError(f"DumpLogSegments failed on {directory}: {err[-300:]}")
    return out


def _run(client, image: str, run_id: str, volumes: dict, command: str, classpath: str) -> tuple[str | None, str]:
    """(stdout, stderr) of the tool in a throwaway container; stdout None when it failed."""
    container = client.containers.run(
        image, ["-c", f"java -Xmx256m -cp '{classpath}' {command}"], entrypoint="sh", detach=True,
        network_mode="none", volumes=volumes, labels=labels_for(run_id, role="log-dump"),
    )  # fmt: skip
    try:
        code = container.wait(timeout=300).get("StatusCode", 1)
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        err = container.logs(stdout=False, stderr=True).decode(errors="replace").strip()
    finally:
        container.remove(force=True)
    return (out if code == 0 and "Dumping" in out else None), err


def records(output: str) -> Iterator[dict]:
    """Each record line of the tool's output (batch header lines are skipped)."""
    for line in output.splitlines():
        if not line.startswith("|") and " offset: " not in line[:12]:
            continue
        match = _RECORD.match(line.strip())
        if not match:
            continue
        rest = match.group(3)
        _, sep, payload = rest.partition(" payload: ")
        yield {
            "offset": int(match.group(1)),
            "create_time_ms": int(match.group(2)),
            "payload": payload.strip() if sep else None,
        }


def segment_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("*.log"))
