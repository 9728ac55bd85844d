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

A second table says what each time goal leaves for qlab's own work, from the same rounds' medians: against
nginx, the time 1.5x leaves the execute gate once qlab's other phases are paid, per case above a bare httpx
request (the raw loop run once more with no requests tells its start from its cost a request); for the 20 ms
server, where a raw httpx thread pool itself stands; for 100,000 cases, what everything but the search gate
already takes.
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


N_NGINX = 2000
Rows = list[list[str]]  # each goal function returns its verdict rows and its floor rows (what it leaves qlab)


def _fixed(split: dict[str, float], gate: str) -> float:
    """A qlab process's seconds outside ``gate`` (start, imports, loading, the other gates, outputs, exit)."""
    return sum(split.values()) - split.get(gate, 0.0)


def nginx_rows(rounds: int, before: Path | None) -> tuple[Rows, Rows]:
    comparison = Comparison.from_json(
        bench_whole_execute.bench_nginx(N_NGINX, rounds, [1, None], "yaml", before=before, start=True)
    )
    raw = comparison.median_wall("raw loop")
    per_request = (raw - comparison.median_wall(bench_whole_execute.RAW_START)) / N_NGINX
    rows, floors = [], []
    for name in comparison.runs:
        if not name.startswith("qlab"):
            continue
        ratio, rss = comparison.ratio(name, "raw loop"), comparison.peak_rss(name)
        rows.append(
            [f"2,000 reads against nginx, {name}", "<= 1.5x raw loop, <= 55 MiB", f"{ratio:.2f}x, {rss:.1f} MiB",
             _verdict(ratio <= 1.5, rss <= 55), _loads(comparison.load_before, comparison.load_after)]
        )  # fmt: skip
        split = comparison.median_split(name)
        fixed = _fixed(split, "gate:execute")
        left = 1.5 * raw - fixed  # what 1.5x leaves the execute gate
        floors.append(
            [f"nginx <= 1.5x, {name}",
             f"outside the execute gate {fixed:.3f} s; the raw loop {raw:.3f} s, {per_request * 1e6:.0f} µs a request "
             f"beyond its start",
             f"the gate in {left:.3f} s: {(left / N_NGINX - per_request) * 1e6:.0f} µs a case above a bare "
             f"request (now {(split.get('gate:execute', 0.0) / N_NGINX - per_request) * 1e6:.0f} µs)"]
        )  # fmt: skip
    return rows, floors


def latency_rows(rounds: int, before: Path | None) -> tuple[Rows, Rows]:
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
    pool = next(name for name in comparison.runs if not name.startswith("qlab"))
    margin = 1.5 * ideal - comparison.median_wall(pool)  # what 1.5x leaves above a bare httpx pool
    floors = []
    for name in comparison.runs:
        if name.startswith("qlab"):
            above = comparison.median_wall(name) - comparison.median_wall(pool)
            floors.append(
                [f"20 ms server <= 1.5x the ideal, {name}",
                 f"{pool}, a whole process: {comparison.median_wall(pool) / ideal:.2f}x the ideal",
                 f"qlab at most {margin * 1000:.0f} ms above that pool (now {above * 1000:.0f} ms)"
                 if margin > 0 else "a client faster than httpx: the pool alone is above the goal"]
            )  # fmt: skip
    return rows, floors


def scale_rows(rounds: int, before: Path | None) -> tuple[Rows, Rows]:
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
    rows, floors = [], []
    for name in comparison.runs:
        if not name.startswith("qlab"):
            continue
        wall, rss = comparison.median_wall(name), comparison.peak_rss(name)
        rows.append(
            [f"100,000 search cases from 4 YAML files, {name}", "<= 10 s, <= 350 MiB", f"{wall:.2f} s, {rss:.1f} MiB",
             _verdict(wall <= 10, rss <= 350), _loads(comparison.load_before, comparison.load_after)]
        )  # fmt: skip
        others = _fixed(comparison.median_split(name), "gate:search")
        floors.append(
            [f"100,000 YAML cases <= 10 s, {name}", f"everything but the search gate {others:.2f} s",
             f"the search gate in {10 - others:.2f} s" if others < 10 else "more than a free search gate"]
        )  # fmt: skip
    return rows, floors


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
    rows: Rows = []
    floors: Rows = []
    for goal, floor in (
        nginx_rows(args.rounds, args.before),
        latency_rows(args.rounds, args.before),
        scale_rows(min(args.rounds, 2), args.before),
        (validate_rows(args.rounds), []),
    ):
        rows += goal
        floors += floor
    print("\n## Goals\n")
    print(table(rows))
    print("\n## What each goal leaves for qlab's own work (medians of the same rounds)\n")
    print("| goal | measured | meeting it needs |\n|---|---|---|")
    print("\n".join("| " + " | ".join(row) + " |" for row in floors))
    print(f"\n{load_average()}")
    if args.json:
        args.json.write_text(json.dumps({"goals": rows, "floors": floors}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
