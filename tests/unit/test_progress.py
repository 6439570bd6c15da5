"""Live progress: events always print; the status line is rewritten on a terminal and thinned
out in a log."""

import io

from kafka_chaos.harness.progress import LiveProgress


def test_in_a_log_the_status_line_prints_every_few_seconds_and_events_always(monkeypatch):
    clock = iter([0.0, 0.5, 1.0, 10.5, 11.0])
    monkeypatch.setattr("kafka_chaos.harness.progress.time.monotonic", lambda: next(clock))
    out = io.StringIO()
    p = LiveProgress(out, every=10.0, tty=False, prefix="kc: ")
    for n in range(5):
        p.tick(f"status {n}")
        if n == 1:
            p("nemesis: kill kafka-2 ok")
    assert out.getvalue().splitlines() == ["kc: status 0", "kc: nemesis: kill kafka-2 ok", "kc: status 3"]


def test_on_a_terminal_the_status_line_is_rewritten_and_cleared_for_events():
    out = io.StringIO()
    p = LiveProgress(out, tty=True)
    p.tick("a")
    p.tick("b")
    p("event")
    p.close()
    assert out.getvalue() == "\r\x1b[Ka\r\x1b[Kb\r\x1b[Kevent\n"


def test_lines_can_go_to_a_logger_instead():
    lines: list[str] = []
    p = LiveProgress(emit=lines.append, every=0.0)
    p.tick("status")
    p("event")
    assert lines == ["status", "event"]


def test_the_nemesis_tells_progress_of_each_completed_operation():
    from kafka_chaos.nemesis.core import Nemesis

    lines: list[str] = []
    nemesis = Nemesis(cluster=None, reporter=lines.append)  # type: ignore[arg-type] (act needs no cluster)
    nemesis.act("elect-unclean", {"target": "chaos/0"}, lambda: None)
    nemesis.act("elect-unclean", {"target": "chaos/0"}, lambda: 1 / 0)
    assert lines == [
        "nemesis: elect-unclean chaos/0 ok",
        "nemesis: elect-unclean chaos/0 info (ZeroDivisionError: division by zero)",
    ]
