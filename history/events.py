"""The names a history is made of (../shared/history-format.md, version 1): event types, the
nemesis's process name, and the client operations. Spelled only here."""

from __future__ import annotations

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"
TYPES = (INVOKE, OK, FAIL, INFO)
#: The process name of every fault and heal.
NEMESIS = "nemesis"
FIELDS = ("index", "time", "process", "type", "f", "value", "error")

SEND, POLL, TXN = "send", "poll", "txn"
ASSIGN, SUBSCRIBE, COMMIT, CRASH, CLOSE = "assign", "subscribe", "commit", "crash", "close"
#: The client operations that carry micro-operations.
CLIENT_FS = (SEND, POLL, TXN)
#: A share group's member's operations (KIP-932; history-format.md, "Share consumers").
SHARE_POLL, SHARE_ACK, SHARE_OFFSETS = "share-poll", "share-ack", "share-offsets"
SHARE_FS = (SHARE_POLL, SHARE_ACK, SHARE_OFFSETS)
#: A share acknowledgement's types, as the history spells them, with Kafka's AcknowledgeType ids.
ACK_TYPES = {"accept": 1, "release": 2, "reject": 3}
#: The operations that say which keys a consumer holds afterwards.
ASSIGNS = (ASSIGN, SUBSCRIBE)
#: What a nemesis operation did to the nodes it names, written into its value (`effect`) by the
#: fault itself (nemesis/faults.py), so that a reader of the history (the control-plane rules)
#: knows which faults take a node down, restart or wipe it without a list of fault names.
DOWN, PAUSED = "down", "paused"  # not running until undone (killed or stopped; frozen)
RESTARTED, WIPED = "restarted", "wiped"  # killed and started again within the operation (a wiped disk)
STARTED, RESUMED = "started", "resumed"  # undoes down (a start also ends a pause); undoes paused
CUT, HELD, HEALED = "cut", "held", "healed"  # a partition's grudge; connections held; the network whole
#: running and reachable, but a storage it uses fails or is slow (a tiered broker's remote storage);
#: undoes impaired
IMPAIRED, RESTORED = "impaired", "restored"
#: not running until started, its process ended with no fault ending it (nemesis/exits.py): down,
#: but no fault the nemesis made
EXITED = "exited"
#: an operator's request through Kafka's own API (a forced election, a deletion of records, a
#: feature upgrade): every node runs and is reached as before; what it changed is in the metadata log
OPERATOR = "operator"
#: one of the workload's own processes held still (an application that stalls mid-transaction):
#: every node runs and is reached as before
CLIENT = "client"
EFFECTS = (
    DOWN,
    PAUSED,
    RESTARTED,
    WIPED,
    STARTED,
    RESUMED,
    CUT,
    HELD,
    HEALED,
    IMPAIRED,
    RESTORED,
    EXITED,
    OPERATOR,
    CLIENT,
)
#: Operations that are writes: their `ok` completion acknowledged values.
WRITES = (SEND, TXN)
