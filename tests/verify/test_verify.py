"""Cite or abstain (V1-V4) on real article text: SR 235.1 Art. 24 as the 2025-04-01 edition words it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chpit_assets.akn.parser import parse_edition
from chpit_assets.verify import MIN_QUOTE, Evidence, references, typographic, verify_answer

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"


@pytest.fixture(scope="module")
def art24() -> Evidence:
    edition = parse_edition((SAMPLE / "cc-2022-491" / "20250401-de.xml").read_bytes(), "DSG 2025-04-01")
    text = next(a.text for a in edition.articles if a.e_id == "art_24")
    return Evidence("235.1", "DSG", "24", text, 1)


def test_a_verbatim_answer_survives_whole(art24):
    result = verify_answer(art24.text, [art24])
    assert not result.abstained
    assert result.answer == art24.text
    assert result.verified_citations == ["SR 235.1 Art. 24"]
    assert all(c.kept and c.verbatim for c in result.checks)


def test_typography_is_forgiven_but_not_wording(art24):
    first_line = art24.text.splitlines()[0]
    retyped = first_line.replace(" ", "  ").replace("-", "\u2011")
    result = verify_answer(retyped, [art24])
    assert not result.abstained and result.checks and all(c.verbatim for c in result.checks)
    assert verify_answer(first_line.lower(), [art24]).abstained  # case is wording


def test_an_invented_sentence_is_removed_and_the_rest_kept(art24):
    invented = "Der Verantwortliche zahlt dem EDÖB eine Gebühr von 500 Franken."
    answer = art24.text.splitlines()[0] + "\n" + invented
    result = verify_answer(answer, [art24])
    assert not result.abstained and invented not in result.answer
    assert result.answer == art24.text.splitlines()[0]
    assert [c.kept for c in result.checks if c.sentence == invented] == [False]


def test_a_wrong_article_citation_is_removed(art24):
    answer = "Art. 25 DSG lautet so. " + art24.text.splitlines()[0]
    result = verify_answer(answer, [art24])
    claim = next(c for c in result.checks if c.sentence.startswith("Art. 25"))
    assert not claim.kept and not claim.cites_verified
    assert "Art. 25" not in result.answer and not result.abstained


def test_nothing_verifiable_abstains(art24):
    result = verify_answer("Art. 30 BV setzt den Höchstpreis für Brot fest.", [art24])
    assert result.abstained and result.answer == ""
    assert verify_answer("", [art24]).abstained
    # Short verbatim pieces alone ("1", a list marker) prove nothing.
    short = art24.text.splitlines()[0][: MIN_QUOTE - 5]
    assert verify_answer(short, [art24]).abstained
    assert verify_answer(art24.text, []).abstained


def test_references_are_read_with_their_abbreviation():
    assert references("Gemäss Art. 5 Abs. 2 DSG und Artikel 268a bis ZGB") == [("5", "DSG"), ("268abis", "ZGB")]


@given(st.text(max_size=60))
def test_typographic_normalisation_is_idempotent(text):
    assert typographic(typographic(text)) == typographic(text)
