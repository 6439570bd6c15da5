"""The fault records (nemesis/faults.py): the one place a fault kind is described, and what is
derived from them: the docs' table, the random mix, the heals, and the loop of timed steps."""

from pathlib import Path

import pytest

from kafka_chaos.checkers.faults import SPARE_COLOURS, colours_of, ends_of, fault_windows
from kafka_chaos.frontends.cli import build_parser
from kafka_chaos.nemesis import faults
from kafka_chaos.nemesis.plan import NemesisPlan, nemesis_plan
from kafka_chaos.nemesis.schedule import Step, play

DOCS = Path(__file__).resolve().parents[2] / "docs" / "nemesis.md"


def test_the_docs_table_is_the_records():
    assert faults.markdown_table() in DOCS.read_text(), (
        "docs/nemesis.md's fault table differs from nemesis/faults.py: "
        "paste the output of `python -m kafka_chaos.nemesis.faults`"
    )


def test_every_heal_is_a_fault_and_every_fault_left_in_place_is_healed_at_the_end():
    final = {f.name for f in faults.FINAL}
    for record in faults.FAULTS:
        assert record.undone_by is None or record.undone_by in faults.BY_NAME, record.name
        assert record.undone_by is None or record.undone_by in final, record.name  # heal_all runs it
        assert set(record.closes) <= final, record.name
    assert final == set(faults.HEALS.values())  # heal_all runs nothing that heals nothing
    assert set(faults.RANDOM) <= set(faults.NAMES)
    assert not set(faults.RANDOM) & set(faults.HEALS.values())  # a random mix never picks a bare heal


class _Nemesis:
    """Records what was applied; `fails` are faults whose application fails."""

    def __init__(self, fails: tuple[str, ...] = ()):
        self.applied: list[tuple[str, str]] = []
        self.fails = fails

    def apply(self, fault: str, target: str, **options) -> dict:
        self.applied.append((fault, target))
        if fault in self.fails:
            return {"target": target, "error": "no such node"}
        return {"target": target, "nodes": ["kafka-2"]}


@pytest.mark.parametrize(
    "steps, fails, applied",
    [
        # a held fault is healed by its record's heal, on the nodes it hit
        ([Step(0, "kill", "leader:t/0", hold=5)], (), [("kill", "leader:t/0"), ("start", "kafka-2")]),
        ([Step(0, "pause", hold=1), Step(2, "partition", hold=1)], (),
         [("pause", "random"), ("resume", "kafka-2"), ("partition", "random"), ("heal", "kafka-2")]),
        # a fault that heals itself, or is not held, gets no heal; nor does one that failed
        ([Step(0, "wipe", hold=5)], (), [("wipe", "random")]),
        ([Step(0, "kill")], (), [("kill", "random")]),
        ([Step(0, "kill", hold=5)], ("kill",), [("kill", "random")]),
    ],
)  # fmt: skip
def test_play_heals_what_its_record_says(steps, fails, applied):
    nemesis, times = _Nemesis(fails), []
    assert play(steps, lambda at: times.append(at) or True, nemesis.apply)
    assert nemesis.applied == applied


def test_play_stops_when_asked():
    nemesis = _Nemesis()
    steps = [Step(0, "kill", hold=5), Step(10, "pause")]
    assert not play(steps, lambda at: at < 5, nemesis.apply)  # stopped while the kill was held
    assert nemesis.applied == [("kill", "random")]


def test_the_nemesis_flags_help_is_made_from_the_records_when_shown():
    run = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "run")[1]
    (nemesis_flag,) = [a for a in run._actions if "--nemesis" in a.option_strings]
    assert nemesis_flag.help.strip().rpartition(": ")[2].split(",") == list(faults.RANDOM)
    assert "wipe,lose-" in run.format_help()  # argparse renders it (and wraps it) like any help text


