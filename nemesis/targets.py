"""Targets, resolved from the live cluster at the moment of the fault.

random            one node, chosen at random
random-broker     one broker, chosen at random
random-controller one controller, chosen at random (the active one or not)
leader:KEY        the current leader of partition KEY ("topic/partition")
follower:KEY      a follower in KEY's ISR (not its leader)
last-isr:KEY      KEY's only ISR member, while its ISR has one (an error otherwise)
controller        the active controller (the controllers' own quorum-state files, and DescribeQuorum)
controllers       every controller
voters            the active controller's quorum peers: every other voter
quorum-majority   a random majority of the voters, none of them the active controller (the quorum
                  loses its majority while its leader lives)
quorum-minority   a random minority of the voters (at least one), none of them the active
                  controller (the quorum keeps its leader and a majority)
group-coordinator the broker coordinating the run's consumer group (:GROUP for another group)
txn-coordinator   the broker coordinating the transactional id of the run's process 0 (:ID for another id)
share-coordinator:KEY  the broker keeping the state of the run's share group for partition KEY (the
                  leader of its __share_group_state partition; KIP-932)
minority          a random minority of the nodes (at least one)
majority          a random majority of the nodes
NODE              a node by alias (kafka-2) or id (2); several with commas
A+B               the nodes of target A and of target B, acted on together (controller+leader:chaos/0:
                  the active controller and a partition's leader in the same moment, KAFKA-18138)
A!NODE[,NODE]     what A names, without these nodes: one of the others where A draws one (a
                  random node, a follower), an error where A names one of them (a leader). A
                  script names its steps' nodes so: `follower:chaos/0!$F` (nemesis/guards.py)
"""

from __future__ import annotations

import random
import re
import time
import uuid
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kafka import KafkaAdminClient
from kafka.errors import KafkaError

from kafka_chaos.harness.admin import describe_quorum, live_brokers
from kafka_chaos.harness.cluster import KafkaCluster
from kafka_chaos.harness.config import NodeSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.names import (
    OFFSETS_PARTITIONS,
    SHARE_STATE_PARTITIONS,
    TXN_STATE_PARTITIONS,
    coordinator_partition,
    group_id,
    share_state_key,
    transactional_id,
)
from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.harness.quorum_state import leader_claims, log_bytes

KINDS = (
    "random",
    "random-broker",
    "random-controller",
    "leader:KEY",
    "follower:KEY",
    "last-isr:KEY",
    "controller",
    "controllers",
    "voters",
    "quorum-majority",
    "quorum-minority",
    "group-coordinator[:GROUP]",
    "txn-coordinator[:ID]",
    "share-coordinator:KEY",
    "minority",
    "majority",
    "NODE[,NODE]",
    "A+B",
    "A!NODE[,NODE]",
)


#: Targets named by a word alone, by a prefix and what follows it, and by a word that may take a
#: suffix (`group-coordinator[:GROUP]`): KINDS' own spellings, which check_target reads.
WORDS = tuple(k for k in KINDS if re.fullmatch(r"[a-z-]+", k))
PREFIXES = tuple(re.sub(r"\[?:.*", ":", k) for k in KINDS if ":" in k)
OPTIONAL = tuple(k.partition("[")[0] for k in KINDS if "[:" in k)


def check_target(target: str, nodes: list[NodeSpec]) -> None:
    """UsageError unless `target` can name something in a cluster of `nodes`: a target that names
    nothing would fail at each fault's moment, and the run would pass without its faults. A cut's
    target (`SIDE|SIDE;SIDE|SIDE`, nemesis/partition.py) is checked side by side."""
    sides = [side for pair in target.split(";") for side in pair.split("|")]
    names = {n.alias for n in nodes} | {str(n.node_id) for n in nodes}
    for part in (p.strip() for side in sides for p in side.split("+")):
        part, _, without = part.partition("!")
        for name in (n.strip() for n in without.split(",") if without):
            if not name.startswith("$") and name not in names:
                raise UsageError(f"unknown node {name!r} after '!': expected one of {', '.join(sorted(names))}")
        if part.startswith("$") or part in WORDS or part in OPTIONAL:
            continue
        prefix = next((p for p in PREFIXES if part.startswith(p)), None)
        if prefix is not None:
            rest = part[len(prefix) :]
            keyed = ("leader:", "follower:", "last-isr:", "share-coordinator:")
            if prefix in keyed and not re.fullmatch(r".+/\d+", rest):
                raise UsageError(f"target {part!r}: expected a key, topic/partition (e.g. {prefix}chaos/0)")
            continue
        for name in (n.strip() for n in part.split(",")):
            if name not in names:
                raise UsageError(
                    f"unknown target {name!r}: expected a node ({', '.join(n.alias for n in nodes)}, or its id) "
                    f"or one of {', '.join(k for k in KINDS if k != 'NODE[,NODE]')}"
                )


