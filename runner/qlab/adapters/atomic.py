"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

The text goes to a temp file in the target's folder, is flushed and fsynced, then renamed over the target;
the temp file is removed on any failure. ``tempfile.mkstemp`` creates files readable by their owner only: the
file is given the permissions a plain ``open`` would (0666 less the umask), so a report served by a web server
or read by another CI user is readable.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0o022)  # pragma: no mutate (put back on the next line: the value set is never used)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()  # what a plain open() gives a new file


def write_atomic(path: str | Path, text: str | Iterable[str]) -> Path:
    """Write ``text`` (a string, or pieces of one) to ``path`` atomically, creating parent folders."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with contextlib.suppress(OSError):  # a file system without modes (some mounts) keeps its own
            os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            if isinstance(text, str):
                handle.write(text)
            else:
                handle.writelines(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the platform allows it
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return target


__all__ = ["FILE_MODE", "write_atomic"]
