"""kafka-chaos harness: real KRaft clusters of a named Kafka version, on Testcontainers.

Testcontainers' reaper (Ryuk) is an image that cannot be pulled on a registry-less host, so
it is disabled here, before testcontainers is first imported; the harness removes its own
containers and networks by label instead (see harness/cleanup.py).
"""

import os

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
