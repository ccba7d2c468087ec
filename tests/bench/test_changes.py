"""ch_act_change: consecutive PARSED editions compared on e_id."""

from chpit_assets.bench.changes import build_changes


def test_added_removed_modified_between_consecutive_parsed_editions(store, corpus):
    act = corpus.act("a")
    v1 = corpus.edition(act, "de", "2020-01-01", "2020-12-31", {"art_1": ("1", "1 a"), "art_2": ("2", "1 b"),
                                                                "art_3": ("3", "1 c")})
    # Never parsed: skipped over, so v1 is compared with v3 directly.
    corpus.edition(act, "de", "2021-01-01", "2021-12-31", {"art_1": ("1", "1 zzz")}, stage="download")
    v3 = corpus.edition(act, "de", "2022-01-01", None, {"art_1": ("1", "1 a"), "art_2": ("2", "1 B"),
                                                       "art_4": ("4", "1 d")})
    corpus.edition(act, "fr", "2022-01-01", None, {"art_1": ("1", "1 x")})
    corpus.flush()
    changes = build_changes(store, "de")
    got = {(r["e_id"], r["change_type"], r["old_version_id"], r["new_version_id"], str(r["date_applicability"]))
           for r in changes.iter_rows(named=True)}
    assert got == {("art_2", "modified", v1, v3, "2022-01-01"), ("art_3", "removed", v1, v3, "2022-01-01"),
                   ("art_4", "added", v1, v3, "2022-01-01")}
    # Idempotent per partition: a re-run replaces, never duplicates; other languages are untouched.
    build_changes(store, "fr")
    build_changes(store, "de")
    assert store.frame("SELECT lang, count(*) AS n FROM ch_act_change GROUP BY lang").rows() == [("de", 3)]
