"""The swap of data/publish: the previous build survives a failed swap and a crash between the
renames; one publisher at a time; what a killed publisher left is repaired by the next one."""

from __future__ import annotations

import os
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chpit_assets.publish import PublishError
from chpit_assets.publish.folder import (
    folder_files,
    new_staging_dir,
    published_acts,
    publisher_lock,
    recover,
    swap_in,
)


def build(folder, text: str) -> None:
    """A stand-in publication: a card and a German full shard with one row (of act 7) per character of `text`."""
    (folder / "data" / "de").mkdir(parents=True)
    (folder / "README.md").write_text(text)
    rows = {
        "id": list(text),
        "act_id": [7] * len(text),
        "sr_number": ["210"] * len(text),
        "abbreviation": ["ZGB"] * len(text),
    }
    pq.write_table(pa.table(rows), folder / "data" / "de" / "full-00000-of-00001.parquet")


def counts(live) -> dict[str, dict[int, int]]:
    return {lang: {act: n for act, (_, n) in acts.items()} for lang, acts in published_acts(live).items()}


def test_swap_replaces_the_whole_folder_and_cleans_up(tmp_path):
    live = tmp_path / "publish"
    build(live, "old")
    (live / "data" / "fr").mkdir()  # a file of the old build that the new one does not have
    (live / "data" / "fr" / "stale.parquet").write_bytes(b"x")
    staged = new_staging_dir(live)
    assert staged.parent == live.parent  # same filesystem: the swap is a rename
    build(staged, "new")
    swap_in(staged, live)
    assert folder_files(live)["README.md"] == b"new" and counts(live) == {"de": {7: 3}}
    assert sorted(folder_files(live)) == ["README.md", "data/de/full-00000-of-00001.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["publish"]


def test_the_published_folder_is_readable_like_any_other_folder(tmp_path):
    old = os.umask(0o022)
    try:
        staged = new_staging_dir(tmp_path / "publish")
    finally:
        os.umask(old)
    assert staged.stat().st_mode & 0o777 == 0o755  # not mkdtemp's 0700: others serve the dataset


def test_a_failed_swap_puts_the_previous_build_back(tmp_path, monkeypatch):
    live = tmp_path / "publish"
    build(live, "old")
    before = folder_files(live)
    staged = new_staging_dir(live)
    build(staged, "new")
    real_rename = os.rename

    def rename(src, dst):
        if os.fspath(src) == os.fspath(staged):
            raise OSError("disk went away mid-swap")
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OSError, match="mid-swap"):
        swap_in(staged, live)
    assert folder_files(live) == before and not (tmp_path / "publish.previous").exists()


def test_a_crash_between_the_renames_is_recovered(tmp_path):
    live = tmp_path / "publish"
    previous = tmp_path / "publish.previous"
    build(previous, "older")  # the state after the first rename, before the second
    assert counts(live) == {"de": {7: 5}}  # the gate still counts the live build
    assert published_acts(live)["de"][7][0] == "SR 210 ZGB (act_id 7)"
    recover(live)
    assert folder_files(live)["README.md"] == b"older" and not previous.exists()


def test_a_crash_after_the_second_rename_completes_the_swap(tmp_path):
    live, previous = tmp_path / "publish", tmp_path / "publish.previous"
    build(live, "new")
    build(previous, "old")
    assert recover(live) == ["removed publish.previous (a swap completed, its clean-up was interrupted)"]
    assert folder_files(live)["README.md"] == b"new" and not previous.exists()


def test_recover_removes_staged_folders_and_dead_writers_temp_files_only(tmp_path):
    live, build_dir = tmp_path / "publish", tmp_path / "build"
    build(live, "live")
    staged = new_staging_dir(live)
    build(staged, "half")
    build_dir.mkdir()
    dead = build_dir / ".bench-de.jsonl.0123456789abcdef.tmp"
    dead.write_bytes(b"half a file")
    cutoff = time.time()
    os.utime(dead, (cutoff - 5, cutoff - 5))
    fresh = build_dir / ".core-de.jsonl.fedcba9876543210.tmp"  # a writer that started after us: alive
    fresh.write_bytes(b"being written")
    os.utime(fresh, (cutoff + 5, cutoff + 5))
    kept = build_dir / "bench-de.jsonl"
    kept.write_bytes(b"{}\n")
    done = recover(live, build_dir, older_than=cutoff)
    assert len(done) == 2 and staged.name in done[0] and dead.name in done[1]
    assert sorted(p.name for p in build_dir.iterdir()) == sorted([fresh.name, kept.name])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "publish"]
    assert folder_files(live)["README.md"] == b"live" and recover(live, build_dir, older_than=cutoff) == []


def test_a_swap_refuses_to_run_over_an_unrecovered_previous(tmp_path):
    live = tmp_path / "publish"
    build(live, "live")
    build(tmp_path / "publish.previous", "older")
    staged = new_staging_dir(live)
    with pytest.raises(PublishError, match="run recover"):
        swap_in(staged, live)
    assert folder_files(live)["README.md"] == b"live"


def test_a_second_publisher_waits_then_fails_clearly(tmp_path):
    live = tmp_path / "publish"
    with publisher_lock(live):
        with pytest.raises(PublishError, match=r"another publication .* holds .*\.publish\.lock.*nothing was changed"):
            with publisher_lock(live, wait_s=0):
                pass
    with publisher_lock(live, wait_s=0):  # released with its holder
        pass


def test_concurrent_publishers_take_turns_and_never_collide(tmp_path):
    """Two swaps at once renamed into each other's .previous (Errno 39); under the lock they queue."""
    live = tmp_path / "publish"
    build(live, "start")
    errors: list[BaseException] = []

    def publisher(n: int) -> None:
        try:
            for k in range(8):
                with publisher_lock(live):
                    recover(live)
                    staged = new_staging_dir(live)
                    build(staged, f"p{n}-{k}")
                    swap_in(staged, live)
        except BaseException as exc:  # collected: a thread's exception would otherwise vanish
            errors.append(exc)

    threads = [threading.Thread(target=publisher, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert folder_files(live)["README.md"].decode().startswith("p")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".publish.lock", "publish"]
