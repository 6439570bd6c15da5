"""KRaft's facts that the evidence's writers (harness/, runs/) and its judges (checkers/) must
agree on, owned here, below both: the quorum kinds, Kafka's defaults of the timing settings the
control-plane rules are held to, and the slack and windows of ../shared/anomalies.md
("Control plane") that decide how long a run must keep sampling.
"""

from __future__ import annotations

from collections.abc import Iterable

#: How the controllers' quorum is formed: voters fixed in every node's configuration (static), or
#: recorded in the metadata log itself (dynamic, KIP-853).
STATIC, DYNAMIC = "static", "dynamic"
QUORUMS = (STATIC, DYNAMIC)

#: Kafka's own defaults of the timing settings the control-plane rules are held to (a run's own
#: values, these under its broker config, go into control-plane/nodes.json).
KAFKA_TIMING_DEFAULTS = {
    "controller.quorum.fetch.timeout.ms": 2000,
    "broker.session.timeout.ms": 9000,
    "replica.lag.time.max.ms": 30000,
    "controller.quorum.election.timeout.ms": 1000,
    "broker.heartbeat.interval.ms": 2000,
}

#: The slack S of every timing bound: sampling, and a loaded machine (../shared/anomalies.md).
SLACK_S = 5.0

#: `stuck-broker-metadata`: how long a broker that is up may stay behind the quorum's high
#: watermark, fetching nothing new, after the last fault was undone (before the slack S).
STUCK_S = 30.0


def stuck_window_s() -> float:
    """How long after the last heal the evidence must go on for `stuck-broker-metadata` to be
    checked: its bound, 30 s + S."""
    return STUCK_S + SLACK_S


def caught_up(rows: Iterable[tuple[int | None, int | None]]) -> bool:
    """Whether a broker's replication rows since the last heal, in time order (its log end offset
    and the quorum's high watermark in each DescribeQuorum answer), show it fetching after the
    heal: a row where it is not behind the high watermark, or where its log end offset moved from
    the first row's. `stuck-broker-metadata` measures a broker that stays behind from the heal on,
    so once every broker has caught up the rule's answer over its window is known: a run stops
    sampling then (harness/control_plane.py), and the rule is checked on what it sampled
    (checkers/control_plane/rules.py). Rows without both offsets say nothing."""
    first: int | None = None
    for leo, hw in rows:
        if leo is None or hw is None or leo < 0:
            continue
        if leo >= hw:
            return True
        if first is None:
            first = leo
        elif leo != first:
            return True
    return False
