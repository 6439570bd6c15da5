"""The wheel's lists in pyproject.toml name every package and every driver source of the
checkout: a folder left out installs nothing, and fails only where the wheel is installed."""

from fnmatch import fnmatch
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[2]
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folder_of(package: str) -> Path:
    """The checkout's folder of a package, by the longest package-dir entry above it."""
    dirs = SETUPTOOLS["package-dir"]
    top = max((name for name in dirs if package == name or package.startswith(name + ".")), key=len)
    return ROOT / dirs[top] / Path(*package[len(top) :].lstrip(".").split(".") if package != top else ())


def test_every_python_package_of_the_checkout_is_listed():
    listed = set(SETUPTOOLS["packages"])
    found = set()
    for name, folder in SETUPTOOLS["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    assert found - listed == set(), "packages missing from pyproject.toml"


def test_every_listed_package_is_a_folder():
    missing = [p for p in SETUPTOOLS["packages"] if not _folder_of(p).is_dir()]
    assert missing == []


@pytest.mark.parametrize(
    "package, project", [("kafka_chaos.workloads.clients", "java-driver"), ("kafka_chaos.harness", "tiered-rsm")]
)
def test_every_java_source_is_shipped(package, project):
    patterns = SETUPTOOLS["package-data"][package]
    clients = _folder_of(package)
    sources = [p.relative_to(clients).as_posix() for p in (clients / project).rglob("*") if p.is_file()]
    sources = [s for s in sources if s.endswith((".java", "pom.xml")) and "/target/" not in f"/{s}"]
    unshipped = [s for s in sources if not any(fnmatch(s, pat) and s.count("/") == pat.count("/") for pat in patterns)]
    assert sources and unshipped == []
