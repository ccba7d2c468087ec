"""Amendment shapes: in-place edits of one `<article>` element, the way Fedlex consolidations show them.

Each shape has a capability test (`can`) and an edit (`apply`) that returns a short
description for the manifest. An edit changes only wording (never a footnote, a
number element or a heading), except `footnote_only`, which changes only
footnotes: that is what makes the expected `ch_act_change` row of each shape
certain (`EXPECTED_CHANGE`). Amended wording gets the footnote Fedlex adds
("Fassung gemäss ...", "Eingefügt durch ...", "Aufgehoben durch ...").

Elements are created with `SubElement`/`makeelement` on the target tree, so they
inherit its default namespace and serialise exactly like Fedlex's own.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from lxml import etree

from chpit_assets.akn.identity import AKN_NS

from . import SYNTHETIC_HOST


def q(tag: str) -> str:
    return f"{{{AKN_NS}}}{tag}"


_NOTE, _NUM, _HEADING, _P, _LIST_INTRO = q("authorialNote"), q("num"), q("heading"), q("p"), q("listIntroduction")
_PARAGRAPH, _CONTENT, _REF, _B = q("paragraph"), q("content"), q("ref"), q("b")
_NOT_WORDING = frozenset({_NOTE, _NUM, _HEADING})
_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"\b[^\W\d_]{7,}\b")
_MIDWORD = re.compile(r"[^\W\d_]{6,}")
# A sentence boundary followed by a capital: where "a sentence removed" cuts.
_SENTENCE = re.compile(r"(?<=[.;])\s+(?=[A-ZÄÖÜÀ-Ý])")
_PARA_NUM = re.compile(r"^\d+$")
LATIN_SUFFIXES = ("bis", "ter", "quater", "quinquies", "sexies", "septies", "octies")
ELLIPSIS = "…"  # what Fedlex prints for repealed wording

# The change_type each shape must produce in ch_act_change for its article ("none": no row at all).
EXPECTED_CHANGE: dict[str, str] = {
    "number_changed": "modified",
    "word_changed": "modified",
    "clause_appended": "modified",
    "sentence_removed": "modified",
    "paragraph_inserted": "modified",
    "paragraph_removed": "modified",
    "article_repealed": "modified",
    "article_added": "added",
    "article_dropped": "removed",
    "footnote_only": "none",
}
# Shapes visible only in the catalog (edition dates and files), not in any article.
CATALOG_SHAPES: tuple[str, ...] = ("skipped_edition", "overlapping_end_date", "future_dated")


class AmendmentError(RuntimeError):
    """A shape was applied to an article it cannot change (a planner bug, never bad input)."""


@dataclass(frozen=True)
class Wording:
    """Per-language text for what an amendment writes."""

    words: tuple[str, ...]  # replacements for word_changed
    clauses: tuple[str, ...]  # appended before the final stop
    paragraphs: tuple[str, ...]  # new paragraph texts; "{n}" becomes a number
    amended: str  # footnote openers, as Fedlex words them
    inserted: str
    repealed: str
    corrected: str
    act_of: str  # "{day}" and "{since}" are filled in
    official: str  # the official compilation's abbreviation (AS / RO / RU)


WORDING: dict[str, Wording] = {
    "de": Wording(
        words=(
            "unverzüglich",
            "schriftlich",
            "elektronisch",
            "Bundesrat",
            "Verordnung",
            "angemessen",
            "zuständige",
            "Aufsichtsbehörde",
            "vollständig",
        ),
        clauses=(
            ", sofern das Gesetz nichts anderes vorsieht",
            " und begründet ihren Entscheid schriftlich",
            "; der Bundesrat regelt die Einzelheiten",
        ),
        paragraphs=(
            "Der Bundesrat kann für Bearbeitungen zu nicht personenbezogenen Zwecken Ausnahmen vorsehen; "
            "er hört vorher die betroffenen Kreise an.",
            "Die zuständige Behörde entscheidet innert {n} Tagen nach Eingang des vollständigen Gesuchs "
            "und teilt ihren Entscheid schriftlich mit.",
            "Die Frist nach Absatz 1 beträgt {n} Tage; sie kann aus wichtigen Gründen einmal erstreckt werden.",
        ),
        amended="Fassung gemäss",
        inserted="Eingefügt durch",
        repealed="Aufgehoben durch",
        corrected="Berichtigung der Redaktionskommission der BVers vom {day}",
        act_of="Ziff. I des BG vom {day}, in Kraft seit {since}",
        official="AS",
    ),
    "fr": Wording(
        words=(
            "immédiatement",
            "électronique",
            "Conseil fédéral",
            "ordonnance",
            "appropriée",
            "compétente",
            "surveillance",
            "intégralement",
            "préalablement",
        ),
        clauses=(
            ", sauf disposition contraire de la loi",
            " et motive sa décision par écrit",
            "; le Conseil fédéral règle les modalités",
        ),
        paragraphs=(
            "Le Conseil fédéral peut prévoir des exceptions pour les traitements à des fins ne se "
            "rapportant pas à des personnes; il consulte au préalable les milieux concernés.",
            "L’autorité compétente statue dans les {n} jours suivant la réception de la demande complète "
            "et communique sa décision par écrit.",
            "Le délai visé à l’al. 1 est de {n} jours; il peut être prolongé une fois pour de justes motifs.",
        ),
        amended="Nouvelle teneur selon le",
        inserted="Introduit par le",
        repealed="Abrogé par le",
        corrected="Rectification de la Commission de rédaction de l’Ass. féd. du {day}",
        act_of="ch. I de la LF du {day}, en vigueur depuis le {since}",
        official="RO",
    ),
    "it": Wording(
        words=(
            "immediatamente",
            "elettronica",
            "Consiglio federale",
            "ordinanza",
            "adeguata",
            "competente",
            "vigilanza",
            "integralmente",
            "preventivamente",
        ),
        clauses=(
            ", salvo diversa disposizione di legge",
            " e motiva per scritto la sua decisione",
            "; il Consiglio federale disciplina i dettagli",
        ),
        paragraphs=(
            "Il Consiglio federale può prevedere eccezioni per i trattamenti per scopi che non si "
            "riferiscono a persone; sente previamente le cerchie interessate.",
            "L’autorità competente decide entro {n} giorni dalla ricezione della domanda completa e "
            "comunica per scritto la sua decisione.",
            "Il termine di cui al capoverso 1 è di {n} giorni; può essere prorogato una volta per motivi gravi.",
        ),
        amended="Nuovo testo giusta il",
        inserted="Introdotto dal",
        repealed="Abrogato dal",
        corrected="Rettifica della Commissione di redazione dell’AF del {day}",
        act_of="n. I della LF del {day}, in vigore dal {since}",
        official="RU",
    ),
    "en": Wording(
        words=(
            "immediately",
            "electronic",
            "Federal Council",
            "ordinance",
            "appropriate",
            "competent",
            "supervisory",
            "completely",
            "beforehand",
        ),
        clauses=(
            ", unless the law provides otherwise",
            " and gives written reasons for its decision",
            "; the Federal Council regulates the details",
        ),
        paragraphs=(
            "The Federal Council may provide for exceptions for processing for purposes not related to "
            "specific persons; it consults the parties concerned beforehand.",
            "The competent authority decides within {n} days of receipt of the complete application and "
            "gives notice of its decision in writing.",
            "The time limit under paragraph 1 is {n} days; it may be extended once for good cause.",
        ),
        amended="Amended by",
        inserted="Inserted by",
        repealed="Repealed by",
        corrected="Correction by the Drafting Committee of the Federal Assembly of {day}",
        act_of="No I of the FA of {day}, in force since {since}",
        official="AS",
    ),
}


@dataclass(frozen=True)
class Occasion:
    """The amending act behind an edition: its date and official-compilation reference, for footnotes."""

    adopted: date
    in_force: date
    page: int


# --- wording slots: the strings (element.text or element.tail) that are the law's text --------------------


Slot = tuple[etree._Element, str]


def _get(slot: Slot) -> str:
    return getattr(slot[0], slot[1]) or ""


def _set(slot: Slot, value: str) -> None:
    setattr(slot[0], slot[1], value)


def _is_wording_block(block: etree._Element, article: etree._Element) -> bool:
    el = block.getparent()
    while el is not None and el is not article:
        if el.tag in _NOT_WORDING:
            return False
        el = el.getparent()
    return True


def _block_slots(block: etree._Element) -> list[Slot]:
    out: list[Slot] = []

    def walk(el: etree._Element) -> None:
        if el.text and el.text.strip():
            out.append((el, "text"))
        for child in el:
            if isinstance(child.tag, str) and child.tag != _NOTE:  # a footnote's inside is not wording
                walk(child)
            if child.tail and child.tail.strip():
                out.append((child, "tail"))

    walk(block)
    return out


def blocks(article: etree._Element) -> list[etree._Element]:
    """The article's `<p>` and `<listIntroduction>` blocks that carry wording (not footnotes, not a
    repealed paragraph's "…")."""
    return [
        b
        for b in article.iter(_P, _LIST_INTRO)
        if _is_wording_block(b, article) and "".join(_get(s) for s in _block_slots(b)).strip() != ELLIPSIS
    ]


