"""Execute-stage benchmarks (run by hand; not tests). Figures go to bench/RESULTS-execute.md.

    python bench/bench_execute.py                 # all: nginx N=2000, the 20 ms server N=400 @16, alternatives
    python bench/bench_execute.py nginx --n 2000
    python bench/bench_execute.py latency --n 400 --concurrency 16 --delay-ms 20 [--server asyncio|threaded|both]
    python bench/bench_execute.py alternatives --n 2000
    python bench/bench_execute.py cpu --n 2000     # CPU per case with the network taken out

nginx: a local nginx (Debian package ``nginx``) on 127.0.0.1 with a generated config in a temp dir serves N
distinct URLs ``/items/<i>`` → ``{"data": {"id": i}}``. Both sides run as whole processes, measured from the
outside: a raw sequential httpx loop (GET, check 200 and ``data``) and qlab's execute stage running N read
cases (assert ``http_status in [200]`` and ``json_path_exists $.data``), at concurrency 1 and 8 (the default).
Targets: qlab <= 1.6x raw, peak RSS ≤ 60 MiB.

latency: a small Python server in its own process (asyncio by default; ``--server threaded``: the first one,
http.server with a thread per connection) that answers each request ``delay-ms`` after reading it; a probe
first shows the delay one request at a time. N cases at concurrency C; the ideal is N * delay / C, and a raw
httpx thread pool of the same width is this machine's floor. Target: <= 1.3x ideal.

The sides of a comparison run in turns (raw, qlab, raw, qlab, ...), best of ``--repeat`` each, and the load
average is printed before and after: other processes on a 2-core machine move the figures more than any
change measured here.

alternatives: the client strategies the issue names, on the nginx server: sequential sync, a thread pool over
one sync client (8, 16), one AsyncClient with 16 in flight; and whether the sync path imports ``sniffio``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# argparse, shutil, signal, subprocess and tempfile are imported where they are used: the qlab child runs this
# file too, and its whole-process time is compared with a raw loop that imports only httpx.


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
    import signal
    import subprocess

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
    import shutil
    import tempfile

    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(exe).exists():
        sys.exit("nginx is not installed: apt-get install -y nginx")
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "nginx.conf"
        conf.write_text(NGINX_CONF.format(tmp=tmp, port=port))
        with process_group([exe, "-p", tmp, "-c", str(conf)], f"http://127.0.0.1:{port}/items/0"):
            yield f"http://127.0.0.1:{port}"


ASYNC_DELAY_SERVER = """
import asyncio, json, sys
delay = float(sys.argv[2]) / 1000
class Answer(asyncio.Protocol):
    # HTTP/1.1 keep-alive; every request is answered `delay` after it was read whole (a Content-Length body
    # is read and dropped). One thread, one selector: the server's own CPU per request stays small, so on a
    # 2-core machine it takes little from the client being measured. asyncio sets TCP_NODELAY.
    def connection_made(self, transport):
        self.transport, self.buffer, self.loop = transport, b"", asyncio.get_running_loop()
    def data_received(self, data):
        self.buffer += data
        while (end := self.buffer.find(b"\\r\\n\\r\\n")) >= 0:
            head, length = self.buffer[:end], 0
            for line in head.split(b"\\r\\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            self.buffer = self.buffer[end + 4 + length :]
            self.loop.call_later(delay, self.answer, head.split(b" ", 2)[1].decode("latin-1"))
    def answer(self, path):
        if not self.transport.is_closing():
            body = json.dumps({"data": {"path": path}}).encode()
            head = b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n"
            self.transport.write(head % len(body) + body)
async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Answer, "127.0.0.1", int(sys.argv[1]), backlog=128)
    await server.serve_forever()
asyncio.run(main())
"""


THREADED_DELAY_SERVER = """
# the first delay server: a thread per connection (http.server); kept to compare against
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

DELAY_SERVERS = {"asyncio": ASYNC_DELAY_SERVER, "threaded": THREADED_DELAY_SERVER}


