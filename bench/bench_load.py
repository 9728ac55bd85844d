"""Benchmark: loading 2,000 small case files (the project layer's hot path).

Run by hand: ``python bench/bench_load.py [--files 2000] [--repeat 5]``. It writes the files into a temporary
folder, then times, best of ``--repeat``:

1. ``yaml.load(CSafeLoader)``: plain PyYAML with libyaml, no positions (the baseline);
2. ``qlab.project.yamlio.parse_yaml`` with libyaml (events -> data + positions, duplicate-key and alias checks);
3. the same with PyYAML's pure-Python parser (what a machine without libyaml gets);
4. ``parse_json`` on the same cases written as JSON;
5. the JSON Schema check alone (``schemas.validate_case``, jsonschema underneath);
6. ``load_project`` end to end (read, parse, JSON Schema, build, semantic checks) over all 2,000 files.

Figures are wall-clock seconds on this machine; compare them as ratios to the baseline of the same run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from qlab.project import load_project, yamlio
from qlab.project.jsonio import parse_json
from qlab.project.schemas import validate_case

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


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def write_project(root: Path, files: int) -> list[str]:
    """``files`` case files under ``root/cases`` (and the same cases as JSON under ``root/json``) and the
    qlab.yaml that validates them; returns the YAML texts."""
    (root / "cases").mkdir()
    (root / "json").mkdir()
    texts = []
    for n in range(files):
        text = CASE.format(n=n)
        texts.append(text)
        (root / "cases" / f"case-{n:05d}.yaml").write_text(text)
        (root / "json" / f"case-{n:05d}.json").write_text(json.dumps(yaml.safe_load(text)))
    (root / "qlab.yaml").write_text(
        "version: 1\nproject: bench\ncollection:\n  sources:\n    - openapi: https://example.com/openapi.json\n"
        "suites:\n  search:\n    mode: search\n    cases: [cases/*.yaml]\ngates:\n  - stage: search\n"
        "    suites: [search]\n"
    )
    return texts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--whole",
        action="store_true",
        help="`qlab validate` as a whole process against a process that reads the same files with CSafeLoader",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        texts = write_project(root, args.files)
        if args.whole:
            whole_process(root, args.files, args.repeat)
            return
        jsons = [p.read_text() for p in sorted((root / "json").iterdir())]

        def baseline() -> None:
            for text in texts:
                yaml.load(text, Loader=yaml.CSafeLoader)

        def qlab_c() -> None:
            for text in texts:
                yamlio.parse_yaml(text, "case.yaml")

        def qlab_py() -> None:
            saved = yamlio._Loader
            yamlio._Loader = yaml.SafeLoader  # type: ignore[misc] - force the pure-Python parser
            try:
                for text in texts:
                    yamlio.parse_yaml(text, "case.yaml")
            finally:
                yamlio._Loader = saved  # type: ignore[misc]

        def qlab_json() -> None:
            for text in jsons:
                parse_json(text, "case.json")

        cases = [yaml.safe_load(text) for text in texts]

        def schema() -> None:
            for case in cases:
                assert not validate_case(case)

        def project() -> None:
            loaded = load_project(root / "qlab.yaml", environ={})
            assert len(loaded.cases) == args.files

        rows = [
            ("yaml.load, CSafeLoader (baseline, no positions)", best(baseline, args.repeat)),
            ("qlab parse_yaml, libyaml events", best(qlab_c, args.repeat)),
            ("qlab parse_yaml, pure-Python parser", best(qlab_py, max(1, args.repeat // 2))),
            ("qlab parse_json", best(qlab_json, args.repeat)),
            ("JSON Schema check of the parsed cases (schemas.validate_case)", best(schema, args.repeat)),
            (
                "load_project end to end (read, parse, schema, build, checks)",
                best(project, max(1, args.repeat // 2)),
            ),
        ]
    base = rows[0][1]
    print(f"{args.files} case files, libyaml: {yamlio.HAVE_LIBYAML}")
    print(f"{'what':64} {'seconds':>8} {'x baseline':>10}")
    for name, seconds in rows:
        print(f"{name:64} {seconds:8.3f} {seconds / base:10.2f}")


BARE_READ = """
import glob, sys
import yaml
for path in sorted(glob.glob(sys.argv[1])):
    with open(path, "rb") as f:
        yaml.load(f, Loader=yaml.CSafeLoader)
"""


def whole_process(root: Path, files: int, rounds: int) -> Any:
    """What a user waits for: ``qlab validate`` of the files, a whole process, against a whole process that
    reads the same files with ``yaml.load(CSafeLoader)`` and nothing else (bench/whole.py: in turns, paired).
    Prints the table and returns the ``whole.Comparison`` (sides "bare CSafeLoader read", "qlab validate")."""
    import sys
    from functools import partial

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from whole import QLAB, expect_exit, interleave, measure

    sides = {
        "bare CSafeLoader read": partial(
            measure, [sys.executable, "-c", BARE_READ, str(root / "cases" / "*.yaml")], timings=False
        ),
        "qlab validate": partial(measure, [*QLAB, "validate", "--config", str(root / "qlab.yaml")], cwd=root),
    }
    comparison = interleave(sides, rounds=rounds, check=expect_exit(0))
    print(f"### qlab validate of {files:,} case files, whole processes, {rounds} rounds\n")
    print(f"{comparison.load_before} -> {comparison.load_after}\n")
    print(comparison.table("bare CSafeLoader read"))
    return comparison


if __name__ == "__main__":
    main()
