"""A parametrized test's values, of which the suite runs one and the nightly workflow all: the
others are marked `nightly` (tests/conftest.py skips them unless --nightly is given)."""

from collections.abc import Iterable

import pytest


def one_in_the_suite(values: Iterable[str], kept: str) -> list:
    """`values` for parametrize, every one but `kept` marked `nightly`."""
    values = list(values)
    assert kept in values, (kept, values)
    return [v if v == kept else pytest.param(v, marks=pytest.mark.nightly) for v in values]
