"""The roles a composed fault schedule aims at, and the bounds of its space: shared by the
overlapping random mix (nemesis/overlap.py), `explore`'s search (runs/explore.py) and shrinking
(runs/shrink.py), so that all three draw from, mutate within and shrink towards the same space.

A role is a target of nemesis/targets.py, resolved from the live cluster at the fault's moment:
"the leader of the workload's first partition" names whichever broker leads it then.

The bounds follow the studies in docs/nemesis.md: 87% of crash-recovery bugs need at most three
crashes and one reboot (CREB, FSE 2018), 98% of failures show on at most three nodes (OSDI 2014).
"""

from __future__ import annotations

from dataclasses import dataclass

#: At most this many faults in place at once.
MAX_AT_ONCE = 3
#: Faults that lose a node's disk or its unflushed writes: at most one of them per node in a run
#: (a second on the same node mostly repeats the first, and two on different ISR members at once
#: is past what any configuration promises to survive: checkers/measures/promise.py's
#: `beyond_promise`).
DISK_FAULTS = ("wipe", "lose-unflushed")


@dataclass(frozen=True)
class Role:
    """A role: its name in tables and progress lines, and the target expression it stands for
    (`{key}`: the workload's first key, `topic/0`)."""

    name: str
    target: str
    #: What it names, for the docs and `explore`'s table.
    doc: str = ""

    def resolve(self, key: str) -> str:
        return self.target.format(key=key)


ROLES: tuple[Role, ...] = (
    Role("leader", "leader:{key}", "the leader of the workload's first partition"),
    Role("follower", "follower:{key}", "a follower in that partition's ISR"),
    Role("controller", "controller", "the active controller"),
    Role("quorum-minority", "quorum-minority", "a minority of the voters, not the active controller"),
    Role("group-coordinator", "group-coordinator", "the coordinator of the run's consumer group"),
    Role("txn-coordinator", "txn-coordinator", "the coordinator of process 0's transactional id"),
    Role("share-coordinator", "share-coordinator:{key}", "the keeper of the share group's state of that partition"),
    Role("any-broker", "random-broker", "any broker"),
    Role("any-controller", "random-controller", "any controller"),
)
BY_NAME: dict[str, Role] = {r.name: r for r in ROLES}
#: The roles that name brokers (a partition's replicas, a coordinator): what a stall, which holds a
#: broker's client connections, aims at, and what `--nemesis-targets brokers` keeps.
BROKER_ROLES: tuple[str, ...] = (
    "leader",
    "follower",
    "group-coordinator",
    "txn-coordinator",
    "share-coordinator",
    "any-broker",
)
#: The roles that name controllers: what `--nemesis-targets controllers` keeps.
CONTROLLER_ROLES: tuple[str, ...] = ("controller", "quorum-minority", "any-controller")


def roles_for(workload: str, group: bool, share: bool = False) -> tuple[Role, ...]:
    """The roles that name something in a run of `workload` (a transaction coordinator only where
    there are transactions, a group coordinator only where there is a consumer group, a share
    coordinator only where there is a share group)."""
    out = []
    for role in ROLES:
        if role.name == "txn-coordinator" and workload != "txn":
            continue
        if role.name == "group-coordinator" and not group:
            continue
        if role.name == "share-coordinator" and not share:
            continue
        out.append(role)
    return tuple(out)
