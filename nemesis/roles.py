"""The roles a composed fault schedule aims at: shared by the overlapping random mix
(nemesis/overlap.py), `explore`'s search (runs/explore.py) and shrinking (runs/shrink.py), so that
all three draw from, mutate within and shrink towards the same roles (their bounds are
nemesis/bounds.py's).

A role is a target of nemesis/targets.py, resolved from the live cluster at the fault's moment:
"the leader of the workload's first partition" names whichever broker leads it then.

A related role names a node by what an earlier move hit (`RELATED`): the other follower, the old
and the new leader or controller, a voter that is neither, the node an earlier move's heal brought
back; or by a state only a composed schedule reaches: the last member of an ISR. The first move aimed at a role binds
the node it hit under the role's name (nemesis/guards.py: `as`), and a related role's target reads
that binding (`follower:{key}!$follower`), so only `explore`'s schedules, whose moves come in
order, use them.
"""

from __future__ import annotations

from dataclasses import dataclass


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


#: Roles named by what an earlier move hit; `needs`: the roles whose first use binds what they read.
@dataclass(frozen=True)
class Related(Role):
    needs: tuple[str, ...] = ()


#: The related role that names a node only while an ISR has one member (a move at it waits for
#: that), and the one that reads the nodes a heal brought back (it needs a held move before it).
LAST_ISR_MEMBER, CAME_BACK = "last-isr-member", "came-back"
RELATED: tuple[Related, ...] = (
    Related(
        "other-follower",
        "follower:{key}!$follower",
        "a follower in the ISR other than the first one hit",
        ("follower",),
    ),
    Related("old-leader", "$leader", "the node that led the partition when a move first hit its leader", ("leader",)),
    Related("new-leader", "leader:{key}!$leader", "the partition's leader, once it is not the old one", ("leader",)),
    Related("old-controller", "$controller", "the active controller when a move first hit it", ("controller",)),
    Related(
        "new-controller", "controller!$controller", "the active controller, once it is not the old one", ("controller",)
    ),
    Related(
        "other-voter",
        "random-controller!$controller,$new_controller",
        "a voter that is neither the old nor the new active controller",
        ("controller", "new-controller"),
    ),
    Related(
        LAST_ISR_MEMBER,
        "last-isr:{key}",
        "the only member of that partition's ISR, while it has one",
    ),
    Related(
        CAME_BACK,
        "$back",
        "the node the latest heal brought back (restarted, resumed, reconnected)",
    ),
)
BY_NAME: dict[str, Role] = {r.name: r for r in (*ROLES, *RELATED)}


def binding(role: str) -> str:
    """The name a role's first use binds its node to (`$follower`, `$new_controller`)."""
    return role.replace("-", "_")


def related_for(roles: tuple[str, ...]) -> tuple[str, ...]:
    """The related roles whose bindings some of `roles` (and the related roles among them) make."""
    out: list[str] = []
    for r in RELATED:
        if all(n in roles or n in out for n in r.needs):
            out.append(r.name)
    return tuple(out)


#: The roles that name brokers (a partition's replicas, a coordinator): what a stall, which holds a
#: broker's client connections, aims at, and what `--nemesis-targets brokers` keeps.
BROKER_ROLES: tuple[str, ...] = (
    "leader",
    "follower",
    "group-coordinator",
    "txn-coordinator",
    "share-coordinator",
    "any-broker",
    "other-follower",
    "old-leader",
    "new-leader",
    LAST_ISR_MEMBER,
)
#: The roles that name controllers: what `--nemesis-targets controllers` keeps.
CONTROLLER_ROLES: tuple[str, ...] = (
    "controller",
    "quorum-minority",
    "any-controller",
    "old-controller",
    "new-controller",
    "other-voter",
)


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
