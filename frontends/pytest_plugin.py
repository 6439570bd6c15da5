"""The pytest plugin (entry point `pytest11`, loaded whenever kafka-chaos is installed).

A chaos test in a few lines:

    @pytest.mark.kafka(nodes=3, config={"min.insync.replicas": "2"})
    def test_survives_kills(chaos_run):
        result = chaos_run(nemesis="kill,pause,partition", interval=5, time_limit=60)
        assert result.valid is True

Fixtures: `kafka_version` (one version per test item; `--kafka-versions` parametrizes),
`kafka_client` (the client library of chaos_run's calls that name none; `--kafka-clients`
parametrizes every test that uses chaos_run, like `--kafka-versions`),
`kafka_spec` (the cluster a test asks for: version, shape, broker config), `kafka_cluster` (a
started cluster, removed after the test) and `chaos_run` (runs/chaos.py: a fresh cluster,
workload, nemesis and check per call, returning its RunResult).

Where the cluster comes from, most specific first: the call (chaos_run's `config=`), the
`kafka` marker (shape, config, metadata version, default versions), the command line
(`--kafka-nodes`, `--kafka-controllers`/`--kafka-brokers`), the defaults (3 combined nodes).
Versions are the exception: `--kafka-versions` beats the marker's `versions`, because the
version is the axis a CI matrix turns; a test that only holds for some versions says so with
`min_version`/`max_version`, and is skipped outside them.

A failed test that made chaos runs gets a "kafka-chaos" section: each run's verdict, anomaly
summary and report path. Every run's result goes into the test's JUnit XML properties
(kafka_chaos.valid, .unknown_reason, .exit_code, .anomalies, .control_plane, .report, ...), and the
session ends with a table of all runs. A run whose control plane could not be fully checked has
`valid == "unknown"` (`unknown_reason` "control-plane-incomplete"), so `assert result.valid is True`
fails on it and its section says which rules ran.
Live progress goes to the `kafka_chaos` logger (INFO): `--log-cli-level=INFO` shows it.

The fixtures import the runs when first used: the plugin loads in every pytest session of an
environment where kafka-chaos is installed, and most of those never start a cluster.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from kafka_chaos.checkers.measures.group_coverage import format_coverage
from kafka_chaos.checkers.measures.liveness import format_liveness
from kafka_chaos.harness.errors import KafkaChaosError, UsageError
from kafka_chaos.harness.progress import LiveProgress
from kafka_chaos.harness.versions import DEFAULT_VERSION, KafkaVersion
from kafka_chaos.workloads.options import CLIENTS

if TYPE_CHECKING:  # imported where used: the plugin loads in every pytest session
    from kafka_chaos.harness.cluster_spec import ClusterSpec

log = logging.getLogger("kafka_chaos")
FIXTURES = ("kafka_version", "kafka_spec", "kafka_cluster", "chaos_run")
_RESULTS = pytest.StashKey[list]()  # an item's RunResults
_ALL = pytest.StashKey[list]()  # (nodeid, RunResult) of the session
_SHAPE_KEYS = ("nodes", "controllers", "brokers", "config", "metadata_version", "quorum", "disk", "tiered")
_MARKER_KEYS = {"version", "versions", "min_version", "max_version", *_SHAPE_KEYS}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kafka-chaos", "chaos tests on real Kafka clusters")
    group.addoption(
        "--kafka-versions",
        metavar="V1,V2",
        help=f"run every chaos test on each of these Kafka versions (default: the marker's, else {DEFAULT_VERSION})",
    )
    group.addoption(
        "--kafka-clients",
        metavar="C1,C2",
        help="run every chaos_run test with each of these clients: kafka-python, librdkafka, java "
        "(default: the call's, else kafka-python)",
    )
    group.addoption("--kafka-nodes", type=int, metavar="N", help="combined nodes of tests whose marker says none")
    group.addoption("--kafka-controllers", type=int, metavar="N", help="dedicated controllers (with --kafka-brokers)")
    group.addoption("--kafka-brokers", type=int, metavar="N", help="brokers, with --kafka-controllers")
    group.addoption("--kafka-store", metavar="DIR", help="where run directories go (default: <rootdir>/store)")
    group.addoption("--kafka-time-limit", type=float, metavar="S", help="workload seconds of runs that set none")
    group.addoption("--kafka-spark-master", metavar="URL", help="Spark master of the checks (default local[2])")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka(versions=[...], version=, min_version=, max_version=, nodes=, controllers=, brokers=, config={}, "
        "metadata_version=, quorum=, disk=, tiered=): the Kafka cluster of a chaos test (kafka-chaos)",
    )
    config.addinivalue_line("markers", "chaos: starts real Kafka clusters (added by kafka-chaos to tests using them)")
    config.stash[_ALL] = []
    # Progress reaches pytest's log capture (a failed test's "Captured log") and --log-cli-level.
    if log.level == logging.NOTSET:
        log.setLevel(logging.INFO)
    # kafka-python 3.0.12 loads its protocol schemas with deprecated importlib.resources calls.
    config.addinivalue_line("filterwarnings", "ignore:read_text is deprecated:DeprecationWarning")
    config.addinivalue_line("filterwarnings", "ignore:open_text is deprecated:DeprecationWarning")
    versions = _cli_versions(config)
    controllers, brokers = config.getoption("kafka_controllers"), config.getoption("kafka_brokers")
    if (controllers is None) != (brokers is None):
        raise pytest.UsageError("kafka-chaos: --kafka-controllers and --kafka-brokers go together")
    if versions is not None and not versions:
        raise pytest.UsageError("kafka-chaos: --kafka-versions names no version")
    clients = _cli_clients(config)
    if clients is not None and not clients:
        raise pytest.UsageError("kafka-chaos: --kafka-clients names no client")


def _cli_clients(config: pytest.Config) -> list[str] | None:
    text = config.getoption("kafka_clients")
    if text is None:
        return None
    clients = [c.strip() for c in text.split(",") if c.strip()]
    for c in clients:
        if c not in CLIENTS:
            raise pytest.UsageError(
                f"kafka-chaos: --kafka-clients: unknown client {c!r}: expected {', '.join(CLIENTS)}"
            )
    return clients


def _parse_versions(text: str, where: str) -> list[str]:
    out = []
    for v in (p.strip() for p in text.split(",")):
        if v:
            try:
                out.append(str(KafkaVersion.parse(v)))
            except Exception as exc:  # UsageError with the reason
                raise pytest.UsageError(f"kafka-chaos: {where}: {exc}") from None
    return out


def _cli_versions(config: pytest.Config) -> list[str] | None:
    text = config.getoption("kafka_versions")
    return None if text is None else _parse_versions(text, "--kafka-versions")


def _marker(node: Any) -> dict[str, Any]:
    """The `kafka` marker's keywords (closest wins: function, class, module); unknown ones are an error."""
    marker = node.get_closest_marker("kafka")
    if marker is None:
        return {}
    if marker.args:
        raise pytest.UsageError(f"{node.nodeid}: @pytest.mark.kafka takes keywords only (versions=..., nodes=...)")
    unknown = set(marker.kwargs) - _MARKER_KEYS
    if unknown:
        raise pytest.UsageError(f"{node.nodeid}: unknown kafka marker keyword(s) {', '.join(sorted(unknown))}")
    return dict(marker.kwargs)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that uses a kafka-chaos fixture gets one item per Kafka version, and a test that
    uses chaos_run one per client of --kafka-clients."""
    if "kafka_version" not in metafunc.fixturenames:
        return
    clients = _cli_clients(metafunc.config)
    if clients is not None and "kafka_client" in metafunc.fixturenames:
        metafunc.parametrize("kafka_client", [pytest.param(c, id=f"client-{c}") for c in clients])
    mark, where = _marker(metafunc.definition), f"{metafunc.definition.nodeid}: kafka marker"
    versions = _cli_versions(metafunc.config)
    if versions is None:
        given = mark.get("versions") or mark.get("version") or DEFAULT_VERSION
        given = given if isinstance(given, str) else ",".join(given)  # versions="3.9.1,4.3.1" or a list
        versions = _parse_versions(given, where)
    low, high = (
        KafkaVersion.parse(_parse_versions(mark[k], where)[0]) if mark.get(k) else None
        for k in ("min_version", "max_version")
    )
    params = []
    for v in versions:
        parsed, marks = KafkaVersion.parse(v), []
        if (low and parsed < low) or (high and high < parsed):
            marks.append(
                pytest.mark.skip(
                    reason=f"holds for Kafka {mark.get('min_version', '')}..{mark.get('max_version', '')} only"
                )
            )
        params.append(pytest.param(v, id=f"kafka-{v}", marks=marks))
    metafunc.parametrize("kafka_version", params)


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark the tests that start clusters `chaos` (before -m selects), so `-m "not chaos"` skips them."""
    if any(f in getattr(item, "fixturenames", ()) for f in FIXTURES):
        item.add_marker("chaos")


