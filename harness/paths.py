"""Where the harness keeps things on the host."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository's docker/ folder: the image recipes.
RECIPES = Path(__file__).resolve().parent.parent / "docker"


def cache_dir() -> Path:
    """Per-user cache of resolved jars and base-image work (KAFKA_CHAOS_CACHE overrides)."""
    root = os.environ.get("KAFKA_CHAOS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kafka-chaos"
    )
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path
