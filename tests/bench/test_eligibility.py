"""PROTOCOL §1.1-§1.4 (B1-B10, B12 per half) on constructed editions: each rule excludes what it
should, under its published name, in the published order, and the buckets add up to
changes_considered; B11 and B12 are counted by the item loop (PROTOCOL §1.7)."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from chpit_assets.bench.eligibility import FILTERED_REASONS, SKIP_REASONS, evaluate, write_eligible
from chpit_assets.bench.items import BuildSettings, build_items
from chpit_assets.bench.tables import ensure_tables

from .conftest import long_text, run_builder

OLD = long_text("Die Frist beträgt 30 Tage ab Zustellung des Entscheids an die betroffene Partei.")
NEW = long_text("Die Frist beträgt 60 Tage ab Zustellung des Entscheids an die betroffene Partei.")


def two_editions(
    corpus, act_id, lang="de", articles_old=None, articles_new=None, old_end="2024-12-31", new_start="2025-01-01", **kw
):
    corpus.edition(act_id, lang, "2023-01-01", old_end, articles_old or {"art_24": ("24", OLD)}, **kw)
    corpus.edition(act_id, lang, new_start, None, articles_new or {"art_24": ("24", NEW)}, **kw)


def counts_add_up(result):
    assert sum(result.skips.values()) + result.eligible.height == result.changes_considered


def test_plain_change_is_eligible_with_both_halves(store, corpus, tmp_path):
    two_editions(corpus, corpus.act("a"))
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.eligible.height == 1 and elig.changes_considered == 1
    assert sorted(i["kind"] for i in built.items) == ["after", "before"]


def test_repealed_act_is_not_considered(store, corpus, tmp_path):
    # B6: a repealed act is outside the population, not a skip.
    two_editions(corpus, corpus.act("live"))
    two_editions(corpus, corpus.act("gone", sr="999.1", abbr="ALT", status=1))
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.changes_considered == 1
    assert {i["sr_number"] for i in built.items} == {"235.1"}


def test_abbreviation_sources(store, corpus, tmp_path):
    # B7: fr reads ch_act_alias; curated beats title_paren; title_paren alone is used; none -> skip.
    both = corpus.act("both", sr="100", aliases={"fr": [("TP", "title_paren"), ("CUR", "curated")]})
    paren = corpus.act("paren", sr="200", aliases={"fr": [("LTP", "title_paren")], "it": [("X", "curated")]})
    none = corpus.act("none", sr="300", aliases={"it": [("Y", "curated")]})
    for act_id in (both, paren, none):
        two_editions(corpus, act_id, lang="fr")
    corpus.flush()
    elig, built = run_builder(store, "fr", tmp_path)
    assert elig.skips["no_abbreviation"] == 1
    assert {(i["sr_number"], i["abbreviation"]) for i in built.items} == {("100", "CUR"), ("200", "LTP")}
    counts_add_up(elig)


def test_alias_ties_go_to_the_smaller_abbreviation(store, corpus, tmp_path):
    # B7 (PROTOCOL §9): curated first, then abbr ascending (the store refuses an empty alias).
    tie = corpus.act("tie", sr="200", aliases={"it": [("LZ", "curated"), ("LB", "curated"), ("LA", "title_paren")]})
    two_editions(corpus, tie, lang="it")
    corpus.flush()
    _, built = run_builder(store, "it", tmp_path)
    assert {i["abbreviation"] for i in built.items} == {"LB"}


def test_german_reads_the_act_abbreviation_only(store, corpus, tmp_path):
    two_editions(corpus, corpus.act("a", abbr=None, aliases={"de": [("ALIAS", "curated")]}))
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.skips["no_abbreviation"] == 1


def test_ambiguous_number_top_level_and_nested(store, corpus, tmp_path):
    # B9: art_7 and disp_u1/art_7 share the number 7; both changes are ambiguous.
    arts_old = {
        "art_7": ("7", OLD),
        "disp_u1/art_7": ("7", OLD.replace("Frist", "Übergangsfrist")),
        "art_8": ("8", OLD),
    }
    arts_new = {
        "art_7": ("7", NEW),
        "disp_u1/art_7": ("7", NEW.replace("Frist", "Übergangsfrist")),
        "art_8": ("8", NEW),
    }
    two_editions(corpus, corpus.act("a"), articles_old=arts_old, articles_new=arts_new)
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.skips["ambiguous_article"] == 2
    assert {i["e_id"] for i in built.items} == {"art_8"}


def test_number_shared_only_in_the_other_edition_is_ambiguous(store, corpus, tmp_path):
    # B9 looks at EITHER edition: a nested art_7 that exists only in the old edition still clashes.
    two_editions(
        corpus,
        corpus.act("a"),
        articles_old={"art_7": ("7", OLD), "disp_u1/art_7": ("7", "1 Übergangsbestimmung.")},
        articles_new={"art_7": ("7", NEW)},
    )
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.skips["ambiguous_article"] == 1


def test_null_article_number_is_tested_first(store, corpus, tmp_path):
    # B8 before B9: a NULL number on a nested e_id counts as no_article_number, not ambiguous.
    two_editions(
        corpus,
        corpus.act("a"),
        articles_old={"disp_u1/art_x": (None, OLD), "art_9": ("9", OLD)},
        articles_new={"disp_u1/art_x": (None, NEW), "art_9": (None, NEW)},
    )
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.skips["no_article_number"] == 2
    assert built.items == []
    counts_add_up(elig)


def test_overlapping_editions_drop_both_halves(store, corpus, tmp_path):
    # B11: the end date is inclusive, so an end equal to the new start overlaps. As published
    # (PROTOCOL §1.7, §9), the overlapping change is eligible and selected, and the item loop counts
    # `overlapping_editions` once per half.
    two_editions(corpus, corpus.act("a", sr="1"), old_end="2025-01-01", new_start="2025-01-01")
    two_editions(corpus, corpus.act("b", sr="2"), old_end="2024-12-31", new_start="2025-01-01")
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.eligible.height == 2 and "overlapping_editions" not in elig.skips
    assert built.stats["selected"] == 2 and built.stats["consumed"] == 2
    assert built.stats["skips"] == {"overlapping_editions": 2}
    assert {i["sr_number"] for i in built.items} == {"2"}


def test_short_and_cosmetic_changes_are_identical_or_short(store, corpus, tmp_path):
    # B4: under 200 normalised chars; B5: differs only by soft hyphen / NBSP / dash typesetting.
    short_old, short_new = "1 Die Frist beträgt 30 Tage.", "1 Die Frist beträgt 60 Tage."
    cosmetic = OLD.replace("Frist", "Fr\u00adist").replace("30 Tage", "30\u00a0Tage")
    two_editions(
        corpus,
        corpus.act("a"),
        articles_old={"art_1": ("1", short_old), "art_2": ("2", OLD)},
        articles_new={"art_1": ("1", short_new), "art_2": ("2", cosmetic)},
    )
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.skips["identical_or_short"] == 2
    assert elig.eligible.height == 0


def test_pure_deletion_gives_one_item(store, corpus, tmp_path):
    # B12: the shorter (new) edition has no unit of its own, so only `before` survives.
    old = long_text("Die Frist beträgt 30 Tage.", "Sie kann auf Gesuch hin einmal um 10 Tage verlängert werden.")
    new = long_text("Die Frist beträgt 30 Tage.")
    two_editions(corpus, corpus.act("a"), articles_old={"art_3": ("3", old)}, articles_new={"art_3": ("3", new)})
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert [i["kind"] for i in built.items] == ["before"]
    assert elig.halves_without_discriminating_unit == 1
    assert built.stats["skips"] == {"no_discriminating_unit": 1}


def test_change_inside_a_short_unit_has_no_discriminating_unit(store, corpus, tmp_path):
    # B12 per half (S3, floor 25): the only difference sits in a paragraph under the floor. The change
    # is still eligible and selected (PROTOCOL §1.4), and yields no item: two halves counted.
    old, new = long_text("Frist: 30 Tage."), long_text("Frist: 60 Tage.")
    two_editions(corpus, corpus.act("a"), articles_old={"art_3": ("3", old)}, articles_new={"art_3": ("3", new)})
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.eligible.height == 1 and elig.halves_without_discriminating_unit == 2
    assert built.stats["skips"] == {"no_discriminating_unit": 2} and built.items == []


def test_sources_option_selects_edition_sources(store, corpus, tmp_path):
    # B2: a pdf edition on either side is excluded unless its source is selected.
    act = corpus.act("a")
    corpus.edition(act, "de", "2019-01-01", "2020-12-31", {"art_24": ("24", OLD)}, source="fedlex_pdf")
    corpus.edition(act, "de", "2021-01-01", None, {"art_24": ("24", NEW)})
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    # Dropped by the published query before counting: outside changes_considered, but named.
    assert elig.filtered["other_source"] == 1 and elig.sources == ("fedlex",)
    assert elig.changes_considered == 0 and elig.skips == {}
    wide = evaluate(store, "de", ("fedlex_pdf", "fedlex"))
    assert wide.eligible.height == 1 and wide.sources == ("fedlex", "fedlex_pdf")


def test_non_federal_act_is_skipped(store, corpus, tmp_path):
    two_editions(corpus, corpus.act("zh", jurisdiction="ZH"))
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.filtered == {"not_federal": 1, "other_source": 0, "not_parsed": 0}
    assert elig.changes_considered == 0


def test_two_acts_sharing_an_sr_number_resolve_by_act_id(store, corpus, tmp_path):
    old_act = corpus.act("old", sr="170.512", aliases={"fr": [("LPubl-ancienne", "curated")]})
    new_act = corpus.act("new", sr="170.512", aliases={"fr": [("LPubl", "curated")]})
    two_editions(corpus, old_act, lang="fr")
    two_editions(corpus, new_act, lang="fr")
    corpus.flush()
    _, built = run_builder(store, "fr", tmp_path)
    by_act = {}
    for item in built.items:
        by_act.setdefault(item["act_id"], set()).add(item["abbreviation"])
        vids = {v["version_id"] for v in corpus.versions if v["act_id"] == item["act_id"]}
        assert {item["gold"]["version_id"], item["distractor"]["version_id"]} <= vids
    assert by_act == {old_act: {"LPubl-ancienne"}, new_act: {"LPubl"}}
    assert len({i["id"] for i in built.items}) == 4  # same SR, e_id and dates; act_id keeps ids apart


def test_future_dated_edition_is_asked_about(store, corpus, tmp_path):
    # Card, "Dates": an edition already published with a future in-force date is a real change.
    two_editions(corpus, corpus.act("a"), old_end="2027-12-31", new_start="2028-01-01")
    corpus.flush()
    _, built = run_builder(store, "de", tmp_path)
    after = next(i for i in built.items if i["kind"] == "after")
    assert after["as_of"] == "2028-01-01" and after["gold_is_current"] is True


def test_skip_reasons_are_the_published_names_in_test_order():
    # PROTOCOL §1.1-§1.4: B8 and B9 counted by the query, then per row B7, then B4/B5.
    assert SKIP_REASONS == ("no_article_number", "ambiguous_article", "no_abbreviation", "identical_or_short")
    assert not set(FILTERED_REASONS) & set(SKIP_REASONS)


def test_ambiguity_is_tested_before_the_abbreviation_and_keys_keep_first_appearance(store, corpus, tmp_path):
    # PROTOCOL §1.4: B9 is the query's, so an ambiguous change on an act without abbreviation is
    # `ambiguous_article`; B8/B9 lead the skip keys, the per-row reasons (B7, then B4/B5) follow in
    # change order, i.e. act_id order, whatever order the acts were written in.
    first, second = sorted([corpus.act("x", sr="1"), corpus.act("y", sr="2", abbr=None)])
    short = {"art_1": ("1", "1 kurz.")}, {"art_1": ("1", "1 kürzer.")}
    two_editions(
        corpus,
        first,
        articles_old={"art_7": ("7", OLD), "disp/art_7": ("7", OLD), **short[0]},
        articles_new={"art_7": ("7", NEW), "disp/art_7": ("7", NEW), **short[1]},
    )
    two_editions(corpus, second, articles_old=short[0], articles_new=short[1])
    corpus.flush()
    with store.transaction() as con:  # the lower act_id has the abbreviation, the other none
        con.execute("UPDATE ch_act SET abbreviation = CASE WHEN act_id = ? THEN 'X' END", [first])
    elig, built = run_builder(store, "de", tmp_path)
    assert list(elig.skips.items()) == [("ambiguous_article", 2), ("identical_or_short", 1), ("no_abbreviation", 1)]
    assert elig.changes_considered == 4 and built.items == []
    # The other act without the abbreviation: its first per-row reason comes first now.
    with store.transaction() as con:
        con.execute("UPDATE ch_act SET abbreviation = CASE WHEN act_id = ? THEN 'X' END", [second])
    assert list(evaluate(store, "de").skips.items()) == [
        ("ambiguous_article", 2),
        ("no_abbreviation", 1),
        ("identical_or_short", 1),
    ]


def _changes_by_hand(store, rows):
    """ch_act_change rows written directly, (e_id, occurrence) keyed as the schema has them: the change
    table is another step's (act_changes); these tests are about what B9 makes of the rows."""
    frame = pl.DataFrame(
        [
            {
                "act_id": a,
                "e_id": e,
                "occurrence": o,
                "lang": "de",
                "change_type": "modified",
                "old_version_id": ov,
                "new_version_id": nv,
                "date_applicability": date(2025, 1, 1),
            }
            for a, e, o, ov, nv in rows
        ],
        schema={
            "act_id": pl.Int64,
            "e_id": pl.String,
            "occurrence": pl.Int32,
            "lang": pl.String,
            "change_type": pl.String,
            "old_version_id": pl.Int64,
            "new_version_id": pl.Int64,
            "date_applicability": pl.Date,
        },
    )
    with store.transaction() as con:
        ensure_tables(con)
    store.replace([("ch_act_change", "true", [], frame)])


