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

from chpit_assets.bench.frozen import record_published

from .candidate import Candidate
from .dataset import stage
from .errors import GateFailed
from .folder import new_staging_dir, swap_in
from .gate import GateReport
from .hub import HubTarget, upload


@dataclass
class Published:
    folder: Path
    files: dict[str, str]                  # relative path -> sha256
    commit_url: str | None                 # set when uploaded
    local_reason: str | None               # why it was not uploaded (None when it was)
    frozen_added: dict[str, int] = field(default_factory=dict)


def publish(candidate: Candidate, gate: GateReport, publish_dir: Path, *, hub: HubTarget | None,
            local_reason: str | None, frozen_dir: Path | str, load_name: str) -> Published:
    """Publish `candidate`; raises GateFailed, touching nothing, unless `gate` passed on it.

    `load_name` is what the card tells readers to pass to `load_dataset` (the repo id, or the
    folder); it is configuration, not where the folder happens to be, so the bytes stay the same."""
    if not gate.passed:
        raise GateFailed(gate.summary())
    if gate.candidate_digest != candidate.digest():
        raise GateFailed(f"the gate passed candidate {gate.candidate_digest[:12]}, not this one "
                         f"({candidate.digest()[:12]}): the build changed after the gate ran")
    staged = new_staging_dir(publish_dir)
    try:
        files = stage(candidate, staged, load_name)
        swap_in(staged, publish_dir)
    finally:
        shutil.rmtree(staged, ignore_errors=True)  # gone after a successful swap; a failed one leaves no litter
    if hub is None:
        return Published(publish_dir, files, None, local_reason)
    commit_url = upload(publish_dir, hub, f"CH-PiT build {candidate.build}")
    added = {lang: record_published(frozen_dir, lang, candidate.items[lang]) for lang in candidate.published_langs}
    return Published(publish_dir, files, commit_url, None, added)
