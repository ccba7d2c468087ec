"""The search track carries unchanged lines from its last build (issue 27.2): a bench line whose
bytes (core flag aside), editions' fingerprints and phrase are those of the last build keeps its
search line as written, and the file is still byte for byte a build from scratch; a lines memo that
cannot be trusted, or that describes another search file, is set aside with the reason, never used."""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chpit_assets.bench.files import item_line
from chpit_assets.bench.items import stamp_core
from chpit_assets.search.track import (
    RENDER,
    TrackCacheError,
    lines_path,
    load_carried,
    phrases_path,
    track_path,
    update_track,
)
from tests.runs.conftest import build_sample


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return build_sample(tmp_path_factory.mktemp("sample"))


def _lines(items: list[dict]) -> list[bytes]:
    return [item_line(i).encode() for i in items]


def _update(store, items: list[dict], root: Path, lang: str = "de"):
    with store.connect(read_only=True) as con:
        return update_track(con, _lines(items), lang, root / "build", root / "search")


def _reseal(path: Path, edit) -> None:
    """Rewrite the memo at `path` with `edit(head, entries)` applied and a right sha256: only the
    checks past the seal can refuse it."""
    head_line, body, _ = path.read_text().split("\n")
    head, entries = json.loads(head_line), json.loads(body)
    edit(head, entries)
    body = json.dumps(entries, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    head["sha256"] = hashlib.sha256(body.encode()).hexdigest()
    path.write_text(f"{json.dumps(head, sort_keys=True, separators=(',', ':'))}\n{body}\n")


def test_a_second_build_carries_every_line_and_writes_the_same_bytes(sample, tmp_path):
    items = sample.items["de"]
    first, data = _update(sample.store, items, tmp_path)
    assert first.reused_lines == 0 and first.written == data.count(b"\n") > 0
    again, same = _update(sample.store, items, tmp_path)
    assert (again.reused_lines, again.searched, again.items) == (len(items), 0, [])
    assert same == data and again.skipped == first.skipped and again.written == first.written
    assert again.phrases == first.phrases  # the next build can still carry them
    assert load_carried(lines_path(tmp_path / "search", "de"), "de", track_path(tmp_path / "build", "de"))[0]


def test_a_line_that_differs_only_in_its_core_flag_is_carried(sample, tmp_path):
    """Search items are never core (B16 moves hundreds of core flags a rebuild)."""
    items = sample.items["de"]
    _, data = _update(sample.store, items, tmp_path)
    flipped = [dict(i, core=not i["core"]) for i in items]
    track, same = _update(sample.store, flipped, tmp_path)
    assert track.reused_lines == len(items) and same == data


def test_changed_lines_are_rendered_again_and_the_rest_carried(sample, tmp_path):
    items = sample.items["de"]
    _update(sample.store, items, tmp_path / "inc")
    # One item asked on another day (its line changes, its phrase key does not), one dropped.
    changed = [dict(items[0], as_of="2001-02-03"), *items[2:]]
    track, data = _update(sample.store, changed, tmp_path / "inc")
    assert track.reused_lines == len(changed) - 1 and track.searched == 0
    assert [i["as_of"] for i in track.items] in ([], ["2001-02-03"])  # rendered now (unless skipped)
    scratch, expected = _update(sample.store, changed, tmp_path / "scratch")
    assert data == expected and track.skipped == scratch.skipped


def test_an_edition_whose_fingerprint_changed_is_searched_again_not_carried(tmp_path):
    sample = build_sample(tmp_path / "sample")
    items = sample.items["de"]
    _update(sample.store, items, tmp_path / "inc")
    version = items[0]["gold"]["version_id"]
    with sample.store.transaction() as con:
        con.execute("UPDATE ch_act_version SET content_sha256 = repeat('f', 64) WHERE version_id = ?", [version])
    track, data = _update(sample.store, items, tmp_path / "inc")
    showing = [i for i in items if version in (i["gold"]["version_id"], i["distractor"]["version_id"])]
    assert track.reused_lines == len(items) - len(showing) and track.searched == len(showing) > 0
    assert data == _update(sample.store, items, tmp_path / "scratch")[1]


def _edit_search_file(path: Path, search: Path) -> None:
    search.write_bytes(search.read_bytes().replace(b'"phrase": "', b'"phrase": "X', 1))


def _remove_search_file(path: Path, search: Path) -> None:
    search.unlink()


def _edit_entry(path: Path, search: Path) -> None:
    path.write_text(path.read_text().replace(",0]", ",1]", 1))


def _index_out_of_range(path: Path, search: Path) -> None:
    def edit(head, entries):
        key = next(k for k, v in entries.items() if v[6] is not None)
        entries[key][6] = 10**6

    _reseal(path, edit)


def _vid_not_a_number(path: Path, search: Path) -> None:
    def edit(head, entries):
        entries[next(iter(entries))][0] = "1"

    _reseal(path, edit)


def _other_render(path: Path, search: Path) -> None:
    _reseal(path, lambda head, entries: head.update(render="0" * 16))


def _other_language(path: Path, search: Path) -> None:
    _reseal(path, lambda head, entries: head.update(lang="fr"))


def _truncated(path: Path, search: Path) -> None:
    path.write_bytes(path.read_bytes()[:100])


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (_edit_search_file, "is not the file it describes"),
        (_remove_search_file, "is gone"),
        (_edit_entry, "sha256"),
        (_index_out_of_range, "malformed"),
        (_vid_not_a_number, "malformed"),
        (_other_render, "written with render"),
        (_other_language, "lang 'fr'; this build's is 'de'"),
        (_truncated, "is not a track lines file"),
    ],
)
def test_a_lines_memo_that_cannot_be_trusted_is_set_aside_with_the_reason(sample, tmp_path, damage, reason):
    items = sample.items["de"]
    _, data = _update(sample.store, items, tmp_path)
    path, search = lines_path(tmp_path / "search", "de"), track_path(tmp_path / "build", "de")
    damage(path, search)
    with pytest.raises(TrackCacheError, match=reason):
        load_carried(path, "de", search)
    track, again = _update(sample.store, items, tmp_path)
    assert reason in (track.lines_distrusted or "") and str(path) in (track.lines_distrusted or "")
    assert track.reused_lines == 0 and again == data
    assert track.searched == 0  # the phrases file was not touched: every phrase reused, every line rendered
    track, _ = _update(sample.store, items, tmp_path)  # and the next build trusts what this one wrote
    assert track.lines_distrusted is None and track.reused_lines == len(items)


