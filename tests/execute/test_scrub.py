from __future__ import annotations

import json
from pathlib import Path

import pytest

from qlab.scrub import REDACTED, Leak, find_leaks, scrub, scrub_text, truncate

TOKEN = "tok-CANARY-9f8e7d"


def test_secret_values_are_redacted_everywhere() -> None:
    doc = {
        "message": f"GET /x answered 401 for Bearer {TOKEN}",
        "events": [{"path": f"/anything?token={TOKEN}"}, ("nested", TOKEN)],
        "n": 3,
        "ok": True,
    }
    out = scrub(doc, [TOKEN])
    assert TOKEN not in json.dumps(out)
    assert out["message"] == f"GET /x answered 401 for Bearer {REDACTED}"
    assert out["events"][1] == ["nested", REDACTED]
    assert (out["n"], out["ok"]) == (3, True)
    assert doc["message"].endswith(TOKEN)  # the input is not modified


def test_encoded_forms_are_redacted() -> None:
    secret = 'p@ss "w/rd"&<x>'
    forms = [
        json.dumps(secret)[1:-1],
        "p%40ss%20%22w%2Frd%22%26%3Cx%3E",
        "p%40ss+%22w%2Frd%22%26%3Cx%3E",
        "p@ss &quot;w/rd&quot;&amp;&lt;x&gt;",
    ]
    for form in forms:
        assert scrub_text(f"before {form} after", [secret]) == f"before {REDACTED} after", form


def test_secret_keys_and_sensitive_fields() -> None:
    doc = {
        "headers": {"Authorization": "Bearer x", "Cookie": "a=b", "Accept": "*/*"},
        "set-cookie": ["s=1", "t=2"],
        "cookies": {"session": "abc"},
        "data": {"email": "hana@example.com", "userId": 42, "name": "Hana", "access_token": "zzz"},
        "authenticated": True,
        "token": True,
    }
    out = scrub(doc, [], sensitive_fields=["email", "user_id"])
    assert out["headers"] == {"Authorization": REDACTED, "Cookie": REDACTED, "Accept": "*/*"}
    assert out["set-cookie"] == [REDACTED, REDACTED]
    assert out["cookies"] == {"session": REDACTED}
    assert out["data"] == {"email": REDACTED, "userId": REDACTED, "name": "Hana", "access_token": REDACTED}
    assert out["token"] is True


def test_long_strings_are_truncated_after_redaction() -> None:
    body = "x" * 95 + TOKEN + "y" * 200
    out = scrub(body, [TOKEN], max_chars=100)
    assert TOKEN[:5] not in out and "tok-" not in out
    assert out.endswith(
        f"…[truncated {len(body) - len(TOKEN) + len(REDACTED) - 100} of {len(body) - len(TOKEN) + len(REDACTED)} chars]"
    )
    assert truncate("short", 100) == "short"


def test_find_leaks(tmp_path: Path) -> None:
    clean = tmp_path / "result.json"
    clean.write_text(json.dumps({"a": REDACTED}))
    dirty = tmp_path / "out" / "junit.xml"
    dirty.parent.mkdir()
    dirty.write_text(f"<failure>{json.dumps({'t': 'a' + chr(34) + TOKEN})}</failure>")
    other = tmp_path / "out" / "summary.md"
    other.write_text("key=p%40ss")
    leaks = find_leaks([clean, tmp_path / "out", tmp_path / "missing.txt"], [TOKEN, "p@ss", "", "absent"])
    assert leaks == [Leak(dirty, 0), Leak(other, 1)]


def test_scalar_values_under_secret_keys_are_redacted() -> None:
    out = scrub({"password": 1234, "token": None, "n": 5, "nested": [{"api_key": 9.5}]}, [])
    assert out == {"password": REDACTED, "token": None, "n": 5, "nested": [{"api_key": REDACTED}]}


def test_find_leaks_reads_in_blocks_and_finds_a_secret_across_a_block_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("qlab.scrub.SCAN_BLOCK", 8)
    path = tmp_path / "result.json"
    for start in range(0, 20):  # the secret at every offset against the 8-byte blocks
        path.write_bytes(b"x" * start + b"tok-SECRET-123" + b"y" * 9)
        assert find_leaks([path], ["other-value", "tok-SECRET-123"]) == [Leak(path, 1)], start
    path.write_bytes(b"z" * 100)
    assert find_leaks([path], ["tok-SECRET-123"]) == []