class TargetError(Exception):
    """The target does not exist right now (no leader, no such node, ...)."""


#: How long an admin client resolving a target waits for its first broker (ms): with no broker
#: listening (a quorum without a majority leaves restarted brokers STARTING), the default 30 s
#: three times over held a fault's step 90 s past the run's end.
BOOTSTRAP_MS = 8000


def _ask(
    cluster: KafkaCluster,
    question: Callable[[KafkaAdminClient], Any],
    tries: int = 3,
    avoid: Collection[str] = (),
) -> Any:
    """An admin call, tried again on connection errors: mid-fault, some brokers do not answer.
    `avoid`: nodes not to ask first (down or paused), unless they are all there is."""
    servers = ",".join(n.bootstrap_server for n in cluster.brokers if n.alias not in avoid and n.bootstrap_server)
    for attempt in range(tries):
        try:
            with cluster.admin(
                request_timeout_ms=5000,
                bootstrap_timeout_ms=BOOTSTRAP_MS,
                bootstrap_servers=servers or cluster.bootstrap_servers,
            ) as admin:
                return question(admin)
        except KafkaError as exc:
            if attempt == tries - 1:
                raise TargetError(f"the cluster did not answer: {type(exc).__name__}: {exc}") from None
            time.sleep(0.5)
    raise AssertionError("unreachable")


#: How long the controller's lookup waits for DescribeQuorum before the files decide alone (s).
DESCRIBE_QUORUM_S = 3.0


def _described_leader(cluster: KafkaCluster) -> tuple[int, int] | None:
    """(epoch, id) of the quorum's leader as DescribeQuorum says it, asked once and waited for
    DESCRIBE_QUORUM_S at most; None when it cannot be asked or read in that time (a faulted cluster,
    a client library that cannot parse the answer). The bound is the call's, not the request's:
    the client may send it to a paused broker, whose port accepts and never answers, and then it
    took 10 s whatever its request timeout."""

    def ask() -> dict:
        with cluster.admin(request_timeout_ms=2000) as admin:
            return describe_quorum(admin)["topics"][0]["partitions"][0]

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="describe-quorum")
    try:
        part = pool.submit(ask).result(timeout=DESCRIBE_QUORUM_S)
    except Exception:  # the files decide alone
        return None
    finally:
        pool.shutdown(wait=False)  # a call still waiting ends on its own client's timeout
    leader, epoch = part.get("leader_id"), part.get("leader_epoch")
    return (int(epoch), int(leader)) if leader is not None and leader >= 0 and epoch is not None else None


def _active_controller(cluster: KafkaCluster) -> int:
    """The active controller's id: the highest epoch of the running controllers' own claims to
    lead (harness/quorum_state.py; every release writes them), cross-checked with DescribeQuorum
    where it can be read, whose answer wins only when it names a later epoch than the files do."""
    claims = leader_claims(cluster.controllers)
    described = _described_leader(cluster)
    best = max([*claims[:1], *([described] if described else [])], default=None)
    if best is None:
        raise TargetError("controller: the quorum has no leader right now")
    return best[1]


def dedicated(cluster: KafkaCluster) -> bool:
    """Whether the controllers are dedicated (none of them a broker too)."""
    return not any(n.spec.is_broker for n in cluster.controllers)


def quorum_size(target: str, voters: int) -> int:
    """How many of the active controller's peers a quorum target takes, of `voters` in all."""
    if voters < 2:
        raise TargetError(f"{target}: the quorum has {voters} voter, no peer of its leader")
    if target == "voters":
        return voters - 1
    if target == "quorum-minority" and voters < 3:  # one of two is half: the quorum would lose its majority
        raise TargetError(f"{target}: a quorum of {voters} voters has no minority to take")
    if target == "quorum-minority":
        return (voters - 1) // 2
    if voters < 3:  # a majority of two voters is both: no leader would be left out
        raise TargetError(f"{target}: a majority of {voters} voters needs the active controller")
    return voters // 2 + 1


def quorum_peers(cluster: KafkaCluster, leader: KafkaNode) -> list[KafkaNode]:
    """Every voter but the quorum's leader."""
    return [n for n in cluster.controllers if n.node_id != leader.node_id]


