"""Search at CH-PiT scale (issue 16): SQLite FTS5 (the shipped index) against bm25s, side by side.

    nice .venv/bin/python benchmarks/bench_search.py [--corpus data/synthetic] [--lang de] [--queries 500]

Needs a built synthetic corpus: `benchmarks/bench_scale.py` leaves one in CORPUS/_build (store and
bench-{lang}.jsonl); `--generate` makes and builds one here first. bm25s is optional
(the `bench` extra: `pip install -e '.[bench]'`); without it only FTS5 is measured.

Measured for one language, both engines over the same articles (every article of every parsed
edition) and the same folded tokens (chpit_assets.search.query.fold):
 * index build time (FTS5: `build_index` from an empty folder, then again with nothing changed);
 * query latency (median, p95) and recall@5 on two tasks, each limited to the editions in force on
   the item's as_of:
   - `search track`: the question quotes a distinctive phrase, names act and date, not the number;
     a hit is the item's article (SR number + e_id) among the first five;
   - `citation`: the item's own question ("Wie lautet Art. 24 DSG (SR 235.1) ...?").
   bm25s ranks by its BM25 over the words alone (no fusion, no citation strategy): that is the
   comparison of the libraries; FTS5 is measured both alone (`words_any`) and as shipped (fused).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from datetime import UTC, date, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from chpit_assets.corpus.store import Store  # noqa: E402
from chpit_assets.search.engine import SearchIndex  # noqa: E402
from chpit_assets.search.index import build_index, index_path  # noqa: E402
from chpit_assets.search.query import fold, match_expression, words  # noqa: E402
from chpit_assets.search.track import build_track  # noqa: E402


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _tasks(store: Store, build_dir: Path, lang: str, n: int) -> dict[str, list[dict]]:
    items = [json.loads(line) for line in (build_dir / f"bench-{lang}.jsonl").read_text(encoding="utf-8").splitlines()]
    with store.connect(read_only=True) as con:
        rows = con.execute(
            "SELECT version_id, e_id, text FROM ch_act_article WHERE version_id IN "
            "(SELECT version_id FROM ch_act_version WHERE lang = ?)",
            [lang],
        ).fetchall()
    by_version: dict[int, list[tuple[str, str]]] = {}
    for version_id, e_id, text in rows:
        by_version.setdefault(version_id, []).append((e_id, text))
    track = build_track(items[: n * 2], lambda v, e: [t for k, t in by_version.get(v, []) if k != e])
    return {"search track": track.items[:n], "citation": items[:n]}


def _fts(index: SearchIndex, item: dict, fused: bool) -> list[tuple[str, str]]:
    day = date.fromisoformat(item["as_of"])
    if fused:
        hits = index.search(item["question"], day, limit=5)
        return [(h.sr_number, h.e_id) for h in hits]
    db = index._connection()
    expression = match_expression(words(item["question"], index.lang), "OR")
    rows = db.execute(
        "SELECT e.sr_number, a.e_id FROM words f JOIN article a ON a.id = f.rowid JOIN edition e USING (version_id) "
        "WHERE words MATCH ? AND e.date_applicability <= ? AND (e.date_end_applicability IS NULL OR "
        "e.date_end_applicability >= ?) ORDER BY bm25(words) LIMIT 5",
        [expression, item["as_of"], item["as_of"]],
    )
    return rows.fetchall()


def _bm25s(path: Path, lang: str):
    import sqlite3

    import bm25s  # optional
    import numpy as np

    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT a.id, e.sr_number, a.e_id, e.date_applicability, coalesce(e.date_end_applicability, "
        "'9999-12-31'), coalesce(e.abbreviation, '') || ' ' || coalesce(a.article_number, '') || ' ' "
        "|| coalesce(a.heading, '') || ' ' || a.text FROM article a JOIN edition e USING (version_id) "
        "ORDER BY a.id"
    ).fetchall()
    db.close()
    start = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index([fold(r[5], lang).split() for r in rows], show_progress=False)
    built = time.perf_counter() - start
    starts = np.array([r[3] for r in rows])
    ends = np.array([r[4] for r in rows])
    keys = [(r[1], r[2]) for r in rows]

    def query(item: dict) -> list[tuple[str, str]]:
        mask = ((starts <= item["as_of"]) & (ends >= item["as_of"])).astype(np.float32)
        docs, _ = retriever.retrieve([words(item["question"], lang)], k=5, weight_mask=mask, show_progress=False)
        return [keys[i] for i in docs[0]]

    return built, query


def _measure(name: str, tasks: dict[str, list[dict]], ask) -> dict:
    out = {}
    for task, items in tasks.items():
        latencies, found = [], 0
        for item in items:
            start = time.perf_counter()
            hits = ask(item)
            latencies.append(time.perf_counter() - start)
            found += (item["sr_number"], item["e_id"]) in hits[:5]
        out[task] = {
            "queries": len(items),
            "recall@5": round(found / len(items), 3) if items else None,
            "median_ms": round(1000 * statistics.median(latencies), 2) if items else None,
            "p95_ms": round(1000 * _percentile(latencies, 0.95), 2) if items else None,
        }
    return {name: out}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "data" / "synthetic")
    parser.add_argument("--lang", default="de")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--generate", action="store_true", help="generate and build the corpus first (bench_scale)")
    parser.add_argument("--skip", default="", help="comma-separated: bm25-alone (skip the two BM25-only runs)")
    args = parser.parse_args()
    if args.generate:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import subprocess

        import bench_scale

        subprocess.run([sys.executable, "-m", "chpit_assets.synthetic", "--out", str(args.corpus)], check=True)
        bench_scale.build(args.corpus)
    data = args.corpus / "_build"
    store = Store(data / "chpit.duckdb")
    search_dir = data / "search-bench"
    index_path(search_dir, args.lang).unlink(missing_ok=True)
    report: dict = {
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
        "measured": datetime.now(UTC).isoformat(timespec="minutes"),
    }
    with store.connect(read_only=True) as con:
        start = time.perf_counter()
        built = build_index(con, args.lang, search_dir)
        report["fts5_build_s"] = round(time.perf_counter() - start, 2)
        start = time.perf_counter()
        build_index(con, args.lang, search_dir)
        report["fts5_rebuild_unchanged_s"] = round(time.perf_counter() - start, 2)
    report.update(articles=built.articles, editions=built.editions, fts5_mb=round(built.path.stat().st_size / 1e6, 1))
    tasks = _tasks(store, data / "build", args.lang, args.queries)
    index = SearchIndex(search_dir, args.lang)
    report.update(_measure("fts5 fused (as shipped)", tasks, lambda i: _fts(index, i, fused=True)))
    if "bm25-alone" not in args.skip.split(","):
        report.update(_measure("fts5 words (BM25 alone)", tasks, lambda i: _fts(index, i, fused=False)))
        try:
            bm25s_build, bm25s_query = _bm25s(built.path, args.lang)
        except ImportError:
            report["bm25s"] = "not installed"
        else:
            report["bm25s_build_s"] = round(bm25s_build, 2)
            report.update(_measure("bm25s (BM25 alone)", tasks, bm25s_query))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
