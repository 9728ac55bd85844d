"""Per-case results, kept stage by stage (the result shape).

A CaseResult is filled in as the case moves through the stages: each stage writes only its own object
(``search``, ``target_selector``, ``plan``, ``execute``, ``auth_readiness``, ``learning``) and its latency, and
the first stage that fails writes ``failure = {stage, reason}``. Later stages skip a case that already failed.
The run-level artifact (fingerprint, metrics, gates, decision) is assembled by ``qlab.run.artifact``.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal

CaseStatus = Literal["passed", "failed", "error", "blocked", "skipped"]


class EncodedJSON(str):
    """A value of a stage object kept as its compact JSON text until the artifact is written.

    The search stage keeps each case's Top-K rows as JSON text: ~160 bytes of text per row instead of ~700 bytes
    of dicts and floats (a hit's text is then packed: ``PackedJSON``). ``qlab.run.artifact`` splices the text into
    the case's line unchanged; a reader that needs the value calls ``decoded`` (or ``plain`` for a whole object).
    """

    __slots__ = ()

    @classmethod
    def of(cls, value: Any) -> EncodedJSON:
        return cls(_COMPACT.encode(value))


class CheckedJSON(EncodedJSON):
    """An EncodedJSON member of a stage object that fits the result schema where it sits, as its stage made
    sure before encoding it: written from values of a shape that fits (``qlab.stages.search_rows``) or checked
    with the whole object (``qlab.stages.engine_calls``). The in-run ``output_schema`` check
    (``qlab.run.boundary``) checks the rest of the object and does not decode the member again."""

    __slots__ = ()


_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


class PackedJSON:
    """A CheckedJSON text kept zlib-packed in its run's ``JSONPack`` until a writer asks for it (``text``).

    The search stage keeps a hit's Top-K rows this way once the run holds 16 MiB of them as text: ~1 KB of text
    per case (5 rows) packs to ~170 bytes in blocks of ~64 KiB, so a 100,000-case run holds ~16 + 14 MiB of rows,
    not ~100 MB of strings. Like CheckedJSON it fits the result schema where it sits. Readers take the text with
    ``json_text`` (any kept JSON text) and the value with ``decoded``. ``top_tool``: the first row's tool id, kept
    beside the text for the artifact's ``actual_output.top_1`` (read for every case without unpacking anything)."""

    __slots__ = ("_block", "_end", "_pack", "_start", "top_tool")

    def __init__(self, pack: JSONPack, block: int, start: int, end: int, top_tool: str | None) -> None:
        self._pack, self._block, self._start, self._end = pack, block, start, end
        self.top_tool = top_tool

    def text(self) -> str:
        return self._pack.read(self._block, self._start, self._end)

    def __repr__(self) -> str:
        return f"PackedJSON({self.text()!r})"


class JSONPack:
    """Where a run's PackedJSON texts live, once it holds ``plain_limit`` bytes of them as they are: below that a
    text is kept as it is (packing costs 5 to 9 µs a text, which a run of fewer than ~15,000 cases does not need to
    pay), beyond it each text is packed, so a large run holds at most that much of them as text.

    Packed texts are appended to an open block, which is compressed (zlib level 1: ~6x on search rows) once the
    next text would take it past ``block_size``. A full block is compressed by a thread of the pack's own (zlib
    lets go of the GIL), so the stage that adds texts does not wait for it. Reading decompresses a block once and
    keeps the last ``keep`` blocks read: writers read in case order, which is the order the texts were added in
    runs of cases (one per gate, lane or file), a few runs interleaved at most. Safe for the stage's threads."""

    def __init__(
        self, block_size: int = 64 * 1024, keep: int = 8, plain_limit: int = 16 * 1024 * 1024
    ) -> None:
        self._block_size = block_size
        self._keep = keep
        self._plain_left = plain_limit
        self._blocks: list[Future[bytes]] = []
        self._open = bytearray()
        self._read: dict[int, bytes] = {}  # block -> its bytes, the most recently read last
        self._lock = threading.Lock()
        self._compressor: ThreadPoolExecutor | None = None

    def add(self, text: CheckedJSON, *, top_tool: str | None = None) -> CheckedJSON | PackedJSON:
        """``text`` kept: as it is while the pack holds less than ``plain_limit`` bytes of text, else packed."""
        if self._plain_left > 0:
            # unlocked: threads racing here move the bound by a text at most (a bound, not a count)
            self._plain_left -= len(text)
            return text
        data = text.encode("utf-8")
        with self._lock:
            if self._open and len(self._open) + len(data) > self._block_size:
                if self._compressor is None:
                    self._compressor = ThreadPoolExecutor(1, thread_name_prefix="qlab-pack")
                self._blocks.append(self._compressor.submit(zlib.compress, self._open, 1))
                self._open = bytearray()
            start = len(self._open)
            self._open += data
            return PackedJSON(self, len(self._blocks), start, start + len(data), top_tool)

    def read(self, block: int, start: int, end: int) -> str:
        with self._lock:
            if block == len(self._blocks):
                return self._open[start:end].decode("utf-8")
            data = self._read.pop(block, None)
            if data is None:
                data = zlib.decompress(self._blocks[block].result())
                if len(self._read) >= self._keep:
                    del self._read[next(iter(self._read))]
            self._read[block] = data
            return data[start:end].decode("utf-8")


def is_json_text(value: Any) -> bool:
    """Whether ``value`` is JSON kept as text (EncodedJSON, PackedJSON), without unpacking it."""
    return isinstance(value, EncodedJSON) or type(value) is PackedJSON


def json_text(value: Any) -> str | None:
    """The JSON text of a value kept as text (EncodedJSON, PackedJSON); None for any other value."""
    if isinstance(value, EncodedJSON):
        return value
    if type(value) is PackedJSON:
        return value.text()
    return None


def as_text(value: Any) -> str:
    """``json.dumps``' ``default`` for data that may hold JSON kept as text: a PackedJSON is written as its text
    (a string, as an EncodedJSON is), any other object as ``str`` does."""
    text = json_text(value)
    return str(value) if text is None else text


def checked(value: Any) -> bool:
    """Whether ``value`` is JSON text its stage made sure fits the result schema (CheckedJSON, PackedJSON)."""
    return isinstance(value, CheckedJSON) or type(value) is PackedJSON


def decoded(value: Any) -> Any:
    """``value``, with JSON kept as text (EncodedJSON, PackedJSON) turned back into the value it encodes."""
    text = json_text(value)
    return value if text is None else json.loads(text)


def plain(obj: Any) -> Any:
    """A stage object with its members kept as JSON text decoded (a shallow copy when there are any)."""
    if isinstance(obj, Mapping) and any(is_json_text(v) for v in obj.values()):
        return {k: decoded(v) for k, v in obj.items()}
    return obj


@dataclass(slots=True)
class Failure:
    """A stable failure reason and the stage it happened in. ``reason`` is a code from ``qlab.reasons``."""

    stage: str
    reason: str
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "reason": self.reason, "message": self.message}


