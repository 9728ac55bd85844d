"""pyyaml, behind one module: YAML text -> :class:`~qlab.project.document.Document` with positions, and plain
data -> YAML text (:func:`dump_yaml`, the one emitter of the files qlab writes).

Safe by construction: values are built from pyyaml's event stream (libyaml's parser where present), never by a
constructor, so no tag can create an object; nesting depth is limited (``MAX_DEPTH``).

- Scalars follow the YAML 1.2 core schema: only ``true``/``false`` are booleans, ``no`` and ``1:30`` stay
  strings. Mapping keys are always strings.
- Duplicate keys are errors (all reported); ``<<`` merge keys are supported.
- What aliases expand to is limited ("billion laughs": ``MAX_ALIAS_NODES``, ``MAX_ALIAS_CHARS``).

:func:`dump_yaml` writes plain data that :func:`parse_yaml` reads back exactly, whatever its strings hold: a
string is plain only when it reads back as itself, else double-quoted with escapes; no scalar is folded. The
round trip is checked before returning."""

from __future__ import annotations

import sys
from typing import Any

import yaml
from yaml import events as ev

from qlab.contracts.errors import ConfigError, Diagnostic
from qlab.project.document import Document, JsonPath, PathKey, Position, format_path
from qlab.project.scalars import number_problem, plain_scalar

try:  # libyaml's parser when pyyaml was built with it
    from yaml import CSafeLoader as _Loader

    HAVE_LIBYAML = True
except ImportError:  # pragma: no cover - depends on the pyyaml build
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

    HAVE_LIBYAML = False

MAX_ALIAS_NODES = 10_000  # values an alias may stand for, summed over the file
MAX_ALIAS_CHARS = 1 << 20  # characters of text (keys and scalars) aliases may stand for, summed over the file
MAX_DEPTH = 100  # nesting of mappings and lists
LIBYAML_MAX_DEPTH = (
    1000  # libyaml (pyyaml >= 6.0.3 wheels) refuses deeper flow or block nesting in its scanner
)

_CORE = "tag:yaml.org,2002:"
_MERGE = object()  # the pending key of a ``<<:`` entry
_SKIP = object()  # the pending key of a duplicate entry: its value is dropped


def _pos(mark: Any) -> Position:
    """1-based (line, col) of a pyyaml mark (0-based); (1, 1) when the event has none."""
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


def _short(tag: str) -> str:
    """``tag:yaml.org,2002:python/object`` -> ``!!python/object`` (as it was written)."""
    return "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag


class _Fatal(Exception):
    """Stops building: the rest of the file cannot be trusted (syntax, depth, alias bomb)."""


class _Frame:
    __slots__ = ("anchor", "chars", "key", "kind", "merges", "path", "size", "value")

    def __init__(self, kind: str, value: Any, path: JsonPath, anchor: str | None) -> None:
        self.kind = kind
        self.value = value
        self.path = path
        self.anchor = anchor
        self.size = 1
        self.chars = 0  # characters of the keys and scalars inside
        self.key: Any = None  # the pending key of a mapping (None: the next scalar is a key)
        self.merges: list[dict[str, Any]] = []


