"""When a quorum view claims to lead: one rule, as a Python predicate and as a Spark SQL condition
made from the same clauses, for every reader of a node's quorum-state (the quorum rules and the
split-brain query of checkers/control_plane/, explore's states in checkers/measures/states.py,
the harness's `controller` target and the scenarios that wait for a leader).

A view (a line of control-plane/quorum-views.jsonl, history/evidence.py VIEW_FIELDS, or a
quorum-state file read now, harness/quorum_state.py) claims to lead when it was read (`error` is
None), it names its own node leader (`leader_id` == `node_id`), and of an epoch (`leader_epoch`
>= 0: a file that holds none says -1, an unread one None).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The rule's clauses, each (field, operator, operand): an operand that is a str names another field.
CLAIM: tuple[tuple[str, str, Any], ...] = (
    ("error", "IS NULL", None),
    ("leader_id", "=", "node_id"),
    ("leader_epoch", ">=", 0),
)


def _holds(view: Mapping[str, Any], field: str, op: str, operand: Any) -> bool:
    value = view.get(field)
    if op == "IS NULL":
        return value is None
    other = view.get(operand) if isinstance(operand, str) else operand
    if value is None or other is None:  # as SQL: a comparison with NULL holds for no row
        return False
    return value == other if op == "=" else value >= other


def claims_to_lead(view: Mapping[str, Any]) -> bool:
    """Whether `view` is its node's claim to lead the quorum (CLAIM)."""
    return all(_holds(view, *clause) for clause in CLAIM)


def _sql(field: str, op: str, operand: Any) -> str:
    if op == "IS NULL":
        return f"`{field}` IS NULL"
    right = f"`{operand}`" if isinstance(operand, str) else repr(operand)
    return f"`{field}` {op} {right}"


#: CLAIM as a Spark SQL condition over a frame of views (`DataFrame.where`, `F.expr`): a row whose
#: comparison meets a NULL is not a claim, as in `claims_to_lead`.
CLAIMS_TO_LEAD_SQL: str = " AND ".join(_sql(*clause) for clause in CLAIM)
