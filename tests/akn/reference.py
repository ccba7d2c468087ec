"""The extraction the compiled walk (chpit_assets/akn/flatten.pyx) replaced, kept as its specification.

Until issue 27.3 the parser flattened every article with this XSLT stylesheet (libxslt) and joined
the lines in Python. That code defines the text layout (parser.py's docstring) and it is what every
pinned digest was computed with; `reference_articles` runs it as it ran, so the differential tests
can hold the walk to it on any tree, real or generated. `reference_records` makes those fields into
the parser's records as the parser's Python loop made them before the walk took that over too.
"""

from __future__ import annotations

import re

from lxml import etree

from chpit_assets.akn import flatten
from chpit_assets.akn.parser import Article, _article_number

_ARTICLE, _FIELD, _LINE, _NUM, _END, _CELL = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005"
_SPACES = re.compile("  +")

_CONTAINERS = "|".join(
    f"a:{t}"
    for t in (
        "content",
        "intro",
        "wrapUp",
        "subdivision",
        "hcontainer",
        "level",
        "section",
        "list",
        "container",
        "div",
        "subparagraph",
        "point",
        "alinea",
        "blockContainer",
        "blockList",
        "transitional",
    )
)
_STYLESHEET = f"""<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:a="http://docs.oasis-open.org/legaldocml/ns/akn/3.0">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template match="/">
    <xsl:for-each select="/a:akomaNtoso/a:act/a:body//a:article">
      <xsl:text>&#xE000;</xsl:text><xsl:value-of select="@eId"/>
      <xsl:text>&#xE001;</xsl:text><xsl:apply-templates select="a:num" mode="inline"/>
      <xsl:text>&#xE001;</xsl:text><xsl:apply-templates select="a:heading" mode="inline"/>
      <xsl:text>&#xE001;</xsl:text><xsl:apply-templates select="*[not(self::a:num or self::a:heading)]" mode="block"/>
    </xsl:for-each>
  </xsl:template>
  <!-- Not wording: footnotes (their tail, the running text, is kept) and layout placeholders. A number
       is read where its paragraph or item puts it, so in block mode it is skipped (cheaper than a
       predicate on every paragraph's children). -->
  <xsl:template match="a:authorialNote|a:placeholder" mode="inline"/>
  <xsl:template match="a:authorialNote|a:placeholder|a:num" mode="block"/>
  <xsl:template match="a:br" mode="inline"><xsl:text> </xsl:text></xsl:template>
  <!-- A paragraph or list item: its number, then its blocks; the number joins the first line in Python. -->
  <xsl:template match="a:paragraph|a:item" mode="block">
    <xsl:text>&#xE002;&#xE003;</xsl:text><xsl:apply-templates select="a:num" mode="inline"/>
    <xsl:apply-templates select="*" mode="block"/>
    <xsl:text>&#xE002;&#xE004;</xsl:text>
  </xsl:template>
  <xsl:template match="{_CONTAINERS}" mode="block"><xsl:apply-templates select="*" mode="block"/></xsl:template>
  <xsl:template match="a:table" mode="block">
    <xsl:for-each select=".//a:tr">
      <xsl:text>&#xE002;</xsl:text>
      <xsl:for-each select="a:td|a:th">
        <xsl:if test="position() &gt; 1"><xsl:text>&#xE005;</xsl:text></xsl:if>
        <xsl:apply-templates mode="inline"/>
      </xsl:for-each>
    </xsl:for-each>
  </xsl:template>
  <!-- p, listIntroduction, a subdivision's heading, anything else: one line of its inline text. -->
  <xsl:template match="*" mode="block"><xsl:text>&#xE002;</xsl:text><xsl:apply-templates mode="inline"/></xsl:template>
</xsl:stylesheet>"""
_FLATTEN = etree.XSLT(etree.XML(_STYLESHEET.encode("utf-8")))


def reference_records(root: etree._Element) -> list[Article]:
    """What `flatten.articles(root, Article, _article_number)` must return: per article the record with
    its occurrence among the articles sharing its e_id and its number by the parser's Python rule;
    MissingEId or LostText raised for the first article without an eId or without the text its
    blocks had."""
    seen: dict[str, int] = {}
    records = []
    for e_id, num, heading, text, has_blocks in reference_articles(root):
        if not e_id:
            raise flatten.MissingEId()
        occurrence = seen[e_id] = seen.get(e_id, 0) + 1
        if not text and has_blocks:
            raise flatten.LostText(e_id, occurrence)
        records.append(Article(e_id, occurrence, _article_number(num, e_id), heading, text))
    return records


def reference_articles(root: etree._Element) -> list[tuple[str, str, str | None, str, bool]]:
    """(e_id, num, heading, text, has_blocks) per article: the fields the stylesheet flattened."""
    flat = str(_FLATTEN(root)).replace("\n", " ").replace("\t", " ").replace("\r", " ")
    out = []
    for record in flat.split(_ARTICLE)[1:]:
        e_id, num, heading, body = (_collapse(field) for field in record.split(_FIELD, 3))
        out.append((e_id, num.strip(), heading.strip() or None, _lines(body), _LINE in body))
    return out


def _collapse(text: str) -> str:
    # Runs of spaces become one (the XML's indentation; \n \t \r are spaces by now). Field by field,
    # not over the whole edition: a regex over 2 MB cost more than the substring tests of each field.
    return _SPACES.sub(" ", text) if "  " in text else text


def _lines(body: str) -> str:
    """Join the flattened blocks of one article into its text; numbers join their first line."""
    lines: list[str] = []
    append = lines.append
    pending = ""  # numbers not yet placed: "5", or "5 a." for an item that opens its paragraph
    for piece in body.split(_LINE):
        head = piece[:1]
        if head == _NUM:
            number = piece[1:].strip()
            if number:
                pending = f"{pending} {number}" if pending else number
        elif head == _END:
            if pending:  # a numbered element with no text of its own
                append(pending)
                pending = ""
        else:
            if _CELL in piece:
                piece = "\t".join(cell.strip() for cell in piece.split(_CELL))
            line = piece.strip()
            if line:
                if pending:
                    line = f"{pending} {line}"
                    pending = ""
                append(line)
    return "\n".join(lines)
