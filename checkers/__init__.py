"""Checkers: read a history file (../shared/history-format.md) and name every anomaly of
../shared/anomalies.md. They run on Spark through PySpark and need nothing but the history file:
no cluster, no harness. `check.check_history` is the entry point; `kafka-chaos check` calls it.
"""
