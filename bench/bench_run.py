"""Benchmark of ``qlab run`` at scale (by hand, not a test): N generated search cases over a generated
collection → load, run (build → search → learn gates, real stages and built-in engine), result JSON + JUnit +
summary. Each size runs in a fresh process so its peak RSS is its own.

    python bench/bench_run.py                    # 10,000 and 100,000 cases, 1,000 tools
    python bench/bench_run.py --cases 100000     # one size
    python bench/bench_run.py --fake-search      # the runner alone: a trivial search stage instead of the engine
    python bench/bench_run.py --failing          # nearly every case fails (a search regression)
    python bench/bench_run.py --failing --no-learn   # ... without the learn gate (its shadow rank, see RESULTS)
    python bench/bench_run.py --whole --cases 100000 --yaml-files 4 --rounds 3 [--before OLD/runner]
        # what a user waits for: the real `qlab run` process (bench/whole.py), beside a process that only reads
        # the same case files (CSafeLoader / json), with qlab's phase split; --before: an earlier checkout's
        # qlab (`git archive REV runner schemas | tar -x -C OLD`) in the same rounds

Target (issue 6): 100,000 cases → run + JSON + JUnit in ≤ 30 s and ≤ 500 MiB, growing linearly from 10,000.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = [
    "member",
    "delivery",
    "order",
    "parcel",
    "carrier",
    "invoice",
    "account",
    "profile",
    "address",
    "payment",
    "refund",
    "return",
    "shipment",
    "tracking",
    "status",
    "label",
    "warehouse",
    "stock",
    "item",
    "product",
    "price",
    "discount",
    "coupon",
    "voucher",
    "subscription",
    "plan",
    "schedule",
    "slot",
    "route",
    "driver",
    "vehicle",
    "region",
    "zone",
    "store",
    "branch",
    "customer",
    "contact",
    "email",
    "phone",
    "note",
    "review",
    "rating",
    "ticket",
    "claim",
    "damage",
    "insurance",
    "fee",
    "tax",
    "currency",
    "report",
    "export",
    "import",
    "batch",
    "event",
    "history",
    "log",
]
VERBS = ("get", "list", "search", "create", "update", "cancel", "find", "count")


def _tool(i: int, rng: random.Random) -> tuple[str, str]:
    a, b, c = rng.sample(WORDS, 3)
    verb = VERBS[i % len(VERBS)]
    op_id = f"{verb}{a.title()}{b.title()}{i}"
    return op_id, f"{verb} the {a} {b} of a {c} number {i}"


def generate(
    folder: Path,
    *,
    cases: int,
    tools: int,
    seed: int = 6,
    failing: bool = False,
    learn: bool = True,
    yaml_files: int = 0,
) -> Path:
    """A project on disk: an OpenAPI document, a JSON Lines case file, and qlab.yaml. ``failing``: each case
    expects another operation than the one its query was drawn from, so nearly every case fails (a search
    regression: the outputs then carry a failure with its evidence per case). ``learn``: the learn gate.
    ``yaml_files``: write the cases as that many YAML lists instead of one JSON Lines file."""
    rng = random.Random(seed)
    made = [_tool(i, rng) for i in range(tools)]
    paths = {
        f"/things{i}/{{id}}": {
            "get": {
                "operationId": op_id,
                "summary": summary,
                "description": f"Returns the {summary}.",
                "tags": [summary.split()[2]],
                "parameters": [
                    {
                        "name": "id",
                        "in": "path",
                        "required": True,
                        "description": "The id.",
                        "schema": {"type": "string"},
                    }
                ],
                "responses": {
                    "200": {
                        "description": "ok",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        }
        for i, (op_id, summary) in enumerate(made)
    }
    spec = {"openapi": "3.0.3", "info": {"title": "bench", "version": "1"}, "paths": paths}
    (folder / "api.json").write_text(json.dumps(spec), encoding="utf-8")
    rows = []
    for n in range(cases):
        op_id, summary = made[rng.randrange(tools)]
        if failing:
            op_id = made[rng.randrange(tools)][0]
        words = summary.split()
        rng.shuffle(words)
        rows.append({"id": f"case-{n:06d}", "query": " ".join(words[:5]), "expected_target": op_id})
    if yaml_files:
        (folder / "cases").mkdir()
        per_file = -(-cases // yaml_files)
        for f in range(yaml_files):
            with (folder / "cases" / f"search-{f}.yaml").open("w", encoding="utf-8") as handle:
                for row in rows[f * per_file : (f + 1) * per_file]:
                    handle.write(
                        f"- id: {row['id']}\n  query: {row['query']}\n  expected_target: {row['expected_target']}\n"
                    )
        case_glob = "cases/*.yaml"
    else:
        with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")
        case_glob = "cases.jsonl"
    config = folder / "qlab.yaml"
    config.write_text(
        "version: 1\nproject: bench\ncollection:\n  sources:\n    - name: api\n      openapi: api.json\n"
        "suites:\n  search_core:\n    mode: search\n    cases: [" + case_glob + "]\n    k: 5\n"
        "gates:\n  - name: build\n    stage: build\n  - name: search\n    stage: search\n    suites: [search_core]\n"
        '    thresholds:\n      hit_at_k: ">= 0.0"\n'
        + ("  - name: learn\n    stage: learn\n    stop_if: [scrub_failed]\n" if learn else "")
        + "output:\n  dir: out\n",
        encoding="utf-8",
    )
    return config


def _fake_search(ctx: Any, cases: Any, results: Any) -> Any:
    from qlab.stages.base import StageReport

    for case in cases:
        result = results[case.id]
        result.search = {"hit": True, "hit_rank": 1, "top_k": 5, "rows": []}
        result.latency_ms["search"] = 0.01
    return StageReport("search")


class _FakeEngine:
    """--fake-search: no engine work at all (the runner's own cost)."""

    name = "fake"

    def __init__(self, config: Any, collection: Any) -> None:
        self.collection = collection


def _cpu() -> float:
    """This process's CPU seconds (user + system): steadier than wall time on a shared, loaded machine."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(config: Path, *, fake_search: bool) -> dict[str, Any]:
    """One run in this process; returns seconds per phase and the peak RSS."""
    from qlab.project import load_project
    from qlab.run.options import RunOptions, Seams
    from qlab.run.outputs import output_paths, write_outputs
    from qlab.run.runner import run

    c0 = _cpu()
    t0 = time.perf_counter()
    project = load_project(config)
    t1 = time.perf_counter()
    seams = Seams(stages={"search": _fake_search}, engine=_FakeEngine) if fake_search else Seams()
    paths = output_paths(project.config)
    outcome = run(project, options=RunOptions(seams=seams, emit=lambda art: write_outputs(art, paths)))
    t2 = time.perf_counter()
    write_outputs(outcome.artifact, paths)
    t3 = time.perf_counter()
    c3 = _cpu()
    return {
        "cases": len(project.cases),
        "load_s": round(t1 - t0, 2),
        "run_s": round(t2 - t1, 2),
        "write_s": round(t3 - t2, 2),
        "run_and_outputs_s": round(t3 - t1, 2),
        "total_s": round(t3 - t0, 2),
        "cpu_s": round(c3 - c0, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "exit_code": outcome.exit_code,
        "hit_at_k": outcome.artifact["metrics"]["search_hit_at_k"],
        "result_mib": round(paths.result.stat().st_size / 2**20, 1),
        "junit_mib": round(paths.junit.stat().st_size / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--tools", type=int, default=1_000)
    parser.add_argument("--fake-search", action="store_true")
    parser.add_argument(
        "--failing", action="store_true", help="cases expect another operation: nearly every case fails"
    )
    parser.add_argument("--no-learn", action="store_true", help="no learn gate (build and search only)")
    parser.add_argument(
        "--whole", action="store_true", help="time the real `qlab run` process (bench/whole.py)"
    )
    parser.add_argument(
        "--yaml-files", type=int, default=0, help="cases as this many YAML files (default: JSON Lines)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="--whole: interleaved rounds after one warm-up")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="RUNNER",
        help="--whole: also run an earlier checkout's qlab (its runner/ folder, e.g. from `git archive REV runner "
        "schemas`) in the same rounds",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.whole:
        whole_process(args)
        return
    if args.child:
        print(json.dumps(measure(Path(args.child), fake_search=args.fake_search)))
        return
    rows = []
    for n in args.cases:
        with tempfile.TemporaryDirectory(prefix="qlab-bench-") as tmp:
            config = generate(
                Path(tmp), cases=n, tools=args.tools, failing=args.failing, learn=not args.no_learn
            )
            cmd = [sys.executable, __file__, "--child", str(config)] + (
                ["--fake-search"] if args.fake_search else []
            )
            started = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            process_s = time.perf_counter() - started
            if done.returncode != 0:
                sys.exit(f"size {n} failed:\n{done.stderr[-3000:]}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            # what a user timing `qlab run` sees: interpreter start and imports included
            row["process_s"] = round(process_s, 2)
            rows.append(row)
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    if len(rows) >= 2:
        small, big = rows[0], rows[-1]
        factor = big["cases"] / small["cases"]
        ratio = big["run_and_outputs_s"] / max(small["run_and_outputs_s"], 1e-9)
        print(
            f"\ngrowth: {factor:g}x cases -> {ratio:.2f}x run+outputs time ({ratio / factor:.2f} of linear)"
        )


READ_ONLY = """
import json, sys, glob
import yaml
n = 0
for path in sorted(glob.glob(sys.argv[1])):
    with open(path, "rb") as f:
        if path.endswith(".jsonl"):
            n += sum(1 for line in f if json.loads(line))
        else:
            n += len(yaml.load(f, Loader=yaml.CSafeLoader))
print(n)
"""


def whole_process(args: Any) -> list[Any]:
    """``qlab run`` as a process beside a process that only reads the case files, in turns. Prints the tables
    and returns each size's ``whole.Comparison`` (sides "read case files only", "qlab run"[, "qlab run, before"])."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from functools import partial

    from whole import QLAB, interleave, load_average, measure

    comparisons = []
    for n in args.cases:
        with tempfile.TemporaryDirectory(prefix="qlab-bench-") as tmp:
            config = generate(
                Path(tmp), cases=n, tools=args.tools, failing=args.failing, learn=not args.no_learn,
                yaml_files=args.yaml_files,
            )  # fmt: skip
            pattern = str(Path(tmp) / ("cases/*.yaml" if args.yaml_files else "cases.jsonl"))
            sides = {
                "read case files only": partial(
                    measure, [sys.executable, "-c", READ_ONLY, pattern], timings=False
                ),
                "qlab run": partial(
                    measure, [*QLAB, "run", "--config", str(config), "--quiet"], cwd=Path(tmp)
                ),
            }
            if args.before is not None:  # the same project: each side's run is the other's previous run
                sides["qlab run, before"] = partial(
                    measure,
                    [*QLAB, "run", "--config", str(config), "--quiet"],
                    cwd=Path(tmp),
                    env={"PYTHONPATH": str(args.before)},
                )
            comparison = interleave(sides, rounds=args.rounds, warmup=1)
            comparisons.append(comparison)
            kind = f"{args.yaml_files} YAML files" if args.yaml_files else "one JSON Lines file"
            print(f"\n### {n:,} search cases from {kind}, {args.tools:,} tools, {args.rounds} rounds\n")
            print(f"{comparison.load_before} → {comparison.load_after}\n")
            print(comparison.table("read case files only"))
            print()
            print(comparison.split_table("qlab run"))
            if args.before is not None:
                print()
                print(comparison.split_table("qlab run, before"))
    print(f"\n{load_average()}")
    return comparisons


if __name__ == "__main__":
    main()
