"""explore's choice of a fresh schedule's shape (runs/bandit.py, nemesis/space.py CHAINS): each
shape tried once, then the one whose runs climbed deepest, the others still tried now and then;
and each shape draws what it says."""

import random
import re
from collections import Counter
from pathlib import Path

from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.space import CHAIN, CHAINS, Space
from kafka_chaos.runs import explore_files
from kafka_chaos.runs.bandit import Bandit, reward
from kafka_chaos.runs.explore import EXPLORE, Campaign, Outcome, search
from tests.unit.test_explore import campaign

SPACE = Space.for_run(None, "queue", False, 30.0)


def test_a_runs_reward_is_the_deepest_fraction_of_a_ladder_it_climbed():
    assert reward({}) == 0.0
    assert reward({"data": 2}) == 0.5
    assert reward({"data": 1, "quorum": 3}) == 1.0
    assert reward({"voter": 1}) == 1 / 3


def test_each_arm_is_tried_once_in_order_then_the_best_mostly():
    rng = random.Random(1)
    b = Bandit(("a", "b", "c"))
    tried = []
    for _ in range(3):
        tried.append(b.choose(rng))
        b.pay(tried[-1], {"a": 0.0, "b": 1.0, "c": 0.2}[tried[-1]])
    assert tried == ["a", "b", "c"]
    for _ in range(200):
        arm = b.choose(rng)
        b.pay(arm, {"a": 0.0, "b": 1.0, "c": 0.2}[arm])
    assert b.pulls["b"] > 150 and b.pulls["a"] >= 2 and b.pulls["c"] >= 2, b.pulls  # the others still tried
    assert b.mean("b") == 1.0 and Bandit(("a",)).mean("a") is None
    assert Bandit.from_json(b.to_json(), ["x"]) == b and Bandit.from_json(None, ["x", "y"]) == Bandit(("x", "y"))


def test_each_chain_draws_its_shape():
    rng = random.Random(4)
    for _ in range(100):
        causal = SPACE.draw(rng, CHAIN["causal"])
        assert len(causal) >= 2 and SPACE.problems(causal) == []
        # every move but the first drawn waits (a guard that reads no binding is always usable)
        assert sum(m.when is None for m in causal) <= 1, causal
    scattered = [SPACE.draw(rng, CHAIN["scatter"]) for _ in range(200)]
    assert any(len(d) == 1 for d in scattered) and any(sum(m.when is None for m in d) >= 2 for d in scattered)


class Deep:
    """A fake run that climbs to the top of the data ladder when every move but one waits for a
    guard, and nowhere otherwise."""

    def __call__(self, plan: NemesisPlan, seed: int, mix: str) -> Outcome:
        steps = plan.script or []
        guarded = len(steps) >= 2 and sum(not s.when for s in steps) <= 1
        states = frozenset((s.fault, s.target, s.when or "") for s in steps)
        return Outcome(f"/runs/{seed}", states=states, depths={"data": 4} if guarded else {})


def test_a_campaign_draws_more_of_the_shape_whose_runs_climb_deepest(tmp_path):
    c = search(campaign(tmp_path, seed=3), Deep(), runs=80, reporter=lambda m: None)
    pulls = c.chains.pulls
    fresh = [t for t in c.trials if t["chain"] is not None]
    draws = Counter(t["chain"] for t in fresh)
    assert draws["causal"] + draws["guarded"] >= 2 * (draws["scatter"] + draws["related"]), draws
    lineage = [t for t in c.trials if t["descends"] is not None]
    assert len(fresh) + len(lineage) == sum(pulls.values()) and all(t["mix"] == EXPLORE for t in fresh)
    assert Campaign.load(c.dir).chains == c.chains
    md = explore_files.markdown(c)
    rows = md.split("## Chain shapes", 1)[1].split("\n## ", 1)[0]
    causal = c.chains.mean("causal")
    assert f"| causal | {pulls['causal']} | {causal:.2f} |" in rows and "| scatter |" in rows, rows
    assert any(line.startswith(f"| explore | {t['run']} | [{t['chain']}] ") for t in fresh for line in md.splitlines())


def test_docs_explore_gives_each_chain_shape_as_the_code_has_it():
    text = (Path(__file__).parents[2] / "docs" / "explore.md").read_text()
    table = text.split("| shape | related role |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([a-z]+)` \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (\d) to (\d) \|$", table, flags=re.M)
    expected = [(c.name, c.related, c.guard, c.overlap, c.fewest, SPACE.max_steps) for c in CHAINS]
    assert [(n, float(r), float(g), float(o), int(a), int(b)) for n, r, g, o, a, b in rows] == expected
