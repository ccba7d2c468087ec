"""Eligible changes -> benchmark items: halves (B13), caps and sampling (B14, B15),
ids (B17), frozen items (B18), questions (B19), core flags (B16).

A language's items depend only on the store's rows for that language, its frozen
record and the settings: nothing here reads another language, so bench-fr.jsonl is
byte-identical whether French is built alone or with German and Italian (B15).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import random
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import duckdb
import polars as pl

from chpit_assets.corpus.store import Store, article_texts, registered, replace_rows

from ..faults import kill_point
from ..files import write_atomic
from .core_split import CORE_SIZE, CoreSplit, select_core
from .files import item_line, lines_bytes
from .frozen import FREE_FIELDS, load_frozen
from .questions import question
from .tables import ensure_tables, require_tables

SEED = 20260825
PER_ACT_CAP = 50  # B14: changes per act
ITEM_CAP = 5000  # B14: items per language
SOURCE = "Fedlex (fedlex.admin.ch)"
LICENCE = "Fedlex data may be reused free of charge with source attribution"


class ItemsError(RuntimeError):
    """The store cannot give an item what it is rendered from."""


@dataclass(frozen=True)
class BuildSettings:
    build: str = "dev"  # the build name new items are stamped with, e.g. "v2026.09"
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


# The eligible changes with their editions' metadata, texts left out: most of a rebuild's items
# reuse their stored line, and only the lines rendered anew need texts (`_with_texts`).
# `rendered_from` fingerprints everything an item's line is rendered from besides its kind,
# core flag and build: this row, and the two article texts, vouched for by their editions'
# content_sha256 (ingest's digest of what it stored: a re-issued file with the same wording
# re-renders nothing). NULL where an edition lacks it (stores written directly): always rendered.
_CHANGES_SQL = """
SELECT e.act_id, e.e_id, e.change_date, e.new_version_id, e.old_version_id, e.sr_number,
       e.abbreviation, e.article_number, e.before_ok, e.after_ok,
       ov.date_applicability AS old_from, ov.date_end_applicability AS old_to, ov.eli AS old_eli,
       ov.source AS old_source,
       nv.date_applicability AS new_from, nv.date_end_applicability AS new_to, nv.eli AS new_eli,
       nv.source AS new_source,
       CASE WHEN ov.content_sha256 IS NOT NULL AND nv.content_sha256 IS NOT NULL THEN
           md5(concat_ws('|', e.lang, e.act_id, e.e_id, e.change_date, e.old_version_id, e.new_version_id,
                         e.sr_number, e.abbreviation, e.article_number,
                         ov.date_applicability, coalesce(CAST(ov.date_end_applicability AS VARCHAR), '-'),
                         ov.eli, ov.source, ov.content_sha256,
                         nv.date_applicability, coalesce(CAST(nv.date_end_applicability AS VARCHAR), '-'),
                         nv.eli, nv.source, nv.content_sha256))
       END AS rendered_from
