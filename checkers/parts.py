"""Many small results in one Spark action.

Each Spark action pays a fixed cost (planning, scheduling, a round trip through the gateway)
that dwarfs a small history's data: the checker's stats, liveness buckets, report series and
anomaly examples are each a few rows, so they are asked for together. Every query's rows become
JSON text under the query's name, the queries are unioned, and one `collect` brings them all.
"""

from __future__ import annotations

import json
from functools import reduce
from typing import Any

from pyspark.sql import DataFrame

from kafka_chaos.checkers.sql import literal


def collect(queries: dict[str, DataFrame]) -> dict[str, list[dict[str, Any]]]:
    """name -> that query's rows as dicts (in the query's order), every query in one job."""
    # One SQL expression per query, not a column object per field: each PySpark column is a round
    # trip to the JVM, and a check's plan was a few thousand of them (docs/measurements.md, 2026-11-25).
    tagged = [
        df.selectExpr(f"{literal(name)} AS part", "to_json(struct(*), map('ignoreNullFields', 'false')) AS row")
        for name, df in queries.items()
    ]
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in queries}
    for row in reduce(DataFrame.unionAll, tagged).collect():
        out[row["part"]].append(json.loads(row["row"]))
    return out
