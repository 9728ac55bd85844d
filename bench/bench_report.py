"""HTML report benchmark (run by hand; not a test). Figures go to bench/RESULTS-report.md.

    python bench/bench_report.py                  # N = 1,000, 10,000, 100,000 cases
    python bench/bench_report.py --n 100000

For each N a synthetic result artifact (search and plan cases, 10 % failing with mixed reasons) is rendered by
``qlab.report.html.page.render_html``, alone and as a 2-run series (promotion diff + trends). The baseline measured in
the same run is ``json.dumps`` of the same artifact (what writing the artifact costs), so the figures are ratios
that hold on any machine. Peak RSS comes from ``resource.getrusage`` of a child process per measurement.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
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
from qlab.report.html.page import render_html
n, what = int(sys.argv[1]), sys.argv[2]
a = artifact(n)
b = artifact(n, run="bench-2") if what == "series" else None
t = time.perf_counter()
if what == "json":
    out = json.dumps(a, indent=1)
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
    args = parser.parse_args()
    print(
        "| cases | json.dumps (s) | HTML one run (s) | ratio | HTML 2-run series (s) | page (KiB) | peak RSS (MiB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in args.n:
        base, single, series = measure(n, "json"), measure(n, "single"), measure(n, "series")
        print(
            f"| {n:,} | {base['s']:.3f} | {single['s']:.3f} | {single['s'] / base['s']:.2f}x | {series['s']:.3f} "
            f"| {single['bytes'] / 1024:.0f} | {series['rss_mib']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
