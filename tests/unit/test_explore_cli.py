"""`kafka-chaos explore`'s bad input: one line on stderr and exit code 2, before anything runs."""

import pytest

from kafka_chaos.frontends.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (["explore"], "needs a budget"),
        (["explore", "--budget", "30x"], "expected a budget"),
        (["explore", "--runs", "0"], "at least 1"),
        (["explore", "--runs", "2", "--nemesis-script", "steps.json"], "draws its own schedules"),
        (["explore", "--runs", "2", "--resume", "/nonexistent/campaign"], "not a campaign directory"),
        (["explore", "--runs", "2", "--nemesis", "explode"], "unknown fault"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, message, capsys, tmp_path):
    assert main([*argv, "--store", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_the_nemesis_options_shape_the_space_and_the_baseline(tmp_path, monkeypatch):
    """`--nemesis` names the families, `--nemesis-start` the quiet start, the interval and targets
    the baseline's mix; nothing runs here (run_campaign is replaced)."""
    from kafka_chaos.runs import explore

    made = []
    monkeypatch.setattr(explore, "run_campaign", lambda campaign, **kw: made.append(campaign) or campaign)
    argv = ["explore", "--runs", "1", "--nemesis", "kill,partition", "--nemesis-start", "8", "--baseline"]
    argv += ["--nemesis-interval", "5", "--nemesis-targets", "brokers", "--store", str(tmp_path), "--seed", "3"]
    assert main(argv) == 3  # no run: nothing proved
    (c,) = made
    assert c.space.faults == ("kill", "partition") and c.space.start == 8 and c.seed == 3
    assert c.baseline == {"faults": ["kill", "partition"], "interval": 5.0, "start": 8.0, "targets": "brokers"}
    assert c.dir.parent == tmp_path / "explore" and (c.dir / "campaign.json").exists() is False
