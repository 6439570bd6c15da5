"""When faults happen: a random mix with quiet periods, or a script of timed steps.

Random (`--nemesis kill,pause,partition --nemesis-interval S`): wait S seconds of quiet, apply
a fault from the list to a random target, hold it S seconds, heal it, and again
(`--nemesis-start T`: T seconds of quiet before the first fault instead of S). Faults come
in rounds, each fault once per round in a random order, so a short run still sees them all.
An entry `FAULT@TARGET` aims that fault at a target of nemesis/targets.py instead
(`kill@group-coordinator`, `pause@txn-coordinator`, `kill@leader:chaos/0`). The other entries
take their targets from a pool (`--nemesis-targets`, TARGET_POOLS): `any` node (the default),
`brokers` or `controllers`; under `controllers`, a partition isolates a controller or cuts the
active one off from the other voters (`quorum-leader`).

Scripted (`--nemesis-script FILE`, JSON): a list of steps, each
`{"at": seconds, "fault": "kill", "target": "leader:chaos/0", "for": seconds}`, and the fault's
own options (a partition's `"shape": "isolate"`). `for` (optional) heals the fault that long after
it started. Steps may overlap (a partition held while a node is wiped), except two network
faults: `heal` undoes every one at once, so one starts only once the held one before it healed.
A run's config.json is a script too: the steps its nemesis played (a script's, an overlapping
mix's), so that `--nemesis-script run/config.json` plays that timeline again.

Overlapping (`--nemesis-mix overlap`, nemesis/overlap.py): each fault family on its own clock,
the whole timeline drawn from the run's seed before the run and played as a script.

Either way every fault is healed before the final read phase (stop_and_heal). A schedule that
crashes (a bug in the schedule, not a fault that failed to apply: the nemesis records those) ends
the workload phase, is healed like any other, and then fails the run with `ScheduleCrash`: a run
whose faults silently stopped would otherwise check as VALID on traffic no fault touched.
"""

from __future__ import annotations

import heapq
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from kafka_chaos.harness.errors import KafkaChaosError, UsageError
from kafka_chaos.nemesis import guards, targets
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.exits import ExitWatch
from kafka_chaos.nemesis.faults import BY_NAME, HEAL, HEALS, NAMES, PARTITION, RANDOM, STEP_OPTIONS, check_options
from kafka_chaos.nemesis.streams import stream


def parse_fault_list(text: str) -> list[str]:
    """The entries of a random fault list: FAULT, or FAULT@TARGET (a target of nemesis/targets.py;
    a node name, or a key's leader, may hold no comma here: the list is comma-separated)."""
    faults = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in faults if f.partition("@")[0] not in RANDOM]
    if unknown or not faults:
        raise UsageError(f"unknown fault {', '.join(unknown) or text!r}: expected some of {', '.join(RANDOM)}")
    untargeted = [f for f in faults if "@" in f and not f.partition("@")[2]]
    if untargeted:
        raise UsageError(f"fault {untargeted[0]!r} names no target after '@' (e.g. kill@group-coordinator)")
    return faults


@dataclass
class Step:
    at: float
    fault: str
    target: str = "random"
    hold: float | None = None  # "for" in the script, in seconds
    #: The fault's own options as the script gave them (a partition's `shape`: faults.STEP_OPTIONS).
    options: dict[str, Any] = field(default_factory=dict)
    #: A hold by name (nemesis/guards.py: the run's timeouts, resolved when it starts, or `next`).
    hold_name: str | None = None
    #: A guard (nemesis/guards.py): what the step waits for from `at`, and for how long at most (s).
    when: str | None = None
    within: float | None = None
    #: The name the nodes it aimed at are bound to ("as" in the script).
    bind: str | None = None

    def describe(self) -> dict[str, Any]:
        """The step in config.json: every step option with its default unless the script gave it."""
        head = {"at": self.at, "fault": self.fault, "target": self.target}
        moves = {k: v for k, v in self.script_fields().items() if k != "for"}
        return {**head, **STEP_OPTIONS, **self.options, "hold": self.hold_name or self.hold, **moves}

    def script_fields(self) -> dict[str, Any]:
        """Its hold, guard and binding as a script spells them (only those it has)."""
        out: dict[str, Any] = {}
        if self.hold_name or self.hold is not None:
            out["for"] = self.hold_name or self.hold
        if self.when is not None:
            out["when"] = self.when
            out["within"] = self.within if self.within is not None else guards.GUARD_WITHIN_S
        if self.bind is not None:
            out["as"] = self.bind
        return out


