"""Which shape of schedule `explore` draws fresh: a bandit over the chain shapes
(nemesis/space.py CHAINS), paid by the depth each run reached toward a loss.

UCB1 (Auer, Cesa-Bianchi and Fischer, 2002): each arm is tried once, in order; then the arm whose
mean reward plus sqrt(2 ln N / n) is highest, ties broken by the run's own random stream, so a
campaign's choices follow from its seed and what its runs reached (and `--resume` goes on from
campaign.json). A run's reward is the deepest fraction of any progress ladder it climbed
(checkers/measures/ladders.py): 0 for a run that reached no waypoint, 1 for one at a ladder's top.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_chaos.checkers.measures.ladders import LADDERS


def reward(depths: Mapping[str, int]) -> float:
    """The deepest fraction of a ladder a run climbed (`depths`: ladder -> rungs reached)."""
    return max((d / len(LADDERS[ladder]) for ladder, d in depths.items() if ladder in LADDERS), default=0.0)


@dataclass
class Bandit:
    arms: tuple[str, ...]
    pulls: dict[str, int] = field(default_factory=dict)
    total: dict[str, float] = field(default_factory=dict)

    def choose(self, rng: random.Random) -> str:
        untried = [a for a in self.arms if not self.pulls.get(a)]
        if untried:
            return untried[0]
        n = sum(self.pulls[a] for a in self.arms)

        def bound(arm: str) -> float:
            k = self.pulls[arm]
            return self.total.get(arm, 0.0) / k + math.sqrt(2 * math.log(n) / k)

        best = max(bound(a) for a in self.arms)
        return rng.choice([a for a in self.arms if math.isclose(bound(a), best)])

    def pay(self, arm: str, amount: float) -> None:
        self.pulls[arm] = self.pulls.get(arm, 0) + 1
        self.total[arm] = self.total.get(arm, 0.0) + amount

    def mean(self, arm: str) -> float | None:
        return self.total.get(arm, 0.0) / self.pulls[arm] if self.pulls.get(arm) else None

    def to_json(self) -> dict[str, Any]:
        return {"arms": list(self.arms), "pulls": dict(self.pulls), "total": dict(self.total)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None, arms: Sequence[str]) -> Bandit:
        """A saved bandit, or a new one over `arms` (a campaign from before the bandit)."""
        if not data:
            return cls(tuple(arms))
        return cls(
            tuple(data["arms"]),
            {k: int(v) for k, v in data["pulls"].items()},
            {k: float(v) for k, v in data["total"].items()},
        )
