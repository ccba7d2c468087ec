"""Where a release lives, and what its files are (the published layout, issue 24).

A pulled release goes under the data dir, apart from our own build and its results:

    {data}/releases/{name}/hub/          the files as published (README.md, data/, raw/, results/, ...)
    {data}/releases/{name}/pull.json     repo, revision, commit and every file's sha256, as pulled
    {data}/releases/{name}/results/      our runs on its core ({system}/{lang}.jsonl)
    {data}/releases/{name}/report/       our report beside the published rows

`name` is the revision for `release:REV`; a folder downloaded by other means (`release-dir:PATH`)
is read in place and its runs go to `releases/dir-{hash of the path}/`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import ReleaseError

LANGS = ("de", "fr", "it")
SPLITS = ("core", "full")
CARD = "README.md"
BUILD_REPORT = "build-report.json"
MANIFEST = "pull.json"
MCP_CACHE = "mcp-cache.jsonl"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def shard(lang: str, split: str) -> str:
    return f"data/{lang}/{split}-00000.parquet"


def raw(split: str, lang: str) -> str:
    """`raw/core-{lang}.jsonl` (the core), `raw/bench-{lang}.jsonl` (every item)."""
    return f"raw/{split}-{lang}.jsonl"


REQUIRED = (
    CARD,
    BUILD_REPORT,
    *(shard(lang, split) for lang in LANGS for split in SPLITS),
    *(raw(split, lang) for lang in LANGS for split in ("core", "bench")),
)


def release_home(root: Path | str) -> Path:
    """`{data}/releases`: computed from the data dir (ChpitStore().root), beside build/ and results/."""
    return Path(root) / "releases"


@dataclass(frozen=True)
class Release:
    """One release on disk: `files` holds the published files, `home` our pull record, runs and report."""

    name: str
    files: Path
    home: Path

    @property
    def results_dir(self) -> Path:
        return self.home / "results"

    @property
    def report_dir(self) -> Path:
        return self.home / "report"

    @property
    def manifest_path(self) -> Path:
        return self.home / MANIFEST

    def manifest(self) -> dict | None:
        return json.loads(self.manifest_path.read_text(encoding="utf-8")) if self.manifest_path.exists() else None

    def published_results(self) -> Path | None:
        """`results/{revision}/` of the release (the one holding report-all.json), None when absent."""
        found = sorted(p.parent for p in (self.files / "results").glob("*/report-all.json"))
        return found[-1] if found else None

    def path(self, rel: str) -> Path:
        return self.files / rel


def checked_name(name: str) -> str:
    if not _NAME.match(name) or ".." in name:
        raise ReleaseError(name, "not a release name (letters, digits, '.', '_', '-')")
    return name


def open_release(spec: str, root: Path | str) -> Release:
    """`release:REV` (pulled into the data dir) or `release-dir:PATH` (any folder in the published
    layout); a ReleaseError when it is not there."""
    kind, sep, value = spec.partition(":")
    if not sep or not value or kind not in ("release", "release-dir"):
        raise ReleaseError(spec, "expected release:REVISION or release-dir:PATH")
    if kind == "release":
        home = release_home(root) / checked_name(value)
        release = Release(value, home / "hub", home)
        if not release.files.is_dir():
            raise ReleaseError(
                str(release.files),
                f"release {value} is not pulled: python -m chpit_assets release pull REPO --revision {value}",
            )
        return release
    files = Path(value).resolve()
    if not files.is_dir():
        raise ReleaseError(str(files), "no such folder")
    digest = hashlib.sha256(str(files).encode("utf-8")).hexdigest()[:12]
    return Release(f"dir-{digest}", files, release_home(root) / f"dir-{digest}")
