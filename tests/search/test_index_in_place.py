"""The search index updated in place (issue 27.2): the file a trusted update leaves is the old index
or the new one, whatever instant the update is killed at; a half-updated file is never trusted.

The store is the real Fedlex sample (German), ingested by the pipeline's own code. "Stale" is its
index with a third of the editions' fingerprints changed, as if built from an older store: an
update deletes and inserts them again, enough pages for SQLite to write some before its commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chpit_assets.search.index as index_module
from chpit_assets.corpus.ingest import ingest_language
from chpit_assets.corpus.store import Store
from chpit_assets.fedlex.catalog import load_sample_catalog
from chpit_assets.search.engine import SearchIndex
from chpit_assets.search.index import (
    SearchIndexError,
    build_index,
    digest_path,
    file_digest,
    index_path,
    journal_path,
    mismatch,
    signature_path,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "fedlex-sample"
ROOT = Path(__file__).resolve().parents[2]
QUERIES = ["Art. 24 DSG", "Datensicherheit Meldung", "Vertrag Angebot Annahme"]
AS_OF = date(2025, 5, 1)

# The child: one update of SEARCH_DIR's index; MODE says where it kills itself (SIGKILL, as kill -9).
# "spill": a page cache of a few pages, so SQLite writes pages into the file before its commit.
CHILD = r"""
import os, signal, sqlite3, sys, types
from chpit_assets.corpus.store import Store
import chpit_assets.search.index as index

store, search_dir, mode = sys.argv[1], sys.argv[2], sys.argv[3]

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

def small_cache(*args, **kwargs):
    db = sqlite3.connect(*args, **kwargs)
    db.execute("PRAGMA cache_size = 4")
    return db

index.sqlite3 = types.SimpleNamespace(**{**vars(sqlite3), "connect": small_cache})
if mode == "before_commit":
    insert = index._insert
    index._insert = lambda *a: (insert(*a), die())
elif mode == "before_digest":
    index._record = die
elif mode == "before_signature":
    index._record_signature = die
with Store(store).connect(read_only=True) as con:
    index.build_index(con, "de", search_dir)
"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("in-place")
    store = Store(root / "chpit.duckdb")
    ingest_language(store, load_sample_catalog(SAMPLE), "de", root / "cache")
    with store.connect(read_only=True) as con:
        build_index(con, "de", root / "fresh")
    stale = root / "stale"
    stale.mkdir()
    path = index_path(stale, "de")
    shutil.copy(index_path(root / "fresh", "de"), path)
    db = sqlite3.connect(path)
    db.execute("UPDATE edition SET fingerprint = 'old' WHERE version_id % 3 = 0")
    db.commit()
    db.close()
    digest_path(path).write_text(file_digest(path) + "\n", encoding="ascii")
    updated = root / "updated"
    shutil.copytree(stale, updated)
    with store.connect(read_only=True) as con:
        build_index(con, "de", updated)
    return store, root


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _answers(search_dir: Path) -> list[list[dict]]:
    index = SearchIndex(search_dir, "de")
    try:
        return [[h.as_dict() for h in index.search(q, AS_OF)] for q in QUERIES]
    finally:
        index.close()


def test_an_update_writes_the_file_in_place_and_its_answers_are_those_of_a_build_from_scratch(sample, tmp_path):
    store, root = sample
    search_dir = tmp_path / "search"
    shutil.copytree(root / "stale", search_dir)
    path = index_path(search_dir, "de")
    inode = path.stat().st_ino
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", search_dir)
    assert result.editions_added == result.editions_removed > 0 and result.distrusted is None
    assert path.stat().st_ino == inode  # not a copy renamed over it
    names = sorted(p.name for p in search_dir.iterdir())
    assert names == ["de.sqlite", "de.sqlite.sha256", "de.sqlite.stat"]  # no tmp, no journal
    assert mismatch(path) is None
    assert _sha(path) == _sha(index_path(root / "updated", "de"))  # deterministic: same SQL, same bytes
    assert _answers(search_dir) == _answers(root / "fresh")
    with store.connect(read_only=True) as con:
        again = build_index(con, "de", search_dir)
    assert (again.editions_added, again.editions_removed) == (0, 0) and _sha(path) == _sha(
        index_path(root / "updated", "de")
    )


