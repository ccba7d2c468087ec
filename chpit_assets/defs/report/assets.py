"""scored_results (every system and language) -> report: data/report/report.{md,json,html} (R4)."""


from pathlib import Path

import dagster as dg

from chpit_assets.bench.items import core_path
from chpit_assets.report import build_report, to_markdown, write_report
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
    """The headline table (the card's columns), rows per (language, system, kind), the tools report."""
    tables = build_report(collect_scored(chpit.results_dir, chpit.build_dir))
    paths = write_report(tables, chpit.report_dir)
    markdown = to_markdown(tables)
    return dg.MaterializeResult(
        data_version=data_version(markdown.encode()),
        metadata={
            "report": dg.MetadataValue.md(markdown),
            "systems": len(tables["systems"]),
            **{f"path_{k}": dg.MetadataValue.path(str(p)) for k, p in paths.items()},
        },
    )
