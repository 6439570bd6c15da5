"""What a scripted step may wait for, whom it may name, and how long it may hold, read from the
live cluster and the run's own settings: the parts of a step that act on what the cluster is
doing rather than on the clock alone (`explore` composes them; docs/nemesis.md, "Scripts").

- A **guard** (`"when"`): a condition the step waits for, from its `at`, up to `"within"` seconds
  (GUARD_WITHIN_S by default), polled every POLL_S, asked first of brokers no fault holds down or
  paused; then it acts. A guard not reached in time is
  recorded as the step's fault failing with the reason (`fail`: nothing was done), and the run
  goes on. The conditions:
  `isr:KEY <= N` (also `<`, `>=`, `>`, `==`): the size of KEY's ISR, as the brokers' metadata says;
  `TARGET == $NAME`, `TARGET != $NAME`: whom a target names now (`leader:KEY`, `controller`, a
  coordinator), against the nodes a step bound;
  `fenced:TARGET`: every broker TARGET names (`$NAME`, a node) is fenced, the cluster no longer
  listing it as live (DescribeCluster, or Metadata on releases without it);
  `emptied:TARGET`: every voter TARGET names holds less than EMPTIED_SHARE of the metadata log the
  fullest voter holds, on its disk (read on the host, so it answers whether the node runs, is
  paused or cut off): its log was emptied (a wipe) or it is that far behind, and it has not
  fetched the log back yet. Either way it may grant its vote to a candidate missing committed
  records (KAFKA-14077's family).
- A **binding** (`"as": "NAME"`): the nodes a step aimed at, named for later steps, bound when it
  acts: `$NAME` in a later target or guard stands for them (`kill $L`), and `TARGET!$NAME`
  names what TARGET names without them (`follower:chaos/0!$F`: the other follower;
  `random-controller!$C`: a voter that is not the old controller). A step that names an unbound
  `$NAME` fails, recorded, as a guard not reached does.
- **`$back`**: the nodes the latest heal brought back (a killed node restarted, a paused one
  resumed; of a partition, the smaller side of its cut reconnected), bound by the heal itself:
  the node that just came back, which replays its log, rejoins the ISR or votes again. Before any
  heal it is unbound; a script may not bind it (`as`).
- A **named hold** (`"for": "lag"`): the run's own timeouts, each with the slack S of the
  contract's bounds (history/kraft.py SLACK_S): `lag` (1.5 x replica.lag.time.max.ms, what an ISR
  shrink takes), `session` (broker.session.timeout.ms, a broker's fencing), `election`
  (controller.quorum.fetch.timeout.ms + controller.quorum.election.timeout.ms, a new quorum
  leader); and `next`, held until the next step has acted.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kafka_chaos.history.kraft import KAFKA_TIMING_DEFAULTS, SLACK_S

#: How long a guard waits by default (s), and how often it asks the cluster.
GUARD_WITHIN_S = 30.0
POLL_S = 0.25
#: A hold that lasts until the next step has acted.
NEXT = "next"
#: A voter whose metadata log holds less than this share of the fullest voter's counts as emptied.
EMPTIED_SHARE = 0.5
#: The holds named for the run's timeouts, each the settings it adds up (x its factor).
TIMEOUT_HOLDS: dict[str, tuple[tuple[str, float], ...]] = {
    "lag": (("replica.lag.time.max.ms", 1.5),),
    "session": (("broker.session.timeout.ms", 1.0),),
    "election": (("controller.quorum.fetch.timeout.ms", 1.0), ("controller.quorum.election.timeout.ms", 1.0)),
}
HOLD_NAMES: tuple[str, ...] = (*TIMEOUT_HOLDS, NEXT)
#: The binding every heal makes: the nodes it brought back.
BACK = "back"
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_BOUND = re.compile(r"\$([A-Za-z][A-Za-z0-9_]*)")
_ISR = re.compile(r"^isr:(?P<key>\S+/\d+)\s*(?P<op><=|>=|==|<|>)\s*(?P<n>\d+)$")
_STATE = re.compile(r"^(?P<state>fenced|emptied):(?P<target>\S+)$")
_WHO = re.compile(r"^(?P<target>\S+)\s*(?P<op>==|!=)\s*(?P<bound>\$[A-Za-z][A-Za-z0-9_]*)$")
_OPS = {"<=": operator.le, ">=": operator.ge, "==": operator.eq, "<": operator.lt, ">": operator.gt}


class Unbound(Exception):
    """A step names `$NAME` before any step bound it."""


def hold_seconds(name: str, config: Mapping[str, str]) -> float:
    """A named timeout hold's length for a cluster of broker settings `config` (Kafka's defaults
    where it sets none), with the slack S."""
    total = 0.0
    for key, factor in TIMEOUT_HOLDS[name]:
        total += factor * float(config.get(key, KAFKA_TIMING_DEFAULTS[key])) / 1000
    return round(total + SLACK_S, 1)


def named_holds(config: Mapping[str, str]) -> dict[str, float]:
    """Each timeout hold's seconds for a cluster of broker settings `config`."""
    return {name: hold_seconds(name, config) for name in TIMEOUT_HOLDS}


