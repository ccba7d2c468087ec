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
(`[tab]`), the XML's own indentation (runs of ASCII whitespace become one
space) and white space at the ends of a line (Fedlex puts a no-break space
between a paragraph number and its text in some editions and not in others).

How: a compiled walk over libxml2's nodes (`flatten.pyx`, through lxml's public C API)
reads each article's fields, lays out its lines and makes its record in one pass; the
article number's rule stays here, in Python, for the forms other than "Art. 5a bis". The XSLT stylesheet and Python line joiner it replaced were about 2x
a bare parse; they stay in the tests as the layout's specification, and the walk
must match them on every real file and on generated trees (docs/perf/parse.md).

Article key: (e_id, occurrence). Fedlex repeats eIds within one edition (the Civil
Code's final title reproduces old-law articles under the current ones' eIds,
`art_178` twice; the English CO carries `art_1040` twice). Such editions are data,
not corruption: every <article> is kept, `e_id` keeps Fedlex's published value, and
`occurrence` numbers the articles sharing an e_id 1, 2, ... in document order. As
long as Fedlex keeps the order of its containers (it always has: the final title
comes after the main body), the same article gets the same key in every edition,
which is what the change table pairs on. Repeated e_ids are excluded from items as
`ambiguous_article` (B9) by the builder, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from . import flatten
from .errors import AknError, EmptyArticle
from .identity import EditionIdentity, parse_xml, read_identity

PARSER_VERSION = "3"
"""Bump when the text layout or what ingest stores from a file changes: stored editions parsed by
another version are re-parsed."""

# The separators `flatten` marks blocks with (U+E000..U+E005) are Unicode private use, never Fedlex text.
# Every UTF-8 character U+E000..U+EFFF starts with this byte, and no other character contains it: a
# one-byte search (memchr) rules the separators out for nearly every file at no cost.
_SEPARATOR_LEAD = b"\xee"
_SEPARATORS = re.compile("[\ue000-\ue005]")
_RESERVED = "contains Unicode private-use characters U+E000..U+E005 (reserved by the parser)"

_ARTICLE_PREFIX = re.compile(r"^(?:art(?:icle|ikel|icolo|g)?\.?|§)\s*", re.IGNORECASE)
# "5", "5a", "268a bis", "179decies", "2quater": a number, optional letters, optional latin suffix words.
_ARTICLE_NUMBER = re.compile(r"^\d+[a-z]*(?: [a-z]+){0,2}$")


class Article(NamedTuple):
    # A NamedTuple, not a frozen dataclass: a large edition makes thousands, and construction shows.
    e_id: str
    occurrence: int  # 1, 2, ... among the edition's articles with this e_id, document order
    article_number: str | None  # None when the number did not parse (B8)
    heading: str | None
    text: str


@dataclass(frozen=True)
class ParsedEdition:
    identity: EditionIdentity
    articles: tuple[Article, ...]

    @property
    def n_repeated_eids(self) -> int:
        """How many articles repeat an e_id already seen earlier in the edition (a per-edition warning)."""
        return sum(1 for a in self.articles if a.occurrence > 1)


def parse_edition(data: bytes, where: str) -> ParsedEdition:
    """Parse one consolidated edition. Raises an AknError subclass naming `where` on bad input."""
    root = parse_xml(data, where)
    identity = read_identity(root, where)
    if _SEPARATOR_LEAD in data and _SEPARATORS.search(data.decode("utf-8", "replace")):
        raise AknError(where, _RESERVED)
    if root.find("./{*}act/{*}body") is None:
        raise AknError(where, "no act/body element")
    try:
        articles = flatten.articles(root, Article, _article_number)
    except flatten.ReservedCharacter:
        # A character reference (&#xE002;) puts a separator into the text that the bytes did not show.
        raise AknError(where, _RESERVED) from None
    except flatten.MissingEId:
        raise AknError(where, "an <article> without eId") from None
    except flatten.LostText as exc:
        # A repealed article is only a number (and a footnote): its empty text is data. One with blocks
        # whose text came out empty lost its wording.
        raise EmptyArticle(where, f"article {exc.e_id} (occurrence {exc.occurrence}) has content but no text") from None
    if not articles:
        raise AknError(where, "no articles in the body")
    return ParsedEdition(identity, tuple(articles))


def _article_number(num_text: str, e_id: str) -> str | None:
    # "Art." is nearly every number's prefix in every language; the regex below removes the same
    # ("Art." then white space, which strip() takes as well) at several times the cost.
    candidate = num_text[4:].strip() if num_text.startswith("Art.") else _ARTICLE_PREFIX.sub("", num_text).strip()
    if not candidate:
        # No printed number: read it off the e_id's last segment (art_5_a -> 5a, art_268_a_bis -> 268a bis).
        last = e_id.rsplit("/", 1)[-1]
        if not last.startswith("art_"):
            return None
        head, *rest = last[4:].split("_")
        candidate = head + "".join(rest[:1]) + "".join(" " + r for r in rest[1:])
    return candidate if _ARTICLE_NUMBER.match(candidate) else None
