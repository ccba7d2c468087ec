"""One publication, in order: the gate must have passed on this very candidate; stage next to the
live folder; swap; upload when configured; then grow the frozen record (B18).

The frozen record grows only after an upload succeeded: an item is frozen once it is public. A
local-only publication (no token or repo id) is a rehearsal -- recording it would pin dev builds
into `frozen/`, which is committed to git.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from chpit_assets.bench.frozen import record_published

from .candidate import Candidate
from .dataset import shard_path, stage
from .errors import GateFailed
from .folder import new_staging_dir, swap_in
from .gate import GateReport
from .hub import HubTarget, upload
from .oracle import content_hash


@dataclass
class Published:
    folder: Path
    files: dict[str, str]  # relative path -> sha256
    commit_url: str | None  # set when uploaded
    local_reason: str | None  # why it was not uploaded (None when it was)
    frozen_added: dict[str, int] = field(default_factory=dict)


def publish(
    candidate: Candidate,
    gate: GateReport,
    publish_dir: Path,
    *,
    hub: HubTarget | None,
    local_reason: str | None,
    frozen_dir: Path | str,
    load_name: str,
) -> Published:
    """Publish `candidate`; raises GateFailed, touching nothing live, unless `gate` passed on it and
    the staged shards hold exactly what the gate's oracle checked. Call it holding
    `folder.publisher_lock`, after `folder.recover`.

    `load_name` is what the card tells readers to pass to `load_dataset` (the repo id, or the
    folder); it is configuration, not where the folder happens to be, so the bytes stay the same."""
    if not gate.passed:
        raise GateFailed(gate.summary())
    if gate.candidate_digest != candidate.digest():
        raise GateFailed(
            f"the gate passed candidate {gate.candidate_digest[:12]}, not this one "
            f"({candidate.digest()[:12]}): the build changed after the gate ran"
        )
    staged = new_staging_dir(publish_dir)
    try:
        files = stage(candidate, staged, load_name)
        mismatch = staged_mismatch(staged, gate.checked)
        if mismatch:
            raise GateFailed(f"the staged publication is not what the gate checked: {'; '.join(mismatch)}")
        swap_in(staged, publish_dir)
    finally:
        shutil.rmtree(staged, ignore_errors=True)  # gone after a successful swap; a failed one leaves no litter
    if hub is None:
        return Published(publish_dir, files, None, local_reason)
    commit_url = upload(publish_dir, hub, f"CH-PiT build {candidate.build}")
    added = {lang: record_published(frozen_dir, lang, candidate.items[lang]) for lang in candidate.published_langs}
    return Published(publish_dir, files, commit_url, None, added)


def staged_mismatch(staged: Path, checked: dict[str, str]) -> list[str]:
    """Why the staged shards differ from what the gate's oracle looked up (empty = they hold exactly
    it): the bytes about to go live are read back, so no step between the check and the swap can
    change an item unnoticed (issue 15 point 1)."""
    out = []
    shard_langs = sorted(p.name for p in (staged / "data").iterdir()) if (staged / "data").exists() else []
    out += [f"{lang}: published but never checked" for lang in shard_langs if lang not in checked]
    for lang, digest in checked.items():
        full_path = staged / shard_path(lang, "full")
        if not full_path.exists():
            if digest != content_hash([]):
                out.append(f"{lang}: checked items have no shard")
            continue
        full = pq.read_table(full_path).to_pylist()
        if content_hash(full) != digest:
            out.append(f"{lang}: {shard_path(lang, 'full')} differs from the items the oracle checked")
        if pq.read_table(staged / shard_path(lang, "core")).to_pylist() != [i for i in full if i["core"] is True]:
            out.append(f"{lang}: {shard_path(lang, 'core')} is not the core of the checked items")
    return out