def parse_script(data: object) -> list[Step]:
    """Steps from a decoded JSON script; UsageError naming the first problem."""
    if not isinstance(data, list):
        raise UsageError("a nemesis script is a JSON list of steps")
    steps = []
    for i, raw in enumerate(data):
        if not isinstance(raw, dict) or "at" not in raw or "fault" not in raw:
            raise UsageError(f"step {i}: needs at least 'at' and 'fault'")
        extra = set(raw) - {"at", "fault", "target", "for", *MOVE_FIELDS, *STEP_OPTIONS}
        if extra:
            raise UsageError(f"step {i}: unknown field(s) {', '.join(sorted(extra))}")
        if raw["fault"] not in NAMES:
            raise UsageError(f"step {i}: unknown fault {raw['fault']!r}: expected one of {', '.join(NAMES)}")
        options = {k: raw[k] for k in STEP_OPTIONS if k in raw}
        try:
            check_options(options)
        except ValueError as exc:
            raise UsageError(f"step {i}: {exc}") from None
        named = raw.get("for") if isinstance(raw.get("for"), str) else None
        try:
            if raw.get("for") is not None:
                guards.check_hold(raw["for"])
            at, hold = float(raw["at"]), None if raw.get("for") is None or named else float(raw["for"])
        except (TypeError, ValueError) as exc:
            why = str(exc) if "'for'" in str(exc) else "'at' and 'for' must be numbers of seconds"
            raise UsageError(f"step {i}: {why}") from None
        if at < 0:
            raise UsageError(f"step {i}: 'at' must be >= 0 and 'for' > 0")
        step = Step(at, raw["fault"], str(raw.get("target", "random")), hold, options, named)
        steps.append(_with_moves(i, step, raw))
    order = sorted(range(len(steps)), key=lambda i: steps[i].at)  # stable: steps at one moment keep their order
    held: tuple[int, float] | None = None  # the network fault in place: its step, its heal
    for i in order:
        step = steps[i]
        if HEALS.get(step.fault) != HEAL.name:
            continue
        if held is not None and step.at < held[1]:
            raise UsageError(
                f"step {i} ({step.fault} at {step.at:g} s) starts while step {held[0]}'s {steps[held[0]].fault} "
                f"is held (until {held[1]:g} s): `heal` undoes every network fault at once"
            )
        held = (i, step.at + step.hold) if step.hold is not None and step.when is None else None
    bound: set[str] = set()
    for i in order:
        step = steps[i]
        unknown = [n for n in guards.bound_names(f"{step.target} {step.when or ''}") if n not in bound]
        if unknown:
            raise UsageError(f'step {i}: ${unknown[0]} is bound by no earlier step (`"as": "{unknown[0]}"`)')
        if step.bind is not None:
            bound.add(step.bind)
        if step.fault in HEALS and (step.hold is not None or step.hold_name is not None):
            bound.add(guards.BACK)  # by its heal, which may come after a later step: then unbound there
    return [steps[i] for i in order]


#: A step's fields beyond its fault, target, hold and options (nemesis/guards.py).
MOVE_FIELDS = ("when", "within", "as")


def _with_moves(i: int, step: Step, raw: dict[str, Any]) -> Step:
    """The step with its guard and binding from the script; UsageError naming the first problem."""
    if (step.hold_name or step.hold is not None) and step.fault not in HEALS:
        raise UsageError(f"step {i}: {step.fault} is not held: nothing undoes it ('for' is for faults that stay)")
    if "within" in raw and "when" not in raw:
        raise UsageError(f"step {i}: 'within' bounds a guard: give 'when' too")
    if "when" in raw:
        try:
            guards.parse_guard(raw["when"])
            within = float(raw.get("within", guards.GUARD_WITHIN_S))
        except (TypeError, ValueError) as exc:
            raise UsageError(f"step {i}: {exc}") from None
        if within <= 0:
            raise UsageError(f"step {i}: 'within' must be > 0")
        step.when, step.within = str(raw["when"]).strip(), within
    if "as" in raw:
        if not isinstance(raw["as"], str) or not guards.NAME.match(raw["as"]):
            raise UsageError(f"step {i}: 'as' names a binding: a letter, then letters, digits or _")
        if step.options.get("shape") in ("cut", "quorum-leader") or step.fault in HEALS.values():
            raise UsageError(f"step {i}: only a step that aims at one side of nodes binds them ('as')")
        if raw["as"] == guards.BACK:
            raise UsageError(f"step {i}: ${guards.BACK} is bound by each heal (the nodes it brought back), not by 'as'")
        step.bind = raw["as"]
    return step


