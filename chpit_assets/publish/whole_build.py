"""What the gate needs to refuse a build that is not whole and clean (issue 23 item 4).

A publication must come from a build where every edition with a file was parsed from its current
file, every system line was answered without an error, and every item carries its recite stamp.
These read the store and the results folder; the rules themselves are in `gate.py`.
"""

from __future__ import annotations

from pathlib import Path

from chpit_assets.corpus.ingest import PARSED
from chpit_assets.corpus.store import Store
from chpit_assets.runs.runner import read_jsonl

# 'no_file' is Fedlex listing no XML for an edition: recorded, not a failure of this build.
NOT_A_FAILURE = ("parsed", "no_file")


def failed_editions(store: Store) -> list[str]:
    """'<lang>: SR <n> <edition ELI> (<file>): <stage>: <error>' per edition that failed or was
    refused in the last ingest, including one kept on its last good file (empty = none)."""
    if not store.path.exists():
        return []
    rows = store.frame(
        "SELECT v.lang, c.sr_number, v.eli, v.stage, v.error, v.file_url, v.failed_stage, v.failed_error, "
        "v.failed_url FROM ch_act_version v JOIN ch_act c USING (act_id) "
        "WHERE v.stage NOT IN (?, ?) OR v.failed_stage IS NOT NULL "
        "ORDER BY v.lang, c.sr_number, v.date_applicability",
        list(NOT_A_FAILURE),
    )
    out = []
    for r in rows.iter_rows(named=True):
        if r["stage"] == PARSED:  # its new file failed; the stored text is an earlier file's
            out.append(
                f"{r['lang']}: SR {r['sr_number']} {r['eli']} ({r['failed_url']}): {r['failed_stage']}: "
                f"{r['failed_error']} (the last good file is kept, but this build is not on the current one)"
            )
        else:
            out.append(f"{r['lang']}: SR {r['sr_number']} {r['eli']} ({r['file_url']}): {r['stage']}: {r['error']}")
    return out


def errored_lines(results_dir: Path | str) -> list[str]:
    """'<system>/<lang>: <item id>: <error>' per scored result line with an error, every system."""
    root = Path(results_dir)
    out = []
    for path in sorted(root.rglob("*.scored.jsonl")):
        system = path.parent.relative_to(root).as_posix()
        lang = path.name.removesuffix(".scored.jsonl")
        out += [f"{system}/{lang}: {line.get('id')}: {line['error']}" for line in read_jsonl(path) if line.get("error")]
    return out
