"""`kafka-chaos bisect SCENARIO --good V --bad V`: the first released version, after a bad one
(the scenario's loss seen) and up to a good one (not seen), where the loss is gone.

Releases come from Maven Central's list of Kafka versions (the same place the broker jars come
from), restricted to MAJOR.MINOR.PATCH between the two. Each probe runs the scenario `--runs`
times; a version is bad when any run shows the loss. The search assumes one fix: bad before it,
good from it on. It checks the ends first, so a wrong assumption is reported, not hidden; a
probe whose runs neither lost writes nor went as scripted stops the search (no evidence either way).
"""

from __future__ import annotations

import re
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.versions import KafkaVersion
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.runs.result import RunResult
from kafka_chaos.runs.scenario import run_once, scenario_spec
from kafka_chaos.scenarios.base import Scenario

METADATA_URL = "https://repo1.maven.org/maven2/org/apache/kafka/kafka_2.13/maven-metadata.xml"


def released_versions(xml: str | None = None) -> list[KafkaVersion]:
    """Every MAJOR.MINOR.PATCH release listed by Maven Central (no release candidates), sorted."""
    if xml is None:
        with urllib.request.urlopen(METADATA_URL, timeout=30) as response:  # a fixed https URL
            xml = response.read().decode()
    found = {tuple(map(int, m)) for m in re.findall(r"<version>(\d+)\.(\d+)\.(\d+)</version>", xml)}
    return sorted(KafkaVersion(*v) for v in found)


class NotSetUp(Exception):
    """A probe's runs neither lost writes nor went as scripted."""


@dataclass
class Bisection:
    probes: dict[str, list[RunResult]] = field(default_factory=dict)
    first_good: str | None = None
    last_bad: str | None = None
    problem: str | None = None


def bisect(
    scenario: Scenario,
    good: str,
    bad: str,
    runs: int,
    store: Path,
    reporter: Reporter = print,
    metadata_version: str | None = None,
    versions: list[KafkaVersion] | None = None,
) -> Bisection:
    good_v, bad_v = KafkaVersion.parse(good), KafkaVersion.parse(bad)
    if not bad_v < good_v:
        raise UsageError(f"--bad {bad} must be older than --good {good}: bisect looks for a fix")
    if runs < 1:
        raise UsageError(f"--runs must be at least 1, got {runs}")
    releases = [v for v in (versions or released_versions()) if bad_v <= v <= good_v]
    if bad_v not in releases or good_v not in releases:
        raise UsageError(f"{bad} and {good} must both be released versions")
    result = Bisection()

    def is_bad(v: KafkaVersion) -> bool:
        outcomes = [run_once(scenario_spec(scenario, str(v), store, metadata_version), reporter) for _ in range(runs)]
        result.probes[str(v)] = outcomes
        lost = sum(o.reproduced for o in outcomes)
        if not lost and any(o.error or o.script != "completed" for o in outcomes):
            # No loss from a run whose fault was never set up says nothing: not "good".
            why = next(o.error or o.script_error or o.script for o in outcomes if o.error or o.script != "completed")
            raise NotSetUp(f"the scenario could not be set up on {v}: {why}")
        reporter(f"bisect: Kafka {v}: loss in {lost} of {runs} run(s): {'bad' if lost else 'good'}")
        return lost > 0

    try:
        if not is_bad(bad_v):
            result.problem = f"the bad end {bad} did not show the loss in {runs} run(s)"
            return result
        if is_bad(good_v):
            result.problem = f"the good end {good} showed the loss"
            return result
        lo, hi = 0, len(releases) - 1  # releases[lo] bad, releases[hi] good
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if is_bad(releases[mid]):
                lo = mid
            else:
                hi = mid
    except NotSetUp as exc:
        result.problem = str(exc)
        return result
    result.last_bad, result.first_good = str(releases[lo]), str(releases[hi])
    return result
