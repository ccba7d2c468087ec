"""B1-B12 on constructed editions: each rule excludes what it should, under its card name,
and the buckets add up to changes_considered."""

from __future__ import annotations

import pytest

from chpit_assets.bench.eligibility import SKIP_REASONS, evaluate, write_eligible

from .conftest import long_text, run_builder

OLD = long_text("Die Frist beträgt 30 Tage ab Zustellung des Entscheids an die betroffene Partei.")
NEW = long_text("Die Frist beträgt 60 Tage ab Zustellung des Entscheids an die betroffene Partei.")


def two_editions(corpus, act_id, lang="de", articles_old=None, articles_new=None,
                 old_end="2024-12-31", new_start="2025-01-01", **kw):
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


def test_german_reads_the_act_abbreviation_only(store, corpus, tmp_path):
    two_editions(corpus, corpus.act("a", abbr=None, aliases={"de": [("ALIAS", "curated")]}))
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.skips["no_abbreviation"] == 1


def test_ambiguous_number_top_level_and_nested(store, corpus, tmp_path):
    # B9: art_7 and disp_u1/art_7 share the number 7; both changes are ambiguous.
    arts_old = {"art_7": ("7", OLD), "disp_u1/art_7": ("7", OLD.replace("Frist", "Übergangsfrist")),
                "art_8": ("8", OLD)}
    arts_new = {"art_7": ("7", NEW), "disp_u1/art_7": ("7", NEW.replace("Frist", "Übergangsfrist")),
                "art_8": ("8", NEW)}
    two_editions(corpus, corpus.act("a"), articles_old=arts_old, articles_new=arts_new)
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.skips["ambiguous_article"] == 2
    assert {i["e_id"] for i in built.items} == {"art_8"}


def test_number_shared_only_in_the_other_edition_is_ambiguous(store, corpus, tmp_path):
    # B9 looks at EITHER edition: a nested art_7 that exists only in the old edition still clashes.
    two_editions(corpus, corpus.act("a"),
                 articles_old={"art_7": ("7", OLD), "disp_u1/art_7": ("7", "1 Übergangsbestimmung.")},
                 articles_new={"art_7": ("7", NEW)})
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.skips["ambiguous_article"] == 1


def test_null_article_number_is_tested_first(store, corpus, tmp_path):
    # B8 before B9: a NULL number on a nested e_id counts as no_article_number, not ambiguous.
    two_editions(corpus, corpus.act("a"),
                 articles_old={"disp_u1/art_x": (None, OLD), "art_9": ("9", OLD)},
                 articles_new={"disp_u1/art_x": (None, NEW), "art_9": (None, NEW)})
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.skips["no_article_number"] == 2
    assert built.items == []
    counts_add_up(elig)


def test_overlapping_editions_drop_both_halves(store, corpus, tmp_path):
    # B11: the end date is inclusive, so an end equal to the new start overlaps.
    two_editions(corpus, corpus.act("a", sr="1"), old_end="2025-01-01", new_start="2025-01-01")
    two_editions(corpus, corpus.act("b", sr="2"), old_end="2024-12-31", new_start="2025-01-01")
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.skips["overlapping_editions"] == 1
    assert {i["sr_number"] for i in built.items} == {"2"}


def test_short_and_cosmetic_changes_are_identical_or_short(store, corpus, tmp_path):
    # B4: under 200 normalised chars; B5: differs only by soft hyphen / NBSP / dash typesetting.
    short_old, short_new = "1 Die Frist beträgt 30 Tage.", "1 Die Frist beträgt 60 Tage."
    cosmetic = OLD.replace("Frist", "Fr\u00adist").replace("30 Tage", "30\u00a0Tage")
    two_editions(corpus, corpus.act("a"),
                 articles_old={"art_1": ("1", short_old), "art_2": ("2", OLD)},
                 articles_new={"art_1": ("1", short_new), "art_2": ("2", cosmetic)})
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
    assert elig.halves_dropped_no_discriminating_unit == 1


