"""What a publication would contain: the build's items per language, recite-stamped, plus the build
report and the report's results table. Read from the build's stable output files (ARCHITECTURE
"Outputs"), never from the DuckDB store, so publishing never waits on the writer."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chpit_assets.bench.files import jsonl_bytes
from chpit_assets.bench.items import bench_path
from chpit_assets.report.stamp import stamp_recite, with_stamp
from chpit_assets.runs.runner import read_jsonl, scored_path

from .errors import PublishError

BUILD_REPORT = "build-report.json"
REPORT_MD = "report.md"
RECITE = "recite"


@dataclass(frozen=True)
class Candidate:
    build_report: dict
    items: dict[str, list[dict]]  # every language asked for, in that order; [] when it has no items
    results_md: str | None  # the "## Results" table of report.md, None without a report

    @property
    def build(self) -> str:
        return self.build_report["build"]

    @property
    def published_langs(self) -> list[str]:
        """Languages with items: only these get a config and shards (an empty config would not load)."""
        return [lang for lang, items in self.items.items() if items]

    def core(self, lang: str) -> list[dict]:
        return [i for i in self.items[lang] if i.get("core") is True]

    def digest(self) -> str:
        """sha256 over everything the publication is made of, to tie a gate verdict to one candidate."""
        h = hashlib.sha256(json.dumps(self.build_report, sort_keys=True).encode())
        for lang, items in self.items.items():
            h.update(f"\n{lang}\n".encode() + jsonl_bytes(items))
        h.update((self.results_md or "").encode())
        return h.hexdigest()


def results_section(report_md: str) -> str | None:
    """The '## Results' section of report.md without its heading (the card's headline table)."""
    lines = report_md.splitlines()
    try:
        start = lines.index("## Results") + 1
    except ValueError:
        return None
    end = next((n for n in range(start, len(lines)) if lines[n].startswith("## ")), len(lines))
    return "\n".join(lines[start:end]).strip() or None


def load_candidate(
    build_dir: Path | str, results_dir: Path | str, report_dir: Path | str, langs: Sequence[str]
) -> Candidate:
    """The candidate for `langs`. A language missing from build-report.json has no items; one the
    report lists must have its bench-{lang}.jsonl. Items carry recite stamps where a scored recite
    run exists (card, "Fields": recite_label is stamped at publication)."""
    report_path = Path(build_dir) / BUILD_REPORT
    if not report_path.exists():
        raise PublishError(f"no build report at {report_path}: materialise build_report first")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    items: dict[str, list[dict]] = {}
    for lang in langs:
        if lang not in report:  # build-report.json has a section per built language (PROTOCOL §1)
            items[lang] = []
            continue
        path = bench_path(build_dir, lang)
        if not path.exists():
            raise PublishError(f"build-report.json lists {lang} but {path} is missing: materialise bench_items[{lang}]")
        recite = scored_path(results_dir, RECITE, lang)
        log = {line["id"]: line for line in read_jsonl(recite)} if recite.exists() else {}
        # Build items carry no recite fields (PROTOCOL §9); every published row has both, null where
        # no recite run measured the item.
        items[lang] = [
            i if "recite_label" in i else with_stamp(i, None, None) for i in stamp_recite(read_jsonl(path), log)
        ]
    md = Path(report_dir) / REPORT_MD
    return Candidate(report, items, results_section(md.read_text(encoding="utf-8")) if md.exists() else None)
