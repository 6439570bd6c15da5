"""config.json read once into a RunConfig: what a run wrote comes back whole, and a run directory
without one reads as the empty config."""

import json

from kafka_chaos.history.run_config import RunConfig
from kafka_chaos.history.run_dir import RunDir

WRITTEN = {
    "name": "chaos",
    "kafka_version": "4.3.1",
    "broker_config": {"min.insync.replicas": "2"},
    "metadata_version": None,
    "quorum": "dynamic",
    "workload": {"topic": "t", "keys": 3},
    "nemesis": {"colours": {"kill": "#d62728"}},
    "control_plane": True,
    "history_started_unix_ms": 1795709780000,
    "a_field_from_a_later_release": [1, 2],
}


def test_what_a_run_wrote_reads_back_whole(tmp_path):
    RunDir(tmp_path).config.write_text(json.dumps(WRITTEN))
    config = RunConfig.load(tmp_path)
    assert config.known and config.quorum == "dynamic" and config.control_plane is True
    assert config.topic == "t" and config.keys == ["t/0", "t/1", "t/2"]
    assert config.extra == {"a_field_from_a_later_release": [1, 2]}
    written = config.to_json()
    assert {k: v for k, v in WRITTEN.items() if v is not None}.items() <= written.items()
    assert "cluster_id" not in written and "client" not in written  # never learned: not written
    assert "tiered" not in written  # no tiered storage: not written
    assert RunConfig.from_json(written) == config
    tiered = {"storage": "LocalTieredStorage", "release": "4.3.1", "retention": {"nothing_deletable": True}}
    assert RunConfig.from_json({**WRITTEN, "tiered": tiered}).to_json()["tiered"] == tiered


def test_a_bare_history_has_the_empty_config(tmp_path):
    for config in (RunConfig.load(tmp_path), RunConfig.load(None)):
        assert not config.known and config.control_plane is None and config.keys is None
        assert config.topic == "chaos" and config.quorum == "static"
    RunDir(tmp_path).config.write_text("[1, 2]")  # not an object
    assert not RunConfig.load(tmp_path).known
