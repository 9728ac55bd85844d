from __future__ import annotations

import pytest

from execute.factory import a, case
from qlab.collection.model import MutationClass
from qlab.execute.safety import PlannedCall, check
from qlab.project.model import CleanupStep, host_allowed

GET = PlannedCall("step 0 getMember", "GET")
POST = PlannedCall("step 0 createOrder", "POST", MutationClass.MUTATING)
CLEANUP = (CleanupStep(method="DELETE", path="/orders/{id}"),)
ASSERTS = (a("http_status", in_=[201]),)


@pytest.mark.parametrize(
    ("call", "read_only"),
    [
        (GET, True),
        (PlannedCall("x", "head"), True),
        (PlannedCall("x", "POST"), False),  # POST mutates even when the tool claims read_only
        (PlannedCall("x", "PUT"), False),
        (PlannedCall("x", "PATCH"), False),
        (PlannedCall("x", "DELETE"), False),
        (PlannedCall("x", "GET", MutationClass.MUTATING), False),
        (PlannedCall("drop_table", None, MutationClass.DESTRUCTIVE), False),  # a destructive MCP tool
        (PlannedCall("list_files", None), True),
    ],
)
def test_read_only(call: PlannedCall, read_only: bool) -> None:
    assert call.read_only is read_only


def test_read_only_cases_are_allowed_anywhere() -> None:
    verdict = check(case(), [GET], base_url="https://prod.example.com", allowed_hosts=())
    assert (verdict.allowed, verdict.read_only, verdict.reason) == (True, True, None)


@pytest.mark.parametrize(
    ("kw", "hosts", "reason"),
    [
        ({}, ("127.0.0.1",), "mutation_not_allowed"),
        (
            {"mutation_safety": "allow_mutation", "cleanup": CLEANUP, "assertions": ASSERTS},
            ("dev.example.com",),
            "host_not_allowed",
        ),
        ({"mutation_safety": "allow_mutation", "assertions": ASSERTS}, ("127.0.0.1",), "cleanup_missing"),
        ({"mutation_safety": "allow_mutation", "cleanup": CLEANUP}, ("127.0.0.1",), "cleanup_missing"),
        (
            {"mutation_safety": "allow_mutation", "cleanup": CLEANUP, "assertions": ASSERTS},
            ("127.0.0.1",),
            None,
        ),
    ],
)
def test_mutation_requirements_in_order(
    kw: dict[str, object], hosts: tuple[str, ...], reason: str | None
) -> None:
    verdict = check(case(**kw), [GET, POST], base_url="http://127.0.0.1:8765", allowed_hosts=hosts)  # type: ignore[arg-type]
    assert verdict.reason == reason
    assert verdict.allowed is (reason is None)
    assert verdict.mutating == ("step 0 createOrder",)
    if reason:
        assert "createOrder" in verdict.message


@pytest.mark.parametrize(
    ("url", "hosts", "ok"),
    [
        ("http://127.0.0.1:8765/x", ["127.0.0.1"], True),
        ("http://LOCALHOST:8765", ["localhost"], True),
        ("http://127.0.0.1:8765", ["127.0.0.1:8765"], True),
        ("http://127.0.0.1:8766", ["127.0.0.1:8765"], False),
        ("https://api.dev.example.com", ["*.dev.example.com"], True),
        ("https://dev.example.com", ["*.dev.example.com"], False),
        ("https://evil-dev.example.com", ["*.dev.example.com"], False),
        ("https://api.example.com", ["example.com"], False),
        ("https://api.example.com:443", ["api.example.com:443"], True),
        ("http://h", [], False),
    ],
)
def test_host_allowlist(url: str, hosts: list[str], ok: bool) -> None:
    assert host_allowed(url, hosts) is ok


# ----------------------------------------------------------------------------------- each rule at its edge

from qlab.execute.safety import SafetyVerdict  # noqa: E402

ALLOWED = {"mutation_safety": "allow_mutation", "cleanup": CLEANUP, "assertions": ASSERTS}
DELETE = PlannedCall("cleanup 0 DELETE /orders/{id}", "DELETE", MutationClass.DESTRUCTIVE)


@pytest.mark.parametrize("hosts", [(), ("",), ("  ",)])
def test_an_empty_allow_list_allows_no_host_for_a_mutating_request(hosts: tuple[str, ...]) -> None:
    """Rule (fail closed): ``allowed_hosts`` missing or empty means *no* host may be mutated — never "any host".
    A mutating case against an environment that lists no host is refused before anything is sent."""
    verdict = check(case(**ALLOWED), [GET, POST], base_url="http://127.0.0.1:8765", allowed_hosts=hosts)  # type: ignore[arg-type]
    assert verdict == SafetyVerdict(
        False,
        False,
        "host_not_allowed",
        f"step 0 createOrder would mutate 127.0.0.1:8765, which is not in allowed_hosts ({', '.join(hosts) or 'none'})",
        ("step 0 createOrder",),
    )
    # a read-only case needs no allow-list at all
    assert check(case(), [GET], base_url="http://127.0.0.1:8765", allowed_hosts=hosts) == SafetyVerdict(
        True, True
    )


