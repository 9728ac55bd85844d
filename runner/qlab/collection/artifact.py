"""The collection artifact: canonical JSON (``schemas/collection.schema.json``), its digest, and back.

Canonical: keys sorted, no whitespace, UTF-8, tools in source order (qlab.yaml order, then each source's own),
contracts sorted, locations as written in qlab.yaml. The same sources give the same bytes on every machine.

``digest`` is ``sha256:<hex>`` of the canonical JSON of every top-level member but ``digest``; it becomes
``Collection.digest`` and part of the run fingerprint.

A schema or parameter that came from a ``$ref`` (``refs.NamedSchema``, ``refs.NamedParameter``) is stored
once, under ``schemas.<name>`` or ``parameters.<name>``; a tool that uses it holds
``{"$ref": "#/schemas/<name>"}`` (a pointer into the artifact), with any overriding keys beside it.
``from_json`` shares them again, so a loaded collection equals a built one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from qlab.adapters.atomic import write_atomic
from qlab.collection.model import Collection, IOContract, MutationClass, Parameter, Tool
from qlab.collection.refs import MergedSchema, NamedParameter, NamedSchema
from qlab.contracts.errors import InputError

FORMAT = 1
SCHEMA_ID = "https://qlab.dev/schemas/collection.schema.json"
_REF_PREFIX = "#/schemas/"
_PARAM_PREFIX = "#/parameters/"


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(members: Mapping[str, str]) -> str:
    """sha256 of ``{"k":v,...}`` over every member but ``digest``, hashed piece by piece (never joined)."""
    digest = hashlib.sha256(b"{")
    for i, key in enumerate(k for k in sorted(members) if k != "digest"):
        digest.update(f"{',' if i else ''}{json.dumps(key)}:".encode())
        digest.update(members[key].encode("utf-8"))
    digest.update(b"}")
    return "sha256:" + digest.hexdigest()


def _join(members: Mapping[str, str]) -> str:
    return "{" + ",".join(f"{json.dumps(k)}:{members[k]}" for k in sorted(members)) + "}"


# ------------------------------------------------------------------------------------------ encode


class _Encoder:
    """Tools → JSON-ready dicts, with each NamedSchema stored once in ``table``."""

    def __init__(self) -> None:
        self.table: dict[str, Any] = {}
        self.params: dict[str, Parameter] = {}  # NamedParameter.ref -> the parameter stored
        self.param_table: dict[str, Any] = {}
        self._names: dict[int, str] = {}  # id(NamedSchema) -> table key
        self._keep: list[Any] = []

    def value(self, node: Any) -> Any:
        # explicit loops, not comprehensions: one Python frame per nesting level keeps deep schemas in reach
        kind = type(node)
        if kind is str or kind is int or kind is bool or kind is float or node is None:
            return node
        if kind is dict:  # the common case first: plain schema nodes, keys already strings
            out: dict[str, Any] = {}
            for key, child in node.items():
                out[key] = self.value(child)
            return out
        if kind is list or kind is tuple:
            items = []
            for child in node:
                items.append(self.value(child))
            return items
        if kind is NamedSchema:
            return {"$ref": _REF_PREFIX + self._name(node)}
        if kind is MergedSchema:  # the shared target once, plus what its $ref's siblings override
            merged = self.value(dict(node.overrides))
            merged["$ref"] = _REF_PREFIX + self._name(node.base)
            return merged
        if isinstance(node, Mapping):
            return self.value({str(k): v for k, v in node.items()})
        return node

    def _name(self, node: NamedSchema) -> str:
        known = self._names.get(id(node))
        if known is not None:
            return known
        key, n = node.ref, 2
        while key in self.table:  # two different nodes under one name (not made by one build; be safe)
            key, n = f"{node.ref}~{n}", n + 1
        self._names[id(node)] = key
        self._keep.append(node)
        self.table[key] = None  # reserve the name before encoding children
        self.table[key] = {str(k): self.value(v) for k, v in node.items()}
        return key

    def parameter(self, param: Parameter) -> dict[str, Any]:
        """A parameter object, or a reference to the shared one for a NamedParameter (stored once)."""
        if isinstance(param, NamedParameter) and param.ref:
            key, n = param.ref, 2
            while key in self.params and self.params[key] is not param and self.params[key] != param:
                key, n = f"{param.ref}~{n}", n + 1  # a different parameter under the same name: keep both
            if key not in self.params:
                self.params[key] = param
                self.param_table[key] = self._parameter(param)
            return {"$ref": _PARAM_PREFIX + key}
        return self._parameter(param)

    def _parameter(self, param: Parameter) -> dict[str, Any]:
        return {
            "name": param.name,
            "location": param.location,
            "required": param.required,
            "schema": self.value(param.schema),
            "description": param.description,
        }

    def tool(self, tool: Tool) -> dict[str, Any]:
        return {
            "id": tool.id,
            "name": tool.name,
            "family": tool.family,
            "source": tool.source,
            "kind": tool.kind,
            "summary": tool.summary,
            "description": tool.description,
            "method": tool.method,
            "path": tool.path,
            "parameters": [self.parameter(p) for p in tool.parameters],
            "request_body": None if tool.request_body is None else self.value(tool.request_body),
            "request_content_type": tool.request_content_type,
            "responses": {str(s): self.value(v) for s, v in tool.responses.items()},
            "response_media": {str(s): list(m) for s, m in tool.response_media.items()},
            "security": [{k: list(v) for k, v in req.items()} for req in tool.security],
            "mutation": tool.mutation.value,
            "idempotent": tool.idempotent,
            "aliases": list(tool.aliases),
            "tags": list(tool.tags),
            "examples": self.value(tool.examples),
        }


def _contract(c: IOContract) -> dict[str, Any]:
    return {
        "producer": c.producer,
        "field_path": c.field_path,
        "consumer": c.consumer,
        "parameter": c.parameter,
        "match": c.match,
        "score": c.score,
    }


def _members(
    tools: tuple[Tool, ...],
    contracts: tuple[IOContract, ...],
    sources: tuple[Mapping[str, Any], ...],
    vocabulary: Mapping[str, Any],
) -> dict[str, str]:
    encoder = _Encoder()
    encoded_tools = [encoder.tool(t) for t in tools]
    # the project's search vocabulary (aliases file), only when it has one: other artifacts keep their digest
    extra = {"vocabulary": canonical(dict(vocabulary))} if vocabulary else {}
    return {
        "$schema": json.dumps(SCHEMA_ID),
        "format": str(FORMAT),
        "sources": canonical([dict(s) for s in sources]),
        "tools": canonical(encoded_tools),
        "contracts": canonical([_contract(c) for c in contracts]),
        "schemas": canonical(encoder.table),
        "parameters": canonical(encoder.param_table),
        **extra,
    }


def finalize(
    tools: tuple[Tool, ...],
    contracts: tuple[IOContract, ...],
    sources: tuple[Mapping[str, Any], ...],
    vocabulary: Mapping[str, Any] | None = None,
) -> tuple[Collection, str]:
    """The Collection with its digest, and its canonical artifact text (serialized once)."""
    vocabulary = dict(vocabulary or {})
    members = _members(tools, contracts, sources, vocabulary)
    digest = _digest(members)
    members["digest"] = json.dumps(digest)
    collection = Collection(
        tools=tools, contracts=contracts, digest=digest, sources=sources, vocabulary=vocabulary
    )
    return collection, _join(members)


def to_json(collection: Collection) -> str:
    """The canonical artifact text of ``collection`` (its digest recomputed from its content)."""
    return finalize(collection.tools, collection.contracts, collection.sources, collection.vocabulary)[1]


def write(text: str, path: Path) -> Path:
    """Write an artifact text atomically (a reader never sees half a file); returns ``path``."""
    return write_atomic(path, (text, "\n"))


def copy(source: Path, target: Path) -> Path:
    """Copy a stored artifact atomically; returns ``target``."""
    return write(source.read_text(encoding="utf-8").rstrip("\n"), target)


# ------------------------------------------------------------------------------------------ decode


def from_json(text: str | bytes, *, verify: bool = True, origin: str = "collection artifact") -> Collection:
    """A Collection from artifact text. With ``verify``, a digest that does not match the content is an
    InputError (the file was edited or truncated)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{origin}:{exc.lineno}:{exc.colno}: not a collection artifact: {exc.msg}") from None
    except RecursionError:
        raise InputError(f"{origin}: nested too deeply to be a collection artifact; rebuild it") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("tools"), list):
        raise InputError(
            f"{origin}: not a qlab collection artifact of format {FORMAT}; rebuild it with `qlab build`"
        )
    try:
        collection = _decode(data)
        expected = to_json(collection) if verify else ""
    except RecursionError:
        raise InputError(f"{origin}: nested too deeply to be a collection artifact; rebuild it") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(
            f"{origin}: malformed collection artifact ({type(exc).__name__}: {exc}); rebuild it"
        ) from None
    if verify and json.loads(expected)["digest"] != data.get("digest"):
        raise InputError(f"{origin}: digest does not match the content (edited or truncated?); rebuild it")
    return collection


