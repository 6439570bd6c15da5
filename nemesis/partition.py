"""`partition` / `heal`: iptables DROP between groups of nodes, inside the containers.

A partition is a grudge: for each node, the nodes it must not hear from. Each node drops
packets from (INPUT) and to (OUTPUT) the cluster-network addresses of the nodes it holds a
grudge against, in a chain of its own, so `heal` flushes exactly what the nemesis added.
Clients on the host reach brokers through the network's gateway, which no shape names, so
they keep reaching every node. Rules live in the container's network namespace and vanish
with the container.

Shapes (as in Jepsen's nemesis): `isolate` one node from the rest; `halves`, a random
majority and minority; `majorities-ring`, each node sees a majority but no two see the same
one; `bridge`, two halves joined only through one node. And `cut`: chosen pairs of nodes (or
groups) that cannot talk to each other, everything else connected, e.g. a partition leader cut
off from the active controller only (KAFKA-14139). And `quorum-leader`: the active controller cut
off from the other voters (KAFKA-15489). With dedicated controllers every broker still reaches
it. On combined nodes the other voters are brokers too, so there the cut is of the controller
listener's port alone (TCP to or from port 9093 between those nodes; the value records `port` and
`listener`): replication and client traffic between them go on, but their brokers lose the old
leader's controller listener with their controllers (on three combined nodes, only the leader's own
broker still reaches it). And `replication`: the target's brokers cut off from every other broker on
the brokers' own listener's port alone (TCP to or from 9092; the value records `port` and `listener`
PLAINTEXT): a leader's followers cannot fetch from it, while every node keeps the quorum and the
controller, and clients keep every broker. On three combined nodes, cutting both followers off a
leader by address also cuts the leader off the quorum's majority, so its ISR of one is never
committed; this shape reaches that ISR.

`Partition` is the fault kind (a shape is its own option, `shape`), `Heal` the one that undoes
it and every other fault on the `KAFKA-CHAOS` chain (stall.py). A partition outlives the restarts of the
nodes it cuts: a node that starts while it is held (`start`, `wipe`, `lose-unflushed`) gets its rules
again, and its peers' rules its new address (`renew`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

from docker.errors import APIError

from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import CONTROLLER_PORT, INTERNAL_PORT
from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.history.faults import BROKER_LISTENER, CONTROLLER_LISTENER
from kafka_chaos.nemesis.docker_ops import exec_root, network_ip
from kafka_chaos.nemesis.fault import Aim, Fault, Stage, everyone
from kafka_chaos.nemesis.targets import TargetError, dedicated, quorum_peers, resolve

CHAIN = "KAFKA-CHAOS"
SHAPES = ("isolate", "halves", "majorities-ring", "bridge", "cut", "quorum-leader", "replication")
RANDOM_SHAPES = SHAPES[:4]  # a cut needs its pairs named; quorum-leader, the controllers pool (schedule.py)
#: The listener a port-scoped cut records, by port: a quorum-leader cut's and a replication cut's.
LISTENERS = {CONTROLLER_PORT: CONTROLLER_LISTENER, INTERNAL_PORT: BROKER_LISTENER}
Grudge = dict[str, set[str]]


def complete_grudge(components: Sequence[Sequence[str]]) -> Grudge:
    """Every node holds a grudge against every node outside its component."""
    everyone = {n for c in components for n in c}
    return {n: everyone - set(c) for c in components for n in c}


def isolate(nodes: Sequence[str], victim: str) -> Grudge:
    return complete_grudge([[victim], [n for n in nodes if n != victim]])


def halves(nodes: Sequence[str], rng: random.Random) -> Grudge:
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    cut = len(shuffled) // 2  # the first part is the minority
    return complete_grudge([shuffled[:cut], shuffled[cut:]])


def majorities_ring(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Around a shuffled ring, each node sees the nodes within distance d: a majority each,
    and no two nodes see the same majority. With 3 nodes the ring is a line (one cut)."""
    ring = list(nodes)
    rng.shuffle(ring)
    n = len(ring)
    majority = n // 2 + 1
    d = majority // 2  # smallest d with 2d + 1 >= majority
    grudge: Grudge = {node: set() for node in ring}
    for i, a in enumerate(ring):
        for j, b in enumerate(ring):
            if min((i - j) % n, (j - i) % n) > d:
                grudge[a].add(b)
    if n == 3:
        grudge[ring[0]].add(ring[-1])
        grudge[ring[-1]].add(ring[0])
    return grudge


