"""Execute-stage benchmarks (run by hand; not tests). Figures go to bench/RESULTS-execute.md.

    python bench/bench_execute.py                 # all: nginx N=2000, the 20 ms server N=400 @16, alternatives
    python bench/bench_execute.py nginx --n 2000
    python bench/bench_execute.py latency --n 400 --concurrency 16 --delay-ms 20
    python bench/bench_execute.py alternatives --n 2000
    python bench/bench_execute.py cpu --n 2000     # CPU per case with the network taken out

nginx: a local nginx (Debian package ``nginx``) on 127.0.0.1 with a generated config in a temp dir serves N
distinct URLs ``/items/<i>`` → ``{"data": {"id": i}}``. Both sides run as whole processes, measured from the
outside: a raw sequential httpx loop (GET, check 200 and ``data``) and qlab's execute stage running N read
cases (assert ``http_status in [200]`` and ``json_path_exists $.data``). Targets: qlab <= 1.6x raw, peak RSS
≤ 60 MiB.

latency: a small threaded Python server (its own process) that waits ``delay-ms`` before answering; N cases at
concurrency C; the ideal is N * delay / C. Target: <= 1.3x ideal.

alternatives: the client strategies the issue names, on the nginx server: sequential sync, a thread pool over
one sync client (8, 16), one AsyncClient with 16 in flight; and whether the sync path imports ``sniffio``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_up(url: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


@contextmanager
def process_group(cmd: list[str], ready: str) -> Iterator[None]:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_up(ready)
        yield
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  keepalive_requests 1000000;
  server {{
    listen 127.0.0.1:{port};
    location ~ ^/items/(\\d+)$ {{
      default_type application/json;
      return 200 '{{"data": {{"id": $1}}}}';
    }}
  }}
}}
"""


@contextmanager
def nginx() -> Iterator[str]:
    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(exe).exists():
        sys.exit("nginx is not installed: apt-get install -y nginx")
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, port=port))
        with process_group([exe, "-p", tmp, "-c", str(conf)], f"http://127.0.0.1:{port}/items/0"):
            yield f"http://127.0.0.1:{port}"


DELAY_SERVER = """
import json, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
delay = float(sys.argv[2]) / 1000
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in two writes: Nagle + delayed ACK would add 40 ms
    def do_GET(self):
        time.sleep(delay)
        body = json.dumps({"data": {"path": self.path}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
class S(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
"""


@contextmanager
def delay_server(delay_ms: float) -> Iterator[str]:
    port = free_port()
    cmd = [sys.executable, "-c", DELAY_SERVER, str(port), str(delay_ms)]
    with process_group(cmd, f"http://127.0.0.1:{port}/ready"):
        yield f"http://127.0.0.1:{port}"


# ---------------------------------------------------------------------------------------------- children


RAW_CHILD = """
import json, sys, time
import httpx
base, n = sys.argv[1], int(sys.argv[2])
started = time.perf_counter()
with httpx.Client() as client:
    for i in range(n):
        r = client.get(f"{base}/items/{i}")
        assert r.status_code == 200 and "data" in r.json()
loop = time.perf_counter() - started
print(json.dumps({"loop_s": loop, "sniffio_imported": "sniffio" in sys.modules}))
"""


