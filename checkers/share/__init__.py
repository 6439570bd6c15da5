"""A share group's rules (KIP-932; ../shared/anomalies.md, "Share groups"): what a member was
delivered, held and acknowledged, per key on Spark (rules.py), with what the whole history knows
of the run's processes and the partitions' leader changes (context.py, leaders.py)."""
