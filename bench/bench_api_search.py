"""The search rail: ``qlab run`` of the search suite ``qlab init --from-openapi`` writes for an API (one query per
operation, from its own summary), beside a bm25s process indexing and querying the same text.

    python bench/bench_api_search.py [--api kubernetes tmdb petstore] [--rounds 5] [--before RUNNER] [--json FILE]

For each API (the specs under ``../shared/data``), before any clock starts: ``qlab init DIR --from-openapi SPEC
--offline`` writes the project (build and search gates, the build cache filled), and the bench writes what bm25s
reads: each operation's text as qlab's built-in search reads it, flat (method, path, id, summary, description,
parameter names: ``bench_search.flat_text``), and the suite's queries with its ``k``.

Timed, in turns (``bench/whole.py``), both whole processes:

- ``qlab run`` in the project, as a user runs it (result.json, JUnit and the summary written);
- a process that imports bm25s, reads the two lists, tokenizes (its own tokenizer, English stopwords), indexes
  the texts, retrieves each query's Top-``k`` and writes the ranked operation ids.

``--before``: an earlier checkout's ``runner/`` (``git archive REV runner schemas | tar -x -C DIR``, then
``DIR/runner``), whose ``qlab run`` of the same project is a third side of the same rounds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from whole import QLAB, Comparison, Measured, expect_exit, interleave, load_average, measure

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
APIS: dict[str, Path] = {
    "kubernetes": DATA / "openapi-specs" / "kubernetes" / "swagger.json",
    "tmdb": DATA / "restbench" / "specs" / "tmdb_oas.json",
    "spotify": DATA / "restbench" / "specs" / "spotify_oas.json",
    "petstore": DATA / "openapi-specs" / "petstore3" / "openapi.yaml",
}

BM25S = """
import json, sys
import bm25s
given = json.load(open(sys.argv[1], encoding="utf-8"))
ids, texts, queries = given["ids"], given["texts"], given["queries"]
retriever = bm25s.BM25()
retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
docs, scores = retriever.retrieve(
    bm25s.tokenize(queries, stopwords="en", show_progress=False), k=min(given["k"], len(texts)), show_progress=False
)
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for row, row_scores in zip(docs, scores):
        out.write(json.dumps([ids[i] for i, s in zip(row, row_scores) if s > 0]) + "\\n")
"""
BASELINE = "bm25s process"


def prepare(api: str, folder: Path) -> tuple[Path, Path, int]:
    """``qlab init`` for ``api`` in ``folder/project``, and bm25s's input beside it; returns the project's
    qlab.yaml, bm25s's input file and the number of queries."""
    from bench_search import flat_text

    from qlab.collection.openapi import load_tools
    from qlab.project import load_project

    project = folder / "project"
    done = subprocess.run(
        [*QLAB, "init", str(project), "--from-openapi", str(APIS[api]), "--offline"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"qlab init --from-openapi {APIS[api]} failed:\n{done.stdout}{done.stderr}")
    loaded = load_project(project / "qlab.yaml", environ={})
    cases = [case for case in loaded.cases if case.suite == "search_core"]
    tools = load_tools(str(APIS[api]))
    given = {
        "ids": [tool.id for tool in tools],
        "texts": [flat_text(tool) for tool in tools],
        "queries": [case.query for case in cases],
        "k": loaded.config.suites["search_core"].k,
    }
    (folder / "bm25s.json").write_text(json.dumps(given), encoding="utf-8")
    return project / "qlab.yaml", folder / "bm25s.json", len(cases)


def compare(api: str, rounds: int, before: Path | None = None) -> tuple[Comparison, int]:
    """The two processes for ``api`` (three with ``before``), in turns; the comparison and the number of
    queries."""
    with tempfile.TemporaryDirectory(prefix="qlab-search-rail-") as tmp:
        config, given, queries = prepare(api, Path(tmp))
        sides: dict[str, Callable[[], Measured]] = {
            BASELINE: partial(
                measure,
                [sys.executable, "-c", BM25S, str(given), str(Path(tmp) / "ranked.jsonl")],
                timings=False,
            ),
            "qlab run": partial(
                measure, [*QLAB, "run", "--config", str(config), "--quiet"], cwd=config.parent
            ),
        }
        if before is not None:
            sides["qlab run, before"] = partial(
                measure,
                [*QLAB, "run", "--config", str(config), "--quiet"],
                cwd=config.parent,
                env={"PYTHONPATH": str(before)},
            )
        return interleave(sides, rounds=rounds, check=_decided), queries


def _decided(name: str, measured: Measured) -> None:
    """Every side must succeed; an earlier checkout may also BLOCK (exit 1): the suite's threshold is what this
    checkout's engine measured at init."""
    if name == "qlab run, before" and measured.exit_code == 1:
        return
    expect_exit(0)(name, measured)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--api", nargs="*", choices=sorted(APIS), default=["kubernetes", "tmdb", "petstore"])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, metavar="RUNNER", help="an earlier checkout's runner/ folder")
    parser.add_argument("--json", type=Path, metavar="FILE")
    args = parser.parse_args()
    print(f"# search rail; {load_average()}")
    out = {}
    for api in args.api:
        comparison, queries = compare(api, args.rounds, args.before)
        comparison.show(f"{api}: {queries:,} generated queries", BASELINE)
        out[api] = comparison.to_json()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
