"""`kafka-chaos explore`: a campaign of short runs against one Kafka version and shape, each run's
fault schedule drawn from a bounded space (nemesis/space.py) and scored by the states it reached
(checkers/measures/states.py). Schedules that reached a state no earlier run had are kept (the
corpus) and mutated; the others are dropped. docs/explore.md says what a user sees.

The loop, per run: a schedule (a fresh draw, or a mutation of a corpus member chosen by its new
states and how often it was picked already), the run (runs/run.py, its steps a script), its check
in the campaign's one Spark session, its states, the corpus and the counters saved
(campaign.json), the run directory pruned to the disk policy (explore_files.py), a progress line.
With `--baseline`, a run of today's random mix follows each explore run on the same budget. When
the budget is spent, each finding of a new set of anomalies is shrunk (runs/shrink.py) and the
table, the JSON and the plot are written (also after Ctrl-C, which stops the run in progress as
`run` does: healed, its cluster removed).

Every random choice comes from the campaign's seed: run i's schedule from the stream
`explore:i`, its run seed from `run:explore:i` (nemesis/streams.py). A resumed campaign goes on
at the next i with its corpus and seen states, so it draws what the campaign would have drawn.
"""

from __future__ import annotations

import gc
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kafka_chaos.checkers.measures.ladders import Waypoint, climb
from kafka_chaos.checkers.measures.states import State, run_states, state_text
from kafka_chaos.harness.cluster_spec import ClusterSpec
from kafka_chaos.harness.errors import UsageError
from kafka_chaos.history.reporter import Reporter
from kafka_chaos.nemesis.plan import NemesisPlan
from kafka_chaos.nemesis.roles import roles_for
from kafka_chaos.nemesis.schedule import Step
from kafka_chaos.nemesis.space import CHAIN, CHAINS, Move, Space, ordered, steps
from kafka_chaos.nemesis.streams import stream
from kafka_chaos.runs import explore_files as files
from kafka_chaos.runs import isolated
from kafka_chaos.runs import shrink as shrinking
from kafka_chaos.runs.bandit import Bandit, reward
from kafka_chaos.runs.spec import RunSpec
from kafka_chaos.workloads.options import WorkloadOptions

EXPLORE, BASELINE, MIXES = files.EXPLORE, files.BASELINE, files.MIXES
#: How often a run's schedule is a fresh draw rather than a mutation of the corpus.
FRESH = 0.25
#: How much each rung a corpus member's run climbed weighs in picking it (against 1 per new state).
DEPTH_WEIGHT = 3.0
#: How often a mutation of a member with a waypoint adds its next move there (Space.deepen).
DEEPEN = 0.5
#: Runs whose evidence is kept although they found nothing and reached nothing new: 1 in this many.
SAMPLE_EVERY = 10
#: A finding is shrunk to a schedule that finds its anomalies in NEED of RUNS runs (the issue's bar).
RUNS, NEED = 5, 3
CAMPAIGN = "campaign.json"


def parse_budget(text: str) -> float:
    """Seconds from `30m`, `90s`, `1h`, `1h30m` or a bare number of seconds; UsageError otherwise."""
    text = text.strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        seconds = float(text)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)([hms])", text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise UsageError(f"expected a budget such as 30m, 90s or 1h30m, got {text!r}")
        seconds = sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in parts)
    if seconds <= 0:
        raise UsageError(f"the budget must be more than 0 s, got {text!r}")
    return seconds


@dataclass
class Outcome:
    """What one run made, as the campaign keeps it."""

    run_dir: str | None
    anomalies: list[str] = field(default_factory=list)
    exit_code: int | None = None
    verdict: str = "not checked"
    check_s: float = 0.0
    wall_s: float = 0.0
    error: str | None = None
    states: frozenset[State] = frozenset()
    #: resident memory after the run (MB): this process's and the Spark driver's, where known
    memory: dict[str, float] = field(default_factory=dict)
    #: how far it climbed each progress ladder (checkers/measures/ladders.py), and its deepest waypoint
    depths: dict[str, int] = field(default_factory=dict)
    deepest: Waypoint | None = None


#: Runs one run: (its nemesis plan, its seed, its mix) -> what it made. The real one is `Runner`;
#: tests pass a fake.
Execute = Callable[[NemesisPlan, int, str], Outcome]


