"""An auth profile per security scheme, reading named variables; the collection's profile is the most required."""

from __future__ import annotations

from qlab.collection.model import Tool
from qlab.project.starter.auth import collection_profile, profiles
from qlab.project.starter.model import SecurityScheme


def test_each_scheme_kind_becomes_a_profile_that_reads_named_variables() -> None:
    schemes = [
        SecurityScheme("petstore_auth", "bearer", "oauth2 (implicit)"),
        SecurityScheme("api_key", "api_key", "apiKey in header api_key", where="header", key="api_key"),
        SecurityScheme("basic", "basic", "http basic"),
        SecurityScheme(
            "cc",
            "client_credentials",
            "oauth2 (clientCredentials)",
            token_url="https://a/token",
            scopes=("read",),
        ),
        SecurityScheme("session", "api_key", "apiKey in cookie sid", where="cookie", key="sid"),
        SecurityScheme("digest", "unsupported", "http digest"),
    ]
    made = {p.name: p for p in profiles(schemes, prefix="PETSTORE")}
    assert set(made) == {"petstore_auth", "api_key", "basic", "cc", "session"}
    assert made["petstore_auth"].keys == {
        "type": "bearer", "security_scheme": "petstore_auth", "token_env": "PETSTORE_TOKEN"
    }  # fmt: skip
    assert made["api_key"].keys == {
        "type": "api_key", "security_scheme": "api_key", "header": "api_key", "value_env": "PETSTORE_API_KEY"
    }  # fmt: skip
    assert made["basic"].env == ("PETSTORE_USERNAME", "PETSTORE_PASSWORD")
    assert made["cc"].keys["token_url"] == "https://a/token" and made["cc"].keys["scopes"] == ["read"]
    assert made["cc"].env[1] == "PETSTORE_CLIENT_SECRET"
    assert made["session"].keys == {"type": "headers", "security_scheme": "session",
                                    "headers": {"Cookie": "PETSTORE_COOKIE"}}  # fmt: skip


def test_two_schemes_of_one_kind_each_get_their_own_variable() -> None:
    schemes = [
        SecurityScheme("readKey", "api_key", "apiKey in query read", where="query", key="read"),
        SecurityScheme("write key", "api_key", "apiKey in header X-Write", where="header", key="X-Write"),
    ]
    made = profiles(schemes, prefix="API")
    assert [p.name for p in made] == ["readKey", "write_key"]
    assert [p.env for p in made] == [("API_READ_KEY_API_KEY",), ("API_WRITE_KEY_API_KEY",)]
    assert made[0].keys["query"] == "read"


def _tool(tool_id: str, *security: dict[str, tuple[str, ...]]) -> Tool:
    return Tool(tool_id, tool_id, "", "api", "openapi", method="GET", path="/x", security=security)


def test_the_collection_profile_is_the_scheme_most_operations_require() -> None:
    made = profiles(
        [
            SecurityScheme("key", "api_key", "k", where="header", key="k"),
            SecurityScheme("oauth", "bearer", "o"),
        ],
        prefix="API",
    )
    tools = [_tool("a", {"oauth": ()}), _tool("b", {"oauth": ()}, {"key": ()}), _tool("c", {"key": ()})]
    chosen = collection_profile(tools, made)
    assert chosen is not None and chosen.name == "oauth"
    assert collection_profile([_tool("d", {"key": ()}, {})], made) is None  # `{}`: auth is optional
    assert collection_profile([_tool("e")], made) is None
