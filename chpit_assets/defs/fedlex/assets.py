"""Fedlex -> catalog -> edition files -> parsed articles, one language partition at a time."""

from typing import Any

import dagster as dg

from chpit_assets.corpus.ingest import IngestReport, store_editions
from chpit_assets.fedlex.catalog import Catalog
from chpit_assets.fedlex.catalog_diff import Snapshot
from chpit_assets.fedlex.download import DownloadResult, EditionDownloader, download_editions
from chpit_assets.files import write_atomic
from chpit_assets.markdown import table
from chpit_assets.orchestration.stages import ProgressLog

from ..metadata import data_version
from ..partitions import lang_partitions
from ..resources import ChpitStore, FedlexSource

GROUP = "fedlex"


def _lines_version(lines: list[str]) -> dg.DataVersion:
    return data_version("\n".join(sorted(lines)).encode())


@dg.asset(partitions_def=lang_partitions, group_name=GROUP, kinds={"python"})
def fedlex_catalog(context: dg.AssetExecutionContext, fedlex: FedlexSource, chpit: ChpitStore) -> dg.Output[Catalog]:
    """Acts and consolidations (dates, file urls) in this language, from the shipped sample or live Fedlex.

    Its snapshot is staged for the new-edition sensor: hf_dataset records it as built once published.
    Its data version is the snapshot's digest of the language, which covers everything the build
    reads from the catalog (titles and act dates too) and is the sensor's run key: a second digest,
    over part of the same fields, cost 4.5 ms a language run (issue 27.2)."""
    lang = context.partition_key
    catalog = fedlex.load_catalog(lang)
    snapshot = Snapshot.of({lang: catalog})
    write_atomic(chpit.staged_catalog_path(fedlex.source_id, lang), snapshot.encode().encode("ascii"))
    with_file = sum(1 for e in catalog.editions if e.file_url)
    return dg.Output(
        catalog,
        data_version=dg.DataVersion(snapshot.lang_digest(lang)),
        metadata={
            "source": fedlex.mode,
            "acts": len(catalog.acts),
            "editions": len(catalog.editions),
            "editions_with_file": with_file,
            "editions_without_file": len(catalog.editions) - with_file,
        },
    )


def _download_results(_context, value: object) -> bool:
    return isinstance(value, list) and all(isinstance(r, DownloadResult) for r in value)


DownloadResults = dg.DagsterType(
    type_check_fn=_download_results,
    name="DownloadResults",
    description="fedlex_editions' value: a list of DownloadResult, one per edition of the language.",
    typing_type=list[DownloadResult],
)
"""The type of fedlex_editions' output and of parsed_articles' input. Dagster's own type for
`list[DownloadResult]` checks each element through a call of its own and a TypeCheck made for it:
4,280 of each per language at CH-PiT scale, 6.6 ms a check, two a language run (issue 27.2). This
one checks the same in one pass, 0.2 ms."""


@dg.asset(partitions_def=lang_partitions, group_name=GROUP, kinds={"python"}, dagster_type=DownloadResults)
def fedlex_editions(
    context: dg.AssetExecutionContext, fedlex_catalog: Catalog, chpit: ChpitStore, fedlex: FedlexSource
) -> dg.Output[list[DownloadResult]]:
    """Every edition's XML file in the content-addressed cache, validated against the catalog."""
    results = download_editions(
        fedlex_catalog,
        chpit.cache_dir,
        concurrency=fedlex.download_concurrency,
        progress=ProgressLog(context.log.info, "editions fetched"),
    )
    stages: dict[str, int] = {}
    for r in results:
        stages[r.stage] = stages.get(r.stage, 0) + 1
    failures = [r for r in results if not r.ok and r.stage != "no_file"]
    for r in failures:
        context.log.warning(r.error)
    return dg.Output(
        results,
        data_version=_lines_version([f"{r.edition.consolidation}|{r.sha256}|{r.stage}" for r in results]),
        metadata={
            "files": sum(1 for r in results if r.ok),
            "by_stage": dg.MetadataValue.json(dict(sorted(stages.items()))),
            "failures": dg.MetadataValue.md("\n".join(f"- `{r.stage}`: {r.error}" for r in failures) or "No failures."),
        },
    )


