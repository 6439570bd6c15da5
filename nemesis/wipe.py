"""`wipe`: kill the node, empty its data directory (a replaced disk), start it again.

The image's entrypoint formats storage whenever the data directory holds no meta.properties,
with the cluster's id, so the node comes back as an empty replica of the same cluster: the
KAFKA-14139 situation that KIP-903 addresses. On a combined node the metadata log goes too.
"""

from __future__ import annotations

import shutil

from kafka_chaos.harness.node import KafkaNode
from kafka_chaos.nemesis.kill import kill, start, wait_stopped


def empty_dir(path) -> None:
    for child in path.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def wipe(node: KafkaNode) -> None:
    kill(node)
    wait_stopped(node)
    empty_dir(node.data_dir)
    start(node)
