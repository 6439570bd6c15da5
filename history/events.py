"""The names a history is made of (../shared/history-format.md, version 1): event types, the
nemesis's process name, and the client operations. Spelled only here."""

from __future__ import annotations

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"
TYPES = (INVOKE, OK, FAIL, INFO)
#: The process name of every fault and heal.
NEMESIS = "nemesis"
FIELDS = ("index", "time", "process", "type", "f", "value", "error")

SEND, POLL, TXN = "send", "poll", "txn"
ASSIGN, SUBSCRIBE, COMMIT, CRASH = "assign", "subscribe", "commit", "crash"
#: The client operations that carry micro-operations.
CLIENT_FS = (SEND, POLL, TXN)
#: The operations that say which keys a consumer holds afterwards.
ASSIGNS = (ASSIGN, SUBSCRIBE)
#: Operations that are writes: their `ok` completion acknowledged values.
WRITES = (SEND, TXN)
