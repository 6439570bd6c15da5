"""A share group (KIP-932; ../shared/anomalies.md, "Share groups"): each key's share-group view
(view.py), which the data plane's per-key pass judges (checkers/data_plane/share_rules.py), with
what the whole history knows of the run's processes (context.py) and the partitions' leader
changes (leaders.py), and results.json's summary of the deliveries (summary.py)."""
