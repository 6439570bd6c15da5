"""report.html opened in a real headless Chromium: it renders, shows its plots, logs nothing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.checkers import histories as H

pytestmark = [pytest.mark.spark, pytest.mark.browser]

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-extensions",
    "--enable-logging=stderr",
    "--v=0",
    "--virtual-time-budget=3000",
    "--dump-dom",
]


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "Chromium is not installed (./dev.sh setup installs Debian's chromium package)"
    return exe


def open_page(path: Path, profile: Path) -> tuple[str, list[str]]:
    """The DOM after scripts ran, and every console message the page produced."""
    proc = subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", path.resolve().as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc.stdout, console


def test_console_errors_are_caught(tmp_path: Path):
    """The check below can fail: a page with a script error is seen as one."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><body><script>missing();</script></body></html>")
    _, console = open_page(page, tmp_path / "profile")
    assert any("missing is not defined" in line for line in console)


def test_report_renders_with_plots_and_no_console_errors(check, tmp_path: Path):
    h = H.lost_write(True)
    h.nemesis("kill", ["kafka-2"])
    h.send(0, "t/0", [(4, 3)])
    h.nemesis("start", ["kafka-2"])
    h.nemesis("partition", ["kafka-1"])
    h.poll(2, {"t/0": [(3, 4)]})
    h.nemesis("heal", [])
    result = check(h, report=True)
    assert result.report_path and result.report_path.exists()
    dom, console = open_page(result.report_path, tmp_path / "profile")
    assert console == [], console
    assert 'data-rendered="yes"' in dom
    plots = int(re.search(r'data-plots="(\d+)"', dom).group(1))
    # latency, throughput, unseen, and the offset timeline of the anomalous key
    assert plots == 4 == dom.count('<svg class="plot"')
    assert dom.count('class="fault fault-kill"') >= 1 and 'class="fault fault-partition"' in dom
    assert 'class="anomaly"' in dom  # the lost write is marked on its key's timeline
    assert 'id="a-lost-write"' in dom
