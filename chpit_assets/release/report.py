"""Our numbers beside the published rows (issue 24 item 3).

`published_scored(release, rescore=...)` reads the release's published run logs
(`results/{rev}/results-*.jsonl`) and joins each line with its core item, keeping the stored
verdict or re-scoring the answer with our scorer. `rescore_check` compares the two: the
`report-all.json` our scorer gives from the published answers must equal the published file,
number for number, on every key the file has (a log it leaves out, like the oracle's, is named in
`not_in_published`; a split only ours computes is not compared); every item whose verdict our
scorer changes is listed.

`write_release_report` writes, into the release's report folder, `report-all.json`,
`results-tables.md` and `summary.md` in the published shapes with the published rows (as
published) and the user's rows (from the release's own results folder) in one table, plus
`rescore.json` (the check above) and `ours-vs-published.json`: for a system the user ran that the
release also has (recite on a release, say), the table keeps the published row and this file
lists every item where our verdict differs from the published one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from chpit_assets.files import write_atomic
from chpit_assets.report.published import report_all, report_all_json, write_published
from chpit_assets.runs.runner import ITEM_FIELDS, load_log, read_log, results_path, verdict_of, winners
from chpit_assets.runs.systems import our_key

from .errors import ReleaseError
from .layout import LANGS, Release
from .validate import core_items


def _items_by_id(release: Release) -> dict[str, dict]:
    return {item["id"]: item for items in core_items(release).values() for item in items}


def _published_folder(release: Release) -> Path:
    folder = release.published_results()
    if folder is None:
        raise ReleaseError("results/", "the release has no published results (no results/*/report-all.json)")
    return folder


def published_scored(release: Release, *, rescore: bool) -> dict[str, list[dict]]:
    """{our system key: scored lines} of the published logs, item fields joined in."""
    folder = _published_folder(release)
    items = _items_by_id(release)
    out: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("results-*.jsonl")):
        rel = path.relative_to(release.files).as_posix()
        for n, line in enumerate(read_log(path), 1):
            item = items.get(line["id"])
            if item is None:
                raise ReleaseError(rel, f"line {n}: item {line['id']!r} is not in the release's core")
            verdict = verdict_of(line.get("answer"), item) if rescore else line["verdict"]
            joined = {**{k: item.get(k) for k in ITEM_FIELDS}, **line, "verdict": verdict}
            out.setdefault(our_key(line["system"]), []).append(joined)
    return out


def _differences(published: object, ours: object, where: str = "") -> list[str]:
    """JSON paths of the published report whose value ours does not give exactly. Driven by the
    published keys: a key only ours has (the hard-from split of a report made without it) is not a
    difference."""
    if isinstance(published, dict) and isinstance(ours, dict):
        return [d for k in published for d in _differences(published[k], ours.get(k), f"{where}/{k}")]
    return [] if published == ours else [where or "/"]


def rescore_check(release: Release) -> dict:
    """Our scorer over the published answers against the published report-all.json."""
    folder = _published_folder(release)
    stored, ours = published_scored(release, rescore=False), published_scored(release, rescore=True)
    published = json.loads((folder / "report-all.json").read_text(encoding="utf-8"))
    items = []
    for key in sorted(stored):
        for before, after in zip(stored[key], ours[key]):
            if before["verdict"] != after["verdict"]:
                items.append(
                    {
                        "system": before["system"],
                        "id": before["id"],
                        "published": before["verdict"]["label"],
                        "ours": after["verdict"]["label"],
                    }
                )
    computed = json.loads(report_all_json(report_all(ours, file_order=True)))
    # A log the published report leaves out (v2026.09's table has no oracle row) is not compared.
    left_out = sorted(
        f"{lang}/{system}"
        for lang, systems in computed.items()
        if lang != "tools"
        for system in systems
        if system not in published.get(lang, {})
    )
    numbers = _differences(published, computed)
    return {
        "reproduced": not numbers,
        "differing_numbers": numbers,
        "differing_items": items,
        "not_in_published": left_out,
    }


def our_scored(release: Release) -> dict[str, list[dict]]:
    """{system: scored lines} of the user's runs on this release (winner per item, re-scored), named
    as the published rows are (`{model_short}/{mode}`), so a system the release also has meets it."""
    items = core_items(release)
    out: dict[str, list[dict]] = {}
    for path in sorted(release.results_dir.rglob("*.jsonl")):
        if path.name.count(".") != 1 or path.stem not in LANGS:
            continue  # {lang}.jsonl only
        key = path.parent.relative_to(release.results_dir).as_posix()
        log = load_log(results_path(release.results_dir, key, path.stem))
        for item in items[path.stem]:
            line = log.get(item["id"])
            if line is not None:
                joined = {**{k: item.get(k) for k in ITEM_FIELDS}, **line, "verdict": verdict_of(line["answer"], item)}
                out.setdefault(our_key(line["system"]), []).append(joined)
    return out


def _versus(published: Mapping[str, list[dict]], ours: Mapping[str, list[dict]]) -> dict:
    out = {}
    for key in sorted(published.keys() & ours.keys()):
        theirs = winners(published[key])
        out[key] = [
            {"id": i, "published": theirs[i]["verdict"]["label"], "ours": line["verdict"]["label"]}
            for i, line in sorted(winners(ours[key]).items())
            if i in theirs and theirs[i]["verdict"]["label"] != line["verdict"]["label"]
        ]
    return out


def write_release_report(release: Release) -> dict[str, Path]:
    published = published_scored(release, rescore=False)
    ours = our_scored(release)
    combined = {**ours, **published}  # a system the release has keeps its published row
    paths = write_published(combined, release.report_dir)
    for name, body in (("rescore.json", rescore_check(release)), ("ours-vs-published.json", _versus(published, ours))):
        paths[name] = release.report_dir / name
        write_atomic(paths[name], (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return paths
