"""Is a release folder the whole, untouched release? (issue 24 item 1)

Every check names the file it failed on (a ReleaseError), and the first failure stops the
validation: nothing of a bad release reaches a run. In order:
1. every file of the published layout is there, and (for a pulled release) every file still has
   the sha256 recorded at the pull -- a changed, added or removed file is named;
2. per language, `raw/bench-{lang}.jsonl` holds the build report's item count and
   `raw/core-{lang}.jsonl` its core count, within the caps it declares (v2026.09 fills them: 5,000
   and 500), ids unique across the release;
3. the core flags: `core: true` on exactly the bench items listed in core-{lang}.jsonl, and each core
   line agrees with its bench line (COMPARED);
4. the parquet shards hold the same items as the raw files (ids, order, core flags, texts);
5. every item's gold has a unit the distractor lacks (B12), and our oracle -- the gold text
   itself, scored by our scorer -- is grounded_correct on every core item (R1: 1.000).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping

from chpit_assets.bench.validate import without_discriminating_unit
from chpit_scorer import GROUNDED_CORRECT, score

from .errors import ReleaseError
from .layout import BUILD_REPORT, LANGS, REQUIRED, Release, raw, shard
from .pull import release_files

# What a copy of an item (its core line, its parquet row) must agree on; a date is compared as ISO
# text, so a shard that stores dates as dates reads the same as the jsonl's strings.
COMPARED = ("id", "core", "as_of", "kind", "question", "gold.text", "distractor.text", "gold.version_id")


def _field(item: Mapping, name: str) -> object:
    value: object = item
    for part in name.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value.isoformat() if hasattr(value, "isoformat") else value


def _differing(a: Mapping, b: Mapping) -> str | None:
    return next((name for name in COMPARED if _field(a, name) != _field(b, name)), None)


def read_items(release: Release, rel: str) -> list[dict]:
    path = release.path(rel)
    items = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise ReleaseError(rel, f"line {n} is not JSON ({exc})") from None
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise ReleaseError(rel, f"line {n} is not an item with an id")
            items.append(item)
    return items


def _check_files(release: Release) -> None:
    missing = [rel for rel in REQUIRED if not release.path(rel).is_file()]
    if missing:
        raise ReleaseError(
            missing[0], f"missing from the release ({len(missing)} files missing: {', '.join(missing[:4])})"
        )
    manifest = release.manifest()
    if manifest is None:
        return  # a folder downloaded by other means: nothing recorded to compare with
    now, then = release_files(release.files), manifest["files"]
    for rel in sorted(then.keys() | now.keys()):
        if rel not in now:
            raise ReleaseError(rel, "recorded at the pull but no longer in the release folder")
        if rel not in then:
            raise ReleaseError(rel, "not part of the pulled release (added after the pull)")
        if now[rel] != then[rel]:
            raise ReleaseError(rel, f"changed since the pull: sha256 {now[rel][:12]}..., pulled {then[rel][:12]}...")


def _expected_counts(report: Mapping, lang: str) -> tuple[int, int]:
    """The language's bench and core counts as the build report declares them, within its caps
    (`caps.per_lang_cap`, `caps.core_per_lang`: v2026.09 fills both, 5,000 and 500; 0 = no cap)."""
    try:
        declared = (int(report[lang]["items"]), int(report[lang]["core"]["items"]))
        caps = report.get("caps") or {}
        limits = (int(caps.get("per_lang_cap") or 0), int(caps.get("core_per_lang") or 0))
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ReleaseError(BUILD_REPORT, f"no {lang}.items / {lang}.core.items counts") from None
    if any(limit and n > limit for n, limit in zip(declared, limits)) or declared[1] > declared[0]:
        raise ReleaseError(
            BUILD_REPORT, f"{lang}: {declared[0]}/{declared[1]} items, beyond the caps {limits[0]}/{limits[1]}"
        )
    return declared


def _check_parquet(release: Release, rel: str, expected: list[dict]) -> None:
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(release.path(rel)).to_pylist()
    except Exception as exc:  # pyarrow raises several types for a damaged file
        raise ReleaseError(rel, f"not a readable parquet file ({type(exc).__name__}: {exc})") from None
    if [r.get("id") for r in rows] != [i["id"] for i in expected]:
        raise ReleaseError(rel, f"holds {len(rows)} items, not the {len(expected)} of its raw file in the same order")
    for row, item in zip(rows, expected):
        differing = _differing(row, item)
        if differing:
            raise ReleaseError(rel, f"item {item['id']}: {differing} differs from the raw file")


def validate_release(release: Release) -> dict:
    """The checks above; returns `{lang: {items, core}}` of a release that passed all of them."""
    _check_files(release)
    try:
        report = json.loads(release.path(BUILD_REPORT).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ReleaseError(BUILD_REPORT, f"not JSON ({exc})") from None
    seen: Counter = Counter()
    summary = {}
    for lang in LANGS:
        n_items, n_core = _expected_counts(report, lang)
        bench, core = read_items(release, raw("bench", lang)), read_items(release, raw("core", lang))
        if len(bench) != n_items:
            raise ReleaseError(raw("bench", lang), f"{len(bench)} items, the build report says {n_items}")
        if len(core) != n_core:
            raise ReleaseError(raw("core", lang), f"{len(core)} items, the build report says {n_core}")
        seen.update(i["id"] for i in bench)
        twice = [i for i, n in seen.items() if n > 1]
        if twice:
            raise ReleaseError(raw("bench", lang), f"duplicate item ids, e.g. {twice[:3]}")
        by_id = {i["id"]: i for i in bench}
        flagged = sorted(i["id"] for i in bench if i.get("core") is True)
        if flagged != sorted(i["id"] for i in core):
            wrong = sorted(set(flagged) ^ {i["id"] for i in core})
            raise ReleaseError(raw("bench", lang), f"core flags differ from {raw('core', lang)}, e.g. {wrong[:3]}")
        for item in core:
            differing = _differing(item, by_id[item["id"]])
            if differing:
                raise ReleaseError(
                    raw("core", lang), f"item {item['id']}: {differing} differs from {raw('bench', lang)}"
                )
        _check_parquet(release, shard(lang, "full"), bench)
        _check_parquet(release, shard(lang, "core"), core)
        lacking = without_discriminating_unit(bench)
        if lacking:
            raise ReleaseError(raw("bench", lang), f"{len(lacking)} items without a gold-only unit, e.g. {lacking[:3]}")
        for item in core:
            gold = item["gold"]["text"]
            if score(gold, gold, item["distractor"]["text"]).label != GROUNDED_CORRECT:
                raise ReleaseError(
                    raw("core", lang), f"item {item['id']}: our oracle (its gold) does not score grounded_correct"
                )
        summary[lang] = {"items": len(bench), "core": len(core)}
    return summary


def core_items(release: Release) -> dict[str, list[dict]]:
    """The validated core per language, in id order (what a run on the release asks)."""
    return {lang: sorted(read_items(release, raw("core", lang)), key=lambda i: i["id"]) for lang in LANGS}
