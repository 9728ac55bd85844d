from __future__ import annotations

import pytest

from execute.factory import a, case
from qlab.collection.model import MutationClass
from qlab.execute.safety import PlannedCall, check, host_allowed
from qlab.project.model import CleanupStep

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
