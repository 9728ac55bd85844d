from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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


def test_the_console_entry_flushes_everything_and_keeps_the_exit_code() -> None:
    """``python -m qlab`` ends with ``os._exit`` (no interpreter teardown): a large piped output still arrives
    whole, and the exit code and error text are those of ``main``."""
    from qlab.contracts.resources import load_schema

    out = subprocess.run([sys.executable, "-m", "qlab", "schema", "result"], capture_output=True, text=True)
    assert out.returncode == 0 and len(out.stdout) > 20_000
    import json

    assert json.loads(out.stdout) == load_schema("result")
    bad = subprocess.run(
        [sys.executable, "-m", "qlab", "validate", "--config", "/nonexistent/qlab.yaml"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "/nonexistent/qlab.yaml" in bad.stderr, bad.stderr
    usage = subprocess.run([sys.executable, "-m", "qlab", "no-such-command"], capture_output=True, text=True)
    assert usage.returncode == 2 and "No such command" in usage.stderr


def test_loading_valid_files_imports_no_validator_library(tmp_path: Path) -> None:
    """What loading valid files never imports: jsonschema (the quick check decides), rapidfuzz (no "Did you
    mean")."""
    (tmp_path / "qlab.yaml").write_text(
        "version: 1\nproject: p\ncollection:\n  sources: [{name: api, openapi: api.yaml}]\n"
        "environments:\n  dev: {base_url: 'http://127.0.0.1:9'}\n"
        "suites:\n  reads: {mode: execute, cases: [cases.yaml], environment: dev}\n"
        "gates:\n  - {name: execute, stage: execute, suites: [reads]}\n",
        encoding="utf-8",
    )
    (tmp_path / "api.yaml").write_text("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n")
    (tmp_path / "cases.yaml").write_text(
        "- id: r-1\n  query: get item\n  assertions:\n    - {type: json_path_exists, path: $.data.id}\n",
        encoding="utf-8",
    )
    code = (
        "import sys; from qlab.project import load_project; "
        "p = load_project('qlab.yaml'); assert len(p.cases) == 1, p; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'jsonschema', 'rapidfuzz'}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_a_search_only_run_does_not_import_the_http_client(tmp_path: Path) -> None:
    """httpx (and the LLM client, the execute stage) load only for a run that sends a request: a search gate on
    the built-in engine never pays for them."""
    init = subprocess.run([sys.executable, "-m", "qlab", "init", str(tmp_path / "demo")], capture_output=True)
    assert init.returncode == 0, init.stderr
    code = (
        "import sys\nfrom qlab.cli import main\ntry:\n    main(['run', '--stage', 'search', '-q'])\n"
        "except SystemExit as done:\n    assert done.code == 0, done.code\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'httpx', 'httpcore'}), "
        "'qlab.stages.execute' in sys.modules, 'qlab.engine.llm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path / "demo")
    assert out.stdout.strip().splitlines()[-1] == "[] False False", out.stdout + out.stderr
