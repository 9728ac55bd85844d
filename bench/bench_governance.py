"""Benchmark: governance over large result artifacts (promotion, paired bootstrap, scorecard, categories).

Run by hand: ``python bench/bench_governance.py [--cases 10000 100000] [--repeat 3]``. For each size it
generates a baseline and a candidate artifact (search cases; about 10 % of them change outcome between the
runs), writes them to a temporary folder, and times, best of ``--repeat``:

1. ``json.loads`` of both artifacts (the baseline: reading them is unavoidable);
2. ``qlab.governance.records.load_artifact`` of both (read + sha256 + shape check);
3. ``qlab.governance.promotion.compare.compare`` with the default rule (tolerance only);
4. the same with ``bootstrap: true`` (2,000 paired resamples per metric, three metrics);
5. the bootstrap of one metric alone, drawn case by case (the naive method) — only up to 10,000 cases;
6. ``qlab.run.scorecard.compute`` and ``qlab.run.categories.by_category`` on the candidate.

``--whole``: ``qlab promote`` as a whole process against a process that only ``json.loads`` both artifacts,
in turns (bench/whole.py). The artifacts are real: ``qlab run`` on a generated project (1,000 operations, N
search cases), then on the same project after its API rewords a tenth of the operations (the same case
files), so the promotion compares what a pre-merge check compares and decides BLOCK (exit 1).

Figures are wall-clock seconds on this machine; compare them as ratios to step 1 of the same run. Peak memory
is the process's max RSS (``resource``) after each size.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qlab.governance.promotion.compare import compare
from qlab.governance.promotion.rules import DEFAULT_RULES
from qlab.governance.records import load_artifact
from qlab.project.model import PromotionRule
from qlab.run.categories import by_category
from qlab.run.scorecard import compute


def _case(i: int, rank: int | None) -> dict[str, Any]:
    case: dict[str, Any] = {
        "case_id": f"c-{i:06d}",
        "suite": "search_core" if i % 4 else "manual",
        "mode": "search",
        "status": "passed" if rank is not None else "failed",
        "latency_ms": {"search": 3.0},
        "search": {
            "hit": rank is not None,
            "hit_rank": rank,
            "top_k": 8,
            "rows": [{"tool_id": f"t{j}", "rank": j + 1, "score": 9.0 - j} for j in range(3)],
        },
        "file": f"gates/search_core/f{i // 100}.yaml",
        "line": i % 100 + 1,
    }
    if rank is None:
        case["failure"] = {"stage": "search", "reason": "expected_target_absent", "message": ""}
    return case


def _artifact(n: int, *, seed: int, run_id: str) -> dict[str, Any]:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        rank = None if rng.random() < 0.1 else rng.randint(1, 3)
        cases.append(_case(i, rank))
    suites = {
        "search_core": {"mode": "search", "category": "flow", "required": False, "metrics": {}, "counts": {}},
        "manual": {
            "mode": "search",
            "category": "regression",
            "required": False,
            "metrics": {},
            "counts": {},
        },
    }
    return {
        "run_id": run_id,
        "duration_ms": 1000.0,
        "fingerprint": {
            "digest": f"sha256:fp-{run_id}",
            "collection_digest": f"sha256:{run_id}",
            "config_digest": "c",
            "engine": "builtin",
            "qlab_version": "0.1.0",
        },
        "cases": cases,
        "suites": suites,
        "guards": [],
    }


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--whole",
        action="store_true",
        help="`qlab promote` as a whole process against one that json.loads both",
    )
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="--whole: also run an earlier qlab, its source root (`git archive REV runner schemas`, then DIR/runner)",
    )
    args = parser.parse_args()
    if args.whole:
        whole_process(args.cases, args.repeat, before=args.before)
        return
    rule = DEFAULT_RULES["alias_or_semantic_metadata"]
    boot = PromotionRule(rule.change_type, require=rule.require, metrics=rule.metrics, bootstrap=True)
    print(
        "| cases | json.loads x2 | load_artifact x2 | compare | compare + bootstrap | naive bootstrap (1 metric) | scorecard + categories | max RSS MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.cases:
            print(_row(Path(tmp), n, args.repeat, rule, boot))


LOAD_BOTH = "import json, sys\nfor p in sys.argv[1:]:\n    json.loads(open(p, 'rb').read())"


def whole_process(sizes: list[int], rounds: int, *, before: Path | None = None) -> None:
    import subprocess
    import sys
    from functools import partial

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_run import generate
    from whole import QLAB, expect_exit, interleave, measure

    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            # two real result artifacts of the same cases: `qlab run` on a generated project, then on the same
            # project after an API change that rewords a tenth of its operations (a search regression), as a
            # pre-merge check compares them
            base = Path(tmp) / "base"
            base.mkdir()
            generate(base, cases=n, tools=1000, learn=False)
            cand = Path(tmp) / "cand"
            shutil.copytree(base, cand)
            reword(cand / "api.json", share=0.1)
            runs = []
            for folder in (base, cand):
                subprocess.run(
                    [*QLAB, "run", "--config", str(folder / "qlab.yaml"), "--quiet"], cwd=folder, check=False
                )
                runs.append(str(folder / "out" / "result.json"))
            promote = [*QLAB, "promote", "--baseline", runs[0], "--candidate", runs[1],
                       "--change", "alias_or_semantic_metadata"]  # fmt: skip
            sides = {
                "json.loads x2": partial(measure, [sys.executable, "-c", LOAD_BOTH, *runs], timings=False),
                "qlab promote": partial(measure, promote, timings=False),
            }
            if before is not None:
                sides["qlab promote, before"] = partial(
                    measure, promote, timings=False, env={"PYTHONPATH": str(before)}
                )
            comparison = interleave(
                sides,
                rounds=rounds,
                check=lambda name, m: expect_exit(1 if name.startswith("qlab promote") else 0)(name, m),
            )
            code = comparison.runs["qlab promote"][0].exit_code
            comparison.show(
                f"{n:,} cases, whole processes, {rounds} rounds (qlab promote exit {code})", "json.loads x2"
            )


def reword(spec: Path, *, share: float, seed: int = 7) -> None:
    """Give ``share`` of the spec's operations a summary and description of words no query uses: the cases
    drawn from them stop finding them (the candidate of a promotion that regresses)."""
    rng = random.Random(seed)
    document = json.loads(spec.read_text(encoding="utf-8"))
    for i, item in enumerate(document["paths"].values()):
        if rng.random() < share:
            item["get"]["summary"] = f"Legacy endpoint number {i}"
            item["get"]["description"] = "Kept for older clients."
            item["get"]["tags"] = ["legacy"]
    spec.write_text(json.dumps(document), encoding="utf-8")


def _row(folder: Path, n: int, repeat: int, rule: PromotionRule, boot: PromotionRule) -> str:
    a, b = folder / f"a{n}.json", folder / f"b{n}.json"
    a.write_text(json.dumps(_artifact(n, seed=1, run_id="a")), encoding="utf-8")
    b.write_text(json.dumps(_artifact(n, seed=2, run_id="b")), encoding="utf-8")
    t_json = _best(lambda: (json.loads(a.read_bytes()), json.loads(b.read_bytes())), repeat)
    t_load = _best(lambda: (load_artifact(a), load_artifact(b)), repeat)
    base, cand = load_artifact(a), load_artifact(b)
    kind = "alias_or_semantic_metadata"
    t_cmp = _best(lambda: compare(base, cand, change_type=kind, rule=rule), repeat)
    t_boot = _best(lambda: compare(base, cand, change_type=kind, rule=boot), repeat)
    naive = "—"
    if n <= 10_000:
        hits_b = [float(c["search"]["hit"]) for c in base.cases]
        hits_c = [float(c["search"]["hit"]) for c in cand.cases]
        diffs = [y - x for x, y in zip(hits_b, hits_c, strict=True)]

        def naive_boot() -> None:
            rng = random.Random(0)
            sorted(math.fsum(rng.choices(diffs, k=n)) / n for _ in range(2000))

        naive = f"{_best(naive_boot, 1):.2f}"
    t_card = _best(lambda: (compute(cand.data), by_category(cand.data)), repeat)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return f"| {n:,} | {t_json:.2f} | {t_load:.2f} | {t_cmp:.2f} | {t_boot:.2f} | {naive} | {t_card:.2f} | {rss:.0f} |"


if __name__ == "__main__":
    main()