@contextmanager
def delay_server(delay_ms: float, kind: str = "asyncio") -> Iterator[str]:
    port = free_port()
    cmd = [sys.executable, "-c", DELAY_SERVERS[kind], str(port), str(delay_ms)]
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
                "workers": sum(ctx.shared.get("execute_workers", {}).values()),
            }
        )
    )


# Children compile into (and then load from) their own bytecode cache, as an installed package would: this
# machine sets PYTHONDONTWRITEBYTECODE, and every source file changed since the last cache write would
# otherwise be compiled again in every child (qlab's imports, not httpx's).
CHILD_ENV: dict[str, str] = {}


def child(args: list[str], *, pythonpath: str | None = None) -> dict[str, float]:
    import resource
    import subprocess

    def cpu() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)  # children waited for; the servers are not yet
        return used.ru_utime + used.ru_stime

    started, cpu_before = time.perf_counter(), cpu()
    env = dict(CHILD_ENV or os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {}))
    out = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=True, env=env)
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    figures["process_s"] = time.perf_counter() - started
    figures["cpu_s"] = cpu() - cpu_before  # the whole process's CPU time: steadier than wall time under load
    # the part timed inside the child: qlab's stage, the raw loop
    figures["timed_s"] = figures["stage_s"] if "stage_s" in figures else figures.get("loop_s", 0.0)
    return figures


def qlab_run(
    base: str, n: int, concurrency: int, template: str, pythonpath: str | None = None
) -> dict[str, float]:
    """qlab's execute stage in a child; ``pythonpath``: another checkout's ``runner`` dir (``--compare``)."""
    return child([__file__, "_qlab", base, str(n), str(concurrency), template], pythonpath=pythonpath)


# ---------------------------------------------------------------------------------------------- benchmarks


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def interleaved(
    runs: dict[str, Callable[[], dict[str, float]]], repeat: int, key: str
) -> dict[str, dict[str, float]]:
    """The best (lowest ``key``) of ``repeat`` runs of each, taken in turns (a, b, c, a, b, c, ...) so that a
    change in the machine's load falls on every side alike."""
    best: dict[str, dict[str, float]] = {}
    for _ in range(repeat):
        for name, run in runs.items():
            figures = run()
            if name not in best or figures[key] < best[name][key]:
                best[name] = figures
    return best


def bench_nginx(n: int, repeat: int, compare: str | None = None) -> None:
    with nginx() as base:
        print(f"nginx at {base}, N={n}, best of {repeat}, runs interleaved; {load()}")
        child(["-c", RAW_CHILD, base, "200"])  # warm nginx and both sides' bytecode caches
        qlab_run(base, 20, 8, "/items/{id}")
        runs: dict[str, Callable[[], dict[str, float]]] = {
            "raw": lambda: child(["-c", RAW_CHILD, base, str(n)])
        }
        for concurrency in (1, 8):
            runs[f"qlab{concurrency}"] = partial(qlab_run, base, n, concurrency, "/items/{id}")
            if compare:
                qlab_run(base, 20, concurrency, "/items/{id}", compare)
                runs[f"qlab{concurrency} ({compare})"] = partial(
                    qlab_run, base, n, concurrency, "/items/{id}", compare
                )
        best = interleaved(runs, repeat, "process_s")
        raw = best.pop("raw")
        print(
            f"raw httpx loop: process {raw['process_s']:.3f}s, loop {raw['loop_s']:.3f}s, process CPU {raw['cpu_s']:.3f}s"
        )
        for name, q in best.items():
            assert q["passed"] == n, q
            print(
                f"qlab concurrency {name[4:]}: process {q['process_s']:.3f}s ({q['process_s'] / raw['process_s']:.2f}x raw process), "
                f"stage {q['stage_s']:.3f}s ({q['stage_s'] / raw['loop_s']:.2f}x raw loop), imports {q['import_s']:.3f}s, "
                f"peak RSS {q['peak_rss_mib']:.1f} MiB, p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms, workers {q['workers']}; "
                f"process CPU {q['cpu_s']:.3f}s ({q['cpu_s'] / raw['cpu_s']:.2f}x raw)"
            )
        print(load())