@dataclass
class Entry:
    """A corpus member: a schedule that reached states no run before it had."""

    moves: list[Move]
    new: list[State]
    run: str | None
    picked: int = 0
    #: the rungs its run climbed, all ladders together, and its deepest waypoint
    depth: int = 0
    deepest: Waypoint | None = None
    #: the chain shape of the fresh draw it descends from (None: from before shapes were drawn)
    chain: str | None = None

    @property
    def weight(self) -> float:
        """How likely it is picked for a mutation: depth first (DEPTH_WEIGHT per rung), then its
        new states, less for each time it was picked."""
        return (1 + len(self.new)) * (1 + DEPTH_WEIGHT * self.depth) / (1 + self.picked)

    def to_json(self) -> dict[str, Any]:
        return {
            "moves": [m.to_json() for m in self.moves],
            "new": [list(s) for s in self.new],
            "run": self.run,
            "picked": self.picked,
            "depth": self.depth,
            "deepest": self.deepest.to_json() if self.deepest else None,
            "chain": self.chain,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        deepest = data.get("deepest")
        return cls(
            [Move.from_json(m) for m in data["moves"]],
            [tuple(s) for s in data["new"]],
            data["run"],
            int(data.get("picked", 0)),
            int(data.get("depth", 0)),
            Waypoint(deepest["ladder"], deepest["rung"], deepest["time"], tuple(deepest["nodes"])) if deepest else None,
            data.get("chain") if data.get("chain") in CHAIN else None,
        )


@dataclass
class Campaign:
    """A campaign's settings, corpus and counters: everything campaign.json holds, so that `--resume`
    goes on where it stopped."""

    dir: Path
    seed: int
    cluster: ClusterSpec
    workload: WorkloadOptions
    space: Space
    #: today's random mix for the baseline runs: {"faults", "interval", "start", "targets"}; None: none
    baseline: dict[str, Any] | None = None
    spark_master: str | None = None
    #: campaign seconds spent before this session (a resumed campaign's clock goes on)
    elapsed_s: float = 0.0
    next: dict[str, int] = field(default_factory=lambda: {m: 1 for m in MIXES})
    corpus: list[Entry] = field(default_factory=list)
    #: mix -> state -> the first run that reached it
    seen: dict[str, dict[State, str]] = field(default_factory=lambda: {m: {} for m in MIXES})
    #: mix -> ladder -> the deepest rung any of its runs reached (checkers/measures/ladders.py)
    depth: dict[str, dict[str, int]] = field(default_factory=lambda: {m: {} for m in MIXES})
    trials: list[dict[str, Any]] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    #: which chain shape a fresh draw takes (nemesis/space.py CHAINS), by the depth its runs reached
    chains: Bandit = field(default_factory=lambda: Bandit(tuple(c.name for c in CHAINS)))
    #: the corpus member the schedule being run was mutated from
    _parent: Entry | None = field(default=None, repr=False)
    #: the chain shape of the schedule being run: a fresh draw's, or the one its corpus parent
    #: descends from (a mutation keeps most of its parent's moves, so its depth pays that shape too)
    _chain: str | None = field(default=None, repr=False)
    _fresh: bool = field(default=False, repr=False)

    @property
    def key(self) -> str:
        """The workload's first key: what the roles' targets name (nemesis/roles.py)."""
        return self.workload.key_names[0]

    def runs(self, mix: str = EXPLORE) -> int:
        return self.next[mix] - 1

    # The search.

    def schedule(self, i: int) -> list[Move]:
        """Run i's schedule: a fresh draw, or a mutation of a corpus member, from the stream explore:i."""
        rng = stream(self.seed, f"explore:{i}")
        self._parent = self._chain = None
        self._fresh = not self.corpus or rng.random() < FRESH
        if self._fresh:
            self._chain = self.chains.choose(rng)
            return self.space.draw(rng, CHAIN[self._chain])
        parent = rng.choices(self.corpus, [e.weight for e in self.corpus])[0]
        self._parent = parent  # counted as picked once its run is recorded (a run Ctrl-C stopped is drawn again)
        self._chain = parent.chain
        if parent.deepest is not None and rng.random() < DEEPEN:
            deeper = self.space.deepen(parent.moves, parent.deepest, rng)
            if deeper is not None:
                return deeper
        return self.space.mutate(parent.moves, rng)

    def plan(self, mix: str, moves: list[Move] | None) -> NemesisPlan:
        if mix == EXPLORE:
            return NemesisPlan(script=steps(moves or [], self.key), label="explore")
        assert self.baseline is not None
        return NemesisPlan(
            faults=list(self.baseline["faults"]),
            interval=float(self.baseline["interval"]),
            start=self.baseline.get("start"),
            targets=str(self.baseline.get("targets", "any")),
            label="baseline",
        )

    def record(
        self, mix: str, i: int, moves: list[Move] | None, out: Outcome, started_s: float, ended_s: float
    ) -> dict:
        """Keep what run i reached: its new states, and its schedule in the corpus when it has any."""
        seen = self.seen[mix]
        name = out.run_dir or f"{mix} {i}"
        if mix == EXPLORE and self._parent is not None:
            self._parent.picked += 1
            self._parent = None
        chain, fresh = None, False
        if mix == EXPLORE:
            chain, self._chain, fresh = self._chain, None, self._fresh
        if chain is not None:
            self.chains.pay(chain, reward(out.depths))
        new = sorted(s for s in out.states if s not in seen)
        for s in new:
            seen[s] = name
        best = self.depth.setdefault(mix, {})
        deeper = [ladder for ladder, d in out.depths.items() if d > best.get(ladder, 0)]
        for ladder in deeper:
            best[ladder] = out.depths[ladder]
        if mix == EXPLORE and (new or deeper) and moves is not None:
            depth = sum(out.depths.values())
            self.corpus.append(Entry(ordered(moves), new, out.run_dir, depth=depth, deepest=out.deepest, chain=chain))
        trial = {
            "mix": mix,
            "run": i,
            "run_dir": out.run_dir,
            "schedule": [m.to_json() for m in moves] if moves is not None else None,
            "chain": chain if fresh else None,
            "descends": None if fresh else chain,
            "started_s": round(started_s, 1),
            "ended_s": round(ended_s, 1),
            "states": len(out.states),
            "new": len(new),
            "seen": len(seen),
            "depths": out.depths,
            "deepest": out.deepest.to_json() if out.deepest else None,
            "anomalies": out.anomalies,
            "verdict": out.verdict,
            "exit_code": out.exit_code,
            "check_s": round(out.check_s, 2),
            "wall_s": round(out.wall_s, 1),
            "error": out.error,
            **({"memory_mb": out.memory} if out.memory else {}),
        }
        self.trials.append(trial)
        self.next[mix] = i + 1
        if out.anomalies:
            self.findings.append(
                {
                    "run": out.run_dir,
                    "mix": mix,
                    "anomalies": out.anomalies,
                    "script": None,
                    "reproduced": None,
                    "found_s": round(ended_s, 1),
                    "shrunk": False,
                    "schedule": trial["schedule"],
                }
            )
        return trial

    # campaign.json

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "seed": self.seed,
            "cluster": asdict(self.cluster),
            "workload": self.workload.to_dict(),
            "space": self.space.to_json(),
            "baseline": self.baseline,
            "spark_master": self.spark_master,
            "elapsed_s": round(self.elapsed_s, 1),
            "next": self.next,
            "corpus": [e.to_json() for e in self.corpus],
            "seen": {m: [[*s, run] for s, run in seen.items()] for m, seen in self.seen.items()},
            "depth": self.depth,
            "trials": self.trials,
            "findings": self.findings,
            "interrupted": self.interrupted,
            "chains": self.chains.to_json(),
        }

    def save(self) -> Path:
        path = self.dir / CAMPAIGN
        tmp = path.with_name(f".{CAMPAIGN}.{os.getpid()}")
        tmp.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, directory: Path) -> Campaign:
        """The campaign saved in `directory`; UsageError when there is none."""
        try:
            data = json.loads((Path(directory) / CAMPAIGN).read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"{directory}: not a campaign directory ({CAMPAIGN}: {exc})") from None
        return cls(
            Path(directory).resolve(),
            int(data["seed"]),
            ClusterSpec(**data["cluster"]),
            WorkloadOptions(**data["workload"]),
            Space.from_json(data["space"]),
            data.get("baseline"),
            data.get("spark_master"),
            float(data.get("elapsed_s", 0.0)),
            {m: int(data["next"].get(m, 1)) for m in MIXES},
            [Entry.from_json(e) for e in data.get("corpus", [])],
            {m: {tuple(s[:-1]): s[-1] for s in data.get("seen", {}).get(m, [])} for m in MIXES},
            {m: dict(data.get("depth", {}).get(m, {})) for m in MIXES},
            list(data.get("trials", [])),
            list(data.get("findings", [])),
            chains=Bandit.from_json(data.get("chains"), [c.name for c in CHAINS]),
        )

    # What the CLI prints.

    def exit_code(self) -> int:
        """As `check`'s: 1 when a run found an error anomaly; else 0 when a run was VALID; else the
        unknown verdicts' code (4 when any run's control plane could not be checked, 3 otherwise)."""
        if self.findings:
            return 1
        codes = {t["exit_code"] for t in self.trials}
        if 0 in codes:
            return 0
        return 4 if 4 in codes else 3

    def document(self) -> dict[str, Any]:
        """`--json`'s one document: runs, distinct states, findings (and the baseline's, when asked)."""

        def found(mix: str) -> list[dict[str, Any]]:
            keys = ("run", "anomalies", "script", "reproduced")
            return [{k: f[k] for k in keys} for f in self.findings if f["mix"] == mix]

        doc: dict[str, Any] = {
            "campaign": str(self.dir),
            "runs": self.runs(EXPLORE),
            "states": len(self.seen[EXPLORE]),
            "findings": found(EXPLORE),
            "interrupted": self.interrupted,
            "exit_code": self.exit_code(),
        }
        if self.baseline is not None:
            doc["baseline"] = {
                "runs": self.runs(BASELINE),
                "states": len(self.seen[BASELINE]),
                "findings": found(BASELINE),
            }
        return doc


