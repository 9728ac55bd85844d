"""``qlab run`` as a whole process against a raw httpx loop (also a whole process): what a CI job waits for.

    python bench/bench_whole_execute.py nginx   [--n 2000] [--rounds 5] [--concurrency 1 8 ...] [--format yaml]
    python bench/bench_whole_execute.py latency [--n 400] [--concurrency 16] [--delay-ms 20] [--rounds 5]
    python bench/bench_whole_execute.py sweep   [--n 2000] [--rounds 3]    # concurrency 1, 4, 8, 16, 32, default
    [--json FILE] [--stepci DIR] [--before RUNNER]

``--stepci DIR``: also run the peer Step CI (``DIR/node_modules/.bin/stepci``, installed with
``npm install --prefix DIR stepci``; not a dependency of qlab) on a workflow doing the same N requests and checks
(status 200, ``$.data`` exists), in the same rounds. ``--before RUNNER``: also run an earlier qlab, its source root
(``git archive REV runner schemas | tar -x -C DIR``, then ``DIR/runner``) first on ``PYTHONPATH``, in the same
rounds: a before/after figure of whole processes against the same baseline.

A generated project: one OpenAPI operation ``getItem`` (``GET /items/{id}``), N execute cases
(``provided_entities: {id: i}``, assertions ``http_status in [200]`` and ``json_path_exists $.data``) in one
case file, an environment pointing at the server, and two gates (build, execute). ``qlab run`` runs them
exactly as a user's CI would (search → select → plan → execute per case, result.json + JUnit + summary).

Baselines, also whole processes started the same way:
- nginx: the raw sequential httpx loop over the same N URLs (GET, check 200 and ``data``);
- latency (a server answering each request ``delay-ms`` late): the ideal ``N x delay / concurrency`` and a raw
  httpx thread pool of the same width, which is the floor a Python client reaches on this machine.

Each side runs ``--rounds`` times in turns after one warm-up round (see ``bench/whole.py``); the ratio is the
median of the per-round ratios. qlab's time is split into phases from its own marks (``QLAB_TIMINGS``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_execute import RAW_CHILD, delay_server, nginx
from whole import QLAB, Comparison, Measured, expect_exit, interleave, load_average, measure

SPEC = """\
openapi: 3.0.3
info: {title: items, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      summary: Get an item by its id
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: the item
          content:
            application/json:
              schema:
                type: object
                properties:
                  data: {type: object}
"""

CONFIG = """\
version: 1
project: whole-process-bench
collection:
  sources:
    - name: items
      openapi: openapi.yaml
environments:
  bench:
    base_url: {base}
    allowed_hosts: [127.0.0.1]
{concurrency}suites:
  reads:
    mode: execute
    cases: [cases/reads.{ext}]
    environment: bench
gates:
  - name: build
    stage: build
  - name: execute
    stage: execute
    suites: [reads]
    thresholds:
      execute_read_success_rate: ">= 1.0"
output:
  dir: out
"""


def write_project(folder: Path, base: str, n: int, *, concurrency: int | None, fmt: str) -> Path:
    """The generated project (see the module docstring); returns its qlab.yaml."""
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    (folder / "openapi.yaml").write_text(SPEC, encoding="utf-8")
    width = f"    concurrency: {concurrency}\n" if concurrency else ""
    ext = {"yaml": "yaml", "jsonl": "jsonl"}[fmt]
    (folder / "qlab.yaml").write_text(CONFIG.format(base=base, concurrency=width, ext=ext), encoding="utf-8")
    cases = folder / "cases" / f"reads.{ext}"
    with cases.open("w", encoding="utf-8") as out:
        for i in range(n):
            if fmt == "jsonl":
                case = {
                    "id": f"read-{i}",
                    "query": "get item",
                    "expected_target": "getItem",
                    "provided_entities": {"id": i},
                    "assertions": [
                        {"type": "http_status", "in": [200]},
                        {"type": "json_path_exists", "path": "$.data"},
                    ],
                }
                out.write(json.dumps(case) + "\n")
            else:
                out.write(
                    f"- id: read-{i}\n  query: get item\n  expected_target: getItem\n"
                    f"  provided_entities: {{id: {i}}}\n  assertions:\n"
                    "    - {type: http_status, in: [200]}\n    - {type: json_path_exists, path: $.data}\n"
                )
    return folder / "qlab.yaml"


def qlab_side(config: Path, runner: Path | None = None) -> Callable[[], Measured]:
    """``qlab run`` on ``config``; ``runner``: another checkout's source root (``runner/``) run instead of this one."""
    env = {"PYTHONPATH": str(runner)} if runner is not None else None
    return partial(measure, [*QLAB, "run", "--config", str(config), "--quiet"], cwd=config.parent, env=env)


RAW_START = "raw loop, no requests"


def raw_side(base: str, n: int) -> Callable[[], Measured]:
    return partial(measure, [sys.executable, "-c", RAW_CHILD, base, str(n)], timings=False)


POOL_CHILD = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
import httpx
base, n, width = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def check(r):
    assert r.status_code == 200 and "data" in r.json()
limits = httpx.Limits(max_connections=width, max_keepalive_connections=width)
with httpx.Client(limits=limits) as c, ThreadPoolExecutor(width) as pool:
    list(pool.map(lambda i: check(c.get(f"{base}/items/{i}")), range(n)))
print(json.dumps({"ok": True}))
"""


def pool_side(base: str, n: int, width: int) -> Callable[[], Measured]:
    return partial(measure, [sys.executable, "-c", POOL_CHILD, base, str(n), str(width)], timings=False)


def stepci_side(stepci: Path, folder: Path, base: str, n: int) -> Callable[[], Measured]:
    """The peer Step CI on a workflow of N steps, one per URL, with the same checks."""
    steps = "".join(
        f"      - name: read-{i}\n        http:\n          url: {base}/items/{i}\n          method: GET\n"
        "          check:\n            status: 200\n            jsonexists:\n              $.data: true\n"
        for i in range(n)
    )
    workflow = folder / "workflow.yml"
    workflow.write_text(
        f'version: "1.1"\nname: bench\ntests:\n  reads:\n    steps:\n{steps}', encoding="utf-8"
    )
    command = [str(stepci / "node_modules" / ".bin" / "stepci"), "run", str(workflow)]
    return partial(measure, command, timings=False, env={"STEPCI_DISABLE_ANALYTICS": "1"})


def check_all(name: str, measured: Measured) -> None:
    expect_exit(0)(name, measured)


def report(title: str, comparison: Comparison, baseline: str, qlab_sides: list[str]) -> dict[str, object]:
    print(f"\n### {title}\n")
    print(f"{comparison.load_before} → {comparison.load_after}\n")
    print(comparison.table(baseline))
    for name in qlab_sides:
        print()
        print(comparison.split_table(name))
    return {"title": title, **comparison.to_json()}


def bench_nginx(
    n: int,
    rounds: int,
    widths: list[int | None],
    fmt: str,
    stepci: Path | None = None,
    before: Path | None = None,
    start: bool = False,
) -> dict[str, object]:
    """``start``: also the raw loop with no requests (its interpreter, httpx's import, a client made and
    closed), so the raw loop's cost a request can be told from its fixed cost (``bench/goals.py``'s floors)."""
    with nginx() as base, tempfile.TemporaryDirectory(prefix="qlab-whole-") as tmp:
        sides: dict[str, Callable[[], Measured]] = {"raw loop": raw_side(base, n)}
        if start:
            sides[RAW_START] = raw_side(base, 0)
        if stepci is not None:
            sides["Step CI"] = stepci_side(stepci, Path(tmp), base, n)
        names = []
        for width in widths:
            name = f"qlab (concurrency {width or 'default'})"
            sides[name] = qlab_side(
                write_project(Path(tmp) / f"c{width}", base, n, concurrency=width, fmt=fmt)
            )
            names.append(name)
            if before is not None:
                sides[f"{name}, before"] = qlab_side(Path(tmp) / f"c{width}" / "qlab.yaml", before)
                names.append(f"{name}, before")
        comparison = interleave(sides, rounds=rounds, check=check_all)
        return report(
            f"nginx, N={n} read cases ({fmt} case file), {rounds} rounds", comparison, "raw loop", names
        )


def bench_latency(
    n: int, rounds: int, width: int, delay_ms: float, fmt: str, before: Path | None = None
) -> dict[str, object]:
    ideal = n * delay_ms / 1000 / width
    with delay_server(delay_ms) as base, tempfile.TemporaryDirectory(prefix="qlab-whole-") as tmp:
        config = write_project(Path(tmp), base, n, concurrency=width, fmt=fmt)
        sides = {
            f"raw thread pool ({width})": pool_side(base, n, width),
            f"qlab (concurrency {width})": qlab_side(config),
        }
        if before is not None:
            sides[f"qlab (concurrency {width}), before"] = qlab_side(config, before)
        comparison = interleave(sides, rounds=rounds, check=check_all)
        out = report(
            f"{delay_ms:g} ms server, N={n} at concurrency {width}: ideal {ideal:.3f} s, {rounds} rounds",
            comparison,
            f"raw thread pool ({width})",
            [name for name in sides if name.startswith("qlab")],
        )
        for name in sides:
            print(
                f"{name}: median wall {comparison.median_wall(name):.3f} s = {comparison.median_wall(name) / ideal:.2f}x ideal"
            )
        out["ideal_s"] = ideal
        return out


def bench_sweep(n: int, rounds: int, delay_ms: float, fmt: str) -> list[dict[str, object]]:
    widths: list[int | None] = [1, 4, 8, 16, 32, None]
    results = [bench_nginx(n, rounds, widths, fmt)]
    with delay_server(delay_ms) as base, tempfile.TemporaryDirectory(prefix="qlab-whole-") as tmp:
        sides: dict[str, Callable[[], Measured]] = {}
        for width in widths:
            config = write_project(Path(tmp) / f"c{width}", base, n // 5, concurrency=width, fmt=fmt)
            sides[f"qlab (concurrency {width or 'default'})"] = qlab_side(config)
        comparison = interleave(sides, rounds=rounds, check=check_all)
        results.append(
            report(
                f"{delay_ms:g} ms server, N={n // 5}, concurrency sweep, {rounds} rounds",
                comparison,
                "qlab (concurrency default)",
                [],
            )
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("which", choices=["nginx", "latency", "sweep"])
    parser.add_argument("--n", type=int)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="*")
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--format", choices=["yaml", "jsonl"], default="yaml")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--stepci", type=Path, metavar="DIR", help="also run Step CI installed under DIR")
    parser.add_argument(
        "--before",
        type=Path,
        metavar="RUNNER",
        help="also run another checkout's qlab (its runner/ folder, e.g. from `git archive REV runner schemas`) "
        "in the same rounds",
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    print(f"# whole-process execute benchmark; {load_average()}")
    if args.which == "nginx":
        out: object = bench_nginx(
            args.n or 2000,
            args.rounds,
            list(args.concurrency or [None]),
            args.format,
            args.stepci,
            args.before,
        )
    elif args.which == "latency":
        width = (args.concurrency or [16])[0]
        out = bench_latency(args.n or 400, args.rounds, width, args.delay_ms, args.format, args.before)
    else:
        out = bench_sweep(args.n or 2000, args.rounds, args.delay_ms, args.format)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
