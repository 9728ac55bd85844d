"""The test suite's own infrastructure rule (tests/servers.py): in CI a server that cannot start fails its test
with the server's log; only a tool that is not installed may skip, with its reason."""

from __future__ import annotations

import sys

import pytest

import servers

# a skip where a failure is expected must not pass as a skip: both outcomes are caught, then the type checked
OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception)
CRASH = [
    sys.executable,
    "-c",
    "import sys; print('listening failed: port taken', file=sys.stderr); sys.exit(3)",
]


def test_a_server_that_exits_at_startup_raises_with_its_log() -> None:
    with (
        pytest.raises(servers.ServerFailed) as caught,
        servers.running(CRASH, ready_url="http://127.0.0.1:9/"),
    ):
        pass
    text = str(caught.value)
    assert "server exited with 3 before http://127.0.0.1:9/ answered" in text
    assert text.endswith("--- its log ---\nlistening failed: port taken")


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_in_ci_a_server_that_cannot_start_is_a_failure_not_a_skip(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    with (
        pytest.raises(OUTCOMES) as caught,
        servers.infrastructure("json-server"),
        servers.running(CRASH, ready_url="http://127.0.0.1:9/"),
    ):
        pass
    assert caught.type is pytest.fail.Exception
    assert "json-server:" in str(caught.value) and "listening failed: port taken" in str(caught.value)


@pytest.mark.parametrize("value", [None, "", "0", "false"])
def test_outside_ci_it_skips_with_the_log(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    with (
        pytest.raises(OUTCOMES) as caught,
        servers.infrastructure("json-server"),
        servers.running(CRASH, ready_url="http://127.0.0.1:9/"),
    ):
        pass
    assert caught.type is pytest.skip.Exception
    assert "a failure in CI" in str(caught.value) and "listening failed" in str(caught.value)


def test_a_tool_that_is_not_installed_skips_in_ci_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(servers, "npm_bin", lambda name: None)
    monkeypatch.setattr(servers.shutil, "which", lambda name: None)
    with pytest.raises(OUTCOMES) as caught, servers.infrastructure("the live MCP server"):
        servers.ensure_npm("some-package", "some-bin")
    assert caught.type is pytest.skip.Exception
    assert (
        str(caught.value)
        == "the live MCP server: node and npm are needed for some-package (not installed here)"
    )


def test_npm_failing_to_install_is_a_failure_in_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setattr(servers, "npm_bin", lambda name: None)
    monkeypatch.setattr(servers.shutil, "which", lambda name: sys.executable)  # "npm" that fails at once
    monkeypatch.setattr(servers, "NODE_DIR", servers.Path(str(tmp_path)))
    with pytest.raises(OUTCOMES) as caught, servers.infrastructure("json-server"):
        servers.ensure_npm("some-package", "some-bin")
    assert caught.type is pytest.fail.Exception
    assert "npm could not install some-package (exit 2)" in str(caught.value)
