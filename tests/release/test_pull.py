"""Issue 24 items 1 and 5: pull a release with the real huggingface_hub client from a loopback Hub,
validate it, refuse a bad one naming the file."""

from __future__ import annotations

import json

import pytest

from chpit_assets.release import ReleaseError, open_release, pull, validate_release
from chpit_assets.release.pull import sha256_file

from .conftest import REPO
from .factory import REVISION, build_release
from .hub import COMMIT


def test_pull_downloads_every_file_records_sha256_and_validates(hub, published, root):
    release = pull(REPO, REVISION, root)
    assert release.files == root / "releases" / REVISION / "hub"
    manifest = release.manifest()
    assert (manifest["repo_id"], manifest["revision"], manifest["commit"]) == (REPO, REVISION, COMMIT)
    served = hub.files()
    assert sorted(manifest["files"]) == sorted(served)
    for rel, data in served.items():
        assert (release.files / rel).read_bytes() == data
        assert manifest["files"][rel] == sha256_file(published / rel)
    assert all(auth == "Bearer hf_test_token" for _, _, auth in hub.requests)  # HF_TOKEN honoured
    assert validate_release(release) == {lang: {"items": 8, "core": 4} for lang in ("de", "fr", "it")}
    assert open_release(f"release:{REVISION}", root) == release


def test_a_second_pull_downloads_nothing_again(hub, root):
    pull(REPO, REVISION, root)
    first = [r for r in hub.requests if r[0] == "GET" and "/resolve/" in r[1]]
    hub.requests.clear()
    pull(REPO, REVISION, root)
    assert first and not [r for r in hub.requests if r[0] == "GET" and "/resolve/" in r[1]]


def test_a_dropped_download_is_fetched_again_whole(hub, published, root):
    """The connection drops after 100 bytes: huggingface_hub asks again (from the bytes it kept, with
    a Range, once a chunk is on disk: 10 MB, more than this file) and the file is whole."""
    rel = "data/de/full-00000.parquet"
    hub.cut_after[rel] = 100
    release = pull(REPO, REVISION, root)
    assert len([r for r in hub.requests if r[0] == "GET" and r[1].endswith(rel)]) == 2
    assert (release.files / rel).read_bytes() == (published / rel).read_bytes()
    assert validate_release(release)["de"] == {"items": 8, "core": 4}


def test_a_failed_pull_writes_no_manifest_and_the_folder_never_validates(hub, root):
    hub.close()  # the Hub goes away before the pull
    with pytest.raises(ReleaseError, match="download failed"):
        pull(REPO, REVISION, root)
    assert not (root / "releases" / REVISION / "pull.json").exists()


def test_an_unknown_revision_is_a_release_error_naming_it(hub, root):
    with pytest.raises(ReleaseError, match="v1999.01.*download failed"):
        pull(REPO, "v1999.01", root)


def _tamper_line(path, item_id, change):
    lines = [json.loads(l) for l in path.read_text().splitlines()]
    for line in lines:
        if line["id"] == item_id:
            change(line)
    path.write_text("".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines))


def _gold(line):
    line["gold"]["text"] = line["gold"]["text"].replace("Tage", "Wochen")


@pytest.mark.parametrize(
    "tamper, named",
    [
        (lambda f, i: _tamper_line(f / "raw/core-de.jsonl", i, _gold), "raw/core-de.jsonl"),
        (lambda f, i: (f / "data/fr/core-00000.parquet").unlink(), "data/fr/core-00000.parquet"),
        (lambda f, i: _tamper_line(f / "raw/bench-de.jsonl", i, lambda l: l.update(core=False)), "raw/bench-de.jsonl"),
    ],
    ids=["changed gold text", "missing shard", "wrong core flag"],
)
def test_a_tampered_release_is_refused_naming_the_file(tmp_path, root, tamper, named):
    """Downloaded by other means (release-dir:), so no pull record: the content checks catch it."""
    folder = tmp_path / "other"
    first = build_release(folder)["de"][0]["id"]
    tamper(folder, first)
    with pytest.raises(ReleaseError) as err:
        validate_release(open_release(f"release-dir:{folder}", root))
    assert err.value.file == named


def test_a_file_changed_after_the_pull_is_named_by_its_sha256(hub, root):
    release = pull(REPO, REVISION, root)
    (release.files / "README.md").write_text("edited\n")
    with pytest.raises(ReleaseError, match="README.md: changed since the pull"):
        validate_release(release)


def test_counts_beyond_the_declared_caps_are_refused(tmp_path, root):
    folder = tmp_path / "v"
    build_release(folder)
    report = json.loads((folder / "build-report.json").read_text())
    report["caps"]["core_per_lang"] = 3
    (folder / "build-report.json").write_text(json.dumps(report))
    with pytest.raises(ReleaseError, match="build-report.json: de: 8/4 items, beyond the caps 8/3"):
        validate_release(open_release(f"release-dir:{folder}", root))


def test_a_parquet_row_whose_text_differs_from_the_raw_file_is_named(tmp_path, root):
    from chpit_assets.publish.dataset import parquet_bytes

    folder = tmp_path / "v"
    core = build_release(folder)["fr"]
    core[1] = {**core[1], "distractor": {**core[1]["distractor"], "text": "1 Autre texte entièrement différent ici."}}
    (folder / "data/fr/core-00000.parquet").write_bytes(parquet_bytes(core))
    with pytest.raises(
        ReleaseError, match=f"data/fr/core-00000.parquet: item {core[1]['id']}: distractor.text differs"
    ):
        validate_release(open_release(f"release-dir:{folder}", root))


def test_a_short_raw_file_is_named(tmp_path, root):
    folder = tmp_path / "v"
    build_release(folder)
    path = folder / "raw/bench-it.jsonl"
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(ReleaseError, match="raw/bench-it.jsonl: 7 items, the build report says 8"):
        validate_release(open_release(f"release-dir:{folder}", root))
