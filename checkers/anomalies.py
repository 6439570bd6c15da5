"""The anomaly table: each anomaly's name, rule module and policy, as ../shared/anomalies.md defines them.

This is the checker's one copy of that list; checkers/data_plane/per_key.py runs the rule module each row names,
the verdict and the report read them from here, and a test compares it with the shared document.
Rules report what they found, with the facts a policy needs (a consumer's mode, the edge kinds a
cycle needs, whether the run had an ok poll); `is_error` alone decides, from the table, whether an
instance is an error, as Jepsen decides what is allowed in one place. Every rule module returns
instance frames of the same shape (INSTANCE_COLUMNS), so the verdict can count them and pick
examples in one Spark job.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kafka_chaos.checkers.edge_kinds import EdgeKind
from kafka_chaos.history.events import SUBSCRIBE


@dataclass(frozen=True)
class Policy:
    """When an instance is an error: always, unless a fact it was found with exempts it (or never).

    A fact left at its default exempts nothing, so an instance's facts can be judged a few at a
    time: an error judged again with one more fact stays an error unless that fact exempts it."""

    error: bool = True
    #: Consumer modes (the process's latest assign/subscribe) under which an instance is allowed.
    allowed_under: frozenset[str] = frozenset()
    #: Edge kinds that make a cycle allowed when it needs one of them.
    allowed_with_edges: frozenset[EdgeKind] = frozenset()
    #: Allowed in a run with no ok poll (the anomaly is relative to what ok polls read).
    needs_ok_poll: bool = False

    def describe(self) -> str:
        """The policy as docs/checker.md's table says it."""
        if not self.error:
            return "allowed"
        exemptions = [f"allowed under {mode}" for mode in sorted(self.allowed_under)]
        exemptions += [f"allowed when it needs a {k.label} edge" for k in sorted(self.allowed_with_edges)]
        exemptions += ["allowed in a run with no ok poll"] if self.needs_ok_poll else []
        return f"error ({'; '.join(exemptions)})" if exemptions else "error"


ERROR = Policy()
ALLOWED = Policy(error=False)


@dataclass(frozen=True)
class Fact:
    """What a rule found that a policy may need: an anomaly instance, as `is_error` judges it."""

    name: str
    mode: str | None = None  # the consumer's latest assign/subscribe, when the rule compares polls
    edges: Collection[EdgeKind] = ()  # for a cycle: the edge kinds it needs (checkers/txn/cycles.py)
    ok_poll: bool = True  # whether the run had an ok poll (known only once every key was checked)


#: Where an anomaly's evidence is: the history's operations, the run's control-plane evidence, or
#: a tiered run's log start offsets (checkers/tiered.py).
DATA, CONTROL, TIERED = "data", "control", "tiered"
#: The data plane's rule modules of share groups (../shared/anomalies.md, "Share groups"): they
#: judge a key's share view (checkers/share/view.py), so the per-key pass runs them only in a run
#: with share consumers. A share rule is one because its module is named here.
SHARE_MODULES = frozenset({"data_plane.share_rules"})


@dataclass(frozen=True)
class Anomaly:
    name: str
    module: str  # where its rule lives: its module under kafka_chaos.checkers (data_plane.lost_write)
    holds_when: str
    policy: Policy = ERROR
    #: DATA: a per-key rule over the history (checkers/data_plane/per_key.py runs its module); CONTROL: a rule
    #: over the control-plane evidence (checkers/control_plane/judge.py); TIERED: over a tiered run's log
    #: start offsets (checkers/tiered.py).
    plane: str = DATA
    #: Whether ../shared/anomalies.md defines it; the project's own rules are said so in docs/checker.md.
    contract: bool = True

    @property
    def error(self) -> str:
        """The policy in a word: "always", "never" (reported, allowed), or "unless" a fact exempts it."""
        p = self.policy
        if not p.error:
            return "never"
        return "unless" if p.allowed_under or p.allowed_with_edges or p.needs_ok_poll else "always"