def slots(article: etree._Element) -> list[Slot]:
    return [s for b in blocks(article) for s in _block_slots(b)]


def is_repealed(el: etree._Element) -> bool:
    """No wording left but Fedlex's "…" (an article or paragraph repealed by an earlier edition)."""
    return not slots(el)


def numbered_paragraphs(article: etree._Element) -> list[etree._Element]:
    """Direct `<paragraph>` children numbered with plain digits ("1", "2"; not "5bis"), not repealed."""
    out = []
    for para in article.findall(_PARAGRAPH):
        num = para.find(_NUM)
        if num is not None and _PARA_NUM.match("".join(num.itertext()).strip()) and not is_repealed(para):
            out.append(para)
    return out


# --- footnotes ----------------------------------------------------------------------------------------------


def _day(d: date) -> str:
    return f"{d.day}.{d.month}.{d.year}"


def make_note(parent: etree._Element, lang: str, opener: str, occasion: Occasion) -> etree._Element:
    """A Fedlex-shaped footnote (`<authorialNote><p> ... (<ref>AS <b>2021</b> 693</ref>).</p>`), not yet placed."""
    w = WORDING[lang]
    note = parent.makeelement(_NOTE, {})
    p = etree.SubElement(note, _P)
    p.text = f" {opener} {w.act_of.format(day=_day(occasion.adopted), since=_day(occasion.in_force))} ("
    year = occasion.in_force.year
    ref = etree.SubElement(p, _REF, href=f"https://{SYNTHETIC_HOST}/eli/oc/{year}/{occasion.page}")
    ref.text = f"{w.official} "
    b = etree.SubElement(ref, _B)
    b.text = str(year)
    b.tail = f" {occasion.page}"
    ref.tail = ")."
    return note


