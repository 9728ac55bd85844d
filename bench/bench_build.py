"""Build-stage benchmark (run by hand; not a test). Figures go to bench/RESULTS-build.md.

    python bench/bench_build.py                    # Kubernetes (1,123 operations), 5 repeats
    python bench/bench_build.py --repeat 9 --spec /path/to/other/openapi.json
    python bench/bench_build.py --whole --repeat 5   # whole processes in turns (bench/whole.py): `qlab build
        # --no-cache` and `qlab build` against a process that only json.loads the spec

Target (issue 3): building the Kubernetes spec takes <= 2 s on this machine. Measured in the same run:

- baseline: ``json.load`` of the spec file (the least any build must do);
- build: ``build_collection(config, use_cache=False)`` in process (sources read, $refs resolved, tools,
  contracts, canonical artifact + digest, readiness), and its phases;
- cached: a second ``build_collection`` that finds the artifact in the cache (no parsing);
- cli: ``qlab build --no-cache`` and ``qlab build`` as whole processes (interpreter start and imports included),
  on a generated project whose qlab.yaml points at the spec.

Min and median of ``--repeat`` runs. The machine is shared: the minimum is the least disturbed figure, and
ratios to the baseline of the same run compare better than absolute times across runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))
KUBERNETES = ROOT.parent / "shared" / "data" / "openapi-specs" / "kubernetes" / "swagger.json"

QLAB_YAML = """version: 1
project: bench-build
collection:
  sources:
    - name: api
      {kind}: {spec}
