"""The search track reuses the last build's phrases (issue 27.1): after changed, removed or new
items, new article texts or a new edition, the file it writes is byte-identical to a build from
scratch, it searches only the items whose inputs changed, and a phrases file it cannot trust is set
aside with the reason, never used."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.bench.changes import update_changes
from chpit_assets.bench.eligibility import update_eligible
from chpit_assets.bench.files import item_line, jsonl_bytes
from chpit_assets.bench.items import BuildSettings, load_items, update_items
from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.search.track import (
    RULES,
    StoreEditions,
    TrackCacheError,
    _joined,
    build_track,
    load_phrases,
    phrases_path,
    track_path,
    update_track,
)
from chpit_assets.synthetic.generator import Params, append_edition, generate, next_month
from chpit_scorer import normalise
from tests.runs.conftest import build_sample

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return build_sample(tmp_path_factory.mktemp("sample"))


def _lines(items: list[dict]) -> list[bytes]:
    """The items as bench_items writes their lines (core flag last)."""
    return [item_line(i).encode() for i in items]


def _scratch(store: Store, items: list[dict], lang: str, tmp: Path) -> bytes:
    """The track built with nothing to reuse, in a folder of its own."""
    with store.connect(read_only=True) as con:
        track, data = update_track(con, _lines(items), lang, tmp / "build", tmp / "search")
    assert track.searched == len(items) and track.distrusted is None
    return data


def _incremental(store: Store, items: list[dict], lang: str, root: Path):
    with store.connect(read_only=True) as con:
        track, data = update_track(con, _lines(items), lang, root / "build", root / "search")
    assert track_path(root / "build", lang).read_bytes() == data
    return track, data


def test_an_unchanged_build_searches_nothing_and_writes_the_same_bytes(sample, tmp_path):
    items = sample.items["de"] + sample.items["fr"]
    for lang in ("de", "fr"):
        first, data = _incremental(sample.store, sample.items[lang], lang, tmp_path)
        assert first.searched == len(sample.items[lang]) and first.items
        again, same = _incremental(sample.store, sample.items[lang], lang, tmp_path)
        assert (again.searched, again.distrusted) == (0, None)
        assert same == data and again.skipped == first.skipped
    assert items


def test_changed_and_removed_items_search_only_the_changed_one(sample, tmp_path):
    items = sample.items["de"]
    assert len(items) >= 3
    _incremental(sample.store, items, "de", tmp_path / "inc")
    # The gold text of one item is the distractor's (its phrase can no longer tell the editions
    # apart only by the date: T1 still holds, the search must run again); one item is dropped.
    changed = [dict(items[0], gold=dict(items[0]["gold"], text=items[0]["distractor"]["text"])), *items[2:]]
    track, data = _incremental(sample.store, changed, "de", tmp_path / "inc")
    assert track.searched == 1
    assert data == _scratch(sample.store, changed, "de", tmp_path / "scratch")
    assert len(track.phrases) == len(changed)  # the removed item's phrase is not carried on


def test_new_text_in_an_other_article_is_searched_again_and_can_change_the_phrase(tmp_path):
    """T3 reads every other article of both editions: a phrase that another article now also holds
    must give way, exactly as a build from scratch decides."""
    sample = build_sample(tmp_path / "sample")
    items = sample.items["de"]
    first, _ = _incremental(sample.store, items, "de", tmp_path / "inc")
    target = first.items[0]
    version = target["gold"]["version_id"]
    with sample.store.transaction() as con:
        other = con.execute(
            "SELECT e_id FROM ch_act_article WHERE version_id = ? AND e_id <> ? ORDER BY e_id LIMIT 1",
            [version, target["e_id"]],
        ).fetchone()[0]
        con.execute(
            "UPDATE ch_act_article SET text = text || ? WHERE version_id = ? AND e_id = ?",
            [f"\n9 {target['phrase']}", version, other],
        )
        con.execute("UPDATE ch_act_version SET content_sha256 = repeat('e', 64) WHERE version_id = ?", [version])
    track, data = _incremental(sample.store, items, "de", tmp_path / "inc")
    showing = [i for i in items if version in (i["gold"]["version_id"], i["distractor"]["version_id"])]
    assert track.searched == len(showing) < len(items)
    assert data == _scratch(sample.store, items, "de", tmp_path / "scratch")
    redone = {i["id"]: i for i in track.items}.get(target["id"])
    assert redone is None or redone["phrase"] != target["phrase"]


def test_an_edition_without_a_content_digest_is_searched_on_every_build(sample, tmp_path):
    items = sample.items["fr"]
    version = items[0]["gold"]["version_id"]

    class Partly(StoreEditions):
        """The store as if one edition had no content digest."""

        def fingerprints(self, version_ids):
            return {v: f for v, f in super().fingerprints(version_ids).items() if v != version}

    with sample.store.connect(read_only=True) as con:
        first = build_track(items, Partly(con))
        again = build_track(items, Partly(con), first.phrases)
    showing = [i for i in items if version in (i["gold"]["version_id"], i["distractor"]["version_id"])]
    assert again.searched == len(showing) > 0
    assert jsonl_bytes(again.items) == jsonl_bytes(first.items)


def _corrupt(kind: str, path: Path) -> None:
    raw = path.read_bytes()
    head, body, _ = raw.decode().split("\n")
    entries = json.loads(body)
    if kind == "not a phrases file":
        path.write_bytes(raw[: len(raw) // 2])
    elif kind == "edited entry":
        key = next(iter(entries))
        entries[key] = [None, "phrase_not_unique"] if entries[key][0] else ["eine erfundene Wendung", None]
        path.write_text(f"{head}\n{json.dumps(entries, ensure_ascii=False, sort_keys=True, separators=(',', ':'))}\n")
    elif kind == "other language":
        meta = json.loads(head)
        meta["lang"] = "fr"
        path.write_text(f"{json.dumps(meta, sort_keys=True, separators=(',', ':'))}\n{body}\n")
    elif kind == "other rules":
        meta = json.loads(head)
        meta["rules"] = "0" * 16
        path.write_text(f"{json.dumps(meta, sort_keys=True, separators=(',', ':'))}\n{body}\n")
    elif kind == "an entry neither phrase nor skip":
        key = next(iter(entries))
        entries[key] = ["", "phrase_not_unique"]
        body = json.dumps(entries, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        meta = json.loads(head)
        meta["sha256"] = hashlib.sha256(body.encode()).hexdigest()
        path.write_text(f"{json.dumps(meta, sort_keys=True, separators=(',', ':'))}\n{body}\n")


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("not a phrases file", "not a phrases file"),
        ("edited entry", "sha256"),
        ("other language", "lang 'fr'; this build's is 'de'"),
        ("other rules", "written with rules"),
        ("an entry neither phrase nor skip", "neither a phrase nor a known skip"),
    ],
)
def test_a_phrases_file_that_cannot_be_trusted_is_set_aside_with_the_reason(sample, tmp_path, kind, reason):
    items = sample.items["de"]
    _, data = _incremental(sample.store, items, "de", tmp_path)
    path = phrases_path(tmp_path / "search", "de")
    _corrupt(kind, path)
    with pytest.raises(TrackCacheError, match=reason):
        load_phrases(path, "de")
    track, again = _incremental(sample.store, items, "de", tmp_path)
    assert reason in (track.distrusted or "") and str(path) in (track.distrusted or "")
    assert track.searched == len(items) and again == data
    assert load_phrases(path, "de") == track.phrases  # and the next build trusts what this one wrote


def test_the_phrases_file_is_deterministic_and_names_its_rules(sample, tmp_path):
    items = sample.items["it"]
    _incremental(sample.store, items, "it", tmp_path / "a")
    _incremental(sample.store, list(reversed(items)), "it", tmp_path / "b")
    a, b = (phrases_path(tmp_path / d / "search", "it").read_bytes() for d in "ab")
    assert a == b and json.loads(a.split(b"\n")[0])["rules"] == RULES


@given(st.lists(st.text(alphabet="ab \n\u00a0\t.", max_size=12), max_size=5), st.text(alphabet="ab .", max_size=8))
def test_one_search_in_the_joined_texts_is_a_search_in_each(texts, phrase):
    """T3's rule as `_joined` applies it: a non-empty normalised phrase is in the newline-joined
    normalised texts exactly when it is in one of them."""
    n = normalise(phrase)
    normalised = [normalise(t) for t in texts]
    if n:
        assert (n in _joined(normalised)) == any(n in t for t in normalised)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_reusing_any_earlier_build_gives_the_bytes_of_a_build_from_scratch(sample, data):
    """For any two sets of items A and B of the sample: the track of B reusing the phrases of A's
    build is the track of B from scratch, and only B's items not in A are searched."""
    pool = sample.items["de"] + sample.items["fr"]
    a = data.draw(st.lists(st.sampled_from(pool), unique_by=lambda i: i["id"], max_size=len(pool)))
    b = data.draw(st.lists(st.sampled_from(pool), unique_by=lambda i: i["id"], max_size=len(pool)))
    with sample.store.connect(read_only=True) as con:
        earlier = build_track(a, StoreEditions(con))
        reused = build_track(b, StoreEditions(con), earlier.phrases)
        scratch = build_track(b, StoreEditions(con))
    assert jsonl_bytes(reused.items) == jsonl_bytes(scratch.items) and reused.skipped == scratch.skipped
    assert reused.searched == len({i["id"] for i in b} - {i["id"] for i in a})


