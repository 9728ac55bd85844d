"""What a run knows is secret before it sends anything (``qlab.execute.credentials``): every credential qlab.yaml
points at, and the userinfo of a ``base_url``, which is never sent as written nor shown."""

from __future__ import annotations

import base64
import dataclasses

import pytest

from qlab.execute.credentials import SECRET_NAME, BaseURL, display_url, known_secrets
from qlab.project.model import (
    AuthProfile,
    CollectionConfig,
    Config,
    EngineConfig,
    Environment,
    LLMConfig,
    ServerConfig,
    Source,
)


def _config(**kw: object) -> Config:
    base = Config(version=1, project="p", path="qlab.yaml", collection=CollectionConfig(sources=()),
                  engine=EngineConfig(), environments={}, auth_profiles={}, suites={}, gates=())  # fmt: skip
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def test_a_base_url_with_userinfo_is_split_for_sending() -> None:
    url = BaseURL.of("https://user%40corp:p%3Ass@api.test:8443/v1?x=1")
    pair = "user@corp:p:ss"
    basic = "Basic " + base64.b64encode(pair.encode()).decode()
    assert url == BaseURL("https://api.test:8443/v1?x=1", basic, ("p:ss", pair, basic, "user%40corp:p%3Ass"))
    assert BaseURL.of("http://api.test/x") == BaseURL("http://api.test/x")


def test_an_at_sign_inside_the_password_stays_in_the_password() -> None:
    """Rule: the host is what follows the LAST ``@`` of the netloc; everything before it is userinfo."""
    url = BaseURL.of("http://user:p@ss-word@api.test/x")
    basic = "Basic " + base64.b64encode(b"user:p@ss-word").decode()
    assert url == BaseURL(
        "http://api.test/x", basic, ("p@ss-word", "user:p@ss-word", basic, "user:p@ss-word")
    )


def test_a_user_without_password_is_still_basic_credentials() -> None:
    url = BaseURL.of("http://token-only-123@api.test")
    basic = "Basic " + base64.b64encode(b"token-only-123:").decode()
    assert url == BaseURL("http://api.test", basic, (basic, "token-only-123"))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:pw@h:1/p?q=1", "http://h:1/p?q=1"),
        ("http://a@b@h/p", "http://h/p"),
        ("http://h/p", "http://h/p"),
    ],
)
def test_display_url_never_shows_the_userinfo(url: str, shown: str) -> None:
    assert display_url(url) == shown


@pytest.mark.parametrize(
    ("name", "secret"),
    [("X-Api-Key", True), ("DB_PASSWORD", True), ("SESSION_COOKIE", True), ("Authorization", True),
     ("X-Signature", True), ("PRIVATE_KEY", True), ("client_credential", True), ("API_KEY", True), ("apikey", True),
     ("pwd", True), ("X-Tenant", False), ("PORT", False), ("Accept", False)],
)  # fmt: skip
def test_names_that_say_secret(name: str, secret: bool) -> None:
    assert bool(SECRET_NAME.search(name)) is secret


def test_every_credential_the_config_points_at_is_known() -> None:
    environ = {"TOK": " tok-1 ", "U": "user-1", "P": "", "CS": "cs-1", "H": "hv-1", "LLM": "llm-1", "ENG": "eng-1",
               "UNUSED": "unused-1"}  # fmt: skip
    config = _config(
        auth_profiles={
            "b": AuthProfile("b", "bearer", token_env="TOK"),
            "basic": AuthProfile("basic", "basic", username_env="U", password_env="P"),
            "o": AuthProfile(
                "o", "oauth2_client_credentials", client_id_env="MISSING", client_secret_env="CS"
            ),
            "h": AuthProfile("h", "headers", headers={"X-Session": "H"}),
        },
        environments={
            "dev": Environment(
                "dev",
                "http://svc:pw-1@dev.test",
                headers={"X-Api-Key": " key-1 ", "X-Tenant": "t-1"},
                server=ServerConfig("run", "http://dev.test", env={"DB_PASSWORD": "db-1", "PORT": "80"}),
            ),
        },
        collection=CollectionConfig(
            sources=(Source("m", "mcp", None, command="x", env={"MCP_TOKEN": "mcp-1", "MODE": "m"}),)
        ),
        engine=EngineConfig(
            headers={"Authorization": "ENG"}, llm=LLMConfig("http://llm", "m", api_key_env="LLM")
        ),
    )
    found = known_secrets(config, environ)
    basic = "Basic " + base64.b64encode(b"svc:pw-1").decode()
    assert found == {"tok-1", "user-1", "cs-1", "hv-1", "pw-1", "svc:pw-1", basic, "key-1", "db-1", "mcp-1",
                     "eng-1", "llm-1"}  # fmt: skip


def test_a_config_without_credentials_knows_none() -> None:
    assert (
        known_secrets(_config(environments={"dev": Environment("dev", "http://dev.test")}), {"X": "y"})
        == set()
    )
    assert known_secrets(_config(engine=EngineConfig(llm=LLMConfig("http://llm", "m"))), {}) == set()