ANOMALIES: tuple[Anomaly, ...] = (
    Anomaly(
        "lost-write",
        "data_plane.lost_write",
        "a must-have-committed value at or below the highest index read, never read by an ok poll",
    ),
    Anomaly(
        "unseen",
        "data_plane.lost_write",
        "a value from an ok send that no ok poll read and that is not a lost-write",
        Policy(needs_ok_poll=True),
    ),
    Anomaly("duplicate", "data_plane.offsets", "one value at two or more offsets of a key"),
    Anomaly("inconsistent-offsets", "data_plane.offsets", "one (key, offset) carrying two or more values"),
    Anomaly("G1a", "data_plane.aborted_read", "an ok poll read a value whose send operation failed"),
    Anomaly(
        "garbage-read", "data_plane.garbage_read", "a poll read a value that no operation tried to send to that key"
    ),
    Anomaly(
        "poll-skip",
        "data_plane.poll_order",
        "an operation's first value of a key is more than one index after the consumer's reference",
        Policy(allowed_under=frozenset({SUBSCRIBE})),
    ),
    Anomaly(
        "nonmonotonic-poll",
        "data_plane.poll_order",
        "an operation's first value of a key is at or before the consumer's reference",
        Policy(allowed_under=frozenset({SUBSCRIBE})),
    ),
    Anomaly(
        "int-poll-skip",
        "data_plane.poll_order",
        "inside one operation, consecutive values of a key more than one index apart",
    ),
    Anomaly(
        "int-nonmonotonic-poll",
        "data_plane.poll_order",
        "inside one operation, a value of a key at or before the one read just before it",
    ),
    Anomaly(
        "nonmonotonic-send",
        "data_plane.send_order",
        "a must-have-committed operation's first send to a key lands at or before its process's last such send there",
    ),
    Anomaly(
        "int-nonmonotonic-send",
        "data_plane.send_order",
        "inside one operation, a send to a key lands at or before the previous send to it",
    ),
    Anomaly(
        "int-send-skip",
        "data_plane.send_order",
        "inside one operation, consecutive sends to a key land more than one index apart",
        ALLOWED,
    ),
    Anomaly("precommitted-read", "data_plane.precommitted_read", "a transaction polled a value that it sent itself"),
    Anomaly(
        "commit-lost",
        "data_plane.commit_lost",
        "a member's first poll of a key a subscribe gave it starts below the latest ok commit of the key completed"
        " before that subscribe, which no other commit of the key overlapped",
    ),
    Anomaly(
        "share-lost",
        "data_plane.share_rules",
        "a must-have-committed value no share-poll delivered, below the group's start offset for its key at the end",
    ),
    Anomaly(
        "share-unseen",
        "data_plane.share_rules",
        "a value from an ok send that no share-poll delivered and that is not share-lost, after the final drain",
    ),
    Anomaly(
        "share-concurrent-delivery",
        "data_plane.share_rules",
        "a record delivered by a share-poll invoked after another delivery of it completed and completed while that"
        " other hold surely lasted, with no leader change or share-partition reload of its key in between",
    ),
    Anomaly(
        "share-redelivered-after-ack",
        "data_plane.share_rules",
        "a record delivered by a share-poll invoked after an ok share-ack that accepted or rejected it completed,"
        " where the broker took it again: its own acknowledgement was ok, or its count is above the accepted"
        " delivery's with no leader change or reload of its key in between",
    ),
    Anomaly(
        "share-double-acceptance",
        "data_plane.share_rules",
        "two different processes' share-acks that accept or reject one record both come back ok for its key",
    ),
    Anomaly(
        "share-stale-delivery",
        "data_plane.share_rules",
        "a record handed to a member after another member's ok accept or reject of it completed, from an"
        " acquisition the broker no longer honoured: its acknowledgement refused or never made, its count not above"
        " the accepted one's",
        ALLOWED,
    ),
    Anomaly(
        "share-delivery-count",
        "data_plane.share_rules",
        "a delivery count above D; or two deliveries of a record whose counts do not grow, with no leader change or"
        " share-partition reload of its key in between",
    ),
    Anomaly(
        "share-duplicate-in-poll",
        "data_plane.share_rules",
        "one share-poll completion returns the same offset of a key twice",
    ),
    Anomaly(
        "share-redelivered-on-failover",
        "data_plane.share_rules",
        "what would be share-concurrent-delivery or share-delivery-count, with a leader change or a share-partition"
        " reload of the key in between",
        ALLOWED,
    ),
    Anomaly("G0", "txn.cycles", "a cycle of ww edges between transactions (writes are not isolated)", ALLOWED),
    Anomaly(
        "G1c",
        "txn.cycles",
        "a cycle of ww and wr edges between transactions with at least one wr edge",
        Policy(allowed_with_edges=frozenset({EdgeKind.WW})),
    ),
    Anomaly("G1c-process", "txn.cycles", "a cycle of wr edges that exists only once process order is added"),
    Anomaly("G1c-realtime", "txn.cycles", "a cycle of wr edges that exists only once realtime order is added"),
    Anomaly(
        "quorum-split-brain",
        "control_plane.quorum_rules",
        "two running nodes hold themselves quorum leader in different epochs at once, for longer than"
        " 1.5 x `controller.quorum.fetch.timeout.ms` + S + the host stall; a node restarted since it held an epoch"
        " holds no claim to it until elected again",
        plane=CONTROL,
    ),
    Anomaly(
        "quorum-double-leader",
        "control_plane.judge",
        "two different nodes hold themselves leader of the same epoch, at any time",
        plane=CONTROL,
    ),
    Anomaly(
        "quorum-epoch-regression",
        "control_plane.judge",
        "the epoch a node holds goes down, across its restarts (a wiped node starts again)",
        plane=CONTROL,
    ),
    Anomaly(
        "metadata-divergence",
        "control_plane.judge",
        "two nodes' metadata logs hold different records at one offset below the final high watermark, of the"
        " same epoch, or where the node that differs from the final leader fetched from it past that offset",
        plane=CONTROL,
    ),
    Anomaly(
        "leader-not-in-isr",
        "control_plane.metadata_rules",
        "after a record is replayed, a partition's leader is >= 0 and not in its ISR",
        plane=CONTROL,
    ),
    Anomaly(
        "partition-epoch-regression",
        "control_plane.metadata_rules",
        "a record leaves a partition's leader epoch or partition epoch lower than it was",
        plane=CONTROL,
    ),
    Anomaly(
        "inactive-leader",
        "control_plane.metadata_rules",
        "a record makes a broker leader that is fenced or in controlled shutdown at that offset",
        plane=CONTROL,
    ),
    Anomaly(
        "fenced-in-isr",
        "control_plane.metadata_rules",
        "a record adds to an ISR a broker that is fenced at that offset",
        plane=CONTROL,
    ),
    Anomaly(
        "unfenced-down-broker",
        "control_plane.fault_timing",
        "a broker killed, stopped or paused, and still so, is unfenced in the committed metadata"
        " `broker.session.timeout.ms` + S + the host stall after the latest of: the fault taking effect, the"
        " activation of each quorum leader elected meanwhile, a majority of voters meeting again",
        plane=CONTROL,
    ),
    Anomaly(
        "stale-isr-member",
        "control_plane.fault_timing",
        "a follower faulted (down, or cut from its leader), and still so, is in the committed ISR once"
        " 1.5 x `replica.lag.time.max.ms` + S + the host stall of counted time (an active controller, the leader up"
        " and reaching it) has passed since the first ok send after the fault; a leader change starts it again",
        plane=CONTROL,
    ),
    Anomaly(
        "stuck-broker-metadata",
        "control_plane.fault_timing",
        "after the last fault was undone, a broker stays behind the quorum's high watermark, fetching nothing"
        " new, for longer than 30 s + S",
        plane=CONTROL,
    ),
    Anomaly(
        "log-start-moved",
        "tiered",
        "in a tiered run whose retention could delete nothing, a partition's log start offset on some replica,"
        " or the first offset that its remote storage holds, is above the partition's first offset at the end"
        " of the run (KAFKA-20732)",
        plane=TIERED,
    ),
)
NAMES = tuple(a.name for a in ANOMALIES)
#: The anomalies ../shared/anomalies.md defines (the others are kafka-chaos's own).
CONTRACT_NAMES = tuple(a.name for a in ANOMALIES if a.contract)
#: The anomalies whose instances are facts of the run's evidence, not keys and values of its history.
EVIDENCE_NAMES = tuple(a.name for a in ANOMALIES if a.plane != DATA)
#: The anomalies of the control plane (../shared/anomalies.md, "Control plane").
CONTROL_NAMES = tuple(a.name for a in ANOMALIES if a.plane == CONTROL)
#: The anomalies of share groups (../shared/anomalies.md, "Share groups"): their rules' modules are SHARE_MODULES.
SHARE_NAMES = tuple(a.name for a in ANOMALIES if a.module in SHARE_MODULES)
BY_NAME = {a.name: a for a in ANOMALIES}