@dataclass(slots=True)
class AssertionResult:
    type: str
    passed: bool
    message: str = ""  # on failure: expected, actual and the JSONPath
    expected: Any = None
    actual: Any = None
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "passed": self.passed}
        if self.message:
            out["message"] = self.message
        for key in ("expected", "actual", "path"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(slots=True)
class CaseResult:
    case_id: str
    suite: str
    mode: str
    status: CaseStatus = "passed"
    latency_ms: dict[str, float] = field(
        default_factory=dict
    )  # stage -> ms (search, target_selection, plan, execute)
    search: dict[str, Any] | None = None
    target_selector: dict[str, Any] | None = None
    plan: dict[str, Any] | None = None
    execute: dict[str, Any] | None = None
    auth_readiness: dict[str, Any] | None = None
    learning: dict[str, Any] | None = None
    # a new list when a stage adds to it: a case without assertions shares the empty tuple (100,000 search
    # cases: ~5 MiB of empty lists)
    assertions: Sequence[AssertionResult] = ()
    failure: Failure | None = None
    attempts: int = 1
    passes: int = 1
    flaky: bool = False
    critical: bool = False
    file: str = ""
    line: int = 0
    # execute cases: the case's mutation_safety (read_only | allow_mutation); "execute read success rate" counts
    # the read_only ones. Empty for search and plan cases.
    mutation_safety: str = ""
    # the case's lifecycle when it is not active: "draft" (runs and is reported, never gates)
    lifecycle: str = ""
    name: str = ""  # the case's name (EvalCase.name), when its file gives one

    def fail(self, stage: str, reason: str, message: str = "", *, status: CaseStatus = "failed") -> None:
        """Record the first failure; later calls keep the first one (the stage that broke it)."""
        if self.failure is None:
            self.failure = Failure(stage, reason, message)
            self.status = status

    @property
    def done(self) -> bool:
        """True once the case failed, errored or was blocked: later stages leave it alone."""
        return self.status in ("failed", "error", "blocked", "skipped")

    def to_dict(self) -> dict[str, Any]:
        latency = self.latency_ms
        for value in latency.values():
            if round(value, 3) != value:
                latency = {k: round(v, 3) for k, v in latency.items()}
                break
        out: dict[str, Any] = {
            "case_id": self.case_id,
            "suite": self.suite,
            "mode": self.mode,
            "status": self.status,
            # the result's own dict when its values are already as written (the stages round what they record):
            # one dict a case, not two, while a large run's artifact is held (~20 MiB at 100,000 cases)
            "latency_ms": latency,
        }
        # the stage objects in stage order, spelled out: this runs several times per case of a run (metrics, gates,
        # the artifact), and a loop over getattr costs twice as much
        if self.search is not None:
            out["search"] = self.search
        if self.target_selector is not None:
            out["target_selector"] = self.target_selector
        if self.plan is not None:
            out["plan"] = self.plan
        if self.execute is not None:
            out["execute"] = self.execute
        if self.auth_readiness is not None:
            out["auth_readiness"] = self.auth_readiness
        if self.learning is not None:
            out["learning"] = self.learning
        if self.assertions:
            out["assertions"] = [a.to_dict() for a in self.assertions]
        if self.failure is not None:
            out["failure"] = self.failure.to_dict()
        if self.attempts != 1:
            out["attempts"] = self.attempts
            out["passes"] = self.passes
        if self.flaky:
            out["flaky"] = True
        if self.critical:
            out["critical"] = True
        if self.file:
            out["file"] = self.file
            out["line"] = self.line
        if self.mutation_safety:
            out["mutation_safety"] = self.mutation_safety
        if self.lifecycle:
            out["lifecycle"] = self.lifecycle
        if self.name:
            out["name"] = self.name
        return out
