"""The compiled walk (chpit_assets/akn/flatten.pyx) against the extraction it replaced (tests/akn/reference.py).

The walk must give exactly what the XSLT stylesheet, the Python line joiner and the parser's Python
records gave: on every real file, on generated trees (any nesting of the elements the layout names,
elements of other namespaces, nested articles and tables, white space of every kind at every edge,
missing and repeated eIds), on each character str.strip() takes for white space, and on generated
article numbers (the walk reads "Art. 5a bis" itself and leaves every other form to the parser's
rule). Refusals and limits are checked through parse_edition, which names the file.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from xml.sax.saxutils import escape

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from chpit_assets.akn import flatten
from chpit_assets.akn.errors import AknError
from chpit_assets.akn.identity import AKN_NS, parse_xml
from chpit_assets.akn.parser import Article, _article_number, parse_edition
from tests.akn.reference import reference_articles, reference_records
from tests.akn_factory import article, edition_xml

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
EVERY_FILE = sorted(SAMPLE.rglob("*.xml"))  # the Federal Gazette text too: the walk does not care what act it is
# Every character str.strip() takes that XML 1.0 allows in text (not \x0b, \x0c, \x1c..\x1f).
WHITE_SPACE = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace() and (c >= 0x20 or chr(c) in "\t\n\r")]


def outcome(records: Callable[[], list[Article]]) -> list[Article] | tuple[type, tuple]:
    try:
        return records()
    except (flatten.MissingEId, flatten.LostText) as exc:
        return type(exc), exc.args


def walk_and_reference(data: bytes) -> tuple[list[Article] | tuple, list[Article] | tuple]:
    """The walk's records (or the problem it raised) and the reference's."""
    root = parse_xml(data, "t")
    return outcome(lambda: flatten.articles(root, Article, _article_number)), outcome(lambda: reference_records(root))


@pytest.mark.parametrize("path", EVERY_FILE, ids=lambda p: p.relative_to(SAMPLE).as_posix())
def test_every_real_file_gives_what_the_stylesheet_gave(path: Path):
    walked, reference = walk_and_reference(path.read_bytes())
    assert len(walked) > 0
    assert walked == reference


def test_every_white_space_character_is_stripped_at_a_line_edge_as_str_strip_strips_it():
    # Each character before and after a paragraph's text, a number and a table cell: the walk decides
    # white space on UTF-8 bytes, str.strip() on code points; the two must agree on each.
    assert len(WHITE_SPACE) == 23 and "\xa0" in WHITE_SPACE and "\u3000" in WHITE_SPACE
    not_white = ["\u200b", "\ufeff", "\u180e", "\u00ad", "\ue006"]
    body = []
    for i, c in enumerate(WHITE_SPACE + not_white):
        body.append(
            f'<article eId="art_{i}"><num>{c}Art. {i}{c}</num><paragraph><num>{c}1{c}</num>'
            f"<content><p>{c}Text {i}{c}</p><table><tr><td>{c}a{c}</td><td>{c}</td><td>b{c}</td></tr></table>"
            f"</content></paragraph></article>"
        )
    walked, reference = walk_and_reference(edition_xml(body="".join(body).replace("\r", "&#13;")))
    assert walked == reference
    texts = [a.text for a in walked]
    assert texts[0] == "1 Text 0\na\t\tb"  # "\t" is white space: stripped at the ends, kept between cells
    # A zero-width space is not white space: kept around the number, the text and the cells.
    z = "\u200b"
    assert texts[len(WHITE_SPACE)] == f"{z}1{z} {z}Text {len(WHITE_SPACE)}{z}\n{z}a{z}\t{z}\tb{z}"


def akn(name: str) -> str:
    return f"{{{AKN_NS}}}{name}"


# Generated trees: names the layout gives a meaning to, in the AKN namespace, in another one and in none.
NAMES = [
    "p", "num", "heading", "paragraph", "item", "content", "intro", "wrapUp", "list", "blockList",
    "listIntroduction", "subdivision", "level", "point", "table", "tr", "td", "th", "authorialNote",
    "placeholder", "br", "article", "inline", "b", "i", "sup", "ref",
]  # fmt: skip
OTHER_NS = "urn:example:other"
TEXT = st.text(
    alphabet=st.sampled_from(["a", "Z", "1", ".", " ", " ", "\n", "\t", "\r", "\xa0", "\u2000", "\u3000",
                              "\x85", "\u2028", "\u200b", "\u00ad", "é", "ß", "\u0101", "\u0436", "\U0001f600",
                              "\ue006"]),
    max_size=8,
)  # fmt: skip
TAGS = st.one_of(
    st.sampled_from([akn(n) for n in NAMES]),
    st.sampled_from([f"{{{OTHER_NS}}}{n}" for n in ("p", "num", "authorialNote", "br", "paragraph")]),
    st.sampled_from(["p", "num", "article"]),
)


def subtree(children: st.SearchStrategy) -> st.SearchStrategy:
    """Any element over `children`, and (drawn as often) the shapes the layout reads closely: a table's
    rows and cells, a numbered paragraph or item."""
    kids = st.lists(st.tuples(children, TEXT), max_size=3)
    cell = st.tuples(st.sampled_from([akn("td"), akn("th"), akn("p")]), TEXT, kids)
    row = st.tuples(st.just(akn("tr")), TEXT, st.lists(st.tuples(cell, TEXT), max_size=4))
    number = st.tuples(st.just(akn("num")), TEXT, st.just([]))
    return st.one_of(
        st.tuples(TAGS, TEXT, st.lists(st.tuples(children, TEXT), max_size=4)),
        st.tuples(st.just(akn("table")), TEXT, st.lists(st.tuples(st.one_of(row, children), TEXT), max_size=4)),
        st.tuples(
            st.sampled_from([akn("paragraph"), akn("item")]),
            TEXT,
            st.lists(st.tuples(st.one_of(number, children), TEXT), max_size=4),
        ),
    )


TREES = st.recursive(st.tuples(TAGS, TEXT, st.just([])), subtree, max_leaves=30)
E_IDS = st.one_of(st.none(), st.sampled_from(["art_1", "art_2", " art_1 ", "art\n_3", "art_1  bis", ""]))


def build(parent: etree._Element, tree: tuple) -> None:
    tag, text, children = tree
    element = etree.SubElement(parent, tag)
    element.text = text
    for child, tail in children:
        build(element, child)
        element[-1].tail = tail


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(E_IDS, st.lists(TREES, max_size=4)), min_size=1, max_size=4), st.booleans())
def test_generated_trees_give_what_the_stylesheet_gave(articles, second_body):
    root = etree.Element(akn("akomaNtoso"), nsmap={None: AKN_NS, "o": OTHER_NS})
    bodies = [etree.SubElement(etree.SubElement(root, akn("act")), akn("body"))]
    if second_body:  # a second act with a body: its articles follow in document order
        bodies.append(etree.SubElement(etree.SubElement(root, akn("act")), akn("body")))
    for i, (e_id, trees) in enumerate(articles):
        element = etree.SubElement(bodies[i % len(bodies)], akn("article"))
        if e_id is not None:
            element.set("eId", e_id)
        for tree in trees:
            build(element, tree)
    walked, reference = walk_and_reference(etree.tostring(root))
    assert walked == reference


def test_nesting_two_thousand_deep_is_walked_to_the_bottom():
    # libxml2 (huge_tree) accepts 2048 levels; the walk recurses once per level.
    deep = "<content>" * 2000 + "<p>Ganz unten.</p>" + "</content>" * 2000
    edition = parse_edition(edition_xml(body=f'<article eId="art_1"><num>Art. 1</num>{deep}</article>'), "t")
    assert edition.articles[0].text == "Ganz unten."


@pytest.mark.parametrize(
    "reference",
    ["&#xE002;", "&#xe000;", "&#57349;"],  # U+E002, U+E000, U+E005
)
def test_a_separator_written_as_a_character_reference_is_refused_naming_the_file(reference):
    # The bytes hold no separator (the parser's first check passes); the text does once parsed.
    doc = edition_xml(body=article("art_1", "1", f"1|Ein Zeichen {reference} hier."))
    with pytest.raises(AknError, match="private-use") as info:
        parse_edition(doc, "cc/1/20250101-de.xml")
    assert "cc/1/20250101-de.xml" in str(info.value)
    in_e_id = edition_xml(body=f'<article eId="art_{reference}"><num>Art. 1</num><p>Text.</p></article>')
    with pytest.raises(AknError, match="private-use"):
        parse_edition(in_e_id, "t")


def test_other_private_use_characters_from_a_reference_are_text():
    doc = edition_xml(body=article("art_1", "1", "1|Symbol &#xE006; und &#xF8FF; hier."))
    assert parse_edition(doc, "t").articles[0].text == "1 Symbol \ue006 und \uf8ff hier."


def test_a_root_that_is_not_akoma_ntoso_has_no_articles():
    root = etree.fromstring(b'<other xmlns="urn:x"><act><body><article eId="a"/></body></act></other>')
    assert flatten.articles(root, Article, _article_number) == []
    assert reference_articles(root) == []


INNER = '<article eId="art_2"><num>Art. 2</num><p>Innen.</p></article>'


@pytest.mark.parametrize(
    "placement",
    [
        f"<p>Aussen<authorialNote><p>Fussnote {INNER}</p></authorialNote> weiter.</p>",  # a footnote
        f"<p>Aussen<br>{INNER}</br> weiter.</p>",  # a br's content
        f"<content><num>x{INNER}</num><p>Text.</p></content>",  # a number in block position
        f"<paragraph><num>1{INNER}</num><content><p>Text.</p></content></paragraph>",  # a paragraph's number
        f"<table><tr><td>{INNER}</td></tr></table>",  # a table cell
        f"<p>Aussen {INNER}</p>",  # inline text
        INNER,  # a block
    ],
    ids=["footnote", "br", "block-num", "paragraph-num", "cell", "inline", "block"],
)
def test_an_article_nested_anywhere_is_a_record_of_its_own(placement):
    # The walk searches below an article for another one only where it met one; each place the layout
    # reads no text from (a footnote, a br, a number read elsewhere) must still be looked at.
    body = f'<article eId="art_1"><num>Art. 1</num>{placement}</article><article eId="art_3"><p>Danach.</p></article>'
    walked, reference = walk_and_reference(edition_xml(body=body))
    assert [e_id for e_id, *_ in walked] == ["art_1", "art_2", "art_3"]
    assert walked == reference


# Article numbers: the printed forms the walk reads itself ("Art. 5", "Art. 268a bis") and near misses
# it must leave to the parser's rule (other digits, capitals, a third word, no-break spaces, "Art" alone).
NUMBER_PIECES = ["Art.", "Art", "art.", "Artikel", "§", " ", "  ", "\xa0", "\n", "1", "0", "9", "42", "\u0663",
                 "\uff15", "a", "z", "bis", "ter", "A", "B", "é", ".", "-", "_"]  # fmt: skip
NUMBERS = st.tuples(
    st.sampled_from(["Art. ", "Art.", "Art.  ", "Art.\xa0", "", "Art. 1"]),
    st.lists(st.sampled_from(NUMBER_PIECES), max_size=7),
).map(lambda t: t[0] + "".join(t[1]))
NUMBER_E_IDS = st.sampled_from(["art_5", "art_5_a", "art_268_a_bis", "art_1_a_b_c", "disp_1", "art_"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NUMBER_E_IDS, NUMBERS), min_size=1, max_size=6))
def test_generated_article_numbers_are_the_parser_rules(numbers):
    body = "".join(
        f'<article eId="{e_id}"><num><b>{escape(num)}</b></num><p>Text.</p></article>' for e_id, num in numbers
    )
    walked, reference = walk_and_reference(edition_xml(body=body))
    assert walked == reference


def test_the_walk_reads_the_common_numbers_and_leaves_the_rest_to_the_rule():
    rule_saw = []

    def rule(num: str, e_id: str) -> str | None:
        rule_saw.append(num)
        return _article_number(num, e_id)

    body = "".join(
        f'<article eId="art_{i}"><num>{num}</num><p>Text.</p></article>'
        for i, num in enumerate(
            ["Art. 5", "Art.\t268a  bis", "Art. 179decies", "Art. 5 a b c", "Art. 5A", "§ 3", "Art. \u0663"]
        )
    )
    records = flatten.articles(parse_xml(edition_xml(body=body), "t"), Article, rule)
    assert [a.article_number for a in records] == ["5", "268a bis", "179decies", None, None, "3", "\u0663"]
    assert rule_saw == ["Art. 5 a b c", "Art. 5A", "§ 3", "Art. \u0663"]


# Text of each width a str can have: the walk sizes the str from the widest UTF-8 lead byte it saw, so
# each class alone and mixed must decode as Python decodes (XML 1.0 characters; U+E000..U+E005 refused).
WIDTHS = [
    (0x20, 0x7E),
    (0xA0, 0xFF),
    (0x100, 0x13F),
    (0x140, 0x7FF),
    (0x800, 0xD7FF),
    (0xE006, 0xFFFD),
    (0x10000, 0x10FFFF),
]
OF_ONE_WIDTH = st.sampled_from(WIDTHS).flatmap(
    lambda r: st.text(st.characters(min_codepoint=r[0], max_codepoint=r[1], exclude_categories=["Cs"]), min_size=1)
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(OF_ONE_WIDTH, st.lists(OF_ONE_WIDTH, min_size=2, max_size=3).map("".join)), min_size=1, max_size=5
    )
)
def test_text_of_every_width_decodes_as_python_decodes_it(texts):
    body = "".join(
        f'<article eId="art_{i}"><num>Art. {i}</num><heading>{escape(t)}</heading><p>{escape(t)}</p></article>'
        for i, t in enumerate(texts)
    )
    walked, reference = walk_and_reference(edition_xml(body=body))
    assert walked == reference
