"""The track's text cache (issue 27.1): editions normalised once, kept under their content
fingerprint; a build that uses it writes the bytes of a build from scratch, and an entry or a file
it cannot trust is normalised again or replaced, never used, even after a build killed mid-write."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chpit_assets.bench.files import item_line
from chpit_assets.search.track import RULES, _seal, _unseal, phrases_path, texts_path, update_track
from tests.runs.conftest import build_sample

ROOT = Path(__file__).resolve().parents[2]

# The child: one update_track of the sample's German items into SEARCH_DIR, killed (SIGKILL) as the
# text cache commits; a page cache of two pages, so SQLite writes pages into the file before that.
CHILD = r"""
import os, signal, sqlite3, sys, types
from chpit_assets.bench.items import _load_lines
from chpit_assets.corpus.store import Store
import chpit_assets.search.track as track

store, root = Store(sys.argv[1]), sys.argv[2]

class Dying:
    def __init__(self, db):
        self.db = db
        db.execute("PRAGMA cache_size = 2")
    def __getattr__(self, name):
        return getattr(self.db, name)
    def execute(self, sql, *args):
        if sql == "COMMIT":
            os.kill(os.getpid(), signal.SIGKILL)
        return self.db.execute(sql, *args)

track.sqlite3 = types.SimpleNamespace(**{**vars(sqlite3), "connect": lambda *a, **k: Dying(sqlite3.connect(*a, **k))})
with store.connect(read_only=True) as con:
    track.update_track(con, _load_lines(store, "de", core_only=False), "de", root + "/build", root + "/search")
"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    return build_sample(tmp_path_factory.mktemp("sample"))


def _track(sample, root: Path, fresh_phrases: bool = True):
    """update_track of the German items into `root`; every phrase searched (T3 reads the cache)
    unless `fresh_phrases` is False."""
    if fresh_phrases:
        phrases_path(root / "search", "de").unlink(missing_ok=True)
    with sample.store.connect(read_only=True) as con:
        return update_track(
            con, [item_line(i).encode() for i in sample.items["de"]], "de", root / "build", root / "search"
        )


@pytest.fixture
def scratch(sample, tmp_path_factory):
    """The track's bytes from scratch (no phrases, no text cache) and the number of its editions."""
    track, data = _track(sample, tmp_path_factory.mktemp("scratch"))
    assert track.texts_distrusted is None and track.normalised
    return data, len(track.normalised)


def test_a_build_reading_every_edition_from_the_cache_writes_the_bytes_of_one_from_scratch(sample, tmp_path, scratch):
    data, editions = scratch
    _track(sample, tmp_path)
    track, again = _track(sample, tmp_path)
    assert track.searched == len(sample.items["de"]) and track.normalised == {}  # nothing normalised now
    assert again == data and track.texts_distrusted is None
    db = sqlite3.connect(texts_path(tmp_path / "search", "de"))
    assert db.execute("SELECT count(*) FROM edition").fetchone()[0] == editions
    db.close()


def _edit(path: Path, sql: str) -> None:
    db = sqlite3.connect(path)
    db.execute(sql)
    db.commit()
    db.close()


@pytest.mark.parametrize(
    "sql",
    [
        # a changed text under a digest that no longer matches it
        "UPDATE edition SET body = replace(body, 'art', 'xyz') WHERE rowid = (SELECT min(rowid) FROM edition)",
        # a whole entry (texts and digest) moved under another edition's key
        "UPDATE edition SET fingerprint = 'f' || fingerprint WHERE rowid = (SELECT min(rowid) FROM edition); "
        "UPDATE edition SET fingerprint = (SELECT substr(fingerprint, 2) FROM edition WHERE fingerprint LIKE 'f%') "
        "WHERE rowid = (SELECT min(rowid) + 1 FROM edition)",
    ],
    ids=["edited texts", "moved entry"],
)
def test_a_damaged_entry_is_normalised_again_and_rewritten(sample, tmp_path, scratch, sql):
    data, _ = scratch
    _track(sample, tmp_path)
    path = texts_path(tmp_path / "search", "de")
    db = sqlite3.connect(path)
    db.executescript(sql)
    db.close()
    track, again = _track(sample, tmp_path)
    assert again == data
    assert "do not match their sha256" in (track.texts_distrusted or "") and str(path) in track.texts_distrusted
    assert 1 <= len(track.normalised) <= 2  # the refused entries only
    healed, _ = _track(sample, tmp_path)
    assert (healed.texts_distrusted, healed.normalised) == (None, {})


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        ("garbage", "is not a text cache"),
        ("other language", "holds 'fr'"),
        ("other rules", "by rules '0000000000000000'"),
        ("torn pages", "cannot be read"),
    ],
)
def test_a_foreign_cache_file_is_replaced_with_the_reason(sample, tmp_path, scratch, damage, reason):
    data, editions = scratch
    _track(sample, tmp_path)
    path = texts_path(tmp_path / "search", "de")
    if damage == "garbage":
        path.write_bytes(b"not a cache " * 500)
    elif damage == "other language":
        _edit(path, "UPDATE meta SET value = 'fr' WHERE key = 'lang'")
    elif damage == "other rules":
        _edit(path, "UPDATE meta SET value = '0000000000000000' WHERE key = 'rules'")
    else:  # its header and meta pages whole, the pages of the entries garbage
        size = path.stat().st_size
        with open(path, "r+b") as fh:
            fh.seek(2 * 4096)
            fh.write(b"\xff" * (size - 2 * 4096))
    track, again = _track(sample, tmp_path)
    assert reason in (track.texts_distrusted or "") and again == data
    assert len(track.normalised) == editions  # nothing of it used
    db = sqlite3.connect(path)
    assert dict(db.execute("SELECT key, value FROM meta").fetchall()) == {"rules": RULES, "lang": "de"}
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    reused, same = _track(sample, tmp_path)
    assert (reused.texts_distrusted, reused.normalised, same) == (None, {}, data)


def test_a_build_killed_while_it_writes_the_cache_leaves_one_the_next_build_rolls_back(sample, tmp_path, scratch):
    data, editions = scratch
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(sample.store.path), str(tmp_path)], env=env, capture_output=True
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    path = texts_path(tmp_path / "search", "de")
    assert path.with_name(f"{path.name}-journal").exists()  # pages written before the commit
    track, again = _track(sample, tmp_path)
    assert again == data and track.texts_distrusted is None
    assert len(track.normalised) == editions  # the killed build's entries were rolled back
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    assert not path.with_name(f"{path.name}-journal").exists()
    reused, same = _track(sample, tmp_path)
    assert (reused.normalised, same) == ({}, data)


@given(st.lists(st.tuples(st.text("ab\x00\x01", max_size=4), st.text("ab \x00\x01", max_size=6)), max_size=4))
def test_an_entry_reads_back_as_written_or_is_not_cached(articles):
    """The separators the body uses: an edition whose e_ids or texts hold them is left out, any
    other reads back exactly (none of it lost or shifted to another article)."""
    sealed = _seal("f" * 64, articles)
    if sealed is None:
        assert any("\x00" in e or "\x01" in e or "\x00" in n for e, n in articles)
    else:
        assert _unseal("f" * 64, *sealed) == articles
        assert _unseal("e" * 64, *sealed) is None  # under another key
