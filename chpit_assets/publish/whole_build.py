"""What the gate needs to refuse a build that is not whole and clean (issue 23 item 4).

A publication must come from a build where every edition with a file was parsed from its current
file, every system line was answered without an error, and every item carries its recite stamp.
These read the store and the results folder; the rules themselves are in `gate.py`.

A point-in-time tool's miss (no such act, article or edition: `pit.errors.ToolMiss`) recorded as a
line's error is that system's answer, not a failure to run it: the card says recite_label is null
"where the tool could not resolve the article", and a model-free citing system that asks for an
article today's edition no longer has is simply wrong on that item. A missing search index is no
such answer: it is a build that is not whole.
"""

from __future__ import annotations

from pathlib import Path

from chpit_assets.corpus.ingest import PARSED
from chpit_assets.corpus.store import Store
from chpit_assets.pit.errors import NoSearchIndex, ToolMiss
from chpit_assets.runs.runner import read_jsonl, scored_path

from .candidate import RECITE

# 'no_file' is Fedlex listing no XML for an edition: recorded, not a failure of this build.
NOT_A_FAILURE = ("parsed", "no_file")


def _subclasses(cls: type) -> list[type]:
    subs: list[type] = cls.__subclasses__()
    return [c for sub in subs for c in (sub, *_subclasses(sub))]


# How a runner records an exception on a line: "<Type>: <message>" (runner._timed_answer).
_TOOL_MISSES = tuple(f"{c.__name__}: " for c in _subclasses(ToolMiss) if not issubclass(c, NoSearchIndex))


def is_failure(error: str | None) -> bool:
    """Whether a line's error means the system could not run the item (not a tool's miss)."""
    return bool(error) and not str(error).startswith(_TOOL_MISSES)


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
        out += [
            f"{system}/{lang}: {line.get('id')}: {line['error']}"
            for line in read_jsonl(path)
            if is_failure(line.get("error"))
        ]
    return out


def unstamped(items: dict[str, list[dict]], results_dir: Path | str) -> list[str]:
    """'<lang>: <item id>: ...' per item to publish that a language's recite run did not stamp: no
    line for it, or a line that failed (a tool's miss is the card's legitimate null). A language with
    no recite run at all is not listed: its stamps are null throughout, as the card allows for
    items no recite run measured (the CLI's model-only runs); one with a run must cover every item."""
    out = []
    for lang, lang_items in items.items():
        path = scored_path(results_dir, RECITE, lang)
        if not lang_items or not path.exists():
            continue
        log = {line["id"]: line for line in read_jsonl(path)}
        for item in lang_items:
            line = log.get(item.get("id"))
            if line is None:
                out.append(f"{lang}: {item.get('id')}: no recite line, so no recite stamp")
            elif is_failure(line.get("error")):
                out.append(f"{lang}: {item.get('id')}: recite line failed ({line['error']}), so no recite stamp")
    return out
