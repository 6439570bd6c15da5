"""Kafka versions: parsing, the supported range, and the per-version facts the harness needs.

Only released versions from 3.4.0 on run in KRaft mode with a static controller quorum from
one configuration, so that is the floor. Whether a version exists is decided by Maven when
its jars are resolved (harness/maven.py), not by a list kept here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.history import versions as history_versions
from kafka_chaos.history.versions import release_key

#: Newest release whose artifacts all resolve from Maven Central when this was written.
DEFAULT_VERSION = "4.4.0"
#: The oldest supported line, used by tests of the oldest supported cluster.
OLDEST_SUPPORTED = "3.4.1"
MINIMUM = (3, 4, 0)
#: apache/kafka images exist on Docker Hub from this release on.
FIRST_OFFICIAL_IMAGE = (3, 7, 0)


@total_ordering
@dataclass(frozen=True)
class KafkaVersion:
    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> KafkaVersion:
        """Parse MAJOR.MINOR.PATCH and check it is a supported release; UsageError otherwise."""
        try:
            version = cls(*release_key(text))
        except ValueError:
            raise UsageError(
                f"malformed Kafka version {text!r}: expected MAJOR.MINOR.PATCH, such as {DEFAULT_VERSION}"
            ) from None
        if version.tuple < MINIMUM:
            raise UsageError(
                f"Kafka {version} is not supported: KRaft clusters need {'.'.join(map(str, MINIMUM))} or later"
            )
        return version

    @property
    def tuple(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def __lt__(self, other: KafkaVersion) -> bool:
        return self.tuple < other.tuple

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def uses_log4j2(self) -> bool:
        """Kafka 4.0 moved the broker's logging from reload4j to log4j2 (KIP-653)."""
        return self.major >= 4

    @property
    def has_official_image(self) -> bool:
        return self.tuple >= FIRST_OFFICIAL_IMAGE


def metadata_version_key(text: str) -> tuple[int, int, int]:
    """A metadata version (`--release-version`) as something to compare: (3, 9, 0) for "3.9-IV0"
    (a bare "3.9" is IV0); UsageError when it is not of that form."""
    try:
        return history_versions.metadata_version_key(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