#: Anomalies of ../shared/anomalies.md the checker does not judge yet: each with the issue that
#: brings it and the operations its rule reads. A history with those operations says so in a
#: warning (`pending_warnings`), never by silence.
PENDING: dict[str, tuple[str, tuple[str, ...]]] = {}


def pending_warnings(operations: Collection[str]) -> list[str]:
    """One warning per issue whose rules the history's operations (`f`s) call for and that the
    checker does not judge yet."""
    by_issue: dict[str, list[str]] = {}
    for name, (issue, reads) in PENDING.items():
        if any(f in operations for f in reads):
            by_issue.setdefault(issue, []).append(name)
    return [
        f"not checked yet ({issue}): {', '.join(names)}: the history has the operations they read"
        for issue, names in by_issue.items()
    ]


# One row per anomaly instance. `ops` are history indices of the operations involved (each named by
# the event that completed it, or by its invoke when it never completed). `allowed` marks an
# instance that is reported but is not an error.
INSTANCE_COLUMNS = ("name", "key", "process", "ops", "offsets", "values", "allowed")
INSTANCES = (
    "name string, key string, process string, ops array<long>, offsets array<long>, values array<long>, allowed boolean"
)


def is_error(fact: Fact) -> bool:
    """Whether an anomaly instance is an error, by its anomaly's policy in the table: the one place
    that decides. Each fact can only exempt, so the conditions are a conjunction."""
    policy = BY_NAME[fact.name].policy
    return (
        policy.error
        and fact.mode not in policy.allowed_under
        and not policy.allowed_with_edges.intersection(fact.edges)
        and (fact.ok_poll or not policy.needs_ok_poll)
    )


