"""stall: hold every TCP connection that clients have open to a node now, both ways; a connection
opened later passes. hold-endtxn: the same connections, from the next EndTxn request on each.
hold-markers: the brokers' connections to each other, from the next WriteTxnMarkers on each.

Why: a request already on the wire is then delayed, not lost. The client times it out, opens a
new connection and carries on (the Java producer retries an EndTxn on it, commits, and starts the
next transaction), while the old connection's bytes wait in TCP retransmission. When the fault
heals they arrive, late and out of order with everything sent since: the delayed EndTxn of
KAFKA-17754, which, under the first transaction protocol (same producer epoch for every
transaction), ends the producer's next transaction instead of the one it was sent for.

`hold-endtxn` holds exactly what KAFKA-17754 needs: a connection open now runs on until its
client sends an EndTxn on it; the segment that starts that request is dropped (an iptables u32
match on the request's API key), so TCP holds it and all after it. Everything else flows, and
every producer's next EndTxn on an old connection is the one delayed. `hold-markers` does the same
to the coordinators' WriteTxnMarkers on the brokers' own listener: the marker that ends a
transaction on a partition arrives late, after the coordinator sent it again on a new
connection, completed the transaction and let the producer begin its next one.

The connections are read from the node's /proc/net/tcp (every image has it; no `ss` needed): the
established ones on the listener for host clients (harness/config.py EXTERNAL_PORT). Each gets a
DROP rule for its four-tuple in the `KAFKA-CHAOS` chain (nemesis/partition.py), which INPUT and
OUTPUT both jump to, so `heal` removes them with every other network fault.

block-connect: the connections a node opens to the controllers' listener from now on (their SYN
dropped); the ones open now carry on. A request that needs a new connection waits: a controller's
first ControllerRegistration, whose channel opens its connection only then, gets no answer, and the
channel gives the request up after 5 s (KAFKA-20247: releases that never sent it again). Why not
drop the request on an open connection: TCP holds a dropped segment and delivers it at the heal,
so the request arrives late rather than never.

`Stall` is the fault kind of all four: which request it holds from (none: everything), on which
listener, and whose: the connections open to the node now, or those it opens from now on (`outgoing`).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafka_chaos.harness.config import EXTERNAL_PORT
from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.nemesis.docker_ops import exec_root
from kafka_chaos.nemesis.fault import Aim, Fault, Stage, everyone
from kafka_chaos.nemesis.partition import CHAIN, swap

ESTABLISHED = "01"


def _address(field: str) -> tuple[str, int]:
    """/proc/net/tcp's `0100007F:1F90` as ("127.0.0.1", 8080)."""
    ip, port = field.split(":")
    return socket.inet_ntoa(struct.pack("<I", int(ip, 16))), int(port, 16)


def client_connections(table: str, port: int = EXTERNAL_PORT) -> list[tuple[str, int]]:
    """(peer address, peer port) of the established connections to `port` in a /proc/net/tcp text."""
    out = []
    for line in table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 4 or fields[3] != ESTABLISHED:
            continue
        (_, local_port), peer = _address(fields[1]), _address(fields[2])
        if local_port == port:
            out.append(peer)
    return sorted(set(out))


#: Kafka's API keys of EndTxn (a client asks the coordinator to commit or abort) and of
#: WriteTxnMarkers (the coordinator has a partition's leader write the commit or abort marker).
END_TXN, WRITE_TXN_MARKERS = 26, 27


def api_match(api_key: int) -> str:
    """An iptables u32 match for a TCP segment whose payload starts a Kafka request of `api_key`:
    past the IP and TCP headers (their lengths read from the packet), the request's 4-byte size,
    then its 2-byte API key."""
    return f'-m u32 --u32 "0>>22&0x3C@12>>26&0x3C@4>>16={api_key:#x}"'


def rules(peers: Sequence[tuple[str, int]], port: int = EXTERNAL_PORT, api_key: int | None = None) -> list[str]:
    """The DROP rules that hold these connections in both directions; with `api_key`, only the
    client's segments that start a request of that API (TCP then holds what follows it)."""
    out = []
    for ip, peer_port in peers:
        inbound = f"iptables -A {CHAIN} -p tcp -s {ip} --sport {peer_port} --dport {port}"
        if api_key is not None:
            out.append(f"{inbound} {api_match(api_key)} -j DROP")
            continue
        out.append(f"{inbound} -j DROP")
        out.append(f"iptables -A {CHAIN} -p tcp -d {ip} --dport {peer_port} --sport {port} -j DROP")
    return out


def connect_rules(port: int) -> list[str]:
    """The DROP rule that keeps the node from opening a TCP connection to `port` on any node (the
    SYN that opens it), whatever is open already."""
    return [f"iptables -A {CHAIN} -p tcp --dport {port} --syn -j DROP"]


def stall(nodes: Sequence[KafkaNode], api_key: int | None = None, port: int = EXTERNAL_PORT) -> dict[str, int]:
    """Hold the connections open now to `port` on each node (replacing the network faults there;
    the clients' listener by default, the brokers' own with harness/config.py INTERNAL_PORT): all their traffic, or
    from their next request of `api_key` on. How many per node; a node not running has none."""
    running = [n for n in nodes if n.state() == "running"]

    def one(node: KafkaNode) -> int:
        peers = client_connections(exec_root(node, "cat", "/proc/net/tcp"), port)
        exec_root(node, "sh", "-c", swap(rules(peers, port, api_key)))
        return len(peers)

    with ThreadPoolExecutor(max_workers=len(running) or 1) as pool:
        counts = list(pool.map(one, running))
    return {n.alias: c for n, c in zip(running, counts, strict=True)}


def block_connect(nodes: Sequence[KafkaNode], port: int) -> list[str]:
    """Keep each running node from opening connections to `port` (replacing the network faults
    there); the nodes it reached."""
    running = [n for n in nodes if n.state() == "running"]
    for node in running:
        exec_root(node, "sh", "-c", swap(connect_rules(port)))
    return [n.alias for n in running]


@dataclass(frozen=True, kw_only=True)
class Stall(Fault):
    """Hold the connections open now to `port` on the target nodes: all their traffic, or from
    their next request of `api` on."""

    api: int | None = None
    port: int = EXTERNAL_PORT
    #: Hold the connections the node opens to `port` from now on instead (none counted).
    outgoing: bool = False

    def apply(self, stage: Stage, aim: Aim, args: Mapping[str, Any]) -> dict[str, Any]:
        if self.outgoing:
            done: dict[str, Any] = {"nodes": block_connect(aim.nodes, self.port)}
        else:
            held = stall(aim.nodes, self.api, self.port)
            done = {"nodes": [n.alias for n in aim.nodes], "connections": held}
        stage.book(self, everyone(stage))  # on the chain that `heal` flushes on every node
        return done