def test_the_verdicts_in_full() -> None:
    calls = [GET, POST, DELETE]
    labels = ("step 0 createOrder", "cleanup 0 DELETE /orders/{id}")
    what = ", ".join(labels)
    url = "http://127.0.0.1:8765"
    assert check(case(), calls, base_url=url, allowed_hosts=("127.0.0.1",)) == SafetyVerdict(
        False, False, "mutation_not_allowed",
        f"{what} would mutate, and the case does not say mutation_safety: allow_mutation", labels,
    )  # fmt: skip
    both_missing = case(mutation_safety="allow_mutation")
    assert check(both_missing, calls, base_url=url, allowed_hosts=("127.0.0.1",)) == SafetyVerdict(
        False, False, "cleanup_missing", f"{what} would mutate, and the case has no cleanup steps and assertions", labels
    )  # fmt: skip
    no_asserts = case(mutation_safety="allow_mutation", cleanup=CLEANUP)
    assert check(no_asserts, calls, base_url=url, allowed_hosts=("127.0.0.1",)).message == (
        f"{what} would mutate, and the case has no assertions"
    )
    no_cleanup = case(mutation_safety="allow_mutation", assertions=ASSERTS)
    assert check(no_cleanup, calls, base_url=url, allowed_hosts=("127.0.0.1",)).message == (
        f"{what} would mutate, and the case has no cleanup steps"
    )
    assert check(case(**ALLOWED), calls, base_url=url, allowed_hosts=("127.0.0.1",)) == SafetyVerdict(  # type: ignore[arg-type]
        True, False, mutating=labels
    )


@pytest.mark.parametrize(
    ("base_url", "shown"),
    [
        ("http://user:s3cret@10.0.0.5:8080/api", "10.0.0.5:8080"),
        ("http://user:p@ss@10.0.0.5", "10.0.0.5"),  # an @ inside the password: the host is after the last @
        ("http:///relative", "(no host)"),
    ],
)
def test_a_refusal_names_the_host_never_the_userinfo(base_url: str, shown: str) -> None:
    verdict = check(case(**ALLOWED), [POST], base_url=base_url, allowed_hosts=("127.0.0.1", "*.dev.test"))  # type: ignore[arg-type]
    assert (
        f"createOrder would mutate {shown}," in verdict.message
        and "(127.0.0.1, *.dev.test)" in verdict.message
    )
    assert "s3cret" not in verdict.message and "ss@" not in verdict.message and "user" not in verdict.message


def test_verdicts_as_recorded() -> None:
    refused = check(case(), [POST], base_url="http://h", allowed_hosts=())
    assert refused.to_dict() == {
        "read_only": False,
        "allowed": False,
        "mutating_calls": ["step 0 createOrder"],
        "reason": "mutation_not_allowed",
    }
    assert SafetyVerdict(True, True).to_dict() == {"read_only": True, "allowed": True}


@pytest.mark.parametrize(
    ("url", "hosts", "ok"),
    [
        ("http://127.0.0.1:99999/x", ["127.0.0.1"], False),  # a port that is not one: never allowed
        ("http://127.0.0.1:abc/x", ["127.0.0.1"], False),
        ("http://h.test", ["", "h.test"], True),  # a blank entry is skipped, the next one still counts
        ("http://h.test", [" H.TEST "], True),
        ("http://h.test", ["h.test:80"], True),  # the scheme's default port is the port
        ("https://h.test", ["h.test:443"], True),
        ("http://h.test", ["h.test:81"], False),
        ("https://h.test", ["h.test:80"], False),
        ("https://a.b.dev.test", ["*.dev.test"], True),
        ("https://a.dev.test:8443", ["*.dev.test"], True),
        # no host in the URL: nothing can match it, not even an entry that is only a port
        ("http:///x", [":80", "xxxx", "*.", "*.x"], False),
        # a scheme with no default port: only the bare host matches, never a guessed "host:0"
        ("ftp://h.test", ["h.test:0", "h.test:None", "h.test:1", "h.test:21"], False),
        ("ftp://h.test", ["h.test"], True),
        ("ftp://h.test:21", ["h.test:21"], True),
    ],
)
def test_host_allowlist_edges(url: str, hosts: list[str], ok: bool) -> None:
    assert host_allowed(url, hosts) is ok
