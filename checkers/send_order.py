"""Producer order: `nonmonotonic-send`, `int-nonmonotonic-send` and `int-send-skip`.

Compared by where each ok send landed: its value's index in the key's version order, wherever a
read or an acknowledgement put it (an ack without an offset still lands where a read saw the
value). A process's sends to a key must land in the order it made them (one operation at a time
per process), inside an operation and across its ok operations; an assign/subscribe that leaves
the key out clears the process's reference (checkers/references.py). Consecutive sends of one
operation landing more than one index apart is reported as `int-send-skip` but allowed: other
producers may interleave.
"""

from __future__ import annotations

import pandas as pd

from kafka_chaos.checkers.anomalies import step_instances
from kafka_chaos.checkers.references import across, per_op, with_references
from kafka_chaos.checkers.version_order import KeyView


def rules(k: KeyView) -> list[pd.DataFrame]:
    ok = k.committed[(k.committed["type"] == "ok") & k.committed["value"].isin(k.values.index)]
    if ok.empty:
        return []
    first_offset = k.seen.groupby("value")["offset"].min()
    landed = ok.assign(
        idx=ok["value"].map(k.values["first_idx"]),
        offset=ok["offset"].fillna(ok["value"].map(first_offset)),
    )
    out = step_instances(k.key, landed, "int-send-skip", "int-nonmonotonic-send")
    refs = with_references(per_op(landed), k.assigns)
    if len(refs):
        back = (refs["first_idx"] <= refs["prev_last_idx"]).to_numpy()
        if back.any():
            out.append(across("nonmonotonic-send", k.key, refs[back]))
    return out