def _repeated_eids_store(store, corpus, repeat_in_old=True):
    """B9 (issue 13): art_178 twice in the new edition (and in the old one if `repeat_in_old`), as the
    Civil Code's final title does; art_9's number also carried by art_x's second occurrence; art_20
    unique everywhere."""
    act = corpus.act("zgb", sr="210", abbr="ZGB")
    twice = lambda text: [("178", text), ("178", text.replace("Frist", "Wartefrist"))]  # noqa: E731
    old_arts = {
        "art_178": twice(OLD) if repeat_in_old else ("178", OLD),
        "art_9": ("9", OLD),
        "art_x": [("12", OLD), ("9", OLD.replace("Frist", "Altfrist"))],
        "art_20": ("20", OLD),
    }
    new_arts = {
        "art_178": twice(NEW),
        "art_9": ("9", NEW),
        "art_x": [("12", NEW), ("9", NEW.replace("Frist", "Altfrist"))],
        "art_20": ("20", NEW),
    }
    two_editions(corpus, act, articles_old=old_arts, articles_new=new_arts)
    corpus.flush()
    ov, nv = (v["version_id"] for v in corpus.versions)
    rows = [
        (act, "art_178", 1, ov, nv),
        (act, "art_9", 1, ov, nv),
        (act, "art_x", 1, ov, nv),
        (act, "art_x", 2, ov, nv),
        (act, "art_20", 1, ov, nv),
    ]
    if repeat_in_old:
        rows.append((act, "art_178", 2, ov, nv))
    _changes_by_hand(store, rows)
    return act


