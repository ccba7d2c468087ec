"""scored_results (every system and language) -> report: data/report/report.{md,json,html} (R4) and,
beside them, the published files report-all.json, results-tables.md, summary.md (PROTOCOL §8)."""

import dagster as dg

from chpit_assets.report import build_report, to_markdown, write_published, write_report
from chpit_assets.report.collect import collect_repeats, collect_scored

from ..metadata import data_version
from ..resources import ChpitStore
from ..runs.assets import scored_results


@dg.asset(group_name="report", deps=[scored_results], kinds={"html", "json"})
def report(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """The headline table (the card's columns), rows per (language, system, kind), the tools report;
    the published report files next to them, with a preview of the published headline (summary.md)."""
    scored = collect_scored(chpit.results_dir, chpit.build_dir)
    # Every repeat feeds our report's repeats section only; the published files read repeat 0 (issue 25).
    tables = build_report(scored, collect_repeats(chpit.results_dir, chpit.build_dir))
    paths = write_report(tables, chpit.report_dir)
    published = write_published(scored, chpit.report_dir)
    markdown = to_markdown(tables)
    # The data version covers every file written, so a change in any of them is a new version.
    written = b"".join(p.read_bytes() for p in (*paths.values(), *published.values()))
    return dg.MaterializeResult(
        data_version=data_version(written),
        metadata={
            "report": dg.MetadataValue.md(markdown),
            "summary": dg.MetadataValue.md(published["summary.md"].read_text(encoding="utf-8")),
            "systems": len(tables["systems"]),
            **{f"path_{k}": dg.MetadataValue.path(str(p)) for k, p in paths.items()},
            **{
                f"path_{name.replace('-', '_').replace('.', '_')}": dg.MetadataValue.path(str(p))
                for name, p in published.items()
            },
        },
    )
