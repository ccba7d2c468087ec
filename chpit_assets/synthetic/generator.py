"""Write a synthetic corpus: Fedlex-shaped AKN editions, a `catalog.json` that `load_sample_catalog`
reads, and a manifest of every amendment shape applied.

Layout of `out` (mirrors `data/fedlex-sample/`):

    catalog.json                      same shape as the sample's, plus "synthetic": true
    manifest.jsonl                    one line per amendment shape (and per catalog-only shape)
    cc-<year>-<n>/<YYYYMMDD>-<lang>.xml

How an act is made: its first edition copies real articles (`material.py`) into a
Fedlex document (meta, preface, preamble, chapters, optionally nested transitional
provisions `disp_u1/art_N`), renumbered 1..K. Each later edition applies a few
amendment shapes (`amendments.py`) to that same tree in every language, then the
tree is serialised. Nothing but one act's trees is ever in memory, files go
straight to disk, and acts are independent (each has its own seeded RNG), so they
are generated in parallel and the output is byte-identical for the same
parameters whatever the number of workers.

Which act gets which catalog-only shape is fixed by its index (so even a tiny
corpus has each), and article shapes are taken in a rotating order per act, so
every shape occurs once an act has about ten amendments.
"""

from __future__ import annotations

import copy
import hashlib
import json
import multiprocessing
import os
import random
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path

from lxml import etree

from chpit_assets.akn.identity import AKN_NS

from . import SYNTHETIC_ELI_ROOT, SYNTHETIC_HOST, SYNTHETIC_SR_PREFIX
from .amendments import (
    ARTICLE_SHAPES,
    EXPECTED_CHANGE,
    WORDING,
    Occasion,
    make_note,
    q,
)
from .material import Template, load_material

MARKER = ".synthetic-corpus"  # written first: a folder with it may be wiped and regenerated
FIRST_MONTH = date(2000, 1, 1)
# The rotation of article shapes; repeats weight the common ones (Fedlex amendments are mostly
# rewordings and new paragraphs, rarely whole articles).
SHAPE_CYCLE: tuple[str, ...] = (
    "word_changed",
    "number_changed",
    "paragraph_inserted",
    "clause_appended",
    "footnote_only",
    "sentence_removed",
    "word_changed",
    "article_added",
    "paragraph_removed",
    "number_changed",
    "article_repealed",
    "clause_appended",
    "article_dropped",
    "paragraph_inserted",
)
MIN_ARTICLES_LEFT = 3  # article_dropped never empties an act
RESERVE = 8  # templates kept out of an act's first edition, for article_added and transitional ones

_ARTICLE, _NUM, _B, _I, _REF, _HEADING = q("article"), q("num"), q("b"), q("i"), q("ref"), q("heading")