suites:
  search: {{mode: search, cases: [cases/*.yaml]}}
gates:
  - name: build
    stage: build
"""


def timings(fn: Callable[[], Any], repeat: int, *, children: bool = False) -> tuple[float, float, float]:
    """(min wall, median wall, min CPU) seconds of ``repeat`` runs. On a shared machine the minimum is the least
    disturbed wall figure, and CPU time (this process's, or its children's for subprocesses) hardly depends on
    what else runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        cpu0 = _cpu(children)
        started = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - started)
        cpus.append(_cpu(children) - cpu0)
    return min(walls), statistics.median(walls), min(cpus)


def _cpu(children: bool) -> float:
    if not children:
        return time.process_time()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def phases(spec: Path) -> dict[str, float]:
    """One uncached build split into its phases (CPU seconds)."""
    from qlab.collection import artifact, documents
    from qlab.collection.collisions import merge_sources
    from qlab.collection.contracts import find_contracts
    from qlab.collection.model import Collection
    from qlab.collection.openapi import read_document
    from qlab.collection.readiness import compute_readiness
    from qlab.project.model import CollectionConfig, Config, EngineConfig, Source

    out: dict[str, float] = {}
    t = time.process_time()
    doc = documents.load(str(spec))
    out["read + parse"] = time.process_time() - t
    t = time.process_time()
    tools, _ = merge_sources([("api", read_document(doc, source_name="api").tools)])
    out["$refs + tools"] = time.process_time() - t
    t = time.process_time()
    contracts = find_contracts(tools)
    out["contracts"] = time.process_time() - t
    t = time.process_time()
    collection, text = artifact.finalize(tuple(tools), contracts, ({"name": "api"},))
    out["artifact + digest"] = time.process_time() - t
    cfg = Config(version=1, project="b", path=str(spec.parent / "qlab.yaml"),
                 collection=CollectionConfig(sources=(Source("api", "openapi", str(spec)),)),
                 engine=EngineConfig(), environments={}, auth_profiles={}, suites={}, gates=())  # fmt: skip
    t = time.process_time()
    compute_readiness(Collection(collection.tools, collection.contracts, collection.digest), cfg)
    out["readiness"] = time.process_time() - t
    out["artifact MB"] = len(text.encode()) / 1e6
    return out


def cli_seconds(project: Path, args: list[str], repeat: int) -> tuple[float, float, float]:
    def once() -> None:
        subprocess.run([sys.executable, "-m", "qlab", "build", "--config", str(project / "qlab.yaml"), *args],
                       check=True, capture_output=True, cwd=project)  # fmt: skip

    return timings(once, repeat, children=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--spec", type=Path, default=KUBERNETES)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--whole", action="store_true", help="whole processes only, in turns (bench/whole.py)"
    )
    options = parser.parse_args()
    spec: Path = options.spec.resolve()
    if options.whole:
        whole_process(spec, options.repeat)
        return
    from qlab.collection import build_collection
    from qlab.project.model import CollectionConfig, Config, EngineConfig, Source

    with tempfile.TemporaryDirectory(prefix="qlab-bench-build-") as tmp:
        project = Path(tmp)
        kind = _write_project(project, spec)
        cfg = Config(version=1, project="bench", path=str(project / "qlab.yaml"),
                     collection=CollectionConfig(sources=(Source("api", kind, str(spec)),)),
                     engine=EngineConfig(), environments={}, auth_profiles={}, suites={}, gates=())  # fmt: skip

        def load() -> None:
            with spec.open(encoding="utf-8") as handle:
                json.load(handle)

        baseline = timings(load, options.repeat)
        build_collection(cfg, use_cache=False)  # imports and lazy caches, not measured
        uncached = timings(lambda: build_collection(cfg, use_cache=False), options.repeat)
        build_collection(cfg)  # fills the cache
        cached = timings(lambda: build_collection(cfg), options.repeat)
        tools = len(build_collection(cfg).collection.tools)
        split = phases(spec)
        cli_cold = cli_seconds(project, ["--no-cache"], options.repeat)
        cli_cached = cli_seconds(project, [], options.repeat)

    print(f"spec: {spec} ({spec.stat().st_size / 1e6:.1f} MB, {tools} tools), {options.repeat} runs each")
    print(f"{'':34} {'wall min':>9} {'median':>8} {'CPU min':>8}  CPU/baseline")
    rows = [
        ("json.load (baseline)", baseline),
        ("build_collection, no cache", uncached),
        ("build_collection, cached", cached),
        ("qlab build --no-cache (process)", cli_cold),
        ("qlab build, cached (process)", cli_cached),
    ]
    for label, (low, mid, cpu) in rows:
        print(f"{label:34} {low:8.3f}s {mid:7.3f}s {cpu:7.3f}s  {cpu / baseline[2]:6.1f}x")
    print("phases of one uncached build (CPU):")
    for name, value in split.items():
        print(f"  {name:32} {value:7.3f}" + ("" if name.endswith("MB") else " s"))
    verdict = "PASS" if uncached[0] <= 2.0 else "FAIL"
    print(
        f"{verdict}: uncached build {uncached[0]:.3f} s wall (min), {uncached[2]:.3f} s CPU (target <= 2 s)"
    )


def _kind(spec: Path) -> str:
    """How the spec is declared in qlab.yaml: ``swagger`` for Swagger 2.0 (its ``swagger`` key may come last:
    Kubernetes writes it after 4 MB of definitions), else ``openapi``."""
    text = spec.read_text(encoding="utf-8")
    if spec.suffix == ".json":
        return "swagger" if "swagger" in json.loads(text) else "openapi"
    return "swagger" if text.startswith("swagger:") or "\nswagger:" in text else "openapi"


def _write_project(project: Path, spec: Path) -> str:
    """A one-source project around ``spec`` (one search case) in ``project``; returns the source's kind."""
    kind = _kind(spec)
    (project / "qlab.yaml").write_text(QLAB_YAML.format(kind=kind, spec=spec), encoding="utf-8")
    (project / "cases").mkdir()
    (project / "cases" / "s.yaml").write_text("- id: s-1\n  query: list pods\n", encoding="utf-8")
    return kind


def whole_process(spec: Path, rounds: int) -> None:
    from functools import partial

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from whole import QLAB, expect_exit, interleave, measure

    with tempfile.TemporaryDirectory(prefix="qlab-bench-build-") as tmp:
        project = Path(tmp)
        _write_project(project, spec)
        build = [*QLAB, "build", "--config", str(project / "qlab.yaml")]
        load = "import json, sys\nwith open(sys.argv[1], encoding='utf-8') as f: json.load(f)"
        sides = {
            "json.load process": partial(measure, [sys.executable, "-c", load, str(spec)], timings=False),
            "qlab build --no-cache": partial(measure, [*build, "--no-cache"], cwd=project, timings=False),
            "qlab build (cached)": partial(measure, build, cwd=project, timings=False),
        }
        comparison = interleave(sides, rounds=rounds, check=expect_exit(0))
    print(f"### {spec.name} ({spec.stat().st_size / 1e6:.1f} MB), whole processes, {rounds} rounds\n")
    print(f"{comparison.load_before} -> {comparison.load_after}\n")
    print(comparison.table("json.load process"))


if __name__ == "__main__":
    main()
