"""Rule: one HTTP client policy everywhere — every request goes through ``qlab.adapters.http`` (httpx): no proxy from
``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``, no credential from ``.netrc``, no redirect followed without a check.
That includes the dev server's health poll, the pre-run probes and spec fetches.

On 6b179e1 the dev-server health poll used urllib, which follows ``HTTP_PROXY``: its polls went to the proxy.
"""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from hostile.project import api_project, run
from hostile.server import HostileServer
from reliability.project import Op, fault_server_env, reasons
from servers import CountingServer, free_port

PACKAGE = Path(__file__).resolve().parents[2] / "runner" / "qlab"
NETRC_PASSWORD = "qlab-canary-netrc-91b0"


def test_no_request_takes_a_proxy_or_a_netrc_credential_from_the_environment(
    tmp_path: Path, hostile: HostileServer
) -> None:
    with CountingServer() as proxy:
        port = free_port()  # after the proxy took its own
        netrc = tmp_path / "netrc"
        netrc.write_text(f"machine 127.0.0.1 login reader password {NETRC_PASSWORD}\n")
        netrc.chmod(0o600)
        environment = {
            **{
                name: proxy.url
                for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy")
            },
            "NO_PROXY": "",
            "no_proxy": "",
            "NETRC": str(netrc),
        }
        ops = [Op("checkHealth", "GET", "/health", "Check the service health")]
        config = api_project(
            tmp_path / "p",
            f"http://127.0.0.1:{port}",
            ops,
            extra={"environments": {"api": {**fault_server_env(port), "allowed_hosts": ["127.0.0.1"]}}},
        )
        data = yaml.safe_load(config.read_text())
        data["collection"]["sources"].append({"name": "remote", "openapi": hostile.spec("valid")})
        config.write_text(yaml.safe_dump(data))
        done = run(config, env=environment)
        assert reasons(config.parent / "out" / "result.json") == {"checkHealth": ("passed", None)}, (
            done.console
        )
        assert proxy.count == 0, proxy.requests
    fetched = [s for s in hostile.requests() if s.path.startswith("/spec/")]
    assert fetched and not any("authorization" in {k.lower() for k in s.headers} for s in fetched)


def test_only_the_http_module_imports_an_http_client() -> None:
    """urllib.request (but for its path helpers), http.client, httpx, httpcore and requests are imported by
    ``qlab/adapters/http.py`` alone."""
    clients = {"urllib.request", "http.client", "httpx", "httpcore", "requests", "urllib3", "aiohttp"}
    paths_only = {"url2pathname", "pathname2url"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "http.py" and path.parent == PACKAGE / "adapters":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [f"{path.relative_to(PACKAGE)}: {a.name}" for a in node.names if a.name in clients]
            elif (
                isinstance(node, ast.ImportFrom)
                and node.module in clients
                and not {a.name for a in node.names} <= paths_only
            ):
                found.append(f"{path.relative_to(PACKAGE)}: {node.module}")
    assert found == []
