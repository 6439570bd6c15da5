"""Transactions: the dependency graph of `txn` operations (ww, wr, process and realtime edges:
checkers/edge_kinds.py) and its cycles, G0 to G1c-realtime."""
