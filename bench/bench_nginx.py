"""The nginx rail: a whole ``qlab run`` of N read cases against nginx, beside a raw httpx loop process.

    python bench/bench_nginx.py [--n 2000] [--rounds 5] [--concurrency 1 8 ...] [--before RUNNER] [--json FILE]

nginx (Debian package ``nginx``) runs on 127.0.0.1 from a generated config in a temporary folder and answers
``/items/<i>`` with ``{"data": {"id": i}}``. The qlab side is a generated project: one OpenAPI operation
``getItem``, N execute cases (``provided_entities: {id: i}``, ``http_status in [200]`` and ``json_path_exists
$.data``) in one YAML case file, build and execute gates; ``qlab run`` runs them as a user's CI does (search,
select, plan and execute per case; result.json, JUnit and the summary written). The baseline is a process that
GETs the same N URLs with one httpx client and checks each status and ``data``. Both are measured from the
outside, in turns (``bench/whole.py``). ``--before``: an earlier checkout's source root (``git archive REV
runner schemas | tar -x -C DIR``, then ``DIR/runner``) as one more side.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from whole import QLAB, Comparison, Measured, expect_exit, interleave, load_average, measure

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

RAW_LOOP = """
import sys
import httpx
base, n = sys.argv[1], int(sys.argv[2])
with httpx.Client() as client:
    for i in range(n):
        r = client.get(f"{base}/items/{i}")
        assert r.status_code == 200 and "data" in r.json()
"""

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
project: nginx-rail
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
    cases: [cases/reads.yaml]
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

RAW = "raw httpx loop"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def nginx() -> Iterator[str]:
    """nginx on a free loopback port, in its own process group; yields its base URL."""
    exe = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(exe).exists():
        sys.exit("nginx is not installed: apt-get install -y nginx")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="qlab-nginx-") as tmp:
        (Path(tmp) / "nginx.conf").write_text(NGINX_CONF.format(tmp=tmp, port=port), encoding="utf-8")
        proc = subprocess.Popen(
            [exe, "-p", tmp, "-c", str(Path(tmp) / "nginx.conf")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            _wait_up(f"http://127.0.0.1:{port}/items/0")
            yield f"http://127.0.0.1:{port}"
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)


def _wait_up(url: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{url} did not come up")


def write_project(folder: Path, base: str, n: int, *, concurrency: int | None) -> Path:
    """The generated project (see the module docstring); returns its qlab.yaml."""
    (folder / "cases").mkdir(parents=True, exist_ok=True)
    (folder / "openapi.yaml").write_text(SPEC, encoding="utf-8")
    width = f"    concurrency: {concurrency}\n" if concurrency else ""
    (folder / "qlab.yaml").write_text(
        CONFIG.replace("{base}", base).replace("{concurrency}", width), encoding="utf-8"
    )
    with (folder / "cases" / "reads.yaml").open("w", encoding="utf-8") as out:
        for i in range(n):
            out.write(
                f"- id: read-{i}\n  query: get item\n  expected_target: getItem\n"
                f"  provided_entities: {{id: {i}}}\n  assertions:\n"
                "    - {type: http_status, in: [200]}\n    - {type: json_path_exists, path: $.data}\n"
            )
    return folder / "qlab.yaml"


def qlab_side(config: Path, runner: Path | None = None) -> Callable[[], Measured]:
    """``qlab run`` on ``config``; ``runner``: another checkout's ``runner/`` folder run instead of this one."""
    env = {"PYTHONPATH": str(runner)} if runner is not None else None
    return partial(measure, [*QLAB, "run", "--config", str(config), "--quiet"], cwd=config.parent, env=env)


def compare(n: int, rounds: int, widths: list[int | None], before: Path | None = None) -> Comparison:
    """The raw loop and ``qlab run`` at each concurrency in ``widths`` (None: the default), in turns."""
    with nginx() as base, tempfile.TemporaryDirectory(prefix="qlab-nginx-rail-") as tmp:
        sides: dict[str, Callable[[], Measured]] = {
            RAW: partial(measure, [sys.executable, "-c", RAW_LOOP, base, str(n)], timings=False)
        }
        for width in widths:
            name = f"qlab run (concurrency {width or 'default'})"
            config = write_project(Path(tmp) / f"c{width}", base, n, concurrency=width)
            sides[name] = qlab_side(config)
            if before is not None:
                sides[f"{name}, before"] = qlab_side(config, before)
        return interleave(sides, rounds=rounds, check=expect_exit(0))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="*", help="qlab's concurrency (default: qlab's own)")
    parser.add_argument("--before", type=Path, metavar="RUNNER", help="an earlier checkout's runner/ folder")
    parser.add_argument("--json", type=Path, metavar="FILE")
    args = parser.parse_args()
    print(f"# nginx rail, N={args.n}, {args.rounds} rounds; {load_average()}")
    comparison = compare(args.n, args.rounds, list(args.concurrency or [None]), args.before)
    comparison.show(f"{args.n:,} read cases against nginx", RAW)
    comparison.save(args.json)


if __name__ == "__main__":
    main()