def _peers(cluster: KafkaCluster, target: str, rng: random.Random) -> list[KafkaNode]:
    """The active controller's peers that a quorum target names, by id."""
    size = quorum_size(target, len(cluster.controllers))
    peers = quorum_peers(cluster, cluster.node(_active_controller(cluster)))
    return sorted(rng.sample(peers, size), key=lambda n: n.node_id)


def partition_in(described: list[dict], index: int) -> dict | None:
    """A partition's entry in a Metadata answer (describe_topics), or None when it is not there."""
    for t in described:
        for p in t.get("partitions", []):
            if p["partition_index"] == index:
                return p
    return None


def unlisted_brokers(cluster: KafkaCluster, avoid: Collection[str] = ()) -> set[str]:
    """The brokers the cluster does not list as live now: fenced by the controller (or never
    registered), as DescribeCluster, or Metadata where the release lacks it, answers (asked first
    of brokers not in `avoid`)."""
    live = _ask(cluster, live_brokers, avoid=avoid)
    return {n.alias for n in cluster.brokers if n.node_id not in live}


def emptied(sizes: dict[str, int], share: float) -> set[str]:
    """The voters of `sizes` (alias -> bytes of the metadata log it holds) that hold less than
    `share` of the fullest one's."""
    top = max(sizes.values(), default=0)
    return {alias for alias, n in sizes.items() if n < share * top}


def emptied_voters(cluster: KafkaCluster, share: float) -> set[str]:
    """The controllers whose metadata log, on their disks, holds less than `share` of the fullest
    controller's (nemesis/guards.py `emptied:`)."""
    return emptied({n.alias: log_bytes(n) for n in cluster.controllers}, share)


def partition_of(cluster: KafkaCluster, key: str, avoid: Collection[str] = ()) -> dict:
    """KEY's partition as the brokers' metadata describes it now (leader_id, isr_nodes, ...),
    asked first of brokers not in `avoid`."""
    return _partition(cluster, key, avoid=avoid)


def _partition(cluster: KafkaCluster, key: str, tries: int = 3, avoid: Collection[str] = ()) -> dict:
    """KEY's entry in a Metadata answer. Asked again when it is missing: each broker learns a new
    topic from the metadata log on its own, and one that has not caught up yet answers "unknown
    topic" (a nemesis test once asked within moments of creating its topic, and failed)."""
    topic, _, part = key.rpartition("/")
    if not topic or not part.isdigit():
        raise TargetError(f"malformed key {key!r}: expected topic/partition")
    errors = []
    for attempt in range(tries):
        described = _ask(cluster, lambda admin: admin.describe_topics([topic]), avoid=avoid)
        found = partition_in(described, int(part))
        if found is not None:
            return found
        errors = sorted({t.get("error_code", 0) for t in described})
        if attempt < tries - 1:
            time.sleep(1.0)
    raise TargetError(f"no partition {key} (metadata error code {', '.join(map(str, errors))}, asked {tries} times)")


def _coordinator(cluster: KafkaCluster, target: str) -> KafkaNode:
    """The leader of the internal partition that coordinates a group or a transactional id: the
    broker Kafka's FindCoordinator names (harness/names.py coordinator_partition)."""
    kind, _, name = target.partition(":")
    if kind == "group-coordinator":
        topic, (setting, default), name = "__consumer_offsets", OFFSETS_PARTITIONS, name or group_id(cluster.run_id)
    else:
        topic, (setting, default) = "__transaction_state", TXN_STATE_PARTITIONS
        name = name or transactional_id(cluster.run_id, 0)
    partitions = int(cluster.config.get(setting, default))
    key = f"{topic}/{coordinator_partition(name, partitions)}"
    leader = _partition(cluster, key)["leader_id"]
    if leader is None or leader < 0:
        raise TargetError(f"{target}: {key}, which coordinates {name}, has no leader right now")
    return cluster.node(leader)


#: How many times (a second apart) a fault aimed at a share coordinator asks for the group's state
#: partition: Kafka creates __share_group_state when a share group first stores its state (KIP-932),
#: after its members joined and fetched, which a loaded machine can put past the first fault.
STATE_TOPIC_TRIES = 30


