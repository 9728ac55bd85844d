"""Auth readiness of a collection: required, profile missing, profile fit."""

from __future__ import annotations

from pathlib import Path

from qlab.collection.authcheck import check_auth, fits
from qlab.collection.model import Collection
from qlab.project.model import AuthProfile

from .helpers import config, tool

SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer"},
    "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
}


def _collection(*security: dict[str, tuple[str, ...]]) -> Collection:
    return Collection(
        tools=(tool("open"), tool("closed", security=tuple(security))),
        sources=({"name": "s", "security_schemes": SCHEMES},),
    )


def test_not_required_when_no_tool_needs_auth(tmp_path: Path) -> None:
    assert check_auth(Collection(tools=(tool("a"),)), config(tmp_path, []))["status"] == "not_required"
    optional = _collection({}, {"bearer": ()})
    assert check_auth(optional, config(tmp_path, []))["status"] == "not_required"


def test_missing_profile(tmp_path: Path) -> None:
    out = check_auth(_collection({"bearer": ()}), config(tmp_path, []))
    assert out["status"] == "auth_profile_missing" and out["tools_requiring_auth"] == 1
    assert out["message"] == "1 tool(s) require auth (bearer) but collection.auth names no auth profile"
    named = check_auth(_collection({"bearer": ()}), config(tmp_path, [], auth="prod"))
    assert named["message"].endswith("auth profile 'prod' is not defined in auth_profiles")


def test_profile_fit(tmp_path: Path) -> None:
    bearer = AuthProfile(name="b", type="bearer", token_env="T")
    cfg = config(tmp_path, [], auth="b", profiles={"b": bearer})
    ok = check_auth(_collection({"bearer": ()}), cfg)
    assert (ok["status"], ok["mismatches"]) == ("ok", [])
    wrong = check_auth(_collection({"key": ()}), cfg)
    assert wrong["mismatches"] == [
        "auth profile 'b' (bearer) does not fit scheme 'key' (apiKey in header X-Key)"
    ]
    assert fits(AuthProfile(name="k", type="api_key", header="x-key", value_env="V"), SCHEMES["key"])
    assert fits(AuthProfile(name="h", type="headers", headers={"X-Key": "V"}), SCHEMES["key"])
    assert not fits(AuthProfile(name="k", type="api_key", query="key", value_env="V"), SCHEMES["key"])
    assert fits(AuthProfile(name="u", type="basic", username_env="U", password_env="P"),
                {"type": "http", "scheme": "basic"})  # fmt: skip


def test_a_scheme_is_compared_with_the_profile_that_names_it(tmp_path: Path) -> None:
    """Petstore: the collection's profile is the OAuth token, getInventory wants the API key. A profile naming
    the scheme serves it (no mismatch); with such profiles for every scheme no collection profile is needed."""
    bearer = AuthProfile(name="b", type="bearer", token_env="T", security_scheme="bearer")
    key = AuthProfile(name="k", type="api_key", header="X-Key", value_env="V", security_scheme="key")
    collection = Collection(
        tools=(tool("list", security=({"bearer": ()},)), tool("inventory", security=({"key": ()},))),
        sources=({"name": "s", "security_schemes": SCHEMES},),
    )
    out = check_auth(collection, config(tmp_path, [], auth="b", profiles={"b": bearer, "k": key}))
    assert (out["status"], out["mismatches"]) == ("ok", [])
    out = check_auth(collection, config(tmp_path, [], profiles={"b": bearer, "k": key}))
    assert out["status"] == "ok"
    out = check_auth(collection, config(tmp_path, [], profiles={"k": key}))
    assert out["status"] == "auth_profile_missing" and out["message"].startswith("1 tool(s) require auth")