class Guide(Protocol):
    """What a step's guard, binding and named hold ask of the live run (nemesis/guards.py): the
    ScriptedSchedule's, over its cluster and nemesis."""

    def now(self) -> float:
        """Seconds since the script started."""
        ...

    def resolve(self, target: str) -> list[str]:
        """The aliases `target` names now (TargetError when it names nothing)."""
        ...

    def isr_size(self, key: str) -> int: ...

    def fenced(self) -> set[str]:
        """The brokers the cluster does not list as live now."""
        ...

    def emptied(self) -> set[str]:
        """The voters whose metadata log is emptied now (nemesis/guards.py)."""
        ...

    def unreached(self, step: Step, target: str, why: str) -> None:
        """Record that `step` did not act, and why (a guard not reached, an unbound name)."""
        ...


def play(
    steps: list[Step],
    wait_until: Callable[[float], bool],
    apply: Callable[..., dict],
    guide: Guide | None = None,
) -> bool:
    """Each step at its time (`at` seconds from the start), healed `for` seconds later by the fault
    that undoes it (nemesis/faults.py), on the nodes its apply returned; a step that failed is not
    healed. Steps may overlap: a step's heal waits on its own time while later steps start on
    theirs, every apply and heal in time order (a heal before an apply due at the same moment, so
    that a fault healed and the next one of its kind do not cross). `apply(fault, target,
    **options)` is Nemesis.run's signature; it is called from this one thread, one operation at a
    time, as the history wants of a process. `wait_until(t)` is False when the schedule was asked
    to stop first; then so is the result. The one loop of timed steps: `--nemesis-script`, the
    overlapping mix and scenario files all play their steps with it.

    With a `guide`, a step may also wait for its guard (`when`, up to `within` s; the heals due
    meanwhile happen on time), name earlier steps' nodes (`$NAME`, `A!$NAME`), bind its own
    (`as`), and be held from when it acted, or until the next step has acted (`for: next`; before
    it acts, when that step is a network fault too: one heal undoes both)."""
    HEAL_FIRST, APPLY = 0, 1
    due: list[tuple[float, int, int, dict[str, Any] | None]] = [(s.at, APPLY, i, None) for i, s in enumerate(steps)]
    heapq.heapify(due)
    bindings: dict[str, list[str]] = {}
    until_next: list[tuple[int, dict[str, Any]]] = []  # steps held until the next one acts

    def heal(i: int, applied: dict[str, Any]) -> None:
        healed = apply(HEALS[steps[i].fault], ",".join(applied.get("nodes", [])) or "random")
        if applied.get("nodes") and "error" not in (healed or {}):
            bindings[guards.BACK] = _brought_back(applied)

    def heals_due(t: float) -> bool:
        """Run the heals due by `t` (a guard's wait); False when asked to stop."""
        while due and due[0][1] == HEAL_FIRST and due[0][0] <= t:
            at, _, j, applied = heapq.heappop(due)
            if not wait_until(at):
                return False
            assert applied is not None
            heal(j, applied)
        return True

    while due:
        at, kind, i, applied = heapq.heappop(due)
        if not wait_until(at):
            return False
        step = steps[i]
        if kind == HEAL_FIRST:
            assert applied is not None
            heal(i, applied)
            continue
        target = step.target
        if guide is not None and (step.when or step.bind or guards.bound_names(step.target)):
            reached = _reach(step, at, guide, bindings, wait_until, heals_due)
            if reached is None:
                return False
            target, why = reached
            if why is not None:
                guide.unreached(step, target, why)
                continue
        network = HEALS.get(step.fault) == HEAL.name
        for j, held in [h for h in until_next if network and HEALS.get(steps[h[0]].fault) == HEAL.name]:
            heal(j, held)
            until_next.remove((j, held))
        value = apply(step.fault, target, **step.options)
        if step.bind is not None and "error" not in value:
            bindings[step.bind] = target.split(",")
        for j, held in until_next:
            heal(j, held)
        until_next.clear()
        if step.fault not in HEALS or "error" in value:
            continue
        if step.hold_name == guards.NEXT:
            until_next.append((i, value))
        elif step.hold is not None:
            start = guide.now() if guide is not None and step.when else step.at
            heapq.heappush(due, (start + step.hold, HEAL_FIRST, i, value))
    return True


