"""Producer order: `nonmonotonic-send`, `int-nonmonotonic-send` and `int-send-skip`.

Compared: every operation whose sends must have committed (the key view's `committed`, the sends
`lost-write` judges: `ok` ones and `info` ones a read proved), each send where it landed: its
value's index in the key's version order, wherever a read or an acknowledgement put it (an ack
without an offset still lands where a read saw the value). An unproven info operation is neither
compared nor moves its process's reference. A process's sends to a key must land in the order it
made them (one operation at a time per process), inside an operation and across operations; an
assign/subscribe that leaves the key out clears the process's reference (checkers/data_plane/references.py).
Consecutive sends of one operation landing more than one index apart is reported as
`int-send-skip` but allowed: other producers may interleave.

An info send lands only where a read put it: at the very index of the send it is compared with,
the two values share an offset, an `inconsistent-offsets` already reported (checkers/data_plane/offsets.py),
and the pair is not reported again.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kafka_chaos.checkers.anomalies import step_instances
from kafka_chaos.checkers.data_plane.references import (
    across,
    per_op,
    with_references,
)
from kafka_chaos.checkers.data_plane.version_order import KeyView
from kafka_chaos.history.events import INFO, OK


def rules(k: KeyView) -> list[pd.DataFrame]:
    sent = k.committed[k.committed["value"].isin(k.values.index)]
    if sent.empty:
        return []
    first_offset = k.seen.groupby("value")["offset"].min()
    landed = sent.assign(
        idx=sent["value"].map(k.values["first_idx"]),
        offset=sent["offset"].fillna(sent["value"].map(first_offset)),
    )
    out = step_instances(k.key, _without_info_ties(landed), "int-send-skip", "int-nonmonotonic-send")
    ops = per_op(landed)
    refs = with_references(ops, k.assigns, moved_by=(OK, INFO))
    if len(refs):
        info_ops = ops.loc[ops["type"] == INFO, "op"]
        tie = (refs["first_idx"] == refs["prev_last_idx"]) & ((refs["type"] == INFO) | refs["prev_op"].isin(info_ops))
        back = ((refs["first_idx"] <= refs["prev_last_idx"]) & ~tie).to_numpy()
        if back.any():
            out.append(across("nonmonotonic-send", k.key, refs[back]))
    return out


def _without_info_ties(landed: pd.DataFrame) -> pd.DataFrame:
    """`landed` less each send of an info operation at the index of the send just before it in
    the operation: the next send, compared with the one before instead, is the same number of
    indices on."""
    info = (landed["type"] == INFO).to_numpy()
    if not info.any():
        return landed
    r = landed.sort_values(["op", "pos"])
    op, idx = r["op"].to_numpy(), r["idx"].to_numpy()
    tie = np.r_[False, (op[1:] == op[:-1]) & (idx[1:] == idx[:-1])]
    return r[~(tie & (r["type"] == INFO).to_numpy())]