@pytest.fixture
def kafka_version() -> str:
    """The Kafka version of this test item (parametrized by --kafka-versions or the kafka marker)."""
    return DEFAULT_VERSION


@pytest.fixture
def kafka_client() -> str | None:
    """The client library of this test item's chaos runs (parametrized by --kafka-clients); None:
    each call's own `client=`, else kafka-python."""
    return None


@pytest.fixture
def kafka_spec(request: pytest.FixtureRequest, kafka_version: str) -> ClusterSpec:
    """The cluster this test asks for: marker first, then the command line, then 3 combined nodes."""
    from kafka_chaos.harness.cluster_spec import ClusterSpec

    mark, opt = _marker(request.node), request.config.getoption
    shape: dict[str, Any] = {}
    if opt("kafka_nodes") is not None:
        shape["nodes"] = opt("kafka_nodes")
    if opt("kafka_controllers") is not None:
        shape.update(controllers=opt("kafka_controllers"), brokers=opt("kafka_brokers"))
    if "nodes" in mark or "controllers" in mark:
        shape = {}  # the marker's shape replaces the command line's as a whole
    shape.update({k: mark[k] for k in _SHAPE_KEYS if k in mark})
    try:
        return ClusterSpec(kafka_version, **shape)
    except UsageError as exc:
        pytest.fail(f"kafka-chaos: {exc}", pytrace=False)


