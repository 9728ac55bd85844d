"""``init_from_openapi`` end to end against real servers on 127.0.0.1: the starter is measured, its first
``qlab run`` passes, execute is gated where the server answers (auth included) and not where it does not, and a
deliberately broken alias or description then blocks."""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import servers
from qlab.cli import main
from qlab.contracts.errors import SpecError
from qlab.project import load_project
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
        assert "execute_read_success_rate: '>= 1.0'  # measured 1.0 at init; keep it" in config
        assert "stop_if: [auth_not_ready, mutation_unsafe]" in config
        assert "s3cret-token" not in config  # the profile names the variable, never the value
        code, out, err = qlab(["run", "-q", "--config", str(target / "qlab.yaml")], capsys)
        assert (code, out) == (0, "PASS (exit 0)\n"), err
        monkeypatch.delenv("DEMO_API_TOKEN")
        code, out, err = qlab(["run", "-q", "--config", str(target / "qlab.yaml")], capsys)
        assert (code, out) == (1, "BLOCK (exit 1)\n"), err
        result = (target / ".qlab" / "out" / "result.json").read_text()
        assert '"reason":"auth_context_required"' in result.replace(" ", "")


def test_reads_that_could_not_authenticate_are_counted_beside_the_threshold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's public reads need no token (their operations declare no security); getMyProfile does. With
    API_TOKEN unset the public ones pass, and the one that could not authenticate is said, with what to do."""
    monkeypatch.delenv("API_TOKEN", raising=False)
    with servers.demo_server() as url:
        outcome = init_from_openapi(str(DEMO_SPEC), target=tmp_path / "api", base_url=url)
        code, out, err = qlab(["run", "-q", "--config", str(tmp_path / "api" / "qlab.yaml")], capsys)
        assert (code, out) == (0, "PASS (exit 0)\n"), err
    assert outcome.execute_gated
    assert outcome.rejected == (
        f"not sent: auth_context_required x1 of {outcome.reads} reads: set API_TOKEN, then raise this threshold"
    )
    config = (tmp_path / "api" / "qlab.yaml").read_text()
    assert f"# measured 0.8 at init; raise me. {outcome.rejected}\n" in config
    assert "stop_if: [mutation_unsafe]" in config  # auth failed at init: auth_not_ready would stop every run


def test_a_server_that_answers_while_auth_is_not_ready_leaves_execute_ungated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("API_TOKEN", raising=False)
    spec = tmp_path / "private.yaml"  # the demo spec with every operation behind the bearer token
    spec.write_text(DEMO_SPEC.read_text().replace("\npaths:", "\nsecurity: [{bearerAuth: []}]\npaths:", 1))
    with servers.demo_server() as url:
        outcome = init_from_openapi(str(spec), target=tmp_path / "api", base_url=url)
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


def _spec_with_a_shared_ref(tmp_path: Path) -> Path:
    """``specs/api.yaml``, whose one operation (a POST) refers to ``../shared/pet.yaml``: outside its folder."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "pet.yaml").write_text("type: object\nproperties: {id: {type: integer}}\n")
    spec = tmp_path / "specs" / "api.yaml"
    spec.parent.mkdir()
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /pets:\n    post:\n      summary: Add a pet\n"
        "      requestBody:\n        content:\n          application/json:\n"
        "            schema: {$ref: '../shared/pet.yaml'}\n      responses: {'201': {description: ok}}\n"
    )
    return spec


def test_a_spec_whose_refs_leave_its_folder_is_not_copied(tmp_path: Path) -> None:
    spec = _spec_with_a_shared_ref(tmp_path)
    outcome = init_from_openapi(str(spec), target=tmp_path, offline=True)
    assert not outcome.spec.pinned and outcome.reads == 0
    config = (tmp_path / "qlab.yaml").read_text()
    assert f"openapi: {spec}  # not copied: its $refs read {tmp_path / 'shared' / 'pet.yaml'}" in config
    assert "execute_read" not in config  # no GET: no execute suite at all


def test_a_spec_whose_refs_leave_the_project_folder_is_refused(tmp_path: Path) -> None:
    """Rule: a local spec's ``$ref`` reads only inside the project folder (and the spec's own): one that
    climbs out of both is an error at the ``$ref``, and nothing is written."""
    spec = _spec_with_a_shared_ref(tmp_path)
    with pytest.raises(SpecError) as refused:
        init_from_openapi(str(spec), target=tmp_path / "api", offline=True)
    message = str(refused.value)
    assert message.startswith(f"{spec}:10:")
    assert "schema['$ref']" in message and "outside the project folder" in message
    assert not (tmp_path / "api").exists()


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