def _allowed(name: str, mode, n: int) -> np.ndarray:
    """Per hit, whether `is_error` allows it: judged once per distinct mode (a key's few)."""
    if mode is None:
        return np.full(n, not is_error(Fact(name)), dtype=bool)
    modes = [m if isinstance(m, str) else None for m in mode]
    errors = {m: is_error(Fact(name, mode=m)) for m in set(modes)}
    return np.fromiter((not errors[m] for m in modes), dtype=bool, count=n)


def instances(name: str, key: str, process, ops, offsets, values, mode=None) -> pd.DataFrame:
    """Rule hits of anomaly `name` in one key as instance rows (pandas; each argument one entry
    per hit, `process` None when the anomaly has none), each judged by `is_error`. `mode`: per hit,
    the consumer's mode, where the rule compared a poll with the consumer's reference."""
    if name not in BY_NAME:
        raise ValueError(f"unknown anomaly {name!r}")
    n = len(ops)
    return pd.DataFrame(
        {
            "name": name,
            "key": key,
            "process": list(process) if process is not None else [None] * n,
            "ops": list(ops),
            "offsets": list(offsets),
            "values": list(values),
            "allowed": _allowed(name, mode, n),
        },
        columns=list(INSTANCE_COLUMNS),
    )


def tally_frame(key: str, rows: list[tuple[str, list[int], list[int]]]) -> pd.DataFrame:
    """A key's counts as rows of the instance table: (name, slots, counts) each, allowed, with no
    operation (checkers/data_plane/tallies.py, checkers/share/view.py; summed over keys by
    checkers/check.py)."""
    return pd.DataFrame(
        {
            "name": [r[0] for r in rows],
            "key": key,
            "process": None,
            "ops": [[] for _ in rows],
            "offsets": [r[1] for r in rows],
            "values": [r[2] for r in rows],
            "allowed": True,
        },
        columns=list(INSTANCE_COLUMNS),
    )


def one(a) -> list[list]:
    """Each entry as a one-element list."""
    return [[int(x)] for x in a]


def pairs(a, b) -> list[list]:
    return [[int(x), int(y)] for x, y in zip(a, b, strict=True)]


def maybe(a) -> list[list]:
    """Each entry as a one-element list, or an empty one where it is missing (an unknown offset)."""
    return [[] if pd.isna(x) else [int(x)] for x in a]


def read_instances(name: str, key: str, rows: pd.DataFrame) -> pd.DataFrame:
    """Instances that are single reads (op, offset, value, process of a read row)."""
    return instances(name, key, rows["process"], one(rows["op"]), maybe(rows["offset"]), one(rows["value"]))


def step_instances(key: str, rows: pd.DataFrame, skip: str, back: str) -> list[pd.DataFrame]:
    """Consecutive rows of the key inside one operation (by pos, each with its index `idx`) more
    than one index apart (`skip`), or at or before the one just before (`back`)."""
    if len(rows) < 2:
        return []
    r = rows.sort_values(["op", "pos"])
    same = r["op"].to_numpy()[1:] == r["op"].to_numpy()[:-1]
    prev, cur = r.iloc[:-1][same], r.iloc[1:][same]
    delta = cur["idx"].to_numpy() - prev["idx"].to_numpy()
    out = []
    for name, mask in ((skip, delta > 1), (back, delta <= 0)):
        if mask.any():
            p, c = prev[mask], cur[mask]
            out.append(
                instances(
                    name,
                    key,
                    c["process"],
                    one(c["op"]),
                    pairs(p["offset"], c["offset"]),
                    pairs(p["value"], c["value"]),
                )
            )
    return out


OWN = " (kafka-chaos's own)"  # the table's word for a rule that is not the contract's


def markdown_table() -> str:
    """The table docs/checker.md shows (a test keeps the two in step)."""
    rows = ["| anomaly | kind | rule in | holds when |", "|---|---|---|---|"]
    rows += [
        f"| `{a.name}` | {a.policy.describe()}{'' if a.contract else OWN} "
        f"| `checkers/{a.module.replace('.', '/')}.py` | {a.holds_when} |"
        for a in ANOMALIES
    ]
    return "\n".join(rows)
