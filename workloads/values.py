"""Record values on the wire: the integer as ASCII bytes."""

from __future__ import annotations


def encode(value: int) -> bytes:
    return str(value).encode()


def decode(raw: bytes | None) -> int | str | None:
    """The integer a record carries; a value nobody could have sent stays a string (garbage)."""
    if raw is None:
        return None
    text = raw.decode(errors="replace")
    try:
        return int(text)
    except ValueError:
        return text