def check_hold(value: object) -> None:
    """ValueError unless a step's `for` is a positive number of seconds or a hold's name."""
    if isinstance(value, str):
        if value not in HOLD_NAMES:
            raise ValueError(f"'for' names no hold {value!r}: expected seconds or one of {', '.join(HOLD_NAMES)}")
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError("'for' must be a number of seconds > 0 or a hold's name")


@dataclass(frozen=True)
class Guard:
    """A parsed `when`: an ISR size compared with N, or whom a target names against a binding."""

    text: str
    key: str | None = None  # isr:KEY
    op: str = ""
    n: int = 0
    target: str | None = None  # TARGET == $NAME, fenced:TARGET, emptied:TARGET
    bound: str | None = None
    state: str | None = None  # `fenced` or `emptied`: what every node TARGET names must be

    @property
    def fenced(self) -> bool:
        return self.state == "fenced"

    @property
    def emptied(self) -> bool:
        return self.state == "emptied"

    @property
    def names(self) -> tuple[str, ...]:
        """The bindings it reads."""
        return bound_names(self.text)


def parse_guard(text: str) -> Guard:
    """ValueError naming what is wrong with a `when`."""
    text = str(text).strip()
    if m := _ISR.match(text):
        return Guard(text, key=m["key"], op=m["op"], n=int(m["n"]))
    if m := _STATE.match(text):
        return Guard(text, target=m["target"], state=m["state"])
    if m := _WHO.match(text):
        return Guard(text, target=m["target"], op=m["op"], bound=m["bound"][1:])
    raise ValueError(
        f"'when' {text!r}: expected `isr:TOPIC/PARTITION <= N`, `TARGET == $NAME` (or !=), `fenced:TARGET` or "
        "`emptied:TARGET`"
    )


def bound_names(text: str) -> tuple[str, ...]:
    """The `$NAME`s a target or a guard reads."""
    return tuple(_BOUND.findall(text))


def substitute(text: str, bindings: Mapping[str, list[str]]) -> str:
    """`text` with each `$NAME` replaced by its nodes (comma-separated); Unbound for one not bound."""

    def one(m: re.Match) -> str:
        if m[1] not in bindings:
            raise Unbound(f"${m[1]} is not bound yet: no earlier step `as` {m[1]} has acted")
        return ",".join(bindings[m[1]])

    return _BOUND.sub(one, text)


def holds(
    guard: Guard,
    bindings: Mapping[str, list[str]],
    isr_size: Callable[[str], int],
    names: Callable[[str], list[str]],
    fenced: Callable[[], set[str]] | None = None,
    emptied: Callable[[], set[str]] | None = None,
) -> bool:
    """Whether the guard holds now: `isr_size(key)`, `names(target)` (the aliases a target names
    now), `fenced()` (the brokers the cluster does not list as live) and `emptied()` (the voters
    whose metadata log is emptied) ask the cluster."""
    if guard.key is not None:
        return _OPS[guard.op](isr_size(guard.key), guard.n)
    if guard.state is not None:
        ask = fenced if guard.fenced else emptied
        assert guard.target is not None and ask is not None
        return set(names(substitute(guard.target, bindings))) <= ask()
    assert guard.target is not None and guard.bound is not None
    if guard.bound not in bindings:
        raise Unbound(f"${guard.bound} is not bound yet")
    now = set(names(substitute(guard.target, bindings)))
    same = now == set(bindings[guard.bound])
    return same if guard.op == "==" else not (now & set(bindings[guard.bound]))


#: The timeout holds at Kafka's own defaults (a schedule judged before its run's settings are known).
NAMED_DEFAULTS: dict[str, float] = named_holds({})