@pytest.mark.parametrize("repeat_in_old", [True, False])
def test_repeated_e_ids_and_numbers_carried_twice_are_ambiguous(store, corpus, tmp_path, repeat_in_old):
    # B9: a repeated e_id in EITHER edition (every occurrence), or a number another article row
    # carries (art_9 vs art_x's 2nd occurrence), is ambiguous_article; art_20 alone is eligible.
    _repeated_eids_store(store, corpus, repeat_in_old)
    elig = evaluate(store, "de")
    write_eligible(store, elig)
    assert elig.skips == {"ambiguous_article": 4 + repeat_in_old}
    assert elig.eligible["e_id"].to_list() == ["art_20"]
    counts_add_up(elig)
    built = build_items(store, "de", BuildSettings(), [])
    assert {i["e_id"] for i in built.items} == {"art_20"} and len(built.items) == 2
    assert all(i["gold"]["text"] in (OLD, NEW) for i in built.items)


def _vouched_pair(corpus):
    """Two acts whose editions vouch for their articles, so eligible_changes may keep their outcomes."""
    a, b = corpus.act("a"), corpus.act("b", sr="1.1")
    for act_id in (a, b):
        two_editions(corpus, act_id, vouched=True)
    corpus.flush()
    return a, b


def test_outcomes_are_kept_per_act_and_the_stored_outcome_is_what_counts(store, corpus, tmp_path):
    a, b = _vouched_pair(corpus)
    first, _ = run_builder(store, "de", tmp_path)
    assert (first.eligible.height, first.acts_recomputed) == (2, 2)
    again = evaluate(store, "de")
    assert again.acts_recomputed == 0
    assert again.stats() == first.stats() and again.eligible.equals(first.eligible)
    # Kept means taken as stored, not recomputed and compared: a tampered outcome shows through ...
    with store.transaction() as con:
        con.execute("DELETE FROM bench_eligible WHERE act_id = ?", [a])
        con.execute(
            """UPDATE bench_act_eligibility SET skips = '{"no_discriminating_unit": 1}' WHERE act_id = ?""", [a]
        )
    tampered = evaluate(store, "de")
    assert tampered.eligible["act_id"].to_list() == [b] and tampered.skips["no_discriminating_unit"] == 1
    counts_add_up(tampered)
    # ... other rules (here the B2 source selection) evaluate every act again ...
    wider = evaluate(store, "de", ("fedlex", "fedlex_pdf"))
    assert wider.acts_recomputed == 2 and wider.eligible.height == 2
    # ... and an act whose editions cannot vouch for their articles is evaluated every build.
    with store.transaction() as con:
        con.execute("UPDATE ch_act_version SET content_sha256 = NULL WHERE act_id = ?", [a])
    write_eligible(store, evaluate(store, "de"))
    assert [evaluate(store, "de").acts_recomputed for _ in range(2)] == [1, 1]


