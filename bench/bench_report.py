"""HTML report benchmark (run by hand; not a test). Figures go to bench/RESULTS-report.md.

    python bench/bench_report.py                  # N = 1,000, 10,000, 100,000 cases
    python bench/bench_report.py --n 100000
    python bench/bench_report.py --whole --n 100000 --rounds 3   # `qlab report --html` as a whole process,
        # on the result.json of a real `qlab run` over n generated search cases

For each N a synthetic result artifact (search and plan cases, 10 % failing with mixed reasons) is rendered by
``qlab.report.html.render_html``, alone and as a 2-run series (promotion diff + trends). The baseline measured
in the same run is what writing that artifact costs qlab itself: ``qlab.run.artifact.dumps``, the writer
``qlab run`` uses (compact values, the C encoder, one case per line). Compact ``json.dumps`` is shown beside it.
(Before 2026-12-04 the baseline was ``json.dumps(indent=1)``, which switches json to its pure-Python encoder,
~3x slower than the writer qlab uses: the ratios it gave flattered the HTML render.)

``--whole``: what a user waits for, as whole processes in turns (bench/whole.py): ``qlab report RESULT --html``
against a process that reads the same result.json and writes it back with qlab's writer.
Peak RSS comes from ``resource.getrusage`` of a child process per measurement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REASONS = ("expected_target_absent", "required_fields_unsatisfied", "wrong_target_selected", "auth_failed")


def artifact(n: int, *, run: str = "bench") -> dict[str, Any]:
    cases = []
    for i in range(n):
        failing = i % 10 == 0
        rank = None if failing and i % 20 == 0 else (i % 7) + 1
        case: dict[str, Any] = {
            "case_id": f"case-{i:06d}",
            "suite": f"suite_{i % 5}",
            "mode": "search" if i % 2 else "plan",
            "status": "failed" if failing else "passed",
            "latency_ms": {"search": 5.0 + i % 13, "target_selection": 1.0, "plan": 20.0 + i % 31},
            "search": {"hit": rank is not None, "hit_rank": rank, "top_k": 8, "rows": []},
            "file": f"gates/suite_{i % 5}/cases.jsonl",
            "line": i + 1,
        }
        if failing:
            case["failure"] = {"stage": "search", "reason": REASONS[i % len(REASONS)], "message": "synthetic"}
        cases.append(case)
    return {
        "schema_version": 1,
        "run_id": run,
        "started_at": "2026-12-01T10:00:00Z",
        "project": "bench",
        "cases": cases,
        "suites": {
            f"suite_{s}": {"mode": "search", "required": True, "metrics": {}, "counts": {}} for s in range(5)
        },
        "gates": [
            {
                "name": "search",
                "stage": "search",
                "status": "blocked",
                "thresholds": [],
                "stops": [],
                "reasons": [],
            }
        ],
        "metrics": {"search_hit_at_k": 0.95, "search_top_1": 0.5},
        "scorecard": {"correctness": 0.9, "latency": None},
        "decision": {"verdict": "block", "reasons": ["synthetic"], "exit_code": 1},
    }


_CHILD = """
import json, resource, sys, time
sys.path.insert(0, "bench")
from bench_report import artifact
from qlab.report.html import render_html
from qlab.run.artifact import dumps
n, what = int(sys.argv[1]), sys.argv[2]
a = artifact(n)
b = artifact(n, run="bench-2") if what == "series" else None
t = time.perf_counter()
if what == "writer":
    out = dumps(a)
elif what == "json":
    out = json.dumps(a)
elif what == "single":
    out = render_html([a])
else:
    out = render_html([a, b])
elapsed = time.perf_counter() - t
print(json.dumps({"s": elapsed, "bytes": len(out.encode()), "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(n: int, what: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(n), what], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="*", default=[1_000, 10_000, 100_000])
    parser.add_argument("--whole", action="store_true", help="`qlab report --html` as a whole process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="--whole: also run an earlier qlab, its source root (`git archive REV runner schemas`, then DIR/runner)",
    )
    args = parser.parse_args()
    if args.whole:
        whole_process(args.n, args.rounds, args.before)
        return
    print(
        "| cases | qlab's artifact writer (s) | compact json.dumps (s) | HTML one run (s) | x writer "
        "| HTML 2-run series (s) | page (KiB) | peak RSS (MiB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.n:
        writer, base = measure(n, "writer"), measure(n, "json")
        single, series = measure(n, "single"), measure(n, "series")
        print(
            f"| {n:,} | {writer['s']:.3f} | {base['s']:.3f} | {single['s']:.3f} | {single['s'] / writer['s']:.2f}x "
            f"| {series['s']:.3f} | {single['bytes'] / 1024:.0f} | {series['rss_mib']:.0f} |",
            flush=True,
        )


REWRITE = """
import sys
from qlab.run.artifact import read, write
write(sys.argv[2], read(sys.argv[1]))
"""


def whole_process(sizes: list[int], rounds: int, before: Path | None = None) -> None:
    import tempfile
    from functools import partial
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import subprocess

    from bench_run import generate
    from whole import QLAB, expect_exit, interleave, load_average
    from whole import measure as measure_process

    for n in sizes:
        with tempfile.TemporaryDirectory(prefix="qlab-bench-report-") as tmp:
            # a real result.json: `qlab run` on a generated search project (the synthetic artifact above has
            # only the keys the renderer reads; `qlab report` checks the whole result schema)
            config = generate(Path(tmp), cases=n, tools=1000, learn=False)
            subprocess.run([*QLAB, "run", "--config", str(config), "--quiet"], cwd=tmp, check=False)
            result = Path(tmp) / "out" / "result.json"
            sides = {
                "read + write result.json": partial(
                    measure_process, [sys.executable, "-c", REWRITE, str(result), str(Path(tmp) / "copy.json")],
                    timings=False,
                ),
                "qlab report --html": partial(
                    measure_process, [*QLAB, "report", str(result), "--html", str(Path(tmp) / "report.html")],
                    timings=False,
                ),
            }  # fmt: skip
            if before is not None:
                sides["qlab report --html, before"] = partial(
                    measure_process, [*QLAB, "report", str(result), "--html", str(Path(tmp) / "before.html")],
                    timings=False, env={"PYTHONPATH": str(before)},
                )  # fmt: skip
            comparison = interleave(sides, rounds=rounds, check=expect_exit(0))
            comparison.show(f"{n:,} cases, whole processes, {rounds} rounds", "read + write result.json")
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
