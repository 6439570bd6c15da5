"""The nemesis: faults applied to the brokers of a live cluster, each recorded in the history.

Each fault kind is one object (fault.py): its targets, its action, what undoes it, its options
and how a random schedule draws them. faults.py is the table of them (with each one's docs line
and colour); the actions are in a module per kind (kill.py, stop.py, pause.py, wipe.py,
unflushed.py, partition.py, stall.py); targets.py resolves targets from the live cluster;
core.py records each fault and keeps what is open until healed; schedule.py decides when.
"""