def qlab_child(base: str, n: int, concurrency: int, path_template: str) -> None:
    """Runs in a child process: qlab's execute stage over N read cases; prints JSON figures."""
    import resource

    started = time.perf_counter()
    from qlab.collection.model import Collection, Parameter, Tool
    from qlab.engine.types import Plan, PlanStep
    from qlab.project.model import (
        Assertion,
        Case,
        CollectionConfig,
        Config,
        EngineConfig,
        Environment,
        Gate,
        Origin,
        Suite,
    )
    from qlab.results import CaseResult
    from qlab.stages.base import RunContext
    from qlab.stages.execute import close_shared, run

    imported = time.perf_counter()
    tool = Tool(
        "getItem",
        "getItem",
        "items",
        "bench",
        "openapi",
        method="GET",
        path=path_template,
        parameters=(Parameter("id", "path", True, {"type": "integer"}),),
    )
    checks = (Assertion("http_status", {"in": [200]}), Assertion("json_path_exists", {"path": "$.data"}))
    origin = Origin("bench.yaml")
    cases = [
        Case(f"read-{i}", "execute", "get item", "reads", "bench.yaml", origin, assertions=checks)
        for i in range(n)
    ]
    plans = {
        c.id: Plan(f"p{i}", "synthesized", (PlanStep("getItem", {"id": i}),)) for i, c in enumerate(cases)
    }
    environment = Environment("bench", base, concurrency=concurrency)
    config = Config(
        1,
        "bench",
        "/tmp/qlab.yaml",
        CollectionConfig(()),
        EngineConfig(),
        {"bench": environment},
        {},
        {"reads": Suite("reads", "execute", (), environment="bench")},
        (),
    )
    ctx = RunContext(config, Collection((tool,)), engine=None, gate=Gate("execute", "execute", ("reads",)))  # type: ignore[arg-type]
    ctx.shared["plans"] = plans
    results = {c.id: CaseResult(c.id, c.suite, c.mode) for c in cases}
    stage_started = time.perf_counter()
    report = run(ctx, cases, results)
    stage = time.perf_counter() - stage_started
    close_shared(ctx)
    passed = sum(r.status == "passed" for r in results.values())
    print(
        json.dumps(
            {
                "import_s": imported - started,
                "stage_s": stage,
                "passed": passed,
                "n": n,
                "success_rate": report.metrics["execute_success_rate"],
                "p50_ms": report.metrics["latency_p50_ms"],
                "p95_ms": report.metrics["latency_p95_ms"],
                "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "sniffio_imported": "sniffio" in sys.modules,
            }
        )
    )


def child(args: list[str]) -> dict[str, float]:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True)
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    figures["process_s"] = time.perf_counter() - started
    return figures


def qlab_run(base: str, n: int, concurrency: int, template: str) -> dict[str, float]:
    return child([__file__, "_qlab", base, str(n), str(concurrency), template])


# ---------------------------------------------------------------------------------------------- benchmarks


def bench_nginx(n: int, repeat: int) -> None:
    with nginx() as base:
        print(f"nginx at {base}, N={n}, best of {repeat}")
        child(["-c", RAW_CHILD, base, "200"])  # warm the page cache / nginx
        raw = min(
            (child(["-c", RAW_CHILD, base, str(n)]) for _ in range(repeat)), key=lambda f: f["process_s"]
        )
        rows = {}
        for concurrency in (1, 8):
            rows[concurrency] = min(
                (qlab_run(base, n, concurrency, "/items/{id}") for _ in range(repeat)),
                key=lambda f: f["process_s"],
            )
        print(f"raw httpx loop: process {raw['process_s']:.3f}s, loop {raw['loop_s']:.3f}s")
        for concurrency, q in rows.items():
            assert q["passed"] == n, q
            print(
                f"qlab concurrency {concurrency}: process {q['process_s']:.3f}s ({q['process_s'] / raw['process_s']:.2f}x raw process), "
                f"stage {q['stage_s']:.3f}s ({q['stage_s'] / raw['loop_s']:.2f}x raw loop), imports {q['import_s']:.3f}s, "
                f"peak RSS {q['peak_rss_mib']:.1f} MiB, p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms"
            )


def bench_latency(n: int, concurrency: int, delay_ms: float, repeat: int) -> None:
    ideal = n * delay_ms / 1000 / concurrency
    with delay_server(delay_ms) as base:
        print(
            f"delay server at {base}: {delay_ms} ms per request, N={n}, concurrency {concurrency}, ideal {ideal:.3f}s"
        )
        best = min(
            (qlab_run(base, n, concurrency, "/items/{id}") for _ in range(repeat)), key=lambda f: f["stage_s"]
        )
        assert best["passed"] == n, best
        mode = f"threads{concurrency}"
        raw = min(
            (child(["-c", ALTERNATIVES_CHILD, base, str(n), mode]) for _ in range(repeat)),
            key=lambda f: f["loop_s"],
        )
        print(
            f"raw httpx thread pool ({mode}): {raw['loop_s']:.3f}s = {raw['loop_s'] / ideal:.2f}x ideal (this machine's floor)"
        )
        print(
            f"qlab stage {best['stage_s']:.3f}s = {best['stage_s'] / ideal:.2f}x ideal (process {best['process_s']:.3f}s)"
        )


