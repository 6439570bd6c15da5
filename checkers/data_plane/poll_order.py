"""Consumer order: `poll-skip`, `nonmonotonic-poll` and their in-operation forms.

A consumer's *reference* for a key is the last value of that key in its latest ok operation that
polled it (checkers/data_plane/references.py). Only ok operations move it; an assign/subscribe that leaves the
key out clears it. Each ok operation's first value of the key, and each info operation's that
carries values, is compared with the reference by version-order index: more than one after is a
skip, at or before is nonmonotonic. Each is reported with the process's mode (its latest
assign/subscribe): under `subscribe` a group rebalance may legally move positions, and the anomaly
table (checkers/anomalies.py) allows them there. Inside one ok operation, consecutive values of a
key (across its poll micro-ops, in order) must be adjacent.
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import step_instances
from kafka_chaos.checkers.data_plane.references import (
    across,
    per_op,
    with_references,
)
from kafka_chaos.checkers.data_plane.version_order import KeyView


def rules(k: KeyView) -> list[pd.DataFrame]:
    polled = k.reads[k.reads["type"].isin(["ok", "info"])]
    polled = polled.assign(idx=k.index_of(polled["offset"])).dropna(subset=["idx"])
    out = step_instances(k.key, polled[polled["type"] == "ok"], "int-poll-skip", "int-nonmonotonic-poll")
    if polled.empty:
        return out
    refs = with_references(per_op(polled), k.assigns)
    if refs.empty:
        return out
    delta = (refs["first_idx"] - refs["prev_last_idx"]).to_numpy()
    for name, mask in (("poll-skip", delta > 1), ("nonmonotonic-poll", delta <= 0)):
        if mask.any():
            out.append(across(name, k.key, refs[mask]))
    return out