@pytest.fixture
def kafka_cluster(kafka_spec, tmp_path: Path) -> Iterator[Any]:
    """A started KafkaCluster (harness/cluster.py) of the test's spec, removed after the test."""

    try:
        cluster = kafka_spec.build().with_workdir(tmp_path / "cluster").with_log(log.info)
        cluster.start()  # on failure it removes whatever it started
    except KafkaChaosError as exc:  # bad input, an image that did not build, a cluster that did not start
        pytest.fail(f"kafka-chaos: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.stop()


def _run_name(node: pytest.Item) -> str:
    return "pytest/" + re.sub(r"[^A-Za-z0-9_.-]+", "-", node.name).strip("-")


@pytest.fixture
def chaos_run(request: pytest.FixtureRequest, kafka_spec, kafka_client: str | None) -> Callable[..., Any]:
    """chaos_run(nemesis=..., interval=..., nemesis_start=..., nemesis_targets=..., nemesis_mix=..., script=...,
    scenario=..., config=..., seed=..., control_plane=..., **workload) -> RunResult (.valid, .anomalies, .report, .lost,
    .faults, .control_plane, .run_dir). See runs/chaos.py and runs/result.py."""
    from kafka_chaos.runs.chaos import chaos_run as run

    opt = request.config.getoption
    store = Path(opt("kafka_store") or request.config.rootpath / "store")
    results: list = request.node.stash.setdefault(_RESULTS, [])

    def call(**kwargs: Any):
        if opt("kafka_time_limit") is not None and "scenario" not in kwargs:
            kwargs.setdefault("time_limit", opt("kafka_time_limit"))
        if kafka_client is not None:
            kwargs.setdefault("client", kafka_client)
        log.info("chaos run on %s: %s", kafka_spec.describe(), kwargs or "defaults")
        try:
            result = run(
                kafka_spec,
                store,
                _run_name(request.node),
                reporter=LiveProgress(emit=log.info),
                spark_master=opt("kafka_spark_master"),
                **kwargs,
            )
        except KafkaChaosError as exc:  # bad input, an image that did not build, a cluster that did not start
            pytest.fail(f"kafka-chaos: {exc}", pytrace=False)
        results.append(result)
        request.config.stash[_ALL].append((request.node.nodeid, result))
        prefix = "kafka_chaos" if len(results) == 1 else f"kafka_chaos[{len(results)}]"
        request.node.user_properties.extend(result.properties(prefix))
        log.info("%s (report %s)", result.verdict(), result.report)
        return result

    return call


@pytest.hookimpl(hookwrapper=True)  # the old-style wrapper: any pytest a user has
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[Any]:
    outcome = yield
    report = outcome.get_result()
    results = item.stash.get(_RESULTS, None)
    if results and report.when == "call" and report.failed:
        report.sections.append(("kafka-chaos", "\n\n".join(r.explain() for r in results)))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    runs = config.stash.get(_ALL, [])
    if not runs:
        return
    terminalreporter.section("kafka-chaos runs")
    for nodeid, r in runs:
        terminalreporter.write_line(f"{nodeid}: Kafka {r.version}, nemesis {r.nemesis}: {r.verdict()}")
        if r.check is not None and r.control_plane_status != "ok":
            terminalreporter.write_line(f"    control plane: {r.control_plane_status}")
        if r.liveness:
            terminalreporter.write_line("    " + format_liveness(r.liveness).replace("\n", "\n    "))
        if r.group_coverage:
            terminalreporter.write_line("    " + format_coverage(r.group_coverage))
        terminalreporter.write_line(f"    report: {r.report}")
