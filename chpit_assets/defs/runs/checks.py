"""The oracle gate's blocking check (R1, issue 5 point 7)."""

import dagster as dg

from chpit_assets.bench.items import core_path
from chpit_assets.runs.runner import errored, read_jsonl, scored_path

from ..partitions import BENCH_LANGS
from ..resources import ChpitStore
from .assets import built_langs, oracle_gate


def oracle_failures(chpit: ChpitStore) -> list[str]:
    """Why the oracle is not 1.000, one reason per language (empty = it is, on every language).

    Every built language counts; a language whose core split is empty passes vacuously (the sample
    has German changes only); a core item without a scored oracle line fails."""
    langs = built_langs(chpit)
    bad = [] if langs else [f"no core split in {chpit.build_dir} for any of {', '.join(BENCH_LANGS)}"]
    for lang in langs:
        core = core_path(chpit.build_dir, lang)
        n_items = len(read_jsonl(core))
        path = scored_path(chpit.results_dir, "oracle", lang)
        lines = read_jsonl(path) if path.exists() else []
        wrong = [l["id"] for l in lines if l["verdict"]["label"] != "grounded_correct" or errored(l)]
        if len(lines) != n_items:
            bad.append(f"{lang}: {len(lines)} scored oracle lines for {n_items} core items ({path})")
        elif wrong:
            bad.append(f"{lang}: {n_items - len(wrong)}/{n_items} grounded_correct; first failing ids {wrong[:5]}")
    return bad


@dg.asset_check(
    asset=oracle_gate,
    blocking=True,
    description="The oracle scores 1.000 grounded_correct, 0 errors, on every bench language; "
    "anything less is a builder or scorer bug and stops every run downstream.",
)
def oracle_scores_one(chpit: ChpitStore) -> dg.AssetCheckResult:
    bad = oracle_failures(chpit)
    return dg.AssetCheckResult(
        passed=not bad,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"failures": dg.MetadataValue.md("\n".join(f"- {b}" for b in bad) or "none")},
    )
