"""What GitHub shows of a Markdown text: rendered with GitHub's own renderer (cmark-gfm, raw HTML kept so that
any is seen), then read back as the page's elements.

``live(markdown, marker)`` lists every way text containing ``marker`` (outside text planted by a test) is live
on the page instead of shown as text: an image, a link, a raw HTML element, a heading, text outside a code span,
and table rows whose cell count differs from their header's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

# the elements cmark-gfm makes of Markdown; anything else is raw HTML that came through
MARKDOWN_TAGS = {
    "h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "li", "table", "thead", "tbody", "tr", "th", "td",
    "code", "pre", "strong", "em", "del", "blockquote", "hr", "br", "a", "img", "input",
}  # fmt: skip


def html(markdown: str) -> str:
    return str(cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE))


@dataclass
class Page(HTMLParser):
    marker: str
    open: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    loose: list[str] = field(default_factory=list)  # marked text outside a code span
    rows: list[int] = field(default_factory=list)  # cells per row of the current table
    ragged: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__(convert_charrefs=True)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag not in MARKDOWN_TAGS:
            self.raw.append(tag)
        if tag == "a":
            self.links.append(values.get("href") or "")
        if tag == "img":
            self.images.append(values.get("src") or "")
        if tag == "tr":
            self.rows.append(0)
        if tag in ("td", "th") and self.rows:
            self.rows[-1] += 1
        if tag == "table":
            self.rows = []
        if tag not in ("img", "br", "hr", "input"):
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and len(set(self.rows)) > 1:
            self.ragged.append(self.rows)
        while self.open:
            if self.open.pop() == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.open and self.open[-1] in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.headings.append(data)
        if self.marker in data and "code" not in self.open:
            self.loose.append(data)


def read(markdown: str, marker: str) -> Page:
    page = Page(marker)
    page.feed(html(markdown))
    page.close()
    return page


def live(markdown: str, marker: str, *, own_links: tuple[str, ...] = ()) -> list[str]:
    """Everything of ``marker``-carrying outside text that GitHub would render as more than text (empty: inert).
    ``own_links``: the link targets qlab itself writes."""
    page = read(markdown, marker)
    out = [f"image {src}" for src in page.images]
    out += [f"link {href}" for href in page.links if href not in own_links]
    out += [f"raw HTML <{tag}>" for tag in page.raw]
    out += [f"heading {text!r}" for text in page.headings if marker in text]
    out += [f"text outside a code span: {text!r}" for text in page.loose]
    out += [f"table rows of unequal cells {rows}" for rows in page.ragged]
    return out
