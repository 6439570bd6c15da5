"""A run in a process of its own, for a campaign that lives for hours.

A campaign's process keeps one Spark session warm and checks every run in it, so it lives as long
as the campaign; its runs need not. Each run's clients, threads and C libraries (kafka-python,
librdkafka, the Docker client) live in a child forked from a server that imported them once, and
die with it: what a run leaves in the C heap does not pile up over a campaign of hours.

The child owns its cluster (the pid in the containers' labels). An interrupt of the campaign,
Ctrl-C or SIGTERM, becomes one SIGTERM to the child, which tears its cluster down as `run` does,
while the campaign waits for it. If the campaign is killed with SIGKILL, the child learns it from
the pipe to the campaign, whose far end is then closed, and sends itself the same SIGTERM: it
still tears its cluster down itself. The fork server's death cannot tell it: the child holds the
server's "alive" pipe (multiprocessing passes it on), so the server outlives the campaign for as
long as the run lasts.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from types import FrameType
from typing import Any

from kafka_chaos.runs.spec import RunSpec

#: What the fork server imports once, so that each run's process starts without importing them.
PRELOAD = ["kafka_chaos.runs.run"]


@dataclass(frozen=True)
class Executed:
    """What a run's process tells its campaign: its directory (None if it made none) and, when
    it did not end normally, why."""

    run_dir: str | None
    error: str | None = None


@dataclass(frozen=True)
class StatusLine:
    """How the campaign's terminal shows a run's status line (harness/progress.py LiveProgress)."""

    tty: bool
    every: float
    prefix: str


def status_line_of(reporter: Any) -> StatusLine | None:
    """The status line a run in a child should draw for `reporter`; None when it draws none."""
    if getattr(reporter, "tick", None) is None or not hasattr(reporter, "tty"):
        return None
    return StatusLine(reporter.tty, reporter.every, reporter.prefix)


_context: Any = None


def _fork_server() -> Any:
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def execute(spec: RunSpec, status: StatusLine | None = None) -> Executed:
    """Runs `spec` (runs/run.py Run.execute) in a child process and waits for it. An interrupt
    here is passed on as one SIGTERM, waited out, and raised again once the child has cleaned up."""
    ctx = _fork_server()
    ours, theirs = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(spec, status, theirs), name="kafka-chaos-run")
    child.start()
    theirs.close()
    try:
        return _outcome(ours, child)
    except KeyboardInterrupt:
        child.terminate()
        _wait_out(child)
        raise
    finally:
        ours.close()


def _outcome(ours: Connection, child: Any) -> Executed:
    wait([ours, child.sentinel])
    try:
        said = ours.recv() if ours.poll() else None
    except EOFError:
        said = None
    child.join()
    if said is None:
        return Executed(None, f"the run's process ended with exit code {child.exitcode} and said nothing")
    return said


def _wait_out(child: Any) -> None:
    """Until the child has ended: further interrupts do not cut its clean-up short."""
    while True:
        try:
            child.join()
            return
        except KeyboardInterrupt:
            continue


def _watch_campaign(theirs: Connection, said: threading.Event) -> None:
    """SIGTERM to this process once the campaign's end of the pipe is closed before the run said
    its outcome: the campaign died (a write end polls as an error once no reader is left)."""

    def watch() -> None:
        poller = select.poll()
        poller.register(theirs.fileno(), 0)  # POLLERR and POLLHUP are always reported
        while not said.is_set():
            if poller.poll(1000) and not said.is_set():
                os.kill(os.getpid(), signal.SIGTERM)
                return

    threading.Thread(target=watch, name="campaign-watch", daemon=True).start()


def _child(spec: RunSpec, status: StatusLine | None, theirs: Connection) -> None:
    from kafka_chaos.harness.progress import LiveProgress
    from kafka_chaos.runs.run import Run

    interrupted = False
    said_it = threading.Event()

    def terminate(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted
        if not interrupted and not said_it.is_set():  # once: a second would cut the clean-up short
            interrupted = True
            raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    # A terminal's Ctrl-C reaches the whole process group; the campaign decides and sends SIGTERM.
    # A handler, not SIG_IGN, which the programs a run starts would inherit.
    signal.signal(signal.SIGINT, lambda signum, frame: None)
    progress = LiveProgress(tty=status.tty, every=status.every, prefix=status.prefix) if status else None
    job = Run(spec, _Voice(progress))
    _watch_campaign(theirs, said_it)  # a campaign that died before this point: SIGTERM at once
    try:
        job.execute()
        said = Executed(_dir_of(job))
    except KeyboardInterrupt:
        said = Executed(_dir_of(job), "interrupted")
    except Exception as exc:  # a cluster that did not start, a schedule that crashed: the campaign goes on
        said = Executed(_dir_of(job), f"{type(exc).__name__}: {exc}")
    finally:
        if progress is not None:
            progress.close()
    said_it.set()
    try:
        theirs.send(said)
    except OSError:  # the campaign is gone (killed): nobody to tell
        pass
    theirs.close()


def _dir_of(job: Any) -> str | None:
    return str(job.result.run_dir) if job.result is not None and job.result.run_dir is not None else None


class _Voice:
    """A run's reporter inside a campaign: its status line passes (the campaign's progress line
    follows it), its event lines do not (a campaign of a hundred runs would print thousands)."""

    def __init__(self, progress: Any) -> None:
        self.tick = progress.tick if progress is not None else None

    def __call__(self, message: str) -> None:
        pass