# The language's first five articles by (SR number, edition date, eId, occurrence). Sorting every
# article joined with its edition took 20-50 ms a language; only the editions whose (SR number,
# date) key is at most that of the first edition reaching the fifth article can hold them.
PREVIEW_SQL = """
WITH editions AS (
    SELECT v.version_id, c.sr_number, c.abbreviation, v.date_applicability
    FROM ch_act_version v JOIN ch_act c USING (act_id) WHERE v.lang = $1
), counted AS (
    SELECT e.*, coalesce(sum(n.articles) OVER (
               ORDER BY sr_number, date_applicability ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
    FROM editions e
    JOIN (SELECT version_id, count(*) AS articles FROM ch_act_article
          WHERE version_id IN (SELECT version_id FROM editions) GROUP BY version_id) n USING (version_id)
)
SELECT e.sr_number, e.abbreviation, e.date_applicability, a.article_number, left(a.text, 120) AS text
FROM counted e JOIN ch_act_article a USING (version_id)
WHERE (e.sr_number, e.date_applicability) <= (SELECT max((sr_number, date_applicability)) FROM counted WHERE before < 5)
ORDER BY e.sr_number, e.date_applicability, a.e_id, a.occurrence LIMIT 5
"""


@dg.asset(
    partitions_def=lang_partitions,
    group_name=GROUP,
    kinds={"duckdb"},
    pool="duckdb_writer",
    ins={"fedlex_editions": dg.AssetIn(dagster_type=DownloadResults)},
)
def parsed_articles(
    context: dg.AssetExecutionContext,
    fedlex_catalog: Catalog,
    fedlex_editions: list[DownloadResult],
    chpit: ChpitStore,
    fedlex: FedlexSource,
) -> dg.MaterializeResult:
    """ch_act, ch_act_alias, ch_act_version and ch_act_article for this language, written in one transaction.

    An edition whose new file failed keeps its last good parse (committed with the rest); the asset
    then fails, naming each such file, so a build never passes silently on stale text (issue 15 item 3)."""
    # A cached file that changed on disk is fetched again from live Fedlex; from the offline sample it
    # is refused (the edition fails, naming the file), and the next run copies it anew (issue 23 item 1).
    with EditionDownloader(chpit.cache_dir, concurrency=1) as downloader:
        report: IngestReport = store_editions(
            chpit.store,
            fedlex_catalog,
            context.partition_key,
            fedlex_editions,
            refetch=(lambda e: downloader.refetch(fedlex_catalog, e)) if fedlex.mode == "live" else None,
            progress=ProgressLog(context.log.info, "editions parsed"),
        )
    preview = chpit.store.frame(PREVIEW_SQL, [context.partition_key])
    metadata: dict[str, Any] = {
        "acts": report.acts,
        "editions": report.editions,
        "parsed": report.parsed,
        "reparsed": report.reparsed,
        "reused_unchanged": report.reused,
        "articles": report.articles,
        # Fedlex repeats eIds within some editions (SR 210's final title): kept, keyed by occurrence.
        "repeated_eids": sum(report.repeated_eids.values()),
        "repeated_eids_by_edition": dg.MetadataValue.json(dict(sorted(report.repeated_eids.items()))),
        "reissued_files": dg.MetadataValue.md(report.revisions_markdown()),
        "editions_on_last_good_file": len(report.last_good),
        "last_good": dg.MetadataValue.md(report.last_good_markdown()),
        "failures_by_stage": dg.MetadataValue.json(report.failures_by_stage()),
        "failures": dg.MetadataValue.md(report.failures_markdown()),
        "preview": dg.MetadataValue.md(table(preview.columns, preview.rows())),
    }
    if report.last_good:
        files = "; ".join(f"{f.url} ({f.stage}: {f.error})" for f in report.last_good)
        raise dg.Failure(
            description=f"[{context.partition_key}] {len(report.last_good)} edition(s) kept their last good parse "
            f"because the new file failed: {files}",
            metadata=metadata,
        )
    return dg.MaterializeResult(data_version=dg.DataVersion(report.data_version), metadata=metadata)
