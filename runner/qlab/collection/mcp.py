"""MCP tools → Tools (the ``mcp`` collection source).

Two ways in:

- ``location``: a saved ``tools/list`` result as JSON: ``{"tools": [...]}``, a bare list of tools, or the
  whole JSON-RPC response;
- ``command`` / ``args`` / ``env``: a live server over stdio, read with the official ``mcp`` SDK (the optional
  extra ``qualitylab[mcp]``, imported only here and only then); see ``list_live_tools``.

The mutation class follows the MCP spec's annotation defaults (``mutation_of``): a tool without annotations
is destructive, so execute mode refuses it unless the case allows mutation.

Each tool's ``inputSchema`` properties become ``argument`` parameters; ``outputSchema`` is the ``result``
response. The family is the source's name (the server as qlab.yaml names it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qlab.adapters.scrub import scrub_text
from qlab.collection import documents
from qlab.collection.documents import Document
from qlab.collection.mcp_relay import MARK
from qlab.collection.model import MutationClass, Parameter, Tool
from qlab.collection.refs import Resolver
from qlab.collection.schemas import example_of
from qlab.collection.sources import Snapshot, SourceTools
from qlab.contracts.errors import SpecError
from qlab.project.model import Limits, Source

LIVE_TIMEOUT_SEC = 60.0
RELAY = Path(__file__).with_name("mcp_relay.py")
DEFAULT_LIMITS = Limits()
INSTALL_HINT = "pip install 'qualitylab[mcp]'"


def tools_list(data: Any, *, doc: Document) -> list[Any]:
    """The tools array of a saved ``tools/list`` result in any of the three accepted shapes."""
    if isinstance(data, list):
        return data
    if isinstance(data, Mapping):
        if isinstance(data.get("result"), Mapping):
            if "error" in data:
                raise documents.error(
                    doc, ("error",), "the saved response is a JSON-RPC error, not a tools list"
                )
            data = data["result"]
        if isinstance(data.get("tools"), list):
            return list(data["tools"])
    raise documents.error(
        doc,
        (),
        'expected a tools/list result: {"tools": [...]}, a list of tools, or {"result": {"tools": [...]}}',
    )


def mutation_of(annotations: Mapping[str, Any]) -> tuple[MutationClass, bool]:
    """(mutation class, idempotent) from MCP tool annotations, with the spec's defaults.

    ``readOnlyHint: true`` → read_only; else ``destructiveHint`` (true when absent) → destructive, ``false``
    → mutating. ``idempotentHint`` sets only the flag (an idempotent delete still deletes); read-only tools
    are idempotent.
    """
    if annotations.get("readOnlyHint") is True:
        return MutationClass.READ_ONLY, True
    destructive = annotations.get("destructiveHint", True) is not False
    idempotent = annotations.get("idempotentHint") is True
    return (MutationClass.DESTRUCTIVE if destructive else MutationClass.MUTATING), idempotent


def to_tools(
    items: Sequence[Any], *, source: str, doc: Document, base: tuple[str | int, ...] = ()
) -> list[Tool]:
    """One Tool per MCP tool definition; ``base`` is the JSON path of the list inside ``doc`` (for errors)."""
    tools = []
    for i, item in enumerate(items):
        where = (*base, i)
        if not isinstance(item, Mapping):
            raise documents.error(doc, where, "a tool must be an object")
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise documents.error(doc, (*where, "name"), "a tool needs a non-empty `name`")
        input_schema = item.get("inputSchema", {})
        if not isinstance(input_schema, Mapping):
            raise documents.error(doc, (*where, "inputSchema"), "`inputSchema` must be a JSON Schema object")
        input_schema = _resolved(
            input_schema, doc=doc, where=(*where, "inputSchema"), name=f"{source}/{name}/input"
        )
        output = item.get("outputSchema")
        responses: dict[str, Mapping[str, Any]] = {}
        if isinstance(output, Mapping):
            responses["result"] = _resolved(
                output, doc=doc, where=(*where, "outputSchema"), name=f"{source}/{name}/output"
            )
        annotations: Mapping[str, Any] = (
            item["annotations"] if isinstance(item.get("annotations"), Mapping) else {}
        )
        mutation, idempotent = mutation_of(annotations)
        description = str(item.get("description") or "").strip()
        title = item.get("title") or annotations.get("title")
        summary = str(title).strip() if title else description.split("\n", 1)[0].strip()
        props = input_schema.get("properties") if isinstance(input_schema.get("properties"), Mapping) else {}
        required = {r for r in input_schema.get("required") or () if isinstance(r, str)}
        params, examples = [], {}
        for pname, pschema in props.items():
            pschema = pschema if isinstance(pschema, Mapping) else {}
            params.append(
                Parameter(
                    str(pname),
                    "argument",
                    pname in required,
                    pschema,
                    str(pschema.get("description") or "").strip(),
                )
            )
            found, value = example_of(pschema)
            if found:
                examples[str(pname)] = value
        tools.append(
            Tool(
                id=name.strip(),
                name=name.strip(),
                family=source,
                source=source,
                kind="mcp",
                summary=summary,
                description=description,
                parameters=tuple(params),
                request_body=input_schema,
                responses=responses,
                mutation=mutation,
                examples=examples,
                idempotent=idempotent,
            )
        )
    return tools


def _resolved(schema: Mapping[str, Any], *, doc: Document, where: tuple[str | int, ...], name: str) -> Any:
    """Resolve a tool schema's own ``$ref``s (``#/$defs/…``, as SDK-generated schemas use) when it has any."""
    inner = Document(uri=f"urn:qlab:mcp:{name}", display=doc.display, text="", data=schema, digest=doc.digest)
    try:
        return Resolver(inner, source_name=name).resolve(schema)
    except (
        documents.LocatedSpecError
    ) as exc:  # re-locate: the schema's paths are inside the tool at ``where``
        raise documents.error(doc, (*where, *exc.parts), exc.detail) from None


