"""Search at CH-PiT scale (issues 16, 27.1): the search assets' builds, full and incremental, and
SQLite FTS5 (the shipped index) against bm25s, side by side.

    nice .venv/bin/python benchmarks/bench_search.py [--corpus data/synthetic] [--lang de] [--queries 500]
        [--repeat 3] [--write docs/perf/search.md]
    .venv/bin/python benchmarks/bench_search.py --smoke DIR   # tiny corpus under DIR, figures line last

Needs a built synthetic corpus: `benchmarks/bench_scale.py` leaves one in CORPUS/_build (store and
bench-{lang}.jsonl); `--generate [--acts N]` makes and builds one here first. It adds one edition to
the corpus (the incremental case), so each run measures one more. bm25s is optional (the `bench`
extra: `pip install -e '.[bench]'`); without it only FTS5 is measured.

Measured for one language, `--repeat` times each (median, min, max):
 * `search_track` (`update_track`) from scratch, and after one new edition of one act (its longest
   article amended, as bench_scale's P3b) and the builder's rebuild, reusing the phrases of the
   build before it; the incremental file is compared with a build from scratch byte for byte;
 * `search_index` (`build_index`) from an empty folder, with nothing changed, and after that edition;
Then both engines over the same articles (every article of every parsed edition) and the same
folded tokens (chpit_assets.search.query.fold):
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
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit
from urllib.request import url2pathname

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
T = TypeVar("T")

from benchmarks.common import absolute, emit, record, spread  # noqa: E402
from chpit_assets.bench.items import _load_lines  # noqa: E402
from chpit_assets.corpus.store import Store  # noqa: E402
from chpit_assets.search.engine import SearchIndex  # noqa: E402
from chpit_assets.search.index import IndexBuild, build_index, build_mismatch, digest_path, index_path  # noqa: E402
from chpit_assets.search.query import fold, match_expression, words  # noqa: E402
from chpit_assets.search.track import (  # noqa: E402
    StoreEditions,
    TrackBuild,
    build_track,
    lines_path,
    phrases_path,
    texts_path,
    track_path,
    update_track,
)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _tasks(store: Store, build_dir: Path, lang: str, n: int) -> dict[str, list[dict]]:
    items = [json.loads(line) for line in (build_dir / f"bench-{lang}.jsonl").read_text(encoding="utf-8").splitlines()]
    with store.connect(read_only=True) as con:
        track = build_track(items[: n * 2], StoreEditions(con))
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


def _timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _assets(corpus: Path, lang: str, repeat: int) -> dict:
    """search_track and search_index, from scratch and after one new edition (see the docstring)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_scale

    from chpit_assets.akn.parser import parse_edition
    from chpit_assets.fedlex.catalog import load_sample_catalog
    from chpit_assets.synthetic.generator import append_edition, next_month

    data = corpus / "_build"
    store = Store(data / "chpit.duckdb")
    out_dir, search_dir, saved = data / "search-bench", data / "search-bench" / "search", data / "search-bench-saved"
    index = index_path(search_dir, lang)
    kept = [phrases_path(search_dir, lang), texts_path(search_dir, lang), lines_path(search_dir, lang)]

    def track(into: Path) -> tuple[float, tuple[TrackBuild, bytes]]:
        def update() -> tuple[TrackBuild, bytes]:
            lines = _load_lines(store, lang, core_only=False)  # as the asset does: part of its time
            with store.connect(read_only=True) as con:
                return update_track(con, lines, lang, into, into / "search")

        return _timed(update)

    def index_build() -> tuple[float, IndexBuild]:
        with store.connect(read_only=True) as con:
            return _timed(lambda: build_index(con, lang, search_dir))

    shutil.rmtree(out_dir, ignore_errors=True)
    fig: dict = {"items": len(_load_lines(store, lang, core_only=False))}
    full_track, full_index = [], []
    for _ in range(repeat):
        for path in kept:  # from scratch: no phrase, normalised text or line kept
            path.unlink(missing_ok=True)
        seconds, (built, _) = track(out_dir)
        full_track.append(seconds)
        index.unlink(missing_ok=True)
        seconds, made = index_build()
        full_index.append(seconds)
    fig["track_full_s"], fig["index_full_s"] = spread(full_track), spread(full_index)
    fig["track_items"], fig["index_articles"], fig["index_editions"] = built.written, made.articles, made.editions
    fig["track_unchanged_s"] = spread([track(out_dir)[0] for _ in range(repeat)])
    fig["index_unchanged_s"] = spread([index_build()[0] for _ in range(repeat)])

    shutil.rmtree(saved, ignore_errors=True)
    shutil.copytree(search_dir, saved)
    saved_track = data / "search-bench-saved.jsonl"  # the search file the lines memo describes
    shutil.copy(track_path(out_dir, lang), saved_track)
    catalog = load_sample_catalog(corpus)
    act = catalog.acts[0]
    latest = max(
        (e for e in catalog.editions if e.act_eli == act.eli and e.lang == lang), key=lambda e: e.date_applicability
    )
    parsed = parse_edition(Path(url2pathname(urlsplit(str(latest.file_url)).path)).read_bytes(), latest.consolidation)
    longest = max(parsed.articles, key=lambda a: len(a.text)).e_id
    append_edition(corpus, act.eli, next_month(latest.date_applicability), e_id=longest)
    bench_scale.build(corpus)
    inc_track, inc_index = [], []
    for _ in range(repeat):
        shutil.rmtree(search_dir)
        shutil.copytree(saved, search_dir)
        shutil.copy(saved_track, track_path(out_dir, lang))
        # A copy is a new file to the index's stat signature: hashed in full once, as the first build
        # after a restore would; a nightly's index is the file its last build wrote (search/index.py).
        assert build_mismatch(index) is None
        seconds, (rebuilt, data_inc) = track(out_dir)
        inc_track.append(seconds)
        seconds, updated = index_build()
        inc_index.append(seconds)
    fig["track_incremental_s"], fig["index_incremental_s"] = spread(inc_track), spread(inc_index)
    fig["track_searched_incremental"], fig["index_editions_added"] = rebuilt.searched, updated.editions_added
    _, (_, data_scratch) = track(out_dir / "scratch")
    fig["track_identical_to_scratch"] = int(data_inc == data_scratch)
    assert digest_path(index).exists()
    return fig


