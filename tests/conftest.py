"""This suite's own convention: every test that starts clusters is marked `cluster`, so
`-m "not cluster"` runs what needs no Docker. The plugin marks its users `chaos`; here they
are `cluster` too. The long real-cluster runs that the nightly workflow covers (`nightly`: a
scenario on its affected and fixed releases, a chaos test repeated for each client library) are
skipped unless `--nightly` is given, so that the suite stays within its time: it keeps one of
each kind (kafka-14139's reproduction, kafka-python's chaos tests)."""

import pytest

from kafka_chaos.checkers import spark


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--nightly",
        action="store_true",
        help="also run the long real-cluster tests marked `nightly` (minutes each; the nightly workflow runs them)",
    )


@pytest.hookimpl(trylast=True)  # after the plugin's marking, before -m selects
def pytest_itemcollected(item: pytest.Item) -> None:
    if item.get_closest_marker("chaos") is not None:
        item.add_marker("cluster")


def _start_rank(item: pytest.Item) -> int:
    if item.get_closest_marker("slow"):
        return 0  # several minutes each: scenario reproductions, the plugin's own chaos suite
    if item.get_closest_marker("chaos"):
        return 1  # a minute or two each: a cluster, a workload under faults and a check
    if item.get_closest_marker("cluster"):
        return 2
    return 3 if item.get_closest_marker("spark") else 4


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest tests first: the parallel workers (pytest-xdist, one test or one xdist_group
    at a time each; --no-loadscope-reorder keeps this order) take them from the front, and the
    short ones fill in behind, so the workers end together. The sort is stable: a module's tests
    stay in their order. Tests marked `nightly` are skipped, saying how to run them, unless asked for."""
    if not config.getoption("--nightly"):
        skip = pytest.mark.skip(reason="a nightly run: run with --nightly (the nightly workflow does)")
        for item in items:
            if item.get_closest_marker("nightly"):
                item.add_marker(skip)
    items.sort(key=_start_rank)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A worker's one Spark session starts with both JIT tiers, before its first test that may
    check a history (a Spark or cluster test; a unit test needs no JVM): a check of a small
    history alone would start the JVM with C1 only (checkers/spark.py), but a worker goes on to
    check a hundred histories in the same JVM, and C2's compiled code pays back over them
    (docs/measurements.md, 2026-11-26). Later calls return the running session."""
    if item.get_closest_marker("spark") or item.get_closest_marker("cluster"):
        spark.session()