FROM bench_eligible e
JOIN ch_act_version ov ON ov.version_id = e.old_version_id
JOIN ch_act_version nv ON nv.version_id = e.new_version_id
WHERE e.lang = $lang
ORDER BY e.act_id, e.e_id, e.change_date, e.new_version_id
"""


# The code a line is rendered with (halves, field order, questions, serialisation): editing it
# re-renders every stored line once. Hashed as syntax trees, not bytes: reformatting the files or
# editing a comment changes no rendered line, so it must not force a re-render of every line.
def code_digest(sources: list[str]) -> str:
    """16 hex over the syntax trees of Python sources: equal for equal code however it is laid out."""
    return hashlib.md5("".join(ast.dump(ast.parse(source)) for source in sources).encode()).hexdigest()[:16]


RENDER_RULES = code_digest(
    [(Path(__file__).parent / name).read_text(encoding="utf-8") for name in ("items.py", "questions.py", "files.py")]
)


def _edition(ch: dict, side: str) -> dict:
    to = ch[f"{side}_to"]
    return {
        "version_id": ch[f"{side}_version_id"],
        "date_applicability": ch[f"{side}_from"].isoformat(),
        "date_end_applicability": to.isoformat() if to is not None else None,
        "eli": ch[f"{side}_eli"],
        "source": ch[f"{side}_source"],
        # Verbatim, never normalised at build time; None until `_with_texts` fills it when the
        # change row came without its texts.
        "text": ch.get(f"{side}_text"),
    }


class Half(NamedTuple):
    """One half of a change (B13) before it is made into an item: enough to select it, draw the
    core and fingerprint its line."""

    id: str
    kind: str  # 'before' | 'after'
    as_of: date
    change: dict  # the bench_eligible row joined with its editions

    @property
    def gold_is_current(self) -> bool:
        return self.change["old_to" if self.kind == "before" else "new_to"] is None


def _halves(ch: dict, lang: str) -> list[Half]:
    """The change's two halves, `before` first (B13): `before` asks the old edition's last day
    (gold = old), `after` the change date (gold = new). Whether a half has a discriminating unit
    (B12) is `ch[f"{kind}_ok"]`, decided by the item loop."""
    out = []
    for kind, as_of in (("before", before_as_of(ch["old_to"], ch["change_date"])), ("after", ch["change_date"])):
        out.append(Half(item_id(lang, ch["act_id"], ch["sr_number"], ch["e_id"], as_of.isoformat()), kind, as_of, ch))
    return out


def _item(half: Half, lang: str, build: str) -> dict:
    """A half as an item, in the published key order (PROTOCOL §1): `build` and `core` last, no
    recite fields (those exist only in published data, stamped at publication, PROTOCOL §9)."""
    ch = half.change
    gold, distractor = ("old", "new") if half.kind == "before" else ("new", "old")
    return {
        "id": half.id,
        "lang": lang,
        "act_id": ch["act_id"],
        "sr_number": ch["sr_number"],
        "abbreviation": ch["abbreviation"],
        "article_number": ch["article_number"],
        "e_id": ch["e_id"],
        "as_of": half.as_of.isoformat(),
        "kind": half.kind,
        "change_date": ch["change_date"].isoformat(),
        "question": question(lang, ch["article_number"], ch["abbreviation"], ch["sr_number"], half.as_of),
        "gold_is_current": half.gold_is_current,
        "gold": _edition(ch, gold),
        "distractor": _edition(ch, distractor),
        "source": SOURCE,
        "licence": LICENCE,
        "build": build,
        "core": False,
    }


def change_key(act_id: int, e_id: str, change_date: date | str) -> tuple[int, str, str]:
    return (int(act_id), e_id, str(change_date))


def _overlaps(ch: dict) -> bool:
    """B11: the old edition's (inclusive) end date is on or after the new start."""
    return ch["old_to"] is not None and ch["old_to"] >= ch["change_date"]


@dataclass
class Selection:
    lang: str
    build: str
    halves: list[Half]  # the new items' halves, in selection order
    selected: int  # PROTOCOL §1.4: eligible changes, published ones included
    capped: int  # §1.6 + §1.8: per-act skipped, kept but not consumed, the trimmed item
    skips: dict[str, int]  # loop reasons that occurred, first appearance (B11 per half, B12 per half)
    consumed: int  # kept changes the loop looked at
    published: int  # eligible changes already in the frozen record

    @property
    def items(self) -> list[dict]:
        return [_item(half, self.lang, self.build) for half in self.halves]