def bridge(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Two halves that cannot see each other, and one node that sees both."""
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    middle = shuffled[0]
    rest = shuffled[1:]
    a, b = rest[: len(rest) // 2], rest[len(rest) // 2 :]
    grudge = complete_grudge([a, b])
    grudge[middle] = set()
    return grudge


def cut(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> Grudge:
    """Each pair of groups cut both ways; nodes in no pair, and pairs not named, stay connected."""
    grudge: Grudge = {}
    for a, b in pairs:
        for x in a:
            for y in b:
                if x != y:
                    grudge.setdefault(x, set()).add(y)
                    grudge.setdefault(y, set()).add(x)
    return grudge


def shape(name: str, nodes: Sequence[str], rng: random.Random, victim: str | None = None) -> Grudge:
    if name == "isolate":
        return isolate(nodes, victim or rng.choice(list(nodes)))
    if name == "halves":
        return halves(nodes, rng)
    if name == "majorities-ring":
        return majorities_ring(nodes, rng)
    if name == "bridge":
        return bridge(nodes, rng)
    if name in ("cut", "replication"):
        raise ValueError(f"a {name} cut reads its sides from the target, not from the shape alone")
    raise ValueError(f"unknown partition shape {name!r}: expected one of {', '.join(SHAPES)}")


def apply(nodes: Sequence[KafkaNode], grudge: Grudge, network: str, port: int | None = None) -> None:
    """Install the DROP rules of a grudge, replacing whatever was there on every running node
    (a node the grudge leaves out is left with none): one shell per node, all nodes at once, so
    the partition takes effect everywhere at about the same moment. On each node the old rules
    give way to the new in one commit (`swap`), so a cut that the new grudge keeps never opens
    while it is replaced. A stopped node has no rules to replace (they went with its network
    namespace); a grudge against it is enforced on the other side. With `port`, only TCP to or
    from that port is dropped between the two."""
    running = [n for n in nodes if n.state() == "running"]
    by_alias = {n.alias: n for n in running}
    grudge = {alias: grudge.get(alias, set()) for alias in by_alias}
    involved = set(grudge) | {enemy for enemies in grudge.values() for enemy in enemies}
    ips = {n.alias: network_ip(n, network) for n in nodes if n.alias in involved}
    scripts = {}
    for alias, enemies in grudge.items():
        # a stopped enemy has no address; its peers' rules are all there is to install
        addresses = [ips[enemy] for enemy in sorted(enemies) if ips[enemy]]
        scripts[alias] = swap(drop_rules(addresses, port))
    with ThreadPoolExecutor(max_workers=len(scripts) or 1) as pool:
        for future in [pool.submit(_in_running, by_alias[a], script) for a, script in scripts.items()]:
            future.result()


def _in_running(node: KafkaNode, script: str) -> None:
    """Run `script` in the node's container, unless the container stopped meanwhile: a node whose
    JVM was killed a moment ago still shows as running, and then refuses the exec (its rules go
    with its network namespace, so there is nothing to do there)."""
    try:
        exec_root(node, "sh", "-c", script)
    except (RuntimeError, APIError) as e:  # the exec refused (RuntimeError) or its start refused (APIError)
        # the runtime can say so before Docker's state does
        if STOPPED in str(e) or node.state() != "running":
            return
        raise


#: What the OCI runtime answers an exec into a container whose process has exited.
STOPPED = "cannot exec in a stopped container"


def renew(stage: Stage) -> None:
    """Install the partition in place again, after a node started while it was held: the started
    node's new network namespace has no rules, and a node that was down when the cut began had no
    address for its peers' rules against it (and may come back with another one). Until this runs,
    a moment after the container starts and before its JVM reaches its peers, the node is not cut."""
    if stage.cut is not None:
        grudge, port = stage.cut
        apply(stage.cluster.nodes, grudge, stage.cluster.network.name, port)


def drop_rules(addresses: Sequence[str], port: int | None = None) -> list[str]:
    """The chain's DROP rules against these addresses, both ways (the chain is jumped to from INPUT
    and OUTPUT): all their traffic, or with `port` only TCP to or from that port."""
    scopes = [""] if port is None else [f" -p tcp --dport {port}", f" -p tcp --sport {port}"]
    return [f"iptables -A {CHAIN} -{flag} {ip}{scope} -j DROP" for ip in addresses for flag in "sd" for scope in scopes]


#: The KAFKA-CHAOS chain, made if missing (its rules kept), jumped to from INPUT and OUTPUT.
READY = (
    f"(iptables -N {CHAIN} 2>/dev/null || true) && "
    f"(iptables -C INPUT -j {CHAIN} 2>/dev/null || iptables -I INPUT -j {CHAIN}) && "
    f"(iptables -C OUTPUT -j {CHAIN} 2>/dev/null || iptables -I OUTPUT -j {CHAIN})"
)


def swap(commands: Sequence[str]) -> str:
    """A shell script that replaces the chain's rules by `commands` (`iptables -A` lines) in one
    iptables-restore commit: flushing first and adding after leaves every cut open for as long
    as the additions take, and a follower retrying its fetch gets through then (a loaded machine
    made that long enough to copy a whole log: docs/measurements.md, 2026-11-30)."""
    lines = ["*filter", f"-F {CHAIN}", *(c.removeprefix("iptables ") for c in commands), "COMMIT", ""]
    return f"{READY} && printf '%s' '{chr(10).join(lines)}' | iptables-restore --noflush"


def heal(nodes: Sequence[KafkaNode]) -> list[str]:
    """Remove every rule the nemesis added, on every running node; the aliases healed."""
    running = [n for n in nodes if n.state() == "running"]
    with ThreadPoolExecutor(max_workers=len(running) or 1) as pool:
        futures = [pool.submit(_in_running, n, f"iptables -F {CHAIN} 2>/dev/null || true") for n in running]
        for future in futures:
            future.result()
    return [n.alias for n in running]


def rules(node: KafkaNode) -> list[str]:
    """The DROP rules in the node's chain now (for tests and reports)."""
    text = exec_root(node, "sh", "-c", f"iptables -S {CHAIN} 2>/dev/null || true")
    return [line for line in text.splitlines() if "DROP" in line]


