"""``init_from_openapi`` end to end against real servers on 127.0.0.1: the starter is measured, its first
``qlab run`` passes, execute is gated where the server answers (auth included) and not where it does not, and a
deliberately broken alias or description then blocks."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import servers
from qlab.cli import main
from qlab.run.starter import init_from_openapi

ROOT = Path(__file__).resolve().parents[2]
DEMO_SPEC = ROOT / "runner" / "qlab" / "demo" / "openapi.yaml"


def qlab(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stopped:
        main(args)
    captured = capsys.readouterr()
    code = stopped.value.code
    return (code if isinstance(code, int) else 0), captured.out, captured.err


@pytest.fixture
def static_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A plain file server on 127.0.0.1 (the spec served as a URL), and the folder it serves."""
    folder = tmp_path / "served"
    folder.mkdir()
    handler = functools.partial(QuietFiles, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_execute_is_gated_where_the_server_answers_with_the_named_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "demo-api"
    with servers.demo_server(token="s3cret-token") as url:
        monkeypatch.setenv("DEMO_API_TOKEN", "s3cret-token")
        outcome = init_from_openapi(str(DEMO_SPEC), target=target, base_url=url)
        assert outcome.execute_gated, outcome.figures.execute_note
        assert outcome.auth is not None and outcome.auth.env == ("DEMO_API_TOKEN",)
        config = (target / "qlab.yaml").read_text()
        assert 'execute_read_success_rate: ">= 1.0"  # measured 1.0 at init; keep it' in config
        assert "stop_if: [auth_not_ready, mutation_unsafe]" in config
        assert "s3cret-token" not in config  # the profile names the variable, never the value
        code, out, err = qlab(["run", "-q", "--config", str(target / "qlab.yaml")], capsys)
        assert (code, out) == (0, "PASS (exit 0)\n"), err
        monkeypatch.delenv("DEMO_API_TOKEN")
        code, out, err = qlab(["run", "-q", "--config", str(target / "qlab.yaml")], capsys)
        assert (code, out) == (1, "BLOCK (exit 1)\n"), err
        result = (target / ".qlab" / "out" / "result.json").read_text()
        assert '"reason":"auth_context_required"' in result.replace(" ", "")


def test_a_server_that_answers_while_auth_is_not_ready_leaves_execute_ungated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("API_TOKEN", raising=False)
    with servers.demo_server() as url:
        outcome = init_from_openapi(str(DEMO_SPEC), target=tmp_path / "api", base_url=url)
    assert not outcome.execute_gated
    note = outcome.figures.execute_note
    assert note.startswith(f"Not gated: none of the {outcome.reads} read case(s) passed against {url}")
    assert "auth_context_required" in note and "Set API_TOKEN (auth profile bearerAuth)" in note
    assert "  # - name: execute\n" in (tmp_path / "api" / "qlab.yaml").read_text()


def test_an_unreachable_server_leaves_execute_written_but_not_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = f"http://127.0.0.1:{servers.free_port()}"
    outcome = init_from_openapi(str(DEMO_SPEC), target=tmp_path / "api", base_url=closed)
    assert not outcome.execute_gated and outcome.reads > 0
    assert outcome.figures.execute_note.startswith(
        f"Not gated: {closed} did not answer when this file was written"
    )
    config = (tmp_path / "api" / "qlab.yaml").read_text()
    assert "uncomment the execute gate below, run `qlab run`" in config
    assert (tmp_path / "api" / "gates" / "execute_read" / "reads.yaml").exists()
    code, out, err = qlab(["run", "-q", "--config", str(tmp_path / "api" / "qlab.yaml")], capsys)
    assert (code, out) == (0, "PASS (exit 0)\n"), err


def test_a_spec_url_is_downloaded_once_and_pinned(
    tmp_path: Path, static_server: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    url, folder = static_server
    (folder / "openapi.yaml").write_bytes(DEMO_SPEC.read_bytes())
    outcome = init_from_openapi(f"{url}/openapi.yaml", target=tmp_path / "api", offline=True)
    assert outcome.spec.pinned
    assert (tmp_path / "api" / "specs" / "openapi.yaml").read_bytes() == DEMO_SPEC.read_bytes()
    (folder / "openapi.yaml").unlink()  # the project no longer needs the URL
    code, out, err = qlab(["run", "-q", "--config", str(tmp_path / "api" / "qlab.yaml")], capsys)
    assert (code, out) == (0, "PASS (exit 0)\n"), err


def test_a_spec_whose_refs_leave_its_folder_is_not_copied(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "pet.yaml").write_text("type: object\nproperties: {id: {type: integer}}\n")
    spec = tmp_path / "specs" / "api.yaml"
    spec.parent.mkdir()
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    post:\n      summary: Add a pet\n"
        "      requestBody:\n        content:\n          application/json:\n"
        "            schema: {$ref: '../shared/pet.yaml'}\n      responses: {'201': {description: ok}}\n"
    )
    outcome = init_from_openapi(str(spec), target=tmp_path / "api", offline=True)
    assert not outcome.spec.pinned and outcome.reads == 0
    config = (tmp_path / "api" / "qlab.yaml").read_text()
    assert f'openapi: "{spec}"  # not copied: its $refs read {tmp_path / "shared" / "pet.yaml"}' in config
    assert "execute_read" not in config  # no GET: no execute suite at all


PASTED = (
    "summary: Create user.\n      description: This can only be done by the logged in user.\n",
    "summary: Creates list of users with given input array.\n"
    "      description: Creates list of users with given input array.\n",
)


@pytest.mark.parametrize(
    ("edit", "what"),
    [
        (
            ("aliases", "findPetsByTags: [Finds Pets by status, find pets by status, pets by status]\n"),
            "an alias on the wrong operation",
        ),
        (("spec", PASTED), "a summary and description pasted from another operation"),
    ],
    ids=["alias", "description"],
)
def test_petstore_passes_first_and_a_deliberate_break_blocks(
    tmp_path: Path,
    shared_data: Path,
    capsys: pytest.CaptureFixture[str],
    edit: tuple[str, object],
    what: str,
) -> None:
    spec = shared_data / "openapi-specs" / "petstore3" / "openapi.yaml"
    target = tmp_path / "petstore"
    outcome = init_from_openapi(str(spec), target=target, offline=True)
    assert [p.name for p in outcome.profiles] == ["petstore_auth", "api_key"]
    config = str(target / "qlab.yaml")
    code, out, err = qlab(["run", "-q", "--config", config], capsys)
    assert (code, out) == (0, "PASS (exit 0)\n"), err
    kind, change = edit
    if kind == "aliases":
        (target / "gates" / "aliases.yaml").write_text(str(change))
    else:
        old, new = change  # type: ignore[misc]
        pinned = target / "specs" / "openapi.yaml"
        pinned.write_text(pinned.read_text().replace(old, new))
    code, out, err = qlab(["run", "-q", "--config", config], capsys)
    assert (code, out) == (1, "BLOCK (exit 1)\n"), f"{what} did not block: {err}"