def select(changes: list[dict], lang: str, settings: BuildSettings, frozen: list[dict]) -> Selection:
    """B14/B15 as the published builder does them (PROTOCOL §1.5-§1.9).

    The changes are put in the change-key order (act, article, change date, edition), shuffled once
    with `random.Random(f"{seed}:{lang}")`, then the per-act cap runs over the WHOLE shuffled list
    (a change is kept while its act has fewer than `per_act_cap` kept). The item loop walks the kept
    changes and stops before one when the item cap is reached (0 = no cap); each change it reaches
    is consumed: an overlapping one (B11) counts `overlapping_editions` twice and yields nothing,
    else its `before` then `after` half is made unless it lacks a discriminating unit (B12). The
    changes never reached and the last `after` half trimmed to the cap are `capped`.

    B18: published (frozen) changes leave the pool before the shuffle and count first against both
    caps; with an empty record this is exactly the published algorithm. Two halves asking the same
    question (an edition valid for a single day) would share an id: that aborts, as published."""
    frozen_changes = {change_key(i["act_id"], i["e_id"], i["change_date"]) for i in frozen}
    pool = [c for c in changes if change_key(c["act_id"], c["e_id"], c["change_date"]) not in frozen_changes]
    published = len(changes) - len(pool)
    # The sample must depend on the eligible set only, never on how a caller happened to order it.
    pool.sort(key=lambda c: (c["act_id"], c["e_id"], c["change_date"], c["new_version_id"]))
    random.Random(f"{settings.seed}:{lang}").shuffle(pool)
    per_act = Counter(k[0] for k in frozen_changes)
    kept = []
    for ch in pool:
        if per_act[ch["act_id"]] < settings.per_act_cap:
            per_act[ch["act_id"]] += 1
            kept.append(ch)
    capped = len(pool) - len(kept)
    cap, consumed = settings.item_cap, 0
    halves: list[Half] = []
    skips: dict[str, int] = {}
    for ch in kept:
        if cap and len(frozen) + len(halves) >= cap:
            break
        consumed += 1
        if _overlaps(ch):
            skips["overlapping_editions"] = skips.get("overlapping_editions", 0) + 2
            continue
        for half in _halves(ch, lang):
            if ch[f"{half.kind}_ok"]:
                halves.append(half)
            else:
                skips["no_discriminating_unit"] = skips.get("no_discriminating_unit", 0) + 1
    capped += len(kept) - consumed
    excess = max(0, min(len(halves), len(frozen) + len(halves) - cap)) if cap else 0
    capped += excess
    del halves[len(halves) - excess :]
    seen = {i["id"]: f"published item {i['id']}" for i in frozen}
    for half in halves:
        ch = half.change
        if half.id in seen:
            raise ItemsError(
                f"bench_items[{lang}]: item id {half.id} twice: {seen[half.id]} and the {half.kind} "
                f"half of act {ch['act_id']} (SR {ch['sr_number']}) {ch['e_id']} changed "
                f"{ch['change_date']}, both asking {half.as_of} (an edition valid for one day)"
            )
        seen[half.id] = f"the {half.kind} half of {ch['e_id']} changed {ch['change_date']}"
    return Selection(lang, settings.build, halves, len(changes), capped, skips, consumed, published)


@dataclass
class ItemBuild:
    lang: str
    ids: list[str]  # frozen + new items, sorted by id
    lines: list[bytes]  # their jsonl lines, UTF-8, core flags stamped: the file's
    fingerprints: list[str]  # what each line was rendered from (`_fingerprint`): its bench_line key
    fresh: dict[str, bytes]  # the lines rendered in this build, by id, as bench_line keeps them; the rest were reused
    core: CoreSplit
    stats: dict

    @cached_property
    def items(self) -> list[dict]:
        """Every item as written, parsed back from its line."""
        return [json.loads(line) for line in self.lines]


# B16 draws the core from the whole item set, so a set that changes by a few items moves hundreds
# of core flags (one new change moved 730 of 5,000 at CH-PiT scale). Lines are therefore rendered
# and kept in bench_line with `"core": false`, and the flag is stamped when a line is used; a
# flag that moved costs a few bytes instead of rendering and storing the line again.
_CORE_FLAG = {True: b', "core": true}', False: b', "core": false}'}


def stamp_core(line: bytes, core: bool) -> bytes:
    """`line` with its core flag set to `core`. The field is the last (PROTOCOL §1 key order), so the
    line ends with it: a string value cannot end the line, its closing quote would come last."""
    if line.endswith(_CORE_FLAG[core]):
        return line
    if not line.endswith(_CORE_FLAG[not core]):
        raise ItemsError(f"an item line that does not end with its core flag: ...{line[-120:]!r}")
    return line[: -len(_CORE_FLAG[not core])] + _CORE_FLAG[core]


def line_key(line: bytes) -> str:
    """The sha256 of an item line as bench_line stores it (core flag false), under which the checks'
    and the search track's caches remember what they computed from it: B16 moving the flag does not
    make a line new to them."""
    return hashlib.sha256(stamp_core(line, False)).hexdigest()


