"""What a fault kind is: one object that resolves its targets, applies itself, says what undoes
it, and how a random schedule draws it. The table of faults (faults.py) holds one of each.

The nemesis (core.py) only records and keeps the open faults, the faults in place that must be
healed: the fault acts on a stage (`Stage`, the nemesis as a fault sees it) and books the nodes
it changed there (`Stage.book`). A fault that stays in place opens its undoer on them (kill:
`start` owes those nodes), an undoer closes what it owes, and a fault that restarts the node
(`closes`) closes that undoer too.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Protocol

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.nemesis.targets import TargetError, resolve


class Stage(Protocol):
    """What a fault sees of the nemesis: the cluster, the targets' random stream, the open faults
    (undoing fault -> the aliases it owes), which it changes only through `book`, and the partition
    in place (its grudge and port: partition.py), which the nemesis installs again on a node that
    starts while it is held."""

    cluster: KafkaCluster
    rng: random.Random
    open: Mapping[str, set[str]]
    cut: tuple[dict[str, set[str]], int | None] | None

    def book(self, fault: Fault, aliases: Iterable[str]) -> None: ...


@dataclass
class Aim:
    """A fault's resolved target: the nodes it acts on, and what else it resolved with them (a
    partition's cut), for `apply`."""

    nodes: list[KafkaNode]
    detail: Any = None


@dataclass(frozen=True)
class Fault:
    """A fault kind. The base applies nothing; the kinds below (and in partition.py, stall.py,
    unflushed.py) do."""

    name: str
    #: What it does, for the docs' table.
    does: str
    _: KW_ONLY
    #: The fault that undoes it when it stays in place (kill -> start); None when it does not stay.
    undone_by: str | None = None
    #: How the docs say it is undone (defaults to the name of `undone_by`).
    undone_doc: str | None = None
    #: Whether `--nemesis` may pick it for a random schedule.
    random: bool = False
    #: The undoing faults whose work it does on its nodes (a fault that kills and starts the node
    #: again leaves nothing for `start`).
    closes: tuple[str, ...] = ()
    #: Its shading in the report's plots (a fault that undoes others is not drawn: None).
    colour: str | None = None
    #: What it does to the nodes it names (history/events.py EFFECTS), written into its events.
    effect: str | None = None
    #: Whether it needs a tiered cluster (the remote storage's faults): refused before a run on
    #: another (faults.check_tiered).
    tiered: bool = False

    #: Its own options and their defaults (a partition's shape); other options are not its own.
    OPTIONS: ClassVar[Mapping[str, Any]] = {}

    def args(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Its own options with their defaults; options of other faults are ignored."""
        return {k: options.get(k, default) for k, default in self.OPTIONS.items()}

    def check(self, option: str, value: Any) -> None:
        """ValueError when `value` is not one `option` takes (a step of a script is checked before the run)."""

    def draw(self, rng: random.Random) -> dict[str, Any]:
        """Its options when a random schedule picks it."""
        return {}

    def asked(self, target: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """Its invoke's value (before how it ends, faults.named_ends)."""
        return {"target": target, **args}

    def label(self, target: str, args: Mapping[str, Any]) -> str:
        """One line for a scenario's log."""
        return f"{self.name} {target}"

    def aim(self, stage: Stage, target: str, args: Mapping[str, Any]) -> Aim:
        """The nodes to act on, from the live cluster; TargetError when there are none (nothing was done)."""
        return Aim(resolve(stage.cluster, target, stage.rng))

    def apply(self, stage: Stage, aim: Aim, args: Mapping[str, Any]) -> dict[str, Any]:
        """Do it, booking what it changed; the completion's value (after the invoke's)."""
        raise NotImplementedError(self.name)


@dataclass(frozen=True, kw_only=True)
class NodeFault(Fault):
    """A fault that acts on each target node on its own (kill, pause, wipe, ...)."""

    act: Callable[[KafkaNode], None]

    def apply(self, stage: Stage, aim: Aim, args: Mapping[str, Any]) -> dict[str, Any]:
        for node in aim.nodes:
            self.act(node)
            stage.book(self, [node.alias])  # one by one: a fault that breaks half way leaves these
        return {"nodes": [n.alias for n in aim.nodes]}


@dataclass(frozen=True, kw_only=True)
class Undo(NodeFault):
    """A node fault that undoes another (start, resume): at a random target it acts on every node it
    owes, none of them when it owes none."""

    #: What the nodes it owes are, for the error when there are none ("down", "paused").
    owed: str

    def aim(self, stage: Stage, target: str, args: Mapping[str, Any]) -> Aim:
        if target != "random":
            return super().aim(stage, target, args)
        owed = stage.open.get(self.name)
        if not owed:
            raise TargetError(f"{self.name}: no node is {self.owed}")
        return Aim([stage.cluster.node(alias) for alias in sorted(owed)])


def everyone(stage: Stage) -> list[str]:
    """Every node's alias: a network fault is in place on the whole cluster's chains."""
    return [n.alias for n in stage.cluster.nodes]