def test_change_inside_a_short_unit_has_no_discriminating_unit(store, corpus, tmp_path):
    # B12 at the change level: the only difference sits in a paragraph under the 25-char floor.
    old, new = long_text("Frist: 30 Tage."), long_text("Frist: 60 Tage.")
    two_editions(corpus, corpus.act("a"), articles_old={"art_3": ("3", old)}, articles_new={"art_3": ("3", new)})
    corpus.flush()
    elig, built = run_builder(store, "de", tmp_path)
    assert elig.skips["no_discriminating_unit"] == 1 and built.items == []


def test_sources_option_selects_edition_sources(store, corpus, tmp_path):
    # B2: a pdf edition on either side is excluded unless its source is selected.
    act = corpus.act("a")
    corpus.edition(act, "de", "2019-01-01", "2020-12-31", {"art_24": ("24", OLD)}, source="fedlex_pdf")
    corpus.edition(act, "de", "2021-01-01", None, {"art_24": ("24", NEW)})
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.skips["other_source"] == 1 and elig.sources == ("fedlex",)
    wide = evaluate(store, "de", ("fedlex_pdf", "fedlex"))
    assert wide.eligible.height == 1 and wide.sources == ("fedlex", "fedlex_pdf")


def test_non_federal_act_is_skipped(store, corpus, tmp_path):
    two_editions(corpus, corpus.act("zh", jurisdiction="ZH"))
    corpus.flush()
    elig, _ = run_builder(store, "de", tmp_path)
    assert elig.skips["not_federal"] == 1


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


def test_skip_reasons_are_the_card_names_plus_sql_rules():
    assert {"no_article_number", "no_abbreviation", "identical_or_short", "ambiguous_article",
            "overlapping_editions", "no_discriminating_unit"} <= set(SKIP_REASONS)
    assert SKIP_REASONS[0] == "no_article_number"


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
        con.execute("""UPDATE bench_act_eligibility SET skips = '{"no_discriminating_unit": 1}' WHERE act_id = ?""", [a])
    tampered = evaluate(store, "de")
    assert tampered.eligible["act_id"].to_list() == [b] and tampered.skips["no_discriminating_unit"] == 1
    counts_add_up(tampered)
    # ... other rules (here the B2 source selection) evaluate every act again ...
    wider = evaluate(store, "de", ("fedlex", "fedlex_pdf"))
    assert wider.acts_recomputed == 2 and wider.eligible.height == 2
    # ... and an act whose editions cannot vouch for their articles is evaluated every build.
    with store.transaction() as con:
        con.execute("UPDATE ch_act_version SET sha256 = NULL WHERE act_id = ?", [a])
    write_eligible(store, evaluate(store, "de"))
    assert [evaluate(store, "de").acts_recomputed for _ in range(2)] == [1, 1]


# Each edit touches one thing an act's eligibility reads, on act `a` only.
EDITS = {
    "abbreviation (B7)": ["UPDATE ch_act SET abbreviation = NULL WHERE act_id = $a"],
    "enforcement status (B6)": ["UPDATE ch_act SET enforcement_status = 1 WHERE act_id = $a"],
    "end date (B11)": ["UPDATE ch_act_version SET date_end_applicability = DATE '2025-01-01' "
                       "WHERE act_id = $a AND date_end_applicability IS NOT NULL"],
    "source (B2)": ["UPDATE ch_act_version SET source = 'fedlex_pdf' WHERE act_id = $a"],
    "article re-parsed (B4)": [
        "UPDATE ch_act_article SET text = 'kurz' WHERE version_id IN "
        "(SELECT version_id FROM ch_act_version WHERE act_id = $a AND date_end_applicability IS NULL)",
        "UPDATE ch_act_version SET sha256 = 'another file' WHERE act_id = $a AND date_end_applicability IS NULL"],
    "article renumbered (B9)": [
        "UPDATE ch_act_article SET article_number = '25' WHERE version_id IN "
        "(SELECT version_id FROM ch_act_version WHERE act_id = $a AND date_end_applicability IS NULL)",
        "UPDATE ch_act_version SET parser_version = 'next' WHERE act_id = $a AND date_end_applicability IS NULL"],
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edit_to_what_an_act_reads_re_evaluates_that_act_and_matches_a_full_evaluation(store, corpus, tmp_path, edit):
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
