"""What a chaos test asks of the traffic between faults (checkers/liveness.py's measure)."""


def assert_traffic_between_faults(result, floor: float) -> None:
    """Operations and writes between faults keep at least `floor` of their rate before the first
    fault. With no ok operation before it (a client still starting when it came, as a Java group
    once was in CI's load) there is nothing to compare with: then they must simply flow."""
    live = result.liveness
    if live["ops_per_s"]["before_faults"] is None:
        assert live["ops_per_s"]["between_faults"] and live["writes_per_s"]["between_faults"], live
        return
    kept = {kind: ratios["between_faults"] or 0 for kind, ratios in live["ratios"].items()}
    assert kept["ops_per_s"] >= floor and kept["writes_per_s"] >= floor, live