# --------------------------------------------------------------------------------------------- live server


def list_live_tools(
    command: str,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = LIVE_TIMEOUT_SEC,
    limits: Limits = DEFAULT_LIMITS,
) -> list[dict[str, Any]]:
    """Start ``command args`` over stdio in ``cwd`` (qlab.yaml's folder), read all of ``tools/list``, stop it.

    The server runs behind ``mcp_relay``: one message may hold ``limits.reply_mib``, all of them together
    ``limits.spec_mib`` (a live server's tools list is its spec); more stops it. ``timeout`` bounds the whole
    exchange. Returns the tools as plain JSON (the wire format). Failures are SpecErrors with the server's
    last stderr lines and the SDK's log messages (captured while it runs); a line on stdout that is not a
    protocol message is a SpecError naming the server."""
    try:
        from mcp import ClientSession
        from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
    except ImportError:
        raise SpecError(f"a live MCP source needs the MCP SDK: {INSTALL_HINT}") from None

    executable = command
    if os.sep in command and not os.path.isabs(command):
        executable = str((cwd / command).resolve())
    relayed = [str(RELAY), str(limits.reply_bytes), str(limits.spec_bytes), "--", executable, *args]
    params = StdioServerParameters(
        command=sys.executable, args=relayed, env={**get_default_environment(), **env}, cwd=str(cwd)
    )

    async def session_tools(errlog: Any) -> list[dict[str, Any]]:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            found: list[dict[str, Any]] = []
            cursor: str | None = None
            while True:
                result = await _list_page(session, cursor)
                page = result.model_dump(mode="json", by_alias=True, exclude_none=True)
                found.extend(page.get("tools") or [])
                cursor = page.get("nextCursor")
                if not cursor:
                    return found

    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as errlog, _sdk_log() as said:
        try:
            tools = asyncio.run(asyncio.wait_for(session_tools(errlog), timeout))
        except asyncio.TimeoutError:
            _relay_said(errlog, command, limits)
            raise SpecError(
                f"MCP server `{command}` did not list its tools within {timeout:g}s{_tail(errlog)}{_said(said)}"
            ) from None
        except Exception as exc:  # the SDK raises transport errors, often inside exception groups
            _relay_said(errlog, command, limits)
            raise SpecError(
                f"MCP server `{command}` could not be read: {_leaf(exc)}{_tail(errlog)}{_said(said)}"
            ) from None
    stray = [r for r in said if r.getMessage().startswith("Failed to parse JSONRPC message")]
    if stray:
        line = scrub_text(_input_of(stray[0])[:120], env.values())
        raise SpecError(
            f"MCP server `{command}` wrote a line to stdout that is not a JSON-RPC message: {line!r}; an MCP "
            "stdio server may write only protocol messages to stdout: send its logs to stderr"
        )
    return tools


