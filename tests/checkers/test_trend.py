"""The trend job's counting rules on hand-made run directories (the files a run and a check
write); tests/integration/test_pytest_plugin.py runs it on directories made by real runs."""

import json
from pathlib import Path

import pytest

from kafka_chaos.checkers.errors import BadHistory
from kafka_chaos.checkers.report import trend

pytestmark = pytest.mark.spark
DAY_MS = 86_400_000
NOV_20 = 1_795_132_800_000  # 2026-11-20T00:00:00Z


def make_run(
    store: Path,
    path: str,
    version: str = "4.3.1",
    nemesis: dict | None = None,
    valid: bool | str | None = True,
    errors: dict[str, int] | None = None,
    started_ms: int | None = NOV_20,
    run_id: str | None | bool = None,  # None: one made from the path; False: none at all
    allowed: dict[str, int] | None = None,
    liveness: dict | None = None,  # written into results.json when checked, else into summary.json
    client: str | None = None,  # None: a run from before config.json named its client
    control_plane: dict | None = None,  # results.json's control_plane object (None: a result from before it)
    held: float | None = None,  # a group run's every-key share, where liveness goes
) -> Path:
    run_dir = store / path
    run_dir.mkdir(parents=True)
    config = {"kafka_version": version, "nemesis": nemesis or {}}
    if client is not None:
        config["client"] = client
    if run_id is not False:
        config["run_id"] = run_id or path.replace("/", "-")
    if started_ms is not None:
        config["history_started_unix_ms"] = started_ms
    (run_dir / "config.json").write_text(json.dumps(config))
    summary = {"complete": valid is not None}
    coverage = None if held is None else {"every_key_share": held}
    if liveness is not None and valid is None:
        summary["liveness"] = liveness
    if coverage is not None and valid is None:
        summary["group_coverage"] = coverage
    (run_dir / "summary.json").write_text(json.dumps(summary))
    if valid is not None:
        anomalies = {n: {"count": c, "errors": c, "examples": []} for n, c in (errors or {}).items()}
        anomalies |= {n: {"count": c, "errors": 0, "examples": []} for n, c in (allowed or {}).items()}
        results = {"valid": valid, "anomalies": anomalies, "stats": {}}
        if control_plane is not None:
            results["control_plane"] = control_plane
        if liveness is not None:
            results["liveness"] = liveness
        if coverage is not None:
            results["group_coverage"] = coverage
        (run_dir / "results.json").write_text(json.dumps(results))
    return run_dir


def rows(t: trend.Trend) -> dict[tuple, trend.TrendRow]:
    return {(r.day, r.version, r.nemesis): r for r in t.rows}


def test_counts_per_day_version_and_nemesis(tmp_path, spark_session):
    kill = {"faults": ["kill"], "interval": 10}
    make_run(tmp_path, "a/1", nemesis=kill)
    make_run(tmp_path, "a/2", nemesis=kill, valid=False, errors={"lost-write": 7, "unseen": 2})
    make_run(tmp_path, "a/3", nemesis=kill, valid=False, errors={"lost-write": 3}, allowed={"int-send-skip": 5})
    make_run(tmp_path, "b/1", nemesis=kill, started_ms=NOV_20 + DAY_MS)
    make_run(tmp_path, "c/1", version="3.9.1", nemesis={"scenario": "kafka-14139"}, valid="unknown")
    make_run(tmp_path, "d/1", nemesis={"script": [{"at": 1}]}, valid=None)
    t = trend.trend(tmp_path, session=spark_session)
    r = rows(t)
    first = r[("2026-11-20", "4.3.1", "kill")]
    assert (first.runs, first.valid, first.invalid, first.unknown, first.unchecked) == (3, 1, 2, 0, 0)
    assert first.anomalies == {"lost-write": {"runs": 2, "errors": 10}, "unseen": {"runs": 1, "errors": 2}}
    assert first.invalid_share == pytest.approx(2 / 3)
    assert r[("2026-11-21", "4.3.1", "kill")].valid == 1
    assert r[("2026-11-20", "3.9.1", "scenario:kafka-14139")].unknown == 1
    assert r[("2026-11-20", "4.3.1", "script")].unchecked == 1
    assert [b["run_dir"].split("/")[-2:] for b in t.invalid_runs] == [["a", "2"], ["a", "3"]]
    assert t.invalid_runs[0]["errors"] == {"lost-write": 7, "unseen": 2}
    # ordered by day, then version as numbers
    assert [(x.day, x.version) for x in t.rows][:2] == [("2026-11-20", "3.9.1"), ("2026-11-20", "4.3.1")]


