"""Atomic writes: no partial file on failure or interrupt, and the permissions a plain open gives."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from qlab.adapters import atomic


def test_atomic_write_replaces_whole(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "result.json"
    atomic.write_atomic(target, "old\n")
    atomic.write_atomic(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert [p.name for p in target.parent.iterdir()] == ["result.json"]


def test_no_partial_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "result.json"
    atomic.write_atomic(target, "complete\n")

    def boom(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        atomic.write_atomic(target, "x" * 10_000)
    assert target.read_text(encoding="utf-8") == "complete\n"  # the old file, whole
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]  # the temp file is gone


def test_interrupt_mid_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_atomic(tmp_path / "result.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_the_file_gets_the_umask_permissions_not_mkstemps_0600(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    target = atomic.write_atomic(tmp_path / "result.json", ["{", "}"])
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask and target.read_text() == "{}"


def test_missing_folders_are_created_at_any_depth(tmp_path: Path) -> None:
    target = atomic.write_atomic(tmp_path / "a" / "b" / "c" / "result.json", "x")
    assert target.read_text(encoding="utf-8") == "x"


def test_the_temp_file_is_a_hidden_tmp_beside_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rule: a killed write leaves ``.<name>.<random>.tmp`` in the target's folder — the pattern the next run's
    clean-up removes (``qlab.run.outputs.remove_stale``) — never a file a reader could take for the output."""
    seen: list[str] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        seen.append(src)
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    atomic.write_atomic(tmp_path / "result.json", "x")
    name = Path(seen[0]).name
    assert Path(seen[0]).parent == tmp_path and name.startswith(".result.json.") and name.endswith(".tmp")


def test_text_is_utf8_with_unix_newlines(tmp_path: Path) -> None:
    target = atomic.write_atomic(tmp_path / "summary.md", ["é 日本\n", "line\r\n"])
    assert target.read_bytes() == "é 日本\nline\r\n".encode()


def test_a_file_system_without_modes_or_directory_fsync_still_gets_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_modes(fd: int, mode: int) -> None:
        raise OSError("operation not permitted")

    real_open = os.open

    def no_directory_open(path: str, flags: int, *args: int) -> int:
        if Path(path).is_dir():
            raise OSError("is a directory")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "fchmod", no_modes)
    monkeypatch.setattr(os, "open", no_directory_open)
    assert atomic.write_atomic(tmp_path / "r.json", "ok").read_text(encoding="utf-8") == "ok"


def test_the_write_error_is_raised_even_when_the_temp_file_cannot_be_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(fd: int) -> None:
        raise OSError("disk full")

    def busy(path: str) -> None:
        raise OSError("busy")

    monkeypatch.setattr(os, "fsync", full)
    monkeypatch.setattr(os, "unlink", busy)
    with pytest.raises(OSError, match="disk full"):
        atomic.write_atomic(tmp_path / "r.json", "x")


def test_umask_is_read_without_changing_it() -> None:
    before = os.umask(0o027)
    try:
        assert atomic._umask() == 0o027
        assert os.umask(0o027) == 0o027  # still what it was
    finally:
        os.umask(before)


def test_the_text_is_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """Rule: outputs are UTF-8 even where the locale's encoding is ASCII (a CI box with ``LANG=C`` and Python's
    UTF-8 mode off): the encoding is never left to the platform."""
    import subprocess
    import sys

    here = atomic.write_atomic(tmp_path / "here.md", ["é 日本\n"])
    target = tmp_path / "summary.md"
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    code = r"import sys; from qlab.adapters import atomic; atomic.write_atomic(sys.argv[1], ['\u00e9 \u65e5\u672c\n'])"
    done = subprocess.run([sys.executable, "-c", code, str(target)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == here.read_bytes() == "é 日本\n".encode()  # the same bytes as here
