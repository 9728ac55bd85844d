"""Every whole-process goal of the benchmarks (issue 23) measured in one sitting, one verdict table at the end.

    python bench/goals.py                       # nginx, the 20 ms server, 100,000 YAML cases, qlab validate
    python bench/goals.py --before OLD/runner   # an earlier checkout's qlab as one more side (all but validate)
    python bench/goals.py --json /tmp/goals.json

Each goal is the benchmark that owns it, run as whole processes in turns with its baseline (``bench/whole.py``):

| goal | benchmark | baseline |
|---|---|---|
| 2,000 read cases against nginx: <= 1.5x, <= 55 MiB | ``bench_whole_execute.bench_nginx`` | a raw httpx loop process |
| 400 cases at concurrency 16, a server answering 20 ms late: <= 1.5x the ideal | ``bench_latency`` | the ideal 0.5 s |
| 100,000 search cases from 4 YAML files: <= 10 s, <= 350 MiB | ``bench_run.whole_process`` | (absolute) |
| ``qlab validate`` of 2,000 case files: <= 3x | ``bench_load.whole_process`` | a bare CSafeLoader read process |

Ratios are medians of the per-round ratios (each round's sides run back to back); the 100,000-case figures are
the median wall time and the largest peak RSS of the rounds. The load average is printed before and after each
goal and in the table: the time goals are set for an idle machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_load
import bench_run
import bench_whole_execute
from whole import Comparison, load_average


def _loads(before: object, after: object) -> str:
    return f"{str(before).removeprefix('load average ')} → {str(after).removeprefix('load average ')}"


def _verdict(*met: bool) -> str:
    return "met" if all(met) else "not met"


def nginx_rows(rounds: int, before: Path | None) -> list[list[str]]:
    comparison = Comparison.from_json(
        bench_whole_execute.bench_nginx(2000, rounds, [1, None], "yaml", before=before)
    )
    rows = []
    for name in comparison.runs:
        if not name.startswith("qlab"):
            continue
        ratio, rss = comparison.ratio(name, "raw loop"), comparison.peak_rss(name)
        rows.append(
            [f"2,000 reads against nginx, {name}", "<= 1.5x raw loop, <= 55 MiB", f"{ratio:.2f}x, {rss:.1f} MiB",
             _verdict(ratio <= 1.5, rss <= 55), _loads(comparison.load_before, comparison.load_after)]
        )  # fmt: skip
    return rows


def latency_rows(rounds: int, before: Path | None) -> list[list[str]]:
    out = bench_whole_execute.bench_latency(400, rounds, 16, 20.0, "yaml", before)
    comparison = Comparison.from_json(out)
    ideal = float(out["ideal_s"])  # type: ignore[arg-type]
    rows = []
    for name in comparison.runs:
        times = comparison.median_wall(name) / ideal
        goal = "<= 1.5x the ideal 0.5 s" if name.startswith("qlab") else "(the client's floor)"
        rows.append(
            [f"20 ms server, 400 at 16, {name}", goal, f"{times:.2f}x the ideal",
             _verdict(times <= 1.5) if name.startswith("qlab") else "-",
             _loads(comparison.load_before, comparison.load_after)]
        )  # fmt: skip
    return rows


def scale_rows(rounds: int, before: Path | None) -> list[list[str]]:
    args = argparse.Namespace(
        cases=[100_000],
        tools=1_000,
        failing=False,
        no_learn=False,
        yaml_files=4,
        rounds=rounds,
        before=before,
    )
    comparison: Comparison = bench_run.whole_process(args)[0]
    rows = []
    for name in comparison.runs:
        if not name.startswith("qlab"):
            continue
        wall, rss = comparison.median_wall(name), comparison.peak_rss(name)
        rows.append(
            [f"100,000 search cases from 4 YAML files, {name}", "<= 10 s, <= 350 MiB", f"{wall:.2f} s, {rss:.1f} MiB",
             _verdict(wall <= 10, rss <= 350), _loads(comparison.load_before, comparison.load_after)]
        )  # fmt: skip
    return rows


def validate_rows(rounds: int) -> list[list[str]]:
    with tempfile.TemporaryDirectory(prefix="qlab-goals-") as tmp:
        bench_load.write_project(Path(tmp), 2000)
        comparison: Comparison = bench_load.whole_process(Path(tmp), 2000, rounds)
    ratio = comparison.ratio("qlab validate", "bare CSafeLoader read")
    return [
        ["qlab validate of 2,000 case files", "<= 3x a bare CSafeLoader read", f"{ratio:.2f}x",
         _verdict(ratio <= 3), _loads(comparison.load_before, comparison.load_after)]
    ]  # fmt: skip


def table(rows: Sequence[Sequence[str]]) -> str:
    lines = ["| goal | target | whole-process figure | verdict | load average |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each comparison (100,000 cases: 2)")
    parser.add_argument("--before", type=Path, metavar="RUNNER", help="an earlier checkout's runner/ folder")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the rows here")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    print(f"# every whole-process goal, one sitting; {load_average()}")
    rows = [
        *nginx_rows(args.rounds, args.before),
        *latency_rows(args.rounds, args.before),
        *scale_rows(min(args.rounds, 2), args.before),
        *validate_rows(args.rounds),
    ]
    print("\n## Goals\n")
    print(table(rows))
    print(f"\n{load_average()}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
