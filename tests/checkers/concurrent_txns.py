"""A consistent transactional history with concurrency, as Kafka makes them: the differential test
(test_oracle.py) and bench/txn_cycles.py.

`processes` processes run transactions back to back, each 2 to 6 ms long and overlapping the
others'. A transaction polls its two assigned keys (read_committed: up to the first record of a
transaction still open), then sends one value to each of two keys, the first when it starts and
the second half way through, so that concurrent transactions interleave their writes (ww cycles,
`G0`, and ww + wr cycles, an allowed `G1c`, are normal). A final reader catches every key up.
Streamed to disk; memory is the keys' logs.
"""

from __future__ import annotations

import heapq
import random
from pathlib import Path

MAX_POLL = 4


def generate(path: Path, operations: int, processes: int, keys: int, seed: int = 1) -> int:
    """Write the history; returns the number of operations. A record is (value, writer); a writer is
    open from its invoke to its completion, and a read_committed poll stops at the first open one."""
    rnd = random.Random(seed)
    names = [f"chaos/{k}" for k in range(keys)]
    logs: list[list[tuple[int, int]]] = [[] for _ in range(keys)]  # per key: (value, writer txn id)
    open_txns: set[int] = set()
    assigned = [[(p * 2 + j) % keys for j in range(2)] for p in range(processes)]
    pos = [[0, 0] for _ in range(processes)]
    lines: list[str] = []
    index = ops = value = 0
    heap: list[tuple[int, int, int, str]] = []  # (time, seq, process, step)
    seq = 0
    state: dict[int, dict] = {}

    def emit(process: int, type_: str, t: int, v: str) -> None:
        nonlocal index
        lines.append(f'{{"index":{index},"time":{t},"process":{process},"type":"{type_}","f":"txn","value":{v}}}\n')
        index += 1

    def push(t: int, p: int, step: str) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (t, seq, p, step))

    with open(path, "w", encoding="utf-8", buffering=1 << 22) as fh:
        t = 1_000_000
        for p in range(processes):
            ks = "[" + ",".join(f'"{names[k]}"' for k in assigned[p]) + "]"
            for i, type_ in enumerate(("invoke", "ok")):
                head = f'"index":{index + i},"time":{t + i * 1000},"process":{p}'
                lines.append(f'{{{head},"type":"{type_}","f":"assign","value":{ks}}}\n')
            index += 2
            ops += 1
            push(t + 10_000 + p * 100_000, p, "invoke")
        target = operations - processes - keys  # room for the final reads
        while heap:
            t, _, p, step = heapq.heappop(heap)
            if step == "invoke":
                if ops >= target:
                    continue
                ops += 1
                txn = index
                reads = []
                for j, k in enumerate(assigned[p]):
                    got = []
                    while len(got) < MAX_POLL and pos[p][j] < len(logs[k]) and logs[k][pos[p][j]][1] not in open_txns:
                        got.append(f"[{pos[p][j]},{logs[k][pos[p][j]][0]}]")
                        pos[p][j] += 1
                    if got:
                        reads.append(f'"{names[k]}":[{",".join(got)}]')
                a, b = rnd.sample(range(keys), 2)
                v1, v2 = value + 1, value + 2
                value += 2
                open_txns.add(txn)
                logs[a].append((v1, txn))
                state[p] = {
                    "txn": txn,
                    "a": a,
                    "b": b,
                    "v1": v1,
                    "v2": v2,
                    "o1": len(logs[a]) - 1,
                    "reads": "{" + ",".join(reads) + "}",
                }
                emit(p, "invoke", t, f'[["poll"],["send","{names[a]}",{v1}],["send","{names[b]}",{v2}]]')
                d = rnd.randint(2_000_000, 6_000_000)
                push(t + d // 2, p, "second")
                push(t + d, p, "complete")
            elif step == "second":
                s = state[p]
                logs[s["b"]].append((s["v2"], s["txn"]))
                s["o2"] = len(logs[s["b"]]) - 1
            else:
                s = state.pop(p)
                open_txns.discard(s["txn"])
                done = (
                    f'[["poll",{s["reads"]}],["send","{names[s["a"]]}",[{s["o1"]},{s["v1"]}]],'
                    f'["send","{names[s["b"]]}",[{s["o2"]},{s["v2"]}]]]'
                )
                emit(p, "ok", t, done)
                push(t + rnd.randint(100_000, 500_000), p, "invoke")
            if len(lines) >= 1 << 15:
                fh.write("".join(lines))
                lines.clear()
        # The final reader: every key from the start, one poll per key.
        reader = processes
        ks = "[" + ",".join(f'"{n}"' for n in names) + "]"
        t += 1_000_000
        for type_ in ("invoke", "ok"):
            lines.append(
                f'{{"index":{index},"time":{t},"process":{reader},"type":"{type_}","f":"assign","value":{ks}}}\n'
            )
            index += 1
        ops += 1
        for k in range(keys):
            pairs = ",".join(f"[{o},{v}]" for o, (v, _) in enumerate(logs[k]))
            for type_, v in (("invoke", '[["poll"]]'), ("ok", f'[["poll",{{"{names[k]}":[{pairs}]}}]]')):
                t += 1000
                lines.append(
                    f'{{"index":{index},"time":{t},"process":{reader},"type":"{type_}","f":"poll","value":{v}}}\n'
                )
                index += 1
            ops += 1
        fh.write("".join(lines))
    return ops