def _kill_child(store: Store, search_dir: Path, mode: str, after: float | None = None) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(store.path), str(search_dir), mode], env=env, stderr=subprocess.PIPE
    )
    if after is not None:
        time.sleep(after)  # where the kill lands, not a timing assertion
        child.send_signal(signal.SIGKILL)
    _, err = child.communicate()
    assert child.returncode in (0, -signal.SIGKILL), err.decode()


def _check_after_kill(store: Store, root: Path, search_dir: Path) -> str:
    """The invariant: a trusted file is the old index or the new one; a reader answers as one of them
    or refuses; the next build leaves the new index, trusted, with no journal. Returns what was seen."""
    path = index_path(search_dir, "de")
    old, new = _sha(index_path(root / "stale", "de")), _sha(index_path(root / "updated", "de"))
    trusted = mismatch(path) is None
    if trusted:
        assert _sha(path) in (old, new)
    try:
        answers = _answers(search_dir)
    except SearchIndexError:
        seen = "refused"
    else:
        assert trusted
        assert answers == _answers(root / "fresh")  # old and new answer alike: both index the same articles
        seen = "old" if _sha(path) == old else "new"
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", search_dir)
    assert mismatch(path) is None and not journal_path(path).exists()
    assert _answers(search_dir) == _answers(root / "fresh")
    if result.distrusted is None:  # built upon the old file (rolled back) or the new one: the new bytes
        assert _sha(path) == new
    return seen


@pytest.mark.parametrize("mode", ["before_commit", "before_digest"])
def test_an_update_killed_at_a_named_point_leaves_the_old_index_or_a_refused_one(sample, tmp_path, mode):
    store, root = sample
    search_dir = tmp_path / "search"
    shutil.copytree(root / "stale", search_dir)
    path = index_path(search_dir, "de")
    _kill_child(store, search_dir, mode)
    if mode == "before_commit":
        # Pages were written before the commit (a cache of 4 pages): the journal holds the old ones.
        assert journal_path(path).exists() and mismatch(path) is not None
        with pytest.raises(SearchIndexError, match="search index refused"):
            _answers(search_dir)
        with store.connect(read_only=True) as con:
            result = build_index(con, "de", search_dir)
        # Rolled back to the old bytes, then updated in place: not rebuilt from scratch.
        assert result.distrusted is None and _sha(path) == _sha(index_path(root / "updated", "de"))
    else:
        # Committed, digest not yet written: the new bytes under the old digest are refused.
        assert not journal_path(path).exists() and _sha(path) == _sha(index_path(root / "updated", "de"))
        with pytest.raises(SearchIndexError, match="changed on disk"):
            _answers(search_dir)
        with store.connect(read_only=True) as con:
            result = build_index(con, "de", search_dir)
        assert result.distrusted is not None and "changed on disk" in result.distrusted
    assert mismatch(path) is None and _answers(search_dir) == _answers(root / "fresh")


def test_an_update_killed_at_any_instant_is_never_a_trusted_half_index(sample, tmp_path):
    """kill -9 at random instants of a real update (its page cache small, so the file is written
    before the commit): whatever the instant, the invariant of `_check_after_kill` holds."""
    store, root = sample
    rng = random.Random(27)
    seen = []
    for n in range(8):
        search_dir = tmp_path / f"search-{n}"
        shutil.copytree(root / "stale", search_dir)
        _kill_child(store, search_dir, "spill", after=rng.uniform(0.3, 3.0))
        seen.append(_check_after_kill(store, root, search_dir))
    assert set(seen) <= {"old", "new", "refused"}


def test_a_journal_beside_a_replaced_file_is_not_rolled_back_into_the_new_one(sample, tmp_path):
    """A distrusted file with a journal SQLite cannot roll back is rebuilt from scratch, and the
    journal goes: it belongs to the replaced file, and rolled back into the new one it would
    corrupt it under a digest of its own."""
    store, root = sample
    killed = tmp_path / "killed"
    shutil.copytree(root / "stale", killed)
    _kill_child(store, killed, "before_commit")
    journal = journal_path(index_path(killed, "de"))
    assert journal.exists()
    search_dir = tmp_path / "search"
    search_dir.mkdir()
    path = index_path(search_dir, "de")
    path.write_bytes(b"not an index " * 1000)
    shutil.copy(journal, journal_path(path))
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", search_dir)
    assert result.distrusted is not None and not journal_path(path).exists()
    db = sqlite3.connect(path)  # a connection that may write: it would roll back a journal left there
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    assert _sha(path) == _sha(index_path(root / "fresh", "de"))  # a build from scratch, byte for byte
    assert mismatch(path) is None and _answers(search_dir) == _answers(root / "fresh")


