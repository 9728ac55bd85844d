"""Shared records helpers: the trace evidence a proposal carries; reading a result artifact."""

from __future__ import annotations

import hashlib
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from governance.builders import artifact, search_case, write
from qlab.engine.types import SearchRow
from qlab.governance import records
from qlab.governance.records import evidence


def test_trace_evidence_is_written_with_its_search_rows_as_json_objects(tmp_path: Path) -> None:
    """The evidence a proposal carries holds the case's rows as the run does (SearchRow); the records file it is
    written to holds them as JSON objects, and a result read back holds SearchRows again."""
    row = SearchRow("trackDelivery", 1, 2.5)
    case = {
        "case_id": "c",
        "search": {"hit": False, "rows": (row,), "top_k": 5},
        "failure": {"stage": "search"},
    }
    found = evidence(case)
    assert found["search"]["rows"] == (row,)
    records.write_json(tmp_path / "evidence.json", found)
    assert json.loads((tmp_path / "evidence.json").read_text())["search"]["rows"] == [row.to_dict()]
    path = write(tmp_path / "result.json", artifact([search_case("c1", top=["trackDelivery"])], run_id="r1"))
    assert records.load_artifact(path).cases[0]["search"]["rows"] == (SearchRow("trackDelivery", 1, 10.0),)


def _artifact_file(tmp_path: Path) -> Path:
    return write(tmp_path / "result.json", artifact([search_case("c1")], run_id="r1"))


def test_an_artifact_is_read_once_and_named_by_the_sha256_of_its_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _artifact_file(tmp_path)
    reads: list[Path] = []
    read_bytes = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self)
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    artifact = records.load_artifact(path)
    assert reads == [path]
    assert artifact.digest == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    assert artifact.run_id == "r1"


def test_no_frame_holds_the_artifacts_bytes_while_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 100,000-case artifact is ~140 MB of bytes: held through the parse, they raised the peak of reading it
    from 1,000 to 1,264 MiB. The bytes read are let go once decoded: no caller of the parse holds them."""
    path = _artifact_file(tmp_path)
    read: list[bytes] = []
    read_bytes = Path.read_bytes

    def kept(self: Path) -> bytes:
        data = read_bytes(self)
        read.append(data)
        return data

    holders: list[str] = []
    loads = json.loads

    def watching(text: str) -> Any:
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None:  # every caller's locals, up the stack
            if any(value is read[0] for value in frame.f_locals.values()):
                holders.append(frame.f_code.co_name)
            frame = frame.f_back
        return loads(text)

    monkeypatch.setattr(Path, "read_bytes", kept)
    monkeypatch.setattr(records.json, "loads", watching)
    records.load_artifact(path)
    assert read and holders == []


def test_a_record_file_is_read_without_a_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a result artifact is named by its digest; a suggestions file (tens of MB in a regressed run) is not
    hashed on every read."""
    path = tmp_path / "suggestions.json"
    path.write_text(json.dumps({"version": 1, "suggestions": []}), encoding="utf-8")

    def refused(data: bytes) -> str:
        raise AssertionError("hashed")

    monkeypatch.setattr(records, "sha256_digest", refused)
    assert records.read_json(path, what="suggestions file") == {"version": 1, "suggestions": []}


def test_a_name_from_a_record_stays_inside_its_folder(tmp_path: Path) -> None:
    from qlab.contracts.errors import InputError
    from qlab.governance.records import inside

    folder = tmp_path / "gates" / "proposals"
    folder.mkdir(parents=True)
    assert inside(folder, "prop-1.json", what="x") == folder / "prop-1.json"
    assert inside(folder, "sub/../prop-2.json", what="x") == folder / "prop-2.json"
    (folder / "link").symlink_to(tmp_path)  # a symbolic link inside that leads out
    for name in ("../x.json", "../../x.json", str(tmp_path / "x.json"), "link/x.json", "", "."):
        with pytest.raises(InputError) as refused:
            inside(folder, name, what="suggestion sg-1: $.proposal.id")
        assert refused.value.exit_code == 2 and "suggestion sg-1: $.proposal.id" in str(refused.value)
        assert repr(name) in str(refused.value)