def new_campaign(
    spec: RunSpec,
    faults: list[str] | None,
    baseline: dict[str, Any] | None,
    store: Path,
    name: str | None,
    start: float | None = None,
) -> Campaign:
    """A campaign of `spec`'s cluster and workload (its nemesis is the campaign's to draw), in a
    directory of its own under the store: store/<name or "explore">/<time>/. `start`: quiet
    seconds before any fault (default: a quarter of a run, at most 5 s)."""
    from kafka_chaos.runs.run import make_run_dir

    spec = spec.validate().with_seed()
    opts = spec.workload
    config = {**NemesisPlan(script=[]).broker_defaults(), **spec.cluster.config}  # as each run's cluster has it
    space = Space.for_run(faults, opts.workload, opts.grouped, opts.time_limit, start, opts.shares, config)
    if baseline is not None and not baseline.get("faults"):
        baseline = {**baseline, "faults": list(space.faults)}
    directory = make_run_dir(store, name or "explore")
    assert spec.seed is not None
    return Campaign(directory, spec.seed, spec.cluster, opts, space, baseline, spec.spark_master)


class Runner:
    """The real runs: each a fresh cluster of the campaign's spec (runs/run.py) under its directory,
    made in a process of its own (runs/isolated.py), checked as it ends in one Spark session kept
    for the whole campaign, its states read, its directory pruned (explore_files.prune)."""

    def __init__(self, campaign: Campaign, reporter: Reporter) -> None:
        from kafka_chaos.checkers import spark

        self.campaign, self.reporter = campaign, reporter
        self.status = isolated.status_line_of(reporter)
        self.session = spark.session(campaign.spark_master)

    def spec(self, plan: NemesisPlan, seed: int, mix: str) -> RunSpec:
        c = self.campaign
        return RunSpec(c.cluster, c.workload, plan, seed=seed, name=mix, store=c.dir, control_plane=True)

    def __call__(self, plan: NemesisPlan, seed: int, mix: str) -> Outcome:
        from kafka_chaos.checkers.check import check_history
        from kafka_chaos.checkers.errors import BadHistory

        started = time.monotonic()
        executed = isolated.execute(self.spec(plan, seed, mix), self.status)
        if executed.error is not None:  # a cluster that did not start, a schedule that crashed: the campaign goes on
            return Outcome(executed.run_dir, error=executed.error, wall_s=time.monotonic() - started)
        assert executed.run_dir is not None
        run_dir = Path(executed.run_dir)
        out = Outcome(str(run_dir))
        checking = time.monotonic()
        try:
            checked = check_history(run_dir, session=self.session, report=False)
            out.anomalies, out.exit_code, out.verdict = checked.errors, checked.exit_code, checked.label
        except BadHistory as exc:
            out.error = f"check: {exc}"
        except Exception as exc:  # Spark's own failure: this run is unchecked, the campaign goes on
            out.error = f"check: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        finally:
            self.session.catalog.clearCache()  # memory flat across runs
        out.check_s = time.monotonic() - checking
        try:
            out.states = frozenset(run_states(run_dir).features)
            climbed = climb(run_dir)
            out.depths, out.deepest = climbed.depths, climbed.deepest
        except (OSError, ValueError) as exc:  # evidence that cannot be read reached nothing
            out.error = out.error or f"states: {type(exc).__name__}: {exc}"
        out.wall_s = time.monotonic() - started
        out.memory = self.memory()
        if mix not in MIXES:  # a shrinking trial: its verdict is all that is kept of it
            files.write_states(run_dir, out.states)
            files.prune(run_dir, files.EVIDENCE if out.anomalies else files.SUMMARY)
        return out

    def memory(self) -> dict[str, float]:
        """Resident MB of this process and of the Spark driver's JVM (Linux's /proc; {} elsewhere):
        the table's evidence that a long campaign's memory stays flat."""
        from pyspark import SparkContext

        out = {}
        gateway = SparkContext._gateway
        pids = {"python": os.getpid(), "spark": getattr(getattr(gateway, "proc", None), "pid", None)}
        for name, pid in pids.items():
            try:
                pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
            except (OSError, ValueError, IndexError, TypeError):
                continue
            out[name] = round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)
        return out

    def report(self, run_dir: str) -> None:
        """A finding's report.html, written after the fact in the same session."""
        from kafka_chaos.checkers.check import check_history

        try:
            check_history(run_dir, session=self.session, report=True)
        finally:
            self.session.catalog.clearCache()


