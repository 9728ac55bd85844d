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
    assert out == "valid: 50 cases in 9 files, 5 suites, 6 gates\n"


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


def test_init_from_openapi(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
    code, _, err = run(["init", str(tmp_path / "api"), "--from-openapi", str(spec)], capsys)
    assert (code, err) == (0, "")
    monkeypatch.chdir(tmp_path / "api")
    code, out, err = run(["validate"], capsys)
    assert (code, err) == (0, "")
    assert out == "valid: 14 cases in 1 file, 1 suite, 2 gates\n"


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
    assert err == (
        f"error: {spec}: the spec has no operations under `paths`: there is nothing to write search cases for\n"
    )
    assert not (tmp_path / "api").exists()


def test_init_from_a_binary_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_bytes(b"openapi: 3.0.3\n\x00\x01\x02")
    code, _, err = run(["init", str(tmp_path / "api"), "--from-openapi", str(spec)], capsys)
    assert code == 2, err
    assert err == f"error: {spec}:2:1: file is binary (it contains a NUL byte), not YAML or JSON text\n"
    assert not (tmp_path / "api").exists()


def test_a_starter_project_whose_execute_case_is_not_ready_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], httpbin_url: str
) -> None:
    """The issue's first reproduction, with the real stages: ``qlab init --from-openapi``, an execute gate with
    no thresholds and no ``stop_if``, one execute case whose auth is not ready. ``validate`` is clean, and the run
    now says BLOCK (exit 1) instead of ``PASS: 1 failed, … (exit 0)``."""
    spec = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"
    project = tmp_path / "api"
    assert run(["init", str(project), "--from-openapi", str(spec)], capsys)[0] == 0
    config = project / "qlab.yaml"
    text = config.read_text(encoding="utf-8").replace(
        "suites:\n",
        "suites:\n  execute_read:\n    mode: execute\n    cases: [gates/execute_read/*.yaml]\n    environment: dev\n",
        1,
    )
    text += (
        "  - {name: execute, stage: execute, suites: [execute_read]}\n"
        f"environments:\n  dev:\n    base_url: {httpbin_url}\n    auth: bearer\n"
        "auth_profiles:\n  bearer: {type: bearer, token_env: QLAB_TEST_UNSET_TOKEN}\n"
    )
    config.write_text(text, encoding="utf-8")
    (project / "gates" / "execute_read").mkdir(parents=True)
    (project / "gates" / "execute_read" / "profile.yaml").write_text(
        "- id: execute-read-001\n  query: Get my account profile\n  expected_target: getMyProfile\n"
        "  assertions:\n    - {type: http_status, in: [200]}\n",
        encoding="utf-8",
    )
    monkeypatch.delenv("QLAB_TEST_UNSET_TOKEN", raising=False)
    monkeypatch.chdir(project)
    code, out, err = run(["validate"], capsys)
    assert (code, err) == (0, ""), err
    code, out, err = run(["run", "--out", str(tmp_path / "out")], capsys)
    assert code == 1, out + err
    assert "BLOCK:" in out and "PASS" not in out, out
    result = (tmp_path / "out" / "result.json").read_text(encoding="utf-8")
    assert '"reason":"auth_context_required"' in result
    assert "❌ qlab: BLOCK" in (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
