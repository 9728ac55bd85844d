"""``$ref`` resolution for OpenAPI and Swagger documents, with ``referencing`` doing the lookups.

``Resolver.resolve(node, parts)``: a copy of ``node`` with every ``$ref`` replaced by its target:

- local and external (file or URL, relative to the referring document) refs are followed; each external
  document is read once and recorded in ``dependencies`` (its digest invalidates the build cache);
- each target is resolved once and shared by every referrer, as a ``NamedSchema``;
- a ``$ref`` back to a target still being resolved becomes a ``RECURSIVE_REF`` marker, a chain deeper than
  ``MAX_REF_DEPTH`` a ``DEPTH_LIMIT_REF`` one (``x-`` keywords: a marker accepts anything);
- literal values (``example``…) hold no refs; keys of name maps (``properties``…) are names.

What a ``$ref`` may read: the source's ``documents.ReadPolicy`` (caps shared: ``Resolver._load``). A dangling,
refused or unreadable ref, or an anchor ref, is a SpecError naming the ``$ref``'s ``file:line:col`` and JSON path.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlparse

from qlab.collection import documents
from qlab.collection.documents import Document
from qlab.collection.model import Parameter
from qlab.collection.names import pointer_parts
from qlab.contracts.errors import SpecError

RECURSIVE_REF = "x-qlab-recursive-ref"
DEPTH_LIMIT_REF = "x-qlab-ref-depth-limit"
MAX_REF_DEPTH = 128  # nested refs being resolved at once; deeper chains end in a DEPTH_LIMIT_REF marker
# JSON nesting of what a walk returns (a schema level is two: ``properties`` and the name), so 100 nested
# schema levels fit with room; deeper is refused with a located error rather than a RecursionError later
MAX_NESTING = 320
SHOWN_PARTS = 12

# keys whose value is a map from names to objects: its keys are never keywords
_NAME_MAPS = frozenset(
    {
        "properties",
        "patternProperties",
        "definitions",
        "$defs",
        "dependentSchemas",
        "responses",
        "schemas",
        "headers",
        "content",
        "encoding",
        "links",
        "callbacks",
        "securitySchemes",
        "securityDefinitions",
        "paths",
        "requestBodies",
        "pathItems",
        "webhooks",
    }
)
_LITERALS = frozenset({"example", "default", "enum", "const", "value"})
_UNSAFE = re.compile(r"[^A-Za-z0-9._:-]")


class NamedSchema(dict[str, Any]):
    """A resolved ``$ref`` target, shared by every place that refers to it; ``ref`` names it in the artifact."""

    __slots__ = ("ref",)

    def __init__(self, ref: str, content: Mapping[str, Any]) -> None:
        super().__init__(content)
        self.ref = ref


@dataclass(frozen=True, slots=True)
class NamedParameter(Parameter):
    """A Parameter that came from a ``$ref`` (``#/components/parameters/…``, Swagger ``#/parameters/…``): the
    artifact stores it once, under ``ref``, as it stores a NamedSchema (Kubernetes repeats its long parameter
    descriptions in a thousand operations)."""

    ref: str = ""


class _Unresolved(Exception):
    """A ``$ref`` that cannot be followed; ``parts`` (innermost first) fill in as it leaves the walk."""

    def __init__(self, doc: Document, message: str, *, at_ref: bool = True) -> None:
        super().__init__(message)
        self.doc = doc
        self.message = message
        self.parts: list[str | int] = ["$ref"] if at_ref else []
        self.too_deep = not at_ref
        self.done = False  # True once the path reaches the top of ``doc``


class MergedSchema(dict[str, Any]):
    """A shared target with the sibling keys of its ``$ref`` laid over it (``{"$ref": …, "description": …}``).

    Reads as the merged dict; the artifact stores it as the reference plus the overrides, not a full copy.
    """

    __slots__ = ("base", "overrides")

    def __init__(self, base: NamedSchema, overrides: Mapping[str, Any]) -> None:
        super().__init__(base)
        self.update(overrides)
        self.base = base
        self.overrides = dict(overrides)


class Resolver:
    """Resolves the ``$ref``s of one root document and of the documents it refers to."""

    def __init__(
        self, root: Document, *, source_name: str, policy: documents.ReadPolicy | None = None
    ) -> None:
        self.root = root
        self.source_name = source_name
        self.policy = (policy or documents.ReadPolicy()).for_root(root.uri)
        self._docs: dict[str, Document] = {root.uri: root}
        # what the documents besides the root have used of the policy's caps, which they share
        self._chars_read = 0
        self._seconds_read = 0.0
        self._memo: dict[str, Any] = {}
        self._active: set[str] = set()
        self._registry_made: Any = None

    @property
    def _registry(self) -> Any:
        """The ``referencing`` registry, made at the first ``$ref`` (a document without any never imports
        ``referencing``)."""
        if self._registry_made is None:
            from referencing import Registry, Resource

            registry = Registry(retrieve=self._retrieve)  # type: ignore[call-arg]  # an attrs field: public API
            self._registry_made = registry.with_resource(self.root.uri, Resource.opaque(self.root.data))
        return self._registry_made

    @property
    def dependencies(self) -> dict[str, str]:
        """Every document read besides the root: absolute URI → sha256."""
        return {uri: doc.digest for uri, doc in sorted(self._docs.items()) if uri != self.root.uri}

    def resolve(self, node: Any, parts: Sequence[str | int] = ()) -> Any:
        """``node`` (found at ``parts`` of the root document) with every ``$ref`` resolved."""
        try:
            return self._walk(node, self.root, False, len(parts))
        except _Unresolved as exc:
            inner = tuple(reversed(exc.parts))
            where = inner if exc.done else (*parts, *inner)
            if exc.too_deep:  # point at where the deep part starts, not at a path of hundreds of keys
                where = where[:SHOWN_PARTS]
            raise documents.error(exc.doc, where, exc.message) from None
        except RecursionError:
            raise documents.error(
                self.root, parts, "nesting is too deep to resolve (hundreds of levels); flatten the schema"
            ) from None

    # ------------------------------------------------------------------------------------------ walking
    # The walk keeps no path (that would cost a tuple per node): an error collects its JSON path on its way
    # out, each frame adding its key, until the frame that entered the document holding the error.

    def _walk(self, node: Any, doc: Document, names: bool, depth: int = 0) -> Any:
        """``node`` with its refs resolved. A subtree without refs is returned as it is (not copied): most of
        a spec is plain text and numbers, and copying it would cost more than the resolution itself."""
        if type(node) is dict:
            if depth > MAX_NESTING:
                raise _Unresolved(
                    doc, f"nesting is deeper than {MAX_NESTING} levels; flatten the schema", at_ref=False
                )
            if not names:
                ref = node.get("$ref")
                if isinstance(ref, str):
                    return self._deref(node, ref, doc, depth)
            out: dict[str, Any] | None = None  # made on the first child that changed
            for index, (key, value) in enumerate(node.items()):
                try:
                    if names:
                        new = self._walk(value, doc, False, depth + 1)
                    elif (
                        key in _LITERALS
                        or key.startswith("x-")
                        or (key == "examples" and type(value) is not dict)
                    ):
                        continue
                    else:
                        is_map = key in _NAME_MAPS or (
                            key in ("parameters", "examples") and type(value) is dict
                        )
                        new = self._walk(value, doc, is_map, depth + 1)
                except _Unresolved as exc:
                    if not exc.done:
                        exc.parts.append(key)
                    raise
                if out is None:
                    if new is value:
                        continue
                    out = dict(islice(node.items(), index))
                out[key] = new
            if out is None:
                return node
            if len(out) < len(node):  # literal keys after the first change were skipped above
                out = {key: out.get(key, value) for key, value in node.items()}
            return out
        if type(node) is list:
            if depth > MAX_NESTING:
                raise _Unresolved(
                    doc, f"nesting is deeper than {MAX_NESTING} levels; flatten the schema", at_ref=False
                )
            items: list[Any] | None = None
            for index, value in enumerate(node):
                try:
                    new = self._walk(value, doc, False, depth + 1)
                except _Unresolved as exc:
                    if not exc.done:
                        exc.parts.append(index)
                    raise
                if items is None:
                    if new is value:
                        continue
                    items = list(node[:index])
                items.append(new)
            return node if items is None else items
        return node

    def _deref(self, node: dict[str, Any], ref: str, doc: Document, depth: int) -> Any:
        key = doc.uri + ref if ref.startswith("#") else urljoin(doc.uri, ref)
        resolved = self._memo.get(key)
        if resolved is None:
            if key in self._active:
                return {RECURSIVE_REF: self._name(key)}  # closes a cycle: not memoized, the target is
            if len(self._active) >= MAX_REF_DEPTH:
                return {DEPTH_LIMIT_REF: self._name(key)}
            target_doc, target_parts, contents = self._lookup(ref, key, doc)
            self._active.add(key)
            try:
                resolved = self._walk(contents, target_doc, False, depth)
            except _Unresolved as exc:
                if not exc.done:  # the error is inside the target: its path starts at the target's pointer
                    exc.parts.extend(reversed(target_parts))
                    exc.done = True
                raise
            finally:
                self._active.discard(key)
            if isinstance(resolved, dict):
                resolved = NamedSchema(self._name(key), resolved)
            self._memo[key] = resolved
        if len(node) > 1 and isinstance(resolved, NamedSchema):
            # OpenAPI 3.1 (and common practice) lets siblings such as description override the target's
            overrides = self._walk({k: v for k, v in node.items() if k != "$ref"}, doc, False, depth)
            return MergedSchema(resolved, overrides)
        return resolved

    # ------------------------------------------------------------------------------------------ lookups

    def _lookup(self, ref: str, key: str, doc: Document) -> tuple[Document, list[str], Any]:
        from referencing.exceptions import PointerToNowhere, Unresolvable

        target_uri, fragment = urldefrag(key)
        if fragment and not fragment.startswith("/"):
            raise _Unresolved(doc, f"$ref {ref!r}: anchors are not supported; use a JSON pointer (#/...)")
        if target_uri not in self._docs:
            refused = self.policy.refusal(self.root.uri, target_uri)
            if refused is not None:
                raise _Unresolved(doc, f"$ref {ref!r} refused: {refused}")
        try:
            resolved = self._registry.resolver(base_uri=doc.uri).lookup(ref)
        except (Unresolvable, TypeError, ValueError) as exc:
            # referencing raises TypeError/ValueError, not PointerToNowhere, for a pointer that walks through a
            # scalar or null, or into a list by a name (#/components/parameters/X when parameters is a list)
            chain = _causes(exc)
            if not isinstance(exc, Unresolvable) or any(isinstance(e, PointerToNowhere) for e in chain):
                message = (
                    f"$ref {ref!r} points to nothing: {fragment or '/'} does not exist in "
                    f"{documents.display_for(self.root, target_uri)}; fix the reference or add the target"
                )
            else:
                unreadable = next((e for e in chain if isinstance(e, SpecError)), None)
                message = (
                    f"$ref {ref!r}: cannot read the referenced document: {unreadable}"
                    if unreadable is not None
                    else f"$ref {ref!r} cannot be resolved: {exc}"
                )
            raise _Unresolved(doc, message) from None
        target = self._docs.get(target_uri)
        if target is None:  # referencing found it without retrieving: the root under another spelling
            target = self.root
        return target, [unquote(p) for p in pointer_parts(fragment)], resolved.contents

    def _retrieve(self, uri: str) -> Any:
        doc = self._docs.get(uri)
        if doc is None:
            display = documents.display_for(self.root, uri)
            doc = self._load(uri, display)
            self._docs[uri] = doc
        from referencing import Resource

        return Resource.opaque(doc.data)

    def _load(self, uri: str, display: str) -> Document:
        """One more document a ``$ref`` reads: each is capped as the spec is, and all of them share the caps."""
        cap, seconds = self.policy.max_bytes, self.policy.timeout_sec
        together = (
            f"the documents this spec's $refs read come to more than {cap / documents.MiB:g} MiB of text "
            f"(limits.spec_mib) or {seconds:g}s of fetching (limits.spec_timeout_sec) together"
        )
        left = seconds - self._seconds_read
        if left <= 0:
            raise SpecError(f"{display}: not read: {together}")
        started = time.monotonic()
        try:
            doc = documents.load(
                uri, display=display, policy=replace(self.policy, timeout_sec=left), root=self.root.uri
            )
        except SpecError:
            # its own reason, unless the deadline the documents share ran out during this fetch
            if left == seconds or time.monotonic() - started < left:
                raise
            raise SpecError(f"{display}: not read: {together}") from None
        finally:
            self._seconds_read += time.monotonic() - started
        self._chars_read += len(doc.text)
        if self._chars_read > cap:
            raise SpecError(f"{display}: not read: {together}")
        return doc

    def _name(self, key: str) -> str:
        """``<source>:[<document relative to the root>:]<pointer with dots>``, e.g. ``demo:components.schemas.Member``.

        Stable across machines and runs, and safe inside a JSON pointer (the artifact refers to it as
        ``#/schemas/<name>``): characters other than letters, digits, ``._:-`` become ``_``.
        """
        target_uri, fragment = urldefrag(key)
        if target_uri == self.root.uri:
            rel = ""
        elif target_uri.startswith("file://") and self.root.uri.startswith("file://"):
            from urllib.request import url2pathname  # a heavy import: only for multi-file specs

            root_dir = os.path.dirname(url2pathname(urlparse(self.root.uri).path))
            rel = os.path.relpath(url2pathname(urlparse(target_uri).path), root_dir).replace(os.sep, "/")
        else:
            rel = target_uri
        dotted = ".".join(unquote(p) for p in pointer_parts(fragment))
        return safe_name(self.source_name) + ":" + (safe_name(rel) + ":" if rel else "") + safe_name(dotted)


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc`` and everything it was raised from (referencing wraps a retrieval failure twice)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def safe_name(text: str) -> str:
    """Letters, digits and ``._:-`` kept; anything else becomes ``_``."""
    return _UNSAFE.sub("_", text)
