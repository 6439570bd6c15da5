"""This suite's own convention: every test that starts clusters is marked `cluster`, so
`-m "not cluster"` runs what needs no Docker. The plugin marks its users `chaos`; here they
are `cluster` too."""

import pytest


@pytest.hookimpl(trylast=True)  # after the plugin's marking, before -m selects
def pytest_itemcollected(item: pytest.Item) -> None:
    if item.get_closest_marker("chaos") is not None:
        item.add_marker("cluster")


def _start_rank(item: pytest.Item) -> int:
    if item.get_closest_marker("slow") or item.get_closest_marker("chaos"):
        return 0  # a minute or more each (a chaos run is a cluster, a workload and a check)
    if item.get_closest_marker("cluster"):
        return 1
    return 2 if item.get_closest_marker("spark") else 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first: the parallel workers (pytest-xdist, one test at a time each) take
    them from the front, and the short ones fill in behind, so the workers end together. The
    sort is stable: a module's tests stay in their order."""
    items.sort(key=_start_rank)