# --- the shapes -----------------------------------------------------------------------------------------------


Edit = Callable[[etree._Element, random.Random, str, Occasion], str]


def _can_number(article: etree._Element) -> bool:
    return any(_NUMBER.search(_get(s)) for s in slots(article))


def number_changed(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    found = [(s, m) for s in slots(article) for m in _NUMBER.finditer(_get(s))]
    slot, m = rng.choice(found)
    text = _get(slot)
    new = str(int(m.group()) + rng.randint(1, 9))
    _set(slot, text[: m.start()] + new + text[m.end() :])
    _block_of(slot).append(make_note(article, lang, WORDING[lang].amended, occasion))
    return f"{m.group()} -> {new}"


def _can_word(article: etree._Element) -> bool:
    return any(_WORD.search(_get(s)) for s in slots(article))


def word_changed(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    found = [(s, m) for s in slots(article) for m in _WORD.finditer(_get(s))]
    slot, m = rng.choice(found)
    new = rng.choice([w for w in WORDING[lang].words if w != m.group()])
    text = _get(slot)
    _set(slot, text[: m.start()] + new + text[m.end() :])
    _block_of(slot).append(make_note(article, lang, WORDING[lang].amended, occasion))
    return f"{m.group()} -> {new}"


def clause_appended(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    block = rng.choice([b for b in blocks(article) if _block_slots(b)])
    slot = _block_slots(block)[-1]
    text = _get(slot)
    body = text.rstrip()
    clause = rng.choice(WORDING[lang].clauses)
    if body[-1] in ".;:":
        new = body[:-1] + clause + body[-1] + text[len(body) :]
    else:
        new = body + clause + text[len(body) :]
    _set(slot, new)
    block.append(make_note(article, lang, WORDING[lang].amended, occasion))
    return clause.strip(" ,;")


def _last_sentence_cuts(article: etree._Element) -> list[tuple[Slot, int]]:
    """(slot, cut) where the block's final slot holds two sentences or more; text from `cut` on goes."""
    out = []
    for block in blocks(article):
        block_slots = _block_slots(block)
        if not block_slots:
            continue
        slot = block_slots[-1]
        text = _get(slot)
        cuts = [m.start() for m in _SENTENCE.finditer(text)]
        if cuts and cuts[-1] >= 25 and len(text[cuts[-1] :].strip()) >= 25:
            out.append((slot, cuts[-1]))
    return out


def _can_sentence(article: etree._Element) -> bool:
    return bool(_last_sentence_cuts(article))


def sentence_removed(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    slot, cut = rng.choice(_last_sentence_cuts(article))
    text = _get(slot)
    removed = text[cut:].strip()
    _set(slot, text[:cut] + text[len(text.rstrip()) :])
    _block_of(slot).append(make_note(article, lang, WORDING[lang].amended, occasion))
    return removed[:40]


def _can_insert(article: etree._Element) -> bool:
    return bool(numbered_paragraphs(article))


def paragraph_inserted(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    """A new paragraph "Nbis" (or the next free latin suffix) after paragraph N, like DSG Art. 24 para. 5bis."""
    anchor = rng.choice(numbered_paragraphs(article))
    n = "".join(anchor.find(_NUM).itertext()).strip()
    taken = {"".join(p.find(_NUM).itertext()).strip() for p in article.findall(_PARAGRAPH) if p.find(_NUM) is not None}
    suffix = next(s for s in LATIN_SUFFIXES if f"{n}{s}" not in taken)
    last = anchor  # after any "Nbis", "Nter" already there
    for sibling in anchor.itersiblings(_PARAGRAPH):
        num = sibling.find(_NUM)
        if num is None or "".join(num.itertext()).strip() not in {f"{n}{s}" for s in LATIN_SUFFIXES}:
            break
        last = sibling
    para = article.makeelement(_PARAGRAPH, {"eId": f"{article.get('eId')}/para_{n}_{suffix}"})
    etree.SubElement(para, _NUM).text = f"{n}{suffix}"
    p = etree.SubElement(etree.SubElement(para, _CONTENT), _P)
    p.text = "\u00a0" + rng.choice(WORDING[lang].paragraphs).format(n=rng.randint(10, 90))
    p.append(make_note(article, lang, WORDING[lang].inserted, occasion))
    last.addnext(para)
    return f"para {n}{suffix}"


def _can_remove_paragraph(article: etree._Element) -> bool:
    return len(numbered_paragraphs(article)) >= 2


def paragraph_removed(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    """Fedlex keeps a repealed paragraph's number and prints "…" with an "Aufgehoben durch" footnote."""
    para = rng.choice(numbered_paragraphs(article))
    _repeal(para, lang, occasion)
    return f"para {''.join(para.find(_NUM).itertext()).strip()}"


def _repeal(el: etree._Element, lang: str, occasion: Occasion) -> None:
    for child in list(el):
        if child.tag != _NUM:
            el.remove(child)
    p = etree.SubElement(etree.SubElement(el, _CONTENT), _P)
    p.text = ELLIPSIS
    p.append(make_note(el, lang, WORDING[lang].repealed, occasion))


def _can_repeal(article: etree._Element) -> bool:
    return article.find(_PARAGRAPH) is not None and not is_repealed(article)


def article_repealed(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    """The article keeps its number; heading and paragraphs give way to one unnumbered "…" paragraph."""
    heading = article.find(_HEADING)
    if heading is not None:
        article.remove(heading)
    for para in article.findall(_PARAGRAPH)[1:]:
        article.remove(para)
    first = article.find(_PARAGRAPH)
    if first is None:
        raise AmendmentError(f"{article.get('eId')}: no paragraph to repeal")
    first.set("eId", f"{article.get('eId')}/para")
    _repeal(first, lang, occasion)
    num = first.find(_NUM)
    if num is not None:
        first.remove(num)
    return "repealed"


def footnote_only(article: etree._Element, rng: random.Random, lang: str, occasion: Occasion) -> str:
    """A footnote added mid-word (as Fedlex places them) or inside the article's number; wording unchanged."""
    words = [(s, m) for s in slots(article) for m in _MIDWORD.finditer(_get(s))]
    note = make_note(article, lang, WORDING[lang].corrected.format(day=_day(occasion.adopted)), occasion)
    if words and rng.random() < 0.6:
        (el, attr), m = rng.choice(words)
        text = getattr(el, attr)
        cut = m.start() + rng.randint(2, len(m.group()) - 2)
        if attr == "text":
            el.text = text[:cut]
            el.insert(0, note)
        else:
            el.tail = text[:cut]
            el.addnext(note)
        note.tail = text[cut:]
        return f"mid-word in {m.group()!r}"
    num = article.find(_NUM)
    if num is None:
        raise AmendmentError(f"{article.get('eId')}: no <num> to hold a footnote")
    num.append(note)
    return "in <num>"


def _block_of(slot: Slot) -> etree._Element:
    el = slot[0] if slot[1] == "text" else slot[0].getparent()
    while el.tag not in (_P, _LIST_INTRO):
        el = el.getparent()
    return el


@dataclass(frozen=True)
class Shape:
    name: str
    can: Callable[[etree._Element], bool]
    apply: Edit


ARTICLE_SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape("number_changed", _can_number, number_changed),
        Shape("word_changed", _can_word, word_changed),
        Shape("clause_appended", lambda a: not is_repealed(a), clause_appended),
        Shape("sentence_removed", _can_sentence, sentence_removed),
        Shape("paragraph_inserted", _can_insert, paragraph_inserted),
        Shape("paragraph_removed", _can_remove_paragraph, paragraph_removed),
        Shape("article_repealed", _can_repeal, article_repealed),
        Shape("footnote_only", lambda a: a.find(_NUM) is not None, footnote_only),
    )
}
"""Shapes that edit one existing article in place; `article_added` and `article_dropped` act on the
article's parent and live in the generator."""
