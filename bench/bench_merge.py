"""``qlab merge`` of sharded runs as a whole process (run by hand; not a test).

    python bench/bench_merge.py [--cases 100000] [--shards 4] [--rounds 3] [--before DIR/runner]

What a sharded CI job runs last: a generated search project (1,000 operations, N cases, build → search) is run
as ``qlab run --shard i/S`` for each shard, then ``qlab merge`` reads the S shard results and writes the merged
result.json, JUnit, summary and durations. The baseline is a process that parses the S shard files and writes
their cases as one JSON file (the least any merge does: read every shard, write one result). Both run in turns
after a warm-up round (``bench/whole.py``); the ratio is the median of the per-round ratios, with the load
averages. ``--before DIR``: an earlier qlab (``git archive REV runner schemas``, then ``DIR/runner``) in the same
rounds.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_run import generate
from whole import QLAB, expect_exit, interleave, load_average, measure

READ_AND_WRITE = """
import json, sys
out, shards = sys.argv[1], sys.argv[2:]
cases = []
for path in shards:
    cases += json.loads(open(path, encoding="utf-8").read())["cases"]
with open(out, "w", encoding="utf-8") as handle:
    json.dump({"cases": cases}, handle)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--before", type=Path, default=None, help="an earlier qlab's source root (DIR/runner)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="qlab-bench-merge-") as tmp:
        folder = Path(tmp)
        config = generate(folder, cases=args.cases, tools=1000, learn=False)
        for i in range(1, args.shards + 1):
            subprocess.run(
                [*QLAB, "run", "--config", str(config), "--shard", f"{i}/{args.shards}", "--quiet"],
                cwd=folder,
                check=False,
            )
        shards = sorted(str(p) for p in (folder / "out").glob("qlab-shard-*.json"))
        if len(shards) != args.shards:
            sys.exit(f"expected {args.shards} shard results, found {shards}")
        merge = [*QLAB, "merge", *shards, "--out", str(folder / "merged"), "--quiet"]
        sides = {
            "read shards + write one": partial(
                measure,
                [sys.executable, "-c", READ_AND_WRITE, str(folder / "plain.json"), *shards],
                timings=False,
            ),
            "qlab merge": partial(measure, merge, timings=False),
        }
        if args.before is not None:
            before = [*QLAB, "merge", *shards, "--out", str(folder / "merged-before"), "--quiet"]
            sides["qlab merge, before"] = partial(
                measure, before, timings=False, env={"PYTHONPATH": str(args.before)}
            )
        comparison = interleave(sides, rounds=args.rounds, check=expect_exit(0))
        title = f"{args.cases:,} cases in {args.shards} shards, whole processes, {args.rounds} rounds"
        comparison.show(title, "read shards + write one")
    print(f"\n{load_average()}")


if __name__ == "__main__":
    main()
