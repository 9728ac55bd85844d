"""``qlab init --from-openapi`` + the first ``qlab run`` on real specs (run by hand; not a test): the first run
passes, a broken alias blocks, and the time each step takes is printed. ``github_spec`` installs GitHub's REST
description from npm (bench_search.py's independent set reads it too).

    python bench/bench_init.py                       # Petstore, GitHub's spec and httpbin, 3 interleaved repeats
    python bench/bench_init.py --repeat 5 --spec /path/to/openapi.json

Target (issue 17): on a real spec, ``init --from-openapi`` then ``qlab run`` passes on the first try, and the
time it takes is recorded. For each spec and each repeat, interleaved, as whole processes:

- baseline: ``qlab build --no-cache`` of a project that only points at the spec (parse the spec, build the
  collection: the least any first run must do);
- init: ``qlab init DIR --from-openapi SPEC --offline`` (pin, write, build + search once to measure, write the
  thresholds); ``--offline`` because the bench contacts no host but 127.0.0.1 (GitHub's and Petstore's servers
  are on the internet): the execute suite is written but not gated;
- first run: ``qlab run`` in the new project (the build cache is warm from init), and its exit code;
- broken: the same project with one alias pasted on the wrong operation, ``qlab run`` again (must exit 1).

GitHub's spec is the npm package ``@octokit/openapi`` (``generated/api.github.com.json``, 13 MB), installed on
demand under .qlab/node like the test suite's npm servers. Petstore is the shared data copy. httpbin (when
installed) runs under gunicorn on 127.0.0.1 and its spec is read by URL, without ``--offline``: there the
execute suite is measured and gated.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_DIR = ROOT / ".qlab" / "node"
PETSTORE = ROOT.parent / "shared" / "data" / "openapi-specs" / "petstore3" / "openapi.yaml"
OCTOKIT = "@octokit/openapi"
GITHUB = NODE_DIR / "node_modules" / "@octokit" / "openapi" / "generated" / "api.github.com.json"
QLAB = str(Path(sys.executable).parent / "qlab")

BUILD_ONLY = """version: 1
project: bench-init-baseline
collection:
  sources:
    - name: api
      {kind}: {spec}
