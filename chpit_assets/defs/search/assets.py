"""search_index[lang]: the full-text index the ch_search_articles tool reads (chpit_assets/search)."""

import dagster as dg

from chpit_assets.search.index import build_index

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
    return dg.MaterializeResult(
        data_version=dg.DataVersion(result.digest),
        metadata={
            "path": dg.MetadataValue.path(str(result.path)),
            "editions": result.editions,
            "articles": result.articles,
            "editions_indexed_now": result.editions_added,
            "editions_removed_now": result.editions_removed,
        },
    )
