"""explore's search on a fake runner (runs/explore.py): schedules that reach new states are kept
and mutated, the others dropped; the same seed makes the same campaign; a campaign stopped by
Ctrl-C or by its budget resumes where it stopped; its files and its JSON document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.space import Move, Space
from kafka_chaos.runs import explore, explore_files
from kafka_chaos.runs.explore import BASELINE, EXPLORE, Campaign, Outcome, parse_budget, search
from kafka_chaos.workloads.options import WorkloadOptions


def campaign(path: Path, seed: int = 11, baseline: bool = False) -> Campaign:
    space = Space.for_run(None, "queue", False, 30.0)
    mix = {"faults": list(space.faults), "interval": 10.0, "targets": "any"} if baseline else None
    path.mkdir(parents=True, exist_ok=True)
    return Campaign(path, seed, ClusterSpec("4.3.1"), WorkloadOptions(), space, mix)


class Fake:
    """A run's states are the (fault, target) pairs of its script; a wipe while a partition is held
    finds a lost write. Counts its runs; raises KeyboardInterrupt at run `stop_at`."""

    def __init__(self, stop_at: int | None = None) -> None:
        self.plans: list[tuple[NemesisPlan, int, str]] = []
        self.stop_at = stop_at

    def __call__(self, plan: NemesisPlan, seed: int, mix: str) -> Outcome:
        self.plans.append((plan, seed, mix))
        if len(self.plans) == self.stop_at:
            raise KeyboardInterrupt
        steps = plan.script or []
        states = frozenset((s.fault, s.target) for s in steps)
        held = [(s.at, s.at + (s.hold or (10 if s.hold_name else 0))) for s in steps if s.fault == "partition"]
        lost = any(a <= s.at < b for s in steps if s.fault == "wipe" for a, b in held)
        return Outcome(
            f"/runs/{mix}/{len(self.plans)}",
            anomalies=["lost-write"] if lost else [],
            exit_code=1 if lost else 0,
            verdict="INVALID" if lost else "VALID",
            states=states,
        )


def test_schedules_that_reach_new_states_are_kept_and_the_others_dropped(tmp_path):
    fake = Fake()
    c = search(campaign(tmp_path), fake, runs=40, reporter=lambda m: None)
    assert c.runs() == 40 and len(c.trials) == 40
    kept = {t["run_dir"] for t in c.trials if t["new"]}
    assert {e.run for e in c.corpus} == kept and 0 < len(kept) < 40
    assert sum(len(e.new) for e in c.corpus) == len(c.seen[EXPLORE])
    # Each corpus member holds exactly the states its run reached first.
    assert all(c.seen[EXPLORE][s] == e.run for e in c.corpus for s in e.new)
    # Later schedules are mutations of kept ones: the corpus was picked from.
    assert sum(e.picked for e in c.corpus) > 0
    assert all(p.script and p.label == "explore" and not p.faults for p, _, _ in fake.plans)
    assert all(c.space.problems([Move.from_json(m) for m in t["schedule"]]) == [] for t in c.trials)


def test_the_same_seed_makes_the_same_campaign(tmp_path):
    a, b, other = Fake(), Fake(), Fake()
    search(campaign(tmp_path / "a"), a, runs=15, reporter=lambda m: None)
    search(campaign(tmp_path / "b"), b, runs=15, reporter=lambda m: None)
    search(campaign(tmp_path / "c", seed=12), other, runs=15, reporter=lambda m: None)
    scripts = lambda fake: [(p.script, seed) for p, seed, _ in fake.plans]  # noqa: E731
    assert scripts(a) == scripts(b) != scripts(other)


def test_ctrl_c_saves_the_campaign_and_resume_goes_on_as_if_never_stopped(tmp_path):
    whole = Fake()
    search(campaign(tmp_path / "whole"), whole, runs=12, reporter=lambda m: None)
    stopped = search(campaign(tmp_path / "parts"), Fake(stop_at=5), runs=12, reporter=lambda m: None)
    assert stopped.interrupted and stopped.runs() == 4
    resumed = Campaign.load(tmp_path / "parts")
    assert resumed.runs() == 4 and len(resumed.corpus) == len(stopped.corpus)
    rest = Fake()
    search(resumed, rest, runs=12, reporter=lambda m: None)
    assert [p.script for p, _, _ in rest.plans] == [p.script for p, _, _ in whole.plans[4:]]
    again = Campaign.load(tmp_path / "parts")
    full = Campaign.load(tmp_path / "whole")
    assert again.seen[EXPLORE].keys() == full.seen[EXPLORE].keys()
    assert [(e.moves, e.new, e.picked) for e in again.corpus] == [(e.moves, e.new, e.picked) for e in full.corpus]
    assert again.chains == full.chains and sum(again.chains.pulls.values()) >= 1


def test_the_budget_stops_the_campaign_before_a_run_it_cannot_finish(tmp_path):
    now = [0.0]

    def slow(plan, seed, mix):
        now[0] += 60.0
        return Fake()(plan, seed, mix)

    c = search(campaign(tmp_path), slow, budget_s=200.0, reporter=lambda m: None, clock=lambda: now[0])
    assert c.runs() == 3 and c.elapsed_s == 180.0  # a fourth would end past 200 s
    with pytest.raises(Exception, match="budget"):
        search(campaign(tmp_path / "none"), Fake())


def test_a_baseline_run_of_todays_mix_follows_each_explore_run(tmp_path):
    fake = Fake()
    c = search(campaign(tmp_path, baseline=True), fake, runs=3, reporter=lambda m: None)
    assert [mix for _, _, mix in fake.plans] == [EXPLORE, BASELINE] * 3
    base = [p for p, _, mix in fake.plans if mix == BASELINE]
    assert all(p.script is None and p.faults == list(c.space.faults) and p.interval == 10.0 for p in base)
    doc = c.document()
    assert doc["runs"] == 3 and doc["baseline"]["runs"] == 3


def test_findings_the_document_the_exit_code_and_the_files(tmp_path):
    lines: list[str] = []
    # seed 14: a campaign that meets the fake's lost write within 60 runs (11 of seeds 1-15 do)
    c = search(campaign(tmp_path, seed=14), Fake(), runs=60, reporter=lines.append)
    assert c.findings, "the fake's lost write is in the space: a wipe during a partition"
    assert lines[-1].startswith("explore: explore run 60") and "findings" in lines[-1]
    explore.shrink_findings(c, Fake(), None)  # shrinking off: each script as it ran
    doc = c.document()
    assert set(doc) >= {"runs", "states", "findings"} and doc["runs"] == 60 and doc["states"] == len(c.seen[EXPLORE])
    for finding in doc["findings"]:
        assert set(finding) == {"run", "anomalies", "script", "reproduced"}
        assert finding["anomalies"] == ["lost-write"] and finding["reproduced"] is None
        script = json.loads(Path(finding["script"]).read_text())  # a script run --nemesis-script takes
        assert any(s["fault"] == "wipe" for s in script) and all({"at", "fault", "target"} <= set(s) for s in script)
    assert c.exit_code() == 1
    paths = explore_files.write_all(c)
    assert "## Findings" in paths["md"].read_text() and "lost-write" in paths["md"].read_text()
    table = json.loads(paths["json"].read_text())
    assert table["runs"] == 60 and len(table["trials"]) == 60
    assert table["depth"] == c.depth  # what bench/explore_campaigns.py reports per mix
    svg = paths["svg"].read_text()
    assert svg.startswith("<svg") and 'class="anomaly"' in svg and "explore (" in svg


def test_exit_codes_without_a_finding(tmp_path):
    c = campaign(tmp_path)
    assert c.exit_code() == 3  # no run: nothing proved
    c.trials = [{"exit_code": 4}, {"exit_code": None}]
    assert c.exit_code() == 4
    c.trials.append({"exit_code": 0})
    assert c.exit_code() == 0


def test_the_disk_policy(tmp_path):
    def run_dir(name: str) -> Path:
        d = tmp_path / name
        for sub in ("cluster/kafka-1/data", "control-plane/metadata"):
            (d / sub).mkdir(parents=True)
        for f in ("config.json", "summary.json", "results.json", "history.jsonl", "report.html"):
            (d / f).write_text("{}")
        explore_files.write_states(d, {("isr-one", "kill")})
        return d

    for policy, left in (
        (explore_files.ALL, {"cluster", "control-plane", "history.jsonl", "report.html"}),
        (explore_files.EVIDENCE, {"control-plane", "history.jsonl", "report.html"}),
        (explore_files.SUMMARY, set()),
    ):
        d = run_dir(policy)
        explore_files.prune(d, policy)
        assert {p.name for p in d.iterdir()} == {"config.json", "summary.json", "results.json", "states.json"} | left
    assert json.loads((tmp_path / "summary" / "states.json").read_text()) == ["isr-one | kill"]


@pytest.mark.parametrize("text, seconds", [("30m", 1800), ("90s", 90), ("1h30m", 5400), ("45", 45), ("0.5h", 1800)])
def test_budgets(text, seconds):
    assert parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["", "30x", "m", "-5", "0", "1h 30m"])
def test_bad_budgets(text):
    with pytest.raises(Exception, match="budget"):
        parse_budget(text)


def test_a_finding_is_shrunk_to_the_faults_that_find_it(tmp_path):
    """With runs/shrink.py: the fake's lost write needs a wipe inside a partition's hold; the
    finding's other faults go, and the script says in how many trials it found it again."""
    c = campaign(tmp_path)
    moves = [
        Move(6.0, "kill", ("follower",), 4.0),
        Move(8.0, "partition", ("leader",), 8.0, "isolate"),
        Move(10.0, "wipe", ("controller",)),
    ]
    c.findings.append(
        {
            "run": None,
            "mix": EXPLORE,
            "anomalies": ["lost-write"],
            "script": None,
            "reproduced": None,
            "found_s": 1.0,
            "shrunk": False,
            "schedule": [m.to_json() for m in moves],
        }
    )
    fake = Fake()
    explore.shrink_findings(c, fake, 600.0, reporter=lambda m: None)
    finding = c.findings[0]
    assert finding["shrunk"] and finding["reproduced"] == 5  # the fake always finds it: 5 of 5
    assert [s["fault"] for s in json.loads(Path(finding["script"]).read_text())] == ["partition", "wipe"]
    assert {mix for _, _, mix in fake.plans} == {"shrink"}


