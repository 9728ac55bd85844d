"""Old spellings of options, kept for one release as hidden aliases of the one spelling each concept has now.

The spellings every command shares: ``--result FILE`` for a result artifact a command reads (``qlab report``
and ``qlab merge`` take several, as arguments), ``--json`` for "print JSON on stdout instead of text",
``--json-out FILE`` for "also write the JSON report to FILE", ``--config FILE`` for qlab.yaml.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def note(old: str, new: str) -> None:
    """The deprecation note on stderr; the command then runs as if ``new`` had been written."""
    click.echo(f"warning: {old} is deprecated and goes away in the next release; write {new}", err=True)


def json_option(*, what: str) -> Callable[[F], F]:
    """``--json``: print ``what`` as JSON on stdout instead of text. Still accepts the old ``--json FILE``
    (the value is then the file: see :func:`json_target`)."""
    return click.option(
        "--json",
        "json_value",
        is_flag=False,
        flag_value="-",
        default=None,
        metavar="",
        help=f"Print {what} as JSON on stdout instead of text.",
    )


def json_target(json_value: str | None, json_out: str | None) -> tuple[bool, str | None]:
    """(print JSON on stdout?, file to write the JSON to) from ``--json`` and ``--json-out``; the old
    ``--json FILE`` is ``--json-out FILE`` with a deprecation note."""
    if json_value is None or json_value == "-":
        return json_value == "-", json_out
    note(f"--json {json_value}", f"--json-out {json_value}")
    return False, json_out or json_value
