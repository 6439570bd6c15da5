"""The control plane (KRaft) checked, and nothing else: the eleven rules of ../shared/anomalies.md
("Control plane") as rows of rules.py, their finders (metadata_rules.py over the replayed metadata
logs, quorum_rules.py over each node's quorum view, fault_timing.py over the nemesis's fault
windows of node_faults.py), judge.py that reads the evidence into Spark and runs the rows, and
causes.py that says an example in one sentence."""