def test_a_run_that_climbs_deeper_is_kept_without_new_states_and_picked_more(tmp_path):
    from kafka_chaos.checkers.measures.ladders import Waypoint

    c = campaign(tmp_path)
    moves = [Move(6.0, "kill", ("leader",), 4.0)]
    c.record(EXPLORE, 1, moves, Outcome("/r/1", states=frozenset({("a",)}), depths={"data": 1}), 0, 1)
    assert len(c.corpus) == 1
    same = Outcome("/r/2", states=frozenset({("a",)}), depths={"data": 1})
    c.record(EXPLORE, 2, moves, same, 1, 2)
    assert len(c.corpus) == 1  # nothing new, nothing deeper: dropped
    deep = Waypoint("data", 3, 9_000_000_000, ("kafka-2",))
    deeper = Outcome("/r/3", states=frozenset({("a",)}), depths={"data": 3}, deepest=deep)
    c.record(EXPLORE, 3, moves, deeper, 2, 3)
    assert len(c.corpus) == 2 and c.corpus[1].depth == 3 and c.corpus[1].deepest == deep
    assert c.corpus[1].weight > c.corpus[0].weight
    assert c.trials[-1]["depths"] == {"data": 3} and c.trials[-1]["deepest"]["name"] == "last-replica-lost-unflushed"
    again = Campaign.load(c.dir) if c.save() else None
    assert again is not None and again.corpus == c.corpus and again.depth == c.depth


def test_every_run_pays_a_chain_shape_and_a_mutation_pays_its_lineages(tmp_path):
    c = search(campaign(tmp_path), Fake(), runs=40, reporter=lambda m: None)
    fresh = [t for t in c.trials if t["chain"] is not None]
    mutated = [t for t in c.trials if t["descends"] is not None]
    assert fresh and mutated and not [t for t in fresh if t["descends"]]
    assert sum(c.chains.pulls.values()) == len(fresh) + len(mutated) > len(fresh)
    # a kept mutation's corpus member names the shape of the fresh draw it descends from
    by_run = {t["run_dir"]: t for t in c.trials}
    for e in c.corpus:
        t = by_run[e.run]
        assert e.chain == (t["chain"] or t["descends"])
    again = Campaign.load(tmp_path)
    assert [e.chain for e in again.corpus] == [e.chain for e in c.corpus]