ALTERNATIVES_CHILD = """
import asyncio, json, sys, time
from concurrent.futures import ThreadPoolExecutor
import httpx
base, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
urls = [f"{base}/items/{i}" for i in range(n)]
def check(r):
    assert r.status_code == 200 and "data" in r.json()
started = time.perf_counter()
if mode == "sequential":
    with httpx.Client() as c:
        for u in urls:
            check(c.get(u))
elif mode.startswith("threads"):
    width = int(mode[7:])
    limits = httpx.Limits(max_connections=width, max_keepalive_connections=width)
    with httpx.Client(limits=limits) as c, ThreadPoolExecutor(width) as pool:
        list(pool.map(lambda u: check(c.get(u)), urls))
else:
    async def main():
        limits = httpx.Limits(max_connections=16, max_keepalive_connections=16)
        sem = asyncio.Semaphore(16)
        async with httpx.AsyncClient(limits=limits) as c:
            async def one(u):
                async with sem:
                    check(await c.get(u))
            await asyncio.gather(*(one(u) for u in urls))
    asyncio.run(main())
took = time.perf_counter() - started
print(json.dumps({"loop_s": took, "rps": n / took, "sniffio_imported": "sniffio" in sys.modules}))
"""


def bench_alternatives(n: int, repeat: int) -> None:
    with nginx() as base:
        print(f"client strategies on nginx, N={n}, best of {repeat}")
        for mode in ("sequential", "threads8", "threads16", "async16"):
            best = min(
                (child(["-c", ALTERNATIVES_CHILD, base, str(n), mode]) for _ in range(repeat)),
                key=lambda f: f["loop_s"],
            )
            print(
                f"{mode:>10}: {best['loop_s']:.3f}s, {best['rps']:.0f} req/s, sniffio imported: {best['sniffio_imported']}"
            )
        try:
            import sniffio

            print(f"sniffio {sniffio.__version__} is installed")
        except ImportError:
            print("sniffio is not installed")


def bench_cpu(n: int, repeat: int) -> None:
    """CPU per case with the network taken out (httpx MockTransport): raw get+json vs qlab's case runner."""
    import httpx

    from qlab.collection.model import Parameter, Tool
    from qlab.engine.types import Plan, PlanStep
    from qlab.execute.auth import AuthResolver
    from qlab.execute.case import CaseRunner
    from qlab.execute.client import make_run_client
    from qlab.project.model import Assertion, Case, Environment, Origin
    from qlab.results import CaseResult

    body = b'{"data": {"id": 1}}'
    transport = httpx.MockTransport(
        lambda _r: httpx.Response(200, content=body, headers={"content-type": "application/json"})
    )
    tool = Tool("getItem", "getItem", "items", "bench", "openapi", method="GET", path="/items/{id}",
                parameters=(Parameter("id", "path", True, {"type": "integer"}),))  # fmt: skip
    checks = (Assertion("http_status", {"in": [200]}), Assertion("json_path_exists", {"path": "$.data"}))
    cases = [
        Case(f"read-{i}", "execute", "q", "reads", "b.yaml", Origin("b"), assertions=checks) for i in range(n)
    ]
    plans = [Plan(f"p{i}", "synthesized", (PlanStep("getItem", {"id": i}),)) for i in range(n)]
    env = Environment("bench", "http://bench.test")
    raw, ours = [], []
    for _ in range(repeat * 2):
        with httpx.Client(transport=transport) as client:
            started = time.process_time()
            for i in range(n):
                client.get(f"http://bench.test/items/{i}").json()
            raw.append(time.process_time() - started)
        runner = CaseRunner(client=make_run_client(transport=transport), tools={"getItem": tool},
                            resolver=AuthResolver({}))  # fmt: skip
        started = time.process_time()
        for i in range(n):
            runner.run(cases[i], plans[i], env, CaseResult(cases[i].id, "reads", "execute"))
        ours.append(time.process_time() - started)
        runner.client.close()
    r, q = min(raw) / n * 1e6, min(ours) / n * 1e6
    print(
        f"CPU per case (MockTransport, N={n}, min of {repeat * 2}): raw get+json {r:.0f} us, qlab case {q:.0f} us ({q / r:.2f}x)"
    )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_qlab":
        qlab_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "which", nargs="?", default="all", choices=["all", "nginx", "latency", "alternatives", "cpu"]
    )
    parser.add_argument("--n", type=int)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.which in ("all", "nginx"):
        bench_nginx(args.n or 2000, args.repeat)
    if args.which in ("all", "latency"):
        bench_latency(args.n or 400, args.concurrency, args.delay_ms, args.repeat)
    if args.which in ("all", "alternatives"):
        bench_alternatives(args.n or 2000, args.repeat)
    if args.which in ("all", "cpu"):
        bench_cpu(args.n or 2000, args.repeat)


if __name__ == "__main__":
    main()
