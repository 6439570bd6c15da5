"""This suite's own convention: every test that starts clusters is marked `cluster`, so
`-m "not cluster"` runs what needs no Docker. The plugin marks its users `chaos`; here they
are `cluster` too. A scenario's reproduction on its affected and fixed releases (`reproduction`,
several minutes each) is skipped unless `--reproductions` is given: the nightly workflow runs
them, and the suite keeps one (kafka-14139's) so that it stays within its time."""

import pytest

from kafka_chaos.checkers import spark


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reproductions",
        action="store_true",
        help="also run the scenario reproductions marked `reproduction` (minutes each; nightly)",
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
    stay in their order. Reproductions are skipped, saying how to run them, unless asked for."""
    if not config.getoption("--reproductions"):
        skip = pytest.mark.skip(reason="a scenario reproduction: run with --reproductions (the nightly workflow does)")
        for item in items:
            if item.get_closest_marker("reproduction"):
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
