"""Constructed Fedlex-shaped AKN editions for tests: the real files' element names, namespaces and e_ids."""

from __future__ import annotations

from datetime import date
from xml.sax.saxutils import quoteattr

AKN = "http://docs.oasis-open.org/legaldocml/ns/akn/3.0"


def edition_xml(
    *,
    act_eli: str = "https://fedlex.data.admin.ch/eli/cc/2099/1",
    sr_number: str = "999.1",
    date_applicability: date = date(2024, 1, 1),
    lang: str = "de",
    body: str,
    names: dict[str, tuple[str, str | None]] | None = None,
    sr_in_doc_number: bool = True,
) -> bytes:
    """One edition. `body` is the inner XML of <body>; `names` maps lang -> (title, shortForm)."""
    day = date_applicability.strftime("%Y%m%d")
    names = names or {"de": ("Bundesgesetz über Tests (Testgesetz, TG)", "TG")}
    frbr_names = "".join(
        f'<FRBRname xml:lang="{code}" value={quoteattr(title)}'
        + (f" shortForm={quoteattr(short)}" if short else "")
        + "/>"
        for code, (title, short) in names.items()
    )
    number_value = "" if sr_in_doc_number else sr_number
    doc_number = f"<p><docNumber>{sr_number} </docNumber></p>" if sr_in_doc_number else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>'
        f'<akomaNtoso xmlns="{AKN}"><act name="publicLaw"><meta><identification source="#ch.bk"><FRBRWork>'
        f'<FRBRthis value="{act_eli}/{day}/main-text"/><FRBRuri value="{act_eli}/{day}"/>'
        f'<FRBRdate date="{date_applicability.isoformat()}" name="jolux:dateApplicability"/>'
        f'<FRBRcountry value="CH"/><FRBRnumber value="{number_value}"/>{frbr_names}</FRBRWork>'
        f'<FRBRExpression><FRBRuri value="{act_eli}/{day}/{lang}"/><FRBRlanguage language="{lang}"/></FRBRExpression>'
        f"</identification></meta><preface>{doc_number}</preface><body>{body}</body></act></akomaNtoso>"
    ).encode()


def article(e_id: str, number: str | None, *paragraphs: str, heading: str | None = "Titel") -> str:
    """An <article>; each paragraph is 'NUM|text' (numbered) or plain text (unnumbered)."""
    parts = [f'<article eId="{e_id}">']
    if number is not None:
        parts.append(f"<num><b>Art. {number}</b></num>")
    if heading is not None:
        parts.append(f"<heading>{heading}</heading>")
    for i, para in enumerate(paragraphs, 1):
        num, _, text = para.rpartition("|")
        num_xml = f"<num>{num}</num>" if num else ""
        parts.append(f'<paragraph eId="{e_id}/para_{i}">{num_xml}<content><p>\u00a0{text}</p></content></paragraph>')
    parts.append("</article>")
    return "".join(parts)
