"""KRaft's facts that the evidence's writers (harness/, runs/) and its judges (checkers/) must
agree on, owned here, below both: the quorum kinds, Kafka's defaults of the timing settings the
control-plane rules are held to, and the slack and windows of ../shared/anomalies.md
("Control plane") that decide how long a run must keep sampling.
"""

from __future__ import annotations

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
