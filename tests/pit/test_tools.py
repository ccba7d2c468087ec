"""The point-in-time tools on the constructed store (conftest.py): editions by date (R2), the SR
tiebreak, typed errors, the oracle's shared code path (R1), history and full text (the schema and
`call_tool` are test_schema.py's)."""

from __future__ import annotations

from datetime import date

import pytest

from chpit_assets.pit import (
    Carrier,
    DateBeforeFirstEdition,
    InvalidArgument,
    NoEditionInLanguage,
    NoEditionOnDate,
    PitTools,
    UnknownAct,
    UnknownArticle,
    UnknownLanguage,
)

from .conftest import TODAY, art1

D = date.fromisoformat


# --------------------------------------------------------------------------- editions by date


def test_no_date_means_the_edition_covering_today(tools):
    r = tools.ch_get_act_article("999.1", "1", "de")
    assert (r.edition.version_id, r.as_of, r.as_of_defaulted) == (14, TODAY, True)
    assert r.text == art1("2021")
    assert (r.act.act_id, r.act.abbreviation, r.act.eli) == (1, "TG", "https://fedlex.data.admin.ch/eli/cc/2019/1")


@pytest.mark.parametrize(
    "as_of, version_id",
    [
        ("2020-01-01", 11),
        ("2020-12-31", 11),  # the end date is inclusive
        ("2021-01-01", 12),
        ("2021-06-30", 12),
        ("2022-01-01", 14),
        ("2025-12-31", 14),
        ("2026-03-01", 15),  # a future-dated edition answers for its own dates
    ],
)
def test_as_of_picks_the_covering_parsed_edition(tools, as_of, version_id):
    r = tools.ch_get_act_article("999.1", "1", "de", as_of=as_of)
    assert (r.edition.version_id, r.as_of, r.as_of_defaulted) == (version_id, D(as_of), False)


def test_future_edition_is_not_today(tools):
    assert tools.ch_get_act_article("999.1", "1", "de").text != art1("2026")
    assert tools.ch_get_act_article("999.1", "1", "de", as_of=date(2026, 1, 1)).text == art1("2026")


def test_a_date_in_a_gap_is_an_error_naming_both_sides(tools):
    # The 2021-07-01 edition exists but never parsed (stage 'fetch'): it is not returned, not quoted.
    with pytest.raises(NoEditionOnDate) as exc:
        tools.ch_get_act_article("999.1", "1", "de", as_of="2021-09-01")
    ctx = exc.value.context
    assert (ctx["previous_edition_end"], ctx["next_edition_start"]) == (D("2021-06-30"), D("2022-01-01"))
    assert "SR 999.1" in str(exc.value) and "2021-09-01" in str(exc.value)


def test_today_in_a_gap_is_the_same_error(store):
    with pytest.raises(NoEditionOnDate):
        PitTools(store, today=D("2021-09-01")).ch_get_act_article("999.1", "1", "de")


def test_date_before_first_edition(tools):
    with pytest.raises(DateBeforeFirstEdition) as exc:
        tools.ch_get_act_article("999.1", "1", "de", as_of="2019-12-31")
    assert exc.value.context["first_edition"] == D("2020-01-01")
    assert "2019-12-31" in str(exc.value) and "SR 999.1" in str(exc.value)


def test_overlapping_editions_resolve_to_the_later_one(tools):
    # Both editions claim 2021-01-01 (the card's B11 case): the newer wins, the day before is the old.
    assert tools.ch_get_act_article("666", "1", "de", as_of="2021-01-01").edition.version_id == 52
    assert tools.ch_get_act_article("666", "1", "de", as_of="2020-12-31").edition.version_id == 51


# --------------------------------------------------------------------------- acts and articles


def test_shared_sr_number_prefers_the_federal_act_in_force_and_says_so(tools):
    r = tools.ch_get_act_article("888", "1", "de")
    assert (r.act.act_id, r.act.abbreviation, r.act.enforcement_status) == (3, "NG", 0)
    assert r.act.other_act_ids == [2]  # the repealed predecessor; the cantonal act 6 is never a candidate
    # The in-force act's editions start 2020: the tool does not fall back to the predecessor (card, Baselines).
    with pytest.raises(DateBeforeFirstEdition):
        tools.ch_get_act_article("888", "1", "de", as_of="2015-01-01")


def test_language_specific_abbreviation_prefers_curated_alias(tools):
    r = tools.ch_get_act_article("999.1", "1", "fr")
    assert (r.act.abbreviation, r.act.title, r.lang) == ("LT", "Loi de test", "fr")
    assert r.text.startswith("1 La présente loi")


