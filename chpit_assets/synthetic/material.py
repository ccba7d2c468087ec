"""Raw material: real Fedlex articles from the shipped sample, aligned across languages.

A synthetic act is assembled from copies of these `<article>` elements, so every
element shape the parser meets in a synthetic file (spans, `<i>` suffixes,
lists with introductions, nested list items, footnotes mid-word and in headings)
is one Fedlex really publishes. Only articles that exist with the same structure
(the same e_ids in the same order) in every requested language are used: an
amendment then targets the same paragraph in each language, as a real amending
act does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from chpit_assets.akn.errors import AknError
from chpit_assets.akn.identity import AKN_NS, parse_xml, read_identity

_ARTICLE = f"{{{AKN_NS}}}article"
_TABLE = f"{{{AKN_NS}}}table"
MIN_TEMPLATES = 20  # fewer than this and acts would repeat the same few articles over and over


class MaterialError(ValueError):
    """The sample does not hold enough aligned articles for the requested languages."""


@dataclass(frozen=True)
class Template:
    source: str  # "cc-2022-491/20250707 art_24": where the article came from
    articles: dict[str, etree._Element]  # lang -> <article> in the sample's tree; copied on use, never edited


def _structure(article: etree._Element) -> tuple[str, ...]:
    return tuple(el.get("eId") for el in article.iter() if el.get("eId"))


def load_material(sample_dir: Path, langs: tuple[str, ...]) -> list[Template]:
    """Top-level articles of the sample's latest edition of each act, present with the same structure in
    every language of `langs`, in a stable order (act folder, then document order)."""
    latest: dict[str, dict[str, Path]] = {}
    for path in sorted(Path(sample_dir).glob("*/*.xml")):
        day, _, lang = path.stem.partition("-")
        if lang in langs:
            # Sorted by name = by date within a folder, so the last one seen is the latest edition.
            latest.setdefault(path.parent.name, {})[lang] = path
    templates: list[Template] = []
    for folder, by_lang in sorted(latest.items()):
        if set(by_lang) != set(langs):
            continue
        docs: dict[str, dict[str, etree._Element]] = {}
        try:
            for lang, path in by_lang.items():
                root = parse_xml(path.read_bytes(), str(path))
                read_identity(root, str(path))  # the sample's Federal Gazette text is not a consolidation
                docs[lang] = {a.get("eId"): a for a in root.iter(_ARTICLE)}
        except AknError:
            continue
        first = docs[langs[0]]
        for e_id, article in first.items():
            if "/" in e_id or any(e_id not in docs[lang] for lang in langs):
                continue
            versions = {lang: docs[lang][e_id] for lang in langs}
            if len({_structure(a) for a in versions.values()}) != 1 or article.find(f".//{_TABLE}") is not None:
                continue
            templates.append(Template(f"{folder}/{by_lang[langs[0]].stem[:8]} {e_id}", versions))
    if len(templates) < MIN_TEMPLATES:
        raise MaterialError(
            f"{sample_dir}: only {len(templates)} articles are aligned across {', '.join(langs)} "
            f"(need {MIN_TEMPLATES}); the sample has no act in all of these languages"
        )
    return templates
