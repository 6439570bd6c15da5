"""`remote-unavailable`, `remote-slow`, `remote-heal`: a tiered cluster's remote storage failing,
or slow, for some brokers, while every broker keeps running and reaching the others.

Each broker of a tiered cluster reaches the shared remote storage through a gate of its own
(harness/remote_gate.py, KafkaNode.gate); these faults set the gates of their target's brokers:
`unavailable` (every operation fails with EIO: the remote log manager's copies, the fetches of
tiered records and the deletes by retention all fail on those brokers), or `slow` (each create,
read and write waits `delay_ms`). `remote-heal` opens the gates again: at a random target every
gate it owes, at a named one the gates of those nodes. Targets are brokers: `random` draws one,
other targets keep the brokers they name (a controller has no remote storage).

The remote storage's content is not changed by a gate (what passes lands in the one shared
folder), so a wiped broker rebuilds its local log from its peers while the remote storage keeps
the rest, closed gate or not.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.harness.remote_gate import OPEN, check_delay
from kafka_chaos.history.events import IMPAIRED
from kafka_chaos.nemesis.fault import Aim, Fault, Stage
from kafka_chaos.nemesis.targets import TargetError, resolve

#: A slow gate's delay unless a step sets `delay_ms`: slower than any local disk, well under
#: the brokers' request timeouts.
DELAY_MS = 200
#: What a random schedule draws a slow gate's delay from (ms).
DELAYS_MS = (50, 200, 1000)


def gated(nodes: list[KafkaNode]) -> list[KafkaNode]:
    """The nodes that have a gate: a tiered cluster's brokers."""
    return [n for n in nodes if n.gate is not None]


def open_gate(node: KafkaNode) -> None:
    """Open a node's gate (a node without one has nothing to open)."""
    if node.gate is not None:
        node.gate.set(OPEN)


#: The fault that opens the gates again (nemesis/faults.py REMOTE_HEAL).
HEAL_NAME = "remote-heal"


@dataclass(frozen=True, kw_only=True)
class Remote(Fault):
    """Put the gates of the target's brokers in `mode` (harness/remote_gate.py): undone by
    `remote-heal`, in a random mix's reach, on a tiered cluster only."""

    mode: str
    undone_by: str | None = HEAL_NAME
    random: bool = True
    effect: str | None = IMPAIRED
    tiered: bool = True

    def aim(self, stage: Stage, target: str, args: Mapping[str, Any]) -> Aim:
        brokers = gated(list(stage.cluster.nodes))
        if not brokers:
            raise TargetError(f"{self.name}: the cluster has no remote storage (it is not tiered)")
        if target == "random":
            return Aim([stage.rng.choice(brokers)])
        nodes = gated(resolve(stage.cluster, target, stage.rng))
        if not nodes:
            raise TargetError(f"{self.name}: {target} names no broker (only brokers have remote storage)")
        return Aim(nodes)

    def apply(self, stage: Stage, aim: Aim, args: Mapping[str, Any]) -> dict[str, Any]:
        for node in aim.nodes:
            assert node.gate is not None  # aim kept the gated nodes
            stage.book(self, [node.alias])  # first: a gate that fails to answer may have closed
            node.gate.set(self.mode, **args)
        return {"nodes": [n.alias for n in aim.nodes]}


@dataclass(frozen=True, kw_only=True)
class RemoteSlow(Remote):
    """A slow gate, its delay its own option (`delay_ms`)."""

    OPTIONS: ClassVar[Mapping[str, Any]] = {"delay_ms": DELAY_MS}

    def check(self, option: str, value: Any) -> None:
        check_delay(value)

    def draw(self, rng: random.Random) -> dict[str, Any]:
        return {"delay_ms": rng.choice(DELAYS_MS)}

    def label(self, target: str, args: Mapping[str, Any]) -> str:
        return f"{self.name} {target} ({args['delay_ms']} ms)"
