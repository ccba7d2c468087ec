"""The AKN parser on the real Fedlex sample first, then on constructed editions for shapes the sample lacks."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest

from chpit_assets.akn.errors import (
    AknError,
    EmptyArticle,
    IdentityMismatch,
    NotAConsolidation,
    NotVerbatim,
    NotXml,
    TooLarge,
)
from chpit_assets.akn.identity import (
    check_identity,
    parse_xml,
    read_identity,
)
from chpit_assets.akn.parser import parse_edition
from chpit_scorer import units
from tests.akn_factory import article, edition_xml

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
DSG = SAMPLE / "cc-2022-491"


def parse(path: Path):
    return parse_edition(path.read_bytes(), str(path))


def articles(path: Path) -> dict:
    return {a.e_id: a for a in parse(path).articles}


@pytest.mark.parametrize(
    "name", ["20230901-de", "20250401-de", "20250707-de", "20250707-fr", "20250707-it", "20250707-en"]
)
def test_sr_235_1_has_77_articles_in_every_edition(name):
    edition = parse(DSG / f"{name}.xml")
    assert len(edition.articles) == 77
    # Real quirk: FRBRnumber is empty, the SR number sits in <docNumber> with a trailing space.
    assert edition.identity.sr_number == "235.1"


def test_2025_04_01_adds_art_24_para_5bis_as_a_pure_addition():
    old = articles(DSG / "20230901-de.xml")["art_24"].text
    new = articles(DSG / "20250401-de.xml")["art_24"].text
    added = [line for line in new.splitlines() if line not in old.splitlines()]
    assert len(added) == 1 and added[0].startswith("5bis Der EDÖB kann die Meldung")
    assert [line for line in old.splitlines() if line not in new.splitlines()] == []


def test_footnote_only_editions_are_equal_once_footnotes_are_out():
    # 2025-04-01 -> 2025-07-07 differ in footnotes and in a no-break space after each paragraph number.
    april, july = articles(DSG / "20250401-de.xml"), articles(DSG / "20250707-de.xml")
    assert april.keys() == july.keys()
    assert [e for e in april if april[e].text != july[e].text] == []
    assert "Eingefügt durch" not in "".join(a.text for a in april.values())


def test_each_paragraph_on_its_own_line_with_its_number_so_the_scorer_sees_units():
    text = articles(DSG / "20250401-de.xml")["art_24"].text
    lines = text.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["1", "2", "3", "4", "5", "a.", "b.", "c.", "5bis", "6"]
    assert lines[4].endswith("darauf verzichten, wenn:")  # list introduction stays on its paragraph's line
    # S2 splits at line-start markers: one unit per numbered paragraph (list items belong to theirs).
    assert len(units(text)) == 7


def test_heading_is_kept_apart_from_text():
    art = articles(DSG / "20250401-de.xml")["art_24"]
    assert art.heading == "Meldung von Verletzungen der Datensicherheit"
    assert art.heading not in art.text


def test_footnote_inside_num_does_not_leak_into_number_or_text():
    publg = articles(SAMPLE / "cc-2004-745" / "20230901-de.xml")
    assert publg["art_1_a"].article_number == "1a"
    assert publg["art_1_a"].heading == "Online-Veröffentlichung"
    # Item c.'s <num> carries a footnote: the line is "c. von ...", not the footnote's text.
    assert "c. von anderen Texten mit einem Zusammenhang zur Gesetzgebung." in publg["art_1"].text.splitlines()


def test_interior_no_break_space_is_kept_verbatim():
    art_59 = articles(DSG / "20250401-de.xml")["art_59"].text
    assert "Buchstabe\u00a0a." in art_59
    assert "Buchstabe a." in articles(DSG / "20230901-de.xml")["art_59"].text


def test_table_rows_become_lines_with_tab_separated_cells():
    text = articles(SAMPLE / "cc-1999-404" / "20240303-en.xml")["art_196"].text
    assert "– over 3.5 to 12 t\t650" in text.splitlines()


def test_constitution_in_three_languages_including_romansh():
    for lang in ("de", "en", "rm"):
        edition = parse(SAMPLE / "cc-1999-404" / f"20240303-{lang}.xml")
        assert edition.identity.lang == lang
        assert len(edition.articles) == 232
        assert all(a.article_number for a in edition.articles)
        assert "5a" in {a.article_number for a in edition.articles}


def test_federal_gazette_text_is_refused_clearly():
    path = SAMPLE / "not-sr" / "fga-2025-2900-de.xml"
    with pytest.raises(NotAConsolidation) as info:
        parse(path)
    assert "eli/fga/2025/2900" in str(info.value) and str(path) in str(info.value)
    assert info.value.stage == "validate"


def test_html_shell_and_truncated_xml_are_not_xml():
    with pytest.raises(NotXml, match="HTML page"):
        parse_xml(b"<!DOCTYPE html><html><body>Seite nicht gefunden</body></html>", "url")
    data = (DSG / "20250401-de.xml").read_bytes()
    with pytest.raises(NotXml, match="not well-formed"):
        parse_edition(data[: len(data) // 2], "half")


def test_identity_check_names_every_disagreement():
    path = DSG / "20250401-de.xml"
    identity = read_identity(parse_xml(path.read_bytes(), str(path)), str(path))
    with pytest.raises(IdentityMismatch) as info:
        check_identity(identity, sr_number="235.11", date_applicability=date(2025, 7, 7), lang="fr", where="x")
    message = str(info.value)
    assert "235.11" in message and "2025-07-07" in message and "'fr'" in message


def body_of(*parts: str) -> bytes:
    return edition_xml(body="".join(parts))


def test_article_numbers_of_every_fedlex_shape():
    doc = body_of(
        article("art_5_a", "5<i>a</i>", "1|Erster Absatz."),
        '<article eId="art_268_a_bis"><num><b>Art. 268</b><i>a</i> <i>bis</i></num><paragraph eId="art_268_a_bis/para_1"><content><p>Text.</p></content></paragraph></article>',
        article("art_179_decies", "179<i>decies</i>", "Text."),
        article("art_9", None, "Ohne gedruckte Nummer."),
        '<article eId="art_10"><num><b>Schlussbestimmung</b></num><paragraph eId="art_10/para_1"><content><p>X.</p></content></paragraph></article>',
    )
    numbers = {a.e_id: a.article_number for a in parse_edition(doc, "t").articles}
    assert numbers == {
        "art_5_a": "5a",
        "art_268_a_bis": "268a bis",
        "art_179_decies": "179decies",
        "art_9": "9",
        "art_10": None,
    }


def test_nested_transitional_e_ids_are_kept_as_is():
    doc = body_of(
        article("art_7", "7", "1|Oben."),
        f'<transitional eId="disp_u1">{article("disp_u1/art_7", "7", "1|Übergang.")}</transitional>',
    )
    parsed = parse_edition(doc, "t").articles
    assert [(a.e_id, a.article_number) for a in parsed] == [("art_7", "7"), ("disp_u1/art_7", "7")]


def test_footnote_mid_word_and_wrappers_leave_the_word_whole():
    doc = body_of(
        '<article eId="art_1"><num><b>Art. 1</b></num><paragraph eId="art_1/para_1"><num>1</num><content>'
        "<p>Die Bundes<authorialNote><p>Fussnote.</p></authorialNote>versammlung "
        '<inline name="man-font-style-normal">beschliesst</inline> <span>Weiteres</span>:</p>'
        '</content></paragraph><paragraph eId="art_1/para_2"><num><placeholder>[tab]</placeholder></num>'
        "<content><p><sup>2</sup> Zweiter\u00ad Absatz mit 1\u00a0000 Franken.</p></content></paragraph></article>"
    )
    text = parse_edition(doc, "t").articles[0].text
    assert text == "1 Die Bundesversammlung beschliesst Weiteres:\n2 Zweiter\u00ad Absatz mit 1\u00a0000 Franken."


def test_repealed_article_keeps_its_row_with_the_repeal_note_text():
    doc = body_of(
        '<article eId="art_3"><num><b>Art. 3</b><authorialNote><p>Aufgehoben durch Ziff. I.</p></authorialNote></num>'
        '<paragraph eId="art_3/para_1"><content><p><i>Aufgehoben</i></p></content></paragraph></article>'
    )
    art = parse_edition(doc, "t").articles[0]
    assert (art.article_number, art.text) == ("3", "Aufgehoben")


def test_repeated_e_ids_are_kept_with_their_occurrence_in_document_order():
    doc = body_of(
        article("art_1", "1", "A."),
        article("art_2", "2", "B."),
        f'<hcontainer eId="tit_fin">{article("art_1", "1", "Altes Recht.")}{article("art_1", "1", "C.")}</hcontainer>',
    )
    parsed = parse_edition(doc, "t")
    assert [(a.e_id, a.occurrence, a.text) for a in parsed.articles] == [
        ("art_1", 1, "A."),
        ("art_2", 1, "B."),
        ("art_1", 2, "Altes Recht."),
        ("art_1", 3, "C."),
    ]
    assert parsed.n_repeated_eids == 2


def test_civil_code_repeats_e_ids_in_its_final_title_and_is_parsed_whole():
    # SR 210 fr: the final title reproduces old-law articles under the current ones' eIds (Fedlex publishes it).
    parsed = parse(SAMPLE / "cc-24-233_245_233" / "20240101-fr.xml")
    keys = [(a.e_id, a.occurrence) for a in parsed.articles]
    assert len(keys) == len(set(keys)) == 1274  # every <article> of the file, each with its own key
    assert parsed.n_repeated_eids == 74
    first, second = [a for a in parsed.articles if a.e_id == "art_178"]
    assert (first.occurrence, second.occurrence) == (1, 2)
    assert first.article_number == second.article_number == "178" and first.text != second.text
    # Nested final-title articles keep their container path in the eId and their own number.
    assert {a.article_number for a in parsed.articles if a.e_id.startswith("tit_fin/")} >= {"1", "61"}


def test_treaty_with_its_own_numbering_and_no_abbreviation():
    parsed = parse(SAMPLE / "cc-1998-2055_2055_2055" / "20230227-de.xml")
    assert parsed.identity.sr_number == "0.107" and parsed.identity.short_forms == {}
    assert [a.article_number for a in parsed.articles[:3]] == ["1", "2", "3"] and len(parsed.articles) == 54
    assert parsed.n_repeated_eids == 0


def test_article_ranges_have_no_number_and_keep_their_row():
    # "Art. 50-51" (a repealed range in SR 210) is one article without a single number: B8 skips it later.
    parsed = {a.e_id: a for a in parse(SAMPLE / "cc-24-233_245_233" / "20240101-fr.xml").articles}
    assert parsed["art_50_51"].article_number is None and parsed["art_50_51"].text
    assert parsed["tit_fin/art_31_32"].article_number is None


def test_generator_build_is_read_from_the_manifestation():
    assert parse(DSG / "20230901-de.xml").identity.generator == "2024-q4-rel-1.6.5"
    assert parse(SAMPLE / "reissued" / "cc-2022-491" / "20230901-de.xml").identity.generator == "2024-q4-rel-1.5.26"
    assert parse_edition(body_of(article("art_1", "1", "A.")), "t").identity.generator is None


def test_depth_error_says_which_limit_was_hit_even_with_huge_tree():
    deep = b"<akomaNtoso>" + b"<a>" * 3000 + b"</a>" * 3000 + b"</akomaNtoso>"
    with pytest.raises(NotXml) as info:
        parse_xml(deep, "deep.xml")
    message = str(info.value)
    assert "deep.xml" in message and "2048" in message and "huge_tree" in message
    # A depth under the limit is not refused for depth.
    ok = b"<akomaNtoso>" + b"<a>" * 1500 + b"</a>" * 1500 + b"</akomaNtoso>"
    assert parse_xml(ok, "ok.xml") is not None


def test_sr_number_from_frbrnumber_when_present():
    doc = edition_xml(body=article("art_1", "1", "A."), sr_number="101", sr_in_doc_number=False)
    assert parse_edition(doc, "t").identity.sr_number == "101"


def test_text_has_no_xml_indentation_and_no_empty_lines():
    for path in sorted(DSG.glob("*.xml")):
        for a in parse(path).articles:
            assert "\n\n" not in a.text and not re.search(r"[ \t]{2,}", a.text), (path, a.e_id)


def test_text_with_the_parsers_reserved_separators_is_refused_not_garbled():
    doc = body_of(article("art_1", "1", "1|Ein Zeichen \ue002 aus dem privaten Bereich."))
    with pytest.raises(AknError, match="private-use"):
        parse_edition(doc, "t")
    # Other private-use characters (a font's symbol, say) are text like any other.
    text = parse_edition(body_of(article("art_1", "1", "1|Symbol \ue0ff hier.")), "t").articles[0].text
    assert text == "1 Symbol \ue0ff hier."


def test_comments_anywhere_change_nothing():
    """Comments are not wording: inside the identity, a number, a paragraph's text or between
    articles, an edition parses exactly as it does without them."""
    plain = edition_xml(body=article("art_1", "1", "1|Die Frist beträgt 30 Tage.", "2|Sie kann erstreckt werden."))
    commented = (
        plain.replace(b"999.1 </docNumber>", b"999.<!-- SR -->1 </docNumber>")
        .replace(b"Art. 1</b>", b"Art. <!-- n -->1</b>")
        .replace(b"30 Tage", b"30<!-- alt: 20 --> Tage")
        .replace(b"<body>", b"<body><!-- Anfang -->")
    )
    assert commented.count(b"<!--") == 4
    assert parse_edition(commented, "t") == parse_edition(plain, "t")


def test_the_reused_parser_is_per_thread_and_unaffected_by_an_earlier_bad_file():
    from concurrent.futures import ThreadPoolExecutor

    paths = sorted(DSG.glob("*.xml")) + [SAMPLE / "cc-24-233_245_233" / "20240101-fr.xml"]
    alone = [parse(p).articles for p in paths]
    with pytest.raises(NotXml):
        parse_xml(b"<akomaNtoso><unclosed></akomaNtoso>", "bad")
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(lambda p: parse(p).articles, paths * 2))
    assert together == alone * 2


# -- issue 23 item 2: exact text or refusal ------------------------------------------------------

REAL = sorted(SAMPLE.glob("cc-*/*.xml")) + sorted(SAMPLE.glob("reissued/*/*.xml"))


def _with_doctype(doc: bytes, subset: str) -> bytes:
    head, sep, rest = doc.partition(b"?>")
    return head + sep + f"<!DOCTYPE akomaNtoso [{subset}]>".encode() + rest


def test_an_internal_entity_is_refused_naming_file_and_entity_not_dropped_from_the_text():
    # Before: the entity's words were silently missing from the published gold text.
    doc = _with_doctype(
        edition_xml(body=article("art_1", "1", "1|Die Frist beträgt &frist; und kann erstreckt werden.")),
        '<!ENTITY frist "dreissig Tage">',
    )
    with pytest.raises(NotVerbatim, match=r"SR 999\.1 file\.xml: has a DOCTYPE .*entities frist") as err:
        parse_edition(doc, "SR 999.1 file.xml")
    assert err.value.stage == "validate"  # the downloader refuses it like a wrong identity


def test_a_doctype_without_entities_is_refused_too():
    doc = edition_xml(body=article("art_1", "1", "1|Text."))
    head, sep, rest = doc.partition(b"?>")
    with pytest.raises(NotVerbatim, match="DOCTYPE"):
        parse_xml(head + sep + b'<!DOCTYPE akomaNtoso SYSTEM "akn.dtd">' + rest, "f")


def test_a_processing_instruction_in_the_text_is_refused_naming_it():
    doc = edition_xml(body=article("art_1", "1", "1|Die Frist <?fedlex hidden words?>beträgt 30 Tage."))
    with pytest.raises(NotVerbatim, match=r"processing instruction <\?fedlex"):
        parse_edition(doc, "f")


def test_an_article_with_content_but_no_text_is_refused_a_repealed_one_is_not():
    empty = '<article eId="art_2"><num><b>Art. 2</b></num><paragraph eId="art_2/para_1"><content><p> </p></content></paragraph></article>'
    with pytest.raises(EmptyArticle, match="article art_2 .*has content but no text"):
        parse_edition(edition_xml(body=article("art_1", "1", "1|Text.") + empty), "f")
    repealed = '<article eId="art_2"><num><b>Art. 2</b><authorialNote><p>Aufgehoben</p></authorialNote></num></article>'
    parsed = parse_edition(edition_xml(body=article("art_1", "1", "1|Text.") + repealed), "f")
    assert [a.text for a in parsed.articles] == ["1 Text.", ""]


def test_a_file_over_the_size_limit_is_refused_before_parsing(monkeypatch):
    from chpit_assets.akn import identity

    doc = edition_xml(body=article("art_1", "1", "1|Text."))
    monkeypatch.setattr(identity, "MAX_EDITION_BYTES", len(doc) - 1)
    with pytest.raises(TooLarge, match=f"{len(doc)} bytes, over the limit of {len(doc) - 1}"):
        parse_edition(doc, "f")


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_real_sample_file_is_refused_and_none_has_a_refused_construct(path):
    data = path.read_bytes()
    assert b"<!DOCTYPE" not in data and data.count(b"<?") == 1
    assert parse(path).articles


def test_the_pi_precheck_finds_exactly_what_a_search_for_lt_question_mark_finds():
    from chpit_assets.akn.identity import _may_have_pi

    cases = [
        b'<?xml version="1.0"?><a>Wer? Wann?</a>',
        b'\xef\xbb\xbf<?xml version="1.0"?><a/>',
        b"<a><?pi x?></a>",
        b"<a>?</a>",
        b"ab<?",
        b"?<?",
        b"<?",
        b"",
        b"<a>x<?y?>?</a>",
    ]
    for data in cases:
        assert _may_have_pi(data) == (data.find(b"<?", 2) != -1), data
