from __future__ import annotations

from pathlib import Path

import pytest

from qlab.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        main(args)
    captured = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


def test_a_fresh_demo_project_validates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    code, out, err = run(["init", str(tmp_path / "demo")], capsys)
    assert (code, err) == (0, "")
    assert f"created {tmp_path / 'demo' / 'qlab.yaml'}" in out
    assert (tmp_path / "demo" / "openapi.yaml").read_bytes() == (
        ROOT / "runner/qlab/demo/openapi.yaml"
    ).read_bytes()
    monkeypatch.chdir(tmp_path / "demo")
    code, out, err = run(["validate"], capsys)
    assert (code, err) == (0, "")
    assert out == "valid: 71 cases in 10 files, 6 suites, 6 gates\n"


def test_init_does_not_overwrite_without_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qlab.yaml").write_text("mine\n")
    code, _, err = run(["init", str(tmp_path)], capsys)
    assert code == 2
    assert err.startswith(f"error: {tmp_path}: would overwrite qlab.yaml; pass --force")
    assert (tmp_path / "qlab.yaml").read_text() == "mine\n"
    assert not (tmp_path / "gates").exists()
    code, _, _ = run(["init", str(tmp_path), "--force"], capsys)
    assert code == 0
    assert (
        (tmp_path / "qlab.yaml")
        .read_text()
        .startswith("# yaml-language-server: $schema=schemas/qlab.schema.json")
    )


def test_init_from_openapi_pins_the_spec_and_its_first_run_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
    code, out, err = run(["init", str(tmp_path / "api"), "--from-openapi", str(spec), "--offline"], capsys)
    assert code == 0, err
    assert err == "measuring: build + search of 15 operation(s), from the pinned spec\n"
    project = tmp_path / "api"
    assert (project / "specs" / "openapi.yaml").read_bytes() == spec.read_bytes()  # pinned, not pointed at
    config = (project / "qlab.yaml").read_text()
    assert "      openapi: specs/openapi.yaml  # a copy of openapi.yaml" in config and "../" not in config
    assert "base_url: ${API_BASE_URL:-http://127.0.0.1:8765}\n" in config
    assert (
        "  bearerAuth:  # http bearer\n    type: bearer\n    security_scheme: bearerAuth\n    token_env: API_TOKEN\n"
        in config
    )
    assert "  # - name: execute\n" in config  # --offline: written, not gated
    assert "measured: schema_coverage" in out and "Not gated: --offline, no request was sent." in out
    monkeypatch.chdir(project)
    code, out, err = run(["validate"], capsys)
    assert (code, err) == (0, "")
    assert out == "valid: 20 cases in 2 files, 2 suites, 3 gates\n"  # build, search, learn
    code, out, err = run(["run", "-q"], capsys)
    assert (code, out) == (0, "PASS (exit 0)\n"), err


def test_init_from_openapi_refuses_a_base_url_that_is_not_a_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
    code, _, err = run(
        ["init", str(tmp_path), "--from-openapi", str(spec), "--base-url", "localhost:80"], capsys
    )
    assert code == 2
    assert err.startswith("error: --base-url 'localhost:80':") and "http(s) URL" in err
    assert not (tmp_path / "qlab.yaml").exists()
    code, _, err = run(["init", str(tmp_path), "--offline"], capsys)
    assert code == 2 and "--base-url, --live, --offline" in err and "go with --from-openapi" in err


def test_init_from_a_broken_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bad.yaml"
    spec.write_text("openapi: 3.0.3\npaths: [\n")
    code, _, err = run(["init", str(tmp_path / "api"), "--from-openapi", str(spec)], capsys)
    assert code == 2
    assert "bad.yaml:" in err and "Traceback" not in err
    assert not (tmp_path / "api" / "qlab.yaml").exists()


def test_init_from_a_spec_without_operations(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "empty.yaml"
    spec.write_text("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n")
    code, _, err = run(["init", str(tmp_path / "api"), "--from-openapi", str(spec)], capsys)
    assert code == 2, err
    assert err.startswith(f"error: {spec}:") and "no operations under `paths`" in err
    assert not (tmp_path / "api").exists()


def test_init_from_a_binary_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"openapi: 3.0.3\n\x00\x01\x02")
    code, _, err = run(["init", str(tmp_path / "api"), "--from-openapi", str(spec)], capsys)
    assert code == 2, err
    assert err.startswith(f"error: {spec}:2:1:") and "binary" in err
    assert not (tmp_path / "api").exists()


def test_a_starter_project_whose_execute_case_is_not_ready_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], httpbin_url: str
) -> None:
    """The issue's first reproduction, with the real stages: ``qlab init --from-openapi``, an execute gate with
    no thresholds and no ``stop_if``, one execute case whose auth is not ready. ``validate`` is clean, and the run
    now says BLOCK (exit 1) instead of ``PASS: 1 failed, … (exit 0)``."""
    spec = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
    project = tmp_path / "api"
    assert run(["init", str(project), "--from-openapi", str(spec), "--offline"], capsys)[0] == 0
    config = project / "qlab.yaml"
    text = config.read_text(encoding="utf-8")
    # the starter writes its execute suite but leaves the gate commented out (--offline); a user adds one with
    # no thresholds and no stop_if, the environment points at a real server, the token variable is unset
    text = text.replace(
        "  # - name: execute\n", "  - {name: execute, stage: execute, suites: [execute_read]}\n", 1
    )
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("API_BASE_URL", httpbin_url)
    monkeypatch.delenv("API_TOKEN", raising=False)
    monkeypatch.chdir(project)
    code, out, err = run(["validate"], capsys)
    assert (code, err) == (0, ""), err
    code, out, err = run(["run", "--out", str(tmp_path / "out")], capsys)
    assert code == 1, out + err
    assert "BLOCK:" in out and "PASS" not in out, out
    result = (tmp_path / "out" / "result.json").read_text(encoding="utf-8")
    assert '"reason":"auth_context_required"' in result
    assert "❌ qlab: BLOCK" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