# Each edit touches one thing an act's eligibility reads, on act `a` only.
EDITS = {
    "abbreviation (B7)": ["UPDATE ch_act SET abbreviation = NULL WHERE act_id = $a"],
    "enforcement status (B6)": ["UPDATE ch_act SET enforcement_status = 1 WHERE act_id = $a"],
    "article repeated (B9)": [
        "INSERT INTO ch_act_article SELECT version_id, e_id, 2, article_number, heading, text FROM ch_act_article "
        "WHERE version_id IN (SELECT version_id FROM ch_act_version WHERE act_id = $a AND date_end_applicability IS NULL)",
        "UPDATE ch_act_version SET content_sha256 = 'next' WHERE act_id = $a AND date_end_applicability IS NULL",
    ],
    "source (B2)": ["UPDATE ch_act_version SET source = 'fedlex_pdf' WHERE act_id = $a"],
    "article re-parsed (B4)": [
        "UPDATE ch_act_article SET text = 'kurz' WHERE version_id IN "
        "(SELECT version_id FROM ch_act_version WHERE act_id = $a AND date_end_applicability IS NULL)",
        "UPDATE ch_act_version SET content_sha256 = 'another' WHERE act_id = $a AND date_end_applicability IS NULL",
    ],
    "article renumbered (B9)": [
        "UPDATE ch_act_article SET article_number = '25' WHERE version_id IN "
        "(SELECT version_id FROM ch_act_version WHERE act_id = $a AND date_end_applicability IS NULL)",
        "UPDATE ch_act_version SET content_sha256 = 'next' WHERE act_id = $a AND date_end_applicability IS NULL",
    ],
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_to_what_an_act_reads_re_evaluates_that_act_and_matches_a_full_evaluation(
    store, corpus, tmp_path, edit
):
    a, _ = _vouched_pair(corpus)
    before, _ = run_builder(store, "de", tmp_path)
    with store.transaction() as con:
        for sql in EDITS[edit]:
            con.execute(sql, {"a": a})
    after = evaluate(store, "de")
    assert after.acts_recomputed == 1
    assert after.stats() != before.stats()  # the edit matters, so keeping the old outcome would be wrong
    with store.transaction() as con:
        con.execute("DELETE FROM bench_act_eligibility")
    scratch = evaluate(store, "de")
    assert scratch.acts_recomputed == 2
    assert after.stats() == scratch.stats() and after.eligible.equals(scratch.eligible)
