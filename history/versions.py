"""Kafka's version strings read one way, for every floor: a release (3.6.2) and a metadata version
(3.5-IV2, a bare 3.9 being IV0), each as a tuple to compare. The harness adds its supported range
and its UsageError (harness/versions.py); the checkers and `trend` read the versions a run
directory records with the same parser.
"""

from __future__ import annotations

import re

_RELEASE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
_METADATA_VERSION = re.compile(r"^(\d+)\.(\d+)(?:-IV(\d+))?$")


def release_key(text: str) -> tuple[int, int, int]:
    """MAJOR.MINOR.PATCH as (major, minor, patch); ValueError for anything else."""
    match = _RELEASE.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"malformed Kafka version {text!r}: expected MAJOR.MINOR.PATCH")
    major, minor, patch = (int(x) for x in match.groups())
    return major, minor, patch


def metadata_version_key(text: str) -> tuple[int, int, int]:
    """A metadata version as (major, minor, IV): (3, 9, 0) for "3.9-IV0" and for "3.9"; ValueError
    for anything else."""
    match = _METADATA_VERSION.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"malformed metadata version {text!r}: expected e.g. 3.9-IV0")
    major, minor, iv = match.groups()
    return int(major), int(minor), int(iv or 0)


def feature_key(text: str) -> tuple[int, int]:
    """(major, minor) of a metadata version or of a release, whichever `text` is: what the
    metadata's features (KAFKA-15021's bump, KIP-853's quorum) are decided by."""
    try:
        return metadata_version_key(text)[:2]
    except ValueError:
        return release_key(text)[:2]
