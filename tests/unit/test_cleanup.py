"""Whose containers `kafka-chaos clean` may remove: those whose creating process is gone."""

import os
import subprocess
import sys

from harness.cleanup import OWNER, labels_for, owner_alive, owner_of, owner_pid


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


def test_an_unlabelled_object_has_no_living_owner():
    assert owner_pid({}) is None
    assert not owner_alive({})
    assert not owner_alive({OWNER: "garbage"})