class _Builder:
    """Turns the event stream into plain data, recording positions and collecting located errors."""

    def __init__(
        self,
        file: str,
        *,
        max_alias_nodes: int,
        max_depth: int,
        max_alias_chars: int = MAX_ALIAS_CHARS,
    ) -> None:
        self.file = file
        self.max_alias_nodes = max_alias_nodes
        self.max_alias_chars = max_alias_chars
        self.max_depth = max_depth
        self.alias_nodes = 0
        self.alias_chars = 0
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int, int]] = {}
        self.open_anchors: set[str] = set()
        self.values: dict[JsonPath, Position] = {}
        self.keys: dict[JsonPath, Position] = {}
        self.errors: list[Diagnostic] = []
        self.root: Any = None
        self.has_root = False
        self.documents = 0

    # ----------------------------------------------------------------------------------------- helpers

    def error(self, mark: Any, path: JsonPath | None, message: str) -> None:
        where = "" if path is None else format_path(path)
        self.errors.append(Diagnostic(self.file, *_pos(mark), where, message))

    def fatal(self, mark: Any, path: JsonPath | None, message: str) -> _Fatal:
        self.error(mark, path, message)
        return _Fatal()

    def child_path(self) -> JsonPath | None:
        """The path of the value about to be added (None when it is a mapping key)."""
        if not self.stack:
            return ()
        top = self.stack[-1]
        if top.kind == "seq":
            return (*top.path, len(top.value))
        if top.key is None:
            return None
        return (*top.path, top.key) if isinstance(top.key, str) else top.path

    def add(self, value: Any, size: int, chars: int) -> None:
        """Add a finished value to its parent."""
        if not self.stack:
            self.root, self.has_root = value, True
            return
        top = self.stack[-1]
        top.size += size
        top.chars += chars
        if top.kind == "seq":
            top.value.append(value)
            return
        key, top.key = top.key, None
        if key is _MERGE:
            self.merge(top, value)
        elif key is not _SKIP:
            top.value[key] = value

    def merge(self, frame: _Frame, value: Any) -> None:
        sources = value if isinstance(value, list) else [value]
        if not all(isinstance(item, dict) for item in sources):
            line, col = self.keys.get((*frame.path, "<<"), (1, 1))
            self.errors.append(
                Diagnostic(
                    self.file,
                    line,
                    col,
                    format_path(frame.path),
                    "'<<' merges a mapping or a list of mappings",
                )
            )
            return
        frame.merges.extend(sources)

    # ----------------------------------------------------------------------------------------- events

    def scalar(self, event: ev.ScalarEvent) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and top.kind == "map" and top.key is None:
            self.key(top, event)
            return
        path = self.child_path()
        assert path is not None
        value = self.resolve(event, path)
        if type(value) is float or type(value) is int:  # .nan, .inf, 1e400, 10**400: located here
            problem = number_problem(value, event.value)
            if problem is not None:
                self.error(event.start_mark, path, problem)
        self.values[path] = _pos(event.start_mark)
        chars = len(event.value)
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, 1, chars)
        self.add(value, 1, chars)

    def key(self, top: _Frame, event: ev.ScalarEvent) -> None:
        name = sys.intern(event.value)  # one string per key name, not one per case
        top.chars += len(name)
        position = _pos(event.start_mark)
        if name == "<<" and event.implicit[0]:
            top.key = _MERGE
            merge_path: JsonPath = (*top.path, "<<")
            self.keys[merge_path] = position
            return
        path = (*top.path, name)
        if name in top.value:
            first = self.keys.get(path, position)
            self.error(
                event.start_mark,
                path,
                f"duplicate key {name!r} (first written at line {first[0]}); YAML would keep only the last one, "
                "so remove or rename one of them",
            )
            top.key = _SKIP
            return
        self.keys[path] = position
        top.key = name

    def resolve(self, event: ev.ScalarEvent, path: JsonPath) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            return plain_scalar(event.value) if event.implicit[0] and tag is None else event.value
        value = event.value
        if tag == _CORE + "str":
            return value
        resolved = plain_scalar(value)
        kinds: dict[str | None, Any] = {"int": int, "float": (int, float), "bool": bool, "null": type(None)}
        name = tag[len(_CORE) :] if tag.startswith(_CORE) else None
        if (
            name in kinds
            and isinstance(resolved, kinds[name])
            and not (name != "bool" and isinstance(resolved, bool))
        ):
            if name == "float" and isinstance(resolved, int) and number_problem(resolved) is not None:
                return resolved  # !!float of a 64-bit-overflowing integer: refused as out of range, not converted
            return float(resolved) if name == "float" else resolved
        if name in kinds:
            self.error(event.start_mark, path, f"{value!r} is not a valid !!{name}")
        else:
            self.error(
                event.start_mark,
                path,
                f"unsupported YAML tag {_short(tag)!r}: qlab files hold plain data only",
            )
        return value

    def start(self, event: ev.CollectionStartEvent, kind: str) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and top.kind == "map" and top.key is None:
            raise self.fatal(
                event.start_mark, top.path, "a mapping key must be a plain value, not a list or mapping"
            )
        path = self.child_path()
        assert path is not None
        if len(self.stack) >= self.max_depth:
            raise self.fatal(event.start_mark, None, f"nesting is deeper than {self.max_depth} levels")
        tag = event.tag
        if tag is not None and tag not in ("!", _CORE + ("map" if kind == "map" else "seq")):
            self.error(
                event.start_mark,
                path,
                f"unsupported YAML tag {_short(tag)!r}: qlab files hold plain data only",
            )
        self.values[path] = _pos(event.start_mark)
        if event.anchor is not None:
            self.open_anchors.add(event.anchor)
        self.stack.append(_Frame(kind, {} if kind == "map" else [], path, event.anchor))

    def end(self) -> None:
        frame = self.stack.pop()
        for source in frame.merges:  # explicit keys win over merged ones; earlier merges over later ones
            for name, value in source.items():
                frame.value.setdefault(name, value)
        if frame.anchor is not None:
            self.open_anchors.discard(frame.anchor)
            self.anchors[frame.anchor] = (frame.value, frame.size, frame.chars)
        self.add(frame.value, frame.size, frame.chars)

    def alias(self, event: ev.AliasEvent) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and top.kind == "map" and top.key is None:
            raise self.fatal(event.start_mark, top.path, "an alias cannot be a mapping key")
        path = self.child_path()
        name = event.anchor
        if name in self.open_anchors:
            raise self.fatal(
                event.start_mark, path, f"alias *{name} refers to a value that contains it (recursive alias)"
            )
        if name not in self.anchors:
            raise self.fatal(event.start_mark, path, f"alias *{name} has no anchor &{name} before it")
        value, size, chars = self.anchors[name]
        self.alias_nodes += size
        self.alias_chars += chars
        if self.alias_nodes > self.max_alias_nodes:
            raise self.fatal(
                event.start_mark,
                path,
                f"aliases expand to more than {self.max_alias_nodes} values (an alias bomb?); write the values out",
            )
        if self.alias_chars > self.max_alias_chars:
            raise self.fatal(
                event.start_mark,
                path,
                f"aliases expand to more than {self.max_alias_chars} characters of text (an alias bomb?); write "
                "the values out",
            )
        assert path is not None
        self.values[path] = _pos(event.start_mark)
        self.add(value, size, chars)

    def feed(self, event: ev.Event) -> None:
        """Take one event."""
        kind = type(event)
        if kind is ev.ScalarEvent:
            self.scalar(event)  # type: ignore[arg-type]
        elif kind is ev.MappingStartEvent:
            self.start(event, "map")  # type: ignore[arg-type]
        elif kind is ev.SequenceStartEvent:
            self.start(event, "seq")  # type: ignore[arg-type]
        elif kind is ev.MappingEndEvent or kind is ev.SequenceEndEvent:
            self.end()
        elif kind is ev.AliasEvent:
            self.alias(event)  # type: ignore[arg-type]
        elif kind is ev.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                raise self.fatal(
                    event.start_mark,
                    None,
                    "a second YAML document ('---') starts here; a qlab file holds one document",
                )


