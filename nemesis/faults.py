"""The table of faults: one object per fault kind (nemesis/fault.py and the kinds' modules),
named here with what it does, what undoes it, whether a random schedule may pick it, its line in
docs/nemesis.md and its colour; and what is derived from them.

The nemesis (core.py) applies them and heals what they leave open, the schedules (schedule.py)
and scenario files (scenarios/files.py) draw and heal by them, `--nemesis` accepts the ones
marked random, and the docs' table is this module's output (`python -m kafka_chaos.nemesis.faults`;
a test compares). A new fault kind is an entry here, its kind (if none of the others fits) in a
module of its own, and its test.

How a fault ends goes into the history itself (`named_ends`: `undone_by`, `heals`) and its
colour into the run's config.json (`COLOURS`), so the report, which imports nothing of the
layers above it (tests/unit/test_layers.py), reads both from the run directory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kafka_chaos.harness.config import CONTROLLER_PORT, EXTERNAL_PORT, INTERNAL_PORT
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.history.events import (
    CUT,
    DOWN,
    EXITED,
    HEALED,
    HELD,
    PAUSED,
    RESTARTED,
    RESTORED,
    RESUMED,
    STARTED,
    WIPED,
)
from kafka_chaos.nemesis.fault import Fault, NodeFault, Undo
from kafka_chaos.nemesis.kill import kill, running, start, wait_stopped
from kafka_chaos.nemesis.partition import Heal, Partition
from kafka_chaos.nemesis.pause import pause, resume
from kafka_chaos.nemesis.remote import HEAL_NAME as REMOTE_HEAL_NAME
from kafka_chaos.nemesis.remote import Remote, RemoteSlow, open_gate
from kafka_chaos.nemesis.stall import END_TXN, WRITE_TXN_MARKERS, Stall
from kafka_chaos.nemesis.stop import stop
from kafka_chaos.nemesis.unflushed import LoseUnflushed
from kafka_chaos.nemesis.wipe import wipe


def _restart(node: KafkaNode) -> None:
    """Start a killed or stopped node, unless a later fault has started it since (a power loss or a
    wipe restarts its node within its own operation: there is nothing left to undo)."""
    if running(node):
        return
    wait_stopped(node)  # a JVM killed a moment ago may not have been reaped yet
    start(node)


START = Undo("start", "start a stopped or killed node's container again", act=_restart, owed="down", effect=STARTED)
RESUME = Undo("resume", "thaw a paused container", act=resume, owed="paused", effect=RESUMED)
REMOTE_HEAL = Undo(
    REMOTE_HEAL_NAME,
    "open the brokers' gates to the remote storage again",
    act=open_gate,
    owed="behind a closed or slow gate to the remote storage",
    effect=RESTORED,
    tiered=True,
)
HEAL = Heal("heal", "flush every node's `KAFKA-CHAOS` chain: the network whole again", effect=HEALED)
PARTITION = Partition(
    "partition",
    "iptables DROP rules inside the containers, in a chain of their own (`KAFKA-CHAOS`), on INPUT and "
    "OUTPUT, by cluster-network address",
    undone_by=HEAL.name,
    undone_doc="`heal`: flushes that chain on every node",
    random=True,
    colour="#9467bd",
    effect=CUT,
)
HOLD_ENDTXN = Stall(
    "hold-endtxn",
    "on every connection clients have open to the node now, drop the segment that starts their next "
    "EndTxn request (an iptables u32 match on its API key): TCP holds it and what follows it until healed, "
    "while the client times it out and sends it again on a new connection (KAFKA-17754)",
    undone_by=HEAL.name,
    undone_doc="`heal`",
    random=True,
    colour="#aec7e8",
    effect=HELD,
    api=END_TXN,
    port=EXTERNAL_PORT,
)
HOLD_MARKERS = Stall(
    "hold-markers",
    "the same on the brokers' own listener: on every connection open to the node now, drop the segment that "
    "starts the next WriteTxnMarkers request; the coordinator sends the marker again on a new connection "
    "(after the brokers' request.timeout.ms) and the late one arrives after the producer's next transaction "
    "began there (KAFKA-17754)",
    undone_by=HEAL.name,
    undone_doc="`heal`",
    random=True,
    colour="#c5b0d5",
    effect=HELD,
    api=WRITE_TXN_MARKERS,
    port=INTERNAL_PORT,
)
BLOCK_CONNECT = Stall(
    "block-connect",
    "on the node, drop the SYN of every TCP connection it opens to the controllers' listener: the connections "
    "open now (its quorum fetches) carry on, no new one opens until healed; a controller's registration "
    "channel, which opens its connection at its first request, gives that request up after 5 s (KAFKA-20247)",
    undone_by=HEAL.name,
    undone_doc="`heal`",
    colour="#f7b6d2",
    effect=HELD,
    port=CONTROLLER_PORT,
    outgoing=True,
)

FAULTS: tuple[Fault, ...] = (
    NodeFault(
        "kill",
        "SIGKILL the broker's JVM (the container's main process)",
        undone_by=START.name,
        undone_doc="`start`: the same container, its disk as it was",
        random=True,
        act=kill,
        colour="#d62728",
        effect=DOWN,
    ),
    NodeFault(
        "stop",
        "a clean shutdown: SIGTERM, SIGKILL after 30 s. The broker's controlled shutdown moves its leaderships "
        "to other ISR members and it is fenced at once, so it can register again right away (a SIGKILLed "
        "broker keeps its session until `broker.session.timeout.ms`, and the controller refuses a new "
        "registration of its id until then)",
        undone_by=START.name,
        act=stop,
        colour="#bcbd22",
        effect=DOWN,
    ),
    START,
    NodeFault(
        "pause",
        "freeze the container's processes (cgroup freezer, `docker pause`)",
        undone_by=RESUME.name,
        random=True,
        act=pause,
        colour="#ff7f0e",
        effect=PAUSED,
    ),
    RESUME,
    PARTITION,
    Stall(
        "stall",
        "hold every TCP connection clients have open to the node now (a DROP rule per connection, both ways, "
        "in the `KAFKA-CHAOS` chain); connections opened later pass. A request already on the wire arrives "
        "when it heals, late and out of order with what the client sent since on a new connection "
        "(KAFKA-17754's delayed EndTxn)",
        undone_by=HEAL.name,
        undone_doc="`heal`",
        random=True,
        colour="#17becf",
        effect=HELD,
    ),
    HOLD_ENDTXN,
    HOLD_MARKERS,
    BLOCK_CONNECT,
    HEAL,
    NodeFault(
        "wipe",
        "kill, empty the data directory on the host (a replaced disk), start; the entrypoint formats it again "
        "with the cluster's id, as the cluster was formatted (KAFKA-14139, KIP-903). A controller comes back "
        "as the same voter of the static quorum with an empty log and a new directory id (KAFKA-14077)",
        undone_doc="itself (the node restarts)",
        random=True,
        act=wipe,
        closes=(START.name,),
        colour="#8c564b",
        effect=WIPED,
    ),
    LoseUnflushed(
        "lose-unflushed",
        "kill, cut every partition's log back to its recovery point in `recovery-point-offset-checkpoint` "
        "(whole segments after it removed, the segment holding it cut at the first batch at or after it, its "
        'indexes dropped for Kafka to rebuild), start: a power loss, the "last replica standing" fault of '
        "KIP-966. The metadata log is left alone: KRaft fsyncs it on every append. On an fsync-tracked disk "
        "(`--disk fsync-tracked`), every file instead goes back to its content at its last fsync",
        undone_doc="itself",
        random=True,
        closes=(START.name,),
        colour="#e377c2",
        effect=RESTARTED,
    ),
    Remote(
        "remote-unavailable",
        "a tiered cluster's remote storage fails for the target's brokers (a random one by default): every "
        "operation through the broker's own FUSE gate to the shared remote folder fails with EIO, so its copies "
        "to, fetches from and deletes in remote storage fail while it runs and reaches its peers",
        undone_doc="`remote-heal`: opens the gates it owes (or those of the nodes it names)",
        colour="#c49c94",
        mode="unavailable",
    ),
    RemoteSlow(
        "remote-slow",
        "the same gate slow instead: each create, read and write in remote storage waits `delay_ms` (default "
        "200; a random mix draws 50, 200 or 1000)",
        colour="#dbdb8d",
        mode="slow",
    ),
    REMOTE_HEAL,
)

BY_NAME: dict[str, Fault] = {f.name: f for f in FAULTS}
NAMES: tuple[str, ...] = tuple(BY_NAME)
#: What `--nemesis` may mix, in the order the docs list them.
RANDOM: tuple[str, ...] = tuple(f.name for f in FAULTS if f.random)
#: The faults that start a node (`start`, and those that do its work): a partition held is
#: installed again on the nodes they start (partition.py `renew`).
STARTS: frozenset[str] = frozenset(f.name for f in FAULTS if f.name == START.name or START.name in f.closes)
#: A node's process that ended when no fault ended it, recorded by the exit watch
#: (nemesis/exits.py) as the nemesis's operation: the node down until `start`. No one can ask for
#: it, so it is in no table of faults to ask for, only in what the history's readers need: what
#: undoes it, what it heals, its colour.
EXIT = "exit"
EXIT_COLOUR = "#393b79"
#: fault -> the fault that undoes it, for the faults that stay in place.
HEALS: dict[str, str] = {**{f.name: f.undone_by for f in FAULTS if f.undone_by}, EXIT: START.name}
#: fault -> what it does to the nodes it names (history/events.py), a node's own exit included.
EFFECT_OF: dict[str, str] = {**{f.name: f.effect for f in FAULTS if f.effect}, EXIT: EXITED}
#: fault -> its shading in the report: written into config.json with the run's nemesis plan
#: (nemesis/plan.py), where the report reads it, as Jepsen's checkers read a nemesis's plot
#: colours from the test map.
COLOURS: dict[str, str] = {**{f.name: f.colour for f in FAULTS if f.colour}, EXIT: EXIT_COLOUR}
#: What each undoing fault heals (start -> kill, stop): written into its events' values as
#: `heals`, as every fault that stays in place writes its `undone_by`, so that a reader of the
#: history (the report's fault bands, checkers/measures/faults.py) needs no copy of this table.
HEALED_BY: dict[str, list[str]] = {heal: [f for f, h in HEALS.items() if h == heal] for heal in HEALS.values()}
#: What heal_all runs, in order, for each that owes nodes: paused and down nodes back before the
#: network heals, which reaches running nodes only; the remote storage's gates last (they are the
#: harness's own processes, open whatever the nodes' state).
FINAL: tuple[Fault, ...] = (RESUME, START, HEAL, REMOTE_HEAL)
#: The faults that need a tiered cluster.
TIERED: tuple[str, ...] = tuple(f.name for f in FAULTS if f.tiered)
#: The options a timed step may carry, with their defaults: each is its fault's own (a partition's
#: `shape`); a step of another fault may carry one too, and that fault ignores it.
STEP_OPTIONS: dict[str, Any] = {k: v for f in FAULTS for k, v in f.OPTIONS.items()}


def named_ends(fault: str) -> dict[str, object]:
    """The part of a nemesis event's value that says what the fault does and how it ends: its
    `effect` on the nodes it names (history/events.py), `undone_by` for one that stays in place,
    `heals` for one that undoes others; no end for a fault that is over when done."""
    effect = {"effect": EFFECT_OF[fault]} if fault in EFFECT_OF else {}
    if fault in HEALED_BY:
        return {**effect, "heals": HEALED_BY[fault]}
    return {**effect, "undone_by": HEALS[fault]} if fault in HEALS else effect


def check_tiered(faults: Iterable[str], tiered: bool) -> None:
    """UsageError for a fault of the remote storage planned on a cluster that is not tiered: it
    would fail at each of its moments, and the run would pass without it."""
    if tiered:
        return
    for fault in faults:
        if fault in TIERED:
            raise UsageError(f"fault {fault} needs a tiered cluster (--tiered): only its brokers have remote storage")


def check_options(options: Mapping[str, Any]) -> None:
    """ValueError naming the first of a step's options that the fault reading it does not take."""
    for option, value in options.items():
        for f in FAULTS:
            if option in f.OPTIONS:
                f.check(option, value)


def markdown_table() -> str:
    """docs/nemesis.md's table of faults: the faults a user applies, not their undoing steps."""
    undoing = set(HEALS.values())
    rows = ["| fault | what it does | undone by |", "|---|---|---|"]
    for f in FAULTS:
        if f.name in undoing:
            continue
        undone = f.undone_doc or f"`{f.undone_by}`"
        rows.append(f"| `{f.name}` | {f.does} | {undone} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
