"""Whose containers `kafka-chaos clean` may remove: those whose creating process is gone."""

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
from docker.errors import APIError, NotFound

from kafka_chaos.harness.cleanup import (
    OWNER,
    OWNER_PIDNS,
    labels_for,
    owner_alive,
    owner_of,
    owner_pid,
    reap_lock,
    remove_container,
)


def test_this_process_owns_what_it_labels_and_is_alive():
    labels = labels_for("run-1")
    assert owner_pid(labels) == os.getpid()
    assert owner_alive(labels)


def test_a_finished_process_is_not_alive():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    label = owner_of(proc.pid)  # taken while it runs (or just ended: then its start time is unknown)
    proc.wait()
    assert owner_pid({OWNER: label}) == proc.pid
    assert not owner_alive({OWNER: label})


def test_a_reused_pid_or_another_boot_is_not_the_owner():
    boot, pid, start = owner_of().split(":")
    assert owner_alive({OWNER: f"{boot}:{pid}:{start}"})
    assert not owner_alive({OWNER: f"{boot}:{pid}:{int(start) + 1}"})  # the pid now names another process
    assert not owner_alive({OWNER: f"another-boot:{pid}:{start}"})


def test_an_owner_in_another_pid_namespace_is_not_provably_dead():
    boot, pid, start = owner_of().split(":")
    gone = f"{boot}:{pid}:{int(start) + 1}"
    assert not owner_alive({OWNER: gone, OWNER_PIDNS: labels_for("r")[OWNER_PIDNS]})
    assert owner_alive({OWNER: gone, OWNER_PIDNS: "pid:[1]"})  # its pid cannot be looked up here
    assert not owner_alive({OWNER: f"another-boot:{pid}:{start}", OWNER_PIDNS: "pid:[1]"})


def test_an_exclusive_hold_keeps_other_reapers_out_but_not_its_own_process():
    other = [
        sys.executable,
        "-c",
        "from kafka_chaos.harness.cleanup import reap_lock\nwith reap_lock(wait_s=0.5) as taken: print(taken)",
    ]
    with reap_lock(exclusive=True):
        with reap_lock(wait_s=0) as taken:
            assert taken  # this process's own start reaps what it made on purpose
        assert subprocess.run(other, capture_output=True, text=True, check=True).stdout.strip() == "False"
    assert subprocess.run(other, capture_output=True, text=True, check=True).stdout.strip() == "True"


def test_an_unlabelled_object_has_no_living_owner():
    assert owner_pid({}) is None
    assert not owner_alive({})
    assert not owner_alive({OWNER: "garbage"})


class _Container:
    """Stands in for docker's Container: its removal fails with `error`, and it stays listed for
    `reloads` more inspections."""

    def __init__(self, error: Exception | None, reloads: int = 2):
        self.error, self.reloads, self.removed = error, reloads, False

    def remove(self, force: bool, v: bool) -> None:
        if self.error:
            raise self.error
        self.removed = True

    def reload(self) -> None:
        if self.reloads == 0:
            raise NotFound("gone")
        self.reloads -= 1


def _conflict(explanation: str) -> APIError:
    return APIError("409 Client Error", response=SimpleNamespace(status_code=409), explanation=explanation)


def test_a_removal_another_cleaner_started_is_waited_for_not_raised():
    # CI: two pytest workers' start-up cleaning removed the same dead run's container at once.
    busy = _Container(_conflict("removal of container 393da352 is already in progress"))
    remove_container(busy, patience_s=5)
    assert busy.reloads == 0  # it waited until the container was gone


def test_another_conflict_still_fails():
    with pytest.raises(APIError):
        remove_container(_Container(_conflict("You cannot remove a running container")), patience_s=5)
    plain = _Container(None)
    remove_container(plain)
    assert plain.removed
    remove_container(_Container(NotFound("already gone")))