def resolve_cut(cluster: KafkaCluster, target: str, rng: random.Random) -> Grudge:
    """`A|B;C|D`: each side a target of its own (nemesis/targets.py), every pair cut both ways."""
    pairs = []
    for part in target.split(";"):
        sides = part.split("|")
        if len(sides) != 2 or not all(s.strip() for s in sides):
            raise TargetError(f"malformed cut {part!r}: expected SIDE|SIDE, e.g. leader:chaos/0|controller")
        a, b = (resolve(cluster, side.strip(), rng) for side in sides)
        pairs.append(([n.alias for n in a], [n.alias for n in b]))
    return cut(pairs)


def resolve_replication(cluster: KafkaCluster, target: str, rng: random.Random) -> tuple[Grudge, int]:
    """The target's brokers cut off from every other broker, on the brokers' own listener only."""
    aimed = [n for n in resolve(cluster, target, rng) if n.spec.is_broker]
    if not aimed:
        raise TargetError(f"{target} names no broker: a replication cut is between brokers")
    others = [n.alias for n in cluster.brokers if n not in aimed]
    return cut([([n.alias for n in aimed], others)]), INTERNAL_PORT


def resolve_quorum_leader(cluster: KafkaCluster, rng: random.Random) -> tuple[Grudge, int | None]:
    """The active controller cut off from its quorum peers (`controller|voters`), brokers untouched:
    by address between dedicated controllers; on combined nodes, by the controller listener's port
    (returned with the grudge; None: every port)."""
    leader = resolve(cluster, "controller", rng)[0]  # asked once: an election between two asks splits the cut
    grudge = cut([([leader.alias], [n.alias for n in quorum_peers(cluster, leader)])])
    return grudge, None if dedicated(cluster) else CONTROLLER_PORT


