"""Hypothesis strategies for the reliability campaign: random documents, mutations of real files, deep nesting.

Shared by the property tests (``test_loader_properties.py``, ``test_spec_properties.py``); the atheris fuzz
(``bench/fuzz_loaders.py``) mutates the same seed files with libFuzzer instead.

Every strategy yields ``bytes``: what lands on disk is what the loader reads, BOMs and broken UTF-8 included.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import yaml
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from servers import in_ci

# A bounded number of examples: 40 derandomised ones locally (the same every run), more in CI, each CI run random
# with the session's seed (tests/conftest.py); the campaign in docs/reliability.md ran more by hand:
#   QLAB_FUZZ_EXAMPLES=2000 python -m pytest -q tests/reliability -k properties
_CI = in_ci()
EXAMPLES = int(os.environ.get("QLAB_FUZZ_EXAMPLES") or (100 if _CI else 40))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not _CI and "QLAB_FUZZ_EXAMPLES" not in os.environ,
    database=None,
)


def note_outcome(outcome: str) -> None:
    """Count an outcome in hypothesis' statistics (``--hypothesis-show-statistics``); a no-op outside a test."""
    if currently_in_test_context():
        event(f"outcome: {outcome}")


# ------------------------------------------------------------------------------------------------ values

KEYS = st.text(min_size=0, max_size=12) | st.sampled_from(
    [
        # config keys, case keys and spec keys: random documents that reach past the first schema check
        "version", "project", "collection", "sources", "openapi", "swagger", "mcp", "python", "suites", "gates",
        "mode", "cases", "stage", "thresholds", "stop_if", "environments", "base_url", "auth", "auth_profiles",
        "type", "token_env", "engine", "output", "budget", "id", "query", "expected_target", "assertions",
        "cleanup", "captures", "mutation_safety", "provided_entities", "paths", "components", "schemas",
        "parameters", "responses", "requestBody", "$ref", "info", "operationId", "get", "post", "in", "name",
        "schema", "items", "properties", "required", "allOf", "anyOf", "oneOf", "additionalProperties",
    ]
)  # fmt: skip

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
    | st.sampled_from(
        ["${HOME}", "${UNSET_VAR}", "${X:-d}", "$${x}", "#/components/schemas/A", "~", "*a", "&a"]
    )
)

VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(KEYS, children, max_size=6),
    max_leaves=40,
)


def to_yaml(value: Any) -> bytes:
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False).encode("utf-8")


def to_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8")  # NaN/Infinity: not JSON, a fine input too


def documents(dump: Callable[[Any], bytes]) -> st.SearchStrategy[bytes]:
    """Random YAML/JSON documents of random structures."""
    return VALUES.map(dump)


# ------------------------------------------------------------------------------------------------ raw input

UNICODE = st.text(st.characters(codec="utf-8"), max_size=400).map(lambda t: t.encode("utf-8"))
BYTES = st.binary(max_size=600) | st.tuples(
    st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff", b""]),
    st.binary(max_size=200),
).map(lambda t: t[0] + t[1])


@st.composite
def deep(draw: st.DrawFn, *, json_only: bool = False) -> bytes:
    """Deep nesting in every syntax: flow/block sequences and mappings, JSON arrays and objects."""
    depth = draw(st.integers(min_value=1, max_value=5000))
    kinds = ["json_array", "json_object"] if json_only else ["flow_seq", "flow_map", "block_map", "block_seq",
                                                            "json_array", "json_object"]  # fmt: skip
    kind = draw(st.sampled_from(kinds))
    if kind in ("flow_seq", "json_array"):
        text = "[" * depth + "1" + "]" * depth
    elif kind in ("flow_map", "json_object"):
        text = '{"a": ' * depth + "1" + "}" * depth
    elif kind == "block_map":
        depth = min(depth, 800)  # the indentation grows quadratically
        text = "".join(f"{'  ' * i}k{i}:\n" for i in range(depth)) + "  " * depth + "v\n"
    else:
        depth = min(depth, 800)
        text = "".join(f"{'  ' * i}-\n" for i in range(depth)) + "  " * depth + "- v\n"
    if draw(st.booleans()):
        text = text[: draw(st.integers(min_value=0, max_value=len(text)))]  # unbalanced
    return text.encode("utf-8")


# ------------------------------------------------------------------------------------------------ mutations

NASTY = st.sampled_from(
    [
        "\t",
        "\x00",
        "\x07",
        "\ufeff",
        "\r",
        "\r\n",
        ":",
        ": ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        "&a ",
        "*a",
        "<<: *a",
        "!!python/object:os.system ",
        "!!binary ",
        "? ",
        "|",
        ">",
        "'",
        '"',
        "#",
        "%YAML 1.1\n---\n",
        "---\n",
        "...\n",
        "${",
        "${UNSET}",
        "\u202e",
        "\U0001f600",
        "é",
        "\ud7ff",
        "1e999",
        "0x1F",
        ".nan",
        "~",
        "2024-01-01",
        "yes",
        "no",
        "on",
    ]
)


@st.composite
def text_mutation(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with 1-4 byte-level edits: delete, insert, replace, duplicate or swap lines, re-indent, truncate."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        op = draw(
            st.sampled_from(["delete", "insert", "replace", "dup_line", "swap_lines", "indent", "truncate"])
        )
        pos = draw(st.integers(min_value=0, max_value=len(data)))
        if op == "delete":
            del data[pos : pos + draw(st.integers(min_value=1, max_value=40))]
        elif op == "insert":
            piece = draw(NASTY | st.text(max_size=8)).encode("utf-8", errors="surrogatepass")
            data[pos:pos] = piece
        elif op == "replace" and data:
            pos = min(pos, len(data) - 1)
            data[pos] = draw(st.integers(min_value=0, max_value=255))
        elif op in ("dup_line", "swap_lines", "indent"):
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            j = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            if op == "dup_line":
                lines.insert(j, lines[i])
            elif op == "swap_lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines[i] = b" " * draw(st.integers(min_value=0, max_value=9)) + lines[i].lstrip(b" ")
            data = bytearray(b"\n".join(lines))
        else:
            del data[pos:]
    return bytes(data)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out += _paths(value, (*prefix, index))
    return out


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def tree_mutation(draw: st.DrawFn, seed: Any, dump: Callable[[Any], bytes]) -> bytes:
    """``seed`` (parsed data) with 1-3 structural edits: drop a key or item, replace a value by a random one,
    add an unknown key, retype a scalar, duplicate a list item, or point a string somewhere else."""
    data = json.loads(json.dumps(seed))  # a deep copy
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["drop", "replace", "add_key", "retype", "dup_item", "ref"]))
        if not path:
            if op == "replace":
                data = draw(VALUES)
            continue
        parent, last = _get(data, path[:-1]), path[-1]
        current = parent[last]
        if op == "drop":
            del parent[last]
        elif op == "replace":
            parent[last] = draw(VALUES)
        elif op == "add_key" and isinstance(current, dict):
            current[draw(KEYS)] = draw(VALUES)
        elif op == "retype":
            parent[last] = draw(
                st.sampled_from([str(current), [current], {"value": current}, None, 0, -1, 1.5, True, ""])
            )
        elif op == "dup_item" and isinstance(current, list) and current:
            current.append(json.loads(json.dumps(current[0])))
        elif op == "ref":
            parent[last] = {"$ref": draw(st.sampled_from(["#/", "#/components/schemas/Nope", "#", "other.yaml#/x",
                                                           "#/paths", "#/components/schemas/Member", "%%%", ""]))}  # fmt: skip
    return dump(data)
