"""Repeats (R3, R4, issue 25 item 3): a hosted model is not deterministic even at temperature 0, so a
model system may ask every item N times. Per system: the correct share of each repeat, their
mean ± sd, and the per-item agreement (the share of items given the same label in every repeat,
with its interval). The rest of the report, and every published file, reads repeat 0 only."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping

from chpit_scorer import GROUNDED_CORRECT

from .stats import line_interval, pct


def _mean_sd(values: list[float]) -> tuple[float | None, float | None]:
    if not values:
        return None, None
    return round(statistics.fmean(values), 2), round(statistics.stdev(values), 2) if len(values) > 1 else None


def _one_of(keys: set[tuple[str, str]]) -> Callable[[dict], bool]:
    return lambda line: (line["lang"], line["id"]) in keys


def repeat_rows(
    repeats: Mapping[str, list[dict]], order: Callable[[str], tuple], easy: Mapping[str, bool]
) -> list[dict]:
    rows = []
    for system in sorted(repeats, key=order):
        by_repeat: dict[int, dict[tuple[str, str], dict]] = {}
        for line in repeats[system]:
            by_repeat.setdefault(line["repeat"], {})[(line["lang"], line["id"])] = line
        correct: list[float] = []
        sensitive: list[float] = []
        for lines in by_repeat.values():
            hits = [line["verdict"]["label"] == GROUNDED_CORRECT for line in lines.values()]
            correct.append(100.0 * sum(hits) / len(hits))
            ds = [
                line["verdict"]["label"] == GROUNDED_CORRECT for line in lines.values() if easy.get(line["id"]) is False
            ]
            if ds:
                sensitive.append(100.0 * sum(ds) / len(ds))
        # Items asked in every repeat; agreeing = one label across all of them.
        shared = sorted(set.intersection(*(set(lines) for lines in by_repeat.values())))
        agreeing = {key for key in shared if len({lines[key]["verdict"]["label"] for lines in by_repeat.values()}) == 1}
        first = by_repeat[min(by_repeat)]
        items = [first[key] for key in shared]
        correct_mean, correct_sd = _mean_sd(correct)
        ds_mean, ds_sd = _mean_sd(sensitive)
        rows.append(
            {
                "system": system,
                "repeats": len(by_repeat),
                "n": len(shared),
                "correct_pct_by_repeat": [round(v, 2) for v in correct],
                "correct_mean": correct_mean,
                "correct_sd": correct_sd,
                "date_sensitive_correct_mean": ds_mean,
                "date_sensitive_correct_sd": ds_sd,
                "agreement": len(agreeing),
                "agreement_pct": pct(len(agreeing), len(shared)),
                "ci": {"agreement": line_interval(items, _one_of(agreeing))},
            }
        )
    return rows