_LANG_TEXT: dict[str, dict[str, str]] = {
    "de": {
        "chapter": "{n}. Kapitel:",
        "stand": "vom {adopted} (Stand am {day})",
        "office": "Bundeskanzlei",
        "title": "Synthetisches Bundesgesetz Nr. {n} über Testdaten",
        "paren": "Synthetikgesetz {n}",
        "short": "SYN{n}",
        "doc_title": "Synthetisches Bundesgesetz<br/>über Testdaten Nr. {n}",
        "transitional": "Übergangsbestimmungen zur Änderung vom {day}",
        "preamble": "Die Bundesversammlung der Schweizerischen Eidgenossenschaft,|beschliesst:",
        "eu": "DEU",
        "headings": "Allgemeine Bestimmungen|Pflichten|Verfahren|Aufsicht|Schlussbestimmungen",
    },
    "fr": {
        "chapter": "Chapitre {n}",
        "stand": "du {adopted} (État le {day})",
        "office": "Chancellerie fédérale",
        "title": "Loi fédérale synthétique no {n} sur les données de test",
        "paren": "Loi synthétique {n}",
        "short": "LSYN{n}",
        "doc_title": "Loi fédérale synthétique<br/>sur les données de test no {n}",
        "transitional": "Dispositions transitoires relatives à la modification du {day}",
        "preamble": "L’Assemblée fédérale de la Confédération suisse,|arrête:",
        "eu": "FRA",
        "headings": "Dispositions générales|Obligations|Procédure|Surveillance|Dispositions finales",
    },
    "it": {
        "chapter": "Capitolo {n}:",
        "stand": "del {adopted} (Stato {day})",
        "office": "Cancelleria federale",
        "title": "Legge federale sintetica n. {n} sui dati di prova",
        "paren": "Legge sintetica {n}",
        "short": "LSIN{n}",
        "doc_title": "Legge federale sintetica<br/>sui dati di prova n. {n}",
        "transitional": "Disposizioni transitorie della modifica del {day}",
        "preamble": "L’Assemblea federale della Confederazione Svizzera,|decreta:",
        "eu": "ITA",
        "headings": "Disposizioni generali|Obblighi|Procedura|Vigilanza|Disposizioni finali",
    },
    "en": {
        "chapter": "Chapter {n}",
        "stand": "of {adopted} (Status as of {day})",
        "office": "Federal Chancellery",
        "title": "Synthetic Federal Act No {n} on Test Data",
        "paren": "Synthetic Act {n}",
        "short": "SYNA{n}",
        "doc_title": "Synthetic Federal Act<br/>on Test Data No {n}",
        "transitional": "Transitional Provisions of the Amendment of {day}",
        "preamble": "The Federal Assembly of the Swiss Confederation,|decrees:",
        "eu": "ENG",
        "headings": "General Provisions|Obligations|Procedure|Supervision|Final Provisions",
    },
}
SUPPORTED_LANGS: tuple[str, ...] = tuple(_LANG_TEXT)
# Every file names the act in all four languages, in this order (as the sample's files do).
_NAME_ORDER: tuple[str, ...] = ("en", "it", "de", "fr")


class SyntheticError(ValueError):
    """Bad generator parameters, or an output folder that is not a synthetic corpus."""


@dataclass(frozen=True)
class Params:
    acts: int
    editions_per_act: int
    langs: tuple[str, ...] = ("de", "fr", "it")
    seed: int = 1
    today: date = date(2026, 1, 1)  # "future-dated" means after this; fixed, never the wall clock
    articles: tuple[int, int] = (10, 60)  # articles per act in its first edition, min and max

    def check(self) -> None:
        months = _month_index(self.today) - _month_index(FIRST_MONTH)
        if self.acts < 1 or self.editions_per_act < 1:
            raise SyntheticError("need at least one act and one edition per act")
        if self.editions_per_act > months:
            raise SyntheticError(f"at most {months} editions per act fit between {FIRST_MONTH} and {self.today}")
        if not self.langs or len(set(self.langs)) != len(self.langs):
            raise SyntheticError(f"languages must be distinct and non-empty: {self.langs}")
        unsupported = [lang for lang in self.langs if lang not in SUPPORTED_LANGS]
        if unsupported:
            raise SyntheticError(f"no synthetic wording for {unsupported}; supported: {', '.join(SUPPORTED_LANGS)}")
        lo, hi = self.articles
        if not 1 <= lo <= hi:
            raise SyntheticError(f"articles range {self.articles} must satisfy 1 <= min <= max")

    def as_json(self) -> dict:
        d = asdict(self)
        d["today"] = self.today.isoformat()
        return d


@dataclass
class Summary:
    acts: int = 0
    editions: int = 0  # catalog entries (edition x language), files or not
    files: int = 0
    bytes: int = 0
    amendments: int = 0  # manifest lines for article shapes (per language)
    shapes: dict[str, int] = field(default_factory=dict)


def _month_index(d: date) -> int:
    return d.year * 12 + d.month - 1