# In the stamp of each cache keyed by `line_key`: keys computed otherwise refuse the cache, never match it.
LINE_KEY_CODE = (inspect.getsource(stamp_core) + inspect.getsource(line_key) + repr(_CORE_FLAG)).encode()


def update_items(
    store: Store, build_dir: Path | str, lang: str, settings: BuildSettings, frozen_dir: Path | str
) -> tuple[ItemBuild, Path]:
    """The bench_items asset: build from the store and the frozen record in `frozen_dir`, write the
    rows in the same transaction (it holds the writer pool), then the file."""
    frozen = load_frozen(frozen_dir, lang)
    with store.transaction() as con:
        require_tables(con, "bench_items")  # before ensure_tables, which would create them empty
        ensure_tables(con)  # brings a store built by an older version up to date
        result = _build_items(con, lang, settings, frozen)
        _write_rows(con, result)
    return result, _write_file(build_dir, lang, result.lines)


def build_items(store: Store, lang: str, settings: BuildSettings, frozen: list[dict]) -> ItemBuild:
    """The language's full item set from `bench_eligible` and its frozen record (read-only)."""
    with store.connect(read_only=True) as con:
        require_tables(con, "bench_items")
        return _build_items(con, lang, settings, frozen)


def write_items(store: Store, build_dir: Path | str, result: ItemBuild) -> Path:
    """Write the language's bench_item rows and stats (atomic), then bench-{lang}.jsonl (atomic)."""
    with store.transaction() as con:
        _write_rows(con, result)
    return _write_file(build_dir, result.lang, result.lines)


def _fingerprint(half: Half, build: str) -> str | None:
    """What a new item's line is rendered from: its change row (`rendered_from`), kind, build and
    the rendering code (not its core flag: see `stamp_core`). None when the change row cannot
    vouch for its texts."""
    if half.change.get("rendered_from") is None:
        return None
    return hashlib.md5(f"{half.change['rendered_from']}|{half.kind}|{build}|{RENDER_RULES}".encode()).hexdigest()


def _build_items(con: duckdb.DuckDBPyConnection, lang: str, settings: BuildSettings, frozen: list[dict]) -> ItemBuild:
    # Plain tuples from the cursor, not .pl().iter_rows(): one Python dict per change either way.
    cursor = con.execute(_CHANGES_SQL, {"lang": lang})
    columns = [d[0] for d in cursor.description]
    changes = [dict(zip(columns, row)) for row in cursor.fetchall()]
    sel = select(changes, lang, settings, frozen)
    # Frozen items are copied as recorded, FREE_FIELDS aside (core is stamped below).
    entries: list[Half | dict] = sorted(
        [*(dict(i) for i in frozen), *sel.halves], key=lambda e: e.id if isinstance(e, Half) else e["id"]
    )
    core = select_core(
        [
            {"id": e.id, "as_of": e.as_of, "kind": e.kind, "gold_is_current": e.gold_is_current}
            if isinstance(e, Half)
            else e
            for e in entries
        ],
        lang,
        settings.seed,
        settings.core_size,
    )
    stored = {
        id_: (fp, line)
        for id_, fp, line in con.execute(
            "SELECT i.id, fingerprint, l.line FROM bench_item i JOIN bench_line l USING (fingerprint) WHERE i.lang = ?",
            [lang],
        ).fetchall()
    }
    ids: list[str] = []
    lines: list[bytes | None] = []
    fingerprints: list[str | None] = []
    rendering: dict[str, dict] = {}
    for entry in entries:
        if isinstance(entry, Half):
            id_, fp = entry.id, _fingerprint(entry, settings.build)
            kept = stored.get(id_)
            if fp is not None and kept is not None and kept[0] == fp:
                line = kept[1]
            else:
                line, rendering[id_] = None, _item(entry, lang, settings.build)
        else:
            # A published item as recorded, but with core last, as the flag is stamped there, and
            # without the recite stamps, which exist only in published data (PROTOCOL §9).
            id_, fp, line = entry["id"], None, None
            rendering[id_] = {**{k: v for k, v in entry.items() if k not in FREE_FIELDS}, "core": False}
        ids.append(id_)
        lines.append(line)
        fingerprints.append(fp)
    _with_texts(con, lang, [i for i in rendering.values() if i["gold"]["text"] is None])
    fresh: dict[str, bytes] = {}
    for n, id_ in enumerate(ids):
        if lines[n] is None:
            line = lines[n] = fresh[id_] = item_line(rendering[id_]).encode("utf-8")
            # A line nothing vouches for is known by its own digest, so the write still skips it unchanged.
            fingerprints[n] = fingerprints[n] or "line:" + hashlib.md5(line).hexdigest()
    # Every line is rendered or stored by now, and every line has a fingerprint.
    complete, known = [line for line in lines if line is not None], [f for f in fingerprints if f is not None]
    assert len(complete) == len(known) == len(ids)
    stats = {
        **asdict(settings),
        "eligible_changes": len(changes),
        "published": sel.published,
        "selected": sel.selected,
        "consumed": sel.consumed,
        "skips": sel.skips,
        "capped": sel.capped,
        "items": len(entries),
        "items_published": len(frozen),
        "items_new": len(sel.halves),
        "core": core.stats(),
    }
    return ItemBuild(
        lang,
        ids,
        [stamp_core(line, id_ in core.ids) for id_, line in zip(ids, complete)],
        known,
        fresh,
        core,
        stats,
    )


