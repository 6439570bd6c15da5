"""Runs: what puts a cluster, a workload, a nemesis and the checker together.

run.py runs one workload with one nemesis plan into a run directory; chaos.py is the one-call
chaos run the pytest plugin uses; scenario.py runs one scenario of the library against one
version; reproduce.py and bisect.py run scenarios over many versions. Everything below this
layer (checkers, harness, workloads, nemesis, scenarios) knows nothing of it.
"""