# ------------------------------------------------------------------------------------------------- writing

UNICODE_ONLY = str.maketrans({c: "\ufffd" for c in range(0xD800, 0xE000)})  # what no YAML stream can hold


class _Dumper(yaml.SafeDumper):
    """Block style with lists indented under their key (``gates:\n  - name: build``), lists of scalars in flow
    style (``suites: [search_core]``), no anchors."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    plain = value.isprintable() and plain_scalar(value) == value and type(plain_scalar(value)) is str
    return dumper.represent_scalar(_CORE + "str", value, style=None if plain else '"')


def _represent_dict(dumper: yaml.SafeDumper, value: dict[Any, Any]) -> yaml.MappingNode:
    return dumper.represent_mapping(_CORE + "map", value, flow_style=False)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    scalars = all(not isinstance(item, dict | list | tuple) for item in value)
    return dumper.represent_sequence(_CORE + "seq", value, flow_style=scalars)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(dict, _represent_dict)
_Dumper.add_representer(list, _represent_list)


def unicode_text(value: Any) -> Any:
    """``value`` with each lone surrogate of its strings (keys too) replaced by U+FFFD: a YAML file holds
    Unicode text, which has no surrogates (a JSON spec may still carry ``"\ud800"``)."""
    if isinstance(value, str):
        return value.translate(UNICODE_ONLY)
    if isinstance(value, dict):
        return {unicode_text(k): unicode_text(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [unicode_text(v) for v in value]
    return value


def dump_yaml(data: Any, *, file: str = "<generated>") -> str:
    """``data`` (dicts, lists, str, int, float, bool, None) as YAML text that :func:`parse_yaml` reads back as
    ``unicode_text(data)``; see the module docstring. Raises ValueError when it would not (a bug to report)."""
    data = unicode_text(data)
    text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=2**30)
    if parse_yaml(text, file).data != data:
        raise ValueError(f"{file}: the YAML emitter did not round-trip its data")
    return text


def dump_scalar(value: str | int | float | bool | None) -> str:
    """One scalar as :func:`dump_yaml` writes it as a block mapping's key or value (or a block list's item), on
    one line: for the edits that add a line to a file people keep and comment (``qlab learn accept``)."""
    return dump_yaml({"v": value})[len("v: ") : -1]


def _char_at(text: str, line: int, col: int) -> str:
    lines = text.split("\n", line + 1)
    return lines[line][col : col + 1] if line < len(lines) else ""


def _syntax_message(exc: yaml.MarkedYAMLError, text: str) -> str:
    problem = (exc.problem or "syntax error").rstrip(".")
    message = f"invalid YAML: {problem}"
    if exc.context and exc.context_mark is not None:
        message += (
            f" ({exc.context} at line {exc.context_mark.line + 1}, column {exc.context_mark.column + 1})"
        )
    elif exc.context:
        message += f" ({exc.context})"
    mark = exc.problem_mark
    if mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        message += "; indent with spaces, not tabs"
    elif problem.startswith("mapping values are not allowed"):
        message += "; quote a value that contains ': '"
    return message


def _events(builder: _Builder, text: str, max_depth: int) -> None:
    """Feed ``text``'s events to ``builder``. A problem that stops the parse (syntax, depth, alias bomb) ends it
    with its diagnostic recorded."""
    file = builder.file
    try:
        for event in yaml.parse(text, Loader=_Loader):
            builder.feed(event)
    except _Fatal:
        pass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        if exc.problem == "exceeded maximum nesting depth":  # libyaml's own limit, met before the builder's
            message = f"nesting is deeper than {min(max_depth, LIBYAML_MAX_DEPTH)} levels"
        else:
            message = _syntax_message(exc, text)
        builder.errors.append(Diagnostic(file, line, col, "", message))
    except yaml.YAMLError as exc:  # reader errors carry no mark
        builder.errors.append(Diagnostic(file, 1, 1, "", f"invalid YAML: {exc}"))


def _finish(builder: _Builder) -> None:
    """Raise ConfigError with every problem found, or when the file held no value."""
    if builder.errors:
        raise ConfigError(builder.errors)
    if not builder.has_root:
        raise ConfigError(
            [Diagnostic(builder.file, 1, 1, "", "file holds no data (only comments or blank lines)")]
        )


def parse_yaml(
    text: str,
    file: str,
    *,
    max_alias_nodes: int = MAX_ALIAS_NODES,
    max_depth: int = MAX_DEPTH,
    max_alias_chars: int = MAX_ALIAS_CHARS,
) -> Document:
    """Parse one YAML document. Raises ConfigError with every located problem (syntax errors stop at the first)."""
    builder = _Builder(
        file, max_alias_nodes=max_alias_nodes, max_depth=max_depth, max_alias_chars=max_alias_chars
    )
    _events(builder, text, max_depth)
    _finish(builder)
    return Document(file, builder.root, builder.values, builder.keys)


__all__ = [
    "HAVE_LIBYAML",
    "MAX_ALIAS_CHARS",
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "PathKey",
    "dump_yaml",
    "parse_yaml",
    "unicode_text",
]