def _relay_said(errlog: Any, command: str, limits: Limits) -> None:
    """The relay's own word, when it stopped the server or could not start it: a SpecError saying so."""
    errlog.seek(0)
    said = [line[len(MARK) :].strip() for line in errlog.read().splitlines() if line.startswith(MARK)]
    errlog.seek(0, os.SEEK_END)
    if not said:
        return
    if said[0] == "too large: message":
        raise SpecError(
            f"MCP server `{command}` wrote a message larger than {limits.reply_mib:g} MiB (limits.reply_mib); "
            "qlab stopped it"
        )
    if said[0] == "too large: total":
        raise SpecError(
            f"MCP server `{command}` wrote more than {limits.spec_mib:g} MiB in all (limits.spec_mib); qlab "
            "stopped it"
        )
    raise SpecError(f"MCP server `{command}` could not be read: {said[0]}")


class _Records(logging.Handler):
    def __init__(self, into: list[logging.LogRecord]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record)


@contextmanager
def _sdk_log() -> Iterator[list[logging.LogRecord]]:
    """The MCP SDK's warnings and errors, kept instead of printed (no traceback reaches the console)."""
    records: list[logging.LogRecord] = []
    logger = logging.getLogger("mcp")
    handler, propagate = _Records(records), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _input_of(record: logging.LogRecord) -> str:
    """The text the SDK could not parse, from the exception it logged (pydantic keeps it as ``input``)."""
    exc = record.exc_info[1] if record.exc_info else None
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors()
        except Exception:  # an exception whose errors() needs arguments: fall back to its text
            found = []
        if found and isinstance(found[0], dict) and isinstance(found[0].get("input"), str):
            return str(found[0]["input"])
    return str(exc or record.getMessage())


def _said(records: list[logging.LogRecord]) -> str:
    said = list(dict.fromkeys(r.getMessage() for r in records))
    return ("; the MCP SDK said: " + " | ".join(said[-3:])) if said else ""


async def _list_page(session: Any, cursor: str | None) -> Any:
    if cursor is None:
        return await session.list_tools()
    try:
        from mcp import types

        return await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
    except (TypeError, AttributeError):  # SDKs before 1.15 take the cursor directly
        return await session.list_tools(cursor=cursor)


def _leaf(exc: BaseException) -> str:
    """The first real error inside (possibly nested) exception groups."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, (list, tuple)) and inner:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return f"{type(exc).__name__}: {exc}"


def _tail(errlog: Any) -> str:
    errlog.seek(0)
    lines = [line.rstrip() for line in errlog.read().splitlines() if line.strip()]
    return ("; server stderr: " + " | ".join(lines[-5:])) if lines else ""


# --------------------------------------------------------------------------------------------- the source


class MCPSource:
    """The ``mcp`` source kind: a saved tools/list file (``location``) or a live stdio server (``command``)."""

    def snapshot(self, source: Source, *, base_dir: Path) -> Snapshot:
        if source.location:
            policy = documents.ReadPolicy.of(source, base_dir=base_dir)
            uri, display, text, digest = documents.read(source.location, base_dir=base_dir, policy=policy)
            return Snapshot(source=source, digest=digest, payload=(uri, display, text))
        if not source.command:
            raise SpecError(
                f"source {source.name!r}: `mcp` needs a saved tools/list file or a `command` to start"
            )
        try:
            tools = list_live_tools(
                source.command, source.args, env=source.env, cwd=base_dir, limits=source.limits
            )
        except SpecError as exc:
            origin = source.origin
            where = f"{origin.file}:{origin.line}:{origin.col}: " if origin.line > 0 else ""
            raise SpecError(f"{where}source {source.name!r}: {exc}") from None
        # digest the canonical form (key order is the server's business); keep the server's order for the tools
        canonical = json.dumps(tools, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        text = json.dumps({"tools": tools}, ensure_ascii=False, indent=1)
        display = " ".join([source.command, *source.args])
        uri = f"urn:qlab:mcp-live:{source.name}"
        return Snapshot(
            source=source, digest=documents.sha256(canonical.encode("utf-8")), payload=(uri, display, text)
        )

    def tools(self, snapshot: Snapshot) -> SourceTools:
        uri, display, text = snapshot.payload
        data = documents.parse(text, display=display, uri=uri if uri.endswith(".json") else "")
        doc = Document(uri=uri, display=display, text=text, data=data, digest=snapshot.digest)
        items = tools_list(data, doc=doc)
        base: tuple[str | int, ...] = ()
        if isinstance(data, Mapping):
            base = ("result", "tools") if isinstance(data.get("result"), Mapping) else ("tools",)
        tools = to_tools(items, source=snapshot.source.name, doc=doc, base=base)
        live = snapshot.source.location is None
        return SourceTools(
            tools=tuple(tools), info={"transport": "stdio" if live else "file", "tools": len(tools)}
        )


SOURCE = MCPSource()
