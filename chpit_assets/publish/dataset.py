"""The published folder (R5): `data/{lang}/{core,full}-00000-of-00001.parquet` and README.md, the card.

Deterministic bytes: the parquet writer's options are pinned (codec, level, page and row-group
layout, statistics, no page index) and nothing written carries a clock, so the same candidate
always gives byte-identical files -- a republication that changed nothing changes no file, and
two publications can be compared with sha256.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from chpit_assets.bench.items import LICENCE, SOURCE
from chpit_assets.faults import kill_point
from chpit_assets.files import write_atomic
from chpit_assets.markdown import table_lines

from .candidate import Candidate
from .errors import PublishError
from .schema import ARROW_SCHEMA, EDITION_FIELDS, ITEM_FIELDS

SPLITS = ("core", "full")
CARD = "README.md"

# Pinned so the bytes depend on the data alone (and the pinned pyarrow, which names itself in created_by).
_PARQUET_OPTIONS = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 9,
    "use_dictionary": True,
    "write_statistics": True,
    "data_page_version": "1.0",
    "data_page_size": 1 << 20,
    "use_compliant_nested_type": True,
    "store_schema": True,
    "write_page_index": False,
    "write_page_checksum": False,
}


def shard_path(lang: str, split: str) -> str:
    """The shard's path inside the published folder; matches the card's `data/{lang}/{split}-*.parquet`."""
    return f"data/{lang}/{split}-00000-of-00001.parquet"


def parquet_bytes(items: list[dict]) -> bytes:
    """The items as one parquet file with `ARROW_SCHEMA` (nested editions as structs), one row group."""
    table = pa.Table.from_pylist(items, schema=ARROW_SCHEMA)
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=max(1, table.num_rows), **_PARQUET_OPTIONS)
    return sink.getvalue()


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M"


def _yaml_header(candidate: Candidate) -> list[str]:
    langs = candidate.published_langs
    out = [
        "---",
        "license: other",
        "license_name: fedlex-open-data",
        "license_link: https://www.fedlex.admin.ch/",
        "language:",
        *[f"- {lang}" for lang in langs],
        "task_categories:",
        "- question-answering",
        "pretty_name: Swiss Point-in-Time Law (CH-PiT)",
        "size_categories:",
        f"- {_size_category(sum(len(candidate.items[lang]) for lang in langs))}",
        "tags:",
        *[f"- {t}" for t in ("legal", "swiss-law", "point-in-time", "benchmark", "fedlex")],
        "configs:",
    ]
    for n, lang in enumerate(langs):
        out.append(f"- config_name: {lang}")
        if n == 0:
            out.append("  default: true")
        out.append("  data_files:")
        for split in SPLITS:
            out += [f"  - split: {split}", f"    path: data/{lang}/{split}-*.parquet"]
    return [*out, "---"]


def _type_name(kind: str | dict) -> str:
    if isinstance(kind, dict):
        return "struct (see below)"
    base = {"str": "string", "int": "integer", "bool": "boolean", "date": "string (ISO date)"}[kind.rstrip("?")]
    return f"{base} or null" if kind.endswith("?") else base


def render_card(candidate: Candidate, load_name: str) -> str:
    """README.md: YAML `configs` per language with items, then the card text (no clock: deterministic).

    A language without items has no config and no shards (an empty config would not load); it is
    listed in the tables with 0 and named in the text, so a reader sees it was built, not forgotten."""
    report, langs = candidate.build_report, candidate.published_langs
    if not langs:
        raise PublishError("no language has items: there is nothing to publish")
    empty = [lang for lang in candidate.items if lang not in langs]
    built = f"Build `{candidate.build}`" + (f", {report['built_at']}" if report.get("built_at") else "")
    counts = ", ".join(f"{lang}: {len(candidate.items[lang])} (core {len(candidate.core(lang))})" for lang in langs)
    out = [
        *_yaml_header(candidate),
        "",
        "# Swiss Point-in-Time Law (CH-PiT)",
        "",
        f"{built}. Items per language: {counts}.",
    ]
    if empty:
        out.append(f"No items in this build for {', '.join(empty)}: those languages have no config and no files.")
    summary = (
        "CH-PiT asks whether an answer is grounded in the version of a Swiss federal article that was "
        "actually in force on the date asked: every item pairs the edition valid on `as_of` (gold) with the "
        "adjacent edition (distractor) of the same article."
    )
    licence = (
        "Every item is derived from Fedlex, the Swiss federal law portal (fedlex.admin.ch): consolidated "
        f'Akoma Ntoso XML editions of federal acts; every item\'s `source` reads "{SOURCE}". '
        "Fedlex data may be reused free of charge, provided the source is "
        f'acknowledged ("{LICENCE}" -- the licence note stamped on every item\'s `licence` field). This card '
        "and every item's `source` and `licence` fields carry that attribution forward. See "
        "https://www.fedlex.admin.ch/ for Fedlex's own terms."
    )
    out += [
        "",
        f'Load with `load_dataset("{load_name}", "{langs[0]}", split="core")`; `split="full"` gives every item.',
        "",
        summary,
        "",
        "## Source and licence",
        "",
        licence,
        "",
        "## Build report",
        "",
    ]
    rows = [
        [
            lang,
            report.get(lang, {}).get("changes_considered", 0),
            report.get(lang, {}).get("selected", 0),
            len(candidate.items[lang]),
            len(candidate.core(lang)),
            sum(i["build"] == candidate.build for i in candidate.items[lang]),
        ]
        for lang in candidate.items
    ]
    out += table_lines(["lang", "changes considered", "changes selected", "items", "core", "new in this build"], rows)
    # `skipped` holds the reasons that occurred, in the order the builder met them (PROTOCOL §1).
    reasons = list(dict.fromkeys(r for lang in candidate.items for r in report.get(lang, {}).get("skipped", {})))
    out += ["", "Changes not turned into items, by reason (build-report.json):", ""]
    out += table_lines(
        ["reason", *candidate.items],
        [[r, *(report.get(lang, {}).get("skipped", {}).get(r, 0) for lang in candidate.items)] for r in reasons],
    )
    out += ["", "## Results on core", ""]
    out += [candidate.results_md] if candidate.results_md else ["No results were reported with this build."]
    out += ["", "## Fields", ""]
    out += table_lines(["field", "type"], [[f"`{k}`", _type_name(v)] for k, v in ITEM_FIELDS.items()])
    out += ["", "`gold` and `distractor` share one shape:", ""]
    out += table_lines(["field", "type"], [[f"`{k}`", _type_name(v)] for k, v in EDITION_FIELDS.items()])
    return "\n".join(out) + "\n"


def stage(candidate: Candidate, folder: Path, load_name: str) -> dict[str, str]:
    """Write the whole publication into `folder` (empty); returns {relative path: sha256}."""
    files: dict[str, bytes] = {CARD: render_card(candidate, load_name).encode("utf-8")}
    for lang in candidate.published_langs:
        files[shard_path(lang, "core")] = parquet_bytes(candidate.core(lang))
        files[shard_path(lang, "full")] = parquet_bytes(candidate.items[lang])
    for rel, data in files.items():
        write_atomic(folder / rel, data)
        kill_point("publish.dataset_write")  # a half-staged folder: the harness checks it never goes live
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(files.items())}