def _with_texts(con: duckdb.DuckDBPyConnection, lang: str, items: list[dict]) -> None:
    """Fill the gold and distractor texts of `items` from ch_act_article."""
    if not items:
        return
    texts = article_texts(con, ((e["version_id"], i["e_id"]) for i in items for e in (i["gold"], i["distractor"])))
    for item in items:
        for side in ("gold", "distractor"):
            edition = item[side]
            text = texts.get((edition["version_id"], item["e_id"]))
            if text is None:
                raise ItemsError(
                    f"bench_items[{lang}]: item {item['id']} ({item['sr_number']} {item['e_id']}): "
                    f"edition {edition['eli']} has no article {item['e_id']} in the store; "
                    "re-materialise eligible_changes"
                )
            edition["text"] = text


def bench_path(build_dir: Path | str, lang: str) -> Path:
    return Path(build_dir) / f"bench-{lang}.jsonl"


def _write_rows(con: duckdb.DuckDBPyConnection, result: ItemBuild) -> None:
    """Bring the language's bench_item rows, their lines and the stats up to date.

    Only rows whose fingerprint changed are deleted and inserted (every column but core derives
    from the line, and equal fingerprints mean equal lines), rows whose core flag alone moved are
    updated, and only lines not stored yet are added: after one new edition most items are the
    same, and rewriting them all made the checkpoint the step's largest cost."""
    lang, core_ids = result.lang, result.core.ids
    stored = {
        i: (fp, core)
        for i, fp, core in con.execute("SELECT id, fingerprint, core FROM bench_item WHERE lang = ?", [lang]).fetchall()
    }
    current = dict(zip(result.ids, result.fingerprints))
    stale = [i for i, (fp, _) in stored.items() if current.get(i) != fp]
    changed = [
        json.loads(result.lines[n])
        for n, i in enumerate(result.ids)
        if stored.get(i, (None,))[0] != result.fingerprints[n]
    ]
    # The same line, its core flag moved by the B16 redraw: only the flag is updated.
    redrawn = [i for i, fp in current.items() if i in stored and stored[i] == (fp, i not in core_ids)]
    rows = pl.DataFrame(
        {
            "lang": [lang] * len(changed),
            "id": [i["id"] for i in changed],
            "build": [i["build"] for i in changed],
            "core": [i["core"] for i in changed],
            "act_id": [i["act_id"] for i in changed],
            "e_id": [i["e_id"] for i in changed],
            "as_of": [date.fromisoformat(i["as_of"]) for i in changed],
            "kind": [i["kind"] for i in changed],
            "gold_is_current": [i["gold_is_current"] for i in changed],
            "gold_version_id": [i["gold"]["version_id"] for i in changed],
            "distractor_version_id": [i["distractor"]["version_id"] for i in changed],
            "fingerprint": [current[i["id"]] for i in changed],
        },
        schema={
            "lang": pl.String,
            "id": pl.String,
            "build": pl.String,
            "core": pl.Boolean,
            "act_id": pl.Int64,
            "e_id": pl.String,
            "as_of": pl.Date,
            "kind": pl.String,
            "gold_is_current": pl.Boolean,
            "gold_version_id": pl.Int64,
            "distractor_version_id": pl.Int64,
            "fingerprint": pl.String,
        },
    )
    # Keys as built, not sorted: the report's skipped and core keys are in first-appearance order.
    stats = pl.DataFrame({"lang": [lang], "step": ["bench_items"], "stats": [json.dumps(result.stats)]})
    replace_rows(
        con,
        [
            ("bench_item", "lang = ? AND list_contains(?, id)", [lang, stale], rows),
            ("bench_stats", "lang = ? AND step = 'bench_items'", [lang], stats),
        ],
    )
    if redrawn:
        con.execute("UPDATE bench_item SET core = NOT core WHERE lang = ? AND list_contains(?, id)", [lang, redrawn])
    # Every line rendered in this build that bench_line lacks: a reused line was read from there, and a
    # rendered one may be missing although its item row is unchanged (a line collected or lost).
    lines = pl.DataFrame(
        {"fingerprint": [current[i] for i in result.fresh], "line": list(result.fresh.values())},
        schema={"fingerprint": pl.String, "line": pl.Binary},
    )
    with registered(con, "_lines", lines.unique("fingerprint")):
        con.execute(
            "INSERT INTO bench_line SELECT fingerprint, line FROM _lines "
            "WHERE fingerprint NOT IN (SELECT fingerprint FROM bench_line)"
        )
    _collect_lines(con)