def _smoke_corpus(root: Path) -> Path:
    """A tiny synthetic corpus under `root`, built as bench_scale builds it."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_scale

    from chpit_assets.synthetic.generator import Params, generate

    corpus = root / "synthetic"
    generate(
        Params(acts=4, editions_per_act=3, langs=bench_scale.LANGS, seed=2, articles=(8, 14)),
        corpus,
        ROOT / "data" / "fedlex-sample",
    )
    bench_scale.build(corpus)
    return corpus


def _markdown(fig: dict, lang: str) -> str:
    def row(name: str, key: str) -> str:
        s = fig[key]
        return f"| {name} | {s['median']:.2f} | {s['min']:.2f} | {s['max']:.2f} |"

    return "\n".join(
        [
            f"Language `{lang}`: {fig['items']:,} bench items, {fig['track_items']:,} search-track items; index of "
            f"{fig['index_articles']:,} articles in {fig['index_editions']:,} editions. After one new edition: "
            f"{fig['track_searched_incremental']} phrases searched, {fig['index_editions_added']} editions indexed; "
            f"incremental track identical to a build from scratch: {bool(fig['track_identical_to_scratch'])}.",
            "",
            "| step | median s | min s | max s |",
            "| --- | ---: | ---: | ---: |",
            row("search_track from scratch", "track_full_s"),
            row("search_track, nothing changed", "track_unchanged_s"),
            row("search_track after one new edition", "track_incremental_s"),
            row("search_index from scratch", "index_full_s"),
            row("search_index, nothing changed", "index_unchanged_s"),
            row("search_index after one new edition", "index_incremental_s"),
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=absolute, default=ROOT / "data" / "synthetic")
    parser.add_argument("--lang", default="de")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each build timed")
    parser.add_argument("--generate", action="store_true", help="generate and build the corpus first (bench_scale)")
    parser.add_argument("--acts", type=int, default=1070, help="with --generate")
    parser.add_argument("--skip", default="", help="comma-separated: bm25-alone (skip the two BM25-only runs), queries")
    parser.add_argument("--smoke", type=absolute, metavar="DIR", help="a tiny corpus under DIR; figures line last")
    parser.add_argument("--write", type=absolute, help="append the figures (markdown) to this file")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    if args.smoke:
        args.corpus, args.repeat, args.queries = _smoke_corpus(args.smoke), 1, 20
        skip |= {"bm25-alone"}
    elif args.generate:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        import bench_scale

        from chpit_assets.synthetic.generator import Params, generate

        params = Params(acts=args.acts, editions_per_act=4, langs=bench_scale.LANGS, seed=1, articles=(10, 60))
        generate(params, args.corpus, ROOT / "data" / "fedlex-sample", workers=2)
        bench_scale.build(args.corpus)
    data = args.corpus / "_build"
    report: dict = {"assets": _assets(args.corpus, args.lang, args.repeat)}
    if "queries" not in skip:
        report.update(_queries(data, args.lang, args.queries, skip))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.write:
        record(
            args.write,
            f"search_track and search_index, full and incremental ({args.lang})",
            _markdown(report["assets"], args.lang),
        )
    emit("bench_search", _numbers(report))
    return 0


def _numbers(report: Any) -> Any:
    """The report without its text and empty values: the figures line holds numbers only."""
    if isinstance(report, dict):
        return {k: _numbers(v) for k, v in report.items() if isinstance(v, int | float | dict) and v is not None}
    return report


def _queries(data: Path, lang: str, n: int, skip: set[str]) -> dict:
    """FTS5 as shipped and alone, and bm25s, on the search-track and citation tasks (issue 16)."""
    store = Store(data / "chpit.duckdb")
    search_dir = data / "search-bench-queries"
    index_path(search_dir, lang).unlink(missing_ok=True)
    with store.connect(read_only=True) as con:
        built = build_index(con, lang, search_dir)
    report: dict = {}
    tasks = _tasks(store, data / "build", lang, n)
    index = SearchIndex(search_dir, lang)
    report.update(_measure("fts5 fused (as shipped)", tasks, lambda i: _fts(index, i, fused=True)))
    if "bm25-alone" not in skip:
        report.update(_measure("fts5 words (BM25 alone)", tasks, lambda i: _fts(index, i, fused=False)))
        try:
            bm25s_build, bm25s_query = _bm25s(built.path, lang)
        except ImportError:
            report["bm25s"] = "not installed"
        else:
            report["bm25s_build_s"] = round(bm25s_build, 2)
            report.update(_measure("bm25s (BM25 alone)", tasks, bm25s_query))
    return report


if __name__ == "__main__":
    raise SystemExit(main())