# --------------------------------------------------------------------- spec text is data, never config

HOSTILE = (
    "line\nbreak",
    "hash # not a comment",
    "colon: value",
    "quotes ' \" ` end",
    "${HOME} and ${QLAB_CANARY}",
    "sep\u2028line",
    "nel\u0085line",
    "nul\x00byte",
    "carriage\rreturn",
    "x" * 10_000,
    "inject\ntoken_command: touch PWNED\nengine: {type: http, url: 'http://127.0.0.1:9/'}",
)
INJECTION = HOSTILE[-1]


def _hostile_spec(spy: str) -> dict[str, object]:
    """Hostile text in every field init writes somewhere: servers, title, security schemes (names, the apiKey
    header, oauth2 flow names, token URL, scopes), operation ids, summaries, tags, parameter names and defaults."""
    return {
        "openapi": "3.0.3",
        "info": {"title": " | ".join(HOSTILE[:9]) + INJECTION, "version": "1"},
        "servers": [{"url": f"{spy}/${{QLAB_CANARY}}"}, {"url": f"{spy}/v1"}],
        "components": {
            "securitySchemes": {
                INJECTION: {"type": "apiKey", "in": "header", "name": HOSTILE[2] + HOSTILE[4]},
                "oauth\n" + HOSTILE[4]: {
                    "type": "oauth2",
                    "flows": {
                        HOSTILE[0] + INJECTION: {
                            "authorizationUrl": f"{spy}/a",
                            "tokenUrl": f"{spy}/t",
                            "scopes": {},
                        },
                        "clientCredentials": {
                            "tokenUrl": f"{spy}/token?x=${{QLAB_CANARY}}",
                            "scopes": {h: "d" for h in HOSTILE[:9]},
                        },
                    },
                },
            }
        },
        "security": [{INJECTION: []}],
        "paths": {
            f"/p{i}": {
                "get": {
                    "operationId": text,
                    "summary": text,
                    "tags": [text],
                    "parameters": [
                        {
                            "name": text,
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string", "default": text},
                        }
                    ],
                    "responses": {"200": {"description": "ok"}},
                }
            }
            for i, text in enumerate(HOSTILE)
        },
    }


def _keys(value: object, path: str = "") -> set[str]:
    """Every key path of a document, with list indexes as ``*``."""
    if isinstance(value, dict):
        return {p for k, v in value.items() for p in {f"{path}.{k}", *_keys(v, f"{path}.{k}")}}
    if isinstance(value, list):
        return {p for item in value for p in _keys(item, f"{path}[*]")}
    return set()


