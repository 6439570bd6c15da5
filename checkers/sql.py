"""Small helpers for the checker's Spark SQL text.

The checker writes its Spark expressions as SQL text rather than PySpark column objects where it
builds many of them: every column object is a round trip to the JVM, and a check's plan used to
be several thousand (about a second of a small check). This module imports nothing from pyspark,
so modules that must load without Spark (checkers/measures/liveness.py) can use it.
"""

from __future__ import annotations

from collections.abc import Iterable


def literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def in_list(values: Iterable[str]) -> str:
    """`('a', 'b')`: the right side of a SQL `IN`."""
    return "(" + ", ".join(literal(v) for v in values) + ")"


def double(x: float) -> str:
    """A SQL double equal to the Python float `x` (its shortest text, cast: exact both ways)."""
    return f"CAST('{float(x)!r}' AS DOUBLE)"