PROBE_CHILD = """
import json, sys, time
import httpx
base, n = sys.argv[1], int(sys.argv[2])
took = []
with httpx.Client() as client:
    client.get(f"{base}/warm")
    for i in range(n):
        started = time.perf_counter()
        assert client.get(f"{base}/items/{i}").status_code == 200
        took.append((time.perf_counter() - started) * 1000)
took.sort()
print(json.dumps({"min_ms": took[0], "median_ms": took[len(took) // 2], "max_ms": took[-1]}))
"""


def bench_latency(
    n: int, concurrency: int, delay_ms: float, repeat: int, servers: list[str], compare: str | None = None
) -> None:
    ideal = n * delay_ms / 1000 / concurrency
    for kind in servers:
        with delay_server(delay_ms, kind) as base:
            probe = child(["-c", PROBE_CHILD, base, "50"])  # also warms the bytecode caches
            qlab_run(base, 20, concurrency, "/items/{id}")
            print(
                f"{kind} delay server at {base}: {delay_ms} ms per request (one client, one at a time: "
                f"min {probe['min_ms']:.2f} / median {probe['median_ms']:.2f} / max {probe['max_ms']:.2f} ms), "
                f"N={n}, concurrency {concurrency}, ideal {ideal:.3f}s, best of {repeat}, runs interleaved; {load()}"
            )
            mode = f"threads{concurrency}"
            runs: dict[str, Callable[[], dict[str, float]]] = {
                "raw": partial(child, ["-c", ALTERNATIVES_CHILD, base, str(n), mode]),
                "qlab": partial(qlab_run, base, n, concurrency, "/items/{id}"),
            }
            if compare:
                qlab_run(base, 20, concurrency, "/items/{id}", compare)
                runs[f"qlab ({compare})"] = partial(qlab_run, base, n, concurrency, "/items/{id}", compare)
            best = interleaved(runs, repeat, "timed_s")
            raw = best.pop("raw")
            print(
                f"  raw httpx thread pool ({mode}): {raw['loop_s']:.3f}s = {raw['loop_s'] / ideal:.2f}x ideal (this machine's floor)"
            )
            for name, q in best.items():
                assert q["passed"] == n, q
                print(
                    f"  {name} stage {q['stage_s']:.3f}s = {q['stage_s'] / ideal:.2f}x ideal (process {q['process_s']:.3f}s), "
                    f"workers {q['workers']}, p50 {q['p50_ms']} ms, p95 {q['p95_ms']} ms"
                )
            print(f"  {load()}")


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
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "which", nargs="?", default="all", choices=["all", "nginx", "latency", "alternatives", "cpu"]
    )
    parser.add_argument("--n", type=int)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument(
        "--server",
        choices=[*DELAY_SERVERS, "both"],
        default="asyncio",
        help="the latency benchmark's delay server (both: one after the other)",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--compare",
        metavar="DIR",
        help="also run qlab from DIR (another checkout's runner/ directory, e.g. from git archive) in turns",
    )
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="qlab-bench-pycache-") as cache:
        CHILD_ENV.update(os.environ, PYTHONPYCACHEPREFIX=cache)
        CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        run(args)


def run(args: Any) -> None:
    if args.which in ("all", "nginx"):
        bench_nginx(args.n or 2000, args.repeat, args.compare)
    if args.which in ("all", "latency"):
        servers = list(DELAY_SERVERS) if args.server == "both" else [args.server]
        bench_latency(args.n or 400, args.concurrency, args.delay_ms, args.repeat, servers, args.compare)
    if args.which in ("all", "alternatives"):
        bench_alternatives(args.n or 2000, args.repeat)
    if args.which in ("all", "cpu"):
        bench_cpu(args.n or 2000, args.repeat)


if __name__ == "__main__":
    main()
