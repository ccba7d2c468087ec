"""Editions still served from their last good file (issue 15 point 3, the gate's side).

The gate does not block on them -- keeping the last good parse is the point -- but it says how
many there are and which, so a publication built partly from an earlier file is visibly so. The
query is the ingest's (`corpus.ingest.last_good_editions`); this only words it for the metadata.
"""

from __future__ import annotations

from chpit_assets.corpus.ingest import last_good_editions
from chpit_assets.corpus.store import Store


def editions_on_last_good_file(store: Store) -> list[str]:
    """'<lang>: SR <n> <edition ELI>: ...' per edition whose new file failed (empty = none)."""
    if not store.path.exists():
        return []
    return [
        f"{r['lang']}: SR {r['sr_number']} {r['eli']}: new file failed at {r['failed_stage']} "
        f"({r['failed_url']}); the last good file is kept"
        for r in last_good_editions(store).iter_rows(named=True)
    ]