def test_spec_text_comes_back_as_data_and_adds_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35, rule 1: each generated file is produced by the YAML emitter; the spec's text is never YAML
    syntax, never a comment's end, never interpolated; init sends nothing to the hosts the spec names."""
    from qlab.project.starter.queries import queries
    from qlab.project.yamlio import parse_yaml

    monkeypatch.chdir(tmp_path)  # where `touch PWNED` would land
    monkeypatch.setenv("QLAB_CANARY", "canary-VALUE")
    with servers.CountingServer() as spy:
        spec = tmp_path / "hostile.json"
        spec.write_text(json.dumps(_hostile_spec(spy.url)), encoding="utf-8")
        outcome = init_from_openapi(str(spec), target=tmp_path / "api")
        project = load_project(tmp_path / "api" / "qlab.yaml")  # validates, interpolated with QLAB_CANARY set
        assert spy.requests == []  # no server, no token endpoint: the user named none
    assert not (tmp_path / "PWNED").exists()

    files = {rel: (tmp_path / "api" / rel).read_text(encoding="utf-8") for rel in (
        "qlab.yaml", "gates/search_core/operations.yaml", "gates/execute_read/reads.yaml", "gates/aliases.yaml")}  # fmt: skip
    docs = {rel: parse_yaml(text, rel).data for rel, text in files.items()}
    # no key beyond what a starter writes
    assert set(docs["qlab.yaml"]) == {"version", "project", "collection", "auth_profiles", "environments",
                                      "suites", "gates", "promotion"}  # fmt: skip
    profile_keys = {key for profile in docs["qlab.yaml"]["auth_profiles"].values() for key in profile}
    assert profile_keys == {"type", "security_scheme", "header", "value_env", "token_url", "client_id_env",
                            "client_secret_env", "scopes"}  # fmt: skip
    assert set(docs["qlab.yaml"]["environments"]["api"]) == {"base_url", "auth"}
    assert _keys(docs["gates/search_core/operations.yaml"]) == {"[*].id", "[*].query", "[*].expected_target",
                                                                 "[*].tags"}  # fmt: skip
    assert _keys(docs["gates/execute_read/reads.yaml"]) - {f"[*].provided_entities.{h}" for h in HOSTILE} == {
        "[*].id", "[*].query", "[*].expected_target", "[*].provided_entities", "[*].mutation_safety",
        "[*].assertions", "[*].assertions[*].type", "[*].assertions[*].in", "[*].tags"}  # fmt: skip
    assert docs["gates/aliases.yaml"] == {}

    # the same strings, as data, after interpolation
    profiles = {p.security_scheme: p for p in project.config.auth_profiles.values()}
    assert set(profiles) == {INJECTION, "oauth\n" + HOSTILE[4]}
    assert profiles[INJECTION].header == HOSTILE[2] + HOSTILE[4] and profiles[INJECTION].token_command is None
    oauth = profiles["oauth\n" + HOSTILE[4]]
    assert oauth.token_url == f"{spy.url}/token?x=${{QLAB_CANARY}}" and oauth.scopes == HOSTILE[:9]
    assert project.config.environments["api"].base_url == f"{spy.url}/v1"  # the first server that is a URL
    assert project.config.engine.type == "builtin" and "canary-VALUE" not in files["qlab.yaml"]
    ids = [tool.id for tool in outcome.spec.tools]
    assert ids == list(HOSTILE)
    asked = queries(outcome.spec.tools)
    for rel in ("gates/search_core/operations.yaml", "gates/execute_read/reads.yaml"):
        cases = docs[rel]
        assert [c["expected_target"] for c in cases] == ids and [c["tags"] for c in cases] == [
            [i] for i in ids
        ]
        assert [c["query"] for c in cases] == [asked[i] for i in ids]
    assert [c["provided_entities"] for c in docs["gates/execute_read/reads.yaml"]] == [
        {h: h} for h in HOSTILE
    ]
    # outside text in a comment is one escaped line
    header = files["qlab.yaml"].splitlines()[1]
    assert header.startswith(
        "# Created by `qlab init --from-openapi hostile.json` (line\\nbreak | hash # not"
    )
    assert "sep\\u2028line" in header and "nel\\x85line" in header and "nul\\x00byte" in header


