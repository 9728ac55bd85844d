"""The scale rail: a whole ``qlab run`` of 100,000 search cases from 4 YAML files, beside a process that only
reads the same files.

    python bench/bench_scale.py [--cases 100000] [--yaml-files 4] [--rounds 2] [--before RUNNER] [--json FILE]

A generated project: an OpenAPI document of 1,000 operations (``GET /things<i>/{id}``, summaries drawn from a
small vocabulary), N search cases whose queries are shuffled words of an operation's summary, written as YAML
lists, and build, search (k = 5) and learn gates. ``qlab run`` runs them as a user's CI does (result.json, JUnit
and the summary written). The rail is absolute (seconds and MiB); the baseline, a process that reads the case
files with ``yaml.load(CSafeLoader)`` and nothing else, shows the share of the run that parsing alone takes.
Measured from the outside, in turns (``bench/whole.py``). ``--before``: an earlier checkout's ``runner/``
folder as one more side.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from whole import QLAB, Comparison, interleave, load_average, measure

VOCABULARY = (
    "member delivery order parcel carrier invoice account profile address payment refund return shipment "
    "tracking status label warehouse stock item product price discount coupon voucher subscription plan "
    "schedule slot route driver vehicle region zone store branch customer contact email phone note review "
    "rating ticket claim damage insurance fee tax currency report export import batch event history log"
)
WORDS = VOCABULARY.split()
VERBS = ("get", "list", "search", "create", "update", "cancel", "find", "count")


def _tool(i: int, rng: random.Random) -> tuple[str, str]:
    a, b, c = rng.sample(WORDS, 3)
    verb = VERBS[i % len(VERBS)]
    op_id = f"{verb}{a.title()}{b.title()}{i}"
    return op_id, f"{verb} the {a} {b} of a {c} number {i}"


def generate(folder: Path, *, cases: int, tools: int, yaml_files: int, seed: int = 6) -> Path:
    """The generated project (see the module docstring) in ``folder``; returns its qlab.yaml."""
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
        words = summary.split()
        rng.shuffle(words)
        rows.append({"id": f"case-{n:06d}", "query": " ".join(words[:5]), "expected_target": op_id})
    (folder / "cases").mkdir()
    per_file = -(-cases // yaml_files)
    for f in range(yaml_files):
        with (folder / "cases" / f"search-{f}.yaml").open("w", encoding="utf-8") as handle:
            for row in rows[f * per_file : (f + 1) * per_file]:
                handle.write(
                    f"- id: {row['id']}\n  query: {row['query']}\n  expected_target: {row['expected_target']}\n"
                )
    config = folder / "qlab.yaml"
    config.write_text(
        "version: 1\nproject: bench\ncollection:\n  sources:\n    - name: api\n      openapi: api.json\n"
        "suites:\n  search_core:\n    mode: search\n    cases: [cases/*.yaml]\n    k: 5\n"
        "gates:\n  - name: build\n    stage: build\n  - name: search\n    stage: search\n    suites: [search_core]\n"
        '    thresholds:\n      hit_at_k: ">= 0.0"\n'
        "  - name: learn\n    stage: learn\n    stop_if: [scrub_failed]\n"
        "output:\n  dir: out\n",
        encoding="utf-8",
    )
    return config


READ_ONLY = """
import glob, sys
import yaml
for path in sorted(glob.glob(sys.argv[1])):
    with open(path, "rb") as f:
        yaml.load(f, Loader=yaml.CSafeLoader)
"""
BASELINE = "read the case files only"


def compare(
    cases: int, yaml_files: int, rounds: int, before: Path | None = None, tools: int = 1_000
) -> Comparison:
    """``qlab run`` (and ``before``'s) beside the bare read of the same case files, in turns."""
    with tempfile.TemporaryDirectory(prefix="qlab-scale-rail-") as tmp:
        config = generate(Path(tmp), cases=cases, tools=tools, yaml_files=yaml_files)
        command = [*QLAB, "run", "--config", str(config), "--quiet"]
        sides = {
            BASELINE: partial(
                measure, [sys.executable, "-c", READ_ONLY, str(Path(tmp) / "cases" / "*.yaml")], timings=False
            ),
            "qlab run": partial(measure, command, cwd=Path(tmp)),
        }
        if before is not None:  # the same project: each side's run is the other's previous run
            sides["qlab run, before"] = partial(
                measure, command, cwd=Path(tmp), env={"PYTHONPATH": str(before)}
            )
        return interleave(sides, rounds=rounds)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--yaml-files", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--before", type=Path, metavar="RUNNER", help="an earlier checkout's runner/ folder")
    parser.add_argument("--json", type=Path, metavar="FILE")
    args = parser.parse_args()
    print(f"# scale rail, {args.cases:,} cases in {args.yaml_files} YAML files; {load_average()}")
    comparison = compare(args.cases, args.yaml_files, args.rounds, args.before)
    comparison.show(f"{args.cases:,} search cases from {args.yaml_files} YAML files", BASELINE)
    comparison.save(args.json)


if __name__ == "__main__":
    main()
