"""The nemesis: faults applied to the brokers of a live cluster, each recorded in the history.

One module per fault kind (kill.py, pause.py, wipe.py, unflushed.py, partition.py); targets.py
resolves targets from the live cluster; core.py applies, records and heals; schedule.py
decides when.
"""
