from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest

from qlab.adapters.scrub import (
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
from qlab.contracts.results import to_json
from qlab.engine.types import SearchRow

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
    monkeypatch.setattr("qlab.adapters.scrub.SCAN_BLOCK", 8)
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


# ----------------------------------------------------------------------------------- each rule at its edge

from qlab.adapters import scrub as scrub_module  # noqa: E402
from qlab.adapters.scrub import normalize_key, secret_parts, secret_variants  # noqa: E402


def test_every_secret_of_a_set_is_redacted_not_only_the_last() -> None:
    secrets = ["tok-CANARY-first-111111", "tok-CANARY-second-22222", "tok-CANARY-third-333333"]
    text = " | ".join(f"{s} {json.dumps(s)[1:-1]} {base64.b64encode(s.encode()).decode()}" for s in secrets)
    out = scrub_text(text, secrets)
    assert "CANARY" not in out and "dG9rLUNBTkFSWS" not in out


def test_a_secret_that_contains_another_is_replaced_whole() -> None:
    """Rule: the longest form wins, so no tail of a longer secret is left readable."""
    assert scrub_text("x tok-12345-extra-6789 y", ["tok-12345", "tok-12345-extra-6789"]) == f"x {REDACTED} y"
    assert scrub_text("x tok-12345-extra-6789 y", ["tok-12345-extra-6789", "tok-12345"]) == f"x {REDACTED} y"


@pytest.mark.parametrize(
    "form",
    [
        'p\\u00e4\\"ss\\\\w\\u00f6rd1',  # JSON, ASCII-escaped
        'pä\\"ss\\\\wörd1',  # JSON, UTF-8 kept
        "p%C3%A4%22ss%5Cw%C3%B6rd1",  # URL-encoded
        "pä&quot;ss\\wörd1",  # HTML-escaped
    ],
)
def test_the_encoded_forms_of_a_secret_with_quotes_and_non_ascii(form: str) -> None:
    secret = 'pä"ss\\wörd1'
    assert scrub_text(f"[{form}]", [secret]) == f"[{REDACTED}]"


def test_url_and_html_forms_encode_every_reserved_character() -> None:
    secret = "a/b c'd+e=f"
    for form in ("a%2Fb%20c%27d%2Be%3Df", "a%2Fb+c%27d%2Be%3Df", "a/b c&#x27;d+e=f"):
        assert scrub_text(f"<{form}>", [secret]) == f"<{REDACTED}>", form
    assert set(secret_variants(secret)) >= {
        "a%2Fb%20c%27d%2Be%3Df",
        "a%2Fb+c%27d%2Be%3Df",
        "a/b c&#x27;d+e=f",
    }


@pytest.mark.parametrize("prefix", [b"", b"a", b"ab", b"abc", b"abcd"])
@pytest.mark.parametrize("suffix", [b"", b"!", b"!?"])
@pytest.mark.parametrize("alphabet", ["standard", "urlsafe"])
def test_base64_at_every_alignment_hides_no_part_of_the_secret(
    prefix: bytes, suffix: bytes, alphabet: str
) -> None:
    secret = "tok-CANARY-b64-~~??>>1"  # bytes that differ between the standard and URL-safe alphabets
    encode = base64.b64encode if alphabet == "standard" else base64.urlsafe_b64encode
    blob = encode(prefix + secret.encode() + suffix).decode()
    out = scrub_text(f"seen {blob} end", [secret])
    assert REDACTED in out
    # what is left around the redaction is at most the groups that mix in the neighbours' bytes
    left = out.replace("seen ", "").replace(" end", "").split(REDACTED)
    assert all(len(piece) <= 8 for piece in left), (out, left)


def test_base64_forms_only_for_secrets_of_twelve_bytes_or_more() -> None:
    """A short secret's base64 core would match unrelated text: only from MIN_ENCODED_CHARS (12) bytes on."""
    hexed = b"elevenchars".hex()
    assert not any(
        len(v) >= 8 and v.isalnum() and v not in ("elevenchars", hexed, hexed.upper())
        for v in secret_variants("elevenchars")
    )
    twelve = "twelve-chars"
    assert base64.b64encode(twelve.encode()).decode() in secret_variants(twelve)


def test_secret_parts() -> None:
    assert secret_parts('sid=abcdef123; csrf = "qwerty999"; x=1; =nameless12; empty=') == {
        "abcdef123",
        "qwerty999",
    }
    assert secret_parts("token=abc=def123&next=ghijkl") == {"abc=def123", "ghijkl"}
    basic = "Basic " + base64.b64encode(b"username:pass:word:123").decode()
    assert secret_parts(basic) >= {"username:pass:word:123", "username", "pass:word:123"}
    assert "pass:word" not in secret_parts(basic)
    assert secret_parts("Basic abc*def!ghi") == {"abc*def!ghi"}  # not base64: nothing decoded
    assert (
        secret_parts("Bearer abcdef") == {"abcdef"} and secret_parts("Bearer abcde") == set()
    )  # 6 chars at least
    assert secret_parts("token  tok-123456 ") == {"tok-123456"} and secret_parts("DIGEST dig-123456") == {
        "dig-123456"
    }
    assert secret_parts("plain-secret-without-parts") == set()


def test_an_empty_value_is_never_a_secret() -> None:
    assert not SecretSet(["", ""]) and SecretSet(["", "x"]) == {"x"}


def test_a_secret_learnt_after_the_scrubber_was_built_is_redacted_too() -> None:
    """Rule: the run's scrubber is rebuilt as soon as a secret is added (a Set-Cookie learnt mid-run)."""
    secrets = SecretSet(["tok-CANARY-early-1234"])
    assert secrets.text("tok-CANARY-early-1234") == REDACTED
    first = secrets.scrubber()
    assert secrets.scrubber() is first  # nothing added: the same scrubber
    secrets.add("tok-CANARY-late-5678")
    assert secrets.text("tok-CANARY-late-5678 tok-CANARY-early-1234") == f"{REDACTED} {REDACTED}"
    capped = secrets.scrubber(max_chars=30)
    assert secrets.scrubber(max_chars=30) is capped and secrets.scrubber() is not capped
    assert capped.text("tok-CANARY-late-5678" + "z" * 40).startswith(REDACTED + "z")
    assert "truncated" in capped.text("z" * 40) and "truncated" not in secrets.scrubber().text("z" * 40)
    secrets.add("tok-CANARY-later-9999")
    assert secrets.scrubber(max_chars=30).text("tok-CANARY-later-9999") == REDACTED
    assert SecretSet().text("anything") == "anything"


def test_the_run_scrubber_keeps_the_artifacts_own_keys_unless_asked() -> None:
    secrets = SecretSet(["tok-CANARY-keys-4321"])
    doc = {"headers": ["Authorization"], "token": "not-a-secret", "note": "tok-CANARY-keys-4321"}
    assert secrets.scrubber()(doc) == {
        "headers": ["Authorization"],
        "token": "not-a-secret",
        "note": REDACTED,
    }
    assert secrets.scrubber(key_rules=True)(doc) == {
        "headers": ["Authorization"],
        "token": REDACTED,
        "note": REDACTED,
    }
    assert Scrubber([])({"token": "x"}) == {"token": REDACTED}  # a Scrubber has key rules by default


@pytest.mark.parametrize(
    "key", ["Authorization", "X-Api-Key", "x_api_key", "SET-COOKIE", "Access_Token", "client-secret"]
)
def test_secret_keys_in_any_spelling(key: str) -> None:
    assert scrub({key: "v"}, []) == {key: REDACTED}
    assert normalize_key(key) in scrub_module.SECRET_KEYS


def test_sensitive_fields_in_any_spelling() -> None:
    out = scrub(
        {"user_id": 1, "USER-ID": 2, "userId": 3, "userid": 4, "user": 5}, [], sensitive_fields=["userId"]
    )
    assert out == {
        "user_id": REDACTED,
        "USER-ID": REDACTED,
        "userId": REDACTED,
        "userid": REDACTED,
        "user": 5,
    }


def test_a_secret_used_as_a_key_is_replaced_in_the_key() -> None:
    secret = "tok-CANARY-as-key-5555"
    scrubber = Scrubber([secret])
    for _ in range(2):  # the second time from the cache
        assert scrubber({secret: "v", f"x-{secret}": {secret: 1}, 7: secret}) == {
            REDACTED: "v",
            f"x-{REDACTED}": {REDACTED: 1},
            7: REDACTED,
        }
    assert Scrubber([])({"plain": 1, 2: "two"}) == {"plain": 1, 2: "two"}


def test_odd_containers_and_scalars() -> None:
    from collections import OrderedDict
    from enum import Enum

    class Kind(str, Enum):
        A = "tok-CANARY-enum-0000"

    secret = "tok-CANARY-enum-0000"
    scrubber = Scrubber([secret, "31337"])
    assert scrubber(OrderedDict(a=secret)) == {"a": REDACTED}
    assert scrubber((secret, 1, 31337, 31337.0, 1.5, None, True)) == [
        REDACTED,
        1,
        REDACTED,
        REDACTED,
        1.5,
        None,
        True,
    ]
    assert scrubber(Kind.A) == REDACTED
    from qlab.collection.model import MutationClass

    # a str Enum keeps the text JSON writes for it ("read_only"), never its name ("MutationClass.READ_ONLY")
    assert scrubber({"mutation": MutationClass.READ_ONLY}) == {"mutation": "read_only"}


def test_search_rows_are_scrubbed_in_every_text_they_hold_and_stay_rows() -> None:
    """A secret in a case's search rows (an engine that echoes it in a tool id, a matched term, a field name, a
    correction) is replaced there; the rows stay SearchRows, their rank and scores numbers, and a row with
    nothing to replace is the very row (its evidence stays shared)."""
    secret = "tok-CANARY-rows-0000"
    leaky = SearchRow(
        f"get-{secret}",
        1,
        2.5,
        {"summary": 1.0, secret: 1.5},
        ("member", secret),
        {secret: "member", "x": secret},
    )
    clean = SearchRow("getMember", 2, 1.0, {"summary": 1.0}, ("member",), {})
    scrubber = Scrubber([secret, "31337"])
    rows = scrubber({"hit": False, "rows": (leaky, clean)})["rows"]
    assert rows[0] == SearchRow(
        f"get-{REDACTED}",
        1,
        2.5,
        {"summary": 1.0, REDACTED: 1.5},
        ("member", REDACTED),
        {REDACTED: "member", "x": REDACTED},
    )
    assert rows[1] is clean and Scrubber([])(leaky) is leaky  # nothing to replace / nothing to look for
    assert "CANARY" not in json.dumps(rows, default=to_json)
    assert scrubber({"password": {"a": 1, "b": [2]}, "token": [1, 2], "secret": False}) == {
        "password": {"a": REDACTED, "b": REDACTED},
        "token": [REDACTED, REDACTED],
        "secret": False,
    }
    assert scrubber(object) is object


def test_truncation_edges() -> None:
    assert truncate("abc", 0) == "abc" and truncate("abc", 3) == "abc"
    assert (
        truncate("abcd", 3) == "abc…[truncated 1 of 4 chars]"
        and truncate("ab", 1) == "a…[truncated 1 of 2 chars]"
    )
    assert Scrubber([], max_chars=1).text("ab") == "a…[truncated 1 of 2 chars]"
    assert Scrubber([], max_chars=0).text("ab" * 5000) == "ab" * 5000
    assert Scrubber([], max_chars=4).text("abcd") == "abcd"


def test_the_stream_is_the_text_scrubbed_whole_whatever_the_pieces() -> None:
    """Rule: ``Scrubber.stream`` yields exactly what ``text`` gives for the whole text, however it is cut: secrets
    and numeric secrets at block boundaries (65,536 characters), pieces of any size."""
    import random

    secret, number = "tok-CANARY-stream-abcdef", "9081726354"
    scrubber = Scrubber([secret, number], max_chars=0)
    rng = random.Random(7)
    filler = "abc 1234 x\n"
    parts = []
    while sum(map(len, parts)) < 200_000:
        parts.append(rng.choice([secret, number, f"{number}5", f"1{number}", filler * rng.randrange(1, 400)]))
    text = "".join(parts)
    for boundary in (65_536, 131_072):  # a secret right across each block edge
        text = text[: boundary - 5] + secret + text[boundary - 5 :]
    expected = scrubber.text(text)
    for sizes in ((1,), (7, 13), (65_536,), (70_000, 1), (300_000,)):
        pieces, at, i = [], 0, 0
        while at < len(text):
            step = sizes[i % len(sizes)]
            pieces.append(text[at : at + step])
            at, i = at + step, i + 1
        assert "".join(scrubber.stream(pieces)) == expected, sizes
    assert "".join(scrubber.stream([])) == ""


def test_find_leaks_keeps_going_past_a_file_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import builtins

    first, second = tmp_path / "a.json", tmp_path / "b.json"
    first.write_text(TOKEN)
    second.write_text(f"{TOKEN} and tok-CANARY-other-0000")
    real = builtins.open

    def refusing(path: object, *args: object, **kwargs: object) -> object:
        if str(path) == str(first):
            raise PermissionError(13, "denied")
        return real(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(builtins, "open", refusing)
    assert find_leaks([first, second], ["tok-CANARY-other-0000", "", TOKEN]) == [
        Leak(second, 0),
        Leak(second, 2),
    ]


def test_find_leaks_over_a_block_edge_of_a_real_size(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    edge = scrub_module.SCAN_BLOCK
    path.write_bytes(b"x" * (edge - 4) + TOKEN.encode() + b"y" * 100)
    assert find_leaks([path], [TOKEN]) == [Leak(path, 0)]


def test_the_console_holds_a_line_until_it_ends(capsys: pytest.CaptureFixture[str]) -> None:
    first, second = "tok-CANARY-console-one-1", "tok-CANARY-console-two-2"
    with console():
        watch_console(SecretSet([first]))
        watch_console(SecretSet([second]))  # a second run's set is watched as well
        sys.stdout.write(f"a {first[:5]}")
        sys.stdout.write(f"{first[5:]} b\nc {second}")
        assert sys.stdout.writable() and sys.stdout.isatty() is False and sys.stdout.encoding
        sys.stdout.flush()
        sys.stdout.write("\rnext\n")
    out = capsys.readouterr().out
    assert out == f"a {REDACTED} b\nc {REDACTED}\rnext\n"
    assert scrub_module.console_text(first) == first  # the sets are forgotten when the command ends


# ------------------------------------------------------------------------- every form, part and block exactly


def test_the_forms_of_a_secret_exactly() -> None:
    """Rule: a secret is known in every form our outputs give it — raw, JSON-escaped with and without
    ``ensure_ascii``, URL-encoded (``%20`` and ``+``, ``/`` encoded too), HTML-escaped, base64 (standard and
    URL-safe) at each of the three alignments, keeping only the groups made of the secret's own bytes, and its
    bytes in hex and every-byte ``%XX`` (lower and upper case)."""
    assert secret_variants('pä"ss/wörd <&>+1') == {
        'pä"ss/wörd <&>+1',
        'p\\u00e4\\"ss/w\\u00f6rd <&>+1',
        'pä\\"ss/wörd <&>+1',
        "p%C3%A4%22ss%2Fw%C3%B6rd%20%3C%26%3E%2B1",
        "p%C3%A4%22ss%2Fw%C3%B6rd+%3C%26%3E%2B1",
        "pä&quot;ss/wörd &lt;&amp;&gt;+1",
        "cMOkInNzL3fDtnJkIDwmPisx",  # base64 of the 18 bytes, aligned
        "pCJzcy93w7ZyZCA8Jj4r",  # after one byte: the first and last groups mix in the neighbours
        "w6Qic3Mvd8O2cmQgPCY+",  # after two bytes
        "w6Qic3Mvd8O2cmQgPCY-",  # ... in the URL-safe alphabet
        "70c3a42273732f77c3b67264203c263e2b31",  # its bytes in hex, lower and upper case
        "70C3A42273732F77C3B67264203C263E2B31",
        "%70%c3%a4%22%73%73%2f%77%c3%b6%72%64%20%3c%26%3e%2b%31",  # every byte %XX-encoded
        "%70%C3%A4%22%73%73%2F%77%C3%B6%72%64%20%3C%26%3E%2B%31",
    }


def test_the_parts_of_basic_credentials_exactly() -> None:
    """Rule: ``Basic x`` registers x, the decoded ``user:password`` and each half; x that is not strict base64
    (a ``*`` in it) is never decoded leniently into a guess."""
    basic = "Basic " + base64.b64encode(b"username:pass:word:123").decode()
    assert secret_parts(basic) == {
        "dXNlcm5hbWU6cGFzczp3b3JkOjEyMw==",
        "username:pass:word:123",
        "username",
        "pass:word:123",
    }
    assert secret_parts("Basic dXNl*cjpwYXNzd29yZA==") == {"dXNl*cjpwYXNzd29yZA=="}
    assert secret_parts("Basic " + base64.b64encode(b"\xff\xfe-not-utf8").decode()) == {"//4tbm90LXV0Zjg="}
    # a cookie value loses its quotes only, never its own first or last characters
    assert secret_parts('sid="XsessionX"; csrf=Xcsrf-valueX') == {"XsessionX", "Xcsrf-valueX"}


def test_log_lines_are_never_truncated() -> None:
    """Rule: ``scrub_text`` (log lines) and a run scrubber with the key rules keep the whole text unless a
    length is asked for."""
    long = "z" * (scrub_module.DEFAULT_MAX_CHARS + 10)
    assert scrub_text(long + " tok-CANARY-log-1234", ["tok-CANARY-log-1234"]) == f"{long} {REDACTED}"
    secrets = SecretSet(["tok-CANARY-log-1234"])
    assert secrets.scrubber(key_rules=True)({"note": long}) == {"note": long}
    assert secrets.scrubber(key_rules=True, max_chars=5)({"note": long})["note"].startswith(
        "zzzzz…[truncated"
    )


def test_a_run_scrubber_is_built_once_per_set_of_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rule: a run's scrubber is built again only after a secret was added (every log line asks for it)."""
    built: list[int] = []
    real = scrub_module.scrubber

    def counting(secrets: frozenset[str], **kwargs: object) -> Scrubber:
        built.append(len(secrets))
        return real(secrets, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scrub_module, "scrubber", counting)
    secrets = SecretSet(["tok-CANARY-once-1234"])
    for _ in range(3):
        assert secrets.text("tok-CANARY-once-1234") == REDACTED
    assert built == [1]
    secrets.add("tok-CANARY-twice-5678")
    for _ in range(3):
        secrets.text("x")
        secrets.scrubber(max_chars=9)
    assert built == [1, 2, 2]  # the new set, once per max_chars


def test_find_leaks_of_no_secrets_and_of_a_secret_one_byte_into_a_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: blocks overlap by the longest form less one byte, exactly enough for a secret with one byte left
    in the previous block; a scan for no secret finds nothing (and does not fail)."""
    monkeypatch.setattr("qlab.adapters.scrub.SCAN_BLOCK", 16)
    path = tmp_path / "log.txt"
    secret = "SECR1"  # 5 bytes, no character to escape: every form is the raw one
    assert secret_variants(secret) == {secret}
    for start in range(0, 34):
        path.write_bytes(b"x" * start + secret.encode() + b"y" * 20)
        assert find_leaks([path], [secret]) == [Leak(path, 0)], start
        assert find_leaks([path], []) == []


def test_the_stream_gathers_blocks_and_holds_back_the_longest_form() -> None:
    """Rule: ``Scrubber.stream`` yields a block of STREAM_BLOCK characters as soon as the longest form plus two
    characters more have arrived (a match starting before the block's end is then complete), a match starting
    exactly at the end goes to the next block, and no piece yields nothing."""
    block = scrub_module.STREAM_BLOCK
    secret = "tok-CANARY-blocks-1"
    scrubber = Scrubber([secret], max_chars=0)
    hold = max(len(v) for v in secret_variants(secret)) + 2

    def chunks(text: str) -> list[str]:
        return list(scrubber.stream(text))  # one character per piece: every flush point is seen

    assert [len(c) for c in chunks("a" * (2 * block + 100))] == [block, block, 100]
    assert chunks("a" * block + secret + "b" * 50) == ["a" * block, REDACTED + "b" * 50]
    tail = "a" * (block + hold - 1)  # one character short of a block: nothing yielded until the end
    assert chunks(tail) == [tail]
    assert list(scrubber.stream([])) == []


def test_the_stream_never_redacts_again_what_a_block_already_matched() -> None:
    """Rule: the two characters a block keeps from the previous one are context only: a secret that begins
    inside a match already replaced is not matched again (the stream gives what ``text`` gives)."""
    block = scrub_module.STREAM_BLOCK
    scrubber = Scrubber(["tok-SECRET-one-xy", "xy-tok-SECRET-two"], max_chars=0)
    text = "a" * (block - 5) + "tok-SECRET-one-xy-tok-SECRET-two" + "b" * 50
    expected = "a" * (block - 5) + REDACTED + "-tok-SECRET-two" + "b" * 50
    assert scrubber.text(text) == expected
    assert "".join(scrubber.stream(text)) == expected
    # a numeric secret right after a block edge: the digit and dot before it (kept as context) say it is the
    # tail of a decimal number, not the secret
    numbers = Scrubber(["4242"], max_chars=0)
    decimal = "a" * (block - 2) + "7.4242" + "b" * 50
    assert numbers.text(decimal) == decimal and "".join(numbers.stream(decimal)) == decimal


def test_the_console_writes_each_complete_line_at_once() -> None:
    """Rule: a console stream passes on everything up to the last line end (``\\n`` or ``\\r``) as soon as it
    is written, and holds only the unfinished rest; it is a terminal exactly when the stream it wraps is."""
    import io

    from qlab.adapters.scrub import ScrubbedStream

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    inner = Terminal()
    stream = ScrubbedStream(inner)
    seen = []
    for text in ("\n", "one\ntwo\nthr", "ee", "\r50 %", "\r100 %\r", "end"):
        stream.write(text)
        seen.append(inner.getvalue())
    assert seen == ["\n", "\none\ntwo\n", "\none\ntwo\n", "\none\ntwo\nthree\r", "\none\ntwo\nthree\r50 %\r100 %\r",
                    "\none\ntwo\nthree\r50 %\r100 %\r"]  # fmt: skip
    stream.flush()
    assert inner.getvalue().endswith("\r100 %\rend")
    assert stream.isatty() is True and ScrubbedStream(io.StringIO()).isatty() is False


# ------------------------------------------------------------------------- the forms an API echoes a secret in


def test_hex_and_every_byte_percent_forms_in_any_letter_case(tmp_path: Path) -> None:
    """A token echoed as a byte dump (hex) or fully percent-encoded reached the outputs: now replaced in lower,
    upper and mixed case, and the scrub check finds them too. A short secret has no such form (its hex would
    match digests)."""
    secret = "tok-CANARY-hex-77"
    hexed = secret.encode().hex()
    percent = "".join(f"%{hexed[i : i + 2]}" for i in range(0, len(hexed), 2))
    mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(hexed))
    for form in (hexed, hexed.upper(), mixed, percent, percent.upper(), percent.replace("%6", "%6").title()):
        assert scrub_text(f"<{form}>", [secret]) == f"<{REDACTED}>", form
    path = tmp_path / "log.txt"
    path.write_text(f"echo {percent.upper()}\n")
    assert find_leaks([path], [secret]) == [Leak(path, 0)]
    assert scrub_text("digest 6162636465", ["abcde"]) == "digest 6162636465"


@pytest.mark.parametrize("prefix", [b"", b"u", b"us", b"user:", b"user:pw"])
@pytest.mark.parametrize("suffix", [b"", b"!", b"!?", b"!?#"])
def test_base64_of_a_secret_leaves_no_character_that_carries_its_bits(prefix: bytes, suffix: bytes) -> None:
    """Cut at the complete 4-character groups, base64 redaction left up to 3 characters at each end that hold
    bits of the secret (a Basic header kept the last 4 characters): now every character from the first bit of
    the secret to its last is replaced, in both alphabets."""
    secret = "tok-CANARY-b64-edge-1"
    encoded = base64.b64encode(prefix + secret.encode() + suffix).decode()
    first = len(prefix) * 8 // 6  # the first character holding a bit of the secret
    last = ((len(prefix) + len(secret)) * 8 - 1) // 6  # the last one
    assert scrub_text(encoded, [secret]) == encoded[:first] + REDACTED + encoded[last + 1 :]
    safe = base64.urlsafe_b64encode(prefix + secret.encode() + suffix).decode()
    assert scrub_text(safe, [secret]) == safe[:first] + REDACTED + safe[last + 1 :]


@pytest.mark.parametrize("wrap", ["\n", "\r\n", "\n    ", "\r", "\\n", "\\r\\n", "\\n  "])
def test_a_secret_cut_by_a_line_break_is_replaced_whole(wrap: str) -> None:
    """An API that wraps a long token (raw, or in JSON-escaped text) left both halves readable; now the token
    and the break inside it are one match, in text and in the stream."""
    secret = "tok-CANARY-wrapped-42"
    for cut in (1, 7, len(secret) - 1):
        text = f"a {secret[:cut]}{wrap}{secret[cut:]} b{wrap}next line"
        assert scrub_text(text, [secret]) == f"a {REDACTED} b{wrap}next line", cut
        pieces = [text[:5], text[5:]]
        assert "".join(Scrubber([secret], max_chars=0).stream(pieces)) == f"a {REDACTED} b{wrap}next line"


def test_base64_wrapped_at_76_columns() -> None:
    secret = "tok-CANARY-mime-9"
    blob = base64.encodebytes(b"x" * 50 + secret.encode() + b"y" * 40).decode()  # MIME: a break every 76
    encoded = blob.replace("\n", "")
    first, last = 50 * 8 // 6, ((50 + len(secret)) * 8 - 1) // 6
    assert first < 76 < last  # the break falls inside the secret's characters
    out = scrub_text(blob, [secret])
    assert out.replace("\n", "") == encoded[:first] + REDACTED + encoded[last + 1 :]


def test_a_secret_set_s_fields_are_redacted_by_key_in_the_final_pass() -> None:
    """The writers' last pass (``SecretSet.scrubber()``) redacts the sensitive fields by key, leaving the
    artifact's own secret-looking keys (``token``, ``headers``) alone."""
    secrets = SecretSet(["tok-CANARY-fields-1"], fields=("userId",))
    doc = {"plan": {"arguments": {"user_id": 42, "q": "x"}}, "token": True, "headers": ["Authorization"]}
    assert secrets.scrubber()(doc) == {
        "plan": {"arguments": {"user_id": REDACTED, "q": "x"}},
        "token": True,
        "headers": ["Authorization"],
    }
    secrets.fields = ("email",)  # a changed set of fields is a new scrubber
    assert secrets.scrubber()({"userId": 1, "Email": "a@b.c"}) == {"userId": 1, "Email": REDACTED}


def test_a_text_only_number_spares_json_numbers() -> None:
    """A value sensitive only as text (a case's numeric entity) leaves a JSON number equal to it (a rank, a count)
    alone."""
    text_only = Scrubber(["90817263"], json_numbers=False)
    assert text_only({"rank": 90817263, "msg": "user 90817263"}) == {
        "rank": 90817263,
        "msg": f"user {REDACTED}",
    }
