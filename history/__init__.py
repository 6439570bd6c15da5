"""The history contract, the bottom floor: the event and operation names of
../shared/history-format.md, the one writer and reader of a history file, and the run directory
that holds it. Workloads and the nemesis write through it; the checkers, the runs and the front
doors read through it; it imports nothing of the project's own.
"""