suites:
  s: {{mode: search, cases: [none/*.yaml]}}
gates:
  - name: build
    stage: build
"""


def github_spec() -> Path | None:
    """GitHub's spec from npm, installed under .qlab/node on first use; None when npm cannot get it."""
    if GITHUB.exists():
        return GITHUB
    npm = shutil.which("npm")
    if npm is None:
        return None
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR), OCTOKIT],
                   capture_output=True, timeout=900, check=False)  # fmt: skip
    return GITHUB if GITHUB.exists() else None


def timed(args: list[str], cwd: Path) -> tuple[float, int, str]:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    return time.perf_counter() - started, done.returncode, done.stdout + done.stderr


def one_round(spec: str, scratch: Path, n: int, *, server: str | None = None) -> dict[str, tuple[float, int]]:
    """One interleaved round on ``spec`` (a path, or a URL served by ``server`` on 127.0.0.1)."""
    base = scratch / f"baseline-{n}"
    base.mkdir()
    head = _spec_text(spec)
    kind = "swagger" if '"swagger"' in head[:2000] or head.startswith("swagger") else "openapi"
    (base / "qlab.yaml").write_text(BUILD_ONLY.format(kind=kind, spec=json.dumps(spec)))
    out: dict[str, tuple[float, int]] = {}
    seconds, code, text = timed([QLAB, "build", "--no-cache", "--json"], base)
    out["baseline: qlab build --no-cache"] = (seconds, code)
    target = scratch / f"project-{n}"
    where = ["--base-url", server] if server else ["--offline"]
    seconds, code, text = timed([QLAB, "init", str(target), "--from-openapi", spec, *where], scratch)
    assert code == 0, text[-2000:]
    if server:
        assert "measured: execute_read_success_rate" in text, text[
            -2000:
        ]  # execute gated: the server answers
    out["qlab init --from-openapi" + ("" if server else " --offline")] = (seconds, code)
    seconds, code, text = timed([QLAB, "run", "-q"], target)
    out["first qlab run"] = (seconds, code)
    assert code == 0, f"the first run of {spec} did not pass: {text[-2000:]}"
    (target / "gates" / "aliases.yaml").write_text(_stealing_alias(target))
    seconds, code, text = timed([QLAB, "run", "-q"], target)
    out["qlab run, a broken alias"] = (seconds, code)
    assert code == 1, f"a broken alias did not block on {spec}: {text[-2000:]}"
    return out


def _stealing_alias(project: Path) -> str:
    """The query of a case whose target ranked first, pasted (three ways) as aliases of the runner-up."""
    import yaml

    cases = yaml.safe_load(
        (project / "gates" / "search_core" / "operations.yaml").read_text(encoding="utf-8")
    )
    queries = {case["id"]: case["query"] for case in cases}
    result = json.loads((project / ".qlab" / "out" / "result.json").read_text(encoding="utf-8"))
    for case in result["cases"]:
        search = case.get("search") or {}
        rows = search.get("rows")
        rows = json.loads(rows) if isinstance(rows, str) else rows
        if search.get("hit_rank") == 1 and rows and len(rows) > 1:
            query = queries[case["case_id"]]
            pasted = ", ".join(json.dumps(q) for q in (query, query.lower(), query.upper()))
            return f"{json.dumps(rows[1]['tool_id'])}: [{pasted}]\n"
    raise SystemExit("no case ranked its target first: nothing to break")


def _spec_text(spec: str) -> str:
    if spec.startswith("http"):
        import urllib.request

        with urllib.request.urlopen(spec, timeout=10) as response:
            return str(response.read(4000).decode("utf-8", "replace"))
    return Path(spec).read_text(encoding="utf-8")[:4000]


@contextlib.contextmanager
def httpbin() -> Iterator[str | None]:
    """httpbin under gunicorn on a free 127.0.0.1 port (the tests' helper), or None when it is not installed."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        import servers
    except ImportError:
        yield None
        return
    if shutil.which("gunicorn") is None and not (Path(sys.executable).parent / "gunicorn").exists():
        yield None
        return
    with servers.httpbin() as url:
        yield url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--spec", type=Path, action="append", help="a spec (default: Petstore and GitHub's)")
    options = parser.parse_args()
    if options.repeat < 1:
        parser.error("--repeat must be at least 1")
    files = [s for s in (options.spec or [PETSTORE, github_spec()]) if s is not None and s.exists()]
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="qlab-bench-init-") as scratch, httpbin() as server:
        specs: list[tuple[str, str | None]] = [(str(f), None) for f in files]
        if server and not options.spec:
            specs.append((f"{server}/spec.json", server))  # httpbin: execute gated against the live server
        if not specs:
            raise SystemExit("no spec found (shared data missing and npm could not install @octokit/openapi)")
        rows: dict[str, dict[str, list[float]]] = {spec: {} for spec, _ in specs}
        for n in range(options.repeat):
            for number, (spec, url) in enumerate(specs):  # interleaved: each repeat measures every spec once
                folder = Path(scratch) / f"{number}-{n}"
                folder.mkdir()
                for label, (seconds, _code) in one_round(spec, folder, n, server=url).items():
                    rows[spec].setdefault(label, []).append(seconds)
                loads.append(os.getloadavg()[0])
    print(f"python {sys.version.split()[0]}, load average (1 min) {min(loads):.1f}-{max(loads):.1f}, "
          f"{options.repeat} interleaved repeats")  # fmt: skip
    for spec, _url in specs:
        figures = rows[spec]
        base = statistics.median(figures["baseline: qlab build --no-cache"])
        size = (
            f"{Path(spec).stat().st_size / 1e6:.1f} MB"
            if not spec.startswith("http")
            else "served by httpbin"
        )
        print(f"\n{Path(spec).name} ({size})")
        print(f"  {'':40} {'min':>8} {'median':>8} {'/ baseline':>10}")
        for label, values in figures.items():
            median = statistics.median(values)
            print(f"  {label:40} {min(values):7.2f}s {median:7.2f}s {median / base:9.2f}x")


if __name__ == "__main__":
    main()