@pytest.mark.parametrize("spelling", ["268a bis", "268abis", "Art. 268a bis", "268A BIS", " art 268a  bis "])
def test_article_number_spellings(tools, spelling):
    assert tools.ch_get_act_article("SR 999.1", spelling, "de").e_id == "art_268_a_bis"


def test_a_number_carried_twice_resolves_to_the_top_level_article(tools):
    r = tools.ch_get_act_article("999.1", "7", "de")
    assert (r.e_id, r.occurrence, r.also_carried_by) == ("art_7", 1, [Carrier("disp_u1/art_7", 1, None)])
    assert r.text == "1 Hauptartikel sieben."


def test_unknown_article_says_which_editions_have_it(tools):
    with pytest.raises(UnknownArticle) as exc:
        tools.ch_get_act_article("999.1", "5a", "de", as_of="2021-03-01")
    assert exc.value.context["editions_with_article"] == [D("2022-01-01"), D("2026-01-01")]
    assert "5a" in str(exc.value) and "2021-03-01" in str(exc.value)
    with pytest.raises(UnknownArticle) as exc:
        tools.ch_get_act_article("999.1", "99", "de")
    assert exc.value.context["editions_with_article"] == []


@pytest.mark.parametrize(
    "call, error, named",
    [
        (lambda t: t.ch_get_act_article("123.456", "1", "de"), UnknownAct, "123.456"),
        (lambda t: t.ch_get_act_article("999.1", "1", "xx"), UnknownLanguage, "'xx'"),
        (lambda t: t.ch_get_act_article("999.1", "1", "it"), NoEditionInLanguage, "'it'"),
        (lambda t: t.ch_get_act_history("123.456", lang="de"), UnknownAct, "123.456"),
        (lambda t: t.ch_get_act_text("999.1", "2019-01-01", "de"), DateBeforeFirstEdition, "2019-01-01"),
        (lambda t: t.ch_get_act_article("999.1", "1", "de", as_of="01.01.2022"), InvalidArgument, "01.01.2022"),
    ],
)
def test_typed_errors_name_their_subject(tools, call, error, named):
    with pytest.raises(error) as exc:
        call(tools)
    assert named in str(exc.value)


# --------------------------------------------------------------------------- oracle (R1, R2)


@pytest.mark.parametrize("as_of", ["2020-06-01", "2021-01-01", "2023-05-05", "2026-02-02", None])
@pytest.mark.parametrize("number", ["1", "5a", "7", "268a bis"])
def test_oracle_resolves_exactly_like_the_tool(tools, as_of, number):
    try:
        tool = tools.ch_get_act_article("999.1", number, "de", as_of=as_of)
    except UnknownArticle:
        with pytest.raises(UnknownArticle):
            tools.resolve_by_act(1, "de", as_of, article=number)
        return
    by_e_id = tools.resolve_by_act(1, "de", as_of, e_id=tool.e_id)
    by_number = tools.resolve_by_act(1, "de", as_of, article=number)
    # Act 1 shares its SR number with no other act, so the whole answer is the tool's.
    assert by_number.to_dict() == tool.to_dict()
    assert (by_e_id.edition, by_e_id.e_id, by_e_id.text) == (tool.edition, tool.e_id, tool.text)


def test_oracle_reaches_the_predecessor_act_the_tool_cannot(tools):
    r = tools.resolve_by_act(2, "de", "2015-01-01", e_id="art_1")
    assert (r.act.act_id, r.edition.version_id, r.text) == (2, 31, "1 Altes Gesetz, Artikel 1.")


def test_oracle_errors(tools):
    with pytest.raises(UnknownAct):
        tools.resolve_by_act(404, "de", "2022-01-01", e_id="art_1")
    with pytest.raises(UnknownArticle, match="disp_u9/art_1"):
        tools.resolve_by_act(1, "de", "2022-01-01", e_id="disp_u9/art_1")
    with pytest.raises(InvalidArgument):
        tools.resolve_by_act(1, "de", "2022-01-01", e_id="art_1", article="1")


def test_session_shares_one_connection_with_identical_answers(store):
    tools = PitTools(store, today=TODAY)
    alone = tools.ch_get_act_article("999.1", "1", "de", as_of="2021-02-02").to_dict()
    with tools.session():
        shared = tools._session
        assert shared is not None
        assert tools.ch_get_act_article("999.1", "1", "de", as_of="2021-02-02").to_dict() == alone
        with tools.session():  # nested: same connection, still open afterwards
            assert tools._session is shared
        assert tools.ch_get_act_article("999.1", "1", "de", as_of="2021-02-02").to_dict() == alone
    assert tools._session is None