def _collect_lines(con: duckdb.DuckDBPyConnection) -> None:
    """Delete the lines no item uses once they outnumber the lines in use: a rebuild leaves the
    lines it replaced behind, and deleting them every time costs a rewrite of the table each
    time (see bench_line in tables.py); this way the table stays under twice its live size."""
    counts = con.execute(
        "SELECT count(*) FILTER (WHERE i.fingerprint IS NULL), count(*) FILTER (WHERE i.fingerprint IS NOT NULL) "
        "FROM bench_line l LEFT JOIN (SELECT DISTINCT fingerprint FROM bench_item) i USING (fingerprint)"
    ).fetchone()
    assert counts is not None  # an aggregate always returns its one row
    unused, used = counts
    if unused > used:
        con.execute("DELETE FROM bench_line WHERE fingerprint NOT IN (SELECT fingerprint FROM bench_item)")


def _write_file(build_dir: Path | str, lang: str, lines: list[bytes]) -> Path:
    path = bench_path(build_dir, lang)
    kill_point("items.write")
    write_atomic(path, lines_bytes(lines))
    return path


def load_items(store: Store, lang: str, core_only: bool = False) -> list[dict]:
    """The language's items as written, sorted by id (read-only)."""
    return [json.loads(line) for line in _load_lines(store, lang, core_only)]


def _load_lines(store: Store, lang: str, core_only: bool) -> list[bytes]:
    """The language's item lines as written (core flags stamped), in id order; read once while a
    run holds the store, though the checks, core_split and search_track each ask (`Store.memo`)."""
    rows = store.memo(("item lines", lang), lambda: _read_lines(store, lang))
    return [line for core, line in rows if core or not core_only]


def _read_lines(store: Store, lang: str) -> tuple[tuple[bool, bytes], ...]:
    with store.connect(read_only=True) as con:
        require_tables(con, "reading bench_item")
        rows = con.execute(
            "SELECT i.core, l.line FROM bench_item i JOIN bench_line l USING (fingerprint) "
            "WHERE lang = $lang ORDER BY i.id",
            {"lang": lang},
        ).fetchall()
        return tuple((core, stamp_core(line, core)) for core, line in rows)


def core_path(build_dir: Path | str, lang: str) -> Path:
    return Path(build_dir) / f"core-{lang}.jsonl"


def write_core(store: Store, build_dir: Path | str, lang: str) -> list[dict]:
    """Write core-{lang}.jsonl: the bench items flagged core, same lines, same order (B16)."""
    lines = _load_lines(store, lang, core_only=True)
    write_atomic(core_path(build_dir, lang), lines_bytes(lines))
    return [json.loads(line) for line in lines]
