"""Workloads: clients that produce and consume against a real cluster while recording the history.

They write the history (history/file.py) and nothing else; they never import checkers/.
"""