def test_a_session_reads_each_language_once_and_each_edition_once_within_its_budget(store):
    """Issue 27.4: a session's LookupCache reads a language's acts, aliases and editions in one query
    each and an edition's articles in one, keeps them while its texts fit the budget, and answers
    exactly as the per-call queries do."""
    tools = PitTools(store, today=TODAY)
    asks = [("999.1", "1", "2020-06-01"), ("999.1", "7", "2020-06-01"), ("999.1", "1", "2022-06-01")]
    asks += [("777", "178", "2021-01-01"), ("999.1", "7", "2020-07-01")]
    alone = [tools.ch_get_act_article(sr, art, "de", as_of=day).to_dict() for sr, art, day in asks]
    with tools.session():
        assert [tools.ch_get_act_article(sr, art, "de", as_of=day).to_dict() for sr, art, day in asks] == alone
        # Act 1's editions in one query (11, 12, 14, 15), act 7's in another (71, 72).
        assert tools._cache is not None and tools._cache.queries == 3 + 2
        assert tools.resolve_by_act(1, "de", "2020-06-01", e_id="art_7").text == alone[1]["article"]["text"]
        assert tools._cache.queries == 5
    with tools.session():
        assert tools._cache is not None
        tools._cache.max_chars = 1  # no room: only the edition the last call read stays
        assert [tools.ch_get_act_article(sr, art, "de", as_of=day).to_dict() for sr, art, day in asks] == alone
        # Editions 11, 11 (still there), 14, 71, 11 (read again).
        assert len(tools._cache._articles) == 1 and tools._cache.queries == 3 + 4


# --------------------------------------------------------------------------- history and text


def test_history_lists_parsed_editions_today_and_gaps(tools):
    h = tools.ch_get_act_history("999.1")  # lang defaults to de (PROTOCOL §5)
    assert [e.version_id for e in h.editions] == [11, 12, 14, 15]
    assert h.today_version_id == 14 and h.today == TODAY and h.article is None
    assert h.gaps == [(D("2021-07-01"), D("2021-12-31"))]
    out = h.to_dict()
    assert [e["in_force_today"] for e in out["editions"]] == [False, False, True, False]
    assert out["editions"][0]["eli_consolidation_uri"].endswith("/20200101")


def test_history_changes_between_consecutive_parsed_editions(tools):
    # 12 -> 14 skips the never-parsed 13; art_1 is unchanged there (2021 text kept), 5a is added.
    h = tools.ch_get_act_history("999.1", lang="de")
    by_pair = {}
    for c in h.changes:
        by_pair.setdefault((c.old_version_id, c.new_version_id), []).append((c.e_id, c.change_type))
    assert by_pair == {
        (11, 12): [("art_1", "modified")],
        (12, 14): [("art_5_a", "added")],
        (14, 15): [("art_1", "modified")],
    }
    filtered = tools.ch_get_act_history("999.1", "5a")
    assert [(c.new_version_id, c.article_number, c.change_type) for c in filtered.changes] == [(14, "5a", "added")]
    assert tools.ch_get_act_history("999.1", "7").changes == []  # both Art. 7 unchanged throughout


def test_history_has_no_date_argument(tools):
    with pytest.raises(TypeError):
        tools.ch_get_act_history("999.1", "1", "de", "2020-01-01")


def test_text_is_every_article_in_document_order(tools):
    t = tools.ch_get_act_text("999.1", "2021-03-01")
    assert t.edition.version_id == 12 and t.next_offset is None and t.total_chars == len(t.text)
    assert [a.e_id for a in t.articles] == [
        "art_1",
        "art_2",
        "art_7",
        "art_10",
        "art_268_a_bis",
        "art_x",
        "disp_u1/art_7",
    ]
    assert t.text.startswith("Art. 1 Zweck\n" + art1("2021") + "\n\nArt. 2\n")
    for a in t.articles:  # each index entry points at its block
        assert t.text[a.offset :].startswith(f"Art. {a.article_number}" if a.article_number else a.e_id)


def test_text_pages_by_character_offset(tools):
    whole = tools.ch_get_act_text("999.1", "2021-03-01")
    pages, offset = [], 0
    while offset is not None:
        page = tools.ch_get_act_text("999.1", "2021-03-01", offset=offset, max_chars=37)
        assert len(page.text) <= 37 and page.total_chars == whole.total_chars
        pages.append(page.text)
        offset = page.next_offset
    assert "".join(pages) == whole.text
    past = tools.ch_get_act_text("999.1", "2021-03-01", offset=10**6)
    assert (past.text, past.next_offset, past.articles) == ("", None, [])


def test_text_requires_a_date(tools):
    with pytest.raises(TypeError):
        tools.ch_get_act_text("999.1")
    with pytest.raises(InvalidArgument):
        tools.ch_get_act_text("999.1", None)
