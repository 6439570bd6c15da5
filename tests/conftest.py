"""This suite's own convention: every test that starts clusters is marked `cluster`, so
`-m "not cluster"` runs what needs no Docker. The plugin marks its users `chaos`; here they
are `cluster` too."""

import pytest


@pytest.hookimpl(trylast=True)  # after the plugin's marking, before -m selects
def pytest_itemcollected(item: pytest.Item) -> None:
    if item.get_closest_marker("chaos") is not None:
        item.add_marker("cluster")
