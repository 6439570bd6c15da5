"""Kafka's own log decoder (DumpLogSegments), run from the broker image of the run's version
on log files the run left in its directory.

The cluster is gone by then; a throwaway container of the same image reads the files (mounted
read-only, no network) and prints what it decoded. Its records are parsed here into plain
dicts: `offset`, `create_time_ms` and `payload` (the text after "payload: ", or None) by
`records`; `decoded` adds the batch's partition leader epoch and what a control record printed.
"""

from __future__ import annotations

import functools
import json
import re
import uuid
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafka_chaos.harness.cleanup import labels_for, remove_by_label
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.harness.images import ensure_image
from kafka_chaos.harness.maven import resolve_tools_jars
from kafka_chaos.harness.versions import KafkaVersion

_RECORD = re.compile(r"^\|?\s*offset: (\d+)\s.*?CreateTime: (-?\d+)(.*)$")
#: A batch header's partition leader epoch: the epoch of the leader that appended the batch.
_BATCH_EPOCH = re.compile(r"\bpartitionLeaderEpoch: (-?\d+)")
#: What follows a record's header keys: "payload: ...", "controlType: NAME(n)" (3.x control
#: records), or "<Name>: {json}" (4.x control records: LeaderChange, SnapshotHeader, ...).
_BODY = re.compile(r"headerKeys: \[[^\]]*\]\s?(.*)$")
_LABELLED = re.compile(r"^(\w+): (.*)$")
_CONTROL_TYPE = re.compile(r"^(\w+)\(-?\d+\)$")
#: The tool's class: in the broker's core jar through 4.2, in kafka-tools from 4.3 on.
_CORE, _TOOLS = "kafka.tools.DumpLogSegments", "org.apache.kafka.tools.DumpLogSegments"
_TOOLS_CLASS = _TOOLS.replace(".", "/") + ".class"


@dataclass(frozen=True)
class DumpRequest:
    """One run of the tool: `files` (paths inside the mounted directory) decoded with `options`."""

    files: tuple[str, ...]
    options: tuple[str, ...]


#: The tool's JVM lives a second or two: C1 only and the serial collector cost the least CPU
#: for that (docs/measurements.md, 2026-11-26).
TOOL_JVM = "-Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


@functools.cache
def has_class(jars: Path, entry: str) -> bool:
    """Whether any jar in the folder `jars` holds the class file `entry`; asked once per folder
    (a version's resolved jars do not change), not at every run's decode."""
    for jar in sorted(jars.glob("*.jar")):
        try:
            with zipfile.ZipFile(jar) as z:
                if entry in z.namelist():
                    return True
        except zipfile.BadZipFile:
            continue
    return False


def dump_all(version: KafkaVersion, directory: Path, requests: list[DumpRequest]) -> list[str | RuntimeError]:
    """Each request's output, or the error it ended with: one throwaway container for all of
    them (a container costs the engine more than a JVM costs the machine), one JVM each. The
    tool's class is in the broker's core jar through 3.x and in kafka-tools from 4.0 on. No
    request, no container."""
    if not requests:
        return []
    client = docker_client()
    image = ensure_image(client, version, lambda _m: None)
    run_id = f"dump-{uuid.uuid4().hex[:8]}"
    volumes = {str(directory.resolve()): {"bind": "/logs", "mode": "ro"}}
    tool, classpath = _CORE, "/opt/kafka/libs/*"
    if version.major >= 4:
        tools = resolve_tools_jars(version)
        if has_class(tools, _TOOLS_CLASS):
            volumes[str(tools)] = {"bind": "/tools", "mode": "ro"}
            tool, classpath = _TOOLS, "/opt/kafka/libs/*:/tools/*"
    mark = f"@@kafka-chaos-{uuid.uuid4().hex}"
    script = "".join(
        f"echo '{mark} {i}'; java {TOOL_JVM} -cp '{classpath}' {tool} {' '.join(r.options)} "
        f'--files {",".join(f"/logs/{name}" for name in r.files)}; echo "{mark} {i} $?"; '
        for i, r in enumerate(requests)
    )
    try:
        container = client.containers.run(
            image,
            ["-c", script],
            entrypoint="sh",
            detach=True,
            network_mode="none",
            volumes=volumes,
            labels=labels_for(run_id, role="log-dump"),
        )
        container.wait(timeout=300)
        out = container.logs(stdout=True, stderr=False).decode(errors="replace")
        err = container.logs(stdout=False, stderr=True).decode(errors="replace").strip()
    finally:
        remove_by_label(client, run_id)
    return [_one(out, mark, i, err, directory) for i in range(len(requests))]


def _one(out: str, mark: str, i: int, err: str, directory: Path) -> str | RuntimeError:
    """Request i's part of the container's output, between its two marks."""
    head, sep, rest = out.partition(f"{mark} {i}\n")
    body, sep2, tail = rest.partition(f"{mark} {i} ")
    code = tail.split("\n", 1)[0].strip() if sep2 else "none"
    if sep and code == "0" and "Dumping" in body:
        return body
    return RuntimeError(f"DumpLogSegments failed on {directory} (exit {code}): {err[-300:]}")


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


def decoded(output: str) -> Iterator[dict[str, Any]]:
    """Each record of the tool's output, as it printed it: `offset`, `create_time_ms`,
    `batch_epoch` (the partitionLeaderEpoch of the batch header above it; None when the tool
    printed none), and the record: `type`, `version`, `data` from a JSON payload
    ({"type", "version", "data"}: --cluster-metadata-decoder), or a control record's type as
    printed ("LEADER_CHANGE" from 3.x's "controlType: LEADER_CHANGE(2)", "LeaderChange" and its
    JSON from 4.x's "LeaderChange: {...}"); a payload that is not such JSON: `type` None and
    `raw` the text."""
    batch_epoch = None
    for line in output.splitlines():
        if line.startswith("Dumping "):
            batch_epoch = None
        elif line.startswith("baseOffset: "):
            match = _BATCH_EPOCH.search(line)
            batch_epoch = int(match.group(1)) if match else None
        elif line.startswith("|") or " offset: " in line[:12]:
            match = _RECORD.match(line.strip())
            if match:
                entry = {"offset": int(match.group(1)), "batch_epoch": batch_epoch}
                entry["create_time_ms"] = int(match.group(2))
                yield entry | _body(match.group(3))


def _body(rest: str) -> dict[str, Any]:
    """A record's type, version and data from what the tool printed after its header keys."""
    body = _BODY.search(rest)
    text = (body.group(1) if body else rest.partition(" payload: ")[2]).strip()
    label, value = "payload", text
    if labelled := _LABELLED.match(text):
        label, value = labelled.groups()
    if label == "controlType":
        control = _CONTROL_TYPE.match(value)
        return {"type": control.group(1) if control else value, "version": None, "data": None}
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if label == "payload" and isinstance(parsed, dict) and isinstance(parsed.get("type"), str):
        return {"type": parsed["type"], "version": parsed.get("version"), "data": parsed.get("data")}
    if label != "payload" and isinstance(parsed, dict):
        version = parsed.get("version")
        return {"type": label, "version": version if isinstance(version, int) else None, "data": parsed}
    return {"type": None, "version": None, "data": None, "raw": value if label == "payload" else text}


def segment_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.glob("*.log"))
