"""The runs' stages over the data folder (issue 22.8): the oracle gate, one (system, lang) run, its
scored view, and the oracle's verdict the gates read. Plain Python over a `Layout`; the Dagster
assets (`chpit_assets/defs/runs/`) read their resources, call these and attach metadata.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from chpit_assets.bench.items import SEED, core_path
from chpit_assets.langs import BENCH_LANGS
from chpit_assets.layout import Layout
from chpit_assets.pit.tools import PitTools

from . import run_report as run_reports
from .client import EndpointConfig, spend_confirmed
from .errors import RunError, SpendNotConfirmedError
from .runner import (
    RunSummary,
    errored,
    load_log,
    log_status,
    prepare_system,
    read_jsonl,
    repeats_path,
    repeats_view,
    results_path,
    run_items,
    scored_path,
    scored_view,
    write_jsonl_atomic,
)
from .sample import select_items
from .systems import build_system, parse_system_key

Endpoints = Callable[[str | None], AbstractContextManager[dict[str, EndpointConfig]]]
"""{slug: config} for a model system's slug, {} for a lookup (the `model` resource's `endpoints`)."""


class MissingBuildError(RunError):
    """A run asks the core split of a language that was not built (R1: nothing is asked then)."""


@dataclass(frozen=True)
class RunSettings:
    """Which items a (system, lang) run asks and how it meets its earlier log: the `runs` resource's
    config (RunsConfig in defs/runs/resources.py says what each field means, as the UI shows it)."""

    retry_errors: bool = True
    new_run: bool = False
    sample_per_lang: int = 0
    limit: int = 0
    today: str = ""
    repeats: int = 1


@dataclass(frozen=True)
class PartitionRun:
    """What one (system, lang) run left: its log, the runner's summary, the log's status, and the
    §8 run report it rewrote (None for the oracle and the model-free systems, which have none)."""

    path: Path
    summary: RunSummary
    status: dict
    run_report: Path | None


def built_langs(layout: Layout) -> list[str]:
    """The bench languages this build has a core split for (`make run --langs de` builds one)."""
    return [lang for lang in BENCH_LANGS if core_path(layout.build_dir, lang).exists()]


def core_items(layout: Layout, lang: str) -> list[dict]:
    path = core_path(layout.build_dir, lang)
    if not path.exists():
        raise MissingBuildError(f"no core items for {lang}: {path} is missing (materialise core_split[{lang}] first)")
    return read_jsonl(path)


def run_items_for(layout: Layout, lang: str, settings: RunSettings) -> list[dict]:
    """The items a (system, lang) run asks: the core split, subsampled and limited (PROTOCOL §6)."""
    return select_items(core_items(layout, lang), sample_per_lang=settings.sample_per_lang, limit=settings.limit)


def write_run_report(layout: Layout, mode: str, settings: RunSettings, model_settings: dict) -> Path:
    """Rewrite `run-report-{mode}.json` (PROTOCOL §8) from every run log of that mode in results/."""

    def items_of(lang: str) -> list[dict]:
        return run_items_for(layout, lang, settings) if core_path(layout.build_dir, lang).exists() else []

    return run_reports.write_run_report(
        mode,
        layout.results_dir,
        layout.report_dir,
        items_of,
        {**model_settings, "sample_per_lang": settings.sample_per_lang, "seed": SEED},
    )


def score_partition(layout: Layout, system_key: str, lang: str) -> tuple[list[dict], list[str]]:
    """Write `{lang}.scored.jsonl` (the report's input) from the run log, and `{lang}.repeats.jsonl`
    when the log holds more than one repeat; returns (lines, missing ids) of repeat 0."""
    items = core_items(layout, lang)
    log = results_path(layout.results_dir, system_key, lang)
    lines, missing = scored_view(items, load_log(log), system_key)
    write_jsonl_atomic(scored_path(layout.results_dir, system_key, lang), lines)
    every = repeats_view(items, log, system_key)
    if every:
        write_jsonl_atomic(repeats_path(layout.results_dir, system_key, lang), every)
    else:
        repeats_path(layout.results_dir, system_key, lang).unlink(missing_ok=True)
    return lines, missing


def verdict_counts(lines: list[dict], missing: list[str]) -> dict:
    """A scored view in numbers: lines, missing and errored items, the share and count of every label."""
    labels: dict[str, int] = {}
    for line in lines:
        labels[line["verdict"]["label"]] = labels.get(line["verdict"]["label"], 0) + 1
    correct = labels.get("grounded_correct", 0)
    return {
        "n": len(lines),
        "missing": len(missing),
        "errors": sum(map(errored, lines)),
        "correct_share": round(correct / len(lines), 4) if lines else 0.0,
        "labels": dict(sorted(labels.items())),
    }


def run_oracle(layout: Layout, log: Callable[[str], None]) -> dict[str, dict]:
    """R1: the oracle over every built language's core split, scored; {lang: verdict_counts}."""
    langs = built_langs(layout)
    if not langs:
        raise MissingBuildError(f"no core split in {layout.build_dir} for any of {', '.join(BENCH_LANGS)}: build first")
    tools = PitTools(layout.released_store())
    per_lang = {}
    with tools.session():
        for lang in langs:
            items = core_items(layout, lang)
            path = results_path(layout.results_dir, "oracle", lang)
            # Never resumed: the gate must judge today's resolver on today's items, not old answers.
            path.unlink(missing_ok=True)
            run_items(build_system("oracle", tools=tools), items, path)
            lines, missing = score_partition(layout, "oracle", lang)
            per_lang[lang] = verdict_counts(lines, missing)
            log(f"oracle [{lang}]: {per_lang[lang]['correct_share']} of {len(lines)}")
    return per_lang


def oracle_failures(layout: Layout) -> list[str]:
    """Why the oracle is not 1.000, one reason per language (empty = it is, on every language).

    Every built language counts; a language whose core split is empty passes vacuously (the sample
    has German changes only); a core item without a scored oracle line fails."""
    langs = built_langs(layout)
    bad = [] if langs else [f"no core split in {layout.build_dir} for any of {', '.join(BENCH_LANGS)}"]
    for lang in langs:
        core = core_path(layout.build_dir, lang)
        n_items = len(read_jsonl(core))
        path = scored_path(layout.results_dir, "oracle", lang)
        lines = read_jsonl(path) if path.exists() else []
        wrong = [l["id"] for l in lines if l["verdict"]["label"] != "grounded_correct" or errored(l)]
        if len(lines) != n_items:
            bad.append(f"{lang}: {len(lines)} scored oracle lines for {n_items} core items ({path})")
        elif wrong:
            bad.append(f"{lang}: {n_items - len(wrong)}/{n_items} grounded_correct; first failing ids {wrong[:5]}")
    return bad


def refuse_unconfirmed_spend(config: EndpointConfig | None, confirm: bool, system_key: str) -> None:
    """PROTOCOL §7: a paid endpoint without confirmation is refused before any request to it, the
    pre-flight probe included; the CLI prints the estimate over every language (request.spend_estimate)."""
    if config is not None and not config.is_local and not spend_confirmed(confirm):
        raise SpendNotConfirmedError(
            f"{system_key}: {config.public_url} is a paid endpoint; pass --confirm-spend or set "
            "CHPIT_CONFIRM_SPEND=1 (the published CHPIT_CONFIRM=1 works too)",
            {},
        )


def run_partition(
    layout: Layout,
    system_key: str,
    lang: str,
    settings: RunSettings,
    endpoints: Endpoints,
    *,
    confirm: bool,
    workers: int,
    model_settings: dict,
    echo: Callable[[str], None],
    progress: Callable[[int, int], None] | None = None,
) -> PartitionRun:
    """data/results/{system}/{lang}.jsonl: one line per asked core item, resumable, with receipts (R3,
    PROTOCOL §7); the items are read and the log prepared before any model server is started."""
    items = run_items_for(layout, lang, settings)
    tools = PitTools(
        layout.released_store(),
        today=date.fromisoformat(settings.today) if settings.today else None,
        search_dir=layout.search_dir,
    )
    path = results_path(layout.results_dir, system_key, lang)
    parsed = parse_system_key(system_key)
    repeats = settings.repeats if parsed.slug is not None else 1  # a lookup answers the same every time
    if parsed.slug is None:
        # oracle and recite cost nothing and answer from the current store: never resume stale answers.
        path.unlink(missing_ok=True)
    with endpoints(parsed.slug) as configs:
        refuse_unconfirmed_spend(configs.get(parsed.slug or ""), confirm, system_key)
        system = prepare_system(
            system_key, items, tools=tools, endpoints=configs, confirm=confirm, echo=echo, repeats=repeats
        )
        try:
            # One shared connection suits the lookup-only systems; a model run can last hours and must
            # not hold the store open against the nightly build's writers, so each tool call opens its own.
            with tools.session() if parsed.slug is None else nullcontext():
                summary = run_items(
                    system,
                    items,
                    path,
                    workers=workers,
                    retry_errors=settings.retry_errors,
                    new_run=settings.new_run,
                    repeats=repeats,
                    progress=progress,
                )
        finally:
            client = getattr(system, "client", None)
            if client is not None:
                client.close()
    status = log_status(items, path, repeats)
    # §8's run reports are the published runs' (recite and the model modes).
    report = write_run_report(layout, parsed.mode, settings, model_settings) if parsed.run_report else None
    return PartitionRun(path, summary, status, report)
