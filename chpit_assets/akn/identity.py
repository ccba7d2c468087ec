"""What a Fedlex AKN file says about itself: SR number, consolidation, date, language, names.

Used twice: by the downloader, to refuse a file that is not the edition the
catalog promised (Fedlex answers a bad filestore path with HTTP 200 and an HTML
page), and by the parser, which takes act names and abbreviations from here.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from datetime import date

from lxml import etree

from .errors import IdentityMismatch, NotAConsolidation, NotVerbatim, NotXml, TooLarge

AKN_NS = "http://docs.oasis-open.org/legaldocml/ns/akn/3.0"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
GENERATOR = "{http://fedlex.admin.ch/}generator"
_N = {"a": AKN_NS}
# A consolidation's FRBRWork uri: .../eli/cc/<collection path>/<YYYYMMDD>
_CONSOLIDATION_URI = re.compile(r"^(?P<act>https?://[^ ]+/eli/cc/.+)/(?P<day>\d{8})$")


@dataclass(frozen=True)
class EditionIdentity:
    act_eli: str  # e.g. https://fedlex.data.admin.ch/eli/cc/2022/491
    consolidation: str  # e.g. https://fedlex.data.admin.ch/eli/cc/2022/491/20250401
    sr_number: str  # from <docNumber> (trailing space dropped) or a non-empty FRBRnumber
    date_applicability: date
    lang: str  # FRBRExpression/FRBRlanguage
    names: dict[str, str]  # lang -> full title (FRBRname/@value)
    short_forms: dict[str, str]  # lang -> FRBRname/@shortForm, where present
    generator: str | None = None  # FRBRManifestation/FRBRformat/@fedlex:generator: the build that wrote the file


MAX_EDITION_BYTES = 64 * 1024 * 1024
"""The largest edition file accepted (docs/limits.md). Fedlex's largest consolidation, the Code of
Obligations, is about 2.1 MB in German; 64 MiB leaves room for any real act and bounds the memory
one hostile file can take (the parse holds the tree, the flattened text and the articles at once)."""

# libxml2's nesting limit with XML_PARSE_HUGE (xmlParserMaxDepth's huge value); 256 without it.
_DEPTH_LIMIT = 2048


_PARSERS = threading.local()


def _parser() -> etree.XMLParser:
    """This thread's parser. A parser made per call parsed SR 220 (2.1 MB) 1.5x slower than one reused
    (libxml2 sets up its context and name dictionary anew; P2, docs/benchmarks.md); parsers are not
    shared between threads, so the downloader's threads each get their own."""
    parser = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = etree.XMLParser(
            resolve_entities=False, no_network=True, huge_tree=True, remove_comments=True
        )
    return parser


def parse_xml(data: bytes, where: str) -> etree._Element:
    """Parse bytes into the root element, or raise NotXml naming `where` (TooLarge, NotVerbatim: see
    `_refuse_unverbatim`)."""
    if len(data) > MAX_EDITION_BYTES:
        raise TooLarge(where, f"{len(data)} bytes, over the limit of {MAX_EDITION_BYTES} bytes for one edition file")
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        head = data[:200].lstrip().lower()
        hint = " (an HTML page, not AKN XML)" if head.startswith((b"<!doctype html", b"<html")) else ""
        if "depth" in str(exc).lower():
            # huge_tree is on, so libxml2's own advice ("use XML_PARSE_HUGE") misleads: this is its hard
            # nesting limit, which huge_tree does not lift (issue 15 item 5).
            hint = (
                f" (elements nested deeper than libxml2's hard limit of {_DEPTH_LIMIT} levels, which holds "
                "even with huge_tree on; a real Fedlex edition nests about 30 deep, so the file is "
                "corrupt or hostile)"
            )
        raise NotXml(where, f"not well-formed XML{hint}: libxml2 says: {exc}") from exc
    if etree.QName(root).localname.lower() == "html":
        raise NotXml(where, "an HTML page, not AKN XML (Fedlex answers a bad filestore path with one, HTTP 200)")
    if etree.QName(root).localname != "akomaNtoso":
        raise NotAConsolidation(where, f"root element is <{etree.QName(root).localname}>, expected <akomaNtoso>")
    _refuse_unverbatim(root, data, where)
    return root


def _refuse_unverbatim(root: etree._Element, data: bytes, where: str) -> None:
    """Raise NotVerbatim for what the text extraction would not keep verbatim (issue 23 item 2).

    Entities are never expanded (resolve_entities=False), and an entity reference left in the tree
    has no text of its own to the extraction: its words would silently be missing. Entities exist
    only with a DOCTYPE (an undeclared one is a well-formedness error), so any DOCTYPE is refused,
    naming the entities it declares. A processing instruction inside the document has no text to
    the extraction either; Fedlex writes none (the shipped sample has only the XML declaration).
    Comments are stripped at parse and the text around them is kept as is; CDATA becomes text."""
    docinfo = root.getroottree().docinfo
    dtd = docinfo.internalDTD
    if dtd is not None or docinfo.doctype:
        entities = sorted(e.name for e in dtd.iterentities()) if dtd is not None else []
        declared = f", declaring the entities {', '.join(entities)}" if entities else ""
        raise NotVerbatim(
            where,
            f"has a DOCTYPE ({docinfo.doctype or 'internal subset'}){declared}: entity text would not be kept "
            "verbatim, so the file is refused (Fedlex editions have none)",
        )
    # The byte search rules PIs out for nearly every file; the XML declaration is not a PI.
    if _may_have_pi(data):
        pi = next(root.iter(etree.ProcessingInstruction), None)
        if pi is not None:
            raise NotVerbatim(
                where,
                f"has a processing instruction <?{pi.target} ...?> at line {pi.sourceline}: its content is "
                "not text to the parser, so the file is refused (Fedlex editions have none)",
            )


