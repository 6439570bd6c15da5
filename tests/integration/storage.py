"""What a node's data folder holds, as the integration tests read it."""

import time


def meta_properties(node, timeout_s: float = 30.0) -> dict[str, str]:
    """A node's meta.properties, once its entrypoint (run as its container starts) has written it."""
    path, deadline = node.data_dir / "meta.properties", time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"{node.alias} wrote no meta.properties"
        time.sleep(0.2)
    lines = path.read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))
