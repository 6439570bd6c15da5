"""Nodes whose process ended when no fault ended it: recorded in the history as the nemesis's
`exit`, a node taken down until `start`.

Why: a node can end itself. A static-quorum voter that led, wiped and started again empty, ends
on the first Vote response naming it leader of its old epoch (IllegalStateException in the raft
IO thread, docs/measurements.md, 2026-12-07). A history that does not say so leaves the checker
counting a dead node as up: a majority where none could form, a broker that "should" have been
fenced. The watch makes the history say what happened, as a fault would have: every reader of
fault windows then knows the node was down, with no rule of its own.

One Docker call lists the cluster's containers (by the run's label) every `PERIOD_S`. A node
found stopped that no fault owes (`Nemesis.open`: a kill or a stop makes `start` owe it) is
checked again under the nemesis's lock, so that a fault in progress (a wipe stops and starts its
node within its operation) is never taken for an exit; then recorded, and booked as `start`'s
to undo, so that the next `start` and the final heal start it again.
"""

from __future__ import annotations

import threading
from typing import Any

from kafka_chaos.harness.cleanup import NODE, RUN
from kafka_chaos.harness.engine import docker_client
from kafka_chaos.nemesis.core import Nemesis
from kafka_chaos.nemesis.faults import START
from kafka_chaos.nemesis.kill import STOPPED

#: How often the cluster's containers are listed (s): an exit is in the history within this, plus
#: the nemesis's operation in progress, if any.
PERIOD_S = 0.5


class ExitWatch:
    """Started and stopped with the schedule (nemesis/schedule.py); the constructor records,
    `start()` acts."""

    def __init__(self, nemesis: Nemesis, period_s: float = PERIOD_S) -> None:
        self.nemesis = nemesis
        self.period_s = period_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: alias -> exits recorded (for the run's progress and the tests)
        self.exits: dict[str, int] = {}

    def start(self) -> ExitWatch:
        self._thread = threading.Thread(target=self._loop, name="exit-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        try:
            client = docker_client(start=False)
        except Exception:  # no engine to ask: the run's faults fail on their own, said there
            return
        while not self._stop.wait(self.period_s):
            try:
                self.poll(self._states(client))
            except Exception:  # an engine hiccup: the next period asks again
                continue

    def _states(self, client: Any) -> dict[str, dict[str, Any]]:
        """alias -> its container's State, for the cluster's nodes."""
        run_id = self.nemesis.cluster.run_id
        listed = client.containers.list(all=True, filters={"label": f"{RUN}={run_id}"}, ignore_removed=True)
        aliases = {n.alias for n in self.nemesis.cluster.nodes}
        out = {}
        for c in listed:
            alias = c.labels.get(NODE)
            if alias in aliases:
                out[alias] = {"status": c.status, **(c.attrs.get("State") or {})}
        return out

    def poll(self, states: dict[str, dict[str, Any]]) -> list[str]:
        """Record the nodes `states` shows stopped that no fault owes; the aliases recorded."""
        recorded = []
        for alias, state in sorted(states.items()):
            if state["status"] not in STOPPED or alias in self.nemesis.open.get(START.name, ()):
                continue
            detail = {"exit_code": state.get("ExitCode"), "finished_at": state.get("FinishedAt")}
            if self.nemesis.exited(alias, lambda a: self.nemesis.cluster.node(a).state() in STOPPED, detail):
                self.exits[alias] = self.exits.get(alias, 0) + 1
                recorded.append(alias)
        return recorded