def _hashes(monkeypatch) -> list[Path]:
    """The files the index module hashes in full from now on."""
    seen: list[Path] = []
    real = index_module.file_digest
    monkeypatch.setattr(index_module, "file_digest", lambda path: (seen.append(Path(path)), real(path))[1])
    return seen


def _stale_with_signature(root: Path, search_dir: Path) -> Path:
    """The stale index as the build that made it leaves it: digest and signature recorded."""
    shutil.copytree(root / "stale", search_dir)
    path = index_path(search_dir, "de")
    index_module._record(path, *index_module._hash(path))
    assert signature_path(path).exists()
    return path


def test_an_update_hashes_the_index_once_and_writes_the_same_bytes(sample, tmp_path, monkeypatch):
    """The file is unchanged since its digest was computed (its signature says so): the build
    starts from it without hashing it, and hashes only the result (issue 27.2)."""
    store, root = sample
    path = _stale_with_signature(root, tmp_path / "search")
    seen = _hashes(monkeypatch)
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", tmp_path / "search")
    assert result.distrusted is None and result.editions_added > 0
    assert seen == [path]  # the new bytes only
    with store.connect(read_only=True) as con:
        again = build_index(con, "de", tmp_path / "search")
    assert (again.editions_added, again.distrusted) == (0, None) and seen == [path]  # nothing hashed
    assert _sha(path) == _sha(index_path(root / "updated", "de")) and mismatch(path) is None
    assert digest_path(path).read_text() == digest_path(index_path(root / "updated", "de")).read_text()


def test_a_build_from_scratch_records_the_signature_and_the_next_build_trusts_it(sample, tmp_path, monkeypatch):
    store, root = sample
    with store.connect(read_only=True) as con:
        build_index(con, "de", tmp_path)
    seen = _hashes(monkeypatch)
    with store.connect(read_only=True) as con:
        again = build_index(con, "de", tmp_path)
    assert (again.editions_added, again.distrusted, seen) == (0, None, [])
    assert _sha(index_path(tmp_path, "de")) == _sha(index_path(root / "fresh", "de"))


