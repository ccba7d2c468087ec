"""Real article texts from the Fedlex sample, for scorer tests and the benchmark.

Deliberately simple (this is not the pipeline's parser): an article's text
is its paragraphs, one per line as ``"{num} {text}"``, the layout S2 expects;
an article without numbered paragraphs is its body as one line. Footnotes
(``authorialNote``) are dropped, since they sit mid-word in Fedlex XML.
"""
from __future__ import annotations

import re
from copy import deepcopy
from functools import lru_cache
from pathlib import Path

from lxml import etree

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
_AKN = "{http://docs.oasis-open.org/legaldocml/ns/akn/3.0}"
_SPACE = re.compile(r"\s+")


_BLOCKS = {f"{_AKN}{t}" for t in ("p", "listIntroduction", "item", "blockList", "num")}


def _text(el: etree._Element) -> str:
    el = deepcopy(el)
    # Footnote markers sit mid-word ("Verant<authorialNote>..</>wortliche"):
    # drop the note, keep the text after it.
    etree.strip_elements(el, f"{_AKN}authorialNote", with_tail=False)
    # Block elements (list items "a.", "b.") follow each other with no
    # whitespace in the XML; give each a separating space.
    for node in el.iter():
        if node is not el and node.tag in _BLOCKS:
            node.tail = " " + (node.tail or "")
    return _SPACE.sub(" ", "".join(el.itertext())).strip()


def _article_text(article: etree._Element) -> str:
    paragraphs = article.findall(f"{_AKN}paragraph")
    if not paragraphs:
        body = [c for c in article if c.tag not in (f"{_AKN}num", f"{_AKN}heading")]
        return " ".join(t for t in (_text(c) for c in body) if t)
    lines = []
    for para in paragraphs:
        num = para.find(f"{_AKN}num")
        label = _text(num) if num is not None else ""
        body = " ".join(_text(c) for c in para if c.tag != f"{_AKN}num")
        lines.append(f"{label} {body}".strip())
    return "\n".join(lines)


@lru_cache(maxsize=None)
def articles(relpath: str) -> dict[str, str]:
    """``{eId: text}`` for every top-level-numbered article of one sample file."""
    tree = etree.parse(str(SAMPLE / relpath))
    out = {}
    for art in tree.iter(f"{_AKN}article"):
        text = _article_text(art)
        if text:
            out[art.get("eId")] = text
    return out
