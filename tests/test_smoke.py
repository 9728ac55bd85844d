from __future__ import annotations

import subprocess
import sys

import qlab


def test_version_runs_without_heavy_imports() -> None:
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "qlab", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert qlab.__version__ in out.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    assert not {m for m in imported if m.split(".")[0] in {"httpx", "jsonschema", "yaml"}}, out.stderr[-2000:]


def test_httpbin_fixture(httpbin_url: str) -> None:
    import httpx

    assert httpx.get(f"{httpbin_url}/status/204").status_code == 204