def test_every_drawn_fault_has_its_colour_in_its_record_and_every_plan_writes_them():
    applied = {f.name for f in faults.FAULTS if f.name not in faults.HEALS.values()}
    assert set(faults.COLOURS) == applied  # the faults that undo others are not drawn
    assert len(set(faults.COLOURS.values())) == len(faults.COLOURS)
    plans = [nemesis_plan("kill", 5, None), nemesis_plan(None, 5, [{"at": 1, "fault": "pause"}]),
             NemesisPlan(custom=lambda nemesis: None, label="s")]  # fmt: skip
    for plan in plans:
        assert colours_of({"nemesis": plan.describe()}) == faults.COLOURS
    assert NemesisPlan().describe() == {}  # no nemesis, nothing to draw


def test_a_window_is_shaded_with_its_runs_colour_else_a_spare_one():
    ops = [_op("kill", 1, 1.1), _op("start", 2, 2.2), _op("elect-unclean", 3, 3.1), _op("pause", 4, 4.1)]
    given = fault_windows(ops, 9.0, {"kill": "#d62728", "pause": "#ff7f0e"})
    assert [(w["f"], w["colour"]) for w in given] == [
        ("kill", "#d62728"), ("elect-unclean", SPARE_COLOURS[0]), ("pause", "#ff7f0e"),
    ]  # fmt: skip
    # The near miss: the same history checked without its config.json gets the spares, in order.
    bare = fault_windows(ops, 9.0)
    assert [w["colour"] for w in bare] == list(SPARE_COLOURS[:3])
    assert colours_of({}) == {} == colours_of({"nemesis": {"faults": ["kill"]}})  # an older run's config


def test_every_nemesis_event_says_how_its_fault_ends():
    assert faults.named_ends("kill") == {"undone_by": "start"}
    assert faults.named_ends("pause") == {"undone_by": "resume"}
    assert faults.named_ends("start") == {"heals": ["kill", "stop"]}
    assert faults.named_ends("heal") == {"heals": ["partition", "stall", "hold-endtxn", "hold-markers"]}
    assert faults.named_ends("wipe") == {} == faults.named_ends("lose-unflushed")  # over when done
    for record in faults.FAULTS:
        ends = faults.named_ends(record.name)
        assert ("undone_by" in ends) == (record.undone_by is not None), record.name
        for healed in ends.get("heals", []):
            assert faults.BY_NAME[healed].undone_by == record.name


def _op(f: str, start: float, end: float, type: str = "ok", value=None) -> dict:
    value = faults.named_ends(f) if value is None else value
    return {"f": f, "type": type, "start": start, "end": end, **ends_of(value)}


def test_a_fault_lasts_until_the_operation_that_names_it_heals_it():
    ops = [_op("kill", 1, 1.1), _op("wipe", 2, 2.5), _op("start", 5, 5.2), _op("pause", 6, 6.1)]
    windows = [(w["f"], w["start"], w["end"]) for w in fault_windows(ops, 20.0)]
    # The kill to its start's completion, the wipe over when done, the unhealed pause to the end.
    assert windows == [("kill", 1, 5.2), ("wipe", 2, 2.5), ("pause", 6, 20.0)]


def test_an_operation_that_heals_something_else_does_not_end_the_fault():
    # The near miss: a resume (it heals pauses) leaves the kill in place; a failed kill opens nothing.
    ops = [_op("kill", 1, 1.1), _op("resume", 5, 5.2), _op("kill", 6, 6.1, type="fail")]
    assert [(w["f"], w["end"]) for w in fault_windows(ops, 20.0)] == [("kill", 20.0)]


def test_a_history_that_does_not_say_how_faults_end_draws_them_as_instants():
    ops = [_op("kill", 1, 1.1, value={}), _op("start", 5, 5.2, value={"nodes": []})]
    assert [(w["f"], w["start"], w["end"]) for w in fault_windows(ops, 20.0)] == [("kill", 1, 1.1), ("start", 5, 5.2)]
