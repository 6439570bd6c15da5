"""Host ports for the brokers' EXTERNAL listeners, always on 127.0.0.1."""

from __future__ import annotations

import socket

from kafka_chaos.harness.errors import UsageError


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def allocate(count: int, base: int | None = None) -> list[int]:
    """`count` free loopback ports: base, base+1, ... when given (each must be free), else any."""
    if base is not None:
        if not 1024 <= base <= 65535 - count:
            raise UsageError(f"port base {base} is out of range (1024..{65535 - count})")
        for port in range(base, base + count):
            if not _bindable(port):
                raise UsageError(f"port 127.0.0.1:{port} is in use")
        return list(range(base, base + count))
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()