def test_a_latest_link_does_not_count_a_run_twice(tmp_path, spark_session):
    make_run(tmp_path, "nightly/20261120T010000", run_id="r1")
    (tmp_path / "nightly" / "latest").symlink_to("20261120T010000")
    assert trend.trend(tmp_path, session=spark_session).rows[0].runs == 1
    make_run(tmp_path, "nightly/20261120T020000", run_id="r2")  # near miss: another run is counted
    assert trend.trend(tmp_path, session=spark_session).rows[0].runs == 2


def test_the_day_comes_from_the_directory_when_the_config_has_no_start_time(tmp_path, spark_session):
    make_run(tmp_path, "old/20261105T235959", started_ms=None)
    make_run(tmp_path, "old/undated", started_ms=None)
    days = sorted(r.day for r in trend.trend(tmp_path, session=spark_session).rows)
    assert days == ["2026-11-05", "unknown"]


def test_files_tables_and_plots(tmp_path, spark_session):
    for i, (version, day) in enumerate([("4.3.1", 0), ("4.3.1", 1), ("3.9.1", 1)]):
        make_run(tmp_path / "s", f"r{i}", version=version, started_ms=NOV_20 + day * DAY_MS, valid=bool(i % 2))
    t = trend.trend(tmp_path / "s", session=spark_session)
    paths = trend.write(t, tmp_path / "out")
    md = paths["md"].read_text()
    assert md.splitlines()[0].startswith("| day | Kafka | nemesis | client | runs |")
    assert "| 2026-11-21 | 3.9.1 | none | kafka-python | 1 | 0 | 1 | 0 | 0 | 0 |  |  | - | - |" in md
    assert paths["svg"].read_text().count("<polyline") == 2  # one line per version
    assert "11-20" in paths["svg"].read_text() and "11-21" in paths["svg"].read_text()
    html = paths["html"].read_text()
    assert html.count('<svg class="plot"') == 2 and "<table>" in html
    assert json.loads(paths["json"].read_text())["runs"] == 3
    header = (
        "day,version,nemesis,client,runs,valid,invalid,unknown,unchecked,stalled,kept,held,control_checked,control_invalid,"
        "anomalies"
    )
    assert paths["csv"].read_text().splitlines()[0] == header


def test_runs_that_were_never_checked_are_counted_as_unchecked(tmp_path, spark_session):
    make_run(tmp_path, "a/20261120T000000", valid=None, run_id=False)
    (tmp_path / "a" / "latest").symlink_to("20261120T000000")  # no run id: the directory tells runs apart
    t = trend.trend(tmp_path, session=spark_session)
    assert [(r.runs, r.unchecked, r.valid) for r in t.rows] == [(1, 1, 0)] and t.invalid_runs == []
    assert trend.charts(t)[0].count("<circle") == 0  # no checked run: no invalid share to plot


def test_a_store_without_runs_is_bad_input(tmp_path, spark_session):
    with pytest.raises(BadHistory, match="no run directories"):
        trend.trend(tmp_path, session=spark_session)
    with pytest.raises(BadHistory, match="not a directory"):
        trend.trend(tmp_path / "missing", session=spark_session)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "config.json").write_text("{}")  # not a run's config: no Kafka version
    with pytest.raises(BadHistory, match="no run directories"):
        trend.trend(tmp_path, session=spark_session)


