"""Proof that a change to the built-in search keeps every result (by hand, not a test): write the results with
the old code and the new one, then compare the files byte for byte (``cmp``).

    python bench/search_identity.py topk OUT.jsonl [SETS]    # Top-K of the real sets, full precision
    python bench/search_identity.py topk OUT.jsonl [SETS] --engine hybrid    # the hybrid engine's (semantic extra)
    python bench/search_identity.py cases result.json OUT    # a run's case records without their timing fields

``topk`` ranks every query of the sets (RestBench Spotify and TMDB, MetaTool single, all tools, the development
set; ``SETS`` a comma-separated subset of spotify,tmdb,metatool,all,dev), plus 200 upper-cased queries and 200
with "42 remove" appended per set, at k = 1, 5, 10 and 50, with the engine of ``--runner`` (default: this tree; ``--engine hybrid``: the hybrid engine, document vectors
embedded in the process, no cache):
each row's tool, rank, score and field scores as ``repr`` (every bit), matched terms and corrections. Main's code: ``git archive <commit> runner schemas | tar -x -C /tmp/main`` and
``--runner /tmp/main/runner``.

``cases`` keeps each case record of a result.json but ``latency_ms``/``duration_ms``, and the metrics but their
``latency_ms``: a run of ``bench/bench_scale.py``'s project with the old and the new code must give equal files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SETS = ("spotify", "tmdb", "metatool", "all", "dev")
TIMING = ("latency_ms", "duration_ms")


def topk(out: Path, sets: list[str], runner: Path, engine: str = "builtin") -> int:
    sys.path.insert(0, str(runner))
    import qlab  # the package of --runner, imported before bench_search puts this tree first

    sys.path.insert(0, str(ROOT / "bench"))
    import bench_search as bs

    from qlab.collection.model import Collection
    from qlab.engine.index import SearchIndex

    corpora = {
        "spotify": lambda: [bs.restbench("spotify")],
        "tmdb": lambda: [bs.restbench("tmdb")],
        "metatool": lambda: [bs.metatool()],
        "all": lambda: [bs.all_tools()],
        "dev": lambda: bs.devset(None),
    }
    lines = 0
    embedder: Any = None
    with out.open("w", encoding="utf-8") as handle:
        for name in sets:
            for corpus in corpora[name]():
                if engine == "hybrid":
                    from qlab.engine import semantic
                    from qlab.engine.hybrid import HybridEngine

                    if embedder is None:
                        embedder = semantic.load()
                    index: Any = HybridEngine(Collection(tuple(corpus.tools)), embedder=embedder)
                else:
                    index = SearchIndex(corpus.tools)
                queries = [q for q, _ in corpus.cases]
                queries += [q.upper() for q in queries[:200]] + [q + " 42 remove" for q in queries[:200]]
                for query in queries:
                    for k in (1, 5, 10, 50):
                        found = index.search(query, k=k)
                        rows = [
                            [r.tool_id, r.rank, repr(r.score), [[f, repr(v)] for f, v in r.field_scores.items()],
                             list(r.matched_terms), dict(r.corrections)]
                            for r in found.rows
                        ]  # fmt: skip
                        record = [name, query, k, list(found.query_terms), rows]
                        handle.write(json.dumps(record) + "\n")
                        lines += 1
    print(f"{lines} Top-K lists of the {engine} engine written to {out} by {qlab.__file__}")
    return 0


def cases(result: Path, out: Path) -> int:
    data = json.loads(result.read_text(encoding="utf-8"))
    with out.open("w", encoding="utf-8") as handle:
        for case in data["cases"]:
            handle.write(json.dumps({k: v for k, v in case.items() if k not in TIMING}) + "\n")
        metrics = {k: v for k, v in data["metrics"].items() if k != "latency_ms"}
        handle.write(json.dumps(metrics) + "\n")
    print(f"{len(data['cases'])} case records written to {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    top = sub.add_parser("topk")
    top.add_argument("out", type=Path)
    top.add_argument("sets", nargs="?", default=",".join(SETS))
    top.add_argument("--runner", type=Path, default=ROOT / "runner")
    top.add_argument("--engine", choices=("builtin", "hybrid"), default="builtin")
    run = sub.add_parser("cases")
    run.add_argument("result", type=Path)
    run.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "topk":
        chosen = args.sets.split(",")
        unknown = sorted(set(chosen) - set(SETS))
        if unknown:
            parser.error(f"unknown set(s) {', '.join(unknown)}; choose from {', '.join(SETS)}")
        return topk(args.out, chosen, args.runner.resolve(), args.engine)
    return cases(args.result, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
