"""Atomic writes: no partial file on failure or interrupt, and the permissions a plain open gives."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from qlab import atomic


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