def _month(index: int) -> date:
    return date(index // 12, index % 12 + 1, 1)


def next_month(d: date) -> date:
    """The first day of the month after `d`'s."""
    return _month(_month_index(d) + 1)


def _day(d: date) -> str:
    return f"{d.day}.{d.month}.{d.year}"


# --- one act ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Act:
    index: int
    n: int
    eli: str
    sr_number: str
    folder: str
    starts: tuple[date, ...]
    ends: tuple[date | None, ...]
    skipped: frozenset[int]
    overlap: int | None
    future: bool
    abbreviations: str  # "curated" | "title_paren" | "none" (B7 paths)
    number_in_frbr: bool  # FRBRnumber filled, or empty with the SR in <docNumber> (both real)

    def consolidation(self, edition: int) -> str:
        return f"{self.eli}/{self.starts[edition]:%Y%m%d}"

    def title(self, lang: str) -> tuple[str, str | None]:
        t = _LANG_TEXT[lang]
        short = t["short"].format(n=self.n)
        if self.abbreviations == "none":
            return t["title"].format(n=self.n), None
        title = f"{t['title'].format(n=self.n)} ({t['paren'].format(n=self.n)}, {short})"
        return title, short if self.abbreviations == "curated" else None


def _plan_act(index: int, params: Params, rng: random.Random) -> _Act:
    m = params.editions_per_act
    n = index + 1
    # Catalog-only shapes by index, so that every corpus of 4+ acts has each of them.
    kind = index % 8
    future = kind in (3, 6) and m >= 2
    window = range(_month_index(FIRST_MONTH), _month_index(params.today))
    months = sorted(rng.sample(window, m - 1 if future else m))
    if future:
        months.append(_month_index(params.today) + rng.randint(1, 18))
    starts = tuple(_month(i) for i in months)
    skipped = frozenset({rng.randrange(1, m - 1)}) if kind in (1, 6) and m >= 3 else frozenset()
    overlap_candidates = [i for i in range(m - 1) if i not in skipped and i + 1 not in skipped]
    overlap = rng.choice(overlap_candidates) if kind == 2 and overlap_candidates else None
    ends: list[date | None] = []
    for i in range(m):
        if i == m - 1:
            ends.append(None)
        elif i == overlap:
            # Fedlex quirk: the old edition's inclusive end reaches into the next one (B11).
            ends.append(starts[i + 1] + timedelta(days=rng.randint(0, 20)))
        else:
            ends.append(starts[i + 1] - timedelta(days=1))
    year = starts[0].year
    abbreviations = "none" if index % 20 == 7 else "title_paren" if index % 10 == 4 else "curated"
    return _Act(
        index=index,
        n=n,
        eli=f"{SYNTHETIC_ELI_ROOT}/{year}/{n}",
        sr_number=f"{SYNTHETIC_SR_PREFIX}{n}",
        folder=f"cc-{year}-{n}",
        starts=starts,
        ends=tuple(ends),
        skipped=skipped,
        overlap=overlap,
        future=future,
        abbreviations=abbreviations,
        number_in_frbr=index % 2 == 1,
    )


class _Document:
    """One language's edition tree of one act, kept across editions and edited in place."""

    def __init__(self, act: _Act, lang: str, adopted: date):
        t = _LANG_TEXT[lang]
        names = "".join(
            f'<FRBRname xml:lang="{code}" value="{_attr(act.title(code)[0])}"'
            + (f' shortForm="{act.title(code)[1]}"' if act.title(code)[1] else "")
            + "/>"
            for code in _NAME_ORDER
        )
        number = act.sr_number if act.number_in_frbr else ""
        adopted_s, entry = adopted.isoformat(), act.starts[0].isoformat()
        dates = (
            f'<FRBRdate date="{adopted_s}" name="jolux:dateDocument"/>'
            f'<FRBRdate date="{entry}" name="jolux:dateEntryInForce"/>'
            f'<FRBRdate date="" name="jolux:dateApplicability"/>'
            '<FRBRauthor href="#ch.bk" as="#publisher"/><FRBRauthor href="#ch.bk" as="#rightsHolder"/>'
        )
        paren = act.title(lang)[0].rpartition("(")[2].rstrip(")") if act.abbreviations != "none" else ""
        intro, enact = t["preamble"].split("|")
        xml = (
            f'<akomaNtoso xmlns="{AKN_NS}" xmlns:fedlex="http://fedlex.admin.ch/"><act name="publicLaw"><meta>'
            f'<identification source="#ch.bk"><FRBRWork><FRBRthis value=""/><FRBRuri value=""/>{dates}'
            f'<FRBRcountry value="CH"/><FRBRnumber value="{number}"/>{names}<FRBRauthoritative value="true"/>'
            f'</FRBRWork><FRBRExpression><FRBRthis value=""/><FRBRuri value=""/>{dates}'
            f'<FRBRlanguage language="{lang}"/></FRBRExpression><FRBRManifestation><FRBRthis value=""/>'
            f'<FRBRuri value=""/>{dates}<FRBRformat value="xml" fedlex:generator="chpit-synthetic"/>'
            f'</FRBRManifestation></identification><references source="#ch.bk">'
            f'<TLCOrganization eId="ch.bk" href="https://{SYNTHETIC_HOST}/vocabulary/legal-institution/2" '
            f'showAs="{t["office"]}"/><TLCRole eId="publisher" '
            'href="http://data.legilux.public.lu/resource/ontology/jolux#publisher" showAs="Editeur"/>'
            '<TLCRole eId="rightsHolder" href="http://data.legilux.public.lu/resource/ontology/jolux#rightsHolder" '
            'showAs="Détenteur des droits"/><TLCReference name="language" '
            f'href="http://publications.europa.eu/resource/authority/language/{t["eu"]}" showAs="{lang}"/>'
            f"</references></meta><preface><p><docNumber>{act.sr_number} </docNumber></p>"
            f"<p><docTitle>{t['doc_title'].format(n=act.n)}</docTitle></p>"
            + (f"<p>({_attr(paren)})</p>" if paren else "")
            + f"<p></p></preface><preamble><p>{intro}</p><p>{enact}</p></preamble><body/></act></akomaNtoso>"
        )
        self.root = etree.fromstring(xml.encode("utf-8"))
        self.lang = lang
        self.act = act
        ident = self.root.find(f"./{q('act')}/{q('meta')}/{q('identification')}")
        self._this = [el.find(q("FRBRthis")) for el in ident]
        self._uri = [el.find(q("FRBRuri")) for el in ident]
        self._applicability = [d for d in ident.iter(q("FRBRdate")) if d.get("name") == "jolux:dateApplicability"]
        self._stand = self.root.find(f"./{q('act')}/{q('preface')}")[-1]
        self._adopted = adopted
        self.body = self.root.find(f"./{q('act')}/{q('body')}")

    def serialise(self, edition: int) -> bytes:
        """The edition's bytes: identity (uris, dateApplicability, "Stand am") set for `edition`."""
        day = self.act.starts[edition]
        work = self.act.consolidation(edition)
        for el, value in zip(
            self._this, (f"{work}/main-text", f"{work}/{self.lang}/main-text", f"{work}/{self.lang}/xml/main-text")
        ):
            el.set("value", value)
        for el, value in zip(self._uri, (work, f"{work}/{self.lang}", f"{work}/{self.lang}/xml")):
            el.set("value", value)
        for el in self._applicability:
            el.set("date", day.isoformat())
        self._stand.text = _LANG_TEXT[self.lang]["stand"].format(adopted=_day(self._adopted), day=_day(day))
        return b'<?xml version="1.0" encoding="UTF-8"?>\n' + etree.tostring(self.root, encoding="utf-8")


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _place(template_article: etree._Element, e_id: str, number: str, letter: str | None = None) -> etree._Element:
    """A copy of a real article under a new e_id and printed number; its own footnotes are kept (their
    links moved to the synthetic host)."""
    article = copy.deepcopy(template_article)
    old = article.get("eId")
    for el in article.iter():
        value = el.get("eId")
        if value is not None and (value == old or value.startswith(old + "/")):
            el.set("eId", e_id + value[len(old) :])
    for ref in article.iter(_REF):
        href = ref.get("href") or ""
        if "://fedlex.data.admin.ch/" in href:
            ref.set("href", href.replace("://fedlex.data.admin.ch/", f"://{SYNTHETIC_HOST}/"))
    num = article.find(_NUM)
    if num is None:
        num = article.makeelement(_NUM, {})
        article.insert(0, num)
    notes = [c for c in num if c.tag == q("authorialNote")]
    num.clear(keep_tail=True)
    etree.SubElement(num, _B).text = f"Art. {number}"
    if letter:
        etree.SubElement(num, _I).text = letter
    for note in notes:
        num.append(note)
    return article


def _chapters(rng: random.Random, k: int) -> list[int]:
    sizes = []
    while k > 0:
        size = min(k, rng.randint(4, 14))
        sizes.append(size)
        k -= size
    return sizes


@dataclass
class _State:
    docs: dict[str, _Document]
    reserve: list[Template]
    touched: set[str]  # e_ids amended since the last edition with files: one shape per article per diff

    def articles(self) -> list[str]:
        first = next(iter(self.docs.values()))
        return [a.get("eId") for a in first.root.iter(_ARTICLE)]

    def find(self, lang: str, e_id: str) -> etree._Element:
        return self.docs[lang].root.find(f".//{_ARTICLE}[@eId='{e_id}']")


def _build_first(act: _Act, params: Params, templates: list[Template], rng: random.Random) -> _State:
    order = list(range(len(templates)))
    rng.shuffle(order)
    lo, hi = params.articles
    k = rng.randint(min(lo, len(templates) - RESERVE), min(hi, len(templates) - RESERVE))
    chosen, reserve = [templates[i] for i in order[:k]], [templates[i] for i in order[k:]]
    sizes = _chapters(rng, k)
    transitional = act.index % 3 == 0 and k >= 3
    t_count = rng.randint(1, 2) if transitional else 0
    t_templates = [reserve.pop() for _ in range(t_count)]
    adopted = act.starts[0] - timedelta(days=rng.randint(120, 900))
    t_day = act.starts[0] - timedelta(days=rng.randint(1, 60))
    docs = {}
    for lang in params.langs:
        doc = _Document(act, lang, adopted)
        headings = _LANG_TEXT[lang]["headings"].split("|")
        number = 0
        for c, size in enumerate(sizes, start=1):
            chapter = etree.SubElement(doc.body, q("chapter"), eId=f"chap_{c}")
            etree.SubElement(chapter, _NUM).text = _LANG_TEXT[lang]["chapter"].format(n=c)
            etree.SubElement(chapter, _HEADING).text = headings[(c - 1) % len(headings)]
            for template in chosen[number : number + size]:
                number += 1
                chapter.append(_place(template.articles[lang], f"art_{number}", str(number)))
        if t_templates:
            # Nested transitional provisions restart at Art. 1: the same number as a top-level article (B9).
            disp = etree.SubElement(doc.body, q("transitional"), eId="disp_u1")
            etree.SubElement(disp, _HEADING).text = _LANG_TEXT[lang]["transitional"].format(day=_day(t_day))
            for i, template in enumerate(t_templates, start=1):
                disp.append(_place(template.articles[lang], f"disp_u1/art_{i}", str(i)))
        docs[lang] = doc
    return _State(docs=docs, reserve=reserve, touched=set())


def _candidates(state: _State, shape: str) -> list[str]:
    """Articles every language can take `shape` on, not yet amended in this diff."""
    free = [e for e in state.articles() if e not in state.touched]
    if shape == "article_added":
        if not state.reserve:
            return []
        return [e for e in free if "/" not in e and e[4:].isdigit()]
    if shape == "article_dropped":
        return free if len(state.articles()) > MIN_ARTICLES_LEFT else []
    can = ARTICLE_SHAPES[shape].can
    return [e for e in free if all(can(state.find(lang, e)) for lang in state.docs)]


def _add_article(state: _State, anchor_id: str, occasion: Occasion, params: Params) -> str:
    """ "Art. Na" after Art. N (and after any Na, Nb already there), copied from an unused real article."""
    n = anchor_id[4:]
    existing = set(state.articles())
    letter = next(c for c in "abcdefghijklmnopqrstuvwxyz" if f"art_{n}_{c}" not in existing)
    e_id = f"art_{n}_{letter}"
    template = state.reserve.pop()
    for lang in params.langs:
        anchor = state.find(lang, anchor_id)
        last = anchor
        for sibling in anchor.itersiblings(_ARTICLE):
            if not sibling.get("eId", "").startswith(f"art_{n}_"):
                break
            last = sibling
        article = _place(template.articles[lang], e_id, n, letter)
        article.find(_NUM).append(make_note(article, lang, WORDING[lang].inserted, occasion))
        last.addnext(article)
    return e_id


def _generate_act(index: int, params: Params, templates: list[Template], out: Path) -> tuple[dict, list[dict]]:
    rng = random.Random(f"{params.seed}:act:{index}")
    act = _plan_act(index, params, rng)
    state = _build_first(act, params, templates, rng)
    manifest: list[dict] = []
    editions: list[dict] = []
    m = params.editions_per_act
    observed: dict[int, int] = {}  # edition -> the first edition at or after it with files (where its changes show)
    for i in reversed(range(m)):
        observed[i] = i if i not in act.skipped else observed.get(i + 1, i)
    cursor = (index * 5) % len(SHAPE_CYCLE)
    for i in range(m):
        if i > 0:
            occasion = Occasion(
                act.starts[i] - timedelta(days=rng.randint(30, 400)), act.starts[i], rng.randint(1, 999)
            )
            for _ in range(rng.randint(1, 4)):
                for attempt in range(len(SHAPE_CYCLE)):
                    shape = SHAPE_CYCLE[(cursor + attempt) % len(SHAPE_CYCLE)]
                    targets = _candidates(state, shape)
                    if targets:
                        cursor += attempt + 1
                        break
                else:
                    break  # nothing left to amend in this diff
                target = rng.choice(targets)
                details = _apply(state, shape, target, occasion, params, f"{params.seed}:{index}:{i}:{target}")
                for lang, (e_id, detail) in details.items():
                    manifest.append(
                        {
                            "act": act.eli,
                            "sr_number": act.sr_number,
                            "lang": lang,
                            "shape": shape,
                            "e_id": e_id,
                            "expect": EXPECTED_CHANGE[shape],
                            "edition": act.consolidation(i),
                            "observed_in": act.consolidation(observed[i]),
                            "detail": detail,
                        }
                    )
        for name, applies in (
            ("skipped_edition", i in act.skipped),
            ("overlapping_end_date", i == act.overlap),
            ("future_dated", act.future and i == m - 1),
        ):
            if applies:
                manifest.append(
                    {
                        "act": act.eli,
                        "sr_number": act.sr_number,
                        "shape": name,
                        "expect": "catalog",
                        "edition": act.consolidation(i),
                        "detail": f"end {act.ends[i]}" if name == "overlapping_end_date" else None,
                    }
                )
        for lang in params.langs:
            entry: dict[str, object] = {
                "consolidation": act.consolidation(i),
                "lang": lang,
                "date_applicability": act.starts[i].isoformat(),
                "date_end_applicability": end.isoformat() if (end := act.ends[i]) else None,
                "file": None,
                "sha256": None,
            }
            if i not in act.skipped:
                data = state.docs[lang].serialise(i)
                rel = f"{act.folder}/{act.starts[i]:%Y%m%d}-{lang}.xml"
                path = out / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                entry.update(file=rel, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
            editions.append(entry)
        if i not in act.skipped:
            state.touched.clear()
    catalog_act = {
        "eli": act.eli,
        "sr_number": act.sr_number,
        "synthetic": True,
        "date_entry_in_force": act.starts[0].isoformat(),
        "in_force_status": 0,
        "titles": {lang: dict(zip(("title", "title_short"), act.title(lang))) for lang in params.langs},
        "editions": editions,
    }
    return catalog_act, manifest


def _apply(
    state: _State, shape: str, target: str, occasion: Occasion, params: Params, key: str
) -> dict[str, tuple[str, str]]:
    """Apply one shape in every language (each with its own RNG seeded from `key`, so a language's text
    does not depend on which other languages are generated); returns lang -> (e_id it shows on, detail)."""
    if shape == "article_added":
        e_id = _add_article(state, target, occasion, params)
        state.touched.update({target, e_id})
        return {lang: (e_id, f"after {target}") for lang in params.langs}
    state.touched.add(target)
    out = {}
    for lang in params.langs:
        article = state.find(lang, target)
        if shape == "article_dropped":
            article.getparent().remove(article)
            out[lang] = (target, "dropped from the consolidation")
        else:
            out[lang] = (target, ARTICLE_SHAPES[shape].apply(article, random.Random(f"{key}:{lang}"), lang, occasion))
    return out


# --- the corpus ---------------------------------------------------------------------------------------------


_WORKER: dict = {}


def _worker_init(params: Params, sample_dir: Path, out: Path) -> None:
    # Each worker reads the sample itself: the templates hold lxml elements, which do not pickle.
    _WORKER.update(params=params, templates=load_material(sample_dir, params.langs), out=out)


def _worker_act(index: int) -> tuple[dict, list[dict]]:
    return _generate_act(index, _WORKER["params"], _WORKER["templates"], _WORKER["out"])


def _prepare(out: Path) -> None:
    """Refuse any folder that is not (or was not made as) a synthetic corpus; wipe one that was."""
    if "synthetic" not in out.resolve().name:
        raise SyntheticError(f"{out}: a synthetic corpus goes in a folder named *synthetic* (e.g. data/synthetic)")
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise SyntheticError(f"{out} is not empty and holds no {MARKER} marker: not overwriting it")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("Generated by chpit_assets.synthetic. NOT Fedlex data; never publish.\n")


def generate(params: Params, out: Path, sample_dir: Path, workers: int = 1) -> Summary:
    """Write the corpus to `out` (wiped first if it holds an earlier synthetic corpus). With
    `workers` > 1 the acts are generated in spawned processes, which import the calling script
    again: call it from a module or under `if __name__ == "__main__":`, as the CLI does."""
    params.check()
    out = Path(out)
    templates = load_material(Path(sample_dir), params.langs)
    _prepare(out)
    summary = Summary()
    acts: list[dict] = []
    manifest_tmp = out / ".manifest.jsonl.tmp"
    with manifest_tmp.open("w", encoding="utf-8") as manifest:
        for catalog_act, lines in _acts(params, templates, Path(sample_dir), out, workers):
            sizes = [e.pop("bytes") for e in catalog_act["editions"] if e["file"]]
            summary.acts += 1
            summary.editions += len(catalog_act["editions"])
            summary.files += len(sizes)
            summary.bytes += sum(sizes)
            for line in lines:
                manifest.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                summary.shapes[line["shape"]] = summary.shapes.get(line["shape"], 0) + 1
                summary.amendments += line["expect"] != "catalog"
            acts.append(catalog_act)
    os.replace(manifest_tmp, out / "manifest.jsonl")
    catalog = {
        "about": "SYNTHETIC corpus written by chpit_assets.synthetic for scale tests. Not Fedlex data: the acts, "
        "SR numbers (9999.*) and ELIs (synthetic.chpit.invalid) do not exist. Never build a publication "
        "from it.",
        "synthetic": True,
        "generator": params.as_json(),
        "acts": acts,
    }
    tmp = out / ".catalog.json.tmp"
    tmp.write_text(json.dumps(catalog, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out / "catalog.json")
    return summary


def _acts(
    params: Params, templates: list[Template], sample_dir: Path, out: Path, workers: int
) -> Iterator[tuple[dict, list[dict]]]:
    """Acts in index order; each act's output depends only on its index, so the pool changes nothing."""
    if workers <= 1:
        for index in range(params.acts):
            yield _generate_act(index, params, templates, out)
        return
    # Spawned, not forked: the caller may have threads (polars', DuckDB's, a test runner's), and a
    # child forked while one of them held a lock waits for it forever (seen in CI).
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers, initializer=_worker_init, initargs=(params, sample_dir, out)) as pool:
        yield from pool.imap(_worker_act, range(params.acts), chunksize=4)


# --- a new edition arriving (the incremental-rebuild scenario) -------------------------------------------------


def append_edition(out: Path, act_eli: str, day: date, shape: str = "word_changed", e_id: str | None = None) -> dict:
    """Add one edition of `act_eli` dated `day` to the corpus in `out`, in every language the act has:
    its latest edition's files with one article amended by `shape` (the same article in each language:
    `e_id`, else the first that can take the shape),
    the previous edition closed the day before, the catalog rewritten. Returns the manifest line (one per
    language is appended to manifest.jsonl)."""
    out = Path(out)
    if not (out / MARKER).is_file():
        raise SyntheticError(f"{out} is not a synthetic corpus (no {MARKER})")
    catalog = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    act = next((a for a in catalog["acts"] if a["eli"] == act_eli), None)
    if act is None:
        raise SyntheticError(f"{act_eli} is not in {out}/catalog.json")
    langs = sorted({e["lang"] for e in act["editions"]})
    latest = {
        lang: max(
            (e for e in act["editions"] if e["lang"] == lang and e["file"]), key=lambda e: e["date_applicability"]
        )
        for lang in langs
    }
    if any(date.fromisoformat(e["date_applicability"]) >= day for e in act["editions"]):
        raise SyntheticError(f"{act_eli} already has an edition on or after {day}")
    new_cons = f"{act_eli}/{day:%Y%m%d}"
    roots = {lang: etree.parse(str(out / latest[lang]["file"])).getroot() for lang in langs}
    first = roots[langs[0]]
    target = next(
        (
            a.get("eId")
            for a in first.iter(_ARTICLE)
            if e_id in (None, a.get("eId"))
            and all(ARTICLE_SHAPES[shape].can(r.find(f".//{_ARTICLE}[@eId='{a.get('eId')}']")) for r in roots.values())
        ),
        None,
    )
    if target is None:
        raise SyntheticError(f"no article of {act_eli}{f' with eId {e_id}' if e_id else ''} can take {shape}")
    occasion = Occasion(day - timedelta(days=90), day, 1)
    lines = []
    for lang, root in roots.items():
        old_cons, old_day = latest[lang]["consolidation"], date.fromisoformat(latest[lang]["date_applicability"])
        for el in root.iter(q("FRBRthis"), q("FRBRuri")):
            el.set("value", el.get("value").replace(old_cons, new_cons))
        for el in root.iter(q("FRBRdate")):
            if el.get("name") == "jolux:dateApplicability":
                el.set("date", day.isoformat())
        stand = root.find(f"./{q('act')}/{q('preface')}")[-1]
        stand.text = (stand.text or "").replace(_day(old_day), _day(day))
        article = root.find(f".//{_ARTICLE}[@eId='{target}']")
        detail = ARTICLE_SHAPES[shape].apply(article, random.Random(f"append:{new_cons}:{lang}"), lang, occasion)
        data = b'<?xml version="1.0" encoding="UTF-8"?>\n' + etree.tostring(root, encoding="utf-8")
        rel = f"{Path(latest[lang]['file']).parent}/{day:%Y%m%d}-{lang}.xml"
        (out / rel).write_bytes(data)
        for e in act["editions"]:
            if e["lang"] == lang and e["date_end_applicability"] is None:
                e["date_end_applicability"] = (day - timedelta(days=1)).isoformat()
        act["editions"].append(
            {
                "consolidation": new_cons,
                "lang": lang,
                "date_applicability": day.isoformat(),
                "date_end_applicability": None,
                "file": rel,
                "sha256": hashlib.sha256(data).hexdigest(),
            }
        )
        lines.append(
            {
                "act": act_eli,
                "sr_number": act["sr_number"],
                "lang": lang,
                "shape": shape,
                "e_id": target,
                "expect": EXPECTED_CHANGE[shape],
                "edition": new_cons,
                "observed_in": new_cons,
                "detail": detail,
            }
        )
    tmp = out / ".catalog.json.tmp"
    tmp.write_text(json.dumps(catalog, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out / "catalog.json")
    with (out / "manifest.jsonl").open("a", encoding="utf-8") as manifest:
        for line in lines:
            manifest.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
    return lines[0]