@dataclass(frozen=True)
class Partition(Fault):
    """A grudge of its `shape` among all nodes: `isolate` cuts its target off, the other random
    shapes draw their sides (the target is recorded, not used), `cut` reads its pairs from the target,
    `quorum-leader` finds the active controller and its peers (the target is recorded, not used),
    `replication` cuts the target's brokers off from the other brokers' replication."""

    OPTIONS: ClassVar[Mapping[str, Any]] = {"shape": "isolate"}

    def check(self, option: str, value: Any) -> None:
        if value not in SHAPES:
            raise ValueError(f"unknown partition shape {value!r}")

    def draw(self, rng: random.Random) -> dict[str, Any]:
        return {"shape": rng.choice(RANDOM_SHAPES)}

    def label(self, target: str, args: Mapping[str, Any]) -> str:
        return f"{self.name} {target} ({args['shape']})"

    def aim(self, stage: Stage, target: str, args: Mapping[str, Any]) -> Aim:
        if args["shape"] not in ("cut", "quorum-leader", "replication"):
            return super().aim(stage, target, args)
        if args["shape"] == "cut":
            grudge, port = resolve_cut(stage.cluster, target, stage.rng), None
        elif args["shape"] == "replication":
            grudge, port = resolve_replication(stage.cluster, target, stage.rng)
        else:
            grudge, port = resolve_quorum_leader(stage.cluster, stage.rng)
        return Aim(sorted({stage.cluster.node(a) for a in grudge}, key=lambda n: n.node_id), (grudge, port))

    def apply(self, stage: Stage, aim: Aim, args: Mapping[str, Any]) -> dict[str, Any]:
        aliases = [n.alias for n in aim.nodes]
        grudge, port = aim.detail if aim.detail is not None else (None, None)
        if grudge is None:
            victim = aliases[0] if args["shape"] == "isolate" else None
            grudge = shape(args["shape"], everyone(stage), stage.rng, victim)
        stage.book(self, everyone(stage))  # first: rules installed on some nodes before a failure need the heal
        stage.cut = (grudge, port)
        apply(stage.cluster.nodes, grudge, stage.cluster.network.name, port)
        value = {"nodes": aliases, "grudge": {k: sorted(v) for k, v in grudge.items() if v}}
        return value if port is None else {**value, "port": port, "listener": LISTENERS[port]}


@dataclass(frozen=True)
class Heal(Fault):
    """Flush every running node's chain: whatever the target, the whole network heals."""

    def asked(self, target: str, args: Mapping[str, Any]) -> dict[str, Any]:
        return dict(args)

    def aim(self, stage: Stage, target: str, args: Mapping[str, Any]) -> Aim:
        return Aim(list(stage.cluster.nodes))

    def apply(self, stage: Stage, aim: Aim, args: Mapping[str, Any]) -> dict[str, Any]:
        healed = heal(stage.cluster.nodes)
        stage.cut = None
        # a paused node runs no iptables: its rules stay, and so does what `heal` owes it, which
        # heal_all then flushes after the nodes are resumed (overlapping faults pause during a cut)
        stage.book(self, healed)
        return {"nodes": healed}
