"""Read a config or case file as text, refusing what is not a small UTF-8 text file.

Every refusal is a located :class:`~qlab.contracts.errors.ConfigError` (``file:line:col: message``) saying what to do,
so a file over ``DEFAULT_MAX_BYTES``, a binary file, a Latin-1 file or an empty file never reaches a parser.
"""

from __future__ import annotations

import codecs
import re
import stat
from pathlib import Path

from qlab.contracts.errors import ConfigError, Diagnostic

# config and case files are hand-written: this is far above any real one
DEFAULT_MAX_BYTES = 10 * 1024 * 1024

# C0 controls other than tab, line feed and carriage return, and DEL: never part of YAML or JSON text
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
         (codecs.BOM_UTF16_BE, "UTF-16"))  # fmt: skip


def _fail(display: str, line: int, col: int, message: str) -> ConfigError:
    return ConfigError([Diagnostic(display, line, col, "", message)])


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def read_bytes(path: Path, *, display: str, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The file's bytes, or a ConfigError when it is missing, unreadable, a folder, not a regular file (a FIFO,
    a socket, a device: reading one could wait forever) or larger than ``max_bytes``."""
    try:
        info = path.stat()
        size = info.st_size
        if stat.S_ISDIR(info.st_mode):
            raise _fail(display, 0, 0, "is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise _fail(
                display, 0, 0, "is not a regular file (a FIFO, a socket or a device): qlab reads plain files"
            )
        if size > max_bytes:
            raise _fail(
                display,
                1,
                1,
                f"file is {_mib(size)}, over the {_mib(max_bytes)} limit for config and case files; "
                "split it into several files (a suite's cases take globs)",
            )
        return path.read_bytes()
    except FileNotFoundError:
        raise _fail(display, 0, 0, "file not found") from None
    except PermissionError:
        raise _fail(display, 0, 0, "permission denied: qlab cannot read this file") from None
    except OSError as exc:
        raise _fail(display, 0, 0, f"cannot read the file: {exc.strerror or exc}") from None


def _line_col(raw: bytes, offset: int) -> tuple[int, int]:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    col = len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1
    return raw.count(b"\n", 0, offset) + 1, col


def decode_text(raw: bytes, *, display: str) -> str:
    """Decode UTF-8 (a UTF-8 BOM is dropped). Binary, non-UTF-8, control characters and empty files are refused."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            raise _fail(display, 1, 1, f"file is {name} text; save it as UTF-8")
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, col = _line_col(raw, nul)
        raise _fail(display, line, col, "file is binary (it contains a NUL byte), not YAML or JSON text")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw, exc.start)
        byte = raw[exc.start]
        raise _fail(
            display,
            line,
            col,
            f"file is not UTF-8 text (byte 0x{byte:02x} cannot be decoded); save it as UTF-8",
        ) from None
    bad = _CONTROL.search(text)
    if bad is not None:
        offset = bad.start()
        line = text.count("\n", 0, offset) + 1
        col = offset - (text.rfind("\n", 0, offset) + 1) + 1
        raise _fail(
            display,
            line,
            col,
            f"control character U+{ord(bad.group()):04X} is not allowed in a text file; remove it",
        )
    if not text.strip():
        raise _fail(display, 1, 1, "file is empty: expected a YAML or JSON document")
    return text


def read_text(path: Path, *, display: str, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, str]:
    """``(raw bytes, text)`` of a config or case file; see :func:`read_bytes` and :func:`decode_text`."""
    raw = read_bytes(path, display=display, max_bytes=max_bytes)
    return raw, decode_text(raw, display=display)
