"""Facts the tests read off a history on their own (the checkers are not used by workload tests)."""


def sent_and_read(events):
    """(key, value) of ok sends (and ok txn sends), of fail txn sends, and of everything ok polls read."""
    ok_sent, failed_sent, read, offsets = set(), set(), set(), {}
    for e in events:
        if e["type"] not in ("ok", "fail") or e["f"] not in ("send", "poll", "txn"):
            continue
        for micro in e["value"]:
            if micro[0] == "send" and isinstance(micro[2], list):
                (ok_sent if e["type"] == "ok" else failed_sent).add((micro[1], micro[2][1]))
            elif micro[0] == "send" and e["type"] == "fail":
                failed_sent.add((micro[1], micro[2]))
            elif micro[0] == "poll" and e["type"] == "ok":
                for key, pairs in micro[1].items():
                    for offset, value in pairs:
                        read.add((key, value))
                        offsets.setdefault((key, offset), set()).add(value)
    return ok_sent, failed_sent, read, offsets
