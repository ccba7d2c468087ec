"""ch_act_change: consecutive PARSED editions compared on e_id."""

from chpit_assets.bench.changes import build_changes, update_changes


def test_added_removed_modified_between_consecutive_parsed_editions(store, corpus):
    act = corpus.act("a")
    v1 = corpus.edition(
        act, "de", "2020-01-01", "2020-12-31", {"art_1": ("1", "1 a"), "art_2": ("2", "1 b"), "art_3": ("3", "1 c")}
    )
    # Never parsed: skipped over, so v1 is compared with v3 directly.
    corpus.edition(act, "de", "2021-01-01", "2021-12-31", {"art_1": ("1", "1 zzz")}, stage="download")
    v3 = corpus.edition(
        act, "de", "2022-01-01", None, {"art_1": ("1", "1 a"), "art_2": ("2", "1 B"), "art_4": ("4", "1 d")}
    )
    corpus.edition(act, "fr", "2022-01-01", None, {"art_1": ("1", "1 x")})
    corpus.flush()
    changes = build_changes(store, "de")
    got = {
        (r["e_id"], r["change_type"], r["old_version_id"], r["new_version_id"], str(r["date_applicability"]))
        for r in changes.iter_rows(named=True)
    }
    assert got == {
        ("art_2", "modified", v1, v3, "2022-01-01"),
        ("art_3", "removed", v1, v3, "2022-01-01"),
        ("art_4", "added", v1, v3, "2022-01-01"),
    }
    # Idempotent per partition: a re-run replaces, never duplicates; other languages are untouched.
    build_changes(store, "fr")
    build_changes(store, "de")
    assert store.frame("SELECT lang, count(*) AS n FROM ch_act_change GROUP BY lang").rows() == [("de", 3)]


def test_rebuild_without_file_hashes_recomputes_and_drops_acts_without_editions(store, corpus):
    # A store written directly has no sha256 to vouch for unchanged articles: every act is recomputed,
    # so a text edited in place under the same version ids is seen.
    act, gone = corpus.act("a"), corpus.act("b", sr="1.1")
    for a in (act, gone):
        corpus.edition(a, "de", "2020-01-01", "2020-12-31", {"art_1": ("1", "1 a")})
        corpus.edition(a, "de", "2021-01-01", None, {"art_1": ("1", "1 b")})
    corpus.flush()
    first = update_changes(store, "de")
    assert (first.changes.height, first.acts, first.acts_recomputed) == (2, 2, 2)
    corpus.versions = [v for v in corpus.versions if v["act_id"] != gone]
    corpus.articles = [a for a in corpus.articles if a["version_id"] in {v["version_id"] for v in corpus.versions}]
    corpus.articles[-1]["text"] = "1 a"  # now identical to the old edition: no change any more
    corpus.flush()
    second = update_changes(store, "de")
    assert (second.changes.height, second.acts, second.acts_recomputed) == (0, 1, 1)
    assert store.frame("SELECT count(*) AS n FROM ch_act_change")["n"][0] == 0


def test_rebuild_recomputes_only_acts_whose_stored_content_changed(store, corpus):
    acts = [corpus.act(k, sr=f"1.{n}") for n, k in enumerate("ab")]
    for act in acts:
        corpus.edition(act, "de", "2020-01-01", "2020-12-31", {"art_1": ("1", "1 a")})
        corpus.edition(act, "de", "2021-01-01", None, {"art_1": ("1", "1 b")})
    corpus.flush()
    with store.transaction() as con:  # what ingest records for every parsed edition
        con.execute("UPDATE ch_act_version SET sha256 = sha256(eli), content_sha256 = sha256(eli || 'c')")
    assert update_changes(store, "de").acts_recomputed == 2
    assert update_changes(store, "de").acts_recomputed == 0  # nothing changed: every act's rows kept
    # Act b's new edition was re-issued (new file sha256) with the same content: nothing recomputed.
    with store.transaction() as con:
        con.execute(
            "UPDATE ch_act_version SET sha256 = repeat('e', 64) WHERE version_id = ?",
            [corpus.versions[3]["version_id"]],
        )
    assert update_changes(store, "de").acts_recomputed == 0
    # Act a's new edition was corrected (new content digest) and now reads like the old one.
    new_a = corpus.versions[1]["version_id"]
    with store.transaction() as con:
        con.execute("UPDATE ch_act_article SET text = '1 a' WHERE version_id = ?", [new_a])
        con.execute("UPDATE ch_act_version SET content_sha256 = repeat('f', 64) WHERE version_id = ?", [new_a])
    rebuilt = update_changes(store, "de")
    assert (rebuilt.acts_recomputed, rebuilt.changes["act_id"].to_list()) == (1, [acts[1]])


def test_repeated_eids_pair_on_occurrence(store, corpus):
    # SR 210's final title repeats art_178: each occurrence is compared with the same occurrence of the
    # old edition, so a change to the second copy is one modified row on (art_178, 2), not a false pair.
    act = corpus.act("a")
    old = corpus.edition(act, "de", "2020-01-01", "2020-12-31", {"art_178": ("178", "1 main")})
    new = corpus.edition(act, "de", "2021-01-01", None, {"art_178": ("178", "1 main")})
    corpus.flush()
    with store.transaction() as con:
        con.execute(
            "INSERT INTO ch_act_article (version_id, e_id, occurrence, article_number, text) VALUES "
            "(?, 'art_178', 2, '178', '1 old law'), (?, 'art_178', 2, '178', '1 old law, amended'), "
            "(?, 'art_178', 3, '178', '1 third')",
            [old, new, new],
        )
    rows = {(r["e_id"], r["occurrence"], r["change_type"]) for r in build_changes(store, "de").iter_rows(named=True)}
    assert rows == {("art_178", 2, "modified"), ("art_178", 3, "added")}
