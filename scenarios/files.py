"""A scenario from a user's file, to replay an incident: YAML or JSON of the same parts as a
library scenario, or a Python file that defines `SCENARIO` (a scenarios.base.Scenario).

    name: orders-outage-2026-10
    story: Leader of orders/3 lost its disk while the controller was failing over.
    cluster: {controllers: 1, brokers: 3, metadata_version: 3.4-IV0,
              config: {replica.lag.time.max.ms: "5000"}}   # tiered: true for remote-* faults
    workload: {keys: 1, replication_factor: 3, min_insync_replicas: 2, time_limit: 120}
    expect: loss            # or safe; what a correct Kafka should do here
    steps:                  # as --nemesis-script (docs/nemesis.md): timed, on live targets
      - {at: 5, fault: partition, shape: cut, target: "leader:chaos/0|controller", for: 20}
      - {at: 10, fault: wipe, target: "follower:chaos/0"}
      - {at: 40, fault: kill, target: "leader:chaos/0", for: 15}

The steps run on the history's clock from the start of the workload; the workload phase
ends 10 s after the last step (and its `for`) unless `workload.time_limit` ends it sooner.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.nemesis.faults import check_tiered
from kafka_chaos.nemesis.schedule import LiveGuide, Step, parse_script, play, with_holds
from kafka_chaos.scenarios.base import LOSS, SAFE, Scenario
from kafka_chaos.scenarios.script import Script
from kafka_chaos.workloads.options import WorkloadOptions

FIELDS = {"name", "story", "cluster", "workload", "expect", "steps"}
CLUSTER_FIELDS = {"controllers", "brokers", "config", "metadata_version", "tiered"}
TAIL_S = 10.0


def steps_script(steps: list[Step]):
    """A script that applies timed steps, healing each after its `for`."""

    def script(s: Script) -> None:
        def wait_until(at: float) -> bool:
            s.sleep(max(0.0, at - s.elapsed()))  # raises when the run stops the script
            return True

        play(with_holds(steps, s.nemesis), wait_until, s.fault, LiveGuide(s.nemesis, s.elapsed))
        s.sleep(TAIL_S)

    return script


def from_dict(data: Any, origin: str) -> Scenario:
    """A Scenario from decoded YAML/JSON; UsageError naming the first problem."""
    if not isinstance(data, dict):
        raise UsageError(f"{origin}: a scenario file holds a mapping (name, cluster, workload, steps)")
    unknown = set(data) - FIELDS
    if unknown:
        raise UsageError(
            f"{origin}: unknown field(s) {', '.join(sorted(unknown))}; expected {', '.join(sorted(FIELDS))}"
        )
    if "steps" not in data:
        raise UsageError(f"{origin}: a scenario needs 'steps' (timed faults)")
    cluster = data.get("cluster") or {}
    if not isinstance(cluster, dict) or set(cluster) - CLUSTER_FIELDS:
        raise UsageError(f"{origin}: 'cluster' takes {', '.join(sorted(CLUSTER_FIELDS))}")
    workload = data.get("workload") or {}
    known = set(WorkloadOptions.__dataclass_fields__)
    if not isinstance(workload, dict) or set(workload) - known:
        bad = sorted(set(workload) - known) if isinstance(workload, dict) else workload
        raise UsageError(f"{origin}: unknown workload option(s) {bad}")
    try:
        WorkloadOptions(**workload).validate()
    except TypeError as exc:
        raise UsageError(f"{origin}: workload: {exc}") from None
    expect = data.get("expect", LOSS)
    if expect not in (LOSS, SAFE):
        raise UsageError(f"{origin}: 'expect' is loss or safe, not {expect!r}")
    steps = parse_script(data["steps"])
    tiered = cluster.get("tiered", False)
    if not isinstance(tiered, bool):
        raise UsageError(f"{origin}: 'cluster.tiered' is true or false, not {tiered!r}")
    check_tiered((st.fault for st in steps), tiered)
    end = max((st.at + (st.hold or 0) for st in steps), default=0.0)
    workload = {"time_limit": end + TAIL_S + 30.0, **workload}
    return Scenario(
        name=str(data.get("name") or Path(origin).stem),
        story=str(data.get("story") or ""),
        script=steps_script(steps),
        controllers=int(cluster.get("controllers", 0)),
        brokers=int(cluster.get("brokers", 3)),
        broker_config={str(k): str(v) for k, v in (cluster.get("config") or {}).items()},
        workload=workload,
        metadata_version=cluster.get("metadata_version"),
        tiered=tiered,
        expect=lambda version, mv: expect,
    )


def load(path: Path) -> Scenario:
    if not path.is_file():
        raise UsageError(f"no scenario file {path}")
    if path.suffix == ".py":
        spec = importlib.util.spec_from_file_location(f"kafka_chaos_user_scenario_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        try:
            spec.loader.exec_module(module)  # type: ignore[union-attr]
        except Exception as exc:  # the user's code: one line, exit 2
            raise UsageError(f"{path}: {type(exc).__name__}: {exc}") from None
        scenario = getattr(module, "SCENARIO", None)
        if not isinstance(scenario, Scenario):
            raise UsageError(f"{path}: defines no SCENARIO (a scenarios.base.Scenario)")
        return scenario
    text = path.read_text()
    try:
        if path.suffix == ".json":
            data = json.loads(text)
        else:
            import yaml

            data = yaml.safe_load(text)
    except (ValueError, Exception) as exc:  # yaml's errors: one line, exit 2
        raise UsageError(f"{path}: not valid {path.suffix.lstrip('.').upper()}: {str(exc).splitlines()[0]}") from None
    return from_dict(data, str(path))
