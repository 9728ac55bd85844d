"""Reading and parsing source documents; located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.collection import documents
from qlab.contracts.errors import SpecError


def test_yaml_keys_are_strings_and_dates_stay_strings(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text(
        "responses:\n  200: {description: ok}\nreleased: 2024-01-31\nflag: no\n", encoding="utf-8"
    )
    doc = documents.load(str(path))
    assert doc.data == {"responses": {"200": {"description": "ok"}}, "released": "2024-01-31", "flag": "no"}
    assert doc.uri == path.resolve().as_uri() and len(doc.digest) == 64


def test_json_that_is_not_strict_json_gets_a_yaml_chance(tmp_path: Path) -> None:
    path = tmp_path / "spec"
    path.write_text("{openapi: 3.0.3, paths: {}}\n", encoding="utf-8")
    assert documents.load(str(path)).data == {"openapi": "3.0.3", "paths": {}}


def test_relative_paths_resolve_against_base_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "a.json").write_text('{"x": 1}', encoding="utf-8")
    doc = documents.load("specs/a.json", base_dir=tmp_path)
    assert doc.display == str(tmp_path / "specs" / "a.json") and doc.data == {"x": 1}  # not below the cwd
    with pytest.raises(SpecError) as caught:
        documents.load("specs/b.json", base_dir=tmp_path)
    assert str(caught.value) == f"{tmp_path / 'specs' / 'b.json'}: file not found; check the path."
    monkeypatch.chdir(tmp_path)
    assert documents.load("specs/a.json", base_dir=tmp_path).display == "specs/a.json"  # below it: relative


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ('"get a \\ud800 thing"', "$.paths./a.get.summary holds a lone UTF-16 surrogate"),
        ("NaN", "NaN"),
        ("1e999999", "too large"),
    ],
)
def test_a_json_spec_no_result_file_could_hold_is_refused(tmp_path: Path, value: str, reason: str) -> None:
    """json reads these, but the collection artifact and the result are strict JSON in UTF-8: refused at the
    spec, by name, instead of an internal error when the artifact is written."""
    path = tmp_path / "spec.json"
    path.write_text('{"paths": {"/a": {"get": {"summary": ' + value + "}}}}", encoding="utf-8")
    with pytest.raises(SpecError) as caught:
        documents.load(str(path))
    assert str(path) in str(caught.value) and reason in str(caught.value)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("title: caf\xe9\n".encode("latin-1"))
    with pytest.raises(SpecError, match="not UTF-8 text"):
        documents.load(str(path))


def test_locate_points_at_the_node_or_its_nearest_ancestor(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{\n  "a": {\n    "b": [10, 20]\n  }\n}\n', encoding="utf-8")
    doc = documents.load(str(path))
    assert documents.locate(doc, ("a", "b", 1)) == (3, 15)
    assert documents.locate(doc, ("a", "missing")) == (2, 8)
    error = documents.error(doc, ("a", "b", 1), "too big")
    assert str(error) == f"{path}:3:15: $.a.b[1]: too big" and error.detail == "too big"


def test_http_status_error_is_a_spec_error(httpbin_url: str) -> None:
    with pytest.raises(SpecError) as caught:
        documents.load(f"{httpbin_url}/status/404")
    assert (
        str(caught.value)
        == f"{httpbin_url}/status/404: could not fetch the spec (HTTP 404); check the URL and that the server answers."
    )


def test_url_document(httpbin_url: str) -> None:
    doc = documents.load(f"{httpbin_url}/json")
    assert doc.uri == f"{httpbin_url}/json" and "slideshow" in doc.data


def test_urls_are_shown_without_credentials_or_query() -> None:
    from servers import free_port

    url = f"http://user:secret@127.0.0.1:{free_port()}/spec.json?api_key=abc"
    with pytest.raises(SpecError) as caught:
        documents.load(url)
    message = str(caught.value)
    assert message.startswith("http://127.0.0.1:") and "secret" not in message and "abc" not in message
    assert documents.safe_location("specs/a.yaml") == "specs/a.yaml"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"openapi: 3.0.3\n\x00\x01", "2:1: file is binary (it contains a NUL byte), not YAML or JSON text"),
        ("openapi: 3.0.3\n".encode("utf-16"), "1:1: file is UTF-16 text; save it as UTF-8"),
    ],
)
def test_binary_and_utf16_specs_are_refused_with_their_place(
    tmp_path: Path, raw: bytes, message: str
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_bytes(raw)
    with pytest.raises(SpecError) as caught:
        documents.load(str(path))
    assert str(caught.value) == f"{path}:{message}"