def _share_coordinator(cluster: KafkaCluster, target: str) -> KafkaNode:
    """The leader of the __share_group_state partition that keeps the run's share group's state of
    KEY: the share coordinator Kafka's FindCoordinator (key type SHARE) names."""
    key = target.split(":", 1)[1]
    topic, _, part = key.rpartition("/")
    described = _ask(cluster, lambda admin: admin.describe_topics([topic]))
    topic_id = next((t.get("topic_id") for t in described if t.get("topic") == topic or t.get("name") == topic), None)
    if topic_id is None:
        raise TargetError(f"{target}: the cluster gave no topic id for {topic}")
    # kafka-python's metadata, made JSON-ready, spells the id as a UUID string.
    raw = topic_id.bytes if isinstance(topic_id, uuid.UUID) else uuid.UUID(str(topic_id)).bytes
    state_key = share_state_key(group_id(cluster.run_id), raw, int(part))
    partitions = int(cluster.config.get(SHARE_STATE_PARTITIONS[0], SHARE_STATE_PARTITIONS[1]))
    state = f"__share_group_state/{coordinator_partition(state_key, partitions)}"
    leader = _partition(cluster, state, tries=STATE_TOPIC_TRIES)["leader_id"]
    if leader is None or leader < 0:
        raise TargetError(f"{target}: {state}, which keeps {state_key}, has no leader right now")
    return cluster.node(leader)


def _choices(cluster: KafkaCluster, target: str) -> list[KafkaNode] | None:
    """The nodes a target draws one of (None: a target that names its nodes)."""
    if target == "random":
        return list(cluster.nodes)
    if target == "random-broker":
        return list(cluster.brokers)
    if target == "random-controller":
        return list(cluster.controllers)
    if target.startswith("follower:"):
        p = _partition(cluster, target.split(":", 1)[1])
        followers = [r for r in p["isr_nodes"] if r != p["leader_id"]]
        if not followers:
            raise TargetError(f"{target}: the ISR holds no follower right now ({p['isr_nodes']})")
        return [cluster.node(r) for r in sorted(followers)]
    return None


def _without(cluster: KafkaCluster, target: str, rng: random.Random) -> list[KafkaNode]:
    """`A!NODE[,NODE]`: one of A's choices left, or A's nodes when none is excluded."""
    base, _, names = target.partition("!")
    try:
        avoid = {cluster.node(int(n) if n.isdigit() else n).alias for n in (x.strip() for x in names.split(",")) if n}
    except KeyError as exc:
        raise TargetError(f"{target}: unknown node {exc}") from None
    choices = _choices(cluster, base)
    if choices is not None:
        left = [n for n in choices if n.alias not in avoid]
        if not left:
            raise TargetError(f"{target}: {base} names none but {', '.join(sorted(avoid))} right now")
        return [rng.choice(left)]
    picked = resolve(cluster, base, rng)
    excluded = sorted(n.alias for n in picked if n.alias in avoid)
    if excluded:
        raise TargetError(f"{target}: {base} names {', '.join(excluded)} right now")
    return picked


def resolve(cluster: KafkaCluster, target: str, rng: random.Random) -> list[KafkaNode]:
    if "+" in target:  # each part resolved before any is acted on, then acted on in their order
        union = {n.alias: n for part in target.split("+") for n in resolve(cluster, part.strip(), rng)}
        return list(union.values())
    if "!" in target:
        return _without(cluster, target, rng)
    nodes = list(cluster.nodes)
    choices = _choices(cluster, target)
    if choices is not None:
        return [rng.choice(choices)]
    if target.split(":", 1)[0] in ("group-coordinator", "txn-coordinator"):
        return [_coordinator(cluster, target)]
    if target.startswith("share-coordinator:"):
        return [_share_coordinator(cluster, target)]
    if target.startswith("leader:"):
        leader = _partition(cluster, target.split(":", 1)[1])["leader_id"]
        if leader is None or leader < 0:
            raise TargetError(f"{target}: the partition has no leader right now")
        return [cluster.node(leader)]
    if target.startswith("last-isr:"):
        isr = _partition(cluster, target.split(":", 1)[1])["isr_nodes"]
        if len(isr) != 1:
            raise TargetError(f"{target}: the ISR holds {len(isr)} replicas right now ({isr}), not one")
        return [cluster.node(isr[0])]
    if target == "controller":
        if len(cluster.controllers) == 1:
            return list(cluster.controllers)
        return [cluster.node(_active_controller(cluster))]
    if target == "controllers":
        return list(cluster.controllers)
    if target in ("voters", "quorum-majority", "quorum-minority"):
        return _peers(cluster, target, rng)
    if target in ("minority", "majority"):
        size = max(1, (len(nodes) - 1) // 2) if target == "minority" else len(nodes) // 2 + 1
        return sorted(rng.sample(nodes, size), key=lambda n: n.node_id)
    picked = []
    for name in target.split(","):
        name = name.strip()
        try:
            picked.append(cluster.node(int(name) if name.isdigit() else name))
        except KeyError:
            raise TargetError(f"unknown target {name!r}: expected one of {', '.join(KINDS)}") from None
    return picked
