from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlab.contracts.errors import ConfigError
from qlab.project.textio import decode_text, read_bytes, read_text


def refusal(raw: bytes) -> str:
    with pytest.raises(ConfigError) as caught:
        decode_text(raw, display="f.yaml")
    (diagnostic,) = caught.value.diagnostics
    return diagnostic.render()


def test_utf8_text_passes_and_a_bom_is_dropped() -> None:
    assert decode_text("a: café\n".encode(), display="f.yaml") == "a: café\n"
    assert decode_text(b"\xef\xbb\xbfa: 1\n", display="f.yaml") == "a: 1\n"


def test_refusals() -> None:
    assert (
        refusal(b"a: 1\nb: \x00\x01")
        == "f.yaml:2:4: file is binary (it contains a NUL byte), not YAML or JSON text"
    )
    assert refusal("a: 1\nb: café\n".encode("latin-1")) == (
        "f.yaml:2:7: file is not UTF-8 text (byte 0xe9 cannot be decoded); save it as UTF-8"
    )
    assert refusal("a: 1\n".encode("utf-16")) == "f.yaml:1:1: file is UTF-16 text; save it as UTF-8"
    assert refusal(b"a: \x1b[31mred\n") == (
        "f.yaml:1:4: control character U+001B is not allowed in a text file; remove it"
    )
    assert refusal(b"") == "f.yaml:1:1: file is empty: expected a YAML or JSON document"
    assert refusal(b" \n\t\n") == "f.yaml:1:1: file is empty: expected a YAML or JSON document"


def test_a_50_mb_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "cases.yaml"
    with big.open("wb") as handle:  # sparse: no 50 MB written to disk
        handle.truncate(50 * 1024 * 1024)
    with pytest.raises(ConfigError) as caught:
        read_bytes(big, display="cases.yaml")
    message = str(caught.value)
    assert message.startswith("cases.yaml:1:1:") and "50.0 MiB" in message and "10.0 MiB limit" in message


def test_missing_and_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^nope.yaml: file not found$"):
        read_bytes(tmp_path / "nope.yaml", display="nope.yaml")
    with pytest.raises(ConfigError, match=r"^dir: is a folder, not a file$"):
        read_bytes(tmp_path, display="dir")


def test_read_text(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(b"a: 1\n")
    assert read_text(path, display="f.yaml") == (b"a: 1\n", "a: 1\n")


def test_a_fifo_is_refused_at_once_instead_of_waited_on(tmp_path: Path) -> None:
    """A FIFO as qlab.yaml made ``qlab validate`` hang for ever (nothing ever writes to it)."""
    fifo = tmp_path / "qlab.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="is not a regular file \\(a FIFO"):
        read_text(fifo, display="qlab.yaml")
