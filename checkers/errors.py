"""The one error the checkers raise on purpose: a history that is not in the format."""


class BadHistory(Exception):
    """The input is not a history this checker can read (the command line exits 2 with the message)."""
