"""Items: halves B13, caps B14, seeded sampling B15 (PROTOCOL §1.5-§1.9), ids B17, frozen B18,
fields and determinism."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from datetime import date, timedelta

import pytest
from hypothesis import example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from chpit_assets.bench.files import item_line
from chpit_assets.bench.frozen import (
    FrozenError,
    changed_items,
    load_frozen,
    record_published,
)
from chpit_assets.bench.items import (
    LICENCE,
    SOURCE,
    BuildSettings,
    ItemsError,
    before_as_of,
    bench_path,
    item_id,
    load_items,
    select,
    stamp_core,
)

from .conftest import Corpus, long_text, run_builder

# PROTOCOL §1: the published key order; no recite fields in a build (PROTOCOL §9).
SPEC_FIELDS = [
    "id",
    "lang",
    "act_id",
    "sr_number",
    "abbreviation",
    "article_number",
    "e_id",
    "as_of",
    "kind",
    "change_date",
    "question",
    "gold_is_current",
    "gold",
    "distractor",
    "source",
    "licence",
    "build",
    "core",
]
EDITION_FIELDS = ["version_id", "date_applicability", "date_end_applicability", "eli", "source", "text"]


def fake_change(act_id: int, n: int, before_ok: bool = True, after_ok: bool = True, overlap: bool = False) -> dict:
    """A bench_eligible row joined with its editions, as `select` receives it; `overlap`: the old
    edition ends on the change date (B11)."""
    day = date(2021, 1, 1) + timedelta(days=n)
    return {
        "act_id": act_id,
        "e_id": f"art_{n}",
        "change_date": day,
        "new_version_id": 10 * n + 1,
        "old_version_id": 10 * n,
        "sr_number": str(act_id),
        "abbreviation": "X",
        "article_number": str(n),
        "before_ok": before_ok,
        "after_ok": after_ok,
        "old_from": date(2020, 1, 1),
        "old_to": day if overlap else day - timedelta(days=1),
        "old_eli": "e/old",
        "old_source": "fedlex",
        "old_text": "old",
        "new_from": day,
        "new_to": None,
        "new_eli": "e/new",
        "new_source": "fedlex",
        "new_text": "new",
    }


@given(build=st.text(), texts=st.lists(st.text(), min_size=2, max_size=2), core=st.booleans())
@example(build='dev", "core": false, "id": "', texts=[', "core": true, ', "b"], core=True)
def test_a_stamped_core_flag_equals_rendering_with_it(build, texts, core):
    """B16's flag is stamped into stored lines (items.stamp_core): whatever the build name and the
    article texts hold (quotes, `"core": true` itself), stamping equals rendering with the flag."""
    change = {**fake_change(1, 1), "old_text": texts[0], "new_text": texts[1]}
    item = select([change], "de", BuildSettings(build=build), []).items[0]
    rendered = {flag: item_line({**item, "core": flag}).encode("utf-8") for flag in (False, True)}
    assert stamp_core(rendered[False], core) == rendered[core]
    assert stamp_core(rendered[not core], core) == rendered[core]  # lines of the earlier layout, too


def test_stamping_refuses_a_line_without_a_core_flag():
    with pytest.raises(ItemsError, match="core flag"):
        stamp_core(b'{"build": "dev", "id": "x"}', True)


def test_item_fields_ids_and_verbatim_text(store, corpus, tmp_path):
    act = corpus.act("a")
    old = long_text("Die Frist beträgt 30\u00a0Tage ab Zustellung – nicht früher.")
    new = long_text("Die Frist beträgt 60\u00a0Tage ab Zustellung – nicht früher.")
    v_old = corpus.edition(act, "de", "2023-01-01", "2024-12-31", {"art_24": ("24", old)})
    v_new = corpus.edition(act, "de", "2025-01-01", None, {"art_24": ("24", new)})
    corpus.flush()
    _, built = run_builder(store, "de", tmp_path, BuildSettings(build="v-test"))
    lines = bench_path(tmp_path, "de").read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines]
    assert items == built.items == load_items(store, "de")
    for item in items:
        assert list(item) == SPEC_FIELDS and list(item["gold"]) == EDITION_FIELDS == list(item["distractor"])
        expected = hashlib.sha1(f"de|{act}|235.1|art_24|{item['as_of']}".encode()).hexdigest()[:16]
        assert item["id"] == expected
        assert (item["build"], item["source"], item["licence"]) == ("v-test", SOURCE, LICENCE)
        assert lines[items.index(item)].endswith(', "core": false}') or lines[items.index(item)].endswith(
            ', "core": true}'
        )
    before = next(i for i in items if i["kind"] == "before")
    after = next(i for i in items if i["kind"] == "after")
    # B13: before asks the old edition's last day, gold old; after asks the change date, gold new.
    assert (before["as_of"], before["gold"]["version_id"], before["distractor"]["version_id"]) == (
        "2024-12-31",
        v_old,
        v_new,
    )
    assert (after["as_of"], after["gold"]["version_id"], after["gold_is_current"]) == ("2025-01-01", v_new, True)
    assert before["gold_is_current"] is False
    assert before["gold"]["text"] == old and after["gold"]["text"] == new  # NBSP and dash kept


def test_before_as_of_falls_back_to_the_day_before_only_without_end_date():
    assert before_as_of(date(2022, 6, 30), date(2023, 9, 1)) == date(2022, 6, 30)
    assert before_as_of(None, date(2023, 9, 1)) == date(2023, 8, 31)


def test_item_id_formula_includes_act_id():
    assert item_id("fr", 1, "220", "art_7", "2024-01-01") != item_id("fr", 2, "220", "art_7", "2024-01-01")
    assert item_id("fr", 1, "220", "art_7", "2024-01-01") == hashlib.sha1(b"fr|1|220|art_7|2024-01-01").hexdigest()[:16]


def published(
    changes: list[dict], lang: str, seed: int, per_act_cap: int, item_cap: int
) -> tuple[list[str], int, dict]:
    """PROTOCOL §1.5-§1.8 written out step by step, as the reference the builder must equal with an
    empty frozen record: (item ids in selection order, capped, loop skip counts)."""
    eligible = sorted(changes, key=lambda c: (c["act_id"], c["e_id"], c["change_date"], c["new_version_id"]))
    rng = random.Random(f"{seed}:{lang}")
    shuffled = list(eligible)
    rng.shuffle(shuffled)
    kept, per_act, capped = [], Counter(), 0
    for c in shuffled:
        if per_act[c["act_id"]] < per_act_cap:
            per_act[c["act_id"]] += 1
            kept.append(c)
        else:
            capped += 1
    items, consumed, skipped = [], 0, Counter()
    for c in kept:
        if item_cap and len(items) >= item_cap:
            break
        consumed += 1
        if c["old_to"] is not None and c["old_to"] >= c["change_date"]:
            skipped["overlapping_editions"] += 2
            continue
        before = c["old_to"] or c["change_date"] - timedelta(days=1)
        for kind, as_of in (("before", before), ("after", c["change_date"])):
            if c[f"{kind}_ok"]:
                items.append(item_id(lang, c["act_id"], c["sr_number"], c["e_id"], as_of.isoformat()))
            else:
                skipped["no_discriminating_unit"] += 1
    capped += len(kept) - consumed
    if item_cap and len(items) > item_cap:
        capped += len(items) - item_cap
        items = items[:item_cap]
    return items, capped, dict(skipped)


change_shapes = st.lists(
    st.tuples(
        st.integers(1, 4), st.sampled_from([(True, True), (True, False), (False, True), (False, False)]), st.booleans()
    ),
    max_size=40,
)


@hsettings(max_examples=80, deadline=None)
@given(
    shape=change_shapes,
    item_cap=st.integers(0, 30),
    per_act_cap=st.integers(1, 8),
    seed=st.integers(0, 3),
    order=st.randoms(use_true_random=False),
)
def test_selection_is_the_published_algorithm_and_ignores_input_order(shape, item_cap, per_act_cap, seed, order):
    """With an empty frozen record the builder's selection equals PROTOCOL §1 exactly, and it is a
    function of (eligible set, seed) only: any input order gives the same items."""
    changes = [fake_change(a, n, *ok, overlap=ov) for n, (a, ok, ov) in enumerate(shape)]
    order.shuffle(changes)
    sel = select(changes, "de", BuildSettings(seed=seed, item_cap=item_cap, per_act_cap=per_act_cap), [])
    ids, capped, skips = published(changes, "de", seed, per_act_cap, item_cap)
    assert [h.id for h in sel.halves] == ids
    assert (sel.capped, sel.skips, sel.selected) == (capped, skips, len(changes))
    assert not item_cap or len(sel.halves) <= item_cap


def test_per_act_cap_of_fifty_changes_runs_over_the_whole_shuffled_list():
    # PROTOCOL §1.6: the cap keeps the first 50 of act 1 in shuffled order; all 65 are `selected`.
    changes = [fake_change(1, n) for n in range(60)] + [fake_change(2, n) for n in range(100, 105)]
    sel = select(changes, "de", BuildSettings(), [])
    per_act = Counter(i["act_id"] for i in sel.items if i["kind"] == "after")
    assert per_act == {1: 50, 2: 5}
    assert (sel.selected, sel.capped, sel.consumed) == (65, 10, 55)
    shuffled = sorted(changes, key=lambda c: (c["act_id"], c["e_id"], c["change_date"]))
    random.Random("20260825:de").shuffle(shuffled)
    first_fifty = {c["e_id"] for c in [c for c in shuffled if c["act_id"] == 1][:50]}
    assert {i["e_id"] for i in sel.items if i["act_id"] == 1} == first_fifty


def test_an_overlapping_change_uses_its_acts_slot_and_counts_twice():
    # B11 inside the loop (PROTOCOL §1.7): it is consumed, so with one slot per act the act yields nothing
    # when its overlapping change is drawn first, and the other change is `capped`.
    changes = [fake_change(1, 1, overlap=True), fake_change(1, 2)]
    for seed in range(20):
        sel = select(changes, "de", BuildSettings(seed=seed, per_act_cap=1), [])
        assert sel.capped == 1 and sel.consumed == 1 and sel.selected == 2
        assert (sel.skips, sel.halves) == ({"overlapping_editions": 2}, []) or (
            sel.skips == {} and len(sel.halves) == 2
        )


def test_item_cap_stops_before_a_change_and_trims_the_last_after():
    # PROTOCOL §1.7-§1.8: 0 -> 2 -> 4 -> 6 items; 4 < 5 lets the third change in, its `after` is trimmed
    # (capped 1) and the loop never reaches the fourth one (capped 1).
    changes = [fake_change(1, n) for n in range(4)]
    sel = select(changes, "de", BuildSettings(item_cap=5), [])
    assert len(sel.halves) == 5 and sel.halves[-1].kind == "before"
    assert (sel.consumed, sel.capped) == (3, 2)
    assert Counter(h.kind for h in sel.halves) == {"before": 3, "after": 2}


def test_item_cap_zero_means_no_cap():
    changes = [fake_change(1, n) for n in range(7)]
    sel = select(changes, "de", BuildSettings(item_cap=0), [])
    assert len(sel.halves) == 14 and sel.capped == 0


def test_a_different_language_seed_draws_a_different_sample():
    changes = [fake_change(a, n) for a in (1, 2, 3) for n in range(10 * a, 10 * a + 8)]
    s = BuildSettings(item_cap=13)
    # B15: seeded per language.
    assert {h.change["e_id"] for h in select(changes, "de", s, []).halves} != {
        h.change["e_id"] for h in select(changes, "fr", s, []).halves
    }


def test_single_day_edition_aborts_on_the_repeated_id():
    # Edition 2 lasts one day: its `after` and the next change's `before` ask the same date, so two
    # items would share an id. The published build aborts (PROTOCOL §1.9); so do we, naming both.
    one = fake_change(1, 1)
    two = fake_change(1, 2)
    two["e_id"] = one["e_id"]
    two["old_to"] = one["change_date"]
    with pytest.raises(ItemsError, match=r"item id \w+ twice.*art_1.*2021-01-02"):
        select([one, two], "de", BuildSettings(), [])


def _corpus(store, langs, n_acts=3):
    corpus = Corpus(store)
    for a in range(n_acts):
        act = corpus.act(
            f"a{a}", sr=f"{a}.1", abbr=f"G{a}", aliases={"fr": [(f"F{a}", "curated")], "it": [(f"I{a}", "curated")]}
        )
        for lang in langs:
            arts = [
                {
                    f"art_{k}": (str(k), long_text(f"Betrag {k}: {v} Franken für jede angefangene Stunde Arbeit."))
                    for k in range(1, 6)
                }
                for v in (100, 200, 300)
            ]
            corpus.edition(act, lang, "2021-01-01", "2022-12-31", arts[0])
            corpus.edition(act, lang, "2023-01-01", "2024-06-30", arts[1])
            corpus.edition(act, lang, "2024-07-01", None, arts[2])
    corpus.flush()


def test_two_builds_are_byte_identical(store, tmp_path):
    _corpus(store, ["de"])
    s = BuildSettings(item_cap=17, core_size=5)
    run_builder(store, "de", tmp_path / "one", s)
    run_builder(store, "de", tmp_path / "two", s)
    one, two = bench_path(tmp_path / "one", "de").read_bytes(), bench_path(tmp_path / "two", "de").read_bytes()
    # Every change here yields two items: the ninth change's `after` is trimmed to the odd cap (PROTOCOL §1.8).
    assert one == two and one.count(b"\n") == 17


def test_french_alone_equals_french_with_german_and_italian(tmp_path):
    from chpit_assets.corpus.store import Store

    alone, together = Store(tmp_path / "alone.duckdb"), Store(tmp_path / "together.duckdb")
    _corpus(alone, ["fr"])
    _corpus(together, ["de", "fr", "it"])
    s = BuildSettings(item_cap=11, core_size=4)
    run_builder(alone, "fr", tmp_path / "alone", s)
    for lang in ("it", "de", "fr"):
        run_builder(together, lang, tmp_path / "together", s)
    assert bench_path(tmp_path / "alone", "fr").read_bytes() == bench_path(tmp_path / "together", "fr").read_bytes()


def test_frozen_items_are_kept_exactly_and_later_builds_only_add(store, tmp_path):
    _corpus(store, ["de"], n_acts=2)
    frozen_dir = tmp_path / "frozen"
    _, first = run_builder(store, "de", tmp_path / "b1", BuildSettings(build="v1", item_cap=6, core_size=3))
    assert record_published(frozen_dir, "de", first.items) == 6
    published = load_frozen(frozen_dir, "de")
    # The store moves on: a published gold text is re-typeset upstream, and the cap is raised.
    with store.connect() as con:
        con.execute("UPDATE ch_act_article SET text = text || ' Neu.'")
    _, second = run_builder(
        store, "de", tmp_path / "b2", BuildSettings(build="v2", item_cap=10, core_size=3), frozen=published
    )
    assert changed_items(published, second.items) == []
    assert len(second.items) == 10
    assert {i["build"] for i in second.items if i["id"] not in {p["id"] for p in published}} == {"v2"}
    # Published changes are not drawn again (no second copy of a frozen change under a new id).
    keys = [(i["act_id"], i["e_id"], i["change_date"], i["kind"]) for i in second.items]
    assert len(keys) == len(set(keys))
    pid = published[0]["id"]
    rest = [i for i in second.items if i["id"] != pid]
    tampered = dict(next(i for i in second.items if i["id"] == pid), question="?")
    with pytest.raises(FrozenError, match=pid):
        record_published(frozen_dir, "de", [tampered])
    assert changed_items(published, [tampered, *rest]) == [pid]
    assert changed_items(published, rest) == [pid]
    assert changed_items(published, [dict(i, core=not i["core"]) for i in second.items]) == []  # FREE_FIELDS


def test_published_changes_count_first_against_both_caps():
    # B18 with B14: act 1's published change takes its only per-act slot, and its two items count
    # against the item cap of 4, so two new items at most, none from act 1.
    changes = [fake_change(1, n) for n in range(5)] + [fake_change(2, n) for n in range(10, 15)]
    frozen = select(changes[:1], "de", BuildSettings(build="v1"), []).items
    sel = select(changes, "de", BuildSettings(build="v2", per_act_cap=1, item_cap=4), frozen)
    assert sel.published == 1 and sel.selected == 10
    assert len(sel.halves) == 2 and {h.change["act_id"] for h in sel.halves} == {2}
    assert sel.capped == 4 + 4  # act 1's other four, act 2's four left by its own per-act cap
    assert not {h.id for h in sel.halves} & {i["id"] for i in frozen}


def test_a_published_item_of_the_earlier_layout_is_emitted_with_core_last_and_no_recite_stamps(store, tmp_path):
    # Frozen lines recorded with core second and the recite stamps (the layout before PROTOCOL §1):
    # the build writes them in place, with core last (stamp_core needs it there) and without the
    # stamps, which only published data carries (§9); B18's check ignores both (FREE_FIELDS).
    _corpus(store, ["de"], n_acts=1)
    _, first = run_builder(store, "de", tmp_path / "b1", BuildSettings(build="v1", item_cap=2))
    old = [
        {
            "build": i["build"],
            "core": True,
            **{k: v for k, v in i.items() if k not in ("build", "core")},
            "recite_label": "ungrounded",
            "recite_as_of": "2026-09-04",
        }
        for i in first.items
    ]
    _, second = run_builder(store, "de", tmp_path / "b2", BuildSettings(build="v2", item_cap=4), frozen=old)
    kept = [i for i in second.items if i["id"] in {o["id"] for o in old}]
    assert len(kept) == 2 and changed_items(old, second.items) == []
    assert all(list(i)[-1] == "core" and "recite_label" not in i for i in kept)


def test_the_render_rules_digest_ignores_layout_and_comments_but_not_code():
    """Issue 17.4: a reformat must not re-render every stored line; a code change must."""
    from chpit_assets.bench.items import code_digest

    source = "def question(item):\n    return f\"Art. {item['n']}\"  # the template\n"
    reformatted = "# rendering\ndef question(item):\n    return (\n        f\"Art. {item['n']}\"\n    )\n"
    changed = "def question(item):\n    return f\"Artikel {item['n']}\"\n"
    assert code_digest([source]) == code_digest([reformatted])
    assert code_digest([source]) != code_digest([changed])
