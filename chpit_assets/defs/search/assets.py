"""search_index[lang]: the full-text index the ch_search_articles tool reads (chpit_assets/search)."""

import dagster as dg

# The stored lines as written; items.py's own code is in every line's fingerprint, so it exports nothing new.
from chpit_assets.bench.items import _load_lines
from chpit_assets.search.index import build_index
from chpit_assets.search.track import SKIPS, track_path, update_track

from ..metadata import data_version
from ..partitions import lang_partitions
from ..resources import ChpitStore

GROUP = "search"


@dg.asset(partitions_def=lang_partitions, group_name=GROUP, deps=["parsed_articles"], kinds={"sqlite"})
def search_index(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """Every article of every parsed edition in this language, with its act, number, heading, text and
    validity interval, in one SQLite FTS5 file swapped in atomically; only changed editions are re-indexed."""
    lang = context.partition_key
    with chpit.store.connect(read_only=True) as con:
        result = build_index(con, lang, chpit.search_dir)
    if result.distrusted:
        context.log.warning(f"search_index[{lang}]: rebuilt from scratch: {result.distrusted}")
    return dg.MaterializeResult(
        data_version=dg.DataVersion(result.digest),
        metadata={
            "path": dg.MetadataValue.path(str(result.path)),
            "editions": result.editions,
            "articles": result.articles,
            "editions_indexed_now": result.editions_added,
            "editions_removed_now": result.editions_removed,
            "rebuilt_because": result.distrusted or "",
        },
    )


@dg.asset(partitions_def=lang_partitions, group_name=GROUP, deps=["core_split"], kinds={"json"})
def search_track(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """The search track (an extra config, never mixed into core/full): each benchmark item asked by a
    distinctive phrase of its wording instead of its number (chpit_assets/search/track.py), in
    data/build/search-{lang}.jsonl; skipped items counted by reason. Only items whose inputs changed
    are searched again; the others reuse the last build's phrases, and editions normalised by an earlier
    build are read from the track's text cache (issue 27.1); unchanged items' lines are carried as
    they were (issue 27.2)."""
    lang = context.partition_key
    lines = _load_lines(chpit.store, lang, core_only=False)
    with chpit.store.connect(read_only=True) as con:
        track, data = update_track(con, lines, lang, chpit.build_dir, chpit.search_dir)
    if track.distrusted:
        context.log.warning(f"search_track[{lang}]: every phrase searched again: {track.distrusted}")
    if track.texts_distrusted:
        context.log.warning(f"search_track[{lang}]: normalised texts refused: {track.texts_distrusted}")
    if track.lines_distrusted:
        context.log.warning(f"search_track[{lang}]: every line rendered again: {track.lines_distrusted}")
    path = track_path(chpit.build_dir, lang)
    return dg.MaterializeResult(
        data_version=data_version(data),
        metadata={
            "path": dg.MetadataValue.path(str(path)),
            "items": track.written,
            "of_bench_items": len(lines),
            "skipped": dg.MetadataValue.json({k: track.skipped.get(k, 0) for k in SKIPS}),
            "phrases_searched_now": track.searched,
            "lines_carried": track.reused_lines,
            "editions_normalised_now": len(track.normalised),
            "rebuilt_because": track.distrusted or "",
        },
    )
