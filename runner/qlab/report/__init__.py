"""Report formats: each renders a result artifact (a dict) to text. A literal registry, imported lazily, and the
formats plugin packages add.

    render = report.format_for("junit")
    text = render(artifact)

A built-in format is ``module:function`` with the signature of :class:`Renderer`; a plugin package adds one
through the ``qlab.report_formats`` entry point group (``qlab.contracts.extensions``; docs/extending.md shows one), and
a name that is taken is refused. ``qlab report RESULT --format NAME[=FILE]`` renders any of them. The HTML report
takes several runs and a baseline, so it is called directly (``qlab.report.html.render_html``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

from qlab.adapters.fuzzy import did_you_mean
from qlab.contracts import extensions
from qlab.contracts.errors import UsageError


class Renderer(Protocol):
    def __call__(self, artifact: Mapping[str, Any], /) -> str:
        """Render one result artifact."""
        ...


FORMATS: dict[str, str] = {
    "junit": "qlab.report.junit:render",
    "markdown": "qlab.report.markdown:render",
}


@cache
def _formats() -> dict[str, str | Renderer]:
    """The built-in formats and those of the installed plugin packages."""
    plugins = extensions.installed(extensions.REPORT_FORMATS)
    for plugin in plugins.values():
        if not callable(plugin.target):
            raise extensions.PluginError(f"{plugin.origin}: a report format is a function(artifact) -> str")
    return extensions.merged("report format", FORMATS, plugins)


def names() -> tuple[str, ...]:
    """Every format's name, sorted."""
    return tuple(sorted(_formats()))


def format_for(name: str) -> Renderer:
    """The renderer of ``name``; UsageError for an unknown one."""
    target = _formats().get(name)
    if target is None:
        hint = did_you_mean(name, names())
        raise UsageError(f"unknown report format {name!r} (known: {', '.join(names())}).{hint}")
    if not isinstance(target, str):
        return target
    module, _, attr = target.partition(":")
    renderer: Renderer = getattr(importlib.import_module(module), attr)
    return renderer
