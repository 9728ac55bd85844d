"""One search query per operation, phrased from the spec, that tells sibling operations apart.

The query starts from what the spec says the operation does: its summary, else the first sentence of its
description, else the words of its id. Operations that would get the *same* words (httpbin's DELETE, GET,
PATCH, POST and PUT ``/anything`` all say "Returns anything passed in request data.") are siblings: one query
for all of them could rank only one first, so each sibling's query also names its method and path, the
words a user adds to say which one is meant ("… (DELETE /anything)"). The built-in search indexes both.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

from qlab.collection.model import Tool

MAX_LENGTH = 200  # characters; a whole paragraph is not a query
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")


def words_of(name: str) -> str:
    """``getMemberDeliveryList`` / ``get_member`` → ``get member delivery list``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ")
    return " ".join(spaced.lower().split())


def _clean(text: str) -> str:
    text = _TAG.sub(" ", _MARKDOWN_LINK.sub(r"\1", text))
    return " ".join(text.replace("`", "").replace("*", "").split())


def _shortened(text: str) -> str:
    if len(text) <= MAX_LENGTH:
        return text
    cut = text[:MAX_LENGTH].rsplit(" ", 1)[0]
    return cut.rstrip(",;:")


def base_text(tool: Tool) -> str:
    """What the spec says the operation does, in one line (see the module docstring)."""
    summary = _clean(tool.summary)
    if summary:
        return _shortened(summary)
    description = _clean(tool.description)
    first = _SENTENCE_END.split(description, maxsplit=1)[0].strip() if description else ""
    if first:
        return _shortened(first)
    if tool.name == tool.id or not tool.method:  # an operationId or a tool name: its words
        return words_of(tool.id)
    return words_of(f"{tool.method} {tool.path or ''}".replace("/", " ").replace("{", "").replace("}", ""))


def _key(text: str) -> str:
    return " ".join(text.lower().rstrip(".!? ").split())


def _where(tool: Tool) -> str:
    return f"{tool.method} {tool.path}" if tool.method and tool.path else words_of(tool.id)


def queries(tools: Sequence[Tool]) -> Mapping[str, str]:
    """Tool id → its search query, in the order of ``tools``."""
    bases = {tool.id: base_text(tool) for tool in tools}
    counts = Counter(_key(text) for text in bases.values())
    out: dict[str, str] = {}
    for tool in tools:
        text = bases[tool.id]
        if counts[_key(text)] > 1:
            text = f"{text.rstrip('.!? ')} ({_where(tool)})"
        out[tool.id] = text
    return out


def siblings(tools: Sequence[Tool]) -> int:
    """How many operations share their words with another one (and so got their method and path added)."""
    counts = Counter(_key(base_text(tool)) for tool in tools)
    return sum(1 for tool in tools if counts[_key(base_text(tool))] > 1)