def _pipeline(store: Store, corpus: Path, data: Path) -> list[dict]:
    """Ingest German and run the builder's steps as the assets do: the bench items of the corpus."""
    ingest_language(store, load_sample_catalog(corpus), "de", data / "cache")
    update_changes(store, "de")
    update_eligible(store, "de")
    update_items(
        store,
        data / "build",
        "de",
        BuildSettings(build="v-track", item_cap=40, per_act_cap=6, core_size=15),
        data / "frozen",
    )
    return load_items(store, "de")


def test_a_new_edition_searches_only_the_items_it_changed(tmp_path):
    """On a corpus made from the shipped sample, one new edition of one act: the rebuilt track is
    the bytes of a build from scratch, and only items that are new or show a changed text are searched."""
    corpus = tmp_path / "synthetic"
    generate(Params(acts=4, editions_per_act=3, langs=("de",), seed=7, articles=(8, 14)), corpus, SAMPLE)
    store = Store(tmp_path / "data" / "chpit.duckdb")
    before = _pipeline(store, corpus, tmp_path / "data")
    _incremental(store, before, "de", tmp_path / "data")
    act = load_sample_catalog(corpus).acts[1]
    last = max(e.date_applicability for e in load_sample_catalog(corpus).editions if e.act_eli == act.eli)
    append_edition(corpus, act.eli, next_month(last), "word_changed")
    after = _pipeline(store, corpus, tmp_path / "data")
    track, data = _incremental(store, after, "de", tmp_path / "data")

    def inputs(i: dict) -> tuple:
        return tuple((i[s]["version_id"], i[s]["text"]) for s in ("gold", "distractor")) + (i["e_id"],)

    seen = {inputs(i) for i in before}
    assert track.searched == sum(inputs(i) not in seen for i in after) < len(after)
    assert data == _scratch(store, after, "de", tmp_path / "scratch")
