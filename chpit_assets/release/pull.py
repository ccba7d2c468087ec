"""`release pull REPO --revision REV`: download a published release with huggingface_hub.

`HF_ENDPOINT` and `HF_TOKEN` are read when the pull runs (huggingface_hub reads its own copies
once, at import). Files land in `releases/{REV}/hub/`; huggingface_hub keeps its per-file metadata
there, so a second pull of the same commit downloads nothing and an interrupted one resumes
its partial files. `pull.json` then records the commit and every file's sha256, written
atomically after the last file: a pull that stopped half-way has no manifest, and `validate`
refuses it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from chpit_assets.files import write_atomic

from .errors import ReleaseError
from .layout import Release, checked_name, release_home

HF_METADATA = ".cache"  # huggingface_hub's own folder inside local_dir: not part of the release


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def release_files(folder: Path) -> dict[str, str]:
    """{relative path: sha256} of every release file in `folder`, sorted (huggingface_hub's metadata left out)."""
    return {
        path.relative_to(folder).as_posix(): sha256_file(path)
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.relative_to(folder).parts[0] != HF_METADATA
    }


def pull(repo_id: str, revision: str, root: Path | str) -> Release:
    """Download `repo_id` (a dataset) at `revision` into the data dir `root`; returns the release."""
    import httpx2  # huggingface_hub's HTTP client: a refused or dropped connection is one of its errors
    from huggingface_hub import HfApi, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    home = release_home(root) / checked_name(revision)
    release = Release(revision, home / "hub", home)
    endpoint = os.environ.get("HF_ENDPOINT") or None
    token = os.environ.get("HF_TOKEN") or None
    where = f"{endpoint or 'https://huggingface.co'}/datasets/{repo_id}@{revision}"
    try:
        # The tag is resolved once; every file is then fetched at that commit, so a tag moved
        # mid-pull cannot mix two releases.
        commit = HfApi(endpoint=endpoint, token=token).dataset_info(repo_id, revision=revision).sha
        if not commit:
            raise ReleaseError(where, "the Hub named no commit for this revision")
        snapshot_download(
            repo_id,
            repo_type="dataset",
            revision=commit,
            local_dir=release.files,
            cache_dir=Path(root) / "cache" / "huggingface",
            endpoint=endpoint,
            token=token,
        )
    except (HfHubHTTPError, LocalEntryNotFoundError, httpx2.HTTPError, OSError) as exc:
        raise ReleaseError(where, f"download failed ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
    manifest = {
        "repo_id": repo_id,
        "revision": revision,
        "commit": commit,
        "endpoint": endpoint or "https://huggingface.co",
        "files": release_files(release.files),
    }
    write_atomic(release.manifest_path, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return release