def test_an_edit_that_keeps_the_size_and_puts_the_mtime_back_is_still_caught(sample, tmp_path):
    """A write changes ctime, which no one but the clock sets: the signature no longer matches, the
    build hashes in full and rebuilds the file from scratch."""
    store, root = sample
    path = _stale_with_signature(root, tmp_path / "search")
    before = os.stat(path)
    with open(path, "r+b") as fh:
        fh.seek(before.st_size // 2)
        byte = fh.read(1)
        fh.seek(before.st_size // 2)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(path).st_size == before.st_size and os.stat(path).st_mtime_ns == before.st_mtime_ns
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", tmp_path / "search")
    assert result.distrusted is not None and "changed on disk" in result.distrusted
    assert _sha(path) == _sha(index_path(root / "fresh", "de")) and mismatch(path) is None


@pytest.mark.parametrize("kind", ["garbage", "another file's", "another digest"])
def test_a_signature_that_does_not_vouch_for_the_file_is_not_used(sample, tmp_path, monkeypatch, kind):
    store, root = sample
    path = _stale_with_signature(root, tmp_path / "search")
    stat = signature_path(path)
    if kind == "garbage":
        stat.write_bytes(b"\x00not json")
    elif kind == "another file's":
        # The same bytes and digest copied elsewhere: another inode, so its signature is not this one's.
        copy = tmp_path / "copy"
        shutil.copytree(tmp_path / "search", copy)
        shutil.copy(stat, signature_path(index_path(copy, "de")))
        path = index_path(copy, "de")
    else:
        recorded = json.loads(stat.read_bytes())
        stat.write_text(json.dumps({**recorded, "sha256": "0" * 64}))
    seen = _hashes(monkeypatch)
    assert not index_module._unchanged_since_hashed(path)
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", path.parent)
    assert result.distrusted is None and seen[0] == path  # hashed in full first, found whole
    assert _sha(path) == _sha(index_path(root / "updated", "de"))


def test_no_signature_is_recorded_from_timestamps_a_later_write_could_repeat(tmp_path):
    """A file stamped ahead of our clock (another machine's, or set by hand): a write in the next
    hour could leave the same times, so its signature would not vouch for anything."""
    path = tmp_path / "f"
    path.write_bytes(b"x" * 4096)
    assert index_module._hash(path)[1] is not None
    future = time.time_ns() + 3_600 * 10**9
    os.utime(path, ns=(future, future))
    assert index_module._hash(path) == (file_digest(path), None)


def test_an_update_killed_before_its_signature_is_trusted_by_hash_and_signed_again(sample, tmp_path, monkeypatch):
    store, root = sample
    search_dir = tmp_path / "search"
    path = _stale_with_signature(root, search_dir)
    _kill_child(store, search_dir, "before_signature")
    assert mismatch(path) is None and _sha(path) == _sha(index_path(root / "updated", "de"))
    assert not index_module._unchanged_since_hashed(path)  # the stat file names the old digest
    seen = _hashes(monkeypatch)
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", search_dir)
    assert (result.editions_added, result.distrusted, seen) == (0, None, [path])
    assert index_module._unchanged_since_hashed(path)


def _chunked_sha256(data: bytes, chunk: int) -> str:
    """The index digest as its docstring defines it, computed here independently."""
    digests = b"".join(hashlib.sha256(data[i : i + chunk]).digest() for i in range(0, len(data), chunk))
    return f"{index_module.DIGEST_SCHEME}:{hashlib.sha256(digests).hexdigest()}"


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=200), chunk=st.integers(1, 16), flip=st.integers(0, 199))
def test_the_digest_is_the_sha256_of_the_chunks_digests_and_any_changed_byte_changes_it(data, chunk, flip):
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_module, "DIGEST_CHUNK", chunk)
        path = Path(folder) / "f"
        path.write_bytes(data)
        assert file_digest(path) == _chunked_sha256(data, chunk)
        if data:
            changed = bytearray(data)
            changed[flip % len(data)] ^= 0xFF
            path.write_bytes(bytes(changed))
            assert file_digest(path) != _chunked_sha256(data, chunk)
            path.write_bytes(data[:-1])  # one byte shorter
            assert file_digest(path) != _chunked_sha256(data, chunk)


def test_a_short_read_is_read_on_and_the_real_chunk_size_is_the_documented_one(tmp_path, monkeypatch):
    assert index_module.DIGEST_CHUNK == 16 << 20 and index_module.DIGEST_SCHEME == "sha256-chunks-16MiB"
    data = bytes(range(256)) * 300
    path = tmp_path / "f"
    path.write_bytes(data)
    monkeypatch.setattr(index_module, "DIGEST_CHUNK", 1000)
    real = os.pread
    monkeypatch.setattr(index_module.os, "pread", lambda fd, n, offset: real(fd, min(n, 7), offset))
    assert file_digest(path) == _chunked_sha256(data, 1000)


def test_an_index_recorded_with_an_older_digest_is_refused_and_rebuilt_once(sample, tmp_path):
    """A build before the chunked digest recorded a plain sha256: the file is not trusted on it (a
    reader refuses it, naming why), the next build rebuilds it and records the digest a reader trusts."""
    store, root = sample
    search_dir = tmp_path / "search"
    shutil.copytree(root / "updated", search_dir)
    path = index_path(search_dir, "de")
    digest_path(path).write_text(_sha(path) + "\n", encoding="ascii")
    index_module._record_signature(path, _sha(path), index_module._signature(os.stat(path)))
    with pytest.raises(SearchIndexError, match="is not a sha256-chunks-16MiB digest"):
        index_module.verify(path, "de")
    with store.connect(read_only=True) as con:
        result = build_index(con, "de", search_dir)
    assert result.distrusted is not None and "not a sha256-chunks-16MiB digest" in result.distrusted
    index_module.verify(path, "de")
    assert digest_path(path).read_text(encoding="ascii").strip() == file_digest(path)
    with store.connect(read_only=True) as con:
        again = build_index(con, "de", search_dir)
    assert again.distrusted is None and (again.editions_added, again.editions_removed) == (0, 0)
