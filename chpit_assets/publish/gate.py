"""The publication gate: the CRITICAL checks that must all pass before anything is published.

After the neighbouring case-law system's nightly gate (L4): a CRITICAL subset of the data checks
runs before the swap; if one fails the swap is refused and yesterday's publication stays live.
Each check returns its offenders as readable strings naming the language and item ids, so a
failed gate says exactly what to look at. Where the builder already has the rule, the same
domain function is called (`validate.duplicate_ids`, `frozen.changed_items`; the oracle's
`oracle_failures` is passed in by the Dagster layer), never a second implementation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from chpit_assets.bench.frozen import changed_items
from chpit_assets.bench.items import ITEM_CAP
from chpit_assets.bench.validate import duplicate_ids
from chpit_assets.synthetic import is_synthetic_eli, is_synthetic_sr

from .candidate import Candidate
from .schema import schema_errors

CRITICAL_CHECKS: dict[str, str] = {
    "oracle_one": "R1: the oracle scored 1.000 grounded_correct, 0 errors, on exactly the core items to publish.",
    "ids_unique": "B17: item ids are unique within each language.",
    "published_items_frozen": "B18: every item of the frozen record (frozen/{lang}.jsonl) is published unchanged.",
    "item_counts_in_bounds": "Per-language item counts within the configured bounds: the absolute floor "
                             "(min_items), the cap (max_items) and at most max_drop fewer than the previous "
                             "publication; and equal to build-report.json.",
    "texts_not_empty": "Every item has a non-empty question, gold.text and distractor.text.",
    "schema_exact": "Every item has exactly the card's fields, in order, with the card's types.",
    "no_synthetic_acts": "No item comes from a synthetic act (synthetic ELI host or SR range).",
}


@dataclass(frozen=True)
class CountBounds:
    """Defaults fit the shipped sample (German 9 items, French and Italian none): German must have
    items, no language may exceed the B14 cap, and no language may lose more than 10% of what the
    previous publication had -- a collapse (a parser or builder regression emptying a language)
    fails, while a language that never had items (fr/it on the sample) is simply not published.
    A release sets its own floors, e.g. {"de": 4500, "fr": 4500, "it": 4500}."""

    min_items: Mapping[str, int] = field(default_factory=lambda: {"de": 1})
    max_items: int = ITEM_CAP
    max_drop: float = 0.1


@dataclass(frozen=True)
class CheckOutcome:
    name: str
    offenders: list[str]     # "<lang>: <id or count>: <why>", empty when the check passed

    @property
    def passed(self) -> bool:
        return not self.offenders

    @property
    def description(self) -> str:
        return CRITICAL_CHECKS[self.name]


@dataclass(frozen=True)
class GateReport:
    candidate_digest: str
    outcomes: list[CheckOutcome]

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    def summary(self) -> str:
        failed = [o for o in self.outcomes if not o.passed]
        if not failed:
            return f"gate passed: {len(self.outcomes)} critical checks"
        return "gate FAILED: " + "; ".join(f"{o.name} ({', '.join(o.offenders[:3])})" for o in failed)


def _keyed(items: list[dict]) -> list[dict]:
    """Items with a string id; the others are reported by schema_exact, not crashed on here."""
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("id"), str)]


def _edition(item: dict, side: str) -> dict:
    return item.get(side) if isinstance(item.get(side), dict) else {}


def _oracle(candidate: Candidate, failures: list[str], scored_ids: Mapping[str, set[str]]) -> list[str]:
    out = list(failures)
    for lang in candidate.published_langs:
        unscored = sorted({i["id"] for i in _keyed(candidate.core(lang))} - scored_ids.get(lang, set()))
        if unscored:
            out.append(f"{lang}: {len(unscored)} core items without an oracle verdict, e.g. {unscored[:5]}")
    return out


def _counts(candidate: Candidate, previous: Mapping[str, int], bounds: CountBounds) -> list[str]:
    out = []
    for lang in dict.fromkeys([*candidate.items, *bounds.min_items, *previous]):
        n = len(candidate.items.get(lang, []))
        floor, before = bounds.min_items.get(lang, 0), previous.get(lang, 0)
        if n < floor:
            out.append(f"{lang}: {n} items, below the floor of {floor}")
        if n > bounds.max_items:
            out.append(f"{lang}: {n} items, above the maximum of {bounds.max_items}")
        if n < before * (1 - bounds.max_drop):
            out.append(f"{lang}: {n} items, the previous publication had {before} (more than {bounds.max_drop:.0%} fewer)")
        reported = candidate.build_report.get(lang, {}).get("items", 0)
        if lang in candidate.items and reported != n:
            out.append(f"{lang}: build-report.json says {reported} items, bench-{lang}.jsonl has {n}")
    return out


def _empty_texts(lang: str, items: list[dict]) -> list[str]:
    out = []
    for item in items:
        texts = {"question": item.get("question"), "gold.text": _edition(item, "gold").get("text"),
                 "distractor.text": _edition(item, "distractor").get("text")}
        empty = [k for k, v in texts.items() if not isinstance(v, str) or not v.strip()]
        if empty:
            out.append(f"{lang}: {item.get('id')}: empty {', '.join(empty)}")
    return out


def _synthetic(lang: str, items: list[dict]) -> list[str]:
    out = []
    for item in items:
        elis = [_edition(item, side).get("eli") for side in ("gold", "distractor")]
        sr = item.get("sr_number")
        if any(is_synthetic_eli(e) for e in elis if isinstance(e, str)) or (isinstance(sr, str) and is_synthetic_sr(sr)):
            out.append(f"{lang}: {item.get('id')}: synthetic act (SR {sr}, {elis[0]})")
    return out


def evaluate_gate(
    candidate: Candidate,
    *,
    oracle_failures: list[str],
    oracle_scored_ids: Mapping[str, set[str]],
    frozen: Mapping[str, list[dict]],
    previous_counts: Mapping[str, int],
    bounds: CountBounds = CountBounds(),
) -> GateReport:
    """Every CRITICAL check over the candidate, in `CRITICAL_CHECKS` order.

    `oracle_failures`: the runs' `oracle_failures` reasons; `oracle_scored_ids`: per language the ids
    the oracle scored (so the published core is exactly what it proved); `frozen`: the B18 record
    per language; `previous_counts`: items per language in the live publication."""
    found: dict[str, list[str]] = {name: [] for name in CRITICAL_CHECKS}
    found["oracle_one"] = _oracle(candidate, oracle_failures, oracle_scored_ids)
    found["item_counts_in_bounds"] = _counts(candidate, previous_counts, bounds)
    for lang, items in candidate.items.items():
        keyed = _keyed(items)
        found["ids_unique"] += [f"{lang}: {i}: duplicate id" for i in duplicate_ids(keyed)]
        found["published_items_frozen"] += [
            f"{lang}: {i}: published, but missing or changed" for i in changed_items(frozen.get(lang, []), keyed)
        ]
        found["texts_not_empty"] += _empty_texts(lang, keyed)
        found["schema_exact"] += [f"{lang}: {e}" for e in schema_errors(items)]
        found["no_synthetic_acts"] += _synthetic(lang, keyed)
    return GateReport(candidate.digest(), [CheckOutcome(name, found[name]) for name in CRITICAL_CHECKS])