def _left(campaign: Campaign, runs: int | None, budget_s: float | None, spent: float) -> str:
    parts = []
    if runs is not None:
        parts.append(f"{max(0, runs - campaign.runs())} runs left")
    if budget_s is not None:
        left = max(0.0, budget_s - spent)
        parts.append(f"{int(left // 60)}:{int(left % 60):02d} left")
    return ", ".join(parts)


def search(
    campaign: Campaign,
    execute: Execute,
    *,
    runs: int | None = None,
    budget_s: float | None = None,
    reporter: Reporter = print,
    keep: Callable[[dict[str, Any], Outcome], str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Campaign:
    """Runs until `runs` explore runs are done or the `budget_s` is spent (a run is started only
    when the mean run so far fits in what is left), saving campaign.json after each. Ctrl-C
    (KeyboardInterrupt) ends it: the campaign is saved, `interrupted` set. `keep` (the real
    runner's disk policy) is told each trial and says what of its directory was kept."""
    if runs is None and budget_s is None:
        raise UsageError("explore needs a budget: --budget (e.g. 30m) or --runs N")
    started = clock()
    base = campaign.elapsed_s
    mixes = MIXES if campaign.baseline is not None else (EXPLORE,)
    walls: list[float] = []
    try:
        while runs is None or campaign.runs() < runs:
            spent = clock() - started
            if budget_s is not None and (spent >= budget_s or (walls and budget_s - spent < sum(walls) / len(walls))):
                break
            for mix in mixes:
                i = campaign.next[mix]
                moves = campaign.schedule(i) if mix == EXPLORE else None
                seed = stream(campaign.seed, f"run:{mix}:{i}").randrange(2**32)
                t0 = clock()
                out = execute(campaign.plan(mix, moves), seed, mix)
                walls.append((clock() - t0) * len(mixes))
                campaign.elapsed_s = base + clock() - started
                trial = campaign.record(mix, i, moves, out, base + t0 - started, campaign.elapsed_s)
                if keep is not None:
                    trial["kept"] = keep(trial, out)
                campaign.save()
                reporter(progress_line(campaign, trial, _left(campaign, runs, budget_s, clock() - started)))
    except KeyboardInterrupt:
        campaign.interrupted = True
        campaign.elapsed_s = base + clock() - started
        campaign.save()
    return campaign


def progress_line(campaign: Campaign, trial: dict[str, Any], left: str) -> str:
    """explore: run 7 (+2 states): 31 states, corpus 9, findings 0; baseline 12 states; 21:40 left"""
    what = f"{trial['mix']} run {trial['run']}"
    outcome = trial["error"] or ("found " + ", ".join(trial["anomalies"]) if trial["anomalies"] else trial["verdict"])
    line = (
        f"explore: {what}: {outcome}, +{trial['new']} states; {campaign.runs()} runs, "
        f"{len(campaign.seen[EXPLORE])} states, corpus {len(campaign.corpus)}, findings {len(campaign.findings)}"
    )
    if campaign.baseline is not None:
        line += f"; baseline {len(campaign.seen[BASELINE])} states"
    return f"{line}; {left}" if left else line


def shrink_findings(
    campaign: Campaign,
    execute: Execute,
    budget_s: float | None,
    reporter: Reporter = print,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Each explore finding's script, in findings/<n>.json: shrunk (runs/shrink.py) for the first
    finding of each set of anomalies while `budget_s` lasts, written as it ran otherwise (and
    when shrinking is off: `budget_s` None). `reproduced`: in how many of RUNS runs of the shrunk
    script it found them again (`confirm`); None when not shrunk. Whether the run's
    faults went past what the configuration promises to survive goes beside it (`beyond_promise`).
    A baseline run's random mix has no script here (replay it with `run --seed`)."""
    started = clock()
    done: set[tuple[str, ...]] = set()
    tries = 0
    for n, finding in enumerate(campaign.findings, 1):
        if finding.get("script") or not finding.get("schedule"):
            continue
        path = campaign.dir / "findings" / f"{n}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        found = steps([Move.from_json(m) for m in finding["schedule"]], campaign.key)
        names = tuple(sorted(finding["anomalies"]))
        if finding.get("run"):
            try:
                finding["beyond_promise"] = shrinking.beyond_promise_of_run(Path(finding["run"]))
            except Exception as exc:  # a pruned or broken run directory: the finding stands without it
                finding["beyond_promise"] = None
                reporter(f"explore: could not judge finding {n}'s faults: {type(exc).__name__}: {exc}")
        left = None if budget_s is None else budget_s - (clock() - started)
        if left is None or left <= 0 or names in done:
            shrinking.write_script(found, path)
            finding.update(script=str(path))
            campaign.save()
            continue
        done.add(names)
        reporter(f"explore: shrinking finding {n} ({', '.join(names)}): {len(found)} faults, {left / 60:.0f} min")

        def trial(candidate: list[Step], n: int = n) -> set[str]:
            nonlocal tries
            tries += 1
            seed = stream(campaign.seed, f"run:shrink:{n}:{tries}").randrange(2**32)
            return set(execute(NemesisPlan(script=list(candidate), label="shrink"), seed, "shrink").anomalies)

        roles = roles_for(campaign.workload.workload, campaign.workload.grouped, campaign.workload.shares)
        shrunk = shrinking.shrink(
            found,
            trial,
            anomalies=names,
            runs=RUNS,
            need=NEED,
            seconds=left,
            roles=roles,
            key=campaign.key,
            confirm=True,
            progress=reporter,
        )
        shrinking.write_script(shrunk.steps if shrunk.found else found, path)
        finding.update(script=str(path), reproduced=shrunk.reproduced, shrunk=bool(shrunk.found))
        campaign.save()


def run_campaign(
    campaign: Campaign,
    *,
    runs: int | None,
    budget_s: float | None,
    reporter: Reporter,
    shrink_budget_s: float | None,
) -> Campaign:
    """The whole campaign with real runs: the search, the findings' reports and scripts, the files."""
    from kafka_chaos.harness.engine import docker_client
    from kafka_chaos.harness.images import ensure_image
    from kafka_chaos.harness.versions import KafkaVersion

    ensure_image(docker_client(), KafkaVersion.parse(campaign.cluster.version), reporter)
    campaign.save()
    reporter(f"explore: campaign {campaign.dir} (seed {campaign.seed}); starting Spark")
    runner = Runner(campaign, reporter)

    def keep(trial: dict[str, Any], out: Outcome) -> str:
        sample = trial["new"] > 0 or trial["run"] % SAMPLE_EVERY == 1
        policy = files.ALL if out.anomalies else files.EVIDENCE if sample or out.error else files.SUMMARY
        if out.run_dir:
            files.write_states(Path(out.run_dir), out.states)
            if out.anomalies:
                try:
                    runner.report(out.run_dir)
                except Exception as exc:  # the finding stands without its page
                    reporter(f"explore: no report for {out.run_dir}: {type(exc).__name__}: {exc}")
            files.prune(Path(out.run_dir), policy)
        gc.collect()  # what a run's objects held goes before the next run starts
        return policy

    try:
        search(campaign, runner, runs=runs, budget_s=budget_s, reporter=reporter, keep=keep)
        if not campaign.interrupted:
            shrink_findings(campaign, runner, shrink_budget_s, reporter)
    except KeyboardInterrupt:
        campaign.interrupted = True
    finally:
        campaign.save()
        files.write_all(campaign)
    return campaign


def states_of(campaign: Campaign, mix: str = EXPLORE) -> list[str]:
    """The distinct states a campaign's runs of `mix` reached, one line each."""
    return sorted(state_text(s) for s in campaign.seen[mix])
