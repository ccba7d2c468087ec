"""scored_results (every system and language) -> report: data/report/report.{md,json,html} (R4) and,
beside them, the published files report-all.json, results-tables.md, summary.md (PROTOCOL §8)."""

from pathlib import Path

import dagster as dg

from chpit_assets.bench.items import core_path
from chpit_assets.report import build_report, to_markdown, write_published, write_report
from chpit_assets.runs.runner import read_jsonl

from ..metadata import data_version
from ..resources import ChpitStore
from ..runs.assets import scored_results

SCORED_SUFFIX = ".scored.jsonl"


def collect_scored(results_dir: Path, build_dir: Path) -> dict[str, list[dict]]:
    """{system key: scored lines of every language} from `{system}/{lang}.scored.jsonl`, in sorted path order.

    Only lines whose item is in the current core split count: a system not re-run since the last
    rebuild keeps answers to items that no longer exist, which would silently mix two builds."""
    current: dict[str, set[str]] = {}
    scored: dict[str, list[dict]] = {}
    for path in sorted(Path(results_dir).rglob(f"*{SCORED_SUFFIX}")):
        lang = path.name.removesuffix(SCORED_SUFFIX)
        if lang not in current:
            core = core_path(build_dir, lang)
            current[lang] = {item["id"] for item in read_jsonl(core)} if core.exists() else set()
        system_key = path.parent.relative_to(results_dir).as_posix()
        scored.setdefault(system_key, []).extend(line for line in read_jsonl(path) if line["id"] in current[lang])
    return scored


@dg.asset(group_name="report", deps=[scored_results], kinds={"html", "json"})
def report(context: dg.AssetExecutionContext, chpit: ChpitStore) -> dg.MaterializeResult:
    """The headline table (the card's columns), rows per (language, system, kind), the tools report;
    the published report files next to them, with a preview of the published headline (summary.md)."""
    scored = collect_scored(chpit.results_dir, chpit.build_dir)
    tables = build_report(scored)
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
