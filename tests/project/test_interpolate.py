from __future__ import annotations

import pytest

from qlab.project.interpolate import InterpolationError, expand, interpolate
from qlab.project.yamlio import parse_yaml

ENV = {"PORT": "9000", "EMPTY": "", "HOST": "127.0.0.1"}


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("http://${HOST}:${PORT}", "http://127.0.0.1:9000"),
        ("${MISSING:-8765}", "8765"),
        ("${EMPTY:-fallback}", "fallback"),  # :- also covers set-but-empty
        ("${PORT:-1}", "9000"),
        ("${MISSING:-${PORT}}", "9000"),  # a default may itself interpolate
        ("${MISSING:-}", ""),
        ("$${captures.orderId}", "${captures.orderId}"),  # $${ is a literal ${
        ("cost $5 and $HOME", "cost $5 and $HOME"),  # only ${...} is special
        ("no dollars", "no dollars"),
    ],
)
def test_expand(text: str, result: str) -> None:
    assert expand(text, ENV) == result


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("${MISSING}", "${MISSING} is not set and has no default: set MISSING or write ${MISSING:-default}"),
        ("${bad name}", "'${bad name}': 'bad name' is not a variable name (letters, digits and _); write ${VAR} or ${VAR:-default}"),
        ("x ${OPEN", "'${' at character 3 has no closing '}' (write $${ for a literal ${)"),
        ("${}", "'${}': '' is not a variable name (letters, digits and _); write ${VAR} or ${VAR:-default}"),
    ],
)  # fmt: skip
def test_expand_errors(text: str, message: str) -> None:
    with pytest.raises(InterpolationError) as caught:
        expand(text, ENV)
    assert str(caught.value) == message


def test_lenient_expansion_keeps_what_it_cannot_resolve() -> None:
    assert (
        expand("${MISSING} ${PORT} ${bad name} ${OPEN", ENV, strict=False)
        == "${MISSING} 9000 ${bad name} ${OPEN"
    )


def test_interpolate_a_document_locates_errors_and_leaves_keys_alone() -> None:
    doc = parse_yaml("${KEY}: ${PORT}\nlist: [a, '${NOPE}']\nnum: 3\n", "qlab.yaml")
    data, errors = interpolate(doc, ENV)
    assert data == {"${KEY}": "9000", "list": ["a", "${NOPE}"], "num": 3}
    assert [e.render() for e in errors] == [
        "qlab.yaml:2:11: $.list[1]: ${NOPE} is not set and has no default: set NOPE or write ${NOPE:-default}"
    ]
    assert doc.data["${KEY}"] == "${PORT}"  # the parsed document is not changed


def test_nested_defaults_are_bounded_with_a_located_error() -> None:
    """3,000 nested defaults ended in a RecursionError (exit 3): now a located error past MAX_NESTING levels."""
    deep = "".join(f"${{A{i}:-" for i in range(3000)) + "x" + "}" * 3000
    data, found = interpolate(parse_yaml(f"project: '{deep}'\n", "q.yaml"), {})
    (error,) = found
    assert error.render().startswith("q.yaml:1:10: $.project: '${A20:-…}' nests defaults more than 20 levels")
    assert data["project"] == deep  # left as written
    twenty = "".join(f"${{A{i}:-" for i in range(20)) + "ok" + "}" * 20
    assert expand(twenty, {}) == "ok"
    assert expand(deep, {}, strict=False).startswith("${A20:-")  # the lenient digest pass stops there too
