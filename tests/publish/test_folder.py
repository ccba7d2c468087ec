"""The swap of data/publish: the previous build survives a failed swap and a crash between the renames."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chpit_assets.publish.folder import (
    folder_files,
    new_staging_dir,
    published_counts,
    recover,
    swap_in,
)


def build(folder, text: str) -> None:
    """A stand-in publication: a card and a German full shard with one row per character of `text`."""
    (folder / "data" / "de").mkdir(parents=True)
    (folder / "README.md").write_text(text)
    pq.write_table(pa.table({"id": list(text)}), folder / "data" / "de" / "full-00000-of-00001.parquet")


def test_swap_replaces_the_whole_folder_and_cleans_up(tmp_path):
    live = tmp_path / "publish"
    build(live, "old")
    (live / "data" / "fr").mkdir()  # a file of the old build that the new one does not have
    (live / "data" / "fr" / "stale.parquet").write_bytes(b"x")
    staged = new_staging_dir(live)
    assert staged.parent == live.parent  # same filesystem: the swap is a rename
    build(staged, "new")
    swap_in(staged, live)
    assert folder_files(live)["README.md"] == b"new" and published_counts(live) == {"de": 3}
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
    assert published_counts(live) == {"de": 5}  # the gate still counts the live build
    recover(live)
    assert folder_files(live)["README.md"] == b"older" and not previous.exists()
