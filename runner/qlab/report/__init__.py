"""Report formats: each renders a result artifact (a dict) to text. A literal registry, imported lazily.

    render = report.format_for("junit")
    text = render(artifact)

A format is ``module:function`` with the signature of :class:`Renderer`; ``register`` adds one (a duplicate
name is an error). The HTML report takes several runs and a baseline, so it is called directly
(``qlab.report.html.render_html``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol

from qlab.errors import QlabError, UsageError


class Renderer(Protocol):
    def __call__(self, artifact: Mapping[str, Any], /) -> str:
        """Render one result artifact."""
        ...


FORMATS: dict[str, str] = {
    "junit": "qlab.report.junit:render",
    "markdown": "qlab.report.markdown:render",
}


def register(name: str, target: str) -> None:
    """Add a format ``name`` -> ``"module:function"``; refuses a name that is already taken."""
    if name in FORMATS:
        raise QlabError(f"report format {name!r} is already registered ({FORMATS[name]})")
    FORMATS[name] = target


def format_for(name: str) -> Renderer:
    """The renderer of ``name``; UsageError for an unknown one."""
    target = FORMATS.get(name)
    if target is None:
        raise UsageError(f"unknown report format {name!r}; known: {', '.join(sorted(FORMATS))}")
    module, _, attr = target.partition(":")
    renderer: Renderer = getattr(importlib.import_module(module), attr)
    return renderer
