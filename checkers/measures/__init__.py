"""What a run's verdict stands on, reported beside it and never an error: the traffic kept before,
in and between faults (liveness.py, over the fault windows of faults.py), and how long a group's
members held the keys (group_coverage.py)."""
