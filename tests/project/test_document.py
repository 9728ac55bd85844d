from __future__ import annotations

from qlab.project.document import Document, format_path


def test_format_path() -> None:
    assert format_path(()) == "$"
    assert format_path(("suites", "search_core", "cases", 0)) == "$.suites.search_core.cases[0]"
    assert format_path(("release", "member-delivery-skill")) == "$.release['member-delivery-skill']"
    assert format_path(("headers", "it's")) == "$.headers['it\\'s']"
    assert format_path((3, "$schema")) == "$[3].$schema"


def test_locate_and_diagnostic() -> None:
    doc = Document("f.yaml", {"a": {"b": 1}}, values={(): (1, 1), ("a",): (2, 3), ("a", "b"): (2, 6)},
                   keys={("a",): (1, 1), ("a", "b"): (2, 3)})  # fmt: skip
    assert doc.locate(("a", "b")) == (2, 6)
    assert doc.locate(("a", "b"), prefer_key=True) == (2, 3)
    assert doc.locate(("a", "zz", 3)) == (2, 3)
    assert doc.locate(("nothing",)) == (1, 1)
    warning = doc.diagnostic(("a", "b"), "careful", severity="warning")
    assert warning.render() == "f.yaml:2:6: $.a.b: warning: careful"