def test_init_never_sends_credentials_to_a_token_endpoint_the_user_did_not_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --base-url naming the API, a spec whose client-credentials tokenUrl points elsewhere gets no
    request, even with the credentials set: execute is left to the first run, and init says why."""
    monkeypatch.setenv("API_CLIENT_ID", "id-CANARY")
    monkeypatch.setenv("API_CLIENT_SECRET", "secret-CANARY")
    with servers.CountingServer() as api, servers.CountingServer() as elsewhere:
        spec = _hostile_spec(elsewhere.url)
        spec["security"] = [{"oauth\n" + HOSTILE[4]: []}]
        (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
        outcome = init_from_openapi(str(tmp_path / "spec.json"), target=tmp_path / "api", base_url=api.url)
        assert elsewhere.requests == [] and api.requests == []
    assert not outcome.execute_gated
    assert outcome.figures.execute_note.startswith(
        f"Not gated: measuring would send the client credentials of auth profile oauth_HOME_and_QLAB_CANARY_ "
        f"to\n{elsewhere.url}, the spec's token endpoint, a host you did not name"
    )


def test_init_contacts_no_server_unless_named_and_says_which_first(tmp_path: Path) -> None:
    """Issue 37, item 3: the spec's server gets no request from a plain init; with --live it does, after init
    said which host it contacts."""
    with servers.CountingServer() as api:
        spec = tmp_path / "spec.yaml"
        spec.write_text(DEMO_SPEC.read_text().replace("http://127.0.0.1:8765", api.url), encoding="utf-8")
        said: list[tuple[str, int]] = []
        outcome = init_from_openapi(
            str(spec), target=tmp_path / "quiet", progress=lambda m: said.append((m, api.count))
        )
        assert api.requests == [] and not outcome.execute_gated
        assert outcome.figures.execute_note.startswith("Not gated: init sent no request to the API")
        assert [m for m, _ in said] == ["measuring: build + search of 15 operation(s), from the pinned spec"]
        said.clear()
        outcome = init_from_openapi(str(spec), target=tmp_path / "live", live=True,
                                    progress=lambda m: said.append((m, api.count)))  # fmt: skip
        assert api.count > 0  # (its answers do not match the demo's schemas: execute is not gated)
        assert said[1] == (f"contacting {api.url}: {outcome.reads} read-only request(s) to {api.url}", 0)


class _Shop(http.server.BaseHTTPRequestHandler):
    """A small API: a JSON pet (its body set by the test), an XML catalogue, a text feed and a 204 ping."""

    pet: bytes = b'{"id": 1, "name": "Rex"}'
    answers = {
        "/pet": ("application/json", None),
        "/catalogue": ("application/xml", b"<pets><pet>Rex</pet></pets>"),
        "/feed": ("text/plain; charset=utf-8", b"Rex was adopted"),
    }

    def do_GET(self) -> None:
        if self.path not in self.answers:  # /ping, and init's probe of the base URL
            self.send_response(204)
            self.end_headers()
            return
        media, body = self.answers[self.path]
        body = body if body is not None else type(self).pet
        self.send_response(200)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


SHOP_SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "shop", "version": "1"},
    "paths": {
        "/pet": {"get": {"operationId": "getPet", "summary": "Show the pet of the day", "responses": {"200": {
            "description": "ok", "content": {"application/json": {"schema": {
                "type": "object", "required": ["id", "name"],
                "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}}}}},
        "/catalogue": {"get": {"operationId": "getCatalogue", "summary": "List the catalogue as XML",
                               "responses": {"200": {"description": "ok", "content": {"application/xml": {
                                   "schema": {"type": "object"}}}}}}},
        "/feed": {"get": {"operationId": "getFeed", "summary": "Read the adoption feed", "responses": {"200": {
            "description": "ok", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
        "/ping": {"get": {"operationId": "ping", "summary": "Check the shop is open",
                          "responses": {"204": {"description": "open"}}}},
    },
}  # fmt: skip


def test_read_cases_assert_the_documented_response_and_catch_a_dropped_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37, item 8: documented XML, text and 204 responses pass their read cases; a JSON body that drops
    a required field blocks (it passed on the status code alone before)."""
    (tmp_path / "spec.json").write_text(json.dumps(SHOP_SPEC), encoding="utf-8")
    handler = type("Shop", (_Shop,), {})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        outcome = init_from_openapi(str(tmp_path / "spec.json"), target=tmp_path / "shop", base_url=url)
        assert outcome.execute_gated and outcome.figures.execute is not None
        assert outcome.figures.execute.figures["execute_read_success_rate"] == 1.0, outcome.figures.execute
        reads = (tmp_path / "shop" / "gates" / "execute_read" / "reads.yaml").read_text()
        assert reads.count("type: response_schema") == 3 and "in: [204]" in reads  # not for the 204 ping
        config = str(tmp_path / "shop" / "qlab.yaml")
        code, out, err = qlab(["run", "-q", "--config", config], capsys)
        assert (code, out) == (0, "PASS (exit 0)\n"), err
        handler.pet = b'{"id": 1}'  # the server drops a required field
        code, out, err = qlab(["run", "--config", config], capsys)
        assert code == 1 and "execute-read-001 at execute (schema_mismatch)" in out, out + err
        result = (tmp_path / "shop" / ".qlab" / "out" / "result.json").read_text()
        assert "'name' is a required property" in result
    finally:
        server.shutdown()
        server.server_close()


class _Jupyter(http.server.BaseHTTPRequestHandler):
    """Jupyter Server's shape: no security scheme in its spec, yet most reads answer 403 without a token."""

    def do_GET(self) -> None:
        status = 200 if self.path in ("/", "/api") else 403
        body = b'{"version": "2.14"}' if status == 200 else b'{"message": "Forbidden"}'
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_baseline_with_reads_rejected_is_said_per_status_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37, item 6: 2 of 3 reads answering 403 are counted per status, in the console and beside the
    threshold, with the hint to add an auth profile (on 6b179e1 init wrote 0.33 without a word)."""
    paths = {f"/api/{name}": {"get": {"operationId": name, "summary": f"Show the {name}", "responses": {
        "200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}}}
        for name in ("contents", "sessions")}  # fmt: skip
    paths["/api"] = {"get": {"operationId": "version", "summary": "Show the server version",
                             "responses": {"200": {"description": "ok"}}}}  # fmt: skip
    spec = {"openapi": "3.0.3", "info": {"title": "jupyter", "version": "1"}, "paths": paths}
    (tmp_path / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Jupyter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        code, out, err = qlab(["init", str(tmp_path / "jupyter"), "--from-openapi", str(tmp_path / "spec.json"),
                               "--base-url", url], capsys)  # fmt: skip
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, err
    said = (
        "rejected by the API: 403 x2 of 3 reads: add an auth profile (auth_profiles, environments.api.auth), "
        "then raise this threshold"
    )
    assert f"warning: {said}\n" in out
    config = (tmp_path / "jupyter" / "qlab.yaml").read_text()
    assert f"execute_read_success_rate: '>= 0.33'  # measured 0.333333 at init; raise me. {said}\n" in config