def _may_have_pi(data: bytes) -> bool:
    """Whether "<?" occurs after the first two bytes (a processing instruction could start there).

    Searched by its "?", which legal text rarely has, not its "<", which starts every tag: SR 220's
    2 MB took 1.9 ms by `data.find(b"<?", 2)` (8% of parsing it) and 0.03 ms so (P2, issue 27.3)."""
    i = data.find(b"?")
    while i != -1:
        if i >= 3 and data[i - 1] == 0x3C:  # "<"
            return True
        i = data.find(b"?", i + 1)
    return False


def read_identity(root: etree._Element, where: str) -> EditionIdentity:
    """Read the identity block; raise NotAConsolidation when it is not an SR consolidation."""
    work = root.find("./*/a:meta/a:identification/a:FRBRWork", _N)
    if work is None:
        raise NotAConsolidation(where, "no FRBRWork in meta/identification")
    uri_el = work.find("a:FRBRuri", _N)
    uri = (uri_el.get("value") or "").strip() if uri_el is not None else ""
    m = _CONSOLIDATION_URI.match(uri)
    if not m:
        raise NotAConsolidation(
            where, f"FRBRWork uri {uri!r} is not a consolidation of the SR collection (eli/cc/.../YYYYMMDD)"
        )
    day = m.group("day")
    applicability = None
    for d in work.findall("a:FRBRdate", _N):
        if d.get("name") == "jolux:dateApplicability":
            applicability = d.get("date")
    if applicability is None:
        raise NotAConsolidation(where, "no jolux:dateApplicability in FRBRWork")
    try:
        applicability_date = date.fromisoformat(applicability)
    except ValueError as exc:
        raise NotAConsolidation(where, f"dateApplicability {applicability!r} is not an ISO date") from exc
    if applicability_date.strftime("%Y%m%d") != day:
        raise NotAConsolidation(where, f"dateApplicability {applicability} disagrees with the uri {uri}")

    sr_number = _sr_number(root, work)
    if not sr_number:
        raise NotAConsolidation(where, "no SR number (empty FRBRnumber and no <docNumber>)")
    lang_el = root.find("./*/a:meta/a:identification/a:FRBRExpression/a:FRBRlanguage", _N)
    if lang_el is None or not lang_el.get("language"):
        raise NotAConsolidation(where, "no FRBRExpression/FRBRlanguage")

    generator_el = root.find("./*/a:meta/a:identification/a:FRBRManifestation/a:FRBRformat", _N)
    generator = ((generator_el.get(GENERATOR) or "").strip() or None) if generator_el is not None else None
    names: dict[str, str] = {}
    short_forms: dict[str, str] = {}
    for n in work.findall("a:FRBRname", _N):
        lang = n.get(XML_LANG)
        if not lang:
            continue
        if n.get("value"):
            names[lang] = n.get("value").strip()
        if n.get("shortForm") and n.get("shortForm").strip():
            short_forms[lang] = n.get("shortForm").strip()
    return EditionIdentity(
        act_eli=m.group("act"),
        consolidation=uri,
        sr_number=sr_number,
        date_applicability=applicability_date,
        lang=lang_el.get("language").strip(),
        names=names,
        short_forms=short_forms,
        generator=generator,
    )


def _sr_number(root: etree._Element, work: etree._Element) -> str:
    # Real quirk: FRBRnumber is empty in some files; <docNumber> then carries it, with a trailing space.
    for el in work.findall("a:FRBRnumber", _N):
        value = (el.get("value") or "").strip()
        if value:
            return value
    doc_number = root.find(".//a:preface//a:docNumber", _N)
    if doc_number is not None:
        return " ".join("".join(doc_number.itertext()).split())
    return ""


def check_identity(
    identity: EditionIdentity, *, sr_number: str, date_applicability: date, lang: str, where: str
) -> None:
    """Raise IdentityMismatch unless the file is the edition the catalog promised."""
    problems = []
    if identity.sr_number != sr_number:
        problems.append(f"SR number {identity.sr_number!r} != catalog {sr_number!r}")
    if identity.date_applicability != date_applicability:
        problems.append(f"edition date {identity.date_applicability} != catalog {date_applicability}")
    if identity.lang != lang:
        problems.append(f"language {identity.lang!r} != catalog {lang!r}")
    if problems:
        raise IdentityMismatch(where, "; ".join(problems))