def test_the_command_says_what_is_wrong_with_the_store_and_exits_2(tmp_path, capsys):
    from kafka_chaos.frontends.cli import main

    assert main(["trend", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"kafka-chaos: error: {tmp_path / 'missing'}: not a directory"


def live(kept: float, warning: str | None = None) -> dict:
    """The liveness section of results.json or summary.json (checkers/measures/liveness.py), cut to what trend reads."""
    return {"ratios": {"ops_per_s": {"between_faults": kept}}, "warning": warning}


def test_stalled_runs_and_the_rate_kept_between_faults(tmp_path, spark_session):
    kill = {"faults": ["kill"], "interval": 10}
    make_run(tmp_path, "a/1", nemesis=kill, liveness=live(0.9))
    make_run(tmp_path, "a/2", nemesis=kill, liveness=live(0.2, "the workload stalled: ..."))
    make_run(tmp_path, "a/3", nemesis=kill, valid=None, liveness=live(0.3, "the workload stalled: ..."))  # summary
    make_run(tmp_path, "a/4", nemesis=kill)  # an older run without liveness: neither stalled nor a ratio
    row = trend.trend(tmp_path, session=spark_session).rows[0]
    assert (row.runs, row.stalled, row.kept) == (4, 2, pytest.approx(0.3))
    md = trend.markdown(trend.trend(tmp_path, session=spark_session))
    assert "| 2 | 30% |" in md


def test_the_median_share_of_a_group_run_with_every_key_held(tmp_path, spark_session):
    kill = {"faults": ["kill"]}
    make_run(tmp_path, "a/1", nemesis=kill, held=0.9)
    make_run(tmp_path, "a/2", nemesis=kill, held=0.4)
    make_run(tmp_path, "a/3", nemesis=kill, valid=None, held=0.7)  # never checked: from its summary
    make_run(tmp_path, "a/4", nemesis=kill)  # no group members: not in the median
    t = trend.trend(tmp_path, session=spark_session)
    assert t.rows[0].held == pytest.approx(0.7)
    assert "| 70% |" in trend.markdown(t)
    make_run(tmp_path / "b", "b/1", nemesis=kill)
    assert trend.trend(tmp_path / "b", session=spark_session).rows[0].held is None


def test_each_client_is_a_row_of_its_own(tmp_path, spark_session):
    kill = {"faults": ["kill"]}
    make_run(tmp_path, "a/1", nemesis=kill, client="java", valid=False, errors={"lost-write": 2})
    make_run(tmp_path, "a/2", nemesis=kill, client="java")
    make_run(tmp_path, "a/3", nemesis=kill, client="librdkafka")
    make_run(tmp_path, "a/4", nemesis=kill)  # before the client was recorded: kafka-python
    t = trend.trend(tmp_path, session=spark_session)
    by_client = {r.client: (r.runs, r.invalid) for r in t.rows}
    assert by_client == {"java": (2, 1), "librdkafka": (1, 0), "kafka-python": (1, 0)}
    assert [b["client"] for b in t.invalid_runs] == ["java"]
    assert "| 2026-11-20 | 4.3.1 | kill | java | 2 | 1 | 1 |" in trend.markdown(t)


def test_the_overlapping_mix_is_a_row_of_its_own(tmp_path, spark_session):
    make_run(tmp_path, "a/1", nemesis={"faults": ["kill", "partition"], "mix": "overlap"}, valid=False)
    make_run(tmp_path, "a/2", nemesis={"faults": ["kill", "partition"]})  # the near miss: the serial mix
    r = rows(trend.trend(tmp_path, session=spark_session))
    overlap = r[("2026-11-20", "4.3.1", "kill,partition (overlap)")]
    serial = r[("2026-11-20", "4.3.1", "kill,partition")]
    assert (overlap.runs, overlap.invalid) == (1, 1) and (serial.runs, serial.valid) == (1, 1)


def test_runs_whose_control_plane_was_checked_and_failed(tmp_path, spark_session):
    make_run(tmp_path, "a/1")  # from before the control plane was checked
    make_run(tmp_path, "a/2", control_plane={"checked": False, "why": "no control-plane evidence"})
    make_run(tmp_path, "a/3", control_plane={"checked": True})
    make_run(tmp_path, "a/4", valid=False, errors={"quorum-split-brain": 1}, control_plane={"checked": True})
    make_run(tmp_path, "a/5", valid=False, errors={"lost-write": 2}, control_plane={"checked": True})
    (row,) = trend.trend(tmp_path, session=spark_session).rows
    assert (row.control_checked, row.control_invalid) == (3, 1)
    assert trend._control_cell(row) == "1 of 3"