def test_a_memo_of_an_earlier_search_file_is_not_used(sample, tmp_path):
    """Killed after the search file was written and before the memo was (or the memo's rename lost
    to a power cut: it is not fsynced), the memo left describes the file before: refused."""
    items = sample.items["fr"]
    _update(sample.store, items[:-1], tmp_path, "fr")
    path = lines_path(tmp_path / "search", "fr")
    older = path.read_bytes()
    _update(sample.store, items, tmp_path, "fr")
    path.write_bytes(older)
    track, data = _update(sample.store, items, tmp_path, "fr")
    assert "is not the file it describes" in (track.lines_distrusted or "") and track.reused_lines == 0
    assert data == _update(sample.store, items, tmp_path / "scratch", "fr")[1]


def test_without_the_phrases_file_no_line_is_carried(sample, tmp_path):
    """A carried line's phrase must go on to the next build's phrases: without it, nothing is carried."""
    items = sample.items["de"]
    _, data = _update(sample.store, items, tmp_path)
    phrases_path(tmp_path / "search", "de").unlink()
    track, again = _update(sample.store, items, tmp_path)
    assert (track.reused_lines, track.searched, again) == (0, len(items), data)


def test_the_memo_is_deterministic_and_names_its_code(sample, tmp_path):
    items = sample.items["it"]
    _update(sample.store, items, tmp_path / "a", "it")
    _update(sample.store, list(reversed(items)), tmp_path / "b", "it")
    a, b = (lines_path(tmp_path / d / "search", "it").read_bytes() for d in "ab")
    assert a == b and json.loads(a.split(b"\n")[0])["render"] == RENDER


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_carrying_from_any_earlier_build_gives_the_bytes_of_a_build_from_scratch(sample, data):
    """For any two sets of items A and B of the sample, each line with any core flag: the track of B
    built after A's is the track of B from scratch, and exactly B's lines that A had are carried."""
    pool = sample.items["de"]
    draw = st.lists(st.tuples(st.sampled_from(pool), st.booleans()), unique_by=lambda p: p[0]["id"], max_size=len(pool))
    a, b = ([dict(i, core=core) for i, core in data.draw(draw)] for _ in "ab")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _update(sample.store, a, root / "inc")
        track, incremental = _update(sample.store, b, root / "inc")
        scratch, expected = _update(sample.store, b, root / "scratch")
    assert incremental == expected and track.skipped == scratch.skipped
    had = {stamp_core(line, False) for line in _lines(a)}
    assert track.reused_lines == sum(stamp_core(line, False) in had for line in _lines(b))
