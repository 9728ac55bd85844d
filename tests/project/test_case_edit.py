"""Setting one key of one case in its file: in place, comments and the other cases kept, every format."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlab.contracts.errors import InputError
from qlab.project.case_edit import set_case_field
from qlab.project.files import display_path, read_document
from qlab.project.model import Case, Origin

FILES = {
    "block.yaml": "# the team's note\n- id: a1\n  query: q one  # keep me\n- query: q two\n  id: a2\n  status: draft  # old\n",
    "flow.yaml": "- {id: b1, query: q}\n- {id: 'b2', query: q, status: draft}\n",
    "list.json": '[\n  {"id": "c1", "query": "q"},\n  {"id": "c2", "status": "draft", "query": "q"}\n]\n',
    "lines.jsonl": '{"id": "d1", "query": "q"}\n{"id": "d2", "query": "q", "status": "draft"}\n',
    "one.yaml": "id: e1\nquery: q\n",
}


def _case(case_id: str, file: str) -> Case:
    return Case(case_id, "search", "q", "s", file, Origin(file))


IDS = {"block.yaml": ["a1", "a2"], "flow.yaml": ["b1", "b2"], "list.json": ["c1", "c2"],
       "lines.jsonl": ["d1", "d2"], "one.yaml": ["e1"]}  # fmt: skip


def _cases(path: Path) -> list[dict[str, object]]:
    data = read_document(path, display=display_path(path))[1].data
    return data if isinstance(data, list) else [data]


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_case_of_each_format_gets_its_status(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(FILES[name], encoding="utf-8")
    before = _cases(path)
    for case_id in IDS[name]:
        path.write_text(
            set_case_field(path, _case(case_id, name), "status", "active", comment="by a"), encoding="utf-8"
        )
    after = _cases(path)
    assert [c["status"] for c in after] == ["active"] * len(after)
    strip = [{k: v for k, v in c.items() if k != "status"} for c in after]
    assert strip == [{k: v for k, v in c.items() if k != "status"} for c in before]  # nothing else changed


def test_comments_and_layout_stay(tmp_path: Path) -> None:
    path = tmp_path / "block.yaml"
    path.write_text(FILES["block.yaml"], encoding="utf-8")
    text = set_case_field(path, _case("a2", "block.yaml"), "status", "archived", comment="by bob at noon")
    assert text == (
        "# the team's note\n- id: a1\n  query: q one  # keep me\n- query: q two\n  id: a2\n"
        "  status: archived  # by bob at noon\n"
    )
    text = set_case_field(path, _case("a1", "block.yaml"), "status", "draft", comment="x")
    assert text.startswith("# the team's note\n- id: a1\n  status: draft  # x\n  query: q one  # keep me\n")


def test_a_case_that_is_not_in_its_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(FILES["one.yaml"], encoding="utf-8")
    with pytest.raises(InputError, match="case 'zz' was not found in the file"):
        set_case_field(path, _case("zz", "one.yaml"), "status", "active")
