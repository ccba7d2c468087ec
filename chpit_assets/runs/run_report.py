"""`run-report-{mode}.json` (PROTOCOL §8): per mode, every model's estimate and what it actually
took, rewritten after each model. A pure function of the run logs' lines and the items asked."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from chpit_assets.files import write_atomic

from .client import dry_run_estimate
from .runner import errored, read_log, repeat_of, winners
from .systems import estimate_tokens, mode_entry, parse_system_key

SPLIT = "core"  # model runs ask the core split (B16), or its §6 subsample


@dataclass(frozen=True)
class ModelRun:
    """One model's runs in one mode: the items asked (all languages) and every line of their logs."""

    slug: str  # the model slug sent to the endpoint (`anthropic/claude-sonnet-5`), `recite` (PROTOCOL §8)
    items: list[dict]
    lines: list[dict]


def _usd(tokens_in: int, tokens_out: int, price: Mapping | None) -> float:
    if not price:
        return 0.0
    return tokens_in / 1e6 * price["in"] + tokens_out / 1e6 * price["out"]


def _price(lines: list[dict]) -> dict | None:
    """The price the latest line was run at (the receipt records it)."""
    for line in reversed(lines):
        price = line.get("receipt", {}).get("price_per_mtok")
        if price:
            return price
    return None


def estimate(mode: str, run: ModelRun) -> dict:
    """PROTOCOL §7 estimate of `run.items`, at the run's price."""
    tokens = [estimate_tokens(mode, item) for item in run.items]
    tokens_in, tokens_out = sum(t[0] for t in tokens), sum(t[1] for t in tokens)
    return {
        "items": len(run.items),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "usd": _usd(tokens_in, tokens_out, _price(run.lines)),
    }


def actual(run: ModelRun) -> dict:
    """Answered/errors over the winning lines of the items asked; tokens and money over ALL lines
    (every call was paid for). usd = reported if > 0, else tokens x price (PROTOCOL §7)."""
    ids = {item["id"] for item in run.items}
    won = [line for i, line in winners(run.lines).items() if i in ids]
    tokens_in = sum(line["input_tokens"] for line in run.lines)
    tokens_out = sum(line["output_tokens"] for line in run.lines)
    reported = sum(line.get("cost_reported_usd") or 0.0 for line in run.lines)
    from_tokens = sum(
        _usd(line["input_tokens"], line["output_tokens"], line.get("receipt", {}).get("price_per_mtok"))
        for line in run.lines
    )
    return {
        "items": len(run.items),
        "answered": sum(1 for line in won if not errored(line)),
        "errors": sum(1 for line in won if errored(line)),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "usd": reported if reported > 0 else from_tokens,
        "usd_reported": reported,
        "usd_from_tokens": from_tokens,
    }


def run_report(mode: str, runs: Iterable[ModelRun], settings: Mapping) -> dict:
    """The §8 object, keys in published order. `started`/`finished` span the lines' receipts (UTC,
    `+00:00`); `settings` carries reasoning_effort, workers, sample_per_lang, seed, temperature."""
    runs = sorted(runs, key=lambda r: r.slug)
    estimates = {run.slug: estimate(mode, run) for run in runs}
    actuals = {run.slug: actual(run) for run in runs}
    receipts = [line["receipt"] for run in runs for line in run.lines if "receipt" in line]
    return {
        "mode": mode,
        "estimate": dry_run_estimate(estimates),
        "actual": actuals,
        "actual_total_usd": sum(a["usd"] for a in actuals.values()),
        "sample_size": max((len(run.items) for run in runs), default=0),
        "started": min((r["started_at"] for r in receipts), default=None),
        "finished": max((r["finished_at"] for r in receipts), default=None),
        "settings": {
            "reasoning_effort": settings.get("reasoning_effort"),
            "workers": settings.get("workers"),
            "split": SPLIT,
            "sample_per_lang": settings.get("sample_per_lang"),
            "seed": settings.get("seed"),
            "temperature": settings.get("temperature"),
            "max_tokens_ladder": list(settings.get("max_tokens_ladder", (8192, 16384))),
        },
    }


def mode_runs(mode: str, results_dir: Path, items_of: Callable[[str], list[dict]]) -> list[ModelRun]:
    """Every model's run of `mode` in `results_dir` ({system}/{lang}.jsonl): its lines and the items
    asked (`items_of(lang)`, per language it has a log for)."""
    pattern = f"*/{mode}/*.jsonl" if mode_entry(mode).model else f"{mode}/*.jsonl"  # `<slug>/<mode>` or `recite`
    logs: dict[str, list[Path]] = {}
    for path in sorted(results_dir.glob(pattern)):
        key = path.parent.relative_to(results_dir).as_posix()
        # {lang}.jsonl, not {lang}.scored.jsonl; and `cite/pit`, `search/pit` are no model's pit
        if path.name.count(".") == 1 and parse_system_key(key).mode == mode:
            logs.setdefault(key, []).append(path)
    runs = []
    for key, paths in sorted(logs.items()):
        # Repeat 0 only: asking more repeats leaves the published run report as it was (issue 25).
        lines = [line for path in paths for line in read_log(path) if repeat_of(line) == 0]
        items = [item for path in paths for item in items_of(path.stem)]
        # PROTOCOL §8 keys by the model slug the lines were asked of (`model`); recite has none.
        slug = next((line["model"] for line in reversed(lines) if line.get("model")), key.split("/")[0])
        runs.append(ModelRun(slug=slug, items=items, lines=lines))
    return runs


def write_run_report(
    mode: str, results_dir: Path, report_dir: Path, items_of: Callable[[str], list[dict]], settings: Mapping
) -> Path:
    """Rewrite `{report_dir}/run-report-{mode}.json` from every log of that mode (PROTOCOL §8)."""
    report = run_report(mode, mode_runs(mode, results_dir, items_of), settings)
    path = report_dir / f"run-report-{mode}.json"
    write_atomic(path, (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return path