def _brought_back(applied: dict[str, Any]) -> list[str]:
    """The nodes a heal of `applied` (a fault's `ok` value) brought back: the nodes it acted on,
    or for a partition the smaller side of its cut (the node a leader's replication cut or an
    isolation cut off, not the others whose rules held the cut; both sides when they are even)."""
    nodes = list(applied["nodes"])
    grudge: dict[str, list[str]] = applied.get("grudge") or {}
    if not grudge:
        return nodes
    widest = max(sorted(grudge), key=lambda n: len(grudge[n]))
    far = set(grudge[widest])
    near = set(grudge) - far
    if len(near) == len(far):
        return sorted(near | far)
    return sorted(near if len(near) < len(far) else far)


def _reach(
    step: Step,
    at: float,
    guide: Guide,
    bindings: dict[str, list[str]],
    wait_until: Callable[[float], bool],
    heals_due: Callable[[float], bool],
) -> tuple[str, str | None] | None:
    """(the step's target with its names put in, why it may not act or None), once its guard
    holds or its wait is over; None when the schedule was asked to stop."""
    try:
        target = guards.substitute(step.target, bindings)
    except guards.Unbound as exc:
        return step.target, str(exc)
    if step.when is not None:
        guard = guards.parse_guard(step.when)
        within = step.within if step.within is not None else guards.GUARD_WITHIN_S
        t = at
        while True:
            try:
                if guards.holds(guard, bindings, guide.isr_size, guide.resolve, guide.fenced, guide.emptied):
                    break
            except guards.Unbound as exc:
                return target, str(exc)
            except Exception:  # mid-fault a broker or the quorum may not answer: ask again
                pass
            if t - at >= within:
                return target, f"guard `{step.when}` not reached within {within:g} s"
            t = max(t + guards.POLL_S, guide.now())
            if not heals_due(t) or not wait_until(t):
                return None
    if step.bind is not None:
        try:
            target = ",".join(guide.resolve(target))
        except Exception as exc:  # recorded as the step's failure, as Nemesis.run records one
            return target, f"{type(exc).__name__}: {exc}"
    return target, None


def recorded_steps(nemesis: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The steps a run's config.json `nemesis` records (Step.describe: `hold` for `for`, every
    step option with its default), as a script's steps, each with its own fault's options only: a
    script's, or an overlapping mix's drawn timeline. None: a serial mix, which draws as it goes
    (replayed with `run --seed`), or a scenario."""
    raw = nemesis.get("script", nemesis.get("steps"))
    if not isinstance(raw, list):
        return None
    steps = []
    for step in raw:
        if not isinstance(step, dict):
            return None
        own = BY_NAME[step["fault"]].OPTIONS if step.get("fault") in BY_NAME else {}
        kept = {k: v for k, v in step.items() if k in ("at", "fault", "target", *MOVE_FIELDS) or k in own}
        steps.append({**kept, **({"for": step["hold"]} if step.get("hold") is not None else {})})
    return steps


def read_script(path: Path) -> tuple[list[Step], dict[str, Any] | None]:
    """A script's steps from a JSON file: a list of steps, or a run's config.json (then also its
    recorded `nemesis`, which says whether they were an overlapping mix's)."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise UsageError(f"cannot read nemesis script {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"nemesis script {path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    if isinstance(data, dict) and isinstance(data.get("nemesis"), dict):
        steps = recorded_steps(data["nemesis"])
        if steps is None:
            raise UsageError(
                f"{path}: its run drew its faults as it went (the serial mix) or played a scenario; "
                "replay it with `run --seed` and the same options"
            )
        return parse_script(steps), data["nemesis"]
    return parse_script(data), None


def load_script(path: Path) -> list[Step]:
    return read_script(path)[0]


class ScheduleCrash(KafkaChaosError):
    """The fault schedule itself died: the run did not get the faults it asked for."""


class Schedule:
    """Runs in a thread beside the workload; stop_and_heal() ends it and heals everything."""

    def __init__(self, nemesis: Nemesis) -> None:
        self.nemesis = nemesis
        self.stop = threading.Event()
        self.finished = threading.Event()  # set by schedules that end before the workload does
        self.thread = threading.Thread(target=self._guarded, name="nemesis", daemon=True)
        self.started = 0.0
        self.crashed: Exception | None = None
        #: Nodes that end by themselves meanwhile, recorded as the nemesis's `exit`.
        self.exits = ExitWatch(nemesis)

    def start(self) -> Schedule:
        self.started = time.monotonic()
        self.exits.start()
        self.thread.start()
        return self

    def _guarded(self) -> None:
        try:
            self.loop()
        except Exception as exc:  # kept for stop_and_heal, which heals, then raises it
            self.crashed = exc
            self.finished.set()  # no more faults will come: the workload phase ends now

    def loop(self) -> None:
        raise NotImplementedError

    def report(self) -> dict | None:
        """What a schedule with a story to tell did (a scenario's: scenario.json); None: nothing
        beyond the nemesis operations in the history."""
        return None

    def _sleep_until(self, t: float) -> bool:
        """False when asked to stop first."""
        return not self.stop.wait(max(0.0, t - time.monotonic()))

    def stop_and_heal(self) -> None:
        """Stop the schedule and heal every fault; then, once, raise ScheduleCrash if it crashed."""
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=120)
        try:
            self.nemesis.heal_all()
        finally:
            self.exits.stop()
        crashed, self.crashed = self.crashed, None
        if crashed is not None:
            raise ScheduleCrash(f"the nemesis schedule crashed: {type(crashed).__name__}: {crashed}") from crashed


