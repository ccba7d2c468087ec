"""Repeated article numbers and eIds (issue 13, B9, R2) on the constructed act SR 777 (conftest
`repeated_articles`): the store keys articles by (e_id, occurrence); the tools answer for such an
act, resolve a repeated number the R2 way and say that another article carries it."""

from __future__ import annotations

import pytest

from chpit_assets.pit import Carrier, UnknownArticle, call_tool


def test_an_unambiguous_number_resolves_normally(tools):
    r = tools.ch_get_act_article("777", "179", as_of="2024-06-01")
    assert (r.e_id, r.occurrence, r.heading, r.also_carried_by) == ("art_179", 1, "Neues Recht", [])


def test_a_repeated_eid_resolves_to_its_first_occurrence_and_names_the_other(tools):
    r = tools.ch_get_act_article("777", "178", as_of="2021-01-01")
    assert (r.e_id, r.occurrence, r.text) == ("art_178", 1, "1 Neues Recht 178.")
    assert r.also_carried_by == [Carrier("art_178", 2, "Altes Recht")]
    out = r.to_dict()["article"]
    assert out["also_carried_by"] == [{"e_id": "art_178", "occurrence": 2, "heading": "Altes Recht"}]
    assert (out["e_id"], out["article_number"], out["marginal_note"]) == ("art_178", "178", "Neues Recht")


def test_the_un_nested_eid_wins_over_document_order(tools):
    # disp_u2/art_5 comes first in the document; R2 takes the top-level art_5 anyway.
    r = tools.ch_get_act_article("777", "5", as_of="2021-01-01")
    assert (r.e_id, r.text) == ("art_5", "1 Hauptartikel fünf.")
    assert r.also_carried_by == [Carrier("disp_u2/art_5", 1, "Übergang")]


def test_a_number_repeated_in_one_edition_only(tools):
    # Art. 179 is repeated in 2020 (old-law copy), unique from 2024; Art. 180 the other way round.
    assert [c.occurrence for c in tools.ch_get_act_article("777", "179", as_of="2020-05-05").also_carried_by] == [2]
    assert tools.ch_get_act_article("777", "180", as_of="2020-05-05").also_carried_by == []
    later = tools.ch_get_act_article("777", "180", as_of="2024-05-05")
    assert (later.occurrence, [c.occurrence for c in later.also_carried_by]) == (1, [2])


def test_the_oracle_reaches_every_occurrence(tools):
    first = tools.resolve_by_act(7, "de", "2024-01-01", e_id="art_178")
    second = tools.resolve_by_act(7, "de", "2024-01-01", e_id="art_178", occurrence=2)
    assert (first.occurrence, first.text) == (1, "1 Neues Recht 178, geändert.")
    assert (second.occurrence, second.text, second.heading) == (2, "1 Altes Recht 178.", "Altes Recht")
    assert [c.occurrence for c in second.also_carried_by] == [1]
    # By e_id the oracle answers exactly what the tool answers by number.
    assert first.to_dict() == tools.ch_get_act_article("777", "178", as_of="2024-01-01").to_dict()
    with pytest.raises(UnknownArticle, match="occurrence 3"):
        tools.resolve_by_act(7, "de", "2024-01-01", e_id="art_178", occurrence=3)


def test_history_keys_changes_by_eid_and_occurrence(tools):
    h = tools.ch_get_act_history("777")
    assert [(c.e_id, c.occurrence, c.change_type) for c in h.changes] == [
        ("art_178", 1, "modified"),  # the new-law 178; the old-law copy (occurrence 2) is unchanged
        ("art_180", 2, "added"),  # a second Art. 180 appears
        ("art_179", 2, "removed"),  # the old-law Art. 179 disappears, the new-law one stays
    ]
    filtered = tools.ch_get_act_history("777", "180")
    assert [(c.e_id, c.occurrence, c.change_type) for c in filtered.changes] == [("art_180", 2, "added")]


def test_full_text_carries_every_article_repeated_ones_included(tools):
    t = tools.ch_get_act_text("777", "2021-01-01")
    assert [(a.e_id, a.occurrence) for a in t.articles] == [
        ("disp_u2/art_5", 1),
        ("art_5", 1),
        ("art_178", 1),
        ("art_179", 1),
        ("art_180", 1),
        ("art_178", 2),
        ("art_179", 2),
    ]
    assert "1 Altes Recht 178." in t.text and "1 Neues Recht 178." in t.text


def test_call_tool_answers_with_the_published_keys_for_a_repeated_number(tools):
    out = call_tool(tools, "ch_get_act_article", {"sr_number": "777", "article": "178", "as_of": "2024-01-01"})
    assert list(out)[:7] == ["sr_number", "abbreviation", "title", "lang", "as_of", "version", "article"]
    assert out["article"]["also_carried_by"][0]["occurrence"] == 2
    assert out["lang"] == "de" and out["version"]["version_id"] == 72
