"""One run seed, a random stream of its own for each thing that draws: the nemesis's targets and
the random schedule's faults would otherwise draw the same numbers from two generators seeded
alike, each choice of one mirroring a choice of the other."""

from __future__ import annotations

import random


def stream(seed: int | None, use: str) -> random.Random:
    """The stream of `use` (e.g. "targets", "schedule") derived from `seed`: the same for the same
    seed, different for each use; None: one drawn from the system."""
    return random.Random() if seed is None else random.Random(f"{seed}:{use}")
