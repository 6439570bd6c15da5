"""'A view claims to lead', once (history/quorum_view.py): a claiming view and its near misses
(an error; another node named leader; no leader; no epoch), through the Python predicate and
the Spark SQL condition made from the same clauses, on views as the harness writes them."""

import json

import pytest
from pyspark.sql import functions as F

from kafka_chaos.history.evidence import VIEW_SCHEMA, view_line
from kafka_chaos.history.quorum_view import CLAIMS_TO_LEAD_SQL, claims_to_lead

CLAIMING = {"time": 1, "node": "controller-1", "node_id": 3, "leader_id": 3, "leader_epoch": 5, "error": None}
VIEWS = {
    "claims": (CLAIMING, True),
    "unreadable": ({**CLAIMING, "leader_id": None, "leader_epoch": None, "error": "no quorum-state file"}, False),
    "error set": ({**CLAIMING, "error": "bad quorum-state: x"}, False),
    "another leader": ({**CLAIMING, "leader_id": 4}, False),
    "no leader (None)": ({**CLAIMING, "leader_id": None}, False),
    "no leader (-1)": ({**CLAIMING, "leader_id": -1}, False),
    "no epoch": ({**CLAIMING, "leader_epoch": -1}, False),
    "epoch 0": ({**CLAIMING, "leader_epoch": 0}, True),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_the_python_predicate(name):
    view, claims = VIEWS[name]
    assert claims_to_lead(view) is claims
    assert claims_to_lead(json.loads(view_line(**view))) is claims  # as written to quorum-views.jsonl


def test_the_spark_condition_says_the_same(spark_session):
    lines = [view_line(**view) for view, _ in VIEWS.values()]
    frame = spark_session.read.schema(VIEW_SCHEMA).json(spark_session.sparkContext.parallelize(lines))
    got = [r["claims"] is True for r in frame.withColumn("claims", F.expr(CLAIMS_TO_LEAD_SQL)).collect()]
    assert got == [claims for _, claims in VIEWS.values()]
    assert frame.where(CLAIMS_TO_LEAD_SQL).count() == sum(claims for _, claims in VIEWS.values())
