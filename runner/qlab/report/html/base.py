"""Building blocks of the HTML report: trusted markup, tables, sections and the inline stylesheet.

The escaping rule is structural: a plain ``str`` is always escaped when it becomes a cell or text; only a
``Markup`` (built here or in ``qlab.report.html.svg`` from escaped parts) passes through. A value taken from an
artifact therefore cannot smuggle markup into the page, whatever its content.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from qlab.contracts.results import json_or_text
from qlab.report.html.svg import esc, fmt


class Markup(str):
    """HTML that is already safe: produced by this package from escaped parts."""

    __slots__ = ()


def text(value: object) -> Markup:
    """Escape any value as text (``Markup`` is kept as is)."""
    if isinstance(value, Markup):
        return value
    return Markup(esc(value))


def show(value: Any, *, empty: str = "—") -> Markup:
    """A compact, escaped rendering of an artifact value of any type."""
    if value is None or value == "" or value == [] or value == {}:
        return Markup(f'<span class="muted">{esc(empty)}</span>')
    if isinstance(value, bool):
        return text("yes" if value else "no")
    if isinstance(value, float):
        return text(fmt(value))
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float)) for v in value):
        return text(", ".join(str(v) for v in value))
    if isinstance(value, (Mapping, list, tuple)):
        dumped = json.dumps(value, sort_keys=True, default=json_or_text)
        return Markup(f"<code>{esc(dumped if len(dumped) <= 300 else dumped[:297] + '...')}</code>")
    return text(value)


def tag(name: str, content: object = "", **attrs: str) -> Markup:
    """``<name attrs>content</name>``; attribute values and plain-text content are escaped."""
    rendered = "".join(f' {key.rstrip("_").replace("_", "-")}="{esc(value)}"' for key, value in attrs.items())
    return Markup(f"<{name}{rendered}>{text(content)}</{name}>")


def table(headers: Sequence[str], rows: Iterable[Sequence[object]], *, cls: str = "") -> Markup:
    """A table; each cell is escaped unless it is ``Markup``."""
    head = "".join(f"<th>{text(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{text(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    klass = f' class="{esc(cls)}"' if cls else ""
    return Markup(f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def kv(items: Iterable[tuple[str, object]]) -> Markup:
    """A definition list of ``(key, value)``; values go through ``show``."""
    parts = [f"<dt>{text(key)}</dt><dd>{show(value)}</dd>" for key, value in items]
    return Markup(f'<dl class="kv">{"".join(parts)}</dl>')


def badge(status: str) -> Markup:
    """A coloured status word (pass/block/passed/failed/...)."""
    klass = {
        "pass": "ok",
        "passed": "ok",
        "fixed": "ok",
        "block": "bad",
        "blocked": "bad",
        "failed": "bad",
        "error": "bad",
        "regressed": "bad",
        "warned": "warn",
        "still_failing": "warn",
        "new": "info",
        "new_passing": "info",
        "new_failing": "bad",
        "unevaluated": "warn",
        "removed": "info",
        "skipped": "muted",
    }.get(status, "muted")
    return Markup(f'<span class="badge {klass}">{esc(status.replace("_", " "))}</span>')


def section(anchor: str, title: str, *body: object, note: str = "") -> Markup:
    parts = [f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>']
    if note:
        parts.append(f'<p class="note">{esc(note)}</p>')
    parts.extend(str(text(b)) for b in body)
    parts.append("</section>")
    return Markup("".join(parts))


def empty(message: str) -> Markup:
    return Markup(f'<p class="muted">{esc(message)}</p>')


def tiles(items: Iterable[tuple[str, object, str]]) -> Markup:
    """Big numbers: ``(label, value, css class)``."""
    parts = [
        f'<div class="tile {esc(cls)}"><div class="num">{show(value, empty="0")}</div><div>{esc(label)}</div></div>'
        for label, value, cls in items
    ]
    return Markup(f'<div class="tiles">{"".join(parts)}</div>')


def capped(rows: Sequence[Sequence[object]], limit: int) -> tuple[Sequence[Sequence[object]], Markup]:
    """At most ``limit`` rows, and a note saying how many were left out (the artifact has them all)."""
    if len(rows) <= limit:
        return rows, Markup("")
    note = f"{len(rows) - limit} more rows are not shown; the result artifact holds every case."
    return rows[:limit], Markup(f'<p class="note">{esc(note)}</p>')


CSS = """
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#fff;--panel:#f6f8fa;--ok:#1a7f37;--bad:#cf222e;
--warn:#9a6700;--info:#0969da;--s0:#0969da;--s1:#e16f24;--s2:#1a7f37;--s3:#8250df;--s4:#bf3989;--s5:#57606a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--fg);background:var(--bg)}
header.top{padding:20px 32px;border-bottom:4px solid var(--muted);background:var(--panel)}
header.top.pass{border-color:var(--ok)} header.top.block{border-color:var(--bad)} header.top.error{border-color:var(--warn)}
header.top h1{margin:0 0 6px;font-size:22px}
.verdict{font-size:20px;font-weight:700;letter-spacing:.04em}
.verdict.pass{color:var(--ok)} .verdict.block{color:var(--bad)} .verdict.error{color:var(--warn)}
nav{padding:8px 32px;border-bottom:1px solid var(--line);font-size:13px}
nav a{margin-right:14px;color:var(--info);text-decoration:none}
main{padding:8px 32px 40px;max-width:1280px}
section{margin:26px 0}
h2{font-size:17px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:14px;margin:16px 0 6px}
table{border-collapse:collapse;width:100%;margin:6px 0;font-size:13px}
th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--panel);font-weight:600}
tbody tr:nth-child(even){background:#fbfcfd}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
.muted{color:var(--muted)} .note{color:var(--muted);font-size:12px;margin:4px 0}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:600;border:1px solid}
.badge.ok{color:var(--ok)} .badge.bad{color:var(--bad)} .badge.warn{color:var(--warn)}
.badge.info{color:var(--info)} .badge.muted{color:var(--muted)}
.pass-mark{color:var(--ok);font-weight:700} .fail-mark{color:var(--bad);font-weight:700}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0;font-size:13px}
dl.kv dt{color:var(--muted)} dl.kv dd{margin:0}
.tiles{display:flex;flex-wrap:wrap;gap:10px;margin:10px 0}
.tile{border:1px solid var(--line);border-radius:6px;padding:8px 14px;min-width:110px;background:var(--panel)}
.tile .num{font-size:22px;font-weight:700}
.tile.ok .num{color:var(--ok)} .tile.bad .num{color:var(--bad)} .tile.warn .num{color:var(--warn)}
.tile.info .num{color:var(--info)}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(380px,1fr));gap:12px}
.grid2 figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:6px}
figcaption{font-size:12px;color:var(--muted)}
svg.chart{max-width:100%;height:auto;font-size:12px}
svg.chart text{fill:var(--fg)} svg.chart .nodata{fill:var(--muted);font-style:italic}
svg.chart .tick,svg.chart .legend,svg.chart .axislabel{fill:var(--muted)}
svg.chart .axis{stroke:var(--muted)} svg.chart .grid{stroke:var(--line);stroke-dasharray:2 3}
svg.chart .marker{stroke:var(--warn);stroke-dasharray:5 4}
svg.chart .line{fill:none;stroke-width:2}
.s0{fill:var(--s0);stroke:var(--s0)} .s1{fill:var(--s1);stroke:var(--s1)} .s2{fill:var(--s2);stroke:var(--s2)}
.s3{fill:var(--s3);stroke:var(--s3)} .s4{fill:var(--s4);stroke:var(--s4)} .s5{fill:var(--s5);stroke:var(--s5)}
polyline.s0,polyline.s1,polyline.s2,polyline.s3,polyline.s4,polyline.s5{fill:none}
details summary{cursor:pointer;color:var(--info)}
form.filter{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:center;margin:6px 0;font-size:13px}
form.filter select{font:inherit;margin-left:4px} [hidden]{display:none!important}
footer{padding:12px 32px;color:var(--muted);font-size:12px;border-top:1px solid var(--line)}
@media print{nav{display:none} section{break-inside:avoid}}
"""
