"""Spec fetches a team can trust with its credentials, and that say what went wrong.

Rule: ``qlab init --from-openapi URL`` fetches with ``--header 'Name: value'`` or ``--header-env NAME=VARIABLE``,
and with a credential in the URL (``user:pass@``, a ``token`` query parameter); none of them reaches any file
init writes or any output of its measuring run (a canary grep'd across the whole project), nor any other host.
A source of qlab.yaml names its fetch's headers by environment variable (``headers_env``). A spec URL that
redirects to an HTML page (a login) is named as such, exit 2.

On 6b179e1 a credential in the URL was copied into qlab.yaml, gates/aliases.yaml and the case files, init had
no way to send a header, and a login redirect said "invalid YAML 93:24".
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hostile.project import spec_project
from hostile.server import CREDENTIAL, HostileServer
from reliability.project import qlab


def _files_holding(root: Path, text: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def _ways(hostile: HostileServer) -> dict[str, tuple[str, list[str], dict[str, str]]]:
    """way -> (spec URL, init options, environment)."""
    host = hostile.url.removeprefix("http://")
    private = f"{hostile.url}/private/valid/openapi.json"
    return {
        "header": (private, ["--header", f"Authorization: Bearer {CREDENTIAL}"], {}),
        "header-env": (
            private,
            ["--header-env", "X-Api-Key=QLAB_TEST_SPEC_KEY"],
            {"QLAB_TEST_SPEC_KEY": CREDENTIAL},
        ),
        "userinfo": (f"http://reader:{CREDENTIAL}@{host}/private/valid/openapi.json", [], {}),
        "query-token": (f"{private}?token={CREDENTIAL}&format=json", [], {}),
    }


@pytest.mark.parametrize("way", ["header", "header-env", "userinfo", "query-token"])
def test_init_fetches_with_credentials_and_writes_none_of_them(
    tmp_path: Path, hostile: HostileServer, way: str
) -> None:
    url, options, env = _ways(hostile)[way]
    project = tmp_path / "api"
    # --live: init measures the read cases against the spec's own server, which is the spec's host here
    done = qlab("init", str(project), "--from-openapi", url, *options, "--live", cwd=tmp_path, env=env)
    assert done.code == 0, done.console
    assert _files_holding(project, CREDENTIAL) == []
    assert CREDENTIAL not in done.console
    # the measuring run's requests went to the API without the spec's credential
    api_calls = [s for s in hostile.requests() if not s.path.startswith("/private/")]
    assert api_calls and not any(CREDENTIAL in str(s.headers) + s.path for s in api_calls)
    ran = qlab("run", "--config", str(project / "qlab.yaml"), cwd=project)
    assert ran.code in (0, 1, 2) and CREDENTIAL not in ran.console, ran.console
    assert _files_holding(project, CREDENTIAL) == []


def test_init_without_the_credential_says_what_the_server_answered(
    tmp_path: Path, hostile: HostileServer
) -> None:
    done = qlab("init", str(tmp_path / "api"), "--from-openapi", f"{hostile.url}/private/valid/openapi.json",
                cwd=tmp_path)  # fmt: skip
    assert done.code == 2 and "HTTP 401" in done.console, done.console


def test_a_source_fetched_again_by_each_build_names_its_header_by_variable(
    tmp_path: Path, hostile: HostileServer
) -> None:
    """A spec that cannot be pinned (its $refs read other URLs) is fetched by every build: qlab.yaml names the
    variable, never the value; the $ref'd document beside the spec gets the header too (same origin)."""
    url = f"{hostile.url}/private/relative-ref/openapi.json"
    project = tmp_path / "api"
    env = {"QLAB_TEST_SPEC_KEY": CREDENTIAL}
    options = ["--header-env", "X-Api-Key=QLAB_TEST_SPEC_KEY", "--allow-remote-refs", "--offline"]
    done = qlab("init", str(project), "--from-openapi", url, *options, cwd=tmp_path, env=env)
    assert done.code == 0, done.console
    source = yaml.safe_load((project / "qlab.yaml").read_text())["collection"]["sources"][0]
    assert source["openapi"] == url and source["headers_env"] == {"X-Api-Key": "QLAB_TEST_SPEC_KEY"}
    assert _files_holding(project, CREDENTIAL) == []
    build = qlab("build", "--config", str(project / "qlab.yaml"), "--no-cache", cwd=project, env=env)
    assert build.code == 0, build.console
    unset = qlab("build", "--config", str(project / "qlab.yaml"), "--no-cache", cwd=project,
                 env={"QLAB_TEST_SPEC_KEY": ""})  # fmt: skip
    assert unset.code == 2 and "QLAB_TEST_SPEC_KEY" in unset.console and CREDENTIAL not in unset.console


def test_a_literal_header_for_a_spec_fetched_by_every_build_is_refused(
    tmp_path: Path, hostile: HostileServer
) -> None:
    url = f"{hostile.url}/private/relative-ref/openapi.json"
    options = ["--header", f"X-Api-Key: {CREDENTIAL}", "--allow-remote-refs", "--offline"]
    done = qlab("init", str(tmp_path / "api"), "--from-openapi", url, *options, cwd=tmp_path)
    assert done.code == 2 and "--header-env" in done.console and CREDENTIAL not in done.console, done.console
    assert not (tmp_path / "api" / "qlab.yaml").exists()


def test_the_headers_go_only_to_the_spec_urls_origin(tmp_path: Path, hostile: HostileServer) -> None:
    with HostileServer() as elsewhere:
        url = f"{hostile.url}/redirect-to/{elsewhere.url.rsplit(':', 1)[1]}/spec/valid/openapi.json"
        done = qlab("init", str(tmp_path / "api"), "--from-openapi", url, "--offline",
                    "--header", f"X-Api-Key: {CREDENTIAL}", cwd=tmp_path)  # fmt: skip
        assert done.code == 0, done.console
        landed = [s for s in elsewhere.requests() if s.path.startswith("/spec/")]
        assert landed and all(CREDENTIAL not in str(s.headers) for s in landed)


@pytest.mark.parametrize("command", ["init", "build"])
def test_a_spec_url_that_redirects_to_an_html_page_is_named_as_such(
    tmp_path: Path, hostile: HostileServer, command: str
) -> None:
    url = f"{hostile.url}/redirect-html"
    if command == "init":
        done = qlab("init", str(tmp_path / "api"), "--from-openapi", url, cwd=tmp_path)
    else:
        config = spec_project(tmp_path / "p", url)
        done = qlab("build", "--config", str(config), cwd=config.parent)
    assert done.code == 2, done.console
    assert "the spec URL redirected to an HTML page" in done.console and "a login?" in done.console
    assert "invalid YAML" not in done.console


def test_a_spec_url_that_answers_an_html_page_is_named_as_such(
    tmp_path: Path, hostile: HostileServer
) -> None:
    done = qlab("init", str(tmp_path / "api"), "--from-openapi", f"{hostile.url}/login-page", cwd=tmp_path)
    assert done.code == 2 and "answered an HTML page, not a spec" in done.console, done.console
