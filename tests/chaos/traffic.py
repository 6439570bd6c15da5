"""What a chaos test asks of the traffic between faults (checkers/measures/liveness.py's measure)."""

#: Between faults a chaos test's workload keeps at least this share of its rate before the first
#: fault: it was not wedged (issue 13's wedged producer fell to under 1 %). How much of its rate it
#: keeps is a speed goal, measured by bench/workload_liveness.py (0.8), never a test's: the rate
#: before the first fault is a second or two of traffic, and the machine's load moves the ratio.
NOT_WEDGED = 0.2


def assert_traffic_between_faults(result, floor: float = NOT_WEDGED) -> None:
    """Operations and writes between faults keep at least `floor` of their rate before the first
    fault. Where a kind had no ok operation before it (a client still starting when it came, as a
    Java group was twice in CI's load: no rate, or a rate of 0 over the 0.8 s before a fault at
    5 s) there is nothing to compare with: then that kind must simply flow between faults."""
    live = result.liveness
    for kind in ("ops_per_s", "writes_per_s"):
        if not live[kind]["before_faults"]:
            assert live[kind]["between_faults"], (kind, live)
        else:
            assert (live["ratios"][kind]["between_faults"] or 0) >= floor, (kind, live)


#: The least a failover control (acks-all-failover) must acknowledge in its workload phase, about
#: two sends per second of its kills (what each client acknowledges: docs/measurements.md, 2026-11-26).
CONTROL_MIN_ACKED = 75


def assert_control_wrote(result) -> None:
    """A control's VALID counts only if it wrote through the kills: enough acknowledged sends."""
    acked = result.workload["counts"].get("send:ok", 0)
    assert acked >= CONTROL_MIN_ACKED, (acked, result.liveness)
