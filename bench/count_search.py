"""Instructions (callgrind) of the search stage through ``qlab run`` against bm25s's pipeline: a figure that does
not depend on how loaded the host is (run by hand; needs valgrind).

    python bench/count_search.py                 # MetaTool single, the first 2,000 queries
    python bench/count_search.py --queries 5000

Four processes under ``valgrind --tool=callgrind``, each counting every instruction of the interpreter:

- qlab: ``qlab run`` with the real search stage, and the same run with a search stage that does nothing; the
  difference is the search stage (index build included);
- bm25s: one process runs the pipeline once, another three times; half the difference is one run.

The rest of each process (interpreter start, imports, loading the data) cancels out.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_search  # noqa: E402


def _noop_search(ctx: Any, cases: Any, results: Any) -> Any:
    from qlab.stages.base import StageReport

    return StageReport("search")


def child(kind: str, folder: Path, queries: int) -> None:
    corpus = bench_search.metatool()
    corpus.cases = corpus.cases[:queries]
    if kind.startswith("bm25s"):
        texts = [bench_search.flat_text(t) for t in corpus.tools]
        questions = [q for q, _ in corpus.cases]
        for _ in range(int(kind[-1])):
            bench_search.bm25s_pipeline(texts, questions)
        return
    from qlab.project import load_project
    from qlab.run.runner import RunOptions, Seams, run

    config = bench_search.write_project(corpus, folder, engine="builtin")
    seams = Seams(stages={"search": _noop_search}) if kind == "qlab-empty" else Seams()
    run(load_project(config), options=RunOptions(seams=seams))


def instructions(kind: str, folder: Path, queries: int) -> int:
    out = folder / f"callgrind.{kind}"
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__,
         "--child", kind, "--folder", str(folder / kind), "--queries", str(queries)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    match = re.search(r"^summary:\s+(\d+)", out.read_text(encoding="utf-8"), re.M)
    if match is None:
        raise SystemExit(f"{out}: no summary line")
    return int(match.group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.folder, args.queries)
        return 0
    with tempfile.TemporaryDirectory(prefix="qlab-count-") as tmp:
        folder = Path(tmp)
        counts = {
            kind: instructions(kind, folder, args.queries)
            for kind in ("qlab", "qlab-empty", "bm25s1", "bm25s3")
        }
    stage = counts["qlab"] - counts["qlab-empty"]
    bm25s = (counts["bm25s3"] - counts["bm25s1"]) // 2
    print(json.dumps({"queries": args.queries, **counts, "qlab_search_stage": stage, "bm25s_pipeline": bm25s,
                      "bm25s_over_qlab": round(bm25s / stage, 3)}, indent=2))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
