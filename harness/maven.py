"""Resolve a Kafka broker's runtime class path from Maven Central with Maven itself.

The broker is `org.apache.kafka:kafka_2.13:<version>` plus its runtime dependencies, as
Maven resolves them. The distribution also ships a logging binding that the POM leaves out
(the core module declares it compile-only): reload4j + slf4j-reload4j on 3.x, log4j2's
SLF4J binding on 4.x. Which binding fits is read off the resolved jars (the slf4j-api and
log4j-core versions), then resolved by Maven too, without its dependencies.
"""

from __future__ import annotations

import fcntl
import hashlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from kafka_chaos.harness.errors import KafkaChaosError, UsageError
from kafka_chaos.harness.paths import RECIPES, cache_dir
from kafka_chaos.harness.versions import KafkaVersion

RELOAD4J = ("ch.qos.reload4j", "reload4j", "1.2.25")
_COMPLETE = ".complete"


def jars_dir(version: KafkaVersion) -> Path:
    return cache_dir() / "jars" / str(version)


def dependency_xml(group: str, artifact: str, version: str, transitive: bool, classifier: str | None = None) -> str:
    exclude_all = "<exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion>"
    exclusions = "" if transitive else f"<exclusions>{exclude_all}</exclusions>"
    kind = f"<classifier>{classifier}</classifier>" if classifier else ""
    return (
        f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version>{kind}{exclusions}</dependency>"
    )


class MissingArtifact(UsageError):
    """Maven Central has no such artifact; the message is Maven's first error."""


def copy_artifacts(dependencies: list[str], dest: Path, what: str) -> None:
    """Maven copies `dependencies` (and what they need) into `dest`. MissingArtifact when Maven
    Central lacks one of them; KafkaChaosError naming `what` when Maven fails otherwise."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise UsageError("Maven (mvn) is not installed; it resolves Kafka's jars (apt-get install maven)")
    template = (RECIPES / "kafka" / "pom.xml.in").read_text()
    with tempfile.TemporaryDirectory(prefix="kafka-chaos-mvn-") as work:
        pom = Path(work) / "pom.xml"
        pom.write_text(template.replace("@DEPENDENCIES@", "\n".join(dependencies)))
        cmd = [
            mvn,
            "-B",
            "-q",
            "-U",
            "-f",
            str(pom),
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            f"-DoutputDirectory={dest}",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        _raise_for(proc.stdout + proc.stderr, f"Maven could not resolve {what}")


def _raise_for(out: str, failed: str) -> None:
    """MissingArtifact when Maven's output says Maven Central lacks an artifact; else a
    KafkaChaosError, `failed` and Maven's first error."""
    if re.search(r"Could not find artifact|was not found in", out):
        raise MissingArtifact(first_error(out))
    raise KafkaChaosError(f"{failed}: {first_error(out)}")


def build_project(source: Path, dest: Path, args: list[str], outputs: list[str], what: str, needs: str) -> None:
    """Maven builds `what`, a copy of our own Java project at `source` (its build output left
    out), with `args` (properties and goals), and copies each of `outputs` (files or folders
    under the copy's `target/`) into `dest`. UsageError naming `needs` without Maven and a JDK;
    MissingArtifact when Maven Central lacks a dependency; KafkaChaosError otherwise."""
    mvn = shutil.which("mvn")
    if mvn is None or shutil.which("javac") is None:
        raise UsageError(f"{needs} needs Maven and a JDK (apt-get install maven openjdk-17-jdk-headless)")
    with tempfile.TemporaryDirectory(prefix="kafka-chaos-build-") as work:
        shutil.copytree(source, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns("target"))
        proc = subprocess.run([mvn, "-B", "-q", "-f", f"{work}/pom.xml", *args], capture_output=True, text=True)
        if proc.returncode != 0:
            _raise_for(proc.stdout + proc.stderr, f"Maven could not build {what}")
        for name in outputs:
            built = Path(work) / "target" / name
            (shutil.copytree if built.is_dir() else shutil.copy)(built, dest / name)


def _mvn_copy(dependencies: list[str], dest: Path, version: KafkaVersion) -> None:
    try:
        copy_artifacts(dependencies, dest, f"Kafka {version}")
    except MissingArtifact as missing:
        raise UsageError(
            f"Kafka {version} has no complete set of artifacts on Maven Central "
            f"(org.apache.kafka:kafka_2.13:{version}): {missing}"
        ) from None


def first_error(output: str) -> str:
    for line in output.splitlines():
        if "[ERROR]" in line:
            return re.sub(r"\x1b\[[0-9;]*m", "", line).replace("[ERROR]", "").strip()[:400]
    return output.strip().splitlines()[-1][:400] if output.strip() else "no output"


def _jar_version(libs: Path, artifact: str) -> str | None:
    for jar in libs.glob(f"{artifact}-*.jar"):
        match = re.fullmatch(rf"{re.escape(artifact)}-(\d[\w.\-]*)\.jar", jar.name)
        if match:
            return match.group(1)
    return None


def logging_binding(libs: Path) -> list[tuple[str, str, str]]:
    """The (group, artifact, version) jars that make the resolved broker log."""
    slf4j = _jar_version(libs, "slf4j-api") or "1.7.36"
    log4j2 = _jar_version(libs, "log4j-core")
    if log4j2:  # Kafka 4.x
        impl = "log4j-slf4j-impl" if slf4j.startswith("1.") else "log4j-slf4j2-impl"
        return [("org.apache.logging.log4j", impl, log4j2)]
    return [RELOAD4J, ("org.slf4j", "slf4j-reload4j", slf4j)]


def resolve_once(dest: Path, version: KafkaVersion, resolve: Callable[[Path], None]) -> Path:
    """Run `resolve` into an empty `dest` once: a finished directory is marked, a broken one removed."""
    if (dest / _COMPLETE).exists():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    try:
        resolve(dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    (dest / _COMPLETE).write_text(str(version))
    return dest


def resolve_once_locked(dest: Path, version: KafkaVersion, resolve: Callable[[Path], None]) -> Path:
    """`resolve_once` under a lock beside `dest`: processes started together (pytest's workers,
    parallel runs) would otherwise remove each other's half-built directory."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest.with_name(dest.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return resolve_once(dest, version, resolve)


def source_digest(source: Path) -> str:
    """A short digest of a Maven project's files (its build output left out): what we build
    from our own Java source is cached per digest, so an edit rebuilds it."""
    digest = hashlib.sha256()
    for path in sorted(source.rglob("*")):
        if path.is_file() and "target" not in path.relative_to(source).parts:
            digest.update(path.relative_to(source).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:8]


def resolve_broker_jars(version: KafkaVersion) -> Path:
    """The directory holding every jar the broker needs; resolved once per version, then cached."""

    def resolve(dest: Path) -> None:
        _mvn_copy([dependency_xml("org.apache.kafka", "kafka_2.13", str(version), True)], dest, version)
        binding = [dependency_xml(g, a, v, False) for g, a, v in logging_binding(dest)]
        _mvn_copy(binding, dest, version)

    return resolve_once(jars_dir(version), version, resolve)


def resolve_tools_jars(version: KafkaVersion) -> Path:
    """Kafka's command-line tools (kafka-tools and what it needs), which the broker image does
    not hold: from 4.0 on, DumpLogSegments lives there. Resolved once per version, then cached."""
    dependency = dependency_xml("org.apache.kafka", "kafka-tools", str(version), True)
    dest = cache_dir() / "jars" / f"{version}-tools"
    return resolve_once(dest, version, lambda d: _mvn_copy([dependency], d, version))
