"""What the nemesis does during a run, decided before the run starts: a random mix of faults (one
at a time, or overlapping: `mix`), a script of timed steps, or a schedule of the caller's own (a
scenario's script, scenarios/).

A plan is part of a run's description (runs/spec.py); it makes its schedule only once the run
has a nemesis to drive (a started cluster and an open history).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from kafka_chaos.harness.config import FAULT_DETECTION, NodeSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis.bounds import MAX_AT_ONCE
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.faults import COLOURS
from kafka_chaos.nemesis.overlap import OverlapSchedule, draw_overlapping, families, pool_roles
from kafka_chaos.nemesis.roles import roles_for
from kafka_chaos.nemesis.schedule import (
    RandomSchedule,
    Schedule,
    ScriptedSchedule,
    Step,
    check_pool,
    parse_fault_list,
    parse_script,
    read_script,
)
from kafka_chaos.nemesis.streams import stream
from kafka_chaos.nemesis.targets import check_target

#: The random mixes: one fault at a time (the default), or each family on its own clock (nemesis/overlap.py).
SERIAL, OVERLAP = "serial", "overlap"
MIXES = (SERIAL, OVERLAP)


@dataclass
class NemesisPlan:
    """A random mix (`faults` every `interval` s), a script, or a schedule of its own (`custom`)."""

    faults: list[str] = field(default_factory=list)
    interval: float = 10.0
    #: Quiet seconds before a random mix's first fault; None: `interval`. The liveness baseline
    #: (checkers/measures/liveness.py) is the second half of this stretch: a longer start measures it on
    #: traffic past its warm-up and over more than a few seconds of it.
    start: float | None = None
    script: list[Step] | None = None
    #: A schedule of its own (a scenario's script, scenarios/), built on the run's nemesis.
    custom: Callable[[Nemesis], Schedule] | None = None
    label: str | None = None
    #: Where a random mix's entries that name no target aim (nemesis/schedule.py TARGET_POOLS).
    targets: str = "any"
    #: How a random mix puts its faults in place: `serial`, one at a time (nemesis/schedule.py
    #: RandomSchedule), or `overlap`, each family on its own clock (nemesis/overlap.py).
    mix: str = SERIAL
    #: An overlapping mix's timeline, drawn from the run's seed before the run (`drawn`) or read
    #: back from a run's config.json; None until then.
    timeline: list[Step] | None = None

    def drawn(
        self,
        seed: int | None,
        *,
        key: str,
        workload: str,
        grouped: bool,
        duration: float,
        nodes: int | None = None,
        shares: bool = False,
    ) -> NemesisPlan:
        """This plan with its timeline drawn, for an overlapping mix that has none yet (the same plan
        otherwise): from the seed's own stream, aimed at the roles a run of `workload` has (`key`:
        its first partition), every heal within `duration` s, at most `nodes` disk faults."""
        if self.mix != OVERLAP or self.timeline is not None or not self.faults:
            return self
        roles = pool_roles(roles_for(workload, grouped, shares), self.targets)
        timeline = draw_overlapping(
            stream(seed, "overlap"),
            families(self.faults),
            roles,
            duration,
            key=key,
            interval=self.interval,
            start=self.start,
            nodes=nodes,
        )
        return replace(self, timeline=timeline)

    def schedule(self, nemesis: Nemesis, seed: int | None) -> Schedule | None:
        if self.custom is not None:
            return self.custom(nemesis)
        if self.script is not None:
            return ScriptedSchedule(nemesis, self.script)
        if self.mix == OVERLAP:
            if self.timeline is None:
                raise ValueError("an overlapping mix is drawn before its run starts (NemesisPlan.drawn)")
            return OverlapSchedule(nemesis, self.timeline)
        if self.faults:
            return RandomSchedule(nemesis, self.faults, self.interval, seed, start=self.start, targets=self.targets)
        return None

    def check_targets(self, nodes: list[NodeSpec]) -> None:
        """UsageError for a fault aimed at a target that names nothing in a cluster of `nodes`."""
        aimed = [f.partition("@")[2] for f in self.faults if "@" in f]
        aimed += [step.target for step in [*(self.script or []), *(self.timeline or [])]]
        for target in aimed:
            check_target(target, nodes)

    def fault_names(self) -> list[str]:
        """The faults this plan may apply (a scenario's own schedule names none beforehand)."""
        names = [f.partition("@")[0] for f in self.faults]
        return names + [step.fault for step in [*(self.script or []), *(self.timeline or [])]]

    def broker_defaults(self) -> dict[str, str]:
        """Broker settings this plan needs unless the user set them: fast failure detection
        (harness/config.py) for random and scripted faults; a scenario brings its own."""
        return {} if self.custom is not None else dict(FAULT_DETECTION)

    def describe(self) -> dict[str, Any]:
        """config.json's `nemesis`: the plan, and the colours the report shades its faults with."""
        if self.custom is not None:
            plan: dict[str, Any] = {"scenario": self.label}
        elif self.script is not None:
            plan = {"script": [step.describe() for step in self.script]}
        elif self.faults:
            plan = {"faults": self.faults, "interval": self.interval}
            if self.start is not None:
                plan["start"] = self.start
            if self.targets != "any":
                plan["targets"] = self.targets
            if self.mix == OVERLAP:  # a serial mix writes none of these: config.json as it was
                plan |= {"mix": OVERLAP, "families": families(self.faults), "max_at_once": MAX_AT_ONCE}
                if self.timeline is not None:
                    plan["steps"] = [step.describe() for step in self.timeline]
        else:
            return {}
        return {**plan, "colours": dict(COLOURS)}

    def short(self) -> str:
        """One word for a table or a test's name: the scenario, "script", or the fault list (after
        `overlap:` for an overlapping mix)."""
        if self.custom is not None:
            return f"scenario:{self.label}"
        if self.script is not None:
            return "script"
        return (f"{OVERLAP}:" if self.mix == OVERLAP else "") + ",".join(self.faults) or "none"


def nemesis_plan(
    faults: str | list[str] | None,
    interval: float,
    script: list[dict] | str | Path | None,
    start: float | None = None,
    targets: str = "any",
    mix: str = SERIAL,
) -> NemesisPlan | None:
    """A run's nemesis from its options (the command line's, chaos_run's): faults mixed at random
    every `interval` s (the first after `start` s of quiet, by default `interval`) on the `targets`
    pool, one at a time or overlapping (`mix`), or a script (a JSON file, a run's config.json, or
    decoded steps); None: no nemesis. A run's config.json of an overlapping mix plays its recorded
    timeline as that mix again (its disk guard included)."""
    if faults and script is not None:
        raise UsageError("a fault list (--nemesis) and a script (--nemesis-script) exclude each other")
    if not interval > 0:
        raise UsageError(f"the nemesis interval must be greater than 0, got {interval:g}")
    if start is not None:
        if not faults:
            raise UsageError("--nemesis-start delays a random fault list (--nemesis); a script times its own steps")
        if not start >= 0:
            raise UsageError(f"the nemesis start must be 0 or more seconds, got {start:g}")
    check_pool(targets)
    if targets != "any" and not faults:
        raise UsageError("--nemesis-targets picks the targets of a random fault list (--nemesis)")
    if mix not in MIXES:
        raise UsageError(f"unknown nemesis mix {mix!r}: expected one of {', '.join(MIXES)}")
    if mix != SERIAL and not faults:
        raise UsageError("--nemesis-mix mixes a random fault list (--nemesis); a script times its own steps")
    if script is not None:
        if isinstance(script, list):
            return NemesisPlan(script=parse_script(script))
        steps, recorded = read_script(Path(script))
        if recorded is not None and recorded.get("mix") == OVERLAP:
            return NemesisPlan(
                faults=parse_fault_list(",".join(recorded.get("faults") or [])),
                interval=float(recorded.get("interval", interval)),
                start=recorded.get("start"),
                targets=str(recorded.get("targets", "any")),
                mix=OVERLAP,
                timeline=steps,
            )
        return NemesisPlan(script=steps)
    if faults:
        return NemesisPlan(
            faults=parse_fault_list(faults if isinstance(faults, str) else ",".join(faults)),
            interval=interval,
            start=start,
            targets=targets,
            mix=mix,
        )
    return None
