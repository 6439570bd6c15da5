"""The one error the checkers raise on purpose: a history that is not in the format."""


class BadHistory(Exception):
    """The input is not a history this checker can read (the command line exits 2 with the message)."""


def first_line(exc: BaseException) -> str:
    """An error's first line: what the user sees of a JVM's stack trace (the rest goes nowhere)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
