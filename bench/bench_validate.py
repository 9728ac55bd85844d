"""The validate rail: ``qlab validate`` of 2,000 case files, beside a process that reads the same files with
``yaml.load(CSafeLoader)`` and nothing else.

    python bench/bench_validate.py [--files 2000] [--rounds 5] [--json FILE]

Each generated file holds one search case with an assertion; qlab.yaml points a search suite at them. Both
sides are whole processes measured from the outside, in turns (``bench/whole.py``).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from whole import QLAB, Comparison, expect_exit, interleave, load_average, measure

CASE = """# yaml-language-server: $schema=../schemas/case.schema.json
id: bench-{n:05d}
mode: search
query: Find member delivery detail number {n}
expected_target: getMemberDeliveryDetail
expected_top_k: 8
tags: [deliveries, bench]
assertions:
  - {{type: top_k_contains, tool: getMemberDeliveryDetail, k: 8}}
"""

BARE_READ = """
import glob, sys
import yaml
for path in sorted(glob.glob(sys.argv[1])):
    with open(path, "rb") as f:
        yaml.load(f, Loader=yaml.CSafeLoader)
"""
BASELINE = "bare CSafeLoader read"


def write_project(root: Path, files: int) -> Path:
    """``files`` case files under ``root/cases`` and the qlab.yaml that validates them; returns qlab.yaml."""
    (root / "cases").mkdir()
    for n in range(files):
        (root / "cases" / f"case-{n:05d}.yaml").write_text(CASE.format(n=n), encoding="utf-8")
    config = root / "qlab.yaml"
    config.write_text(
        "version: 1\nproject: bench\ncollection:\n  sources:\n    - openapi: https://example.com/openapi.json\n"
        "suites:\n  search:\n    mode: search\n    cases: [cases/*.yaml]\ngates:\n  - stage: search\n"
        "    suites: [search]\n",
        encoding="utf-8",
    )
    return config


def compare(files: int, rounds: int) -> Comparison:
    with tempfile.TemporaryDirectory(prefix="qlab-validate-rail-") as tmp:
        config = write_project(Path(tmp), files)
        sides = {
            BASELINE: partial(
                measure, [sys.executable, "-c", BARE_READ, str(Path(tmp) / "cases" / "*.yaml")], timings=False
            ),
            "qlab validate": partial(measure, [*QLAB, "validate", "--config", str(config)], cwd=Path(tmp)),
        }
        return interleave(sides, rounds=rounds, check=expect_exit(0))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", type=Path, metavar="FILE")
    args = parser.parse_args()
    print(f"# validate rail, {args.files:,} case files; {load_average()}")
    comparison = compare(args.files, args.rounds)
    comparison.show(f"qlab validate of {args.files:,} case files", BASELINE)
    comparison.save(args.json)


if __name__ == "__main__":
    main()