def _decode(data: Mapping[str, Any]) -> Collection:
    table: Mapping[str, Any] = data.get("schemas") or {}
    built: dict[str, NamedSchema] = {}

    def value(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
                key = ref[len(_REF_PREFIX) :]
                hit = built.get(key)
                if hit is None:
                    hit = NamedSchema(key, value(table[key]))
                    built[key] = hit
                if len(node) == 1:
                    return hit
                return MergedSchema(hit, value({k: v for k, v in node.items() if k != "$ref"}))
            out: dict[str, Any] = {}
            for key_, child in node.items():  # a loop, not a comprehension: one frame per level
                out[key_] = value(child)
            return out
        if isinstance(node, list):
            items = []
            for child in node:
                items.append(value(child))
            return items
        return node

    param_table: Mapping[str, Any] = data.get("parameters") or {}
    params: dict[str, NamedParameter] = {}

    def parameter(node: Mapping[str, Any]) -> Parameter:
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PARAM_PREFIX):
            key = ref[len(_PARAM_PREFIX) :]
            hit = params.get(key)
            if hit is None:
                p = param_table[key]
                hit = NamedParameter(
                    p["name"], p["location"], p["required"], value(p["schema"]), p["description"], ref=key
                )
                params[key] = hit
            return hit
        return Parameter(
            node["name"], node["location"], node["required"], value(node["schema"]), node["description"]
        )

    tools = tuple(
        Tool(
            id=t["id"],
            name=t["name"],
            family=t["family"],
            source=t["source"],
            kind=t["kind"],
            summary=t["summary"],
            description=t["description"],
            method=t["method"],
            path=t["path"],
            parameters=tuple(parameter(p) for p in t["parameters"]),
            request_body=None if t["request_body"] is None else value(t["request_body"]),
            request_content_type=t["request_content_type"],
            responses={s: value(v) for s, v in t["responses"].items()},
            response_media={s: tuple(m) for s, m in t.get("response_media", {}).items()},
            security=tuple({k: tuple(v) for k, v in req.items()} for req in t["security"]),
            mutation=MutationClass(t["mutation"]),
            idempotent=t["idempotent"],
            aliases=tuple(t["aliases"]),
            tags=tuple(t["tags"]),
            examples=value(t["examples"]),
        )
        for t in data["tools"]
    )
    contracts = tuple(
        IOContract(c["producer"], c["field_path"], c["consumer"], c["parameter"], c["match"], c["score"])
        for c in data.get("contracts") or ()
    )
    sources = tuple(data.get("sources") or ())
    vocabulary = dict(data.get("vocabulary") or {})
    return Collection(
        tools=tools,
        contracts=contracts,
        digest=str(data.get("digest", "")),
        sources=sources,
        vocabulary=vocabulary,
    )
