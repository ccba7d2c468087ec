"""Fedlex Akoma Ntoso edition -> articles with verbatim text.

Layout of `text` (the scorer depends on it, S2): one line per paragraph,
starting with Fedlex's paragraph number and a space ("1 Der ...", "5bis Der ...");
a list's introduction stays on its paragraph's line and each list item gets a
line of its own ("a. ein Grund ..."); a table row is one line, cells separated by
a tab. The article heading is NOT part of `text` (it is kept in `heading`):
it is not wording of the law, no question asks for it, and in an unnumbered
article it would merge into the first sentence unit.

Verbatim means: characters as Fedlex publishes them, soft hyphens and no-break
spaces included. Only what is not wording is left out: footnotes
(`authorialNote`, which sit mid-word and inside `<num>`), layout placeholders
(`[tab]`) and the XML's own indentation (runs of ASCII whitespace become one space).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from .errors import AknError
from .identity import AKN_NS, EditionIdentity, parse_xml, read_identity

PARSER_VERSION = "1"
"""Bump when the text layout changes: stored editions parsed by another version are re-parsed."""

_NS = "{" + AKN_NS + "}"
_SKIP = {_NS + "authorialNote", _NS + "placeholder"}
# Containers whose children are blocks; everything else inside a block is inline text.
_CONTAINERS = {
    _NS + t
    for t in ("content", "intro", "wrapUp", "subdivision", "hcontainer", "level", "section", "list", "container",
              "div", "subparagraph", "point", "alinea", "blockContainer")
}
_ASCII_SPACE = re.compile(r"[ \t\r\n]+")
_ARTICLE_PREFIX = re.compile(r"^(?:art(?:icle|ikel|icolo|g)?\.?|§)\s*", re.IGNORECASE)
# "5", "5a", "268a bis", "179decies", "2quater": a number, optional letters, optional latin suffix words.
_ARTICLE_NUMBER = re.compile(r"^\d+[a-z]*(?: [a-z]+){0,2}$")


@dataclass(frozen=True)
class Article:
    e_id: str
    article_number: str | None   # None when the number did not parse (B8)
    heading: str | None
    text: str


@dataclass(frozen=True)
class ParsedEdition:
    identity: EditionIdentity
    articles: tuple[Article, ...]


def parse_edition(data: bytes, where: str) -> ParsedEdition:
    """Parse one consolidated edition. Raises an AknError subclass naming `where` on bad input."""
    root = parse_xml(data, where)
    identity = read_identity(root, where)
    body = root.find(f"./{_NS}act/{_NS}body")
    if body is None:
        raise AknError(where, "no act/body element")
    articles = []
    seen: set[str] = set()
    for article in body.iter(_NS + "article"):
        e_id = article.get("eId")
        if not e_id:
            raise AknError(where, f"an <article> without eId (line {article.sourceline})")
        if e_id in seen:
            raise AknError(where, f"duplicate article eId {e_id!r}")
        seen.add(e_id)
        articles.append(_article(article, e_id))
    if not articles:
        raise AknError(where, "no articles in the body")
    return ParsedEdition(identity, tuple(articles))


def _article(article: etree._Element, e_id: str) -> Article:
    num_el = article.find(_NS + "num")
    heading_el = article.find(_NS + "heading")
    lines: list[str] = []
    for child in article:
        if child is num_el or child is heading_el:
            continue
        _block(child, lines)
    heading = _inline(heading_el) if heading_el is not None else ""
    return Article(
        e_id=e_id,
        article_number=_article_number(_inline(num_el) if num_el is not None else "", e_id),
        heading=heading or None,
        text="\n".join(line for line in lines if line),
    )


def _article_number(num_text: str, e_id: str) -> str | None:
    candidate = _ARTICLE_PREFIX.sub("", num_text).strip()
    if not candidate:
        # No printed number: read it off the e_id's last segment (art_5_a -> 5a, art_268_a_bis -> 268a bis).
        last = e_id.rsplit("/", 1)[-1]
        if not last.startswith("art_"):
            return None
        head, *rest = last[4:].split("_")
        candidate = head + "".join(rest[:1]) + "".join(" " + r for r in rest[1:])
    return candidate if _ARTICLE_NUMBER.match(candidate) else None


def _block(el: etree._Element, lines: list[str]) -> None:
    """Append the lines of one block-level element."""
    tag = el.tag
    if not isinstance(tag, str) or tag in _SKIP:
        return
    if tag == _NS + "paragraph":
        _numbered(el, lines)
    elif tag == _NS + "blockList":
        for child in el:
            if child.tag == _NS + "listIntroduction" or child.tag == _NS + "listWrapUp":
                lines.append(_inline(child))
            elif child.tag == _NS + "item":
                _numbered(child, lines)
            else:
                _block(child, lines)
    elif tag == _NS + "table":
        for row in el.iter(_NS + "tr"):
            cells = [_inline(cell) for cell in row if cell.tag in (_NS + "td", _NS + "th")]
            if any(cells):
                lines.append("\t".join(cells))
    elif tag in _CONTAINERS:
        for child in el:
            _block(child, lines)
    else:
        # p, heading of a subdivision, and anything unknown: one line of its inline text.
        lines.append(_inline(el))


def _numbered(el: etree._Element, lines: list[str]) -> None:
    """A paragraph or list item: its number, a space and its first line; later blocks on lines of their own."""
    num_el = el.find(_NS + "num")
    num = _inline(num_el) if num_el is not None else ""
    own: list[str] = []
    for child in el:
        if child is not num_el:
            _block(child, own)
    own = [line for line in own if line]
    if num:
        own = [f"{num} {own[0]}" if own else num] + own[1:]
    lines.extend(own)


def _inline(el: etree._Element) -> str:
    parts: list[str] = []
    _collect(el, parts)
    # Interior no-break spaces are wording ("Art.\u00a024"); at a line's ends they are typesetting
    # (Fedlex puts one between a paragraph number and its text in some editions, not in others).
    return _ASCII_SPACE.sub(" ", "".join(parts)).strip()


def _collect(el: etree._Element, parts: list[str]) -> None:
    if el.text and el.tag not in _SKIP:
        parts.append(el.text)
    for child in el:
        if isinstance(child.tag, str) and child.tag not in _SKIP:
            if child.tag == _NS + "br":
                parts.append(" ")
            _collect(child, parts)
        # A footnote's or placeholder's tail is running text: "Wort<authorialNote/>teil" -> "Wortteil".
        if child.tail:
            parts.append(child.tail)
