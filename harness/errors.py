"""Errors the command line turns into exit codes.

UsageError is bad input or an environment the harness cannot work in (exit 2, one line).
ClusterStartError is a cluster that did not become ready in time (it carries log tails).
"""


class KafkaChaosError(Exception):
    """Base of the harness's own errors."""


class UsageError(KafkaChaosError):
    """Bad input: the command line prints the message on one line and exits with code 2."""


class ClusterStartError(KafkaChaosError):
    """A node did not start, or the cluster did not become ready within its deadline."""
