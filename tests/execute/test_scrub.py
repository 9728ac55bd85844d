from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

from qlab.scrub import (
    REDACTED,
    Leak,
    Scrubber,
    SecretSet,
    console,
    find_leaks,
    scrub,
    scrub_text,
    truncate,
    watch_console,
)

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


def test_a_secret_set_registers_the_parts_a_secret_carries() -> None:
    """``Cookie: sid=SECRET`` was known only whole: an echoed ``{'sid': 'SECRET'}`` leaked. A run's SecretSet
    registers each cookie value, the credentials after an auth scheme and a Basic header's user and password."""
    cookie, basic_pw = "sid=ck-CANARY-0a1b2c; theme=dark", "pw-CANARY-3d4e5f"
    secrets = SecretSet(
        [
            cookie,
            "Bearer tok-CANARY-6a7b8c",
            "Basic " + base64.b64encode(f"alice:{basic_pw}".encode()).decode(),
        ]
    )
    assert {"ck-CANARY-0a1b2c", "tok-CANARY-6a7b8c", basic_pw, f"alice:{basic_pw}"} <= secrets
    assert "dark" not in secrets and "alice" not in secrets  # parts shorter than MIN_PART_CHARS stay out
    echoed = {"cookies": {"sid": "ck-CANARY-0a1b2c"}, "note": f"login as alice with {basic_pw}"}
    assert "CANARY" not in json.dumps(secrets.scrubber()(echoed))


def test_numeric_secrets_match_whole_numbers_and_json_numbers() -> None:
    """A sensitive ``userId: 42`` was never scrubbed (numbers were skipped): now the number is, as text and as
    a JSON number, but never inside another number."""
    clean = scrub({"actual": 9081726354, "msg": "expected 0, actual 9081726354", "latency": 19081726354.5,
                   "ids": [9081726354.0, 90817263541]}, ["9081726354"])  # fmt: skip
    assert clean == {"actual": REDACTED, "msg": f"expected 0, actual {REDACTED}", "latency": 19081726354.5,
                     "ids": [REDACTED, 90817263541]}  # fmt: skip


def test_base64_forms_are_found_at_any_alignment() -> None:
    secret = "tok-CANARY-base64-7f8e9d"
    for prefix in (b"", b"x", b"xy"):
        blob = base64.b64encode(prefix + secret.encode() + b"!").decode()
        assert secret not in blob and scrub_text(f"seen {blob}", [secret]) != f"seen {blob}", prefix


def test_the_stream_scrubber_finds_a_secret_split_between_pieces() -> None:
    secret = "tok-CANARY-stream-1a2b3c"
    text = ("x" * 70_000) + secret + ("y" * 10) + secret
    for cut in (70_000 + 3, 70_000 + len(secret) - 1, 65_536, 70_005):
        pieces = [text[:cut], text[cut:]]
        out = "".join(Scrubber([secret]).stream(pieces))
        assert secret not in out and out.count(REDACTED) == 2, cut
    assert "".join(Scrubber([]).stream(["a", "b"])) == "ab"


def test_the_console_is_scrubbed_line_by_line(capsys: pytest.CaptureFixture[str]) -> None:
    secret = "tok-CANARY-console-4d5e6f"
    with console():
        watch_console(SecretSet([secret]))
        print(f"header {secret[:10]}", end="", flush=False)  # a secret written in two pieces
        print(f"{secret[10:]} tail")
        print(f"progress {secret}", end="\r", file=sys.stderr)
    captured = capsys.readouterr()
    assert secret not in captured.out + captured.err
    assert captured.out == f"header {REDACTED} tail\n" and captured.err == f"progress {REDACTED}\r"
