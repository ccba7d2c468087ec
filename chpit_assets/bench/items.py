"""Eligible changes -> benchmark items: halves (B13), caps and sampling (B14, B15),
ids (B17), frozen items (B18), questions (B19), core flags (B16).

A language's items depend only on the store's rows for that language, its frozen
record and the settings: nothing here reads another language, so bench-fr.jsonl is
byte-identical whether French is built alone or with German and Italian (B15).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path

import duckdb
import polars as pl

from chpit_assets.corpus.store import Store, replace_rows

from ..files import write_atomic
from .core_split import CORE_SIZE, CoreSplit, select_core
from .files import item_line, lines_bytes
from .frozen import load_frozen
from .questions import question
from .tables import require_tables

SEED = 20260825
PER_ACT_CAP = 50      # B14: changes per act
ITEM_CAP = 5000       # B14: items per language
SOURCE = "Fedlex (fedlex.admin.ch)"
LICENCE = "Fedlex data may be reused free of charge with source attribution"


@dataclass(frozen=True)
class BuildSettings:
    build: str = "dev"          # the build name new items are stamped with, e.g. "v2026.09"
    seed: int = SEED
    per_act_cap: int = PER_ACT_CAP
    item_cap: int = ITEM_CAP
    core_size: int = CORE_SIZE


def item_id(lang: str, act_id: int, sr_number: str, e_id: str, as_of: date | str) -> str:
    """B17. act_id is hashed because two acts can share an SR number."""
    return hashlib.sha1(f"{lang}|{act_id}|{sr_number}|{e_id}|{as_of}".encode()).hexdigest()[:16]


def before_as_of(old_end: date | None, change_date: date) -> date:
    """B13: the old edition's own (inclusive) last day; the day before the change only when the
    old edition has no end date. Not simply change_date - 1: parsed editions can leave a gap."""
    return old_end if old_end is not None else change_date - timedelta(days=1)


_CHANGES_SQL = """
SELECT e.act_id, e.e_id, e.change_date, e.new_version_id, e.old_version_id, e.sr_number,
       e.abbreviation, e.article_number, e.before_ok, e.after_ok,
       ov.date_applicability AS old_from, ov.date_end_applicability AS old_to, ov.eli AS old_eli,
       ov.source AS old_source, oa.text AS old_text,
       nv.date_applicability AS new_from, nv.date_end_applicability AS new_to, nv.eli AS new_eli,
       nv.source AS new_source, na.text AS new_text
