"""Resolve a Kafka version to a runnable, cached image: `kafka-chaos/kafka:<version>`.

In order: the image already present locally is used as it is (when it was built from this
recipe: its label says which); else the official
`apache/kafka:<version>` (3.7.0 on) is pulled and the harness entrypoint layered on it; else
the image is built here from Maven Central jars on a Java 17 base. The base is
`eclipse-temurin:17-jre` when it can be pulled, else built from Debian packages
(docker/base/build-base.sh: debootstrap + docker import). Recipes live in docker/.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
from docker.errors import APIError, BuildError, ImageNotFound

from kafka_chaos.harness.errors import KafkaChaosError
from kafka_chaos.harness.maven import resolve_broker_jars
from kafka_chaos.harness.paths import RECIPES, cache_dir
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.reporter import Reporter

IMAGE_REPO = "kafka-chaos/kafka"
BASE_IMAGE = "kafka-chaos/base:bookworm-jre17"
TEMURIN = ("eclipse-temurin", "17-jre")
OFFICIAL_REPO = "apache/kafka"
_RECIPE_FILES = ("entrypoint.sh", "train-cds.sh", "log4j.properties", "log4j2.properties")

logger = logging.getLogger(__name__)
#: The recipe an image was built from (a digest of docker/kafka): an image from another recipe
#: (an older entrypoint, no class-data archives) is built again rather than used.
RECIPE_LABEL = "org.kafka-chaos.recipe"


def recipe_id() -> str:
    digest = hashlib.sha256()
    for name in ("Dockerfile", "Dockerfile.official", *_RECIPE_FILES):
        digest.update(name.encode() + b"\0" + (RECIPES / "kafka" / name).read_bytes())
    return digest.hexdigest()[:12]


def image_tag(version: KafkaVersion) -> str:
    return f"{IMAGE_REPO}:{version}"


def _present(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except ImageNotFound:
        return False


def _try_pull(client: docker.DockerClient, repo: str, tag: str, log: Reporter, instead: str) -> bool:
    """Pull when a registry answers; False at once on a registry-less host. A failed pull is
    told in the user's terms (`instead`: what happens next); the engine's error goes to the
    debug log (`-v`), since a truncated server error reads as a failure."""
    if os.environ.get("KAFKA_CHAOS_OFFLINE"):
        return False
    try:
        client.images.pull(repo, tag=tag)
        log(f"pulled {repo}:{tag}")
        return True
    except (APIError, ImageNotFound) as exc:
        logger.info("pulling %s:%s failed: %s", repo, tag, exc)
        log(f"no container registry has {repo}:{tag} for this machine; {instead}")
        return False


def ensure_base_image(client: docker.DockerClient, log: Reporter = print) -> str:
    """The Java 17 base: present, pulled from eclipse-temurin, or built from Debian packages."""
    if _present(client, BASE_IMAGE):
        return BASE_IMAGE
    if _try_pull(client, *TEMURIN, log, "building the Java 17 base from Debian packages instead"):
        client.images.get(":".join(TEMURIN)).tag(BASE_IMAGE)
        return BASE_IMAGE
    script = RECIPES / "base" / "build-base.sh"
    work = cache_dir() / "base-build"
    log(f"building {BASE_IMAGE} from Debian packages (debootstrap; a few minutes, once)")
    proc = subprocess.run(["bash", str(script), BASE_IMAGE, str(work)], capture_output=True, text=True)
    if proc.returncode != 0 or not _present(client, BASE_IMAGE):
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise KafkaChaosError(f"building {BASE_IMAGE} failed (exit {proc.returncode}):\n{tail}")
    return BASE_IMAGE


def _build(client: docker.DockerClient, context: Path, dockerfile: str, tag: str, args: dict[str, str]) -> None:
    """Build from a recipe of docker/kafka; the image's label names the recipe (RECIPE_LABEL)."""
    args = {**args, "RECIPE": recipe_id()}
    try:
        client.images.build(
            path=str(context), dockerfile=dockerfile, tag=tag, buildargs=args, rm=True, forcerm=True, pull=False
        )
    except BuildError as exc:
        lines = [str(chunk.get("stream") or chunk.get("error") or "").strip() for chunk in exc.build_log]
        log_tail = "\n".join(line for line in lines if line)[-2000:]
        raise KafkaChaosError(f"building {tag} failed: {exc.msg}\n{log_tail}") from exc


def _recipe_context(work: Path, dockerfile: str) -> None:
    for name in (dockerfile, *_RECIPE_FILES):
        shutil.copy2(RECIPES / "kafka" / name, work / name)


def build_image(client: docker.DockerClient, version: KafkaVersion, log: Reporter = print) -> str:
    """Build `kafka-chaos/kafka:<version>` from Maven Central jars on the Java 17 base."""
    tag = image_tag(version)
    base = ensure_base_image(client, log)
    log(f"resolving Kafka {version} jars with Maven")
    jars = resolve_broker_jars(version)
    log(f"building {tag}")
    with tempfile.TemporaryDirectory(prefix="kafka-chaos-image-") as tmp:
        work = Path(tmp)
        _recipe_context(work, "Dockerfile")
        shutil.copytree(jars, work / "libs", ignore=shutil.ignore_patterns(".*"))
        _build(client, work, "Dockerfile", tag, {"BASE": base, "KAFKA_VERSION": str(version)})
    return tag


def _derive_official(client: docker.DockerClient, version: KafkaVersion) -> str:
    tag = image_tag(version)
    with tempfile.TemporaryDirectory(prefix="kafka-chaos-image-") as tmp:
        work = Path(tmp)
        _recipe_context(work, "Dockerfile.official")
        _build(
            client,
            work,
            "Dockerfile.official",
            tag,
            {"BASE": f"{OFFICIAL_REPO}:{version}", "KAFKA_VERSION": str(version)},
        )
    return tag


#: One image made at a time on this machine, by every process of every user: the images are the
#: Docker engine's, shared by all, and two builds of the base at once share its debootstrap folder
#: (each first empties it). On a fresh machine a test suite's workers all want the first image at once.
BUILD_LOCK = Path(tempfile.gettempdir()) / "kafka-chaos-image-build.lock"


@contextlib.contextmanager
def _one_build_at_a_time(log: Reporter) -> Iterator[None]:
    with open(BUILD_LOCK, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("another process is making an image; waiting for it")
            fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _current(client: docker.DockerClient, tag: str) -> bool | None:
    """Whether `tag` is present and built from this recipe; None when it is absent."""
    try:
        return (client.images.get(tag).labels or {}).get(RECIPE_LABEL) == recipe_id()
    except ImageNotFound:
        return None


def ensure_image(
    client: docker.DockerClient, version: KafkaVersion, log: Reporter = print, rebuild: bool = False
) -> str:
    """The image tag for this version, making it if needed (see the module docstring). Making it
    waits for any other process's making of an image, then looks again: that one may have been it."""
    tag = image_tag(version)
    if not rebuild and _current(client, tag):
        return tag
    with _one_build_at_a_time(log):
        if rebuild:
            return build_image(client, version, log)
        current = _current(client, tag)
        if current:
            return tag
        return _make(client, version, tag, log, current is False)


def _make(client: docker.DockerClient, version: KafkaVersion, tag: str, log: Reporter, stale: bool) -> str:
    if stale:
        log(f"{tag} was built from an older recipe (docker/kafka); building it again")
    instead = f"building the Kafka {version} image from Maven Central's jars instead (once, a minute or two)"
    if version.has_official_image and _try_pull(client, OFFICIAL_REPO, str(version), log, instead):
        return _derive_official(client, version)
    return build_image(client, version, log)
