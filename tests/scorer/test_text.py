"""S1 normalise() and S2 units(), on real Fedlex wording."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_scorer import MIN_FALLBACK_UNIT_LEN, normalise, units
from tests.scorer.fedlex_text import articles

DSG = "cc-2022-491/20250707-de.xml"


def test_normalise_folds_quotes_dashes_soft_hyphen_nbsp_and_ellipsis():
    # S1: every cosmetic variant in one string, each mapped to its fold.
    raw = (
        "\u00abDaten\u00bb \u201eschutz\u201c \u201dx\u201f "
        "\u2018a\u2019 \u201ab\u201b "
        "1\u20102\u20113\u20124\u20135\u20146\u22127 "
        "Bear\u00adbeitung\u00a0\u00a0und\t\n Weiter\u2026  "
    )
    assert normalise(raw) == '"daten" "schutz" "x" \'a\' \'b\' 1-2-3-4-5-6-7 bearbeitung und weiter...'


def test_normalise_applies_nfkc_before_lowercasing_and_handles_none():
    # Full-width letters and the "ﬁ" ligature are compatibility forms (NFKC).
    assert normalise("\uff21RT. \ufb01") == "art. fi"
    assert normalise(None) == ""
    assert normalise("   ") == ""


def test_normalise_keeps_trailing_punctuation_of_a_whole_text():
    # Only units() strips trailing punctuation; an answer keeps its last ".".
    assert normalise("Er ist zu begründen.") == "er ist zu begründen."


def test_units_split_a_real_article_at_line_start_markers():
    text = articles(DSG)["art_6"]
    got = units(text)
    assert len(got) == 7
    assert got[0] == "personendaten müssen rechtmässig bearbeitet werden"
    assert got[6].startswith("die einwilligung muss ausdrücklich erfolgen für: a. die bearbeitung")
    # markers are consumed, trailing "." stripped
    assert not any(u[0].isdigit() or u.endswith(".") for u in got)


def test_units_recognise_bis_markers_and_drop_text_before_the_first_marker():
    text = "Art. 24 Meldung\n5 Er kann die Information einschränken.\n5bis Der EDÖB kann die Meldung weiterleiten."
    assert units(text) == ["er kann die information einschränken", "der edöb kann die meldung weiterleiten"]


def test_units_do_not_split_at_a_marker_in_mid_line():
    # "Artikel 26 Absatz 1 Buchstabe b" contains "26 " and "1 " but not at a line start.
    para = articles(DSG)["art_24"].split("\n")[4]
    assert para.startswith("5 Er kann")
    assert len(units(para)) == 1


def test_units_fall_back_to_sentences_without_markers():
    # DSG Art. 1 has no numbered paragraph; a marker-less text splits at . ; :
    one = articles(DSG)["art_1"]
    assert units(one) == [normalise(one).rstrip(".")]
    text = "Erster Satz ist lang genug hier. Zweiter: ganz kurz; Dritter Teil mit genug Zeichen!"
    assert units(text) == ["erster satz ist lang genug hier", "dritter teil mit genug zeichen"]


def test_units_min_len_floor_is_measured_after_normalising_and_stripping():
    text = "1 Er ist zu begründen.\n2 Ok.\n3 Personendaten müssen rechtmässig bearbeitet werden."
    # "er ist zu begründen" is 19 characters: below 25, above 8 (S6/S7 floor).
    assert units(text) == ["personendaten müssen rechtmässig bearbeitet werden"]
    assert units(text, MIN_FALLBACK_UNIT_LEN) == [
        "er ist zu begründen",
        "personendaten müssen rechtmässig bearbeitet werden",
    ]


@pytest.mark.parametrize("text", [None, "", "   \n  "])
def test_units_of_empty_text_is_empty(text):
    assert units(text) == []


def test_units_keep_duplicates_in_text_order():
    text = "1 Dieser Absatz steht zweimal im Artikel.\n2 Dieser Absatz steht zweimal im Artikel."
    assert units(text) == ["dieser absatz steht zweimal im artikel"] * 2


def test_re_whitespace_and_str_isspace_agree_on_every_code_point():
    # normalise() collapses with str.split(); S1 is stated with a regex \s+.
    # They are the same operation only if both use the same whitespace set.
    import re
    import sys

    ws = re.compile(r"\s")
    assert [c for c in map(chr, range(sys.maxunicode + 1)) if bool(ws.fullmatch(c)) != c.isspace()] == []


def _literal_s1(text):
    """S1 written as stated, one step per clause, for comparison."""
    import re
    import unicodedata

    t = unicodedata.normalize("NFKC", text or "").lower()
    for chars, to in (("«»“”„‟", '"'), ("‘’‚‛", "'"), ("\u2010\u2011\u2012\u2013\u2014\u2212", "-")):
        t = re.sub(f"[{chars}]", to, t)
    t = t.replace("…", "...").replace("\u00ad", "")
    return re.sub(r"\s+", " ", t).strip()


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.characters(codec="utf-8")
        | st.sampled_from("«»“”„‟‘’‚‛\u2010\u2011\u2012\u2013\u2014\u2212…\u00ad\u00a0\u2028 \n\t")
    )
)
def test_normalise_equals_the_literal_spec(text):
    assert normalise(text) == _literal_s1(text)