FROM bench_eligible e
JOIN ch_act_version ov ON ov.version_id = e.old_version_id
JOIN ch_act_version nv ON nv.version_id = e.new_version_id
JOIN ch_act_article oa ON oa.version_id = e.old_version_id AND oa.e_id = e.e_id
JOIN ch_act_article na ON na.version_id = e.new_version_id AND na.e_id = e.e_id
WHERE e.lang = $lang
ORDER BY e.act_id, e.e_id, e.change_date, e.new_version_id
"""


def _edition(ch: dict, side: str) -> dict:
    to = ch[f"{side}_to"]
    return {
        "version_id": ch[f"{side}_version_id"],
        "date_applicability": ch[f"{side}_from"].isoformat(),
        "date_end_applicability": to.isoformat() if to is not None else None,
        "eli": ch[f"{side}_eli"],
        "source": ch[f"{side}_source"],
        "text": ch[f"{side}_text"],  # verbatim, never normalised at build time
    }


def halves(ch: dict, lang: str, build: str) -> list[dict]:
    """The change's items (B13) in the spec's field order, `before` first; a half without a
    discriminating unit (B12, `before_ok`/`after_ok`) is not made."""
    out = []
    for kind, ok in (("before", ch["before_ok"]), ("after", ch["after_ok"])):
        if not ok:
            continue
        if kind == "before":
            as_of, gold, distractor = before_as_of(ch["old_to"], ch["change_date"]), "old", "new"
        else:
            as_of, gold, distractor = ch["change_date"], "new", "old"
        gold_edition = _edition(ch, gold)
        out.append({
            "build": build,
            "core": False,
            "id": item_id(lang, ch["act_id"], ch["sr_number"], ch["e_id"], as_of.isoformat()),
            "lang": lang,
            "act_id": ch["act_id"],
            "sr_number": ch["sr_number"],
            "abbreviation": ch["abbreviation"],
            "article_number": ch["article_number"],
            "e_id": ch["e_id"],
            "as_of": as_of.isoformat(),
            "kind": kind,
            "change_date": ch["change_date"].isoformat(),
            "question": question(lang, ch["article_number"], ch["abbreviation"], ch["sr_number"], as_of),
            "gold_is_current": gold_edition["date_end_applicability"] is None,
            "gold": gold_edition,
            "distractor": _edition(ch, distractor),
            "source": SOURCE,
            "recite_label": None,   # stamped at publication by the recite baseline
            "recite_as_of": None,
            "licence": LICENCE,
        })
    return out


def change_key(act_id: int, e_id: str, change_date: date | str) -> tuple[int, str, str]:
    return (int(act_id), e_id, str(change_date))


@dataclass
class Selection:
    items: list[dict]          # new items, in selection order
    selected: int              # changes taken
    capped: int                # B14 leftovers
    duplicate_question: int    # changes whose every half repeats an existing id (see select)
    published: int             # eligible changes already in the frozen record


def select(changes: list[dict], lang: str, settings: BuildSettings, frozen: list[dict]) -> Selection:
    """B14 + B15. The changes are put in one canonical order (act, article, change date, edition),
    shuffled with `random.Random(f"{seed}:{lang}")` and consumed in that order: a change is
    taken whole when its act has fewer than `per_act_cap` taken changes and all its items
    fit the remaining item budget, else it is `capped` and consumption goes on, so a later
    one-item change can still fill the last slot. Published (frozen) changes count first.

    An item id can repeat when an edition lasted a single day (its `after` and the next
    change's `before` ask the same date); the later half is dropped, never a second id."""
    frozen_changes = {change_key(i["act_id"], i["e_id"], i["change_date"]) for i in frozen}
    per_act = Counter(k[0] for k in frozen_changes)
    used_ids = {i["id"] for i in frozen}
    budget = settings.item_cap - len(frozen)
    pool = [c for c in changes if change_key(c["act_id"], c["e_id"], c["change_date"]) not in frozen_changes]
    published = len(changes) - len(pool)
    # The sample must depend on the eligible set only, never on how a caller happened to order it.
    pool.sort(key=lambda c: (c["act_id"], c["e_id"], c["change_date"], c["new_version_id"]))
    random.Random(f"{settings.seed}:{lang}").shuffle(pool)
    taken: list[dict] = []
    capped = duplicates = selected = 0
    for ch in pool:
        new = [i for i in halves(ch, lang, settings.build) if i["id"] not in used_ids]
        if not new:
            duplicates += 1
        elif per_act[ch["act_id"]] >= settings.per_act_cap or len(new) > budget:
            capped += 1
        else:
            per_act[ch["act_id"]] += 1
            budget -= len(new)
            used_ids.update(i["id"] for i in new)
            taken.extend(new)
            selected += 1
    return Selection(taken, selected, capped, duplicates, published)


@dataclass
class ItemBuild:
    lang: str
    items: list[dict]          # frozen + new, sorted by id, core flags set
    core: CoreSplit
    stats: dict


def update_items(store: Store, build_dir: Path | str, lang: str, settings: BuildSettings,
                 frozen_dir: Path | str) -> tuple[ItemBuild, Path]:
    """The bench_items asset: build from the store and the frozen record in `frozen_dir`, write the
    rows in the same transaction (it holds the writer pool), then the file."""
    frozen = load_frozen(frozen_dir, lang)
    with store.transaction() as con:
        result = _build_items(con, lang, settings, frozen)
        result.stats["frozen_dir"] = str(frozen_dir)  # where the checks find the record again
        lines = _write_rows(con, result)
    return result, _write_file(build_dir, lang, lines)


def build_items(store: Store, lang: str, settings: BuildSettings, frozen: list[dict]) -> ItemBuild:
    """The language's full item set from `bench_eligible` and its frozen record (read-only)."""
    with store.connect(read_only=True) as con:
        return _build_items(con, lang, settings, frozen)


def write_items(store: Store, build_dir: Path | str, result: ItemBuild) -> Path:
    """Write the language's bench_item rows and stats (atomic), then bench-{lang}.jsonl (atomic)."""
    with store.transaction() as con:
        lines = _write_rows(con, result)
    return _write_file(build_dir, result.lang, lines)


def _build_items(con: duckdb.DuckDBPyConnection, lang: str, settings: BuildSettings, frozen: list[dict]) -> ItemBuild:
    require_tables(con, "bench_items")
    # Plain tuples from the cursor, not .pl().iter_rows(): the text columns were copied into an
    # Arrow table, then a polars frame, then Python strings.
    cursor = con.execute(_CHANGES_SQL, {"lang": lang})
    columns = [d[0] for d in cursor.description]
    changes = [dict(zip(columns, row)) for row in cursor.fetchall()]
    sel = select(changes, lang, settings, frozen)
    # Frozen items are copied as recorded; only FREE_FIELDS (core) is restamped below.
    items = sorted([dict(i) for i in frozen] + sel.items, key=lambda i: i["id"])
    core = select_core(items, lang, settings.seed, settings.core_size)
    for item in items:
        item["core"] = item["id"] in core.ids
    stats = {
        **asdict(settings),
        "eligible_changes": len(changes),
        "published": sel.published,
        "capped": sel.capped,
        "duplicate_question": sel.duplicate_question,
        "selected": sel.selected,
        "items": len(items),
        "items_published": len(frozen),
        "items_new": len(sel.items),
        "core": core.stats(),
    }
    return ItemBuild(lang, items, core, stats)


def bench_path(build_dir: Path | str, lang: str) -> Path:
    return Path(build_dir) / f"bench-{lang}.jsonl"


def _write_rows(con: duckdb.DuckDBPyConnection, result: ItemBuild) -> list[str]:
    """Bring the language's bench_item rows and stats up to date; returns the jsonl lines.

    Only rows whose line changed are deleted and inserted (every column derives from the line's
    item): after one new edition most items are the same, and rewriting them all made the
    checkpoint on close the step's largest cost."""
    lines = [item_line(i) for i in result.items]
    stored = dict(con.execute("SELECT id, line FROM bench_item WHERE lang = ?", [result.lang]).fetchall())
    current = {i["id"]: line for i, line in zip(result.items, lines)}
    stale = [i for i, line in stored.items() if current.get(i) != line]
    fresh = [(i, line) for i, line in zip(result.items, lines) if stored.get(i["id"]) != line]
    rows = pl.DataFrame(
        {
            "lang": [result.lang] * len(fresh),
            "id": [i["id"] for i, _ in fresh],
            "build": [i["build"] for i, _ in fresh],
            "core": [i["core"] for i, _ in fresh],
            "act_id": [i["act_id"] for i, _ in fresh],
            "e_id": [i["e_id"] for i, _ in fresh],
            "as_of": [date.fromisoformat(i["as_of"]) for i, _ in fresh],
            "kind": [i["kind"] for i, _ in fresh],
            "gold_is_current": [i["gold_is_current"] for i, _ in fresh],
            "gold_version_id": [i["gold"]["version_id"] for i, _ in fresh],
            "distractor_version_id": [i["distractor"]["version_id"] for i, _ in fresh],
            "line": [line for _, line in fresh],
        },
        schema={
            "lang": pl.String, "id": pl.String, "build": pl.String, "core": pl.Boolean,
            "act_id": pl.Int64, "e_id": pl.String, "as_of": pl.Date, "kind": pl.String,
            "gold_is_current": pl.Boolean, "gold_version_id": pl.Int64,
            "distractor_version_id": pl.Int64, "line": pl.String,
        },
    )
    stats = pl.DataFrame({"lang": [result.lang], "step": ["bench_items"], "stats": [json.dumps(result.stats, sort_keys=True)]})
    replace_rows(con, [
        ("bench_item", "lang = ? AND list_contains(?, id)", [result.lang, stale], rows),
        ("bench_stats", "lang = ? AND step = 'bench_items'", [result.lang], stats),
    ])
    return lines


def _write_file(build_dir: Path | str, lang: str, lines: list[str]) -> Path:
    path = bench_path(build_dir, lang)
    write_atomic(path, lines_bytes(lines))
    return path


def load_items(store: Store, lang: str, core_only: bool = False) -> list[dict]:
    """The language's items as written, sorted by id (read-only)."""
    return [json.loads(line) for line in _load_lines(store, lang, core_only)]


def _load_lines(store: Store, lang: str, core_only: bool) -> list[str]:
    where = "lang = $lang" + (" AND core" if core_only else "")
    with store.connect(read_only=True) as con:
        require_tables(con, "reading bench_item")
        rows = con.execute(f"SELECT line FROM bench_item WHERE {where} ORDER BY id", {"lang": lang}).fetchall()
        return [line for (line,) in rows]


def core_path(build_dir: Path | str, lang: str) -> Path:
    return Path(build_dir) / f"core-{lang}.jsonl"


def write_core(store: Store, build_dir: Path | str, lang: str) -> list[dict]:
    """Write core-{lang}.jsonl: the bench items flagged core, same lines, same order (B16)."""
    lines = _load_lines(store, lang, core_only=True)
    write_atomic(core_path(build_dir, lang), lines_bytes(lines))
    return [json.loads(line) for line in lines]
