"""Shrinking a finding: the smallest fault schedule that still finds the same anomaly, and whether
its faults went past what the configuration promises to survive.

A schedule that found an error anomaly (an `explore` run's, or any run's) usually holds faults
that had nothing to do with it. `shrink` takes them away while the anomaly stays: first whole
steps (delta debugging: halves, then quarters, down to single steps, so the result is
1-minimal: dropping any one step loses the anomaly), then the steps' holds (each halved toward
a floor), then their targets (a compound target `A+B` to `A` or to `B`; a role to one before it
in nemesis/roles.py's order), round after round until a round changes nothing. Bugs under faults
reproduce only sometimes, so a candidate counts only when it finds the same anomaly in at least
`need` of `runs` trials (3 of 5 by default), each trial stopped as soon as the answer is known.
A candidate that breaks a bound of nemesis/bounds.py the first schedule kept (a hold shortened into
a pause, a stall aimed at a controller role) is rejected untried: shrinking, like explore's space,
rejects where the overlapping mix repairs. A bound the first schedule already broke (a hand-written
script's) does not stop shrinking it.

The result is a script in nemesis/schedule.py's step format (`write_script`), which `run
--nemesis-script`, `reproduce` and `bisect` take. `beyond_promise` says whether the faults a run
applied went past what its configuration promises to survive (docs/nemesis.md, "Shrinking, and
faults beyond what a configuration promises"): a loss there is the configuration's limit, not a
Kafka bug.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# What a configuration promises to survive is a measure of the run (checkers/measures/promise.py);
# re-exported for the callers that take it with shrinking.
from kafka_chaos.checkers.measures.promise import ELECT_UNCLEAN as ELECT_UNCLEAN
from kafka_chaos.checkers.measures.promise import Applied as Applied
from kafka_chaos.checkers.measures.promise import applied_faults as applied_faults
from kafka_chaos.checkers.measures.promise import beyond_promise as beyond_promise
from kafka_chaos.checkers.measures.promise import beyond_promise_of_run as beyond_promise_of_run
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.nemesis import bounds
from kafka_chaos.nemesis.bounds import MIN_HOLD_S
from kafka_chaos.nemesis.roles import ROLES, Role
from kafka_chaos.nemesis.schedule import Step

#: One run of a schedule: the names of the error anomalies its check found.
Trial = Callable[[list[Step]], set[str]]

#: The shortest hold shrinking tries (bounds.MIN_HOLD_S).
HOLD_FLOOR_S = MIN_HOLD_S
#: The workload's first key, which a role such as `leader:{key}` names when no step says another.
DEFAULT_KEY = "chaos/0"


@dataclass
class Shrunk:
    """What shrinking ended with: the smallest schedule found and how sure it is."""

    steps: list[Step]
    #: The anomalies a trial had to find (any one of them counts).
    anomalies: frozenset[str]
    #: In how many of `tried` trials the final schedule found one of them (its accepting test).
    reproduced: int
    tried: int
    #: Every trial spent, the first schedule's included.
    trials: int
    #: The schedule first given, and whether it reproduced at all (False: nothing was shrunk).
    original: list[Step] = field(default_factory=list)
    found: bool = True
    #: The budget ran out before a round changed nothing: a smaller schedule may exist.
    exhausted: bool = False
    #: Each accepted change, in order.
    log: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "steps": script_of(self.steps),
            "anomalies": sorted(self.anomalies),
            "reproduced": self.reproduced,
            "tried": self.tried,
            "trials": self.trials,
            "original": script_of(self.original),
            "found": self.found,
            "exhausted": self.exhausted,
            "log": self.log,
        }


class _OutOfBudget(Exception):
    pass


class _Search:
    """The trials, their budget and their memo: a schedule is judged once."""

    def __init__(
        self,
        trial: Trial,
        anomalies: frozenset[str] | None,
        runs: int,
        need: int,
        budget: int | None,
        seconds: float | None,
        clock: Callable[[], float],
        progress: Reporter | None,
    ) -> None:
        self.trial, self.anomalies, self.runs, self.need = trial, anomalies, runs, need
        self.budget, self.seconds, self.clock, self.progress = budget, seconds, clock, progress
        self.started = clock()
        self.spent = 0
        self.longest = 0.0  # the longest trial so far: one that would overrun `seconds` is not begun
        self.memo: dict[str, tuple[bool, int, int]] = {}

    def say(self, line: str) -> None:
        if self.progress is not None:
            self.progress(line)

    def one(self, steps: list[Step]) -> set[str]:
        if self.budget is not None and self.spent >= self.budget:
            raise _OutOfBudget
        if self.seconds is not None and self.clock() - self.started + self.longest > self.seconds:
            raise _OutOfBudget
        began = self.clock()
        found = set(self.trial([replace(s, options=dict(s.options)) for s in steps]))
        self.longest = max(self.longest, self.clock() - began)
        self.spent += 1
        if self.anomalies is None:  # the first trial of the first schedule names what to look for
            self.anomalies = frozenset(found)
        return found

    def judge(self, steps: list[Step], what: str) -> tuple[bool, int, int]:
        """(reproduces, in how many trials, of how many): at most `runs` trials, stopped once
        `need` found it or can no longer."""
        key = json.dumps(script_of(steps), sort_keys=True)
        if key in self.memo:
            return self.memo[key]
        hits = tried = 0
        while tried < self.runs and hits < self.need and hits + self.runs - tried >= self.need:
            found = self.one(steps)
            tried += 1
            hits += bool(found & (self.anomalies or frozenset()))
        verdict = (hits >= self.need, hits, tried)
        self.memo[key] = verdict
        self.say(f"shrink: {what}: {'found' if verdict[0] else 'not found'} in {hits} of {tried} trial(s)")
        return verdict


def shrink(
    steps: Sequence[Step],
    trial: Trial,
    *,
    anomalies: Collection[str] | None = None,
    runs: int = 5,
    need: int = 3,
    budget: int | None = None,
    seconds: float | None = None,
    hold_floor: float = HOLD_FLOOR_S,
    roles: Sequence[Role] = ROLES,
    key: str | None = None,
    confirm: bool = False,
    progress: Reporter | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Shrunk:
    """The smallest schedule found that still finds one of `anomalies` (default: those the first
    trial of `steps` finds) in at least `need` of `runs` trials.

    `trial(steps)` runs a schedule once and returns its error anomalies' names. `budget` (trials)
    and `seconds` bound the search: no trial is begun that would pass either (a trial's length is
    taken as the longest so far), and the best schedule so far is returned. Given a deterministic
    `trial` and no `seconds`, the result is deterministic: the search itself draws nothing.
    `roles`: the roles a target may become (the run's `roles_for`); `key`: the partition a role
    names (default: the one the steps name, else the workload's first). `confirm`: run the final
    schedule all `runs` times (within the budget), so that `reproduced` counts of `runs`, not of
    the trials that sufficed to accept it."""
    if not 1 <= need <= runs:
        raise ValueError(f"need must be between 1 and runs ({runs}), got {need}")
    original = [replace(s, options=dict(s.options)) for s in steps]
    search = _Search(trial, frozenset(anomalies) if anomalies else None, runs, need, budget, seconds, clock, progress)
    key = key or _key_of(original) or DEFAULT_KEY
    best, log = original, []
    try:
        ok, hits, tried = search.judge(original, f"the first schedule ({len(original)} step(s))")
    except _OutOfBudget:
        anomalies_known = search.anomalies or frozenset()
        return Shrunk(original, anomalies_known, 0, 0, search.spent, original, found=False, exhausted=True)
    if not ok:
        return Shrunk(original, search.anomalies or frozenset(), hits, tried, search.spent, original, found=False)
    verdict = (hits, tried)
    exhausted = False

    kept_bounds = set(bounds.BOUNDS) - bounds.broken(original)

    def accept(candidate: list[Step], what: str) -> bool:
        nonlocal best, verdict
        breaks = bounds.broken(candidate) & kept_bounds
        if breaks:
            search.say(f"shrink: {what}: not tried, it breaks the bound(s) {', '.join(sorted(breaks))}")
            return False
        good, h, t = search.judge(candidate, what)
        if good:
            best, verdict = candidate, (h, t)
            log.append(what)
        return good

    try:
        changed = True
        while changed:
            before = json.dumps(script_of(best))
            _drop_steps(best, accept)
            _shorten_holds(best, accept, hold_floor)
            _simplify_targets(best, accept, roles, key)
            changed = json.dumps(script_of(best)) != before
    except _OutOfBudget:
        exhausted = True
        search.say(f"shrink: budget spent after {search.spent} trial(s); keeping the best so far")
    if confirm:  # the rest of the final schedule's `runs` trials: "found in N of 5", not "3 of 3"
        hits, tried = verdict
        try:
            while tried < runs:
                hits += bool(search.one(best) & (search.anomalies or frozenset()))
                tried += 1
        except _OutOfBudget:
            exhausted = True
        verdict = (hits, tried)
    anomalies_found = search.anomalies or frozenset()
    return Shrunk(best, anomalies_found, verdict[0], verdict[1], search.spent, original, True, exhausted, log)


Accept = Callable[[list[Step], str], bool]


def _drop_steps(steps: list[Step], accept: Accept) -> list[Step]:
    """Delta debugging (ddmin, reducing to complements): remove one of n chunks while the anomaly
    stays, n from 2 up to one chunk per step. Ends 1-minimal."""
    current, n = list(steps), 2
    while len(current) >= 2:
        size = -(-len(current) // n)  # ceil: n chunks, the last maybe shorter
        chunks = [range(i, min(i + size, len(current))) for i in range(0, len(current), size)]
        for chunk in chunks:
            rest = [s for i, s in enumerate(current) if i not in chunk]
            gone = ", ".join(_describe(current[i]) for i in chunk)
            if accept(rest, f"drop {gone}"):
                current, n = rest, max(n - 1, 2)
                break
        else:
            if n >= len(current):
                break
            n = min(2 * n, len(current))
    return current


def _shorten_holds(steps: list[Step], accept: Accept, floor: float) -> None:
    """Each step's hold halved (to `floor` at least) while the anomaly stays. Works on the
    accepted schedule through `accept`, which keeps it."""
    current = list(steps)
    for i in range(len(current)):
        while current[i].hold is not None and current[i].hold > floor:  # type: ignore[operator]
            shorter = max(floor, round(current[i].hold / 2, 1))  # type: ignore[operator]
            candidate = [*current[:i], replace(current[i], hold=shorter), *current[i + 1 :]]
            if not accept(candidate, f"{_describe(current[i])}: held {shorter:g} s"):
                break
            current = candidate


def _simplify_targets(steps: list[Step], accept: Accept, roles: Sequence[Role], key: str) -> None:
    """Each step's target made simpler while the anomaly stays: a compound `A+B` to `A`, else to
    `B` (fewer nodes); a role to an earlier one of `roles` (fewer, simpler roles)."""
    current = list(steps)
    for i in range(len(current)):
        for target in _simpler_targets(current[i].target, roles, key):
            candidate = [*current[:i], replace(current[i], target=target), *current[i + 1 :]]
            if accept(candidate, f"aim {_describe(current[i])} at {target}"):
                current = candidate
                break


def _simpler_targets(target: str, roles: Sequence[Role], key: str) -> list[str]:
    """The simpler targets to try for `target`, simplest first; none for a cut (`A|B`), whose
    sides a partition needs both of."""
    if "|" in target:
        return []
    parts = [p for p in target.split("+") if p]
    if len(parts) > 1:
        return parts
    role, found_key = role_of(target, roles)
    if role is None:
        return []
    earlier = list(roles)[: list(roles).index(role)]
    return [r.resolve(found_key or key) for r in earlier]


def role_of(target: str, roles: Sequence[Role] = ROLES) -> tuple[Role | None, str | None]:
    """The role a target names, and the key in it (`leader:chaos/0` is the role leader, key
    chaos/0); (None, None) for a target that is no role (a node's name, `random`)."""
    for role in roles:
        pattern = "^" + re.escape(role.target).replace(re.escape("{key}"), "(?P<key>.+)") + "$"
        match = re.match(pattern, target)
        if match:
            return role, match.groupdict().get("key")
    return None, None


def _key_of(steps: Iterable[Step]) -> str | None:
    for step in steps:
        for part in re.split(r"[+|;]", step.target):
            _, key = role_of(part)
            if key:
                return key
    return None


def _describe(step: Step) -> str:
    held = f" for {step.hold:g} s" if step.hold is not None else f" for {step.hold_name}" if step.hold_name else ""
    when = f" when {step.when}" if step.when else ""
    return f"{step.fault}@{step.target} at {step.at:g} s{held}{when}"


def script_of(steps: Iterable[Step]) -> list[dict[str, Any]]:
    """Steps as a JSON script (nemesis/schedule.py's step format: `at`, `fault`, `target`, the
    fault's own options, `for`, and a guard and a binding where a step has them)."""
    return [{"at": s.at, "fault": s.fault, "target": s.target, **s.options, **s.script_fields()} for s in steps]


def write_script(steps: Iterable[Step], path: Path) -> Path:
    """Write steps as a script that `run --nemesis-script`, `reproduce` and `bisect` take."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(script_of(steps), indent=2) + "\n")
    return path