#: A random mix's pools of targets for the entries that name none: the target each draws from.
TARGET_POOLS = {"any": "random", "brokers": "random-broker", "controllers": "random-controller"}


def check_pool(pool: str) -> None:
    if pool not in TARGET_POOLS:
        raise UsageError(f"unknown nemesis target pool {pool!r}: expected one of {', '.join(TARGET_POOLS)}")


class RandomSchedule(Schedule):
    def __init__(
        self,
        nemesis: Nemesis,
        faults: list[str],
        interval: float,
        seed: int | None = None,
        start: float | None = None,
        targets: str = "any",
    ) -> None:
        super().__init__(nemesis)
        check_pool(targets)
        self.faults, self.interval, self.rng = faults, interval, stream(seed, "schedule")
        self.first_quiet = interval if start is None else start
        self.pool = targets

    def _draw(self, fault: str, target: str) -> dict[str, Any]:
        """The fault's options; under the controllers pool an untargeted partition is aimed at the quorum."""
        if self.pool == "controllers" and fault == PARTITION.name and not target:
            return {"shape": self.rng.choice(["isolate", "quorum-leader"])}
        return BY_NAME[fault].draw(self.rng)

    def loop(self) -> None:
        bag: list[str] = []
        quiet = self.first_quiet
        while self._sleep_until(time.monotonic() + quiet):  # quiet period
            quiet = self.interval
            if not bag:  # every fault once per round, in a random order
                bag = self.rng.sample(self.faults, len(self.faults))
            fault, _, target = bag.pop().partition("@")
            self.nemesis.run(fault, target or TARGET_POOLS[self.pool], **self._draw(fault, target))
            if fault in HEALS:
                held = self._sleep_until(time.monotonic() + self.interval)
                self.nemesis.run(HEALS[fault], "random")
                if not held:
                    return


def with_holds(steps: list[Step], nemesis: Nemesis) -> list[Step]:
    """The steps with each hold named for a timeout in seconds, from the cluster's settings."""
    named = [s for s in steps if s.hold_name in guards.TIMEOUT_HOLDS]
    config = nemesis.cluster.config if named else {}
    return [replace(s, hold=guards.hold_seconds(s.hold_name, config)) if s in named else s for s in steps]


@dataclass
class LiveGuide:
    """`play`'s Guide over a live cluster, through the nemesis (its targets' random stream, its
    history); `now` is the script's clock."""

    nemesis: Nemesis
    now: Callable[[], float]

    def resolve(self, target: str) -> list[str]:
        return [n.alias for n in targets.resolve(self.nemesis.cluster, target, self.nemesis.rng)]

    # A guard's questions go first to brokers no fault holds down or paused.
    def isr_size(self, key: str) -> int:
        return len(targets.partition_of(self.nemesis.cluster, key, self.nemesis.out_of_reach())["isr_nodes"])

    def fenced(self) -> set[str]:
        return targets.unlisted_brokers(self.nemesis.cluster, self.nemesis.out_of_reach())

    def emptied(self) -> set[str]:
        return targets.emptied_voters(self.nemesis.cluster, guards.EMPTIED_SHARE)

    def unreached(self, step: Step, target: str, why: str) -> None:
        self.nemesis.unreached(step.fault, target, why, **step.options)


class ScriptedSchedule(Schedule):
    """A script's steps, played with the live cluster as their guide (guards, bindings, holds by
    name resolved from the cluster's settings when the run starts: nemesis/guards.py)."""

    def __init__(self, nemesis: Nemesis, steps: list[Step]) -> None:
        super().__init__(nemesis)
        self.steps = with_holds(steps, nemesis)

    def loop(self) -> None:
        guide = LiveGuide(self.nemesis, lambda: time.monotonic() - self.started)
        play(self.steps, lambda at: self._sleep_until(self.started + at), self.nemesis.run, guide)
