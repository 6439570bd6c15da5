"""Where the harness keeps things on the host."""

from __future__ import annotations

import os
from pathlib import Path

#: The image recipes: the checkout's docker/ folder, or kafka_chaos/docker/ beside this package
#: where it is installed from a wheel (package data; pyproject.toml).
RECIPES = Path(__file__).resolve().parent.parent / "docker"


def cache_dir() -> Path:
    """Per-user cache of resolved jars and base-image work (KAFKA_CHAOS_CACHE overrides)."""
    root = os.environ.get("KAFKA_CHAOS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kafka-chaos"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
