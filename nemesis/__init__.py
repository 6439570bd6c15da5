"""The nemesis: faults applied to the brokers of a live cluster, each recorded in the history.

faults.py holds one record per fault kind (what it does, what undoes it, whether random
schedules pick it, its docs line); one module per fault kind does it (kill.py, stop.py,
pause.py, wipe.py, unflushed.py, partition.py); targets.py resolves targets from the live
cluster; core.py applies, records and heals; schedule.py decides when.
"""
