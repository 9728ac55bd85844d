"""Pre-run checks: the dependencies a run needs answer before any case runs (ERROR, exit 2, when one does not),
each failure with its reason code. The probe is real against servers on 127.0.0.1."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import servers
from qlab.project.model import CollectionConfig, EngineConfig, Environment, LLMConfig, ServerConfig, Source
from qlab.run import prerun
from run import fakes as f


def _closed() -> str:
    return f"http://127.0.0.1:{servers.free_port()}"


def test_the_probe_tells_a_listening_server_from_a_closed_port(httpbin_url: str) -> None:
    assert prerun.probe(f"{httpbin_url}/post", 2.0) == (True, "HTTP 405")
    answered, detail = prerun.probe(_closed(), 2.0)
    assert not answered and detail.startswith("ConnectError")


def test_an_environment_that_does_not_answer_fails_with_its_reason(tmp_path: Path, httpbin_url: str) -> None:
    down = _closed()
    config = dataclasses.replace(
        f.config(tmp_path),
        environments={"dev": Environment("dev", down), "up": Environment("up", httpbin_url)},
    )
    checks = prerun.check_environments(config, f.demo_cases(), start_servers=True)
    assert [(g.guard, g.passed, g.mode, g.reason) for g in checks] == [
        ("environment_reachable", False, "block", "environment_unreachable")
    ]
    assert down in checks[0].message and "ConnectError" in checks[0].message


def test_an_environment_qlab_starts_is_checked_when_it_starts(tmp_path: Path) -> None:
    server = ServerConfig(command="python -m http.server", url=_closed())
    config = dataclasses.replace(
        f.config(tmp_path), environments={"dev": Environment("dev", _closed(), server=server)}
    )
    assert prerun.check_environments(config, f.demo_cases(), start_servers=True) == []
    # --no-server: someone else runs it, so it must answer now
    [check] = prerun.check_environments(config, f.demo_cases(), start_servers=False)
    assert not check.passed and check.reason == "environment_unreachable"


def test_environments_of_required_suites_only(tmp_path: Path) -> None:
    base = f.config(tmp_path)
    optional = dataclasses.replace(base.suites["execute_read"], required=False)
    config = dataclasses.replace(
        base,
        suites={**base.suites, "execute_read": optional},
        environments={"dev": Environment("dev", _closed())},
    )
    assert prerun.check_environments(config, f.demo_cases(), start_servers=True) == []


@pytest.mark.parametrize("cached", [False, True])
def test_an_llm_endpoint_that_does_not_answer(tmp_path: Path, cached: bool) -> None:
    llm = LLMConfig(base_url=_closed(), model="m", cache_dir=str(tmp_path / "cache"))
    if cached:
        (tmp_path / "cache" / "ab").mkdir(parents=True)
    config = dataclasses.replace(f.config(tmp_path), engine=EngineConfig(llm=llm))
    [check] = prerun.check_llm(config, f.demo_cases())
    assert (check.passed, check.reason) == (False, "llm_unreachable")
    # with answers in its cache the run may not need it: a warning, not a stop
    assert check.mode == ("warn" if cached else "block")
    # cases that recorded their llm_target never ask it
    recorded = [dataclasses.replace(c, llm_target="t") for c in f.demo_cases()]
    assert prerun.check_llm(config, recorded) == []


def test_an_http_engine_that_does_not_answer_carries_its_reason(tmp_path: Path) -> None:
    config = dataclasses.replace(f.config(tmp_path), engine=EngineConfig(type="http", url=_closed()))
    check = prerun.check_engine(config, "http")
    assert (check.passed, check.reason) == (False, "engine_unreachable")


def test_a_python_source_beside_qlab_yaml_resolves_as_the_build_imports_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``qlab build`` imports a ``python:`` source with qlab.yaml's folder on sys.path; the pre-run check looks it
    up the same way, from any working directory and without PYTHONPATH."""
    project = tmp_path / "project"
    (project / "tools_pkg").mkdir(parents=True)
    (project / "tools_pkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "tools_pkg" / "api_21.py").write_text(
        "def get_thing(thing_id: int) -> dict:\n    return {}\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    source = Source("py", "python", "tools_pkg.api_21:get_thing")
    cfg = dataclasses.replace(f.config(project), collection=CollectionConfig(sources=(source,)))
    found = prerun.check_sources(cfg)
    assert found.passed, found.message
    from qlab.collection.python_source import SOURCE

    snapshot = SOURCE.snapshot(source, base_dir=project)
    assert [t.id for t in SOURCE.tools(snapshot).tools] == ["get_thing"]
    missing = dataclasses.replace(source, location="tools_pkg.nowhere_21")
    cfg = dataclasses.replace(cfg, collection=CollectionConfig(sources=(missing,)))
    found = prerun.check_sources(cfg)
    assert not found.passed and "'tools_pkg.nowhere_21' cannot be imported from" in found.message


def test_the_status_of_each_skill_the_suites_evaluate_is_checked(tmp_path: Path) -> None:
    """Pre-run: skill bindings, status checked. A suite evaluating a skill (target_type skill) gets the skill's
    status from its release record, and a skill release: does not declare fails the check (warn) with a hint."""
    import json

    from qlab.project.model import ReleaseSkill

    base = f.config(tmp_path)
    suites = {name: dataclasses.replace(s, target_type="skill", target_ref="member-delivery@1.2.0")
              for name, s in base.suites.items()}  # fmt: skip
    config = dataclasses.replace(
        base, suites=suites, release={"member-delivery": ReleaseSkill("member-delivery")}
    )
    (tmp_path / ".qlab").mkdir(exist_ok=True)
    (tmp_path / ".qlab" / "releases.json").write_text(
        json.dumps({"version": 1, "skills": {"member-delivery": {"status": "published"}}}), encoding="utf-8"
    )
    (check,) = prerun.check_skill_status(config, f.demo_cases()[:1])
    assert check.passed and check.message == "member-delivery: published (suite(s) search_core)"
    typo = dataclasses.replace(config, release={"member-deliveries": ReleaseSkill("member-deliveries")})
    (check,) = prerun.check_skill_status(typo, f.demo_cases()[:1])
    assert not check.passed and check.mode == "warn" and "Did you mean 'member-deliveries'?" in check.message
